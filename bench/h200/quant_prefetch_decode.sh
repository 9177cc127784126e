#!/usr/bin/env bash
# Issue 19: the 8-bit-x Q4_0 decode GEMV pulling the next product's weight
# into the L2 cache from extra workgroups of its own dispatch
# (wt_linear_fused_options.prefetch, WT_QUANT_GEMV_PREFETCH MiB, 0: off),
# against main and llama.cpp's Vulkan backend on the same GGUF file.
# The 852M Llama (llama_ref.py make --size large --dtype f16 --seed 0) as
# Q4_0: captured decode of 128 tokens by base (main) and new (this work)
# with the prefetch swept by RUNS (name:build:MiB, MiB "-" for the
# default), then the 30 last steps profiled kernel by kernel, then each
# step's logits written with the prefetch on and off and compared byte for
# byte, then the f16 folder by both builds, then the peer. BENCH=1 first
# times the decode shapes' Q4_0 products alone with main's library, weights
# rotated through 256 MB (cold: from DRAM) and with --cache-hot (one weight
# reused: from the L2 where it fits), twice each: what a product can gain
# at most from finding its weight in the cache. NO_CHECK, NO_F16, NO_PEER
# skip those parts.
# The prefetch lost (bench/RESULTS.md) and was taken out again: new/ is a
# Release build of commit ac53744, which has it.
# The folder: base/ and new/ (each llama and libwebtensor.so.0), webtensor
# (the bench, from this work's build),
# llama_to_gguf, llama_ref.py, dawn.xz (Dawn's library, xz),
# llama_node_peer.js and peer/ (as gpt_q4_decode_merged.sh). The Vulkan
# loader's packages and VK_DRIVER_FILES as for the other scripts here.
set -u
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/quant-prefetch}; mkdir -p $O
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
xz -dc $D/dawn.xz > /tmp/libwebgpu_wrapper.so; export WT_WEBGPU_LIB=/tmp/libwebgpu_wrapper.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
chmod +x $D/base/llama $D/new/llama $D/llama_to_gguf
M=/tmp/m852
(python3 $D/llama_ref.py make --size large --dtype f16 --out $M --seed 0 > $O/make.log 2>&1
 LD_LIBRARY_PATH=$D/base timeout 90 $D/llama_to_gguf $M /tmp/m_q4_0.gguf q4_0 > $O/gguf.log 2>&1; touch /tmp/made) &
if [ -n "${BENCH:-}" ]; then
  chmod +x $D/webtensor
  for r in cold1:- hot1:--cache-hot cold2:- hot2:--cache-hot; do IFS=: read n f <<< "$r"; [ "$f" = - ] && f=
    LD_LIBRARY_PATH=$D/base timeout 40 $D/webtensor bench --size large --backend webgpu --no-check $f \
      --filter gemv_q4_0 --csv $O/b_$n.csv > $O/b_$n.log 2>&1; echo "bench $n rc=$? ($(el) s)"; done
  python3 - $O <<'PY'
import csv, sys
o = sys.argv[1]; names = ["cold1", "hot1", "cold2", "hot2"]; res, keys = {}, []
for n in names:
    for r in csv.DictReader(open(f"{o}/b_{n}.csv")):
        k = r["shape"]; keys += [k] if k not in keys else []
        res[(n, k)] = "%.1f / %.0f" % (float(r["median_ms"]) * 1e3, float(r["rate"])) if r["status"] == "OK" else r["status"]
print("gemv_q4_0 %-11s" % "shape" + "".join(" | %-12s" % n for n in names) + "  (us / GB/s)")
for k in keys: print("gemv_q4_0 %-11s" % k + "".join(" | %-12s" % res.get((n, k), "-") for n in names))
PY
fi
while [ ! -e /tmp/made ]; do sleep 1; done
ls -la /tmp/m_q4_0.gguf; echo "model ($(el) s)"
dec() { local name=$1 lib=$2 mib=$3; shift 3; [ $(el) -gt ${UNTIL:-240} ] && { echo "$name skipped"; return; }
  local e=(); [ "$mib" != "-" ] && e=(WT_QUANT_GEMV_PREFETCH=$mib)
  env LD_LIBRARY_PATH=$D/$lib "${e[@]}" timeout 60 $D/$lib/llama --model /tmp/m_q4_0.gguf --backend webgpu \
    --tokens 128 --decode graph "$@" > $O/dec_$name.log 2>&1
  echo "dec $name rc=$? $(grep -E '^decode \(' $O/dec_$name.log) ($(el) s)"; }
for v in ${RUNS:-base:base:- new:new:- off:new:0 base2:base:- new2:new:- off2:new:0 c4:new:4 c16:new:16}; do
  IFS=: read n l c <<< "$v"; dec $n $l $c; done
if [ -z "${NO_CHECK:-}" ]; then
  dec prof_new new - --profile 30
  dec prof_off new 0 --profile 30
  dec logits_on new - --out-step-logits /tmp/on.npy --out-tokens /tmp/on.txt
  dec logits_off new 0 --out-step-logits /tmp/off.npy --out-tokens /tmp/off.txt
  cmp /tmp/on.npy /tmp/off.npy && echo "step logits: prefetch on = off, byte for byte ($(stat -c %s /tmp/on.npy) bytes)"
  cmp /tmp/on.txt /tmp/off.txt && echo "tokens: prefetch on = off"
fi
for f in $O/dec_*.log; do n=$(basename $f .log); t=$(grep "^tokens:" $f); [ -n "$t" ] || continue
  [ "$t" = "$(grep "^tokens:" $O/dec_base.log)" ] && echo "$n: tokens = base" || echo "$n: tokens DIFFER from base"; done
f16() { local name=$1 lib=$2; env LD_LIBRARY_PATH=$D/$lib timeout 90 $D/$lib/llama --model $M --backend webgpu \
    --dtype f16 --tokens 128 --decode graph > $O/f16_$name.log 2>&1
  echo "f16 $name rc=$? $(grep -E '^decode \(' $O/f16_$name.log) ($(el) s)"; }
[ -z "${NO_F16:-}" ] && { f16 base base; f16 new new; }
if [ -z "${NO_PEER:-}" ]; then
  mkdir -p /tmp/p/node_modules/@fugood/node-llama-linux-x64-vulkan; tar -C /tmp/p/node_modules/@fugood -xf $D/peer/llama_node_lib.tar
  xz -dc $D/peer/vk.node.xz > /tmp/p/node_modules/@fugood/node-llama-linux-x64-vulkan/index.node
  cp $D/peer/vk.package.json /tmp/p/node_modules/@fugood/node-llama-linux-x64-vulkan/package.json
  xz -dc $D/peer/node.xz > /tmp/node; chmod +x /tmp/node
  timeout 60 /tmp/node $D/llama_node_peer.js /tmp/p/node_modules/@fugood/llama.node /tmp/m_q4_0.gguf > $O/peer.log 2>&1
  echo "peer rc=$? ($(el) s)"; grep "^peer" $O/peer.log
fi
[ -z "${NO_CHECK:-}" ] && for n in prof_new prof_off; do echo "== $n"; grep -A8 "^profile of" $O/dec_$n.log; done
echo "total $(el) s"
