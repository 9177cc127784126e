#!/usr/bin/env python3
"""PyTorch's gradients of three whole models, the reference of
tests/grad_refs.c (make test compares webtensor's tape against them):

  mlp    x [8, 10] -> linear 16 - gelu - linear 5, cross-entropy
  lenet  the network of examples/train_fashion_mnist.c on 2 images 1x28x28:
         conv 5x5 (1 -> 16, pad 2) - relu - max-pool 2 - conv 5x5 (16 -> 32,
         pad 2) - relu - max-pool 2 - linear 1568 -> 128 - relu - linear
         128 -> 10, cross-entropy
  block  one pre-norm block of examples/train_gpt.c on x [2, 8, 16], 2 heads:
         x + proj(causal attention(q, k, v of layer_norm(x))), then
         + fc2(gelu(fc1(layer_norm(.)))) (fc1 16 -> 64); loss sum(out * r)
         with a fixed r

Weights and inputs come from NumPy's generator seeded with --seed (f32);
one forward and backward in float32 with TF32 off. Written to --out
(tests/data/grad_refs): <model>_<name>.npy for every weight and input,
<model>_loss.npy (0-d) and <model>_grad_<name>.npy for every parameter.

    python3 bench/grad_refs_torch.py --out tests/data/grad_refs [--device cuda] [--seed 20261126]
"""
import argparse
import math
import os

import numpy as np
import torch
import torch.nn.functional as F


def mlp(rng):
    x = rng.standard_normal((8, 10)).astype(np.float32)
    labels = rng.integers(0, 5, 8).astype(np.int32)
    params = {
        "w1": (rng.standard_normal((16, 10)) / math.sqrt(10)).astype(np.float32),
        "b1": (0.1 * rng.standard_normal(16)).astype(np.float32),
        "w2": (rng.standard_normal((5, 16)) / 4).astype(np.float32),
        "b2": (0.1 * rng.standard_normal(5)).astype(np.float32),
    }

    def forward(p, t):
        h = F.gelu(F.linear(t["x"], p["w1"], p["b1"]))
        return F.cross_entropy(F.linear(h, p["w2"], p["b2"]), t["labels"].long())
    return params, {"x": x, "labels": labels}, forward


def lenet(rng):
    x = rng.standard_normal((2, 1, 28, 28)).astype(np.float32)
    labels = rng.integers(0, 10, 2).astype(np.int32)

    def w(shape, fan_in):
        return (rng.standard_normal(shape) * math.sqrt(2.0 / fan_in)).astype(np.float32)
    params = {
        "c1w": w((16, 1, 5, 5), 25), "c1b": (0.1 * rng.standard_normal(16)).astype(np.float32),
        "c2w": w((32, 16, 5, 5), 400), "c2b": (0.1 * rng.standard_normal(32)).astype(np.float32),
        "f1w": w((128, 1568), 1568), "f1b": (0.1 * rng.standard_normal(128)).astype(np.float32),
        "f2w": w((10, 128), 128), "f2b": (0.1 * rng.standard_normal(10)).astype(np.float32),
    }

    def forward(p, t):
        h = F.max_pool2d(F.relu(F.conv2d(t["x"], p["c1w"], p["c1b"], padding=2)), 2)
        h = F.max_pool2d(F.relu(F.conv2d(h, p["c2w"], p["c2b"], padding=2)), 2)
        h = F.relu(F.linear(h.reshape(h.shape[0], -1), p["f1w"], p["f1b"]))
        return F.cross_entropy(F.linear(h, p["f2w"], p["f2b"]), t["labels"].long())
    return params, {"x": x, "labels": labels}, forward


B, T, D, H, FF = 2, 8, 16, 2, 64


def block(rng):
    x = rng.standard_normal((B, T, D)).astype(np.float32)
    r = rng.standard_normal((B, T, D)).astype(np.float32)

    def lin(o, i):
        return (rng.standard_normal((o, i)) / math.sqrt(i)).astype(np.float32)

    def vec(n, base=0.0):
        return (base + 0.1 * rng.standard_normal(n)).astype(np.float32)
    params = {
        "ln1_w": vec(D, 1.0), "ln1_b": vec(D),
        "wq": lin(D, D), "bq": vec(D), "wk": lin(D, D), "bk": vec(D), "wv": lin(D, D), "bv": vec(D),
        "wo": lin(D, D), "bo": vec(D),
        "ln2_w": vec(D, 1.0), "ln2_b": vec(D),
        "w1": lin(FF, D), "b1": vec(FF), "w2": lin(D, FF), "b2": vec(D),
    }

    def heads(t):
        return t.reshape(B, T, H, D // H).transpose(1, 2)

    def forward(p, t):
        x = t["x"]
        h = F.layer_norm(x, (D,), p["ln1_w"], p["ln1_b"], 1e-5)
        q, k, v = (heads(F.linear(h, p["w" + n], p["b" + n])) for n in "qkv")
        att = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + F.linear(att.transpose(1, 2).reshape(B, T, D), p["wo"], p["bo"])
        h = F.layer_norm(x, (D,), p["ln2_w"], p["ln2_b"], 1e-5)
        x = x + F.linear(F.gelu(F.linear(h, p["w1"], p["b1"])), p["w2"], p["b2"])
        return (x * t["r"]).sum()
    return params, {"x": x, "r": r}, forward


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--seed", type=int, default=20261126)
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    os.makedirs(a.out, exist_ok=True)
    rng = np.random.default_rng(a.seed)
    for name, make in (("mlp", mlp), ("lenet", lenet), ("block", block)):
        params, inputs, forward = make(rng)
        p = {k: torch.tensor(v, device=a.device, requires_grad=True) for k, v in params.items()}
        t = {k: torch.tensor(v, device=a.device) for k, v in inputs.items()}
        loss = forward(p, t)
        loss.backward()
        for k, v in {**params, **inputs}.items():
            np.save(os.path.join(a.out, "%s_%s.npy" % (name, k)), v)
        np.save(os.path.join(a.out, "%s_loss.npy" % name), np.float32(loss.item()))
        for k, v in p.items():
            np.save(os.path.join(a.out, "%s_grad_%s.npy" % (name, k)), v.grad.detach().cpu().numpy())
        print("%s: loss %.6f on %s (torch %s), %d parameters" % (name, loss.item(), a.device, torch.__version__,
                                                                sum(v.size for v in params.values())))


if __name__ == "__main__":
    main()
