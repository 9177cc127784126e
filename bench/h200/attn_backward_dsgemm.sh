#!/usr/bin/env bash
# GPT step with dq of the attention backward as the product ds @ K (the key
# kernel stores ds; WT_ATTN_BWD_DQ): main's build (base/) against the
# branch's (this folder) by default, with WT_ATTN_BWD_DQ=product and
# =kernel (the query kernel's dq), the PyTorch peer, then traced steps of
# the branch on the three for the backward's dispatches' GPU times. (The
# build measured in bench/RESULTS.md had a second product path as its
# default, since dropped; product is the default's name now.) The folder: the
# Release train_gpt and libwebtensor*.so.0 (base/: main's), gpt_torch.py,
# trace_ops.py, debs/ (Open MPI, which train_gpt links), fortunes/
# (Debian's text files); WT_WEBGPU_LIB names Dawn's library.
set -u
here=$(cd "$(dirname "$0")" && pwd)
source "$here"/open_mpi_libs.sh
BASE_LD=$here/base:${LD_LIBRARY_PATH:-}:$MPILIB
NEW_LD=$here:${LD_LIBRARY_PATH:-}:$MPILIB
chmod +x "$here"/train_gpt "$here"/base/train_gpt
D=$here/fortunes
G=(--backend webgpu --data "$D" --steps 40 --print-every 10 --eval-every 0 --eval-batches 2 --sample 0 --print-loss)
T=(--backend webgpu --data "$D" --steps 6 --print-every 6 --eval-every 0 --eval-batches 1 --sample 0)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
t0=$(date +%s)
show() { grep -E "^step +[0-9]+/|^step [1-3] loss|^step 40 loss|val|rror|dapter" "$1" | head -n 12; }
echo "== base (main)"; LD_LIBRARY_PATH=$BASE_LD timeout 40 "$here"/base/train_gpt "${G[@]}" > $OUT/base.txt 2>&1; show $OUT/base.txt
echo "== branch (dq product)"; LD_LIBRARY_PATH=$NEW_LD timeout 40 "$here"/train_gpt "${G[@]}" > $OUT/branch.txt 2>&1; show $OUT/branch.txt
echo "== branch, WT_ATTN_BWD_DQ=product"; WT_ATTN_BWD_DQ=product LD_LIBRARY_PATH=$NEW_LD timeout 40 "$here"/train_gpt "${G[@]}" > $OUT/product.txt 2>&1; show $OUT/product.txt
echo "== branch, WT_ATTN_BWD_DQ=kernel"; WT_ATTN_BWD_DQ=kernel LD_LIBRARY_PATH=$NEW_LD timeout 40 "$here"/train_gpt "${G[@]}" > $OUT/kernel.txt 2>&1; show $OUT/kernel.txt
echo "== PyTorch eager"; timeout 45 python3 "$here"/gpt_torch.py --data "$D" --steps 30 > $OUT/torch.txt 2>&1; tail -n 3 $OUT/torch.txt
echo "elapsed $(( $(date +%s) - t0 )) s"
for dq in default product kernel; do
    echo "== branch traced, WT_ATTN_BWD_DQ=$dq"
    WT_ATTN_BWD_DQ=$dq WT_TRACE=$OUT/trace_$dq.json LD_LIBRARY_PATH=$NEW_LD timeout 25 "$here"/train_gpt "${T[@]}" 2>&1 | grep -E "^step|rror" | tail -n 1
    # The backward's dispatches carry one name: per call, in order (36
    # calls: 6 layers x 6 steps).
    python3 - "$OUT"/trace_$dq.json <<'PY'
import json, sys
ev = sorted((e for e in json.load(open(sys.argv[1])) if e.get("ph") == "X"), key=lambda e: e["ts"])
tot = sum(e["dur"] for e in ev)
d = [e["dur"] for e in ev if e["name"] == "attention_backward"]
per = max(len(d) // 36, 1)
means = [sum(d[i::per]) / len(d[i::per]) for i in range(per)]
print(f"  GPU time {tot / 1e3:.1f} ms; attention_backward {len(d)} dispatches ({per} a call) {sum(d) / 1e3:.2f} ms; "
      f"a call: {' + '.join(f'{m:.1f}' for m in means)} = {sum(means):.1f} us")
PY
done
python3 "$here"/trace_ops.py "$OUT"/trace_default.json "$OUT"/trace_kernel.json > $OUT/trace_ops.txt 2>&1
echo "elapsed $(( $(date +%s) - t0 )) s"
echo "== table: ms a step, steps 31-40"
for r in base branch product kernel; do printf "%-8s %s\n" $r "$(grep -E '^step +40/' $OUT/$r.txt | grep -o '[0-9.]* ms/step')"; done
printf "%-8s %s\n" torch "$(grep -o '[0-9.]* ms/step' $OUT/torch.txt)"
