// The matrix units through the JavaScript API in Node: init() with Dawn's
// Node addon (npm "webgpu"), its flags and subgroupMatrix, then f16
// products checked against float64 and timed.
//
//   node bench/matrix_units_node.mjs WEB_DIR [N] [conv | attn]
//
// With "conv" only the convolutions run: f16 conv2d cases (odd sizes,
// dilation, a grouped one that the units decline,
// stride 2, padding, a bias, a weight whose rows are not whole 16-byte
// words) checked against float64, then 32x64x56x56 by 64 3x3 timed. With
// WT_GEMM_MATRIX_OFF=1 they take the other path, and the count expects
// every one declined.
//
// With "attn" only attention runs: f16 scaled dot-product attention
// (causal and not, grouped heads, odd lengths, more or fewer queries than
// keys, D 32..128) against float64 with the attention tests' f16
// tolerance (2e-3 + 2e-3 |want|), every output row of the small cases and
// sampled rows of the large ones (the bench program times it).
//
// WEB_DIR holds the wasm build's webtensor.mjs (build-wasm/web). The addon
// comes from WT_DAWN_NODE (a dawn.node path) or the "webgpu" package that
// Node resolves; WT_DAWN_FLAGS (';'-separated) overrides the default flags
// 'enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia'.
// The library's WT_* variables of this process (e.g. WT_GEMM_MATRIX_KERNEL
// to pick the kernel) are passed to init() as its knobs.
// Prints what the adapter gave (features, configs, the f16 path), then for
// each case the worst error against float64 relative to its tolerance
// (every element of the small cases, 4096 sampled elements of N^3;
// tolerance at check()), and
// the wall time of N^3 products (each product's result read back to
// the host once at the end: a sync). Exits 1 if a check fails.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { join, resolve } from 'node:path';

const webDir = resolve(process.argv[2] || 'build-wasm/web');
const N = Number(process.argv[3] || 4096);
const convOnly = process.argv[4] === 'conv';
const attnOnly = process.argv[4] === 'attn';
const require = createRequire(join(process.cwd(), 'package.json'));
const webgpu = process.env.WT_DAWN_NODE ? require(process.env.WT_DAWN_NODE) : require('webgpu');
const flags = (process.env.WT_DAWN_FLAGS ||
               'enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia').split(';').filter(Boolean);
const wt = await import(pathToFileURL(join(webDir, 'webtensor.mjs')).href);

const knobs = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('WT_') &&
                                                                  !k.startsWith('WT_DAWN')));
console.log('knobs:', JSON.stringify(knobs));
const ctx = await wt.init({ backend: 'webgpu', webgpu, dawnFlags: flags, subgroupMatrix: true, knobs });
const info = await ctx.info();
console.log('adapter:', JSON.stringify(info.adapter));
console.log('shaderF16', info.shaderF16, 'subgroupMatrix', info.subgroupMatrix, 'toggles', info.toggles);
console.log('features:', info.features);

// Seeded uniform f16 values in [-1, 1).
let seed = 12345;
const rnd = () => { seed = (seed * 1103515245 + 12345) >>> 0; return (seed / 4294967296) * 2 - 1; };
const halves = (n) => wt.float32ToFloat16(Array.from({ length: n }, rnd));
const h2f = (h) => wt.float16ToFloat32(h);

let failed = false;
// got (f16 bits) at out index (i, j) against the float64 sum over k of
// a[i, k] b[k, j] (+ bias[j]): within 2 f16 ulps of the value (the
// result's rounding, and a second one where the bias is added after a
// rounded product: ulps of the product where it is the larger) plus 2^-16
// of the sum of |terms| (f32 accumulation of up to N terms).
function check(what, got, M, Nn, K, A, B, bT, bias, samples) {
  let worst = 0, at = '';
  const g = h2f(got);
  const pick = samples ? Array.from({ length: samples }, (_, s) => [(s * 7919) % M, (s * 104729 + 13) % Nn])
    : Array.from({ length: M * Nn }, (_, s) => [Math.floor(s / Nn), s % Nn]);
  for (const [i, j] of pick) {
    let want = bias ? bias[j] : 0, mag = Math.abs(want);
    for (let k = 0; k < K; k++) {
      const t = A[i * K + k] * (bT ? B[j * K + k] : B[k * Nn + j]);
      want += t; mag += Math.abs(t);
    }
    // A product rounded before the bias is added: ulps of the larger.
    const big = Math.max(Math.abs(want), bias ? Math.abs(want - bias[j]) : 0);
    const ulp = Math.pow(2, Math.max(Math.floor(Math.log2(big || 1e-30)), -14) - 10);
    const r = Math.abs(g[i * Nn + j] - want) / (2 * ulp + mag * Math.pow(2, -16));
    if (!(r <= worst)) { worst = r; at = `[${i},${j}] got ${g[i * Nn + j]} want ${want}`; }
  }
  const ok = worst <= 1;
  if (!ok) failed = true;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}: worst error ${worst.toFixed(3)} of the tolerance (${pick.length} elements checked; worst at ${at})`);
}

// batch > 1: a batched product [batch, M, K] @ [batch, K, N], each
// product of the batch checked.
async function product(M, Nn, K, { bT = false, withBias = false, samples = 0, batch = 1 } = {}) {
  const ha = halves(batch * M * K), hb = halves(batch * K * Nn), hbias = withBias ? halves(Nn) : null;
  const lead = batch > 1 ? [batch] : [];
  const a = await ctx.tensor(ha, [...lead, M, K], 'f16');
  const b = await ctx.tensor(hb, bT ? [Nn, K] : [...lead, K, Nn], 'f16');
  const bias = withBias ? await ctx.tensor(hbias, [Nn], 'f16') : null;
  const y = bT ? await ctx.linear(a, b, bias) : await ctx.matmul(a, b);
  const got = await y.read();
  for (let z = 0; z < batch; z++) {
    check(`${bT ? 'linear x @ w^T' : batch > 1 ? `bmm [${batch}] z=${z}` : 'matmul'}${withBias ? ' + bias' : ''} f16 ${M}x${Nn}x${K}`,
          got.subarray(z * M * Nn, (z + 1) * M * Nn), M, Nn, K, h2f(ha.subarray(z * M * K, (z + 1) * M * K)),
          h2f(hb.subarray(z * K * Nn, (z + 1) * K * Nn)), bT, hbias ? h2f(hbias) : null, samples);
  }
  for (const t of [a, b, bias, y]) if (t) t.dispose();
}

// The matrix units' count of products they ran and declined so far.
const units = async () => {
  const m = /matrix units: (\d+) f16 products so far, (\d+) declined/.exec((await ctx.info()).features);
  return m ? [Number(m[1]), Number(m[2])] : [0, 0];
};
// conv2d f16 of x [n, c, h, w] by w [o, c / groups, kh, kw] (+ bias)
// against float64 at every output (or `samples` of them), tolerance as
// check()'s. stride, pad ([h, w]: pad on both sides) and dilation are a
// number or [h, w].
async function conv(n, c, h, w, o, kh, kw, { stride = 1, pad = 0, dilation = 1, groups = 1, withBias = false,
                                         samples = 0 } = {}) {
  const two = (v) => (typeof v === 'number' ? [v, v] : v);
  const [sh, sw] = two(stride), [ph, pw] = two(pad), [dh, dw] = two(dilation);
  const cg = c / groups, og = o / groups;
  const hx = halves(n * c * h * w), hw = halves(o * cg * kh * kw), hb = withBias ? halves(o) : null;
  const x = await ctx.tensor(hx, [n, c, h, w], 'f16');
  const wt_ = await ctx.tensor(hw, [o, cg, kh, kw], 'f16');
  const bias = withBias ? await ctx.tensor(hb, [o], 'f16') : null;
  const y = await ctx.conv2d(x, wt_, bias, { stride: [sh, sw], padding: [ph, pw], dilation: [dh, dw], groups });
  const [, , oh, ow] = y.shape;
  const got = h2f(await y.read());
  const X = h2f(hx), W = h2f(hw), Bv = hb ? h2f(hb) : null;
  const total = n * o * oh * ow;
  const pick = samples ? Array.from({ length: samples }, (_, s) => (s * 7919 + 13) % total)
    : Array.from({ length: total }, (_, s) => s);
  let worst = 0, at = '';
  for (const e of pick) {
    const ox = e % ow, oy = Math.floor(e / ow) % oh, oc = Math.floor(e / (ow * oh)) % o;
    const i = Math.floor(e / (ow * oh * o)), g = Math.floor(oc / og);
    let want = Bv ? Bv[oc] : 0, mag = Math.abs(want), prod = 0;
    for (let cj = 0; cj < cg; cj++)
      for (let ky = 0; ky < kh; ky++)
        for (let kx = 0; kx < kw; kx++) {
          const iy = oy * sh - ph + ky * dh, ix = ox * sw - pw + kx * dw;
          if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
          const t = X[((i * c + g * cg + cj) * h + iy) * w + ix] * W[((oc * cg + cj) * kh + ky) * kw + kx];
          want += t; prod += t; mag += Math.abs(t);
        }
    const big = Math.max(Math.abs(want), Math.abs(prod));
    const ulp = Math.pow(2, Math.max(Math.floor(Math.log2(big || 1e-30)), -14) - 10);
    const r = Math.abs(got[e] - want) / (2 * ulp + mag * Math.pow(2, -16));
    if (!(r <= worst)) { worst = r; at = `${e} got ${got[e]} want ${want}`; }
  }
  const ok = worst <= 1;
  if (!ok) failed = true;
  console.log(`${ok ? 'ok  ' : 'FAIL'} conv2d f16 ${n}x${c}x${h}x${w} by ${o}x${cg}x${kh}x${kw} stride ${sh},${sw} ` +
              `pad ${ph},${pw} dilation ${dh},${dw}${groups > 1 ? ` groups ${groups}` : ''}` +
              `${withBias ? ' + bias' : ''}: worst error ${worst.toFixed(3)} of the tolerance (${pick.length} checked; at ${at})`);
  for (const t of [x, wt_, bias, y]) if (t) t.dispose();
}

const matrixOff = Number(knobs.WT_GEMM_MATRIX_OFF || 0) !== 0;

// Attention of f16 q [b, hq, sq, d], k, v [b, hkv, skv, d] against float64
// (the inputs as rounded to f16): every row, or `rows` sampled (b, h, i).
async function attention(b, hq, hkv, sq, skv, d, causal, { rows = 0 } = {}) {
  const hqv = halves(b * hq * sq * d), hk = halves(b * hkv * skv * d), hv = halves(b * hkv * skv * d);
  const q = await ctx.tensor(hqv, [b, hq, sq, d], 'f16');
  const k = await ctx.tensor(hk, [b, hkv, skv, d], 'f16');
  const v = await ctx.tensor(hv, [b, hkv, skv, d], 'f16');
  const y = await ctx.scaled_dot_product_attention(q, k, v, null, causal);
  const got = h2f(await y.read());
  const Q = h2f(hqv), K = h2f(hk), V = h2f(hv);
  const total = b * hq * sq, scale = 1 / Math.sqrt(d), shift = skv - sq;
  const pick = rows ? Array.from({ length: rows }, (_, s) => (s * 7919 + 13) % total) : Array.from({ length: total }, (_, s) => s);
  let worst = 0, at = '';
  const sc = new Float64Array(skv);
  for (const e of pick) {
    const i = e % sq, h = Math.floor(e / sq) % hq, z = Math.floor(e / (sq * hq));
    const kh = Math.floor(h / (hq / hkv)), qo = e * d, ko = (z * hkv + kh) * skv * d;
    const last = causal ? Math.min(i + shift, skv - 1) : skv - 1;
    let mx = -Infinity;
    for (let j = 0; j <= last; j++) {
      let s = 0;
      for (let c = 0; c < d; c++) s += Q[qo + c] * K[ko + j * d + c];
      sc[j] = s * scale; if (sc[j] > mx) mx = sc[j];
    }
    let den = 0;
    for (let j = 0; j <= last; j++) { sc[j] = Math.exp(sc[j] - mx); den += sc[j]; }
    for (let c = 0; c < d; c++) {
      let want = 0;
      for (let j = 0; j <= last; j++) want += sc[j] * V[ko + j * d + c];
      want = last < 0 ? 0 : want / den;
      const r = Math.abs(got[qo + c] - want) / (2e-3 + 2e-3 * Math.abs(want));
      if (!(r <= worst)) { worst = r; at = `[${z},${h},${i},${c}] got ${got[qo + c]} want ${want}`; }
    }
  }
  const ok = worst <= 1;
  if (!ok) failed = true;
  console.log(`${ok ? 'ok  ' : 'FAIL'} attention f16 ${b}x${hq}(kv ${hkv})x${sq}x${d} keys ${skv}${causal ? ' causal' : ''}: ` +
              `worst error ${worst.toFixed(3)} of the tolerance (${pick.length} rows; at ${at})`);
  for (const t of [q, k, v, y]) t.dispose();
}

if (attnOnly) {
  const before = await units();
  await attention(2, 4, 2, 45, 45, 64, true);       // grouped heads, a partial block
  await attention(2, 4, 2, 45, 45, 64, false);
  await attention(1, 3, 3, 70, 131, 128, true);     // more keys than queries
  await attention(1, 2, 2, 97, 33, 128, true);      // fewer: early rows see no key
  await attention(2, 2, 1, 77, 77, 128, false);
  await attention(1, 2, 1, 33, 50, 80, false);      // D 80: five fragments
  await attention(1, 2, 2, 40, 40, 32, true);
  await attention(1, 4, 4, 1000, 1000, 128, true, { rows: 200 });
  await attention(2, 8, 8, 2048, 2048, 128, true, { rows: 96 });
  await attention(1, 8, 8, 2048, 2048, 64, false, { rows: 64 });
  const [ran, declined] = (await units()).map((v, i) => v - before[i]);
  const attnOff = knobs.WT_ATTN_MATRIX === '0';
  console.log(`matrix units: ${ran} of the 10 attention cases ran there, ${declined} declined`);
  if (attnOff ? ran !== 0 : ran !== 10 || declined !== 0) failed = true;
  console.log('features after:', (await ctx.info()).features);
  ctx.destroy();
  process.exit(failed ? 1 : 0);
}
if (convOnly) {
  const before = await units();
  await conv(2, 8, 9, 12, 16, 3, 3, { pad: 1, withBias: true });          // K 72; planes of 108
  await conv(3, 5, 13, 12, 12, 3, 3, { stride: 2, pad: 1 });              // K 45: w's rows padded
  await conv(2, 16, 12, 12, 24, 1, 1);                                    // pointwise
  await conv(1, 3, 17, 20, 8, 5, 5, { stride: 2, pad: 2, withBias: true }); // K 75, planes of 90
  await conv(2, 64, 20, 20, 64, 3, 3, { pad: 1, withBias: true });
  await conv(32, 64, 56, 56, 64, 3, 3, { pad: 1, samples: 4096 });
  await conv(3, 5, 7, 7, 4, 3, 3);                                        // planes of 25: another path
  await conv(2, 6, 11, 11, 20, 3, 2, { pad: [2, 1], dilation: [2, 3], withBias: true }); // K 36
  await conv(2, 9, 15, 14, 18, 3, 3, { stride: [1, 2], pad: [0, 1], dilation: 2 });      // K 81
  await conv(2, 8, 10, 10, 12, 3, 3, { pad: 1, groups: 2, withBias: true });             // declined: groups
  const [ran, declined] = (await units()).map((v, i) => v - before[i]);
  // f16 results go in pairs: the odd plane takes the API's im2col +
  // matmul in f32 before the units are asked; the grouped one is
  // declined; the other eight run on the units unless they are turned off.
  console.log(`matrix units: ${ran} of the conv2d cases ran there, ${declined} declined`);
  if (matrixOff ? ran !== 0 : ran !== 8 || declined !== 1) failed = true;
  const x = await ctx.tensor(halves(32 * 64 * 56 * 56), [32, 64, 56, 56], 'f16');
  const w = await ctx.tensor(halves(64 * 64 * 9), [64, 64, 3, 3], 'f16');
  const op = () => ctx.conv2d(x, w, null, { padding: 1 });
  const first = await op();
  await first.read();
  first.dispose();
  const flops = 2 * 32 * 64 * 56 * 56 * 64 * 9;
  for (const reps of [10, 30]) {
    const t0 = performance.now();
    let last = null;
    for (let r = 0; r < reps; r++) { if (last) last.dispose(); last = await op(); }
    await last.read();
    const sec = (performance.now() - t0) / 1e3 / reps;
    last.dispose();
    console.log(`conv2d f16 32x64x56x56 by 64x3x3 pad 1 x${reps}: ${(sec * 1e3).toFixed(3)} ms each ` +
                `(wall, incl. one read), ${(flops / sec / 1e12).toFixed(1)} TFLOP/s`);
  }
  x.dispose(); w.dispose();
  console.log('features after:', (await ctx.info()).features);
  ctx.destroy();
  process.exit(failed ? 1 : 0);
}

const before = await units();
await product(256, 128, 64);
await product(64, 128, 96, { bT: true, withBias: true });
await product(48, 80, 32, { bT: true });
// Shapes that are not whole tiles: edges in m, n and a k that ends inside
// a slab (the tiled kernel takes K, and N where b is row-major, in
// multiples of 8).
await product(200, 136, 72);
await product(130, 70, 40, { bT: true, withBias: true });
await product(1000, 1000, 1000, { samples: 4096 });
await product(N, N, N, { samples: 4096 });
await product(N + 8, N - 24, N + 40, { bT: true, samples: 4096 });
await product(136, 200, 72, { batch: 3 });
await product(N / 2 + 16, N / 2 - 8, N / 2 + 24, { batch: 2, samples: 2048 });
{
  const [ran, declined] = (await units()).map((v, i) => v - before[i]);
  console.log(`matrix units: ${ran} of the checked products ran there, ${declined} declined`);
  if (ran !== 10 || declined !== 0) failed = true;
}

// Time: reps products of N^3, one read at the end.
{
  const a = await ctx.tensor(halves(N * N), [N, N], 'f16');
  const b = await ctx.tensor(halves(N * N), [N, N], 'f16');
  // b as a linear layer's weight too ([n, k]: x @ w^T), and a batch of 8
  // products of (N/2)^3 (as many flops as N^3).
  const h = N / 2;
  const ba = await ctx.tensor(halves(8 * h * h), [8, h, h], 'f16');
  const bb = await ctx.tensor(halves(8 * h * h), [8, h, h], 'f16');
  for (const [what, op] of [['matmul', () => ctx.matmul(a, b)], ['linear x @ w^T', () => ctx.linear(a, b)],
                            [`bmm [8, ${h}, ${h}] @ [8, ${h}, ${h}] (flops of)`, () => ctx.matmul(ba, bb)]]) {
    const first = await op();
    await first.read();
    first.dispose();
    for (const reps of [10, 30]) {
      const t0 = performance.now();
      let last = null;
      for (let r = 0; r < reps; r++) { if (last) last.dispose(); last = await op(); }
      await last.read();
      const s = (performance.now() - t0) / 1e3 / reps;
      last.dispose();
      console.log(`${what} f16 ${N}^3 x${reps}: ${(s * 1e3).toFixed(3)} ms each (wall, incl. one read), ` +
                  `${(2 * N ** 3 / s / 1e12).toFixed(1)} TFLOP/s`);
    }
  }
  a.dispose(); b.dispose(); ba.dispose(); bb.dispose();
}
console.log('features after:', (await ctx.info()).features);
ctx.destroy();
process.exit(failed ? 1 : 0);
