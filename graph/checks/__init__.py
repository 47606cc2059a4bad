"""The independent oracles: what the graph must hold (and answer), computed again from the inputs with plain
pandas, apart from the code they check. An import-linter contract forbids this package the feature packages
(``graph.questions``, ``graph.cxrtrek``, ``graph.longitudinal``, ``graph.report_scoring``) and the loaders, so
a check can never agree with the graph by calling the same code; it reads the graph through
``graph.store``'s named queries and statements only.

- ``nih_reference``: NIH ChestX-ray14's longitudinal truth (states per study, changes between studies) from
  the dataset's own tables; ``nih_graph`` and ``nih_episodes`` hold the loaded graph against it;
- ``nih_diffvqa``, ``nih_cxrtrek``: the Medical-Diff-VQA and CXRTrek answers the graph should give on NIH;
- ``synthetic``: a synthetic cohort's graph against its ``ground_truth.parquet``.
"""
