#!/usr/bin/env bash
# Installs what webtensor needs and the machine lacks. Idempotent: a second
# run on a ready machine does nothing but check.
#   - Debian packages: compiler, cmake, OpenBLAS, the Vulkan loader, Mesa's
#     lavapipe new enough for Dawn (from the distribution's backports suite),
#     EGL/GLES for the OpenGL ES path; zlib and Fashion-MNIST for the
#     training example, the fortune cookie files for the GPT example;
#     Open MPI for the distributed layer (libwebtensor_dist) and its tests.
#   - Dawn (libwebgpu_wrapper.so) from the pinned npm package, into
#     third_party/dawn/node_modules (git ignores it).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

# Dawn's Vulkan backend rejects Mesa older than this (lavapipe lacks
# shaderUniform*ArrayDynamicIndexing before it).
MESA_MIN=24.0

have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
pkg_version() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || true; }

# Add the backports suite of this Debian release, on the same mirror the
# machine already uses (read from its own apt sources, never hard-coded).
add_backports() {
    local codename uri file
    codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
    [ -n "$codename" ] || { echo "install-deps: cannot tell the Debian release" >&2; return 1; }
    if grep -rqsE "^[^#]*${codename}-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
        return 0
    fi
    uri=""
    # deb822 sources: the URIs line of the stanza whose Suites name the release.
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        uri=$(awk -v c="$codename" '
            /^[[:space:]]*$/ { if (u != "" && s) { print u; exit } u=""; s=0; next }
            /^URIs:/   { u=$2 }
            /^Suites:/ { for (i=2;i<=NF;i++) if ($i==c) s=1 }
            END { if (u != "" && s) print u }' "$f" | grep -v security | head -n1)
        [ -n "$uri" ] && break
    done
    # One-line sources.
    if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
        uri=$(awk -v c="$codename" '$1=="deb" && $3==c {print $2; exit}' /etc/apt/sources.list)
    fi
    [ -n "$uri" ] || { echo "install-deps: no Debian mirror found in the apt sources" >&2; return 1; }
    file=/etc/apt/sources.list.d/webtensor-backports.list
    echo "deb $uri ${codename}-backports main" | $SUDO tee "$file" >/dev/null
    echo "install-deps: added ${codename}-backports from the existing mirror"
}

mesa_ok() {
    local v
    v=$(pkg_version mesa-vulkan-drivers)
    [ -n "$v" ] || return 1
    dpkg --compare-versions "$v" ge "$MESA_MIN"
}

need=()
# zlib and dataset-fashion-mnist: the Fashion-MNIST training example (and
# its CI-sized run in the test suite); fortunes: the English text the GPT
# example trains on (its fortune cookie files). The python3-* packages: the Python
# package (python/) is installed and tested offline with the system's
# Python 3, its NumPy and pytest, and pip, setuptools, wheel and venv for
# `pip install --no-build-isolation ./python` in a virtual environment.
# libopenmpi-dev and openmpi-bin: MPI for data-parallel training
# (include/webtensor_dist.h) and mpirun for its tests.
for p in gcc g++ make cmake pkg-config libopenblas-dev libvulkan1 libegl1 libgles2 libegl-mesa0 \
         zlib1g-dev dataset-fashion-mnist fortunes python3 python3-numpy python3-pytest python3-pip \
         python3-setuptools python3-wheel python3-venv libopenmpi-dev openmpi-bin; do
    have_pkg "$p" || need+=("$p")
done
# --fuzz (make test-fuzz, make test-tsan): clang, its sanitizer and
# libFuzzer runtimes, and its OpenMP runtime (clang's -fopenmp links
# libomp, which clang itself only recommends), only then.
if [ "${1:-}" = --fuzz ]; then
    for p in clang libclang-rt-dev libomp-dev; do
        have_pkg "$p" || need+=("$p")
    done
fi
# --wasm (make wasm, make test-wasm): Emscripten and Chromium from Debian,
# Node and npm where missing (any Node >= 18 already there is kept).
if [ "${1:-}" = --wasm ]; then
    for p in emscripten chromium; do
        have_pkg "$p" || need+=("$p")
    done
    command -v node >/dev/null || need+=(nodejs)
    command -v npm >/dev/null || need+=(npm)
fi
if [ ${#need[@]} -gt 0 ] || ! mesa_ok; then
    export DEBIAN_FRONTEND=noninteractive
    if ! mesa_ok; then add_backports; fi
    $SUDO apt-get update -q
    if [ ${#need[@]} -gt 0 ]; then
        $SUDO apt-get install -y -q --no-install-recommends "${need[@]}"
    fi
    if ! mesa_ok; then
        codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
        $SUDO apt-get install -y -q --no-install-recommends -t "${codename}-backports" mesa-vulkan-drivers
    fi
fi
mesa_ok || { echo "install-deps: mesa-vulkan-drivers >= $MESA_MIN is required" >&2; exit 1; }

# Dawn, pinned by the lock file (version and integrity hash).
dawn="$here/third_party/dawn"
so="$dawn/node_modules/bun-webgpu-linux-x64/libwebgpu_wrapper.so"
if [ ! -f "$so" ]; then
    command -v npm >/dev/null || { $SUDO apt-get install -y -q --no-install-recommends npm; }
    (cd "$dawn" && npm ci --no-audit --no-fund --ignore-scripts)
fi
[ -f "$so" ] || { echo "install-deps: Dawn library missing after npm ci: $so" >&2; exit 1; }
# The independent GGUF reader of the cross-check test (gguf_js_crosscheck),
# pinned by tests/gguf_js/package-lock.json.
gguf_js="$here/tests/gguf_js"
if [ ! -d "$gguf_js/node_modules/@huggingface/gguf" ] ||
   [ "$gguf_js/package-lock.json" -nt "$gguf_js/node_modules/.package-lock.json" ]; then
    (cd "$gguf_js" && npm ci --no-audit --no-fund --ignore-scripts)
fi
# The tokenizers the library's are checked against (tokenizer_js_crosscheck):
# Llama 2's and Llama 3's vocabularies inside two npm packages, pinned by
# tests/tokenizer_js/package-lock.json.
tokenizer_js="$here/tests/tokenizer_js"
if [ ! -d "$tokenizer_js/node_modules/llama3-tokenizer-js" ] || [ ! -d "$tokenizer_js/node_modules/llama-tokenizer-js" ] ||
   [ "$tokenizer_js/package-lock.json" -nt "$tokenizer_js/node_modules/.package-lock.json" ]; then
    (cd "$tokenizer_js" && npm ci --no-audit --no-fund --ignore-scripts)
fi
echo "install-deps: ready (mesa $(pkg_version mesa-vulkan-drivers), dawn $so)"

# --- WebAssembly: the npm packages of the wasm test runs, pinned by
# tests/web/package-lock.json: Dawn for Node (webgpu) and puppeteer-core.
if [ "${1:-}" = --wasm ]; then
    web="$here/tests/web"
    if [ ! -d "$web/node_modules/webgpu" ] || [ ! -d "$web/node_modules/puppeteer-core" ] ||
       [ "$web/package-lock.json" -nt "$web/node_modules/.package-lock.json" ]; then
        (cd "$web" && npm ci --no-audit --no-fund --ignore-scripts)
    fi
    echo "install-deps: wasm ready ($(emcc --version 2>/dev/null | sed -n 1p), node $(node --version))"
fi
