#!/usr/bin/env python3
"""The PyTorch reference of a quantised GGUF Llama: reads the file that
llama_to_gguf (or llama.cpp's converter) wrote, dequantises every tensor
in NumPy from the block layouts the header states (bench/gguf_blocks.py:
Q8_0, Q4_0, Q4_K, Q6_K; F32 and F16 as they are), undoes the
converter's row permutation of attn_q / attn_k, and runs transformers'
LlamaForCausalLM in float32 on the result: the model the file describes,
computed by code that shares nothing with webtensor's.

    python3 bench/gguf_ref.py --gguf M.gguf --model DIR --out OUT [--tokens 64] [--device cuda]
                              [--check-dense M_dense.gguf]

DIR is the Hugging Face folder the file was written from (its config.json
gives the architecture; its weights are not read). OUT receives, for
examples/llama.c's checks with the same prompt (llama_ref.py's PROMPT):
  ref_logits.npy       float32 [prompt, vocab], the prompt's logits
  ref_tokens.txt       the greedy tokens, one line
  ref_step_logits.npy  float32 [tokens, vocab]: row 0 the prompt's last
                       logits, row i those decode step i chose from
and prints the smallest top-1/top-2 margin met (how near a tie the greedy
path came). --check-dense compares the dequantised tensors with an F32
file of the same weights (llama_to_gguf's KIND_dense, dequantised by
webtensor): two implementations of the layouts, equal value for value.
"""
import argparse
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import llama_ref  # noqa: E402  (PROMPT, step: the same reference loop)
from gguf_blocks import TYPES, check_dense, dequantise, read_gguf, unpermute  # noqa: E402

HF = {"attn_norm": "input_layernorm", "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj",
      "attn_v": "self_attn.v_proj", "attn_output": "self_attn.o_proj", "ffn_norm": "post_attention_layernorm",
      "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj", "ffn_down": "mlp.down_proj"}


def state_dict(tensors, cfg):
    out, kinds = {}, {}
    for name, (t, shape, raw) in tensors.items():
        w = dequantise(t, raw, int(np.prod(shape))).reshape(shape)
        kinds[TYPES[t][0]] = kinds.get(TYPES[t][0], 0) + 1
        if name == "token_embd.weight":
            hf = "model.embed_tokens.weight"
        elif name == "output_norm.weight":
            hf = "model.norm.weight"
        elif name == "output.weight":
            hf = "lm_head.weight"
        else:
            _, layer, part, _ = name.split(".")
            hf = f"model.layers.{layer}.{HF[part]}.weight"
            if part == "attn_q":
                w = unpermute(w, cfg["num_attention_heads"])
            elif part == "attn_k":
                w = unpermute(w, cfg["num_key_value_heads"])
        out[hf] = torch.from_numpy(np.ascontiguousarray(w))
    if "lm_head.weight" not in out:  # tied: the head is the embedding
        out["lm_head.weight"] = out["model.embed_tokens.weight"]
    return out, kinds


@torch.no_grad()
def greedy(model, device, ntok):
    """The prompt's logits, the greedy tokens, each token's logits row and
    the smallest top-2 margin (llama_ref.greedy, keeping every row)."""
    ids = torch.tensor(llama_ref.PROMPT, device=device)
    cache = {}
    logits = llama_ref.step(model, ids, cache, 0)
    toks, rows, margin, pos = [], [], float("inf"), len(llama_ref.PROMPT)
    last = logits[-1]
    for _ in range(ntok):
        rows.append(last.float().cpu())
        top2 = torch.topk(last.float(), 2).values
        margin = min(margin, float(top2[0] - top2[1]))
        t = int(torch.argmax(last))
        toks.append(t)
        last = llama_ref.step(model, torch.tensor([t], device=device), cache, pos)[-1]
        pos += 1
    return logits.float().cpu(), toks, torch.stack(rows), margin


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gguf", required=True)
    ap.add_argument("--model", required=True, help="the Hugging Face folder (config.json)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--check-dense", help="an F32 GGUF of the same weights to compare the dequantised values with")
    a = ap.parse_args()
    if a.check_dense and not check_dense(a.gguf, a.check_dense):
        raise SystemExit(1)
    torch.backends.cuda.matmul.allow_tf32 = False
    import transformers

    cfg = json.load(open(os.path.join(a.model, "config.json")))
    _, tensors = read_gguf(a.gguf)
    sd, kinds = state_dict(tensors, cfg)
    hf_cfg = transformers.LlamaConfig(**{k: cfg[k] for k in cfg if k != "torch_dtype"},
                                      tie_word_embeddings=False, attention_bias=False, mlp_bias=False)
    model = transformers.LlamaForCausalLM(hf_cfg).to(device=a.device, dtype=torch.float32)
    missing, unexpected = model.load_state_dict({k: v.to(a.device) for k, v in sd.items()}, strict=False)
    missing = [k for k in missing if "rotary" not in k]
    if missing or unexpected:
        raise SystemExit(f"state dict mismatch: {missing} {unexpected}")
    model.eval()
    logits, toks, rows, margin = greedy(model, a.device, a.tokens)
    os.makedirs(a.out, exist_ok=True)
    np.save(os.path.join(a.out, "ref_logits.npy"), logits.numpy())
    np.save(os.path.join(a.out, "ref_step_logits.npy"), rows.numpy())
    with open(os.path.join(a.out, "ref_tokens.txt"), "w") as f:
        f.write(" ".join(map(str, toks)) + "\n")
    types = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
    print(f"gguf reference ({a.gguf}: {len(tensors)} tensors: {types}; transformers "
          f"{transformers.__version__}, float32, {a.device}): {a.tokens} greedy tokens, "
          f"smallest top-2 margin {margin:.4g}")
    print("tokens:", " ".join(map(str, toks)))


if __name__ == "__main__":
    main()
