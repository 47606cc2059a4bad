"""The CXRTrek reader on files the tests write in the public demo file's structure (no row of the demo)."""

from __future__ import annotations

import copy
import json

import pytest

from graph.formats.cxrtrek import CxrtrekFormatError, read_samples


def _item(stage, task_type, qtype, question, answer, **more):
    return {"stage": stage, "task_type": task_type, "qtype": qtype, "image_input_count": 1, "question": question,
            "answer": answer, **more}


def _sample(study="s2", ref="s1", pos=""):
    content = [
        _item(1, "View_Information", "single-choice", "View? A. PA. or B. AP.", "B. AP.",
              option_list=["A. PA.", "B. AP."], answer_list=["B. AP."]),
        _item(2, "Findings_Identification", "yes_no", "Is there any evidence of widget sign?", "Yes.",
              target="abnormality_[widget sign]", reason="a field of the demo's own bookkeeping", qwen_accepted="Y"),
        _item(3, "Findings_Detection", "detection", "[detection] Locate the left widget.",
              "Detected left widget at: <|ref|> left widget <|/ref|> <|box|>(10.5, 20.0), (30.25, 40.0)<|/box|>.",
              target="left widget", bbox_list=[[10.5, 20.0, 30.25, 40.0]], image_id=1, num_of_images=1),
        _item(5, "Differences_Comparison", "multi-choice-2", "Changed? A. No. or B. Yes.", "B. Yes.",
              option_list=["A. No.", "B. Yes."], answer_list=["B. Yes."]),
        _item(8, "Report_Generation[Impression]", "captioning", "Final impression: _____.", "Widget sign."),
    ]
    messages = [{"role": "system", "content": "You are a test assistant."}]
    for c in content:
        messages += [{"role": "user", "content": c["question"]}, {"role": "assistant", "content": c["answer"]}]
    return {"messages": messages, "image": [f"p1/{study}.png"],
            "data_dict": {"cxrtrek_data": {"source": "test", "pat_id": "p1", "study_id": study, "ref_study_id": ref,
                                           "pos_study_id": pos, "image": [f"p1/{study}.png"], "content": content}}}


def _write(tmp_path, rows):
    path = tmp_path / "samples.json"
    path.write_text(json.dumps(rows, indent=4))
    return path


def test_a_file_in_the_demo_structure_is_read_with_its_extra_fields(tmp_path):
    result = read_samples(_write(tmp_path, [_sample(), _sample("s3", "s2", "s4")]))

    assert result.rejections == []
    assert [s.index for s in result.samples] == [0, 1]
    data, items = result.samples[1].data, result.samples[1].items
    assert (data.study_id, data.ref_study_id, data.pos_study_id) == ("s3", "s2", "s4")
    assert [c.stage for c in items] == [1, 2, 3, 5, 8]
    assert items[2].bbox_list == [[10.5, 20.0, 30.25, 40.0]]
    assert items[1].model_extra == {"image_input_count": 1, "reason": "a field of the demo's own bookkeeping",
                                    "qwen_accepted": "Y"}
    assert (items[4].task_type, items[4].task_variant) == ("Report_Generation", "Impression")
    assert (items[3].task_type, items[3].task_variant) == ("Differences_Comparison", None)
    assert result.kept_line() == "kept: 2 task-type variants, 0 task types outside their stage, 0 unknown qtypes"


def _set(sample, path_to_field, value):
    target = sample
    *head, last = path_to_field
    for key in head:
        target = target[key]
    if value is _DELETE:
        del target[last]
    else:
        target[last] = value
    return sample


_DELETE = object()
_ITEM = ("data_dict", "cxrtrek_data", "content")


@pytest.mark.parametrize(("stage", "task_type"), [(1, "View_Information[Lateral]"), (3, "Findings_Detection[Box]"),
                                                  (5, "Differences_Comparison[Choice]"), (8, "Report_Generation[ALL]")])
def test_a_bracketed_variant_is_kept_in_any_stage_with_its_base_type(tmp_path, stage, task_type):
    sample = _set(_set(_sample(), (*_ITEM, 1, "stage"), stage), (*_ITEM, 1, "task_type"), task_type)

    result = read_samples(_write(tmp_path, [sample]))

    assert result.rejections == []
    item = result.samples[0].items[1]
    assert f"{item.task_type}[{item.task_variant}]" == task_type and "[" not in item.task_type
    assert result.kept["task-type variants"] == 2  # this one and stage 8's Report_Generation[Impression]
    assert result.kept["task types outside their stage"] == 0


@pytest.mark.parametrize(("where", "value", "kind"), [
    ("task_type", "View_Information", "task types outside their stage"),  # a stage 1 type asked in stage 2
    ("task_type", "Widget_Counting", "unknown task types"),
    ("qtype", "essay", "unknown qtypes"),
    ("stage", 9, "stages outside 1-8"),
])
def test_an_unusual_item_is_kept_and_counted(tmp_path, where, value, kind):
    result = read_samples(_write(tmp_path, [_set(_sample(), (*_ITEM, 1, where), value), _sample("s3")]))

    assert result.rejections == [] and result.questions == 10
    assert result.kept[kind] == 1
    assert getattr(result.samples[0].items[1], where) == value


@pytest.mark.parametrize(("where", "value", "field", "says"), [
    ((*_ITEM, 1, "stage"), "2", "stage", "integer"),
    ((*_ITEM, 1, "answer"), _DELETE, "answer", "Field required"),
    ((*_ITEM, 1, "question"), 7, "question", "string"),
    ((*_ITEM, 0, "answer_list"), ["C. Lateral."], "answer_list", "not in option_list"),
    ((*_ITEM, 0, "option_list"), _DELETE, "option_list", "a single-choice item needs option_list"),
    ((*_ITEM, 2, "bbox_list"), [[50, 20, 30, 40]], "bbox_list", "within 0-100"),
    ((*_ITEM, 2, "bbox_list"), _DELETE, "bbox_list", "a detection item needs bbox_list"),
    ((*_ITEM, 1, "target"), ["abnormality_[widget sign]"], "target", "string"),
])
def test_a_bad_item_is_rejected_by_sample_item_and_field_and_its_sample_kept(tmp_path, where, value, field, says):
    result = read_samples(_write(tmp_path, [_sample(), _set(_sample(), where, value), _sample("s3")]))

    [rejection] = result.rejections
    assert (rejection.record, rejection.field) == (f"sample 1 item {where[3]}", field)
    assert says in rejection.reason and rejection.file.endswith("samples.json")
    kept = result.samples[1]
    assert [s.index for s in result.samples] == [0, 1, 2] and len(kept.items) == 4
    assert result.questions == 14
    questions = [c["question"] for c in kept.row["data_dict"]["cxrtrek_data"]["content"]]
    asked = [m["content"] for m in kept.row["messages"] if m["role"] == "user"]
    assert questions == asked == [q for k, q in enumerate(c["question"] for c in _sample()["data_dict"]["cxrtrek_data"][
        "content"]) if k != where[3]]  # the rejected item's question and answer turns left with it


@pytest.mark.parametrize(("where", "value", "field", "says"), [
    (("data_dict", "cxrtrek_data", "ref_study_id"), None, "data_dict.cxrtrek_data.ref_study_id", "string"),
    (("data_dict", "cxrtrek_data", "study_id"), _DELETE, "data_dict.cxrtrek_data.study_id", "Field required"),
    (("data_dict", "cxrtrek_data", "content"), {"stage": 1}, "data_dict.cxrtrek_data.content", "list"),
])
def test_a_sample_without_what_scoring_needs_is_rejected_by_index_and_field_and_the_rest_read(tmp_path, where, value,
                                                                                               field, says):
    result = read_samples(_write(tmp_path, [_sample(), _set(_sample(), where, value), _sample("s3")]))

    assert [s.index for s in result.samples] == [0, 2]
    [rejection] = result.rejections
    assert (rejection.record, rejection.field) == ("sample 1", field)
    assert says in rejection.reason


@pytest.mark.parametrize("chat", ["drop a pair", "a doctor's turn", "not a list"])
def test_a_chat_that_does_not_pair_with_the_questions_is_kept_counted_and_left_as_written(tmp_path, chat):
    sample = _sample()
    sample["messages"] = {"drop a pair": sample["messages"][:-2], "not a list": "hello",
                          "a doctor's turn": [{**sample["messages"][0], "role": "doctor"}, *sample["messages"][1:]]}[chat]
    broken = _set(copy.deepcopy(sample), (*_ITEM, 1, "answer"), _DELETE)

    result = read_samples(_write(tmp_path, [sample, broken]))

    assert result.kept["chats not paired with their questions"] == 2
    assert [len(s.items) for s in result.samples] == [5, 4] and len(result.rejections) == 1
    assert result.samples[1].row["messages"] == sample["messages"]


@pytest.mark.parametrize("text", ["{not json", '{"messages": []}', "", '[{"messages": []}'])
def test_a_file_that_is_not_a_json_array_is_named(tmp_path, text):
    path = tmp_path / "bad.json"
    path.write_text(text)

    with pytest.raises(CxrtrekFormatError, match="bad.json"):
        read_samples(path)


def test_a_sample_that_is_not_an_object_is_rejected_and_the_rest_read(tmp_path):
    result = read_samples(_write(tmp_path, ["a sample?", None, _sample()]))

    assert [(r.record, r.field) for r in result.rejections] == [("sample 0", "(sample)"), ("sample 1", "(sample)")]
    assert [s.index for s in result.samples] == [2]


def _cxrkg(*args):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "flows.cli", *args], capture_output=True, text=True)


def test_cxrtrek_check_counts_what_it_kept_names_the_bad_item_exits_6_and_a_bad_stage_list_exits_1(tmp_path):
    unusual = _set(_set(_sample("s3"), (*_ITEM, 1, "stage"), 3), (*_ITEM, 0, "qtype"), "ranking")
    path = _write(tmp_path, [_sample(), _set(_sample(), (*_ITEM, 1, "stage"), "2"), unusual])

    done = _cxrkg("cxrtrek", "check", str(path))
    assert done.returncode == 6, done.stderr
    out = " ".join(done.stdout.split())
    assert "3 samples valid (14 questions), 0 samples and 1 questions rejected" in out
    assert "kept: 3 task-type variants, 1 task types outside their stage, 1 unknown qtypes" in out
    assert "record sample 1 item 1 field stage" in " ".join(done.stderr.split())

    done = _cxrkg("cxrtrek", "check", str(_write(tmp_path, [_sample(), unusual])))
    assert done.returncode == 0, done.stderr

    done = _cxrkg("cxrtrek", "generate", "--out", str(tmp_path / "x.json"), "--stages", "2,4")
    assert done.returncode == 1 and "--stages '2,4'" in done.stderr and "Traceback" not in done.stderr
