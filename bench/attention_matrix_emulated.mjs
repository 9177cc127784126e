// attention_matrix.wgsl's logic on a device without subgroup matrices:
// the fragment builtins are replaced by per-invocation stand-ins
// (invocation t of a subgroup holds row t / 2 of a left fragment, columns
// (t % 2) 8 .. + 8 of a right one and of a result, read from and written
// to the same workgroup memory as the real loads and stores), the kernel
// runs on Dawn's Node addon (lavapipe here) and its f16 result is checked
// against float64 with the attention tests' f16 tolerance. It checks the
// staging, the fragment layouts, the causal limits, the online softmax and
// the rescaling, not the matrix units; a case takes a minute or more on
// lavapipe (the stand-ins compile slowly), so it is run by hand:
//
//   node bench/attention_matrix_emulated.mjs B HQ HKV SQ SKV D CAUSAL BK SGS [KSCALE]
//
// CAUSAL 0 or 1; BK keys a block, SGS subgroups a workgroup (the prelude's
// constants); KSCALE > 1 scales the keys past the first block, so that row
// maxima rise and the accumulator is rescaled. EMU_MOVE=0.0 sets the
// kernel's threshold for moving the running maximum to 0 (every rise
// rescales). Needs the webgpu package of tests/web (npm ci there).
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'tests/web/package.json'));
const { create, globals } = require('webgpu');
Object.assign(globalThis, globals);
const [B, HQ, HKV, SQ, SKV, D, CAUSAL, BK, SGS, KSCALE = 1] = process.argv.slice(2).map(Number);
const gpu = create([]);
const adapter = await gpu.requestAdapter();
const device = await adapter.requestDevice({ requiredFeatures: ['shader-f16', 'subgroups'],
  requiredLimits: { maxComputeWorkgroupStorageSize: adapter.limits.maxComputeWorkgroupStorageSize } });
let code = readFileSync(join(root, 'src/webgpu/kernels/wgsl/attention_matrix.wgsl'), 'utf8');
if (process.env.EMU_MOVE) code = code.replace('const MOVE: f32 = 8.0;', 'const MOVE: f32 = ' + process.env.EMU_MOVE + ';');
code = code.replace(/alias Left = .*\n/, 'alias Left = FL;\n').replace(/alias Right = .*\n/, 'alias Right = FR;\n').replace(/alias Acc = .*\n/, 'alias Acc = FA;\n')
  .replace(/subgroupMatrixLoad<Right, col_major>\(/g, 'ld_r_col(').replace(/subgroupMatrixLoad<Right, row_major>\(/g, 'ld_r_row(')
  .replace(/subgroupMatrixLoad<Left, row_major>\(/g, 'ld_l(').replace(/subgroupMatrixLoad<Acc, row_major>\(/g, 'ld_a(')
  .replace(/subgroupMatrixStore<row_major>\(/g, 'st_a(').replace(/subgroupMatrixMultiplyAccumulate\(/g, 'mma(')
  .replace('let lane = lid % 32u;', 'let lane = lid % 32u; EMU_LANE = lane;');
// The kernel's text changed under the stand-ins: say so rather than run something else.
if (/subgroupMatrix|subgroup_matrix_(left|right|result)/.test(code.replace(/\/\/.*$/gm, '')) || !code.includes('EMU_LANE = lane'))
  { console.log('the kernel no longer matches the stand-ins (bench/attention_matrix_emulated.mjs)'); process.exit(1); }
const stubs = `
var<private> EMU_LANE: u32;
struct FL { r: array<f32, 16> }          // row lane/2
struct FR { c: array<f32, 128> }         // [k][8 columns (lane%2)*8..]
struct FA { v: array<f32, 8> }            // row lane/2, columns (lane%2)*8..
fn half_at(p: ptr<workgroup, array<vec4<u32>, 32>>, e: u32) -> f32 {  // element e (halves) of the packed array
  let w = (*p)[e / 8u]; let u = w[(e % 8u) / 2u];
  return unpack2x16float(u)[e % 2u];
}
fn ld_l(p: ptr<workgroup, array<vec4<u32>, 32>>, o: u32, s: u32) -> FL {
  var f: FL; let row = EMU_LANE / 2u;
  for (var k = 0u; k < 16u; k++) { f.r[k] = half_at(p, o * 8u + row * s * 8u + k); }
  return f;
}
fn ld_r_row(p: ptr<workgroup, array<vec4<u32>, 32>>, o: u32, s: u32) -> FR {   // (k, n) at k*s + n
  var f: FR; let c0 = (EMU_LANE % 2u) * 8u;
  for (var k = 0u; k < 16u; k++) { for (var j = 0u; j < 8u; j++) { f.c[k * 8u + j] = half_at(p, o * 8u + k * s * 8u + c0 + j); } }
  return f;
}
fn ld_r_col(p: ptr<workgroup, array<vec4<u32>, 32>>, o: u32, s: u32) -> FR {   // (k, n) at n*s + k
  var f: FR; let c0 = (EMU_LANE % 2u) * 8u;
  for (var k = 0u; k < 16u; k++) { for (var j = 0u; j < 8u; j++) { f.c[k * 8u + j] = half_at(p, o * 8u + (c0 + j) * s * 8u + k); } }
  return f;
}
fn ld_a(p: ptr<workgroup, array<f32, BQ * SS>>, o: u32, s: u32) -> FA {
  var f: FA; let row = EMU_LANE / 2u; let c0 = (EMU_LANE % 2u) * 8u;
  for (var j = 0u; j < 8u; j++) { f.v[j] = (*p)[o + row * s + c0 + j]; }
  return f;
}
fn st_a(p: ptr<workgroup, array<f32, BQ * SS>>, o: u32, m: FA, s: u32) {
  let row = EMU_LANE / 2u; let c0 = (EMU_LANE % 2u) * 8u;
  for (var j = 0u; j < 8u; j++) { (*p)[o + row * s + c0 + j] = m.v[j]; }
}
fn mma(l: FL, r: FR, a: FA) -> FA {
  var o = a;
  for (var j = 0u; j < 8u; j++) { for (var k = 0u; k < 16u; k++) { o.v[j] += l.r[k] * r.c[k * 8u + j]; } }
  return o;
}
fn pack_halves(v: vec2<f32>) -> u32 { return pack2x16float(v); }
`;
const prelude = `enable f16;\nenable subgroups;\nconst D: u32 = ${D}u;\nconst SGS: u32 = ${SGS}u;\nconst BK: u32 = ${BK}u;\nconst CAUSAL: bool = ${CAUSAL ? 'true' : 'false'};\n`;
const mod = device.createShaderModule({ code: prelude + code + stubs });
const info = await mod.getCompilationInfo();
for (const m of info.messages) console.log(m.type, m.lineNum, m.message);
device.pushErrorScope('validation');
const pipe = device.createComputePipeline({ layout: 'auto', compute: { module: mod, entryPoint: 'main' } });
const perr = await device.popErrorScope(); if (perr) { console.log('pipeline', perr.message); process.exit(1); }
let seed = 7; const rnd = () => { seed = (seed * 1103515245 + 12345) >>> 0; return (seed / 4294967296) * 2 - 1; };
function h2f(h) { const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 31, m = h & 1023;
  if (e === 0) return s * m * Math.pow(2, -24); if (e === 31) return m ? NaN : s * Infinity; return s * (1 + m / 1024) * Math.pow(2, e - 15); }
function f2h(x) { // values in [-1, 1): round to nearest even
  const s = x < 0 ? 0x8000 : 0; let a = Math.abs(x); if (a < Math.pow(2, -14)) return s | Math.round(a / Math.pow(2, -24));
  let e = Math.floor(Math.log2(a)); let m = a / Math.pow(2, e) - 1; let mi = Math.round(m * 1024);
  if (Math.abs(m * 1024 - Math.floor(m * 1024) - 0.5) < 1e-12) mi = Math.floor(m * 1024) % 2 ? Math.floor(m * 1024) + 1 : Math.floor(m * 1024);
  if (mi === 1024) { mi = 0; e++; } return s | ((e + 15) << 10) | mi; }
function halvesOf(n) { const f = new Float64Array(n), h = new Uint16Array(n);
  for (let i = 0; i < n; i++) { h[i] = f2h(rnd()); f[i] = h2f(h[i]); } return [f, h]; }
const [Qf, Qh] = halvesOf(B * HQ * SQ * D), [Kf, Kh] = halvesOf(B * HKV * SKV * D), [Vf, Vh] = halvesOf(B * HKV * SKV * D);
// Keys past the first block scaled (key index times KSCALE / SKV growth): later maxima jump, the accumulator is rescaled.
for (let i = 0; i < Kf.length; i++) { const key = Math.floor(i / D) % SKV; if (key >= BK) { Kh[i] = f2h(Kf[i] * KSCALE * (1 + key / SKV)); Kf[i] = h2f(Kh[i]); } }
const buf = (h, usage) => { const b = device.createBuffer({ size: Math.ceil(h.byteLength / 16) * 16, usage, mappedAtCreation: true });
  new Uint16Array(b.getMappedRange()).set(h); b.unmap(); return b; };
const S = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
const qb = buf(Qh, S), kb = buf(Kh, S), vb = buf(Vh, S);
const outBytes = Math.ceil(B * HQ * SQ * D * 2 / 16) * 16;
const ob = device.createBuffer({ size: outBytes, usage: S });
const BQ = 16 * SGS, blocks = Math.ceil(SQ / BQ), wgs = B * HQ * blocks;
const pr = new ArrayBuffer(96); const u = new Uint32Array(pr), f = new Float32Array(pr);
u.set([0, HQ * SQ * D, SQ * D, D, 0, HKV * SKV * D, SKV * D, D, 0, HKV * SKV * D, SKV * D, D, HQ, HKV, SQ, SKV, HQ / HKV, blocks, wgs, 0xff800000]);
f[20] = 1.4426950408889634 / Math.sqrt(D); u[21] = D / 4; u[22] = BK;
const pb = device.createBuffer({ size: 96, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST }); device.queue.writeBuffer(pb, 0, pr);
const bg = device.createBindGroup({ layout: pipe.getBindGroupLayout(0), entries: [pb, qb, kb, vb, ob].map((b, i) => ({ binding: i, resource: { buffer: b } })) });
const rb = device.createBuffer({ size: outBytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
const enc = device.createCommandEncoder(); const pass = enc.beginComputePass(); pass.setPipeline(pipe); pass.setBindGroup(0, bg);
pass.dispatchWorkgroups(wgs); pass.end(); enc.copyBufferToBuffer(ob, 0, rb, 0, outBytes); device.queue.submit([enc.finish()]);
await rb.mapAsync(GPUMapMode.READ); const gh = new Uint16Array(rb.getMappedRange().slice(0)); const got = Array.from(gh, h2f);
let worst = 0, at = ''; const shift = SKV - SQ; const sc = new Float64Array(SKV);
for (let e = 0; e < B * HQ * SQ; e++) {
  const i = e % SQ, h = Math.floor(e / SQ) % HQ, z = Math.floor(e / (SQ * HQ)), kh = Math.floor(h / (HQ / HKV));
  const ko = (z * HKV + kh) * SKV * D, last = CAUSAL ? Math.min(i + shift, SKV - 1) : SKV - 1;
  let mx = -Infinity;
  for (let j = 0; j <= last; j++) { let s = 0; for (let c = 0; c < D; c++) s += Qf[e * D + c] * Kf[ko + j * D + c]; sc[j] = s / Math.sqrt(D); mx = Math.max(mx, sc[j]); }
  let den = 0; for (let j = 0; j <= last; j++) { sc[j] = Math.exp(sc[j] - mx); den += sc[j]; }
  for (let c = 0; c < D; c++) { let w = 0; for (let j = 0; j <= last; j++) w += sc[j] * Vf[ko + j * D + c]; w = last < 0 ? 0 : w / den;
    const r = Math.abs(got[e * D + c] - w) / (2e-3 + 2e-3 * Math.abs(w)); if (!(r <= worst)) { worst = r; at = `[${z},${h},${i},${c}] got ${got[e * D + c]} want ${w}`; } }
}
console.log(`${worst <= 1 ? 'ok  ' : 'FAIL'} emulated ${B}x${HQ}(${HKV})x${SQ}x${D} keys ${SKV} causal ${CAUSAL} bk ${BK} sgs ${SGS}: worst ${worst.toFixed(3)} at ${at}`);
process.exit(worst <= 1 ? 0 : 1);
