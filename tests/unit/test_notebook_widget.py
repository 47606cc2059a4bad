"""The notebook graph widget (ipysigma) works offline: its front end is installed locally."""

from __future__ import annotations

import re
import sys
from pathlib import Path


def test_graph_widget_front_end_is_installed_locally():
    """The widget's JavaScript ships inside the installed package (served by the local Jupyter server) and
    loads nothing from the network: no CDN script, import or fetch of an http(s) address."""
    import ipysigma

    share = Path(sys.prefix) / "share" / "jupyter"
    lab = share / "labextensions" / "ipysigma"
    bundles = list((lab / "static").glob("*.js")) + list((share / "nbextensions" / "ipysigma").glob("*.js"))
    assert (lab / "package.json").is_file() and bundles, f"ipysigma {ipysigma.__version__} front end not in {share}"
    remote = re.compile(r"""(src\s*=\s*["']https?://|import\(\s*["']https?://|fetch\(\s*["']https?://|"""
                        r"""unpkg\.com|cdn\.jsdelivr|cdnjs\.)""")
    offenders = [b.name for b in bundles if remote.search(b.read_text(errors="replace"))]
    assert not offenders
