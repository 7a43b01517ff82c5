"""CPU tensors whose memory the OS may back with 2 MiB pages (transparent huge pages).

    data = huge_pages.empty(shape, dtype)     # torch.empty where 2 MiB pages cannot help

A decoder step at batch 1 streams each packed weight from memory once. In 4 KiB pages a
transformer-big step's ~300 MB is ~75,000 pages: the CPU's stream prefetchers stop at every
page boundary and start again, and the TLB, covering a few MiB, misses on nearly every page. In
2 MiB pages the same weights are ~150 pages, and a thread's stream runs without those restarts.

Where transparent huge pages are in `madvise` mode (/sys/kernel/mm/transparent_hugepage/enabled,
the default of many distributions), the kernel gives them only to memory that asks for them, and
torch's allocator does not ask. So a tensor of at least HUGE_PAGE bytes is placed in an
anonymous mapping of its own, aligned to 2 MiB and advised MADV_HUGEPAGE before it is first
written; the tensor keeps the mapping alive. Where the kernel has no 2 MiB page to give, or
transparent huge pages are off, the same memory is 4 KiB pages, as torch's would be: only speed
depends on it, never a value. FAIRSEQ_FAST_HUGE_PAGES=0 turns it off (read at each call).
"""
import ctypes
import math
import mmap
import os
from typing import Sequence

import torch

OFF_ENV = "FAIRSEQ_FAST_HUGE_PAGES"
HUGE_PAGE = 2 ** 21


def enabled() -> bool:
    """Whether tensors are placed for 2 MiB pages: FAIRSEQ_FAST_HUGE_PAGES is not 0 and the OS
    takes the advice (Linux)."""
    return (os.environ.get(OFF_ENV, "1").strip() != "0" and hasattr(mmap, "MADV_HUGEPAGE")
            and hasattr(mmap, "MAP_ANONYMOUS"))


def empty(shape: Sequence[int], dtype: torch.dtype) -> torch.Tensor:
    """An uninitialised contiguous CPU tensor: in memory advised for 2 MiB pages where it is
    at least HUGE_PAGE bytes and `enabled()`, else torch.empty's."""
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes < HUGE_PAGE or not enabled():
        return torch.empty(tuple(shape), dtype=dtype)
    size = -(-nbytes // HUGE_PAGE) * HUGE_PAGE
    try:  # one page more than needed, to start at a 2 MiB boundary inside it
        region = mmap.mmap(-1, size + HUGE_PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    except OSError:
        return torch.empty(tuple(shape), dtype=dtype)
    address = ctypes.addressof(ctypes.c_char.from_buffer(region))
    offset = -address % HUGE_PAGE
    try:
        region.madvise(mmap.MADV_HUGEPAGE, offset, size)
    except OSError:  # transparent huge pages not built in: 4 KiB pages, still correct
        pass
    flat = torch.frombuffer(region, dtype=torch.uint8, count=nbytes, offset=offset)
    return flat.view(dtype).view(tuple(shape))
