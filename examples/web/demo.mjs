// The demo page: a small MLP on WebGPU (and the CPU backend), checked
// against float64 JavaScript and timed. The last line it logs is
// "webtensor demo: done" (or "... failed: ..."), which the page test waits for.
import { init } from './webtensor.mjs';

const $ = (id) => document.getElementById(id);
const log = (line) => { $('log').textContent += line + '\n'; console.log(line); };
const cell = (tr, text, cls) => { const td = tr.insertCell(); td.textContent = text; if (cls) td.className = cls; };

const N = 64, D = 256, H = 512, C = 10;
const M = 256; // the timed square matmul

// float64 reference of softmax(gelu(x W1^T + b1) W2^T + b2).
function reference(x, w1, b1, w2, b2) {
  const erf = (z) => { // Abramowitz-Stegun 7.1.26 is too coarse; this series/fraction pair is 1e-15
    const t = Math.abs(z);
    if (t < 2.5) {
      let sum = t, term = t;
      for (let k = 1; k < 80; k++) { term *= -t * t / k; sum += term / (2 * k + 1); }
      return Math.sign(z) * 2 / Math.sqrt(Math.PI) * sum;
    }
    let f = 0;
    for (let k = 60; k >= 1; k--) f = k / 2 / (t + f);
    return Math.sign(z) * (1 - Math.exp(-t * t) / Math.sqrt(Math.PI) / (t + f));
  };
  const out = new Float64Array(N * C);
  const h = new Float64Array(H);
  for (let n = 0; n < N; n++) {
    for (let j = 0; j < H; j++) {
      let s = b1[j];
      for (let k = 0; k < D; k++) s += x[n * D + k] * w1[j * D + k];
      h[j] = 0.5 * s * (1 + erf(s / Math.SQRT2));
    }
    let max = -Infinity;
    const logits = new Float64Array(C);
    for (let c = 0; c < C; c++) {
      let s = b2[c];
      for (let j = 0; j < H; j++) s += h[j] * w2[c * H + j];
      logits[c] = s;
      max = Math.max(max, s);
    }
    let sum = 0;
    for (let c = 0; c < C; c++) sum += Math.exp(logits[c] - max);
    for (let c = 0; c < C; c++) out[n * C + c] = Math.exp(logits[c] - max) / sum;
  }
  return out;
}

async function run(wt) {
  const tensors = [];
  const keep = (t) => { tensors.push(t); return t; };
  // Seeded weights: the same on every backend.
  const scaledRandn = async (shape, seed, scale) => {
    const r = await wt.randn(shape, seed);
    const s = await r.mul(scale);
    r.dispose();
    return s;
  };
  const x = keep(await wt.randn([N, D], 1));
  const w1 = keep(await scaledRandn([H, D], 2, 1 / 16));
  const b1 = keep(await wt.randn([H], 3));
  const w2 = keep(await scaledRandn([C, H], 4, 1 / 22));
  const b2 = keep(await wt.randn([C], 5));
  const forward = async () => {
    const h = await wt.linear(x, w1, b1);
    const g = await h.gelu();
    const logits = await wt.linear(g, w2, b2);
    const p = await logits.softmax(-1);
    for (const t of [h, g, logits]) t.dispose();
    return p;
  };
  const probs = await forward();
  const got = await probs.read();
  probs.dispose();
  const ref = reference(...await Promise.all([x, w1, b1, w2, b2].map((t) => t.read())));
  let maxErr = 0;
  for (let i = 0; i < got.length; i++) maxErr = Math.max(maxErr, Math.abs(got[i] - ref[i]));

  // Timing: the forward pass and one square matmul, each read back.
  const reps = 3;
  let t0 = performance.now();
  for (let r = 0; r < reps; r++) { const p = await forward(); await p.read(); p.dispose(); }
  const mlpMs = (performance.now() - t0) / reps;
  const a = keep(await wt.randn([M, M], 7));
  const warm = await wt.matmul(a, a); await warm.read(); warm.dispose();
  t0 = performance.now();
  for (let r = 0; r < reps; r++) { const m = await wt.matmul(a, a); await m.read(); m.dispose(); }
  const mmMs = (performance.now() - t0) / reps;
  for (const t of tensors) t.dispose();
  const stats = await wt.memoryStats();
  return { maxErr, mlpMs, mmMs, gflops: 2 * M ** 3 / mmMs / 1e6, live: stats.liveTensors, first: got.slice(0, 4) };
}

async function main() {
  const only = new URLSearchParams(location.search).get('backend');
  const backends = only ? [only] : ['webgpu', 'cpu'];
  const adapter = $('adapter');
  adapter.innerHTML = '';
  for (const backend of backends) {
    const wt = await init({ backend });
    const info = await wt.info();
    if (wt.adapter) {
      const a = wt.adapter;
      for (const [k, v] of [['adapter', a.name], ['vendor', a.vendor], ['architecture', a.architecture],
                            ['type', a.type], ['shader-f16', info.shaderF16 ? 'yes' : 'no'],
                            ['subgroups', info.subgroups ? 'yes' : 'no']]) {
        const tr = adapter.insertRow(); cell(tr, k); cell(tr, v || '(not given)');
      }
    } else {
      const tr = adapter.insertRow(); cell(tr, `${backend} backend`); cell(tr, info.reason);
    }
    wt.addEventListener('devicelost', (e) => log(`device lost: ${e.message}`));
    const r = await run(wt);
    const ok = r.maxErr < 1e-5 && r.live === 0;
    const tr = $('results').insertRow();
    cell(tr, wt.adapter ? `webgpu (${wt.adapter.name})` : backend);
    cell(tr, ok ? 'correct' : 'WRONG', ok ? 'ok' : 'bad');
    cell(tr, r.maxErr.toExponential(2));
    cell(tr, `${r.mlpMs.toFixed(2)} ms`);
    cell(tr, `${r.mmMs.toFixed(2)} ms (${r.gflops.toFixed(2)} GFLOP/s)`);
    log(`${backend}: max |error| ${r.maxErr.toExponential(2)} vs float64, probs[0, :4] = ` +
        `${Array.from(r.first, (v) => v.toFixed(5)).join(' ')}, ${r.live} tensors left`);
    if (!ok) throw new Error(`${backend}: results differ from the float64 reference (${r.maxErr})`);
    wt.destroy();
  }
  log('webtensor demo: done');
}

main().catch((e) => {
  const what = `${e.status ? e.status + ': ' : ''}${e.message}`;
  const p = document.createElement('p');
  p.className = 'bad';
  p.textContent = `Error: ${what}`;
  document.body.appendChild(p);
  log(`webtensor demo: failed: ${what}`);
});
