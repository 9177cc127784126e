#!/usr/bin/env bash
# Issue 17, f32 GEMM: the GPT step's products (bench_gpt_gemm) of main's
# library (base/) and this branch's (new/). `sweep`: the weight gradients
# (dy^T @ x, k 16384) under forced tiles and k splits, the interior
# kernel's variants, the forward and input-gradient products under other
# tiles and kernels; one process a setting. `final`: the products of both
# libraries with their own choices (new also with WT_GEMM_SPLITK_CHUNK=0,
# the fill alone), the weight gradients under more forced k splits, the
# `webtensor bench` matmul/bmm/matmul_nt rows, train_gpt 40 steps
# base/new/knob/base/new and PyTorch eager. The folder holds base/ and
# new/ (each: libwebtensor.so.0, libwebtensor_dist.so.0, train_gpt,
# bench_gpt_gemm; new/ also webtensor), dawn.xz (Dawn's
# libwebgpu_wrapper.so, xz), debs/ (Open MPI, which train_gpt links),
# fortunes/, gpt_torch.py; the folder two levels up holds .gl/ (the Vulkan
# loader's packages), used where the machine has no loader.
# Usage: bash FOLDER/gpt_gemm_split_tiles.sh [sweep|final]
set -u
MODE=${1:-sweep}
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/gemm-out}; mkdir -p "$O"
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$(cd "$D/../.." && pwd)
if ! ldconfig -p | grep -q "libvulkan.so.1 "; then for f in "$R"/.gl/*.deb; do dpkg -x "$f" /; done; ldconfig; fi
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
xz -dc "$D"/dawn.xz > /tmp/libwebgpu_wrapper.so; export WT_WEBGPU_LIB=/tmp/libwebgpu_wrapper.so
source "$D"/open_mpi_libs.sh
chmod +x "$D"/base/* "$D"/new/*
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
# One line a run: the us of each product the run timed, in bench_gpt_gemm's order.
gg() { local name=${1//\//-} lib=$2 only=$3; shift 3
  env "$@" LD_LIBRARY_PATH=$D/$lib timeout 60 "$D"/$lib/bench_gpt_gemm --reps 20 $only > "$O/gg_$name.log" 2>&1
  printf "%-30s %s\n" "$name" "$(grep -E 'TFLOP' "$O/gg_$name.log" | awk '{printf " %8s", $(NF-3)}')"; }
if [ "$MODE" = sweep ]; then
  echo "dw runs: dw384 dw1536m dw1536n (us)"
  gg base base "--only dw"
  gg new new "--only dw"
  for k in interior-warp84 interior-noahead interior-nostage; do gg "$k" new "--only dw" WT_GEMM_KERNEL=$k; done
  for t in 128x128x8/8x8 64x128x8/8x8 128x64x8/8x8 128x128x16/8x8; do
    for s in 8 16 24 32 48 64; do gg "${t}_s$s" new "--only dw" WT_GEMM_TILE=$t WT_GEMM_SPLITK=$s; done
  done
  for s in 16 48 64; do gg "128x64x16/8x4_s$s" new "--only dw" WT_GEMM_TILE=128x64x16/8x4 WT_GEMM_SPLITK=$s; done
  gg new_again new "--only dw"
  echo "sweep dw done ($(el) s)"
  echo "fwd/dx runs: fwd384 fwd1536o fwd1536i dx384 dx1536o dx1536i (us)"
  gg base_fd base "--only fwd"; gg base_dx base "--only dx"
  for t in 128x64x8/8x8 64x128x8/8x8 128x128x8/8x8; do
    for k in general interior interior-warp84; do
      gg "fwd_${t}_$k" new "--only fwd" WT_GEMM_TILE=$t WT_GEMM_KERNEL=$k; gg "dx_${t}_$k" new "--only dx" WT_GEMM_TILE=$t WT_GEMM_KERNEL=$k
    done
  done
  for s in 2 3; do gg "fwd_128x128x8/8x8_s$s" new "--only fwd" WT_GEMM_TILE=128x128x8/8x8 WT_GEMM_SPLITK=$s; done
  echo "sweep done ($(el) s)"
  exit 0
fi
echo "products: fwd384 fwd1536o fwd1536i dx384 dx1536o dx1536i dw384 dw1536m dw1536n (us)"
gg base base ""
gg new new ""
gg new_fill_alone new "" WT_GEMM_SPLITK_CHUNK=0
gg base_2 base ""
gg new_2 new ""
echo "weight gradients, 128x64x16/8x4 forced, k splits: dw384 dw1536m dw1536n (us)"
for s in 12 14 20 24 32; do gg "dw_s$s" new "--only dw" WT_GEMM_TILE=128x64x16/8x4 WT_GEMM_SPLITK=$s; done
echo "== webtensor bench, matmul/bmm/linear rows (base, new)"
for lib in base new; do
  LD_LIBRARY_PATH=$D/$lib timeout 90 "$D"/new/webtensor bench --size large --backend webgpu --reps 5 \
    --no-check --filter matmul,bmm,matmul_nt > "$O/wb_$lib.log" 2>&1
  echo "-- $lib"; grep -E "^ *(matmul|bmm)" "$O/wb_$lib.log"
done
echo "bench done ($(el) s)"
F=$D/fortunes
G=(--backend webgpu --data "$F" --steps 40 --print-every 10 --eval-every 0 --eval-batches 2 --sample 0 --print-loss)
tg() { local name=$1 lib=$2; shift 2
  env "$@" LD_LIBRARY_PATH=$D/$lib:$MPILIB timeout 120 "$D"/$lib/train_gpt "${G[@]}" > "$O/tg_$name.log" 2>&1
  echo "$name rc=$? | $(grep -E '^step +40/' "$O/tg_$name.log") | $(grep -E '^step (1|40) loss' "$O/tg_$name.log" | tr '\n' ' ') | $(grep -iE 'validation' "$O/tg_$name.log" | tail -n 1) ($(el) s)"; }
tg base base
tg new new
tg new_fill_alone new WT_GEMM_SPLITK_CHUNK=0
tg base_2 base
tg new_2 new
timeout 150 python3 "$D"/gpt_torch.py --data "$F" --steps 30 > "$O/torch.log" 2>&1; tail -n 2 "$O/torch.log"
echo "done ($(el) s)"
