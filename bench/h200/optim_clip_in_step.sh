#!/bin/bash
# The GPT step (train_gpt's default model, 40 steps) of two builds: base/
# (main) and the folder's own, with clipping's norms six gradients a kernel
# and the clip factor applied inside the AdamW kernels (the default),
# --clip-mode separate (norms batched, then the scaling kernels and the
# step) and that with WT_CLIP_NORMS=each (main's path); then 12 traced
# steps of the default summarised by op (TRACE=0: none), and PyTorch
# eager. Base and this build alternate three times. The folder:
# train_gpt + libwebtensor.so.0 + libwebtensor_dist.so.0 (and base/ with
# main's), dawn.xz (Dawn's library, xz), debs/ + open_mpi_libs.sh (Open
# MPI, which libwebtensor_dist links), fortunes/ (the text files of
# Debian's fortunes), gpt_torch.py.
set -u
D=$(cd "$(dirname "$0")" && pwd); cd $D
source "$D"/open_mpi_libs.sh
xz -dc $D/dawn.xz > /tmp/libwebgpu_wrapper.so; export WT_WEBGPU_LIB=/tmp/libwebgpu_wrapper.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
OUT=${OUT:-/tmp}
G=(--backend webgpu --data $D/fortunes --steps 40 --print-every 10 --eval-every 0 --eval-batches 2 --sample 0 --print-loss)
run() { # name, library folder, program, extra arguments...
  local name=$1 lib=$2 prog=$3; shift 3
  local log=$OUT/$name.txt
  LD_LIBRARY_PATH=$lib:${LD_LIBRARY_PATH:-}:$MPILIB timeout 60 $prog "${G[@]}" "$@" > $log 2>&1
  echo "$name: $(grep -E '^step +40/40  loss' $log | grep -o '[0-9.]* ms/step') | $(grep -E '^step 40 loss' $log) | $(grep -E 'validation loss' $log | grep -o 'loss [0-9.]*')"
}
for i in 1 2 3; do
  run base$i $D/base $D/base/train_gpt
  run mine$i $D $D/train_gpt
done
run separate $D $D/train_gpt --clip-mode separate
WT_CLIP_NORMS=each run each_separate $D $D/train_gpt --clip-mode separate
grep -m1 "WebGPU adapter" $OUT/mine1.txt
# At most 8 files come back from $OUT: the runs' logs as one.
for f in base1 mine1 base2 mine2 base3 mine3 separate each_separate; do echo "=== $f"; cat $OUT/$f.txt; rm $OUT/$f.txt; done > $OUT/runs.txt
[ "${TRACE:-1}" = 1 ] || { timeout 90 python3 gpt_torch.py --data $D/fortunes --steps 30 2>&1 | grep "ms/step"; exit 0; }
LD_LIBRARY_PATH=$D:${LD_LIBRARY_PATH:-}:$MPILIB WT_TRACE=$OUT/trace.json timeout 40 ./train_gpt --backend webgpu --data $D/fortunes --steps 12 --print-every 12 --eval-every 0 --eval-batches 1 --sample 0 2>&1 | grep -E "^step|rror" | tail -n 2
python3 - "$OUT/trace.json" > $OUT/ops.txt <<'PY'
import collections, json, sys
ev=json.load(open(sys.argv[1]))
by_op=collections.Counter(); cnt=collections.Counter(); by_shape=collections.defaultdict(lambda:[0.0,0])
for e in ev:
    if e.get("ph")!="X": continue
    by_op[e["name"]]+=e["dur"]; cnt[e["name"]]+=1
    k=(e["name"],e.get("args",{}).get("shapes",""))
    by_shape[k][0]+=e["dur"]; by_shape[k][1]+=1
tot=sum(by_op.values()); print(f"total {tot/1e3:.1f} ms, {sum(cnt.values())} kernels")
for n,d in by_op.most_common(40): print(f"  {n:28s} {d/1e3:9.2f} ms {cnt[n]:6d} {d/cnt[n]:8.1f} us")
for (n,s),(d,c) in sorted(by_shape.items(),key=lambda kv:-kv[1][0])[:60]: print(f"  {n:22s} {s[:80]:80s} {d/1e3:8.2f} {c:5d} {d/c:8.1f}")
PY
rm -f $OUT/trace.json
head -32 $OUT/ops.txt
timeout 90 python3 gpt_torch.py --data $D/fortunes --steps 30 2>&1 | grep "ms/step"
