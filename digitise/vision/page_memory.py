"""Memory a decoded page holds: shared with the process's other readers, and kept for the next page."""

from __future__ import annotations

import ctypes
import sys
from contextlib import AbstractContextManager, nullcontext
from typing import Protocol

#: What a decoded page takes at its peak, for each byte of its pixels: its picture, the grey and
#: levelled copies made of it and the reduced ones (a 600-megapixel colour page: 1.8 GB of pixels,
#: 3.4 GB at its peak).
PAGE_PEAK_FACTOR = 1.9


class PageMemory(Protocol):
    """Memory shared by the processes that decode pages at once (a batch's workers): each page holds its
    share while it is decoded and read (:func:`share_page_memory`)."""

    def hold(self, nbytes: int) -> AbstractContextManager[None]:
        """Hold ``nbytes`` of the shared memory for the block, waiting while others hold too much of it."""


#: The memory pages decoded in this process hold a share of (None: no one to share with).
_page_memory: PageMemory | None = None


def share_page_memory(memory: PageMemory | None) -> PageMemory | None:
    """Make every page decoded in this process from now on hold its peak (:data:`PAGE_PEAK_FACTOR`) in
    ``memory`` while it is decoded and read; None: no more. Returns what was shared before."""
    global _page_memory
    before, _page_memory = _page_memory, memory
    return before


def shared_page_memory() -> PageMemory | None:
    """The memory pages decoded in this process now hold their peak in (:func:`share_page_memory`); None: none."""
    return _page_memory


def held_in_page_memory(pixels: int, pixel_bytes: int) -> AbstractContextManager[None]:
    """Hold a page's peak in the shared page memory, if there is one."""
    memory = _page_memory
    return nullcontext() if memory is None else memory.hold(int(pixels * pixel_bytes * PAGE_PEAK_FACTOR))


#: glibc's mallopt parameters, and the values :func:`keep_freed_memory` sets.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_MMAP_THRESHOLD = 128 << 20
_TRIM_THRESHOLD = 256 << 20
_memory_kept = False


def keep_freed_memory() -> None:
    """Let this process reuse the memory of one page's large buffers for the next (glibc only).

    A 300-dpi colour page allocates ~70 MB in a few large blocks (the file,
    the inflated rows, the picture). glibc gives each block over its mmap
    threshold its own mapping and unmaps it when freed, so every page
    faults all of it in again: ~15,000 page faults, ~20 ms of CPU a page
    (decode 70 -> 50 ms on the batch pages). Raising the threshold to
    128 MB and the trim threshold to 256 MB keeps freed blocks in the heap
    for the next page; a process keeps at most 256 MB it does not use.
    Called once per process by :func:`digitise.vision.read.read_pages`;
    does nothing elsewhere than on glibc.
    """
    global _memory_kept
    if _memory_kept:
        return
    _memory_kept = True
    if not sys.platform.startswith("linux"):
        return
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # pragma: no cover - not glibc (musl has no mallopt)
        return
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)
    mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD)
