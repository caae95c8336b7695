/* tests/test_algorithm.c: the algorithm layer (vkds/algorithm.h) on lavapipe, validation
 * on: every reduction operator and type against a host reference at the sizes where
 * tails and grids change, 2^k ± 1 up to 2^24, unaligned ranges, every sequence kind
 * (views generated into the kernel, a user type with device code, a user type staged
 * through host reads), a buffer of a second VkDevice, host data larger than the staging
 * ring, the three forms, caching (in memory and across contexts on disk), operators
 * that do not compile, and bad input (nothing submitted, nothing written). */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app_cmd.h"
#include "harness.h"
#include "backend/queue_test.h" /* queue_puts_the_leading_barrier_where_needed */
#include "values.h"
#include "multi_device.h"

static vkds_context *ctx;
static vkds_resource *r0;
static vkds_policy *pol; /* fixed on resource 0 */

/* The access rules of lib/algorithm/codegen.c, forced: the main cases run under each
 * (loop index 0: leaves bound as storage buffers, lavapipe's default; 1: device
 * addresses, a GPU's). Set before the context exists, which reads it. */
static const char *const ACCESS[] = {"descriptor", "address"};
static void force_access(int i) { harness_setenv("VKDS_ALGORITHM_ACCESS", ACCESS[i]); }

static void open_ctx(void) {
  ctx = harness_context();
  r0 = vkds_context_resource(ctx, 0);
  ck_assert_vkds(vkds_policy_create(
      &(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = {.context = ctx}}, &pol));
}
static void close_ctx(void) {
  vkds_policy_release(pol);
  vkds_context_destroy(ctx);
}

static uint32_t subgroup(void) {
  vkds_resource_info info;
  vkds_resource_get_info(r0, &info);
  return info.subgroup_size ? info.subgroup_size : 8;
}

/* ---- values of every type ---- */



static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
  return rng_state;
}

/* Element i of an array of type t, as a double and as raw 64 bits (sign-extended). */
static double as_double(vkds_type t, const void *p, uint64_t i) {
  switch (t) {
  case VKDS_I32: return ((const int32_t *)p)[i];
  case VKDS_U32: return ((const uint32_t *)p)[i];
  case VKDS_F32: return ((const float *)p)[i];
  case VKDS_I64: return (double)((const int64_t *)p)[i];
  case VKDS_U64: return (double)((const uint64_t *)p)[i];
  default: return ((const double *)p)[i];
  }
}
static uint64_t as_bits(vkds_type t, const void *p, uint64_t i) {
  switch (t) {
  case VKDS_I32: return (uint64_t)(int64_t)((const int32_t *)p)[i];
  case VKDS_U32: return ((const uint32_t *)p)[i];
  case VKDS_I64: case VKDS_U64: return ((const uint64_t *)p)[i];
  default: return 0;
  }
}
static val from_double(vkds_type t, double d) {
  val v = {0};
  switch (t) {
  case VKDS_I32: v.i32 = (int32_t)d; break;
  case VKDS_U32: v.u32 = (uint32_t)d; break;
  case VKDS_F32: v.f32 = (float)d; break;
  case VKDS_I64: v.i64 = (int64_t)d; break;
  case VKDS_U64: v.u64 = (uint64_t)d; break;
  default: v.f64 = d; break;
  }
  return v;
}
static val from_bits(vkds_type t, uint64_t b) {
  val v = {0};
  if (size_of(t) == 4) v.u32 = (uint32_t)b;
  else v.u64 = b;
  return v;
}

/* n random elements of type t for operator op: small values (so products and logical
 * operators mean something), zeros included; near 1 for float products. */
static void *random_data(vkds_type t, uint64_t n, vkds_op_kind op) {
  void *p = malloc((n ? n : 1) * 8);
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t r = rnd();
    val v;
    if (is_float(t)) v = from_double(t, op == VKDS_OP_MULTIPLIES ? 1.0 + ((double)(r % 2001) - 1000.0) * 1e-6
                                                                : ((double)(r % 20001) - 10000.0) / 64.0);
    else if (op == VKDS_OP_MULTIPLIES || op == VKDS_OP_LOGICAL_AND || op == VKDS_OP_LOGICAL_OR) v = from_bits(t, r % 4);
    else v = from_bits(t, is_signed(t) ? (uint64_t)((int64_t)(r % 2000001) - 1000000) : r);
    memcpy((char *)p + i * size_of(t), v.b, size_of(t));
  }
  return p;
}

/* ---- host references ---- */


/* op over integers, in unsigned arithmetic (wrapping), compared as the type says. */
static uint64_t int_op(vkds_type t, vkds_op_kind op, uint64_t a, uint64_t b) {
  bool s = is_signed(t);
  int64_t sa = size_of(t) == 4 ? (int64_t)(int32_t)a : (int64_t)a, sb = size_of(t) == 4 ? (int64_t)(int32_t)b : (int64_t)b;
  uint64_t ua = a & type_mask(t), ub = b & type_mask(t);
  switch (op) {
  case VKDS_OP_MULTIPLIES: return (a * b) & type_mask(t);
  case VKDS_OP_MIN: return (s ? sb < sa : ub < ua) ? b : a;
  case VKDS_OP_MAX: return (s ? sa < sb : ua < ub) ? b : a;
  case VKDS_OP_BIT_AND: return a & b;
  case VKDS_OP_BIT_OR: return a | b;
  case VKDS_OP_BIT_XOR: return a ^ b;
  case VKDS_OP_LOGICAL_AND: return (ua != 0 && ub != 0) ? 1 : 0;
  case VKDS_OP_LOGICAL_OR: return (ua != 0 || ub != 0) ? 1 : 0;
  default: return (a + b) & type_mask(t);
  }
}
static double float_op(vkds_op_kind op, double a, double b) {
  switch (op) {
  case VKDS_OP_MULTIPLIES: return a * b;
  case VKDS_OP_MIN: return b < a ? b : a;
  case VKDS_OP_MAX: return a < b ? b : a;
  case VKDS_OP_LOGICAL_AND: return (a != 0 && b != 0) ? 1 : 0;
  case VKDS_OP_LOGICAL_OR: return (a != 0 || b != 0) ? 1 : 0;
  default: return a + b;
  }
}
static uint64_t int_identity(vkds_type t, vkds_op_kind op) {
  switch (op) {
  case VKDS_OP_MULTIPLIES: case VKDS_OP_LOGICAL_AND: return 1;
  case VKDS_OP_BIT_AND: return ~0ull;
  case VKDS_OP_MIN: return is_signed(t) ? (size_of(t) == 4 ? 0x7fffffffull : 0x7fffffffffffffffull) : ~0ull;
  case VKDS_OP_MAX: return is_signed(t) ? (size_of(t) == 4 ? (uint64_t)(int64_t)INT32_MIN : 0x8000000000000000ull) : 0;
  default: return 0;
  }
}

/* Checks vkds_reduce's result against the host's, in order (exact for integers; for
 * floats, exact for min/max/logical and within a relative tolerance for sums and
 * products, whose order differs). */
static void check_reduce_result(vkds_type t, vkds_op_kind op, const void *data, uint64_t n, const val *got,
                                const char *what) {
  if (!is_float(t)) {
    uint64_t acc = int_identity(t, op);
    for (uint64_t i = 0; i < n; ++i) acc = int_op(t, op, acc, as_bits(t, data, i));
    val want = from_bits(t, acc);
    ck_assert_msg(memcmp(want.b, got->b, size_of(t)) == 0, "%s: %s op %d n %llu: got %llx want %llx", what,
                  type_name(t), (int)op, (unsigned long long)n, (unsigned long long)(got->u64 & type_mask(t)),
                  (unsigned long long)(want.u64 & type_mask(t)));
    return;
  }
  double acc = op == VKDS_OP_MULTIPLIES || op == VKDS_OP_LOGICAL_AND ? 1 : op == VKDS_OP_MIN ? INFINITY
                                                                          : op == VKDS_OP_MAX ? -INFINITY : 0;
  double mag = 0;
  for (uint64_t i = 0; i < n; ++i) {
    double x = as_double(t, data, i);
    acc = float_op(op, acc, x);
    mag += fabs(x);
  }
  double g = t == VKDS_F32 ? got->f32 : got->f64;
  if (g == acc || (t == VKDS_F32 && g == (float)acc)) return;
  bool exact = op == VKDS_OP_MIN || op == VKDS_OP_MAX || op == VKDS_OP_LOGICAL_AND || op == VKDS_OP_LOGICAL_OR;
  double tol = exact ? 0 : (t == VKDS_F32 ? 2e-6 : 1e-12) * (op == VKDS_OP_MULTIPLIES ? fabs(acc) * (double)(n + 1) : mag + 1);
  if (exact && t == VKDS_F32) acc = (float)acc;
  ck_assert_msg(fabs(g - acc) <= tol, "%s: %s op %d n %llu: got %.17g want %.17g", what, type_name(t), (int)op,
                (unsigned long long)n, g, acc);
}

/* ---- every type and operator, at the sizes that matter ---- */

START_TEST(reduce_every_type_and_operator) {
  force_access(_i);
  open_ctx();
  uint32_t sg = subgroup();
  const uint64_t sizes[] = {0, 1, 7, sg - 1, sg + 1, 255, 257, 8191, 8193, 100003};
  const uint64_t most = 100003;
  for (size_t ti = 0; ti < sizeof TYPES / sizeof *TYPES; ++ti) {
    vkds_type t = TYPES[ti];
    for (vkds_op_kind op = VKDS_OP_PLUS; op <= VKDS_OP_LOGICAL_OR; ++op) {
      if (is_float(t) && op >= VKDS_OP_BIT_AND && op <= VKDS_OP_BIT_XOR) continue;
      void *data = random_data(t, most, op);
      vkds_buffer *buf = harness_device_copy(r0, data, most * size_of(t));
      for (size_t si = 0; si < sizeof sizes / sizeof *sizes; ++si) {
        uint64_t n = sizes[si];
        vkds_seq in = vkds_seq_buffer((vkds_view){buf, 0, n * size_of(t)}, t);
        if (n == 0) in = vkds_seq_host(data, 0, t);
        val got = {0};
        ck_assert_vkds(vkds_reduce(pol, &in, &(vkds_op){.kind = op}, NULL, got.b));
        check_reduce_result(t, op, data, n, &got, "device");
      }
      /* the same from host memory (staged), with an init */
      val init = from_bits(t, 0), got = {0};
      if (is_float(t) && (op == VKDS_OP_MULTIPLIES || op == VKDS_OP_LOGICAL_AND)) init = from_double(t, 1);
      if (!is_float(t)) init = from_bits(t, int_identity(t, op));
      if (op == VKDS_OP_MIN) init = is_float(t) ? from_double(t, INFINITY) : init;
      if (op == VKDS_OP_MAX) init = is_float(t) ? from_double(t, -INFINITY) : init;
      vkds_seq host = vkds_seq_host_const(data, 1000, t);
      ck_assert_vkds(vkds_reduce(pol, &host, &(vkds_op){.kind = op}, init.b, got.b));
      check_reduce_result(t, op, data, 1000, &got, "host");
      vkds_buffer_destroy(buf);
      free(data);
    }
  }
  close_ctx();
}
END_TEST

/* 2^k - 1, 2^k, 2^k + 1 up to 2^24 elements, and float sums bit-identical when repeated
 * (through addresses up to 2^20: the grid stops changing long before, and lavapipe is
 * slow there). */
START_TEST(reduce_powers_of_two) {
  force_access(_i);
  open_ctx();
  const int top_log2 = harness_top_log2(_i ? 20 : 24);
  const uint64_t top = (1ull << top_log2) + 1;
  for (int f = 0; f < 2; ++f) {
    vkds_type t = f ? VKDS_F32 : VKDS_U32;
    void *data = random_data(t, top, VKDS_OP_PLUS);
    vkds_buffer *buf = harness_device_copy(r0, data, top * 4);
    for (int k = 1; k <= top_log2; ++k)
      for (int d = -1; d <= 1; ++d) {
        uint64_t n = (1ull << k) + (uint64_t)(int64_t)d;
        vkds_seq in = vkds_seq_buffer((vkds_view){buf, 0, n * 4}, t);
        val got = {0}, again = {0};
        ck_assert_vkds(vkds_reduce(pol, &in, NULL, NULL, got.b));
        check_reduce_result(t, VKDS_OP_PLUS, data, n, &got, "2^k");
        if (f && (k == top_log2 || k == 13)) { /* the same call, the same bits */
          for (int rep = 0; rep < 3; ++rep) {
            ck_assert_vkds(vkds_reduce(pol, &in, NULL, NULL, again.b));
            ck_assert_msg(got.u32 == again.u32, "f32 sum of %llu differs between runs", (unsigned long long)n);
          }
        }
      }
    vkds_buffer_destroy(buf);
    free(data);
  }
  close_ctx();
}
END_TEST

/* ---- element-wise ---- */

/* Ranges that start off 16-byte alignment and end in a partial group of 4. */
START_TEST(elementwise_tails_and_unaligned) {
  force_access(_i);
  open_ctx();
  enum { N = 4099 };
  for (size_t ti = 0; ti < sizeof TYPES / sizeof *TYPES; ++ti) {
    vkds_type t = TYPES[ti];
    uint32_t s = size_of(t);
    void *data = random_data(t, N + 8, VKDS_OP_PLUS);
    vkds_buffer *in = harness_device_copy(r0, data, (N + 8) * s), *out = harness_device_copy(r0, NULL, (N + 8) * s);
    for (uint64_t shift = 0; shift < 4; ++shift)
      for (uint64_t n = N - 3; n <= N; ++n) {
        vkds_seq a = vkds_seq_buffer((vkds_view){in, shift * s, n * s}, t);
        vkds_seq b = vkds_seq_buffer((vkds_view){out, ((shift + 1) % 4) * s, n * s}, t);
        ck_assert_vkds(vkds_transform(pol, &a, &b, is_float(t) ? "x * 2.0 + 1.0" : "x * 2 + 1"));
        unsigned char *host = malloc(n * s);
        ck_assert_vkds(vkds_download(r0, host, (vkds_view){out, ((shift + 1) % 4) * s, n * s}, n * s));
        for (uint64_t i = 0; i < n; ++i) {
          if (is_float(t)) {
            double want = as_double(t, data, i + shift) * 2 + 1;
            ck_assert_msg(fabs(as_double(t, host, i) - want) <= fabs(want) * 1e-6, "%s transform [%llu]", type_name(t),
                          (unsigned long long)i);
          } else {
            uint64_t want = (as_bits(t, data, i + shift) * 2 + 1) & type_mask(t);
            ck_assert_msg((as_bits(t, host, i) & type_mask(t)) == want, "%s transform [%llu] shift %llu n %llu", type_name(t),
                          (unsigned long long)i, (unsigned long long)shift, (unsigned long long)n);
          }
        }
        /* and a reduction over the same unaligned range */
        val got = {0};
        ck_assert_vkds(vkds_reduce(pol, &a, &(vkds_op){.kind = VKDS_OP_MAX}, NULL, got.b));
        check_reduce_result(t, VKDS_OP_MAX, (char *)data + shift * s, n, &got, "unaligned");
        free(host);
      }
    vkds_buffer_destroy(in);
    vkds_buffer_destroy(out);
    free(data);
  }
  close_ctx();
}
END_TEST

START_TEST(fill_copy_transform2_conversions_in_place) {
  force_access(_i);
  open_ctx();
  enum { N = 1001 };
  float f[N], g[N];
  int32_t k[N];
  double d[N];
  for (int i = 0; i < N; ++i) f[i] = (float)i * 0.25f, k[i] = i - 500;
  vkds_seq fs = vkds_seq_host(f, N, VKDS_F32), gs = vkds_seq_host(g, N, VKDS_F32);
  vkds_seq ks = vkds_seq_host(k, N, VKDS_I32), ds = vkds_seq_host(d, N, VKDS_F64);
  float seven = 7.5f;
  ck_assert_vkds(vkds_fill(pol, &gs, &seven));
  for (int i = 0; i < N; ++i) harness_expect(g[i] == 7.5f);
  ck_assert_vkds(vkds_copy(pol, &ks, &ds)); /* i32 -> f64 */
  for (int i = 0; i < N; ++i) harness_expect(d[i] == (double)(i - 500));
  ck_assert_vkds(vkds_transform2(pol, &fs, &ks, &gs, "a * float(b)"));
  for (int i = 0; i < N; ++i) harness_expect(g[i] == f[i] * (float)k[i]);
  ck_assert_vkds(vkds_transform(pol, &fs, &fs, "x + 1.0")); /* in place */
  for (int i = 0; i < N; ++i) harness_expect(f[i] == (float)i * 0.25f + 1.0f);
  /* in place on a device buffer */
  vkds_buffer *b = harness_device_copy(r0, k, sizeof k);
  vkds_seq bs = vkds_seq_buffer(vkds_view_of(b), VKDS_I32);
  ck_assert_vkds(vkds_transform(pol, &bs, &bs, "-x"));
  int32_t back[N];
  ck_assert_vkds(vkds_download(r0, back, vkds_view_of(b), sizeof back));
  for (int i = 0; i < N; ++i) harness_expect_int_eq(back[i], 500 - i);
  /* in place through the same views: a reverse view, itself or another built alike (a
   * new-user probe found both refused); not through a permutation, whose map may name an
   * element twice */
  vkds_seq rv = vkds_seq_reverse(&bs), rv2 = vkds_seq_reverse(&bs);
  ck_assert_vkds(vkds_transform(pol, &rv, &rv2, "x * 3"));
  ck_assert_vkds(vkds_download(r0, back, vkds_view_of(b), sizeof back));
  for (int i = 0; i < N; ++i) harness_expect_int_eq(back[i], 3 * (500 - i));
  int32_t map[N];
  for (int i = 0; i < N; ++i) map[i] = (i * 31) % N; /* (31 is prime to 1001: a permutation) */
  vkds_seq mapped = vkds_seq_host(map, N, VKDS_I32), pv = vkds_seq_permutation(&bs, &mapped);
  ck_assert_int_eq(vkds_transform(pol, &pv, &pv, "x + 1"), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_msg(strstr(vkds_last_error_message(), "permutation"), "%s", vkds_last_error_message());
  /* gathering and scattering through one map: the map is only read (was refused as an overlap) */
  for (int i = 0; i < N; ++i) g[i] = -1.0f;
  vkds_seq from = vkds_seq_permutation(&fs, &mapped), to = vkds_seq_permutation(&gs, &mapped);
  ck_assert_vkds(vkds_transform(pol, &from, &to, "x * 2.0"));
  for (int i = 0; i < N; ++i) harness_expect(g[i] == f[i] * 2.0f); /* every place, once */
  vkds_seq to_map = vkds_seq_permutation(&mapped, &mapped); /* but an output may not write its own map */
  ck_assert_int_eq(vkds_copy(pol, &ks, &to_map), VKDS_ERROR_INVALID_ARGUMENT);
  vkds_buffer_destroy(b);
  close_ctx();
}
END_TEST

/* ---- the other reductions ---- */

/* min_element and max_element of every type against the host: few distinct values (ties
 * across threads and groups: the first index wins), floats with NaNs (never the answer
 * unless every element is one: then the first), a NaN first, and all NaN. A thread folds
 * its own elements with a cheaper in-order combine than the groups' (codegen.c). */
START_TEST(min_max_element_every_type) {
  force_access(_i);
  open_ctx();
  const uint64_t sizes[] = {1, 9, 1025, 65537, 100003, 300};
  for (size_t ti = 0; ti < sizeof TYPES / sizeof *TYPES; ++ti) {
    vkds_type t = TYPES[ti];
    uint32_t es = size_of(t);
    bool fl = is_float(t);
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; ++si) {
      uint64_t n = sizes[si];
      bool all_nan = fl && si == 5;
      unsigned char *data = malloc(n * es);
      for (uint64_t i = 0; i < n; ++i) {
        double d = (double)(rnd() % 37);
        bool nan = fl && (all_nan || i == 0 || rnd() % 5 == 0);
        if (t == VKDS_I32) ((int32_t *)data)[i] = (int32_t)d - 18;
        if (t == VKDS_U32) ((uint32_t *)data)[i] = (uint32_t)d;
        if (t == VKDS_I64) ((int64_t *)data)[i] = (int64_t)d - 18;
        if (t == VKDS_U64) ((uint64_t *)data)[i] = (uint64_t)d;
        if (t == VKDS_F32) ((float *)data)[i] = nan ? NAN : (float)(d - 18.5);
        if (t == VKDS_F64) ((double *)data)[i] = nan ? NAN : d - 18.5;
      }
      vkds_seq in = vkds_seq_host(data, n, t);
      for (int want_max = 0; want_max < 2; ++want_max) {
        uint64_t best = 0;
        for (uint64_t i = 1; i < n; ++i) {
          double x = as_double(t, data, i), b = as_double(t, data, best);
          bool better = want_max ? x > b : x < b; /* (false with a NaN) */
          if (better || (isnan(b) && !isnan(x))) best = i;
        }
        uint64_t idx = UINT64_MAX;
        unsigned char value[8];
        ck_assert_vkds(want_max ? vkds_max_element(pol, &in, &idx, value) : vkds_min_element(pol, &in, &idx, value));
        ck_assert_msg(idx == best, "%s %s n %llu: index %llu, want %llu", type_name(t), want_max ? "max" : "min",
                      (unsigned long long)n, (unsigned long long)idx, (unsigned long long)best);
        ck_assert(memcmp(value, data + best * es, es) == 0);
      }
      free(data);
    }
  }
  close_ctx();
}
END_TEST

START_TEST(count_minmax_quantifiers_equal_inner_product) {
  force_access(_i);
  open_ctx();
  enum { N = 10007 };
  int32_t *a = malloc(N * 4), *b = malloc(N * 4);
  for (int i = 0; i < N; ++i) a[i] = (int32_t)(rnd() % 100) - 50;
  a[777] = -90, a[4242] = -90; /* the first of two equal minima */
  a[31] = 90, a[9000] = 90;
  memcpy(b, a, N * 4);
  vkds_seq as = vkds_seq_host(a, N, VKDS_I32), bs = vkds_seq_host(b, N, VKDS_I32);
  uint64_t want = 0, got;
  for (int i = 0; i < N; ++i) want += a[i] == 7;
  int32_t seven = 7;
  ck_assert_vkds(vkds_count(pol, &as, &seven, &got));
  ck_assert_uint_eq(got, want);
  want = 0;
  for (int i = 0; i < N; ++i) want += a[i] > 10 && a[i] % 2 == 0;
  ck_assert_vkds(vkds_count_if(pol, &as, "x > 10 && x % 2 == 0", &got));
  ck_assert_uint_eq(got, want);
  uint64_t idx;
  int32_t v;
  ck_assert_vkds(vkds_min_element(pol, &as, &idx, &v));
  ck_assert_uint_eq(idx, 777); ck_assert_int_eq(v, -90);
  ck_assert_vkds(vkds_max_element(pol, &as, &idx, &v));
  ck_assert_uint_eq(idx, 31); ck_assert_int_eq(v, 90);
  bool yes;
  ck_assert_vkds(vkds_any_of(pol, &as, "x == 90", &yes)); ck_assert(yes);
  ck_assert_vkds(vkds_any_of(pol, &as, "x == 1000", &yes)); ck_assert(!yes);
  ck_assert_vkds(vkds_all_of(pol, &as, "x >= -90", &yes)); ck_assert(yes);
  ck_assert_vkds(vkds_all_of(pol, &as, "x > -90", &yes)); ck_assert(!yes);
  ck_assert_vkds(vkds_none_of(pol, &as, "x > 90", &yes)); ck_assert(yes);
  ck_assert_vkds(vkds_none_of(pol, &as, "x == 90", &yes)); ck_assert(!yes);
  ck_assert_vkds(vkds_equal(pol, &as, &bs, &yes)); ck_assert(yes);
  b[N - 1] += 1;
  ck_assert_vkds(vkds_equal(pol, &as, &bs, &yes)); ck_assert(!yes);
  vkds_seq shorter = vkds_seq_host(b, N - 1, VKDS_I32);
  ck_assert_vkds(vkds_equal(pol, &as, &shorter, &yes)); ck_assert(!yes);
  int64_t dot = 0;
  for (int i = 0; i < N; ++i) dot += (int64_t)a[i] * b[i];
  int32_t ip, zero = 0;
  ck_assert_vkds(vkds_inner_product(pol, &as, &bs, &zero, &ip));
  ck_assert_int_eq(ip, (int32_t)dot);
  /* empty sequences */
  vkds_seq none = vkds_seq_host(a, 0, VKDS_I32);
  ck_assert_vkds(vkds_all_of(pol, &none, "x > 1000", &yes)); ck_assert(yes);
  ck_assert_vkds(vkds_any_of(pol, &none, "x > -1000", &yes)); ck_assert(!yes);
  idx = 99;
  ck_assert_vkds(vkds_min_element(pol, &none, &idx, NULL)); ck_assert_uint_eq(idx, 0);
  int32_t five = 5, r;
  ck_assert_vkds(vkds_reduce(pol, &none, NULL, &five, &r)); ck_assert_int_eq(r, 5);
  /* empty with init is init itself, as std::reduce's, also where op(init, identity) is
   * not init: the logical operators made 5 into 1, min a NaN init into +inf (a numerics
   * probe) */
  ck_assert_vkds(vkds_reduce(pol, &none, &(vkds_op){VKDS_OP_LOGICAL_OR}, &five, &r)); ck_assert_int_eq(r, 5);
  ck_assert_vkds(vkds_reduce(pol, &none, &(vkds_op){VKDS_OP_LOGICAL_AND}, &five, &r)); ck_assert_int_eq(r, 5);
  float nan_init = NAN, fr = 0;
  vkds_seq no_floats = vkds_seq_host(a, 0, VKDS_F32);
  ck_assert_vkds(vkds_reduce(pol, &no_floats, &(vkds_op){VKDS_OP_MIN}, &nan_init, &fr)); ck_assert(isnan(fr));
  ck_assert_vkds(vkds_transform_reduce(pol, &none, "float(x)", VKDS_F32, &(vkds_op){VKDS_OP_MAX}, &nan_init, &fr));
  ck_assert(isnan(fr));
  /* floats: NaN never wins, ties take the first */
  float fl[9] = {3, NAN, 1, 5, 1, NAN, 5, 2, 0.5f};
  vkds_seq fls = vkds_seq_host(fl, 9, VKDS_F32);
  float fv;
  ck_assert_vkds(vkds_min_element(pol, &fls, &idx, &fv)); ck_assert_uint_eq(idx, 8);
  ck_assert_vkds(vkds_max_element(pol, &fls, &idx, &fv)); ck_assert_uint_eq(idx, 3);
  float nans[3] = {NAN, NAN, NAN};
  vkds_seq ns = vkds_seq_host(nans, 3, VKDS_F32);
  ck_assert_vkds(vkds_min_element(pol, &ns, &idx, &fv)); ck_assert_uint_eq(idx, 0);
  /* user operators: max with its identity, and transform_reduce over a zip */
  int32_t m;
  ck_assert_vkds(vkds_reduce(pol, &as, &(vkds_op){VKDS_OP_GLSL, "max(a, b)", "int(0x80000000u)"}, NULL, &m));
  ck_assert_int_eq(m, 90);
  vkds_seq parts[2] = {as, bs};
  vkds_seq z = vkds_seq_zip(parts, 2);
  double sq;
  ck_assert_vkds(vkds_transform_reduce(pol, &z, "double(x.p0) * double(x.p1)", VKDS_F64, NULL, NULL, &sq));
  ck_assert(sq == (double)dot);
  free(a), free(b);
  close_ctx();
}
END_TEST

/* ---- every sequence kind ---- */

/* A user type: two sequences end to end, with device code (passed directly where both
 * parts are) and host reads (for staging elsewhere). */
static bool concat_direct(const vkds_seq *s, const vkds_resource *res) {
  const vkds_seq *p = s->user;
  return vkds_seq_is_passed_directly(&p[0], res) && vkds_seq_is_passed_directly(&p[1], res);
}
static vkds_result concat_read(const vkds_seq *s, uint64_t i, void *out) {
  const vkds_seq *p = s->user;
  return i < p[0].count ? vkds_seq_read(&p[0], i, out) : vkds_seq_read(&p[1], i - p[0].count, out);
}
static int concat_code_calls;
static vkds_result concat_code(const vkds_seq *s, const vkds_resource *res, vkds_seq_device_code *out) {
  (void)res;
  const vkds_seq *p = s->user;
  ++concat_code_calls;
  *out = (vkds_seq_device_code){.load = "return i < param0 ? part0(i) : part1(i - param0);",
                                .store = "if (i < param0) part0_store(i, v); else part1_store(i - param0, v);",
                                .part_count = 2, .parts = {&p[0], &p[1]}, .param_count = 1, .params = {p[0].count}};
  return VKDS_SUCCESS;
}
static const vkds_seq_ops concat_ops = {.version = VKDS_SEQ_OPS_VERSION, .name = "concat",
                                        .is_passed_directly = concat_direct, .read = concat_read,
                                        .device_code = concat_code};
static vkds_seq concat(vkds_seq parts[2]) {
  return (vkds_seq){.ops = &concat_ops, .count = parts[0].count + parts[1].count, .type = parts[0].type,
                    .elem_size = parts[0].elem_size, .user = parts};
}

/* A user type that says it is passed directly whatever its parts are (a liar, as a
 * buggy application's type would be). */
static bool always_direct(const vkds_seq *s, const vkds_resource *res) {
  (void)s, (void)res;
  return true;
}
static const vkds_seq_ops liar_ops = {.version = VKDS_SEQ_OPS_VERSION, .name = "liar",
                                      .is_passed_directly = always_direct, .read = concat_read,
                                      .device_code = concat_code};

/* A user type whose code reads only the first of its two parts: a bound part must still
 * be in the kernel's interface, which codegen.c sees to. */
static vkds_result first_code(const vkds_seq *s, const vkds_resource *res, vkds_seq_device_code *out) {
  (void)res;
  const vkds_seq *p = s->user;
  *out = (vkds_seq_device_code){.load = "return part0(i);", .part_count = 2, .parts = {&p[0], &p[1]}};
  return VKDS_SUCCESS;
}
static const vkds_seq_ops first_ops = {.version = VKDS_SEQ_OPS_VERSION, .name = "first",
                                       .is_passed_directly = concat_direct, .read = concat_read,
                                       .device_code = first_code};
/* A device_code slot that returns a value that is no vkds_result (a positive one was
 * passed on, and read as success by a caller testing r < 0: a probe). */
static vkds_result positive_code(const vkds_seq *s, const vkds_resource *res, vkds_seq_device_code *out) {
  (void)s, (void)res, (void)out;
  return (vkds_result)5;
}
static const vkds_seq_ops positive_ops = {.version = VKDS_SEQ_OPS_VERSION, .name = "positive",
                                          .is_passed_directly = concat_direct, .read = concat_read,
                                          .device_code = positive_code};

/* A user type over every other element of its part (stride 2, from 1): its store leaves
 * the part's even elements alone, and so must the call. Over a host part, written, the
 * part was bound write-only: never uploaded, then copied back whole, and the even
 * elements came back as whatever the staging buffer held (a sequences probe). */
static vkds_result odd_code(const vkds_seq *s, const vkds_resource *res, vkds_seq_device_code *out) {
  (void)res;
  *out = (vkds_seq_device_code){.load = "return part0(param1 + i * param0);",
                                .store = "part0_store(param1 + i * param0, v);", .part_count = 1,
                                .parts = {s->user}, .param_count = 2, .params = {2, 1}};
  return VKDS_SUCCESS;
}
static const vkds_seq_ops odd_ops = {.version = VKDS_SEQ_OPS_VERSION, .name = "odd",
                                     .is_passed_directly = always_direct, .device_code = odd_code};

START_TEST(user_type_written_over_host_keeps_what_it_does_not_store) {
  force_access(_i);
  open_ctx();
  enum { N = 1001 };
  uint32_t *whole = malloc(2 * N * sizeof *whole), *in = malloc(N * sizeof *in);
  ck_assert(whole && in);
  for (uint32_t i = 0; i < N; ++i) in[i] = 3 * i;
  vkds_seq part = vkds_seq_host(whole, 2 * N, VKDS_U32), ins = vkds_seq_host(in, N, VKDS_U32);
  vkds_seq odd = {.ops = &odd_ops, .count = N, .type = VKDS_U32, .elem_size = 4, .user = &part};
  for (int form = 0; form < 3; ++form) {
    for (uint32_t i = 0; i < 2 * N; ++i) whole[i] = 0xdead0000u + i;
    const uint32_t seven = 7;
    if (form == 0) ck_assert_vkds(vkds_fill(pol, &odd, &seven));
    if (form == 1) ck_assert_vkds(vkds_transform(pol, &ins, &odd, "x + 1u"));
    if (form == 2) {
      vkds_submission *sub;
      ck_assert_vkds(vkds_transform_async(pol, &ins, &odd, "x + 1u", &sub));
      ck_assert_vkds(vkds_submission_wait(sub));
      vkds_submission_release(sub);
    }
    for (uint32_t i = 0; i < 2 * N; ++i) {
      uint32_t want = i % 2 == 0 ? 0xdead0000u + i : form == 0 ? 7u : 3 * (i / 2) + 1;
      ck_assert_msg(whole[i] == want, "form %d: element %u is %08x, want %08x", form, i, whole[i], want);
    }
  }
  free(whole), free(in);
  close_ctx();
}
END_TEST

/* Sixteen user types, each its part as it is, over a device buffer: filled and summed
 * through all of them. Each level's code called its part twice (once to keep the
 * part's binding in the kernel's interface), so the inlined code doubled a level: 14
 * levels took 18.9 s on lavapipe, past 20 it ran out of memory (a sequences probe). */
static vkds_result same_code(const vkds_seq *s, const vkds_resource *res, vkds_seq_device_code *out) {
  (void)res;
  *out = (vkds_seq_device_code){.load = "return part0(i);", .store = "part0_store(i, v);", .part_count = 1,
                                .parts = {s->base}};
  return VKDS_SUCCESS;
}
static bool base_direct(const vkds_seq *s, const vkds_resource *res) { return vkds_seq_is_passed_directly(s->base, res); }
static const vkds_seq_ops same_ops = {.version = VKDS_SEQ_OPS_VERSION, .name = "same",
                                      .is_passed_directly = base_direct, .device_code = same_code};

START_TEST(user_types_nest_sixteen_deep) {
  force_access(_i);
  open_ctx();
  enum { DEPTH = 16, N = 1000 };
  vkds_buffer *buf;
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = N * 4}, &buf));
  vkds_seq chain[DEPTH + 1];
  chain[0] = vkds_seq_buffer(vkds_view_of(buf), VKDS_U32);
  for (int k = 1; k <= DEPTH; ++k)
    chain[k] = (vkds_seq){.ops = &same_ops, .count = N, .type = VKDS_U32, .elem_size = 4, .base = &chain[k - 1]};
  const uint32_t three = 3;
  ck_assert_vkds(vkds_fill(pol, &chain[DEPTH], &three));
  uint32_t sum = 0;
  ck_assert_vkds(vkds_reduce(pol, &chain[DEPTH], NULL, NULL, &sum));
  ck_assert_uint_eq(sum, 3 * N);
  vkds_buffer_destroy(buf);
  close_ctx();
}
END_TEST

/* Zips of many parts (seq.h: 1 to 16): where a call's launch arguments outgrow the push
 * constants (lavapipe: 128 bytes, from about 8 leaves), the blocking and asynchronous
 * forms keep them in a buffer of the call's; the recording form refuses, saying why (it
 * was VKDS_ERROR_UNSUPPORTED advising vkds_launch for every form: found by a new-user
 * probe). Under both access rules (loop index). */
/* Every family's recording form where the launch arguments outgrow the push constants
 * (lavapipe's 128 bytes): views of views of views, each map a leaf of its own. The
 * arguments go into the vkds_cmd's scratch after the family's own part, which its
 * scratch query includes (scans, histograms and sorts refused this until session 41). */
enum { SPILL_N = 5000, SPILL_MAPS = 6 };
static int descending_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? 1 : x > y ? -1 : 0;
}
/* source[maps[0][maps[1][...[i]]]]: vkds_seq_permutation(source, map)[i] is source[map[i]] */
static uint32_t spill_at(uint32_t maps[SPILL_MAPS][SPILL_N], int depth, uint32_t i) {
  for (int k = depth - 1; k >= 0; --k) i = maps[k][i];
  return i;
}
/* source under the first `depth` maps */
static vkds_seq spill_chain(vkds_seq *views, const vkds_seq *source, const vkds_seq *maps, int depth) {
  views[0] = *source;
  for (int k = 0; k < depth; ++k) views[k + 1] = vkds_seq_permutation(&views[k], &maps[k]);
  return views[depth];
}
/* scratch_bytes: a query's answer; `exact`: the family's own, of which a byte less is refused
 * (vkds_algorithm_scratch_bytes holds more than a scan takes) */
static void spill_record_and_run(vkds_result (*rec)(const vkds_cmd *, void *), void *user, uint64_t scratch_bytes,
                                 bool exact) {
  vkds_buffer *scratch;
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = scratch_bytes}, &scratch));
  app_cmd ac = {0};
  app_cmd_begin(&ac, r0);
  vkds_cmd c = {.cmd = ac.cmd, .resource = r0, .scratch = vkds_view_of(scratch)};
  if (exact) { /* a byte short is refused, nothing recorded */
    c.scratch.bytes = scratch_bytes - 1;
    ck_assert_int_eq(rec(&c, user), VKDS_ERROR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "gives the size"));
  }
  c.scratch.bytes = scratch_bytes;
  ck_assert_vkds(rec(&c, user));
  app_cmd_submit(&ac, 60);
  app_cmd_destroy(&ac);
  vkds_buffer_destroy(scratch);
}
typedef struct spill_call {
  vkds_seq in, out, values;
  vkds_view count;
} spill_call;
static vkds_result spill_scan(const vkds_cmd *c, void *u) {
  spill_call *s = u;
  return vkds_cmd_transform_inclusive_scan(c, &s->in, &s->out, "x * 3u", NULL, NULL);
}
static vkds_result spill_copy_if(const vkds_cmd *c, void *u) {
  spill_call *s = u;
  return vkds_cmd_copy_if(c, &s->in, &s->out, "x % 3u == 1u", s->count);
}
static vkds_result spill_histogram(const vkds_cmd *c, void *u) {
  spill_call *s = u;
  return vkds_cmd_histogram_even(c, &s->in, &(uint32_t){0}, &(uint32_t){1000}, &s->out);
}
static vkds_result spill_merge_sort(const vkds_cmd *c, void *u) {
  spill_call *s = u;
  return vkds_cmd_merge_sort(c, &s->in, "a > b");
}
static vkds_result spill_sort(const vkds_cmd *c, void *u) {
  spill_call *s = u;
  return vkds_cmd_sort_by_key(c, &s->in, &s->values, VKDS_SORT_DESCENDING);
}

START_TEST(recorded_families_with_spilled_arguments) {
  open_ctx();
  static uint32_t maps[SPILL_MAPS][SPILL_N], data[SPILL_N], back[SPILL_N], want[SPILL_N];
  vkds_buffer *map_bufs[SPILL_MAPS];
  vkds_seq map_seqs[SPILL_MAPS], views[SPILL_MAPS + 1], views2[SPILL_MAPS + 1];
  for (int k = 0; k < SPILL_MAPS; ++k) {
    for (uint32_t i = 0; i < SPILL_N; ++i) maps[k][i] = i;
    for (uint32_t i = SPILL_N - 1; i > 0; --i) { /* a random permutation */
      uint32_t j = (uint32_t)(rnd() % (i + 1)), t = maps[k][i];
      maps[k][i] = maps[k][j], maps[k][j] = t;
    }
    map_bufs[k] = harness_device_copy(r0, maps[k], sizeof maps[k]);
    map_seqs[k] = vkds_seq_buffer(vkds_view_of(map_bufs[k]), VKDS_U32);
  }
  for (uint32_t i = 0; i < SPILL_N; ++i) data[i] = (uint32_t)(rnd() % 1000);
  vkds_buffer *src = harness_device_copy(r0, data, sizeof data), *dst = harness_device_copy(r0, data, sizeof data);
  vkds_buffer *cnt = harness_device_copy(r0, (uint64_t[1]){0}, 8);
  vkds_seq src_seq = vkds_seq_buffer(vkds_view_of(src), VKDS_U32), dst_seq = vkds_seq_buffer(vkds_view_of(dst), VKDS_U32);
  spill_call call = {.in = spill_chain(views, &src_seq, map_seqs, SPILL_MAPS), .out = dst_seq, .count = vkds_view_of(cnt)};
  uint64_t any = vkds_algorithm_scratch_bytes(r0, SPILL_N);

  /* the scan: out[i] = 3 (v[0] + ... + v[i]) over the view v */
  spill_record_and_run(spill_scan, &call, any, false);
  ck_assert_vkds(vkds_download(r0, back, vkds_view_of(dst), sizeof back));
  for (uint32_t i = 0, run = 0; i < SPILL_N; ++i) harness_expect_uint_eq(back[i], run += 3 * data[spill_at(maps, SPILL_MAPS, i)]);

  /* copy_if: the view's elements x with x % 3 == 1, in order, and their count */
  spill_record_and_run(spill_copy_if, &call, any, false);
  uint64_t kept = 0, got_kept;
  for (uint32_t i = 0; i < SPILL_N; ++i)
    if (data[spill_at(maps, SPILL_MAPS, i)] % 3 == 1) want[kept++] = data[spill_at(maps, SPILL_MAPS, i)];
  ck_assert_vkds(vkds_download(r0, back, vkds_view_of(dst), sizeof back));
  ck_assert_vkds(vkds_download(r0, &got_kept, vkds_view_of(cnt), 8));
  ck_assert_uint_eq(got_kept, kept);
  ck_assert(memcmp(back, want, kept * 4) == 0);

  /* the histogram: 100 even bins over [0, 1000) into the first 100 words of dst */
  call.out = vkds_seq_buffer((vkds_view){dst, 0, 400}, VKDS_U32);
  spill_record_and_run(spill_histogram, &call, vkds_histogram_scratch_bytes(r0, 100), true);
  memset(want, 0, 400);
  for (uint32_t i = 0; i < SPILL_N; ++i) ++want[data[i] / 10];
  ck_assert_vkds(vkds_download(r0, back, vkds_view_of(dst), 400));
  ck_assert(memcmp(back, want, 400) == 0);

  /* sort_by_key, descending, keys and values under the same three maps (six: more
   * launch parameters than a kernel takes): values 0..n-1 record where each key of the
   * view stood (stability) */
  enum { D = 3 };
  call.in = spill_chain(views, &src_seq, map_seqs, D);
  for (uint32_t i = 0; i < SPILL_N; ++i) want[spill_at(maps, D, i)] = i;
  ck_assert_vkds(vkds_upload(r0, vkds_view_of(dst), want, sizeof want));
  call.out = dst_seq;
  call.values = spill_chain(views2, &dst_seq, map_seqs, D);
  spill_record_and_run(spill_sort, &call, vkds_sort_scratch_bytes(r0, SPILL_N, VKDS_U32, VKDS_U32), true);
  static uint32_t keys_back[SPILL_N];
  ck_assert_vkds(vkds_download(r0, keys_back, vkds_view_of(src), sizeof keys_back));
  ck_assert_vkds(vkds_download(r0, back, vkds_view_of(dst), sizeof back));
  for (uint32_t i = 0; i < SPILL_N; ++i) {
    uint32_t at = spill_at(maps, D, i), key = keys_back[at], from = back[at];
    ck_assert_uint_lt(from, SPILL_N);
    harness_expect_uint_eq(key, data[spill_at(maps, D, from)]); /* each value goes with its key */
    if (i > 0) {
      uint32_t before = spill_at(maps, D, i - 1);
      ck_assert_uint_ge(keys_back[before], key); /* descending */
      if (keys_back[before] == key) ck_assert_uint_lt(back[before], from); /* stable */
    }
  }
  /* the merge sort, descending, of the data under all six maps */
  ck_assert_vkds(vkds_upload(r0, vkds_view_of(src), data, sizeof data));
  call.in = spill_chain(views, &src_seq, map_seqs, SPILL_MAPS);
  spill_record_and_run(spill_merge_sort, &call, vkds_merge_sort_scratch_bytes(r0, SPILL_N, VKDS_U32), true);
  memcpy(want, data, sizeof want);
  qsort(want, SPILL_N, 4, descending_u32);
  ck_assert_vkds(vkds_download(r0, back, vkds_view_of(src), sizeof back));
  for (uint32_t i = 0; i < SPILL_N; ++i) harness_expect_uint_eq(back[spill_at(maps, SPILL_MAPS, i)], want[i]);
  for (int k = 0; k < SPILL_MAPS; ++k) vkds_buffer_destroy(map_bufs[k]);
  vkds_buffer_destroy(src), vkds_buffer_destroy(dst), vkds_buffer_destroy(cnt);
  close_ctx();
}
END_TEST

START_TEST(zips_of_many_parts) {
  force_access(_i);
  open_ctx();
  enum { N = 1000, PARTS = 16 };
  static uint32_t data[PARTS][N];
  vkds_buffer *bufs[PARTS];
  vkds_seq parts[PARTS];
  for (uint32_t k = 0; k < PARTS; ++k) {
    for (uint32_t i = 0; i < N; ++i) data[k][i] = (uint32_t)(rnd() % 100);
    parts[k] = k % 2 ? vkds_seq_host(data[k], N, VKDS_U32) : vkds_seq_buffer(vkds_view_of(bufs[k] = harness_device_copy(r0, data[k], sizeof data[k])), VKDS_U32);
  }
  /* count_if over all 16, and a transform of 12 summed into a 13th sequence (host) */
  vkds_seq z16 = vkds_seq_zip(parts, PARTS), z12 = vkds_seq_zip(parts, 12);
  char pred[512] = "", sum12[512] = "";
  for (uint32_t k = 0; k < PARTS; ++k)
    snprintf(pred + strlen(pred), sizeof pred - strlen(pred), "%sx.p%u", k ? " + " : "", k);
  snprintf(pred + strlen(pred), sizeof pred - strlen(pred), " > 800u");
  for (uint32_t k = 0; k < 12; ++k) snprintf(sum12 + strlen(sum12), sizeof sum12 - strlen(sum12), "%sx.p%u", k ? " + " : "", k);
  uint64_t want = 0, got = 0;
  for (uint32_t i = 0; i < N; ++i) {
    uint32_t t = 0;
    for (uint32_t k = 0; k < PARTS; ++k) t += data[k][i];
    want += t > 800;
  }
  ck_assert_vkds(vkds_count_if(pol, &z16, pred, &got));
  ck_assert_uint_eq(got, want);
  static uint32_t out[N];
  vkds_seq outs = vkds_seq_host(out, N, VKDS_U32);
  vkds_submission *sub;
  ck_assert_vkds(vkds_transform_async(pol, &z12, &outs, sum12, &sub));
  ck_assert_vkds(vkds_submission_wait(sub));
  vkds_submission_release(sub);
  for (uint32_t i = 0; i < N; ++i) {
    uint32_t t = 0;
    for (uint32_t k = 0; k < 12; ++k) t += data[k][i];
    harness_expect_uint_eq(out[i], t);
  }
  /* a call repeated is replayed from its recording, except where its arguments spill:
   * they live in a buffer of the call, freed with it (a probe's reading of the code);
   * another call's arguments land there in between */
  vkds_seq ea[8], eb[8];
  for (uint32_t k = 0; k < 8; ++k) ea[k] = parts[2 * k], eb[k] = parts[14 - 2 * k];
  vkds_seq za = vkds_seq_zip(ea, 8), zb = vkds_seq_zip(eb, 8);
  const char *gt = "x.p0 > x.p1";
  uint64_t want_a = 0, want_b = 0, got_a = 0, got_b = 0, again = 0;
  for (uint32_t i = 0; i < N; ++i) want_a += data[0][i] > data[2][i], want_b += data[14][i] > data[12][i];
  ck_assert_vkds(vkds_count_if(pol, &za, gt, &got_a));
  ck_assert_vkds(vkds_count_if(pol, &zb, gt, &got_b));
  ck_assert_vkds(vkds_count_if(pol, &za, gt, &again));
  ck_assert_uint_eq(got_a, want_a);
  ck_assert_uint_eq(got_b, want_b);
  ck_assert_uint_eq(again, want_a);
  /* recorded (every part in device memory here): refused where the arguments spill */
  vkds_seq even[8];
  for (uint32_t k = 0; k < 8; ++k) even[k] = parts[2 * k];
  vkds_seq z8 = vkds_seq_zip(even, 8);
  vkds_buffer *res_buf, *scratch;
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = 8}, &res_buf));
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = vkds_algorithm_scratch_bytes(r0, N)}, &scratch));
  app_cmd ac = {0};
  app_cmd_begin(&ac, r0);
  vkds_cmd c = {.cmd = ac.cmd, .resource = r0, .scratch = vkds_view_of(scratch)};
  vkds_result r = vkds_cmd_count_if(&c, &z8, "x.p0 + x.p7 > 100u", vkds_view_of(res_buf));
  ck_assert(r == VKDS_SUCCESS || r == VKDS_ERROR_UNSUPPORTED);
  if (r) ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "the recording form has nowhere to keep them"));
  app_cmd_submit(&ac, 10);
  app_cmd_destroy(&ac);
  vkds_buffer_destroy(res_buf), vkds_buffer_destroy(scratch);
  for (uint32_t k = 0; k < PARTS; k += 2) vkds_buffer_destroy(bufs[k]);
  close_ctx();
}
END_TEST

START_TEST(every_sequence_kind) {
  force_access(_i);
  vkds_context_info info = harness_info();
  info.devices_per_physical = 2;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  r0 = vkds_context_resource(ctx, 0);
  vkds_resource *r1 = harness_device_resource(ctx, 1);
  ck_assert_ptr_nonnull(r1);
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = {.context = ctx}}, &pol));
  enum { N = 3001 };
  uint32_t host[N], map[N];
  uint64_t sum = 0;
  for (uint32_t i = 0; i < N; ++i) host[i] = (uint32_t)(rnd() % 1000), sum += host[i], map[i] = (i * 7) % N;
  vkds_buffer *dev = harness_device_copy(r0, host, sizeof host), *mapb = harness_device_copy(r0, map, sizeof map);
  vkds_buffer *mapped;
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = sizeof host, .memory = VKDS_MEMORY_MAPPED}, &mapped));
  memcpy(vkds_buffer_map(mapped), host, sizeof host);
  vkds_buffer *other; /* on the second VkDevice */
  ck_assert_vkds(vkds_buffer_create(r1, &(vkds_buffer_info){.size = sizeof host}, &other));
  ck_assert_vkds(vkds_upload(r1, vkds_view_of(other), host, sizeof host));
  uint64_t align = vkds_import_alignment(r0);
  void *imported_mem = NULL;
  vkds_buffer *imported = NULL;
  if (align) {
    uint64_t bytes = (sizeof host + align - 1) / align * align;
    ck_assert_int_eq(posix_memalign(&imported_mem, align, bytes), 0);
    memcpy(imported_mem, host, sizeof host);
    ck_assert_vkds(vkds_buffer_import_host(r0, imported_mem, bytes, &imported));
  }

  vkds_seq seqs[8];
  const char *names[8];
  int n = 0;
  seqs[n] = vkds_seq_buffer(vkds_view_of(dev), VKDS_U32), names[n++] = "buffer";
  seqs[n] = vkds_seq_mapped(vkds_view_of(mapped), VKDS_U32), names[n++] = "mapped";
  seqs[n] = vkds_seq_host(host, N, VKDS_U32), names[n++] = "host";
  seqs[n] = vkds_seq_host_const(host, N, VKDS_U32), names[n++] = "host const";
  seqs[n] = vkds_seq_buffer(vkds_view_of(other), VKDS_U32), names[n++] = "buffer of device 1";
  if (imported) seqs[n] = vkds_seq_host(imported_mem, N, VKDS_U32), names[n++] = "imported host";
  for (int k = 0; k < n; ++k) {
    uint64_t got;
    vkds_seq wide = vkds_seq_transform(&seqs[k], &(vkds_transform_op){.glsl = "uint64_t(x)", .type = VKDS_U64});
    ck_assert_vkds(vkds_reduce(pol, &wide, NULL, NULL, &got));
    ck_assert_msg(got == sum, "%s: %llu != %llu", names[k], (unsigned long long)got, (unsigned long long)sum);
    vkds_seq rev = vkds_seq_reverse(&seqs[k]);
    uint64_t idx;
    ck_assert_vkds(vkds_max_element(pol, &rev, &idx, NULL));
    uint32_t best = 0;
    uint64_t want = 0;
    for (uint64_t i = 0; i < N; ++i)
      if (host[N - 1 - i] > best) best = host[N - 1 - i], want = i;
    ck_assert_msg(idx == want, "%s reversed: %llu != %llu", names[k], (unsigned long long)idx, (unsigned long long)want);
  }
  /* elements 2 bytes into imported memory: staged, not passed directly (the device
   * read and wrote from the word below, and a fill landed 2 bytes before the sequence;
   * a memory probe) */
  if (imported) {
    unsigned char *bytes = imported_mem;
    vkds_seq skew = vkds_seq_host(bytes + 2, N - 1, VKDS_U32);
    ck_assert(!vkds_seq_is_passed_directly(&skew, r0));
    uint32_t want = 0, got = 0;
    for (uint32_t i = 0; i < N - 1; ++i) {
      uint32_t v;
      memcpy(&v, bytes + 2 + 4 * i, 4);
      want += v;
    }
    ck_assert_vkds(vkds_reduce(pol, &skew, NULL, NULL, &got));
    ck_assert_uint_eq(got, want);
    vkds_seq four = vkds_seq_host(bytes + 2, 4, VKDS_U32);
    const unsigned char lead[2] = {bytes[0], bytes[1]}, tail[2] = {bytes[18], bytes[19]};
    const uint32_t ones = 0x11111111u;
    ck_assert_vkds(vkds_fill(pol, &four, &ones));
    ck_assert(bytes[0] == lead[0] && bytes[1] == lead[1] && bytes[18] == tail[0] && bytes[19] == tail[1]);
    for (int i = 2; i < 18; ++i) ck_assert_uint_eq(bytes[i], 0x11);
  }
  /* permutation with a device map, counting, views of views, discard */
  vkds_seq src = vkds_seq_buffer(vkds_view_of(dev), VKDS_U32), mp = vkds_seq_buffer(vkds_view_of(mapb), VKDS_U32);
  vkds_seq perm = vkds_seq_permutation(&src, &mp);
  ck_assert(vkds_seq_is_passed_directly(&perm, r0));
  uint32_t out[N];
  vkds_seq outs = vkds_seq_host(out, N, VKDS_U32);
  vkds_seq perm_rev = vkds_seq_reverse(&perm);
  vkds_seq perm_rev_t = vkds_seq_transform(&perm_rev, &(vkds_transform_op){.glsl = "x + 1u"});
  ck_assert_vkds(vkds_copy(pol, &perm_rev_t, &outs));
  for (uint32_t i = 0; i < N; ++i) harness_expect_uint_eq(out[i], host[map[N - 1 - i]] + 1);
  vkds_seq cnt = vkds_seq_counting(-5, N, VKDS_I64);
  int64_t csum;
  ck_assert_vkds(vkds_reduce(pol, &cnt, NULL, NULL, &csum));
  ck_assert_int_eq(csum, (int64_t)N * (N - 1) / 2 - 5 * (int64_t)N);
  vkds_seq sink = vkds_seq_discard(N, VKDS_U32);
  ck_assert_vkds(vkds_copy(pol, &src, &sink));
  /* writing through a reverse view and through a permutation (scatter) */
  vkds_seq rev_out = vkds_seq_reverse(&outs);
  ck_assert_vkds(vkds_copy(pol, &src, &rev_out));
  for (uint32_t i = 0; i < N; ++i) harness_expect_uint_eq(out[N - 1 - i], host[i]);
  vkds_seq scatter = vkds_seq_permutation(&outs, &mp);
  ck_assert_vkds(vkds_copy(pol, &src, &scatter));
  for (uint32_t i = 0; i < N; ++i) harness_expect_uint_eq(out[map[i]], host[i]);
  /* a map that misses most of its source (staged host memory, a buffer of device 1):
   * what it does not select keeps its value (the staged copy was written back whole over
   * elements never uploaded: found by a new-user probe) */
  uint32_t some[3] = {N - 1, 7, 0};
  vkds_seq some_map = vkds_seq_host(some, 3, VKDS_U32);
  for (uint32_t i = 0; i < N; ++i) out[i] = i ^ 0x5a5a;
  vkds_seq partial = vkds_seq_permutation(&outs, &some_map);
  ck_assert_vkds(vkds_fill(pol, &partial, &(uint32_t){0xfeedu}));
  for (uint32_t i = 0; i < N; ++i)
    harness_expect_uint_eq(out[i], i == N - 1 || i == 7 || i == 0 ? 0xfeedu : i ^ 0x5a5a);
  ck_assert_vkds(vkds_upload(r1, vkds_view_of(other), out, sizeof out));
  vkds_seq on_other = vkds_seq_buffer(vkds_view_of(other), VKDS_U32), partial_other = vkds_seq_permutation(&on_other, &some_map);
  ck_assert(!vkds_seq_is_passed_directly(&partial_other, r0));
  /* recorded on device 0: the data's device is named in the code too (it was
   * INVALID_ARGUMENT, where the form's scratch and result views and launches say
   * WRONG_DEVICE: a probe); host data stays INVALID_ARGUMENT */
  app_cmd ac = {0};
  app_cmd_begin(&ac, r0);
  vkds_cmd rec = {.cmd = ac.cmd, .resource = r0};
  const uint32_t zero = 0;
  ck_assert_int_eq(vkds_cmd_fill(&rec, &on_other, &zero), VKDS_ERROR_WRONG_DEVICE);
  ck_assert_int_eq(vkds_cmd_fill(&rec, &partial_other, &zero), VKDS_ERROR_WRONG_DEVICE);
  ck_assert_int_eq(vkds_cmd_fill(&rec, &outs, &zero), VKDS_ERROR_INVALID_ARGUMENT);
  app_cmd_submit(&ac, 10); /* (nothing was recorded) */
  app_cmd_destroy(&ac);
  /* the map scanned into the view it permutes: read twice, written never */
  ck_assert_vkds(vkds_inclusive_scan(pol, &some_map, &partial_other, NULL, NULL));
  uint32_t seen[N];
  ck_assert_vkds(vkds_download(r1, seen, vkds_view_of(other), sizeof seen));
  for (uint32_t i = 0; i < N; ++i)
    harness_expect_uint_eq(seen[i], i == N - 1 ? N - 1 : i == 7 ? N + 6 : i == 0 ? N + 6 : out[i]);
  ck_assert_vkds(vkds_upload(r1, vkds_view_of(other), host, sizeof host)); /* as it was */

  /* the user type: read in place by reduce and transform when both parts are buffers here */
  vkds_seq halves[2] = {vkds_seq_buffer((vkds_view){dev, 0, 1000 * 4}, VKDS_U32),
                        vkds_seq_buffer((vkds_view){dev, 1000 * 4, (N - 1000) * 4}, VKDS_U32)};
  vkds_seq both = concat(halves);
  ck_assert(vkds_seq_is_passed_directly(&both, r0));
  concat_code_calls = 0;
  uint32_t s32;
  ck_assert_vkds(vkds_reduce(pol, &both, NULL, NULL, &s32));
  ck_assert_uint_eq(s32, (uint32_t)sum);
  ck_assert_int_gt(concat_code_calls, 0); /* read in place: its device code was used */
  ck_assert_vkds(vkds_transform(pol, &both, &outs, "x * 3u"));
  for (uint32_t i = 0; i < N; ++i) harness_expect_uint_eq(out[i], host[i] * 3);
  ck_assert_vkds(vkds_transform(pol, &outs, &both, "x / 3u")); /* and written through it */
  uint32_t back[N];
  ck_assert_vkds(vkds_download(r0, back, vkds_view_of(dev), sizeof back));
  ck_assert(memcmp(back, host, sizeof host) == 0);
  vkds_seq first = {.ops = &first_ops, .count = 1000, .type = VKDS_U32, .elem_size = 4, .user = halves};
  uint32_t first_sum = 0;
  for (uint32_t i = 0; i < 1000; ++i) first_sum += host[i];
  ck_assert_vkds(vkds_reduce(pol, &first, NULL, NULL, &s32));
  ck_assert_uint_eq(s32, first_sum);
  vkds_seq positive = {.ops = &positive_ops, .count = N, .type = VKDS_U32, .elem_size = 4, .user = halves};
  ck_assert_int_eq(vkds_reduce(pol, &positive, NULL, NULL, &s32), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_msg(strstr(vkds_last_error_message(), "returned 5, which is not a vkds_result"), "%s",
                vkds_last_error_message());
  /* a part its device code hands out that is no sequence (a failed constructor's, ops
   * NULL): refused by name (it was walked as it came: a crash; a views probe) */
  vkds_seq bad_parts[2] = {halves[0], {.count = N - 1000}};
  vkds_seq liar = {.ops = &liar_ops, .count = N, .type = VKDS_U32, .elem_size = 4, .user = bad_parts};
  ck_assert_int_eq(vkds_reduce(pol, &liar, NULL, NULL, &s32), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_msg(strstr(vkds_last_error_message(), "part 1 of a 'liar' sequence's device code"), "%s",
                vkds_last_error_message());
  /* not passed directly (a part on device 1): staged through its host reads */
  vkds_seq mixed_parts[2] = {vkds_seq_host(host, 1000, VKDS_U32),
                             vkds_seq_buffer((vkds_view){other, 1000 * 4, (N - 1000) * 4}, VKDS_U32)};
  vkds_seq mixed = concat(mixed_parts);
  ck_assert(!vkds_seq_is_passed_directly(&mixed, r0));
  concat_code_calls = 0;
  vkds_result r = vkds_reduce(pol, &mixed, NULL, NULL, &s32);
  /* a buffer's elements cannot be read by the host, so staging through reads fails cleanly */
  ck_assert_int_eq(r, VKDS_ERROR_UNSUPPORTED);
  ck_assert_int_eq(concat_code_calls, 0);
  vkds_seq host_parts[2] = {vkds_seq_host(host, 1000, VKDS_U32), vkds_seq_host(host + 1000, N - 1000, VKDS_U32)};
  vkds_seq host_concat = concat(host_parts);
  ck_assert_vkds(vkds_reduce(pol, &host_concat, NULL, NULL, &s32));
  ck_assert_uint_eq(s32, (uint32_t)sum);
  ck_assert_int_eq(concat_code_calls, 0);

  vkds_buffer_destroy(dev), vkds_buffer_destroy(mapb), vkds_buffer_destroy(mapped), vkds_buffer_destroy(other);
  vkds_buffer_destroy(imported);
  free(imported_mem);
  close_ctx();
}
END_TEST

/* The policy's selections on device `device` and on the others. */
static void selections_by_device(uint32_t device, uint64_t *on, uint64_t *off) {
  *on = *off = 0;
  for (uint32_t i = 0; i < pol->resource_count; ++i) {
    vkds_policy_resource_stats st;
    vkds_resource_info ri;
    ck_assert_vkds(vkds_policy_get_resource_stats(pol, i, &st));
    vkds_resource_get_info(vkds_policy_resource(pol, i), &ri);
    *(ri.device_index == device ? on : off) += st.selections;
  }
}

/* The hints: earliest finish sends work on a device buffer to that buffer's device. */
START_TEST(earliest_finish_prefers_resident_data) {
  vkds_context_info info = harness_info();
  info.devices_per_physical = 2;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  /* one queue of each device (a GPU has many: the exploring counts below are for two) */
  vkds_resource *remote = harness_device_resource(ctx, 1);
  void *two[2] = {harness_device_resource(ctx, 0), remote};
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_EARLIEST_FINISH,
                                                        .resources = {.context = ctx, .resource_count = 2, .resources = two},
                                                        .transfer_bytes_per_s = 1e6}, &pol));
  enum { N = 1 << 16 };
  uint32_t *host = malloc(N * 4);
  for (uint32_t i = 0; i < N; ++i) host[i] = i;
  vkds_buffer *b;
  ck_assert_vkds(vkds_buffer_create(remote, &(vkds_buffer_info){.size = N * 4}, &b));
  ck_assert_vkds(vkds_upload(remote, vkds_view_of(b), host, N * 4));
  vkds_seq bs = vkds_seq_buffer(vkds_view_of(b), VKDS_U32);
  vkds_resource_info fi;
  vkds_resource_get_info(remote, &fi);
  uint64_t far0 = 0, other0 = 0;
  for (int k = 0; k < 10; ++k) {
    uint32_t sum;
    ck_assert_vkds(vkds_reduce(pol, &bs, NULL, NULL, &sum));
    ck_assert_uint_eq(sum, (uint32_t)((uint64_t)N * (N - 1) / 2));
    /* the first four calls explore: each resource runs the key twice */
    if (k == 3) selections_by_device(fi.device_index, &far0, &other0);
  }
  uint64_t far, other;
  selections_by_device(fi.device_index, &far, &other);
  ck_assert_msg(far0 == 2 && other0 == 2, "exploring: resident device %llu, other %llu", (unsigned long long)far0,
                (unsigned long long)other0);
  ck_assert_msg(far - far0 == 6 && other == other0, "resident device %llu, other %llu after exploring",
                (unsigned long long)(far - far0), (unsigned long long)(other - other0));
  /* a host sequence in the call (here a small output) leaves the buffer's device
   * preferred: the hints said "host only" once, and the calls went to the first device,
   * the buffer copied down and up each time (a new-user probe) */
  uint32_t found[4];
  vkds_seq few = vkds_seq_host(found, 4, VKDS_U32);
  for (int k = 0; k < 10; ++k) {
    uint64_t kept;
    if (k == 4) selections_by_device(fi.device_index, &far0, &other0); /* the first four explore */
    ck_assert_vkds(vkds_copy_if(pol, &bs, &few, "x % 1000u == 7u", &kept));
    ck_assert_uint_eq(kept, N / 1000 + (N % 1000 > 7));
    ck_assert_uint_eq(found[3], 3007);
  }
  selections_by_device(fi.device_index, &far, &other);
  ck_assert_msg(far - far0 == 6 && other == other0, "with a host output: resident device %llu, other %llu",
                (unsigned long long)(far - far0), (unsigned long long)(other - other0));
  /* host memory imported into the second device is there too: read in place there,
   * copied anywhere else (it counted as host data, to be moved wherever it ran, and
   * the calls went to the first device) */
  uint64_t align = vkds_import_alignment(remote);
  if (align) {
    uint64_t bytes = (N * 4 + align - 1) / align * align;
    void *im = NULL;
    ck_assert_int_eq(posix_memalign(&im, align, bytes), 0);
    memcpy(im, host, N * 4);
    vkds_buffer *ib;
    ck_assert_vkds(vkds_buffer_import_host(remote, im, bytes, &ib));
    vkds_seq is = vkds_seq_host(im, N, VKDS_U32);
    selections_by_device(fi.device_index, &far0, &other0);
    for (int k = 0; k < 6; ++k) {
      uint32_t sum;
      ck_assert_vkds(vkds_reduce(pol, &is, NULL, NULL, &sum));
      ck_assert_uint_eq(sum, (uint32_t)((uint64_t)N * (N - 1) / 2));
    }
    selections_by_device(fi.device_index, &far, &other);
    ck_assert_msg(far - far0 == 6 && other == other0, "imported: its device %llu, other %llu",
                  (unsigned long long)(far - far0), (unsigned long long)(other - other0));
    vkds_buffer_destroy(ib);
    free(im);
  }
  vkds_buffer_destroy(b);
  free(host);
  close_ctx();
}
END_TEST

/* Host data larger than the staging ring (2 x 256 KiB here), streamed each way
 * (lib/algorithm/stream.c): in place from host-cached or mapped memory, and copied to
 * device memory (a discrete GPU's default, forced here); chunks bound as storage
 * buffers, and (last, as on a discrete GPU) reached through their addresses. */
static const struct { const char *memory; int access; } stream_modes[] = {
    {"readback", 0}, {"mapped", 0}, {"copy", 0}, {"copy", 1}};
/* Host data streams through buffers no larger than itself, and the temporaries a
 * context keeps for later calls stay within eight staging rings (a new-user probe: 4 KB
 * host arrays in a zip of 16 kept 32 buffers of half the ring, 512 MiB by default,
 * until the context went). */
START_TEST(kept_temporaries_are_bounded) {
  vkds_context_info info = harness_info();
  info.staging_chunks = 2;
  info.staging_chunk_bytes = 256 << 10;
  info.keep_bytes = 8 * 2 * (256 << 10); /* a budget of 4 MiB (a discrete GPU's default is larger) */
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  r0 = vkds_context_resource(ctx, 0);
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = {.context = ctx}}, &pol));
  enum { PARTS = 16, MAX_N = 1 << 16 };
  static uint32_t data[PARTS][MAX_N];
  for (uint32_t k = 0; k < PARTS; ++k)
    for (uint32_t i = 0; i < MAX_N; ++i) data[k][i] = (uint32_t)(rnd() % 1000);
  char sum16[256] = "";
  for (uint32_t k = 0; k < PARTS; ++k) snprintf(sum16 + strlen(sum16), sizeof sum16 - strlen(sum16), "%sx.p%u", k ? " + " : "", k);
  uint64_t first = 0, most = 0;
  for (uint32_t n = 1000; n <= MAX_N; n *= 2) {
    vkds_seq parts[PARTS];
    for (uint32_t k = 0; k < PARTS; ++k) parts[k] = vkds_seq_host(data[k], n, VKDS_U32);
    vkds_seq z = vkds_seq_zip(parts, PARTS);
    uint64_t got = 0, want = 0;
    for (uint32_t k = 0; k < PARTS; ++k)
      for (uint32_t i = 0; i < n; ++i) want += data[k][i];
    ck_assert_vkds(vkds_transform_reduce(pol, &z, sum16, VKDS_U64, &(vkds_op){.kind = VKDS_OP_PLUS}, NULL, &got));
    ck_assert_uint_eq(got, want);
    vkds_memory_stats st;
    ck_assert_vkds(vkds_memory_get_stats(r0, &st));
    if (n == 1000) first = st.used_bytes;
    most = st.used_bytes > most ? st.used_bytes : most;
  }
  /* 1000 elements: 32 buffers of 4 KiB (were 256 KiB each, 8 MiB) */
  ck_assert_msg(first < (1u << 20), "%llu bytes in use after a call on 4 KB arrays", (unsigned long long)first);
  /* every size after it: 32 buffers a size, 16 MiB in all, kept within 4 MiB (+ the
   * call's own, and the ring); were 8 MiB from the first call on */
  ck_assert_msg(most < (6u << 20), "%llu bytes in use", (unsigned long long)most);
  close_ctx();
}
END_TEST

START_TEST(host_larger_than_staging_ring) {
  /* set before the context exists: no vkds thread reads the environment meanwhile */
  setenv("VKDS_STREAM_MEMORY", stream_modes[_i].memory, 1);
  force_access(stream_modes[_i].access);
  vkds_context_info info = harness_info();
  info.staging_chunks = 2;
  info.staging_chunk_bytes = 256 << 10;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  r0 = vkds_context_resource(ctx, 0);
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = {.context = ctx}}, &pol));
  enum { N = 3 << 20 }; /* 12 MiB of u32 */
  uint32_t *a = malloc(N * 4), *b = malloc(N * 4);
  uint64_t sum = 0;
  for (uint32_t i = 0; i < N; ++i) a[i] = (uint32_t)rnd(), sum += a[i];
  vkds_seq as = vkds_seq_host(a, N, VKDS_U32), bs = vkds_seq_host(b, N, VKDS_U32);
  uint32_t got;
  ck_assert_vkds(vkds_reduce(pol, &as, NULL, NULL, &got));
  ck_assert_uint_eq(got, (uint32_t)sum);
  ck_assert_vkds(vkds_transform(pol, &as, &bs, "x ^ 0x5555u"));
  for (uint32_t i = 0; i < N; ++i) harness_expect_uint_eq(b[i], a[i] ^ 0x5555u);
  /* streamed, so memory stays bounded: while the last chunk runs, what vkds holds is two
   * stream buffers per host sequence (half the ring each) and small buffers, not 12 MiB */
  vkds_submission *sub;
  ck_assert_vkds(vkds_transform_async(pol, &bs, &as, "x ^ 0x5555u", &sub));
  vkds_memory_stats st;
  ck_assert_vkds(vkds_memory_get_stats(r0, &st));
  ck_assert_msg(st.used_bytes < 3 << 20, "%llu bytes in use while streaming", (unsigned long long)st.used_bytes);
  ck_assert_vkds(vkds_submission_wait(sub));
  vkds_submission_release(sub);
  for (uint32_t i = 0; i < N; ++i) harness_expect_uint_eq(a[i], b[i] ^ 0x5555u);
  free(a), free(b);
  close_ctx();
  unsetenv("VKDS_STREAM_MEMORY");
}
END_TEST

/* Under the descriptor rule, a leaf longer than one binding holds (maxStorageBufferRange)
 * is reached through its address instead, also beside bound leaves in one kernel. */
START_TEST(leaf_larger_than_a_binding) {
  force_access(0);
  open_ctx();
  vkds_resource_info info;
  vkds_resource_get_info(r0, &info);
  uint64_t n = info.max_storage_buffer_range / 4 + 5; /* u32: 20 bytes past the range */
  vkds_buffer *big;
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = n * 4}, &big));
  vkds_seq bs = vkds_seq_buffer(vkds_view_of(big), VKDS_U32), cnt = vkds_seq_counting(0, n, VKDS_U32);
  ck_assert_vkds(vkds_copy(pol, &cnt, &bs)); /* big[i] = i, written through its address */
  uint32_t sum;
  ck_assert_vkds(vkds_reduce(pol, &bs, NULL, NULL, &sum));
  ck_assert_uint_eq(sum, (uint32_t)((n - 1) * n / 2));
  enum { M = 1001 }; /* a gather through a small map, which is bound */
  uint32_t map[M], want = 0;
  for (uint32_t i = 0; i < M; ++i) map[i] = (uint32_t)(n - 1 - (uint64_t)i * 7919), want += map[i];
  vkds_seq ms = vkds_seq_host(map, M, VKDS_U32), gathered = vkds_seq_permutation(&bs, &ms);
  ck_assert_vkds(vkds_reduce(pol, &gathered, NULL, NULL, &sum));
  ck_assert_uint_eq(sum, want);
  vkds_buffer_destroy(big);
  close_ctx();
}
END_TEST

/* ---- the forms ---- */

/* The asynchronous forms copy what they keep of their sequences: the vkds_seq structs may
 * go out of scope when the call returns (only the memory under them, and result
 * pointers, must live on). Streamed host outputs were copied out through the caller's
 * structs after the call: garbage, or a crash (found by a new-user probe). A ring of
 * 2 x 4 KiB makes 50,000 elements stream in 49 chunks. */
static vkds_submission *scoped_call(vkds_policy *p, int which, uint32_t *in, uint32_t *out, uint32_t n) {
  vkds_seq s = vkds_seq_host(in, n, VKDS_U32), o = vkds_seq_host(out, n, VKDS_U32);
  vkds_submission *sub = NULL;
  if (which == 0) ck_assert_vkds(vkds_transform_async(p, &s, &o, "x * 2u", &sub));
  else ck_assert_vkds(vkds_inclusive_scan_async(p, &s, &o, NULL, NULL, &sub));
  return sub;
}
static void overwrite_stack(void) {
  volatile unsigned char junk[4096];
  for (size_t i = 0; i < sizeof junk; ++i) junk[i] = (unsigned char)(0xa5 ^ i);
}

START_TEST(asynchronous_sequences_may_go_out_of_scope) {
  vkds_context_info info = harness_info();
  info.staging_chunks = 2;
  info.staging_chunk_bytes = 4096;
  vkds_context *small;
  ck_assert_vkds(vkds_context_create(&info, &small));
  vkds_policy *p;
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = {.context = small}}, &p));
  enum { N = 50000 };
  static uint32_t in[N], out[2][N];
  for (uint32_t i = 0; i < N; ++i) in[i] = i % 7;
  vkds_submission *subs[2];
  for (int w = 0; w < 2; ++w) subs[w] = scoped_call(p, w, in, out[w], N);
  overwrite_stack();
  for (int w = 0; w < 2; ++w) {
    ck_assert_vkds(vkds_submission_wait(subs[w]));
    vkds_submission_release(subs[w]);
  }
  uint32_t sum = 0;
  for (uint32_t i = 0; i < N; ++i) {
    sum += in[i];
    harness_expect_uint_eq(out[0][i], 2 * in[i]);
    harness_expect_uint_eq(out[1][i], sum);
  }
  vkds_policy_release(p);
  vkds_context_destroy(small);
}
END_TEST

START_TEST(asynchronous_form) {
  force_access(_i);
  open_ctx();
  enum { N = 50000 };
  float *a = malloc(N * 4), *b = malloc(N * 4);
  for (int i = 0; i < N; ++i) a[i] = (float)(i % 17);
  vkds_seq as = vkds_seq_host(a, N, VKDS_F32), bs = vkds_seq_host(b, N, VKDS_F32);
  float sum = -1;
  vkds_submission *s1, *s2, *s3;
  ck_assert_vkds(vkds_reduce_async(pol, &as, NULL, NULL, &sum, &s1));
  ck_assert_vkds(vkds_transform_async(pol, &as, &bs, "x * 0.5", &s2));
  uint64_t count = 0;
  ck_assert_vkds(vkds_count_if_async(pol, &as, "x == 3.0", &count, &s3));
  ck_assert_vkds(vkds_submission_wait(s1));
  vkds_result r;
  while ((r = vkds_submission_poll(s2)) == VKDS_ERROR_WOULD_BLOCK) usleep(100);
  ck_assert_vkds(r);
  double want = 0;
  for (int i = 0; i < N; ++i) want += a[i];
  ck_assert(fabs(sum - want) < 1e-3 * want);
  for (int i = 0; i < N; ++i) harness_expect(b[i] == a[i] * 0.5f);
  vkds_submission_release(s3); /* unwaited: the release finishes it, nothing is lost */
  uint64_t threes = 0;
  for (int i = 0; i < N; ++i) threes += a[i] == 3.0f;
  ck_assert_uint_eq(count, threes);
  ck_assert_vkds(vkds_submission_wait(s1)); /* again: same answer */
  vkds_submission_release(s1), vkds_submission_release(s2);
  /* the policy released before its submission: the submission keeps it (and its
   * backend) until its own release, which destroys it (this was a use after free) */
  vkds_policy *own;
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_ROUND_ROBIN, .resources = {.context = ctx}},
                                    &own));
  sum = -1;
  ck_assert_vkds(vkds_reduce_async(own, &as, NULL, NULL, &sum, &s1));
  vkds_policy_release(own);
  ck_assert_vkds(vkds_submission_wait(s1));
  ck_assert(fabs(sum - want) < 1e-3 * want);
  vkds_submission_release(s1);
  free(a), free(b);
  close_ctx();
}
END_TEST

/* A policy with a capacity: an algorithm's selection that finds it full is waited out,
 * as vkds_submit waits it out (it returned VKDS_ERROR_WOULD_BLOCK, with no message, from
 * the blocking and the asynchronous forms alike), and after the policy's
 * submit_timeout_ns it is VKDS_ERROR_TIMEOUT with nothing written. A selection held and
 * not submitted counts against the capacity: it fills the policy here. */
typedef struct {
  vkds_selection *held;
  useconds_t after_us;
} release_later;
static void *release_after(void *arg) {
  release_later *rl = arg;
  usleep(rl->after_us);
  vkds_selection_release(rl->held);
  return NULL;
}

/* vkds_policy_wait_all completes asynchronous calls' staged outputs (a buffer of another
 * device, a host result): they were written only in the submission's own wait, poll or
 * release, so after wait_all the buffer held garbage, and the release then overwrote
 * what the application had written since (a several-devices probe). */
START_TEST(wait_all_completes_async_outputs) {
  vkds_context_info info = harness_info();
  info.devices_per_physical = 2;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  vkds_resource *r1 = harness_device_resource(ctx, 1);
  ck_assert_ptr_nonnull(r1);
  vkds_resource *on0 = harness_device_resource(ctx, 0);
  void *only0[] = {on0};
  vkds_policy *p;
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = {.resource_count = 1, .resources = only0}}, &p));
  enum { N = 5000 };
  vkds_buffer *in, *out;
  ck_assert_vkds(vkds_buffer_create(r1, &(vkds_buffer_info){.size = N * 4, .memory = VKDS_MEMORY_MAPPED}, &in));
  ck_assert_vkds(vkds_buffer_create(r1, &(vkds_buffer_info){.size = N * 4, .memory = VKDS_MEMORY_MAPPED}, &out));
  uint32_t *iv = vkds_buffer_map(in), *ov = vkds_buffer_map(out), want = 0;
  for (uint32_t i = 0; i < N; ++i) iv[i] = (uint32_t)(rnd() % 1000), ov[i] = 0xdeadbeef, want += iv[i];
  vkds_seq ins = vkds_seq_buffer(vkds_view_of(in), VKDS_U32), outs = vkds_seq_buffer(vkds_view_of(out), VKDS_U32);
  vkds_submission *st, *sr;
  uint32_t sum = 0;
  ck_assert_vkds(vkds_transform_async(p, &ins, &outs, "x + 1u", &st));
  ck_assert_vkds(vkds_reduce_async(p, &ins, NULL, NULL, &sum, &sr));
  ck_assert_vkds(vkds_policy_wait_all(p, UINT64_MAX));
  ck_assert_uint_eq(sum, want);
  for (uint32_t i = 0; i < N; ++i) ck_assert_uint_eq(ov[i], iv[i] + 1);
  memset(ov, 7, N * 4); /* the application's own write, after the call was done */
  vkds_submission_release(st), vkds_submission_release(sr);
  for (uint32_t i = 0; i < N; ++i) ck_assert_uint_eq(ov[i], 0x07070707u);
  vkds_policy_release(p);
  vkds_buffer_destroy(in), vkds_buffer_destroy(out);
  vkds_context_destroy(ctx);
}
END_TEST

/* Calls on one queue run in the order they were made: of two asynchronous calls that
 * write the same host memory, the later one's values stay, however the application
 * completes them (a wait for the later call first, vkds_policy_wait_all, the releases in
 * any order, a blocking call after them). Their steps ran in the order they were
 * completed, and wait_all's newest first: the earlier call's values won, and a streamed
 * output (several chunks) ended with chunks of both (an async probe). */
START_TEST(later_async_host_writes_win) {
  vkds_context_info info = harness_info();
  info.staging_chunks = 2, info.staging_chunk_bytes = 1 << 20; /* 1 MiB stream buffers */
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = {.context = ctx}}, &pol));
  static const uint32_t sizes[] = {1000, 700000}; /* one chunk; three */
  for (size_t z = 0; z < 2; ++z) {
    uint32_t n = sizes[z], *out = malloc(n * 4);
    vkds_seq so = vkds_seq_host(out, n, VKDS_U32);
    for (int how = 0; how < 5; ++how) {
      vkds_submission *s1, *s2 = NULL;
      uint32_t one = 1, two = 2;
      memset(out, 0, n * 4);
      ck_assert_vkds(vkds_fill_async(pol, &so, &one, &s1));
      if (how == 4) ck_assert_vkds(vkds_fill(pol, &so, &two)); /* blocking, before s1's wait */
      else ck_assert_vkds(vkds_fill_async(pol, &so, &two, &s2));
      switch (how) {
      case 0:
        ck_assert_vkds(vkds_submission_wait(s2));
        ck_assert_vkds(vkds_submission_wait(s1));
        break;
      case 1: ck_assert_vkds(vkds_policy_wait_all(pol, UINT64_MAX)); break;
      case 2:
        while (vkds_submission_poll(s2) == VKDS_ERROR_WOULD_BLOCK) {}
        break;
      default: break; /* 3: the releases below, the later call's first; 4: s1's after the blocking call */
      }
      vkds_submission_release(s2), vkds_submission_release(s1);
      for (uint32_t i = 0; i < n; ++i)
        if (out[i] != 2) ck_abort_msg("n %u, completion %d: element %u holds %u", n, how, i, out[i]);
    }
    free(out);
  }
  close_ctx();
}
END_TEST

START_TEST(policy_at_capacity_is_waited_out) {
  open_ctx();
  enum { N = 10000 };
  uint32_t *a = malloc(N * 4);
  uint32_t want = 0;
  for (int i = 0; i < N; ++i) a[i] = (uint32_t)(rnd() % 1000), want += a[i];
  vkds_seq as = vkds_seq_host(a, N, VKDS_U32);
  static const vkds_policy_kind kinds[] = {VKDS_POLICY_FIXED, VKDS_POLICY_ROUND_ROBIN, VKDS_POLICY_DYNAMIC_LOAD};
  for (size_t k = 0; k < sizeof kinds / sizeof *kinds; ++k) {
    vkds_policy *p;
    ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = kinds[k], .capacity = 1,
                                                          /* 250 ms: the wait below (5 ms) must end well within
                                                             it on a loaded 2-core machine (20 ms was missed) */
                                                          .submit_timeout_ns = 250000000ull,
                                                          /* one queue (a GPU's others would take the call) */
                                                          .resources = {.context = ctx, .resource_count = 1,
                                                                        .resources = (void *[]){r0}}},
                                      &p));
    /* full for longer than the timeout: a named error, nothing written */
    vkds_selection *held;
    ck_assert_vkds(vkds_select(p, NULL, &held));
    uint32_t sum = 7; /* (a reduction of U32 writes a uint32_t) */
    vkds_submission *sub = (vkds_submission *)&sum; /* any pointer: the call must clear it */
    ck_assert_int_eq(vkds_reduce(p, &as, NULL, NULL, &sum), VKDS_ERROR_TIMEOUT);
    ck_assert(strstr(vkds_last_error_message(), "vkds_reduce") && strstr(vkds_last_error_message(), "capacity"));
    ck_assert_int_eq(vkds_reduce_async(p, &as, NULL, NULL, &sum, &sub), VKDS_ERROR_TIMEOUT);
    ck_assert_ptr_null(sub);
    ck_assert_uint_eq(sum, 7);
    /* full for less: the blocking form waits, then runs */
    release_later rl = {held, 5000};
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, release_after, &rl), 0);
    ck_assert_vkds(vkds_reduce(p, &as, NULL, NULL, &sum));
    pthread_join(th, NULL);
    ck_assert_uint_eq(sum, want);
    /* and the asynchronous form, behind an asynchronous call in flight */
    uint32_t sum2 = 0, sum3 = 0;
    vkds_submission *s2, *s3;
    ck_assert_vkds(vkds_reduce_async(p, &as, NULL, NULL, &sum2, &s2));
    ck_assert_vkds(vkds_reduce_async(p, &as, NULL, NULL, &sum3, &s3));
    ck_assert_vkds(vkds_submission_wait(s3));
    ck_assert_vkds(vkds_submission_wait(s2));
    ck_assert_uint_eq(sum2, want);
    ck_assert_uint_eq(sum3, want);
    vkds_submission_release(s2), vkds_submission_release(s3);
    vkds_policy_release(p);
  }
  free(a);
  close_ctx();
}
END_TEST

/* A call repeated on the same buffers with the same arguments submits its first
 * recording again (vkds_task_info.replay_key) where the data is passed by device address,
 * and reads the buffers as they are then; anything different records anew. Leaves bound
 * as descriptors (lavapipe's default) are never replayed. */
START_TEST(repeated_calls_replay_their_recording) {
  force_access(_i);
  open_ctx();
  enum { N = 1000 };
  static uint32_t host[N], back[N];
  vkds_buffer *a, *b;
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = 4 * N}, &a));
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = 4 * N}, &b));
  vkds_seq as = vkds_seq_buffer(vkds_view_of(a), VKDS_U32), bs = vkds_seq_buffer(vkds_view_of(b), VKDS_U32);
  uint64_t before = vkds_resource_replay_count(r0);
  for (uint32_t round = 0; round < 3; ++round) { /* new data each round, the same calls */
    uint32_t want = 0, sum = 0, seven = 7, with_init = 0;
    for (uint32_t i = 0; i < N; ++i) host[i] = (uint32_t)rnd(), want += host[i];
    ck_assert_vkds(vkds_upload(r0, vkds_view_of(a), host, sizeof host));
    ck_assert_vkds(vkds_reduce(pol, &as, NULL, NULL, &sum));
    ck_assert_uint_eq(sum, want);
    ck_assert_vkds(vkds_reduce(pol, &as, NULL, &seven, &with_init)); /* another argument: another recording */
    ck_assert_uint_eq(with_init, want + 7);
    ck_assert_vkds(vkds_transform(pol, &as, &bs, "x * 3u + 1u"));
    ck_assert_vkds(vkds_download(r0, back, vkds_view_of(b), sizeof back));
    uint32_t want_b = 0, sum_b = 0;
    for (uint32_t i = 0; i < N; ++i) {
      harness_expect_uint_eq(back[i], host[i] * 3u + 1u);
      want_b += back[i];
    }
    ck_assert_vkds(vkds_reduce(pol, &bs, NULL, NULL, &sum_b)); /* the same kernel on another buffer */
    ck_assert_uint_eq(sum_b, want_b);
  }
  /* rounds 2 and 3 replay all four calls (the uploads and downloads between them take
   * other slots) */
  ck_assert_uint_eq(vkds_resource_replay_count(r0) - before, _i == 1 ? 8u : 0u);
  vkds_buffer_destroy(a), vkds_buffer_destroy(b);
  close_ctx();
}
END_TEST

/* The queue's leading barrier (lib/backend/queue.c): an algorithm call leaves its
 * leading barrier to the queue, which puts one before it only when the command buffer
 * before it did not end in vkds's full barrier: the queue's first submission, another
 * kind of task, or anything the application may have submitted (vkds_resource_unlock_
 * queue). Counts what the queue did (lib/backend/queue_test.h). */
static vkds_result record_nothing(void *user, const vkds_task *task, void **wait_object) {
  (void)user, (void)task, (void)wait_object;
  return VKDS_SUCCESS;
}

/* A thread that holds a queue (vkds_resource_lock_queue) and calls vkds on it: its
 * uploads, blocking and asynchronous calls (and their waits) submit under its hold, after
 * what was pending; a task that submits by itself is refused by name. They hung, waiting
 * for the lock the thread held (a threads probe). */
START_TEST(calls_under_the_callers_queue_lock) {
  open_ctx();
  enum { N = 3000 };
  static uint32_t host[N], back[N];
  uint32_t want = 0;
  for (uint32_t i = 0; i < N; ++i) host[i] = (uint32_t)rnd(), want += host[i];
  vkds_buffer *a;
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = sizeof host}, &a));
  vkds_seq as = vkds_seq_buffer(vkds_view_of(a), VKDS_U32), hs = vkds_seq_host(host, N, VKDS_U32);
  uint32_t before = 0, sum = 0, async_sum = 0;
  vkds_submission *s;
  ck_assert_vkds(vkds_reduce_async(pol, &hs, NULL, NULL, &before, &s)); /* maybe still pending when locked */
  vkds_resource_lock_queue(r0);
  ck_assert_vkds(vkds_upload(r0, vkds_view_of(a), host, sizeof host));
  ck_assert_vkds(vkds_reduce(pol, &as, NULL, NULL, &sum));
  ck_assert_uint_eq(sum, want);
  vkds_submission *s2;
  ck_assert_vkds(vkds_reduce_async(pol, &as, NULL, NULL, &async_sum, &s2));
  ck_assert_vkds(vkds_submission_wait(s2));
  ck_assert_uint_eq(async_sum, want);
  ck_assert_vkds(vkds_download(r0, back, vkds_view_of(a), sizeof back));
  ck_assert_int_eq(memcmp(back, host, sizeof host), 0);
  ck_assert_int_eq(vkds_submit(pol, &(vkds_task_info){.fn = record_nothing, .mode = VKDS_TASK_SELF_SUBMIT}, NULL),
                   VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "whose lock its thread holds"));
  ck_assert_vkds(vkds_policy_wait_all(pol, UINT64_MAX));
  vkds_resource_unlock_queue(r0);
  ck_assert_vkds(vkds_submission_wait(s));
  ck_assert_uint_eq(before, want);
  vkds_submission_release(s), vkds_submission_release(s2);
  vkds_buffer_destroy(a);
  close_ctx();
}
END_TEST

START_TEST(queue_puts_the_leading_barrier_where_needed) {
  open_ctx();
  enum { N = 4096 };
  static uint32_t host[N];
  uint32_t want = 0;
  for (uint32_t i = 0; i < N; ++i) host[i] = (uint32_t)rnd(), want += host[i];
  vkds_buffer *a;
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = sizeof host}, &a));
  ck_assert_vkds(vkds_upload(r0, vkds_view_of(a), host, sizeof host));
  vkds_seq as = vkds_seq_buffer(vkds_view_of(a), VKDS_U32);
  uint64_t base = vkds__queue_lead_barriers(r0);
  uint32_t sum = 0;
#define REDUCE_AND_COUNT(barriers)                                                                        \
  do {                                                                                                    \
    sum = 0;                                                                                              \
    ck_assert_vkds(vkds_reduce(pol, &as, NULL, NULL, &sum));                                              \
    ck_assert_uint_eq(sum, want);                                                                         \
    ck_assert_uint_eq(vkds__queue_lead_barriers(r0) - base, (barriers));                                \
  } while (0)
  REDUCE_AND_COUNT(1u); /* after the upload (its own barrier is not vkds's full one), or first */
  REDUCE_AND_COUNT(1u); /* after a reduction: none */
  REDUCE_AND_COUNT(1u);
  vkds_resource_lock_queue(r0); /* the application may submit here */
  vkds_resource_unlock_queue(r0);
  REDUCE_AND_COUNT(2u);
  vkds_selection *sel;
  vkds_submission *sub;
  ck_assert_vkds(vkds_select(pol, &(vkds_task_info){0}, &sel));
  ck_assert_vkds(vkds_selection_submit(sel, &(vkds_task_info){.fn = record_nothing}, &sub)); /* another kind of task */
  vkds_selection_release(sel);
  ck_assert_vkds(vkds_submission_wait(sub));
  vkds_submission_release(sub);
  REDUCE_AND_COUNT(3u);
  REDUCE_AND_COUNT(3u);
#undef REDUCE_AND_COUNT
  vkds_buffer_destroy(a);
  close_ctx();
}
END_TEST

/* A user type of version 1 (no device_code slot) that says it is passed directly
 * anywhere: the algorithms stage it through its reads. */
static vkds_result read_u32(const vkds_seq *s, uint64_t i, void *out) {
  memcpy(out, (const uint32_t *)s->user + i, 4);
  return VKDS_SUCCESS;
}
static const vkds_seq_ops readable_v1_ops = {.version = 1, .name = "readable", .is_passed_directly = always_direct,
                                             .read = read_u32};

START_TEST(recording_form) {
  force_access(_i);
  open_ctx();
  enum { N = 20000 };
  uint32_t host[N];
  uint32_t sum = 0;
  for (uint32_t i = 0; i < N; ++i) host[i] = i * 3, sum += i * 3;
  vkds_buffer *in = harness_device_copy(r0, host, sizeof host), *out = harness_device_copy(r0, NULL, sizeof host), *res, *scratch;
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = 64, .memory = VKDS_MEMORY_MAPPED}, &res));
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = vkds_algorithm_scratch_bytes(r0, N)}, &scratch));
  VkDevice dev;
  VkQueue queue;
  ck_assert_vkds(vkds_resource_vk_handles(r0, NULL, &dev, &queue));
  vkds_resource_info info;
  vkds_resource_get_info(r0, &info);
  VkCommandPool pool;
  ck_assert_int_eq(vkCreateCommandPool(dev, &(VkCommandPoolCreateInfo){.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                                                       .queueFamilyIndex = info.queue_family}, NULL, &pool), 0);
  VkCommandBuffer cmd;
  ck_assert_int_eq(vkAllocateCommandBuffers(dev, &(VkCommandBufferAllocateInfo){.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                                                                .commandPool = pool, .commandBufferCount = 1}, &cmd), 0);
  ck_assert_int_eq(vkBeginCommandBuffer(cmd, &(VkCommandBufferBeginInfo){.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO}), 0);
  vkds_cmd c = {.cmd = cmd, .resource = r0, .scratch = vkds_view_of(scratch)};
  vkds_seq ins = vkds_seq_buffer(vkds_view_of(in), VKDS_U32), outs = vkds_seq_buffer(vkds_view_of(out), VKDS_U32);
  ck_assert_vkds(vkds_cmd_transform(&c, &ins, &outs, "x + 1u"));
  /* reductions take their own scratch, a partial a group (they demanded an argsort's:
   * 25 MB for a million elements; found by a new-user probe) */
  uint64_t need = vkds_reduce_scratch_bytes(r0, N);
  ck_assert_uint_gt(need, 0);
  ck_assert_uint_lt(need, 64 << 10);
  ck_assert_uint_le(need, vkds_algorithm_scratch_bytes(r0, N));
  ck_assert_uint_lt(vkds_reduce_scratch_bytes(r0, 1000000), 64 << 10);
  ck_assert_uint_eq(vkds_reduce_scratch_bytes(NULL, N), 0);
  vkds_cmd tight = {.cmd = cmd, .resource = r0, .scratch = {scratch, 0, need}};
  ck_assert_vkds(vkds_cmd_reduce(&tight, &outs, NULL, NULL, (vkds_view){res, 0, 4}));
  ck_assert_vkds(vkds_cmd_min_element(&tight, &outs, (vkds_view){res, 16, 16}));
  ck_assert_vkds(vkds_cmd_none_of(&tight, &outs, "x == 0u", (vkds_view){res, 32, 4}));
  /* empty: the documented uint32_t 1 or 0 (all_of, none_of and equal wrote 0xffffffff,
   * their and-reduction's identity; a probe) */
  vkds_seq empty = vkds_seq_counting(0, 0, VKDS_U32);
  ck_assert_vkds(vkds_cmd_all_of(&tight, &empty, "x == 0u", (vkds_view){res, 36, 4}));
  ck_assert_vkds(vkds_cmd_none_of(&tight, &empty, "x == 0u", (vkds_view){res, 40, 4}));
  ck_assert_vkds(vkds_cmd_any_of(&tight, &empty, "x == 0u", (vkds_view){res, 44, 4}));
  ck_assert_vkds(vkds_cmd_equal(&tight, &empty, &empty, (vkds_view){res, 48, 4}));
  vkds_cmd short_by_16 = {.cmd = cmd, .resource = r0, .scratch = {scratch, 0, need - 16}};
  ck_assert_int_eq(vkds_cmd_reduce(&short_by_16, &outs, NULL, NULL, (vkds_view){res, 0, 4}), VKDS_ERROR_INVALID_ARGUMENT);
  /* what cannot be recorded: host data (it would need staging), too little scratch */
  vkds_seq hs = vkds_seq_host(host, N, VKDS_U32);
  ck_assert_int_eq(vkds_cmd_reduce(&c, &hs, NULL, NULL, (vkds_view){res, 0, 4}), VKDS_ERROR_INVALID_ARGUMENT);
  /* a user type passed directly by its word while a part is host memory: refused (the
   * part, staged for the recording, was freed before the application submitted, and the
   * recorded reduce read another call's data; a probe) */
  vkds_seq lparts[2] = {vkds_seq_host(host, 10, VKDS_U32), vkds_seq_buffer((vkds_view){out, 0, 40}, VKDS_U32)};
  vkds_seq liar = {.ops = &liar_ops, .count = 20, .type = VKDS_U32, .elem_size = 4, .user = lparts};
  ck_assert_int_eq(vkds_cmd_reduce(&c, &liar, NULL, NULL, (vkds_view){res, 0, 4}), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "a part of a sequence (a host sequence)"));
  /* a user type of version 1 (no device code) that says it is passed directly: read
   * through its host reads into a temporary that was back in the pool before the
   * application submitted (a probe: a recorded reduce of ones summed another call's
   * data); refused, alone and under a view */
  vkds_seq wordy = {.ops = &readable_v1_ops, .count = N, .type = VKDS_U32, .elem_size = 4, .user = host};
  ck_assert_int_eq(vkds_cmd_reduce(&c, &wordy, NULL, NULL, (vkds_view){res, 0, 4}), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "has no device code for this device"));
  vkds_seq wordy_reversed = vkds_seq_reverse(&wordy);
  ck_assert_int_eq(vkds_cmd_count_if(&c, &wordy_reversed, "x > 3u", (vkds_view){res, 0, 8}), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_cmd_copy(&c, &wordy, &outs), VKDS_ERROR_INVALID_ARGUMENT);
  vkds_cmd small = {.cmd = cmd, .resource = r0, .scratch = (vkds_view){scratch, 0, 64}};
  ck_assert_int_eq(vkds_cmd_reduce(&small, &outs, NULL, NULL, (vkds_view){res, 0, 4}), VKDS_ERROR_INVALID_ARGUMENT);
  /* no scratch at all: the message gives the bytes needed and where to ask (it said the
   * view "must be a device-addressed buffer"; a probe) */
  vkds_cmd bare = {.cmd = cmd, .resource = r0};
  ck_assert_int_eq(vkds_cmd_find_if(&bare, &outs, "x > 3u", (vkds_view){res, 0, 8}), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_msg(strstr(vkds_last_error_message(), "holds 0 bytes") &&
                    strstr(vkds_last_error_message(), "vkds_reduce_scratch_bytes gives the size"),
                "%s", vkds_last_error_message());
  /* misaligned scratch and results (were accepted: found by a new-user probe) */
  vkds_buffer *roomy;
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = vkds_algorithm_scratch_bytes(r0, N) + 16}, &roomy));
  vkds_cmd skewed = {.cmd = cmd, .resource = r0, .scratch = {roomy, 4, 0}};
  ck_assert_int_eq(vkds_cmd_reduce(&skewed, &outs, NULL, NULL, (vkds_view){res, 0, 4}), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "scratch view must start 16-byte aligned"));
  ck_assert_int_eq(vkds_cmd_reduce(&c, &outs, NULL, NULL, (vkds_view){res, 2, 4}), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_cmd_min_element(&c, &outs, (vkds_view){res, 4, 16}), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "result view must be 8-byte aligned"));
  /* result and scratch views over the call's sequences or each other (neither was
   * checked: a count written over the output, a scan's states over its input; a probe) */
  ck_assert_int_eq(vkds_cmd_reduce(&c, &outs, NULL, NULL, (vkds_view){out, 8, 4}), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "the result view overlaps a sequence"));
  vkds_cmd over_input = {.cmd = cmd, .resource = r0, .scratch = vkds_view_of(in)};
  ck_assert_int_eq(vkds_cmd_reduce(&over_input, &ins, NULL, NULL, (vkds_view){res, 0, 4}), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "the scratch view overlaps a sequence"));
  ck_assert_int_eq(vkds_cmd_inclusive_scan(&over_input, &ins, &outs, NULL, NULL), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_cmd_copy_if(&c, &ins, &outs, "true", (vkds_view){out, 16, 8}), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_cmd_reduce(&c, &outs, NULL, NULL, (vkds_view){scratch, 16, 4}), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "the result view and the scratch view overlap"));
  ck_assert_int_eq(vkEndCommandBuffer(cmd), 0);
  VkFence fence;
  ck_assert_int_eq(vkCreateFence(dev, &(VkFenceCreateInfo){.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO}, NULL, &fence), 0);
  vkds_resource_lock_queue(r0);
  ck_assert_int_eq(vkQueueSubmit(queue, 1, &(VkSubmitInfo){.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1,
                                                          .pCommandBuffers = &cmd}, fence), 0);
  vkds_resource_unlock_queue(r0);
  ck_assert_int_eq(vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX), 0);
  const unsigned char *m = vkds_buffer_map(res);
  uint32_t got, none;
  uint64_t idx;
  memcpy(&got, m, 4), memcpy(&idx, m + 16, 8), memcpy(&none, m + 32, 4);
  ck_assert_uint_eq(got, sum + N);
  ck_assert_uint_eq(idx, 0);
  ck_assert_uint_eq(none, 1);
  uint32_t on_empty[4];
  memcpy(on_empty, m + 36, sizeof on_empty);
  ck_assert_msg(on_empty[0] == 1 && on_empty[1] == 1 && on_empty[2] == 0 && on_empty[3] == 1,
                "empty: all_of %#x none_of %#x any_of %#x equal %#x", on_empty[0], on_empty[1], on_empty[2], on_empty[3]);
  vkDestroyFence(dev, fence, NULL);
  vkDestroyCommandPool(dev, pool, NULL);
  vkds_buffer_destroy(in), vkds_buffer_destroy(out), vkds_buffer_destroy(res), vkds_buffer_destroy(scratch);
  vkds_buffer_destroy(roomy);
  close_ctx();
}
END_TEST

/* ---- kernels: cached, on disk, and operators that do not compile ---- */

START_TEST(second_call_and_second_process_compile_nothing) {
  char dir[] = "/tmp/vkds-alg-cache-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  for (int round = 0; round < 2; ++round) {
    vkds_context_info info = harness_info();
    info.pipeline_cache_dir = dir;
    ck_assert_vkds(vkds_context_create(&info, &ctx));
    ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = {.context = ctx}}, &pol));
    double d[100];
    for (int i = 0; i < 100; ++i) d[i] = i;
    vkds_seq ds = vkds_seq_host(d, 100, VKDS_F64);
    double m;
    uint64_t compiles, hits, compiles2;
    ck_assert_vkds(vkds_transform_reduce(pol, &ds, "x * x - 3.0", VKDS_F64, &(vkds_op){.kind = VKDS_OP_MAX}, NULL, &m));
    vkds_context_glsl_stats(ctx, &compiles, &hits);
    ck_assert_vkds(vkds_transform_reduce(pol, &ds, "x * x - 3.0", VKDS_F64, &(vkds_op){.kind = VKDS_OP_MAX}, NULL, &m));
    ck_assert(m == 99.0 * 99.0 - 3.0);
    vkds_context_glsl_stats(ctx, &compiles2, &hits);
    ck_assert_uint_eq(compiles2, compiles); /* the second identical call compiles nothing */
    if (round == 0) ck_assert_uint_eq(compiles, 1);
    else ck_assert_uint_eq(compiles, 0); /* a new context with a warm folder runs glslang zero times */
    close_ctx();
  }
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* vkds's own error messages, as an application's logger sees them (validation messages
 * still go to the harness, which fails the test on any) */
typedef struct error_log {
  int count;
  char last[1024];
} error_log;
static void log_errors(void *user, vkds_log_level level, vkds_log_source source, const char *message) {
  if (source != VKDS_LOG_SOURCE_VKDS) {
    harness_log(NULL, level, source, message);
    return;
  }
  error_log *l = user;
  if (level < VKDS_LOG_ERROR) return;
  ++l->count;
  snprintf(l->last, sizeof l->last, "%s", message);
}

/* VKDS_DUMP_ALGORITHMS (README): a generated kernel's GLSL at warning level through the
 * context's logger when it is compiled, and only then */
typedef struct dump_log {
  int dumps;
  bool has_snippet, has_main;
} dump_log;
static void log_dumps(void *user, vkds_log_level level, vkds_log_source source, const char *message) {
  if (source != VKDS_LOG_SOURCE_VKDS) {
    harness_log(NULL, level, source, message);
    return;
  }
  dump_log *l = user;
  if (level != VKDS_LOG_WARN || !strstr(message, "kernel:\n")) return;
  ++l->dumps;
  l->has_snippet = strstr(message, "x * 3u + 1234567u") != NULL;
  l->has_main = strstr(message, "void main()") != NULL;
}

START_TEST(dumped_kernels_are_logged_once) {
  dump_log dumps = {0};
  vkds_context_info info = harness_info();
  info.log = log_dumps, info.log_user = &dumps;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = {.context = ctx}}, &pol));
  uint32_t in[5] = {0, 1, 2, 3, 4}, out[5];
  vkds_seq is = vkds_seq_host(in, 5, VKDS_U32), os = vkds_seq_host(out, 5, VKDS_U32);
  ck_assert_vkds(vkds_transform(pol, &is, &os, "x * 3u + 7u")); /* not asked for: nothing */
  ck_assert_int_eq(dumps.dumps, 0);
  harness_setenv("VKDS_DUMP_ALGORITHMS", "1");
  for (int round = 0; round < 2; ++round) /* the second call compiles nothing: no dump */
    ck_assert_vkds(vkds_transform(pol, &is, &os, "x * 3u + 1234567u"));
  ck_assert_uint_eq(out[4], 4 * 3 + 1234567);
  ck_assert_int_eq(dumps.dumps, 1);
  ck_assert(dumps.has_snippet && dumps.has_main);
  harness_setenv("VKDS_DUMP_ALGORITHMS", "0");
  ck_assert_vkds(vkds_transform(pol, &is, &os, "x * 5u"));
  ck_assert_int_eq(dumps.dumps, 1);
  close_ctx();
}
END_TEST

START_TEST(operator_that_does_not_compile) {
  open_ctx();
  float f[10] = {0}, g[10];
  vkds_seq fs = vkds_seq_host(f, 10, VKDS_F32), gs = vkds_seq_host(g, 10, VKDS_F32);
  memset(g, 0x5a, sizeof g);
  ck_assert_int_eq(vkds_transform(pol, &fs, &gs, "x * 2.0 +\n  sqrt(x, y)"), VKDS_ERROR_COMPILE);
  const char *m = vkds_last_error_message();
  ck_assert_msg(strstr(m, "sqrt(x, y)") && strstr(m, "line 2"), "message: %s", m);
  ck_assert_msg(!strstr(m, "vkds_elem"), "the message shows the generated kernel: %s", m);
  for (int i = 0; i < 10; ++i) ck_assert_uint_eq(((uint32_t *)g)[i], 0x5a5a5a5au); /* nothing written */
  float r;
  ck_assert_int_eq(vkds_reduce(pol, &fs, &(vkds_op){VKDS_OP_GLSL, "a +* b", "0.0"}, NULL, &r), VKDS_ERROR_COMPILE);
  ck_assert_msg(strstr(vkds_last_error_message(), "a +* b"), "%s", vkds_last_error_message());
  /* an operand missing at the snippet's end: glslang sees it at the next token, past the
   * snippet's one line */
  ck_assert_int_eq(vkds_transform(pol, &fs, &gs, "x *"), VKDS_ERROR_COMPILE);
  ck_assert_msg(strstr(vkds_last_error_message(), "\"x *\", at its end") &&
                    strstr(vkds_last_error_message(), "may be incomplete"),
                "%s", vkds_last_error_message());
  vkds_transform_op bad = {.glsl = "undefined_thing(x)"};
  vkds_seq tv = vkds_seq_transform(&fs, &bad);
  ck_assert_int_eq(vkds_reduce(pol, &tv, NULL, NULL, &r), VKDS_ERROR_COMPILE);
  ck_assert_msg(strstr(vkds_last_error_message(), "undefined_thing"), "%s", vkds_last_error_message());
  /* a long operator: the error and its line still fit the message (the whole 2 KB
   * snippet went first and cut them off; a views probe) */
  char lengthy[4096] = "x";
  for (int i = 0; i < 200; ++i) strcat(lengthy, " + 0.0 * x");
  strcat(lengthy, "\n+ undeclared_name");
  ck_assert_int_eq(vkds_transform(pol, &fs, &gs, lengthy), VKDS_ERROR_COMPILE);
  m = vkds_last_error_message();
  ck_assert_msg(strstr(m, "undeclared_name") && strstr(m, "line 2") && strstr(m, "undeclared identifier"), "%s", m);
  /* its last line quoted without a "..." after it (nothing follows it) */
  ck_assert_msg(strstr(m, "\"...+ undeclared_name\", line 2"), "%s", m);
  /* a field of a number: glslang speaks of swizzles; the message says numbers have no fields */
  ck_assert_int_eq(vkds_transform(pol, &fs, &gs, "x.p0 * 2.0"), VKDS_ERROR_COMPILE);
  ck_assert_msg(strstr(vkds_last_error_message(), "a number has no fields"), "%s", vkds_last_error_message());
  /* a blank operator, and a blank identity: named as empty (glslang spoke of a
   * constructor short of data) */
  ck_assert_int_eq(vkds_transform(pol, &fs, &gs, " \n"), VKDS_ERROR_COMPILE);
  ck_assert_msg(strstr(vkds_last_error_message(), "the operator is empty"), "%s", vkds_last_error_message());
  ck_assert_int_eq(vkds_reduce(pol, &fs, &(vkds_op){VKDS_OP_GLSL, "a + b", ""}, NULL, &r), VKDS_ERROR_COMPILE);
  ck_assert_msg(strstr(vkds_last_error_message(), "the reduction identity is empty"), "%s", vkds_last_error_message());
  for (int i = 0; i < 10; ++i) ck_assert_uint_eq(((uint32_t *)g)[i], 0x5a5a5a5au); /* nothing written */
  /* a // comment ending in a backslash is the operator's own: it compiles (it continued
   * onto the generated code after it) */
  ck_assert_vkds(vkds_transform(pol, &fs, &gs, "x * 2.0 // twice \\"));
  close_ctx();
  /* the application's logger gets the snippet's message once, not glslang's log of the
   * generated kernel before it */
  error_log errors = {0};
  vkds_context_info info = harness_info();
  info.log = log_errors, info.log_user = &errors;
  vkds_context *own;
  ck_assert_vkds(vkds_context_create(&info, &own));
  vkds_policy *own_pol;
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = {.context = own}}, &own_pol));
  ck_assert_int_eq(vkds_transform(own_pol, &fs, &gs, "x * 2.0 +\n  sqrt(x, y)"), VKDS_ERROR_COMPILE);
  ck_assert_int_eq(errors.count, 1);
  ck_assert_msg(strstr(errors.last, "sqrt(x, y)") && !strstr(errors.last, "vkds_elem"), "logged: %s", errors.last);
  vkds_policy_release(own_pol);
  vkds_context_destroy(own);
}
END_TEST

/* ---- bad input: a named error, nothing submitted, nothing written ---- */

START_TEST(bad_input) {
  open_ctx();
  uint32_t a[16] = {1, 2, 3}, b[16], c[8];
  memset(b, 0x77, sizeof b);
  vkds_seq as = vkds_seq_host(a, 16, VKDS_U32), bs = vkds_seq_host(b, 16, VKDS_U32), cs = vkds_seq_host(c, 8, VKDS_U32);
  vkds_policy_resource_stats before, after;
  ck_assert_vkds(vkds_policy_get_resource_stats(pol, 0, &before));
  uint32_t u;
  uint64_t n;
  bool yes;
  ck_assert_int_eq(vkds_copy(pol, &as, &cs), VKDS_ERROR_INVALID_ARGUMENT);             /* counts */
  /* counts near 2^64 (a discard view of them): a named error, not a division by zero or
   * a zero-size launch; the scratch queries saturate (found by a hostile-input probe) */
  vkds_seq endless = vkds_seq_discard(UINT64_MAX, VKDS_U32);
  ck_assert_int_eq(vkds_fill(pol, &endless, &(uint32_t){1}), VKDS_ERROR_UNSUPPORTED);
  ck_assert_uint_eq(vkds_algorithm_scratch_bytes(r0, UINT64_MAX), UINT64_MAX);
  ck_assert_uint_eq(vkds_sort_scratch_bytes(r0, 1ull << 60, VKDS_U64, VKDS_U64), UINT64_MAX);
  ck_assert_uint_eq(vkds_histogram_scratch_bytes(r0, 1ull << 62), UINT64_MAX);
  ck_assert_uint_eq(vkds_merge_sort_scratch_bytes(r0, 1ull << 62, VKDS_U64), UINT64_MAX);
  vkds_submission *sub = (vkds_submission *)&u; /* refused asynchronous calls leave nothing to release */
  ck_assert_int_eq(vkds_copy_async(pol, &as, &cs, &sub), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_null(sub);
  sub = (vkds_submission *)&u;
  ck_assert_int_eq(vkds_sort_async(pol, &as, (vkds_sort_order)5, &sub), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_null(sub);
  ck_assert_int_eq(vkds_transform2(pol, &as, &cs, &bs, "a + b"), VKDS_ERROR_INVALID_ARGUMENT);
  vkds_seq ro = vkds_seq_host_const(b, 16, VKDS_U32);
  ck_assert_int_eq(vkds_copy(pol, &as, &ro), VKDS_ERROR_INVALID_ARGUMENT);             /* read-only output */
  vkds_seq cnt = vkds_seq_counting(0, 16, VKDS_U32);
  ck_assert_int_eq(vkds_copy(pol, &as, &cnt), VKDS_ERROR_INVALID_ARGUMENT);            /* counting output */
  vkds_seq tv = vkds_seq_transform(&bs, &(vkds_transform_op){.glsl = "x"});
  ck_assert_int_eq(vkds_copy(pol, &as, &tv), VKDS_ERROR_INVALID_ARGUMENT);             /* transform output */
  vkds_seq shifted = vkds_seq_host(a + 1, 15, VKDS_U32), front = vkds_seq_host(a, 15, VKDS_U32);
  ck_assert_int_eq(vkds_copy(pol, &front, &shifted), VKDS_ERROR_INVALID_ARGUMENT);     /* overlap */
  ck_assert_int_eq(vkds_transform(pol, &front, &shifted, "x"), VKDS_ERROR_INVALID_ARGUMENT);
  /* the same bytes as a buffer the host sees and as a host sequence: a mapped buffer's
   * memory, and imported host memory, which a host sequence then uses in place (a copy
   * between the two succeeded with wrong elements; a probe) */
  vkds_buffer *mb;
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = 64, .memory = VKDS_MEMORY_MAPPED}, &mb));
  uint32_t *mp = vkds_buffer_map(mb);
  vkds_seq mfront = vkds_seq_mapped((vkds_view){mb, 0, 60}, VKDS_U32), hback = vkds_seq_host(mp + 1, 15, VKDS_U32);
  ck_assert_int_eq(vkds_copy(pol, &mfront, &hback), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_copy(pol, &hback, &mfront), VKDS_ERROR_INVALID_ARGUMENT);
  vkds_buffer_destroy(mb);
  uint64_t ia = vkds_import_alignment(r0);
  if (ia) {
    uint32_t *im = aligned_alloc(ia, ia);
    for (uint32_t i = 0; i < ia / 4; ++i) im[i] = i;
    vkds_buffer *ib;
    ck_assert_vkds(vkds_buffer_import_host(r0, im, ia, &ib));
    uint64_t k = ia / 4 - 1;
    vkds_seq bfront = vkds_seq_buffer((vkds_view){ib, 0, k * 4}, VKDS_U32), iback = vkds_seq_host(im + 1, k, VKDS_U32);
    ck_assert_int_eq(vkds_copy(pol, &bfront, &iback), VKDS_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(vkds_copy_if(pol, &iback, &bfront, "true", &n), VKDS_ERROR_INVALID_ARGUMENT);
    for (uint32_t i = 0; i < ia / 4; ++i) ck_assert_uint_eq(im[i], i); /* nothing written */
    vkds_buffer_destroy(ib);
    free(im);
  }
  ck_assert_int_eq(vkds_reduce(pol, &as, &(vkds_op){.kind = 42}, NULL, &u), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_reduce(pol, &as, &(vkds_op){VKDS_OP_GLSL, "a + b", NULL}, NULL, &u), VKDS_ERROR_INVALID_ARGUMENT);
  float f[4];
  vkds_seq fs = vkds_seq_host(f, 4, VKDS_F32);
  ck_assert_int_eq(vkds_reduce(pol, &fs, &(vkds_op){.kind = VKDS_OP_BIT_XOR}, NULL, f), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_reduce(NULL, &as, NULL, NULL, &u), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_reduce(pol, NULL, NULL, NULL, &u), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_reduce(pol, &as, NULL, NULL, NULL), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_count(pol, &as, NULL, &n), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_count_if(pol, &as, NULL, &n), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_any_of(pol, &as, "x > 1u", NULL), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_equal(pol, &as, NULL, &yes), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_fill(pol, &bs, NULL), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_transform(pol, &as, &bs, NULL), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_reduce_async(pol, &as, NULL, NULL, &u, NULL), VKDS_ERROR_INVALID_ARGUMENT);
  vkds_seq invalid = {0};
  ck_assert_int_eq(vkds_reduce(pol, &invalid, NULL, NULL, &u), VKDS_ERROR_INVALID_ARGUMENT);
  vkds_seq zp[2] = {as, bs};
  vkds_seq z = vkds_seq_zip(zp, 2);
  ck_assert_int_eq(vkds_reduce(pol, &z, NULL, NULL, &u), VKDS_ERROR_INVALID_ARGUMENT); /* a zip needs an operator */
  ck_assert_int_eq(vkds_copy(pol, &as, &z), VKDS_ERROR_INVALID_ARGUMENT);

  /* a sequence of another context */
  vkds_context *other = harness_context();
  vkds_buffer *ob;
  ck_assert_vkds(vkds_buffer_create(vkds_context_resource(other, 0), &(vkds_buffer_info){.size = 64}, &ob));
  vkds_seq os = vkds_seq_buffer(vkds_view_of(ob), VKDS_U32);
  ck_assert_int_eq(vkds_reduce(pol, &os, NULL, NULL, &u), VKDS_ERROR_WRONG_CONTEXT);
  ck_assert_int_eq(vkds_copy(pol, &as, &os), VKDS_ERROR_WRONG_CONTEXT);
  vkds_buffer_destroy(ob);
  vkds_context_destroy(other);

  for (int i = 0; i < 16; ++i) ck_assert_uint_eq(b[i], 0x77777777u); /* nothing written */
  ck_assert_vkds(vkds_policy_get_resource_stats(pol, 0, &after));
  ck_assert_uint_eq(after.selections, before.selections); /* nothing selected, so nothing submitted */
  close_ctx();
}
END_TEST

/* F64 on a device that has not enabled shaderFloat64: a named error. */
START_TEST(f64_without_the_feature) {
  app a = {.want = {.address = true, .int64 = true, .float64 = false}};
  app_create(&a);
  ctx = app_context(&a);
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = {.context = ctx}}, &pol));
  double d[4] = {1, 2, 3, 4}, r = -1;
  vkds_seq ds = vkds_seq_host(d, 4, VKDS_F64);
  ck_assert_int_eq(vkds_reduce(pol, &ds, NULL, NULL, &r), VKDS_ERROR_UNSUPPORTED);
  ck_assert_msg(strstr(vkds_last_error_message(), "shaderFloat64"), "%s", vkds_last_error_message());
  ck_assert(r == -1);
  int64_t i64[4] = {1, 2, 3, 4}, s;
  vkds_seq is = vkds_seq_host(i64, 4, VKDS_I64);
  ck_assert_vkds(vkds_reduce(pol, &is, NULL, NULL, &s)); /* int64 is there */
  ck_assert_int_eq(s, 10);
  close_ctx();
  app_use_and_destroy(&a);
}
END_TEST

/* ---- threads ---- */

typedef struct worker {
  vkds_policy *pol;
  int id;
  int failures;
} worker;

static void *work(void *arg) {
  worker *w = arg;
  enum { N = 5000 };
  uint32_t *a = malloc(N * 4), *b = malloc(N * 4);
  for (int round = 0; round < 20; ++round) {
    uint64_t sum = 0;
    for (uint32_t i = 0; i < N; ++i) a[i] = (uint32_t)(i * 31 + w->id * 7 + round), sum += a[i];
    vkds_seq as = vkds_seq_host(a, N, VKDS_U32), bs = vkds_seq_host(b, N, VKDS_U32);
    uint64_t got = 0;
    vkds_seq wide = vkds_seq_transform(&as, &(vkds_transform_op){.glsl = "uint64_t(x)", .type = VKDS_U64});
    vkds_submission *s = NULL;
    if (vkds_reduce_async(w->pol, &wide, NULL, NULL, &got, &s) != VKDS_SUCCESS) ++w->failures;
    /* the operator differs per thread: kernels are compiled and cached concurrently */
    char op[32];
    snprintf(op, sizeof op, "x + %uu", (unsigned)(w->id % 3));
    if (vkds_transform(w->pol, &as, &bs, op) != VKDS_SUCCESS) ++w->failures;
    for (uint32_t i = 0; i < N; ++i) w->failures += b[i] != a[i] + (uint32_t)(w->id % 3);
    if (vkds_submission_wait(s) != VKDS_SUCCESS || got != sum) ++w->failures;
    vkds_submission_release(s);
  }
  free(a), free(b);
  return NULL;
}

/* A thread that waits for everything over and over while the workers run: it finishes
 * their asynchronous calls' outputs while their own waits may do so too (each step runs
 * once; TSan sees the hand-over). */
static atomic_bool workers_done;
static void *wait_all_loop(void *arg) {
  int *failures = arg;
  while (!atomic_load(&workers_done))
    if (vkds_policy_wait_all(pol, UINT64_MAX) != VKDS_SUCCESS) ++*failures;
  return NULL;
}

/* Several threads through one policy over two VkDevices (dynamic load), asynchronous
 * and blocking calls mixed, and one more waiting for all of it. */
START_TEST(threads_share_a_policy) {
  vkds_context_info info = harness_info();
  info.devices_per_physical = 2;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_DYNAMIC_LOAD, .resources = {.context = ctx}}, &pol));
  enum { T = 4 };
  pthread_t th[T];
  worker w[T];
  for (int i = 0; i < T; ++i) {
    w[i] = (worker){.pol = pol, .id = i};
    ck_assert_int_eq(pthread_create(&th[i], NULL, work, &w[i]), 0);
  }
  pthread_t waiter;
  int wait_failures = 0;
  atomic_store(&workers_done, false);
  ck_assert_int_eq(pthread_create(&waiter, NULL, wait_all_loop, &wait_failures), 0);
  for (int i = 0; i < T; ++i) {
    pthread_join(th[i], NULL);
    ck_assert_int_eq(w[i].failures, 0);
  }
  atomic_store(&workers_done, true);
  pthread_join(waiter, NULL);
  ck_assert_int_eq(wait_failures, 0);
  close_ctx();
}
END_TEST

/* LP_NUM_THREADS sizes the reductions' first pass on CPU devices as lavapipe reads it
 * (Mesa: strtol, base 0, its default where there is no number): "abc" is unset and "0x2"
 * is 2, seen in the scratch a reduction asks for (a partial a group). atol took both as 0
 * (2 groups, where lavapipe ran on every core; a new-user probe). */
START_TEST(lp_num_threads_as_mesa_reads_it) {
  open_ctx();
  vkds_resource_info info;
  ck_assert_vkds(vkds_resource_get_info(r0, &info));
  if (info.device_type == VKDS_DEVICE_CPU) {
    const char *was = getenv("LP_NUM_THREADS");
    char *saved = was ? strdup(was) : NULL;
    enum { N = 1 << 24 };
    harness_setenv("LP_NUM_THREADS", NULL);
    uint64_t by_cores = vkds_reduce_scratch_bytes(r0, N);
    harness_setenv("LP_NUM_THREADS", "abc");
    ck_assert_uint_eq(vkds_reduce_scratch_bytes(r0, N), by_cores);
    harness_setenv("LP_NUM_THREADS", "2");
    uint64_t two = vkds_reduce_scratch_bytes(r0, N);
    harness_setenv("LP_NUM_THREADS", "0x2");
    ck_assert_uint_eq(vkds_reduce_scratch_bytes(r0, N), two);
    harness_setenv("LP_NUM_THREADS", "8");
    ck_assert_uint_eq(vkds_reduce_scratch_bytes(r0, N), two + 12 * 16); /* 16 groups, not 4 */
    harness_setenv("LP_NUM_THREADS", saved);
    free(saved);
  }
  close_ctx();
}
END_TEST

int main(void) {
  Suite *s = suite_create("algorithm");
  TCase *t = harness_tcase("reduce");
  int rules = (int)(sizeof ACCESS / sizeof *ACCESS);
  tcase_add_loop_test(t, reduce_every_type_and_operator, 0, rules);
  tcase_add_loop_test(t, reduce_powers_of_two, 0, rules);
  tcase_add_loop_test(t, count_minmax_quantifiers_equal_inner_product, 0, rules);
  tcase_add_loop_test(t, min_max_element_every_type, 0, rules);
  suite_add_tcase(s, t);
  t = harness_tcase("elementwise");
  tcase_add_loop_test(t, elementwise_tails_and_unaligned, 0, rules);
  tcase_add_loop_test(t, fill_copy_transform2_conversions_in_place, 0, rules);
  suite_add_tcase(s, t);
  t = harness_tcase("sequences");
  tcase_add_loop_test(t, every_sequence_kind, 0, rules);
  tcase_add_loop_test(t, user_type_written_over_host_keeps_what_it_does_not_store, 0, rules);
  tcase_add_loop_test(t, user_types_nest_sixteen_deep, 0, rules);
  tcase_add_loop_test(t, host_larger_than_staging_ring, 0, (int)(sizeof stream_modes / sizeof *stream_modes));
  tcase_add_test(t, earliest_finish_prefers_resident_data);
  tcase_add_test(t, leaf_larger_than_a_binding);
  tcase_add_test(t, kept_temporaries_are_bounded);
  tcase_add_test(t, lp_num_threads_as_mesa_reads_it);
  tcase_add_loop_test(t, zips_of_many_parts, 0, rules);
  tcase_add_test(t, recorded_families_with_spilled_arguments);
  suite_add_tcase(s, t);
  t = harness_tcase("forms");
  tcase_add_loop_test(t, asynchronous_form, 0, rules);
  tcase_add_loop_test(t, recording_form, 0, rules);
  tcase_add_loop_test(t, repeated_calls_replay_their_recording, 0, rules);
  tcase_add_test(t, queue_puts_the_leading_barrier_where_needed);
  tcase_add_test(t, policy_at_capacity_is_waited_out);
  tcase_add_test(t, wait_all_completes_async_outputs);
  tcase_add_test(t, later_async_host_writes_win);
  tcase_add_test(t, calls_under_the_callers_queue_lock);
  tcase_add_test(t, asynchronous_sequences_may_go_out_of_scope);
  suite_add_tcase(s, t);
  t = harness_tcase("kernels");
  tcase_add_test(t, second_call_and_second_process_compile_nothing);
  tcase_add_test(t, operator_that_does_not_compile);
  tcase_add_test(t, dumped_kernels_are_logged_once);
  suite_add_tcase(s, t);
  t = harness_tcase("threads");
  tcase_add_test(t, threads_share_a_policy);
  suite_add_tcase(s, t);
  t = harness_tcase("errors");
  tcase_add_test(t, bad_input);
  tcase_add_test(t, f64_without_the_feature);
  suite_add_tcase(s, t);
  return harness_run(s);
}
