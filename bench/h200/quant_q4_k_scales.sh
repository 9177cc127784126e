#!/bin/bash
# Q4_K's sub-block scales decoded without branches (both GEMV kernels) and
# the 8-bit-x kernel's Q4_K words read 16 bytes at a time, one call: the
# quant suite on the GPU (default and WT_QUANT_GEMV_X8=3); gemv_q4_k (the
# issue's shapes and a 1B Llama's) with the library before (mid/: Q6_K in
# the slot kernel) and after (new/), f32 x and x in 8 bits, runs
# alternating; the 852M Llama of llama_ref.py as Q4_K_M and Q4_0: decode
# tok/s of main (base/), mid and new, interleaved; llama.cpp's Vulkan
# backend on the same files.
# The folder: new/ (the Release llama, webtensor, llama_to_gguf, quant and
# libwebtensor.so.0), mid/ and base/ (libwebtensor.so.0), peer/ (as
# quant_slots_decode.sh); REPO names the repository (bench/llama_ref.py,
# bench/h200/llama_node_peer.js); WT_WEBGPU_LIB names Dawn's library. The
# logs come back as one file, ${OUT:-/tmp}/q4k_logs.tar.gz.
NAME=q4k
source "$(dirname "$0")"/quant_call.sh
make_models q4_k_m q4_0
timeout 200 env LD_LIBRARY_PATH=$(lib new) new/quant webgpu > $O/quant.log 2>&1; echo "quant rc=$? ($(el) s)"
timeout 200 env LD_LIBRARY_PATH=$(lib new) WT_QUANT_GEMV_X8=3 new/quant webgpu > $O/quant_x8.log 2>&1; echo "quant x8 rc=$? ($(el) s)"
wait $MK
B=(bench --size large --backend webgpu --no-check --filter gemv_q4_k)
g() { local name=$1 l=$2; shift 2; timeout 90 env LD_LIBRARY_PATH=$(lib $l) "$@" new/webtensor "${B[@]}" > $O/g_$name.log 2>&1; echo "g_$name rc=$? ($(el) s)"; }
for r in 1 2; do g mid_$r mid X=1; g new_$r new X=1; g mid_x8_$r mid WT_QUANT_GEMV_X8=3; g new_x8_$r new WT_QUANT_GEMV_X8=3; done
dec() { local name=$1 l=$2 k=$3; shift 3; timeout 60 env LD_LIBRARY_PATH=$(lib $l) "$@" new/llama --model /tmp/m_$k.gguf --backend webgpu --tokens 128 --decode graph > $O/d_$name.log 2>&1; echo "d_$name rc=$? $(grep -E '^decode \(' $O/d_$name.log | head -1)"; }
for r in 1 2; do
  dec q4km_base_$r base q4_k_m X=1; dec q4km_mid_$r mid q4_k_m X=1; dec q4km_new_$r new q4_k_m X=1
  dec q4km_new_x8_$r new q4_k_m WT_QUANT_GEMV_X8=3
done
dec q40_base base q4_0 X=1; dec q40_new new q4_0 X=1
echo "decodes ($(el) s)"
peer q4_k_m q4_0
echo "total $(el) s"
for f in $O/d_*.log; do echo "$(basename $f .log): $(grep -E '^decode \(' $f | head -1 | grep -o '[0-9.]* tokens/s')"; done
for f in $O/g_*.log; do echo "== $(basename $f .log)"; grep -E 'gemv_q' $f | head -20; done
echo "== summary"; tail -1 $O/quant.log; tail -1 $O/quant_x8.log; grep -h -E "^peer" $O/peer_*.log
pack_logs # the logs, one file
