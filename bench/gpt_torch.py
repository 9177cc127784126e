"""The PyTorch peer of examples/train_gpt.c: the same character-level GPT
(token + position embeddings; pre-norm blocks with LayerNorm, separate
Q/K/V/out linears with bias, causal scaled-dot-product attention, an MLP
4x dim with GELU; a final LayerNorm; the head tied to the token
embeddings), the same corpus and split, AdamW (weight decay on matrices
and embeddings), warm-up + cosine learning rate, clipping by global norm.
Prints tokens/s over the timed steps (after --warmup-steps untimed ones),
in eager mode and, with --compile, under torch.compile.

  python3 bench/gpt_torch.py --data DIR [--layers 6 --dim 384 --heads 6
      --context 256 --batch 64 --steps 40 --warmup-steps 5 --compile]"""
import argparse
import math
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def corpus(path):
    files = [path] if os.path.isfile(path) else sorted(
        os.path.join(path, f) for f in os.listdir(path)
        if not f.endswith((".dat", ".u8")) and os.path.isfile(os.path.join(path, f)))
    data = b"".join(open(f, "rb").read() for f in files)
    vocab = sorted(set(data))
    index = {b: i for i, b in enumerate(vocab)}
    ids = torch.tensor([index[b] for b in data], dtype=torch.long)
    cut = len(ids) * 9 // 10
    return ids[:cut], ids[cut:], len(vocab)


class Block(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h = h
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        B, T, D = x.shape
        h = self.ln1(x)
        q, k, v = (m(h).view(B, T, self.h, D // self.h).transpose(1, 2) for m in (self.q, self.k, self.v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(a.transpose(1, 2).reshape(B, T, D))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, vocab, d, h, layers, ctx):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        nn.init.normal_(self.tok.weight, std=0.02)  # GPT-2's, as the example's (the head is tied)
        self.pos = nn.Parameter(torch.randn(ctx, d) * 0.02)
        self.blocks = nn.ModuleList(Block(d, h) for _ in range(layers))
        self.ln = nn.LayerNorm(d)

    def forward(self, idx):
        x = self.tok(idx) + self.pos[: idx.shape[1]]
        for b in self.blocks:
            x = b(x)
        return self.ln(x) @ self.tok.weight.t()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    for name, v in (("layers", 6), ("dim", 384), ("heads", 6), ("context", 256), ("batch", 64),
                    ("steps", 40), ("warmup-steps", 5)):
        ap.add_argument("--" + name, type=int, default=v)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--compile", action="store_true")
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = "cuda"
    train, _, vocab = corpus(a.data)
    torch.manual_seed(1)
    model = GPT(vocab, a.dim, a.heads, a.layers, a.context).to(dev)
    decay = [p for p in model.parameters() if p.dim() >= 2]
    other = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": other, "weight_decay": 0.0}],
                            lr=a.lr)
    train = train.to(dev)
    fwd = torch.compile(model) if a.compile else model

    def step(t):
        lr = a.lr * min(1.0, (t + 1) / 100) * 0.5 * (1 + math.cos(math.pi * t / max(a.steps, 1)))
        for g in opt.param_groups:
            g["lr"] = lr
        ix = torch.randint(0, len(train) - a.context - 1, (a.batch,), device=dev)
        x = torch.stack([train[i:i + a.context] for i in ix])
        y = torch.stack([train[i + 1:i + 1 + a.context] for i in ix])
        loss = F.cross_entropy(fwd(x).reshape(-1, vocab), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss

    for t in range(a.warmup_steps):
        step(t)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for t in range(a.warmup_steps, a.warmup_steps + a.steps):
        loss = step(t)
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    tok = a.steps * a.batch * a.context
    print("torch %s: %d steps, %.1f ms/step, %.0f tokens/s, last loss %.4f" %
          ("compiled" if a.compile else "eager", a.steps, 1e3 * dt / a.steps, tok / dt, loss.item()))


if __name__ == "__main__":
    main()
