"""The longitudinal core: plain functions from a patient's records to states, events, episodes and rows.

* :mod:`~graph.longitudinal.events`: mention states and the events between consecutive studies;
* :mod:`~graph.longitudinal.episodes`: episodes of a finding over a patient's history;
* :mod:`~graph.longitudinal.derived_rows`: the rows every loader writes from records and derivations;
* :mod:`~graph.longitudinal.sequential_reports`: the graph's mentions as Lunguage rows;
* :mod:`~graph.longitudinal.episode_agreement`: how well one Lunguage file's episodes agree with another's.

Pure and below the store: it reads records, the vocabulary, the schema and the formats, never the store
(``graph.store``), loading (``graph.ingest``), the questions (``graph.questions``) or the datasets
(``graph.datasets``); the import contract in pyproject.toml holds it to that. Callers that read the graph
pass what they read in (``cxrkg export lunguage`` reads the mentions and episodes, then calls
:func:`~graph.longitudinal.sequential_reports.lunguage_rows`).
"""
