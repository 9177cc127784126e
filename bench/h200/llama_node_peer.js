// llama.cpp's Vulkan backend through @fugood/llama.node: greedy decode of
// 128 tokens after the 16-token prompt, after a 16-token warm-up.
const lib = require(process.argv[2]);
(async () => {
  const c = await lib.loadModel({model: process.argv[3], n_ctx: 512, n_gpu_layers: 99, lib_variant: 'vulkan',
                                 n_batch: 512});
  const opt = {prompt: 'abcdefghijklmn', ignore_eos: true, temperature: 0, top_k: 1};
  await c.completion(Object.assign({n_predict: 16}, opt));
  for (let i = 0; i < 2; i++) {
    const r = await c.completion(Object.assign({n_predict: 128}, opt));
    const t = r.timings;
    console.log(`peer ${process.argv[3]}: prompt ${t.prompt_n} tok, decode ${t.predicted_n} tokens in ${t.predicted_ms.toFixed(1)} ms = ${t.predicted_per_second.toFixed(1)} tok/s`);
  }
  await c.release();
})().catch(e => { console.log('peer error', e); process.exit(1); });
