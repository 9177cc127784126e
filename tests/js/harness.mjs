// Shared by the JavaScript API tests: loads webtensor.mjs from the wasm
// build (WT_WEB_DIR, default build-wasm/web) and makes contexts on the
// backends under test. Node's WebGPU is the npm "webgpu" package (Dawn on
// lavapipe here) of tests/web/node_modules; without it, or without an
// adapter, the WebGPU tests fail: they never skip.
import { createRequire } from 'node:module';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { join, resolve } from 'node:path';

const root = fileURLToPath(new URL('../../', import.meta.url));
export const webDir = resolve(process.env.WT_WEB_DIR || join(root, 'build-wasm', 'web'));
export const wt = await import(pathToFileURL(join(webDir, 'webtensor.mjs')).href);
export const BACKENDS = (process.env.WT_JS_BACKENDS || 'cpu,webgpu').split(',');

let webgpu = null;
export function nodeWebgpu() {
  if (!webgpu) webgpu = createRequire(join(root, 'tests', 'web', 'package.json'))('webgpu');
  return webgpu;
}

// A context of the backend; WebGPU must land on a real adapter.
export async function context(backend) {
  const opts = { backend };
  if (backend === 'webgpu') opts.webgpu = nodeWebgpu();
  const ctx = await wt.init(opts);
  if (ctx.backend !== backend) throw new Error(`asked for ${backend}, got ${ctx.backend}`);
  if (backend === 'webgpu' && !(ctx.adapter && (ctx.adapter.name || ctx.adapter.vendor))) {
    throw new Error('WebGPU context without a named adapter');
  }
  return ctx;
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

export function assertClose(assert, got, want, rtol, atol, what) {
  const r = closeness(got, want, rtol, atol);
  assert.ok(r.worst <= 0, `${what}: element ${r.at} is ${r.g}, want ${r.w}`);
}

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
