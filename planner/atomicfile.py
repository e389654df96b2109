"""Atomic, locked files (JSON or raw bytes): one writer at a time, readers never see half a file, a bad file is one line."""

from __future__ import annotations

import errno
import json
import os
import stat
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from planner.errors import InputError


def fs_error(path: Path, exc: OSError, what: str, fix: str | None = None) -> InputError:
    """A file-system failure as one line naming the file and the fix (by default: PLANNER_HOME must be writable)."""
    why = exc.strerror or str(exc)
    if exc.errno == errno.EEXIST and exc.filename:  # mkdir met a file where a folder of the path should be
        why = f"{exc.filename} is a file, not a folder"
    elif exc.errno == errno.ENOTDIR and exc.filename:
        why = f"Not a directory (a file stands in the path {exc.filename})"
    hint = fix or f"check PLANNER_HOME ({path.parent}) is a writable directory with free space"
    return InputError(f"cannot write {what} {path}: {why}; {hint}")


def invalid_error(path: Path, exc: Any, what: str, fix: str) -> InputError:
    """A stored file that fails its model (a pydantic ValidationError) as one line: the first field, its message and
    the command that clears the file."""
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    return InputError(f"{path}: not a valid {what} ({where}: {first['msg']}); fix it or run `{fix}`")


@contextmanager
def locked(path: Path, what: str, lock_name: str | None = None) -> Iterator[None]:
    """An exclusive lock on `path` (a lock file beside it, `<name>.lock` unless named, never followed through a
    symlink) while held; released when the block ends, also on an error."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(path.parent / (lock_name or f"{path.name}.lock"), flags, 0o600)
    except OSError as exc:
        raise fs_error(path, exc, what) from None
    try:
        if sys.platform == "win32":  # a branch a type checker follows, unlike an ImportError fallback
            import msvcrt

            msvcrt.locking(fd, msvcrt.LK_LOCK, 1)
        else:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def write_json(path: Path, data: Any, what: str, fix: str | None = None) -> Path:
    """Write `data` as indented JSON (no NaN) atomically, as `write_bytes` does."""
    return write_bytes(path, (json.dumps(data, indent=2, allow_nan=False) + "\n").encode("utf-8"), what, fix)


def _plain_mode(path: Path) -> int:
    """The permissions a plain `open(path, "w")` would leave: the existing file's, else 0o666 less the umask (read by
    setting it back at once: fine for the CLI, which writes from one thread)."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        umask = os.umask(0o022)
        os.umask(umask)
        return 0o666 & ~umask


def write_bytes(path: Path, data: bytes, what: str, fix: str | None = None, *, make_dirs: bool = True,
                private: bool = True) -> Path:
    """Write `data` through a fresh temporary file of our own in the same directory (flushed and synced), then
    replace: readers never see a half-written file, a crash leaves the old one, and a planted file or symlink at a
    fixed temporary name is never written through. The directory is created unless `make_dirs` is false. The file
    is private (0o600) unless `private` is false (a file the user asked for, such as an export: the permissions a
    plain write would give it). A file-system error is one line (`fs_error`, with `fix` as its hint)."""
    fd, tmp = -1, ""
    try:
        if make_dirs:
            path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=".tmp", dir=path.parent)
        if not private:
            os.chmod(tmp, _plain_mode(path))
        with os.fdopen(fd, "wb") as fh:
            fd = -1
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        tmp = ""
    except OSError as exc:
        raise fs_error(path, exc, what, fix) from None
    finally:
        if fd >= 0:
            os.close(fd)
        if tmp:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    return path
