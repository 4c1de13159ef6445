"""Give freed encoder buffers back to the system in a long-running server.

glibc serves allocations over its mmap threshold with ``mmap`` and returns them when they are
freed, but it raises that threshold (up to 32 MiB on 64-bit) each time a large block is freed, so
after a few batches torch's activation buffers come from the heap and are kept. A server that
encodes texts of many lengths then grows by hundreds of megabytes that no cache holds (measured:
+1,086 MB over 300 random batches; +53 MB with the threshold fixed at 4 MiB; docs/serve.md,
"Caches and memory"). Fixing the threshold, as ``MALLOC_MMAP_THRESHOLD_`` does, stops the drift.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

#: glibc's ``M_MMAP_THRESHOLD`` parameter of ``mallopt(3)``.
_M_MMAP_THRESHOLD = -3
#: Blocks at or above this size are mmapped and returned on free (4 MiB: a batch's activations).
MMAP_THRESHOLD_BYTES = 4 * 1024 * 1024


def fix_mmap_threshold(threshold: int = MMAP_THRESHOLD_BYTES) -> str:
    """Fix glibc's mmap threshold for this process; what was done, in words.

    Nothing changes when the user set ``MALLOC_MMAP_THRESHOLD_`` (theirs wins), off Linux, or when
    the C library is not glibc.

    Args:
        threshold: the size in bytes from which a block is mmapped and returned when freed.

    Returns:
        ``"fixed at N bytes"``, or why nothing was changed.

    Example:
        >>> fix_mmap_threshold() in ("fixed at 4194304 bytes", "not glibc", "not Linux",
        ...                          "set by MALLOC_MMAP_THRESHOLD_")
        True
    """
    if "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return "set by MALLOC_MMAP_THRESHOLD_"
    if not sys.platform.startswith("linux"):
        return "not Linux"
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return "not glibc"
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return f"fixed at {threshold} bytes" if mallopt(_M_MMAP_THRESHOLD, threshold) == 1 else "not glibc"
