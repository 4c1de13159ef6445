"""Built-in elaborators: ``hf-llm`` (a local causal LM with the paper's prompts) and ``file``.

Get one with :func:`fortekit.plugins.get_elaborator`; the prompt templates and the
numbered-list parser live in :mod:`fortekit.plugins.elaborators.prompts`.
"""
