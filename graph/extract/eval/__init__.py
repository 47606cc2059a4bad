"""Evaluation tooling beside the extractor: gold sets, scorers, baselines, corpus counts and the scale corpus."""
