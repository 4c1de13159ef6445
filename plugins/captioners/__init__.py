"""Built-in captioners for Stage 3: ``stored`` and ``hf-captioner``.

Get one with :func:`fortekit.plugins.get_captioner`.
"""
