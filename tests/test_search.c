/* tests/test_search.c: lower_bound, upper_bound, is_sorted and merge (vkds/algorithm.h,
 * "searching", "merging") on
 * lavapipe, validation on: every element type in both orders against a host binary
 * search in the sorts' order (floats in totalOrder: NaN, ±0, ±inf among the needles and
 * the sorted values), runs of equal elements, empty sequences, indices of 4 and 8 bytes,
 * sequence kinds (host data staged, a reverse view of an ascending buffer searched as
 * descending, a buffer of a second VkDevice), the three forms, bad input; is_sorted on
 * sorted data of every type and with one pair swapped (at the start, across a run and a
 * work group, at the end), NaN and -0 in their places; merge of every type in both
 * orders against a host stable merge (empty sides, uneven sizes), a reverse view, async,
 * bad input. */
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

static void open_ctx(uint32_t devices) {
  vkds_context_info info = harness_info();
  info.devices_per_physical = devices;
  harness_open_fixed(&info, &ctx, &r0, &pol);
}
static void close_ctx(void) { harness_close_fixed(&ctx, &pol); }

static uint64_t all_bits(vkds_type t) { return size_of(t) == 4 ? 0xffffffffull : ~0ull; }
static uint64_t top_bit(vkds_type t) { return size_of(t) == 4 ? 0x80000000ull : 0x8000000000000000ull; }
static uint64_t get_raw(vkds_type t, const void *p, uint64_t i) {
  return size_of(t) == 4 ? ((const uint32_t *)p)[i] : ((const uint64_t *)p)[i];
}
static void put_raw(vkds_type t, void *p, uint64_t i, uint64_t b) {
  if (size_of(t) == 4) ((uint32_t *)p)[i] = (uint32_t)b;
  else ((uint64_t *)p)[i] = b;
}
/* The sorts' order as an unsigned number (descending: reversed). */
static uint64_t ord_of(vkds_type t, uint64_t b, bool desc) {
  uint64_t o = b;
  if (t == VKDS_I32 || t == VKDS_I64) o = b ^ top_bit(t);
  if (t == VKDS_F32 || t == VKDS_F64) o = (b & top_bit(t)) ? ~b & all_bits(t) : b ^ top_bit(t);
  return desc ? ~o & all_bits(t) : o;
}

static uint64_t rng_state = 0x243f6a8885a308d3ull;
static uint64_t rnd(void) { return harness_xorshift(&rng_state); }

/* Values with many repeats and the types' edges (NaN, ±0, ±inf for floats). */
static uint64_t value(vkds_type t) {
  static const uint64_t f32[] = {0x0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x3f800000};
  static const uint64_t f64[] = {0x0, 0x8000000000000000ull, 0x7ff0000000000000ull, 0xfff0000000000000ull,
                                 0x7ff8000000000000ull, 0xfff8000000000000ull, 0x3ff0000000000000ull};
  uint64_t r = rnd();
  if (r % 5 == 0) return t == VKDS_F32 ? f32[r / 5 % 7] : t == VKDS_F64 ? f64[r / 5 % 7] : (r / 5 % 7) & all_bits(t);
  if (r % 5 == 1) return (r >> 8) % 64 * 0x01010101ull & all_bits(t); /* repeats */
  return (r >> 3) & all_bits(t);
}

static vkds_type ref_t;
static bool ref_desc;
static int cmp_ord(const void *a, const void *b) {
  uint64_t x = ord_of(ref_t, get_raw(ref_t, a, 0), ref_desc), y = ord_of(ref_t, get_raw(ref_t, b, 0), ref_desc);
  return x < y ? -1 : x > y;
}

/* The host's answer. */
static uint64_t bound(vkds_type t, const void *sorted, uint64_t n, uint64_t needle, bool desc, bool upper) {
  uint64_t key = ord_of(t, needle, desc), lo = 0, hi = n;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2, m = ord_of(t, get_raw(t, sorted, mid), desc);
    if (upper ? m <= key : m < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static void check(vkds_type t, const void *sorted, uint64_t n, const void *needles, uint64_t m, const void *got,
                  vkds_type out_type, bool desc, bool upper, const char *what) {
  for (uint64_t i = 0; i < m; ++i) {
    uint64_t want = bound(t, sorted, n, get_raw(t, needles, i), desc, upper);
    uint64_t g = get_raw(out_type, got, i);
    if (g != want)
      ck_abort_msg("%s: type %d %s %s, %llu sorted: needle %llu (%llx) got %llu want %llu", what, (int)t,
                   desc ? "descending" : "ascending", upper ? "upper" : "lower", (unsigned long long)n,
                   (unsigned long long)i, (unsigned long long)get_raw(t, needles, i), (unsigned long long)g,
                   (unsigned long long)want);
  }
}

typedef vkds_result (*search_fn)(vkds_policy *, const vkds_seq *, const vkds_seq *, const vkds_seq *, vkds_sort_order);

START_TEST(every_type) {
  vkds_type t = TYPES[_i];
  open_ctx(1);
  const uint64_t sizes[] = {0, 1, 2, 1000, 100003};
  const uint64_t needle_counts[] = {0, 1, 7, 10001};
  void *sorted = malloc(100003 * 8), *needles = malloc(10001 * 8), *got = malloc(10001 * 8);
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; ++si)
    for (int d = 0; d < 2; ++d) {
      uint64_t n = sizes[si];
      for (uint64_t i = 0; i < n; ++i) put_raw(t, sorted, i, value(t));
      ref_t = t, ref_desc = d;
      qsort(sorted, n, size_of(t), cmp_ord);
      vkds_buffer *sb = harness_device_copy(r0, sorted, n * size_of(t));
      vkds_seq ss = vkds_seq_buffer((vkds_view){sb, 0, n * size_of(t)}, t);
      if (!n) ss = vkds_seq_host(sorted, 0, t); /* (a view of 0 bytes is the whole buffer) */
      for (size_t ni = 0; ni < sizeof needle_counts / sizeof *needle_counts; ++ni) {
        uint64_t m = needle_counts[ni];
        for (uint64_t i = 0; i < m; ++i)
          put_raw(t, needles, i, n && i % 3 == 0 ? get_raw(t, sorted, rnd() % n) : value(t));
        vkds_type out_type = ni % 2 ? VKDS_U32 : VKDS_I64;
        vkds_seq ns = vkds_seq_host(needles, m, t), os = vkds_seq_host(got, m, out_type);
        for (int u = 0; u < 2; ++u) {
          search_fn fn = u ? vkds_upper_bound : vkds_lower_bound;
          ck_assert_vkds(fn(pol, &ss, &ns, &os, d ? VKDS_SORT_DESCENDING : VKDS_SORT_ASCENDING));
          check(t, sorted, n, needles, m, got, out_type, d, u, "buffer");
        }
      }
      vkds_buffer_destroy(sb);
    }
  free(sorted), free(needles), free(got);
  close_ctx();
}
END_TEST

START_TEST(sequence_kinds_and_forms) {
  enum { N = 5000, M = 3001 };
  open_ctx(2);
  vkds_resource *r1 = harness_device_resource(ctx, 1);
  ck_assert_ptr_nonnull(r1);
  uint32_t *sorted = malloc(N * 4), *rsorted = malloc(N * 4), *needles = malloc(M * 4);
  uint64_t *got = malloc(M * 8);
  for (uint32_t i = 0; i < N; ++i) sorted[i] = (uint32_t)(rnd() % 2000);
  ref_t = VKDS_U32, ref_desc = false;
  qsort(sorted, N, 4, cmp_ord);
  for (uint32_t i = 0; i < N; ++i) rsorted[i] = sorted[N - 1 - i];
  for (uint32_t i = 0; i < M; ++i) needles[i] = (uint32_t)(rnd() % 2100);
  vkds_seq ns = vkds_seq_host_const(needles, M, VKDS_U32), os = vkds_seq_host(got, M, VKDS_U64);
  /* host memory, staged whole */
  vkds_seq hs = vkds_seq_host_const(sorted, N, VKDS_U32);
  ck_assert_vkds(vkds_lower_bound(pol, &hs, &ns, &os, VKDS_SORT_DEFAULT));
  check(VKDS_U32, sorted, N, needles, M, got, VKDS_U64, false, false, "host");
  /* a reverse view of an ascending buffer is descending */
  vkds_buffer *sb = harness_device_copy(r0, sorted, N * 4);
  vkds_seq bs = vkds_seq_buffer(vkds_view_of(sb), VKDS_U32), rv = vkds_seq_reverse(&bs);
  ck_assert_vkds(vkds_upper_bound(pol, &rv, &ns, &os, VKDS_SORT_DESCENDING));
  check(VKDS_U32, rsorted, N, needles, M, got, VKDS_U64, true, true, "reverse view");
  /* a buffer of the second VkDevice (staged), into a device buffer */
  vkds_buffer *other = harness_device_copy(r1, sorted, N * 4), *ob = harness_device_copy(r0, NULL, M * 8);
  vkds_seq xs = vkds_seq_buffer(vkds_view_of(other), VKDS_U32), obs = vkds_seq_buffer(vkds_view_of(ob), VKDS_U64);
  ck_assert_vkds(vkds_lower_bound(pol, &xs, &ns, &obs, VKDS_SORT_ASCENDING));
  ck_assert_vkds(vkds_download(r0, got, vkds_view_of(ob), M * 8));
  check(VKDS_U32, sorted, N, needles, M, got, VKDS_U64, false, false, "buffer of device 1");
  /* asynchronous */
  vkds_submission *sub;
  memset(got, 0, M * 8);
  ck_assert_vkds(vkds_upper_bound_async(pol, &bs, &ns, &os, VKDS_SORT_ASCENDING, &sub));
  ck_assert_vkds(vkds_submission_wait(sub));
  vkds_submission_release(sub);
  check(VKDS_U32, sorted, N, needles, M, got, VKDS_U64, false, true, "async");
  /* recorded: device buffers only, no scratch needed */
  vkds_buffer *nb = harness_device_copy(r0, needles, M * 4);
  vkds_seq nbs = vkds_seq_buffer(vkds_view_of(nb), VKDS_U32);
  app_cmd a = {0};
  app_cmd_begin(&a, r0);
  vkds_cmd c = {.cmd = a.cmd, .resource = r0};
  ck_assert_vkds(vkds_cmd_lower_bound(&c, &rv, &nbs, &obs, VKDS_SORT_DESCENDING));
  ck_assert_int_eq(vkds_cmd_lower_bound(&c, &hs, &nbs, &obs, VKDS_SORT_ASCENDING), VKDS_ERROR_INVALID_ARGUMENT);
  app_cmd_submit(&a, 10);
  ck_assert_vkds(vkds_download(r0, got, vkds_view_of(ob), M * 8));
  check(VKDS_U32, rsorted, N, needles, M, got, VKDS_U64, true, false, "recorded");
  app_cmd_destroy(&a);
  vkds_buffer_destroy(sb), vkds_buffer_destroy(other), vkds_buffer_destroy(ob), vkds_buffer_destroy(nb);
  free(sorted), free(rsorted), free(needles), free(got);
  close_ctx();
}
END_TEST

START_TEST(bad_input) {
  open_ctx(1);
  uint32_t s[16], n[8];
  uint64_t o[8];
  float f[8];
  for (int i = 0; i < 16; ++i) s[i] = (uint32_t)i;
  for (int i = 0; i < 8; ++i) n[i] = (uint32_t)i, o[i] = 77;
  vkds_seq ss = vkds_seq_host(s, 16, VKDS_U32), ns = vkds_seq_host(n, 8, VKDS_U32), os = vkds_seq_host(o, 8, VKDS_U64);
  vkds_seq fs = vkds_seq_host(f, 8, VKDS_F32), short_out = vkds_seq_host(o, 7, VKDS_U64);
  vkds_seq ro = vkds_seq_host_const(o, 8, VKDS_U64), over = vkds_seq_host(n, 8, VKDS_U32);
  const vkds_result E = VKDS_ERROR_INVALID_ARGUMENT;
  vkds_policy_resource_stats before, after;
  ck_assert_vkds(vkds_policy_get_resource_stats(pol, 0, &before));
  ck_assert_int_eq(vkds_lower_bound(pol, &ss, &fs, &os, VKDS_SORT_ASCENDING), E);       /* types differ */
  ck_assert_int_eq(vkds_lower_bound(pol, &ss, &ns, &fs, VKDS_SORT_ASCENDING), E);       /* float indices */
  ck_assert_int_eq(vkds_upper_bound(pol, &ss, &ns, &short_out, VKDS_SORT_ASCENDING), E); /* counts */
  ck_assert_int_eq(vkds_upper_bound(pol, &ss, &ns, &ro, VKDS_SORT_ASCENDING), E);       /* read-only output */
  ck_assert_int_eq(vkds_upper_bound(pol, &ss, &ns, &over, VKDS_SORT_ASCENDING), E);     /* output over the needles */
  ck_assert_int_eq(vkds_lower_bound(pol, &ss, &ns, &os, (vkds_sort_order)9), E);        /* order */
  /* indices past what the output's type holds (a U32 output wrapped them, and said
   * success: found by a new-user probe); U64 holds them */
  uint64_t far_needles[2] = {5, (1ull << 32) + 3}, far64[2] = {0, 0};
  uint32_t far32[2] = {77, 77};
  vkds_seq far_sorted = vkds_seq_counting(0, (1ull << 32) + 10, VKDS_U64), far_n = vkds_seq_host(far_needles, 2, VKDS_U64);
  vkds_seq f32s = vkds_seq_host(far32, 2, VKDS_U32), f32i = vkds_seq_host(far32, 2, VKDS_I32);
  ck_assert_int_eq(vkds_lower_bound(pol, &far_sorted, &far_n, &f32s, VKDS_SORT_ASCENDING), E);
  ck_assert_msg(strstr(vkds_last_error_message(), "cannot hold"), "%s", vkds_last_error_message());
  vkds_seq half_sorted = vkds_seq_counting(0, (1ull << 31) + 1, VKDS_U64);
  ck_assert_int_eq(vkds_upper_bound(pol, &half_sorted, &far_n, &f32i, VKDS_SORT_ASCENDING), E);
  ck_assert_uint_eq(far32[0], 77);
  ck_assert_int_eq(vkds_lower_bound(NULL, &ss, &ns, &os, VKDS_SORT_ASCENDING), E);      /* NULLs */
  ck_assert_int_eq(vkds_lower_bound(pol, NULL, &ns, &os, VKDS_SORT_ASCENDING), E);
  ck_assert_int_eq(vkds_lower_bound(pol, &ss, NULL, &os, VKDS_SORT_ASCENDING), E);
  ck_assert_int_eq(vkds_lower_bound(pol, &ss, &ns, NULL, VKDS_SORT_ASCENDING), E);
  ck_assert_int_eq(vkds_lower_bound_async(pol, &ss, &ns, &os, VKDS_SORT_ASCENDING, NULL), E);
  ck_assert_int_eq(vkds_cmd_upper_bound(NULL, &ss, &ns, &os, VKDS_SORT_ASCENDING), E);
  ck_assert_vkds(vkds_policy_get_resource_stats(pol, 0, &after));
  ck_assert_uint_eq(after.selections, before.selections);
  for (int i = 0; i < 8; ++i) ck_assert_uint_eq(o[i], 77);
  vkds_seq f64s = vkds_seq_host(far64, 2, VKDS_U64);
  ck_assert_vkds(vkds_lower_bound(pol, &far_sorted, &far_n, &f64s, VKDS_SORT_ASCENDING));
  ck_assert_uint_eq(far64[0], 5);
  ck_assert_uint_eq(far64[1], (1ull << 32) + 3);
  close_ctx();
}
END_TEST

/* ---- is_sorted ---- */

START_TEST(is_sorted_every_type) {
  vkds_type t = TYPES[_i];
  open_ctx(1);
  enum { N = 100003 };
  void *a = malloc(N * 8);
  const uint64_t sizes[] = {0, 1, 2, 3, 4097, N};
  for (int d = 0; d < 2; ++d)
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; ++si) {
      uint64_t n = sizes[si];
      for (uint64_t i = 0; i < n; ++i) put_raw(t, a, i, value(t));
      ref_t = t, ref_desc = d;
      qsort(a, n, size_of(t), cmp_ord);
      vkds_buffer *b = harness_device_copy(r0, a, n * size_of(t));
      vkds_seq bs = vkds_seq_buffer((vkds_view){b, 0, n * size_of(t)}, t);
      if (!n) bs = vkds_seq_host(a, 0, t);
      vkds_sort_order order = d ? VKDS_SORT_DESCENDING : VKDS_SORT_ASCENDING;
      bool sorted = false;
      ck_assert_vkds(vkds_is_sorted(pol, &bs, order, &sorted));
      ck_assert_msg(sorted, "type %d n %llu order %d: sorted data not sorted", (int)t, (unsigned long long)n, d);
      /* one pair out of order: at the start, across a run, a group, and at the end */
      const uint64_t at[] = {0, 3, 4095, n - 2};
      for (size_t k = 0; n >= 2 && k < sizeof at / sizeof *at; ++k) {
        uint64_t i = at[k];
        if (i + 1 >= n) continue;
        uint64_t x = get_raw(t, a, i), y = get_raw(t, a, i + 1);
        if (ord_of(t, x, d) == ord_of(t, y, d)) continue; /* equal: swapping changes nothing */
        put_raw(t, a, i, y), put_raw(t, a, i + 1, x);
        ck_assert_vkds(vkds_upload(r0, (vkds_view){b, 0, n * size_of(t)}, a, n * size_of(t)));
        ck_assert_vkds(vkds_is_sorted(pol, &bs, order, &sorted));
        ck_assert_msg(!sorted, "type %d n %llu order %d: swapped at %llu, still sorted", (int)t, (unsigned long long)n,
                      d, (unsigned long long)i);
        put_raw(t, a, i, x), put_raw(t, a, i + 1, y);
      }
      vkds_buffer_destroy(b);
    }
  free(a);
  close_ctx();
}
END_TEST

START_TEST(is_sorted_edges) {
  open_ctx(1);
  float f[4];
  vkds_seq fs = vkds_seq_host(f, 2, VKDS_F32);
  bool r;
  f[0] = 1.0f, f[1] = __builtin_nanf("");
  ck_assert_vkds(vkds_is_sorted(pol, &fs, VKDS_SORT_ASCENDING, &r));
  ck_assert(r); /* +NaN last */
  ck_assert_vkds(vkds_is_sorted(pol, &fs, VKDS_SORT_DESCENDING, &r));
  ck_assert(!r);
  f[0] = 0.0f, f[1] = -0.0f;
  ck_assert_vkds(vkds_is_sorted(pol, &fs, VKDS_SORT_ASCENDING, &r));
  ck_assert(!r); /* -0 before +0 */
  f[0] = -__builtin_nanf(""), f[1] = -__builtin_inff();
  ck_assert_vkds(vkds_is_sorted(pol, &fs, VKDS_SORT_ASCENDING, &r));
  ck_assert(r); /* -NaN first */
  /* a view, and a sort's output */
  int32_t v[1000];
  for (int i = 0; i < 1000; ++i) v[i] = (int32_t)(rnd() % 100) - 50;
  vkds_seq vs = vkds_seq_host(v, 1000, VKDS_I32), rv = vkds_seq_reverse(&vs);
  ck_assert_vkds(vkds_sort(pol, &vs, VKDS_SORT_ASCENDING));
  ck_assert_vkds(vkds_is_sorted(pol, &vs, VKDS_SORT_DEFAULT, &r));
  ck_assert(r);
  ck_assert_vkds(vkds_is_sorted(pol, &rv, VKDS_SORT_DESCENDING, &r));
  ck_assert(r);
  ck_assert_vkds(vkds_is_sorted(pol, &rv, VKDS_SORT_ASCENDING, &r));
  ck_assert(!r);
  /* asynchronous */
  vkds_submission *sub;
  r = false;
  ck_assert_vkds(vkds_is_sorted_async(pol, &vs, VKDS_SORT_ASCENDING, &r, &sub));
  ck_assert_vkds(vkds_submission_wait(sub));
  vkds_submission_release(sub);
  ck_assert(r);
  /* bad input */
  ck_assert_int_eq(vkds_is_sorted(pol, &vs, VKDS_SORT_ASCENDING, NULL), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_is_sorted(pol, &vs, (vkds_sort_order)5, &r), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_is_sorted(pol, NULL, VKDS_SORT_ASCENDING, &r), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_cmd_is_sorted(NULL, &vs, VKDS_SORT_ASCENDING, (vkds_view){0}), VKDS_ERROR_INVALID_ARGUMENT);
  close_ctx();
}
END_TEST

/* ---- merge ---- */

/* The host's stable merge (ties: a first). */
static void host_merge(vkds_type t, const void *a, uint64_t na, const void *b, uint64_t nb, void *out, bool desc) {
  uint64_t i = 0, j = 0;
  for (uint64_t k = 0; k < na + nb; ++k) {
    bool take_a = i < na && (j >= nb || !(ord_of(t, get_raw(t, b, j), desc) < ord_of(t, get_raw(t, a, i), desc)));
    put_raw(t, out, k, take_a ? get_raw(t, a, i++) : get_raw(t, b, j++));
  }
}

/* Sorts a (na elements of type t) and b (nb) in the order asked, and writes their host
 * merge to want. */
static void sort_and_merge(vkds_type t, void *a, uint64_t na, void *b, uint64_t nb, bool desc, void *want) {
  ref_t = t, ref_desc = desc;
  qsort(a, na, size_of(t), cmp_ord);
  qsort(b, nb, size_of(t), cmp_ord);
  host_merge(t, a, na, b, nb, want, desc);
}

START_TEST(merge_every_type) {
  vkds_type t = TYPES[_i];
  open_ctx(1);
  /* a work group merges 2048 outputs (merge.glsl): one group exactly, from one input
   * alone, and its ends inside each input */
  const uint64_t sizes[][2] = {{0, 0},      {0, 5},       {5, 0},    {1, 1},          {1000, 3},      {2048, 0},
                               {0, 2048},   {1024, 1024}, {2047, 2050}, {4097, 10001}, {100003, 99991}};
  enum { MOST = 100003 };
  void *a = malloc(MOST * 8), *b = malloc(MOST * 8), *want = malloc(2 * MOST * 8), *got = malloc(2 * MOST * 8);
  for (int d = 0; d < 2; ++d)
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; ++si) {
      uint64_t na = sizes[si][0], nb = sizes[si][1];
      for (uint64_t i = 0; i < na; ++i) put_raw(t, a, i, value(t));
      for (uint64_t i = 0; i < nb; ++i) put_raw(t, b, i, value(t));
      sort_and_merge(t, a, na, b, nb, d, want);
      vkds_buffer *ab = harness_device_copy(r0, a, na * size_of(t)), *ob = harness_device_copy(r0, NULL, (na + nb) * size_of(t));
      vkds_seq as = na ? vkds_seq_buffer((vkds_view){ab, 0, na * size_of(t)}, t) : vkds_seq_host(a, 0, t);
      vkds_seq bs = vkds_seq_host_const(b, nb, t); /* staged */
      vkds_seq os = na + nb ? vkds_seq_buffer((vkds_view){ob, 0, (na + nb) * size_of(t)}, t) : vkds_seq_host(got, 0, t);
      ck_assert_vkds(vkds_merge(pol, &as, &bs, &os, d ? VKDS_SORT_DESCENDING : VKDS_SORT_ASCENDING));
      if (na + nb) ck_assert_vkds(vkds_download(r0, got, (vkds_view){ob, 0, (na + nb) * size_of(t)}, (na + nb) * size_of(t)));
      for (uint64_t k = 0; k < na + nb; ++k)
        if (get_raw(t, got, k) != get_raw(t, want, k))
          ck_abort_msg("merge type %d %s, %llu + %llu: [%llu] got %llx want %llx", (int)t, d ? "descending" : "ascending",
                       (unsigned long long)na, (unsigned long long)nb, (unsigned long long)k,
                       (unsigned long long)get_raw(t, got, k), (unsigned long long)get_raw(t, want, k));
      vkds_buffer_destroy(ab), vkds_buffer_destroy(ob);
    }
  free(a), free(b), free(want), free(got);
  close_ctx();
}
END_TEST

/* Merges of long inputs (2.2 and 4.4 million outputs: the groups' k-ary search by
 * subgroups runs several rounds; from 2^22 a partition dispatch finds the ranges first),
 * blocking and recorded: both inputs long, their lengths off the groups' 2048,
 * duplicates across them; then one input of 3 elements against a long one, each way
 * round (every group's range is then clamped at one end). */
START_TEST(merge_long_inputs) {
  /* the longest output: 2600007 + 1800001, past 2^22 (where the partition dispatch
   * comes in: merge.c) */
  enum { LONG = 2200001, MOST = 4400008 };
  const uint32_t shapes[][2] = {{2600007, 1800001}, {3, LONG}, {LONG, 3}};
  open_ctx(1);
  uint32_t *a = malloc(MOST * 4), *b = malloc(MOST * 4), *want = malloc(MOST * 4), *got = malloc(MOST * 4);
  vkds_buffer *ab = harness_device_copy(r0, NULL, MOST * 4), *bb = harness_device_copy(r0, NULL, MOST * 4), *ob = harness_device_copy(r0, NULL, MOST * 4);
  ck_assert_uint_gt(vkds_merge_scratch_bytes(r0, MOST), 0);
  vkds_buffer *scratch = harness_device_copy(r0, NULL, vkds_merge_scratch_bytes(r0, MOST) + 8);
  for (size_t si = 0; si < sizeof shapes / sizeof *shapes; ++si) {
    uint32_t na = shapes[si][0], nb = shapes[si][1];
    for (uint32_t i = 0; i < na; ++i) a[i] = (uint32_t)(rnd() % 1000000);
    for (uint32_t i = 0; i < nb; ++i) b[i] = (uint32_t)(rnd() % 1000000);
    sort_and_merge(VKDS_U32, a, na, b, nb, false, want);
    ck_assert_vkds(vkds_upload(r0, (vkds_view){ab, 0, na * 4}, a, na * 4));
    ck_assert_vkds(vkds_upload(r0, (vkds_view){bb, 0, nb * 4}, b, nb * 4));
    vkds_seq as = vkds_seq_buffer((vkds_view){ab, 0, na * 4}, VKDS_U32);
    vkds_seq bs = vkds_seq_buffer((vkds_view){bb, 0, nb * 4}, VKDS_U32);
    vkds_seq os = vkds_seq_buffer((vkds_view){ob, 0, (na + nb) * 4}, VKDS_U32);
    /* blocking (a partition dispatch first, from 2^22 outputs), recorded without a scratch
     * (the groups search) and with one (the partition) */
    for (int form = 0; form < 3; ++form) {
      ck_assert_vkds(vkds_fill(pol, &os, &(uint32_t){0xdeadbeefu}));
      if (form == 0) {
        ck_assert_vkds(vkds_merge(pol, &as, &bs, &os, VKDS_SORT_ASCENDING));
      } else {
        app_cmd c = {0};
        app_cmd_begin(&c, r0);
        vkds_cmd rc = {.cmd = c.cmd, .resource = r0};
        if (form == 2) rc.scratch = (vkds_view){scratch, 8, 0}; /* (8-byte aligned, not at the start) */
        ck_assert_vkds(vkds_cmd_merge(&rc, &as, &bs, &os, VKDS_SORT_ASCENDING));
        app_cmd_submit(&c, 60);
        app_cmd_destroy(&c);
      }
      ck_assert_vkds(vkds_download(r0, got, (vkds_view){ob, 0, (na + nb) * 4}, (na + nb) * 4));
      for (uint32_t k = 0; k < na + nb; ++k)
        if (got[k] != want[k])
          ck_abort_msg("merge %u + %u, form %d: [%u] got %u want %u", na, nb, form, k, got[k], want[k]);
    }
  }
  vkds_buffer_destroy(ab), vkds_buffer_destroy(bb), vkds_buffer_destroy(ob), vkds_buffer_destroy(scratch);
  free(a), free(b), free(want), free(got);
  close_ctx();
}
END_TEST

/* The partition dispatch forced (VKDS_MERGE_SEARCH, a measuring aid) on short merges:
 * one group, a group's end exactly at an input's end, the last group short. */
START_TEST(merge_partition_forced) {
  harness_setenv("VKDS_MERGE_SEARCH", "partition");
  open_ctx(1);
  const uint32_t shapes[][2] = {{1, 0}, {0, 7}, {2048, 2048}, {1000, 3097}, {4096, 1}, {3, 9000}};
  uint32_t *a = malloc(9100 * 4), *b = malloc(9100 * 4), *want = malloc(18200 * 4), *got = malloc(18200 * 4);
  for (size_t si = 0; si < sizeof shapes / sizeof *shapes; ++si) {
    uint32_t na = shapes[si][0], nb = shapes[si][1];
    for (uint32_t i = 0; i < na; ++i) a[i] = (uint32_t)(rnd() % 5000);
    for (uint32_t i = 0; i < nb; ++i) b[i] = (uint32_t)(rnd() % 5000);
    sort_and_merge(VKDS_U32, a, na, b, nb, false, want);
    vkds_seq as = vkds_seq_host_const(a, na, VKDS_U32), bs = vkds_seq_host_const(b, nb, VKDS_U32);
    vkds_seq os = vkds_seq_host(got, na + nb, VKDS_U32);
    ck_assert_vkds(vkds_merge(pol, &as, &bs, &os, VKDS_SORT_ASCENDING));
    for (uint32_t k = 0; k < na + nb; ++k)
      if (got[k] != want[k]) ck_abort_msg("merge %u + %u, partition forced: [%u] got %u want %u", na, nb, k, got[k], want[k]);
  }
  /* the recorded form: a scratch too small is not used (the groups search), one over the
   * output is refused */
  vkds_buffer *ab = harness_device_copy(r0, a, 3 * 4), *bb = harness_device_copy(r0, b, 9000 * 4);
  vkds_buffer *ob = harness_device_copy(r0, NULL, 9003 * 4);
  vkds_seq as = vkds_seq_buffer(vkds_view_of(ab), VKDS_U32), bs = vkds_seq_buffer(vkds_view_of(bb), VKDS_U32);
  vkds_seq os = vkds_seq_buffer(vkds_view_of(ob), VKDS_U32);
  for (int form = 0; form < 2; ++form) {
    app_cmd c = {0};
    app_cmd_begin(&c, r0);
    vkds_cmd rc = {.cmd = c.cmd, .resource = r0, .scratch = form ? (vkds_view){ob, 0, 64} : (vkds_view){ab, 0, 8}};
    if (form) {
      ck_assert_int_eq(vkds_cmd_merge(&rc, &as, &bs, &os, VKDS_SORT_ASCENDING), VKDS_ERROR_INVALID_ARGUMENT);
      ck_assert_msg(strstr(vkds_last_error_message(), "overlap"), "%s", vkds_last_error_message());
    } else {
      ck_assert_vkds(vkds_cmd_merge(&rc, &as, &bs, &os, VKDS_SORT_ASCENDING));
    }
    app_cmd_submit(&c, 60);
    app_cmd_destroy(&c);
  }
  ck_assert_vkds(vkds_download(r0, got, vkds_view_of(ob), 9003 * 4));
  for (uint32_t k = 0; k < 9003; ++k)
    if (got[k] != want[k]) ck_abort_msg("recorded merge, a small scratch: [%u] got %u want %u", k, got[k], want[k]);
  vkds_buffer_destroy(ab), vkds_buffer_destroy(bb), vkds_buffer_destroy(ob);
  free(a), free(b), free(want), free(got);
  close_ctx();
}
END_TEST

/* Inputs that are not sorted (documented: the output then loses some elements and
 * repeats others) and comparators that are not strict weak orders ("a <= b", a likely
 * slip): no crash and no element from outside the inputs, whichever way the groups find
 * their ranges (lavapipe crashed: the two ends' searches disagreed and a group's parts
 * ran past shared memory; a probe). */
static void check_members(const char *what, const uint32_t *got, uint32_t n) {
  for (uint32_t k = 0; k < n; ++k)
    if (got[k] < 1 || got[k] > 1000) ck_abort_msg("%s: [%u] is %u, no input element", what, k, got[k]);
}
START_TEST(merge_unsorted_inputs) {
  enum { NA = 5003, NB = 7001 };
  uint32_t *a = malloc(NA * 4), *b = malloc(NB * 4), *got = malloc((NA + NB) * 4);
  for (uint32_t i = 0; i < NA; ++i) a[i] = 1 + (uint32_t)(rnd() % 1000);
  for (uint32_t i = 0; i < NB; ++i) b[i] = 1 + (uint32_t)(rnd() % 1000);
  for (int search = 0; search < 2; ++search) {
    harness_setenv("VKDS_MERGE_SEARCH", search ? "partition" : "group");
    open_ctx(1);
    vkds_seq as = vkds_seq_host_const(a, NA, VKDS_U32), bs = vkds_seq_host_const(b, NB, VKDS_U32);
    vkds_seq os = vkds_seq_host(got, NA + NB, VKDS_U32);
    memset(got, 0, (NA + NB) * 4);
    ck_assert_vkds(vkds_merge(pol, &as, &bs, &os, VKDS_SORT_ASCENDING));
    check_members("merge", got, NA + NB);
    memset(got, 0, (NA + NB) * 4);
    ck_assert_vkds(vkds_merge_by(pol, &as, &bs, &os, "a <= b"));
    check_members("merge_by a <= b", got, NA + NB);
    close_ctx();
  }
  harness_setenv("VKDS_MERGE_SEARCH", NULL);
  /* the merge sort's passes merge what its tiles sorted by such a comparator */
  open_ctx(1);
  enum { N = 100003 };
  uint32_t *d = malloc(N * 4);
  for (uint32_t i = 0; i < N; ++i) d[i] = 1 + (uint32_t)(rnd() % 1000);
  vkds_seq ds = vkds_seq_host(d, N, VKDS_U32);
  ck_assert_vkds(vkds_merge_sort(pol, &ds, "a <= b"));
  check_members("merge_sort a <= b", d, N);
  for (uint32_t i = 0; i < N; ++i) d[i] = 1 + (uint32_t)(rnd() % 1000);
  ck_assert_vkds(vkds_merge_sort(pol, &ds, "(a & 1u) < (b & 1u) || a < b")); /* not transitive */
  check_members("merge_sort by an order that is not transitive", d, N);
  close_ctx();
  free(a), free(b), free(got), free(d);
}
END_TEST

/* The merge's remaining sequence kinds: a buffer of the second VkDevice (staged to the
 * device the policy picks) merged with a mapped buffer into a mapped buffer, lengths off
 * the vector width and the group's 2048. */
START_TEST(merge_mapped_and_another_device) {
  enum { NA = 3001, NB = 2050 };
  open_ctx(2);
  vkds_resource *r1 = harness_device_resource(ctx, 1);
  ck_assert_ptr_nonnull(r1);
  uint32_t *a = malloc(NA * 4), *b = malloc(NB * 4), *want = malloc((NA + NB) * 4), *got = malloc((NA + NB) * 4);
  for (uint32_t i = 0; i < NA; ++i) a[i] = (uint32_t)(rnd() % 3000);
  for (uint32_t i = 0; i < NB; ++i) b[i] = (uint32_t)(rnd() % 3000);
  sort_and_merge(VKDS_U32, a, NA, b, NB, false, want);
  vkds_buffer *ab = harness_device_copy(r1, a, NA * 4), *bb, *ob;
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = NB * 4, .memory = VKDS_MEMORY_MAPPED}, &bb));
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = (NA + NB) * 4, .memory = VKDS_MEMORY_MAPPED}, &ob));
  memcpy(vkds_buffer_map(bb), b, NB * 4);
  vkds_seq as = vkds_seq_buffer(vkds_view_of(ab), VKDS_U32), bs = vkds_seq_buffer(vkds_view_of(bb), VKDS_U32);
  vkds_seq os = vkds_seq_buffer(vkds_view_of(ob), VKDS_U32);
  ck_assert_vkds(vkds_merge(pol, &as, &bs, &os, VKDS_SORT_ASCENDING));
  ck_assert_vkds(vkds_download(r0, got, vkds_view_of(ob), (NA + NB) * 4));
  for (uint32_t k = 0; k < NA + NB; ++k)
    if (got[k] != want[k]) ck_abort_msg("merge, device 1 + mapped: [%u] got %u want %u", k, got[k], want[k]);
  vkds_buffer_destroy(ab), vkds_buffer_destroy(bb), vkds_buffer_destroy(ob);
  free(a), free(b), free(want), free(got);
  close_ctx();
}
END_TEST

START_TEST(merge_views_forms_errors) {
  enum { NA = 3000, NB = 5001 };
  open_ctx(1);
  int64_t *a = malloc(NA * 8), *b = malloc(NB * 8), *ra = malloc(NA * 8), *want = malloc((NA + NB) * 8);
  int64_t *got = malloc((NA + NB) * 8);
  for (uint32_t i = 0; i < NA; ++i) a[i] = (int64_t)(rnd() % 500) - 250;
  for (uint32_t i = 0; i < NB; ++i) b[i] = (int64_t)(rnd() % 500) - 250;
  ref_t = VKDS_I64, ref_desc = false;
  qsort(a, NA, 8, cmp_ord);
  ref_desc = true;
  qsort(b, NB, 8, cmp_ord);
  for (uint32_t i = 0; i < NA; ++i) ra[i] = a[NA - 1 - i];
  host_merge(VKDS_I64, ra, NA, b, NB, want, true);
  /* a reverse view of an ascending buffer, merged descending; asynchronous */
  vkds_buffer *ab = harness_device_copy(r0, a, NA * 8);
  vkds_seq as = vkds_seq_buffer(vkds_view_of(ab), VKDS_I64), rv = vkds_seq_reverse(&as);
  vkds_seq bs = vkds_seq_host(b, NB, VKDS_I64), os = vkds_seq_host(got, NA + NB, VKDS_I64);
  vkds_submission *sub;
  ck_assert_vkds(vkds_merge_async(pol, &rv, &bs, &os, VKDS_SORT_DESCENDING, &sub));
  ck_assert_vkds(vkds_submission_wait(sub));
  vkds_submission_release(sub);
  ck_assert(memcmp(got, want, (NA + NB) * 8) == 0);
  /* bad input */
  const vkds_result E = VKDS_ERROR_INVALID_ARGUMENT;
  vkds_seq short_out = vkds_seq_host(got, NA + NB - 1, VKDS_I64), fo = vkds_seq_host(got, NA + NB, VKDS_U64);
  vkds_seq inside = vkds_seq_host(got, NA, VKDS_I64); /* the output's own first elements */
  vkds_seq ro = vkds_seq_host_const(got, NA + NB, VKDS_I64);
  ck_assert_int_eq(vkds_merge(pol, &rv, &bs, &short_out, VKDS_SORT_DESCENDING), E);
  ck_assert_msg(strstr(vkds_last_error_message(), "as many as both inputs together"), "%s", vkds_last_error_message());
  ck_assert_int_eq(vkds_merge(pol, &rv, &bs, &fo, VKDS_SORT_DESCENDING), E);
  ck_assert_int_eq(vkds_merge(pol, &rv, &bs, &ro, VKDS_SORT_DESCENDING), E);
  ck_assert_int_eq(vkds_merge(pol, &inside, &bs, &os, VKDS_SORT_DESCENDING), E); /* out overlaps an input */
  ck_assert_msg(strstr(vkds_last_error_message(), "overlap"), "%s", vkds_last_error_message());
  ck_assert_int_eq(vkds_merge(pol, &rv, &bs, &os, (vkds_sort_order)3), E);
  ck_assert_int_eq(vkds_merge(pol, NULL, &bs, &os, VKDS_SORT_DESCENDING), E);
  ck_assert_int_eq(vkds_merge(NULL, &rv, &bs, &os, VKDS_SORT_DESCENDING), E);
  ck_assert_int_eq(vkds_cmd_merge(NULL, &rv, &bs, &os, VKDS_SORT_DESCENDING), E);
  vkds_buffer_destroy(ab);
  free(a), free(b), free(ra), free(want), free(got);
  close_ctx();
}
END_TEST

int main(void) {
  Suite *s = suite_create("search");
  TCase *t = harness_tcase("types");
  tcase_add_loop_test(t, every_type, 0, (int)(sizeof TYPES / sizeof *TYPES));
  suite_add_tcase(s, t);
  t = harness_tcase("sequences");
  tcase_add_test(t, sequence_kinds_and_forms);
  suite_add_tcase(s, t);
  t = harness_tcase("is_sorted");
  tcase_add_loop_test(t, is_sorted_every_type, 0, (int)(sizeof TYPES / sizeof *TYPES));
  tcase_add_test(t, is_sorted_edges);
  suite_add_tcase(s, t);
  t = harness_tcase("merge");
  tcase_add_loop_test(t, merge_every_type, 0, (int)(sizeof TYPES / sizeof *TYPES));
  tcase_add_test(t, merge_views_forms_errors);
  tcase_add_test(t, merge_long_inputs);
  tcase_add_test(t, merge_partition_forced);
  tcase_add_test(t, merge_mapped_and_another_device);
  tcase_add_test(t, merge_unsorted_inputs);
  suite_add_tcase(s, t);
  t = harness_tcase("errors");
  tcase_add_test(t, bad_input);
  suite_add_tcase(s, t);
  return harness_run(s);
}
