// The matrix units' ceiling through Dawn's Node addon, without the
// library: each subgroup of 1,056 workgroups of 128 invocations runs 1,024
// steps of NACC subgroupMatrixMultiplyAccumulate (f16 16 x 16 x 16, RESULT
// f32 or f16) on fragments held in registers, or, with LOAD 1, reloaded
// from workgroup memory each step. Prints the time a dispatch (wall:
// one dispatch against six, one submit each) and TFLOP/s.
//
//   WT_DAWN_NODE=path/to/dawn.node node bench/matrix_units_micro.mjs NACC LOAD [RESULT]
//
// NOROB=1 adds disable_robustness to the addon's flags.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { create, globals } = require(process.env.WT_DAWN_NODE);
Object.assign(globalThis, globals);
const NACC = Number(process.argv[2]);
const LOAD = process.argv[3] === '1';
const RT = process.argv[4] || 'f32';
const gpu = create(['enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia' +
                    (process.env.NOROB ? ',disable_robustness' : '')]);
const ad = await gpu.requestAdapter({ powerPreference: 'high-performance' });
const dev = await ad.requestDevice({
  requiredFeatures: ['shader-f16', 'chromium-experimental-subgroup-matrix'],
  requiredLimits: {
    maxComputeWorkgroupStorageSize: ad.limits.maxComputeWorkgroupStorageSize,
    maxStorageBufferBindingSize: ad.limits.maxStorageBufferBindingSize,
    maxBufferSize: ad.limits.maxBufferSize,
  },
});
const ITERS = 1024, WGS = 132 * 8;
const code = `enable f16;
enable chromium_experimental_subgroup_matrix;
diagnostic(off, chromium.subgroup_matrix_uniformity);
@group(0) @binding(0) var<storage, read_write> out: array<${RT}>;
var<workgroup> sa: array<vec4<u32>, 2048>;
@compute @workgroup_size(128)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
  for (var i = 0u; i < 16u; i++) { sa[lid + i * 128u] = vec4<u32>(0x00010001u * ((lid + i) % 3u)); }
  workgroupBarrier();
  let sg = lid / 32u;
  var acc: array<subgroup_matrix_result<${RT}, 16, 16>, ${NACC}>;
  var l = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&sa, sg * 64u, 2u);
  var r = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, row_major>(&sa, sg * 64u + 32u, 2u);
  for (var it = 0u; it < ${ITERS}u; it++) {
    if (${LOAD}) {
      l = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&sa, (it % 32u) * 64u, 2u);
      r = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, row_major>(&sa, (it % 32u) * 64u + 32u, 2u);
    }
    for (var x = 0u; x < ${NACC}u; x++) { acc[x] = subgroupMatrixMultiplyAccumulate(l, r, acc[x]); }
  }
  for (var x = 0u; x < ${NACC}u; x++) {
    subgroupMatrixStore<row_major>(&out, ((wid.x * 4u + sg) * ${NACC}u + x) * 256u, acc[x], 16u);
  }
}`;
dev.pushErrorScope('validation');
const mod = dev.createShaderModule({ code });
for (const m of (await mod.getCompilationInfo()).messages) {
  if (m.type === 'error') console.log('ERROR', m.lineNum, m.message);
}
const pipe = dev.createComputePipeline({ layout: 'auto', compute: { module: mod, entryPoint: 'main' } });
const e = await dev.popErrorScope();
if (e) console.log('validation:', e.message);
const buf = dev.createBuffer({ size: WGS * 4 * NACC * 256 * 4, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
const rb = dev.createBuffer({ size: 256, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
const bg = dev.createBindGroup({ layout: pipe.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: buf } }] });
// reps dispatches in one pass, then a read back (the sync).
const run = async (reps) => {
  const t0 = performance.now();
  const enc = dev.createCommandEncoder();
  const pass = enc.beginComputePass();
  pass.setPipeline(pipe);
  pass.setBindGroup(0, bg);
  for (let i = 0; i < reps; i++) pass.dispatchWorkgroups(WGS);
  pass.end();
  enc.copyBufferToBuffer(buf, 0, rb, 0, 256);
  dev.queue.submit([enc.finish()]);
  await rb.mapAsync(GPUMapMode.READ);
  rb.unmap();
  return (performance.now() - t0) / 1e3;
};
await run(1);
const t1 = await run(1), t6 = await run(6);
const s = (t6 - t1) / 5, flop = WGS * 4 * ITERS * NACC * 8192;
console.log(`micro acc=${NACC} load=${LOAD ? 1 : 0} result=${RT}${process.env.NOROB ? ' norobust' : ''}: ` +
            `${(s * 1e3).toFixed(3)} ms a dispatch, ${(flop / s / 1e12).toFixed(1)} TFLOP/s`);
process.exit(0);
