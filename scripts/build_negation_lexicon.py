"""Derive ``grammars/negation_lexicon.toml``: negation cue classes from lexical semantics.

docs/negation.md ("Cue classes from lexical semantics") is the design; this script is its
derivation. Each class is a set of WordNet 3.0 synsets chosen from their glosses, walked
down its hyponym (troponym) closure and kept only where a word's most frequent sense lies
inside it; prefixed adjectives and participles come from WordNet's antonymy (or, where
WordNet lacks the word, from the prefix and the participle of a verb of the class); a few
cues come from published cue lexicons (NegEx, ConanDoyle-neg, the SFU Review corpus). Each
entry of the file names its class, its lemma and where it came from.

The parser never runs this script: it reads the file it writes (tomllib, once).
``tests/fol/caption/test_negation_lexicon.py`` checks that the shipped file is what this script derives,
so the file stays regenerable::

    .venv/bin/python scripts/build_negation_lexicon.py            # write the file
    .venv/bin/python scripts/build_negation_lexicon.py --check    # exit 1 if it differs

Example:
    >>> from fortekit.vocab.wordnet import load_wordnet
    >>> entries = derive(load_wordnet().reader)
    >>> sorted({e.cls for e in entries})[:3]
    ['absence_adjective', 'containment_verb', 'desire_verb']
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from negation_lexicon_spec import CLASSES, PUBLISHED, SOURCES, ClassSpec, Entry

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "grammars" / "negation_lexicon.toml"
RULES = ROOT / "grammars" / "negation.toml"

#: Glosses that name a sense other than hearing: not hearing is absence, not seeing is not.
_OTHER_SENSES = re.compile(
    r"\b(sight|see|seen|eyes?|visible|view|look|glimpse|odou?r|olfactory|smell|sniff|nose|scent|taste|"
    r"tactile|touch|skin|pain|ache|itch|sting|prick)\w*",
)
#: A gloss that names the thing removed ("remove the bones from", "strip the skin off",
#: "free of lice"): the verb's object is the source, which stays (Levin's "debone" verbs).
_NAMES_REMOVED = re.compile(
    r"^(remove|strip|take|free|clear|rid|cut|tear|wipe|scrape|pull|draw)\b(?!\s+(from|of|off|out|away|something|"
    r"someone|it|or|by|with|as|in|\())\s+(the\s+|all\s+|a\s+|an\s+)?[a-z]+[a-z\s]*?\b(from|of|off)\b"
)
#: A gloss that confirms the negative reading of a prefix ("not mixed with ...", "taking place
#: without ...", "untroubled by ..."); "impaired" is no "im-" + "paired".
_NEGATIVE_GLOSS = re.compile(r"\b(not|no|without|lacking|free|un[a-z]+)\b")
#: Negative prefixes of adjectives and participles (Huddleston & Pullum 2002, ch. 9 §8;
#: the affixal cues of ConanDoyle-neg).
PREFIXES = ("un", "non", "in", "im", "il", "ir", "dis")
#: The prefixes that negate an English participle (un-, non-); in-/im-/dis- attach to Latinate
#: adjectives, and on a participle they are reversative ("disjoined") or no prefix ("impaired").
PARTICIPLE_PREFIXES = ("un", "non")
#: WordNet's verb frame 14, "Somebody ----s somebody something" (the double-object construction).
DOUBLE_OBJECT = 14


# -- WordNet walks -------------------------------------------------------------------------------
def _closure(wn: Any, roots: Iterable[str], keep: Callable[[Any], bool]) -> dict[Any, str]:
    """Synset -> its root, over the hyponym closure of ``roots``; a synset ``keep`` rejects
    is left out with everything below it."""
    found: dict[Any, str] = {}
    for name in roots:
        root = wn.synset(name)
        stack = [root]
        while stack:
            synset = stack.pop()
            if synset in found or not keep(synset):
                continue
            found[synset] = name
            stack.extend(synset.hyponyms())
    return found


def _first_sense(wn: Any, lemma: str, pos: str) -> Any | None:
    senses = wn.synsets(lemma, pos)
    return senses[0] if senses else None


def _provenance(synset: Any, root: str) -> str:
    name = synset.name()
    return f"{name} (root)" if name == root else f"{name}, hyponym of {root}"


def _first_sense_with_frame(wn: Any, lemma: str, frame: int | None) -> Any | None:
    """The lemma's most frequent verb sense, or, with ``frame``, its most frequent sense that
    takes that WordNet verb frame: the construction selects the sense ("spare me the
    details" is frame 14, "Somebody ----s somebody something", whose first sense is "save or
    relieve from an experience", not the more frequent "refrain from harming")."""
    for synset in wn.synsets(lemma, "v"):
        if frame is None:
            return synset
        if any(frame in lem.frame_ids() for lem in synset.lemmas() if lem.name().lower() == lemma.lower()):
            return synset
    return None


def verb_class(
    wn: Any,
    spec: ClassSpec,
    keep: Callable[[Any], bool] = lambda s: True,
    *,
    single: bool = False,
    no_adjective: bool = False,
    frame: int | None = None,
) -> Iterator[Entry]:
    """The verbs whose most frequent sense (with ``frame``: most frequent sense in that verb
    frame) lies in the kept closure of the class's roots."""
    synsets = _closure(wn, spec.roots, keep)
    seen: set[str] = set()
    for synset in sorted(synsets, key=lambda s: s.name()):
        for lemma in synset.lemma_names():
            word = lemma.lower().replace("_", " ")
            if (
                word in seen
                or (single and " " in word)
                or not word.replace(" ", "").replace("-", "").isalpha()
            ):
                continue
            first = _first_sense_with_frame(wn, lemma, frame)
            if first not in synsets:
                continue  # the word's dominant sense is another one ("drop", "take", "catch")
            if no_adjective and " " not in word and wn.synsets(lemma, "a"):
                # an adjective too ("long"): the list is also read for adjectives; a phrasal
                # verb ("cut out") is never read as one
                continue
            seen.add(word)
            yield Entry(spec.name, word, "verb", "wordnet", _provenance(first, synsets[first]))


def defined_by_roots(wn: Any, roots: Iterable[str]) -> Callable[[Any], bool]:
    """A filter for classes read without a negation (omitting, removing): a troponym stays only
    when its gloss opens with a verb of its root synsets ("remove by passing through a
    filter", "avoid and stay away"), i.e. it is defined as a way of doing the root, not as a
    manner of motion that happens to remove something ("dig with a shovel")."""
    root_synsets = {wn.synset(name) for name in roots}
    heads = {name.split("_")[0].lower() for s in root_synsets for name in s.lemma_names()}

    def keep(synset: Any) -> bool:
        if synset in root_synsets:
            return True
        first = synset.definition().split()[0].lower().strip(",;()")
        return first in heads and _not_debone(synset)

    return keep


def _hearing_only(synset: Any) -> bool:
    return not _OTHER_SENSES.search(synset.definition())


def _not_debone(synset: Any) -> bool:
    return not _NAMES_REMOVED.search(synset.definition())


def _containment(synset: Any) -> bool:
    return bool(re.search(r"\b(contain|include|part|component)", synset.definition()))


#: A gloss that defines a noun as a kind of evidence or indication ("a slight indication",
#: "any factual evidence that ..."), not as a thing that happens to indicate ("symptom: any
#: sensation or change in bodily function ...").
_EVIDENTIAL_GLOSS = re.compile(r"^(?:(?:a|an|any|the|some)\s+)?(?:[a-z]+\s+)?(?:indication|evidence)\b")


def evidential_nouns(wn: Any, spec: ClassSpec) -> Iterator[Entry]:
    """Nouns of evidence and indication: the roots' own lemmas and the hyponyms whose gloss
    defines them as evidence or an indication, kept where the noun's most frequent sense is
    one of them ("trace" is first "a just detectable amount", already a filler noun)."""
    roots = set(spec.roots)
    synsets = _closure(
        wn,
        spec.roots,
        lambda s: s.name() in roots or bool(_EVIDENTIAL_GLOSS.search(s.definition())),
    )
    seen: set[str] = set()
    for synset in sorted(synsets, key=lambda s: s.name()):
        for lemma in synset.lemma_names():
            word = lemma.lower()
            if word in seen or not word.isalpha() or _first_sense(wn, lemma, "n") not in synsets:
                continue
            seen.add(word)
            first = _first_sense(wn, lemma, "n")
            yield Entry(spec.name, word, "noun", "wordnet", _provenance(first, synsets[first]))


def _participles(wn: Any, verb: str) -> list[str]:
    """The past participle(s) of a verb: its irregular forms (verb.exc) or the regular one,
    spelled by the usual rules and checked against WordNet's morphology."""
    irregular = sorted(
        form
        for form, bases in wn._exception_map["v"].items()
        if verb in bases and not form.endswith(("ing", "s")) and form != verb
    )
    if irregular:
        return irregular
    if verb.endswith("e"):
        form = verb + "d"
    elif re.search(r"[^aeiou]y$", verb):
        form = verb[:-1] + "ied"
    elif re.fullmatch(r"[^aeiou]*[aeiou][bdgklmnprt]", verb):  # one syllable, CVC: doubled
        form = verb + verb[-1] + "ed"
    else:
        form = verb + "ed"
    return [form] if verb in wn._morphy(form, "v") else []


#: A gloss that defines a noun as a wanting or a needing ("an intense desire for some particular
#: thing"), not as a state that happens to follow from one ("boredom", "hurry").
_DESIRE_GLOSS = re.compile(r"\b(?:desire|desiring|want|wanting|wish|craving|longing|need|needing)\b")


def desire_nouns(wn: Any, spec: ClassSpec) -> Iterator[Entry]:
    """Nouns of wanting and needing ("need", "wish", "craving"): the closure of the roots, kept
    where the noun's most frequent sense lies in it ("want" is first "a state of extreme poverty")."""
    roots = set(spec.roots)
    synsets = _closure(
        wn, spec.roots, lambda s: s.name() in roots or bool(_DESIRE_GLOSS.search(s.definition()))
    )
    seen: set[str] = set()
    for synset in sorted(synsets, key=lambda s: s.name()):
        for lemma in synset.lemma_names():
            word = lemma.lower()
            first = _first_sense(wn, lemma, "n")
            if word in seen or not word.isalpha() or first not in synsets:
                continue
            seen.add(word)
            yield Entry(spec.name, word, "noun", "wordnet", _provenance(first, synsets[first]))


def any_sense_verbs(
    wn: Any,
    spec: ClassSpec,
    keep: Callable[[Any], bool],
    light_verbs: Iterable[str],
    request_roots: Iterable[str],
) -> Iterator[Entry]:
    """The verbs with *any* sense in the kept closure of the class's roots, for a construction
    that selects that sense (the imperative addressed to the search: "drop the B" cannot mean
    "let fall"). Left out: a light verb ("take", "get", Jespersen 1954; Butt 2003), whose
    meaning comes from its object (a phrasal verb with one keeps its particle's), and a verb
    with any sense under ``request_roots``, which a request to the search could mean instead
    ("pick the B" selects, "check out the B" listens)."""
    synsets = _closure(wn, spec.roots, keep)
    light = set(light_verbs)
    request = {wn.synset(name) for name in request_roots}

    def could_request(word: str) -> bool:
        return any(
            sense in request or not request.isdisjoint(sense.closure(lambda s: s.hypernyms()))
            for sense in wn.synsets(word.replace(" ", "_"), "v")
        )

    seen: set[str] = set()
    for synset in sorted(synsets, key=lambda s: s.name()):
        for lemma in synset.lemma_names():
            word = lemma.lower().replace("_", " ")
            if word in seen or word in light or not word.replace(" ", "").replace("-", "").isalpha():
                continue
            if could_request(word):
                seen.add(word)
                continue
            seen.add(word)
            yield Entry(spec.name, word, "verb", "wordnet", _provenance(synset, synsets[synset]))


def _adjective_lemmas(wn: Any) -> Iterator[Any]:
    for synset in wn.all_synsets("a"):
        yield from synset.lemmas()


#: Negative prefixes of adjectives (Huddleston & Pullum 2002, ch. 19 §5).
_LATINATE_PREFIXES = ("in", "im", "il", "ir", "un", "non")


def absence_adjectives(wn: Any, spec: ClassSpec) -> Iterator[Entry]:
    """Adjectives whose WordNet antonym is an adjective of presence or perceptibility, with
    the satellites of their synset; the word's most frequent adjective sense must be one of them."""
    presence = {wn.synset(name) for name in spec.roots}
    absence: dict[Any, str] = {}
    for synset in sorted(presence, key=lambda s: s.name()):
        for lemma in synset.lemmas():
            for antonym in lemma.antonyms():
                head = antonym.synset()
                for member in (head, *head.similar_tos()):
                    if _hearing_only(member):
                        absence.setdefault(member, f"antonym of {lemma.name()} ({synset.name()})")
    cluster = presence | {satellite for root in presence for satellite in root.similar_tos()}

    def indirect(first: Any) -> bool:
        """A head whose antonym has a sense in a root's cluster (Gross & Miller 1990: a
        satellite's antonym is its head's) and is the word's stem under a negative prefix
        (affixal negation): "indiscernible", against "discernible"."""
        return first is not None and any(
            sense in cluster
            for lemma in first.lemmas()
            for antonym in lemma.antonyms()
            if any(lemma.name() == prefix + antonym.name() for prefix in _LATINATE_PREFIXES)
            for sense in wn.synsets(antonym.name(), "a")
        )

    seen: set[str] = set()
    for synset in sorted(absence, key=lambda s: s.name()):
        for lemma in synset.lemma_names():
            word = lemma.lower()
            first = _first_sense(wn, lemma, "a")
            # the word's most frequent sense is one of the class, or (it has one of them) a head
            # whose antonym is a word of presence
            if word in seen or "_" in word or (first not in absence and not indirect(first)):
                continue
            if wn.synsets(word, "r") or wn._morphy(word, "v"):
                continue  # an adverb of place ("away") or a verb's form ("vanished"): no absence word
            if _OTHER_SENSES.search(_stem(word) or word):
                continue  # a word of another sense ("unseen": an unseen bird is heard)
            seen.add(word)
            yield Entry(spec.name, word, "adj", "wordnet", f"{synset.name()}: {absence[synset]}")


def _stem(word: str, prefixes: Iterable[str] = PREFIXES) -> str | None:
    for prefix in prefixes:
        if word.startswith(prefix) and len(word) > len(prefix) + 3:
            return word[len(prefix) :].lstrip("-")
    return None


def privative_participles(wn: Any, spec: ClassSpec, connective_verbs: Iterable[str]) -> Iterator[Entry]:
    """Negatively prefixed adjectives and participles of co-occurrence.

    A prefixed WordNet adjective whose direct antonym is a participle of a verb of the class
    (any sense: WordNet attests both words); else an un-/non- adjective whose gloss is negative
    and whose stem, the prefix taken off, is the participle of such a verb in its most
    frequent sense, or of a root synset's own verb; and, for the words WordNet lacks, "un" +
    that participle (unless WordNet knows the form as a verb's: "unfolded" is the reversative
    "unfold", not a negation).
    """
    synsets = _closure(wn, spec.roots, lambda s: True)
    any_sense: dict[str, str] = {}
    stems: dict[str, str] = {}
    for synset in sorted(synsets, key=lambda s: s.name()):
        for lemma in synset.lemma_names():
            if "_" in lemma or not lemma.isalpha():
                continue
            word = lemma.lower()
            any_sense.setdefault(word, _provenance(synset, synsets[synset]))
            if synset.name() in spec.roots or _first_sense(wn, lemma, "v") == synset:
                stems.setdefault(word, _provenance(synset, synsets[synset]))
    for verb in connective_verbs:
        stems.setdefault(verb, "co-occurrence connective of negation.toml")
    by_participle = {form: verb for verb in sorted(stems) for form in _participles(wn, verb)}
    seen: set[str] = set()
    for lemma in _adjective_lemmas(wn):
        word = lemma.name().lower()
        stem = _stem(word)
        if word in seen or stem is None:
            continue
        participial = _stem(word, PARTICIPLE_PREFIXES) == stem
        antonyms = lemma.antonyms()
        for antonym in antonyms:
            bases = [b for b in wn._morphy(antonym.name().lower(), "v") if b in any_sense]
            if bases and antonym.name().lower() == stem:
                seen.add(word)
                yield Entry(
                    spec.name,
                    word,
                    "adj",
                    "wordnet",
                    f"antonym of {antonym.name()} ({antonym.synset().name()}); {bases[0]}: "
                    f"{any_sense[bases[0]]}",
                )
                break
        else:
            if (
                not antonyms
                and participial
                and stem in by_participle
                and _NEGATIVE_GLOSS.search(lemma.synset().definition())
            ):
                seen.add(word)
                verb = by_participle[stem]
                yield Entry(
                    spec.name,
                    word,
                    "adj",
                    "wordnet",
                    f"{lemma.synset().name()}, no antonym; stem: participle of {verb} ({stems[verb]})",
                )
    for participle, verb in sorted(by_participle.items()):
        word = "un" + participle
        if word in seen or wn._morphy(word, "v"):
            continue  # "unfolded": the participle of a reversative verb, not a negation
        seen.add(word)
        yield Entry(spec.name, word, "adj", "wordnet", f"un- + participle of {verb} ({stems[verb]})")


def negative_implicatives(wn: Any, spec: ClassSpec, positive: Iterable[str]) -> Iterator[Entry]:
    """Prefixed adjectives whose WordNet antonym is a positive implicative ("unable": able)."""
    wanted = set(positive)
    seen: set[str] = set()
    for lemma in _adjective_lemmas(wn):
        word = lemma.name().lower()
        if word in seen or not word.startswith(PREFIXES):
            continue
        for antonym in lemma.antonyms():
            if antonym.name().lower() in wanted:
                seen.add(word)
                yield Entry(
                    spec.name,
                    word,
                    "adj",
                    "wordnet",
                    f"antonym of {antonym.name()} ({antonym.synset().name()}), a positive implicative",
                )


def _holds(synset: Any) -> bool:
    return bool(re.search(r"\b(contain|includ)", synset.definition()))


def privative_stems(
    wn: Any, spec: ClassSpec, containing: Iterable[str], perceiving: Iterable[str]
) -> Iterator[Entry]:
    """Adjectives WordNet derives from a verb of containing or perceiving, said of what holds
    or what is perceived: of a verb of containing, an adjective glossed as containing
    ("inclusive": including much); of a verb of perceiving, the modal -able/-ible form, "capable
    of being perceived" (Marchand 1969: "perceptible", "hearable"), not the perceiver's
    adjective ("perceptive", "observant"). The adjective's most frequent sense must be the
    derived one."""
    modal = set(perceiving)
    seen: set[str] = set()
    for verb in sorted({*containing, *perceiving}):
        for synset in wn.synsets(verb, "v"):
            for lemma in synset.lemmas():
                if lemma.name().lower() != verb:
                    continue
                for related in lemma.derivationally_related_forms():
                    word = related.name().lower()
                    if related.synset().pos() not in ("a", "s") or word in seen or not word.isalpha():
                        continue
                    if _first_sense(wn, word, "a") != related.synset():
                        continue
                    if not (word.endswith(("able", "ible")) if verb in modal else _holds(related.synset())):
                        continue
                    seen.add(word)
                    provenance = f"{related.synset().name()}: derived from {verb}"
                    yield Entry(spec.name, word, "adj", "wordnet", provenance)


# -- the file ----------------------------------------------------------------------------------
def _rules() -> dict[str, Any]:
    return tomllib.loads(RULES.read_text(encoding="utf-8"))


def derive(wn: Any, rules: dict[str, Any] | None = None) -> list[Entry]:
    """Every entry of the lexicon, in file order.

    Args:
        wn: NLTK's WordNetCorpusReader over WordNet 3.0.
        rules: the parsed ``grammars/negation.toml`` (its connectives and positive implicatives).
    """
    rules = _rules() if rules is None else rules
    spec = {c.name: c for c in CLASSES}
    connective_verbs = sorted(
        {phrase.split()[0] for c in rules.get("connective", []) for phrase in c.get("lemma_phrases", [])}
    )
    entries: list[Entry] = []
    for name in ("omission_verb", "removal_verb", "prohibition_verb", "elimination_verb"):
        entries += verb_class(wn, spec[name], defined_by_roots(wn, spec[name].roots), no_adjective=True)
    entries += verb_class(wn, spec["privation_verb"], single=True, no_adjective=True)
    entries += verb_class(wn, spec["desire_verb"], single=True, no_adjective=True)
    entries += verb_class(wn, spec["need_verb"], single=True, no_adjective=True)
    entries += verb_class(wn, spec["perception_verb"], _hearing_only, single=True, no_adjective=True)
    entries += verb_class(wn, spec["containment_verb"], _containment, single=True, no_adjective=True)
    entries += verb_class(wn, spec["obscuring_verb"], single=True)
    entries += verb_class(wn, spec["diminishing_verb"])
    for name in ("ceasing_verb", "appearance_verb", "seeking_verb"):
        entries += verb_class(wn, spec[name], defined_by_roots(wn, spec[name].roots), no_adjective=True)
    entries += verb_class(
        wn,
        spec["disclosure_verb"],
        defined_by_roots(wn, spec["disclosure_verb"].roots),
        single=True,
        no_adjective=True,
    )
    for name in ("giving_verb", "sparing_verb"):  # read in the double-object construction only
        entries += verb_class(wn, spec[name], single=True, frame=DOUBLE_OBJECT)
    entries += evidential_nouns(wn, spec["evidential_noun"])
    entries += desire_nouns(wn, spec["desire_noun"])
    entries += absence_adjectives(wn, spec["absence_adjective"])
    entries += privative_participles(wn, spec["privative_participle"], connective_verbs)
    entries += negative_implicatives(
        wn, spec["negative_implicative"], rules["lexicon"]["positive_implicatives"]
    )
    entries += negative_implicatives(wn, spec["impossibility_adjective"], ["possible"])
    single = [e for e in entries if " " not in e.lemma]
    entries += privative_stems(
        wn,
        spec["privative_stem"],
        {e.lemma for e in single if e.cls == "containment_verb"},
        {e.lemma for e in single if e.cls == "perception_verb"},
    )
    # a word whose most frequent sense has a class keeps its place there ("strip ... of B")
    placed = {e.lemma for e in entries}
    imperative = spec["imperative_removal_verb"]
    entries += [
        e
        for e in any_sense_verbs(
            wn,
            imperative,
            defined_by_roots(wn, imperative.roots),
            rules["lexicon"]["light_verbs"],
            rules["lexicon"]["request_sense_roots"],
        )
        if e.lemma not in placed
    ]
    for source, lemma, joins, listed in PUBLISHED:
        entries.append(Entry("published", lemma, "word", source, listed, joins))
    return [_attested(entry, spec, _inventory(rules)) for entry in entries]


def _inventory(rules: dict[str, Any]) -> dict[str, set[str]]:
    """Target -> the words grammars/negation.toml itself lists there."""
    found: dict[str, set[str]] = {}
    for cue in rules.get("cue", []):
        words = set(cue.get("words", [])) | set(cue.get("phrases", [])) | set(cue.get("lemma_phrases", []))
        found[f"cue:{cue['id']}"] = words
    for table, kind in (("lexicon", "list"), ("segments", "segments")):
        for name, words in rules.get(table, {}).items():
            found[f"{kind}:{name}"] = set(words)
    return found


def _attested(entry: Entry, spec: dict[str, ClassSpec], inventory: dict[str, set[str]]) -> Entry:
    """A word the rule file already lists where the entry would put it is attested, not added:
    the rule file owns the words it lists (a user who takes one out is not overruled)."""
    target = entry.joins or spec[entry.cls].joins
    if entry.lemma not in inventory.get(target, set()):
        return entry
    return Entry(entry.cls, entry.lemma, entry.pos, entry.source, entry.provenance, f"attests:{target}")


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render(entries: list[Entry]) -> str:
    """The TOML text of the lexicon file."""
    lines = [
        '# Negation cue classes from lexical semantics (docs/negation.md, "Cue classes from lexical',
        '# semantics"). GENERATED by scripts/build_negation_lexicon.py from WordNet 3.0 and the published',
        "# cue lexicons below: do not edit by hand; change the script and run it again.",
        "#",
        "# Read by fortekit.fol.caption.negation_lexicon (tomllib, once). [words] entries are the words,",
        "# one a line, each with its class and provenance. [classes.NAME].joins says where",
        '# a class\'s words go: "cue:ID" adds them to that [[cue]] of negation.toml, "list:NAME" to that',
        '# [lexicon] list, "segments:NAME" to that [segments] list; a published entry names its own',
        "# target (joins). An entry whose word negation.toml already lists there only attests it",
        '# (joins = "attests:..."): the rule file owns its words. A word the inventory has in another',
        "# class keeps its place there: the lexicon adds words, it never moves one.",
        "",
        "version = 1",
        "",
        "[sources]",
    ]
    lines += [f"{_quote(key)} = {_quote(value)}" for key, value in SOURCES.items()]
    for spec in CLASSES:
        lines += ["", f"[classes.{spec.name}]", f"joins = {_quote(spec.joins)}", f"doc = {_quote(spec.doc)}"]
        if spec.roots:
            lines.append("roots = [" + ", ".join(_quote(r) for r in spec.roots) + "]")
        if spec.denies:
            lines.append("denies = true")
    lines += ["", "[words]", "entries = ["]
    for e in entries:
        lines.append(
            f"  {{ class = {_quote(e.cls)}, lemma = {_quote(e.lemma)}, pos = {_quote(e.pos)}, "
            f"source = {_quote(e.source)}, provenance = {_quote(e.provenance)}"
            + (f", joins = {_quote(e.joins)}" if e.joins else "")
            + " },"
        )
    lines += ["]", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the shipped file differs")
    parser.add_argument("--out", type=Path, default=TARGET, help="where to write (default: the shipped file)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT.parent))
    from fortekit.vocab.wordnet import load_wordnet

    text = render(derive(load_wordnet().reader))
    if args.check:
        same = args.out.is_file() and args.out.read_text(encoding="utf-8") == text
        print("up to date" if same else f"{args.out} differs from what the script derives")
        return 0 if same else 1
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out} ({text.count('class = ')} entries)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
