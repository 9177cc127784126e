"""The Tensor class: conversions, operators, indexing views, errors and
contexts (lifetime: test_lifetime.py; DLPack: test_dlpack.py)."""
import gc
import weakref

import numpy as np
import pytest

import webtensor as wt


def test_dtype_round_trips(ctx):
    cases = [np.array([[1.5, -2.25], [3.0, 1e-3]], np.float32),
             np.array([1.5, -0.0, 65504.0, 6e-8], np.float16),
             np.array([-2**31, 0, 2**31 - 1], np.int32),
             np.array([[True, False, True]])]
    for a in cases:
        t = wt.tensor(a)
        assert t.dtype == a.dtype and t.shape == a.shape
        back = t.numpy()
        assert back.dtype == a.dtype
        np.testing.assert_array_equal(back, a)
        np.testing.assert_array_equal(np.asarray(t), a)
        assert np.asarray(t, dtype=np.float64).dtype == np.float64


def test_default_dtypes_and_lists(ctx):
    assert wt.tensor([1.0, 2.0]).dtype == np.float32
    assert wt.tensor(np.arange(3.0)).dtype == np.float32  # float64 becomes float32
    assert wt.tensor([1, 2]).dtype == np.int32
    assert wt.tensor([True]).dtype == np.bool_
    assert wt.tensor(3.5).shape == ()
    assert wt.tensor([[1, 2]], dtype="float16").dtype == np.float16
    assert wt.tensor([1, 2], dtype=wt.float32).tolist() == [1.0, 2.0]
    assert wt.tensor(np.zeros((0, 3))).shape == (0, 3)
    with pytest.raises(OverflowError):
        wt.tensor(np.array([2**40]))
    with pytest.raises(TypeError):
        wt.tensor([1 + 2j])
    with pytest.raises(TypeError):
        wt.tensor([1.0], dtype=np.float64)


def test_operators_and_broadcasting(ctx):
    a = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
    b = np.array([1.0, 2.0, 4.0], np.float32)
    ta, tb = wt.tensor(a), wt.tensor(b)
    for got, want in [(ta + tb, a + b), (ta - tb, a - b), (ta * tb, a * b), (ta / tb, a / b),
                      (ta // tb, a // b), (ta % tb, a % b), (ta ** 2, a ** 2), (-ta, -a),
                      (abs(ta), abs(a)), (2 - ta, 2 - a), (1 / tb, 1 / b), (2 ** tb, 2 ** b),
                      (ta + 1, a + 1), (a + tb, a + b), (ta @ tb, a @ b), (ta.T @ ta, a.T @ a)]:
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    for got, want in [(ta < tb, a < b), (ta <= 0, a <= 0), (ta == tb, a == b),
                      (ta != 1, a != 1), (ta > tb, a > b), (ta >= tb, a >= b),
                      (2 > ta, 2 > a)]:
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(got.numpy(), want)
    m1, m2 = ta > 0, tb > 1
    np.testing.assert_array_equal((m1 & m2).numpy(), (a > 0) & (b > 1))
    np.testing.assert_array_equal((m1 | m2).numpy(), (a > 0) | (b > 1))
    np.testing.assert_array_equal((~m1).numpy(), ~(a > 0))
    # Integer tensors keep integer arithmetic; a float scalar promotes (PyTorch's rule).
    ti = wt.tensor([1, 2, 3])
    assert (ti + 1).dtype == np.int32 and (ti * 2.5).dtype == np.float32
    assert (ti + 1).tolist() == [2, 3, 4]
    assert float(wt.tensor(2.0) * 3) == 6.0
    assert wt.tensor([[5]]).item() == 5
    with pytest.raises(ValueError):
        bool(ta)


def test_reductions_methods(ctx):
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    t = wt.tensor(a)
    np.testing.assert_allclose(t.sum(axis=(0, 2), keepdims=True).numpy(),
                               a.sum(axis=(0, 2), keepdims=True))
    np.testing.assert_allclose(t.mean(axis=-1).numpy(), a.mean(axis=-1))
    np.testing.assert_allclose(t.max(axis=1).numpy(), a.max(axis=1))
    assert t.sum().shape == () and float(t.sum()) == a.sum()
    np.testing.assert_allclose(t.reshape(6, 4).transpose().numpy(), a.reshape(6, 4).T)
    np.testing.assert_allclose(t.permute(2, 0, 1).numpy(), a.transpose(2, 0, 1))


def test_indexing_views(ctx):
    a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    t = wt.tensor(a)
    for idx in [1, -1, (slice(None), 2), (slice(1, None), slice(None, None, 2)),
                (Ellipsis, None), (None, 0, Ellipsis, 1), (slice(None, None, -1),),
                (slice(3, 0, -2), 1), (Ellipsis, slice(1, 3)), (0, 1, 2), ([2, 0],),
                (slice(None), [0, 3, 3])]:
        np.testing.assert_array_equal(t[idx].numpy(), a[idx], err_msg=str(idx))
    v = t[1:, ::2]
    assert not v.is_contiguous  # a view, not a copy
    with pytest.raises(IndexError):
        t[3]
    with pytest.raises(IndexError):
        t[0, 0, 0, 0]
    # Writes through a view reach the tensor.
    t[0, 1:3] = 7.0
    a[0, 1:3] = 7.0
    t[2] = wt.tensor(np.ones(5, np.float32))
    a[2] = 1
    t[:, :, 0] = wt.tensor([[-1.0], [-2.0], [-3.0], [-4.0]]).reshape(4)
    a[:, :, 0] = [-1, -2, -3, -4]
    np.testing.assert_array_equal(t.numpy(), a)
    assert len(t) == 3 and [r.shape for r in t] == [(4, 5)] * 3


def test_repr(ctx):
    r = repr(wt.tensor([[1.0, 2.5], [3.0, 4.0]]))
    assert r.startswith("tensor([[1. , 2.5],") and "dtype=float32" in r
    assert "device='%s'" % ctx.device in r
    assert "int32" in repr(wt.tensor([1, 2]))


def test_errors_have_classes_and_messages(ctx):
    a, b = wt.tensor(np.ones((2, 3), np.float32)), wt.tensor(np.ones((4,), np.float32))
    with pytest.raises(wt.ShapeError) as e:
        a + b
    assert isinstance(e.value, wt.WebtensorError) and isinstance(e.value, ValueError)
    assert e.value.status == "WT_ERR_SHAPE" and "[2,3]" in str(e.value)
    with pytest.raises(wt.ShapeError):
        a @ b
    with pytest.raises(wt.WebtensorError):
        wt.tensor([1.0, 2.0]).all()  # all() takes bool masks
    with pytest.raises(wt.UnsupportedError):
        wt.matmul(wt.tensor([[1]]), wt.tensor([[1]]))
    with pytest.raises(wt.InvalidArgumentError):
        a.sum(axis=5)
    with pytest.raises(wt.ShapeError):
        wt.reshape(a, [5, -1])
    with pytest.raises(TypeError):
        wt.zeros([2], dtype="complex64")
    with pytest.raises(ValueError):
        wt.pad(a, [1, 1], "circularish")
    with pytest.raises(ValueError):
        wt.Context("quantum")
    assert set(wt.ERRORS) == set(range(-8, 0))


def test_tensor_keeps_its_context_alive():
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


def test_context_default_and_with(ctx):
    assert wt.default_context() is ctx
    other = wt.Context("cpu")
    with other:
        assert wt.zeros([1]).context is other
    assert wt.zeros([1]).context is ctx
    info = ctx.info()
    assert info["backend"] == ("cpu" if ctx.device == "cpu" else "webgpu")
    t = wt.tensor([1.0, 2.0]).to(other)
    assert t.context is other and t.tolist() == [1.0, 2.0]


def test_generated_files_are_current():
    import os
    import subprocess
    import sys
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run([sys.executable, os.path.join(here, "gen_ops.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
