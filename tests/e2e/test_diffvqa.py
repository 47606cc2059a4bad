"""Medical-Diff-VQA questions against the real Neo4j: a hand-made cohort whose statements fix every answer
(levels, locations, types, views and stated changes, one named by its anatomy), the answer file with its
rejections, ``cxrkg diffvqa ask`` and the Cypher it shows, and generation (deterministic, every type, answers equal
to ``answer``'s); the demo's three NIH pairs."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from typer.testing import CliRunner

from flows.cli import app
from tests.fixtures.inputs import comparison, scene_graph, write_scene_graph
from tests.fixtures.loading import load_into

runner = CliRunner()
PID, OTHER = 1001, 1002
S1, S2, S3, S9 = "50000001", "50000002", "50000003", "50000009"
YES = "anatomicalfinding|yes|"


def _study(folder, study, when, view, regions, severity=None, textures=None, relationships=None, pid=PID):
    g = scene_graph(f"img{study}", pid, int(study), when, regions, relationships, severity)
    g["viewpoint"] = view
    for entry in g["attributes"]:
        if entry["bbox_name"] in (textures or {}):
            entry["texture_cues"] = textures[entry["bbox_name"]]
    write_scene_graph(folder, g)


@pytest.fixture()
def cohort(store, tmp_path):
    """Patient 1001: S1 (PA) mild left effusion, calcified granuloma right mid zone; S2 (AP) the effusion
    moderate (stated worsened against S1), cardiomegaly, the granuloma, no pneumothorax; S3 (PA) no effusion,
    small right basal atelectasis, bilateral hilar congestion, cardiomegaly, the granuloma. Patient 1002: S9."""
    granuloma = {"right mid lung zone": [[f"{YES}calcified nodule"]]}
    calcified = {"right mid lung zone": [["texture|yes|calcified"]]}
    _study(tmp_path, S1, "2100-01-01T08:00:00", "PA",
           {"left costophrenic angle": [[f"{YES}pleural effusion"]], **granuloma},
           severity={"left costophrenic angle": [["severity|yes|mild"]]}, textures=calcified)
    _study(tmp_path, S2, "2100-02-01T08:00:00", "AP",
           {"left costophrenic angle": [[f"{YES}pleural effusion"]], "cardiac silhouette": [[f"{YES}enlarged cardiac silhouette"]],
            "left apical zone": [["anatomicalfinding|no|pneumothorax"]], **granuloma},
           severity={"left costophrenic angle": [["severity|yes|moderate"]]}, textures=calcified,
           relationships=[comparison(f"img{S2}", f"img{S1}", "left costophrenic angle", "worsened", "pleural effusion")])
    _study(tmp_path, S3, "2100-03-01T08:00:00", "PA",
           {"left costophrenic angle": [["anatomicalfinding|no|pleural effusion"]],
            "right lower lung zone": [[f"{YES}atelectasis"]], "cardiac silhouette": [[f"{YES}enlarged cardiac silhouette"]],
            "left hilar structures": [[f"{YES}vascular congestion"]], "right hilar structures": [[f"{YES}vascular congestion"]],
            **granuloma},
           severity={"right lower lung zone": [["severity|yes|small"]]}, textures=calcified)
    _study(tmp_path, S9, "2100-01-01T08:00:00", "PA", {"cardiac silhouette": [[f"{YES}enlarged cardiac silhouette"]]},
           pid=OTHER)
    load_into(store, tmp_path)
    return store


# (main, ref, question type, question, answer, basis): every template, answered as the statements fix it
TRUTH = [
    (S2, S1, "abnormality", "what abnormalities are seen in this image?", "pleural effusion, cardiomegaly, granuloma", "stated"),
    (S2, S1, "abnormality", "what abnormalities are seen in the left lung?", "pleural effusion", "stated"),
    (S3, S1, "abnormality", "what abnormalities are seen in the right lower lung?", "atelectasis", "stated"),
    (S2, S1, "abnormality", "is there evidence of any abnormalities in this image?", "yes", "stated"),
    (S2, S1, "presence", "is there evidence of pneumothorax in this image?", "no", "stated"),
    (S2, S1, "presence", "is there cardiomegaly?", "yes", "stated"),
    (S2, S1, "presence", "is there edema?", "no", "stated"),
    (S2, S1, "presence", "is there pleural effusion in the left lung area?", "yes", "stated"),
    (S2, S1, "presence", "is there pleural effusion in the right lung area?", "no", "stated"),
    (S3, S1, "presence", "is there atelectasis in the right lower lung area?", "yes", "stated"),
    (S3, S1, "presence", "is there atelectasis in the right upper lung area?", "no", "stated"),
    (S3, S1, "presence", "is the vascular congestion bilateral?", "yes", "stated"),
    (S2, S1, "presence", "is the pleural effusion bilateral?", "no", "stated"),
    (S2, S1, "view", "which view is this image taken?", "AP view", "stated"),
    (S2, S1, "view", "is this PA view?", "no", "stated"),
    (S3, S1, "view", "is this PA view?", "yes", "stated"),
    (S3, S1, "view", "is this AP view?", "no", "stated"),
    (S2, S1, "location", "where is the pleural effusion?", "left area", "stated"),
    (S2, S1, "location", "where in the image is the granuloma located?", "right middle lung area", "stated"),
    (S3, S1, "location", "where is the atelectasis?", "right lower lung area", "stated"),
    (S3, S1, "location", "where is the vascular congestion?", "bilateral area", "stated"),
    (S2, S1, "location", "is the pleural effusion located on the left side or right side?", "left side", "stated"),
    (S2, S1, "level", "what level is the pleural effusion?", "moderate", "stated"),
    (S3, S1, "level", "what level is the atelectasis?", "small", "stated"),
    (S2, S1, "type", "what type is the granuloma?", "calcified", "stated"),
    (S2, S1, "difference", "what has changed compared to the reference image?",
     "the level of pleural effusion has changed from mild to moderate. the main image has an additional finding of "
     "cardiomegaly than the reference image. ", "both"),
    (S2, S1, "difference", "what has changed in the left lung area?",
     "the level of pleural effusion has changed from mild to moderate. ", "both"),
    (S3, S2, "difference", "what has changed compared to the reference image?",
     "the main image has additional findings of atelectasis, and vascular congestion than the reference image. "
     "the main image is missing the finding of pleural effusion than the reference image. ", "derived"),
    (S3, S1, "difference", "what has changed compared to the reference image?",
     "the main image has additional findings of atelectasis, cardiomegaly, and vascular congestion than the "
     "reference image. the main image is missing the finding of pleural effusion than the reference image. ", "derived"),
]


def _questions(rows) -> pd.DataFrame:
    return pd.DataFrame([{"study_id": m, "subject_id": str(PID), "ref_id": r, "question_type": t, "question": q}
                         for m, r, t, q, *_ in rows])


def test_every_template_is_answered_as_the_statements_say(cohort, tmp_path):
    from graph.questions.parse import parse_question
    from graph.questions.templates import TEMPLATES

    asked = {(t, parse_question(q).template) for _, _, t, q, *_ in TRUTH}
    assert asked == {(t, tpl) for t, tpls in TEMPLATES.items() for tpl in tpls}
    src, out = tmp_path / "q.csv", tmp_path / "a.csv"
    _questions(TRUTH).to_csv(src, index=False)
    result = runner.invoke(app, ["diffvqa", "answer", str(src), "--out", str(out)])
    assert result.exit_code == 0, result.output
    got = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert list(got.columns) == ["study_id", "subject_id", "ref_id", "question_type", "question", "answer", "basis",
                                 "evidence"]
    assert [(q, a, b) for q, a, b in zip(got["question"], got["answer"], got["basis"], strict=True)] == \
        [(q, a, b) for _, _, _, q, a, b in TRUTH]
    effusion = got[got["question"] == "what level is the pleural effusion?"]["evidence"].iloc[0]
    assert "sentence 0 about left costophrenic angle." in effusion


def test_rejections_name_line_and_field_and_the_rest_is_answered(cohort, tmp_path):
    rows = _questions(TRUTH[:1] * 7)
    rows.loc[1, "question"] = "is the patient happy?"
    rows.loc[2, "study_id"] = "404"
    rows.loc[3, "ref_id"] = S3  # later than the main study
    rows.loc[4, "ref_id"] = S9  # another patient's
    rows.loc[5, "subject_id"] = str(OTHER)
    rows.loc[6, "question_type"] = "presence"
    src, out = tmp_path / "q.csv", tmp_path / "a.csv"
    rows.to_csv(src, index=False)
    result = runner.invoke(app, ["diffvqa", "answer", str(src), "--out", str(out)])
    assert result.exit_code == 6
    # the header is line 1 and the file's first question line 2: rows 1..6 of the frame are lines 3..8
    fields = {f"line {n}": f for n, f in [(3, "question"), (4, "study_id"), (5, "ref_id"), (6, "ref_id"),
                                          (7, "subject_id"), (8, "question_type")]}
    said = " ".join(result.output.split())
    for line, field in fields.items():
        assert f"{line} field {field}" in said
    assert "Traceback" not in result.output
    assert len(pd.read_csv(out)) == 1
    rows.drop(columns=["ref_id"]).to_csv(src, index=False)
    result = runner.invoke(app, ["diffvqa", "answer", str(src), "--out", str(out)])
    # a file without a needed column is refused whole: one error line naming file, record and field, exit code 1
    assert result.exit_code == 1 and result.stdout == "", result.output
    assert result.stderr.strip() == (f"error: {src}: record line 1, field ref_id: column(s) ref_id missing; a question "
                                     "file has study_id, subject_id, ref_id, question_type, question")


def test_ask_answers_one_question_and_shows_its_cypher(cohort):
    result = runner.invoke(app, ["diffvqa", "ask", "what has changed compared to the reference image?", "--study", S2,
                                 "--show-cypher"])
    assert result.exit_code == 0, result.output
    assert "the level of pleural effusion has changed from mild to moderate." in result.output
    assert "UNWIND $study_ids AS sid" in result.output and "basis: both" in result.output
    result = runner.invoke(app, ["diffvqa", "ask", "what is the meaning of life?", "--study", S2])
    assert result.exit_code == 1 and "what abnormalities are seen in this image?" in " ".join(result.output.split())
    result = runner.invoke(app, ["diffvqa", "ask", "is there edema?", "--study", S1, "--ref", S3])
    assert result.exit_code == 1 and "not earlier" in result.output
    # `cxrkg ask`, the old name, answers the same after its notice
    old = runner.invoke(app, ["ask", "what has changed compared to the reference image?", "--study", S2])
    assert old.exit_code == 0 and "the level of pleural effusion has changed from mild to moderate." in old.stdout
    assert "notice: `cxrkg ask` is now `cxrkg diffvqa ask`" in old.stderr


# (question, main study, --ref, the answer the cohort's statements fix, the studies the shown Cypher reads):
# without --ref a difference question compares with the latest earlier PA/AP study, S1 for S2
CHANGED_S2_S1 = next(a for m, r, _, q, a, _ in TRUTH
                     if (m, r, q) == (S2, S1, "what has changed compared to the reference image?"))
ASKED = [
    ("what has changed compared to the reference image?", S2, None, CHANGED_S2_S1, {S2, S1}),
    ("where is the pleural effusion?", S1, None, "left area", {S1}),  # S1's mild effusion, left costophrenic angle
    ("is there edema?", S3, S1, "no", {S3, S1}),
]


@pytest.mark.parametrize("question, study, ref, expected, read", ASKED)
def test_the_cypher_ask_shows_reruns_to_the_expected_answer(cohort, question, study, ref, expected, read):
    """Pasted into Neo4j Browser, the printed `:param` lines set the parameters (Browser evaluates each value
    as a Cypher expression, done here through the driver) and the statement returns the studies asked about,
    whose facts give the answer the hand-made cohort fixes; ask printed that answer too."""
    from graph.questions.answer import answer
    from graph.questions.facts import facts_from_rows
    from graph.questions.parse import parse_question

    result = runner.invoke(app, ["diffvqa", "ask", question, "--study", study, "--show-cypher"] + (["--ref", ref] if ref else []))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    end = next(i for i, line in enumerate(lines) if line.endswith(";"))
    assert lines[end + 1].strip() == expected.strip()
    params = {}
    for line in lines[:end]:
        if line.startswith(":param "):
            name, expression = line[len(":param "):].split(" => ", 1)
            params[name] = cohort.read(f"RETURN {expression} AS value")[0]["value"]
    statement = "\n".join(line for line in lines[:end + 1] if not line.startswith(":param "))
    assert set(params) == set(re.findall(r"\$(\w+)", statement)), "a parameter of the statement is not printed"
    facts = facts_from_rows(cohort.read(statement.rstrip(";"), **params))
    assert set(facts) == read
    reference = facts[ref or S1] if len(read) > 1 else None
    assert answer(parse_question(question), facts[study], reference, False).text == expected


def test_a_stated_change_is_named_at_its_anatomy(store, tmp_path):
    """Tortuous aorta at the descending aorta has its own Diff-VQA name ("tortuosity of the descending aorta ",
    graph/vocab/diffvqa.yaml's by_anatomy); a stated "worsened" there supports the level change under that
    name, so the difference is answered from both the comparison and the statement."""
    aorta = {"descending aorta": [[f"{YES}tortuous aorta"]]}
    _study(tmp_path, "50000021", "2100-01-01T08:00:00", "PA", aorta, pid=1003,
           severity={"descending aorta": [["severity|yes|mild"]]})
    _study(tmp_path, "50000022", "2100-02-01T08:00:00", "PA", aorta, pid=1003,
           severity={"descending aorta": [["severity|yes|moderate"]]},
           relationships=[comparison("img50000022", "img50000021", "descending aorta", "worsened", "tortuous aorta")])
    load_into(store, tmp_path)
    src, out = tmp_path / "q.csv", tmp_path / "a.csv"
    pd.DataFrame([{"study_id": "50000022", "subject_id": "1003", "ref_id": "50000021", "question_type": "difference",
                   "question": "what has changed compared to the reference image?"}]).to_csv(src, index=False)
    result = runner.invoke(app, ["diffvqa", "answer", str(src), "--out", str(out)])
    assert result.exit_code == 0, result.output
    got = pd.read_csv(out, dtype=str, keep_default_na=False).iloc[0]
    assert (got["answer"], got["basis"]) == (
        "the level of tortuosity of the descending aorta  has changed from mild to moderate. ", "both")


def test_generate_is_deterministic_and_agrees_with_answer(cohort, tmp_path):
    from graph.questions.generate import generate

    frames = [generate(cohort, seed=s) for s in (7, 7, 8)]
    pd.testing.assert_frame_equal(frames[0], frames[1])
    assert set(frames[0]["ref_id"]) <= {S1, S2} and set(frames[0]["study_id"]) <= {S2, S3}
    both = pd.concat([generate(cohort, seed=s) for s in range(40)])
    assert set(both["question_type"]) == {"abnormality", "presence", "view", "location", "level", "type",
                                          "difference"}
    assert {(m, r) for m, r in zip(both["study_id"], both["ref_id"], strict=True)} == {(S2, S1), (S3, S1), (S3, S2)}
    # the hand-written truth, not answer()'s own reading, is what a generated answer must equal
    truth = {(m, r, q): a for m, r, _, q, a, _ in TRUTH}
    shared = [(key, a) for key, a in zip(zip(both["study_id"], both["ref_id"], both["question"], strict=True),
                                         both["answer"], strict=True) if key in truth]
    assert {truth[key] for key, _ in shared} and [a for _, a in shared] == [truth[key] for key, _ in shared]
    covered = {t for (m, r, q), t in zip(zip(both["study_id"], both["ref_id"], both["question"], strict=True),
                                         both["question_type"], strict=True) if (m, r, q) in truth}
    assert covered == set(both["question_type"]), covered
    out = tmp_path / "g.csv"
    result = runner.invoke(app, ["diffvqa", "generate", "--out", str(out), "--seed", "7", "--patients", "2"])
    assert result.exit_code == 0, result.output
    pd.testing.assert_frame_equal(pd.read_csv(out, dtype=str), frames[0].astype(str))


@pytest.mark.network
def test_the_demo_shows_three_nih_pairs(store, tmp_path):
    from rich.console import Console

    from flows.demo.nih import diffvqa_pairs
    from graph.datasets.nih.convert import DatasetUnavailable, convert_nih
    from graph.datasets.wheel import WheelUnavailable
    from graph.questions.facts import patient_ids

    try:
        convert_nih(tmp_path / "nih", limit_patients=60)
    except (DatasetUnavailable, WheelUnavailable) as exc:
        pytest.skip(f"NIH tables unavailable here: {exc}")
    load_into(store, tmp_path / "nih")
    console = Console(record=True, width=200)
    diffvqa_pairs(console, store, patient_ids(store))
    text = console.export_text()
    pairs = [line for line in text.splitlines() if line.startswith("  patient ")]
    assert len(pairs) == 3 and all(re.search(r"main study \d{8}_\d{3}, reference study \d{8}_\d{3}", p) for p in pairs)
    assert "what has changed compared to the reference image? -> the main image" in text
