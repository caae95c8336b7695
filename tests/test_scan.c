/* tests/test_scan.c: the scans (vkds/algorithm.h, "scans") on lavapipe, validation on,
 * on both paths forced (lavapipe's own rule gives the portable one): every type and
 * operator (built-in and user GLSL) against a host reference at the sizes where tails,
 * subgroups, groups and tiles change, 2^k ± 1 up to 2^24, unaligned ranges, every
 * sequence kind as input and output (views, a user type, a buffer of a second VkDevice),
 * in place, host data streamed past the staging ring, the three forms, float results
 * repeatable bit for bit (also through the single pass's fallback), 10,000 single-pass
 * scans in a row without a hang or a wrong element, the path rule and its overrides,
 * threads sharing a policy, and bad input (a named error, nothing submitted, nothing
 * written). */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app_cmd.h"
#include "harness.h"
#include "values.h"

static const vkds_scan_path PATHS[] = {VKDS_SCAN_PATH_SINGLE, VKDS_SCAN_PATH_PORTABLE};
static const char *path_name(vkds_scan_path p) { return p == VKDS_SCAN_PATH_SINGLE ? "single" : "portable"; }

static vkds_context *ctx;
static vkds_resource *r0;
static vkds_policy *pol;

/* A context whose scans take `path` (0: the device's rule), a fixed policy on resource 0. */
static void open_path(vkds_scan_path path) {
  vkds_context_info info = harness_info();
  info.scan_path = path;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  r0 = vkds_context_resource(ctx, 0);
  ck_assert_int_eq(vkds_resource_scan_path(r0), path ? path : VKDS_SCAN_PATH_PORTABLE);
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = {.context = ctx}}, &pol));
}
static void close_ctx(void) {
  vkds_policy_release(pol);
  vkds_context_destroy(ctx);
  pol = NULL, ctx = NULL;
}

static uint32_t subgroup(void) {
  vkds_resource_info info;
  vkds_resource_get_info(r0, &info);
  return info.subgroup_size ? info.subgroup_size : 8;
}

/* ---- values of every type ---- */


/* Elements per tile (scan_tile.glsl): where a scan's grid changes. */
static uint64_t tile_of(vkds_type t) { return size_of(t) == 8 ? 2048 : 4096; }

static uint64_t rng_state = 0x2545f4914f6cdd1dull;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
  return rng_state;
}

static double get_double(vkds_type t, const void *p, uint64_t i) {
  switch (t) {
  case VKDS_I32: return ((const int32_t *)p)[i];
  case VKDS_U32: return ((const uint32_t *)p)[i];
  case VKDS_F32: return ((const float *)p)[i];
  case VKDS_I64: return (double)((const int64_t *)p)[i];
  case VKDS_U64: return (double)((const uint64_t *)p)[i];
  default: return ((const double *)p)[i];
  }
}
/* Integer element i as 64 bits, sign-extended. */
static uint64_t get_bits(vkds_type t, const void *p, uint64_t i) {
  switch (t) {
  case VKDS_I32: return (uint64_t)(int64_t)((const int32_t *)p)[i];
  case VKDS_U32: return ((const uint32_t *)p)[i];
  default: return ((const uint64_t *)p)[i];
  }
}
static void put_double(vkds_type t, void *p, uint64_t i, double d) {
  if (t == VKDS_F32) ((float *)p)[i] = (float)d;
  else ((double *)p)[i] = d;
}
static void put_bits(vkds_type t, void *p, uint64_t i, uint64_t b) {
  if (size_of(t) == 4) ((uint32_t *)p)[i] = (uint32_t)b;
  else ((uint64_t *)p)[i] = b;
}
static val val_double(vkds_type t, double d) {
  val v = {0};
  put_double(t, v.b, 0, d);
  return v;
}
static val val_bits(vkds_type t, uint64_t b) {
  val v = {0};
  put_bits(t, v.b, 0, b);
  return v;
}

/* ---- operators, with the host's version of each ---- */

/* user GLSL operators: max(a, b); b (not commutative); on unsigned types, the affine maps
 * x -> m x + c of the type's halves (m high, c low, modulo the half) composed, a then b:
 * associative, not commutative, and unlike b every element's value depends on every
 * combine before it and on their order */
enum { USER_MAX = 100, USER_RIGHT = 101, USER_AFFINE = 102 };

typedef struct test_op {
  int kind; /* a vkds_op_kind or USER_* */
  vkds_op op;
} test_op;

static const char *lowest_glsl(vkds_type t) {
  switch (t) {
  case VKDS_I32: return "int(0x80000000u)";
  case VKDS_U32: return "0u";
  case VKDS_F32: return "uintBitsToFloat(0xff800000u)";
  case VKDS_I64: return "int64_t(0x8000000000000000ul)";
  case VKDS_U64: return "0ul";
  default: return "uint64BitsToDouble(0xfff0000000000000ul)";
  }
}

static test_op make_op(int kind, vkds_type t) {
  test_op o = {.kind = kind, .op = {.kind = (vkds_op_kind)kind}};
  if (kind == USER_MAX) o.op = (vkds_op){VKDS_OP_GLSL, "max(a, b)", lowest_glsl(t)};
  if (kind == USER_RIGHT) o.op = (vkds_op){VKDS_OP_GLSL, "b", "0"};
  if (kind == USER_AFFINE && t == VKDS_U32)
    o.op = (vkds_op){VKDS_OP_GLSL,
                     "(((b >> 16u) * (a >> 16u)) << 16u) | (((b >> 16u) * (a & 0xffffu) + (b & 0xffffu)) & 0xffffu)",
                     "0x10000u"};
  if (kind == USER_AFFINE && t == VKDS_U64)
    o.op = (vkds_op){VKDS_OP_GLSL,
                     "(((b >> 32ul) * (a >> 32ul)) << 32ul) | "
                     "(((b >> 32ul) * (a & 0xfffffffful) + (b & 0xfffffffful)) & 0xfffffffful)",
                     "0x100000000ul"};
  return o;
}

static uint64_t int_op(vkds_type t, int op, uint64_t a, uint64_t b) {
  bool s = is_signed(t);
  int64_t sa = size_of(t) == 4 ? (int64_t)(int32_t)a : (int64_t)a, sb = size_of(t) == 4 ? (int64_t)(int32_t)b : (int64_t)b;
  uint64_t ua = a & type_mask(t), ub = b & type_mask(t), r;
  switch (op) {
  case VKDS_OP_MULTIPLIES: r = a * b; break;
  case VKDS_OP_MIN: r = (s ? sb < sa : ub < ua) ? b : a; break;
  case VKDS_OP_MAX: case USER_MAX: r = (s ? sa < sb : ua < ub) ? b : a; break;
  case VKDS_OP_BIT_AND: r = a & b; break;
  case VKDS_OP_BIT_OR: r = a | b; break;
  case VKDS_OP_BIT_XOR: r = a ^ b; break;
  case VKDS_OP_LOGICAL_AND: r = (ua != 0 && ub != 0) ? 1 : 0; break;
  case VKDS_OP_LOGICAL_OR: r = (ua != 0 || ub != 0) ? 1 : 0; break;
  case USER_RIGHT: r = b; break;
  case USER_AFFINE: {
    unsigned half = size_of(t) * 4;
    uint64_t hm = (1ull << half) - 1, ma = (ua >> half) & hm, ca = ua & hm, mb = (ub >> half) & hm, cb = ub & hm;
    r = (((mb * ma) & hm) << half) | ((mb * ca + cb) & hm);
    break;
  }
  default: r = a + b; break;
  }
  return r & type_mask(t);
}
static double float_op(int op, double a, double b) {
  switch (op) {
  case VKDS_OP_MULTIPLIES: return a * b;
  case VKDS_OP_MIN: return b < a ? b : a;
  case VKDS_OP_MAX: case USER_MAX: return a < b ? b : a;
  case VKDS_OP_LOGICAL_AND: return (a != 0 && b != 0) ? 1 : 0;
  case VKDS_OP_LOGICAL_OR: return (a != 0 || b != 0) ? 1 : 0;
  case USER_RIGHT: return b;
  default: return a + b;
  }
}
static val identity_of(vkds_type t, int op) {
  if (is_float(t)) {
    switch (op) {
    case VKDS_OP_MULTIPLIES: case VKDS_OP_LOGICAL_AND: return val_double(t, 1);
    case VKDS_OP_MIN: return val_double(t, INFINITY);
    case VKDS_OP_MAX: case USER_MAX: return val_double(t, -INFINITY);
    default: return val_double(t, 0);
    }
  }
  switch (op) {
  case VKDS_OP_MULTIPLIES: case VKDS_OP_LOGICAL_AND: return val_bits(t, 1);
  case VKDS_OP_BIT_AND: return val_bits(t, ~0ull);
  case VKDS_OP_MIN: return val_bits(t, is_signed(t) ? type_mask(t) >> 1 : ~0ull);
  case VKDS_OP_MAX: case USER_MAX: return val_bits(t, is_signed(t) ? (type_mask(t) >> 1) + 1 : 0);
  case USER_AFFINE: return val_bits(t, 1ull << (size_of(t) * 4));
  default: return val_bits(t, 0);
  }
}
/* Whether the operator's float results are exact whatever the order. */
static bool exact_op(int op) { return op != VKDS_OP_PLUS && op != VKDS_OP_MULTIPLIES && op != 0; }

/* n random elements of type t for operator op: small values where products and logical
 * operators want them, floats in 1/64 steps (their sums stay exact up to 2^18), near 1
 * for float products. */
static void *random_data(vkds_type t, uint64_t n, int op) {
  void *p = malloc((n ? n : 1) * 8);
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t r = rnd();
    if (is_float(t))
      put_double(t, p, i, op == VKDS_OP_MULTIPLIES ? 1.0 + ((double)(r % 2001) - 1000.0) * 1e-6
                                                   : ((double)(r % 20001) - 10000.0) / 64.0);
    else if (op == VKDS_OP_MULTIPLIES || op == VKDS_OP_LOGICAL_AND || op == VKDS_OP_LOGICAL_OR)
      put_bits(t, p, i, r % 4 ? 1 + r % 3 : 0);
    else put_bits(t, p, i, is_signed(t) ? (uint64_t)((int64_t)(r % 2000001) - 1000000) : r);
  }
  return p;
}

/* A value for init that means something for the operator. */
static val init_for(vkds_type t, int op) {
  if (is_float(t)) return val_double(t, op == VKDS_OP_MULTIPLIES ? 1.5 : op == VKDS_OP_LOGICAL_AND ? 1 : 2.25);
  if (op == VKDS_OP_LOGICAL_AND || op == VKDS_OP_LOGICAL_OR || op == VKDS_OP_MULTIPLIES) return val_bits(t, 1);
  return val_bits(t, 12345);
}

/* ---- the reference ---- */

/* Checks `got` (n elements of type t) against the host's scan of `in` (n elements of type
 * t, already transformed): exact for integers and for exact float operators; for sums and
 * products within the rounding of the longest chain of operations that can lead to an
 * element (the tiles before it, plus a tile's own steps). */
static void check_scan(vkds_type t, int op, const void *in, uint64_t n, bool exclusive, const val *init,
                       const void *got, const char *what) {
  bool has = init != NULL;
  if (!is_float(t)) {
    uint64_t acc = has ? get_bits(t, init->b, 0) : 0;
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t x = get_bits(t, in, i);
      uint64_t want = exclusive ? (has ? acc : get_bits(t, identity_of(t, op).b, 0)) : has ? int_op(t, op, acc, x) : x;
      acc = has ? int_op(t, op, acc, x) : x & type_mask(t);
      has = true;
      uint64_t g = get_bits(t, got, i) & type_mask(t);
      if (g != (want & type_mask(t)))
        ck_abort_msg("%s: %s op %d n %llu %s: [%llu] got %llx want %llx", what, type_name(t), op,
                     (unsigned long long)n, exclusive ? "exclusive" : "inclusive", (unsigned long long)i,
                     (unsigned long long)g, (unsigned long long)(want & type_mask(t)));
    }
    return;
  }
  double eps = t == VKDS_F32 ? 1.2e-7 : 2.3e-16;
  double acc = has ? get_double(t, init->b, 0) : 0, mag = has ? fabs(acc) : 0;
  for (uint64_t i = 0; i < n; ++i) {
    double x = get_double(t, in, i);
    double want = exclusive ? (has ? acc : get_double(t, identity_of(t, op).b, 0)) : has ? float_op(op, acc, x) : x;
    acc = has ? float_op(op, acc, x) : x;
    mag += fabs(x);
    has = true;
    if (t == VKDS_F32) want = (float)want;
    double g = get_double(t, got, i);
    double chain = (double)(i / tile_of(t)) + 300;
    double tol = exact_op(op) ? 0 : eps * chain * (op == VKDS_OP_MULTIPLIES ? fabs(want) : mag + 1);
    if (!(g == want || fabs(g - want) <= tol))
      ck_abort_msg("%s: %s op %d n %llu %s: [%llu] got %.17g want %.17g", what, type_name(t), op, (unsigned long long)n,
                   exclusive ? "exclusive" : "inclusive", (unsigned long long)i, g, want);
  }
}

/* The four scans through one call. */
static vkds_result scan(vkds_policy *p, const vkds_seq *in, const vkds_seq *out, bool exclusive, const char *transform,
                        const vkds_op *op, const void *init) {
  if (transform)
    return exclusive ? vkds_transform_exclusive_scan(p, in, out, transform, op, init)
                     : vkds_transform_inclusive_scan(p, in, out, transform, op, init);
  return exclusive ? vkds_exclusive_scan(p, in, out, op, init) : vkds_inclusive_scan(p, in, out, op, init);
}

/* ---- every type and operator, at the sizes that matter, on both paths ---- */

static void every_operator(vkds_type t) {
  vkds_policy *pols[2];
  vkds_context *ctxs[2];
  for (int k = 0; k < 2; ++k) {
    open_path(PATHS[k]);
    pols[k] = pol, ctxs[k] = ctx;
  }
  uint32_t sg = subgroup();
  uint64_t tile = tile_of(t);
  const uint64_t sizes[] = {0, 1, 7, sg - 1, sg + 1, 255, 257, 256 * sg + 1, tile - 1, tile + 1, 2 * tile + 3, 100003};
  const uint64_t most = 100003;
  const int ops[] = {VKDS_OP_PLUS, VKDS_OP_MULTIPLIES, VKDS_OP_MIN, VKDS_OP_MAX, VKDS_OP_BIT_AND, VKDS_OP_BIT_OR,
                     VKDS_OP_BIT_XOR, VKDS_OP_LOGICAL_AND, VKDS_OP_LOGICAL_OR, USER_MAX, USER_RIGHT, USER_AFFINE};
  unsigned char *out = malloc(most * 8);
  for (size_t oi = 0; oi < sizeof ops / sizeof *ops; ++oi) {
    int opk = ops[oi];
    if (is_float(t) && opk >= VKDS_OP_BIT_AND && opk <= VKDS_OP_BIT_XOR) continue;
    if (opk == USER_AFFINE && t != VKDS_U32 && t != VKDS_U64) continue;
    test_op o = make_op(opk, t);
    void *data = random_data(t, most, opk);
    for (int k = 0; k < 2; ++k) {
      /* the operator is the same code on both paths: the single pass takes a few (each
       * is a kernel to build, and the validation layer makes that slow) */
      bool some = opk == VKDS_OP_PLUS || opk == VKDS_OP_MIN || opk == VKDS_OP_LOGICAL_OR || opk == USER_RIGHT;
      if (PATHS[k] == VKDS_SCAN_PATH_SINGLE && !some) continue;
      vkds_resource *res = vkds_context_resource(ctxs[k], 0);
      vkds_buffer *in = harness_device_copy(res, data, most * size_of(t)), *ob = harness_device_copy(res, NULL, most * size_of(t));
      for (size_t si = 0; si < sizeof sizes / sizeof *sizes; ++si) {
        uint64_t n = sizes[si];
        /* every size for plus and a non-commutative operator; the others where the grid changes */
        bool every = opk == VKDS_OP_PLUS || opk == USER_RIGHT;
        if (!every && (n == 0 || n == 255 || n == sg - 1 || n == tile - 1 || n > 4 * tile)) continue;
        vkds_seq is = vkds_seq_buffer((vkds_view){in, 0, n * size_of(t)}, t);
        vkds_seq os = vkds_seq_buffer((vkds_view){ob, 0, n * size_of(t)}, t);
        if (n == 0) is = vkds_seq_host(data, 0, t), os = vkds_seq_host(out, 0, t);
        for (int ex = 0; ex < 2; ++ex) {
          /* inclusive without init, exclusive with one (and exclusive without at one size) */
          val init = init_for(t, opk);
          const val *ip = ex || si == 3 ? &init : NULL;
          if (ex && si == 4) ip = NULL;
          ck_assert_vkds(scan(pols[k], &is, &os, ex, NULL, &o.op, ip ? ip->b : NULL));
          if (n) ck_assert_vkds(vkds_download(res, out, (vkds_view){ob, 0, n * size_of(t)}, n * size_of(t)));
          char what[64];
          snprintf(what, sizeof what, "%s path", path_name(PATHS[k]));
          check_scan(t, opk, data, n, ex, ip, out, what);
        }
      }
      vkds_buffer_destroy(in), vkds_buffer_destroy(ob);
    }
    free(data);
  }
  free(out);
  for (int k = 0; k < 2; ++k) vkds_policy_release(pols[k]), vkds_context_destroy(ctxs[k]);
  pol = NULL, ctx = NULL;
}

START_TEST(every_type_and_operator) { every_operator(TYPES[_i]); }
END_TEST

/* ---- 2^k ± 1 up to 2^24, and float bits that do not move ---- */

START_TEST(powers_of_two) {
  const int top_log2 = harness_top_log2(24);
  const uint64_t top = (1ull << top_log2) + 1;
  uint32_t *data = random_data(VKDS_U32, top, VKDS_OP_PLUS), *want = malloc(top * 4), *got = malloc(top * 4);
  uint32_t acc = 0;
  for (uint64_t i = 0; i < top; ++i) want[i] = acc += data[i]; /* every size's inclusive scan is a prefix of this */
  for (int k = 0; k < 2; ++k) {
    open_path(PATHS[k]);
    vkds_buffer *in = harness_device_copy(r0, data, top * 4), *out = harness_device_copy(r0, NULL, top * 4);
    for (int e = 1; e <= top_log2; ++e)
      for (int d = -1; d <= 1; ++d) {
        uint64_t n = (1ull << e) + (uint64_t)(int64_t)d;
        if (e > 20 && d == 0) continue; /* the biggest: the odd ones only */
        vkds_seq is = vkds_seq_buffer((vkds_view){in, 0, n * 4}, VKDS_U32);
        vkds_seq os = vkds_seq_buffer((vkds_view){out, 0, n * 4}, VKDS_U32);
        ck_assert_vkds(vkds_inclusive_scan(pol, &is, &os, NULL, NULL));
        ck_assert_vkds(vkds_download(r0, got, (vkds_view){out, 0, n * 4}, n * 4));
        for (uint64_t i = 0; i < n; ++i)
          if (got[i] != want[i])
            ck_abort_msg("%s: u32 n %llu [%llu] got %u want %u", path_name(PATHS[k]), (unsigned long long)n,
                         (unsigned long long)i, got[i], want[i]);
      }
    vkds_buffer_destroy(in), vkds_buffer_destroy(out);
    close_ctx();
  }
  free(data), free(want), free(got);
}
END_TEST

/* A float scan gives the same bits every time: on each path, and on the single pass
 * also when every tile reduces its predecessor itself (the fallback). */
START_TEST(float_bits_repeat) {
  const uint64_t n = (1ull << harness_top_log2(24)) - 3;
  float *data = random_data(VKDS_F32, n, VKDS_OP_PLUS);
  for (uint64_t i = 0; i < n; i += 7) data[i] *= 1.0f / 3.0f; /* sums that round */
  float *first = malloc(n * 4), *again = malloc(n * 4);
  for (int k = 0; k < 2; ++k) {
    open_path(PATHS[k]);
    vkds_buffer *in = harness_device_copy(r0, data, n * 4), *out = harness_device_copy(r0, NULL, n * 4);
    vkds_seq is = vkds_seq_buffer(vkds_view_of(in), VKDS_F32), os = vkds_seq_buffer(vkds_view_of(out), VKDS_F32);
    for (int rep = 0; rep < 3; ++rep) {
      if (PATHS[k] == VKDS_SCAN_PATH_SINGLE) harness_setenv("VKDS_SCAN_SPINS", rep == 2 ? "-1" : rep == 1 ? "0" : NULL);
      ck_assert_vkds(vkds_inclusive_scan(pol, &is, &os, NULL, NULL));
      ck_assert_vkds(vkds_download(r0, rep ? again : first, vkds_view_of(out), n * 4));
      if (rep == 0) check_scan(VKDS_F32, VKDS_OP_PLUS, data, n, false, NULL, first, path_name(PATHS[k]));
      else
        ck_assert_msg(memcmp(first, again, n * 4) == 0, "%s: run %d differs from the first", path_name(PATHS[k]), rep);
    }
    vkds_buffer_destroy(in), vkds_buffer_destroy(out);
    close_ctx();
  }
  free(data), free(first), free(again);
}
END_TEST

/* Float MIN and MAX skip NaNs on either side (IEEE minNum/maxNum): a NaN at the start of a
 * thread's run (16 elements of 4 bytes, 8 of 8), of a tile or of the whole, must not
 * give the elements after it the carry before it (a numerics probe: out[17..31] read 85,
 * the left-to-right fold 83..69). Against the host's left-to-right fold, both paths, f32
 * and f64, and the reductions over the same data. */
START_TEST(float_min_max_skip_nans) {
  enum { N = 20011 };
  const uint64_t nans[] = {0, 16, 17, 31, 32, 4095, 4096, 8192, 12000, 12001, N - 1};
  double *x = malloc(N * sizeof *x), *want = malloc(N * sizeof *want);
  void *in = malloc(N * 8), *out = malloc(N * 8);
  for (int k = 0; k < 2; ++k) {
    open_path(PATHS[k]);
    for (int t = 0; t < 2; ++t) {
      vkds_type type = t ? VKDS_F64 : VKDS_F32;
      for (int op = VKDS_OP_MIN; op <= VKDS_OP_MAX; ++op) {
        for (uint64_t i = 0; i < N; ++i) x[i] = (double)(rnd() % 100000) - 50000.0;
        for (size_t j = 0; j < sizeof nans / sizeof *nans; ++j) x[nans[j]] = NAN;
        double acc = x[0], reduced = op == VKDS_OP_MIN ? INFINITY : -INFINITY;
        for (uint64_t i = 0; i < N; ++i) {
          bool take = i == 0 || isnan(acc) || (op == VKDS_OP_MIN ? x[i] < acc : acc < x[i]);
          want[i] = acc = take ? x[i] : acc;
          if (!isnan(x[i]) && (op == VKDS_OP_MIN ? x[i] < reduced : reduced < x[i])) reduced = x[i];
          if (t) ((double *)in)[i] = x[i];
          else ((float *)in)[i] = (float)x[i];
        }
        vkds_seq is = vkds_seq_host_const(in, N, type), os = vkds_seq_host(out, N, type);
        vkds_op o = {.kind = (vkds_op_kind)op};
        ck_assert_vkds(vkds_inclusive_scan(pol, &is, &os, &o, NULL));
        for (uint64_t i = 0; i < N; ++i) {
          double got = t ? ((double *)out)[i] : ((float *)out)[i];
          ck_assert_msg(isnan(got) ? isnan(want[i]) : got == want[i], "%s, f%d %s: [%llu] got %g want %g",
                        path_name(PATHS[k]), t ? 64 : 32, op == VKDS_OP_MIN ? "min" : "max", (unsigned long long)i,
                        got, want[i]);
        }
        double r = 0;
        float rf = 0;
        ck_assert_vkds(vkds_reduce(pol, &is, &o, NULL, t ? (void *)&r : (void *)&rf));
        ck_assert_msg((t ? r : rf) == reduced, "%s reduce: got %g want %g", path_name(PATHS[k]), t ? r : rf, reduced);
      }
    }
    close_ctx();
  }
  free(x), free(want), free(in), free(out);
}
END_TEST

/* A non-commutative operator over the portable path's grid (tiles, groups, several tiles a
 * group), as GPUs run it (the tiles through shared memory: the shared_tiles tcase gives
 * lavapipe that path): every prefix, in a tile, a group's carry and across groups, must
 * combine in index order. (A built-in operator, all commuting, takes the fast group
 * totals instead: the plus scans of the same tcase cover those.) */
START_TEST(non_commutative_over_groups) {
  open_path(VKDS_SCAN_PATH_PORTABLE);
  const vkds_type types[] = {VKDS_U32, VKDS_U64};
  for (size_t ti = 0; ti < 2; ++ti) {
    vkds_type t = types[ti];
    uint64_t tile = tile_of(t);
    /* one group; six groups of a tile; 1,024 groups of 2 tiles and a part */
    const uint64_t sizes[] = {3 * tile + 5, 6 * tile - 1, 2048 * tile + 77};
    const uint64_t most = 2048 * tile + 77;
    test_op o = make_op(USER_AFFINE, t);
    void *data = random_data(t, most, USER_AFFINE), *out = malloc(most * size_of(t));
    vkds_buffer *in = harness_device_copy(r0, data, most * size_of(t)), *ob = harness_device_copy(r0, NULL, most * size_of(t));
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; ++si)
      for (int ex = 0; ex < 2; ++ex) {
        uint64_t n = sizes[si];
        vkds_seq is = vkds_seq_buffer((vkds_view){in, 0, n * size_of(t)}, t);
        vkds_seq os = vkds_seq_buffer((vkds_view){ob, 0, n * size_of(t)}, t);
        val init = init_for(t, USER_AFFINE);
        const val *ip = ex ? &init : NULL;
        ck_assert_vkds(scan(pol, &is, &os, ex, NULL, &o.op, ip ? ip->b : NULL));
        ck_assert_vkds(vkds_download(r0, out, (vkds_view){ob, 0, n * size_of(t)}, n * size_of(t)));
        check_scan(t, USER_AFFINE, data, n, ex, ip, out, "portable path");
      }
    vkds_buffer_destroy(in), vkds_buffer_destroy(ob);
    free(data), free(out);
  }
  close_ctx();
}
END_TEST

/* ---- tails and ranges off 16-byte alignment ---- */

START_TEST(tails_and_unaligned) {
  const vkds_type types[] = {VKDS_U32, VKDS_F64};
  for (int k = 0; k < 2; ++k) {
    open_path(PATHS[k]);
    for (int ti = 0; ti < 2; ++ti) {
      vkds_type t = types[ti];
      uint32_t s = size_of(t);
      uint64_t tile = tile_of(t), most = 2 * tile + 8;
      void *data = random_data(t, most, VKDS_OP_PLUS);
      unsigned char *got = malloc(most * s);
      vkds_buffer *in = harness_device_copy(r0, data, most * s), *out = harness_device_copy(r0, NULL, most * s);
      const uint64_t sizes[] = {tile - 3, tile - 1, tile, tile + 2, 2 * tile + 1};
      for (uint64_t shift = 0; shift < 4; ++shift)
        for (size_t si = 0; si < sizeof sizes / sizeof *sizes; ++si) {
          uint64_t n = sizes[si], oshift = (shift + 1) % 4;
          vkds_seq a = vkds_seq_buffer((vkds_view){in, shift * s, n * s}, t);
          vkds_seq b = vkds_seq_buffer((vkds_view){out, oshift * s, n * s}, t);
          bool ex = (shift + si) & 1;
          val init = init_for(t, VKDS_OP_PLUS);
          ck_assert_vkds(scan(pol, &a, &b, ex, NULL, NULL, ex ? init.b : NULL));
          ck_assert_vkds(vkds_download(r0, got, (vkds_view){out, oshift * s, n * s}, n * s));
          check_scan(t, VKDS_OP_PLUS, (char *)data + shift * s, n, ex, ex ? &init : NULL, got, path_name(PATHS[k]));
        }
      vkds_buffer_destroy(in), vkds_buffer_destroy(out);
      free(data), free(got);
    }
    close_ctx();
  }
}
END_TEST

/* ---- transforms: another type, zips, the accumulator is the output's type ---- */

START_TEST(transform_scans) {
  enum { N = 9001 };
  for (int k = 0; k < 2; ++k) {
    open_path(PATHS[k]);
    uint32_t *a = malloc(N * 4), *b = malloc(N * 4);
    uint64_t *wide = malloc(N * 8);
    double *d = malloc(N * 8);
    for (uint32_t i = 0; i < N; ++i) a[i] = 0xf0000000u + i, b[i] = i % 5;
    vkds_seq as = vkds_seq_host(a, N, VKDS_U32), bs = vkds_seq_host(b, N, VKDS_U32);
    vkds_seq ws = vkds_seq_host(wide, N, VKDS_U64), ds = vkds_seq_host(d, N, VKDS_F64);
    /* u32 into u64: no wrap at 2^32 */
    ck_assert_vkds(vkds_inclusive_scan(pol, &as, &ws, NULL, NULL));
    uint64_t acc = 0;
    for (uint32_t i = 0; i < N; ++i) {
      acc += a[i];
      ck_assert_uint_eq(wide[i], acc);
    }
    /* x * 2 as u64, exclusive with init */
    uint64_t init = 7;
    ck_assert_vkds(vkds_transform_exclusive_scan(pol, &as, &ws, "uint64_t(x) * 2ul", NULL, &init));
    acc = 7;
    for (uint32_t i = 0; i < N; ++i) {
      ck_assert_uint_eq(wide[i], acc);
      acc += 2ull * a[i];
    }
    /* a zip through the operator, into doubles, with a user operator */
    vkds_seq parts[2] = {bs, as};
    vkds_seq z = vkds_seq_zip(parts, 2);
    ck_assert_vkds(vkds_transform_inclusive_scan(pol, &z, &ds, "double(x.p0) * 0.5 + double(x.p1 & 1u)",
                                                 &(vkds_op){VKDS_OP_GLSL, "a + b", "0.0"}, NULL));
    double dacc = 0;
    for (uint32_t i = 0; i < N; ++i) {
      dacc += b[i] * 0.5 + (a[i] & 1u);
      ck_assert(d[i] == dacc);
    }
    /* logical_or as a "seen a 4 yet" flag */
    uint32_t *f = malloc(N * 4);
    vkds_seq fs = vkds_seq_host(f, N, VKDS_U32);
    ck_assert_vkds(vkds_transform_inclusive_scan(pol, &bs, &fs, "x == 4u ? 1u : 0u",
                                                 &(vkds_op){.kind = VKDS_OP_LOGICAL_OR}, NULL));
    for (uint32_t i = 0; i < N; ++i) harness_expect_uint_eq(f[i], i >= 4);
    free(a), free(b), free(wide), free(d), free(f);
    close_ctx();
  }
}
END_TEST

/* ---- every sequence kind, in and out ---- */

/* A user type: two sequences end to end, with device code. */
static bool concat_direct(const vkds_seq *s, const vkds_resource *res) {
  const vkds_seq *p = s->user;
  return vkds_seq_is_passed_directly(&p[0], res) && vkds_seq_is_passed_directly(&p[1], res);
}
static vkds_result concat_read(const vkds_seq *s, uint64_t i, void *out) {
  const vkds_seq *p = s->user;
  return i < p[0].count ? vkds_seq_read(&p[0], i, out) : vkds_seq_read(&p[1], i - p[0].count, out);
}
static vkds_result concat_code(const vkds_seq *s, const vkds_resource *res, vkds_seq_device_code *out) {
  (void)res;
  const vkds_seq *p = s->user;
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

/* the inclusive u32 sum of f(i), i < n */
static void check_sums(const uint32_t *got, uint64_t n, uint32_t (*f)(uint64_t, const void *), const void *user,
                       const char *what) {
  uint32_t acc = 0;
  for (uint64_t i = 0; i < n; ++i) {
    acc += f(i, user);
    if (got[i] != acc) ck_abort_msg("%s: [%llu] got %u want %u", what, (unsigned long long)i, got[i], acc);
  }
}
static uint32_t elem_plain(uint64_t i, const void *u) { return ((const uint32_t *)u)[i]; }
typedef struct rev_args { const uint32_t *a; uint64_t n; } rev_args;
static uint32_t elem_rev(uint64_t i, const void *u) { const rev_args *r = u; return r->a[r->n - 1 - i]; }
static uint32_t elem_times3(uint64_t i, const void *u) { return ((const uint32_t *)u)[i] * 3; }
typedef struct perm_args { const uint32_t *a, *map; } perm_args;
static uint32_t elem_perm(uint64_t i, const void *u) { const perm_args *p = u; return p->a[p->map[i]]; }
static uint32_t elem_count(uint64_t i, const void *u) { (void)u; return (uint32_t)(i + 10); }

START_TEST(every_sequence_kind) {
  for (int k = 0; k < 2; ++k) {
    vkds_context_info info = harness_info();
    info.devices_per_physical = 2;
    info.scan_path = PATHS[k];
    ck_assert_vkds(vkds_context_create(&info, &ctx));
    r0 = vkds_context_resource(ctx, 0);
    vkds_resource *r1 = harness_device_resource(ctx, 1);
    ck_assert_ptr_nonnull(r1);
    ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = {.context = ctx}}, &pol));
    enum { N = 9003 };
    uint32_t *host = malloc(N * 4), *map = malloc(N * 4), *out = malloc(N * 4), *back = malloc(N * 4);
    for (uint32_t i = 0; i < N; ++i) host[i] = (uint32_t)(rnd() % 1000), map[i] = (uint32_t)((i * 7ull) % N);
    vkds_buffer *dev = harness_device_copy(r0, host, N * 4), *mapb = harness_device_copy(r0, map, N * 4), *devout = harness_device_copy(r0, NULL, N * 4);
    vkds_buffer *mapped, *other;
    ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = N * 4, .memory = VKDS_MEMORY_MAPPED}, &mapped));
    memcpy(vkds_buffer_map(mapped), host, N * 4);
    ck_assert_vkds(vkds_buffer_create(r1, &(vkds_buffer_info){.size = N * 4}, &other)); /* the second VkDevice */
    ck_assert_vkds(vkds_upload(r1, vkds_view_of(other), host, N * 4));
    uint64_t align = vkds_import_alignment(r0);
    void *imported_mem = NULL;
    vkds_buffer *imported = NULL;
    if (align) {
      uint64_t bytes = (N * 4 + align - 1) / align * align;
      ck_assert_int_eq(posix_memalign(&imported_mem, align, bytes), 0);
      memcpy(imported_mem, host, N * 4);
      ck_assert_vkds(vkds_buffer_import_host(r0, imported_mem, bytes, &imported));
    }
    const char *what = path_name(PATHS[k]);
    vkds_seq outs = vkds_seq_host(out, N, VKDS_U32);

    /* inputs */
    vkds_seq ins[6];
    const char *names[6];
    int n = 0;
    ins[n] = vkds_seq_buffer(vkds_view_of(dev), VKDS_U32), names[n++] = "buffer";
    ins[n] = vkds_seq_mapped(vkds_view_of(mapped), VKDS_U32), names[n++] = "mapped";
    ins[n] = vkds_seq_host(host, N, VKDS_U32), names[n++] = "host";
    ins[n] = vkds_seq_host_const(host, N, VKDS_U32), names[n++] = "host const";
    ins[n] = vkds_seq_buffer(vkds_view_of(other), VKDS_U32), names[n++] = "buffer of device 1";
    if (imported) ins[n] = vkds_seq_host(imported_mem, N, VKDS_U32), names[n++] = "imported host";
    for (int i = 0; i < n; ++i) {
      char w[96];
      memset(out, 0, N * 4);
      ck_assert_vkds(vkds_inclusive_scan(pol, &ins[i], &outs, NULL, NULL));
      snprintf(w, sizeof w, "%s: %s", what, names[i]);
      check_sums(out, N, elem_plain, host, w);
      vkds_seq rev = vkds_seq_reverse(&ins[i]);
      ck_assert_vkds(vkds_inclusive_scan(pol, &rev, &outs, NULL, NULL));
      snprintf(w, sizeof w, "%s: reverse of %s", what, names[i]);
      check_sums(out, N, elem_rev, &(rev_args){host, N}, w);
    }
    /* views */
    vkds_seq src = ins[0], mp = vkds_seq_buffer(vkds_view_of(mapb), VKDS_U32);
    vkds_seq perm = vkds_seq_permutation(&src, &mp);
    ck_assert_vkds(vkds_inclusive_scan(pol, &perm, &outs, NULL, NULL));
    check_sums(out, N, elem_perm, &(perm_args){host, map}, "permutation");
    vkds_seq tv = vkds_seq_transform(&src, &(vkds_transform_op){.glsl = "x * 3u"});
    ck_assert_vkds(vkds_inclusive_scan(pol, &tv, &outs, NULL, NULL));
    check_sums(out, N, elem_times3, host, "transform view");
    vkds_seq cnt = vkds_seq_counting(10, N, VKDS_U32);
    ck_assert_vkds(vkds_inclusive_scan(pol, &cnt, &outs, NULL, NULL));
    check_sums(out, N, elem_count, NULL, "counting");
    vkds_seq halves[2] = {vkds_seq_buffer((vkds_view){dev, 0, 1000 * 4}, VKDS_U32),
                          vkds_seq_buffer((vkds_view){dev, 1000 * 4, (N - 1000) * 4}, VKDS_U32)};
    vkds_seq both = concat(halves);
    ck_assert_vkds(vkds_inclusive_scan(pol, &both, &outs, NULL, NULL));
    check_sums(out, N, elem_plain, host, "user type with device code");
    /* outputs: a device buffer, mapped memory, a reverse view, a scatter, a user type, discard */
    vkds_seq hs = vkds_seq_host_const(host, N, VKDS_U32);
    vkds_seq dos = vkds_seq_buffer(vkds_view_of(devout), VKDS_U32);
    ck_assert_vkds(vkds_inclusive_scan(pol, &hs, &dos, NULL, NULL));
    ck_assert_vkds(vkds_download(r0, back, vkds_view_of(devout), N * 4));
    check_sums(back, N, elem_plain, host, "into a buffer");
    vkds_buffer *mout;
    ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = N * 4, .memory = VKDS_MEMORY_MAPPED}, &mout));
    vkds_seq ms = vkds_seq_mapped(vkds_view_of(mout), VKDS_U32);
    ck_assert_vkds(vkds_inclusive_scan(pol, &hs, &ms, NULL, NULL));
    check_sums(vkds_buffer_map(mout), N, elem_plain, host, "into mapped memory");
    vkds_seq rout = vkds_seq_reverse(&outs);
    ck_assert_vkds(vkds_inclusive_scan(pol, &hs, &rout, NULL, NULL));
    for (uint64_t i = 0; i < N; ++i) back[i] = out[N - 1 - i];
    check_sums(back, N, elem_plain, host, "into a reverse view");
    vkds_seq scatter = vkds_seq_permutation(&outs, &mp);
    ck_assert_vkds(vkds_inclusive_scan(pol, &hs, &scatter, NULL, NULL));
    for (uint64_t i = 0; i < N; ++i) back[i] = out[map[i]];
    check_sums(back, N, elem_plain, host, "into a permutation");
    vkds_seq douts[2] = {vkds_seq_buffer((vkds_view){devout, 0, 4000 * 4}, VKDS_U32),
                         vkds_seq_buffer((vkds_view){devout, 4000 * 4, (N - 4000) * 4}, VKDS_U32)};
    vkds_seq uout = concat(douts);
    ck_assert_vkds(vkds_inclusive_scan(pol, &hs, &uout, NULL, NULL));
    ck_assert_vkds(vkds_download(r0, back, vkds_view_of(devout), N * 4));
    check_sums(back, N, elem_plain, host, "into a user type");
    vkds_seq sink = vkds_seq_discard(N, VKDS_U32);
    ck_assert_vkds(vkds_exclusive_scan(pol, &hs, &sink, NULL, NULL));
    /* into a buffer of the other device (staged there and back) */
    vkds_seq os = vkds_seq_buffer(vkds_view_of(other), VKDS_U32);
    ck_assert_vkds(vkds_inclusive_scan(pol, &hs, &os, NULL, NULL));
    ck_assert_vkds(vkds_download(r1, back, vkds_view_of(other), N * 4));
    check_sums(back, N, elem_plain, host, "into a buffer of device 1");

    vkds_buffer_destroy(dev), vkds_buffer_destroy(mapb), vkds_buffer_destroy(devout), vkds_buffer_destroy(mapped);
    vkds_buffer_destroy(other), vkds_buffer_destroy(mout), vkds_buffer_destroy(imported);
    free(imported_mem), free(host), free(map), free(out), free(back);
    close_ctx();
  }
}
END_TEST

/* ---- in place ---- */

START_TEST(in_place) {
  enum { N = 50001 };
  for (int k = 0; k < 2; ++k) {
    open_path(PATHS[k]);
    uint32_t *a = random_data(VKDS_U32, N, VKDS_OP_PLUS), *orig = malloc(N * 4);
    memcpy(orig, a, N * 4);
    vkds_seq as = vkds_seq_host(a, N, VKDS_U32);
    ck_assert_vkds(vkds_inclusive_scan(pol, &as, &as, NULL, NULL));
    check_scan(VKDS_U32, VKDS_OP_PLUS, orig, N, false, NULL, a, "in place, host");
    double *d = random_data(VKDS_F64, N, VKDS_OP_MAX), *dorig = malloc(N * 8), *back = malloc(N * 8);
    memcpy(dorig, d, N * 8);
    vkds_buffer *b = harness_device_copy(r0, d, N * 8);
    vkds_seq bs = vkds_seq_buffer(vkds_view_of(b), VKDS_F64);
    double init = -1e300;
    ck_assert_vkds(vkds_exclusive_scan(pol, &bs, &bs, &(vkds_op){.kind = VKDS_OP_MAX}, &init));
    ck_assert_vkds(vkds_download(r0, back, vkds_view_of(b), N * 8));
    val iv = val_double(VKDS_F64, init);
    check_scan(VKDS_F64, VKDS_OP_MAX, dorig, N, true, &iv, back, "in place, buffer");
    ck_assert_vkds(vkds_transform_inclusive_scan(pol, &bs, &bs, "x * 0.0 + 1.0", NULL, NULL)); /* 1, 2, 3, ... */
    ck_assert_vkds(vkds_download(r0, back, vkds_view_of(b), N * 8));
    for (uint32_t i = 0; i < N; ++i) harness_expect(back[i] == i + 1.0);
    vkds_buffer_destroy(b);
    /* the same memory as a buffer and as a mapped sequence is in place too (with every
     * tile reducing its predecessor, a single pass here would read overwritten input) */
    harness_setenv("VKDS_SCAN_SPINS", "-1");
    vkds_buffer *m;
    ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = N * 4, .memory = VKDS_MEMORY_MAPPED}, &m));
    memcpy(vkds_buffer_map(m), orig, N * 4);
    vkds_seq mb = vkds_seq_buffer(vkds_view_of(m), VKDS_U32), mm = vkds_seq_mapped(vkds_view_of(m), VKDS_U32);
    ck_assert_vkds(vkds_inclusive_scan(pol, &mb, &mm, NULL, NULL));
    check_scan(VKDS_U32, VKDS_OP_PLUS, orig, N, false, NULL, vkds_buffer_map(m), "in place, buffer and mapped");
    vkds_buffer_destroy(m);
    /* in place through the same views of the same memory (the view itself, or another
     * built alike): element i is read and written at one place, as in place plainly.
     * Reversed, the scan is a suffix sum. With every tile's predecessor reduced again
     * (spins -1), a single pass would read overwritten input: in place goes portable. */
    uint32_t *r = malloc(N * 4), *want = malloc(N * 4);
    memcpy(r, orig, N * 4);
    vkds_seq rs = vkds_seq_host(r, N, VKDS_U32), rev = vkds_seq_reverse(&rs), rev2 = vkds_seq_reverse(&rs);
    ck_assert_vkds(vkds_inclusive_scan(pol, &rev, &rev, NULL, NULL));
    uint32_t acc = 0;
    for (uint32_t i = N; i-- > 0;) want[i] = acc += orig[i];
    for (uint32_t i = 0; i < N; ++i) harness_expect_uint_eq(r[i], want[i]);
    vkds_buffer *rb = harness_device_copy(r0, orig, N * 4);
    vkds_seq rbs = vkds_seq_buffer(vkds_view_of(rb), VKDS_U32), rbv = vkds_seq_reverse(&rbs), rbv2 = vkds_seq_reverse(&rbs);
    ck_assert_vkds(vkds_inclusive_scan(pol, &rbv, &rbv2, NULL, NULL));
    ck_assert_vkds(vkds_download(r0, r, vkds_view_of(rb), N * 4));
    for (uint32_t i = 0; i < N; ++i) harness_expect_uint_eq(r[i], want[i]);
    vkds_buffer_destroy(rb);
    /* a user type in place (its value given as input and output) is in place too: taken
     * for two sequences, the scan took the single pass over memory it overwrote (a
     * probe: 295,904 of 300,000 wrong with VKDS_SCAN_CHAINED=off) */
    harness_setenv("VKDS_SCAN_CHAINED", "off");
    vkds_buffer *ub = harness_device_copy(r0, orig, N * 4);
    vkds_seq uhalves[2] = {vkds_seq_buffer((vkds_view){ub, 0, 1000 * 4}, VKDS_U32),
                           vkds_seq_buffer((vkds_view){ub, 1000 * 4, (N - 1000) * 4}, VKDS_U32)};
    vkds_seq uin = concat(uhalves), uout = concat(uhalves);
    ck_assert_vkds(vkds_inclusive_scan(pol, &uin, &uout, NULL, NULL));
    ck_assert_vkds(vkds_download(r0, r, vkds_view_of(ub), N * 4));
    check_scan(VKDS_U32, VKDS_OP_PLUS, orig, N, false, NULL, r, "in place, a user type");
    vkds_buffer_destroy(ub);
    (void)rev2;
    free(r), free(want);
    free(a), free(orig), free(d), free(dorig), free(back);
    close_ctx();
  }
}
END_TEST

/* ---- host data past the staging ring: streamed chunk by chunk, carrying the prefix ---- */

START_TEST(host_larger_than_staging_ring) {
  enum { N = 3 << 20 }; /* 12 MiB of u32 */
  for (int k = 0; k < 2; ++k) {
    vkds_context_info info = harness_info();
    info.staging_chunks = 2;
    info.staging_chunk_bytes = 256 << 10;
    info.scan_path = PATHS[k];
    ck_assert_vkds(vkds_context_create(&info, &ctx));
    r0 = vkds_context_resource(ctx, 0);
    ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = {.context = ctx}}, &pol));
    uint32_t *a = random_data(VKDS_U32, N, VKDS_OP_PLUS), *b = malloc(N * 4);
    vkds_seq as = vkds_seq_host(a, N, VKDS_U32), bs = vkds_seq_host(b, N, VKDS_U32);
    ck_assert_vkds(vkds_inclusive_scan(pol, &as, &bs, NULL, NULL));
    check_scan(VKDS_U32, VKDS_OP_PLUS, a, N, false, NULL, b, path_name(PATHS[k]));
    uint32_t init = 99;
    val iv = val_bits(VKDS_U32, init);
    vkds_submission *sub;
    ck_assert_vkds(vkds_exclusive_scan_async(pol, &as, &bs, NULL, &init, &sub));
    vkds_memory_stats st; /* streamed: no device memory of the data's size */
    ck_assert_vkds(vkds_memory_get_stats(r0, &st));
    ck_assert_msg(st.used_bytes < 3 << 20, "%llu bytes in use while streaming", (unsigned long long)st.used_bytes);
    ck_assert_vkds(vkds_submission_wait(sub));
    vkds_submission_release(sub);
    check_scan(VKDS_U32, VKDS_OP_PLUS, a, N, true, &iv, b, path_name(PATHS[k]));
    /* in place, streamed */
    memcpy(b, a, N * 4);
    ck_assert_vkds(vkds_transform_inclusive_scan(pol, &bs, &bs, "x ^ 1u", &(vkds_op){.kind = VKDS_OP_BIT_XOR}, NULL));
    for (uint32_t i = 0; i < N; ++i) a[i] ^= 1u;
    check_scan(VKDS_U32, VKDS_OP_BIT_XOR, a, N, false, NULL, b, "in place, streamed");
    free(a), free(b);
    close_ctx();
  }
}
END_TEST

/* ---- the forms ---- */

START_TEST(asynchronous_form) {
  enum { N = 70001 };
  for (int k = 0; k < 2; ++k) {
    open_path(PATHS[k]);
    float *a = malloc(N * 4), *b = malloc(N * 4), *c = malloc(N * 4);
    for (int i = 0; i < N; ++i) a[i] = (float)(i % 17);
    vkds_seq as = vkds_seq_host(a, N, VKDS_F32), bs = vkds_seq_host(b, N, VKDS_F32), cs = vkds_seq_host(c, N, VKDS_F32);
    vkds_submission *s1, *s2;
    ck_assert_vkds(vkds_inclusive_scan_async(pol, &as, &bs, NULL, NULL, &s1));
    ck_assert_vkds(vkds_transform_exclusive_scan_async(pol, &as, &cs, "x * 2.0", &(vkds_op){.kind = VKDS_OP_MAX}, NULL, &s2));
    vkds_result r;
    while ((r = vkds_submission_poll(s1)) == VKDS_ERROR_WOULD_BLOCK) usleep(100);
    ck_assert_vkds(r);
    check_scan(VKDS_F32, VKDS_OP_PLUS, a, N, false, NULL, b, "async");
    vkds_submission_release(s2); /* unwaited: the release finishes it */
    ck_assert(c[0] == -INFINITY);
    for (int i = 1; i < N; ++i) harness_expect(c[i] == (i >= 17 ? 32.0f : (float)((i - 1) % 17) * 2.0f));
    vkds_submission_release(s1);
    free(a), free(b), free(c);
    close_ctx();
  }
}
END_TEST

/* The single pass's tile for u32 plus below 2^22 elements: scan_chained.glsl's shape
 * VKDS_SCAN_CHAINED=TxR (4 T R elements), by default 256 x 4 (4,096); scan_single.glsl's
 * 4,096 with =off. */
static uint64_t u32_single_tile(void) {
  const char *v = getenv("VKDS_SCAN_CHAINED");
  unsigned threads, runs;
  return v && sscanf(v, "%ux%u", &threads, &runs) == 2 ? 4ull * threads * runs : 4096;
}

/* The single pass's fallbacks counted in a scan's scratch (scan_tile.glsl's layout). */
static uint32_t fallbacks(const vkds_buffer *scratch, uint64_t offset) {
  uint32_t f;
  memcpy(&f, (const char *)vkds_buffer_map(scratch) + offset + 36, 4);
  return f;
}

START_TEST(recording_form) {
  enum { N = 40000 };
  for (int k = 0; k < 2; ++k) {
    open_path(PATHS[k]);
    uint32_t *host = random_data(VKDS_U32, N, VKDS_OP_PLUS), *got = malloc(N * 4);
    vkds_buffer *in = harness_device_copy(r0, host, N * 4), *out = harness_device_copy(r0, NULL, N * 4), *out2 = harness_device_copy(r0, NULL, N * 4);
    uint64_t bytes = vkds_algorithm_scratch_bytes(r0, N);
    vkds_buffer *scratch;
    ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = bytes, .memory = VKDS_MEMORY_MAPPED}, &scratch));
    app_cmd a = {0};
    app_cmd_begin(&a, r0);
    vkds_cmd c = {.cmd = a.cmd, .resource = r0, .scratch = vkds_view_of(scratch)};
    vkds_seq is = vkds_seq_buffer(vkds_view_of(in), VKDS_U32), os = vkds_seq_buffer(vkds_view_of(out), VKDS_U32);
    vkds_seq os2 = vkds_seq_buffer(vkds_view_of(out2), VKDS_U32);
    uint32_t init = 5;
    val iv = val_bits(VKDS_U32, init);
    harness_setenv("VKDS_SCAN_SPINS", "-1"); /* every tile also reduces its predecessor */
    ck_assert_vkds(vkds_cmd_exclusive_scan(&c, &is, &os, NULL, &init));
    /* the same scratch again: the first scan is done with it before (barriers) */
    ck_assert_vkds(vkds_cmd_transform_inclusive_scan(&c, &os, &os2, "x + 1u", NULL, NULL));
    /* what cannot be recorded: host data, too little or misaligned scratch */
    vkds_seq hs = vkds_seq_host(host, N, VKDS_U32);
    ck_assert_int_eq(vkds_cmd_inclusive_scan(&c, &hs, &os, NULL, NULL), VKDS_ERROR_INVALID_ARGUMENT);
    vkds_cmd small = {.cmd = a.cmd, .resource = r0, .scratch = (vkds_view){scratch, 0, 64}};
    ck_assert_int_eq(vkds_cmd_inclusive_scan(&small, &is, &os, NULL, NULL), VKDS_ERROR_INVALID_ARGUMENT);
    vkds_cmd skewed = {.cmd = a.cmd, .resource = r0, .scratch = (vkds_view){scratch, 4, bytes - 4}};
    ck_assert_int_eq(vkds_cmd_inclusive_scan(&skewed, &is, &os, NULL, NULL), VKDS_ERROR_INVALID_ARGUMENT);
    app_cmd_submit(&a, 10);
    ck_assert_vkds(vkds_download(r0, got, vkds_view_of(out), N * 4));
    check_scan(VKDS_U32, VKDS_OP_PLUS, host, N, true, &iv, got, "recorded");
    uint32_t *want2 = malloc(N * 4), acc = 0;
    for (uint32_t i = 0; i < N; ++i) want2[i] = acc += got[i] + 1;
    ck_assert_vkds(vkds_download(r0, got, vkds_view_of(out2), N * 4));
    ck_assert(memcmp(got, want2, N * 4) == 0);
    if (PATHS[k] == VKDS_SCAN_PATH_SINGLE) /* the second scan's: one per tile after the first */
      ck_assert_uint_eq(fallbacks(scratch, 0), (N + u32_single_tile() - 1) / u32_single_tile() - 1);
    app_cmd_destroy(&a);
    vkds_buffer_destroy(in), vkds_buffer_destroy(out), vkds_buffer_destroy(out2), vkds_buffer_destroy(scratch);
    free(host), free(got), free(want2);
    close_ctx();
  }
}
END_TEST

/* 10,000 single-pass scans on lavapipe (no forward progress between groups): recorded
 * 100 to a command buffer, each with its own scratch and output, spins of 0, the default
 * and the forced fallback in turn, and three shapes in turn (the chained tiles of 20,480
 * elements, up to 3 a scan, and of 4,096, up to 11; scan_single.glsl's of 4,096); every
 * element checked, every wait bounded. */
START_TEST(ten_thousand_single_pass_scans) {
  open_path(VKDS_SCAN_PATH_SINGLE);
  enum { PER = 100, MOST = 2 * 20480 + 77 };
  const int ROUNDS = harness_rounds(100); /* 1,000 scans in the sanitizer stages */
  uint32_t *host = random_data(VKDS_U32, MOST + PER, VKDS_OP_PLUS), *got = malloc((size_t)PER * MOST * 4);
  uint32_t *want = malloc((MOST + PER) * 4);
  vkds_buffer *in = harness_device_copy(r0, host, (MOST + PER) * 4), *out = harness_device_copy(r0, NULL, (uint64_t)PER * MOST * 4);
  uint64_t slot = (vkds_algorithm_scratch_bytes(r0, MOST) + 255) / 256 * 256;
  vkds_buffer *scratch;
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = slot * PER, .memory = VKDS_MEMORY_MAPPED}, &scratch));
  app_cmd a = {0};
  uint64_t sizes[PER], total_fallbacks = 0;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  harness_setenv("VKDS_SCAN_SPINS", NULL); /* the fixture puts it back as it was */
  harness_setenv("VKDS_SCAN_CHAINED", NULL);
  for (int round = 0; round < ROUNDS; ++round) {
    const char *spins = round % 3 == 0 ? "0" : round % 3 == 1 ? "-1" : NULL;
    if (spins) setenv("VKDS_SCAN_SPINS", spins, 1);
    else unsetenv("VKDS_SCAN_SPINS");
    if (round % 2) setenv("VKDS_SCAN_CHAINED", "off", 1);
    else if (round % 4 == 0) setenv("VKDS_SCAN_CHAINED", "1024x5", 1);
    else unsetenv("VKDS_SCAN_CHAINED"); /* the chained default at these sizes: 256 x 4 */
    app_cmd_begin(&a, r0);
    for (int s = 0; s < PER; ++s) {
      sizes[s] = 1 + rnd() % MOST;
      vkds_cmd c = {.cmd = a.cmd, .resource = r0, .scratch = (vkds_view){scratch, s * slot, slot}};
      vkds_seq is = vkds_seq_buffer((vkds_view){in, (uint64_t)s * 4, sizes[s] * 4}, VKDS_U32);
      vkds_seq os = vkds_seq_buffer((vkds_view){out, (uint64_t)s * MOST * 4, sizes[s] * 4}, VKDS_U32);
      ck_assert_vkds(vkds_cmd_inclusive_scan(&c, &is, &os, NULL, NULL));
    }
    app_cmd_submit(&a, 10);
    ck_assert_vkds(vkds_download(r0, got, vkds_view_of(out), (uint64_t)PER * MOST * 4));
    for (int s = 0; s < PER; ++s) {
      uint32_t acc = 0;
      for (uint64_t i = 0; i < sizes[s]; ++i) {
        acc += host[s + i];
        if (got[(size_t)s * MOST + i] != acc)
          ck_abort_msg("round %d scan %d (n %llu, spins %s): [%llu] got %u want %u", round, s,
                       (unsigned long long)sizes[s], spins ? spins : "default", (unsigned long long)i,
                       got[(size_t)s * MOST + i], acc);
      }
      uint32_t f = fallbacks(scratch, s * slot);
      if (round % 3 == 1) /* forced: one per tile after the first */
        ck_assert_uint_eq(f, (sizes[s] + u32_single_tile() - 1) / u32_single_tile() - 1);
      total_fallbacks += f;
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  fprintf(stderr, "%d single-pass scans: %.2f s, %llu fallbacks\n", ROUNDS * PER,
          (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9, (unsigned long long)total_fallbacks);
  app_cmd_destroy(&a);
  vkds_buffer_destroy(in), vkds_buffer_destroy(out), vkds_buffer_destroy(scratch);
  free(host), free(got), free(want);
  close_ctx();
}
END_TEST

/* Every shape of the chained single pass (scan.c SHAPES: the rule's 256x4, 512x4, 512x5
 * and 512x8, and 1024x5, which only VKDS_SCAN_CHAINED asks for; the tile kept in
 * registers (256x4) or read again by the stores (the others)), i32 and u32 under each
 * operator it takes, inclusive and exclusive with init, sizes around its tiles, with the
 * forced fallback (every tile also reduces its predecessor) and without. */
START_TEST(chained_shapes) {
  static const char *shapes[] = {"1024x5", "512x8", "512x5", "512x4", "256x4"};
  static const uint64_t sizes[] = {1, 4097, 20480, 40963};
  static const int ops[] = {VKDS_OP_PLUS, VKDS_OP_MULTIPLIES, VKDS_OP_MIN, VKDS_OP_MAX, VKDS_OP_BIT_XOR};
  open_path(VKDS_SCAN_PATH_SINGLE);
  for (size_t h = 0; h < sizeof shapes / sizeof shapes[0]; ++h) {
    harness_setenv("VKDS_SCAN_CHAINED", shapes[h]);
    harness_setenv("VKDS_SCAN_SPINS", h % 2 ? "-1" : NULL);
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; ++z) {
      vkds_type t = z % 2 ? VKDS_I32 : VKDS_U32;
      int op = ops[(h + z) % (sizeof ops / sizeof ops[0])];
      uint64_t n = sizes[z];
      void *host = random_data(t, n, op), *got = malloc(n * 4);
      vkds_buffer *in = harness_device_copy(r0, host, n * 4), *out = harness_device_copy(r0, NULL, n * 4);
      vkds_seq is = vkds_seq_buffer(vkds_view_of(in), t), os = vkds_seq_buffer(vkds_view_of(out), t);
      val init = init_for(t, op);
      for (int ex = 0; ex < 2; ++ex) {
        ck_assert_vkds(scan(pol, &is, &os, ex, NULL, &(vkds_op){.kind = op}, ex ? init.b : NULL));
        ck_assert_vkds(vkds_download(r0, got, vkds_view_of(out), n * 4));
        check_scan(t, op, host, n, ex, ex ? &init : NULL, got, shapes[h]);
      }
      vkds_buffer_destroy(in), vkds_buffer_destroy(out);
      free(host), free(got);
    }
  }
  close_ctx();
}
END_TEST

/* ---- the rule, the query, the overrides ---- */

/* The path a context created with `info` gives resource 0. */
static vkds_scan_path path_of(const vkds_context_info *info) {
  ck_assert_vkds(vkds_context_create(info, &ctx));
  vkds_scan_path p = vkds_resource_scan_path(vkds_context_resource(ctx, 0));
  vkds_context_destroy(ctx);
  ctx = NULL;
  return p;
}

START_TEST(path_rule_and_overrides) {
  ck_assert_int_eq(vkds_resource_scan_path(NULL), VKDS_SCAN_PATH_DEFAULT);
  harness_setenv("VKDS_SCAN_PATH", NULL);
  vkds_context_info info = harness_info();
  ck_assert_int_eq(path_of(&info), VKDS_SCAN_PATH_PORTABLE); /* lavapipe is a CPU device */
  info.scan_path = VKDS_SCAN_PATH_SINGLE;
  ck_assert_int_eq(path_of(&info), VKDS_SCAN_PATH_SINGLE); /* it can run the single pass when asked */
  harness_setenv("VKDS_SCAN_PATH", "single");
  info.scan_path = VKDS_SCAN_PATH_DEFAULT;
  ck_assert_int_eq(path_of(&info), VKDS_SCAN_PATH_SINGLE); /* the environment */
  info.scan_path = VKDS_SCAN_PATH_PORTABLE;
  ck_assert_int_eq(path_of(&info), VKDS_SCAN_PATH_PORTABLE); /* the info wins over it */
  info.scan_path = VKDS_SCAN_PATH_DEFAULT;
  info.ignore_env = true;
  ck_assert_int_eq(path_of(&info), VKDS_SCAN_PATH_PORTABLE); /* unless the environment is ignored */
  harness_setenv("VKDS_SCAN_PATH", "fast");
  info = harness_info();
  ck_assert_int_eq(vkds_context_create(&info, &ctx), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_msg(strstr(vkds_last_error_message(), "VKDS_SCAN_PATH"), "%s", vkds_last_error_message());
  info.scan_path = (vkds_scan_path)7;
  ck_assert_int_eq(vkds_context_create(&info, &ctx), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_null(ctx);
}
END_TEST

/* ---- bad input: a named error, nothing submitted, nothing written ---- */

START_TEST(bad_input) {
  open_path(VKDS_SCAN_PATH_SINGLE);
  uint32_t a[16] = {1, 2, 3}, b[16], c[8];
  memset(b, 0x77, sizeof b);
  vkds_seq as = vkds_seq_host(a, 16, VKDS_U32), bs = vkds_seq_host(b, 16, VKDS_U32), cs = vkds_seq_host(c, 8, VKDS_U32);
  vkds_policy_resource_stats before, after;
  ck_assert_vkds(vkds_policy_get_resource_stats(pol, 0, &before));
  const vkds_result E = VKDS_ERROR_INVALID_ARGUMENT;
  ck_assert_int_eq(vkds_inclusive_scan(pol, &as, &cs, NULL, NULL), E);                       /* counts */
  ck_assert_int_eq(vkds_exclusive_scan(pol, &cs, &bs, NULL, NULL), E);
  vkds_seq ro = vkds_seq_host_const(b, 16, VKDS_U32);
  ck_assert_int_eq(vkds_inclusive_scan(pol, &as, &ro, NULL, NULL), E);                       /* read-only output */
  vkds_seq cnt = vkds_seq_counting(0, 16, VKDS_U32);
  ck_assert_int_eq(vkds_inclusive_scan(pol, &as, &cnt, NULL, NULL), E);                      /* counting output */
  vkds_seq tv = vkds_seq_transform(&bs, &(vkds_transform_op){.glsl = "x"});
  ck_assert_int_eq(vkds_inclusive_scan(pol, &as, &tv, NULL, NULL), E);                       /* transform output */
  vkds_seq shifted = vkds_seq_host(a + 1, 15, VKDS_U32), front = vkds_seq_host(a, 15, VKDS_U32);
  ck_assert_int_eq(vkds_inclusive_scan(pol, &front, &shifted, NULL, NULL), E);               /* overlap */
  vkds_seq rev = vkds_seq_reverse(&as);
  ck_assert_int_eq(vkds_inclusive_scan(pol, &rev, &as, NULL, NULL), E);                      /* in place, another shape */
  uint32_t m16[16];
  for (int i = 0; i < 16; ++i) m16[i] = (uint32_t)(15 - i);
  vkds_seq ms = vkds_seq_host(m16, 16, VKDS_U32), perm = vkds_seq_permutation(&as, &ms);
  ck_assert_int_eq(vkds_inclusive_scan(pol, &perm, &perm, NULL, NULL), E);                   /* in place, permuted */
  ck_assert_msg(strstr(vkds_last_error_message(), "permutation"), "%s", vkds_last_error_message());
  vkds_seq writes_map = vkds_seq_permutation(&ms, &ms);
  ck_assert_int_eq(vkds_inclusive_scan(pol, &bs, &writes_map, NULL, NULL), E);              /* writes its own map */
  ck_assert_int_eq(vkds_inclusive_scan(pol, &as, &bs, &(vkds_op){.kind = 42}, NULL), E);     /* operators */
  ck_assert_int_eq(vkds_inclusive_scan(pol, &as, &bs, &(vkds_op){VKDS_OP_GLSL, "a + b", NULL}, NULL), E);
  ck_assert_int_eq(vkds_inclusive_scan(pol, &as, &bs, &(vkds_op){VKDS_OP_GLSL, NULL, "0u"}, NULL), E);
  float f[16];
  vkds_seq fs = vkds_seq_host(f, 16, VKDS_F32);
  ck_assert_int_eq(vkds_inclusive_scan(pol, &as, &fs, &(vkds_op){.kind = VKDS_OP_BIT_XOR}, NULL), E);
  ck_assert_int_eq(vkds_inclusive_scan(NULL, &as, &bs, NULL, NULL), E);                      /* NULLs */
  ck_assert_int_eq(vkds_inclusive_scan(pol, NULL, &bs, NULL, NULL), E);
  ck_assert_int_eq(vkds_exclusive_scan(pol, &as, NULL, NULL, NULL), E);
  ck_assert_int_eq(vkds_transform_inclusive_scan(pol, &as, &bs, NULL, NULL, NULL), E);
  ck_assert_int_eq(vkds_transform_exclusive_scan(pol, &as, &bs, NULL, NULL, NULL), E);
  ck_assert_int_eq(vkds_inclusive_scan_async(pol, &as, &bs, NULL, NULL, NULL), E);
  vkds_seq invalid = {0};
  ck_assert_int_eq(vkds_inclusive_scan(pol, &invalid, &bs, NULL, NULL), E);
  vkds_seq zp[2] = {as, bs};
  vkds_seq z = vkds_seq_zip(zp, 2);
  ck_assert_int_eq(vkds_inclusive_scan(pol, &z, &bs, NULL, NULL), E);                         /* a zip needs a transform */
  ck_assert_int_eq(vkds_inclusive_scan(pol, &as, &z, NULL, NULL), E);
  ck_assert_int_eq(vkds_cmd_inclusive_scan(NULL, &as, &bs, NULL, NULL), E);
  ck_assert_int_eq(vkds_transform_inclusive_scan(pol, &as, &bs, "x +* 2u", NULL, NULL), VKDS_ERROR_COMPILE);
  ck_assert_msg(strstr(vkds_last_error_message(), "x +* 2u"), "%s", vkds_last_error_message());
  ck_assert_int_eq(vkds_inclusive_scan(pol, &as, &bs, &(vkds_op){VKDS_OP_GLSL, "a ** b", "0u"}, NULL), VKDS_ERROR_COMPILE);
  /* a sequence of another context */
  vkds_context *other = harness_context();
  vkds_buffer *ob;
  ck_assert_vkds(vkds_buffer_create(vkds_context_resource(other, 0), &(vkds_buffer_info){.size = 64}, &ob));
  vkds_seq os = vkds_seq_buffer(vkds_view_of(ob), VKDS_U32);
  ck_assert_int_eq(vkds_inclusive_scan(pol, &os, &bs, NULL, NULL), VKDS_ERROR_WRONG_CONTEXT);
  ck_assert_int_eq(vkds_exclusive_scan(pol, &as, &os, NULL, NULL), VKDS_ERROR_WRONG_CONTEXT);
  vkds_buffer_destroy(ob);
  vkds_context_destroy(other);

  for (int i = 0; i < 16; ++i) ck_assert_uint_eq(b[i], 0x77777777u); /* nothing written */
  ck_assert_vkds(vkds_policy_get_resource_stats(pol, 0, &after));
  /* the compile errors selected (the code is built for the selected device), nothing else did */
  ck_assert_uint_le(after.selections, before.selections + 2);
  close_ctx();
}
END_TEST

/* The single pass is one dispatch of a work group a tile, launched in the 32-bit
 * work-item range: past 2^32 - 1 threads (2^36 4-byte elements in the general tiles,
 * 2^37 in the chained ones) a scan is UNSUPPORTED as one scan's limit, before anything
 * is made; it was VKDS_ERROR_ND_RANGE naming the kernel's range type (views of no
 * memory, so nothing runs here). */
START_TEST(single_pass_thread_range) {
  open_path(VKDS_SCAN_PATH_SINGLE);
  const uint64_t general = (1ull << 36) + 4096, chained = (1ull << 37) + 16384;
  vkds_seq c1 = vkds_seq_counting(0, general, VKDS_U64), d1 = vkds_seq_discard(general, VKDS_F32);
  vkds_seq f = vkds_seq_transform(&c1, &(vkds_transform_op){.glsl = "float(x & 1ul)", .type = VKDS_F32});
  ck_assert_int_eq(vkds_inclusive_scan(pol, &f, &d1, NULL, NULL), VKDS_ERROR_UNSUPPORTED);
  ck_assert_msg(strstr(vkds_last_error_message(), "more than one scan takes"), "%s", vkds_last_error_message());
  vkds_seq c2 = vkds_seq_counting(0, chained, VKDS_U64), d2 = vkds_seq_discard(chained, VKDS_U32);
  vkds_seq u = vkds_seq_transform(&c2, &(vkds_transform_op){.glsl = "uint(x)", .type = VKDS_U32});
  ck_assert_int_eq(vkds_exclusive_scan(pol, &u, &d2, NULL, NULL), VKDS_ERROR_UNSUPPORTED); /* chained tiles */
  ck_assert_msg(strstr(vkds_last_error_message(), "more than one scan takes"), "%s", vkds_last_error_message());
  close_ctx();
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
  enum { N = 30000 };
  uint32_t *a = malloc(N * 4), *b = malloc(N * 4);
  uint64_t *c = malloc(N * 8);
  for (int round = 0; round < 10; ++round) {
    for (uint32_t i = 0; i < N; ++i) a[i] = (uint32_t)(i * 31 + w->id * 7 + round) % 1000;
    vkds_seq as = vkds_seq_host(a, N, VKDS_U32), bs = vkds_seq_host(b, N, VKDS_U32), cs = vkds_seq_host(c, N, VKDS_U64);
    vkds_submission *s = NULL;
    if (vkds_inclusive_scan_async(w->pol, &as, &bs, NULL, NULL, &s) != VKDS_SUCCESS) ++w->failures;
    /* the operator differs per thread: kernels are compiled and cached concurrently */
    char op[48];
    snprintf(op, sizeof op, "uint64_t(x) + %dul", w->id % 3);
    uint64_t init = 1;
    if (vkds_transform_exclusive_scan(w->pol, &as, &cs, op, NULL, &init) != VKDS_SUCCESS) ++w->failures;
    if (vkds_submission_wait(s) != VKDS_SUCCESS) ++w->failures;
    vkds_submission_release(s);
    uint32_t acc = 0;
    uint64_t wide = 1;
    for (uint32_t i = 0; i < N; ++i) {
      acc += a[i];
      w->failures += b[i] != acc || c[i] != wide;
      wide += a[i] + (uint64_t)(w->id % 3);
    }
  }
  free(a), free(b), free(c);
  return NULL;
}

/* Several threads through one policy over two VkDevices (dynamic load), asynchronous
 * and blocking scans mixed, on the single pass. */
START_TEST(threads_share_a_policy) {
  vkds_context_info info = harness_info();
  info.devices_per_physical = 2;
  info.scan_path = VKDS_SCAN_PATH_SINGLE;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_DYNAMIC_LOAD, .resources = {.context = ctx}}, &pol));
  enum { T = 4 };
  pthread_t th[T];
  worker w[T];
  for (int i = 0; i < T; ++i) {
    w[i] = (worker){.pol = pol, .id = i};
    ck_assert_int_eq(pthread_create(&th[i], NULL, work, &w[i]), 0);
  }
  for (int i = 0; i < T; ++i) {
    pthread_join(th[i], NULL);
    ck_assert_int_eq(w[i].failures, 0);
  }
  close_ctx();
}
END_TEST

/* The portable path's whole tiles through shared memory, which the rule gives GPUs and
 * not lavapipe (scan.c): forced for the tcase's tests. */
static void shared_tiles_on(void) { harness_setenv("VKDS_SCAN_TILES", "shared"); }
static void shared_tiles_off(void) { harness_setenv("VKDS_SCAN_TILES", NULL); }

int main(void) {
  Suite *s = suite_create("scan");
  TCase *t = harness_long_tcase("operators");
  tcase_add_loop_test(t, every_type_and_operator, 0, (int)(sizeof TYPES / sizeof *TYPES));
  suite_add_tcase(s, t);
  t = harness_tcase("transforms");
  tcase_add_test(t, transform_scans);
  suite_add_tcase(s, t);
  t = harness_tcase("sizes");
  tcase_add_test(t, powers_of_two);
  tcase_add_test(t, float_bits_repeat);
  tcase_add_test(t, float_min_max_skip_nans);
  tcase_add_test(t, tails_and_unaligned);
  suite_add_tcase(s, t);
  t = harness_tcase("sequences");
  tcase_add_test(t, every_sequence_kind);
  tcase_add_test(t, in_place);
  tcase_add_test(t, host_larger_than_staging_ring);
  suite_add_tcase(s, t);
  t = harness_long_tcase("shared_tiles");
  tcase_add_checked_fixture(t, shared_tiles_on, shared_tiles_off);
  tcase_add_test(t, tails_and_unaligned); /* 4- and 8-byte values, whole and partial tiles */
  tcase_add_test(t, transform_scans);
  tcase_add_test(t, every_sequence_kind); /* views, host, mapped, the second device */
  tcase_add_test(t, non_commutative_over_groups);
  suite_add_tcase(s, t);
  t = harness_tcase("forms");
  tcase_add_test(t, asynchronous_form);
  tcase_add_test(t, recording_form);
  suite_add_tcase(s, t);
  t = harness_tcase("single_pass");
  tcase_add_test(t, ten_thousand_single_pass_scans);
  tcase_add_test(t, chained_shapes);
  tcase_add_test(t, path_rule_and_overrides);
  suite_add_tcase(s, t);
  t = harness_tcase("threads");
  tcase_add_test(t, threads_share_a_policy);
  suite_add_tcase(s, t);
  t = harness_tcase("errors");
  tcase_add_test(t, bad_input);
  tcase_add_test(t, single_pass_thread_range);
  suite_add_tcase(s, t);
  return harness_run(s);
}
