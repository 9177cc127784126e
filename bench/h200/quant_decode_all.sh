#!/bin/bash
# Every quantised file's decode and GEMV against main and llama.cpp, one
# call: the quant suite on the GPU; gemv_q4_0, gemv_q4_k, gemv_q8_0 and
# gemv_q6_k with main's library (base/) and this work's (new/), runs
# alternating; the 852M Llama of llama_ref.py as Q4_0, Q4_K_M, Q8_0 and
# f16 GGUF files: decode tok/s of base and new interleaved (f16 with
# --dtype f16), the Q4_K_M and Q8_0 steps against the same weights
# quantised, dequantised and run in f32 (*_dense), and llama.cpp's Vulkan
# backend on the same files.
# The folder: new/ (the Release llama, webtensor, llama_to_gguf, quant and
# libwebtensor.so.0), base/ (libwebtensor.so.0), peer/ (as
# quant_slots_decode.sh); REPO names the repository (bench/llama_ref.py,
# bench/h200/llama_node_peer.js); WT_WEBGPU_LIB names Dawn's library. The
# logs come back as one file, ${OUT:-/tmp}/all_logs.tar.gz.
set -u
D=$(cd "$(dirname "$0")" && pwd); O=/tmp/all_out; mkdir -p "$O"
R=${REPO:-$(pwd)}
cd $D; chmod +x new/*
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; date -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
lib() { echo "$D/$1:${LD_LIBRARY_PATH:-}"; }
M=/tmp/m852
(python3 $R/bench/llama_ref.py make --size large --dtype f16 --out $M --seed 0 > $O/make.log 2>&1
 for k in q4_0 q4_k_m q8_0 f16 q4_k_m_dense q8_0_dense; do LD_LIBRARY_PATH=$(lib new) timeout 300 new/llama_to_gguf $M /tmp/m_$k.gguf $k > $O/gguf_$k.log 2>&1 || echo "gguf $k failed"; done
 echo "models done ($(el) s)") &
MK=$!
timeout 200 env LD_LIBRARY_PATH=$(lib new) new/quant webgpu > $O/quant.log 2>&1; echo "quant rc=$? ($(el) s)"
wait $MK
B=(bench --size large --backend webgpu --no-check --filter gemv_q4_0,gemv_q4_k,gemv_q8_0,gemv_q6_k)
g() { local name=$1 l=$2; shift 2; timeout 90 env LD_LIBRARY_PATH=$(lib $l) "$@" new/webtensor "${B[@]}" > $O/g_$name.log 2>&1; echo "g_$name rc=$? ($(el) s)"; }
for r in 1 2; do g base_$r base X=1; g new_$r new X=1; done
dec() { local name=$1 l=$2 k=$3; shift 3; timeout 60 env LD_LIBRARY_PATH=$(lib $l) new/llama --model /tmp/m_$k.gguf --backend webgpu --tokens 128 --decode graph "$@" > $O/d_$name.log 2>&1; echo "d_$name rc=$? $(grep -E '^decode \(' $O/d_$name.log | head -1)"; }
dec warm new q4_0
for r in 1 2; do
  for k in q4_0 q4_k_m q8_0; do dec ${k}_base_$r base $k; dec ${k}_new_$r new $k; done
  dec f16_base_$r base f16 --dtype f16; dec f16_new_$r new f16 --dtype f16
done
echo "decodes ($(el) s)"
S=(--tokens 64 --text abcdefghijklmn)
for k in q4_k_m q8_0; do
  timeout 90 env LD_LIBRARY_PATH=$(lib new) new/llama --model /tmp/m_${k}_dense.gguf --backend webgpu "${S[@]}" --out-logits /tmp/d_logits.npy --out-tokens /tmp/d_tokens.txt --out-step-logits /tmp/d_step.npy > $O/dense_$k.log 2>&1; echo "dense $k rc=$?"
  timeout 60 env LD_LIBRARY_PATH=$(lib new) new/llama --model /tmp/m_$k.gguf --backend webgpu "${S[@]}" --decode graph --tol 1e-4 --ref-logits /tmp/d_logits.npy --ref-tokens /tmp/d_tokens.txt --ref-step-logits /tmp/d_step.npy --step-tol 4e-2 > $O/check_$k.log 2>&1
  echo "check $k rc=$?"
done
mkdir -p /tmp/p/node_modules/@fugood/node-llama-linux-x64-vulkan; tar -C /tmp/p/node_modules/@fugood -xf peer/llama_node_lib.tar
xz -dc peer/vk.node.xz > /tmp/p/node_modules/@fugood/node-llama-linux-x64-vulkan/index.node; cp peer/vk.package.json /tmp/p/node_modules/@fugood/node-llama-linux-x64-vulkan/package.json
xz -dc peer/node.xz > /tmp/node; chmod +x /tmp/node
for k in q4_0 q4_k_m q8_0 f16; do timeout 60 /tmp/node $R/bench/h200/llama_node_peer.js /tmp/p/node_modules/@fugood/llama.node /tmp/m_$k.gguf > $O/peer_$k.log 2>&1; echo "peer $k rc=$?"; done
echo "total $(el) s"
ls -la /tmp/m_*.gguf | awk '{print $5, $9}'
for f in $O/d_*.log; do echo "$(basename $f .log): $(grep -E '^decode \(' $f | head -1 | grep -o '[0-9.]* tokens/s')"; done
for f in $O/g_*.log; do echo "== $(basename $f .log)"; grep -E 'gemv_q' $f | head -24; done
echo "== summary"; tail -1 $O/quant.log; for k in q4_k_m q8_0; do echo "$k:"; grep -E "vs reference" $O/check_$k.log | cut -c1-200; done
grep -h -E "^peer" $O/peer_*.log
tar -C $O -czf ${OUT:-/tmp}/all_logs.tar.gz . # the logs, one file
