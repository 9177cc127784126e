"""webtensor for Python: tensors on any GPU through WebGPU, or on the CPU.

    import webtensor as wt
    x = wt.tensor([[1.0, 2.0], [3.0, 4.0]])
    y = (x @ x.T).softmax(-1)
    print(y.numpy())

The package calls libwebtensor through ctypes. Every op of the library's
catalogue is a function here and, when its first argument is a tensor, a
method of Tensor; the wrappers are generated from the catalogue
(python/gen_ops.py). Errors the library reports raise subclasses of
WebtensorError carrying its message.
"""
from . import _core, _lib, _ops
from ._core import (Context, Tensor, WebtensorError, InvalidArgumentError, ShapeError,
                    OutOfMemoryError, NoDeviceError, DeviceLostError, UnsupportedError,
                    ShaderError, BackendError, ERRORS, default_context, set_default_context,
                    tensor, from_numpy, split, chunk, roll,
                    float32, float16, int32, bool_)
from .tokenizer import Tokenizer  # noqa: F401 (text <-> token ids)
from ._decode import linear_fused, rope_kv_cache  # noqa: F401 (decode-step fusions)
from ._dlpack import from_dlpack  # also installs Tensor.__dlpack__ / __dlpack_device__
from ._ops import *  # noqa: F401,F403 (every op of the catalogue)
from ._ops import OPS, ALIASES, METHODS, HAND_WRITTEN, NOT_BOUND

_core._ops = _ops
# The operators without a reflected form call the op wrappers directly.
for _op, _name in (("add", "add"), ("sub", "sub"), ("mul", "mul"), ("truediv", "div"),
                   ("floordiv", "floor_divide"), ("mod", "remainder"), ("pow", "pow"),
                   ("matmul", "matmul"), ("lt", "lt"), ("le", "le"), ("gt", "gt"),
                   ("ge", "ge"), ("eq", "eq"), ("ne", "ne")):
    setattr(Tensor, "__%s__" % _op, getattr(_ops, _name))
asarray = tensor
bool = bool_  # NumPy's and PyTorch's spelling (wt.bool); the builtin is not needed here
half = float16
float = float32  # noqa: A001 (PyTorch's torch.float)
int = int32  # noqa: A001 (an int32 library: PyTorch's torch.int)
__version__ = _lib.L.wt_version().decode()
library_path = _lib.LIBRARY_PATH

# Ops whose first argument is a tensor are methods too (t.exp(), t.sum(axis=1)),
# under their aliases as well; Tensor's own definitions come first.
for _name in METHODS:
    if not hasattr(Tensor, _name):
        setattr(Tensor, _name, getattr(_ops, _name))
for _alias, _target in ALIASES.items():
    if _target in METHODS and not hasattr(Tensor, _alias):
        setattr(Tensor, _alias, getattr(_ops, _target))
Tensor.astype = Tensor.astype  # keep NumPy's name next to cast


def catalogue():
    """The library's op catalogue: (name, family) for every op it has."""
    L = _lib.L
    return [(L.wt_op_name(i).decode(), L.wt_op_family(i).decode())
            for i in range(L.wt_op_count())]


def zeros_like(x, dtype=None):
    return zeros(x.shape, x.dtype if dtype is None else dtype, context=x.context)  # noqa: F405


def ones_like(x, dtype=None):
    return ones(x.shape, x.dtype if dtype is None else dtype, context=x.context)  # noqa: F405


def full_like(x, value, dtype=None):
    return full(x.shape, value, x.dtype if dtype is None else dtype,  # noqa: F405
                context=x.context)


from . import nn  # noqa: E402
from . import autograd  # noqa: E402  (adds requires_grad, grad, backward to Tensor)
from .autograd import no_grad, grad, is_grad_enabled  # noqa: E402
from . import optim  # noqa: E402  (SGD, AdamW, clip_grad_norm_, schedules)
del _name, _alias, _target, _op
