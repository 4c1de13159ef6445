"""Declarative grammar and rule files (data only; no code imports from here).

``fol.lark`` is the formula grammar read by :mod:`fortekit.fol.parser`.
"""
