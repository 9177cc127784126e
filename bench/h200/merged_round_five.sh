#!/bin/bash
# Main after a round of merges, measured in one call (native, Dawn's
# Vulkan): the GPT step (6 layers, dim 384, batch 64, AdamW, f32) three
# times around PyTorch eager, with --clip-mode separate, WT_MATMUL_EPILOGUE=0,
# --qkv separate and --graph, and the library of an earlier commit in base/
# (its train_gpt and libwebtensor*.so.0); the 852M Llama's Q4_0 GGUF decode
# with the default 8-bit x and with WT_QUANT_GEMV_X8=0, its f16 decode, and
# llama.cpp's Vulkan backend (@fugood/llama.node) on the same Q4_0 file.
# The folder: the Release llama, train_gpt, llama_to_gguf,
# libwebtensor*.so.0; llama_ref.py, gpt_torch.py, llama_node_peer.js,
# peer/ (as quant_decode_peer.sh), debs/ (Open MPI, which train_gpt links)
# and fortunes/ (Debian's text files); WT_WEBGPU_LIB names Dawn's library.
set -u
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/merged_out}; mkdir -p "$O"
source "$D"/open_mpi_libs.sh
export LD_LIBRARY_PATH=$D:${LD_LIBRARY_PATH:-}:$MPILIB
cd $D; chmod +x llama train_gpt llama_to_gguf base/train_gpt
T0=$(date +%s)
run() { local name=$1 lim=$2; shift 2; local t=$(date +%s); timeout "$lim" "$@" > "$O/$name.log" 2>&1; echo "$name: rc=$? $(( $(date +%s) - t )) s"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
python3 -c "import torch; print('torch', torch.__version__)"
M=/tmp/m852; (python3 llama_ref.py make --size large --dtype f16 --out $M --seed 0 > $O/make.log 2>&1; timeout 60 ./llama_to_gguf $M /tmp/m_q4_0.gguf q4_0 > $O/gguf.log 2>&1; touch /tmp/made) &
G=(--backend webgpu --data $D/fortunes --steps 40 --print-every 10 --eval-every 0 --eval-batches 2 --sample 0 --print-loss)
run gpt_1 120 ./train_gpt "${G[@]}"
run gpt_torch 150 python3 gpt_torch.py --data $D/fortunes --steps 30
run gpt_2 120 ./train_gpt "${G[@]}"
run gpt_sep 120 ./train_gpt "${G[@]}" --clip-mode separate
run gpt_epi0 120 env WT_MATMUL_EPILOGUE=0 ./train_gpt "${G[@]}"
run gpt_qkvsep 120 ./train_gpt "${G[@]}" --qkv separate
run gpt_graph 120 ./train_gpt "${G[@]}" --graph
run gpt_base 120 env LD_LIBRARY_PATH=$D/base:$LD_LIBRARY_PATH ./base/train_gpt "${G[@]}"
run gpt_3 120 ./train_gpt "${G[@]}"
while [ ! -e /tmp/made ]; do sleep 1; done
run q4_0_1 60 ./llama --model /tmp/m_q4_0.gguf --backend webgpu --tokens 128 --decode graph
run q4_0_f32x 60 env WT_QUANT_GEMV_X8=0 ./llama --model /tmp/m_q4_0.gguf --backend webgpu --tokens 128 --decode graph
run q4_0_2 60 ./llama --model /tmp/m_q4_0.gguf --backend webgpu --tokens 128 --decode graph
run f16 90 ./llama --model $M --backend webgpu --dtype f16 --tokens 128 --decode graph
mkdir -p /tmp/p/node_modules/@fugood/node-llama-linux-x64-vulkan; tar -C /tmp/p/node_modules/@fugood -xf peer/llama_node_lib.tar
xz -dc peer/vk.node.xz > /tmp/p/node_modules/@fugood/node-llama-linux-x64-vulkan/index.node; cp peer/vk.package.json /tmp/p/node_modules/@fugood/node-llama-linux-x64-vulkan/package.json
xz -dc peer/node.xz > /tmp/node; chmod +x /tmp/node
run peer_q4_0 60 /tmp/node llama_node_peer.js /tmp/p/node_modules/@fugood/llama.node /tmp/m_q4_0.gguf
echo "total $(( $(date +%s) - T0 )) s"
for f in "$O"/*.log; do echo "=== $(basename $f .log)"; grep -iE "^decode \(|^peer|ms/step|step +40/|^step (1|2|3|40) loss|error|FAIL|adapter" "$f" | tail -5; done
