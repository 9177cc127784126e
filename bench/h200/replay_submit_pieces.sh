#!/bin/bash
# A list replay's submit pieces (WT_GRAPH_REPLAY_PER_SUBMIT: 128 by
# default, 64 = eager ops' batch, the earlier behaviour; 256): the 852M
# Llama's Q4_0 and f16 decode and the GPT training step replayed
# (train_gpt --graph), alternating.
# The folder: new/ (the Release llama, llama_to_gguf, train_gpt,
# libwebtensor.so.0 and libwebtensor_dist.so.0 of the build measured),
# llama_ref.py, fortunes/ (Debian's fortune text files), debs/ and
# open_mpi_libs.sh (train_gpt links Open MPI); WT_WEBGPU_LIB names Dawn's
# library.
set -u
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/submit_out}; mkdir -p "$O"
source "$D"/open_mpi_libs.sh
export LD_LIBRARY_PATH=$D/new:${LD_LIBRARY_PATH:-}:$MPILIB
cd $D; chmod +x new/*
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
M=/tmp/m852
python3 llama_ref.py make --size large --dtype f16 --out $M --seed 0 > $O/make.log 2>&1
timeout 60 new/llama_to_gguf $M /tmp/q.gguf q4_0 > $O/gguf.log 2>&1
dec() { local name=$1; shift; timeout 60 env "$@" new/llama --model /tmp/q.gguf --backend webgpu --tokens 128 --decode graph > $O/d_$name.log 2>&1; echo "d_$name rc=$? $(grep -E '^decode \(' $O/d_$name.log | head -1 | grep -o '[0-9.]* tokens/s')"; }
f16() { local name=$1; shift; timeout 90 env "$@" new/llama --model $M --backend webgpu --dtype f16 --tokens 128 --decode graph > $O/f_$name.log 2>&1; echo "f_$name rc=$? $(grep -E '^decode \(' $O/f_$name.log | head -1 | grep -o '[0-9.]* tokens/s')"; }
G=(--backend webgpu --data $D/fortunes --steps 40 --print-every 10 --eval-every 0 --eval-batches 2 --sample 0 --print-loss --graph)
gpt() { local name=$1; shift; timeout 120 env "$@" new/train_gpt "${G[@]}" > $O/g_$name.log 2>&1; echo "g_$name rc=$? $(grep -E '^step +40/40' $O/g_$name.log | grep -o '[0-9.]* ms/step') $(grep -E '^step 40 loss' $O/g_$name.log)"; }
for r in 1 2; do
  dec p128_$r X=1
  dec p64_$r WT_GRAPH_REPLAY_PER_SUBMIT=64
  dec p256_$r WT_GRAPH_REPLAY_PER_SUBMIT=256
done
f16 p128 X=1
f16 p64 WT_GRAPH_REPLAY_PER_SUBMIT=64
f16 p128b X=1
f16 p64b WT_GRAPH_REPLAY_PER_SUBMIT=64
gpt p128 X=1
gpt p64 WT_GRAPH_REPLAY_PER_SUBMIT=64
gpt p256 WT_GRAPH_REPLAY_PER_SUBMIT=256
gpt p128b X=1
for f in d_p128_1 d_p64_1; do echo "$f $(grep -E '^tokens' $O/$f.log | md5sum)"; done
