#!/bin/bash
# Main with the day's branches merged, measured in one call (native, Dawn's
# Vulkan): the GPT step against PyTorch eager (and with the old GEMM
# kernel), the small GPT of the CPU run, Fashion-MNIST eager / replayed,
# the 852M Llama's captured decode (f16, f32) against transformers' logits,
# and its Q4_0 GGUF decode. The compiled CUDA-graph decode peer runs in
# matrix_units_merged.sh's call. Run from a folder holding the Release
# programs and libraries (llama, train_gpt, train_fashion_mnist,
# llama_to_gguf, libwebtensor*.so.0), llama_ref.py, gpt_torch.py, debs/
# (Open MPI, which the training examples link) and fortunes/ (Debian's
# text files); WT_WEBGPU_LIB names Dawn's library.
set -u
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/final_out}; mkdir -p "$O"
source "$D"/open_mpi_libs.sh
export LD_LIBRARY_PATH=$D:${LD_LIBRARY_PATH:-}:$MPILIB
export EGL_PLATFORM=surfaceless
cd $D; chmod +x llama train_gpt train_fashion_mnist llama_to_gguf
T0=$(date +%s)
run() { local name=$1 lim=$2; shift 2; local t=$(date +%s); timeout "$lim" "$@" > "$O/$name.log" 2>&1; echo "$name: rc=$? $(( $(date +%s) - t )) s"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)"
F=${FORTUNES:-$D/fortunes}
G=(--backend webgpu --data $F --steps 40 --print-every 10 --eval-every 0 --eval-batches 2 --sample 0 --print-loss)
run gpt 120 ./train_gpt "${G[@]}"
run gpt_torch 150 python3 gpt_torch.py --data $F --steps 30
run gpt_oldgemm 120 env WT_GEMM_KERNEL=general ./train_gpt "${G[@]}"
run gpt_2 120 ./train_gpt "${G[@]}"
run gpt_small 120 ./train_gpt --backend webgpu --data $F --layers 2 --dim 384 --heads 6 --context 256 --batch 8 --steps 300 --print-every 100 --eval-every 100 --sample 0
FM=(--backend webgpu --synthetic 38400 --epochs 1 --eval-limit 0 --batch 64)
run fm_exact 120 ./train_fashion_mnist --compare webgpu,webgpu:graph --exact --steps 30 --batch 64 --synthetic 1920 --eval-limit 0
run fm_eager_1 120 ./train_fashion_mnist "${FM[@]}"
run fm_graph_1 120 ./train_fashion_mnist "${FM[@]}" --graph
for dt in f16 f32; do
  M=/tmp/m_$dt
  run make_$dt 200 python3 llama_ref.py make --size large --dtype $dt --out $M --seed 0
  run ref_$dt 200 python3 llama_ref.py ref --model $M --out $M --tokens 64
  run check_$dt 150 ./llama --model $M --backend webgpu --dtype $dt --tokens 64 --decode graph --ref-logits $M/ref_logits.npy --ref-tokens $M/ref_tokens.txt
  run speed_$dt 150 ./llama --model $M --backend webgpu --dtype $dt --tokens 128 --prompt-len 128 --decode graph --prefill-runs 10
  if [ $dt = f16 ]; then
    run gguf 60 ./llama_to_gguf $M /tmp/m_q4_0.gguf q4_0
    run speed_q4_0 60 ./llama --model /tmp/m_q4_0.gguf --backend webgpu --tokens 128 --decode graph
    run speed_q4_0_2 60 ./llama --model /tmp/m_q4_0.gguf --backend webgpu --tokens 128 --decode graph
  fi
  rm -rf $M
done
echo "total $(( $(date +%s) - T0 )) s"
for f in "$O"/*.log; do echo "=== $(basename $f .log)"; grep -iE "tok/s|tokens/s|prefill|logit|margin|FAIL|vs ref|error|memory per|ms/step|validation|step +40|exact|equal|differ|images/s|ms a step|epoch|^step (1|2|3|40) loss" "$f" | grep -v "^step +[0-9]/" | tail -9; done
