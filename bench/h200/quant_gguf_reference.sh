#!/bin/bash
# The GGUF files of the 852M Llama against PyTorch: each file (KINDS, by
# default Q8_0, Q4_0, Q4_K_M; f16 too, written by llama_to_gguf)
# dequantised in NumPy by bench/gguf_ref.py (the quantised ones checked
# value for value against llama_to_gguf's KIND_dense file of the same
# weights) and run by transformers in float32;
# then examples/llama.c on the same file, WebGPU and CPU, against it: with
# x exact (WT_QUANT_GEMV_X8=0, WT_CPU_QUANT_DOT=f32) the prompt's logits
# and every greedy token, and with the defaults (x rounded to 8 bits) the
# prompt's logits and each step fed the reference's token.
# The folder: new/ (the Release llama, llama_to_gguf and
# libwebtensor.so.0); REPO names the repository; WT_WEBGPU_LIB names
# Dawn's library. The logs come back as ${OUT:-/tmp}/gref_logs.tar.gz.
NAME=gref
source "$(dirname "$0")"/quant_call.sh
N=${TOKENS:-64}
KINDS=${KINDS:-q8_0 q4_0 q4_k_m}
DENSE=(); for k in $KINDS; do [ $k = f16 ] || DENSE+=(${k}_dense); done
make_models $KINDS "${DENSE[@]}"
wait $MK
run() { # name, env..., then llama's arguments after --
  local name=$1; shift; local envs=(); while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
  timeout 240 env LD_LIBRARY_PATH=$(lib new) "${envs[@]}" new/llama "$@" > $O/$name.log 2>&1
  echo "$name rc=$? | $(grep -h -E 'vs reference|FAIL|error' $O/$name.log | cut -c1-220 | tr '\n' '|')"
}
for k in $KINDS; do
  F=/tmp/ref_$k; C=(); [ $k = f16 ] || C=(--check-dense /tmp/m_${k}_dense.gguf)
  timeout 300 python3 "$R"/bench/gguf_ref.py --gguf /tmp/m_$k.gguf --model $M --out $F --tokens $N \
    "${C[@]}" > $O/ref_$k.log 2>&1
  echo "ref $k rc=$? ($(el) s)"; tail -3 $O/ref_$k.log | cut -c1-300
  R1=(--ref-logits $F/ref_logits.npy --ref-tokens $F/ref_tokens.txt)
  RS=("${R1[@]}" --ref-step-logits $F/ref_step_logits.npy)
  run exact_gpu_$k WT_QUANT_GEMV_X8=0 -- --model /tmp/m_$k.gguf --backend webgpu --tokens $N "${R1[@]}" --tol 1e-4
  run exact_gpu_steps_$k WT_QUANT_GEMV_X8=0 -- --model /tmp/m_$k.gguf --backend webgpu --tokens $N "${RS[@]}" --tol 1e-4 --step-tol 1e-4
  run default_gpu_$k X=1 -- --model /tmp/m_$k.gguf --backend webgpu --tokens $N "${RS[@]}" --tol 1e-4 --step-tol 4e-2
  run exact_cpu_$k WT_CPU_QUANT_DOT=f32 -- --model /tmp/m_$k.gguf --backend cpu --tokens 8 "${R1[@]}" --tol 1e-4
  run default_cpu_$k X=1 -- --model /tmp/m_$k.gguf --backend cpu --tokens 8 "${RS[@]}" --tol 1e-4 --step-tol 4e-2
done
echo "total $(el) s"
pack_logs
