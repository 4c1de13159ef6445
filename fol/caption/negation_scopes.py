"""The scope rules of the negation pass: one function per construction of docs/negation.md.

Each rule reads a cue match in its context and returns a :class:`Verdict` (the effect, the
construction and the tokens it takes) or None when the construction is not there; the
cue's entry in ``grammars/negation.toml`` names the rules it tries, in order.

Example:
    >>> sorted(SCOPE_RULES)[:4]
    ['affix_stem', 'ambiguous', 'approximate', 'by_object']
"""

from __future__ import annotations

from collections.abc import Callable

from fortekit.fol.caption.negation_affixal import AFFIXAL_RULES
from fortekit.fol.caption.negation_context import NOUNS, VERBS, Match, ScopeContext, Verdict
from fortekit.fol.caption.negation_elliptical import ELLIPTICAL_RULES
from fortekit.fol.caption.negation_imperative import IMPERATIVE_RULES
from fortekit.fol.caption.negation_lexical import (
    LEXICAL_RULES,
    absolute_particle,
    closes_noun_phrase,
    is_absence_word,
    locative_position,
    names_sound_class,
    not_a_cue,
    sound_object,
)
from fortekit.fol.caption.negation_lexical import absolute_preposition as _absolute_preposition
from fortekit.fol.caption.negation_lexical import exclusion as _exclusion
from fortekit.fol.caption.negation_lexical import is_attributive as _is_attributive
from fortekit.fol.caption.negation_removal import REMOVAL_RULES
from fortekit.fol.caption.negation_rules import Cue
from fortekit.fol.caption.negation_search import search_clause
from fortekit.fol.caption.negation_unplaced import UNPLACED_RULES
from fortekit.fol.caption.tokens import SUBJECT_DEPS, Tok, reattach

__all__ = ["SCOPE_RULES", "ScopeRule", "not_a_cue"]

ScopeRule = Callable[[ScopeContext, Match], "Verdict | None"]

_MODIFIER_DEPS = frozenset({"amod", "compound", "nmod", "npadvmod"})
_STRICT_CLASSES = frozenset({"determiner", "pronoun", "particle", "preposition", "lacking_verb"})
_FINITE_TAGS = frozenset({"VBZ", "VBD", "VBP", "MD"})
_ANAPHORS = frozenset({"it", "they", "he", "she"})
_DEFINITES = frozenset({"the", "their", "its", "his", "her", "these", "those", "our", "my", "your"})
_GOVERNING = frozenset({"determiner", "preposition", "privative_adjective", "absence_noun"})


def _holder_before(ctx: ScopeContext, i: int) -> Tok | None:
    """The token whose entity a denied predicate after ``i`` belongs to.

    A preposition's head ("a car passes without stopping": the car); else the nearest verb
    before the cue, in its segment or the one before, standing for its subject (VP ellipsis:
    "footsteps crunching through foliage and not getting closer" denies Close of the
    footsteps, not of the foliage); else the nearest noun.
    """
    view = ctx.view
    cue = view[i]
    found: Tok | None = None
    if cue.pos in ("ADP", "SCONJ") and cue.head != cue.i and cue.head < i and ctx.same_segment(cue.head, i):
        found = view[cue.head]
    nearest_noun: Tok | None = None
    if found is None:
        for k in range(i - 1, -1, -1):
            tok = view[k]
            if ctx.segment[k] >= 0 and ctx.segment[k] < ctx.segment[i] - 1:
                break
            if (
                tok.pos in VERBS
                and tok.lemma not in ("be", "have", "do")
                and tok.tag != "MD"
                and tok.dep not in _MODIFIER_DEPS
            ):
                found = tok
                break
            if nearest_noun is None and (ctx.is_noun(tok) or tok.pos == "ADJ"):
                nearest_noun = tok
        if found is None:
            found = nearest_noun
    for _ in range(len(view)):  # "drips onto a roof without splashing": the verb, not the roof
        if found is None or found.dep != "pobj" or not ctx.same_segment(found.head, found.i):
            break
        preposition = view[found.head]
        if preposition.head == preposition.i:
            break
        found = view[preposition.head]
    if found is not None and not ctx.is_noun(found):
        subject = ctx.subject_of(found.i)
        if subject is not None and (ctx.is_noun(subject) or subject.pos == "PRON"):
            return subject
    return found


def _construction(ctx: ScopeContext, match: Match) -> str:
    """ "elliptical" when the cue opens its segment and the segment has no verb of its own."""
    view = ctx.view
    members = ctx.segment_tokens(match.first)
    before = [
        k
        for k in members
        if k < match.first
        and view[k].pos not in ("ADV", "CCONJ", "DET", "PART")
        and view[k].lower not in ctx.words("phrase_openers")
    ]
    return "elliptical" if not before else "pre-nominal"


# -- the rules -------------------------------------------------------------------------------
def exceptive(ctx: ScopeContext, match: Match) -> Verdict | None:
    """'nothing but rain', 'no sound except rain': the exceptive's object is asserted."""
    cue = match.entry
    if isinstance(cue, Cue) and cue.cls == "preposition" and _after_absence(ctx, match):
        # "quiet except for the alarm": an exception to an absence is what is heard
        following = ctx.first_after(match.last)
        noun = (_noun_after_modifiers(ctx, following) or following) if following is not None else None
        if noun is not None and ctx.nominal(noun, match.last):  # "except for the distant barking"
            return Verdict("assert", "exceptive", noun.i, cue_tokens=list(range(match.first, match.last + 1)))
        return None
    if not isinstance(cue, Cue) or cue.cls not in ("determiner", "pronoun"):
        return None
    view, exceptives = ctx.view, ctx.words("exceptives")
    k = match.last + 1
    skipped: list[int] = []
    while (
        k < len(view)
        and ctx.same_segment(k, match.first)
        and (view[k].lower in ctx.words("filler_nouns") or view[k].lower in ("other", "else"))
    ):
        skipped.append(k)
        k += 1
    for size in (2, 1):
        words = " ".join(view[j].lower for j in range(k, min(k + size, len(view))))
        # "but" is also a segment boundary: the exceptive may sit on it
        if (
            k + size <= len(view)
            and words in exceptives
            and (ctx.segment[k] < 0 or ctx.same_segment(k, match.first))
        ):
            nxt = k + size
            while nxt < len(view) and view[nxt].lower in ctx.words("phrase_openers"):
                nxt += 1
            after = view[nxt] if nxt < len(view) and ctx.segment[nxt] >= 0 else None
            if after is None:
                return None
            tokens = [*skipped, *range(k, k + size)]
            ctx.nominal(after, nxt - 1)  # an exceptive governs a noun phrase: "nothing but insects/VBZ"
            pronoun = view[match.last]
            verb = view[pronoun.head]
            if (
                pronoun.dep in SUBJECT_DEPS
                and verb.i > after.i
                and ctx.is_verbal(verb)
                and ctx.same_segment(verb.i, after.i)
                and (ctx.is_noun(after) or after.i in ctx.pending)
            ):
                # "nothing but bells ringing": the pronoun subject stands for the excepted noun
                reattach(view, after.i, verb.i, "nsubj")
            elif ctx.is_noun(after) or after.i in ctx.pending:
                for participle in list(view.children(pronoun.i)):  # "nothing/ROOT but bells ringing/amod"
                    if (
                        participle.i > after.i
                        and ctx.is_verbal(participle)
                        and ctx.same_segment(participle.i, after.i)
                    ):
                        reattach(view, participle.i, after.i, "acl")
            return Verdict("assert", "exceptive", after.i, cue_tokens=tokens)
    return None


def _after_absence(ctx: ScopeContext, match: Match) -> bool:
    """Whether an exceptive cue ("except for", "but") follows an adjective of silence.

    "The room is quiet except for the alarm", "a silent room except for a clock": the
    exceptive's head, the word before it or an adjective of its head noun is one of
    ``exception_bases`` (*quiet*, *silent*, *empty*, ...).
    """
    if " ".join(ctx.view[k].lower for k in range(match.first, match.last + 1)) not in ctx.words(
        "exceptives"
    ) and ctx.view[match.first].lower not in ctx.words("exceptives"):
        return False
    absence = ctx.words("exception_bases")
    head = ctx.view[ctx.view[match.first].head]
    previous = ctx.view[match.first - 1] if match.first > 0 else None
    # "a silent room except for a clock": the exceptive hangs on the noun the adjective modifies
    modifiers = [child for child in ctx.view.children(head.i) if child.dep == "amod"]
    return any(
        tok is not None and (tok.lower in absence or tok.lemma in absence) and tok.pos in ("ADJ", "NOUN")
        for tok in (head, previous, *modifiers)
    )


def own_phrase(ctx: ScopeContext, match: Match) -> Verdict | None:
    """'nobody talking', 'nothing is heard', 'none of the birds': the pronoun's own entity.

    A partitive of a definite noun phrase with a predicate ("none of their voices
    dominant") presupposes the noun's referent: the predicate is denied for it.
    """
    view = ctx.view
    tok = view[match.last]
    nxt = ctx.first_after(match.last)
    if (
        tok.lower == "none"
        and nxt is not None
        and ctx.is_noun(nxt)
        and match.last + 2 < len(view)
        and view[match.last + 1].lower == "of"
        and view[match.last + 2].lower in _DEFINITES
    ):
        noun = view[ctx.noun_head(nxt.i)]
        # "none of the sound of B": a filler noun stands for the sound of its complement,
        # so the partitive has no referent of its own to presuppose
        filler = noun.lower in ctx.words("filler_nouns") or noun.lemma in ctx.words("filler_nouns")
        predicate = (
            None
            if filler
            else next(
                (
                    view[k]
                    for k in range(noun.i + 1, len(view))
                    if ctx.same_segment(k, noun.i)
                    and (view[k].pos in ("ADJ", "VERB") or view[k].tag in ("VBG", "VBN"))
                ),
                None,
            )
        )
        if predicate is not None:
            cue_tokens = [k for k in range(match.last + 1, noun.i) if not ctx.is_noun(view[k])]
            return Verdict("deny", "partitive", predicate.i, noun.i, cue_tokens=cue_tokens, rehead=True)
    if (
        tok.lower in ("none", "one")
        and nxt is not None
        and ctx.is_noun(nxt)
        and match.last + 1 < len(ctx.view)
        and ctx.view[match.last + 1].lower == "of"
    ):
        return _exclusion(ctx, match, nxt, "pre-nominal")
    if tok.lower == "one" and len(match.tokens) > 1 and nxt is not None and ctx.is_noun(nxt):
        return _exclusion(ctx, match, nxt, "pre-nominal")  # "not one bird"
    if (
        tok.lower in ("nothing", "none")
        and match.last + 1 < len(view)
        and view[match.last + 1].lower == "from"
        and nxt is not None
        and ctx.is_noun(nxt)
    ):
        # "nothing from the birds": no sound from its source; the source is not heard
        source = next((c for c in view.children(match.last + 1) if c.dep == "pobj"), nxt)
        return _exclusion(ctx, match, source if ctx.is_noun(source) else nxt, "pre-nominal", [match.last + 1])
    if (
        match.last + 1 < len(ctx.view)
        and ctx.view[match.last + 1].lower in ("like", "resembling")
        and nxt is not None
        and ctx.is_noun(nxt)
    ):
        return _exclusion(ctx, match, nxt, "pre-nominal", [match.last + 1])  # "nothing like speech"
    # the pronoun stands for the entity: "someone" (lemma_overrides), kept as the target;
    # "nothing is heard": the verb of perception says nothing more
    if tok.lower == "one" and len(match.tokens) > 1:
        tok.lemma = "someone"  # "no one answers": the pronoun "no one" is "nobody", not a number
    cue_tokens = [t for t in match.tokens if t != match.last]
    head = view[tok.head]
    perceived = next(
        (c for c in view.children(head.i, ("dobj", "obj", "ccomp", "xcomp")) if c.i > head.i), None
    )
    perceiving = tok.dep in SUBJECT_DEPS and head.lemma in ctx.words("perception")
    if perceived is None and perceiving and head.i > tok.i:
        after = ctx.first_after(head.i)  # "with nobody hearing B": the tagger hung B elsewhere
        perceived = after if after is not None and ctx.nominal(after, head.i) else None
    if tok.dep in SUBJECT_DEPS and head.lemma in ctx.words("perception") and perceived is not None:
        # "nobody can hear a cat": nobody perceives it, so it is not heard
        object_noun = perceived if ctx.is_noun(perceived) else ctx.subject_in_segment(perceived.i)
        if object_noun is not None and ctx.is_noun(object_noun):
            auxiliaries = [c.i for c in view.children(head.i, ("aux", "auxpass", "neg"))]
            return _exclusion(ctx, match, object_noun, "clausal", [*match.tokens, head.i, *auxiliaries])
    if tok.dep in SUBJECT_DEPS and head.lemma in ctx.words("perception"):
        cue_tokens += [head.i, *(c.i for c in view.children(head.i, ("aux", "auxpass")))]
    return Verdict("exclude", _construction(ctx, match), match.last, cue_tokens=cue_tokens)


def following_phrase(ctx: ScopeContext, match: Match) -> Verdict | None:
    """Pre-nominal and elliptical cues: the sound phrase that starts after the cue.

    A verb or adjective right after the cue with no subject of its own is denied for the
    phrase before the cue ("water flowing, not dripping", "passes without stopping").
    """
    nxt = ctx.first_after(match.last)
    if nxt is None:
        return None
    following = ctx.rules.cue_for_word(nxt.lower)
    if (
        following is not None
        and following.cls in _STRICT_CLASSES
        and nxt.lower not in ctx.words("filler_nouns")
    ):
        return None  # another cue follows: "not without music" is double negation
    noun = _noun_after_modifiers(ctx, nxt)
    modified = _constituent_negation(ctx, match, noun)
    if modified is not None:  # "a not too busy road": the adjective is denied, the road stays
        return Verdict("deny", "pre-nominal", modified.i, noun.i if noun is not None else None)
    if noun is not None:  # "no clear signal", "no other audible noises": the adjectives modify the noun
        nxt = noun
    if _after_auxiliary(ctx, match):
        return None  # "is not able", "does not bark": a verbal negation (negated_predicate)
    cue = match.entry
    # a word a determiner or preposition governs has no subject before it; after a
    # particle ("birds never chirp") the subject comes first
    after = match.last if isinstance(cue, Cue) and cue.cls in _GOVERNING else -1
    bare_gerund = (
        nxt.i == match.last + 1
        and nxt.lower.endswith("ing")
        and isinstance(cue, Cue)
        and cue.cls in ("particle", "preposition")
        and ctx.lex.verb_base(nxt.lower) is not None
        and not ctx.view.conjuncts(nxt.i)
    )
    if not bare_gerund and ctx.nominal(nxt, after):
        if isinstance(cue, Cue) and cue.cls == "preposition" and _heads_finite_clause(ctx, nxt):
            return not_a_cue  # "except one person continues to clap": a conjunction before a clause
        return _exclusion(ctx, match, nxt, _construction(ctx, match))
    subject = ctx.subject_in_segment(nxt.i)
    auxiliary_between = any(ctx.view[k].pos == "AUX" for k in range(match.last + 1, nxt.i))
    if (
        (ctx.is_verbal(nxt) or nxt.pos == "ADJ" or bare_gerund)
        and not auxiliary_between
        and (subject is None or subject.i <= after)
    ):
        perception = ctx.words("perception")
        noun = ctx.noun_before(match.first)
        if (nxt.lemma in perception or nxt.lower in perception) and noun is not None and ctx.is_noun(noun):
            # "with the door not audible": what is not perceived is absent, not a property denied
            preposition = _absolute_preposition(ctx, noun)
            extra = [nxt.i] if preposition is None else [nxt.i, preposition]
            construction = "post-nominal" if preposition is None else "absolute"
            return _exclusion(ctx, match, noun, construction, extra)
        holder = _holder_before(ctx, match.first)  # None: "not shouting" denies its own event
        return Verdict(
            "deny",
            "elliptical" if _construction(ctx, match) == "elliptical" else "pre-nominal",
            nxt.i,
            holder.i if holder is not None else None,
            rehead=holder is not None,
        )
    return None


def _constituent_negation(ctx: ScopeContext, match: Match, noun: Tok | None) -> Tok | None:
    """The adjective a particle negates inside a noun phrase ("a not too busy road"), or None.

    Clausal negation follows the finite verb or its auxiliary; a particle between a noun's
    determiner and the noun negates the modifier it precedes, never the noun's existence.
    """
    cue = match.entry
    if noun is None or not isinstance(cue, Cue) or cue.cls != "particle" or match.first == 0:
        return None
    view = ctx.view
    before = view[match.first - 1]
    if before.pos != "DET" or before.head != noun.i:
        return None
    head = view[view[match.first].head]
    modifier = head if head.pos == "ADJ" and head.head == noun.i and noun.i > head.i > match.first else None
    return modifier


def _heads_finite_clause(ctx: ScopeContext, noun: Tok) -> bool:
    """Whether ``noun`` is the subject of a finite verb of its segment ("one person continues")."""
    head = ctx.view[noun.head]
    return noun.dep in SUBJECT_DEPS and head.tag in _FINITE_TAGS and ctx.same_segment(head.i, noun.i)


def _relative_antecedent(ctx: ScopeContext, i: int) -> Tok | None:
    """The noun a relative pronoun right before the verb group of token ``i`` stands for
    ("a faucet that is not closed": the faucet)."""
    view = ctx.view
    k = i - 1
    while k >= 0 and (view[k].pos == "AUX" or view[k].tag == "MD" or view[k].dep == "neg"):
        k -= 1
    if k >= 1 and view[k].tag in ("WDT", "WP") and view[k].lower in ("that", "which", "who"):
        before = view[k - 1]
        if ctx.is_noun(before):
            return before
    return None


def negative_adverbial(ctx: ScopeContext, match: Match) -> Verdict | None:
    """'at no point is there B', 'at no time does B bark': a fronted adverbial with a negative
    determiner negates its clause when the clause inverts subject and auxiliary (the test
    for clausal negation of Klima 1964 and Huddleston & Pullum 2002, ch. 9 §3.3: "in no time
    the kettle boiled" does not invert and negates nothing). The clause is then read as
    negated: an existential excludes its pivot, a verb of perception its object, another verb
    its subject's phrase."""
    view = ctx.view
    cue = view[match.first]
    if cue.head == cue.i:
        return None
    noun = view[cue.head]
    if noun.dep != "pobj" or noun.i < cue.i:
        return None
    preposition = view[noun.head]
    if preposition.pos != "ADP" or preposition.head == preposition.i or preposition.i > cue.i:
        return None
    verb = view[preposition.head]
    if verb.pos not in VERBS or verb.i < noun.i or not ctx.same_segment(verb.i, cue.i):
        return None
    children = view.children(verb.i)
    subject = next(  # a subject across a segment boundary is the parser's, not the clause's
        (
            c
            for c in children
            if ctx.same_segment(c.i, verb.i)
            and (c.dep in (*SUBJECT_DEPS, "expl") or (c.lower == "there" and c.i > verb.i))
        ),
        None,
    )
    auxiliary = next((c for c in children if c.dep in ("aux", "auxpass") and c.i < verb.i), None)
    if subject is None or subject.i < (auxiliary or verb).i:
        return None  # no inversion: no clausal negation
    tokens = [preposition.i, noun.i, *(c.i for c in view.children(noun.i) if c.i != cue.i)]
    tokens += [verb.i] if verb.lemma in ("be", "have") else []
    tokens += [auxiliary.i] if auxiliary is not None else []
    if subject.lower == "there":  # "at no point is there B"
        pivot = ctx.first_after(subject.i)
        if pivot is None or not ctx.nominal(pivot, subject.i):
            return None
        return _exclusion(ctx, match, pivot, "clausal", [*tokens, subject.i])
    perception = ctx.words("perception")
    if verb.lemma in perception:  # "at no time do you hear B"
        obj = sound_object(ctx, verb)
        if obj is not None:
            extra = [subject.i] if subject.pos == "PRON" else []
            return _exclusion(ctx, match, obj, "clausal", [*tokens, verb.i, *extra])
    if ctx.is_noun(subject) and not _asserted_elsewhere(ctx, subject, verb):
        return _exclusion(ctx, match, subject, "verbal", tokens)
    return Verdict("unresolved", "clausal", subject.i, cue_tokens=tokens, reason="negated verb of no class")


def _noun_after_modifiers(ctx: ScopeContext, tok: Tok) -> Tok | None:
    """The noun a run of adjectives starting at ``tok`` modifies, in its segment, or None."""
    view = ctx.view
    k = tok.i
    while (
        k < len(view)
        and ctx.same_segment(k, tok.i)
        and (view[k].pos in ("ADJ", "ADV", "NUM") or view[k].lower in ctx.words("phrase_openers"))
        and view[k].tag not in ("VBG", "VBN")
    ):
        k += 1
    if k == tok.i or k >= len(view) or not ctx.same_segment(k, tok.i):
        return None
    return view[k] if ctx.is_noun(view[k]) else None


def _after_auxiliary(ctx: ScopeContext, match: Match) -> bool:
    """Whether a particle negates a clause's auxiliary or copula ("is not", "does not", "can't")."""
    cue = match.entry
    if not isinstance(cue, Cue) or cue.cls != "particle":
        return False
    view = ctx.view
    before = match.first - 1
    if (
        before >= 0
        and ctx.same_segment(before, match.first)
        and (
            view[before].pos == "AUX"
            or view[before].lemma in ("be", "do", "have")
            or view[before].tag == "MD"
        )
    ):
        return True
    head = view[view[match.first].head]
    return head.i != match.first and head.lemma in ("be", "do", "have") and head.i < match.first


def double_negation(ctx: ScopeContext, match: Match) -> Verdict | None:
    """'not without music', 'never without a dog': two negations cancel; the phrase is asserted.

    "not only A but B" is the additive correlative, and "why not B" a suggestion of B: no
    negation at all.
    """
    view = ctx.view
    if (
        match.last + 1 < len(view)
        and view[match.last + 1].lower in ctx.words("additive_focus")
        and view[match.first].lower == "not"
    ):
        return not_a_cue
    if (
        view[match.first].lower == "not"
        and match.first > 0
        and view[match.first - 1].lower in ctx.words("suggesting_wh")
    ):
        return not_a_cue
    k = match.last + 1
    while k < len(view) and view[k].lower in ("even", "entirely", "completely", "quite", "totally"):
        k += 1
    if k >= len(view) or not ctx.same_segment(k, match.first):
        return None
    if view[match.first].lower in ("no", "zero"):
        # litotes: "no shortage of B", "no real lack of B" (a negative determiner on a noun of
        # absence) says B is there in plenty (Horn 1989, ch. 5)
        while k < len(view) and view[k].pos == "ADJ" and ctx.rules.cue_for_word(view[k].lower) is None:
            k += 1
        second = ctx.rules.cue_for_word(view[k].lower) if k < len(view) else None
        if (
            second is None
            or second.cls not in ("absence_noun", "lacking_verb")
            or view[k].pos not in NOUNS
            or not ctx.same_segment(k, match.first)
        ):
            return None
        end = k + 1 if k + 1 < len(view) and view[k + 1].lower in ("of", "for") else k
        return Verdict("cancel", "litotes", None, cue_tokens=list(range(match.last + 1, end + 1)),
                       reason="double negation")
    if view[k].lower in ctx.words("concord_indefinites") and view[match.first].lower != "no":
        # negative concord: "ain't no B", "don't want no B" is one negation in the English that
        # writes it (Labov 1972; Zeijlstra 2004), which a search box takes as it is typed; the
        # litotes of standard English takes "without", an affix or a noun of absence instead.
        # The particle says nothing; the indefinite's own scope is the negation.
        return not_a_cue
    second = ctx.rules.cue_for_word(view[k].lower)
    if second is None or second.cls not in (
        "preposition",
        "determiner",
        "lacking_verb",
        "privative_adjective",
        "absence_adjective",  # litotes: "B is not absent" is there (Horn 1989, ch. 5)
    ):
        return None
    return Verdict("cancel", "double negation", None, cue_tokens=[k], reason="double negation")


def negated_predicate(ctx: ScopeContext, match: Match) -> Verdict | None:
    """'not'/'n't'/'never' on a verb or adjective: verbal and clausal constructions.

    A negated verb of perception or presence excludes what is (not) perceived; "there is
    not a B" excludes B; another verb excludes its subject's phrase, or is denied when the
    subject is asserted elsewhere ("a dog barks but does not growl").
    """
    view = ctx.view
    particle = view[match.first]
    head = view[particle.head] if particle.head != particle.i else None
    # a phrase cue ("no longer") negates what its last word hangs on, not its own words
    while head is not None and match.first <= head.i <= match.last and head.head != head.i:
        head = view[head.head]
    if head is None or not ctx.same_segment(head.i, particle.i) or head.pos in NOUNS:
        following = [
            view[k]
            for k in range(match.last + 1, len(view))
            if ctx.same_segment(k, match.first)
            and (view[k].pos in (*VERBS, "ADJ") or view[k].tag in ("VBG", "VBN"))
        ]
        head = following[0] if following else head
    if head is None or not ctx.same_segment(head.i, particle.i):
        return None
    head, passed, implicative = _through_transparent(ctx, head)
    auxiliaries = [
        c.i for c in view.children(head.i) if c.dep in ("aux", "auxpass") and c.i < head.i
    ] + passed
    if implicative:  # "is not able to speak": the complement is denied, the subject stays
        holder = ctx.subject_of(head.i) or _holder_before(ctx, match.first)
        if holder is None:
            return None
        return Verdict("deny", "implicative", head.i, holder.i, cue_tokens=auxiliaries, rehead=True)
    antecedent = _relative_antecedent(ctx, match.first)
    if antecedent is not None:  # a restrictive relative clause: its noun is there
        return Verdict("deny", "verbal", head.i, antecedent.i, cue_tokens=auxiliaries, rehead=True)
    perception = ctx.words("perception")
    perceived_adjective = head.lemma in perception or head.lower in perception
    if (head.pos in ("ADJ", "ADV") and not perceived_adjective) or head.lemma in ctx.words("aspectual_verbs"):
        # a property ("not too busy", "not very loud") or the onset or end of a sound ("is not
        # starting", "never stopped"): denied, the source stays asserted
        holder = ctx.subject_of(head.i) or _holder_before(ctx, match.first)
        return Verdict(
            "deny",
            "verbal",
            head.i,
            None if holder is None else holder.i,
            cue_tokens=auxiliaries,
            rehead=bool(passed) and holder is not None,
        )
    if head.lemma in ("be", "have") and any(c.lower == "there" for c in view.children(head.i)):
        pivot = ctx.first_after(match.last)
        if pivot is not None and ctx.is_noun(pivot):
            return _exclusion(ctx, match, pivot, "clausal", [head.i, *auxiliaries])
    if head.lemma == "be":  # a copula: "B is not there/audible" excludes B, "X is not metal" denies Metal
        complement = next(
            (c for c in view.children(head.i, ("acomp", "attr", "oprd", "advmod")) if c.i > head.i), None
        )
        subject = ctx.subject_of(head.i)
        if complement is not None and subject is not None:
            if (
                complement.lemma in perception
                or complement.lower in perception
                or complement.lower in ctx.words("presence_adverbs")
            ):
                return _exclusion(ctx, match, subject, "copular", [head.i, complement.i, *auxiliaries])
            if _ungrounded_predication(ctx, subject, complement, head):
                # "the B isn't part of it": a denied predicate audio cannot check says nothing
                # of whether B is heard: B is unsure, never asserted
                return Verdict(
                    "unresolved", "copular", ctx.noun_head(subject.i),
                    cue_tokens=[head.i, complement.i, *auxiliaries], reason=UNGROUNDED_REASON,
                )
            return Verdict(
                "deny", "copular", complement.i, subject.i, cue_tokens=[head.i, *auxiliaries], rehead=True
            )
    if head.lemma in perception or head.lower in perception:
        passive = ctx.subject_in_segment(head.i)
        if passive is not None and (
            passive.dep in ("nsubjpass", "csubjpass")
            or head.pos == "ADJ"
            or head.lemma in ("be", "exist", "present")
        ):
            subject = ctx.subject_of(head.i)
            if subject is not None and ctx.is_noun(subject):
                return _exclusion(ctx, match, subject, "clausal", [head.i, *auxiliaries])
        objects = [
            c
            for c in view.children(head.i)
            if c.dep in ("dobj", "obj", "attr", "oprd", "ccomp", "xcomp") and c.i > head.i
        ]
        obj = None
        for candidate in objects:
            if ctx.is_noun(candidate):
                obj = candidate
                break
            if candidate.dep == "xcomp" and candidate.lemma in perception and candidate.lemma != head.lemma:
                # "I do not want to hear B": the negated wish scopes over its complement; what
                # is not to be perceived is excluded
                after = ctx.first_after(candidate.i)
                inner = sound_object(ctx, candidate) or (
                    after if after is not None and ctx.nominal(after, candidate.i) else None
                )
                if inner is not None and ctx.is_noun(inner):
                    obj = inner
                    auxiliaries.append(candidate.i)
                    auxiliaries += [c.i for c in view.children(candidate.i, ("aux",))]
                    break
            inner = ctx.subject_in_segment(candidate.i)
            if inner is not None and ctx.is_noun(inner):
                obj = inner
                break
        if obj is None:  # the object of perception is a noun phrase: "hear any siren/ADJ"
            after = ctx.first_after(head.i)
            obj = after if after is not None and ctx.nominal(after, head.i) else None
        tokens = [head.i, *auxiliaries]
        if obj is not None:
            subject = ctx.subject_in_segment(head.i)
            if subject is not None and subject.pos == "PRON":  # "you can't hear B", "I don't hear B"
                tokens.append(subject.i)
            return _exclusion(ctx, match, obj, "clausal", tokens)
        if head.pos == "ADJ" or head.tag == "VBN":  # "with the engine not audible", "B not heard"
            noun = ctx.subject_of(head.i) or ctx.noun_before(match.first) or ctx.subject_before(match.first)
            if noun is not None and ctx.is_noun(noun):
                construction = "absolute" if _absolute_preposition(ctx, noun) is not None else "clausal"
                extra = [head.i, *auxiliaries]
                preposition = _absolute_preposition(ctx, noun)
                if preposition is not None:
                    extra.append(preposition)
                return _exclusion(ctx, match, noun, construction, extra)
    subject = ctx.subject_of(head.i)
    rehead = bool(passed)  # the heads passed say nothing: the complement joins the subject
    if subject is None:
        holder = _holder_before(ctx, match.first)
        return Verdict(
            "deny",
            "verbal",
            head.i,
            holder.i if holder is not None else None,
            cue_tokens=auxiliaries,
            rehead=rehead and holder is not None,
        )
    if subject.pos == "PRON" and not ctx.is_noun(subject):
        return Verdict("deny", "verbal", head.i, subject.i, cue_tokens=auxiliaries, rehead=rehead)
    transitive = any(c.dep in ("dobj", "obj") for c in view.children(head.i))  # "does not mask the horn"
    if transitive or _asserted_elsewhere(ctx, subject, head) or _restrictive(ctx, subject, head):
        return Verdict("deny", "verbal", head.i, subject.i, cue_tokens=auxiliaries, rehead=rehead)
    modified = _reduced_relative_host(ctx, subject, head, match.first)
    if modified is not None:  # "the static of a radio station not working": the station's
        return Verdict("deny", "verbal", head.i, modified.i, cue_tokens=auxiliaries, rehead=True)
    return _exclusion(ctx, match, subject, "verbal", auxiliaries)


UNGROUNDED_REASON = "denied predicate that names nothing audible"
APPROXIMATE_REASON = "approximate negator: a quantity or presence near none"


def _ungrounded_predication(ctx: ScopeContext, subject: Tok, complement: Tok, verb: Tok) -> bool:
    """Whether a negated copula says of a sound a predicate that grounds in nothing of V_audio
    ("the B isn't part of it", "the B is not welcome"): a sound's property ("not loud"), its
    material ("not metal") or its place ("not around") is checked on the audio and denied; a
    predicate of none of these says nothing of whether B is heard. The subject must be the
    copula's own, in its segment, and name a sound class."""
    if not ctx.same_segment(subject.i, verb.i) or not ctx.is_noun(subject):
        return False
    if complement.pos not in (*NOUNS, "ADJ", "VERB", "ADV"):
        return False
    from fortekit.vocab import get_grounder

    if get_grounder().ground(complement.lemma, complement.pos).entry is not None:
        return False
    return names_sound_class(ctx, subject)


def _reduced_relative_host(ctx: ScopeContext, subject: Tok, verb: Tok, particle: int) -> Tok | None:
    """The noun a bare negated participle modifies after "N1 of N2", or None.

    A participle with no auxiliary right after a complex noun phrase is a reduced relative,
    not a clause: "the static of a radio station not working" has no finite verb. It closes
    on the nearest noun (late closure, Frazier 1978), and a relative clause restricts a noun
    the phrase asserts, so the verb is denied of N2 and neither noun is excluded. The
    tagger's reading of N1 as the verb's subject is the one this corrects.
    """
    view = ctx.view
    if verb.tag != "VBG" or any(c.dep in ("aux", "auxpass") for c in view.children(verb.i)):
        return None
    before = view[particle - 1] if particle >= 1 else None
    if before is None or before.dep != "pobj" or not ctx.is_noun(before):
        return None
    preposition = view[before.head]
    if preposition.lower != "of" or view[preposition.head].i != subject.i:
        return None
    return before


def _restrictive(ctx: ScopeContext, subject: Tok, verb: Tok) -> bool:
    """Whether the negation sits in a relative clause of a noun the main clause asserts
    ("hitting an object with an item that is not metal": the item is there)."""
    view = ctx.view
    for tok in view.ancestors(verb.i):
        if tok.i == subject.i:
            return subject.dep not in ("nsubj", "nsubjpass", "ROOT") or subject.head != subject.i
        if tok.dep in ("relcl", "acl") and view[tok.head].i == subject.i:
            return subject.dep in ("dobj", "pobj", "obj", "attr") or (
                subject.dep in ("nsubj", "nsubjpass") and view[subject.head].i != verb.i
            )
    return verb.dep == "relcl" and view[verb.head].i == subject.i and subject.dep in ("dobj", "pobj", "obj")


def _through_transparent(ctx: ScopeContext, head: Tok) -> tuple[Tok, list[int], bool]:
    """Follow a negated head through raising verbs and positive implicatives to its complement.

    "does not seem to bark" -> bark; "is not able to be discerned" -> discerned (an
    implicative: the subject stays); "did not look like going to stop" -> stop. Returns the
    complement, the heads passed (they say nothing) and whether an implicative was passed.
    """
    view = ctx.view
    transparent, implicatives = ctx.words("transparent_heads"), ctx.words("positive_implicatives")
    passed: list[int] = []
    implicative = False
    for _ in range(len(view)):
        if head.lemma in ("be", "do", "get") or head.pos == "AUX":
            complements = [
                c
                for c in view.children(head.i, ("acomp", "xcomp"))
                if c.lemma in transparent or c.lemma in implicatives
            ]
            if not complements:
                break
            passed.append(head.i)
            head = complements[0]
            continue
        if head.lemma not in transparent and head.lemma not in implicatives:
            break
        step = next((c for c in view.children(head.i, ("xcomp", "ccomp")) if ctx.is_verbal(c)), None)
        if step is None:
            for prep in view.children(head.i, ("prep",)):
                if prep.lemma in transparent:
                    step = next(
                        (c for c in view.children(prep.i, ("pcomp", "pobj")) if ctx.is_verbal(c)), None
                    )
                    if step is not None:
                        passed.append(prep.i)
                        break
        if step is None:
            break
        implicative = implicative or head.lemma in implicatives
        passed.append(head.i)
        passed += [c.i for c in view.children(step.i, ("aux", "auxpass")) if c.i < step.i]
        head = step
    return head, passed, implicative


def _asserted_elsewhere(ctx: ScopeContext, subject: Tok, verb: Tok) -> bool:
    """Whether the subject is heard through another predicate: an earlier mention of the
    same noun, or a positive verb it is the subject of ("a dog barks but does not growl")."""
    view = ctx.view
    for tok in view.tokens[: subject.i]:
        if tok.lemma == subject.lemma and ctx.is_noun(tok) and not ctx.same_segment(tok.i, subject.i):
            return True
    for tok in view.tokens[verb.i + 1 :]:  # "a machine is not pumping and then it slows down"
        if (
            tok.dep in SUBJECT_DEPS
            and tok.lower in _ANAPHORS
            and not any(c.dep == "neg" for c in view.children(tok.head))
        ):
            return True
    for other in view.tokens:
        if (
            other.i != verb.i
            and other.pos == "VERB"
            and ctx.subject_of(other.i) is subject
            and not any(c.dep == "neg" for c in view.children(other.i))
            and ctx.rules.cue_for_word(other.lemma) is None
        ):
            return True
    return any(
        c.dep == "amod" and c.pos == "ADJ" and ctx.rules.cue_for_word(c.lower) is None
        for c in view.children(subject.i)
    )


def _predicated(ctx: ScopeContext, match: Match, *, device: bool) -> Verdict | None:
    """Copular, post-nominal and absolute absence: 'B is missing', 'B absent', 'with B gone'."""
    view = ctx.view
    cue = match.entry
    tok = view[match.first]
    if isinstance(cue, Cue) and not cue.attributive and _is_attributive(ctx, tok):
        return not_a_cue
    lacking = isinstance(cue, Cue) and cue.cls == "lacking_verb"
    if lacking and tok.tag != "VBN" and not is_absence_word(ctx, tok) and not _lacking_state(ctx, match, tok):
        return None  # "the goose avoids", "a voice lacking": the subject lacks something, it is not absent
    if device and locative_position(ctx, tok):
        return not_a_cue  # "off in the distance", "far off": a word of position, no absence
    absolute = absolute_particle(ctx, match) if device else None
    if absolute is not None:
        return absolute  # "with the heater off/prt"
    if device and tok.dep == "prt":
        participle = view[tok.head]
        before = ctx.noun_before(participle.i)
        if (
            participle.lemma not in ctx.words("off_participles")
            or participle.tag != "VBN"
            or before is None
            or _absolute_preposition(ctx, before) is None
            or any(c.dep in ("aux", "auxpass") for c in view.children(participle.i))
        ):
            return not_a_cue  # "drives off", "is being turned off": an event, not a state
        tok = participle  # "with the radio switched off": the participle is predicated of the noun
    approximators = ctx.words("approximators")
    governors = (tok.i, tok.head) if tok.dep in ("ccomp", "oprd", "xcomp") else (tok.i,)  # "almost making B"
    if any(c.lower in approximators for g in governors for c in view.children(g, ("advmod",))) or any(
        view[k].lower in approximators for k in range(max(0, tok.i - 3), tok.i)
    ):
        return not_a_cue  # "almost inaudible": quiet, not absent
    if tok.dep in ("acomp", "oprd", "xcomp") and view[tok.head].lemma in ctx.words("inchoatives"):
        return not_a_cue  # "goes silent": an event in the clip, not an absence
    if (
        tok.pos == "VERB"
        and tok.tag != "VBN"
        and not any(c.lemma == "be" for c in view.children(tok.i, ("aux", "auxpass")))
        and view[tok.head].lemma != "be"
        and not (tok.i > 0 and ctx.is_noun(view[tok.i - 1]))
        and not (tok.tag == "VBD" and closes_noun_phrase(ctx, tok))  # "the B meowing silenced/VBD"
    ):
        return not_a_cue  # "keeps missing": the verb, not the absence
    tokens = sorted({*match.tokens, tok.i})
    k = match.last + 1  # "nowhere to be heard": the infinitive of perception says nothing more
    while (
        k < len(view)
        and ctx.same_segment(k, match.first)
        and (view[k].lower in ("to", "be", "been", "being") or view[k].lemma in ctx.words("perception"))
    ):
        tokens.append(k)
        k += 1
    auxiliaries = [c.i for c in view.children(tok.i) if c.dep in ("aux", "auxpass", "neg")]
    head = view[tok.head]
    noun = ctx.subject_of(tok.i)
    before = ctx.noun_before(match.first)
    if before is not None and before.i < tok.i and _absolute_preposition(ctx, before) is not None:
        # "A with the B absent": the absolute construction's noun is what is absent, however
        # the parser attached the adjective
        noun = before
    if noun is not None and head.lemma in ctx.words("perception"):
        tokens.append(head.i)
    if (
        noun is None
        and tok.dep in ("acomp", "attr", "oprd", "xcomp")
        and head.lemma in ("be", "seem", "remain", "go", "fall")
    ):
        noun = ctx.subject_in_segment(head.i)
        tokens.append(head.i)
    if (
        noun is None
        and tok.dep == "amod"
        and tok.head < tok.i
        and ctx.is_noun(head)
        and ctx.same_segment(head.i, tok.i)
    ):
        noun = head
    if noun is not None and not ctx.is_noun(noun) and not ctx.nominal(noun):  # "the siren/ADJ silent"
        noun = None
    if noun is None:
        noun = ctx.noun_before(match.first)
    copula = any(c.lemma == "be" for c in view.children(tok.i, ("aux", "auxpass"))) or (
        tok.i > 0 and view[tok.i - 1].lemma == "be"
    )
    if noun is None and copula:  # "the sound of people talking is missing": the clause's subject
        noun = ctx.subject_before(match.first)
    if noun is None or not ctx.is_noun(noun) or not ctx.same_segment(noun.i, tok.i):
        return None if not device else not_a_cue
    if noun.pos == "PRON" and noun.i == tok.i - 1:
        return not_a_cue  # "something inaudible": an adjective after an indefinite pronoun describes it
    preposition = _absolute_preposition(ctx, noun)
    if (
        device
        and preposition is None
        and ctx.subject_in_segment(tok.i) is None
        and tok.dep not in ("acomp",)
        and head.lemma != "be"
    ):
        return not_a_cue  # "the plane flies over": no copula, no absolute
    construction = (
        "absolute" if preposition is not None else ("copular" if noun.dep in SUBJECT_DEPS else "post-nominal")
    )
    if preposition is not None:
        tokens.append(preposition)
    return _exclusion(ctx, match, noun, construction, [*tokens, *auxiliaries])


def _lacking_state(ctx: ScopeContext, match: Match, tok: Tok) -> bool:
    """'the B is lacking': a verb of lacking in the progressive of "be" with no object, closing
    its clause, is the adjective "lacking" (WordNet lacking.s.02, "nonexistent") said of its
    subject, which is absent; "a voice lacking" and "B is lacking power" are the verb."""
    return (
        tok.tag == "VBG"
        and any(c.lemma == "be" for c in ctx.view.children(tok.i, ("aux",)))
        and ctx.first_after(match.last) is None
    )


def predicated_noun(ctx: ScopeContext, match: Match) -> Verdict | None:
    """Absence adjectives and 'nowhere': the noun they are said of (copular, post-nominal, absolute)."""
    return _predicated(ctx, match, device=False)


def predicated_device(ctx: ScopeContext, match: Match) -> Verdict | None:
    """'off', 'over': an absence only in a copular or absolute construction ("with the radio off")."""
    return _predicated(ctx, match, device=True)


def verb_object(ctx: ScopeContext, match: Match) -> Verdict | None:
    """Verbs of lacking: 'lacking voices', 'a clip that omits the music': the object is excluded."""
    view = ctx.view
    tok = view[match.first]
    passive = ctx.subject_in_segment(tok.i)
    if tok.tag == "VBN" and passive is not None and passive.dep == "nsubjpass":
        return None  # "B is excluded": the passive subject (predicated_noun)
    objects = [c for c in view.children(tok.i) if c.dep in ("dobj", "obj", "pobj", "attr") and c.i > tok.i]
    obj = objects[0] if objects and ctx.is_noun(objects[0]) else None
    if obj is None:
        after = ctx.first_after(match.last)
        obj = after if after is not None and ctx.is_noun(after) else None
    if obj is None:
        return None
    auxiliaries = [c.i for c in view.children(tok.i) if c.dep in ("aux", "auxpass")]
    return _exclusion(ctx, match, obj, "pre-nominal", auxiliaries)


def _resultative(ctx: ScopeContext, tok: Tok) -> bool:
    """A participle or perfect form: 'has stopped', 'having ceased', 'the music stopped' (absolute)."""
    view = ctx.view
    if any(
        c.lower in ctx.words("perfect_auxiliaries")
        for c in view.children(tok.i)
        if c.dep in ("aux", "auxpass")
    ):
        return True
    # a participle said of a noun ("the music stopped", "with the engine stopped"); a
    # coordinated past form ("got closer then faded") is an event in the clip
    return tok.tag == "VBN" and tok.dep in ("amod", "acl") and ctx.subject_in_segment(tok.i) is None


def _gerund_complement(ctx: ScopeContext, verb: Tok) -> None:
    """'having ceased chirping/NN': an aspectual verb's bare -ing object is its gerund complement.

    Verbs of ceasing take a gerund (the event that ended); the tagger sometimes reads a bare
    -ing word after them as a noun object, which would leave the event outside the scope.
    """
    view = ctx.view
    for obj in view.children(verb.i, ("dobj",)):
        if (
            obj.i > verb.i
            and obj.tag == "NN"
            and obj.lower.endswith("ing")
            and not any(c.dep in ("det", "poss", "amod", "compound") for c in view.children(obj.i))
        ):
            lemmas = ctx.lex.morphy(obj.lower, "VERB")
            if lemmas:
                obj.pos, obj.tag, obj.lemma, obj.dep = "VERB", "VBG", lemmas[0], "xcomp"
                obj.repaired += ("aspectual-gerund",)
                view.rebuild()


def ceased_subject(ctx: ScopeContext, match: Match) -> Verdict | None:
    """'the birds have stopped chirping', 'the engine having died down': the subject is no longer heard."""
    view = ctx.view
    tok = view[match.first]
    cue = match.entry
    attributive = isinstance(cue, Cue) and not cue.attributive and _is_attributive(ctx, tok)
    if not _resultative(ctx, tok) or attributive:
        return not_a_cue  # "a car stops": an event; "a stopped car": a car that is there
    noun = ctx.subject_of(tok.i) or ctx.noun_before(match.first) or ctx.subject_before(match.first)
    if noun is None or not ctx.is_noun(noun):
        return not_a_cue
    _gerund_complement(ctx, tok)
    tokens = [c.i for c in view.children(tok.i) if c.dep in ("aux", "auxpass", "prt")]
    tokens += [
        k
        for k in range(match.last + 1, min(match.last + 3, len(view)))
        if view[k].lower in ("down", "out", "away", "off") and ctx.same_segment(k, match.first)
    ]
    verdict = _exclusion(ctx, match, noun, "copular" if noun.dep in SUBJECT_DEPS else "absolute", tokens)
    preposition = _absolute_preposition(ctx, noun)
    if preposition is not None:
        verdict.cue_tokens.append(preposition)
        verdict.construction = "absolute"
    return verdict


def implicative(ctx: ScopeContext, match: Match) -> Verdict | None:
    """'an engine fails to start': the complement is denied, the subject stays (Karttunen 1971)."""
    view = ctx.view
    tok = view[match.first]
    complements = [c for c in view.children(tok.i) if c.dep in ("xcomp", "ccomp") and c.i > tok.i]
    if not complements:
        nxt = match.last + 1
        if nxt + 1 < len(view) and view[nxt].lower == "to" and ctx.is_verbal(view[nxt + 1]):
            complements = [view[nxt + 1]]
    if not complements:
        return not_a_cue
    subject = ctx.subject_of(tok.i) or ctx.noun_before(match.first)
    auxiliaries = [c.i for c in view.children(tok.i) if c.dep in ("aux", "auxpass")]
    entailed = _implicative_absence(ctx, match, complements[0], subject, auxiliaries)
    if entailed is not None:
        return entailed
    holder = subject if subject is not None else _holder_before(ctx, match.first)
    if holder is None:
        return None
    return Verdict("deny", "implicative", complements[0].i, holder.i, cue_tokens=auxiliaries, rehead=True)


def _implicative_absence(
    ctx: ScopeContext, match: Match, complement: Tok, subject: Tok | None, auxiliaries: list[int]
) -> Verdict | None:
    """A negative implicative entails that its complement did not happen (Karttunen 1971);
    where the complement is a verb of perceiving or revealing, or of appearing, that entails
    absence, as "you can't hear B" does: "listening fails to reveal B" excludes B, "B failed
    to show up" excludes B (its subject)."""
    view = ctx.view
    perception = ctx.words("perception")
    tokens = [*auxiliaries, complement.i, *(c.i for c in view.children(complement.i, ("aux", "prt")))]
    if complement.lemma in perception:
        obj = sound_object(ctx, complement)
        if obj is None:
            after = ctx.first_after(complement.i)
            obj = after if after is not None and ctx.nominal(after, complement.i) else None
        if obj is not None:
            if subject is not None and (subject.pos == "PRON" or subject.lemma in perception):
                tokens.append(subject.i)  # "listening fails to reveal B": the perceiving is no sound
            return _exclusion(ctx, match, obj, "clausal", tokens)
    particles = [c.lower for c in view.children(complement.i, ("prt",))]
    appearing = ctx.words("appearance_verbs")
    if (complement.lemma in appearing or any(f"{complement.lemma} {p}" in appearing for p in particles)) and (
        subject is not None and ctx.is_noun(subject) and subject.i < match.first
    ):
        return _exclusion(ctx, match, subject, "clausal", tokens)
    return None


def affix_stem(ctx: ScopeContext, match: Match) -> Verdict | None:
    """'traffic-free': an affixal negation excludes its stem noun."""
    view = ctx.view
    k = match.first
    if (
        k >= 2
        and view[k - 1].lower == "-"
        and view[k - 1].start == view[k - 2].end
        and view[k - 1].end == view[k].start
        and ctx.nominal(view[k - 2])
    ):
        noun = view[k - 2]
        return Verdict("exclude", "post-nominal", noun.i, cue_tokens=[k - 1])
    return None


def of_object(ctx: ScopeContext, match: Match) -> Verdict | None:
    """'free of traffic', 'in the absence of voices': the object of "of" is excluded."""
    view = ctx.view
    k = match.last + 1
    prepositions = ("of", "from") if view[match.first].lower == "free" else ("of",)
    if k >= len(view) or view[k].lower not in prepositions or not ctx.same_segment(k, match.first):
        return None  # no construction here ("a free kick"; "lack" as a verb tries its other rules)
    obj = ctx.first_after(k)
    obj = _noun_after_modifiers(ctx, obj) or obj if obj is not None else None  # "lack of clear signal"
    if obj is None or not ctx.is_noun(obj):  # "free of the buzzing flies": the participle modifies
        obj = next((c for c in view.children(k) if c.dep == "pobj" and ctx.is_noun(c)), None)
    if obj is None:
        return None
    tok = view[match.first]
    tokens = [k]
    if tok.pos in NOUNS or tok.lower in ("absence", "lack"):  # "in the complete absence of"
        tokens += [c.i for c in view.children(tok.i) if c.dep in ("det", "amod", "predet") and c.i < tok.i]
        head = view[tok.head]
        if tok.dep == "pobj" and head.pos == "ADP":
            tokens.append(head.i)
        else:
            j = match.first - 1
            while j >= 0 and view[j].pos in ("DET", "ADJ") and ctx.same_segment(j, match.first):
                tokens.append(j)
                j -= 1
            if j >= 0 and view[j].pos == "ADP" and view[j].lower in ("in", "with", "amid", "given"):
                tokens.append(j)
    return _exclusion(ctx, match, obj, "pre-nominal", tokens)


def ambiguous(ctx: ScopeContext, match: Match) -> Verdict | None:
    """'apart from B' after a positive phrase: exceptive or additive; left unresolved."""
    nxt = ctx.first_after(match.last)
    verdict = Verdict("unresolved", "pre-nominal", reason="ambiguous cue")
    if nxt is not None and ctx.is_noun(nxt):
        verdict.target = ctx.noun_head(nxt.i)
    return verdict


def approximate(ctx: ScopeContext, match: Match) -> Verdict | None:
    """'hardly any B', 'the B barely there': an approximate negator leaves B unsure."""
    view = ctx.view
    there = view[match.last].lower == "there"  # "the B barely there": the noun before
    noun = ctx.noun_before(match.first) if there else ctx.first_after(match.last)
    verdict = Verdict("unresolved", "pre-nominal", reason=APPROXIMATE_REASON)
    if noun is not None and ctx.is_noun(noun):
        verdict.target = ctx.noun_head(noun.i)
    return verdict


#: The scope rules ``grammars/negation.toml`` may name.
SCOPE_RULES: dict[str, ScopeRule] = {
    "exceptive": exceptive,
    "own_phrase": own_phrase,
    "following_phrase": following_phrase,
    "predicated_noun": predicated_noun,
    "predicated_device": predicated_device,
    "double_negation": double_negation,
    "negated_predicate": negated_predicate,
    "verb_object": verb_object,
    "ceased_subject": ceased_subject,
    "implicative": implicative,
    "negative_adverbial": negative_adverbial,
    "affix_stem": affix_stem,
    "of_object": of_object,
    "ambiguous": ambiguous,
    "approximate": approximate,
    "search_clause": search_clause,
    **LEXICAL_RULES,
    **REMOVAL_RULES,
    **AFFIXAL_RULES,
    **ELLIPTICAL_RULES,
    **IMPERATIVE_RULES,
    **UNPLACED_RULES,
}
