#!/usr/bin/env python3
"""GGUF files and ggml's Q8_0 / Q4_0 / Q4_K / Q6_K blocks in NumPy, written
from the layouts include/webtensor/linalg.h states (and GGUF's own
format), sharing nothing with webtensor's code: the reader and dequantiser
of bench/gguf_ref.py (the PyTorch reference of a quantised GGUF Llama), and
a check of webtensor's dequantisation against them:

    python3 bench/gguf_blocks.py check Q.gguf DENSE.gguf

compares every tensor of Q (dequantised here) with DENSE's F32 tensor of
the same name (llama_to_gguf's KIND_dense: the same weights dequantised by
webtensor) and exits 1 unless all are equal value for value (every value
the header states exact in f32 is, and a Q4_K value is the f32 rounding of
the exact one, which float64 then one rounding gives too). make test runs it
on the test models' Q8_0, Q4_0 and Q4_K_M files.
"""
import struct
import sys

import numpy as np

# GGUF metadata value types (the format's numbering) and their struct codes.
SCALAR = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
STRING, ARRAY = 8, 9
# ggml tensor types read here: id -> (name, elements a block, bytes a block)
TYPES = {0: ("F32", 1, 4), 1: ("F16", 1, 2), 2: ("Q4_0", 32, 18), 8: ("Q8_0", 32, 34),
         12: ("Q4_K", 256, 144), 14: ("Q6_K", 256, 210)}


class Reader:
    def __init__(self, data):
        self.d, self.o = data, 0

    def take(self, fmt):
        v = struct.unpack_from(fmt, self.d, self.o)[0]
        self.o += struct.calcsize(fmt)
        return v

    def string(self):
        n = self.take("<Q")
        s = bytes(self.d[self.o:self.o + n]).decode("utf-8", "replace")
        self.o += n
        return s

    def value(self, t):
        if t in SCALAR:
            return self.take(SCALAR[t])
        if t == STRING:
            return self.string()
        if t == ARRAY:
            et, n = self.take("<I"), self.take("<Q")
            return [self.value(et) for _ in range(n)]
        raise ValueError(f"GGUF value type {t}")


def read_gguf(path):
    """(metadata dict, {name: (ggml type, webtensor-order shape, bytes)})."""
    data = memoryview(open(path, "rb").read())
    r = Reader(data)
    if bytes(data[:4]) != b"GGUF":
        raise ValueError(f"{path}: not a GGUF file")
    r.o = 4
    version, n_tensors, n_kv = r.take("<I"), r.take("<Q"), r.take("<Q")
    if version not in (2, 3):
        raise ValueError(f"{path}: GGUF version {version}")
    meta = {}
    for _ in range(n_kv):
        key = r.string()
        meta[key] = r.value(r.take("<I"))
    infos = []
    for _ in range(n_tensors):
        name = r.string()
        dims = [r.take("<Q") for _ in range(r.take("<I"))]
        infos.append((name, dims, r.take("<I"), r.take("<Q")))
    align = int(meta.get("general.alignment", 32))
    base = (r.o + align - 1) // align * align
    tensors = {}
    for name, dims, t, off in infos:
        if t not in TYPES:
            raise ValueError(f"{name}: ggml type {t} is not read here")
        _, be, bb = TYPES[t]
        numel = int(np.prod(dims))
        nbytes = numel // be * bb
        tensors[name] = (t, list(reversed(dims)), data[base + off:base + off + nbytes])
    return meta, tensors


def f16_at(blocks, byte):
    """The f16 field at byte offset `byte` of every block, as float64."""
    return blocks[:, byte:byte + 2].copy().view(np.float16)[:, 0].astype(np.float64)


# Element e of a 256-element super-block: where its quant lives.
E = np.arange(256)
Q4K_BYTE = 16 + 32 * (E // 64) + E % 32          # qs byte
Q4K_HIGH = (E % 64) >= 32                          # high nibble?
Q4K_SUB = E // 32                                   # sub-block s
Q6K_H, Q6K_G, Q6K_L = E // 128, (E % 128) // 32, E % 32
Q6K_LOW_BYTE = 64 * Q6K_H + 32 * (Q6K_G & 1) + Q6K_L
Q6K_HIGH_BYTE = 128 + 32 * Q6K_H + Q6K_L
Q6K_SCALE = 192 + 8 * Q6K_H + 2 * Q6K_G + Q6K_L // 16


def dequantise(t, raw, numel):
    """float32 values of a tensor's bytes, block by block, in float64 then
    rounded once (every value the header states exact in f32 is)."""
    if t == 0:
        return np.frombuffer(raw, dtype=np.float32).copy()
    if t == 1:
        return np.frombuffer(raw, dtype=np.float16).astype(np.float32)
    _, be, bb = TYPES[t]
    b = np.frombuffer(raw, dtype=np.uint8).reshape(numel // be, bb)
    if t == 8:  # Q8_0: d, 32 int8
        x = f16_at(b, 0)[:, None] * b[:, 2:34].view(np.int8).astype(np.float64)
    elif t == 2:  # Q4_0: d, 16 bytes; element j the low nibble of byte j, j + 16 its high one
        qs = b[:, 2:18]
        q = np.concatenate([qs & 15, qs >> 4], axis=1).astype(np.float64) - 8
        x = f16_at(b, 0)[:, None] * q
    elif t == 12:  # Q4_K: d, dmin, 12 bytes of 6-bit scales and mins, 128 bytes of nibbles
        S = b[:, 4:16].astype(np.int64)
        sc = np.empty((len(b), 8), np.int64)
        mn = np.empty((len(b), 8), np.int64)
        for s in range(4):
            sc[:, s], mn[:, s] = S[:, s] & 63, S[:, s + 4] & 63
            sc[:, s + 4] = (S[:, s + 8] & 15) | ((S[:, s] >> 6) << 4)
            mn[:, s + 4] = (S[:, s + 8] >> 4) | ((S[:, s + 4] >> 6) << 4)
        byte = b[:, Q4K_BYTE].astype(np.int64)
        q = np.where(Q4K_HIGH[None, :], byte >> 4, byte & 15)
        x = (f16_at(b, 0)[:, None] * sc[:, Q4K_SUB]) * q - f16_at(b, 2)[:, None] * mn[:, Q4K_SUB]
    elif t == 14:  # Q6_K: 128 bytes low 4 bits, 64 bytes high 2 bits, 16 int8 scales, d
        low = b[:, Q6K_LOW_BYTE].astype(np.int64)
        low = np.where((Q6K_G >= 2)[None, :], low >> 4, low & 15)
        high = (b[:, Q6K_HIGH_BYTE].astype(np.int64) >> (2 * Q6K_G)[None, :]) & 3
        q = (low | (high << 4)) - 32
        scale = b[:, Q6K_SCALE].view(np.int8).astype(np.float64)
        x = f16_at(b, 208)[:, None] * scale * q
    else:
        raise ValueError(f"type {t}")
    return x.reshape(-1).astype(np.float32)


def unpermute(w, heads):
    """The converter's attn_q / attn_k row order back to Hugging Face's:
    GGUF row h*hd + 2j + half is HF row h*hd + half*hd/2 + j."""
    rows, cols = w.shape
    hd = rows // heads
    return w.reshape(heads, hd // 2, 2, cols).transpose(0, 2, 1, 3).reshape(rows, cols)


def check_dense(path, dense_path):
    """Every tensor of path dequantised here against dense_path's F32 one."""
    _, q = read_gguf(path)
    _, d = read_gguf(dense_path)
    differ = []
    for name, (t, shape, raw) in q.items():
        dt, dshape, draw = d[name]
        if dshape != shape:
            raise SystemExit(f"{name}: shape {shape} here, {dshape} in {dense_path}")
        a = dequantise(t, raw, int(np.prod(shape)))
        b = dequantise(dt, draw, int(np.prod(shape)))
        diff = float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))) if a.size else 0.0
        if not np.array_equal(a, b):
            differ.append(f"{name} ({TYPES[t][0]}, max |diff| {diff:.3g})")
    kinds = {}
    for t, _, _ in q.values():
        kinds[TYPES[t][0]] = kinds.get(TYPES[t][0], 0) + 1
    types = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
    print(f"{path} dequantised here vs {dense_path}: {len(q)} tensors ({types}), {len(differ)} differ"
          f"{': ' + ', '.join(differ[:5]) if differ else ' (all equal value for value)'}")
    return not differ


def main():
    if len(sys.argv) != 4 or sys.argv[1] != "check":
        sys.exit(__doc__)
    sys.exit(0 if check_dense(sys.argv[2], sys.argv[3]) else 1)


if __name__ == "__main__":
    main()
