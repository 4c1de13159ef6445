"""fol-refine's file handling: query files, output and resume, lookup tables, the batch runner.

Example:
    >>> from fortekit.search.refine.query_io import detect_format
    >>> callable(detect_format)
    True
"""
