"""``python -m flows.cli``: the same as the ``cxrkg`` script."""

from flows.cli.main import main

main()
