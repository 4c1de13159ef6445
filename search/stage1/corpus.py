"""A caption corpus for Stage 1: human captions, their embeddings and their parses, made once.

Stage 1's corpus elaborator and its feedback anchors read elaborations and candidates
from human captions of similar sounds instead of stacking vocabulary adjectives. The
corpus is either the index's own item captions (pseudo-relevance feedback at the level
of predicates: the rows are the items' embeddings in the joint space, so a text query
finds the same neighbours as the first pass) or a caption file the user points at
(the rows are f_T of the captions).

A corpus of captions (:meth:`CaptionCorpus.from_captions`) parses each caption once, when
it is built; :meth:`CaptionCorpus.save` writes the parses beside the embeddings, so loading a
corpus needs no spaCy at all. The index's own corpus (:meth:`CaptionCorpus.from_index`) parses
nothing up front: a query reads only its nearest captions, so :class:`LazyParses` parses a
caption the first time a query reads it (a batch's rows in one spaCy call,
:meth:`CaptionCorpus.prefetch`) and keeps it, and the idf weights come from the index's
stored predicate sets (:class:`IndexIdf`).

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
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from fortekit.errors import Errors, FortekitError, RefineError
from fortekit.fol.caption.result import ParseResult, PredicateRecord

if TYPE_CHECKING:
    import torch

    from fortekit.fol.caption.parser import CaptionParser
    from fortekit.fol.predicates import PredicateSymbol
    from fortekit.plugins.protocols import Backbone
    from fortekit.search.index.audio_index import AudioIndex

__all__ = ["CaptionCorpus", "IndexIdf", "LazyParses", "parse_captions_once", "parse_from_dict"]

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


class LazyParses(Sequence["ParseResult | None"]):
    """The parses of captions, each made the first time it is read, then kept.

    ``parses[i]`` is ``parse_captions_once(captions, parser)[i]``: None for an empty,
    overlong or non-str caption. Reading a row not parsed yet parses it alone;
    :meth:`prefetch` parses the not-yet-parsed rows of a batch in one ``parse_many`` call,
    so a batch of queries that prefetches its neighbours costs one spaCy call. The parser
    (spaCy) is loaded at the first parse, not before.

    Args:
        captions: the captions, one per row.
        parser: the caption parser (default: ``default_parser()``, when first needed).

    Example:
        >>> parses = LazyParses(["rain falls", "", "a dog barks"])
        >>> parses.parsed
        0
        >>> parses.prefetch([0, 1])  # one spaCy call for both rows
        >>> parses.parsed, parses[1]
        (2, None)
        >>> str(parses[2].formula)  # parsed alone, then kept
        '∃x [Dog(x) ∧ Barking(x)]'
    """

    def __init__(self, captions: Sequence[str], parser: CaptionParser | None = None) -> None:
        self._captions = list(captions)
        self._parser = parser
        self._parses: list[ParseResult | None] = [None] * len(self._captions)
        self._done = bytearray(len(self._captions))
        self._count = 0

    def __len__(self) -> int:
        return len(self._captions)

    def __repr__(self) -> str:
        return f"LazyParses({len(self)} captions, {self._count} parsed)"

    @overload
    def __getitem__(self, position: int) -> ParseResult | None: ...

    @overload
    def __getitem__(self, position: slice) -> list[ParseResult | None]: ...

    def __getitem__(self, position: int | slice) -> ParseResult | list[ParseResult | None] | None:
        if isinstance(position, slice):
            rows = range(len(self))[position]
            self.prefetch(rows)
            return [self._parses[row] for row in rows]
        row = self._row(position)
        if not self._done[row]:
            self.prefetch((row,))
        return self._parses[row]

    def __iter__(self) -> Iterator[ParseResult | None]:
        self.prefetch(range(len(self)))  # every row, in one spaCy call
        return iter(list(self._parses))

    @property
    def parsed(self) -> int:
        """How many rows have been parsed so far."""
        return self._count

    def _row(self, position: int) -> int:
        import operator

        row = operator.index(position)
        if row < 0:
            row += len(self)
        if not 0 <= row < len(self):
            raise IndexError(position)
        return row

    def prefetch(self, rows: Iterable[int]) -> None:
        """Parse the rows of ``rows`` not parsed yet, in one ``parse_many`` call.

        Raises:
            IndexError: a row outside the captions.
        """
        todo = [row for row in dict.fromkeys(self._row(position) for position in rows) if not self._done[row]]
        if not todo:
            return
        if self._parser is None:
            from fortekit.fol.caption.parser import default_parser

            self._parser = default_parser()
        parses = parse_captions_once([self._captions[row] for row in todo], self._parser)
        for row, parse in zip(todo, parses, strict=True):
            self._parses[row] = parse
            self._done[row] = 1
        self._count += len(todo)


class IndexIdf(Mapping[str, float]):
    """The smoothed idf of predicate names over an index's items, from its stored predicate sets.

    The weights :class:`CaptionCorpus` counts from the parses (an item uses a name when its
    caption's parse has a record of that symbol that is not negated), without parsing the
    captions: an item uses every name its stored set (``index.predicate_sets``, made when
    the index was built) holds with positive polarity. Polarity alone cannot settle a name
    an item holds only negatively: "a train with no whistle" stores ``¬Whistling`` and its
    parse counts Whistling (a record of a denied entity's clause is ``excluded``, not
    ``negated``), while "a dog that is not barking" stores ``¬Barking`` and its parse does
    not count Barking. Such items are few (28 of 2,000 Clotho development captions, 12 of
    which count a name that way), so a name is settled by parsing just the items that hold
    it only negatively, the first time the name is looked up (:meth:`rows_for` lets a batch
    parse them in its own spaCy call), and kept. The weights are then those of the eager
    parses, provided the stored sets were made by the same parser from the same captions
    (an index built with hand-made ``predicate_sets``, or by another parser, gives its own).

    Args:
        sets: the stored predicate sets, one per item.
        parses: the items' parses (read only for the items that hold a name only negatively).

    Raises:
        RefineError: as many sets as parses are needed (E411).

    Example:
        >>> from fortekit.fol.predicates import Polarity, PredicateSymbol as S
        >>> sets = [frozenset({S("Train", 1), S("Whistling", 1, Polarity.NEGATIVE)}),
        ...         frozenset({S("Dog", 1)})]
        >>> idf = IndexIdf(sets, LazyParses(["a train with no whistle", "a dog barks"]))
        >>> round(idf["Train"], 4), "Cat" in idf
        (1.0986, False)
        >>> round(idf["Whistling"], 4)  # settled by parsing caption 0 alone
        1.0986
    """

    def __init__(self, sets: Sequence[frozenset[PredicateSymbol]], parses: LazyParses) -> None:
        self._parses = parses
        self._count = len(sets)
        if self._count != len(parses):
            problem = f"{self._count} predicate sets and {len(parses)} parses"
            raise RefineError(Errors.E411.format(problem=problem))
        self._used: Counter[str] = Counter()
        self._denied: dict[str, list[int]] = {}
        for row, symbols in enumerate(sets):
            if not symbols:
                continue
            used = {symbol.name for symbol in symbols if not symbol.negated}
            self._used.update(used)
            for name in {symbol.name for symbol in symbols if symbol.negated} - used:
                self._denied.setdefault(name, []).append(row)
        self._values: dict[str, float | None] = {}

    @property
    def empty(self) -> bool:
        """Whether no item's stored set holds a predicate (the index's captions do not parse)."""
        return not self._used and not self._denied

    def __repr__(self) -> str:
        return f"IndexIdf({self._count} items, {len(self._used)} names asserted)"

    def rows_for(self, names: Iterable[str]) -> list[int]:
        """The items whose parses the idf of ``names`` still needs (those holding one only negatively)."""
        return [row for name in dict.fromkeys(names) if name not in self._values
                for row in self._denied.get(name, ())]

    def _value(self, name: str) -> float | None:
        if name in self._values:
            return self._values[name]
        if name not in self._used and name not in self._denied:
            # A name no item holds (every unknown word of a query): None, answered without a
            # lookup and not kept, so the table stays bounded by the index's own names.
            return None
        seen = self._used.get(name, 0)
        rows = self._denied.get(name, ())
        if rows:
            self._parses.prefetch(rows)
            seen += sum(1 for row in rows if _uses(self._parses[row], name))
        value = math.log(1 + self._count / seen) if seen else None
        self._values[name] = value
        return value

    def __getitem__(self, name: str) -> float:
        value = self._value(name) if isinstance(name, str) else None
        if value is None:
            raise KeyError(name)
        return value

    def __iter__(self) -> Iterator[str]:
        self._parses.prefetch(self.rows_for(self._denied))  # every undecided name, in one spaCy call
        names = dict.fromkeys([*self._used, *self._denied])
        return iter([name for name in names if self._value(name) is not None])

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _uses(parse: ParseResult | None, name: str) -> bool:
    """Whether ``parse`` has a record of ``name`` that is not negated (what the idf counts)."""
    return parse is not None and any(r.symbol == name and not r.negated for r in parse.predicates)


def _idf_of_parses(parses: Sequence[ParseResult | None]) -> dict[str, float]:
    """The smoothed idf of each name a parse uses (a record not negated): log(1 + n / seen)."""
    names = Counter(
        name for parse in parses if parse is not None
        for name in {record.symbol for record in parse.predicates if not record.negated}
    )
    count = len(parses)
    return {name: math.log(1 + count / seen) for name, seen in names.items()}


class CaptionCorpus:
    """Human captions with their embeddings (unit rows) and their parses.

    Args:
        embeddings: (n, d) rows, one per caption (normalised here).
        captions: the caption of each row ("" where a row has none).
        parses: the parse of each caption, None where it has none: a list, or
            :class:`LazyParses` that parse on demand (:meth:`from_index`).
        normalised: the rows are already of unit norm (a saved corpus: normalising twice is
            not bit-exact).
        idf: the idf weights, when they come without the parses (:class:`IndexIdf`, from an
            index's stored predicate sets); None: counted from the parses, all of them.
        search: finds the ``k`` rows nearest each query, as :meth:`neighbours` returns them
            (an index's approximate part, :meth:`from_index`); None: an exact scan of the rows.
        stored: the items' stored predicate sets (an index's, made by the parser when it was
            built): what a caption asserts is read from them (:meth:`asserted`) instead of its
            parse; None: from the parses.

    Attributes:
        idf: the smoothed idf of each predicate name the captions use (a dict, or
            :class:`IndexIdf`); ``unseen_idf`` that of a name none uses.

    Raises:
        RefineError: the lengths disagree, or the corpus has no parsed caption (E411).
    """

    def __init__(
        self, embeddings: Any, captions: Sequence[str], parses: Sequence[ParseResult | None],
        *, normalised: bool = False, idf: IndexIdf | None = None,
        search: Callable[[torch.Tensor, int], tuple[torch.Tensor, torch.Tensor]] | None = None,
        stored: Sequence[frozenset[PredicateSymbol]] | None = None,
    ) -> None:
        import torch

        vectors = torch.as_tensor(embeddings, dtype=torch.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(captions) or len(captions) != len(parses):
            raise RefineError(Errors.E411.format(problem=(
                f"{tuple(vectors.shape)} embeddings, {len(captions)} captions and {len(parses)} parses"
            )))
        if idf is not None and idf.empty:
            raise RefineError(Errors.E411.format(problem="no item of the index has a predicate"))
        if idf is None and not any(parse is not None and parse.predicates for parse in parses):
            raise RefineError(Errors.E411.format(problem="no caption parses to a predicate"))
        from fortekit.search.stage1.rows import first_bad_row

        bad = first_bad_row(vectors)
        if bad is not None:  # a NaN row would rank first or poison every similarity
            raise RefineError(Errors.E411.format(problem=f"row {bad} holds NaN or an infinity"))
        self.embeddings = vectors if normalised else torch.nn.functional.normalize(vectors, dim=-1)
        self.captions = list(captions)
        self.parses: Sequence[ParseResult | None] = parses if isinstance(parses, LazyParses) else list(parses)
        # Smoothed idf: a predicate no caption uses weighs like one used once.
        self.idf: Mapping[str, float] = idf if idf is not None else _idf_of_parses(self.parses)
        self.unseen_idf = math.log(1 + len(self.parses))
        self._device_copies: dict[str, torch.Tensor] = {}
        self._search = search
        self._stored = stored if stored is not None and len(stored) == len(self.captions) else None
        self._asserted: dict[int, frozenset[str]] = {}

    def __len__(self) -> int:
        return len(self.captions)

    @property
    def stores_assertions(self) -> bool:
        """Whether :meth:`asserted` reads stored predicate sets (nothing to parse for it)."""
        return self._stored is not None

    def asserted(self, row: int) -> frozenset[str]:
        """The predicate names the caption of ``row`` asserts: its records neither negated nor
        excluded, read from the stored predicate set (its positive names: the same set, when the
        parser that stored it is this one) or else from the parse (:meth:`prefetch` it first).

        Example:
            >>> corpus.asserted(0)  # doctest: +SKIP
            frozenset({'Dog', 'Barking'})
        """
        said = self._asserted.get(row)
        if said is None:
            if self._stored is not None:
                said = frozenset(symbol.name for symbol in self._stored[row] if not symbol.negated)
            else:
                parse = self.parses[row]
                records = parse.predicates if parse is not None else ()
                said = frozenset(record.symbol for record in records
                                 if not record.negated and not record.excluded)
            self._asserted[row] = said
        return said

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
    def from_index(cls, index: AudioIndex, *, parser: CaptionParser | None = None,
                   use_faiss: bool | None = None) -> CaptionCorpus:
        """The index's item captions, with the items' own rows: the first pass's neighbours.

        The neighbours are found as the first pass finds its candidates: by the index's
        approximate part where the first pass uses it (``use_faiss``; None: an approximate kind
        from :data:`~fortekit.search.index.ann.ANN_MIN_ITEMS` items on), else by an exact scan.
        An exact scan of a million rows reads them all for each query (docs/scale.md: the
        most of Stage 1's cost at that size).

        Nothing is parsed here: the parses are :class:`LazyParses` (a query parses only the
        neighbours it reads, a batch in one spaCy call: :meth:`prefetch`), what an item asserts
        (:meth:`asserted`, the feedback anchors' judge) and the idf come from the index's
        stored predicate sets (:class:`IndexIdf`: the weights of parsing
        every caption, when the index's sets were made by this parser). An index built
        without parsing its captions has no stored sets: its captions are then all parsed
        here, as before.

        Raises:
            RefineError: no item of the index has a predicate, or no caption parses (E411).

        Example:
            >>> corpus = CaptionCorpus.from_index(index)  # doctest: +SKIP
            >>> corpus.parses.parsed  # doctest: +SKIP
            0
        """
        import numpy as np

        captions = [caption or "" for caption in index.captions]
        rows = np.array(index.embeddings, dtype=np.float32)
        parses = LazyParses(captions, parser)
        idf = IndexIdf(index.predicate_sets, parses) if index.meta.parsed else None
        from fortekit.search.index.ann import first_pass_uses_ann

        approximate = first_pass_uses_ann(index.faiss_kind, len(index), use_faiss)
        search = partial(_approximate_neighbours, index) if approximate else None
        stored = index.predicate_sets if index.meta.parsed else None
        return cls(rows, captions, parses, idf=idf, search=search, stored=stored)

    def prefetch(self, rows: Iterable[int], names: Iterable[str] = ()) -> None:
        """Parse, in one spaCy call, ``rows`` and the items the idf of ``names`` still needs.

        What a batch of queries calls before it reads ``parses[row]`` and ``idf[name]``: its
        neighbours' rows and its queries' predicate names. A corpus whose parses are all
        made (:meth:`from_captions`, :meth:`load`) has nothing to do.

        Example:
            >>> corpus.prefetch([3, 14, 15], names=["Dog", "Barking"])  # doctest: +SKIP
        """
        if not isinstance(self.parses, LazyParses):
            return
        wanted = list(rows)
        if isinstance(self.idf, IndexIdf):
            wanted.extend(self.idf.rows_for(names))
        self.parses.prefetch(wanted)

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
        if self._search is not None:
            return self._search(queries, min(int(k), len(self)))
        rows = self.rows(str(queries.device))
        scores = torch.nn.functional.normalize(queries.float(), dim=-1) @ rows.T
        count = min(int(k), len(self))
        top = torch.topk(scores, count, dim=1)
        return top.values, top.indices

    def save(self, directory: str | os.PathLike[str]) -> Path:
        """Write ``corpus.safetensors`` (the rows) and ``corpus.jsonl`` (captions and parses).

        Every parse is written: the captions of an index's corpus not parsed yet are parsed
        first (one spaCy call).

        Example:
            >>> corpus.save("my_corpus")  # doctest: +SKIP
        """
        from safetensors.torch import save_file

        from fortekit.safe_write import atomic_write, create_output_directory

        self.prefetch(range(len(self)))
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


def _approximate_neighbours(
    index: AudioIndex, queries: torch.Tensor, k: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """The ``k`` rows nearest each query by the index's approximate part, on the CPU."""
    return index.search(queries.detach().float().cpu(), k, use_faiss=True)


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
