"""Indexes of the arc rules: by label, by label and POS, and per word (read once).

A token is tested against the few rules its label and POS may meet rather than all
of them; :func:`word_rules` also does a word's own tests (label, POS, tag, lemma,
excluded lemma) once, so that :func:`~fortekit.fol.caption.conditions.holds` decides
only the rules that look at the word's head, children or object.

Example:
    >>> from fortekit.fol.caption.rules import load_rules
    >>> rules = load_rules()
    >>> tests, sure = word_rules(rules.by_arc_pos, "nsubj", "NOUN", "NNS", "dog", "dogs")
    >>> sure.id
    'nsubj'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # rules.py imports this module
    from fortekit.fol.caption.rules import ArcRule, Conditions

__all__ = ["MAX_WORDS", "index_by_arc", "index_by_pos", "tests_only_the_word", "word_passes", "word_rules"]

#: How many words :meth:`RuleSet.rules_for_word` keeps before it starts again.
MAX_WORDS = 1 << 16
_OTHER_TESTS = (
    "head_arc", "head_pos", "head_tag", "head_lemma", "head_child_lemma", "has_child", "lacks_child",
    "child_lemma", "object_pos", "object_lemma", "has_object",
)


def tests_only_the_word(when: Conditions) -> bool:
    """Whether ``when`` tests nothing of the word's head, children or object.

    Example:
        >>> from fortekit.fol.caption.rules import Conditions
        >>> tests_only_the_word(Conditions(arc=frozenset({"amod"}))), tests_only_the_word(
        ...     Conditions(head_pos=frozenset({"NOUN"})))
        (True, False)
    """
    return all(getattr(when, name) is None for name in _OTHER_TESTS)


def word_passes(when: Conditions, dep: str, pos: str, tag: str, lemma: str, lower: str) -> bool:
    """The tests of the word itself, as :func:`~fortekit.fol.caption.conditions.holds` does them.

    Example:
        >>> from fortekit.fol.caption.rules import Conditions
        >>> word_passes(Conditions(lemma=frozenset({"dog"})), "nsubj", "NOUN", "NNS", "dog", "dogs")
        True
    """
    return (
        (when.arc is None or dep in when.arc)
        and (when.pos is None or pos in when.pos)
        and (when.tag is None or tag in when.tag)
        and (when.lemma is None or lemma in when.lemma or lower in when.lemma)
        and (when.not_lemma is None or not (lemma in when.not_lemma or lower in when.not_lemma))
    )


def word_rules(
    by_arc_pos: Mapping[str, Mapping[str, tuple[ArcRule, ...]]],
    dep: str,
    pos: str,
    tag: str,
    lemma: str,
    lower: str,
) -> tuple[tuple[ArcRule, ...], ArcRule | None]:
    """The arc rules left to test for a word, and the rule that applies if none of them holds.

    Returns:
        In file order, the rules whose tests of the word pass and that test its head,
        children or object too; and the first rule after them that tests nothing else
        (it holds, so no later rule is reached), or None.
    """
    by_pos = by_arc_pos.get(dep, by_arc_pos[""])
    rules = by_pos.get(pos)
    tests: list[ArcRule] = []
    for rule in rules if rules is not None else by_pos[""]:
        if not word_passes(rule.when, dep, pos, tag, lemma, lower):
            continue
        if tests_only_the_word(rule.when):
            return tuple(tests), rule
        tests.append(rule)
    return tuple(tests), None


def index_by_arc(rules: tuple[ArcRule, ...]) -> dict[str, tuple[ArcRule, ...]]:
    """Label -> the rules that may apply to it, in file order (``""``: rules for any label).

    Example:
        >>> from fortekit.fol.caption.rules import load_rules
        >>> "" in index_by_arc(load_rules().rules)
        True
    """
    labels = {label for rule in rules if rule.when.arc is not None for label in rule.when.arc}
    index = {label: tuple(r for r in rules if r.when.arc is None or label in r.when.arc) for label in labels}
    index[""] = tuple(r for r in rules if r.when.arc is None)
    return index


def index_by_pos(
    by_arc: Mapping[str, tuple[ArcRule, ...]],
) -> dict[str, dict[str, tuple[ArcRule, ...]]]:
    """Label -> POS -> the rules of ``by_arc`` whose POS test it passes (``""``: a POS no rule names).

    Example:
        >>> from fortekit.fol.caption.rules import load_rules
        >>> by_pos = index_by_pos(index_by_arc(load_rules().rules))
        >>> "" in by_pos[""]
        True
    """
    poses = {pos for rules in by_arc.values() for r in rules if r.when.pos is not None for pos in r.when.pos}
    return {
        label: {
            **{pos: tuple(r for r in rules if r.when.pos is None or pos in r.when.pos) for pos in poses},
            "": tuple(r for r in rules if r.when.pos is None),
        }
        for label, rules in by_arc.items()
    }
