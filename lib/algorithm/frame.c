/* lib/algorithm/frame.c: how every algorithm runs, written once (vkds/algorithm.h):
 *
 *   check everything (nothing is selected, submitted or written on bad input)
 *   -> hints (bytes; the devices the buffers live on) -> select
 *   -> the code for that device (codegen.c)
 *   -> bind each leaf: passed directly, or staged (vkds_seq_bind)
 *   -> its kernel (kernels.c; where bound leaves start is part of their code)
 *   -> record (barrier, dispatches, barrier) -> submit
 *   -> blocking: wait, then finish; asynchronous: the finishing step is the
 *      submission's, run by whoever sees it done first (lib/backend/backend.c)
 *   finish: written leaves copied back (vkds_seq_unbind), results read, temporaries
 *   freed.
 * The recording form skips the policy and the staging: every leaf must be passed
 * directly on the application's device. */
#include "algorithm_internal.h"

#include <stdlib.h>
#include <string.h>

typedef vkds__call call;

/* ---- checks before anything happens ---- */

static vkds_context *context_of_policy(vkds_policy *p) {
  return p && vkds_policy_initialized(p) ? p->backend->context : NULL;
}

const vkds_context *vkds__alg_policy_ctx(vkds_policy *p) { return context_of_policy(p); }
const vkds_context *vkds__alg_cmd_ctx(const vkds_cmd *c) {
  return c && c->resource ? c->resource->dev->ctx : NULL;
}

/* The memory a plain sequence covers, for the overlap check. A buffer the host can see
 * (mapped, host or imported memory) is placed by its host address, so that a host
 * sequence over the same bytes meets it (a host sequence inside imported memory is used
 * in place: a copy between the two went wrong unrefused; a probe). */
typedef struct span {
  const void *base; /* a buffer, or NULL: host addresses */
  uint64_t begin, end;
  bool host_seq; /* a host sequence (not the same sequence as a buffer's, though the same bytes) */
} span;

/* The first `bytes` of view v as a span (none for no buffer or no bytes). */
static bool view_span(vkds_view v, uint64_t bytes, span *out) {
  if (!v.buffer || !bytes) return false;
  if (v.buffer->mapped) {
    uint64_t at = (uint64_t)(uintptr_t)v.buffer->mapped + v.offset;
    *out = (span){NULL, at, at + bytes, false};
  } else {
    *out = (span){v.buffer, v.offset, v.offset + bytes, false};
  }
  return true;
}

static bool span_of(const vkds_seq *s, span *out) {
  uint64_t bytes = s->count * s->elem_size;
  if (s->ops == &vkds_seq_buffer_ops || s->ops == &vkds_seq_mapped_ops) {
    if (s->buffer) return view_span((vkds_view){s->buffer, s->offset, bytes}, bytes, out);
    *out = (span){NULL, s->offset, s->offset + bytes, false};
    return bytes > 0;
  }
  if (s->ops == &vkds_seq_host_ops) {
    *out = (span){NULL, (uint64_t)(uintptr_t)s->host, (uint64_t)(uintptr_t)s->host + bytes, true};
    return bytes > 0;
  }
  return false;
}

enum { MAX_SPANS = 32 };

/* Collects the plain sequences under `s` (through the built-in views). */
static uint32_t spans_under(const vkds_seq *s, span *out, uint32_t n, uint32_t depth) {
  if (depth > 32 || n >= MAX_SPANS) return n;
  if (span_of(s, &out[n])) return n + 1;
  if (s->base) n = spans_under(s->base, out, n, depth + 1);
  if (s->map) n = spans_under(s->map, out, n, depth + 1);
  if (s->ops == &vkds_seq_zip_ops)
    for (uint32_t k = 0; k < s->part_count; ++k) n = spans_under(&s->parts[k], out, n, depth + 1);
  return n;
}

/* What a sequence the algorithm writes covers, by use: the plain sequences it writes
 * (through reverse views, a permutation's source, a zip's parts) in `w`, and what it
 * only reads (a permutation's map) in `r`. A map shared by an input and an output is
 * read by both, which is no overlap (gathering and scattering through one map; found
 * by a new-user probe, which was refused). */
typedef struct spans {
  span w[MAX_SPANS], r[MAX_SPANS];
  uint32_t nw, nr;
} spans;

static void written_spans(const vkds_seq *s, spans *out, uint32_t depth) {
  if (depth > 32 || out->nw >= MAX_SPANS) return;
  if (span_of(s, &out->w[out->nw])) {
    out->nw++;
    return;
  }
  if (s->ops == &vkds_seq_reverse_ops || s->ops == &vkds_seq_permutation_ops) written_spans(s->base, out, depth + 1);
  if (s->ops == &vkds_seq_permutation_ops) out->nr = spans_under(s->map, out->r, out->nr, depth + 1);
  if (s->ops == &vkds_seq_zip_ops)
    for (uint32_t k = 0; k < s->part_count; ++k) written_spans(&s->parts[k], out, depth + 1);
}

static bool meet(const span *a, uint32_t na, const span *b, uint32_t nb) {
  for (uint32_t i = 0; i < na; ++i)
    for (uint32_t j = 0; j < nb; ++j)
      if (a[i].base == b[j].base && a[i].begin < b[j].end && b[j].begin < a[i].end) return true;
  return false;
}

/* A written sequence that writes what it reads itself (its own permutation's map). */
static bool writes_own_map(const spans *s) { return meet(s->w, s->nw, s->r, s->nr); }
/* Two written sequences, either writing what the other reads. */
static bool writes_the_others_map(const spans *a, const spans *b) {
  return meet(a->w, a->nw, b->r, b->nr) || meet(b->w, b->nw, a->r, a->nr);
}
/* Two written sequences that may not share memory: writing the same, or what the other reads. */
static bool clash(const spans *a, const spans *b) {
  return meet(a->w, a->nw, b->w, b->nw) || writes_the_others_map(a, b);
}

/* Whether `in` and `out` are the same sequence: the same plain memory with elements of
 * one size, or the same views over such (reverse, permutation by the same map, zip).
 * *permuted: a permutation is in the way. */
/* Whether `o` is one of vkds's own sequence types. */
static bool built_in(const vkds_seq_ops *o) {
  return o == &vkds_seq_buffer_ops || o == &vkds_seq_mapped_ops || o == &vkds_seq_host_ops ||
         o == &vkds_seq_counting_ops || o == &vkds_seq_discard_ops || o == &vkds_seq_transform_ops ||
         o == &vkds_seq_zip_ops || o == &vkds_seq_permutation_ops || o == &vkds_seq_reverse_ops;
}

/* Two values of a user type that agree in every field: the same sequence, for all vkds
 * can tell (it cannot see inside one). */
static bool same_user_value(const vkds_seq *a, const vkds_seq *b) {
  return a->count == b->count && a->type == b->type && a->elem_size == b->elem_size && a->buffer == b->buffer &&
         a->offset == b->offset && a->host == b->host && a->start == b->start && a->base == b->base &&
         a->map == b->map && a->op == b->op && a->parts == b->parts && a->part_count == b->part_count &&
         a->user == b->user;
}

static bool same_sequence(const vkds_seq *in, const vkds_seq *out, bool *permuted, uint32_t depth) {
  span si, so;
  if (depth > 32 || in->count != out->count || in->elem_size != out->elem_size) return false;
  /* (a buffer and a mapped sequence over one range are the same memory) */
  if (span_of(in, &si))
    return span_of(out, &so) && si.base == so.base && si.begin == so.begin && si.end == so.end &&
           si.host_seq == so.host_seq;
  if (in->ops != out->ops) return false;
  /* a user type written in place: its value passed as input and output (a scan in place
   * through one took the single pass, which may re-read a stalled tile its owner already
   * overwrote: wrong results; a probe) */
  if (!built_in(in->ops)) return same_user_value(in, out);
  if (in->ops == &vkds_seq_reverse_ops) return same_sequence(in->base, out->base, permuted, depth + 1);
  if (in->ops == &vkds_seq_permutation_ops) {
    bool dummy;
    if (!same_sequence(in->map, out->map, &dummy, depth + 1) || !same_sequence(in->base, out->base, permuted, depth + 1))
      return false;
    *permuted = true;
    return true;
  }
  if (in->ops == &vkds_seq_zip_ops && in->part_count == out->part_count) {
    for (uint32_t k = 0; k < in->part_count; ++k)
      if (!same_sequence(&in->parts[k], &out->parts[k], permuted, depth + 1)) return false;
    return true;
  }
  return false;
}

bool vkds__alg_in_place(const vkds__alg *a) {
  bool permuted = false;
  return a->in_place_allowed && a->output && a->input_count && a->count &&
         same_sequence(a->inputs[0], a->output, &permuted, 0) && !permuted;
}

/* A zip written part by part (the merge sort's data, the merge's output): its parts must
 * not share memory. `what` names the zip in the message (after "the zip"). */
static vkds_result check_zip_parts(const vkds_context *ctx, const char *name, const char *what, const vkds_seq *z) {
  for (uint32_t i = 0; i < z->part_count; ++i)
    for (uint32_t j = i + 1; j < z->part_count; ++j) {
      spans p = {0}, q = {0};
      written_spans(&z->parts[i], &p, 0);
      written_spans(&z->parts[j], &q, 0);
      if (clash(&p, &q))
        return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: parts %u and %u of the zip%s overlap",
                          name, i, j, what);
    }
  return VKDS_SUCCESS;
}

static vkds_result check_overlap(const vkds_context *ctx, const vkds__alg *a) {
  if (!a->output) return VKDS_SUCCESS;
  spans outs = {0};
  written_spans(a->output, &outs, 0);
  spans second = {0};
  if (a->output2) { /* two outputs (partition): not overlapping each other either */
    written_spans(a->output2, &second, 0);
    if (meet(outs.w, outs.nw, second.w, second.nw))
      return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: the two outputs overlap", a->name);
    if (writes_the_others_map(&outs, &second))
      return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                        "%s: an output writes the map of the other output's permutation view", a->name);
    if (writes_own_map(&second)) /* (only the first output was asked this) */
      return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                        "%s: the second output writes the map of its own permutation view", a->name);
  }
  if (writes_own_map(&outs))
    return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "%s: the output writes the map of its own permutation view", a->name);
  if (a->output->ops == &vkds_seq_zip_ops) VKDS_CHECK(check_zip_parts(ctx, a->name, " (the output)", a->output));
  span ins[MAX_SPANS];
  uint32_t ni = 0;
  for (uint32_t k = 0; k < a->input_count; ++k) {
    /* the very sequence written in place (the same memory, through the same views) is
     * allowed where the algorithm says so; not through a permutation, whose map may
     * name an element twice (one thread would read what another wrote) */
    bool permuted = false;
    if (a->in_place_allowed && same_sequence(a->inputs[k], a->output, &permuted, 0)) {
      if (!permuted) continue;
      return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                        "%s: in place through a permutation view is not allowed (its map may name an element twice); "
                        "write to another sequence", a->name);
    }
    ni = spans_under(a->inputs[k], ins, ni, 0);
  }
  if (meet(outs.w, outs.nw, ins, ni))
    return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: the output overlaps an input (%s)", a->name,
                      a->in_place_allowed ? "only an output that is exactly the input, the same memory through the "
                                            "same views, may be written in place"
                                          : "this algorithm does not write in place");
  /* (the second output was checked against the first only: a partition's out_false,
   * or reduce_by_key's values_out, over its own input ran with success; a probe) */
  if (meet(second.w, second.nw, ins, ni))
    return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "%s: the second output overlaps an input (this algorithm does not write in place)", a->name);
  return VKDS_SUCCESS;
}

/* Whether an output can be written, as far as the built-in types tell (a user type's
 * device code decides for itself, once a device is picked): NULL when it can, else why.
 * zip_parts: a zip is written part by part (the merge sort), else never. */
static const char *unwritable(const vkds_seq *s, uint32_t depth, bool zip_parts) {
  const vkds_seq_ops *o = s->ops;
  if (depth > 32) return NULL;
  if (o == &vkds_seq_host_ops) return s->read_only ? "a read-only host sequence (vkds_seq_host_const)" : NULL;
  if (o == &vkds_seq_reverse_ops || o == &vkds_seq_permutation_ops) return unwritable(s->base, depth + 1, zip_parts);
  if (o == &vkds_seq_counting_ops) return "a counting sequence";
  if (o == &vkds_seq_transform_ops) return "a transform view";
  if (o == &vkds_seq_zip_ops && !zip_parts) return "a zip view";
  if (o == &vkds_seq_zip_ops)
    for (uint32_t k = 0; k < s->part_count; ++k) {
      const char *why = unwritable(&s->parts[k], depth + 1, zip_parts);
      if (why) return why;
    }
  return NULL;
}

/* ---- the sorting families (sort.c, msort.c, search.c, merge.c) ---- */

/* sorts write their inputs in place */
static bool sorts_in_place(vkds__alg_template t) { return t == VKDS__TEMPLATE_SORT || t == VKDS__TEMPLATE_MSORT; }
/* these read their data at random: staged whole, never streamed */
static bool reads_at_random(vkds__alg_template t) {
  return sorts_in_place(t) || t == VKDS__TEMPLATE_SEARCH || t == VKDS__TEMPLATE_MERGE;
}
/* these run on the map template's grid: a thread per 4 outputs */
static bool map_grid(vkds__alg_template t) {
  return t == VKDS__TEMPLATE_MAP || t == VKDS__TEMPLATE_SEARCH || t == VKDS__TEMPLATE_MERGE;
}

/* Whether a discard sequence is under `s` (through the built-in views). */
static bool holds_discard(const vkds_seq *s, uint32_t depth) {
  if (!s || depth > 32) return false;
  if (s->ops == &vkds_seq_discard_ops) return true;
  if (holds_discard(s->base, depth + 1) || holds_discard(s->map, depth + 1)) return true;
  if (s->ops == &vkds_seq_zip_ops)
    for (uint32_t k = 0; k < s->part_count; ++k)
      if (holds_discard(&s->parts[k], depth + 1)) return true;
  return false;
}

/* Keys and values are written (argsort's keys only read): they must be writable, must
 * not be (or view) a discard sequence, and must not overlap. */
static vkds_result check_sort(const vkds_context *ctx, const vkds__alg *a) {
  const vkds_seq *z = a->inputs[0];
  bool msort = a->template_kind == VKDS__TEMPLATE_MSORT, zip = z->ops == &vkds_seq_zip_ops;
  bool argsort = a->elem == VKDS__ELEM_INDEX;
  for (uint32_t k = 0; k < a->input_count; ++k) {
    /* (the merge sort has no keys: its data, or a zip's parts) */
    const char *what = k ? (argsort ? "the indices are" : "the values are")
                       : !msort ? "the keys are"
                       : zip    ? "a part of the zip is"
                                : "the data is";
    /* (a discard sequence got as far as the kernel's compiler, whose message blamed an operator) */
    if (holds_discard(a->inputs[k], 0))
      return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                        "%s: %s a discard sequence (or a view of one), which a sort cannot %s", a->name, what,
                        argsort && k ? "fill" : "read");
    const char *why = argsort && !k ? NULL : unwritable(a->inputs[k], 0, msort); /* (argsort reads its keys) */
    if (why)
      return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: %s %s, which cannot be written", a->name,
                        what, why);
  }
  if (msort && zip) VKDS_CHECK(check_zip_parts(ctx, a->name, "", z)); /* a zip sorted in place */
  spans ks = {0}, vs = {0};
  if (argsort) ks.nr = spans_under(a->inputs[0], ks.r, 0, 0);
  else written_spans(a->inputs[0], &ks, 0);
  if (a->input_count > 1) written_spans(a->inputs[1], &vs, 0);
  bool keys_own = writes_own_map(&ks);
  if (keys_own || writes_own_map(&vs))
    return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "%s: the %s write the map of their own permutation view", a->name,
                      keys_own ? (msort ? "data" : "keys") : argsort ? "indices" : "values");
  if (clash(&ks, &vs))
    return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: the keys and the %s overlap", a->name,
                      argsort ? "indices" : "values");
  return VKDS_SUCCESS;
}

/* Everything that can be known before a device is picked. */
static vkds_result check(const vkds_context *ctx, const vkds__alg *a, uint32_t *devices, bool *on_host) {
  const char *name = a->name;
  for (uint32_t k = 0; k < a->input_count; ++k) {
    if (!a->inputs[k]) return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: input %u is NULL", name, k);
    char why[VKDS__SEQ_WHY];
    vkds_result bad = vkds__seq_validate_quiet(a->inputs[k], why);
    if (bad != VKDS_SUCCESS) return vkds__fail(ctx, bad, VK_SUCCESS, "%s: input %u: %s", name, k, why);
    VKDS_CHECK(vkds__seq_check_context(ctx, name, a->inputs[k], devices, on_host));
    bool own_count = a->elem == VKDS__ELEM_EQUAL || (a->template_kind == VKDS__TEMPLATE_HISTOGRAM && k > 0) ||
                     (a->template_kind == VKDS__TEMPLATE_SEARCH && k == 1) || a->template_kind == VKDS__TEMPLATE_MERGE;
    if (a->inputs[k]->count != a->count && !own_count)
      return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: input %u has %llu elements, input 0 has %llu",
                        name, k, (unsigned long long)a->inputs[k]->count, (unsigned long long)a->count);
    bool tuple_ok = vkds__elem_takes_tuples(a->elem);
    vkds_type t = a->inputs[k]->type;
    if (!vkds__type_is_number(t) && !(tuple_ok && t == VKDS_TYPE_COMPOSITE))
      return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                        "%s: input %u has elements of type %s; algorithms take I32, U32, F32, I64, U64, F64%s", name, k,
                        vkds__type_name(t), tuple_ok ? " (and zips, through your operator)" : "");
  }
  /* (counts near 2^64, of views that need no memory, wrapped the launch sizes: a
   * division by zero, or "zero work-items"; found by a hostile-input probe) */
  if (a->count > VKDS__ALG_MAX_COUNT)
    return vkds__fail(ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS, "%s: %llu elements are more than one call takes (2^40)",
                      name, (unsigned long long)a->count);
  if (sorts_in_place(a->template_kind)) return check_sort(ctx, a);
  bool compacts = a->template_kind == VKDS__TEMPLATE_SCAN && a->result == VKDS__RESULT_COUNT;
  const vkds_seq *outputs[2] = {a->output, a->output2};
  for (uint32_t k = 0; k < (compacts && a->output2 ? 2u : 1u) && a->template_kind != VKDS__TEMPLATE_REDUCE; ++k) {
    const vkds_seq *o = outputs[k]; /* MAP, SCAN */
    if (!o) return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: the %soutput is NULL", name, k ? "second " : "");
    char reason[VKDS__SEQ_WHY];
    vkds_result bad = vkds__seq_validate_quiet(o, reason);
    if (bad != VKDS_SUCCESS)
      return vkds__fail(ctx, bad, VK_SUCCESS, "%s: the %soutput: %s", name, k ? "second " : "", reason);
    VKDS_CHECK(vkds__seq_check_context(ctx, name, o, devices, on_host));
    /* compaction writes what fits; a histogram's counts are its bins */
    if (o->count != a->count && !compacts && a->template_kind != VKDS__TEMPLATE_HISTOGRAM)
      return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: the output has %llu elements, the input %llu",
                        name, (unsigned long long)o->count, (unsigned long long)a->count);
    /* (a merge by a comparator, a compaction of a zip and reduce by key's zip keys write
     * records: zips, part by part) */
    bool records = (a->template_kind == VKDS__TEMPLATE_MERGE && a->elem == VKDS__ELEM_GLSL) ||
                   vkds__alg_moves_records(a) || (k == 0 && vkds__alg_zip_keys(a));
    const char *why = unwritable(o, 0, records);
    if (why) return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: the output is %s, which cannot be written", name, why);
    if (!vkds__type_is_number(o->type) && !(records && o->type == VKDS_TYPE_COMPOSITE))
      return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: the output's elements must be numeric", name);
  }
  if (vkds__elem_is_glsl(a->elem) && !a->glsl)
    return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: the operator (GLSL text) is NULL", name);
  if (!vkds__type_is_number(a->elem_type))
    return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: the result's type, %s, is not numeric", name,
                      vkds__type_name(a->elem_type));
  if (a->combine == VKDS__COMBINE_OP) {
    vkds_op_kind k = a->op.kind;
    if ((unsigned)k > VKDS_OP_GLSL || k == VKDS_OP_DEFAULT)
      return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: unknown operator kind %d", name, (int)k);
    if (k == VKDS_OP_GLSL && (!a->op.glsl || !a->op.identity))
      return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                        "%s: a VKDS_OP_GLSL operator needs both glsl and identity", name);
    if (k >= VKDS_OP_BIT_AND && k <= VKDS_OP_BIT_XOR && vkds__type_is_float(a->elem_type))
      return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: a bitwise operator on %s elements", name,
                        vkds__glsl_type(a->elem_type));
  }
  return check_overlap(ctx, a);
}

/* The results of a reduction (and a compaction's count) must have somewhere to go
 * (blocking and async forms). */
static vkds_result check_host_results(const vkds_context *ctx, const vkds__alg *a) {
  /* only reductions and counting scans (compaction, reduce by key) give the host a result */
  bool gives = a->template_kind == VKDS__TEMPLATE_REDUCE ||
               (a->template_kind == VKDS__TEMPLATE_SCAN && a->result == VKDS__RESULT_COUNT);
  if (!gives) return VKDS_SUCCESS;
  bool ok = a->result == VKDS__RESULT_LOCATION ? a->host_index != NULL : a->host_result != NULL;
  return ok ? VKDS_SUCCESS : vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: the result pointer is NULL", a->name);
}

static vkds_result check_features(const call *c) {
  const vkds__device *dev = c->res->dev;
  const char *name = dev->facts.props.properties.deviceName;
  if (c->gen.needs_float64 && !dev->enabled.float64)
    return vkds__fail(dev->ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS,
                      "%s: F64 elements need shaderFloat64, which device %u (%s) does not have enabled", c->a.name,
                      dev->index, name);
  /* vkds.glsl's device addresses are 64-bit integers: every algorithm kernel needs them */
  if (!dev->enabled.shader_int64 || !dev->enabled.buffer_device_address)
    return vkds__fail(dev->ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS,
                      "%s: algorithm kernels need shaderInt64 and bufferDeviceAddress (64-bit device addresses); "
                      "device %u (%s) does not have %s enabled", c->a.name, dev->index, name,
                      !dev->enabled.shader_int64 && !dev->enabled.buffer_device_address ? "either"
                      : !dev->enabled.shader_int64                                      ? "shaderInt64"
                                                                                        : "bufferDeviceAddress");
  return VKDS_SUCCESS;
}

/* ---- building, binding, recording ---- */

/* The code for the selected device (its kernel comes once the leaves are bound). */
static vkds_result prepare(call *c) {
  if (c->a.template_kind == VKDS__TEMPLATE_SCAN) VKDS_CHECK(vkds__scan_choose(c)); /* the path: part of the code */
  if (c->a.template_kind == VKDS__TEMPLATE_SORT) VKDS_CHECK(vkds__sort_choose(c));
  if (c->a.template_kind == VKDS__TEMPLATE_HISTOGRAM) VKDS_CHECK(vkds__histogram_choose(c));
  /* (2048 elements in shared memory: the merge sort's, and a merge's records) */
  if (c->a.template_kind == VKDS__TEMPLATE_MSORT ||
      (c->a.template_kind == VKDS__TEMPLATE_MERGE && c->a.inputs[0]->type == VKDS_TYPE_COMPOSITE))
    VKDS_CHECK(vkds__msort_check(c));
  VKDS_CHECK(vkds__gen_build(&c->gen, &c->a, c->res, false, 0));
  VKDS_CHECK(check_features(c));
  c->range64 = map_grid(c->a.template_kind) && c->a.count / 4 + (c->a.count % 4 != 0) > UINT32_MAX; /* (no wrap) */
  uint64_t *p = c->gen.args.p;
  p[VKDS__P_COUNT] = c->a.count;
  memcpy(&p[VKDS__P_VALUE], c->a.value, 8);
  c->groups = vkds__reduce_groups(c->res->dev, c->a.count);
  return VKDS_SUCCESS;
}

void vkds__call_place(call *c, uint32_t k, vkds_buffer *buf, uint64_t offset, uint64_t count) {
  const vkds__leaf *l = &c->gen.leaves[k];
  vkds__args *args = &c->gen.args;
  if (!l->bound) {
    args->p[l->param] = buf ? vkds_buffer_address(buf) + offset : 0;
    return;
  }
  /* a binding starts at a multiple of minStorageBufferOffsetAlignment; vkds buffers do
   * too (lib/memory/memory.c), so aligning the offset down stays in the buffer; the
   * elements (aligned to their size) then start `lead` bytes in, a whole number of words */
  uint64_t align = c->res->dev->facts.props.properties.limits.minStorageBufferOffsetAlignment;
  uint64_t lead = align ? offset % align : 0;
  args->bound[k] = (vkds_view){buf, offset - lead, lead + count * l->seq->elem_size};
  args->p[l->param] = lead / 4;
}

vkds_result vkds__call_bind(call *c) {
  for (uint32_t k = 0; k < c->gen.leaf_count; ++k) {
    vkds__leaf *l = &c->gen.leaves[k];
    bool first = l->seq == c->a.output, second = c->a.output2 && l->seq == c->a.output2;
    /* the call's own copy from here on: an asynchronous call's streamed outputs are
     * copied out after it returned, when the caller's vkds_seq structs may be gone
     * (they pointed there: found by a new-user probe) */
    c->leaf[k] = *l->seq;
    l->seq = &c->leaf[k];
    if (l->streamed) { /* stream.c moves it chunk by chunk */
      c->bound = k + 1;
      continue;
    }
    /* A compaction writes its outputs up to the count and leaves the rest as it was, so
     * a staged output went up whole and came back whole. Where the output is a sequence
     * with memory of its own (no view maps it elsewhere), only the prefix the call
     * wrote is copied back (written_prefixes), and nothing goes up: host copy_if of
     * 2^24 u32 moved 3 bytes a byte of input, now 1.5 at half kept. */
    vkds_access access = l->access;
    if (c->scan_result && c->a.result == VKDS__RESULT_COUNT && (first || second) && access == VKDS_ACCESS_READ_WRITE) {
      access = VKDS_ACCESS_WRITE;
      if (first) c->prefix_out1 |= 1u << k;
      else c->prefix_out2 |= 1u << k;
    }
    vkds_result r = vkds_seq_bind(c->res, &c->leaf[k], access, &c->bind[k]);
    if (r != VKDS_SUCCESS) return r;
    c->bound = k + 1;
    const vkds_view *v = &c->bind[k].view;
    vkds__call_place(c, k, v->buffer, v->offset, l->seq->count);
  }
  return VKDS_SUCCESS;
}

/* The kernel, once the leaves are bound: a bound leaf's code depends on where it starts
 * in its binding (codegen.c). Streamed leaves start their stream buffers; a chunk moves
 * the others by a multiple of 1024 elements, which keeps their alignment. */
static vkds_result find_kernel(call *c) {
  uint32_t aligned = 0;
  for (uint32_t k = 0; k < c->gen.leaf_count; ++k) {
    const vkds__leaf *l = &c->gen.leaves[k];
    if (l->bound && (l->streamed || c->gen.args.p[l->param] % 4 == 0)) aligned |= 1u << k;
  }
  vkds__gen_aligned(&c->gen, aligned);
  return vkds__alg_kernel(c->res->dev->ctx, &c->gen, &c->a, c->range64, &c->kernel);
}

/* A compaction's outputs bound for writing only (vkds__call_bind) are copied back up to
 * what the call wrote: the first output its count (capped by its length), the second a
 * partition's rejected elements or reduce_by_key's values. Once the work is done. */
static void written_prefixes(call *c) {
  if (!(c->prefix_out1 | c->prefix_out2)) return;
  uint64_t kept;
  vkds__buffer_invalidate_range(c->scan_result, 0, 8);
  memcpy(&kept, vkds_buffer_map(c->scan_result), 8);
  bool partition = c->a.elem != VKDS__ELEM_BY_KEY;
  for (uint32_t k = 0; k < c->bound; ++k) {
    vkds_seq_binding *b = &c->bind[k];
    if (!((c->prefix_out1 | c->prefix_out2) >> k & 1) || !b->staged) continue;
    uint64_t n = c->prefix_out2 >> k & 1 && partition ? c->a.count - kept : kept;
    if (n > b->seq->count) n = b->seq->count;
    if (n == 0) vkds__seq_binding_drop(b); /* nothing written, nothing to copy */
    else b->view.bytes = n * b->seq->elem_size;
  }
}

/* Undoes the bindings: with `write_back`, staged outputs are copied to their sequences;
 * without, temporaries are only freed (an error: nothing is written). */
static vkds_result unbind_leaves(call *c, bool write_back) {
  vkds_result first = VKDS_SUCCESS;
  for (uint32_t k = 0; k < c->bound; ++k) {
    vkds_result r = VKDS_SUCCESS;
    if (write_back) {
      r = vkds_seq_unbind(&c->bind[k]);
    } else {
      vkds__seq_binding_drop(&c->bind[k]);
    }
    if (first == VKDS_SUCCESS) first = r;
  }
  c->bound = 0;
  return first;
}

bool vkds__subgroup_ops(const vkds__device *dev, VkSubgroupFeatureFlags ops) {
  const VkPhysicalDeviceVulkan11Properties *p = &dev->facts.props11;
  return (p->subgroupSupportedStages & VK_SHADER_STAGE_COMPUTE_BIT) && (p->subgroupSupportedOperations & ops) == ops;
}

/* The reduction's passes over the elements of p[COUNT]: the first (G groups of
 * partials), and the second when G > 1. */
static vkds_result record_reduction(call *c, VkCommandBuffer cmd, uint64_t flags) {
  uint64_t *p = c->gen.args.p;
  uint32_t groups = vkds__reduce_groups(c->res->dev, p[VKDS__P_COUNT]);
  p[VKDS__P_GROUPS] = groups;
  p[VKDS__P_FLAGS] = flags;
  VKDS_CHECK(vkds__alg_dispatch(c, cmd, c->kernel,
                               &(vkds_launch_info){.global = {256ull * groups}, .args = &c->gen.args}));
  if (groups > 1) {
    vkds__cmd_barrier(c->res->dev, cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);
    p[VKDS__P_FLAGS] = flags | VKDS__FLAG_SECOND_PASS;
    VKDS_CHECK(vkds__alg_dispatch(c, cmd, c->kernel, &(vkds_launch_info){.global = {256}, .args = &c->gen.args}));
  }
  return VKDS_SUCCESS;
}

vkds_result vkds__call_record(call *c, VkCommandBuffer cmd, VkDeviceAddress result, VkDeviceAddress partials,
                              vkds__part part, uint64_t chunk) {
  const vkds__device *dev = c->res->dev;
  if (!c->queue_lead) vkds__cmd_lead_barrier(dev, cmd);
  uint64_t *p = c->gen.args.p;
  uint64_t init = c->a.has_value ? VKDS__FLAG_HAS_INIT : 0;
  if (c->a.template_kind == VKDS__TEMPLATE_SCAN) {
    VKDS_CHECK(vkds__scan_record(c, cmd, part, chunk));
  } else if (c->a.template_kind == VKDS__TEMPLATE_HISTOGRAM) {
    VKDS_CHECK(vkds__histogram_record(c, cmd));
  } else if (c->a.template_kind == VKDS__TEMPLATE_SORT) {
    VKDS_CHECK(vkds__sort_record(c, cmd));
  } else if (c->a.template_kind == VKDS__TEMPLATE_MSORT) {
    VKDS_CHECK(vkds__msort_record(c, cmd));
  } else if (c->a.template_kind == VKDS__TEMPLATE_MERGE) {
    VKDS_CHECK(vkds__merge_record(c, cmd));
  } else if (map_grid(c->a.template_kind)) {
    /* 4 elements a thread */
    uint64_t n = p[VKDS__P_COUNT];
    /* (rounded up without n + d - 1, which wraps near 2^64) */
    uint64_t threads = n / 4 + (n % 4 != 0);
    if (n)
      VKDS_CHECK(vkds__alg_dispatch(c, cmd, c->kernel, &(vkds_launch_info){.global = {threads}, .args = &c->gen.args}));
  } else if (part == VKDS__PART_WHOLE) {
    p[VKDS__P_RESULT] = result;
    p[VKDS__P_PARTIALS] = partials;
    VKDS_CHECK(record_reduction(c, cmd, init));
  } else {
    /* a chunk: its total goes to slot `chunk` of the totals (after the partials); the
     * last chunk then combines the totals, in chunk order, into the result */
    VkDeviceAddress totals = partials + 16ull * vkds__reduce_groups(c->res->dev, c->chunk_elems);
    p[VKDS__P_RESULT] = totals + 16 * chunk;
    p[VKDS__P_PARTIALS] = partials;
    VKDS_CHECK(record_reduction(c, cmd, VKDS__FLAG_TO_ACCUMULATOR));
    if (part == VKDS__PART_LAST_CHUNK) {
      vkds__cmd_barrier(dev, cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                        VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);
      p[VKDS__P_RESULT] = result;
      p[VKDS__P_PARTIALS] = totals;
      p[VKDS__P_GROUPS] = chunk + 1;
      p[VKDS__P_FLAGS] = init | VKDS__FLAG_SECOND_PASS;
      VKDS_CHECK(vkds__alg_dispatch(c, cmd, c->kernel, &(vkds_launch_info){.global = {256}, .args = &c->gen.args}));
    }
  }
  /* everything recorded before it, compute or transfer, before whatever comes next on
   * the queue, and the host */
  vkds__cmd_full_barrier(dev, cmd);
  return VKDS_SUCCESS;
}

/* The replay key of a call (vkds_task_info.replay_key): a hash of everything its
 * recording depends on (record_task: the kernel, the template and its flags, the
 * parameters, the scratch), so that a call identical to an earlier one submits that
 * recording again (a loop reducing the same buffer; NVIDIA's recording costs 2-3 us of
 * a 20 us round trip). Only for reductions and element-wise calls through device
 * addresses: leaves bound as descriptors (CPU devices) name buffers that may be
 * destroyed while the recording is kept; streamed calls record chunk by chunk; nor
 * calls whose arguments spill past the push constants. 0: none. */
static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h ^= h >> 31, h *= 0xbf58476d1ce4e5b9ull, h ^= h >> 29;
  return h;
}

static uint64_t replay_key(const call *c) {
  vkds__alg_template t = c->a.template_kind;
  if (c->streaming || (t != VKDS__TEMPLATE_REDUCE && t != VKDS__TEMPLATE_MAP)) return 0;
  /* arguments kept in a buffer of the call (vkds__alg_dispatch) go with it: a replay
   * would read the next call's there (a wrong count, found by a probe's reading) */
  if (vkds__kernel_spilled_bytes(c->kernel)) return 0;
  for (uint32_t k = 0; k < c->gen.leaf_count; ++k)
    if (c->gen.leaves[k].bound) return 0;
  uint64_t h = mix(0x766b6473ull, (uint64_t)(uintptr_t)c->kernel);
  h = mix(h, (uint64_t)t << 32 | (uint64_t)c->queue_lead << 2 | (uint64_t)c->a.has_value << 1 | (uint64_t)c->range64);
  h = mix(h, c->scratch ? vkds_buffer_address(c->scratch) : 0);
  for (uint32_t k = 0; k < VKDS__GEN_MAX_PARAMS; ++k) h = mix(h, c->gen.args.p[k]);
  return h ? h : 1;
}

static vkds_result record_task(void *user, const vkds_task *task, void **wait_object) {
  (void)wait_object;
  call *c = user;
  if (c->queue_lead) { /* (start: vkds's Vulkan backend, whose backend_data is the slot) */
    vkds__slot *s = task->backend_data;
    s->needs_lead = s->ends_full = true;
  }
  VkDeviceAddress base = c->scratch ? vkds_buffer_address(c->scratch) : 0;
  return vkds__call_record(c, task->cmd, base, base + VKDS__ALG_RESULT_BYTES, VKDS__PART_WHOLE, 0);
}

/* ---- finishing ---- */

/* Copies the reduction's result from the scratch buffer to the caller's pointers. */
static void read_results(const call *c) {
  const vkds__alg *a = &c->a;
  vkds__buffer_invalidate_range(c->scratch, 0, VKDS__ALG_RESULT_BYTES); /* (readback memory may not be coherent) */
  const unsigned char *r = vkds_buffer_map(c->scratch);
  uint32_t size = vkds_type_size(a->elem_type);
  switch (a->result) {
  case VKDS__RESULT_VALUE: memcpy(a->host_result, r, size); break;
  case VKDS__RESULT_COUNT: memcpy(a->host_result, r, 8); break;
  case VKDS__RESULT_BOOL: {
    uint32_t v;
    memcpy(&v, r, 4);
    *(bool *)a->host_result = v != 0;
    break;
  }
  case VKDS__RESULT_LOCATION:
    memcpy(a->host_index, r, 8);
    if (a->host_value && a->count) memcpy(a->host_value, r + 8, size);
    break;
  }
}

/* A call's state, zeroed: the context's kept one when there is one. Allocated and freed
 * every call, its ~6 KB (past the allocator's small-size caches) cost a blocking
 * reduction of 1,024 elements a sixth of its host instructions (callgrind, lavapipe). */
static call *call_alloc(vkds_context *ctx) {
  pthread_mutex_lock(&ctx->alg_lock);
  call *c = ctx->alg_spare_call;
  ctx->alg_spare_call = NULL;
  pthread_mutex_unlock(&ctx->alg_lock);
  if (!c) return vkds__alloc(ctx, sizeof *c);
  memset(c, 0, sizeof *c);
  return c;
}

/* The recording form's answer to a kernel whose arguments are kept in a buffer, for an
 * algorithm whose dispatches args_in_scratch does not count. */
static vkds_result args_refused(const call *c, const vkds_kernel *k) {
  return vkds__fail(c->res->dev->ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS,
                    "%s: its launch arguments (%llu bytes: the sequences' memory ranges and views), with vkds's "
                    "launch header, are more than the device's %u bytes of push constants, and the recording form "
                    "of this algorithm has nowhere to keep them; use the blocking or _async form",
                    c->a.name, (unsigned long long)vkds__kernel_spilled_bytes(k),
                    c->res->dev->facts.props.properties.limits.maxPushConstantsSize);
}

/* the first buffer's bytes (a sort of 64-bit keys records 26 dispatches, a merge sort 2
 * a pass); each next one twice the last (a streamed call records some for each chunk) */
#define ARG_BUFFER_BYTES 65536u

vkds_result vkds__alg_dispatch(call *c, VkCommandBuffer cmd, vkds_kernel *k, const vkds_launch_info *li) {
  uint64_t bytes = (vkds__kernel_spilled_bytes(k) + 15) & ~15ull;
  if (!bytes) return vkds_cmd_dispatch(cmd, c->res, k, li);
  vkds_context *ctx = c->res->dev->ctx;
  if (!c->args_kept) { /* the recording form: in its scratch (args_in_scratch) */
    if (!c->args_scratch) return args_refused(c, k);
    if (c->args_scratch_at + bytes > c->args_scratch_end) /* (args_in_scratch counts every dispatch) */
      return vkds__fail(ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS, "%s: more dispatches with arguments in the scratch "
                        "than were counted", c->a.name);
    vkds_result r = vkds__cmd_dispatch_spilled_inline(cmd, c->res, k, li, vkds_buffer_vk(c->args_scratch),
                                                      vkds_buffer_offset(c->args_scratch) + c->args_scratch_at,
                                                      vkds_buffer_address(c->args_scratch) + c->args_scratch_at);
    c->args_scratch_at += bytes;
    return r;
  }
  struct vkds__call_args *l = &c->args[c->args_lane];
  /* the next buffer made (a lane started over fills those it made again first) */
  while (l->used + bytes > (l->made ? vkds_buffer_size(l->buf[l->at]) : 0)) {
    if (l->made && l->at + 1 < l->made) {
      ++l->at, l->used = 0;
      continue;
    }
    if (l->made == VKDS__CALL_ARG_BUFFERS)
      return vkds__fail(ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS, "%s: more dispatches with arguments kept in buffers "
                        "than one call holds", c->a.name);
    uint64_t size = (uint64_t)ARG_BUFFER_BYTES << l->made;
    if (size < bytes) size = bytes;
    VKDS_CHECK(vkds_buffer_create(c->res, &(vkds_buffer_info){.size = size, .memory = VKDS_MEMORY_MAPPED},
                                  &l->buf[l->made]));
    l->at = l->made++;
    l->used = 0;
  }
  vkds_buffer *b = l->buf[l->at];
  vkds_result r = vkds__cmd_dispatch_spilled(cmd, c->res, k, li, (char *)vkds_buffer_map(b) + l->used,
                                             vkds_buffer_address(b) + l->used);
  l->used += bytes;
  return r;
}

static void call_free(call *c) {
  for (uint32_t s = 0; s < VKDS__STREAM_SLOTS; ++s)
    for (uint32_t i = 0; i < c->args[s].made; ++i) vkds_buffer_destroy(c->args[s].buf[i]);
  /* a sort's scratch holds copies of its data: not kept for reuse */
  if (sorts_in_place(c->a.template_kind)) vkds_buffer_destroy(c->scratch);
  else vkds__spare_put(c->scratch, VKDS__SPARES_CALL);
  vkds__spare_put(c->scan_result, VKDS__SPARES_CALL);
  vkds__stream_free(c);
  vkds__gen_free(&c->gen);
  vkds_context *ctx = c->res->dev->ctx;
  pthread_mutex_lock(&ctx->alg_lock);
  if (!ctx->alg_spare_call) ctx->alg_spare_call = c, c = NULL;
  pthread_mutex_unlock(&ctx->alg_lock);
  vkds__free(ctx, c);
}

/* The finishing step: outputs written back and results read when the work is done;
 * temporaries freed either way. */
static vkds_result finish(void *user, bool done) {
  call *c = user;
  vkds_result r = c->streaming ? vkds__stream_finish(c, done) : VKDS_SUCCESS;
  /* a histogram whose boundaries were not sorted wrote nothing: nor is anything copied back */
  if (done && r == VKDS_SUCCESS && c->a.template_kind == VKDS__TEMPLATE_HISTOGRAM) r = vkds__histogram_status(c);
  if (done && r == VKDS_SUCCESS) written_prefixes(c);
  vkds_result u = unbind_leaves(c, done && r == VKDS_SUCCESS);
  if (r == VKDS_SUCCESS) r = u;
  if (done && r == VKDS_SUCCESS && c->a.template_kind == VKDS__TEMPLATE_REDUCE) read_results(c);
  if (done && r == VKDS_SUCCESS && c->scan_result && c->a.result == VKDS__RESULT_COUNT) {
    vkds__buffer_invalidate_range(c->scan_result, 0, 8);
    memcpy(c->a.host_result, vkds_buffer_map(c->scan_result), 8);
  }
  call_free(c);
  return r;
}

/* ---- the forms ---- */

/* Where a reduction's result (and partials) go. The host reads the result once the
 * work is done: from host-cached memory that is a read of the host's own memory, while
 * mapped device memory (a discrete GPU's BAR) is read across the bus: 2.0-2.5 us of a
 * 24 us round trip on the H100 (bench/RESULTS.md). The partials of a reduction of many
 * groups share the buffer and are read by the device's second pass, so those stay in
 * device memory (their host read is nothing next to their size). */
static vkds_memory_kind result_memory(const call *c) {
  return c->groups == 1 && !c->streaming ? VKDS_MEMORY_READBACK : VKDS_MEMORY_MAPPED;
}

/* Everything up to the submission; on error nothing is left behind. */
static vkds_result start(vkds_policy *p, const vkds__alg *a, vkds_submission **sub, call **out) {
  *out = NULL;
  vkds_context *ctx = context_of_policy(p);
  if (!p || !a) return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: the policy is NULL", a->name);
  if (!ctx || p->backend->kind != &vkds_resource_kind_vulkan)
    return vkds__fail(ctx, ctx ? VKDS_ERROR_INVALID_ARGUMENT : VKDS_ERROR_NOT_INITIALIZED, VK_SUCCESS,
                      "%s: the policy must be initialized, over vkds resources", a->name);
  uint32_t devices = 0;
  bool on_host = false;
  VKDS_CHECK(check(ctx, a, &devices, &on_host));
  VKDS_CHECK(check_host_results(ctx, a));

  /* hints: earliest finish counts moving the bytes unless they are where it picks.
   * Where some sequences are on the host and some on devices, the hints name those
   * devices and count the bytes of the sequences on them only: the host's move to
   * whichever device runs the call, the same cost everywhere. (They said "host only"
   * as soon as any sequence was on the host: a dev-1 buffer transformed into a host
   * array ran on whichever device was idlest, the buffer copied through the host; a
   * new-user probe.) */
  const vkds_seq *seqs[VKDS__ALG_MAX_INPUTS + 2];
  uint32_t seq_count = 0;
  for (uint32_t k = 0; k < a->input_count; ++k) seqs[seq_count++] = a->inputs[k];
  if (a->output) seqs[seq_count++] = a->output;
  if (a->output2) seqs[seq_count++] = a->output2;
  uint64_t bytes = 0, device_bytes = 0;
  for (uint32_t k = 0; k < seq_count; ++k) {
    uint64_t b = seqs[k]->count * seqs[k]->elem_size;
    uint32_t on = 0;
    bool h = false;
    bytes += b;
    if (devices && on_host && vkds__seq_check_context(ctx, a->name, seqs[k], &on, &h) == VKDS_SUCCESS && on)
      device_bytes += b;
  }
  if (devices && on_host) bytes = device_bytes;
  uint64_t key = ((uint64_t)a->template_kind << 56 | (uint64_t)a->elem << 48 | (uint64_t)a->elem_type << 40) ^
                 (uint64_t)(a->count ? 64 - __builtin_clzll(a->count) : 0);
  vkds_task_info hints = {.key = key, .bytes = bytes, .data_devices = devices, .label = a->name};
  vkds_selection *sel; /* (a policy at capacity is waited out, as by vkds_submit) */
  VKDS_CHECK(vkds__select_waiting(p, &hints, &sel, a->name));

  vkds_resource *res = vkds_selection_resource(sel);
  call *c = call_alloc(res->dev->ctx); /* freed by call_free, with the same context */
  if (c) c->args_kept = true;
  if (!c) {
    vkds_selection_release(sel);
    return vkds__fail(ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "%s", a->name);
  }
  c->a = *a;
  c->res = res;
  vkds_result r = prepare(c);
  if (r == VKDS_SUCCESS && !reads_at_random(a->template_kind)) c->streaming = vkds__stream_plan(c);
  if (r == VKDS_SUCCESS && !c->streaming && a->template_kind == VKDS__TEMPLATE_REDUCE &&
      VKDS__ALG_RESULT_BYTES + 16ull * c->groups > VKDS__ALG_SCRATCH_BYTES)
    r = vkds__fail(ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS, "%s: %llu elements are more than one reduction takes",
                   a->name, (unsigned long long)a->count);
  if (r == VKDS_SUCCESS && a->template_kind == VKDS__TEMPLATE_REDUCE)
    r = vkds__spare_get(c->res, result_memory(c), VKDS__ALG_SCRATCH_BYTES, &c->scratch);
  if (r == VKDS_SUCCESS && a->template_kind == VKDS__TEMPLATE_SCAN) {
    /* device memory, in powers of two so that spares are found again */
    uint64_t need = vkds__scan_scratch_bytes(c), size = 4096;
    while (size < need) size *= 2;
    r = vkds__spare_get(c->res, VKDS_MEMORY_DEVICE, size, &c->scratch);
    if (r == VKDS_SUCCESS) c->scan_scratch = (vkds_view){c->scratch, 0, size};
    if (r == VKDS_SUCCESS && a->result == VKDS__RESULT_COUNT) /* the count, for the host */
      r = vkds__spare_get(c->res, VKDS_MEMORY_READBACK, VKDS__ALG_SCRATCH_BYTES, &c->scan_result);
    if (r == VKDS_SUCCESS && c->scan_result) c->scan_result_view = (vkds_view){c->scan_result, 0, 8};
  }
  if (r == VKDS_SUCCESS && a->template_kind == VKDS__TEMPLATE_HISTOGRAM) {
    /* the status word and the counters (device memory, a power of two for reuse), and
     * with boundaries a mapped word for their order */
    uint64_t need = vkds__histogram_scratch_bytes(c), size = 4096;
    while (size < need) size *= 2;
    r = vkds__spare_get(c->res, VKDS_MEMORY_DEVICE, size, &c->scratch);
    if (r == VKDS_SUCCESS) c->scan_scratch = (vkds_view){c->scratch, 0, size};
    if (r == VKDS_SUCCESS && a->input_count == 2)
      r = vkds__spare_get(c->res, VKDS_MEMORY_READBACK, VKDS__ALG_SCRATCH_BYTES, &c->scan_result);
    if (r == VKDS_SUCCESS && c->scan_result) c->scan_result_view = (vkds_view){c->scan_result, 0, 4};
  }
  if (r == VKDS_SUCCESS && a->template_kind == VKDS__TEMPLATE_MERGE && vkds__merge_scratch_bytes(a->count)) {
    /* the partition's (device memory, a power of two for reuse) */
    uint64_t need = vkds__merge_scratch_bytes(a->count), size = 4096;
    while (size < need) size *= 2;
    r = vkds__spare_get(c->res, VKDS_MEMORY_DEVICE, size, &c->scratch);
    if (r == VKDS_SUCCESS) c->scan_scratch = (vkds_view){c->scratch, 0, size};
  }
  if (r == VKDS_SUCCESS && sorts_in_place(a->template_kind) && a->count) {
    uint64_t need = a->template_kind == VKDS__TEMPLATE_SORT ? vkds__sort_scratch_bytes(c) : vkds__msort_scratch_bytes(c);
    r = vkds_buffer_create(c->res, &(vkds_buffer_info){.size = need, .memory = VKDS_MEMORY_DEVICE}, &c->scratch);
    if (r == VKDS_SUCCESS) c->scan_scratch = (vkds_view){c->scratch, 0, need};
  }
  if (r == VKDS_SUCCESS) r = vkds__call_bind(c);
  if (r == VKDS_SUCCESS) r = find_kernel(c);
  /* the leading barrier is left to the queue where vkds's own Vulkan backend records
   * the task (its slots carry the flag) and the queue can put it there */
  c->queue_lead = r == VKDS_SUCCESS && !c->streaming && vkds__queue_takes_lead(p->backend, res);
  vkds_task_info task = hints;
  task.fn = record_task;
  task.user = c;
  task.replay_key = r == VKDS_SUCCESS ? replay_key(c) : 0;
  if (r == VKDS_SUCCESS)
    r = vkds__policy_submitted(p, sel, c->streaming ? vkds__stream_run(p, c, sel, &task, sub)
                                                    : vkds__submit_waiting(p, sel, &task, sub, a->name));
  vkds_selection_release(sel); /* unsubmitted: its place goes back to the policy */
  if (r != VKDS_SUCCESS) {
    unbind_leaves(c, false);
    call_free(c);
    return r;
  }
  *out = c;
  return VKDS_SUCCESS;
}

vkds_result vkds__alg_run(vkds_policy *p, const vkds__alg *a) {
  vkds_submission *sub;
  call *c;
  const char *outer = vkds__call_begin(a->name);
  vkds_result r = start(p, a, &sub, &c);
  if (r == VKDS_SUCCESS) {
    r = vkds_submission_wait(sub);
    vkds_submission_release(sub);
    vkds_result f = finish(c, r == VKDS_SUCCESS);
    if (r == VKDS_SUCCESS) r = f;
  }
  vkds__call_end(outer);
  return r;
}

vkds_result vkds__alg_run_async(vkds_policy *p, const vkds__alg *a, vkds_submission **sub) {
  if (!sub)
    return vkds__fail(vkds__alg_policy_ctx(p), VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "%s: the submission pointer is NULL", a->name);
  *sub = NULL;
  call *c;
  const char *outer = vkds__call_begin(a->name);
  vkds_result r = start(p, a, sub, &c);
  if (r == VKDS_SUCCESS) vkds__submission_set_finish(*sub, finish, c);
  vkds__call_end(outer);
  return r;
}

/* The bytes a view says it has (bytes 0: to its buffer's end); 0 without a buffer or
 * from an offset past its end. Whether they lie within the buffer is the caller's check
 * (v.offset + avail <= size). */
static uint64_t view_avail(vkds_view v, uint64_t size) {
  return v.buffer && v.offset <= size ? (v.bytes ? v.bytes : size - v.offset) : 0;
}

/* The bytes of a view that lie within its buffer: view_avail's, or 0 for a view that
 * runs past the buffer's end. */
static uint64_t view_holds(vkds_view v) {
  uint64_t size = v.buffer ? vkds_buffer_size(v.buffer) : 0, avail = view_avail(v, size);
  return v.offset + avail <= size ? avail : 0;
}

/* A view's device address, checked to be on `res`'s device and to hold `bytes`. */
static vkds_result device_view(const vkds_context *ctx, const char *name, const char *what, const vkds_resource *res,
                               vkds_view v, uint64_t bytes, VkDeviceAddress *out) {
  uint64_t size = v.buffer ? vkds_buffer_size(v.buffer) : 0;
  uint64_t avail = view_avail(v, size);
  if (bytes == 0) {
    *out = v.buffer ? vkds_buffer_address(v.buffer) + v.offset : 0;
    return VKDS_SUCCESS;
  }
  /* (an empty view said "must be a device-addressed buffer" and not what the call needs:
   * a user left without the size to allocate; a probe) */
  if (!v.buffer)
    return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "%s: %s has no buffer, and the call needs %llu bytes of it", name, what,
                      (unsigned long long)bytes);
  if (!vkds_buffer_is_on(v.buffer, res) || !vkds_buffer_address(v.buffer)) {
    vkds_result code = v.buffer->dev->ctx != ctx ? VKDS_ERROR_WRONG_CONTEXT
                       : v.buffer->kind != VKDS_MEMORY_HOST && v.buffer->dev != res->dev ? VKDS_ERROR_WRONG_DEVICE
                                                                                         : VKDS_ERROR_INVALID_ARGUMENT;
    return vkds__fail(ctx, code, VK_SUCCESS, "%s: %s must be a device-addressed buffer of the command buffer's device",
                      name, what);
  }
  if (avail < bytes || v.offset + avail > size)
    return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: %s holds %llu bytes, %llu are needed", name,
                      what, (unsigned long long)avail, (unsigned long long)bytes);
  *out = vkds_buffer_address(v.buffer) + v.offset;
  return VKDS_SUCCESS;
}

/* The recording form's scratch view: on `res`'s device, holding `bytes`, 16-byte aligned
 * (every family's partials and tile states are). `query` names the function that gives
 * the size, for the message of an empty or short view. */
static vkds_result scratch_view(const vkds_context *ctx, const char *name, const vkds_resource *res, vkds_view v,
                                uint64_t bytes, const char *query, VkDeviceAddress *out) {
  uint64_t size = v.buffer ? vkds_buffer_size(v.buffer) : 0;
  if (bytes && (!v.buffer || view_avail(v, size) < bytes))
    return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "%s: the scratch view holds %llu bytes, %llu are needed (%s gives the size)", name,
                      (unsigned long long)view_holds(v), (unsigned long long)bytes, query);
  VKDS_CHECK(device_view(ctx, name, "the scratch view", res, v, bytes, out));
  if (bytes && *out % 16)
    return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: the scratch view must start 16-byte aligned",
                      name);
  return VKDS_SUCCESS;
}

/* The recording form's result and scratch views (the bytes the call uses of each) apart
 * from each other and from every sequence of the call: neither was checked, and a
 * count written over the output, or a scan's tile states over its input, gave wrong
 * answers with success (a probe). */
static vkds_result views_apart(const vkds_context *ctx, const call *c, vkds_view result, uint64_t result_need,
                               vkds_view scratch, uint64_t scratch_need) {
  span rv = {0}, sv = {0};
  bool has_result = view_span(result, result_need, &rv), has_scratch = view_span(scratch, scratch_need, &sv);
  if (has_result && has_scratch && meet(&rv, 1, &sv, 1))
    return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: the result view and the scratch view overlap",
                      c->a.name);
  for (uint32_t k = 0; k < c->gen.leaf_count; ++k) {
    span leaf;
    if (!span_of(c->gen.leaves[k].seq, &leaf)) continue;
    const char *what = has_result && meet(&rv, 1, &leaf, 1)    ? "result"
                       : has_scratch && meet(&sv, 1, &leaf, 1) ? "scratch"
                                                               : NULL;
    if (what)
      return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                        "%s: the %s view overlaps a sequence the call reads or writes", c->a.name, what);
  }
  return VKDS_SUCCESS;
}

static uint64_t result_bytes(const vkds__alg *a) {
  switch (a->result) {
  case VKDS__RESULT_COUNT: return 8;
  case VKDS__RESULT_BOOL: return 4;
  case VKDS__RESULT_LOCATION: return 16;
  default: return vkds_type_size(a->elem_type);
  }
}

/* The code for a sequence the recording form cannot take because it is not passed
 * directly to `res`: WRONG_DEVICE when its data lives on another device (as the form's
 * own views, launches and transfers say), else INVALID_ARGUMENT (host data, a user type
 * that stages). */
static vkds_result not_direct_code(const vkds_context *ctx, const char *name, const vkds_seq *s,
                                   const vkds_resource *res) {
  uint32_t devices = 0;
  bool on_host = false;
  if (vkds__seq_check_context(ctx, name, s, &devices, &on_host) != VKDS_SUCCESS) return VKDS_ERROR_WRONG_CONTEXT;
  return devices & ~(1u << (res->dev->index & 31)) ? VKDS_ERROR_WRONG_DEVICE : VKDS_ERROR_INVALID_ARGUMENT;
}

/* The recording form's place for launch arguments that outgrow the push constants (a
 * merge of records of 3 or 4 parts on lavapipe's 128 bytes, a zip of 16 parts): regions
 * of the vkds_cmd's scratch after the `used` bytes the algorithm takes, one a dispatch,
 * which vkds__alg_dispatch fills with vkCmdUpdateBuffer, so they live in the
 * application's command buffer and its scratch, both the application's to keep until
 * the work is done (they were refused: a probe; scans, histograms and sorts refused them
 * until session 41). Room for the most dispatches the family records (vkds__args_room:
 * the families' scratch queries include it). */
static uint32_t recorded_dispatches(const vkds__alg *a) {
  switch (a->template_kind) {
  case VKDS__TEMPLATE_MAP:
  case VKDS__TEMPLATE_SEARCH: return 1;
  case VKDS__TEMPLATE_REDUCE: return VKDS__REDUCE_DISPATCHES;
  case VKDS__TEMPLATE_MERGE: return 2; /* the partition, the merge */
  case VKDS__TEMPLATE_SCAN: return VKDS__SCAN_DISPATCHES;
  case VKDS__TEMPLATE_HISTOGRAM: return VKDS__HISTOGRAM_DISPATCHES;
  case VKDS__TEMPLATE_SORT: return vkds__sort_dispatches(a->inputs[0]->type);
  case VKDS__TEMPLATE_MSORT: return vkds__msort_dispatches(a->count);
  }
  return 0;
}

/* The scratch query that sizes a recorded call's scratch, as its messages name it. */
static const char *scratch_query(const vkds__alg *a) {
  switch (a->template_kind) {
  case VKDS__TEMPLATE_SORT: return "vkds_sort_scratch_bytes, or vkds_argsort_scratch_bytes,";
  case VKDS__TEMPLATE_MSORT: return "vkds_merge_sort_scratch_bytes";
  case VKDS__TEMPLATE_HISTOGRAM: return "vkds_histogram_scratch_bytes";
  case VKDS__TEMPLATE_REDUCE: return "vkds_reduce_scratch_bytes";
  default: return "vkds_algorithm_scratch_bytes";
  }
}

static vkds_result args_in_scratch(call *c, const vkds_cmd *cmd, uint64_t used, vkds_view result,
                                   uint64_t result_need) {
  uint32_t dispatches = recorded_dispatches(&c->a);
  if (!dispatches) return args_refused(c, c->kernel);
  vkds_context *ctx = c->res->dev->ctx;
  uint64_t bytes = dispatches * ((vkds__kernel_spilled_bytes(c->kernel) + 15) & ~15ull);
  uint64_t at = (used + 15) & ~15ull, need = at + bytes;
  vkds_view v = cmd->scratch;
  uint64_t holds = view_holds(v);
  if (holds < need)
    return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "%s: its launch arguments (%llu bytes), with vkds's launch header, are more than the device's "
                      "%u bytes of push constants; the recording form then keeps them in the vkds_cmd's scratch, which "
                      "must hold %llu bytes (it holds %llu; %s gives enough)",
                      c->a.name, (unsigned long long)vkds__kernel_spilled_bytes(c->kernel),
                      c->res->dev->facts.props.properties.limits.maxPushConstantsSize, (unsigned long long)need,
                      (unsigned long long)holds, scratch_query(&c->a));
  VkDeviceAddress unused;
  VKDS_CHECK(scratch_view(ctx, c->a.name, c->res, v, need, scratch_query(&c->a), &unused));
  VKDS_CHECK(views_apart(ctx, c, result, result_need, v, need));
  c->args_scratch = v.buffer;
  c->args_scratch_at = v.offset + at;
  c->args_scratch_end = v.offset + need;
  return VKDS_SUCCESS;
}

vkds_result vkds__alg_record(const vkds_cmd *cmd, const vkds__alg *a, vkds_view result) {
  if (!cmd || !cmd->cmd || !cmd->resource)
    return vkds__fail(vkds__alg_cmd_ctx(cmd), VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "%s: the vkds_cmd, its cmd and resource are required", a->name);
  vkds_resource *res = cmd->resource;
  vkds_context *ctx = res->dev->ctx;
  uint32_t devices = 0;
  bool on_host = false;
  VKDS_CHECK(check(ctx, a, &devices, &on_host));
  const vkds_seq *all[VKDS__ALG_MAX_INPUTS + 2];
  uint32_t n = 0;
  for (uint32_t k = 0; k < a->input_count; ++k) all[n++] = a->inputs[k];
  if (a->output) all[n++] = a->output;
  if (a->output2) all[n++] = a->output2;
  for (uint32_t k = 0; k < n; ++k)
    if (all[k]->count && !vkds_seq_is_passed_directly(all[k], res))
      return vkds__fail(ctx, not_direct_code(ctx, a->name, all[k], res), VK_SUCCESS,
                        "%s: a %s sequence is not passed directly to this device, and the recording form cannot stage "
                        "(use the blocking or _async form, or a buffer of this device)", a->name, all[k]->ops->name);
  call c = {.a = *a, .res = res};
  vkds_result r = prepare(&c);
  VkDeviceAddress result_at = 0, scratch_at = 0;
  uint64_t result_need = 0, scratch_need = 0; /* the bytes of each view the call uses */
  /* the scratch the family uses itself; the room for launch arguments that outgrow the
   * push constants follows it (args_in_scratch), and the scratch must hold both, as the
   * family's query says, whether they do or not */
  uint64_t own = 0, room = vkds__args_room(recorded_dispatches(a));
  bool family_scratch = a->template_kind == VKDS__TEMPLATE_SCAN || sorts_in_place(a->template_kind);
  if (r == VKDS_SUCCESS && family_scratch && a->count) {
    own = a->template_kind == VKDS__TEMPLATE_SORT    ? vkds__sort_scratch_bytes(&c)
          : a->template_kind == VKDS__TEMPLATE_MSORT ? vkds__msort_scratch_bytes(&c)
                                                     : vkds__scan_scratch_bytes(&c);
    r = scratch_view(ctx, a->name, res, cmd->scratch, own + room, scratch_query(a), &scratch_at);
    c.scan_scratch = cmd->scratch;
    scratch_need = own + room;
  }
  if (r == VKDS_SUCCESS && a->template_kind == VKDS__TEMPLATE_SCAN && a->result == VKDS__RESULT_COUNT) {
    VkDeviceAddress at;
    r = device_view(ctx, a->name, "the count's view", res, result, 8, &at);
    if (r == VKDS_SUCCESS && at % 8)
      r = vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: the count's view must be 8-byte aligned", a->name);
    c.scan_result_view = result;
    result_need = 8;
  }
  if (r == VKDS_SUCCESS && a->template_kind == VKDS__TEMPLATE_HISTOGRAM) {
    /* the scratch (see vkds_histogram_scratch_bytes), and the status view when given */
    own = vkds__histogram_scratch_bytes(&c);
    scratch_need = own + room;
    r = scratch_view(ctx, a->name, res, cmd->scratch, scratch_need, scratch_query(a), &scratch_at);
    c.scan_scratch = cmd->scratch;
    VkDeviceAddress at = 0;
    if (r == VKDS_SUCCESS && result.buffer) r = device_view(ctx, a->name, "the status view", res, result, 4, &at);
    if (r == VKDS_SUCCESS && at % 4)
      r = vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: the status view must be 4-byte aligned", a->name);
    c.scan_result_view = result;
    result_need = result.buffer ? 4 : 0;
  }
  if (r == VKDS_SUCCESS && a->template_kind == VKDS__TEMPLATE_REDUCE) {
    /* the result at its widest store's alignment (an index and a value: 8), the scratch
     * (partials of up to 16 bytes) 16-byte aligned, as the other families check theirs
     * (these took any offset: found by a new-user probe) */
    uint64_t align = a->result == VKDS__RESULT_LOCATION ? 8 : result_bytes(a);
    r = device_view(ctx, a->name, "the result view", res, result, result_bytes(a), &result_at);
    if (r == VKDS_SUCCESS && result_at % align)
      r = vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: the result view must be %llu-byte aligned",
                     a->name, (unsigned long long)align);
    /* (its own need: it demanded vkds_algorithm_scratch_bytes, an argsort's ~24 bytes an
     * element, where it uses 16 bytes a group) */
    own = vkds__reduce_scratch_own(res, a->count);
    result_need = result_bytes(a), scratch_need = own + room;
    if (r == VKDS_SUCCESS) r = scratch_view(ctx, a->name, res, cmd->scratch, scratch_need, scratch_query(a), &scratch_at);
  }
  if (r == VKDS_SUCCESS && a->template_kind == VKDS__TEMPLATE_MERGE && vkds__merge_scratch_bytes(a->count)) {
    /* optional: a scratch that holds the partition gets one (it must then not overlap
     * the call's sequences); without, or one too small or elsewhere, the work groups
     * search for their ranges themselves */
    vkds_view v = cmd->scratch;
    uint64_t need = vkds__merge_scratch_bytes(a->count);
    VkDeviceAddress at = v.buffer ? vkds_buffer_address(v.buffer) : 0;
    if (view_holds(v) >= need && vkds_buffer_is_on(v.buffer, res) && at && (at + v.offset) % 8 == 0)
      c.scan_scratch = v, scratch_need = own = need;
  }
  /* every leaf passed directly, a user type's parts too (only the top sequences were
   * checked: a part staged for the recording was freed before the application
   * submitted, and a recorded reduce read another call's data; a probe) */
  for (uint32_t k = 0; r == VKDS_SUCCESS && k < c.gen.leaf_count; ++k) {
    const vkds_seq *leaf = c.gen.leaves[k].seq;
    if (leaf->count && !vkds_seq_is_passed_directly(leaf, res))
      r = vkds__fail(ctx, not_direct_code(ctx, a->name, leaf, res), VK_SUCCESS,
                     "%s: a part of a sequence (a %s sequence) is not passed directly to this device, and the recording "
                     "form cannot stage it (use the blocking or _async form)", a->name, leaf->ops->name);
  }
  if (r == VKDS_SUCCESS) r = views_apart(ctx, &c, result, result_need, cmd->scratch, scratch_need);
  if (r == VKDS_SUCCESS) r = vkds__call_bind(&c); /* all direct: no copies */
  /* ... but a user type that says it is passed directly and has no device code is read
   * through its host reads into a temporary, which goes back to the pool when this
   * returns: the recorded kernel read freed memory (a probe: a recorded reduce summed
   * another call's data) */
  for (uint32_t k = 0; r == VKDS_SUCCESS && k < c.bound; ++k)
    if (c.bind[k].staged)
      r = vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                     "%s: a %s sequence has no device code for this device, and the recording form cannot stage it "
                     "(give its type a device_code slot, or use the blocking or _async form)",
                     a->name, c.leaf[k].ops->name ? c.leaf[k].ops->name : "user");
  if (r == VKDS_SUCCESS) r = find_kernel(&c);
  /* (placed, or refused, before anything is recorded: a sort records a fill before its
   * first dispatch) */
  if (r == VKDS_SUCCESS && vkds__kernel_spilled_bytes(c.kernel))
    r = args_in_scratch(&c, cmd, own, result, result_need);
  if (r == VKDS_SUCCESS)
    r = vkds__call_record(&c, cmd->cmd, result_at, scratch_at + VKDS__ALG_RESULT_BYTES, VKDS__PART_WHOLE, 0);
  unbind_leaves(&c, false);
  vkds__gen_free(&c.gen);
  return r;
}
