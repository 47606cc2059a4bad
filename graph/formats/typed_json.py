"""One-pass typed JSON decoding for formats validated by pydantic models: a strict twin of a model, decoded
by msgspec straight from the file's bytes (no intermediate dicts), for the common case of valid input.

The twin takes the model's fields, required or with their defaults, with the plainest type of each:
``StrictStr`` and any other ``Annotated[str, ...]`` become ``str``, an ``Annotated[int, validator]`` becomes
``int``, ``Annotated[float, validator]`` ``float``, nested models their twins, and unions, lists and None
stay as they are. msgspec's types are strict (no string for a number, no boolean for an integer, no float
for an integer; an integer for a float, as pydantic also takes), and unknown keys are ignored as the
models allow them. So a document the twin accepts is one the model accepts, with the same values, as long
as the model's own validators only reject (they do not run on the twin: the caller checks what they check).
A document the twin rejects goes to the model, whose error names the field as before: the fast path never
changes what is accepted, rejected or reported. msgspec: https://jcristharif.com/msgspec/ (Jim Crist-Harif).
"""

from __future__ import annotations

import types
from functools import lru_cache
from typing import Annotated, Any, Union, get_args, get_origin

import msgspec
from pydantic import BaseModel

#: what a twin's decoding raises on input its model may still accept (or reject with its own message):
#: msgspec's DecodeError (its ValidationError included), and UnicodeDecodeError for bytes that are not UTF-8
TwinRejected = (msgspec.DecodeError, UnicodeDecodeError)


@lru_cache(maxsize=None)
def strict_twin(model: type[BaseModel]) -> type[msgspec.Struct]:
    """The msgspec Struct twin of a pydantic model (see the module docstring), built once per model.

    Raises:
        TypeError: a field type with no strict twin here (a dict, a tuple, a plain class).
    """
    fields: list[tuple[str, Any] | tuple[str, Any, Any]] = []
    for name, info in model.model_fields.items():
        tp = _plain(info.annotation if not info.metadata else Annotated[(info.annotation, *info.metadata)])
        if info.is_required():
            fields.append((name, tp))
        elif isinstance(info.default, list):
            fields.append((name, tp, msgspec.field(default_factory=list)))
        else:
            fields.append((name, tp, info.default))
    # msgspec wants the fields without a default first
    ordered = [f for f in fields if len(f) == 2] + [f for f in fields if len(f) == 3]
    # gc=False: a twin holds texts, numbers, lists and other twins, never a reference cycle, so the cyclic
    # garbage collector need not track the thousands a batch of files decodes (msgspec's "gc" option)
    return msgspec.defstruct(f"{model.__name__}Twin", ordered, gc=False)


@lru_cache(maxsize=None)
def twin_decoder(model: type[BaseModel]) -> msgspec.json.Decoder:
    """A JSON decoder of ``model``'s twin: ``decode(bytes)`` returns the twin or raises one of
    :data:`TwinRejected`."""
    return msgspec.json.Decoder(strict_twin(model))


def _plain(tp: Any) -> Any:
    """The strict twin type of one annotation."""
    origin = get_origin(tp)
    if origin is Annotated:
        return _plain(get_args(tp)[0])
    if origin in (Union, types.UnionType):
        return Union[tuple(_plain(a) for a in get_args(tp))]
    if origin is list:
        return list[_plain(get_args(tp)[0])]  # type: ignore[misc]  # a list type built at run time
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return strict_twin(tp)
    if tp in (str, int, float, bool, type(None)):
        return tp
    raise TypeError(f"no strict twin for {tp!r}")
