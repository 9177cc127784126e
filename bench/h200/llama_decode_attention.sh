#!/bin/bash
# The 852M Llama of llama_ref.py, captured decode of 128 tokens after a
# 128-token prompt, f16 and f32: the captured decode against transformers
# (logits and 64 greedy tokens), then the decode speed before
# (WT_ATTN_DECODE=0: the tiled attention kernel, its key split and the
# combine dispatch) and after (the one-pass decode attention), twice each,
# the GEMV's WT_LINEAR_FUSED_UNROLL 4 and 8, then the compiled CUDA-graph
# peer (torch_decode_graph.py --compile). Logs to $OUT.
set -u
D=$(cd "$(dirname "$0")" && pwd)
O=${OUT:-/tmp/decode_out}
mkdir -p "$O"; cd "$D"; chmod +x llama
T0=$(date +%s)
run() { local name=$1 lim=$2; shift 2; local t=$(date +%s); timeout "$lim" "$@" > "$O/$name.log" 2>&1; echo "$name: rc=$? $(( $(date +%s) - t )) s | $(grep -E 'decode \(|logits vs|tokens vs|per token' "$O/$name.log" | tr '\n' '|')"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)"
S="--backend webgpu --tokens 128 --prompt-len 128 --decode graph"
for dt in f16 f32; do
    M=/tmp/decode_model_$dt
    run make_$dt 120 python3 llama_ref.py make --size large --dtype $dt --out $M --seed 0
    run ref_$dt 120 python3 llama_ref.py ref --model $M --out $M --tokens 64
    run check_$dt 60 ./llama --model $M --backend webgpu --dtype $dt --tokens 64 --decode graph --ref-logits $M/ref_logits.npy --ref-tokens $M/ref_tokens.txt
    run base1_$dt 60 env WT_ATTN_DECODE=0 ./llama --model $M --dtype $dt $S
    run after1_$dt 60 ./llama --model $M --dtype $dt $S
    run base2_$dt 60 env WT_ATTN_DECODE=0 ./llama --model $M --dtype $dt $S
    run after2_$dt 60 ./llama --model $M --dtype $dt $S
    run unroll4_$dt 60 env WT_LINEAR_FUSED_UNROLL=4 ./llama --model $M --dtype $dt $S
    run unroll8_$dt 60 env WT_LINEAR_FUSED_UNROLL=8 ./llama --model $M --dtype $dt $S
    rm -rf $M
done
run torch_compile 200 python3 torch_decode_graph.py --compile
grep -h "tok/s" "$O/torch_compile.log"
echo "total $(( $(date +%s) - T0 )) s"
