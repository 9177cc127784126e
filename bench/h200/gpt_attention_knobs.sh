#!/bin/bash
# The GPT step (train_gpt's default model, 40 steps) with the default attention
# backward, WT_ATTN_BWD_DQ=kernel, the default again and WT_ATTN_HEAD_VIEWS=0,
# then PyTorch eager. The folder as gpt_q4_decode_merged.sh's.
set -u
D=$(cd "$(dirname "$0")" && pwd); cd $D
source "$D"/open_mpi_libs.sh
export LD_LIBRARY_PATH=$D:${LD_LIBRARY_PATH:-}:$MPILIB
G=(--backend webgpu --data $D/fortunes --steps 40 --print-every 10 --eval-every 0 --eval-batches 2 --sample 0 --print-loss)
for r in default dq_kernel default2 views0; do
  case $r in dq_kernel) E="WT_ATTN_BWD_DQ=kernel";; views0) E="WT_ATTN_HEAD_VIEWS=0";; *) E="X=0";; esac
  env $E timeout 60 ./train_gpt "${G[@]}" > /tmp/g_$r.log 2>&1; echo "$r ($E): $(grep -E '^step +40/40  loss' /tmp/g_$r.log | grep -o '[0-9.]* ms/step') $(grep -E '^step 40 loss' /tmp/g_$r.log)"
done
timeout 90 python3 gpt_torch.py --data $D/fortunes --steps 30 2>&1 | grep "ms/step"
