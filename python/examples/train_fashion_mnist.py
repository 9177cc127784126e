#!/usr/bin/env python3
"""Trains the LeNet-style CNN of examples/train_fashion_mnist.c on
Fashion-MNIST from Python, with autograd and wt.optim.AdamW:

    conv 5x5 (1 -> 16, pad 2) - relu - max-pool 2
    conv 5x5 (16 -> 32, pad 2) - relu - max-pool 2
    linear 1568 -> 128 - relu - linear 128 -> 10, softmax cross-entropy

The same weights (uniform in +-1/sqrt(fan_in) from the library's seeded
generator), the same shuffled batches and the same updates as the C
program, so on the CPU backend its losses are the C program's to the last
bit. Options as the C program's:

    train_fashion_mnist.py [--backend auto|cpu|webgpu|vulkan|gles] [--epochs 5]
                           [--batch 64] [--lr 1e-3] [--seed 1] [--data DIR]
                           [--train-limit N] [--steps N] [--max-loss X] [--eval-limit N]

--steps stops after that many steps; --max-loss then fails (exit 1) unless
the mean loss of the last 50 steps is below X. --eval-limit N evaluates on
the first N images of each split after every epoch (default: all; 0:
none). The data are the four .gz files of Debian's dataset-fashion-mnist
(/usr/share/datasets/fashion-mnist), or of --data DIR / $WT_FASHION_MNIST_DIR.
"""
import argparse
import gzip
import math
import os
import sys
import time

import numpy as np

import webtensor as wt
import webtensor.nn.functional as F

SHAPES = [(16, 1, 5, 5), (16,), (32, 16, 5, 5), (32,), (128, 1568), (128,), (10, 128), (10,)]
FAN_IN = [25, 25, 400, 400, 1568, 1568, 128, 128]


def load_split(folder, prefix):
    """Images [n, 784] scaled to [0, 1] and i32 labels [n] of one split."""
    with gzip.open(os.path.join(folder, prefix + "-images-idx3-ubyte.gz")) as f:
        im = f.read()
    with gzip.open(os.path.join(folder, prefix + "-labels-idx1-ubyte.gz")) as f:
        lb = f.read()
    n = int.from_bytes(im[4:8], "big")
    if (int.from_bytes(im[:4], "big") != 2051 or int.from_bytes(lb[:4], "big") != 2049
            or int.from_bytes(lb[4:8], "big") != n or im[8:16] != bytes([0, 0, 0, 28] * 2)):
        raise ValueError("%s: not Fashion-MNIST's idx files" % prefix)
    images = np.frombuffer(im, np.uint8, n * 784, 16).reshape(n, 784).astype(np.float32) / 255
    labels = np.frombuffer(lb, np.uint8, n, 8).astype(np.int32)
    return images, labels


def init_params(ctx, seed):
    params = []
    for i, (shape, fan_in) in enumerate(zip(SHAPES, FAN_IN)):
        bound = 1.0 / math.sqrt(fan_in)
        p = wt.rand(shape, seed=seed * 1000 + i, context=ctx) * (2 * bound) - bound
        p.requires_grad = True
        params.append(p)
    return params


def forward(params, x):
    c1w, c1b, c2w, c2b, f1w, f1b, f2w, f2b = params
    h = F.max_pool2d(F.relu(F.conv2d(x, c1w, c1b, padding=2)), 2)
    h = F.max_pool2d(F.relu(F.conv2d(h, c2w, c2b, padding=2)), 2)
    h = F.relu(F.linear(h.reshape(-1, 1568), f1w, f1b))
    return F.linear(h, f2w, f2b)


def shuffle(ctx, n, seed):
    """The C program's order: indices sorted by the library's uniform
    numbers (ties by index)."""
    keys = wt.rand([n], seed=seed, context=ctx).numpy()
    return np.argsort(keys, kind="stable")


def evaluate(ctx, params, images, labels, limit):
    n = min(limit, len(labels))
    correct = 0
    with wt.no_grad(ctx):
        for s in range(0, n, 1000):
            e = min(s + 1000, n)
            x = wt.tensor(images[s:e].reshape(-1, 1, 28, 28), context=ctx)
            pred = forward(params, x).argmax(axis=1).numpy()
            correct += int((pred == labels[s:e]).sum())
    return correct / n if n else 0.0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--data", default=os.environ.get("WT_FASHION_MNIST_DIR",
                                                     "/usr/share/datasets/fashion-mnist"))
    ap.add_argument("--train-limit", type=int, default=0)
    ap.add_argument("--steps", type=int, default=0)
    ap.add_argument("--max-loss", type=float, default=0)
    ap.add_argument("--eval-limit", type=int, default=-1)
    a = ap.parse_args(argv)
    if a.batch <= 0 or a.epochs <= 0:
        ap.error("batch and epochs must be positive")
    try:
        train_x, train_y = load_split(a.data, "train")
        test_x, test_y = load_split(a.data, "t10k")
    except OSError as e:
        print("Fashion-MNIST not found in %s (%s).\nInstall Debian's package "
              "dataset-fashion-mnist, or point --data or $WT_FASHION_MNIST_DIR at a folder with "
              "its four .gz files." % (a.data, e), file=sys.stderr)
        return 2
    ntrain = a.train_limit if 0 < a.train_limit < len(train_y) else len(train_y)

    ctx = wt.Context(a.backend)
    params = init_params(ctx, a.seed)
    # The C program hands lr to AdamW through a float: the same rounding
    # keeps the two runs' updates identical.
    opt = wt.optim.AdamW(params, lr=float(np.float32(a.lr)), weight_decay=0.0)
    recent = []
    done = 0
    for epoch in range(a.epochs):
        order = shuffle(ctx, ntrain, a.seed * 7919 + epoch)
        t0 = time.perf_counter()
        loss_sum, nb, acc = 0.0, 0, None
        for s in range(0, ntrain - a.batch + 1, a.batch):
            idx = order[s:s + a.batch]
            x = wt.tensor(train_x[idx].reshape(-1, 1, 28, 28), context=ctx)
            y = wt.tensor(train_y[idx], context=ctx)
            loss = F.cross_entropy(forward(params, x), y)
            loss.backward()
            opt.step()
            opt.zero_grad()
            if a.steps:
                # CI runs read every loss; otherwise they add up on the
                # device and are read once an epoch.
                v = loss.item()
                loss_sum += v
                recent = (recent + [v])[-50:]
            else:
                acc = loss.detach() if acc is None else acc + loss.detach()
            nb += 1
            done += 1
            if done == a.steps:
                break
        if acc is not None:
            loss_sum = acc.item()
        secs = time.perf_counter() - t0
        line = "epoch %d: loss %.4f, %.0f images/s (%.1f s)" % (
            epoch + 1, loss_sum / nb if nb else 0.0, nb * a.batch / secs, secs)
        if a.eval_limit != 0:
            lim_train = 10000 if a.eval_limit < 0 else a.eval_limit
            lim_test = len(test_y) if a.eval_limit < 0 else a.eval_limit
            line += ", train accuracy %.2f%% (first %d), test accuracy %.2f%% (%d images)" % (
                100 * evaluate(ctx, params, train_x, train_y, lim_train), min(lim_train, len(train_y)),
                100 * evaluate(ctx, params, test_x, test_y, lim_test), min(lim_test, len(test_y)))
        print(line, flush=True)
        if a.steps and done == a.steps:
            break
    if a.max_loss > 0:
        m = sum(recent) / len(recent) if recent else math.inf
        print("mean loss of the last %d steps: %.4f (must be below %.4f)" % (len(recent), m,
                                                                           a.max_loss))
        if not m < a.max_loss:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
