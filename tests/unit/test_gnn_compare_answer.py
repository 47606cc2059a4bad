"""`cxrkg compare`'s one-line answer follows the Medical-Diff-VQA difference grammar (docs/formats.md §5.2)."""

from __future__ import annotations


def test_answer_line_follows_medical_diff_vqa_grammar():
    from gnn.compare import ComparisonRow, answer_line

    def row(f, change, a="x", b=None, c=None):
        return ComparisonRow("left lung", f, "present", "present", b, c, change, "gnn", 0.9)

    assert answer_line([]) == "nothing has changed."
    assert answer_line([row("pneumothorax", "new")]) == \
        "the main image has an additional finding of pneumothorax than the reference image."
    assert answer_line([row("edema", "new"), row("atelectasis", "new"), row("pleural effusion", "resolved")]) == (
        "the main image has additional findings of atelectasis, and edema than the reference image. "
        "the main image is missing the finding of pleural effusion than the reference image.")
    assert answer_line([row("pleural effusion", "worsened", b="mild", c="moderate")]) == \
        "the level of pleural effusion has changed from mild to moderate."
    assert answer_line([row("edema", "worsened"), row("pneumothorax", "new")]) == (
        "the main image has an additional finding of pneumothorax than the reference image. the edema has worsened.")
