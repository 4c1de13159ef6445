"""Which audio file an item id may be answered with: only files the index registers, inside its folders.

A client names an item by id, never by path: the id is looked up in the index, and the file
the index registered for it is served only when it is a regular audio file whose real path
(symbolic links followed) lies inside an allowed folder. By default the allowed folders are
the folders the registered files sit in (as written in the index, links not followed), so a
registered ``clip.wav`` that is a link to ``/etc/passwd`` is refused; ``--audio-root DIR``
names them instead (and relative registered paths are then read from the first one).

Example:
    >>> files = AudioFiles(["a.wav", None], ["rain.wav", None], base=Path("/data"))
    >>> [str(root) for root in files.roots] == [os.path.realpath("/data")]
    True
    >>> files.media_type(Path("x.flac"))
    'audio/flac'
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

from fortekit.errors import Errors, ServeError

__all__ = ["MEDIA_TYPES", "AudioFiles"]

#: The audio files served, by suffix, with their content type (the suffixes ``fortekit index build``
#: reads, and a few more a hand-made index may register).
MEDIA_TYPES: dict[str, str] = {
    ".wav": "audio/wav", ".flac": "audio/flac", ".ogg": "audio/ogg", ".oga": "audio/ogg",
    ".opus": "audio/ogg", ".mp3": "audio/mpeg", ".m4a": "audio/mp4", ".aac": "audio/aac",
    ".webm": "audio/webm",
}


class AudioFiles:
    """The audio files of an index's items, each checked before it is served.

    Args:
        ids: the index's item ids, in row order.
        paths: the registered path of each item (None: no audio).
        base: the folder relative paths are read from (default: the current directory).
        roots: the folders files may lie in (default: the folders of the registered files).
    """

    def __init__(self, ids: Sequence[str], paths: Sequence[str | None], *, base: Path | None = None,
                 roots: Sequence[Path] | None = None) -> None:
        self.base = Path(base) if base is not None else Path.cwd()
        self._paths = {item: self._absolute(path) for item, path in zip(ids, paths, strict=True)
                       if path is not None}
        if roots is not None:
            chosen = [Path(os.path.realpath(root)) for root in roots]
        else:  # the folders as registered, their own links followed, the files' links not
            chosen = sorted({Path(os.path.realpath(path.parent)) for path in self._paths.values()})
        self.roots: tuple[Path, ...] = tuple(chosen)

    def _absolute(self, path: str) -> Path:
        registered = Path(path).expanduser()
        return registered if registered.is_absolute() else self.base / registered

    def has_audio(self, item_id: str) -> bool:
        """Whether the index registers an audio file for the item."""
        return item_id in self._paths

    def resolve(self, item_id: str) -> Path:
        """The real path of the item's audio file, after every check.

        Args:
            item_id: an id of the index (the caller has checked that it is one).

        Returns:
            The file's real path (links followed).

        Raises:
            ServeError: no registered file (E796, 404); a file that is missing, not a regular
                file, not an audio type, or outside the allowed folders (E797, 404/403).
        """
        registered = self._paths.get(item_id)
        if registered is None:
            raise ServeError(Errors.E796.format(item_id=item_id), status=404)
        real = Path(os.path.realpath(registered))
        if not any(real.is_relative_to(root) for root in self.roots):
            raise self._refused(item_id, "its real path lies outside the indexed folders", 403)
        try:
            mode = real.stat().st_mode
        except OSError:
            raise self._refused(item_id, "the registered file does not exist", 404) from None
        if not stat.S_ISREG(mode):
            raise self._refused(item_id, "the registered path is not a regular file", 403)
        if real.suffix.lower() not in MEDIA_TYPES:
            raise self._refused(item_id, f"{real.suffix or 'no suffix'!s} is not an audio type "
                                f"({', '.join(MEDIA_TYPES)})", 403)
        return real

    def _refused(self, item_id: str, reason: str, status: int) -> ServeError:
        # the folders by their names: no answer shows a path of the server's disk
        roots = ", ".join(root.name or str(root) for root in self.roots) or "none"
        return ServeError(Errors.E797.format(item_id=item_id, reason=reason, roots=roots), status=status)

    @staticmethod
    def media_type(path: Path) -> str:
        """The content type of an audio file, by its suffix."""
        return MEDIA_TYPES.get(path.suffix.lower(), "application/octet-stream")
