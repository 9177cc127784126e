"""Loading libwebtensor and the C structures the package passes to it.

The package calls the shared library through ctypes: no compiler is needed
to install it, it works with any CPython 3 that has NumPy, and ctypes
releases the GIL around every call (so a wait for the GPU does not hold it).
"""
import ctypes
import ctypes.util
import glob
import os

_P = ctypes.c_void_p
_I = ctypes.c_int
_I64 = ctypes.c_int64
_U64 = ctypes.c_uint64
_U32 = ctypes.c_uint32
_D = ctypes.c_double
_F = ctypes.c_float
_B = ctypes.c_bool
_CP = ctypes.c_char_p

HERE = os.path.dirname(os.path.abspath(__file__))


def _candidates():
    """Where the library may be, in the order it is looked for."""
    env = os.environ.get("WEBTENSOR_LIBRARY")
    if env:
        # Set explicitly: that library or nothing.
        return [env]
    found = sorted(glob.glob(os.path.join(HERE, "libwebtensor.so*")), key=len)
    # Running from the source tree: the build folder of `make`.
    repo = os.path.dirname(os.path.dirname(HERE))
    for build in (os.environ.get("WT_BUILD", ""), "build"):
        if build:
            found.append(os.path.join(repo, build, "libwebtensor.so"))
    system = ctypes.util.find_library("webtensor")
    if system:
        found.append(system)
    return found


def load():
    tried = []
    for path in _candidates():
        if os.path.sep in path and not os.path.exists(path):
            tried.append("%s (missing)" % path)
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    raise ImportError(
        "webtensor: cannot find libwebtensor.so; build it with `make build`, or set "
        "WEBTENSOR_LIBRARY to its path. Tried: " + ("; ".join(tried) or "nothing"))


L, LIBRARY_PATH = load()


def proto(name, *argtypes, restype=_I):
    fn = getattr(L, name)
    fn.argtypes = list(argtypes)
    fn.restype = restype
    return fn


# Structures of include/webtensor.h. Each with a struct_size is checked
# against the size its _init writes, so a header change cannot go unseen.
class ContextOptions(ctypes.Structure):
    _fields_ = [("struct_size", _U32), ("backend", _I), ("gpu_api", _I), ("adapter_index", _I),
                ("webgpu_library", _CP), ("dispatches_per_submit", _U32), ("num_threads", _I),
                ("power_preference", _I), ("validation", _B), ("max_buffer_size", _U64),
                ("disable_pipeline_cache", _B), ("toggles", _CP), ("experimental", _U32),
                ("memory_limit", _U64)]


class AdapterInfo(ctypes.Structure):
    _fields_ = [("index", _I), ("auto_choice", _B), ("name", ctypes.c_char * 256),
                ("vendor", ctypes.c_char * 128), ("architecture", ctypes.c_char * 128),
                ("driver", ctypes.c_char * 256), ("vendor_id", _U32), ("device_id", _U32),
                ("api", _I), ("type", _I), ("compatibility_mode", _B),
                ("max_buffer_size", _U64), ("max_storage_buffer_binding_size", _U64),
                ("max_compute_workgroup_storage_size", _U32),
                ("max_compute_invocations_per_workgroup", _U32),
                ("max_compute_workgroups_per_dimension", _U32),
                ("max_storage_buffers_per_shader_stage", _U32),
                ("subgroup_min_size", _U32), ("subgroup_max_size", _U32),
                ("shader_f16", _B), ("subgroups", _B), ("timestamp_query", _B),
                ("subgroup_matrix", _B), ("memory_bytes", _U64)]


class ContextInfo(ctypes.Structure):
    _fields_ = [("backend", _I), ("reason", ctypes.c_char * 512), ("has_adapter", _B),
                ("adapter", AdapterInfo), ("shader_f16", _B), ("subgroups", _B),
                ("timestamp_query", _B), ("subgroup_matrix", _B),
                ("features", ctypes.c_char * 768), ("toggles", ctypes.c_char * 256),
                ("dispatches_per_submit", _U32), ("validation", _B), ("pipeline_cache", _B),
                ("max_buffer_size", _U64), ("max_binding_size", _U64), ("memory_limit", _U64),
                ("num_threads", _I),
                # Room for fields a newer library may add (the struct has no size field).
                ("_reserve", ctypes.c_char * 1024)]


class MemoryStats(ctypes.Structure):
    _fields_ = [(n, _U64) for n in ("live_bytes", "peak_bytes", "pooled_bytes", "live_tensors",
                                    "buffers", "bytes_to_device", "bytes_from_device",
                                    "memory_limit")] + [("_reserve", ctypes.c_char * 256)]


class ConvOptions(ctypes.Structure):
    _fields_ = [("struct_size", _U32), ("stride", _I64 * 2), ("padding", _I64 * 4),
                ("dilation", _I64 * 2), ("groups", _I64), ("same", _B),
                ("output_padding", _I64 * 2)]


class PoolOptions(ctypes.Structure):
    """wt_pool2d_options."""
    _fields_ = [("struct_size", _U32), ("kernel", _I64 * 2), ("stride", _I64 * 2),
                ("padding", _I64 * 4), ("dilation", _I64 * 2), ("ceil_mode", _B),
                ("count_include_pad", _B), ("divisor_override", _I64)]


class BatchNormOptions(ctypes.Structure):
    _fields_ = [("struct_size", _U32), ("training", _B), ("momentum", _D), ("eps", _D)]


class CrossEntropyOptions(ctypes.Structure):
    _fields_ = [("struct_size", _U32), ("reduction", _I), ("ignore_index", ctypes.c_int32)]


def _checked_init(struct, init_name):
    init = proto(init_name, _P, restype=None)

    def make():
        o = struct()
        init(ctypes.byref(o))
        return o
    size = make().struct_size
    if size != ctypes.sizeof(struct):
        raise ImportError("webtensor: %s is %d bytes in the library and %d here: the package "
                          "does not match the library at %s"
                          % (struct.__name__, size, ctypes.sizeof(struct), LIBRARY_PATH))
    return make


new_context_options = _checked_init(ContextOptions, "wt_context_options_init")
new_conv_options = _checked_init(ConvOptions, "wt_conv_options_init")
new_pool_options = _checked_init(PoolOptions, "wt_pool2d_options_init")
new_batch_norm_options = _checked_init(BatchNormOptions, "wt_batch_norm_options_init")
new_cross_entropy_options = _checked_init(CrossEntropyOptions, "wt_cross_entropy_options_init")

# The core functions (the ops' prototypes are in the generated _ops.py).
proto("wt_status_string", _I, restype=_CP)
proto("wt_last_error", restype=_CP)
proto("wt_version", restype=_CP)
proto("wt_context_create", _P, _P)
proto("wt_context_destroy", _P, restype=None)
proto("wt_context_sync", _P)
proto("wt_context_backend", _P)
proto("wt_context_memory_stats", _P, _P)
proto("wt_context_trim", _P)
proto("wt_context_get_info", _P, _P)
proto("wt_context_adapter_info", _P, _P)
proto("wt_list_adapters", _P, _P, _I, _P)
proto("wt_tensor_from_data", _P, _I, _I, _P, _P, _P)
proto("wt_tensor_full", _P, _I, _I, _P, _D, _P)
proto("wt_tensor_read", _P, _P, ctypes.c_size_t)
proto("wt_tensor_ndim", _P)
proto("wt_tensor_shape", _P, restype=ctypes.POINTER(_I64))
proto("wt_tensor_strides", _P, restype=ctypes.POINTER(_I64))
proto("wt_tensor_offset", _P, restype=_I64)
proto("wt_tensor_numel", _P, restype=_I64)
proto("wt_tensor_dtype", _P)
proto("wt_tensor_is_contiguous", _P, restype=_B)
proto("wt_tensor_release", _P, restype=None)
proto("wt_tensor_to", _P, _P, _P)
proto("wt_op_count")
proto("wt_op_name", _I, restype=_CP)
proto("wt_op_family", _I, restype=_CP)
proto("wt_split", _P, _I, _I, _P, _P)
proto("wt_chunk", _P, _I, _I, _P, _P)
proto("wt_roll", _P, _I, _P, _P, _P)
