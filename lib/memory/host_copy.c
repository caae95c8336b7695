/* lib/memory/host_copy.c: memcpy over several threads.
 *
 * One thread copying into a mapped staging buffer reaches about 9 GB/s on the H100's
 * host (../shared/DESIGN.md), a fifth of what the PCIe link moves; several threads
 * copying disjoint pieces get close to the host's memory bandwidth. The helpers start
 * on the first large copy (a context that never stages big data never starts them),
 * sleep on a condition variable between copies, and take pieces under one lock: a
 * piece is at least 256 KiB, so the lock is nothing next to the copy. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PARALLEL_FROM (1ull << 20) /* smaller copies are not worth waking anyone */
#define MIN_PIECE (256ull << 10)

typedef struct vkds__host_copy_pool {
  uint32_t threads; /* the caller included */
  uint32_t started; /* helpers running */
  pthread_t *helpers;
  pthread_mutex_t job_lock; /* one parallel copy at a time; others copy alone */
  pthread_mutex_t lock;
  pthread_cond_t work, done;
  bool stop;
  /* the current copy: pieces [next, pieces) are unclaimed, `finished` are done */
  char *dst;
  const char *src;
  uint64_t bytes, piece;
  uint32_t pieces, next, finished;
} host_copy_pool;

/* With the lock held: claims and copies pieces until none is left. */
static void copy_pieces(host_copy_pool *h) {
  while (h->next < h->pieces) {
    uint64_t off = (uint64_t)h->next++ * h->piece;
    uint64_t n = h->bytes - off < h->piece ? h->bytes - off : h->piece;
    char *dst = h->dst + off;
    const char *src = h->src + off;
    pthread_mutex_unlock(&h->lock);
    memcpy(dst, src, n);
    pthread_mutex_lock(&h->lock);
    if (++h->finished == h->pieces) pthread_cond_signal(&h->done);
  }
}

static void *helper_main(void *arg) {
  host_copy_pool *h = arg;
  pthread_mutex_lock(&h->lock);
  while (!h->stop) {
    if (h->next < h->pieces) copy_pieces(h);
    else pthread_cond_wait(&h->work, &h->lock);
  }
  pthread_mutex_unlock(&h->lock);
  return NULL;
}

vkds_result vkds__host_copy_init(vkds_context *ctx, uint32_t threads) {
  host_copy_pool *h = calloc(1, sizeof *h);
  if (!h) return vkds__fail(ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "host copy threads");
  if (!threads) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    threads = n < 1 ? 1 : n > 8 ? 8 : (uint32_t)n;
  }
  h->threads = threads;
  pthread_mutex_init(&h->job_lock, NULL);
  pthread_mutex_init(&h->lock, NULL);
  pthread_cond_init(&h->work, NULL);
  pthread_cond_init(&h->done, NULL);
  ctx->host_copy = h;
  return VKDS_SUCCESS;
}

void vkds__host_copy_destroy(vkds_context *ctx) {
  host_copy_pool *h = ctx->host_copy;
  if (!h) return;
  pthread_mutex_lock(&h->lock);
  h->stop = true;
  pthread_cond_broadcast(&h->work);
  pthread_mutex_unlock(&h->lock);
  for (uint32_t i = 0; i < h->started; ++i) pthread_join(h->helpers[i], NULL);
  free(h->helpers);
  pthread_cond_destroy(&h->done);
  pthread_cond_destroy(&h->work);
  pthread_mutex_destroy(&h->lock);
  pthread_mutex_destroy(&h->job_lock);
  free(h);
  ctx->host_copy = NULL;
}

/* With job_lock held: starts the helpers once. A failure leaves fewer helpers, which
 * only makes copies slower. */
static void start_helpers(vkds_context *ctx, host_copy_pool *h) {
  if (h->helpers || h->threads < 2) return;
  h->helpers = calloc(h->threads - 1, sizeof *h->helpers);
  if (!h->helpers) return;
  while (h->started < h->threads - 1 && pthread_create(&h->helpers[h->started], NULL, helper_main, h) == 0)
    ++h->started;
  if (h->started < h->threads - 1)
    vkds__log(ctx, VKDS_LOG_WARN, "host copies: started %u of %u helper threads", h->started, h->threads - 1);
}

void vkds__host_copy(vkds_context *ctx, void *dst, const void *src, uint64_t bytes) {
  host_copy_pool *h = ctx->host_copy;
  if (bytes < PARALLEL_FROM || h->threads < 2 || pthread_mutex_trylock(&h->job_lock) != 0) {
    memcpy(dst, src, bytes);
    return;
  }
  start_helpers(ctx, h);
  uint32_t workers = h->started + 1;
  uint64_t piece = bytes / (4ull * workers); /* a few pieces each evens out uneven threads */
  if (piece < MIN_PIECE) piece = MIN_PIECE;
  piece = (piece + 4095) & ~4095ull;
  pthread_mutex_lock(&h->lock);
  h->dst = dst, h->src = src, h->bytes = bytes, h->piece = piece;
  h->pieces = (uint32_t)((bytes + piece - 1) / piece), h->next = 0, h->finished = 0;
  pthread_cond_broadcast(&h->work);
  copy_pieces(h);
  while (h->finished < h->pieces) pthread_cond_wait(&h->done, &h->lock);
  h->pieces = h->next = h->finished = 0;
  pthread_mutex_unlock(&h->lock);
  pthread_mutex_unlock(&h->job_lock);
}
