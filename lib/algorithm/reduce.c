/* lib/algorithm/reduce.c: the reductions: reduce, transform_reduce (one and two
 * inputs), inner_product, count, count_if, find, find_if, find_if_not, min/max element,
 * any/all/none of, equal. All
 * are one template (shaders/algorithm/reduce.glsl) with a different element function,
 * operator and result; lib/algorithm/frame.c runs each description in the three forms. */
#include "algorithm_internal.h"

#include <string.h>

static vkds__alg reduce_alg(const char *name, const vkds_seq *in1, const vkds_seq *in2) {
  vkds__alg a = {.name = name, .template_kind = VKDS__TEMPLATE_REDUCE, .input_count = in2 ? 2 : 1,
                 .inputs = {in1, in2}, .count = in1 ? in1->count : 0, .elem = VKDS__ELEM_COPY,
                 .elem_type = in1 ? in1->type : VKDS_TYPE_BYTES, .combine = VKDS__COMBINE_OP,
                 .op = {.kind = VKDS_OP_PLUS}, .result = VKDS__RESULT_VALUE};
  return a;
}

/* The operator (NULL or DEFAULT: plus) and init (NULL: none) of a value reduction. */
static void value_reduction(vkds__alg *a, const vkds_op *op, const void *init, void *result) {
  if (op) a->op = *op;
  if (a->op.kind == VKDS_OP_DEFAULT) a->op.kind = VKDS_OP_PLUS;
  a->host_result = result;
  if (init && vkds_type_size(a->elem_type) <= 8) {
    memcpy(a->value, init, vkds_type_size(a->elem_type));
    a->has_value = true;
  }
}

static vkds__alg describe_reduce(const char *name, const vkds_seq *in, const vkds_op *op, const void *init, void *result) {
  vkds__alg a = reduce_alg(name, in, NULL);
  value_reduction(&a, op, init, result);
  return a;
}

static vkds__alg describe_transform_reduce(const char *name, const vkds_seq *in1, const vkds_seq *in2,
                                           const char *transform, vkds_type type, const vkds_op *op, const void *init,
                                           void *result) {
  vkds__alg a = reduce_alg(name, in1, in2);
  a.elem = VKDS__ELEM_GLSL;
  a.glsl = transform;
  if (type != VKDS_TYPE_BYTES) a.elem_type = type;
  value_reduction(&a, op, init, result);
  return a;
}

static vkds__alg describe_inner_product(const char *name, const vkds_seq *in1, const vkds_seq *in2, const void *init,
                                        void *result) {
  vkds__alg a = reduce_alg(name, in1, in2);
  a.elem = VKDS__ELEM_PRODUCT;
  value_reduction(&a, NULL, init, result);
  return a;
}

/* count, count_if: uint64_t sums of 1 and 0. */
static vkds__alg counted(const char *name, const vkds_seq *in, vkds__alg_elem elem, const char *pred, void *result) {
  vkds__alg a = reduce_alg(name, in, NULL);
  a.elem = elem;
  a.glsl = pred;
  a.elem_type = VKDS_U64;
  a.result = VKDS__RESULT_COUNT;
  a.host_result = result;
  return a;
}

static vkds_result describe_count(const char *name, const vkds_seq *in, const void *value, uint64_t *result,
                                  vkds__alg *a) {
  *a = counted(name, in, VKDS__ELEM_EQ_VALUE, NULL, result);
  if (!value) return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: the value is NULL", name);
  if (in && vkds_type_size(in->type) <= 8) memcpy(a->value, value, vkds_type_size(in->type));
  return VKDS_SUCCESS;
}

/* find, find_if, find_if_not: the smallest index among those found (each element maps
 * to its index, or to ~0 where it is not one), min over U64, with the count as init: so
 * the count where there is none, as std::find_if's end. */
static vkds_result describe_find(const char *name, const vkds_seq *in, vkds__alg_elem elem, const char *pred,
                                 const void *value, uint64_t *result, vkds__alg *a) {
  *a = counted(name, in, elem, pred, result);
  a->op.kind = VKDS_OP_MIN;
  uint64_t n = in ? in->count : 0;
  memcpy(a->value, &n, 8);
  a->has_value = true;
  if (elem == VKDS__ELEM_FIND_VALUE) {
    if (!value) return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: the value is NULL", name);
    if (in && vkds_type_size(in->type) <= 8) memcpy(&a->extra[0], value, vkds_type_size(in->type));
  }
  return VKDS_SUCCESS;
}

static vkds__alg describe_element(const char *name, const vkds_seq *in, bool largest, uint64_t *index, void *value) {
  vkds__alg a = reduce_alg(name, in, NULL);
  a.elem = VKDS__ELEM_LOCATED;
  a.combine = largest ? VKDS__COMBINE_MAX_LOC : VKDS__COMBINE_MIN_LOC;
  a.result = VKDS__RESULT_LOCATION;
  a.host_index = index;
  a.host_value = value;
  return a;
}

/* any, all, none: uint32_t 1 and 0, or-ed (any) or and-ed (all; none is all of the
 * predicate's negation). Logical, not bitwise: the identity is then 1 or 0 too, which is
 * what an empty sequence's recorded result is (BIT_AND's identity, 0xffffffff, reached
 * the application's result view: a probe). */
typedef enum quantifier { ANY, ALL, NONE } quantifier;
static vkds__alg describe_quantified(const char *name, const vkds_seq *in, const char *pred, quantifier q, bool *result) {
  vkds__alg a = reduce_alg(name, in, NULL);
  a.elem = q == NONE ? VKDS__ELEM_NOT_PRED : VKDS__ELEM_PRED;
  a.glsl = pred;
  a.elem_type = VKDS_U32;
  a.op.kind = q == ANY ? VKDS_OP_LOGICAL_OR : VKDS_OP_LOGICAL_AND;
  a.result = VKDS__RESULT_BOOL;
  a.host_result = result;
  return a;
}

static vkds__alg describe_equal(const char *name, const vkds_seq *in1, const vkds_seq *in2, bool *result) {
  vkds__alg a = reduce_alg(name, in1, in2);
  a.elem = VKDS__ELEM_EQUAL;
  a.elem_type = VKDS_U32;
  a.op.kind = VKDS_OP_LOGICAL_AND; /* (as the quantifiers above) */
  a.result = VKDS__RESULT_BOOL;
  a.host_result = result;
  if (in1 && in2 && in1->count != in2->count) {
    /* different lengths are not equal: nothing is compared, and init 0 makes it false
     * (the asynchronous and recording forms still produce their result the usual way) */
    a.count = 0;
    a.has_value = true;
  }
  return a;
}

/* ---- the public functions: a description, then one of the three forms ---- */

vkds_result vkds_reduce(vkds_policy *p, const vkds_seq *in, const vkds_op *op, const void *init, void *result) {
  vkds__alg a = describe_reduce("vkds_reduce", in, op, init, result);
  return vkds__alg_run(p, &a);
}
vkds_result vkds_reduce_async(vkds_policy *p, const vkds_seq *in, const vkds_op *op, const void *init, void *result,
                              vkds_submission **sub) {
  if (sub) *sub = NULL; /* (also when the arguments are refused) */
  vkds__alg a = describe_reduce("vkds_reduce_async", in, op, init, result);
  return vkds__alg_run_async(p, &a, sub);
}
vkds_result vkds_cmd_reduce(const vkds_cmd *c, const vkds_seq *in, const vkds_op *op, const void *init, vkds_view result) {
  vkds__alg a = describe_reduce("vkds_cmd_reduce", in, op, init, NULL);
  return vkds__alg_record(c, &a, result);
}

vkds_result vkds_transform_reduce(vkds_policy *p, const vkds_seq *in, const char *transform, vkds_type type,
                                  const vkds_op *op, const void *init, void *result) {
  vkds__alg a = describe_transform_reduce("vkds_transform_reduce", in, NULL, transform, type, op, init, result);
  return vkds__alg_run(p, &a);
}
vkds_result vkds_transform_reduce_async(vkds_policy *p, const vkds_seq *in, const char *transform, vkds_type type,
                                        const vkds_op *op, const void *init, void *result, vkds_submission **sub) {
  if (sub) *sub = NULL; /* (also when the arguments are refused) */
  vkds__alg a = describe_transform_reduce("vkds_transform_reduce_async", in, NULL, transform, type, op, init, result);
  return vkds__alg_run_async(p, &a, sub);
}
vkds_result vkds_cmd_transform_reduce(const vkds_cmd *c, const vkds_seq *in, const char *transform, vkds_type type,
                                      const vkds_op *op, const void *init, vkds_view result) {
  vkds__alg a = describe_transform_reduce("vkds_cmd_transform_reduce", in, NULL, transform, type, op, init, NULL);
  return vkds__alg_record(c, &a, result);
}

/* The two-input forms refuse a NULL second input rather than read it as one input. */
static vkds_result both(const char *name, const vkds_seq *in2) {
  return in2 ? VKDS_SUCCESS : vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: input 1 is NULL", name);
}

vkds_result vkds_transform_reduce2(vkds_policy *p, const vkds_seq *in1, const vkds_seq *in2, const char *transform,
                                   vkds_type type, const vkds_op *op, const void *init, void *result) {
  VKDS_CHECK_P(p, both("vkds_transform_reduce2", in2));
  vkds__alg a = describe_transform_reduce("vkds_transform_reduce2", in1, in2, transform, type, op, init, result);
  return vkds__alg_run(p, &a);
}
vkds_result vkds_transform_reduce2_async(vkds_policy *p, const vkds_seq *in1, const vkds_seq *in2,
                                         const char *transform, vkds_type type, const vkds_op *op, const void *init,
                                         void *result, vkds_submission **sub) {
  if (sub) *sub = NULL; /* (also when the arguments are refused) */
  VKDS_CHECK_P(p, both("vkds_transform_reduce2_async", in2));
  vkds__alg a = describe_transform_reduce("vkds_transform_reduce2_async", in1, in2, transform, type, op, init, result);
  return vkds__alg_run_async(p, &a, sub);
}
vkds_result vkds_cmd_transform_reduce2(const vkds_cmd *c, const vkds_seq *in1, const vkds_seq *in2,
                                       const char *transform, vkds_type type, const vkds_op *op, const void *init,
                                       vkds_view result) {
  VKDS_CHECK_C(c, both("vkds_cmd_transform_reduce2", in2));
  vkds__alg a = describe_transform_reduce("vkds_cmd_transform_reduce2", in1, in2, transform, type, op, init, NULL);
  return vkds__alg_record(c, &a, result);
}

vkds_result vkds_inner_product(vkds_policy *p, const vkds_seq *in1, const vkds_seq *in2, const void *init, void *result) {
  VKDS_CHECK_P(p, both("vkds_inner_product", in2));
  vkds__alg a = describe_inner_product("vkds_inner_product", in1, in2, init, result);
  return vkds__alg_run(p, &a);
}
vkds_result vkds_inner_product_async(vkds_policy *p, const vkds_seq *in1, const vkds_seq *in2, const void *init,
                                     void *result, vkds_submission **sub) {
  if (sub) *sub = NULL; /* (also when the arguments are refused) */
  VKDS_CHECK_P(p, both("vkds_inner_product_async", in2));
  vkds__alg a = describe_inner_product("vkds_inner_product_async", in1, in2, init, result);
  return vkds__alg_run_async(p, &a, sub);
}
vkds_result vkds_cmd_inner_product(const vkds_cmd *c, const vkds_seq *in1, const vkds_seq *in2, const void *init,
                                   vkds_view result) {
  VKDS_CHECK_C(c, both("vkds_cmd_inner_product", in2));
  vkds__alg a = describe_inner_product("vkds_cmd_inner_product", in1, in2, init, NULL);
  return vkds__alg_record(c, &a, result);
}

vkds_result vkds_count(vkds_policy *p, const vkds_seq *in, const void *value, uint64_t *result) {
  vkds__alg a;
  VKDS_CHECK_P(p, describe_count("vkds_count", in, value, result, &a));
  return vkds__alg_run(p, &a);
}
vkds_result vkds_count_async(vkds_policy *p, const vkds_seq *in, const void *value, uint64_t *result,
                             vkds_submission **sub) {
  if (sub) *sub = NULL; /* (also when the arguments are refused) */
  vkds__alg a;
  VKDS_CHECK_P(p, describe_count("vkds_count_async", in, value, result, &a));
  return vkds__alg_run_async(p, &a, sub);
}
vkds_result vkds_cmd_count(const vkds_cmd *c, const vkds_seq *in, const void *value, vkds_view result) {
  vkds__alg a;
  VKDS_CHECK_C(c, describe_count("vkds_cmd_count", in, value, NULL, &a));
  return vkds__alg_record(c, &a, result);
}

vkds_result vkds_count_if(vkds_policy *p, const vkds_seq *in, const char *pred, uint64_t *result) {
  vkds__alg a = counted("vkds_count_if", in, VKDS__ELEM_PRED, pred, result);
  return vkds__alg_run(p, &a);
}
vkds_result vkds_count_if_async(vkds_policy *p, const vkds_seq *in, const char *pred, uint64_t *result,
                                vkds_submission **sub) {
  if (sub) *sub = NULL; /* (also when the arguments are refused) */
  vkds__alg a = counted("vkds_count_if_async", in, VKDS__ELEM_PRED, pred, result);
  return vkds__alg_run_async(p, &a, sub);
}
vkds_result vkds_cmd_count_if(const vkds_cmd *c, const vkds_seq *in, const char *pred, vkds_view result) {
  vkds__alg a = counted("vkds_cmd_count_if", in, VKDS__ELEM_PRED, pred, NULL);
  return vkds__alg_record(c, &a, result);
}

vkds_result vkds_min_element(vkds_policy *p, const vkds_seq *in, uint64_t *index, void *value) {
  vkds__alg a = describe_element("vkds_min_element", in, false, index, value);
  return vkds__alg_run(p, &a);
}
vkds_result vkds_min_element_async(vkds_policy *p, const vkds_seq *in, uint64_t *index, void *value,
                                   vkds_submission **sub) {
  if (sub) *sub = NULL; /* (also when the arguments are refused) */
  vkds__alg a = describe_element("vkds_min_element_async", in, false, index, value);
  return vkds__alg_run_async(p, &a, sub);
}
vkds_result vkds_cmd_min_element(const vkds_cmd *c, const vkds_seq *in, vkds_view result) {
  vkds__alg a = describe_element("vkds_cmd_min_element", in, false, NULL, NULL);
  return vkds__alg_record(c, &a, result);
}
vkds_result vkds_max_element(vkds_policy *p, const vkds_seq *in, uint64_t *index, void *value) {
  vkds__alg a = describe_element("vkds_max_element", in, true, index, value);
  return vkds__alg_run(p, &a);
}
vkds_result vkds_max_element_async(vkds_policy *p, const vkds_seq *in, uint64_t *index, void *value,
                                   vkds_submission **sub) {
  if (sub) *sub = NULL; /* (also when the arguments are refused) */
  vkds__alg a = describe_element("vkds_max_element_async", in, true, index, value);
  return vkds__alg_run_async(p, &a, sub);
}
vkds_result vkds_cmd_max_element(const vkds_cmd *c, const vkds_seq *in, vkds_view result) {
  vkds__alg a = describe_element("vkds_cmd_max_element", in, true, NULL, NULL);
  return vkds__alg_record(c, &a, result);
}

vkds_result vkds_any_of(vkds_policy *p, const vkds_seq *in, const char *pred, bool *result) {
  vkds__alg a = describe_quantified("vkds_any_of", in, pred, ANY, result);
  return vkds__alg_run(p, &a);
}
vkds_result vkds_any_of_async(vkds_policy *p, const vkds_seq *in, const char *pred, bool *result, vkds_submission **sub) {
  if (sub) *sub = NULL; /* (also when the arguments are refused) */
  vkds__alg a = describe_quantified("vkds_any_of_async", in, pred, ANY, result);
  return vkds__alg_run_async(p, &a, sub);
}
vkds_result vkds_cmd_any_of(const vkds_cmd *c, const vkds_seq *in, const char *pred, vkds_view result) {
  vkds__alg a = describe_quantified("vkds_cmd_any_of", in, pred, ANY, NULL);
  return vkds__alg_record(c, &a, result);
}
vkds_result vkds_all_of(vkds_policy *p, const vkds_seq *in, const char *pred, bool *result) {
  vkds__alg a = describe_quantified("vkds_all_of", in, pred, ALL, result);
  return vkds__alg_run(p, &a);
}
vkds_result vkds_all_of_async(vkds_policy *p, const vkds_seq *in, const char *pred, bool *result, vkds_submission **sub) {
  if (sub) *sub = NULL; /* (also when the arguments are refused) */
  vkds__alg a = describe_quantified("vkds_all_of_async", in, pred, ALL, result);
  return vkds__alg_run_async(p, &a, sub);
}
vkds_result vkds_cmd_all_of(const vkds_cmd *c, const vkds_seq *in, const char *pred, vkds_view result) {
  vkds__alg a = describe_quantified("vkds_cmd_all_of", in, pred, ALL, NULL);
  return vkds__alg_record(c, &a, result);
}
vkds_result vkds_none_of(vkds_policy *p, const vkds_seq *in, const char *pred, bool *result) {
  vkds__alg a = describe_quantified("vkds_none_of", in, pred, NONE, result);
  return vkds__alg_run(p, &a);
}
vkds_result vkds_none_of_async(vkds_policy *p, const vkds_seq *in, const char *pred, bool *result,
                               vkds_submission **sub) {
  if (sub) *sub = NULL; /* (also when the arguments are refused) */
  vkds__alg a = describe_quantified("vkds_none_of_async", in, pred, NONE, result);
  return vkds__alg_run_async(p, &a, sub);
}
vkds_result vkds_cmd_none_of(const vkds_cmd *c, const vkds_seq *in, const char *pred, vkds_view result) {
  vkds__alg a = describe_quantified("vkds_cmd_none_of", in, pred, NONE, NULL);
  return vkds__alg_record(c, &a, result);
}

vkds_result vkds_equal(vkds_policy *p, const vkds_seq *in1, const vkds_seq *in2, bool *result) {
  VKDS_CHECK_P(p, both("vkds_equal", in2));
  vkds__alg a = describe_equal("vkds_equal", in1, in2, result);
  return vkds__alg_run(p, &a);
}
vkds_result vkds_equal_async(vkds_policy *p, const vkds_seq *in1, const vkds_seq *in2, bool *result,
                             vkds_submission **sub) {
  if (sub) *sub = NULL; /* (also when the arguments are refused) */
  VKDS_CHECK_P(p, both("vkds_equal_async", in2));
  vkds__alg a = describe_equal("vkds_equal_async", in1, in2, result);
  return vkds__alg_run_async(p, &a, sub);
}
vkds_result vkds_cmd_equal(const vkds_cmd *c, const vkds_seq *in1, const vkds_seq *in2, vkds_view result) {
  VKDS_CHECK_C(c, both("vkds_cmd_equal", in2));
  vkds__alg a = describe_equal("vkds_cmd_equal", in1, in2, NULL);
  return vkds__alg_record(c, &a, result);
}

/* find: the value's; find_if, find_if_not: the predicate's */
#define FIND_FORMS(fn, arg_t, arg, elem, pred, value)                                                                  \
  vkds_result vkds_##fn(vkds_policy *p, const vkds_seq *in, arg_t arg, uint64_t *index) {                             \
    vkds__alg a;                                                                                                       \
    VKDS_CHECK_P(p, describe_find("vkds_" #fn, in, elem, pred, value, index, &a));                                     \
    return vkds__alg_run(p, &a);                                                                                       \
  }                                                                                                                    \
  vkds_result vkds_##fn##_async(vkds_policy *p, const vkds_seq *in, arg_t arg, uint64_t *index,                        \
                                vkds_submission **sub) {                                                               \
    if (sub) *sub = NULL; /* (also when the arguments are refused) */                                                  \
    vkds__alg a;                                                                                                       \
    VKDS_CHECK_P(p, describe_find("vkds_" #fn "_async", in, elem, pred, value, index, &a));                            \
    return vkds__alg_run_async(p, &a, sub);                                                                            \
  }                                                                                                                    \
  vkds_result vkds_cmd_##fn(const vkds_cmd *c, const vkds_seq *in, arg_t arg, vkds_view result) {                      \
    vkds__alg a;                                                                                                       \
    VKDS_CHECK_C(c, describe_find("vkds_cmd_" #fn, in, elem, pred, value, NULL, &a));                                  \
    return vkds__alg_record(c, &a, result);                                                                            \
  }

FIND_FORMS(find, const void *, value, VKDS__ELEM_FIND_VALUE, NULL, value)
FIND_FORMS(find_if, const char *, pred, VKDS__ELEM_FIND_PRED, pred, NULL)
FIND_FORMS(find_if_not, const char *, pred, VKDS__ELEM_FIND_NOT_PRED, pred, NULL)
