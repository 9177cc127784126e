#!/usr/bin/env bash
# GPT step with dq of the attention backward by its own kernel
# (wgsl/attention_backward_dq.wgsl: ds @ K with K and dq in their
# [B, S, H, D] layouts, causal blocks walking only the keys they see):
# main's build (base/) against the branch's (this folder) by default, with
# WT_ATTN_BWD_DQ=product (the library's GEMM, main's path), base and the
# branch again, the PyTorch peer, then traced steps of the branch's runs
# for the backward's dispatches' GPU times. The folder: the
# Release train_gpt and libwebtensor*.so.0 (base/: main's), gpt_torch.py,
# debs/ (Open MPI, which train_gpt links), open_mpi_libs.sh, fortunes/
# (Debian's text files); WT_WEBGPU_LIB names Dawn's library.
set -u
here=$(cd "$(dirname "$0")" && pwd)
source "$here"/open_mpi_libs.sh
BASE_LD=$here/base:${LD_LIBRARY_PATH:-}:$MPILIB
NEW_LD=$here:${LD_LIBRARY_PATH:-}:$MPILIB
chmod +x "$here"/train_gpt "$here"/base/train_gpt
D=$here/fortunes
G=(--backend webgpu --data "$D" --steps 40 --print-every 10 --eval-every 0 --eval-batches 2 --sample 0 --print-loss)
T=(--backend webgpu --data "$D" --steps 6 --print-every 6 --eval-every 0 --eval-batches 1 --sample 0)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
t0=$(date +%s)
show() { grep -E "^step +40/|^step 40 loss|val|rror|dapter" "$1" | head -n 6; }
run() { # name, env, build (base or branch)
    local ld=$NEW_LD bin=$here/train_gpt
    [ "$3" = base ] && ld=$BASE_LD bin=$here/base/train_gpt
    echo "== $1 ($2)"; env $2 LD_LIBRARY_PATH=$ld timeout 40 "$bin" "${G[@]}" > $OUT/$1.txt 2>&1; show $OUT/$1.txt
}
run base X=0 base
run branch X=0 branch
run product WT_ATTN_BWD_DQ=product branch
run base2 X=0 base
run branch2 X=0 branch
echo "== PyTorch eager"; timeout 45 python3 "$here"/gpt_torch.py --data "$D" --steps 30 > $OUT/torch.txt 2>&1; tail -n 2 $OUT/torch.txt
echo "elapsed $(( $(date +%s) - t0 )) s"
for r in branch product; do
    case $r in product) E=WT_ATTN_BWD_DQ=product;; *) E=X=0;; esac
    ld=$NEW_LD; bin=$here/train_gpt; [ $r = base ] && ld=$BASE_LD bin=$here/base/train_gpt
    echo "== traced $r ($E)"
    env $E WT_TRACE=$OUT/trace_$r.json LD_LIBRARY_PATH=$ld timeout 25 "$bin" "${T[@]}" 2>&1 | grep -E "^step|rror" | tail -n 1
    # The backward's dispatches carry one name: per call, in order (36
    # calls: 6 layers x 6 steps).
    python3 - "$OUT"/trace_$r.json <<'PY'
import json, sys
ev = sorted((e for e in json.load(open(sys.argv[1])) if e.get("ph") == "X"), key=lambda e: e["ts"])
tot = sum(e["dur"] for e in ev)
d = [e["dur"] for e in ev if e["name"] == "attention_backward"]
per = max(len(d) // 36, 1)
means = [sum(d[i::per]) / len(d[i::per]) for i in range(per)]
print(f"  GPU time {tot / 1e3:.1f} ms; attention_backward {len(d)} dispatches ({per} a call) {sum(d) / 1e3:.2f} ms; "
      f"a call: {' + '.join(f'{m:.1f}' for m in means)} = {sum(means):.1f} us")
PY
    rm -f $OUT/trace_$r.json
done
echo "elapsed $(( $(date +%s) - t0 )) s"
echo "== table: ms a step, steps 31-40"
for r in base branch product base2 branch2; do printf "%-8s %s\n" $r "$(grep -E '^step +40/' $OUT/$r.txt | grep -o '[0-9.]* ms/step') $(grep -E '^step 40 loss' $OUT/$r.txt)"; done
printf "%-8s %s\n" torch "$(grep -o '[0-9.]* ms/step' $OUT/torch.txt)"
