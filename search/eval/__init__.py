"""The benchmark harness: data sets and tasks, metrics, systems, sweeps, reports and plots.

Example:
    >>> from fortekit.search.eval.metrics import hits_at
    >>> hits_at([1, 3, 12], 10).tolist()
    [1.0, 1.0, 0.0]
"""
