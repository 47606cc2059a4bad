"""Score generated radiology reports against their references and against the patient's graph.

Factual figures (the RRG24 shared task's, BioNLP 2024): F1RadGraph at three levels through the ``radgraph``
package's own reward functions (:mod:`~graph.report_scoring.radgraph_reward`), finding F1 over the
vocabulary's findings, and F1-CheXbert's micro / macro F1 over CheXpert's 14 observations
(:mod:`~graph.report_scoring.chexpert`, table ``graph/vocab/chexpert.yaml``). Temporal figures, judged against
the graph, the truth of each patient's history (:mod:`~graph.report_scoring.temporal`): whether the report
refers to a prior study the patient has, and whether each change it states is supported, contradicted or
unverifiable; the reference's changes it omits.

Modules: :mod:`~graph.report_scoring.facts` (what the graph says of a study, plain values; read by
:func:`~graph.report_scoring.facts.cohort_facts`), :mod:`~graph.report_scoring.reading` (an annotated report as
scored), :mod:`~graph.report_scoring.score` (per study, per batch, :class:`~graph.report_scoring.score.ReportScorer`
as a training reward), :mod:`~graph.report_scoring.summary` (corpus means with bootstrap intervals),
:mod:`~graph.report_scoring.inputs` (the command's files and baselines). docs/report_scoring.md describes them.
"""
