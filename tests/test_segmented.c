/* tests/test_segmented.c: scans by key and reduce by key (vkds/algorithm.h, "by key") on
 * lavapipe, validation on, on both scan paths forced: every value type against a host
 * reference with segments of one element, of the whole input, short runs and runs across
 * tiles, at the sizes where tiles change; operators (built-in, user GLSL, a
 * non-commutative one) with and without init; float bits that repeat (also through the
 * single pass's fallback); 2^24 + 1 elements; keys of other types (NaN and -0 among
 * floats, 64-bit, a zip of two), every sequence kind in and out (views, a second
 * VkDevice, ranges off 16-byte alignment), values converted to a wider output, short
 * outputs for reduce by key; the three forms; 500 recorded single-pass scans of 8-byte
 * pairs with spins 0, forced fallbacks and the default; bad input (a named error,
 * nothing selected, nothing written). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app_cmd.h"
#include "harness.h"
#include "values.h"

static const vkds_scan_path PATHS[] = {VKDS_SCAN_PATH_SINGLE, VKDS_SCAN_PATH_PORTABLE};
static const char *path_name(vkds_scan_path p) { return p == VKDS_SCAN_PATH_SINGLE ? "single" : "portable"; }

static vkds_context *ctx;
static vkds_resource *r0;
static vkds_policy *pol;

static void open_path(vkds_scan_path path) {
  vkds_context_info info = harness_info();
  info.scan_path = path;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  r0 = vkds_context_resource(ctx, 0);
  ck_assert_int_eq(vkds_resource_scan_path(r0), path);
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = {.context = ctx}}, &pol));
}
static void close_ctx(void) {
  vkds_policy_release(pol);
  vkds_context_destroy(ctx);
  pol = NULL, ctx = NULL;
}

static uint64_t rng_state = 0x243f6a8885a308d3ull;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
  return rng_state;
}

/* ---- values of every type ---- */


static uint64_t tile_of(vkds_type t) { return size_of(t) == 8 ? 2048 : 4096; }

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
static uint64_t get_bits(vkds_type t, const void *p, uint64_t i) {
  switch (t) {
  case VKDS_I32: return (uint64_t)(int64_t)((const int32_t *)p)[i];
  case VKDS_U32: return ((const uint32_t *)p)[i];
  case VKDS_F32: {
    uint32_t b;
    memcpy(&b, (const char *)p + 4 * i, 4);
    return b;
  }
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

/* ---- operators, with the host's version of each ---- */

enum { USER_MAX = 100, USER_RIGHT = 101 }; /* user GLSL: max(a, b); b (not commutative) */

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
static vkds_op make_op(int kind, vkds_type t) {
  if (kind == USER_MAX) return (vkds_op){VKDS_OP_GLSL, "max(a, b)", lowest_glsl(t)};
  if (kind == USER_RIGHT) return (vkds_op){VKDS_OP_GLSL, "b", "0"};
  return (vkds_op){.kind = (vkds_op_kind)kind};
}

static uint64_t int_op(vkds_type t, int op, uint64_t a, uint64_t b) {
  bool s = is_signed(t);
  int64_t sa = size_of(t) == 4 ? (int64_t)(int32_t)a : (int64_t)a, sb = size_of(t) == 4 ? (int64_t)(int32_t)b : (int64_t)b;
  uint64_t ua = a & type_mask(t), ub = b & type_mask(t), r;
  switch (op) {
  case VKDS_OP_MULTIPLIES: r = a * b; break;
  case VKDS_OP_MIN: r = (s ? sb < sa : ub < ua) ? b : a; break;
  case VKDS_OP_MAX: case USER_MAX: r = (s ? sa < sb : ua < ub) ? b : a; break;
  case VKDS_OP_BIT_XOR: r = a ^ b; break;
  case USER_RIGHT: r = b; break;
  default: r = a + b; break;
  }
  return r & type_mask(t);
}
static double float_op(int op, double a, double b) {
  switch (op) {
  case VKDS_OP_MULTIPLIES: return a * b;
  case VKDS_OP_MIN: return b < a ? b : a;
  case VKDS_OP_MAX: case USER_MAX: return a < b ? b : a;
  case USER_RIGHT: return b;
  default: return a + b;
  }
}
/* op's identity as 64 bits of type t (what an exclusive scan writes at a start without init) */
static uint64_t identity_bits(vkds_type t, int op) {
  if (is_float(t)) {
    double d = op == VKDS_OP_MULTIPLIES ? 1 : op == VKDS_OP_MIN ? INFINITY : op == VKDS_OP_MAX || op == USER_MAX ? -INFINITY : 0;
    val v = {0};
    put_double(t, v.b, 0, d);
    return get_bits(t, v.b, 0);
  }
  switch (op) {
  case VKDS_OP_MULTIPLIES: return 1;
  case VKDS_OP_MIN: return is_signed(t) ? type_mask(t) >> 1 : type_mask(t);
  case VKDS_OP_MAX: case USER_MAX: return is_signed(t) ? ((type_mask(t) >> 1) + 1) & type_mask(t) : 0;
  default: return 0;
  }
}

/* One step of the host's fold in type t, on values as 64 bits (floats: their bits). */
static uint64_t step(vkds_type t, int op, uint64_t a, uint64_t b) {
  if (!is_float(t)) return int_op(t, op, a, b);
  val va = {0}, vb = {0}, r = {0};
  put_bits(t, va.b, 0, a), put_bits(t, vb.b, 0, b);
  put_double(t, r.b, 0, float_op(op, get_double(t, va.b, 0), get_double(t, vb.b, 0)));
  return get_bits(t, r.b, 0);
}

/* n values of type t for op: floats in 1/64 steps in [-8, 8) (sums exact in either float
 * type over any segment here), near 1 for products, integers anything (they wrap). */
static void *random_values(vkds_type t, uint64_t n, int op) {
  void *p = malloc((n ? n : 1) * 8);
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t r = rnd();
    if (is_float(t)) put_double(t, p, i, op == VKDS_OP_MULTIPLIES ? 1.0 + (double)(r % 16) / 64 : ((double)(r % 1024) - 512.0) / 64.0);
    else if (op == VKDS_OP_MULTIPLIES) put_bits(t, p, i, 1 + r % 3);
    else put_bits(t, p, i, is_signed(t) ? (uint64_t)((int64_t)(r % 2000001) - 1000000) : r);
  }
  return p;
}

/* ---- keys ---- */

typedef enum pattern { ONE, EACH, RUNS, LONG } pattern;
static const char *pattern_name(pattern p) {
  static const char *n[] = {"one segment", "each its own", "short runs", "long runs"};
  return n[p];
}
/* u32 keys: one key; a new key every element; runs of 1..16 of keys from a small set (so
 * neighbouring runs sometimes share a key and merge); runs of 1..10000. */
static uint32_t *make_keys(uint64_t n, pattern p) {
  uint32_t *k = malloc((n ? n : 1) * 4), key = 7;
  uint64_t left = 0;
  for (uint64_t i = 0; i < n; ++i) {
    if (p == EACH) key = (uint32_t)i;
    else if (p != ONE && left-- == 0) {
      key = p == RUNS ? (uint32_t)(rnd() % 5) : key + 1;
      left = p == RUNS ? rnd() % 16 : rnd() % 10000;
    }
    k[i] = key;
  }
  return k;
}

/* ---- the references ---- */

/* Segment starts by the keys (u32 here; NaN-aware for the other key tests below). */
static bool starts_u32(const void *keys, uint64_t i) {
  const uint32_t *k = keys;
  return i == 0 || k[i] != k[i - 1];
}

/* Checks a scan by key of values (type t, already the output's type) against the host. */
static void check_scan_by_key(vkds_type t, int op, bool (*starts)(const void *, uint64_t), const void *keys,
                              const void *vals, uint64_t n, bool exclusive, const val *init, const void *got,
                              const char *what) {
  uint64_t acc = 0;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t x = get_bits(t, vals, i), want;
    if (starts(keys, i)) {
      uint64_t first = init ? get_bits(t, init->b, 0) : identity_bits(t, op);
      want = exclusive ? first : init ? step(t, op, first, x) : x;
      acc = init ? step(t, op, first, x) : x;
    } else {
      want = exclusive ? acc : step(t, op, acc, x);
      acc = step(t, op, acc, x);
    }
    uint64_t g = get_bits(t, got, i) & type_mask(t);
    if (g != (want & type_mask(t)))
      ck_abort_msg("%s: %s op %d n %llu %s%s: [%llu] got %llx want %llx", what, type_name(t), op, (unsigned long long)n,
                   exclusive ? "exclusive" : "inclusive", init ? " with init" : "", (unsigned long long)i,
                   (unsigned long long)g, (unsigned long long)(want & type_mask(t)));
  }
}

/* Checks reduce by key: `count` segments, keys_out (u32) and values_out (type t) up to
 * `fit` elements, the canary 77 past them (in both). */
static void check_reduce_by_key(vkds_type t, int op, const uint32_t *keys, const void *vals, uint64_t n,
                                uint64_t count, const uint32_t *keys_out, const void *vals_out, uint64_t fit,
                                const char *what) {
  uint64_t seg = 0, acc = 0;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t x = get_bits(t, vals, i);
    acc = starts_u32(keys, i) ? x : step(t, op, acc, x);
    if (i + 1 == n || keys[i + 1] != keys[i]) {
      if (seg < fit) {
        if (keys_out[seg] != keys[i])
          ck_abort_msg("%s: segment %llu key %u want %u", what, (unsigned long long)seg, keys_out[seg], keys[i]);
        uint64_t g = get_bits(t, vals_out, seg) & type_mask(t);
        if (g != (acc & type_mask(t)))
          ck_abort_msg("%s: %s op %d n %llu: segment %llu got %llx want %llx", what, type_name(t), op,
                       (unsigned long long)n, (unsigned long long)seg, (unsigned long long)g,
                       (unsigned long long)(acc & type_mask(t)));
      }
      ++seg;
    }
  }
  ck_assert_msg(count == seg, "%s: count %llu want %llu", what, (unsigned long long)count, (unsigned long long)seg);
  for (uint64_t j = seg; j < fit; ++j) {
    ck_assert_msg(keys_out[j] == 77, "%s: a key written past the segments", what);
    ck_assert_msg((get_bits(t, vals_out, j) & type_mask(t)) == 77, "%s: a value written past the segments", what);
  }
}

/* ---- every value type, every segment pattern, both paths ---- */

START_TEST(every_type_and_pattern) {
  vkds_type t = TYPES[_i];
  uint64_t tile = tile_of(t);
  const uint64_t sizes[] = {0, 1, 7, 257, tile - 1, tile + 1, 3 * tile + 5, 100003};
  const uint64_t most = 100003;
  void *vals = random_values(t, most, VKDS_OP_PLUS);
  void *out = malloc(most * 8), *vout = malloc(most * 8);
  uint32_t *kout = malloc(most * 4);
  for (int k = 0; k < 2; ++k) {
    open_path(PATHS[k]);
    for (pattern pt = ONE; pt <= LONG; ++pt) {
      uint32_t *keys = make_keys(most, pt);
      for (size_t si = 0; si < sizeof sizes / sizeof *sizes; ++si) {
        uint64_t n = sizes[si];
        if (pt != RUNS && (si == 2 || si == 4 || si == 6)) continue; /* every size for the short runs */
        char what[96];
        snprintf(what, sizeof what, "%s path, %s", path_name(PATHS[k]), pattern_name(pt));
        vkds_seq ks = vkds_seq_host_const(keys, n, VKDS_U32), vs = vkds_seq_host_const(vals, n, t);
        vkds_seq os = vkds_seq_host(out, n, t);
        val init = {0};
        if (is_float(t)) put_double(t, init.b, 0, 2.25);
        else put_bits(t, init.b, 0, 12345);
        /* inclusive without init, exclusive with it (and the other two at some sizes) */
        ck_assert_vkds(vkds_inclusive_scan_by_key(pol, &ks, &vs, &os, NULL, si % 2 ? init.b : NULL));
        check_scan_by_key(t, VKDS_OP_PLUS, starts_u32, keys, vals, n, false, si % 2 ? &init : NULL, out, what);
        ck_assert_vkds(vkds_exclusive_scan_by_key(pol, &ks, &vs, &os, NULL, si % 2 ? NULL : init.b));
        check_scan_by_key(t, VKDS_OP_PLUS, starts_u32, keys, vals, n, true, si % 2 ? NULL : &init, out, what);
        /* reduce by key into outputs as long as the input (canary past the segments) */
        for (uint64_t i = 0; i < n; ++i) kout[i] = 77, put_bits(t, vout, i, 77);
        vkds_seq kos = vkds_seq_host(kout, n, VKDS_U32), vos = vkds_seq_host(vout, n, t);
        uint64_t count = 99;
        ck_assert_vkds(vkds_reduce_by_key(pol, &ks, &vs, &kos, &vos, NULL, &count));
        check_reduce_by_key(t, VKDS_OP_PLUS, keys, vals, n, count, kout, vout, n, what);
      }
      free(keys);
    }
    close_ctx();
  }
  free(vals), free(out), free(vout), free(kout);
}
END_TEST

/* ---- operators: built-in, user GLSL, not commutative; init with each ---- */

START_TEST(operators) {
  const int ops[] = {VKDS_OP_MULTIPLIES, VKDS_OP_MIN, VKDS_OP_MAX, VKDS_OP_BIT_XOR, USER_MAX, USER_RIGHT};
  const vkds_type types[] = {VKDS_I32, VKDS_F32, VKDS_U64, VKDS_F64};
  enum { N = 20011 };
  void *out = malloc(N * 8), *vout = malloc(N * 8);
  uint32_t *kout = malloc(N * 4);
  uint32_t *keys = make_keys(N, RUNS), *long_keys = make_keys(N, LONG);
  for (int k = 0; k < 2; ++k) {
    open_path(PATHS[k]);
    for (size_t ti = 0; ti < sizeof types / sizeof *types; ++ti) {
      vkds_type t = types[ti];
      for (size_t oi = 0; oi < sizeof ops / sizeof *ops; ++oi) {
        int opk = ops[oi];
        if (is_float(t) && opk == VKDS_OP_BIT_XOR) continue;
        /* each operator is two kernels to build (and the validation layer makes that
         * slow): every one for i32 on the portable path, a few elsewhere */
        bool some = (t == VKDS_F32 && (opk == VKDS_OP_MAX || opk == USER_RIGHT)) ||
                    (t == VKDS_U64 && opk == USER_RIGHT) || (t == VKDS_F64 && opk == VKDS_OP_MIN);
        if (PATHS[k] == VKDS_SCAN_PATH_SINGLE ? !(t == VKDS_I32 && opk == USER_RIGHT) && !(t == VKDS_F32 && opk == USER_RIGHT)
                                              : t != VKDS_I32 && !some)
          continue;
        vkds_op op = make_op(opk, t);
        void *vals = random_values(t, N, opk);
        char what[96];
        snprintf(what, sizeof what, "%s path", path_name(PATHS[k]));
        for (int kk = 0; kk < 2; ++kk) {
          const uint32_t *kp = kk ? long_keys : keys;
          vkds_seq ks = vkds_seq_host_const(kp, N, VKDS_U32), vs = vkds_seq_host_const(vals, N, t);
          vkds_seq os = vkds_seq_host(out, N, t);
          val init = {0};
          put_bits(t, init.b, 0, get_bits(t, vals, 17));
          ck_assert_vkds(vkds_inclusive_scan_by_key(pol, &ks, &vs, &os, &op, kk ? init.b : NULL));
          check_scan_by_key(t, opk, starts_u32, kp, vals, N, false, kk ? &init : NULL, out, what);
          ck_assert_vkds(vkds_exclusive_scan_by_key(pol, &ks, &vs, &os, &op, kk ? NULL : init.b));
          check_scan_by_key(t, opk, starts_u32, kp, vals, N, true, kk ? NULL : &init, out, what);
          for (uint64_t i = 0; i < N; ++i) kout[i] = 77, put_bits(t, vout, i, 77);
          vkds_seq kos = vkds_seq_host(kout, N, VKDS_U32), vos = vkds_seq_host(vout, N, t);
          uint64_t count;
          ck_assert_vkds(vkds_reduce_by_key(pol, &ks, &vs, &kos, &vos, &op, &count));
          check_reduce_by_key(t, opk, kp, vals, N, count, kout, vout, N, what);
        }
        free(vals);
      }
    }
    close_ctx();
  }
  free(out), free(vout), free(kout), free(keys), free(long_keys);
}
END_TEST

/* ---- float bits that repeat, through the fallback too; 2^24 + 1 elements ---- */

START_TEST(float_bits_repeat) {
  enum { N = 200003 };
  float *v = malloc(N * 4), *a = malloc(N * 4), *b = malloc(N * 4), *c = malloc(N * 4);
  for (int i = 0; i < N; ++i) v[i] = (float)((double)(rnd() % 1000000) * 1e-3 + 0.1); /* inexact sums */
  uint32_t *keys = make_keys(N, LONG);
  for (int k = 0; k < 2; ++k) {
    open_path(PATHS[k]);
    vkds_seq ks = vkds_seq_host_const(keys, N, VKDS_U32), vs = vkds_seq_host_const(v, N, VKDS_F32);
    vkds_seq as = vkds_seq_host(a, N, VKDS_F32), bs = vkds_seq_host(b, N, VKDS_F32), cs = vkds_seq_host(c, N, VKDS_F32);
    ck_assert_vkds(vkds_inclusive_scan_by_key(pol, &ks, &vs, &as, NULL, NULL));
    ck_assert_vkds(vkds_inclusive_scan_by_key(pol, &ks, &vs, &bs, NULL, NULL));
    ck_assert(memcmp(a, b, N * 4) == 0);
    harness_setenv("VKDS_SCAN_SPINS", "-1"); /* every tile also reduces its predecessor */
    ck_assert_vkds(vkds_inclusive_scan_by_key(pol, &ks, &vs, &cs, NULL, NULL));
    harness_setenv("VKDS_SCAN_SPINS", NULL);
    ck_assert(memcmp(a, c, N * 4) == 0);
    /* and close to the host's sums: within the rounding of the longest chain of
     * operations that can lead to an element (the tiles of its segment before it, plus a
     * tile's own steps) */
    double acc = 0;
    int first = 0;
    for (int i = 0; i < N; ++i) {
      if (starts_u32(keys, (uint64_t)i)) acc = 0, first = i;
      acc += v[i];
      double tol = 1.2e-7 * ((double)(i - first) / 4096 + 300) * acc;
      ck_assert_msg(fabs(a[i] - acc) <= tol, "[%d] got %.9g want %.9g", i, a[i], acc);
    }
    close_ctx();
  }
  free(v), free(a), free(b), free(c), free(keys);
}
END_TEST

START_TEST(big) {
  const uint64_t n = (1ull << harness_top_log2(24)) + 1;
  uint32_t *keys = make_keys(n, RUNS), *vals = random_values(VKDS_U32, n, VKDS_OP_PLUS), *got = malloc(n * 4);
  uint32_t *kout = malloc(n * 4), *vout = malloc(n * 4);
  for (int k = 0; k < 2; ++k) {
    open_path(PATHS[k]);
    vkds_buffer *kb, *vb, *ob;
    ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = n * 4}, &kb));
    ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = n * 4}, &vb));
    ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = n * 4}, &ob));
    ck_assert_vkds(vkds_upload(r0, vkds_view_of(kb), keys, n * 4));
    ck_assert_vkds(vkds_upload(r0, vkds_view_of(vb), vals, n * 4));
    vkds_seq ks = vkds_seq_buffer(vkds_view_of(kb), VKDS_U32), vs = vkds_seq_buffer(vkds_view_of(vb), VKDS_U32);
    vkds_seq os = vkds_seq_buffer(vkds_view_of(ob), VKDS_U32);
    ck_assert_vkds(vkds_inclusive_scan_by_key(pol, &ks, &vs, &os, NULL, NULL));
    ck_assert_vkds(vkds_download(r0, got, vkds_view_of(ob), n * 4));
    check_scan_by_key(VKDS_U32, VKDS_OP_PLUS, starts_u32, keys, vals, n, false, NULL, got, path_name(PATHS[k]));
    /* reduce by key (on one path: they share the tiles), with its keys into the output
     * buffer and its values on the host */
    if (PATHS[k] == VKDS_SCAN_PATH_SINGLE) {
      vkds_buffer_destroy(kb), vkds_buffer_destroy(vb), vkds_buffer_destroy(ob);
      close_ctx();
      continue;
    }
    vkds_seq kos = vkds_seq_buffer(vkds_view_of(ob), VKDS_U32), vos = vkds_seq_host(vout, n, VKDS_U32);
    uint64_t count;
    ck_assert_vkds(vkds_reduce_by_key(pol, &ks, &vs, &kos, &vos, NULL, &count));
    ck_assert_vkds(vkds_download(r0, kout, vkds_view_of(ob), count * 4));
    check_reduce_by_key(VKDS_U32, VKDS_OP_PLUS, keys, vals, n, count, kout, vout, count, path_name(PATHS[k]));
    vkds_buffer_destroy(kb), vkds_buffer_destroy(vb), vkds_buffer_destroy(ob);
    close_ctx();
  }
  free(keys), free(vals), free(got), free(kout), free(vout);
}
END_TEST

/* ---- keys of other types, every sequence kind, conversions, short outputs ---- */

/* f32 keys: GLSL ==, so -0 == 0 and NaN starts a segment every time */
static bool starts_f32(const void *keys, uint64_t i) {
  const float *k = keys;
  return i == 0 || !(k[i] == k[i - 1]);
}
static bool starts_i64(const void *keys, uint64_t i) {
  const int64_t *k = keys;
  return i == 0 || k[i] != k[i - 1];
}
typedef struct pair_keys { const uint32_t *a; const double *b; } pair_keys;
static bool starts_pair(const void *keys, uint64_t i) {
  const pair_keys *p = keys;
  return i == 0 || p->a[i] != p->a[i - 1] || !(p->b[i] == p->b[i - 1]);
}
typedef struct view_keys { const uint32_t *k; uint64_t n; uint32_t div; bool rev; } view_keys;
static bool starts_view(const void *keys, uint64_t i) {
  const view_keys *v = keys;
  uint64_t a = v->rev ? v->n - 1 - i : i, b = v->rev ? v->n - i : i - 1;
  return i == 0 || v->k[a] / v->div != v->k[b] / v->div;
}
static bool starts_counting_div3(const void *keys, uint64_t i) { (void)keys; return i == 0 || i % 3 == 0; }

/* reduce_by_key with a zip of two keys (u32 host, f32 device buffer), written to a zip of
 * (u64, f64) and to a discard, on both paths, against the host. */
START_TEST(zip_keys_written_out) {
  for (int k = 0; k < 2; ++k) {
    open_path(PATHS[k]);
    enum { N = 9003 };
    uint32_t *ka = malloc(N * 4), *vals = malloc(N * 4), *vo = malloc(N * 4), *vo2 = malloc(N * 4);
    float *kb = malloc(N * 4);
    uint64_t *oa = malloc(N * 8);
    double *ob = malloc(N * 8);
    for (uint32_t i = 0; i < N; ++i)
      ka[i] = i / 7 % 4, kb[i] = (float)(i / 5 % 3) - 1.0f, vals[i] = (uint32_t)(rnd() % 1000);
    vkds_buffer *kbb;
    ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = N * 4}, &kbb));
    ck_assert_vkds(vkds_upload(r0, vkds_view_of(kbb), kb, N * 4));
    vkds_seq kp[2] = {vkds_seq_host_const(ka, N, VKDS_U32), vkds_seq_buffer(vkds_view_of(kbb), VKDS_F32)};
    vkds_seq keys = vkds_seq_zip(kp, 2), vs = vkds_seq_host_const(vals, N, VKDS_U32);
    vkds_seq op[2] = {vkds_seq_host(oa, N, VKDS_U64), vkds_seq_host(ob, N, VKDS_F64)};
    vkds_seq kout = vkds_seq_zip(op, 2), vout = vkds_seq_host(vo, N, VKDS_U32), vout2 = vkds_seq_host(vo2, N, VKDS_U32);
    uint64_t count, count2;
    ck_assert_vkds(vkds_reduce_by_key(pol, &keys, &vs, &kout, &vout, NULL, &count));
    vkds_seq sink = vkds_seq_discard(N, VKDS_U32);
    ck_assert_vkds(vkds_reduce_by_key(pol, &keys, &vs, &sink, &vout2, NULL, &count2));
    uint64_t seg = 0;
    uint32_t sum = 0;
    for (uint32_t i = 0; i < N; ++i) {
      bool start = i == 0 || ka[i] != ka[i - 1] || kb[i] != kb[i - 1];
      if (start && i) {
        ck_assert_uint_eq(vo[seg], sum);
        ck_assert_uint_eq(vo2[seg], sum);
        ++seg, sum = 0;
      }
      if (start) ck_assert_msg(oa[seg] == ka[i] && ob[seg] == kb[i], "%s: segment %llu", path_name(PATHS[k]),
                               (unsigned long long)seg);
      sum += vals[i];
    }
    ck_assert_uint_eq(vo[seg], sum);
    ck_assert_uint_eq(count, seg + 1);
    ck_assert_uint_eq(count2, seg + 1);
    vkds_buffer_destroy(kbb);
    free(ka), free(kb), free(vals), free(vo), free(vo2), free(oa), free(ob);
    close_ctx();
  }
}
END_TEST

START_TEST(keys_and_sequence_kinds) {
  for (int k = 0; k < 2; ++k) {
    vkds_context_info info = harness_info();
    info.devices_per_physical = 2;
    info.scan_path = PATHS[k];
    ck_assert_vkds(vkds_context_create(&info, &ctx));
    r0 = vkds_context_resource(ctx, 0);
    vkds_resource *r1 = harness_device_resource(ctx, 1);
    ck_assert_ptr_nonnull(r1);
    ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = {.context = ctx}}, &pol));
    const char *what = path_name(PATHS[k]);
    enum { N = 9003 };
    uint32_t *keys = make_keys(N, RUNS), *vals = random_values(VKDS_U32, N, VKDS_OP_PLUS), *out = malloc(N * 4);
    uint32_t *rvals = malloc(N * 4), *back = malloc(N * 4);
    uint64_t *wide = malloc(N * 8), *wvals = malloc(N * 8);
    for (uint32_t i = 0; i < N; ++i) vals[i] %= 1u << 31;
    for (uint32_t i = 0; i < N; ++i) rvals[i] = vals[N - 1 - i], wvals[i] = vals[i];
    vkds_seq ks = vkds_seq_host_const(keys, N, VKDS_U32), vs = vkds_seq_host_const(vals, N, VKDS_U32);
    vkds_seq os = vkds_seq_host(out, N, VKDS_U32);

    /* f32 keys with -0, 0, NaN runs */
    float *fk = malloc(N * 4);
    for (uint32_t i = 0; i < N; ++i) {
      uint32_t r = keys[i] % 5;
      fk[i] = r == 0 ? 0.0f : r == 1 ? -0.0f : r == 2 ? NAN : (float)r;
    }
    vkds_seq fks = vkds_seq_host_const(fk, N, VKDS_F32);
    ck_assert_vkds(vkds_inclusive_scan_by_key(pol, &fks, &vs, &os, NULL, NULL));
    check_scan_by_key(VKDS_U32, VKDS_OP_PLUS, starts_f32, fk, vals, N, false, NULL, out, "f32 keys");
    /* i64 keys, values widened into u64 outputs (the scan accumulates in u64: no wrap) */
    int64_t *ik = malloc(N * 8);
    for (uint32_t i = 0; i < N; ++i) ik[i] = (int64_t)keys[i] * -3000000000ll;
    vkds_seq iks = vkds_seq_host_const(ik, N, VKDS_I64), ws = vkds_seq_host(wide, N, VKDS_U64);
    uint64_t winit = 1ull << 40;
    ck_assert_vkds(vkds_exclusive_scan_by_key(pol, &iks, &vs, &ws, NULL, &winit));
    check_scan_by_key(VKDS_U64, VKDS_OP_PLUS, starts_i64, ik, wvals, N, true, &(val){.u64 = winit}, wide,
                      "i64 keys, u64 output");
    /* a zip of keys (u32, f64): a segment ends where either changes */
    double *dk = malloc(N * 8);
    for (uint32_t i = 0; i < N; ++i) dk[i] = (double)((i / 7) % 2);
    vkds_seq zparts[2] = {ks, vkds_seq_host_const(dk, N, VKDS_F64)};
    vkds_seq zk = vkds_seq_zip(zparts, 2);
    ck_assert_vkds(vkds_inclusive_scan_by_key(pol, &zk, &vs, &os, NULL, NULL));
    check_scan_by_key(VKDS_U32, VKDS_OP_PLUS, starts_pair, &(pair_keys){keys, dk}, vals, N, false, NULL, out, "zip keys");

    /* views and memory kinds are the same code on both paths: the portable path takes
     * them (each is a kernel to build, and the validation layer makes that slow) */
    bool all = PATHS[k] == VKDS_SCAN_PATH_PORTABLE;
    /* keys and values on the device, another device, mapped, as views */
    vkds_buffer *kb, *vb, *ob, *mb, *other;
    ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = N * 4 + 16}, &kb));
    ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = N * 4 + 16}, &vb));
    ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = N * 4 + 16}, &ob));
    ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = N * 4, .memory = VKDS_MEMORY_MAPPED}, &mb));
    ck_assert_vkds(vkds_buffer_create(r1, &(vkds_buffer_info){.size = N * 4}, &other)); /* the second VkDevice */
    ck_assert_vkds(vkds_upload(r0, vkds_view_of(kb), keys, N * 4));
    ck_assert_vkds(vkds_upload(r0, vkds_view_of(vb), vals, N * 4));
    memcpy(vkds_buffer_map(mb), vals, N * 4);
    ck_assert_vkds(vkds_upload(r1, vkds_view_of(other), keys, N * 4));
    vkds_seq dks = vkds_seq_buffer((vkds_view){kb, 0, N * 4}, VKDS_U32), dvs = vkds_seq_buffer((vkds_view){vb, 0, N * 4}, VKDS_U32);
    vkds_seq mvs = vkds_seq_mapped(vkds_view_of(mb), VKDS_U32), oks = vkds_seq_buffer(vkds_view_of(other), VKDS_U32);
    vkds_seq dos = vkds_seq_buffer((vkds_view){ob, 0, N * 4}, VKDS_U32);
    if (all) {
      ck_assert_vkds(vkds_inclusive_scan_by_key(pol, &oks, &mvs, &dos, NULL, NULL));
      ck_assert_vkds(vkds_download(r0, back, (vkds_view){ob, 0, N * 4}, N * 4));
      check_scan_by_key(VKDS_U32, VKDS_OP_PLUS, starts_u32, keys, vals, N, false, NULL, back,
                        "keys of device 1, mapped values, into a buffer");
      /* off 16-byte alignment: one element in (keys and values), out at another skew */
      vkds_seq sks = vkds_seq_buffer((vkds_view){kb, 4, (N - 2) * 4}, VKDS_U32);
      vkds_seq svs = vkds_seq_buffer((vkds_view){vb, 4, (N - 2) * 4}, VKDS_U32);
      vkds_seq sos = vkds_seq_buffer((vkds_view){ob, 8, (N - 2) * 4}, VKDS_U32);
      ck_assert_vkds(vkds_exclusive_scan_by_key(pol, &sks, &svs, &sos, NULL, NULL));
      ck_assert_vkds(vkds_download(r0, back, (vkds_view){ob, 8, (N - 2) * 4}, (N - 2) * 4));
      check_scan_by_key(VKDS_U32, VKDS_OP_PLUS, starts_u32, keys + 1, vals + 1, N - 2, true, NULL, back, "unaligned");
      /* keys through views: a transform (key / 4), a reverse; values reversed; a counting
       * sequence's thirds as keys */
      vkds_seq tk = vkds_seq_transform(&dks, &(vkds_transform_op){.glsl = "x / 4u"});
      ck_assert_vkds(vkds_inclusive_scan_by_key(pol, &tk, &dvs, &os, NULL, NULL));
      check_scan_by_key(VKDS_U32, VKDS_OP_PLUS, starts_view, &(view_keys){keys, N, 4, false}, vals, N, false, NULL, out,
                        "transform keys");
      vkds_seq rk = vkds_seq_reverse(&dks), rv = vkds_seq_reverse(&dvs);
      ck_assert_vkds(vkds_inclusive_scan_by_key(pol, &rk, &rv, &os, NULL, NULL));
      check_scan_by_key(VKDS_U32, VKDS_OP_PLUS, starts_view, &(view_keys){keys, N, 1, true}, rvals, N, false, NULL, out,
                        "reversed keys and values");
      vkds_seq ck = vkds_seq_counting(0, N, VKDS_U32), c3 = vkds_seq_transform(&ck, &(vkds_transform_op){.glsl = "x / 3u"});
      ck_assert_vkds(vkds_inclusive_scan_by_key(pol, &c3, &vs, &os, NULL, NULL));
      check_scan_by_key(VKDS_U32, VKDS_OP_PLUS, starts_counting_div3, NULL, vals, N, false, NULL, out, "counting keys");
      /* outputs: a reverse view, a buffer of the other device, discard */
      vkds_seq ro = vkds_seq_reverse(&os);
      ck_assert_vkds(vkds_inclusive_scan_by_key(pol, &ks, &vs, &ro, NULL, NULL));
      for (uint32_t i = 0; i < N; ++i) back[i] = out[N - 1 - i];
      check_scan_by_key(VKDS_U32, VKDS_OP_PLUS, starts_u32, keys, vals, N, false, NULL, back, "into a reverse view");
      vkds_seq oo = vkds_seq_buffer(vkds_view_of(other), VKDS_U32);
      ck_assert_vkds(vkds_inclusive_scan_by_key(pol, &ks, &vs, &oo, NULL, NULL));
      ck_assert_vkds(vkds_download(r1, back, vkds_view_of(other), N * 4));
      check_scan_by_key(VKDS_U32, VKDS_OP_PLUS, starts_u32, keys, vals, N, false, NULL, back, "into a buffer of device 1");
      vkds_seq sink = vkds_seq_discard(N, VKDS_U32);
      ck_assert_vkds(vkds_exclusive_scan_by_key(pol, &ks, &vs, &sink, NULL, NULL));
    }

    /* reduce by key: short outputs take what fits; u32 values summed into u64; keys out
     * converted to f64; f32 keys with NaN */
    uint64_t count, full;
    uint32_t kout[101], vout[100];
    for (int i = 0; i < 101; ++i) kout[i] = 77;
    vkds_seq kos = vkds_seq_host(kout, 100, VKDS_U32), vos = vkds_seq_host(vout, 37, VKDS_U32);
    ck_assert_vkds(vkds_reduce_by_key(pol, &ks, &vs, &kos, &vos, NULL, &count));
    check_reduce_by_key(VKDS_U32, VKDS_OP_PLUS, keys, vals, N, count, kout, vout, 37, "short outputs");
    for (int i = 37; i < 100; ++i) ck_assert_uint_ne(kout[i], 77); /* keys fit further than values */
    ck_assert_uint_eq(kout[100], 77);
    double *dkout = malloc(N * 8);
    vkds_seq dkos = vkds_seq_host(dkout, N, VKDS_F64), wvos = vkds_seq_host(wide, N, VKDS_U64);
    ck_assert_vkds(vkds_reduce_by_key(pol, &dks, &dvs, &dkos, &wvos, NULL, &full));
    ck_assert_uint_eq(full, count);
    uint64_t seg = 0, sum = 0;
    for (uint32_t i = 0; i < N; ++i) {
      sum += vals[i];
      if (i + 1 == N || keys[i + 1] != keys[i]) {
        ck_assert(dkout[seg] == keys[i]);
        ck_assert_uint_eq(wide[seg], sum);
        ++seg, sum = 0;
      }
    }
    uint64_t fcount;
    uint32_t *fkout = malloc(N * 4);
    vkds_seq fkos = vkds_seq_host(fkout, N, VKDS_U32);
    ck_assert_vkds(vkds_reduce_by_key(pol, &fks, &vs, &fkos, &vos, NULL, &fcount)); /* NaN keys */
    uint64_t want = 0;
    for (uint32_t i = 0; i < N; ++i) want += starts_f32(fk, i);
    ck_assert_uint_eq(fcount, want);

    vkds_buffer_destroy(kb), vkds_buffer_destroy(vb), vkds_buffer_destroy(ob), vkds_buffer_destroy(mb);
    vkds_buffer_destroy(other);
    free(keys), free(vals), free(out), free(rvals), free(back), free(wide), free(wvals), free(fk), free(ik), free(dk);
    free(dkout), free(fkout);
    close_ctx();
    (void)what;
  }
}
END_TEST

/* ---- the forms ---- */

START_TEST(forms) {
  enum { N = 40000 };
  for (int k = 0; k < 2; ++k) {
    open_path(PATHS[k]);
    uint32_t *keys = make_keys(N, RUNS), *vals = random_values(VKDS_U32, N, VKDS_OP_PLUS), *out = malloc(N * 4);
    uint32_t *kout = malloc(N * 4), *vout = malloc(N * 4);
    vkds_seq ks = vkds_seq_host(keys, N, VKDS_U32), vs = vkds_seq_host(vals, N, VKDS_U32), os = vkds_seq_host(out, N, VKDS_U32);
    vkds_seq kos = vkds_seq_host(kout, N, VKDS_U32), vos = vkds_seq_host(vout, N, VKDS_U32);
    for (int i = 0; i < N; ++i) kout[i] = vout[i] = 77;
    /* asynchronous: outputs and count there once a poll says done; one released unwaited */
    vkds_submission *s1, *s2;
    uint64_t count = 0;
    ck_assert_vkds(vkds_inclusive_scan_by_key_async(pol, &ks, &vs, &os, NULL, NULL, &s1));
    ck_assert_vkds(vkds_reduce_by_key_async(pol, &ks, &vs, &kos, &vos, NULL, &count, &s2));
    vkds_result r;
    while ((r = vkds_submission_poll(s1)) == VKDS_ERROR_WOULD_BLOCK) usleep(100);
    ck_assert_vkds(r);
    vkds_submission_release(s1);
    check_scan_by_key(VKDS_U32, VKDS_OP_PLUS, starts_u32, keys, vals, N, false, NULL, out, "async");
    vkds_submission_release(s2);
    check_reduce_by_key(VKDS_U32, VKDS_OP_PLUS, keys, vals, N, count, kout, vout, N, "async");
    vkds_submission *s3;
    uint32_t init = 9;
    ck_assert_vkds(vkds_exclusive_scan_by_key_async(pol, &ks, &vs, &os, NULL, &init, &s3));
    ck_assert_vkds(vkds_submission_wait(s3));
    vkds_submission_release(s3);
    check_scan_by_key(VKDS_U32, VKDS_OP_PLUS, starts_u32, keys, vals, N, true, &(val){.u32 = init}, out, "async exclusive");

    /* recorded: a scan by key (with every tile reducing its predecessor on the single
     * path) and reduce by key with its count in a device view, one scratch */
    vkds_buffer *kb, *vb, *ob, *kob, *vob, *res, *scratch;
    ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = N * 4}, &kb));
    ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = N * 4}, &vb));
    ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = N * 4}, &ob));
    ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = N * 4}, &kob));
    ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = N * 4}, &vob));
    ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = 64, .memory = VKDS_MEMORY_MAPPED}, &res));
    uint64_t sbytes = vkds_algorithm_scratch_bytes(r0, N);
    ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = sbytes + 16}, &scratch));
    ck_assert_vkds(vkds_upload(r0, vkds_view_of(kb), keys, N * 4));
    ck_assert_vkds(vkds_upload(r0, vkds_view_of(vb), vals, N * 4));
    app_cmd ac = {0};
    app_cmd_begin(&ac, r0);
    vkds_cmd c = {.cmd = ac.cmd, .resource = r0, .scratch = (vkds_view){scratch, 0, sbytes}};
    vkds_seq dks = vkds_seq_buffer(vkds_view_of(kb), VKDS_U32), dvs = vkds_seq_buffer(vkds_view_of(vb), VKDS_U32);
    vkds_seq dos = vkds_seq_buffer(vkds_view_of(ob), VKDS_U32), dkos = vkds_seq_buffer(vkds_view_of(kob), VKDS_U32);
    vkds_seq dvos = vkds_seq_buffer(vkds_view_of(vob), VKDS_U32);
    harness_setenv("VKDS_SCAN_SPINS", "-1");
    ck_assert_vkds(vkds_cmd_exclusive_scan_by_key(&c, &dks, &dvs, &dos, NULL, &init));
    harness_setenv("VKDS_SCAN_SPINS", NULL);
    ck_assert_vkds(vkds_cmd_reduce_by_key(&c, &dks, &dvs, &dkos, &dvos, NULL, (vkds_view){res, 8, 8}));
    ck_assert_vkds(vkds_cmd_inclusive_scan_by_key(&c, &dks, &dvs, &dos, NULL, NULL)); /* after the exclusive: barriers */
    /* what cannot be recorded: host data, too little or misaligned scratch, a misaligned count */
    ck_assert_int_eq(vkds_cmd_inclusive_scan_by_key(&c, &ks, &dvs, &dos, NULL, NULL), VKDS_ERROR_INVALID_ARGUMENT);
    vkds_cmd small = {.cmd = ac.cmd, .resource = r0, .scratch = (vkds_view){scratch, 0, 64}};
    ck_assert_int_eq(vkds_cmd_inclusive_scan_by_key(&small, &dks, &dvs, &dos, NULL, NULL), VKDS_ERROR_INVALID_ARGUMENT);
    vkds_cmd skewed = {.cmd = ac.cmd, .resource = r0, .scratch = (vkds_view){scratch, 4, sbytes}};
    ck_assert_int_eq(vkds_cmd_exclusive_scan_by_key(&skewed, &dks, &dvs, &dos, NULL, NULL), VKDS_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(vkds_cmd_reduce_by_key(&c, &dks, &dvs, &dkos, &dvos, NULL, (vkds_view){res, 4, 8}),
                     VKDS_ERROR_INVALID_ARGUMENT);
    app_cmd_submit(&ac, 10);
    ck_assert_vkds(vkds_download(r0, out, vkds_view_of(ob), N * 4));
    check_scan_by_key(VKDS_U32, VKDS_OP_PLUS, starts_u32, keys, vals, N, false, NULL, out, "recorded");
    uint64_t rcount;
    memcpy(&rcount, (char *)vkds_buffer_map(res) + 8, 8);
    ck_assert_vkds(vkds_download(r0, kout, vkds_view_of(kob), N * 4));
    ck_assert_vkds(vkds_download(r0, vout, vkds_view_of(vob), N * 4));
    check_reduce_by_key(VKDS_U32, VKDS_OP_PLUS, keys, vals, N, rcount, kout, vout, rcount, "recorded");
    ck_assert_uint_eq(rcount, count);
    app_cmd_destroy(&ac);
    vkds_buffer_destroy(kb), vkds_buffer_destroy(vb), vkds_buffer_destroy(ob), vkds_buffer_destroy(kob);
    vkds_buffer_destroy(vob), vkds_buffer_destroy(res), vkds_buffer_destroy(scratch);
    free(keys), free(vals), free(out), free(kout), free(vout);
    close_ctx();
  }
}
END_TEST

/* ---- the single pass's three-word states under stress ---- */

/* 500 recorded single-pass u64 scans by key (three words a value in the tile states), 100
 * to a command buffer, each with its own scratch and output, spins of 0, the forced
 * fallback and the default in turn; every element checked, every wait bounded. */
START_TEST(many_single_pass_scans_by_key) {
  open_path(VKDS_SCAN_PATH_SINGLE);
  enum { PER = 100, ROUNDS = 5, MOST = 5 * 2048 + 77 };
  uint32_t *keys = make_keys(MOST + PER, RUNS);
  uint64_t *vals = random_values(VKDS_U64, MOST + PER, VKDS_OP_PLUS), *got = malloc((size_t)PER * MOST * 8);
  vkds_buffer *kb, *vb, *ob, *scratch;
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = (MOST + PER) * 4}, &kb));
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = (MOST + PER) * 8}, &vb));
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = (uint64_t)PER * MOST * 8}, &ob));
  ck_assert_vkds(vkds_upload(r0, vkds_view_of(kb), keys, (MOST + PER) * 4));
  ck_assert_vkds(vkds_upload(r0, vkds_view_of(vb), vals, (MOST + PER) * 8));
  uint64_t slot = (vkds_algorithm_scratch_bytes(r0, MOST) + 255) / 256 * 256;
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = slot * PER, .memory = VKDS_MEMORY_MAPPED}, &scratch));
  app_cmd ac = {0};
  uint64_t sizes[PER];
  for (int round = 0; round < ROUNDS; ++round) {
    const char *spins = round % 3 == 0 ? "0" : round % 3 == 1 ? "-1" : NULL;
    harness_setenv("VKDS_SCAN_SPINS", spins);
    app_cmd_begin(&ac, r0);
    for (int s = 0; s < PER; ++s) {
      sizes[s] = 1 + rnd() % MOST;
      vkds_cmd c = {.cmd = ac.cmd, .resource = r0, .scratch = (vkds_view){scratch, s * slot, slot}};
      vkds_seq ks = vkds_seq_buffer((vkds_view){kb, (uint64_t)s * 4, sizes[s] * 4}, VKDS_U32);
      vkds_seq vs = vkds_seq_buffer((vkds_view){vb, (uint64_t)s * 8, sizes[s] * 8}, VKDS_U64);
      vkds_seq os = vkds_seq_buffer((vkds_view){ob, (uint64_t)s * MOST * 8, sizes[s] * 8}, VKDS_U64);
      ck_assert_vkds(vkds_cmd_inclusive_scan_by_key(&c, &ks, &vs, &os, NULL, NULL));
    }
    app_cmd_submit(&ac, 10);
    ck_assert_vkds(vkds_download(r0, got, vkds_view_of(ob), (uint64_t)PER * MOST * 8));
    for (int s = 0; s < PER; ++s) {
      char what[64];
      snprintf(what, sizeof what, "round %d scan %d (spins %s)", round, s, spins ? spins : "default");
      check_scan_by_key(VKDS_U64, VKDS_OP_PLUS, starts_u32, keys + s, vals + s, sizes[s], false, NULL,
                        got + (size_t)s * MOST, what);
      uint32_t fallbacks; /* counted in the scratch (scan_tile.glsl's layout) */
      memcpy(&fallbacks, (const char *)vkds_buffer_map(scratch) + s * slot + 36, 4);
      if (round % 3 == 1) ck_assert_uint_eq(fallbacks, (sizes[s] + 2047) / 2048 - 1); /* forced: one per tile after the first */
    }
  }
  app_cmd_destroy(&ac);
  vkds_buffer_destroy(kb), vkds_buffer_destroy(vb), vkds_buffer_destroy(ob), vkds_buffer_destroy(scratch);
  free(keys), free(vals), free(got);
  close_ctx();
}
END_TEST

/* ---- bad input: a named error, nothing selected, nothing written ---- */

START_TEST(bad_input) {
  open_path(VKDS_SCAN_PATH_SINGLE);
  uint32_t k[16] = {1, 1, 2}, v[16] = {1, 2, 3}, b[16], c[16];
  memset(b, 0x77, sizeof b), memset(c, 0x77, sizeof c);
  vkds_seq ks = vkds_seq_host(k, 16, VKDS_U32), vs = vkds_seq_host(v, 16, VKDS_U32), bs = vkds_seq_host(b, 16, VKDS_U32);
  vkds_seq cs = vkds_seq_host(c, 16, VKDS_U32);
  vkds_policy_resource_stats before, after;
  ck_assert_vkds(vkds_policy_get_resource_stats(pol, 0, &before));
  const vkds_result E = VKDS_ERROR_INVALID_ARGUMENT;
  uint64_t n = 99;
  vkds_seq short_v = vkds_seq_host(v, 15, VKDS_U32); /* keys and values of different lengths */
  ck_assert_int_eq(vkds_inclusive_scan_by_key(pol, &ks, &short_v, &bs, NULL, NULL), E);
  ck_assert_msg(strstr(vkds_last_error_message(), "16 keys and 15 values"), "%s", vkds_last_error_message());
  vkds_seq bad = {0}; /* the message names the call and the role (a chaos probe: it said "vkds_seq_validate: ...") */
  ck_assert_int_eq(vkds_inclusive_scan_by_key(pol, &bad, &vs, &bs, NULL, NULL), E);
  ck_assert_msg(strstr(vkds_last_error_message(), "vkds_inclusive_scan_by_key: the keys: "), "%s", vkds_last_error_message());
  ck_assert_int_eq(vkds_reduce_by_key(pol, &ks, &bad, &bs, &cs, NULL, &n), E);
  ck_assert_msg(strstr(vkds_last_error_message(), "vkds_reduce_by_key: the values: "), "%s", vkds_last_error_message());
  ck_assert_int_eq(vkds_reduce_by_key(pol, &ks, &short_v, &bs, &cs, NULL, &n), E);
  vkds_seq short_o = vkds_seq_host(b, 15, VKDS_U32);
  ck_assert_int_eq(vkds_exclusive_scan_by_key(pol, &ks, &vs, &short_o, NULL, NULL), E); /* output's length */
  ck_assert_int_eq(vkds_inclusive_scan_by_key(NULL, &ks, &vs, &bs, NULL, NULL), E);      /* NULLs */
  ck_assert_int_eq(vkds_inclusive_scan_by_key(pol, NULL, &vs, &bs, NULL, NULL), E);
  ck_assert_int_eq(vkds_inclusive_scan_by_key(pol, &ks, NULL, &bs, NULL, NULL), E);
  ck_assert_int_eq(vkds_inclusive_scan_by_key(pol, &ks, &vs, NULL, NULL, NULL), E);
  ck_assert_int_eq(vkds_reduce_by_key(pol, &ks, &vs, NULL, &cs, NULL, &n), E);
  ck_assert_int_eq(vkds_reduce_by_key(pol, &ks, &vs, &bs, NULL, NULL, &n), E);
  ck_assert_int_eq(vkds_reduce_by_key(pol, &ks, &vs, &bs, &cs, NULL, NULL), E);
  ck_assert_int_eq(vkds_inclusive_scan_by_key_async(pol, &ks, &vs, &bs, NULL, NULL, NULL), E);
  ck_assert_int_eq(vkds_cmd_reduce_by_key(NULL, &ks, &vs, &bs, &cs, NULL, (vkds_view){0}), E);
  vkds_seq invalid = {0};
  ck_assert_int_eq(vkds_inclusive_scan_by_key(pol, &invalid, &vs, &bs, NULL, NULL), E);
  vkds_seq zp[2] = {ks, vs};
  vkds_seq z = vkds_seq_zip(zp, 2);
  ck_assert_int_eq(vkds_inclusive_scan_by_key(pol, &ks, &z, &bs, NULL, NULL), E); /* zip values */
  ck_assert_int_eq(vkds_reduce_by_key(pol, &z, &vs, &bs, &cs, NULL, &n), E);      /* zip keys into numbers */
  ck_assert_msg(strstr(vkds_last_error_message(), "keys_out must be a zip of as many"), "%s", vkds_last_error_message());
  vkds_seq z3p[3] = {bs, bs, bs}, z3 = vkds_seq_zip(z3p, 3);
  ck_assert_int_eq(vkds_reduce_by_key(pol, &z, &vs, &z3, &cs, NULL, &n), E); /* a zip of 2 into a zip of 3 */
  vkds_seq zz[2] = {z, ks}, nested = vkds_seq_zip(zz, 2);
  ck_assert_int_eq(vkds_reduce_by_key(pol, &nested, &vs, &z3, &cs, NULL, &n), E); /* a part that is a zip */
  ck_assert_int_eq(vkds_inclusive_scan_by_key(pol, &ks, &vs, &vs, NULL, NULL), E); /* no in place */
  ck_assert_int_eq(vkds_exclusive_scan_by_key(pol, &ks, &vs, &ks, NULL, NULL), E);
  ck_assert_int_eq(vkds_reduce_by_key(pol, &ks, &vs, &bs, &bs, NULL, &n), E);      /* outputs overlap */
  ck_assert_int_eq(vkds_reduce_by_key(pol, &ks, &vs, &vs, &cs, NULL, &n), E);      /* output over an input */
  /* values_out over the values or the keys (ran with success: only keys_out was checked
   * against the inputs; a memory-kinds probe) */
  ck_assert_int_eq(vkds_reduce_by_key(pol, &ks, &vs, &bs, &vs, NULL, &n), E);
  ck_assert_msg(strstr(vkds_last_error_message(), "second output overlaps an input"), "%s", vkds_last_error_message());
  ck_assert_int_eq(vkds_reduce_by_key(pol, &ks, &vs, &bs, &ks, NULL, &n), E);
  vkds_seq ro = vkds_seq_host_const(b, 16, VKDS_U32);
  ck_assert_int_eq(vkds_inclusive_scan_by_key(pol, &ks, &vs, &ro, NULL, NULL), E); /* read-only output */
  ck_assert_int_eq(vkds_reduce_by_key(pol, &ks, &vs, &bs, &ro, NULL, &n), E);
  ck_assert_int_eq(vkds_inclusive_scan_by_key(pol, &ks, &vs, &bs, &(vkds_op){.kind = 42}, NULL), E); /* operators */
  ck_assert_int_eq(vkds_reduce_by_key(pol, &ks, &vs, &bs, &cs, &(vkds_op){VKDS_OP_GLSL, "a + b", NULL}, &n), E);
  float f[16];
  vkds_seq fs = vkds_seq_host(f, 16, VKDS_F32);
  ck_assert_int_eq(vkds_inclusive_scan_by_key(pol, &ks, &vs, &fs, &(vkds_op){.kind = VKDS_OP_BIT_XOR}, NULL), E);
  ck_assert_int_eq(vkds_inclusive_scan_by_key(pol, &ks, &vs, &bs, &(vkds_op){VKDS_OP_GLSL, "a ** b", "0u"}, NULL),
                   VKDS_ERROR_COMPILE);
  ck_assert_msg(strstr(vkds_last_error_message(), "a ** b"), "%s", vkds_last_error_message());
  vkds_context *other = harness_context(); /* a sequence of another context */
  vkds_buffer *ob;
  ck_assert_vkds(vkds_buffer_create(vkds_context_resource(other, 0), &(vkds_buffer_info){.size = 64}, &ob));
  vkds_seq os = vkds_seq_buffer(vkds_view_of(ob), VKDS_U32);
  ck_assert_int_eq(vkds_inclusive_scan_by_key(pol, &os, &vs, &bs, NULL, NULL), VKDS_ERROR_WRONG_CONTEXT);
  ck_assert_int_eq(vkds_reduce_by_key(pol, &ks, &vs, &bs, &os, NULL, &n), VKDS_ERROR_WRONG_CONTEXT);
  vkds_buffer_destroy(ob);
  vkds_context_destroy(other);
  ck_assert_uint_eq(n, 99);
  for (int i = 0; i < 16; ++i) {
    ck_assert_uint_eq(b[i], 0x77777777u);
    ck_assert_uint_eq(c[i], 0x77777777u);
  }
  ck_assert_vkds(vkds_policy_get_resource_stats(pol, 0, &after));
  /* the compile error selected (the code is built for the selected device), nothing else did */
  ck_assert_uint_le(after.selections, before.selections + 1);
  close_ctx();
}
END_TEST

int main(void) {
  Suite *s = suite_create("segmented");
  TCase *t = harness_long_tcase("reference");
  tcase_add_loop_test(t, every_type_and_pattern, 0, (int)(sizeof TYPES / sizeof *TYPES));
  tcase_add_test(t, big);
  suite_add_tcase(s, t);
  t = harness_tcase("kinds");
  tcase_add_test(t, operators);
  tcase_add_test(t, float_bits_repeat);
  tcase_add_test(t, keys_and_sequence_kinds);
  tcase_add_test(t, zip_keys_written_out);
  suite_add_tcase(s, t);
  t = harness_tcase("forms");
  tcase_add_test(t, forms);
  tcase_add_test(t, many_single_pass_scans_by_key);
  suite_add_tcase(s, t);
  t = harness_tcase("errors");
  tcase_add_test(t, bad_input);
  suite_add_tcase(s, t);
  return harness_run(s);
}
