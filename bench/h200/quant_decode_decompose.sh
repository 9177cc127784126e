#!/bin/bash
# Where a Q4_0 decode step's product time goes. The 8-bit-x GEMV built
# several ways, each as its own libwebtensor.so in the folder (v0.so: as
# main; the others from the kernels x8_variants.py writes: nox.so x not
# rounded, now.so weights not loaded, both.so neither, nored.so neither
# and no sums tree, empty.so nothing); VARIANTS names those to run (default
# "v0 nox now both"; the second call ran "v0 both nored empty"). The 852M
# Llama's Q4_0 decode with each (three rounds, alternating), with the
# attention or the products left out of the replayed step
# (WT_GRAPH_REPLAY_SKIP), and gemv_q4_0 with each (two rounds).
# The folder: new/ (the Release llama, webtensor, llama_to_gguf and a
# libwebtensor.so.0) and the variants' .so files; REPO names the
# repository; WT_WEBGPU_LIB names Dawn's library; SKIP_G=1 leaves the
# GEMV bench out. The logs come back as ${OUT:-/tmp}/dec_logs.tar.gz.
NAME=dec
source "$(dirname "$0")"/quant_call.sh
V=${VARIANTS:-v0 nox now both}
for v in $V; do mkdir -p $D/$v; cp $D/$v.so $D/$v/libwebtensor.so.0; done
make_models q4_0
B=(bench --size large --backend webgpu --no-check --filter gemv_q4_0)
g() { local name=$1 l=$2; shift 2; timeout 90 env LD_LIBRARY_PATH=$(lib $l) "$@" new/webtensor "${B[@]}" > $O/g_$name.log 2>&1; echo "g_$name rc=$? ($(el) s)"; }
[ -n "${SKIP_G:-}" ] || for r in 1 2; do for v in $V; do g ${v}_$r $v; done; done
wait $MK
dec() { local name=$1 l=$2; shift 2; timeout 60 env LD_LIBRARY_PATH=$(lib $l) "$@" new/llama --model /tmp/m_q4_0.gguf --backend webgpu --tokens 128 --decode graph > $O/d_$name.log 2>&1; echo "d_$name rc=$? $(grep -E '^decode \(' $O/d_$name.log | head -1 | grep -o '[0-9.]* tokens/s')"; }
dec warm v0
for r in 1 2 3; do for v in $V; do dec ${v}_$r $v; done; done
for r in 1 2; do
  dec v0_noattn_$r v0 WT_GRAPH_REPLAY_SKIP=rope_kv_attention
  dec both_noattn_$r both WT_GRAPH_REPLAY_SKIP=rope_kv_attention
  dec v0_noprod_$r v0 WT_GRAPH_REPLAY_SKIP=quant_gemv_x8_fused
  dec v0_none_$r v0 WT_GRAPH_REPLAY_SKIP=quant_gemv_x8_fused,rope_kv_attention
done
echo "total $(el) s"
[ -n "${SKIP_G:-}" ] || for f in $O/g_*_1.log; do echo "== $(basename $f _1.log)"; paste <(grep -E '^gemv_q4_0' $f | awk '{print $2, $4}') <(grep -E '^gemv_q4_0' ${f%_1.log}_2.log | awk '{print $4}'); done
pack_logs
