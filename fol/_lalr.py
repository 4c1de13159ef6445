"""A lean driver for the LALR(1) tables that Lark builds from ``grammars/fol.lark``.

Lark's general-purpose runtime spends most of its time on per-token bookkeeping
(line counters, token objects, generator layers). This driver runs the very same
parse table, the same per-state (contextual) terminal sets in Lark's priority
order, and the same rule callbacks, with none of that bookkeeping. It only ever
accepts what Lark accepts; on any failure the caller re-runs Lark's own parser,
which produces the precise error. ``tests/fol/test_fol_parser.py`` checks that both
paths agree on every FOLIO formula. Lark is imported when a driver is made (the first
parse), not with this module.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lark import Lark


class FastPathFailed(Exception):
    """The input is not accepted; ask Lark's own parser for the precise error."""


class LalrDriver:
    """Parse with a Lark LALR instance's tables and callbacks, bypassing its runtime."""

    def __init__(self, lark: Lark, start: str = "start") -> None:
        from lark.parsers.lalr_analysis import Shift

        frontend = lark.parser
        lalr = frontend.parser.parser  # lark.parsers.lalr_parser._Parser
        table = lalr.parse_table
        # The table, recompiled for speed: a shift is the next state (an int); a
        # reduce is (length, callback, goto symbol), with callback None for a `?rule`
        # of one symbol, whose value is its child's.
        self._table: dict[int, dict[str, Any]] = {}
        for state, actions in table.states.items():
            row: dict[str, Any] = {}
            for symbol, (action, argument) in actions.items():
                if action is Shift:
                    row[str(symbol)] = int(argument)
                else:
                    size = len(argument.expansion)
                    passthrough = size == 1 and argument.options.expand1  # as Lark: ExpandSingleChild
                    callback = None if passthrough else lalr.callbacks[argument]
                    row[str(symbol)] = (size, callback, str(argument.origin.name))
            self._table[state] = row
        # (state below, top state, lookahead) -> top state after a run of one-child
        # `?rule` reductions (`atom` up to `iff_expr` is six of them).
        self._chains: dict[tuple[int, int, str], int] = {}
        self._start: int = table.start_states[start]
        self._end: int = table.end_states[start]
        self._ignore = frozenset(lark.ignore_tokens)
        # One regex per lexer state: optional ignorable text, then the state's
        # terminals as named groups in Lark's priority order (first match wins, as
        # in Lark's own scanner).
        ignored = "|".join(t.pattern.to_regexp() for t in lark.terminals if t.name in self._ignore)
        skip = f"(?:{ignored})*" if ignored else ""
        contextual = frontend.lexer
        compiled: dict[tuple[str, ...], re.Pattern[str]] = {}
        self._scanners: dict[int, re.Pattern[str]] = {}
        for state, basic in contextual.lexers.items():
            if getattr(basic, "callback", None):
                raise ValueError("lexer callbacks are not supported by the fast path")
            terminals = [t for t in basic.scanner.terminals if t.name not in self._ignore]
            key = tuple(t.name for t in terminals)
            if key not in compiled:
                alternatives = "|".join(f"(?P<{t.name}>{t.pattern.to_regexp()})" for t in terminals)
                compiled[key] = re.compile(f"{skip}(?:{alternatives})")
            self._scanners[state] = compiled[key]
        self._trailing = re.compile(f"{skip}\\Z")

    def _content_end(self, text: str) -> int:
        """Where the text ends once trailing ignorable characters are dropped."""
        match = self._trailing.search(text)
        return match.start() if match else len(text)

    def _unit_chain(self, below: int, top: int, kind: str, origin: str) -> int:
        key = (below, top, kind)
        final = self._chains.get(key)
        if final is None:
            final = self._table[below][origin]
            while True:
                action = self._table[final].get(kind)
                if action.__class__ is int or action is None or action[1] is not None:
                    break
                final = self._table[below][action[2]]
            self._chains[key] = final
        return final

    def parse(self, text: str) -> Any:
        """Parse ``text``; raise :class:`FastPathFailed` where Lark would raise."""
        table, scanners, end_state = self._table, self._scanners, self._end
        state = self._start
        state_stack = [state]
        value_stack: list[Any] = []
        pos, length = 0, self._content_end(text)
        while True:
            if pos < length:
                match = scanners[state].match(text, pos)
                if match is None:
                    raise FastPathFailed
                kind = match.lastgroup
                if kind is None:  # a state that accepts only the end of input
                    raise FastPathFailed
                pos = match.end()
                # Plain strings: the callbacks only read the text. Positions matter only
                # for error messages, and those come from Lark's own run.
                token: str | None = match.group(kind)
            else:
                kind, token = "$END", None
            while True:
                action = table[state].get(kind)
                if action is None:
                    raise FastPathFailed
                if action.__class__ is int:
                    if token is None:
                        raise FastPathFailed
                    state = action
                    state_stack.append(state)
                    value_stack.append(token)
                    break
                size, callback, origin = action
                if callback is None:  # `?rule` with one child: the child is the value
                    state = self._unit_chain(state_stack[-2], state, kind, origin)
                    state_stack[-1] = state
                else:
                    if size:
                        children = value_stack[-size:]
                        del state_stack[-size:]
                        del value_stack[-size:]
                    else:
                        children = []
                    state = table[state_stack[-1]][origin]
                    state_stack.append(state)
                    value_stack.append(callback(children))
                if token is None and state == end_state:
                    return value_stack[-1]
