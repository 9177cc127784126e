#!/bin/bash
# The 8-bit-x GEMV's f16 block scales by unpack2x16float (one conversion)
# instead of f16_bits' branchless integer routine, where the device's f16
# probe finds the conversion exact: hw.so is a build with that change (the
# kernel taking the f16_hw library, which gained half_to_f32, through
# wg_f16_hw_exact; not kept, bench/RESULTS.md), v0.so main's. The probe's
# verdict on the GPU (probe_check, built from f16_probe_check.c: one f16 add with
# WT_F16_ARITH=0, then wt_context_get_info's features), the quant suite
# with hw.so, gemv_q4_0 / q4_k / q8_0 with each (two rounds) and the 852M
# Llama's Q4_0, Q4_K_M and Q8_0 decodes with each (three rounds,
# alternating). The folder: new/ (llama, webtensor, llama_to_gguf, quant,
# probe_check and a libwebtensor.so.0), v0.so, hw.so; REPO and
# WT_WEBGPU_LIB as quant_decode_decompose.sh.
NAME=hw
source "$(dirname "$0")"/quant_call.sh
for v in v0 hw; do mkdir -p $D/$v; cp $D/$v.so $D/$v/libwebtensor.so.0; done
make_models q4_0 q4_k_m q8_0
LD_LIBRARY_PATH=$(lib hw) WT_F16_ARITH=0 new/probe_check > $O/probe.log 2>&1; echo "probe rc=$? $(grep -o 'f16 kernels: [^;]*' $O/probe.log)"
timeout 200 env LD_LIBRARY_PATH=$(lib hw) new/quant webgpu > $O/quant.log 2>&1; echo "quant hw rc=$? $(tail -1 $O/quant.log) ($(el) s)"
B=(bench --size large --backend webgpu --no-check --filter gemv_q4_0,gemv_q4_k,gemv_q8_0)
g() { local name=$1 l=$2; shift 2; timeout 90 env LD_LIBRARY_PATH=$(lib $l) "$@" new/webtensor "${B[@]}" > $O/g_$name.log 2>&1; echo "g_$name rc=$? ($(el) s)"; }
for r in 1 2; do for v in v0 hw; do g ${v}_$r $v; done; done
wait $MK
dec() { local name=$1 l=$2 k=$3; shift 3; timeout 60 env LD_LIBRARY_PATH=$(lib $l) "$@" new/llama --model /tmp/m_$k.gguf --backend webgpu --tokens 128 --decode graph > $O/d_$name.log 2>&1; echo "d_$name rc=$? $(grep -E '^decode \(' $O/d_$name.log | head -1 | grep -o '[0-9.]* tokens/s')"; }
dec warm v0 q4_0
for r in 1 2 3; do for k in q4_0 q4_k_m q8_0; do for v in v0 hw; do dec ${k}_${v}_$r $v $k; done; done; done
echo "total $(el) s"
for f in $O/g_*_1.log; do echo "== $(basename $f _1.log)"; paste <(grep -E '^gemv_q' $f | awk '{print $1, $2, $4}') <(grep -E '^gemv_q' ${f%_1.log}_2.log | awk '{print $4}'); done
for k in q4_0 q4_k_m q8_0; do for v in v0 hw; do echo "$k $v: $(grep -h -o '^tokens: .\{60\}' $O/d_${k}_${v}_1.log)"; done; done
pack_logs
