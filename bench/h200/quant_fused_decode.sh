#!/usr/bin/env bash
# Issue 19: Q4_0 / Q8_0 decode of the 852M Llama, main (base/) against
# wt_linear_quant_fused (new/: norm, SwiGLU and residual in the slot
# kernel), same files, same machine; then GPU time by op of an eager Q4_0
# run of each build. The folder holds base/ and new/ (libwebtensor.so.0,
# llama; in new/ also llama_to_gguf and the quant test), llama_ref.py,
# trace_ops.py (from bench/h200/quant_slots_decode.sh's folder) and dawn.xz
# (Dawn's library, xz).
set -u
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/gpuq-out}; mkdir -p $O
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
xz -dc $D/dawn.xz > /tmp/libwebgpu_wrapper.so; export WT_WEBGPU_LIB=/tmp/libwebgpu_wrapper.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
LD_LIBRARY_PATH=$D/new:${LD_LIBRARY_PATH:-} timeout 40 $D/new/quant vulkan > $O/quant_test.txt 2>&1; echo "quant suite (new, vulkan): rc=$? $(tail -1 $O/quant_test.txt) ($(el) s)"; grep FAIL $O/quant_test.txt | head -3
M=/tmp/m852; python3 $D/llama_ref.py make --size large --dtype f16 --out $M --seed 0 2>&1 | tail -1; echo "made ($(el) s)"
for k in q4_0 q8_0; do LD_LIBRARY_PATH=$D/new:${LD_LIBRARY_PATH:-} timeout 60 $D/new/llama_to_gguf $M /tmp/m_$k.gguf $k | tail -1; done; echo "gguf ($(el) s)"
dec() { local name=$1 dir=$2 model=$3; shift 3; [ $(el) -gt 160 ] && { echo "$name skipped"; return; }
  env LD_LIBRARY_PATH=$D/$dir:${LD_LIBRARY_PATH:-} timeout 40 $D/$dir/llama --model $model --backend webgpu --tokens 128 --decode graph "$@" > $O/dec_$name.log 2>&1
  echo "$name rc=$? $(grep -E '^decode \(' $O/dec_$name.log) | $(grep -oE '[0-9]+ kernels a step' $O/dec_$name.log) ($(el) s)"; }
dec q4_0_base base /tmp/m_q4_0.gguf
dec q4_0_new new /tmp/m_q4_0.gguf
dec q8_0_base base /tmp/m_q8_0.gguf
dec q8_0_new new /tmp/m_q8_0.gguf
dec q4_0_base2 base /tmp/m_q4_0.gguf
dec q4_0_new2 new /tmp/m_q4_0.gguf
# the generated tokens of both builds (greedy)
for k in q4_0 q8_0; do diff <(grep "^tokens:" $O/dec_${k}_base.log) <(grep "^tokens:" $O/dec_${k}_new.log) > /dev/null && echo "$k: same tokens" || echo "$k: tokens differ"; done
for b in base new; do [ $(el) -gt 200 ] && break; env LD_LIBRARY_PATH=$D/$b:${LD_LIBRARY_PATH:-} WT_TRACE=/tmp/tr_$b.json timeout 30 $D/$b/llama --model /tmp/m_q4_0.gguf --backend webgpu --tokens 16 > $O/trace_$b.log 2>&1; done
python3 $D/trace_ops.py /tmp/tr_base.json /tmp/tr_new.json 2>&1 | tee $O/trace.txt | head -60
echo "total $(el) s"
