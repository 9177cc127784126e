#!/bin/bash
# The eight-block form of the 8-bit-x Q4_0 GEMV (commit 9e0321b, taken
# out again in f566fb6: WT_QUANT_GEMV_QUAD no longer exists) against
# main: the decode shapes' products under each shape setting, the 852M
# Llama's Q4_0 decode, the CUDA ceiling for the same bytes (its first
# version timed host launches, not a CUDA graph) and llama.cpp's Vulkan
# backend.
# The folder: new/ (the Release llama, webtensor, llama_to_gguf and
# libwebtensor.so.0 of the build measured), base/ (main's
# libwebtensor.so.0), llama_ref.py, llama_node_peer.js,
# torch_gemv_ceiling.py and peer/ (as quant_decode_peer.sh); WT_WEBGPU_LIB
# names Dawn's library.
set -u
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/quant_gemv_eight_blocks_out}; mkdir -p "$O"
cd $D; chmod +x new/*
nvidia-smi --query-gpu=name,driver_version,clocks.max.mem --format=csv,noheader; date -u
T0=$(date +%s)
M=/tmp/m852
python3 llama_ref.py make --size large --dtype f16 --out $M --seed 0 > $O/make.log 2>&1
LD_LIBRARY_PATH=$D/new timeout 60 new/llama_to_gguf $M /tmp/m_q4_0.gguf q4_0 > $O/gguf.log 2>&1
echo "model $(( $(date +%s) - T0 )) s"
B=(bench --size large --backend webgpu --no-check --filter gemv_q4_0)
gemv() { local name=$1 lib=$2; shift 2; timeout 60 env "$@" LD_LIBRARY_PATH=$D/$lib new/webtensor "${B[@]}" > $O/g_$name.log 2>&1; echo "g_$name rc=$?"; }
gemv base base X=1
gemv new new X=1
gemv pairs new WT_QUANT_GEMV_QUAD=0
gemv l16r2w256 new WT_QUANT_GEMV_LANES=16 WT_QUANT_GEMV_ROWS=2 WT_QUANT_GEMV_WG=256
gemv l8 new WT_QUANT_GEMV_LANES=8
gemv l32 new WT_QUANT_GEMV_LANES=32
gemv l64 new WT_QUANT_GEMV_LANES=64
gemv r1 new WT_QUANT_GEMV_ROWS=1
gemv w128 new WT_QUANT_GEMV_WG=128
gemv w256 new WT_QUANT_GEMV_WG=256
gemv w64 new WT_QUANT_GEMV_WG=64
gemv new2 new X=1
echo "gemv done $(( $(date +%s) - T0 )) s"
dec() { local name=$1 lib=$2; shift 2; timeout 60 env "$@" LD_LIBRARY_PATH=$D/$lib new/llama --model /tmp/m_q4_0.gguf --backend webgpu --tokens 128 --decode graph > $O/d_$name.log 2>&1; echo "d_$name rc=$? $(grep -E '^decode' $O/d_$name.log | head -1)"; }
dec base1 base X=1
dec new1 new X=1
dec pairs new WT_QUANT_GEMV_QUAD=0
dec r1 new WT_QUANT_GEMV_ROWS=1
dec w256 new WT_QUANT_GEMV_WG=256
dec l16r2w256 new WT_QUANT_GEMV_LANES=16 WT_QUANT_GEMV_ROWS=2 WT_QUANT_GEMV_WG=256
dec base2 base X=1
dec new2 new X=1
for f in base1 new1; do grep -E '^(token|tokens|generated)' $O/d_$f.log | head -2; done
timeout 120 python3 torch_gemv_ceiling.py > $O/ceiling.log 2>&1; echo "ceiling rc=$?"
mkdir -p /tmp/p/node_modules/@fugood/node-llama-linux-x64-vulkan; tar -C /tmp/p/node_modules/@fugood -xf peer/llama_node_lib.tar
xz -dc peer/vk.node.xz > /tmp/p/node_modules/@fugood/node-llama-linux-x64-vulkan/index.node; cp peer/vk.package.json /tmp/p/node_modules/@fugood/node-llama-linux-x64-vulkan/package.json
xz -dc peer/node.xz > /tmp/node; chmod +x /tmp/node
timeout 60 /tmp/node llama_node_peer.js /tmp/p/node_modules/@fugood/llama.node /tmp/m_q4_0.gguf > $O/peer.log 2>&1; echo "peer rc=$?"
echo "total $(( $(date +%s) - T0 )) s"
cat $O/ceiling.log; grep -iE '^peer|tok/s' $O/peer.log | tail -3
for f in $O/g_*.log; do echo "== $(basename $f .log)"; grep -E 'gemv_q4_0' $f | head -8; done
for f in $O/d_*.log; do echo "== $(basename $f .log): $(grep -E '^decode' $f | head -1)"; done
