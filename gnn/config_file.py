"""Hyper-parameter files shared by the models' configs: YAML (``.yaml`` / ``.yml``) or JSON, validated by
pydantic, unknown keys refused, every problem named with the options allowed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from gnn.errors import GnnError

C = TypeVar("C", bound="ConfigFile")


class ConfigFile(BaseModel):
    """A pydantic model read from a config file (subclasses declare the fields and ``model_config``)."""

    @classmethod
    def from_file(cls: type[C], path: Path, **overrides: Any) -> C:
        """Read a YAML (``.yaml``/``.yml``) or JSON config; ``overrides`` that are not None win.

        Raises:
            GnnError: unreadable file, not a mapping, unknown keys or invalid values.
        """
        import yaml

        path = Path(path)
        try:
            text = path.read_text()
            raw = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
        except (OSError, ValueError, yaml.YAMLError) as exc:
            raise GnnError(f"{path}: cannot read config: {exc}") from exc
        if not isinstance(raw, dict):
            raise GnnError(f"{path}: config must be a mapping of option: value")
        return cls.from_dict(raw, **overrides)

    @classmethod
    def from_dict(cls: type[C], raw: dict[str, Any], **overrides: Any) -> C:
        """Validate a mapping; ``overrides`` that are not None win.

        Raises:
            GnnError: unknown keys or invalid values, each named with what is allowed.
        """
        values = {**raw, **{k: v for k, v in overrides.items() if v is not None}}
        try:
            return cls(**values)
        except ValidationError as exc:
            known = ", ".join(cls.model_fields)
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'config'}: {e['msg']} (got {e.get('input')!r})"
                                 for e in exc.errors())
            raise GnnError(f"config: {problems}; options: {known}") from None
