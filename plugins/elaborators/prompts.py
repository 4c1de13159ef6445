"""The paper's two LLM prompt templates and a forgiving parser for the numbered lists they ask for.

The templates are those of the paper's appendix "LLM Prompt Templates" (positive
elaboration q+ and contrastive negative q-), word for word; ``{N_POS}``, ``{N_NEG}`` and
``{QUERY}`` are filled in. LLMs do not always answer as asked: they add a preamble
("Sure! Here are ..."), skip or repeat numbers, use bullets or bold, put the whole list
on one line, give fewer items than asked, or carry on with a new "Query:".
:func:`parse_list` takes what is usable from all of these.

Example:
    >>> parse_list("Sure! Here they are:\\n1. **Birds shriek loudly.**\\n3) birds call far away\\n", limit=2)
    ['Birds shriek loudly.', 'birds call far away']
"""

from __future__ import annotations

import itertools
import re

__all__ = ["NEGATIVE_TEMPLATE", "POSITIVE_TEMPLATE", "negative_prompt", "parse_list", "positive_prompt"]

POSITIVE_TEMPLATE = (
    "You are an expert in audio scene description and sound event recognition. Given a short "
    "text query that describes an audio event or scene, generate {N_POS} enriched elaborations. "
    "Each elaboration should preserve the core sound event while adding precise acoustic and "
    "contextual detail that would help distinguish the target audio from similar but incorrect "
    "matches.\n"
    "Rules:\n"
    "- Do NOT change or substitute the core sound event (e.g. \"bird chirping\" must remain; do "
    "not replace with \"bird singing\").\n"
    "- Add at most 3 new descriptors per elaboration. Descriptors must belong to one of: "
    "acoustic quality (timbre, pitch, roughness), temporal pattern (rhythm, duration, onset), "
    "spatial environment (room size, distance, surface material), or intensity (loudness, "
    "energy level).\n"
    "- Do NOT introduce new sound sources not implied by the original query.\n"
    "- Each elaboration must be a single fluent grammatical sentence of at most 20 words.\n"
    "- Output as a numbered list, one elaboration per line, with no additional commentary.\n"
    "Query: {QUERY}\n"
    "Elaborations:"
)

NEGATIVE_TEMPLATE = (
    "You are an expert in audio scene description and sound event recognition. Given a short "
    "text query, generate {N_NEG} contrastive negatives. A contrastive negative describes an "
    "audio event that shares surface similarity with the query (same object, animal, or "
    "setting) but differs critically in acoustic character. These are the hardest false "
    "positives that a retrieval system would incorrectly return.\n"
    "Rules:\n"
    "- Keep the same primary sound source (e.g. same animal or object).\n"
    "- Change exactly one acoustic dimension to something clearly and importantly different "
    "(e.g. distress vs. calm, high vs. low pitch, rhythmic vs. continuous, far vs. close).\n"
    "- Each negative must describe a sound that a listener would definitively NOT want when "
    "searching for the original query.\n"
    "- Avoid negatives that are trivially different; they should represent genuine hard "
    "retrieval confounds.\n"
    "- Each negative must be a single fluent grammatical sentence of at most 20 words.\n"
    "- Output as a numbered list, one negative per line, with no additional commentary.\n"
    "Query: {QUERY}\n"
    "Contrastive negatives:"
)


def positive_prompt(query: str, n_pos: int = 2) -> str:
    """The paper's q+ prompt for `query`.

    Example:
        >>> positive_prompt("rain", 2).endswith("Query: rain\\nElaborations:")
        True
    """
    return POSITIVE_TEMPLATE.replace("{N_POS}", str(n_pos)).replace("{QUERY}", query.strip())


def negative_prompt(query: str, n_neg: int = 3) -> str:
    """The paper's q- prompt for `query`.

    Example:
        >>> "generate 3 contrastive negatives" in negative_prompt("rain", 3)
        True
    """
    return NEGATIVE_TEMPLATE.replace("{N_NEG}", str(n_neg)).replace("{QUERY}", query.strip())


# "1.", "1)", "(1)", "1:", "1]", "#1", "1 -" at the start of a line.
_NUMBERED = re.compile(
    r"^\s*(?:\(\s*\d{1,2}\s*\)|\d{1,2}\s*[.):\]]|#\s*\d{1,2}[.):]?|\d{1,2}\s+-)\s*(?P<text>.*)$"
)
_BULLET = re.compile(r"^\s*[-*•·–]\s+(?P<text>.*)$")
# Several items on one line: "1. a 2. b 3. c".
_INLINE = re.compile(r"(?:^|(?<=\s))\d{1,2}[.)]\s+")
# The model starting a new prompt, or echoing a section header, ends the list.
_STOP = re.compile(
    r"^\W*(query|rules?|elaborations?|contrastive negatives?|negatives?|positives?|output|input|note)\W*:",
    re.IGNORECASE,
)
_LABEL = re.compile(
    r"^(?:(?:positive|negative|contrastive negative|elaboration|option|example)\s*\d*\s*[:.)-]\s*)",
    re.IGNORECASE,
)
_PREAMBLE = re.compile(r"^(sure|here|certainly|okay|ok|of course|below|the following)\b", re.IGNORECASE)


def _clean(text: str) -> str:
    text = re.sub(r"\*\*|__|`", "", text).strip()
    text = _LABEL.sub("", text).strip()
    if len(text) >= 2 and text[0] in "\"'“‘" and text[-1] in "\"'”’":
        text = text[1:-1].strip()
    return re.sub(r"\s+", " ", text)


def _split_inline(line: str) -> list[str]:
    # Only consecutive numbers split a line, so "1. a bell rings at 5. am" stays whole.
    starts: list[re.Match[str]] = []
    for match in _INLINE.finditer(line):
        number = int(match.group().strip().rstrip(".)"))
        if not starts or number == int(starts[-1].group().strip().rstrip(".)")) + 1:
            starts.append(match)
    if len(starts) < 2:
        return [line]
    pieces = [line[a.start():b.start()] for a, b in itertools.pairwise(starts)]
    pieces.append(line[starts[-1].start():])
    head = line[:starts[0].start()].strip()
    return ([head] if head else []) + [piece.strip() for piece in pieces]


def parse_list(text: str, limit: int | None = None, exclude: tuple[str, ...] = ()) -> list[str]:
    """The items of a numbered (or bulleted, or plain) list in an LLM's answer.

    Numbered items win when there are any (other lines are commentary); else bullets;
    else every line that is not a preamble ending in ':'. Items are cleaned of markdown,
    labels and quotes; duplicates (ignoring case) and items equal to one in `exclude`
    are dropped; a line that starts a new prompt ("Query: ...") ends the list.

    Args:
        text: the model's answer.
        limit: keep at most this many items.
        exclude: texts not to return (for example the query itself).

    Returns:
        The items, in order; possibly fewer than asked, possibly none.

    Example:
        >>> parse_list("1. a dog barks far away 2. a dog barks in distress", exclude=("a dog barks",))
        ['a dog barks far away', 'a dog barks in distress']
    """
    lines: list[str] = []
    for raw in text.splitlines():
        lines.extend(_split_inline(raw))
    numbered: list[str] = []
    bullets: list[str] = []
    plain: list[str] = []
    for line in lines:
        if not line.strip():
            continue
        if _STOP.match(line) and (numbered or bullets or plain):
            break
        if (match := _NUMBERED.match(line)) is not None:
            numbered.append(match["text"])
        elif (match := _BULLET.match(line)) is not None:
            bullets.append(match["text"])
        elif not (_PREAMBLE.match(line.strip()) or line.rstrip().endswith(":") or _STOP.match(line)):
            plain.append(line)
    chosen = numbered or bullets or plain
    seen = {item.strip().casefold().rstrip(".") for item in exclude}
    items: list[str] = []
    for candidate in chosen:
        item = _clean(candidate)
        key = item.casefold().rstrip(".")
        if not item or key in seen or not re.search(r"\w", item):
            continue
        seen.add(key)
        items.append(item)
        if limit is not None and len(items) >= limit:
            break
    return items
