/* tests/test_adjacent.c: vkds_adjacent_difference (vkds/algorithm.h, element-wise) on
 * lavapipe, validation on, against the host: every element type with the default
 * difference (integers wrapping as C's unsigned arithmetic does), sizes around a
 * thread's 4 elements and a work group's 1024; an operator of a and b converted to
 * another output type; a reverse view as input; host data larger than a small staging
 * ring (staged whole: element i reads element i - 1); mapped buffers read and written
 * in place; a buffer of a second VkDevice; the asynchronous and recorded forms; bad
 * input. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_cmd.h"
#include "harness.h"
#include "values.h"

static vkds_context *ctx;
static vkds_resource *r0;
static vkds_policy *pol;

static void open_ctx(const vkds_context_info *info) { harness_open_fixed(info, &ctx, &r0, &pol); }
static void close_ctx(void) { harness_close_fixed(&ctx, &pol); }

static uint64_t rng_state = 0x3c6ef372fe94f82bull;
static uint64_t rnd(void) { return harness_xorshift(&rng_state); }

/* in[i] - in[i - 1] (in[0] first) of type t, written into want. */
static void host_difference(vkds_type t, const void *in, uint64_t n, void *want) {
  for (uint64_t i = 0; i < n; ++i) {
    switch (t) {
    case VKDS_I32: ((int32_t *)want)[i] = i ? (int32_t)((uint32_t)((const int32_t *)in)[i] - (uint32_t)((const int32_t *)in)[i - 1]) : ((const int32_t *)in)[0]; break;
    case VKDS_U32: ((uint32_t *)want)[i] = i ? ((const uint32_t *)in)[i] - ((const uint32_t *)in)[i - 1] : ((const uint32_t *)in)[0]; break;
    case VKDS_F32: ((float *)want)[i] = i ? ((const float *)in)[i] - ((const float *)in)[i - 1] : ((const float *)in)[0]; break;
    case VKDS_I64: ((int64_t *)want)[i] = i ? (int64_t)((uint64_t)((const int64_t *)in)[i] - (uint64_t)((const int64_t *)in)[i - 1]) : ((const int64_t *)in)[0]; break;
    case VKDS_U64: ((uint64_t *)want)[i] = i ? ((const uint64_t *)in)[i] - ((const uint64_t *)in)[i - 1] : ((const uint64_t *)in)[0]; break;
    default: ((double *)want)[i] = i ? ((const double *)in)[i] - ((const double *)in)[i - 1] : ((const double *)in)[0]; break;
    }
  }
}

static void random_fill(vkds_type t, void *p, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t r = rnd();
    switch (t) {
    case VKDS_F32: ((float *)p)[i] = (float)(r % 100001) / 16.0f; break; /* exact differences */
    case VKDS_F64: ((double *)p)[i] = (double)(r % 100000001) / 64.0; break;
    default: memcpy((char *)p + i * size_of(t), &r, size_of(t)); break;
    }
  }
}

START_TEST(every_type_and_size) {
  vkds_type t = TYPES[_i];
  vkds_context_info info = harness_info();
  open_ctx(&info);
  const uint64_t sizes[] = {0, 1, 2, 5, 1023, 1024, 1025, 4097, (1u << 20) + 1};
  enum { MOST = (1u << 20) + 1 };
  void *in = malloc(MOST * 8), *want = malloc(MOST * 8), *got = malloc(MOST * 8 + 8);
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; ++si) {
    uint64_t n = sizes[si];
    random_fill(t, in, n);
    host_difference(t, in, n, want);
    memset(got, 0xa5, MOST * 8 + 8);
    /* a device buffer in, host data out (and the reverse for odd sizes) */
    vkds_buffer *b = harness_device_copy(r0, in, n * size_of(t));
    vkds_seq is = n % 2 ? vkds_seq_host_const(in, n, t) : vkds_seq_buffer((vkds_view){b, 0, n ? n * size_of(t) : 1}, t);
    if (!n) is = vkds_seq_host_const(in, 0, t);
    vkds_seq os = vkds_seq_host(got, n, t);
    ck_assert_vkds(vkds_adjacent_difference(pol, &is, &os, NULL));
    for (uint64_t i = 0; i < n; ++i)
      if (memcmp((char *)got + i * size_of(t), (char *)want + i * size_of(t), size_of(t)) != 0)
        ck_abort_msg("%s, %llu elements: [%llu] differs", type_name(t), (unsigned long long)n, (unsigned long long)i);
    ck_assert_uint_eq(((unsigned char *)got)[n * size_of(t)], 0xa5); /* nothing past the output */
    vkds_buffer_destroy(b);
  }
  free(in), free(want), free(got);
  close_ctx();
}
END_TEST

/* An operator converted to another type; a reverse view as input; async and recorded. */
START_TEST(operator_views_forms) {
  vkds_context_info info = harness_info();
  open_ctx(&info);
  enum { N = 5000 };
  uint32_t *u = malloc(N * 4);
  float *f = malloc(N * 4);
  for (uint32_t i = 0; i < N; ++i) u[i] = (uint32_t)(rnd() % 1000) + 1;
  vkds_seq us = vkds_seq_host_const(u, N, VKDS_U32), fs = vkds_seq_host(f, N, VKDS_F32);
  ck_assert_vkds(vkds_adjacent_difference(pol, &us, &fs, "float(a) / float(b)"));
  ck_assert(f[0] == (float)u[0]);
  for (uint32_t i = 1; i < N; ++i)
    ck_assert_msg(fabsf(f[i] - (float)u[i] / (float)u[i - 1]) <= 1e-6f * f[i], "[%u] %g", i, (double)f[i]);
  /* a reverse view: its element i - 1 is u[N - i] */
  vkds_buffer *ub = harness_device_copy(r0, u, N * 4);
  vkds_seq ubs = vkds_seq_buffer(vkds_view_of(ub), VKDS_U32), rv = vkds_seq_reverse(&ubs);
  int64_t *d = malloc(N * 8);
  vkds_seq ds = vkds_seq_host(d, N, VKDS_I64);
  vkds_submission *sub;
  ck_assert_vkds(vkds_adjacent_difference_async(pol, &rv, &ds, "int64_t(a) - int64_t(b)", &sub));
  ck_assert_vkds(vkds_submission_wait(sub));
  vkds_submission_release(sub);
  ck_assert_int_eq(d[0], u[N - 1]);
  for (uint32_t i = 1; i < N; ++i) ck_assert_int_eq(d[i], (int64_t)u[N - 1 - i] - (int64_t)u[N - i]);
  /* recorded into a device buffer */
  vkds_buffer *ob = harness_device_copy(r0, NULL, N * 4);
  vkds_seq obs = vkds_seq_buffer(vkds_view_of(ob), VKDS_U32);
  app_cmd c = {0};
  app_cmd_begin(&c, r0);
  vkds_cmd rc = {.cmd = c.cmd, .resource = r0};
  ck_assert_vkds(vkds_cmd_adjacent_difference(&rc, &ubs, &obs, "a ^ b"));
  app_cmd_submit(&c, 60);
  app_cmd_destroy(&c);
  uint32_t *g = malloc(N * 4);
  ck_assert_vkds(vkds_download(r0, g, vkds_view_of(ob), N * 4));
  ck_assert_uint_eq(g[0], u[0]);
  for (uint32_t i = 1; i < N; ++i) ck_assert_uint_eq(g[i], u[i] ^ u[i - 1]);
  vkds_buffer_destroy(ub), vkds_buffer_destroy(ob);
  free(u), free(f), free(d), free(g);
  close_ctx();
}
END_TEST

/* A mapped buffer read in place into another mapped buffer; a buffer of a second
 * VkDevice into a buffer of the first. */
START_TEST(mapped_and_second_device) {
  vkds_context_info info = harness_info();
  info.devices_per_physical = 2;
  open_ctx(&info);
  vkds_resource *r1 = harness_device_resource(ctx, 1);
  ck_assert_ptr_nonnull(r1);
  enum { N = 33333 };
  vkds_buffer *ib, *ob;
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = N * 8, .memory = VKDS_MEMORY_MAPPED}, &ib));
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = N * 8, .memory = VKDS_MEMORY_MAPPED}, &ob));
  int64_t *in = vkds_buffer_map(ib), *out = vkds_buffer_map(ob);
  for (uint32_t i = 0; i < N; ++i) in[i] = (int64_t)(rnd() % 2000000) - 1000000;
  vkds_seq is = vkds_seq_mapped(vkds_view_of(ib), VKDS_I64), os = vkds_seq_mapped(vkds_view_of(ob), VKDS_I64);
  ck_assert_vkds(vkds_adjacent_difference(pol, &is, &os, NULL));
  ck_assert_int_eq(out[0], in[0]);
  for (uint32_t i = 1; i < N; ++i) ck_assert_int_eq(out[i], in[i] - in[i - 1]);
  vkds_buffer *b1 = harness_device_copy(r1, in, N * 8), *b0 = harness_device_copy(r0, NULL, N * 8);
  vkds_seq s1 = vkds_seq_buffer(vkds_view_of(b1), VKDS_I64), s0 = vkds_seq_buffer(vkds_view_of(b0), VKDS_I64);
  ck_assert_vkds(vkds_adjacent_difference(pol, &s1, &s0, "max(a, b)"));
  int64_t *got = malloc(N * 8);
  ck_assert_vkds(vkds_download(r0, got, vkds_view_of(b0), N * 8));
  ck_assert_int_eq(got[0], in[0]);
  for (uint32_t i = 1; i < N; ++i) ck_assert_int_eq(got[i], in[i] > in[i - 1] ? in[i] : in[i - 1]);
  vkds_buffer_destroy(ib), vkds_buffer_destroy(ob), vkds_buffer_destroy(b1), vkds_buffer_destroy(b0);
  free(got);
  close_ctx();
}
END_TEST

/* 12 MiB of host data through a ring of two 256 KiB chunks: staged whole, so the
 * elements at the chunks' edges still see the one before them. */
START_TEST(host_larger_than_the_ring) {
  vkds_context_info info = harness_info();
  info.staging_chunks = 2;
  info.staging_chunk_bytes = 256 << 10;
  open_ctx(&info);
  enum { N = 3 << 20 };
  uint32_t *a = malloc(N * 4), *b = malloc(N * 4);
  for (uint32_t i = 0; i < N; ++i) a[i] = (uint32_t)rnd();
  vkds_seq as = vkds_seq_host_const(a, N, VKDS_U32), bs = vkds_seq_host(b, N, VKDS_U32);
  ck_assert_vkds(vkds_adjacent_difference(pol, &as, &bs, NULL));
  ck_assert_uint_eq(b[0], a[0]);
  for (uint32_t i = 1; i < N; ++i)
    if (b[i] != a[i] - a[i - 1]) ck_abort_msg("[%u] got %u want %u", i, b[i], a[i] - a[i - 1]);
  free(a), free(b);
  close_ctx();
}
END_TEST

START_TEST(bad_input) {
  vkds_context_info info = harness_info();
  open_ctx(&info);
  uint32_t u[16], w[16];
  for (int i = 0; i < 16; ++i) u[i] = (uint32_t)i, w[i] = 0xcccccccc;
  vkds_seq us = vkds_seq_host(u, 16, VKDS_U32), ws = vkds_seq_host(w, 16, VKDS_U32);
  const vkds_result E = VKDS_ERROR_INVALID_ARGUMENT;
  ck_assert_int_eq(vkds_adjacent_difference(pol, &us, &us, NULL), E); /* in place */
  ck_assert_msg(strstr(vkds_last_error_message(), "overlaps"), "%s", vkds_last_error_message());
  vkds_seq shorter = vkds_seq_host(w, 15, VKDS_U32), ro = vkds_seq_host_const(w, 16, VKDS_U32);
  ck_assert_int_eq(vkds_adjacent_difference(pol, &us, &shorter, NULL), E);
  ck_assert_int_eq(vkds_adjacent_difference(pol, &us, &ro, NULL), E);
  vkds_seq parts[2] = {us, us};
  vkds_seq z = vkds_seq_zip(parts, 2);
  ck_assert_int_eq(vkds_adjacent_difference(pol, &z, &ws, "a.p0 - b.p0"), E);
  ck_assert_int_eq(vkds_adjacent_difference(pol, &us, &ws, "a - "), VKDS_ERROR_COMPILE);
  ck_assert_msg(strstr(vkds_last_error_message(), "\"a - \""), "%s", vkds_last_error_message());
  ck_assert_int_eq(vkds_adjacent_difference(pol, NULL, &ws, NULL), E);
  ck_assert_int_eq(vkds_adjacent_difference(NULL, &us, &ws, NULL), E);
  ck_assert_int_eq(vkds_cmd_adjacent_difference(NULL, &us, &ws, NULL), E);
  for (int i = 0; i < 16; ++i) ck_assert_uint_eq(w[i], 0xccccccccu); /* nothing written */
  close_ctx();
}
END_TEST

int main(void) {
  Suite *s = suite_create("adjacent");
  TCase *t = harness_tcase("types");
  tcase_add_loop_test(t, every_type_and_size, 0, (int)(sizeof TYPES / sizeof *TYPES));
  suite_add_tcase(s, t);
  t = harness_tcase("forms");
  tcase_add_test(t, operator_views_forms);
  tcase_add_test(t, host_larger_than_the_ring);
  tcase_add_test(t, mapped_and_second_device);
  suite_add_tcase(s, t);
  t = harness_tcase("errors");
  tcase_add_test(t, bad_input);
  suite_add_tcase(s, t);
  return harness_run(s);
}
