"""Optimizers over the C library's tape gradients (include/webtensor.h,
"optimizers"), in PyTorch's spelling:

    opt = wt.optim.AdamW([w1, b1, w2, b2], lr=1e-3, weight_decay=0.01)
    for step in range(n):
        loss = model(x)
        loss.backward()
        wt.optim.clip_grad_norm_(opt.params, 1.0)     # optional, on the device
        opt.step()
        opt.zero_grad()

Parameter groups with their own weight decay, as PyTorch takes them:
    wt.optim.AdamW([{"params": decay}, {"params": no_decay, "weight_decay": 0.0}])

The state (SGD's momentum buffers, AdamW's moments) belongs to the C
optimizer object; parameters must be f32 leaves that require grad.
Learning-rate schedules: opt.set_schedule("cosine", lr=..., warmup_steps=...,
total_steps=..., min_lr=...) or "step" (step_size, gamma); schedule_lr
computes the same rates without an optimizer."""
import ctypes
import math

from . import _core
from ._lib import L as _L, proto as _proto, _checked_init, _P, _I, _B

_D = ctypes.c_double
_I64 = ctypes.c_int64
_byref = ctypes.byref


class LRScheduleOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("kind", _I), ("lr", _D), ("warmup_steps", _I64),
                ("step_size", _I64), ("gamma", _D), ("total_steps", _I64), ("min_lr", _D)]


_new_sgd = _core._new_sgd  # the option structs of the ops (wt_sgd_step, wt_adamw_step)
_new_adamw = _core._new_adamw
_new_schedule = _checked_init(LRScheduleOptions, "wt_lr_schedule_options_init")
_KINDS = {"constant": 0, "step": 1, "cosine": 2}

_proto("wt_optimizer_create_sgd", _I, ctypes.POINTER(_P), _P, ctypes.POINTER(_P))
_proto("wt_optimizer_create_adamw", _I, ctypes.POINTER(_P), _P, ctypes.POINTER(_P))
_proto("wt_optimizer_add_params", _P, _I, ctypes.POINTER(_P), _D)
_proto("wt_optimizer_step", _P)
_proto("wt_optimizer_zero_grad", _P)
_proto("wt_optimizer_set_lr", _P, _D)
_proto("wt_optimizer_lr", _P, restype=_D)
_proto("wt_optimizer_steps", _P, restype=_I64)
_proto("wt_optimizer_read_steps", _P, ctypes.POINTER(_I64))
_proto("wt_optimizer_clip_grad_norm", _P, _D, ctypes.POINTER(_P))
_proto("wt_optimizer_step_clipped", _P, _D, ctypes.POINTER(_P))
_proto("wt_optimizer_set_schedule", _P, _P)
_proto("wt_optimizer_release", _P, restype=None)
_proto("wt_clip_grad_norm", _I, ctypes.POINTER(_P), _D, ctypes.POINTER(_P))
_proto("wt_lr_schedule_at", _P, _I64, ctypes.POINTER(_D))


def _handles(ts):
    return (_P * len(ts))(*[t._handle() for t in ts])


def _groups(params, weight_decay):
    """[(tensors, weight_decay)] from a list of tensors or of group dicts."""
    params = list(params)
    if not params:
        raise _core.InvalidArgumentError("optimizer: an empty parameter list")
    if all(isinstance(p, dict) for p in params):
        return [(list(g["params"]), float(g.get("weight_decay", weight_decay))) for g in params]
    if any(isinstance(p, dict) for p in params):
        raise _core.InvalidArgumentError("optimizer: either tensors or parameter groups, not both")
    return [(params, float(weight_decay))]


def _schedule(kind, lr, warmup_steps, total_steps, min_lr, step_size, gamma):
    if kind not in _KINDS:
        raise _core.InvalidArgumentError("schedule: kind is one of %s" % ", ".join(_KINDS))
    s = _new_schedule()
    s.kind = _KINDS[kind]
    s.lr = float(lr)
    s.warmup_steps = int(warmup_steps)
    s.total_steps = int(total_steps)
    s.min_lr = float(min_lr)
    s.step_size = int(step_size)
    s.gamma = float(gamma)
    return s


def schedule_lr(step, kind="cosine", lr=1e-3, warmup_steps=0, total_steps=1, min_lr=0.0, step_size=1,
                gamma=0.1):
    """The learning rate of a schedule at step (counted from 0)."""
    out = _D()
    s = _schedule(kind, lr, warmup_steps, total_steps, min_lr, step_size, gamma)
    _core._check(_L.wt_lr_schedule_at(_byref(s), int(step), _byref(out)), "schedule_lr")
    return out.value


def clip_grad_norm_(parameters, max_norm):
    """torch.nn.utils.clip_grad_norm_: scales the gradients in place (on the
    device) so that their global 2-norm is at most max_norm; returns the norm
    before clipping as a 0-d Tensor (reading it waits for the device)."""
    ps = [parameters] if isinstance(parameters, _core.Tensor) else list(parameters)
    if not ps:
        raise _core.InvalidArgumentError("clip_grad_norm_: no parameters")
    h = _P()
    _core._check(_L.wt_clip_grad_norm(len(ps), _handles(ps), float(max_norm), _byref(h)), "clip_grad_norm_")
    return _core._wrap(h.value, ps[0]._ctx)


class Optimizer:
    """The C optimizer object; see SGD and AdamW."""

    def __init__(self, create, groups, opts):
        first, wd0 = groups[0]
        h = _P()
        _core._check(create(len(first), _handles(first), _byref(opts), _byref(h)), type(self).__name__)
        self._h = h.value
        self.params = list(first)
        for ts, wd in groups[1:]:
            self.add_param_group({"params": ts, "weight_decay": wd})

    def add_param_group(self, group):
        ts = list(group["params"])
        wd = float(group.get("weight_decay", 0.0))
        _core._check(_L.wt_optimizer_add_params(self._h, len(ts), _handles(ts), wd), "add_param_group")
        self.params.extend(ts)

    def step(self):
        """Updates every parameter that has a gradient, in place."""
        _core._check(_L.wt_optimizer_step(self._h), "step")

    def zero_grad(self, set_to_none=True):
        if not set_to_none:
            raise _core.InvalidArgumentError("zero_grad: gradients are always dropped (set_to_none=True)")
        _core._check(_L.wt_optimizer_zero_grad(self._h), "zero_grad")

    def clip_grad_norm_(self, max_norm):
        """clip_grad_norm_ over this optimizer's parameters."""
        h = _P()
        _core._check(_L.wt_optimizer_clip_grad_norm(self._h, float(max_norm), _byref(h)), "clip_grad_norm_")
        return _core._wrap(h.value, self.params[0]._ctx)

    def step_clipped(self, max_norm):
        """clip_grad_norm_ then step in one, the factor applied inside the
        update: the gradients keep their values. Returns the global norm."""
        h = _P()
        _core._check(_L.wt_optimizer_step_clipped(self._h, float(max_norm), _byref(h)), "step_clipped")
        return _core._wrap(h.value, self.params[0]._ctx)

    @property
    def lr(self):
        """The learning rate of the next step (the schedule's when one is set)."""
        return _L.wt_optimizer_lr(self._h)

    @lr.setter
    def lr(self, value):
        _core._check(_L.wt_optimizer_set_lr(self._h, float(value)), "lr")

    @property
    def steps(self):
        """The host's count of steps: a step captured in a graph counts
        once, its replays not (read_steps counts them)."""
        return _L.wt_optimizer_steps(self._h)

    def read_steps(self):
        """The steps taken on the device, replays of a captured step
        included (waits for the device)."""
        n = _I64()
        _core._check(_L.wt_optimizer_read_steps(self._h, _byref(n)), "read_steps")
        return n.value

    def set_schedule(self, kind=None, lr=1e-3, warmup_steps=0, total_steps=1, min_lr=0.0, step_size=1,
                     gamma=0.1):
        """Steps follow a schedule ("constant", "step", "cosine"); None: back
        to the set learning rate."""
        if kind is None:
            _core._check(_L.wt_optimizer_set_schedule(self._h, None), "set_schedule")
            return
        s = _schedule(kind, lr, warmup_steps, total_steps, min_lr, step_size, gamma)
        _core._check(_L.wt_optimizer_set_schedule(self._h, _byref(s)), "set_schedule")

    def close(self):
        if getattr(self, "_h", None):
            _L.wt_optimizer_release(self._h)
            self._h = None

    def __del__(self):
        self.close()


class SGD(Optimizer):
    """torch.optim.SGD (the momentum buffer starts at the first gradient)."""

    def __init__(self, params, lr=0.01, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        groups = _groups(params, weight_decay)
        o = _new_sgd()
        o.lr, o.momentum, o.dampening = float(lr), float(momentum), float(dampening)
        o.weight_decay, o.nesterov = groups[0][1], bool(nesterov)
        super().__init__(_L.wt_optimizer_create_sgd, groups, o)


class AdamW(Optimizer):
    """torch.optim.AdamW."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
        groups = _groups(params, weight_decay)
        o = _new_adamw()
        o.lr, o.beta1, o.beta2, o.eps = float(lr), float(betas[0]), float(betas[1]), float(eps)
        o.weight_decay = groups[0][1]
        if not math.isfinite(o.weight_decay):
            raise _core.InvalidArgumentError("AdamW: weight_decay must be finite")
        super().__init__(_L.wt_optimizer_create_adamw, groups, o)


class GradScalerOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("init_scale", _D), ("growth_factor", _D),
                ("backoff_factor", _D), ("growth_interval", _I64)]


_new_scaler_options = _checked_init(GradScalerOptions, "wt_grad_scaler_options_init")
_proto("wt_grad_scaler_create", _P, _P, ctypes.POINTER(_P))
_proto("wt_grad_scaler_scale", _P, _P, ctypes.POINTER(_P))
_proto("wt_grad_scaler_unscale", _P, _P)
_proto("wt_grad_scaler_step", _P, _P)
_proto("wt_grad_scaler_current_scale", _P, ctypes.POINTER(_P))
_proto("wt_grad_scaler_found_inf", _P, ctypes.POINTER(_P))
_proto("wt_grad_scaler_release", _P, restype=None)


class GradScaler:
    """torch.cuda.amp.GradScaler on the C scaler: the overflow check, the
    skipped step and the scale's update happen on the device (step()
    includes PyTorch's update(), which is a no-op here). Unlike PyTorch, a
    skipped step still counts in the optimizer's step number."""

    def __init__(self, init_scale=65536.0, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 context=None):
        o = _new_scaler_options()
        o.init_scale, o.growth_factor, o.backoff_factor = float(init_scale), float(growth_factor), float(backoff_factor)
        o.growth_interval = int(growth_interval)
        self._ctx = context or _core.default_context()
        h = _P()
        _core._check(_L.wt_grad_scaler_create(self._ctx._handle(), _byref(o), _byref(h)), "GradScaler")
        self._h = h.value

    def scale(self, loss):
        """loss * scale (recorded)."""
        h = _P()
        _core._check(_L.wt_grad_scaler_scale(self._h, loss._handle(), _byref(h)), "scale")
        return _core._wrap(h.value, loss._ctx)

    def unscale_(self, optimizer):
        _core._check(_L.wt_grad_scaler_unscale(self._h, optimizer._h), "unscale_")

    def step(self, optimizer):
        _core._check(_L.wt_grad_scaler_step(self._h, optimizer._h), "step")

    def update(self):
        """Nothing: step() updated the scale already (on the device)."""

    def _read(self, fn, what):
        h = _P()
        _core._check(fn(self._h, _byref(h)), what)
        return float(_core._wrap(h.value, self._ctx).numpy())

    def get_scale(self):
        """The current scale (waits for the device)."""
        return self._read(_L.wt_grad_scaler_current_scale, "get_scale")

    @property
    def found_inf(self):
        """Whether the last step found a gradient that is not finite (waits for the device)."""
        return self._read(_L.wt_grad_scaler_found_inf, "found_inf") != 0.0

    def close(self):
        if getattr(self, "_h", None):
            _L.wt_grad_scaler_release(self._h)
            self._h = None

    def __del__(self):
        self.close()
