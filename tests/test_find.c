/* tests/test_find.c: vkds_find, vkds_find_if and vkds_find_if_not (vkds/algorithm.h,
 * reductions) on lavapipe, validation on, against a host linear search: every element
 * type, sizes around the subgroup, the work group and the reduction's grid, the first of
 * several matches at random places, none, the last element; floats' -0, +0 and NaN; a
 * zip's tuples; host data streamed through a small staging ring with the match in a
 * later chunk; a mapped buffer, a buffer of a second VkDevice and a reverse view of it;
 * the asynchronous and recorded forms; bad input. */
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

static uint64_t rng_state = 0x2545f4914f6cdd1dull;
static uint64_t rnd(void) { return harness_xorshift(&rng_state); }

/* Element i of type t set to small value v (0..999), or read back as that number. */
static void put(vkds_type t, void *p, uint64_t i, int v) {
  switch (t) {
  case VKDS_I32: ((int32_t *)p)[i] = -v; break;
  case VKDS_U32: ((uint32_t *)p)[i] = (uint32_t)v; break;
  case VKDS_F32: ((float *)p)[i] = (float)v * 0.5f; break;
  case VKDS_I64: ((int64_t *)p)[i] = -(int64_t)v * 3000000000ll; break;
  case VKDS_U64: ((uint64_t *)p)[i] = (uint64_t)v << 33; break;
  default: ((double *)p)[i] = (double)v * 0.25; break;
  }
}
static bool same(vkds_type t, const void *p, uint64_t i, const void *value) {
  switch (t) {
  case VKDS_F32: return ((const float *)p)[i] == *(const float *)value;
  case VKDS_F64: return ((const double *)p)[i] == *(const double *)value;
  default: return memcmp((const char *)p + i * size_of(t), value, size_of(t)) == 0;
  }
}
static uint64_t host_find(vkds_type t, const void *p, uint64_t n, const void *value) {
  for (uint64_t i = 0; i < n; ++i)
    if (same(t, p, i, value)) return i;
  return n;
}

/* Every type: data of values 0..899, the value 950 placed at up to three random places
 * (or nowhere, or last); find of 950 (and of 0: a match near the start), find_if of the
 * predicate "x == that value" written per type, find_if_not of "x != it". */
START_TEST(every_type_and_size) {
  vkds_type t = TYPES[_i];
  vkds_context_info info = harness_info();
  open_ctx(&info);
  const uint64_t sizes[] = {0, 1, 7, 31, 33, 255, 257, 1023, 4097, 65537, (1u << 20) + 3};
  enum { MOST = (1u << 20) + 3 };
  void *data = malloc(MOST * 8), *want_v = malloc(8);
  const char *literal[] = {[VKDS_I32] = "-950", [VKDS_U32] = "950u", [VKDS_F32] = "475.0",
                           [VKDS_I64] = "-2850000000000l", [VKDS_U64] = "(950ul << 33)", [VKDS_F64] = "237.5lf"};
  char eq[64], ne[64];
  snprintf(eq, sizeof eq, "x == %s", literal[t]);
  snprintf(ne, sizeof ne, "x != %s", literal[t]);
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; ++si) {
    uint64_t n = sizes[si];
    for (int shape = 0; shape < 3; ++shape) {
      for (uint64_t i = 0; i < n; ++i) put(t, data, i, 1 + (int)(rnd() % 899));
      if (n && shape == 0)
        for (int k = 0; k < 3; ++k) put(t, data, rnd() % n, 950);
      if (n && shape == 1) put(t, data, n - 1, 950);
      put(t, want_v, 0, 950);
      uint64_t want = host_find(t, data, n, want_v);
      vkds_seq s = vkds_seq_host_const(data, n, t);
      uint64_t got = 12345;
      ck_assert_vkds(vkds_find(pol, &s, want_v, &got));
      ck_assert_msg(got == want, "find %s n=%llu shape %d: got %llu want %llu", type_name(t), (unsigned long long)n,
                    shape, (unsigned long long)got, (unsigned long long)want);
      got = 12345;
      ck_assert_vkds(vkds_find_if(pol, &s, eq, &got));
      ck_assert_msg(got == want, "find_if %s n=%llu: got %llu want %llu", type_name(t), (unsigned long long)n,
                    (unsigned long long)got, (unsigned long long)want);
      got = 12345;
      ck_assert_vkds(vkds_find_if_not(pol, &s, ne, &got));
      ck_assert_msg(got == want, "find_if_not %s n=%llu: got %llu want %llu", type_name(t), (unsigned long long)n,
                    (unsigned long long)got, (unsigned long long)want);
    }
  }
  free(data), free(want_v);
  close_ctx();
}
END_TEST

/* -0 finds +0 and the reverse; NaN finds nothing, not even a NaN; find_if over a zip's
 * tuples. */
START_TEST(floats_and_tuples) {
  vkds_context_info info = harness_info();
  open_ctx(&info);
  float f[6] = {1.0f, NAN, 0.0f, -0.0f, 2.0f, NAN};
  vkds_seq fs = vkds_seq_host_const(f, 6, VKDS_F32);
  uint64_t got;
  ck_assert_vkds(vkds_find(pol, &fs, &(float){-0.0f}, &got));
  ck_assert_uint_eq(got, 2);
  ck_assert_vkds(vkds_find(pol, &fs, &(float){NAN}, &got));
  ck_assert_uint_eq(got, 6);
  ck_assert_vkds(vkds_find_if(pol, &fs, "isnan(x)", &got));
  ck_assert_uint_eq(got, 1);
  ck_assert_vkds(vkds_find_if_not(pol, &fs, "x > 0.5 || isnan(x)", &got));
  ck_assert_uint_eq(got, 2);
  uint32_t k[5] = {5, 4, 3, 9, 1};
  double d[5] = {1.0, 2.0, 3.5, 3.0, 0.5};
  vkds_seq parts[2] = {vkds_seq_host_const(k, 5, VKDS_U32), vkds_seq_host_const(d, 5, VKDS_F64)};
  vkds_seq z = vkds_seq_zip(parts, 2);
  ck_assert_vkds(vkds_find_if(pol, &z, "double(x.p0) < x.p1", &got));
  ck_assert_uint_eq(got, 2);
  ck_assert_vkds(vkds_find_if_not(pol, &z, "x.p0 > 2u", &got));
  ck_assert_uint_eq(got, 4);
  close_ctx();
}
END_TEST

/* Host data streamed through a ring of two 256 KiB chunks (12 MiB of u32): matches only
 * in a later chunk, in two chunks, and none; the asynchronous form. */
START_TEST(streamed_host_data) {
  vkds_context_info info = harness_info();
  info.staging_chunks = 2;
  info.staging_chunk_bytes = 256 << 10;
  open_ctx(&info);
  enum { N = 3 << 20 };
  uint32_t *a = malloc(N * 4);
  for (uint32_t i = 0; i < N; ++i) a[i] = (uint32_t)(rnd() % 1000);
  const uint32_t places[][2] = {{2500000, 2500000}, {2999999, 700001}, {N, N}};
  for (size_t pi = 0; pi < sizeof places / sizeof *places; ++pi) {
    for (uint32_t k = 0; k < 2; ++k)
      if (places[pi][k] < N) a[places[pi][k]] = 5000;
    uint64_t want = places[pi][0] < places[pi][1] ? places[pi][0] : places[pi][1];
    vkds_seq s = vkds_seq_host_const(a, N, VKDS_U32);
    uint64_t got = 0;
    ck_assert_vkds(vkds_find(pol, &s, &(uint32_t){5000}, &got));
    ck_assert_uint_eq(got, want);
    vkds_submission *sub;
    got = 0;
    ck_assert_vkds(vkds_find_if_async(pol, &s, "x >= 1000u", &got, &sub));
    ck_assert_vkds(vkds_submission_wait(sub));
    vkds_submission_release(sub);
    ck_assert_uint_eq(got, want);
    for (uint32_t k = 0; k < 2; ++k)
      if (places[pi][k] < N) a[places[pi][k]] = 7;
  }
  free(a);
  close_ctx();
}
END_TEST

/* The recorded form: the index as a uint64_t in the application's view, the scratch of a
 * reduction. */
START_TEST(recorded_form) {
  vkds_context_info info = harness_info();
  open_ctx(&info);
  enum { N = 100003 };
  int64_t *a = malloc(N * 8);
  for (uint32_t i = 0; i < N; ++i) a[i] = (int64_t)(rnd() % 1000) - 500;
  a[77777] = -9999, a[88888] = -9999;
  vkds_buffer *buf = harness_device_copy(r0, a, N * 8), *res = harness_device_copy(r0, NULL, 64);
  vkds_buffer *scratch = harness_device_copy(r0, NULL, vkds_reduce_scratch_bytes(r0, N));
  vkds_seq s = vkds_seq_buffer(vkds_view_of(buf), VKDS_I64);
  app_cmd c = {0};
  app_cmd_begin(&c, r0);
  vkds_cmd rc = {.cmd = c.cmd, .resource = r0, .scratch = vkds_view_of(scratch)};
  ck_assert_vkds(vkds_cmd_find(&rc, &s, &(int64_t){-9999}, (vkds_view){res, 0, 8}));
  ck_assert_vkds(vkds_cmd_find_if(&rc, &s, "x > 10000l", (vkds_view){res, 16, 8}));
  ck_assert_vkds(vkds_cmd_find_if_not(&rc, &s, "x >= -500l", (vkds_view){res, 32, 8}));
  app_cmd_submit(&c, 60);
  app_cmd_destroy(&c);
  uint64_t got[6];
  ck_assert_vkds(vkds_download(r0, got, vkds_view_of(res), 48));
  ck_assert_uint_eq(got[0], 77777);
  ck_assert_uint_eq(got[2], N);
  ck_assert_uint_eq(got[4], 77777);
  vkds_buffer_destroy(buf), vkds_buffer_destroy(res), vkds_buffer_destroy(scratch);
  free(a);
  close_ctx();
}
END_TEST

/* Device data of every other kind: a mapped buffer (written by the host, read in place),
 * a buffer of a second VkDevice (staged across), and a reverse view of it. */
START_TEST(mapped_and_second_device) {
  vkds_context_info info = harness_info();
  info.devices_per_physical = 2;
  open_ctx(&info);
  vkds_resource *r1 = harness_device_resource(ctx, 1);
  ck_assert_ptr_nonnull(r1);
  enum { N = 70001 };
  vkds_buffer *mb;
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = N * 4, .memory = VKDS_MEMORY_MAPPED}, &mb));
  float *m = vkds_buffer_map(mb);
  for (uint32_t i = 0; i < N; ++i) m[i] = (float)(rnd() % 1000);
  m[40000] = -1.0f, m[50000] = -1.0f;
  vkds_seq ms = vkds_seq_mapped(vkds_view_of(mb), VKDS_F32);
  uint64_t got = 0;
  ck_assert_vkds(vkds_find(pol, &ms, &(float){-1.0f}, &got));
  ck_assert_uint_eq(got, 40000);
  ck_assert_vkds(vkds_find_if(pol, &ms, "x < 0.0", &got));
  ck_assert_uint_eq(got, 40000);
  ck_assert_vkds(vkds_find_if_not(pol, &ms, "x >= 0.0", &got));
  ck_assert_uint_eq(got, 40000);
  vkds_buffer *b1 = harness_device_copy(r1, m, N * 4);
  vkds_seq s1 = vkds_seq_buffer(vkds_view_of(b1), VKDS_F32), rv = vkds_seq_reverse(&s1);
  ck_assert_vkds(vkds_find(pol, &s1, &(float){-1.0f}, &got));
  ck_assert_uint_eq(got, 40000);
  ck_assert_vkds(vkds_find_if(pol, &rv, "x < 0.0", &got)); /* from the end: element 50000 first */
  ck_assert_uint_eq(got, N - 1 - 50000);
  vkds_buffer_destroy(mb), vkds_buffer_destroy(b1);
  close_ctx();
}
END_TEST

START_TEST(bad_input) {
  vkds_context_info info = harness_info();
  open_ctx(&info);
  uint32_t u[8] = {0};
  vkds_seq us = vkds_seq_host_const(u, 8, VKDS_U32);
  uint64_t got = 42;
  const vkds_result E = VKDS_ERROR_INVALID_ARGUMENT;
  ck_assert_int_eq(vkds_find(pol, &us, NULL, &got), E);
  ck_assert_msg(strstr(vkds_last_error_message(), "value is NULL"), "%s", vkds_last_error_message());
  ck_assert_int_eq(vkds_find_if(pol, &us, NULL, &got), E);
  ck_assert_int_eq(vkds_find_if(pol, &us, "x >", &got), VKDS_ERROR_COMPILE);
  ck_assert_msg(strstr(vkds_last_error_message(), "\"x >\""), "%s", vkds_last_error_message());
  ck_assert_int_eq(vkds_find_if_not(pol, &us, "x > 1u", NULL), E);
  ck_assert_int_eq(vkds_find_if(pol, NULL, "x > 1u", &got), E);
  ck_assert_int_eq(vkds_find(NULL, &us, &u[0], &got), E);
  ck_assert_uint_eq(got, 42); /* nothing written */
  vkds_submission *sub = (vkds_submission *)&got;
  ck_assert_int_eq(vkds_find_if_async(pol, &us, NULL, &got, &sub), E);
  ck_assert_ptr_null(sub);
  /* a zip takes a predicate, not a value */
  vkds_seq parts[2] = {us, us};
  vkds_seq z = vkds_seq_zip(parts, 2);
  ck_assert_int_eq(vkds_find(pol, &z, &u[0], &got), E);
  ck_assert_int_eq(vkds_cmd_find(NULL, &us, &u[0], (vkds_view){0}), E);
  close_ctx();
}
END_TEST

int main(void) {
  Suite *s = suite_create("find");
  TCase *t = harness_tcase("types");
  tcase_add_loop_test(t, every_type_and_size, 0, (int)(sizeof TYPES / sizeof *TYPES));
  tcase_add_test(t, floats_and_tuples);
  suite_add_tcase(s, t);
  t = harness_tcase("forms");
  tcase_add_test(t, streamed_host_data);
  tcase_add_test(t, recorded_form);
  tcase_add_test(t, mapped_and_second_device);
  suite_add_tcase(s, t);
  t = harness_tcase("errors");
  tcase_add_test(t, bad_input);
  suite_add_tcase(s, t);
  return harness_run(s);
}
