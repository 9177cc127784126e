#!/bin/bash
# This build's kernels on the H200: the quant suite and the one-kernel
# decode attention's suite, then the 852M Llama's Q4_0 decode (base and
# this build) against the same weights quantised, dequantised and run in
# f32 (llama_to_gguf's q4_0_dense file): the 16-token prompt's logits, the
# 64 steps' logits fed the reference's tokens (within 2e-2 of max |logit|,
# the tests' bound for x rounded to 8 bits) and the greedy tokens.
# The folder: new/ (the Release llama, llama_to_gguf, quant, rope_kv_cache
# and libwebtensor.so.0 of the build checked), base/ (main's
# libwebtensor.so.0) and llama_ref.py; WT_WEBGPU_LIB names Dawn's library.
set -u
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/check_out}; mkdir -p "$O"
cd $D; chmod +x new/*
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
T0=$(date +%s)
(LD_LIBRARY_PATH=$D/new timeout 200 new/quant webgpu > $O/quant.log 2>&1; echo "quant rc=$? $(tail -1 $O/quant.log)")
(LD_LIBRARY_PATH=$D/new timeout 200 new/rope_kv_cache webgpu > $O/rkv.log 2>&1; echo "rope_kv_cache rc=$? $(tail -1 $O/rkv.log)")
M=/tmp/m852
python3 llama_ref.py make --size large --dtype f16 --out $M --seed 0 > $O/make.log 2>&1
LD_LIBRARY_PATH=$D/new timeout 60 new/llama_to_gguf $M /tmp/q.gguf q4_0 > $O/gguf.log 2>&1
LD_LIBRARY_PATH=$D/new timeout 120 new/llama_to_gguf $M /tmp/qd.gguf q4_0_dense > $O/gguf_d.log 2>&1
echo "models $(( $(date +%s) - T0 )) s"
R=(--tokens 64 --text abcdefghijklmn)
LD_LIBRARY_PATH=$D/new timeout 120 new/llama --model /tmp/qd.gguf --backend webgpu "${R[@]}" --out-logits /tmp/d_logits.npy --out-tokens /tmp/d_tokens.txt --out-step-logits /tmp/d_step.npy > $O/dense.log 2>&1; echo "dense rc=$?"
for lib in base new; do
  LD_LIBRARY_PATH=$D/$lib timeout 120 new/llama --model /tmp/q.gguf --backend webgpu "${R[@]}" --decode graph --tol 1e-4 --ref-logits /tmp/d_logits.npy --ref-tokens /tmp/d_tokens.txt --ref-step-logits /tmp/d_step.npy --step-tol 2e-2 > $O/check_$lib.log 2>&1
  echo "check $lib rc=$?"; tail -6 $O/check_$lib.log | cut -c1-300
done
echo "total $(( $(date +%s) - T0 )) s"
