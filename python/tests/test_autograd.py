"""Autograd from Python: gradients against NumPy's closed forms (float64),
accumulation, clearing, no_grad, detach, retain_graph, the functional
form, and the errors the C tape reports."""
import numpy as np
import pytest

import webtensor as wt


def close(a, b, tol=1e-4):
    a = a.numpy() if isinstance(a, wt.Tensor) else np.asarray(a)
    np.testing.assert_allclose(a.astype(np.float64), np.asarray(b, np.float64), rtol=tol, atol=tol)


def leaf(a):
    t = wt.tensor(np.asarray(a, np.float32))
    t.requires_grad = True
    return t


def test_square_sum(ctx, rng):
    x = rng.standard_normal((3, 4)).astype(np.float32)
    t = leaf(x)
    assert t.requires_grad and t.grad is None
    loss = wt.sum(t * t)
    assert loss.requires_grad
    loss.backward()
    close(t.grad, 2 * x.astype(np.float64))


def test_mlp_against_numpy(ctx, rng):
    x = rng.standard_normal((5, 4)).astype(np.float32)
    w1 = rng.standard_normal((6, 4)).astype(np.float32) * 0.5
    w2 = rng.standard_normal((3, 6)).astype(np.float32) * 0.5
    labels = np.array([0, 2, 1, 1, 0], np.int32)
    tw1, tw2 = leaf(w1), leaf(w2)
    h = wt.linear(wt.tensor(x), tw1)
    r = wt.tanh(h)
    logits = wt.linear(r, tw2)
    loss = wt.cross_entropy(logits, wt.tensor(labels))
    loss.backward()
    # The same network's gradients in float64 NumPy.
    X, W1, W2 = x.astype(np.float64), w1.astype(np.float64), w2.astype(np.float64)
    H = X @ W1.T
    R = np.tanh(H)
    L = R @ W2.T
    P = np.exp(L - L.max(1, keepdims=True))
    P /= P.sum(1, keepdims=True)
    dL = P.copy()
    dL[np.arange(5), labels] -= 1
    dL /= 5
    dW2 = dL.T @ R
    dR = dL @ W2
    dH = dR * (1 - R * R)
    dW1 = dH.T @ X
    close(loss, -np.log(P[np.arange(5), labels]).mean())
    close(tw2.grad, dW2)
    close(tw1.grad, dW1)


def test_accumulate_and_clear(ctx):
    t = leaf([1.0, 2.0, 3.0])
    wt.sum(t * 3.0).backward()
    wt.sum(t * 3.0).backward()
    close(t.grad, [6, 6, 6])
    t.grad = None
    assert t.grad is None
    wt.sum(t * 2.0).backward()
    close(t.grad, [2, 2, 2])
    t.zero_grad()
    assert t.grad is None
    with pytest.raises(wt.InvalidArgumentError):
        t.grad = wt.tensor(np.ones(3, np.float32))


def test_no_grad_and_detach(ctx):
    t = leaf([1.0, -2.0])
    with wt.no_grad():
        assert not wt.is_grad_enabled()
        y = t * 2.0
    assert wt.is_grad_enabled()
    assert not y.requires_grad
    d = t.detach()
    assert not d.requires_grad
    close(d, [1, -2])
    z = wt.sum(d * t)  # gradient flows through t only
    z.backward()
    close(t.grad, [1, -2])


def test_retain_graph_and_seed(ctx):
    t = leaf([[1.0, 2.0], [3.0, 4.0]])
    y = t * t
    y.backward(wt.tensor(np.ones((2, 2), np.float32)), retain_graph=True)
    close(t.grad, [[2, 4], [6, 8]])
    y.backward(wt.tensor(np.full((2, 2), 0.5, np.float32)))
    close(t.grad, [[3, 6], [9, 12]])
    with pytest.raises(wt.InvalidArgumentError):
        y.backward(wt.tensor(np.ones((2, 2), np.float32)))  # the graph was freed


def test_functional_grad(ctx):
    a, b = leaf([1.0, 2.0]), leaf([3.0, 5.0])
    out = wt.sum(a * b)
    ga, gb = wt.grad(out, [a, b])
    close(ga, [3, 5])
    close(gb, [1, 2])
    assert a.grad is None and b.grad is None  # .grad untouched


def test_errors(ctx):
    x = wt.tensor(np.array([1.0, 2.0], np.float32))
    with pytest.raises(wt.InvalidArgumentError):
        wt.sum(x).backward()  # nothing requires grad
    t = leaf([1.0, 2.0])
    y = t * 2.0
    with pytest.raises(wt.InvalidArgumentError):
        y.requires_grad = False  # a recorded result
    i = wt.argmax(t, 0)
    assert not i.requires_grad
