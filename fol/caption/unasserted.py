"""Sounds a query names without asserting them: asked about, supposed, or marked by a sign.

Three contexts leave a sound's presence open, and in both the words that say so are ones the
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
* **A modal or a condition** is nonveridical too (Giannakidou 1998, ch. 3; FactBank's
  "possible" and "probable" values for events under a modal, its uncommitted value for the
  antecedent of a conditional). A sound in the clause of a modal of possibility or of the
  hypothetical "would" ("B would ruin it", "B can get lost", "I'd sooner have silence than B")
  or of a conditional or interrogative subordinator ("unless B is running", "if B starts") is
  said to be possible, wished away or supposed, not heard. Left alone: a modal of necessity or
  prediction, which commits to its event ("B must be running as well"; Palmer 2001, *Mood and
  Modality*, ch. 2); a modal of perception, which is evidential ("B can be heard": a caption's
  way of saying it is heard); a clause of purpose ("so that the tank can fill"); a comparison
  of manner ("as if someone is knocking"); a word the tagger took for a modal that no bare verb
  follows ("a tin can rattles"); and a clause that holds the query's first sound ("a dog could
  be barking"), which is the request itself.
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
from functools import cache

from fortekit.fol.caption.negation import ScopeNote
from fortekit.fol.caption.negation_denial import later_sounds
from fortekit.fol.caption.result import PredicateRecord
from fortekit.fol.caption.tokens import Tok, TokenView

__all__ = [
    "IRREALIS_REASON",
    "QUESTION_REASON",
    "SIGN_REASON",
    "irrealis_sounds",
    "questioned_sounds",
    "signed_sounds",
    "unasserted_sounds",
]

QUESTION_REASON = "sound asked about in a question beside a declarative request"
SIGN_REASON = "sound a sign the grammar does not read follows"
IRREALIS_REASON = "sound in the clause of a modal or a condition, said to be possible, not heard"
#: The subordinators of a condition or an indirect question: what their clause says is supposed.
_CONDITIONAL_MARKS = frozenset({"if", "unless", "whether"})
#: The modals of possibility and the hypothetical "would", which leave the event open; the modals of
#: necessity and prediction ("B must be running as well", "should", "will") commit to it
#: (Palmer 2001, *Mood and Modality*, ch. 2; FactBank's "possible" against "probable").
_OPEN_MODALS = frozenset({"can", "could", "ca", "may", "might", "would", "'d", "wo"})
#: The subordinators of purpose: "so that the tank can fill" describes what the action is for.
_PURPOSE_MARKS = frozenset({"so", "that"})
_SUBJECTS = frozenset({"nsubj", "nsubjpass", "expl", "csubj"})
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
    sounds = later_sounds(records) if "?" in text else None
    if sounds is None:
        return frozenset(), ()
    nouns, first = sounds
    sentences = _sentences(text)

    def asked(record: PredicateRecord) -> bool:
        return any(start <= record.span[0] < end and question for start, end, question in sentences)

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
    sounds = later_sounds(records) if signs else None
    if sounds is None:
        return frozenset(), ()
    nouns, first = sounds
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


@cache
def _perception_lemmas() -> frozenset[str]:
    from fortekit.fol.caption.negation_lexicon import load_negation_lexicon

    return load_negation_lexicon().lemmas("perception_verb") | {"hear", "listen", "sound"}


def _irrealis_heads(tokens: Sequence[Tok]) -> list[int]:
    """The heads of the clauses a modal auxiliary or a conditional subordinator governs (a modal of
    perception left out: "can be heard")."""
    perception = _perception_lemmas()
    marks: dict[int, set[str]] = {}
    for tok in tokens:
        if tok.dep == "mark":
            marks.setdefault(tok.head, set()).add(tok.lower)
    subjects = {tok.head for tok in tokens if tok.dep in _SUBJECTS and tok.head != tok.i}
    heads = []
    for tok in tokens:
        if tok.head == tok.i or tok.head not in subjects:
            continue  # a modal or a condition opens a clause with a subject of its own
        head = tokens[tok.head]
        if tok.tag == "MD" and tok.dep in ("aux", "auxpass") and tok.lower in _OPEN_MODALS:
            if (head.lemma in perception or marks.get(head.i, set()) & _PURPOSE_MARKS
                    or not _bare_verb_after(tokens, tok.i) or _compound_noun(tokens, tok.i)):
                continue  # "can be heard"; "so that it can drain"; "a tin can rattles" (a noun)
            heads.append(head.i)
        elif tok.dep == "mark" and tok.lower in _CONDITIONAL_MARKS:
            if tok.i > 0 and tokens[tok.i - 1].lower in ("as", "even"):
                continue  # "as if it were a drum" compares a manner; "even if" concedes
            heads.append(head.i)
    return heads


def _compound_noun(tokens: Sequence[Tok], k: int) -> bool:
    """Whether a word the tagger took for a modal ends a compound noun WordNet lists with the word
    before it ("trash can", "watering can")."""
    from fortekit.vocab.wordnet import load_wordnet

    # WordNet's own index files (WordNet.has), not NLTK's reader, which takes seconds to open
    return k > 0 and load_wordnet().has(f"{tokens[k - 1].lower}_{tokens[k].lower}", "NOUN")


def _bare_verb_after(tokens: Sequence[Tok], k: int) -> bool:
    """Whether a modal is followed, past adverbs and "not", by a verb's bare form, as every
    modal is ("would ruin", "'d sooner have"), unlike the noun the tagger may take for one."""
    for tok in tokens[k + 1:]:
        if tok.pos in ("ADV", "PART"):
            continue
        return tok.tag == "VB"
    return False


def _sentence_of(tokens: Sequence[Tok], k: int) -> set[int]:
    """The indices of token ``k``'s sentence (split where :data:`_SENTENCE_END` splits the text):
    the tagger may hang two sentences on one root, and a modal's clause ends with its sentence."""
    start = k
    while start > 0 and not _SENTENCE_END.fullmatch(tokens[start - 1].text):
        start -= 1
    end = k
    while end + 1 < len(tokens) and not _SENTENCE_END.fullmatch(tokens[end].text):
        end += 1
    return set(range(start, end + 1))


def irrealis_sounds(
    records: Sequence[PredicateRecord], view: TokenView | None
) -> tuple[frozenset[str], tuple[ScopeNote, ...]]:
    """The variables of the sounds in the clause of a modal or a condition (not the first sound's).

    Args:
        records: the parse's records, in the formula's order.
        view: the caption's tokens and their tree (None: nothing to read).

    Returns:
        ``(variables, notes)`` as :func:`questioned_sounds`.

    Example:
        >>> from fortekit.fol.caption import parse_caption
        >>> result = parse_caption("a dog barking; a car horn would ruin it")
        >>> str(result.formula), [note.scope for note in result.unresolved]
        ('∃x [Dog(x) ∧ Barking(x)]', ['car horn'])
        >>> parse_caption("a man can be heard talking as a car horn honks").unresolved
        ()
    """
    if not view:
        return frozenset(), ()
    tokens = view.tokens
    heads = _irrealis_heads(tokens)
    sounds = later_sounds(records) if heads else None
    if sounds is None:
        return frozenset(), ()
    nouns, first = sounds
    found: dict[str, int] = {}
    for head in heads:
        clause = set(view.subtree(head)) & _sentence_of(tokens, head)
        if clause.intersection(nouns[first].tokens):
            continue  # the request itself is supposed ("a dog could be barking")
        for name, record in nouns.items():
            if name != first and clause.intersection(record.tokens):
                found.setdefault(name, head)
    notes = tuple(
        ScopeNote(tokens[head].text, "irrealis", "modal", "clause", "unresolved", nouns[name].source,
                  (tokens[head].start, tokens[head].end), False, IRREALIS_REASON)
        for name, head in sorted(found.items(), key=lambda item: nouns[item[0]].span)
    )
    return frozenset(found), notes


def unasserted_sounds(
    text: str, records: Sequence[PredicateRecord], view: TokenView | None = None
) -> tuple[frozenset[str], tuple[ScopeNote, ...]]:
    """The sounds a question, a modal or condition, or a sign leaves unsure
    (:func:`questioned_sounds`, :func:`irrealis_sounds`, :func:`signed_sounds`).

    Example:
        >>> from fortekit.fol.caption import parse_caption
        >>> unasserted_sounds("a dog barks", parse_caption("a dog barks").predicates)
        (frozenset(), ())
    """
    asked, questions = questioned_sounds(text, records)
    supposed, modals = irrealis_sounds(records, view)
    signed, signs = signed_sounds(text, records)
    return asked | supposed | signed, (*questions, *modals, *signs)
