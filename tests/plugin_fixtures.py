"""Tiny, randomly initialised but real transformers models for the plug-in tests.

Each builder creates a model of a real architecture (ClapModel, GPT2LMHeadModel,
SpeechEncoderDecoderModel, ...) with tiny sizes, a tokenizer built offline from a word
list, and saves them with save_pretrained(): the plug-ins then load them through their
ordinary loading code, exactly as they would load downloaded weights.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

WORDS = (  # noqa: SIM905 (a sentence reads better than 48 quoted words)
    "a an the dog dogs barks barking bird birds chirping chirp in on at of and with far away close "
    "morning night loud loudly soft softly quiet rain falls falling roof car engine idling "
    "distress calm high low pitch rapid slow 1. 2. 3. here are elaborations negatives"
).split()


def word_tokenizer(special: dict[str, str], *, template: tuple[str, str] | None = None):
    """A PreTrainedTokenizerFast over WORDS (white-space split) with the given special tokens.

    Args:
        special: role -> token, for example {"pad_token": "<pad>", "eos_token": "</s>"};
            the tokens get the first ids, in the order given.
        template: (bos, eos) to wrap every sequence in, as RoBERTa does.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    tokens = list(dict.fromkeys([*special.values(), "<unk>", *WORDS]))
    vocab = {token: index for index, token in enumerate(tokens)}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    backend.decoder = decoders.WordPiece(prefix="##")  # joins the words with spaces
    if template is not None:
        bos, eos = template
        backend.post_processor = processors.TemplateProcessing(
            single=f"{bos} $A {eos}", pair=f"{bos} $A {eos} {eos} $B {eos}",
            special_tokens=[(bos, vocab[bos]), (eos, vocab[eos])],
        )
    return PreTrainedTokenizerFast(
        tokenizer_object=backend, unk_token="<unk>", model_max_length=77, **special,
    )


def save_tiny_clap(directory: Path, *, fusion: bool = False) -> Path:
    """A ClapModel (RoBERTa text tower, HTSAT audio tower) with tiny widths, and its processor.

    The feature extractor is CLAP's real one (48 kHz, 64 mel bins, 10 s window).
    """
    import torch
    from transformers import ClapConfig, ClapFeatureExtractor, ClapModel, ClapProcessor

    special = {"bos_token": "<s>", "pad_token": "<pad>", "eos_token": "</s>", "mask_token": "<mask>",
               "cls_token": "<s>", "sep_token": "</s>"}
    tokenizer = word_tokenizer(special, template=("<s>", "</s>"))
    config = ClapConfig(
        text_config={
            "vocab_size": len(tokenizer), "hidden_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2,
            "intermediate_size": 32, "max_position_embeddings": 100, "pad_token_id": tokenizer.pad_token_id,
            "projection_dim": 8,
        },
        audio_config={
            "hidden_size": 16, "patch_embeds_hidden_size": 8, "depths": [1, 1], "num_attention_heads": [1, 2],
            "window_size": 8, "spec_size": 256, "num_mel_bins": 64, "projection_dim": 8,
            "enable_fusion": fusion,
        },
        projection_dim=8,
    )
    torch.manual_seed(0)
    model = ClapModel(config).eval()
    extractor = ClapFeatureExtractor(truncation="fusion" if fusion else "rand_trunc")
    ClapProcessor(feature_extractor=extractor, tokenizer=tokenizer).save_pretrained(directory)
    model.save_pretrained(directory)
    return directory


def save_tiny_causal_lm(directory: Path) -> Path:
    """A GPT-2 language model (1 layer, 16 wide) and its tokenizer."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    tokenizer = word_tokenizer({"pad_token": "<pad>", "bos_token": "<s>", "eos_token": "</s>"})
    config = GPT2Config(
        vocab_size=len(tokenizer), n_positions=1024, n_embd=16, n_layer=1, n_head=2,
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(0)
    GPT2LMHeadModel(config).eval().save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def save_tiny_speech_captioner(directory: Path) -> Path:
    """A SpeechEncoderDecoderModel (wav2vec2 encoder, BERT decoder), feature extractor, tokenizer."""
    import torch
    from transformers import (
        BertConfig,
        SpeechEncoderDecoderConfig,
        SpeechEncoderDecoderModel,
        Wav2Vec2Config,
        Wav2Vec2FeatureExtractor,
    )

    tokenizer = word_tokenizer({"pad_token": "<pad>", "bos_token": "<s>", "eos_token": "</s>"})
    encoder = Wav2Vec2Config(
        hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32, conv_dim=(8, 8),
        conv_stride=(5, 4), conv_kernel=(10, 8), num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2,
        feat_extract_norm="layer", do_stable_layer_norm=True,
    )
    decoder = BertConfig(
        vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32, is_decoder=True, add_cross_attention=True, pad_token_id=tokenizer.pad_token_id,
    )
    config = SpeechEncoderDecoderConfig.from_encoder_decoder_configs(encoder, decoder)
    config.decoder_start_token_id = tokenizer.bos_token_id
    config.pad_token_id = tokenizer.pad_token_id
    config.eos_token_id = tokenizer.eos_token_id
    torch.manual_seed(0)
    model = SpeechEncoderDecoderModel(config=config).eval()
    model.generation_config.decoder_start_token_id = tokenizer.bos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.save_pretrained(directory)
    Wav2Vec2FeatureExtractor(
        feature_size=1, sampling_rate=16_000, padding_value=0.0, do_normalize=True,
        return_attention_mask=True,
    ).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def tone(seconds: float, rate: int, *, channels: int = 1, freq: float = 440.0, seed: int = 0) -> np.ndarray:
    """A sine tone with a little noise: (frames,) or (frames, channels), float32 in [-1, 1]."""
    frames = max(1, round(seconds * rate))
    t = np.arange(frames) / rate
    rng = np.random.default_rng(seed)
    mono = 0.5 * np.sin(2 * np.pi * freq * t) + 0.05 * rng.standard_normal(frames)
    if channels == 1:
        return mono.astype(np.float32)
    return np.stack([mono * (1.0 - 0.3 * c) for c in range(channels)], axis=1).astype(np.float32)


def write_wav(path: Path, seconds: float, rate: int, *, channels: int = 1, freq: float = 440.0) -> Path:
    """Write a real WAV file (16-bit PCM) with soundfile."""
    import soundfile

    soundfile.write(str(path), tone(seconds, rate, channels=channels, freq=freq), rate, subtype="PCM_16")
    return path
