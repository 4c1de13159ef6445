"""The declarative rule file (grammars/arc_rules.toml): its contents, its checks and the repairs."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest
from caption_fixtures import GOLD, parser, require

from fortekit.errors import ArcRulesError
from fortekit.fol.caption import CaptionParser, parse_caption
from fortekit.fol.caption.negation_rules import load_negation_rules
from fortekit.fol.caption.pass1 import ACTIONS
from fortekit.fol.caption.repairs import REPAIRS, apply_repairs
from fortekit.fol.caption.rules import ARC_ACTIONS, REPAIR_ACTIONS, load_rules, parse_rules
from fortekit.fol.caption.tokens import from_doc

SHIPPED = Path(__file__).resolve().parents[3] / "grammars" / "arc_rules.toml"


def test_every_paper_rule_is_in_the_file() -> None:
    rules = load_rules()
    labels = {label for rule in rules.rules if rule.when.arc for label in rule.when.arc}
    # The paper's Table: nsubj, amod, advmod, prep + pobj, neg, conj, compound, xcomp; its
    # neg rule (¬P(x) on the event verb) is the particle class of the negation inventory.
    assert {"nsubj", "amod", "advmod", "prep", "pobj", "conj", "compound", "xcomp"} <= labels
    ids = {rule.id for rule in rules.rules}
    assert {"nsubj", "amod", "advmod", "prep", "conj-event", "compound", "xcomp"} <= ids
    assert all(rule.doc for rule in (*rules.rules, *rules.repairs))  # each rule says why
    particle = load_negation_rules().cue_for_word("not")
    assert particle is not None and "negated_predicate" in particle.scopes


def test_actions_are_a_small_fixed_set_and_all_implemented() -> None:
    assert set(ACTIONS) == ARC_ACTIONS
    assert set(REPAIRS) == REPAIR_ACTIONS
    rules = load_rules()
    assert {r.action for r in rules.rules} <= ARC_ACTIONS
    assert {r.action for r in rules.repairs} <= REPAIR_ACTIONS


def test_lexicon_lists() -> None:
    lexicon = load_rules().lexicon
    assert {"morning", "night", "moment"} <= lexicon.words("time_nouns")
    assert {"while", "as"} <= lexicon.words("while_words")
    assert {"then", "before", "until", "followed"} <= lexicon.words("before_words")
    negation = load_negation_rules()
    assert all(negation.cue_for_word(word) is not None for word in ("no", "without", "not", "never", "n't"))
    assert {"background", "distance", "foreground"} == lexicon.words("property_nouns")
    assert lexicon.multiword_prepositions["in front of"] == "in front of"
    assert lexicon.words("no_such_list") == frozenset()


def test_the_index_by_label_keeps_file_order() -> None:
    rules = load_rules()
    order = {rule.id: k for k, rule in enumerate(rules.rules)}
    for label, found in rules.by_arc.items():
        assert [order[r.id] for r in found] == sorted(order[r.id] for r in found), label
    assert rules.rules_for("no-such-label")[-1].id == "default"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[[rule]]\nid = 'r'\narc = ['*']\naction = 'teleport'", "unknown action"),
        ("[[rule]]\nid = 'r'\narcs = ['*']\naction = 'attach'", "unknown key"),
        ("[[rule]]\nid = 'r'\nlemma = '@nothing'\naction = 'attach'", "unknown lexicon list"),
        ("[[rule]]\narc = ['*']\naction = 'attach'", "needs an id"),
        ("[[rule]]\nid = 'r'\naction = 'attach'\n[[rule]]\nid = 'r'\naction = 'attach'", "used twice"),
        ("[[rule]]\nid = 'r'\naction = 'attach'\nemit = 'no'", "emit must be a bool"),
        ("[lexicon]\nx = 3\n[[rule]]\nid = 'r'\naction = 'attach'", "list of strings"),
        ("this is = not toml [", "the file"),
        ("[lexicon]\nx = ['a']", "no [[rule]]"),
        ("version = 2\n[[rule]]\nid = 'r'\naction = 'attach'", "version 1"),
    ],
)
def test_invalid_rule_files_are_reported(text: str, problem: str) -> None:
    with pytest.raises(ArcRulesError, match=r"\[E304\]") as info:
        parse_rules(text, "test.toml")
    assert problem in str(info.value)


def test_a_custom_rule_file_changes_the_parse(tmp_path: Path) -> None:
    # Turning the spatial 'prep' rule into an attachment shows the file, not the code, decides.
    shipped = SHIPPED.read_text(encoding="utf-8")
    text = shipped.replace('has_object = true\naction = "relation"', 'has_object = true\naction = "attach"')
    assert text != shipped
    custom = tmp_path / "rules.toml"
    custom.write_text(text, encoding="utf-8")
    assert "On" in parser().parse("rain falling on a metal roof").symbols
    assert "On" not in CaptionParser(rules=custom).parse("rain falling on a metal roof").symbols


def test_a_custom_negation_file_changes_the_parse(tmp_path: Path) -> None:
    # Taking 'without' out of the cue inventory makes it an ordinary preposition.
    shipped = Path(str(resources.files("fortekit.grammars").joinpath("negation.toml")))
    text = shipped.read_text(encoding="utf-8").replace('words = ["without", ', 'words = [')
    custom = tmp_path / "negation.toml"
    custom.write_text(text, encoding="utf-8")
    changed = CaptionParser(negation=custom).parse("wind blowing without rain")
    assert "Without" in changed.symbols and not any(r.excluded for r in changed.predicates)
    assert changed.scopes == ()


def _repaired(text: str) -> list[tuple[str, str, str, int]]:
    view = from_doc(parser().nlp(text), {})
    apply_repairs(view, load_rules().repairs, parser().lex)
    return [(t.text, t.pos, t.dep, t.head) for t in view]


def test_repair_noun_chain_verb() -> None:
    # The small model reads 'approaches' as a plural noun with 'car' as its compound.
    tokens = _repaired("A car approaches and the car passes by")
    assert tokens[1] == ("car", "NOUN", "nsubj", 2)
    assert tokens[2][:3] == ("approaches", "VERB", "ROOT")
    assert _repaired("A water fountain splashes")[3][:2] == ("splashes", "VERB")


def test_repair_noun_chain_verb_as_a_clause_of_as() -> None:
    tokens = _repaired("A bird tweets as an ice cream truck passes.")
    assert (tokens[3][0], tokens[3][2]) == ("as", "mark")
    assert tokens[8][:3] == ("passes", "VERB", "advcl")


def test_repair_ing_adjective_and_noun_adjective() -> None:
    assert _repaired("water flowing, not dripping")[4][:2] == ("dripping", "VERB")
    assert _repaired("A police siren, then short siren blasts.")[-3][:2] == ("siren", "NOUN")


def test_repair_locative_particle() -> None:
    assert "Over(y, z)" in {
        f"{r.symbol}({', '.join(r.args)})"
        for r in parse_caption("A fountain runs and water pours over rocks.").predicates
    }


def test_repairs_can_be_turned_off() -> None:
    plain = CaptionParser(parser().nlp, repairs=False).parse(
        "A toilet flushes, and water then flows down the drain."
    )
    repaired = parse_caption("A toilet flushes, and water then flows down the drain.")
    assert "Before(x, y)" in {f"{r.symbol}({', '.join(r.args)})" for r in repaired.predicates}
    assert plain.formula != repaired.formula


def test_repairs_help_on_the_gold_set() -> None:
    from fortekit.fol.caption.report import gold_scores, read_gold

    scores = gold_scores(parser(), read_gold(require(GOLD, "the parser gold set")))
    with_repairs, without = scores["parser"], scores["parser without repairs"]
    assert with_repairs.relation.f1 > without.relation.f1
    assert with_repairs.exact_match > without.exact_match
    assert with_repairs.unary.f1 >= without.unary.f1


@pytest.mark.parametrize(
    ("caption", "formula"),
    [  # docs/annotation.md, '"N of M" and "is home to" (filler relations)'
        ("a lot of noise", "∃x Noise(x)"),
        ("the sound of rain", "∃x Rain(x)"),
        ("a flock of birds chirp", "∃x [Flock(x) ∧ Bird(x) ∧ Chirping(x)]"),
        ("a stream of water flows", "∃x ∃y [Stream(x) ∧ Of(x, y) ∧ Water(y) ∧ Flowing(x)]"),
        ("a bag of pebbles is shaken", "∃x ∃y [Bag(x) ∧ Of(x, y) ∧ Pebble(y) ∧ Shaking(x)]"),
        ("the forest is home to many birds", "∃x ∃y [Forest(x) ∧ Home(x) ∧ To(x, y) ∧ Bird(y)]"),
    ],
)
def test_filler_relation_conventions(caption: str, formula: str) -> None:
    assert str(parser().parse(caption).formula) == formula
