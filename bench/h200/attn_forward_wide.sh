#!/usr/bin/env bash
# The attention forward of the GPT step (B 64, H 6, S 256, D 64, causal):
# 6 traced steps and one validation batch of the older kernel
# (WT_ATTN_FWD_KERNEL=tiled) and of attention_tiled_wide.wgsl's forms
# (unset: 64 rows a workgroup; small: 32), then the 40-step run of main's
# build (base/), of this build with the form whose forward was fastest, of
# this build under =tiled, and PyTorch eager.
# The folder: train_gpt, libwebtensor*.so.0 (base/ the same of main),
# gpt_torch.py, open_mpi_libs.sh and debs/ (Open MPI, which train_gpt
# links), fortunes/ (Debian's text files), dawn.xz (Dawn's library,
# xz-compressed).
set -u
here=$(cd "$(dirname "$0")" && pwd)
O=${OUT:-/tmp/attn_forward_wide}; mkdir -p "$O"
source "$here"/open_mpi_libs.sh
xz -dc "$here"/dawn.xz > /tmp/libwebgpu_wrapper.so
export WT_WEBGPU_LIB=/tmp/libwebgpu_wrapper.so
BASE_LD=$here/base:${LD_LIBRARY_PATH:-}:$MPILIB
NEW_LD=$here:${LD_LIBRARY_PATH:-}:$MPILIB
chmod +x "$here"/train_gpt "$here"/base/train_gpt
D=$here/fortunes
G=(--backend webgpu --data "$D" --steps 40 --print-every 10 --eval-every 0 --eval-batches 2 --sample 0 --print-loss)
T=(--backend webgpu --data "$D" --steps 6 --print-every 6 --eval-every 0 --eval-batches 1 --sample 0)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
t0=$(date +%s)
T_DIR=/tmp/traces; mkdir -p $T_DIR
for f in tiled wide small; do
    k=$f; [ $f = wide ] && k=
    WT_ATTN_FWD_KERNEL=$k WT_TRACE=$T_DIR/$f.json LD_LIBRARY_PATH=$NEW_LD timeout 30 "$here"/train_gpt "${T[@]}" > $T_DIR/$f.txt 2>&1 || echo "traced $f failed: $(tail -n 2 $T_DIR/$f.txt)"
done
best=$(python3 - $T_DIR <<'PY' 2> $O/forward.txt
import json, sys, os
d = sys.argv[1]
res = {}
print("attention forward a layer (traced GPU time): training steps (36 calls) / validation (6)", file=sys.stderr)
for n in ["tiled", "wide", "small"]:
    f = os.path.join(d, f"{n}.json")
    if not os.path.exists(f): print(n, "no trace", file=sys.stderr); continue
    ev = sorted((e for e in json.load(open(f)) if e.get("ph") == "X"), key=lambda e: e["ts"])
    fw = [e["dur"] for e in ev if e["name"] == "attention"]
    bw = [e["dur"] for e in ev if e["name"] == "attention_backward"]
    tr, va = fw[:36], fw[36:]
    res[n] = sum(tr) / max(len(tr), 1)
    print(f"{n:9s} {len(fw)} calls: {res[n]:7.1f} us train, {sum(va) / max(len(va), 1):7.1f} us validation; backward {sum(bw) / max(len(bw), 1):6.1f} us a dispatch; all GPU {sum(e['dur'] for e in ev) / 1e3:.1f} ms", file=sys.stderr)
print(min((v, n) for n, v in res.items() if n != "tiled")[1])
PY
)
cat $O/forward.txt; echo "fastest wide form: $best"; [ "$best" = wide ] && best=
echo "elapsed $(( $(date +%s) - t0 )) s"
runs="base:X=0:base branch:WT_ATTN_FWD_KERNEL=$best:new tiled:WT_ATTN_FWD_KERNEL=tiled:new branch2:WT_ATTN_FWD_KERNEL=$best:new"
for r in $runs; do
    IFS=: read name knob build <<< "$r"
    if [ $build = base ]; then L=$BASE_LD; X="$here"/base/train_gpt; else L=$NEW_LD; X="$here"/train_gpt; fi
    env $knob LD_LIBRARY_PATH=$L timeout 40 "$X" "${G[@]}" > $O/$name.txt 2>&1
    echo "== $name ($knob): rc $? $(grep -E '^step +40/' $O/$name.txt | grep -o '[0-9.]* ms/step')"
done
grep -m1 -iE "adapter" $O/branch.txt
echo "== PyTorch eager"; timeout 60 python3 "$here"/gpt_torch.py --data "$D" --steps 30 > $O/torch.txt 2>&1; tail -n 2 $O/torch.txt
echo "elapsed $(( $(date +%s) - t0 )) s"
echo "== table: ms a step (steps 31-40), step 40 loss, validation"
for r in base branch tiled branch2; do
    printf "%-8s %-12s %s  %s\n" $r "$(grep -E '^step +40/' $O/$r.txt | grep -o '[0-9.]* ms/step')" "$(grep -E '^step 40 loss' $O/$r.txt)" "$(grep -o 'validation loss [0-9.]*' $O/$r.txt)"
done
printf "%-8s %s\n" torch "$(grep -o '[0-9.]* ms/step' $O/torch.txt | tail -n 1)"
