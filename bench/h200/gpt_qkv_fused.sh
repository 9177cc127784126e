#!/usr/bin/env bash
# GPT step with each block's q, k and v by one product (the three weights
# joined, the heads read in place from its [B, T, 3 D] rows, their
# gradients written by the attention backward into one [B, T, 3 D] tensor):
# main's build (base/) against this one's default and `--qkv separate`
# (three products), base and the default again, the PyTorch peer, then 6
# traced steps and one validation batch of base and of the default for
# the GPU time by op. The folder: the Release train_gpt and
# libwebtensor*.so.0 (base/: main's), gpt_torch.py, open_mpi_libs.sh and
# debs/ (Open MPI, which train_gpt links), fortunes/ (Debian's text
# files); DAWN_XZ (default: dawn.xz in the folder) is Dawn's library,
# xz-compressed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
O=${OUT:-/tmp/gpt_qkv_fused}; mkdir -p "$O"
source "$here"/open_mpi_libs.sh
xz -dc "${DAWN_XZ:-$here/dawn.xz}" > /tmp/libwebgpu_wrapper.so
export WT_WEBGPU_LIB=/tmp/libwebgpu_wrapper.so
BASE_LD=$here/base:${LD_LIBRARY_PATH:-}:$MPILIB
NEW_LD=$here:${LD_LIBRARY_PATH:-}:$MPILIB
chmod +x "$here"/train_gpt "$here"/base/train_gpt
D=$here/fortunes
G=(--backend webgpu --data "$D" --steps 40 --print-every 10 --eval-every 0 --eval-batches 2 --sample 0 --print-loss)
T=(--backend webgpu --data "$D" --steps 6 --print-every 6 --eval-every 0 --eval-batches 1 --sample 0)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
t0=$(date +%s)
show() { grep -E "^step +40/|^step 40 loss|val|rror|dapter" "$1" | head -n 6; }
run() { # name, build (base or branch), train_gpt's extra options
    local name=$1 build=$2 ld=$NEW_LD bin=$here/train_gpt
    shift 2
    [ "$build" = base ] && ld=$BASE_LD bin=$here/base/train_gpt
    echo "== $name ($build $*)"
    LD_LIBRARY_PATH=$ld timeout 40 "$bin" "${G[@]}" "$@" > "$O/$name.txt" 2>&1; show "$O/$name.txt"
}
run base base
run fused branch
run separate branch --qkv separate
run base2 base
run fused2 branch
echo "== PyTorch eager"; timeout 45 python3 "$here"/gpt_torch.py --data "$D" --steps 30 > "$O/torch.txt" 2>&1; tail -n 2 "$O/torch.txt"
echo "elapsed $(( $(date +%s) - t0 )) s"
for r in base fused; do
    ld=$NEW_LD; bin=$here/train_gpt; [ $r = base ] && ld=$BASE_LD bin=$here/base/train_gpt
    echo "== traced $r"
    WT_TRACE=$O/trace_$r.json LD_LIBRARY_PATH=$ld timeout 30 "$bin" "${T[@]}" 2>&1 | grep -E "^step|rror" | tail -n 1
    # GPU time and dispatches by op (6 steps and one validation batch),
    # the ops the products of q, k, v and their gradients touch first.
    python3 - "$O"/trace_$r.json <<'PY'
import collections, json, sys
ev = [e for e in json.load(open(sys.argv[1])) if e.get("ph") == "X"]
tot = sum(e["dur"] for e in ev)
t, n = collections.Counter(), collections.Counter()
for e in ev:
    t[e["name"]] += e["dur"]; n[e["name"]] += 1
print(f"  GPU time {tot / 1e3:.1f} ms, {len(ev)} dispatches")
for k in ["matmul_fused", "matmul", "attention_backward", "attention", "add", "sum", "copy_into", "grad_clip_scale"]:
    if n[k]: print(f"  {k:20s} {t[k] / 1e3:8.2f} ms {n[k]:6d}")
PY
    rm -f "$O"/trace_$r.json
done
echo "elapsed $(( $(date +%s) - t0 )) s"
echo "== table: ms a step, steps 31-40; step 40 loss; validation"
for r in base fused separate base2 fused2; do
    printf "%-9s %s | %s | %s\n" $r "$(grep -E '^step +40/' "$O/$r.txt" | head -n 1 | grep -o '[0-9.]* ms/step')" \
        "$(grep -E '^step 40 loss' "$O/$r.txt")" "$(grep -o 'validation loss [0-9.]*' "$O/$r.txt")"
done
printf "%-9s %s\n" torch "$(grep -o '[0-9.]* ms/step' "$O/torch.txt" | tail -n 1)"
