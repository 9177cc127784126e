#!/usr/bin/env bash
# Data-parallel training under MPI, checked from outside through the
# examples' --print-loss lines.
#
#   dist_training.sh equivalence MPIEXEC NP PROGRAM BACKEND B STEPS TOL10 TOL [flags...]
#     PROGRAM on one process at --batch NP*B against NP ranks at --batch B
#     (--dist --check-sync: parameters bit-identical on every rank after
#     every step): the loss of each of the first 10 steps within relative
#     TOL10; of every step within 10*TOL, and their mean within TOL. They
#     differ by rounding only (sums over the batch in another order, the
#     mean of NP means), which training amplifies: AdamW divides by
#     sqrt(v), and a ReLU or max-pool tie decided the other way changes a
#     step's gradient outright (one LeNet run: 1e-7 over the first 10
#     steps, 6e-4 at step 99). A wrong shard or a sum for a mean shows at
#     once in the first steps.
#   dist_training.sh overlap MPIEXEC NP PROGRAM BACKEND B STEPS [flags...]
#     NP ranks with the reduction overlapped with backward
#     (--dist-overlap on: wt_dist_grad_sync) against the same after
#     backward (off: wt_dist_allreduce): every step's loss printed the same
#     (9 digits), the parameters bit-identical across ranks in both, and
#     the overlapped run's "dist:" line showing buckets posted during
#     backward. They are the same reductions of the same buckets, so any
#     difference is a bug, not rounding.
#   dist_training.sh failure MPIEXEC NP PROGRAM BACKEND [flags...]
#     rank 1 fails at step 3 (--fail-step): the job must end (non-zero)
#     within 120 s, rank 1 with its message and every other rank with
#     "rank 1 failed".
set -u
mode=$1 mpiexec=$2 np=$3 prog=$4 backend=$5
shift 5
# Root in CI containers; more ranks than cores there.
launch=("$mpiexec" --oversubscribe -np "$np")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

losses() { sed -n 's/^step \([0-9]*\) loss \([^ ]*\)$/\1 \2/p' "$1"; }

case "$mode" in
equivalence)
    b=$1 steps=$2 tol10=$3 tol=$4
    shift 4
    "$prog" --backend "$backend" --batch $((np * b)) --steps "$steps" --print-loss "$@" >"$tmp/one.out" 2>&1 ||
        { cat "$tmp/one.out"; echo "FAIL: the single-process run failed"; exit 1; }
    "${launch[@]}" "$prog" --dist --check-sync --backend "$backend" --batch "$b" --steps "$steps" --print-loss "$@" \
        >"$tmp/dist.out" 2>&1 || { cat "$tmp/dist.out"; echo "FAIL: the $np-rank run failed"; exit 1; }
    grep -q "parameters bit-identical on all $np ranks after each of the $steps steps" "$tmp/dist.out" ||
        { cat "$tmp/dist.out"; echo "FAIL: no bit-identity line"; exit 1; }
    losses "$tmp/one.out" >"$tmp/one.loss"
    losses "$tmp/dist.out" >"$tmp/dist.loss"
    n1=$(wc -l <"$tmp/one.loss") n2=$(wc -l <"$tmp/dist.loss")
    [ "$n1" = "$steps" ] && [ "$n2" = "$steps" ] ||
        { echo "FAIL: $n1 and $n2 loss lines, want $steps"; exit 1; }
    paste "$tmp/one.loss" "$tmp/dist.loss" | awk -v tol="$tol" -v tol10="$tol10" -v np="$np" '
        { if ($1 != $3) { print "FAIL: step numbers differ at line " NR; bad = 1; exit 1 }
          d = $2 - $4; if (d < 0) d = -d; r = d / ($2 < 0 ? -$2 : $2);
          if (r > worst) { worst = r; at = $1 }
          if ($1 <= 10 && r > worst10) worst10 = r
          sum += r
          lim = $1 <= 10 ? tol10 : 10 * tol
          if (r > lim) { printf "FAIL: step %d: loss %s on one process, %s on %d ranks (relative %.2e > %s)\n", $1, $2, $4, np, r, lim; bad = 1 } }
        END { if (NR && sum / NR > tol) { printf "FAIL: mean relative loss difference %.2e > %s\n", sum / NR, tol; bad = 1 }
              if (bad) exit 1;
              printf "%d steps: %d ranks at batch B follow one process at batch %d*B: relative loss difference at most %.2e in the first 10 steps (tolerance %s), at most %.2e over all (step %d; tolerance %g), %.2e on average (tolerance %s); parameters bit-identical across ranks after every step\n", NR, np, np, worst10, tol10, worst, at, 10 * tol, sum / NR, tol }'
    ;;
overlap)
    b=$1 steps=$2
    shift 2
    for mode in on off; do
        "${launch[@]}" "$prog" --dist --dist-overlap "$mode" --check-sync --backend "$backend" --batch "$b" \
            --steps "$steps" --print-loss "$@" >"$tmp/$mode.out" 2>&1 ||
            { cat "$tmp/$mode.out"; echo "FAIL: the $np-rank run with --dist-overlap $mode failed"; exit 1; }
        grep -q "parameters bit-identical on all $np ranks after each of the $steps steps" "$tmp/$mode.out" ||
            { cat "$tmp/$mode.out"; echo "FAIL: no bit-identity line (--dist-overlap $mode)"; exit 1; }
        losses "$tmp/$mode.out" >"$tmp/$mode.loss"
    done
    [ "$(wc -l <"$tmp/on.loss")" = "$steps" ] || { cat "$tmp/on.out"; echo "FAIL: not $steps loss lines"; exit 1; }
    cmp -s "$tmp/on.loss" "$tmp/off.loss" ||
        { paste "$tmp/on.loss" "$tmp/off.loss" | head -20; echo "FAIL: the losses differ between --dist-overlap on and off"; exit 1; }
    early=$(sed -n 's/.*overlapped with backward: \([0-9]*\) of \([0-9]*\) buckets.*/\1 \2/p' "$tmp/on.out" | tail -1)
    [ -n "$early" ] || { cat "$tmp/on.out"; echo "FAIL: no overlap figures in the dist: line"; exit 1; }
    echo "$steps steps on $np ranks: the same losses with the reduction overlapped with backward and after it; buckets posted during backward (last report): ${early% *} of ${early#* }"
    ;;
failure)
    start=$(date +%s)
    timeout 120 "${launch[@]}" --tag-output "$prog" --dist --backend "$backend" --fail-step 3 --fail-rank 1 \
        --steps 10 --print-loss "$@" >"$tmp/out" 2>&1
    rc=$?
    secs=$(($(date +%s) - start))
    cat "$tmp/out"
    [ "$rc" != 124 ] || { echo "FAIL: the job hung (killed after 120 s)"; exit 1; }
    [ "$rc" != 0 ] || { echo "FAIL: the job succeeded although rank 1 failed"; exit 1; }
    grep -q '^\[1,1\]<stderr>:.*failure injected at step 3' "$tmp/out" ||
        { echo "FAIL: rank 1 did not report its failure"; exit 1; }
    for r in $(seq 0 $((np - 1))); do
        [ "$r" = 1 ] && continue
        grep -q "^\[1,$r\]<stderr>:.*rank 1 failed.*failure injected at step 3" "$tmp/out" ||
            { echo "FAIL: rank $r did not stop with rank 1's message"; exit 1; }
    done
    grep -q '^\[1,0\]<stdout>:step 2 loss' "$tmp/out" || { echo "FAIL: rank 0 did not train steps 1-2"; exit 1; }
    grep -q '^\[1,0\]<stdout>:step 3 loss' "$tmp/out" && { echo "FAIL: rank 0 finished step 3"; exit 1; }
    echo "every one of the $np ranks stopped with rank 1's message in ${secs} s (exit status $rc)"
    ;;
*)
    echo "unknown mode $mode"
    exit 2
    ;;
esac
