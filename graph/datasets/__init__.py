"""Public datasets converted into the formats cxrkg ingests, all read from the torchxrayvision wheel.

- :mod:`graph.datasets.wheel`: the wheel itself (download, checksum).
- :mod:`graph.datasets.iu`: the Indiana University / Open-i reports, streamed out of the wheel.
- :mod:`graph.datasets.nih`: NIH ChestX-ray14 tables (and Google's adjudicated labels for a subset) as
  Chest ImaGenome-format scene graphs plus a metadata CSV (:mod:`graph.datasets.nih.convert`).

Converters only: the independent checks of what the graph makes of these data live in :mod:`graph.checks`.
"""
