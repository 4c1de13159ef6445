"""The data of ``fortekit eval``: the test and training collections, embedded and parsed once.

A collection is read with :func:`fortekit.search.eval.datasets.load_collection`, split by clip
(:func:`~fortekit.search.eval.tasks.split_by_clip`) when one file serves as both parts, and
turned into the caption-indexed retrieval task: caption 1 of a clip is the query, the
item is the mean embedding of its other captions (``"mean"``) or caption 2 alone
(``"single"``). Each item also keeps one caption, its first item text (caption 2), as the
caption a captioner would have written for Stage 3; it is parsed once, here.

Example:
    >>> from fortekit.search.eval.datasets import Clip
    >>> clips = [Clip("a", ("dog barks", "a dog", "barking")), Clip("b", ("rain", "rain falls"))]
    >>> split = split_collections(clips, None, n_train=1, limit_test=None, limit_train=None)
    >>> [c.clip_id for c in split.test], [c.clip_id for c in split.train]
    (['b'], ['a'])
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from fortekit.errors import Errors, EvaluationError
from fortekit.fol.predicates import PredicateSymbol
from fortekit.search.eval.datasets import Clip, load_collection
from fortekit.search.eval.tasks import RetrievalTask, retrieval_task, split_by_clip

if TYPE_CHECKING:
    import torch

    from fortekit.fol.ast import Formula
    from fortekit.plugins.protocols import Backbone
    from fortekit.search.index.audio_index import AudioIndex

__all__ = ["EmbeddedCollection", "SplitCollections", "embed_collection", "file_sha256", "split_collections"]

ItemText = Literal["mean", "single"]


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of a file's bytes (recorded in ``config.json`` so a run can be repeated).

    Example:
        >>> import tempfile, pathlib
        >>> f = pathlib.Path(tempfile.mkdtemp()) / "x.csv"
        >>> _ = f.write_bytes(b"abc")
        >>> file_sha256(f)[:12]
        'ba7816bf8f01'
    """
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True, slots=True)
class SplitCollections:
    """The clips of the test and the training part.

    Attributes:
        test: the test clips, in file order.
        train: the training clips, in file order.
    """

    test: list[Clip]
    train: list[Clip]


def split_collections(
    test_clips: Sequence[Clip],
    train_clips: Sequence[Clip] | None,
    *,
    n_train: int | None,
    limit_test: int | None,
    limit_train: int | None,
) -> SplitCollections:
    """The test and training clips: one file split by clip, or two files; then the limits.

    Args:
        test_clips: the clips of the test file.
        train_clips: the clips of another training file, or None when the test file is split.
        n_train: with ``train_clips`` None, the first ``n_train`` clips train and the rest test.
        limit_test: keep only the first N test clips (None: all).
        limit_train: keep only the first N training clips (None: all).

    Returns:
        The two parts; they never share a clip when one file is split.

    Raises:
        EvaluationError: ``n_train`` missing or out of range for a split file (E520).

    Example:
        >>> clips = [Clip(str(i), ("q", "i")) for i in range(5)]
        >>> split = split_collections(clips, None, n_train=2, limit_test=1, limit_train=None)
        >>> len(split.test), len(split.train)
        (1, 2)
    """
    if train_clips is None:
        if n_train is None:
            raise EvaluationError(Errors.E520.format(
                problem="there is no training collection",
                fix="Give --train PATH, or --n-train N to train on the first N clips of --test.",
            ))
        if n_train < 1 or n_train >= len(test_clips):
            raise EvaluationError(Errors.E520.format(
                problem=f"--n-train {n_train} does not split the {len(test_clips)} clips of --test into "
                "a training and a test part",
                fix=f"Pass an --n-train between 1 and {len(test_clips) - 1}.",
            ))
        train, test = split_by_clip(test_clips, n_train)
    else:
        train, test = list(train_clips), list(test_clips)
    for name, value in (("--limit-test", limit_test), ("--limit-train", limit_train)):
        if value is not None and value < 1:
            raise EvaluationError(Errors.E520.format(
                problem=f"{name} {value} keeps no clip", fix=f"Pass {name} 1 or more, or leave it out.",
            ))
    if limit_test is not None:
        test = test[:limit_test]
    if limit_train is not None:
        train = train[:limit_train]
    return SplitCollections(test, train)


def load_split(
    test_path: str | os.PathLike[str],
    train_path: str | os.PathLike[str] | None,
    *,
    n_train: int | None,
    limit_test: int | None = None,
    limit_train: int | None = None,
) -> SplitCollections:
    """Read the files and split them (see :func:`split_collections`).

    A ``train_path`` naming the test file itself means "split it": ``n_train`` is then required.

    Raises:
        DataFileError: a file is missing (E487).
        EvaluationError: a file that is no caption CSV (E489-E491), or bad split options (E520).

    Example:
        >>> load_split("/nonexistent.csv", None, n_train=1)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        fortekit.errors.DataFileError: [E487] The caption file not found: /nonexistent.csv. ...
    """
    test_clips = load_collection(test_path)
    same = train_path is not None and Path(train_path).resolve() == Path(test_path).resolve()
    if train_path is not None and not same:
        if n_train is not None:
            raise EvaluationError(Errors.E520.format(
                problem="--n-train splits the --test file, but --train names another file",
                fix="Leave out --n-train (use --limit-train to train on fewer clips), or leave out --train.",
            ))
        return split_collections(
            test_clips, load_collection(train_path), n_train=None,
            limit_test=limit_test, limit_train=limit_train,
        )
    if same and n_train is None:
        raise EvaluationError(Errors.E520.format(
            problem="--train and --test are the same file and nothing splits it (the test part would be "
            "trained on)",
            fix="Add --n-train N: the first N clips train, the rest test.",
        ))
    return split_collections(
        test_clips, None, n_train=n_train, limit_test=limit_test, limit_train=limit_train,
    )


@dataclass
class EmbeddedCollection:
    """One part (test or training) as a retrieval task, embedded and parsed.

    Attributes:
        task: queries (caption 1), item texts, targets, clip ids.
        queries: f_T(q) of each query, (n, d) float32 on the CPU, unit rows.
        items: each item's embedding, (n, d) float32 on the CPU, unit rows.
        index: an :class:`~fortekit.search.index.audio_index.AudioIndex` of the items (ids, the item
            caption, its predicate set), for the proxy anchors and the anchor bank.
        query_predicates: Pred(Pi(q)) of each query (Stage 3 without Stage 1).
        query_formulas: Pi(q) of each query (formula scoring without Stage 1); None where
            a query could not be parsed.
        item_captions: the caption of each item that Stage 3 parses (its first item text).
        seconds: wall time of each preparation step: encode_queries, encode_items,
            parse_queries, parse_items.
    """

    task: RetrievalTask
    queries: torch.Tensor
    items: torch.Tensor
    index: AudioIndex
    query_predicates: list[frozenset[PredicateSymbol]]
    item_captions: list[str]
    seconds: dict[str, float]
    query_formulas: list[Formula | None] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.task)

    @property
    def item_predicates(self) -> list[frozenset[PredicateSymbol]]:
        """Pred(Pi(item caption)) of each item (parsed once, when the index was built)."""
        return self.index.predicate_sets


def item_embeddings(backbone: Backbone, item_texts: Sequence[tuple[str, ...]]) -> torch.Tensor:
    """Each item's texts embedded and averaged, then normalised to unit length.

    The item is :func:`fortekit.search.index.build.caption_means`'s, the one that
    ``fortekit index build`` makes of the same clip.

    Args:
        backbone: the text encoder.
        item_texts: per item, the texts that stand in for its audio (one for ``"single"``).

    Returns:
        (items, d) float32 on the CPU.

    Example:
        >>> from fortekit.plugins import get_backbone
        >>> minilm = get_backbone("minilm", device="cpu")  # doctest: +SKIP
        >>> item_embeddings(minilm, [("a", "b"), ("c",)]).shape  # doctest: +SKIP
        torch.Size([2, 384])
    """
    import torch

    from fortekit.search.index.build import caption_means

    return torch.from_numpy(caption_means(backbone, item_texts))


def embed_collection(
    clips: Sequence[Clip], backbone: Backbone, *, item_text: ItemText = "mean", what: str = "test"
) -> EmbeddedCollection:
    """The caption-indexed task of ``clips``, embedded through ``backbone`` and parsed.

    Args:
        clips: the clips of one part.
        backbone: the text encoder (``minilm`` by default).
        item_text: ``"mean"`` (captions 2-5 averaged) or ``"single"`` (caption 2).
        what: the part's name, for messages ("test" or "training").

    Returns:
        The :class:`EmbeddedCollection`.

    Raises:
        EvaluationError: fewer than 2 usable clips (E523), or none with 2 captions (E492).

    Example:
        >>> part = embed_collection(clips, get_backbone("minilm", device="cpu"))  # doctest: +SKIP
        >>> part.items.shape  # doctest: +SKIP
        torch.Size([40, 384])
    """
    from fortekit.search.index.audio_index import AudioIndex
    from fortekit.search.index.item_captions import (
        item_formulas_from_captions,
        item_predicates_from_captions,
        predicate_sets,
    )

    task = retrieval_task(clips, item_captions=item_text)
    if len(task) < 2:
        raise EvaluationError(Errors.E523.format(needed=2, what=f"{what} clips", found=len(task)))
    seconds: dict[str, float] = {}
    # Warm-up, so the timings below exclude loading the encoder's and spaCy's weights.
    backbone.encode_text(task.queries[:1])
    item_predicates_from_captions(task.queries[:1])
    tick = time.perf_counter()
    queries = backbone.encode_text(task.queries).detach().to("cpu").float()
    queries = _unit(queries)
    seconds["encode_queries"] = time.perf_counter() - tick
    tick = time.perf_counter()
    items = item_embeddings(backbone, task.item_texts)
    seconds["encode_items"] = time.perf_counter() - tick
    tick = time.perf_counter()
    query_formulas = item_formulas_from_captions(task.queries)
    query_predicates = predicate_sets(query_formulas)
    seconds["parse_queries"] = time.perf_counter() - tick
    captions = [texts[0] for texts in task.item_texts]
    tick = time.perf_counter()
    index = AudioIndex.from_captions(
        task.clip_ids, captions, backbone.name, embeddings=items.numpy(), parse_captions=True,
    )
    seconds["parse_items"] = time.perf_counter() - tick
    return EmbeddedCollection(
        task, queries, items, index, query_predicates, captions, seconds, query_formulas,
    )


def _unit(rows: torch.Tensor) -> torch.Tensor:
    import torch

    return torch.nn.functional.normalize(rows, dim=1)
