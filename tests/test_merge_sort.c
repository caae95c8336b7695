/* tests/test_merge_sort.c: the comparison sort (vkds/algorithm.h, "the comparison sort")
 * on lavapipe, validation on: comparators over every element type against the C
 * library's qsort with the same comparator (made stable by the original index), so that
 * stability shows (comparators that see only part of an element); sizes around the tile
 * (1024), a merge group (2048) and the merge passes, both ways a pass finds its groups'
 * starts; host data staged, a reverse view, the three forms; bad
 * input (a comparator that does not compile, NULLs, what cannot be written). */
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

static void open_ctx(void) {
  vkds_context_info info = harness_info();
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  r0 = vkds_context_resource(ctx, 0);
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = {.context = ctx}}, &pol));
}
static void close_ctx(void) {
  vkds_policy_release(pol);
  vkds_context_destroy(ctx);
  pol = NULL, ctx = NULL;
}

static uint64_t rng_state = 0x13198a2e03707344ull;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
  return rng_state;
}

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

START_TEST(every_comparator) {
  const comparator *c = &COMPARATORS[_i];
  open_ctx();
  /* around the tile, a merge group (2048 outputs) and a pair of runs ending a group */
  const uint64_t sizes[] = {0, 1, 2, 3, 5, 1023, 1024, 1025, 2048, 4096, 4097, 8197, 100003};
  uint32_t s = vkds_type_size(c->type);
  unsigned char *in = malloc(100003 * 8), *got = malloc(100003 * 8);
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; ++si) {
    uint64_t n = sizes[si];
    for (uint64_t i = 0; i < n; ++i) c->make(in, i);
    vkds_buffer *b;
    ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = n ? n * s : 16}, &b));
    if (n) ck_assert_vkds(vkds_upload(r0, vkds_view_of(b), in, n * s));
    vkds_seq bs = n ? vkds_seq_buffer((vkds_view){b, 0, n * s}, c->type) : vkds_seq_host(got, 0, c->type);
    ck_assert_vkds(vkds_merge_sort(pol, &bs, c->glsl));
    if (n) ck_assert_vkds(vkds_download(r0, got, vkds_view_of(b), n * s));
    check(c, in, got, n, "buffer");
    vkds_buffer_destroy(b);
  }
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
  vkds_buffer *b;
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = N * 4}, &b));
  ck_assert_vkds(vkds_upload(r0, vkds_view_of(b), in, N * 4));
  vkds_seq bs = vkds_seq_buffer(vkds_view_of(b), VKDS_U32);
  ck_assert_vkds(vkds_merge_sort(pol, &bs, c->glsl));
  ck_assert_vkds(vkds_download(r0, got, vkds_view_of(b), N * 4));
  check(c, in, got, N, "partitioned");
  vkds_buffer_destroy(b);
  free(in), free(got);
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
  vkds_seq parts[2] = {as, as}, z = vkds_seq_zip(parts, 2);
  ck_assert_int_eq(vkds_merge_sort(pol, &z, "a.p0 < b.p0"), E); /* 8-byte tuples: not an element type it takes */
  for (int i = 0; i < 16; ++i) ck_assert_uint_eq(a[i], 16u - (uint32_t)i); /* nothing written */
  ck_assert_vkds(vkds_policy_get_resource_stats(pol, 0, &after));
  ck_assert_uint_le(after.selections, before.selections + 2); /* only the compile errors selected */
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
  tcase_add_test(t, partition_passes);
  suite_add_tcase(s, t);
  t = harness_tcase("errors");
  tcase_add_test(t, bad_input);
  suite_add_tcase(s, t);
  return harness_run(s);
}
