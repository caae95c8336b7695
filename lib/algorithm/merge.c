/* lib/algorithm/merge.c: the merge of two sequences sorted in the sorts' order or by a
 * comparator (vkds/algorithm.h, "merging"): a description (template MERGE,
 * shaders/algorithm/merge.glsl) that lib/algorithm/frame.c runs in the three forms, both
 * inputs read at random (staged whole when they are not passed directly), and its
 * recording: work groups of 2048 outputs, each finding its range in both inputs itself
 * or, for large merges, from a partition dispatch before them. */
#include "algorithm_internal.h"

#include <string.h>

enum { MERGE_OUT = 2048 /* outputs a work group (merge_group.glsl) */ };
#define MERGE_PARTITION 1u /* P(4): the partition dispatch (merge.glsl) */

static uint64_t merge_groups(uint64_t n) { return n / MERGE_OUT + (n % MERGE_OUT != 0); }

/* Whether a merge of n outputs finds its groups' ranges by a partition dispatch first (a
 * thread a group, binary searches whose latencies hide each other) instead of each group
 * searching for both its ends (k-ary by subgroup ballots: log_16 rounds of memory
 * latency that the group waits out, holding its place on the SM). Measured on an H200
 * (bench/RESULTS.md, 2026-11-28, session 38), u32, GPU us, group / partition: 2^20
 * 14.8 / 22.8, 2^21 23.2 / 28.2, 2^22 39.5 / 36.7, 2^24 140.0 / 85.6, 2^28 2,346 /
 * 1,089. VKDS_MERGE_SEARCH=group|partition forces one (a measuring aid). A subgroup
 * finding two groups' starts by the groups' k-ary ballot search, instead of a thread
 * one, was slower (2^28: 1,248 against 1,047 us; session 39). */
#define MERGE_PARTITION_FROM (1ull << 22)
static bool partitions(uint64_t n) {
  const char *v = vkds__getenv("VKDS_MERGE_SEARCH");
  if (v && strcmp(v, "group") == 0) return false;
  if (v && strcmp(v, "partition") == 0) return n > 0;
  return n >= MERGE_PARTITION_FROM;
}

uint64_t vkds__merge_scratch_bytes(uint64_t n) { return partitions(n) ? 8 * (merge_groups(n) + 1) : 0; }

uint64_t vkds_merge_scratch_bytes(const vkds_resource *res, uint64_t count) {
  if (!res) return 0;
  if (count > VKDS__ALG_MAX_SCRATCH_COUNT) return UINT64_MAX; /* (wrapped) */
  return vkds__merge_scratch_bytes(count);
}

vkds_result vkds__merge_record(vkds__call *c, VkCommandBuffer cmd) {
  uint64_t *p = c->gen.args.p, n = p[VKDS__P_COUNT];
  if (!n) return VKDS_SUCCESS;
  const vkds_view *s = &c->scan_scratch;
  bool partition = s->buffer && vkds__merge_scratch_bytes(n); /* (its size checked by the frame) */
  p[VKDS__P_RESULT] = partition ? vkds_buffer_address(s->buffer) + s->offset : 0;
  if (partition) {
    p[VKDS__P_FLAGS] = MERGE_PARTITION;
    VKDS_CHECK(vkds__alg_dispatch(c, cmd, c->kernel, &(vkds_launch_info){.global = {merge_groups(n)}, .args = p}));
    vkds__cmd_barrier(c->res->dev, cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);
  }
  p[VKDS__P_FLAGS] = 0;
  return vkds__alg_dispatch(c, cmd, c->kernel, &(vkds_launch_info){.global = {256 * merge_groups(n)}, .args = p});
}

/* `less` NULL: the sorts' order (`order`); else the comparator (elem GLSL), `order`
 * unused. */
static vkds_result describe(const char *name, const vkds_seq *a, const vkds_seq *b, const vkds_seq *out,
                            vkds_sort_order order, const char *less, bool by, vkds__alg *d) {
  *d = (vkds__alg){.name = name, .template_kind = VKDS__TEMPLATE_MERGE, .input_count = 2, .inputs = {a, b},
                   .output = out, .count = out ? out->count : 0, .elem = by ? VKDS__ELEM_GLSL : VKDS__ELEM_COPY,
                   .glsl = less, .elem_type = out ? out->type : VKDS_TYPE_BYTES};
  if (!a || !b || !out)
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: %s is NULL", name,
                      !a ? "the first input" : !b ? "the second input" : "the output");
  if (by && !less) return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: the comparator is NULL", name);
  if (!by && (unsigned)order > VKDS_SORT_DESCENDING)
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: unknown order %d", name, (int)order);
  if (by) {
    const vkds_seq *s[3] = {a, b, out};
    const char *what[3] = {"the first input", "the second input", "the output"};
    VKDS_CHECK(vkds__check_compared(name, s, what, 3));
    if (out->ops == &vkds_seq_zip_ops) d->elem_type = VKDS_U32; /* (no value of its own: the tuples are copied) */
  } else if (a->ops && b->ops && out->ops && (a->type != b->type || a->type != out->type)) {
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "%s: both inputs and the output must have one element type (%s, %s, %s)", name,
                      vkds__type_name(a->type), vkds__type_name(b->type), vkds__type_name(out->type));
  }
  if (a->ops && b->ops && out->ops && (a->count > out->count || b->count != out->count - a->count))
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "%s: the output has %llu elements; it must have as many as both inputs together (%llu + %llu)",
                      name, (unsigned long long)out->count, (unsigned long long)a->count, (unsigned long long)b->count);
  if (a->count > VKDS__SEARCH_DESCENDING - 1)
    return vkds__fail(NULL, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS, "%s: the first input is too long", name);
  uint64_t p1 = a->count | (!by && order == VKDS_SORT_DESCENDING ? VKDS__SEARCH_DESCENDING : 0);
  for (int k = 0; k < 8; ++k) d->value[k] = (unsigned char)(p1 >> (8 * k));
  d->has_value = true;
  return VKDS_SUCCESS;
}

/* The three forms, in the sorts' order (`order`) or by a comparator (`_by`, `less`). */
#define FORMS(fn, arg_t, arg, order, less, by)                                                                         \
  vkds_result vkds_##fn(vkds_policy *p, const vkds_seq *a, const vkds_seq *b, const vkds_seq *out, arg_t arg) {        \
    vkds__alg d;                                                                                                       \
    VKDS_CHECK_P(p, describe("vkds_" #fn, a, b, out, order, less, by, &d));                                            \
    return vkds__alg_run(p, &d);                                                                                       \
  }                                                                                                                    \
  vkds_result vkds_##fn##_async(vkds_policy *p, const vkds_seq *a, const vkds_seq *b, const vkds_seq *out, arg_t arg,  \
                                vkds_submission **sub) {                                                               \
    if (sub) *sub = NULL; /* (also when the arguments are refused) */                                                  \
    vkds__alg d;                                                                                                       \
    VKDS_CHECK_P(p, describe("vkds_" #fn "_async", a, b, out, order, less, by, &d));                                   \
    return vkds__alg_run_async(p, &d, sub);                                                                            \
  }                                                                                                                    \
  vkds_result vkds_cmd_##fn(const vkds_cmd *c, const vkds_seq *a, const vkds_seq *b, const vkds_seq *out, arg_t arg) { \
    vkds__alg d;                                                                                                       \
    VKDS_CHECK_C(c, describe("vkds_cmd_" #fn, a, b, out, order, less, by, &d));                                        \
    return vkds__alg_record(c, &d, (vkds_view){0});                                                                    \
  }

FORMS(merge, vkds_sort_order, order, order, NULL, false)
FORMS(merge_by, const char *, less, VKDS_SORT_ASCENDING, less, true)
