"""Extraction stage: raw report text -> RadGraph v1 / RadGraph2-format JSON (``graph.formats.radgraph`` reads it).

Modules:
    rules: the offline ``rules`` extractor (spaCy blank English + medspaCy TargetMatcher and ConText).
    iu: the Indiana University / Open-i chest X-ray reports, read from the torchxrayvision 1.5.7 wheel.
    evaluate: scores against the IU MeSH major tags, with a keyword + negation baseline.

spaCy and medspaCy come with the optional extra ``cxrkg[extract]``.
"""
