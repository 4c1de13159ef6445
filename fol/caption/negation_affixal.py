"""Affixal negation: negatively prefixed participles and adjectives and what they take.

An affixal cue ("unaccompanied", "non-inclusive", "impossible") negates its stem, and the
construction around it says what that means for a sound phrase (Huddleston & Pullum 2002,
ch. 19 §5 and ch. 9 §8; the affixal cues of ConanDoyle-neg, Morante & Daelemans 2012):

* un-/non- + the past participle of a verb, with a by-agent ("unmarred by B"): the adjectival
  passive says B did not act on A, so B is not heard (the privative-participle cue, found here
  for words the lexicon does not list);
* the same with a verb of hiding ("unobscured by B"): B did not mask A, which says nothing
  about whether B is there: the by-object is *unsure*, never asserted (issue 42: an affixal
  cue whose scope the parser cannot decide is never read as an assertion);
* un-/non- + an adjective of containing or perceiving, written whole or with the prefix split
  off by a hyphen ("non-inclusive of B", "un-hearable"): its of/to object is excluded; with no
  object it is said of its noun, as an absence adjective is ("B unnoticeable");
* an adjective of impossibility with a verb of perceiving ("B impossible to hear"): in the
  tough construction the adjective's subject is what is not perceived (``tough_complement``);
  whatever happens is possible, so "impossible to V" entails not V (the contrapositive);
* the suffix -less on a noun written with a hyphen ("bird-less"): the noun is excluded where it
  names a sound class (``suffix_stem``).

Example:
    >>> from fortekit.fol.caption import parse_caption
    >>> str(parse_caption("a dog barking, with birds chirping impossible to hear").formula)
    '∃x [Dog(x) ∧ Barking(x) ∧ ¬∃y [Bird(y) ∧ Chirping(y)]]'
    >>> [n.effect for n in parse_caption("a horn unobscured by the wind").scopes]
    ['unresolved']
"""

from __future__ import annotations

from fortekit.fol.caption.lemmas import WordNetLemmas
from fortekit.fol.caption.negation_context import Match, ScopeContext, Verdict
from fortekit.fol.caption.negation_lexical import exclusion, names_sound_class, not_a_cue, sound_object
from fortekit.fol.caption.negation_rules import Cue, NegationRules
from fortekit.fol.caption.tokens import TokenView

__all__ = [
    "AFFIXAL_RULES",
    "UNSURE_AGENT",
    "affixal_matches",
    "suffix_stem",
    "tough_complement",
    "unsure_agent",
]

#: Verb files whose un-participle's by-phrase names a perceiver or a stimulus that is there
#: ("unnoticed by B", "unfazed by B", "unimpressed by B"): no privation of B.
_EXPERIENCER_LEXNAMES = frozenset({"verb.emotion", "verb.cognition", "verb.perception"})
_NEGATIVE_PREFIXES = ("non-", "non", "un")
#: Prefixes the tokenizer splits off with a hyphen ("non - inclusive").
_SPLIT_PREFIXES = frozenset({"non", "un"})
#: Prepositions that take the object of an affixal adjective of containing or perceiving.
_STEM_PREPOSITIONS = frozenset({"of", "to", "by", "with"})

#: The cue of an affixal negation whose by-object is neither excluded nor asserted.
UNSURE_AGENT = Cue(
    "affixal-unsure",
    "privative_participle",
    frozenset(),
    (),
    frozenset(),
    ("unsure_agent",),
)


def _participle_base(word: str, lex: WordNetLemmas) -> tuple[str, str] | None:
    """(prefix, verb) for un-/non- + the past participle of a verb WordNet knows, or None.

    "unfolded" is the reversative verb "unfold" (WordNet knows the form as a verb's and no
    adjective reads it), so it is no negation.
    """
    prefix = next((p for p in _NEGATIVE_PREFIXES if word.startswith(p) and len(word) > len(p) + 3), None)
    if prefix is None or not word.endswith(("ed", "en", "t", "n")):
        return None
    if lex.morphy(word, "VERB") and not lex.morphy(word, "ADJ"):
        return None
    base = lex.verb_base(word[len(prefix) :])
    return None if base is None else (prefix, base)


def _prefixed_participle(
    view: TokenView, k: int, rules: NegationRules, lex: WordNetLemmas, privative: Cue
) -> Match | None:
    """'unmarred by B' (B excluded), 'unobscured by B' (B unsure), 'unfazed by B' (no cue)."""
    tok = view.tokens[k]
    found = _participle_base(tok.lower, lex)
    if found is None:
        return None
    base = found[1]
    if base in rules.words("obscuring_verbs"):
        return Match(UNSURE_AGENT, [k])
    if lex.first_lexname(base, "VERB") in _EXPERIENCER_LEXNAMES:
        return None  # the by-phrase names a perceiver or a stimulus, which is there
    return Match(privative, [k])


def _split_prefix(view: TokenView, k: int, rules: NegationRules) -> Match | None:
    """'non - inclusive of B': a split prefix on a stem of containing or perceiving."""
    tokens = view.tokens
    if k + 2 >= len(tokens) or tokens[k].lower not in _SPLIT_PREFIXES or tokens[k + 1].lower != "-":
        return None
    if tokens[k].end != tokens[k + 1].start or tokens[k + 1].end != tokens[k + 2].start:
        return None  # "non - stop" written with spaces is no prefix
    return _stem_match(view, [k, k + 1, k + 2], tokens[k + 2].lower, rules)


def _stem_match(view: TokenView, indices: list[int], stem: str, rules: NegationRules) -> Match | None:
    tokens = view.tokens
    after = indices[-1] + 1
    if stem not in rules.words("privative_stems"):
        return None
    if after >= len(tokens) or tokens[after].lower not in _STEM_PREPOSITIONS:
        # "B unnoticeable", "B is non-perceptible": with no object the prefixed adjective is
        # said of its noun, as an absence adjective is ("B inaudible")
        absence = rules.cue_for_word("inaudible")
        return None if absence is None else Match(absence, indices)
    cue = rules.cue_for_word("free")  # the privative adjective: its scope rules read "of B"
    return None if cue is None else Match(cue, indices)


def _joined_prefix(view: TokenView, k: int, rules: NegationRules) -> Match | None:
    """'noninclusive of B', 'unhearable by B': the prefix written on the stem."""
    word = view.tokens[k].lower
    for prefix in _NEGATIVE_PREFIXES:
        if word.startswith(prefix) and len(word) > len(prefix) + 3:
            return _stem_match(view, [k], word[len(prefix) :], rules)
    return None


def affixal_matches(view: TokenView, rules: NegationRules, lex: WordNetLemmas) -> list[Match]:
    """The affixal cues of a caption that the rule file does not list word by word.

    Args:
        view: the caption's tokens.
        rules: the negation rules (their ``privative_stems`` and ``obscuring_verbs`` lists).
        lex: WordNet questions.

    Returns:
        The matches, in order (none where the rule file lists the word itself).

    Example:
        >>> from fortekit.fol.caption import parse_caption
        >>> str(parse_caption("a bell, non-inclusive of any voices").formula)
        '∃x [Bell(x) ∧ ¬∃y Voice(y)]'
    """
    privative = rules.cue_for_word("unaccompanied")
    tokens = view.tokens
    found: list[Match] = []
    k = 0
    while k < len(tokens):
        tok = tokens[k]
        match: Match | None = None
        if rules.cue_for_word(tok.lower) is None:
            match = _split_prefix(view, k, rules) or _joined_prefix(view, k, rules)
            by_follows = k + 1 < len(tokens) and tokens[k + 1].lower == "by"
            if match is None and privative is not None and by_follows:
                match = _prefixed_participle(view, k, rules, lex, privative)
        if match is not None:
            found.append(match)
            k = match.last + 1
        else:
            k += 1
    return found


def unsure_agent(ctx: ScopeContext, match: Match) -> Verdict | None:
    """'a horn unobscured by the wind': the by-object is neither excluded nor asserted."""
    view = ctx.view
    by = match.last + 1
    if by >= len(view) or view[by].lower != "by" or not ctx.same_segment(by, match.last):
        return not_a_cue
    obj = ctx.first_after(by)
    if obj is None or not ctx.nominal(obj, by):
        return not_a_cue
    verdict = Verdict("unresolved", "participial", reason="affixal cue of unknown effect on its agent")
    verdict.target = ctx.noun_head(obj.i)
    verdict.cue_tokens = [by]
    return verdict


def tough_complement(ctx: ScopeContext, match: Match) -> Verdict | None:
    """'B impossible to hear', 'the birds are impossible to make out': the subject is not heard.

    An adjective of impossibility whose infinitive is a verb of perceiving with no object of
    its own is a tough construction: its subject is the verb's understood object. With an
    object ("impossible to hear B") the implicative rule reads it; with another verb, too.
    """
    view = ctx.view
    tok = view[match.first]
    to = match.last + 1
    if to + 1 >= len(view) or view[to].lower != "to":
        return None
    verb = view[to + 1]
    perception = ctx.words("perception")
    particles = [c.lower for c in view.children(verb.i, ("prt",))]
    if verb.lemma not in perception and not any(f"{verb.lemma} {p}" in perception for p in particles):
        return None
    if sound_object(ctx, verb) is not None:
        return None
    last = max([verb.i, *(c.i for c in view.children(verb.i, ("prt",)))])
    after = ctx.first_after(last)
    if after is not None and ctx.nominal(after, verb.i):
        return None
    noun = ctx.subject_of(tok.i) or ctx.noun_before(match.first)
    if noun is None or not ctx.is_noun(noun):
        return None
    tokens = [to, verb.i, *(c.i for c in view.children(verb.i, ("prt",)))]
    tokens += [c.i for c in view.children(tok.i, ("aux", "cop")) if c.i < tok.i]
    return exclusion(ctx, match, noun, "absolute", tokens)


def suffix_stem(ctx: ScopeContext, match: Match) -> Verdict | None:
    """'bird-less', 'people-less': the suffix -less written on a noun with a hyphen excludes
    the noun where it names a sound class; "less" as a word ("less traffic") is no cue."""
    view = ctx.view
    k = match.first
    if not (
        k >= 2
        and view[k - 1].lower == "-"
        and view[k - 1].start == view[k - 2].end
        and view[k - 1].end == view[k].start
        and ctx.is_noun(view[k - 2])
        and names_sound_class(ctx, view[k - 2])
    ):
        return not_a_cue
    return Verdict("exclude", "post-nominal", view[k - 2].i, cue_tokens=[k - 1])


#: The scope rules of this module, by the names ``grammars/negation.toml`` uses.
AFFIXAL_RULES = {
    "unsure_agent": unsure_agent,
    "tough_complement": tough_complement,
    "suffix_stem": suffix_stem,
}
