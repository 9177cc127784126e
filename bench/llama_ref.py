#!/usr/bin/env python3
"""A Llama-architecture model of random weights, written as Hugging Face
writes one (model.safetensors in the Llama naming + config.json), and the
PyTorch reference that examples/llama.c must agree with.

    python3 bench/llama_ref.py make  --size tiny  --out DIR [--dtype f32|f16] [--seed 0]
    python3 bench/llama_ref.py ref   --model DIR --out DIR [--tokens 64] [--device cuda]
    python3 bench/llama_ref.py bench --model DIR [--tokens 64] [--prompt-len 128]

make  writes DIR/model.safetensors and DIR/config.json.
ref   greedy-decodes from the fixed prompt with a KV cache and writes
      DIR/ref_logits.npy (float32 [prompt_len, vocab]: the prompt's logits)
      and DIR/ref_tokens.txt (the generated token ids, one line), and prints
      the smallest top-1/top-2 logit margin met while decoding.
bench prints prefill and decode tokens/s of PyTorch eager at batch 1 (the
      prefill timed --prefill-runs times after two untimed runs: the median,
      and the fastest when more than one).

The reference is transformers' own LlamaForCausalLM where that package is
installed; it is the definition the file's names come from.
"""
import argparse
import json
import os
import struct
import sys
import time

import numpy as np
import torch

SIZES = {
    # CI: small enough to check into the repository.
    "tiny": dict(vocab_size=256, hidden_size=64, intermediate_size=172, num_hidden_layers=2,
                 num_attention_heads=4, num_key_value_heads=2),
    # The GPU machine: a 1B-class decoder.
    "large": dict(vocab_size=32000, hidden_size=2048, intermediate_size=5632, num_hidden_layers=16,
                  num_attention_heads=32, num_key_value_heads=8),
}
COMMON = dict(rms_norm_eps=1e-5, rope_theta=10000.0, max_position_embeddings=1024)
PROMPT = [1, 15, 42, 7, 99, 3, 200, 11, 64, 128, 5, 250, 17, 33, 71, 2]


def st_write(path, tensors):
    """safetensors writer (the format is small; no package needed)."""
    names = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16", torch.int32: "I32"}
    header, blobs, off = {}, [], 0
    for name, t in tensors.items():
        t = t.detach().contiguous().cpu()
        raw = t.view(torch.uint8).numpy().tobytes() if t.numel() else b""
        header[name] = {"dtype": names[t.dtype], "shape": list(t.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def st_read(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    dt = {"F32": np.float32, "F16": np.float16, "I32": np.int32}
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, end = e["data_offsets"]
        out[name] = torch.from_numpy(np.frombuffer(data[b:end], dtype=dt[e["dtype"]]).reshape(e["shape"]).copy())
    return out


class RefLlama(torch.nn.Module):
    """The Llama forward pass written out, used when transformers is absent:
    RMSNorm, rotate-half RoPE, grouped-query causal attention with a KV
    cache, SwiGLU MLP, final norm, LM head."""

    def __init__(self, cfg, w):
        super().__init__()
        self.cfg, self.w = cfg, w
        hd = cfg["hidden_size"] // cfg["num_attention_heads"]
        self.hd = hd
        self.inv_freq = 1.0 / (cfg["rope_theta"] ** (torch.arange(0, hd, 2, dtype=torch.float32) / hd))

    def rms(self, x, g):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.cfg["rms_norm_eps"])).to(x.dtype) * g

    def rope(self, x, pos):
        f = torch.outer(pos.float(), self.inv_freq.to(pos.device))
        emb = torch.cat([f, f], -1)
        cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
        h = x.shape[-1] // 2
        rot = torch.cat([-x[..., h:], x[..., :h]], -1)
        return x * cos + rot * sin

    def forward(self, ids, cache, start):
        c, w = self.cfg, self.w
        H, KV, hd = c["num_attention_heads"], c["num_key_value_heads"], self.hd
        S = ids.shape[0]
        pos = torch.arange(start, start + S, device=ids.device)
        x = w["model.embed_tokens.weight"][ids]
        for l in range(c["num_hidden_layers"]):
            p = f"model.layers.{l}."
            h = self.rms(x, w[p + "input_layernorm.weight"])
            q = (h @ w[p + "self_attn.q_proj.weight"].T).view(S, H, hd).transpose(0, 1)
            k = (h @ w[p + "self_attn.k_proj.weight"].T).view(S, KV, hd).transpose(0, 1)
            v = (h @ w[p + "self_attn.v_proj.weight"].T).view(S, KV, hd).transpose(0, 1)
            q, k = self.rope(q, pos), self.rope(k, pos)
            if l in cache:
                k = torch.cat([cache[l][0], k], 1)
                v = torch.cat([cache[l][1], v], 1)
            cache[l] = (k, v)
            k = k.repeat_interleave(H // KV, 0)
            v = v.repeat_interleave(H // KV, 0)
            att = (q.float() @ k.float().transpose(1, 2)) / hd ** 0.5
            T = k.shape[1]
            mask = torch.arange(T, device=ids.device)[None, :] > (pos[:, None])
            att = att.masked_fill(mask, float("-inf")).softmax(-1).to(x.dtype)
            o = (att @ v).transpose(0, 1).reshape(S, H * hd)
            x = x + o @ w[p + "self_attn.o_proj.weight"].T
            h = self.rms(x, w[p + "post_attention_layernorm.weight"])
            g = h @ w[p + "mlp.gate_proj.weight"].T
            u = h @ w[p + "mlp.up_proj.weight"].T
            x = x + (torch.nn.functional.silu(g) * u) @ w[p + "mlp.down_proj.weight"].T
        x = self.rms(x, w["model.norm.weight"])
        return x @ w["lm_head.weight"].T


def load(model_dir, device, prefer_hf=True):
    cfg = json.load(open(os.path.join(model_dir, "config.json")))
    w = {k: v.to(device) for k, v in st_read(os.path.join(model_dir, "model.safetensors")).items()}
    if prefer_hf:
        try:
            import transformers
        except ImportError:
            transformers = None
        if transformers is not None:
            hf_cfg = transformers.LlamaConfig(**{k: cfg[k] for k in cfg if k != "torch_dtype"},
                                              tie_word_embeddings=False, attention_bias=False, mlp_bias=False)
            m = transformers.LlamaForCausalLM(hf_cfg).to(device=device, dtype=w["lm_head.weight"].dtype)
            missing, unexpected = m.load_state_dict(w, strict=False)
            missing = [k for k in missing if "rotary" not in k]
            if missing or unexpected:
                raise RuntimeError(f"state dict mismatch: {missing} {unexpected}")
            m.eval()
            return cfg, m, "transformers " + transformers.__version__
    return cfg, RefLlama(cfg, w), "the written-out reference"


@torch.no_grad()
def step(model, ids, cache, start):
    """Logits [S, V] for ids at positions start.., extending the cache."""
    if isinstance(model, RefLlama):
        return model(ids, cache, start)
    out = model(input_ids=ids[None], past_key_values=cache.get("hf"), use_cache=True)
    cache["hf"] = out.past_key_values
    return out.logits[0]


def cmd_make(a):
    torch.manual_seed(a.seed)
    cfg = dict(SIZES[a.size], **COMMON)
    D, I, H, KV, V = (cfg["hidden_size"], cfg["intermediate_size"], cfg["num_attention_heads"],
                      cfg["num_key_value_heads"], cfg["vocab_size"])
    hd = D // H
    dt = torch.float16 if a.dtype == "f16" else torch.float32

    # Weights scaled by 1/sqrt(fan_in), so activations keep unit size and
    # the logits have margins that greedy decoding can follow reliably.
    def lin(o, i):
        return (torch.randn(o, i) / i ** 0.5).to(dt)

    w = {"model.embed_tokens.weight": torch.randn(V, D).to(dt)}
    for l in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{l}."
        w[p + "input_layernorm.weight"] = (1 + 0.1 * torch.randn(D)).to(dt)
        w[p + "self_attn.q_proj.weight"] = lin(H * hd, D)
        w[p + "self_attn.k_proj.weight"] = lin(KV * hd, D)
        w[p + "self_attn.v_proj.weight"] = lin(KV * hd, D)
        w[p + "self_attn.o_proj.weight"] = lin(D, H * hd)
        w[p + "post_attention_layernorm.weight"] = (1 + 0.1 * torch.randn(D)).to(dt)
        w[p + "mlp.gate_proj.weight"] = lin(I, D)
        w[p + "mlp.up_proj.weight"] = lin(I, D)
        w[p + "mlp.down_proj.weight"] = lin(D, I)
    w["model.norm.weight"] = (1 + 0.1 * torch.randn(D)).to(dt)
    w["lm_head.weight"] = (4 * lin(V, D).float()).to(dt)
    os.makedirs(a.out, exist_ok=True)
    st_write(os.path.join(a.out, "model.safetensors"), w)
    cfg["torch_dtype"] = "float16" if dt == torch.float16 else "float32"
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
    print(f"wrote {a.out}: {sum(t.numel() for t in w.values())} parameters, {a.dtype}")


def greedy(model, device, ntok):
    ids = torch.tensor(PROMPT, device=device)
    cache = {}
    logits = step(model, ids, cache, 0)
    toks, margin, pos = [], float("inf"), len(PROMPT)
    last = logits[-1]
    for _ in range(ntok):
        top2 = torch.topk(last.float(), 2).values
        margin = min(margin, float(top2[0] - top2[1]))
        t = int(torch.argmax(last))
        toks.append(t)
        last = step(model, torch.tensor([t], device=device), cache, pos)[-1]
        pos += 1
    return logits.float().cpu(), toks, margin


def cmd_ref(a):
    torch.backends.cuda.matmul.allow_tf32 = False
    cfg, model, what = load(a.model, a.device)
    logits, toks, margin = greedy(model, a.device, a.tokens)
    os.makedirs(a.out, exist_ok=True)
    np.save(os.path.join(a.out, "ref_logits.npy"), logits.numpy())
    with open(os.path.join(a.out, "ref_tokens.txt"), "w") as f:
        f.write(" ".join(map(str, toks)) + "\n")
    print(f"reference ({what}, {a.device}): prompt {len(PROMPT)} tokens, {a.tokens} greedy tokens, "
          f"smallest top-2 margin {margin:.4g}")
    print("tokens:", " ".join(map(str, toks)))
    if not isinstance(model, RefLlama):
        # The written-out forward pass against transformers: a check of both.
        _, own, _ = load(a.model, a.device, prefer_hf=False)
        l2, t2, _ = greedy(own, a.device, a.tokens)
        err = float((l2 - logits).abs().max() / logits.abs().max())
        print(f"written-out reference vs transformers: max relative logit error {err:.3g}, "
              f"tokens {'equal' if t2 == toks else 'DIFFER'}")


def cmd_bench(a):
    cfg, model, what = load(a.model, a.device)
    V = cfg["vocab_size"]
    g = torch.Generator().manual_seed(1)
    prompt = torch.randint(0, V, (a.prompt_len,), generator=g).to(a.device)
    for _ in range(2):  # warm-up
        step(model, prompt, {}, 0)
    runs = []
    for _ in range(a.prefill_runs):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        cache = {}
        logits = step(model, prompt, cache, 0)
        torch.cuda.synchronize()
        runs.append(time.perf_counter() - t0)
    runs.sort()
    prefill_s = runs[len(runs) // 2]
    t1 = time.perf_counter()
    pos, last = a.prompt_len, logits[-1]
    for _ in range(a.tokens):
        t = torch.argmax(last).view(1)
        last = step(model, t, cache, pos)[-1]
        pos += 1
    torch.cuda.synchronize()
    t2 = time.perf_counter()
    nparams = sum(p.numel() * p.element_size() for p in (model.w.values() if isinstance(model, RefLlama)
                                                          else model.parameters()))
    best = f" (median of {len(runs)}; fastest {a.prompt_len / runs[0]:.1f} tok/s)" if len(runs) > 1 else ""
    print(f"pytorch eager ({what}): prefill {a.prompt_len / prefill_s:.1f} tok/s{best}, "
          f"decode {a.tokens / (t2 - t1):.2f} tok/s, weights {nparams / 1e9:.3f} GB, "
          f"decode bandwidth {nparams * a.tokens / (t2 - t1) / 1e9:.1f} GB/s")


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("make")
    m.add_argument("--size", choices=SIZES, default="tiny")
    m.add_argument("--dtype", choices=["f32", "f16"], default="f32")
    m.add_argument("--seed", type=int, default=0)
    m.add_argument("--out", required=True)
    r = sub.add_parser("ref")
    r.add_argument("--model", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--tokens", type=int, default=64)
    r.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    b = sub.add_parser("bench")
    b.add_argument("--model", required=True)
    b.add_argument("--tokens", type=int, default=64)
    b.add_argument("--prompt-len", type=int, default=128)
    b.add_argument("--prefill-runs", type=int, default=1)
    b.add_argument("--device", default="cuda")
    a = p.parse_args()
    {"make": cmd_make, "ref": cmd_ref, "bench": cmd_bench}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
