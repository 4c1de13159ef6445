"""The fallback rule: a caption no arc rule gets a predicate from still yields one.

The paper: "If |Pred(phi)| = 0 after both passes, the fallback rule promotes the root
verb of the dependency tree and its direct object (dobj) into a single unary
predicate ... If the root verb has no dobj arc, the nsubj dependent is used
instead." So ``RootEvent(x)`` with ``RootEvent = lemma(root verb) + lemma(dobj)``
(``MakeNoise``), else ``+ lemma(nsubj)``, else the root verb's lemma alone.

fortekit extends it for input with no word at all, so that |Pred| >= 1 always holds:
a root without letters or digits gives way to the first token that has some; a text
of symbols only is named by the Unicode names of its symbols (``🐦`` -> ``Bird``);
a text with nothing nameable (``???``) gets ``Sound(x)``: every caption describes
a sound.

Example:
    >>> from fortekit.fol.caption.tokens import Tok, TokenView
    >>> view = TokenView([Tok(0, "makes", "makes", "make", "VERB", "VBZ", "ROOT", 0, 0),
    ...                   Tok(1, "noise", "noise", "noise", "NOUN", "NN", "dobj", 0, 6)], "makes noise")
    >>> fallback_lemma(view)
    ('make noise', (0, 1))
    >>> fallback_lemma(TokenView([Tok(0, "🐦", "🐦", "🐦", "NUM", "CD", "ROOT", 0, 0)], "🐦"))
    ('bird', (0,))
"""

from __future__ import annotations

import re
import unicodedata

from fortekit.fol.caption.tokens import TokenView

__all__ = ["DEFAULT_PREDICATE", "fallback_lemma", "symbol_names"]

#: The predicate of a text with nothing nameable in it.
DEFAULT_PREDICATE = "sound"
_WORDY = re.compile(r"[^\W_]")
_SYMBOL_CATEGORIES = frozenset({"So", "Sm", "Sc"})
# Words of Unicode character names that say nothing about the sound.
_NAME_NOISE = frozenset({"with", "face", "sign", "symbol", "emoji", "black", "white", "small", "large"})


def _has_word(text: str) -> bool:
    return _WORDY.search(text) is not None


def symbol_names(text: str) -> str | None:
    """Lemma words from the Unicode names of the symbols in ``text`` (``🐦🔔`` -> ``bird``).

    Example:
        >>> symbol_names("🐕"), symbol_names("???")
        ('dog', None)
    """
    for char in text:
        if unicodedata.category(char) in _SYMBOL_CATEGORIES:
            name = unicodedata.name(char, "")
            words = [w for w in name.lower().split() if w not in _NAME_NOISE and w.isalpha()]
            if words:
                return " ".join(words[-2:])
    return None


def fallback_lemma(view: TokenView) -> tuple[str, tuple[int, ...]]:
    """The fallback predicate's lemma words and source tokens.

    Args:
        view: the caption's tokens (may be empty).

    Returns:
        ``(lemma, tokens)``; the lemma always has a letter or digit.
    """
    roots = [tok for tok in view if tok.dep == "ROOT"]
    verbs = [tok for tok in roots if tok.pos in ("VERB", "AUX")]
    root = verbs[0] if verbs else (roots[0] if roots else None)
    if root is not None and _has_word(root.lemma):
        argument = view.children(root.i, ("dobj", "obj")) or view.children(root.i, ("nsubj", "nsubjpass"))
        if argument and _has_word(argument[0].lemma):
            return f"{root.lemma} {argument[0].lemma}", (root.i, argument[0].i)
        return root.lemma, (root.i,)
    for tok in view:
        if _has_word(tok.lemma):
            return tok.lemma, (tok.i,)
    named = symbol_names(view.text)
    if named is not None:
        return named, (view[0].i,) if len(view) else ()
    return DEFAULT_PREDICATE, ()
