"""WordNet opened lazily: morphy from the dict files answers as NLTK's reader does (docs/cold_start.md).

``WordNet.morphy``, ``lexnames`` and ``sense_count`` read a dict directory's files
themselves, so a search whose parse asks only these neither imports NLTK nor builds its
reader; these tests hold them to NLTK's reader on the real WordNet of the machine, and
check that the reader is still opened, once, for the other questions.
"""

from __future__ import annotations

import subprocess
import sys

from nltk.corpus.reader.wordnet import WordNetCorpusReader

from fortekit.vocab import wordnet as wn_module
from fortekit.vocab.wordnet import WordNet, WordNetLocation, find_wordnet, load_wordnet


def test_the_morphy_rules_are_nltks() -> None:
    nltk_rules = {pos: tuple(rules) for pos, rules in WordNetCorpusReader.MORPHOLOGICAL_SUBSTITUTIONS.items()}
    assert {pos: nltk_rules[pos] for pos in "nvar"} == wn_module._MORPHY_SUBSTITUTIONS


def test_morphy_from_the_files_matches_nltks_reader() -> None:
    location = find_wordnet(nltk_data=False)
    wordnet = WordNet(None, location, opener=lambda: wn_module._open_reader(location.root, location.source))
    reader = wordnet.reader
    words = sorted(reader._lemma_pos_offset_map)[::40]
    for exceptions in reader._exception_map.values():
        words += sorted(exceptions)[::5]
    words += [word + suffix for word in words[::3] for suffix in ("s", "es", "ed", "ing", "er", "est", "ies")]
    words += ["geese", "barking", "mice", "better", "xqzv", "dog", "running", "wolves", "boxes"]
    differ = [(word, pos) for word in words for pos in "nvar"
              if wordnet.morphy(word, pos) != tuple(reader._morphy(word, pos))]
    assert not differ, differ[:10]
    assert wordnet.morphy("Barking", "VERB") == ("bark",)
    assert wordnet.morphy("hot dogs", "NOUN") == ("hot_dog",)


def test_lexnames_and_sense_counts_from_the_files_match_nltks_reader() -> None:
    location = find_wordnet(nltk_data=False)
    wordnet = WordNet(None, location, opener=lambda: wn_module._open_reader(location.root, location.source))
    reader = wordnet.reader
    words = [*sorted(reader._lemma_pos_offset_map)[::97], "riding", "singing", "building", "dogs", "better"]

    def nltk(word: str, pos: str) -> tuple[tuple[str, ...], int]:
        synsets = reader.synsets(word, pos)
        return tuple(str(synset.lexname()) for synset in synsets[:50]), len(synsets)

    differ = [(word, pos) for word in words for pos in "nvar"
              if (wordnet.lexnames(word, pos, 50), wordnet.sense_count(word, pos)) != nltk(word, pos)]
    assert not differ, differ[:10]
    index = reader._lemma_pos_offset_map
    verbs = [word for word in sorted(index)[::11] if "v" in index[word]]
    for verb in [*verbs, "barking", "rode", "xqzv"]:
        first = reader.synsets(verb, "v")[:1]
        assert wordnet.first_sense_frames(verb) == (tuple(first[0].frame_ids()) if first else ()), verb


def test_the_reader_is_opened_once_and_only_when_needed() -> None:
    location = find_wordnet(nltk_data=False)
    opened: list[int] = []

    def opener() -> object:
        opened.append(1)
        return wn_module._open_reader(location.root, location.source)

    wordnet = WordNet(None, WordNetLocation(location.root, location.source), opener=opener)
    assert wordnet.morphy("barks", "VERB") == ("bark",) and wordnet.has("chirp", "VERB")
    assert wordnet.lexnames("dog", "NOUN", 1) == ("noun.animal",) and wordnet.sense_count("riding", "v") == 15
    assert wordnet.first_sense_frames("bark") == (2, 26) and wordnet.pertainym_bases("loudly") == ("loud",)
    assert not opened
    assert wordnet.antonyms("loud", "ADJ") == frozenset({"soft"})
    assert wordnet.version == "3.0" and "3.0" in repr(wordnet)
    assert len(opened) == 1
    assert load_wordnet() is load_wordnet()


def test_a_query_parse_needs_no_nltk() -> None:
    code = (
        "import sys\n"
        "from fortekit.vocab.wordnet import _nltk_data_dirs_absent\n"
        "absent = _nltk_data_dirs_absent()\n"
        "from fortekit.fol.caption import parse_caption\n"
        "formula = parse_caption('a dog barking without people talking').formula\n"
        "print(absent, 'nltk' in sys.modules, formula)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    absent, imported, formula = done.stdout.strip().split(" ", 2)
    assert formula == "∃x [Dog(x) ∧ Barking(x) ∧ ¬∃y [Person(y) ∧ Talking(y)]]"
    if absent == "True":  # no NLTK data directory here: NLTK is not even imported
        assert imported == "False"


def test_pertainyms_from_the_files_match_nltks_reader_for_every_adverb() -> None:
    """An adverb's adjective ("loudly" -> "loud") no longer opens the reader (about 3 s cold)."""
    location = find_wordnet(nltk_data=False)
    wordnet = WordNet(None, location, opener=lambda: wn_module._open_reader(location.root, location.source))
    reader = wordnet.reader
    adverbs = sorted(word for word, parts in reader._lemma_pos_offset_map.items() if "r" in parts)

    def nltk_bases(name: str) -> tuple[str, ...]:
        bases: dict[str, None] = {}
        for synset in reader.synsets(name, "r"):
            for item in synset.lemmas():
                if item.name().lower() == name:
                    for base in item.pertainyms():
                        bases.setdefault(str(base.name()).replace("_", " ").lower(), None)
        return tuple(bases)

    differ = [word for word in [*adverbs, "louder", "xqzv"]
              if wordnet._pertainyms_from_files(word, wordnet._synset_offsets(word, "r") or [])
              != nltk_bases(word)]
    assert len(adverbs) > 3000 and not differ, differ[:10]
