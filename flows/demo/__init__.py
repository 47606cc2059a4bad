"""The parts of ``cxrkg demo`` (its run is ``flows/cli/demo.py``): ``inputs`` (the three inputs made side by
side in worker processes and kept by digest), ``gnn`` (the worsening answer with a progression GNN's edges),
``answers`` (the NIH Medical-Diff-VQA and CXRTrek answers), ``forecast`` (the forecaster's stage 6)."""
