// The ops of the JavaScript API against float64 references computed here,
// on the wasm CPU backend and on WebGPU (Node's Dawn).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { wt, BACKENDS, context, randomF32, assertClose, webDir, root } from './harness.mjs';
import { referencesFrom, inputs } from './references.mjs';

// The float64 references of the C suites (tests/ew_refs.def), one per op.
const { UNARY, BINARY } = referencesFrom(readFileSync(join(root, 'tests', 'ew_refs.def'), 'utf8'));

const { OPS } = await import(pathToFileURL(join(webDir, 'webtensor_ops.mjs')).href);
// How many scalar parameters an op's JavaScript form takes (a T_UNARY_P
// row always gives two).
const scalarParams = (name) => OPS.find((s) => s.name === name).params.filter((p) => p.kind === 'd').length;
const RTOL = 1.2e-5;
const ATOL = 1e-6;

for (const backend of BACKENDS) {
  describe(`ops on ${backend}`, () => {
    let ctx;
    let base;
    const made = [];
    const T = async (data, shape, dtype) => { const t = await ctx.tensor(data, shape, dtype); made.push(t); return t; };
    const own = (t) => { made.push(t); return t; };

    before(async () => {
      ctx = await context(backend);
      base = await ctx.memoryStats();
    });
    after(async () => {
      for (const t of made) t.dispose();
      const s = await ctx.memoryStats();
      assert.equal(s.liveTensors, base.liveTensors, 'tensors left alive');
      assert.equal(s.liveBytes, base.liveBytes, 'bytes left alive');
      ctx.destroy();
    });

    it('offers every op of the catalogue (or lists it as not offered), on contexts and tensors', () => {
      for (const { name } of wt.catalogue()) {
        assert.ok(typeof ctx[name] === 'function' || wt.notBound.includes(name), `${name} is missing`);
      }
      for (const s of OPS) {
        if (s.method) assert.equal(typeof wt.Tensor.prototype[s.name], 'function', s.name);
      }
      for (const alias of ['logSoftmax', 'subtract', 'clip', 'cat', 'concatenate', 'scaledDotProductAttention']) {
        assert.equal(typeof ctx[alias], 'function', alias);
      }
    });

    it('offers every elementwise op of the catalogue, with a reference here', () => {
      const elementwise = wt.catalogue().filter((e) => e.family === 'elementwise').map((e) => e.name);
      const specs = Object.fromEntries(OPS.map((s) => [s.name, s]));
      for (const name of elementwise) {
        if (['where', 'masked_fill', 'cast'].includes(name)) continue;
        assert.ok(specs[name], `${name} has no JavaScript form`);
        assert.equal(typeof ctx[name], 'function');
        const binary = specs[name].params[1] && specs[name].params[1].kind === 'TN';
        assert.ok((binary ? BINARY : UNARY)[name], `${name}: add its float64 reference to tests/ew_refs.def`);
      }
    });

    for (const [name, ref] of Object.entries(UNARY)) {
      it(`${name} (f32, odd size)`, async () => {
        const n = 37;
        const x = inputs(n, 11, ref.lo, ref.hi, ref.bool);
        const params = (ref.params || []).slice(0, scalarParams(name));
        const y = own(await ctx[name](await T(x), ...params));
        assert.deepEqual(y.shape, [n]);
        assert.equal(y.dtype, ref.bool ? 'bool' : 'f32');
        const want = Array.from(x, (v) => ref.f(v));
        assertClose(assert, await y.read(), want, RTOL, ATOL, name);
      });
    }

    for (const [name, ref] of Object.entries(BINARY)) {
      it(`${name} (f32, broadcast [3,1,5] with [4,5], and a number)`, async () => {
        const a = inputs(15, 21, ref.lo, ref.hi, ref.bool);
        const b = inputs(20, 22, ref.lo2, ref.hi2, ref.bool);
        b[2] = a[2]; // equal pairs for the comparisons
        const ta = await T(a, [3, 1, 5]);
        const y = own(await ctx[name](ta, await T(b, [4, 5])));
        assert.deepEqual(y.shape, [3, 4, 5]);
        const want = [];
        for (let i = 0; i < 3; i++) for (let j = 0; j < 4; j++) for (let k = 0; k < 5; k++) want.push(ref.f(a[i * 5 + k], b[j * 5 + k]));
        assertClose(assert, await y.read(), want, RTOL, ATOL, name);
        const s = 1.5;
        const z = own(await ta[name](s));
        assertClose(assert, await z.read(), Array.from(a, (v) => ref.f(v, s)), RTOL, ATOL, `${name} scalar`);
      });
    }

    it('i32 arithmetic wraps; f16 and bool round-trip', async () => {
      const a = await T(new Int32Array([2147483647, -5, 7]));
      const y = own(await a.add(1));
      assert.equal(y.dtype, 'i32');
      assert.deepEqual(Array.from(await y.read()), [-2147483648, -4, 8]);
      const q = own(await ctx.floor_divide(a, await T(new Int32Array([2, 2, -2]))));
      assert.deepEqual(Array.from(await q.read()), [1073741823, -3, -4]);
      const h = wt.float32ToFloat16([1.5, -2.25, 65504, 0.1]);
      const th = await T(h, [2, 2]);
      assert.equal(th.dtype, 'f16');
      const sum = own(await th.add(th));
      assert.equal(sum.dtype, 'f16');
      assert.deepEqual(Array.from(wt.float16ToFloat32(await sum.read())),
        Array.from(wt.float16ToFloat32(wt.float32ToFloat16([3, -4.5, Infinity, 0.2]))));
      const m = await T([[true, false], [false, true]]);
      assert.equal(m.dtype, 'bool');
      assert.deepEqual(await m.array(), [[true, false], [false, true]]);
      const c = own(await m.cast('f32'));
      assert.deepEqual(await c.array(), [[1, 0], [0, 1]]);
    });

    it('reductions: axes, negative axes, keepdims, all', async () => {
      const n = [3, 4, 5];
      const x = randomF32(60, 31, 0.5, 1.5);
      const tx = await T(x, n);
      const at = (i, j, k) => x[i * 20 + j * 5 + k];
      const over = (axis, f, init) => { // reduce one axis of [3,4,5] with f
        const shape = n.filter((_, d) => d !== axis);
        const out = [];
        for (let p = 0; p < shape[0]; p++) {
          for (let q = 0; q < shape[1]; q++) {
            let acc = init;
            for (let r = 0; r < n[axis]; r++) {
              const idx = axis === 0 ? [r, p, q] : axis === 1 ? [p, r, q] : [p, q, r];
              acc = f(acc, at(...idx), r);
            }
            out.push(acc);
          }
        }
        return out;
      };
      const sum1 = own(await tx.sum(1, true));
      assert.deepEqual(sum1.shape, [3, 1, 5]);
      assertClose(assert, await sum1.read(), over(1, (a, v) => a + v, 0), RTOL, ATOL, 'sum axis 1');
      const all = own(await ctx.sum(tx));
      assert.deepEqual(all.shape, []);
      assertClose(assert, await all.read(), [x.reduce((a, v) => a + v, 0)], RTOL, ATOL, 'sum all');
      const mean = own(await tx.mean([0, -1]));
      assert.deepEqual(mean.shape, [4]);
      const wantMean = [0, 1, 2, 3].map((j) => { let s = 0; for (let i = 0; i < 3; i++) for (let k = 0; k < 5; k++) s += at(i, j, k); return s / 15; });
      assertClose(assert, await mean.read(), wantMean, RTOL, ATOL, 'mean');
      assertClose(assert, await own(await tx.max(-1)).read(), over(2, (a, v) => Math.max(a, v), -Infinity), 0, 0, 'max');
      assertClose(assert, await own(await tx.amin(0)).read(), over(0, (a, v) => Math.min(a, v), Infinity), 0, 0, 'min');
      assertClose(assert, await own(await tx.prod(2)).read(), over(2, (a, v) => a * v, 1), RTOL, ATOL, 'prod');
      const varRef = (corr) => {
        const out = [];
        for (let i = 0; i < 3; i++) for (let j = 0; j < 4; j++) {
          let m = 0; for (let k = 0; k < 5; k++) m += at(i, j, k); m /= 5;
          let s = 0; for (let k = 0; k < 5; k++) s += (at(i, j, k) - m) ** 2;
          out.push(s / (5 - corr));
        }
        return out;
      };
      assertClose(assert, await own(await tx.var(-1)).read(), varRef(1), 1e-4, 1e-6, 'var');
      assertClose(assert, await own(await tx.std(-1, 0)).read(), varRef(0).map(Math.sqrt), 1e-4, 1e-6, 'std');
      assertClose(assert, await own(await tx.logsumexp(2)).read(), over(2, (a, v) => a + Math.exp(v), 0).map(Math.log), RTOL, ATOL, 'logsumexp');
      assertClose(assert, await own(await tx.norm(2, 2)).read(), over(2, (a, v) => a + v * v, 0).map(Math.sqrt), RTOL, ATOL, 'norm 2');
      assertClose(assert, await own(await tx.norm(Infinity, 2)).read(), over(2, (a, v) => Math.max(a, Math.abs(v)), 0), 0, 0, 'norm inf');
      const am = own(await tx.argmax(1));
      assert.equal(am.dtype, 'i32');
      const wantArg = over(1, (a, v, r) => (r === 0 || v > a.v ? { v, r } : a), null).map((o) => o.r);
      assert.deepEqual(Array.from(await am.read()), wantArg);
      const mask = await T([[true, true], [false, true]]);
      assert.deepEqual(await own(await mask.all(1)).array(), [true, false]);
      assert.deepEqual(await own(await mask.any(0, true)).array(), [[true, true]]);
    });

    it('matmul (2-D and batched), linear, softmax', async () => {
      const a = randomF32(2 * 5 * 7, 41);
      const b = randomF32(7 * 3, 42);
      const ta = await T(a, [2, 5, 7]);
      const tb = await T(b, [7, 3]);
      const c = own(await ctx.matmul(ta, tb));
      assert.deepEqual(c.shape, [2, 5, 3]);
      const want = [];
      for (let i = 0; i < 10; i++) for (let j = 0; j < 3; j++) { let s = 0; for (let k = 0; k < 7; k++) s += a[i * 7 + k] * b[k * 3 + j]; want.push(s); }
      assertClose(assert, await c.read(), want, 1e-5, 1e-5, 'matmul');
      const sm = own(await c.softmax(0));
      const got = await sm.read();
      for (let r = 0; r < 15; r++) {
        const e0 = Math.exp(want[r]);
        const e1 = Math.exp(want[15 + r]);
        assertClose(assert, [got[r], got[15 + r]], [e0 / (e0 + e1), e1 / (e0 + e1)], 1e-5, 1e-6, 'softmax axis 0');
      }
      const w = await T(randomF32(4 * 7, 43), [4, 7]);
      const lin = own(await ctx.linear(ta, w, null));
      const wv = await w.read();
      const wantLin = [];
      for (let i = 0; i < 10; i++) for (let o = 0; o < 4; o++) { let s = 0; for (let k = 0; k < 7; k++) s += a[i * 7 + k] * wv[o * 7 + k]; wantLin.push(s); }
      assertClose(assert, await lin.read(), wantLin, 1e-5, 1e-5, 'linear');
    });

    it('views and data movement: reshape, transpose, slice, concat, where, sort', async () => {
      const x = await T(new Float32Array([0, 1, 2, 3, 4, 5]), [2, 3]);
      const r = own(await x.reshape([3, -1]));
      assert.deepEqual(r.shape, [3, 2]);
      const t = own(await x.transpose());
      assert.deepEqual(await t.array(), [[0, 3], [1, 4], [2, 5]]);
      const p = own(await x.permute([1, 0]));
      assert.deepEqual(await p.array(), [[0, 3], [1, 4], [2, 5]]);
      const s = own(await x.slice(1, 1));
      assert.deepEqual(await s.array(), [[1, 2], [4, 5]]);
      const cat = own(await ctx.cat([x, x], 0));
      assert.deepEqual(cat.shape, [4, 3]);
      const mask = own(await x.gt(2));
      const wh = own(await ctx.where(mask, x, own(await x.neg())));
      assert.deepEqual(await wh.array(), [[-0, -1, -2], [3, 4, 5]]);
      const [vals, idx] = (await ctx.sort(await T([3, 1, 2, 1]), -1, true)).map(own);
      assert.deepEqual(Array.from(await vals.read()), [3, 2, 1, 1]);
      assert.deepEqual(Array.from(await idx.read()), [0, 2, 1, 3]);
      const parts = (await x.split([1, 2], 1)).map(own);
      assert.deepEqual(parts.map((v) => v.shape), [[2, 1], [2, 2]]);
      const rolled = own(await x.roll(1));
      assert.deepEqual(Array.from(await rolled.read()), [5, 0, 1, 2, 3, 4]);
      const z = own(await ctx.zeros([2, 2], 'i32'));
      assert.deepEqual(await z.array(), [[0, 0], [0, 0]]);
      const ar = own(await ctx.arange(0, 5, 1, 'i32'));
      assert.deepEqual(Array.from(await ar.read()), [0, 1, 2, 3, 4]);
    });

    it('conv2d and max_pool2d against a direct loop', async () => {
      const [N, C, H, W, O, K] = [1, 2, 6, 5, 3, 3];
      const xv = randomF32(N * C * H * W, 51);
      const wv = randomF32(O * C * K * K, 52);
      const bv = randomF32(O, 53);
      const y = own(await ctx.conv2d(await T(xv, [N, C, H, W]), await T(wv, [O, C, K, K]), await T(bv),
        { stride: [2, 1], padding: 1 }));
      const OH = Math.floor((H + 2 - K) / 2) + 1;
      const OW = W + 2 - K + 1;
      assert.deepEqual(y.shape, [N, O, OH, OW]);
      const want = [];
      for (let o = 0; o < O; o++) for (let oy = 0; oy < OH; oy++) for (let ox = 0; ox < OW; ox++) {
        let s = bv[o];
        for (let c = 0; c < C; c++) for (let ky = 0; ky < K; ky++) for (let kx = 0; kx < K; kx++) {
          const iy = oy * 2 - 1 + ky;
          const ix = ox - 1 + kx;
          if (iy >= 0 && iy < H && ix >= 0 && ix < W) s += xv[(c * H + iy) * W + ix] * wv[((o * C + c) * K + ky) * K + kx];
        }
        want.push(s);
      }
      assertClose(assert, await y.read(), want, 1e-5, 1e-5, 'conv2d');
      const pool = own(await ctx.max_pool2d(await T(xv, [N, C, H, W]), { kernelSize: 2 }));
      assert.deepEqual(pool.shape, [1, 2, 3, 2]);
      const got = await pool.read();
      assert.equal(got[0], Math.max(xv[0], xv[1], xv[W], xv[W + 1]));
    });
  });
}
