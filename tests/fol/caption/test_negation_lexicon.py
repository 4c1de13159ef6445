"""Negation cue classes from lexical semantics (docs/negation.md, "Cue classes from lexical semantics").

The shipped ``grammars/negation_lexicon.toml`` must be what ``scripts/build_negation_lexicon.py``
derives from WordNet 3.0 and the published cue lexicons; its classes must reach the parser;
and each class must give the scope its construction says. The sentences are constructed for
these tests (a harp, a goose, a dishwasher, a foghorn: sound phrases no other test uses).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from caption_fixtures import parser

from fortekit.errors import NegationRulesError
from fortekit.fol.caption.negation_lexicon import (
    load_negation_lexicon,
    merge_lexicon,
    parse_negation_lexicon,
)
from fortekit.fol.caption.negation_rules import load_negation_rules, parse_negation_rules

ROOT = Path(__file__).resolve().parents[3]


def _script():  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import build_negation_lexicon
    finally:
        sys.path.pop(0)
    return build_negation_lexicon


def parts(text: str) -> tuple[set[str], set[str], set[str]]:
    """(excluded, denied, asserted) predicate symbols of a parse."""
    result = parser().parse(text)
    excluded = {r.symbol for r in result.predicates if r.excluded}
    denied = {r.symbol for r in result.predicates if r.negated and not r.excluded}
    asserted = {r.symbol for r in result.predicates if not r.excluded and not r.negated}
    return excluded, denied, asserted


# --- the file ------------------------------------------------------------------------------------
def test_the_shipped_lexicon_is_what_the_script_derives() -> None:
    from fortekit.vocab.wordnet import load_wordnet

    script = _script()
    derived = script.render(script.derive(load_wordnet().reader))
    shipped = (ROOT / "grammars" / "negation_lexicon.toml").read_text(encoding="utf-8")
    assert shipped == derived, "run: .venv/bin/python scripts/build_negation_lexicon.py"


def test_every_entry_has_a_class_a_provenance_and_a_cited_source() -> None:
    lexicon = load_negation_lexicon()
    assert lexicon is load_negation_lexicon()  # read once
    declared = set(lexicon.classes)
    for entry in lexicon.entries:
        assert entry.cls in declared and entry.provenance and entry.source in lexicon.sources
        assert entry.joins.removeprefix("attests:").partition(":")[0] in ("cue", "list", "segments")
    classes = {entry.cls for entry in lexicon.entries}
    assert classes >= {
        "omission_verb",
        "removal_verb",
        "desire_verb",
        "need_verb",
        "perception_verb",
        "containment_verb",
        "obscuring_verb",
        "absence_adjective",
        "privative_participle",
        "negative_implicative",
        "published",
    }
    sources = {entry.source for entry in lexicon.entries}
    assert sources >= {"wordnet", "negex", "conandoyle-neg", "sfu-review"}


def test_wordnet_decides_the_classes_not_a_list() -> None:
    """A word is in a class when its most frequent sense lies under the class's synsets."""
    lexicon = load_negation_lexicon()
    assert {"omit", "exclude", "leave out", "lack", "avoid"} <= lexicon.lemmas("omission_verb")
    assert {"remove", "delete", "eliminate", "filter out"} <= lexicon.lemmas("removal_verb")
    assert "drop" not in lexicon.lemmas("omission_verb")  # its first sense is "let fall"
    assert "dig" not in lexicon.lemmas("removal_verb")  # a manner of motion, not defined as removing
    assert "see" not in lexicon.lemmas("perception_verb")  # not seeing a sound says nothing
    assert {"hear", "detect", "notice"} <= lexicon.lemmas("perception_verb")
    assert {"want", "need", "require", "contain", "include"} <= (
        lexicon.lemmas("desire_verb") | lexicon.lemmas("need_verb") | lexicon.lemmas("containment_verb")
    )
    assert {"imperceptible", "inaudible", "nonexistent"} <= lexicon.lemmas("absence_adjective")
    assert "away" not in lexicon.lemmas("absence_adjective")  # an adverb of place (item d)
    assert {"unaccompanied", "uninterrupted", "undisturbed", "unmixed"} <= lexicon.lemmas(
        "privative_participle"
    )
    assert "unfolded" not in lexicon.lemmas("privative_participle")  # reversative un-, no negation
    assert "impaired" not in lexicon.lemmas("privative_participle")  # no im- + "paired"
    assert lexicon.lemmas("negative_implicative") == {"unable"}


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[[not toml", "not valid TOML"),
        (
            '[classes.x]\njoins = "cue:a"\n[words]\nentries = [{ class = "y", lemma = "omit" }]',
            "not declared",
        ),
        ('[classes.x]\njoins = "shelf:a"', "must be \\[attests:\\]cue:ID"),
        (
            '[classes.x]\njoins = "cue:a"\n[words]\nentries = [{ class = "x", lemma = "omit", colour = 1 }]',
            "unknown key",
        ),
    ],
)
def test_a_bad_lexicon_names_its_problem(text: str, problem: str) -> None:
    with pytest.raises(NegationRulesError, match=r"\[E314\].*" + problem):
        parse_negation_lexicon(text)


def test_the_lexicon_adds_words_and_never_moves_one() -> None:
    lexicon = parse_negation_lexicon(
        '[classes.a]\njoins = "cue:absence"\n[words]\nentries = [\n'
        '{ class = "a", lemma = "devoid", source = "wordnet", provenance = "p" },\n'
        '{ class = "a", lemma = "gone missing", source = "wordnet", provenance = "p" },\n'
        '{ class = "a", lemma = "hush", source = "wordnet", provenance = "p", joins = "list:quiet" }]'
    )
    data = {"cue": [{"id": "absence", "words": ["absent"]}, {"id": "privative", "words": ["devoid"]}]}
    merged = merge_lexicon(data, lexicon)
    assert merged["cue"][0]["words"] == ["absent"]  # "devoid" keeps its class
    assert merged["cue"][0]["lemma_phrases"] == ["gone missing"]
    assert merged["lexicon"]["quiet"] == ["hush"]
    assert data["cue"][0] == {"id": "absence", "words": ["absent"]}  # the input is not changed
    unknown = parse_negation_lexicon(
        '[classes.a]\njoins = "cue:nope"\n[words]\nentries = [{ class = "a", lemma = "x", source = "s", '
        'provenance = "p" }]'
    )
    with pytest.raises(NegationRulesError, match=r"\[E314\].*cue 'nope' is not in the rule file"):
        merge_lexicon(data, unknown)


def test_a_rule_file_reads_the_lexicon_it_names(tmp_path: Path) -> None:
    rules = load_negation_rules()
    assert rules.cue_for_word("omit").id == "lacking-verb"
    assert rules.cue_for_word("uninterrupted").id == "privative-participle"
    assert rules.cue_for_word("devoid").id == "privative-adjective"
    assert {"want", "need", "notice", "contain", "have"} <= rules.words("perception")
    assert "drown" in rules.words("obscuring_verbs")
    text = '[[cue]]\nid = "p"\nclass = "particle"\nwords = ["not"]\nscopes = ["ambiguous"]'
    assert parse_negation_rules(text).cue_for_word("omit") is None  # no cue_lexicon, no lexicon
    with pytest.raises(NegationRulesError, match=r"\[E313\].*no lexicon file 'elsewhere.toml'"):
        parse_negation_rules('cue_lexicon = "elsewhere.toml"\n' + text, base=tmp_path)


def test_the_lexicon_imports_neither_torch_nor_nltk() -> None:
    code = (
        "import sys, fortekit.fol.caption.negation_rules as r; r.load_negation_rules(); "
        "print('torch' in sys.modules, 'nltk' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


# --- the classes at work -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "excluded", "asserted"),
    [
        # omission (exclude.v.01, neglect.v.01, lack, avoid): the verb's object, or the noun of its participle
        ("a harp playing, and the mix omits any goose honking", {"Goose", "Honking"}, {"Harp", "Playing"}),
        ("a harp playing with the goose honking left out", {"Goose", "Honking"}, {"Harp", "Playing"}),
        ("a harp playing, avoiding a foghorn", {"Foghorn"}, {"Harp", "Playing"}),
        # removal (remove.v.01, get_rid_of.v.01, filter.v.01, ...): a resultative participle
        ("a harp playing with the goose honking removed", {"Goose", "Honking"}, {"Harp", "Playing"}),
        ("a harp playing; the foghorn has been filtered out", {"Foghorn"}, {"Harp", "Playing"}),
        # negated verbs of wanting, needing, perceiving, containing: their object
        ("a harp playing, and I do not want a goose honking", {"Goose", "Honking"}, {"Harp", "Playing"}),
        ("a harp playing; we don't need any foghorn", {"Foghorn"}, {"Harp", "Playing"}),
        ("a harp playing but nobody ever notices a goose honking", {"Goose", "Honking"}, {"Harp", "Playing"}),
        (
            "a harp playing; the clip does not include a goose honking",
            {"Goose", "Honking"},
            {"Harp", "Playing"},
        ),
        # prefixed participles of co-occurrence (WordNet antonymy, or the stem): the by/with object
        ("a harp playing, uninterrupted by a goose honking", {"Goose", "Honking"}, {"Harp", "Playing"}),
        ("a harp playing undisturbed by any foghorn", {"Foghorn"}, {"Harp", "Playing"}),
        ("a harp playing, unmixed with goose honks", {"Goose"}, {"Harp", "Playing"}),
        # a negated co-occurrence connective (NegEx "not associated with")
        ("a harp playing, not accompanied by a goose honking", {"Goose", "Honking"}, {"Harp", "Playing"}),
        # absence adjectives by antonymy with presence and perceptibility
        ("a harp playing while the foghorn is imperceptible", {"Foghorn"}, {"Harp", "Playing"}),
    ],
)
def test_each_class_excludes_what_its_construction_gives(
    text: str, excluded: set[str], asserted: set[str]
) -> None:
    found_excluded, _, found_asserted = parts(text)
    assert excluded <= found_excluded, text
    assert asserted <= found_asserted, text
    assert not found_asserted & excluded


@pytest.mark.parametrize(
    "text",
    [
        "a lid is removed from a dishwasher",  # a removal in the simple passive: an event
        "someone removes the cork from a bottle",  # in the active: an event
        "an unaccompanied harp playing",  # no by/with object: no co-occurring sound named
        "an imperceptible hum from a dishwasher",  # attributive: the hum is there
        "a stopped truck idling",  # an attributive ceasing participle: the truck is there
        "a goose honking far off",  # words of position (item d)
        "a foghorn sounding off to the left",
        "a storm that is off in the distance is approaching",
        "a dishwasher with its door removed from a hinge humming",  # a removal with its source: an event
    ],
)
def test_constructions_that_negate_nothing(text: str) -> None:
    result = parser().parse(text)
    assert not any(r.excluded for r in result.predicates), str(result.formula)


@pytest.mark.parametrize(
    ("text", "excluded"),
    [
        ("a harp playing with the heater off", "Heater"),  # absolute: a device that is off
        ("the heater is off and a harp plays", "Heater"),  # copular
    ],
)
def test_off_stays_an_absence_where_the_grammar_says_so(text: str, excluded: str) -> None:
    assert excluded in parts(text)[0]


def test_a_negated_verb_of_hiding_keeps_its_object() -> None:
    excluded, denied, asserted = parts("the wind does not drown out a goose honking")
    assert {"Goose", "Honking", "Wind"} <= asserted and not excluded and denied


def test_the_object_of_a_negated_verb_of_no_class_is_never_asserted() -> None:
    """Item c: no class decides, so the scope is unresolved and the object is no assertion."""
    for text in (
        "a harp playing and the boy does not chase a goose",
        "a harp playing and a dog never bothers the goose",
        "a harp playing, not feeding a goose",
    ):
        result = parser().parse(text)
        symbols = {r.symbol for r in result.predicates if not r.excluded and not r.negated}
        assert "Goose" not in symbols, str(result.formula)
        assert [(n.resolved, n.reason) for n in result.scopes] == [(False, "negated verb of no class")]
        assert {"Harp", "Playing"} <= symbols


def test_a_negated_verb_with_a_property_object_is_a_denial() -> None:
    """'never changing its pitch': the object is a property of the subject's sound (WordNet's
    noun.attribute), no other sound: the verb is denied, as before."""
    _, denied, asserted = parts("a foghorn sounding, never changing its pitch")
    assert "Foghorn" in asserted and denied


def test_a_negative_implicative_from_antonymy() -> None:
    _, denied, asserted = parts("the dishwasher is unable to start")
    assert "Dishwasher" in asserted and any(s.startswith("Start") for s in denied)


def test_a_published_scope_terminator_ends_a_segment() -> None:
    excluded, _, asserted = parts("no goose honking; however a harp playing")
    assert {"Goose"} <= excluded and {"Harp", "Playing"} <= asserted


@pytest.mark.parametrize("text", ["the goose avoids", "a dishwasher that omits", "a harp lacking"])
def test_a_verb_of_lacking_with_nothing_to_scope_is_unsure_never_an_assertion(text: str) -> None:
    """Item c: the subject of a verb of lacking is no absence, and the verb, with no object,
    is recorded as unresolved and adds nothing."""
    result = parser().parse(text)
    assert not any(r.excluded or r.negated for r in result.predicates), str(result.formula)
    assert not result.symbols & {"Avoid", "Omit", "Lack", "Lacking", "Avoiding"}
    assert [n.resolved for n in result.scopes] == [False]
