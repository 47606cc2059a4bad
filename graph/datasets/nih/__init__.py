"""NIH ChestX-ray14 (torchxrayvision wheel tables) converted to scene graphs, and its independent reference."""
