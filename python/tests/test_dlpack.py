"""DLPack both ways with NumPy. On the CPU backend float32, float16 and
int32 memory is shared (checked by writing on one side and reading on the
other); bool, other dtypes and negative strides are copied. A WebGPU tensor
reports kDLWebGPU and exports only a host copy that is asked for."""
import gc
import sys

import numpy as np
import pytest

import webtensor as wt
from conftest import BACKEND

CPU = BACKEND == "cpu"
cpu_only = pytest.mark.skipif(not CPU, reason="zero-copy host memory is the CPU backend's")
webgpu_only = pytest.mark.skipif(CPU, reason="kDLWebGPU tensors are the WebGPU backends'")


class Producer:
    """A DLPack producer handing out one capsule (what a library that is
    not NumPy would give)."""

    def __init__(self, capsule, device=(1, 0)):
        self.capsule, self.device = capsule, device

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        return self.capsule

    def __dlpack_device__(self):
        return self.device


def live(ctx):
    gc.collect()
    return ctx.memory_stats()["live_tensors"]


# ----------------------------------------------------------------- export

@cpu_only
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32])
def test_export_shares_memory(ctx, rng, dtype):
    ref = (rng.standard_normal((3, 5)) * 10).astype(dtype)
    t = wt.tensor(ref, context=ctx)
    assert t.__dlpack_device__() == (1, 0)
    a = np.from_dlpack(t)
    assert a.dtype == dtype and a.shape == (3, 5)
    np.testing.assert_array_equal(a, ref)
    # A write through the tensor is seen by the array: the same memory.
    t[1, 2] = 42
    assert a[1, 2] == 42


@cpu_only
def test_export_views_strides_offsets(ctx):
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    t = wt.tensor(base, context=ctx)
    for view, ref in ((t[1:, ::2], base[1:, ::2]), (t.T, base.T), (t[2], base[2]),
                      (t[1:3, 4:], base[1:3, 4:]), (t[..., None], base[..., None]),
                      (t[0:1].expand(3, 6), np.broadcast_to(base[0:1], (3, 6))),
                      (t[1, 1], base[1, 1]), (t[:0], base[:0])):
        a = np.from_dlpack(view)
        assert a.shape == ref.shape
        np.testing.assert_array_equal(a, ref)
    t[2, 4] = -1
    assert np.from_dlpack(t[1:, ::2])[1, 2] == -1


@cpu_only
def test_export_keeps_the_tensor_alive(ctx):
    before = live(ctx)
    t = wt.tensor(np.arange(6, dtype=np.float32), context=ctx)
    a = np.from_dlpack(t[2:])
    t.release()  # the capsule holds its own reference
    del t
    assert live(ctx) == before + 1
    np.testing.assert_array_equal(a, [2, 3, 4, 5])
    del a
    assert live(ctx) == before


@cpu_only
def test_unconsumed_capsule_frees_its_reference(ctx):
    before = live(ctx)
    t = wt.tensor([1.0, 2.0], context=ctx)
    for _ in range(3):
        cap = t.__dlpack__()
        assert "dltensor" in repr(cap)
        del cap
    cap = t.__dlpack__(max_version=(1, 0))
    assert "dltensor_versioned" in repr(cap)
    del cap, t
    assert live(ctx) == before


@cpu_only
def test_export_copy_and_bool(ctx):
    t = wt.tensor([1.0, 2.0, 3.0], context=ctx)
    a = np.from_dlpack(Producer(t.__dlpack__(copy=True)))
    t[0] = 9
    assert a[0] == 1  # a copy
    b = wt.tensor([True, False, True], context=ctx)
    with pytest.raises(BufferError, match="4-byte words"):
        b.__dlpack__(copy=False)
    # bool is a host copy of one byte an element, kDLBool.
    back = wt.from_dlpack(Producer(b.__dlpack__()), context=ctx)
    assert back.dtype == np.bool_
    np.testing.assert_array_equal(back.numpy(), [True, False, True])


def test_export_refuses_a_tensor_that_requires_grad(ctx):
    w = wt.tensor([1.0, 2.0], context=ctx)
    w.requires_grad = True
    with pytest.raises(BufferError, match="detach"):
        w.__dlpack__()
    np.testing.assert_array_equal(np.from_dlpack(Producer(
        w.detach().__dlpack__(dl_device=(1, 0), copy=True))), [1, 2])


@webgpu_only
def test_webgpu_reports_kdlwebgpu_and_copies_only_when_asked(ctx):
    t = wt.tensor(np.arange(6, dtype=np.float32).reshape(2, 3), context=ctx)
    dev = t.__dlpack_device__()
    assert dev[0] == 15
    with pytest.raises(BufferError, match="kDLWebGPU"):
        t.__dlpack__()
    with pytest.raises(BufferError):
        np.from_dlpack(t)
    with pytest.raises(BufferError):
        t.__dlpack__(dl_device=(1, 0), copy=False)
    with pytest.raises(BufferError):
        t.__dlpack__(dl_device=(2, 0), copy=True)  # CUDA: not offered
    cap = t.__dlpack__(dl_device=(1, 0), copy=True)
    np.testing.assert_array_equal(np.from_dlpack(Producer(cap)), t.numpy())
    # Versioned: flagged as a copy, read back through our own consumer.
    cap = t[:, 1:].__dlpack__(max_version=(1, 0), dl_device=(1, 0), copy=True)
    with wt.Context("cpu") as cpu:
        back = wt.from_dlpack(Producer(cap), context=cpu)
        np.testing.assert_array_equal(back.numpy(), [[1, 2], [4, 5]])


# ----------------------------------------------------------------- import

@cpu_only
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32])
def test_import_shares_memory(ctx, dtype):
    n = np.arange(12).reshape(3, 4).astype(dtype)
    refs = sys.getrefcount(n)
    t = wt.from_dlpack(n, context=ctx)
    assert t.dtype == dtype and t.shape == (3, 4)
    n[0, 1] = 50           # NumPy writes, the tensor reads
    assert t.numpy()[0, 1] == 50
    t[2, 3] = 77           # the tensor writes (copy_into), NumPy reads
    assert n[2, 3] == 77
    np.testing.assert_array_equal((t * 2).numpy(), n.astype(np.float64) * 2)
    assert sys.getrefcount(n) > refs  # the tensor holds the array
    del t
    gc.collect()
    assert sys.getrefcount(n) == refs


@cpu_only
def test_import_strided_views_share(ctx):
    n = np.arange(30, dtype=np.float32).reshape(5, 6)
    for view in (n.T, n[::2, 1:], n[1:4, 3], n[None, 2:, ::3]):
        t = wt.from_dlpack(view, context=ctx)
        np.testing.assert_array_equal(t.numpy(), view)
        np.testing.assert_array_equal(wt.sum(t, axis=0).numpy(), view.sum(axis=0))
    t = wt.from_dlpack(n[::2, 1:], context=ctx)
    n[2, 1] = -3
    assert t.numpy()[1, 0] == -3


@cpu_only
def test_import_outlives_the_producer(ctx):
    t = wt.from_dlpack(np.arange(5, dtype=np.int32) * 3, context=ctx)  # the only reference
    gc.collect()
    np.testing.assert_array_equal(t.numpy(), [0, 3, 6, 9, 12])
    v = t[1:]
    del t
    gc.collect()
    np.testing.assert_array_equal(v.numpy(), [3, 6, 9, 12])


@pytest.mark.parametrize("src,want", [
    (np.arange(6.0).reshape(2, 3), np.float32),                 # float64: converted
    (np.arange(6, dtype=np.int64)[::-1], np.int32),             # negative stride, int64
    (np.array([True, False, True]), np.bool_),                  # bool: one byte an element
    (np.arange(8, dtype=np.uint8).reshape(2, 4)[:, ::2], np.int32),
    (np.full((), 2.5, np.float32), np.float32),                 # 0-d
    (np.zeros((0, 3), np.float32), np.float32),                 # empty
])
def test_import_copies_what_it_cannot_share(ctx, src, want):
    t = wt.from_dlpack(src, context=ctx)
    assert t.dtype == want and t.shape == src.shape
    np.testing.assert_array_equal(t.numpy(), src.astype(want))


def test_import_copy_flags(ctx):
    n = np.arange(4, dtype=np.float32)
    t = wt.from_dlpack(n, context=ctx, copy=True)
    n[0] = 9
    assert t.numpy()[0] == 0
    with pytest.raises(BufferError):
        wt.from_dlpack(np.arange(4.0), context=ctx, copy=False)
    if CPU:
        s = wt.from_dlpack(n, context=ctx, copy=False)
        assert s.numpy()[0] == 9
    else:
        with pytest.raises(BufferError, match="not the CPU backend"):
            wt.from_dlpack(n, context=ctx, copy=False)


def test_round_trip_and_tensor_input(ctx):
    t = wt.tensor([[1.0, 2.0], [3.0, 4.0]], context=ctx)
    same = wt.from_dlpack(t, context=ctx)   # a second handle, no copy
    assert same.context is ctx
    np.testing.assert_array_equal(same.numpy(), t.numpy())
    if CPU:
        a = np.from_dlpack(t)
        back = wt.from_dlpack(a, context=ctx)
        t[0, 0] = 5
        assert a[0, 0] == 5
        # NumPy marks DLPack imports read-only; read-only memory is copied
        # (a tensor could be written in place), so back kept the old value.
        assert not a.flags.writeable and back.numpy()[0, 0] == 1
    with pytest.raises(TypeError, match="not a DLPack producer"):
        wt.from_dlpack([1, 2], context=ctx)


def test_bad_capsules(ctx):
    with pytest.raises(BufferError, match="not a DLPack capsule"):
        wt.from_dlpack(Producer(object()), context=ctx)
    n = np.arange(3, dtype=np.float32)
    cap = n.__dlpack__()
    wt.from_dlpack(Producer(cap), context=ctx)
    with pytest.raises(BufferError, match="already consumed"):
        wt.from_dlpack(Producer(cap), context=ctx)
    with pytest.raises(BufferError, match="not host memory"):
        wt.from_dlpack(Producer(n.__dlpack__(), device=(2, 0)), context=ctx, copy=False)
    with pytest.raises(BufferError):
        wt.from_dlpack(np.arange(3, dtype=np.complex64), context=ctx)
