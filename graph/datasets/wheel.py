"""The torchxrayvision 1.5.7 wheel on PyPI, the one source of the public data cxrkg converts.

Its IU reports (:mod:`graph.datasets.iu`) and NIH ChestX-ray14 tables (:mod:`graph.datasets.nih`) are read
straight out of the wheel; only those members are ever read (the wheel's other tables carry research-use
terms without redistribution rights). :func:`fetch_wheel` downloads it once with pip into a cache folder
and checks it against :data:`WHEEL_SHA256`.

Errors: :class:`WheelUnavailable` when the wheel cannot be downloaded (no registry) or its checksum differs.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from graph.errors import CxrkgError
from graph.formats.files import sha256_of

WHEEL_NAME = "torchxrayvision-1.5.7-py3-none-any.whl"
WHEEL_SHA256 = "95f6c3475661f3515d4258deb0855bd5d1b1a56e0b65384251d3dd3fa61fac41"


class WheelUnavailable(CxrkgError, RuntimeError):
    """The torchxrayvision wheel cannot be obtained here: the registry is unreachable or the wheel differs."""


def default_cache() -> Path:
    """``$CXRKG_IU_CACHE``, else ``~/.cache/cxrkg/iu``."""
    from graph.settings import settings

    return settings().iu_cache


def fetch_wheel(cache: Path | None = None, timeout: int = 300) -> Path:
    """The verified torchxrayvision wheel in ``cache``, downloaded with pip if it is not there yet.

    Raises:
        WheelUnavailable: pip cannot download it (no network / registry), or the sha256 differs.
    """
    cache = cache or default_cache()
    wheel = cache / WHEEL_NAME
    if not wheel.exists():
        cache.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "pip", "download", "torchxrayvision==1.5.7", "--no-deps",
               "--disable-pip-version-check", "-q", "-d", str(cache)]
        try:
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise WheelUnavailable(f"cannot download torchxrayvision 1.5.7 from the package registry: {exc}") from exc
        if res.returncode != 0 or not wheel.exists():
            tail = (res.stderr or res.stdout).strip().splitlines()[-1:] or ["no output"]
            raise WheelUnavailable(f"cannot download torchxrayvision 1.5.7 from the package registry: {tail[0]}")
    digest = sha256_of(wheel)
    if digest != WHEEL_SHA256:
        raise WheelUnavailable(f"{wheel}: sha256 {digest} is not the expected {WHEEL_SHA256}")
    return wheel
