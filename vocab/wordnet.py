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
import shutil
import warnings
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

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


def _nltk_data_wordnet() -> str | None:
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

    Attributes:
        reader: the NLTK ``WordNetCorpusReader`` (for anything else).
        location: where the data was found.
        version: the WordNet version string read from the data, e.g. ``'3.0'``.
    """

    __slots__ = ("location", "reader", "version")

    def __init__(self, reader: Any, location: WordNetLocation) -> None:
        self.reader = reader
        self.location = location
        self.version = str(reader.get_version())

    def __repr__(self) -> str:
        return f"<WordNet {self.version} from {self.location.root} ({self.location.source})>"

    def morphy(self, form: str, pos: str) -> tuple[str, ...]:
        """WordNet base forms of ``form`` in one POS (NLTK's morphy, all readings).

        Example:
            >>> load_wordnet().morphy("geese", "NOUN"), load_wordnet().morphy("xqzv", "n")
            (('goose',), ())
        """
        wn_pos = _WN_POS.get(pos)
        if wn_pos is None or not form:
            return ()
        return tuple(self.reader._morphy(form.lower().replace(" ", "_"), wn_pos))

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
        synsets = self.reader.synsets(lemma.lower().replace(" ", "_"), wn_pos)[:limit]
        return tuple(str(s.lexname()) for s in synsets)

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
        bases: dict[str, None] = {}
        for synset in self.reader.synsets(name, "r"):
            for item in synset.lemmas():
                if item.name().lower() == name:
                    for base in item.pertainyms():
                        bases.setdefault(str(base.name()).replace("_", " ").lower(), None)
        return tuple(bases)


@cache
def _load(root: str, source: str) -> WordNet:
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
        reader = _reader_class()(pointer, None)
    return WordNet(reader, WordNetLocation(root, source))


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
