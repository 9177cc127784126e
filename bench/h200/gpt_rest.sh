#!/usr/bin/env bash
# GPT step: main's build (base/) against the branch's (this folder), the
# PyTorch peer, then 12 traced steps of each for GPU time by op.
set -u
here=$(cd "$(dirname "$0")" && pwd)
source "$here"/open_mpi_libs.sh
BASE_LD=$here/base:${LD_LIBRARY_PATH:-}:$MPILIB
NEW_LD=$here:${LD_LIBRARY_PATH:-}:$MPILIB
D=$here/fortunes
G=(--backend webgpu --data "$D" --steps 40 --print-every 10 --eval-every 0 --eval-batches 2 --sample 0 --print-loss)
T=(--backend webgpu --data "$D" --steps 12 --print-every 12 --eval-every 0 --eval-batches 1 --sample 0)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
echo "== base (main)"; LD_LIBRARY_PATH=$BASE_LD timeout 40 "$here"/base/train_gpt "${G[@]}" > $OUT/base.txt 2>&1; grep -E "^step +[0-9]+/|^step [1-3] loss|^step 40 loss|rror|dapter" $OUT/base.txt
echo "== branch"; LD_LIBRARY_PATH=$NEW_LD timeout 40 "$here"/train_gpt "${G[@]}" > $OUT/branch.txt 2>&1; grep -E "^step +[0-9]+/|^step [1-3] loss|^step 40 loss|rror|dapter" $OUT/branch.txt
echo "== PyTorch eager"; timeout 50 python3 "$here"/gpt_torch.py --data "$D" --steps 30 > $OUT/torch.txt 2>&1; tail -n 3 $OUT/torch.txt
echo "elapsed $(( $(date +%s) - t0 )) s"
echo "== branch traced"; WT_TRACE=$OUT/trace.json LD_LIBRARY_PATH=$NEW_LD timeout 25 "$here"/train_gpt "${T[@]}" 2>&1 | grep -E "^step|rror" | tail -n 2
echo "== base traced"; WT_TRACE=$OUT/trace_base.json LD_LIBRARY_PATH=$BASE_LD timeout 25 "$here"/base/train_gpt "${T[@]}" 2>&1 | grep -E "^step|rror" | tail -n 2
python3 "$here"/trace_ops.py "$OUT"/trace_base.json "$OUT"/trace.json > $OUT/trace_ops.txt 2>&1; cat $OUT/trace_ops.txt
echo "elapsed $(( $(date +%s) - t0 )) s"
echo "== table: ms a step, steps 31-40"
for r in base branch; do printf "%-8s %s\n" $r "$(grep -E '^step +40/' $OUT/$r.txt | grep -o '[0-9.]* ms/step')"; done
printf "%-8s %s\n" torch "$(grep -o '[0-9.]* ms/step' $OUT/torch.txt)"
