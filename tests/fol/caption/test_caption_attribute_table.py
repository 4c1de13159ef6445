"""The attribute ruler compiled into a table gives what spaCy's stock ruler gives.

The parser's pipeline swaps the stock ``attribute_ruler`` for
``fortekit.fol.caption.attribute_table.TableAttributeRuler`` (docs/parser.md, "Speed").
These tests hold it to the stock ruler: the same matches in the same order on real
captions, the same Doc, the stock Matcher kept where a pattern cannot be compiled, and
the pipeline still saved by spaCy as a stock one that loads without fortekit.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest
import spacy
from caption_fixtures import AUDIOCAPS_VAL, CLOTHO_DEV, require
from spacy.pipeline import AttributeRuler

from fortekit.fol.caption.attribute_table import TableAttributeRuler, use_attribute_table
from fortekit.fol.caption.pipeline import DEFAULT_PIPELINE, load_pipeline
from fortekit.fol.caption.report import read_audiocaps, read_clotho


@cache
def stock_pipeline() -> Any:
    return spacy.load(DEFAULT_PIPELINE, exclude=["ner"])


def real_captions() -> list[str]:
    captions = read_clotho(require(CLOTHO_DEV, "Clotho development captions"))
    return captions + read_audiocaps(require(AUDIOCAPS_VAL, "AudioCaps val captions"))


def unruled_docs(texts: list[str]) -> list[Any]:
    """Docs tagged and parsed, before any attribute ruler ran (what the ruler receives)."""
    nlp = stock_pipeline()
    with nlp.select_pipes(disable=["attribute_ruler", "lemmatizer"]):
        return list(nlp.pipe(texts, batch_size=256))


def table_twin(stock: AttributeRuler) -> TableAttributeRuler:
    twin = TableAttributeRuler(stock.vocab, "attribute_ruler")
    twin.add_patterns(stock.patterns)
    return twin


def test_the_parsers_pipeline_uses_the_table() -> None:
    ruler = load_pipeline().get_pipe("attribute_ruler")
    assert isinstance(ruler, TableAttributeRuler)
    assert ruler.fallback_reason is None
    assert load_pipeline().pipe_names == stock_pipeline().pipe_names


def test_same_matches_as_the_stock_ruler_on_every_clotho_and_audiocaps_val_caption() -> None:
    captions = real_captions()
    stock = stock_pipeline().get_pipe("attribute_ruler")
    table = table_twin(stock)
    docs = unruled_docs(captions)
    differing = [doc.text for doc in docs if table.match(doc) != stock.match(doc)]
    assert len(docs) > 16_000
    assert differing == []


def test_same_doc_as_the_stock_pipeline() -> None:
    captions = [*real_captions()[::7], "Ain't gonna stop, y'all: there's a dog\tbarking  ", "Let's go!", ""]
    stock, own = stock_pipeline(), load_pipeline()
    for expected, got in zip(stock.pipe(captions), own.pipe(captions), strict=True):
        assert [(t.pos_, str(t.morph), t.lemma_, t.tag_, t.dep_) for t in got] == [
            (t.pos_, str(t.morph), t.lemma_, t.tag_, t.dep_) for t in expected
        ], expected.text


# Patterns of every shape the table compiles, checked against the stock Matcher.
SHAPES: list[dict[str, Any]] = [
    {"patterns": [[{"TAG": "NN"}]], "attrs": {"LEMMA": "noun"}},
    {
        "patterns": [[{"LOWER": {"IN": ["dog", "dogs"]}, "TAG": {"NOT_IN": ["VB"]}}]],
        "attrs": {"POS": "PROPN"},
    },
    {"patterns": [[{"TEXT": {"REGEX": "^[A-Z]"}}]], "attrs": {"MORPH": "Case=Cap"}},
    {"patterns": [[{"IS_PUNCT": True}]], "attrs": {"LEMMA": "punct"}},
    {"patterns": [[{"DEP": "det"}, {"POS": "NOUN"}]], "attrs": {"LEMMA": "head-noun"}, "index": -1},
    {"patterns": [[{"LOWER": "a"}, {}], [{"LOWER": "a"}, {"LENGTH": 3}]], "attrs": {"LEMMA": "an"}},
    {"patterns": [[{"TAG": "NN"}], [{"TAG": "NN"}]], "attrs": {"LEMMA": "twice"}},
    {"patterns": [[{"ORTH": "dog"}], [{"LOWER": "barks"}, {"IS_SPACE": False}]], "attrs": {"LEMMA": "last"}},
]


@pytest.mark.parametrize("shape", range(len(SHAPES)))
def test_each_pattern_shape_matches_as_the_stock_matcher(shape: int) -> None:
    captions = read_clotho(require(CLOTHO_DEV, "Clotho development captions"))[::40]
    pattern = SHAPES[shape]
    vocab = stock_pipeline().vocab
    stock, table = AttributeRuler(vocab), TableAttributeRuler(vocab)
    stock.add_patterns([pattern])
    table.add_patterns([pattern])
    docs = unruled_docs(captions)
    assert [table.match(doc) for doc in docs] == [stock.match(doc) for doc in docs]
    # LENGTH (a comparison the table does not compile) falls back to the stock Matcher.
    assert (table.fallback_reason is not None) == ("LENGTH" in str(pattern))


def test_all_shapes_together_leave_the_same_doc() -> None:
    captions = read_clotho(require(CLOTHO_DEV, "Clotho development captions"))[::40]
    shapes = [shape for shape in SHAPES if "LENGTH" not in str(shape)]
    vocab = stock_pipeline().vocab
    stock, table = AttributeRuler(vocab), TableAttributeRuler(vocab)
    stock.add_patterns(shapes)
    table.add_patterns(shapes)
    assert table.table() is not None
    for expected, got in zip(unruled_docs(captions), unruled_docs(captions), strict=True):
        stock(expected)
        table(got)
        assert [(t.pos_, str(t.morph), t.lemma_) for t in got] == [
            (t.pos_, str(t.morph), t.lemma_) for t in expected
        ]


def test_a_pattern_with_an_operator_keeps_the_stock_ruler() -> None:
    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("attribute_ruler")
    ruler.add([[{"LOWER": "very", "OP": "+"}]], {"LEMMA": "very"})
    assert use_attribute_table(nlp) is False
    assert type(nlp.get_pipe("attribute_ruler")) is AttributeRuler
    assert [t.lemma_ for t in nlp("very very good")] == ["very", "very", ""]


def test_no_ruler_or_another_ruler_is_left_alone() -> None:
    assert use_attribute_table(spacy.blank("en")) is False
    nlp = spacy.blank("en")
    nlp.add_pipe("attribute_ruler").add([[{"LOWER": "dog"}]], {"LEMMA": "hound"})
    assert use_attribute_table(nlp) is True
    assert use_attribute_table(nlp) is False  # already a table
    assert isinstance(nlp.get_pipe("attribute_ruler"), TableAttributeRuler)


def test_the_pipe_keeps_its_place_factory_and_config() -> None:
    stock, own = stock_pipeline(), load_pipeline()
    assert own.pipe_names == stock.pipe_names
    assert own.get_pipe_meta("attribute_ruler").factory == "attribute_ruler"
    assert own.config["components"]["attribute_ruler"] == stock.config["components"]["attribute_ruler"]


def test_an_uncompilable_pattern_added_later_falls_back_and_clearing_recovers() -> None:
    nlp = spacy.blank("en")
    nlp.add_pipe("attribute_ruler").add([[{"LOWER": "dog"}]], {"LEMMA": "hound"})
    assert use_attribute_table(nlp)
    ruler = nlp.get_pipe("attribute_ruler")
    ruler.add([[{"LOWER": "very", "OP": "+"}]], {"LEMMA": "very"})
    assert [t.lemma_ for t in nlp("very very dog")] == ["very", "very", "hound"]
    assert ruler.table() is None and "OP" in str(ruler.fallback_reason)
    ruler.clear()
    ruler.add([[{"LOWER": "dog"}]], {"LEMMA": "hound"})
    assert ruler.table() is not None and ruler.fallback_reason is None


def test_adding_a_pattern_later_compiles_the_table_again() -> None:
    nlp = spacy.blank("en")
    nlp.add_pipe("attribute_ruler").add([[{"LOWER": "dog"}]], {"LEMMA": "hound"})
    assert use_attribute_table(nlp)
    ruler = nlp.get_pipe("attribute_ruler")
    assert [t.lemma_ for t in nlp("a dog")] == ["", "hound"]
    ruler.add([[{"LOWER": "a"}]], {"LEMMA": "one"})
    assert [t.lemma_ for t in nlp("a dog")] == ["one", "hound"]
    ruler.clear()
    assert [t.lemma_ for t in nlp("a dog")] == ["", ""]


def test_a_saved_pipeline_is_a_stock_one_and_loads_the_table_again(tmp_path) -> None:  # type: ignore[no-untyped-def]
    load_pipeline().to_disk(tmp_path / "pipeline")
    loaded = spacy.load(tmp_path / "pipeline")
    ruler = loaded.get_pipe("attribute_ruler")
    assert type(ruler) is AttributeRuler
    assert ruler.patterns == stock_pipeline().get_pipe("attribute_ruler").patterns
    text = "Birds are chirping while a man's speaking"
    assert [t.pos_ for t in loaded(text)] == [t.pos_ for t in stock_pipeline()(text)]
    own = load_pipeline(str(tmp_path / "pipeline"))  # the parser's loader swaps it in again
    assert isinstance(own.get_pipe("attribute_ruler"), TableAttributeRuler)
    assert [t.pos_ for t in own(text)] == [t.pos_ for t in stock_pipeline()(text)]


def test_a_saved_pipeline_loads_in_a_fresh_process_without_fortekit(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import subprocess
    import sys

    load_pipeline().to_disk(tmp_path / "pipeline")
    # fortekit cannot be imported in the child: the saved pipeline must not need it.
    code = (
        "import sys; sys.modules['fortekit'] = None; import spacy; "
        "nlp = spacy.load(sys.argv[1]); "
        "print(type(nlp.get_pipe('attribute_ruler')).__name__, [t.pos_ for t in nlp('A dog barks')])"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "pipeline")], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "AttributeRuler ['DET', 'NOUN', 'VERB']"


def test_spacy_alone_does_not_import_fortekit() -> None:
    import subprocess
    import sys

    code = (
        "import sys, spacy; spacy.blank('en'); "
        "print(sorted(m for m in sys.modules if m.startswith('fortekit')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
