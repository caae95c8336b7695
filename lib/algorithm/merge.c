/* lib/algorithm/merge.c: the merge of two sequences sorted in the sorts' order
 * (vkds/algorithm.h, "merging"): a description (template MERGE,
 * shaders/algorithm/merge.glsl) that lib/algorithm/frame.c runs in the three forms, the
 * output written as the map template writes, both inputs read at random (staged whole
 * when they are not passed directly). */
#include "algorithm_internal.h"

enum { MERGE_OUT = 2048 }; /* outputs a work group (merge_group.glsl VKDS_MERGE_OUT) */
/* merge.glsl's P(4) */
#define STAGE_PARTITION 1u /* a thread a group writes the group's start into the scratch */
#define STAGE_BOUNDS 2u    /* the groups read their starts there */

/* From how many outputs on a dispatch finds every group's start first (a thread a group,
 * a binary search each, their latencies overlapped), instead of each group searching
 * before it can load (a k-ary search by subgroups, log_16 of the inputs' length in memory
 * round trips). On an H200 (2026-11-25) the groups' own searches held vkds_merge at
 * 0.91x CUB's merge at 2^22 and 0.47x at 2^24. */
#define PARTITION_FROM (1ull << 21)

static uint64_t merge_groups(uint64_t n) { return (n + MERGE_OUT - 1) / MERGE_OUT; }

uint64_t vkds__merge_scratch_bytes(const vkds__call *c) {
  return c->a.count > PARTITION_FROM ? 8 * (merge_groups(c->a.count) + 1) : 0;
}

vkds_result vkds__merge_record(vkds__call *c, VkCommandBuffer cmd) {
  uint64_t *p = c->gen.args.p;
  uint64_t n = p[VKDS__P_COUNT], need = vkds__merge_scratch_bytes(c);
  if (!n) return VKDS_SUCCESS;
  const vkds_view *s = &c->scan_scratch;
  p[4] = 0;
  if (need && s->buffer && s->bytes >= need) { /* (the recording form may have been given none) */
    p[2] = vkds_buffer_address(s->buffer) + s->offset;
    p[4] = STAGE_PARTITION;
    VKDS_CHECK(vkds_cmd_dispatch(cmd, c->res, c->kernel,
                                 &(vkds_launch_info){.global = {merge_groups(n)}, .args = &c->gen.args}));
    vkds__cmd_barrier(c->res->dev, cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);
    p[4] = STAGE_BOUNDS;
  }
  return vkds_cmd_dispatch(cmd, c->res, c->kernel,
                           &(vkds_launch_info){.global = {256 * merge_groups(n)}, .args = &c->gen.args});
}

static vkds_result describe(const char *name, const vkds_seq *a, const vkds_seq *b, const vkds_seq *out,
                            vkds_sort_order order, vkds__alg *d) {
  *d = (vkds__alg){.name = name, .template_kind = VKDS__TEMPLATE_MERGE, .input_count = 2, .inputs = {a, b},
                   .output = out, .count = out ? out->count : 0, .elem = VKDS__ELEM_COPY,
                   .elem_type = out ? out->type : VKDS_TYPE_BYTES};
  if (!a || !b || !out)
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: %s is NULL", name,
                      !a ? "the first input" : !b ? "the second input" : "the output");
  if ((unsigned)order > VKDS_SORT_DESCENDING)
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: unknown order %d", name, (int)order);
  if (a->ops && b->ops && out->ops && (a->type != b->type || a->type != out->type))
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "%s: both inputs and the output must have one element type (%d, %d, %d)", name, (int)a->type,
                      (int)b->type, (int)out->type);
  if (a->ops && b->ops && out->ops && a->count + b->count != out->count)
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "%s: the output has %llu elements, the inputs %llu and %llu", name,
                      (unsigned long long)out->count, (unsigned long long)a->count, (unsigned long long)b->count);
  if (a->count > VKDS__SEARCH_DESCENDING - 1)
    return vkds__fail(NULL, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS, "%s: the first input is too long", name);
  uint64_t p1 = a->count | (order == VKDS_SORT_DESCENDING ? VKDS__SEARCH_DESCENDING : 0);
  for (int k = 0; k < 8; ++k) d->value[k] = (unsigned char)(p1 >> (8 * k));
  d->has_value = true;
  return VKDS_SUCCESS;
}

vkds_result vkds_merge(vkds_policy *p, const vkds_seq *a, const vkds_seq *b, const vkds_seq *out,
                       vkds_sort_order order) {
  vkds__alg d;
  VKDS_CHECK(describe("vkds_merge", a, b, out, order, &d));
  return vkds__alg_run(p, &d);
}
vkds_result vkds_merge_async(vkds_policy *p, const vkds_seq *a, const vkds_seq *b, const vkds_seq *out,
                             vkds_sort_order order, vkds_submission **sub) {
  vkds__alg d;
  VKDS_CHECK(describe("vkds_merge_async", a, b, out, order, &d));
  return vkds__alg_run_async(p, &d, sub);
}
vkds_result vkds_cmd_merge(const vkds_cmd *c, const vkds_seq *a, const vkds_seq *b, const vkds_seq *out,
                           vkds_sort_order order) {
  vkds__alg d;
  VKDS_CHECK(describe("vkds_cmd_merge", a, b, out, order, &d));
  return vkds__alg_record(c, &d, (vkds_view){0});
}
