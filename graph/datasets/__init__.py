"""Public datasets converted into the formats cxrkg ingests.

- :mod:`graph.datasets.nih`: NIH ChestX-ray14 tables (and Google's adjudicated labels for a subset) as
  Chest ImaGenome-format scene graphs plus a metadata CSV.
- :mod:`graph.datasets.nih_reference`: an independent plain-pandas computation of the longitudinal truth
  (states and events per patient, follow-up and finding) from the same tables.
"""
