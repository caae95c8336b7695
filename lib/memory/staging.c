/* lib/memory/staging.c: vkds_upload and vkds_download.
 *
 * Plain staging (copy everything into one host-visible buffer, then one GPU copy)
 * runs the host copy and the GPU copy one after the other, and the host copy on one
 * thread: 9.4 GB/s on the H100 against 51 GB/s for the GPU copy alone. Here the data
 * moves in chunks through a ring of host-visible buffers: while the GPU copies chunk i
 * out of (or into) its ring slot, the host threads fill (or drain) slot i+1, so the two
 * copies overlap and the host side runs on several threads.
 *
 * The ring belongs to the device and is used by one transfer at a time (its lock);
 * each ring slot remembers the queue and timeline value of its last GPU copy, so a
 * slot is reused only after that copy is done, whichever queue ran it. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#define SPIN_NS 20000 /* a chunk copy takes 100+ us: spin a little, then sleep */

typedef struct ring_slot {
  vkds_buffer buf;
  vkds_resource *queue; /* of the last copy through it, NULL when none */
  uint64_t value;
} ring_slot;

typedef struct vkds__staging {
  uint32_t count;
  uint64_t chunk;
  ring_slot *slots;
} vkds__staging;

void vkds__staging_destroy(vkds__device *dev) {
  vkds__staging *st = dev->staging;
  if (!st) return;
  for (uint32_t i = 0; i < st->count; ++i)
    if (st->slots[i].buf.vk) vkds__allocator_free(dev, &st->slots[i].buf);
  free(st->slots);
  free(st);
  dev->staging = NULL;
}

/* With staging_lock held: makes the ring on first use. */
static vkds_result staging_get(vkds__device *dev, vkds__staging **out) {
  if (dev->staging) {
    *out = dev->staging;
    return VKDS_SUCCESS;
  }
  const vkds_context *ctx = dev->ctx;
  vkds__staging *st = calloc(1, sizeof *st);
  if (st) st->slots = calloc(ctx->staging_chunks, sizeof *st->slots);
  if (!st || !st->slots) {
    free(st);
    return vkds__fail(ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "staging ring");
  }
  st->count = ctx->staging_chunks;
  st->chunk = ctx->staging_chunk_bytes;
  dev->staging = st;
  for (uint32_t i = 0; i < st->count; ++i) {
    /* readback memory: host-visible, host-cached where possible (downloads read it at
     * CPU speed), outside device-local memory where possible */
    st->slots[i].buf = (vkds_buffer){.dev = dev, .kind = VKDS_MEMORY_READBACK, .size = st->chunk};
    vkds_result r = vkds__allocator_alloc(dev, &st->slots[i].buf, VKDS_BUFFER_DEDICATED);
    if (r != VKDS_SUCCESS) {
      st->slots[i].buf = (vkds_buffer){0};
      vkds__staging_destroy(dev);
      return r;
    }
  }
  *out = st;
  return VKDS_SUCCESS;
}

/* Waits until the ring slot's last GPU copy is done. */
static vkds_result slot_wait(ring_slot *s) {
  if (!s->queue) return VKDS_SUCCESS;
  VKDS_CHECK(vkds__queue_wait(s->queue, s->value, UINT64_MAX, SPIN_NS));
  s->queue = NULL;
  return VKDS_SUCCESS;
}

/* Records and submits one GPU copy on `r`; sets *value to its timeline value. A
 * download's copy ends with a barrier that makes its writes visible to the host. */
static vkds_result submit_copy(vkds_resource *r, const vkds_buffer *src, uint64_t src_off, const vkds_buffer *dst,
                               uint64_t dst_off, uint64_t bytes, bool to_host, uint64_t *value) {
  vkds__device *dev = r->dev;
  vkds__slot *s;
  VKDS_CHECK(vkds__queue_acquire_slot(r, &s));
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                 .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
  VkResult vr = dev->vk.vkBeginCommandBuffer(s->cmd, &bi);
  if (vr == VK_SUCCESS) {
    VkBufferCopy region = {.srcOffset = src->offset + src_off, .dstOffset = dst->offset + dst_off, .size = bytes};
    dev->vk.vkCmdCopyBuffer(s->cmd, src->vk, dst->vk, 1, &region);
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                          .dstAccessMask = to_host ? VK_ACCESS_HOST_READ_BIT
                                                   : VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT};
    dev->vk.vkCmdPipelineBarrier(s->cmd, VK_PIPELINE_STAGE_TRANSFER_BIT,
                                 to_host ? VK_PIPELINE_STAGE_HOST_BIT : VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &mb, 0,
                                 NULL, 0, NULL);
    vr = dev->vk.vkEndCommandBuffer(s->cmd);
  }
  if (vr != VK_SUCCESS) {
    vkds__queue_release_slot(r, s);
    return vkds__vk_fail(dev->ctx, vr, "recording a staging copy");
  }
  vkds_result res = vkds__queue_submit(r, s, value);
  if (res != VKDS_SUCCESS) vkds__queue_release_slot(r, s);
  return res;
}

/* Checks the arguments common to both directions and resolves the view's range. */
static vkds_result check_transfer(const char *fn, vkds_resource *res, const vkds_view *v, const void *host,
                                  uint64_t bytes) {
  if (!res) return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: NULL resource", fn);
  const vkds_context *ctx = res->dev->ctx;
  if (!v->buffer) return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: the view's buffer is NULL", fn);
  if (bytes && !host) return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: NULL host pointer", fn);
  if (v->buffer->kind != VKDS_MEMORY_HOST && v->buffer->dev != res->dev)
    return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "%s: the buffer lives on device %u, the resource on device %u", fn, v->buffer->dev->index,
                      res->dev->index);
  uint64_t size = v->buffer->size, room = v->offset <= size ? size - v->offset : 0;
  if (v->offset > size || bytes > room || (v->bytes && bytes > v->bytes))
    return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "%s: %llu bytes at offset %llu do not fit the view (%llu bytes) of a %llu-byte buffer", fn,
                      (unsigned long long)bytes, (unsigned long long)v->offset, (unsigned long long)v->bytes,
                      (unsigned long long)size);
  return VKDS_SUCCESS;
}

/* Whether the host copies to or from the buffer's memory itself instead of going
 * through a GPU copy. Host-visible memory that the host does not cache (the
 * write-combined ReBAR window of a discrete GPU) reads at under 0.5 GB/s over PCIe and
 * takes large writes at 33 GB/s where the staged path moves 45 (H200, bench/RESULTS.md):
 * downloads from it, and large uploads to it, take the GPU copy. */
static bool host_copies(const vkds_buffer *b, bool download, uint64_t bytes) {
  if (!b->mapped) return false;
  const VkMemoryPropertyFlags uncached_vram = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  if (!b->vk || (b->flags & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) || !(b->flags & uncached_vram)) return true;
  return !download && bytes < (16ull << 20);
}

/* One GPU copy between a device buffer and imported host memory, waited for. */
static vkds_result copy_and_wait(vkds_resource *res, const vkds_buffer *src, uint64_t src_off, const vkds_buffer *dst,
                                 uint64_t dst_off, uint64_t bytes, bool to_host) {
  uint64_t value;
  VKDS_CHECK(submit_copy(res, src, src_off, dst, dst_off, bytes, to_host, &value));
  VKDS_CHECK(vkds__queue_wait(res, value, UINT64_MAX, SPIN_NS));
  return vkds__queue_reclaim(res);
}

/* Bytes in chunk c of a `bytes`-long transfer (the last one may be short). */
static uint64_t chunk_length(const vkds__staging *st, uint64_t bytes, uint64_t c) {
  uint64_t off = c * st->chunk;
  return bytes - off < st->chunk ? bytes - off : st->chunk;
}

static vkds_result upload_staged(vkds_resource *res, vkds__staging *st, const vkds_view *dst, const char *src,
                                 uint64_t bytes) {
  vkds_context *ctx = res->dev->ctx;
  uint64_t chunks = (bytes + st->chunk - 1) / st->chunk;
  for (uint64_t c = 0; c < chunks; ++c) {
    ring_slot *s = &st->slots[c % st->count];
    uint64_t off = c * st->chunk, n = chunk_length(st, bytes, c);
    VKDS_CHECK(slot_wait(s));
    vkds__host_copy(ctx, s->buf.mapped, src + off, n);
    vkds__buffer_flush(&s->buf, 0, n);
    VKDS_CHECK(submit_copy(res, &s->buf, 0, dst->buffer, dst->offset + off, n, false, &s->value));
    s->queue = res;
  }
  for (uint32_t k = 0; k < st->count; ++k) VKDS_CHECK(slot_wait(&st->slots[k]));
  return vkds__queue_reclaim(res);
}

static vkds_result download_staged(vkds_resource *res, vkds__staging *st, char *dst, const vkds_view *src,
                                   uint64_t bytes) {
  vkds_context *ctx = res->dev->ctx;
  uint64_t chunks = (bytes + st->chunk - 1) / st->chunk;
  /* keep every ring slot busy: chunk c + count is asked for as soon as chunk c is out */
  for (uint64_t c = 0; c < chunks && c < st->count; ++c) {
    ring_slot *s = &st->slots[c];
    VKDS_CHECK(slot_wait(s));
    VKDS_CHECK(submit_copy(res, src->buffer, src->offset + c * st->chunk, &s->buf, 0, chunk_length(st, bytes, c), true,
                           &s->value));
    s->queue = res;
  }
  for (uint64_t c = 0; c < chunks; ++c) {
    ring_slot *s = &st->slots[c % st->count];
    uint64_t off = c * st->chunk, n = chunk_length(st, bytes, c);
    VKDS_CHECK(slot_wait(s));
    vkds__buffer_invalidate_range(&s->buf, 0, n);
    vkds__host_copy(ctx, dst + off, s->buf.mapped, n);
    uint64_t next = c + st->count;
    if (next < chunks) {
      VKDS_CHECK(submit_copy(res, src->buffer, src->offset + next * st->chunk, &s->buf, 0, chunk_length(st, bytes, next),
                             true, &s->value));
      s->queue = res;
    }
  }
  return vkds__queue_reclaim(res);
}

vkds_result vkds_upload(vkds_resource *res, vkds_view dst, const void *src, uint64_t bytes) {
  VKDS_CHECK(check_transfer("vkds_upload", res, &dst, src, bytes));
  if (bytes == 0) return VKDS_SUCCESS;
  vkds__device *dev = res->dev;
  vkds_buffer *b = dst.buffer;
  if (host_copies(b, false, bytes)) {
    vkds__host_copy(dev->ctx, (char *)b->mapped + dst.offset, src, bytes);
    vkds__buffer_flush(b, dst.offset, bytes);
    return VKDS_SUCCESS;
  }
  vkds_buffer *imported;
  uint64_t at;
  if (vkds__import_find(dev, src, bytes, &imported, &at)) /* the GPU reads the host memory itself */
    return copy_and_wait(res, imported, at, b, dst.offset, bytes, false);
  pthread_mutex_lock(&dev->staging_lock);
  vkds__staging *st;
  vkds_result r = staging_get(dev, &st);
  if (r == VKDS_SUCCESS) r = upload_staged(res, st, &dst, src, bytes);
  pthread_mutex_unlock(&dev->staging_lock);
  return r;
}

vkds_result vkds_download(vkds_resource *res, void *dst, vkds_view src, uint64_t bytes) {
  VKDS_CHECK(check_transfer("vkds_download", res, &src, dst, bytes));
  if (bytes == 0) return VKDS_SUCCESS;
  vkds__device *dev = res->dev;
  vkds_buffer *b = src.buffer;
  if (host_copies(b, true, bytes)) {
    vkds__buffer_invalidate_range(b, src.offset, bytes);
    vkds__host_copy(dev->ctx, dst, (const char *)b->mapped + src.offset, bytes);
    return VKDS_SUCCESS;
  }
  vkds_buffer *imported;
  uint64_t at;
  if (vkds__import_find(dev, dst, bytes, &imported, &at))
    return copy_and_wait(res, b, src.offset, imported, at, bytes, true);
  pthread_mutex_lock(&dev->staging_lock);
  vkds__staging *st;
  vkds_result r = staging_get(dev, &st);
  if (r == VKDS_SUCCESS) r = download_staged(res, st, dst, &src, bytes);
  pthread_mutex_unlock(&dev->staging_lock);
  return r;
}
