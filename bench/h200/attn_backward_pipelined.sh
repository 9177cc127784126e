#!/usr/bin/env bash
# GPT step with the pipelined attention backward: main's build (base/)
# against the branch's (this folder) on its default kernels and with
# WT_ATTN_BWD_KERNEL=small (the prefetch alone), the PyTorch peer, then
# traced steps of the branch on each of its kernel pairs (pipelined,
# small, tiled) for the two backward kernels' GPU times. The folder also
# holds the branch's `webtensor` tool (its adapter limits are printed).
set -u
here=$(cd "$(dirname "$0")" && pwd)
source "$here"/open_mpi_libs.sh
BASE_LD=$here/base:${LD_LIBRARY_PATH:-}:$MPILIB
NEW_LD=$here:${LD_LIBRARY_PATH:-}:$MPILIB
D=$here/fortunes
G=(--backend webgpu --data "$D" --steps 40 --print-every 10 --eval-every 0 --eval-batches 2 --sample 0 --print-loss)
T=(--backend webgpu --data "$D" --steps 6 --print-every 6 --eval-every 0 --eval-batches 1 --sample 0)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
LD_LIBRARY_PATH=$NEW_LD timeout 20 "$here"/webtensor info 2>&1 | grep -E "^  name|driver|workgroup storage|invocations" | head -n 8
t0=$(date +%s)
echo "== base (main)"; LD_LIBRARY_PATH=$BASE_LD timeout 40 "$here"/base/train_gpt "${G[@]}" > $OUT/base.txt 2>&1; grep -E "^step +[0-9]+/|^step [1-3] loss|^step 40 loss|rror|dapter" $OUT/base.txt
echo "== branch"; LD_LIBRARY_PATH=$NEW_LD timeout 40 "$here"/train_gpt "${G[@]}" > $OUT/branch.txt 2>&1; grep -E "^step +[0-9]+/|^step [1-3] loss|^step 40 loss|rror|dapter" $OUT/branch.txt
echo "== branch small"; WT_ATTN_BWD_KERNEL=small LD_LIBRARY_PATH=$NEW_LD timeout 40 "$here"/train_gpt "${G[@]}" > $OUT/small.txt 2>&1; grep -E "^step +[0-9]+/|^step 40 loss|rror" $OUT/small.txt
echo "== PyTorch eager"; timeout 45 python3 "$here"/gpt_torch.py --data "$D" --steps 30 > $OUT/torch.txt 2>&1; tail -n 3 $OUT/torch.txt
echo "elapsed $(( $(date +%s) - t0 )) s"
for kern in pipelined small tiled; do
    echo "== branch traced, WT_ATTN_BWD_KERNEL=$kern"
    WT_ATTN_BWD_KERNEL=$kern WT_TRACE=$OUT/trace_$kern.json LD_LIBRARY_PATH=$NEW_LD timeout 25 "$here"/train_gpt "${T[@]}" 2>&1 | grep -E "^step|rror" | tail -n 1
    # The backward's two dispatches carry one name: in order, the query kernel, then the key kernel.
    python3 - "$OUT"/trace_$kern.json <<'PY'
import json, sys
ev = sorted((e for e in json.load(open(sys.argv[1])) if e.get("ph") == "X"), key=lambda e: e["ts"])
tot = sum(e["dur"] for e in ev)
d = [e["dur"] for e in ev if e["name"] == "attention_backward"]
qk, kk = d[0::2], d[1::2]
print(f"  GPU time {tot / 1e3:.1f} ms; attention_backward {len(d)} dispatches {sum(d) / 1e3:.2f} ms: "
      f"query kernel {sum(qk) / len(qk):.1f} us each, key kernel {sum(kk) / max(len(kk), 1):.1f} us each")
PY
done
python3 "$here"/trace_ops.py "$OUT"/trace_pipelined.json > $OUT/trace_ops.txt 2>&1
echo "elapsed $(( $(date +%s) - t0 )) s"
echo "== table: ms a step, steps 31-40"
for r in base branch small; do printf "%-8s %s\n" $r "$(grep -E '^step +40/' $OUT/$r.txt | grep -o '[0-9.]* ms/step')"; done
printf "%-8s %s\n" torch "$(grep -o '[0-9.]* ms/step' $OUT/torch.txt)"
