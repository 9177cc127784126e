#!/usr/bin/env bash
# Benchmarks webtensor's CPU backend against NumPy on this machine, in one
# run (ratios between two runs on a shared machine mean little). Builds
# nothing.
#
#   bench/run_cpu.sh [BUILD_DIR] [SIZE]     (defaults: build, default)
#
# BUILD_DIR may be relative to the repository root. SIZE is quick or
# default. Needs BUILD_DIR/tools/webtensor and a python3 with NumPy; when no
# python3 has it, Debian's python3-numpy is installed with apt-get (root
# only). Environment:
#   OUT_DIR      where the CSV files and logs go (default: BUILD_DIR/bench-out-cpu-DATE)
#   BENCH_ARGS   extra arguments for both benchmarks (e.g. "--filter matmul")
#   WT_ARGS      extra arguments for webtensor's only (e.g. "--threads 1")
set -u

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
case $build in /*) ;; *) build=$root/$build ;; esac
size=${2:-default}
cli=$build/tools/webtensor
out=${OUT_DIR:-$build/bench-out-cpu-$(date +%Y%m%d-%H%M%S)}

if [ ! -x "$cli" ]; then
  echo "run_cpu.sh: no $cli; build first (cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j)" >&2
  exit 1
fi
case $size in quick|default) ;; *) echo "run_cpu.sh: SIZE is quick or default, not $size" >&2; exit 2 ;; esac
mkdir -p "$out" || exit 1

# The first python3 that has NumPy: the one on PATH (may be a private
# install without it), then the system's.
find_python() {
  for py in python3 /usr/bin/python3; do
    if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import numpy' >/dev/null 2>&1; then
      echo "$py"
      return 0
    fi
  done
  return 1
}
if ! python=$(find_python); then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "== installing python3-numpy (apt-get)"
    apt-get install -y python3-numpy >"$out/apt.log" 2>&1 ||
      { apt-get update >>"$out/apt.log" 2>&1 && apt-get install -y python3-numpy >>"$out/apt.log" 2>&1; }
  fi
  python=$(find_python) || {
    echo "run_cpu.sh: no python3 with NumPy (as root: apt-get install python3-numpy)" >&2
    exit 1
  }
fi

status=0
echo "== webtensor bench --backend cpu --size $size"
# shellcheck disable=SC2086  # BENCH_ARGS is a list of words on purpose
"$cli" bench --backend cpu --size "$size" --csv "$out/webtensor.csv" ${BENCH_ARGS:-} ${WT_ARGS:-} |
  tee "$out/bench.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

echo
echo "== NumPy peer (bench/numpy_peer.py --size $size, $python)"
# shellcheck disable=SC2086
"$python" "$root/bench/numpy_peer.py" --size "$size" --csv "$out/numpy.csv" ${BENCH_ARGS:-} ||
  status=1

echo
echo "== webtensor cpu vs NumPy"
if [ -s "$out/webtensor.csv" ] && [ -s "$out/numpy.csv" ]; then
  "$python" "$root/bench/compare.py" "$out/webtensor.csv" "$out/numpy.csv" --backend cpu |
    tee "$out/compare.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
else
  echo "nothing to compare: a benchmark wrote no CSV (see above)"
  status=1
fi
echo "(files in $out)"
exit $status
