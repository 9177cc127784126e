"""Contexts, tensors, dtypes and errors: the part of the package the
generated op wrappers (_ops.py) build on."""
import ctypes
import math
import operator
import threading

import numpy as np

from . import _lib
from ._lib import L as _L, proto as _proto, _P, _I, _I64, _U64, _D, _F, _B

_byref = ctypes.byref
_INF = math.inf
_INT64_MAX = (1 << 63) - 1
_index = operator.index
_float = float
_ops = None  # the generated module, set by the package's __init__

# ---------------------------------------------------------------- errors


class WebtensorError(Exception):
    """Base of every error the library reports. `status` is the C status
    name ("WT_ERR_SHAPE"), `code` its value; the message is wt_last_error's."""
    code = None
    status = None


class InvalidArgumentError(WebtensorError, ValueError):
    code, status = -1, "WT_ERR_INVALID_ARGUMENT"


class ShapeError(WebtensorError, ValueError):
    code, status = -2, "WT_ERR_SHAPE"


class OutOfMemoryError(WebtensorError, MemoryError):
    code, status = -3, "WT_ERR_OUT_OF_MEMORY"


class NoDeviceError(WebtensorError, RuntimeError):
    code, status = -4, "WT_ERR_NO_DEVICE"


class DeviceLostError(WebtensorError, RuntimeError):
    code, status = -5, "WT_ERR_DEVICE_LOST"


class UnsupportedError(WebtensorError, TypeError):
    code, status = -6, "WT_ERR_UNSUPPORTED"


class ShaderError(WebtensorError, RuntimeError):
    code, status = -7, "WT_ERR_SHADER"


class BackendError(WebtensorError, RuntimeError):
    code, status = -8, "WT_ERR_BACKEND"


ERRORS = {c.code: c for c in (InvalidArgumentError, ShapeError, OutOfMemoryError, NoDeviceError,
                              DeviceLostError, UnsupportedError, ShaderError, BackendError)}


def _error(status, where=None):
    msg = (_L.wt_last_error() or b"").decode("utf-8", "replace")
    cls = ERRORS.get(status)
    if cls is None:
        cls = type("WebtensorError%d" % -status, (WebtensorError,), {"code": status})
    if not msg:
        msg = "%s: %s" % (where, _L.wt_status_string(status).decode()) if where else \
            _L.wt_status_string(status).decode()
    return cls(msg)


def _check(status, where=None):
    if status:
        raise _error(status, where)


def _released(x):
    if isinstance(x, Tensor):
        return x._h is None
    if isinstance(x, (list, tuple)):
        return any(_released(v) for v in x)
    return False


def _fail(status, where, *inputs):
    """Raises the error of a failed op; names a released input as such (the
    library saw a NULL tensor)."""
    if any(_released(x) for x in inputs):
        raise InvalidArgumentError("%s: a tensor passed to it was released" % where)
    raise _error(status, where)

# ---------------------------------------------------------------- dtypes


float32 = np.dtype(np.float32)
float16 = np.dtype(np.float16)
int32 = np.dtype(np.int32)
bool_ = np.dtype(np.bool_)
_NP_OF_CODE = (float32, float16, int32, bool_)
_NAMES = {"f32": 0, "float32": 0, "float": 0, "f16": 1, "float16": 1, "half": 1,
          "i32": 2, "int32": 2, "int": 2, "bool": 3}


def _dtype_code(dt):
    """The wt_dtype of a NumPy dtype, a type or a name ('float32', 'f16' ...)."""
    if dt is None:
        return 0
    if isinstance(dt, str):
        code = _NAMES.get(dt)
        if code is not None:
            return code
    elif dt is float:
        return 0
    elif dt is int:
        return 2
    elif dt is bool:
        return 3
    try:
        npdt = np.dtype(dt)
    except TypeError:
        raise TypeError("webtensor: %r is not a dtype" % (dt,)) from None
    for code, d in enumerate(_NP_OF_CODE):
        if npdt == d:
            return code
    raise TypeError("webtensor: dtype %s is not one of float32, float16, int32, bool" % npdt)


def _default_code(arr):
    """The dtype a NumPy array becomes without an explicit one (PyTorch's
    rule: float64 -> float32, other integers -> int32)."""
    k = arr.dtype.kind
    if arr.dtype == float16:
        return 1
    if k == "f":
        return 0
    if k == "b":
        return 3
    if k in "iu":
        return 2
    raise TypeError("webtensor: cannot make a tensor of dtype %s" % arr.dtype)

# ---------------------------------------------------------------- contexts


_BACKENDS = {"auto": (0, 0), "cpu": (1, 0), "webgpu": (2, 0), "gpu": (2, 0),
             "vulkan": (2, 1), "gles": (2, 2), "opengles": (2, 2), "metal": (2, 3),
             "d3d12": (2, 4)}
_API_NAMES = {1: "vulkan", 2: "gles", 3: "metal", 4: "d3d12", 5: "browser"}
_local = threading.local()
_default = None
_default_lock = threading.Lock()


class Context:
    """A device: the CPU backend or a WebGPU adapter (wt_context).

    backend: "auto" (a real GPU if there is one, else the CPU), "cpu",
    "webgpu" (any adapter, software renderers included), or "vulkan" /
    "gles" / "metal" / "d3d12" for WebGPU over that API. Tensors keep their
    context alive; close() drops this object's reference at once.
    `with ctx:` makes it the default context inside the block."""

    def __init__(self, backend="auto", *, adapter_index=-1, num_threads=0, validation=False,
                 memory_limit=0, max_buffer_size=0, webgpu_library=None, toggles=None,
                 dispatches_per_submit=0, low_power=False):
        if backend not in _BACKENDS:
            raise ValueError("webtensor: backend must be one of %s, not %r"
                             % (", ".join(sorted(_BACKENDS)), backend))
        o = _lib.new_context_options()
        o.backend, o.gpu_api = _BACKENDS[backend]
        o.adapter_index = _index(adapter_index)
        o.num_threads = _index(num_threads)
        o.validation = bool(validation)
        o.memory_limit = _index(memory_limit)
        o.max_buffer_size = _index(max_buffer_size)
        o.dispatches_per_submit = _index(dispatches_per_submit)
        o.power_preference = 2 if low_power else 0
        # Keep the strings alive for the call.
        lib_b = webgpu_library.encode() if webgpu_library else None
        tog_b = toggles.encode() if toggles else None
        o.webgpu_library, o.toggles = lib_b, tog_b
        h = _P()
        self._h = None
        # The out-pointer of the op wrappers' single result: one per
        # context, since a context is used by one thread at a time.
        self._out = _P()
        self._out_ref = _byref(self._out)
        _check(_L.wt_context_create(_byref(o), _byref(h)), "Context(%r)" % backend)
        self._h = h.value
        self.requested = backend
        self._adapter_index = adapter_index
        info = self.info()
        if info["backend"] == "cpu":
            self.device = "cpu"
        else:
            self.device = "webgpu:" + info["adapter"]["api"]

    # -- lifetime
    def close(self):
        """Drops this object's reference to the context. Tensors made on it
        keep working (they hold the library's context until released); new
        tensors cannot be made on it."""
        h, self._h = self._h, None
        if h:
            _L.wt_context_destroy(h)

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: the library may be gone
            pass

    def __enter__(self):
        stack = getattr(_local, "stack", None)
        if stack is None:
            stack = _local.stack = []
        stack.append(self)
        return self

    def __exit__(self, *exc):
        _local.stack.pop()
        return False

    def _handle(self):
        if self._h is None:
            raise InvalidArgumentError("webtensor: the context was closed")
        return self._h

    # -- information
    @property
    def backend(self):
        return "cpu" if _L.wt_context_backend(self._handle()) == 1 else "webgpu"

    def info(self):
        """wt_context_get_info as a dict: the backend, why it was chosen, the adapter."""
        i = _lib.ContextInfo()
        _check(_L.wt_context_get_info(self._handle(), _byref(i)), "Context.info")
        a = i.adapter
        dec = lambda b: b.decode("utf-8", "replace")
        return {
            "backend": "cpu" if i.backend == 1 else "webgpu",
            "reason": dec(i.reason),
            "adapter": {"name": dec(a.name), "driver": dec(a.driver), "vendor": dec(a.vendor),
                        "api": _API_NAMES.get(a.api, "unknown"),
                        "compatibility_mode": a.compatibility_mode,
                        "shader_f16": a.shader_f16} if i.has_adapter else None,
            "features": dec(i.features),
            "max_buffer_size": i.max_buffer_size,
            "num_threads": i.num_threads,
        }

    def memory_stats(self):
        s = _lib.MemoryStats()
        _check(_L.wt_context_memory_stats(self._handle(), _byref(s)), "Context.memory_stats")
        return {n: getattr(s, n) for n, _ in _lib.MemoryStats._fields_ if not n.startswith("_")}

    def sync(self):
        """Waits for the recorded work (the GIL is released meanwhile)."""
        _check(_L.wt_context_sync(self._handle()), "Context.sync")

    def trim(self):
        _check(_L.wt_context_trim(self._handle()), "Context.trim")

    def __repr__(self):
        state = "" if self._h else ", closed"
        return "Context(%r, device=%r%s)" % (self.requested, self.device, state)


def default_context():
    """The context of `with ctx:` blocks, else the process-wide default
    (made on first use: $WEBTENSOR_BACKEND, else "auto")."""
    global _default
    stack = getattr(_local, "stack", None)
    if stack:
        return stack[-1]
    if _default is None:
        import os
        with _default_lock:
            if _default is None:
                _default = Context(os.environ.get("WEBTENSOR_BACKEND", "auto"))
    return _default


def set_default_context(ctx):
    global _default
    if ctx is not None and not isinstance(ctx, Context):
        raise TypeError("webtensor: set_default_context takes a Context")
    _default = ctx


def _context(ctx):
    if ctx is None:
        return default_context()
    if isinstance(ctx, Context):
        return ctx
    if isinstance(ctx, str):
        raise TypeError("webtensor: pass a Context object (wt.Context(%r)), not a name" % ctx)
    raise TypeError("webtensor: context must be a Context, not %s" % type(ctx).__name__)


def _ctx_of(*args):
    """The context of the first tensor among the arguments, else the default."""
    for a in args:
        if isinstance(a, Tensor):
            return a._ctx
        if isinstance(a, (list, tuple)):
            for v in a:
                if isinstance(v, Tensor):
                    return v._ctx
    return default_context()

# ---------------------------------------------------------------- tensors


def _from_numpy(arr, code, ctx):
    want = _NP_OF_CODE[code]
    if arr.dtype != want:
        if arr.dtype.kind in "iu" and code == 2 and arr.size:
            lo, hi = int(arr.min()), int(arr.max())
            if lo < -2**31 or hi >= 2**31:
                raise OverflowError("webtensor: values %d..%d do not fit int32" % (lo, hi))
        arr = arr.astype(want)
    if not arr.flags.c_contiguous:  # (np.ascontiguousarray would make 0-d arrays 1-d)
        arr = arr.copy(order="C")
    nd = arr.ndim
    shape = (_I64 * max(nd, 1))(*arr.shape)
    h = _P()
    _check(_L.wt_tensor_from_data(ctx._handle(), code, nd, shape, arr.ctypes.data, _byref(h)),
           "tensor")
    return _wrap(h.value, ctx)


def tensor(data, dtype=None, context=None):
    """A new tensor holding a copy of data: a NumPy array, nested lists, a
    number, another Tensor (copied, onto `context` if given) or anything
    with the array interface or DLPack. dtype: float32, float16, int32 or
    bool (NumPy dtypes or their names); default: float32 for floats (float64
    included), int32 for integers, bool for booleans."""
    if isinstance(data, Tensor):
        ctx = data._ctx if context is None else _context(context)
        t = data if ctx is data._ctx else data.to(ctx)
        if dtype is not None and _dtype_code(dtype) != t._code():
            return _ops.cast(t, dtype)
        return _ops.copy(t) if t is data else t
    ctx = _context(context)
    arr = np.asarray(data)
    if arr.dtype == object:
        raise TypeError("webtensor: cannot make a tensor from %s" % type(data).__name__)
    code = _default_code(arr) if dtype is None else _dtype_code(dtype)
    return _from_numpy(arr, code, ctx)


def from_numpy(arr, context=None):
    return tensor(arr, context=context)


def _tensor(x, ctx):
    """An op's tensor argument: a Tensor as it is; array-likes and numbers
    are copied onto ctx."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (bool, int, float, np.number)):
        # A Python number beside a tensor is "weak", as in PyTorch.
        return _scalar(x, ctx, None)
    return tensor(x, context=ctx)


def _scalar(v, ctx, like):
    """A 0-d tensor of v: like's dtype when like is a float tensor, else
    int32 for integers and float32 for other numbers (the rule of the
    library's scalar ops)."""
    if like is not None and like._code() in (0, 1):
        code = like._code()
    elif isinstance(v, (bool, np.bool_)):
        code = 3 if like is not None and like._code() == 3 else 2
    elif float(v).is_integer() and -2**31 <= v < 2**31:
        code = 2
    else:
        code = 0
    h = _P()
    _check(_L.wt_tensor_full(ctx._handle(), code, 0, None, float(v), _byref(h)), "scalar")
    return _wrap(h.value, ctx)


def _is_number(v):
    return isinstance(v, (int, float, np.number)) and not isinstance(v, np.ndarray)


def _wrap(h, ctx):
    if not h:
        raise BackendError("webtensor: the library returned no tensor")
    t = _new(Tensor)
    t._h = h
    t._ctx = ctx
    return t


def _axes(v):
    if v is None:
        return 0, None
    if isinstance(v, (int, np.integer)):
        return 1, (_I * 1)(v)
    v = [_index(a) for a in v]
    return len(v), (_I * max(len(v), 1))(*v)


def _int64s(v):
    if isinstance(v, (int, np.integer)):
        return 1, (_I64 * 1)(v)
    v = [_index(a) for a in v]
    return len(v), (_I64 * max(len(v), 1))(*v)


def _handles(ts):
    return len(ts), (_P * max(len(ts), 1))(*[t._h for t in ts])


def _enum(kind, v):
    table = _ops.ENUMS[kind]
    if v not in table:
        raise ValueError("webtensor: %s must be one of %s, not %r" % (kind, ", ".join(table), v))
    return table[v]


def _pair(v, name):
    if isinstance(v, (int, np.integer)):
        return (int(v), int(v))
    v = tuple(int(a) for a in v)
    if len(v) != 2:
        raise ValueError("webtensor: %s must be an int or a pair" % name)
    return v


def _options_conv(d):
    """wt_conv_options from a dict: stride, padding (int, (h, w), (top,
    bottom, left, right) or "same"), dilation, groups, output_padding."""
    if d is None:
        return None
    o = _lib.new_conv_options()
    for k, v in d.items():
        if k in ("stride", "dilation", "output_padding"):
            getattr(o, k)[:] = _pair(v, k)
        elif k == "padding":
            if v == "same":
                o.same = True
            elif v == "valid":
                pass
            elif isinstance(v, (int, np.integer)):
                o.padding[:] = (int(v),) * 4
            elif len(v) == 2:
                o.padding[:] = (int(v[0]), int(v[0]), int(v[1]), int(v[1]))
            else:
                o.padding[:] = tuple(int(a) for a in v)
        elif k == "groups":
            o.groups = _index(v)
        else:
            raise TypeError("webtensor: unknown convolution option %r" % k)
    return o


def _options_pool(d):
    """wt_pool2d_options from a dict: kernel (required), stride, padding (int,
    (h, w) or (top, bottom, left, right)), dilation, ceil_mode,
    count_include_pad, divisor_override."""
    if d is None:
        raise InvalidArgumentError("webtensor: pooling needs options with a kernel size")
    o = _lib.new_pool_options()
    for k, v in d.items():
        if k in ("kernel", "stride", "dilation"):
            if v is not None:
                getattr(o, k)[:] = _pair(v, k)
        elif k == "padding":
            if v is None:
                pass
            elif isinstance(v, (int, np.integer)):
                o.padding[:] = (int(v),) * 4
            elif len(v) == 2:
                o.padding[:] = (int(v[0]), int(v[0]), int(v[1]), int(v[1]))
            elif len(v) == 4:
                o.padding[:] = tuple(int(a) for a in v)
            else:
                raise ValueError("webtensor: padding must be an int, (h, w) or (top, bottom, left, right)")
        elif k in ("ceil_mode", "count_include_pad"):
            setattr(o, k, bool(v))
        elif k == "divisor_override":
            o.divisor_override = 0 if v is None else _index(v)
        else:
            raise TypeError("webtensor: unknown pooling option %r" % k)
    return o


def _options_bnorm(d):
    if d is None:
        return None
    o = _lib.new_batch_norm_options()
    for k, v in d.items():
        if k == "training":
            o.training = bool(v)
        elif k in ("momentum", "eps"):
            setattr(o, k, float(v))
        else:
            raise TypeError("webtensor: unknown batch_norm option %r" % k)
    return o


# The optimizers' option structs (wt_sgd_options, wt_adamw_options): the
# in-place step ops take them, and webtensor.optim builds on them.
class SGDOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("lr", _D), ("momentum", _D), ("dampening", _D),
                ("weight_decay", _D), ("nesterov", _B)]


class AdamWOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("lr", _D), ("beta1", _D), ("beta2", _D), ("eps", _D),
                ("weight_decay", _D)]


_new_sgd = _lib._checked_init(SGDOptions, "wt_sgd_options_init")
_new_adamw = _lib._checked_init(AdamWOptions, "wt_adamw_options_init")


def _options_sgd(d):
    """wt_sgd_options from {lr, momentum, dampening, weight_decay, nesterov}."""
    if d is None:
        return None
    o = _new_sgd()
    for k, v in d.items():
        if k == "nesterov":
            o.nesterov = bool(v)
        elif k in ("lr", "momentum", "dampening", "weight_decay"):
            setattr(o, k, float(v))
        else:
            raise TypeError("webtensor: unknown SGD option %r" % k)
    return o


def _options_adamw(d):
    """wt_adamw_options from {lr, betas, eps, weight_decay}."""
    if d is None:
        return None
    o = _new_adamw()
    for k, v in d.items():
        if k == "betas":
            o.beta1, o.beta2 = float(v[0]), float(v[1])
        elif k in ("lr", "eps", "weight_decay"):
            setattr(o, k, float(v))
        else:
            raise TypeError("webtensor: unknown AdamW option %r" % k)
    return o


def _options_xent(d):
    if d is None:
        return None
    o = _lib.new_cross_entropy_options()
    for k, v in d.items():
        if k == "reduction":
            o.reduction = _enum("reduction", v)
        elif k == "ignore_index":
            o.ignore_index = _index(v)
        else:
            raise TypeError("webtensor: unknown cross_entropy option %r" % k)
    return o


_new = object.__new__
_release_c = _L.wt_tensor_release


def _binary(name, reflected=False):
    def op(self, other):
        fn = getattr(_ops, name)
        if reflected:
            if isinstance(other, (int, float, np.number)):
                other = _scalar(other, self._ctx, self)
            return fn(other, self)
        return fn(self, other)
    op.__name__ = name
    return op


class Tensor:
    """An n-dimensional array on a context's device (wt_tensor).

    Made by wt.tensor(), the creation functions and ops. Freed when
    garbage-collected, by release(), or at the end of a `with` block."""
    __slots__ = ("_h", "_ctx", "__weakref__")
    # NumPy defers its operators to ours (ndarray + Tensor -> Tensor).
    __array_ufunc__ = None
    __array_priority__ = 1000

    def __init__(self, *a, **k):
        raise TypeError("webtensor: make tensors with wt.tensor(), wt.zeros() ...")

    # -- lifetime
    def release(self):
        """Frees the tensor now (views of it keep their storage). Using it
        afterwards raises InvalidArgumentError."""
        h, self._h = self._h, None
        if h:
            _release_c(h)

    def __del__(self):
        # Kept short: every op's result that is dropped comes through here.
        try:
            h = self._h
            if h:
                self._h = None
                _release_c(h)
        except Exception:  # __init__ refused to make it; interpreter shutdown
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()
        return False

    def _handle(self):
        h = self._h
        if h is None:
            raise InvalidArgumentError("webtensor: the tensor was released")
        return h

    # -- properties
    def _code(self):
        return _L.wt_tensor_dtype(self._handle())

    @property
    def shape(self):
        h = self._handle()
        n = _L.wt_tensor_ndim(h)
        return tuple(_L.wt_tensor_shape(h)[:n]) if n else ()

    @property
    def ndim(self):
        return _L.wt_tensor_ndim(self._handle())

    @property
    def size(self):
        return _L.wt_tensor_numel(self._handle())

    def numel(self):
        return self.size

    def dim(self):
        return self.ndim

    @property
    def dtype(self):
        return _NP_OF_CODE[self._code()]

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return self.size * self.itemsize

    @property
    def strides_elements(self):
        """Strides in elements (views have their own)."""
        h = self._handle()
        n = _L.wt_tensor_ndim(h)
        return tuple(_L.wt_tensor_strides(h)[:n]) if n else ()

    @property
    def is_contiguous(self):
        return bool(_L.wt_tensor_is_contiguous(self._handle()))

    @property
    def context(self):
        return self._ctx

    @property
    def device(self):
        return self._ctx.device

    @property
    def T(self):
        """Axes reversed (NumPy's .T), a view."""
        n = self.ndim
        return _ops.permute(self, list(range(n - 1, -1, -1))) if n > 1 else self

    @property
    def mT(self):
        return _ops.transpose(self, -2, -1)

    # -- to the host
    def numpy(self):
        """A NumPy array with a copy of the elements (waits for the device)."""
        h = self._handle()
        out = np.empty(self.shape, dtype=self.dtype)
        _check(_L.wt_tensor_read(h, out.ctypes.data, out.nbytes), "numpy")
        return out

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def tolist(self):
        return self.numpy().tolist()

    def item(self):
        if self.size != 1:
            raise ValueError("webtensor: item() needs one element, the tensor has %d" % self.size)
        return self.numpy().reshape(()).item()

    def __bool__(self):
        if self.size != 1:
            raise ValueError("webtensor: the truth value of a tensor of %d elements is "
                             "ambiguous; use .any() or .all()" % self.size)
        return bool(self.item())

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self._code() not in (2, 3):
            raise TypeError("webtensor: only integer tensors can be used as an index")
        return int(self.item())

    def __len__(self):
        s = self.shape
        if not s:
            raise TypeError("webtensor: len() of a 0-d tensor")
        return s[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __repr__(self):
        if self._h is None:
            return "tensor(<released>)"
        arr = self.numpy()
        body = np.array2string(arr, separator=", ", prefix="tensor(")
        return "tensor(%s, dtype=%s, device=%r)" % (body, arr.dtype, self.device)

    def __str__(self):
        return str(self.numpy()) if self._h is not None else "tensor(<released>)"

    def __format__(self, spec):
        if self.ndim == 0 and spec:
            return format(self.item(), spec)
        return str(self)

    # -- movement between contexts and dtypes
    def to(self, target):
        """A copy on another Context, or a cast to a dtype."""
        if isinstance(target, Context):
            h = _P()
            _check(_L.wt_tensor_to(self._handle(), target._handle(), _byref(h)), "to")
            return _wrap(h.value, target)
        return _ops.cast(self, target)

    def astype(self, dtype):
        return _ops.cast(self, dtype)

    def cpu(self):
        """This tensor as a NumPy array (PyTorch users' t.cpu().numpy())."""
        return self.numpy()

    # -- shapes (PyTorch's and NumPy's spellings)
    def reshape(self, *shape):
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = shape[0]
        return _ops.reshape(self, shape)

    view = reshape

    def transpose(self, *axes):
        """transpose(a, b) swaps two axes (PyTorch); transpose() or
        transpose(axes) permutes (NumPy)."""
        if len(axes) == 2 and all(isinstance(a, (int, np.integer)) for a in axes):
            return _ops.transpose(self, axes[0], axes[1])
        if not axes:
            return self.T
        if len(axes) == 1:
            axes = axes[0]
        return _ops.permute(self, axes)

    def permute(self, *dims):
        if len(dims) == 1 and not isinstance(dims[0], (int, np.integer)):
            dims = dims[0]
        return _ops.permute(self, dims)

    def expand(self, *shape):
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = shape[0]
        return _ops.expand(self, shape)

    def split(self, sizes, axis=0):
        return split(self, sizes, axis)

    def chunk(self, chunks, axis=0):
        return chunk(self, chunks, axis)

    def roll(self, shifts, axis=None):
        return roll(self, shifts, axis)

    # -- indexing
    def __getitem__(self, idx):
        return _getitem(self, idx)

    def __setitem__(self, idx, value):
        dst = _getitem(self, idx, for_write=True)
        if isinstance(value, (int, float, bool, np.number)):
            value = _scalar(value, self._ctx, dst)
        _ops.copy_into(dst, value)

    # -- operators
    __add__ = _binary("add")
    __radd__ = _binary("add", True)
    __sub__ = _binary("sub")
    __rsub__ = _binary("sub", True)
    __mul__ = _binary("mul")
    __rmul__ = _binary("mul", True)
    __truediv__ = _binary("div")
    __rtruediv__ = _binary("div", True)
    __floordiv__ = _binary("floor_divide")
    __rfloordiv__ = _binary("floor_divide", True)
    __mod__ = _binary("remainder")
    __rmod__ = _binary("remainder", True)
    __pow__ = _binary("pow")
    __rpow__ = _binary("pow", True)
    __matmul__ = _binary("matmul")
    __rmatmul__ = _binary("matmul", True)
    __lt__ = _binary("lt")
    __le__ = _binary("le")
    __gt__ = _binary("gt")
    __ge__ = _binary("ge")
    __eq__ = _binary("eq")
    __ne__ = _binary("ne")
    __hash__ = object.__hash__

    def _logical(self, other, name):
        if self._code() != 3:
            raise UnsupportedError("webtensor: & | ^ ~ take bool tensors (use logical_* ops)")
        return getattr(_ops, name)(self, other)

    def __and__(self, o):
        return self._logical(o, "logical_and")

    def __or__(self, o):
        return self._logical(o, "logical_or")

    def __xor__(self, o):
        return self._logical(o, "logical_xor")

    __rand__, __ror__, __rxor__ = __and__, __or__, __xor__

    def __invert__(self):
        if self._code() != 3:
            raise UnsupportedError("webtensor: ~ takes bool tensors")
        return _ops.logical_not(self)

    def __neg__(self):
        return _ops.neg(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _ops.abs(self)

    # DLPack: __dlpack__ and __dlpack_device__ are installed by _dlpack.py.


# -- indexing ----------------------------------------------------------------

def _getitem(t, idx, for_write=False):
    if not isinstance(idx, tuple):
        idx = (idx,)
    nd = t.ndim
    consuming = sum(1 for i in idx if i is not None and i is not Ellipsis)
    if sum(1 for i in idx if i is Ellipsis) > 1:
        raise IndexError("webtensor: an index can only have one ellipsis")
    if consuming > nd:
        raise IndexError("webtensor: too many indices for a tensor of %d dimensions" % nd)
    out = t
    axis = 0
    drop = []
    for i in idx:
        if i is Ellipsis:
            axis += nd - consuming
            continue
        if i is None:
            out = _ops.unsqueeze(out, axis)
            drop = [d + 1 if d >= axis else d for d in drop]
            axis += 1
            continue
        if isinstance(i, slice):
            dim = out.shape[axis]
            start, stop, step = i.indices(dim)
            if step > 0:
                if (start, stop, step) != (0, dim, 1):
                    out = _ops.slice(out, axis, start, stop, step)
            else:
                r = range(start, stop, step)
                if for_write:
                    raise IndexError("webtensor: assignment through a negative step is not "
                                     "supported (no view reverses an axis)")
                if len(r) == 0:
                    out = _ops.slice(out, axis, 0, 0, 1)
                else:
                    out = _ops.slice(out, axis, r[-1], r[0] + 1, -step)
                    out = _ops.flip(out, axis)
            axis += 1
            continue
        if isinstance(i, (int, np.integer)) or (isinstance(i, Tensor) and i.ndim == 0
                                                 and i._code() == 2):
            k = int(i)
            dim = out.shape[axis]
            if k < -dim or k >= dim:
                raise IndexError("webtensor: index %d is out of bounds for axis %d of size %d"
                                 % (k, axis, dim))
            k %= dim
            out = _ops.slice(out, axis, k, k + 1, 1)
            drop.append(axis)
            axis += 1
            continue
        # An integer array along one axis: index_select (a copy).
        if for_write:
            raise IndexError("webtensor: assignment through an index array is not supported")
        ix = i if isinstance(i, Tensor) else tensor(np.asarray(i), context=t._ctx)
        if ix._code() == 3:
            raise IndexError("webtensor: boolean masks give data-dependent shapes; use "
                             "where() or masked_fill()")
        if ix._code() != 2:
            raise IndexError("webtensor: index arrays must be integers")
        ishape = ix.shape
        flat = ix if ix.ndim == 1 else _ops.reshape(ix, [-1])
        out = _ops.index_select(out, axis, flat)
        if len(ishape) != 1:
            s = list(out.shape)
            out = _ops.reshape(out, s[:axis] + list(ishape) + s[axis + 1:])
        axis += len(ishape)
    if drop:
        out = _ops.squeeze(out, drop)
    return out


# -- ops with several results or arguments the generator does not describe -----

def split(x, sizes, axis=0):
    """Views of x along axis: pieces of `sizes` elements (an int, PyTorch's
    torch.split) or of the listed sizes."""
    x = _tensor(x, _ctx_of(x))
    dim = x.shape[axis]
    if isinstance(sizes, (int, np.integer)):
        if sizes <= 0:
            raise InvalidArgumentError("split: size must be positive")
        sizes = [min(sizes, dim - s) for s in range(0, dim, int(sizes))] or [0]
    n, arr = _int64s(sizes)
    outs = (_P * n)()
    s = _L.wt_split(x._h, _index(axis), n, arr, outs)
    if s:
        _fail(s, "split", x)
    return tuple(_wrap(h, x._ctx) for h in outs)


def chunk(x, chunks, axis=0):
    x = _tensor(x, _ctx_of(x))
    chunks = _index(chunks)
    if chunks < 1 or chunks > 4096:
        raise InvalidArgumentError("chunk: chunks must be in [1, 4096], not %d" % chunks)
    outs = (_P * chunks)()
    nout = _I()
    s = _L.wt_chunk(x._h, _index(axis), chunks, _byref(nout), outs)
    if s:
        _fail(s, "chunk", x)
    return tuple(_wrap(outs[i], x._ctx) for i in range(nout.value))


def roll(x, shifts, axis=None):
    x = _tensor(x, _ctx_of(x))
    n, sh = _int64s(shifts)
    na, ax = _axes(axis)
    if na and na != n:
        raise InvalidArgumentError("roll: shifts and axes differ in length")
    if not na and n != 1:
        raise InvalidArgumentError("roll: one shift without axes")
    out = _P()
    s = _L.wt_roll(x._h, na, sh, ax, _byref(out))
    if s:
        _fail(s, "roll", x)
    return _wrap(out.value, x._ctx)



