# Sourced by the quantised-decode scripts of one call (quant_q6_k_slots.sh,
# quant_q4_k_scales.sh, quant_x8_halves.sh, quant_decode_all.sh,
# quant_q6_k_x8.sh) after setting NAME: the folder, the logs' folder
# /tmp/NAME_out (O), the repository (R), elapsed seconds (el), a build's
# library path (lib new|base|mid), the 852M Llama's GGUF files made in the
# background (make_models KIND...; wait "$MK"), llama.cpp's peer on them
# (peer KIND...) and the logs packed as one file (pack_logs).
set -u
D=$(cd "$(dirname "$0")" && pwd); O=/tmp/${NAME}_out; mkdir -p "$O"
R=${REPO:-$(pwd)}
cd "$D"; chmod +x new/*
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; date -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
lib() { echo "$D/$1:${LD_LIBRARY_PATH:-}"; }
M=/tmp/m852
make_models() {
  (python3 "$R"/bench/llama_ref.py make --size large --dtype f16 --out $M --seed 0 > $O/make.log 2>&1
   for k in "$@"; do LD_LIBRARY_PATH=$(lib new) timeout 300 new/llama_to_gguf $M /tmp/m_$k.gguf $k > $O/gguf_$k.log 2>&1 || echo "gguf $k failed"; done
   echo "models done ($(el) s)") &
  MK=$!
}
peer() {
  local p=/tmp/p/node_modules/@fugood
  mkdir -p $p/node-llama-linux-x64-vulkan; tar -C $p -xf peer/llama_node_lib.tar
  xz -dc peer/vk.node.xz > $p/node-llama-linux-x64-vulkan/index.node; cp peer/vk.package.json $p/node-llama-linux-x64-vulkan/package.json
  xz -dc peer/node.xz > /tmp/node; chmod +x /tmp/node
  for k in "$@"; do timeout 60 /tmp/node "$R"/bench/h200/llama_node_peer.js $p/llama.node /tmp/m_$k.gguf > $O/peer_$k.log 2>&1; echo "peer $k rc=$?"; done
}
pack_logs() { tar -C $O -czf ${OUT:-/tmp}/${NAME}_logs.tar.gz .; }
