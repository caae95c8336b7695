/* lib/memory/host_copy.h: streamed host copies, for the staging pipeline
 * (lib/memory/staging.c). The one-shot copy, vkds__host_copy, is in lib/internal.h.
 *
 * A stream is a sequence of blocks (a destination, a source, a length) that its owner
 * posts one after the other while the copy threads work through them in order, a
 * piece at a time, without sleeping in between; the owner reads how many blocks are
 * done (counted from the first, in order) and helps copy when it has nothing else to
 * do. A team of helpers serves one stream at a time: a stream begun while every team
 * has one is copied by its owner alone (vkds__copy_stream_help). */
#ifndef VKDS_MEMORY_HOST_COPY_H
#define VKDS_MEMORY_HOST_COPY_H

#include "internal.h"

/* Blocks posted and not yet done, at most. */
#define VKDS__STREAM_BLOCKS 128

typedef struct vkds__copy_block {
  char *dst;
  const char *src;
  uint64_t bytes;
  uint32_t left; /* pieces not yet copied */
} vkds__copy_block;

typedef struct vkds__copy_stream {
  struct vkds__host_copy_pool *pool; /* the helpers, when this stream has them */
  uint64_t piece;
  bool nontemporal;
  pthread_mutex_t lock;  /* guards the blocks, take, take_off */
  uint64_t take, take_off; /* the next piece to claim: block, offset in it */
  _Atomic uint64_t posted; /* blocks posted */
  _Atomic uint64_t done;   /* blocks [0, done) are copied */
  _Atomic bool detach;     /* the helpers leave */
  vkds__copy_block blocks[VKDS__STREAM_BLOCKS];
} vkds__copy_stream;

/* Starts a stream of `piece`-byte pieces that will move about `bytes` in all (under 1
 * MiB: the owner copies alone, waking nobody); nontemporal: the copies write around
 * the caches (for destinations that nobody reads soon on this CPU). */
void vkds__copy_stream_begin(vkds_context *ctx, vkds__copy_stream *s, uint64_t piece, bool nontemporal,
                             uint64_t bytes);
/* Posts the next block; fewer than VKDS__STREAM_BLOCKS may be posted and not done. */
void vkds__copy_stream_post(vkds__copy_stream *s, void *dst, const void *src, uint64_t bytes);
/* Blocks done, counted from the first: their bytes are in place (and visible to devices
 * that read host memory after a later queue submission). */
uint64_t vkds__copy_stream_done(vkds__copy_stream *s);
/* Copies one piece of a posted block on the calling thread; false when none is left
 * to claim. */
bool vkds__copy_stream_help(vkds__copy_stream *s);
/* Finishes every posted block, lets the helpers go and ends the stream. */
void vkds__copy_stream_end(vkds__copy_stream *s);

/* One wait in a spin loop: a pause instruction while the loop has been idle for under
 * 50 us, then a yield of the processor (a busy loop on a machine with fewer cores than
 * threads would take the time that the threads it waits for need). *idle_since: 0
 * when the loop last made progress; set here. */
void vkds__spin_pause(uint64_t *idle_since);

#endif
