/* tests/test_histogram.c: the histograms (vkds/algorithm.h, "histograms") on lavapipe,
 * validation on: even bins and bins between boundaries for every type against a host
 * reference (exact: integers by 128-bit arithmetic, floats by the documented edges), at
 * bin counts in shared memory and past it (global atomics); samples exactly on edges,
 * one below, below lower, at and above upper, NaN and infinities, -0; integer ranges up
 * to the whole type (the 96-bit products), power-of-two widths, float ranges where the
 * edges collapse (the estimate's search); 2^24 + 1 samples; every sequence kind in and
 * out (views, a second VkDevice, imported and staged host memory, ranges off 16-byte
 * alignment); the three forms; unsorted boundaries (a named error, nothing written,
 * the recorded form's status); bad input (a named error, nothing selected, nothing
 * written). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app_cmd.h"
#include "harness.h"
#include "values.h"

static vkds_context *ctx;
static vkds_resource *r0;
static vkds_policy *pol;

/* vkds_submission_release's error logs (the rest goes to the harness) */
static int release_errors, vkds_errors;
static void count_release_errors(void *user, vkds_log_level level, vkds_log_source source, const char *message) {
  (void)user;
  if (source == VKDS_LOG_SOURCE_VKDS && level >= VKDS_LOG_ERROR && strstr(message, "vkds_submission_release")) ++release_errors;
  if (source == VKDS_LOG_SOURCE_VKDS && level >= VKDS_LOG_ERROR) ++vkds_errors;
  harness_log(NULL, level, source, message);
}

static void open_ctx(void) {
  vkds_context_info info = harness_info();
  info.log = count_release_errors;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  r0 = vkds_context_resource(ctx, 0);
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = {.context = ctx}}, &pol));
}
static void close_ctx(void) { harness_close_fixed(&ctx, &pol); }

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) { return harness_xorshift(&rng_state); }



#define NONE UINT32_MAX

__extension__ typedef unsigned __int128 u128; /* the host's exact products */

/* ---- the host's bins ---- */

/* Float edges as algorithm.h defines them: e[0] = lower, e[k] = lower + T(k) * w, every
 * operation rounded to the type (volatile: no contraction, no wider evaluation). */
static float edge32(float lo, float w, uint32_t k) {
  if (!k) return lo;
  volatile float m = (float)k * w;
  volatile float e = lo + m;
  return e;
}
static double edge64(double lo, double w, uint32_t k) {
  if (!k) return lo;
  volatile double m = (double)k * w;
  volatile double e = lo + m;
  return e;
}

/* The even bin of element i (NONE: not counted). */
static uint32_t even_bin(vkds_type t, val lo, val hi, uint32_t B, const void *data, uint64_t i) {
  u128 d, r;
  switch (t) {
  case VKDS_I32: {
    int32_t x = ((const int32_t *)data)[i];
    if (!(x >= lo.i32 && x < hi.i32)) return NONE;
    d = (uint32_t)x - (uint32_t)lo.i32, r = (uint32_t)hi.i32 - (uint32_t)lo.i32;
    return (uint32_t)(d * B / r);
  }
  case VKDS_U32: {
    uint32_t x = ((const uint32_t *)data)[i];
    if (!(x >= lo.u32 && x < hi.u32)) return NONE;
    d = x - lo.u32, r = hi.u32 - lo.u32;
    return (uint32_t)(d * B / r);
  }
  case VKDS_I64: {
    int64_t x = ((const int64_t *)data)[i];
    if (!(x >= lo.i64 && x < hi.i64)) return NONE;
    d = (uint64_t)x - (uint64_t)lo.i64, r = (uint64_t)hi.i64 - (uint64_t)lo.i64;
    return (uint32_t)(d * B / r);
  }
  case VKDS_U64: {
    uint64_t x = ((const uint64_t *)data)[i];
    if (!(x >= lo.u64 && x < hi.u64)) return NONE;
    d = x - lo.u64, r = hi.u64 - lo.u64;
    return (uint32_t)(d * B / r);
  }
  case VKDS_F32: {
    float x = ((const float *)data)[i];
    if (!(x >= lo.f32 && x < hi.f32)) return NONE;
    volatile float span = hi.f32 - lo.f32;
    float w = span / (float)B;
    uint32_t k = 0;
    for (int s = 31; s >= 0; --s)
      if ((1ull << s) < (uint64_t)B - k && edge32(lo.f32, w, k + (1u << s)) <= x) k += 1u << s;
    return k;
  }
  default: {
    double x = ((const double *)data)[i];
    if (!(x >= lo.f64 && x < hi.f64)) return NONE;
    volatile double span = hi.f64 - lo.f64;
    double w = span / (double)B;
    uint32_t k = 0;
    for (int s = 31; s >= 0; --s)
      if ((1ull << s) < (uint64_t)B - k && edge64(lo.f64, w, k + (1u << s)) <= x) k += 1u << s;
    return k;
  }
  }
}

/* Element i as a double, for comparisons with boundaries (every value compared here is
 * exact in a double, or compared within its own type below). */
static int cmp(vkds_type t, const void *a, uint64_t i, const void *b, uint64_t j) {
  switch (t) {
  case VKDS_I32: return (((const int32_t *)a)[i] > ((const int32_t *)b)[j]) - (((const int32_t *)a)[i] < ((const int32_t *)b)[j]);
  case VKDS_U32: return (((const uint32_t *)a)[i] > ((const uint32_t *)b)[j]) - (((const uint32_t *)a)[i] < ((const uint32_t *)b)[j]);
  case VKDS_I64: return (((const int64_t *)a)[i] > ((const int64_t *)b)[j]) - (((const int64_t *)a)[i] < ((const int64_t *)b)[j]);
  case VKDS_U64: return (((const uint64_t *)a)[i] > ((const uint64_t *)b)[j]) - (((const uint64_t *)a)[i] < ((const uint64_t *)b)[j]);
  case VKDS_F32: {
    float x = ((const float *)a)[i], y = ((const float *)b)[j];
    return x < y ? -1 : x > y ? 1 : x == y ? 0 : 2; /* 2: unordered */
  }
  default: {
    double x = ((const double *)a)[i], y = ((const double *)b)[j];
    return x < y ? -1 : x > y ? 1 : x == y ? 0 : 2;
  }
  }
}

/* The bin between boundaries of element i: the last k < B with bounds[k] <= x, when
 * bounds[0] <= x < bounds[B]. */
static uint32_t range_bin(vkds_type t, const void *bounds, uint32_t B, const void *data, uint64_t i) {
  int c0 = cmp(t, data, i, bounds, 0), cB = cmp(t, data, i, bounds, B);
  if (!(c0 == 0 || c0 == 1) || cB != -1) return NONE;
  uint32_t k = 0;
  for (int s = 31; s >= 0; --s)
    if ((1ull << s) < (uint64_t)B - k) {
      int c = cmp(t, bounds, k + (1u << s), data, i);
      if (c == -1 || c == 0) k += 1u << s;
    }
  return k;
}

/* Checks counts[0..B) against the host's histogram and the canary after them. */
static void check_counts(const uint32_t *got, uint32_t B, const uint32_t *want, const char *what) {
  for (uint32_t k = 0; k < B; ++k)
    if (got[k] != want[k]) ck_abort_msg("%s: bin %u got %u want %u", what, k, got[k], want[k]);
  ck_assert_msg(got[B] == 0xc0ffee, "%s: written past the bins", what);
}

static void host_even(vkds_type t, val lo, val hi, uint32_t B, const void *data, uint64_t n, uint32_t *want) {
  memset(want, 0, (size_t)B * 4);
  for (uint64_t i = 0; i < n; ++i) {
    uint32_t k = even_bin(t, lo, hi, B, data, i);
    if (k != NONE) ++want[k];
  }
}
static void host_range(vkds_type t, const void *bounds, uint32_t B, const void *data, uint64_t n, uint32_t *want) {
  memset(want, 0, (size_t)B * 4);
  for (uint64_t i = 0; i < n; ++i) {
    uint32_t k = range_bin(t, bounds, B, data, i);
    if (k != NONE) ++want[k];
  }
}

/* ---- data: every kind of sample around the bins ---- */

static void put_num(vkds_type t, void *p, uint64_t i, val v) { memcpy((char *)p + i * size_of(t), v.b, size_of(t)); }

/* The first value of even bin k for integers (lo + ceil(k * r / B)), as 64 bits. */
static uint64_t int_edge(vkds_type t, val lo, val hi, uint32_t B, uint32_t k) {
  uint64_t l = t == VKDS_I32 ? (uint64_t)(int64_t)lo.i32 : t == VKDS_U32 ? lo.u32 : lo.u64;
  uint64_t h = t == VKDS_I32 ? (uint64_t)(int64_t)hi.i32 : t == VKDS_U32 ? hi.u32 : hi.u64;
  u128 r = (uint64_t)(h - l);
  if (t == VKDS_I32 || t == VKDS_U32) r &= 0xffffffffu;
  return l + (uint64_t)((r * k + B - 1) / B);
}

static val from_bits(vkds_type t, uint64_t b) {
  val v = {0};
  if (size_of(t) == 4) v.u32 = (uint32_t)b;
  else v.u64 = b;
  return v;
}

/* n samples for even bins [lo, hi) of B bins: random over the range and a quarter of it
 * either side (integers: anything, near the ends of the type), the bins' edges and the
 * values just below them, lo, hi, one below each; floats also NaN, infinities, -0. */
static void *even_data(vkds_type t, val lo, val hi, uint32_t B, uint64_t n) {
  void *p = malloc((n ? n : 1) * 8);
  bool fl = t == VKDS_F32 || t == VKDS_F64;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t r = rnd(), kind = r % 16;
    uint32_t k = (uint32_t)((r >> 8) % (B + 1));
    val v;
    if (fl) {
      double l = t == VKDS_F32 ? lo.f32 : lo.f64, h = t == VKDS_F32 ? hi.f32 : hi.f64;
      double x = l + (h - l) * ((double)(r >> 11) / 9007199254740992.0 * 1.5 - 0.25);
      if (t == VKDS_F32) {
        float w = (hi.f32 - lo.f32) / (float)B, e = edge32(lo.f32, w, k);
        float pick[] = {(float)x, e, nextafterf(e, -INFINITY), nextafterf(e, INFINITY), lo.f32, hi.f32,
                        nextafterf(hi.f32, -INFINITY), NAN, INFINITY, -INFINITY, -0.0f};
        v.f32 = kind < 6 ? pick[0] : pick[kind - 5 < 11 ? kind - 5 : 0];
      } else {
        double w = (hi.f64 - lo.f64) / (double)B, e = edge64(lo.f64, w, k);
        double pick[] = {x, e, nextafter(e, -INFINITY), nextafter(e, INFINITY), lo.f64, hi.f64,
                         nextafter(hi.f64, -INFINITY), NAN, INFINITY, -INFINITY, -0.0};
        v.f64 = kind < 6 ? pick[0] : pick[kind - 5 < 11 ? kind - 5 : 0];
      }
    } else {
      uint64_t e = int_edge(t, lo, hi, B, k);
      uint64_t l = size_of(t) == 4 ? (t == VKDS_I32 ? (uint64_t)(int64_t)lo.i32 : lo.u32) : lo.u64;
      uint64_t h = size_of(t) == 4 ? (t == VKDS_I32 ? (uint64_t)(int64_t)hi.i32 : hi.u32) : hi.u64;
      uint64_t span = h - l, pick[] = {l + rnd() % (span ? span : 1), e, e - 1, l, h, l - 1, h - 1, rnd()};
      v = from_bits(t, kind < 8 ? pick[0] : pick[kind - 8]);
    }
    put_num(t, p, i, v);
  }
  return p;
}

/* B + 1 sorted boundaries of type t: random steps (some equal), from about -B to B. */
static void *sorted_bounds(vkds_type t, uint32_t B) {
  void *p = malloc((B + 1) * 8ull);
  int64_t at = -(int64_t)B;
  if (t == VKDS_U32 || t == VKDS_U64) at = 0;
  for (uint32_t k = 0; k <= B; ++k) {
    val v;
    switch (t) {
    case VKDS_I32: v.i32 = (int32_t)at; break;
    case VKDS_U32: v.u32 = (uint32_t)at; break;
    case VKDS_F32: v.f32 = (float)at / 4; break;
    case VKDS_I64: v.i64 = at * 3000000000ll; break;
    case VKDS_U64: v.u64 = (uint64_t)at * 3000000000ull; break;
    default: v.f64 = (double)at / 4; break;
    }
    put_num(t, p, k, v);
    at += (int64_t)(rnd() % 4); /* 0: an empty bin */
  }
  return p;
}

/* Samples over the boundaries: random across them and beyond, the boundaries themselves
 * and their neighbours, NaN for floats. */
static void *range_data(vkds_type t, const void *bounds, uint32_t B, uint64_t n) {
  void *p = malloc((n ? n : 1) * 8);
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t r = rnd();
    uint32_t k = (uint32_t)(r % (B + 1));
    val b;
    memcpy(b.b, (const char *)bounds + (size_t)k * size_of(t), 8);
    val v = b;
    int64_t off = (int64_t)((r >> 20) % 5) - 2;
    switch (t) {
    case VKDS_I32: v.i32 = b.i32 + (int32_t)off; break;
    case VKDS_U32: v.u32 = b.u32 + (uint32_t)off; break;
    case VKDS_I64: v.i64 = b.i64 + off * (int64_t)((r >> 32) % 2000000000); break;
    case VKDS_U64: v.u64 = b.u64 + (uint64_t)off * ((r >> 32) % 2000000000); break;
    case VKDS_F32: v.f32 = (r >> 40) % 64 == 0 ? NAN : (r >> 36) % 3 == 0 ? nextafterf(b.f32, off < 0 ? -INFINITY : INFINITY) : b.f32 + (float)off / 8; break;
    default: v.f64 = (r >> 40) % 64 == 0 ? NAN : (r >> 36) % 3 == 0 ? nextafter(b.f64, off < 0 ? -INFINITY : INFINITY) : b.f64 + (double)off / 8; break;
    }
    put_num(t, p, i, v);
  }
  return p;
}

/* Even bounds that mean something for each type. */
static void even_bounds(vkds_type t, val *lo, val *hi) {
  switch (t) {
  case VKDS_I32: lo->i32 = -1000, hi->i32 = 3001; break;
  case VKDS_U32: lo->u32 = 7, hi->u32 = 100000; break;
  case VKDS_F32: lo->f32 = -1.5f, hi->f32 = 2.25f; break;
  case VKDS_I64: lo->i64 = -5000000000ll, hi->i64 = 7000000001ll; break;
  case VKDS_U64: lo->u64 = 1ull << 40, hi->u64 = (1ull << 40) + 123456789; break;
  default: lo->f64 = -1e10, hi->f64 = 3.5e10; break;
  }
}

/* ---- every type, at bin counts in shared memory and past it ---- */

START_TEST(every_type) {
  vkds_type t = TYPES[_i];
  open_ctx();
  const uint64_t sizes[] = {0, 1, 7, 4097, 100003};
  const uint32_t bins4[] = {1, 3, 256, 1000, 10000}; /* 10000: past shared memory */
  const uint32_t bins8[] = {1, 256, 10000};
  const uint32_t *bins = size_of(t) == 4 ? bins4 : bins8;
  int nbins = size_of(t) == 4 ? 5 : 3;
  uint32_t *got = malloc(10001 * 4), *want = malloc(10000 * 4);
  val lo = {0}, hi = {0};
  even_bounds(t, &lo, &hi);
  for (int bi = 0; bi < nbins; ++bi) {
    uint32_t B = bins[bi];
    void *bounds = sorted_bounds(t, B);
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; ++si) {
      uint64_t n = sizes[si];
      if (B >= 1000 && n && n < 100003) continue; /* the big bin counts at the big size */
      char what[96];
      /* even */
      void *data = even_data(t, lo, hi, B, n);
      for (uint32_t k = 0; k < B; ++k) got[k] = 0x55555555u;
      got[B] = 0xc0ffee;
      vkds_seq in = vkds_seq_host_const(data, n, t), cs = vkds_seq_host(got, B, VKDS_U32);
      ck_assert_vkds(vkds_histogram_even(pol, &in, lo.b, hi.b, &cs));
      host_even(t, lo, hi, B, data, n, want);
      snprintf(what, sizeof what, "even %s, %u bins, n %llu", type_name(t), B, (unsigned long long)n);
      check_counts(got, B, want, what);
      free(data);
      /* between boundaries */
      data = range_data(t, bounds, B, n);
      for (uint32_t k = 0; k < B; ++k) got[k] = 0x55555555u;
      vkds_seq bs = vkds_seq_host_const(bounds, B + 1, t);
      in = vkds_seq_host_const(data, n, t);
      ck_assert_vkds(vkds_histogram_range(pol, &in, &bs, &cs));
      host_range(t, bounds, B, data, n, want);
      snprintf(what, sizeof what, "range %s, %u bins, n %llu", type_name(t), B, (unsigned long long)n);
      check_counts(got, B, want, what);
      free(data);
    }
    free(bounds);
  }
  free(got), free(want);
  close_ctx();
}
END_TEST

/* ---- exactness at the ends: whole integer ranges, power-of-two widths, collapsed edges ---- */

typedef struct even_case {
  vkds_type t;
  val lo, hi;
  uint32_t B;
  const char *name;
} even_case;

static void run_even_case(const even_case *c, uint64_t n) {
  void *data = even_data(c->t, c->lo, c->hi, c->B, n);
  uint32_t *got = malloc(((size_t)c->B + 1) * 4), *want = malloc((size_t)c->B * 4);
  got[c->B] = 0xc0ffee;
  vkds_seq in = vkds_seq_host_const(data, n, c->t), cs = vkds_seq_host(got, c->B, VKDS_U32);
  ck_assert_vkds(vkds_histogram_even(pol, &in, c->lo.b, c->hi.b, &cs));
  host_even(c->t, c->lo, c->hi, c->B, data, n, want);
  check_counts(got, c->B, want, c->name);
  free(data), free(got), free(want);
}

START_TEST(edges_and_ranges) {
  open_ctx();
  even_case cases[] = {
      {VKDS_I32, {.i32 = INT32_MIN}, {.i32 = INT32_MAX}, 7, "i32 whole range, 7 bins"},
      {VKDS_I32, {.i32 = INT32_MIN}, {.i32 = INT32_MAX}, 1000, "i32 whole range, 1000 bins"},
      {VKDS_U32, {.u32 = 0}, {.u32 = UINT32_MAX}, 3, "u32 whole range, 3 bins"},
      {VKDS_U32, {.u32 = 1024}, {.u32 = 1024 + 4096}, 16, "u32 power-of-two width 256"},
      {VKDS_U32, {.u32 = 0}, {.u32 = 256}, 256, "u32 width 1"},
      {VKDS_U32, {.u32 = 5}, {.u32 = 8}, 256, "u32 more bins than values"},
      /* (fewer bins than values, not a power-of-two width: histogram.glsl's multiply-high) */
      {VKDS_U32, {.u32 = 0}, {.u32 = 1001}, 1000, "u32 one bin fewer than values"},
      {VKDS_U32, {.u32 = 3}, {.u32 = UINT32_MAX}, 65535, "u32 65,535 bins over nearly all"},
      {VKDS_U32, {.u32 = 0}, {.u32 = 2147483649u}, 2, "u32 two bins, odd range past 2^31"},
      {VKDS_I32, {.i32 = -1000}, {.i32 = 999}, 1, "i32 one bin"},
      {VKDS_I32, {.i32 = -7}, {.i32 = 2000000000}, 999983, "i32 999,983 bins"},
      {VKDS_I64, {.i64 = INT64_MIN}, {.i64 = INT64_MAX}, 5, "i64 whole range, 5 bins"},
      {VKDS_I64, {.i64 = -3}, {.i64 = 1ll << 62}, 1000, "i64 wide range, 1000 bins"},
      {VKDS_U64, {.u64 = 0}, {.u64 = UINT64_MAX}, 255, "u64 whole range, 255 bins"},
      {VKDS_U64, {.u64 = 12345}, {.u64 = 12345 + (3ull << 33)}, 3, "u64 power-of-two width 2^33"},
      {VKDS_U64, {.u64 = 100}, {.u64 = 100 + 4000000000ull}, 9999, "u64 range under 2^32"},
      {VKDS_F32, {.f32 = 0}, {.f32 = 1}, 4, "f32 [0, 1) in quarters"},
      {VKDS_F32, {.f32 = 0}, {.f32 = 1}, 10, "f32 [0, 1) in tenths"},
      {VKDS_F32, {.f32 = -1}, {.f32 = 1}, 256, "f32 [-1, 1), 256 bins"},
      {VKDS_F32, {.f32 = 1e6f}, {.f32 = 1e6f + 1}, 100, "f32 edges collapsed (width under an ulp)"},
      /* (exact edges: histogram.glsl's one-edge way; the last one, too far from 0 in
       * widths, the general way) */
      {VKDS_F32, {.f32 = -3}, {.f32 = 5}, 8, "f32 width 1 from -3"},
      {VKDS_F32, {.f32 = 1024}, {.f32 = 1536}, 4096, "f32 width 1/8 from 1024"},
      {VKDS_F32, {.f32 = -0.5f}, {.f32 = 0.5f}, 1, "f32 one bin"},
      {VKDS_F32, {.f32 = 0x1p30f}, {.f32 = 0x1p30f + 0x1p10f}, 16, "f32 width 64 at 2^30"},
      {VKDS_F32, {.f32 = -FLT_MAX / 2}, {.f32 = FLT_MAX / 2}, 77, "f32 huge range"},
      {VKDS_F32, {.f32 = 0}, {.f32 = 1e-30f}, 1000, "f32 tiny range"},
      {VKDS_F64, {.f64 = 1e15}, {.f64 = 1e15 + 1}, 64, "f64 edges collapsed"},
      {VKDS_F64, {.f64 = -0.1}, {.f64 = 0.7}, 7, "f64 [-0.1, 0.7) in sevenths"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) run_even_case(&cases[i], 20011);

  /* by hand: the f32 rule on [0, 1) in tenths, and what is not counted */
  float x[] = {0.0f, -0.0f, 0.1f, nextafterf(0.1f, 0), 0.3f, 0.7f, 0.9f, 0.9999999f, 1.0f, -1e-30f, NAN, -NAN, INFINITY,
               -INFINITY, 0.5f};
  uint32_t got[11];
  got[10] = 0xc0ffee;
  vkds_seq xs = vkds_seq_host(x, sizeof x / sizeof *x, VKDS_F32), cs = vkds_seq_host(got, 10, VKDS_U32);
  float lo = 0, hi = 1;
  ck_assert_vkds(vkds_histogram_even(pol, &xs, &lo, &hi, &cs));
  /* edges k * 0.1f: 3 * 0.1f and 7 * 0.1f round to 0.3f and 0.7f (bins 3 and 7), but
   * 9 * 0.1f is 0.90000004f, above 0.9f (bin 8); -0 is in bin 0; 1, NaN, infinities and
   * -1e-30 nowhere */
  uint32_t want[10] = {3, 1, 0, 1, 0, 1, 0, 1, 1, 1};
  ck_assert(edge32(0, 0.1f, 3) == 0.3f && edge32(0, 0.1f, 7) == 0.7f && edge32(0, 0.1f, 9) > 0.9f);
  ck_assert_msg(memcmp(got, want, sizeof want) == 0, "by hand: %u %u %u %u %u %u %u %u %u %u", got[0], got[1], got[2],
                got[3], got[4], got[5], got[6], got[7], got[8], got[9]);
  ck_assert_uint_eq(got[10], 0xc0ffee);
  /* integers by hand: [-10, 10) in 3 bins: edges -10, -10 + ceil(20 / 3) = -3, and 4 */
  int32_t iv[] = {-11, -10, -4, -3, 3, 4, 9, 10, INT32_MIN, INT32_MAX};
  uint32_t ig[3];
  vkds_seq is = vkds_seq_host(iv, 10, VKDS_I32), ics = vkds_seq_host(ig, 3, VKDS_U32);
  int32_t ilo = -10, ihi = 10;
  ck_assert_vkds(vkds_histogram_even(pol, &is, &ilo, &ihi, &ics));
  for (int k = 0; k < 3; ++k) ck_assert_uint_eq(ig[k], 2);
  close_ctx();
}
END_TEST

/* ---- host samples staged whole, into temporaries the context keeps ---- */

/* A context of `info` (failing the test otherwise) and a fixed policy on it. */
static vkds_policy *fixed_policy(vkds_context_info info, vkds_context **out) {
  vkds_policy *p;
  ck_assert_vkds(vkds_context_create(&info, out));
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = {.context = *out}}, &p));
  return p;
}

/* Histograms do not stream: host samples are staged whole into a temporary the context
 * keeps for the next call, made once, not per call (on an H200 a 1 GiB one took 40 ms to
 * make and destroy, bench/RESULTS.md); a call of a size in the same class takes it. */
START_TEST(host_samples_are_staged_in_kept_buffers) {
  open_ctx();
  vkds_memory_stats before, once, twice;
  uint32_t *many = malloc(100000 * sizeof *many), few[4];
  for (uint32_t i = 0; i < 100000; ++i) many[i] = i;
  vkds_seq ms = vkds_seq_host(many, 100000, VKDS_U32), fs = vkds_seq_host(few, 4, VKDS_U32);
  uint32_t mlo = 0, mhi = 100000, tiny[3] = {1, 2, 3};
  /* (a first call makes the call's own scratch, kept too: the count below is of the
   * staged samples' buffer alone) */
  vkds_seq ts = vkds_seq_host(tiny, 3, VKDS_U32);
  ck_assert_vkds(vkds_histogram_even(pol, &ts, &mlo, &mhi, &fs));
  ck_assert_vkds(vkds_memory_get_stats(r0, &before));
  ck_assert_vkds(vkds_histogram_even(pol, &ms, &mlo, &mhi, &fs));
  ck_assert_vkds(vkds_memory_get_stats(r0, &once));
  ms.count = 99000;
  ck_assert_vkds(vkds_histogram_even(pol, &ms, &mlo, &mhi, &fs));
  ck_assert_vkds(vkds_memory_get_stats(r0, &twice));
  ck_assert_uint_gt(once.buffers, before.buffers);
  ck_assert_uint_eq(twice.buffers, once.buffers);
  ck_assert_uint_eq(twice.allocated_bytes, once.allocated_bytes);
  ck_assert_uint_eq(few[0], 25000);
  ck_assert_uint_eq(few[3], 24000);
  /* ... also one as large as the kept temporaries' budget (keep_bytes: 1 MiB here),
   * which the small buffers the same call puts after it pushed out (spares.c) */
  vkds_context_info small = harness_info();
  small.keep_bytes = 1 << 20;
  vkds_context *sctx;
  vkds_policy *spol = fixed_policy(small, &sctx);
  ms.count = 65536; /* 256 KiB: a quarter of the budget first, then the whole of it */
  ck_assert_vkds(vkds_histogram_even(spol, &ms, &mlo, &mhi, &fs));
  uint32_t *budget_sized = calloc(1u << 18, sizeof *budget_sized);
  vkds_seq bs = vkds_seq_host(budget_sized, 1u << 18, VKDS_U32);
  ck_assert_vkds(vkds_histogram_even(spol, &bs, &mlo, &mhi, &fs));
  ck_assert_vkds(vkds_memory_get_stats(vkds_context_resource(sctx, 0), &once));
  ck_assert_vkds(vkds_histogram_even(spol, &bs, &mlo, &mhi, &fs));
  ck_assert_vkds(vkds_memory_get_stats(vkds_context_resource(sctx, 0), &twice));
  ck_assert_uint_ge(once.used_bytes, 1u << 20); /* kept */
  ck_assert_uint_eq(twice.allocated_bytes, once.allocated_bytes);
  ck_assert_uint_eq(few[0], 1u << 18);
  /* the default, eight staging rings (2 x 64 KiB here): 1 MiB, the same */
  vkds_policy_release(spol);
  vkds_context_destroy(sctx);
  small.keep_bytes = 0, small.staging_chunks = 2, small.staging_chunk_bytes = 64 << 10;
  spol = fixed_policy(small, &sctx);
  ck_assert_vkds(vkds_histogram_even(spol, &bs, &mlo, &mhi, &fs));
  ck_assert_vkds(vkds_memory_get_stats(vkds_context_resource(sctx, 0), &once));
  ck_assert_uint_ge(once.used_bytes, 1u << 20);
  /* vkds_context_trim gives every kept buffer back, and the next call makes what it needs */
  uint64_t given = vkds_context_trim(sctx);
  ck_assert_uint_ge(given, 1u << 20);
  ck_assert_vkds(vkds_memory_get_stats(vkds_context_resource(sctx, 0), &twice));
  ck_assert_uint_eq(twice.used_bytes, once.used_bytes - given);
  ck_assert_uint_eq(vkds_context_trim(sctx), 0);
  ck_assert_uint_eq(vkds_context_trim(NULL), 0);
  budget_sized[7] = 80000; /* bin 3 of [0, 100000) in 4 */
  ck_assert_vkds(vkds_histogram_even(spol, &bs, &mlo, &mhi, &fs));
  ck_assert_uint_eq(few[0], (1u << 18) - 1);
  ck_assert_uint_eq(few[3], 1);
  /* past 2^40: refused */
  small.keep_bytes = (1ull << 40) + 1;
  vkds_context *refused = NULL;
  ck_assert_int_eq(vkds_context_create(&small, &refused), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_null(refused);
  ck_assert_msg(strstr(vkds_last_error_message(), "keep_bytes"), "%s", vkds_last_error_message());
  free(budget_sized);
  vkds_policy_release(spol);
  vkds_context_destroy(sctx);
  free(many);
  close_ctx();
}
END_TEST

/* ---- 2^24 + 1 samples ---- */

START_TEST(big) {
  open_ctx();
  const uint64_t n = (1ull << harness_top_log2(24)) + 1;
  uint32_t *a = malloc(n * 4), got[1001], want[1000];
  for (uint64_t i = 0; i < n; ++i) a[i] = (uint32_t)rnd();
  vkds_buffer *in, *out;
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = n * 4}, &in));
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = 4096}, &out));
  ck_assert_vkds(vkds_upload(r0, vkds_view_of(in), a, n * 4));
  /* the benchmark's shape: the top 8 bits through a transform view, 256 bins of width 1,
   * counted straight into a device buffer */
  vkds_seq is = vkds_seq_buffer(vkds_view_of(in), VKDS_U32);
  vkds_seq top = vkds_seq_transform(&is, &(vkds_transform_op){.glsl = "x >> 24u"});
  vkds_seq os = vkds_seq_buffer((vkds_view){out, 0, 256 * 4}, VKDS_U32);
  uint32_t lo = 0, hi = 256;
  ck_assert_vkds(vkds_histogram_even(pol, &top, &lo, &hi, &os));
  ck_assert_vkds(vkds_download(r0, got, (vkds_view){out, 0, 256 * 4}, 256 * 4));
  memset(want, 0, sizeof want);
  for (uint64_t i = 0; i < n; ++i) ++want[a[i] >> 24];
  got[256] = 0xc0ffee;
  check_counts(got, 256, want, "2^24 + 1 (or VKDS_TEST_TOP_LOG2), top 8 bits");
  /* 1000 bins over the whole u32 range (the estimate and its step) */
  os = vkds_seq_buffer((vkds_view){out, 0, 1000 * 4}, VKDS_U32);
  uint32_t hi2 = UINT32_MAX;
  ck_assert_vkds(vkds_histogram_even(pol, &is, &lo, &hi2, &os));
  ck_assert_vkds(vkds_download(r0, got, (vkds_view){out, 0, 1000 * 4}, 1000 * 4));
  host_even(VKDS_U32, (val){.u32 = 0}, (val){.u32 = UINT32_MAX}, 1000, a, n, want);
  got[1000] = 0xc0ffee;
  check_counts(got, 1000, want, "2^24 + 1 (or VKDS_TEST_TOP_LOG2), 1000 bins");
  vkds_buffer_destroy(in), vkds_buffer_destroy(out);
  free(a);
  close_ctx();
}
END_TEST

/* ---- every sequence kind, in and out ---- */

START_TEST(every_sequence_kind) {
  vkds_context_info info = harness_info();
  info.devices_per_physical = 2;
  info.staging_chunks = 2;
  info.staging_chunk_bytes = 256 << 10; /* host data larger than the staging ring */
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  r0 = vkds_context_resource(ctx, 0);
  vkds_resource *r1 = harness_device_resource(ctx, 1);
  ck_assert_ptr_nonnull(r1);
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = {.context = ctx}}, &pol));
  enum { N = 9003, B = 50, BIG = 3 << 20 };
  int32_t *host = malloc(N * 4), *rev = malloc(N * 4);
  uint32_t *map = malloc(N * 4), got[B + 1], want[B], back[B];
  for (uint32_t i = 0; i < N; ++i) host[i] = (int32_t)(rnd() % 1200) - 100, map[i] = (uint32_t)((i * 7ull) % N);
  for (uint32_t i = 0; i < N; ++i) rev[i] = host[N - 1 - i];
  int32_t lo = 0, hi = 1000;
  val vlo = {.i32 = lo}, vhi = {.i32 = hi};
  host_even(VKDS_I32, vlo, vhi, B, host, N, want);
  vkds_buffer *dev, *mapped, *other, *mapb, *devout, *otherout;
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = N * 4 + 16}, &dev));
  ck_assert_vkds(vkds_upload(r0, vkds_view_of(dev), host, N * 4));
  ck_assert_vkds(vkds_upload(r0, (vkds_view){dev, N * 4, 16}, host, 16));
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = N * 4, .memory = VKDS_MEMORY_MAPPED}, &mapped));
  memcpy(vkds_buffer_map(mapped), host, N * 4);
  ck_assert_vkds(vkds_buffer_create(r1, &(vkds_buffer_info){.size = N * 4}, &other)); /* the second VkDevice */
  ck_assert_vkds(vkds_upload(r1, vkds_view_of(other), host, N * 4));
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = N * 4}, &mapb));
  ck_assert_vkds(vkds_upload(r0, vkds_view_of(mapb), map, N * 4));
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = 4096}, &devout));
  ck_assert_vkds(vkds_buffer_create(r1, &(vkds_buffer_info){.size = 4096}, &otherout));
  uint64_t align = vkds_import_alignment(r0);
  void *imported_mem = NULL;
  vkds_buffer *imported = NULL;
  if (align) {
    uint64_t bytes = (N * 4 + align - 1) / align * align;
    ck_assert_int_eq(posix_memalign(&imported_mem, align, bytes), 0);
    memcpy(imported_mem, host, N * 4);
    ck_assert_vkds(vkds_buffer_import_host(r0, imported_mem, bytes, &imported));
  }
  vkds_seq outs = vkds_seq_host(got, B, VKDS_U32);
  got[B] = 0xc0ffee;

  /* inputs (the counts a host sequence) */
  vkds_seq ins[10];
  const char *names[10];
  int n = 0;
  ins[n] = vkds_seq_buffer((vkds_view){dev, 0, N * 4}, VKDS_I32), names[n++] = "buffer";
  ins[n] = vkds_seq_mapped(vkds_view_of(mapped), VKDS_I32), names[n++] = "mapped";
  ins[n] = vkds_seq_host(host, N, VKDS_I32), names[n++] = "host";
  ins[n] = vkds_seq_host_const(host, N, VKDS_I32), names[n++] = "host const";
  ins[n] = vkds_seq_buffer(vkds_view_of(other), VKDS_I32), names[n++] = "buffer of device 1";
  vkds_seq revbase = vkds_seq_host(rev, N, VKDS_I32);
  ins[n] = vkds_seq_reverse(&revbase), names[n++] = "reverse";
  if (imported) ins[n] = vkds_seq_host(imported_mem, N, VKDS_I32), names[n++] = "imported host";
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < B; ++k) got[k] = 0x55555555u;
    ck_assert_vkds(vkds_histogram_even(pol, &ins[i], &lo, &hi, &outs));
    check_counts(got, B, want, names[i]);
  }
  /* off 16-byte alignment: one element in, and a count that is no multiple of 4 */
  vkds_seq skew = vkds_seq_buffer((vkds_view){dev, 4, (N - 2) * 4}, VKDS_I32);
  ck_assert_vkds(vkds_histogram_even(pol, &skew, &lo, &hi, &outs));
  host_even(VKDS_I32, vlo, vhi, B, host + 1, N - 2, back);
  check_counts(got, B, back, "unaligned range");
  /* a permutation (every 7th element in turn: the same multiset), a transform view of
   * another type, a counting sequence */
  vkds_seq src = ins[0], mp = vkds_seq_buffer(vkds_view_of(mapb), VKDS_U32);
  vkds_seq perm = vkds_seq_permutation(&src, &mp);
  ck_assert_vkds(vkds_histogram_even(pol, &perm, &lo, &hi, &outs));
  check_counts(got, B, want, "permutation");
  vkds_seq tv = vkds_seq_transform(&src, &(vkds_transform_op){.glsl = "float(x) * 0.5", .type = VKDS_F32});
  float flo = 0, fhi = 500;
  ck_assert_vkds(vkds_histogram_even(pol, &tv, &flo, &fhi, &outs));
  check_counts(got, B, want, "transform view to f32"); /* x / 2 in [0, 500) in 50 bins: the same bins */
  vkds_seq cnt = vkds_seq_counting(-5, 1005, VKDS_I32);
  ck_assert_vkds(vkds_histogram_even(pol, &cnt, &lo, &hi, &outs));
  for (int k = 0; k < B; ++k) ck_assert_uint_eq(got[k], 20);

  /* outputs: device buffer, mapped, reversed, permuted (not the counters themselves),
   * another device's buffer, discard */
  vkds_seq hs = vkds_seq_host_const(host, N, VKDS_I32);
  vkds_seq dout = vkds_seq_buffer((vkds_view){devout, 64, B * 4}, VKDS_U32);
  ck_assert_vkds(vkds_histogram_even(pol, &hs, &lo, &hi, &dout));
  ck_assert_vkds(vkds_download(r0, got, (vkds_view){devout, 64, B * 4}, B * 4));
  check_counts(got, B, want, "into a buffer");
  vkds_buffer *mout;
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = (B + 1) * 4, .memory = VKDS_MEMORY_MAPPED}, &mout));
  ((uint32_t *)vkds_buffer_map(mout))[B] = 0xc0ffee;
  vkds_seq ms = vkds_seq_mapped((vkds_view){mout, 0, B * 4}, VKDS_U32);
  ck_assert_vkds(vkds_histogram_even(pol, &hs, &lo, &hi, &ms));
  check_counts(vkds_buffer_map(mout), B, want, "into mapped memory");
  vkds_seq rout = vkds_seq_reverse(&dout);
  ck_assert_vkds(vkds_histogram_even(pol, &hs, &lo, &hi, &rout));
  ck_assert_vkds(vkds_download(r0, back, (vkds_view){devout, 64, B * 4}, B * 4));
  for (int k = 0; k < B; ++k) got[k] = back[B - 1 - k];
  check_counts(got, B, want, "into a reverse view");
  uint32_t pmap[B];
  for (int k = 0; k < B; ++k) pmap[k] = (uint32_t)((k * 3) % B);
  vkds_seq pms = vkds_seq_host(pmap, B, VKDS_U32), sc = vkds_seq_permutation(&outs, &pms);
  ck_assert_vkds(vkds_histogram_even(pol, &hs, &lo, &hi, &sc));
  for (int k = 0; k < B; ++k) back[k] = got[pmap[k]];
  for (int k = 0; k < B; ++k) ck_assert_uint_eq(back[k], want[k]);
  vkds_seq oout = vkds_seq_buffer((vkds_view){otherout, 0, B * 4}, VKDS_U32);
  ck_assert_vkds(vkds_histogram_even(pol, &hs, &lo, &hi, &oout));
  ck_assert_vkds(vkds_download(r1, got, (vkds_view){otherout, 0, B * 4}, B * 4));
  got[B] = 0xc0ffee;
  check_counts(got, B, want, "into a buffer of device 1");
  vkds_seq sink = vkds_seq_discard(B, VKDS_U32);
  ck_assert_vkds(vkds_histogram_even(pol, &hs, &lo, &hi, &sink));

  /* boundaries as views: a counting sequence, the reverse of descending ones, another
   * device's buffer; the counts reversed */
  uint32_t wr[B];
  int32_t desc[B + 1];
  for (int k = 0; k <= B; ++k) desc[k] = 20 * (B - k);
  vkds_seq cb = vkds_seq_counting(0, B + 1, VKDS_I32), db = vkds_seq_host(desc, B + 1, VKDS_I32);
  vkds_seq rb = vkds_seq_reverse(&db);
  int32_t *ident = malloc((B + 1) * 4);
  for (int k = 0; k <= B; ++k) ident[k] = k;
  host_range(VKDS_I32, ident, B, host, N, wr);
  ck_assert_vkds(vkds_histogram_range(pol, &hs, &cb, &outs));
  check_counts(got, B, wr, "counting boundaries");
  ck_assert_vkds(vkds_histogram_range(pol, &hs, &rb, &outs));
  check_counts(got, B, want, "reversed boundaries"); /* 0, 20, ..., 1000: the even bins */
  vkds_buffer *ob;
  ck_assert_vkds(vkds_buffer_create(r1, &(vkds_buffer_info){.size = (B + 1) * 4}, &ob));
  for (int k = 0; k <= B; ++k) ident[k] = 20 * k;
  ck_assert_vkds(vkds_upload(r1, vkds_view_of(ob), ident, (B + 1) * 4));
  vkds_seq obs = vkds_seq_buffer(vkds_view_of(ob), VKDS_I32);
  vkds_seq rhs = vkds_seq_reverse(&outs);
  ck_assert_vkds(vkds_histogram_range(pol, &ins[4], &obs, &rhs));
  for (int k = 0; k < B; ++k) ck_assert_uint_eq(got[B - 1 - k], want[k]);

  /* host samples past the staging ring (staged whole through it) */
  float *fbig = malloc(BIG * 4);
  for (uint32_t i = 0; i < BIG; ++i) fbig[i] = (float)(rnd() % 1000000) / 1000.0f;
  vkds_seq fbs = vkds_seq_host(fbig, BIG, VKDS_F32);
  flo = 100, fhi = 900;
  ck_assert_vkds(vkds_histogram_even(pol, &fbs, &flo, &fhi, &outs));
  host_even(VKDS_F32, (val){.f32 = flo}, (val){.f32 = fhi}, B, fbig, BIG, want);
  check_counts(got, B, want, "host data past the staging ring");

  free(fbig), free(ident);
  vkds_buffer_destroy(dev), vkds_buffer_destroy(mapped), vkds_buffer_destroy(other), vkds_buffer_destroy(mapb);
  vkds_buffer_destroy(devout), vkds_buffer_destroy(otherout), vkds_buffer_destroy(mout), vkds_buffer_destroy(ob);
  vkds_buffer_destroy(imported);
  free(imported_mem), free(host), free(rev), free(map);
  close_ctx();
}
END_TEST

/* ---- the forms ---- */

START_TEST(forms) {
  open_ctx();
  enum { N = 30011, B = 100 };
  double *a = malloc(N * 8);
  for (int i = 0; i < N; ++i) a[i] = (double)(rnd() % 20000) / 100.0 - 50.0;
  double lo = 0, hi = 100;
  uint32_t want[B], got[B + 1], got2[B + 1];
  host_even(VKDS_F64, (val){.f64 = lo}, (val){.f64 = hi}, B, a, N, want);
  double *bounds = malloc((B + 1) * 8);
  for (int k = 0; k <= B; ++k) bounds[k] = k;
  /* asynchronous: counts there once a poll says done; one released unwaited */
  vkds_seq as = vkds_seq_host(a, N, VKDS_F64), cs = vkds_seq_host(got, B, VKDS_U32), cs2 = vkds_seq_host(got2, B, VKDS_U32);
  vkds_seq bs = vkds_seq_host(bounds, B + 1, VKDS_F64);
  got[B] = got2[B] = 0xc0ffee;
  vkds_submission *s1, *s2;
  ck_assert_vkds(vkds_histogram_even_async(pol, &as, &lo, &hi, &cs, &s1));
  ck_assert_vkds(vkds_histogram_range_async(pol, &as, &bs, &cs2, &s2));
  vkds_result r;
  while ((r = vkds_submission_poll(s1)) == VKDS_ERROR_WOULD_BLOCK) usleep(100);
  ck_assert_vkds(r);
  vkds_submission_release(s1);
  check_counts(got, B, want, "async even");
  vkds_submission_release(s2); /* unwaited: the release finishes it */
  check_counts(got2, B, want, "async range");

  /* recorded: even bins into a buffer, boundaries with a status, an unsorted call that
   * writes only its status, in one command buffer with one scratch */
  vkds_buffer *in, *bb, *out, *out2, *scratch, *status;
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = N * 8}, &in));
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = (B + 1) * 8}, &bb));
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = B * 4, .memory = VKDS_MEMORY_MAPPED}, &out));
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = B * 4, .memory = VKDS_MEMORY_MAPPED}, &out2));
  uint64_t sbytes = vkds_histogram_scratch_bytes(r0, B);
  ck_assert_uint_eq(vkds_histogram_scratch_bytes(NULL, B), 0);
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = sbytes + 64}, &scratch));
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = 16, .memory = VKDS_MEMORY_MAPPED}, &status));
  ck_assert_vkds(vkds_upload(r0, vkds_view_of(in), a, N * 8));
  ck_assert_vkds(vkds_upload(r0, vkds_view_of(bb), bounds, (B + 1) * 8));
  memset(vkds_buffer_map(out2), 0x77, B * 4);
  memset(vkds_buffer_map(status), 0x55, 16);
  app_cmd ac = {0};
  app_cmd_begin(&ac, r0);
  vkds_cmd c = {.cmd = ac.cmd, .resource = r0, .scratch = vkds_view_of(scratch)};
  vkds_seq is = vkds_seq_buffer(vkds_view_of(in), VKDS_F64), ibs = vkds_seq_buffer(vkds_view_of(bb), VKDS_F64);
  vkds_seq os = vkds_seq_buffer(vkds_view_of(out), VKDS_U32), os2 = vkds_seq_buffer(vkds_view_of(out2), VKDS_U32);
  ck_assert_vkds(vkds_cmd_histogram_range(&c, &is, &ibs, &os2, (vkds_view){status, 0, 4}));
  ck_assert_vkds(vkds_cmd_histogram_even(&c, &is, &lo, &hi, &os));
  /* what cannot be recorded: host data, too little or misaligned scratch, a misaligned status */
  vkds_seq hb = vkds_seq_host(bounds, B + 1, VKDS_F64);
  ck_assert_int_eq(vkds_cmd_histogram_range(&c, &is, &hb, &os, (vkds_view){0}), VKDS_ERROR_INVALID_ARGUMENT);
  vkds_cmd small = {.cmd = ac.cmd, .resource = r0, .scratch = (vkds_view){scratch, 0, sbytes - 4}};
  ck_assert_int_eq(vkds_cmd_histogram_even(&small, &is, &lo, &hi, &os), VKDS_ERROR_INVALID_ARGUMENT);
  vkds_cmd skewed = {.cmd = ac.cmd, .resource = r0, .scratch = (vkds_view){scratch, 4, sbytes}};
  ck_assert_int_eq(vkds_cmd_histogram_even(&skewed, &is, &lo, &hi, &os), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_msg(strstr(vkds_last_error_message(), "16-byte aligned"), "%s", vkds_last_error_message());
  ck_assert_int_eq(vkds_cmd_histogram_range(&c, &is, &ibs, &os, (vkds_view){status, 2, 4}), VKDS_ERROR_INVALID_ARGUMENT);
  app_cmd_submit(&ac, 10);
  memcpy(got, vkds_buffer_map(out), B * 4);
  check_counts(got, B, want, "recorded even");
  memcpy(got, vkds_buffer_map(out2), B * 4);
  check_counts(got, B, want, "recorded range");
  uint32_t st;
  memcpy(&st, vkds_buffer_map(status), 4);
  ck_assert_uint_eq(st, 0);
  /* unsorted, recorded: the status says where, the counts stay */
  bounds[37] = 1e9;
  ck_assert_vkds(vkds_upload(r0, vkds_view_of(bb), bounds, (B + 1) * 8));
  memset(vkds_buffer_map(out2), 0x77, B * 4);
  app_cmd_begin(&ac, r0);
  ck_assert_vkds(vkds_cmd_histogram_range(&c, &is, &ibs, &os2, (vkds_view){status, 4, 4}));
  app_cmd_submit(&ac, 10);
  memcpy(&st, (char *)vkds_buffer_map(status) + 4, 4);
  ck_assert_uint_eq(st, 1 + 37);
  for (int k = 0; k < B; ++k) ck_assert_uint_eq(((uint32_t *)vkds_buffer_map(out2))[k], 0x77777777u);
  /* zero bins, one boundary: sorted, in every form (the blocking form read a stale
   * status from the scratch as an error, the recorded one left the status word as it was) */
  double two_bounds[2] = {5, 1};
  uint32_t one_count;
  vkds_seq unsorted = vkds_seq_host(two_bounds, 2, VKDS_F64), bin = vkds_seq_host(&one_count, 1, VKDS_U32);
  ck_assert_int_eq(vkds_histogram_range(pol, &as, &unsorted, &bin), VKDS_ERROR_INVALID_ARGUMENT); /* its status stays */
  vkds_seq one = vkds_seq_host(two_bounds, 1, VKDS_F64), none = vkds_seq_host(&one_count, 0, VKDS_U32);
  ck_assert_vkds(vkds_histogram_range(pol, &as, &one, &none));
  vkds_seq ibs1 = vkds_seq_buffer((vkds_view){bb, 0, 8}, VKDS_F64), os0 = vkds_seq_buffer((vkds_view){out2, 0, 4}, VKDS_U32);
  os0.count = 0;
  memset(vkds_buffer_map(status), 0x55, 16);
  app_cmd_begin(&ac, r0);
  ck_assert_vkds(vkds_cmd_histogram_range(&c, &is, &ibs1, &os0, (vkds_view){status, 8, 4}));
  app_cmd_submit(&ac, 10);
  memcpy(&st, (char *)vkds_buffer_map(status) + 8, 4);
  ck_assert_uint_eq(st, 0);
  app_cmd_destroy(&ac);
  vkds_buffer_destroy(in), vkds_buffer_destroy(bb), vkds_buffer_destroy(out), vkds_buffer_destroy(out2);
  vkds_buffer_destroy(scratch), vkds_buffer_destroy(status);
  free(a), free(bounds);
  close_ctx();
}
END_TEST

/* ---- unsorted boundaries: a named error, nothing written ---- */

START_TEST(unsorted_boundaries) {
  open_ctx();
  enum { N = 5000, B = 64 };
  uint32_t *a = malloc(N * 4), bounds[B + 1], got[B];
  for (int i = 0; i < N; ++i) a[i] = (uint32_t)(rnd() % 100);
  for (int k = 0; k <= B; ++k) bounds[k] = (uint32_t)k;
  bounds[20] = bounds[21] = 21; /* equal boundaries are fine: bin 20 is empty */
  vkds_seq as = vkds_seq_host(a, N, VKDS_U32), bs = vkds_seq_host(bounds, B + 1, VKDS_U32), cs = vkds_seq_host(got, B, VKDS_U32);
  ck_assert_vkds(vkds_histogram_range(pol, &as, &bs, &cs));
  ck_assert_uint_eq(got[20], 0);
  /* one out of order: the error names it, host counts untouched */
  bounds[40] = 1000;
  memset(got, 0x77, sizeof got);
  ck_assert_int_eq(vkds_histogram_range(pol, &as, &bs, &cs), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_msg(strstr(vkds_last_error_message(), "not sorted") && strstr(vkds_last_error_message(), "boundary 40"),
                "%s", vkds_last_error_message());
  for (int k = 0; k < B; ++k) ck_assert_uint_eq(got[k], 0x77777777u);
  /* two pairs: the first is named */
  bounds[10] = 500;
  ck_assert_int_eq(vkds_histogram_range(pol, &as, &bs, &cs), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_msg(strstr(vkds_last_error_message(), "boundary 10 "), "%s", vkds_last_error_message());
  /* device counts untouched; the asynchronous form's wait says so */
  vkds_buffer *out;
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = B * 4, .memory = VKDS_MEMORY_MAPPED}, &out));
  memset(vkds_buffer_map(out), 0x77, B * 4);
  vkds_seq os = vkds_seq_mapped(vkds_view_of(out), VKDS_U32);
  vkds_submission *sub;
  ck_assert_vkds(vkds_histogram_range_async(pol, &as, &bs, &os, &sub));
  ck_assert_int_eq(vkds_submission_wait(sub), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_submission_wait(sub), VKDS_ERROR_INVALID_ARGUMENT); /* again: the same */
  /* its release does not log what the wait returned (it logged every handled failure at
   * error level; a probe); released unwaited, the failure is logged, once */
  int logged = release_errors;
  vkds_submission_release(sub);
  ck_assert_int_eq(release_errors, logged);
  ck_assert_vkds(vkds_histogram_range_async(pol, &as, &bs, &os, &sub));
  vkds_result polled;
  while ((polled = vkds_submission_poll(sub)) == VKDS_ERROR_WOULD_BLOCK) {
  }
  ck_assert_int_eq(polled, VKDS_ERROR_INVALID_ARGUMENT);
  vkds_submission_release(sub);
  ck_assert_int_eq(release_errors, logged);
  ck_assert_vkds(vkds_histogram_range_async(pol, &as, &bs, &os, &sub));
  ck_assert_int_eq(vkds_policy_wait_all(pol, UINT64_MAX), VKDS_ERROR_INVALID_ARGUMENT);
  vkds_submission_release(sub);
  ck_assert_int_eq(release_errors, logged);
  ck_assert_vkds(vkds_histogram_range_async(pol, &as, &bs, &os, &sub));
  int errors = vkds_errors;
  vkds_submission_release(sub);
  ck_assert_int_eq(release_errors, logged + 1);
  ck_assert_int_eq(vkds_errors, errors + 1); /* one line, not the failure and then the release's (a probe) */
  for (int k = 0; k < B; ++k) ck_assert_uint_eq(((uint32_t *)vkds_buffer_map(out))[k], 0x77777777u);
  /* a NaN among float boundaries */
  float fb[5] = {0, 1, NAN, 3, 4}, fa[3] = {0.5f, 1.5f, 3.5f};
  vkds_seq fbs = vkds_seq_host(fb, 5, VKDS_F32), fas = vkds_seq_host(fa, 3, VKDS_F32), fcs = vkds_seq_host(got, 4, VKDS_U32);
  ck_assert_int_eq(vkds_histogram_range(pol, &fas, &fbs, &fcs), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_msg(strstr(vkds_last_error_message(), "boundary 1 "), "%s", vkds_last_error_message());
  for (int k = 0; k < 4; ++k) ck_assert_uint_eq(got[k], 0x77777777u);
  /* an empty input is still checked */
  vkds_seq none = vkds_seq_host(a, 0, VKDS_U32);
  ck_assert_int_eq(vkds_histogram_range(pol, &none, &bs, &cs), VKDS_ERROR_INVALID_ARGUMENT);
  vkds_buffer_destroy(out);
  free(a);
  close_ctx();
}
END_TEST

/* ---- bad input: a named error, nothing selected, nothing written ---- */

START_TEST(bad_input) {
  open_ctx();
  uint32_t a[16] = {1, 2, 3}, c[8], bnd[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
  memset(c, 0x77, sizeof c);
  vkds_seq as = vkds_seq_host(a, 16, VKDS_U32), cs = vkds_seq_host(c, 8, VKDS_U32), bs = vkds_seq_host(bnd, 9, VKDS_U32);
  vkds_policy_resource_stats before, after;
  ck_assert_vkds(vkds_policy_get_resource_stats(pol, 0, &before));
  const vkds_result E = VKDS_ERROR_INVALID_ARGUMENT;
  uint32_t lo = 0, hi = 8;
  ck_assert_int_eq(vkds_histogram_even(NULL, &as, &lo, &hi, &cs), E); /* NULLs */
  ck_assert_int_eq(vkds_histogram_even(pol, NULL, &lo, &hi, &cs), E);
  ck_assert_int_eq(vkds_histogram_even(pol, &as, NULL, &hi, &cs), E);
  ck_assert_int_eq(vkds_histogram_even(pol, &as, &lo, NULL, &cs), E);
  ck_assert_int_eq(vkds_histogram_even(pol, &as, &lo, &hi, NULL), E);
  ck_assert_int_eq(vkds_histogram_range(pol, &as, NULL, &cs), E);
  ck_assert_int_eq(vkds_histogram_even_async(pol, &as, &lo, &hi, &cs, NULL), E);
  ck_assert_int_eq(vkds_cmd_histogram_even(NULL, &as, &lo, &hi, &cs), E);
  vkds_seq invalid = {0};
  ck_assert_int_eq(vkds_histogram_even(pol, &invalid, &lo, &hi, &cs), E);
  ck_assert_int_eq(vkds_histogram_range(pol, &as, &invalid, &cs), E);
  /* the message names the call and the role, as every algorithm's does (a chaos probe:
   * it said "vkds_seq_validate: ...") */
  ck_assert_msg(strstr(vkds_last_error_message(), "vkds_histogram_range: the boundaries: "), "%s", vkds_last_error_message());
  ck_assert_int_eq(vkds_histogram_even_async(pol, &as, &lo, &hi, &invalid, &(vkds_submission *){NULL}), E);
  ck_assert_msg(strstr(vkds_last_error_message(), "vkds_histogram_even_async: the counts: "), "%s", vkds_last_error_message());
  ck_assert_int_eq(vkds_histogram_even(pol, &as, &hi, &lo, &cs), E); /* lower >= upper */
  ck_assert_msg(strstr(vkds_last_error_message(), "lower < upper"), "%s", vkds_last_error_message());
  ck_assert_int_eq(vkds_histogram_even(pol, &as, &lo, &lo, &cs), E);
  float f[4] = {0}, flo = 0, fnan = NAN, finf = INFINITY, fbig = 3e38f, fneg = -3e38f;
  vkds_seq fs = vkds_seq_host(f, 4, VKDS_F32);
  ck_assert_int_eq(vkds_histogram_even(pol, &fs, &fnan, &finf, &cs), E); /* NaN, infinite, overflowing span */
  ck_assert_int_eq(vkds_histogram_even(pol, &fs, &flo, &fnan, &cs), E);
  ck_assert_int_eq(vkds_histogram_even(pol, &fs, &flo, &finf, &cs), E);
  ck_assert_int_eq(vkds_histogram_even(pol, &fs, &fneg, &fbig, &cs), E);
  vkds_seq ics = vkds_seq_host(c, 8, VKDS_I32);
  ck_assert_int_eq(vkds_histogram_even(pol, &as, &lo, &hi, &ics), E); /* counts not U32 */
  vkds_seq fbs = vkds_seq_host(f, 4, VKDS_F32);
  ck_assert_int_eq(vkds_histogram_range(pol, &as, &fbs, &cs), E); /* boundaries of another type */
  vkds_seq short_bs = vkds_seq_host(bnd, 8, VKDS_U32);
  ck_assert_int_eq(vkds_histogram_range(pol, &as, &short_bs, &cs), E); /* 8 bins take 9 boundaries */
  ck_assert_msg(strstr(vkds_last_error_message(), "k + 1 boundaries"), "%s", vkds_last_error_message());
  vkds_seq zp[2] = {as, as};
  vkds_seq z = vkds_seq_zip(zp, 2);
  ck_assert_int_eq(vkds_histogram_even(pol, &z, &lo, &hi, &cs), E); /* a zip's tuples */
  vkds_seq ro = vkds_seq_host_const(c, 8, VKDS_U32);
  ck_assert_int_eq(vkds_histogram_even(pol, &as, &lo, &hi, &ro), E); /* read-only counts */
  vkds_seq cnt = vkds_seq_counting(0, 8, VKDS_U32);
  ck_assert_int_eq(vkds_histogram_range(pol, &as, &bs, &cnt), E);
  vkds_seq overlap = vkds_seq_host(a + 4, 8, VKDS_U32);
  ck_assert_int_eq(vkds_histogram_even(pol, &as, &lo, &hi, &overlap), E); /* counts over the samples */
  ck_assert_int_eq(vkds_histogram_range(pol, &as, &bs, &bs), E);
  vkds_context *other = harness_context(); /* a sequence of another context */
  vkds_buffer *ob;
  ck_assert_vkds(vkds_buffer_create(vkds_context_resource(other, 0), &(vkds_buffer_info){.size = 64}, &ob));
  vkds_seq os = vkds_seq_buffer(vkds_view_of(ob), VKDS_U32);
  ck_assert_int_eq(vkds_histogram_even(pol, &os, &lo, &hi, &cs), VKDS_ERROR_WRONG_CONTEXT);
  vkds_seq obs = vkds_seq_buffer((vkds_view){ob, 0, 36}, VKDS_U32);
  ck_assert_int_eq(vkds_histogram_range(pol, &as, &obs, &cs), VKDS_ERROR_WRONG_CONTEXT);
  vkds_buffer_destroy(ob);
  vkds_context_destroy(other);
  for (int i = 0; i < 8; ++i) ck_assert_uint_eq(c[i], 0x77777777u); /* nothing written */
  ck_assert_vkds(vkds_policy_get_resource_stats(pol, 0, &after));
  ck_assert_uint_eq(after.selections, before.selections); /* nothing selected, so nothing submitted */
  close_ctx();
}
END_TEST

int main(void) {
  Suite *s = suite_create("histogram");
  TCase *t = harness_tcase("reference");
  tcase_add_loop_test(t, every_type, 0, (int)(sizeof TYPES / sizeof *TYPES));
  tcase_add_test(t, edges_and_ranges);
  tcase_add_test(t, host_samples_are_staged_in_kept_buffers);
  tcase_add_test(t, big);
  tcase_add_test(t, every_sequence_kind);
  suite_add_tcase(s, t);
  t = harness_tcase("forms");
  tcase_add_test(t, forms);
  suite_add_tcase(s, t);
  t = harness_tcase("errors");
  tcase_add_test(t, unsorted_boundaries);
  tcase_add_test(t, bad_input);
  suite_add_tcase(s, t);
  return harness_run(s);
}
