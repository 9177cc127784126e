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
NAME=all
source "$(dirname "$0")"/quant_call.sh
make_models q4_0 q4_k_m q8_0 f16 q4_k_m_dense q8_0_dense
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
peer q4_0 q4_k_m q8_0 f16
echo "total $(el) s"
ls -la /tmp/m_*.gguf | awk '{print $5, $9}'
for f in $O/d_*.log; do echo "$(basename $f .log): $(grep -E '^decode \(' $f | head -1 | grep -o '[0-9.]* tokens/s')"; done
for f in $O/g_*.log; do echo "== $(basename $f .log)"; grep -E 'gemv_q' $f | head -24; done
echo "== summary"; tail -1 $O/quant.log; for k in q4_k_m q8_0; do echo "$k:"; grep -E "vs reference" $O/check_$k.log | cut -c1-200; done
grep -h -E "^peer" $O/peer_*.log
pack_logs # the logs, one file
