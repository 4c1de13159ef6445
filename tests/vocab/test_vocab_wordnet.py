"""WordNet 3.0 through NLTK, found offline: Debian's wordnet-base, NLTK data, or a clear error.

These tests use the real WordNet installed on the machine (``apt-get install
wordnet-base``, or NLTK's download); they fail loudly rather than skip when it is
missing, because tier (ii) grounding and the builder need it.
"""

from __future__ import annotations

import os
from pathlib import Path

import nltk.data
import pytest

from fortekit.errors import WordNetMissingError
from fortekit.vocab import wordnet as wn_module
from fortekit.vocab.wordnet import REQUIRED_FILES, export_nltk_data, find_wordnet, load_wordnet


def test_wordnet_is_found_and_is_version_3_0() -> None:
    wordnet = load_wordnet()
    assert wordnet.version == "3.0"
    assert wordnet is load_wordnet()


def test_morphy_lexnames_antonyms_pertainyms() -> None:
    wordnet = load_wordnet()
    assert wordnet.morphy("barks", "VERB") == ("bark",)
    assert wordnet.morphy("geese", "n") == ("goose",)
    assert wordnet.morphy("", "NOUN") == () and wordnet.morphy("dog", "DET") == ()
    assert wordnet.has("chirp", "VERB") and not wordnet.has("chirping", "VERB")
    assert wordnet.knows("rustled") and not wordnet.knows("chirpped")
    # lexnames come from fortekit's copy when the dict directory has none (Debian)
    assert wordnet.lexnames("dog", "NOUN", 1) == ("noun.animal",)
    assert wordnet.lexnames("rain", "VERB", 1) == ("verb.weather",)
    assert "near" in wordnet.antonyms("far", "ADJ")
    assert wordnet.pertainym_bases("loudly") == ("loud",)


def test_debian_wordnet_base_without_lexnames_loads() -> None:
    debian = Path("/usr/share/wordnet")
    if not (debian / "index.noun").exists():
        pytest.skip("Debian's wordnet-base is not installed here (apt-get install wordnet-base)")
    assert not (debian / "lexnames").exists()
    wordnet = load_wordnet(debian)
    assert wordnet.location.source == "argument"
    assert wordnet.lexnames("rain", "NOUN", 1) == ("noun.phenomenon",)


def test_a_directory_that_is_not_wordnet_is_named(tmp_path: Path) -> None:
    (tmp_path / "index.noun").write_text("", encoding="utf-8")
    with pytest.raises(WordNetMissingError, match=r"\[E101\].*data\.noun"):
        find_wordnet(tmp_path)


def test_missing_wordnet_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # A machine without WordNet: no environment variables, an empty NLTK data path,
    # no system directories.
    for name in ("FORTEKIT_WORDNET", "WNSEARCHDIR", "WNHOME", "NLTK_DATA"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path)])
    monkeypatch.setattr(wn_module, "SYSTEM_DIRS", (str(tmp_path / "wordnet"),))
    with pytest.raises(WordNetMissingError) as info:
        load_wordnet()
    message = str(info.value)
    assert message.startswith("[E100]")
    assert "apt-get install wordnet-base" in message
    assert "python -m nltk.downloader wordnet" in message
    assert isinstance(info.value, LookupError)


def test_environment_variable_points_at_wordnet(monkeypatch: pytest.MonkeyPatch) -> None:
    root = find_wordnet(nltk_data=False).root
    monkeypatch.setenv("FORTEKIT_WORDNET", root)
    assert find_wordnet().source == "FORTEKIT_WORDNET"


def test_export_lays_out_an_nltk_data_directory(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    source = Path(find_wordnet(nltk_data=False).root)
    corpus = export_nltk_data(tmp_path / "nltk_data")
    assert corpus == tmp_path / "nltk_data" / "corpora" / "wordnet"
    assert all((corpus / name).is_file() for name in REQUIRED_FILES)
    assert (corpus / "lexnames").read_text(encoding="utf-8").splitlines()[5] == "05\tnoun.animal\t1"
    # copies, not links: NLTK 3.10 refuses multiply-linked files, the source's too
    assert os.stat(source / "data.noun").st_nlink == 1
    assert os.stat(corpus / "data.noun").st_nlink == 1
    # NLTK's own search (as after nltk.download('wordnet')) now finds it first
    monkeypatch.delenv("FORTEKIT_WORDNET", raising=False)
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path / "nltk_data")])
    location = find_wordnet()
    assert location.source == "nltk_data"
    assert Path(location.root) == corpus
    wordnet = load_wordnet()
    assert wordnet.morphy("chirped", "VERB") == ("chirp",)
