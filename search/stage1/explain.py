"""The search tree of one query, for a terminal (``fol-refine --query TEXT --explain``).

Each node shows its edit, G(phi), F and its terms, and a mark: ``★`` phi*,
``✔`` kept in the beam, ``·`` feasible but not kept, ``✘`` pruned (infeasible).

Example:
    >>> from fortekit.search import Refiner  # doctest: +SKIP
    >>> print(Refiner().refine("a person talking").explain())  # doctest: +SKIP
    query  a person talking
    ...
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from fortekit.search.stage1.result import SearchNode

if TYPE_CHECKING:
    from fortekit.search.stage1.result import RefinementResult

__all__ = ["render_tree"]

_MARKS = {"star": "★", "kept": "✔", "feasible": "·", "pruned": "✘"}


def _edit(node: SearchNode) -> str:
    if not node.edit:
        return "φ0"
    operator, *arguments = node.edit
    if operator == "attr":
        return f"+{arguments[0]}"
    if operator == "neg":
        return f"+¬{arguments[0]}"
    return f"+{arguments[0]}(x, {arguments[1]})" if len(arguments) == 2 else "+" + ",".join(arguments)


def _mark(node: SearchNode, star: int) -> str:
    if node.node_id == star:
        return _MARKS["star"]
    if not node.feasible:
        return _MARKS["pruned"]
    return _MARKS["kept"] if node.kept else _MARKS["feasible"]


def _line(node: SearchNode, star: int, width: int) -> str:
    terms = node.terms
    scores = f"F={terms.objective:+.3f} c={terms.complexity:g} u={terms.utility:+.3f} v·={terms.pivot:+.3f}"
    if terms.sim_pos or terms.sim_neg:
        scores += f" e+={terms.sim_pos:+.3f} e-={terms.sim_neg:+.3f}"
    text = f"{_mark(node, star)} {_edit(node)}  “{node.text}”"
    room = max(20, width - len(scores) - 2)
    if len(text) > room:
        text = text[: room - 1] + "…"
    return f"{text:<{room}}  {scores}"


def _walk(
    children: dict[int | None, list[SearchNode]],
    node: SearchNode,
    prefix: str,
    star: int,
    width: int,
    max_children: int,
) -> Iterator[str]:
    kids = children.get(node.node_id, [])
    # Kept and feasible nodes first: they are the story; pruned ones are summarised.
    kids = sorted(kids, key=lambda n: (n.node_id != star, not n.kept, not n.feasible, n.terms.objective))
    shown = kids[:max_children]
    hidden = len(kids) - len(shown)
    for position, kid in enumerate(shown):
        last = position == len(shown) - 1 and not hidden
        branch, extension = ("└── ", "    ") if last else ("├── ", "│   ")
        yield prefix + branch + _line(kid, star, width - len(prefix) - 4)
        yield from _walk(children, kid, prefix + extension, star, width, max_children)
    if hidden:
        pruned = sum(not kid.feasible for kid in kids[max_children:])
        yield prefix + f"└── … {hidden} more ({pruned} pruned)"


def render_tree(result: RefinementResult, *, width: int = 100, max_children: int = 8) -> str:
    """The query, its elaborations and parses, the invariant set and the search tree as text.

    Args:
        result: a :class:`RefinementResult` (with its tree).
        width: the line width to fit.
        max_children: children shown per node (the rest are counted).

    Returns:
        Lines joined by newlines, ending with the chosen phi*.
    """
    star = next(
        (n.node_id for n in result.tree if n.formula == result.phi_star and n.feasible),
        0,
    )
    lines = [f"query  {result.query}", f"φ0     {result.phi0}"]
    for text, phi in zip(result.positives, result.phi_plus, strict=False):
        lines.append(f"φ+     {phi}   ← “{text}”")
    for text, phi in zip(result.negatives, result.phi_minus, strict=False):
        lines.append(f"φ-     {phi}   ← “{text}”")
    invariant = ", ".join(sorted(str(symbol) for symbol in result.invariant)) or "∅"
    lines.append(f"C      {{{invariant}}}")
    lines.append(f"threshold: {result.threshold}; anchors: {result.anchor_source}; "
                 f"marks: ★ φ*  ✔ kept  · feasible  ✘ pruned")
    children: dict[int | None, list[SearchNode]] = {}
    for node in result.tree:
        children.setdefault(node.parent, []).append(node)
    for root in children.get(None, []):
        lines.append(_line(root, star, width))
        lines.extend(_walk(children, root, "", star, width, max_children))
    verdict = "" if result.feasible else "  (nothing passed the threshold: φ0 is returned)"
    lines.append(f"φ*     {result.phi_star}{verdict}")
    lines.append(f"G(φ*)  {result.refined_text}")
    return "\n".join(lines)
