/* lib/seq/seq_bind.c: vkds_seq_bind and vkds_seq_unbind, where the passed-directly trait
 * meets the staging ring. A sequence the device can use as it is costs nothing; any
 * other gets a temporary device buffer that the elements go through, in the one
 * direction or both that the access asks for. */
#include "internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

/* The sequence's own contiguous memory, when it has some: a range of a buffer, or a
 * host pointer. */
typedef struct storage {
  vkds_buffer *buffer; /* buffer and mapped sequences */
  uint64_t offset;
  void *host; /* host sequences */
} storage;

static bool storage_of(const vkds_seq *seq, storage *out) {
  *out = (storage){0};
  if (seq->ops == &vkds_seq_buffer_ops || seq->ops == &vkds_seq_mapped_ops) {
    out->buffer = seq->buffer, out->offset = seq->offset;
    return true;
  }
  if (seq->ops == &vkds_seq_host_ops) {
    out->host = seq->host;
    return true;
  }
  return false;
}

/* A resource of the device a buffer lives on (any: transfers wait for themselves). */
static vkds_resource *resource_on(const vkds_context *ctx, const vkds__device *dev) {
  for (uint32_t i = 0; i < ctx->resource_count; ++i)
    if (ctx->resources[i].dev == dev) return &ctx->resources[i];
  return NULL;
}

/* Fills `host` with the sequence's elements. */
static vkds_result gather(const vkds_seq *seq, const storage *st, const vkds__device *dev, unsigned char *host,
                          uint64_t bytes) {
  if (st->buffer && st->buffer->kind != VKDS_MEMORY_HOST) {
    vkds_resource *other = resource_on(dev->ctx, st->buffer->dev);
    return vkds_download(other, host, (vkds_view){st->buffer, st->offset, bytes}, bytes);
  }
  for (uint64_t i = 0; i < seq->count; ++i) {
    /* (a user type has no context of its own: its failure is logged through the call's,
     * or no logger saw it: a probe) Told as the staging's, with the type's name: a
     * concat of a host array and a device buffer, whose is_passed_directly said no,
     * failed with "vkds_seq_read: the buffer is device-local and not mapped" alone (a
     * sequences probe) */
    bool held = vkds__hold_failure_logs(true);
    vkds_result r = vkds_seq_read(seq, i, host + i * seq->elem_size);
    vkds__hold_failure_logs(held);
    if (r != VKDS_SUCCESS) {
      char reason[512]; /* (a copy: the message is written over the one it quotes) */
      snprintf(reason, sizeof reason, "%s", vkds__last_reason(r));
      return vkds__fail(dev->ctx, r, VK_SUCCESS,
                        "%s: a '%s' sequence not passed directly to %s is staged through its read slot, which failed "
                        "at element %" PRIu64 ": %s", vkds__caller("vkds_seq_bind"), seq->ops->name,
                        dev->facts.props.properties.deviceName, i, reason);
    }
  }
  return VKDS_SUCCESS;
}

vkds_result vkds_seq_bind(vkds_resource *res, const vkds_seq *seq, vkds_access access, vkds_seq_binding *out) {
  if (out) *out = (vkds_seq_binding){0};
  if (!res || !seq || !out)
    return vkds__fail(res ? res->dev->ctx : NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "vkds_seq_bind: NULL argument");
  vkds__device *dev = res->dev;
  vkds_context *ctx = dev->ctx;
  if ((unsigned)access > VKDS_ACCESS_WRITE)
    return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "vkds_seq_bind: unknown access %d", (int)access);
  VKDS_CHECK(vkds__log_unlogged(ctx, vkds_seq_validate(seq)));
  VKDS_CHECK(vkds__seq_check_context(ctx, "vkds_seq_bind", seq, NULL, NULL));
  bool reads = access != VKDS_ACCESS_WRITE, writes = access != VKDS_ACCESS_READ;
  /* (a counting view of 2^61 u64 wrapped to 0 bytes: an empty binding, or 8 bytes that
   * every element was then gathered into; a limits probe) */
  if (seq->elem_size && seq->count > UINT64_MAX / seq->elem_size)
    return vkds__fail(ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS,
                      "vkds_seq_bind: %" PRIu64 " elements of %" PRIu32 " bytes are more than 2^64 bytes", seq->count,
                      seq->elem_size);
  uint64_t bytes = seq->count * seq->elem_size;
  storage st;
  bool has_storage = storage_of(seq, &st);
  if (has_storage && st.buffer && st.buffer->dev->ctx != ctx)
    return vkds__fail(ctx, VKDS_ERROR_WRONG_CONTEXT, VK_SUCCESS,
                      "vkds_seq_bind: the sequence's buffer belongs to another context than the resource");
  if (writes && seq->ops == &vkds_seq_host_ops && seq->read_only)
    return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "vkds_seq_bind: the host sequence is read-only");
  if (writes && !has_storage && seq->ops != &vkds_seq_discard_ops)
    return vkds__fail(ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS,
                      "vkds_seq_bind: a %s sequence cannot be written (its elements have nowhere to go)", seq->ops->name);
  *out = (vkds_seq_binding){.seq = seq, .res = res, .access = access};
  if (bytes == 0) return VKDS_SUCCESS;

  /* passed directly, with memory of its own: no copy */
  vkds_buffer *imported;
  uint64_t at;
  if (has_storage && st.buffer && vkds_seq_is_passed_directly(seq, res)) {
    out->view = (vkds_view){st.buffer, st.offset, bytes};
    if (reads) vkds__buffer_flush(st.buffer, st.offset, bytes); /* (vkds_seq_unbind says why) */
    return VKDS_SUCCESS;
  }
  if (has_storage && st.host && vkds__seq_host_import(dev, seq, &imported, &at)) {
    out->view = (vkds_view){imported, at, bytes};
    if (reads) vkds__buffer_flush(imported, at, bytes);
    return VKDS_SUCCESS;
  }

  /* the temporary from the context's spares, and back to them after (as a call's
   * scratch): on NVIDIA's driver a buffer of 1 GiB took 21 ms to make and 19.5 ms to
   * destroy, 40 of the 73 ms of a 2^28-sample host histogram (H200, bench/RESULTS.md,
   * session 36) */
  vkds_buffer *temp;
  VKDS_CHECK(vkds__spare_get(res, VKDS_MEMORY_DEVICE, vkds__spare_size(bytes), &temp));
  out->view = (vkds_view){temp, 0, bytes};
  out->staged = true;
  vkds_result r = VKDS_SUCCESS;
  /* what the write-back (vkds_seq_unbind) goes through is made now: it runs once the
   * call's work is done, and a staging ring it was the first to need, refused under
   * device_memory_limit there, failed a call whose other outputs had been written (a
   * partition into a host array and another device's buffer wrote the host array and
   * said "out of device memory"; a probe) */
  if (writes && has_storage) {
    bool other = st.buffer && st.buffer->kind != VKDS_MEMORY_HOST;
    r = vkds__staging_ready(res, temp, other ? NULL : st.host, bytes, true);
    if (r == VKDS_SUCCESS && other)
      r = vkds__staging_ready(resource_on(ctx, st.buffer->dev), st.buffer, NULL, bytes, false);
  }
  if (r != VKDS_SUCCESS || !reads) {
    if (r != VKDS_SUCCESS) vkds__seq_binding_drop(out);
    return r;
  }
  if (has_storage && (st.host || st.buffer->kind == VKDS_MEMORY_HOST)) {
    r = vkds_upload(res, out->view, st.host ? st.host : (char *)st.buffer->mapped + st.offset, bytes);
  } else {
    unsigned char *host = bytes > SIZE_MAX ? NULL : vkds__temp_alloc_raw(ctx, (size_t)bytes);
    r = host ? gather(seq, has_storage ? &st : &(storage){0}, dev, host, bytes)
             : vkds__fail(ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "vkds_seq_bind: %llu bytes",
                          (unsigned long long)bytes);
    if (r == VKDS_SUCCESS) r = vkds_upload(res, out->view, host, bytes);
    vkds__free(ctx, host);
  }
  if (r != VKDS_SUCCESS) vkds__seq_binding_drop(out);
  return r;
}

void vkds__seq_binding_drop(vkds_seq_binding *b) {
  if (b->staged) vkds__spare_put(b->view.buffer, VKDS__SPARES_STAGED);
  *b = (vkds_seq_binding){0};
}

/* Memory passed directly that is host-visible but not host-coherent (readback memory may
 * be cached and not coherent, and imported memory may get such a type, on devices other
 * than the NVIDIA GPUs and lavapipe here, whose host-visible types are all coherent): the
 * host's writes are flushed when it is bound for reading, and the device's writes
 * invalidated when it is unbound, once the work is done, so that the host reads them
 * through vkds_buffer_map (a memory probe: nothing flushed or invalidated these). */
vkds_result vkds_seq_unbind(vkds_seq_binding *b) {
  if (!b || !b->staged) {
    if (b && b->view.buffer && b->access != VKDS_ACCESS_READ && b->view.buffer->mapped)
      vkds__buffer_invalidate_range(b->view.buffer, b->view.offset, b->view.bytes);
    if (b) *b = (vkds_seq_binding){0};
    return VKDS_SUCCESS;
  }
  const vkds_seq *seq = b->seq;
  vkds_result r = VKDS_SUCCESS;
  storage st;
  if (b->access != VKDS_ACCESS_READ && storage_of(seq, &st)) {
    uint64_t bytes = b->view.bytes;
    if (st.host || st.buffer->kind == VKDS_MEMORY_HOST) {
      r = vkds_download(b->res, st.host ? st.host : (char *)st.buffer->mapped + st.offset, b->view, bytes);
    } else { /* a buffer of another device: through host memory */
      unsigned char *host = bytes > SIZE_MAX ? NULL : vkds__temp_alloc_raw(b->res->dev->ctx, (size_t)bytes);
      vkds_resource *other = resource_on(b->res->dev->ctx, st.buffer->dev);
      r = host ? vkds_download(b->res, host, b->view, bytes)
               : vkds__fail(b->res->dev->ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "vkds_seq_unbind");
      if (r == VKDS_SUCCESS) r = vkds_upload(other, (vkds_view){st.buffer, st.offset, bytes}, host, bytes);
      vkds__free(b->res->dev->ctx, host);
    }
  }
  vkds__seq_binding_drop(b);
  return r;
}
