"""Sounds a query names without asserting them: asked about in a question, or marked by a sign.

Two contexts leave a sound's presence open, and in both the words that say so are ones the
grammar does not read, so that read word by word the sound is asserted and formula scoring
would promote it. Such a sound is *unsure*: its clause leaves the formula and
``ParseResult.unresolved`` says why; the whole-query similarity keeps it, as for any negation
the parser cannot place. The caption's first sound is never unsure (what a query opens with is
what it asks for).

* **A question** is *nonveridical*: "is there thunder?" commits its writer neither to thunder
  nor to its absence (Giannakidou 1998, *Polarity Sensitivity as (Non)veridical Dependency*,
  ch. 3; FactBank marks an event in an interrogative as uncommitted, "Uu": Saurí & Pustejovsky
  2009, *FactBank: a corpus annotated with event factuality*, §3). A query that states what it
  wants and then asks about another sound ("rain on a roof; thunder? who needs it") has said
  nothing about that sound's presence by asking. A whole query that is a question is a request
  ("dogs barking?", "is that a train horn?"): it asks for what it names, as a search box's
  question does. So a question makes a sound unsure only when the query's first sound stands in
  a sentence that is not one. Sentences end at ". ! ? ;" and at a line break; a sentence is a
  question when it ends with "?".
* **A sign** (a pictograph or symbol, Unicode's general category So: an emoji, a dingbat) is a
  word of its own that the tagger reads as nothing: a thumbs-down, a cross or a frown after a
  sound says something of it that the grammar cannot read, and a sign of approval, of music or
  of weather says something else. The sound a sign follows (the nearest before it, with no
  other sound between) is unsure, as for any word the parser does not understand
  (docs/formula_scoring.md, "Words the parser does not understand").

Example:
    >>> from fortekit.fol.caption import parse_caption
    >>> result = parse_caption("rain falling on a roof; thunder? who needs it")
    >>> str(result.formula)
    '∃x ∃y [Rain(x) ∧ Falling(x) ∧ On(x, y) ∧ Roof(y)]'
    >>> [(note.scope, note.reason) for note in result.unresolved]
    [('thunder', 'sound asked about in a question beside a declarative request')]
    >>> str(parse_caption("is that a dog barking?").formula)
    '∃x [Dog(x) ∧ Barking(x)]'
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from fortekit.fol.caption.negation import ScopeNote
from fortekit.fol.caption.negation_denial import sound_entities
from fortekit.fol.caption.result import PredicateRecord

__all__ = ["QUESTION_REASON", "SIGN_REASON", "questioned_sounds", "signed_sounds", "unasserted_sounds"]

QUESTION_REASON = "sound asked about in a question beside a declarative request"
SIGN_REASON = "sound a sign the grammar does not read follows"
#: A sentence ends at . ! ? ; or a line break (the splits negation_reach uses, and the line).
_SENTENCE_END = re.compile(r"[.!?;\n]+")


def _sentences(text: str) -> list[tuple[int, int, bool]]:
    """Each sentence's character span and whether it is a question (ends with "?")."""
    spans, start = [], 0
    for match in _SENTENCE_END.finditer(text):
        spans.append((start, match.end(), "?" in match.group()))
        start = match.end()
    if start < len(text):
        spans.append((start, len(text), False))
    return spans


def questioned_sounds(
    text: str, records: Sequence[PredicateRecord]
) -> tuple[frozenset[str], tuple[ScopeNote, ...]]:
    """The variables of the sounds asked about in a question beside a declarative request.

    Args:
        text: the caption or query.
        records: the parse's records, in the formula's order.

    Returns:
        ``(variables, notes)``: the unsure sounds' variables (they and what is said of them
        leave the formula) and one unresolved :class:`~fortekit.fol.caption.negation.ScopeNote`
        each; two empty values for a caption with no "?" (almost all).

    Example:
        >>> from fortekit.fol.caption import parse_caption
        >>> questioned_sounds("a dog barks", parse_caption("a dog barks").predicates)
        (frozenset(), ())
    """
    if "?" not in text:
        return frozenset(), ()
    nouns = sound_entities(records)
    if len(nouns) < 2:
        return frozenset(), ()
    sentences = _sentences(text)

    def asked(record: PredicateRecord) -> bool:
        return any(start <= record.span[0] < end and question for start, end, question in sentences)

    first = min(nouns, key=lambda name: nouns[name].span)
    if asked(nouns[first]):
        return frozenset(), ()  # the query itself is a question: a request for what it names
    found = sorted((name for name in nouns if name != first and asked(nouns[name])),
                   key=lambda name: nouns[name].span)
    notes = tuple(
        ScopeNote("?", "question", "interrogative", "question", "unresolved", nouns[name].source,
                  _mark(text, nouns[name].span[1]), False, QUESTION_REASON)
        for name in found
    )
    return frozenset(found), notes


def _mark(text: str, after: int) -> tuple[int, int]:
    """The span of the question mark that ends the sentence a sound stands in."""
    at = text.find("?", after)
    return (at, at + 1) if at >= 0 else (after, after)


def _signs(text: str) -> list[int]:
    """The character offsets of the signs (Unicode category So) in ``text``."""
    return [k for k, char in enumerate(text) if not char.isascii() and unicodedata.category(char) == "So"]


def signed_sounds(
    text: str, records: Sequence[PredicateRecord]
) -> tuple[frozenset[str], tuple[ScopeNote, ...]]:
    """The variables of the sounds a sign follows (the nearest sound before each sign).

    Args:
        text: the caption or query.
        records: the parse's records, in the formula's order.

    Returns:
        ``(variables, notes)`` as :func:`questioned_sounds`; two empty values for a caption with
        no sign (almost all).

    Example:
        >>> from fortekit.fol.caption import parse_caption
        >>> result = parse_caption("a dog barking \N{THUMBS UP SIGN} birds \N{THUMBS DOWN SIGN}")
        >>> str(result.formula), [(note.cue, note.scope) for note in result.unresolved]
        ('∃x [Dog(x) ∧ Barking(x)]', [('\N{THUMBS DOWN SIGN}', 'birds')])
        >>> signed_sounds("a dog barks", parse_caption("a dog barks").predicates)
        (frozenset(), ())
    """
    signs = _signs(text)
    if not signs:
        return frozenset(), ()
    nouns = sound_entities(records)
    if len(nouns) < 2:
        return frozenset(), ()
    first = min(nouns, key=lambda name: nouns[name].span)
    found: dict[str, int] = {}
    for at in signs:
        before = [name for name in nouns if nouns[name].span[1] <= at]
        if before:
            name = max(before, key=lambda name: nouns[name].span)
            if name != first:
                found.setdefault(name, at)
    notes = tuple(
        ScopeNote(text[at], "sign", "sign", "post-head", "unresolved", nouns[name].source,
                  (at, at + 1), False, SIGN_REASON)
        for name, at in sorted(found.items(), key=lambda item: item[1])
    )
    return frozenset(found), notes


def unasserted_sounds(
    text: str, records: Sequence[PredicateRecord]
) -> tuple[frozenset[str], tuple[ScopeNote, ...]]:
    """The sounds a question or a sign leaves unsure (:func:`questioned_sounds`, :func:`signed_sounds`).

    Example:
        >>> from fortekit.fol.caption import parse_caption
        >>> unasserted_sounds("a dog barks", parse_caption("a dog barks").predicates)
        (frozenset(), ())
    """
    asked, questions = questioned_sounds(text, records)
    signed, signs = signed_sounds(text, records)
    return asked | signed, (*questions, *signs)
