// Shared by the JavaScript API tests: loads webtensor.mjs from the wasm
// build (WT_WEB_DIR, default build-wasm/web) and makes contexts on the
// backends under test. Node's WebGPU is the npm "webgpu" package (Dawn on
// lavapipe here) of tests/web/node_modules; without it, or without an
// adapter, the WebGPU tests fail: they never skip.
import { createRequire } from 'node:module';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { join, resolve } from 'node:path';
import { closeness } from './references.mjs';

export { erf, randomF32, closeness, inputs } from './references.mjs';

export const root = fileURLToPath(new URL('../../', import.meta.url));
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

export function assertClose(assert, got, want, rtol, atol, what) {
  const r = closeness(got, want, rtol, atol);
  assert.ok(r.worst <= 0, `${what}: element ${r.at} is ${r.g}, want ${r.w}`);
}
