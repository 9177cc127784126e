"""Every op of the catalogue through Python against a NumPy reference in
float64 (the library computes in float32)."""
import math
import os
import re

import numpy as np
import pytest

import ew_refs

import webtensor as wt
import webtensor.nn.functional as F

R = np.random.default_rng(7)


def rand(*shape, lo=-2.0, hi=2.0):
    return R.uniform(lo, hi, size=shape).astype(np.float32)


def f64(a):
    return np.asarray(a, dtype=np.float64)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


# The elementwise ops: their float64 references are the rows of
# tests/ew_refs.def (one per op, shared with the C and JavaScript suites).
EW = ew_refs.load()


with open(os.path.join(os.path.dirname(__file__), "..", "..", "src", "core", "ops.def")) as _f:
    _OPS_DEF = _f.read()
# nparams of each unary row of the catalogue (src/core/ops.def).
NPARAMS = {m.group(1): int(m.group(2))
           for m in re.finditer(r"^WT_UNARY\(\w+, (\w+), \w+, (\d)", _OPS_DEF, re.M)}
UNARY = sorted(n for n, r in EW.items() if r["kind"] == "unary")
BINARY = sorted(n for n, r in EW.items() if r["kind"] == "binary")


def ew_inputs(shape, lo, hi, with_zeros):
    """Uniform in the row's [lo, hi); a row with a bool result also gets
    zeros (every third element), which its ops treat apart."""
    x = rand(*shape, lo=lo, hi=hi)
    if with_zeros:
        x.reshape(-1)[::3] = 0
    return x


def close(got, want, rtol=2e-4, atol=2e-5):
    got = got.numpy() if isinstance(got, wt.Tensor) else np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype == bool:
        assert got.dtype == bool
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(f64(got), f64(want), rtol=rtol, atol=atol)


def test_every_elementwise_row_has_one_reference():
    rows = set(re.findall(r"^WT_(?:UNARY|BINARY)\(\w+, (\w+),", _OPS_DEF, re.M))
    assert rows == set(EW), "ops.def and tests/ew_refs.def differ: %s" % sorted(rows ^ set(EW))


@pytest.mark.parametrize("name", UNARY)
def test_unary(ctx, name):
    row = EW[name]
    x = ew_inputs((3, 17), row["lo"], row["hi"], row["bool"])
    want = row["ref"](f64(x))
    want = want.astype(bool) if row["bool"] else want
    params = row["params"][:NPARAMS[name]]
    t = wt.tensor(x)
    close(getattr(wt, name)(t, *params), want)
    close(getattr(t, name)(*params), want)


def test_unary_defaults_and_aliases(ctx):
    """PyTorch's defaults of the parameters, and the aliases."""
    x = rand(4, 9)
    t = wt.tensor(x)
    close(wt.leaky_relu(t), np.where(x < 0, 0.01 * f64(x), x))
    close(wt.elu(t), np.where(x > 0, x, np.expm1(f64(x))))
    close(wt.clip(t, -0.5, 0.75), np.clip(f64(x), -0.5, 0.75))
    m = x > 0
    close(wt.logical_not(wt.tensor(m)), ~m)


@pytest.mark.parametrize("name", BINARY)
def test_binary_broadcast_and_scalar(ctx, name):
    row = EW[name]
    a = ew_inputs((3, 1, 5), row["lo"], row["hi"], row["bool"])
    b = ew_inputs((4, 5), row["lo2"], row["hi2"], row["bool"])
    b[0, 2] = a[0, 0, 2]  # equal pairs for the comparisons

    def want(u, v):
        r = row["ref"](f64(u), v if np.isscalar(v) else f64(v))
        return r.astype(bool) if row["bool"] else r
    ta, tb = wt.tensor(a), wt.tensor(b)
    close(getattr(wt, name)(ta, tb), want(a, b))
    close(getattr(wt, name)(ta, 1.5), want(a, 1.5))
    if name.startswith("logical"):  # bool tensors, and a bool scalar
        ma, mb = a > 0, b > 0
        close(getattr(wt, name)(wt.tensor(ma), wt.tensor(mb)), want(ma, mb))
        close(getattr(wt, name)(wt.tensor(ma), True), want(ma, 1.0))


def test_where_masked_fill_cast(ctx):
    a, b = rand(3, 4), rand(4)
    m = a > 0
    close(wt.where(wt.tensor(m), wt.tensor(a), wt.tensor(b)), np.where(m, a, b))
    close(wt.masked_fill(wt.tensor(a), wt.tensor(m), -7.0), np.where(m, -7.0, a))
    close(wt.tensor(a * 10).cast("int32"), (a * 10).astype(np.int32))
    close(wt.tensor(a).astype(wt.float16), a.astype(np.float16), rtol=1e-3, atol=1e-3)


def test_matmul_linear(ctx):
    a, b = rand(2, 5, 7), rand(7, 3)
    close(wt.tensor(a) @ wt.tensor(b), f64(a) @ f64(b), rtol=1e-4, atol=1e-4)
    close(wt.matmul(wt.tensor(a), wt.tensor(b)), f64(a) @ f64(b), rtol=1e-4, atol=1e-4)
    w, bias = rand(4, 7), rand(4)
    close(wt.linear(wt.tensor(a), wt.tensor(w), wt.tensor(bias)), f64(a) @ f64(w).T + bias,
          rtol=1e-4, atol=1e-4)
    close(F.linear(wt.tensor(a), wt.tensor(w)), f64(a) @ f64(w).T, rtol=1e-4, atol=1e-4)


REDUCE = {
    "sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod,
    "logsumexp": lambda x, axis=None, keepdims=False: np.log(np.sum(np.exp(x), axis=axis,
                                                                     keepdims=keepdims)),
}


@pytest.mark.parametrize("name", sorted(REDUCE))
@pytest.mark.parametrize("axis,keepdims", [(None, False), (1, True), ((0, 2), False), (-1, False)])
def test_reductions(ctx, name, axis, keepdims):
    x = rand(3, 4, 5, lo=0.5, hi=1.5) if name == "prod" else rand(3, 4, 5)
    got = getattr(wt, name)(wt.tensor(x), axis=axis, keepdims=keepdims)
    close(got, REDUCE[name](f64(x), axis=axis, keepdims=keepdims), rtol=1e-4, atol=1e-5)


def test_var_std_norm_all_any_arg(ctx):
    x = rand(4, 6)
    t = wt.tensor(x)
    close(wt.var(t, axis=1), np.var(f64(x), axis=1, ddof=1))
    close(wt.std(t, axis=0, correction=0), np.std(f64(x), axis=0))
    close(t.std(), np.std(f64(x), ddof=1))
    close(wt.norm(t), np.linalg.norm(f64(x).ravel()))
    close(wt.norm(t, 1, axis=1), np.abs(f64(x)).sum(axis=1))
    close(wt.norm(t, math.inf, axis=0), np.abs(f64(x)).max(axis=0))
    m = x > 0
    close(wt.all(wt.tensor(m), axis=1), m.all(axis=1))
    close(wt.any(wt.tensor(m), axis=0, keepdims=True), m.any(axis=0, keepdims=True))
    close(wt.argmax(t, axis=1), np.argmax(x, axis=1).astype(np.int32))
    close(wt.argmin(t, axis=0), np.argmin(x, axis=0).astype(np.int32))
    close(wt.cumsum(t, 1), np.cumsum(f64(x), axis=1))
    close(wt.cumprod(t, 0), np.cumprod(f64(x), axis=0), rtol=1e-4)


def test_creation(ctx):
    close(wt.zeros([2, 3]), np.zeros((2, 3)))
    close(wt.ones([4], dtype="int32"), np.ones(4, np.int32))
    close(wt.full([2, 2], 3.5), np.full((2, 2), 3.5))
    close(wt.arange(0, 5, 0.5), np.arange(0, 5, 0.5))
    close(wt.arange(2, 11, 3, dtype="int32"), np.arange(2, 11, 3, dtype=np.int32))
    close(wt.linspace(-1, 1, 7), np.linspace(-1, 1, 7))
    close(wt.linspace(0, 1, 4, endpoint=False), np.linspace(0, 1, 4, endpoint=False))
    close(wt.eye(3), np.eye(3))
    close(wt.eye(3, 4, 1), np.eye(3, 4, 1))
    assert wt.zeros([2]).context is ctx
    z = wt.zeros_like(wt.tensor(rand(2, 3)))
    close(z, np.zeros((2, 3)))


def test_random(ctx):
    u = wt.rand([64, 64], seed=3).numpy()
    assert u.dtype == np.float32 and u.min() >= 0 and u.max() < 1
    assert abs(u.mean() - 0.5) < 0.02
    # The same seed gives the same bits; another seed other values.
    np.testing.assert_array_equal(u, wt.rand([64, 64], seed=3).numpy())
    assert not np.array_equal(u, wt.rand([64, 64], seed=4).numpy())
    n = wt.randn([128, 128], seed=5).numpy()
    assert abs(n.mean()) < 0.03 and abs(n.std() - 1) < 0.03
    x = rand(32, 32) + 3
    d = wt.dropout(wt.tensor(x), 0.25, seed=9).numpy()
    kept = d != 0
    assert 0.65 < kept.mean() < 0.85
    np.testing.assert_allclose(d[kept], x[kept] / 0.75, rtol=1e-6)
    # The mask is wt.rand's with the same seed: element i dropped where it is below p.
    np.testing.assert_array_equal(~kept, wt.rand([32, 32], seed=9).numpy() < 0.25)


def test_views(ctx):
    x = rand(2, 3, 4)
    t = wt.tensor(x)
    close(wt.reshape(t, [4, -1]), x.reshape(4, -1))
    close(t.reshape(6, 4), x.reshape(6, 4))
    close(wt.permute(t, [2, 0, 1]), x.transpose(2, 0, 1))
    close(wt.transpose(t), np.swapaxes(x, -2, -1))
    close(t.transpose(0, 2), np.swapaxes(x, 0, 2))
    close(t.T, x.T)
    close(wt.slice(t, 2, 1, 4, 2), x[:, :, 1:4:2])
    e = rand(3, 1)
    close(wt.expand(wt.tensor(e), [2, 3, 5]), np.broadcast_to(e, (2, 3, 5)))
    close(wt.copy(t), x)
    close(wt.contiguous(t.T), x.T)
    s = rand(1, 3, 1)
    close(wt.squeeze(wt.tensor(s)), s.squeeze())
    close(wt.squeeze(wt.tensor(s), 0), s.squeeze(0))
    close(wt.unsqueeze(t, 1), x[:, None])
    close(wt.flatten(t), x.ravel())
    close(wt.flatten(t, 1), x.reshape(2, -1))


def test_movement(ctx):
    a, b = rand(2, 3), rand(2, 3)
    ta, tb = wt.tensor(a), wt.tensor(b)
    close(wt.concat([ta, tb], 1), np.concatenate([a, b], 1))
    close(wt.cat([ta, tb]), np.concatenate([a, b], 0))
    close(wt.stack([ta, tb], 1), np.stack([a, b], 1))
    close(wt.pad(ta, [1, 2]), np.pad(a, ((0, 0), (1, 2))))
    close(wt.pad(ta, [1, 1], "reflect"), np.pad(a, ((0, 0), (1, 1)), mode="reflect"))
    close(wt.pad(ta, [2, 0], "replicate", 0), np.pad(a, ((0, 0), (2, 0)), mode="edge"))
    close(wt.repeat(ta, [2, 1]), np.tile(a, (2, 1)))
    close(wt.tile(ta, [1, 3]), np.tile(a, (1, 3)))
    close(wt.flip(ta, 1), a[:, ::-1])
    close(wt.roll(ta, 1, 1), np.roll(a, 1, 1))
    close(wt.roll(ta, [1, -1], [0, 1]), np.roll(a, (1, -1), (0, 1)))
    sq = rand(4, 4)
    close(wt.tril(wt.tensor(sq)), np.tril(sq))
    close(wt.triu(wt.tensor(sq), 1), np.triu(sq, 1))
    idx = np.array([[0, 2, 1], [1, 1, 0]], np.int32)
    close(wt.gather(ta, 1, wt.tensor(idx)), np.take_along_axis(a, idx, 1))
    close(wt.index_select(ta, 1, wt.tensor([2, 0])), a[:, [2, 0]])
    table = rand(5, 3)
    close(wt.embedding(wt.tensor(table), wt.tensor([[4, 0], [1, 1]])), table[[[4, 0], [1, 1]]])
    src = rand(2, 3)
    want = a.astype(np.float64).copy()
    for i in range(2):
        for j in range(3):
            want[i, idx[i, j]] += src[i, j]
    close(wt.scatter_add(ta, 1, wt.tensor(idx), wt.tensor(src)), want)
    src2 = rand(2, 2)
    want2 = f64(a).copy()
    want2[:, 2] += src2[:, 0]
    want2[:, 0] += src2[:, 1]
    close(wt.index_add(ta, 1, wt.tensor([2, 0]), wt.tensor(src2)), want2)
    close(wt.one_hot(wt.tensor([0, 3, 1])), np.eye(4, dtype=np.int32)[[0, 3, 1]])
    x = rand(3, 6)
    v, i = wt.sort(wt.tensor(x))
    close(v, np.sort(x, -1))
    close(i, np.argsort(x, -1, kind="stable").astype(np.int32))
    v, i = wt.sort(wt.tensor(x), 0, True)
    close(v, -np.sort(-x, 0))
    close(wt.argsort(wt.tensor(x)), np.argsort(x, -1, kind="stable").astype(np.int32))
    v, i = wt.topk(wt.tensor(x), 2)
    close(v, -np.sort(-x, -1)[:, :2])
    close(i, np.argsort(-x, -1, kind="stable")[:, :2].astype(np.int32))
    pieces = wt.split(wt.tensor(x), [2, 4], 1)
    for p, want in zip(pieces, np.split(x, [2], 1)):
        close(p, want)
    pieces = wt.split(wt.tensor(x), 4, 1)
    assert [p.shape for p in pieces] == [(3, 4), (3, 2)]
    pieces = wt.tensor(x).chunk(3, 1)
    for p, want in zip(pieces, np.split(x, 3, 1)):
        close(p, want)
    dst = wt.zeros([2, 3])
    wt.copy_into(dst, wt.tensor(a[0]))
    close(dst, np.broadcast_to(a[0], (2, 3)))


def conv2d_ref(x, w, b, stride=1, pad=0, dil=1, groups=1):
    x = np.pad(f64(x), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    oh = (h - dil * (kh - 1) - 1) // stride + 1
    ow = (wd - dil * (kw - 1) - 1) // stride + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for g in range(groups):
        for i in range(kh):
            for j in range(kw):
                patch = x[:, g * cg:(g + 1) * cg, i * dil:i * dil + stride * oh:stride,
                          j * dil:j * dil + stride * ow:stride]
                out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", patch,
                                                         f64(w[g * og:(g + 1) * og, :, i, j]))
    return out + (0 if b is None else f64(b)[None, :, None, None])


def test_convolutions(ctx):
    x, w, b = rand(2, 4, 7, 6), rand(6, 2, 3, 3), rand(6)
    close(F.conv2d(wt.tensor(x), wt.tensor(w), wt.tensor(b), stride=2, padding=1, groups=2),
          conv2d_ref(x, w, b, 2, 1, 1, 2), rtol=1e-4, atol=1e-4)
    close(wt.conv2d(wt.tensor(x), wt.tensor(w), None, {"dilation": 2, "groups": 2}),
          conv2d_ref(x, w, None, 1, 0, 2, 2), rtol=1e-4, atol=1e-4)
    x1, w1 = rand(2, 3, 10), rand(4, 3, 3)
    want = conv2d_ref(x1[:, :, None], w1[:, :, None], None, 1, 0)[:, :, 0]
    close(F.conv1d(wt.tensor(x1), wt.tensor(w1)), want, rtol=1e-4, atol=1e-4)
    # conv_transpose2d is the adjoint of conv2d: <conv(x), y> == <x, convT(y)>.
    xt, wt2 = rand(1, 3, 6, 6), rand(4, 3, 3, 3)
    y = rand(1, 4, 3, 3)
    lhs = (conv2d_ref(xt, wt2, None, 2, 1) * f64(y)).sum()
    ct = F.conv_transpose2d(wt.tensor(y), wt.tensor(wt2), stride=2, padding=1,
                            output_padding=1).numpy()
    assert ct.shape == xt.shape
    assert abs((f64(ct) * f64(xt)).sum() - lhs) < 1e-3 * max(1, abs(lhs))


def test_pooling(ctx):
    x = rand(2, 3, 6, 8)
    win = x.reshape(2, 3, 3, 2, 4, 2)
    close(F.max_pool2d(wt.tensor(x), 2), win.max(axis=(3, 5)))
    close(F.avg_pool2d(wt.tensor(x), 2), f64(win).mean(axis=(3, 5)))
    close(wt.max_pool2d(wt.tensor(x), {"kernel": 2}), win.max(axis=(3, 5)))
    close(F.adaptive_avg_pool2d(wt.tensor(x), (3, 4)), f64(win).mean(axis=(3, 5)))
    close(F.adaptive_max_pool2d(wt.tensor(x), (3, 4)), win.max(axis=(3, 5)))
    close(wt.global_avg_pool2d(wt.tensor(x)), f64(x).mean(axis=(2, 3), keepdims=True))
    close(wt.global_max_pool2d(wt.tensor(x)), x.max(axis=(2, 3), keepdims=True))
    # Padding (top, bottom, left, right): one row above, one column right.
    # Max ignores the padding: pad with -inf and take 2x2 windows.
    xp = np.pad(x, ((0, 0), (0, 0), (1, 0), (0, 1)), constant_values=-np.inf)[:, :, :6, :8]
    winp = xp.reshape(2, 3, 3, 2, 4, 2)
    close(wt.max_pool2d(wt.tensor(x), {"kernel": 2, "padding": (1, 0, 0, 1)}), winp.max(axis=(3, 5)))


def test_upsample2d(ctx):
    x = rand(2, 3, 4, 5)
    # nearest, factor 2: each pixel repeated twice along both axes
    close(wt.upsample2d(wt.tensor(x), 2.0), np.repeat(np.repeat(x, 2, axis=2), 2, axis=3))
    # bilinear, align_corners off (half-pixel centres, clamped at 0), factor 2
    def axis_weights(n_in, n_out):
        src = np.maximum((np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5, 0.0)
        i0 = np.floor(src).astype(int)
        i1 = np.minimum(i0 + 1, n_in - 1)
        w = np.zeros((n_out, n_in))
        w[np.arange(n_out), i0] += 1 - (src - i0)
        w[np.arange(n_out), i1] += src - i0
        return w
    wh, ww = axis_weights(4, 8), axis_weights(5, 10)
    ref = np.einsum("oh,nchw,pw->ncop", wh, f64(x), ww)
    close(wt.upsample2d(wt.tensor(x), 2.0, "bilinear"), ref)


def test_norms_and_softmax(ctx):
    x = rand(3, 4, 8)
    w, b = rand(8), rand(8)
    xd = f64(x)
    mu, var = xd.mean(-1, keepdims=True), xd.var(-1, keepdims=True)
    ln = (xd - mu) / np.sqrt(var + 1e-5) * w + b
    close(wt.layernorm(wt.tensor(x), wt.tensor(w), wt.tensor(b)), ln, rtol=1e-4, atol=1e-4)
    close(F.layer_norm(wt.tensor(x), (8,), wt.tensor(w), wt.tensor(b)), ln, rtol=1e-4, atol=1e-4)
    m2 = xd.reshape(3, -1)
    ln2 = (m2 - m2.mean(-1, keepdims=True)) / np.sqrt(m2.var(-1, keepdims=True) + 1e-5)
    close(wt.layer_norm(wt.tensor(x), 2), ln2.reshape(x.shape), rtol=1e-4, atol=1e-4)
    rms = xd / np.sqrt((xd ** 2).mean(-1, keepdims=True) + 1e-6) * w
    close(wt.rmsnorm(wt.tensor(x), wt.tensor(w)), rms, rtol=1e-4, atol=1e-4)
    close(wt.rms_norm(wt.tensor(x), 1, wt.tensor(w)), rms, rtol=1e-4, atol=1e-4)
    e = np.exp(xd - xd.max(1, keepdims=True))
    close(wt.softmax(wt.tensor(x), 1), e / e.sum(1, keepdims=True))
    close(F.log_softmax(wt.tensor(x)), xd - np.log(np.exp(xd).sum(-1, keepdims=True)))
    x4 = rand(2, 4, 3, 3)
    gm = f64(x4).reshape(2, 2, -1)
    gn = ((gm - gm.mean(-1, keepdims=True)) / np.sqrt(gm.var(-1, keepdims=True) + 1e-5))
    close(F.group_norm(wt.tensor(x4), 2), gn.reshape(x4.shape), rtol=1e-4, atol=1e-4)
    rm, rv = rand(4), rand(4, lo=0.5, hi=1.5)
    bn = (f64(x4) - rm[None, :, None, None]) / np.sqrt(rv[None, :, None, None] + 1e-5)
    close(F.batch_norm(wt.tensor(x4), wt.tensor(rm), wt.tensor(rv)), bn, rtol=1e-4, atol=1e-4)
    mean_b, var_b = f64(x4).mean((0, 2, 3)), f64(x4).var((0, 2, 3))
    bt = (f64(x4) - mean_b[None, :, None, None]) / np.sqrt(var_b[None, :, None, None] + 1e-5)
    close(wt.batch_norm(wt.tensor(x4), None, None, options={"training": True}), bt,
          rtol=1e-4, atol=1e-4)


def test_attention_and_rope(ctx):
    q, k, v = rand(1, 2, 3, 4), rand(1, 2, 5, 4), rand(1, 2, 5, 4)
    s = f64(q) @ np.swapaxes(f64(k), -1, -2) / 2.0
    mask = np.arange(5)[None, :] <= np.arange(3)[:, None] + 2
    sc = np.where(mask, s, -np.inf)
    p = np.exp(sc - sc.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    close(F.scaled_dot_product_attention(wt.tensor(q), wt.tensor(k), wt.tensor(v),
                                         is_causal=True), p @ f64(v), rtol=1e-4, atol=1e-4)
    x = rand(1, 2, 3, 8)
    h = 4
    f = 10000.0 ** (-2 * np.arange(h) / 8)
    ang = (np.arange(3)[:, None] + 2) * f[None, :]
    c, s_ = np.cos(ang), np.sin(ang)
    xd = f64(x)
    want = np.concatenate([xd[..., :h] * c - xd[..., h:] * s_, xd[..., h:] * c + xd[..., :h] * s_],
                          -1)
    close(wt.rope(wt.tensor(x), offset=2), want, rtol=1e-4, atol=1e-4)


def test_training_ops(ctx):
    logits, labels = rand(4, 5), np.array([1, 0, 4, 2], np.int32)
    ld = f64(logits)
    lse = np.log(np.exp(ld).sum(1))
    rows = lse - ld[np.arange(4), labels]
    close(wt.cross_entropy(wt.tensor(logits), wt.tensor(labels)), rows.mean())
    close(F.cross_entropy(wt.tensor(logits), wt.tensor(labels), reduction="none"), rows)
    sm = np.exp(ld - lse[:, None])
    grad = (sm - np.eye(5)[labels]) / 4
    close(wt.cross_entropy_backward(wt.tensor(logits), wt.tensor(labels)), grad)
    x, dy = rand(3, 4), rand(3, 4)
    close(wt.activation_backward("relu", wt.tensor(dy), wt.tensor(x)), dy * (x > 0))
    sg = sigmoid(f64(x))
    close(wt.activation_backward("sigmoid", wt.tensor(dy), wt.tensor(x)), dy * sg * (1 - sg))


# Cases above by op; the catalogue test below checks none is forgotten.
COVERED = set(UNARY) | set(BINARY) | set(REDUCE) | {
    "where", "masked_fill", "cast", "matmul",
    "linear", "var", "std", "norm", "all", "any", "argmax", "argmin", "cumsum", "cumprod",
    "zeros", "ones", "full", "arange", "linspace", "eye", "rand", "randn", "dropout",
    "reshape", "permute", "transpose", "slice", "expand", "copy", "contiguous", "squeeze",
    "unsqueeze", "flatten", "concat", "stack", "pad", "repeat", "tile", "flip", "roll", "tril",
    "triu", "gather", "index_select", "embedding", "scatter_add", "index_add", "one_hot",
    "sort", "argsort", "topk", "split", "chunk", "copy_into", "conv2d", "conv1d",
    "conv_transpose2d", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d",
    "adaptive_max_pool2d", "global_avg_pool2d", "global_max_pool2d", "layernorm",
    "layer_norm", "rmsnorm", "rms_norm", "softmax", "log_softmax", "group_norm", "batch_norm",
    "scaled_dot_product_attention", "rope", "cross_entropy", "cross_entropy_backward",
    "activation_backward", "upsample2d",
    # their NumPy cases are in test_optim.py
    "sgd_step", "adamw_step", "embedding_backward", "max_pool2d_backward", "avg_pool2d_backward",
    "conv2d_backward", "layernorm_backward", "batch_norm_backward",
    # their NumPy cases are in test_decode.py
    "linear_fused", "rope_kv_cache",
}


def test_catalogue_is_bound_and_tested():
    names = {n for n, _ in wt.catalogue()}
    bound = set(wt.OPS) | set(wt.HAND_WRITTEN)
    unbound = names - bound - set(wt.NOT_BOUND)
    assert not unbound, "catalogue ops without a Python form: %s" % sorted(unbound)
    untested = (names & bound) - COVERED
    assert not untested, "ops without a NumPy case here: %s" % sorted(untested)
    for n in names & bound:
        assert callable(getattr(wt, n if n != "tensor_ones" else "ones"))
