#!/usr/bin/env bash
# Issue 17, f32 GEMM: the GPT step's products (bench_gpt_gemm) with main's
# library (base/) and this branch's (new/: gemm_interior.wgsl) under knob
# variants and forced tiles; then train_gpt 40 steps base/new/base/new and
# PyTorch eager. The folder holds base/ and new/ (each: libwebtensor.so.0,
# libwebtensor_dist.so.0, train_gpt, bench_gpt_gemm), dawn.xz (Dawn's
# libwebgpu_wrapper.so, xz), debs/ (Open MPI), fortunes/, gpt_torch.py; the
# folder two levels up holds .gl/ (the Vulkan loader's packages), used
# where the machine has no loader. Usage: bash FOLDER/run.sh [sweep|final]
set -u
MODE=${1:-sweep}
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/gemm-out}; mkdir -p "$O"
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
# The Vulkan loader where the machine has none: the packages in .gl/ two levels up.
R=$(cd "$D/../.." && pwd)
if ! ldconfig -p | grep -q "libvulkan.so.1 "; then for f in "$R"/.gl/*.deb; do dpkg -x "$f" /; done; ldconfig; fi
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
xz -dc "$D"/dawn.xz > /tmp/libwebgpu_wrapper.so; export WT_WEBGPU_LIB=/tmp/libwebgpu_wrapper.so
source "$D"/open_mpi_libs.sh
chmod +x "$D"/base/* "$D"/new/*
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
# One line per run: the nine products' us (fwd 384, 1536 out, 1536 in; dx the same; dw 384x384, 1536x384, 384x1536).
gg() { local name=$1 lib=$2; shift 2
  env "$@" LD_LIBRARY_PATH=$D/$lib timeout 60 "$D"/$lib/bench_gpt_gemm --reps 20 > "$O/gg_$name.log" 2>&1
  printf "%-34s %s\n" "$name" "$(grep -E 'TFLOP' "$O/gg_$name.log" | awk '{printf " %8s", $(NF-3)}')"; }
echo "run                                fwd384  fwd1536o fwd1536i  dx384 dx1536o dx1536i  dw384  dw1536m dw1536n"
gg base base
gg new new
if [ "$MODE" = sweep ]; then
  gg new_general new WT_GEMM_KERNEL=general
  for k in interior-nopad interior-noahead interior-nostage interior-noahead-nostage; do gg "new_$k" new WT_GEMM_KERNEL=$k; done
  for t in 128x128x8/8x8 64x128x8/8x8 128x64x8/8x8 128x128x16/8x8 64x128x16/8x8 128x64x16/8x8; do
    gg "new_$t" new WT_GEMM_TILE=$t
    gg "new_${t}_s8" new WT_GEMM_TILE=$t WT_GEMM_SPLITK=8
  done
  for s in 4 16; do gg "new_128x64x8/8x8_s$s" new WT_GEMM_TILE=128x64x8/8x8 WT_GEMM_SPLITK=$s; done
  gg "new_noahead_128x64x16/8x8" new WT_GEMM_KERNEL=interior-noahead WT_GEMM_TILE=128x64x16/8x8
  gg "new_noahead_128x128x16/8x8" new WT_GEMM_KERNEL=interior-noahead WT_GEMM_TILE=128x128x16/8x8
  gg new_warp84 new WT_GEMM_KERNEL=interior-warp84
  for t in 128x128x8/8x8 64x128x8/8x8 128x128x16/8x8; do gg "new_warp84_$t" new WT_GEMM_KERNEL=interior-warp84 WT_GEMM_TILE=$t; gg "new_warp84_${t}_s8" new WT_GEMM_KERNEL=interior-warp84 WT_GEMM_TILE=$t WT_GEMM_SPLITK=8; done
  gg base_again base
fi
echo "bench done ($(el) s)"
F=$D/fortunes
G=(--backend webgpu --data "$F" --steps 40 --print-every 10 --eval-every 0 --eval-batches 2 --sample 0 --print-loss)
tg() { local name=$1 lib=$2; shift 2
  env "$@" LD_LIBRARY_PATH=$D/$lib:$MPILIB timeout 120 "$D"/$lib/train_gpt "${G[@]}" > "$O/tg_$name.log" 2>&1
  echo "$name rc=$? | $(grep -E '^step +40/' "$O/tg_$name.log") | $(grep -E '^step (1|2|3|40) loss' "$O/tg_$name.log" | tr '\n' ' ') | $(grep -iE 'validation' "$O/tg_$name.log" | tail -n 1) ($(el) s)"; }
tg base base
tg new new
tg base2 base
tg new2 new
if [ "$MODE" = sweep ]; then tg new_general new WT_GEMM_KERNEL=general; tg new_warp84 new WT_GEMM_KERNEL=interior-warp84; tg new_noahead new WT_GEMM_KERNEL=interior-noahead; fi
echo "== PyTorch eager"; timeout 150 python3 "$D"/gpt_torch.py --data "$F" --steps 30 > "$O/torch.log" 2>&1; tail -n 4 "$O/torch.log"
echo "total $(el) s"
