#!/bin/bash
# The default GPT (6 layers, dim 384, batch 64, 500 steps) on the CPU
# backend of the GPU machine's host, as long as one call allows (555 s),
# progress every 25 steps into $OUT/cpu_gpt.log. The folder: train_gpt,
# libwebtensor*.so.0, open_mpi_libs.sh, debs/, fortunes/; Debian's
# OpenBLAS packages (libopenblas0-pthread, libgfortran5, libquadmath0,
# libgomp1) downloaded into .bench/blasdeb at the repository's root. OpenBLAS does not know that
# host's CPU model and falls back to its oldest x86-64 kernels unless
# OPENBLAS_CORETYPE names one (the library says so on stderr).
export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-SkylakeX}
set -u
D=$(cd "$(dirname "$0")" && pwd); cd $D
source "$D"/open_mpi_libs.sh
mkdir -p /tmp/blas; for f in $D/../../.bench/blasdeb/*.deb; do [ -e "$f" ] && dpkg -x $f /tmp/blas; done
export LD_LIBRARY_PATH=$D:/tmp/blas/usr/lib/x86_64-linux-gnu/openblas-pthread:/tmp/blas/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}:$MPILIB
nproc; lscpu | grep -E "Model name|^CPU\(s\)"; date -u
T0=$(date +%s); timeout 555 stdbuf -oL -eL ./train_gpt --backend cpu --data $D/fortunes --steps 500 --print-every 25 > $OUT/cpu_gpt.log 2>&1; echo "rc=$? wall $(( $(date +%s) - T0 )) s"; tail -45 $OUT/cpu_gpt.log
