"""Which V_audio sound symbols entail which: hyponymy, synonymy and derivation in WordNet.

A caption that names a crow names a bird; one that names a bird does not name a crow. The
grounded violation check (:mod:`fortekit.fol.violation`) asks exactly this question, in
this direction, of the symbols a caption and a query were grounded to. The answers are
derived once from WordNet 3.0 by :func:`derive_entailment` and shipped as
``vocab/entailment.tsv`` (regenerate with ``python -m fortekit.vocab.entailment``), so a
search never opens NLTK's reader to ask them.

How one symbol is taken to entail another (``specific ⊑ general``), each rule a lexical
relation of WordNet (Miller 1995; Fellbaum 1998, ch. 1-3):

* **Senses.** A word stands for its *dominant* senses: the first (most frequent) one and
  every sense with at least :data:`DOMINANT_SHARE` of the word's tagged frequency in
  SemCor (the most-frequent-sense prior of word-sense disambiguation); for a word with no
  tagged frequency, the first sense and its senses in the lexicographer files of sounds
  (:data:`SOUND_LEXNAMES`). A person sense (``noun.person``) counts only when it is the
  first: "siren" is not a woman, "crow" not a people.
* **The entailed side.** As the more general word, a word stands for those dominant senses
  that share its first sense's lexicographer file: "no crows" excludes the bird, not the
  cock's cry that is the second sense of the noun *crow*.
* **Nouns, hyponymy.** ``s ⊑ g`` when a dominant sense of *g* is a dominant sense of *s* or
  one of its hypernyms (instance hypernyms included), at any depth: crow ⊑ bird, man ⊑ person.
* **Verbs, synonymy and one level of troponymy.** WordNet's verb hierarchy files many animal
  sounds under verbs of speech (bark and sing are troponyms of *talk*, sense 2), so a verb
  entails another only when they share a dominant sense, or when the first sense of *s* is a
  direct troponym of the first sense of *g* (converse ⊑ talk; bark ⋢ talk).
* **Derivation across parts of speech.** ``s ⊑ g`` when a sense WordNet relates to *s*'s own
  lemma by derivation is a dominant sense of *g*, or (from an event noun to a verb) one of that
  sense's lemmas is: "speech" entails "speaking" and "talking" (speech -> speak), "applause"
  and "applauding" entail each other, "hammering" entails "hammer" (the instrument a verb
  names); a verb never entails its agent ("speaking" does not entail "speaker"). An event noun
  whose synonyms include a verb's gerund entails the verb (applause, whose synset holds
  "clapping", entails "clapping").

* **Closed compounds.** A compound noun holds the sound its first or last constituent names
  when its WordNet gloss names that constituent: "thunderstorm" ("... rain or hail along with
  thunder and lightning") holds thunder, "rainstorm" rain, "birdsong" a bird.

* **Parts.** Per noun, the nouns one of its parts is a kind of (WordNet part meronymy of its
  first sense and that sense's hypernyms): a truck has an engine. No entailment: a caption of
  a truck does not hold "an engine idling"; the check uses parts to tell a sound's own source
  from another one.

Each symbol also gets a **kind**: ``person`` (the unspecific human: person, people),
``group`` (a group of people: crowd, audience), ``human`` (any other person noun: man,
child), or empty. A query that excludes "people talking" names its sound by the verb; the
check takes any human or group noun of a caption as that verb's agent there.

Example:
    >>> table = load_entailment()
    >>> table.entails("Crow", "Bird"), table.entails("Bird", "Crow")
    (True, False)
    >>> table.kind("Person"), table.kind("Crowd"), table.kind("Man"), table.kind("Dog")
    ('person', 'group', 'human', '')
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from fortekit.textio import split_text_lines

__all__ = [
    "DOMINANT_SHARE",
    "SOUND_LEXNAMES",
    "EntailmentTable",
    "derive_entailment",
    "load_entailment",
    "write_entailment",
]

#: A sense is dominant when it has at least this share of its word's SemCor frequency.
DOMINANT_SHARE = 0.10
#: Lexicographer files whose senses can name a sound source or a sound (used for words that
#: SemCor never tagged, where sense frequency says nothing).
SOUND_LEXNAMES = frozenset({
    "noun.artifact", "noun.event", "noun.phenomenon", "noun.communication", "noun.act",
    "verb.communication", "verb.perception", "verb.weather",
})
#: Lexicographer files of nouns that name an event or act: the nouns a verb's derivation may
#: reach (speak -> speech, applaud -> applause), not its agent (speaker) or instrument.
EVENT_LEXNAMES = frozenset({"noun.act", "noun.event", "noun.communication", "noun.phenomenon"})
#: The senses of the unspecific human source (a query's "people talking" names its sound by
#: the verb) and of groups of people, whose hyponyms are groups too (crowd, audience, choir).
GENERIC_PERSON = frozenset({"person.n.01", "people.n.01", "someone.n.01"})
GENERIC_GROUP = frozenset({"social_group.n.01", "gathering.n.01", "people.n.01"})
#: The parts of speech of V_audio that name sources and events.
_WORD_POS = {"NOUN": "n", "PROPN": "n", "VERB": "v"}
_HEADER = (
    "# V_audio symbol entailment derived from WordNet 3.0 (fortekit.vocab.entailment;\n"
    "# regenerate: python -m fortekit.vocab.entailment). symbol, kind, symbols it entails, parts.\n"
)


@dataclass(frozen=True, slots=True)
class EntailmentTable:
    """For each V_audio symbol: its kind and the symbols it entails (strictly, not itself).

    Example:
        >>> table = EntailmentTable({"Crow": frozenset({"Bird"})}, {"Man": "human"})
        >>> table.entails("Crow", "Bird"), table.entails("Crow", "Crow"), table.entails("Bird", "Crow")
        (True, True, False)
    """

    above: Mapping[str, frozenset[str]] = field(default_factory=dict)
    kinds: Mapping[str, str] = field(default_factory=dict)
    parts: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def entails(self, specific: str, general: str) -> bool:
        """True when a caption naming ``specific`` names ``general`` (equal symbols included)."""
        return specific == general or general in self.above.get(specific, frozenset())

    def kind(self, symbol: str) -> str:
        """``'person'``, ``'group'``, ``'human'`` or ``''``."""
        return self.kinds.get(symbol, "")

    def part_of(self, part: str, whole: str) -> bool:
        """True when WordNet gives ``whole`` a part that is a kind of ``part`` (a truck has an engine).

        Example:
            >>> load_entailment().part_of("Engine", "Truck"), load_entailment().part_of("Truck", "Engine")
            (True, False)
        """
        return part in self.parts.get(whole, frozenset())

    def __len__(self) -> int:
        return len(self.above)

    def below(self, general: str) -> frozenset[str]:
        """Every symbol that entails ``general``, itself included (the inverse of :meth:`entails`).

        Example:
            >>> table = EntailmentTable({"Crow": frozenset({"Bird"}), "Owl": frozenset({"Bird"})})
            >>> sorted(table.below("Bird"))
            ['Bird', 'Crow', 'Owl']
        """
        inverse = _INVERSES.get(id(self))
        if inverse is None or inverse[0] is not self:
            table: dict[str, set[str]] = {}
            for specific, generals in self.above.items():
                for name in generals:
                    table.setdefault(name, set()).add(specific)
            inverse = (self, {name: frozenset(found) for name, found in table.items()})
            _INVERSES[id(self)] = inverse
        return inverse[1].get(general, frozenset()) | {general}


#: Per table (by id, holding the table so the id stays its own): general -> its specifics.
_INVERSES: dict[int, tuple[EntailmentTable, dict[str, frozenset[str]]]] = {}


@cache
def load_entailment() -> EntailmentTable:
    """The shipped table (``vocab/entailment.tsv``), read once.

    Example:
        >>> len(load_entailment()) > 1000
        True
    """
    text = resources.files("fortekit.vocab").joinpath("entailment.tsv").read_text("utf-8")
    return parse_entailment(text)


def parse_entailment(text: str) -> EntailmentTable:
    """An :class:`EntailmentTable` from the TSV text :func:`write_entailment` writes.

    Example:
        >>> parse_entailment("Crow\\t\\tBird,Animal\\nMan\\thuman\\tPerson\\n").entails("Man", "Person")
        True
    """
    above: dict[str, frozenset[str]] = {}
    kinds: dict[str, str] = {}
    parts: dict[str, frozenset[str]] = {}
    for line in split_text_lines(text):
        if not line.strip() or line.startswith("#"):
            continue
        symbol, kind, entailed, held = [*line.split("\t"), "", "", ""][:4]
        above[symbol] = frozenset(name for name in entailed.split(",") if name)
        if kind:
            kinds[symbol] = kind
        if held:
            parts[symbol] = frozenset(name for name in held.split(",") if name)
    return EntailmentTable(above, kinds, parts)


def write_entailment(table: EntailmentTable, path: str | Path) -> None:
    """Write ``table`` as TSV (sorted, so that a rebuild gives the same bytes)."""
    lines = [_HEADER.rstrip("\n")]
    for symbol in sorted(table.above):
        held = ",".join(sorted(table.parts.get(symbol, ())))
        lines.append(f"{symbol}\t{table.kind(symbol)}\t{','.join(sorted(table.above[symbol]))}\t{held}".rstrip("\t"))
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


class _Senses:
    """Dominant senses, their closures and lemma sets of words, over NLTK's reader."""

    def __init__(self, reader: Any) -> None:
        self.reader = reader
        self._cache: dict[tuple[str, str], tuple[Any, ...]] = {}

    def dominant(self, word: str, pos: str) -> tuple[Any, ...]:
        key = (word, pos)
        if key not in self._cache:
            self._cache[key] = self._dominant(word, pos)
        return self._cache[key]

    def _dominant(self, word: str, pos: str) -> tuple[Any, ...]:
        name = word.lower().replace(" ", "_")
        synsets = self.reader.synsets(name, pos)
        if not synsets:
            return ()
        counts = [sum(lemma.count() for lemma in s.lemmas() if lemma.name().lower() == name) for s in synsets]
        total = sum(counts)
        kept = [synsets[0]]
        for synset, count in zip(synsets[1:], counts[1:], strict=True):
            if synset.lexname() == "noun.person":
                continue  # a person sense counts only as the first one
            frequent = total and count >= DOMINANT_SHARE * total
            if frequent or (not total and synset.lexname() in SOUND_LEXNAMES):
                kept.append(synset)
        return tuple(kept)

    def upward(self, word: str, pos: str) -> frozenset[Any]:
        senses = self.dominant(word, pos)
        if pos == "n":
            out: set[Any] = set(senses)
            for synset in senses:
                out.update(synset.closure(lambda s: s.hypernyms() + s.instance_hypernyms()))
            return frozenset(out)
        # verbs: their own senses only (shared senses are synonymy; see the module docstring)
        return frozenset(senses)

    def lemma_names(self, word: str, pos: str) -> frozenset[str]:
        return frozenset(lemma.name().lower() for s in self.dominant(word, pos) for lemma in s.lemmas())

    def derived(self, word: str, pos: str) -> frozenset[Any]:
        """The senses WordNet relates to ``word`` by derivation, between an event noun and its
        verb (speech -> speak, applaud -> applause) and from a verb to the instrument it names
        (hammering -> hammer); never to an agent (speaker)."""
        name = word.lower().replace(" ", "_")
        out: set[Any] = set()
        for synset in self.dominant(word, pos):
            if synset.pos() == "n" and synset.lexname() not in EVENT_LEXNAMES:
                continue
            for lemma in synset.lemmas():
                if lemma.name().lower() != name:
                    continue
                for other in lemma.derivationally_related_forms():
                    target = other.synset()
                    if target.pos() == "v" or target.lexname() in EVENT_LEXNAMES or (
                            synset.pos() == "v" and target.lexname() == "noun.artifact"
                            and other.name().lower().startswith(name[:max(3, len(name) - 2)])):
                        # an event, or the instrument a verb names by its own stem (hammer, mower)
                        out.add(target)
        return frozenset(out)

    def every(self, word: str, pos: str) -> frozenset[Any]:
        return frozenset(self.reader.synsets(word.lower().replace(" ", "_"), pos))

    def kind(self, word: str, pos: str) -> str:
        senses = self.dominant(word, pos)
        if pos != "n" or not senses:
            return ""
        first = senses[0]
        above = {s.name() for s in first.closure(lambda s: s.hypernyms())}
        if first.name() in GENERIC_PERSON:
            return "person"
        if first.name() in GENERIC_GROUP or GENERIC_GROUP & above:
            return "group"
        if "person.n.01" in above:
            return "human"
        return ""

def derive_entailment(entries: Iterable[Any], wordnet: Any) -> EntailmentTable:
    """Derive the entailment table of V_audio's sound symbols from WordNet.

    Args:
        entries: :class:`~fortekit.vocab.model.VocabEntry` records (their symbol, lemma, POS).
        wordnet: a :class:`~fortekit.vocab.wordnet.WordNet`.

    Returns:
        The :class:`EntailmentTable` (symbols with no noun or verb sense are listed with no
        entailments, so a lookup of any V_audio symbol answers).

    Example:
        >>> from fortekit.vocab import load_vocabulary, load_wordnet
        >>> table = derive_entailment(load_vocabulary(), load_wordnet())  # doctest: +SKIP
    """
    senses = _Senses(wordnet.reader)
    words: dict[str, tuple[str, str]] = {}
    for entry in entries:
        pos = _WORD_POS.get(entry.pos)
        if pos is not None and senses.dominant(entry.lemma, pos):
            words[entry.symbol] = (entry.lemma, pos)
    # as the entailed (general) side, a word stands for its dominant senses of its first sense's
    # lexicographer file: "no crows" means the bird, not the cock's cry (crow, noun, sense 2)
    own = {symbol: frozenset(s for s in senses.dominant(*word)
                             if s.lexname() == senses.dominant(*word)[0].lexname())
           for symbol, word in words.items()}
    every = {symbol: senses.every(*word) for symbol, word in words.items()}
    lemma_sets = {symbol: senses.lemma_names(*word) for symbol, word in words.items()}
    gerunds = {symbol: _gerunds(word[0]) if word[1] == "v" else frozenset() for symbol, word in words.items()}
    above: dict[str, frozenset[str]] = {}
    kinds: dict[str, str] = {}
    for symbol, (lemma, pos) in words.items():
        upward = senses.upward(lemma, pos)
        related = senses.derived(lemma, pos)
        related_lemmas = frozenset(name.lower() for synset in related for name in synset.lemma_names())
        events = frozenset(name.lower() for synset in senses.dominant(lemma, pos)
                           if synset.lexname() in EVENT_LEXNAMES for name in synset.lemma_names())
        entailed = set()
        for other, (_, other_pos) in words.items():
            if other == symbol:
                continue
            if other_pos == pos:
                if upward & own[other]:
                    entailed.add(other)
            elif (pos == "n" and (related & every[other] or related_lemmas & lemma_sets[other]
                                  or (events and gerunds[other] & events))) or (
                    pos == "v" and related & own[other]):
                # noun -> verb: the event noun's verb and that verb's synonyms (speech -> speak ~ talk),
                # or an event noun whose synonyms hold the verb's gerund (applause ~ clapping -> clap)
                entailed.add(other)
        above[symbol] = frozenset(entailed)
        kind = senses.kind(lemma, pos)
        if kind:
            kinds[symbol] = kind
    _add_compounds(words, senses, above)
    for entry in entries:
        above.setdefault(entry.symbol, frozenset())
    return EntailmentTable(above, kinds, _parts(words, senses, own))


def _parts(words: Mapping[str, tuple[str, str]], senses: _Senses,
           own: Mapping[str, frozenset[Any]]) -> dict[str, frozenset[str]]:
    """Per noun symbol, the noun symbols a part of it is a kind of (WordNet part meronymy of its
    first sense and of that sense's hypernyms: a truck, as a motor vehicle, has an engine)."""
    nouns = {symbol: lemma for symbol, (lemma, pos) in words.items() if pos == "n"}
    out: dict[str, frozenset[str]] = {}
    for symbol, lemma in nouns.items():
        first = senses.dominant(lemma, "n")[0]
        wholes = [first, *first.closure(lambda s: s.hypernyms())]
        meronyms = {m for whole in wholes for m in whole.part_meronyms()}
        kinds = set(meronyms)
        for meronym in meronyms:
            kinds.update(meronym.closure(lambda s: s.hypernyms()))
        found = frozenset(other for other in nouns if other != symbol and own[other] & kinds)
        if found:
            out[symbol] = found
    return out


def _gerunds(verb: str) -> frozenset[str]:
    """The -ing forms a verb's gerund may take (clap -> clapping, ride -> riding, cheer -> cheering)."""
    base = verb.lower().replace(" ", "_")
    forms = {base + "ing"}
    if base.endswith("e") and not base.endswith("ee"):
        forms.add(base[:-1] + "ing")
    if len(base) >= 3 and base[-1] not in "aeiouwxy" and base[-2] in "aeiou" and base[-3] not in "aeiou":
        forms.add(base + base[-1] + "ing")
    return frozenset(forms)


def _add_compounds(words: Mapping[str, tuple[str, str]], senses: _Senses,
                   above: dict[str, frozenset[str]]) -> None:
    """A closed compound holds the sound its constituent names when its gloss says so:
    "thunderstorm" (a storm ... with thunder) holds thunder, "birdsong" holds a bird."""
    nouns = {symbol: lemma.lower() for symbol, (lemma, pos) in words.items()
             if pos == "n" and lemma.isalpha()}
    for symbol, compound in nouns.items():
        first = senses.dominant(compound, "n")[0]
        gloss = set(_GLOSS_WORD.findall(first.definition().lower()))
        for other, part in nouns.items():
            if (other != symbol and len(part) >= 3 and len(compound) >= len(part) + 3
                    and (compound.startswith(part) or compound.endswith(part)) and part in gloss):
                above[symbol] = above.get(symbol, frozenset()) | {other}


_GLOSS_WORD = re.compile(r"[a-z]+")


def main(argv: list[str] | None = None) -> int:
    """``python -m fortekit.vocab.entailment [PATH]``: derive the table and write it."""
    import sys

    from fortekit.vocab.vocabulary import load_vocabulary
    from fortekit.vocab.wordnet import load_wordnet

    args = sys.argv[1:] if argv is None else argv
    shipped = Path(str(resources.files("fortekit.vocab").joinpath("entailment.tsv")))
    target = Path(args[0]) if args else shipped
    table = derive_entailment(list(load_vocabulary()), load_wordnet())
    write_entailment(table, target)
    print(f"wrote {len(table)} symbols, {sum(map(len, table.above.values()))} entailments to {target}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
