/* Device loss and recovery. A lost device (driver reset, GPU removed, or
 * wt_context_lose_device) makes every later call on the context fail with
 * WT_ERR_DEVICE_LOST and the reason. wg_recover brings up a new device on
 * the same adapter (the browser binding answers that request with a fresh
 * adapter of the host, as a WebGPU adapter makes one device: see
 * br_js_request_device); tensors made before stay as handles whose memory is
 * gone: using them fails with WT_ERR_DEVICE_LOST ("made on a device that
 * was lost"), releasing them is fine. Each device has a generation and
 * every buffer keeps the generation it was made in. */
#include "webgpu/wg_runtime.h"

#include <stdio.h>
#include <string.h>

wt_status wg_lose_device(wt_context *ctx)
{
    wg_context *w = wg_ctx(ctx);
    if (w->lost)
        return WT_OK;
    /* What a driver reset does: the device goes, with queued work. */
    w->losing_on_purpose = true;
    w->lib.p.DeviceDestroy(w->device);
    w->lib.p.InstanceProcessEvents(w->instance);
    w->losing_on_purpose = false;
    if (!w->lost) { /* the callback did not come (yet): record it ourselves */
        w->lost = true;
        w->pending_status = WT_ERR_DEVICE_LOST;
        snprintf(w->pending_message, sizeof w->pending_message,
                 "webgpu: device lost: destroyed on purpose (wt_context_lose_device)");
    }
    return WT_OK;
}

/* Objects of the dead device, released; the adapter and instance stay. */
static void drop_device(wt_context *ctx)
{
    wg_context *w = wg_ctx(ctx);
    const wgpu_procs *p = &w->lib.p;
    wg_pipeline_cache_destroy(ctx);
    wg_checks_drop(ctx); /* their flags died with the device */
    wg_rope_tables_drop(ctx);
    wg_pool_trim(ctx);
    wg_upload_staging_release(ctx); /* its slots' pending maps waited for */
    wg_recorder_destroy(ctx);
    wg_timer_destroy(ctx);
    if (w->queue)
        p->QueueRelease(w->queue);
    w->queue = NULL;
    if (w->device) {
        p->DeviceRelease(w->device);
        p->InstanceProcessEvents(w->instance);
    }
    w->device = NULL;
    w->f16_hw_probed = w->f16_hw_exact = false;
}

wt_status wg_recover(wt_context *ctx)
{
    wg_context *w = wg_ctx(ctx);
    if (!w->lost)
        return WT_OK; /* nothing to recover from */
    char reason[sizeof w->pending_message];
    snprintf(reason, sizeof reason, "%s", w->pending_message);
    uint32_t per_submit = w->rec.per_submit;
    w->prof.active = false; /* its query set goes with the device */
    drop_device(ctx);
    w->generation++;
    w->lost = false;
    w->pending_status = WT_OK;
    w->pending_message[0] = '\0';
    memset(&w->caps, 0, sizeof w->caps);
    wt_status st = wg_device_create(ctx);
    if (st == WT_OK)
        st = wg_recorder_init(ctx, per_submit);
    if (st != WT_OK) {
        /* Still lost: later calls keep failing with the reason. */
        char why[512];
        snprintf(why, sizeof why, "%s", wt_last_error());
        drop_device(ctx);
        w->lost = true;
        w->pending_status = WT_ERR_DEVICE_LOST;
        snprintf(w->pending_message, sizeof w->pending_message,
                 "webgpu: device lost, and recovery failed: %.400s", why);
        return wt_fail(WT_ERR_DEVICE_LOST, "%s", w->pending_message);
    }
    snprintf(ctx->reason + strlen(ctx->reason), sizeof ctx->reason - strlen(ctx->reason),
             "; recovered from: %.160s", reason);
    return WT_OK;
}
