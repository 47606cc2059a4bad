"""``python -m flows.cli``: the same as the ``cxrkg`` script."""

from flows.cli import app

app()
