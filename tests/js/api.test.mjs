// The JavaScript API's contract: bad input gives a WebtensorError with the
// status and the library's message and leaks nothing; disposal, the
// garbage-collection backstop, async reads and the device-lost event.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { wt, BACKENDS, context, webDir, root, assertClose } from './harness.mjs';

const { WebtensorError } = wt;

async function rejectsWith(promise, status, pattern) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof WebtensorError, `not a WebtensorError: ${e && e.stack}`);
    assert.ok(e instanceof Error);
    assert.equal(e.status, status, e.message);
    if (pattern) assert.match(e.message, pattern);
    return true;
  });
}

for (const backend of BACKENDS) {
  describe(`API contract on ${backend}`, () => {
    let ctx;
    let other;
    let base;
    before(async () => {
      ctx = await context(backend);
      other = await context(backend);
      base = await ctx.memoryStats();
    });
    after(() => { ctx.destroy(); other.destroy(); });

    it('reports its backend and adapter', async () => {
      const info = await ctx.info();
      assert.equal(info.backend, backend);
      assert.ok(info.reason.length > 0);
      if (backend === 'webgpu') {
        assert.ok(ctx.adapter && (ctx.adapter.name || ctx.adapter.vendor), 'adapter named');
        assert.ok(info.maxBufferSize > 0);
      } else {
        assert.equal(ctx.adapter, null);
      }
      assert.match(wt.version(), /^\d+\.\d+\.\d+$/);
    });

    it('differentiates: requiresGrad, backward, grad, noGrad, detach', async () => {
      const w = await ctx.tensor(new Float32Array([1, -2, 3]), [3]);
      w.requiresGrad = true;
      assert.equal(w.requiresGrad, true);
      assert.equal(w.grad, null);
      const sq = await ctx.mul(w, w);
      const loss = await ctx.sum(sq);
      assert.equal(loss.requiresGrad, true);
      await loss.backward();
      const g = w.grad;
      assert.deepEqual(Array.from(await g.read()), [2, -4, 6]); // d sum(w^2) = 2w
      g.dispose();
      const free = await ctx.noGrad(async () => ctx.mul(w, w));
      assert.equal(free.requiresGrad, false);
      assert.equal(ctx.gradEnabled, true);
      const d = w.detach();
      assert.equal(d.requiresGrad, false);
      w.zeroGrad();
      assert.equal(w.grad, null);
      // A second backward through a freed graph is a clear error.
      await rejectsWith(loss.backward(), 'WT_ERR_INVALID_ARGUMENT', /retain_graph/);
      for (const t of [w, sq, loss, free, d]) t.dispose();
      assert.equal((await ctx.memoryStats()).liveTensors, base.liveTensors);
    });

    it('trains with an optimizer: step, zeroGrad, groups, schedules, clipping, tidy', async () => {
      const w = await ctx.tensor(new Float32Array([1, -2, 3]), [3]);
      const b = await ctx.tensor(new Float32Array([0.5, -0.5]), [2]);
      w.requiresGrad = true;
      b.requiresGrad = true;
      const sgd = await ctx.createOptimizer('sgd', [w], { lr: 0.1, momentum: 0.9 });
      // tidy disposes the step's temporaries: only what it returns survives.
      const kept = await ctx.tidy(async () => {
        const sq = await ctx.mul(w, w);
        const loss = await ctx.sum(sq);
        await loss.backward();
        return loss;
      });
      // w, b, the momentum buffer, the optimizer's per-step values (step
      // count, rate: kept on the device so a captured step replays), kept
      // and w.grad
      assert.equal((await ctx.memoryStats()).liveTensors, base.liveTensors + 6);
      await sgd.step();
      await sgd.zeroGrad();
      assert.equal(w.grad, null);
      assert.equal(sgd.steps, 1);
      // PyTorch's first SGD step: w - lr * 2w (the buffer starts at the gradient).
      assertClose(assert, await w.read(), [0.8, -1.6, 2.4], 1e-6, 1e-6, 'sgd step');
      sgd.dispose();
      kept.dispose();
      // AdamW over two groups, a cosine schedule with warm-up, clipping.
      const adam = await ctx.createOptimizer('adamw', [{ params: [w] }, { params: [b], weightDecay: 0 }],
        { lr: 0.01, betas: [0.9, 0.99], weightDecay: 0.1 });
      await adam.setSchedule({ kind: 'cosine', lr: 0.5, warmupSteps: 4, totalSteps: 10, minLr: 0 });
      assert.ok(Math.abs(adam.lr - 0.125) < 1e-12, `lr of the first warm-up step: ${adam.lr}`);
      await ctx.tidy(async () => {
        const p = await ctx.mul(w, await ctx.tensor(new Float32Array([3, 0, -4]), [3]));
        const q = await ctx.mul(b, await ctx.tensor(new Float32Array([12, 0]), [2]));
        await (await ctx.add(await ctx.sum(p), await ctx.sum(q))).backward();
      });
      const norm = await adam.clipGradNorm(6.5);
      assertClose(assert, await norm.read(), [13], 1e-6, 1e-5, 'global norm');
      const gb = b.grad;
      assertClose(assert, await gb.read(), [6, 0], 1e-5, 1e-5, 'clipped gradient');
      const before = await b.read();
      await adam.step();
      // AdamW's first step moves each element by lr * sign(g) (b has no decay).
      assertClose(assert, await b.read(), [before[0] - 0.125, before[1]], 1e-5, 1e-5, 'adamw step');
      const z = await ctx.zeros([2]);
      await rejectsWith(ctx.createOptimizer('adamw', [z]), 'WT_ERR_INVALID_ARGUMENT', /requires grad/);
      // The in-place steps and backward ops of the catalogue.
      const p = await ctx.tensor(new Float32Array([1, 2]), [2]);
      const pg = await ctx.tensor(new Float32Array([2, -2]), [2]);
      await ctx.sgd_step(p, pg, null, { lr: 0.5 });
      assert.deepEqual(Array.from(await p.read()), [0, 3]);
      const dy = await ctx.tensor(new Float32Array([1, 2, 3, 4]), [2, 2]);
      const ids = await ctx.tensor(new Int32Array([1, 1]), [2]);
      const de = await ctx.embedding_backward(dy, ids, 3);
      assert.deepEqual(Array.from(await de.read()), [0, 0, 4, 6, 0, 0]);
      await adam.zeroGrad();
      adam.dispose(); // its moments go with it
      for (const t of [w, b, norm, gb, p, pg, dy, ids, de, z]) t.dispose();
      assert.equal((await ctx.memoryStats()).liveTensors, base.liveTensors);
    });

    it('reads the steps an optimizer took on the device', async () => {
      const w = await ctx.tensor(new Float32Array([1, -2, 3]), [3]);
      w.requiresGrad = true;
      const adam = await ctx.createOptimizer('adamw', [w], { lr: 0.01 });
      assert.equal(await adam.readSteps(), 0);
      for (let i = 0; i < 3; i++) {
        await ctx.tidy(async () => { await (await ctx.sum(await ctx.mul(w, w))).backward(); });
        await adam.step();
        await adam.zeroGrad();
      }
      // No graph replays here: the device's count is the host's.
      assert.equal(adam.steps, 3);
      assert.equal(await adam.readSteps(), 3);
      adam.dispose();
      assert.throws(() => adam.readSteps(), /disposed/);
      w.dispose();
    });

    it('scales the loss for f16 training: an overflow skips the step on the device', async () => {
      const w = await ctx.tensor(new Float32Array([1, -2, 3]), [3]);
      w.requiresGrad = true;
      const opt = await ctx.createOptimizer('sgd', [w], { lr: 0.5 });
      const scaler = await ctx.createGradScaler({ initScale: 3e38 });
      const stepWith = async (factor) => ctx.tidy(async () => {
        const w16 = await ctx.cast(w, 'f16');
        const loss = await ctx.sum(await ctx.cast(await ctx.mul(w16, w16), 'f32'));
        const scaled = await scaler.scale(await ctx.mul(loss, factor));
        await scaled.backward();
        await scaler.step(opt);
        await opt.zeroGrad();
      });
      await stepWith(4); // 14 * 4 * 3e38 overflows f32
      const found = await scaler.foundInf();
      const scale = await scaler.currentScale();
      assert.deepEqual(Array.from(await found.read()), [1]);
      assertClose(assert, await scale.read(), [1.5e38], 1e-6, 0, 'backed-off scale');
      assert.deepEqual(Array.from(await w.read()), [1, -2, 3]); // skipped
      await stepWith(0.1); // 1.4 * 1.5e38 fits: the step applies, w - 0.5 * 0.1 * 2w (scale undone)
      assertClose(assert, await w.read(), [0.9, -1.8, 2.7], 1e-5, 1e-6, 'the step after the overflow');
      for (const t of [w, found, scale]) t.dispose();
      scaler.dispose();
      opt.dispose();
      assert.equal((await ctx.memoryStats()).liveTensors, base.liveTensors);
    });

    it('refuses bad host data with a clear error', async () => {
      await rejectsWith(ctx.tensor(new Float64Array(4)), 'WT_ERR_INVALID_ARGUMENT', /Float64Array is not a webtensor dtype/);
      await rejectsWith(ctx.tensor(new Float32Array(4), [4], 'i32'), 'WT_ERR_INVALID_ARGUMENT', /holds f32 elements, not i32/);
      await rejectsWith(ctx.tensor(new Float32Array(5), [2, 3]), 'WT_ERR_SHAPE', /holds 6 elements, the data has 5/);
      await rejectsWith(ctx.tensor(new Int32Array(4), [2, -2]), 'WT_ERR_INVALID_ARGUMENT', /shape/);
      await rejectsWith(ctx.tensor([[1, 2], [3]]), 'WT_ERR_SHAPE', /ragged/);
      await rejectsWith(ctx.tensor('abc'), 'WT_ERR_INVALID_ARGUMENT');
      await rejectsWith(ctx.tensor([1, 2], [2], 'f64'), 'WT_ERR_INVALID_ARGUMENT', /dtype/);
      // Sizes past a 32-bit size_t (the module is wasm32).
      await rejectsWith(ctx.zeros([65536, 65536, 2]), 'WT_ERR_OUT_OF_MEMORY', /SIZE_MAX/);
      await rejectsWith(ctx.zeros([2 ** 40]), 'WT_ERR_OUT_OF_MEMORY');
      await rejectsWith(ctx.zeros([2.5]), 'WT_ERR_INVALID_ARGUMENT', /integer/);
      assert.equal((await ctx.memoryStats()).liveTensors, base.liveTensors);
    });

    it('carries the library\'s status and message', async () => {
      const a = await ctx.tensor(new Float32Array(6), [2, 3]);
      const b = await ctx.tensor(new Float32Array(8), [4, 2]);
      await rejectsWith(ctx.matmul(a, b), 'WT_ERR_SHAPE', /matmul: inner dimensions differ: a is \[2,3\], b is \[4,2\]/);
      await rejectsWith(a.sum(5), 'WT_ERR_INVALID_ARGUMENT', /axis/);
      await rejectsWith(a.reshape([4, 4]), 'WT_ERR_SHAPE');
      const mask = await a.cast('bool');
      await rejectsWith(ctx.neg(mask), 'WT_ERR_INVALID_ARGUMENT', /wt_neg: dtype bool/);
      mask.dispose();
      await rejectsWith(a.permute([0]), 'WT_ERR_INVALID_ARGUMENT', /2 axes/);
      await rejectsWith(a.add('x'), 'WT_ERR_INVALID_ARGUMENT', /b must be a Tensor, got String/);
      const pending = a.exp();
      await rejectsWith(a.add(pending), 'WT_ERR_INVALID_ARGUMENT', /got Promise \(await/);
      (await pending).dispose();
      await rejectsWith(a.sum(0.5), 'WT_ERR_INVALID_ARGUMENT', /integer/);
      await rejectsWith(ctx.softmax(a, -1, 3), 'WT_ERR_INVALID_ARGUMENT', /at most 2 arguments/);
      await rejectsWith(ctx.matmul(a), 'WT_ERR_INVALID_ARGUMENT', /argument b is missing/);
      await rejectsWith(ctx.pad(a, [1, 1], 'mirror'), 'WT_ERR_INVALID_ARGUMENT', /constant, reflect, replicate/);
      await rejectsWith(ctx.max_pool2d(a, {}), 'WT_ERR_INVALID_ARGUMENT', /kernelSize/);
      a.dispose();
      b.dispose();
      await ctx.sync();
      const s = await ctx.memoryStats();
      assert.equal(s.liveTensors, base.liveTensors, 'tensors leaked on error paths');
      assert.equal(s.liveBytes, base.liveBytes);
    });

    it('refuses disposed tensors and tensors of another context', async () => {
      const a = await ctx.tensor([1, 2, 3]);
      const foreign = await other.tensor([1, 2, 3]);
      await rejectsWith(ctx.add(a, foreign), 'WT_ERR_INVALID_ARGUMENT', /b belongs to another context/);
      await rejectsWith(foreign.add(a), 'WT_ERR_INVALID_ARGUMENT', /belongs to another context/);
      await rejectsWith(ctx.concat([a, foreign]), 'WT_ERR_INVALID_ARGUMENT', /tensors\[1\] belongs to another context/);
      a.dispose();
      assert.equal(a.disposed, true);
      a.dispose(); // a second dispose does nothing
      await rejectsWith(a.read(), 'WT_ERR_INVALID_ARGUMENT', /disposed/);
      await rejectsWith(ctx.exp(a), 'WT_ERR_INVALID_ARGUMENT', /x was disposed/);
      const moved = await foreign.to(ctx);
      assert.equal(moved.context, ctx);
      const sum = await ctx.add(moved, 1);
      assert.deepEqual(Array.from(await sum.read()), [2, 3, 4]);
      sum.dispose();
      moved.dispose();
      foreign.dispose();
      await ctx.sync();
      assert.equal((await ctx.memoryStats()).liveTensors, base.liveTensors);
      assert.equal((await other.memoryStats()).liveTensors, 0);
    });

    it('keeps memory at its baseline over many ops, disposed in any order', async () => {
      const x = await ctx.randn([16, 16], 3);
      const ts = [];
      for (let i = 0; i < 20; i++) ts.push(await (i % 2 ? x.exp() : ctx.matmul(x, x)));
      for (const t of ts.reverse()) t.dispose();
      x.dispose();
      const s = await ctx.memoryStats();
      assert.equal(s.liveTensors, base.liveTensors);
      assert.equal(s.liveBytes, base.liveBytes);
    });

    it('reads without blocking: other tasks run while a read waits', async () => {
      const x = await ctx.randn([256, 256], 4);
      const y = await ctx.matmul(x, x);
      const pending = y.read();
      assert.ok(pending instanceof Promise);
      const data = await pending;
      assert.equal(data.length, 256 * 256);
      assert.ok(Number.isFinite(data[0]));
      // Many reads in flight at once are served in order.
      const all = await Promise.all([x.read(), y.read(), x.sum().then((s) => s.read().finally(() => s.dispose()))]);
      assert.equal(all[0].length, 65536);
      x.dispose();
      y.dispose();
    });

    it('warns about and releases tensors dropped without dispose()', async () => {
      assert.equal(typeof globalThis.gc, 'function', 'run with --expose-gc');
      const warnings = [];
      const warn = console.warn;
      console.warn = (m) => warnings.push(String(m));
      try {
        await (async () => { await ctx.tensor(new Float32Array(1000)); })();
        for (let i = 0; i < 50 && !warnings.length; i++) {
          globalThis.gc();
          await new Promise((r) => setTimeout(r, 10));
        }
      } finally {
        console.warn = warn;
      }
      assert.ok(warnings.some((w) => /garbage-collected without dispose\(\)/.test(w) && /f32\[1000\]/.test(w)), warnings.join('\n'));
      const s = await ctx.memoryStats();
      assert.equal(s.liveTensors, base.liveTensors);
    });

    if (backend === 'webgpu') {
      it('announces a lost device as an event; later calls fail with WT_ERR_DEVICE_LOST', async () => {
        const lost = await context(backend);
        const x = await lost.tensor([1, 2, 3]);
        const events = [];
        lost.addEventListener('devicelost', (e) => events.push(e));
        await lost.loseDevice();
        // Heard without another call on the context.
        for (let i = 0; i < 100 && !events.length; i++) await new Promise((r) => setTimeout(r, 10));
        assert.equal(events.length, 1, 'devicelost fired while idle');
        await rejectsWith(x.exp(), 'WT_ERR_DEVICE_LOST');
        await rejectsWith(lost.tensor([1]), 'WT_ERR_DEVICE_LOST');
        assert.equal(events.length, 1);
        assert.ok(events[0] instanceof wt.DeviceLostEvent);
        assert.ok(events[0].message.length > 0);
        assert.equal(lost.lost, true);
        x.dispose();
        lost.destroy();
      });

      // The WebGPU spec lets an adapter make one device, so recovery asks
      // navigator.gpu for a fresh adapter; twice, as the second recovery
      // must not reuse the first fresh adapter either.
      it('recovers from a lost device, twice; tensors of the lost device fail', async () => {
        const lost = await context(backend);
        const old = await lost.tensor([5, 6]);
        for (let round = 0; round < 2; round++) {
          await lost.loseDevice();
          await rejectsWith(lost.tensor([1]), 'WT_ERR_DEVICE_LOST');
          await lost.recover();
          assert.equal(lost.lost, false);
          const y = await lost.tensor([1, 2, 3]);
          const twice = await y.mul(2);
          assert.deepEqual(Array.from(await twice.read()), [2, 4, 6]);
          for (const t of [y, twice]) t.dispose();
        }
        await rejectsWith(old.exp(), 'WT_ERR_DEVICE_LOST');
        old.dispose();
        lost.destroy();
      });
    }
  });
}

// A fresh process whose host has no WebGPU (no navigator.gpu), or only
// Dawn's Null adapter, which computes nothing: WebGPU is refused, AUTO
// takes the CPU.
for (const host of ['no navigator.gpu', 'Dawn\'s Null adapter']) {
  it(`WebGPU on a host with ${host} fails (WT_ERR_NO_DEVICE); AUTO takes the CPU`, () => {
    const mod = pathToFileURL(join(webDir, 'webtensor.mjs')).href;
    const install = host === 'no navigator.gpu' ? '' : `
      const { createRequire } = await import('node:module');
      const webgpu = createRequire(${JSON.stringify(join(root, 'tests', 'web', 'package.json'))})('webgpu');
      Object.assign(globalThis, webgpu.globals);
      Object.defineProperty(globalThis, 'navigator', { value: { gpu: webgpu.create(['backend=null']) } });`;
    const script = `${install}
      const wt = await import(${JSON.stringify(mod)});
      const auto = await wt.init({ backend: 'auto' });
      let status = 'resolved';
      try { await wt.init({ backend: 'webgpu' }); } catch (e) { status = e.status + ': ' + e.message; }
      console.log(JSON.stringify({ auto: auto.backend, status }));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script],
      { encoding: 'utf8', timeout: 60000 });
    const r = JSON.parse(out.trim().split('\n').pop());
    assert.equal(r.auto, 'cpu');
    assert.match(r.status, /^WT_ERR_NO_DEVICE: ./);
  });
}

// init()'s options for Dawn's Node addon, in a fresh process (they replace
// navigator.gpu): dawnFlags checked, passed to the addon's create(), and
// subgroupMatrix asked of the device; info() says what it gave. knobs set
// the module's environment, once.
it('init takes dawnFlags and subgroupMatrix; info() reports the matrix units and the f16 path', () => {
  const mod = pathToFileURL(join(webDir, 'webtensor.mjs')).href;
  const script = `
    const { createRequire } = await import('node:module');
    const webgpu = createRequire(${JSON.stringify(join(root, 'tests', 'web', 'package.json'))})('webgpu');
    const wt = await import(${JSON.stringify(mod)});
    const errors = [];
    for (const bad of [{ dawnFlags: 'allow_unsafe_apis', webgpu }, { dawnFlags: ['x'] }]) {
      try { await wt.init(bad); errors.push('resolved'); } catch (e) { errors.push(e.message); }
    }
    for (const bad of [{ knobs: 'WT_X=1' }, { knobs: { PATH: '/' } }, { knobs: { WT_X: {} } }]) {
      try { await wt.init(bad); errors.push('resolved'); } catch (e) { errors.push(e.message); }
    }
    // A knob reaches the module's C code: WT_DAWN_TOGGLES shows in info().
    const ctx = await wt.init({ backend: 'webgpu', webgpu, subgroupMatrix: true,
                                dawnFlags: ['enable-dawn-features=allow_unsafe_apis'],
                                knobs: { WT_DAWN_TOGGLES: '+timestamp_quantization' } });
    const info = await ctx.info();
    try { await wt.init({ backend: 'cpu', knobs: { WT_DAWN_TOGGLES: 'dawn' } }); errors.push('resolved'); }
    catch (e) { errors.push(e.message); }
    console.log(JSON.stringify({ errors, subgroupMatrix: info.subgroupMatrix, features: info.features,
                                 toggles: info.toggles }));
    ctx.destroy();`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script],
    { encoding: 'utf8', timeout: 120000 });
  const r = JSON.parse(out.trim().split('\n').pop());
  assert.match(r.errors[0], /dawnFlags must be an array of strings/);
  assert.match(r.errors[1], /pass the addon as options.webgpu/);
  for (const i of [2, 3, 4]) assert.match(r.errors[i], /knobs must be an object of WT_\* names/);
  assert.match(r.errors[5], /knobs apply when the module loads/);
  assert.match(r.toggles, /\+timestamp_quantization/);
  assert.equal(typeof r.subgroupMatrix, 'boolean');
  // The library asks for the units (the experimental option turns
  // allow_unsafe_apis on); lavapipe has none, and the features say so.
  assert.match(r.toggles, /\+allow_unsafe_apis/);
  assert.match(r.features, r.subgroupMatrix ? /subgroup-matrix: .*->/ : /subgroup-matrix: off \(asked for/);
  assert.match(r.features, /f16 kernels: /);
});
