"""The data of scripts/build_negation_lexicon.py: its classes, the published cues and their sources.

Each class names the WordNet synsets it is walked from (docs/negation.md, "Cue classes from
lexical semantics", gives the reason for each from its gloss) and where its words join the
inventory of ``grammars/negation.toml``. The published cues are transcribed from NegEx's
trigger list and the cue inventories of ConanDoyle-neg and the SFU Review corpus; only those
that fit sound queries.

Example:
    >>> [c.name for c in CLASSES][:2]
    ['omission_verb', 'removal_verb']
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CLASSES", "PUBLISHED", "SOURCES", "ClassSpec", "Entry"]


@dataclass(frozen=True, slots=True)
class Entry:
    """One word of a derived class.

    Attributes:
        cls: the lexicon class (``omission_verb``, ``perception_verb``, ...).
        lemma: the word, lower case; a phrasal verb's words joined by a space.
        pos: ``verb``, ``adj`` or ``word`` (a cue of any part of speech).
        source: ``wordnet``, ``negex``, ``conandoyle-neg``, ``sfu-review`` or ``negation.toml``.
        provenance: the synset, relation or published list it came from.
        joins: where a published cue goes ("cue:ID", "list:NAME"); "" for a derived entry,
            whose class says it; "attests:TARGET" for a word the rule file already lists there.
    """

    cls: str
    lemma: str
    pos: str
    source: str
    provenance: str
    joins: str = ""


@dataclass(frozen=True, slots=True)
class ClassSpec:
    """A class of the lexicon: where its words go in the parser, and the synsets it is walked from."""

    name: str
    joins: str
    doc: str
    roots: tuple[str, ...] = ()
    #: its words deny a sound by their own sense, un-negated ("removed", "banned", "absent"): one
    #: that no scope placed casts a doubt on the sound beside it (fortekit.fol.caption.doubts)
    denies: bool = False


#: The roots of removing (the removal_verb class; elimination_verb takes them but the concrete remove.v.01).
_REMOVAL_ROOTS = (
    "remove.v.01",
    "get_rid_of.v.01",
    "extinguish.v.04",
    "delete.v.01",
    "erase.v.03",
    "filter.v.01",
    "hush.v.02",
)
#: The roots of omitting, excluding and avoiding (the omission_verb class but lacking and precluding);
#: exclude.v.02 "prevent from entering; shut out" (keep out, shut out, lock out) beside
#: exclude.v.01 "prevent from being included".
_OMISSION_ROOTS = ("exclude.v.01", "exclude.v.02", "neglect.v.01", "avoid.v.01", "shun.v.01", "rule_out.v.03")

#: The roots of forbidding and refusing (the prohibition_verb class): forbid.v.01 "command
#: against" (prohibit, veto, nix, ban, bar, outlaw), refuse.v.02 "refuse to accept" (reject, turn
#: down, spurn), outlaw.v.01 "declare illegal" (ban, censor), banish.v.01 "expel from a community
#: or group" (ostracise, blackball), expel.v.01 "force to leave or move out" (throw out, kick
#: out, show the door, evict): a sound made to leave is one the query bars.
_PROHIBITION_ROOTS = ("forbid.v.01", "outlaw.v.01", "refuse.v.02", "banish.v.01", "expel.v.01")

#: The classes (docs/negation.md gives the reason for each root from its gloss).
CLASSES: tuple[ClassSpec, ...] = (
    ClassSpec(
        "omission_verb",
        "cue:lacking-verb",
        "verbs of omitting, excluding, avoiding and lacking: their object is excluded",
        (
            "exclude.v.01",
            "exclude.v.02",
            "neglect.v.01",
            "miss.v.06",
            "avoid.v.01",
            "shun.v.01",
            "rule_out.v.03",
            "preclude.v.02",
        ),
        denies=True,
    ),
    ClassSpec(
        "removal_verb",
        "cue:removal-verb",
        "verbs of removing whose object is what is removed: in a resultative participle "
        '("with B removed", "B has been deleted") the object is excluded',
        _REMOVAL_ROOTS,
        denies=True,
    ),
    ClassSpec(
        "prohibition_verb",
        "cue:removal-verb",
        "verbs of forbidding, barring and refusing to accept: a sound forbidden in a query is one it "
        'leaves out, so in a resultative participle ("A, the B banned", "with B disallowed") the '
        "object is excluded",
        _PROHIBITION_ROOTS,
        denies=True,
    ),
    ClassSpec(
        "elimination_verb",
        "list:elimination_verbs",
        "verbs of removing that make their object cease to be (the removal roots but the concrete "
        'remove.v.01): with no subject of their own ("A; cut out the B", "A, eliminating B") the '
        "object is excluded",
        _REMOVAL_ROOTS[1:],
        denies=True,
    ),
    ClassSpec(
        "imperative_removal_verb",
        "list:imperative_removal_verbs",
        "verbs with any sense of removing, omitting or eliminating: in the imperative, addressed to "
        'the search, which can do nothing else to a sound, that sense is the only one ("A; drop the '
        'B"): the object is excluded',
        _REMOVAL_ROOTS + _OMISSION_ROOTS + _PROHIBITION_ROOTS,
    ),
    ClassSpec(
        "privation_verb",
        "cue:privative-adjective",
        'verbs of depriving and ridding (strip, deprive, divest): their of-object is what the patient is '
        'left without ("stripped of B")',
        ("deprive.v.01", "rid.v.01"),
        denies=True,
    ),
    ClassSpec(
        "desire_verb",
        "list:perception",
        'verbs of wanting: negated, their object is excluded ("I don\'t want B")',
        ("desire.v.01", "want.v.02"),
    ),
    ClassSpec(
        "need_verb",
        "list:perception",
        'verbs of needing: negated, their object is excluded ("without needing B")',
        ("necessitate.v.01", "need.v.03"),
    ),
    ClassSpec(
        "perception_verb",
        "list:perception",
        "verbs of (auditory or modality-free) perception: negated, their object is excluded",
        ("perceive.v.01", "hear.v.01", "detect.v.01", "sense.v.02", "pick_up.v.09"),
    ),
    ClassSpec(
        "containment_verb",
        "list:perception",
        "verbs of containing and including: negated, their object is excluded",
        ("include.v.01", "incorporate.v.02", "hold.v.11", "involve.v.05", "subsume.v.01"),
    ),
    ClassSpec(
        "obscuring_verb",
        "list:obscuring_verbs",
        "verbs of hiding or covering a percept: negated, the object is perceived and the verb is denied",
        ("hide.v.01", "submerge.v.02", "smother.v.03", "muffle.v.02"),
    ),
    ClassSpec(
        "ceasing_verb",
        "cue:ceasing-verb",
        'verbs of ending and disappearing: in a resultative form ("B having vanished") the subject is '
        "no longer heard",
        ("end.v.01", "disappear.v.01", "vanish.v.04", "discontinue.v.01", "close_up.v.04"),
        denies=True,
    ),
    ClassSpec(
        "diminishing_verb",
        "list:diminishing_verbs",
        "causatives of lessening and ending (make smaller, weaken, hold in check, bring to an end, do "
        'away with, kill): in a resultative participle ("A, the B erased", "with B suppressed") how much '
        "of B is left is unknown, so B is unsure, neither asserted nor excluded",
        ("decrease.v.02", "weaken.v.01", "restrain.v.01", "end.v.02", "destroy.v.01", "kill.v.01"),
        denies=True,
    ),
    ClassSpec(
        "appearance_verb",
        "list:appearance_verbs",
        'verbs of appearing: as the complement of a negative implicative ("B failed to show up") the '
        "subject is not there",
        ("appear.v.05", "come_on.v.01", "happen.v.04"),
    ),
    ClassSpec(
        "disclosure_verb",
        "list:perception",
        "verbs of revealing (causatives of perceiving): negated, or the complement of a negative "
        "implicative, their object is excluded",
        ("show.v.04", "uncover.v.01"),
    ),
    ClassSpec(
        "seeking_verb",
        "list:perception",
        'verbs of seeking ("look for"): negated, their object is excluded',
        ("search.v.01",),
    ),
    ClassSpec(
        "giving_verb",
        "list:giving_verbs",
        'verbs of giving: negated with the speaker as recipient ("don\'t give me B"), a request not to '
        "be given B: the object is excluded",
        ("give.v.01", "give.v.03"),
    ),
    ClassSpec(
        "sparing_verb",
        "cue:sparing-verb",
        'verbs of sparing someone an experience, in the double-object construction ("spare me B"): '
        "the object is excluded",
        ("exempt.v.01",),
    ),
    ClassSpec(
        "evidential_noun",
        "list:filler_nouns",
        'nouns of evidence and indication: inside a negation they are filler ("no indication of B" is no B)',
        ("evidence.n.01", "evidence.n.02", "indication.n.01", "sign.n.01"),
    ),
    ClassSpec(
        "desire_noun",
        "list:desire_nouns",
        'nouns of wanting and needing: inside a negation their for-object is excluded ("no need for B")',
        ("desire.n.01", "need.n.01", "need.n.02"),
    ),
    ClassSpec(
        "absence_adjective",
        "cue:absence-adjective",
        "adjectives whose antonym is an adjective of presence or perceptibility (absent, inaudible)",
        ("present.a.02", "existent.a.01", "audible.a.01", "perceptible.a.01", "detected.a.01",
         "noticed.a.01"),
        denies=True,
    ),
    ClassSpec(
        "privative_participle",
        "cue:privative-participle",
        "negatively prefixed participles of co-occurrence (unaccompanied, uninterrupted): the "
        "by/with object is excluded",
        (
            "attach_to.v.01",
            "play_along.v.02",
            "blend.v.03",
            "mix.v.05",
            "mix.v.04",
            "join.v.03",
            "interrupt.v.01",
            "interrupt.v.02",
            "break.v.24",
            "intersperse.v.01",
        ),
        denies=True,
    ),
    ClassSpec(
        "negative_implicative",
        "cue:implicative-verb",
        "prefixed adjectives whose antonym is a positive implicative of negation.toml (unable)",
        denies=True,
    ),
    ClassSpec(
        "impossibility_adjective",
        "cue:impossibility",
        "prefixed adjectives whose antonym is an adjective of possibility (impossible): whatever "
        'happens is possible, so "impossible to V" entails not V; "B impossible to hear" is not heard',
        ("possible.a.01",),
        denies=True,
    ),
    ClassSpec(
        "privative_stem",
        "list:privative_stems",
        "adjectives derived from verbs of containing and perceiving (inclusive, perceptible): under a "
        'negative prefix, written whole or split off ("non-inclusive of B"), their object is excluded',
    ),
    ClassSpec(
        "published", "", "cues of published lexicons that fit sound queries (each entry names where it joins)"
    ),
)

#: Published cue lexicons: (source, lemma, class it joins, what the source lists). Only
#: the cues that fit sound queries; the medical ones (denies, unremarkable, resolved) are left
#: out (docs/negation.md). "rule out" and "negative for" are no medical words: they say that a
#: test excludes its object, which a query may say of a sound.
PUBLISHED: tuple[tuple[str, str, str, str], ...] = (
    ("negex", "no", "cue:negative-determiner", "pre-negation 'no', 'with no'"),
    ("negex", "not", "cue:particle", "pre-negation 'not'"),
    ("negex", "without", "cue:privative-preposition", "pre-negation 'without', 'without sign of'"),
    ("negex", "absence", "cue:absence-noun", "pre-negation 'absence of'"),
    ("negex", "free", "cue:privative-adjective", "pre-negation 'free of', post-negation 'free'"),
    ("negex", "rather than", "cue:privative-preposition", "pre-negation 'rather than'"),
    ("negex", "exclude", "cue:lacking-verb", "pre-negation 'to exclude'"),
    ("negex", "have", "list:perception", "pre-negation 'not have', 'never had'"),
    ("negex", "indication", "list:filler_nouns", "pre-negation 'without indication of', 'no indication of'"),
    ("negex", "evidence", "list:filler_nouns", "pre-negation 'no evidence of', 'without evidence'"),
    ("negex", "sign", "list:filler_nouns", "pre-negation 'no sign of', 'no signs of'"),
    ("negex", "associate", "list:cooccurrence_verbs", "pre-negation 'not associated with'"),
    ("negex", "finding", "list:filler_nouns", "pre-negation 'no findings of', 'no new findings'"),
    ("negex", "suggestion", "list:filler_nouns", "pre-negation 'no suggestion of'"),
    ("negex", "rule out", "cue:lacking-verb", "pre-negation 'rule out', 'rules out', 'ruled out'"),
    ("negex", "negative for", "cue:privative-preposition", "pre-negation 'negative for'"),
    ("negex", "demonstrate", "list:perception", "pre-negation 'not demonstrate'"),
    ("negex", "exhibit", "list:perception", "pre-negation 'not exhibit'"),
    ("negex", "however", "segments:conjunctions", "scope terminator 'however'"),
    ("negex", "nevertheless", "segments:conjunctions", "scope terminator 'nevertheless'"),
    ("conandoyle-neg", "never", "cue:particle", "syntactic cue 'never'"),
    ("conandoyle-neg", "n't", "cue:particle", "syntactic cue 'n't'"),
    ("conandoyle-neg", "nothing", "cue:negative-pronoun", "syntactic cue 'nothing'"),
    ("conandoyle-neg", "nobody", "cue:negative-pronoun", "syntactic cue 'nobody'"),
    ("conandoyle-neg", "none", "cue:negative-pronoun", "syntactic cue 'none'"),
    ("conandoyle-neg", "nor", "cue:neither-nor", "syntactic cue 'neither ... nor'"),
    ("conandoyle-neg", "neither", "cue:neither-nor", "syntactic cue 'neither ... nor'"),
    ("conandoyle-neg", "nowhere", "cue:negative-adverb", "syntactic cue 'nowhere'"),
    ("conandoyle-neg", "except", "cue:except", "lexical cue 'except'"),
    ("conandoyle-neg", "fail", "cue:implicative-verb", "lexical cue 'fail'"),
    ("conandoyle-neg", "refuse", "cue:implicative-verb", "lexical cue 'refuse'"),
    ("conandoyle-neg", "neglect", "cue:implicative-verb", "lexical cue 'neglect'"),
    ("conandoyle-neg", "save", "cue:save-preposition", "lexical cue 'save' (a preposition: 'all save one')"),
    ("conandoyle-neg", "instead of", "cue:privative-preposition", "multi-word cue 'instead of'"),
    ("conandoyle-neg", "unable", "cue:implicative-verb", "affixal cue 'un-' in 'unable'"),
    ("sfu-review", "lack", "cue:lacking-verb", "negation cue 'lack' (verb)"),
    ("sfu-review", "lack", "cue:absence-noun", "negation cue 'lack' (noun)"),
    ("sfu-review", "absent", "cue:absence-adjective", "negation cue 'absent'"),
    ("sfu-review", "missing", "cue:absence-adjective", "negation cue 'missing'"),
    ("sfu-review", "no one", "cue:negative-pronoun", "negation cue 'no one'"),
)

SOURCES: dict[str, str] = {
    "wordnet": "WordNet 3.0 (Princeton University), read with NLTK's WordNetCorpusReader",
    "negex": "W. W. Chapman et al. (2001), 'A simple algorithm for identifying negated findings and "
    "diseases in discharge summaries', J. Biomedical Informatics 34(5); the NegEx trigger list "
    "(negex_triggers.txt: PREN, POST and CONJ terms)",
    "conandoyle-neg": "R. Morante, E. Blanco (2012), '*SEM 2012 shared task: resolving the scope and focus "
    "of negation' (ConanDoyle-neg, R. Morante, W. Daelemans, LREC 2012), cue annotation guidelines "
    "(Morante, Schrauwen, Daelemans 2011)",
    "sfu-review": "N. Konstantinova et al. (2012), 'A review corpus annotated for negation, speculation and "
    "their scope', LREC 2012 (SFU Review corpus with negation), negation cues",
    "negation.toml": "the co-occurrence connectives of grammars/negation.toml",
}
