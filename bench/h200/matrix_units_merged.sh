#!/bin/bash
# Merged main on the matrix units (the wasm build in Node on Dawn's addon):
# f16 matmul / conv2d / attention against PyTorch in the same call, the
# float64 checks of the default kernels; then the compiled CUDA-graph
# decode peer for the native decode call.
# Run from a folder holding node.xz (a Node 20 binary), dawn.node.xz (the
# `webgpu` package's addon), dawn_node_preload.cjs, wasm/ (webtensor.js +
# .wasm of the wasm build), web/ (the JavaScript API's files),
# matrix_units_node.mjs, torch_peer.py, peer_plans.py and
# torch_decode_graph.py.
D=$(cd "$(dirname "$0")" && pwd); cd $D
mkdir -p /tmp/nb; xz -T4 -dc node.xz > /tmp/nb/node & xz -T4 -dc dawn.node.xz > /tmp/dawn.node & wait
chmod +x /tmp/nb/node; export PATH=/tmp/nb:$PATH WT_DAWN_NODE=/tmp/dawn.node
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; node --version
export WT_DAWN_FLAGS='enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia'
FL=matmul_f16,bmm_f16,matmul_nt_f16,conv2d_f16,attention_f16
B() { timeout 90 node -r ./dawn_node_preload.cjs wasm/webtensor.js bench --size large --backend webgpu --subgroup-matrix --filter $FL "$@" 2>&1 | grep -v "^Warning" ; }
echo "== torch"; timeout 90 python3 torch_peer.py --size large --filter $FL 2>&1 | grep -v "^case" | cut -d, -f1-8
echo "== webtensor, matrix units (defaults)"; B | grep -E "_f16 |rror" | cut -c1-160
echo "== webtensor again"; B | grep -E "_f16 |rror" | cut -c1-160
echo "== torch again"; timeout 90 python3 torch_peer.py --size large --filter $FL 2>&1 | grep -v "^case" | cut -d, -f1-8
echo "== check float64 (the products)"
timeout 150 node matrix_units_node.mjs web 64 > $OUT/check.txt 2>&1; echo "rc $?"
grep -v "^Warning" $OUT/check.txt | grep -E "^(ok|FAIL|matrix units|conv2d|attention|Error)|rror|ran there|declined" | sed 's/ (.*; at/ at/' | cut -c1-150 | tail -40
for m in attn conv; do echo "== check float64 ($m)"; timeout 120 node matrix_units_node.mjs web 64 $m > $OUT/check_$m.txt 2>&1; echo "rc $?"
  grep -v "^Warning" $OUT/check_$m.txt | grep -E "^(ok|FAIL|matrix units)|rror|declined" | cut -c1-140; done
echo "== profile"; B --profile > $OUT/profile.txt 2>&1; grep -E "^  [a-z]" $OUT/profile.txt | head -8 | cut -c1-150
echo "== torch.compile + CUDA graph decode peer"; timeout 240 python3 torch_decode_graph.py --compile > $OUT/torch_decode.txt 2>&1; echo "rc $?"; grep -iE "tok/s" $OUT/torch_decode.txt | tail -6
date -u
