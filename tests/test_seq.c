/* tests/test_seq.c: sequences and the passed-directly trait (vkds/seq.h): every built-in
 * rule both ways on two VkDevices of lavapipe, views nested in views, a user-defined
 * type, invalid constructions, and host reads of every type. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static vkds_context *ctx;
static vkds_resource *r0, *r1; /* on two different VkDevices */
static vkds_resource *r0_too;  /* another queue of r0's device, where there is one */

/* The last error the context logged (besides the harness's own logging). */
static char logged[1024];
static void keep_errors(void *user, vkds_log_level level, vkds_log_source source, const char *message) {
  if (level >= VKDS_LOG_ERROR && source == VKDS_LOG_SOURCE_VKDS) snprintf(logged, sizeof logged, "%s", message);
  harness_log(user, level, source, message);
}

static void open_two(void) {
  vkds_context_info info = harness_info();
  info.devices_per_physical = 2;
  info.log = keep_errors;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  r0 = vkds_context_resource(ctx, 0);
  r1 = r0_too = NULL;
  vkds_resource_info first, other;
  ck_assert_vkds(vkds_resource_get_info(r0, &first));
  for (uint32_t i = 1; i < vkds_context_resource_count(ctx); ++i) {
    ck_assert_vkds(vkds_resource_get_info(vkds_context_resource(ctx, i), &other));
    if (other.device_index != first.device_index && !r1) r1 = vkds_context_resource(ctx, i);
    if (other.device_index == first.device_index && !r0_too) r0_too = vkds_context_resource(ctx, i);
  }
  ck_assert_ptr_nonnull(r1);
}

static void close_two(void) { vkds_context_destroy(ctx); }

static vkds_buffer *make(vkds_resource *res, vkds_memory_kind kind, uint64_t size) {
  vkds_buffer *b;
  ck_assert_vkds(vkds_buffer_create(res, &(vkds_buffer_info){.size = size, .memory = kind}, &b));
  return b;
}

/* Passed directly on r0 (and r0's other queue) and/or on r1. */
static void assert_direct(const vkds_seq *s, bool on_r0, bool on_r1) {
  ck_assert_int_eq(vkds_seq_is_passed_directly(s, r0), on_r0);
  if (r0_too) ck_assert_int_eq(vkds_seq_is_passed_directly(s, r0_too), on_r0);
  ck_assert_int_eq(vkds_seq_is_passed_directly(s, r1), on_r1);
}

/* A constructor's refusal: ops NULL, a message naming the constructor and the reason,
 * and an invalid sequence everywhere after. */
static void assert_invalid(vkds_seq s, const char *fn, const char *reason) {
  const char *m = vkds_last_error_message();
  ck_assert_ptr_null(s.ops);
  ck_assert_msg(strstr(m, fn) && strstr(m, reason), "message \"%s\" lacks \"%s\" or \"%s\"", m, fn, reason);
  ck_assert(!vkds_seq_is_passed_directly(&s, r0));
  ck_assert(!vkds_seq_is_passed_directly(&s, r1));
  ck_assert_int_eq(vkds_seq_validate(&s), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "vkds_seq_validate"));
  uint64_t x;
  ck_assert_int_eq(vkds_seq_read(&s, 0, &x), VKDS_ERROR_INVALID_ARGUMENT);
}

/* A sequence that vkds_seq_validate refuses (made by hand, not by a constructor). */
static void assert_refused(const vkds_seq *s, const char *reason) {
  ck_assert_int_eq(vkds_seq_validate(s), VKDS_ERROR_INVALID_ARGUMENT);
  const char *m = vkds_last_error_message();
  ck_assert_msg(strstr(m, "vkds_seq_validate") && strstr(m, reason), "message \"%s\" lacks \"%s\"", m, reason);
  ck_assert(!vkds_seq_is_passed_directly(s, r0));
  ck_assert(!vkds_seq_is_passed_directly(s, r1));
}

static void assert_message(const char *needle) {
  ck_assert_msg(strstr(vkds_last_error_message(), needle), "message \"%s\" lacks \"%s\"", vkds_last_error_message(), needle);
}

static const vkds_transform_op TWICE = {.glsl = "x * 2.0"};

/* ---- a user-defined type: concat(a, b), a's elements then b's ---- */

typedef struct concat_parts {
  const vkds_seq *a, *b;
} concat_parts;

static int concat_direct_calls;

static bool concat_direct(const vkds_seq *s, const vkds_resource *res) {
  const concat_parts *p = s->user;
  ++concat_direct_calls;
  return vkds_seq_is_passed_directly(p->a, res) && vkds_seq_is_passed_directly(p->b, res);
}

static vkds_result concat_read(const vkds_seq *s, uint64_t i, void *out) {
  const concat_parts *p = s->user;
  return i < p->a->count ? vkds_seq_read(p->a, i, out) : vkds_seq_read(p->b, i - p->a->count, out);
}

static vkds_result concat_validate(const vkds_seq *s) {
  const concat_parts *p = s->user;
  VKDS_CHECK(vkds_seq_validate(p->a));
  return vkds_seq_validate(p->b);
}

static vkds_result refuse_silently(const vkds_seq *s) {
  (void)s;
  return VKDS_ERROR_INVALID_ARGUMENT;
}
static bool never_direct(const vkds_seq *s, const vkds_resource *res) {
  (void)s, (void)res;
  return false;
}
static vkds_result validate_positive(const vkds_seq *s) {
  (void)s;
  return (vkds_result)7;
}
static vkds_result read_silently_fails(const vkds_seq *s, uint64_t i, void *out) {
  (void)s, (void)i, (void)out;
  return VKDS_ERROR_UNSUPPORTED;
}

static const vkds_seq_ops CONCAT = {VKDS_SEQ_OPS_VERSION, "concat", concat_direct, concat_read, concat_validate};

static vkds_seq concat(concat_parts *p) {
  return (vkds_seq){.ops = &CONCAT, .count = p->a->count + p->b->count, .type = p->a->type,
                    .elem_size = p->a->elem_size, .user = p};
}

/* ---- types ---- */

START_TEST(type_sizes) {
  ck_assert_uint_eq(vkds_type_size(VKDS_TYPE_BYTES), 1);
  ck_assert_uint_eq(vkds_type_size(VKDS_I32), 4);
  ck_assert_uint_eq(vkds_type_size(VKDS_U32), 4);
  ck_assert_uint_eq(vkds_type_size(VKDS_F32), 4);
  ck_assert_uint_eq(vkds_type_size(VKDS_I64), 8);
  ck_assert_uint_eq(vkds_type_size(VKDS_U64), 8);
  ck_assert_uint_eq(vkds_type_size(VKDS_F64), 8);
  ck_assert_uint_eq(vkds_type_size(VKDS_TYPE_COMPOSITE), 0);
  ck_assert_uint_eq(vkds_type_size((vkds_type)42), 0);
}
END_TEST

/* ---- the rules of the built-in types ---- */

START_TEST(device_buffer_is_passed_on_its_device_only) {
  open_two();
  vkds_buffer *b0 = make(r0, VKDS_MEMORY_DEVICE, 256), *b1 = make(r1, VKDS_MEMORY_DEVICE, 256);
  vkds_seq s = vkds_seq_buffer(vkds_view_of(b0), VKDS_F32);
  ck_assert_ptr_eq(s.ops, &vkds_seq_buffer_ops);
  ck_assert_uint_eq(s.count, 64);
  ck_assert_uint_eq(s.elem_size, 4);
  ck_assert_int_eq(s.type, VKDS_F32);
  ck_assert_ptr_eq(s.buffer, b0);
  ck_assert_uint_eq(s.offset, 0);
  ck_assert_vkds(vkds_seq_validate(&s));
  assert_direct(&s, true, false);
  /* the device decides, not the resource's position */
  vkds_seq t = vkds_seq_buffer(vkds_view_of(b1), VKDS_U64);
  ck_assert_uint_eq(t.count, 32);
  assert_direct(&t, false, true);
  /* a range inside it */
  vkds_seq part = vkds_seq_buffer((vkds_view){b0, 16, 32}, VKDS_I32);
  ck_assert_ptr_eq(part.ops, &vkds_seq_buffer_ops);
  ck_assert_uint_eq(part.offset, 16);
  ck_assert_uint_eq(part.count, 8);
  assert_direct(&part, true, false);
  vkds_seq tail = vkds_seq_buffer((vkds_view){b0, 64, 0}, VKDS_TYPE_BYTES);
  ck_assert_uint_eq(tail.count, 192);
  ck_assert_uint_eq(tail.elem_size, 1);
  assert_direct(&tail, true, false);
  /* device memory the host can see is a buffer too */
  vkds_buffer *rb = make(r0, VKDS_MEMORY_READBACK, 64);
  vkds_seq readback = vkds_seq_buffer(vkds_view_of(rb), VKDS_U32);
  ck_assert_ptr_eq(readback.ops, &vkds_seq_buffer_ops);
  assert_direct(&readback, true, false);
  vkds_buffer_destroy(rb);
  vkds_buffer_destroy(b1);
  vkds_buffer_destroy(b0);
  close_two();
}
END_TEST

START_TEST(mapped_buffer_is_passed_on_its_device_only) {
  open_two();
  vkds_buffer *m0 = make(r0, VKDS_MEMORY_MAPPED, 128), *m1 = make(r1, VKDS_MEMORY_MAPPED, 128);
  vkds_seq s = vkds_seq_mapped(vkds_view_of(m0), VKDS_F64);
  ck_assert_ptr_eq(s.ops, &vkds_seq_mapped_ops);
  ck_assert_uint_eq(s.count, 16);
  ck_assert_vkds(vkds_seq_validate(&s));
  assert_direct(&s, true, false);
  vkds_seq t = vkds_seq_mapped((vkds_view){m1, 8, 64}, VKDS_I64);
  ck_assert_uint_eq(t.count, 8);
  assert_direct(&t, false, true);
  /* readback memory is host-visible too; a mapped buffer is also a plain buffer */
  vkds_buffer *rb = make(r0, VKDS_MEMORY_READBACK, 64);
  vkds_seq readback = vkds_seq_mapped(vkds_view_of(rb), VKDS_U32);
  ck_assert_ptr_eq(readback.ops, &vkds_seq_mapped_ops);
  assert_direct(&readback, true, false);
  vkds_seq plain = vkds_seq_buffer(vkds_view_of(m0), VKDS_F64);
  assert_direct(&plain, true, false);
  /* a device buffer is not mapped: the host cannot see it */
  vkds_buffer *d = make(r0, VKDS_MEMORY_DEVICE, 64);
  ck_assert_ptr_null(vkds_buffer_map(d));
  assert_invalid(vkds_seq_mapped(vkds_view_of(d), VKDS_F32), "vkds_seq_mapped", "not mapped");
  vkds_buffer_destroy(d);
  vkds_buffer_destroy(rb);
  vkds_buffer_destroy(m1);
  vkds_buffer_destroy(m0);
  close_two();
}
END_TEST

START_TEST(host_memory_is_staged_unless_imported_there) {
  open_two();
  uint64_t align = vkds_import_alignment(r0);
  ck_assert_uint_ne(align, 0); /* lavapipe has VK_EXT_external_memory_host */
  uint32_t *host = aligned_alloc(align, 4 * align);
  for (uint64_t i = 0; i < align; ++i) host[i] = (uint32_t)i;
  const uint64_t n = 2 * align / 4; /* the first two alignments' worth, as U32 */
  vkds_seq s = vkds_seq_host(host, n, VKDS_U32);
  ck_assert_ptr_eq(s.ops, &vkds_seq_host_ops);
  ck_assert_ptr_eq(s.host, host);
  ck_assert_uint_eq(s.count, n);
  ck_assert(!s.read_only);
  vkds_seq c = vkds_seq_host_const(host, n, VKDS_U32);
  ck_assert_ptr_eq(c.ops, &vkds_seq_host_ops);
  ck_assert(c.read_only);
  assert_direct(&s, false, false);
  assert_direct(&c, false, false);
  /* imported into r0's device: in place there, and only there */
  vkds_buffer *imp;
  ck_assert_vkds(vkds_buffer_import_host(r0, host, 2 * align, &imp));
  assert_direct(&s, true, false);
  assert_direct(&c, true, false);
  vkds_seq inside = vkds_seq_host(host + align / 8, align / 4, VKDS_U32);
  assert_direct(&inside, true, false);
  vkds_seq to_the_end = vkds_seq_host(host + align / 4, align / 4, VKDS_U32);
  assert_direct(&to_the_end, true, false);
  vkds_seq past = vkds_seq_host(host + align / 4, align / 4 + 1, VKDS_U32); /* one element over */
  assert_direct(&past, false, false);
  vkds_seq after = vkds_seq_host(host + n, 4, VKDS_U32);
  assert_direct(&after, false, false);
  /* the imported buffer itself is a buffer of r0's device, and mapped */
  vkds_seq as_buffer = vkds_seq_buffer(vkds_view_of(imp), VKDS_U32);
  assert_direct(&as_buffer, true, false);
  vkds_seq as_mapped = vkds_seq_mapped((vkds_view){imp, 4 * 5, 0}, VKDS_U32);
  assert_direct(&as_mapped, true, false);
  uint32_t x = 0;
  ck_assert_vkds(vkds_seq_read(&as_mapped, 2, &x));
  ck_assert_uint_eq(x, 7);
  /* gone again with the import */
  vkds_buffer_destroy(imp);
  assert_direct(&s, false, false);
  /* imported into r1's device instead */
  ck_assert_vkds(vkds_buffer_import_host(r1, host, 2 * align, &imp));
  assert_direct(&s, false, true);
  vkds_buffer_destroy(imp);
  free(host);
  close_two();
}
END_TEST

START_TEST(counting_and_discard_are_always_passed) {
  open_two();
  static const vkds_type types[] = {VKDS_I32, VKDS_U32, VKDS_F32, VKDS_I64, VKDS_U64, VKDS_F64};
  for (size_t t = 0; t < sizeof types / sizeof types[0]; ++t) {
    vkds_seq c = vkds_seq_counting(5, 100, types[t]);
    ck_assert_ptr_eq(c.ops, &vkds_seq_counting_ops);
    ck_assert_int_eq(c.start, 5);
    ck_assert_uint_eq(c.count, 100);
    ck_assert_uint_eq(c.elem_size, vkds_type_size(types[t]));
    assert_direct(&c, true, true);
    vkds_seq d = vkds_seq_discard(100, types[t]);
    ck_assert_ptr_eq(d.ops, &vkds_seq_discard_ops);
    ck_assert_uint_eq(d.elem_size, vkds_type_size(types[t]));
    assert_direct(&d, true, true);
  }
  vkds_seq bytes = vkds_seq_discard(3, VKDS_TYPE_BYTES);
  ck_assert_uint_eq(bytes.elem_size, 1);
  assert_direct(&bytes, true, true);
  vkds_seq empty = vkds_seq_counting(0, 0, VKDS_I32);
  ck_assert_ptr_eq(empty.ops, &vkds_seq_counting_ops);
  assert_direct(&empty, true, true);
  close_two();
}
END_TEST

START_TEST(transform_follows_its_base) {
  open_two();
  vkds_buffer *b = make(r0, VKDS_MEMORY_DEVICE, 64);
  float host[16] = {0};
  vkds_seq dev = vkds_seq_buffer(vkds_view_of(b), VKDS_F32), hs = vkds_seq_host(host, 16, VKDS_F32),
           cnt = vkds_seq_counting(0, 16, VKDS_F32);
  vkds_seq t = vkds_seq_transform(&dev, &TWICE);
  ck_assert_ptr_eq(t.ops, &vkds_seq_transform_ops);
  ck_assert_ptr_eq(t.base, &dev);
  ck_assert_ptr_eq(t.op, &TWICE);
  ck_assert_uint_eq(t.count, 16);
  ck_assert_int_eq(t.type, VKDS_F32); /* BYTES: the base's type */
  ck_assert_uint_eq(t.elem_size, 4);
  assert_direct(&t, true, false);
  vkds_seq th = vkds_seq_transform(&hs, &TWICE);
  assert_direct(&th, false, false);
  vkds_seq tc = vkds_seq_transform(&cnt, &TWICE);
  assert_direct(&tc, true, true);
  vkds_transform_op widen = {.glsl = "double(x)", .type = VKDS_F64};
  vkds_seq w = vkds_seq_transform(&dev, &widen);
  ck_assert_int_eq(w.type, VKDS_F64);
  ck_assert_uint_eq(w.elem_size, 8);
  assert_direct(&w, true, false);
  vkds_buffer_destroy(b);
  close_two();
}
END_TEST

START_TEST(zip_needs_every_part) {
  open_two();
  vkds_buffer *b0 = make(r0, VKDS_MEMORY_DEVICE, 40), *b1 = make(r1, VKDS_MEMORY_DEVICE, 80);
  double host[10] = {0};
  vkds_seq parts[3] = {vkds_seq_buffer(vkds_view_of(b0), VKDS_F32), vkds_seq_counting(0, 10, VKDS_I64),
                       vkds_seq_discard(10, VKDS_U32)};
  vkds_seq z = vkds_seq_zip(parts, 3);
  ck_assert_ptr_eq(z.ops, &vkds_seq_zip_ops);
  ck_assert_int_eq(z.type, VKDS_TYPE_COMPOSITE);
  ck_assert_uint_eq(z.elem_size, 4 + 8 + 4);
  ck_assert_uint_eq(z.count, 10);
  ck_assert_uint_eq(z.part_count, 3);
  ck_assert_ptr_eq(z.parts, parts);
  ck_assert_vkds(vkds_seq_validate(&z));
  assert_direct(&z, true, false);
  /* one host part: staged */
  parts[1] = vkds_seq_host(host, 10, VKDS_F64);
  assert_direct(&z, false, false);
  /* parts on two devices: neither can take it */
  parts[1] = vkds_seq_buffer(vkds_view_of(b1), VKDS_F64);
  assert_direct(&z, false, false);
  /* and on r1 alone */
  parts[0] = vkds_seq_counting(0, 10, VKDS_F32);
  assert_direct(&z, false, true);
  vkds_seq one = vkds_seq_zip(parts, 1);
  ck_assert_uint_eq(one.elem_size, 4);
  assert_direct(&one, true, true);
  vkds_buffer_destroy(b1);
  vkds_buffer_destroy(b0);
  close_two();
}
END_TEST

START_TEST(permutation_needs_source_and_map) {
  open_two();
  vkds_buffer *src = make(r0, VKDS_MEMORY_DEVICE, 64), *map = make(r0, VKDS_MEMORY_DEVICE, 32);
  float hsrc[16] = {0};
  uint32_t hmap[8] = {0};
  vkds_seq s = vkds_seq_buffer(vkds_view_of(src), VKDS_F32), m = vkds_seq_buffer(vkds_view_of(map), VKDS_U32),
           hs = vkds_seq_host(hsrc, 16, VKDS_F32), hm = vkds_seq_host(hmap, 8, VKDS_U32),
           cm = vkds_seq_counting(2, 8, VKDS_I64);
  vkds_seq p = vkds_seq_permutation(&s, &m);
  ck_assert_ptr_eq(p.ops, &vkds_seq_permutation_ops);
  ck_assert_ptr_eq(p.base, &s);
  ck_assert_ptr_eq(p.map, &m);
  ck_assert_uint_eq(p.count, 8); /* the map's */
  ck_assert_int_eq(p.type, VKDS_F32);
  ck_assert_uint_eq(p.elem_size, 4);
  assert_direct(&p, true, false);
  vkds_seq host_map = vkds_seq_permutation(&s, &hm);
  assert_direct(&host_map, false, false);
  vkds_seq host_source = vkds_seq_permutation(&hs, &m);
  assert_direct(&host_source, false, false);
  vkds_seq computed_map = vkds_seq_permutation(&s, &cm);
  assert_direct(&computed_map, true, false);
  vkds_buffer_destroy(map);
  vkds_buffer_destroy(src);
  close_two();
}
END_TEST

START_TEST(reverse_follows_its_base) {
  open_two();
  vkds_buffer *b = make(r1, VKDS_MEMORY_DEVICE, 64);
  int32_t host[4] = {0};
  vkds_seq dev = vkds_seq_buffer(vkds_view_of(b), VKDS_I32), hs = vkds_seq_host(host, 4, VKDS_I32),
           cnt = vkds_seq_counting(0, 4, VKDS_I32);
  vkds_seq r = vkds_seq_reverse(&dev);
  ck_assert_ptr_eq(r.ops, &vkds_seq_reverse_ops);
  ck_assert_ptr_eq(r.base, &dev);
  ck_assert_uint_eq(r.count, 16);
  ck_assert_int_eq(r.type, VKDS_I32);
  assert_direct(&r, false, true);
  vkds_seq rh = vkds_seq_reverse(&hs);
  assert_direct(&rh, false, false);
  vkds_seq rc = vkds_seq_reverse(&cnt);
  assert_direct(&rc, true, true);
  vkds_buffer_destroy(b);
  close_two();
}
END_TEST

START_TEST(nested_views_ask_all_the_way_down) {
  open_two();
  vkds_buffer *a = make(r0, VKDS_MEMORY_DEVICE, 32), *m = make(r0, VKDS_MEMORY_MAPPED, 16);
  int32_t host_map[4] = {0};
  vkds_seq base = vkds_seq_buffer(vkds_view_of(a), VKDS_F64);
  vkds_seq twice = vkds_seq_transform(&base, &TWICE);
  vkds_seq map = vkds_seq_mapped(vkds_view_of(m), VKDS_I32);
  vkds_seq perm = vkds_seq_permutation(&twice, &map);
  vkds_seq rev_perm = vkds_seq_reverse(&perm);
  vkds_seq parts[3] = {rev_perm, vkds_seq_counting(0, 4, VKDS_U32), vkds_seq_transform(&map, &TWICE)};
  vkds_seq z = vkds_seq_zip(parts, 3);
  vkds_seq top = vkds_seq_reverse(&z);
  ck_assert_ptr_eq(top.ops, &vkds_seq_reverse_ops);
  ck_assert_uint_eq(top.elem_size, 8 + 4 + 4);
  ck_assert_vkds(vkds_seq_validate(&top));
  assert_direct(&top, true, false);
  /* one host map four levels down: the whole tree is staged */
  vkds_seq hm = vkds_seq_host(host_map, 4, VKDS_I32);
  vkds_seq perm_h = vkds_seq_permutation(&twice, &hm);
  vkds_seq rev_h = vkds_seq_reverse(&perm_h);
  parts[0] = rev_h;
  ck_assert_vkds(vkds_seq_validate(&top));
  assert_direct(&top, false, false);
  vkds_buffer_destroy(m);
  vkds_buffer_destroy(a);
  close_two();
}
END_TEST

START_TEST(user_type_asks_about_its_parts) {
  open_two();
  vkds_buffer *b0 = make(r0, VKDS_MEMORY_DEVICE, 16), *b1 = make(r0, VKDS_MEMORY_DEVICE, 8);
  int32_t host[3] = {1, 2, 3};
  vkds_seq x = vkds_seq_buffer(vkds_view_of(b0), VKDS_I32), y = vkds_seq_buffer(vkds_view_of(b1), VKDS_I32),
           h = vkds_seq_host(host, 3, VKDS_I32), c = vkds_seq_counting(10, 2, VKDS_I32);
  concat_parts both_dev = {&x, &y}, one_host = {&x, &h}, host_count = {&h, &c}, count_dev = {&c, &y};
  vkds_seq cat = concat(&both_dev);
  ck_assert_vkds(vkds_seq_validate(&cat));
  concat_direct_calls = 0;
  assert_direct(&cat, true, false);
  ck_assert_int_gt(concat_direct_calls, 0); /* through its own slot */
  vkds_seq cat_h = concat(&one_host);
  assert_direct(&cat_h, false, false);
  vkds_seq cat_c = concat(&count_dev);
  assert_direct(&cat_c, true, false);
  /* inside built-in views */
  vkds_seq rev = vkds_seq_reverse(&cat);
  ck_assert_ptr_eq(rev.ops, &vkds_seq_reverse_ops);
  assert_direct(&rev, true, false);
  vkds_seq rev_h = vkds_seq_reverse(&cat_h);
  assert_direct(&rev_h, false, false);
  /* read through its read slot, and through a view of it */
  vkds_seq hc = concat(&host_count);
  ck_assert_uint_eq(hc.count, 5);
  static const int32_t want[] = {1, 2, 3, 10, 11};
  for (uint64_t i = 0; i < 5; ++i) {
    int32_t v = -1;
    ck_assert_vkds(vkds_seq_read(&hc, i, &v));
    ck_assert_int_eq(v, want[i]);
  }
  vkds_seq rhc = vkds_seq_reverse(&hc);
  int32_t v = -1;
  ck_assert_vkds(vkds_seq_read(&rhc, 0, &v));
  ck_assert_int_eq(v, 11);
  ck_assert_int_eq(vkds_seq_read(&hc, 5, &v), VKDS_ERROR_INVALID_ARGUMENT);
  /* its validate slot: a bad part is reported through it */
  vkds_seq bad = {0};
  concat_parts with_bad = {&x, &bad};
  vkds_seq cat_bad = concat(&with_bad);
  ck_assert_int_eq(vkds_seq_validate(&cat_bad), VKDS_ERROR_INVALID_ARGUMENT);
  assert_message("concat");
  assert_direct(&cat_bad, false, false);
  assert_invalid(vkds_seq_reverse(&cat_bad), "vkds_seq_reverse", "concat");
  /* a table of a later version: vkds reads the slots it knows */
  vkds_seq_ops later = CONCAT;
  later.version = VKDS_SEQ_OPS_VERSION + 1;
  vkds_seq cat_later = cat;
  cat_later.ops = &later;
  ck_assert_vkds(vkds_seq_validate(&cat_later));
  assert_direct(&cat_later, true, false);
  /* no read slot: the host cannot read it; no validate slot: only the common checks */
  vkds_seq_ops bare = {VKDS_SEQ_OPS_VERSION, "bare", concat_direct, NULL, NULL};
  vkds_seq cat_bare = cat_bad;
  cat_bare.ops = &bare;
  ck_assert_vkds(vkds_seq_validate(&cat_bare));
  ck_assert_int_eq(vkds_seq_read(&cat_bare, 0, &v), VKDS_ERROR_UNSUPPORTED);
  assert_message("bare");
  vkds_buffer_destroy(b1);
  vkds_buffer_destroy(b0);
  close_two();
}
END_TEST

/* ---- what is refused ---- */

START_TEST(null_arguments) {
  open_two();
  vkds_seq c = vkds_seq_counting(0, 4, VKDS_I32);
  int32_t x;
  ck_assert(!vkds_seq_is_passed_directly(NULL, r0));
  ck_assert(!vkds_seq_is_passed_directly(&c, NULL));
  ck_assert(vkds_seq_is_passed_directly(&c, r0)); /* the same sequence is fine */
  ck_assert_int_eq(vkds_seq_validate(NULL), VKDS_ERROR_INVALID_ARGUMENT);
  assert_message("NULL");
  ck_assert_int_eq(vkds_seq_read(NULL, 0, &x), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_seq_read(&c, 0, NULL), VKDS_ERROR_INVALID_ARGUMENT);
  assert_message("out");
  assert_invalid(vkds_seq_transform(NULL, &TWICE), "vkds_seq_transform", "base is NULL");
  assert_invalid(vkds_seq_transform(&c, NULL), "vkds_seq_transform", "operator");
  assert_invalid(vkds_seq_transform(&c, &(vkds_transform_op){.glsl = NULL}), "vkds_seq_transform", "glsl");
  assert_invalid(vkds_seq_zip(NULL, 2), "vkds_seq_zip", "NULL");
  assert_invalid(vkds_seq_permutation(NULL, &c), "vkds_seq_permutation", "source is NULL");
  assert_invalid(vkds_seq_permutation(&c, NULL), "vkds_seq_permutation", "map is NULL");
  assert_invalid(vkds_seq_reverse(NULL), "vkds_seq_reverse", "base is NULL");
  assert_invalid(vkds_seq_buffer(vkds_view_of(NULL), VKDS_F32), "vkds_seq_buffer", "NULL");
  assert_invalid(vkds_seq_mapped(vkds_view_of(NULL), VKDS_F32), "vkds_seq_mapped", "NULL");
  assert_invalid(vkds_seq_host(NULL, 4, VKDS_I32), "vkds_seq_host", "NULL");
  assert_invalid(vkds_seq_host_const(NULL, 4, VKDS_I32), "vkds_seq_host_const", "NULL");
  vkds_seq empty = vkds_seq_host(NULL, 0, VKDS_I32); /* nothing at nowhere is fine */
  ck_assert_ptr_eq(empty.ops, &vkds_seq_host_ops);
  ck_assert(!vkds_seq_is_passed_directly(&empty, r0));
  close_two();
}
END_TEST

START_TEST(invalid_constructions) {
  open_two();
  vkds_buffer *b = make(r0, VKDS_MEMORY_DEVICE, 64), *odd = make(r0, VKDS_MEMORY_MAPPED, 10),
              *hb = make(r0, VKDS_MEMORY_HOST, 64);
  ck_assert_int_eq(vkds_buffer_memory(hb), VKDS_MEMORY_HOST);
  vkds_seq four = vkds_seq_counting(0, 4, VKDS_U32), five = vkds_seq_counting(0, 5, VKDS_U32),
           floats = vkds_seq_counting(0, 4, VKDS_F32), doubles = vkds_seq_counting(0, 4, VKDS_F64);
  /* zip */
  vkds_seq mismatch[2] = {four, five};
  assert_invalid(vkds_seq_zip(mismatch, 2), "vkds_seq_zip", "part 1 has 5 elements, part 0 has 4");
  assert_invalid(vkds_seq_zip(mismatch, 0), "vkds_seq_zip", "1 to 16");
  vkds_seq seventeen[17];
  for (int i = 0; i < 17; ++i) seventeen[i] = four;
  vkds_seq sixteen = vkds_seq_zip(seventeen, 16);
  ck_assert_ptr_eq(sixteen.ops, &vkds_seq_zip_ops);
  assert_invalid(vkds_seq_zip(seventeen, 17), "vkds_seq_zip", "1 to 16");
  vkds_seq with_invalid[2] = {four, {0}};
  assert_invalid(vkds_seq_zip(with_invalid, 2), "vkds_seq_zip", "part 1: not a valid sequence");
  /* permutation maps are integers */
  assert_invalid(vkds_seq_permutation(&four, &floats), "vkds_seq_permutation", "F32");
  assert_invalid(vkds_seq_permutation(&four, &doubles), "vkds_seq_permutation", "integer");
  vkds_seq bytes_map = vkds_seq_discard(4, VKDS_TYPE_BYTES);
  assert_invalid(vkds_seq_permutation(&four, &bytes_map), "vkds_seq_permutation", "BYTES");
  static const vkds_type maps[] = {VKDS_I32, VKDS_U32, VKDS_I64, VKDS_U64};
  for (int i = 0; i < 4; ++i) {
    vkds_seq m = vkds_seq_counting(0, 3, maps[i]), p = vkds_seq_permutation(&doubles, &m);
    ck_assert_ptr_eq(p.ops, &vkds_seq_permutation_ops);
  }
  /* buffer ranges */
  assert_invalid(vkds_seq_buffer((vkds_view){b, 0, 68}, VKDS_F32), "vkds_seq_buffer", "past the buffer's 64 bytes");
  assert_invalid(vkds_seq_buffer((vkds_view){b, 32, 36}, VKDS_F32), "vkds_seq_buffer", "past the buffer");
  assert_invalid(vkds_seq_buffer((vkds_view){b, 68, 0}, VKDS_F32), "vkds_seq_buffer", "past the buffer");
  assert_invalid(vkds_seq_buffer((vkds_view){b, 0, 6}, VKDS_F32), "vkds_seq_buffer", "whole number of F32");
  assert_invalid(vkds_seq_mapped(vkds_view_of(odd), VKDS_F64), "vkds_seq_mapped", "to the end");
  assert_invalid(vkds_seq_buffer((vkds_view){b, 2, 8}, VKDS_F32), "vkds_seq_buffer", "offset 2");
  assert_invalid(vkds_seq_buffer(vkds_view_of(b), VKDS_TYPE_COMPOSITE), "vkds_seq_buffer", "no size");
  assert_invalid(vkds_seq_buffer(vkds_view_of(b), (vkds_type)42), "vkds_seq_buffer", "unknown");
  vkds_seq exact = vkds_seq_buffer((vkds_view){b, 64, 0}, VKDS_F32); /* empty, at the end */
  ck_assert_ptr_eq(exact.ops, &vkds_seq_buffer_ops);
  ck_assert_uint_eq(exact.count, 0);
  /* host buffers are host memory, not device memory */
  assert_invalid(vkds_seq_buffer(vkds_view_of(hb), VKDS_F32), "vkds_seq_buffer", "VKDS_MEMORY_HOST");
  assert_invalid(vkds_seq_mapped(vkds_view_of(hb), VKDS_F32), "vkds_seq_mapped", "VKDS_MEMORY_HOST");
  vkds_seq as_host = vkds_seq_host(vkds_buffer_map(hb), 16, VKDS_F32); /* what the message advises */
  ck_assert_ptr_eq(as_host.ops, &vkds_seq_host_ops);
  assert_direct(&as_host, false, false);
  /* counting and discard types */
  assert_invalid(vkds_seq_counting(0, 4, VKDS_TYPE_BYTES), "vkds_seq_counting", "numeric");
  assert_invalid(vkds_seq_counting(0, 4, VKDS_TYPE_COMPOSITE), "vkds_seq_counting", "numeric");
  assert_invalid(vkds_seq_counting(INT32_MAX, 2, VKDS_I32), "vkds_seq_counting", "does not fit I32");
  assert_invalid(vkds_seq_counting(-1, 2, VKDS_U32), "vkds_seq_counting", "does not fit U32");
  /* floats hold integers exactly to 2^24 (F32) and 2^53 (F64) */
  assert_invalid(vkds_seq_counting(16777215, 3, VKDS_F32), "vkds_seq_counting", "does not fit F32");
  assert_invalid(vkds_seq_counting(-(INT64_C(1) << 53) - 1, 1, VKDS_F64), "vkds_seq_counting", "does not fit F64");
  ck_assert_ptr_eq(vkds_seq_counting(16777215, 2, VKDS_F32).ops, &vkds_seq_counting_ops);
  assert_invalid(vkds_seq_counting(INT64_MAX, 2, VKDS_I64), "vkds_seq_counting", "overflows");
  /* U64 counts on past INT64_MAX, to 2^64 - 1 (refused past 2^63 before: a contract probe) */
  vkds_seq high = vkds_seq_counting(INT64_MAX, 2, VKDS_U64);
  ck_assert_ptr_eq(high.ops, &vkds_seq_counting_ops);
  uint64_t got_high = 0;
  ck_assert_vkds(vkds_seq_read(&high, 1, &got_high));
  ck_assert_uint_eq(got_high, UINT64_C(1) << 63);
  ck_assert_ptr_eq(vkds_seq_counting(0, UINT64_MAX, VKDS_U64).ops, &vkds_seq_counting_ops);
  assert_invalid(vkds_seq_counting(2, UINT64_MAX, VKDS_U64), "vkds_seq_counting", "does not fit U64");
  assert_invalid(vkds_seq_counting(-1, 1, VKDS_U64), "vkds_seq_counting", "does not fit U64");
  vkds_seq top = vkds_seq_counting(INT32_MAX, 1, VKDS_I32);
  ck_assert_ptr_eq(top.ops, &vkds_seq_counting_ops);
  assert_invalid(vkds_seq_discard(4, VKDS_TYPE_COMPOSITE), "vkds_seq_discard", "no size");
  assert_invalid(vkds_seq_host(&top, 1, VKDS_TYPE_COMPOSITE), "vkds_seq_host", "no size");
  /* transforms */
  assert_invalid(vkds_seq_transform(&four, &(vkds_transform_op){.glsl = "x", .type = VKDS_TYPE_COMPOSITE}), "vkds_seq_transform",
                 "COMPOSITE");
  /* a view of an invalid sequence is blamed on the part */
  vkds_seq none = {0};
  assert_invalid(vkds_seq_reverse(&none), "vkds_seq_reverse", "base: not a valid sequence");
  assert_invalid(vkds_seq_transform(&none, &TWICE), "vkds_seq_transform", "base: not a valid sequence");
  assert_invalid(vkds_seq_permutation(&four, &none), "vkds_seq_permutation", "map: not a valid sequence");
  /* ops tables without what vkds needs */
  vkds_seq_ops v0 = CONCAT;
  v0.version = 0;
  vkds_seq user = {.ops = &v0, .count = 1, .type = VKDS_I32, .elem_size = 4};
  assert_refused(&user, "version 0");
  assert_invalid(vkds_seq_reverse(&user), "vkds_seq_reverse", "version 0");
  vkds_seq_ops no_trait = {VKDS_SEQ_OPS_VERSION, "no_trait", NULL, NULL, NULL};
  user.ops = &no_trait;
  assert_refused(&user, "is_passed_directly");
  vkds_seq_ops no_name = {VKDS_SEQ_OPS_VERSION, NULL, concat_direct, NULL, NULL};
  user.ops = &no_name;
  assert_refused(&user, "name");
  vkds_buffer_destroy(hb);
  vkds_buffer_destroy(odd);
  vkds_buffer_destroy(b);
  close_two();
}
END_TEST

START_TEST(hand_made_sequences_are_checked_too) {
  open_two();
  vkds_buffer *b = make(r0, VKDS_MEMORY_MAPPED, 64);
  vkds_seq s = vkds_seq_mapped(vkds_view_of(b), VKDS_F32);
  assert_direct(&s, true, false);
  vkds_seq longer = s;
  longer.count = 17;
  assert_refused(&longer, "past the buffer");
  float f;
  ck_assert_int_eq(vkds_seq_read(&longer, 16, &f), VKDS_ERROR_INVALID_ARGUMENT);
  vkds_seq wide = s;
  wide.elem_size = 8, wide.count = 8;
  assert_refused(&wide, "elem_size 8 for F32");
  vkds_seq four = vkds_seq_counting(0, 4, VKDS_U32), five = vkds_seq_counting(0, 5, VKDS_U32);
  vkds_seq parts[2] = {four, four};
  vkds_seq z = vkds_seq_zip(parts, 2);
  ck_assert_vkds(vkds_seq_validate(&z));
  assert_direct(&z, true, true);
  parts[1] = five; /* the parts changed under the zip */
  assert_refused(&z, "part 1 has 5 elements");
  uint32_t pair[2];
  ck_assert_int_eq(vkds_seq_read(&z, 0, pair), VKDS_ERROR_INVALID_ARGUMENT);
  /* a sequence that contains itself: refused, not a crash */
  vkds_seq c = vkds_seq_counting(0, 4, VKDS_I32), a = vkds_seq_reverse(&c), r = vkds_seq_reverse(&a);
  ck_assert_vkds(vkds_seq_validate(&r));
  a.base = &r;
  assert_refused(&r, "deep");
  int32_t x;
  ck_assert_int_eq(vkds_seq_read(&r, 0, &x), VKDS_ERROR_INVALID_ARGUMENT);
  assert_message("deep");
  /* a user type whose validate slot fails without a message of its own: named as such,
   * not with the thread's last message, from an unrelated failure (found by a new-user
   * probe) */
  static const vkds_seq_ops silent = {VKDS_SEQ_OPS_VERSION, "silent", never_direct, NULL, refuse_silently};
  vkds_seq quiet = {.ops = &silent, .count = 4, .type = VKDS_U32, .elem_size = 4};
  ck_assert_int_eq(vkds_seq_read(&r, 0, &x), VKDS_ERROR_INVALID_ARGUMENT); /* the unrelated failure */
  assert_refused(&quiet, "a 'silent' sequence: its validate slot returned invalid argument");
  ck_assert_ptr_null(strstr(vkds_last_error_message(), "deep"));
  /* so is one whose read slot fails without a message: its reads, and a call staging it
   * (vkds_reduce's message kept an earlier call's text, and nothing was logged) */
  static const vkds_seq_ops unreadable = {VKDS_SEQ_OPS_VERSION, "unreadable", never_direct, read_silently_fails, NULL};
  vkds_seq closed = {.ops = &unreadable, .count = 4, .type = VKDS_U32, .elem_size = 4};
  uint32_t got;
  ck_assert_int_eq(vkds_seq_read(&r, 0, &x), VKDS_ERROR_INVALID_ARGUMENT); /* the unrelated failure */
  ck_assert_int_eq(vkds_seq_read(&closed, 2, &got), VKDS_ERROR_UNSUPPORTED);
  assert_message("vkds_seq_read: element 2 of a unreadable sequence: its read slot failed");
  vkds_policy *pol;
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = {.context = ctx}}, &pol));
  ck_assert_int_eq(vkds_reduce(pol, &closed, NULL, NULL, &got), VKDS_ERROR_UNSUPPORTED);
  assert_message("vkds_reduce: element 0 of a unreadable sequence: its read slot failed");
  /* said as the staging's, naming the type (a part's failure said only "vkds_seq_read:
   * ..."; a sequences probe) */
  assert_message("vkds_reduce: a 'unreadable' sequence not passed directly to ");
  /* ... and the context's logger hears of it (a user type has no context of its own:
   * nothing was logged; a probe), as of a type without a read slot, named by the call */
  logged[0] = '\0';
  ck_assert_int_eq(vkds_reduce(pol, &closed, NULL, NULL, &got), VKDS_ERROR_UNSUPPORTED);
  ck_assert_msg(strstr(logged, "its read slot failed"), "logged: %s", logged);
  static const vkds_seq_ops no_read = {VKDS_SEQ_OPS_VERSION, "no_read", never_direct, NULL, NULL};
  vkds_seq unread = {.ops = &no_read, .count = 4, .type = VKDS_U32, .elem_size = 4};
  logged[0] = '\0';
  ck_assert_int_eq(vkds_reduce(pol, &unread, NULL, NULL, &got), VKDS_ERROR_UNSUPPORTED);
  assert_message("vkds_reduce: a no_read cannot be read on the host (no read slot)");
  ck_assert_msg(strstr(logged, "no read slot"), "logged: %s", logged);
  /* a validate slot that returns a value that is no vkds_result (a positive one read as
   * success to a caller testing r < 0: a probe) */
  static const vkds_seq_ops positive = {VKDS_SEQ_OPS_VERSION, "positive", never_direct, NULL, validate_positive};
  vkds_seq plus = {.ops = &positive, .count = 4, .type = VKDS_U32, .elem_size = 4};
  ck_assert_int_eq(vkds_seq_validate(&plus), VKDS_ERROR_INVALID_ARGUMENT);
  assert_message("returned 7, which is not a vkds_result");
  ck_assert_int_eq(vkds_reduce(pol, &plus, NULL, NULL, &got), VKDS_ERROR_INVALID_ARGUMENT);
  /* U64 counting past INT64_MAX on the device too (its kernel adds in int64_t) */
  vkds_seq high = vkds_seq_counting(INT64_MAX, 3, VKDS_U64);
  uint64_t top = 0;
  ck_assert_vkds(vkds_reduce(pol, &high, &(vkds_op){VKDS_OP_MAX}, NULL, &top));
  ck_assert_uint_eq(top, (UINT64_C(1) << 63) + 1);
  vkds_policy_release(pol);
  /* a copy of a built-in table is that kind (its validate slot ran itself 64 levels
   * down: found by a hostile-input probe) */
  static uint32_t words[4] = {1, 2, 3, 4};
  vkds_seq_ops host_copy = vkds_seq_host_ops;
  vkds_seq copied = vkds_seq_host(words, 4, VKDS_U32);
  copied.ops = &host_copy;
  ck_assert_vkds(vkds_seq_validate(&copied));
  vkds_buffer_destroy(b);
  close_two();
}
END_TEST

/* ---- host reads ---- */

static void twice_f32(const void *in, void *out, void *user) {
  (void)user;
  *(float *)out = 2.0f * *(const float *)in;
}

static void i32_to_f64(const void *in, void *out, void *user) {
  *(double *)out = (double)*(const int32_t *)in + *(const double *)user;
}

START_TEST(read_counting_of_every_type) {
  int32_t i32;
  uint32_t u32;
  float f32;
  int64_t i64;
  uint64_t u64;
  double f64;
  vkds_seq s = vkds_seq_counting(-3, 10, VKDS_I32);
  ck_assert_vkds(vkds_seq_read(&s, 0, &i32));
  ck_assert_int_eq(i32, -3);
  ck_assert_vkds(vkds_seq_read(&s, 9, &i32));
  ck_assert_int_eq(i32, 6);
  s = vkds_seq_counting(4000000000LL, 3, VKDS_U32);
  ck_assert_vkds(vkds_seq_read(&s, 2, &u32));
  ck_assert_uint_eq(u32, 4000000002u);
  s = vkds_seq_counting(7, 3, VKDS_F32);
  ck_assert_vkds(vkds_seq_read(&s, 1, &f32));
  ck_assert_float_eq(f32, 8.0f);
  s = vkds_seq_counting(-(1LL << 40), 3, VKDS_I64);
  ck_assert_vkds(vkds_seq_read(&s, 2, &i64));
  ck_assert_int_eq(i64, -(1LL << 40) + 2);
  s = vkds_seq_counting(1LL << 50, 3, VKDS_U64);
  ck_assert_vkds(vkds_seq_read(&s, 1, &u64));
  ck_assert_uint_eq(u64, (1ULL << 50) + 1);
  s = vkds_seq_counting(-5, 3, VKDS_F64);
  ck_assert_vkds(vkds_seq_read(&s, 2, &f64));
  ck_assert_double_eq(f64, -3.0);
  /* past the end, and an empty sequence */
  ck_assert_int_eq(vkds_seq_read(&s, 3, &f64), VKDS_ERROR_INVALID_ARGUMENT);
  assert_message("index 3");
  s = vkds_seq_counting(0, 0, VKDS_F64);
  ck_assert_int_eq(vkds_seq_read(&s, 0, &f64), VKDS_ERROR_INVALID_ARGUMENT);
}
END_TEST

START_TEST(read_buffers_and_host_memory) {
  open_two();
  vkds_buffer *m = make(r0, VKDS_MEMORY_MAPPED, 64), *d = make(r0, VKDS_MEMORY_DEVICE, 64);
  float *mp = vkds_buffer_map(m);
  for (int i = 0; i < 16; ++i) mp[i] = 0.5f * (float)i;
  vkds_seq s = vkds_seq_mapped((vkds_view){m, 8, 16}, VKDS_F32); /* elements 2..5 */
  ck_assert_uint_eq(s.count, 4);
  for (uint64_t i = 0; i < 4; ++i) {
    float f = -1;
    ck_assert_vkds(vkds_seq_read(&s, i, &f));
    ck_assert_float_eq(f, 0.5f * (float)(i + 2));
  }
  float f;
  ck_assert_int_eq(vkds_seq_read(&s, 4, &f), VKDS_ERROR_INVALID_ARGUMENT);
  /* a plain buffer seq over mapped memory reads too; device memory does not */
  vkds_seq plain = vkds_seq_buffer((vkds_view){m, 60, 0}, VKDS_F32);
  ck_assert_vkds(vkds_seq_read(&plain, 0, &f));
  ck_assert_float_eq(f, 7.5f);
  vkds_seq dev = vkds_seq_buffer(vkds_view_of(d), VKDS_F32);
  ck_assert_int_eq(vkds_seq_read(&dev, 0, &f), VKDS_ERROR_UNSUPPORTED);
  assert_message("not mapped");
  /* host memory, writable or not */
  const int64_t host[3] = {-1, 1LL << 40, 3};
  vkds_seq h = vkds_seq_host_const(host, 3, VKDS_I64);
  int64_t v;
  ck_assert_vkds(vkds_seq_read(&h, 1, &v));
  ck_assert_int_eq(v, 1LL << 40);
  /* discard holds nothing */
  vkds_seq dis = vkds_seq_discard(3, VKDS_I32);
  ck_assert_int_eq(vkds_seq_read(&dis, 0, &v), VKDS_ERROR_UNSUPPORTED);
  assert_message("discard");
  vkds_buffer_destroy(d);
  vkds_buffer_destroy(m);
  close_two();
}
END_TEST

START_TEST(read_transform_zip_permutation_reverse) {
  /* transform with a host operator, one that changes the type, one without */
  vkds_seq cnt = vkds_seq_counting(1, 5, VKDS_F32);
  vkds_transform_op twice = {.glsl = "x * 2.0", .host = twice_f32};
  vkds_seq t = vkds_seq_transform(&cnt, &twice);
  float f;
  ck_assert_vkds(vkds_seq_read(&t, 3, &f));
  ck_assert_float_eq(f, 8.0f);
  const int32_t ints[4] = {5, -6, 7, -8};
  vkds_seq hi = vkds_seq_host_const(ints, 4, VKDS_I32);
  double offset = 0.25;
  vkds_transform_op widen = {.glsl = "double(x) + 0.25", .type = VKDS_F64, .host = i32_to_f64, .user = &offset};
  vkds_seq w = vkds_seq_transform(&hi, &widen);
  double d;
  ck_assert_vkds(vkds_seq_read(&w, 1, &d));
  ck_assert_double_eq(d, -5.75);
  vkds_seq no_host = vkds_seq_transform(&cnt, &TWICE);
  ck_assert_int_eq(vkds_seq_read(&no_host, 0, &f), VKDS_ERROR_UNSUPPORTED);
  assert_message("no host operator");
  /* zip: the parts' elements back to back, an F64 at an unaligned offset included */
  const uint32_t words[4] = {100, 200, 300, 400};
  vkds_seq parts[3] = {hi, w, vkds_seq_host_const(words, 4, VKDS_U32)};
  vkds_seq z = vkds_seq_zip(parts, 3);
  ck_assert_uint_eq(z.elem_size, 16);
  unsigned char tuple[16];
  ck_assert_vkds(vkds_seq_read(&z, 2, tuple));
  int32_t i32;
  uint32_t u32;
  memcpy(&i32, tuple, 4);
  memcpy(&d, tuple + 4, 8);
  memcpy(&u32, tuple + 12, 4);
  ck_assert_int_eq(i32, 7);
  ck_assert_double_eq(d, 7.25);
  ck_assert_uint_eq(u32, 300);
  /* permutation: source[map[i]] for maps of every integer type */
  const float src[4] = {10, 20, 30, 40};
  vkds_seq fs = vkds_seq_host_const(src, 4, VKDS_F32);
  const int32_t m32[3] = {3, 0, 2};
  const uint64_t m64[3] = {1, 1, 3};
  vkds_seq map32 = vkds_seq_host_const(m32, 3, VKDS_I32), map64 = vkds_seq_host_const(m64, 3, VKDS_U64),
           mapc = vkds_seq_counting(1, 3, VKDS_U32);
  vkds_seq p32 = vkds_seq_permutation(&fs, &map32), p64 = vkds_seq_permutation(&fs, &map64),
           pc = vkds_seq_permutation(&fs, &mapc);
  static const float want32[] = {40, 10, 30}, want64[] = {20, 20, 40}, wantc[] = {20, 30, 40};
  for (uint64_t i = 0; i < 3; ++i) {
    ck_assert_vkds(vkds_seq_read(&p32, i, &f));
    ck_assert_float_eq(f, want32[i]);
    ck_assert_vkds(vkds_seq_read(&p64, i, &f));
    ck_assert_float_eq(f, want64[i]);
    ck_assert_vkds(vkds_seq_read(&pc, i, &f));
    ck_assert_float_eq(f, wantc[i]);
  }
  ck_assert_int_eq(vkds_seq_read(&p32, 3, &f), VKDS_ERROR_INVALID_ARGUMENT);
  /* reverse, and reverse of reverse */
  vkds_seq r = vkds_seq_reverse(&fs), rr = vkds_seq_reverse(&r);
  for (uint64_t i = 0; i < 4; ++i) {
    ck_assert_vkds(vkds_seq_read(&r, i, &f));
    ck_assert_float_eq(f, src[3 - i]);
    ck_assert_vkds(vkds_seq_read(&rr, i, &f));
    ck_assert_float_eq(f, src[i]);
  }
  ck_assert_int_eq(vkds_seq_read(&r, 4, &f), VKDS_ERROR_INVALID_ARGUMENT);
  /* all of it at once: reverse(zip(transform(permutation), reverse)) */
  vkds_seq tp = vkds_seq_transform(&p32, &twice);
  vkds_seq r3 = vkds_seq_reverse(&mapc);
  vkds_seq mixed_parts[2] = {tp, r3};
  vkds_seq mz = vkds_seq_zip(mixed_parts, 2), top = vkds_seq_reverse(&mz);
  unsigned char pair[8];
  ck_assert_vkds(vkds_seq_read(&top, 0, pair)); /* element 2 of the zip */
  memcpy(&f, pair, 4);
  memcpy(&u32, pair + 4, 4);
  ck_assert_float_eq(f, 60.0f);
  ck_assert_uint_eq(u32, 1);
}
END_TEST

START_TEST(read_rejects_bad_permutation_entries) {
  const float src[4] = {10, 20, 30, 40};
  vkds_seq fs = vkds_seq_host_const(src, 4, VKDS_F32);
  const int32_t m32[3] = {0, 4, -1};
  vkds_seq map = vkds_seq_host_const(m32, 3, VKDS_I32), p = vkds_seq_permutation(&fs, &map);
  ck_assert_ptr_eq(p.ops, &vkds_seq_permutation_ops); /* entries are not read until used */
  float f;
  ck_assert_vkds(vkds_seq_read(&p, 0, &f));
  ck_assert_float_eq(f, 10.0f);
  ck_assert_int_eq(vkds_seq_read(&p, 1, &f), VKDS_ERROR_INVALID_ARGUMENT);
  assert_message("map[1] = 4");
  ck_assert_int_eq(vkds_seq_read(&p, 2, &f), VKDS_ERROR_INVALID_ARGUMENT);
  assert_message("map[2] = -1");
  const uint64_t big[1] = {UINT64_MAX};
  vkds_seq bigmap = vkds_seq_host_const(big, 1, VKDS_U64), pb = vkds_seq_permutation(&fs, &bigmap);
  ck_assert_int_eq(vkds_seq_read(&pb, 0, &f), VKDS_ERROR_INVALID_ARGUMENT);
  assert_message("18446744073709551615");
  /* through a view too */
  vkds_seq r = vkds_seq_reverse(&p);
  ck_assert_int_eq(vkds_seq_read(&r, 0, &f), VKDS_ERROR_INVALID_ARGUMENT);
  assert_message("map[2] = -1");
}
END_TEST

int main(void) {
  Suite *s = suite_create("seq");
  TCase *tc = harness_tcase("rules");
  tcase_add_test(tc, type_sizes);
  tcase_add_test(tc, device_buffer_is_passed_on_its_device_only);
  tcase_add_test(tc, mapped_buffer_is_passed_on_its_device_only);
  tcase_add_test(tc, host_memory_is_staged_unless_imported_there);
  tcase_add_test(tc, counting_and_discard_are_always_passed);
  tcase_add_test(tc, transform_follows_its_base);
  tcase_add_test(tc, zip_needs_every_part);
  tcase_add_test(tc, permutation_needs_source_and_map);
  tcase_add_test(tc, reverse_follows_its_base);
  tcase_add_test(tc, nested_views_ask_all_the_way_down);
  tcase_add_test(tc, user_type_asks_about_its_parts);
  suite_add_tcase(s, tc);
  tc = harness_tcase("invalid");
  tcase_add_test(tc, null_arguments);
  tcase_add_test(tc, invalid_constructions);
  tcase_add_test(tc, hand_made_sequences_are_checked_too);
  suite_add_tcase(s, tc);
  tc = harness_tcase("read");
  tcase_add_test(tc, read_counting_of_every_type);
  tcase_add_test(tc, read_buffers_and_host_memory);
  tcase_add_test(tc, read_transform_zip_permutation_reverse);
  tcase_add_test(tc, read_rejects_bad_permutation_entries);
  suite_add_tcase(s, tc);
  return harness_run(s);
}
