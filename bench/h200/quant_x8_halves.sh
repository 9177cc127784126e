#!/bin/bash
# The 8-bit-x GEMV's f16 scales converted without branches, and the
# decode of every quantised file against main and llama.cpp, one call: the
# quant suite on the GPU (default and WT_QUANT_GEMV_X8=3); gemv_q4_0,
# gemv_q4_k and gemv_q8_0 in the 8-bit-x kernel (WT_QUANT_GEMV_X8=3) with
# the library before (mid/: Q4_K in it by default, branching f16) and
# after (new/), runs alternating, then new's defaults with gemv_q6_k; the
# 852M Llama of llama_ref.py as Q4_0, Q4_K_M and Q8_0: decode tok/s of
# main (base/) and new interleaved (Q8_0: new's f32 x and x in 8 bits), the
# Q4_K_M steps against the same weights dequantised (q4_k_m_dense); and
# llama.cpp's Vulkan backend on the same files.
# The folder: new/ (the Release llama, webtensor, llama_to_gguf, quant and
# libwebtensor.so.0), mid/ and base/ (libwebtensor.so.0), peer/ (as
# quant_slots_decode.sh); REPO names the repository (bench/llama_ref.py,
# bench/h200/llama_node_peer.js); WT_WEBGPU_LIB names Dawn's library. The
# logs come back as one file, ${OUT:-/tmp}/x8h_logs.tar.gz.
NAME=x8h
source "$(dirname "$0")"/quant_call.sh
make_models q4_0 q4_k_m q8_0 q4_k_m_dense
timeout 200 env LD_LIBRARY_PATH=$(lib new) new/quant webgpu > $O/quant.log 2>&1; echo "quant rc=$? ($(el) s)"
timeout 200 env LD_LIBRARY_PATH=$(lib new) WT_QUANT_GEMV_X8=3 new/quant webgpu > $O/quant_x8.log 2>&1; echo "quant x8 rc=$? ($(el) s)"
wait $MK
B=(bench --size large --backend webgpu --no-check --filter gemv_q4_0,gemv_q4_k,gemv_q8_0)
g() { local name=$1 l=$2; shift 2; timeout 90 env LD_LIBRARY_PATH=$(lib $l) "$@" new/webtensor "${B[@]}" > $O/g_$name.log 2>&1; echo "g_$name rc=$? ($(el) s)"; }
for r in 1 2; do g mid_x8_$r mid WT_QUANT_GEMV_X8=3; g new_x8_$r new WT_QUANT_GEMV_X8=3; done
B=(bench --size large --backend webgpu --no-check --filter gemv_q4_0,gemv_q4_k,gemv_q8_0,gemv_q6_k)
g new_default new X=1
dec() { local name=$1 l=$2 k=$3; shift 3; timeout 60 env LD_LIBRARY_PATH=$(lib $l) "$@" new/llama --model /tmp/m_$k.gguf --backend webgpu --tokens 128 --decode graph > $O/d_$name.log 2>&1; echo "d_$name rc=$? $(grep -E '^decode \(' $O/d_$name.log | head -1)"; }
dec warm new q4_0 X=1
for r in 1 2; do
  dec q40_base_$r base q4_0 X=1; dec q40_new_$r new q4_0 X=1
  dec q4km_base_$r base q4_k_m X=1; dec q4km_new_$r new q4_k_m X=1
  dec q80_f32x_$r new q8_0 X=1; dec q80_x8_$r new q8_0 WT_QUANT_GEMV_X8=3
done
echo "decodes ($(el) s)"
S=(--tokens 64 --text abcdefghijklmn)
timeout 90 env LD_LIBRARY_PATH=$(lib new) new/llama --model /tmp/m_q4_k_m_dense.gguf --backend webgpu "${S[@]}" --out-logits /tmp/d_logits.npy --out-tokens /tmp/d_tokens.txt --out-step-logits /tmp/d_step.npy > $O/dense.log 2>&1; echo "dense rc=$? ($(el) s)"
timeout 60 env LD_LIBRARY_PATH=$(lib new) new/llama --model /tmp/m_q4_k_m.gguf --backend webgpu "${S[@]}" --decode graph --tol 1e-4 --ref-logits /tmp/d_logits.npy --ref-tokens /tmp/d_tokens.txt --ref-step-logits /tmp/d_step.npy --step-tol 4e-2 > $O/check.log 2>&1
echo "check rc=$?"
peer q4_0 q4_k_m q8_0
echo "total $(el) s"
for f in $O/d_*.log; do echo "$(basename $f .log): $(grep -E '^decode \(' $f | head -1 | grep -o '[0-9.]* tokens/s')"; done
for f in $O/g_*.log; do echo "== $(basename $f .log)"; grep -E 'gemv_q' $f | head -24; done
echo "== summary"; tail -1 $O/quant.log; tail -1 $O/quant_x8.log; grep -E "vs reference" $O/check.log | cut -c1-200
grep -h -E "^peer" $O/peer_*.log
pack_logs # the logs, one file
