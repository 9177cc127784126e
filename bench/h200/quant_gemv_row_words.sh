#!/usr/bin/env bash
# Issue 19: the 8-bit-x Q4_0 GEMV (quant_gemv_x8_fused.wgsl) with
# consecutive threads on consecutive words of a row (WT_QUANT_GEMV_X8_WORDS=
# row) against a thread a pair of blocks (main's, "pair").
# First `webtensor bench --size large --backend webgpu --no-check --filter
# gemv_q4_0` with weights rotated through 256 MB (from DRAM) and with
# --cache-hot (one weight reused: from the L2 where it fits): base (main's
# library), new with row words at 16 and 32 threads a pair of rows, new
# with pair (its code beside main's); then the 852M Llama (llama_ref.py
# make --size large --dtype f16 --seed 0) as Q4_0, `llama --model
# m_q4_0.gguf --backend webgpu --tokens 128 --decode graph`, base / row /
# base / row / pair, greedy tokens compared with base's.
# The folder: base/ and new/ (each llama and libwebtensor.so.0), webtensor
# (the bench), llama_to_gguf, llama_ref.py; WT_WEBGPU_LIB names Dawn's
# library, VK_DRIVER_FILES the Vulkan driver, as for the other scripts here.
# UNTIL (seconds, default 150) skips what would start later.
# The row-word kernel lost (bench/RESULTS.md) and was taken out again: new/
# is a Release build of commit 304d7a2, which has it.
set -u
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/quant-row-words}; mkdir -p $O
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
chmod +x $D/base/llama $D/new/llama $D/llama_to_gguf $D/webtensor
M=/tmp/m852
(python3 $D/llama_ref.py make --size large --dtype f16 --out $M --seed 0 > $O/make.log 2>&1
 LD_LIBRARY_PATH=$D/base:${LD_LIBRARY_PATH:-} timeout 90 $D/llama_to_gguf $M /tmp/m_q4_0.gguf q4_0 > $O/gguf.log 2>&1; touch /tmp/made) &
late() { [ $(el) -gt ${UNTIL:-150} ]; }
# name:lib:words:lanes:flag ("-" for none)
B="base_cold:base:-:-:- row_cold:new:row:-:- pair_cold:new:pair:-:- row32_cold:new:row:32:-"
B="$B base_hot:base:-:-:--cache-hot row_hot:new:row:-:--cache-hot row32_hot:new:row:32:--cache-hot"
B="$B base_cold2:base:-:-:- row_cold2:new:row:-:-"
for r in $B; do IFS=: read n l wd ln f <<< "$r"; late && { echo "bench $n skipped"; continue; }
  e=(); [ "$wd" != - ] && e+=(WT_QUANT_GEMV_X8_WORDS=$wd); [ "$ln" != - ] && e+=(WT_QUANT_GEMV_LANES=$ln)
  [ "$f" = - ] && f=
  env LD_LIBRARY_PATH=$D/$l:${LD_LIBRARY_PATH:-} "${e[@]}" timeout 30 $D/webtensor bench --size large --backend webgpu --no-check $f \
    --filter gemv_q4_0 --csv $O/b_$n.csv > $O/b_$n.log 2>&1; echo "bench $n rc=$? ($(el) s)"; done
while [ ! -e /tmp/made ] && ! late; do sleep 1; done
ls -la /tmp/m_q4_0.gguf; echo "model ($(el) s)"
dec() { local name=$1 lib=$2 words=$3; late && { echo "dec $name skipped"; return; }
  local e=(); [ "$words" != - ] && e=(WT_QUANT_GEMV_X8_WORDS=$words)
  env LD_LIBRARY_PATH=$D/$lib:${LD_LIBRARY_PATH:-} "${e[@]}" timeout 25 $D/$lib/llama --model /tmp/m_q4_0.gguf --backend webgpu \
    --tokens 128 --decode graph > $O/dec_$name.log 2>&1
  echo "dec $name rc=$? $(grep -E '^decode \(' $O/dec_$name.log) ($(el) s)"; }
dec base base -; dec row new row; dec base2 base -; dec row2 new row; dec pair new pair
for f in $O/dec_*.log; do n=$(basename $f .log); t=$(grep "^tokens:" $f); [ -n "$t" ] || continue
  [ "$t" = "$(grep "^tokens:" $O/dec_base.log)" ] && echo "$n: tokens = base" || echo "$n: tokens DIFFER from base"; done
grep -m1 "^  webgpu " $O/b_base_cold.log
python3 - $O <<'PY'
import csv, os, sys
o = sys.argv[1]; names = [n[2:-4] for n in sorted(os.listdir(o)) if n.startswith("b_") and n.endswith(".csv")]
res, keys = {}, []
for n in names:
    for r in csv.DictReader(open(f"{o}/b_{n}.csv")):
        if r["backend"] != "webgpu": continue
        k = r["shape"]; keys += [k] if k not in keys else []
        res[(n, k)] = "%.1f/%.0f" % (float(r["median_ms"]) * 1e3, float(r["rate"])) if r["status"] == "OK" else r["status"]
print("shape       " + "".join(" | %-11s" % n for n in names) + "  (us/GB/s)")
for k in keys: print("%-11s " % k + "".join(" | %-11s" % res.get((n, k), "-") for n in names))
PY
echo "total $(el) s"
