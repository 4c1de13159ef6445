"""Captions (and a tagger's label evidence) for audio items, from a captioner plug-in.

``fortekit index build --audio DIR --captioner NAME`` and ``AudioIndex.build(...,
captioner=...)`` call :func:`caption_audio`: the captioner captions the items in chunks
(a progress bar counts them), and when it is a :class:`~fortekit.plugins.LabelTagger`
(the ``tagger``), the label evidence of each chunk is asked for right after its captions;
a file item then goes to it as its path, so the tagger reuses the logits it just computed
(other captioners get the :class:`~fortekit.plugins.AudioItem`, with its id and text). The
captions become the items' stored captions; the evidence is saved with the index
(:mod:`fortekit.search.index.evidence_file`).

Example:
    >>> from fortekit.plugins import AudioItem
    >>> items = [AudioItem(path="rain.wav", text="rain on a roof", item_id="rain")]
    >>> caption_audio("stored", items)
    (['rain on a roof'], None)
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from fortekit._checks import check_int
from fortekit.errors import AudioIndexError, Errors, FortekitError
from fortekit.plugins.protocols import AudioInput, AudioItem, Captioner, LabelTagger

if TYPE_CHECKING:
    from fortekit.plugins.evidence import LabelEvidence

__all__ = ["CAPTION_CHUNK", "caption_audio", "captioner_name"]

#: Items per captioner call: bounds the waveforms a captioner holds at once.
CAPTION_CHUNK = 256


def captioner_name(captioner: Any) -> str:
    """The name a captioner is recorded under: its ``name``, else its class name.

    Example:
        >>> captioner_name(object())
        'object'
    """
    return str(getattr(captioner, "name", type(captioner).__name__))


def _audio_input(item: AudioItem | AudioInput, tagger: bool) -> AudioInput:
    """For a tagger a file item as its path (it keeps the logits of the files it last saw), else the item."""
    if tagger and isinstance(item, AudioItem) and item.path is not None and item.samples is None:
        return os.fspath(item.path)
    return item


def caption_audio(
    captioner: Captioner | str, items: Sequence[AudioItem | AudioInput], *, progress: bool = False,
    chunk_size: int = CAPTION_CHUNK,
) -> tuple[list[str], LabelEvidence | None]:
    """One caption per item, and the captioner's label evidence when it is a ``LabelTagger``.

    Args:
        captioner: a :class:`~fortekit.plugins.Captioner`, or its registered name (built
            with no options).
        items: the audio items (an :class:`~fortekit.plugins.AudioItem` with a path goes to
            a ``LabelTagger`` as that path).
        progress: a tqdm progress bar on stderr.
        chunk_size: items per captioner call.

    Returns:
        (captions, evidence): the captions in item order ("" where the captioner had
        nothing), and a :class:`~fortekit.search.formula.evidence.LabelEvidence` with one row per
        item, or None for a captioner without ``label_evidence()``.

    Raises:
        EvaluationError: the captioner failed or returned no str per item (E482, E483).
        AudioIndexError: label evidence that is no ``LabelEvidence``, has another number of
            rows or changes its labels between calls (E622); a bad `chunk_size` (E613).
        FortekitError: the captioner's own coded errors (an unreadable file, ...).

    Example:
        >>> caption_audio("stored", [AudioItem(text="a bell rings")], chunk_size=8)[0]
        ['a bell rings']
    """
    from tqdm import tqdm

    from fortekit.search.index.item_captions import captions_from_captioner

    check_int(chunk_size, name="chunk_size", error=AudioIndexError, message=Errors.E613)
    if isinstance(captioner, str):
        from fortekit.plugins import get_captioner

        captioner = get_captioner(captioner)
    name = captioner_name(captioner)
    tagger = isinstance(captioner, LabelTagger)
    inputs = [_audio_input(item, tagger) for item in items]
    captions: list[str] = []
    parts: list[LabelEvidence] = []
    with tqdm(total=len(inputs), desc=f"captioning ({name})", unit="item", file=sys.stderr,
              disable=not progress) as bar:
        for start in range(0, len(inputs), chunk_size):
            chunk = inputs[start:start + chunk_size]
            captions.extend(captions_from_captioner(captioner, chunk))
            if tagger:
                parts.append(_chunk_evidence(captioner, name, chunk, parts[0].labels if parts else None))
            bar.update(len(chunk))
    return captions, _joined(parts) if parts else None


def _chunk_evidence(
    captioner: Any, name: str, chunk: list[AudioInput], labels: tuple[str, ...] | None,
) -> LabelEvidence:
    from fortekit.plugins.evidence import LabelEvidence

    try:
        evidence = captioner.label_evidence(chunk)
    except FortekitError:
        raise
    except Exception as exc:
        raise AudioIndexError(Errors.E622.format(
            name=name, problem=f"label_evidence() raised {type(exc).__name__}: {exc}",
        )) from exc
    if not isinstance(evidence, LabelEvidence):
        problem = f"label_evidence() returned a {type(evidence).__name__}"
    elif len(evidence) != len(chunk):
        problem = f"label_evidence() returned {len(evidence)} rows for {len(chunk)} items"
    elif labels is not None and evidence.labels != labels:
        problem = "label_evidence() returned other labels for a later batch of items"
    else:
        return evidence
    raise AudioIndexError(Errors.E622.format(name=name, problem=problem))


def _joined(parts: list[LabelEvidence]) -> LabelEvidence:
    import torch

    from fortekit.plugins.evidence import LabelEvidence

    if len(parts) == 1:
        return parts[0]
    return LabelEvidence(parts[0].labels, torch.cat([part.matrix for part in parts]))
