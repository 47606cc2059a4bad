"""How often IU's MeSH indexers tag a finding that the rules extractor reads only as uncertain in a report: for
each MeSH target of ``cxrkg eval extract`` (:data:`graph.extract.eval.evaluate.TARGETS`), the reports of all 3,955
whose findings and impression hold an uncertain (OBS-U) mention of the target and no present one, and how many
of those carry the target's MeSH major tag.

It tells whether the MeSH figures could count hedged findings as positive (they could if the indexers tagged
them) and why the annotation guide's hedges ("probable", "borderline", "X or Y": ``uncertain``, §3) cost MeSH
micro-F1 when the rules follow them: the indexers tag few hedged findings overall but many of those hedges.

    python benchmarks/mesh_hedged.py
"""

from __future__ import annotations

from collections import Counter

from graph.extract.eval.evaluate import gold_targets, rules_targets
from graph.datasets.iu import load_reports
from graph.extract.rules.stream import extract
from graph.vocabulary import vocabulary


def main() -> None:
    v = vocabulary()
    reports = {r.report_id: r for r in load_reports()}
    hedged, tagged = Counter(), Counter()
    for key, doc in extract(((k, r.sections()) for k, r in reports.items()), v):
        tags = gold_targets(reports[key])
        for target in rules_targets(doc, v, "OBS-U") - rules_targets(doc, v):
            hedged[target] += 1
            tagged[target] += target in tags
    print(f"{len(reports)} IU reports; per MeSH target: reports whose rules output holds the target only as "
          "uncertain, and how many of them MeSH tags with it")
    print(f"{'target':24}{'uncertain only':>16}{'MeSH-tagged':>13}{'share':>8}")
    for target in sorted(hedged, key=lambda t: (-hedged[t], t)):
        print(f"{target:24}{hedged[target]:>16}{tagged[target]:>13}{tagged[target] / hedged[target]:>8.2f}")
    total, hits = sum(hedged.values()), sum(tagged.values())
    print(f"{'all':24}{total:>16}{hits:>13}{hits / total if total else 0.0:>8.2f}")


if __name__ == "__main__":
    main()
