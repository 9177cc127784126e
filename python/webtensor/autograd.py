"""Reverse-mode automatic differentiation over the C library's tape
(include/webtensor.h, "autograd"), in PyTorch's spelling:

    w = wt.tensor(np.random.rand(3, 4).astype(np.float32))
    w.requires_grad = True
    loss = wt.cross_entropy(wt.linear(x, w), labels)
    loss.backward()
    w.grad            # a Tensor, or None before any backward
    w.grad = None     # zero_grad(set_to_none=True)
    with wt.no_grad(): ...

Gradients are f32 and accumulate over backward calls until cleared, as in
PyTorch; higher-order gradients are not supported."""
import ctypes

from . import _core
from ._lib import L as _L, proto as _proto, _P, _I, _B

_byref = ctypes.byref


class BackwardOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("retain_graph", _B)]


_proto("wt_tensor_set_requires_grad", _P, _B)
_proto("wt_tensor_requires_grad", _P, restype=_B)
_proto("wt_tensor_grad", _P, ctypes.POINTER(_P))
_proto("wt_tensor_zero_grad", _P)
_proto("wt_backward", _P)
_proto("wt_backward_options_init", _P, restype=None)
_proto("wt_backward_ex", _I, ctypes.POINTER(_P), ctypes.POINTER(_P), _P)
_proto("wt_grad", _I, ctypes.POINTER(_P), ctypes.POINTER(_P), _I, ctypes.POINTER(_P), _P, ctypes.POINTER(_P))
_proto("wt_detach", _P, ctypes.POINTER(_P))
_proto("wt_no_grad_begin", _P)
_proto("wt_no_grad_end", _P)
_proto("wt_grad_enabled", _P, restype=_B)


def _options(retain_graph):
    o = BackwardOptions()
    _L.wt_backward_options_init(_byref(o))
    if o.struct_size != ctypes.sizeof(o):
        raise _core.BackendError("webtensor: wt_backward_options does not match this package")
    o.retain_graph = bool(retain_graph)
    return o


def _handles(ts):
    return (_P * len(ts))(*[t._handle() if t is not None else None for t in ts])


def backward(tensors, grad_tensors=None, retain_graph=False):
    """torch.autograd.backward: accumulates into the leaves' .grad."""
    if isinstance(tensors, _core.Tensor):
        tensors = [tensors]
    tensors = list(tensors)
    if grad_tensors is None:
        grad_tensors = [None] * len(tensors)
    elif isinstance(grad_tensors, _core.Tensor):
        grad_tensors = [grad_tensors]
    seeds = [None if g is None else _core._tensor(g, t._ctx) for g, t in zip(grad_tensors, tensors)]
    if len(seeds) != len(tensors):
        raise _core.InvalidArgumentError("backward: one seed gradient per tensor")
    o = _options(retain_graph)
    _core._check(_L.wt_backward_ex(len(tensors), _handles(tensors), _handles(seeds), _byref(o)), "backward")


def grad(outputs, inputs, grad_outputs=None, retain_graph=False):
    """torch.autograd.grad: d(outputs)/d(inputs), leaving every .grad as it
    is; a tuple with None where an input does not reach the outputs."""
    single = isinstance(inputs, _core.Tensor)
    if isinstance(outputs, _core.Tensor):
        outputs = [outputs]
    if single:
        inputs = [inputs]
    outputs, inputs = list(outputs), list(inputs)
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    elif isinstance(grad_outputs, _core.Tensor):
        grad_outputs = [grad_outputs]
    seeds = [None if g is None else _core._tensor(g, o._ctx) for g, o in zip(grad_outputs, outputs)]
    out = (_P * len(inputs))()
    o = _options(retain_graph)
    _core._check(_L.wt_grad(len(outputs), _handles(outputs), _handles(seeds), len(inputs), _handles(inputs),
                            _byref(o), out), "grad")
    res = tuple(_core._wrap(out[i], inputs[i]._ctx) if out[i] else None for i in range(len(inputs)))
    return res


class no_grad:
    """with wt.no_grad(): nothing is recorded on the context (the default
    one unless given)."""

    def __init__(self, ctx=None):
        self._ctx = ctx

    def __enter__(self):
        ctx = self._ctx or _core.default_context()
        self._ctx = ctx
        _core._check(_L.wt_no_grad_begin(ctx._handle()), "no_grad")
        return self

    def __exit__(self, *exc):
        _core._check(_L.wt_no_grad_end(self._ctx._handle()), "no_grad")
        return False


def is_grad_enabled(ctx=None):
    ctx = ctx or _core.default_context()
    return bool(_L.wt_grad_enabled(ctx._handle()))


# --- the Tensor side: requires_grad, grad, backward, detach


def _get_requires_grad(self):
    return bool(_L.wt_tensor_requires_grad(self._handle()))


def _set_requires_grad(self, value):
    _core._check(_L.wt_tensor_set_requires_grad(self._handle(), bool(value)), "requires_grad")


def _get_grad(self):
    h = _P()
    _core._check(_L.wt_tensor_grad(self._handle(), _byref(h)), "grad")
    return _core._wrap(h.value, self._ctx) if h.value else None


def _set_grad(self, value):
    if value is not None:
        raise _core.InvalidArgumentError("grad: only None can be assigned (it clears the gradient)")
    _core._check(_L.wt_tensor_zero_grad(self._handle()), "grad")


def _backward(self, gradient=None, retain_graph=False):
    """Backward from this tensor (one element, or with gradient of its shape)."""
    if gradient is None and not retain_graph:
        _core._check(_L.wt_backward(self._handle()), "backward")
    else:
        backward([self], None if gradient is None else [gradient], retain_graph)


def _detach(self):
    h = _P()
    _core._check(_L.wt_detach(self._handle(), _byref(h)), "detach")
    return _core._wrap(h.value, self._ctx)


def _requires_grad_(self, value=True):
    _set_requires_grad(self, value)
    return self


def _zero_grad(self):
    _set_grad(self, None)


_core.Tensor.requires_grad = property(_get_requires_grad, _set_requires_grad)
_core.Tensor.grad = property(_get_grad, _set_grad)
_core.Tensor.backward = _backward
_core.Tensor.detach = _detach
_core.Tensor.requires_grad_ = _requires_grad_
_core.Tensor.zero_grad = _zero_grad
