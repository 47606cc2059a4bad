"""NIH ChestX-ray14 (torchxrayvision wheel tables) converted to scene graphs (its independent reference is
:mod:`graph.checks.nih.reference`)."""
