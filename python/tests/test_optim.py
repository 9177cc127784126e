"""wt.optim against PyTorch's update rules written in NumPy (float64), over
several steps of a loss whose gradient is known: loss = sum(c * p * p),
d loss / d p = 2 c p."""
import numpy as np
import pytest

import webtensor as wt


def _sgd_ref(p, c, steps, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
    p = p.astype(np.float64).copy()
    buf = None
    for _ in range(steps):
        d = 2 * c * p + weight_decay * p
        if momentum:
            buf = d.copy() if buf is None else momentum * buf + (1 - dampening) * d
            d = d + momentum * buf if nesterov else buf
        p -= lr * d
    return p


def _adam_ref(p, c, steps, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, decoupled=True):
    p = p.astype(np.float64).copy()
    m = np.zeros_like(p)
    v = np.zeros_like(p)
    b1, b2 = betas
    for t in range(1, steps + 1):
        g = 2 * c * p
        if decoupled:
            p *= 1 - lr * weight_decay
        else:
            g = g + weight_decay * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        p -= lr * (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + eps)
    return p


def _train(ctx, opt_cls, p0, c, steps, **kw):
    p = wt.tensor(p0, context=ctx)
    p.requires_grad = True
    ct = wt.tensor(c, context=ctx)
    opt = opt_cls([p], **kw)
    for _ in range(steps):
        loss = (ct * p * p).sum()
        loss.backward()
        opt.step()
        opt.zero_grad()
    assert p.grad is None
    return p.detach().numpy(), opt, p


@pytest.mark.parametrize("kw", [
    dict(lr=0.1),
    dict(lr=0.05, momentum=0.9),
    dict(lr=0.05, momentum=0.9, nesterov=True),
    dict(lr=0.05, momentum=0.8, dampening=0.3, weight_decay=0.01),
    dict(lr=0.02, weight_decay=0.1, momentum=0.5, nesterov=True),
])
def test_sgd_matches_pytorch_rules(ctx, rng, kw):
    p0 = rng.standard_normal((3, 4)).astype(np.float32)
    c = rng.uniform(0.5, 1.5, (3, 4)).astype(np.float32)
    got, opt, p = _train(ctx, wt.optim.SGD, p0, c, 6, **kw)
    np.testing.assert_allclose(got, _sgd_ref(p0, c, 6, **kw), rtol=2e-5, atol=1e-6)
    if kw.get("momentum"):
        assert opt.state_of(p)["momentum_buffer"].shape == (3, 4)


@pytest.mark.parametrize("cls,kw,decoupled", [
    (wt.optim.AdamW, dict(lr=0.01), True),
    (wt.optim.AdamW, dict(lr=0.05, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1), True),
    (wt.optim.Adam, dict(lr=0.01), False),
    (wt.optim.Adam, dict(lr=0.02, weight_decay=0.05), False),
])
def test_adam_family_matches_pytorch_rules(ctx, rng, cls, kw, decoupled):
    p0 = rng.standard_normal((5,)).astype(np.float32)
    c = rng.uniform(0.5, 1.5, (5,)).astype(np.float32)
    got, opt, p = _train(ctx, cls, p0, c, 8, **kw)
    if cls is wt.optim.AdamW:
        kw.setdefault("weight_decay", 1e-2)
    np.testing.assert_allclose(got, _adam_ref(p0, c, 8, decoupled=decoupled, **kw),
                               rtol=2e-5, atol=1e-6)
    assert opt.state_of(p)["step"] == 8


def test_groups_skip_and_errors(ctx):
    a = wt.tensor([1.0, 2.0], context=ctx)
    b = wt.tensor([3.0], context=ctx)
    a.requires_grad = b.requires_grad = True
    opt = wt.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.0}], lr=0.5)
    (a * a).sum().backward()           # b gets no gradient: skipped
    opt.step()
    np.testing.assert_allclose(a.detach().numpy(), [0.0, 0.0])
    assert b.detach().numpy().tolist() == [3.0]
    opt.param_groups[0]["lr"] = 0.25   # a schedule changes the group
    opt.zero_grad()                    # (gradients accumulate until cleared)
    ((a + 1) * (a + 1)).sum().backward()
    opt.step()
    np.testing.assert_allclose(a.detach().numpy(), [-0.5, -0.5])
    with pytest.raises(ValueError):
        wt.optim.SGD([a], lr=-1)
    with pytest.raises(ValueError):
        wt.optim.SGD([a], nesterov=True)
    with pytest.raises(ValueError):
        wt.optim.AdamW([a], betas=(1.0, 0.9))
    with pytest.raises(ValueError):
        wt.optim.AdamW([])
    with pytest.raises(TypeError):
        wt.optim.AdamW([np.zeros(2)])
    # The library's checks: an f16 parameter is refused with its message.
    h = wt.tensor([1.0], dtype="float16", context=ctx)
    h.requires_grad = True
    (h * h).sum().backward()
    with pytest.raises(wt.WebtensorError):
        wt.optim.AdamW([h]).step()
