// webtensor's JavaScript API: an ES module over the C library compiled to
// WebAssembly (webtensor_wasm.mjs + .wasm, built by `make wasm`).
//
// Every call into the module goes through one queue: the module waits for
// the GPU through ASYNCIFY, which suspends the whole wasm stack, so a
// second call must not enter while one is suspended. Ops therefore return
// promises; shapes and dtypes are known at once. See README.md
// ("JavaScript") and webtensor.d.ts.
import { OPS, ALIASES, ENUMS, NOT_BOUND } from './webtensor_ops.mjs';

const isNode = typeof process === 'object' && !!(process.versions && process.versions.node);
const DTYPES = ['f32', 'f16', 'i32', 'bool'];
const ARRAYS = { f32: Float32Array, f16: Uint16Array, i32: Int32Array, bool: Uint8Array };
const STATUS_NAMES = {
  0: 'WT_OK', [-1]: 'WT_ERR_INVALID_ARGUMENT', [-2]: 'WT_ERR_SHAPE', [-3]: 'WT_ERR_OUT_OF_MEMORY',
  [-4]: 'WT_ERR_NO_DEVICE', [-5]: 'WT_ERR_DEVICE_LOST', [-6]: 'WT_ERR_UNSUPPORTED',
  [-7]: 'WT_ERR_SHADER', [-8]: 'WT_ERR_BACKEND', [-9]: 'WT_ERR_IO', [-10]: 'WT_ERR_NOT_FOUND',
};
const DEVICE_LOST = -5;
const SCRATCH_BYTES = 1 << 16;
const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);

export class WebtensorError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'WebtensorError';
    this.code = code;
    this.status = STATUS_NAMES[code] || `WT_STATUS_${code}`;
  }
}
const invalid = (msg) => new WebtensorError(-1, msg);

export class DeviceLostEvent extends Event {
  constructor(message) {
    super('devicelost');
    this.message = message;
  }
}

// ------------------------------------------------------------- the module

// 64-bit integers cross into the module as two 32-bit words (low, high):
// the module is built without WASM_BIGINT, because ASYNCIFY's rewind calls
// the suspended export again without arguments, which a BigInt parameter
// refuses.
const i64Words = (v) => [Number(BigInt.asIntN(32, v)), Number(BigInt.asIntN(32, v >> 32n))];
function setI64(M, addr, v) {
  const [lo, hi] = i64Words(v);
  M.HEAP32[addr >> 2] = lo;
  M.HEAP32[(addr >> 2) + 1] = hi;
}

// One module per page: every context lives in it and shares its queue.
class Runtime {
  constructor(M) {
    this.M = M;
    this.tail = Promise.resolve();
    this.scratch = M._malloc(SCRATCH_BYTES);
    this.top = 0;
    this.layout = {};
    for (let p = M._wtjs_layout(); ; p += 8) {
      const name = M.HEAPU32[p >> 2];
      if (!name) break;
      this.layout[M.UTF8ToString(name)] = M.HEAP32[(p + 4) >> 2];
    }
    this.version = M.UTF8ToString(M._wt_version());
    this.contexts = new Set(); // WeakRefs of the live contexts
    this.catalogue = [];
    for (let i = 0, n = M._wt_op_count(); i < n; i++) {
      this.catalogue.push({ name: M.UTF8ToString(M._wt_op_name(i)), family: M.UTF8ToString(M._wt_op_family(i)) });
    }
  }

  // Runs fn alone: after every call queued before it, before every call
  // queued after it, whether they succeed or fail.
  exclusive(fn) {
    const run = async () => {
      this.top = 0;
      return fn();
    };
    const p = this.tail.then(run, run);
    this.tail = p.then(() => {}, () => {});
    return p;
  }

  // A C function that may wait for the GPU (suspending through ASYNCIFY).
  async call(name, args) {
    return this.M.ccall(name, 'number', [], args, { async: true });
  }

  // Scratch memory for the arguments of the current call.
  alloc(bytes) {
    const at = (this.top + 7) & ~7;
    if (at + bytes > SCRATCH_BYTES) throw invalid(`arguments too large (${bytes} bytes)`);
    this.top = at + bytes;
    this.M.HEAPU8.fill(0, this.scratch + at, this.scratch + at + bytes);
    return this.scratch + at;
  }
  i32s(values) {
    const p = this.alloc(4 * Math.max(values.length, 1));
    this.M.HEAP32.set(values, p >> 2);
    return p;
  }
  i64s(values) {
    const p = this.alloc(8 * Math.max(values.length, 1));
    values.forEach((v, i) => setI64(this.M, p + 8 * i, v));
    return p;
  }
  u32(p) { return this.M.HEAPU32[p >> 2]; }
  u64(p) { return this.M.HEAPU32[(p >> 2) + 1] * 4294967296 + this.M.HEAPU32[p >> 2]; }
  str(p) { return this.M.UTF8ToString(p); }

  // The browser binding queues a device's loss in Module.wtgpu.events for
  // the library to take at its next wait; a sync of every WebGPU context
  // then lets an idle page hear 'devicelost' without making another call.
  watchDeviceLoss() {
    const W = this.M.wtgpu; // made by the first WebGPU context
    if (!W || !Array.isArray(W.events) || W.events.wtWatched) return;
    W.events.wtWatched = true;
    const push = W.events.push.bind(W.events);
    W.events.push = (...evs) => {
      const n = push(...evs);
      if (evs.some((e) => e && e.kind === 1)) {
        setTimeout(() => {
          for (const ref of this.contexts) {
            const ctx = ref.deref();
            if (ctx && ctx.backend === 'webgpu' && !ctx.lost && !ctx.destroyed) ctx.sync().catch(() => {});
          }
        }, 0);
      }
      return n;
    };
  }

  error(code, fallback) {
    const msg = this.str(this.M._wt_last_error()) || fallback;
    return new WebtensorError(code, msg);
  }
}

let runtimePromise = null;
function loadRuntime(options) {
  if (!runtimePromise) {
    runtimePromise = (async () => {
      const { default: create } = await import('./webtensor_wasm.mjs');
      const args = {};
      if (isNode) {
        // The module is built for the web: in Node its .wasm is read here.
        const { readFile } = await import('node:fs/promises');
        args.wasmBinary = await readFile(new URL('./webtensor_wasm.wasm', import.meta.url));
      }
      if (options.locateFile) args.locateFile = options.locateFile;
      return new Runtime(await create(args));
    })();
    runtimePromise.catch(() => { runtimePromise = null; });
  }
  return runtimePromise;
}

// dawnFlags: the strings Dawn's Node addon takes at create(), e.g.
// 'enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia' (shader-f16
// and subgroup matrices on NVIDIA). With flags, navigator.gpu is made anew
// from them; without, an existing navigator.gpu is kept.
function installNodeWebgpu(webgpu, dawnFlags) {
  if (globalThis.navigator && globalThis.navigator.gpu && !dawnFlags) return;
  Object.assign(globalThis, webgpu.globals);
  Object.defineProperty(globalThis, 'navigator', {
    value: { gpu: webgpu.create(dawnFlags || []) }, configurable: true, writable: true,
  });
}

// --------------------------------------------------------------- tensors

const describe = (shape, dtype) => `${dtype}[${shape.join(', ')}]`;

// Tensors dropped without dispose() are released here, with a warning:
// the garbage collector runs late (or never), and GPU memory is scarce.
const leaks = new FinalizationRegistry(({ rt, ptr, what }) => {
  console.warn(`webtensor: a tensor ${what} was garbage-collected without dispose(); ` +
               'call dispose() when a tensor is no longer needed');
  rt.exclusive(() => rt.call('wt_tensor_release', [ptr]));
});

export class Tensor {
  #ptr;
  constructor(context, ptr) {
    const M = context._rt.M;
    this.#ptr = ptr;
    this.context = context;
    this.ndim = M._wt_tensor_ndim(ptr);
    const sp = M._wt_tensor_shape(ptr);
    this.shape = Array.from({ length: this.ndim }, (_, i) => M.HEAPU32[(sp >> 2) + 2 * i]);
    this.dtype = DTYPES[M._wt_tensor_dtype(ptr)];
    this.size = this.shape.reduce((a, b) => a * b, 1);
    Object.freeze(this.shape);
    leaks.register(this, { rt: context._rt, ptr, what: describe(this.shape, this.dtype) }, this);
  }

  get disposed() { return this.#ptr === 0; }

  // The handle for a call of op on context (checked: alive, same context).
  _handle(op, context, what) {
    if (this.#ptr === 0) throw invalid(`${op}: ${what} was disposed`);
    if (context && context !== this.context) {
      throw invalid(`${op}: ${what} belongs to another context`);
    }
    return this.#ptr;
  }

  dispose() {
    const ptr = this.#ptr;
    if (ptr === 0) return;
    this.#ptr = 0;
    leaks.unregister(this);
    const rt = this.context._rt;
    rt.exclusive(() => rt.call('wt_tensor_release', [ptr]));
  }

  // --- autograd (the library's tape; webtensor.h, "autograd")
  /** Whether the tensor requires grad (a marked leaf or a recorded result). */
  get requiresGrad() {
    return this.context._rt.M._wt_tensor_requires_grad(this._handle('requiresGrad', null, 'the tensor')) !== 0;
  }
  /** Marks a leaf (f32 or f16) as requiring grad, or not. */
  set requiresGrad(value) {
    const ptr = this._handle('requiresGrad', null, 'the tensor');
    const st = this.context._rt.M._wt_tensor_set_requires_grad(ptr, value ? 1 : 0);
    if (st !== 0) throw this.context._failed(st, 'requiresGrad');
  }
  /** The leaf's accumulated gradient: a new Tensor (dispose it), or null. */
  get grad() {
    const ptr = this._handle('grad', null, 'the tensor');
    const rt = this.context._rt;
    const out = rt.M._malloc(4);
    try {
      rt.M.HEAPU32[out >> 2] = 0;
      const st = rt.M._wt_tensor_grad(ptr, out);
      if (st !== 0) throw this.context._failed(st, 'grad');
      const g = rt.M.HEAPU32[out >> 2];
      return g ? new Tensor(this.context, g) : null;
    } finally {
      rt.M._free(out);
    }
  }
  /** Clears the accumulated gradient (PyTorch's zero_grad(set_to_none)). */
  zeroGrad() {
    const st = this.context._rt.M._wt_tensor_zero_grad(this._handle('zeroGrad', null, 'the tensor'));
    if (st !== 0) throw this.context._failed(st, 'zeroGrad');
  }
  /** Backward from this one-element loss: the leaves' gradients accumulate. */
  backward() {
    const ptr = this._handle('backward', null, 'the tensor');
    const ctx = this.context;
    return ctx._rt.exclusive(async () => {
      const st = await ctx._rt.call('wt_backward', [ptr]);
      if (st !== 0) throw ctx._failed(st, 'backward');
    });
  }
  /** A view of the same elements that does not require grad. */
  detach() {
    const ptr = this._handle('detach', null, 'the tensor');
    const rt = this.context._rt;
    const out = rt.M._malloc(4);
    try {
      const st = rt.M._wt_detach(ptr, out);
      if (st !== 0) throw this.context._failed(st, 'detach');
      return new Tensor(this.context, rt.M.HEAPU32[out >> 2]);
    } finally {
      rt.M._free(out);
    }
  }

  async read() {
    const ptr = this._handle('read', null, 'the tensor');
    const ctx = this.context;
    const Ctor = ARRAYS[this.dtype];
    const bytes = this.size * Ctor.BYTES_PER_ELEMENT;
    return ctx._rt.exclusive(async () => {
      const M = ctx._rt.M;
      const buf = M._malloc(Math.max(bytes, 1));
      if (!buf) throw new WebtensorError(-3, `read: cannot allocate ${bytes} bytes`);
      try {
        const st = await ctx._rt.call('wt_tensor_read', [ptr, buf, bytes]);
        if (st !== 0) throw ctx._failed(st, 'read');
        // Memory may have grown during the call: view it afresh.
        return new Ctor(M.HEAPU8.slice(buf, buf + bytes).buffer);
      } finally {
        M._free(buf);
      }
    });
  }

  async array() {
    const flat = await this.read();
    const conv = this.dtype === 'bool' ? (v) => v !== 0
      : this.dtype === 'f16' ? (v) => halfToNumber(v) : (v) => v;
    const build = (dim, off) => {
      if (dim === this.ndim) return conv(flat[off]);
      const stride = this.shape.slice(dim + 1).reduce((a, b) => a * b, 1);
      return Array.from({ length: this.shape[dim] }, (_, i) => build(dim + 1, off + i * stride));
    };
    return build(0, 0);
  }

  // A copy on another context (CPU <-> GPU, or another device).
  async to(context) {
    if (!(context instanceof Context)) throw invalid('to: the target must be a Context');
    const ptr = this._handle('to', null, 'the tensor');
    const dst = context._ctx('to');
    const rt = this.context._rt;
    return rt.exclusive(async () => {
      const out = rt.alloc(4);
      const st = await rt.call('wt_tensor_to', [ptr, dst, out]);
      if (st !== 0) throw context._failed(st, 'to');
      return new Tensor(context, rt.u32(out));
    });
  }

  toString() {
    return `Tensor(${describe(this.shape, this.dtype)}${this.disposed ? ', disposed' : ''})`;
  }
}

// --------------------------------------------------------------- context

const lostContexts = new FinalizationRegistry(({ rt, ptr }) => {
  console.warn('webtensor: a context was garbage-collected without destroy()');
  rt.exclusive(() => rt.call('wt_context_destroy', [ptr]));
});

export class Context extends EventTarget {
  #ptr;
  constructor(rt, ptr) {
    super();
    this._rt = rt;
    this.#ptr = ptr;
    lostContexts.register(this, { rt, ptr }, this);
    this.lost = false;
    this.backend = 'cpu';
    this.adapter = null;
    this._ref = new WeakRef(this);
    rt.contexts.add(this._ref);
  }

  get destroyed() { return this.#ptr === 0; }

  _ctx(op) {
    if (this.#ptr === 0) throw invalid(`${op}: the context was destroyed`);
    return this.#ptr;
  }

  // The error of a failed call; a device loss is also announced.
  _failed(st, op) {
    const err = this._rt.error(st, `${op} failed (${STATUS_NAMES[st] || st})`);
    if (st === DEVICE_LOST && !this.lost) {
      this.lost = true;
      this.dispatchEvent(new DeviceLostEvent(err.message));
    }
    return err;
  }

  async _readInfo() {
    const rt = this._rt;
    const L = rt.layout;
    const p = rt.alloc(L.wt_context_info);
    const st = await rt.call('wt_context_get_info', [this.#ptr, p]);
    if (st !== 0) throw this._failed(st, 'info');
    const a = p + L['wt_context_info.adapter'];
    const hasAdapter = rt.M.HEAPU8[p + L['wt_context_info.has_adapter']] !== 0;
    const flag = (f) => rt.M.HEAPU8[p + L[`wt_context_info.${f}`]] !== 0;
    return {
      backend: rt.u32(p + L['wt_context_info.backend']) === ENUMS.backend.webgpu ? 'webgpu' : 'cpu',
      reason: rt.str(p + L['wt_context_info.reason']),
      adapter: hasAdapter ? {
        name: rt.str(a + L['wt_adapter_info.name']),
        vendor: rt.str(a + L['wt_adapter_info.vendor']),
        architecture: rt.str(a + L['wt_adapter_info.architecture']),
        driver: rt.str(a + L['wt_adapter_info.driver']),
        type: ['unknown', 'discrete', 'integrated', 'cpu'][rt.u32(a + L['wt_adapter_info.type'])] || 'unknown',
      } : null,
      shaderF16: flag('shader_f16'),
      subgroups: flag('subgroups'),
      timestampQuery: flag('timestamp_query'),
      subgroupMatrix: flag('subgroup_matrix'),
      toggles: rt.str(p + L['wt_context_info.toggles']),
      features: rt.str(p + L['wt_context_info.features']),
      maxBufferSize: rt.u64(p + L['wt_context_info.max_buffer_size']),
      maxBindingSize: rt.u64(p + L['wt_context_info.max_binding_size']),
      numThreads: rt.M.HEAP32[(p + L['wt_context_info.num_threads']) >> 2],
    };
  }

  info() {
    this._ctx('info');
    return this._rt.exclusive(() => this._readInfo());
  }

  // A void C call on the context that may wait.
  _simple(op, fn) {
    const ptr = this._ctx(op);
    return this._rt.exclusive(async () => {
      const st = await this._rt.call(fn, [ptr]);
      if (st !== 0) throw this._failed(st, op);
    });
  }
  sync() { return this._simple('sync', 'wt_context_sync'); }
  /** Runs fn (sync or async) with recording off on this context (PyTorch's
   * torch.no_grad()); returns what fn returns. */
  async noGrad(fn) {
    const ptr = this._ctx('noGrad');
    const M = this._rt.M;
    let st = M._wt_no_grad_begin(ptr);
    if (st !== 0) throw this._failed(st, 'noGrad');
    try {
      return await fn();
    } finally {
      st = M._wt_no_grad_end(ptr);
      if (st !== 0) throw this._failed(st, 'noGrad');
    }
  }
  /** Whether ops on this context are recorded for autograd now. */
  get gradEnabled() { return this._rt.M._wt_grad_enabled(this._ctx('gradEnabled')) !== 0; }
  trim() { return this._simple('trim', 'wt_context_trim'); }
  loseDevice() { return this._simple('loseDevice', 'wt_context_lose_device'); }
  async recover() {
    await this._simple('recover', 'wt_context_recover');
    this.lost = false;
  }

  memoryStats() {
    const ptr = this._ctx('memoryStats');
    const rt = this._rt;
    return rt.exclusive(async () => {
      const L = rt.layout;
      const p = rt.alloc(L.wt_memory_stats);
      const st = await rt.call('wt_context_memory_stats', [ptr, p]);
      if (st !== 0) throw this._failed(st, 'memoryStats');
      const f = (n) => rt.u64(p + L[`wt_memory_stats.${n}`]);
      return {
        liveBytes: f('live_bytes'), peakBytes: f('peak_bytes'), pooledBytes: f('pooled_bytes'),
        liveTensors: f('live_tensors'), buffers: f('buffers'),
        bytesToDevice: f('bytes_to_device'), bytesFromDevice: f('bytes_from_device'),
      };
    });
  }

  destroy() {
    const ptr = this.#ptr;
    if (ptr === 0) return;
    this.#ptr = 0;
    lostContexts.unregister(this);
    this._rt.contexts.delete(this._ref);
    this._rt.exclusive(() => this._rt.call('wt_context_destroy', [ptr]));
  }

  async tensor(data, shape, dtype) {
    const ctx = this._ctx('tensor');
    const { values, shape: s, dtype: dt } = hostData(data, shape, dtype);
    const rt = this._rt;
    return rt.exclusive(async () => {
      const M = rt.M;
      const bytes = values.byteLength;
      const buf = M._malloc(Math.max(bytes, 1));
      if (!buf) throw new WebtensorError(-3, `tensor: cannot allocate ${bytes} bytes`);
      try {
        M.HEAPU8.set(new Uint8Array(values.buffer, values.byteOffset, bytes), buf);
        const out = rt.alloc(4);
        const st = await rt.call('wt_tensor_from_data',
          [ctx, ENUMS.dtype[dt], s.length, rt.i64s(s.map(BigInt)), buf, out]);
        if (st !== 0) throw this._failed(st, 'tensor');
        return new Tensor(this, rt.u32(out));
      } finally {
        M._free(buf);
      }
    });
  }

  split(x, sizes, axis = 0) {
    return this._views('split', x, async (rt, ptr) => {
      const extent = x.shape[axis < 0 ? axis + x.ndim : axis];
      let list = sizes;
      if (typeof sizes === 'number') { // torch.split: pieces of that size
        if (!(sizes > 0) || !Number.isInteger(sizes)) throw invalid(`split: bad size ${sizes}`);
        list = [];
        for (let left = extent; left > 0; left -= sizes) list.push(Math.min(sizes, left));
      }
      if (!Array.isArray(list) || list.length === 0 || list.length > 4096) {
        throw invalid('split: sizes must be a number or a non-empty array');
      }
      const outs = rt.alloc(4 * list.length);
      const st = await rt.call('wt_split', [ptr, checkInt('split', 'axis', axis), list.length,
        rt.i64s(list.map((v) => toInt64('split', 'sizes', v))), outs]);
      return [st, outs, list.length];
    });
  }

  chunk(x, chunks, axis = 0) {
    return this._views('chunk', x, async (rt, ptr) => {
      const n = checkInt('chunk', 'chunks', chunks);
      if (n < 1 || n > 4096) throw invalid(`chunk: chunks must be in [1, 4096], got ${chunks}`);
      const outs = rt.alloc(4 * n);
      const nout = rt.alloc(4);
      const st = await rt.call('wt_chunk', [ptr, checkInt('chunk', 'axis', axis), n, nout, outs]);
      return [st, outs, st === 0 ? rt.M.HEAP32[nout >> 2] : 0];
    });
  }

  async _views(op, x, body) {
    this._ctx(op);
    if (!(x instanceof Tensor)) throw invalid(`${op}: x must be a Tensor`);
    const ptr = x._handle(op, this, 'x');
    const rt = this._rt;
    return rt.exclusive(async () => {
      const [st, outs, n] = await body(rt, ptr);
      if (st !== 0) throw this._failed(st, op);
      return Array.from({ length: n }, (_, i) => new Tensor(this, rt.u32(outs + 4 * i)));
    });
  }

  async roll(x, shifts, axis = null) {
    const ctx = this._ctx('roll');
    if (!(x instanceof Tensor)) throw invalid('roll: x must be a Tensor');
    const ptr = x._handle('roll', this, 'x');
    const sh = Array.isArray(shifts) ? shifts : [shifts];
    const axes = axis === null || axis === undefined ? [] : Array.isArray(axis) ? axis : [axis];
    if (axes.length && axes.length !== sh.length) throw invalid('roll: shifts and axes differ in length');
    if (!axes.length && sh.length !== 1) throw invalid('roll: one shift without axes');
    const rt = this._rt;
    return rt.exclusive(async () => {
      const out = rt.alloc(4);
      const st = await rt.call('wt_roll', [ptr, axes.length,
        rt.i64s(sh.map((v) => toInt64('roll', 'shifts', v))),
        rt.i32s(axes.map((v) => checkInt('roll', 'axis', v))), out]);
      void ctx;
      if (st !== 0) throw this._failed(st, 'roll');
      return new Tensor(this, rt.u32(out));
    });
  }
}

// ------------------------------------------------------ argument marshalling

function checkInt(op, name, v) {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < -2147483648 || v > 2147483647) {
    throw invalid(`${op}: ${name} must be an integer, got ${String(v)}`);
  }
  return v;
}

function toInt64(op, name, v) {
  if (v === Infinity) return INT64_MAX;
  if (v === -Infinity) return INT64_MIN;
  if (typeof v === 'bigint') return v;
  if (typeof v !== 'number' || !Number.isInteger(v)) {
    throw invalid(`${op}: ${name} must be an integer, got ${String(v)}`);
  }
  return BigInt(v);
}

function pair(op, name, v, def) {
  if (v === undefined || v === null) return [def, def];
  const a = typeof v === 'number' ? [v, v] : v;
  if (!Array.isArray(a) || a.length !== 2) throw invalid(`${op}: ${name} must be a number or [h, w]`);
  return a.map((x) => toInt64(op, name, x));
}

const OPTION_WRITERS = {
  conv(rt, op, o) {
    const L = rt.layout;
    const p = rt.alloc(L.wt_conv_options);
    rt.M._wt_conv_options_init(p);
    if (!o) return p;
    const put = (field, vals) => vals.forEach((v, i) => {
      setI64(rt.M, p + L[`wt_conv_options.${field}`] + 8 * i, v);
    });
    put('stride', pair(op, 'stride', o.stride, 1n));
    put('dilation', pair(op, 'dilation', o.dilation, 1n));
    put('output_padding', pair(op, 'outputPadding', o.outputPadding, 0n));
    if (o.groups !== undefined) put('groups', [toInt64(op, 'groups', o.groups)]);
    if (o.padding === 'same') {
      rt.M.HEAPU8[p + L['wt_conv_options.same']] = 1;
    } else if (o.padding !== undefined) {
      let pad = o.padding;
      if (typeof pad === 'number') pad = [pad, pad, pad, pad];
      else if (Array.isArray(pad) && pad.length === 2) pad = [pad[0], pad[0], pad[1], pad[1]];
      if (!Array.isArray(pad) || pad.length !== 4) {
        throw invalid(`${op}: padding must be a number, [h, w], [top, bottom, left, right] or 'same'`);
      }
      put('padding', pad.map((v) => toInt64(op, 'padding', v)));
    }
    return p;
  },
  pool(rt, op, o) {
    const L = rt.layout;
    if (!o || o.kernelSize === undefined) throw invalid(`${op}: options.kernelSize is required`);
    const p = rt.alloc(L.wt_pool2d_options);
    rt.M._wt_pool2d_options_init(p);
    const put = (field, vals) => vals.forEach((v, i) => {
      setI64(rt.M, p + L[`wt_pool2d_options.${field}`] + 8 * i, v);
    });
    put('kernel', pair(op, 'kernelSize', o.kernelSize, 0n));
    put('stride', pair(op, 'stride', o.stride, 0n));
    if (o.padding !== undefined) {
      // A number, [h, w] (both sides) or [top, bottom, left, right], as for convolutions.
      let pad = o.padding;
      if (typeof pad === 'number') pad = [pad, pad, pad, pad];
      else if (Array.isArray(pad) && pad.length === 2) pad = [pad[0], pad[0], pad[1], pad[1]];
      if (!Array.isArray(pad) || pad.length !== 4) {
        throw invalid(`${op}: padding must be a number, [h, w] or [top, bottom, left, right]`);
      }
      put('padding', pad.map((v) => toInt64(op, 'padding', v)));
    }
    put('dilation', pair(op, 'dilation', o.dilation, 1n));
    if (o.divisorOverride !== undefined) put('divisor_override', [toInt64(op, 'divisorOverride', o.divisorOverride)]);
    if (o.ceilMode !== undefined) rt.M.HEAPU8[p + L['wt_pool2d_options.ceil_mode']] = o.ceilMode ? 1 : 0;
    if (o.countIncludePad !== undefined) {
      rt.M.HEAPU8[p + L['wt_pool2d_options.count_include_pad']] = o.countIncludePad ? 1 : 0;
    }
    return p;
  },
  bnorm(rt, op, o) {
    const L = rt.layout;
    const p = rt.alloc(L.wt_batch_norm_options);
    rt.M._wt_batch_norm_options_init(p);
    if (!o) return p;
    if (o.training !== undefined) rt.M.HEAPU8[p + L['wt_batch_norm_options.training']] = o.training ? 1 : 0;
    // double fields (8-byte aligned in the struct)
    if (o.momentum !== undefined) rt.M.HEAPF64[(p + L['wt_batch_norm_options.momentum']) >> 3] = o.momentum;
    if (o.eps !== undefined) rt.M.HEAPF64[(p + L['wt_batch_norm_options.eps']) >> 3] = o.eps;
    return p;
  },
  xent(rt, op, o) {
    const L = rt.layout;
    const p = rt.alloc(L.wt_cross_entropy_options);
    rt.M._wt_cross_entropy_options_init(p);
    if (!o) return p;
    if (o.reduction !== undefined) {
      rt.M.HEAP32[(p + L['wt_cross_entropy_options.reduction']) >> 2] =
        enumValue(op, 'reduction', 'reduction', o.reduction);
    }
    if (o.ignoreIndex !== undefined) {
      rt.M.HEAP32[(p + L['wt_cross_entropy_options.ignore_index']) >> 2] =
        checkInt(op, 'ignoreIndex', o.ignoreIndex);
    }
    return p;
  },
};

function enumValue(op, name, kind, v) {
  const table = ENUMS[kind];
  if (!Object.prototype.hasOwnProperty.call(table, v)) {
    throw invalid(`${op}: ${name} must be one of ${Object.keys(table).join(', ')}, got ${String(v)}`);
  }
  return table[v];
}

function tensorArg(op, ctx, name, v) {
  if (!(v instanceof Tensor)) {
    const got = v === null || v === undefined ? String(v) : v.constructor ? v.constructor.name : typeof v;
    const hint = v instanceof Promise ? ' (await the op that makes it)' : '';
    throw invalid(`${op}: ${name} must be a Tensor, got ${got}${hint}`);
  }
  return v._handle(op, ctx, name);
}

function defaultValue(def, vals) {
  if (def.startsWith('@')) return vals[def.slice(1)];
  if (def === 'null') return null;
  if (def === 'true' || def === 'false') return def === 'true';
  if (/^-?(Infinity|[0-9.e+-]+)$/.test(def)) return Number(def);
  return def; // an enum's name
}

// Checks the JavaScript arguments of an op now (so that a disposed tensor
// or a wrong type fails at the call) and returns a function that writes
// them as C arguments when the call's turn comes.
function bindArgs(spec, ctx, args) {
  const op = spec.name;
  if (args.length > spec.params.length) {
    throw invalid(`${op}: takes at most ${spec.params.length} arguments, got ${args.length}`);
  }
  const vals = {};
  const prepared = {};
  spec.params.forEach((p, i) => {
    let v = args[i];
    if (v === undefined) {
      if (p.def === undefined) throw invalid(`${op}: argument ${p.name} is missing`);
      v = defaultValue(p.def, vals);
    }
    vals[p.name] = v;
    switch (p.kind) {
      case 'T': prepared[p.name] = tensorArg(op, ctx, p.name, v); break;
      case 'T?': prepared[p.name] = v === null ? 0 : tensorArg(op, ctx, p.name, v); break;
      case 'TN': prepared[p.name] = typeof v === 'number' ? v : tensorArg(op, ctx, p.name, v); break;
      case 'tensors':
        if (!Array.isArray(v) || v.length === 0) throw invalid(`${op}: ${p.name} must be a non-empty array of tensors`);
        prepared[p.name] = v.map((t, j) => tensorArg(op, ctx, `${p.name}[${j}]`, t));
        break;
      case 'i': prepared[p.name] = checkInt(op, p.name, v); break;
      case 'I': prepared[p.name] = toInt64(op, p.name, v); break;
      case 'U64':
        if (typeof v !== 'bigint' && !(Number.isInteger(v) && v >= 0)) {
          throw invalid(`${op}: ${p.name} must be a non-negative integer`);
        }
        prepared[p.name] = BigInt.asUintN(64, BigInt(v));
        break;
      case 'd': case 'f':
        if (typeof v !== 'number') throw invalid(`${op}: ${p.name} must be a number, got ${typeof v}`);
        prepared[p.name] = v;
        break;
      case 'b': prepared[p.name] = v ? 1 : 0; break;
      case 'dtype': prepared[p.name] = enumValue(op, p.name, 'dtype', v); break;
      case 'padmode': case 'ropelayout': case 'act': case 'interpmode':
        prepared[p.name] = enumValue(op, p.name, p.kind, v);
        break;
      case 'axes': {
        const list = v === null ? [] : Array.isArray(v) ? v : [v];
        if (list.length > 8) throw invalid(`${op}: at most 8 axes`);
        prepared[p.name] = list.map((a) => checkInt(op, p.name, a));
        break;
      }
      case 'perm': {
        if (!Array.isArray(v)) throw invalid(`${op}: ${p.name} must be an array`);
        const first = args[0];
        if (v.length !== first.ndim) {
          throw invalid(`${op}: ${p.name} has ${v.length} entries, the tensor ${first.ndim} axes`);
        }
        prepared[p.name] = v.map((a) => checkInt(op, p.name, a));
        break;
      }
      case 'shape': case 'i64s':
        if (!Array.isArray(v) || v.length > 16) throw invalid(`${op}: ${p.name} must be an array of integers`);
        prepared[p.name] = v.map((a) => toInt64(op, p.name, a));
        break;
      case 'conv': case 'pool': case 'bnorm': case 'xent':
        if (v !== null && typeof v !== 'object') throw invalid(`${op}: ${p.name} must be an options object`);
        prepared[p.name] = v;
        break;
      default:
        throw invalid(`${op}: unknown parameter kind ${p.kind}`);
    }
  });
  const kinds = Object.fromEntries(spec.params.map((p) => [p.name, p.kind]));
  // The C function: a number b of a binary op takes its _scalar form.
  const scalar = spec.params.some((p) => p.kind === 'TN' && typeof vals[p.name] === 'number');
  const cName = scalar ? `${spec.c}_scalar` : spec.c;
  return {
    cName,
    write(rt, ctxPtr) {
      const cargs = [];
      const outs = [];
      for (const tok of spec.call) {
        if (tok === 'ctx') { cargs.push(ctxPtr); continue; }
        if (tok === '@out') { const o = rt.alloc(4); outs.push(o); cargs.push(o); continue; }
        if (tok === 'NULL') { cargs.push(0); continue; }
        const v = prepared[tok];
        switch (kinds[tok]) {
          case 'axes': cargs.push(v.length, v.length ? rt.i32s(v) : 0); break;
          case 'perm': cargs.push(rt.i32s(v)); break;
          case 'shape': case 'i64s': cargs.push(v.length, rt.i64s(v)); break;
          case 'I': case 'U64': cargs.push(...i64Words(v)); break;
          case 'tensors': cargs.push(v.length, rt.i32s(v)); break;
          case 'conv': case 'pool': case 'bnorm': case 'xent':
            cargs.push(OPTION_WRITERS[kinds[tok]](rt, op, v));
            break;
          default: cargs.push(v);
        }
      }
      return { cargs, outs };
    },
  };
}

function makeOp(spec) {
  return async function (...args) {
    const ctx = this;
    if (!(ctx instanceof Context)) {
      throw invalid(`${spec.name}: call it on a context (ctx.${spec.name}(...)) or a tensor`);
    }
    const ctxPtr = ctx._ctx(spec.name);
    const bound = bindArgs(spec, ctx, args);
    const rt = ctx._rt;
    return rt.exclusive(async () => {
      const { cargs, outs } = bound.write(rt, ctxPtr);
      const st = await rt.call(bound.cName, cargs);
      if (st !== 0) throw ctx._failed(st, spec.name);
      const tensors = outs.map((o) => new Tensor(ctx, rt.u32(o)));
      return spec.outs === 0 ? undefined : spec.outs === 1 ? tensors[0] : tensors;
    });
  };
}

for (const spec of OPS) {
  const fn = makeOp(spec);
  Object.defineProperty(fn, 'name', { value: spec.name });
  Context.prototype[spec.name] = fn;
  if (spec.method) {
    Tensor.prototype[spec.name] = function (...rest) { return this.context[spec.name](this, ...rest); };
  }
}
for (const name of ['split', 'chunk', 'roll']) {
  Tensor.prototype[name] = function (...rest) { return this.context[name](this, ...rest); };
}
for (const [alias, target] of Object.entries(ALIASES)) {
  Context.prototype[alias] = Context.prototype[target];
  if (Tensor.prototype[target]) Tensor.prototype[alias] = Tensor.prototype[target];
}

// ------------------------------------------------------------- host data

const ARRAY_DTYPE = new Map([[Float32Array, 'f32'], [Uint16Array, 'f16'], [Int32Array, 'i32'], [Uint8Array, 'bool']]);

function hostData(data, shape, dtype) {
  if (dtype !== undefined && !DTYPES.includes(dtype)) {
    throw invalid(`tensor: dtype must be one of ${DTYPES.join(', ')}, got ${String(dtype)}`);
  }
  let values;
  let inferred;
  if (ArrayBuffer.isView(data) && !(data instanceof DataView)) {
    const kind = ARRAY_DTYPE.get(data.constructor);
    if (!kind) {
      throw invalid(`tensor: a ${data.constructor.name} is not a webtensor dtype: use Float32Array (f32), ` +
                    'Uint16Array (f16 bits), Int32Array (i32) or Uint8Array (bool)');
    }
    if (dtype !== undefined && dtype !== kind) {
      throw invalid(`tensor: a ${data.constructor.name} holds ${kind} elements, not ${dtype} ` +
                    `(convert it to a ${ARRAYS[dtype].name} first)`);
    }
    dtype = kind;
    values = data;
    inferred = [data.length];
  } else if (typeof data === 'number' || typeof data === 'boolean' || Array.isArray(data)) {
    inferred = [];
    for (let d = data; Array.isArray(d); d = d[0]) inferred.push(d.length);
    const flat = Array.isArray(data) ? data.flat(Infinity) : [data];
    const count = inferred.reduce((a, b) => a * b, 1);
    if (flat.length !== count) throw new WebtensorError(-2, 'tensor: nested arrays are ragged');
    if (!flat.every((v) => typeof v === 'number' || typeof v === 'boolean')) {
      throw invalid('tensor: nested arrays must hold numbers or booleans');
    }
    dtype = dtype || (flat.length && flat.every((v) => typeof v === 'boolean') ? 'bool' : 'f32');
    values = dtype === 'f16' ? float32ToFloat16(flat.map(Number))
      : dtype === 'bool' ? Uint8Array.from(flat, (v) => (v ? 1 : 0))
        : ARRAYS[dtype].from(flat, Number);
  } else {
    throw invalid(`tensor: data must be a typed array, nested arrays or a number, got ${
      data === null ? 'null' : typeof data}`);
  }
  if (shape === undefined || shape === null) shape = inferred;
  if (!Array.isArray(shape) || shape.length > 8 ||
      !shape.every((v) => Number.isInteger(v) && v >= 0)) {
    throw invalid(`tensor: shape must be an array of at most 8 non-negative integers, got ${JSON.stringify(shape)}`);
  }
  const count = shape.reduce((a, b) => a * b, 1);
  if (count !== values.length) {
    throw new WebtensorError(-2, `tensor: shape [${shape.join(', ')}] holds ${count} elements, ` +
                                 `the data has ${values.length}`);
  }
  return { values, shape, dtype };
}

// IEEE binary16 <-> numbers (round to nearest even).
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
function halfToNumber(h) {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}
function numberToHalf(v) {
  f32[0] = v;
  const x = u32[0];
  const sign = (x >>> 16) & 0x8000;
  const e = (x >>> 23) & 0xff;
  let m = x & 0x7fffff;
  if (e === 255) return sign | 0x7c00 | (m ? 0x200 : 0);
  const he = e - 127 + 15;
  if (he >= 31) return sign | 0x7c00;
  if (he <= 0) {
    if (he < -10) return sign;
    m |= 0x800000;
    const shift = 14 - he;
    const half = 1 << (shift - 1);
    let r = m >>> shift;
    const rest = m & ((1 << shift) - 1);
    if (rest > half || (rest === half && (r & 1))) r++;
    return sign | r;
  }
  let r = (he << 10) | (m >>> 13);
  const rest = m & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && (r & 1))) r++;
  return sign | r;
}
export function float16ToFloat32(bits) { return Float32Array.from(bits, halfToNumber); }
export function float32ToFloat16(values) { return Uint16Array.from(values, numberToHalf); }

// ------------------------------------------------------------------ init

let loaded = null;

export async function init(options = {}) {
  const backend = options.backend === undefined ? 'auto' : options.backend;
  const code = enumValue('init', 'backend', 'backend', backend);
  if (options.dawnFlags !== undefined &&
      (!Array.isArray(options.dawnFlags) || options.dawnFlags.some((f) => typeof f !== 'string'))) {
    throw invalid('init: dawnFlags must be an array of strings');
  }
  if (options.dawnFlags && !options.webgpu) {
    throw invalid("init: dawnFlags are Dawn's Node addon's: pass the addon as options.webgpu too");
  }
  if (options.webgpu) installNodeWebgpu(options.webgpu, options.dawnFlags);
  const rt = await loadRuntime(options);
  loaded = rt;
  return rt.exclusive(async () => {
    const L = rt.layout;
    const o = rt.alloc(L.wt_context_options);
    rt.M._wt_context_options_init(o);
    rt.M.HEAP32[(o + L['wt_context_options.backend']) >> 2] = code;
    // subgroupMatrix: ask for the matrix units (Dawn's experimental
    // chromium-experimental-subgroup-matrix); info().subgroupMatrix and
    // info().features say whether the device gave them.
    if (options.subgroupMatrix) {
      rt.M.HEAPU32[(o + L['wt_context_options.experimental']) >> 2] |= 1; // WT_EXPERIMENTAL_SUBGROUP_MATRIX
    }
    if (options.memoryLimit) {
      setI64(rt.M, o + L['wt_context_options.memory_limit'], BigInt(options.memoryLimit));
    }
    const out = rt.alloc(4);
    const st = await rt.call('wt_context_create', [o, out]);
    if (st !== 0) throw rt.error(st, `init: no context (${STATUS_NAMES[st] || st})`);
    const ctx = new Context(rt, rt.u32(out));
    rt.watchDeviceLoss();
    rt.top = 0;
    const info = await ctx._readInfo();
    ctx.backend = info.backend;
    ctx.adapter = info.adapter;
    return ctx;
  });
}

export function version() {
  if (!loaded) throw invalid('version: call init() first');
  return loaded.version;
}

export function catalogue() {
  if (!loaded) throw invalid('catalogue: call init() first');
  return loaded.catalogue.map((e) => ({ ...e }));
}

export const notBound = NOT_BOUND;

export default {
  init, version, catalogue, notBound, float16ToFloat32, float32ToFloat16,
  WebtensorError, Tensor, Context, DeviceLostEvent,
};
