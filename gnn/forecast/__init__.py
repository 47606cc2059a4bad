"""Forecasting the next study from the history before it: rows, baselines, the graph model, evaluation, ablation, reports."""
