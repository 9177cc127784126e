#!/bin/sh
# The cross-check run by ctest: the C writer makes the sample file, the
# npm package @huggingface/gguf reads it (check.mjs).
#   run.sh MODEL_FILES_GGUF_BINARY OUT.gguf      (WT_NODE: node, else from PATH)
set -e
here=$(cd "$(dirname "$0")" && pwd)
node=${WT_NODE:-node}
case "$node" in *NOTFOUND*|"") node=node ;; esac
command -v "$node" >/dev/null || { echo "gguf_js: node not found" >&2; exit 1; }
[ -d "$here/node_modules/@huggingface/gguf" ] ||
  { echo "gguf_js: @huggingface/gguf missing: run scripts/install-deps.sh (npm ci in tests/gguf_js)" >&2; exit 1; }
"$1" --sample "$2"
"$node" "$here/check.mjs" "$2"
