"""Optimizers from Python: SGD and AdamW against PyTorch's update formulas
in float64 NumPy, parameter groups, clipping by global norm, schedules and
gradient accumulation equal to the whole batch."""
import math

import numpy as np
import pytest

import webtensor as wt


def leaf(a):
    t = wt.tensor(np.asarray(a, np.float32))
    t.requires_grad = True
    return t


def give_grad(t, g):
    """Accumulates g into t's gradient: d sum(t * g) / dt."""
    wt.sum(t * wt.tensor(np.asarray(g, np.float32))).backward()


def grads(rng, steps, n):
    return [rng.standard_normal(n) for _ in range(steps)]


@pytest.mark.parametrize("nesterov,dampening", [(False, 0.0), (False, 0.3), (True, 0.0)])
def test_sgd_matches_formulas(ctx, rng, nesterov, dampening):
    p0 = rng.standard_normal(6)
    lr, mom, wd = 0.1, 0.9, 0.05
    w = leaf(p0)
    opt = wt.optim.SGD([w], lr=lr, momentum=mom, dampening=dampening, weight_decay=wd, nesterov=nesterov)
    p, buf = p0.astype(np.float32).astype(np.float64), None
    for t, g in enumerate(grads(rng, 4, 6), 1):
        g = g.astype(np.float32).astype(np.float64)
        give_grad(w, g)
        opt.step()
        opt.zero_grad()
        d = g + wd * p
        buf = d if t == 1 else mom * buf + (1 - dampening) * d
        p = p - lr * (d + mom * buf if nesterov else buf)
    np.testing.assert_allclose(w.numpy(), p, atol=1e-5)
    assert opt.steps == 4 and w.grad is None


def test_adamw_groups_match_formulas(ctx, rng):
    p0 = rng.standard_normal(5)
    lr, b1, b2, eps = 0.05, 0.8, 0.95, 1e-6
    w, b = leaf(p0), leaf(p0)
    opt = wt.optim.AdamW([{"params": [w], "weight_decay": 0.1}, {"params": [b], "weight_decay": 0.0}],
                         lr=lr, betas=(b1, b2), eps=eps)
    ref = [p0.astype(np.float32).astype(np.float64) for _ in range(2)]
    m = [np.zeros(5), np.zeros(5)]
    v = [np.zeros(5), np.zeros(5)]
    for t, g in enumerate(grads(rng, 3, 5), 1):
        g = g.astype(np.float32).astype(np.float64)
        give_grad(w, g)
        give_grad(b, g)
        opt.step()
        opt.zero_grad()
        for j, wd in enumerate((0.1, 0.0)):
            ref[j] = ref[j] * (1 - lr * wd)
            m[j] = b1 * m[j] + (1 - b1) * g
            v[j] = b2 * v[j] + (1 - b2) * g * g
            ref[j] = ref[j] - lr * (m[j] / (1 - b1 ** t)) / (np.sqrt(v[j] / (1 - b2 ** t)) + eps)
    np.testing.assert_allclose(w.numpy(), ref[0], atol=2e-5)
    np.testing.assert_allclose(b.numpy(), ref[1], atol=2e-5)


def test_read_steps_counts_the_steps_taken(ctx, rng):
    w = leaf(rng.standard_normal(4))
    opt = wt.optim.AdamW([w], lr=0.01)
    assert opt.read_steps() == 0
    for _ in range(3):
        give_grad(w, rng.standard_normal(4))
        opt.step()
        opt.zero_grad()
    # No graph replays here: the device's count is the host's.
    assert opt.read_steps() == 3 and opt.steps == 3


def test_clip_grad_norm(ctx):
    a, b = leaf([1.0, 2.0, 3.0]), leaf([4.0, 5.0])
    give_grad(a, [3.0, 0.0, -4.0])
    give_grad(b, [12.0, 0.0])
    norm = wt.optim.clip_grad_norm_([a, b], 6.5)
    assert abs(float(norm.numpy()) - 13.0) < 1e-5
    s = 6.5 / (13 + 1e-6)
    np.testing.assert_allclose(a.grad.numpy(), np.array([3.0, 0.0, -4.0]) * s, atol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), np.array([12.0, 0.0]) * s, atol=1e-6)


def test_schedules(ctx):
    for i in range(12):
        want = (i + 1) / 3 if i < 3 else 0.1 + 0.45 * (1 + math.cos(math.pi * min(1.0, (i - 3) / 7)))
        got = wt.optim.schedule_lr(i, "cosine", lr=1.0, warmup_steps=3, total_steps=10, min_lr=0.1)
        assert abs(got - want) < 1e-12
    assert wt.optim.schedule_lr(7, "step", lr=1.0, step_size=3, gamma=0.5) == 0.25
    w = leaf([0.0])
    opt = wt.optim.SGD([w], lr=0.3)
    opt.set_schedule("step", lr=1.0, step_size=1, gamma=0.5)
    for _ in range(3):
        give_grad(w, [1.0])
        opt.step()
        opt.zero_grad()
    np.testing.assert_allclose(w.numpy(), [-1.75], atol=1e-6)
    opt.set_schedule(None)
    assert opt.lr == 0.3
    with pytest.raises(wt.InvalidArgumentError):
        wt.optim.schedule_lr(-1)


def test_accumulation_equals_whole_batch(ctx, rng):
    x = rng.standard_normal((8, 3)).astype(np.float32)
    y = (np.arange(8) % 4).astype(np.int32)
    w0 = (rng.standard_normal((4, 3)) * 0.5).astype(np.float32)
    whole, micro = leaf(w0), leaf(w0)
    ow, om = wt.optim.AdamW([whole], lr=0.01), wt.optim.AdamW([micro], lr=0.01)
    wt.cross_entropy(wt.linear(wt.tensor(x), whole), wt.tensor(y)).backward()
    for k in range(4):
        sl = slice(2 * k, 2 * k + 2)
        loss = wt.cross_entropy(wt.linear(wt.tensor(x[sl]), micro), wt.tensor(y[sl]))
        (loss * 0.25).backward()
    np.testing.assert_allclose(micro.grad.numpy(), whole.grad.numpy(), rtol=1e-5, atol=1e-7)
    ow.step()
    om.step()
    np.testing.assert_allclose(micro.numpy(), whole.numpy(), atol=1e-6)


def test_bad_params(ctx):
    plain = wt.tensor(np.zeros(3, np.float32))
    with pytest.raises(wt.InvalidArgumentError):
        wt.optim.SGD([plain])
    with pytest.raises(wt.InvalidArgumentError):
        wt.optim.AdamW([])


# --- the optimizer steps and backward ops bound from the catalogue


def test_sgd_and_adamw_steps(ctx, rng):
    p0 = rng.standard_normal(5).astype(np.float32)
    g = rng.standard_normal(5).astype(np.float32)
    p, buf = wt.tensor(p0), wt.zeros([5])
    wt.sgd_step(p, wt.tensor(g), buf, {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.01})
    np.testing.assert_allclose(p.numpy(), p0 - 0.1 * (g + 0.01 * p0), atol=1e-6)
    q, m, v = wt.tensor(p0), wt.zeros([5]), wt.zeros([5])
    wt.adamw_step(q, wt.tensor(g), m, v, 1, {"lr": 0.01, "betas": (0.9, 0.99), "weight_decay": 0.0})
    # The first AdamW step moves each element by lr * g / (|g| + eps).
    np.testing.assert_allclose(q.numpy(), p0 - 0.01 * g / (np.abs(g) + 1e-8), atol=1e-6)


def test_backward_ops(ctx, rng):
    dy = rng.standard_normal((4, 3)).astype(np.float32)
    idx = np.array([2, 0, 2, 1], np.int32)
    want = np.zeros((5, 3), np.float64)
    np.add.at(want, idx, dy)
    np.testing.assert_allclose(wt.embedding_backward(wt.tensor(dy), wt.tensor(idx), 5).numpy(), want, atol=1e-6)
    # max pool 2x2 over a 2x2 plane: the gradient lands on the index given.
    d1 = np.array([[[[3.0]]]], np.float32)
    at = np.array([[[[2]]]], np.int32)
    dx = wt.max_pool2d_backward(wt.tensor(d1), wt.tensor(at), wt.zeros([1, 1, 2, 2])).numpy()
    np.testing.assert_allclose(dx, [[[[0, 0], [3, 0]]]])
    dx = wt.avg_pool2d_backward(wt.tensor(d1), wt.zeros([1, 1, 2, 2]), {"kernel": 2}).numpy()
    np.testing.assert_allclose(dx, np.full((1, 1, 2, 2), 0.75))
    x = rng.standard_normal((2, 3, 5, 5)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    dyc = rng.standard_normal((2, 4, 3, 3)).astype(np.float32)
    dxc, dw, db = wt.conv2d_backward(wt.tensor(dyc), wt.tensor(x), wt.tensor(w))
    assert dxc.shape == (2, 3, 5, 5) and dw.shape == (4, 3, 3, 3)
    np.testing.assert_allclose(db.numpy(), dyc.sum(axis=(0, 2, 3)), rtol=1e-5, atol=1e-5)
    # dw[o, c, 0, 0] = sum over n, i, j of dy[n, o, i, j] * x[n, c, i, j]
    np.testing.assert_allclose(dw.numpy()[:, :, 0, 0], np.einsum("noij,ncij->oc", dyc, x[:, :, :3, :3]),
                               rtol=1e-4, atol=1e-4)
    xl = rng.standard_normal((3, 6)).astype(np.float32)
    dyl = rng.standard_normal((3, 6)).astype(np.float32)
    _, dwl, dbl = wt.layernorm_backward(wt.tensor(dyl), wt.tensor(xl), wt.ones([6]))
    xh = (xl - xl.mean(1, keepdims=True)) / np.sqrt(xl.var(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(dbl.numpy(), dyl.sum(0), atol=1e-5)
    np.testing.assert_allclose(dwl.numpy(), (dyl * xh).sum(0), atol=1e-4)
    xb = rng.standard_normal((4, 2, 3)).astype(np.float32)
    dyb = rng.standard_normal((4, 2, 3)).astype(np.float32)
    _, _, dbb = wt.batch_norm_backward(wt.tensor(dyb), wt.tensor(xb), None, None, wt.ones([2]), {"training": True})
    np.testing.assert_allclose(dbb.numpy(), dyb.sum(axis=(0, 2)), atol=1e-5)


def test_grad_scaler(ctx, rng):
    x = rng.standard_normal((8, 3)).astype(np.float32)
    y = (np.arange(8) % 4).astype(np.int32)
    w0 = (rng.standard_normal((4, 3)) * 0.5).astype(np.float32)

    def loss_of(w):  # f32 master weights, f16 compute
        return wt.cross_entropy(wt.linear(wt.tensor(x).astype("float16"), w.astype("float16")), wt.tensor(y))
    ws, wp = leaf(w0), leaf(w0)
    os_, op = wt.optim.AdamW([ws], lr=0.01), wt.optim.AdamW([wp], lr=0.01)
    scaler = wt.optim.GradScaler(init_scale=1024.0, growth_interval=2)
    for _ in range(3):
        scaler.scale(loss_of(ws)).backward()
        scaler.step(os_)
        scaler.update()
        os_.zero_grad()
        loss_of(wp).backward()
        op.step()
        op.zero_grad()
    np.testing.assert_allclose(ws.numpy(), wp.numpy(), atol=1e-6)
    assert scaler.get_scale() == 2048.0 and not scaler.found_inf
    before = ws.numpy()
    big = wt.optim.GradScaler(init_scale=3e38)
    (big.scale(loss_of(ws)) * 4.0).backward()
    big.step(os_)
    assert big.found_inf and abs(big.get_scale() - 1.5e38) < 1e32
    np.testing.assert_array_equal(ws.numpy(), before)
