"""The network ops of webtensor under torch.nn.functional's names and
arguments (dim, kernel_size, stride, padding ...), over the generated op
wrappers."""
from .. import _ops
from .._ops import (relu, sigmoid, tanh, silu, mish, softplus, hardsigmoid,  # noqa: F401
                    hardswish, embedding, one_hot as _one_hot)


def gelu(x, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise ValueError("gelu: approximate must be 'none' or 'tanh'")
    return _ops.gelu(x) if approximate == "none" else _ops.gelu_tanh(x)


def leaky_relu(x, negative_slope=0.01):
    return _ops.leaky_relu(x, negative_slope)


def elu(x, alpha=1.0):
    return _ops.elu(x, alpha)


def softmax(x, dim=-1):
    return _ops.softmax(x, dim)


def log_softmax(x, dim=-1):
    return _ops.log_softmax(x, dim)


def linear(x, weight, bias=None):
    return _ops.linear(x, weight, bias)


def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    n = 1 if isinstance(normalized_shape, int) else len(normalized_shape)
    return _ops.layer_norm(x, n, weight, bias, eps)


def rms_norm(x, normalized_shape, weight=None, eps=1e-6):
    n = 1 if isinstance(normalized_shape, int) else len(normalized_shape)
    return _ops.rms_norm(x, n, weight, eps)


def group_norm(x, num_groups, weight=None, bias=None, eps=1e-5):
    return _ops.group_norm(x, num_groups, weight, bias, eps)


def batch_norm(x, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    return _ops.batch_norm(x, running_mean, running_var, weight, bias,
                           {"training": training, "momentum": momentum, "eps": eps})


def _conv_opts(stride, padding, dilation, groups, output_padding=None):
    o = {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups}
    if output_padding is not None:
        o["output_padding"] = output_padding
    return o


def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _ops.conv2d(x, weight, bias, _conv_opts(stride, padding, dilation, groups))


def conv1d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    # The C options are 2-D: a 1-D convolution uses their width entries.
    pad = padding if isinstance(padding, str) else (
        (0, 0, padding, padding) if isinstance(padding, int) else (0, 0) + tuple(padding))
    return _ops.conv1d(x, weight, bias, _conv_opts((1, stride), pad, (1, dilation), groups))


def conv_transpose2d(x, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _ops.conv_transpose2d(x, weight, bias,
                                 _conv_opts(stride, padding, dilation, groups, output_padding))


def max_pool2d(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    return _ops.max_pool2d(x, {"kernel": kernel_size, "stride": stride, "padding": padding,
                               "dilation": dilation, "ceil_mode": ceil_mode})


def avg_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return _ops.avg_pool2d(x, {"kernel": kernel_size, "stride": stride, "padding": padding,
                               "ceil_mode": ceil_mode, "count_include_pad": count_include_pad,
                               "divisor_override": divisor_override})


def _size2(s):
    return (s, s) if isinstance(s, int) else tuple(s)


def adaptive_avg_pool2d(x, output_size):
    h, w = _size2(output_size)
    return _ops.adaptive_avg_pool2d(x, h, w)


def adaptive_max_pool2d(x, output_size):
    h, w = _size2(output_size)
    return _ops.adaptive_max_pool2d(x, h, w)


def scaled_dot_product_attention(query, key, value, attn_mask=None, is_causal=False,
                                 scale=None):
    return _ops.scaled_dot_product_attention(query, key, value, attn_mask, is_causal,
                                             0.0 if scale is None else scale)


def dropout(x, p=0.5, training=True, seed=0):
    return _ops.dropout(x, p, seed) if training else x


def cross_entropy(input, target, reduction="mean", ignore_index=-100):
    return _ops.cross_entropy(input, target, {"reduction": reduction,
                                              "ignore_index": ignore_index})


def one_hot(tensor, num_classes=-1):
    return _one_hot(tensor, num_classes)


def pad(x, pad, mode="constant", value=0.0):
    return _ops.pad(x, pad, mode, value)
