"""The seconds of the demo's parts, for its last line: where the wall and CPU seconds went, and the inputs made
beside the parts (:mod:`flows.demo.inputs`) with their own."""

from __future__ import annotations

import os
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:
    from flows.demo.inputs import Made


class PartTimes:
    """Wall seconds of the demo's parts in the order they ran (and their CPU seconds,
    :func:`flows.cpu.cpu_seconds`), and of the inputs made beside them (:mod:`flows.demo.inputs`, with their
    workers' CPU seconds); :meth:`line` is the demo's last line."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.parts: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self.made: dict[str, Made] = {}

    @contextmanager
    def part(self, name: str) -> Iterator[None]:
        """Time the block as part ``name`` (added to an earlier block of that name)."""
        from flows.cpu import cpu_seconds  # psutil, 15 ms at load: not for the commands beside the demo

        started, cpu = time.perf_counter(), cpu_seconds()
        try:
            yield
        finally:
            self.parts[name] = self.parts.get(name, 0.0) + time.perf_counter() - started
            self.cpu[name] = self.cpu.get(name, 0.0) + cpu_seconds() - cpu

    def beside(self, name: str, made: Made) -> Made:
        """Note an input made beside the parts (its own seconds); returns it."""
        self.made[name] = made
        return made

    def line(self) -> str:
        """``seconds per part: ... (CPU s); made beside them: ...; total ... s, load average ...``."""
        parts = ", ".join(f"{name} {s:.1f} ({self.cpu.get(name, 0.0):.1f})" for name, s in self.parts.items())
        made = ", ".join(f"{name} {m.seconds:.1f} ({m.cpu_seconds:.1f})"
                         + (" (kept from an earlier run)" if m.reused else "") for name, m in self.made.items())
        return (f"seconds per part (CPU s): {parts}; made beside them: {made or 'none'}; total "
                f"{time.perf_counter() - self.started:.1f} s, load average {os.getloadavg()[0]:.2f}")
