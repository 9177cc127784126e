#!/usr/bin/env bash
# Issue 19: the quantised slot GEMV's row-group sums through subgroup
# operations (one barrier) against main's workgroup tree, slots in flight
# (WT_QUANT_GEMV_UNROLL) and threads a row group (WT_QUANT_GEMV_LANES)
# swept by knobs: the bench's GEMV on the 852M Llama's decode shapes, then
# its captured decode from Q4_0 and Q8_0 GGUF files, the greedy tokens of
# every run against the base's.
# The folder: base/ (main: libwebtensor.so.0, llama, webtensor), new/ (the
# variant's build: the same and llama_to_gguf, the quant test),
# llama_ref.py, dawn.xz (Dawn's library, xz). BENCH and DEC list the runs,
# name:build:VAR=value[,VAR=value] (DEC also :q4_0 or :q8_0); the
# defaults run base and new once each. The Vulkan loader's packages and
# VK_DRIVER_FILES as for the other scripts here.
set -u
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/quant-gemv-decode}; mkdir -p $O
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
xz -dc $D/dawn.xz > /tmp/libwebgpu_wrapper.so; export WT_WEBGPU_LIB=/tmp/libwebgpu_wrapper.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
LD_LIBRARY_PATH=$D/new:${LD_LIBRARY_PATH:-} $D/new/webtensor info 2>&1 | grep -m3 -iE "adapter 0|subgroups"
LD_LIBRARY_PATH=$D/new:${LD_LIBRARY_PATH:-} timeout 25 $D/new/quant vulkan > $O/quant_test.txt 2>&1; echo "quant suite (new, vulkan): rc=$? $(tail -1 $O/quant_test.txt) ($(el) s)"; grep FAIL $O/quant_test.txt | head -3
M=/tmp/m852; (python3 $D/llama_ref.py make --size large --dtype f16 --out $M --seed 0 > $O/make.log 2>&1; for k in ${KINDS:-q4_0 q8_0}; do LD_LIBRARY_PATH=$D/new timeout 90 $D/new/llama_to_gguf $M /tmp/m_$k.gguf $k > $O/gguf_$k.log 2>&1; done; touch /tmp/made) &
cases=${CASES:-gemv_q4_0,gemv_q8_0}
b() { local name=$1 lib=$2; shift 2; [ $(el) -gt ${BENCH_UNTIL:-150} ] && { echo "$name skipped"; return; }
  env LD_LIBRARY_PATH=$D/$lib:${LD_LIBRARY_PATH:-} "$@" timeout 30 $D/new/webtensor bench --size large --backend webgpu --no-check --filter $cases --csv $O/b_$name.csv > $O/b_$name.log 2>&1
  echo "bench $name rc=$? ($(el) s)"; }
for v in ${BENCH:-base:base:X=0 new:new:X=0}; do IFS=: read n l e <<< "$v"; b $n $l ${e//,/ }; done
python3 - $O <<'PY'
import csv, glob, os, sys
o = sys.argv[1]; names = [os.path.basename(f)[2:-4] for f in sorted(glob.glob(f"{o}/b_*.csv"), key=os.path.getmtime)]
res, keys = {}, []
for n in names:
    for r in csv.DictReader(open(f"{o}/b_{n}.csv")):
        k = (r["case"], r["shape"]); keys += [k] if k not in keys else []
        res[(n,) + k] = "%.1f/%4.0f" % (float(r["median_ms"]) * 1e3, float(r["rate"])) if r["status"] == "OK" else r["status"]
print("%-10s %-11s" % ("case", "shape") + "".join(" | %-11s" % n for n in names) + "  (us / GB/s)")
for k in keys: print("%-10s %-11s" % k + "".join(" | %-11s" % res.get((n,) + k, "-") for n in names))
PY
while [ ! -e /tmp/made ]; do sleep 1; done; tail -1 $O/make.log; ls -la /tmp/m_*.gguf; echo "gguf ($(el) s)"
dec() { local name=$1 lib=$2 e=$3 model=$4; [ $(el) -gt ${DEC_UNTIL:-280} ] && { echo "$name skipped"; return; }
  env LD_LIBRARY_PATH=$D/$lib:${LD_LIBRARY_PATH:-} $e timeout 40 $D/$lib/llama --model /tmp/m_$model.gguf --backend webgpu --tokens 128 --decode graph > $O/dec_$name.log 2>&1
  echo "dec $name rc=$? $(grep -E '^decode \(' $O/dec_$name.log) ($(el) s)"; }
for v in ${DEC:-base:base:X=0:q4_0 new:new:X=0:q4_0}; do IFS=: read n l e m <<< "$v"; dec $n $l "${e//,/ }" $m; done
for f in $O/dec_*.log; do n=$(basename $f .log); m=$(grep -q q8 <<< $n && echo q8_0_base || echo q4_0_base);
  t=$(grep "^tokens:" $f); [ -n "$t" ] || { echo "$n: no tokens"; continue; }
  [ "$t" = "$(grep "^tokens:" $O/dec_$m.log)" ] && echo "$n: tokens = $m" || echo "$n: tokens DIFFER from $m"; done
echo "total $(el) s"
