"""Lifetime, misuse and the GIL: bad input raises (never crashes), tensors
are freed when garbage-collected, contexts outlive their tensors, many
small ops leave memory at its baseline, and waits for the device let other
Python threads run."""
import ctypes
import gc
import threading
import time
import weakref

import numpy as np
import pytest

import webtensor as wt


class _MallInfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd",
                                               "usmblks", "fsmblks", "uordblks", "fordblks",
                                               "keepcost")]


def _heap_in_use():
    """Bytes malloc has handed out and not had back (glibc's mallinfo2 over
    every arena), or None without it. Unlike the resident size it does not
    count memory freed but kept by the allocator, or a GPU driver's queue
    of work not yet run."""
    try:
        fn = ctypes.CDLL(None).mallinfo2
    except (AttributeError, OSError):
        return None
    fn.restype = _MallInfo2
    m = fn()
    return m.uordblks + m.hblkhd


def _stats(ctx):
    gc.collect()
    ctx.sync()
    s = ctx.memory_stats()
    return s["live_tensors"], s["live_bytes"]


def test_released_tensors_and_wrong_arguments_raise(ctx):
    t = wt.tensor([1.0, 2.0])
    t.release()
    t.release()  # twice is harmless
    for call in (lambda: t + 1, lambda: t.numpy(), lambda: t.shape, lambda: wt.exp(t),
                 lambda: wt.concat([t, t]), lambda: wt.tensor([1.0]) * t, lambda: t[0],
                 lambda: t.__dlpack__(), lambda: wt.from_dlpack(t)):
        with pytest.raises(wt.InvalidArgumentError):
            call()
    assert "released" in repr(t)
    a = wt.tensor(np.ones((2, 3), np.float32))
    # Wrong dtypes, shapes, axes and sizes: the library's error, as a class.
    with pytest.raises(wt.UnsupportedError):
        wt.matmul(wt.tensor([[1]]), wt.tensor([[1]]))
    with pytest.raises(wt.ShapeError):
        a @ a
    with pytest.raises(wt.InvalidArgumentError):
        a.sum(axis=-3)
    with pytest.raises(wt.WebtensorError):
        wt.zeros([-1])
    with pytest.raises(wt.WebtensorError):
        wt.zeros([1] * 9)               # more than WT_MAX_DIMS
    with pytest.raises(wt.OutOfMemoryError):
        wt.zeros([2**40, 2**30])
    with pytest.raises(wt.WebtensorError):
        wt.gather(a, 1, wt.tensor([[0.5]]))  # float indices
    with pytest.raises(wt.WebtensorError):
        wt.cross_entropy(a, wt.tensor([0, 1, 2]))
    # Wrong Python types are TypeErrors before the library sees them.
    with pytest.raises(TypeError):
        a.sum(axis="1")
    with pytest.raises(TypeError):
        wt.zeros([2], dtype=object)
    with pytest.raises(TypeError):
        wt.exp("x")
    with pytest.raises(TypeError):
        wt.Tensor()


def test_tensors_of_another_context_and_closed_contexts(ctx):
    other = wt.Context("cpu")
    u, v = wt.tensor([1.0], context=other), wt.tensor([1.0])
    with pytest.raises(wt.InvalidArgumentError, match="different contexts"):
        u + v
    with pytest.raises(wt.InvalidArgumentError):
        wt.concat([u, v])
    with pytest.raises(wt.InvalidArgumentError):
        wt.copy_into(v, u)
    # Tensors outlive a closed context; new ones cannot be made on it.
    other.close()
    other.close()
    assert (u * 2).tolist() == [2.0]
    assert (u + u).context is other
    with pytest.raises(wt.InvalidArgumentError):
        wt.zeros([1], context=other)
    with pytest.raises(wt.InvalidArgumentError):
        wt.tensor([1.0], context=other)
    with pytest.raises(wt.InvalidArgumentError):
        other.memory_stats()
    with pytest.raises(TypeError):
        wt.tensor([1.0], context="cpu")


def test_tensors_are_freed_when_collected(ctx):
    base = _stats(ctx)
    with wt.tensor(np.ones((4, 4), np.float32)):
        assert _stats(ctx)[0] == base[0] + 1
    assert _stats(ctx) == base
    x = wt.tensor(np.ones(8, np.float32))
    ref = weakref.ref(x)
    view = x[2:]
    del x
    gc.collect()
    assert ref() is None
    assert view.tolist() == [1.0] * 6  # the view kept the storage
    del view
    # A reference cycle through a Python object is collected too.

    class Holder:
        pass
    h = Holder()
    h.t, h.me = wt.tensor([1.0, 2.0]), h
    del h
    assert _stats(ctx) == base


def test_contexts_outlive_their_tensors():
    c = wt.Context("cpu")
    t = wt.tensor([1.0, 2.0], context=c)
    r = weakref.ref(c)
    del c
    gc.collect()
    assert r() is not None and t.context is r()
    assert (t + 1).tolist() == [2.0, 3.0]
    del t
    gc.collect()
    assert r() is None
    # A context closed while tensors live: the library keeps it until the
    # last one goes (its views included), then frees it.
    c = wt.Context("cpu")
    t = wt.tensor(np.arange(4, dtype=np.float32), context=c)
    v = t[1:]
    c.close()
    del c, t
    gc.collect()
    assert v.tolist() == [1.0, 2.0, 3.0]


def test_no_leak_over_100000_small_ops(ctx):
    """100,000 small ops: every temporary is freed, so the context's
    tensors and bytes, the Python objects and the heap are back at their
    baseline."""
    n = 100_000
    a = wt.tensor(np.ones(4, np.float32))
    b = wt.tensor(np.full(4, 0.5, np.float32))

    def run(k):
        acc = a
        for i in range(k):
            acc = (acc + a) * b   # two ops a step
            if i % 1000 == 999:
                # A wait now and then, as a training loop reads its loss: a
                # GPU driver's queue of work not yet run (memory it holds,
                # reused later) stays bounded.
                ctx.sync()
        return acc
    def check(k):
        acc = run(k)
        np.testing.assert_allclose(acc.numpy(), 1.0)
    check(n // 10)  # the same path first, to warm the pools and caches
    base = _stats(ctx)
    objects = len(gc.get_objects())
    heap = _heap_in_use()
    check(n // 2)
    assert _stats(ctx) == base
    assert len(gc.get_objects()) <= objects + 10
    if heap is not None:
        # A leaked wt_tensor (~200 bytes) an op would be 20 MB here; 1 MiB
        # allows 10 bytes an op (caches, the interpreter's free lists).
        grown = _heap_in_use() - heap
        assert grown < 1 << 20, "the heap grew by %d bytes" % grown


def test_the_gil_is_released_while_waiting(ctx):
    """A Python thread keeps counting while the main thread is inside one
    library call (ctypes' CDLL drops the GIL around every call): a CPU
    matmul, or on WebGPU the sync that waits for recorded products."""
    cpu = ctx.device == "cpu"
    n = 1536 if cpu else 512
    x = wt.tensor(np.random.default_rng(0).random((n, n), np.float32))
    (x @ x).numpy()  # warm up (pipelines, threads)
    stamps = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            stamps.append(time.perf_counter())
            time.sleep(0.0002)
    th = threading.Thread(target=count)
    th.start()
    try:
        time.sleep(0.02)
        if not cpu:
            y = x
            for _ in range(6):
                y = y @ x * (1.0 / n)
        t0 = time.perf_counter()
        if cpu:
            y = wt.matmul(x, x)
        else:
            ctx.sync()
        t1 = time.perf_counter()
    finally:
        stop.set()
        th.join()
    inside = [s for s in stamps if t0 < s < t1]
    # Were the GIL held, the counter could not run inside the call at all.
    assert t1 - t0 > 0.01, "the call was too short to tell (%.4f s)" % (t1 - t0)
    assert len(inside) >= 5, "%d counts in %.3f s inside the call" % (len(inside), t1 - t0)
