/*
 * The layouts of the public structs as this compiler lays them out, for
 * web/webtensor.mjs: it reads and writes the option and information
 * structs through these offsets instead of numbers copied by hand, so a
 * field added to a struct cannot shift what JavaScript writes.
 */
#include <stddef.h>
#include <stdint.h>

#include "webtensor.h"

typedef struct wtjs_field {
    const char *name;
    int32_t value;
} wtjs_field;

#define SIZE(T) {#T, (int32_t)sizeof(T)}
#define FIELD(T, f) {#T "." #f, (int32_t)offsetof(T, f)}

static const wtjs_field layout[] = {
    SIZE(wt_context_options),
    FIELD(wt_context_options, backend),
    FIELD(wt_context_options, memory_limit),
    FIELD(wt_context_options, experimental),
    SIZE(wt_memory_stats),
    FIELD(wt_memory_stats, live_bytes),
    FIELD(wt_memory_stats, peak_bytes),
    FIELD(wt_memory_stats, pooled_bytes),
    FIELD(wt_memory_stats, live_tensors),
    FIELD(wt_memory_stats, buffers),
    FIELD(wt_memory_stats, bytes_to_device),
    FIELD(wt_memory_stats, bytes_from_device),
    SIZE(wt_context_info),
    FIELD(wt_context_info, backend),
    FIELD(wt_context_info, reason),
    FIELD(wt_context_info, has_adapter),
    FIELD(wt_context_info, adapter),
    FIELD(wt_context_info, shader_f16),
    FIELD(wt_context_info, subgroups),
    FIELD(wt_context_info, timestamp_query),
    FIELD(wt_context_info, subgroup_matrix),
    FIELD(wt_context_info, toggles),
    FIELD(wt_context_info, features),
    FIELD(wt_context_info, max_buffer_size),
    FIELD(wt_context_info, max_binding_size),
    FIELD(wt_context_info, num_threads),
    FIELD(wt_adapter_info, name),
    FIELD(wt_adapter_info, vendor),
    FIELD(wt_adapter_info, architecture),
    FIELD(wt_adapter_info, driver),
    FIELD(wt_adapter_info, type),
    SIZE(wt_conv_options),
    FIELD(wt_conv_options, stride),
    FIELD(wt_conv_options, padding),
    FIELD(wt_conv_options, dilation),
    FIELD(wt_conv_options, groups),
    FIELD(wt_conv_options, same),
    FIELD(wt_conv_options, output_padding),
    SIZE(wt_pool2d_options),
    FIELD(wt_pool2d_options, kernel),
    FIELD(wt_pool2d_options, stride),
    FIELD(wt_pool2d_options, padding),
    FIELD(wt_pool2d_options, dilation),
    FIELD(wt_pool2d_options, ceil_mode),
    FIELD(wt_pool2d_options, count_include_pad),
    FIELD(wt_pool2d_options, divisor_override),
    SIZE(wt_batch_norm_options),
    FIELD(wt_batch_norm_options, training),
    FIELD(wt_batch_norm_options, momentum),
    FIELD(wt_batch_norm_options, eps),
    SIZE(wt_cross_entropy_options),
    FIELD(wt_cross_entropy_options, reduction),
    FIELD(wt_cross_entropy_options, ignore_index),
    SIZE(wt_sgd_options),
    FIELD(wt_sgd_options, lr),
    FIELD(wt_sgd_options, momentum),
    FIELD(wt_sgd_options, dampening),
    FIELD(wt_sgd_options, weight_decay),
    FIELD(wt_sgd_options, nesterov),
    SIZE(wt_adamw_options),
    FIELD(wt_adamw_options, lr),
    FIELD(wt_adamw_options, beta1),
    FIELD(wt_adamw_options, beta2),
    FIELD(wt_adamw_options, eps),
    FIELD(wt_adamw_options, weight_decay),
    SIZE(wt_lr_schedule_options),
    FIELD(wt_lr_schedule_options, kind),
    FIELD(wt_lr_schedule_options, lr),
    FIELD(wt_lr_schedule_options, warmup_steps),
    FIELD(wt_lr_schedule_options, step_size),
    FIELD(wt_lr_schedule_options, gamma),
    FIELD(wt_lr_schedule_options, total_steps),
    FIELD(wt_lr_schedule_options, min_lr),
    SIZE(wt_grad_scaler_options),
    FIELD(wt_grad_scaler_options, init_scale),
    FIELD(wt_grad_scaler_options, growth_factor),
    FIELD(wt_grad_scaler_options, backoff_factor),
    FIELD(wt_grad_scaler_options, growth_interval),
    {NULL, 0},
};

/* The table above, ended by a NULL name. */
WT_API const wtjs_field *wtjs_layout(void);
const wtjs_field *wtjs_layout(void) { return layout; }
