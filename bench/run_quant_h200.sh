#!/usr/bin/env bash
# The quantised GEMV cases (gemv_q8_0, gemv_q4_0, gemv_q4_k, gemv_q6_k at
# the large set's 14336x4096 and 4096x14336, Q4_0 / Q8_0 also at the 1B
# Llama's decode shapes) on a GPU machine, once per
# setting of WT_QUANT_GEMV_RPT (weight rows per thread) and
# WT_QUANT_GEMV_LANES (threads per weight row), or of the 8-bit x kernel
# (WT_QUANT_GEMV_X8=1) and its lanes, with the f32 and f16 GEMV
# of the same run for reference, and the device's plain read bandwidth by
# PyTorch (a sum over 4 GiB) when python3 has torch and TORCH=1.
#
#   bench/run_quant_h200.sh [CLI] [OUT_DIR]
#
# CLI: the webtensor command (default build/tools/webtensor); OUT_DIR: where
# the CSV files go (default bench-quant-DATE). WT_WEBGPU_LIB and
# VK_DRIVER_FILES as for bench/run_h200.sh. CONFIGS: the settings to run,
# RPT:LANES pairs, RPT x8 for the 8-bit x kernel, x8c for it with units
# split over threads (default "1:32 4:32 4:16 4:64"; e.g. "4:32 x8:32
# x8c:32 x8:16").
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cli=${1:-$root/build/tools/webtensor}
out=${2:-$root/bench-quant-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out" || exit 1
status=0
"$cli" info > "$out/info.txt" 2>&1 || status=1
head -5 "$out/info.txt"
for config in ${CONFIGS:-1:32 4:32 4:16 4:64}; do
  rpt=${config%%:*} lanes=${config##*:} x8=0
  if [ "$rpt" = x8 ]; then rpt=1 x8=1; fi
  if [ "$rpt" = x8c ]; then rpt=1 x8=2; fi
  echo "== WT_QUANT_GEMV_RPT=$rpt WT_QUANT_GEMV_LANES=$lanes WT_QUANT_GEMV_X8=$x8"
  WT_QUANT_GEMV_X8=$x8 WT_QUANT_GEMV_RPT=$rpt WT_QUANT_GEMV_LANES=$lanes "$cli" bench --size large --backend webgpu --no-check \
    --filter gemv_q8_0,gemv_q4_0,gemv_q4_k,gemv_q6_k --csv "$out/quant_rpt${rpt}_x8${x8}_lanes$lanes.csv" \
    2>&1 | grep -E "^gemv|error|fail" || status=1
done
echo "== f32 and f16 GEMV, the same run"
"$cli" bench --size large --backend webgpu --no-check --filter gemv,gemv_f16 --csv "$out/gemv.csv" \
  2>&1 | grep -E "^gemv|error|fail" || status=1
if [ "${TORCH:-0}" = 1 ] && python3 -c "import torch" 2>/dev/null; then
  echo "== PyTorch: read bandwidth (sum of a 4 GiB f32 tensor)"
  python3 - <<'PY' || status=1
import torch
x = torch.ones(1 << 30, device="cuda")
for _ in range(3): x.sum()
torch.cuda.synchronize()
s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
best = 1e9
for _ in range(10):
    s.record(); x.sum(); e.record(); torch.cuda.synchronize()
    best = min(best, s.elapsed_time(e) / 1e3)
print("torch sum of 4 GiB: %.3f ms, %.0f GB/s" % (best * 1e3, 4 * 2**30 / best / 1e9))
PY
fi
exit $status
