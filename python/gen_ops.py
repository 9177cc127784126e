#!/usr/bin/env python3
"""Generates the Python op wrappers from the library's op tables.

    python3 python/gen_ops.py [--check]

reads src/core/ops.def, src/core/reduce_ops.def, include/webtensor.h (with
its parts) and the op signatures shared with the JavaScript API
(web/ops_spec.mjs), and writes python/webtensor/_ops.py (one function per
op, with its C prototype for ctypes) and python/webtensor/_ops.pyi (its
type stubs). An op added to the catalogue is offered in Python, or this
script says why not. --check
compares instead of writing and fails when the files are out of date (the
test suite runs it, so the committed files cannot drift).
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT_DIR = os.path.join(HERE, "webtensor")


def read(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read()


def read_header():
    """include/webtensor.h with each part it includes (webtensor/*.h) in
    its place: the declarations in the order a program sees them."""
    return re.sub(r'^#include "(webtensor/\w+\.h)"$', lambda m: read("include/" + m.group(1)),
                  read("include/webtensor.h"), flags=re.M)


def rows(text, macro):
    return [[s.strip() for s in m.group(1).split(",")]
            for m in re.finditer(r"^%s\(([^)]*)" % macro, text, re.M)]


def js_object(text, name):
    """The body of `export const NAME = { ... };` in web/ops_spec.mjs."""
    m = re.search(r"export const %s = (\{.*?\n\}|\[.*?\]|\{.*?\});" % name, text, re.S)
    if not m:
        raise SystemExit("gen_ops: %s not found in web/ops_spec.mjs" % name)
    return m.group(1)


def js_string_map(body):
    return {k: v for k, v in re.findall(r"^\s*(\w+): '([^']*)',", body, re.M)}


def js_string_list(body):
    return re.findall(r"'(\w+)'", body)


def js_enums(body):
    enums = {}
    for name, inner in re.findall(r"(\w+): \{([^}]*)\}", body):
        enums[name] = {k: int(v) for k, v in re.findall(r"(\w+): (-?\d+)", inner)}
    return enums


def c_params(header, fn):
    m = re.search(r"\b%s\(([^)]*)\)" % fn, header)
    if not m:
        raise SystemExit("gen_ops: %s is not declared in include/webtensor.h" % fn)
    return [re.split(r"[\s*]+", p.strip())[-1] for p in m.group(1).split(",")]


# PyTorch's defaults for the scalar parameters of unary ops.
UNARY_DEFAULTS = {"leaky_relu": ["0.01"], "elu": ["1.0"], "clamp": ["-inf", "inf"]}

# Names NumPy and PyTorch users look for.
ALIASES = {
    "subtract": "sub", "multiply": "mul", "divide": "div", "true_divide": "div",
    "negative": "neg", "absolute": "abs", "power": "pow", "greater": "gt", "less": "lt",
    "equal": "eq", "not_equal": "ne", "greater_equal": "ge", "less_equal": "le",
    "clip": "clamp", "cat": "concat", "concatenate": "concat", "amax": "max", "amin": "min",
    "index_put": None,
}

# Python spellings of the JavaScript defaults.
PY_DEFAULTS = {"null": "None", "false": "False", "true": "True", "Infinity": "_INT64_MAX",
               "-Infinity": "-_INF", "f32": "'float32'"}

# ctypes argument types of each parameter kind, in C order.
CTYPES = {
    "T": ["_P"], "T?": ["_P"], "TN": ["_P"], "i": ["_I"], "I": ["_I64"], "U64": ["_U64"],
    "d": ["_D"], "f": ["_F"], "b": ["_B"], "dtype": ["_I"], "axes": ["_I", "_P"],
    "shape": ["_I", "_P"], "perm": ["_P"], "i64s": ["_I", "_P"], "tensors": ["_I", "_P"],
    "conv": ["_P"], "pool": ["_P"], "bnorm": ["_P"], "xent": ["_P"], "sgd": ["_P"], "adamw": ["_P"],
    "padmode": ["_I"],
    "ropelayout": ["_I"], "act": ["_I"], "interpmode": ["_I"],
}
PYI = {
    "T": "TensorLike", "T?": "Optional[TensorLike]", "TN": "Union[TensorLike, float]",
    "i": "int", "I": "int", "U64": "int", "d": "float", "f": "float", "b": "bool",
    "dtype": "DTypeLike", "axes": "Union[None, int, Sequence[int]]", "shape": "Sequence[int]",
    "perm": "Sequence[int]", "i64s": "Sequence[int]", "tensors": "Sequence[TensorLike]",
    "conv": "Optional[Mapping[str, Any]]", "pool": "Mapping[str, Any]",
    "bnorm": "Optional[Mapping[str, Any]]", "xent": "Optional[Mapping[str, Any]]",
    "sgd": "Optional[Mapping[str, Any]]", "adamw": "Optional[Mapping[str, Any]]",
    "padmode": "str", "ropelayout": "str", "act": "str", "interpmode": "str",
}


# Ops JavaScript does not offer yet (web/ops_spec.mjs, NOT_BOUND) that the
# package writes by hand: their option structs hold tensors
# (python/webtensor/_decode.py).
PY_HAND_WRITTEN = ["linear_fused", "rope_kv_cache"]


def build_specs():
    ops_def = read("src/core/ops.def")
    reduce_def = read("src/core/reduce_ops.def")
    header = read_header()
    spec_js = read("web/ops_spec.mjs")
    kernel_ops = js_string_map(js_object(spec_js, "KERNEL_OPS"))
    hand_written = js_string_list(js_object(spec_js, "HAND_WRITTEN"))
    not_bound = js_string_list(js_object(spec_js, "NOT_BOUND"))
    hand_written = hand_written + [n for n in PY_HAND_WRITTEN if n not in hand_written]
    not_bound = [n for n in not_bound if n not in PY_HAND_WRITTEN]
    c_names = dict(re.findall(r"(\w+): '(\w+)'", js_object(spec_js, "C_NAMES")))
    reduce_special = js_string_list(js_object(spec_js, "REDUCE_SPECIAL"))
    enums = js_enums(js_object(spec_js, "ENUMS"))

    specs = {}
    for r in rows(ops_def, "WT_UNARY"):
        name, nparams = r[1], int(r[3])
        names = c_params(header, "wt_" + name)[1:1 + nparams]
        defs = UNARY_DEFAULTS.get(name, [])
        specs[name] = " ".join(["T:x"] + ["d:%s%s" % (p, "=" + defs[i] if i < len(defs) else "")
                                          for i, p in enumerate(names)])
    binary = [r[1] for r in rows(ops_def, "WT_BINARY")]
    for name in binary:
        specs[name] = "T:a TN:b"
    kernels = [(r[1], r[2].strip('"')) for r in rows(ops_def, "WT_KERNEL")]
    reduce_names = {r[1] for r in rows(reduce_def, "WT_REDUCE_OP")}
    for name, family in kernels:
        if family == "reduce" and name not in reduce_special:
            specs[name] = "T:x axes:axis=null b:keepdims=false"
    for r in reduce_names:
        if r not in specs and r not in kernel_ops and not r.startswith("norm"):
            raise SystemExit("gen_ops: reduction %s of reduce_ops.def has no Python form" % r)
    specs.update(kernel_ops)
    missing = [n for n, _ in kernels
               if n not in specs and n not in hand_written and n not in not_bound]
    if missing:
        raise SystemExit("gen_ops: ops without a Python form: %s (add them to web/ops_spec.mjs)"
                         % ", ".join(missing))
    families = dict(kernels)
    for name in binary:
        families[name] = "elementwise"
    for r in rows(ops_def, "WT_UNARY"):
        families[r[1]] = "elementwise"
    table = [parse(n, specs[n], c_names, families.get(n, "creation")) for n in sorted(specs)]
    return table, hand_written, not_bound, enums, [n for n, _ in kernels] + binary + [
        r[1] for r in rows(ops_def, "WT_UNARY")]


def parse(name, text, c_names, family):
    js, _, c = text.partition("|")
    params = []
    for tok in js.split():
        m = re.match(r"^([\w?]+):(\w+)(?:=(.*))?$", tok)
        if not m:
            raise SystemExit("gen_ops: %s: bad parameter %r" % (name, tok))
        params.append({"kind": m.group(1), "name": m.group(2), "def": m.group(3)})
    call = c.split() if c.strip() else [p["name"] for p in params] + ["@out"]
    return {"name": name, "c": c_names.get(name, "wt_" + name), "params": params, "call": call,
            "family": family, "outs": call.count("@out"),
            "method": bool(params) and params[0]["kind"] == "T"}


def py_default(p):
    d = p["def"]
    if d is None:
        return None
    if d.startswith("@"):
        return "None"  # the value of another parameter, filled in the body
    if d in PY_DEFAULTS:
        return PY_DEFAULTS[d]
    if d == "-inf":
        return "-_INF"
    if d == "inf":
        return "_INF"
    if p["kind"] in ("padmode", "ropelayout", "act", "interpmode"):
        return repr(d)
    return d


def gen_function(s):
    name, params = s["name"], s["params"]
    sig = []
    for p in params:
        d = py_default(p)
        sig.append(p["name"] if d is None else "%s=%s" % (p["name"], d))
    uses_ctx = "ctx" in s["call"]
    if uses_ctx:
        sig.append("context=None")
    lines = ["def %s(%s):" % (name, ", ".join(sig)),
             '    """%s (%s); see include/webtensor.h."""' % (s["c"], s["family"])]
    tensors = [p["name"] for p in params if p["kind"] in ("T", "T?", "tensors")]
    # The context: an explicit one for creation ops, else the first tensor's.
    if uses_ctx:
        lines.append("    _c = _context(context)")
    else:
        first = next((p for p in params if p["kind"] in ("T", "tensors")), None)
        if first is None:
            raise SystemExit("gen_ops: %s has neither a tensor nor a context" % name)
        ctx_of = "_ctx_of(%s)" % ", ".join(
            p["name"] for p in params if p["kind"] in ("T", "T?", "TN", "tensors"))
        if params[0]["kind"] == "T":
            # The common case first: a Tensor as the first argument.
            f = params[0]["name"]
            lines.append("    if %s.__class__ is _Tensor:\n        _c = %s._ctx" % (f, f))
            lines.append("    else:\n        _c = %s\n        %s = _tensor(%s, _c)"
                         % (ctx_of, f, f))
        else:
            lines.append("    _c = %s" % ctx_of)
    args = {}
    keep = []
    for p in params:
        n, k = p["name"], p["kind"]
        if p["def"] and p["def"].startswith("@"):
            lines.append("    if %s is None:\n        %s = %s" % (n, n, p["def"][1:]))
        if k == "T":
            if p is not params[0] or uses_ctx:
                lines.append("    %s = _tensor(%s, _c)" % (n, n))
            args[n] = ["%s._h" % n]
        elif k == "T?":
            lines.append("    %s = None if %s is None else _tensor(%s, _c)" % (n, n, n))
            args[n] = ["None if %s is None else %s._h" % (n, n)]
        elif k == "TN":
            args[n] = None  # handled below: a number picks the scalar form
        elif k in ("i", "I", "U64"):
            args[n] = ["_index(%s)" % n]
        elif k in ("d", "f"):
            args[n] = ["_float(%s)" % n]
        elif k == "b":
            args[n] = ["bool(%s)" % n]
        elif k == "dtype":
            args[n] = ["_dtype_code(%s)" % n]
        elif k in ("axes", "shape", "i64s"):
            conv = {"axes": "_axes", "shape": "_int64s", "i64s": "_int64s"}[k]
            lines.append("    _n_%s, _a_%s = %s(%s)" % (n, n, conv, n))
            args[n] = ["_n_%s" % n, "_a_%s" % n]
        elif k == "perm":
            lines.append("    _n_%s, _a_%s = _axes(%s)" % (n, n, n))
            args[n] = ["_a_%s" % n]
        elif k == "tensors":
            lines.append("    %s = [_tensor(_v, _c) for _v in %s]" % (n, n))
            lines.append("    _n_%s, _a_%s = _handles(%s)" % (n, n, n))
            args[n] = ["_n_%s" % n, "_a_%s" % n]
        elif k in ("conv", "pool", "bnorm", "xent", "sgd", "adamw"):
            lines.append("    _o_%s = _options_%s(%s)" % (n, k, n))
            args[n] = ["None if _o_%s is None else _byref(_o_%s)" % (n, n)]
            keep.append("_o_%s" % n)
        elif k in ("padmode", "ropelayout", "act", "interpmode"):
            args[n] = ["_enum(%r, %s)" % (k, n)]
        else:
            raise SystemExit("gen_ops: %s: unknown kind %s" % (name, k))
    outs = ["_out%d" % i for i in range(s["outs"])]
    # One result: the context's own out slot (a context is used by one
    # thread at a time), not a new c_void_p and byref per call.
    one = s["outs"] == 1
    if not one:
        for o in outs:
            lines.append("    %s = _P()" % o)

    def c_args(scalar):
        out_i = iter(outs)
        res = []
        for tok in s["call"]:
            if tok == "ctx":
                res.append("_c._h")
            elif tok == "@out":
                res.append("_c._out_ref" if one else "_byref(%s)" % next(out_i))
            elif tok == "NULL":
                res.append("None")
            elif args.get(tok) is None:  # TN
                res.append("_float(%s)" % tok if scalar else "%s._h" % tok)
            else:
                res.extend(args[tok])
        return ", ".join(res)

    tn = [p["name"] for p in params if p["kind"] == "TN"]
    inputs = tensors + tn
    fail = "_fail(_s, %r%s)" % (name, "".join(", " + t for t in inputs))
    if tn:
        b = tn[0]
        lines.append("    if %s.__class__ is _Tensor:" % b)
        lines.append("        _s = _L.%s(%s)" % (s["c"], c_args(False)))
        lines.append("    elif %s.__class__ is float or _is_number(%s):" % (b, b))
        lines.append("        _s = _L.%s_scalar(%s)" % (s["c"], c_args(True)))
        lines.append("    else:")
        lines.append("        %s = _tensor(%s, _c)" % (b, b))
        lines.append("        _s = _L.%s(%s)" % (s["c"], c_args(False)))
    else:
        lines.append("    _s = _L.%s(%s)" % (s["c"], c_args(False)))
    lines.append("    if _s:\n        %s" % fail)
    if s["outs"] == 0:
        first = next(p["name"] for p in params if p["kind"] == "T")
        lines.append("    return %s" % first)
    elif one:
        lines.append("    _t = _new(_Tensor)\n    _t._h = _c._out.value\n    _t._ctx = _c\n    return _t")
    else:
        lines.append("    return (%s)" % ", ".join("_wrap(%s.value, _c)" % o for o in outs))
    return "\n".join(lines)


def gen_prototype(s, scalar=False):
    types = []
    for tok in s["call"]:
        if tok == "ctx" or tok == "@out" or tok == "NULL":
            types.append("_P")
        else:
            p = next(p for p in s["params"] if p["name"] == tok)
            types.extend(["_D"] if (scalar and p["kind"] == "TN") else CTYPES[p["kind"]])
    fn = s["c"] + ("_scalar" if scalar else "")
    return "_proto(%r, %s)" % (fn, ", ".join(types))


def gen_stub(s, name, as_method):
    ps = s["params"][1:] if as_method else s["params"]
    out = []
    for p in ps:
        t = PYI[p["kind"]]
        out.append("%s: %s%s" % (p["name"], t, " = ..." if p["def"] is not None else ""))
    if "ctx" in s["call"]:
        out.append("context: Optional[Context] = ...")
    if as_method:
        out.insert(0, "self")
    ret = "None" if s["outs"] == 0 else "Tensor" if s["outs"] == 1 else \
        "Tuple[%s]" % ", ".join(["Tensor"] * s["outs"])
    if s["outs"] == 0:
        ret = "Tensor"
    return "def %s(%s) -> %s: ..." % (name, ", ".join(out), ret)


def generate():
    table, hand_written, not_bound, enums, catalogue = build_specs()
    by_name = {s["name"]: s for s in table}
    aliases = {a: t for a, t in ALIASES.items() if t in by_name}
    py = ['"""Generated by python/gen_ops.py from src/core/ops.def, src/core/reduce_ops.def,',
          'include/webtensor.h and web/ops_spec.mjs: do not edit."""',
          "# flake8: noqa",
          "from ._core import (_L, _P, _I, _I64, _U64, _D, _F, _B, _INF, _INT64_MAX, _proto,",
          "                    _byref, _context, _ctx_of, _tensor, _wrap, _new, _fail, _is_number,",
          "                    _index, _float, _dtype_code, _axes, _int64s, _handles, _enum,",
          "                    _options_conv, _options_pool, _options_bnorm, _options_xent,",
          "                    _options_sgd, _options_adamw)",
          "from ._core import Tensor as _Tensor",
          "", "ENUMS = %r" % enums, "", "# C prototypes (ctypes argument types)."]
    for s in table:
        py.append(gen_prototype(s))
        if any(p["kind"] == "TN" for p in s["params"]):
            py.append(gen_prototype(s, scalar=True))
    py.append("")
    for s in table:
        py.append("")
        py.append(gen_function(s))
        py.append("")
    py.append("")
    for a, t in sorted(aliases.items()):
        py.append("%s = %s" % (a, t))
    py.append("")
    py.append("# Every op of the library's catalogue: bound here, written by hand in")
    py.append("# the package (HAND_WRITTEN) or not offered yet (NOT_BOUND).")
    py.append("OPS = %r" % [s["name"] for s in table])
    py.append("METHODS = %r" % [s["name"] for s in table if s["method"]])
    py.append("ALIASES = %r" % dict(sorted(aliases.items())))
    py.append("HAND_WRITTEN = %r" % hand_written)
    py.append("NOT_BOUND = %r" % not_bound)
    py.append("FAMILIES = %r" % {s["name"]: s["family"] for s in table})
    py_text = "\n".join(py) + "\n"

    pyi = ['"""Generated by python/gen_ops.py: do not edit."""',
           "from typing import Any, Mapping, Optional, Sequence, Tuple, Union",
           "import numpy",
           "from ._core import Context, Tensor", "",
           "TensorLike = Union[Tensor, numpy.ndarray, Sequence[Any], float]",
           "DTypeLike = Union[numpy.dtype, str, type]", ""]
    for s in table:
        pyi.append(gen_stub(s, s["name"], False))
    for a, t in sorted(aliases.items()):
        pyi.append(gen_stub(by_name[t], a, False))
    pyi.append("")
    pyi.append("class TensorOps:")
    for s in table:
        if s["method"]:
            pyi.append("    " + gen_stub(s, s["name"], True))
    for a, t in sorted(aliases.items()):
        if by_name[t]["method"]:
            pyi.append("    " + gen_stub(by_name[t], a, True))
    pyi_text = "\n".join(pyi) + "\n"
    return {"_ops.py": py_text, "_ops.pyi": pyi_text}


def main():
    check = "--check" in sys.argv[1:]
    stale = []
    for fname, text in generate().items():
        path = os.path.join(OUT_DIR, fname)
        old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if old == text:
            continue
        if check:
            stale.append(fname)
        else:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
    if stale:
        print("gen_ops: out of date: %s (run python3 python/gen_ops.py)" % ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
