#!/bin/bash
# Q8_0 and Q4_0 products of the issue's shapes: the default kernels against
# x rounded to 8 bits inside the product (WT_QUANT_GEMV_X8=3) at 16 and 32
# lanes, twice each.
# The folder: new/ (the Release webtensor and libwebtensor.so.0 measured);
# WT_WEBGPU_LIB names Dawn's library.
set -u
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/q8_out}; mkdir -p "$O"
cd $D; chmod +x new/*
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
B=(bench --size large --backend webgpu --no-check --filter gemv_q8_0)
g() { local name=$1; shift; timeout 90 env "$@" LD_LIBRARY_PATH=$D/new new/webtensor "${B[@]}" > $O/g_$name.log 2>&1; echo "== $name rc=$?"; grep -E 'gemv_q8_0' $O/g_$name.log | head -5; }
for r in 1 2; do
g def$r X=1
g x8_$r WT_QUANT_GEMV_X8=3
g x8l32_$r WT_QUANT_GEMV_X8=3 WT_QUANT_GEMV_LANES=32
done
