"""Elaborators: the paper's prompts, the list parser on recorded LLM answers, `file`, and
`hf-llm` with a tiny randomly initialised GPT-2 saved to disk and loaded by the plug-in."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fortekit.errors import ElaborationError, ModelNotFoundError, PluginOptionError
from fortekit.plugins import Elaboration, Elaborator, get_elaborator
from fortekit.plugins.elaborators.prompts import (
    NEGATIVE_TEMPLATE,
    POSITIVE_TEMPLATE,
    negative_prompt,
    parse_list,
    positive_prompt,
)

PAPER = Path(__file__).resolve().parents[3] / "shared" / "paper" / "FORTE.tex"

# Answers in the shapes instruction-tuned LLMs give to these prompts (the first is the
# paper's own worked example, Table "prompt_example").
RECORDED = {
    "paper-negatives": (
        "1. birds shrieking loudly with a harsh, high-pitched distress call\n"
        "2. birds emitting rapid alarm calls in short bursts\n"
        "3. birds producing aggressive territorial squawking near a nest\n",
        ["birds shrieking loudly with a harsh, high-pitched distress call",
         "birds emitting rapid alarm calls in short bursts",
         "birds producing aggressive territorial squawking near a nest"],
    ),
    "preamble-and-commentary": (
        " Sure! Here are 2 enriched elaborations:\n\n"
        "1. Small birds softly chirping outdoors at dawn in a peaceful forest.\n"
        "2. A flock of birds chirping continuously in a quiet morning environment.\n\n"
        "These elaborations add temporal and spatial detail while keeping the core event.",
        ["Small birds softly chirping outdoors at dawn in a peaceful forest.",
         "A flock of birds chirping continuously in a quiet morning environment."],
    ),
    "markdown-and-parentheses": (
        "**Contrastive negatives:**\n1) **A dog whimpering softly in distress.**\n"
        "2) \"A dog barking far away, muffled by walls.\"\n"
        "(3) Negative 3: a dog growling low and continuously",
        ["A dog whimpering softly in distress.", "A dog barking far away, muffled by walls.",
         "a dog growling low and continuously"],
    ),
    "missing-numbers-and-repeats": (
        "1. Heavy rain drumming on a tin roof.\n3. Heavy rain drumming on a tin roof.\n"
        "4. Light rain falling on leaves far away.",
        ["Heavy rain drumming on a tin roof.", "Light rain falling on leaves far away."],
    ),
    "one-line": (
        "1. a car engine idling roughly 2. a car engine revving high 3. a car engine purring far away",
        ["a car engine idling roughly", "a car engine revving high", "a car engine purring far away"],
    ),
    "runs-on-into-a-new-prompt": (
        "1. Church bells ringing slowly in a large reverberant hall.\n\n"
        "Query: a cat meowing\nElaborations:\n1. a cat meowing loudly",
        ["Church bells ringing slowly in a large reverberant hall."],
    ),
    "bullets": (
        "Here you go:\n- a baby crying loudly in a small room\n* a baby crying softly far away\n",
        ["a baby crying loudly in a small room", "a baby crying softly far away"],
    ),
    "plain-lines": (
        "Water dripping slowly into a metal sink.\nWater dripping rapidly onto stone.",
        ["Water dripping slowly into a metal sink.", "Water dripping rapidly onto stone."],
    ),
}


@pytest.mark.parametrize("case", sorted(RECORDED))
def test_parse_list_on_recorded_answers(case: str) -> None:
    text, expected = RECORDED[case]
    assert parse_list(text) == expected


def test_parse_list_limits_excludes_and_handles_nothing() -> None:
    text, _ = RECORDED["paper-negatives"]
    assert len(parse_list(text, limit=2)) == 2
    assert parse_list("1. rain\n2. heavy rain", exclude=("Rain",)) == ["heavy rain"]
    assert parse_list("") == []
    assert parse_list("Here are the elaborations:\n\n") == []
    assert parse_list("1. a bell rings at 5. am") == ["a bell rings at 5. am"]


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _latex_prompt(title: str) -> str:
    tex = PAPER.read_text(encoding="utf-8")
    body = tex.split(f"title={{\\small Prompt Template: {title}")[1].split("\\end{tcolorbox}")[0]
    body = body.split("\\ttfamily", 1)[1]
    body = re.sub(r"\\textbf\{([^}]*)\}", r"\1", body)
    body = body.replace("\\\\[4pt]", " ").replace("\\\\", " ").replace("\\{", "{").replace("\\}", "}")
    body = body.replace("\\_", "_").replace("e.g.\\ ", "e.g. ").replace("vs.\\ ", "vs. ")
    return _squash(body.replace("``", '"').replace("''", '"'))


@pytest.mark.parametrize(("title", "template"), [
    ("Positive Elaboration ($q^{+}$)", POSITIVE_TEMPLATE),
    ("Contrastive Negative ($q^{-}$)", NEGATIVE_TEMPLATE),
])
def test_templates_are_the_papers_word_for_word(title: str, template: str) -> None:
    if not PAPER.exists():
        pytest.skip(f"the paper's source is not available: {PAPER}")
    assert _squash(template) == _latex_prompt(title)


def test_prompts_fill_counts_and_query() -> None:
    assert "generate 2 enriched elaborations" in positive_prompt("dog barking", 2)
    assert negative_prompt(" dog barking ", 3).endswith("Query: dog barking\nContrastive negatives:")


# -- file -------------------------------------------------------------------------


def write_jsonl(path: Path, *records: object) -> Path:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n")
    return path


def test_file_elaborator_reads_and_matches_queries(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "e.jsonl",
        "# elaborations made with Mistral-7B-Instruct",
        {"query": "Birds chirping in the morning", "positives": ["birds softly chirping at dawn", "a flock"],
         "negatives": ["birds shrieking", "birds alarm calls", "birds squawking"]},
        "",
        {"query": "rain", "positives": ["heavy rain"], "negatives": ["light rain"]},
    )
    elaborator = get_elaborator("file", path=path, n_neg=2)
    assert isinstance(elaborator, Elaborator) and len(elaborator) == 2
    result = elaborator.elaborate("  birds CHIRPING in the   morning")
    assert result == Elaboration(
        "  birds CHIRPING in the   morning", ("birds softly chirping at dawn", "a flock"),
        ("birds shrieking", "birds alarm calls"),
    )
    positives, negatives = elaborator.elaborate("rain")
    assert (positives, negatives) == (("heavy rain",), ("light rain",))
    with pytest.raises(ElaborationError, match=r"E231.*'snow'.*2 queries"):
        elaborator.elaborate("snow")
    with pytest.raises(ElaborationError, match="E234"):
        elaborator.elaborate("   ")


@pytest.mark.parametrize(("line", "problem"), [
    ("{not json", "not JSON"),
    ("[1, 2]", "JSON list"),
    (json.dumps({"positives": ["a"], "negatives": ["b"]}), "query"),
    (json.dumps({"query": "q", "positives": [], "negatives": ["b"]}), "positives"),
    (json.dumps({"query": "q", "positives": ["a"], "negatives": "b"}), "negatives"),
    (json.dumps({"query": "q", "positives": ["a", 3], "negatives": ["b"]}), "positives"),
])
def test_file_elaborator_names_the_bad_line(tmp_path: Path, line: str, problem: str) -> None:
    good = {"query": "ok", "positives": ["a"], "negatives": ["b"]}
    path = write_jsonl(tmp_path / "e.jsonl", good, line)
    with pytest.raises(ElaborationError, match=rf"E230.*line 2: .*{problem}"):
        get_elaborator("file", path=path)


def test_file_elaborator_rejects_repeats_and_missing_files(tmp_path: Path) -> None:
    record = {"query": "Rain", "positives": ["a"], "negatives": ["b"]}
    path = write_jsonl(tmp_path / "e.jsonl", record, {**record, "query": "rain "})
    with pytest.raises(ElaborationError, match=r"E232.*line 2.*line 1"):
        get_elaborator("file", path=path)
    with pytest.raises(ModelNotFoundError, match="E206"):
        get_elaborator("file", path=tmp_path / "none.jsonl")
    with pytest.raises(PluginOptionError, match="n_pos"):
        get_elaborator("file", path=path, n_pos=0)


# -- hf-llm -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def llm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from plugin_fixtures import save_tiny_causal_lm

    return save_tiny_causal_lm(tmp_path_factory.mktemp("llm"))


def test_hf_llm_loads_generates_and_parses(llm_dir: Path) -> None:
    # A random model writes word salad; min_new_tokens keeps it from stopping at once.
    options = {"min_new_tokens": 8}
    llm = get_elaborator("hf-llm", model=str(llm_dir), device="cpu", max_new_tokens=12,
                         generation_options=options)
    assert isinstance(llm, Elaborator) and not llm.use_chat_template
    answers = llm.generate([positive_prompt("a dog barks", 2), negative_prompt("a dog barks", 3)])
    assert len(answers) == 2 and all(answer.strip() for answer in answers)
    result = llm.elaborate("a dog barks")
    assert 1 <= len(result.positives) <= 2 and 1 <= len(result.negatives) <= 3
    again = get_elaborator("hf-llm", model=llm_dir, device="cpu", max_new_tokens=12,
                           generation_options=options).elaborate("a dog barks")
    assert again == result  # greedy decoding: reproducible
    many = llm.elaborate_many(["a dog barks", "rain falls on the roof"])
    assert [e.query for e in many] == ["a dog barks", "rain falls on the roof"]
    assert many[0] == result


def test_hf_llm_without_usable_items_explains(llm_dir: Path) -> None:
    llm = get_elaborator("hf-llm", model=llm_dir, device="cpu", max_new_tokens=1)
    # what a model that ignores the instructions answers (recorded shape)
    llm.generate = lambda prompts: ["Here are the elaborations:" for _ in prompts]  # type: ignore[method-assign]
    with pytest.raises(ElaborationError, match=r"E233.*positive elaborations.*'a dog barks'"):
        llm.elaborate("a dog barks")
    with pytest.raises(ElaborationError, match="E234"):
        llm.elaborate("")


def test_hf_llm_missing_model_is_explained(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    with pytest.raises(ModelNotFoundError, match=r"E207.*allow_download"):
        get_elaborator("hf-llm", model="fortekit-tests/no-such-llm", device="cpu")
