/* lib/algorithm/elementwise.c: fill, copy, transform (one and two inputs),
 * adjacent_difference: the
 * element-wise family, on the map template (shaders/algorithm/map.glsl). Each algorithm
 * is a description (vkds__alg); lib/algorithm/frame.c runs it in the three forms. */
#include "algorithm_internal.h"

#include <string.h>

static vkds__alg map_alg(const char *name, const vkds_seq *out) {
  return (vkds__alg){.name = name, .template_kind = VKDS__TEMPLATE_MAP, .output = out,
                     .count = out ? out->count : 0, .elem_type = out ? out->type : VKDS_TYPE_BYTES};
}

static vkds_result describe_fill(const char *name, const vkds_seq *out, const void *value, vkds__alg *a) {
  *a = map_alg(name, out);
  a->elem = VKDS__ELEM_VALUE;
  if (!value) return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: the value is NULL", name);
  if (out && vkds_type_size(out->type) <= 8) memcpy(a->value, value, vkds_type_size(out->type));
  a->has_value = true;
  return VKDS_SUCCESS;
}

static vkds__alg describe_copy(const char *name, const vkds_seq *in, const vkds_seq *out) {
  vkds__alg a = map_alg(name, out);
  a.elem = VKDS__ELEM_COPY;
  a.input_count = 1;
  a.inputs[0] = in;
  a.count = in ? in->count : 0;
  return a;
}

static vkds__alg describe_transform(const char *name, const vkds_seq *in1, const vkds_seq *in2, const vkds_seq *out,
                                    const char *op) {
  vkds__alg a = describe_copy(name, in1, out);
  a.elem = VKDS__ELEM_GLSL;
  a.glsl = op;
  a.in_place_allowed = true;
  if (in2) a.inputs[a.input_count++] = in2;
  return a;
}

vkds_result vkds_fill(vkds_policy *p, const vkds_seq *out, const void *value) {
  vkds__alg a;
  VKDS_CHECK_P(p, describe_fill("vkds_fill", out, value, &a));
  return vkds__alg_run(p, &a);
}
vkds_result vkds_fill_async(vkds_policy *p, const vkds_seq *out, const void *value, vkds_submission **sub) {
  if (sub) *sub = NULL; /* (also when the arguments are refused) */
  vkds__alg a;
  VKDS_CHECK_P(p, describe_fill("vkds_fill_async", out, value, &a));
  return vkds__alg_run_async(p, &a, sub);
}
vkds_result vkds_cmd_fill(const vkds_cmd *c, const vkds_seq *out, const void *value) {
  vkds__alg a;
  VKDS_CHECK_C(c, describe_fill("vkds_cmd_fill", out, value, &a));
  return vkds__alg_record(c, &a, (vkds_view){0});
}

vkds_result vkds_copy(vkds_policy *p, const vkds_seq *in, const vkds_seq *out) {
  vkds__alg a = describe_copy("vkds_copy", in, out);
  return vkds__alg_run(p, &a);
}
vkds_result vkds_copy_async(vkds_policy *p, const vkds_seq *in, const vkds_seq *out, vkds_submission **sub) {
  if (sub) *sub = NULL; /* (also when the arguments are refused) */
  vkds__alg a = describe_copy("vkds_copy_async", in, out);
  return vkds__alg_run_async(p, &a, sub);
}
vkds_result vkds_cmd_copy(const vkds_cmd *c, const vkds_seq *in, const vkds_seq *out) {
  vkds__alg a = describe_copy("vkds_cmd_copy", in, out);
  return vkds__alg_record(c, &a, (vkds_view){0});
}

vkds_result vkds_transform(vkds_policy *p, const vkds_seq *in, const vkds_seq *out, const char *op) {
  vkds__alg a = describe_transform("vkds_transform", in, NULL, out, op);
  return vkds__alg_run(p, &a);
}
vkds_result vkds_transform_async(vkds_policy *p, const vkds_seq *in, const vkds_seq *out, const char *op,
                                 vkds_submission **sub) {
  if (sub) *sub = NULL; /* (also when the arguments are refused) */
  vkds__alg a = describe_transform("vkds_transform_async", in, NULL, out, op);
  return vkds__alg_run_async(p, &a, sub);
}
vkds_result vkds_cmd_transform(const vkds_cmd *c, const vkds_seq *in, const vkds_seq *out, const char *op) {
  vkds__alg a = describe_transform("vkds_cmd_transform", in, NULL, out, op);
  return vkds__alg_record(c, &a, (vkds_view){0});
}

/* Two inputs: a NULL second input must not read as "one input". */
static vkds_result second_input(const char *name, const vkds_seq *in2) {
  return in2 ? VKDS_SUCCESS : vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: input 1 is NULL", name);
}

vkds_result vkds_transform2(vkds_policy *p, const vkds_seq *in1, const vkds_seq *in2, const vkds_seq *out,
                            const char *op) {
  VKDS_CHECK_P(p, second_input("vkds_transform2", in2));
  vkds__alg a = describe_transform("vkds_transform2", in1, in2, out, op);
  return vkds__alg_run(p, &a);
}
vkds_result vkds_transform2_async(vkds_policy *p, const vkds_seq *in1, const vkds_seq *in2, const vkds_seq *out,
                                  const char *op, vkds_submission **sub) {
  if (sub) *sub = NULL; /* (also when the arguments are refused) */
  VKDS_CHECK_P(p, second_input("vkds_transform2_async", in2));
  vkds__alg a = describe_transform("vkds_transform2_async", in1, in2, out, op);
  return vkds__alg_run_async(p, &a, sub);
}
vkds_result vkds_cmd_transform2(const vkds_cmd *c, const vkds_seq *in1, const vkds_seq *in2, const vkds_seq *out,
                                const char *op) {
  VKDS_CHECK_C(c, second_input("vkds_cmd_transform2", in2));
  vkds__alg a = describe_transform("vkds_cmd_transform2", in1, in2, out, op);
  return vkds__alg_record(c, &a, (vkds_view){0});
}

/* adjacent_difference: element i and the one before it (glsl NULL: a - b); never in
 * place (element i reads what element i - 1's thread would write) */
static vkds__alg describe_adjacent(const char *name, const vkds_seq *in, const vkds_seq *out, const char *op) {
  vkds__alg a = describe_copy(name, in, out);
  a.elem = VKDS__ELEM_ADJACENT;
  a.glsl = op;
  return a;
}

vkds_result vkds_adjacent_difference(vkds_policy *p, const vkds_seq *in, const vkds_seq *out, const char *op) {
  vkds__alg a = describe_adjacent("vkds_adjacent_difference", in, out, op);
  return vkds__alg_run(p, &a);
}
vkds_result vkds_adjacent_difference_async(vkds_policy *p, const vkds_seq *in, const vkds_seq *out, const char *op,
                                           vkds_submission **sub) {
  if (sub) *sub = NULL; /* (also when the arguments are refused) */
  vkds__alg a = describe_adjacent("vkds_adjacent_difference_async", in, out, op);
  return vkds__alg_run_async(p, &a, sub);
}
vkds_result vkds_cmd_adjacent_difference(const vkds_cmd *c, const vkds_seq *in, const vkds_seq *out, const char *op) {
  vkds__alg a = describe_adjacent("vkds_cmd_adjacent_difference", in, out, op);
  return vkds__alg_record(c, &a, (vkds_view){0});
}
