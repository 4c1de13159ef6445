"""Stage 1, query refinement: the batched beam search, its per-query state and config,
anchors, candidate pools, the text-embedding cache, results and explanations.

Example:
    >>> from fortekit.search.stage1.config import RefineConfig
    >>> RefineConfig.online().max_depth
    2
"""
