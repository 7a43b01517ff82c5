"""huge_pages.empty: packed weights placed for 2 MiB pages (a speed matter only: the same values,
the same kernel results), and torch.empty where that cannot help or is switched off."""
import gc
import mmap

import pytest
import torch

from fairseq_fast.kernels import huge_pages, small_gemm

pytestmark = pytest.mark.skipif(not huge_pages.enabled(), reason="no MADV_HUGEPAGE here")


def test_a_large_tensor_starts_on_a_2_mib_boundary_and_keeps_its_memory():
    t = huge_pages.empty((3, 1000, 700), torch.float32)  # 8.4 MB: not a whole number of pages
    assert t.shape == (3, 1000, 700) and t.dtype == torch.float32 and t.is_contiguous()
    assert t.data_ptr() % huge_pages.HUGE_PAGE == 0
    gc.collect()  # the tensor keeps its mapping alive
    t.fill_(0.25)
    t[-1, -1, -1] = 2.0
    assert float(t.sum()) == 0.25 * (t.numel() - 1) + 2.0
    half = huge_pages.empty((2048, 1024), torch.float16)
    assert half.dtype == torch.float16 and half.data_ptr() % huge_pages.HUGE_PAGE == 0


def test_small_tensors_and_the_switch_take_torch_empty(monkeypatch):
    def no_mapping(*a, **k):
        raise AssertionError("mmap called")
    monkeypatch.setattr(mmap, "mmap", no_mapping)
    assert huge_pages.empty((100, 100), torch.float32).shape == (100, 100)  # under 2 MiB
    monkeypatch.setenv(huge_pages.OFF_ENV, "0")
    assert not huge_pages.enabled()
    assert huge_pages.empty((1024, 1024), torch.float32).shape == (1024, 1024)


def test_a_mapping_that_fails_falls_back(monkeypatch):
    def failing(*a, **k):
        raise OSError("no memory")
    monkeypatch.setattr(mmap, "mmap", failing)
    assert huge_pages.empty((1024, 1024), torch.float32).shape == (1024, 1024)


@pytest.mark.skipif(not small_gemm.available(), reason="kernel not built")
def test_packed_weights_are_the_same_in_either_memory(monkeypatch):
    torch.manual_seed(0)
    w = torch.randn(1500, 1024)  # 6.3 MB packed
    x = torch.randn(3, 1024)
    placed = small_gemm.pack(w)
    assert placed.data.data_ptr() % huge_pages.HUGE_PAGE == 0
    monkeypatch.setenv(huge_pages.OFF_ENV, "0")
    plain = small_gemm.pack(w)
    assert torch.equal(placed.data, plain.data)
    assert torch.equal(small_gemm.linear(x, placed), small_gemm.linear(x, plain))
