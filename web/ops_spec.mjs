// The JavaScript signatures of webtensor's ops that are not generated from
// the op tables (src/core/ops.def, src/core/reduce_ops.def): one line each.
//
//   name: 'kind:param[=default] ... | C argument order'
//
// The parameters are in JavaScript order; the C order after '|' names them
// again, with 'ctx' for the context, '@out' for each result tensor the C
// function writes and 'NULL' for an output pointer left unused. Without
// '|' the C order is the JavaScript order followed by one '@out'.
// Kinds (web/gen_ops.mjs maps them to TypeScript, web/webtensor.mjs to C):
//   T tensor, T? tensor or null, i int, I int64, U64 uint64 seed, d double,
//   f float, b bool, dtype 'f32'|'f16'|'i32'|'bool', axes (number, array
//   or null: int naxes + int*), shape (array: int n + int64_t*), perm
//   (array: int*), tensors (array: int n + wt_tensor**), conv / pool /
//   bnorm / xent / sgd / adamw (options objects), and the enums padmode,
//   ropelayout, act, interpmode.
// A default '@name' is the value of parameter name.

export const KERNEL_OPS = {
  // elementwise with kernels of their own
  where: 'T:mask T:a T:b',
  masked_fill: 'T:x T:mask d:value',
  cast: 'T:x dtype:dtype',
  // views and copies
  reshape: 'T:x shape:shape',
  permute: 'T:x perm:dims',
  transpose: 'T:x i:axis0=-2 i:axis1=-1',
  slice: 'T:x i:axis I:start I:stop=Infinity I:step=1',
  expand: 'T:x shape:shape',
  copy: 'T:x',
  contiguous: 'T:x',
  // linear algebra
  matmul: 'T:a T:b',
  // reductions with parameters of their own, scans
  var: 'T:x axes:axis=null d:correction=1 b:keepdims=false',
  std: 'T:x axes:axis=null d:correction=1 b:keepdims=false',
  norm: 'T:x d:ord=2 axes:axis=null b:keepdims=false | x ord axis keepdims @out',
  cumsum: 'T:x i:axis',
  cumprod: 'T:x i:axis',
  // creation and random numbers (methods of the context)
  zeros: 'shape:shape dtype:dtype=f32 | ctx dtype shape @out',
  ones: 'shape:shape dtype:dtype=f32 | ctx dtype shape @out',
  full: 'shape:shape d:value dtype:dtype=f32 | ctx dtype shape value @out',
  arange: 'd:start d:stop d:step=1 dtype:dtype=f32 | ctx dtype start stop step @out',
  linspace: 'd:start d:stop I:num b:endpoint=true dtype:dtype=f32 | ctx dtype start stop num endpoint @out',
  eye: 'I:n I:m=@n I:k=0 dtype:dtype=f32 | ctx dtype n m k @out',
  rand: 'shape:shape U64:seed=0 dtype:dtype=f32 | ctx dtype shape seed @out',
  randn: 'shape:shape U64:seed=0 dtype:dtype=f32 | ctx dtype shape seed @out',
  dropout: 'T:x f:p U64:seed=0',
  // data movement
  squeeze: 'T:x axes:axis=null',
  unsqueeze: 'T:x i:axis',
  flatten: 'T:x i:start_axis=0 i:end_axis=-1',
  concat: 'tensors:tensors i:axis=0',
  stack: 'tensors:tensors i:axis=0',
  copy_into: 'T:dst T:src | dst src',
  pad: 'T:x i64s:pad padmode:mode=constant d:value=0',
  repeat: 'T:x i64s:repeats',
  tile: 'T:x i64s:reps',
  flip: 'T:x axes:axis',
  tril: 'T:x I:diagonal=0',
  triu: 'T:x I:diagonal=0',
  gather: 'T:x i:axis T:index',
  index_select: 'T:x i:axis T:index',
  embedding: 'T:table T:index',
  scatter_add: 'T:x i:axis T:index T:src',
  index_add: 'T:x i:axis T:index T:src',
  one_hot: 'T:index I:num_classes=-1',
  sort: 'T:x i:axis=-1 b:descending=false | x axis descending @out @out',
  argsort: 'T:x i:axis=-1 b:descending=false',
  topk: 'T:x I:k i:axis=-1 b:largest=true | x k axis largest @out @out',
  // nn: convolution, pooling, normalisation
  conv2d: 'T:x T:weight T?:bias=null conv:options=null',
  conv1d: 'T:x T:weight T?:bias=null conv:options=null',
  conv_transpose2d: 'T:x T:weight T?:bias=null conv:options=null',
  max_pool2d: 'T:x pool:options | x options @out NULL',
  avg_pool2d: 'T:x pool:options',
  adaptive_avg_pool2d: 'T:x I:out_h I:out_w',
  adaptive_max_pool2d: 'T:x I:out_h I:out_w | x out_h out_w @out NULL',
  global_avg_pool2d: 'T:x',
  global_max_pool2d: 'T:x',
  batch_norm: 'T:x T?:running_mean T?:running_var T?:weight=null T?:bias=null bnorm:options=null | x running_mean running_var weight bias options @out NULL NULL',
  group_norm: 'T:x I:num_groups T?:weight=null T?:bias=null f:eps=1e-5',
  upsample2d: 'T:x d:scale_factor interpmode:mode=nearest',
  // nn: attention, rope, linear, softmax and norms
  softmax: 'T:x i:axis=-1',
  log_softmax: 'T:x i:axis=-1',
  layernorm: 'T:x T?:weight=null T?:bias=null f:eps=1e-5',
  rmsnorm: 'T:x T?:weight=null f:eps=1e-6',
  layer_norm: 'T:x i:normalized_ndim T?:weight=null T?:bias=null d:eps=1e-5',
  rms_norm: 'T:x i:normalized_ndim T?:weight=null d:eps=1e-6',
  scaled_dot_product_attention: 'T:q T:k T:v T?:mask=null b:causal=false f:scale=0',
  rope: 'T:x d:theta=10000 I:offset=0 ropelayout:layout=bhsd',
  linear: 'T:x T:weight T?:bias=null',
  // training
  activation_backward: 'act:activation T:dy T:x',
  cross_entropy: 'T:logits T:labels xent:options=null',
  cross_entropy_backward: 'T:logits T:labels T?:dloss=null xent:options=null | dloss logits labels options @out',
  embedding_backward: 'T:dy T:indices I:num_embeddings',
  layernorm_backward: 'T:dy T:x T:weight d:eps=1e-5 i:normalized_ndim=1 | dy x normalized_ndim weight eps @out @out @out',
  batch_norm_backward: 'T:dy T:x T?:running_mean T?:running_var T:weight bnorm:options=null | dy x running_mean running_var weight options @out @out @out',
  conv2d_backward: 'T:dy T:x T:weight conv:options=null | dy x weight options @out @out @out',
  max_pool2d_backward: 'T:dy T:indices T:x',
  avg_pool2d_backward: 'T:dy T:x pool:options',
  // in-place optimizer steps (param and the state are written; no result)
  sgd_step: 'T:param T:grad T?:momentum_buf=null sgd:options=null | param grad momentum_buf options',
  adamw_step: 'T:param T:grad T:m T:v I:step adamw:options=null | param grad m v step options',
};

// Ops of the catalogue with a JavaScript form written by hand in
// web/webtensor.mjs (several results, or arguments no line above says).
export const HAND_WRITTEN = ['split', 'chunk', 'roll'];

// Ops of the catalogue not offered in JavaScript yet.
export const NOT_BOUND = [
  'tensor_ones', // offered as ones()
  'interpolate', 'interpolate_backward', // their options object is not marshalled yet (upsample2d is offered)
  'quantize', 'dequantize', 'linear_quant', // quantised weights: their type enum is not marshalled yet
  'sample', // its options hold a tensor (the device-side step), not marshalled yet
  'linear_fused', // its options hold tensors (norm weight, residual), not marshalled yet
  'rope_kv_cache', // writes its first argument in place; its options hold a tensor (the position)
  'rope_kv_attention', // as rope_kv_cache, with attention's options (a tensor: kv_length)
];
// Functions of the C API that are not ops and stay C-only in JavaScript (and
// Python): wt_tensor_set_grad_ready_hook takes a C function pointer called
// on the backward pass's thread while the pass runs. Its use is starting a
// reduction across processes (webtensor_dist.h), which neither language
// binds; a JavaScript callback would have to be re-entered from inside a
// suspended (ASYNCIFY) backward call, and a ctypes one would run Python
// under the pass with no way to report its exceptions to the library.

// C functions whose names are not wt_<name>.
export const C_NAMES = {
  zeros: 'wt_tensor_zeros', ones: 'wt_tensor_ones', full: 'wt_tensor_full',
  arange: 'wt_tensor_arange', linspace: 'wt_tensor_linspace', eye: 'wt_tensor_eye',
  rand: 'wt_tensor_rand', randn: 'wt_tensor_randn',
  cross_entropy_backward: 'wt_cross_entropy_backward_v2', topk: 'wt_topk_v2',
  max_pool2d: 'wt_max_pool2d_v2', avg_pool2d: 'wt_avg_pool2d_v2',
  layernorm_backward: 'wt_layer_norm_backward', batch_norm_backward: 'wt_batch_norm_backward_v2',
  conv2d_backward: 'wt_conv2d_backward_v2', avg_pool2d_backward: 'wt_avg_pool2d_backward_v2',
};

// Reductions whose signature is not the plain (x, axis, keepdims).
export const REDUCE_SPECIAL = ['var', 'std', 'norm'];

// Enums of the C API by their JavaScript names.
export const ENUMS = {
  dtype: { f32: 0, f16: 1, i32: 2, bool: 3 },
  padmode: { constant: 0, reflect: 1, replicate: 2 },
  ropelayout: { bhsd: 0, bshd: 1 },
  interpmode: { nearest: 0, bilinear: 1 },
  act: { relu: 0, sigmoid: 1, tanh: 2, silu: 3, gelu: 4, gelu_tanh: 5 },
  reduction: { mean: 0, sum: 1, none: 2 },
  backend: { auto: 0, cpu: 1, webgpu: 2 },
};

// C functions the JavaScript layer calls besides the ops.
export const CORE_FUNCTIONS = [
  'wt_status_string', 'wt_last_error', 'wt_version',
  'wt_context_options_init', 'wt_context_create', 'wt_context_destroy', 'wt_context_sync',
  'wt_context_backend', 'wt_context_memory_stats', 'wt_context_trim', 'wt_context_get_info',
  'wt_context_last_message', 'wt_context_last_status', 'wt_context_last_error', 'wt_context_recover', 'wt_context_lose_device',
  'wt_tensor_from_data', 'wt_tensor_read', 'wt_tensor_ndim', 'wt_tensor_shape', 'wt_tensor_dtype',
  'wt_tensor_context', 'wt_tensor_release', 'wt_dtype_size',
  'wt_op_count', 'wt_op_name', 'wt_op_family',
  'wt_add_scalar', // the scalar forms of every binary op are added by the generator
  'wt_split', 'wt_chunk', 'wt_roll', 'wt_tensor_to',
  'wt_conv_options_init', 'wt_pool2d_options_init', 'wt_batch_norm_options_init',
  'wt_cross_entropy_options_init',
  'wtjs_layout',
  // autograd (webtensor.h, "autograd")
  'wt_tensor_set_requires_grad', 'wt_tensor_requires_grad', 'wt_tensor_grad', 'wt_tensor_zero_grad',
  'wt_backward', 'wt_detach', 'wt_no_grad_begin', 'wt_no_grad_end', 'wt_grad_enabled',
  'wt_sgd_options_init', 'wt_adamw_options_init', 'wt_lr_schedule_options_init', 'wt_lr_schedule_at',
  // optimizers (webtensor.h, "optimizers")
  'wt_optimizer_create_sgd', 'wt_optimizer_create_adamw', 'wt_optimizer_add_params', 'wt_optimizer_step',
  'wt_optimizer_zero_grad', 'wt_optimizer_set_lr', 'wt_optimizer_lr', 'wt_optimizer_steps',
  'wt_optimizer_read_steps',
  'wt_optimizer_clip_grad_norm', 'wt_optimizer_step_clipped', 'wt_optimizer_set_schedule', 'wt_optimizer_release', 'wt_clip_grad_norm',
  'wt_grad_scaler_options_init', 'wt_grad_scaler_create', 'wt_grad_scaler_scale', 'wt_grad_scaler_unscale',
  'wt_grad_scaler_step', 'wt_grad_scaler_current_scale', 'wt_grad_scaler_found_inf', 'wt_grad_scaler_release',
  // tokenizers (webtensor_tokenizer.h)
  'wt_gguf_open_memory', 'wt_gguf_close', 'wt_tokenizer_from_gguf', 'wt_tokenizer_from_json_memory',
  'wt_tokenizer_destroy', 'wt_tokenizer_kind_of', 'wt_tokenizer_vocab_size', 'wt_tokenizer_bos',
  'wt_tokenizer_eos', 'wt_tokenizer_is_end', 'wt_tokenizer_adds_bos', 'wt_tokenizer_token',
  'wt_tokenizer_find', 'wt_tokenizer_encode', 'wt_tokenizer_token_bytes', 'wt_tokenizer_decode',
  'wt_detokenizer_create', 'wt_detokenizer_destroy', 'wt_detokenizer_push', 'wt_detokenizer_flush',
  // Deprecated names (webtensor.h, section 16) the wasm module still
  // exports, for programs that call them by name.
  'wt_arange', 'wt_linspace', 'wt_eye', 'wt_rand', 'wt_randn', 'wt_cross_entropy_backward',
  'wt_topk', 'wt_max_pool2d', 'wt_avg_pool2d', 'wt_pool_options_init',
];
