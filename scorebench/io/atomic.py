"""Atomic file writing: every file scorebench writes appears whole or not at all.

:func:`atomic_write` writes each target to a temporary file beside it (named with the
writer's process id) and renames them all once every one is complete; :func:`text_writer`
and :func:`write_text_file` are the content functions for text; :func:`check_writable` fails
before any work when a target cannot be written. :func:`pid_alive` and :func:`current_umask`
are shared with the board writer (:mod:`scorebench.leaderboard.output`), which swaps whole
folders the same way.

Examples
--------
>>> import tempfile, pathlib
>>> out = pathlib.Path(tempfile.mkdtemp()) / "a.txt"
>>> atomic_write({out: text_writer("hello\\n")})
>>> out.read_text()
'hello\\n'
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from scorebench.core.errors import InputError

__all__ = ["atomic_write", "check_writable", "text_writer", "write_text_file", "pid_alive", "current_umask",
           "TMP_TAG"]

#: The suffix of every temporary file or folder scorebench writes before a rename.
TMP_TAG = ".scorebench.tmp"


def write_text_file(tmp: str | os.PathLike, write: Callable[[io.TextIOBase], Any]) -> None:
    """Open ``tmp`` as UTF-8 text (no newline translation), let ``write(handle)`` fill it, and
    flush it to disk (``fsync``) before returning: the content function of :func:`atomic_write`
    for text.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> tmp = pathlib.Path(tempfile.mkdtemp()) / "t"
    >>> write_text_file(tmp, lambda handle: handle.write("x\\r\\n"))
    >>> tmp.read_bytes()
    b'x\\r\\n'
    """
    with open(tmp, "w", encoding="utf-8", newline="") as handle:
        write(handle)
        handle.flush()
        os.fsync(handle.fileno())


def text_writer(text: str) -> Callable[[Path], None]:
    """A content function for :func:`atomic_write` that writes ``text`` (UTF-8, as it is).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> tmp = pathlib.Path(tempfile.mkdtemp()) / "t"
    >>> text_writer("a\\n")(tmp); tmp.read_text()
    'a\\n'
    """
    def write(tmp: Path) -> None:
        write_text_file(tmp, lambda handle: handle.write(text))

    return write


def check_writable(path: str | os.PathLike) -> Path:
    """Fail early, before any work, when ``path`` cannot be written.

    The folder must exist and be writable and ``path`` must not be a folder or a link to one.

    Examples
    --------
    >>> check_writable("no/such/folder/x.csv")
    Traceback (most recent call last):
    ...
    scorebench.core.errors.InputError: no/such/folder/x.csv: the folder no/such/folder does not exist
    """
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    if not directory.is_dir():
        raise InputError(f"{path}: the folder {directory} does not exist")
    if path.is_dir():
        raise InputError(f"{path}: is a folder; expected a file name to write")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise InputError(f"{path}: the folder {directory} is not writable")
    return path


def _temp_name(target: Path) -> Path:
    # The writer's pid is part of the name, so a later run can tell litter left by a killed
    # process (its pid is gone) from a temporary file another run is writing right now.
    return target.with_name(f".{target.name}.{os.getpid()}.{os.urandom(4).hex()}{TMP_TAG}")


def _remove_stale_temps(target: Path) -> None:
    prefix = f".{target.name}."
    try:
        entries = list(target.parent.iterdir()) if str(target.parent) else list(Path(".").iterdir())
    except OSError:
        return
    for entry in entries:
        name = entry.name
        if not (name.startswith(prefix) and name.endswith(TMP_TAG)):
            continue
        pid_text = name[len(prefix):-len(TMP_TAG)].split(".")[0]
        if pid_text.isdigit() and not pid_alive(int(pid_text)):
            try:
                entry.unlink()
            except OSError:
                pass


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` may still be running (true when that cannot be told), so that
    only temporary files of a writer known to be gone are removed.

    Examples
    --------
    >>> import os
    >>> pid_alive(os.getpid())
    True
    """
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def current_umask() -> int:
    """The process's file-creation mask (read without changing it), so files written by
    rename get the permissions ``open`` would give them (``0o666 & ~current_umask()``).

    Examples
    --------
    >>> 0 <= current_umask() <= 0o777
    True
    """
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write(files: Mapping[Path, Callable[[Path], None]]) -> None:
    """Write several files all-or-nothing: each to a temporary file beside it, then rename.

    ``files`` maps a target path to a function that writes the content to a given temporary
    path. Nothing is renamed before every temporary file is complete, so a failure leaves the
    old files (and no temporary ones); files get the user's umask, as ``open`` would give
    them. Temporary files left by a killed earlier run are removed.
    """
    mode = 0o666 & ~current_umask()
    done: list[tuple[Path, Path]] = []
    try:
        for target, write in files.items():
            target = Path(target)
            _remove_stale_temps(target)
            tmp = _temp_name(target)
            done.append((tmp, target))
            try:
                write(tmp)
                os.chmod(tmp, mode)
            except OSError as exc:  # name the user's file, not our temporary one
                raise _about(exc, target) from None
        for tmp, target in done:
            try:
                os.replace(tmp, target)
            except OSError as exc:
                raise _about(exc, target) from None
    except BaseException:
        for tmp, _ in done:
            if os.path.exists(tmp):
                os.unlink(tmp)
        raise


def _about(exc: OSError, target: Path) -> OSError:
    """The same error (errno and reason) reported against ``target``."""
    if exc.errno is None:
        return exc
    return OSError(exc.errno, exc.strerror or os.strerror(exc.errno), str(target))
