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

from fortekit.errors import Errors, FortekitError, SearchError
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
        SearchError: the lengths disagree, or the corpus has no parsed caption (E411).
    """

    def __init__(
        self, embeddings: Any, captions: Sequence[str], parses: Sequence[ParseResult | None],
        *, normalised: bool = False,
    ) -> None:
        import torch

        vectors = torch.as_tensor(embeddings, dtype=torch.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(captions) or len(captions) != len(parses):
            raise SearchError(Errors.E411.format(problem=(
                f"{tuple(vectors.shape)} embeddings, {len(captions)} captions and {len(parses)} parses"
            )))
        if not any(parse is not None and parse.predicates for parse in parses):
            raise SearchError(Errors.E411.format(problem="no caption parses to a predicate"))
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
            SearchError: the index holds no caption that parses (E411).
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
        """The ``k`` rows most similar to each query: (scores (q, k), rows (q, k)), best first."""
        import torch

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

        target = Path(directory)
        target.mkdir(parents=True, exist_ok=True)
        save_file({"embeddings": self.embeddings.contiguous()}, str(target / "corpus.safetensors"))
        with open(target / "corpus.jsonl", "w", encoding="utf-8") as handle:
            handle.write(json.dumps({"format": _FORMAT, "size": len(self)}) + "\n")
            for caption, parse in zip(self.captions, self.parses, strict=True):
                row = {"caption": caption, "parse": parse.to_dict() if parse is not None else None}
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        return target

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> CaptionCorpus:
        """Read a corpus written by :meth:`save` (no spaCy, no pickle).

        Raises:
            SearchError: missing or inconsistent files (E412).
        """
        from safetensors.torch import load_file

        source = Path(directory)
        try:
            tensors = load_file(str(source / "corpus.safetensors"))
            with open(source / "corpus.jsonl", encoding="utf-8") as handle:
                header = json.loads(handle.readline())
                if header.get("format") != _FORMAT:
                    raise ValueError(f"format {header.get('format')!r}, expected {_FORMAT}")
                rows = [json.loads(line) for line in handle if line.strip()]
            captions = [str(row["caption"]) for row in rows]
            parses = [parse_from_dict(row["parse"]) if row["parse"] else None for row in rows]
        # FortekitError: the FOL parser's own error on a damaged formula.
        except (OSError, ValueError, KeyError, TypeError, AttributeError, FortekitError) as exc:
            raise SearchError(Errors.E412.format(path=source, problem=exc)) from exc
        return cls(tensors["embeddings"], captions, parses, normalised=True)


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
