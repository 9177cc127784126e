#!/usr/bin/env bash
# Benchmarks webtensor's WebGPU backend against PyTorch on a GPU machine, in
# one run (ratios between two runs on a shared machine mean little).
#
#   bench/run_h200.sh [BUILD_DIR]        (default: build)
#
# Needs: the build (BUILD_DIR/tools/webtensor and its libwebtensor.so), the
# Dawn library (the build's default path, or WT_WEBGPU_LIB), a Vulkan loader,
# python3 with torch. Environment:
#   WT_WEBGPU_LIB   the WebGPU library to load, if not the build's default
#   WT_DEBS_DIR     a folder of .deb files to unpack into / first, for a machine
#                   without a Vulkan loader (root only): libvulkan1 and
#                   libglvnd0 (NVIDIA's Vulkan driver needs its libGLdispatch);
#                   libegl1 and libgles2 add the OpenGL ES path
#   OUT_DIR         where the CSV files and logs go (default: bench-out-DATE)
#   BENCH_ARGS      extra arguments for both benchmarks (e.g. "--filter matmul")
set -u

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
cli=$build/tools/webtensor
out=${OUT_DIR:-$root/bench-out-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out" || exit 1

if [ ! -x "$cli" ]; then
  echo "run_h200.sh: no $cli; build first (cmake -S . -B build && cmake --build build -j)" >&2
  exit 1
fi

# A bare GPU machine may lack the Vulkan loader: unpack the packages brought along.
if [ -n "${WT_DEBS_DIR:-}" ]; then
  for deb in "$WT_DEBS_DIR"/*.deb; do
    echo "unpacking $deb"
    dpkg -x "$deb" / || exit 1
  done
  ldconfig
fi
# NVIDIA's container images keep the Vulkan ICD file outside the loader's search path.
nvidia_icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f "$nvidia_icd" ]; then
  export VK_DRIVER_FILES=$nvidia_icd
fi

status=0
echo "== webtensor info"
"$cli" info | tee "$out/info.txt" || status=1

echo
echo "== webtensor bench --size large --backend webgpu"
# shellcheck disable=SC2086  # BENCH_ARGS is a list of words on purpose
"$cli" bench --size large --backend webgpu --csv "$out/webtensor.csv" \
  --json "$out/webtensor.json" ${BENCH_ARGS:-} | tee "$out/bench.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

echo
echo "== PyTorch peer (bench/torch_peer.py --size large)"
# shellcheck disable=SC2086
python3 "$root/bench/torch_peer.py" --size large --csv "$out/peer.csv" ${BENCH_ARGS:-} || status=1
cat "$out/peer.csv"

echo
echo "== webtensor vs PyTorch"
if [ -s "$out/webtensor.csv" ] && [ -s "$out/peer.csv" ]; then
  python3 "$root/bench/compare.py" "$out/webtensor.csv" "$out/peer.csv" | tee "$out/compare.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
else
  echo "nothing to compare: a benchmark wrote no CSV (see above)"
  status=1
fi
echo "(files in $out)"
exit $status
