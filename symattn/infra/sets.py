"""What one run wrote into an output folder, so that the next run of the same set removes its predecessor's files
that it does not write again (exam-03.pdf after an exam of two versions, the feedback of students no longer in the
class), and never a file symattn did not write: the folder's manifest, `.symattn-sets.json`, records for each set
(exam, grade) the files it wrote with their size and SHA-256. A file of an earlier
set is removed only while it is a regular file inside the folder with exactly those bytes; a user's file, one
edited since, or one another set wrote over, stays. The lock that makes one run's whole set win is here too."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

try:
    import fcntl
except ImportError:  # not on this platform: no lock
    fcntl = None  # type: ignore[assignment]

MANIFEST = ".symattn-sets.json"
_MAX_MANIFEST = 16 * 1024 * 1024

Entry = tuple[int, str]  # a file's size and SHA-256


def digest(data: str | bytes) -> Entry:
    payload = data.encode("utf-8") if isinstance(data, str) else data
    return len(payload), hashlib.sha256(payload).hexdigest()


def read_manifest(folder: Path) -> dict[str, dict[str, Entry]]:
    """The sets recorded in `folder`; {} for a missing, unreadable or malformed manifest (then nothing is removed:
    a manifest symattn cannot trust deletes no file)."""
    path = folder / MANIFEST
    try:
        if not path.is_file() or path.is_symlink() or path.stat().st_size > _MAX_MANIFEST:
            return {}
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    sets = data.get("sets") if isinstance(data, dict) else None
    if not isinstance(sets, dict):
        return {}
    return {name: {rel: (entry[0], entry[1]) for rel, entry in files.items() if _valid(rel, entry)}
            for name, files in sets.items() if isinstance(name, str) and isinstance(files, dict)}


def _valid(rel: object, entry: object) -> bool:
    """A relative path below the folder (no `..`, not absolute) with a size and a hex digest."""
    if not isinstance(rel, str) or not isinstance(entry, list) or len(entry) != 2:
        return False
    parts = PurePosixPath(rel).parts
    return (bool(parts) and not PurePosixPath(rel).is_absolute() and ".." not in parts and "\\" not in rel
            and isinstance(entry[0], int) and isinstance(entry[1], str) and len(entry[1]) == 64)


def manifest_text(sets: Mapping[str, Mapping[str, Entry]], name: str, folder: Path,
                  files: Mapping[Path, str | bytes]) -> str:
    """The manifest with set `name` now the files written (paths relative to `folder`), the other sets as they were."""
    written = {relative(path, folder): digest(data) for path, data in files.items()}
    updated = {**{key: dict(value) for key, value in sets.items()}, name: written}
    shown = {key: {rel: list(entry) for rel, entry in sorted(value.items()) if rel is not None}
             for key, value in sorted(updated.items())}
    return json.dumps({"symattn": "the files each set of symattn wrote here (removed when the set is written "
                                  "again without them)", "sets": shown}, ensure_ascii=False, indent=1) + "\n"


def relative(path: Path, folder: Path) -> str | None:
    try:
        return Path(path).relative_to(folder).as_posix()
    except ValueError:
        return None


def stale(sets: Mapping[str, Mapping[str, Entry]], name: str, folder: Path, files: Mapping[Path, object]) -> list[Path]:
    """The files set `name` wrote last time and does not write now that are still as it wrote them."""
    now = {relative(path, folder) for path in files}
    return [folder / rel for rel, entry in sets.get(name, {}).items()
            if rel not in now and unchanged(folder, rel, entry)]


def unchanged(folder: Path, rel: str, entry: Entry) -> bool:
    """Whether folder/rel is a regular file, reached through no symbolic link, with the recorded size and digest."""
    path = folder
    for part in PurePosixPath(rel).parts:
        path = path / part
        if path.is_symlink():
            return False
    try:
        if not path.is_file() or path.stat().st_size != entry[0]:
            return False
        return digest(path.read_bytes()) == entry
    except OSError:
        return False


def remove(paths: list[Path]) -> None:
    """Delete the stale files (a failure leaves the file: it was only stale)."""
    for path in paths:
        try:
            path.unlink()
        except OSError:
            pass


@contextmanager
def locked(folder: Path) -> Iterator[None]:
    """An exclusive lock on the output folder (flock on the folder itself, no lock file): two runs writing into
    one folder put their sets in place one after the other, so the last one's whole set is there. A run that
    finds the folder locked says so on stderr and waits; where flock is not supported, no lock is taken."""
    if fcntl is None:
        yield
        return
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"symattn: waiting for another symattn run writing into {folder}", file=sys.stderr, flush=True)
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError as exc:
            if exc.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
                raise
        yield
    finally:
        os.close(fd)  # closing releases the lock
