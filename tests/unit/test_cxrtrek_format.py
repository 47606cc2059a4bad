"""The CXRTrek reader on files the tests write in the public demo file's structure (no row of the demo)."""

from __future__ import annotations

import copy
import json

import pytest

from graph.cxrtrek.format import CxrtrekFormatError, read_samples


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
    assert [i for i, _ in result.samples] == [0, 1]
    data = result.samples[1][1].data_dict.cxrtrek_data
    assert (data.study_id, data.ref_study_id, data.pos_study_id) == ("s3", "s2", "s4")
    assert [c.stage for c in data.content] == [1, 2, 3, 5, 8]
    assert data.content[2].bbox_list == [[10.5, 20.0, 30.25, 40.0]]
    assert data.content[1].model_extra == {"reason": "a field of the demo's own bookkeeping", "qwen_accepted": "Y"}


def _broken(path_to_field, value):
    sample = _sample()
    target = sample
    *head, last = path_to_field
    for key in head:
        target = target[key]
    target[last] = value
    return sample


@pytest.mark.parametrize(("where", "value", "field", "says"), [
    (("data_dict", "cxrtrek_data", "content", 1, "stage"), "2", "data_dict.cxrtrek_data.content.1.stage", "integer"),
    (("data_dict", "cxrtrek_data", "content", 1, "stage"), 9, "data_dict.cxrtrek_data.content.1.stage", "1 to 8"),
    (("data_dict", "cxrtrek_data", "content", 1, "task_type"), "View_Information", "data_dict.cxrtrek_data.content.1",
     "not one of stage 2's"),
    (("data_dict", "cxrtrek_data", "content", 1, "qtype"), "essay", "data_dict.cxrtrek_data.content.1.qtype",
     "qtype 'essay'"),
    (("data_dict", "cxrtrek_data", "content", 0, "answer_list"), ["C. Lateral."], "data_dict.cxrtrek_data.content.0",
     "not in option_list"),
    (("data_dict", "cxrtrek_data", "content", 2, "bbox_list"), [[50, 20, 30, 40]],
     "data_dict.cxrtrek_data.content.2.bbox_list", "within 0-100"),
    (("data_dict", "cxrtrek_data", "ref_study_id"), None, "data_dict.cxrtrek_data.ref_study_id", "string"),
    (("messages", 0, "role"), "doctor", "messages.0.role", "system"),
])
def test_a_bad_sample_is_rejected_by_index_and_field_and_the_rest_read(tmp_path, where, value, field, says):
    result = read_samples(_write(tmp_path, [_sample(), _broken(where, value), _sample("s3")]))

    assert [i for i, _ in result.samples] == [0, 2]
    [rejection] = result.rejections
    assert (rejection.record, rejection.field) == ("sample 1", field)
    assert says in rejection.reason
    assert rejection.file.endswith("samples.json")


def test_a_chat_that_does_not_pair_with_the_questions_is_rejected(tmp_path):
    sample = _sample()
    sample["messages"] = sample["messages"][:-2]

    [rejection] = read_samples(_write(tmp_path, [copy.deepcopy(sample)])).rejections

    assert rejection.record == "sample 0" and "user / assistant pair per content item (5)" in rejection.reason


@pytest.mark.parametrize("text", ["{not json", '{"messages": []}'])
def test_a_file_that_is_not_a_json_array_is_named(tmp_path, text):
    path = tmp_path / "bad.json"
    path.write_text(text)

    with pytest.raises(CxrtrekFormatError, match="bad.json"):
        read_samples(path)


def _cxrkg(*args):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "flows.cli", *args], capture_output=True, text=True)


def test_cxrtrek_check_names_the_bad_sample_and_exits_6_and_a_bad_stage_list_exits_1(tmp_path):
    path = _write(tmp_path, [_sample(), _broken(("data_dict", "cxrtrek_data", "content", 1, "stage"), "2")])

    done = _cxrkg("cxrtrek", "check", str(path))
    assert done.returncode == 6, done.stderr
    assert "1 samples valid (5 questions), 1 rejected" in done.stdout
    assert "record sample 1 field data_dict.cxrtrek_data.content.1.stage" in " ".join(done.stderr.split())

    done = _cxrkg("cxrtrek", "generate", "--out", str(tmp_path / "x.json"), "--stages", "2,4")
    assert done.returncode == 1 and "--stages '2,4'" in done.stderr and "Traceback" not in done.stderr
