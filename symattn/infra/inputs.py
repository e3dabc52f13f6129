"""Reading a user's input file (spec, claims, document, class list, responses, exam.json): a regular file of
bounded size, refused with a one-line error before it is read otherwise, so that /dev/zero, a FIFO or a huge
file never makes a command read until memory runs out or wait for a writer that never comes."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..errors import SpecError

MAX_INPUT_BYTES = 16 * 1024 * 1024  # a spec, claims file, document, class list or responses CSV
MAX_EXAM_BYTES = 64 * 1024 * 1024  # exam.json: 1,000 multi-head versions take 27 MB
_CHUNK = 1024 * 1024

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"),
          (stat.S_ISFIFO, "a pipe (FIFO)"), (stat.S_ISSOCK, "a socket"))


def read_input(path: str | Path, field: str, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of the file at `path`; a SpecError naming `field` if it cannot be opened, is not a regular file
    (checked on the opened file, so a symbolic link to /dev/zero is refused too) or holds more than `limit`
    bytes (checked before reading, and again while reading: a file that grows is cut off, not followed)."""
    path = Path(path)
    name = "" if field == str(path) else str(path)  # the field names the file already: not twice
    it = name or "the file"
    try:  # O_NONBLOCK: opening a FIFO does not wait for a writer; it is then refused as one
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise SpecError(field, f"cannot read {name or 'file'}: {(exc.strerror or str(exc)).lower()}") from None
    try:
        mode, size = os.fstat(fd).st_mode, os.fstat(fd).st_size
        if not stat.S_ISREG(mode):
            kind = next((what for test, what in _KINDS if test(mode)), "not a regular file")
            raise SpecError(field, f"{it} is {kind}: expected a regular file")
        if size > limit:
            raise SpecError(field, f"{it} holds {size:,} bytes: at most {_size(limit)} are read")
        chunks, total = [], 0
        while chunk := os.read(fd, _CHUNK):
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise SpecError(field, f"{it} holds more than {_size(limit)}: at most {_size(limit)} are read")
        return b"".join(chunks)
    except OSError as exc:
        raise SpecError(field, f"cannot read {name or 'file'}: {(exc.strerror or str(exc)).lower()}") from None
    finally:
        os.close(fd)


def read_input_text(path: str | Path, field: str, limit: int = MAX_INPUT_BYTES) -> str:
    """read_input's bytes as UTF-8 text (a leading byte-order mark dropped); a SpecError naming the line of the
    first byte that is not UTF-8."""
    data = read_input(path, field, limit)
    name = "" if field == str(path) else f"{path} "
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise SpecError(field, f"{name}line {line}: not UTF-8 text (save the file as UTF-8)") from None


def _size(limit: int) -> str:
    return f"{limit // (1024 * 1024)} MB"
