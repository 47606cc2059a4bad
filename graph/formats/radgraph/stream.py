"""Streaming a big RadGraph JSON file: one document in memory at a time, and a syntax check up front.

For files too big for memory, such as the 220,000-report inference release: JSON through ``ijson`` (its
C backend), JSONL line by line. The same spellings as :func:`graph.formats.radgraph.documents.iter_documents`.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path
from typing import Any, BinaryIO, Iterator

import ijson

from graph.formats.radgraph.documents import jsonl_documents, list_documents, with_labeler_1
from graph.records import InputError

STREAM_BUFFER_BYTES = 1 << 16  # bytes ijson reads at a time from a streamed file

_BOM = b"\xef\xbb\xbf"


class _CountingReader:
    """A binary file wrapper that remembers which bytes the last ``read`` returned (for error positions)."""

    def __init__(self, fh: BinaryIO, offset: int):
        self.fh, self.start, self.end = fh, offset, offset

    def read(self, size: int = -1) -> bytes:
        data = self.fh.read(size)
        if data:
            self.start, self.end = self.end, self.end + len(data)
        return data


def _open_stream(path: Path, file: str) -> tuple[BinaryIO, int, str]:
    """Open a JSON file for streaming: (file positioned after any UTF-8 BOM, that offset, ``{`` or ``[``).

    Raises:
        InputError: the file is empty, not UTF-8 JSON, or its top level is neither an object nor a list.
    """
    fh = path.open("rb")
    try:
        head = fh.read(4096)
        offset = len(_BOM) if head.startswith(_BOM) else 0
        body = head[offset:]
        while not body.strip() and (more := fh.read(1 << 16)):
            body += more
        first = body.lstrip()[:1]
        if first not in (b"{", b"["):
            what = "the file is empty" if not first else f"it starts with {first!r}"
            raise InputError(file, None, None, f"invalid JSON for streaming: {what}; expected a UTF-8 JSON "
                                                "object or list")
        fh.seek(offset)
        return fh, offset, first.decode()
    except BaseException:
        fh.close()
        raise


def _json_error(exc: BaseException) -> str:
    """The first line of an ijson / yajl error (its message may be bytes and spans several lines)."""
    msg = exc.args[0] if exc.args else str(exc)
    if isinstance(msg, bytes):
        msg = msg.decode("utf-8", "replace")
    return str(msg).strip().splitlines()[0] if str(msg).strip() else type(exc).__name__


def _stream_items(reader: Any, kind: str, file: str, buf_size: int = STREAM_BUFFER_BYTES) -> Iterator[tuple[str, Any]]:
    if kind == "{":
        for doc_key, doc in ijson.kvitems(reader, "", use_float=True, buf_size=buf_size):
            yield doc_key, with_labeler_1(doc)
    else:
        for n, item in enumerate(ijson.items(reader, "item", use_float=True, buf_size=buf_size)):
            yield from list_documents(n, item, file)


def _position_error(path: Path, file: str, reason: str) -> InputError:
    """An InputError naming where a streamed JSON file breaks: a byte range of at most 4 KiB and the
    complete documents before it. Reads the file again up to the break (only on this error path)."""
    fh, offset, kind = _open_stream(path, file)
    reader, count, last = _CountingReader(fh, offset), 0, None
    with fh:
        try:
            for doc_key, _ in _stream_items(reader, kind, file, buf_size=4096):
                count, last = count + 1, doc_key
        except (ijson.JSONError, UnicodeDecodeError):
            pass
    before = f"{count} complete document(s) before them" + (f", the last {last!r}" if last is not None else "")
    return InputError(file, None, None, f"invalid JSON in bytes {reader.start}-{reader.end} of "
                                        f"{path.stat().st_size} ({before}): {reason}")


def check_json_stream(path: Path, file: str | None = None) -> None:
    """Check that a RadGraph JSON file is well-formed from start to end, holding no document in memory.

    A syntax-only pass (ijson's C backend, ``STREAM_BUFFER_BYTES`` at a time); JSONL files are not
    checked here, their lines are independent records.

    Raises:
        InputError: the file is not one UTF-8 JSON object or list (truncated, invalid syntax, trailing
            data); the message names the byte range (at most 4 KiB) where the problem lies and how many
            complete documents (and which doc_key last) come before it.
        OSError: the file cannot be read.
    """
    file = file or str(path)
    if path.suffix == ".jsonl":
        return
    fh, offset, _ = _open_stream(path, file)
    with fh:
        try:
            deque(ijson.basic_parse(fh, buf_size=STREAM_BUFFER_BYTES), maxlen=0)
        except (ijson.JSONError, UnicodeDecodeError) as exc:
            reason = _json_error(exc)
        else:
            return
    raise _position_error(path, file, reason)


def stream_documents(path: Path, file: str) -> Iterator[tuple[str, Any]]:
    """Like :func:`~graph.formats.radgraph.documents.iter_documents`, holding one document at a time: JSON
    through ijson, JSONL by line.

    Accepts the same spellings (``{doc_key: doc}`` with the labeler_1 variant, the two lists: processed
    annotations and per-call outputs, JSONL). In a JSON object a doc_key that occurs again is rejected as a
    record (the whole-file reader would keep only its last occurrence, which a stream cannot know in advance).

    Raises:
        InputError: the file is not readable JSON; raised when the stream reaches the fault, after the
            documents before it were yielded (call :func:`check_json_stream` first to fail early).
    """
    if path.suffix == ".jsonl":
        yield from jsonl_documents(path, file)
        return
    fh, offset, kind = _open_stream(path, file)
    reader = _CountingReader(fh, offset)
    seen: set[str] = set()
    with fh:
        try:
            for doc_key, doc in _stream_items(reader, kind, file):
                if kind == "{":
                    if doc_key in seen:
                        doc = InputError(file, doc_key, "doc_key", "duplicate doc_key: an earlier document of "
                                                                   "this file has it; this one is skipped")
                    seen.add(doc_key)
                yield doc_key, doc
        except (ijson.JSONError, UnicodeDecodeError) as exc:
            raise InputError(file, None, None, f"invalid JSON in bytes {reader.start}-{reader.end}: "
                                               f"{_json_error(exc)}") from exc
