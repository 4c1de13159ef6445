"""Writing outputs so that nothing a user owns is lost: the one safe writer of fortekit.

Every command and API that writes (results, sidecars, indexes, caches, generated
collections) goes through this module, which guarantees:

* **Atomic files.** :func:`atomic_write` writes a temporary file beside the target, forces
  it to disk, then renames it over the target: a reader sees the old file or the new one,
  never half of one. A write that fails (a full disk, ``ulimit -f``, no permission) raises
  :class:`~fortekit.errors.OutputWriteError` (E743) naming the file, removes the temporary
  file and leaves the old target as it was.
* **One rule for every output path** (:func:`check_output_target`). A FIFO or a character
  device (``/dev/null``, a terminal) is written in place and never renamed over; a folder where
  a file is needed is refused (E745), and so is anything else that is not a regular file (a
  socket, a block device: E748); an existing file is replaced only with ``overwrite`` (E746,
  or E749 for an output that could have been resumed); a missing one must be creatable (E743
  before any work, naming the read-only folder). :func:`atomic_write` and :class:`AtomicFile`
  apply it to every write, and the command line applies it to every output option before a
  command starts (``fortekit.search.cli.common.check_output_options``).
* **No links followed.** A target that is a symbolic link is refused (E741): a planted
  ``out.jsonl.settings.json -> ~/.bashrc`` never redirects a write.
* **No output is an input.** :func:`check_not_input` compares device and inode (so hard
  links, symlinks and ``./`` spellings are caught) and refuses an output that is an input,
  lies inside an input folder, or is a folder that holds an input (E740).
* **Only our own folders are replaced.** Every folder fortekit creates holds the marker
  file :data:`MARKER_FILE`; :func:`replace_directory` and :func:`remove_output_directory`
  delete only a folder that holds it (E744).
* **One writer per output.** :class:`OutputLock` takes an exclusive, non-blocking lock
  (``flock``) on ``.NAME.lock`` beside the output for the run's duration; a second run gets
  E742 with the holder's pid. The kernel drops the lock when its process dies, so a killed
  run never leaves a stale lock.

This module is part of the logic core: it imports neither torch nor the rest of fortekit
except its messages.

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = atomic_write_text(folder / "out.txt", "rain\\n")
    >>> (folder / "out.txt").read_text(), sorted(p.name for p in folder.iterdir())
    ('rain\\n', ['out.txt'])
"""

from __future__ import annotations

import enum
import errno
import functools
import glob
import io
import json
import os
import shutil
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, TextIO

from fortekit.errors import (
    Errors,
    OutputError,
    OutputLockedError,
    OutputWriteError,
)

__all__ = [
    "MARKER_FILE",
    "AtomicFile",
    "OutputLock",
    "OutputTarget",
    "adopt_directory",
    "atomic_write",
    "atomic_write_bytes",
    "atomic_write_text",
    "check_no_foreign_files",
    "check_not_input",
    "check_not_symlink",
    "check_output_target",
    "create_output_directory",
    "exchange_paths",
    "is_fortekit_directory",
    "output_lock",
    "remove_output_directory",
    "remove_stale_temporaries",
    "replace_directory",
    "same_file",
    "write_error",
]

MARKER_FILE = ".fortekit-output"
"""The file in every folder fortekit creates; only such folders are ever replaced or deleted."""

_PATH = str | os.PathLike[str]

_FIXES: dict[int, str] = {
    errno.ENOSPC: "The disk is full: free some space or write to another disk.",
    errno.EDQUOT: "The disk quota is used up: free some space or write elsewhere.",
    errno.EFBIG: "The file size limit was reached (`ulimit -f`, or the file system's limit): raise it "
    "or write to another disk.",
    errno.EACCES: "Permission denied: choose a folder you can write to (or `chmod u+w` it).",
    errno.EPERM: "The operation is not permitted here: choose a folder you can write to.",
    errno.EROFS: "The file system is read-only: choose another place.",
    errno.ENOENT: "Its folder does not exist (or was removed while writing): create it or choose another.",
    errno.ENOTDIR: "A part of the path is a file, not a folder: choose another path.",
    errno.EISDIR: "The path is a folder: name a file.",
    errno.ENAMETOOLONG: "The path is too long: choose a shorter one.",
}


def write_error(path: _PATH, exc: OSError) -> OutputWriteError:
    """The coded error for a failed write of ``path``: the cause (full disk, size limit, ...) and the fix.

    Args:
        path: the file (or folder) that was being written.
        exc: the operating system's error.

    Returns:
        An :class:`~fortekit.errors.OutputWriteError` (E743), with the original ``errno``.

    Example:
        >>> str(write_error("out.jsonl", OSError(errno.ENOSPC, "No space left on device")))[:69]
        '[E743] Cannot write out.jsonl: No space left on device. The disk is f'
    """
    problem = exc.strerror or str(exc) or type(exc).__name__
    fix = _FIXES.get(exc.errno or 0, "Check the path and the disk, then run again.")
    error = OutputWriteError(
        Errors.E743.format(path=path, problem=problem, fix=fix, path_name=Path(path).name)
    )
    error.errno = exc.errno
    error.filename = str(path)
    return error


def same_file(first: _PATH, second: _PATH) -> bool:
    """Whether two paths name one file: the same device and inode (a hard link, a symlink, ``./``).

    Example:
        >>> import pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> (folder / "q.txt").write_text("rain\\n")
        5
        >>> os.link(folder / "q.txt", folder / "link.jsonl")
        >>> same_file(folder / "link.jsonl", folder / "q.txt"), same_file(folder / "new", folder / "q.txt")
        (True, False)
    """
    try:
        return os.path.samefile(Path(first).expanduser(), Path(second).expanduser())
    except (OSError, ValueError):  # one of them does not exist (or is not a path the system takes)
        return False


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except (OSError, ValueError):
        return None
    return info.st_dev, info.st_ino


def _ancestors(path: Path) -> Iterator[Path]:
    """``path`` and every folder above it, resolved (links followed) where they exist."""
    try:
        resolved = path.expanduser().resolve(strict=False)
    except (OSError, RuntimeError):  # a symlink loop
        resolved = path.expanduser().absolute()
    yield resolved
    yield from resolved.parents


def check_not_input(
    output: _PATH, inputs: Mapping[str, _PATH | None] | Iterable[tuple[str, _PATH | None]]
) -> None:
    """Refuse an output that is an input, lies inside an input folder, or is a folder holding an input.

    Files are compared by device and inode, so a hard link, a symlink or another spelling
    of the same path is caught; a path that does not exist yet is compared by its resolved
    location.

    Args:
        output: the file or folder about to be written.
        inputs: what the run reads, as ``{what: path}`` or ``(what, path)`` pairs (``what``
            names it in the message: "corpus", "query file", ...); None entries are skipped.

    Raises:
        OutputError: E740, naming the input and how the two are related.

    Example:
        >>> folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / "corpus.jsonl").write_text("{}\\n")
        >>> check_not_input(folder / "out.jsonl", {"corpus": folder / "corpus.jsonl"})
        >>> check_not_input(folder / "corpus.jsonl", {"corpus": folder / "corpus.jsonl"})
        Traceback (most recent call last):
        ...
        fortekit.errors.OutputError: [E740] The output ... is the same file as the corpus ...: ...
    """
    out = Path(output)
    pairs = inputs.items() if isinstance(inputs, Mapping) else inputs
    out_id = _identity(out)
    out_chain = list(_ancestors(out))
    out_ids = {_identity(folder) for folder in out_chain[1:]} - {None}
    for what, given in pairs:
        if given is None:
            continue
        source = Path(given)
        source_id = _identity(source)
        relation = None
        if source_id is not None and source_id == out_id:
            relation = "the same file as" if source.is_file() else "the same folder as"
        elif source_id is not None and source.is_dir() and source_id in out_ids:
            relation = "inside"
        elif out_id is not None and out.is_dir() and out_id in {
            _identity(folder) for folder in list(_ancestors(source))[1:]
        }:
            relation = "a folder that holds"
        elif out_id is None and source_id is None and out_chain[0] == next(_ancestors(source)):
            relation = "the same path as"
        if relation is not None:
            raise OutputError(Errors.E740.format(output=out, relation=relation, what=what, path=source))


def check_not_symlink(path: _PATH) -> None:
    """Refuse a target that is a symbolic link (E741); nothing is written through links.

    Example:
        >>> folder = Path(tempfile.mkdtemp())
        >>> (folder / "out.json").symlink_to(folder / "elsewhere")
        >>> check_not_symlink(folder / "out.json")
        Traceback (most recent call last):
        ...
        fortekit.errors.OutputError: [E741] ... is a symbolic link (to ...). ...
    """
    target = Path(path)
    if target.is_symlink():
        try:
            pointed: str = os.readlink(target)
        except OSError:
            pointed = "?"
        raise OutputError(Errors.E741.format(path=target, target=pointed))


# --- the one rule for every output path ---------------------------------------------------------
class OutputTarget(enum.Enum):
    """What an output path is now, which decides how it is written (:func:`check_output_target`)."""

    NEW = "new"
    """Nothing is there: a file is created atomically, a folder made."""
    FILE = "file"
    """An existing regular file: replaced atomically (with ``overwrite``) or resumed by its command."""
    STREAM = "stream"
    """A FIFO or a character device (``/dev/null``, a terminal): written in place, never renamed over."""
    FOLDER = "folder"
    """An existing folder, where a folder is the output: its command decides what it may replace."""


_NOT_REGULAR = (
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISBLK, "a block device (a disk)"),
    (stat.S_ISFIFO, "a FIFO (a named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISREG, "a file"),
)


def _kind_of(mode: int) -> str:
    """What a file of this mode is, in words ("a socket", "a block device (a disk)", ...)."""
    return next((name for test, name in _NOT_REGULAR if test(mode)), "a special file")


def _refuse_unwritable(path: Path, exc_path: Path | None = None) -> None:
    """E743 now, before any work, where ``path`` (a folder or a device) may not be written."""
    if os.access(path, os.W_OK | (os.X_OK if path.is_dir() else 0)):
        return
    code = errno.EACCES
    with suppress(OSError):  # statvfs not supported here: the plainer message stands
        if os.statvfs(path).f_flag & os.ST_RDONLY:
            code = errno.EROFS
    raise write_error(exc_path or path, OSError(code, os.strerror(code), str(path)))


def _check_creatable(target: Path) -> None:
    """A path that does not exist: its nearest existing folder must be a folder we may write (E743)."""
    for folder in target.absolute().parents:
        try:
            info = folder.stat()  # a linked folder above the output is the user's layout: followed
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise write_error(target, exc) from exc
        if not stat.S_ISDIR(info.st_mode):
            raise write_error(target, OSError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(folder)))
        _refuse_unwritable(folder, target)
        return


def check_output_target(
    path: _PATH,
    *,
    overwrite: bool = False,
    kind: Literal["file", "folder"] = "file",
    resumable: bool = False,
    whole_file: str | None = None,
    links: bool = False,
) -> OutputTarget:
    """The one rule for every output path: what ``path`` is, or a coded error before anything is written.

    For a file output: a FIFO or a character device is written in place and never renamed over
    (STREAM); an existing regular file is replaced only with ``overwrite`` (or resumed by a
    command that says so, ``resumable``); a folder (E745), a socket, a block device or any other
    special file (E748) is refused. For a folder output: an existing folder is its command's to
    judge (FOLDER); anything else that exists is refused (E745). A link is refused (E741), save
    with ``links`` a link to a FIFO or a character device (``/dev/stdout``). The folder a new
    output goes into, or an existing folder output, must be writable (E743 names it; a user who
    may write anywhere, such as root, may write there too).

    Args:
        path: the output the user named.
        overwrite: an existing regular file may be replaced (``--overwrite``).
        kind: ``"file"`` or ``"folder"``: what the command writes at ``path``.
        resumable: an existing regular file is resumed by the command, which checks it (E662).
        whole_file: why an existing file of a command that resumes others is written whole
            (``"--format trec writes a whole TREC run file"``): E749 instead of E746.
        links: take a link to a FIFO or a character device (the user's own ``-o /dev/stdout``);
            never for a file the run names itself (a sidecar).

    Returns:
        The :class:`OutputTarget`.

    Raises:
        OutputError: a link (E741), the wrong kind (E745), not a regular file (E748), an existing
            file without ``overwrite`` (E746, E749).
        OutputWriteError: its folder (or the device) may not be written, or a part of the path
            is a file (E743).

    Example:
        >>> folder = Path(tempfile.mkdtemp())
        >>> check_output_target(folder / "new.trec"), check_output_target(os.devnull)
        (<OutputTarget.NEW: 'new'>, <OutputTarget.STREAM: 'stream'>)
        >>> _ = (folder / "notes.txt").write_text("mine")
        >>> check_output_target(folder / "notes.txt")
        Traceback (most recent call last):
        ...
        fortekit.errors.OutputError: [E746] ...notes.txt already exists. Pass --overwrite ...
        >>> check_output_target(folder / "notes.txt", overwrite=True)
        <OutputTarget.FILE: 'file'>
        >>> check_output_target(folder, kind="folder")
        <OutputTarget.FOLDER: 'folder'>
    """
    target = Path(path)
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        _check_creatable(target)
        return OutputTarget.NEW
    except OSError as exc:  # a part of the path is a file, the name is too long, no permission
        raise write_error(target, exc) from exc
    if stat.S_ISLNK(mode):
        try:
            followed = os.stat(target).st_mode
        except OSError:
            followed = 0  # a dangling link or a loop
        if not (links and kind == "file" and (stat.S_ISFIFO(followed) or stat.S_ISCHR(followed))):
            check_not_symlink(target)
        mode = followed  # /dev/stdout, a link to a pipe or a terminal: written in place
    wanted = "a file" if kind == "file" else "a folder"
    if stat.S_ISDIR(mode):
        if kind == "file":
            raise OutputError(Errors.E745.format(path=target, kind="a folder", what=wanted))
        _refuse_unwritable(target)
        return OutputTarget.FOLDER
    if kind == "folder":
        raise OutputError(Errors.E745.format(path=target, kind=_kind_of(mode), what=wanted))
    if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode):
        _refuse_unwritable(target)
        return OutputTarget.STREAM
    if not stat.S_ISREG(mode):
        raise OutputError(Errors.E748.format(path=target, kind=_kind_of(mode)))
    if not overwrite and not resumable:
        if whole_file:
            raise OutputError(Errors.E749.format(path=target, why=whole_file))
        raise OutputError(Errors.E746.format(path=target))
    _refuse_unwritable(target.absolute().parent, target)  # replaced by a rename beside it
    return OutputTarget.FILE


def remove_stale_temporaries(path: _PATH) -> list[Path]:
    """Remove the temporary files a killed earlier write of ``path`` left (``.NAME.XXXX.tmp``).

    Only while holding the output's :class:`OutputLock`: a temporary file of a write in flight
    would be removed too. A link or a folder of that name is left alone.

    Returns:
        The files removed.

    Example:
        >>> folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / ".run.trec.x1y2z3w4.tmp").write_text("q1 Q0 d")
        >>> [p.name for p in remove_stale_temporaries(folder / "run.trec")], sorted(folder.iterdir())
        (['.run.trec.x1y2z3w4.tmp'], [])
    """
    target = Path(path)
    removed: list[Path] = []
    with suppress(OSError):  # mkstemp's 8 random characters: not the temporary file of OUT.settings.json
        for stale in target.parent.glob(f".{glob.escape(target.name)}.{'?' * 8}.tmp"):
            if stale.is_file() and not stale.is_symlink():
                stale.unlink(missing_ok=True)
                removed.append(stale)
    return removed


def _fsync_directory(folder: Path) -> None:
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:  # not supported on this platform or file system: the rename is still atomic
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


def _fsync_path(path: Path) -> None:
    if path.is_file():
        with path.open("rb+") as handle:
            os.fsync(handle.fileno())


def atomic_write(path: _PATH, write: Callable[[Path], Any], *, overwrite: bool = True) -> Path:
    """Write ``path`` through ``write(temporary_path)``, then rename it into place.

    The temporary file is a fresh, uniquely named file beside the target (same folder, so
    the rename is atomic), forced to disk before the rename; the folder is forced after it.
    A target that is a FIFO or a character device (``/dev/null``) is written in place instead,
    never renamed over (:func:`check_output_target`, the one rule for every output path).

    Args:
        path: the target file.
        write: a callable that writes the whole file at the path it is given.
        overwrite: replace an existing target (default True; False refuses with E746).

    Returns:
        ``path``, as a Path.

    Raises:
        OutputError: the target is a symbolic link (E741), a folder (E745), another special
            file (E748), or exists and ``overwrite`` is False (E746).
        OutputWriteError: the write failed (E743); the old target is unchanged and the
            temporary file removed.

    Example:
        >>> folder = Path(tempfile.mkdtemp())
        >>> _ = atomic_write(folder / "a.bin", lambda p: p.write_bytes(b"x"))
        >>> (folder / "a.bin").read_bytes()
        b'x'
        >>> atomic_write(os.devnull, lambda p: p.write_bytes(b"x")), Path(os.devnull).is_char_device()
        (PosixPath('/dev/null'), True)
    """
    target = Path(path)
    if check_output_target(target, overwrite=overwrite) is OutputTarget.STREAM:
        try:  # a pipe or a device keeps nothing to lose, and renaming over it would replace it
            write(target)
        except OSError as exc:
            raise write_error(target, exc) from exc
        return target
    folder = target.parent
    try:
        descriptor, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise write_error(target, exc) from exc
    os.close(descriptor)
    temporary = Path(name)
    try:
        write(temporary)
        _commit(temporary, target)
    except OSError as exc:
        raise write_error(target, exc) from exc
    finally:
        temporary.unlink(missing_ok=True)
    _fsync_directory(folder)
    return target


def _commit(temporary: Path, target: Path) -> None:
    """Give the temporary file the target's mode, force it to disk and rename it over the target."""
    # mkstemp makes the file 0o600; the target keeps its own mode, a new one gets what
    # open() would give it (0o666 less the umask), so a shared folder stays readable.
    os.chmod(temporary, stat.S_IMODE(target.stat().st_mode) if target.exists() else _new_file_mode())
    _fsync_path(temporary)
    if target.is_dir() or target.is_symlink():  # made while we wrote: never replaced (E745, E741)
        check_not_symlink(target)
        raise OutputError(Errors.E745.format(path=target, kind="a folder", what="a file"))
    os.replace(temporary, target)


class _OutputHandle(io.TextIOWrapper):
    """A text handle that knows the output it stands for (``output_name``), for messages."""

    def __init__(self, raw: Any, output: Path, **options: Any) -> None:
        super().__init__(raw, **options)
        self.output_name = str(output)


class AtomicFile:
    """A text output written through a handle: into a temporary file beside it, renamed in by :meth:`commit`.

    For a streamed output that must be old or new, never half (``fortekit search --format trec
    -o FILE``): a run that is killed, interrupted or fails before :meth:`commit` leaves the old
    file as it was (:meth:`discard`, or the context manager, removes the temporary file; one a
    SIGKILL left is removed by :func:`remove_stale_temporaries` under the output's lock). A FIFO
    or a character device is written in place, as :func:`atomic_write` does.

    Args:
        path: the output.
        overwrite: an existing regular file may be replaced (else E746).
        links: take a link to a FIFO or a character device (the user's ``-o /dev/stdout``).
        encoding: the text encoding.

    Raises:
        OutputError, OutputWriteError: as :func:`check_output_target`; E743 when the temporary
            file cannot be made.

    Example:
        >>> target = Path(tempfile.mkdtemp()) / "run.trec"
        >>> with AtomicFile(target) as output:
        ...     _ = output.handle.write("q1 Q0 d1 1 0.5 fortekit\\n")
        ...     target.exists()
        ...     _ = output.commit()
        False
        >>> target.read_text()
        'q1 Q0 d1 1 0.5 fortekit\\n'
    """

    def __init__(self, path: _PATH, *, overwrite: bool = False, links: bool = False,
                 encoding: str = "utf-8") -> None:
        self.path = Path(path)
        self.target = check_output_target(self.path, overwrite=overwrite, links=links)
        self.temporary: Path | None = None
        self._done = False
        try:
            if self.target is OutputTarget.STREAM:
                raw = self.path.open("wb")
            else:
                descriptor, name = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp",
                                                    dir=self.path.parent)
                self.temporary = Path(name)
                raw = os.fdopen(descriptor, "wb")
        except OSError as exc:
            raise write_error(self.path, exc) from exc
        self.handle: TextIO = _OutputHandle(raw, self.path, encoding=encoding, newline="")

    def commit(self) -> Path:
        """Flush, force to disk and rename the file into place (a stream is flushed); once.

        Raises:
            OutputWriteError: the last write or the rename failed (E743): the old file stands.
        """
        if self._done:
            return self.path
        self._done = True
        try:
            self.handle.flush()
            if self.temporary is not None:
                os.fsync(self.handle.fileno())
            self.handle.close()
            if self.temporary is not None:
                _commit(self.temporary, self.path)
                _fsync_directory(self.path.parent)
        except OSError as exc:
            self._cleanup()
            raise write_error(self.path, exc) from exc
        except BaseException:
            self._cleanup()
            raise
        return self.path

    def discard(self) -> None:
        """Leave the output as it was: close and remove the temporary file (idempotent)."""
        if not self._done:
            self._done = True
            self._cleanup()

    def _cleanup(self) -> None:
        with suppress(OSError):
            self.handle.close()
        if self.temporary is not None:
            with suppress(OSError):
                self.temporary.unlink(missing_ok=True)

    def __enter__(self) -> AtomicFile:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.discard()  # not committed inside the block: the old output stands


def _new_file_mode() -> int:
    """The mode ``open()`` gives a new file: 0o666 less the process's umask.

    Read from /proc on Linux (setting the umask to read it is not thread-safe), else set and
    restored at once.

    Example:
        >>> _new_file_mode() & 0o600
        384
    """
    try:
        for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
            if line.startswith("Umask:"):
                return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def atomic_write_bytes(path: _PATH, data: bytes, *, overwrite: bool = True) -> Path:
    """:func:`atomic_write` of ``data``.

    Example:
        >>> path = Path(tempfile.mkdtemp()) / "b.bin"
        >>> atomic_write_bytes(path, b"\\x00").read_bytes()
        b'\\x00'
    """
    return atomic_write(path, lambda temporary: temporary.write_bytes(data), overwrite=overwrite)


def atomic_write_text(path: _PATH, text: str, *, overwrite: bool = True) -> Path:
    """:func:`atomic_write` of ``text`` as UTF-8.

    Example:
        >>> path = Path(tempfile.mkdtemp()) / "settings.json"
        >>> atomic_write_text(path, json.dumps({"k": 1})).read_text()
        '{"k": 1}'
    """
    return atomic_write(
        path, lambda temporary: temporary.write_text(text, encoding="utf-8"), overwrite=overwrite
    )


_RENAME_EXCHANGE = 2  # linux/fs.h
_AT_FDCWD = -100


@functools.cache
def _renameat2() -> Any:
    """glibc's ``renameat2`` (Linux 3.15+, glibc 2.28+), or None."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        function = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    function.restype = ctypes.c_int
    return function


def exchange_paths(first: _PATH, second: _PATH) -> bool:
    """Swap two existing paths in one atomic step (``renameat2(RENAME_EXCHANGE)``).

    Returns False where the platform or file system cannot (the caller then renames twice);
    raises the OSError of any other failure.

    Example:
        >>> root = Path(tempfile.mkdtemp())
        >>> _ = (root / "a").write_text("A"); _ = (root / "b").write_text("B")
        >>> swapped = exchange_paths(root / "a", root / "b")
        >>> (root / "a").read_text() == ("B" if swapped else "A")
        True
    """
    import ctypes

    function = _renameat2()
    if function is None:
        return False
    if function(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), os.fspath(second))


# --- folders: the marker ------------------------------------------------------------------------
def is_fortekit_directory(path: _PATH) -> bool:
    """Whether ``path`` is a folder that fortekit created (it holds the marker file, not as a link).

    Example:
        >>> folder = Path(tempfile.mkdtemp())
        >>> is_fortekit_directory(folder), is_fortekit_directory(create_output_directory(folder / "run"))
        (False, True)
    """
    folder = Path(path)
    marker = folder / MARKER_FILE
    return folder.is_dir() and not folder.is_symlink() and marker.is_file() and not marker.is_symlink()


def _write_marker(folder: Path) -> None:
    _write_marker_file(folder / MARKER_FILE)


def adopt_directory(path: _PATH) -> Path:
    """Mark an existing folder as fortekit's: one a caller recognised as an older fortekit's output.

    Only for folders a caller has checked holds nothing but fortekit's own files (an index,
    a generated collection or an evaluation run from before folders were marked): once
    marked, ``--overwrite`` may replace it.

    Raises:
        OutputError: the folder is a link (E741).
        OutputWriteError: the marker cannot be written (E743).

    Example:
        >>> folder = Path(tempfile.mkdtemp())
        >>> is_fortekit_directory(adopt_directory(folder))
        True
    """
    folder = Path(path)
    check_not_symlink(folder)
    atomic_write(folder / MARKER_FILE, _write_marker_file)
    return folder


def _write_marker_file(target: Path) -> None:
    target.write_text(
        json.dumps({"created_by": "fortekit", "note": "fortekit may replace this folder"}) + "\n",
        encoding="utf-8",
    )


def create_output_directory(path: _PATH) -> Path:
    """Create an output folder (with its parents) and mark it as fortekit's.

    A folder that already exists is marked only if it is empty: a folder of the user's is
    written into (the files fortekit writes, atomically) but never becomes deletable.

    Raises:
        OutputError: the path is a file or a symbolic link (E745, E741).
        OutputWriteError: it cannot be created (E743).

    Example:
        >>> folder = create_output_directory(Path(tempfile.mkdtemp()) / "a" / "b")
        >>> sorted(p.name for p in folder.iterdir())
        ['.fortekit-output']
    """
    folder = Path(path)
    check_not_symlink(folder)
    if folder.exists() and not folder.is_dir():
        raise OutputError(Errors.E745.format(path=folder, kind="a file", what="a folder"))
    try:
        existed = folder.is_dir()
        folder.mkdir(parents=True, exist_ok=True)
        if not existed or not any(folder.iterdir()):
            _write_marker(folder)
    except OSError as exc:
        raise write_error(folder, exc) from exc
    return folder


def _describe_contents(folder: Path) -> str:
    try:
        names = sorted(p.name for p in folder.iterdir())
    except OSError:
        return ""
    if not names:
        return ""
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    return f" ({shown})"


def check_no_foreign_files(path: _PATH, names: Iterable[str]) -> None:
    """Refuse (E747) a folder of the user's that already holds a file this run writes.

    A folder fortekit created (it holds the marker) may be written again; a folder of the
    user's may be written into only where no file of the same name is there, since the
    safe writer replaces a file whole.

    Args:
        path: the output folder (it need not exist).
        names: the file and folder names the run writes directly inside it.

    Raises:
        OutputError: E747, naming the files that would be replaced.

    Example:
        >>> folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / "result.json").write_text("{}")
        >>> check_no_foreign_files(folder, ["model.json"])
        >>> check_no_foreign_files(folder, ["model.json", "result.json"])
        Traceback (most recent call last):
        ...
        fortekit.errors.OutputError: [E747] The folder ... already holds result.json, which ...
    """
    folder = Path(path)
    if not folder.is_dir() or is_fortekit_directory(folder):
        return
    taken = sorted(name for name in set(names) if (folder / name).exists() or (folder / name).is_symlink())
    if taken:
        raise OutputError(Errors.E747.format(path=folder, names=", ".join(taken)))


def remove_output_directory(path: _PATH) -> None:
    """Delete a folder that fortekit created (it holds the marker); refuse any other (E744).

    Example:
        >>> folder = create_output_directory(Path(tempfile.mkdtemp()) / "run")
        >>> remove_output_directory(folder); folder.exists()
        False
    """
    folder = Path(path)
    if not folder.exists() and not folder.is_symlink():
        return
    check_not_symlink(folder)
    if not is_fortekit_directory(folder):
        raise OutputError(
            Errors.E744.format(path=folder, marker=MARKER_FILE, holding=_describe_contents(folder))
        )
    try:
        shutil.rmtree(folder)
    except OSError as exc:
        raise write_error(folder, exc) from exc


def replace_directory(path: _PATH, build: Callable[[Path], Any], *, overwrite: bool = False) -> Path:
    """Build a folder beside ``path`` with ``build(temporary_folder)``, then swap it into place.

    The folder is complete or absent: a failed or killed build leaves the old folder as it
    was (and a hidden ``.NAME.*.tmp`` folder, which the next call removes if it holds the
    marker). On Linux the swap is one ``renameat2(RENAME_EXCHANGE)``; elsewhere it is two
    renames, and a kill between them leaves the old folder at ``.NAME.*.old/previous``.
    The old folder is replaced only with ``overwrite`` and only if fortekit created it.

    Args:
        path: the folder to create or replace.
        build: a callable that writes the folder's contents into the folder it is given.
        overwrite: replace an existing folder that fortekit created.

    Returns:
        ``path``, as a Path.

    Raises:
        OutputError: ``path`` exists and ``overwrite`` is False (E746), is not fortekit's
            (E744), is a file (E745) or a link (E741).
        OutputWriteError: a write failed (E743).

    Example:
        >>> root = Path(tempfile.mkdtemp())
        >>> _ = replace_directory(root / "gen", lambda d: (d / "a.txt").write_text("1"))
        >>> _ = replace_directory(root / "gen", lambda d: (d / "b.txt").write_text("2"), overwrite=True)
        >>> sorted(p.name for p in (root / "gen").iterdir())
        ['.fortekit-output', 'b.txt']
    """
    target = Path(path)
    check_not_symlink(target)
    if target.exists():
        if not target.is_dir():
            raise OutputError(Errors.E745.format(path=target, kind="a file", what="a folder"))
        if not overwrite:
            raise OutputError(Errors.E746.format(path=target))
        if not is_fortekit_directory(target) and any(target.iterdir()):
            raise OutputError(
                Errors.E744.format(path=target, marker=MARKER_FILE, holding=_describe_contents(target))
            )
    parent = target.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        for stale in parent.glob(f".{target.name}.*.tmp"):  # a killed earlier build
            if is_fortekit_directory(stale):
                shutil.rmtree(stale, ignore_errors=True)
        temporary = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=parent))
    except OSError as exc:
        raise write_error(target, exc) from exc
    try:
        _write_marker(temporary)
        build(temporary)
        _fsync_directory(temporary)
        if target.exists() and exchange_paths(temporary, target):
            pass  # one atomic step: `target` is the old folder or the new one, whenever we die
        elif target.exists():  # two renames: a kill between them leaves the old folder aside
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=parent))
            os.replace(target, old / "previous")
            os.replace(temporary, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(temporary, target)
    except OSError as exc:
        raise write_error(target, exc) from exc
    finally:
        if temporary.exists():
            shutil.rmtree(temporary, ignore_errors=True)
    _fsync_directory(parent)
    return target


# --- one writer per output ----------------------------------------------------------------------
def _lock_path(target: Path) -> Path:
    return target.parent / f".{target.name}.lock"


class OutputLock:
    """An exclusive lock on an output for a run's duration (``flock`` on ``.NAME.lock`` beside it).

    Non-blocking: a second run gets :class:`~fortekit.errors.OutputLockedError` (E742) with
    the pid of the run that holds it. The kernel releases the lock when its holder's process
    ends, however it ends, so a killed run leaves no stale lock (its lock file, if left, is
    taken over). Re-entrant within one process for the same path is not supported: take
    one lock per output per run.

    Example:
        >>> target = Path(tempfile.mkdtemp()) / "out.jsonl"
        >>> with OutputLock(target):
        ...     try:
        ...         OutputLock(target).acquire()
        ...     except OutputLockedError as exc:
        ...         print(str(exc)[:6])
        [E742]
    """

    def __init__(self, target: _PATH) -> None:
        self.target = Path(target)
        self.path = _lock_path(self.target)
        self._descriptor: int | None = None

    def acquire(self) -> OutputLock:
        """Take the lock or raise E742 (held) / E743 (cannot create the lock file)."""
        import fcntl  # POSIX; fortekit's supported platforms

        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        for _ in range(20):  # the holder may remove the file between our open and our lock
            try:
                descriptor = os.open(self.path, flags, 0o644)
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    check_not_symlink(self.path)
                raise write_error(self.path, exc) from exc
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                holder = self._holder(descriptor)
                os.close(descriptor)
                if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    raise OutputLockedError(
                        Errors.E742.format(path=self.target, pid=holder, lock=self.path)
                    ) from None
                raise write_error(self.path, exc) from exc
            if self._same(descriptor):
                os.ftruncate(descriptor, 0)
                os.write(descriptor, f"{os.getpid()}\n".encode())
                self._descriptor = descriptor
                return self
            os.close(descriptor)  # the file we locked was unlinked by its last holder: retry
        raise OutputLockedError(Errors.E742.format(path=self.target, pid="?", lock=self.path))

    def _same(self, descriptor: int) -> bool:
        info = os.fstat(descriptor)
        return _identity(self.path) == (info.st_dev, info.st_ino)

    @staticmethod
    def _holder(descriptor: int, wait_s: float = 0.5) -> str:
        """The holder's pid from the lock file; a holder that has just locked it may not have
        written its pid yet, so an empty file is read again for up to ``wait_s``."""
        deadline = time.monotonic() + wait_s
        while True:
            try:
                text = os.pread(descriptor, 64, 0).decode("ascii", "replace").strip()
            except OSError:
                return "?"
            if text.isdigit() or time.monotonic() >= deadline:
                return text if text.isdigit() else "?"
            time.sleep(0.01)

    def release(self) -> None:
        """Remove the lock file and drop the lock (idempotent)."""
        if self._descriptor is None:
            return
        try:
            if self._same(self._descriptor):
                self.path.unlink(missing_ok=True)
        except OSError:
            pass
        finally:
            os.close(self._descriptor)
            self._descriptor = None

    def __enter__(self) -> OutputLock:
        return self.acquire()

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.release()


@contextmanager
def output_lock(*targets: _PATH | None) -> Iterator[list[OutputLock]]:
    """Lock every given output (None entries and ``-``, standard output, are skipped) for a block.

    Example:
        >>> folder = Path(tempfile.mkdtemp())
        >>> with output_lock(folder / "a.jsonl", None, "-") as locks:
        ...     len(locks)
        1
    """
    held: list[OutputLock] = []
    try:
        for target in targets:
            if target is None or str(target) == "-":
                continue
            held.append(OutputLock(target).acquire())
        yield held
    finally:
        for lock in reversed(held):
            lock.release()
