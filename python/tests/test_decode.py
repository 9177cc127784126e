"""The decode-step fusions (wt.linear_fused, wt.rope_kv_cache) against their
definitions in include/webtensor.h, computed in NumPy float64."""
import numpy as np
import pytest

import webtensor as wt

R = np.random.default_rng(11)


def rand(*shape):
    return R.uniform(-1.0, 1.0, size=shape).astype(np.float32)


def f64(a):
    return np.asarray(a, dtype=np.float64)


def rms_norm(x, w, eps):
    x = f64(x)
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * f64(w)


def silu(y):
    return y / (1 + np.exp(-y))


# 3 rows: the fused kernel (up to 16 rows of x); 20 rows: the composition.
@pytest.mark.parametrize("rows", [3, 20])
def test_linear_fused_norm_swiglu_residual(ctx, rows):
    k, n = 12, 10
    x, w, b = rand(rows, k), rand(n, k), rand(n)
    nw, res = rand(k), rand(rows, n // 2)
    got = wt.linear_fused(wt.tensor(x), wt.tensor(w), wt.tensor(b), rms_norm=True,
                          norm_weight=wt.tensor(nw), norm_eps=1e-5, swiglu=True,
                          residual=wt.tensor(res))
    y = rms_norm(x, nw, 1e-5) @ f64(w).T + b
    want = silu(y[:, :n // 2]) * y[:, n // 2:] + res
    assert got.shape == (rows, n // 2) and got.dtype == wt.float32
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-5)


def test_linear_fused_plain_and_norm_without_weight(ctx):
    x, w = rand(2, 3, 8), rand(5, 8)
    np.testing.assert_allclose(wt.linear_fused(wt.tensor(x), wt.tensor(w)).numpy(),
                               f64(x) @ f64(w).T, rtol=1e-4, atol=1e-5)
    got = wt.linear_fused(wt.tensor(x), wt.tensor(w), rms_norm=True)
    want = rms_norm(x, np.ones(8), 1e-6) @ f64(w).T
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-5)


# input_gelu (a transformer MLP's fc2(gelu(h)) + residual): 40 rows, one product.
def test_linear_fused_input_gelu_residual(ctx):
    from math import erf
    h, w, b, res = rand(2, 20, 12), rand(7, 12), rand(7), rand(2, 20, 7)
    got = wt.linear_fused(wt.tensor(h), wt.tensor(w), wt.tensor(b), residual=wt.tensor(res),
                          input_gelu=True)
    g = f64(h) * 0.5 * (1 + np.vectorize(erf)(f64(h) / np.sqrt(2)))
    np.testing.assert_allclose(got.numpy(), g @ f64(w).T + b + res, rtol=1e-4, atol=1e-5)


def test_linear_fused_f16_result_f32(ctx):
    x, w = rand(2, 16), rand(6, 16)
    xh, wh = x.astype(np.float16), w.astype(np.float16)
    got = wt.linear_fused(wt.tensor(xh), wt.tensor(wh), result_f32=True)
    assert got.dtype == wt.float32
    # f16 operands, sums in f32: the reference from the rounded operands.
    np.testing.assert_allclose(got.numpy(), f64(xh) @ f64(wh).T, rtol=1e-3, atol=1e-3)


def test_linear_fused_bad_input(ctx):
    x, w = wt.tensor(rand(2, 4)), wt.tensor(rand(5, 4))
    with pytest.raises(wt.WebtensorError):
        wt.linear_fused(x, w, swiglu=True)  # an odd number of output features
    with pytest.raises(wt.WebtensorError):
        wt.linear_fused(x, wt.tensor(rand(5, 3)))


def rope(v, pos, theta=10000.0):
    """rotate_half rope of v [..., D] at position pos."""
    d = v.shape[-1]
    f = theta ** (-2 * np.arange(d // 2) / d)
    c, s = np.cos(pos * f), np.sin(pos * f)
    a, b = f64(v)[..., :d // 2], f64(v)[..., d // 2:]
    return np.concatenate([a * c - b * s, b * c + a * s], -1)


def rope_kv_cache_ref(cache, qkv, hq, p):
    """The cache after the step and q, as include/webtensor.h defines them."""
    bsz, s_len, heads, d = qkv.shape
    hkv = (heads - hq) // 2
    t = cache.shape[2]
    t0 = min(max(p, 0), t - s_len)
    cache = f64(cache).copy()
    q = np.zeros((bsz, hq, s_len, d))
    for b in range(bsz):
        for s in range(s_len):
            for j in range(hkv):
                cache[b, j, t0 + s] = rope(qkv[b, s, hq + j], p + s)
                cache[b, hkv + j, t0 + s] = qkv[b, s, hq + hkv + j]
            for h in range(hq):
                q[b, h, s] = rope(qkv[b, s, h], p + s)
    return cache, q


@pytest.mark.parametrize("offset,position", [(3, None), (1, 2), (5, None)])
def test_rope_kv_cache(ctx, offset, position):
    bsz, s_len, hq, hkv, d, t = 2, 2, 4, 2, 8, 6
    qkv, cache0 = rand(bsz, s_len, hq + 2 * hkv, d), rand(bsz, 2 * hkv, t, d)
    cache = wt.tensor(cache0)
    pos = None if position is None else wt.tensor(np.array([position], np.int32))
    q = wt.rope_kv_cache(cache, wt.tensor(qkv), hq, theta=10000.0, offset=offset, position=pos)
    # offset 5 with T - S = 4: the rows written start at 4, the positions at 5.
    want_cache, want_q = rope_kv_cache_ref(cache0, qkv, hq, offset + (position or 0))
    assert q.shape == (bsz, hq, s_len, d) and q.dtype == wt.float32
    np.testing.assert_allclose(q.numpy(), want_q, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(cache.numpy(), want_cache, rtol=1e-4, atol=1e-5)


def test_rope_kv_cache_linear_scaling(ctx):
    # Linear scaling divides every frequency by the factor: the same as
    # unscaled rope at position / factor.
    bsz, s_len, hq, hkv, d, t, factor = 1, 3, 2, 1, 8, 4, 4.0
    qkv = rand(bsz, s_len, hq + 2 * hkv, d)
    q = wt.rope_kv_cache(wt.tensor(rand(bsz, 2 * hkv, t, d)), wt.tensor(qkv), hq, offset=1, scaling="linear",
                         factor=factor)
    want = np.stack([np.stack([rope(qkv[0, s, h], (1 + s) / factor) for s in range(s_len)]) for h in range(hq)])
    np.testing.assert_allclose(q.numpy()[0], want, rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError):
        wt.rope_kv_cache(wt.tensor(rand(bsz, 2 * hkv, t, d)), wt.tensor(qkv), hq, scaling="yarn")


def test_rope_kv_cache_bad_input(ctx):
    qkv = wt.tensor(rand(1, 1, 4, 8))
    with pytest.raises(TypeError):
        wt.rope_kv_cache(rand(1, 2, 4, 8), qkv, 2)
    with pytest.raises(wt.WebtensorError):
        wt.rope_kv_cache(wt.tensor(rand(1, 2, 4, 6)), qkv, 2)  # head sizes differ


# out= (wt_linear_fused_options.into): the result written into a view of a
# larger tensor, the rest of it untouched; a wrong shape is an error.
def test_linear_fused_out(ctx):
    x, w = rand(1, 8), rand(6, 8)
    big = wt.tensor(np.full((1, 10), 7.0, np.float32))
    view = big[:, 2:8]
    got = wt.linear_fused(wt.tensor(x), wt.tensor(w), rms_norm=True, out=view)
    want = rms_norm(x, np.ones(8), 1e-6) @ f64(w).T
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-5)
    b = big.numpy()
    assert (b[:, :2] == 7).all() and (b[:, 8:] == 7).all()
    np.testing.assert_allclose(b[:, 2:8], want, rtol=1e-4, atol=1e-5)
    with pytest.raises(wt.ShapeError):
        wt.linear_fused(wt.tensor(x), wt.tensor(w), out=big[:, 0:5])
