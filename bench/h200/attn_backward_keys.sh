#!/usr/bin/env bash
# The attention backward's key kernel (wgsl/attention_backward_pipelined_kv.wgsl)
# in the GPT step (B 64, H 6, S 256, D 64, causal): 6 traced steps and one
# validation batch for each of its forms (WT_ATTN_BWD_KEYS: main = the
# kernel before them; the default, lanes,pad,fma; pad,fma without the
# lanes; the default on the smallest tile, WT_ATTN_BWD_KERNEL=small), then
# the 40-step run of main's build (base/), of this build with the fastest
# form, of this build under WT_ATTN_BWD_KEYS=main, base and the branch
# again, and PyTorch eager.
# The folder: train_gpt, libwebtensor*.so.0 (base/ the same of main),
# gpt_torch.py, open_mpi_libs.sh and debs/ (Open MPI, which train_gpt
# links), fortunes/ (Debian's text files); DAWN_XZ (default: dawn.xz in
# the folder) is Dawn's library, xz-compressed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
O=${OUT:-/tmp/attn_backward_keys}; mkdir -p "$O"
source "$here"/open_mpi_libs.sh
xz -dc "${DAWN_XZ:-$here/dawn.xz}" > /tmp/libwebgpu_wrapper.so
export WT_WEBGPU_LIB=/tmp/libwebgpu_wrapper.so
BASE_LD=$here/base:${LD_LIBRARY_PATH:-}:$MPILIB
NEW_LD=$here:${LD_LIBRARY_PATH:-}:$MPILIB
chmod +x "$here"/train_gpt "$here"/base/train_gpt
D=$here/fortunes
G=(--backend webgpu --data "$D" --steps 40 --print-every 10 --eval-every 0 --eval-batches 2 --sample 0 --print-loss)
T=(--backend webgpu --data "$D" --steps 6 --print-every 6 --eval-every 0 --eval-batches 1 --sample 0)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
t0=$(date +%s)
T_DIR=/tmp/traces; mkdir -p $T_DIR
# name:keys knob:kernel knob (X: unset)
FORMS=${FORMS:-"main:main:X default:X:X nolanes:pad,fma:X small:X:small"}
for f in $FORMS; do
    IFS=: read name keys kern <<< "$f"
    e=(X=0); [ $keys != X ] && e+=(WT_ATTN_BWD_KEYS=$keys); [ $kern != X ] && e+=(WT_ATTN_BWD_KERNEL=$kern)
    env "${e[@]}" WT_TRACE=$T_DIR/$name.json LD_LIBRARY_PATH=$NEW_LD timeout 25 "$here"/train_gpt "${T[@]}" > $T_DIR/$name.txt 2>&1 || echo "traced $name failed: $(tail -n 2 $T_DIR/$name.txt)"
done
best=$(python3 - $T_DIR "$FORMS" <<'PY' 2> $O/keys.txt
import json, os, sys
d, forms = sys.argv[1], sys.argv[2].split()
res = {}
print("attention backward a layer (traced GPU time, 36 calls: 6 layers x 6 steps): dispatches in order, us", file=sys.stderr)
for f in forms:
    n = f.split(":")[0]
    p = os.path.join(d, n + ".json")
    if not os.path.exists(p): print(n, "no trace", file=sys.stderr); continue
    ev = sorted((e for e in json.load(open(p)) if e.get("ph") == "X"), key=lambda e: e["ts"])
    bw = [e["dur"] for e in ev if e["name"] == "attention_backward"]
    per = max(len(bw) // 36, 1)
    means = [sum(bw[i::per][:36]) / len(bw[i::per][:36]) for i in range(per)]
    key = means[1] if per == 3 else means[-1]
    res[f] = key
    print(f"{n:10s} {f.split(':', 1)[1]:34s} key kernel {key:7.1f}; a call {' + '.join(f'{m:.1f}' for m in means)} = {sum(means):7.1f}; "
          f"all GPU {sum(e['dur'] for e in ev) / 1e3:.1f} ms", file=sys.stderr)
print(min((v, f) for f, v in res.items() if not f.startswith("main:"))[1])
PY
)
cat $O/keys.txt; echo "fastest form: $best"
IFS=: read bname bkeys bkern <<< "$best"
be="X=0"; [ "$bkeys" != X ] && be="WT_ATTN_BWD_KEYS=$bkeys"; [ "$bkern" != X ] && be="$be WT_ATTN_BWD_KERNEL=$bkern"
echo "elapsed $(( $(date +%s) - t0 )) s"
runs=("base|X=0|base" "branch|$be|new" "main|WT_ATTN_BWD_KEYS=main|new" "base2|X=0|base" "branch2|$be|new")
for r in "${runs[@]}"; do
    IFS='|' read name knob build <<< "$r"
    if [ $build = base ]; then L=$BASE_LD; X="$here"/base/train_gpt; else L=$NEW_LD; X="$here"/train_gpt; fi
    env $knob LD_LIBRARY_PATH=$L timeout 30 "$X" "${G[@]}" > $O/$name.txt 2>&1
    echo "== $name ($knob): rc $? $(grep -E '^step +40/' $O/$name.txt | grep -o '[0-9.]* ms/step')"
done
grep -m1 -iE "adapter" $O/branch.txt
echo "== PyTorch eager"; timeout 50 python3 "$here"/gpt_torch.py --data "$D" --steps 30 > $O/torch.txt 2>&1; tail -n 2 $O/torch.txt
echo "elapsed $(( $(date +%s) - t0 )) s"
echo "== table: ms a step (steps 31-40), tokens/s, step 40 loss, validation"
for r in base branch main base2 branch2; do
    printf "%-8s %-12s %-18s %s  %s\n" $r "$(grep -E '^step +40/' $O/$r.txt | grep -o '[0-9.]* ms/step')" \
        "$(grep -E '^step +40/' $O/$r.txt | grep -o '[0-9,]* tok[a-z/]*' | head -n 1)" \
        "$(grep -E '^step 40 loss' $O/$r.txt)" "$(grep -o 'validation loss [0-9.]*' $O/$r.txt)"
done
printf "%-8s %s\n" torch "$(grep -o '[0-9.]* ms/step' $O/torch.txt | tail -n 1)"
