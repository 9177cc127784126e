#!/bin/bash
# Issues 17 and 18, the examples' measurements on the GPU machine, in one call:
#  fmnist: the Fashion-MNIST training step replayed from a captured graph
#          (--graph) against the eager step: bit-identical losses first
#          (--compare webgpu,webgpu:graph --exact), then ms a step, eager and
#          replayed, twice each, with AdamW (eager after the replay) and SGD
#          (captured whole); 38,400 synthetic images, batch 64 (600 steps).
#  gpt:    train_gpt and bench/gpt_torch.py from the same initial weights
#          (train_gpt --save-init, gpt_torch.py --init) on the same batches:
#          the default model (6 layers, dim 384, context 256, batch 64), 500
#          steps, validation loss on the same 20 held-out batches; then the
#          launch-bound size (4 layers, dim 128, 4 heads, context 64, batch 16),
#          300 steps, tokens/s over steps 201-300 for both (webtensor eager and
#          with --graph: forward, backward and clipping replayed; PyTorch eager
#          and torch.compile).
#  llama:  prefill of a 128-token prompt on the 852M Llama of llama_ref.py
#          (f16 and f32): llama --prefill-runs 10 against llama_ref.py bench
#          --prefill-runs 10 (transformers eager), medians.
# Put it in a folder with the Release builds of train_fashion_mnist,
# train_gpt and llama, libwebtensor.so.0 (on LD_LIBRARY_PATH) and copies of
# bench/gpt_torch.py and bench/llama_ref.py; FORTUNES names the text corpus:
#   bash DIR/training_examples.sh [fmnist] [gpt] [llama]     (none: all three)
set -u
D=$(cd "$(dirname "$0")" && pwd)
R=$PWD
O=${OUT:-/tmp/examples_out}
F=${FORTUNES:-$R/.bench/fortunes}
BACKEND=${BACKEND:-webgpu}
FM_IMAGES=${FM_IMAGES:-38400}
GPT_STEPS=${GPT_STEPS:-500}
GPT_MODEL=${GPT_MODEL:-}   # empty: train_gpt's default model (6 layers, dim 384, context 256, batch 64)
LB=${LB:---layers 4 --dim 128 --heads 4 --context 64 --batch 16}
LB_STEPS=${LB_STEPS:-300}
mkdir -p "$O"
cd "$D"
chmod +x train_fashion_mnist train_gpt llama 2>/dev/null
export EGL_PLATFORM=surfaceless
T0=$(date +%s)
run() { # name, timeout seconds, command...
    local name=$1 lim=$2; shift 2
    local t=$(date +%s)
    timeout "$lim" "$@" > "$O/$name.log" 2>&1
    echo "$name: rc=$? $(( $(date +%s) - t )) s" | tee -a "$O/summary.txt"
}
PARTS=${*:-fmnist gpt llama}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$O/gpu.txt" 2>&1

for part in $PARTS; do case $part in
fmnist)
    FM=(--backend "$BACKEND" --synthetic "$FM_IMAGES" --epochs 1 --eval-limit 0 --batch 64)
    run fm_exact_adamw 120 ./train_fashion_mnist --compare "$BACKEND,$BACKEND:graph" --exact --steps 30 --batch 64 \
        --synthetic 1920 --eval-limit 0
    run fm_exact_sgd 120 ./train_fashion_mnist --compare "$BACKEND,$BACKEND:graph" --exact --optimizer sgd --steps 30 \
        --batch 64 --synthetic 1920 --eval-limit 0
    run fm_eager_1 120 ./train_fashion_mnist "${FM[@]}"
    run fm_graph_1 120 ./train_fashion_mnist "${FM[@]}" --graph
    run fm_graph_2 120 ./train_fashion_mnist "${FM[@]}" --graph
    run fm_eager_2 120 ./train_fashion_mnist "${FM[@]}"
    run fm_sgd_eager 120 ./train_fashion_mnist "${FM[@]}" --optimizer sgd
    run fm_sgd_graph 120 ./train_fashion_mnist "${FM[@]}" --optimizer sgd --graph
    ;;
gpt)
    G=(--data "$F" --eval-batches 20)
    # shellcheck disable=SC2086
    run gpt_wt 240 ./train_gpt --backend "$BACKEND" "${G[@]}" $GPT_MODEL --steps "$GPT_STEPS" --print-every 100 \
        --eval-every 0 --sample 0 --print-loss --save-init /tmp/examples_gpt_init.safetensors
    # shellcheck disable=SC2086
    run gpt_torch 240 python3 gpt_torch.py "${G[@]}" $GPT_MODEL --steps "$GPT_STEPS" --print-loss \
        --init /tmp/examples_gpt_init.safetensors
    # shellcheck disable=SC2086
    run lb_wt 180 ./train_gpt --backend "$BACKEND" "${G[@]}" $LB --steps "$LB_STEPS" --print-every 100 --eval-every 0 \
        --sample 0 --save-init /tmp/examples_lb_init.safetensors
    # shellcheck disable=SC2086
    run lb_wt_graph 180 ./train_gpt --backend "$BACKEND" "${G[@]}" $LB --steps "$LB_STEPS" --print-every 100 \
        --eval-every 0 --sample 0 --graph
    # shellcheck disable=SC2086
    run lb_torch 180 python3 gpt_torch.py "${G[@]}" $LB --steps "$LB_STEPS" --warmup-steps $((LB_STEPS - 100)) \
        --init /tmp/examples_lb_init.safetensors
    # shellcheck disable=SC2086
    run lb_torch_compile 240 python3 gpt_torch.py "${G[@]}" $LB --steps "$LB_STEPS" --warmup-steps $((LB_STEPS - 100)) \
        --init /tmp/examples_lb_init.safetensors --compile
    rm -f /tmp/examples_gpt_init.safetensors /tmp/examples_lb_init.safetensors
    ;;
llama)
    for dt in f16 f32; do
        M=/tmp/examples_llama_$dt
        run llama_make_$dt 240 python3 llama_ref.py make --size large --dtype $dt --out $M --seed 0
        run llama_wt_$dt 180 ./llama --model $M --backend "$BACKEND" --dtype $dt --tokens 32 --prompt-len 128 \
            --prefill-runs 10
        run llama_torch_$dt 180 python3 llama_ref.py bench --model $M --tokens 32 --prompt-len 128 --prefill-runs 10
        rm -rf $M
    done
    ;;
*) echo "unknown part $part (fmnist, gpt, llama)";;
esac; done

echo
echo "== $(cat "$O/gpu.txt" 2>/dev/null)"
python3 - "$O" <<'EOF'
import os, re, sys
O = sys.argv[1]
def log(n):
    p = os.path.join(O, n + ".log")
    return open(p, errors="replace").read() if os.path.exists(p) else ""
def find(n, pat, g=1):
    m = re.findall(pat, log(n), re.M)
    return m[-1] if m else None
rows = []
for n in ("fm_exact_adamw", "fm_exact_sgd"):
    if log(n):
        ok = find(n, r"(every loss bit-identical)")
        rows.append((n, "bit-identical losses" if ok else "NOT bit-identical / failed: see %s.log" % n))
ms = {}
for n in ("fm_eager_1", "fm_graph_1", "fm_graph_2", "fm_eager_2", "fm_sgd_eager", "fm_sgd_graph"):
    m = find(n, r"steps 11-\d+: (\d+) images/s, ([\d.]+) ms a step")
    if m:
        ms[n] = float(m[1])
        rows.append((n, "%s ms a step, %s images/s" % (m[1], m[0])))
def best(*ns):
    v = [ms[n] for n in ns if n in ms]
    return min(v) if v else None
e, g = best("fm_eager_1", "fm_eager_2"), best("fm_graph_1", "fm_graph_2")
if e and g:
    rows.append(("fmnist AdamW: ms a step, replayed / eager", "%.3f (best of two runs each)" % (g / e)))
if "fm_sgd_eager" in ms and "fm_sgd_graph" in ms:
    r = ms["fm_sgd_graph"] / ms["fm_sgd_eager"]
    rows.append(("fmnist SGD: ms a step, replayed / eager", "%.3f" % r))
for pre, what in (("gpt", "default model"), ("lb", "launch-bound")):
    vw = find(pre + "_wt", r"validation loss ([\d.]+)")
    vt = find(pre + "_torch", r"validation loss ([\d.]+)")
    l1w = find(pre + "_wt", r"^step 1 loss (\S+)")
    l1t = find(pre + "_torch", r"^step 1 loss (\S+)")
    if l1w and l1t:
        rows.append((what + ": step-1 loss wt / torch", "%s / %s" % (l1w, l1t)))
    if vw and vt:
        rows.append((what + ": validation loss wt / torch", "%s / %s (%.2f%% apart; target within 2%%)" %
                     (vw, vt, 100 * abs(float(vw) - float(vt)) / float(vt))))
    tw = find(pre + "_wt", r"^step\s+\d+/\d+\s+loss \S+\s+lr \S+\s+(\d+) tokens/s\s+([\d.]+) ms/step")
    tt = find(pre + "_torch", r"torch eager: steps (\S+), ([\d.]+) ms/step, (\d+) tokens/s")
    tc = find(pre + "_torch_compile", r"torch compiled: steps (\S+), ([\d.]+) ms/step, (\d+) tokens/s")
    if tw:
        rows.append((what + ": webtensor (last interval)", "%s tokens/s, %s ms/step" % tw))
    tg = find(pre + "_wt_graph", r"^step\s+\d+/\d+\s+loss \S+\s+lr \S+\s+(\d+) tokens/s\s+([\d.]+) ms/step")
    vg = find(pre + "_wt_graph", r"validation loss ([\d.]+)")
    if tg:
        rows.append((what + ": webtensor --graph (last interval)", "%s tokens/s, %s ms/step; validation loss %s (eager %s)"
                     % (tg[0], tg[1], vg, vw)))
    if tt:
        rows.append((what + ": torch eager (steps %s)" % tt[0], "%s tokens/s, %s ms/step" % (tt[2], tt[1])))
    if tc:
        rows.append((what + ": torch compiled (steps %s)" % tc[0], "%s tokens/s, %s ms/step" % (tc[2], tc[1])))
    if tw and tt:
        rows.append((what + ": webtensor / torch eager", "%.2fx tokens/s" % (float(tw[0]) / float(tt[2]))))
    if tg and tt:
        rows.append((what + ": webtensor --graph / torch eager", "%.2fx tokens/s (target >= 1.5x at the launch-bound size)"
                     % (float(tg[0]) / float(tt[2]))))
for dt in ("f16", "f32"):
    w = find("llama_wt_" + dt, r"prefill: \d+ tokens in [\d.]+ s = ([\d.]+) tokens/s")
    t = find("llama_torch_" + dt, r"prefill ([\d.]+) tok/s")
    if w:
        rows.append(("llama %s prefill 128: webtensor (median of 10)" % dt, w + " tok/s"))
    if t:
        rows.append(("llama %s prefill 128: torch eager (median of 10)" % dt, t + " tok/s"))
    if w and t:
        rows.append(("llama %s prefill: webtensor / torch eager" % dt, "%.2fx (target >= 1)" % (float(w) / float(t))))
width = max((len(r[0]) for r in rows), default=10)
for a, b in rows:
    print(a.ljust(width), "|", b)
EOF
echo "total $(( $(date +%s) - T0 )) s"
