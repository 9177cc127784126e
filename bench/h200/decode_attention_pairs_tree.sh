#!/bin/bash
# Main before this work against it, in one call: the 852M Llama's Q4_0
# decode (three interleaved pairs, a 128-token prompt), its f16 decode,
# what the products and the attention cost in the replayed step, the
# quantised GEMVs of the issue's shapes, the CUDA ceiling for the same
# bytes (torch, launches in a CUDA graph) and llama.cpp's Vulkan backend
# on the same Q4_0 file.
# The folder: new/ (the Release llama, webtensor, llama_to_gguf and
# libwebtensor.so.0 of the build measured), base/ (main's
# libwebtensor.so.0), llama_ref.py, llama_node_peer.js,
# torch_gemv_ceiling.py and peer/ (as quant_decode_peer.sh); WT_WEBGPU_LIB
# names Dawn's library.
set -u
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/decode_attention_pairs_tree_out}; mkdir -p "$O"
cd $D; chmod +x new/*
nvidia-smi --query-gpu=name,driver_version,clocks.max.mem --format=csv,noheader; date -u
T0=$(date +%s)
M=/tmp/m852
python3 llama_ref.py make --size large --dtype f16 --out $M --seed 0 > $O/make.log 2>&1
LD_LIBRARY_PATH=$D/new timeout 60 new/llama_to_gguf $M /tmp/m_q4_0.gguf q4_0 > $O/gguf.log 2>&1
echo "model $(( $(date +%s) - T0 )) s"
dec() { local name=$1 lib=$2; shift 2; timeout 60 env "$@" LD_LIBRARY_PATH=$D/$lib new/llama --model /tmp/m_q4_0.gguf --backend webgpu --tokens 128 --decode graph > $O/d_$name.log 2>&1; echo "d_$name rc=$? $(grep -E '^decode \(' $O/d_$name.log | head -1)"; }
long() { local name=$1 lib=$2; shift 2; timeout 60 env "$@" LD_LIBRARY_PATH=$D/$lib new/llama --model /tmp/m_q4_0.gguf --backend webgpu --tokens 128 --prompt-len 128 --decode graph > $O/l_$name.log 2>&1; echo "l_$name rc=$? $(grep -E '^decode \(' $O/l_$name.log | head -1)"; }
f16() { local name=$1 lib=$2; shift 2; timeout 90 env "$@" LD_LIBRARY_PATH=$D/$lib new/llama --model $M --backend webgpu --dtype f16 --tokens 128 --decode graph > $O/f_$name.log 2>&1; echo "f_$name rc=$? $(grep -E '^decode \(' $O/f_$name.log | head -1)"; }
dec base1 base X=1
dec new1 new X=1
dec base2 base X=1
dec new2 new X=1
dec base3 base X=1
dec new3 new X=1
dec new_skip_gemv new WT_GRAPH_REPLAY_SKIP=quant_gemv_x8_fused
dec new_skip_attn new WT_GRAPH_REPLAY_SKIP=rope_kv_attention
dec new_skip_both new WT_GRAPH_REPLAY_SKIP=quant_gemv_x8_fused,rope_kv_attention
long base1 base X=1
long new1 new X=1
f16 base1 base X=1
f16 new1 new X=1
f16 base2 base X=1
f16 new2 new X=1
for f in base1 new1 base2 new2; do echo "$f $(grep -E '^tokens' $O/d_$f.log | md5sum)"; done
for f in base1 new1; do echo "f16 $f $(grep -E '^tokens' $O/f_$f.log | md5sum)"; done
[ -n "${NO_BENCH:-}" ] || {
B=(bench --size large --backend webgpu --no-check --filter gemv_q4_0,gemv_q8_0,gemv_q4_k,add_chain)
i=0; for r in base new base new; do i=$((i+1)); timeout 90 env LD_LIBRARY_PATH=$D/$r new/webtensor "${B[@]}" > $O/g_${i}_$r.log 2>&1; echo "g_${i}_$r rc=$?"; done
timeout 150 python3 torch_gemv_ceiling.py > $O/ceiling.log 2>&1; echo "ceiling rc=$?"; cat $O/ceiling.log
}
mkdir -p /tmp/p/node_modules/@fugood/node-llama-linux-x64-vulkan; tar -C /tmp/p/node_modules/@fugood -xf peer/llama_node_lib.tar
xz -dc peer/vk.node.xz > /tmp/p/node_modules/@fugood/node-llama-linux-x64-vulkan/index.node; cp peer/vk.package.json /tmp/p/node_modules/@fugood/node-llama-linux-x64-vulkan/package.json
xz -dc peer/node.xz > /tmp/node; chmod +x /tmp/node
timeout 60 /tmp/node llama_node_peer.js /tmp/p/node_modules/@fugood/llama.node /tmp/m_q4_0.gguf > $O/peer.log 2>&1; echo "peer rc=$?"
grep -E '^peer' $O/peer.log
echo "total $(( $(date +%s) - T0 )) s"
for f in $O/[dlf]_*.log; do echo "$(basename $f .log): $(grep -E '^decode \(' $f | head -1 | grep -o '[0-9.]* tokens/s')"; done
for f in $O/g_*.log; do echo "== $(basename $f .log)"; grep -E 'gemv_q|add_chain' $f | head -20; done
