"""The independent oracles: what the graph must hold (and answer), computed again from the inputs with plain
pandas, apart from the code they check. An import-linter contract forbids this package the feature packages
(``graph.questions``, ``graph.cxrtrek``, ``graph.longitudinal``, ``graph.report_scoring``) and the loaders, so
a check can never agree with the graph by calling the same code; it reads the graph through
``graph.store``'s named queries and statements only.

- ``nih``: NIH ChestX-ray14's longitudinal truth from the dataset's own tables (``reference``), the loaded
  graph and its episodes against it, and the Medical-Diff-VQA and CXRTrek answers the graph should give;
- ``synthetic``: a synthetic cohort's graph against its ``ground_truth.parquet``.
"""
