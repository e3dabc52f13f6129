"""Writing output files atomically, one at a time or as a set: temporary files beside the targets, then renames."""

from __future__ import annotations

import errno
import os
import shutil
import signal
import tempfile
from collections.abc import Iterable, Mapping
from contextlib import contextmanager
from pathlib import Path

from ..errors import SpecError

TEMP_PREFIX = ".symattn-tmp-"  # every temporary file a set writes starts so; a failed set removes its own
_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def write_atomic(path: Path, data: str | bytes, option: str = "--out") -> None:
    """Write all of `data` to `path` or nothing: readers never see a half-written file."""
    write_set({path: data}, option=option)


def write_set(files: Mapping[Path, str | bytes], keep: Iterable[Path] = (), option: str = "--out") -> None:
    """Write every file or none: each goes to a temporary file in its folder first, and only when all are
    written are they renamed into place (with SIGINT and SIGTERM held off, so an interrupt cannot split the
    set). A file in `keep` (the input spec) is never replaced. Problems with the folders or the disk raise a
    one-line SpecError naming `option`; folders this call created are removed again."""
    targets = {Path(path): data for path, data in files.items()}
    check_targets(targets, keep, option)
    created: list[Path] = []
    temps: dict[Path, Path] = {}
    done = False
    try:
        for path in targets:
            created += _make_folder(path.parent)
        for folder in {path.parent for path in targets}:
            _sweep(folder)
        for path, data in targets.items():
            temps[path] = _write_temp(path, data)
        with _signals_held():
            _replace_all(temps)
            done = True
    except OSError as exc:
        raise SpecError(option, _problem(exc)) from None
    finally:
        if not done:
            for temp in temps.values():
                temp.unlink(missing_ok=True)
            for folder in reversed(created):
                _remove_empty(folder)


def _replace_all(temps: dict[Path, Path]) -> None:
    """Rename each temporary file onto its target; if one rename fails, the targets renamed before it get their
    old files back (kept as hard links until the set is in place) and new ones are removed: the old set stays."""
    backups: dict[Path, Path | None] = {}  # target -> its old file's backup (None: there was none)
    try:
        for path, temp in temps.items():
            backups[path] = _backup(path, temp)
            os.replace(temp, path)
    except OSError:
        for path, backup in backups.items():
            if backup is not None:
                os.replace(backup, path)
            elif not temps[path].exists():  # renamed into place: a new file to take away
                path.unlink(missing_ok=True)
        raise
    finally:
        for backup in backups.values():
            if backup is not None:
                backup.unlink(missing_ok=True)


def _backup(path: Path, temp: Path) -> Path | None:
    """A second name for the file at `path` (a hard link, or a copy where links are not allowed), or None if there
    is no file; named after its unique temporary file, so that a killed run's backup is swept with it."""
    if not path.exists():
        return None
    backup = temp.with_name(temp.name + ".old")
    try:
        os.link(path, backup)
    except OSError:
        shutil.copy2(path, backup)
    return backup


def check_targets(files: Iterable[Path], keep: Iterable[Path] = (), option: str = "--out") -> None:
    """A one-line SpecError, before anything is written, if a target is an input to keep, is a folder, or lies
    below a file."""
    kept = {_identity(Path(path)) for path in keep}
    for path in map(Path, files):
        if _identity(path) in kept:
            raise SpecError(option, f"would overwrite the input {path}: choose another output folder")
        if path.is_dir():
            raise SpecError(option, f"{path} is a folder, not a file: move it away or choose another folder")
        for folder in [path.parent, *path.parent.parents]:
            if folder.exists():
                if not folder.is_dir():
                    raise SpecError(option, f"{folder} is a file, not a folder")
                break


def _identity(path: Path) -> tuple[int, int] | Path:
    """What names one file: its device and inode when it exists (hard and symbolic links too), else its path."""
    try:
        status = path.stat()
        return (status.st_dev, status.st_ino)
    except OSError:
        return path.resolve()


def _make_folder(folder: Path) -> list[Path]:
    """Create `folder` and its missing parents; the ones created, outermost first."""
    missing = [parent for parent in [folder, *folder.parents] if not parent.exists()][::-1]
    for parent in missing:
        parent.mkdir()
    return missing


def _write_temp(path: Path, data: str | bytes) -> Path:
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, name = tempfile.mkstemp(prefix=f"{TEMP_PREFIX}{os.getpid()}-{path.name}.", dir=path.parent)
    temp = Path(name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())  # a full disk shows here, not after the rename
        os.chmod(temp, 0o666 & ~_umask())
    except BaseException as exc:
        temp.unlink(missing_ok=True)
        if isinstance(exc, OSError) and not exc.filename:
            exc.filename = str(path)  # a failed write() names no file: name the one being written
        raise
    return temp


def _problem(exc: OSError) -> str:
    where = exc.filename or ""
    reasons = {errno.ENOSPC: "no space left on the disk", errno.EACCES: "permission denied (read-only?)",
               errno.EROFS: "read-only file system", errno.EPERM: "permission denied",
               errno.ENOTDIR: "a file where a folder is needed", errno.EISDIR: "a folder where a file is needed",
               errno.EDQUOT: "disk quota exceeded"}
    reason = reasons.get(exc.errno, exc.strerror or str(exc))
    return f"cannot write {where}: {reason}" if where else f"cannot write the files: {reason}"


def _sweep(folder: Path) -> None:
    """Delete the temporary files that runs killed with SIGKILL left in `folder` (their pid no longer runs)."""
    for temp in folder.glob(f"{TEMP_PREFIX}*-*"):
        pid = temp.name[len(TEMP_PREFIX):].split("-", 1)[0]
        if pid.isdigit() and not process_alive(int(pid)):
            temp.unlink(missing_ok=True)


def process_alive(pid: int) -> bool:
    """Whether a process with this id runs (one of another user's counts as running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # someone else's process: alive
        return True
    return True


def _remove_empty(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:
        pass


@contextmanager
def _signals_held():
    """SIGINT and SIGTERM wait until the block ends (the renames of a set), then arrive as usual."""
    try:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
    except (AttributeError, ValueError):  # no pthread_sigmask on this platform
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
