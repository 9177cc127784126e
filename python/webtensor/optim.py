"""Optimizers in PyTorch's spelling over the library's in-place steps
(wt_sgd_step, wt_adamw_step):

    opt = wt.optim.AdamW(params, lr=1e-3, weight_decay=0.01)
    loss.backward()
    opt.step()
    opt.zero_grad()

Parameters are float32 contiguous tensors that require grad; their state
(momentum buffers, Adam's moments) lives on their context. A step runs
with recording off and skips parameters without a gradient, as PyTorch's
do. param_groups holds each group's hyperparameters (change "lr" there
for a schedule)."""
import ctypes

from . import _core, _lib
from ._lib import L as _L, proto as _proto, _P, _I64, _D, _B

_byref = ctypes.byref


class SGDOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("lr", _D), ("momentum", _D),
                ("dampening", _D), ("weight_decay", _D), ("nesterov", _B)]


class AdamWOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("lr", _D), ("beta1", _D), ("beta2", _D),
                ("eps", _D), ("weight_decay", _D)]


_new_sgd_options = _lib._checked_init(SGDOptions, "wt_sgd_options_init")
_new_adamw_options = _lib._checked_init(AdamWOptions, "wt_adamw_options_init")
_proto("wt_sgd_step", _P, _P, _P, _P)
_proto("wt_adamw_step", _P, _P, _P, _P, _I64, _P)
_grad_of = _L.wt_tensor_grad
_zero_grad = _L.wt_tensor_zero_grad
_release = _L.wt_tensor_release


class Optimizer:
    """The part every optimizer shares: parameter groups, zero_grad, and a
    step that visits each parameter with a gradient."""

    def __init__(self, params, defaults):
        params = list(params)
        if not params:
            raise ValueError("webtensor: the optimizer got an empty parameter list")
        if isinstance(params[0], dict):
            groups = params
        else:
            groups = [{"params": params}]
        self.defaults = dict(defaults)
        self.param_groups = []
        for g in groups:
            g = dict(g)
            g["params"] = list(g["params"])
            for p in g["params"]:
                if not isinstance(p, _core.Tensor):
                    raise TypeError("webtensor: optimizers take Tensors, not %s" % type(p).__name__)
            for k, v in self.defaults.items():
                g.setdefault(k, v)
            self._check(g)
            self.param_groups.append(g)
        self.state = {}  # id(param) -> that parameter's state (a dict)

    def _check(self, group):
        if group["lr"] < 0:
            raise ValueError("webtensor: lr must be >= 0, not %r" % group["lr"])

    def zero_grad(self, set_to_none=True):
        """Clears every parameter's gradient (the library keeps no zeroed
        gradient: None is what PyTorch's default leaves too)."""
        for g in self.param_groups:
            for p in g["params"]:
                _core._check(_zero_grad(p._handle()), "zero_grad")

    def step(self, closure=None):
        loss = closure() if closure is not None else None
        if not self.param_groups:
            return loss
        ctx = self.param_groups[0]["params"][0]._ctx
        _core._check(_L.wt_no_grad_begin(ctx._handle()), "step")
        try:
            for g in self.param_groups:
                opts = self._options(g)
                for p in g["params"]:
                    h = p._handle()
                    grad = _P()
                    _core._check(_grad_of(h, _byref(grad)), "step")
                    if not grad.value:
                        continue
                    try:
                        self._update(p, grad.value, g, opts)
                    finally:
                        _release(grad.value)
        finally:
            _L.wt_no_grad_end(ctx._handle())
        return loss

    def _state(self, p):
        s = self.state.get(id(p))
        if s is None or s["param"]() is not p:
            import weakref
            s = self.state[id(p)] = {"param": weakref.ref(p), "step": 0}
        return s

    def state_of(self, p):
        """The state kept for parameter p (PyTorch's optimizer.state[p])."""
        s = self.state.get(id(p))
        return {k: v for k, v in s.items() if k != "param"} if s else {}


class SGD(Optimizer):
    """torch.optim.SGD: lr, momentum, dampening, weight_decay (L2, added
    to the gradient), nesterov; the same updates, the first momentum step
    included (buf starts as the first gradient)."""

    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0,
                 nesterov=False):
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("webtensor: nesterov needs momentum > 0 and dampening 0")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov))

    def _check(self, g):
        super()._check(g)
        if g["momentum"] < 0 or g["weight_decay"] < 0:
            raise ValueError("webtensor: momentum and weight_decay must be >= 0")

    def _options(self, g):
        o = _new_sgd_options()
        o.lr, o.momentum, o.dampening = g["lr"], g["momentum"], g["dampening"]
        o.weight_decay, o.nesterov = g["weight_decay"], bool(g["nesterov"])
        return o

    def _update(self, p, grad, g, opts):
        s = self._state(p)
        buf = None
        if g["momentum"] != 0:
            buf = s.get("momentum_buffer")
            if buf is None:
                # The library's buffer starts at zeros and PyTorch's at the
                # first gradient d (weight decay included): starting it at
                # d * dampening / momentum makes the library's first update
                # momentum * buf + (1 - dampening) * d equal d.
                buf = _core._ops.zeros(p.shape, context=p._ctx)
                if g["dampening"] != 0:
                    d = _core._wrap(grad, p._ctx)
                    _L.wt_tensor_retain(grad)
                    if g["weight_decay"]:
                        d = d + p * g["weight_decay"]
                    _core._ops.copy_into(buf, d * (g["dampening"] / g["momentum"]))
                s["momentum_buffer"] = buf
        s["step"] += 1
        st = _L.wt_sgd_step(p._h, grad, buf._h if buf is not None else None, _byref(opts))
        if st:
            raise _core._error(st, "SGD.step")


class AdamW(Optimizer):
    """torch.optim.AdamW: lr, betas, eps, weight_decay (decoupled)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay))

    def _check(self, g):
        super()._check(g)
        b1, b2 = g["betas"]
        if not (0 <= b1 < 1 and 0 <= b2 < 1) or g["eps"] < 0 or g["weight_decay"] < 0:
            raise ValueError("webtensor: betas must be in [0, 1), eps and weight_decay >= 0")

    def _options(self, g):
        o = _new_adamw_options()
        o.lr, (o.beta1, o.beta2), o.eps = g["lr"], g["betas"], g["eps"]
        o.weight_decay = g["weight_decay"]
        return o

    def _update(self, p, grad, g, opts):
        s = self._state(p)
        if "exp_avg" not in s:
            s["exp_avg"] = _core._ops.zeros(p.shape, context=p._ctx)
            s["exp_avg_sq"] = _core._ops.zeros(p.shape, context=p._ctx)
        s["step"] += 1
        st = _L.wt_adamw_step(p._h, grad, s["exp_avg"]._h, s["exp_avg_sq"]._h, s["step"],
                              _byref(opts))
        if st:
            raise _core._error(st, "AdamW.step")


class Adam(AdamW):
    """torch.optim.Adam: weight_decay is L2 (added to the gradient), not
    decoupled; 0 by default, where Adam and AdamW are the same update."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)

    def _options(self, g):
        o = super()._options(g)
        o.weight_decay = 0.0
        return o

    def _update(self, p, grad, g, opts):
        if g["weight_decay"]:
            d = _core._wrap(grad, p._ctx)
            _L.wt_tensor_retain(grad)
            d = d + p * g["weight_decay"]
            return super()._update(p, d._h, g, opts)
        return super()._update(p, grad, g, opts)
