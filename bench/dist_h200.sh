#!/usr/bin/env bash
# Data-parallel training on the GPUs of one host, one rank per GPU
# (docs/DISTRIBUTED.md), as measured for bench/RESULTS.md on two H200s:
#
#   bench/dist_h200.sh BIN_DIR FORTUNES [NGPUS]
#
# BIN_DIR holds train_gpt, train_fashion_mnist and bench_transfer (built
# with MPI; their libraries on LD_LIBRARY_PATH); FORTUNES is the GPT's text
# (a file or a folder of Debian's fortune files); Open MPI's mpirun on
# PATH, or $MPIRUN. Runs, on Vulkan:
#   - device <-> host copy speed of GPU 0 (bench_transfer), writes by queue
#     writes and through the mapped staging ring (WT_WEBGPU_UPLOAD_STAGED=1,
#     4 MiB and 1 MiB pieces);
#   - the GPT example (6 layers, dim 384, context 256, batch 64 a GPU,
#     10.8 M parameters) on 1 GPU without --dist, on 1 rank with --dist,
#     and on NGPUS ranks: the reduction overlapped with backward (the
#     default, wt_dist_grad_sync), overlapped and reduced in f16
#     (--dist-f16), after it (--dist-overlap off), and after it with the
#     gradients read one by one (--dist-pack never): tokens/s
#     of the last 20 of 60 steps;
#   - the LeNet of the Fashion-MNIST example on random images (--synthetic:
#     the data set need not be there), batch 256 a GPU, 200 steps, on 1 GPU,
#     1 rank and NGPUS ranks overlapped and not: images/s after the first 10;
# then the scaling efficiency (N-GPU rate / (N x 1-GPU rate)) and where the
# collectives' time went (the --dist runs' "dist:" lines). Logs go to
# $OUT/dist_bench (or /tmp/dist_bench). DIST_BENCH_SMALL=1 runs tiny
# models on $DIST_BENCH_BACKEND (default vulkan), to try the script out.
set -u
bin=$1 text=$2 n=${3:-2}
logs=${OUT:-/tmp}/dist_bench
mkdir -p "$logs"
mpirun=${MPIRUN:-mpirun}
# One host: shared memory between the ranks (no cross-memory attach, which
# containers forbid), ranks not pinned to one core (Dawn and the driver
# run threads of their own); no ssh needed (plm isolated: one host).
launch=("$mpirun" --allow-run-as-root --oversubscribe --bind-to none --mca plm isolated --mca pml ob1 --mca btl self,vader)
# The library's knobs set for the run (WT_ATTN_BACKWARD=composed ...) reach every rank.
for v in $(env | sed -n 's/^\(WT_[A-Z0-9_]*\)=.*/\1/p'); do launch+=(-x "$v"); done
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

run() { # name, command...
    local name=$1
    shift
    echo "== $name: $*"
    timeout 150 "$@" >"$logs/$name.log" 2>&1
    local rc=$?
    grep -E "^(backend|model|step +[0-9]+/|steps [0-9]|dist:|trained|error)" "$logs/$name.log" | tail -n 8
    [ "$rc" = 0 ] || { echo "   (exit status $rc; the log's end:)"; tail -n 15 "$logs/$name.log"; }
}
gpt_rate() { grep -E "^step +[0-9]+/" "$logs/$1.log" | grep tokens/s | tail -n 1 |
             awk '{for (i = 1; i <= NF; i++) if ($i == "tokens/s") print $(i - 1)}'; }
lenet_rate() { grep -E "^steps 11-" "$logs/$1.log" | tail -n 1 | awk '{print $3}'; }
eff() { awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { if (a > 0 && b > 0) printf "%.1f %%", 100 * b / (n * a); else print "n/a" }'; }

backend=${DIST_BENCH_BACKEND:-vulkan}
echo "== GPUs"
nvidia-smi -L 2>/dev/null || true
run transfer "$bin/bench_transfer" --backend "$backend" --gpu 0 --reps "${DIST_BENCH_REPS:-10}"
cat "$logs/transfer.log"
# Writes through the context's mapped staging ring instead of queue writes,
# in pieces of 4 MiB (the default) and of 1 MiB (the GPT's gradients are
# 0.6-1.2 MB each, below 4 MiB: written by queue writes otherwise).
WT_WEBGPU_UPLOAD_STAGED=1 run transfer_staged "$bin/bench_transfer" --backend "$backend" --gpu 0 --reps "${DIST_BENCH_REPS:-10}"
cat "$logs/transfer_staged.log"
WT_WEBGPU_UPLOAD_STAGED=1 WT_WEBGPU_UPLOAD_PIECE_BYTES=1048576 run transfer_staged_1m "$bin/bench_transfer" --backend "$backend" --gpu 0 --reps "${DIST_BENCH_REPS:-10}"
cat "$logs/transfer_staged_1m.log"

gpt=(--backend "$backend" --data "$text" --batch 64 --steps 60 --print-every 20 --eval-every 0 --eval-batches 2
     --sample 0 --warmup 10)
lenet=(--backend "$backend" --synthetic 60000 --batch 256 --steps 200 --epochs 1 --eval-limit 0)
if [ "${DIST_BENCH_SMALL:-0}" = 1 ]; then
    gpt+=(--layers 2 --dim 32 --heads 2 --context 32 --batch 4 --steps 30 --print-every 10)
    lenet+=(--synthetic 2000 --batch 8 --steps 30)
fi
run gpt_1gpu "$bin/train_gpt" "${gpt[@]}"
run gpt_1rank_dist "${launch[@]}" -np 1 "$bin/train_gpt" --dist "${gpt[@]}"
run gpt_${n}gpu_dist "${launch[@]}" -np "$n" "$bin/train_gpt" --dist "${gpt[@]}"
# The reduction after backward, as before the gradient synchroniser; and
# that with one read-back per gradient instead of packed buckets.
run gpt_${n}gpu_dist_after "${launch[@]}" -np "$n" "$bin/train_gpt" --dist --dist-overlap off "${gpt[@]}"
run gpt_${n}gpu_dist_f16 "${launch[@]}" -np "$n" "$bin/train_gpt" --dist --dist-f16 "${gpt[@]}"
run gpt_${n}gpu_dist_unpacked "${launch[@]}" -np "$n" "$bin/train_gpt" --dist --dist-overlap off --dist-pack never "${gpt[@]}"

run lenet_1gpu "$bin/train_fashion_mnist" "${lenet[@]}"
run lenet_1rank_dist "${launch[@]}" -np 1 "$bin/train_fashion_mnist" --dist "${lenet[@]}"
run lenet_${n}gpu_dist "${launch[@]}" -np "$n" "$bin/train_fashion_mnist" --dist "${lenet[@]}"
run lenet_${n}gpu_dist_after "${launch[@]}" -np "$n" "$bin/train_fashion_mnist" --dist --dist-overlap off "${lenet[@]}"

g1=$(gpt_rate gpt_1gpu) g1d=$(gpt_rate gpt_1rank_dist) gn=$(gpt_rate gpt_${n}gpu_dist)
gu=$(gpt_rate gpt_${n}gpu_dist_unpacked) ga=$(gpt_rate gpt_${n}gpu_dist_after) gh=$(gpt_rate gpt_${n}gpu_dist_f16)
l1=$(lenet_rate lenet_1gpu) l1d=$(lenet_rate lenet_1rank_dist) ln=$(lenet_rate lenet_${n}gpu_dist)
la=$(lenet_rate lenet_${n}gpu_dist_after)
echo
echo "== summary ($n GPUs, one rank each, per-GPU batch fixed)"
echo "GPT   tokens/s: 1 GPU ${g1:-?}, 1 rank --dist ${g1d:-?}, $n GPUs overlapped ${gn:-?}: scaling efficiency $(eff "${g1:-0}" "${gn:-0}" "$n")"
grep "^dist:" "$logs/gpt_${n}gpu_dist.log" | tail -n 1 | sed 's/^/GPT   /'
echo "GPT   $n GPUs, reduced after backward (--dist-overlap off): ${ga:-?} tokens/s, efficiency $(eff "${g1:-0}" "${ga:-0}" "$n")"
grep "^dist:" "$logs/gpt_${n}gpu_dist_after.log" | tail -n 1 | sed 's/^/GPT   /'
echo "GPT   $n GPUs, overlapped, reduced in f16 (--dist-f16): ${gh:-?} tokens/s, efficiency $(eff "${g1:-0}" "${gh:-0}" "$n")"
grep "^dist:" "$logs/gpt_${n}gpu_dist_f16.log" | tail -n 1 | sed 's/^/GPT   /'
echo "GPT   $n GPUs, after backward, gradients read one by one (--dist-pack never): ${gu:-?} tokens/s, efficiency $(eff "${g1:-0}" "${gu:-0}" "$n")"
grep "^dist:" "$logs/gpt_${n}gpu_dist_unpacked.log" | tail -n 1 | sed 's/^/GPT   /'
echo "LeNet images/s: 1 GPU ${l1:-?}, 1 rank --dist ${l1d:-?}, $n GPUs overlapped ${ln:-?}: scaling efficiency $(eff "${l1:-0}" "${ln:-0}" "$n")"
grep "^dist:" "$logs/lenet_${n}gpu_dist.log" | tail -n 1 | sed 's/^/LeNet /'
echo "LeNet $n GPUs, reduced after backward (--dist-overlap off): ${la:-?} images/s, efficiency $(eff "${l1:-0}" "${la:-0}" "$n")"
grep "^dist:" "$logs/lenet_${n}gpu_dist_after.log" | tail -n 1 | sed 's/^/LeNet /'
grep "^grads" "$logs/transfer.log" | sed 's/^/copies (queue writes): /'
grep "^grads" "$logs/transfer_staged.log" | sed 's/^/copies (staged, 4 MiB pieces): /'
grep "^grads" "$logs/transfer_staged_1m.log" | sed 's/^/copies (staged, 1 MiB pieces): /'
