/* lib/algorithm/stream.c: host data streamed through the device chunk by chunk.
 *
 * A call whose sequences map element i to element i of their leaves (plain sequences,
 * counting, discard, transform and zip views) and that has host memory among its leaves
 * runs in chunks instead of staging that memory whole: the host threads copy chunk i+1
 * into one of two host-visible stream buffers while the device works on chunk i from
 * the other. Outputs go the other way: the host copies a chunk out once it is done.
 *
 * How the device reaches a stream buffer depends on the device:
 * - a discrete GPU (copied streaming): the chunk's command buffer copies the stream
 *   buffer into a device buffer (vkCmdCopyBuffer: the copy engine, at the bus's full
 *   rate), the kernel runs on device memory, outputs are copied back the same way. The
 *   kernel reading host memory itself over the bus reached only 28-42 GB/s on the H100
 *   against 44-46 GB/s for vkds_upload (bench/RESULTS.md, "Algorithms");
 * - any other device (integrated, CPU: lavapipe) shares the memory: the kernel reads and
 *   writes the stream buffers in place (direct streaming), no copy.
 * VKDS_STREAM_MEMORY overrides it, to compare them: "copy", "readback" (direct, in
 * host-cached memory) or "mapped" (direct, in mapped memory: device-local with ReBAR).
 *
 * Memory: per host sequence two stream buffers of half the staging ring
 * (staging_chunks * staging_chunk_bytes / 2, 16 MiB by default) or of the data's size
 * when smaller (a power of two from 1024 elements), host-visible, kept for reuse within
 * the context's budget for spares (kernels.c); copied streaming adds two device buffers
 * of that size per host sequence; beyond that, nothing of the data's size, and a
 * reduction's 32 KiB of results.
 *
 * A reduction folds each chunk as a whole call would (vkds/algorithm.h gives the order)
 * into a chunk total; the last chunk's command buffer then folds the totals as step 3
 * of that order folds group results (thread t takes totals t, t + 256, ..., then the
 * pairwise step 2). So the result depends on the chunk size too, which
 * is fixed per context: the same call still gives the same bits. */
#include "algorithm_internal.h"

#include <stdlib.h>
#include <string.h>

enum { MAX_CHUNKS = 1000 }; /* chunk totals that fit beside the partials in the scratch */

/* Where streamed leaves live, and whether chunks are copied to device memory (see the
 * top of this file). */
static vkds_memory_kind stream_memory(const vkds__device *dev, bool *copy) {
  const char *v = vkds__getenv("VKDS_STREAM_MEMORY");
  /* a value it does not know is the default (it turned copying off on discrete GPUs) */
  if (v && strcmp(v, "copy") != 0 && strcmp(v, "readback") != 0 && strcmp(v, "mapped") != 0) v = NULL;
  *copy = v ? strcmp(v, "copy") == 0 : dev->facts.props.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU;
  return v && strcmp(v, "mapped") == 0 ? VKDS_MEMORY_MAPPED : VKDS_MEMORY_READBACK;
}

bool vkds__stream_plan(vkds__call *c) {
  if (!c->gen.streamable || c->a.count == 0) return false;
  vkds__device *dev = c->res->dev;
  uint64_t host_bytes = 0;
  uint32_t widest = 1;
  for (uint32_t k = 0; k < c->gen.leaf_count; ++k) {
    vkds__leaf *l = &c->gen.leaves[k];
    const vkds_seq *s = l->seq;
    uint64_t bytes = s->count * s->elem_size;
    vkds_buffer *imported;
    uint64_t at;
    l->streamed = s->ops == &vkds_seq_host_ops && bytes && !vkds__seq_host_import(dev, s, &imported, &at);
    if (l->streamed) host_bytes += bytes;
    if (s->elem_size > widest) widest = s->elem_size;
  }
  if (!host_bytes) return false;
  const vkds_context *ctx = dev->ctx;
  uint64_t half_ring = (uint64_t)ctx->staging_chunks * ctx->staging_chunk_bytes / 2;
  uint64_t elems = half_ring / widest / 1024 * 1024;
  if (elems < 1024) elems = 1024;
  /* no larger than the data (in powers of two, so that the buffers are found again):
   * 4 KB of host data kept two 16 MiB buffers a leaf (a new-user probe: a zip of 16
   * small host arrays held 512 MiB until the context went) */
  uint64_t fit = 1024;
  while (fit < c->a.count && fit < elems) fit *= 2;
  if (fit < elems) elems = fit;
  if (c->a.template_kind == VKDS__TEMPLATE_REDUCE && (c->a.count + elems - 1) / elems > MAX_CHUNKS)
    elems = ((c->a.count + MAX_CHUNKS - 1) / MAX_CHUNKS + 1023) / 1024 * 1024;
  c->chunk_elems = elems;
  c->stream_bytes = elems * widest;
  c->chunks = (c->a.count + elems - 1) / elems;
  return true;
}

static uint64_t chunk_first(const vkds__call *c, uint64_t chunk) { return chunk * c->chunk_elems; }
static uint64_t chunk_count(const vkds__call *c, uint64_t chunk) {
  uint64_t first = chunk_first(c, chunk);
  return c->a.count - first < c->chunk_elems ? c->a.count - first : c->chunk_elems;
}

/* The host's part of chunk `chunk` into the stream buffers of its slot. */
static void copy_in(vkds__call *c, uint64_t chunk) {
  uint32_t slot = chunk % VKDS__STREAM_SLOTS;
  uint64_t first = chunk_first(c, chunk), n = chunk_count(c, chunk);
  for (uint32_t k = 0; k < c->gen.leaf_count; ++k) {
    const vkds__leaf *l = &c->gen.leaves[k];
    if (!l->streamed || l->access == VKDS_ACCESS_WRITE) continue;
    vkds_buffer *b = c->stage[k][slot];
    uint32_t size = l->seq->elem_size;
    vkds__host_copy(c->res->dev->ctx, vkds_buffer_map(b), (const char *)l->seq->host + first * size, n * size);
    vkds__buffer_flush(b, 0, n * size);
  }
}

/* The device's output of a finished chunk to the host. */
static void copy_out(vkds__call *c, uint64_t chunk) {
  uint32_t slot = chunk % VKDS__STREAM_SLOTS;
  uint64_t first = chunk_first(c, chunk), n = chunk_count(c, chunk);
  for (uint32_t k = 0; k < c->gen.leaf_count; ++k) {
    const vkds__leaf *l = &c->gen.leaves[k];
    if (!l->streamed || l->access == VKDS_ACCESS_READ) continue;
    vkds_buffer *b = c->stage[k][slot];
    uint32_t size = l->seq->elem_size;
    vkds__buffer_invalidate_range(b, 0, n * size);
    vkds__host_copy(c->res->dev->ctx, (char *)l->seq->host + first * size, vkds_buffer_map(b), n * size);
  }
}

/* The launch arguments of a chunk: its count and first index, its leaves placed at the
 * chunk (stream buffers, or device memory moved to the chunk), counting starts moved too. */
static void chunk_params(vkds__call *c, const uint64_t *base, uint64_t chunk) {
  uint64_t *p = c->gen.args.p;
  uint64_t first = chunk_first(c, chunk), n = chunk_count(c, chunk);
  memcpy(p, base, sizeof c->gen.args.p);
  p[VKDS__P_COUNT] = n;
  p[VKDS__P_INDEX_BASE] = first;
  for (uint32_t i = 0; i < c->gen.param_count; ++i)
    if (c->gen.param_role[i] == VKDS__ROLE_COUNTING) p[i] = base[i] + first;
  for (uint32_t k = 0; k < c->gen.leaf_count; ++k) {
    const vkds__leaf *l = &c->gen.leaves[k];
    uint32_t slot = chunk % VKDS__STREAM_SLOTS;
    const vkds_view *v = &c->bind[k].view;
    if (l->streamed) vkds__call_place(c, k, c->stream_copy ? c->device_stage[k][slot] : c->stage[k][slot], 0, n);
    else vkds__call_place(c, k, v->buffer, v->offset + first * l->seq->elem_size, n);
  }
}

typedef struct chunk_task {
  vkds__call *c;
  uint64_t chunk;
  vkds__part part;
} chunk_task;

/* Copied streaming: records the copies of a chunk's streamed leaves between the stream
 * buffers and the device buffers, those the kernel reads (`in`) or writes. */
static void record_copies(const vkds__call *c, VkCommandBuffer cmd, uint64_t chunk, bool in) {
  const vkds__device *dev = c->res->dev;
  uint32_t slot = chunk % VKDS__STREAM_SLOTS;
  uint64_t n = chunk_count(c, chunk);
  for (uint32_t k = 0; k < c->gen.leaf_count; ++k) {
    const vkds__leaf *l = &c->gen.leaves[k];
    if (!l->streamed || l->access == (in ? VKDS_ACCESS_WRITE : VKDS_ACCESS_READ)) continue;
    const vkds_buffer *host = c->stage[k][slot], *device = c->device_stage[k][slot];
    const vkds_buffer *from = in ? host : device, *to = in ? device : host;
    VkBufferCopy region = {.srcOffset = vkds_buffer_offset(from), .dstOffset = vkds_buffer_offset(to),
                           .size = n * l->seq->elem_size};
    dev->vk.vkCmdCopyBuffer(cmd, vkds_buffer_vk(from), vkds_buffer_vk(to), 1, &region);
  }
}

static vkds_result record_chunk(void *user, const vkds_task *task, void **wait_object) {
  (void)wait_object;
  chunk_task *t = user;
  vkds__call *c = t->c;
  VkDeviceAddress base = c->scratch ? vkds_buffer_address(c->scratch) : 0;
  /* the copies in are ordered before the kernel by vkds__call_record's first barrier
   * (transfer writes -> shader reads), the copies out after it by its last one (shader
   * writes -> transfer reads) */
  if (c->stream_copy) record_copies(c, task->cmd, t->chunk, true);
  VKDS_CHECK(vkds__call_record(c, task->cmd, base, base + VKDS__ALG_RESULT_BYTES, t->part, t->chunk));
  if (c->stream_copy) {
    record_copies(c, task->cmd, t->chunk, false);
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
    c->res->dev->vk.vkCmdPipelineBarrier(task->cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
                                         &mb, 0, NULL, 0, NULL);
  }
  return VKDS_SUCCESS;
}

vkds_result vkds__stream_run(vkds_policy *p, vkds__call *c, vkds_selection *sel, const vkds_task_info *task, vkds_submission **last) {
  *last = NULL;
  vkds_memory_kind kind = stream_memory(c->res->dev, &c->stream_copy);
  for (uint32_t k = 0; k < c->gen.leaf_count; ++k)
    for (uint32_t s = 0; s < VKDS__STREAM_SLOTS && c->gen.leaves[k].streamed; ++s) {
      VKDS_CHECK(vkds__spare_get(c->res, kind, c->stream_bytes, &c->stage[k][s]));
      if (c->stream_copy)
        VKDS_CHECK(vkds__spare_get(c->res, VKDS_MEMORY_DEVICE, c->stream_bytes, &c->device_stage[k][s]));
    }
  uint64_t base[VKDS__GEN_MAX_PARAMS];
  memcpy(base, c->gen.args.p, sizeof base);
  /* the chunks before the last run on a selection of the same resource; the policy's
   * own selection takes the last, so it counts the call as one task */
  vkds_selection *chunks_sel = NULL;
  if (c->chunks > 1)
    VKDS_CHECK(vkds_selection_create(vkds_selection_backend(sel), vkds_selection_index(sel), 0, NULL, &chunks_sel));
  vkds_submission *inflight[VKDS__STREAM_SLOTS] = {NULL};
  vkds_result r = VKDS_SUCCESS;
  uint64_t chunk = 0;
  for (; chunk < c->chunks && r == VKDS_SUCCESS; ++chunk) {
    uint32_t slot = chunk % VKDS__STREAM_SLOTS;
    if (inflight[slot]) { /* the chunk that used this slot must be done, and its output out */
      r = vkds_submission_wait(inflight[slot]);
      vkds_submission_release(inflight[slot]);
      inflight[slot] = NULL;
      if (r != VKDS_SUCCESS) break;
      copy_out(c, chunk - VKDS__STREAM_SLOTS);
    }
    /* the chunk's launch arguments (where they outgrow the push constants) go to its
     * slot's lane, which the chunk before in that slot no longer reads (waited above) */
    c->args_lane = slot;
    c->args[slot].at = 0, c->args[slot].used = 0;
    copy_in(c, chunk);
    chunk_params(c, base, chunk);
    bool final = chunk + 1 == c->chunks;
    chunk_task t = {.c = c, .chunk = chunk, .part = final ? VKDS__PART_LAST_CHUNK : VKDS__PART_CHUNK};
    vkds_task_info ti = *task;
    ti.fn = record_chunk;
    ti.user = &t;
    if (final) r = vkds__submit_waiting(p, sel, &ti, last, c->a.name);
    else r = vkds__submit_waiting(p, chunks_sel, &ti, &inflight[slot], c->a.name);
  }
  /* chunks still in flight finish before the last (one queue): their handles can go,
   * and their outputs are copied out with the last chunk's (vkds__stream_finish) */
  for (uint32_t s = 0; s < VKDS__STREAM_SLOTS; ++s) {
    if (inflight[s] && r != VKDS_SUCCESS) vkds_submission_wait(inflight[s]);
    vkds_submission_release(inflight[s]);
  }
  vkds_selection_release(chunks_sel);
  c->pending = c->chunks < VKDS__STREAM_SLOTS ? c->chunks : VKDS__STREAM_SLOTS;
  c->pending_first = c->chunks - c->pending;
  return r;
}

vkds_result vkds__stream_finish(vkds__call *c, bool done) {
  if (done)
    for (uint64_t i = 0; i < c->pending; ++i) copy_out(c, c->pending_first + i);
  c->pending = 0;
  return VKDS_SUCCESS;
}

void vkds__stream_free(vkds__call *c) {
  if (!c->streaming) return; /* (only vkds__stream_run takes stage buffers) */
  for (uint32_t k = 0; k < VKDS__GEN_MAX_LEAVES; ++k)
    for (uint32_t s = 0; s < VKDS__STREAM_SLOTS; ++s) {
      vkds__spare_put(c->stage[k][s], VKDS__SPARES_CALL);
      vkds__spare_put(c->device_stage[k][s], VKDS__SPARES_CALL);
      c->stage[k][s] = c->device_stage[k][s] = NULL;
    }
}
