"""Library logs go to a file, not the terminal: a user of ``cxrkg`` reads progress bars, one summary table
and answers, while Prefect's run logs, its local API server's messages and warnings from other libraries
land in ``CXRKG_HOME/logs/cxrkg.log``.

Prefect configures logging when it is imported, from the YAML file named by ``PREFECT_LOGGING_SETTINGS_PATH``
(https://docs.prefect.io/v3/advanced/logging-customization), so the file and the variable are written
before any command imports Prefect; the temporary API server Prefect starts inherits them. Run logs still
reach a Prefect server's UI through Prefect's own API handler. A user's own
``PREFECT_LOGGING_SETTINGS_PATH`` is left in place.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

_PREFECT_LOGGERS = ("prefect", "prefect.extra", "prefect.server", "prefect.client", "prefect.infrastructure",
                    "prefect._internal", "prefect.workers", "uvicorn", "fastapi", "httpx")


def logging_config(log_file: Path, level: str = "INFO") -> dict:
    """A ``logging.config.dictConfig`` mapping: every Prefect logger and the root logger write to
    ``log_file``; flow and task run logs also go to the Prefect API (shown in its UI when one is used)."""
    to_file = {"level": level, "handlers": ["file"], "propagate": False}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"standard": {"format": "%(asctime)s | %(levelname)-7s | %(name)s - %(message)s"}},
        "handlers": {
            "file": {"class": "logging.FileHandler", "filename": str(log_file), "formatter": "standard", "level": 0},
            "api": {"class": "prefect.logging.handlers.APILogHandler", "level": 0},
        },
        "loggers": {**{name: dict(to_file) for name in _PREFECT_LOGGERS},
                    "prefect.flow_runs": {"level": "NOTSET", "handlers": ["api"]},
                    "prefect.task_runs": {"level": "NOTSET", "handlers": ["api"]}},
        "root": {"level": "WARNING", "handlers": ["file"]},
    }


def route_library_logs(home: Path, level: str = "INFO") -> Path:
    """Write ``home/logs/prefect-logging.yml`` and point Prefect at it (unless the user already did);
    also turn off Prefect's anonymous telemetry, which this machine cannot send and would log as an error, and
    give Prefect's ephemeral API server 120 s to start (``PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS``).
    Returns the log file. Call before Prefect is imported.

    Raises:
        OSError: the logs folder cannot be written.
    """
    logs = Path(home) / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    log_file = logs / "cxrkg.log"
    if "PREFECT_LOGGING_SETTINGS_PATH" not in os.environ:
        settings = logs / "prefect-logging.yml"
        # JSON is YAML (1.2, and PyYAML reads it): json is imported anyway, yaml would cost every command 11 ms
        text = json.dumps(logging_config(log_file, level), indent=2) + "\n"
        if not settings.is_file() or settings.read_text() != text:  # every command starts here: write once
            settings.write_text(text)
        os.environ["PREFECT_LOGGING_SETTINGS_PATH"] = str(settings)
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    # Prefect gives its ephemeral API server 20 s to start; on a busy 2-core machine it needs more, and the
    # command would fail before doing any work
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
    return log_file
