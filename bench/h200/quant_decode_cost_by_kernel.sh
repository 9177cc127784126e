#!/bin/bash
# The pair kernel's shape settings on the decode shapes, a Q4_0 decode
# step with one kind of kernel left out of the replay (what each costs),
# and the CUDA ceiling (launches in a CUDA graph) for the same bytes.
# The folder: new/ (the Release llama, webtensor, llama_to_gguf and
# libwebtensor.so.0 of the build measured), base/ (main's
# libwebtensor.so.0), llama_ref.py, llama_node_peer.js,
# torch_gemv_ceiling.py and peer/ (as quant_decode_peer.sh); WT_WEBGPU_LIB
# names Dawn's library.
set -u
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/quant_decode_cost_by_kernel_out}; mkdir -p "$O"
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
gemv w128 new WT_QUANT_GEMV_WG=128
gemv r1 new WT_QUANT_GEMV_ROWS=1
gemv r1w128 new WT_QUANT_GEMV_ROWS=1 WT_QUANT_GEMV_WG=128
gemv l8 new WT_QUANT_GEMV_LANES=8
gemv l8w128 new WT_QUANT_GEMV_LANES=8 WT_QUANT_GEMV_WG=128
gemv l32 new WT_QUANT_GEMV_LANES=32
gemv w64 new WT_QUANT_GEMV_WG=64
echo "gemv done $(( $(date +%s) - T0 )) s"
dec() { local name=$1 lib=$2; shift 2; timeout 60 env "$@" LD_LIBRARY_PATH=$D/$lib new/llama --model /tmp/m_q4_0.gguf --backend webgpu --tokens 128 --decode graph > $O/d_$name.log 2>&1; echo "d_$name rc=$? $(grep -E '^decode' $O/d_$name.log | head -2 | tr '\n' ' ')"; }
dec base1 base X=1
dec new1 new X=1
dec skip_gemv new WT_GRAPH_REPLAY_SKIP=quant_gemv_x8_fused
dec skip_attn new WT_GRAPH_REPLAY_SKIP=rope_kv_attention
dec skip_both new WT_GRAPH_REPLAY_SKIP=quant_gemv_x8_fused,rope_kv_attention
dec skip_rest new WT_GRAPH_REPLAY_SKIP=argreduce,mv_remap,mv_gather,quant_dequant
dec w128 new WT_QUANT_GEMV_WG=128
dec r1 new WT_QUANT_GEMV_ROWS=1
dec l8w128 new WT_QUANT_GEMV_LANES=8 WT_QUANT_GEMV_WG=128
dec new2 new X=1
dec base2 base X=1
echo "total $(( $(date +%s) - T0 )) s"
for f in base1 new1; do grep -E '^tokens' $O/d_$f.log | md5sum; done
timeout 120 python3 torch_gemv_ceiling.py > $O/ceiling.log 2>&1; echo "ceiling rc=$?"
cat $O/ceiling.log
for f in $O/g_*.log; do echo "== $(basename $f .log)"; grep -E 'gemv_q4_0' $f | head -8; done
