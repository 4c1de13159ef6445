"""``encode_text(str)`` gives one vector and ``encode_text(list)`` a matrix, on every built-in backbone
and the cached wrapper (sentence-transformers' convention; issue 46, "Conventions")."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fortekit.errors import EncoderInputError
from fortekit.plugins import get_backbone, one_or_many
from fortekit.plugins.registry import REGISTRIES, _import_target
from fortekit.search.stage1.encoder import CachedTextEncoder


@pytest.fixture(scope="module")
def minilm():  # type: ignore[no-untyped-def]
    return get_backbone("minilm", device="cpu")


@pytest.mark.parametrize("name", sorted(REGISTRIES["backbone"]._builtins))
def test_every_built_in_backbone_takes_one_text(name: str) -> None:
    target = REGISTRIES["backbone"]._builtins[name].target
    module = target.partition(":")[0]
    try:
        cls = _import_target(target)
    except ImportError as exc:  # an optional package (laion_clap, msclap) is not installed here
        pytest.skip(f"{module} cannot be imported here: {exc}")
    assert getattr(cls.encode_text, "one_or_many", False), f"{name}: encode_text is not @one_or_many"


def test_a_str_gives_one_vector_and_a_list_a_matrix(minilm) -> None:  # type: ignore[no-untyped-def]
    one = minilm.encode_text("a dog barks")
    many = minilm.encode_text(["a dog barks", "rain on a roof"])
    assert tuple(one.shape) == (384,) and tuple(many.shape) == (2, 384)
    torch.testing.assert_close(one, many[0])
    assert tuple(minilm.encode_text(["a dog barks"]).shape) == (1, 384)  # a list of one stays a matrix
    assert tuple(minilm.encode_text(np.str_("a dog barks")).shape) == (384,)
    assert tuple(minilm.encode_text(np.array(["a", "b"])).shape) == (2, 384)
    assert tuple(minilm.encode_text([]).shape) == (0, 384)
    with pytest.raises(EncoderInputError, match=r"\[E212\].*bytes.*decode"):
        minilm.encode_text(b"a dog barks")


def test_the_cached_wrapper_follows_the_backbone(minilm) -> None:  # type: ignore[no-untyped-def]
    encoder = CachedTextEncoder(minilm)
    one = encoder.encode("wind in the trees")
    assert tuple(one.shape) == (384,)
    torch.testing.assert_close(one, encoder.encode(["wind in the trees"])[0])
    assert encoder.stats.texts_encoded == 1  # the str was encoded once, as a text, not its characters
    torch.testing.assert_close(one, minilm.encode_text("wind in the trees"))


def test_one_or_many_on_a_third_party_encoder() -> None:
    class Plugin:
        dim = 2

        @one_or_many
        def encode_text(self, texts):  # type: ignore[no-untyped-def]
            return torch.tensor([[float(len(text)), 1.0] for text in texts])

    assert Plugin().encode_text("abc").tolist() == [3.0, 1.0]
    assert Plugin().encode_text(["ab", "c"]).shape == (2, 2)
    assert Plugin.encode_text.__name__ == "encode_text"
