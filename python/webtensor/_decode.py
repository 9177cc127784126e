"""The decode-step fusions of include/webtensor.h whose options hold tensors:
wt_linear_fused (RMSNorm, linear, SwiGLU and a residual in one op) and
wt_rope_kv_cache (rope of q and k, and the step's keys and values written
into a joined KV cache). Their option structs carry tensor handles, so the
generated wrappers (python/gen_ops.py) do not cover them."""
import ctypes

from . import _lib
from ._core import (_L, _P, _I64, _D, _B, _proto, _byref, _ctx_of, _tensor, _new, _fail, _index,
                    _float)
from ._core import Tensor as _Tensor


class LinearFusedOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("rms_norm", _B), ("norm_weight", _P),
                ("norm_eps", _D), ("swiglu", _B), ("residual", _P), ("result_f32", _B),
                ("input_gelu", _B), ("into", _P)]


class RopeKVCacheOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("theta", _D), ("offset", _I64), ("position", _P),
                ("scaling", ctypes.c_int), ("factor", _D), ("low_freq_factor", _D), ("high_freq_factor", _D),
                ("original_max_position", _I64)]


_ROPE_SCALINGS = {None: 0, "linear": 1, "llama3": 2}


_new_linear_fused = _lib._checked_init(LinearFusedOptions, "wt_linear_fused_options_init")
_new_rope_kv_cache = _lib._checked_init(RopeKVCacheOptions, "wt_rope_kv_cache_options_init")
_proto("wt_linear_fused", _P, _P, _P, _P, _P)
_proto("wt_rope_kv_cache", _P, _P, _I64, _P, _P)


def _result(c):
    t = _new(_Tensor)
    t._h = c._out.value
    t._ctx = c
    return t


def linear_fused(x, weight, bias=None, rms_norm=False, norm_weight=None, norm_eps=1e-6,
                 swiglu=False, residual=None, result_f32=False, input_gelu=False, out=None):
    """wt_linear_fused: a linear layer with its neighbours, in one kernel
    where the backend has one:
        h   = rms_norm(x, norm_weight, norm_eps) if rms_norm else x
        h   = gelu(h) if input_gelu else h
        y   = h @ weight.T + bias
        y   = silu(y[..., :N/2]) * y[..., N/2:] if swiglu else y
        out = y + residual (when given)
    weight is [out_features, in_features]; out (PyTorch's out=): a
    contiguous tensor of the result's shape and dtype, in a storage of its
    own, that the result is written into and returned as; see
    include/webtensor.h."""
    c = _ctx_of(x, weight, bias, norm_weight, residual, out)
    x = _tensor(x, c)
    weight = _tensor(weight, c)
    bias = None if bias is None else _tensor(bias, c)
    norm_weight = None if norm_weight is None else _tensor(norm_weight, c)
    residual = None if residual is None else _tensor(residual, c)
    out = None if out is None else _tensor(out, c)
    o = _new_linear_fused()
    o.rms_norm = bool(rms_norm)
    o.norm_weight = None if norm_weight is None else norm_weight._h
    o.norm_eps = _float(norm_eps)
    o.swiglu = bool(swiglu)
    o.residual = None if residual is None else residual._h
    o.result_f32 = bool(result_f32)
    o.input_gelu = bool(input_gelu)
    o.into = None if out is None else out._h
    s = _L.wt_linear_fused(x._h, weight._h, None if bias is None else bias._h, _byref(o), c._out_ref)
    if s:
        _fail(s, "linear_fused", x, weight, bias, norm_weight, residual, out)
    return _result(c)


def rope_kv_cache(kv_cache, qkv, q_heads, theta=10000.0, offset=0, position=None, scaling=None, factor=1.0,
                  low_freq_factor=1.0, high_freq_factor=4.0, original_max_position=8192):
    """wt_rope_kv_cache: from a joined projection qkv [B, S, Hq + 2 Hkv, D],
    writes rope(k) and v into kv_cache [B, 2 Hkv, T, D] (f32, updated in
    place) at rows offset (+ position's value) on, and returns rope(q) as a
    new f32 [B, Hq, S, D]. position: None or a one-element i32 tensor whose
    value is added to offset when the kernel runs. scaling: None, "linear"
    or "llama3" (a checkpoint's rope_scaling, with factor, and for llama3
    the frequency factors and original_max_position). See
    include/webtensor.h."""
    if scaling not in _ROPE_SCALINGS:
        raise ValueError("webtensor: rope_kv_cache scaling is None, 'linear' or 'llama3'")
    if not isinstance(kv_cache, _Tensor):
        raise TypeError("webtensor: rope_kv_cache writes kv_cache in place: pass a Tensor")
    c = kv_cache._ctx
    qkv = _tensor(qkv, c)
    position = None if position is None else _tensor(position, c)
    o = _new_rope_kv_cache()
    o.theta = _float(theta)
    o.offset = _index(offset)
    o.position = None if position is None else position._h
    o.scaling = _ROPE_SCALINGS[scaling]
    o.factor = _float(factor)
    o.low_freq_factor = _float(low_freq_factor)
    o.high_freq_factor = _float(high_freq_factor)
    o.original_max_position = _index(original_max_position)
    s = _L.wt_rope_kv_cache(kv_cache._h, qkv._h, _index(q_heads), _byref(o), c._out_ref)
    if s:
        _fail(s, "rope_kv_cache", kv_cache, qkv, position)
    return _result(c)
