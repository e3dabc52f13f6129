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
from . import sets

TEMP_PREFIX = ".symattn-tmp-"  # every temporary file a set writes starts so; a failed set removes its own
_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def write_atomic(path: Path, data: str | bytes, option: str = "--out") -> None:
    """Write all of `data` to `path` or nothing: readers never see a half-written file."""
    write_set({path: data}, option=option)


def write_set(files: Mapping[Path, str | bytes], keep: Iterable[Path] = (), option: str = "--out",
              folder: Path | None = None, name: str | None = None) -> None:
    """Write every file or none: each goes to a temporary file in its folder first, and only when all are
    written are they renamed into place (with SIGINT and SIGTERM held off, so an interrupt cannot split the
    set), the output `folder` (default: the targets' common folder) locked meanwhile so that of two runs into one
    folder one whole set wins. A file in `keep` (the inputs) is never replaced. With a set `name`, the files this
    set wrote last time into `folder` and does not write now are removed, if still as written (infra/sets.py).
    Problems with the folders or the disk raise a one-line SpecError naming `option`; folders this call created
    are removed again."""
    targets = {Path(path): data for path, data in files.items()}
    root = Path(folder) if folder is not None else _common_folder(targets)
    check_targets(targets, keep, option, root)
    created: list[Path] = []
    temps: dict[Path, Path] = {}
    done = False
    try:
        for path in [root / sets.MANIFEST, *targets]:
            created += _make_folder(path.parent)
        for place in {path.parent for path in targets}:
            _sweep(place)
        for path, data in targets.items():
            temps[path] = _write_temp(path, data)
        with sets.locked(root):
            old: list[Path] = []
            if name is not None:
                recorded = sets.read_manifest(root)
                old = sets.stale(recorded, name, root, targets)
                manifest = root / sets.MANIFEST
                temps[manifest] = _write_temp(manifest, sets.manifest_text(recorded, name, root, targets))
            with _signals_held():
                _replace_all(temps)
                done = True
                sets.remove(old)
    except OSError as exc:
        raise SpecError(option, _problem(exc)) from None
    finally:
        if not done:
            for temp in temps.values():
                temp.unlink(missing_ok=True)
            for made in reversed(created):
                _remove_empty(made)


def _common_folder(targets: Iterable[Path]) -> Path:
    """The folder every target lies in (the one of a single file)."""
    parents = [str(path.parent) for path in targets]
    return Path(os.path.commonpath(parents)) if parents else Path(".")


def _replace_all(temps: dict[Path, Path]) -> None:
    """Rename each temporary file onto its target; if one rename fails, the targets renamed before it get their
    old files back (kept as hard links until the set is in place) and new ones are removed: the old set stays."""
    backups: dict[Path, Path | None] = {}  # target -> its old file's backup (None: there was none)
    try:
        for path, temp in temps.items():
            backups[path] = _backup(path, temp)
            try:
                os.replace(temp, path)
            except OSError as exc:
                exc.filename = str(path)  # the target, not the temporary file, is what the user knows
                raise
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


def check_targets(files: Iterable[Path], keep: Iterable[Path] = (), option: str = "--out",
                  folder: Path | None = None) -> None:
    """A one-line SpecError, before anything is written, if a target is an input to keep, is a folder, lies below
    a file or in a folder that cannot be written, or (below the output `folder`) in a symbolic link to a folder
    that may lie anywhere else."""
    try:
        _check_targets(files, keep, option, folder)
    except OSError as exc:  # a name too long, a folder that cannot be looked into
        raise SpecError(option, _problem(exc)) from None


def _check_targets(files: Iterable[Path], keep: Iterable[Path], option: str, folder: Path | None) -> None:
    kept = {_identity(Path(path)) for path in keep}
    for path in map(Path, files):
        if _identity(path) in kept:
            raise SpecError(option, f"would overwrite the input {path}: choose another output folder")
        if path.is_dir():
            raise SpecError(option, f"{path} is a folder, not a file: move it away or choose another folder")
        if folder is not None and _below(path, Path(folder)):
            for link in path.parents:
                if link == Path(folder) or not _below(link, Path(folder)):
                    break
                if link.is_symlink():
                    raise SpecError(option, f"{link} is a symbolic link: symattn writes only inside {folder} "
                                            "(remove the link or choose another folder)")
        for parent in [path.parent, *path.parent.parents]:
            if parent.exists():
                if not parent.is_dir():
                    raise SpecError(option, f"{parent} is a file, not a folder")
                if not os.access(parent, os.W_OK | os.X_OK):
                    raise SpecError(option, f"cannot write {parent}: permission denied (read-only?)")
                break


def _below(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder)
    except ValueError:
        return False
    return True


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
    made = []
    for parent in missing:
        try:
            parent.mkdir()
        except FileExistsError:  # another run made it meanwhile: a folder to share, not ours to remove
            if not parent.is_dir():
                raise
            continue
        made.append(parent)
    return made


def _write_temp(path: Path, data: str | bytes) -> Path:
    payload = data.encode("utf-8") if isinstance(data, str) else data
    # the target's name shortened: a name that fits the file system fits with the prefix and suffix too
    fd, name = tempfile.mkstemp(prefix=f"{TEMP_PREFIX}{os.getpid()}-{path.name[:40]}.", dir=path.parent)
    temp = Path(name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())  # a full disk shows here, not after the rename
        os.chmod(temp, 0o666 & ~_umask())
    except BaseException as exc:
        temp.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            exc.filename = str(path)  # the file being written, never its temporary name
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
