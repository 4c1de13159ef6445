"""``stored``: the captions kept with each indexed item (no model).

A caption comes from the item itself (``AudioItem(text=...)``), else from the captions
the captioner was given: a mapping, a JSONL file (``{"id" or "path": ..., "caption":
...}`` a line) or a TSV file (key, tab, caption). Keys are matched against the item's
id, then its path as given, its file name and its file stem.

Example:
    >>> from fortekit.plugins.protocols import AudioItem
    >>> captioner = StoredCaptioner({"dog.wav": "a dog barks twice"})
    >>> captioner.caption(["clips/dog.wav", AudioItem(path="x.wav", text="rain")])
    ['a dog barks twice', 'rain']
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from fortekit.errors import (
    CaptionFileError,
    CaptionNotFoundError,
    Errors,
    ModelNotFoundError,
    PluginOptionError,
)
from fortekit.plugins.items import as_item
from fortekit.plugins.protocols import AudioInput, AudioItem
from fortekit.textio import BadLine, json_value

__all__ = ["StoredCaptioner", "read_captions"]


def read_captions(path: str | os.PathLike[str]) -> dict[str, str]:
    """Captions from a JSONL or TSV file, keyed by id or path.

    Raises:
        ModelNotFoundError: no such file.
        CaptionFileError: a malformed line (named by number).
    """
    file = Path(path).expanduser()
    if not file.is_file():
        raise ModelNotFoundError(Errors.E206.format(
            what="captions file", path=file, hint="Give a .jsonl or .tsv file of item keys and captions.",
        ))
    captions: dict[str, str] = {}
    with file.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            if not text.strip() or text.lstrip().startswith("#"):
                continue
            if file.suffix.lower() == ".tsv":
                key, tab, caption = text.partition("\t")
                if not tab or not key.strip() or not caption.strip():
                    problem = "no key<TAB>caption"
                    raise CaptionFileError(Errors.E241.format(path=file, line=number, problem=problem))
                captions[key.strip()] = caption.strip()
                continue
            record = json_value(number, text)  # fortekit.textio: no RecursionError on deep JSON
            if isinstance(record, BadLine):
                problem = f"not JSON ({record.reason})"
                raise CaptionFileError(Errors.E241.format(path=file, line=number, problem=problem))
            name: object = record.get("id", record.get("path")) if isinstance(record, dict) else None
            value: object = record.get("caption") if isinstance(record, dict) else None
            if not isinstance(name, str) or not isinstance(value, str) or not value.strip():
                problem = "needs a string \"caption\" and an \"id\" or \"path\""
                raise CaptionFileError(Errors.E241.format(path=file, line=number, problem=problem))
            captions[name] = value.strip()
    return captions


class StoredCaptioner:
    """Captions stored with the items, or given as a mapping or file.

    Args:
        captions: key -> caption, or a .jsonl/.tsv file of them; None to use only the
            items' own ``text``.
        on_missing: "error" (raise) or "empty" (an empty caption, which matches nothing).

    Raises:
        ModelNotFoundError, CaptionFileError: a missing or malformed captions file.
        PluginOptionError: a bad `on_missing`.
    """

    name = "stored"

    def __init__(
        self,
        captions: Mapping[str, str] | str | os.PathLike[str] | None = None,
        *,
        on_missing: str = "error",
    ) -> None:
        if on_missing not in ("error", "empty"):
            expected = "'error' or 'empty'"
            problem = Errors.E218.format(name="on_missing", expected=expected, value=on_missing)
            raise PluginOptionError(problem)
        self.on_missing = on_missing
        if captions is None:
            self._captions: dict[str, str] = {}
        elif isinstance(captions, Mapping):
            self._captions = {str(key): str(value) for key, value in captions.items()}
        else:
            self._captions = read_captions(captions)

    def __len__(self) -> int:
        return len(self._captions)

    def __repr__(self) -> str:
        return f"StoredCaptioner(captions={len(self)}, on_missing={self.on_missing!r})"

    def _lookup(self, item: AudioItem) -> str | None:
        own: str | None = item.text
        if own is not None and own.strip():
            return own
        keys: list[str] = []
        if item.item_id is not None:
            keys.append(str(item.item_id))
        if item.path is not None:
            path = Path(item.path)
            keys.extend((os.fspath(item.path), path.name, path.stem))
        return next((self._captions[key] for key in keys if key in self._captions), None)

    def caption(self, items: Sequence[AudioInput]) -> list[str]:
        """One caption per item, in order.

        Raises:
            CaptionNotFoundError: an item has none (unless on_missing="empty").
        """
        out = []
        for index, raw in enumerate(items):
            item = as_item(raw, index, "caption")
            found = self._lookup(item)
            if found is None:
                if self.on_missing == "error":
                    raise CaptionNotFoundError(Errors.E240.format(item=item.label(), count=len(self)))
                found = ""
            out.append(found)
        return out
