"""A neural parser plug-in: a seq2seq FOL model (T5 family) from a local directory.

The paper parses with a fine-tuned Flan-T5 FOL translator prompted with V_audio.
:class:`NeuralCaptionParser` loads such a model (``save_pretrained()`` output, never
downloaded), prompts it with the caption and the V_audio predicates its words ground
to, validates the output with :func:`fortekit.fol.parse_formula`, grounds every
predicate like Pass 2 does, and closes free variables existentially. When the output
is empty, malformed or has no predicate, the rule parser's result is returned
instead (``backend == "rules"``). torch and transformers are imported on first use.

Example:
    >>> NeuralCaptionParser("/no/such/model")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    fortekit.errors.NeuralModelNotFoundError: [E307] No seq2seq FOL model at /no/such/model: ...
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from fortekit._hf_progress import quiet_model_loading
from fortekit.errors import (
    Errors,
    FormulaSyntaxError,
    NeuralModelLoadError,
    NeuralModelNotFoundError,
    NeuralParserDependencyError,
)
from fortekit.fol.ast import And, Atom, Eq, Formula, Iff, Implies, Not, Or, Quant, Quantifier, Xor
from fortekit.fol.caption.grounding import Grounded
from fortekit.fol.caption.parser import CaptionParser, default_parser
from fortekit.fol.caption.pipeline import check_texts
from fortekit.fol.caption.result import ParseResult, PredicateRecord
from fortekit.fol.caption.scoring import split_name
from fortekit.fol.predicates import Polarity, atom_occurrences
from fortekit.fol.terms import free_variables

__all__ = ["DEFAULT_PROMPT", "NeuralCaptionParser", "rename_predicates"]

#: The prompt: the caption and the V_audio predicates to prefer.
DEFAULT_PROMPT = "Translate to first-order logic. Predicates: {predicates}. Sentence: {text}"


def rename_predicates(phi: Formula, names: dict[str, str]) -> Formula:
    """``phi`` with predicate names replaced through ``names`` (others unchanged).

    Example:
        >>> from fortekit.fol import parse_formula
        >>> str(rename_predicates(parse_formula("∃x (Chirp(x) ∧ ¬Loud(x))"), {"Chirp": "Chirping"}))
        '∃x [Chirping(x) ∧ ¬Loud(x)]'
    """
    if isinstance(phi, Atom):
        return Atom(names.get(phi.predicate, phi.predicate), phi.args)
    if isinstance(phi, Eq):
        return phi
    if isinstance(phi, Not):
        return Not(rename_predicates(phi.body, names))
    if isinstance(phi, And):
        return And(tuple(rename_predicates(op, names) for op in phi.operands))
    if isinstance(phi, Or):
        return Or(tuple(rename_predicates(op, names) for op in phi.operands))
    if isinstance(phi, Implies):
        return Implies(rename_predicates(phi.antecedent, names), rename_predicates(phi.consequent, names))
    if isinstance(phi, Iff):
        return Iff(rename_predicates(phi.left, names), rename_predicates(phi.right, names))
    if isinstance(phi, Xor):
        return Xor(rename_predicates(phi.left, names), rename_predicates(phi.right, names))
    return Quant(phi.quantifier, phi.variable, rename_predicates(phi.body, names), phi.domain)


def _close(phi: Formula) -> Formula:
    """Bind the free variables existentially, in order of first mention."""
    free = free_variables(phi)
    if not free:
        return phi
    order: dict[str, None] = {}
    for atom, _polarity in atom_occurrences(phi):
        for arg in atom.args:
            if hasattr(arg, "name") and any(v.name == arg.name for v in free):
                order.setdefault(arg.name, None)
    by_name = {v.name: v for v in free}
    for name in sorted(by_name, key=lambda n: list(order).index(n) if n in order else len(order)):
        order.setdefault(name, None)
    for name in reversed(order):
        phi = Quant(Quantifier.EXISTS, by_name[name], phi)
    return phi


class NeuralCaptionParser:
    """Parse captions with a local seq2seq FOL model, falling back to the rule parser.

    Args:
        model_path: a directory holding the model and its tokenizer (``save_pretrained()``).
        rule_parser: the rule parser used for the prompt's predicates, for grounding and
            as the fallback (default: :func:`fortekit.fol.caption.parser.default_parser`).
        device: ``"cpu"``, ``"cuda"``, ``"cuda:N"``.
        max_new_tokens: longest output.
        max_prompt_predicates: how many V_audio predicates the prompt lists.
        prompt: the prompt template, with ``{text}`` and ``{predicates}``.

    Raises:
        NeuralModelNotFoundError: (a ``FileNotFoundError``) ``model_path`` is not a model
            directory (E307).
        NeuralParserDependencyError: (an ``ImportError``) torch or transformers is not
            installed (E306).
        NeuralModelLoadError: (a ``RuntimeError``) the model or tokenizer cannot be loaded (E308).
        All three are :class:`fortekit.errors.NeuralParserError`.
    """

    def __init__(
        self,
        model_path: str | Path,
        *,
        rule_parser: CaptionParser | None = None,
        device: str = "cpu",
        max_new_tokens: int = 96,
        max_prompt_predicates: int = 48,
        prompt: str = DEFAULT_PROMPT,
    ) -> None:
        path = Path(model_path)
        if not path.is_dir() or not (path / "config.json").is_file():
            problem = "no such directory" if not path.is_dir() else "config.json is missing"
            raise NeuralModelNotFoundError(Errors.E307.format(path=path, problem=problem))
        try:
            import torch
            from transformers import AutoModelForSeq2SeqLM, AutoTokenizer
        except ImportError as exc:
            raise NeuralParserDependencyError(Errors.E306.format(problem=exc)) from None
        try:
            with quiet_model_loading():
                self.tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
                model = AutoModelForSeq2SeqLM.from_pretrained(str(path), local_files_only=True)
            self.model = model.to(device)
        except (OSError, ValueError, KeyError, RuntimeError) as exc:
            problem = str(exc).splitlines()[0]
            raise NeuralModelLoadError(Errors.E308.format(path=path, problem=problem)) from None
        self.model.eval()
        self._torch = torch
        self.path = path
        self.device = device
        self.rules = rule_parser if rule_parser is not None else default_parser()
        self.max_new_tokens = max_new_tokens
        self.max_prompt_predicates = max_prompt_predicates
        self.prompt_template = prompt

    def __repr__(self) -> str:
        return f"<NeuralCaptionParser {self.path} on {self.device}>"

    # -- prompting and generation ------------------------------------------------------
    def prompt(self, text: str, rule_result: ParseResult) -> str:
        """The model's input: the caption and the V_audio predicates its words ground to."""
        symbols = [r.symbol for r in rule_result.predicates if r.grounded]
        listed = list(dict.fromkeys(symbols))[: self.max_prompt_predicates]
        return self.prompt_template.format(text=text, predicates=", ".join(listed) or "none")

    def generate(self, prompts: Sequence[str]) -> list[str]:
        """Run the model on prompts; the decoded outputs, special tokens removed."""
        if not prompts:
            return []
        batch = self.tokenizer(list(prompts), return_tensors="pt", padding=True, truncation=True)
        batch = {key: value.to(self.device) for key, value in batch.items() if key != "token_type_ids"}
        with self._torch.no_grad():
            output = self.model.generate(**batch, max_new_tokens=self.max_new_tokens, do_sample=False)
        return [str(text).strip() for text in self.tokenizer.batch_decode(output, skip_special_tokens=True)]

    # -- parsing -----------------------------------------------------------------------------
    def parse(self, text: str) -> ParseResult:
        """Parse one caption (validated like :func:`fortekit.parse_caption`)."""
        return next(iter(self.parse_many([text])))

    def parse_many(self, texts: Iterable[str], *, batch_size: int = 16) -> Iterator[ParseResult]:
        """Parse captions in batches; each result is the model's or, where it failed, the rules'."""
        check_texts(texts, function="parse_many", single="parse")  # a str is one caption, not many
        pending: list[tuple[str, ParseResult]] = []
        for text in texts:
            pending.append((text, self.rules.parse(text)))
            if len(pending) >= batch_size:
                yield from self._flush(pending)
                pending = []
        if pending:
            yield from self._flush(pending)

    def _flush(self, pending: list[tuple[str, ParseResult]]) -> Iterator[ParseResult]:
        outputs = self.generate([self.prompt(text, rule) for text, rule in pending])
        for (text, rule), output in zip(pending, outputs, strict=True):
            yield self.from_output(text, output, rule)

    def from_output(self, text: str, output: str, rule_result: ParseResult) -> ParseResult:
        """Validate and ground one model output; ``rule_result`` if it is unusable.

        Args:
            text: the caption.
            output: the model's text.
            rule_result: the rule parser's result for the caption.

        Returns:
            The neural result (``backend == "neural"``) or ``rule_result``.
        """
        from fortekit.fol.parser import parse_formula

        if not output.strip():
            return rule_result
        try:
            phi = parse_formula(output)
        except (FormulaSyntaxError, ValueError, RecursionError):
            return rule_result
        occurrences = list(atom_occurrences(phi))
        if not occurrences:
            return rule_result
        pass2 = self.rules.pass2
        renames: dict[str, str] = {}
        grounding: dict[str, tuple[str, Grounded]] = {}
        for atom, _polarity in occurrences:
            lemma = " ".join(split_name(atom.predicate))
            grounded = pass2.ground(lemma, "")
            grounding[atom.predicate] = (lemma, grounded)
            if grounded.grounded:
                renames[atom.predicate] = grounded.symbol
        phi = _close(rename_predicates(phi, renames))
        by_symbol = {r.symbol: r for r in rule_result.predicates}
        records: list[PredicateRecord] = []
        oov: dict[str, None] = {}
        for atom, polarity in occurrences:
            lemma, grounded = grounding[atom.predicate]
            symbol = renames.get(atom.predicate, atom.predicate)
            source = by_symbol.get(symbol)
            if not grounded.grounded:
                oov.setdefault(lemma, None)
            records.append(
                PredicateRecord(
                    symbol,
                    lemma,
                    tuple(str(a) for a in atom.args),
                    polarity is Polarity.NEGATIVE,
                    "neural",
                    source.tokens if source else (),
                    source.span if source else (0, 0),
                    source.source if source else "",
                    grounded.tier,
                    grounded.confidence,
                    grounded.category,
                    source.pos if source else "",
                )
            )
        return ParseResult(text, phi, tuple(records), False, tuple(oov), rule_result.truncated, "neural")

    def to(self, device: str) -> NeuralCaptionParser:
        """Move the model to another device; returns self."""
        self.model.to(device)
        self.device = device
        return self
