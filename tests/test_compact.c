/* tests/test_compact.c: stream compaction (vkds/algorithm.h: copy_if, remove_if,
 * partition, unique) on lavapipe, validation on, on both scan paths: every type against
 * a host reference at the sizes where tiles change, masks that keep everything, nothing,
 * every other element and a random half, outputs shorter than the result and of another
 * type, views in and out, 2^24 + 1 elements, the three forms (the count in a device view
 * for the recorded one), NaN in unique, and bad input (a named error, nothing
 * submitted, nothing written). */
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
/* how many of PATHS the tests run: 1 (the single path) in the tcases that force one of
 * its variants */
static int path_count = 2;

static vkds_context *ctx;
static vkds_resource *r0;
static vkds_policy *pol;

/* ctx, r0 and a fixed policy on it, for a context made with `info`. */
static void open_info(const vkds_context_info *info) {
  ck_assert_vkds(vkds_context_create(info, &ctx));
  r0 = vkds_context_resource(ctx, 0);
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = {.context = ctx}}, &pol));
}
static void open_path(vkds_scan_path path) {
  vkds_context_info info = harness_info();
  info.scan_path = path;
  open_info(&info);
}
static void close_ctx(void) {
  vkds_policy_release(pol);
  vkds_context_destroy(ctx);
  pol = NULL, ctx = NULL;
}


static uint64_t rng_state = 0x853c49e6748fea9bull;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
  return rng_state;
}

/* Element i of type t as a double (every value here is a small integer or a NaN). */
static double get(vkds_type t, const void *p, uint64_t i) {
  switch (t) {
  case VKDS_I32: return ((const int32_t *)p)[i];
  case VKDS_U32: return ((const uint32_t *)p)[i];
  case VKDS_F32: return ((const float *)p)[i];
  case VKDS_I64: return (double)((const int64_t *)p)[i];
  case VKDS_U64: return (double)((const uint64_t *)p)[i];
  default: return ((const double *)p)[i];
  }
}
static void put(vkds_type t, void *p, uint64_t i, double d) {
  switch (t) {
  case VKDS_I32: ((int32_t *)p)[i] = (int32_t)d; break;
  case VKDS_U32: ((uint32_t *)p)[i] = (uint32_t)d; break;
  case VKDS_F32: ((float *)p)[i] = (float)d; break;
  case VKDS_I64: ((int64_t *)p)[i] = (int64_t)d; break;
  case VKDS_U64: ((uint64_t *)p)[i] = (uint64_t)d; break;
  default: ((double *)p)[i] = d; break;
  }
}
static bool same(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

/* The masks, as data and a predicate over it. */
typedef enum mask { ALL, NONE, ALTERNATING, RANDOM } mask;
static const char *mask_name(mask m) {
  static const char *n[] = {"all", "none", "alternating", "random"};
  return n[m];
}

/* n elements: values 0..7 in runs (for unique), with element i's parity the mask's
 * alternation; the predicates: ALL "x >= 0", NONE "x > 100", ALTERNATING "x is even",
 * RANDOM "x >= 4". */
static void *mask_data(vkds_type t, uint64_t n, mask m) {
  void *p = malloc((n ? n : 1) * 8);
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t v = rnd() % 8;
    if (m == ALTERNATING) v = (v & ~1ull) | (i & 1);
    else if (rnd() % 3 == 0 && i > 0) v = (uint64_t)get(t, p, i - 1); /* runs of equal values */
    put(t, p, i, (double)v);
  }
  return p;
}
static const char *mask_pred(vkds_type t, mask m) {
  switch (m) {
  case ALL: return "x >= 0";
  case NONE: return "x > 100";
  case ALTERNATING: return is_float(t) ? "mod(x, 2.0) == 0.0" : "(x & 1) == 0";
  default: return "x >= 4";
  }
}
static bool host_pred(double x, mask m) {
  switch (m) {
  case ALL: return x >= 0;
  case NONE: return x > 100;
  case ALTERNATING: return fmod(x, 2.0) == 0;
  default: return x >= 4;
  }
}

typedef enum algo { COPY_IF, REMOVE_IF, PARTITION, UNIQUE } algo;
static const char *algo_name(algo a) {
  static const char *n[] = {"copy_if", "remove_if", "partition", "unique"};
  return n[a];
}

/* The host's answer: kept elements to `yes`, the others to `no` (partition); returns how
 * many were kept. */
static uint64_t host_compact(algo a, vkds_type t, const void *in, uint64_t n, mask m, double *yes, double *no,
                             uint64_t *no_count) {
  uint64_t k = 0, f = 0;
  for (uint64_t i = 0; i < n; ++i) {
    double x = get(t, in, i);
    bool keep = a == UNIQUE ? i == 0 || !(x == get(t, in, i - 1)) : host_pred(x, m) != (a == REMOVE_IF);
    if (keep) yes[k++] = x;
    else no[f++] = x;
  }
  if (no_count) *no_count = f;
  return k;
}

static vkds_result run(algo a, vkds_policy *p, const vkds_seq *in, const vkds_seq *out, const vkds_seq *out2,
                       const char *pred, uint64_t *count) {
  switch (a) {
  case COPY_IF: return vkds_copy_if(p, in, out, pred, count);
  case REMOVE_IF: return vkds_remove_if(p, in, out, pred, count);
  case PARTITION: return vkds_partition(p, in, out, out2, pred, count);
  default: return vkds_unique(p, in, out, count);
  }
}

/* Checks `got` (of type t) against want[0..k), and that nothing past `fit` was written
 * (the canary). */
static void check_out(vkds_type t, const void *got, const double *want, uint64_t k, uint64_t fit, const char *what) {
  uint64_t w = k < fit ? k : fit;
  for (uint64_t i = 0; i < w; ++i)
    if (!same(get(t, got, i), want[i]))
      ck_abort_msg("%s: [%llu] got %g want %g", what, (unsigned long long)i, get(t, got, i), want[i]);
  for (uint64_t i = w; i < fit; ++i)
    if (!same(get(t, got, i), 77.0)) ck_abort_msg("%s: [%llu] written past the kept ones", what, (unsigned long long)i);
}

START_TEST(every_type_mask_and_size) {
  vkds_type t = TYPES[_i];
  uint32_t s = size_of(t);
  uint64_t tile = s == 8 ? 2048 : 4096;
  const uint64_t sizes[] = {0, 1, 257, tile - 1, 3 * tile + 5, 100003};
  const uint64_t most = 100003;
  void *got = malloc(most * 8), *got2 = malloc(most * 8);
  double *yes = malloc(most * 8), *no = malloc(most * 8);
  for (int k = 0; k < path_count; ++k) {
    open_path(PATHS[k]);
    for (mask m = ALL; m <= RANDOM; ++m) {
      void *data = mask_data(t, most, m);
      for (algo a = COPY_IF; a <= UNIQUE; ++a) {
        if (a == UNIQUE && m != RANDOM) continue; /* unique has no predicate: the data's runs */
        for (size_t si = 0; si < sizeof sizes / sizeof *sizes; ++si) {
          uint64_t n = sizes[si];
          if (n == most && m != RANDOM) continue; /* the biggest for one mask */
          for (uint64_t i = 0; i < n; ++i) put(t, got, i, 77), put(t, got2, i, 77);
          vkds_seq is = vkds_seq_host_const(data, n, t), os = vkds_seq_host(got, n, t), os2 = vkds_seq_host(got2, n, t);
          uint64_t count = 12345, no_count;
          ck_assert_vkds(run(a, pol, &is, &os, &os2, mask_pred(t, m), &count));
          uint64_t want = host_compact(a, t, data, n, m, yes, no, &no_count);
          char what[96];
          snprintf(what, sizeof what, "%s %s, type %d, %s mask, n %llu", path_name(PATHS[k]), algo_name(a), (int)t,
                   mask_name(m), (unsigned long long)n);
          ck_assert_msg(count == want, "%s: count %llu want %llu", what, (unsigned long long)count,
                        (unsigned long long)want);
          check_out(t, got, yes, want, n, what);
          if (a == PARTITION) check_out(t, got2, no, no_count, n, what);
        }
      }
      free(data);
    }
    close_ctx();
  }
  free(got), free(got2), free(yes), free(no);
}
END_TEST

/* Outputs shorter than the result, of another type, views in and out, device buffers. */
START_TEST(outputs_and_views) {
  enum { N = 20011 };
  for (int k = 0; k < path_count; ++k) {
    open_path(PATHS[k]);
    int32_t *a = malloc(N * 4);
    for (int i = 0; i < N; ++i) a[i] = (int32_t)(rnd() % 2001) - 1000;
    vkds_seq as = vkds_seq_host(a, N, VKDS_I32);
    /* into 100 doubles: only the first 100 kept are written, the count says all */
    double d[101];
    for (int i = 0; i < 101; ++i) d[i] = -7;
    vkds_seq ds = vkds_seq_host(d, 100, VKDS_F64);
    uint64_t count;
    ck_assert_vkds(vkds_copy_if(pol, &as, &ds, "x > 0", &count));
    uint64_t want = 0;
    for (int i = 0; i < N; ++i)
      if (a[i] > 0) {
        if (want < 100) ck_assert(d[want] == a[i]);
        ++want;
      }
    ck_assert_uint_eq(count, want);
    ck_assert(d[100] == -7);
    /* a counting input, a reversed output on the device */
    vkds_buffer *b;
    ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = N * 4}, &b));
    vkds_seq bs = vkds_seq_buffer(vkds_view_of(b), VKDS_U32), rev = vkds_seq_reverse(&bs);
    vkds_seq cnt = vkds_seq_counting(0, N, VKDS_U32);
    ck_assert_vkds(vkds_remove_if(pol, &cnt, &rev, "x % 3u == 0u", &count));
    ck_assert_uint_eq(count, N - (N + 2) / 3);
    uint32_t *back = malloc(N * 4);
    ck_assert_vkds(vkds_download(r0, back, vkds_view_of(b), N * 4));
    for (uint64_t i = 0, v = 0; i < count; ++i, ++v) {
      if (v % 3 == 0) ++v;
      ck_assert_uint_eq(back[N - 1 - i], v);
    }
    /* a transform view in, a discard for the rejected ones */
    vkds_seq tv = vkds_seq_transform(&as, &(vkds_transform_op){.glsl = "abs(x)"});
    vkds_seq sink = vkds_seq_discard(N, VKDS_I32);
    int32_t *small = malloc(N * 4);
    vkds_seq ss = vkds_seq_host(small, N, VKDS_I32);
    ck_assert_vkds(vkds_partition(pol, &tv, &ss, &sink, "x < 10", &count));
    want = 0;
    for (int i = 0; i < N; ++i)
      if (abs(a[i]) < 10) ck_assert_int_eq(small[want++], abs(a[i]));
    ck_assert_uint_eq(count, want);
    vkds_buffer_destroy(b);
    free(a), free(back), free(small);
    close_ctx();
  }
}
END_TEST

/* Records kept whole: a zip of three parts (host u32, a device f32 buffer, const host
 * i64) by a predicate over the tuple, into zips of as many parts (f32 widened to f64,
 * a reversed part, a discarded one), by copy_if, remove_if (async), partition and unique,
 * against the host. */
START_TEST(records) {
  enum { N = 20011 };
  for (int k = 0; k < path_count; ++k) {
    open_path(PATHS[k]);
    uint32_t *a = malloc(N * 4), *oa = malloc(N * 4), *fa = malloc(N * 4);
    float *b = malloc(N * 4);
    int64_t *c = malloc(N * 8), *oc = malloc(N * 8);
    double *ob = malloc(N * 8);
    for (int i = 0; i < N; ++i)
      a[i] = (uint32_t)(rnd() % 50), b[i] = (float)((int)(rnd() % 201) - 100) / 4, c[i] = (int64_t)(rnd() >> 1) - (1ll << 61);
    vkds_buffer *bb, *rb;
    ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = N * 4}, &bb));
    ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = N * 4}, &rb));
    ck_assert_vkds(vkds_upload(r0, vkds_view_of(bb), b, N * 4));
    vkds_seq in_parts[3] = {vkds_seq_host(a, N, VKDS_U32), vkds_seq_buffer(vkds_view_of(bb), VKDS_F32),
                            vkds_seq_host_const(c, N, VKDS_I64)};
    vkds_seq in = vkds_seq_zip(in_parts, 3);
    vkds_seq out_parts[3] = {vkds_seq_host(oa, N, VKDS_U32), vkds_seq_host(ob, N, VKDS_F64),
                             vkds_seq_host(oc, N, VKDS_I64)};
    vkds_seq out = vkds_seq_zip(out_parts, 3);
    const char *pred = "x.p0 % 3u == 0u && x.p1 > 0.0 && x.p2 < 0l";
    uint64_t count, want = 0;
    ck_assert_vkds(vkds_copy_if(pol, &in, &out, pred, &count));
    for (int i = 0; i < N; ++i)
      if (a[i] % 3 == 0 && b[i] > 0 && c[i] < 0) {
        ck_assert_msg(oa[want] == a[i] && ob[want] == b[i] && oc[want] == c[i], "%s: kept %llu", path_name(PATHS[k]),
                      (unsigned long long)want);
        ++want;
      }
    ck_assert_uint_eq(count, want);
    /* the others, asynchronously */
    vkds_submission *sub;
    ck_assert_vkds(vkds_remove_if_async(pol, &in, &out, pred, &count, &sub));
    ck_assert_vkds(vkds_submission_wait(sub));
    vkds_submission_release(sub);
    ck_assert_uint_eq(count, N - want);
    for (uint64_t i = 0, j = 0; i < (uint64_t)N; ++i)
      if (!(a[i] % 3 == 0 && b[i] > 0 && c[i] < 0)) {
        ck_assert(oa[j] == a[i] && ob[j] == b[i] && oc[j] == c[i]);
        ++j;
      }
    /* a partition: the kept ones' parts to a reversed device buffer and a discard */
    vkds_seq rs = vkds_seq_buffer(vkds_view_of(rb), VKDS_U32);
    vkds_seq yes_parts[3] = {vkds_seq_reverse(&rs), vkds_seq_discard(N, VKDS_F32), vkds_seq_discard(N, VKDS_I64)};
    vkds_seq yes = vkds_seq_zip(yes_parts, 3);
    ck_assert_vkds(vkds_partition(pol, &in, &yes, &out, "x.p1 < 0.0", &count));
    ck_assert_vkds(vkds_download(r0, fa, vkds_view_of(rb), N * 4));
    uint64_t t = 0, f = 0;
    for (int i = 0; i < N; ++i) {
      if (b[i] < 0) ck_assert_uint_eq(fa[N - 1 - t++], a[i]);
      else ck_assert(oa[f] == a[i] && ob[f] == b[i] && oc[f] == c[i]), ++f;
    }
    ck_assert_uint_eq(count, t);
    /* unique pairs: runs of equal (a, b) */
    for (int i = 0; i < N; ++i) a[i] = (uint32_t)(i / 3 % 5), b[i] = (float)(i / 2 % 3);
    ck_assert_vkds(vkds_upload(r0, vkds_view_of(bb), b, N * 4));
    ck_assert_vkds(vkds_unique(pol, &in, &out, &count));
    want = 0;
    for (int i = 0; i < N; ++i)
      if (i == 0 || a[i] != a[i - 1] || b[i] != b[i - 1] || c[i] != c[i - 1]) {
        ck_assert(oa[want] == a[i] && ob[want] == b[i] && oc[want] == c[i]);
        ++want;
      }
    ck_assert_uint_eq(count, want);
    vkds_buffer_destroy(bb), vkds_buffer_destroy(rb);
    free(a), free(oa), free(fa), free(b), free(c), free(oc), free(ob);
    close_ctx();
  }
}
END_TEST

/* Every kind of input sequence on both paths (the chained compaction reads its input
 * twice): a device buffer, mapped memory, host memory (writable and const) and a buffer
 * of a second VkDevice (staged whole), each against the host's answer on fresh random
 * data of a length that is not a multiple of 4. */
START_TEST(every_input_kind) {
  enum { N = 9003 };
  uint32_t *host = malloc(N * 4), *got = malloc(N * 4);
  for (uint32_t i = 0; i < N; ++i) host[i] = (uint32_t)rnd();
  const char *pred = "(x & 5u) == 1u";
  uint64_t want = 0;
  for (uint32_t i = 0; i < N; ++i) want += (host[i] & 5u) == 1u;
  for (int k = 0; k < path_count; ++k) {
    vkds_context_info info = harness_info();
    info.devices_per_physical = 2;
    info.scan_path = PATHS[k];
    open_info(&info);
    vkds_resource *r1 = harness_device_resource(ctx, 1);
    ck_assert_ptr_nonnull(r1);
    vkds_buffer *dev, *mapped, *other;
    ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = N * 4}, &dev));
    ck_assert_vkds(vkds_upload(r0, vkds_view_of(dev), host, N * 4));
    ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = N * 4, .memory = VKDS_MEMORY_MAPPED}, &mapped));
    memcpy(vkds_buffer_map(mapped), host, N * 4);
    ck_assert_vkds(vkds_buffer_create(r1, &(vkds_buffer_info){.size = N * 4}, &other));
    ck_assert_vkds(vkds_upload(r1, vkds_view_of(other), host, N * 4));
    const vkds_seq ins[] = {vkds_seq_buffer(vkds_view_of(dev), VKDS_U32),
                            vkds_seq_mapped(vkds_view_of(mapped), VKDS_U32), vkds_seq_host(host, N, VKDS_U32),
                            vkds_seq_host_const(host, N, VKDS_U32), vkds_seq_buffer(vkds_view_of(other), VKDS_U32)};
    static const char *const names[] = {"buffer", "mapped", "host", "host const", "buffer of device 1"};
    for (size_t i = 0; i < sizeof ins / sizeof *ins; ++i) {
      for (uint32_t j = 0; j < N; ++j) got[j] = 77;
      vkds_seq os = vkds_seq_host(got, N, VKDS_U32);
      uint64_t count = 0;
      ck_assert_vkds(vkds_copy_if(pol, &ins[i], &os, pred, &count));
      ck_assert_msg(count == want, "%s, %s: count %llu want %llu", path_name(PATHS[k]), names[i],
                    (unsigned long long)count, (unsigned long long)want);
      for (uint32_t j = 0, at = 0; j < N; ++j)
        if ((host[j] & 5u) == 1u && got[at++] != host[j])
          ck_abort_msg("%s, %s: [%u] got %u want %u", path_name(PATHS[k]), names[i], at - 1, got[at - 1], host[j]);
      for (uint64_t j = want; j < N; ++j)
        if (got[j] != 77) ck_abort_msg("%s, %s: [%llu] written past the kept ones", path_name(PATHS[k]), names[i],
                                       (unsigned long long)j);
    }
    vkds_buffer_destroy(dev), vkds_buffer_destroy(mapped), vkds_buffer_destroy(other);
    close_ctx();
  }
  free(host), free(got);
}
END_TEST

START_TEST(big) {
  const uint64_t n = (1ull << harness_top_log2(24)) + 1;
  uint32_t *a = malloc(n * 4), *got = malloc(n * 4);
  for (uint64_t i = 0; i < n; ++i) a[i] = (uint32_t)rnd();
  for (int k = 0; k < path_count; ++k) {
    open_path(PATHS[k]);
    vkds_buffer *in, *out;
    ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = n * 4}, &in));
    ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = n * 4}, &out));
    ck_assert_vkds(vkds_upload(r0, vkds_view_of(in), a, n * 4));
    vkds_seq is = vkds_seq_buffer(vkds_view_of(in), VKDS_U32), os = vkds_seq_buffer(vkds_view_of(out), VKDS_U32);
    uint64_t count;
    ck_assert_vkds(vkds_copy_if(pol, &is, &os, "(x & 3u) != 0u", &count));
    ck_assert_vkds(vkds_download(r0, got, vkds_view_of(out), count * 4));
    uint64_t j = 0;
    for (uint64_t i = 0; i < n; ++i)
      if (a[i] & 3u) {
        if (got[j] != a[i]) ck_abort_msg("%s: [%llu] got %u want %u", path_name(PATHS[k]), (unsigned long long)j, got[j], a[i]);
        ++j;
      }
    ck_assert_uint_eq(count, j);
    vkds_buffer_destroy(in), vkds_buffer_destroy(out);
    close_ctx();
  }
  free(a), free(got);
}
END_TEST

/* Host data past the staging ring (two chunks of 256 KiB): compaction stages it whole
 * (its outputs' places depend on every chunk before: algorithm.h), on both paths; every
 * algorithm, random mask (unique: the data's runs), and the asynchronous form. */
START_TEST(host_larger_than_staging_ring) {
  enum { N = (1 << 20) + 3 };
  void *data = mask_data(VKDS_U32, N, RANDOM);
  uint32_t *got = malloc(N * 4), *got2 = malloc(N * 4);
  double *yes = malloc(N * 8), *no = malloc(N * 8);
  for (int k = 0; k < path_count; ++k) {
    vkds_context_info info = harness_info();
    info.staging_chunks = 2;
    info.staging_chunk_bytes = 256 << 10;
    info.scan_path = PATHS[k];
    open_info(&info);
    for (algo a = COPY_IF; a <= UNIQUE; ++a) {
      for (uint64_t i = 0; i < N; ++i) got[i] = got2[i] = 77;
      vkds_seq is = vkds_seq_host_const(data, N, VKDS_U32), os = vkds_seq_host(got, N, VKDS_U32),
               os2 = vkds_seq_host(got2, N, VKDS_U32);
      uint64_t count = 12345, no_count;
      ck_assert_vkds(run(a, pol, &is, &os, &os2, mask_pred(VKDS_U32, RANDOM), &count));
      uint64_t want = host_compact(a, VKDS_U32, data, N, RANDOM, yes, no, &no_count);
      char what[64];
      snprintf(what, sizeof what, "%s %s, past the ring", path_name(PATHS[k]), algo_name(a));
      ck_assert_msg(count == want, "%s: count %llu want %llu", what, (unsigned long long)count,
                    (unsigned long long)want);
      check_out(VKDS_U32, got, yes, want, N, what);
      if (a == PARTITION) check_out(VKDS_U32, got2, no, no_count, N, what);
    }
    for (uint64_t i = 0; i < N; ++i) got[i] = 77;
    vkds_seq is = vkds_seq_host_const(data, N, VKDS_U32), os = vkds_seq_host(got, N, VKDS_U32);
    uint64_t count = 0;
    vkds_submission *sub;
    ck_assert_vkds(vkds_copy_if_async(pol, &is, &os, mask_pred(VKDS_U32, RANDOM), &count, &sub));
    ck_assert_vkds(vkds_submission_wait(sub));
    vkds_submission_release(sub);
    uint64_t want = host_compact(COPY_IF, VKDS_U32, data, N, RANDOM, yes, no, NULL);
    ck_assert_uint_eq(count, want);
    check_out(VKDS_U32, got, yes, want, N, "async, staged whole");
    close_ctx();
  }
  free(data), free(got), free(got2), free(yes), free(no);
}
END_TEST

/* ---- the forms, NaN ---- */

START_TEST(forms_and_nan) {
  enum { N = 9000 };
  for (int k = 0; k < path_count; ++k) {
    open_path(PATHS[k]);
    float f[8] = {NAN, NAN, 1, 1, NAN, 2, 2, 2}, u[8];
    vkds_seq fs = vkds_seq_host(f, 8, VKDS_F32), us = vkds_seq_host(u, 8, VKDS_F32);
    uint64_t count;
    ck_assert_vkds(vkds_unique(pol, &fs, &us, &count));
    ck_assert_uint_eq(count, 5); /* NaN != NaN: both kept */
    ck_assert(isnan(u[0]) && isnan(u[1]) && u[2] == 1 && isnan(u[3]) && u[4] == 2);
    /* asynchronous: the count is there once the submission is done */
    uint32_t *a = malloc(N * 4), *b = malloc(N * 4);
    for (uint32_t i = 0; i < N; ++i) a[i] = i;
    vkds_seq as = vkds_seq_host(a, N, VKDS_U32), bs = vkds_seq_host(b, N, VKDS_U32);
    vkds_submission *sub;
    uint64_t acount = 0;
    ck_assert_vkds(vkds_copy_if_async(pol, &as, &bs, "x % 7u == 0u", &acount, &sub));
    vkds_result r;
    while ((r = vkds_submission_poll(sub)) == VKDS_ERROR_WOULD_BLOCK) usleep(100);
    ck_assert_vkds(r);
    vkds_submission_release(sub);
    ck_assert_uint_eq(acount, (N + 6) / 7);
    for (uint64_t i = 0; i < acount; ++i) harness_expect_uint_eq(b[i], i * 7);
    /* recorded: the counts land in a device view (also 0 for an empty input) */
    vkds_buffer *in, *out, *res, *scratch;
    ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = N * 4}, &in));
    ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = N * 4}, &out));
    ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = 64, .memory = VKDS_MEMORY_MAPPED}, &res));
    ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = vkds_algorithm_scratch_bytes(r0, N)}, &scratch));
    ck_assert_vkds(vkds_upload(r0, vkds_view_of(in), a, N * 4));
    memset(vkds_buffer_map(res), 0x55, 64);
    app_cmd ac = {0};
    app_cmd_begin(&ac, r0);
    vkds_cmd c = {.cmd = ac.cmd, .resource = r0, .scratch = vkds_view_of(scratch)};
    vkds_seq is = vkds_seq_buffer(vkds_view_of(in), VKDS_U32), os = vkds_seq_buffer(vkds_view_of(out), VKDS_U32);
    ck_assert_vkds(vkds_cmd_remove_if(&c, &is, &os, "x % 2u == 1u", (vkds_view){res, 0, 8}));
    vkds_seq empty = vkds_seq_host(a, 0, VKDS_U32);
    ck_assert_vkds(vkds_cmd_unique(&c, &empty, &os, (vkds_view){res, 8, 8}));
    ck_assert_int_eq(vkds_cmd_copy_if(&c, &is, &os, "true", (vkds_view){res, 4, 8}), VKDS_ERROR_INVALID_ARGUMENT); /* unaligned */
    ck_assert_int_eq(vkds_cmd_copy_if(&c, &is, &os, "true", (vkds_view){0}), VKDS_ERROR_INVALID_ARGUMENT);
    app_cmd_submit(&ac, 10);
    uint64_t counts[2];
    memcpy(counts, vkds_buffer_map(res), 16);
    ck_assert_uint_eq(counts[0], N / 2);
    ck_assert_uint_eq(counts[1], 0);
    ck_assert_vkds(vkds_download(r0, b, vkds_view_of(out), N / 2 * 4));
    for (uint32_t i = 0; i < N / 2; ++i) harness_expect_uint_eq(b[i], 2 * i);
    app_cmd_destroy(&ac);
    vkds_buffer_destroy(in), vkds_buffer_destroy(out), vkds_buffer_destroy(res), vkds_buffer_destroy(scratch);
    free(a), free(b);
    close_ctx();
  }
}
END_TEST

/* Leaves the context's kept staging temporaries of n u32 full of 0xDEADBEEF: a host
 * copy stages its input and its output through two of them. */
static void poison_spares(uint32_t *scratch, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) scratch[i] = 0xDEADBEEFu;
  vkds_seq from = vkds_seq_host(scratch, n, VKDS_U32), to = vkds_seq_host(scratch + n, n, VKDS_U32);
  ck_assert_vkds(vkds_copy(pol, &from, &to));
}

/* Host outputs are staged, and copied back only up to what the call wrote (nothing goes
 * up): what lies past the count keeps its values, also where the temporary held another
 * call's data, for each output of a partition, outputs shorter than the count, the
 * asynchronous form and an output seen through a view (staged both ways). */
START_TEST(host_outputs_are_copied_back_up_to_the_count) {
  enum { N = 30011 };
  open_path(VKDS_SCAN_PATH_SINGLE);
  uint32_t *in = malloc(N * 4), *yes = malloc(N * 4), *no = malloc(N * 4), *scratch = malloc(2 * N * 4);
  uint32_t *want_yes = malloc(N * 4), *want_no = malloc(N * 4);
  uint64_t k = 0, r = 0;
  for (uint32_t i = 0; i < N; ++i) {
    in[i] = (uint32_t)rnd() % 1000;
    if (in[i] % 3 == 0) want_yes[k++] = in[i];
    else want_no[r++] = in[i];
  }
  vkds_seq is = vkds_seq_host_const(in, N, VKDS_U32);
  for (uint64_t fit = N; fit >= N / 8; fit /= 8) { /* whole, then shorter than the kept ones */
    for (int async = 0; async < 2; ++async) {
      for (uint32_t i = 0; i < N; ++i) yes[i] = no[i] = 77;
      vkds_seq ys = vkds_seq_host(yes, fit, VKDS_U32), ns = vkds_seq_host(no, fit, VKDS_U32);
      uint64_t count = 0;
      poison_spares(scratch, N);
      if (async) {
        vkds_submission *sub;
        ck_assert_vkds(vkds_partition_async(pol, &is, &ys, &ns, "x % 3u == 0u", &count, &sub));
        ck_assert_vkds(vkds_submission_wait(sub));
        vkds_submission_release(sub);
      } else {
        ck_assert_vkds(vkds_partition(pol, &is, &ys, &ns, "x % 3u == 0u", &count));
      }
      ck_assert_uint_eq(count, k);
      for (uint64_t i = 0; i < N; ++i) {
        uint32_t y = i < k && i < fit ? want_yes[i] : 77, n = i < r && i < fit ? want_no[i] : 77;
        ck_assert_msg(yes[i] == y && no[i] == n, "fit %llu, async %d, [%llu]: %u/%u, want %u/%u",
                      (unsigned long long)fit, async, (unsigned long long)i, yes[i], no[i], y, n);
      }
    }
  }
  /* copy_if into a reversed host output: written from the end, the front kept */
  for (uint32_t i = 0; i < N; ++i) yes[i] = 77;
  vkds_seq ys = vkds_seq_host(yes, N, VKDS_U32), rev = vkds_seq_reverse(&ys);
  uint64_t count = 0;
  poison_spares(scratch, N);
  ck_assert_vkds(vkds_copy_if(pol, &is, &rev, "x % 3u == 0u", &count));
  ck_assert_uint_eq(count, k);
  for (uint64_t i = 0; i < N; ++i) harness_expect_uint_eq(yes[N - 1 - i], i < k ? want_yes[i] : 77);
  free(in), free(yes), free(no), free(scratch), free(want_yes), free(want_no);
  close_ctx();
}
END_TEST

/* ---- bad input ---- */

START_TEST(bad_input) {
  open_path(VKDS_SCAN_PATH_SINGLE);
  uint32_t a[16] = {1, 2, 3}, b[16], c[16];
  memset(b, 0x77, sizeof b), memset(c, 0x77, sizeof c);
  vkds_seq as = vkds_seq_host(a, 16, VKDS_U32), bs = vkds_seq_host(b, 16, VKDS_U32), cs = vkds_seq_host(c, 16, VKDS_U32);
  vkds_policy_resource_stats before, after;
  ck_assert_vkds(vkds_policy_get_resource_stats(pol, 0, &before));
  const vkds_result E = VKDS_ERROR_INVALID_ARGUMENT;
  uint64_t n = 99;
  ck_assert_int_eq(vkds_copy_if(pol, &as, &bs, NULL, &n), E);                            /* no predicate */
  ck_assert_int_eq(vkds_copy_if(pol, &as, &bs, "x > 1u", NULL), E);                      /* no count */
  ck_assert_int_eq(vkds_unique(pol, &as, &bs, NULL), E);
  ck_assert_int_eq(vkds_partition(pol, &as, &bs, NULL, "x > 1u", &n), E);                 /* no second output */
  ck_assert_int_eq(vkds_partition(pol, &as, &bs, &bs, "x > 1u", &n), E);                  /* outputs overlap */
  vkds_seq own_map = vkds_seq_permutation(&cs, &cs); /* a second output that writes its own map */
  ck_assert_int_eq(vkds_partition(pol, &as, &bs, &own_map, "x > 1u", &n), E);
  ck_assert_msg(strstr(vkds_last_error_message(), "second output writes the map"), "%s", vkds_last_error_message());
  vkds_seq half = vkds_seq_host(b + 8, 8, VKDS_U32);
  ck_assert_int_eq(vkds_partition(pol, &as, &bs, &half, "x > 1u", &n), E);
  ck_assert_int_eq(vkds_copy_if(pol, &as, &as, "x > 1u", &n), E);                         /* no in place */
  /* the second output over the input, or over part of it (ran with success: only the
   * first output was checked against the input; a memory-kinds probe) */
  ck_assert_int_eq(vkds_partition(pol, &as, &bs, &as, "x > 1u", &n), E);
  ck_assert_msg(strstr(vkds_last_error_message(), "second output overlaps an input"), "%s", vkds_last_error_message());
  vkds_seq a_tail = vkds_seq_host(a + 8, 8, VKDS_U32);
  ck_assert_int_eq(vkds_partition(pol, &as, &bs, &a_tail, "x > 1u", &n), E);
  vkds_seq ro = vkds_seq_host_const(b, 16, VKDS_U32);
  ck_assert_int_eq(vkds_remove_if(pol, &as, &ro, "x > 1u", &n), E);                       /* read-only output */
  vkds_seq zp[2] = {as, cs};
  vkds_seq z = vkds_seq_zip(zp, 2);
  ck_assert_int_eq(vkds_copy_if(pol, &z, &bs, "x.p0 > 1u", &n), E);                       /* tuples to numbers */
  ck_assert_msg(strstr(vkds_last_error_message(), "must be a zip of as many"), "%s", vkds_last_error_message());
  ck_assert_int_eq(vkds_unique(pol, &z, &bs, &n), E);
  vkds_seq z3p[3] = {bs, bs, bs}, z3 = vkds_seq_zip(z3p, 3);
  ck_assert_int_eq(vkds_copy_if(pol, &z, &z3, "x.p0 > 1u", &n), E); /* tuples of 2 to a zip of 3 */
  vkds_seq zz[2] = {z, as}, nested = vkds_seq_zip(zz, 2), outs[2] = {bs, cs}, zo = vkds_seq_zip(outs, 2);
  ck_assert_int_eq(vkds_copy_if(pol, &nested, &zo, "x.p1 > 1u", &n), E); /* a part that is a zip */
  ck_assert_msg(strstr(vkds_last_error_message(), "not a number"), "%s", vkds_last_error_message());
  ck_assert_int_eq(vkds_copy_if(pol, &as, &zo, "x > 1u", &n), E); /* numbers to a zip */
  ck_assert_int_eq(vkds_partition(pol, &z, &zo, &cs, "x.p0 > 1u", &n), E); /* the second output a number */
  ck_assert_msg(strstr(vkds_last_error_message(), "second output"), "%s", vkds_last_error_message());
  ck_assert_int_eq(vkds_copy_if(NULL, &as, &bs, "x > 1u", &n), E);
  ck_assert_int_eq(vkds_copy_if(pol, NULL, &bs, "x > 1u", &n), E);
  ck_assert_int_eq(vkds_copy_if_async(pol, &as, &bs, "x > 1u", &n, NULL), E);
  ck_assert_int_eq(vkds_cmd_unique(NULL, &as, &bs, (vkds_view){0}), E);
  vkds_context *other = harness_context();
  vkds_buffer *ob;
  ck_assert_vkds(vkds_buffer_create(vkds_context_resource(other, 0), &(vkds_buffer_info){.size = 64}, &ob));
  vkds_seq os = vkds_seq_buffer(vkds_view_of(ob), VKDS_U32);
  ck_assert_int_eq(vkds_copy_if(pol, &os, &bs, "x > 1u", &n), VKDS_ERROR_WRONG_CONTEXT);
  vkds_buffer_destroy(ob);
  vkds_context_destroy(other);
  ck_assert_uint_eq(n, 99);
  for (int i = 0; i < 16; ++i) {
    ck_assert_uint_eq(b[i], 0x77777777u);
    ck_assert_uint_eq(c[i], 0x77777777u);
  }
  ck_assert_vkds(vkds_policy_get_resource_stats(pol, 0, &after));
  ck_assert_uint_eq(after.selections, before.selections); /* nothing selected, so nothing submitted */
  close_ctx();
}
END_TEST

/* The portable path's whole tiles staged in shared memory, which the rule gives GPUs and
 * not lavapipe (scan.c): forced for the tcase's tests. */
static void shared_tiles_on(void) { harness_setenv("VKDS_SCAN_TILES", "shared"); }
static void shared_tiles_off(void) { harness_setenv("VKDS_SCAN_TILES", NULL); }

/* The single pass's two compactions: by default (open_path(SINGLE) above) the chained
 * tiles in their small shape (256x4, tiles of 4,096); these tcases force the shape the
 * rule gives the largest compactions (384x10: tiles of 15,360, loaded whole and read again
 * for the stores; groups of 384 and runs of 10, neither a power of two) with every tile
 * also reducing its predecessor (the fallback), and the
 * A/B/R single pass (scan_single.glsl) that compaction ran in before. */
static void chained_large_on(void) {
  harness_setenv("VKDS_SCAN_CHAINED", "384x10");
  harness_setenv("VKDS_SCAN_SPINS", "-1");
  path_count = 1;
}
static void chained_large_off(void) {
  harness_setenv("VKDS_SCAN_CHAINED", NULL);
  harness_setenv("VKDS_SCAN_SPINS", NULL);
  path_count = 2;
}
static void abr_single_on(void) {
  harness_setenv("VKDS_SCAN_CHAINED", "off");
  path_count = 1;
}
static void abr_single_off(void) {
  harness_setenv("VKDS_SCAN_CHAINED", NULL);
  path_count = 2;
}

int main(void) {
  Suite *s = suite_create("compact");
  TCase *t = harness_long_tcase("reference");
  tcase_add_loop_test(t, every_type_mask_and_size, 0, (int)(sizeof TYPES / sizeof *TYPES));
  tcase_add_test(t, big);
  suite_add_tcase(s, t);
  t = harness_tcase("kinds");
  tcase_add_test(t, outputs_and_views);
  tcase_add_test(t, host_larger_than_staging_ring);
  tcase_add_test(t, every_input_kind);
  tcase_add_test(t, records);
  suite_add_tcase(s, t);
  t = harness_long_tcase("shared_tiles");
  tcase_add_checked_fixture(t, shared_tiles_on, shared_tiles_off);
  tcase_add_loop_test(t, every_type_mask_and_size, 0, 3); /* the 4-byte types: staged */
  tcase_add_test(t, outputs_and_views);
  suite_add_tcase(s, t);
  t = harness_tcase("chained_large");
  tcase_add_checked_fixture(t, chained_large_on, chained_large_off);
  tcase_add_loop_test(t, every_type_mask_and_size, 2, 4); /* F32 (staged stores), I64 (direct) */
  tcase_add_test(t, outputs_and_views);
  tcase_add_test(t, records);
  suite_add_tcase(s, t);
  t = harness_tcase("abr_single");
  tcase_add_checked_fixture(t, abr_single_on, abr_single_off);
  tcase_add_loop_test(t, every_type_mask_and_size, 2, 4);
  tcase_add_test(t, outputs_and_views);
  suite_add_tcase(s, t);
  t = harness_tcase("forms");
  tcase_add_test(t, forms_and_nan);
  tcase_add_test(t, host_outputs_are_copied_back_up_to_the_count);
  suite_add_tcase(s, t);
  t = harness_tcase("errors");
  tcase_add_test(t, bad_input);
  suite_add_tcase(s, t);
  return harness_run(s);
}
