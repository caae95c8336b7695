/* tests/test_shaders.c: the build's embedded SPIR-V (glslang -> spirv-val -> spirv-opt)
 * dispatched on every resource, every element checked on the host. */
#include "harness.h"

START_TEST(embedded_kernel_on_every_resource) {
  vkds_context *ctx = harness_context();
  for (uint32_t i = 0; i < vkds_context_resource_count(ctx); ++i) {
    vkds_self_test_result st;
    /* not a multiple of the work-group size: the tail must be exact too */
    ck_assert_vkds(vkds_resource_self_test(vkds_context_resource(ctx, i),
                                           &(vkds_self_test_info){.count = 1000003, .round_trips = 3,
                                                                  .fill_repeats = 2}, &st));
    ck_assert_uint_eq(st.count, 1000003);
    ck_assert_uint_eq(st.mismatches, 0);
    ck_assert_uint_eq(st.dispatches, 1);
    ck_assert(st.round_trip_ns > 0);
    ck_assert(st.fill_ns > 0);
  }
  vkds_context_destroy(ctx);
}
END_TEST

START_TEST(split_dispatches_cover_every_element) {
  vkds_context *ctx = harness_context();
  /* 7 groups per dispatch: 1000003 elements are 3907 groups, so 559 dispatches */
  vkds_self_test_result st;
  ck_assert_vkds(vkds_resource_self_test(vkds_context_resource(ctx, 0),
                                         &(vkds_self_test_info){.count = 1000003, .max_group_count = 7,
                                                                .round_trips = 1, .fill_repeats = 1}, &st));
  ck_assert_uint_eq(st.dispatches, 559);
  ck_assert_uint_eq(st.mismatches, 0);
  vkds_context_destroy(ctx);
}
END_TEST

START_TEST(tiny_counts) {
  vkds_context *ctx = harness_context();
  static const uint32_t counts[] = {1, 255, 256, 257};
  for (int i = 0; i < 4; ++i) {
    vkds_self_test_result st;
    ck_assert_vkds(vkds_resource_self_test(vkds_context_resource(ctx, 0),
                                           &(vkds_self_test_info){.count = counts[i], .round_trips = 1,
                                                                  .fill_repeats = 1}, &st));
    ck_assert_uint_eq(st.count, counts[i]);
  }
  vkds_context_destroy(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("shaders");
  TCase *tc = harness_tcase("shaders");
  tcase_add_test(tc, embedded_kernel_on_every_resource);
  tcase_add_test(tc, split_dispatches_cover_every_element);
  tcase_add_test(tc, tiny_counts);
  suite_add_tcase(s, tc);
  return harness_run(s);
}
