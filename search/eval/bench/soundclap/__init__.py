"""Training the small CLAP and its tagger on a generated sound collection (``fortekit bench train-clap``).

:func:`~fortekit.search.eval.bench.soundclap.train.train_small_clap` reads a collection written by
``fortekit bench generate``, caches its log-mels and caption embeddings, trains the CNN audio
encoder, the text projection and the tag head together, and writes ``small_clap.*`` (the
``small-clap`` backbone) and ``tagger.*`` (the ``tagger`` captioner). See docs/soundclap.md.
"""
