"""The float64 references of the elementwise ops, read from the rows of
tests/ew_refs.def: the table the C suites (and the JavaScript tests) use,
so that an op has one reference, in one place.

A row's reference is a C expression in x (unary) or a, b (binary) and the
row's parameters p0, p1. It is translated here into NumPy on float64
arrays: ``c ? t : f`` becomes ``np.where``, ``&& || !`` the logical
ufuncs, the C math functions their NumPy twins (MATH), and a float
literal ``1.5f`` the float32 value it is in C."""
import math
import os
import re

import numpy as np

DEF_PATH = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "ew_refs.def")


def _f32(v):
    return float(np.float32(v))


def _floor_divide(a, b):
    with np.errstate(all="ignore"):
        return np.floor_divide(a, b)


def _remainder(a, b):
    with np.errstate(all="ignore"):
        return np.remainder(a, b)


# C's names in the references, and the helpers of tests/ew_refs.def
# (ref_floor_divide and ref_remainder are NumPy's, exactly).
MATH = {
    "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "tanh": np.tanh, "fabs": np.abs,
    "floor": np.floor, "ceil": np.ceil, "nearbyint": np.rint, "sin": np.sin, "cos": np.cos,
    "exp2": np.exp2, "log2": np.log2, "log1p": np.log1p, "expm1": np.expm1,
    "erf": np.vectorize(math.erf, otypes=[np.float64]), "fmin": np.fmin, "fmax": np.fmax,
    "pow": np.power, "fmod": np.fmod, "atan2": np.arctan2, "isnan": np.isnan, "isinf": np.isinf,
    "copysign": np.copysign, "NAN": np.nan, "INFINITY": np.inf,
    "R_NAN_OR": lambda x, e: np.where(np.isnan(x), x, e),
    "ref_floor_divide": _floor_divide, "ref_remainder": _remainder,
    "_where": np.where, "_and": np.logical_and, "_or": np.logical_or, "_not": np.logical_not,
    "_f32": _f32,
}

_TOKEN = re.compile(r"\s*(?:(\d+\.?\d*(?:[eE][+-]?\d+)?f?)|([A-Za-z_]\w*)"
                    r"|(\|\||&&|==|!=|<=|>=|[-+*/<>!?:(),]))")
# Binary operators by precedence (C's, lowest first); ?: is below them all.
_LEVELS = [["||"], ["&&"], ["==", "!="], ["<", "<=", ">", ">="], ["+", "-"], ["*", "/"]]
_PY = {"||": "_or", "&&": "_and"}


def _tokens(expr):
    out, pos = [], 0
    expr = expr.strip()
    while pos < len(expr):
        m = _TOKEN.match(expr, pos)
        if not m or m.end() == pos:
            raise ValueError("ew_refs: cannot read %r at %d" % (expr, pos))
        out.append(m.group(m.lastindex))
        pos = m.end()
    return out


class _Translator:
    """A C expression as Python source on NumPy arrays (precedence climbing)."""

    def __init__(self, expr):
        self.toks, self.i = _tokens(expr), 0

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, want=None):
        t = self.peek()
        if want is not None and t != want:
            raise ValueError("ew_refs: expected %r, got %r in %s" % (want, t, " ".join(self.toks)))
        self.i += 1
        return t

    def ternary(self):
        cond = self.binary(0)
        if self.peek() != "?":
            return cond
        self.take("?")
        yes = self.ternary()
        self.take(":")
        no = self.ternary()
        return "_where(%s, %s, %s)" % (cond, yes, no)

    def binary(self, level):
        if level == len(_LEVELS):
            return self.unary()
        left = self.binary(level + 1)
        while self.peek() in _LEVELS[level]:
            op = self.take()
            right = self.binary(level + 1)
            if op in _PY:
                left = "%s(%s, %s)" % (_PY[op], left, right)
            else:
                left = "(%s %s %s)" % (left, op, right)
        return left

    def unary(self):
        t = self.peek()
        if t == "-":
            self.take()
            return "(-%s)" % self.unary()
        if t == "!":
            self.take()
            return "_not(%s)" % self.unary()
        return self.primary()

    def primary(self):
        t = self.take()
        if t == "(":
            e = self.ternary()
            self.take(")")
            return "(%s)" % e
        if t[0].isdigit():
            return "_f32(%s)" % t[:-1] if t.endswith("f") else t
        if self.peek() == "(":
            self.take("(")
            args = []
            while self.peek() != ")":
                args.append(self.ternary())
                if self.peek() == ",":
                    self.take(",")
            self.take(")")
            return "%s(%s)" % (t, ", ".join(args))
        return t

    def translate(self):
        e = self.ternary()
        if self.peek() is not None:
            raise ValueError("ew_refs: trailing %r in %s" % (self.peek(), " ".join(self.toks)))
        return e


def _compile(expr, args):
    code = "lambda %s: %s" % (", ".join(args), _Translator(expr).translate())
    fn = eval(code, dict(MATH))  # the table's own expressions, in the namespace above

    def ref(*v):
        with np.errstate(all="ignore"):
            return fn(*v)
    return ref


def _number(s):
    return float(_compile(s, [])())


def _split_args(text):
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def load(path=DEF_PATH):
    """{name: row} for every row: kind ("unary" or "binary"), ref (the
    reference on float64 arrays), lo, hi (lo2, hi2), params (a
    T_UNARY_P row's p0, p1) and bool (a WT_BOOL result)."""
    with open(path) as f:
        text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
    rows = {}
    for m in re.finditer(r"^(T_UNARY|T_UNARY_P|T_UNARY_BOOL|T_BINARY|T_BINARY_BOOL)\(", text, re.M):
        depth, i = 1, m.end()
        while depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        a = _split_args(text[m.end():i - 1])
        kind, name = m.group(1), a[0]
        if kind == "T_UNARY":
            rows[name] = dict(kind="unary", ref=_compile(a[4], ["x"]), lo=_number(a[2]),
                              hi=_number(a[3]), params=(), bool=False)
        elif kind == "T_UNARY_BOOL":
            rows[name] = dict(kind="unary", ref=_compile(a[3], ["x"]), lo=_number(a[1]),
                              hi=_number(a[2]), params=(), bool=True)
        elif kind == "T_UNARY_P":
            params = (_number(a[4]), _number(a[5]))
            f = _compile(a[6], ["x", "p0", "p1"])
            rows[name] = dict(kind="unary", ref=lambda x, f=f, p=params: f(x, *p), lo=_number(a[2]),
                              hi=_number(a[3]), params=params, bool=False)
        elif kind == "T_BINARY":
            rows[name] = dict(kind="binary", ref=_compile(a[6], ["a", "b"]), lo=_number(a[2]),
                              hi=_number(a[3]), lo2=_number(a[4]), hi2=_number(a[5]), bool=False)
        else:
            rows[name] = dict(kind="binary", ref=_compile(a[5], ["a", "b"]), lo=_number(a[1]),
                              hi=_number(a[2]), lo2=_number(a[3]), hi2=_number(a[4]), bool=True)
    return rows
