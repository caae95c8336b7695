/* lib/seq/seq.c: sequences and the passed-directly trait (vkds/seq.h).
 *
 * Each built-in type has one check of its own fields (`*_own`), written once and used
 * three ways: constructors and vkds_seq_validate want the reason and go down into the
 * parts; the trait and reads only want the answer for this level, because they ask the
 * parts themselves through the public calls, which check those in turn. A reason goes
 * into a caller's stack buffer, so nothing here locks or allocates: sequences are small
 * values and the trait is asked on every algorithm call. */
#include "internal.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

enum {
  MAX_PARTS = 16,
  WHY = VKDS__SEQ_WHY, /* bytes of one explanation */
  MAX_DEPTH = 64, /* nesting; deeper is taken for a sequence that contains itself */
  STAGE = 512,    /* the largest element a host transform reads or writes */
};

/* Views hold pointers, so a sequence can be made to contain itself; the checks, the
 * trait and reads all recurse, and this bounds them rather than the stack. */
static VKDS__FAST_TLS uint32_t depth;

typedef bool own_fn(const vkds_seq *s, char *why, bool deep);

static bool say(char *why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool say(char *why, const char *fmt, ...) {
  if (why) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, WHY, fmt, ap);
    va_end(ap);
  }
  return false;
}

const char *vkds__type_name(vkds_type t) {
  static const char *const names[] = {"BYTES", "I32", "U32", "F32", "I64", "U64", "F64", "COMPOSITE"};
  return (unsigned)t <= VKDS_TYPE_COMPOSITE ? names[t] : "an unknown type";
}
static bool is_numeric(vkds_type t) { return t >= VKDS_I32 && t <= VKDS_F64; }
static bool is_integer(vkds_type t) { return t == VKDS_I32 || t == VKDS_U32 || t == VKDS_I64 || t == VKDS_U64; }

uint32_t vkds_type_size(vkds_type type) {
  switch (type) {
  case VKDS_TYPE_BYTES: return 1;
  case VKDS_I32: case VKDS_U32: case VKDS_F32: return 4;
  case VKDS_I64: case VKDS_U64: case VKDS_F64: return 8;
  default: return 0;
  }
}

/* Only buffer sequences know a context to log to; the rest record the message only. */
static const vkds_context *ctx_of(const vkds_seq *s) {
  bool buffered = s && (s->ops == &vkds_seq_buffer_ops || s->ops == &vkds_seq_mapped_ops);
  return buffered && s->buffer ? s->buffer->dev->ctx : NULL;
}

/* What vkds may call: read before anything else, since a bad table is not ours to call. */
static bool table_ok(const vkds_seq *s, char *why) {
  if (!s) return say(why, "NULL sequence");
  const vkds_seq_ops *o = s->ops;
  if (!o) return say(why, "not a valid sequence (ops NULL: the constructor that made it failed)");
  /* version first: a version-0 table promises no slots at all (a later one is read for
   * the slots this library knows: seq.h) */
  if (o->version < 1) return say(why, "its ops table has version 0 (set VKDS_SEQ_OPS_VERSION)");
  if (!o->name) return say(why, "its ops table has no name");
  if (!o->is_passed_directly) return say(why, "ops table \"%s\" has no is_passed_directly", o->name);
  return true;
}

static bool elem_ok(const vkds_seq *s, char *why) {
  if ((unsigned)s->type > VKDS_TYPE_COMPOSITE)
    return say(why, "%s: unknown element type %d", s->ops->name, (int)s->type);
  if (s->elem_size == 0)
    return say(why, "%s: elements of %s have no size%s", s->ops->name, vkds__type_name(s->type),
               s->type == VKDS_TYPE_COMPOSITE ? " (COMPOSITE is a zip's tuple, sized by its parts)" : "");
  if (is_numeric(s->type) && s->elem_size != vkds_type_size(s->type))
    return say(why, "%s: elem_size %" PRIu32 " for %s, which is %" PRIu32 " bytes", s->ops->name, s->elem_size,
               vkds__type_name(s->type), vkds_type_size(s->type));
  return true;
}

static vkds_result check(const vkds_seq *s, char *why);

/* A part of a view: present, and (deep) valid itself. */
static bool part_ok(const vkds_seq *p, const char *what, uint32_t index, char *why, bool deep) {
  char sub[WHY], name[32];
  if (p && (!deep || check(p, sub) == VKDS_SUCCESS)) return true;
  if (!why) return false;
  if (index == UINT32_MAX) snprintf(name, sizeof name, "%s", what);
  else snprintf(name, sizeof name, "%s %" PRIu32, what, index);
  if (!p) return say(why, "%s is NULL", name);
  /* a cycle's reason is the same at every level: not the path round it */
  if (strncmp(sub, "nested more than", 16) == 0) return say(why, "%s", sub);
  /* deep nesting: keep the innermost reason rather than the path to it */
  if (snprintf(why, WHY, "%s: %s", name, sub) >= WHY) snprintf(why, WHY, "...%s", sub + strlen(sub) - (WHY - 4));
  return false;
}

/* ---- the rules of the built-in types ---- */

static bool range_ok(const vkds_seq *s, char *why, bool need_mapping) {
  const vkds_buffer *b = s->buffer;
  if (!b) return say(why, "the buffer is NULL");
  if (b->kind == VKDS_MEMORY_HOST)
    return say(why, "a VKDS_MEMORY_HOST buffer is host memory no device can see: "
                    "make it a vkds_seq_host of vkds_buffer_map(buf)");
  if (need_mapping && !b->mapped)
    return say(why, "the buffer is device-local and not mapped, so the host cannot see it: use vkds_seq_buffer");
  if (s->elem_size == 0) return true; /* elem_ok says why */
  if (s->offset > b->size || s->count > (b->size - s->offset) / s->elem_size)
    return say(why, "%" PRIu64 " elements of %" PRIu32 " bytes from offset %" PRIu64 " go past the buffer's %" PRIu64 " bytes",
               s->count, s->elem_size, s->offset, b->size);
  if (is_numeric(s->type) && s->offset % s->elem_size)
    return say(why, "offset %" PRIu64 " is not a multiple of %s's %" PRIu32 " bytes", s->offset, vkds__type_name(s->type),
               s->elem_size);
  return true;
}
static bool buffer_own(const vkds_seq *s, char *why, bool deep) { return (void)deep, range_ok(s, why, false); }
static bool mapped_own(const vkds_seq *s, char *why, bool deep) { return (void)deep, range_ok(s, why, true); }

static bool host_own(const vkds_seq *s, char *why, bool deep) {
  (void)deep;
  if (!s->host && s->count) return say(why, "%" PRIu64 " elements at a NULL pointer", s->count);
  if (s->elem_size && s->count > UINT64_MAX / s->elem_size)
    return say(why, "%" PRIu64 " elements overflow the address space", s->count);
  return true;
}

static bool counting_own(const vkds_seq *s, char *why, bool deep) {
  (void)deep;
  if (!is_numeric(s->type))
    return say(why, "counting sequences are numeric (I32, U32, F32, I64, U64, F64), not %s", vkds__type_name(s->type));
  if (s->count == 0) return true;
  /* U64 counts on past INT64_MAX (the values are start + i modulo 2^64 in both readers,
   * which is exact while they fit: refused past 2^63 before, a contract probe) */
  if (s->type == VKDS_U64) {
    if (s->start < 0 || s->count - 1 > UINT64_MAX - (uint64_t)s->start)
      return say(why, "counting %" PRIu64 " from %" PRId64 " does not fit U64", s->count, s->start);
    return true;
  }
  /* INT64_MAX - start as a number always lies in [0, 2^64) */
  if (s->count - 1 > (uint64_t)INT64_MAX - (uint64_t)s->start)
    return say(why, "counting %" PRIu64 " from %" PRId64 " overflows a 64-bit integer", s->count, s->start);
  int64_t last = (int64_t)((uint64_t)s->start + (s->count - 1)), lo = INT64_MIN, hi = INT64_MAX;
  if (s->type == VKDS_I32) lo = INT32_MIN, hi = INT32_MAX;
  if (s->type == VKDS_U32) lo = 0, hi = UINT32_MAX;
  /* floats: the integers they hold exactly (past them two elements would be one value) */
  if (s->type == VKDS_F32) lo = -(INT64_C(1) << 24), hi = INT64_C(1) << 24;
  if (s->type == VKDS_F64) lo = -(INT64_C(1) << 53), hi = INT64_C(1) << 53;
  if (s->start < lo || last > hi)
    return say(why, "counting from %" PRId64 " to %" PRId64 " does not fit %s", s->start, last, vkds__type_name(s->type));
  return true;
}

static bool discard_own(const vkds_seq *s, char *why, bool deep) { return (void)s, (void)why, (void)deep, true; }

/* Transform, reverse and permutation elements are their base's, unless the operator
 * says otherwise. */
static bool like_base(const vkds_seq *s, const vkds_seq *base, const char *what, char *why) {
  if (s->count != base->count)
    return say(why, "%" PRIu64 " elements where its %s has %" PRIu64, s->count, what, base->count);
  if (s->type != base->type || s->elem_size != base->elem_size)
    return say(why, "elements are %s of %" PRIu32 " bytes, its %s's %s of %" PRIu32, vkds__type_name(s->type), s->elem_size,
               what, vkds__type_name(base->type), base->elem_size);
  return true;
}

static bool transform_own(const vkds_seq *s, char *why, bool deep) {
  if (!part_ok(s->base, "base", UINT32_MAX, why, deep)) return false;
  if (!s->op || !s->op->glsl) return say(why, "transform without %s", s->op ? "op->glsl" : "an operator");
  if (s->op->type == VKDS_TYPE_BYTES) return like_base(s, s->base, "base", why);
  if (!is_numeric(s->op->type))
    return say(why, "a transform's result type is numeric, or BYTES for its base's; not %s", vkds__type_name(s->op->type));
  if (s->count != s->base->count)
    return say(why, "%" PRIu64 " elements where its base has %" PRIu64, s->count, s->base->count);
  if (s->type != s->op->type)
    return say(why, "elements of %s where its operator makes %s", vkds__type_name(s->type), vkds__type_name(s->op->type));
  return true;
}

static bool zip_own(const vkds_seq *s, char *why, bool deep) {
  if (!s->parts) return say(why, "zip of NULL parts");
  if (s->part_count < 1 || s->part_count > MAX_PARTS)
    return say(why, "zip of %" PRIu32 " parts: 1 to %d", s->part_count, MAX_PARTS);
  uint64_t bytes = 0;
  for (uint32_t i = 0; i < s->part_count; ++i) {
    if (!part_ok(&s->parts[i], "part", i, why, deep)) return false;
    if (s->parts[i].count != s->parts[0].count)
      return say(why, "zip part %" PRIu32 " has %" PRIu64 " elements, part 0 has %" PRIu64, i, s->parts[i].count,
                 s->parts[0].count);
    bytes += s->parts[i].elem_size;
  }
  if (s->count != s->parts[0].count)
    return say(why, "zip of %" PRIu64 " elements where its parts have %" PRIu64, s->count, s->parts[0].count);
  if (s->type != VKDS_TYPE_COMPOSITE || s->elem_size != bytes)
    return say(why, "a zip's elements are COMPOSITE of its parts' %" PRIu64 " bytes, not %s of %" PRIu32, bytes,
               vkds__type_name(s->type), s->elem_size);
  return true;
}

static bool permutation_own(const vkds_seq *s, char *why, bool deep) {
  if (!part_ok(s->base, "source", UINT32_MAX, why, deep) || !part_ok(s->map, "map", UINT32_MAX, why, deep)) return false;
  if (!is_integer(s->map->type))
    return say(why, "the permutation map's elements are %s; a map is an integer sequence (I32, U32, I64, U64)",
               vkds__type_name(s->map->type));
  if (s->count != s->map->count)
    return say(why, "%" PRIu64 " elements where its map has %" PRIu64, s->count, s->map->count);
  if (s->type != s->base->type || s->elem_size != s->base->elem_size)
    return say(why, "elements are %s of %" PRIu32 " bytes, its source's %s of %" PRIu32, vkds__type_name(s->type), s->elem_size,
               vkds__type_name(s->base->type), s->base->elem_size);
  return true;
}

static bool reverse_own(const vkds_seq *s, char *why, bool deep) {
  return part_ok(s->base, "base", UINT32_MAX, why, deep) && like_base(s, s->base, "base", why);
}

/* The built-in tables' validate slots, one a kind (defined with the tables below): a
 * copy of a built-in table is known by its slot (its checks ran its own slot again,
 * 64 levels down: found by a hostile-input probe). */
#define BUILTIN_KINDS(X) X(buffer) X(mapped) X(host) X(counting) X(discard) X(transform) X(zip) X(permutation) X(reverse)
#define DECLARE_VALIDATE(t) static vkds_result t##_validate(const vkds_seq *s);
BUILTIN_KINDS(DECLARE_VALIDATE)
#undef DECLARE_VALIDATE

static own_fn *own_of(const vkds_seq_ops *o) {
#define OWN_OF(t)                                                                                               \
  if (o == &vkds_seq_##t##_ops || o->validate == t##_validate) return t##_own;
  BUILTIN_KINDS(OWN_OF)
#undef OWN_OF
  return NULL;
}

/* The thread's last failure's reason without the "vkds_seq_validate: " of a user type's
 * check of its parts. */
static const char *last_reason(vkds_result r) {
  const char *m = vkds__last_reason(r), *v = "vkds_seq_validate: ";
  return strncmp(m, v, strlen(v)) == 0 ? m + strlen(v) : m;
}

/* Deep: the sequence and everything under it. Parts first, so that a view of a bad
 * sequence is blamed on the part. */
static vkds_result check(const vkds_seq *s, char *why) {
  if (depth >= MAX_DEPTH)
    return say(why, "nested more than %d deep (does it contain itself?)", MAX_DEPTH), VKDS_ERROR_INVALID_ARGUMENT;
  if (!table_ok(s, why)) return VKDS_ERROR_INVALID_ARGUMENT;
  ++depth;
  vkds_result r = VKDS_SUCCESS;
  own_fn *own = own_of(s->ops);
  if (own) {
    if (!own(s, why, true)) r = VKDS_ERROR_INVALID_ARGUMENT;
  } else if (s->ops->validate) {
    /* its reason: the message of a failure inside the slot (a check of its parts), not
     * whatever failed on this thread before it (found by a new-user probe) */
    uint64_t failures = vkds__failures();
    r = s->ops->validate(s);
    if (!vkds__is_result(r)) {
      say(why, "a '%s' sequence: its validate slot returned %d, which is not a vkds_result (errors are the negative "
          "VKDS_ERROR_* values)", s->ops->name, (int)r);
      r = VKDS_ERROR_INVALID_ARGUMENT;
    } else if (r != VKDS_SUCCESS && vkds__failures() != failures) say(why, "%s: %s", s->ops->name, last_reason(r));
    else if (r != VKDS_SUCCESS) say(why, "a '%s' sequence: its validate slot returned %s", s->ops->name, vkds_result_str(r));
  }
  --depth;
  if (r == VKDS_SUCCESS && !elem_ok(s, why)) r = VKDS_ERROR_INVALID_ARGUMENT;
  return r;
}

static vkds_result check_context(const vkds_context *ctx, const char *name, const vkds_seq *s, uint32_t *devices,
                                 bool *on_host, uint32_t level) {
  if (level >= MAX_DEPTH) return VKDS_SUCCESS; /* vkds_seq_validate refused cycles already */
  const vkds_seq_ops *o = s->ops;
  if (o == &vkds_seq_buffer_ops || o == &vkds_seq_mapped_ops) {
    if (s->buffer->dev->ctx != ctx)
      return vkds__fail(ctx, VKDS_ERROR_WRONG_CONTEXT, VK_SUCCESS, "%s: a sequence's buffer belongs to another context",
                        name);
    if (s->buffer->kind == VKDS_MEMORY_HOST) *on_host = true;
    else *devices |= 1u << (s->buffer->dev->index & 31);
    return VKDS_SUCCESS;
  }
  if (o == &vkds_seq_host_ops) {
    /* host memory imported into a device is there for a policy's hints: a call on that
     * device reads it in place (vkds__seq_host_import: the trait's own rule) */
    bool imported = false;
    for (uint32_t d = 0; d < ctx->device_count; ++d) {
      vkds_buffer *b;
      uint64_t at;
      if (vkds__seq_host_import(&ctx->devices[d], s, &b, &at)) *devices |= 1u << (d & 31), imported = true;
    }
    if (!imported) *on_host = true;
  }
  if (s->base) VKDS_CHECK(check_context(ctx, name, s->base, devices, on_host, level + 1));
  if (s->map) VKDS_CHECK(check_context(ctx, name, s->map, devices, on_host, level + 1));
  if (o == &vkds_seq_zip_ops)
    for (uint32_t k = 0; k < s->part_count; ++k)
      VKDS_CHECK(check_context(ctx, name, &s->parts[k], devices, on_host, level + 1));
  return VKDS_SUCCESS;
}

vkds_result vkds__seq_check_context(const vkds_context *ctx, const char *name, const vkds_seq *s, uint32_t *devices,
                                    bool *on_host) {
  uint32_t d = 0;
  bool h = false;
  return check_context(ctx, name, s, devices ? devices : &d, on_host ? on_host : &h, 0);
}

vkds_result vkds_seq_validate(const vkds_seq *seq) {
  char why[WHY];
  vkds_result r = check(seq, why);
  return r == VKDS_SUCCESS ? r : vkds__fail(ctx_of(seq), r, VK_SUCCESS, "vkds_seq_validate: %s", why);
}

vkds_result vkds__seq_validate_quiet(const vkds_seq *seq, char *why) {
  why[0] = '\0';
  return check(seq, why);
}

/* Built-in validate slots: the same check as vkds_seq_validate, for code that calls a
 * table's slot itself (own_of knows the kind by the slot). */
#define DEFINE_VALIDATE(t)                                                                                     \
  static vkds_result t##_validate(const vkds_seq *s) { return vkds_seq_validate(s); }
BUILTIN_KINDS(DEFINE_VALIDATE)
#undef DEFINE_VALIDATE

bool vkds_seq_is_passed_directly(const vkds_seq *seq, const vkds_resource *res) {
  if (!res || !table_ok(seq, NULL) || !elem_ok(seq, NULL) || depth >= MAX_DEPTH) return false;
  ++depth;
  bool yes = seq->ops->is_passed_directly(seq, res);
  --depth;
  return yes;
}

vkds_result vkds_seq_read(const vkds_seq *seq, uint64_t index, void *out) {
  char why[WHY];
  const vkds_context *ctx = ctx_of(seq);
  if (!out) return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "vkds_seq_read: out is NULL");
  if (!table_ok(seq, why) || !elem_ok(seq, why))
    return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "vkds_seq_read: %s", why);
  if (index >= seq->count)
    return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "vkds_seq_read: index %" PRIu64 " of a %s of %" PRIu64 " elements", index, seq->ops->name, seq->count);
  if (!seq->ops->read)
    return vkds__fail(ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS, "%s: a %s cannot be read on the host (no read slot)",
                      vkds__caller("vkds_seq_read"), seq->ops->name);
  if (depth >= MAX_DEPTH)
    return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "vkds_seq_read: nested more than %d deep (does it contain itself?)", MAX_DEPTH);
  ++depth;
  uint64_t failures = vkds__failures();
  vkds_result r = seq->ops->read(seq, index, out);
  --depth;
  /* a user type's read that failed without saying why (through vkds) left the thread's
   * last message to an earlier, unrelated failure, and nothing logged (a probe) */
  return vkds__fail_if_silent(ctx, r, failures, "%s: element %" PRIu64 " of a %s sequence: its read slot failed",
                              vkds__caller("vkds_seq_read"), index, seq->ops->name);
}

/* ---- the built-in types' slots: each can be called straight from its table, so each
 * checks its own level first ---- */

static vkds_result read_check(const vkds_seq *s, own_fn *own) {
  char why[WHY];
  return own(s, why, false) ? VKDS_SUCCESS
                            : vkds__fail(ctx_of(s), VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "vkds_seq_read: %s", why);
}

static bool on_device(const vkds_seq *s, const vkds_resource *res) { return s->buffer->dev == res->dev; }
static bool buffer_direct(const vkds_seq *s, const vkds_resource *res) { return buffer_own(s, NULL, false) && on_device(s, res); }
static bool mapped_direct(const vkds_seq *s, const vkds_resource *res) { return mapped_own(s, NULL, false) && on_device(s, res); }

static vkds_result read_mapping(const vkds_seq *s, uint64_t i, void *out) {
  const vkds_buffer *b = s->buffer;
  if (!b->mapped)
    return vkds__fail(ctx_of(s), VKDS_ERROR_UNSUPPORTED, VK_SUCCESS,
                      "vkds_seq_read: the buffer is device-local and not mapped; vkds_download copies it out");
  uint64_t at = s->offset + i * s->elem_size;
  if (!b->coherent) vkds__buffer_invalidate_range(b, at, s->elem_size);
  memcpy(out, (const char *)b->mapped + at, s->elem_size);
  return VKDS_SUCCESS;
}
static vkds_result buffer_read(const vkds_seq *s, uint64_t i, void *out) {
  VKDS_CHECK(read_check(s, buffer_own));
  return read_mapping(s, i, out);
}
static vkds_result mapped_read(const vkds_seq *s, uint64_t i, void *out) {
  VKDS_CHECK(read_check(s, mapped_own));
  return read_mapping(s, i, out);
}

bool vkds__seq_host_import(vkds__device *dev, const vkds_seq *s, vkds_buffer **buf, uint64_t *offset) {
  /* (the device addresses words: a U32 sequence 2 bytes into imported memory was read
   * and written from the word below, a fill landing 2 bytes before the sequence; a
   * probe. A buffer sequence at that offset is refused; a host one is staged.) */
  uint32_t align = is_numeric(s->type) ? s->elem_size : 4;
  return s->host && align && (uintptr_t)s->host % align == 0 &&
         vkds__import_find(dev, s->host, s->count * s->elem_size, buf, offset);
}

static bool host_direct(const vkds_seq *s, const vkds_resource *res) {
  vkds_buffer *b;
  uint64_t at;
  return host_own(s, NULL, false) && vkds__seq_host_import(res->dev, s, &b, &at);
}
static vkds_result host_read(const vkds_seq *s, uint64_t i, void *out) {
  VKDS_CHECK(read_check(s, host_own));
  memcpy(out, (const char *)s->host + i * s->elem_size, s->elem_size);
  return VKDS_SUCCESS;
}

static bool counting_direct(const vkds_seq *s, const vkds_resource *res) { return (void)res, counting_own(s, NULL, false); }
static vkds_result counting_read(const vkds_seq *s, uint64_t i, void *out) {
  VKDS_CHECK(read_check(s, counting_own));
  /* counting_own: no overflow, except U64 past INT64_MAX, whose bits wrap back below */
  int64_t v = (int64_t)((uint64_t)s->start + i);
#define PUT(T) do { T x_ = (T)v; memcpy(out, &x_, sizeof x_); } while (0)
  switch (s->type) {
  case VKDS_I32: PUT(int32_t); break;
  case VKDS_U32: PUT(uint32_t); break;
  case VKDS_F32: PUT(float); break;
  case VKDS_I64: PUT(int64_t); break;
  case VKDS_U64: PUT(uint64_t); break;
  default: PUT(double); break;
  }
#undef PUT
  return VKDS_SUCCESS;
}

static bool discard_direct(const vkds_seq *s, const vkds_resource *res) { return (void)s, (void)res, true; }
static vkds_result discard_read(const vkds_seq *s, uint64_t i, void *out) {
  (void)s, (void)i, (void)out;
  return vkds__fail(NULL, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS, "vkds_seq_read: a discard sequence holds nothing to read");
}

static bool transform_direct(const vkds_seq *s, const vkds_resource *res) {
  return transform_own(s, NULL, false) && vkds_seq_is_passed_directly(s->base, res);
}
static vkds_result transform_read(const vkds_seq *s, uint64_t i, void *out) {
  VKDS_CHECK(read_check(s, transform_own));
  const vkds_transform_op *op = s->op;
  if (!op->host)
    return vkds__fail(NULL, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS, "vkds_seq_read: the transform \"%s\" has no host operator",
                      op->glsl);
  if (s->base->elem_size > STAGE || s->elem_size > STAGE)
    return vkds__fail(NULL, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS,
                      "vkds_seq_read: a host transform takes elements of up to %d bytes, not %" PRIu32, STAGE,
                      s->base->elem_size > s->elem_size ? s->base->elem_size : s->elem_size);
  /* aligned copies: the operator may use its elements as typed values, and `out` may be
   * a zip's unaligned slot */
  union { max_align_t align; unsigned char bytes[STAGE]; } in, result;
  VKDS_CHECK(vkds_seq_read(s->base, i, in.bytes));
  op->host(in.bytes, result.bytes, op->user);
  memcpy(out, result.bytes, s->elem_size);
  return VKDS_SUCCESS;
}

static bool zip_direct(const vkds_seq *s, const vkds_resource *res) {
  if (!zip_own(s, NULL, false)) return false;
  for (uint32_t p = 0; p < s->part_count; ++p)
    if (!vkds_seq_is_passed_directly(&s->parts[p], res)) return false;
  return true;
}
static vkds_result zip_read(const vkds_seq *s, uint64_t i, void *out) {
  VKDS_CHECK(read_check(s, zip_own));
  unsigned char *at = out;
  for (uint32_t p = 0; p < s->part_count; ++p) {
    VKDS_CHECK(vkds_seq_read(&s->parts[p], i, at));
    at += s->parts[p].elem_size;
  }
  return VKDS_SUCCESS;
}

static bool permutation_direct(const vkds_seq *s, const vkds_resource *res) {
  return permutation_own(s, NULL, false) && vkds_seq_is_passed_directly(s->base, res) &&
         vkds_seq_is_passed_directly(s->map, res);
}
static vkds_result permutation_read(const vkds_seq *s, uint64_t i, void *out) {
  VKDS_CHECK(read_check(s, permutation_own));
  union { int32_t i32; uint32_t u32; int64_t i64; uint64_t u64; } m;
  VKDS_CHECK(vkds_seq_read(s->map, i, &m));
  int64_t negative = 0;
  uint64_t j = 0;
  switch (s->map->type) {
  case VKDS_I32: negative = m.i32 < 0 ? m.i32 : 0, j = (uint64_t)(int64_t)m.i32; break;
  case VKDS_U32: j = m.u32; break;
  case VKDS_I64: negative = m.i64 < 0 ? m.i64 : 0, j = (uint64_t)m.i64; break;
  default: j = m.u64; break;
  }
  if (negative || j >= s->base->count) {
    char value[24];
    if (negative) snprintf(value, sizeof value, "%" PRId64, negative);
    else snprintf(value, sizeof value, "%" PRIu64, j);
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "vkds_seq_read: permutation map[%" PRIu64 "] = %s is outside its source's %" PRIu64 " elements", i, value,
                      s->base->count);
  }
  return vkds_seq_read(s->base, j, out);
}

static bool reverse_direct(const vkds_seq *s, const vkds_resource *res) {
  return reverse_own(s, NULL, false) && vkds_seq_is_passed_directly(s->base, res);
}
static vkds_result reverse_read(const vkds_seq *s, uint64_t i, void *out) {
  VKDS_CHECK(read_check(s, reverse_own));
  return vkds_seq_read(s->base, s->count - 1 - i, out);
}

#define BUILTIN(t) const vkds_seq_ops vkds_seq_##t##_ops = {VKDS_SEQ_OPS_VERSION, #t, t##_direct, t##_read, t##_validate};
BUILTIN_KINDS(BUILTIN)
#undef BUILTIN

/* ---- constructors: build the value, then run the one deep check on it ---- */

static vkds_seq made(const vkds_seq *s, const char *fn) {
  char why[WHY];
  vkds_result r = check(s, why);
  if (r == VKDS_SUCCESS) return *s;
  vkds__fail(ctx_of(s), r, VK_SUCCESS, "%s: %s", fn, why);
  return (vkds_seq){0};
}

static vkds_seq over_buffer(const vkds_seq_ops *ops, vkds_view v, vkds_type type, const char *fn) {
  vkds_seq s = {.ops = ops, .type = type, .elem_size = vkds_type_size(type), .buffer = v.buffer, .offset = v.offset};
  uint64_t bytes = 0;
  if (v.buffer && s.elem_size && v.offset <= v.buffer->size) {
    bytes = v.bytes ? v.bytes : v.buffer->size - v.offset;
    s.count = bytes / s.elem_size;
  }
  s = made(&s, fn);
  if (s.ops && bytes % s.elem_size) { /* after made(): a wrong buffer is the better reason */
    vkds__fail(v.buffer->dev->ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
               "%s: %" PRIu64 " bytes%s are not a whole number of %s elements", fn, bytes, v.bytes ? "" : " (to the end)",
               vkds__type_name(type));
    return (vkds_seq){0};
  }
  return s;
}

vkds_seq vkds_seq_buffer(vkds_view view, vkds_type type) { return over_buffer(&vkds_seq_buffer_ops, view, type, __func__); }
vkds_seq vkds_seq_mapped(vkds_view view, vkds_type type) { return over_buffer(&vkds_seq_mapped_ops, view, type, __func__); }

static vkds_seq host_seq(void *data, uint64_t count, vkds_type type, bool read_only, const char *fn) {
  vkds_seq s = {.ops = &vkds_seq_host_ops, .count = count, .type = type, .elem_size = vkds_type_size(type),
                .host = data, .read_only = read_only};
  return made(&s, fn);
}
vkds_seq vkds_seq_host(void *data, uint64_t count, vkds_type type) { return host_seq(data, count, type, false, __func__); }
vkds_seq vkds_seq_host_const(const void *data, uint64_t count, vkds_type type) {
  return host_seq((void *)data, count, type, true, __func__); /* the const lives on as read_only */
}

vkds_seq vkds_seq_counting(int64_t start, uint64_t count, vkds_type type) {
  vkds_seq s = {.ops = &vkds_seq_counting_ops, .count = count, .type = type, .elem_size = vkds_type_size(type), .start = start};
  return made(&s, __func__);
}

vkds_seq vkds_seq_discard(uint64_t count, vkds_type type) {
  vkds_seq s = {.ops = &vkds_seq_discard_ops, .count = count, .type = type, .elem_size = vkds_type_size(type)};
  return made(&s, __func__);
}

vkds_seq vkds_seq_transform(const vkds_seq *base, const vkds_transform_op *op) {
  vkds_seq s = {.ops = &vkds_seq_transform_ops, .base = base, .op = op};
  if (base) s.count = base->count, s.type = base->type, s.elem_size = base->elem_size;
  if (op && op->type != VKDS_TYPE_BYTES) s.type = op->type, s.elem_size = vkds_type_size(op->type);
  return made(&s, __func__);
}

vkds_seq vkds_seq_zip(const vkds_seq *parts, uint32_t part_count) {
  vkds_seq s = {.ops = &vkds_seq_zip_ops, .type = VKDS_TYPE_COMPOSITE, .parts = parts, .part_count = part_count};
  if (parts && part_count >= 1 && part_count <= MAX_PARTS) {
    uint64_t bytes = 0;
    for (uint32_t p = 0; p < part_count; ++p) bytes += parts[p].elem_size;
    s.count = parts[0].count, s.elem_size = bytes <= UINT32_MAX ? (uint32_t)bytes : 0;
  }
  return made(&s, __func__);
}

vkds_seq vkds_seq_permutation(const vkds_seq *source, const vkds_seq *map) {
  vkds_seq s = {.ops = &vkds_seq_permutation_ops, .base = source, .map = map};
  if (source) s.type = source->type, s.elem_size = source->elem_size;
  if (map) s.count = map->count;
  return made(&s, __func__);
}

vkds_seq vkds_seq_reverse(const vkds_seq *base) {
  vkds_seq s = {.ops = &vkds_seq_reverse_ops, .base = base};
  if (base) s.count = base->count, s.type = base->type, s.elem_size = base->elem_size;
  return made(&s, __func__);
}
