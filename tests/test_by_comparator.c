/* tests/test_by_comparator.c: the searches, the merge and is_sorted by a user's comparator
 * (vkds/algorithm.h: vkds_lower_bound_by, vkds_upper_bound_by, vkds_merge_by,
 * vkds_is_sorted_by) on lavapipe, validation on, against host references written from
 * the documented definitions: u32 ordered by their low byte only (so equal elements in
 * the order differ, and stability shows), f32 by absolute value, records (zips of 8 and
 * 16 bytes) by one part, ascending and descending; sizes from empty to past a work
 * group's 2048 merge outputs; host data staged (is_sorted_by's larger than the staging
 * ring too), a buffer of a second VkDevice, a reverse view of a zip read by
 * is_sorted_by, a zip output with a part under a view; the three forms, the recording
 * form's launch arguments kept in its scratch where they outgrow lavapipe's push
 * constants (4-part records merged, 16-part zips searched); bad input. */
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

static void open_ctx(uint32_t devices) {
  vkds_context_info info = harness_info();
  info.devices_per_physical = devices;
  harness_open_fixed(&info, &ctx, &r0, &pol);
}
static void close_ctx(void) { harness_close_fixed(&ctx, &pol); }

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) { return harness_xorshift(&rng_state); }

/* A buffer's first `count` elements (an empty host sequence for none: a view of 0 bytes
 * is the whole buffer). */
static vkds_seq first(vkds_buffer *b, uint64_t count, vkds_type t) {
  static uint32_t none;
  return count ? vkds_seq_buffer((vkds_view){b, 0, count * vkds_type_size(t)}, t) : vkds_seq_host(&none, 0, t);
}

/* ---- u32 by the low byte ---- */

static const char *LOW_BYTE = "(a & 255u) < (b & 255u)";
static bool low_less(uint32_t a, uint32_t b) { return (a & 255u) < (b & 255u); }
/* (qsort is not stable: ties are broken by the whole value, which the comparator ignores) */
static int cmp_low(const void *x, const void *y) {
  uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
  return low_less(a, b) ? -1 : low_less(b, a) ? 1 : (a > b) - (a < b);
}

static uint64_t host_lower(const uint32_t *s, uint64_t n, uint32_t x) {
  uint64_t j = 0;
  while (j < n && low_less(s[j], x)) ++j;
  return j;
}
static uint64_t host_upper(const uint32_t *s, uint64_t n, uint32_t x) {
  uint64_t j = 0;
  while (j < n && !low_less(x, s[j])) ++j;
  return j;
}

/* Both bounds of needles in a sequence sorted by the low byte: U32 and U64 indices, the
 * sorted sequence a buffer or host data (staged), the needles host data or a buffer. */
START_TEST(bounds_by_low_byte) {
  open_ctx(1);
  const uint64_t sorted_sizes[] = {0, 1, 7, 1000, 100003}, needle_sizes[] = {0, 1, 5, 4099};
  enum { MOST = 100003 };
  uint32_t *s = malloc(MOST * 4), *x = malloc(4099 * 4);
  uint64_t *got = malloc(4099 * 8);
  for (size_t si = 0; si < sizeof sorted_sizes / sizeof *sorted_sizes; ++si)
    for (size_t ni = 0; ni < sizeof needle_sizes / sizeof *needle_sizes; ++ni) {
      uint64_t n = sorted_sizes[si], m = needle_sizes[ni];
      for (uint64_t i = 0; i < n; ++i) s[i] = (uint32_t)rnd() & 0xffff00ffu;
      for (uint64_t i = 0; i < m; ++i) x[i] = (uint32_t)rnd();
      qsort(s, n, 4, cmp_low);
      vkds_buffer *sb = harness_device_copy(r0, s, n * 4), *xb = harness_device_copy(r0, x, m * 4);
      bool staged = (si + ni) % 2 == 1;
      vkds_seq ss = staged ? vkds_seq_host_const(s, n, VKDS_U32) : first(sb, n, VKDS_U32);
      vkds_seq xs = staged ? first(xb, m, VKDS_U32) : vkds_seq_host_const(x, m, VKDS_U32);
      for (int upper = 0; upper < 2; ++upper) {
        vkds_type it = upper ? VKDS_U64 : VKDS_U32;
        memset(got, 0xa5, 4099 * 8);
        vkds_seq out = vkds_seq_host(got, m, it);
        ck_assert_vkds(upper ? vkds_upper_bound_by(pol, &ss, &xs, &out, LOW_BYTE)
                             : vkds_lower_bound_by(pol, &ss, &xs, &out, LOW_BYTE));
        for (uint64_t i = 0; i < m; ++i) {
          uint64_t g = upper ? got[i] : ((uint32_t *)got)[i];
          uint64_t want = upper ? host_upper(s, n, x[i]) : host_lower(s, n, x[i]);
          if (g != want)
            ck_abort_msg("%s_bound_by, %llu sorted, needle %llu (%#x): got %llu want %llu", upper ? "upper" : "lower",
                         (unsigned long long)n, (unsigned long long)i, x[i], (unsigned long long)g,
                         (unsigned long long)want);
        }
        if (!upper) ck_assert_uint_eq(((uint32_t *)got)[m], 0xa5a5a5a5u); /* nothing past the output */
      }
      vkds_buffer_destroy(sb), vkds_buffer_destroy(xb);
    }
  free(s), free(x), free(got);
  close_ctx();
}
END_TEST

/* f32 by absolute value, searched in a buffer of the second VkDevice; the async and
 * recorded forms. */
static int cmp_abs(const void *x, const void *y) {
  float a = fabsf(*(const float *)x), b = fabsf(*(const float *)y);
  return (a > b) - (a < b);
}
START_TEST(bounds_by_abs_forms) {
  enum { N = 5000, M = 1001 };
  open_ctx(2);
  vkds_resource *r1 = harness_device_resource(ctx, 1);
  ck_assert_ptr_nonnull(r1);
  float *s = malloc(N * 4), *x = malloc(M * 4);
  int64_t *got = malloc(M * 8);
  for (int i = 0; i < N; ++i) s[i] = (float)((int)(rnd() % 2001) - 1000) / 8.0f;
  for (int i = 0; i < M; ++i) x[i] = (float)((int)(rnd() % 2201) - 1100) / 8.0f;
  qsort(s, N, 4, cmp_abs);
  vkds_buffer *sb = harness_device_copy(r1, s, N * 4), *ob = harness_device_copy(r0, NULL, M * 8);
  vkds_seq ss = vkds_seq_buffer(vkds_view_of(sb), VKDS_F32), xs = vkds_seq_host_const(x, M, VKDS_F32);
  vkds_seq os = vkds_seq_buffer(vkds_view_of(ob), VKDS_I64);
  const char *by_abs = "abs(a) < abs(b)";
  for (int form = 0; form < 4; ++form) {
    bool upper = form % 2 == 1;
    ck_assert_vkds(vkds_fill(pol, &os, &(int64_t){-1}));
    if (form < 2) {
      vkds_submission *sub;
      ck_assert_vkds(upper ? vkds_upper_bound_by_async(pol, &ss, &xs, &os, by_abs, &sub)
                           : vkds_lower_bound_by_async(pol, &ss, &xs, &os, by_abs, &sub));
      ck_assert_vkds(vkds_submission_wait(sub));
      vkds_submission_release(sub);
    } else {
      /* recorded: the sorted sequence must then be on the recording's device */
      vkds_buffer *local = harness_device_copy(r0, s, N * 4);
      vkds_buffer *xl = harness_device_copy(r0, x, M * 4);
      vkds_seq ls = vkds_seq_buffer(vkds_view_of(local), VKDS_F32), lx = vkds_seq_buffer(vkds_view_of(xl), VKDS_F32);
      app_cmd c = {0};
      app_cmd_begin(&c, r0);
      vkds_cmd rc = {.cmd = c.cmd, .resource = r0};
      ck_assert_vkds(upper ? vkds_cmd_upper_bound_by(&rc, &ls, &lx, &os, by_abs)
                           : vkds_cmd_lower_bound_by(&rc, &ls, &lx, &os, by_abs));
      app_cmd_submit(&c, 60);
      app_cmd_destroy(&c);
      vkds_buffer_destroy(local), vkds_buffer_destroy(xl);
    }
    ck_assert_vkds(vkds_download(r0, got, vkds_view_of(ob), M * 8));
    for (int i = 0; i < M; ++i) {
      int64_t want = 0;
      if (upper)
        while (want < N && !(fabsf(x[i]) < fabsf(s[want]))) ++want;
      else
        while (want < N && fabsf(s[want]) < fabsf(x[i])) ++want;
      if (got[i] != want)
        ck_abort_msg("form %d, needle %d (%g): got %lld want %lld", form, i, (double)x[i], (long long)got[i],
                     (long long)want);
    }
  }
  vkds_buffer_destroy(sb), vkds_buffer_destroy(ob);
  free(s), free(x), free(got);
  close_ctx();
}
END_TEST

/* ---- records ---- */

static int cmp_u32(const void *x, const void *y) {
  uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
  return (a > b) - (a < b);
}

typedef struct rec {
  uint64_t key;
  uint32_t tag, origin;
} rec;
static int cmp_rec_desc(const void *x, const void *y) {
  const rec *a = x, *b = y;
  return a->key < b->key ? 1 : a->key > b->key ? -1 : (a->origin > b->origin) - (a->origin < b->origin);
}

/* Records of 16 bytes (u64 key, u32, u32) sorted descending by key, searched by needles
 * that are records too (a zip of host data and buffers); and 8-byte records (u32, f32)
 * ascending. */
START_TEST(bounds_of_records) {
  enum { N = 3001, M = 777 };
  open_ctx(1);
  rec *s = malloc(N * sizeof *s);
  uint64_t *sk = malloc(N * 8), *xk = malloc(M * 8), *got = malloc(M * 8);
  uint32_t *st = malloc(N * 4), *so = malloc(N * 4), *xt = malloc(M * 4);
  for (uint32_t i = 0; i < N; ++i) s[i] = (rec){.key = rnd() % 700, .tag = (uint32_t)rnd(), .origin = i};
  qsort(s, N, sizeof *s, cmp_rec_desc);
  for (uint32_t i = 0; i < N; ++i) sk[i] = s[i].key, st[i] = s[i].tag, so[i] = s[i].origin;
  for (uint32_t i = 0; i < M; ++i) xk[i] = rnd() % 720, xt[i] = (uint32_t)rnd();
  vkds_buffer *kb = harness_device_copy(r0, sk, N * 8);
  vkds_seq sparts[3] = {vkds_seq_buffer(vkds_view_of(kb), VKDS_U64), vkds_seq_host_const(st, N, VKDS_U32),
                        vkds_seq_host_const(so, N, VKDS_U32)};
  vkds_seq xparts[3] = {vkds_seq_host_const(xk, M, VKDS_U64), vkds_seq_host_const(xt, M, VKDS_U32),
                        vkds_seq_host_const(xt, M, VKDS_U32)};
  vkds_seq sz = vkds_seq_zip(sparts, 3), xz = vkds_seq_zip(xparts, 3), out = vkds_seq_host(got, M, VKDS_U64);
  for (int upper = 0; upper < 2; ++upper) {
    ck_assert_vkds(upper ? vkds_upper_bound_by(pol, &sz, &xz, &out, "a.p0 > b.p0")
                         : vkds_lower_bound_by(pol, &sz, &xz, &out, "a.p0 > b.p0"));
    for (uint32_t i = 0; i < M; ++i) {
      uint64_t want = 0;
      if (upper)
        while (want < N && !(xk[i] > sk[want])) ++want;
      else
        while (want < N && sk[want] > xk[i]) ++want;
      if (got[i] != want)
        ck_abort_msg("16-byte records, %s: needle %u (%llu): got %llu want %llu", upper ? "upper" : "lower", i,
                     (unsigned long long)xk[i], (unsigned long long)got[i], (unsigned long long)want);
    }
  }
  /* 8 bytes: (u32 key ascending, f32) */
  uint32_t *k32 = malloc(N * 4), *x32 = malloc(M * 4);
  float *payload = malloc(N * 4);
  for (uint32_t i = 0; i < N; ++i) k32[i] = (uint32_t)(rnd() % 500), payload[i] = (float)i;
  qsort(k32, N, 4, cmp_u32);
  for (uint32_t i = 0; i < M; ++i) x32[i] = (uint32_t)(rnd() % 520);
  vkds_seq p8[2] = {vkds_seq_host_const(k32, N, VKDS_U32), vkds_seq_host_const(payload, N, VKDS_F32)};
  vkds_seq n8[2] = {vkds_seq_host_const(x32, M, VKDS_U32), vkds_seq_host_const(payload, M, VKDS_F32)};
  vkds_seq z8 = vkds_seq_zip(p8, 2), nz8 = vkds_seq_zip(n8, 2);
  ck_assert_vkds(vkds_lower_bound_by(pol, &z8, &nz8, &out, "a.p0 < b.p0"));
  for (uint32_t i = 0; i < M; ++i) {
    uint64_t want = 0;
    while (want < N && k32[want] < x32[i]) ++want;
    if (got[i] != want) ck_abort_msg("8-byte records: needle %u: got %llu want %llu", i, (unsigned long long)got[i], (unsigned long long)want);
  }
  vkds_buffer_destroy(kb);
  free(s), free(sk), free(xk), free(got), free(st), free(so), free(xt), free(k32), free(x32), free(payload);
  close_ctx();
}
END_TEST

/* ---- merge ---- */

/* The host's stable merge by the low byte (ties: a's first). */
static void host_merge_low(const uint32_t *a, uint64_t na, const uint32_t *b, uint64_t nb, uint32_t *out) {
  uint64_t i = 0, j = 0;
  for (uint64_t k = 0; k < na + nb; ++k) out[k] = i < na && (j >= nb || !low_less(b[j], a[i])) ? a[i++] : b[j++];
}

/* u32 by the low byte: the whole values differ where the comparator sees ties, so a
 * merge that is not stable, or takes b's first on a tie, shows. A work group merges
 * 2048 outputs: sizes around that, one side empty, long sides. */
START_TEST(merge_by_low_byte) {
  open_ctx(1);
  const uint64_t sizes[][2] = {{0, 0}, {0, 5}, {5, 0}, {1, 1}, {1000, 3}, {2048, 0}, {1024, 1024}, {2047, 2050},
                               {4097, 10001}, {100003, 99991}};
  enum { MOST = 100003 };
  uint32_t *a = malloc(MOST * 4), *b = malloc(MOST * 4), *want = malloc(2 * MOST * 4), *got = malloc(2 * MOST * 4 + 4);
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; ++si) {
    uint64_t na = sizes[si][0], nb = sizes[si][1];
    for (uint64_t i = 0; i < na; ++i) a[i] = (uint32_t)rnd() & 0xffff003fu; /* 64 low bytes: many ties */
    for (uint64_t i = 0; i < nb; ++i) b[i] = (uint32_t)rnd() & 0xffff003fu;
    qsort(a, na, 4, cmp_low), qsort(b, nb, 4, cmp_low);
    host_merge_low(a, na, b, nb, want);
    vkds_buffer *ab = harness_device_copy(r0, a, na * 4);
    vkds_seq as = first(ab, na, VKDS_U32), bs = vkds_seq_host_const(b, nb, VKDS_U32);
    got[na + nb] = 0x5a5a5a5au;
    vkds_seq os = vkds_seq_host(got, na + nb, VKDS_U32);
    ck_assert_vkds(vkds_merge_by(pol, &as, &bs, &os, LOW_BYTE));
    for (uint64_t k = 0; k < na + nb; ++k)
      if (got[k] != want[k])
        ck_abort_msg("merge_by %llu + %llu: [%llu] got %#x want %#x", (unsigned long long)na, (unsigned long long)nb,
                     (unsigned long long)k, got[k], want[k]);
    ck_assert_uint_eq(got[na + nb], 0x5a5a5a5au);
    vkds_buffer_destroy(ab);
  }
  free(a), free(b), free(want), free(got);
  close_ctx();
}
END_TEST

/* Records (u32 key, u32 origin) merged descending by key into a zip: of host data, then
 * of buffers (the recorded form), then asynchronously, then of a reverse view and host
 * data; each output record is checked whole (the origin tells which input and place it
 * came from). */
START_TEST(merge_records_forms) {
  enum { NA = 3001, NB = 2500 };
  open_ctx(1);
  uint32_t *ak = malloc(NA * 4), *ao = malloc(NA * 4), *bk = malloc(NB * 4), *bo = malloc(NB * 4);
  for (uint32_t i = 0; i < NA; ++i) ak[i] = (uint32_t)(rnd() % 300);
  for (uint32_t i = 0; i < NB; ++i) bk[i] = (uint32_t)(rnd() % 300);
  /* descending keys (an insertion sort); origins: a's i, b's 1000000 + i */
  for (uint32_t i = 0; i < NA; ++i)
    for (uint32_t j = i; j > 0 && ak[j - 1] < ak[j]; --j) { uint32_t t = ak[j]; ak[j] = ak[j - 1], ak[j - 1] = t; }
  for (uint32_t i = 0; i < NB; ++i)
    for (uint32_t j = i; j > 0 && bk[j - 1] < bk[j]; --j) { uint32_t t = bk[j]; bk[j] = bk[j - 1], bk[j - 1] = t; }
  for (uint32_t i = 0; i < NA; ++i) ao[i] = i;
  for (uint32_t i = 0; i < NB; ++i) bo[i] = 1000000 + i;
  uint32_t *wk = malloc((NA + NB) * 4), *wo = malloc((NA + NB) * 4);
  for (uint32_t i = 0, j = 0, k = 0; k < NA + NB; ++k) {
    bool take_a = i < NA && (j >= NB || !(bk[j] > ak[i]));
    wk[k] = take_a ? ak[i] : bk[j], wo[k] = take_a ? ao[i++] : bo[j++];
  }
  vkds_seq ap[2] = {vkds_seq_host_const(ak, NA, VKDS_U32), vkds_seq_host_const(ao, NA, VKDS_U32)};
  vkds_seq bp[2] = {vkds_seq_host_const(bk, NB, VKDS_U32), vkds_seq_host_const(bo, NB, VKDS_U32)};
  vkds_seq az = vkds_seq_zip(ap, 2), bz = vkds_seq_zip(bp, 2);
  uint32_t *gk = malloc((NA + NB) * 4), *go = malloc((NA + NB) * 4);
  vkds_buffer *kb = harness_device_copy(r0, NULL, (NA + NB) * 4), *ob = harness_device_copy(r0, NULL, (NA + NB) * 4);
  vkds_buffer *akb = harness_device_copy(r0, ak, NA * 4), *aob = harness_device_copy(r0, ao, NA * 4);
  vkds_buffer *bkb = harness_device_copy(r0, bk, NB * 4), *bob = harness_device_copy(r0, bo, NB * 4);
  for (int form = 0; form < 4; ++form) {
    memset(gk, 0, (NA + NB) * 4), memset(go, 0, (NA + NB) * 4);
    if (form == 0) {
      vkds_seq op[2] = {vkds_seq_host(gk, NA + NB, VKDS_U32), vkds_seq_host(go, NA + NB, VKDS_U32)};
      vkds_seq oz = vkds_seq_zip(op, 2);
      ck_assert_vkds(vkds_merge_by(pol, &az, &bz, &oz, "a.p0 > b.p0"));
    } else if (form == 3) {
      /* a part under a view: the keys written through a reverse view of a buffer */
      vkds_seq kbuf = vkds_seq_buffer(vkds_view_of(kb), VKDS_U32);
      vkds_seq op[2] = {vkds_seq_reverse(&kbuf), vkds_seq_host(go, NA + NB, VKDS_U32)};
      vkds_seq oz = vkds_seq_zip(op, 2);
      ck_assert_vkds(vkds_merge_by(pol, &az, &bz, &oz, "a.p0 > b.p0"));
      uint32_t *rev = malloc((NA + NB) * 4);
      ck_assert_vkds(vkds_download(r0, rev, vkds_view_of(kb), (NA + NB) * 4));
      for (uint32_t k = 0; k < NA + NB; ++k) gk[k] = rev[NA + NB - 1 - k];
      free(rev);
    } else {
      vkds_seq op[2] = {vkds_seq_buffer(vkds_view_of(kb), VKDS_U32), vkds_seq_buffer(vkds_view_of(ob), VKDS_U32)};
      vkds_seq oz = vkds_seq_zip(op, 2);
      ck_assert_vkds(vkds_fill(pol, &op[0], &(uint32_t){0}));
      if (form == 1) {
        vkds_seq lap[2] = {vkds_seq_buffer(vkds_view_of(akb), VKDS_U32), vkds_seq_buffer(vkds_view_of(aob), VKDS_U32)};
        vkds_seq lbp[2] = {vkds_seq_buffer(vkds_view_of(bkb), VKDS_U32), vkds_seq_buffer(vkds_view_of(bob), VKDS_U32)};
        vkds_seq laz = vkds_seq_zip(lap, 2), lbz = vkds_seq_zip(lbp, 2);
        app_cmd c = {0};
        app_cmd_begin(&c, r0);
        vkds_cmd rc = {.cmd = c.cmd, .resource = r0};
        ck_assert_vkds(vkds_cmd_merge_by(&rc, &laz, &lbz, &oz, "a.p0 > b.p0"));
        app_cmd_submit(&c, 60);
        app_cmd_destroy(&c);
      } else {
        vkds_submission *sub;
        ck_assert_vkds(vkds_merge_by_async(pol, &az, &bz, &oz, "a.p0 > b.p0", &sub));
        ck_assert_vkds(vkds_submission_wait(sub));
        vkds_submission_release(sub);
      }
      ck_assert_vkds(vkds_download(r0, gk, vkds_view_of(kb), (NA + NB) * 4));
      ck_assert_vkds(vkds_download(r0, go, vkds_view_of(ob), (NA + NB) * 4));
    }
    for (uint32_t k = 0; k < NA + NB; ++k)
      if (gk[k] != wk[k] || go[k] != wo[k])
        ck_abort_msg("merge_by records, form %d: [%u] got (%u, %u) want (%u, %u)", form, k, gk[k], go[k], wk[k], wo[k]);
  }
  vkds_buffer_destroy(kb), vkds_buffer_destroy(ob), vkds_buffer_destroy(akb), vkds_buffer_destroy(aob);
  vkds_buffer_destroy(bkb), vkds_buffer_destroy(bob);
  free(ak), free(ao), free(bk), free(bo), free(wk), free(wo), free(gk), free(go);
  close_ctx();
}
END_TEST

/* ---- is_sorted_by ---- */

/* Records of 4 u32 parts merged by the recording form: 19 launch parameters, past
 * lavapipe's 128 bytes of push constants, kept in the vkds_cmd's scratch (they were
 * refused); below and above the partition's 2^22 outputs (one dispatch, then two).
 * Without a scratch: a message with the bytes needed. A 16-part zip's find_if and
 * is_sorted_by recorded the same way (a reduction of two passes). */
START_TEST(recorded_arguments_in_the_scratch) {
  open_ctx(1);
  /* (a device of 256 bytes of push constants, as NVIDIA's, takes them there: only the
   * results are checked) */
  VkPhysicalDevice phys;
  VkPhysicalDeviceProperties props;
  ck_assert_vkds(vkds_resource_vk_handles(r0, &phys, NULL, NULL));
  vkGetPhysicalDeviceProperties(phys, &props);
  bool spills = props.limits.maxPushConstantsSize < 200;
  const uint32_t sizes[][2] = {{3001, 2500}, {(1u << 21) + 3, (1u << 21) + 2}};
  for (int si = 0; si < 2; ++si) {
    uint32_t na = sizes[si][0], nb = sizes[si][1], n = na + nb;
    uint32_t *host = malloc((uint64_t)n * 4 * 4), *want = malloc((uint64_t)n * 4);
    /* part 0: keys (sorted within each input, ties across them), parts 1-3: the place */
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t within = i < na ? i : i - na;
      host[i] = within / 3, host[n + i] = i, host[2 * n + i] = ~i, host[3 * n + i] = i * 7u;
    }
    /* the stable merge's places: a's before b's among equal keys */
    for (uint32_t i = 0, j = 0, o = 0; o < n; ++o)
      want[o] = j >= nb || (i < na && host[i] <= host[na + j]) ? i++ : na + j++;
    vkds_buffer *parts[4], *outs[4];
    vkds_seq as[4], bs[4], os[4];
    for (int k = 0; k < 4; ++k) {
      parts[k] = harness_device_copy(r0, host + (uint64_t)k * n, (uint64_t)n * 4);
      outs[k] = harness_device_copy(r0, NULL, (uint64_t)n * 4);
      as[k] = vkds_seq_buffer((vkds_view){parts[k], 0, (uint64_t)na * 4}, VKDS_U32);
      bs[k] = vkds_seq_buffer((vkds_view){parts[k], (uint64_t)na * 4, (uint64_t)nb * 4}, VKDS_U32);
      os[k] = vkds_seq_buffer(vkds_view_of(outs[k]), VKDS_U32);
    }
    vkds_seq az = vkds_seq_zip(as, 4), bz = vkds_seq_zip(bs, 4), oz = vkds_seq_zip(os, 4);
    vkds_buffer *scratch = harness_device_copy(r0, NULL, vkds_algorithm_scratch_bytes(r0, n));
    app_cmd c = {0};
    app_cmd_begin(&c, r0);
    vkds_cmd bare = {.cmd = c.cmd, .resource = r0}, rc = {.cmd = c.cmd, .resource = r0, .scratch = vkds_view_of(scratch)};
    if (spills) {
      ck_assert_int_eq(vkds_cmd_merge_by(&bare, &az, &bz, &oz, "a.p0 < b.p0"), VKDS_ERROR_INVALID_ARGUMENT);
      ck_assert_msg(strstr(vkds_last_error_message(), "keeps them in the vkds_cmd's scratch"), "%s",
                    vkds_last_error_message());
    }
    ck_assert_vkds(vkds_cmd_merge_by(&rc, &az, &bz, &oz, "a.p0 < b.p0"));
    app_cmd_submit(&c, 120);
    app_cmd_destroy(&c);
    uint32_t *got = malloc((uint64_t)n * 4);
    for (int k = 0; k < 4; ++k) {
      ck_assert_vkds(vkds_download(r0, got, vkds_view_of(outs[k]), (uint64_t)n * 4));
      for (uint32_t o = 0; o < n; ++o)
        if (got[o] != host[(uint64_t)k * n + want[o]])
          ck_abort_msg("n=%u part %d [%u]: got %u want %u", n, k, o, got[o], host[(uint64_t)k * n + want[o]]);
    }
    for (int k = 0; k < 4; ++k) vkds_buffer_destroy(parts[k]), vkds_buffer_destroy(outs[k]);
    vkds_buffer_destroy(scratch);
    free(host), free(want), free(got);
  }
  /* a zip of 16 parts (the same buffer): the first tuple whose part 15 is past 70,000,
   * and whether the tuples are sorted by part 3 */
  enum { N = 100003 };
  uint32_t *v = malloc(N * 4);
  for (uint32_t i = 0; i < N; ++i) v[i] = i;
  vkds_buffer *b = harness_device_copy(r0, v, N * 4), *res = harness_device_copy(r0, NULL, 64);
  vkds_buffer *scratch = harness_device_copy(r0, NULL, vkds_algorithm_scratch_bytes(r0, N));
  vkds_seq one = vkds_seq_buffer(vkds_view_of(b), VKDS_U32), many[16];
  for (int k = 0; k < 16; ++k) many[k] = one;
  vkds_seq z = vkds_seq_zip(many, 16);
  app_cmd c = {0};
  app_cmd_begin(&c, r0);
  vkds_cmd rc = {.cmd = c.cmd, .resource = r0, .scratch = vkds_view_of(scratch)};
  /* vkds_reduce_scratch_bytes includes the arguments' room (since session 41: it was the
   * reduction's own scratch alone, short of it, and only vkds_algorithm_scratch_bytes
   * was enough); a byte less is refused, spilled or not */
  uint64_t need = vkds_reduce_scratch_bytes(r0, N);
  vkds_cmd tight = {.cmd = c.cmd, .resource = r0, .scratch = {scratch, 0, need - 1}};
  ck_assert_int_eq(vkds_cmd_find_if(&tight, &z, "x.p15 > 70000u", (vkds_view){res, 0, 8}), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_msg(strstr(vkds_last_error_message(), "vkds_reduce_scratch_bytes gives the size"), "%s",
                vkds_last_error_message());
  tight.scratch.bytes = need;
  ck_assert_vkds(vkds_cmd_find_if(&tight, &z, "x.p15 > 70000u", (vkds_view){res, 0, 8}));
  ck_assert_vkds(vkds_cmd_is_sorted_by(&rc, &z, "a.p3 < b.p3", (vkds_view){res, 16, 4}));
  app_cmd_submit(&c, 60);
  app_cmd_destroy(&c);
  uint64_t found;
  uint32_t sorted;
  ck_assert_vkds(vkds_download(r0, &found, (vkds_view){res, 0, 8}, 8));
  ck_assert_vkds(vkds_download(r0, &sorted, (vkds_view){res, 16, 4}, 4));
  ck_assert_uint_eq(found, 70001);
  ck_assert_uint_eq(sorted, 1);
  vkds_buffer_destroy(b), vkds_buffer_destroy(res), vkds_buffer_destroy(scratch);
  free(v);
  close_ctx();
}
END_TEST

START_TEST(is_sorted_by_cases) {
  open_ctx(1);
  enum { N = 70001 };
  uint32_t *v = malloc(N * 4);
  for (uint32_t i = 0; i < N; ++i) v[i] = (uint32_t)rnd();
  qsort(v, N, 4, cmp_low);
  bool r = false;
  /* sorted: every length from 0 */
  const uint64_t lengths[] = {0, 1, 2, 3, 255, 256, 257, 4097, N};
  for (size_t li = 0; li < sizeof lengths / sizeof *lengths; ++li) {
    vkds_seq s = vkds_seq_host_const(v, lengths[li], VKDS_U32);
    r = false;
    ck_assert_vkds(vkds_is_sorted_by(pol, &s, LOW_BYTE, &r));
    ck_assert_msg(r, "length %llu sorted by the low byte read as unsorted", (unsigned long long)lengths[li]);
  }
  /* not sorted by that comparator, though sorted as numbers somewhere: one pair swapped */
  const uint32_t places[] = {0, 1, 2047, 30000, N - 2};
  vkds_buffer *b = harness_device_copy(r0, v, N * 4);
  vkds_seq bs = vkds_seq_buffer(vkds_view_of(b), VKDS_U32);
  for (size_t pi = 0; pi < sizeof places / sizeof *places; ++pi) {
    uint32_t p = places[pi];
    uint32_t *w = malloc(N * 4);
    memcpy(w, v, N * 4);
    uint32_t j = p + 1;
    while (j < N && !low_less(w[p], w[j])) ++j; /* a later element of a larger low byte */
    if (j == N) {
      free(w);
      continue;
    }
    uint32_t t = w[p];
    w[p] = w[j], w[j] = t;
    ck_assert_vkds(vkds_upload(r0, vkds_view_of(b), w, N * 4));
    r = true;
    ck_assert_vkds(vkds_is_sorted_by(pol, &bs, LOW_BYTE, &r));
    ck_assert_msg(!r, "a swap at %u (with %u) read as sorted", p, j);
    free(w);
  }
  /* records: a zip sorted by p0 ascending, and its reverse view by "a.p0 > b.p0" (a view
   * of a zip, only read); then broken */
  uint32_t *k = malloc(N * 4);
  float *f = malloc(N * 4);
  for (uint32_t i = 0; i < N; ++i) k[i] = i / 3, f[i] = (float)(N - i);
  vkds_seq parts[2] = {vkds_seq_host_const(k, N, VKDS_U32), vkds_seq_host_const(f, N, VKDS_F32)};
  vkds_seq z = vkds_seq_zip(parts, 2), rz = vkds_seq_reverse(&z);
  r = false;
  ck_assert_vkds(vkds_is_sorted_by(pol, &z, "a.p0 < b.p0", &r));
  ck_assert(r);
  r = true;
  ck_assert_vkds(vkds_is_sorted_by(pol, &z, "a.p1 < b.p1", &r)); /* p1 descends */
  ck_assert(!r);
  r = false;
  ck_assert_vkds(vkds_is_sorted_by(pol, &rz, "a.p0 > b.p0", &r));
  ck_assert(r);
  /* a tuple of 12 bytes (which the merge and the searches do not take) */
  vkds_seq parts3[3] = {parts[0], parts[1], parts[0]};
  vkds_seq z3 = vkds_seq_zip(parts3, 3);
  r = false;
  ck_assert_vkds(vkds_is_sorted_by(pol, &z3, "a.p2 < b.p2 || (a.p0 == b.p0 && a.p1 > b.p1)", &r));
  ck_assert(r);
  k[N / 2] = 0;
  r = true;
  ck_assert_vkds(vkds_is_sorted_by(pol, &z, "a.p0 < b.p0", &r));
  ck_assert(!r);
  /* async and recorded */
  vkds_submission *sub;
  r = true;
  ck_assert_vkds(vkds_is_sorted_by_async(pol, &z, "a.p0 < b.p0", &r, &sub));
  ck_assert_vkds(vkds_submission_wait(sub));
  vkds_submission_release(sub);
  ck_assert(!r);
  ck_assert_vkds(vkds_upload(r0, vkds_view_of(b), v, N * 4));
  vkds_buffer *res = harness_device_copy(r0, NULL, 64);
  app_cmd c = {0};
  app_cmd_begin(&c, r0);
  vkds_cmd rc = {.cmd = c.cmd, .resource = r0};
  vkds_buffer *scratch = harness_device_copy(r0, NULL, vkds_reduce_scratch_bytes(r0, N));
  rc.scratch = vkds_view_of(scratch);
  ck_assert_vkds(vkds_cmd_is_sorted_by(&rc, &bs, LOW_BYTE, (vkds_view){res, 0, 4}));
  app_cmd_submit(&c, 60);
  app_cmd_destroy(&c);
  uint32_t flag = 7;
  ck_assert_vkds(vkds_download(r0, &flag, (vkds_view){res, 0, 4}, 4));
  ck_assert_uint_eq(flag, 1);
  vkds_buffer_destroy(b), vkds_buffer_destroy(res), vkds_buffer_destroy(scratch);
  free(v), free(k), free(f);
  close_ctx();
}
END_TEST

/* Host data larger than a small staging ring (two 256 KiB chunks): element i is compared
 * with i + 1 across what would be a chunk's end, so it is staged whole, not streamed
 * (a pair split by a chunk boundary was never compared). */
START_TEST(is_sorted_by_host_larger_than_the_ring) {
  vkds_context_info info = harness_info();
  info.staging_chunks = 2;
  info.staging_chunk_bytes = 256 << 10;
  harness_open_fixed(&info, &ctx, &r0, &pol);
  enum { N = 1 << 20 };
  uint32_t *v = malloc(N * 4);
  const uint32_t places[] = {32767, 65535, 131071, 262143, 500000};
  for (size_t pi = 0; pi < sizeof places / sizeof *places; ++pi) {
    for (uint32_t i = 0; i < N; ++i) v[i] = i;
    v[places[pi]] = places[pi] + 1, v[places[pi] + 1] = places[pi];
    vkds_seq s = vkds_seq_host_const(v, N, VKDS_U32);
    bool r = true;
    ck_assert_vkds(vkds_is_sorted_by(pol, &s, "a < b", &r));
    ck_assert_msg(!r, "a swap at %u read as sorted", places[pi]);
  }
  free(v);
  close_ctx();
}
END_TEST

/* ---- bad input: a named error, nothing written ---- */

START_TEST(bad_input) {
  open_ctx(1);
  enum { N = 100 };
  uint32_t u[N], w[2 * N], idx[N];
  float fl[N];
  for (uint32_t i = 0; i < N; ++i) u[i] = i, fl[i] = (float)i, idx[i] = 0xcccccccc;
  memset(w, 0xcc, sizeof w);
  vkds_seq us = vkds_seq_host_const(u, N, VKDS_U32), fs = vkds_seq_host_const(fl, N, VKDS_F32);
  vkds_seq ws = vkds_seq_host(w, 2 * N, VKDS_U32), is = vkds_seq_host(idx, N, VKDS_U32);
  const vkds_result E = VKDS_ERROR_INVALID_ARGUMENT;
  bool r = true;
  /* NULL comparators */
  ck_assert_int_eq(vkds_lower_bound_by(pol, &us, &us, &is, NULL), E);
  ck_assert_msg(strstr(vkds_last_error_message(), "comparator is NULL"), "%s", vkds_last_error_message());
  ck_assert_int_eq(vkds_upper_bound_by(pol, &us, &us, &is, NULL), E);
  ck_assert_int_eq(vkds_merge_by(pol, &us, &us, &ws, NULL), E);
  ck_assert_int_eq(vkds_is_sorted_by(pol, &us, NULL, &r), E);
  ck_assert_msg(strstr(vkds_last_error_message(), "comparator is NULL"), "%s", vkds_last_error_message());
  /* a comparator that does not compile: named, the user's text shown */
  ck_assert_int_eq(vkds_merge_by(pol, &us, &us, &ws, "a <<< b"), VKDS_ERROR_COMPILE);
  ck_assert_msg(strstr(vkds_last_error_message(), "a <<< b") && strstr(vkds_last_error_message(), "comparator"), "%s",
                vkds_last_error_message());
  ck_assert_int_eq(vkds_lower_bound_by(pol, &us, &us, &is, "a.p0 < b"), VKDS_ERROR_COMPILE);
  ck_assert_int_eq(vkds_is_sorted_by(pol, &us, "a < ", &r), VKDS_ERROR_COMPILE);
  ck_assert_int_eq(vkds_is_sorted_by(pol, &us, "", &r), VKDS_ERROR_COMPILE);
  ck_assert_msg(strstr(vkds_last_error_message(), "the comparator is empty"), "%s", vkds_last_error_message());
  ck_assert_msg(strstr(vkds_last_error_message(), "comparator"), "%s", vkds_last_error_message());
  /* element types that differ */
  ck_assert_int_eq(vkds_merge_by(pol, &us, &fs, &ws, "a < b"), E);
  ck_assert_msg(strstr(vkds_last_error_message(), "one element type"), "%s", vkds_last_error_message());
  ck_assert_int_eq(vkds_lower_bound_by(pol, &fs, &us, &is, "a < b"), E);
  /* records whose parts differ; a view of a zip; a zip of 12 bytes */
  vkds_seq p1[2] = {us, fs}, p2[2] = {us, us}, p3[3] = {us, us, us};
  vkds_seq z1 = vkds_seq_zip(p1, 2), z2 = vkds_seq_zip(p2, 2), z3 = vkds_seq_zip(p3, 3), rz = vkds_seq_reverse(&z1);
  ck_assert_int_eq(vkds_lower_bound_by(pol, &z1, &z2, &is, "a.p0 < b.p0"), E);
  ck_assert_msg(strstr(vkds_last_error_message(), "part 1"), "%s", vkds_last_error_message());
  ck_assert_int_eq(vkds_lower_bound_by(pol, &rz, &z1, &is, "a.p0 < b.p0"), E);
  ck_assert_msg(strstr(vkds_last_error_message(), "view"), "%s", vkds_last_error_message());
  ck_assert_int_eq(vkds_lower_bound_by(pol, &z3, &z3, &is, "a.p0 < b.p0"), VKDS_ERROR_UNSUPPORTED);
  /* merge into records: a zip whose parts overlap, one with a read-only part, a record
   * output for numbers */
  uint32_t o1[2 * N], o2[2 * N];
  memset(o1, 0xcc, sizeof o1), memset(o2, 0xcc, sizeof o2);
  float of[2 * N];
  vkds_seq same[2] = {vkds_seq_host(o1, 2 * N, VKDS_U32), vkds_seq_host(o1, 2 * N, VKDS_F32)};
  vkds_seq zs = vkds_seq_zip(same, 2);
  ck_assert_int_eq(vkds_merge_by(pol, &z1, &z1, &zs, "a.p0 < b.p0"), E);
  ck_assert_msg(strstr(vkds_last_error_message(), "overlap"), "%s", vkds_last_error_message());
  vkds_seq ro[2] = {vkds_seq_host(o1, 2 * N, VKDS_U32), vkds_seq_host_const(of, 2 * N, VKDS_F32)};
  vkds_seq zro = vkds_seq_zip(ro, 2);
  ck_assert_int_eq(vkds_merge_by(pol, &z1, &z1, &zro, "a.p0 < b.p0"), E);
  ck_assert_msg(strstr(vkds_last_error_message(), "read-only"), "%s", vkds_last_error_message());
  vkds_seq op[2] = {vkds_seq_host(o1, 2 * N, VKDS_U32), vkds_seq_host(o2, 2 * N, VKDS_U32)};
  vkds_seq zo = vkds_seq_zip(op, 2);
  ck_assert_int_eq(vkds_merge_by(pol, &us, &us, &zo, "a < b"), E); /* numbers into records */
  ck_assert_int_eq(vkds_merge_by(pol, &z1, &z1, &zo, "a.p0 < b.p0"), E); /* (u32, f32) into (u32, u32) */
  /* records of 24 bytes as laid out (u32, u64, u32): 2048 of them need 48 KiB of shared
   * memory, past lavapipe's 32 (where a device has that much, they merge) */
  vkds_resource_info ri;
  ck_assert_vkds(vkds_resource_get_info(r0, &ri));
  uint64_t u64s[N] = {0};
  vkds_seq wide[3] = {us, vkds_seq_host_const(u64s, N, VKDS_U64), us};
  vkds_seq zw = vkds_seq_zip(wide, 3);
  uint64_t o64[2 * N];
  vkds_seq wout[3] = {vkds_seq_host(o1, 2 * N, VKDS_U32), vkds_seq_host(o64, 2 * N, VKDS_U64),
                      vkds_seq_host(o2, 2 * N, VKDS_U32)};
  vkds_seq zwo = vkds_seq_zip(wout, 3);
  if (ri.max_shared_memory_size < 2048 * 24) {
    ck_assert_int_eq(vkds_merge_by(pol, &zw, &zw, &zwo, "a.p1 < b.p1"), VKDS_ERROR_UNSUPPORTED);
    ck_assert_msg(strstr(vkds_last_error_message(), "shared memory"), "%s", vkds_last_error_message());
    for (uint32_t i = 0; i < 2 * N; ++i) ck_assert_uint_eq(o1[i], 0xccccccccu); /* (the check below) */
  } else {
    ck_assert_vkds(vkds_merge_by(pol, &zw, &zw, &zwo, "a.p1 < b.p1"));
    /* (p1 is 0 everywhere: all of a first, in order, then b) */
    for (uint32_t i = 0; i < 2 * N; ++i) ck_assert_uint_eq(o1[i], u[i % N]);
    memset(o1, 0xcc, sizeof o1);
  }
  /* the merge's own checks: the output's count, an output overlapping an input */
  vkds_seq short_out = vkds_seq_host(w, 2 * N - 1, VKDS_U32), inside = vkds_seq_host(w, N, VKDS_U32);
  ck_assert_int_eq(vkds_merge_by(pol, &us, &us, &short_out, "a < b"), E);
  ck_assert_int_eq(vkds_merge_by(pol, &inside, &us, &ws, "a < b"), E);
  /* the searches' output: indices only */
  vkds_seq fout = vkds_seq_host(of, N, VKDS_F32);
  ck_assert_int_eq(vkds_lower_bound_by(pol, &us, &us, &fout, "a < b"), E);
  /* NULL sequences, policy, command */
  ck_assert_int_eq(vkds_merge_by(pol, NULL, &us, &ws, "a < b"), E);
  ck_assert_int_eq(vkds_lower_bound_by(NULL, &us, &us, &is, "a < b"), E);
  ck_assert_int_eq(vkds_cmd_upper_bound_by(NULL, &us, &us, &is, "a < b"), E);
  ck_assert_int_eq(vkds_is_sorted_by(pol, &us, "a < b", NULL), E);
  vkds_submission *sub = (vkds_submission *)&r;
  ck_assert_int_eq(vkds_merge_by_async(pol, &us, &us, &ws, NULL, &sub), E);
  ck_assert_ptr_null(sub);
  /* nothing written by any of them */
  for (uint32_t i = 0; i < 2 * N; ++i) ck_assert_uint_eq(w[i], 0xccccccccu);
  for (uint32_t i = 0; i < 2 * N; ++i) ck_assert_uint_eq(o1[i], 0xccccccccu);
  for (uint32_t i = 0; i < N; ++i) ck_assert_uint_eq(idx[i], 0xccccccccu);
  close_ctx();
}
END_TEST

int main(void) {
  Suite *s = suite_create("by_comparator");
  TCase *t = harness_tcase("search");
  tcase_add_test(t, bounds_by_low_byte);
  tcase_add_test(t, bounds_by_abs_forms);
  tcase_add_test(t, bounds_of_records);
  suite_add_tcase(s, t);
  t = harness_tcase("merge");
  tcase_add_test(t, merge_by_low_byte);
  tcase_add_test(t, merge_records_forms);
  tcase_add_test(t, recorded_arguments_in_the_scratch);
  suite_add_tcase(s, t);
  t = harness_tcase("is_sorted");
  tcase_add_test(t, is_sorted_by_cases);
  tcase_add_test(t, is_sorted_by_host_larger_than_the_ring);
  suite_add_tcase(s, t);
  t = harness_tcase("errors");
  tcase_add_test(t, bad_input);
  suite_add_tcase(s, t);
  return harness_run(s);
}
