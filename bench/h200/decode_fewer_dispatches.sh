#!/bin/bash
# Issues 18/19: fewer dispatches a decode step (wt_rope_kv_attention, the
# index check without its fill) on the 852M Llama of llama_ref.py: a base
# build (base/) against this one (new/), f16 and f32 (128 tokens after
# 128, as merged_main.sh) and the Q4_0 GGUF (128 tokens, as
# quant_slots_decode.sh).
# The branch's tokens are checked against the base's (--ref-tokens). Run
# from a folder holding llama_ref.py, base/ (llama, libwebtensor.so.0) and
# new/ (the same and llama_to_gguf); BUDGET (s, 100) skips the runs that
# would start later.
set -u
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/decode_out}; mkdir -p $O
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
S="--backend webgpu --tokens 128 --decode graph"
dec() { local name=$1 dir=$2; shift 2; [ $(el) -gt ${BUDGET:-100} ] && { echo "$name skipped ($(el) s)"; return; }
  env LD_LIBRARY_PATH=$D/$dir:${LD_LIBRARY_PATH:-} ${E:-X=0} timeout 25 $D/$dir/llama "$@" > $O/$name.log 2>&1
  echo "$name rc=$? | $(grep -E '^decode \(|dispatches|per token|vs ref' $O/$name.log | cut -c1-110 | tr '\n' '|') ($(el) s)"; }
M=/tmp/m852
timeout 60 python3 $D/llama_ref.py make --size large --dtype f16 --out $M --seed 0 > $O/make.log 2>&1; echo "make rc=$? ($(el) s)"
F16="--model $M --dtype f16 $S --prompt-len 128"
dec f16_base base $F16 --out-tokens $O/tok_f16.txt
dec f16_new new $F16 --ref-tokens $O/tok_f16.txt
LD_LIBRARY_PATH=$D/new:${LD_LIBRARY_PATH:-} timeout 30 $D/new/llama_to_gguf $M /tmp/m_q4_0.gguf q4_0 > $O/gguf.log 2>&1; echo "gguf rc=$? ($(el) s)"
Q4="--model /tmp/m_q4_0.gguf $S"
dec q4_base base $Q4 --out-tokens $O/tok_q4.txt
dec q4_new new $Q4 --ref-tokens $O/tok_q4.txt
F32="--model $M --dtype f32 $S --prompt-len 128"
dec f32_base base $F32 --out-tokens $O/tok_f32.txt
dec f32_new new $F32 --ref-tokens $O/tok_f32.txt
dec f16_new2 new $F16
dec f16_base2 base $F16
dec q4_new2 new $Q4
dec q4_base2 base $Q4
E=WT_ROPE_KV_ATTENTION=0 dec f16_knob0 new $F16
echo "total $(el) s"
