"""WordNet 3.0 through NLTK's reader, found offline on a fresh machine.

Where WordNet comes from, in this order:

1. a directory passed as ``path``;
2. the ``FORTEKIT_WORDNET`` environment variable (a WordNet dict directory);
3. NLTK's data path (``nltk.download('wordnet')``, ``NLTK_DATA``, ``~/nltk_data``),
   directory or zip;
4. ``WNSEARCHDIR`` or ``$WNHOME/dict`` (WordNet's own variables);
5. system directories: Debian's ``wordnet-base`` (``/usr/share/wordnet``) and
   WordNet's default ``/usr/local/WordNet-3.0/dict``.

Debian's files lack NLTK's ``lexnames`` file, so the reader falls back to the copy
shipped as ``vocab/lexnames.tsv`` (the 45 lexicographer files of WordNet 3.0). NLTK
3.10 only opens files under its allowed data roots, so a directory found outside
them is added to ``nltk.data.path`` (read-only use). Nothing is downloaded.

Example:
    >>> from fortekit.vocab.wordnet import load_wordnet
    >>> wn = load_wordnet()
    >>> wn.version, wn.morphy("barks", "VERB"), wn.lexnames("dog", "NOUN")[0]
    ('3.0', ('bark',), 'noun.animal')
"""

from __future__ import annotations

import io
import os
import re
import shutil
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, BinaryIO

from fortekit.errors import Errors, WordNetMissingError

__all__ = [
    "OPTIONAL_FILES",
    "REQUIRED_FILES",
    "SYSTEM_DIRS",
    "WordNet",
    "WordNetLocation",
    "export_nltk_data",
    "find_wordnet",
    "load_wordnet",
]

#: Files a WordNet 3.0 dict directory must hold for NLTK's reader.
REQUIRED_FILES: tuple[str, ...] = tuple(
    f"{kind}.{pos}" for pos in ("noun", "verb", "adj", "adv") for kind in ("index", "data")
) + tuple(f"{pos}.exc" for pos in ("noun", "verb", "adj", "adv"))
#: Files NLTK uses when present (sense counts, sense keys, lexicographer names).
OPTIONAL_FILES: tuple[str, ...] = ("lexnames", "cntlist.rev", "index.sense")
#: Directories searched last: Debian/Ubuntu ``wordnet-base`` and WordNet's own default.
SYSTEM_DIRS: tuple[str, ...] = (
    "/usr/share/wordnet",
    "/usr/local/share/wordnet",
    "/usr/local/WordNet-3.0/dict",
)

_WN_POS = {"NOUN": "n", "PROPN": "n", "VERB": "v", "AUX": "v", "ADJ": "a", "ADV": "r"}
_WN_POS.update({letter: letter for letter in "nvar"})
_WN_POS["s"] = "a"
_FILE_OF_POS = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
#: NLTK's ``WordNetCorpusReader.MORPHOLOGICAL_SUBSTITUTIONS`` (WordNet's morphy rules), per POS
#: letter; tests/vocab/test_vocab_wordnet.py checks they are NLTK's.
_MORPHY_SUBSTITUTIONS: dict[str, tuple[tuple[str, str], ...]] = {
    "n": (("s", ""), ("ses", "s"), ("ves", "f"), ("xes", "x"), ("zes", "z"), ("ches", "ch"),
          ("shes", "sh"), ("men", "man"), ("ies", "y")),
    "v": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"),
          ("ing", "")),
    "a": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "r": (),
}


@dataclass(frozen=True, slots=True)
class WordNetLocation:
    """Where WordNet was found.

    Attributes:
        root: the directory (or NLTK path pointer, e.g. inside ``wordnet.zip``).
        source: how it was found: ``argument``, ``FORTEKIT_WORDNET``, ``nltk_data``,
            ``WNSEARCHDIR``, ``WNHOME`` or ``system``.
    """

    root: str
    source: str


def _missing_files(directory: Path) -> list[str]:
    return [name for name in REQUIRED_FILES if not (directory / name).is_file()]


def _candidates(path: str | os.PathLike[str] | None, nltk_data: bool) -> list[tuple[str, str | None]]:
    """(source, directory) pairs in search order; None stands for NLTK's data path."""
    found: list[tuple[str, str | None]] = []
    if path is not None:
        return [("argument", os.fspath(path))]
    if os.environ.get("FORTEKIT_WORDNET"):
        found.append(("FORTEKIT_WORDNET", os.environ["FORTEKIT_WORDNET"]))
    if nltk_data:
        found.append(("nltk_data", None))
    if os.environ.get("WNSEARCHDIR"):
        found.append(("WNSEARCHDIR", os.environ["WNSEARCHDIR"]))
    if os.environ.get("WNHOME"):
        found.append(("WNHOME", os.path.join(os.environ["WNHOME"], "dict")))
    found.extend(("system", directory) for directory in SYSTEM_DIRS)
    return found


def _nltk_data_dirs_absent() -> bool:
    """True when NLTK's data path, as ``nltk.data`` would build it, has no directory at all.

    Then ``nltk.data.find`` cannot find WordNet, and importing NLTK (about 1.5 s: it
    imports scipy.stats and scikit-learn) only to be told so is skipped. Once NLTK is
    imported (its path may have been changed) or on Windows, NLTK is always asked.
    """
    import sys

    if "nltk" in sys.modules or sys.platform.startswith(("win", "cygwin")):
        return False
    dirs = [os.path.expanduser(d) for d in os.environ.get("NLTK_DATA", "").split(os.pathsep) if d]
    dirs.append(os.path.expanduser("~/nltk_data"))
    dirs += [os.path.join(sys.prefix, *parts, "nltk_data") for parts in ((), ("share",), ("lib",))]
    dirs += [os.path.join(root, "nltk_data") for root in ("/usr/share", "/usr/local/share", "/usr/lib",
                                                            "/usr/local/lib")]
    return not any(os.path.exists(d) for d in dirs)


def _nltk_data_wordnet() -> str | None:
    if _nltk_data_dirs_absent():
        return None
    try:
        import nltk.data
    except ImportError:  # pragma: no cover - nltk is a dependency
        return None
    try:
        pointer = nltk.data.find("corpora/wordnet")
    except (LookupError, OSError, ValueError):
        return None
    return str(getattr(pointer, "path", pointer))


def find_wordnet(path: str | os.PathLike[str] | None = None, *, nltk_data: bool = True) -> WordNetLocation:
    """Locate WordNet 3.0 without loading it.

    Args:
        path: a WordNet dict directory to use instead of searching.
        nltk_data: whether to look on NLTK's data path too.

    Returns:
        Where it is and how it was found.

    Raises:
        WordNetMissingError: if ``path`` is not a WordNet directory (E101), or if no
            search location has WordNet (E100, which says how to install it).

    Example:
        >>> find_wordnet().source in {"FORTEKIT_WORDNET", "nltk_data", "system", "WNSEARCHDIR", "WNHOME"}
        True
    """
    searched: list[str] = []
    for source, directory in _candidates(path, nltk_data):
        if directory is None:
            pointer = _nltk_data_wordnet()
            searched.append("NLTK data path (corpora/wordnet)")
            if pointer is not None:
                return WordNetLocation(pointer, source)
            continue
        searched.append(directory)
        candidate = Path(directory).expanduser()
        missing = _missing_files(candidate) if candidate.is_dir() else list(REQUIRED_FILES)
        if not missing:
            return WordNetLocation(str(candidate.resolve()), source)
        if source in ("argument", "FORTEKIT_WORDNET") and candidate.is_dir():
            raise WordNetMissingError(Errors.E101.format(path=candidate, missing=", ".join(missing)))
    raise WordNetMissingError(Errors.E100.format(searched="; ".join(searched)))


def _lexnames_text() -> str:
    return resources.files("fortekit.vocab").joinpath("lexnames.tsv").read_text(encoding="utf-8")


@cache
def _reader_class() -> type[Any]:
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class _Reader(WordNetCorpusReader):  # type: ignore[misc]
        """NLTK's reader, tolerant of a dict directory without ``lexnames``."""

        def open(self, file: str) -> Any:
            if file == "lexnames":
                try:
                    return super().open(file)
                except (OSError, LookupError, ValueError):
                    return io.StringIO(_lexnames_text())
            return super().open(file)

        def map_wn(self, version: str = "wordnet") -> None:
            # NLTK >= 3.10 maps sense keys to a corpus named 'wordnet' for the
            # multilingual (OMW) functions, which fortekit does not use; that needs
            # index.sense, which Debian's wordnet-base lacks.
            return None

    return _Reader


def _allow_root(root: str) -> None:
    """Let NLTK >= 3.10 (whose reader only opens files under its data roots) read ``root``."""
    import nltk.data

    if root not in nltk.data.path:
        nltk.data.path.append(root)


class WordNet:
    """A typed facade over NLTK's WordNet reader, with the calls fortekit needs.

    Build it with :func:`load_wordnet`. POS arguments take Universal tags
    (``NOUN``, ``VERB``, ``ADJ``, ``ADV``) or WordNet letters (``n v a r``).

    NLTK's reader is opened on first need (a synset question, :attr:`reader`,
    :attr:`version`): :meth:`morphy`, the question a parse asks most, reads a WordNet
    dict directory's index and exception files itself, one POS at a time, and answers as
    NLTK's ``_morphy`` does (docs/cold_start.md), so a search that only lemmatises never
    imports NLTK (about 1.5 s) nor builds its reader (about 2 s).

    Args:
        reader: NLTK's reader, or None to open it with ``opener`` when first needed.
        location: where the data was found.
        opener: makes the reader (required when ``reader`` is None).

    Attributes:
        reader: the NLTK ``WordNetCorpusReader`` (for anything else).
        location: where the data was found.
        version: the WordNet version string read from the data, e.g. ``'3.0'``.
    """

    __slots__ = ("_lemmas", "_lexname_list", "_opener", "_reader", "_version", "location")

    def __init__(self, reader: Any, location: WordNetLocation, *, opener: Any = None) -> None:
        self._reader = reader
        self._opener = opener
        self._version: str | None = None
        self.location = location
        #: per WordNet POS letter: (lemma -> the rest of its index line, exceptions) read
        #: from a dict directory, for morphy, sense counts and lexicographer files
        self._lemmas: dict[str, tuple[dict[str, str], dict[str, list[str]]]] = {}
        self._lexname_list: list[str] | None = None

    @property
    def reader(self) -> Any:
        """The NLTK ``WordNetCorpusReader``, opened on first use."""
        if self._reader is None:
            self._reader = self._opener()
        return self._reader

    @property
    def version(self) -> str:
        """The WordNet version string read from the data, e.g. ``'3.0'``."""
        if self._version is None:
            self._version = str(self.reader.get_version())
        return self._version

    def __repr__(self) -> str:
        return f"<WordNet {self.version} from {self.location.root} ({self.location.source})>"

    def _morphy_tables(self, wn_pos: str) -> tuple[dict[str, str], dict[str, list[str]]] | None:
        """The lemmas (each with the rest of its index line) and exceptions of one POS as
        NLTK's reader holds them; None for a WordNet that is not a directory (a zip)."""
        tables = self._lemmas.get(wn_pos)
        if tables is None:
            if not os.path.isdir(self.location.root):
                return None
            suffix = _FILE_OF_POS[wn_pos]
            lemmas: dict[str, str] = {}
            with open(os.path.join(self.location.root, f"index.{suffix}"), encoding="utf8") as index:
                for line in index:
                    if not line.startswith(" "):
                        fields = line.split(None, 2)
                        if len(fields) == 3 and fields[1] == wn_pos:
                            lemmas[fields[0]] = fields[2]
            exceptions: dict[str, list[str]] = {}
            with open(os.path.join(self.location.root, f"{suffix}.exc"), encoding="utf8") as exc:
                for line in exc:
                    terms = line.split()
                    if terms:
                        exceptions[terms[0]] = terms[1:]
            tables = self._lemmas[wn_pos] = (lemmas, exceptions)
        return tables

    def _fast_morphy(self, key: str, wn_pos: str) -> tuple[str, ...] | None:
        """NLTK's ``_morphy(key, wn_pos)`` from the files; None where they cannot be read here."""
        tables = self._morphy_tables(wn_pos)
        if tables is None:
            return None
        lemmas, exceptions = tables
        if key in exceptions:  # NLTK's _morphy: the exception list, else the rules applied once
            forms = exceptions[key]
        else:
            rules = _MORPHY_SUBSTITUTIONS[wn_pos]
            forms = [key[: -len(old)] + new for old, new in rules if key.endswith(old)]
        return tuple(dict.fromkeys(each for each in [key, *forms] if each in lemmas))

    def _synset_offsets(self, key: str, wn_pos: str) -> list[int] | None:
        """The data-file offsets of NLTK's ``synsets(key, wn_pos)``, in its order; None for a zip."""
        forms = self._fast_morphy(key, wn_pos)
        if forms is None:
            return None
        lemmas = self._lemmas[wn_pos][0]
        offsets: list[int] = []
        for form in forms:
            tokens = lemmas[form].split()  # synset_cnt p_cnt [ptr]... sense_cnt tagsense_cnt offsets
            offsets += [int(token) for token in tokens[len(tokens) - int(tokens[0]):]]
        return offsets

    def _lexname_at(self, wn_pos: str, offset: int) -> str:
        """The lexicographer file of the synset at ``offset`` of ``data.<pos>`` (its 2nd field)."""
        if self._lexname_list is None:
            own = os.path.join(self.location.root, "lexnames")
            if os.path.isfile(own):
                with open(own, encoding="utf8") as handle:
                    text = handle.read()
            else:
                text = _lexnames_text()
            self._lexname_list = [line.split()[1] for line in text.splitlines() if line.strip()]
        with open(os.path.join(self.location.root, f"data.{_FILE_OF_POS[wn_pos]}"), "rb") as data:
            return self._lexname_list[int(_data_tokens(data, offset)[1])]

    def morphy(self, form: str, pos: str) -> tuple[str, ...]:
        """WordNet base forms of ``form`` in one POS (NLTK's morphy, all readings).

        Example:
            >>> load_wordnet().morphy("geese", "NOUN"), load_wordnet().morphy("xqzv", "n")
            (('goose',), ())
        """
        wn_pos = _WN_POS.get(pos)
        if wn_pos is None or not form:
            return ()
        key = form.lower().replace(" ", "_")
        found = self._fast_morphy(key, wn_pos)
        return found if found is not None else tuple(self.reader._morphy(key, wn_pos))

    def has(self, lemma: str, pos: str) -> bool:
        """True if ``lemma`` itself is a WordNet lemma of that POS.

        Example:
            >>> load_wordnet().has("chirp", "VERB"), load_wordnet().has("chirping", "VERB")
            (True, False)
        """
        key = lemma.lower().replace(" ", "_")
        return key in self.morphy(key, pos)

    def knows(self, form: str) -> bool:
        """True if ``form`` is, or inflects, a WordNet lemma of any POS.

        Example:
            >>> load_wordnet().knows("chirped"), load_wordnet().knows("chirpped")
            (True, False)
        """
        return any(self.morphy(form, pos) for pos in "nvar")

    def lexnames(self, lemma: str, pos: str, limit: int = 3) -> tuple[str, ...]:
        """Lexicographer files of the first ``limit`` senses (most frequent first).

        Example:
            >>> load_wordnet().lexnames("thunder", "NOUN", 1)
            ('noun.event',)
        """
        wn_pos = _WN_POS.get(pos)
        if wn_pos is None:
            return ()
        key = lemma.lower().replace(" ", "_")
        offsets = self._synset_offsets(key, wn_pos)
        if offsets is not None:
            return tuple(self._lexname_at(wn_pos, offset) for offset in offsets[:limit])
        synsets = self.reader.synsets(key, wn_pos)[:limit]
        return tuple(str(s.lexname()) for s in synsets)

    def sense_count(self, lemma: str, pos: str) -> int:
        """How many senses NLTK's ``synsets(lemma, pos)`` lists (those of every base form).

        Example:
            >>> load_wordnet().sense_count("riding", "VERB"), load_wordnet().sense_count("xqzv", "n")
            (15, 0)
        """
        wn_pos = _WN_POS.get(pos)
        if wn_pos is None:
            return 0
        key = lemma.lower().replace(" ", "_")
        offsets = self._synset_offsets(key, wn_pos)
        return len(offsets) if offsets is not None else len(self.reader.synsets(key, wn_pos))

    def first_sense_frames(self, verb: str) -> tuple[int, ...]:
        """The verb frames of the most frequent sense of ``verb`` (NLTK's ``frame_ids()`` of its
        first synset: the frames of the whole synset); () for a word with no verb sense.

        Example:
            >>> load_wordnet().first_sense_frames("bark"), load_wordnet().first_sense_frames("xqzv")
            ((2, 26), ())
        """
        key = verb.lower().replace(" ", "_")
        offsets = self._synset_offsets(key, "v")
        if offsets is None:
            synsets = self.reader.synsets(key, "v")[:1]
            return tuple(int(frame) for frame in synsets[0].frame_ids()) if synsets else ()
        if not offsets:
            return ()
        with open(os.path.join(self.location.root, "data.verb"), "rb") as data:
            # offset lex_filenum ss_type w_cnt [word lex_id]... p_cnt [ptr offset pos st]... f_cnt [+ f w]...
            tokens = _data_tokens(data, offsets[0])
        at = 4 + 2 * int(tokens[3], 16)
        at += 1 + 4 * int(tokens[at])
        frames: list[int] = []
        if at < len(tokens):
            for start in range(at + 1, at + 1 + 3 * int(tokens[at]), 3):
                if int(tokens[start + 2], 16) == 0:
                    frames.append(int(tokens[start + 1]))
        return tuple(frames)

    def antonyms(self, lemma: str, pos: str) -> frozenset[str]:
        """Direct antonyms of ``lemma`` over all its senses, as lemma names.

        Example:
            >>> sorted(load_wordnet().antonyms("loud", "ADJ")), sorted(load_wordnet().antonyms("far", "ADJ"))
            (['soft'], ['near'])
        """
        wn_pos = _WN_POS.get(pos)
        if wn_pos is None:
            return frozenset()
        name = lemma.lower().replace(" ", "_")
        found: set[str] = set()
        for synset in self.reader.synsets(name, wn_pos):
            for item in synset.lemmas():
                if item.name().lower() == name:
                    found.update(str(a.name()).replace("_", " ").lower() for a in item.antonyms())
        return frozenset(found)

    def pertainym_bases(self, adverb: str) -> tuple[str, ...]:
        """Adjectives an adverb derives from (``loudly`` -> ``loud``).

        Example:
            >>> load_wordnet().pertainym_bases("continuously")
            ('continuous',)
        """
        name = adverb.lower().replace(" ", "_")
        offsets = self._synset_offsets(name, "r")
        if offsets is not None:  # from the files: NLTK's reader costs seconds to open
            return self._pertainyms_from_files(name, offsets)
        bases: dict[str, None] = {}
        for synset in self.reader.synsets(name, "r"):
            for item in synset.lemmas():
                if item.name().lower() == name:
                    for base in item.pertainyms():
                        bases.setdefault(str(base.name()).replace("_", " ").lower(), None)
        return tuple(bases)

    def _pertainyms_from_files(self, name: str, offsets: Sequence[int]) -> tuple[str, ...]:
        """:meth:`pertainym_bases` read from ``data.adv`` and ``data.adj``, in NLTK's order."""
        bases: dict[str, None] = {}
        with open(os.path.join(self.location.root, "data.adv"), "rb") as adverbs, \
                open(os.path.join(self.location.root, "data.adj"), "rb") as adjectives:
            for offset in offsets:
                words, pointers = _data_line(adverbs, offset)
                for source, word in enumerate(words, start=1):
                    if word.lower() != name:
                        continue
                    # a lexical pointer's source/target field is two hex word numbers; "\" is
                    # an adverb's "derived from adjective"
                    for symbol, target_offset, _, field in pointers:
                        if symbol == "\\" and int(field[:2], 16) == source:
                            target = _data_line(adjectives, target_offset)[0][int(field[2:], 16) - 1]
                            bases.setdefault(target.replace("_", " ").lower(), None)
        return tuple(bases)


def _data_tokens(data: BinaryIO, offset: int) -> list[str]:
    """The fields of the synset line at ``offset`` of a WordNet data file, before its gloss (``|``)."""
    data.seek(offset)
    return data.readline().decode("utf8").split("|")[0].split()


def _data_line(data: BinaryIO, offset: int) -> tuple[list[str], list[tuple[str, int, str, str]]]:
    """The words (syntactic markers such as ``(p)`` cut, as NLTK does) and the pointers
    (symbol, offset, part of speech, source/target) of the synset at ``offset`` of a data file.

    The line is ``offset lex_filenum ss_type w_cnt [word lex_id]... p_cnt [ptr offset pos st]...``
    (WordNet's wndb(5WN)); ``w_cnt`` is hexadecimal, ``p_cnt`` decimal.
    """
    tokens = _data_tokens(data, offset)
    count = int(tokens[3], 16)
    words = [re.sub(r"\(.*\)$", "", word) for word in tokens[4: 4 + 2 * count: 2]]
    at = 4 + 2 * count
    pointers = [
        (tokens[start], int(tokens[start + 1]), tokens[start + 2], tokens[start + 3])
        for start in range(at + 1, at + 1 + 4 * int(tokens[at]), 4)
    ]
    return words, pointers


@cache
def _load(root: str, source: str) -> WordNet:
    return WordNet(None, WordNetLocation(root, source), opener=lambda: _open_reader(root, source))


def _open_reader(root: str, source: str) -> Any:
    """NLTK's WordNet reader over ``root`` (imports NLTK)."""
    from nltk.data import FileSystemPathPointer

    if source != "nltk_data":
        _allow_root(root)
    pointer: Any = root
    if source != "nltk_data" or os.path.isdir(root):
        pointer = FileSystemPathPointer(root)
    else:
        import nltk.data

        pointer = nltk.data.find("corpora/wordnet")
    with warnings.catch_warnings():
        # "The multilingual functions are not available with this Wordnet version"
        warnings.simplefilter("ignore", UserWarning)
        return _reader_class()(pointer, None)


def load_wordnet(path: str | os.PathLike[str] | None = None) -> WordNet:
    """Find and open WordNet 3.0 (once per location and process).

    Args:
        path: a WordNet dict directory; by default the search order of this module.

    Returns:
        The opened WordNet.

    Raises:
        WordNetMissingError: if WordNet cannot be found (E100) or ``path`` is not a
            WordNet directory (E101).

    Example:
        >>> load_wordnet() is load_wordnet()
        True
    """
    location = find_wordnet(path)
    return _load(location.root, location.source)


def export_nltk_data(target: str | os.PathLike[str], path: str | os.PathLike[str] | None = None) -> Path:
    """Lay out WordNet as an NLTK data directory (``TARGET/corpora/wordnet``).

    The files are copied (about 30 MB; NLTK 3.10 refuses symbolic links out of its
    data roots and files with several hard links), and ``lexnames`` is added from
    fortekit when the source lacks it. Afterwards
    ``NLTK_DATA=TARGET`` (or ``~/nltk_data`` as TARGET) lets any NLTK code find
    WordNet. NLTK >= 3.10's own ``nltk.corpus.wordnet`` also needs ``index.sense``
    (Debian: ``apt-get install wordnet-sense-index``); fortekit's reader does not.

    Args:
        target: the NLTK data directory to fill (created if needed).
        path: the WordNet dict directory to export; by default the first one found
            outside NLTK's data path.

    Returns:
        The corpus directory written, ``TARGET/corpora/wordnet``.

    Raises:
        WordNetMissingError: if no WordNet directory can be found.

    Example:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as target:
        ...     sorted(p.name for p in export_nltk_data(target).iterdir())[:3]
        ['adj.exc', 'adv.exc', 'cntlist.rev']
    """
    source = Path(find_wordnet(path, nltk_data=False).root)
    corpus = Path(target).expanduser() / "corpora" / "wordnet"
    corpus.mkdir(parents=True, exist_ok=True)
    for name in REQUIRED_FILES + OPTIONAL_FILES:
        origin = source / name
        destination = corpus / name
        if not origin.is_file() or destination.exists():
            continue
        # Copied, never linked: NLTK 3.10 refuses symbolic links that leave its data
        # roots, and a hard link raises st_nlink, after which it refuses the *source*
        # file too ("multiply-linked file"), breaking /usr/share/wordnet for everyone.
        shutil.copyfile(origin, destination)
    if not (corpus / "lexnames").exists():
        from fortekit.safe_write import atomic_write_text

        atomic_write_text(corpus / "lexnames", _lexnames_text())
    return corpus
