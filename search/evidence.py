"""Moved to :mod:`fortekit.search.formula.evidence`; this old path works for one more release (W800)."""

from fortekit._deprecated import alias_module

alias_module(__name__, "fortekit.search.formula.evidence")
