#!/bin/bash
# The 852M Llama of llama_ref.py on the GPU: logits and 64 greedy tokens of
# the captured decode against transformers, decode tok/s (captured), the
# 128-token prefill against transformers eager, then PyTorch's decode peer.
set -u
D=$(cd "$(dirname "$0")" && pwd)
O=${OUT:-/tmp/final_out}
mkdir -p "$O"; cd "$D"; chmod +x llama
T0=$(date +%s)
run() { local name=$1 lim=$2; shift 2; local t=$(date +%s); timeout "$lim" "$@" > "$O/$name.log" 2>&1; echo "$name: rc=$? $(( $(date +%s) - t )) s"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)"
for dt in f16 f32; do
    M=/tmp/final_model_$dt
    run make_$dt 200 python3 llama_ref.py make --size large --dtype $dt --out $M --seed 0
    run ref_$dt 200 python3 llama_ref.py ref --model $M --out $M --tokens 64
    run check_$dt 150 ./llama --model $M --backend webgpu --dtype $dt --tokens 64 --decode graph --ref-logits $M/ref_logits.npy --ref-tokens $M/ref_tokens.txt
    run speed_$dt 150 ./llama --model $M --backend webgpu --dtype $dt --tokens 128 --prompt-len 128 --decode graph --prefill-runs 10
    run speed2_$dt 150 ./llama --model $M --backend webgpu --dtype $dt --tokens 128 --prompt-len 128 --decode graph --prefill-runs 10
    run torch_prefill_$dt 200 python3 llama_ref.py bench --model $M --tokens 32 --prompt-len 128 --prefill-runs 10
    rm -rf $M
done
run torch_compile 240 python3 torch_decode_graph.py --compile
for f in "$O"/*.log; do echo "=== $(basename $f)"; grep -iE "tok|prefill|logit|margin|FAIL|PASS|OK|error|differ|match|memory" "$f" | grep -v "^step" | tail -12; done
echo "total $(( $(date +%s) - T0 )) s"
