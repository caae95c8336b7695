/* tests/test_errors.c: failures are named, explained and never crash. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>

#include "harness.h"

START_TEST(result_strings) {
#define X(name, value, text) ck_assert_str_eq(vkds_result_str(name), text);
  VKDS_RESULT_LIST(X)
#undef X
  ck_assert_str_eq(vkds_result_str((vkds_result)12345), "unknown result");
  ck_assert_int_eq(VKDS_SUCCESS, 0);
  /* every error is negative and distinct */
  int seen[64] = {0};
#define X(name, value, text)                                                               \
  ck_assert_int_le(value, 0);                                                              \
  ck_assert_int_eq(seen[-(value)]++, 0);
  VKDS_RESULT_LIST(X)
#undef X
}
END_TEST

START_TEST(null_arguments) {
  vkds_context *ctx = NULL;
  vkds_context_info info = harness_info();
  ck_assert_int_eq(vkds_context_create(NULL, &ctx), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_context_create(&info, NULL), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_str_ne(vkds_last_error_message(), "");
  vkds_resource_info ri;
  vkds_self_test_result st;
  ck_assert_int_eq(vkds_resource_get_info(NULL, &ri), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_resource_vk_handles(NULL, NULL, NULL, NULL), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_resource_self_test(NULL, NULL, &st), VKDS_ERROR_INVALID_ARGUMENT);
  vkds_resource_lock_queue(NULL); /* no-ops */
  vkds_resource_unlock_queue(NULL);

  ctx = harness_context();
  vkds_resource *r = vkds_context_resource(ctx, 0);
  ck_assert_int_eq(vkds_resource_get_info(r, NULL), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_resource_self_test(r, NULL, NULL), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_vkds(vkds_resource_vk_handles(r, NULL, NULL, NULL)); /* every out is optional */

  /* the policy writer's counters: a NULL policy or a resource it does not have is
   * nothing in flight and nothing counted (these crashed before, issue 14) */
  ck_assert_uint_eq(vkds_policy_in_flight(NULL, 0), 0);
  ck_assert(!vkds_policy_count_in_flight(NULL, 0, 0));
  vkds_policy *pol = NULL;
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_DYNAMIC_LOAD, .resources = {.context = ctx}},
                                    &pol));
  ck_assert_uint_eq(vkds_policy_in_flight(pol, 0), 0);
  ck_assert_uint_eq(vkds_policy_in_flight(pol, 1u << 30), 0);
  ck_assert(!vkds_policy_count_in_flight(pol, 1u << 30, 0));
  vkds_policy_release(pol);
  vkds_context_destroy(ctx);
}
END_TEST

static atomic_int errors_logged;
static char logged[1024];
static void capture(void *user, vkds_log_level level, vkds_log_source source, const char *msg) {
  (void)user;
  if (source == VKDS_LOG_SOURCE_VKDS && level == VKDS_LOG_ERROR) {
    atomic_fetch_add(&errors_logged, 1);
    strncpy(logged, msg, sizeof logged - 1);
  }
  harness_log(NULL, level, source, msg);
}

START_TEST(no_vulkan_loader) {
  static const char *not_loaders[] = {"/nonexistent/libvulkan.so.1", "libc.so.6"};
  for (int i = 0; i < 2; ++i) {
    vkds_context_info info = harness_info();
    info.vulkan_library = not_loaders[i];
    info.log = capture;
    atomic_store(&errors_logged, 0);
    vkds_context *ctx = NULL;
    ck_assert_int_eq(vkds_context_create(&info, &ctx), VKDS_ERROR_NO_VULKAN);
    ck_assert_ptr_null(ctx);
    /* the logger got the details, and so did the thread's last error */
    ck_assert_int_eq(atomic_load(&errors_logged), 1);
    ck_assert_str_eq(logged, vkds_last_error_message());
    ck_assert_ptr_nonnull(strstr(logged, not_loaders[i]));
    /* a path of the caller's own is not the system's package to install */
    ck_assert_ptr_null(strstr(logged, "install libvulkan1"));
  }
}
END_TEST

/* "" is unset, like the info's other strings (dlopen("") opened the program itself,
 * which found a loader only where the program links one, and failed naming no library,
 * " has no vkGetInstanceProcAddr", where it does not; a new-user probe) */
START_TEST(empty_vulkan_library_is_the_default) {
  vkds_context_info info = harness_info();
  info.vulkan_library = "";
  vkds_context *ctx = NULL;
  ck_assert_int_eq(vkds_context_create(&info, &ctx), VKDS_SUCCESS);
  ck_assert_uint_gt(vkds_context_resource_count(ctx), 0);
  vkds_context_destroy(ctx);
}
END_TEST

START_TEST(validation_layer_missing) {
  /* the loader finds explicit layers through VK_LAYER_PATH when it is set */
  harness_setenv("VK_LAYER_PATH", "/nonexistent");
  vkds_context_info info = harness_info();
  vkds_context *ctx = NULL;
  ck_assert_int_eq(vkds_context_create(&info, &ctx), VKDS_ERROR_UNSUPPORTED);
  ck_assert_ptr_null(ctx);
  ck_assert_int_eq(vkds_last_vk_result(), VK_ERROR_LAYER_NOT_PRESENT); /* the VkResult is kept */
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "VK_LAYER_KHRONOS_validation"));
  /* without validation the same machine works */
  info.validation = false;
  info.ignore_env = true;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  ck_assert(!vkds_context_validation_enabled(ctx));
  vkds_context_destroy(ctx);
}
END_TEST

START_TEST(validation_from_environment) {
  vkds_context_info info = harness_info();
  info.validation = false;
  harness_setenv("VKDS_VALIDATION", "1");
  vkds_context *ctx = NULL;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  ck_assert(vkds_context_validation_enabled(ctx));
  vkds_context_destroy(ctx);
  harness_setenv("VKDS_VALIDATION", "0");
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  ck_assert(!vkds_context_validation_enabled(ctx));
  vkds_context_destroy(ctx);
}
END_TEST

START_TEST(self_test_beyond_the_storage_range) {
  vkds_context *ctx = harness_context();
  vkds_resource *r = vkds_context_resource(ctx, 0);
  vkds_resource_info ri;
  ck_assert_vkds(vkds_resource_get_info(r, &ri));
  vkds_self_test_result st;
  if (ri.max_storage_buffer_range < UINT32_MAX / 4 * 4) {
    uint32_t count = ri.max_storage_buffer_range / 4 + 1;
    ck_assert_int_eq(vkds_resource_self_test(r, &(vkds_self_test_info){.count = count}, &st),
                     VKDS_ERROR_LIMIT_EXCEEDED);
  }
  vkds_context_destroy(ctx);
}
END_TEST

/* Proves the harness's premise: a validation error made through a vkds context reaches
 * the logger (and would fail the test). */
START_TEST(validation_messages_reach_the_logger) {
  vkds_context *ctx = harness_context();
  VkDevice dev;
  ck_assert_vkds(vkds_resource_vk_handles(vkds_context_resource(ctx, 0), NULL, &dev, NULL));
  PFN_vkCreateBuffer create_buffer =
      (PFN_vkCreateBuffer)vkGetDeviceProcAddr(dev, "vkCreateBuffer");
  PFN_vkDestroyBuffer destroy_buffer =
      (PFN_vkDestroyBuffer)vkGetDeviceProcAddr(dev, "vkDestroyBuffer");
  VkBufferCreateInfo bad = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = 0, /* invalid */
                            .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT};
  VkBuffer b = VK_NULL_HANDLE;
  create_buffer(dev, &bad, NULL, &b);
  if (b) destroy_buffer(dev, b, NULL);
  ck_assert_int_gt(harness_validation_messages(), 0);
  harness_forget_validation_messages(); /* expected here: let teardown pass */
  vkds_context_destroy(ctx);
}
END_TEST

/* Every failure reaches the context's logger once, the argument checks a public call
 * makes before it looks at its policy's context included (README: the logger receives
 * the same messages as vkds_last_error_message). */
static _Atomic int n_logged;
static char last_logged[1024];
static void counting_log(void *user, vkds_log_level level, vkds_log_source source, const char *text) {
  (void)user;
  if (level < VKDS_LOG_ERROR || source != VKDS_LOG_SOURCE_VKDS) return;
  ++n_logged;
  snprintf(last_logged, sizeof last_logged, "%s", text);
}

/* `call` failed with `want`, and the logger got exactly its message. */
#define LOGGED_ONCE(want, call)                                                                              \
  do {                                                                                                       \
    n_logged = 0;                                                                                              \
    ck_assert_int_eq((call), (want));                                                                        \
    ck_assert_int_eq(n_logged, 1);                                                                             \
    ck_assert_str_eq(last_logged, vkds_last_error_message());                                                \
  } while (0)

static void *VKAPI_PTR no_memory(void *user, size_t size, size_t align, VkSystemAllocationScope scope) {
  (void)user, (void)size, (void)align, (void)scope;
  return NULL;
}
static void *VKAPI_PTR no_more_memory(void *user, void *old, size_t size, size_t align, VkSystemAllocationScope scope) {
  (void)user, (void)old, (void)size, (void)align, (void)scope;
  return NULL;
}
static void VKAPI_PTR free_nothing(void *user, void *memory) { (void)user, (void)memory; }

START_TEST(argument_errors_reach_the_logger) {
  vkds_context_info info = harness_info();
  info.log = counting_log;
  vkds_context *ctx;
  vkds_policy *pol;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = {.context = ctx}}, &pol));
  float f[8] = {0};
  uint32_t u[8] = {0}, u7[7] = {0};
  vkds_seq fs = vkds_seq_host(f, 8, VKDS_F32), us = vkds_seq_host(u, 8, VKDS_U32), u7s = vkds_seq_host(u7, 7, VKDS_U32);
  const vkds_result E = VKDS_ERROR_INVALID_ARGUMENT;
  LOGGED_ONCE(E, vkds_fill(pol, &fs, NULL));
  LOGGED_ONCE(E, vkds_histogram_even(pol, &fs, NULL, NULL, &us));
  LOGGED_ONCE(E, vkds_sort(pol, &us, (vkds_sort_order)9));
  LOGGED_ONCE(E, vkds_sort_by_key(pol, &us, &u7s, VKDS_SORT_ASCENDING));
  LOGGED_ONCE(E, vkds_merge_sort(pol, &us, NULL));
  LOGGED_ONCE(E, vkds_lower_bound(pol, &fs, &us, &us, VKDS_SORT_ASCENDING));
  LOGGED_ONCE(E, vkds_partition(pol, &fs, &fs, NULL, "x > 0.0", &(uint64_t){0}));
  LOGGED_ONCE(E, vkds_cmd_fill(&(vkds_cmd){.resource = vkds_context_resource(ctx, 0)}, &fs, f));
  /* an invalid sequence, named by the call that got it */
  LOGGED_ONCE(E, vkds_reduce(pol, &(vkds_seq){0}, NULL, NULL, f));
  ck_assert_ptr_nonnull(strstr(last_logged, "vkds_reduce: input 0:"));
  /* a task without a function, refused before a resource is selected: heard, and named
   * by the call that was made */
  LOGGED_ONCE(E, vkds_submit(pol, &(vkds_task_info){0}, NULL));
  ck_assert_msg(strstr(last_logged, "vkds_submit: ") != NULL, "%s", last_logged);
  LOGGED_ONCE(E, vkds_try_submit(pol, NULL, NULL));
  ck_assert_msg(strstr(last_logged, "vkds_try_submit: ") != NULL, "%s", last_logged);
  /* checks made after the context is known, as before */
  LOGGED_ONCE(E, vkds_copy(pol, &fs, &u7s));
  /* a sequence that contains itself is named once, not once per level */
  vkds_seq loop = vkds_seq_reverse(&fs);
  loop.base = &loop;
  LOGGED_ONCE(E, vkds_reduce(pol, &loop, NULL, NULL, f));
  ck_assert_ptr_null(strstr(last_logged, "base: base:"));
  ck_assert_ptr_nonnull(strstr(last_logged, "contain itself"));
  /* the loser of two initializations of one deferred policy gets an answer, not an error:
   * its message is kept, but logged below VKDS_LOG_ERROR */
  vkds_policy *deferred;
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .deferred = true}, &deferred));
  vkds_policy_resources all = {.context = ctx};
  ck_assert_vkds(vkds_policy_init(deferred, &all));
  n_logged = 0;
  ck_assert_int_eq(vkds_policy_init(deferred, &all), VKDS_ERROR_ALREADY_INITIALIZED);
  ck_assert_int_eq(n_logged, 0);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "already initialized"));
  /* named by the call (an embedding probe) */
  ck_assert_msg(strstr(vkds_last_error_message(), "vkds_policy_init: policy 'fixed'") != NULL, "%s",
                vkds_last_error_message());
  vkds_policy_release(deferred);
  /* a compile error under a long kernel name: the name clipped, glslang's cause kept (a
   * 5,000-byte name filled the 1 KiB message by itself); one without a name says whose */
  char *name = malloc(5001);
  memset(name, 'k', 5000), name[5000] = '\0';
  const char *src = "#version 450\nlayout(local_size_x = 1) in;\nvoid main() { undeclared_thing = 1; }\n";
  vkds_kernel *k = NULL;
  n_logged = 0;
  ck_assert_int_eq(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = src, .name = name}, &k), VKDS_ERROR_COMPILE);
  ck_assert_int_eq(n_logged, 1);
  ck_assert_msg(strstr(last_logged, "kkk...: ") && strstr(last_logged, "undeclared_thing"), "%s", last_logged);
  free(name);
  ck_assert_int_eq(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = src}, &k), VKDS_ERROR_COMPILE);
  ck_assert_msg(strstr(last_logged, "a GLSL kernel: "), "%s", last_logged);
  vkds_policy_release(pol);
  vkds_context_destroy(ctx);
  /* a refused allocator reaches the logger the same info gives */
  n_logged = 0;
  info.allocator = &(VkAllocationCallbacks){.pfnAllocation = NULL};
  vkds_context *none = NULL;
  ck_assert_int_eq(vkds_context_create(&info, &none), E);
  ck_assert_int_eq(n_logged, 1);
  ck_assert_msg(strstr(last_logged, "allocator"), "%s", last_logged);
  /* an allocator that has no memory at all: the context's own allocation fails, named and
   * heard (it said "out of host memory: context", unlogged; an embedding probe) */
  n_logged = 0;
  info.allocator = &(VkAllocationCallbacks){.pfnAllocation = no_memory, .pfnReallocation = no_more_memory,
                                            .pfnFree = free_nothing};
  ck_assert_int_eq(vkds_context_create(&info, &none), VKDS_ERROR_OUT_OF_HOST_MEMORY);
  ck_assert_ptr_null(none);
  ck_assert_int_eq(n_logged, 1);
  ck_assert_str_eq(last_logged, vkds_last_error_message());
  ck_assert_msg(strstr(last_logged, "vkds_context_create: "), "%s", last_logged);
}
END_TEST

/* A message longer than the thread's 1 KiB buffer ends in "..." (it was cut mid-word,
 * with nothing to say so). */
START_TEST(long_messages_say_they_were_cut) {
  vkds_context *ctx = harness_context();
  const char *src = "#version 450\nlayout(local_size_x = 1) in;\nvoid main() {}\n";
  char *entry = malloc(3001);
  memset(entry, 'e', 3000), entry[3000] = '\0';
  vkds_kernel *k = NULL;
  ck_assert_int_eq(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = src, .entry = entry}, &k),
                   VKDS_ERROR_INVALID_ARGUMENT);
  const char *m = vkds_last_error_message();
  ck_assert_uint_eq(strlen(m), 1023);
  ck_assert_str_eq(m + 1020, "...");
  free(entry);
  vkds_context_destroy(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("errors");
  TCase *tc = harness_tcase("errors");
  tcase_add_test(tc, result_strings);
  tcase_add_test(tc, null_arguments);
  tcase_add_test(tc, no_vulkan_loader);
  tcase_add_test(tc, empty_vulkan_library_is_the_default);
  tcase_add_test(tc, validation_layer_missing);
  tcase_add_test(tc, validation_from_environment);
  tcase_add_test(tc, self_test_beyond_the_storage_range);
  tcase_add_test(tc, validation_messages_reach_the_logger);
  tcase_add_test(tc, argument_errors_reach_the_logger);
  tcase_add_test(tc, long_messages_say_they_were_cut);
  suite_add_tcase(s, tc);
  return harness_run(s);
}
