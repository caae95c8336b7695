/* lib/memory/spares.c: buffers vkds made for a call and keeps for the next one (a call's
 * scratch, its result word, streamed calls' staging buffers), by device, kind and size.
 *
 * Kept within a budget (keep_bytes, per pool), oldest out first; and all of a device's are
 * given back when that device runs out of memory (vkds_buffer_create drops them and
 * tries once more): under device_memory_limit, kept spares made every later
 * allocation fail, the application's own included, until the context went (a probe:
 * a 32 MiB streamed transform under an 80 MiB limit, then no 32 MiB buffer). */
#include "internal.h"

struct vkds__spare {
  struct vkds__spare *next;
  vkds_buffer *buffer;
  vkds__spare_pool pool;
};

vkds_result vkds__spare_get(vkds_resource *res, vkds_memory_kind kind, uint64_t size, vkds_buffer **out) {
  vkds_context *ctx = res->dev->ctx;
  pthread_mutex_lock(&ctx->spare_lock);
  struct vkds__spare **at = &ctx->spares;
  while (*at && ((*at)->buffer->dev != res->dev || (*at)->buffer->kind != kind || (*at)->buffer->size != size))
    at = &(*at)->next;
  struct vkds__spare *s = *at;
  if (s) { /* the node is kept for the next put: no allocation on a call's way */
    *at = s->next;
    ctx->spare_bytes[s->pool] -= s->buffer->size;
    *out = s->buffer;
    s->buffer = NULL;
    s->next = ctx->spare_nodes;
    ctx->spare_nodes = s;
  }
  pthread_mutex_unlock(&ctx->spare_lock);
  if (s) return VKDS_SUCCESS;
  return vkds_buffer_create(res, &(vkds_buffer_info){.size = size, .memory = kind}, out);
}

/* The budget: the bytes of spare buffers a context keeps in each pool, ctx->keep_bytes,
 * by default eight staging rings' worth (256 MiB: a streamed call over three host
 * sequences on a discrete GPU keeps 192 MiB of stream buffers, reused call after call).
 * Past it the pool's oldest spares go. Kept without a bound, every size a call ever
 * needed stayed allocated until the context went (a new-user probe). Two pools, so that
 * data staged whole (up to the budget in one buffer) neither pushes out a streamed call's
 * buffers nor is pushed out by the small ones its own call puts after it: in one pool a
 * 256 MiB staged buffer was never kept. */

/* Takes spares out of the list (spare_lock held; their buffers are destroyed after it,
 * by destroy_taken): the oldest of `pool` until `incoming` more bytes fit its budget, or,
 * with a device, every one on it. In the staged pool a smaller buffer never pushes out a
 * larger one (*room false: keep the incoming one not): the larger took longer to make,
 * and a call that stages its data puts small buffers after it. */
static struct vkds__spare *take_out(vkds_context *ctx, uint64_t incoming, vkds__spare_pool pool,
                                    const vkds__device *dev, bool *room) {
  if (room) *room = true;
  struct vkds__spare *gone = NULL;
  if (dev) {
    for (struct vkds__spare **at = &ctx->spares; *at;) {
      struct vkds__spare *s = *at;
      if (s->buffer->dev != dev) {
        at = &s->next;
        continue;
      }
      *at = s->next;
      ctx->spare_bytes[s->pool] -= s->buffer->size;
      s->next = gone;
      gone = s;
    }
    return gone;
  }
  while (ctx->spare_bytes[pool] + incoming > ctx->keep_bytes) {
    struct vkds__spare **oldest = NULL; /* the list is newest first */
    for (struct vkds__spare **at = &ctx->spares; *at; at = &(*at)->next)
      if ((*at)->pool == pool) oldest = at;
    if (!oldest) break;
    if (pool == VKDS__SPARES_STAGED && (*oldest)->buffer->size > incoming) {
      *room = false;
      break;
    }
    struct vkds__spare *s = *oldest;
    *oldest = s->next;
    ctx->spare_bytes[pool] -= s->buffer->size;
    s->next = gone;
    gone = s;
  }
  return gone;
}

/* Destroys the buffers of nodes take_out removed; the nodes are kept for later puts. */
static void destroy_taken(vkds_context *ctx, struct vkds__spare *gone) {
  while (gone) {
    struct vkds__spare *next = gone->next;
    vkds_buffer_destroy(gone->buffer);
    pthread_mutex_lock(&ctx->spare_lock);
    gone->buffer = NULL;
    gone->next = ctx->spare_nodes;
    ctx->spare_nodes = gone;
    pthread_mutex_unlock(&ctx->spare_lock);
    gone = next;
  }
}

uint64_t vkds__spare_size(uint64_t bytes) {
  if (bytes <= 4096) return 4096;
  uint64_t step = 1ull << (63 - __builtin_clzll(bytes) - 2); /* a quarter of the power of two below */
  return bytes > UINT64_MAX - step ? bytes : (bytes + step - 1) / step * step;
}

void vkds__spare_put(vkds_buffer *buf, vkds__spare_pool pool) {
  if (!buf) return;
  vkds_context *ctx = buf->dev->ctx;
  if (buf->size > ctx->keep_bytes) { /* (never kept) */
    vkds_buffer_destroy(buf);
    return;
  }
  pthread_mutex_lock(&ctx->spare_lock);
  struct vkds__spare *s = ctx->spare_nodes; /* a kept node: one critical section */
  if (s) {
    ctx->spare_nodes = s->next;
  } else {
    pthread_mutex_unlock(&ctx->spare_lock);
    if (!(s = vkds__alloc(ctx, sizeof *s))) { /* keep nothing rather than fail */
      vkds_buffer_destroy(buf);
      return;
    }
    pthread_mutex_lock(&ctx->spare_lock);
  }
  bool room;
  struct vkds__spare *gone = take_out(ctx, buf->size, pool, NULL, &room);
  if (!room) { /* not kept: its node back, the buffer destroyed with those taken out */
    s->buffer = buf;
    s->next = gone;
    pthread_mutex_unlock(&ctx->spare_lock);
    destroy_taken(ctx, s);
    return;
  }
  s->buffer = buf;
  s->pool = pool;
  s->next = ctx->spares;
  ctx->spares = s;
  ctx->spare_bytes[pool] += buf->size;
  pthread_mutex_unlock(&ctx->spare_lock);
  destroy_taken(ctx, gone);
}

bool vkds__spares_drop(vkds__device *dev) {
  vkds_context *ctx = dev->ctx;
  pthread_mutex_lock(&ctx->spare_lock);
  struct vkds__spare *gone = take_out(ctx, 0, VKDS__SPARES_CALL, dev, NULL);
  pthread_mutex_unlock(&ctx->spare_lock);
  destroy_taken(ctx, gone);
  return gone != NULL;
}

uint64_t vkds_context_trim(vkds_context *ctx) {
  if (!ctx) return 0;
  pthread_mutex_lock(&ctx->spare_lock);
  uint64_t bytes = ctx->spare_bytes[VKDS__SPARES_CALL] + ctx->spare_bytes[VKDS__SPARES_STAGED];
  struct vkds__spare *gone = NULL;
  for (uint32_t d = 0; d < ctx->device_count; ++d) {
    struct vkds__spare *more = take_out(ctx, 0, VKDS__SPARES_CALL, &ctx->devices[d], NULL), *last = more;
    while (last && last->next) last = last->next;
    if (last) last->next = gone, gone = more;
  }
  pthread_mutex_unlock(&ctx->spare_lock);
  destroy_taken(ctx, gone);
  /* and the blocks left empty, as running out of memory gives them back: the allocator
   * keeps a type's last empty block for the next buffer, and a trimmed context held a
   * 64 MiB block, the kept buffers' included (a soak probe) */
  for (uint32_t d = 0; d < ctx->device_count; ++d) vkds__allocator_trim(&ctx->devices[d]);
  return bytes;
}

void vkds__spares_free(vkds_context *ctx) {
  for (struct vkds__spare *s = ctx->spares, *next; s; s = next) {
    next = s->next;
    vkds_buffer_destroy(s->buffer);
    vkds__free(ctx, s);
  }
  ctx->spares = NULL;
  ctx->spare_bytes[VKDS__SPARES_CALL] = ctx->spare_bytes[VKDS__SPARES_STAGED] = 0;
  for (struct vkds__spare *s = ctx->spare_nodes, *next; s; s = next) {
    next = s->next;
    vkds__free(ctx, s);
  }
  ctx->spare_nodes = NULL;
}
