"""ScopedConText sets the same modifiers and span attributes as medspaCy's ConText with the same rules.

The report sentences here are synthetic, written for these tests; with the IU reports at hand, their first 300
are compared too.
"""

from __future__ import annotations

import pytest

from graph.extract.rules import build_pipeline
from graph.vocabulary import vocabulary

pytestmark = pytest.mark.extract

TEXTS = [
    "No pleural effusion or pneumothorax. Heart size is normal.",
    "There is no focal consolidation, but there is right basilar atelectasis which may represent pneumonia.",
    "Possible small left effusion. Pneumonia is not excluded. No change in the cardiomegaly.",
    "Lungs are clear without consolidation, effusion or edema; however, there is a nodule in the left apex.",
    "Pulmonary edema difficult to exclude. Either atelectasis or infiltrate at the left base, otherwise clear.",
    "History of possible pneumonia. Evaluate for pneumothorax. No evidence of edema, no effusion, mild cardiomegaly.",
    "Pneumothorax is not seen. Left effusion, heart size is normal. Suspicious for mass versus granuloma.",
    "",
]
ATTRIBUTES = ("is_negated", "is_uncertain", "is_historical", "is_hypothetical", "is_family")


def _readings(doc) -> list[tuple]:
    return [(e.start, e.end, e.label_, *(getattr(e._, a) for a in ATTRIBUTES),
             tuple((m.category, m.modifier_span, m.scope_span) for m in e._.modifiers)) for e in doc.ents]


def _both(texts: list[str]) -> tuple[list, list]:
    from medspacy.context import ConText

    nlp = build_pipeline(vocabulary())
    scoped = nlp.get_pipe("cxr_context")
    plain = ConText(nlp, name="plain_context", rules=None)
    plain.add(list(scoped.rules))
    ours = [_readings(d) for d in nlp.pipe(texts)]
    with nlp.select_pipes(disable=["cxr_context"]):
        theirs = [_readings(plain(d)) for d in nlp.pipe(texts)]
    return ours, theirs


def test_same_modifiers_and_attributes_as_medspacys_context():
    ours, theirs = _both(TEXTS)
    assert ours == theirs
    # the sentences exercise what the pairing skips and keeps: negated, hedged and plain findings, and
    # findings with more than one modifier
    flat = [r for doc in ours for r in doc]
    assert any(r[3] for r in flat) and any(r[4] for r in flat) and any(not any(r[3:8]) for r in flat)
    assert any(len(r[-1]) > 1 for r in flat)


@pytest.mark.network
def test_same_on_iu_reports():
    from graph.datasets import iu, wheel
    from graph.extract.rules import compose_text

    try:
        reports = iu.load_reports()[:300]
    except wheel.WheelUnavailable as exc:
        pytest.skip(f"IU reports unavailable: {exc}")
    ours, theirs = _both([compose_text({"findings": r.findings, "impression": r.impression}) for r in reports])
    assert ours == theirs and sum(map(len, ours)) > 500
