/* lib/memory/host_copy.c: memcpy over several threads.
 *
 * One thread copying into a mapped staging buffer reaches about 9 GB/s on the H100's
 * host (../shared/DESIGN.md), a fifth of what the PCIe link moves; several threads
 * copying disjoint pieces get close to the host's memory bandwidth: on that host 33
 * GB/s with 8 threads, 45-48 with 12 to 16 (bench/RESULTS.md "Memory"), hence one
 * thread per processor, up to 16: a team. The helpers start on the first large copy (a
 * context that never stages big data never starts them), sleep on a condition
 * variable between copies, and take pieces under one lock: a piece is at least 256
 * KiB, so the lock is nothing next to the copy.
 *
 * A team serves one copy or stream at a time. Copies at the same time (each device's
 * staging when several devices are fed at once, or several threads' transfers) take
 * further teams (processors / team size of them, at least 2 and at most MAX_TEAMS),
 * each started on its first use; a copy that finds every team busy runs on
 * its caller's thread alone. Two H200s fed 4 GiB from host memory at once
 * (examples/several_gpus.c, 32 processors, session 42) moved 47.1 GB/s together with
 * one team (1.23x one device's 38.4), 60.5-65.3 with two (1.61-1.88x): with one, the
 * second device's copies ran on one thread.
 *
 * Two ways in: vkds__host_copy (one range, returns when it is copied) and streams
 * (host_copy.h: blocks posted one after the other while the helpers copy the earlier
 * ones, for the staging pipeline). A helper that runs out of work spins a little
 * before it sleeps, so that back-to-back copies do not pay a wake-up each. */
#include "host_copy.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__SSE2__)
#include <emmintrin.h>
#define HAVE_SSE2 1
#endif

#define PARALLEL_FROM (1ull << 20) /* smaller copies are not worth waking anyone */
#define MIN_PIECE (256ull << 10)
#define PAUSE_NS 50000ull      /* spin this long without progress, then yield */
#define IDLE_SPIN_NS 200000ull /* a helper out of work watches for more this long, then sleeps */
#define MAX_TEAMS 8u

typedef struct vkds__host_copy_pool {
  uint32_t threads; /* the caller included */
  uint32_t started; /* helpers running */
  pthread_t *helpers;
  pthread_mutex_t job_lock; /* one parallel copy or stream at a time; others take another team */
  pthread_mutex_t lock;
  pthread_cond_t work, done;
  bool stop;
  uint64_t idle_spin_ns;      /* how long a helper out of work spins before it sleeps */
  _Atomic uint32_t posts;     /* bumped on every new copy or stream: what idle helpers watch */
  vkds__copy_stream *stream;  /* the stream the helpers serve, NULL when none */
  uint32_t in_stream;         /* helpers inside it */
  /* the current copy: pieces [next, pieces) are unclaimed, `finished` are done */
  char *dst;
  const char *src;
  uint64_t bytes, piece;
  uint32_t pieces, next, finished;
} host_copy_pool;

void vkds__spin_pause(uint64_t *idle_since) {
  uint64_t now = vkds__now_ns();
  if (!*idle_since) *idle_since = now;
  if (now - *idle_since >= PAUSE_NS) {
    sched_yield();
    return;
  }
  vkds__cpu_relax();
}

/* memcpy, or with non-temporal stores: the destination's lines are written without
 * being read first (a plain store reads each line before it writes it) and do not
 * push the source out of the caches. */
static void copy_bytes(char *dst, const char *src, uint64_t n, bool nontemporal) {
#ifdef HAVE_SSE2
  if (nontemporal && n >= 4096) {
    uint64_t head = (uint64_t)(-(uintptr_t)dst & 63);
    memcpy(dst, src, head);
    dst += head, src += head, n -= head;
    for (; n >= 64; n -= 64, dst += 64, src += 64) {
      __m128i a = _mm_loadu_si128((const __m128i *)src), b = _mm_loadu_si128((const __m128i *)(src + 16));
      __m128i c = _mm_loadu_si128((const __m128i *)(src + 32)), d = _mm_loadu_si128((const __m128i *)(src + 48));
      _mm_stream_si128((__m128i *)dst, a);
      _mm_stream_si128((__m128i *)(dst + 16), b);
      _mm_stream_si128((__m128i *)(dst + 32), c);
      _mm_stream_si128((__m128i *)(dst + 48), d);
    }
    memcpy(dst, src, n);
    _mm_sfence(); /* the streamed lines are in memory before anyone is told */
    return;
  }
#endif
  (void)nontemporal;
  memcpy(dst, src, n);
}

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

/* ---- streams ---- */

/* Claims the next piece of the stream: false when every posted byte is claimed. */
static bool stream_claim(vkds__copy_stream *s, uint64_t *block, char **dst, const char **src, uint64_t *n) {
  pthread_mutex_lock(&s->lock);
  uint64_t posted = atomic_load_explicit(&s->posted, memory_order_relaxed);
  if (s->take >= posted) {
    pthread_mutex_unlock(&s->lock);
    return false;
  }
  vkds__copy_block *b = &s->blocks[s->take % VKDS__STREAM_BLOCKS];
  uint64_t off = s->take_off, len = b->bytes - off < s->piece ? b->bytes - off : s->piece;
  *block = s->take, *dst = b->dst + off, *src = b->src + off, *n = len;
  s->take_off += len;
  if (s->take_off >= b->bytes) ++s->take, s->take_off = 0;
  pthread_mutex_unlock(&s->lock);
  return true;
}

static void stream_finish_piece(vkds__copy_stream *s, uint64_t block) {
  pthread_mutex_lock(&s->lock);
  if (--s->blocks[block % VKDS__STREAM_BLOCKS].left == 0) {
    uint64_t done = atomic_load_explicit(&s->done, memory_order_relaxed);
    uint64_t posted = atomic_load_explicit(&s->posted, memory_order_relaxed);
    while (done < posted && s->blocks[done % VKDS__STREAM_BLOCKS].left == 0) ++done;
    atomic_store_explicit(&s->done, done, memory_order_release);
  }
  pthread_mutex_unlock(&s->lock);
}

bool vkds__copy_stream_help(vkds__copy_stream *s) {
  uint64_t block, n;
  char *dst;
  const char *src;
  if (!stream_claim(s, &block, &dst, &src, &n)) return false;
  copy_bytes(dst, src, n, s->nontemporal);
  stream_finish_piece(s, block);
  return true;
}

/* A helper's work on a stream: pieces as they come, until the stream lets it go. */
static void stream_work(vkds__copy_stream *s) {
  uint64_t idle = 0;
  for (;;) {
    uint64_t seen = atomic_load_explicit(&s->posted, memory_order_acquire);
    if (vkds__copy_stream_help(s)) {
      idle = 0;
      continue;
    }
    while (atomic_load_explicit(&s->posted, memory_order_acquire) == seen) {
      if (atomic_load_explicit(&s->detach, memory_order_acquire)) return;
      vkds__spin_pause(&idle);
    }
  }
}

void vkds__copy_stream_post(vkds__copy_stream *s, void *dst, const void *src, uint64_t bytes) {
  pthread_mutex_lock(&s->lock);
  uint64_t k = atomic_load_explicit(&s->posted, memory_order_relaxed);
  vkds__copy_block *b = &s->blocks[k % VKDS__STREAM_BLOCKS];
  b->dst = dst, b->src = src, b->bytes = bytes;
  b->left = bytes ? (uint32_t)((bytes + s->piece - 1) / s->piece) : 0;
  if (!bytes && atomic_load_explicit(&s->done, memory_order_relaxed) == k) /* nothing to copy: done now */
    atomic_store_explicit(&s->done, k + 1, memory_order_release);
  atomic_store_explicit(&s->posted, k + 1, memory_order_release);
  pthread_mutex_unlock(&s->lock);
}

uint64_t vkds__copy_stream_done(vkds__copy_stream *s) {
  return atomic_load_explicit(&s->done, memory_order_acquire);
}

/* ---- the helpers ---- */

static void *helper_main(void *arg) {
  host_copy_pool *h = arg;
  pthread_mutex_lock(&h->lock);
  while (!h->stop) {
    if (h->next < h->pieces) {
      copy_pieces(h);
    } else if (h->stream) {
      vkds__copy_stream *s = h->stream;
      ++h->in_stream;
      pthread_mutex_unlock(&h->lock);
      stream_work(s);
      pthread_mutex_lock(&h->lock);
      if (--h->in_stream == 0) pthread_cond_broadcast(&h->done);
    } else {
      /* out of work: watch for the next one a little while before sleeping */
      uint32_t seen = atomic_load_explicit(&h->posts, memory_order_acquire);
      if (h->idle_spin_ns) {
        pthread_mutex_unlock(&h->lock);
        uint64_t start = vkds__now_ns(), idle = 0;
        while (atomic_load_explicit(&h->posts, memory_order_acquire) == seen &&
               vkds__now_ns() - start < h->idle_spin_ns)
          vkds__spin_pause(&idle);
        pthread_mutex_lock(&h->lock);
      }
      if (!h->stop && h->next >= h->pieces && !h->stream && atomic_load(&h->posts) == seen)
        pthread_cond_wait(&h->work, &h->lock);
    }
  }
  pthread_mutex_unlock(&h->lock);
  return NULL;
}

vkds_result vkds__host_copy_init(vkds_context *ctx, uint32_t threads) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  uint32_t cpus = n < 1 ? 1 : n > 4096 ? 4096 : (uint32_t)n;
  if (!threads) threads = cpus > 16 ? 16 : cpus;
  /* two at least: a second copy at the same time then overlaps the first's helpers for
   * a while on few processors, where it would run alone at one thread's speed */
  uint32_t teams = cpus / threads;
  teams = teams < 2 ? 2 : teams > MAX_TEAMS ? MAX_TEAMS : teams;
  host_copy_pool *h = vkds__alloc_array(ctx, teams, sizeof *h);
  if (!h) return vkds__fail(ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "host copy threads");
  for (uint32_t t = 0; t < teams; ++t) {
    h[t].threads = threads;
    h[t].idle_spin_ns = IDLE_SPIN_NS;
    pthread_mutex_init(&h[t].job_lock, NULL);
    pthread_mutex_init(&h[t].lock, NULL);
    pthread_cond_init(&h[t].work, NULL);
    pthread_cond_init(&h[t].done, NULL);
  }
  ctx->host_copy = h;
  ctx->host_copy_teams = teams;
  return VKDS_SUCCESS;
}

void vkds__host_copy_destroy(vkds_context *ctx) {
  host_copy_pool *teams = ctx->host_copy;
  if (!teams) return;
  for (uint32_t t = 0; t < ctx->host_copy_teams; ++t) {
    host_copy_pool *h = &teams[t];
    pthread_mutex_lock(&h->lock);
    h->stop = true;
    atomic_fetch_add(&h->posts, 1);
    pthread_cond_broadcast(&h->work);
    pthread_mutex_unlock(&h->lock);
    for (uint32_t i = 0; i < h->started; ++i) pthread_join(h->helpers[i], NULL);
    vkds__free(ctx, h->helpers);
    pthread_cond_destroy(&h->done);
    pthread_cond_destroy(&h->work);
    pthread_mutex_destroy(&h->lock);
    pthread_mutex_destroy(&h->job_lock);
  }
  vkds__free(ctx, teams);
  ctx->host_copy = NULL;
}

/* A free team for a copy of `bytes`, its job_lock held; NULL: the caller copies alone
 * (small, no helpers to be had, or every team busy). */
static host_copy_pool *take_team(vkds_context *ctx, uint64_t bytes) {
  host_copy_pool *teams = ctx->host_copy;
  if (bytes < PARALLEL_FROM || teams[0].threads < 2) return NULL;
  for (uint32_t t = 0; t < ctx->host_copy_teams; ++t)
    if (pthread_mutex_trylock(&teams[t].job_lock) == 0) return &teams[t];
  return NULL;
}

/* With job_lock held: starts the helpers once. A failure leaves fewer helpers, which
 * only makes copies slower. */
static void start_helpers(vkds_context *ctx, host_copy_pool *h) {
  if (h->helpers || h->threads < 2) return;
  h->helpers = vkds__alloc_array(ctx, h->threads - 1, sizeof *h->helpers);
  if (!h->helpers) return;
  while (h->started < h->threads - 1 && pthread_create(&h->helpers[h->started], NULL, helper_main, h) == 0)
    ++h->started;
  if (h->started < h->threads - 1)
    vkds__log(ctx, VKDS_LOG_WARN, "host copies: started %u of %u helper threads", h->started, h->threads - 1);
}

void vkds__host_copy(vkds_context *ctx, void *dst, const void *src, uint64_t bytes) {
  host_copy_pool *h = take_team(ctx, bytes);
  if (!h) {
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
  atomic_fetch_add_explicit(&h->posts, 1, memory_order_release);
  pthread_cond_broadcast(&h->work);
  copy_pieces(h);
  while (h->finished < h->pieces) pthread_cond_wait(&h->done, &h->lock);
  h->pieces = h->next = h->finished = 0;
  pthread_mutex_unlock(&h->lock);
  pthread_mutex_unlock(&h->job_lock);
}

void vkds__copy_stream_begin(vkds_context *ctx, vkds__copy_stream *s, uint64_t piece, bool nontemporal,
                             uint64_t bytes) {
  s->pool = NULL;
  s->piece = piece ? piece : MIN_PIECE;
  s->nontemporal = nontemporal;
  pthread_mutex_init(&s->lock, NULL);
  s->take = s->take_off = 0;
  atomic_store(&s->posted, 0);
  atomic_store(&s->done, 0);
  atomic_store(&s->detach, false);
  host_copy_pool *h = take_team(ctx, bytes);
  if (!h) return; /* the owner copies alone */
  start_helpers(ctx, h);
  if (!h->started) {
    pthread_mutex_unlock(&h->job_lock);
    return;
  }
  s->pool = h;
  pthread_mutex_lock(&h->lock);
  h->stream = s;
  atomic_fetch_add_explicit(&h->posts, 1, memory_order_release);
  pthread_cond_broadcast(&h->work);
  pthread_mutex_unlock(&h->lock);
}

void vkds__copy_stream_end(vkds__copy_stream *s) {
  uint64_t idle = 0;
  while (vkds__copy_stream_help(s)) {
  }
  while (atomic_load_explicit(&s->done, memory_order_acquire) < atomic_load(&s->posted)) vkds__spin_pause(&idle);
  host_copy_pool *h = s->pool;
  if (h) {
    pthread_mutex_lock(&h->lock);
    h->stream = NULL;
    atomic_store_explicit(&s->detach, true, memory_order_release);
    while (h->in_stream) pthread_cond_wait(&h->done, &h->lock);
    pthread_mutex_unlock(&h->lock);
    pthread_mutex_unlock(&h->job_lock);
    s->pool = NULL;
  }
  pthread_mutex_destroy(&s->lock);
}
