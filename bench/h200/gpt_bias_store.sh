#!/usr/bin/env bash
# GPT step with the linears' bias added in the product kernel's own stores
# (one kernel a linear) against main's build (base/): the forward products
# alone as wt_linear with bias (bench_gpt_gemm --bias 1, the default and
# WT_BIAS_IN_PRODUCT=0), 40 training steps of base, the branch and the
# branch with WT_BIAS_IN_PRODUCT=0 (then base and branch again), PyTorch
# eager, and 12 traced steps of base and branch for GPU time by op. Run from
# the repository root after the standard set-up; base/ holds main's
# train_gpt and libraries, the folder itself the branch's, debs/ the Open
# MPI packages train_gpt links, fortunes/ the text.
set -u
here=$(cd "$(dirname "$0")" && pwd)
source "$here"/open_mpi_libs.sh
BASE_LD=$here/base:${LD_LIBRARY_PATH:-}:$MPILIB
NEW_LD=$here:${LD_LIBRARY_PATH:-}:$MPILIB
D=$here/fortunes
G=(--backend webgpu --data "$D" --steps 40 --print-every 10 --eval-every 0 --eval-batches 2 --sample 0 --print-loss)
T=(--backend webgpu --data "$D" --steps 12 --print-every 12 --eval-every 0 --eval-batches 1 --sample 0)
F="^step +[0-9]+/|^step [1-3] loss|^step 40 loss|rror|dapter"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
echo "== forward products as wt_linear with bias, branch"
LD_LIBRARY_PATH=$NEW_LD timeout 30 "$here"/bench_gpt_gemm --bias 1 2>&1 | grep -v "^backend"
echo "== the same, WT_BIAS_IN_PRODUCT=0"
WT_BIAS_IN_PRODUCT=0 LD_LIBRARY_PATH=$NEW_LD timeout 30 "$here"/bench_gpt_gemm --bias 1 2>&1 | grep -v "^backend"
echo "== products alone (no bias), branch"
LD_LIBRARY_PATH=$NEW_LD timeout 30 "$here"/bench_gpt_gemm 2>&1 | grep -v "^backend" | head -n 4
echo "elapsed $(( $(date +%s) - t0 )) s"
echo "== base (main)"; LD_LIBRARY_PATH=$BASE_LD timeout 40 "$here"/base/train_gpt "${G[@]}" > $OUT/base.txt 2>&1; grep -E "$F" $OUT/base.txt
echo "== branch"; LD_LIBRARY_PATH=$NEW_LD timeout 40 "$here"/train_gpt "${G[@]}" > $OUT/branch.txt 2>&1; grep -E "$F" $OUT/branch.txt
echo "== branch, WT_BIAS_IN_PRODUCT=0"; WT_BIAS_IN_PRODUCT=0 LD_LIBRARY_PATH=$NEW_LD timeout 40 "$here"/train_gpt "${G[@]}" > $OUT/knob0.txt 2>&1; grep -E "$F" $OUT/knob0.txt
echo "== base again"; LD_LIBRARY_PATH=$BASE_LD timeout 40 "$here"/base/train_gpt "${G[@]}" > $OUT/base2.txt 2>&1; grep -E "^step +40/|rror" $OUT/base2.txt
echo "== branch again"; LD_LIBRARY_PATH=$NEW_LD timeout 40 "$here"/train_gpt "${G[@]}" > $OUT/branch2.txt 2>&1; grep -E "^step +40/|rror" $OUT/branch2.txt
echo "elapsed $(( $(date +%s) - t0 )) s"
echo "== PyTorch eager"; timeout 45 python3 "$here"/gpt_torch.py --data "$D" --steps 30 > $OUT/torch.txt 2>&1; tail -n 3 $OUT/torch.txt
echo "== base traced"; WT_TRACE=$OUT/trace_base.json LD_LIBRARY_PATH=$BASE_LD timeout 25 "$here"/base/train_gpt "${T[@]}" 2>&1 | grep -E "^step|rror" | tail -n 1
echo "== branch traced"; WT_TRACE=$OUT/trace.json LD_LIBRARY_PATH=$NEW_LD timeout 25 "$here"/train_gpt "${T[@]}" 2>&1 | grep -E "^step|rror" | tail -n 1
python3 "$here"/trace_ops.py "$OUT"/trace_base.json "$OUT"/trace.json > $OUT/trace_ops.txt 2>&1
grep -E "GPU time|matmul|  add " $OUT/trace_ops.txt | head -n 24
# The products and the same-shape adds, a traced step (12 steps traced).
python3 - "$OUT"/trace_base.json "$OUT"/trace.json <<'PY'
import json, sys
for path in sys.argv[1:]:
    ev = [e for e in json.load(open(path)) if e.get("ph") == "X"]
    for name in ("matmul", "matmul_fused", "add"):
        d = [e["dur"] for e in ev if e["name"] == name]
        print(f"{path.split('/')[-1]:16s} {name:13s} {len(d) / 12:6.1f} a step {sum(d) / 12e3:7.2f} ms a step")
PY
echo "elapsed $(( $(date +%s) - t0 )) s"
echo "== table: ms a step, steps 31-40"
for r in base branch knob0 base2 branch2; do printf "%-8s %s\n" $r "$(grep -E '^step +40/' $OUT/$r.txt | grep -o '[0-9.]* ms/step')"; done
printf "%-8s %s\n" torch "$(grep -o '[0-9.]* ms/step' $OUT/torch.txt)"
