// float64 references of the elementwise ops, keyed by the op's name in
// src/core/ops.def. An elementwise op added there needs a line here (the
// test says which one is missing). dom: the inputs' domain ('pos': > 0,
// 'int': small integers as floats, 'halves': multiples of 0.5, 'bool':
// some zeros). Plain JavaScript: the browser test loads it too.

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

// Inputs of an op's domain (see dom above).
export function inputs(n, seed, dom) {
  const x = randomF32(n, seed);
  for (let i = 0; i < n; i++) {
    if (dom === 'pos') x[i] = Math.abs(x[i]) + 0.125;
    else if (dom === 'int') x[i] = Math.round(x[i] * 4) || 3;
    else if (dom === 'halves') x[i] = Math.round(x[i] * 4) / 2;
    else if (dom === 'bool') x[i] = i % 3 === 0 ? 0 : x[i];
  }
  return x;
}

const sig = (x) => 1 / (1 + Math.exp(-x));
const softplus = (x) => Math.max(x, 0) + Math.log1p(Math.exp(-Math.abs(x)));
const relu6 = (x) => Math.min(Math.max(x, 0), 6);
const roundEven = (x) => {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
};
// NumPy's divmod (npy_divmod): the quotient is the floor of the exact one.
function divmod(a, b) {
  let mod = a % b;
  if (b === 0) return [a / b, NaN];
  let div = (a - mod) / b;
  if (mod) {
    if ((b < 0) !== (mod < 0)) { mod += b; div -= 1; }
  } else {
    mod = b < 0 ? -0 : 0;
  }
  let fdiv;
  if (div) {
    fdiv = Math.floor(div);
    if (div - fdiv > 0.5) fdiv += 1;
  } else {
    fdiv = a / b < 0 ? -0 : 0;
  }
  return [fdiv, mod];
}

export const UNARY = {
  neg: { f: (x) => -x },
  exp: { f: Math.exp },
  log: { f: Math.log, dom: 'pos' },
  sqrt: { f: Math.sqrt, dom: 'pos' },
  relu: { f: (x) => (x < 0 ? 0 : x) },
  sigmoid: { f: sig },
  tanh: { f: Math.tanh },
  abs: { f: Math.abs },
  sign: { f: Math.sign },
  floor: { f: Math.floor },
  ceil: { f: Math.ceil },
  round: { f: roundEven, dom: 'halves' },
  square: { f: (x) => x * x },
  reciprocal: { f: (x) => 1 / x, dom: 'pos' },
  rsqrt: { f: (x) => 1 / Math.sqrt(x), dom: 'pos' },
  sin: { f: Math.sin },
  cos: { f: Math.cos },
  exp2: { f: (x) => 2 ** x },
  log2: { f: Math.log2, dom: 'pos' },
  log1p: { f: Math.log1p, dom: 'pos' },
  expm1: { f: Math.expm1 },
  erf: { f: erf },
  gelu: { f: (x) => 0.5 * x * (1 + erf(x / Math.SQRT2)) },
  gelu_tanh: { f: (x) => 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x ** 3))) },
  silu: { f: (x) => x * sig(x) },
  softplus: { f: softplus },
  mish: { f: (x) => x * Math.tanh(softplus(x)) },
  hardsigmoid: { f: (x) => relu6(x + 3) / 6, scale: 4 },
  hardswish: { f: (x) => x * relu6(x + 3) / 6, scale: 4 },
  leaky_relu: { f: (x, a = 0.01) => (x < 0 ? a * x : x), params: [0.2] },
  elu: { f: (x, a = 1) => (x > 0 ? x : a * Math.expm1(x)), params: [0.7] },
  clamp: { f: (x, lo, hi) => Math.min(Math.max(x, lo), hi), params: [-0.5, 0.7] },
  logical_not: { f: (x) => (x === 0 ? 1 : 0), dom: 'bool', bool: true },
};

export const BINARY = {
  add: { f: (a, b) => a + b },
  sub: { f: (a, b) => a - b },
  mul: { f: (a, b) => a * b },
  div: { f: (a, b) => a / b, dom: 'pos' },
  maximum: { f: Math.max },
  minimum: { f: Math.min },
  pow: { f: (a, b) => a ** b, dom: 'pos' },
  fmod: { f: (a, b) => a % b, dom: 'pos' },
  atan2: { f: Math.atan2 },
  floor_divide: { f: (a, b) => divmod(a, b)[0], dom: 'int' },
  remainder: { f: (a, b) => divmod(a, b)[1], dom: 'int' },
  eq: { f: (a, b) => +(a === b), bool: true },
  ne: { f: (a, b) => +(a !== b), bool: true },
  lt: { f: (a, b) => +(a < b), bool: true },
  le: { f: (a, b) => +(a <= b), bool: true },
  gt: { f: (a, b) => +(a > b), bool: true },
  ge: { f: (a, b) => +(a >= b), bool: true },
  logical_and: { f: (a, b) => +(a !== 0 && b !== 0), bool: true },
  logical_or: { f: (a, b) => +(a !== 0 || b !== 0), bool: true },
  logical_xor: { f: (a, b) => +((a !== 0) !== (b !== 0)), bool: true },
};
