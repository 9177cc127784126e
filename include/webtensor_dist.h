/*
 * webtensor distributed: data-parallel training over MPI.
 *
 * A separate library, libwebtensor_dist, built when CMake finds MPI (Open
 * MPI or MPICH); it uses only the public API of webtensor.h and links
 * libwebtensor and the MPI library. Same conventions as webtensor.h: every
 * call that can fail returns a wt_status with a message in
 * wt_last_error(), out-pointers are NULL on failure, nothing leaks, nothing
 * aborts the process.
 *
 * Every rank calls the collectives (allreduce, broadcast, allgather,
 * barrier, fail) in the same order with matching tensors, as with MPI
 * itself. Tensors may be on the CPU backend or on a WebGPU device; ranks
 * need not use the same kind of context.
 *
 * What travels through host memory: everything. WebGPU offers no peer
 * access between devices and no way to export a device buffer to another
 * API (no CUDA IPC, no dma-buf), so an MPI library cannot read or write
 * GPU memory directly (no GPUDirect RDMA). Each collective reads the
 * tensors back into host buffers, runs MPI on those, and writes the result
 * back. To hide that cost, allreduce packs the tensors into buckets of
 * bucket_bytes, and while bucket k is being reduced by MPI_Iallreduce,
 * bucket k + 1 is read back from the device and the result of bucket
 * k - 1 is written to it (docs/DISTRIBUTED.md).
 *
 * Failures never hang the job:
 *   - the communicator's error handler is MPI_ERRORS_RETURN: an MPI error
 *     is a WT_ERR_BACKEND with MPI's message;
 *   - every collective starts and ends with an agreement round (a small
 *     non-blocking allreduce of each rank's status), so when one rank
 *     fails - bad arguments, its own read-back, or the program calls
 *     wt_dist_fail - every rank's collective returns the failure naming
 *     the rank and its message, and the ranks stay in step (the group
 *     stays usable);
 *   - every wait polls with a deadline (timeout_seconds): a rank that
 *     stops answering (killed, hung in a driver) makes the others return
 *     WT_ERR_BACKEND ("no answer within N s") instead of waiting forever.
 *     After a timeout the communicator is unusable; wt_dist_destroy then
 *     leaves MPI initialised (MPI_Finalize would wait for the missing
 *     rank), so the program should exit with a failure status.
 * After a timeout or an MPI error, further collectives fail at once with
 * that message.
 */
#ifndef WEBTENSOR_DIST_H
#define WEBTENSOR_DIST_H

#include "webtensor.h"

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct wt_dist wt_dist;
typedef struct wt_dist_grad_sync wt_dist_grad_sync;

typedef enum wt_dist_reduce {
    WT_DIST_SUM = 0,
    WT_DIST_MEAN = 1 /* the sum divided by the number of ranks */
} wt_dist_reduce;

/* How allreduce reads a bucket of several tensors back from a GPU. */
typedef enum wt_dist_pack {
    /* Packed on GPUs that are not software renderers: there a
     * concatenation costs microseconds and saves a submit, a staging
     * buffer and a map per tensor; a software renderer (lavapipe) runs
     * the concatenation on the same cores, slower than the reads. */
    WT_DIST_PACK_AUTO = 0,
    WT_DIST_PACK_NEVER = 1,  /* one read per tensor */
    WT_DIST_PACK_ALWAYS = 2  /* concatenated on the device, one read a bucket */
} wt_dist_pack;

typedef struct wt_dist_options {
    uint32_t struct_size;
    /* Longest wait of one collective for the other ranks, in seconds
     * (default 300; 0 or less: no limit). */
    double timeout_seconds;
    /* allreduce packs tensors into buckets of about this many bytes
     * (default 4 MiB); a tensor larger than a bucket is a bucket of its own. */
    int64_t bucket_bytes;
    wt_dist_pack pack;        /* default WT_DIST_PACK_AUTO */
    /* allreduce and the gradient synchroniser move and reduce f16 instead
     * of f32 (default false): half the bytes each way and on the network.
     * Each bucket is converted to f16 on the device (round to nearest
     * even) and read back; MPI adds the ranks' halves pairwise in f32,
     * rounding each sum to f16; the mean's 1/size is applied on the host
     * in f32 and rounded to f16; the result goes back as f16 and is
     * widened on the device (exact). Every rank still gets the same bits.
     * Tolerance: for values of f16's normal range (6.1e-5 to 65504 in
     * magnitude), each result is within (size + 1) * 2^-11 (relative) of
     * the sum (mean) of the absolute values of the terms away from the
     * exact one; smaller values lose precision (subnormals below 6.1e-5,
     * zero below 3e-8) and larger ones overflow to infinity: scale the
     * loss (wt_grad_scaler) so that the gradients sit in that range. */
    bool reduce_f16;
} wt_dist_options;

WT_API void wt_dist_options_init(wt_dist_options *opts);

/* A distributed group over comm (MPI_COMM_WORLD, or any communicator of
 * the program), which is duplicated: the group's traffic never mixes with
 * the program's. If MPI is not initialised yet, it is (MPI_Init_thread,
 * MPI_THREAD_FUNNELED) and wt_dist_destroy finalises it. opts NULL: the
 * defaults. */
WT_API wt_status wt_dist_init(MPI_Comm comm, const wt_dist_options *opts, wt_dist **out);
/* Frees the group (NULL is ignored); finalises MPI if wt_dist_init
 * initialised it and no collective timed out. Not collective-safe after a
 * failure on some ranks only: call it on every rank. */
WT_API void wt_dist_destroy(wt_dist *d);
/* This process's rank in the group and the number of ranks; -1 for NULL. */
WT_API int wt_dist_rank(const wt_dist *d);
WT_API int wt_dist_size(const wt_dist *d);
/* This rank's index among the ranks on the same host (same
 * MPI_Get_processor_name), for choosing a GPU: one rank per GPU is
 * wt_context_options.adapter_index = local rank (of the host's adapters
 * of one kind); the number of ranks on this host. -1 for NULL. */
WT_API int wt_dist_local_rank(const wt_dist *d);
WT_API int wt_dist_local_size(const wt_dist *d);

/* Every tensor replaced, in place, by its elementwise sum (or mean) over
 * the ranks. tensors: n contiguous f32 tensors, the same shapes in the same
 * order on every rank (checked: a mismatch fails on every rank). */
WT_API wt_status wt_dist_allreduce(wt_dist *d, int n, wt_tensor *const *tensors, wt_dist_reduce op);
/* Every tensor replaced, in place, by root's (contiguous tensors of any
 * dtype, the same shapes and dtypes on every rank). */
WT_API wt_status wt_dist_broadcast(wt_dist *d, int n, wt_tensor *const *tensors, int root);
/* A new tensor on x's context: the ranks' x stacked along a new first
 * axis, [size, ...x.shape] in rank order (x: the same shape and dtype on
 * every rank). */
WT_API wt_status wt_dist_allgather(wt_dist *d, const wt_tensor *x, wt_tensor **out);
/* Returns when every rank has called it. */
WT_API wt_status wt_dist_barrier(wt_dist *d);
/* Tells the other ranks that this one failed: their current or next
 * collective returns WT_ERR_BACKEND with "rank R failed: message"; this
 * call returns WT_ERR_BACKEND too, once every rank has heard it (or the
 * timeout passed). Call it where the rank would have called its next
 * collective. */
WT_API wt_status wt_dist_fail(wt_dist *d, const char *message);

/* Gradient reduction overlapped with the backward pass (PyTorch DDP's
 * reducer). Made once for a list of n tensors, bucketed as
 * wt_dist_allreduce buckets the same list; then each step:
 *
 *     wt_backward(loss);                 buckets start as their gradients
 *                                        become final, while the backward
 *                                        pass goes on
 *     wt_dist_grad_sync_finish(s);       the rest: waits, writes back
 *     (the optimizer step on every parameter's .grad, now reduced)
 *
 * A tensor of the list that is a leaf requiring grad (a parameter) stands
 * for its gradient: its gradient-ready hook (wt_tensor_set_grad_ready_hook,
 * which this replaces) hands the synchroniser the .grad-to-be as soon as
 * wt_backward has made it final, and a bucket whose gradients are all
 * final is read back from the device and posted to MPI_Iallreduce at
 * once, in a fixed order (last bucket first: backward reaches the last
 * layers first) that is the same on every rank. Any other tensor of the
 * list is a slot for a tensor of its shape given each step with
 * wt_dist_grad_sync_give (the examples reduce their loss so). Finish
 * takes the .grad of a parameter whose hook did not fire (no backward
 * touched it this step; NULL .grad: WT_ERR_INVALID_ARGUMENT on every
 * rank), reduces what is left, and writes every result back into the
 * tensor it came from, in place: the parameters' .grad. The results are
 * bit for bit wt_dist_allreduce's on the same list: the same buckets,
 * the same reductions and the same scaling, started earlier.
 *
 * One backward pass per step: a gradient given twice before finish
 * (gradient accumulation over micro-batches) fails the step; accumulate
 * with the synchroniser destroyed, or reduce with wt_dist_allreduce. A
 * rank that fails calls wt_dist_fail where it would call finish (or
 * fails its own finish); every rank's step is then abandoned alike -
 * the buckets already posted anywhere are completed with zeros - and the
 * group stays usable. */
WT_API wt_status wt_dist_grad_sync_create(wt_dist *d, int n, wt_tensor *const *tensors, wt_dist_reduce op,
                                          wt_dist_grad_sync **out);
/* Gives slot i (0 <= i < n) this step's tensor t, now: t must have the
 * shape of tensors[i], be f32 and contiguous; it is written in place by
 * finish. Also for a parameter whose gradient is at hand without
 * wt_backward. */
WT_API wt_status wt_dist_grad_sync_give(wt_dist_grad_sync *s, int i, wt_tensor *t);
/* Ends the step on every rank (collective): the results are in place
 * when it returns WT_OK. */
WT_API wt_status wt_dist_grad_sync_finish(wt_dist_grad_sync *s);
/* Removes the hooks and frees the synchroniser (NULL is ignored). Not
 * collective, but call it between steps: a step in progress waits (with
 * the group's timeout) for the reductions it posted. wt_dist_destroy
 * destroys the synchronisers left. */
WT_API void wt_dist_grad_sync_destroy(wt_dist_grad_sync *s);

/* Time and traffic of the collectives since wt_dist_init (or the last
 * reset). */
typedef struct wt_dist_stats {
    uint32_t struct_size;
    uint64_t calls;            /* collectives run */
    uint64_t bytes_reduced;    /* allreduce payload bytes of this rank */
    double total_seconds;      /* wall time inside the collectives */
    double read_seconds;       /* waiting for the device -> host copies, which
                                  on a GPU includes waiting for the work that
                                  computes the tensors (the backward pass) */
    double write_seconds;      /* host -> device copies */
    double mpi_seconds;        /* allreduce: from posting the first bucket's
                                  reduction to the end of the last one */
    double mpi_wait_seconds;   /* of which the caller did nothing but wait
                                  for MPI: the part not overlapped by
                                  read-backs and write-backs */
    uint64_t buckets;          /* buckets reduced by wt_dist_grad_sync */
    uint64_t buckets_early;    /* of which posted to MPI before finish
                                  (during the backward pass) */
} wt_dist_stats;
WT_API void wt_dist_stats_init(wt_dist_stats *stats);
/* Fills *out (set up by wt_dist_stats_init: a program built against an
 * older header gets the fields its struct_size holds). */
WT_API wt_status wt_dist_get_stats(const wt_dist *d, wt_dist_stats *out);
WT_API wt_status wt_dist_reset_stats(wt_dist *d);

#ifdef __cplusplus
}
#endif

#endif /* WEBTENSOR_DIST_H */
