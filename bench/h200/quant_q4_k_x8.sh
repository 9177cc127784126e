#!/bin/bash
# Q4_K through the 8-bit-x fused GEMV (quant_gemv_x8_fused.wgsl), one call:
# the quant suite on the GPU; the issue's GEMV shapes with Q4_K's x kept in
# f32 (WT_QUANT_GEMV_X8=0: the slot kernel, what main ran) against the
# default, runs alternating; the 852M Llama of llama_ref.py written as
# Q4_K_M (Q4_K with llama.cpp's Q6_K tensors) and Q4_0: decode tok/s of
# both settings, interleaved; the Q4_K_M decode against the same weights
# dequantised and run in f32 (q4_k_m_dense); llama.cpp's Vulkan backend on
# the same files.
# The folder: new/ (the Release llama, webtensor, llama_to_gguf, quant and
# libwebtensor.so.0), peer/ (as quant_slots_decode.sh); the repository's
# bench/llama_ref.py and bench/h200/llama_node_peer.js; WT_WEBGPU_LIB names
# Dawn's library.
set -u
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/q4k_x8_out}; mkdir -p "$O"
R=${REPO:-$(pwd)}
cd $D; chmod +x new/*
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
export LD_LIBRARY_PATH=$D/new:${LD_LIBRARY_PATH:-}
(timeout 200 new/quant webgpu > $O/quant.log 2>&1; echo "quant rc=$? $(tail -1 $O/quant.log) ($(el) s)")
B=(bench --size large --backend webgpu --no-check --filter gemv_q4_k,gemv_q4_0)
for r in 1 2; do
  timeout 90 env WT_QUANT_GEMV_X8=0 new/webtensor "${B[@]}" > $O/g_f32x_$r.log 2>&1; echo "g_f32x_$r rc=$?"
  timeout 90 new/webtensor "${B[@]}" > $O/g_x8_$r.log 2>&1; echo "g_x8_$r rc=$?"
done
M=/tmp/m852
python3 $R/bench/llama_ref.py make --size large --dtype f16 --out $M --seed 0 > $O/make.log 2>&1
for k in q4_k_m q4_0 q4_k_m_dense; do timeout 300 new/llama_to_gguf $M /tmp/m_$k.gguf $k > $O/gguf_$k.log 2>&1 || echo "gguf $k failed"; done
ls -la /tmp/m_*.gguf | awk '{print $5, $9}'; echo "models ($(el) s)"
dec() { local name=$1 k=$2; shift 2; timeout 60 env "$@" new/llama --model /tmp/m_$k.gguf --backend webgpu --tokens 128 --decode graph > $O/d_$name.log 2>&1; echo "d_$name rc=$? $(grep -E '^decode \(' $O/d_$name.log | head -1)"; }
for r in 1 2 3; do dec q4km_f32x_$r q4_k_m WT_QUANT_GEMV_X8=0; dec q4km_x8_$r q4_k_m X=1; done
dec q40 q4_0 X=1
for f in q4km_f32x_1 q4km_x8_1 q4km_x8_2; do echo "$f $(grep -E '^tokens' $O/d_$f.log | md5sum)"; done
S=(--tokens 64 --text abcdefghijklmn)
timeout 150 new/llama --model /tmp/m_q4_k_m_dense.gguf --backend webgpu "${S[@]}" --out-logits /tmp/d_logits.npy --out-tokens /tmp/d_tokens.txt --out-step-logits /tmp/d_step.npy > $O/dense.log 2>&1; echo "dense rc=$? ($(el) s)"
for x in 0 auto; do
  timeout 120 env WT_QUANT_GEMV_X8=$x new/llama --model /tmp/m_q4_k_m.gguf --backend webgpu "${S[@]}" --decode graph --tol 1e-4 --ref-logits /tmp/d_logits.npy --ref-tokens /tmp/d_tokens.txt --ref-step-logits /tmp/d_step.npy --step-tol 4e-2 > $O/check_$x.log 2>&1
  echo "check X8=$x rc=$?"; grep -E "vs reference" $O/check_$x.log | cut -c1-300
done
mkdir -p /tmp/p/node_modules/@fugood/node-llama-linux-x64-vulkan; tar -C /tmp/p/node_modules/@fugood -xf peer/llama_node_lib.tar
xz -dc peer/vk.node.xz > /tmp/p/node_modules/@fugood/node-llama-linux-x64-vulkan/index.node; cp peer/vk.package.json /tmp/p/node_modules/@fugood/node-llama-linux-x64-vulkan/package.json
xz -dc peer/node.xz > /tmp/node; chmod +x /tmp/node
for k in q4_k_m q4_0; do timeout 60 /tmp/node $R/bench/h200/llama_node_peer.js /tmp/p/node_modules/@fugood/llama.node /tmp/m_$k.gguf > $O/peer_$k.log 2>&1; echo "peer $k rc=$?"; grep -E '^peer' $O/peer_$k.log; done
echo "total $(el) s"
for f in $O/d_*.log; do echo "$(basename $f .log): $(grep -E '^decode \(' $f | head -1 | grep -o '[0-9.]* tokens/s')"; done
for f in $O/g_*.log; do echo "== $(basename $f .log)"; grep -E 'gemv_q' $f | head -20; done
