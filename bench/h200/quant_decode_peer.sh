#!/bin/bash
# Issue 19, one call: the 852M Llama of llama_ref.py (f16) as Q4_0, Q8_0
# and f16 GGUF files from llama_to_gguf; webtensor's captured decode of
# each (main with the slot kernel and the fused quantised linear merged)
# and llama.cpp's Vulkan backend (@fugood/llama.node) on the same files.
# The folder holds the Release llama, llama_to_gguf and libwebtensor.so.0,
# llama_ref.py, llama_node_peer.js and peer/ (as quant_slots_decode.sh).
set -u
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/quant_decode_peer}; mkdir -p $O
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
export LD_LIBRARY_PATH=$D:${LD_LIBRARY_PATH:-}
M=/tmp/m852; python3 $D/llama_ref.py make --size large --dtype f16 --out $M --seed 0 2>&1 | tail -1; echo "made ($(el) s)"
for k in q4_0 q8_0 f16; do timeout 60 $D/llama_to_gguf $M /tmp/m_$k.gguf $k | tail -1; done; ls -la /tmp/m_*.gguf; echo "gguf ($(el) s)"
mkdir -p /tmp/p/node_modules/@fugood/node-llama-linux-x64-vulkan; tar -C /tmp/p/node_modules/@fugood -xf $D/peer/llama_node_lib.tar
xz -dc $D/peer/vk.node.xz > /tmp/p/node_modules/@fugood/node-llama-linux-x64-vulkan/index.node; cp $D/peer/vk.package.json /tmp/p/node_modules/@fugood/node-llama-linux-x64-vulkan/package.json
xz -dc $D/peer/node.xz > /tmp/node; chmod +x /tmp/node
# (The f16 file runs at the example's default dtype, f32 weights on the
# device: add --dtype f16 for an f16 row.)
for k in q4_0 q8_0 f16; do
  for r in 1 2; do timeout 40 $D/llama --model /tmp/m_$k.gguf --backend webgpu --tokens 128 --decode graph > $O/wt_${k}_$r.log 2>&1; echo "webtensor $k run $r rc=$? $(grep -E '^decode \(' $O/wt_${k}_$r.log) ($(el) s)"; done
  timeout 60 /tmp/node $D/llama_node_peer.js /tmp/p/node_modules/@fugood/llama.node /tmp/m_$k.gguf > $O/peer_$k.log 2>&1; echo "peer $k rc=$? ($(el) s)"; grep "^peer" $O/peer_$k.log
done
echo "total $(el) s"
