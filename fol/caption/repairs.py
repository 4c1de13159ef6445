"""Repairs of frequent mis-parses of the small spaCy pipeline (the ``[[repair]]`` rules).

Each action is a small function of the token view; the rule file says when it runs,
and :func:`apply_repairs` runs them. They fix what the small model gets wrong on
telegraphic captions. The actions here fix tags and lemmas: a verb read as a plural
noun after a compound (``A car/compound approaches/NOUN``), an -ing verb read as an
adjective (``not dripping/ADJ``), a noun read as an adjective (``siren/ADJ``).
Attachments (``pours over/prt rocks``) are fixed by
:mod:`fortekit.fol.caption.repairs_attach`, merged coordinated clauses by
:mod:`fortekit.fol.caption.repairs_coord`. Every changed token records the repair's
id (:attr:`Tok.repaired`).

Example:
    >>> from fortekit.fol.caption.tokens import Tok, TokenView
    >>> from fortekit.fol.caption.lemmas import WordNetLemmas
    >>> from fortekit.vocab import load_wordnet
    >>> toks = [Tok(0, "A", "a", "a", "DET", "DT", "det", 2, 0),
    ...         Tok(1, "car", "car", "car", "NOUN", "NN", "compound", 2, 2),
    ...         Tok(2, "approaches", "approaches", "approach", "NOUN", "NNS", "ROOT", 2, 6)]
    >>> view = TokenView(toks, "A car approaches")
    >>> noun_chain_to_verb(view, view[2], WordNetLemmas(load_wordnet()))
    True
    >>> [(t.text, t.pos, t.dep, t.head) for t in view]
    [('A', 'DET', 'det', 1), ('car', 'NOUN', 'nsubj', 2), ('approaches', 'VERB', 'ROOT', 2)]
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from operator import attrgetter
from typing import TypeAlias

from fortekit.fol.caption.lemmas import WordNetLemmas
from fortekit.fol.caption.repairs_attach import (
    attach_to_verb,
    gerund_to_previous_noun,
    particle_to_preposition,
    preposition_to_mark,
    release_marked_clause,
)
from fortekit.fol.caption.repairs_coord import (
    compound_to_subject,
    gerund_object_to_verb,
    split_coordinated_subject,
)
from fortekit.fol.caption.rules import ArcRule
from fortekit.fol.caption.tokens import SUBJECT_DEPS, Tok, TokenView

__all__ = ["REPAIRS", "apply_repairs", "noun_chain_to_verb"]

_NOUNS = frozenset({"NOUN", "PROPN"})
_SINGULAR_DETS = frozenset({"a", "an", "another", "one", "each", "every", "the", "this", "that"})
_PLURAL_DETS = frozenset({"some", "several", "these", "those", "many", "two", "three", "few", "both", "all"})
_TEMPORAL_PREPS = frozenset({"as", "while", "whilst", "until", "till", "before", "after", "when"})
# Labels a plural-looking noun may carry when it is really the verb of a clause.
_CLAUSE_DEPS = frozenset(
    {"ROOT", "nsubj", "nsubjpass", "conj", "relcl", "advcl", "ccomp", "dep", "appos", "npadvmod", "pobj"}
)


def _set_verb(tok: Tok, lemma: str, rule_id: str) -> None:
    tok.pos = "VERB"
    tok.tag = "VBZ" if tok.lower.endswith("s") else "VBP"
    tok.lemma = lemma
    tok.repaired += (rule_id,)


def _verb_lemma(tok: Tok, lex: WordNetLemmas) -> str | None:
    base = lex.verb_base(tok.lower)
    if base is not None:
        return base
    return tok.lower if lex.has(tok.lower, "VERB") else None


def propn_to_noun(view: TokenView, tok: Tok, lex: WordNetLemmas, rule_id: str = "lowercase-propn") -> bool:
    """A lower-case PROPN, or one WordNet has as a noun, is a NOUN."""
    if not (tok.text.islower() or lex.morphy(tok.lower, "NOUN")):
        return False
    tok.pos = "NOUN"
    tok.tag = "NNS" if tok.tag == "NNPS" else "NN"
    tok.repaired += (rule_id,)
    return True


def _agrees(subject: Tok, verb: Tok, lex: WordNetLemmas) -> bool:
    """Subject-verb agreement, the sign that the last noun of a chain is a verb."""
    third_person = verb.lower.endswith("s") and not verb.lower.endswith("ss")
    singular = subject.tag in ("NN", "NNP") or subject.pos == "PRON"
    if third_person and singular:
        return True
    plural = subject.tag in ("NNS", "NNPS")
    return plural and not third_person and lex.has(verb.lower, "VERB")


def noun_chain_to_verb(
    view: TokenView, tok: Tok, lex: WordNetLemmas, rule_id: str = "noun-chain-verb"
) -> bool:
    """'A car/compound approaches/NOUN': make the last noun of the chain the verb.

    Returns:
        True if the tree was changed.
    """
    i = tok.i
    if i == 0:
        return False
    subject = view.tokens[i - 1]  # asked of some 1,500 nouns per 600 captions: no view[] call
    if subject.head != i or tok.dep not in _CLAUSE_DEPS or view.has_child(i, SUBJECT_DEPS):
        return False
    if subject.dep not in ("compound", "amod", "nmod", "npadvmod"):
        return False
    if subject.pos not in _NOUNS and subject.pos != "PRON" and not lex.has(subject.lower, "NOUN"):
        return False
    after = view[i + 1] if i + 1 < len(view) else None
    if after is not None and after.pos in ("NOUN", "PROPN", "VERB", "AUX", "PART"):
        return False
    if tok.dep == "pobj" and view.head(i).lower not in _TEMPORAL_PREPS:
        return False
    if any(c.lower in _PLURAL_DETS for c in view.children(i, ("det", "nummod", "amod"))):
        return False
    if not _agrees(subject, tok, lex):
        return False
    lemma = _verb_lemma(tok, lex)
    if lemma is None:
        return False
    old_head, old_dep = tok.head, tok.dep
    _set_verb(tok, lemma, rule_id)
    subject.dep = "nsubj"
    subject.repaired += (rule_id,)
    for child in view.children(i):  # determiners and left modifiers belong to the subject
        if child.i < subject.i and child.dep in ("det", "amod", "compound", "nummod", "poss", "nmod"):
            child.head = subject.i
    if old_dep == "pobj":  # 'as/prep an ice cream truck passes/pobj' -> mark + advcl
        prep = view[old_head]
        tok.head, tok.dep = prep.head, "advcl"
        prep.head, prep.dep = i, "mark"
        prep.repaired += (rule_id,)
    elif old_dep in ("nsubj", "nsubjpass") and old_head != i:
        # 'A toilet flushes/nsubj, and water then flows': this noun was the subject of
        # the next verb; it is the first clause, the next verb its coordinated clause.
        verb = view[old_head]
        root = verb.head == verb.i
        tok.head, tok.dep = (i, "ROOT") if root else (verb.head, verb.dep)
        verb.head = i
        verb.dep = "advcl" if view.has_child(verb.i, ("mark",)) else "conj"
        verb.repaired += (rule_id,)
        view.rebuild()
        if view.subject(verb.i) is None:
            for conj in view.children(i, ("conj",)):
                if conj.pos in _NOUNS and conj.i < verb.i:
                    conj.head, conj.dep = verb.i, "nsubj"
                    break
    view.rebuild()
    return True


def to_verb(view: TokenView, tok: Tok, lex: WordNetLemmas, rule_id: str = "to-verb") -> bool:
    """Make a token a verb, if WordNet has it as one ('birds whistle/ADJ')."""
    lemma = _verb_lemma(tok, lex)
    if lemma is None:
        return False
    _set_verb(tok, lemma, rule_id)
    return True


_CLAUSAL_DEPS = frozenset({"ROOT", "dep", "ccomp", "advcl", "xcomp", "acl", "relcl", "parataxis", "pcomp"})
_NOMINAL_DEPS = frozenset({"nsubj", "nsubjpass", "dobj", "pobj", "appos", "npadvmod", "attr"})


def ing_adjective(view: TokenView, tok: Tok, lex: WordNetLemmas, rule_id: str = "ing-adjective") -> bool:
    """An -ing ADJ heading a clause is a verb; coordinated with a noun, a gerund noun."""
    if not tok.lower.endswith("ing"):
        return False
    base = lex.verb_base(tok.lower)
    if base is None:
        return False
    head = view.head(tok.i)
    if tok.dep in _CLAUSAL_DEPS or (tok.dep == "conj" and head.pos in ("VERB", "AUX")):
        _set_verb(tok, base, rule_id)
        return True
    if tok.dep in _NOMINAL_DEPS or (tok.dep == "conj" and head.pos in _NOUNS):
        tok.pos, tok.tag, tok.lemma = "NOUN", "NN", base
        tok.repaired += (rule_id,)
        return True
    return False


def adjective_to_noun(view: TokenView, tok: Tok, lex: WordNetLemmas, rule_id: str = "noun-adjective") -> bool:
    """An ADJ WordNet has only as a noun is a compound noun ('siren/ADJ blasts')."""
    if lex.wordnet is None or lex.has(tok.lower, "ADJ") or not lex.has(tok.lower, "NOUN"):
        return False
    if tok.lower.endswith(("ing", "ed")):
        return False
    tok.pos, tok.tag, tok.dep = "NOUN", "NN", "compound"
    tok.repaired += (rule_id,)
    return True


def gerund_noun_to_verb(
    view: TokenView, tok: Tok, lex: WordNetLemmas, rule_id: str = "bare-gerund-conj"
) -> bool:
    """'a door opening and closing/NOUN': a bare -ing noun coordinated with an event is a verb."""
    head = view.head(tok.i)
    if not tok.lower.endswith("ing") or not (head.pos == "VERB" or head.lower.endswith("ing")):
        return False
    base = lex.verb_base(tok.lower)
    if base is None:
        return False
    _set_verb(tok, base, rule_id)
    return True


Repair = Callable[[TokenView, Tok, WordNetLemmas, str], bool]
#: The repair actions the rule file may name.
REPAIRS: dict[str, Repair] = {
    "propn_to_noun": propn_to_noun,
    "noun_chain_to_verb": noun_chain_to_verb,
    "to_verb": to_verb,
    "ing_adjective": ing_adjective,
    "adjective_to_noun": adjective_to_noun,
    "particle_to_preposition": particle_to_preposition,
    "preposition_to_mark": preposition_to_mark,
    "attach_to_verb": attach_to_verb,
    "release_marked_clause": release_marked_clause,
    "gerund_to_previous_noun": gerund_to_previous_noun,
    "gerund_noun_to_verb": gerund_noun_to_verb,
    "compound_to_subject": compound_to_subject,
    "gerund_object_to_verb": gerund_object_to_verb,
    "split_coordinated_subject": split_coordinated_subject,
}


_Labels: TypeAlias = "frozenset[str] | None"
# (rule, labels, POS, lemmas, child labels, head labels, the one label, the one POS, action,
#  the rule's compiled test of the rest (None: its labels say all), the rule's id)
_Step = tuple[
    ArcRule, _Labels, _Labels, _Labels, _Labels, _Labels, "str | None", "str | None", Repair,
    "Callable[[TokenView, Tok], bool] | None", str,
]
# The steps whose label tests (the token's, a child's, the head's) a set of labels
# passes, with their positions: a caption's labels decide those tests for every token.
_Todo = tuple[tuple[int, _Step], ...]
_PLANS: dict[int, tuple[tuple[ArcRule, ...], tuple[_Step, ...], dict[frozenset[str], _Todo]]] = {}
_MAX_LABEL_SETS = 1 << 12


def _todo(repairs: tuple[ArcRule, ...], labels: frozenset[str]) -> _Todo:
    """The steps of the rule set that a caption with these labels may meet, in order.

    A step is left out when it names labels (of the token, of a child, of the head) none
    of which the caption has: :func:`apply_repairs` would skip it after the same tests.
    The answers are kept per set of labels (captions share them).
    """
    _, steps, known = _plan(repairs)
    found = known.get(labels)
    if found is None:
        if len(known) >= _MAX_LABEL_SETS:
            known.clear()
        found = known[labels] = tuple(
            (position, step)
            for position, step in enumerate(steps)
            # the token's labels, a child's, the head's
            if not any(names is not None and names.isdisjoint(labels) for names in step[4:6] + step[1:2])
        )
    return found


def _plan(
    repairs: tuple[ArcRule, ...],
) -> tuple[tuple[ArcRule, ...], tuple[_Step, ...], dict[frozenset[str], _Todo]]:
    """Each repair with its label, POS and lemma tests and its action, read once per rule
    set, and the rule set's table of :func:`_todo` answers."""
    found = _PLANS.get(id(repairs))
    if found is None or found[0] is not repairs:
        if len(_PLANS) > 64:
            _PLANS.clear()
        steps = tuple(
            (
                r,
                r.when.arc,
                r.when.pos,
                r.when.lemma,
                r.when.has_child,
                r.when.head_arc,
                _only(r.when.arc),
                _only(r.when.pos),
                REPAIRS[r.action],
                None if r.label_only else r.when.matches,
                r.id,
            )
            for r in repairs
        )
        found = _PLANS[id(repairs)] = (repairs, steps, {})
    return found


def _only(labels: frozenset[str] | None) -> str | None:
    """The label of a set of one (its tokens are then one index entry, already in order)."""
    return next(iter(labels)) if labels is not None and len(labels) == 1 else None


_position = attrgetter("i")  # a key read in C, not a Python call per token


def _merged(groups: list[list[Tok]]) -> list[Tok]:
    """Tokens of several index entries, in token order."""
    return sorted([tok for group in groups for tok in group], key=_position)


def _index(view: TokenView) -> tuple[defaultdict[str, list[Tok]], defaultdict[str, list[Tok]]]:
    """The tokens by dependency label and by POS.

    Read an entry only after testing that its key is there: reading a missing one would
    add it, empty, and the rules' set tests would then see a label the caption lacks.
    """
    by_dep: defaultdict[str, list[Tok]] = defaultdict(list)
    by_pos: defaultdict[str, list[Tok]] = defaultdict(list)
    for tok in view.tokens:
        by_dep[tok.dep].append(tok)
        by_pos[tok.pos].append(tok)
    return by_dep, by_pos


def _heads(view: TokenView, labels: frozenset[str]) -> set[int]:
    """The tokens with a child whose label is one of ``labels`` (``TokenView.has_child``)."""
    return {tok.head for tok in view.tokens if tok.dep in labels and tok.head != tok.i}


def apply_repairs(view: TokenView, repairs: tuple[ArcRule, ...], lex: WordNetLemmas) -> int:
    """Apply the repairs in order, each to every token it matches.

    Args:
        view: the caption's tokens (changed in place).
        repairs: the ``[[repair]]`` rules.
        lex: WordNet questions.

    Returns:
        How many repairs changed something.
    """
    changed = 0
    index = view.take_index()  # made while the tokens were read, if they were read from a Doc
    by_dep, by_pos = index if index is not None else _index(view)
    # Only the repairs whose labels (the token's, a child's, the head's) the caption has:
    # most repairs need a label this caption lacks.
    todo = _todo(repairs, frozenset(by_dep))
    next_step = 0
    while next_step < len(todo):
        position, step = todo[next_step]
        next_step += 1
        _, arcs, poses, lemmas, child_labels, _, one_arc, one_pos, action, matches, rule_id = step
        if arcs is not None:
            if one_arc is not None:
                pool = by_dep[one_arc]  # there: _todo kept the step for this label
            else:
                found = [by_dep[arc] for arc in arcs if arc in by_dep]
                pool = found[0] if len(found) == 1 else _merged(found)
        elif poses is not None:
            if poses.isdisjoint(by_pos):
                continue
            if one_pos is not None:
                pool = by_pos[one_pos]
            else:
                found = [by_pos[pos] for pos in poses if pos in by_pos]
                pool = found[0] if len(found) == 1 else _merged(found)
        else:
            pool = list(view.tokens)
        if (arcs is not None and poses is not None) or lemmas is not None:
            pool = [
                tok
                for tok in pool
                if (poses is None or tok.pos in poses)
                and (lemmas is None or tok.lemma in lemmas or tok.lower in lemmas)
            ]
        matching = pool  # in token order, as the rule file says
        before = changed
        # A rule that needs a child with some label ('subject-makes-verb': an nsubj)
        # tests only the heads of such children, found again after each change.
        heads = _heads(view, child_labels) if child_labels is not None else None
        for tok in matching:
            if heads is not None and tok.i not in heads:
                continue  # no child with the label: holds() would say no
            if (matches is None or matches(view, tok)) and action(view, tok, lex, rule_id):
                changed += 1
                if heads is not None and child_labels is not None:
                    heads = _heads(view, child_labels)
        if changed != before:  # a repair may relabel arcs and tags: the later steps again
            by_dep, by_pos = _index(view)
            todo = tuple(entry for entry in _todo(repairs, frozenset(by_dep)) if entry[0] > position)
            next_step = 0
    return changed
