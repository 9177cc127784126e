#!/bin/bash
# Q6_K in the slot kernel (quant_gemv_slots.wgsl), one call: the quant
# suite on the GPU; gemv_q6_k and gemv_q4_k (the issue's shapes and a 1B
# Llama's Q4_K_M step) with main's library (base/) and this work's (new/),
# runs alternating; the 852M Llama of llama_ref.py as Q4_K_M: decode
# tok/s of base, new and new with Q4_K's x in 8 bits, interleaved, its
# steps against the same weights dequantised (q4_k_m_dense), and
# llama.cpp's Vulkan backend on the same file.
# The models are made while the suite runs, before any timing.
# The folder: new/ (the Release llama, webtensor, llama_to_gguf, quant and
# libwebtensor.so.0), base/ (main's libwebtensor.so.0), peer/ (as
# quant_slots_decode.sh); REPO names the repository (bench/llama_ref.py,
# bench/h200/llama_node_peer.js); WT_WEBGPU_LIB names Dawn's library.
NAME=q6k
source "$(dirname "$0")"/quant_call.sh
make_models q4_k_m q4_k_m_dense
(timeout 200 env LD_LIBRARY_PATH=$(lib new) new/quant webgpu > $O/quant.log 2>&1; echo "quant rc=$? $(tail -1 $O/quant.log) ($(el) s)")
wait $MK
B=(bench --size large --backend webgpu --no-check --filter gemv_q6_k,gemv_q4_k)
g() { local name=$1 l=$2; shift 2; timeout 90 env LD_LIBRARY_PATH=$(lib $l) "$@" new/webtensor "${B[@]}" > $O/g_$name.log 2>&1; echo "g_$name rc=$? ($(el) s)"; }
for r in 1 2; do g base_$r base X=1; g new_$r new X=1; done
ls -la /tmp/m_*.gguf | awk '{print $5, $9}'
dec() { local name=$1 l=$2; shift 2; timeout 60 env LD_LIBRARY_PATH=$(lib $l) "$@" new/llama --model /tmp/m_q4_k_m.gguf --backend webgpu --tokens 128 --decode graph > $O/d_$name.log 2>&1; echo "d_$name rc=$? $(grep -E '^decode \(' $O/d_$name.log | head -1)"; }
for r in 1 2; do dec base_$r base X=1; dec new_$r new X=1; dec new_x8_$r new WT_QUANT_GEMV_X8=3; done
echo "decodes ($(el) s)"
peer q4_k_m
if [ $(el) -lt 430 ]; then
  S=(--tokens 64 --text abcdefghijklmn)
  timeout 90 env LD_LIBRARY_PATH=$(lib new) new/llama --model /tmp/m_q4_k_m_dense.gguf --backend webgpu "${S[@]}" --out-logits /tmp/d_logits.npy --out-tokens /tmp/d_tokens.txt --out-step-logits /tmp/d_step.npy > $O/dense.log 2>&1; echo "dense rc=$? ($(el) s)"
  timeout 60 env LD_LIBRARY_PATH=$(lib new) new/llama --model /tmp/m_q4_k_m.gguf --backend webgpu "${S[@]}" --decode graph --tol 1e-4 --ref-logits /tmp/d_logits.npy --ref-tokens /tmp/d_tokens.txt --ref-step-logits /tmp/d_step.npy --step-tol 4e-2 > $O/check.log 2>&1
  echo "check rc=$?"; grep -E "vs reference" $O/check.log | cut -c1-300
fi
echo "total $(el) s"
for f in $O/d_*.log; do echo "$(basename $f .log): $(grep -E '^decode \(' $f | head -1 | grep -o '[0-9.]* tokens/s')"; done
for f in $O/g_*.log; do echo "== $(basename $f .log)"; grep -E 'gemv_q' $f | head -20; done
echo "== summary"; tail -1 $O/quant.log; grep -E "^peer" $O/peer_q4_k_m.log
pack_logs # the logs, one file
