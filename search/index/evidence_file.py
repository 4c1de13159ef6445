"""Label evidence beside an audio index: ``evidence.safetensors``, checked on load.

An index whose captions a captioner plug-in wrote (``fortekit index build --audio DIR
--captioner tagger ...``) records the captioner in ``index.json`` (``captioner``,
``captioner_options``); when the captioner is a :class:`~fortekit.plugins.LabelTagger`, its
:class:`~fortekit.search.formula.evidence.LabelEvidence` is saved too:

* ``evidence.safetensors``: one float32 tensor ``probabilities`` of shape (count, labels),
  values in [0, 1], row i for item i (safetensors, never pickle);
* ``index.json``'s ``evidence_labels``: the label phrases, one per column ("a dog barking").

The file is written under a temporary name and renamed, between the removal and the
rewrite of ``index.json`` (see :func:`fortekit.search.index.writing.write_index_files`), so
the matrix and its labels always come from one build. An index without evidence has
``evidence_labels: null`` (or no such key: indexes written before it load unchanged).

Example:
    >>> fields = captioning_fields({"captioner": "tagger", "evidence_labels": ["rain falling"]}, "x")
    >>> fields["captioner"], fields["captioner_options"], fields["evidence_labels"]
    ('tagger', {}, ('rain falling',))
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from fortekit.errors import AudioIndexError, Errors
from fortekit.search.index.format import IndexMeta, check_options

if TYPE_CHECKING:
    from fortekit.plugins.evidence import LabelEvidence

__all__ = ["EVIDENCE_FILE", "captioning_fields", "evidence_writer", "read_evidence"]

#: The file of the evidence matrix in an index directory.
EVIDENCE_FILE = "evidence.safetensors"
_TENSOR = "probabilities"
_FORMAT = "fortekit-label-evidence"


def captioning_fields(data: Mapping[str, Any], path: str | os.PathLike[str]) -> dict[str, Any]:
    """The captioner fields of ``index.json``, checked: ``captioner``, ``captioner_options``,
    ``evidence_labels`` (all optional; an older index has none of them).

    Args:
        data: the JSON object of ``index.json``.
        path: its path, for messages.

    Returns:
        Keyword arguments for :class:`~fortekit.search.index.format.IndexMeta`.

    Raises:
        AudioIndexError: a captioner that is no name or options that are no object of JSON
            values (E600);
            labels that are not distinct non-empty phrases (E621).

    Example:
        >>> captioning_fields({}, "index.json")
        {'captioner': None, 'captioner_options': {}, 'evidence_labels': None}
        >>> captioning_fields({"evidence_labels": ["rain", "rain"]}, "index.json")
        Traceback (most recent call last):
        ...
        fortekit.errors.AudioIndexError: [E621] The label evidence of the audio index, index.json, ...
    """
    def fail(problem: str) -> AudioIndexError:
        fix = "Rebuild the index with `fortekit index build`."
        return AudioIndexError(Errors.E600.format(path=path, problem=problem, fix=fix))

    captioner, options = data.get("captioner"), data.get("captioner_options", {})
    if captioner is not None and (not isinstance(captioner, str) or not captioner.strip()):
        raise fail(f"captioner is {captioner!r}, not null or a captioner name")
    options = check_options(options, "captioner_options", fail)
    labels = data.get("evidence_labels")
    if labels is not None:
        good = isinstance(labels, list) and labels and all(isinstance(x, str) and x.strip() for x in labels)
        if not good or len(set(labels)) != len(labels):
            problem = f"evidence_labels is {labels!r}, not a list of distinct, non-empty label phrases"
            raise AudioIndexError(Errors.E621.format(path=path, problem=problem))
        labels = tuple(labels)
    return {"captioner": captioner, "captioner_options": options, "evidence_labels": labels}


def evidence_writer(evidence: LabelEvidence) -> Any:
    """A callable that writes the evidence matrix to a given path (for ``write_index_files``).

    Example:
        >>> import tempfile
        >>> from fortekit.plugins.evidence import LabelEvidence
        >>> folder = Path(tempfile.mkdtemp())
        >>> evidence_writer(LabelEvidence(("rain falling",), [[0.5]]))(folder / EVIDENCE_FILE)
        >>> sorted(p.name for p in folder.iterdir())
        ['evidence.safetensors']
    """
    matrix = np.ascontiguousarray(evidence.matrix.numpy(), dtype=np.float32)

    def write(target: Path) -> None:
        from safetensors.numpy import save

        target.write_bytes(save({_TENSOR: matrix}, metadata={"format": _FORMAT, "version": "1"}))

    return write


def read_evidence(directory: str | os.PathLike[str], meta: IndexMeta) -> LabelEvidence | None:
    """Read and check ``evidence.safetensors`` when ``index.json`` names labels; None otherwise.

    Args:
        directory: the index directory.
        meta: what ``index.json`` says (count and ``evidence_labels``).

    Returns:
        The :class:`~fortekit.search.formula.evidence.LabelEvidence`, or None for an index without one.

    Raises:
        AudioIndexError: a missing or unreadable file, a tensor of another name, dtype or
            shape, a row count other than the item count, a column count other than the
            number of labels, or a value outside [0, 1] (E621).

    Example:
        >>> read_evidence("any.index", IndexMeta(backbone="enc", dim=2, count=1)) is None
        True
    """
    if meta.evidence_labels is None:
        return None
    path = Path(directory) / EVIDENCE_FILE
    labels = meta.evidence_labels

    def fail(problem: str) -> AudioIndexError:
        return AudioIndexError(Errors.E621.format(path=path, problem=problem))

    if not path.is_file():
        raise fail("the file is missing, but index.json lists evidence_labels")
    try:
        from safetensors.numpy import load_file

        tensors = load_file(os.fspath(path))
    except Exception as exc:  # safetensors raises its own SafetensorError for a damaged header
        raise fail(f"not a readable safetensors file ({type(exc).__name__}: {exc})") from exc
    if set(tensors) != {_TENSOR}:
        raise fail(f"it holds the tensors {sorted(tensors)}, not one named {_TENSOR!r}")
    matrix = tensors[_TENSOR]
    if matrix.dtype != np.float32 or matrix.ndim != 2:
        raise fail(f"its tensor has dtype {matrix.dtype} and shape {matrix.shape}, not float32 "
                   "(items, labels)")
    if matrix.shape[0] != meta.count:
        raise fail(f"it has {matrix.shape[0]} rows, but the index has {meta.count} items")
    if matrix.shape[1] != len(labels):
        raise fail(f"it has {matrix.shape[1]} columns, but index.json lists {len(labels)} labels")
    if matrix.size and (not np.isfinite(matrix).all() or matrix.min() < 0.0 or matrix.max() > 1.0):
        raise fail("a probability is outside [0, 1] or not finite")
    from fortekit.plugins.evidence import LabelEvidence

    return LabelEvidence(labels, matrix)
