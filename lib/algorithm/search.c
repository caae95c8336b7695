/* lib/algorithm/search.c: questions about an order, the sorts' or a comparator's
 * (vkds/algorithm.h, "searching"): lower_bound and upper_bound of many needles in a
 * sorted sequence (template SEARCH, shaders/algorithm/search.glsl: the needles and the
 * output element by element as the map template does, the sorted sequence read at
 * random, staged whole when it is not passed directly), and is_sorted (a reduction: all
 * of "element i + 1 does not come before element i", shaders/algorithm/reduce.glsl with
 * codegen's ordered element). lib/algorithm/frame.c runs each in the three forms. */
#include "algorithm_internal.h"

static bool is_integer(vkds_type t) { return t == VKDS_I32 || t == VKDS_U32 || t == VKDS_I64 || t == VKDS_U64; }

/* `less` NULL: the sorts' order (`order`); else the comparator (elem GLSL), `order`
 * unused. */
static vkds_result describe(const char *name, const vkds_seq *sorted, const vkds_seq *needles, const vkds_seq *out,
                            vkds_sort_order order, const char *less, bool by, bool upper, vkds__alg *a) {
  *a = (vkds__alg){.name = name, .template_kind = VKDS__TEMPLATE_SEARCH, .input_count = 2, .inputs = {needles, sorted},
                   .output = out, .count = needles ? needles->count : 0,
                   .elem = by ? VKDS__ELEM_GLSL : VKDS__ELEM_COPY, .glsl = less,
                   .elem_type = out ? out->type : VKDS_TYPE_BYTES};
  if (!sorted || !needles || !out)
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: the %s is NULL", name,
                      !sorted ? "sorted sequence" : !needles ? "needles sequence" : "output");
  if (by && !less) return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: the comparator is NULL", name);
  if (!by && (unsigned)order > VKDS_SORT_DESCENDING)
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: unknown order %d", name, (int)order);
  if (by) {
    const vkds_seq *s[2] = {needles, sorted};
    const char *what[2] = {"the needles", "the sorted sequence"};
    VKDS_CHECK(vkds__check_compared(name, s, what, 2));
  } else if (sorted->ops && needles->ops && sorted->type != needles->type) {
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "%s: the needles (%s) and the sorted sequence (%s) must have one element type", name,
                      vkds__type_name(needles->type), vkds__type_name(sorted->type));
  }
  if (out->ops && !is_integer(out->type))
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "%s: the output receives indices: I32, U32, I64 or U64 elements", name);
  /* (a U32 output of a longer sequence's indices wrapped them, and said success) */
  if (out->ops && sorted->count > vkds__index_max(out->type))
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "%s: the output's %s elements cannot hold the indices of a sorted sequence of %llu elements (up "
                      "to its length)", name, vkds__type_name(out->type), (unsigned long long)sorted->count);
  if (sorted->count > VKDS__SEARCH_DESCENDING - 1)
    return vkds__fail(NULL, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS, "%s: the sorted sequence is too long", name);
  uint64_t p1 = sorted->count | (!by && order == VKDS_SORT_DESCENDING ? VKDS__SEARCH_DESCENDING : 0) |
                (upper ? VKDS__SEARCH_UPPER : 0);
  for (int k = 0; k < 8; ++k) a->value[k] = (unsigned char)(p1 >> (8 * k));
  a->has_value = true;
  return VKDS_SUCCESS;
}

/* The three forms, in the sorts' order (`order`) or by a comparator (`_by`, `less`). */
#define FORMS(fn, arg_t, arg, order, less, by, upper)                                                                  \
  vkds_result vkds_##fn(vkds_policy *p, const vkds_seq *sorted, const vkds_seq *needles, const vkds_seq *out,          \
                        arg_t arg) {                                                                                   \
    vkds__alg a;                                                                                                       \
    VKDS_CHECK_P(p, describe("vkds_" #fn, sorted, needles, out, order, less, by, upper, &a));                          \
    return vkds__alg_run(p, &a);                                                                                       \
  }                                                                                                                    \
  vkds_result vkds_##fn##_async(vkds_policy *p, const vkds_seq *sorted, const vkds_seq *needles, const vkds_seq *out,  \
                                arg_t arg, vkds_submission **sub) {                                                    \
    if (sub) *sub = NULL; /* (also when the arguments are refused) */                                                  \
    vkds__alg a;                                                                                                       \
    VKDS_CHECK_P(p, describe("vkds_" #fn "_async", sorted, needles, out, order, less, by, upper, &a));                 \
    return vkds__alg_run_async(p, &a, sub);                                                                            \
  }                                                                                                                    \
  vkds_result vkds_cmd_##fn(const vkds_cmd *c, const vkds_seq *sorted, const vkds_seq *needles, const vkds_seq *out,   \
                            arg_t arg) {                                                                               \
    vkds__alg a;                                                                                                       \
    VKDS_CHECK_C(c, describe("vkds_cmd_" #fn, sorted, needles, out, order, less, by, upper, &a));                      \
    return vkds__alg_record(c, &a, (vkds_view){0});                                                                    \
  }

FORMS(lower_bound, vkds_sort_order, order, order, NULL, false, false)
FORMS(upper_bound, vkds_sort_order, order, order, NULL, false, true)
FORMS(lower_bound_by, const char *, less, VKDS_SORT_ASCENDING, less, true, false)
FORMS(upper_bound_by, const char *, less, VKDS_SORT_ASCENDING, less, true, true)

/* ---- is_sorted ---- */

/* `less` NULL: in the sorts' order (`order`); else by the comparator (`order` unused). */
static vkds__alg describe_is_sorted(const char *name, const vkds_seq *in, vkds_sort_order order, const char *less,
                                    bool *result) {
  vkds__alg a = {.name = name, .template_kind = VKDS__TEMPLATE_REDUCE, .input_count = 1, .inputs = {in},
                 .count = in ? in->count : 0, .elem = less ? VKDS__ELEM_ORDERED_BY : VKDS__ELEM_ORDERED,
                 .glsl = less, .elem_type = VKDS_U32, .combine = VKDS__COMBINE_OP,
                 .op = {.kind = VKDS_OP_LOGICAL_AND}, .result = VKDS__RESULT_BOOL, .host_result = result};
  a.value[0] = !less && order == VKDS_SORT_DESCENDING; /* P(1), not an init: has_value stays false */
  return a;
}

static vkds_result check_order(const char *name, vkds_sort_order order) {
  return (unsigned)order > VKDS_SORT_DESCENDING
             ? vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: unknown order %d", name, (int)order)
             : VKDS_SUCCESS;
}
static vkds_result check_less(const char *name, const char *less) {
  return less ? VKDS_SUCCESS
              : vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: the comparator is NULL", name);
}

vkds_result vkds_is_sorted(vkds_policy *p, const vkds_seq *in, vkds_sort_order order, bool *result) {
  VKDS_CHECK_P(p, check_order("vkds_is_sorted", order));
  vkds__alg a = describe_is_sorted("vkds_is_sorted", in, order, NULL, result);
  return vkds__alg_run(p, &a);
}
vkds_result vkds_is_sorted_async(vkds_policy *p, const vkds_seq *in, vkds_sort_order order, bool *result,
                                 vkds_submission **sub) {
  if (sub) *sub = NULL; /* (also when the arguments are refused) */
  VKDS_CHECK_P(p, check_order("vkds_is_sorted_async", order));
  vkds__alg a = describe_is_sorted("vkds_is_sorted_async", in, order, NULL, result);
  return vkds__alg_run_async(p, &a, sub);
}
vkds_result vkds_cmd_is_sorted(const vkds_cmd *c, const vkds_seq *in, vkds_sort_order order, vkds_view result) {
  VKDS_CHECK_C(c, check_order("vkds_cmd_is_sorted", order));
  vkds__alg a = describe_is_sorted("vkds_cmd_is_sorted", in, order, NULL, NULL);
  return vkds__alg_record(c, &a, result);
}

vkds_result vkds_is_sorted_by(vkds_policy *p, const vkds_seq *in, const char *less, bool *result) {
  VKDS_CHECK_P(p, check_less("vkds_is_sorted_by", less));
  vkds__alg a = describe_is_sorted("vkds_is_sorted_by", in, VKDS_SORT_ASCENDING, less, result);
  return vkds__alg_run(p, &a);
}
vkds_result vkds_is_sorted_by_async(vkds_policy *p, const vkds_seq *in, const char *less, bool *result,
                                    vkds_submission **sub) {
  if (sub) *sub = NULL; /* (also when the arguments are refused) */
  VKDS_CHECK_P(p, check_less("vkds_is_sorted_by_async", less));
  vkds__alg a = describe_is_sorted("vkds_is_sorted_by_async", in, VKDS_SORT_ASCENDING, less, result);
  return vkds__alg_run_async(p, &a, sub);
}
vkds_result vkds_cmd_is_sorted_by(const vkds_cmd *c, const vkds_seq *in, const char *less, vkds_view result) {
  VKDS_CHECK_C(c, check_less("vkds_cmd_is_sorted_by", less));
  vkds__alg a = describe_is_sorted("vkds_cmd_is_sorted_by", in, VKDS_SORT_ASCENDING, less, NULL);
  return vkds__alg_record(c, &a, result);
}
