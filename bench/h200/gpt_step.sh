#!/usr/bin/env bash
# GPT training step time: main's build (base/) against this branch's (GEMM
# tiles and k splits chosen for the example's shapes, layer norm's backward
# in one kernel, vec4 copies of the head transposes), the branch with the
# composed layer-norm backward (WT_NORM_BACKWARD=composed), the PyTorch
# peer, the products of one step timed alone (bench_gpt_gemm) with each
# library, and a traced run of base and branch for GPU time by op.
# Run from the repository root after the standard set-up; base/ holds
# main's train_gpt and libraries, the folder itself the branch's, debs/
# the Open MPI packages train_gpt links, fortunes/ the text.
set -u
here=$(cd "$(dirname "$0")" && pwd)
source "$here"/open_mpi_libs.sh
BASE_LD=$here/base:${LD_LIBRARY_PATH:-}:$MPILIB
NEW_LD=$here:${LD_LIBRARY_PATH:-}:$MPILIB
D=$here/fortunes
G=(--backend webgpu --data "$D" --steps 40 --print-every 10 --eval-every 0 --eval-batches 2 --sample 0 --print-loss)
T=(--backend webgpu --data "$D" --steps 12 --print-every 12 --eval-every 0 --eval-batches 1 --sample 0)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== products alone, base"; LD_LIBRARY_PATH=$BASE_LD timeout 60 "$here"/bench_gpt_gemm 2>&1 | grep -v "^backend"
echo "== products alone, branch"; LD_LIBRARY_PATH=$NEW_LD timeout 60 "$here"/bench_gpt_gemm 2>&1 | grep -v "^backend"
echo "== base (main)"; LD_LIBRARY_PATH=$BASE_LD timeout 120 "$here"/base/train_gpt "${G[@]}" 2>&1 | grep -E "^step +[0-9]+/|^step [1-3] loss|^step 40 loss|rror|dapter"
echo "== branch (default)"; LD_LIBRARY_PATH=$NEW_LD timeout 120 "$here"/train_gpt "${G[@]}" 2>&1 | grep -E "^step +[0-9]+/|^step [1-3] loss|^step 40 loss|rror|dapter"
echo "== branch, WT_NORM_BACKWARD=composed"; WT_NORM_BACKWARD=composed LD_LIBRARY_PATH=$NEW_LD timeout 120 "$here"/train_gpt "${G[@]}" 2>&1 | grep -E "^step  |rror" | tail -n 5
echo "== base again"; LD_LIBRARY_PATH=$BASE_LD timeout 120 "$here"/base/train_gpt "${G[@]}" 2>&1 | grep -E "^step  |rror" | tail -n 2
echo "== branch again"; LD_LIBRARY_PATH=$NEW_LD timeout 120 "$here"/train_gpt "${G[@]}" 2>&1 | grep -E "^step  |rror" | tail -n 2
echo "== PyTorch eager"; timeout 150 python3 "$here"/gpt_torch.py --data "$D" --steps 30 2>&1 | tail -n 4
echo "== base traced, 12 steps"; WT_TRACE=$OUT/trace_base.json LD_LIBRARY_PATH=$BASE_LD timeout 90 "$here"/base/train_gpt "${T[@]}" 2>&1 | grep -E "^step|rror" | tail -n 2
echo "== branch traced, 12 steps"; WT_TRACE=$OUT/trace.json LD_LIBRARY_PATH=$NEW_LD timeout 90 "$here"/train_gpt "${T[@]}" 2>&1 | grep -E "^step|rror" | tail -n 2
python3 "$here"/trace_ops.py "$OUT"/trace_base.json "$OUT"/trace.json
ls -la $OUT
