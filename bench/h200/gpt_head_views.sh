#!/usr/bin/env bash
# GPT step with attention reading and writing heads laid out [B, S, H, D]
# (no copies around attention): main's build (base/) against the branch's
# (this folder), twice each, the PyTorch peer, then 12 traced steps of both
# for the copy kernels' count and GPU time. The folder: train_gpt,
# libwebtensor*.so.0 (and base/ the same of main), gpt_torch.py,
# trace_ops.py, debs/ (Open MPI, which train_gpt links), fortunes/
# (Debian's text files), dawn.xz (Dawn's library, xz-compressed).
set -u
here=$(cd "$(dirname "$0")" && pwd)
source "$here"/open_mpi_libs.sh
xz -dc "$here"/dawn.xz > /tmp/libwebgpu_wrapper.so
export WT_WEBGPU_LIB=/tmp/libwebgpu_wrapper.so
BASE_LD=$here/base:${LD_LIBRARY_PATH:-}:$MPILIB
NEW_LD=$here:${LD_LIBRARY_PATH:-}:$MPILIB
chmod +x "$here"/train_gpt "$here"/base/train_gpt
D=$here/fortunes
G=(--backend webgpu --data "$D" --steps 40 --print-every 10 --eval-every 0 --eval-batches 2 --sample 0 --print-loss)
T=(--backend webgpu --data "$D" --steps 12 --print-every 12 --eval-every 0 --eval-batches 1 --sample 0)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
t0=$(date +%s)
for i in 1 2; do
    echo "== base (main) $i"; LD_LIBRARY_PATH=$BASE_LD timeout 40 "$here"/base/train_gpt "${G[@]}" > $OUT/base$i.txt 2>&1; grep -E "^step +[0-9]+/|^step 40 loss|rror|dapter" $OUT/base$i.txt
    echo "== branch $i"; LD_LIBRARY_PATH=$NEW_LD timeout 40 "$here"/train_gpt "${G[@]}" > $OUT/branch$i.txt 2>&1; grep -E "^step +[0-9]+/|^step 40 loss|rror|dapter" $OUT/branch$i.txt
done
echo "== branch, WT_ATTN_HEAD_VIEWS=0"; WT_ATTN_HEAD_VIEWS=0 LD_LIBRARY_PATH=$NEW_LD timeout 40 "$here"/train_gpt "${G[@]}" > $OUT/branch_knob0.txt 2>&1; grep -E "^step +40/|^step 40 loss|rror" $OUT/branch_knob0.txt
echo "== PyTorch eager"; timeout 45 python3 "$here"/gpt_torch.py --data "$D" --steps 30 > $OUT/torch.txt 2>&1; tail -n 3 $OUT/torch.txt
echo "elapsed $(( $(date +%s) - t0 )) s"
for r in base branch; do
    if [ $r = base ]; then L=$BASE_LD; X="$here"/base/train_gpt; else L=$NEW_LD; X="$here"/train_gpt; fi
    WT_TRACE=$OUT/trace_$r.json LD_LIBRARY_PATH=$L timeout 25 "$X" "${T[@]}" 2>&1 | grep -E "^step|rror" | tail -n 1
done
python3 "$here"/trace_ops.py "$OUT"/trace_base.json "$OUT"/trace_branch.json > $OUT/trace_ops.txt 2>&1
python3 - "$OUT"/trace_base.json "$OUT"/trace_branch.json <<'PY'
import json, sys
for f in sys.argv[1:]:
    ev = [e for e in json.load(open(f)) if e.get("ph") == "X"]
    tot = sum(e["dur"] for e in ev)
    cp = [e["dur"] for e in ev if e["name"] == "copy"]
    att = [e["dur"] for e in ev if e["name"].startswith("attention")]
    print(f"{f.split('/')[-1]}: {tot / 1e3:.1f} ms GPU in 12 steps; copy {len(cp)} kernels {sum(cp) / 1e3:.2f} ms; attention fwd+bwd {len(att)} dispatches {sum(att) / 1e3:.2f} ms")
    ev.sort(key=lambda e: e["ts"])
    fw = [e["dur"] for e in ev if e["name"] == "attention"]
    bw = [e["dur"] for e in ev if e["name"] == "attention_backward"]
    # The backward's two dispatches carry one name: the query kernel, then the key kernel.
    print(f"  forward {sum(fw) / len(fw):.1f} us each, backward query kernel {sum(bw[0::2]) / len(bw[0::2]):.1f} us, key kernel {sum(bw[1::2]) / len(bw[1::2]):.1f} us")
PY
echo "elapsed $(( $(date +%s) - t0 )) s"
echo "== table: ms a step at step 40 (steps 31-40)"
for r in base1 branch1 base2 branch2 branch_knob0; do printf "%-8s %s  %s\n" $r "$(grep -E '^step +40/' $OUT/$r.txt | grep -o '[0-9.]* ms/step')" "$(grep -E '^step 40 loss' $OUT/$r.txt)"; done
printf "%-8s %s\n" torch "$(grep -o '[0-9.]* ms/step' $OUT/torch.txt)"
