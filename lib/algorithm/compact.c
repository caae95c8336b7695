/* lib/algorithm/compact.c: stream compaction on the scans: copy_if, remove_if,
 * partition, unique. Each is a scan of 1-or-0 flags (a predicate, its negation, or
 * "differs from the element before") whose last step writes the kept elements where
 * the running count puts them instead of writing the counts (scan_tile.glsl,
 * VKDS_COMPACT), on the scan's two paths (scan.c); the count of kept elements is the
 * result. */
#include "algorithm_internal.h"

static vkds__alg compaction(const char *name, const vkds_seq *in, const vkds_seq *out, vkds__alg_elem elem,
                            const char *pred, uint64_t *count) {
  return (vkds__alg){.name = name, .template_kind = VKDS__TEMPLATE_SCAN, .input_count = 1, .inputs = {in},
                     .output = out, .count = in ? in->count : 0, .elem = elem, .glsl = pred, .elem_type = VKDS_U32,
                     .combine = VKDS__COMBINE_OP, .op = {.kind = VKDS_OP_PLUS}, .result = VKDS__RESULT_COUNT,
                     .host_result = count};
}

/* Records (a zip of numbers) kept whole go to a zip of as many numbers, part k of each
 * kept tuple to part k (converted to its type); `which` names the output. */
static vkds_result records_out(const char *name, const vkds_seq *in, const vkds_seq *out, const char *which) {
  if (!out || !out->ops) return VKDS_SUCCESS; /* (the frame names it) */
  if (out->ops != &vkds_seq_zip_ops || out->part_count != in->part_count)
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "%s: the input is a zip of %u parts, so the %s must be a zip of as many (part k of each kept "
                      "tuple goes to its part k)",
                      name, in->part_count, which);
  if (!vkds__zip_of_numbers(in, 0) || !vkds__zip_of_numbers(out, 0))
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "%s: a part of the input or of the %s is not a number (records are zips of numbers)", name,
                      which);
  return VKDS_SUCCESS;
}

/* What the frame cannot say before it selects a device: a zip's tuples go to zips of as
 * many parts, and a partition needs both its outputs. */
static vkds_result describe(const vkds__alg *a, const vkds_seq *out_false, bool partition) {
  if (partition && !out_false)
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: output 1 is NULL", a->name);
  const vkds_seq *in = a->inputs[0];
  if (!in || !in->ops || in->type != VKDS_TYPE_COMPOSITE) return VKDS_SUCCESS;
  if (in->ops != &vkds_seq_zip_ops)
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: the input's elements are not numbers",
                      a->name);
  VKDS_CHECK(records_out(a->name, in, a->output, partition ? "first output" : "output"));
  return partition ? records_out(a->name, in, out_false, "second output") : VKDS_SUCCESS;
}

static vkds__alg copy_if_alg(const char *name, const vkds_seq *in, const vkds_seq *out, const char *pred,
                             bool negate, uint64_t *count) {
  return compaction(name, in, out, negate ? VKDS__ELEM_NOT_PRED : VKDS__ELEM_PRED, pred, count);
}

vkds_result vkds_copy_if(vkds_policy *p, const vkds_seq *in, const vkds_seq *out, const char *pred, uint64_t *count) {
  vkds__alg a = copy_if_alg("vkds_copy_if", in, out, pred, false, count);
  VKDS_CHECK_P(p, describe(&a, NULL, false));
  return vkds__alg_run(p, &a);
}
vkds_result vkds_copy_if_async(vkds_policy *p, const vkds_seq *in, const vkds_seq *out, const char *pred,
                               uint64_t *count, vkds_submission **sub) {
  if (sub) *sub = NULL; /* (also when the arguments are refused) */
  vkds__alg a = copy_if_alg("vkds_copy_if_async", in, out, pred, false, count);
  VKDS_CHECK_P(p, describe(&a, NULL, false));
  return vkds__alg_run_async(p, &a, sub);
}
vkds_result vkds_cmd_copy_if(const vkds_cmd *c, const vkds_seq *in, const vkds_seq *out, const char *pred,
                             vkds_view count) {
  vkds__alg a = copy_if_alg("vkds_cmd_copy_if", in, out, pred, false, NULL);
  VKDS_CHECK_C(c, describe(&a, NULL, false));
  return vkds__alg_record(c, &a, count);
}

vkds_result vkds_remove_if(vkds_policy *p, const vkds_seq *in, const vkds_seq *out, const char *pred,
                           uint64_t *count) {
  vkds__alg a = copy_if_alg("vkds_remove_if", in, out, pred, true, count);
  VKDS_CHECK_P(p, describe(&a, NULL, false));
  return vkds__alg_run(p, &a);
}
vkds_result vkds_remove_if_async(vkds_policy *p, const vkds_seq *in, const vkds_seq *out, const char *pred,
                                 uint64_t *count, vkds_submission **sub) {
  if (sub) *sub = NULL; /* (also when the arguments are refused) */
  vkds__alg a = copy_if_alg("vkds_remove_if_async", in, out, pred, true, count);
  VKDS_CHECK_P(p, describe(&a, NULL, false));
  return vkds__alg_run_async(p, &a, sub);
}
vkds_result vkds_cmd_remove_if(const vkds_cmd *c, const vkds_seq *in, const vkds_seq *out, const char *pred,
                               vkds_view count) {
  vkds__alg a = copy_if_alg("vkds_cmd_remove_if", in, out, pred, true, NULL);
  VKDS_CHECK_C(c, describe(&a, NULL, false));
  return vkds__alg_record(c, &a, count);
}

static vkds__alg partition_alg(const char *name, const vkds_seq *in, const vkds_seq *out_true,
                               const vkds_seq *out_false, const char *pred, uint64_t *count) {
  vkds__alg a = compaction(name, in, out_true, VKDS__ELEM_PRED, pred, count);
  a.output2 = out_false;
  return a;
}

vkds_result vkds_partition(vkds_policy *p, const vkds_seq *in, const vkds_seq *out_true, const vkds_seq *out_false,
                           const char *pred, uint64_t *count) {
  vkds__alg a = partition_alg("vkds_partition", in, out_true, out_false, pred, count);
  VKDS_CHECK_P(p, describe(&a, out_false, true));
  return vkds__alg_run(p, &a);
}
vkds_result vkds_partition_async(vkds_policy *p, const vkds_seq *in, const vkds_seq *out_true,
                                 const vkds_seq *out_false, const char *pred, uint64_t *count,
                                 vkds_submission **sub) {
  if (sub) *sub = NULL; /* (also when the arguments are refused) */
  vkds__alg a = partition_alg("vkds_partition_async", in, out_true, out_false, pred, count);
  VKDS_CHECK_P(p, describe(&a, out_false, true));
  return vkds__alg_run_async(p, &a, sub);
}
vkds_result vkds_cmd_partition(const vkds_cmd *c, const vkds_seq *in, const vkds_seq *out_true,
                               const vkds_seq *out_false, const char *pred, vkds_view count) {
  vkds__alg a = partition_alg("vkds_cmd_partition", in, out_true, out_false, pred, NULL);
  VKDS_CHECK_C(c, describe(&a, out_false, true));
  return vkds__alg_record(c, &a, count);
}

vkds_result vkds_unique(vkds_policy *p, const vkds_seq *in, const vkds_seq *out, uint64_t *count) {
  vkds__alg a = compaction("vkds_unique", in, out, VKDS__ELEM_UNIQUE, NULL, count);
  VKDS_CHECK_P(p, describe(&a, NULL, false));
  return vkds__alg_run(p, &a);
}
vkds_result vkds_unique_async(vkds_policy *p, const vkds_seq *in, const vkds_seq *out, uint64_t *count,
                              vkds_submission **sub) {
  if (sub) *sub = NULL; /* (also when the arguments are refused) */
  vkds__alg a = compaction("vkds_unique_async", in, out, VKDS__ELEM_UNIQUE, NULL, count);
  VKDS_CHECK_P(p, describe(&a, NULL, false));
  return vkds__alg_run_async(p, &a, sub);
}
vkds_result vkds_cmd_unique(const vkds_cmd *c, const vkds_seq *in, const vkds_seq *out, vkds_view count) {
  vkds__alg a = compaction("vkds_cmd_unique", in, out, VKDS__ELEM_UNIQUE, NULL, NULL);
  VKDS_CHECK_C(c, describe(&a, NULL, false));
  return vkds__alg_record(c, &a, count);
}
