#!/usr/bin/env bash
# Quantised GEMV on the H200: the f32 kernels (default settings) against the
# 8-bit-x integer-dot kernel (WT_QUANT_GEMV_X8=1) at LANES 32 and 16, X8=2
# (units split over threads) at 32, and X8=1 LANES 8 if time is left,
# after the quant test suite on the real adapter with the 8-bit path on; < 90 s.
# Run from the repository root after the standard prefix (LD_LIBRARY_PATH
# holding this script's folder, which holds the webtensor program, the quant
# test program and libwebtensor.so.0). CSVs and logs go to $OUT (or /tmp/gpuq-out).
set -u
d=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/gpuq-out}
mkdir -p "$out"
cli=$d/webtensor
start=$(date +%s)
"$cli" info > "$out/info.txt" 2>&1
grep -m3 -iE "adapter|nvidia" "$out/info.txt"
echo "== the quant test suite on the device with WT_QUANT_GEMV_X8=1 and =2"
for x8 in 1 2; do
  WT_QUANT_GEMV_X8=$x8 timeout 15 "$d/quant" vulkan > "$out/quant_x8_$x8.txt" 2>&1
  echo "X8=$x8 rc=$? $(tail -1 "$out/quant_x8_$x8.txt")"
  grep FAIL "$out/quant_x8_$x8.txt" | head -3
done
cases=gemv_q8_0,gemv_q4_0,gemv_q4_k,gemv_q6_k
run() { # name, env...
  local name=$1; shift
  local left=$(( 80 - ($(date +%s) - start) ))
  if [ $left -lt 8 ]; then echo "$name skipped (time)"; return; fi
  [ $left -gt 20 ] && left=20
  env "$@" timeout $left "$cli" bench --size ${SIZE:-large} --backend ${BACKEND:-webgpu} --no-check --filter $cases \
    --csv "$out/$name.csv" > "$out/$name.log" 2>&1
  echo "$name rc=$? ($(( $(date +%s) - start )) s)"
}
run old                                  # f32 kernels: RPT 4 for Q4_0/Q4_K, 1 for Q8_0/Q6_K, lanes 32
run x8_l32 WT_QUANT_GEMV_X8=1 WT_QUANT_GEMV_LANES=32
run x8c_l32 WT_QUANT_GEMV_X8=2 WT_QUANT_GEMV_LANES=32   # units split over threads (Q8_0, Q4_0, Q4_K)
run x8_l16 WT_QUANT_GEMV_X8=1 WT_QUANT_GEMV_LANES=16
[ $(( $(date +%s) - start )) -lt 62 ] && run x8_l8 WT_QUANT_GEMV_X8=1 WT_QUANT_GEMV_LANES=8
python3 - "$out" <<'PY'
import csv, os, sys
out = sys.argv[1]
names = [n for n in ["old", "x8_l32", "x8c_l32", "x8_l16", "x8_l8"] if os.path.exists(os.path.join(out, n + ".csv"))]
res, keys = {}, []
for n in names:
    f = os.path.join(out, n + ".csv")
    if not os.path.exists(f): continue
    for r in csv.DictReader(open(f)):
        if r["backend"] != "webgpu": continue
        k = (r["case"], r["shape"])
        if k not in keys: keys.append(k)
        res[(n,) + k] = "%.1f us %4.0f" % (float(r["median_ms"]) * 1e3, float(r["rate"])) if r["status"] == "OK" else r["status"]
print("%-10s %-11s" % ("case", "N x K") + "".join(" | %-15s" % n for n in names) + "   (us, GB/s in quantised bytes)")
for k in keys:
    print("%-10s %-11s" % k + "".join(" | %-15s" % res.get((n,) + k, "-") for n in names))
PY
echo "total $(( $(date +%s) - start )) s"
