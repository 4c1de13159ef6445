"""``hf-llm``: elaborate queries with a causal language model from a local path.

The model gets the paper's two prompts (positives q+ and contrastive negatives q-; see
:mod:`fortekit.plugins.elaborators.prompts`), through its chat template when it has one
(instruction-tuned models such as Mistral-7B-Instruct, the paper's choice) and as plain
text otherwise. Decoding is greedy by default, so an elaboration is reproducible. The
numbered lists are parsed forgivingly; a query for which the model gives no usable
item at all raises :class:`~fortekit.errors.ElaborationError` with the model's output.

Example:
    >>> from fortekit.plugins import get_elaborator
    >>> llm = get_elaborator("hf-llm", model="/models/Mistral-7B-Instruct-v0.3")  # doctest: +SKIP
    >>> positives, negatives = llm.elaborate("birds chirping in the morning")  # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fortekit._hf_progress import quiet_model_loading
from fortekit.errors import ElaborationError, Errors, ModelLoadError, ModelNotFoundError
from fortekit.plugins._runtime import (
    batches,
    check_batch_size,
    check_count,
    check_query,
    local_or_hub,
    model_loading,
    require,
    resolve_device,
)
from fortekit.plugins.elaborators.prompts import negative_prompt, parse_list, positive_prompt
from fortekit.plugins.protocols import Elaboration

__all__ = ["HFLLMElaborator"]


class HFLLMElaborator:
    """A local causal LM prompted with the paper's q+ and q- templates.

    Args:
        model: a directory holding the model and its tokenizer (or a cached hub id).
        n_pos: positives per query (the paper: 2).
        n_neg: contrastive negatives per query (the paper: 3).
        device: "auto" (CUDA when present), "cpu", "cuda", "cuda:N".
        batch_size: prompts per generate() call (each query makes two).
        max_new_tokens: generation budget per prompt (a 20-word line is ~30 tokens).
        do_sample: sample instead of greedy decoding (then set `seed`).
        seed: torch seed before each generate() call when sampling.
        use_chat_template: True, False, or None (use it when the tokenizer has one).
        allow_download: fetch a hub id that is not cached.
        generation_options: extra keyword arguments for ``model.generate``.

    Raises:
        MissingDependencyError, ModelNotFoundError, ModelLoadError, PluginOptionError.
    """

    name = "hf-llm"

    def __init__(
        self,
        model: str | os.PathLike[str],
        *,
        n_pos: int = 2,
        n_neg: int = 3,
        device: str = "auto",
        batch_size: int = 8,
        max_new_tokens: int = 200,
        do_sample: bool = False,
        seed: int = 0,
        use_chat_template: bool | None = None,
        allow_download: bool = False,
        generation_options: dict[str, Any] | None = None,
    ) -> None:
        require("torch", self.name)
        transformers = require("transformers", self.name)
        self.n_pos = check_count("n_pos", n_pos)
        self.n_neg = check_count("n_neg", n_neg)
        self.device = resolve_device(device)
        self.batch_size = check_batch_size(batch_size)
        self.max_new_tokens = check_count("max_new_tokens", max_new_tokens)
        self.do_sample, self.seed = bool(do_sample), int(seed)
        self.generation_options = dict(generation_options or {})
        source, local_only = local_or_hub(os.fspath(model), allow_download)
        self.model_source = source
        what = "a causal language model"
        try:
            with quiet_model_loading(), model_loading(what, source):
                tokenizer = transformers.AutoTokenizer.from_pretrained(source, local_files_only=local_only)
                lm = transformers.AutoModelForCausalLM.from_pretrained(source, local_files_only=local_only)
        except OSError as exc:
            if Path(source).is_dir():
                raise ModelLoadError(Errors.E208.format(what=what, path=source, problem=exc)) from exc
            raise ModelNotFoundError(Errors.E207.format(model=source, problem=exc)) from exc
        except (ValueError, KeyError) as exc:
            raise ModelLoadError(Errors.E208.format(what=what, path=source, problem=exc)) from exc
        # Decoder-only models continue the right end of the prompt: pad on the left.
        tokenizer.padding_side = "left"
        if tokenizer.pad_token is None:
            fallback = tokenizer.eos_token if tokenizer.eos_token is not None else tokenizer.unk_token
            tokenizer.pad_token = fallback
        self._tokenizer = tokenizer
        self._model = lm.to(self.device).eval()
        has_template = bool(getattr(tokenizer, "chat_template", None))
        self.use_chat_template = has_template if use_chat_template is None else bool(use_chat_template)

    def __repr__(self) -> str:
        return f"HFLLMElaborator(model={self.model_source!r}, n_pos={self.n_pos}, n_neg={self.n_neg})"

    def elaborate(self, query: str) -> Elaboration:
        """Elaborate one query: up to `n_pos` positives and `n_neg` negatives.

        Raises:
            ElaborationError: an empty query, or no usable positive or negative.
        """
        return self.elaborate_many([query])[0]

    def elaborate_many(self, queries: Sequence[str]) -> list[Elaboration]:
        """Elaborate several queries, batching their prompts through the model.

        Raises:
            ElaborationError: an empty query, or a query with no usable item of a kind.
        """
        checked = [check_query(query) for query in queries]
        prompts = []
        for query in checked:
            prompts += [positive_prompt(query, self.n_pos), negative_prompt(query, self.n_neg)]
        answers = self.generate(prompts)
        results = []
        for index, query in enumerate(checked):
            positives = self._items(answers[2 * index], query, self.n_pos, "positive elaborations")
            negatives = self._items(answers[2 * index + 1], query, self.n_neg, "contrastive negatives")
            results.append(Elaboration(query, tuple(positives), tuple(negatives)))
        return results

    def _items(self, answer: str, query: str, limit: int, what: str) -> list[str]:
        items: list[str] = parse_list(answer, limit=limit, exclude=(query,))
        if not items:
            raise ElaborationError(Errors.E233.format(
                model=self.model_source, what=what, query=query, excerpt=answer[:200],
            ))
        return items

    def _render(self, prompt: str) -> str:
        if not self.use_chat_template:
            return prompt
        rendered: str = self._tokenizer.apply_chat_template(
            [{"role": "user", "content": prompt}], tokenize=False, add_generation_prompt=True,
        )
        return rendered

    def generate(self, prompts: Sequence[str]) -> list[str]:
        """The model's answer to each prompt (only the new text), greedy unless do_sample.

        Example:
            >>> llm.generate(["Query: rain\\nElaborations:"])  # doctest: +SKIP
            ['1. heavy rain drumming on a metal roof ...']
        """
        import torch

        answers: list[str] = []
        options: dict[str, Any] = {
            "max_new_tokens": self.max_new_tokens, "do_sample": self.do_sample,
            "pad_token_id": self._tokenizer.pad_token_id, **self.generation_options,
        }
        with torch.inference_mode():
            for chunk in batches([self._render(p) for p in prompts], self.batch_size):
                # A chat template already carries the special tokens it needs.
                encoded = self._tokenizer(
                    list(chunk), return_tensors="pt", padding=True,
                    add_special_tokens=not self.use_chat_template,
                ).to(self.device)
                if self.do_sample:
                    torch.manual_seed(self.seed)
                output = self._model.generate(
                    input_ids=encoded["input_ids"], attention_mask=encoded["attention_mask"], **options,
                )
                new_tokens = output[:, encoded["input_ids"].shape[1]:]
                answers.extend(self._tokenizer.batch_decode(new_tokens, skip_special_tokens=True))
        return answers
