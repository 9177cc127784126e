#!/bin/bash
# Q6_K through the 8-bit-x GEMV (quant_gemv_x8_fused.wgsl; opt-in with
# WT_QUANT_GEMV_X8=3, where the default keeps its slot kernel), one call:
# the quant suite on the GPU with =3; gemv_q6_k with the default and =3,
# runs alternating; the 852M Llama of llama_ref.py as Q4_K_M (Q6_K for the
# head and for v and down in half the layers): decode tok/s with the
# default and =3, interleaved (the two differ in the Q6_K products only),
# and its steps with =3 against the same weights dequantised.
# The folder: new/ (the Release llama, webtensor, llama_to_gguf, quant and
# libwebtensor.so.0); REPO names the repository (bench/llama_ref.py);
# WT_WEBGPU_LIB names Dawn's library. The logs come back as one file,
# ${OUT:-/tmp}/q6x8_logs.tar.gz.
NAME=q6x8
source "$(dirname "$0")"/quant_call.sh
export LD_LIBRARY_PATH=$D/new:${LD_LIBRARY_PATH:-}
make_models q4_k_m q4_k_m_dense
timeout 200 env WT_QUANT_GEMV_X8=3 new/quant webgpu > $O/quant_x8.log 2>&1; echo "quant x8 rc=$? ($(el) s)"
wait $MK
B=(bench --size large --backend webgpu --no-check --filter gemv_q6_k)
for r in 1 2; do
  for x in auto 3; do timeout 90 env WT_QUANT_GEMV_X8=$x new/webtensor "${B[@]}" > $O/g_${x}_$r.log 2>&1; echo "g_${x}_$r rc=$?"; done
done
dec() { local name=$1; shift; timeout 60 env "$@" new/llama --model /tmp/m_q4_k_m.gguf --backend webgpu --tokens 128 --decode graph > $O/d_$name.log 2>&1; echo "d_$name rc=$? $(grep -E '^decode \(' $O/d_$name.log | head -1 | grep -o '[0-9.]* tokens/s')"; }
dec warm X=1
for r in 1 2 3; do dec auto_$r WT_QUANT_GEMV_X8=auto; dec x8_$r WT_QUANT_GEMV_X8=3; done
S=(--tokens 64 --text abcdefghijklmn)
timeout 90 new/llama --model /tmp/m_q4_k_m_dense.gguf --backend webgpu "${S[@]}" --out-logits /tmp/d_logits.npy --out-tokens /tmp/d_tokens.txt --out-step-logits /tmp/d_step.npy > $O/dense.log 2>&1; echo "dense rc=$?"
timeout 60 env WT_QUANT_GEMV_X8=3 new/llama --model /tmp/m_q4_k_m.gguf --backend webgpu "${S[@]}" --decode graph --tol 1e-4 --ref-logits /tmp/d_logits.npy --ref-tokens /tmp/d_tokens.txt --ref-step-logits /tmp/d_step.npy --step-tol 4e-2 > $O/check.log 2>&1
echo "check rc=$?"
echo "total $(el) s"
for f in $O/g_*.log; do echo "== $(basename $f .log)"; grep -E 'gemv_q' $f; done
echo "== summary"; tail -1 $O/quant_x8.log; grep -E "vs reference" $O/check.log | cut -c1-200
pack_logs # the logs, one file
