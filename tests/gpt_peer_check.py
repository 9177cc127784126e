"""The GPT example and its PyTorch peer (bench/gpt_torch.py) start from the
same point: train_gpt --save-init writes its initial parameters, and the
first step's loss the example prints must equal the loss of the peer's
model on the peer's first batch, computed here in plain Python (float64)
from the file: the PyTorch module's forward pass written out (LayerNorm,
Linear as x @ W^T + b with W [out, in], causal softmax attention scaled by
1/sqrt(head dim), exact GELU, the head tied to the token embeddings) and
the peer's own corpus split and splitmix64 batch offsets. So the file's
names and layouts, the peer's data and the example agree; PyTorch itself
is not needed.

  python3 tests/gpt_peer_check.py TRAIN_GPT BENCH_DIR [--data DIR]"""
import math
import os
import re
import struct
import subprocess
import sys
import tempfile

LAYERS, DIM, HEADS, CONTEXT, BATCH = 2, 16, 2, 8, 2


def main():
    exe, bench = sys.argv[1], sys.argv[2]
    data = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--data" else "/usr/share/games/fortunes"
    sys.path.insert(0, bench)
    import gpt_torch as peer

    with tempfile.TemporaryDirectory() as tmp:
        init = os.path.join(tmp, "init.safetensors")
        out = subprocess.run([exe, "--backend", "cpu", "--data", data, "--layers", str(LAYERS), "--dim", str(DIM),
                              "--heads", str(HEADS), "--context", str(CONTEXT), "--batch", str(BATCH), "--steps", "1",
                              "--eval-batches", "1", "--sample", "0", "--print-loss", "--save-init", init],
                             capture_output=True, text=True)
        if out.returncode != 0:
            print(out.stdout, out.stderr)
            raise SystemExit("train_gpt failed")
        m = re.search(r"^step 1 loss (\S+)$", out.stdout, re.M)
        if not m:
            raise SystemExit("no 'step 1 loss' line in:\n" + out.stdout)
        c_loss = float(m.group(1))
        tensors, meta = peer.read_safetensors(init)

    ids, ntrain, vocab = peer.corpus(data)
    want_meta = {"layers": LAYERS, "dim": DIM, "heads": HEADS, "context": CONTEXT, "vocab": vocab}
    for k, v in want_meta.items():
        if int(meta.get(k, -1)) != v:
            raise SystemExit("metadata %s: %r, expected %d" % (k, meta.get(k), v))
    W = {}
    for name, (dtype, shape, raw) in tensors.items():
        if dtype != "F32":
            raise SystemExit("%s is %s" % (name, dtype))
        vals = struct.unpack("<%df" % (len(raw) // 4), raw)
        W[name] = [list(vals[i * shape[1]:(i + 1) * shape[1]]) for i in range(shape[0])] if len(shape) == 2 \
            else list(vals)
    expected = {"tok.weight": [vocab, DIM], "pos": [CONTEXT, DIM], "ln.weight": [DIM], "ln.bias": [DIM]}
    for l in range(LAYERS):
        p = "blocks.%d." % l
        for n in ("ln1", "ln2"):
            expected[p + n + ".weight"] = expected[p + n + ".bias"] = [DIM]
        for n in "qkvo":
            expected[p + n + ".weight"], expected[p + n + ".bias"] = [DIM, DIM], [DIM]
        expected[p + "fc1.weight"], expected[p + "fc1.bias"] = [4 * DIM, DIM], [4 * DIM]
        expected[p + "fc2.weight"], expected[p + "fc2.bias"] = [DIM, 4 * DIM], [DIM]
    got = {k: v[1] for k, v in tensors.items()}
    if got != expected:
        raise SystemExit("names or shapes differ from the PyTorch module's state_dict:\n%s\n%s" % (got, expected))

    def linear(x, w, b=None):
        return [sum(a * c for a, c in zip(x, row)) + (b[i] if b else 0.0) for i, row in enumerate(w)]

    def layer_norm(x, w, b):
        mean = sum(x) / len(x)
        var = sum((a - mean) ** 2 for a in x) / len(x)
        return [(a - mean) / math.sqrt(var + 1e-5) * w[i] + b[i] for i, a in enumerate(x)]

    def gelu(a):
        return 0.5 * a * (1 + math.erf(a / math.sqrt(2)))

    hd = DIM // HEADS
    total, count = 0.0, 0
    for off in peer.window_offsets(peer.SplitMix64(1), 0, ntrain, BATCH, CONTEXT):
        xs, ys = ids[off:off + CONTEXT], ids[off + 1:off + CONTEXT + 1]
        x = [[W["tok.weight"][xs[t]][j] + W["pos"][t][j] for j in range(DIM)] for t in range(CONTEXT)]
        for l in range(LAYERS):
            p = "blocks.%d." % l
            h = [layer_norm(r, W[p + "ln1.weight"], W[p + "ln1.bias"]) for r in x]
            q, k, v = ([linear(r, W[p + n + ".weight"], W[p + n + ".bias"]) for r in h] for n in "qkv")
            att = [[0.0] * DIM for _ in range(CONTEXT)]
            for head in range(HEADS):
                s0 = head * hd
                for t in range(CONTEXT):
                    sc = [sum(q[t][s0 + d] * k[u][s0 + d] for d in range(hd)) / math.sqrt(hd) for u in range(t + 1)]
                    top = max(sc)
                    e = [math.exp(z - top) for z in sc]
                    z = sum(e)
                    for d in range(hd):
                        att[t][s0 + d] = sum(e[u] / z * v[u][s0 + d] for u in range(t + 1))
            x = [[a + b for a, b in zip(r, linear(ar, W[p + "o.weight"], W[p + "o.bias"]))] for r, ar in zip(x, att)]
            h = [layer_norm(r, W[p + "ln2.weight"], W[p + "ln2.bias"]) for r in x]
            x = [[a + b for a, b in zip(r, linear([gelu(z) for z in linear(hr, W[p + "fc1.weight"], W[p + "fc1.bias"])],
                                                  W[p + "fc2.weight"], W[p + "fc2.bias"]))] for r, hr in zip(x, h)]
        for t in range(CONTEXT):
            logits = linear(layer_norm(x[t], W["ln.weight"], W["ln.bias"]), W["tok.weight"])
            top = max(logits)
            total += top + math.log(sum(math.exp(z - top) for z in logits)) - logits[ys[t]]
            count += 1
    ref = total / count
    rel = abs(c_loss - ref) / abs(ref)
    print("first-step loss: train_gpt %.9g, the peer's model in float64 %.9g (relative difference %.2e, bound 1e-5)"
          % (c_loss, ref, rel))
    if not rel <= 1e-5:
        raise SystemExit("FAIL")
    print("ok")


if __name__ == "__main__":
    main()
