"""The NIH ChestX-ray14 checks: ``reference`` (the longitudinal truth from the dataset's own tables), ``loaded``
(the loaded graph's states and counts against it), ``episodes``, ``diffvqa`` and ``cxrtrek`` (the answers the
graph should give)."""
