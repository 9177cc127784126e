"""The PyTorch peer of examples/train_gpt.c: the same character-level GPT
(token + position embeddings; pre-norm blocks with LayerNorm, separate
Q/K/V/out linears with bias, causal scaled-dot-product attention, an MLP
4x dim with GELU; a final LayerNorm; the head tied to the token
embeddings), the same corpus, split and batches, and the same training:
AdamW (betas 0.9, 0.99; weight decay on matrices and embeddings), the
example's learning rate (linear warm-up over --warmup steps, then a cosine
down to --min-lr at the last step), clipping by global norm 1.0.

The batches are the example's: windows at offsets drawn with splitmix64
from --seed, gathered on the host and copied to the device each step, and
the validation loss is the example's too (the mean over --eval-batches
batches of the held-out last 10 %, drawn from the seed 0x5eed). With
--init FILE (written by `train_gpt --save-init FILE`) the model starts
from the example's initial weights, so both train the same model on the
same data and their losses can be compared step by step.

Prints tokens/s over the steps after the first --warmup-steps (untimed:
allocation, kernel selection, compilation), in eager mode and, with
--compile, under torch.compile; with --print-loss every step's loss
("step K loss X"), and at the end the validation loss in the example's
words ("step N/N  validation loss X (k batches)").

  python3 bench/gpt_torch.py --data DIR [--layers 6 --dim 384 --heads 6
      --context 256 --batch 64 --steps 40 --warmup-steps 5 --lr 1e-3
      --warmup 100 --eval-batches 20 --init FILE --print-loss --compile]"""
import argparse
import json
import math
import os
import struct
import time

MASK64 = (1 << 64) - 1


def corpus(path):
    """The example's text: a file, or every regular file of a folder in name
    order but the strfile indexes (*.dat), hidden files and symbolic links
    (the .u8 aliases); the vocabulary is the bytes used, in byte order; the
    last n // 10 characters are held out."""
    if os.path.isfile(path):
        files = [path]
    else:
        files = []
        for f in os.listdir(path):
            full = os.path.join(path, f)
            if f.startswith(".") or (len(f) > 4 and f.endswith(".dat")):
                continue
            if os.path.islink(full) or not os.path.isfile(full):
                continue
            files.append(full)
        files.sort(key=lambda s: s.encode())
    data = b"".join(open(f, "rb").read() for f in files)
    vocab = sorted(set(data))
    table = bytes(vocab.index(b) if b in vocab else 0 for b in range(256))
    ids = data.translate(table)  # one byte a character: the vocabulary has at most 256 entries
    return ids, len(ids) - len(ids) // 10, len(vocab)


class SplitMix64:
    """The example's next_random."""

    def __init__(self, seed):
        self.s = seed & MASK64

    def next(self):
        self.s = (self.s + 0x9E3779B97F4A7C15) & MASK64
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)


def window_offsets(rng, lo, hi, batch, context):
    """The example's make_batch: window starts in ids[lo, hi)."""
    span = hi - lo - context - 1
    return [lo + rng.next() % span for _ in range(batch)]


def lr_at(i, lr, min_lr, warmup, total):
    """wt_lr_schedule WT_LR_COSINE at step index i (0 for the first)."""
    if i < warmup:
        return lr * (i + 1) / warmup
    p = 1.0 if total <= warmup else min(1.0, (i - warmup) / (total - warmup))
    return min_lr + (lr - min_lr) * (1 + math.cos(math.pi * p)) / 2


def read_safetensors(path):
    """name -> (dtype, shape, bytes) of a safetensors file; metadata."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    meta = header.pop("__metadata__", {})
    base = 8 + n
    out = {}
    for name, e in header.items():
        b, end = e["data_offsets"]
        out[name] = (e["dtype"], e["shape"], raw[base + b:base + end])
    return out, meta


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    for name, v in (("layers", 6), ("dim", 384), ("heads", 6), ("context", 256), ("batch", 64),
                    ("steps", 40), ("warmup-steps", 5), ("warmup", 100), ("eval-batches", 20), ("seed", 1)):
        ap.add_argument("--" + name, type=int, default=v)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--min-lr", type=float, default=-1.0, help="default lr / 10")
    ap.add_argument("--weight-decay", type=float, default=0.1)
    ap.add_argument("--clip", type=float, default=1.0)
    ap.add_argument("--init", help="initial weights from train_gpt --save-init")
    ap.add_argument("--print-loss", action="store_true")
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--device", default="cuda")
    a = ap.parse_args()
    min_lr = a.lr / 10 if a.min_lr < 0 else a.min_lr
    warmup = max(a.warmup, 1)

    import torch
    import torch.nn as nn
    import torch.nn.functional as F

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
            att = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.o(att.transpose(1, 2).reshape(B, T, D))
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

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = a.device
    cuda = dev.startswith("cuda")
    ids, ntrain, vocab = corpus(a.data)
    text = torch.frombuffer(bytearray(ids), dtype=torch.uint8).long()
    print("corpus %s: %d characters (%d for training, %d held out), vocabulary %d" %
          (a.data, len(ids), ntrain, len(ids) - ntrain, vocab))
    torch.manual_seed(1)
    model = GPT(vocab, a.dim, a.heads, a.layers, a.context)
    if a.init:
        tensors, meta = read_safetensors(a.init)
        want = {"layers": a.layers, "dim": a.dim, "heads": a.heads, "context": a.context, "vocab": vocab}
        for k, v in want.items():
            if k in meta and int(meta[k]) != v:
                raise SystemExit("%s: %s is %s in the file, %d here" % (a.init, k, meta[k], v))
        if meta.get("norm", "layer") != "layer":
            raise SystemExit("%s: norm %s (this peer has LayerNorm only)" % (a.init, meta["norm"]))
        state = {}
        for name, (dtype, shape, raw) in tensors.items():
            if dtype != "F32":
                raise SystemExit("%s: %s is %s, not F32" % (a.init, name, dtype))
            state[name] = torch.frombuffer(bytearray(raw), dtype=torch.float32).reshape(shape)
        # strict: every parameter named in the file and no other, shapes checked
        model.load_state_dict(state, strict=True)
        print("initial parameters from %s (%d tensors)" % (a.init, len(state)))
    model = model.to(dev)
    nparams = sum(p.numel() for p in model.parameters())
    print("model: %d layers, dim %d, %d heads, context %d: %d parameters" %
          (a.layers, a.dim, a.heads, a.context, nparams))
    decay = [p for p in model.parameters() if p.dim() >= 2]
    other = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": a.weight_decay},
                             {"params": other, "weight_decay": 0.0}], lr=a.lr, betas=(0.9, 0.99), eps=1e-8)
    fwd = torch.compile(model) if a.compile else model
    cols = torch.arange(a.context + 1)

    def batch(offsets):
        # [B, T + 1] windows gathered on the host, then one copy each of x and y
        w = text[torch.tensor(offsets)[:, None] + cols]
        return (w[:, :-1].to(dev, non_blocking=True), w[:, 1:].reshape(-1).to(dev, non_blocking=True))

    rng = SplitMix64(a.seed)

    def step(t):
        for g in opt.param_groups:
            g["lr"] = lr_at(t, a.lr, min_lr, warmup, a.steps)
        x, y = batch(window_offsets(rng, 0, ntrain, a.batch, a.context))
        loss = F.cross_entropy(fwd(x).reshape(-1, vocab), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if a.clip > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), a.clip)
        opt.step()
        return loss

    def sync():
        if cuda:
            torch.cuda.synchronize()

    untimed = min(a.warmup_steps, a.steps - 1)
    t0 = time.perf_counter()
    loss = None
    for t in range(a.steps):
        if t == untimed:
            sync()
            t0 = time.perf_counter()
        loss = step(t)
        if a.print_loss:
            print("step %d loss %.9g" % (t + 1, loss.item()))
    sync()
    dt = time.perf_counter() - t0
    timed = a.steps - untimed
    tok = timed * a.batch * a.context
    print("torch %s: steps %d-%d, %.2f ms/step, %.0f tokens/s, last loss %.4f" %
          ("compiled" if a.compile else "eager", untimed + 1, a.steps, 1e3 * dt / timed, tok / dt, loss.item()))

    vrng = SplitMix64(0x5EED)
    total = 0.0
    with torch.no_grad():
        for _ in range(a.eval_batches):
            x, y = batch(window_offsets(vrng, ntrain, len(ids), a.batch, a.context))
            total += F.cross_entropy(fwd(x).reshape(-1, vocab), y).item()
    print("step %5d/%d  validation loss %.4f (%d batches)" % (a.steps, a.steps, total / a.eval_batches,
                                                              a.eval_batches))


if __name__ == "__main__":
    main()
