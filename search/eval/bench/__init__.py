"""The generated benchmark: a collection of captioned sounds and the small CLAP trained on it.

- :mod:`fortekit.search.eval.bench.soundgen`: ``fortekit bench generate``, the sound generator
  (docs/soundgen.md);
- :mod:`fortekit.search.eval.bench.soundclap`: ``fortekit bench train-clap``, the small CLAP and
  its tagger trained on such a collection (docs/soundclap.md).

Example:
    >>> from fortekit.search.eval.bench.soundgen.scene import CLIP_SECONDS
    >>> CLIP_SECONDS
    5.0
"""
