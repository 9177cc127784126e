// float64 references of the elementwise ops, read from the rows of
// tests/ew_refs.def, the table the C suites use: one reference per op, in
// one place. A row's reference is a C expression in x (unary) or a, b
// (binary) and the parameters p0, p1; written in the subset of C that is
// also JavaScript (numbers, + - * /, comparisons, && || !, ?:, calls),
// it runs here with the C math functions it names (MATH below). Plain
// JavaScript: the browser test loads it too, with the table's text.

// float64 error function (series near 0, continued fraction beyond).
export function erf(z) {
  const t = Math.abs(z);
  if (Number.isNaN(z)) return NaN;
  if (t < 2.5) {
    let sum = t;
    let term = t;
    for (let k = 1; k < 80; k++) { term *= -t * t / k; sum += term / (2 * k + 1); }
    return Math.sign(z) * 2 / Math.sqrt(Math.PI) * sum;
  }
  let f = 0;
  for (let k = 60; k >= 1; k--) f = k / 2 / (t + f);
  return Math.sign(z) * (1 - Math.exp(-t * t) / Math.sqrt(Math.PI) / (t + f));
}

// Seeded uniform values in [lo, hi), as float32.
export function randomF32(n, seed, lo = -2, hi = 2) {
  let s = seed >>> 0 || 1;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
    out[i] = lo + (hi - lo) * (s / 4294967296);
  }
  return out;
}

// Largest violation of |got - want| <= atol + rtol |want| (0 when all
// pass); NaN and infinities must match exactly.
export function closeness(got, want, rtol, atol) {
  if (got.length !== want.length) throw new Error(`length ${got.length}, want ${want.length}`);
  let worst = 0;
  let at = -1;
  for (let i = 0; i < want.length; i++) {
    const g = Number(got[i]);
    const w = Number(want[i]);
    if (Number.isNaN(w) || !Number.isFinite(w)) {
      if (!Object.is(g, w) && !(Number.isNaN(g) && Number.isNaN(w))) return { worst: Infinity, at: i, g, w };
      continue;
    }
    const excess = Math.abs(g - w) - (atol + rtol * Math.abs(w));
    if (!(excess <= worst)) { worst = Number.isNaN(excess) ? Infinity : excess; at = i; }
  }
  return { worst, at, g: got[at], w: want[at] };
}

// Inputs uniform in the row's [lo, hi), as float32; a row with a bool
// result also gets zeros (every third element), which its ops treat apart.
export function inputs(n, seed, lo, hi, withZeros = false) {
  const x = randomF32(n, seed, lo, hi);
  if (withZeros) for (let i = 0; i < n; i += 3) x[i] = 0;
  return x;
}

// NumPy's floor_divide and remainder (tests/op_table.c has the C twins).
function refFloorDivide(a, b) {
  if (b === 0) return a / b;
  const m = a % b;
  const q = (a - m) / b;
  return m !== 0 && (m < 0) !== (b < 0) ? q - 1 : q;
}
function refRemainder(a, b) {
  const m = a % b;
  return m !== 0 && (m < 0) !== (b < 0) ? m + b : m;
}
// C's nearbyint in the default rounding mode: ties to even.
function nearbyint(x) {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}
// C's fmin / fmax: a NaN operand gives the other one.
const fmin = (a, b) => (Number.isNaN(a) ? b : Number.isNaN(b) ? a : Math.min(a, b));
const fmax = (a, b) => (Number.isNaN(a) ? b : Number.isNaN(b) ? a : Math.max(a, b));

// The C names a reference may use, and the helpers of tests/ew_refs.def.
const MATH = {
  exp: Math.exp, log: Math.log, sqrt: Math.sqrt, tanh: Math.tanh, fabs: Math.abs, floor: Math.floor,
  ceil: Math.ceil, nearbyint, sin: Math.sin, cos: Math.cos, exp2: (x) => 2 ** x, log2: Math.log2,
  log1p: Math.log1p, expm1: Math.expm1, erf, fmin, fmax, pow: Math.pow, fmod: (a, b) => a % b,
  atan2: Math.atan2, isnan: Number.isNaN, isinf: (x) => x === Infinity || x === -Infinity,
  copysign: (m, s) => (s < 0 || Object.is(s, -0) ? -Math.abs(m) : Math.abs(m)),
  NAN: NaN, INFINITY: Infinity, R_NAN_OR: (x, e) => (Number.isNaN(x) ? x : e),
  ref_floor_divide: refFloorDivide, ref_remainder: refRemainder, fround: Math.fround,
};

// The arguments of a macro call, split at its top-level commas.
function splitArgs(text) {
  const out = [];
  let depth = 0;
  let cur = '';
  for (const ch of text) {
    if (ch === ',' && depth === 0) { out.push(cur.trim()); cur = ''; continue; }
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    cur += ch;
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
}

// A C expression as JavaScript: float literals (1.5f) are float32 values.
function toJs(expr) {
  return expr.replace(/(\d+\.?\d*(?:[eE][+-]?\d+)?)f\b/g, 'fround($1)');
}

function compile(expr, args) {
  const names = Object.keys(MATH);
  // eslint-disable-next-line no-new-func
  const fn = new Function(...names, ...args, `return (${toJs(expr)});`);
  const lib = names.map((n) => MATH[n]);
  return (...v) => Number(fn(...lib, ...v));
}

const num = (s) => compile(s, [])();

// The rows of tests/ew_refs.def (its text): { UNARY, BINARY }, each keyed
// by the op's name, with f (the reference), lo, hi (and lo2, hi2), params
// (the row's p0, p1 for T_UNARY_P) and bool (a WT_BOOL result).
export function referencesFrom(defText) {
  const text = defText.replace(/\/\*[\s\S]*?\*\//g, '');
  const UNARY = {};
  const BINARY = {};
  for (const m of text.matchAll(/^(T_UNARY|T_UNARY_P|T_UNARY_BOOL|T_BINARY|T_BINARY_BOOL)\(/gm)) {
    let depth = 1;
    let i = m.index + m[0].length;
    const start = i;
    for (; depth > 0; i++) depth += text[i] === '(' ? 1 : text[i] === ')' ? -1 : 0;
    const a = splitArgs(text.slice(start, i - 1));
    const kind = m[1];
    const name = a[0];
    if (kind === 'T_UNARY') UNARY[name] = { f: compile(a[4], ['x']), lo: num(a[2]), hi: num(a[3]) };
    else if (kind === 'T_UNARY_BOOL') UNARY[name] = { f: compile(a[3], ['x']), lo: num(a[1]), hi: num(a[2]), bool: true };
    else if (kind === 'T_UNARY_P') {
      const params = [num(a[4]), num(a[5])];
      const f = compile(a[6], ['x', 'p0', 'p1']);
      UNARY[name] = { f: (x) => f(x, ...params), lo: num(a[2]), hi: num(a[3]), params };
    } else if (kind === 'T_BINARY') {
      BINARY[name] = { f: compile(a[6], ['a', 'b']), lo: num(a[2]), hi: num(a[3]), lo2: num(a[4]), hi2: num(a[5]) };
    } else {
      BINARY[name] = { f: compile(a[5], ['a', 'b']), lo: num(a[1]), hi: num(a[2]), lo2: num(a[3]), hi2: num(a[4]), bool: true };
    }
  }
  return { UNARY, BINARY };
}
