#!/usr/bin/env python3
"""Tiny random-weight checkpoints in the shapes people download, saved by
transformers itself, and the logits and greedy tokens transformers computes
from the saved files: the test data of examples/llama_model.c.

    python3 bench/llama_variants.py --out DIR [--only NAME ...] [--device cuda]

Each variant goes to DIR/<name>/: what save_pretrained wrote (config.json,
model.safetensors or shards + model.safetensors.index.json), then
ref_logits.npy (float32 [16, vocab]: the logits of PROMPT) and
ref_tokens.txt (the greedy continuation, at most 64 tokens, ending early at
an EOS id of the config as transformers' generate() does).

The variants:
  llama_tied          tied embeddings (no lm_head.weight), config.json as
                      transformers 5 writes it (nested rope_parameters), one
                      EOS id that the greedy continuation meets
  llama3_rope         Llama 3 RoPE scaling (rope_type llama3, factor 8,
                      original context 64) with rope_theta 500000, head_dim 16
                      apart from hidden_size / heads (32 / 4), config.json
                      rewritten as transformers 4 writes it (flat rope_theta,
                      rope_scaling)
  llama_bias_sharded  attention and MLP biases, BF16 weights, sharded into
                      several files with model.safetensors.index.json, a list
                      of EOS ids
  qwen2_tied          Qwen2ForCausalLM (q/k/v biases), tied embeddings, BF16,
                      config.json as transformers 4 writes it

The weights are drawn so that activations keep unit size and the greedy
choices have margins (norm gains near 1, matrices scaled by 1/sqrt(fan_in),
biases of 0.1), as bench/llama_ref.py draws them.
"""
import argparse
import glob
import json
import math
import os
import sys

import numpy as np
import torch
import transformers

PROMPT = [1, 15, 42, 7, 99, 3, 200, 11, 64, 128, 5, 250, 17, 33, 71, 2]
NEW_TOKENS = 64
BASE = dict(vocab_size=256, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2, rms_norm_eps=1e-5,
            max_position_embeddings=256, bos_token_id=1)


def make_config(cls, rope, **kw):
    """A config with the RoPE parameters in the form this transformers takes
    (rope_parameters in 5.x, rope_theta + rope_scaling in 4.x)."""
    kw = dict(BASE, **kw)
    try:
        cfg = cls(rope_parameters=dict(rope), **kw)
        if getattr(cfg, "rope_parameters", None):
            return cfg
    except TypeError:
        pass
    r = dict(rope)
    theta = r.pop("rope_theta")
    scaling = r if r.get("rope_type", "default") != "default" else None
    return cls(rope_theta=theta, rope_scaling=scaling, **kw)


def draw_weights(model, seed, out_gain):
    """out_gain scales the attention and MLP output projections: with tied
    embeddings a residual stream dominated by the input token's own row
    would make every greedy choice repeat the input."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                v = 1 + 0.1 * torch.randn(p.shape, generator=g)
            elif name.endswith(".bias"):
                v = 0.1 * torch.randn(p.shape, generator=g)
            elif "embed_tokens" in name:
                v = torch.randn(p.shape, generator=g)
            elif name == "lm_head.weight":
                v = 4 * torch.randn(p.shape, generator=g) / math.sqrt(p.shape[1])
            else:
                v = torch.randn(p.shape, generator=g) / math.sqrt(p.shape[1])
                if name.endswith(("o_proj.weight", "down_proj.weight")):
                    v = v * out_gain
            p.copy_(v.to(p.dtype))


@torch.no_grad()
def greedy(model, device, eos):
    """The prompt's logits and the greedy continuation with a KV cache,
    stopping after the first id in eos; the smallest top-2 margin met."""
    ids = torch.tensor([PROMPT], device=device)
    out = model(input_ids=ids, use_cache=True)
    logits, cache = out.logits[0].float().cpu(), out.past_key_values
    last, toks, margin = out.logits[0, -1].float(), [], float("inf")
    for _ in range(NEW_TOKENS):
        top2 = torch.topk(last, 2).values
        margin = min(margin, float(top2[0] - top2[1]))
        t = int(torch.argmax(last))
        toks.append(t)
        if t in eos:
            break
        out = model(input_ids=torch.tensor([[t]], device=device), past_key_values=cache, use_cache=True)
        cache, last = out.past_key_values, out.logits[0, -1].float()
    return logits, toks, margin


def pick_eos(toks, after):
    """An id whose first appearance in toks is at index >= after (so the
    continuation stops there), or None."""
    for i in list(range(after, len(toks))) + list(range(after - 1, 0, -1)):
        if toks[i] not in toks[:i]:
            return toks[i]
    return None


def absent_id(toks, vocab):
    return next(i for i in range(vocab - 1, 0, -1) if i not in toks and i not in PROMPT)


def as_transformers4(path):
    """Rewrite config.json in the 4.x form: flat rope_theta, rope_scaling
    (null for plain RoPE), torch_dtype."""
    p = os.path.join(path, "config.json")
    cfg = json.load(open(p))
    rp = cfg.pop("rope_parameters", None)
    if rp is not None:
        rp = dict(rp)
        cfg["rope_theta"] = rp.pop("rope_theta", 10000.0)
        cfg["rope_scaling"] = rp if rp.get("rope_type", "default") != "default" else None
    if "dtype" in cfg:
        cfg["torch_dtype"] = cfg.pop("dtype")
    cfg["transformers_version"] = "4.46.0"
    json.dump(cfg, open(p, "w"), indent=2, sort_keys=True)


def shard_by_hand(path, nshards):
    """Split model.safetensors into shards + index as save_pretrained does,
    for a transformers that would not shard a model this small."""
    from safetensors.torch import load_file, save_file
    single = os.path.join(path, "model.safetensors")
    w = load_file(single)
    names = sorted(w)
    per = -(-len(names) // nshards)
    weight_map, total = {}, 0
    for s in range(nshards):
        part = names[s * per:(s + 1) * per]
        fn = f"model-{s + 1:05d}-of-{nshards:05d}.safetensors"
        save_file({n: w[n].contiguous() for n in part}, os.path.join(path, fn), metadata={"format": "pt"})
        for n in part:
            weight_map[n] = fn
            total += w[n].numel() * w[n].element_size()
    os.remove(single)
    json.dump({"metadata": {"total_size": total}, "weight_map": weight_map},
              open(os.path.join(path, "model.safetensors.index.json"), "w"), indent=2, sort_keys=True)


VARIANTS = {
    "llama_tied": dict(cls="LlamaForCausalLM", cfg="LlamaConfig", seed=1, dtype=torch.float32,
                       rope=dict(rope_type="default", rope_theta=10000.0),
                       kw=dict(tie_word_embeddings=True), eos="stop", config_form=5, out_gain=4.0),
    "llama3_rope": dict(cls="LlamaForCausalLM", cfg="LlamaConfig", seed=2, dtype=torch.float32,
                        rope=dict(rope_type="llama3", rope_theta=500000.0, factor=8.0, low_freq_factor=1.0,
                                  high_freq_factor=4.0, original_max_position_embeddings=64),
                        kw=dict(head_dim=16, tie_word_embeddings=False), eos="absent", config_form=4),
    "llama_bias_sharded": dict(cls="LlamaForCausalLM", cfg="LlamaConfig", seed=3, dtype=torch.bfloat16,
                               rope=dict(rope_type="default", rope_theta=10000.0),
                               kw=dict(attention_bias=True, mlp_bias=True, tie_word_embeddings=False),
                               eos="list", config_form=5, shards=3),
    "qwen2_tied": dict(cls="Qwen2ForCausalLM", cfg="Qwen2Config", seed=4, dtype=torch.bfloat16,
                       rope=dict(rope_type="default", rope_theta=1000000.0),
                       kw=dict(tie_word_embeddings=True, use_sliding_window=False), eos="absent",
                       config_form=4, out_gain=4.0),
}


def make_variant(name, v, out, device):
    path = os.path.join(out, name)
    os.makedirs(path, exist_ok=True)
    cfg = make_config(getattr(transformers, v["cfg"]), v["rope"], **v["kw"])
    torch.manual_seed(v["seed"])
    model = getattr(transformers, v["cls"])(cfg)
    draw_weights(model, v["seed"], v.get("out_gain", 1.0))
    model = model.to(v["dtype"])
    # The EOS ids: found from a dry greedy run of the same weights (as
    # saved: through the checkpoint's dtype), then written into the config.
    dry = model.float().to(device).eval()
    _, toks, _ = greedy(dry, device, eos=set())
    if v["eos"] == "stop":
        eos = pick_eos(toks, 20)
    elif v["eos"] == "list":
        eos = [absent_id(toks, cfg.vocab_size), pick_eos(toks, 30)]
    else:
        eos = absent_id(toks, cfg.vocab_size)
    model = model.to("cpu").to(v["dtype"])
    model.config.eos_token_id = eos
    model.generation_config.eos_token_id = eos
    kw = {}
    if v.get("shards"):
        total = sum(p.numel() * p.element_size() for p in model.parameters())
        kw["max_shard_size"] = f"{total // v['shards'] // 1000 + 1}KB"
    try:
        model.save_pretrained(path, safe_serialization=True, **kw)
    except Exception as e:  # a transformers that refuses so small a shard size
        print(f"  save_pretrained(max_shard_size) failed ({e}); sharding by hand")
        for f in glob.glob(os.path.join(path, "*.safetensors*")):
            os.remove(f)
        model.save_pretrained(path, safe_serialization=True)
    if v.get("shards") and not glob.glob(os.path.join(path, "*.index.json")):
        shard_by_hand(path, v["shards"])
    if v["config_form"] == 4:
        as_transformers4(path)

    # The reference: transformers' model from the files on disk, in float32.
    ref = getattr(transformers, v["cls"]).from_pretrained(path, dtype=torch.float32).to(device).eval()
    eos_ids = set(eos if isinstance(eos, list) else [eos])
    logits, toks, margin = greedy(ref, device, eos_ids)
    gen = ref.generate(torch.tensor([PROMPT], device=device), max_new_tokens=NEW_TOKENS, do_sample=False,
                       num_beams=1, eos_token_id=list(eos_ids), pad_token_id=0)[0, len(PROMPT):].tolist()
    np.save(os.path.join(path, "ref_logits.npy"), logits.numpy().astype(np.float32))
    with open(os.path.join(path, "ref_tokens.txt"), "w") as f:
        f.write(" ".join(map(str, toks)) + "\n")
    files = sorted(os.listdir(path))
    print(f"{name}: {v['cls']} {v['dtype']}, eos {eos}, {len(toks)} tokens, smallest top-2 margin {margin:.4g}, "
          f"generate() {'agrees' if gen == toks else 'DIFFERS: ' + str(gen)}")
    print(f"  rope as loaded: {getattr(ref.config, 'rope_parameters', None) or getattr(ref.config, 'rope_scaling', None)}"
          f", rope_theta {getattr(ref.config, 'rope_theta', None)}, head_dim {getattr(ref.config, 'head_dim', None)}")
    print(f"  tokens: {' '.join(map(str, toks))}")
    print(f"  files: {', '.join(f'{f} ({os.path.getsize(os.path.join(path, f))})' for f in files)}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--only", nargs="*")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    a = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    print(f"transformers {transformers.__version__}, torch {torch.__version__}, device {a.device}")
    failed = 0
    for name, v in VARIANTS.items():
        if a.only and name not in a.only:
            continue
        try:
            make_variant(name, v, a.out, a.device)
        except Exception as e:  # one variant's failure must not lose the others
            import traceback
            traceback.print_exc()
            print(f"{name}: FAILED: {e}")
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
