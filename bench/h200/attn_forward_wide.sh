#!/usr/bin/env bash
# The GPT step with the wide attention forward (attention_tiled_wide.wgsl,
# 64 rows a workgroup, 4 x 4 scores a thread) against main's build (base/)
# and against the same build under WT_ATTN_FWD_KERNEL=tiled (the older
# forward) and =small (the wide kernel's 32-row form); PyTorch eager in the
# same call; then 6 traced steps and one validation batch of each for the
# forward's GPU time a layer. The folder: train_gpt, libwebtensor*.so.0
# (base/ the same of main), gpt_torch.py, open_mpi_libs.sh and debs/ (Open
# MPI, which train_gpt links), fortunes/ (Debian's text files), dawn.xz
# (Dawn's library, xz-compressed).
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
# name, knob (X=0: none), build
runs="base:X=0:base branch:X=0:new base2:X=0:base branch2:X=0:new tiled:WT_ATTN_FWD_KERNEL=tiled:new small:WT_ATTN_FWD_KERNEL=small:new"
for r in $runs; do
    IFS=: read name knob build <<< "$r"
    if [ $build = base ]; then L=$BASE_LD; X="$here"/base/train_gpt; else L=$NEW_LD; X="$here"/train_gpt; fi
    env $knob LD_LIBRARY_PATH=$L timeout 40 "$X" "${G[@]}" > $O/$name.txt 2>&1
    echo "== $name ($knob): rc $? $(grep -E '^step +40/' $O/$name.txt | grep -o '[0-9.]* ms/step')"
done
grep -m1 -iE "adapter|device" $O/branch.txt
echo "== PyTorch eager"; timeout 60 python3 "$here"/gpt_torch.py --data "$D" --steps 30 > $O/torch.txt 2>&1; tail -n 2 $O/torch.txt
echo "elapsed $(( $(date +%s) - t0 )) s"
for r in base:X=0:base tiled:WT_ATTN_FWD_KERNEL=tiled:new wide:X=0:new small:WT_ATTN_FWD_KERNEL=small:new; do
    IFS=: read name knob build <<< "$r"
    if [ $build = base ]; then L=$BASE_LD; X="$here"/base/train_gpt; else L=$NEW_LD; X="$here"/train_gpt; fi
    env $knob WT_TRACE=$O/trace_$name.json LD_LIBRARY_PATH=$L timeout 30 "$X" "${T[@]}" > $O/trace_$name.txt 2>&1; echo "traced $name: rc $?"
done
python3 - "$O" <<'PY'
import json, sys, os
d = sys.argv[1]
print("== attention forward a layer (traced GPU time): training steps (36 calls) / validation (6)")
for n in ["base", "tiled", "wide", "small"]:
    f = os.path.join(d, f"trace_{n}.json")
    if not os.path.exists(f): print(n, "no trace"); continue
    ev = sorted((e for e in json.load(open(f)) if e.get("ph") == "X"), key=lambda e: e["ts"])
    fw = [e["dur"] for e in ev if e["name"] == "attention"]
    tr, va = fw[:36], fw[36:]
    tot = sum(e["dur"] for e in ev)
    print(f"{n:6s} {len(fw)} calls: {sum(tr) / max(len(tr), 1):7.1f} us train, {sum(va) / max(len(va), 1):7.1f} us validation; all GPU {tot / 1e3:.1f} ms")
PY
echo "elapsed $(( $(date +%s) - t0 )) s"
echo "== table: ms a step (steps 31-40), step 40 loss, validation"
for r in base branch base2 branch2 tiled small; do
    printf "%-8s %-12s %s  %s\n" $r "$(grep -E '^step +40/' $O/$r.txt | grep -o '[0-9.]* ms/step')" "$(grep -E '^step 40 loss' $O/$r.txt)" "$(grep -o 'validation loss [0-9.]*' $O/$r.txt)"
done
printf "%-8s %s\n" torch "$(grep -o '[0-9.]* ms/step' $O/torch.txt | tail -n 1)"
