"""Records, symbols and the vocabulary file format (no data, no models needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fortekit.errors import UnknownPredicateError, VocabularyError
from fortekit.vocab import (
    Category,
    Origin,
    VocabEntry,
    Vocabulary,
    camel_symbol,
    pos_group,
    read_tsv,
    write_tsv,
)


def entry(symbol: str, category: Category = Category.SOUND_EVENT, **kwargs: object) -> VocabEntry:
    lemma = str(kwargs.pop("lemma", symbol.lower()))
    return VocabEntry(symbol, category, str(kwargs.pop("pos", "NOUN")), lemma, lemma, **kwargs)  # type: ignore[arg-type]


def test_six_categories_in_the_papers_order() -> None:
    assert [c.value for c in Category] == [
        "sound_event",
        "acoustic_property",
        "spatial",
        "temporal",
        "intensity",
        "negation_target",
    ]
    assert Category.NEGATION_TARGET.is_event and Category.SOUND_EVENT.is_event
    assert not Category.INTENSITY.is_event
    assert Category.parse("Intensity") is Category.INTENSITY


def test_unknown_category_lists_the_valid_ones() -> None:
    with pytest.raises(VocabularyError, match=r"\[E111\].*sound_event, acoustic_property"):
        Category.parse("loudness")


@pytest.mark.parametrize(
    ("surface", "symbol"),
    [
        ("chirping", "Chirping"),
        ("high-pitched", "HighPitched"),
        ("in front of", "InFrontOf"),
        ("distress call", "DistressCall"),
        ("cock-a-doodle-doo", "CockADoodleDoo"),
        ("TV", "Tv"),
    ],
)
def test_symbols_are_camel_case(surface: str, symbol: str) -> None:
    assert camel_symbol(surface) == symbol


def test_a_symbol_needs_a_letter() -> None:
    with pytest.raises(VocabularyError, match="E103"):
        camel_symbol("--")


def test_pos_groups() -> None:
    assert [pos_group(p) for p in ("PROPN", "aux", "SCONJ", "PUNCT", None)] == [
        "NOUN",
        "VERB",
        "ADP",
        None,
        None,
    ]


def test_entry_keys_and_frequency() -> None:
    e = VocabEntry(
        "Chirping", Category.SOUND_EVENT, "VERB", "chirp", "chirping", 3, 4, aliases=("Chirp", "tweet")
    )
    assert e.freq == 7
    assert e.keys == ("chirp", "chirping", "tweet")
    with pytest.raises(AttributeError):
        e.symbol = "Other"  # type: ignore[misc]


def test_vocabulary_rejects_repeated_symbols_and_dangling_contrasts() -> None:
    with pytest.raises(VocabularyError, match="appears twice"):
        Vocabulary([entry("Dog"), entry("Dog")])
    with pytest.raises(VocabularyError, match="NoSuch"):
        Vocabulary([entry("Loud", Category.INTENSITY, contrasts=("NoSuch",))])


def test_lookup_prefers_the_more_frequent_entry_and_matches_solid_spellings() -> None:
    vocab = Vocabulary(
        [
            entry("Bark", lemma="bark", freq_clotho=1),
            entry("Barking", pos="VERB", lemma="bark", freq_clotho=9),
            entry("LawnMower", lemma="lawn mower"),
        ]
    )
    assert [e.symbol for e in vocab.lookup("BARK")] == ["Barking", "Bark"]
    assert [e.symbol for e in vocab.lookup("lawnmower")] == ["LawnMower"]
    assert vocab.lookup("cat") == ()


def test_unknown_symbol_suggests_close_ones() -> None:
    vocab = Vocabulary([entry("Chirping", pos="VERB"), entry("Dog")])
    with pytest.raises(UnknownPredicateError, match=r"\[E104\].*Chirping") as info:
        vocab["Chirpng"]
    assert isinstance(info.value, KeyError)
    assert vocab.get("Chirpng") is None


def test_tsv_round_trip(tmp_path: Path) -> None:
    original = Vocabulary(
        [
            entry(
                "Loud",
                Category.INTENSITY,
                pos="ADJ",
                freq_audiocaps=5,
                aliases=("loudly",),
                contrasts=("Quiet",),
            ),
            entry("Quiet", Category.INTENSITY, pos="ADJ", contrasts=("Loud",), origin=Origin.CURATED),
            entry("Bark", audioset_ids=("/m/05tny_",), origin=Origin.AUDIOSET),
        ]
    )
    path = write_tsv(original, tmp_path / "sub" / "v.tsv")
    again = read_tsv(path)
    assert again.entries == original.entries
    assert path.read_text(encoding="utf-8") == original.to_tsv()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("symbol\tcategory\n", r"line 1: the header"),
        (None, r"line 2: expected 11"),
        ("ROW:Dog\tloudness\tNOUN\tdog\tdog\t0\t0\tcorpus\t\t\t", r"line 2: \[E111\]"),
        ("ROW:Dog\tsound_event\tDET\tdog\tdog\t0\t0\tcorpus\t\t\t", r"line 2: unknown POS 'DET'"),
        ("ROW:Dog\tsound_event\tNOUN\tdog\tdog\tmany\t0\tcorpus\t\t\t", r"line 2: invalid literal"),
    ],
)
def test_malformed_files_name_the_line(tmp_path: Path, body: str | None, message: str) -> None:
    from fortekit.vocab.vocabulary import COLUMNS

    header = "\t".join(COLUMNS) + "\n"
    if body is None:
        text = header + "Dog\tsound_event\n"
    elif body.startswith("ROW:"):
        text = header + body[4:] + "\n"
    else:
        text = body
    bad = tmp_path / "bad.tsv"
    bad.write_text(text, encoding="utf-8")
    with pytest.raises(VocabularyError, match=message):
        read_tsv(bad)
