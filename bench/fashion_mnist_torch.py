#!/usr/bin/env python3
"""The PyTorch peer of examples/train_fashion_mnist.c: the same network,
batch size, optimiser and initialisation rule, trained on the GPU, with the
time per epoch. The data are the four .gz files of Debian's
dataset-fashion-mnist package.

    python3 bench/fashion_mnist_torch.py --data DIR [--epochs 5] [--batch 64] [--lr 1e-3]
"""
import argparse
import gzip
import os
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def load(d, prefix):
    with gzip.open(os.path.join(d, f"{prefix}-images-idx3-ubyte.gz")) as f:
        x = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 1, 28, 28).astype(np.float32) / 255
    with gzip.open(os.path.join(d, f"{prefix}-labels-idx1-ubyte.gz")) as f:
        y = np.frombuffer(f.read(), np.uint8, offset=8).astype(np.int64)
    return torch.from_numpy(x), torch.from_numpy(y)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(1, 16, 5, padding=2)
        self.c2 = nn.Conv2d(16, 32, 5, padding=2)
        self.f1 = nn.Linear(1568, 128)
        self.f2 = nn.Linear(128, 10)
        for m in (self.c1, self.c2, self.f1, self.f2):  # uniform(+-1/sqrt(fan_in)), as the example
            fan_in = m.weight[0].numel()
            nn.init.uniform_(m.weight, -fan_in ** -0.5, fan_in ** -0.5)
            nn.init.uniform_(m.bias, -fan_in ** -0.5, fan_in ** -0.5)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.c1(x)), 2)
        x = F.max_pool2d(F.relu(self.c2(x)), 2)
        return self.f2(F.relu(self.f1(x.flatten(1))))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-3)
    a = p.parse_args()
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = "cuda"
    xtr, ytr = (t.to(dev) for t in load(a.data, "train"))
    xte, yte = (t.to(dev) for t in load(a.data, "t10k"))
    torch.manual_seed(1)
    net = Net().to(dev)
    opt = torch.optim.AdamW(net.parameters(), lr=a.lr, weight_decay=0.0)
    n = xtr.shape[0] // a.batch * a.batch
    for epoch in range(a.epochs):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        perm = torch.randperm(xtr.shape[0], device=dev)
        total = torch.zeros((), device=dev)
        for s in range(0, n, a.batch):
            idx = perm[s:s + a.batch]
            loss = F.cross_entropy(net(xtr[idx]), ytr[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total += loss.detach()
        torch.cuda.synchronize()
        secs = time.perf_counter() - t0
        with torch.no_grad():
            acc = sum((net(xte[i:i + 1000]).argmax(1) == yte[i:i + 1000]).sum().item()
                      for i in range(0, xte.shape[0], 1000)) / xte.shape[0]
        print(f"pytorch epoch {epoch + 1}: loss {total.item() / (n // a.batch):.4f}, test accuracy {100 * acc:.2f}%, "
              f"{n / secs:.0f} images/s ({secs:.2f} s)", flush=True)


if __name__ == "__main__":
    main()
