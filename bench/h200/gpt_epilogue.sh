#!/usr/bin/env bash
# GPT training step with wt_linear_fused's product epilogue (the residual
# added in the stores of the attention output projection and of fc2)
# against main's build (base/): 40 steps of base and branch, twice each
# interleaved, the branch under WT_MATMUL_EPILOGUE=0 (the separate passes),
# =2 (also GELU's backward in the stores of fc2's input gradient dy @ w2,
# in a loop after them) and =3 (GELU's derivative computed in the stores
# themselves), 6 traced steps (and one validation batch) of base and the
# branch (under $TRACE_KNOB, default 1) for GPU time by op, and PyTorch
# eager. The folder: train_gpt, libwebtensor*.so.0 (base/ the same of
# main), gpt_torch.py, trace_ops.py, open_mpi_libs.sh and debs/ (Open MPI,
# which train_gpt links), fortunes/ (Debian's text files); Dawn's library
# xz-compressed at $DAWN_XZ (default: dawn.xz beside the script).
set -u
here=$(cd "$(dirname "$0")" && pwd)
O=${OUT:-/tmp/gpt_epilogue}; mkdir -p "$O"
source "$here"/open_mpi_libs.sh
xz -dc "${DAWN_XZ:-$here/dawn.xz}" > /tmp/libwebgpu_wrapper.so
export WT_WEBGPU_LIB=/tmp/libwebgpu_wrapper.so
BASE_LD=$here/base:${LD_LIBRARY_PATH:-}:$MPILIB
NEW_LD=$here:${LD_LIBRARY_PATH:-}:$MPILIB
chmod +x "$here"/train_gpt "$here"/base/train_gpt
D=$here/fortunes
G=(--backend webgpu --data "$D" --steps 40 --print-every 10 --eval-every 0 --eval-batches 2 --sample 0 --print-loss)
T=(--backend webgpu --data "$D" --steps 6 --print-every 6 --eval-every 0 --eval-batches 1 --sample 0)
F="^step +40/|^step 40 loss|rror|dapter"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
t0=$(date +%s)
run() { # name, LD path, binary, env...
    local n=$1 ld=$2 bin=$3; shift 3
    env "$@" LD_LIBRARY_PATH=$ld timeout 40 "$bin" "${G[@]}" > "$O/$n.txt" 2>&1
    echo "== $n: $(grep -E "$F" "$O/$n.txt" | tr '\n' ' ')"
}
run base "$BASE_LD" "$here"/base/train_gpt X=0
run branch "$NEW_LD" "$here"/train_gpt X=0
run base2 "$BASE_LD" "$here"/base/train_gpt X=0
run branch2 "$NEW_LD" "$here"/train_gpt X=0
run knob0 "$NEW_LD" "$here"/train_gpt WT_MATMUL_EPILOGUE=0
run gelu_after "$NEW_LD" "$here"/train_gpt WT_MATMUL_EPILOGUE=2
run inline "$NEW_LD" "$here"/train_gpt WT_MATMUL_EPILOGUE=3
echo "elapsed $(( $(date +%s) - t0 )) s"
WT_TRACE=$O/trace_base.json LD_LIBRARY_PATH=$BASE_LD timeout 25 "$here"/base/train_gpt "${T[@]}" > $O/traced_base.txt 2>&1
WT_MATMUL_EPILOGUE=${TRACE_KNOB:-1} WT_TRACE=$O/trace.json LD_LIBRARY_PATH=$NEW_LD timeout 25 "$here"/train_gpt "${T[@]}" > $O/traced.txt 2>&1
python3 "$here"/trace_ops.py "$O"/trace_base.json "$O"/trace.json > $O/trace_ops.txt 2>&1
# GPU time a step by op (6 steps and a validation batch traced) and the
# products, adds and GELU passes by shape.
python3 - "$O"/trace_base.json "$O"/trace.json <<'PY'
import collections, json, sys
for path in sys.argv[1:]:
    try: ev = [e for e in json.load(open(path)) if e.get("ph") == "X"]
    except Exception as e: print(path, "unreadable", e); continue
    tot = sum(e["dur"] for e in ev)
    print(f"{path.split('/')[-1]}: {tot / 6e3:.2f} ms GPU a step (6 steps + validation, /6)")
    by = collections.defaultdict(lambda: [0.0, 0])
    for e in ev:
        if e["name"] in ("matmul", "matmul_fused", "add", "gelu", "act_backward"):
            k = (e["name"], e.get("args", {}).get("shapes", "")[:72]); by[k][0] += e["dur"]; by[k][1] += 1
    for (n, s), (d, c) in sorted(by.items(), key=lambda kv: -kv[1][0])[:14]:
        print(f"  {n:13s} {s:72s} {d / 6e3:6.3f} ms/step {c:4d} {d / c:7.1f} us")
PY
echo "elapsed $(( $(date +%s) - t0 )) s"
timeout 60 python3 "$here"/gpt_torch.py --data "$D" --steps 30 > $O/torch.txt 2>&1; echo "== torch: $(grep -E 'ms/step|validation' $O/torch.txt | tr '\n' ' ')"
echo "elapsed $(( $(date +%s) - t0 )) s"
echo "== table: ms a step (steps 31-40), step 40 loss, validation"
for r in base branch base2 branch2 knob0 gelu_after inline; do
    printf "%-8s %-14s %-22s %s\n" $r "$(grep -E '^step +40/' $O/$r.txt | grep -o '[0-9.]* ms/step')" \
        "$(grep -E '^step 40 loss' $O/$r.txt)" "$(grep -o 'validation loss [0-9.]*' $O/$r.txt | head -n 1)"
done
printf "%-8s %s\n" torch "$(grep -o '[0-9.]* ms/step' $O/torch.txt | tail -n 1)"
