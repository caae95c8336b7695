/* tests/test_memory.c: buffers (sub-allocation, memory kinds, the device memory limit
 * and what happens past it, host import) and staging (exact round trips through the
 * chunk ring, direct paths, several threads at once), on lavapipe with validation on. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "memory/memory_test.h"

#define MiB (1ull << 20)

/* Whether the device of `res` has memory outside its device-local heaps, where device
 * buffers fall back past device_memory_limit (a discrete GPU's host memory; lavapipe has
 * none). */
static bool has_fallback_memory(const vkds_resource *res) {
  vkds_resource_info ri;
  ck_assert_vkds(vkds_resource_get_info(res, &ri));
  for (uint32_t h = 0; h < ri.heap_count; ++h)
    if (!ri.heaps[h].device_local) return true;
  return false;
}

/* A fixed policy over `res` alone (its context may have more resources). */
static vkds_policy *fixed_policy(vkds_resource *res) {
  vkds_policy *pol = NULL;
  ck_assert_vkds(vkds_policy_create(
      &(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = {.resource_count = 1, .resources = (void *[]){res}}},
      &pol));
  return pol;
}

static vkds_buffer *make(vkds_resource *res, uint64_t size, vkds_memory_kind kind, uint32_t flags) {
  vkds_buffer *b = NULL;
  ck_assert_vkds(vkds_buffer_create(res, &(vkds_buffer_info){.size = size, .memory = kind, .flags = flags}, &b));
  return b;
}

/* Bytes that differ between neighbours and between runs of the same size. */
static unsigned char *pattern(uint64_t n, uint32_t seed) {
  unsigned char *p = malloc(n ? n : 1);
  ck_assert_ptr_nonnull(p);
  uint32_t x = seed * 2654435761u + 1;
  for (uint64_t i = 0; i < n; ++i) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    p[i] = (unsigned char)x;
  }
  return p;
}

/* ---- sub-allocation ---- */

START_TEST(small_buffers_share_a_block) {
  vkds_context *ctx = harness_context();
  vkds_resource *res = vkds_context_resource(ctx, 0);
  vkds_resource_info ri;
  ck_assert_vkds(vkds_resource_get_info(res, &ri));
  enum { N = 100 };
  vkds_buffer *b[N];
  for (int i = 0; i < N; ++i) b[i] = make(res, 1000 + 37 * (uint64_t)i, VKDS_MEMORY_DEVICE, 0);
  vkds_memory_stats st;
  ck_assert_vkds(vkds_memory_get_stats(res, &st));
  ck_assert_uint_eq(st.blocks, 1);
  ck_assert_uint_eq(st.dedicated, 0);
  ck_assert_uint_eq(st.buffers, N);
  /* one VkBuffer; ranges aligned for storage descriptors and disjoint */
  VkDeviceSize align = 64;
  for (int i = 0; i < N; ++i) {
    ck_assert_ptr_eq(vkds_buffer_vk(b[i]), vkds_buffer_vk(b[0]));
    ck_assert_uint_eq(vkds_buffer_offset(b[i]) % align, 0);
    ck_assert_uint_eq(vkds_buffer_address(b[i]) - vkds_buffer_address(b[0]),
                      vkds_buffer_offset(b[i]) - vkds_buffer_offset(b[0]));
    for (int j = 0; j < i; ++j) {
      uint64_t a0 = vkds_buffer_offset(b[i]), a1 = a0 + vkds_buffer_size(b[i]);
      uint64_t b0 = vkds_buffer_offset(b[j]), b1 = b0 + vkds_buffer_size(b[j]);
      ck_assert_msg(a1 <= b0 || b1 <= a0, "buffers %d and %d overlap", i, j);
    }
  }
  /* free every other one, then fill the holes: still one block */
  for (int i = 0; i < N; i += 2) vkds_buffer_destroy(b[i]);
  for (int i = 0; i < N; i += 2) b[i] = make(res, 1000, VKDS_MEMORY_DEVICE, 0);
  ck_assert_vkds(vkds_memory_get_stats(res, &st));
  ck_assert_uint_eq(st.blocks, 1);
  for (int i = 0; i < N; ++i) vkds_buffer_destroy(b[i]);
  ck_assert_vkds(vkds_memory_get_stats(res, &st));
  ck_assert_uint_eq(st.used_bytes, 0);
  ck_assert_uint_eq(st.buffers, 0);
  ck_assert_uint_le(st.blocks, 1); /* the last block is kept for the next buffer */
  vkds_context_destroy(ctx);
}
END_TEST

START_TEST(large_or_dedicated_buffers_get_their_own_memory) {
  vkds_context *ctx = harness_context();
  vkds_resource *res = vkds_context_resource(ctx, 0);
  vkds_buffer *small = make(res, 4096, VKDS_MEMORY_DEVICE, 0);
  vkds_buffer *own = make(res, 4096, VKDS_MEMORY_DEVICE, VKDS_BUFFER_DEDICATED);
  vkds_buffer *big = make(res, 40 * MiB, VKDS_MEMORY_DEVICE, 0);
  ck_assert_ptr_ne(vkds_buffer_vk(own), vkds_buffer_vk(small));
  ck_assert_ptr_ne(vkds_buffer_vk(big), vkds_buffer_vk(small));
  ck_assert_uint_eq(vkds_buffer_offset(own), 0);
  ck_assert_uint_eq(vkds_buffer_offset(big), 0);
  vkds_memory_stats st;
  ck_assert_vkds(vkds_memory_get_stats(res, &st));
  ck_assert_uint_eq(st.dedicated, 2);
  ck_assert_uint_eq(st.used_bytes, 4096 + 4096 + 40 * MiB);
  vkds_buffer_destroy(big);
  vkds_buffer_destroy(own);
  vkds_buffer_destroy(small);
  ck_assert_vkds(vkds_memory_get_stats(res, &st));
  ck_assert_uint_eq(st.dedicated, 0);
  vkds_context_destroy(ctx);
}
END_TEST

START_TEST(memory_kinds) {
  vkds_context *ctx = harness_context();
  vkds_resource *res = vkds_context_resource(ctx, 0);
  vkds_buffer *dev = make(res, 256, VKDS_MEMORY_DEVICE, 0), *map = make(res, 256, VKDS_MEMORY_MAPPED, 0),
              *rb = make(res, 256, VKDS_MEMORY_READBACK, 0), *host = make(res, 256, VKDS_MEMORY_HOST, 0);
  ck_assert_ptr_null(vkds_buffer_map(dev)); /* reached by upload/download only */
  ck_assert_ptr_nonnull(vkds_buffer_map(map));
  ck_assert_ptr_nonnull(vkds_buffer_map(rb));
  ck_assert_ptr_nonnull(vkds_buffer_map(host));
  ck_assert(vkds_buffer_memory_flags(map) & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT);
  ck_assert(vkds_buffer_memory_flags(map) & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
  ck_assert_int_eq(vkds_buffer_memory(host), VKDS_MEMORY_HOST);
  ck_assert_ptr_null(vkds_buffer_vk(host));
  ck_assert_uint_eq(vkds_buffer_address(host), 0);
  ck_assert(!vkds_buffer_is_on(host, res));
  ck_assert(vkds_buffer_is_on(dev, res) && vkds_buffer_is_on(map, res) && vkds_buffer_is_on(rb, res));
  ck_assert_uint_eq((uintptr_t)vkds_buffer_map(host) % 4096, 0);
  ck_assert_uint_ne(vkds_buffer_address(dev), 0);
  /* bad input */
  vkds_buffer *b = (vkds_buffer *)1;
  ck_assert_int_eq(vkds_buffer_create(res, &(vkds_buffer_info){.size = 0}, &b), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_null(b);
  ck_assert_int_eq(vkds_buffer_create(res, &(vkds_buffer_info){.size = 64, .memory = VKDS_MEMORY_IMPORTED}, &b),
                   VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_buffer_create(res, &(vkds_buffer_info){.size = 64, .memory = (vkds_memory_kind)99}, &b),
                   VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_buffer_create(res, &(vkds_buffer_info){.size = 64, .flags = 1u << 7}, &b),
                   VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_buffer_create(NULL, &(vkds_buffer_info){.size = 64}, &b), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_memory_get_stats(NULL, NULL), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_null(vkds_buffer_map(NULL));
  ck_assert_uint_eq(vkds_buffer_size(NULL), 0);
  vkds_buffer_destroy(NULL);
  vkds_buffer_destroy(dev), vkds_buffer_destroy(map), vkds_buffer_destroy(rb), vkds_buffer_destroy(host);
  vkds_context_destroy(ctx);
}
END_TEST

/* Past device_memory_limit: a new block does not fit, the buffer's own memory still
 * does; then nothing fits (lavapipe has one memory type, so there is no other type to
 * fall back to) and the error is named; freeing makes room again. */
START_TEST(device_memory_limit_falls_back_then_fails_cleanly) {
  vkds_context_info info = harness_info();
  info.device_memory_limit = 32 * MiB;
  vkds_context *ctx;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  vkds_resource *res = vkds_context_resource(ctx, 0);
  vkds_buffer *big = make(res, 26 * MiB, VKDS_MEMORY_DEVICE, 0);
  vkds_buffer *small = make(res, 1 * MiB, VKDS_MEMORY_DEVICE, 0); /* a block (8 MiB) would pass the limit */
  vkds_memory_stats st;
  ck_assert_vkds(vkds_memory_get_stats(res, &st));
  ck_assert_uint_eq(st.blocks, 0);
  ck_assert_uint_eq(st.dedicated, 2);
  ck_assert_uint_le(st.device_local_bytes, 32 * MiB);
  vkds_buffer *b = (vkds_buffer *)1;
  if (has_fallback_memory(res)) { /* past the cap: other memory, unless the buffer says no */
    ck_assert_vkds(vkds_buffer_create(res, &(vkds_buffer_info){.size = 6 * MiB}, &b));
    ck_assert(!(vkds_buffer_memory_flags(b) & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT));
    vkds_buffer_destroy(b);
    b = (vkds_buffer *)1;
    ck_assert_int_eq(vkds_buffer_create(res, &(vkds_buffer_info){.size = 6 * MiB, .flags = VKDS_BUFFER_NO_FALLBACK}, &b),
                     VKDS_ERROR_OUT_OF_DEVICE_MEMORY);
  } else {
    ck_assert_int_eq(vkds_buffer_create(res, &(vkds_buffer_info){.size = 6 * MiB}, &b), VKDS_ERROR_OUT_OF_DEVICE_MEMORY);
  }
  ck_assert_ptr_null(b);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "6291456 bytes"));
  vkds_buffer_destroy(big);
  b = make(res, 6 * MiB, VKDS_MEMORY_DEVICE, VKDS_BUFFER_NO_FALLBACK);
  vkds_buffer_destroy(b);
  vkds_buffer_destroy(small);
  ck_assert_vkds(vkds_memory_get_stats(res, &st));
  ck_assert_uint_eq(st.device_local_bytes, 0);
  vkds_context_destroy(ctx);
}
END_TEST

/* A context under info's device_memory_limit and its resource 0 (*res); NULL (nothing
 * left made) where the device has fallback memory: there, past the limit is other
 * memory, and what the limit refuses cannot be seen. */
static vkds_context *capped_context(const vkds_context_info *info, vkds_resource **res) {
  vkds_context *ctx;
  ck_assert_vkds(vkds_context_create(info, &ctx));
  *res = vkds_context_resource(ctx, 0);
  if (!has_fallback_memory(*res)) return ctx;
  vkds_context_destroy(ctx);
  return NULL;
}

/* A buffer larger than the blocks take (a quarter of a block), refused its own memory
 * at device_memory_limit, goes where a block has room: with a 48 MiB limit (12 MiB
 * blocks), one 4 KiB buffer's block and seven 5 MiB buffers of their own reach the
 * limit, and the block's free room still holds two more (a memory probe: they failed,
 * the block stayed empty). */
START_TEST(large_buffers_use_a_blocks_room_at_the_limit) {
  vkds_context_info info = harness_info();
  info.device_memory_limit = 48 * MiB;
  vkds_resource *res;
  vkds_context *ctx = capped_context(&info, &res);
  if (!ctx) return;
  vkds_buffer *small = make(res, 4096, VKDS_MEMORY_DEVICE, 0), *big[16];
  int n = 0;
  for (; n < 16; ++n) {
    vkds_buffer *b = NULL;
    if (vkds_buffer_create(res, &(vkds_buffer_info){.size = 5 * MiB}, &b) != VKDS_SUCCESS) break;
    big[n] = b;
  }
  ck_assert_int_eq(n, 9);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "device_memory_limit"));
  /* (staging has no room left for a check through copies) their device ranges are
   * disjoint, the small buffer's too */
  for (int i = 0; i <= n; ++i) {
    vkds_buffer *x = i < n ? big[i] : small;
    uint64_t xa = vkds_buffer_address(x), xs = i < n ? 5 * MiB : 4096;
    ck_assert_uint_ne(xa, 0);
    for (int j = 0; j < i; ++j) {
      uint64_t ya = vkds_buffer_address(big[j]);
      ck_assert_msg(xa + xs <= ya || ya + 5 * MiB <= xa, "buffers %d and %d overlap", i, j);
    }
  }
  for (int i = 0; i < n; ++i) vkds_buffer_destroy(big[i]);
  vkds_buffer_destroy(small);
  vkds_context_destroy(ctx);
}
END_TEST

/* The staging ring that does not fit under device_memory_limit is named, with the fields
 * that size it: the message said "a buffer of vkds's own" (a configuration probe: a 16 MiB
 * cap and the default ring of 32 MiB failed a host sort of 4 MB). Upload through a
 * smaller ring then works. */
START_TEST(a_staging_ring_over_the_limit_is_named) {
  vkds_context_info info = harness_info();
  info.device_memory_limit = 16 * MiB;
  info.staging_chunks = 4, info.staging_chunk_bytes = 8 * MiB;
  vkds_resource *res;
  vkds_context *ctx = capped_context(&info, &res);
  if (!ctx) return;
  static uint32_t data[4096];
  vkds_buffer *b = make(res, sizeof data, VKDS_MEMORY_DEVICE, 0);
  ck_assert_int_eq(vkds_upload(res, vkds_view_of(b), data, sizeof data), VKDS_ERROR_OUT_OF_DEVICE_MEMORY);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "vkds_upload: the staging ring (4 chunks of 8388608 bytes"));
  /* named whole after a longer caller's name too (it was cut at 95 bytes: "...,
   * staging_chunk_byt: vkds_sort_by_key: no memory"; a probe) */
  static uint32_t keys[4096], values[4096];
  vkds_seq ks = vkds_seq_host(keys, 4096, VKDS_U32), vs = vkds_seq_host(values, 4096, VKDS_U32);
  vkds_policy *pol = fixed_policy(res);
  ck_assert_int_eq(vkds_sort_by_key(pol, &ks, &vs, VKDS_SORT_ASCENDING), VKDS_ERROR_OUT_OF_DEVICE_MEMORY);
  ck_assert_msg(strstr(vkds_last_error_message(), "vkds_sort_by_key: the staging ring (4 chunks of 8388608 bytes: "
                                                  "staging_chunks, staging_chunk_bytes): "),
                "%s", vkds_last_error_message());
  vkds_policy_release(pol);
  vkds_buffer_destroy(b);
  vkds_context_destroy(ctx);
  info.staging_chunk_bytes = 1 * MiB;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  res = vkds_context_resource(ctx, 0);
  b = make(res, sizeof data, VKDS_MEMORY_DEVICE, 0);
  ck_assert_vkds(vkds_upload(res, vkds_view_of(b), data, sizeof data));
  vkds_buffer_destroy(b);
  vkds_context_destroy(ctx);
}
END_TEST

/* Buffers vkds keeps idle give way when the device runs out of memory: the empty block
 * a small buffer leaves (kept for reuse) and the stream buffers a streamed call keeps for
 * the next. Under device_memory_limit they made every later allocation fail, the
 * application's too, until the context went (a probe). */
START_TEST(idle_buffers_give_way_when_memory_runs_out) {
  vkds_context_info info = harness_info();
  info.device_memory_limit = 32 * MiB;
  info.staging_chunks = 2;
  info.staging_chunk_bytes = 1 * MiB;
  vkds_context *ctx;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  vkds_resource *res = vkds_context_resource(ctx, 0);
  vkds_policy *pol = fixed_policy(res);
  vkds_buffer_destroy(make(res, 4096, VKDS_MEMORY_DEVICE, 0)); /* its block stays */
  enum { N = 4 << 20 };                                          /* 16 MiB of floats each way */
  float *in = malloc(N * sizeof *in), *out = malloc(N * sizeof *out);
  ck_assert(in && out);
  for (uint32_t i = 0; i < N; ++i) in[i] = (float)(i % 1000);
  vkds_seq ins = vkds_seq_host(in, N, VKDS_F32), outs = vkds_seq_host(out, N, VKDS_F32);
  for (int round = 0; round < 2; ++round) {
    ck_assert_vkds(vkds_transform(pol, &ins, &outs, "x + 1.0"));
    for (uint32_t i = 0; i < N; i += 997) harness_expect_float_eq(out[i], (float)(i % 1000) + 1.0f);
    vkds_memory_stats st;
    ck_assert_vkds(vkds_memory_get_stats(res, &st));
    /* kept for the next call: the stream buffers (in the small buffers' block); the
     * buffer below does not fit beside them */
    ck_assert_uint_gt(st.buffers, 0);
    ck_assert_uint_gt(st.device_local_bytes + 24 * MiB, 32 * MiB);
    vkds_buffer *big = make(res, 24 * MiB, VKDS_MEMORY_DEVICE, 0); /* fits once they are given back */
    vkds_buffer_destroy(big);
  }
  /* a call that finds no memory for a buffer of its own says so in its own name, and
   * names the cap that stopped it (where there is no memory to fall back to: lavapipe;
   * a discrete GPU's sort takes host memory) */
  enum { KEYS = 4 << 20 };
  uint32_t *keys = malloc(KEYS * sizeof *keys);
  ck_assert_ptr_nonnull(keys);
  for (uint32_t i = 0; i < KEYS; ++i) keys[i] = KEYS - i;
  vkds_seq ks = vkds_seq_host(keys, KEYS, VKDS_U32);
  if (has_fallback_memory(res)) {
    ck_assert_vkds(vkds_sort(pol, &ks, VKDS_SORT_ASCENDING));
    for (uint32_t i = 0; i < KEYS; i += 4093) ck_assert_uint_eq(keys[i], i + 1);
  } else {
    ck_assert_int_eq(vkds_sort(pol, &ks, VKDS_SORT_ASCENDING), VKDS_ERROR_OUT_OF_DEVICE_MEMORY);
    ck_assert_msg(strncmp(vkds_last_error_message(), "out of device memory: vkds_sort: ", 33) == 0 &&
                      strstr(vkds_last_error_message(), "device_memory_limit"), "%s", vkds_last_error_message());
    ck_assert_uint_eq(keys[0], KEYS); /* nothing written */
  }
  free(keys);
  free(in);
  free(out);
  vkds_policy_release(pol);
  vkds_context_destroy(ctx);
}
END_TEST

/* A streamed call whose launch arguments outgrow the push constants (a zip of ten host
 * arrays into an eleventh: 18 parameters, past lavapipe's 128 bytes) keeps them in
 * buffers of its own, and reuses them chunk after chunk. They were taken anew for every
 * chunk, doubling as they filled: 2^20 elements in chunks of 2,048 needed a 128 KiB
 * buffer on the 400th chunk, which a 384 KiB device_memory_limit refused, after the
 * host output of the chunks before had been written (929,792 of its elements; a probe).
 * Now the call succeeds; under a limit that leaves no room at all it fails writing
 * nothing. */
START_TEST(a_streamed_call_reuses_its_argument_buffers) {
  vkds_context_info info = harness_info();
  info.device_memory_limit = 384 * 1024;
  info.staging_chunks = 4, info.staging_chunk_bytes = 4096; /* chunks of 2,048 u32 */
  enum { N = 1 << 20, PARTS = 10 };
  uint32_t *in[PARTS], *out = malloc(N * sizeof *out);
  vkds_seq parts[PARTS];
  ck_assert_ptr_nonnull(out);
  for (int k = 0; k < PARTS; ++k) {
    in[k] = malloc(N * sizeof *in[k]);
    ck_assert_ptr_nonnull(in[k]);
    for (uint32_t i = 0; i < N; ++i) in[k][i] = i + (uint32_t)k;
    parts[k] = vkds_seq_host(in[k], N, VKDS_U32);
  }
  vkds_seq z = vkds_seq_zip(parts, PARTS), o = vkds_seq_host(out, N, VKDS_U32);
  const char *op = "x.p0 + x.p1 + x.p2 + x.p3 + x.p4 + x.p5 + x.p6 + x.p7 + x.p8 + x.p9";
  for (int round = 0; round < 2; ++round) {
    if (round == 1) info.device_memory_limit = 256 * 1024; /* the stream buffers fit, one argument buffer not */
    vkds_resource *res;
    vkds_context *ctx = capped_context(&info, &res);
    if (!ctx) break;
    vkds_policy *pol = fixed_policy(res);
    for (uint32_t i = 0; i < N; ++i) out[i] = 0xdeadbeefu;
    vkds_result r = vkds_transform(pol, &z, &o, op);
    if (round == 0) {
      ck_assert_msg(r == VKDS_SUCCESS, "%s", vkds_last_error_message());
      for (uint32_t i = 0; i < N; ++i) harness_expect_uint_eq(out[i], 10u * i + 45u);
    } else {
      ck_assert_int_eq(r, VKDS_ERROR_OUT_OF_DEVICE_MEMORY);
      ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "vkds_transform"));
      for (uint32_t i = 0; i < N; ++i) harness_expect_uint_eq(out[i], 0xdeadbeefu); /* nothing written */
    }
    vkds_policy_release(pol);
    vkds_context_destroy(ctx);
  }
  for (int k = 0; k < PARTS; ++k) free(in[k]);
  free(out);
}
END_TEST

/* An output staged on the call's device for another device's buffer is written back
 * through the host once the work is done, by that device's staging ring. Made only
 * then, under device_memory_limit it could be refused after the call's other outputs
 * had been written: a partition of host data into a host array and a buffer of a second
 * device whose memory was nearly full said "out of device memory" with the host array
 * written (a probe). The ring is made when the output is bound: the call fails before
 * anything is submitted or written, and succeeds once there is room. */
START_TEST(a_write_back_cannot_fail_late_for_its_staging_ring) {
  vkds_context_info info = harness_info();
  info.devices_per_physical = 2;
  info.device_memory_limit = 16 * MiB; /* blocks of 4 MiB */
  info.staging_chunks = 4, info.staging_chunk_bytes = 1 * MiB;
  vkds_resource *r0;
  vkds_context *ctx = capped_context(&info, &r0);
  if (!ctx) return;
  vkds_resource *r1 = NULL;
  for (uint32_t i = 0; i < vkds_context_resource_count(ctx) && !r1; ++i) {
    vkds_resource_info ri;
    ck_assert_vkds(vkds_resource_get_info(vkds_context_resource(ctx, i), &ri));
    if (ri.device_index == 1) r1 = vkds_context_resource(ctx, i);
  }
  ck_assert_ptr_nonnull(r1);
  vkds_policy *pol = fixed_policy(r0);
  enum { N = 4096 };
  static uint32_t in[N], evens[N], odds[N];
  for (uint32_t i = 0; i < N; ++i) in[i] = i, evens[i] = 0xaaaaaaaau;
  /* the second device: the output's block (4 MiB) and 11 MiB more leave no room for its
   * ring (4 MiB), which nothing has made yet */
  vkds_buffer *out = make(r1, N * 4, VKDS_MEMORY_DEVICE, 0), *fill = make(r1, 11 * MiB, VKDS_MEMORY_DEVICE, 0);
  vkds_seq is = vkds_seq_host(in, N, VKDS_U32), es = vkds_seq_host(evens, N, VKDS_U32);
  vkds_seq os = vkds_seq_buffer(vkds_view_of(out), VKDS_U32);
  uint64_t kept = 77;
  ck_assert_int_eq(vkds_partition(pol, &is, &es, &os, "x % 2u == 0u", &kept), VKDS_ERROR_OUT_OF_DEVICE_MEMORY);
  ck_assert_msg(strstr(vkds_last_error_message(), "vkds_partition: the staging ring"), "%s", vkds_last_error_message());
  ck_assert_uint_eq(kept, 77);
  for (uint32_t i = 0; i < N; ++i) harness_expect_uint_eq(evens[i], 0xaaaaaaaau); /* nothing written */
  vkds_buffer_destroy(fill);
  ck_assert_vkds(vkds_partition(pol, &is, &es, &os, "x % 2u == 0u", &kept));
  ck_assert_uint_eq(kept, N / 2);
  ck_assert_vkds(vkds_download(r1, odds, vkds_view_of(out), sizeof odds));
  for (uint32_t i = 0; i < N / 2; ++i) {
    harness_expect_uint_eq(evens[i], 2 * i);
    harness_expect_uint_eq(odds[i], 2 * i + 1);
  }
  vkds_buffer_destroy(out);
  vkds_policy_release(pol);
  vkds_context_destroy(ctx);
}
END_TEST

/* vkds_context_trim gives back what the context keeps idle, as running out of memory
 * does: the kept buffers, and the blocks they leave empty. The allocator keeps one empty
 * block of a type for the next buffer, and trim left it: an idle service held a 64 MiB
 * block after every trim, while trim said the buffers in it were given back (a soak
 * probe). */
START_TEST(trim_gives_back_empty_blocks) {
  vkds_context_info info = harness_info();
  info.max_queues_per_family = 1;
  vkds_context *ctx;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  vkds_resource *res = vkds_context_resource(ctx, 0);
  vkds_policy *pol = fixed_policy(res);
  vkds_memory_stats st;
  /* a buffer of the application's, gone: its block stays for the next one */
  vkds_buffer_destroy(make(res, 4096, VKDS_MEMORY_DEVICE, 0));
  ck_assert_vkds(vkds_memory_get_stats(res, &st));
  ck_assert_uint_eq(st.blocks, 1);
  ck_assert_uint_eq(st.buffers, 0);
  ck_assert_uint_eq(vkds_context_trim(ctx), 0);
  ck_assert_vkds(vkds_memory_get_stats(res, &st));
  ck_assert_uint_eq(st.blocks, 0);
  ck_assert_uint_eq(st.allocated_bytes, 0);
  /* an algorithm call's kept buffers (in a block of their own): trimmed with the block */
  enum { N = 1 << 16 };
  uint32_t *in = malloc(N * sizeof *in), *out = malloc(N * sizeof *out);
  ck_assert(in && out);
  for (uint32_t i = 0; i < N; ++i) in[i] = i;
  vkds_seq ins = vkds_seq_host(in, N, VKDS_U32), outs = vkds_seq_host(out, N, VKDS_U32);
  uint64_t kept;
  ck_assert_vkds(vkds_copy_if(pol, &ins, &outs, "(x & 1u) == 0u", &kept));
  ck_assert_uint_eq(kept, N / 2);
  ck_assert_vkds(vkds_memory_get_stats(res, &st));
  ck_assert_uint_gt(st.blocks, 0);
  ck_assert_uint_gt(vkds_context_trim(ctx), 0);
  ck_assert_vkds(vkds_memory_get_stats(res, &st));
  ck_assert_uint_eq(st.blocks, 0);
  /* and the next call makes what it needs again */
  ck_assert_vkds(vkds_copy_if(pol, &ins, &outs, "(x & 1u) == 1u", &kept));
  ck_assert_uint_eq(kept, N / 2);
  ck_assert_uint_eq(out[0], 1);
  free(in);
  free(out);
  vkds_policy_release(pol);
  vkds_context_destroy(ctx);
}
END_TEST

/* ---- import ---- */

START_TEST(imported_host_memory_is_used_in_place) {
  vkds_context *ctx = harness_context();
  vkds_resource *res = vkds_context_resource(ctx, 0);
  uint64_t align = vkds_import_alignment(res);
  ck_assert_uint_ne(align, 0); /* lavapipe has VK_EXT_external_memory_host */
  uint64_t size = 4 * align;
  unsigned char *host = aligned_alloc(align, size);
  memset(host, 0, size);
  vkds_buffer *imp;
  ck_assert_vkds(vkds_buffer_import_host(res, host, size, &imp));
  ck_assert_ptr_eq(vkds_buffer_map(imp), host);
  ck_assert_int_eq(vkds_buffer_memory(imp), VKDS_MEMORY_IMPORTED);
  ck_assert(vkds_buffer_is_on(imp, res));
  /* the GPU copies into the host memory itself: device buffer -> imported range */
  unsigned char *data = pattern(size, 7);
  vkds_buffer *dev = make(res, size, VKDS_MEMORY_DEVICE, 0);
  ck_assert_vkds(vkds_upload(res, vkds_view_of(dev), data, size));
  ck_assert_vkds(vkds_download(res, host + align, (vkds_view){dev, 0, 0}, 2 * align));
  ck_assert_mem_eq(host + align, data, 2 * align);
  ck_assert_uint_eq(host[0], 0);
  ck_assert_uint_eq(host[3 * align], 0);
  /* and from it: an upload whose source lies in imported memory */
  memset(data, 0x5a, size);
  memcpy(host, data, size);
  ck_assert_vkds(vkds_upload(res, vkds_view_of(dev), host, size));
  unsigned char *back = malloc(size);
  ck_assert_vkds(vkds_download(res, back, vkds_view_of(dev), size));
  ck_assert_mem_eq(back, data, size);
  /* misaligned pointer or size, NULL */
  vkds_buffer *b = (vkds_buffer *)1;
  ck_assert_int_eq(vkds_buffer_import_host(res, host + 1, align, &b), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_null(b);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "multiples of"));
  /* a range past the end of the address space (it was imported; a probe) */
  ck_assert_int_eq(vkds_buffer_import_host(res, (void *)(UINTPTR_MAX - align + 1), 2 * align, &b),
                   VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "past the end of the address space"));
  ck_assert_int_eq(vkds_buffer_import_host(res, host, align + 1, &b), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_buffer_import_host(res, NULL, align, &b), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_buffer_import_host(NULL, host, align, &b), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_uint_eq(vkds_import_alignment(NULL), 0);
  vkds_buffer_destroy(imp);
  ck_assert_uint_eq(host[align], data[0]); /* vkds left the memory alone */
  vkds_buffer_destroy(dev);
  free(back), free(data), free(host);
  vkds_context_destroy(ctx);
}
END_TEST

/* ---- staging ---- */

/* Uploads `n` pattern bytes into a device buffer at `offset`, downloads them into fresh
 * memory, and compares every byte. */
static void round_trip(vkds_resource *res, vkds_memory_kind kind, uint64_t n, uint64_t offset, uint32_t seed) {
  vkds_buffer *b = make(res, n + offset + 1, kind, 0);
  unsigned char *data = pattern(n, seed), *back = malloc(n + 1);
  memset(back, 0xee, n + 1);
  ck_assert_vkds(vkds_upload(res, (vkds_view){b, offset, 0}, data, n));
  ck_assert_vkds(vkds_download(res, back, (vkds_view){b, offset, 0}, n));
  ck_assert_msg(memcmp(back, data, n) == 0, "round trip of %llu bytes at offset %llu differs", (unsigned long long)n,
                (unsigned long long)offset);
  ck_assert_uint_eq(back[n], 0xee); /* nothing written past the end */
  free(data), free(back);
  vkds_buffer_destroy(b);
}

static const uint64_t sizes[] = {0, 1, 4095, MiB + 3};

START_TEST(exact_round_trips) {
  vkds_context *ctx = harness_context();
  vkds_resource *res = vkds_context_resource(ctx, 0);
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i)
    for (uint64_t offset = 0; offset <= 5; offset += 5) {
      round_trip(res, VKDS_MEMORY_DEVICE, sizes[i], offset, (uint32_t)i);
      round_trip(res, VKDS_MEMORY_MAPPED, sizes[i], offset, (uint32_t)i + 10);
      round_trip(res, VKDS_MEMORY_HOST, sizes[i], offset, (uint32_t)i + 20);
    }
  vkds_context_destroy(ctx);
}
END_TEST

/* 300 MiB: past lavapipe's 128 MiB maxStorageBufferRange, 38 trips around the ring. */
START_TEST(round_trip_300_mib) {
  vkds_context *ctx = harness_context();
  round_trip(vkds_context_resource(ctx, 0), VKDS_MEMORY_DEVICE, 300 * MiB, 0, 3);
  vkds_context_destroy(ctx);
}
END_TEST

/* A tiny ring (two 64 KiB chunks) so that every slot is waited for and reused many
 * times, with one helper thread splitting host copies. */
START_TEST(small_ring_wraps_around) {
  vkds_context_info info = harness_info();
  info.staging_chunks = 2;
  info.staging_chunk_bytes = 64 << 10;
  info.host_copy_threads = 2;
  vkds_context *ctx = NULL;
  /* shapes outside what vkds handles are refused by name (context.h) */
  vkds_context_info bad = info;
  bad.staging_chunk_bytes = 12;
  ck_assert_int_eq(vkds_context_create(&bad, &ctx), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_null(ctx);
  ck_assert_msg(strstr(vkds_last_error_message(), "staging_chunk_bytes 12"), "%s", vkds_last_error_message());
  bad.staging_chunk_bytes = UINT64_MAX;
  ck_assert_int_eq(vkds_context_create(&bad, &ctx), VKDS_ERROR_INVALID_ARGUMENT);
  bad = info, bad.staging_chunks = 65;
  ck_assert_int_eq(vkds_context_create(&bad, &ctx), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  vkds_resource *res = vkds_context_resource(ctx, 0);
  round_trip(res, VKDS_MEMORY_DEVICE, MiB + 3, 0, 1);
  round_trip(res, VKDS_MEMORY_DEVICE, 3 * (64 << 10), 17, 2); /* exactly whole chunks */
  round_trip(res, VKDS_MEMORY_MAPPED, 8 * MiB + 1, 0, 3);     /* parallel memcpy path */
  vkds_context_destroy(ctx);
}
END_TEST

/* Memory treated as not host-coherent (lib/memory/memory_test.h: every host-visible
 * type here is coherent, so these paths run on no device at hand): the staging ring's
 * and the directly passed sequences' flushes and invalidations are made, over ranges the
 * validation layer checks (inside shared blocks, at offsets that are not multiples of
 * nonCoherentAtomSize), and every value arrives. */
START_TEST(noncoherent_memory_is_flushed_and_invalidated) {
  vkds__test_treat_memory_noncoherent(true);
  vkds_context_info info = harness_info();
  info.staging_chunks = 2;
  info.staging_chunk_bytes = 64 << 10;
  vkds_context *ctx = NULL;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  vkds_resource *res = vkds_context_resource(ctx, 0);
  round_trip(res, VKDS_MEMORY_DEVICE, MiB + 3, 5, 1);
  round_trip(res, VKDS_MEMORY_MAPPED, 4095, 3, 2);
  round_trip(res, VKDS_MEMORY_READBACK, 200001, 9, 3);
  enum { N = 5003 };
  vkds_buffer *pad = make(res, 100, VKDS_MEMORY_MAPPED, 0), *in = make(res, N * 4, VKDS_MEMORY_MAPPED, 0);
  vkds_buffer *out = make(res, N * 4 + 12, VKDS_MEMORY_READBACK, 0);
  uint32_t *x = vkds_buffer_map(in), sum = 0;
  for (uint32_t i = 0; i < N; ++i) x[i] = i * 7u + 1u, sum += 3u * x[i];
  vkds_policy *pol = fixed_policy(res);
  vkds_seq xs = vkds_seq_buffer(vkds_view_of(in), VKDS_U32), ys = vkds_seq_buffer((vkds_view){out, 12, N * 4}, VKDS_U32);
  ck_assert_vkds(vkds_transform(pol, &xs, &ys, "x * 3u"));
  const uint32_t *y = (const uint32_t *)((const char *)vkds_buffer_map(out) + 12);
  for (uint32_t i = 0; i < N; ++i) ck_assert_uint_eq(y[i], 3u * x[i]);
  uint32_t got = 0;
  ck_assert_vkds(vkds_reduce(pol, &ys, NULL, NULL, &got));
  ck_assert_uint_eq(got, sum);
  vkds_policy_release(pol);
  vkds_buffer_destroy(pad), vkds_buffer_destroy(in), vkds_buffer_destroy(out);
  vkds_context_destroy(ctx);
  vkds__test_treat_memory_noncoherent(false);
}
END_TEST

typedef struct worker {
  vkds_resource *res;
  uint32_t seed;
} worker;

static void *transfer_worker(void *arg) {
  worker *w = arg;
  for (int i = 0; i < 3; ++i) round_trip(w->res, VKDS_MEMORY_DEVICE, 3 * MiB + w->seed, w->seed, w->seed * 3 + i);
  return NULL;
}

START_TEST(transfers_from_four_threads) {
  vkds_context_info info = harness_info();
  info.staging_chunk_bytes = 1 * MiB;
  vkds_context *ctx;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  pthread_t t[4];
  worker w[4];
  for (uint32_t i = 0; i < 4; ++i) {
    w[i] = (worker){vkds_context_resource(ctx, 0), i + 1};
    ck_assert_int_eq(pthread_create(&t[i], NULL, transfer_worker, &w[i]), 0);
  }
  for (int i = 0; i < 4; ++i) pthread_join(t[i], NULL);
  vkds_context_destroy(ctx);
}
END_TEST

START_TEST(transfer_errors) {
  vkds_context_info info = harness_info();
  info.devices_per_physical = 2;
  vkds_context *ctx;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  ck_assert_uint_eq(vkds_context_device_count(ctx), 2);
  vkds_resource *r0 = vkds_context_resource(ctx, 0), *r1 = harness_device_resource(ctx, 1);
  vkds_buffer *b = make(r0, 64, VKDS_MEMORY_DEVICE, 0);
  char data[128] = {0};
  ck_assert_int_eq(vkds_upload(NULL, vkds_view_of(b), data, 8), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_upload(r0, vkds_view_of(NULL), data, 8), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_upload(r0, vkds_view_of(b), NULL, 8), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_upload(r0, vkds_view_of(b), data, 65), VKDS_ERROR_INVALID_ARGUMENT);
  /* a whole-buffer view (bytes 0) is named by its size, not as "0 bytes" (a README probe) */
  ck_assert_msg(strstr(vkds_last_error_message(), "the view (64 bytes: to the end of the buffer)"), "%s",
                vkds_last_error_message());
  ck_assert_int_eq(vkds_upload(r0, (vkds_view){b, 60, 0}, data, 8), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_upload(r0, (vkds_view){b, 0, 4}, data, 8), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_upload(r0, (vkds_view){b, 65, 0}, data, 0), VKDS_ERROR_INVALID_ARGUMENT);
  /* a view running past its buffer, even where the bytes copied would fit */
  ck_assert_int_eq(vkds_download(r0, data, (vkds_view){b, 0, 100}, 4), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_upload(r0, (vkds_view){b, 8, UINT64_MAX - 7}, data, 4), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_upload(r0, (vkds_view){b, 60, 8}, data, 4), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_vkds(vkds_upload(r0, (vkds_view){b, 56, 8}, data, 4));
  /* through another device's queue: WRONG_DEVICE, as launches and the recording form
   * say (it was INVALID_ARGUMENT: a probe) */
  ck_assert_int_eq(vkds_download(r1, data, vkds_view_of(b), 8), VKDS_ERROR_WRONG_DEVICE);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "device"));
  ck_assert_int_eq(vkds_upload(r1, vkds_view_of(b), data, 8), VKDS_ERROR_WRONG_DEVICE);
  ck_assert_int_eq(vkds_download(r0, NULL, vkds_view_of(b), 8), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_vkds(vkds_upload(r0, vkds_view_of(b), NULL, 0)); /* nothing to do */
  /* the buffer's own mapping over the copied range: refused (a memcpy of overlapping
   * ranges; a memory probe); a part of it beside that range is fine */
  vkds_buffer *m = make(r0, 256, VKDS_MEMORY_MAPPED, 0);
  unsigned char *mp = vkds_buffer_map(m);
  for (int i = 0; i < 256; ++i) mp[i] = (unsigned char)i;
  ck_assert_int_eq(vkds_upload(r0, (vkds_view){m, 8, 0}, mp, 64), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "overlaps the buffer's own memory"));
  ck_assert_int_eq(vkds_download(r0, mp + 100, (vkds_view){m, 64, 0}, 64), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_uint_eq(mp[8], 8);
  ck_assert_vkds(vkds_upload(r0, (vkds_view){m, 64, 0}, mp, 64)); /* [0, 64) into [64, 128) */
  ck_assert_uint_eq(mp[64], 0);
  ck_assert_uint_eq(mp[127], 63);
  vkds_buffer_destroy(m);
  /* sizes no memory holds fail cleanly (sizes near 2^64 once wrapped in the rounding and
   * came back as small buffers that writes overran) */
  static const uint64_t absurd[] = {UINT64_MAX, UINT64_MAX - 100, 1ull << 63};
  for (int kind = VKDS_MEMORY_DEVICE; kind <= VKDS_MEMORY_HOST; ++kind)
    for (size_t i = 0; i < sizeof absurd / sizeof absurd[0]; ++i) {
      vkds_buffer *huge = (vkds_buffer *)1;
      vkds_result r = vkds_buffer_create(r0, &(vkds_buffer_info){.size = absurd[i], .memory = (vkds_memory_kind)kind}, &huge);
      ck_assert_msg(r == VKDS_ERROR_OUT_OF_DEVICE_MEMORY || r == VKDS_ERROR_OUT_OF_HOST_MEMORY, "kind %d size %llu: %s",
                    kind, (unsigned long long)absurd[i], vkds_result_str(r));
      ck_assert_ptr_null(huge);
    }
  /* a buffer of another context: named as such, by transfers and by vkds_seq_bind in
   * both directions (a write used to bind and lose its elements at the unbind) */
  vkds_context *other;
  ck_assert_vkds(vkds_context_create(&(vkds_context_info){.validation = true}, &other));
  vkds_buffer *foreign = make(vkds_context_resource(other, 0), 64, VKDS_MEMORY_DEVICE, 0);
  ck_assert_int_eq(vkds_upload(r0, vkds_view_of(foreign), data, 8), VKDS_ERROR_WRONG_CONTEXT);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "another context"));
  ck_assert_int_eq(vkds_download(r0, data, vkds_view_of(foreign), 8), VKDS_ERROR_WRONG_CONTEXT);
  vkds_seq fs = vkds_seq_buffer(vkds_view_of(foreign), VKDS_U32);
  vkds_seq rev = vkds_seq_reverse(&fs);
  for (int access = VKDS_ACCESS_READ_WRITE; access <= VKDS_ACCESS_WRITE; ++access) {
    vkds_seq_binding bound;
    ck_assert_int_eq(vkds_seq_bind(r0, &fs, (vkds_access)access, &bound), VKDS_ERROR_WRONG_CONTEXT);
    ck_assert_ptr_null(bound.view.buffer);
    ck_assert_int_eq(vkds_seq_bind(r0, &rev, VKDS_ACCESS_READ, &bound), VKDS_ERROR_WRONG_CONTEXT);
  }
  vkds_buffer_destroy(foreign);
  vkds_context_destroy(other);
  vkds_buffer_destroy(b);
  vkds_context_destroy(ctx);
}
END_TEST

/* ---- sequences handed to a device (vkds_seq_bind) ---- */

/* The device bytes behind a binding. */
static void *device_bytes(vkds_resource *res, const vkds_seq_binding *b) {
  void *p = malloc(b->view.bytes);
  ck_assert_vkds(vkds_download(res, p, b->view, b->view.bytes));
  return p;
}

START_TEST(binding_follows_the_trait) {
  vkds_context_info info = harness_info();
  info.devices_per_physical = 2;
  vkds_context *ctx;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  vkds_resource *r0 = vkds_context_resource(ctx, 0), *r1 = harness_device_resource(ctx, 1);
  enum { N = 1000 };
  uint32_t data[N];
  for (uint32_t i = 0; i < N; ++i) data[i] = i * 7 + 1;
  vkds_buffer *b0 = make(r0, sizeof data, VKDS_MEMORY_DEVICE, 0);
  ck_assert_vkds(vkds_upload(r0, vkds_view_of(b0), data, sizeof data));

  /* a device buffer on its own device: itself, nothing copied */
  vkds_seq s = vkds_seq_buffer(vkds_view_of(b0), VKDS_U32);
  vkds_seq_binding bd;
  ck_assert_vkds(vkds_seq_bind(r0, &s, VKDS_ACCESS_READ_WRITE, &bd));
  ck_assert(!bd.staged);
  ck_assert_ptr_eq(bd.view.buffer, b0);
  ck_assert_vkds(vkds_seq_unbind(&bd));
  /* the same buffer for a kernel on the other device: staged both ways */
  ck_assert_vkds(vkds_seq_bind(r1, &s, VKDS_ACCESS_READ_WRITE, &bd));
  ck_assert(bd.staged);
  ck_assert(vkds_buffer_is_on(bd.view.buffer, r1));
  uint32_t *seen = device_bytes(r1, &bd);
  ck_assert_mem_eq(seen, data, sizeof data);
  for (uint32_t i = 0; i < N; ++i) seen[i] = ~data[i]; /* "the kernel" writes */
  ck_assert_vkds(vkds_upload(r1, bd.view, seen, sizeof data));
  ck_assert_vkds(vkds_seq_unbind(&bd));
  uint32_t back[N];
  ck_assert_vkds(vkds_download(r0, back, vkds_view_of(b0), sizeof back));
  ck_assert_mem_eq(back, seen, sizeof back);
  free(seen);

  /* host memory: uploaded for reading, copied back only for writing */
  uint32_t host[N];
  memcpy(host, data, sizeof host);
  vkds_seq h = vkds_seq_host(host, N, VKDS_U32);
  ck_assert_vkds(vkds_seq_bind(r0, &h, VKDS_ACCESS_READ, &bd));
  ck_assert(bd.staged);
  seen = device_bytes(r0, &bd);
  ck_assert_mem_eq(seen, data, sizeof data);
  memset(seen, 0, sizeof data);
  ck_assert_vkds(vkds_upload(r0, bd.view, seen, sizeof data));
  ck_assert_vkds(vkds_seq_unbind(&bd));
  ck_assert_mem_eq(host, data, sizeof host); /* read-only binding: not copied back */
  ck_assert_vkds(vkds_seq_bind(r0, &h, VKDS_ACCESS_WRITE, &bd));
  ck_assert_vkds(vkds_upload(r0, bd.view, seen, sizeof data));
  ck_assert_vkds(vkds_seq_unbind(&bd));
  ck_assert_mem_eq(host, seen, sizeof host);
  free(seen);
  vkds_seq hc = vkds_seq_host_const(data, N, VKDS_U32);
  ck_assert_int_eq(vkds_seq_bind(r0, &hc, VKDS_ACCESS_WRITE, &bd), VKDS_ERROR_INVALID_ARGUMENT);

  /* imported host memory: used in place */
  uint64_t align = vkds_import_alignment(r0);
  uint32_t *pinned = aligned_alloc(align, align);
  vkds_buffer *imp;
  ck_assert_vkds(vkds_buffer_import_host(r0, pinned, align, &imp));
  vkds_seq ps = vkds_seq_host(pinned + 4, 8, VKDS_U32);
  ck_assert_vkds(vkds_seq_bind(r0, &ps, VKDS_ACCESS_READ_WRITE, &bd));
  ck_assert(!bd.staged);
  ck_assert_ptr_eq(bd.view.buffer, imp);
  ck_assert_uint_eq(bd.view.offset, 16);
  ck_assert_vkds(vkds_seq_unbind(&bd));
  ck_assert_vkds(vkds_seq_bind(r1, &ps, VKDS_ACCESS_READ, &bd)); /* imported into r0's device only */
  ck_assert(bd.staged);
  ck_assert_vkds(vkds_seq_unbind(&bd));

  /* views: read element by element; only discard can be written */
  vkds_seq c = vkds_seq_counting(5, N, VKDS_U32);
  ck_assert_vkds(vkds_seq_bind(r0, &c, VKDS_ACCESS_READ, &bd));
  seen = device_bytes(r0, &bd);
  for (uint32_t i = 0; i < N; ++i) harness_expect_uint_eq(seen[i], 5 + i);
  free(seen);
  ck_assert_vkds(vkds_seq_unbind(&bd));
  vkds_seq rev = vkds_seq_reverse(&h);
  ck_assert_vkds(vkds_seq_bind(r0, &rev, VKDS_ACCESS_READ, &bd));
  seen = device_bytes(r0, &bd);
  for (uint32_t i = 0; i < N; ++i) harness_expect_uint_eq(seen[i], host[N - 1 - i]);
  free(seen);
  ck_assert_vkds(vkds_seq_unbind(&bd));
  ck_assert_int_eq(vkds_seq_bind(r0, &rev, VKDS_ACCESS_WRITE, &bd), VKDS_ERROR_UNSUPPORTED);
  vkds_seq d = vkds_seq_discard(N, VKDS_F32);
  ck_assert_vkds(vkds_seq_bind(r0, &d, VKDS_ACCESS_WRITE, &bd));
  ck_assert(bd.staged);
  ck_assert_uint_eq(bd.view.bytes, N * 4);
  ck_assert_vkds(vkds_seq_unbind(&bd));
  vkds_seq empty = vkds_seq_host(host, 0, VKDS_U32);
  ck_assert_vkds(vkds_seq_bind(r0, &empty, VKDS_ACCESS_READ_WRITE, &bd));
  ck_assert_uint_eq(bd.view.bytes, 0);
  ck_assert_vkds(vkds_seq_unbind(&bd));
  /* bad input */
  ck_assert_int_eq(vkds_seq_bind(NULL, &h, VKDS_ACCESS_READ, &bd), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_seq_bind(r0, NULL, VKDS_ACCESS_READ, &bd), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_seq_bind(r0, &h, (vkds_access)7, &bd), VKDS_ERROR_INVALID_ARGUMENT);
  vkds_seq bad = {0};
  ck_assert_int_eq(vkds_seq_bind(r0, &bad, VKDS_ACCESS_READ, &bd), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_vkds(vkds_seq_unbind(NULL));
  /* more than 2^64 bytes, or exactly: refused, not wrapped to 8 or 0 bytes (a limits
   * probe: a heap overflow, and an empty binding) */
  vkds_seq huge = vkds_seq_counting(0, (UINT64_C(1) << 61) + 1, VKDS_U64),
           wraps = vkds_seq_counting(0, UINT64_C(1) << 61, VKDS_U64);
  ck_assert_int_eq(vkds_seq_bind(r0, &huge, VKDS_ACCESS_READ, &bd), VKDS_ERROR_UNSUPPORTED);
  ck_assert_msg(strstr(vkds_last_error_message(), "more than 2^64 bytes"), "%s", vkds_last_error_message());
  ck_assert_int_eq(vkds_seq_bind(r0, &wraps, VKDS_ACCESS_READ, &bd), VKDS_ERROR_UNSUPPORTED);

  vkds_buffer_destroy(imp);
  free(pinned);
  vkds_buffer_destroy(b0);
  vkds_context_destroy(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("memory");
  TCase *tc = harness_tcase("buffers");
  tcase_add_test(tc, small_buffers_share_a_block);
  tcase_add_test(tc, large_or_dedicated_buffers_get_their_own_memory);
  tcase_add_test(tc, memory_kinds);
  tcase_add_test(tc, device_memory_limit_falls_back_then_fails_cleanly);
  tcase_add_test(tc, large_buffers_use_a_blocks_room_at_the_limit);
  tcase_add_test(tc, a_staging_ring_over_the_limit_is_named);
  tcase_add_test(tc, idle_buffers_give_way_when_memory_runs_out);
  tcase_add_test(tc, a_streamed_call_reuses_its_argument_buffers);
  tcase_add_test(tc, a_write_back_cannot_fail_late_for_its_staging_ring);
  tcase_add_test(tc, trim_gives_back_empty_blocks);
  tcase_add_test(tc, imported_host_memory_is_used_in_place);
  suite_add_tcase(s, tc);
  tc = harness_tcase("staging");
  tcase_add_test(tc, exact_round_trips);
  tcase_add_test(tc, small_ring_wraps_around);
  tcase_add_test(tc, transfers_from_four_threads);
  tcase_add_test(tc, transfer_errors);
  tcase_add_test(tc, noncoherent_memory_is_flushed_and_invalidated);
  tcase_add_test(tc, binding_follows_the_trait);
  suite_add_tcase(s, tc);
  /* (long: not in the sanitizer stages, where it took 30 s under TSan; the ring's
   * wrapping and the copy threads run there in the cases above) */
  tc = harness_long_tcase("big_transfers");
  tcase_add_test(tc, round_trip_300_mib);
  suite_add_tcase(s, tc);
  return harness_run(s);
}
