"""Writing a board folder safely: locked, built aside, swapped in whole, never through links.

* **Lock**: ``<parent>/.<name>.lock`` is held (``flock``) while a board is written; a second
  writer into the same folder fails at once with a clear error instead of interleaving
  files (the kernel drops the lock if the holder dies, so a killed build never blocks).
* **Whole swap**: the new board is written into a temporary sibling folder; only when every
  file is complete does it replace the old folder (two renames: the old folder to
  ``.<name>.<pid>.<random>.old.scorebench.tmp``, then the new one into place), so a full disk
  or a crash leaves the old board intact, never a new README.md beside an old index.html.
* **Recovery**: a process killed (``kill -9``, power loss) between the two renames leaves no
  board folder but the ``.old`` one; the next build of that board, or ``--check``
  (:func:`recover_board`), moves it back into place before anything else.
* **Foreign folders**: an existing non-empty folder without a manifest was not made by
  scorebench; it is refused unless ``overwrite_foreign=True`` (``--overwrite-foreign``).
* **No links**: the board folder, ``plots/`` and every output file must not be symbolic
  links; a link is refused, so nothing is written or deleted outside the output folder.
* **Manifest**: ``.scorebench-manifest.json`` lists the files the builder wrote; files of the
  old folder that it does not list (a user's own notes) are carried over into the new one,
  while listed ones that the new board no longer has (stale plots) are dropped. A folder
  without a manifest (written over only when asked) is treated as ours only for the fixed
  output names and ``plots/*.svg``.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
from pathlib import Path

from scorebench.core.errors import InputError

__all__ = ["write_board_files", "recover_board", "MANIFEST", "BoardLockedError"]

MANIFEST = ".scorebench-manifest.json"
_TMP_TAG = ".scorebench.tmp"
_FIXED = ("README.md", "index.html", "board.csv", "board.json")


class BoardLockedError(InputError):
    """Another process is writing the same board folder."""


def _refuse_links(out_dir: Path, rels: list[str]) -> None:
    """Raise if the board folder, ``plots/`` or an output file is a symbolic link."""
    candidates = [out_dir, out_dir / "plots"] + [out_dir / rel for rel in rels]
    for path in candidates:
        if os.path.islink(path):
            raise InputError(f"{path}: is a symbolic link; refusing to write a board through it "
                             "(remove the link or choose another --out)")


class _Lock:
    """An exclusive, non-blocking ``flock`` on ``<parent>/.<name>.lock``."""

    def __init__(self, out_dir: Path) -> None:
        self.path = out_dir.parent / f".{out_dir.name}.lock"
        self.fd: int | None = None

    def __enter__(self) -> "_Lock":
        try:
            import fcntl
        except ImportError:  # no flock on this platform: write without a lock
            return self
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
        self.fd = os.open(self.path, flags, 0o666)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            # The file may have been removed and re-created by a finishing writer: only the
            # lock on the file that the path names now counts.
            if os.fstat(self.fd).st_ino != os.stat(self.path).st_ino:
                raise BlockingIOError(errno.EAGAIN, "lock file replaced")
        except (BlockingIOError, FileNotFoundError):
            os.close(self.fd)
            self.fd = None
            raise BoardLockedError(f"{self.path.parent / self.path.name[1:-5]}: another `leaderboard build` is "
                                   f"writing this board now (lock {self.path}); wait for it to finish") from None
        return self

    def __exit__(self, *exc) -> None:
        if self.fd is not None:
            try:
                os.unlink(self.path)
            except OSError:
                pass
            os.close(self.fd)
            self.fd = None


def _owned(old_dir: Path) -> set[str]:
    """Relative paths in ``old_dir`` that an earlier build wrote (from its manifest)."""
    manifest = old_dir / MANIFEST
    if manifest.is_file() and not manifest.is_symlink():
        try:
            listed = json.loads(manifest.read_text(encoding="utf-8")).get("files", [])
            return {str(f) for f in listed if isinstance(f, str)}
        except (ValueError, AttributeError, UnicodeDecodeError):
            pass
    owned = {f for f in _FIXED if (old_dir / f).is_file()}
    plots = old_dir / "plots"
    if plots.is_dir() and not plots.is_symlink():
        owned |= {f"plots/{p.name}" for p in plots.glob("*.svg") if p.is_file() and not p.is_symlink()}
    return owned


def _carry_over(old_dir: Path, new_dir: Path, owned: set[str], written: set[str]) -> None:
    """Link (or copy) files the builder did not write from the old folder into the new one."""
    for entry in sorted(old_dir.rglob("*")):
        rel = entry.relative_to(old_dir).as_posix()
        if rel == MANIFEST or rel in owned or rel in written or entry.is_dir() and not entry.is_symlink():
            continue
        if any(rel.startswith(parent + "/") for parent in written | owned):
            continue
        target = new_dir / rel
        if target.exists() or os.path.islink(target):
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        try:  # a second link, not a move: if the swap fails, the old folder is still whole
            os.link(entry, target, follow_symlinks=False)
        except OSError:
            shutil.copy2(entry, target, follow_symlinks=False)


def _remove_stale(parent: Path, name: str) -> None:
    """Temporary folders of a killed earlier build of this board (their pid is gone).

    Called under the lock. When the board folder itself is missing and a killed build left
    its ``.old`` folder (killed between the two renames of the swap), the newest such folder
    is the last complete board: it is moved back into place before the litter is removed.
    """
    from scorebench.io.atomic import pid_alive

    prefix = f".{name}."
    stale = []
    for entry in parent.iterdir() if parent.is_dir() else ():
        n = entry.name
        if n.startswith(prefix) and n.endswith(_TMP_TAG) and entry.is_dir() and not entry.is_symlink():
            pid = n[len(prefix):].split(".")[0]
            if pid.isdigit() and not pid_alive(int(pid)):
                stale.append(entry)
    out_dir = parent / name
    olds = sorted((e for e in stale if e.name.endswith(".old" + _TMP_TAG)), key=lambda e: e.stat().st_mtime_ns)
    if olds and not os.path.lexists(out_dir):
        os.replace(olds[-1], out_dir)
        _sync_folder(parent)
        stale.remove(olds[-1])
    for entry in stale:
        shutil.rmtree(entry, ignore_errors=True)


def _sync_folder(folder: Path) -> None:
    """Make renames inside ``folder`` durable (fsync of the directory; a no-op where unsupported)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def recover_board(out_dir: str | Path) -> bool:
    """Put back a board folder that a killed build left moved aside; True when one was restored.

    ``scorebench leaderboard build --check`` calls this before comparing, and every write
    does it first, so a ``kill -9`` between the swap's two renames never loses a board.
    """
    out_dir = Path(out_dir)
    if os.path.lexists(out_dir) or not out_dir.parent.is_dir():
        return False
    with _Lock(out_dir):
        _remove_stale(out_dir.parent, out_dir.name)
    return out_dir.is_dir()


def _check_ours(out_dir: Path) -> None:
    """Refuse a non-empty existing folder that has no manifest (scorebench did not make it)."""
    manifest = out_dir / MANIFEST
    if out_dir.is_dir() and not (manifest.is_file() and not manifest.is_symlink()) and any(out_dir.iterdir()):
        raise InputError(f"{out_dir}: exists, is not empty and was not written by scorebench (no {MANIFEST}); "
                         "refusing to replace its files (choose another --out, or pass --overwrite-foreign / "
                         "overwrite_foreign=True)")


def write_board_files(files: dict[str, bytes], out_dir: str | Path, *, overwrite_foreign: bool = False) -> list[Path]:
    """Write ``files`` (relative path -> bytes) as the board folder ``out_dir``, all or nothing.

    Returns the written paths. Raises :class:`~scorebench.core.errors.InputError` for a symbolic
    link on the way, for an existing non-empty folder without a manifest (unless
    ``overwrite_foreign``), and :class:`BoardLockedError` when another build holds the folder.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "board"
    >>> [p.name for p in write_board_files({"README.md": b"# x\\n", "plots/a.svg": b"<svg/>"}, out)]
    ['README.md', 'a.svg']
    >>> sorted(p.name for p in out.rglob("*"))
    ['.scorebench-manifest.json', 'README.md', 'a.svg', 'plots']
    """
    from scorebench.io.atomic import current_umask

    out_dir = Path(out_dir)
    rels = sorted(files)
    for rel in rels:
        if rel.startswith("/") or ".." in Path(rel).parts:
            raise InputError(f"board file {rel!r}: expected a path inside the board folder")
    _refuse_links(out_dir, rels)
    parent = out_dir.parent
    parent.mkdir(parents=True, exist_ok=True)
    if os.path.islink(parent) and not parent.resolve().is_dir():
        raise InputError(f"{parent}: is a dangling symbolic link")
    file_mode, dir_mode = 0o666 & ~current_umask(), 0o777 & ~current_umask()
    with _Lock(out_dir):
        _remove_stale(parent, out_dir.name)
        _refuse_links(out_dir, rels)  # again, under the lock
        if out_dir.exists() and not out_dir.is_dir():
            raise InputError(f"{out_dir}: exists and is not a folder")
        if not overwrite_foreign:
            _check_ours(out_dir)
        tmp = parent / f".{out_dir.name}.{os.getpid()}.{os.urandom(4).hex()}{_TMP_TAG}"
        old = parent / f".{out_dir.name}.{os.getpid()}.{os.urandom(4).hex()}.old{_TMP_TAG}"
        try:
            tmp.mkdir()
            for rel in rels:
                target = tmp / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                with open(target, "wb") as handle:
                    handle.write(files[rel])
                    handle.flush()
                    os.fsync(handle.fileno())
                os.chmod(target, file_mode)
            (tmp / MANIFEST).write_text(json.dumps({"files": rels}, indent=1) + "\n", encoding="utf-8")
            os.chmod(tmp / MANIFEST, file_mode)
            for folder in [tmp, *(p for p in tmp.rglob("*") if p.is_dir())]:
                os.chmod(folder, dir_mode)
            if out_dir.is_dir():
                _carry_over(out_dir, tmp, _owned(out_dir), set(rels))
                os.replace(out_dir, old)
            os.replace(tmp, out_dir)
            _sync_folder(parent)
        except BaseException:
            if old.exists() and not out_dir.exists():
                os.replace(old, out_dir)  # put the old board back
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        shutil.rmtree(old, ignore_errors=True)
    return [out_dir / rel for rel in rels]
