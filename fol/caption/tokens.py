"""A light, mutable view of a spaCy parse that the repairs may rewrite.

spaCy's own ``Doc`` is read once (through ``Doc.to_array``, much faster than
attribute access token by token) into plain :class:`Tok` records; the repairs then
change POS tags, lemmas, labels and heads here without touching the ``Doc``.

Example:
    >>> toks = [Tok(0, "dogs", "dogs", "dog", "NOUN", "NNS", "nsubj", 1, 0),
    ...         Tok(1, "bark", "bark", "bark", "VERB", "VBP", "ROOT", 1, 5)]
    >>> view = TokenView(toks, "dogs bark")
    >>> [t.text for t in view.children(1)], view.subject(1).text
    (['dogs'], 'dogs')
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Container, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["SUBJECT_DEPS", "Tok", "TokenIndex", "TokenView", "from_doc", "reattach"]

#: Dependency labels of subjects.
SUBJECT_DEPS: frozenset[str] = frozenset({"nsubj", "nsubjpass", "csubj", "csubjpass", "expl"})
_OBJECT_DEPS = frozenset({"pobj", "pcomp"})


@dataclass(slots=True)
class Tok:
    """One token. Mutable on purpose: the repairs rewrite tags, lemmas and heads.

    Attributes:
        i: index in the caption.
        text: the token as written.
        lower: lower-case text.
        lemma: lemma, lower case (spaCy's, possibly repaired).
        pos: Universal POS tag.
        tag: Penn Treebank tag.
        dep: dependency label (``ROOT`` for a sentence root).
        head: index of the head (itself for a root).
        start: character offset in the caption.
        repaired: ids of the repairs that changed this token.
        stop: character offset just past the token in the caption, when characters
            inside it were taken out before parsing (None: ``start + len(text)``).
    """

    i: int
    text: str
    lower: str
    lemma: str
    pos: str
    tag: str
    dep: str
    head: int
    start: int
    repaired: tuple[str, ...] = ()
    stop: int | None = None

    @property
    def end(self) -> int:
        """Character offset just past the token."""
        return self.start + len(self.text) if self.stop is None else self.stop


#: The tokens of a caption by dependency label and by POS, each list in token order.
TokenIndex = tuple[defaultdict[str, list[Tok]], defaultdict[str, list[Tok]]]


class TokenView:
    """The tokens of one caption with child lists, rebuilt after each repair.

    Args:
        tokens: the tokens, in order, indices 0..n-1.
        text: the caption text (offsets refer to it).
    """

    __slots__ = ("_children", "_index", "text", "tokens")

    def __init__(self, tokens: list[Tok], text: str) -> None:
        self.tokens = tokens
        self.text = text
        self._children: list[list[Tok]] = []
        self._index: TokenIndex | None = None
        self.rebuild()

    @classmethod
    def built(
        cls, tokens: list[Tok], text: str, children: list[list[Tok]], index: TokenIndex | None = None
    ) -> TokenView:
        """A view whose child lists (and index) the caller made while reading the tokens.

        Args:
            tokens: the tokens, in order, indices 0..n-1.
            text: the caption text.
            children: each token's children in token order, as :meth:`rebuild` makes them.
            index: the tokens by label and by POS, each list in token order (see
                :meth:`take_index`), or None.
        """
        view = object.__new__(cls)
        view.tokens = tokens
        view.text = text
        view._children = children
        view._index = index
        return view

    def take_index(self) -> TokenIndex | None:
        """The tokens by dependency label and by POS as the view was made, once.

        The tokens are mutable, so the index holds only until something changes them:
        the first caller (the repairs, before they change anything) takes it, and later
        calls get None.

        Example:
            >>> dogs = Tok(0, "dogs", "dogs", "dog", "NOUN", "NNS", "nsubj", 1, 0)
            >>> bark = Tok(1, "bark", "bark", "bark", "VERB", "VBP", "ROOT", 1, 5)
            >>> index = ({"nsubj": [dogs], "ROOT": [bark]}, {"NOUN": [dogs], "VERB": [bark]})
            >>> view = TokenView.built([dogs, bark], "dogs bark", [[], [dogs]], index)
            >>> [t.text for t in view.take_index()[0]["nsubj"]], view.take_index()
            (['dogs'], None)
        """
        index, self._index = self._index, None
        return index

    def __len__(self) -> int:
        return len(self.tokens)

    def __iter__(self) -> Iterator[Tok]:
        return iter(self.tokens)

    def __getitem__(self, index: int) -> Tok:
        return self.tokens[index]

    def rebuild(self) -> None:
        """Recompute the child lists (call after changing heads)."""
        children: list[list[Tok]] = [[] for _ in self.tokens]
        for tok in self.tokens:
            if tok.head != tok.i:
                children[tok.head].append(tok)
        self._children = children

    def children(self, i: int, deps: Container[str] | None = None) -> list[Tok]:
        """Children of token ``i`` in order, optionally only those with a label in ``deps``."""
        if deps is None:
            return list(self._children[i])
        return [t for t in self._children[i] if t.dep in deps]

    def has_child(self, i: int, deps: Container[str]) -> bool:
        """Whether token ``i`` has a child with a label in ``deps``."""
        # a loop, not any(): asked some 3,000 times per 600 captions, a generator each time
        for child in self._children[i]:  # noqa: SIM110
            if child.dep in deps:
                return True
        return False

    def head(self, i: int) -> Tok:
        """The head of token ``i`` (itself for a root)."""
        return self.tokens[self.tokens[i].head]

    def subject(self, i: int) -> Tok | None:
        """The first subject child of token ``i``, if any."""
        for child in self._children[i]:
            if child.dep in SUBJECT_DEPS:
                return child
        return None

    def prep_object(self, i: int) -> Tok | None:
        """The object of preposition ``i``: its pobj/pcomp child."""
        for child in self._children[i]:
            if child.dep in _OBJECT_DEPS:
                return child
        return None

    def conjuncts(self, i: int) -> list[Tok]:
        """Tokens coordinated after token ``i`` (its conj children, recursively)."""
        found: list[Tok] = []
        stack = [c for c in self._children[i] if c.dep == "conj"]
        while stack:
            tok = stack.pop(0)
            found.append(tok)
            stack.extend(c for c in self._children[tok.i] if c.dep == "conj")
        return found

    def subtree(self, i: int) -> list[int]:
        """Indices of token ``i`` and all its descendants, sorted."""
        seen = [i]
        stack = [c.i for c in self._children[i]]
        while stack:
            j = stack.pop()
            seen.append(j)
            stack.extend(c.i for c in self._children[j])
        return sorted(seen)

    def ancestors(self, i: int) -> Iterator[Tok]:
        """The heads above token ``i``, nearest first (stops at a root, guards cycles)."""
        seen = {i}
        tok = self.tokens[i]
        while tok.head != tok.i and tok.head not in seen:
            seen.add(tok.head)
            tok = self.tokens[tok.head]
            yield tok


# spaCy's string hashes are a function of the string (the same in every vocabulary), so
# one table serves every parser: six hashes of a token -> its six strings.
_ROWS: dict[tuple[int, ...], tuple[str, str, str, str, str, str]] = {}
_MAX_ROWS = 1 << 17
#: The most hash -> string entries a caller's ``strings`` table keeps (emptied when full): each
#: unseen word adds its form and lemma, about 0.15 kB an entry, so at most about 20 MB.
_MAX_STRINGS = 1 << 17
# spaCy's attribute ids of the columns from_doc reads (set on its first call).
_ATTRS: list[int] | None = None


def _row(key: tuple[int, ...], name: Callable[[int], str]) -> tuple[str, str, str, str, str, str]:
    orth, lemma, pos, tag, dep = key
    text = name(orth)
    lower = text.lower()  # spaCy's LOWER is str.lower() of the text: not read from the Doc
    return (
        text,
        lower,
        name(lemma).lower() if lemma else lower,
        name(pos) if pos else "X",
        name(tag) if tag else "XX",
        name(dep) if dep else "dep",
    )


def from_doc(
    doc: Any, strings: dict[int, str], text: str | None = None, offsets: Sequence[int] | None = None,
) -> TokenView:
    """Read a spaCy ``Doc`` into a :class:`TokenView`.

    Args:
        doc: a parsed spaCy Doc.
        strings: a cache of spaCy string hashes, shared across calls (it grows by the
            distinct strings seen: tags, labels, words, lemmas; emptied at ``_MAX_STRINGS``).
        text: ``doc.text`` if the caller has it (spaCy rebuilds it on every access).
        offsets: for each character of the parsed text, its offset in the caption as
            given (``Prepared.offsets`` of :func:`~fortekit.fol.caption.pipeline.prepare_caption`,
            when input hygiene took characters out); tokens then carry those offsets.

    Returns:
        The view.
    """
    global _ATTRS
    if _ATTRS is None:  # spaCy is imported only when a Doc is read (once)
        from spacy.attrs import DEP, HEAD, IDX, LEMMA, ORTH, POS, TAG

        _ATTRS = [ORTH, LEMMA, POS, TAG, DEP, HEAD, IDX]
    store = doc.vocab.strings
    get = strings.get

    def name(key: int) -> str:
        value = get(key)
        if value is None:
            value = store[key]
            if len(strings) >= _MAX_STRINGS:  # a long stream of new words: start again
                strings.clear()
            strings[key] = value
        return value

    columns = doc.to_array(_ATTRS).T.tolist()
    text = doc.text if text is None else text
    if not columns:
        return TokenView([], text)
    orth, lemma, pos, tag, dep, head, idx = columns
    # One lookup per token: its five string hashes, read as a row, name a shared tuple
    # of strings (the table grows by the distinct rows seen: words with their tags).
    rows = _ROWS
    if len(rows) >= _MAX_ROWS:  # a long stream of new words: start again
        rows.clear()
    tokens: list[Tok] = []
    append, new = tokens.append, object.__new__
    # TokenView.rebuild and the repairs' index, made in this loop rather than two more
    children: list[list[Tok]] = [[] for _ in orth]
    by_dep: defaultdict[str, list[Tok]] = defaultdict(list)
    by_pos: defaultdict[str, list[Tok]] = defaultdict(list)
    for i, key in enumerate(zip(orth, lemma, pos, tag, dep, strict=True)):
        row = rows.get(key)
        if row is None:
            row = rows[key] = _row(key, name)
        # HEAD is stored relative and unsigned: wrap it back to a signed offset.
        offset = head[i]
        if offset >= 1 << 63:
            offset -= 1 << 64
        # Tok(...) with its fields set here: one call fewer for each of some 7,500
        # tokens per 600 captions (docs/parser.md, "Speed")
        tok = new(Tok)
        tok.text, tok.lower, tok.lemma, tok.pos, tok.tag, label = row
        tok.i = i
        if offset:
            tok.dep = label
            children[i + offset].append(tok)
        else:
            tok.dep = label = "ROOT"
        by_dep[label].append(tok)
        by_pos[row[3]].append(tok)
        tok.head = i + offset
        tok.start = idx[i]
        tok.repaired = ()
        tok.stop = None
        append(tok)
    if offsets is not None:  # back to the caption as given
        for tok in tokens:
            if tok.text:  # spaCy makes no empty token; guarded all the same
                tok.start, tok.stop = offsets[tok.start], offsets[tok.start + len(tok.text) - 1] + 1
    return TokenView.built(tokens, text, children, (by_dep, by_pos))


def reattach(view: TokenView, child: int, head: int, dep: str) -> None:
    """Hang token ``child`` on ``head`` with label ``dep``, keeping the tree a tree.

    Where ``child`` is an ancestor of ``head`` ("there being no engine/attr running/ROOT":
    the engine's participle heads the caption), ``head`` first takes ``child``'s place.

    Example:
        >>> view = TokenView([Tok(0, "engine", "engine", "engine", "NOUN", "NN", "nsubj", 1, 0),
        ...                   Tok(1, "running", "running", "run", "VERB", "VBG", "ROOT", 1, 7)],
        ...                  "engine running")
        >>> reattach(view, 1, 0, "acl")
        >>> [(t.dep, t.head) for t in view]
        [('ROOT', 0), ('acl', 0)]
    """
    tokens = view.tokens
    if child == head:
        return
    if child in {a.i for a in view.ancestors(head)}:
        above = tokens[child]
        moved = tokens[head]
        if above.head == above.i:
            moved.head, moved.dep = moved.i, "ROOT"
        else:
            moved.head, moved.dep = above.head, above.dep
    tokens[child].head, tokens[child].dep = head, dep
    view.rebuild()
