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
let loadedKnobs = null;

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
      // The library's WT_* knobs (docs/KNOBS.md): the module's environment,
      // which its C code reads; set before its constructors run.
      const knobs = options.knobs || {};
      args.preRun = [(M) => { for (const [k, v] of Object.entries(knobs)) M.ENV[k] = String(v); }];
      loadedKnobs = JSON.stringify(Object.entries(knobs).map(([k, v]) => [k, String(v)]).sort());
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
    const scopes = context._tidy;
    if (scopes.length) scopes[scopes.length - 1].push(this);
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
    this._tidy = []; // the open tidy() scopes: the tensors made in each
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

  /** Runs fn (sync or async) and disposes every Tensor made on this
   * context while it ran, except those it returns (a Tensor, or Tensors in
   * an array or a plain object) and those given to keep(); these go to the
   * enclosing tidy() when there is one. Scopes nest. Calls of other code on
   * the same context while fn awaits count as fn's. */
  async tidy(fn) {
    this._ctx('tidy');
    if (typeof fn !== 'function') throw invalid('tidy: fn must be a function');
    const made = [];
    this._tidy.push(made);
    let result;
    try {
      result = await fn();
    } finally {
      const i = this._tidy.lastIndexOf(made);
      if (i >= 0) this._tidy.splice(i, 1);
      const kept = new Set();
      const collect = (v) => {
        if (v instanceof Tensor) kept.add(v);
        else if (Array.isArray(v)) v.forEach(collect);
        else if (v && Object.getPrototypeOf(v) === Object.prototype) Object.values(v).forEach(collect);
      };
      collect(result);
      const outer = this._tidy[this._tidy.length - 1];
      for (const t of made) {
        if (t._kept || kept.has(t)) {
          if (outer && !t._kept) outer.push(t);
        } else {
          t.dispose();
        }
      }
    }
    return result;
  }
  /** Exempts t from every tidy() that is open (it outlives them). */
  keep(t) {
    if (!(t instanceof Tensor)) throw invalid('keep: t must be a Tensor');
    t._kept = true;
    return t;
  }

  /** An optimizer over params (leaf Tensors, f32, requiring grad; or groups
   * [{ params: [...], weightDecay }]): kind 'sgd' (options lr, momentum,
   * dampening, weightDecay, nesterov) or 'adamw' (lr, betas: [b1, b2], eps,
   * weightDecay). Its state lives in the library until dispose(). */
  createOptimizer(kind, params, options = {}) {
    const ctx = this._ctx('createOptimizer');
    if (kind !== 'sgd' && kind !== 'adamw') throw invalid(`createOptimizer: kind is 'sgd' or 'adamw', got ${String(kind)}`);
    const groups = optimizerGroups('createOptimizer', this, params, options);
    const rt = this._rt;
    return rt.exclusive(async () => {
      const L = rt.layout;
      const o = OPTION_WRITERS[kind](rt, 'createOptimizer', { ...options, weightDecay: groups[0].weightDecay });
      const out = rt.alloc(4);
      const [first, ...rest] = groups;
      let st = await rt.call(kind === 'sgd' ? 'wt_optimizer_create_sgd' : 'wt_optimizer_create_adamw',
        [first.ptrs.length, rt.i32s(first.ptrs), o, out]);
      if (st !== 0) throw this._failed(st, 'createOptimizer');
      const h = rt.u32(out);
      const defaultDecay = kind === 'adamw' ? 0.01 : 0; // the options' defaults (webtensor.h)
      for (const g of rest) {
        const wd = g.weightDecay !== undefined ? g.weightDecay : defaultDecay;
        st = await rt.call('wt_optimizer_add_params', [h, g.ptrs.length, rt.i32s(g.ptrs), wd]);
        if (st !== 0) {
          const err = this._failed(st, 'createOptimizer');
          await rt.call('wt_optimizer_release', [h]);
          throw err;
        }
      }
      void ctx;
      void L;
      return new Optimizer(this, h, groups.flatMap((g) => g.tensors));
    });
  }

  /** A dynamic loss scaler for f16 training (PyTorch's GradScaler):
   * options initScale (65536), growthFactor (2), backoffFactor (0.5),
   * growthInterval (2000). Overflow checks and skipped steps stay on the
   * device. */
  createGradScaler(options = {}) {
    const ctx = this._ctx('createGradScaler');
    const rt = this._rt;
    return rt.exclusive(async () => {
      const L = rt.layout;
      const o = rt.alloc(L.wt_grad_scaler_options);
      rt.M._wt_grad_scaler_options_init(o);
      const f64 = (field, name) => {
        if (options[name] === undefined) return;
        if (typeof options[name] !== 'number') throw invalid(`createGradScaler: ${name} must be a number`);
        rt.M.HEAPF64[(o + L[`wt_grad_scaler_options.${field}`]) >> 3] = options[name];
      };
      f64('init_scale', 'initScale');
      f64('growth_factor', 'growthFactor');
      f64('backoff_factor', 'backoffFactor');
      if (options.growthInterval !== undefined) {
        setI64(rt.M, o + L['wt_grad_scaler_options.growth_interval'],
          toInt64('createGradScaler', 'growthInterval', options.growthInterval));
      }
      const out = rt.alloc(4);
      const st = await rt.call('wt_grad_scaler_create', [ctx, o, out]);
      if (st !== 0) throw this._failed(st, 'createGradScaler');
      return new GradScaler(this, rt.u32(out));
    });
  }

  /** Scales the gradients of params in place so that their global 2-norm is
   * at most maxNorm (on the device); resolves to the norm before clipping
   * (a 0-d Tensor: reading it waits for the device). */
  clipGradNorm(params, maxNorm) {
    this._ctx('clipGradNorm');
    const ptrs = optimizerGroups('clipGradNorm', this, params, {}).flatMap((g) => g.ptrs);
    if (typeof maxNorm !== 'number') throw invalid('clipGradNorm: maxNorm must be a number');
    const rt = this._rt;
    return rt.exclusive(async () => {
      const out = rt.alloc(4);
      const st = await rt.call('wt_clip_grad_norm', [ptrs.length, rt.i32s(ptrs), maxNorm, out]);
      if (st !== 0) throw this._failed(st, 'clipGradNorm');
      return new Tensor(this, rt.u32(out));
    });
  }
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

// ------------------------------------------------------------ optimizers

// [{ tensors, ptrs, weightDecay }] from a list of Tensors or of groups.
function optimizerGroups(op, ctx, params, options) {
  if (!Array.isArray(params) || params.length === 0) throw invalid(`${op}: params must be a non-empty array`);
  const wd = options.weightDecay;
  const one = (list, weightDecay) => {
    if (!Array.isArray(list) || list.length === 0) throw invalid(`${op}: a group's params must be a non-empty array`);
    if (weightDecay !== undefined && typeof weightDecay !== 'number') throw invalid(`${op}: weightDecay must be a number`);
    return { tensors: list, ptrs: list.map((t, i) => tensorArg(op, ctx, `params[${i}]`, t)), weightDecay };
  };
  if (params.every((p) => p instanceof Tensor)) return [one(params, wd)];
  if (params.some((p) => p instanceof Tensor)) throw invalid(`${op}: either Tensors or groups, not both`);
  return params.map((g) => one(g && g.params, g && g.weightDecay !== undefined ? g.weightDecay : wd));
}

const SCHEDULE_KINDS = { constant: 0, step: 1, cosine: 2 };

export class Optimizer {
  #h;
  constructor(context, h, params) {
    this.context = context;
    this.#h = h;
    this.params = params;
  }
  _ptr(op) {
    if (this.#h === 0) throw invalid(`${op}: the optimizer was disposed`);
    return this.#h;
  }
  _call(op, fn, args = []) {
    if (this.#h === 0) throw invalid(`${op}: the optimizer was disposed`);
    const ctx = this.context;
    ctx._ctx(op);
    return ctx._rt.exclusive(async () => {
      const st = await ctx._rt.call(fn, [this.#h, ...args]);
      if (st !== 0) throw ctx._failed(st, op);
    });
  }
  /** Updates every parameter that has a gradient, in place. */
  step() { return this._call('step', 'wt_optimizer_step'); }
  /** Drops every parameter's gradient. */
  zeroGrad() { return this._call('zeroGrad', 'wt_optimizer_zero_grad'); }
  /** The learning rate of the next step (the schedule's when one is set). */
  get lr() { return this.#h ? this.context._rt.M._wt_optimizer_lr(this.#h) : NaN; }
  /** Steps taken, as the host counts them: a step captured in a graph
   * counts once, its replays not (readSteps counts them). */
  get steps() { return this.#h ? Number(this.context._rt.M._wt_optimizer_steps(this.#h)) : 0; }
  /** Resolves to the steps taken on the device, replays of a captured step
   * included (waits for the device). */
  readSteps() {
    if (this.#h === 0) throw invalid('readSteps: the optimizer was disposed');
    const ctx = this.context;
    ctx._ctx('readSteps');
    const rt = ctx._rt;
    const h = this.#h;
    return rt.exclusive(async () => {
      const out = rt.alloc(8);
      const st = await rt.call('wt_optimizer_read_steps', [h, out]);
      if (st !== 0) throw ctx._failed(st, 'readSteps');
      // An int64_t the library keeps within 32 bits (its count on the device).
      return rt.M.HEAP32[out >> 2];
    });
  }
  setLr(lr) {
    if (typeof lr !== 'number') throw invalid('setLr: lr must be a number');
    return this._call('setLr', 'wt_optimizer_set_lr', [lr]);
  }
  /** Steps follow a schedule: { kind: 'constant' | 'step' | 'cosine', lr,
   * warmupSteps, totalSteps, minLr, stepSize, gamma }; null: back to setLr's. */
  setSchedule(s) {
    if (this.#h === 0) throw invalid('setSchedule: the optimizer was disposed');
    const rt = this.context._rt;
    if (s !== null && (typeof s !== 'object' || !Object.prototype.hasOwnProperty.call(SCHEDULE_KINDS, s.kind))) {
      throw invalid(`setSchedule: kind must be one of ${Object.keys(SCHEDULE_KINDS).join(', ')}`);
    }
    const h = this.#h;
    return rt.exclusive(async () => {
      let p = 0;
      if (s !== null) {
        const L = rt.layout;
        p = rt.alloc(L.wt_lr_schedule_options);
        rt.M._wt_lr_schedule_options_init(p);
        const f64 = (field, v) => { if (v !== undefined) rt.M.HEAPF64[(p + L[`wt_lr_schedule_options.${field}`]) >> 3] = v; };
        const i64 = (field, v) => { if (v !== undefined) setI64(rt.M, p + L[`wt_lr_schedule_options.${field}`], toInt64('setSchedule', field, v)); };
        rt.M.HEAP32[(p + L['wt_lr_schedule_options.kind']) >> 2] = SCHEDULE_KINDS[s.kind];
        f64('lr', s.lr);
        f64('min_lr', s.minLr);
        f64('gamma', s.gamma);
        i64('warmup_steps', s.warmupSteps);
        i64('total_steps', s.totalSteps);
        i64('step_size', s.stepSize);
      }
      const st = await rt.call('wt_optimizer_set_schedule', [h, p]);
      if (st !== 0) throw this.context._failed(st, 'setSchedule');
    });
  }
  /** Clips the parameters' gradients to a global norm of maxNorm (on the
   * device); resolves to the norm before clipping (a 0-d Tensor). */
  clipGradNorm(maxNorm) { return this.context.clipGradNorm(this.params, maxNorm); }
  get disposed() { return this.#h === 0; }
  dispose() {
    const h = this.#h;
    if (h === 0) return;
    this.#h = 0;
    const rt = this.context._rt;
    rt.exclusive(() => rt.call('wt_optimizer_release', [h]));
  }
}

export class GradScaler {
  #h;
  constructor(context, h) {
    this.context = context;
    this.#h = h;
  }
  _handle(op) {
    if (this.#h === 0) throw invalid(`${op}: the scaler was disposed`);
    this.context._ctx(op);
    return this.#h;
  }
  // A call that makes a tensor.
  _make(op, fn, args) {
    const h = this._handle(op);
    const ctx = this.context;
    const rt = ctx._rt;
    return rt.exclusive(async () => {
      const out = rt.alloc(4);
      const st = await rt.call(fn, [h, ...args, out]);
      if (st !== 0) throw ctx._failed(st, op);
      return new Tensor(ctx, rt.u32(out));
    });
  }
  _with(op, fn, opt) {
    const h = this._handle(op);
    if (!(opt instanceof Optimizer)) throw invalid(`${op}: an Optimizer is needed`);
    const ctx = this.context;
    return ctx._rt.exclusive(async () => {
      const st = await ctx._rt.call(fn, [h, opt._ptr(op)]);
      if (st !== 0) throw ctx._failed(st, op);
    });
  }
  /** loss * scale (recorded: backward through it gives scaled gradients). */
  scale(loss) { return this._make('scale', 'wt_grad_scaler_scale', [tensorArg('scale', this.context, 'loss', loss)]); }
  /** Divides the optimizer's gradients by the scale (once per step; before clipping). */
  unscale(opt) { return this._with('unscale', 'wt_grad_scaler_unscale', opt); }
  /** Unscales (unless done), steps unless a gradient is not finite, updates the scale. */
  step(opt) { return this._with('step', 'wt_grad_scaler_step', opt); }
  /** The current scale: a 0-d Tensor (reading it waits for the device). */
  currentScale() { return this._make('currentScale', 'wt_grad_scaler_current_scale', []); }
  /** 1 when the last step found a gradient that is not finite (and skipped), else 0: a 0-d Tensor. */
  foundInf() { return this._make('foundInf', 'wt_grad_scaler_found_inf', []); }
  get disposed() { return this.#h === 0; }
  dispose() {
    const h = this.#h;
    if (h === 0) return;
    this.#h = 0;
    const rt = this.context._rt;
    rt.exclusive(() => rt.call('wt_grad_scaler_release', [h]));
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
  sgd(rt, op, o) {
    const L = rt.layout;
    const p = rt.alloc(L.wt_sgd_options);
    rt.M._wt_sgd_options_init(p);
    if (!o) return p;
    const f64 = (field, name) => {
      if (o[name] === undefined) return;
      if (typeof o[name] !== 'number') throw invalid(`${op}: ${name} must be a number`);
      rt.M.HEAPF64[(p + L[`wt_sgd_options.${field}`]) >> 3] = o[name];
    };
    f64('lr', 'lr');
    f64('momentum', 'momentum');
    f64('dampening', 'dampening');
    f64('weight_decay', 'weightDecay');
    if (o.nesterov !== undefined) rt.M.HEAPU8[p + L['wt_sgd_options.nesterov']] = o.nesterov ? 1 : 0;
    return p;
  },
  adamw(rt, op, o) {
    const L = rt.layout;
    const p = rt.alloc(L.wt_adamw_options);
    rt.M._wt_adamw_options_init(p);
    if (!o) return p;
    const f64 = (field, v, name) => {
      if (v === undefined) return;
      if (typeof v !== 'number') throw invalid(`${op}: ${name} must be a number`);
      rt.M.HEAPF64[(p + L[`wt_adamw_options.${field}`]) >> 3] = v;
    };
    if (o.betas !== undefined && (!Array.isArray(o.betas) || o.betas.length !== 2)) {
      throw invalid(`${op}: betas must be [beta1, beta2]`);
    }
    f64('lr', o.lr, 'lr');
    f64('beta1', o.betas && o.betas[0], 'betas');
    f64('beta2', o.betas && o.betas[1], 'betas');
    f64('eps', o.eps, 'eps');
    f64('weight_decay', o.weightDecay, 'weightDecay');
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
      case 'conv': case 'pool': case 'bnorm': case 'xent': case 'sgd': case 'adamw':
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
          case 'conv': case 'pool': case 'bnorm': case 'xent': case 'sgd': case 'adamw':
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

// ------------------------------------------------------------- tokenizers

// The C tokenizers (include/webtensor_tokenizer.h): text to token ids and
// back with the vocabulary of a tokenizer.json or of a GGUF file's
// metadata. No context is needed; the calls never wait for the GPU, so
// they run synchronously.
const TOKENIZE_ADD_BOS = 1, TOKENIZE_ADD_EOS = 2, TOKENIZE_SPECIAL = 4, TOKENIZE_NO_PREFIX_SPACE = 8;
const DETOKENIZE_SKIP_SPECIAL = 1, DETOKENIZE_STRIP_PREFIX_SPACE = 2;
const TOKENIZER_KINDS = { 1: 'spm', 2: 'bpe' };
const TOKEN_TYPES = { 1: 'normal', 2: 'unknown', 3: 'control', 4: 'user_defined', 5: 'unused', 6: 'byte' };
const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8'); // replaces ill-formed sequences by U+FFFD

const tokenizerLeaks = new FinalizationRegistry(({ M, ptr, fn }) => M[fn](ptr));

// Bytes of a string (UTF-8), a Uint8Array / ArrayBuffer / typed array as
// they are.
function bytesOf(what, v) {
  if (typeof v === 'string') return utf8Encoder.encode(v);
  if (v instanceof Uint8Array) return v;
  if (v instanceof ArrayBuffer) return new Uint8Array(v);
  if (ArrayBuffer.isView(v)) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  throw invalid(`${what}: expected a string or bytes`);
}

function tokenId(what, v) {
  if (!Number.isInteger(v) || v < -2147483648 || v > 2147483647) {
    throw invalid(`${what}: token id ${v} is not an int32`);
  }
  return v;
}

// Runs fn(ptr) with n bytes of module memory holding data (copied in),
// freed afterwards.
function withBytes(M, data, fn) {
  const p = M._malloc(Math.max(data.length, 1));
  if (!p) throw new WebtensorError(-3, `cannot allocate ${data.length} bytes in the module`);
  try {
    M.HEAPU8.set(data, p);
    return fn(p);
  } finally {
    M._free(p);
  }
}

export class Tokenizer {
  #ptr;
  #rt;
  constructor(rt, ptr) {
    // Use Tokenizer.fromJSON / Tokenizer.fromGGUF.
    this.#rt = rt;
    this.#ptr = ptr;
    tokenizerLeaks.register(this, { M: rt.M, ptr, fn: '_wt_tokenizer_destroy' }, this);
  }

  /** From the text (or bytes) of a Hugging Face tokenizer.json. */
  static async fromJSON(json, options = {}) {
    const rt = await loadRuntime(options);
    const M = rt.M;
    const data = bytesOf('Tokenizer.fromJSON', json);
    const out = M._malloc(4);
    try {
      M.HEAPU32[out >> 2] = 0;
      const st = withBytes(M, data, (p) => M._wt_tokenizer_from_json_memory(p, data.length, out));
      if (st !== 0) throw rt.error(st, 'Tokenizer.fromJSON failed');
      return new Tokenizer(rt, M.HEAPU32[out >> 2]);
    } finally {
      M._free(out);
    }
  }

  /** From the bytes of a GGUF file (its tokenizer.ggml.* metadata; the
   * tensors are not read, so the metadata part of the file is enough). */
  static async fromGGUF(bytes, options = {}) {
    const rt = await loadRuntime(options);
    const M = rt.M;
    if (typeof bytes === 'string') throw invalid('Tokenizer.fromGGUF: expected the bytes of a GGUF file');
    const data = bytesOf('Tokenizer.fromGGUF', bytes);
    const out = M._malloc(8);
    try {
      M.HEAPU32[out >> 2] = 0;
      M.HEAPU32[(out >> 2) + 1] = 0;
      const st = withBytes(M, data, (p) => {
        let s = M._wt_gguf_open_memory(p, data.length, out);
        if (s !== 0) return s;
        const g = M.HEAPU32[out >> 2];
        s = M._wt_tokenizer_from_gguf(g, out + 4);
        M._wt_gguf_close(g); // the tokenizer keeps its own copy
        return s;
      });
      if (st !== 0) throw rt.error(st, 'Tokenizer.fromGGUF failed');
      return new Tokenizer(rt, M.HEAPU32[(out >> 2) + 1]);
    } finally {
      M._free(out);
    }
  }

  _handle(what) {
    if (this.#ptr === 0) throw invalid(`${what}: the tokenizer was disposed`);
    return this.#ptr;
  }

  get disposed() { return this.#ptr === 0; }

  /** Frees the tokenizer (streams made from it must be done). */
  dispose() {
    if (this.#ptr === 0) return;
    tokenizerLeaks.unregister(this);
    this.#rt.M._wt_tokenizer_destroy(this.#ptr);
    this.#ptr = 0;
  }

  /** 'spm' (SentencePiece-style BPE) or 'bpe' (byte-level BPE). */
  get kind() { return TOKENIZER_KINDS[this.#rt.M._wt_tokenizer_kind_of(this._handle('kind'))]; }
  get vocabSize() { return this.#rt.M._wt_tokenizer_vocab_size(this._handle('vocabSize')); }
  /** The BOS id, or null when the vocabulary has none. */
  get bos() {
    const i = this.#rt.M._wt_tokenizer_bos(this._handle('bos'));
    return i < 0 ? null : i;
  }
  get eos() {
    const i = this.#rt.M._wt_tokenizer_eos(this._handle('eos'));
    return i < 0 ? null : i;
  }
  /** Whether the model expects BOS in front of a prompt. */
  get addsBos() { return this.#rt.M._wt_tokenizer_adds_bos(this._handle('addsBos')) !== 0; }
  /** Whether the id ends a generation (EOS, end of turn ...). */
  isEnd(id) { return this.#rt.M._wt_tokenizer_is_end(this._handle('isEnd'), tokenId('isEnd', id)) !== 0; }

  /** { text, type } of an id: the text as the vocabulary stores it. */
  token(id) {
    const M = this.#rt.M;
    const h = this._handle('token');
    const out = M._malloc(12);
    try {
      const st = M._wt_tokenizer_token(h, tokenId('token', id), out, out + 4, out + 8);
      if (st !== 0) throw this.#rt.error(st, 'token failed');
      const p = M.HEAPU32[out >> 2], n = M.HEAPU32[(out >> 2) + 1];
      return { text: utf8Decoder.decode(M.HEAPU8.slice(p, p + n)), type: TOKEN_TYPES[M.HEAP32[(out >> 2) + 2]] };
    } finally {
      M._free(out);
    }
  }

  /** The id of the token whose vocabulary text is piece, or null. */
  find(piece) {
    const M = this.#rt.M;
    const h = this._handle('find');
    const data = bytesOf('find', piece);
    const out = M._malloc(4);
    try {
      const st = withBytes(M, data, (p) => M._wt_tokenizer_find(h, p, data.length, out));
      if (st === -10) return null; // WT_ERR_NOT_FOUND
      if (st !== 0) throw this.#rt.error(st, 'find failed');
      return M.HEAP32[out >> 2];
    } finally {
      M._free(out);
    }
  }

  /** The bytes the id stands for (possibly part of a UTF-8 sequence). */
  tokenBytes(id) {
    const M = this.#rt.M;
    const h = this._handle('tokenBytes');
    const i = tokenId('tokenBytes', id);
    const out = M._malloc(4);
    try {
      for (let cap = 64; ;) {
        const buf = M._malloc(cap);
        try {
          const st = M._wt_tokenizer_token_bytes(h, i, buf, cap, out);
          const n = M.HEAPU32[out >> 2];
          if (st !== 0 && n > cap) {
            cap = n;
            continue;
          }
          if (st !== 0) throw this.#rt.error(st, 'tokenBytes failed');
          return M.HEAPU8.slice(buf, buf + n);
        } finally {
          M._free(buf);
        }
      }
    } finally {
      M._free(out);
    }
  }

  /** The ids of text (a string, or bytes taken as they are: ill-formed
   * UTF-8 becomes U+FFFD), an Int32Array. options: addBos (default: as the
   * model expects), addEos, special (read control tokens written in the
   * text), prefixSpace (false: no SentencePiece dummy space in front). */
  encode(text, options = {}) {
    const M = this.#rt.M;
    const h = this._handle('encode');
    const data = bytesOf('encode', text);
    let flags = 0;
    if (options.addBos === undefined ? this.addsBos : options.addBos) flags |= TOKENIZE_ADD_BOS;
    if (options.addEos) flags |= TOKENIZE_ADD_EOS;
    if (options.special) flags |= TOKENIZE_SPECIAL;
    if (options.prefixSpace === false) flags |= TOKENIZE_NO_PREFIX_SPACE;
    const cap = data.length * 3 + 3; // WT_TOKENIZE_MAX_IDS
    const ids = M._malloc(4 * cap + 4);
    if (!ids) throw new WebtensorError(-3, `encode: cannot allocate ${4 * cap} bytes in the module`);
    try {
      const st = withBytes(M, data, (p) => M._wt_tokenizer_encode(h, p, data.length, flags, ids, cap, ids + 4 * cap));
      if (st !== 0) throw this.#rt.error(st, 'encode failed');
      const n = M.HEAPU32[(ids + 4 * cap) >> 2];
      return M.HEAP32.slice(ids >> 2, (ids >> 2) + n);
    } finally {
      M._free(ids);
    }
  }

  /** The bytes of the ids joined (ill-formed sequences kept), a Uint8Array. */
  decodeBytes(ids, options = {}) {
    const M = this.#rt.M;
    const h = this._handle('decodeBytes');
    const list = Array.from(ids, (v) => tokenId('decode', v));
    let flags = 0;
    if (options.skipSpecial) flags |= DETOKENIZE_SKIP_SPECIAL;
    if (options.stripPrefixSpace) flags |= DETOKENIZE_STRIP_PREFIX_SPACE;
    const idp = M._malloc(4 * Math.max(list.length, 1) + 4);
    try {
      M.HEAP32.set(list, idp >> 2);
      const lenp = idp + 4 * Math.max(list.length, 1);
      let cap = 16 * list.length + 1;
      for (;;) {
        const buf = M._malloc(cap);
        try {
          const st = M._wt_tokenizer_decode(h, idp, list.length, flags, buf, cap, lenp);
          const n = M.HEAPU32[lenp >> 2];
          if (st !== 0 && n + 1 > cap) {
            cap = n + 1;
            continue;
          }
          if (st !== 0) throw this.#rt.error(st, 'decode failed');
          return M.HEAPU8.slice(buf, buf + n);
        } finally {
          M._free(buf);
        }
      }
    } finally {
      M._free(idp);
    }
  }

  /** The text of the ids (ill-formed UTF-8 shown as U+FFFD). options:
   * skipSpecial, stripPrefixSpace. */
  decode(ids, options = {}) { return utf8Decoder.decode(this.decodeBytes(ids, options)); }

  /** A streaming decoder: push ids one at a time, get the text that is
   * complete so far (a partial UTF-8 sequence is held). */
  stream(options = {}) { return new Detokenizer(this, this.#rt, options); }

  toString() {
    return this.disposed ? 'Tokenizer(disposed)'
      : `Tokenizer(${this.kind}, ${this.vocabSize} tokens, bos=${this.bos}, eos=${this.eos})`;
  }
}

export class Detokenizer {
  #ptr = 0;
  #rt;
  #tok;
  constructor(tok, rt, options = {}) {
    // Made by Tokenizer.stream().
    const M = rt.M;
    let flags = 0;
    if (options.skipSpecial) flags |= DETOKENIZE_SKIP_SPECIAL;
    if (options.stripPrefixSpace) flags |= DETOKENIZE_STRIP_PREFIX_SPACE;
    const out = M._malloc(4);
    try {
      const st = M._wt_detokenizer_create(tok._handle('stream'), flags, out);
      if (st !== 0) throw rt.error(st, 'stream failed');
      this.#ptr = M.HEAPU32[out >> 2];
    } finally {
      M._free(out);
    }
    this.#rt = rt;
    this.#tok = tok; // the tokenizer must outlive the stream
    tokenizerLeaks.register(this, { M, ptr: this.#ptr, fn: '_wt_detokenizer_destroy' }, this);
  }

  #text(what, call) {
    if (this.#ptr === 0) throw invalid(`${what}: the stream was disposed`);
    if (this.#tok.disposed) throw invalid(`${what}: the stream's tokenizer was disposed`);
    const M = this.#rt.M;
    const out = M._malloc(8);
    try {
      const st = call(M, out);
      if (st !== 0) throw this.#rt.error(st, `${what} failed`);
      const p = M.HEAPU32[out >> 2], n = M.HEAPU32[(out >> 2) + 1];
      return utf8Decoder.decode(M.HEAPU8.slice(p, p + n)); // always well-formed
    } finally {
      M._free(out);
    }
  }

  /** Adds one id; returns the newly completed text (maybe ''). */
  push(id) {
    const i = tokenId('push', id);
    return this.#text('push', (M, out) => M._wt_detokenizer_push(this.#ptr, i, out, out + 4));
  }

  /** Ends the text: held bytes come out as U+FFFD; the stream starts over. */
  flush() { return this.#text('flush', (M, out) => M._wt_detokenizer_flush(this.#ptr, out, out + 4)); }

  dispose() {
    if (this.#ptr === 0) return;
    tokenizerLeaks.unregister(this);
    this.#rt.M._wt_detokenizer_destroy(this.#ptr);
    this.#ptr = 0;
  }
}

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
  if (options.knobs !== undefined &&
      (typeof options.knobs !== 'object' || options.knobs === null || Array.isArray(options.knobs) ||
       Object.entries(options.knobs).some(([k, v]) => !/^WT_[A-Z0-9_]+$/.test(k) ||
                                          (typeof v !== 'string' && typeof v !== 'number')))) {
    throw invalid('init: knobs must be an object of WT_* names to strings or numbers');
  }
  if (options.webgpu) installNodeWebgpu(options.webgpu, options.dawnFlags);
  const rt = await loadRuntime(options);
  // The module reads its environment once: knobs of a later init() that
  // differ from those it was loaded with cannot take effect.
  const asked = JSON.stringify(Object.entries(options.knobs || {}).map(([k, v]) => [k, String(v)]).sort());
  if (options.knobs !== undefined && asked !== loadedKnobs) {
    throw invalid('init: knobs apply when the module loads (the first init()); these differ from its');
  }
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
  WebtensorError, Tensor, Context, DeviceLostEvent, Optimizer, GradScaler, Tokenizer, Detokenizer,
};
