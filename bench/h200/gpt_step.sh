#!/usr/bin/env bash
# GPT training step time: main's build (base/) against this branch's
# (column-sum kernel for reductions over leading axes; batch folded into
# the rows for a batch times one matrix; small workgroups for short rows),
# the branch with the column kernel off (WT_REDUCE_COLUMNS=0), at other
# chunk sizes, and with short rows on 256 threads as before
# (WT_REDUCE_WG=256), the PyTorch peer, and a traced run of base and branch
# for GPU time by op. Two runs force one GEMM tile on every product
# (data points for the short-k products, not settings to keep).
# Run from the repository root after the standard set-up.
set -u
here=$(cd "$(dirname "$0")" && pwd)
P=/tmp/ompi
rm -rf "$P" && mkdir -p "$P"
for f in "$here"/debs/*.deb; do
    case "$f" in
    *libudev1_*) ldconfig -p | grep -q "libudev.so.1 " && continue ;;
    *libatomic1_*) ldconfig -p | grep -q "libatomic.so.1 " && continue ;;
    esac
    dpkg -x "$f" "$P"
done
MPILIB=$P/usr/lib/x86_64-linux-gnu:$P/usr/lib/x86_64-linux-gnu/openmpi/lib:$P/lib/x86_64-linux-gnu
BASE_LD=$here/base:${LD_LIBRARY_PATH:-}:$MPILIB
NEW_LD=$here:${LD_LIBRARY_PATH:-}:$MPILIB
D=$here/fortunes
G=(--backend webgpu --data "$D" --steps 40 --print-every 10 --eval-every 0 --eval-batches 2 --sample 0)
T=(--backend webgpu --data "$D" --steps 12 --print-every 12 --eval-every 0 --eval-batches 1 --sample 0)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== base (main)"; LD_LIBRARY_PATH=$BASE_LD timeout 120 "$here"/base/train_gpt "${G[@]}" 2>&1 | grep -E "^step|rror|dapter" | tail -n 6
echo "== branch (default)"; LD_LIBRARY_PATH=$NEW_LD timeout 120 "$here"/train_gpt "${G[@]}" 2>&1 | grep -E "^step|rror|dapter" | tail -n 6
echo "== branch, WT_REDUCE_COLUMNS=0 (strided kernel as before)"; WT_REDUCE_COLUMNS=0 LD_LIBRARY_PATH=$NEW_LD timeout 120 "$here"/train_gpt "${G[@]}" 2>&1 | grep -E "^step|rror" | tail -n 5
for v in WT_REDUCE_WG=256; do
echo "== branch, $v, 20 steps"; env $v LD_LIBRARY_PATH=$NEW_LD timeout 90 "$here"/train_gpt --backend webgpu --data "$D" --steps 20 --print-every 10 --eval-every 0 --eval-batches 2 --sample 0 2>&1 | grep -E "^step|rror" | tail -n 2
done
echo "== base again"; LD_LIBRARY_PATH=$BASE_LD timeout 120 "$here"/base/train_gpt "${G[@]}" 2>&1 | grep -E "^step|rror" | tail -n 2
echo "== PyTorch eager"; timeout 150 python3 "$here"/gpt_torch.py --data "$D" --steps 30 2>&1 | tail -n 4
echo "== base traced, 12 steps"; WT_TRACE=$OUT/trace_base.json LD_LIBRARY_PATH=$BASE_LD timeout 90 "$here"/base/train_gpt "${T[@]}" 2>&1 | grep -E "^step|rror" | tail -n 2
echo "== branch traced, 12 steps"; WT_TRACE=$OUT/trace.json LD_LIBRARY_PATH=$NEW_LD timeout 90 "$here"/train_gpt "${T[@]}" 2>&1 | grep -E "^step|rror" | tail -n 2
python3 "$here"/trace_ops.py "$OUT"/trace_base.json "$OUT"/trace.json
ls -la $OUT
