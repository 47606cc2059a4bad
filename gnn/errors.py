"""Errors the gnn package raises for bad input; the command line prints their message, not a trace."""

from graph.errors import CxrkgError


class GnnError(CxrkgError, ValueError):
    """Bad input for export, training, prediction or comparison: an empty graph, a patient with one
    study, an unknown finding or patient, a checkpoint whose snapshot hash or vocabulary does not match
    the graph, a malformed snapshot, config or embeddings file. The message says what to do."""
