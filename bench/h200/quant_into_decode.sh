#!/bin/bash
# The products of a Q4_K_M file's mixed layers written into one tensor
# (wt_linear_fused_options.into) instead of joined by copies: the 852M
# Llama's Q4_K_M, Q4_0 and Q8_0 decodes with main's build (base/: its
# llama and libwebtensor.so.0) and this one's (new/), runs alternating,
# and llama.cpp's Vulkan backend on the same files (peer/, as
# quant_decode_all.sh). REPO names the repository, WT_WEBGPU_LIB Dawn's
# library; the logs come back as ${OUT:-/tmp}/intod_logs.tar.gz.
NAME=intod
source "$(dirname "$0")"/quant_call.sh
chmod +x base/*
make_models q4_k_m q4_0 q8_0
wait $MK
dec() { local name=$1 l=$2 k=$3; shift 3; timeout 60 env LD_LIBRARY_PATH=$(lib $l) "$@" $l/llama --model /tmp/m_$k.gguf --backend webgpu --tokens 128 --decode graph > $O/d_$name.log 2>&1; echo "d_$name rc=$? $(grep -E '^decode \(' $O/d_$name.log | head -1 | grep -o '[0-9.]* tokens/s') $(grep -o '[0-9]* dispatches' $O/d_$name.log)"; }
dec warm new q4_k_m
for r in 1 2; do for k in q4_k_m q4_0 q8_0; do dec ${k}_base_$r base $k; dec ${k}_new_$r new $k; done; done
peer q4_k_m q4_0 q8_0
echo "total $(el) s"
grep -h -E "^peer" $O/peer_*.log
pack_logs
