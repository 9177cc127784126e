#!/bin/sh
# The tokenizer cross-check run by ctest (check.mjs):
#   run.sh TOKENIZER_CHECK_BINARY WORK_DIR SOURCE_DIR     (WT_NODE: node, else from PATH)
set -e
here=$(cd "$(dirname "$0")" && pwd)
node=${WT_NODE:-node}
case "$node" in *NOTFOUND*|"") node=node ;; esac
command -v "$node" >/dev/null || { echo "tokenizer_js: node not found" >&2; exit 1; }
for p in llama-tokenizer-js llama3-tokenizer-js; do
  [ -d "$here/node_modules/$p" ] ||
    { echo "tokenizer_js: $p missing: run scripts/install-deps.sh (npm ci in tests/tokenizer_js)" >&2; exit 1; }
done
mkdir -p "$2"
"$node" "$here/check.mjs" "$1" "$2" "$3"
