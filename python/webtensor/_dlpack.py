"""DLPack, both ways (the C structures of dlpack.h, through ctypes).

Export (Tensor.__dlpack__): a CPU-backend tensor of float32, float16 or
int32 is handed over without a copy: the capsule points into the
library's memory (wt_tensor_host_data) and holds a reference to the C
tensor, dropped by the DLPack deleter. bool tensors (stored as 4-byte
words) and tensors of a WebGPU context are offered as a host copy, the
latter only when the consumer asks for one (dl_device=(1, 0), copy=True).

Import (from_dlpack): host memory (kDLCPU) of float32, float16 or int32
with non-negative strides becomes a CPU-backend tensor over that memory
(wt_tensor_from_host_memory, whose release callback is the producer's
DLPack deleter); anything else is copied."""
import ctypes

import numpy as np

from . import _core
from ._lib import L as _L, proto as _proto, _P, _I, _I64

KDL_CPU = 1
KDL_CUDA_HOST = 3
KDL_ROCM_HOST = 11
KDL_WEBGPU = 15
_HOST_DEVICES = (KDL_CPU, KDL_CUDA_HOST, KDL_ROCM_HOST)
_FLAG_READ_ONLY = 1
_FLAG_IS_COPIED = 2

_proto("wt_tensor_host_data", _P, ctypes.POINTER(_P))
_proto("wt_tensor_from_host_memory", _P, _I, _I, ctypes.POINTER(_I64), ctypes.POINTER(_I64), _P, _P,
       _P, ctypes.POINTER(_P))
_proto("wt_tensor_retain", _P, restype=None)


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", _P), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(_I64)),
                ("strides", ctypes.POINTER(_I64)), ("byte_offset", ctypes.c_uint64)]


_DELETER = ctypes.CFUNCTYPE(None, _P)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", _P), ("deleter", _P)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", _P), ("deleter", _P),
                ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


# Each export: its managed struct with room for the shape and strides.
class _Legacy(ctypes.Structure):
    _fields_ = [("m", DLManagedTensor), ("shape", _I64 * 8), ("strides", _I64 * 8)]


class _Versioned(ctypes.Structure):
    _fields_ = [("m", DLManagedTensorVersioned), ("shape", _I64 * 8), ("strides", _I64 * 8)]


# dtype <-> (DLPack type code, bits). The library's own four first.
_DL_OF_CODE = {0: (2, 32), 1: (2, 16), 2: (0, 32), 3: (6, 8)}
_NP_OF_DL = {(2, 16): np.float16, (2, 32): np.float32, (2, 64): np.float64,
             (0, 8): np.int8, (0, 16): np.int16, (0, 32): np.int32, (0, 64): np.int64,
             (1, 8): np.uint8, (1, 16): np.uint16, (1, 32): np.uint32, (1, 64): np.uint64,
             (6, 8): np.bool_}
_CODE_OF_DL = {(2, 32): 0, (2, 16): 1, (0, 32): 2}  # zero-copy imports

# The Python C API, for the capsules.
_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [_P, ctypes.c_char_p, _P]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = _P
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
# The destructor sees a capsule being freed: only its address is used
# (a py_object would take a reference to a dying object).
_is_valid_raw = ctypes.PYFUNCTYPE(ctypes.c_int, _P, ctypes.c_char_p)(("PyCapsule_IsValid", _api))
_get_pointer_raw = ctypes.PYFUNCTYPE(_P, _P, ctypes.c_char_p)(("PyCapsule_GetPointer", _api))

# Capsule names live as long as the module (the capsule keeps the pointer).
_LEGACY = b"dltensor"
_VERSIONED = b"dltensor_versioned"
_USED_LEGACY = b"used_dltensor"
_USED_VERSIONED = b"used_dltensor_versioned"

# Exports alive: address of the managed struct -> (struct, what it holds:
# a C tensor handle to release, or the NumPy array of a copy).
_live = {}
_release_c = _L.wt_tensor_release


def _delete(addr):
    entry = _live.pop(addr, None)
    if entry is not None and isinstance(entry[1], int):
        _release_c(entry[1])


@_DELETER
def _deleter(addr):
    """The DLPack deleter of every export (a consumer calls it when done)."""
    try:
        _delete(addr)
    except Exception:  # interpreter shutdown: nothing left to free
        pass


@ctypes.CFUNCTYPE(None, _P)
def _capsule_destructor(cap):
    """A capsule never consumed frees its export (a consumed one was
    renamed used_dltensor and is the consumer's)."""
    try:
        for name in (_LEGACY, _VERSIONED):
            if _is_valid_raw(cap, name):
                ptr = _get_pointer_raw(cap, name)
                if ptr:
                    _delete(ptr)
                return
    except Exception:
        pass


_DELETER_ADDR = ctypes.cast(_deleter, _P).value
_DESTRUCTOR_ADDR = ctypes.cast(_capsule_destructor, _P).value


def _capsule(data, shape, strides, dl_dtype, device, owner, versioned, copied):
    """A DLPack capsule over data; owner (a C handle with one reference
    for the export, or a NumPy array) lives until the deleter runs."""
    ndim = len(shape)
    block = _Versioned() if versioned else _Legacy()
    m = block.m
    t = m.dl_tensor
    t.data = data
    t.device.device_type, t.device.device_id = device
    t.ndim = ndim
    t.dtype.code, t.dtype.bits, t.dtype.lanes = dl_dtype[0], dl_dtype[1], 1
    block.shape[:ndim] = shape
    block.strides[:ndim] = strides
    t.shape = ctypes.cast(block.shape, ctypes.POINTER(_I64))
    t.strides = ctypes.cast(block.strides, ctypes.POINTER(_I64))
    t.byte_offset = 0
    m.deleter = _DELETER_ADDR
    if versioned:
        m.version.major, m.version.minor = 1, 0
        m.flags = _FLAG_IS_COPIED if copied else 0
    addr = ctypes.addressof(m)
    _live[addr] = (block, owner)
    try:
        return _api.PyCapsule_New(addr, _VERSIONED if versioned else _LEGACY, _DESTRUCTOR_ADDR)
    except BaseException:
        _delete(addr)
        raise


def _copy_capsule(arr, versioned):
    """A capsule over a host copy (a NumPy array the export keeps)."""
    arr = np.ascontiguousarray(arr)
    code = {np.dtype(np.float32): 0, np.dtype(np.float16): 1, np.dtype(np.int32): 2,
            np.dtype(np.bool_): 3}[arr.dtype]
    strides = [s // arr.itemsize for s in arr.strides]
    return _capsule(arr.ctypes.data, arr.shape, strides, _DL_OF_CODE[code], (KDL_CPU, 0), arr,
                    versioned, True)


def device_of(t):
    ctx = t._ctx
    dev = getattr(ctx, "_dl_device", None)
    if dev is None:
        if ctx.device == "cpu":
            dev = (KDL_CPU, 0)
        else:
            dev = (KDL_WEBGPU, max(ctx._adapter_index, 0))
        ctx._dl_device = dev
    return dev


def export(t, stream=None, max_version=None, dl_device=None, copy=None):
    """Tensor.__dlpack__ (the Python array API's signature)."""
    h = t._handle()
    versioned = max_version is not None and tuple(max_version)[0] >= 1
    own = device_of(t)
    if dl_device is not None:
        dl_device = tuple(dl_device)
        if dl_device != own and dl_device[0] != KDL_CPU:
            raise BufferError("webtensor: cannot export to DLPack device %s (this tensor is on %s; "
                              "a host copy is offered as dl_device=(1, 0))" % (dl_device, own))
    want_host = dl_device is not None and dl_device[0] == KDL_CPU
    if _L.wt_tensor_requires_grad(h):
        raise BufferError("webtensor: cannot export a tensor that requires grad; use "
                          "t.detach()")
    code = _L.wt_tensor_dtype(h)
    if own[0] == KDL_CPU and code != 3 and copy is not True:
        # Zero-copy: a pointer into the CPU backend's memory.
        p = _P()
        _core._check(_L.wt_tensor_host_data(h, ctypes.byref(p)), "__dlpack__")
        n = _L.wt_tensor_ndim(h)
        shape = _L.wt_tensor_shape(h)[:n] if n else []
        strides = _L.wt_tensor_strides(h)[:n] if n else []
        _L.wt_tensor_retain(h)
        try:
            return _capsule(p.value, shape, strides, _DL_OF_CODE[code], own, h, versioned, False)
        except BaseException:
            _release_c(h)
            raise
    if copy is False:
        why = ("bool elements are stored as 4-byte words, not NumPy's bytes" if own[0] == KDL_CPU
               else "a WebGPU tensor's memory is on the GPU")
        raise BufferError("webtensor: cannot export without a copy: %s" % why)
    if own[0] != KDL_CPU and not (want_host and copy):
        raise BufferError("webtensor: a WebGPU tensor (DLPack device kDLWebGPU) has no memory a "
                          "host consumer can read; ask for a host copy with "
                          "__dlpack__(dl_device=(1, 0), copy=True), or use t.numpy()")
    return _copy_capsule(t.numpy(), versioned)


def _dl_shape(tensor):
    n = tensor.ndim
    shape = [tensor.shape[i] for i in range(n)]
    strides = None if not tensor.strides else [tensor.strides[i] for i in range(n)]
    return shape, strides


def _host_array(tensor, shape, strides, npdt):
    """A NumPy view of DLPack host memory (for the copy path)."""
    itemsize = np.dtype(npdt).itemsize
    if strides is None:
        strides = []
        acc = 1
        for s in reversed(shape):
            strides.append(acc)
            acc *= s
        strides.reverse()
    base = (tensor.data or 0) + tensor.byte_offset
    if any(s == 0 for s in shape):
        return np.empty(shape, npdt)
    lo = sum((d - 1) * s for d, s in zip(shape, strides) if s < 0)
    hi = sum((d - 1) * s for d, s in zip(shape, strides) if s > 0)
    nbytes = (hi - lo + 1) * itemsize
    buf = (ctypes.c_char * nbytes).from_address(base + lo * itemsize)
    return np.ndarray(shape, npdt, buffer=buf, offset=-lo * itemsize,
                      strides=[s * itemsize for s in strides])


def _capsule_of(obj):
    """obj's capsule, versioned where the producer takes max_version."""
    try:
        return obj.__dlpack__(max_version=(1, 0))
    except TypeError:  # a producer older than DLPack 1.0 (NumPy < 2.1)
        return obj.__dlpack__()


def import_(obj, context=None, copy=None):
    """wt.from_dlpack: a tensor over obj's memory where it can be (see the
    module's docstring), else a copy; copy=True always copies, copy=False
    raises BufferError where sharing is impossible."""
    ctx = _core._context(context)
    if isinstance(obj, _core.Tensor):
        if copy is not True and obj._ctx is ctx:
            h = obj._handle()
            _L.wt_tensor_retain(h)
            return _core._wrap(h, ctx)
        return _core.tensor(obj, context=ctx)
    if hasattr(obj, "__dlpack_device__"):
        dev = tuple(obj.__dlpack_device__())
        if dev[0] not in _HOST_DEVICES:
            if copy is False:
                raise BufferError("webtensor: DLPack device %s is not host memory; sharing it "
                                  "is impossible" % (dev,))
            # Ask the producer for a host copy (DLPack 1.0's dl_device).
            cap = obj.__dlpack__(max_version=(1, 0), dl_device=(KDL_CPU, 0), copy=True)
            return _from_capsule(cap, ctx, True)
    if isinstance(obj, (np.ndarray, np.generic)):
        # NumPy before 2.1 exports neither read-only arrays nor bool
        # (DLPack 0.x cannot say read-only): those are copied.
        try:
            cap = _capsule_of(np.asarray(obj))
        except BufferError:
            if copy is False:
                raise
            return _core.tensor(np.asarray(obj), context=ctx)
        return _from_capsule(cap, ctx, copy)
    if not hasattr(obj, "__dlpack__"):
        raise TypeError("webtensor: %s is not a DLPack producer (no __dlpack__); use wt.tensor()"
                        % type(obj).__name__)
    return _from_capsule(_capsule_of(obj), ctx, copy)


def _from_capsule(cap, ctx, copy):
    if _api.PyCapsule_IsValid(cap, _VERSIONED):
        versioned = True
        addr = _api.PyCapsule_GetPointer(cap, _VERSIONED)
        m = DLManagedTensorVersioned.from_address(addr)
        read_only = bool(m.flags & _FLAG_READ_ONLY)
    elif _api.PyCapsule_IsValid(cap, _LEGACY):
        versioned = False
        addr = _api.PyCapsule_GetPointer(cap, _LEGACY)
        m = DLManagedTensor.from_address(addr)
        read_only = False
    else:
        raise BufferError("webtensor: not a DLPack capsule (or one already consumed)")
    t = m.dl_tensor
    if t.device.device_type not in _HOST_DEVICES:
        raise BufferError("webtensor: DLPack device %d is not host memory" % t.device.device_type)
    key = (t.dtype.code, t.dtype.bits)
    if t.dtype.lanes != 1 or key not in _NP_OF_DL:
        raise BufferError("webtensor: DLPack dtype (code %d, %d bits, %d lanes) has no webtensor "
                          "form" % (t.dtype.code, t.dtype.bits, t.dtype.lanes))
    shape, strides = _dl_shape(t)
    code = _CODE_OF_DL.get(key)
    esize = t.dtype.bits // 8
    data = (t.data or 0) + t.byte_offset
    shareable = (code is not None and not read_only and ctx.device == "cpu"
                 and data % esize == 0 and (strides is None or all(s >= 0 for s in strides))
                 and len(shape) <= 8)
    if shareable and copy is not True:
        n = len(shape)
        shape_a = (_I64 * max(n, 1))(*shape)
        strides_a = None if strides is None else (_I64 * max(n, 1))(*strides)
        out = _P()
        s = _L.wt_tensor_from_host_memory(ctx._handle(), code, n, shape_a, strides_a, data or None,
                                          m.deleter, addr, ctypes.byref(out))
        if s == 0:
            # The tensor owns the producer's memory now; its deleter is
            # called when the last view of the tensor goes.
            _api.PyCapsule_SetName(cap, _USED_VERSIONED if versioned else _USED_LEGACY)
            return _core._wrap(out.value, ctx)
        if copy is False:
            raise _core._error(s, "from_dlpack")
    elif copy is False:
        why = ("the context is not the CPU backend" if ctx.device != "cpu" else
               "the memory is read-only" if read_only else
               "dtype %s is not float32, float16 or int32" % np.dtype(_NP_OF_DL[key]).name
               if code is None else "negative or misaligned strides")
        raise BufferError("webtensor: cannot share this memory (%s)" % why)
    # A copy; then the capsule is consumed, as a consumer must: renamed,
    # and the producer's deleter called.
    arr = _host_array(t, shape, strides, _NP_OF_DL[key])
    out = _core.tensor(arr, context=ctx)
    del arr
    _api.PyCapsule_SetName(cap, _USED_VERSIONED if versioned else _USED_LEGACY)
    if m.deleter:
        _DELETER(m.deleter)(addr)
    return out


def from_dlpack(obj, context=None, copy=None):
    """A tensor of any DLPack producer (NumPy, PyTorch ...). Host memory of
    float32, float16 or int32 is shared, not copied, when the tensor goes
    to a CPU-backend context (the default one unless given); otherwise,
    or with copy=True, the elements are copied. copy=False raises
    BufferError where the memory cannot be shared."""
    return import_(obj, context, copy)


def _tensor_dlpack(self, stream=None, max_version=None, dl_device=None, copy=None):
    """The tensor as a DLPack capsule. On the CPU backend float32,
    float16 and int32 tensors share their memory (no copy); bool
    tensors are a host copy. A WebGPU tensor (kDLWebGPU) is exported
    only as a host copy asked for with dl_device=(1, 0), copy=True;
    otherwise BufferError says why."""
    return export(self, stream, max_version, dl_device, copy)


def _tensor_dlpack_device(self):
    """(1, 0) (kDLCPU) on the CPU backend, (15, adapter) (kDLWebGPU) on WebGPU."""
    return device_of(self)


# The protocol's two methods live here, with the code they call, so that
# _core (the Tensor class) does not import this module.
_core.Tensor.__dlpack__ = _tensor_dlpack
_core.Tensor.__dlpack_device__ = _tensor_dlpack_device
