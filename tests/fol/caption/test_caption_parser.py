"""The caption parser Pi: the paper's worked examples, variables, negation, order, provenance."""

from __future__ import annotations

import pytest
from caption_fixtures import parser

from fortekit.fol import Atom, Not, Var, parse_formula, predicates
from fortekit.fol.caption import ParseResult, parse_caption, parse_captions


def literals(result: ParseResult) -> set[str]:
    """The formula's literals as text, e.g. {'Bird(x)', '¬Rain(y)'}."""
    return {("¬" if r.negated else "") + f"{r.symbol}({', '.join(r.args)})" for r in result.predicates}


# --- the paper's worked examples -------------------------------------------------------


def test_birds_chirping_in_the_morning() -> None:
    result = parse_caption("birds chirping in the morning")
    assert str(result.formula) == "∃x ∃t [Bird(x) ∧ Chirping(x) ∧ Morning(t)]"
    assert not result.used_fallback


def test_a_person_talking() -> None:
    assert literals(parse_caption("a person talking")) == {"Person(x)", "Talking(x)"}


def test_quiet_footsteps_in_an_empty_corridor() -> None:
    result = parse_caption("quiet footsteps in an empty corridor")
    assert str(result.formula) == "∃x ∃y [Quiet(x) ∧ Footstep(x) ∧ In(x, y) ∧ Empty(y) ∧ Corridor(y)]"


def test_rain_falling_on_a_metal_roof() -> None:
    result = parse_caption("rain falling on a metal roof")
    assert {"Rain(x)", "On(x, y)", "Metal(y)", "Roof(y)"} <= literals(result)


def test_wind_blowing_without_rain() -> None:
    result = parse_caption("wind blowing without rain")
    # The excluded entity is a negated clause of its own (docs/annotation.md "Negation").
    assert str(result.formula) == "∃x [Wind(x) ∧ Blowing(x) ∧ ¬∃y Rain(y)]"
    assert "Without" not in result.symbols  # 'without' negates, it is no relation


def test_crowd_noise_no_music() -> None:
    assert str(parse_caption("crowd noise, no music").formula) == "∃x [Crowd(x) ∧ Noise(x) ∧ ¬∃y Music(y)]"


def test_water_flowing_not_dripping() -> None:
    # The scope of 'not' is the verb, on the water's variable.
    assert literals(parse_caption("water flowing, not dripping")) == {
        "Water(x)",
        "Flowing(x)",
        "¬Dripping(x)",
    }


def test_machinery_humming_with_electrical_interference() -> None:
    result = parse_caption("machinery humming with electrical interference")
    assert literals(result) == {
        "Machinery(x)",
        "Humming(x)",
        "With(x, y)",
        "Electrical(y)",
        "Interference(y)",
    }


def test_not_shouting() -> None:
    assert str(parse_caption("not shouting").formula) == "∃x ¬Shouting(x)"


@pytest.mark.parametrize(
    ("caption", "negated", "positive"),
    [
        ("the music is not loud", {"Loud"}, {"Music"}),  # a property: denied, the music stays
        ("a dog barks but does not growl", {"Growling"}, {"Dog", "Barking"}),
    ],
)
def test_negation_scope(caption: str, negated: set[str], positive: set[str]) -> None:
    result = parse_caption(caption)
    assert {r.symbol for r in result.predicates if r.negated} == negated
    assert positive <= {r.symbol for r in result.predicates if not r.negated}


@pytest.mark.parametrize(
    ("caption", "excluded", "asserted"),
    [
        ("a man without a hat is whistling", {"Hat"}, {"Man", "Whistling"}),
        ("a dog barks but no cat meows", {"Cat", "Meowing"}, {"Dog", "Barking"}),
        # a source that does not make its sound is not heard (docs/negation.md, "verbal")
        ("rain falling and a person is not talking", {"Person", "Talking"}, {"Rain", "Falling"}),
    ],
)
def test_exclusion_scope(caption: str, excluded: set[str], asserted: set[str]) -> None:
    result = parse_caption(caption)
    assert {r.symbol for r in result.predicates if r.excluded} == excluded
    assert {r.symbol for r in result.predicates if not r.excluded} == asserted
    assert not any(r.negated for r in result.predicates)  # the literals inside ¬∃ are positive


# --- variables, relations, coreference ----------------------------------------------------


def test_formula_is_closed_and_round_trips() -> None:
    result = parse_caption("A man opens a door and then walks away quietly")
    assert parse_formula(str(result.formula)) == result.formula
    assert {str(p) for p in predicates(result.formula)} >= {"Man/1", "Door/1", "Before/2"}


def test_verb_with_object_is_binary() -> None:
    assert {"Man(x)", "Door(y)"} <= literals(parse_caption("a man opens a door"))
    assert any(
        r.args == ("x", "y") and r.lemma == "open" for r in parse_caption("a man opens a door").predicates
    )


def test_repeated_definite_noun_reuses_the_variable() -> None:
    result = parse_caption("A car approaches and the car passes by.")
    assert {r.args for r in result.predicates} == {("x",)}
    assert {"Car", "Approaching", "Passing"} <= result.symbols


def test_another_noun_is_a_new_entity() -> None:
    result = parse_caption("A glass breaks and another glass falls.")
    assert sorted(r.args for r in result.predicates if r.symbol == "Glass") == [("x",), ("y",)]


def test_pronoun_reuses_the_salient_entity() -> None:
    # 'it' is the farm, not the hogs the phrase is said of.
    assert "In(y, x)" in literals(parse_caption("A farm has several oinking hogs in it."))


def test_collective_and_measure_nouns() -> None:
    assert {"Flock(x)", "Bird(x)"} <= literals(parse_caption("a flock of birds chirping"))
    result = parse_caption("a lot of noise")
    assert {r.symbol for r in result.predicates} == {"Noise"}


@pytest.mark.parametrize(
    ("caption", "relation"),
    [
        ("A dog barks while a car passes", "While(x, y)"),
        ("a bird chirps then a dog barks", "Before(x, y)"),
        ("A dog barks after a car passes", "Before(y, x)"),
        ("A dog barks followed by a car horn", "Before(x, y)"),
        ("A bird chirps until a bus overtakes it", "Before(x, y)"),
    ],
)
def test_temporal_order(caption: str, relation: str) -> None:
    assert relation in literals(parse_caption(caption))


def test_plain_and_adds_no_temporal_relation() -> None:
    assert not {"While", "Before"} & parse_caption("a dog barks and a cat meows").symbols


def test_background_is_a_property_and_time_has_its_own_variable() -> None:
    result = parse_caption("people talking in the background in the evening")
    assert {"Background(x)", "Evening(t)"} <= literals(result)
    assert "In" not in result.symbols


# --- provenance, grounding, OOV -----------------------------------------------------------------


def test_provenance_of_each_predicate() -> None:
    text = "quiet footsteps in an empty corridor"
    result = parse_caption(text)
    by_symbol = {r.symbol: r for r in result.predicates}
    quiet = by_symbol["Quiet"]
    assert (quiet.rule, quiet.tokens, quiet.source, quiet.tier, quiet.confidence) == (
        "amod",
        (0,),
        "quiet",
        "exact",
        1.0,
    )
    assert text[slice(*quiet.span)] == "quiet"
    assert quiet.category is not None and quiet.grounded
    assert by_symbol["In"].rule == "prep" and text[slice(*by_symbol["In"].span)] == "in"
    assert all(r.rule != "fallback" for r in result.predicates)


def test_out_of_vocabulary_predicates_are_kept_and_listed() -> None:
    result = parse_caption("someone chopping some food")
    someone = next(r for r in result.predicates if r.lemma == "someone")
    assert someone.symbol == "Someone" and not someone.grounded and someone.tier == "none"
    assert someone.confidence == 0.0 and someone.category is None
    assert "someone" in result.oov


def test_adverb_in_adjective_form() -> None:
    result = parse_caption("a dog barks loudly and rhythmically")
    assert {"Loud", "Rhythmic"} <= {r.lemma.capitalize() for r in result.predicates}


def test_to_dict_is_json_ready() -> None:
    import json

    data = parse_caption("a dog barks").to_dict()
    assert json.loads(json.dumps(data))["predicates"][0]["symbol"] == "Dog"


def test_literal_and_atom_of_a_record() -> None:
    record = next(r for r in parse_caption("not shouting").predicates if r.negated)
    assert record.literal == Not(Atom("Shouting", (Var("x"),)))
    excluded = parse_caption("no music").predicates[0]
    assert excluded.excluded and excluded.literal == Atom("Music", (Var("x"),))
    assert excluded.to_dict()["excluded"] is True


def test_records_of_the_parser_are_ordinary_frozen_records() -> None:
    # The parser makes its records with new_record (no frozen __init__): they must be
    # indistinguishable from records made by the constructor.
    import dataclasses
    import pickle

    from fortekit.fol.caption import PredicateRecord
    from fortekit.fol.caption.result import new_record

    for record in parse_caption("a dog barks without people talking").predicates:
        assert type(record) is PredicateRecord
        made = PredicateRecord(*(getattr(record, f.name) for f in dataclasses.fields(PredicateRecord)))
        assert record == made and hash(record) == hash(made) and repr(record) == repr(made)
        assert pickle.loads(pickle.dumps(record)) == made
        with pytest.raises(dataclasses.FrozenInstanceError):
            record.symbol = "Cat"  # type: ignore[misc]
    fields = ("Dog", "dog", ("x",), False, "nsubj", (1,), (2, 5), "dog", "exact", 1.0, None, "NOUN", True)
    assert new_record(*fields) == PredicateRecord(*fields)


# --- streaming --------------------------------------------------------------------------------------


def test_parse_captions_matches_parse_caption_in_order() -> None:
    captions = ["a dog barks", "birds chirping in the morning", "not shouting", "rain on a roof"] * 3
    streamed = list(parse_captions(captions, batch_size=2))
    assert [str(r.formula) for r in streamed] == [str(parse_caption(c).formula) for c in captions]
    assert [r.text for r in streamed] == captions


def test_parse_captions_is_lazy() -> None:
    from itertools import count, islice

    endless = (f"dog number {k} barks" for k in count())
    assert len(list(islice(parse_captions(endless, batch_size=4), 5))) == 5


def test_parse_captions_with_worker_processes() -> None:
    captions = ["a dog barks", "a cat meows", "wind blowing without rain"]
    assert [str(r) for r in parse_captions(captions, n_process=2, batch_size=1)] == [
        str(parse_caption(c)) for c in captions
    ]


def test_the_parser_object_is_reusable() -> None:
    assert parser().parse("a dog barks").formula == parse_caption("a dog barks").formula
    assert "CaptionParser" in repr(parser())
