"""Import the neo4j driver without pandas, NumPy and pyarrow, for the quick commands against ``NEO4J_URI``
(on the local server they read over HTTP without the driver, :mod:`graph.store.query_api`).

The driver imports those three eagerly whenever they are installed (``neo4j/_optional_deps.py``, driver 6.4)
so that ``Result.to_df``, ``Result.to_arrow`` and NumPy query parameters work; cxrkg installs them for the
GNN and the tables, so every command that imported the driver paid about 0.4 s for libraries the quick
commands (``query``, ``stats``) never use, against issue 18's 0.3 s for a whole command.
"""

from __future__ import annotations

import sys

_DATAFRAME_LIBRARIES = ("numpy", "pandas", "pyarrow")


def import_driver_without_dataframes() -> None:
    """Import ``neo4j`` with the three libraries hidden, then unhide them.

    The driver guards those imports with ``suppress(ImportError)``; a ``None`` entry in ``sys.modules`` makes
    an import raise exactly that. Afterwards the process can still import pandas and the rest for itself;
    only the driver's own DataFrame and NumPy conversions stay off in this process. A no-op when the driver
    is already imported."""
    if "neo4j" in sys.modules:
        return
    hidden = [name for name in _DATAFRAME_LIBRARIES if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]
    try:
        import neo4j  # noqa: F401
    finally:
        for name in hidden:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]
