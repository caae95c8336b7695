/* tests/test_merge_sort.c: the comparison sort (vkds/algorithm.h, "the comparison sort")
 * on lavapipe, validation on: comparators over every element type against the C
 * library's qsort with the same comparator (made stable by the original index), so that
 * stability shows (comparators that see only part of an element); sizes around the tile
 * (1024), a merge group (2048) and the merge passes, both ways a pass finds its groups'
 * starts; host data staged, mapped memory, a reverse view, the three forms, data on
 * another VkDevice; records (zips) sorted in place; bad input (a comparator that does not
 * compile, NULLs, what cannot be written). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_cmd.h"
#include "harness.h"

static vkds_context *ctx;
static vkds_resource *r0;
static vkds_policy *pol;

static void open_ctx(void) { harness_open_fixed(NULL, &ctx, &r0, &pol); }
static void close_ctx(void) { harness_close_fixed(&ctx, &pol); }

static uint64_t rng_state = 0x13198a2e03707344ull;
static uint64_t rnd(void) { return harness_xorshift(&rng_state); }

/* A comparator on the device and the same one on the host. */
typedef struct comparator {
  vkds_type type;
  const char *glsl;
  bool (*less)(const void *a, const void *b);
  void (*make)(void *p, uint64_t i); /* element i of the input */
} comparator;

static bool i32_less(const void *a, const void *b) { return *(const int32_t *)a < *(const int32_t *)b; }
static void i32_make(void *p, uint64_t i) { ((int32_t *)p)[i] = (int32_t)(rnd() % 100000) - 50000; }
static bool low_nibble_less(const void *a, const void *b) { return (*(const uint32_t *)a & 15u) < (*(const uint32_t *)b & 15u); }
static void u32_make(void *p, uint64_t i) { ((uint32_t *)p)[i] = (uint32_t)rnd(); }
static bool abs_less(const void *a, const void *b) { return fabs(*(const double *)a) < fabs(*(const double *)b); }
static void f64_make(void *p, uint64_t i) { ((double *)p)[i] = (double)((int64_t)(rnd() % 2001) - 1000) / 8.0; }
static bool i64_greater(const void *a, const void *b) { return *(const int64_t *)a > *(const int64_t *)b; }
static void i64_make(void *p, uint64_t i) { ((int64_t *)p)[i] = (int64_t)(rnd() % 1000) - (int64_t)500 * 0x100000000ll; }
static bool f32_less(const void *a, const void *b) { return *(const float *)a < *(const float *)b; }
static void f32_make(void *p, uint64_t i) { ((float *)p)[i] = (float)((int64_t)(rnd() % 4001) - 2000) * 0.25f; }
static bool high_half_less(const void *a, const void *b) { return (*(const uint64_t *)a >> 32) < (*(const uint64_t *)b >> 32); }
static void u64_make(void *p, uint64_t i) { ((uint64_t *)p)[i] = (rnd() % 64) << 32 | i; } /* low half: the index */

static const comparator COMPARATORS[] = {
    {VKDS_I32, "a < b", i32_less, i32_make},
    {VKDS_U32, "(a & 15u) < (b & 15u)", low_nibble_less, u32_make},
    {VKDS_F32, "a < b", f32_less, f32_make},
    {VKDS_I64, "a > b", i64_greater, i64_make},
    {VKDS_U64, "(a >> 32) < (b >> 32)", high_half_less, u64_make},
    {VKDS_F64, "abs(a) < abs(b)", abs_less, f64_make},
};

/* The reference: qsort with the comparator, ties by original index (a stable sort). */
static const comparator *ref;
static const unsigned char *ref_data;
static int cmp_index(const void *x, const void *y) {
  uint64_t i = *(const uint64_t *)x, j = *(const uint64_t *)y;
  uint32_t s = vkds_type_size(ref->type);
  if (ref->less(ref_data + i * s, ref_data + j * s)) return -1;
  if (ref->less(ref_data + j * s, ref_data + i * s)) return 1;
  return i < j ? -1 : i > j;
}

static void check(const comparator *c, const void *in, const void *got, uint64_t n, const char *what) {
  uint64_t *order = malloc((n ? n : 1) * 8);
  for (uint64_t i = 0; i < n; ++i) order[i] = i;
  ref = c, ref_data = in;
  qsort(order, n, 8, cmp_index);
  uint32_t s = vkds_type_size(c->type);
  for (uint64_t i = 0; i < n; ++i)
    if (memcmp((const unsigned char *)got + i * s, (const unsigned char *)in + order[i] * s, s) != 0)
      ck_abort_msg("%s: \"%s\" n %llu: [%llu] differs (want element %llu)", what, c->glsl, (unsigned long long)n,
                   (unsigned long long)i, (unsigned long long)order[i]);
  free(order);
}

/* Sorts n elements of `in` in a device buffer by c's comparator into `got`, and checks
 * them (n = 0: an empty host sequence, as a buffer cannot be empty). */
static void sort_in_buffer(const comparator *c, const void *in, void *got, uint64_t n, const char *what) {
  uint32_t s = vkds_type_size(c->type);
  vkds_buffer *b;
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = n ? n * s : 16}, &b));
  if (n) ck_assert_vkds(vkds_upload(r0, vkds_view_of(b), in, n * s));
  vkds_seq bs = n ? vkds_seq_buffer((vkds_view){b, 0, n * s}, c->type) : vkds_seq_host(got, 0, c->type);
  ck_assert_vkds(vkds_merge_sort(pol, &bs, c->glsl));
  if (n) ck_assert_vkds(vkds_download(r0, got, vkds_view_of(b), n * s));
  check(c, in, got, n, what);
  vkds_buffer_destroy(b);
}

START_TEST(every_comparator) {
  const comparator *c = &COMPARATORS[_i];
  open_ctx();
  /* around the tile, a merge group (2048 outputs) and a pair of runs ending a group */
  const uint64_t sizes[] = {0, 1, 2, 3, 5, 1023, 1024, 1025, 2048, 4096, 4097, 8197, 100003};
  unsigned char *in = malloc(100003 * 8), *got = malloc(100003 * 8);
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; ++si) {
    uint64_t n = sizes[si];
    for (uint64_t i = 0; i < n; ++i) c->make(in, i);
    sort_in_buffer(c, in, got, n, "buffer");
  }
  free(in), free(got);
  close_ctx();
}
END_TEST

/* VKDS_MSORT_PASSES is read as the other knobs are: what is not a plain whole number
 * is unset, so the sort is whole (" 0" and "+0" read as 0 passes: unsorted output, with
 * no word said; a new-user probe). Its 0 itself records no merge pass, as documented. */
START_TEST(merge_passes_knob) {
  open_ctx();
  enum { N = 5000 };
  const comparator *c = &COMPARATORS[1];
  uint32_t *in = malloc(N * 4), *got = malloc(N * 4);
  for (uint64_t i = 0; i < N; ++i) c->make(in, i);
  static const char *const ignored[] = {" 0", "+0", "0 ", "0x0", "zero", "-1", ""};
  for (size_t i = 0; i < sizeof ignored / sizeof *ignored; ++i) {
    harness_setenv("VKDS_MSORT_PASSES", ignored[i]);
    sort_in_buffer(c, in, got, N, ignored[i]);
  }
  harness_setenv("VKDS_MSORT_PASSES", "0"); /* the tiles alone: sorted within 1024 */
  vkds_buffer *b;
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = N * 4}, &b));
  ck_assert_vkds(vkds_upload(r0, vkds_view_of(b), in, N * 4));
  vkds_seq bs = vkds_seq_buffer(vkds_view_of(b), VKDS_U32);
  ck_assert_vkds(vkds_merge_sort(pol, &bs, c->glsl));
  ck_assert_vkds(vkds_download(r0, got, vkds_view_of(b), N * 4));
  bool sorted = true;
  for (uint64_t i = 1; i < N; ++i) sorted &= !c->less(&got[i], &got[i - 1]);
  ck_assert_msg(!sorted, "VKDS_MSORT_PASSES=0 merged");
  harness_setenv("VKDS_MSORT_PASSES", NULL);
  vkds_buffer_destroy(b);
  free(in), free(got);
  close_ctx();
}
END_TEST

START_TEST(sequences_and_forms) {
  enum { N = 300007 }; /* 9 merge passes */
  open_ctx();
  const comparator *c = &COMPARATORS[1]; /* the low nibble: stability shows everywhere */
  uint32_t *in = malloc(N * 4), *got = malloc(N * 4), *rin = malloc(N * 4);
  for (uint64_t i = 0; i < N; ++i) c->make(in, i);
  /* host memory, staged */
  memcpy(got, in, N * 4);
  vkds_seq hs = vkds_seq_host(got, N, VKDS_U32);
  ck_assert_vkds(vkds_merge_sort(pol, &hs, c->glsl));
  check(c, in, got, N, "host");
  /* mapped memory (host-visible, passed directly) */
  vkds_buffer *mapped;
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = N * 4, .memory = VKDS_MEMORY_MAPPED}, &mapped));
  memcpy(vkds_buffer_map(mapped), in, N * 4);
  vkds_seq ms = vkds_seq_mapped(vkds_view_of(mapped), VKDS_U32);
  ck_assert_vkds(vkds_merge_sort(pol, &ms, c->glsl));
  check(c, in, vkds_buffer_map(mapped), N, "mapped");
  vkds_buffer_destroy(mapped);
  /* a reverse view of a buffer, asynchronous */
  vkds_buffer *b;
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = N * 4}, &b));
  ck_assert_vkds(vkds_upload(r0, vkds_view_of(b), in, N * 4));
  vkds_seq bs = vkds_seq_buffer(vkds_view_of(b), VKDS_U32), rv = vkds_seq_reverse(&bs);
  vkds_submission *sub;
  ck_assert_vkds(vkds_merge_sort_async(pol, &rv, c->glsl, &sub));
  ck_assert_vkds(vkds_submission_wait(sub));
  vkds_submission_release(sub);
  ck_assert_vkds(vkds_download(r0, got, vkds_view_of(b), N * 4));
  for (uint64_t i = 0; i < N; ++i) rin[i] = in[N - 1 - i];
  uint32_t *seen = malloc(N * 4);
  for (uint64_t i = 0; i < N; ++i) seen[i] = got[N - 1 - i];
  check(c, rin, seen, N, "reverse view");
  /* recorded into the application's command buffer, with its scratch */
  ck_assert_vkds(vkds_upload(r0, vkds_view_of(b), in, N * 4));
  uint64_t bytes = vkds_merge_sort_scratch_bytes(r0, N, VKDS_U32);
  ck_assert_uint_ge(bytes, N * 4);
  ck_assert_uint_ge(vkds_algorithm_scratch_bytes(r0, N), bytes);
  vkds_buffer *scratch;
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = bytes}, &scratch));
  app_cmd a = {0};
  app_cmd_begin(&a, r0);
  vkds_cmd cc = {.cmd = a.cmd, .resource = r0, .scratch = vkds_view_of(scratch)};
  ck_assert_vkds(vkds_cmd_merge_sort(&cc, &bs, c->glsl));
  vkds_cmd small = {.cmd = a.cmd, .resource = r0, .scratch = (vkds_view){scratch, 0, bytes - 16}};
  ck_assert_int_eq(vkds_cmd_merge_sort(&small, &bs, c->glsl), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_cmd_merge_sort(&cc, &hs, c->glsl), VKDS_ERROR_INVALID_ARGUMENT); /* host: not recordable */
  app_cmd_submit(&a, 60);
  ck_assert_vkds(vkds_download(r0, got, vkds_view_of(b), N * 4));
  check(c, in, got, N, "recorded");
  app_cmd_destroy(&a);
  vkds_buffer_destroy(b), vkds_buffer_destroy(scratch);
  free(in), free(got), free(rin), free(seen);
  close_ctx();
}
END_TEST

/* Above 2^21 elements every merge pass has a partition dispatch before it (msort.c
 * searches_in_group; below, only the passes of runs longer than 2^16, as the last two of
 * sequences_and_forms): 2^21 + 2049 elements, the last group a part, stability showing. */
START_TEST(partition_passes) {
  enum { N = (1 << 21) + 2049 };
  open_ctx();
  const comparator *c = &COMPARATORS[1]; /* the low nibble */
  uint32_t *in = malloc(N * 4), *got = malloc(N * 4);
  for (uint64_t i = 0; i < N; ++i) c->make(in, i);
  sort_in_buffer(c, in, got, N, "partitioned");
  free(in), free(got);
  close_ctx();
}
END_TEST

/* Zips sorted in place (each part written): (u32 key, u32 index) by the key, stable, in
 * device buffers and in host memory (staged, both parts written back); 16-byte tuples
 * (u64, u64) by the second part, descending; (f32, u32, u64) by the float; a tuple whose
 * std430 layout (4, 8, 4 bytes: 24) does not fit lavapipe's shared memory, 24 bytes of
 * parts, a zip of a part with itself: named errors. */
START_TEST(zips_in_place) {
  /* (40,009 in the sanitizer stages: 12 s there) */
  const uint32_t N = harness_top_log2(17) == 17 ? 100003 : 40009;
  open_ctx();
  uint32_t *k = malloc(N * 4), *ix = malloc(N * 4), *k2 = malloc(N * 4), *ix2 = malloc(N * 4);
  uint64_t *w = malloc(N * 8), *x = malloc(N * 8);
  uint64_t st = 0x9e3779b97f4a7c15ull;
  for (uint32_t i = 0; i < N; ++i) {
    st = st * 6364136223846793005ull + 1442695040888963407ull;
    k[i] = (uint32_t)(st >> 33) % 1000u, ix[i] = i;
    w[i] = st >> 7, x[i] = (st >> 40) % 5000u; /* x: ties */
  }
  for (int where = 0; where < 2; ++where) {
    memcpy(k2, k, N * 4), memcpy(ix2, ix, N * 4);
    vkds_buffer *kb = NULL, *ib = NULL;
    vkds_seq parts[2];
    if (where == 0) {
      ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = N * 4}, &kb));
      ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = N * 4}, &ib));
      ck_assert_vkds(vkds_upload(r0, vkds_view_of(kb), k, N * 4));
      ck_assert_vkds(vkds_upload(r0, vkds_view_of(ib), ix, N * 4));
      parts[0] = vkds_seq_buffer(vkds_view_of(kb), VKDS_U32), parts[1] = vkds_seq_buffer(vkds_view_of(ib), VKDS_U32);
    } else {
      parts[0] = vkds_seq_host(k2, N, VKDS_U32), parts[1] = vkds_seq_host(ix2, N, VKDS_U32);
    }
    vkds_seq z = vkds_seq_zip(parts, 2);
    ck_assert_vkds(vkds_merge_sort(pol, &z, "a.p0 < b.p0"));
    if (where == 0) {
      ck_assert_vkds(vkds_download(r0, k2, vkds_view_of(kb), N * 4));
      ck_assert_vkds(vkds_download(r0, ix2, vkds_view_of(ib), N * 4));
      vkds_buffer_destroy(kb), vkds_buffer_destroy(ib);
    }
    for (uint32_t i = 0; i < N; ++i) {
      ck_assert_msg(k2[i] == k[ix2[i]], "%s [%u]: the key %u is not its index's (%u)", where ? "host" : "buffer", i,
                    k2[i], ix2[i]);
      if (i)
        ck_assert_msg(k2[i - 1] < k2[i] || (k2[i - 1] == k2[i] && ix2[i - 1] < ix2[i]),
                      "%s [%u]: (%u, %u) after (%u, %u): not sorted stably", where ? "host" : "buffer", i, k2[i], ix2[i],
                      k2[i - 1], ix2[i - 1]);
    }
  }
  /* 16 bytes: (u64 w, u64 x) by x descending; ties keep w's order */
  vkds_buffer *wb, *xb;
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = N * 8}, &wb));
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = N * 8}, &xb));
  ck_assert_vkds(vkds_upload(r0, vkds_view_of(wb), w, N * 8));
  ck_assert_vkds(vkds_upload(r0, vkds_view_of(xb), x, N * 8));
  vkds_seq p2[2] = {vkds_seq_buffer(vkds_view_of(wb), VKDS_U64), vkds_seq_buffer(vkds_view_of(xb), VKDS_U64)};
  vkds_seq z2 = vkds_seq_zip(p2, 2);
  /* a view of a zip: refused, in words that say so (the message called the tuples
   * COMPOSITE elements that a zip takes; a probe) */
  vkds_seq view_of_zip = vkds_seq_reverse(&z2);
  ck_assert_int_eq(vkds_merge_sort(pol, &view_of_zip, "a.p1 > b.p1"), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "a zip itself, not a view of one"));
  ck_assert_vkds(vkds_merge_sort(pol, &z2, "a.p1 > b.p1"));
  uint64_t *w2 = malloc(N * 8), *x2 = malloc(N * 8);
  ck_assert_vkds(vkds_download(r0, w2, vkds_view_of(wb), N * 8));
  ck_assert_vkds(vkds_download(r0, x2, vkds_view_of(xb), N * 8));
  /* w is distinct and its order is the input's: position of each w in the input */
  for (uint32_t i = 1; i < N; ++i) ck_assert(x2[i - 1] >= x2[i]);
  uint64_t in_sum = 0, out_sum = 0;
  for (uint32_t i = 0; i < N; ++i) in_sum += w[i] * 31 + x[i], out_sum += w2[i] * 31 + x2[i];
  ck_assert_msg(in_sum == out_sum, "the 16-byte tuples are not a permutation of the input");
  /* (f32, u32, u64): 16 bytes, std430 16 */
  float *f = malloc(N * 4);
  for (uint32_t i = 0; i < N; ++i) f[i] = (float)((int)(k[i] % 97) - 48) * 0.5f;
  vkds_seq p3[3] = {vkds_seq_host(f, N, VKDS_F32), vkds_seq_host(ix2, N, VKDS_U32), vkds_seq_buffer(vkds_view_of(wb), VKDS_U64)};
  for (uint32_t i = 0; i < N; ++i) ix2[i] = i;
  ck_assert_vkds(vkds_upload(r0, vkds_view_of(wb), w, N * 8));
  vkds_seq z3 = vkds_seq_zip(p3, 3);
  ck_assert_vkds(vkds_merge_sort(pol, &z3, "a.p0 < b.p0"));
  ck_assert_vkds(vkds_download(r0, w2, vkds_view_of(wb), N * 8));
  for (uint32_t i = 0; i < N; ++i) {
    ck_assert(w2[i] == w[ix2[i]]);
    if (i) ck_assert(f[i - 1] < f[i] || (f[i - 1] == f[i] && ix2[i - 1] < ix2[i]));
  }
  /* recorded into the application's command buffer: (u32 key, u32 index) again, with
   * the scratch any zip takes */
  vkds_buffer *kb, *ib, *scratch;
  uint64_t bytes = vkds_merge_sort_scratch_bytes(r0, N, VKDS_TYPE_COMPOSITE);
  ck_assert_uint_ge(bytes, N * 8);
  ck_assert_uint_ge(vkds_algorithm_scratch_bytes(r0, N), bytes);
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = bytes}, &scratch));
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = N * 4}, &kb));
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = N * 4}, &ib));
  ck_assert_vkds(vkds_upload(r0, vkds_view_of(kb), k, N * 4));
  ck_assert_vkds(vkds_upload(r0, vkds_view_of(ib), ix, N * 4));
  vkds_seq rp[2] = {vkds_seq_buffer(vkds_view_of(kb), VKDS_U32), vkds_seq_buffer(vkds_view_of(ib), VKDS_U32)};
  vkds_seq rz = vkds_seq_zip(rp, 2);
  app_cmd a = {0};
  app_cmd_begin(&a, r0);
  ck_assert_vkds(vkds_cmd_merge_sort(&(vkds_cmd){.cmd = a.cmd, .resource = r0, .scratch = vkds_view_of(scratch)}, &rz,
                                     "a.p0 > b.p0"));
  app_cmd_submit(&a, 60);
  app_cmd_destroy(&a);
  ck_assert_vkds(vkds_download(r0, k2, vkds_view_of(kb), N * 4));
  ck_assert_vkds(vkds_download(r0, ix2, vkds_view_of(ib), N * 4));
  for (uint32_t i = 0; i < N; ++i) {
    ck_assert(k2[i] == k[ix2[i]]);
    if (i) ck_assert(k2[i - 1] > k2[i] || (k2[i - 1] == k2[i] && ix2[i - 1] < ix2[i]));
  }
  vkds_buffer_destroy(kb), vkds_buffer_destroy(ib), vkds_buffer_destroy(scratch);
  /* errors */
  /* (u32, u64, u32): 2048 tuples of 24 bytes need 48 KiB of shared memory (lavapipe has
   * 32): refused by name there; where it fits, sorted */
  vkds_seq p4[3] = {vkds_seq_buffer((vkds_view){wb, 0, 64 * 4}, VKDS_U32),
                    vkds_seq_buffer((vkds_view){xb, 0, 64 * 8}, VKDS_U64),
                    vkds_seq_buffer((vkds_view){wb, 512 * 8, 64 * 4}, VKDS_U32)};
  vkds_seq z4 = vkds_seq_zip(p4, 3);
  vkds_result r = vkds_merge_sort(pol, &z4, "a.p1 < b.p1");
  ck_assert_msg(r == VKDS_ERROR_UNSUPPORTED || r == VKDS_SUCCESS, "(u32, u64, u32): %s", vkds_result_str(r));
  if (r) {
    ck_assert_msg(strstr(vkds_last_error_message(), "shared memory"), "%s", vkds_last_error_message());
  } else {
    ck_assert_vkds(vkds_download(r0, x2, (vkds_view){xb, 0, 64 * 8}, 64 * 8));
    for (uint32_t i = 1; i < 64; ++i) ck_assert(x2[i - 1] <= x2[i]);
  }
  vkds_seq p5[3] = {p2[0], p2[1], p2[0]};
  p5[2] = vkds_seq_buffer((vkds_view){xb, 0, N * 8}, VKDS_U64);
  vkds_seq z5 = vkds_seq_zip(p5, 3);
  ck_assert_int_eq(vkds_merge_sort(pol, &z5, "a.p0 < b.p0"), VKDS_ERROR_UNSUPPORTED); /* 24 bytes */
  ck_assert(strstr(vkds_last_error_message(), "24 bytes"));
  vkds_seq p6[2] = {p2[0], p2[0]};
  vkds_seq z6 = vkds_seq_zip(p6, 2);
  ck_assert_int_eq(vkds_merge_sort(pol, &z6, "a.p0 < b.p0"), VKDS_ERROR_INVALID_ARGUMENT); /* a part twice */
  ck_assert(strstr(vkds_last_error_message(), "overlap"));
  vkds_buffer_destroy(wb), vkds_buffer_destroy(xb);
  free(k), free(ix), free(k2), free(ix2), free(w), free(x), free(w2), free(x2), free(f);
  close_ctx();
}
END_TEST

/* Data on another VkDevice than the one the policy picks (devices_per_physical = 2): a
 * buffer of device 1 sorted on device 0 (staged through the host and written back), and
 * a zip of a part on each device. */
START_TEST(another_device) {
  enum { N = 5003 };
  vkds_context_info info = harness_info();
  info.devices_per_physical = 2;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  r0 = vkds_context_resource(ctx, 0);
  vkds_resource *r1 = harness_device_resource(ctx, 1);
  ck_assert_ptr_nonnull(r1);
  void *first[1] = {r0};
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED,
                                                        .resources = {.context = ctx, .resource_count = 1, .resources = first}},
                                    &pol));
  const comparator *c = &COMPARATORS[1]; /* the low nibble: stability shows */
  uint32_t *in = malloc(N * 4), *got = malloc(N * 4), *ids = malloc(N * 4);
  for (uint64_t i = 0; i < N; ++i) c->make(in, i), ids[i] = (uint32_t)i;
  vkds_buffer *b1, *b0;
  ck_assert_vkds(vkds_buffer_create(r1, &(vkds_buffer_info){.size = N * 4}, &b1));
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = N * 4}, &b0));
  ck_assert_vkds(vkds_upload(r1, vkds_view_of(b1), in, N * 4));
  vkds_seq s1 = vkds_seq_buffer(vkds_view_of(b1), VKDS_U32);
  ck_assert(!vkds_seq_is_passed_directly(&s1, r0));
  ck_assert_vkds(vkds_merge_sort(pol, &s1, c->glsl));
  ck_assert_vkds(vkds_download(r1, got, vkds_view_of(b1), N * 4));
  check(c, in, got, N, "another device");
  /* keys on device 1, their ids on device 0 */
  ck_assert_vkds(vkds_upload(r1, vkds_view_of(b1), in, N * 4));
  ck_assert_vkds(vkds_upload(r0, vkds_view_of(b0), ids, N * 4));
  vkds_seq parts[2] = {s1, vkds_seq_buffer(vkds_view_of(b0), VKDS_U32)};
  vkds_seq z = vkds_seq_zip(parts, 2);
  ck_assert_vkds(vkds_merge_sort(pol, &z, "(a.p0 & 15u) < (b.p0 & 15u)"));
  ck_assert_vkds(vkds_download(r1, got, vkds_view_of(b1), N * 4));
  ck_assert_vkds(vkds_download(r0, ids, vkds_view_of(b0), N * 4));
  for (uint64_t i = 0; i < N; ++i) {
    ck_assert_uint_eq(got[i], in[ids[i]]);
    if (i) ck_assert((got[i - 1] & 15u) < (got[i] & 15u) || ((got[i - 1] & 15u) == (got[i] & 15u) && ids[i - 1] < ids[i]));
  }
  vkds_buffer_destroy(b1), vkds_buffer_destroy(b0);
  free(in), free(got), free(ids);
  close_ctx();
}
END_TEST

START_TEST(bad_input) {
  open_ctx();
  uint32_t a[16];
  for (int i = 0; i < 16; ++i) a[i] = 16u - (uint32_t)i;
  vkds_seq as = vkds_seq_host(a, 16, VKDS_U32);
  vkds_policy_resource_stats before, after;
  ck_assert_vkds(vkds_policy_get_resource_stats(pol, 0, &before));
  ck_assert_int_eq(vkds_merge_sort(pol, &as, "a <<< b"), VKDS_ERROR_COMPILE); /* names the comparator */
  ck_assert_msg(strstr(vkds_last_error_message(), "a <<< b") && strstr(vkds_last_error_message(), "comparator"), "%s",
                vkds_last_error_message());
  ck_assert_int_eq(vkds_merge_sort(pol, &as, "no_such_function(a) < b"), VKDS_ERROR_COMPILE);
  const vkds_result E = VKDS_ERROR_INVALID_ARGUMENT;
  ck_assert_int_eq(vkds_merge_sort(pol, &as, NULL), E);
  ck_assert_int_eq(vkds_merge_sort(pol, NULL, "a < b"), E);
  ck_assert_int_eq(vkds_merge_sort(NULL, &as, "a < b"), E);
  ck_assert_int_eq(vkds_merge_sort_async(pol, &as, "a < b", NULL), E);
  ck_assert_int_eq(vkds_cmd_merge_sort(NULL, &as, "a < b"), E);
  vkds_seq ro = vkds_seq_host_const(a, 16, VKDS_U32), cnt = vkds_seq_counting(0, 16, VKDS_U32);
  ck_assert_int_eq(vkds_merge_sort(pol, &ro, "a < b"), E);
  ck_assert_int_eq(vkds_merge_sort(pol, &cnt, "a < b"), E);
  ck_assert_msg(strstr(vkds_last_error_message(), "the data is a counting sequence"), "%s", vkds_last_error_message());
  vkds_seq with_count[2] = {as, cnt}, zc = vkds_seq_zip(with_count, 2);
  ck_assert_int_eq(vkds_merge_sort(pol, &zc, "a.p0 < b.p0"), E); /* a zip's part that cannot be written: named so */
  ck_assert_msg(strstr(vkds_last_error_message(), "a part of the zip is a counting sequence"), "%s",
                vkds_last_error_message());
  vkds_seq parts[2] = {as, as}, z = vkds_seq_zip(parts, 2);
  ck_assert_int_eq(vkds_merge_sort(pol, &z, "a.p0 < b.p0"), E); /* one array twice: the zip's parts overlap */
  for (int i = 0; i < 16; ++i) ck_assert_uint_eq(a[i], 16u - (uint32_t)i); /* nothing written */
  ck_assert_vkds(vkds_policy_get_resource_stats(pol, 0, &after));
  ck_assert_uint_le(after.selections, before.selections + 2); /* only the compile errors selected */
  close_ctx();
}
END_TEST

/* The tiles' dispatch (256 threads a tile of 1024) runs in the 32-bit work-item range:
 * past 2^34 - 1024 elements the call is UNSUPPORTED at once, naming the limit, before
 * anything is selected (it was VKDS_ERROR_ND_RANGE, after the scratch of the data's size
 * was made). A permutation of 16 elements through a counting map: no memory of its size. */
START_TEST(too_many_elements) {
  open_ctx();
  uint32_t a[16] = {0};
  const uint64_t limit = (1ull << 34) - 1024;
  vkds_seq as = vkds_seq_host(a, 16, VKDS_U32), map = vkds_seq_counting(0, limit + 1, VKDS_U64);
  vkds_seq many = vkds_seq_permutation(&as, &map);
  vkds_policy_resource_stats before, after;
  ck_assert_vkds(vkds_policy_get_resource_stats(pol, 0, &before));
  ck_assert_int_eq(vkds_merge_sort(pol, &many, "a < b"), VKDS_ERROR_UNSUPPORTED);
  ck_assert_msg(strstr(vkds_last_error_message(), "more than a merge sort takes"), "%s", vkds_last_error_message());
  vkds_submission *sub = NULL;
  ck_assert_int_eq(vkds_merge_sort_async(pol, &many, "a < b", &sub), VKDS_ERROR_UNSUPPORTED);
  ck_assert_ptr_null(sub);
  ck_assert_vkds(vkds_policy_get_resource_stats(pol, 0, &after));
  ck_assert_uint_eq(after.selections, before.selections); /* refused before selecting */
  close_ctx();
}
END_TEST

int main(void) {
  Suite *s = suite_create("merge_sort");
  TCase *t = harness_tcase("comparators");
  tcase_add_loop_test(t, every_comparator, 0, (int)(sizeof COMPARATORS / sizeof *COMPARATORS));
  suite_add_tcase(s, t);
  t = harness_tcase("sequences");
  tcase_add_test(t, sequences_and_forms);
  tcase_add_test(t, zips_in_place);
  tcase_add_test(t, another_device);
  tcase_add_test(t, merge_passes_knob);
  suite_add_tcase(s, t);
  /* (long: 2^21 elements, 23 s of the ASan stage; the partition dispatches and their host
   * code run there in sequences_and_forms' last passes) */
  t = harness_long_tcase("partitions");
  tcase_add_test(t, partition_passes);
  suite_add_tcase(s, t);
  t = harness_tcase("errors");
  tcase_add_test(t, bad_input);
  tcase_add_test(t, too_many_elements);
  suite_add_tcase(s, t);
  return harness_run(s);
}
