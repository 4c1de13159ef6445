"""A rule's compiled tests (fol/caption/checks.py) answer as the readable definition does."""

from __future__ import annotations

import copy
import pickle

from caption_fixtures import CLOTHO_DEV, parser, require

from fortekit.fol.caption.checks import compile_beyond_word
from fortekit.fol.caption.conditions import holds
from fortekit.fol.caption.report import read_clotho
from fortekit.fol.caption.rules import Conditions, load_rules
from fortekit.fol.caption.tokens import Tok, TokenView, from_doc


def _word_in(tok: Tok, words: frozenset[str]) -> bool:
    return tok.lemma in words or tok.lower in words


def reference_beyond_word(when: Conditions, view: TokenView, tok: Tok) -> bool:
    """The tests beyond the word as docs/parser.md states them, field by field."""
    if when.tests_head:
        if tok.head == tok.i:
            return False
        head = view.tokens[tok.head]
        if when.head_arc is not None and head.dep not in when.head_arc:
            return False
        if when.head_pos is not None and head.pos not in when.head_pos:
            return False
        if when.head_tag is not None and head.tag not in when.head_tag:
            return False
        if when.head_lemma is not None and not _word_in(head, when.head_lemma):
            return False
        if when.head_child_lemma is not None and not any(
            _word_in(c, when.head_child_lemma) for c in view.children(head.i) if c.i != tok.i
        ):
            return False
    if when.tests_children:
        if when.has_child is not None and not view.has_child(tok.i, when.has_child):
            return False
        if when.lacks_child is not None and view.has_child(tok.i, when.lacks_child):
            return False
        words = when.child_lemma
        if words is not None and not any(_word_in(c, words) for c in view.children(tok.i)):
            return False
    if when.tests_object:
        obj = view.prep_object(tok.i)
        if when.has_object is not None and (obj is not None) != when.has_object:
            return False
        if when.object_pos is not None and (obj is None or obj.pos not in when.object_pos):
            return False
        if when.object_lemma is not None and (obj is None or not _word_in(obj, when.object_lemma)):
            return False
    return True


def reference_holds(when: Conditions, view: TokenView, tok: Tok) -> bool:
    """Every test of a rule as docs/parser.md states them: the word's own, then the rest."""
    if when.arc is not None and tok.dep not in when.arc:
        return False
    if when.pos is not None and tok.pos not in when.pos:
        return False
    if when.tag is not None and tok.tag not in when.tag:
        return False
    if when.lemma is not None and not _word_in(tok, when.lemma):
        return False
    if when.not_lemma is not None and _word_in(tok, when.not_lemma):
        return False
    return reference_beyond_word(when, view, tok)


def test_every_rule_answers_as_the_definition_on_clotho_tokens() -> None:
    captions = read_clotho(require(CLOTHO_DEV, "Clotho development captions"))[::12][:1200]
    rules = load_rules()
    every = rules.rules + rules.repairs
    caption_parser = parser()
    asked = agreed = held = matched = 0
    for doc in caption_parser.nlp.pipe(captions, batch_size=256):
        view = from_doc(doc, {})
        for tok in view.tokens:
            for rule in every:
                expected = reference_beyond_word(rule.when, view, tok)
                expected_all = reference_holds(rule.when, view, tok)
                asked += 1
                agreed += rule.when.beyond(view, tok) == expected
                agreed += holds(rule.when, view, tok) == expected_all == rule.when.matches(view, tok)
                held += expected
                matched += expected_all
    assert agreed == 2 * asked
    assert held > 1000 and matched > 1000  # the tests hold for some tokens, not only fail


def test_each_kind_of_test_is_compiled() -> None:
    amod = Tok(0, "loud", "loud", "loud", "ADJ", "JJ", "amod", 1, 0)
    music = Tok(1, "music", "music", "music", "NOUN", "NN", "ROOT", 1, 5)
    view = TokenView([amod, music], "loud music")
    cases = {
        Conditions(head_arc=frozenset({"ROOT"})): (True, False),
        Conditions(head_tag=frozenset({"NN"})): (True, False),
        Conditions(head_lemma=frozenset({"music"})): (True, False),
        Conditions(head_child_lemma=frozenset({"loud"})): (False, False),
        Conditions(has_child=frozenset({"amod"})): (False, True),
        Conditions(lacks_child=frozenset({"amod"})): (True, False),
        Conditions(child_lemma=frozenset({"loud"})): (False, True),
        Conditions(has_object=False): (True, True),
        Conditions(object_pos=frozenset({"NOUN"})): (False, False),
        Conditions(object_lemma=frozenset({"music"})): (False, False),
        Conditions(head_pos=frozenset({"NOUN"}), head_lemma=frozenset({"music"})): (True, False),
        Conditions(head_pos=frozenset({"NOUN"}), lacks_child=frozenset({"det"})): (True, False),
    }
    for when, expected in cases.items():
        got = (compile_beyond_word(when)(view, amod), compile_beyond_word(when)(view, music))
        assert got == expected == (
            reference_beyond_word(when, view, amod),
            reference_beyond_word(when, view, music),
        ), when
    assert holds(Conditions(arc=frozenset({"amod"}), head_pos=frozenset({"NOUN"})), view, amod)


def test_rules_with_compiled_tests_still_pickle_and_copy() -> None:
    rules = load_rules()
    for clone in (pickle.loads(pickle.dumps(rules)), copy.deepcopy(rules)):
        assert clone.rules == rules.rules and clone.repairs == rules.repairs
        assert all(callable(rule.when.matches) for rule in clone.rules + clone.repairs)
    view = TokenView([Tok(0, "in", "in", "in", "ADP", "IN", "ROOT", 0, 0)], "in")
    restored = pickle.loads(pickle.dumps(Conditions(has_object=True, arc=frozenset({"prep"}))))
    assert restored == Conditions(has_object=True, arc=frozenset({"prep"}))
    assert restored.beyond(view, view[0]) is False
