#!/usr/bin/env bash
# Issue 19 on the GPU: the quantised GEMV of a base build (base/) against
# this one (new/: the slot kernel at its default 128 threads, 256, 64, and
# the unit kernels by WT_QUANT_GEMV_RPT=4), then the 852M Llama of
# llama_ref.py (f16) written as Q4_0 and Q8_0 GGUF files by llama_to_gguf:
# decode tok/s of both builds and of the f16 folder, llama.cpp's Vulkan
# backend through @fugood/llama.node on the same files (llama_node_peer.js),
# and WT_TRACE GPU time by op of an eager Q4_0 and f16 run (trace_ops.py).
# The folder holds base/ and new/ (webtensor, libwebtensor.so.0, and in
# new/ quant, llama, llama_to_gguf), llama_ref.py, trace_ops.py,
# llama_node_peer.js, dawn.xz (Dawn's library, xz) and peer/: node.xz (the
# node program), vk.node.xz + vk.package.json (the linux x64 Vulkan
# package's index.node and package.json) and llama_node_lib.tar
# (llama.node/lib and package.json), unpacked under /tmp.
set -u
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/gpuq-out}; mkdir -p $O
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
xz -dc $D/dawn.xz > /tmp/libwebgpu_wrapper.so; export WT_WEBGPU_LIB=/tmp/libwebgpu_wrapper.so
nvidia-smi --query-gpu=name,driver_version,clocks.max.mem --format=csv,noheader
LD_LIBRARY_PATH=$D/new:${LD_LIBRARY_PATH:-} $D/new/webtensor info 2>&1 | grep -m2 -iE "adapter|nvidia"
LD_LIBRARY_PATH=$D/new:${LD_LIBRARY_PATH:-} timeout 20 $D/new/quant vulkan > $O/quant_test.txt 2>&1; echo "quant suite (slot kernel): rc=$? $(tail -1 $O/quant_test.txt)"; grep FAIL $O/quant_test.txt | head -3
if [ -z "${SKIP_BENCH:-}" ]; then
cases=gemv_q8_0,gemv_q4_0,gemv_q4_k
b() { local name=$1 dir=$2; shift 2
  env LD_LIBRARY_PATH=$D/$dir:${LD_LIBRARY_PATH:-} "$@" timeout 20 $D/$dir/webtensor bench --size large --backend webgpu --no-check --filter $cases --csv $O/$name.csv > $O/$name.log 2>&1
  echo "$name rc=$? ($(el) s)"; }
b base base
b new new
b L256 new WT_QUANT_GEMV_LANES=256
b L64 new WT_QUANT_GEMV_LANES=64
b rpt4 new WT_QUANT_GEMV_RPT=4
python3 - $O <<'PY'
import csv, os, sys
o = sys.argv[1]; names = [n for n in ["base", "new", "L256", "L64", "rpt4"] if os.path.exists(f"{o}/{n}.csv")]
res, keys = {}, []
for n in names:
    for r in csv.DictReader(open(f"{o}/{n}.csv")):
        k = (r["case"], r["shape"]); keys += [k] if k not in keys else []
        res[(n,) + k] = "%.1f us %4.0f" % (float(r["median_ms"]) * 1e3, float(r["rate"])) if r["status"] == "OK" else r["status"]
print("%-10s %-11s" % ("case", "shape") + "".join(" | %-14s" % n for n in names) + "  (us, GB/s)")
for k in keys: print("%-10s %-11s" % k + "".join(" | %-14s" % res.get((n,) + k, "-") for n in names))
PY
fi
M=${LOCAL_MODEL:-/tmp/m852}; [ -n "${LOCAL_MODEL:-}" ] || python3 $D/llama_ref.py make --size large --dtype f16 --out $M --seed 0 2>&1 | tail -1; echo "made ($(el) s)"
for k in q4_0 q8_0; do LD_LIBRARY_PATH=$D/new:${LD_LIBRARY_PATH:-} timeout 60 $D/new/llama_to_gguf $M /tmp/m_$k.gguf $k | tail -1; done; ls -la /tmp/m_*.gguf; echo "gguf ($(el) s)"
mkdir -p /tmp/p/node_modules/@fugood/node-llama-linux-x64-vulkan; tar -C /tmp/p/node_modules/@fugood -xf $D/peer/llama_node_lib.tar
xz -dc $D/peer/vk.node.xz > /tmp/p/node_modules/@fugood/node-llama-linux-x64-vulkan/index.node; cp $D/peer/vk.package.json /tmp/p/node_modules/@fugood/node-llama-linux-x64-vulkan/package.json
xz -dc $D/peer/node.xz > /tmp/node; chmod +x /tmp/node
dec() { local name=$1 dir=$2 e=$3 model=$4; shift 4; [ $(el) -gt 280 ] && { echo "$name skipped"; return; }
  env LD_LIBRARY_PATH=$D/$dir:${LD_LIBRARY_PATH:-} $e timeout 40 $D/$dir/llama --model $model --backend ${BACKEND:-webgpu} --tokens 128 --decode graph "$@" > $O/dec_$name.log 2>&1
  echo "$name rc=$? $(grep -E '^decode \(' $O/dec_$name.log) ($(el) s)"; }
peer() { [ $(el) -gt 290 ] && { echo "peer $1 skipped"; return; }
  timeout 45 /tmp/node $D/llama_node_peer.js /tmp/p/node_modules/@fugood/llama.node /tmp/m_$1.gguf > $O/peer_$1.log 2>&1; echo "peer $1 rc=$? ($(el) s)"; grep "^peer" $O/peer_$1.log; }
dec q4_0 new X=0 /tmp/m_q4_0.gguf
dec q4_0_base base X=0 /tmp/m_q4_0.gguf
dec f16dir new X=0 $M --dtype f16
peer q4_0
dec q4_0_L256 new WT_QUANT_GEMV_LANES=256 /tmp/m_q4_0.gguf
dec q4_0_rpt4 new WT_QUANT_GEMV_RPT=4 /tmp/m_q4_0.gguf
dec q8_0 new X=0 /tmp/m_q8_0.gguf
dec q8_0_base base X=0 /tmp/m_q8_0.gguf
peer q8_0
env LD_LIBRARY_PATH=$D/new:${LD_LIBRARY_PATH:-} WT_TRACE=/tmp/tr_q4.json timeout 30 $D/new/llama --model /tmp/m_q4_0.gguf --backend webgpu --tokens 16 > $O/dec_trace_q4.log 2>&1
env LD_LIBRARY_PATH=$D/new:${LD_LIBRARY_PATH:-} WT_TRACE=/tmp/tr_f16.json timeout 30 $D/new/llama --model $M --dtype f16 --backend webgpu --tokens 16 > $O/dec_trace_f16.log 2>&1
python3 $D/trace_ops.py /tmp/tr_q4.json /tmp/tr_f16.json 2>&1 | tee $O/trace.txt | head -70
echo "total $(el) s"
