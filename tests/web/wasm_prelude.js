// Prepended to every test program compiled to WebAssembly (--pre-js).
// In Node: WebGPU comes from the npm "webgpu" package (Dawn), found through
// NODE_PATH (tests/web/node_modules); the wasm file is read from disk, not
// fetched. In a browser nothing is needed: navigator.gpu is the page's.
if (typeof process === 'object' && process.versions && process.versions.node) {
  // Emscripten 3.1.6 prefers fetch() when it exists, which cannot read a
  // file path.
  delete globalThis.fetch;
  // The library's WT_* knobs reach its C code as the module's
  // environment (Emscripten's ENV, read once at start-up).
  // (Plain loops: Emscripten's minifier takes no destructuring here.)
  Module.preRun = [].concat(Module.preRun || [], function () {
    for (var k in process.env) if (k.indexOf('WT_') === 0) ENV[k] = process.env[k];
  });
  // WT_NODE_WEBGPU: Dawn's flags for create() (comma-separated, e.g.
  // "backend=null"), or "none" for a host without navigator.gpu.
  const flags = process.env.WT_NODE_WEBGPU || '';
  if (flags !== 'none' && !(globalThis.navigator && globalThis.navigator.gpu)) {
    try {
      const webgpu = require('webgpu');
      Object.assign(globalThis, webgpu.globals);
      Object.defineProperty(globalThis, 'navigator', {
        value: { gpu: webgpu.create(flags ? flags.split(',') : []) },
        configurable: true, writable: true });
    } catch (e) {
      // No WebGPU here: the CPU backend still runs; a WebGPU run fails
      // with "no adapter".
    }
  }
}
