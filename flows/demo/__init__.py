"""The engine of ``cxrkg demo`` (its command, ``flows/cli/demo.py``, only reads the options): ``run`` (the run:
the server, the inputs, the sections in order), ``loading`` (every part in one bulk import into an empty
database, else each through the ingest flow), ``cohort``, ``iu`` and ``nih`` (a section each), ``part_times``
(the seconds line), ``inputs`` (the three inputs made side by side in worker processes and kept by digest),
``gnn`` (the worsening answer with a progression GNN's edges), ``answers`` (the report scoring and the CXRTrek
answers), ``forecast`` (the forecaster's stage 6), ``geometry`` (one patient's cardiothoracic ratio over time and
the cohort's geometry answers)."""
