"""Extraction stage: raw report text -> RadGraph v1 / RadGraph2-format JSON (``graph.formats.radgraph`` reads it).

Modules:
    rules: the offline ``rules`` extractor (spaCy blank English + medspaCy TargetMatcher and ConText).
    iu: the Indiana University / Open-i chest X-ray reports, read from the torchxrayvision 1.5.7 wheel.
    evaluate: scores against the IU MeSH major tags, with a keyword + negation baseline, laterality and
        hand-labelled change cues.
    inputs: .txt folders, CSVs, Open-i XML and the IU reports as checked, streamed ReportInput / Rejection items.
    pipeline: inputs -> extractor -> RadGraph JSON shards, doc mapping CSV and rejected-records report.
    radgraph_adapter: the ``radgraph`` extractor over the official radgraph package (extra ``cxrkg[radgraph]``).

spaCy and medspaCy come with the optional extra ``cxrkg[extract]``.
"""
