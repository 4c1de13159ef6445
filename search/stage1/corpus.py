"""A caption corpus for Stage 1: human captions, their embeddings and their parses, made once.

Stage 1's corpus elaborator and its feedback anchors read elaborations and candidates
from human captions of similar sounds instead of stacking vocabulary adjectives. The
corpus is either the index's own item captions (pseudo-relevance feedback at the level
of predicates: the rows are the items' embeddings in the joint space, so a text query
finds the same neighbours as the first pass) or a caption file the user points at
(the rows are f_T of the captions).

Every caption is parsed once, when the corpus is built; :meth:`CaptionCorpus.save`
writes the parses beside the embeddings, so loading a corpus needs no spaCy at all.

Example:
    >>> import torch
    >>> from fortekit.fol.caption import parse_caption
    >>> corpus = CaptionCorpus(torch.eye(2), ["rain on a roof", "a dog barks"],
    ...                        [parse_caption("rain on a roof"), parse_caption("a dog barks")])
    >>> scores, rows = corpus.neighbours(torch.tensor([[0.1, 0.9]]), k=1)
    >>> corpus.captions[int(rows[0, 0])]
    'a dog barks'
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fortekit.errors import Errors, FortekitError, RefineError
from fortekit.fol.caption.result import ParseResult, PredicateRecord

if TYPE_CHECKING:
    import torch

    from fortekit.fol.caption.parser import CaptionParser
    from fortekit.plugins.protocols import Backbone
    from fortekit.search.index.audio_index import AudioIndex

__all__ = ["CaptionCorpus", "parse_captions_once", "parse_from_dict"]

_FORMAT = 1


def parse_from_dict(data: dict[str, Any]) -> ParseResult:
    """A :class:`ParseResult` back from :meth:`ParseResult.to_dict` (no spaCy needed).

    Raises:
        KeyError, TypeError, ValueError: ``data`` is not such a dict (the formula is read
            back by the FOL parser, which raises its own typed error).

    Example:
        >>> from fortekit.fol.caption import parse_caption
        >>> parse = parse_caption("a dog barks")
        >>> parse_from_dict(parse.to_dict()) == parse
        True
    """
    from fortekit.fol import parse_formula

    records = tuple(
        PredicateRecord(
            symbol=str(r["symbol"]), lemma=str(r["lemma"]), args=tuple(r["args"]), negated=bool(r["negated"]),
            rule=str(r["rule"]), tokens=tuple(int(t) for t in r["tokens"]),
            span=(int(r["span"][0]), int(r["span"][1])), source=str(r["source"]), tier=str(r["tier"]),
            confidence=float(r["confidence"]), category=r["category"], pos=str(r["pos"]),
            excluded=bool(r.get("excluded", False)),
        )
        for r in data["predicates"]
    )
    return ParseResult(
        text=str(data["text"]), formula=parse_formula(str(data["formula"])), predicates=records,
        used_fallback=bool(data["used_fallback"]), oov=tuple(data["oov"]),
        truncated=bool(data.get("truncated", False)), backend=str(data.get("backend", "rules")),
    )


class CaptionCorpus:
    """Human captions with their embeddings (unit rows) and their parses.

    Args:
        embeddings: (n, d) rows, one per caption (normalised here).
        captions: the caption of each row ("" where a row has none).
        parses: the parse of each caption, None where it has none.
        normalised: the rows are already of unit norm (a saved corpus: normalising twice is
            not bit-exact).

    Raises:
        RefineError: the lengths disagree, or the corpus has no parsed caption (E411).
    """

    def __init__(
        self, embeddings: Any, captions: Sequence[str], parses: Sequence[ParseResult | None],
        *, normalised: bool = False,
    ) -> None:
        import torch

        vectors = torch.as_tensor(embeddings, dtype=torch.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(captions) or len(captions) != len(parses):
            raise RefineError(Errors.E411.format(problem=(
                f"{tuple(vectors.shape)} embeddings, {len(captions)} captions and {len(parses)} parses"
            )))
        if not any(parse is not None and parse.predicates for parse in parses):
            raise RefineError(Errors.E411.format(problem="no caption parses to a predicate"))
        from fortekit.search.stage1.rows import first_bad_row

        bad = first_bad_row(vectors)
        if bad is not None:  # a NaN row would rank first or poison every similarity
            raise RefineError(Errors.E411.format(problem=f"row {bad} holds NaN or an infinity"))
        self.embeddings = vectors if normalised else torch.nn.functional.normalize(vectors, dim=-1)
        self.captions = list(captions)
        self.parses = list(parses)
        names = Counter(
            name for parse in self.parses if parse is not None
            for name in {record.symbol for record in parse.predicates if not record.negated}
        )
        # Smoothed idf: a predicate no caption uses weighs like one used once.
        count = len(self.parses)
        self.idf = {name: math.log(1 + count / seen) for name, seen in names.items()}
        self.unseen_idf = math.log(1 + count)
        self._device_copies: dict[str, torch.Tensor] = {}

    def __len__(self) -> int:
        return len(self.captions)

    def __repr__(self) -> str:
        return f"CaptionCorpus({len(self)} captions, dim {self.dim})"

    @property
    def dim(self) -> int:
        return int(self.embeddings.shape[1])

    @classmethod
    def from_captions(
        cls,
        captions: Sequence[str],
        backbone: Backbone,
        *,
        parser: CaptionParser | None = None,
        batch_size: int = 256,
    ) -> CaptionCorpus:
        """A corpus of ``captions``: f_T of each, and its parse.

        Example:
            >>> corpus = CaptionCorpus.from_captions(["rain falls"], backbone)  # doctest: +SKIP
        """
        import torch

        rows = [
            backbone.encode_text(list(captions[start:start + batch_size]))
            for start in range(0, len(captions), batch_size)
        ]
        embeddings = torch.cat(rows).detach().float().cpu() if rows else torch.zeros((0, int(backbone.dim)))
        return cls(embeddings, captions, parse_captions_once(captions, parser))

    @classmethod
    def from_index(cls, index: AudioIndex, *, parser: CaptionParser | None = None) -> CaptionCorpus:
        """The index's item captions, with the items' own rows: the first pass's neighbours.

        Raises:
            RefineError: the index holds no caption that parses (E411).
        """
        import numpy as np

        captions = [caption or "" for caption in index.captions]
        rows = np.array(index.embeddings, dtype=np.float32)
        return cls(rows, captions, parse_captions_once(captions, parser))

    def rows(self, device: str) -> torch.Tensor:
        """The embeddings on ``device`` (copied once per device)."""
        if device == "cpu":
            return self.embeddings
        if device not in self._device_copies:
            self._device_copies[device] = self.embeddings.to(device)
        return self._device_copies[device]

    def neighbours(self, queries: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The ``k`` rows most similar to each query: (scores (q, k), rows (q, k)), best first.

        Raises:
            RefineError: the queries' width is not the corpus's (E407): a corpus embedded by
                another backbone.
        """
        import torch

        if queries.shape[-1] != self.dim:
            raise RefineError(Errors.E407.format(
                what="The caption corpus", got=self.dim, expected=int(queries.shape[-1]),
            ) + " Build the corpus with this run's backbone.")
        rows = self.rows(str(queries.device))
        scores = torch.nn.functional.normalize(queries.float(), dim=-1) @ rows.T
        count = min(int(k), len(self))
        top = torch.topk(scores, count, dim=1)
        return top.values, top.indices

    def save(self, directory: str | os.PathLike[str]) -> Path:
        """Write ``corpus.safetensors`` (the rows) and ``corpus.jsonl`` (captions and parses).

        Example:
            >>> corpus.save("my_corpus")  # doctest: +SKIP
        """
        from safetensors.torch import save_file

        from fortekit.safe_write import atomic_write, create_output_directory

        target = create_output_directory(directory)
        rows = self.embeddings.contiguous()
        # Each file is written beside itself and renamed into place (fortekit.safe_write): a
        # crash leaves the old corpus or the new one, and a planted symlink is refused (E741).
        atomic_write(target / "corpus.safetensors", lambda path: save_file({"embeddings": rows}, str(path)))

        def write_rows(path: Path) -> None:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(json.dumps({"format": _FORMAT, "size": len(self)}) + "\n")
                for caption, parse in zip(self.captions, self.parses, strict=True):
                    row = {"caption": caption, "parse": parse.to_dict() if parse is not None else None}
                    handle.write(json.dumps(row, ensure_ascii=False) + "\n")

        atomic_write(target / "corpus.jsonl", write_rows)
        return target

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> CaptionCorpus:
        """Read a corpus written by :meth:`save` (no spaCy, no pickle).

        Raises:
            RefineError: missing or inconsistent files (E412).
        """
        from fortekit.search.stage1.rows import read_rows, unit_rows

        source = Path(directory)
        try:
            embeddings = read_rows(source / "corpus.safetensors")
            captions, parses = _read_captions(source / "corpus.jsonl")
        # FortekitError: the FOL parser's own error on a damaged formula. RecursionError: a
        # parse nested deeper than Python's stack (json_value stops JSON nesting earlier).
        except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError,
                FortekitError) as exc:
            raise RefineError(Errors.E412.format(path=source, problem=_reason(exc))) from exc
        # Rows of unit norm are kept bit-exact; rows that are not (a hand-made file) are normalised.
        return cls(embeddings, captions, parses, normalised=unit_rows(embeddings))


def _reason(exc: BaseException) -> str:
    """A short reason for a message (a KeyError's repr alone says little)."""
    if isinstance(exc, KeyError):
        return f"a row lacks the field {exc}"
    if isinstance(exc, RecursionError):
        return "a parse is nested too deeply"
    return str(exc) or type(exc).__name__


def _read_captions(path: Path) -> tuple[list[str], list[ParseResult | None]]:
    """The captions and parses of a ``corpus.jsonl`` (ValueError, KeyError, TypeError if damaged)."""
    from fortekit.textio import BadLine, json_value

    captions: list[str] = []
    parses: list[ParseResult | None] = []
    with open(path, encoding="utf-8") as handle:
        header = json_value(1, handle.readline())
        if not isinstance(header, dict) or header.get("format") != _FORMAT:
            found = header.get("format") if isinstance(header, dict) else header
            raise ValueError(f"line 1: format {found!r}, expected {{\"format\": {_FORMAT}}}")
        for number, line in enumerate(handle, start=2):
            if not line.strip():
                continue
            row = json_value(number, line)
            if isinstance(row, BadLine):
                raise ValueError(f"line {number} is not JSON ({row.reason})")
            if not isinstance(row, dict) or not isinstance(row.get("caption"), str):
                raise ValueError(f"line {number} is not an object with a \"caption\" string")
            parse = row.get("parse")
            if parse is not None and not isinstance(parse, dict):
                raise ValueError(f"line {number}: \"parse\" is not an object")
            captions.append(row["caption"])
            parses.append(parse_from_dict(parse) if parse else None)
    return captions, parses


def parse_captions_once(
    captions: Sequence[str], parser: CaptionParser | None = None
) -> list[ParseResult | None]:
    """Each caption's parse, batched through spaCy; None for an empty, overlong or non-str one.

    Example:
        >>> [str(p.formula) if p else None for p in parse_captions_once(["rain falls", ""])]
        ['∃x [Rain(x) ∧ Falling(x)]', None]
    """
    from fortekit.fol.caption.parser import default_parser
    from fortekit.fol.caption.pipeline import check_text

    parser = parser or default_parser()
    usable: list[int] = []
    for position, caption in enumerate(captions):
        try:
            check_text(caption, function="corpus", max_chars=parser.max_chars)
        except FortekitError:  # an empty, overlong or non-str caption simply has no parse
            continue
        usable.append(position)
    parses: list[ParseResult | None] = [None] * len(captions)
    for position, parse in zip(usable, parser.parse_many([captions[p] for p in usable]), strict=True):
        parses[position] = parse
    return parses
