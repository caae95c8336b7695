/* lib/memory/staging.c: vkds_upload and vkds_download.
 *
 * Plain staging (copy everything into one host-visible buffer, then one GPU copy)
 * runs the host copy and the GPU copy one after the other, and the host copy on one
 * thread: 9.4 GB/s on the H100 against 51 GB/s for the GPU copy alone. Here the data
 * moves in 1 MiB blocks through a ring of host-visible buffers, as a pipeline: the
 * host copy threads (host_copy.h, a stream) fill (or drain) ring blocks one after the
 * other without stopping in between, and the calling thread sends groups of filled
 * blocks to the GPU as soon as they are filled (downloads: hands blocks to the copy
 * threads as soon as their GPU copy is done), helping with the host copies when it has
 * nothing else to do. bench/RESULTS.md ("Memory") has the measurements behind the
 * choices below.
 *
 * The ring belongs to the device and is used by one transfer at a time (its lock);
 * every transfer waits for its last GPU copy before it returns, so each one finds the
 * whole ring free. */
#include "host_copy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPIN_NS 20000 /* a chunk copy takes 100+ us: spin a little, then sleep */

typedef struct ring_slot {
  vkds_buffer buf;
} ring_slot;

typedef struct vkds__staging {
  uint32_t count;
  uint64_t chunk;
  ring_slot *slots;
  vkds__copy_stream stream;
  /* the timeline value of the last GPU copy through each ring block in the current
   * transfer, 0: none */
  uint64_t region_value[VKDS__STREAM_BLOCKS];
} vkds__staging;

void vkds__staging_destroy(vkds__device *dev) {
  vkds__staging *st = dev->staging;
  if (!st) return;
  for (uint32_t i = 0; i < st->count; ++i)
    if (st->slots[i].buf.vk) vkds__allocator_free(dev, &st->slots[i].buf);
  vkds__free(dev->ctx, st->slots);
  vkds__free(dev->ctx, st);
  dev->staging = NULL;
}

/* With staging_lock held: makes the ring on first use. */
static vkds_result staging_get(vkds__device *dev, vkds__staging **out) {
  if (dev->staging) {
    *out = dev->staging;
    return VKDS_SUCCESS;
  }
  const vkds_context *ctx = dev->ctx;
  vkds__staging *st = vkds__alloc(ctx, sizeof *st);
  if (st) st->slots = vkds__alloc_array(ctx, ctx->staging_chunks, sizeof *st->slots);
  if (!st || !st->slots) {
    vkds__free(ctx, st);
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
      /* named: "a buffer of vkds's own" left a user under a small device_memory_limit
       * guessing which (a configuration probe: a 16 MiB cap, the default 32 MiB ring) */
      char who[256]; /* (96 cut the fields' names after a longer caller's: "vkds_sort_by_key: ... staging_chunk_byt") */
      snprintf(who, sizeof who, "%s: the staging ring (%u chunks of %llu bytes: staging_chunks, staging_chunk_bytes)",
               vkds__caller("vkds_upload"), ctx->staging_chunks, (unsigned long long)ctx->staging_chunk_bytes);
      return vkds__fail_as(ctx, who, r);
    }
  }
  *out = st;
  return VKDS_SUCCESS;
}

/* Starts recording GPU copies on `r`. */
static vkds_result copies_begin(vkds_resource *r, vkds__slot **out) {
  vkds__slot *s = NULL;
  VKDS_CHECK(vkds__queue_acquire_slot(r, NULL, true, &s));
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                 .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
  VkResult vr = r->dev->vk.vkBeginCommandBuffer(s->cmd, &bi);
  if (vr != VK_SUCCESS) {
    vkds__queue_release_slot(r, s);
    return vkds__vk_fail(r->dev->ctx, vr, "recording a staging copy");
  }
  *out = s;
  return VKDS_SUCCESS;
}

/* Ends the copies, with a barrier that makes their writes (and those of the queue's
 * earlier copies: a barrier orders everything before it in submission order) visible to
 * the host (a download) or to later device work (an upload) where `barrier` says, and
 * submits them; sets *value to their timeline value. An upload's groups before its last
 * need none: the ring's places are reused once the host sees their copies done, which
 * orders nothing in memory, and the last group's barrier covers them all. (A barrier
 * cost ~2.5 us of GPU time a submission between back-to-back copies on an H200,
 * bench/experiments/copy_submits.c; the upload's ~10 groups then save ~25 us of a 1.4
 * ms 64 MiB transfer, below what --bandwidth can tell apart.) */
static vkds_result copies_submit(vkds_resource *r, vkds__slot *s, bool to_host, bool barrier, uint64_t *value) {
  vkds__device *dev = r->dev;
  if (barrier) {
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                          .dstAccessMask = to_host ? VK_ACCESS_HOST_READ_BIT
                                                   : VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT};
    dev->vk.vkCmdPipelineBarrier(s->cmd, VK_PIPELINE_STAGE_TRANSFER_BIT,
                                 to_host ? VK_PIPELINE_STAGE_HOST_BIT : VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &mb,
                                 0, NULL, 0, NULL);
  }
  VkResult vr = dev->vk.vkEndCommandBuffer(s->cmd);
  vkds__queue_recorded(s);
  if (vr != VK_SUCCESS) {
    vkds__queue_release_slot(r, s);
    return vkds__vk_fail(dev->ctx, vr, "recording a staging copy");
  }
  vkds_result res = vkds__queue_submit(r, s, false, value); /* (waited for soon: never deferred) */
  if (res != VKDS_SUCCESS) vkds__queue_release_slot(r, s);
  return res;
}

/* Records and submits one GPU copy on `r`; sets *value to its timeline value. */
static vkds_result submit_copy(vkds_resource *r, const vkds_buffer *src, uint64_t src_off, const vkds_buffer *dst,
                               uint64_t dst_off, uint64_t bytes, bool to_host, uint64_t *value) {
  vkds__slot *s = NULL;
  VKDS_CHECK(copies_begin(r, &s));
  VkBufferCopy region = {.srcOffset = src->offset + src_off, .dstOffset = dst->offset + dst_off, .size = bytes};
  r->dev->vk.vkCmdCopyBuffer(s->cmd, src->vk, dst->vk, 1, &region);
  return copies_submit(r, s, to_host, true, value);
}

/* Checks the arguments common to both directions and resolves the view's range. */
static vkds_result check_transfer(const char *fn, vkds_resource *res, const vkds_view *v, const void *host,
                                  uint64_t bytes) {
  if (!res) return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: NULL resource", fn);
  const vkds_context *ctx = res->dev->ctx;
  if (!v->buffer) return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: the view's buffer is NULL", fn);
  if (bytes && !host) return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: NULL host pointer", fn);
  if (v->buffer->dev->ctx != ctx)
    return vkds__fail(ctx, VKDS_ERROR_WRONG_CONTEXT, VK_SUCCESS, "%s: the buffer belongs to another context than the resource",
                      fn);
  if (v->buffer->kind != VKDS_MEMORY_HOST && v->buffer->dev != res->dev) /* (as launches and the recording form say) */
    return vkds__fail(ctx, VKDS_ERROR_WRONG_DEVICE, VK_SUCCESS,
                      "%s: the buffer lives on device %u, the resource on device %u", fn, v->buffer->dev->index,
                      res->dev->index);
  uint64_t size = v->buffer->size, room = v->offset <= size ? size - v->offset : 0;
  /* a view that runs past its buffer is refused whatever part of it is copied, as
   * vkds_launch and the sequences refuse it */
  if (v->offset > size || v->bytes > room || bytes > room || (v->bytes && bytes > v->bytes))
    return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "%s: %llu bytes at offset %llu do not fit the view (%llu bytes%s) of a %llu-byte buffer", fn,
                      (unsigned long long)bytes, (unsigned long long)v->offset,
                      (unsigned long long)(v->bytes ? v->bytes : room), v->bytes ? "" : ": to the end of the buffer",
                      (unsigned long long)size);
  /* host memory that is the buffer's own (its mapping, or the memory it imports) over the
   * copied range: the copy is a memcpy on several threads or a GPU copy, neither of which
   * takes overlapping ranges (ASan: memcpy-param-overlap; a memory probe) */
  uintptr_t mine = v->buffer->mapped ? (uintptr_t)v->buffer->mapped + v->offset : 0, theirs = (uintptr_t)host;
  if (mine && bytes && theirs < mine + bytes && mine < theirs + bytes)
    return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "%s: the host range overlaps the buffer's own memory at the copied range", fn);
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

/* ---- the pipeline ----
 *
 * What sets the speed (H100, bench/RESULTS.md "Memory"):
 * - The host side. The copy threads move 33 GB/s on 8 threads and 45-48 on 12-16
 *   (memcpy, 256 MiB, that host), against 50 GB/s for the GPU copy: the pipeline is
 *   only as fast as the copy threads are while the GPU reads or writes host memory
 *   beside them, hence up to 16 threads (host_copy.c), and a stream that the threads
 *   work through without stopping between blocks.
 * - Downloads write the user's memory with non-temporal stores (no read of each line
 *   before it is written): at 1 GiB 43 -> 47 GB/s on 8 threads, 48 either way on 16.
 *   Uploads do not: they write the ring, which stays in the host's cache for the GPU
 *   to read; streaming it out to memory made them slower (34-43 against 41-47 GB/s).
 * - Every GPU submission costs about 14 us of GPU time of its own (one retired every
 *   ~14 us, bench/RESULTS.md "Submissions"): 1 MiB copies, 21 us each at 50 GB/s, moved
 *   31 GB/s one per submission, 2 MiB 37, 4 MiB 43, 8 MiB 47. So the GPU copies go in
 *   groups of blocks, one submission each: half the ring in the middle of a transfer,
 *   and at both ends groups that start at one block and double (halve), so that the
 *   first group's host copy (uploads) and the last one's (downloads), which nothing
 *   overlaps, stay short. Alternating the groups between two queues of the family was
 *   much slower (25-34 GB/s). */
#define BLOCK (1ull << 20)
#define PIECE (256ull << 10) /* what one copy thread takes at a time */

/* How a transfer uses the ring: `per_slot` blocks of `block` bytes in each chunk,
 * `regions` blocks in all; GPU copies in groups of at most max_group blocks. */
typedef struct ring_layout {
  uint64_t block;
  uint32_t per_slot, regions, max_group;
} ring_layout;

static ring_layout layout_for(const vkds__staging *st) {
  ring_layout l;
  uint64_t per = BLOCK >= st->chunk ? 1 : st->chunk / BLOCK;
  uint64_t most = VKDS__STREAM_BLOCKS / st->count; /* a large ring: larger blocks, every chunk used */
  if (per > most) per = most ? most : 1;
  l.per_slot = (uint32_t)per;
  l.block = st->chunk / l.per_slot;
  if (l.block >= 4096) l.block &= ~4095ull; /* whole pages: the copies start on line boundaries */
  uint64_t regions = (uint64_t)st->count * l.per_slot;
  l.regions = regions > VKDS__STREAM_BLOCKS ? VKDS__STREAM_BLOCKS : (uint32_t)regions;
  l.max_group = l.regions / 2 ? l.regions / 2 : 1; /* the GPU copies one half while the host fills the other */
  return l;
}

/* Blocks in GPU copy group `j` when `left` blocks remain: 1, 2, 4, ... up to the
 * largest group, and half of what is left towards the end. */
static uint64_t group_blocks(const ring_layout *l, uint64_t j, uint64_t left) {
  uint64_t n = j >= 32 ? l->max_group : 1ull << j;
  if (n > l->max_group) n = l->max_group;
  if (n > (left + 1) / 2) n = (left + 1) / 2;
  if (n < 1) n = 1;
  return n < left ? n : left;
}

static ring_slot *region_slot(vkds__staging *st, const ring_layout *l, uint64_t k, uint64_t *off) {
  uint32_t g = (uint32_t)(k % l->regions);
  *off = (uint64_t)(g % l->per_slot) * l->block;
  return &st->slots[g / l->per_slot];
}

static uint64_t block_length(const ring_layout *l, uint64_t bytes, uint64_t k) {
  uint64_t off = k * l->block;
  return bytes - off < l->block ? bytes - off : l->block;
}

/* Whether the last GPU copy through block k's place in the ring is done. */
static vkds_result region_free(vkds_resource *res, vkds__staging *st, const ring_layout *l, uint64_t k, bool *free) {
  uint64_t *v = &st->region_value[k % l->regions];
  *free = true;
  if (!*v) return VKDS_SUCCESS;
  vkds_result r = vkds__queue_poll(res, *v);
  if (r == VKDS_ERROR_WOULD_BLOCK) {
    *free = false;
    return VKDS_SUCCESS;
  }
  if (r == VKDS_SUCCESS) *v = 0;
  return r;
}

/* Records and submits the GPU copies of blocks [first, end) in one submission; blocks
 * that lie one after the other in a chunk go in one copy. An upload's group ends with
 * the barrier only when it is the transfer's last (copies_submit). */
static vkds_result submit_group(vkds_resource *res, vkds__staging *st, const ring_layout *l, const vkds_buffer *device,
                                uint64_t device_off, uint64_t bytes, uint64_t first, uint64_t end, bool download,
                                uint64_t *last) {
  vkds__slot *s = NULL;
  VKDS_CHECK(copies_begin(res, &s));
  for (uint64_t k = first; k < end;) {
    uint64_t off, o2;
    ring_slot *rs = region_slot(st, l, k, &off);
    uint64_t n = block_length(l, bytes, k), kk = k + 1;
    for (; kk < end && region_slot(st, l, kk, &o2) == rs && o2 == off + n; ++kk) n += block_length(l, bytes, kk);
    uint64_t ring_at = rs->buf.offset + off, device_at = device->offset + device_off + k * l->block;
    if (!download) vkds__buffer_flush(&rs->buf, off, n);
    VkBufferCopy region = {.srcOffset = download ? device_at : ring_at, .dstOffset = download ? ring_at : device_at,
                           .size = n};
    res->dev->vk.vkCmdCopyBuffer(s->cmd, download ? device->vk : rs->buf.vk, download ? rs->buf.vk : device->vk, 1,
                                 &region);
    k = kk;
  }
  VKDS_CHECK(copies_submit(res, s, download, download || end * l->block >= bytes, last));
  for (uint64_t k = first; k < end; ++k) st->region_value[k % l->regions] = *last;
  return VKDS_SUCCESS;
}

/* Ends the stream and waits for the transfer's last GPU copy (also after a failure:
 * the ring must be idle before the next transfer writes it). */
static vkds_result pipeline_finish(vkds_resource *res, vkds__staging *st, vkds_result r, uint64_t last) {
  vkds__copy_stream_end(&st->stream);
  if (last) {
    vkds_result w = vkds__queue_wait(res, last, UINT64_MAX, SPIN_NS);
    if (r == VKDS_SUCCESS) r = w;
  }
  memset(st->region_value, 0, sizeof st->region_value);
  vkds_result c = vkds__queue_reclaim(res);
  return r == VKDS_SUCCESS ? c : r;
}

static vkds_result upload_staged(vkds_resource *res, vkds__staging *st, const vkds_view *dst, const char *src,
                                 uint64_t bytes) {
  ring_layout l = layout_for(st);
  uint64_t blocks = (bytes + l.block - 1) / l.block, posted = 0, submitted = 0, group = 0, last = 0, idle = 0;
  vkds__copy_stream_begin(res->dev->ctx, &st->stream, PIECE, false, bytes);
  vkds_result r = VKDS_SUCCESS;
  while (submitted < blocks && r == VKDS_SUCCESS) {
    bool progress = false;
    /* hand the copy threads every block whose place in the ring is free */
    while (posted < blocks && posted - submitted < l.regions) {
      bool free;
      if ((r = region_free(res, st, &l, posted, &free)) != VKDS_SUCCESS || !free) break;
      uint64_t off;
      ring_slot *rs = region_slot(st, &l, posted, &off);
      vkds__copy_stream_post(&st->stream, (char *)rs->buf.mapped + off, src + posted * l.block,
                             block_length(&l, bytes, posted));
      ++posted, progress = true;
    }
    /* send the next group to the GPU once its blocks are filled */
    uint64_t n = group_blocks(&l, group, blocks - submitted);
    if (r == VKDS_SUCCESS && vkds__copy_stream_done(&st->stream) >= submitted + n) {
      r = submit_group(res, st, &l, dst->buffer, dst->offset, bytes, submitted, submitted + n, false, &last);
      submitted += n, ++group, progress = true;
    }
    if (progress || vkds__copy_stream_help(&st->stream)) idle = 0;
    else vkds__spin_pause(&idle);
  }
  return pipeline_finish(res, st, r, last);
}

static vkds_result download_staged(vkds_resource *res, vkds__staging *st, char *dst, const vkds_view *src,
                                   uint64_t bytes) {
  ring_layout l = layout_for(st);
  uint64_t blocks = (bytes + l.block - 1) / l.block, submitted = 0, posted = 0, group = 0, last = 0, idle = 0;
  vkds__copy_stream_begin(res->dev->ctx, &st->stream, PIECE, true, bytes);
  vkds_result r = VKDS_SUCCESS;
  while (vkds__copy_stream_done(&st->stream) < blocks) {
    bool progress = false;
    /* the next group's GPU copy, once the host has copied out what its places in the
     * ring held */
    if (submitted < blocks) {
      uint64_t n = group_blocks(&l, group, blocks - submitted);
      if (submitted + n <= vkds__copy_stream_done(&st->stream) + l.regions) {
        if ((r = submit_group(res, st, &l, src->buffer, src->offset, bytes, submitted, submitted + n, true, &last)) !=
            VKDS_SUCCESS)
          break;
        submitted += n, ++group, progress = true;
      }
    }
    /* hand the copy threads every block the GPU has delivered */
    while (posted < submitted) {
      bool free;
      if ((r = region_free(res, st, &l, posted, &free)) != VKDS_SUCCESS || !free) break;
      uint64_t off;
      ring_slot *rs = region_slot(st, &l, posted, &off);
      uint64_t n = block_length(&l, bytes, posted);
      vkds__buffer_invalidate_range(&rs->buf, off, n);
      vkds__copy_stream_post(&st->stream, dst + posted * l.block, (const char *)rs->buf.mapped + off, n);
      ++posted, progress = true;
    }
    if (r != VKDS_SUCCESS) break;
    if (progress || vkds__copy_stream_help(&st->stream)) idle = 0;
    else vkds__spin_pause(&idle);
  }
  return pipeline_finish(res, st, r, last);
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
  const char *outer = vkds__call_begin("vkds_upload"); /* (names its ring's allocation) */
  pthread_mutex_lock(&dev->staging_lock);
  vkds__staging *st;
  vkds_result r = staging_get(dev, &st);
  if (r == VKDS_SUCCESS) r = upload_staged(res, st, &dst, src, bytes);
  pthread_mutex_unlock(&dev->staging_lock);
  vkds__call_end(outer);
  return r;
}

vkds_result vkds__staging_ready(vkds_resource *res, const vkds_buffer *b, const void *host, uint64_t bytes,
                                bool to_host) {
  vkds__device *dev = res->dev;
  vkds_buffer *imported;
  uint64_t at;
  if (!bytes || host_copies(b, to_host, bytes) || (host && vkds__import_find(dev, host, bytes, &imported, &at)))
    return VKDS_SUCCESS; /* (the transfer will not go through the ring) */
  const char *outer = vkds__call_begin(to_host ? "vkds_download" : "vkds_upload");
  pthread_mutex_lock(&dev->staging_lock);
  vkds__staging *st;
  vkds_result r = staging_get(dev, &st);
  pthread_mutex_unlock(&dev->staging_lock);
  vkds__call_end(outer);
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
  const char *outer = vkds__call_begin("vkds_download"); /* (names its ring's allocation) */
  pthread_mutex_lock(&dev->staging_lock);
  vkds__staging *st;
  vkds_result r = staging_get(dev, &st);
  if (r == VKDS_SUCCESS) r = download_staged(res, st, dst, &src, bytes);
  pthread_mutex_unlock(&dev->staging_lock);
  vkds__call_end(outer);
  return r;
}
