/* tests/test_lifecycle.c: creating and destroying contexts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>

#include "harness.h"

START_TEST(default_context_has_resources) {
  vkds_context *ctx = harness_context();
  ck_assert_uint_gt(vkds_context_device_count(ctx), 0);
  uint32_t n = vkds_context_resource_count(ctx);
  ck_assert_uint_gt(n, 0);
  ck_assert(vkds_context_validation_enabled(ctx));
  ck_assert_ptr_nonnull(vkds_context_vk_instance(ctx));
  for (uint32_t i = 0; i < n; ++i) {
    vkds_resource *r = vkds_context_resource(ctx, i);
    ck_assert_ptr_nonnull(r);
    ck_assert_ptr_eq(vkds_resource_context(r), ctx);
    vkds_resource_info info;
    ck_assert_vkds(vkds_resource_get_info(r, &info));
    ck_assert_uint_eq(info.index, i);
    ck_assert(!info.adopted);
  }
  ck_assert_ptr_null(vkds_context_resource(ctx, n));
  ck_assert_ptr_null(vkds_context_resource(ctx, UINT32_MAX));
  vkds_context_destroy(ctx);
}
END_TEST

START_TEST(resources_are_ordered_by_device_family_queue) {
  vkds_context *ctx = harness_context();
  vkds_resource_info prev, cur;
  for (uint32_t i = 0; i < vkds_context_resource_count(ctx); ++i) {
    ck_assert_vkds(vkds_resource_get_info(vkds_context_resource(ctx, i), &cur));
    if (i) {
      uint64_t a = ((uint64_t)prev.device_index << 40) | ((uint64_t)prev.queue_family << 20) | prev.queue_index;
      uint64_t b = ((uint64_t)cur.device_index << 40) | ((uint64_t)cur.queue_family << 20) | cur.queue_index;
      ck_assert_uint_lt(a, b);
    }
    prev = cur;
  }
  vkds_context_destroy(ctx);
}
END_TEST

START_TEST(queue_cap_per_family) {
  vkds_context_info info = harness_info();
  info.max_queues_per_family = 1;
  vkds_context *ctx = NULL;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  vkds_resource_info ri;
  for (uint32_t i = 0; i < vkds_context_resource_count(ctx); ++i) {
    ck_assert_vkds(vkds_resource_get_info(vkds_context_resource(ctx, i), &ri));
    ck_assert_uint_eq(ri.queue_index, 0);
  }
  vkds_context_destroy(ctx);
}
END_TEST

START_TEST(several_vkdevices_per_physical_device) {
  vkds_context *one = harness_context();
  vkds_context_info info = harness_info();
  info.devices_per_physical = 3;
  vkds_context *ctx = NULL;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  ck_assert_uint_eq(vkds_context_device_count(ctx), 3 * vkds_context_device_count(one));
  ck_assert_uint_eq(vkds_context_resource_count(ctx), 3 * vkds_context_resource_count(one));
  VkDevice seen[64] = {0};
  for (uint32_t i = 0; i < vkds_context_resource_count(ctx) && i < 64; ++i) {
    vkds_resource *r = vkds_context_resource(ctx, i);
    ck_assert_vkds(vkds_resource_vk_handles(r, NULL, &seen[i], NULL));
    vkds_self_test_result st;
    uint64_t calls0, calls1;
    vkds_resource_submit_counts(r, &calls0, NULL);
    ck_assert_vkds(vkds_resource_self_test(r, &(vkds_self_test_info){.count = 5000, .round_trips = 1, .fill_repeats = 1}, &st));
    /* the self test's submits count as vkds's own (they were left out: a contract probe) */
    vkds_resource_submit_counts(r, &calls1, NULL);
    ck_assert_uint_gt(calls1, calls0);
  }
  ck_assert_ptr_ne(seen[0], seen[vkds_context_resource_count(one)]); /* different VkDevices */
  vkds_context_destroy(ctx);
  vkds_context_destroy(one);
}
END_TEST

START_TEST(repeated_create_destroy) {
  for (int i = 0; i < 5; ++i) vkds_context_destroy(harness_context());
}
END_TEST

START_TEST(destroy_null_is_a_no_op) {
  vkds_context_destroy(NULL);
  ck_assert_uint_eq(vkds_context_resource_count(NULL), 0);
  ck_assert_uint_eq(vkds_context_device_count(NULL), 0);
  ck_assert_ptr_null(vkds_context_resource(NULL, 0));
  ck_assert_ptr_null(vkds_resource_context(NULL));
  ck_assert(!vkds_context_validation_enabled(NULL));
}
END_TEST

/* Counts past what vkds makes at creation are refused at once (100,000 devices a
 * physical device ran for minutes; 2^32 - 1 copy threads asked for 32 GiB; a probe). */
START_TEST(absurd_counts_are_refused) {
  vkds_context_info info = harness_info();
  vkds_context *ctx = (vkds_context *)&info;
  info.devices_per_physical = 100000;
  ck_assert_int_eq(vkds_context_create(&info, &ctx), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_null(ctx);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "devices_per_physical 100000: at most 64"));
  info.devices_per_physical = 0;
  info.host_copy_threads = UINT32_MAX;
  ck_assert_int_eq(vkds_context_create(&info, &ctx), VKDS_ERROR_INVALID_ARGUMENT);
  info.host_copy_threads = 256;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  vkds_context_destroy(ctx);
}
END_TEST

static void *create_and_self_test(void *arg) {
  (void)arg;
  vkds_context_info info = harness_info();
  vkds_context *ctx = NULL;
  if (vkds_context_create(&info, &ctx) != VKDS_SUCCESS) return (void *)1;
  vkds_self_test_result res;
  vkds_result r = vkds_resource_self_test(vkds_context_resource(ctx, 0),
                                          &(vkds_self_test_info){.count = 4096, .round_trips = 2,
                                                                 .fill_repeats = 1},
                                          &res);
  vkds_context_destroy(ctx);
  return r == VKDS_SUCCESS ? NULL : (void *)2;
}

START_TEST(contexts_from_several_threads) {
  enum { THREADS = 4 };
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; ++i) ck_assert_int_eq(pthread_create(&t[i], NULL, create_and_self_test, NULL), 0);
  for (int i = 0; i < THREADS; ++i) {
    void *rc = (void *)-1;
    pthread_join(t[i], &rc);
    ck_assert_ptr_null(rc);
  }
}
END_TEST

/* A context destroyed before the buffers, kernels and policies made from it says so (a
 * warning naming how many buffers and kernels, an error naming the policies), so that
 * the use after free a later vkds_buffer_destroy would be has a line in the log before
 * it. Buffers' memory is freed and kernels are destroyed, while the devices live: the
 * validation layer (on in tests) sees no object left at vkDestroyDevice. With a policy
 * alive, all of that waits for the policy's release. Nothing is said when everything
 * was destroyed. */
static int buffer_warnings, buffer_counts, kernel_warnings, policy_errors;
static char left_buffers[32]; /* "N buffer(s)" */
/* a policy left alive past vkds_context_destroy: the context lives on until its release */
static vkds_policy *left_policy;
static void warning_log(void *user, vkds_log_level level, vkds_log_source source, const char *message) {
  harness_log(user, level, source, message);
  if (level == VKDS_LOG_ERROR && strstr(message, "policies (or backends) made from the context are still alive"))
    ++policy_errors;
  if (level != VKDS_LOG_WARN) return;
  if (strstr(message, "buffer(s) of device 0 were not destroyed first (")) ++buffer_warnings;
  if (strstr(message, left_buffers)) ++buffer_counts;
  if (strstr(message, "1 kernel(s) made from the context (the last made: 'noop') were not destroyed first"))
    ++kernel_warnings;
}

/* A context whose log warning_log counts. */
static vkds_context *counted_context(void) {
  vkds_context_info info = harness_info();
  info.log = warning_log;
  vkds_context *ctx;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  return ctx;
}

/* Destroys ctx while objects made from it are alive: one error says so, and the destroy
 * waits for the last of them. */
static void destroy_while_held(vkds_context *ctx) {
  policy_errors = 0;
  vkds_context_destroy(ctx);
  ck_assert_int_eq(policy_errors, 1);
}

static const char noop_glsl[] = "#version 450\nlayout(local_size_x = 64) in;\nvoid main() {}\n";

START_TEST(destroying_a_context_before_its_objects_warns) {
  vkds_context_info info = harness_info();
  info.log = warning_log;
  for (int leave = 0; leave < 2; ++leave) {
    vkds_context *ctx;
    ck_assert_vkds(vkds_context_create(&info, &ctx));
    /* sub-allocated, with memory of their own (dedicated, imported) and host memory:
     * every kind is destroyed (the latter three leaked, imports to the validation layer) */
    vkds_resource *r0 = vkds_context_resource(ctx, 0);
    vkds_buffer *b[6] = {NULL};
    for (int i = 0; i < 3; ++i) ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = 4096}, &b[i]));
    ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = 4096, .flags = VKDS_BUFFER_DEDICATED}, &b[3]));
    ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = 4096, .memory = VKDS_MEMORY_HOST}, &b[4]));
    uint64_t align = vkds_import_alignment(r0);
    void *mem = NULL;
    if (align) {
      ck_assert_int_eq(posix_memalign(&mem, align, align), 0);
      ck_assert_vkds(vkds_buffer_import_host(r0, mem, align, &b[5]));
    }
    int left = align ? 5 : 4;
    snprintf(left_buffers, sizeof left_buffers, " %d buffer(s)", left);
    vkds_kernel *k;
    ck_assert_vkds(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = noop_glsl, .name = "noop"}, &k));
    vkds_policy *p;
    ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = {.context = ctx}}, &p));
    ck_assert_vkds(vkds_launch(p, k, &(vkds_launch_info){.global = {64}}, NULL)); /* its pipeline made */
    vkds_policy_release(p);
    if (leave)
      ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_ROUND_ROBIN, .resources = {.context = ctx}},
                                        &left_policy));
    vkds_buffer_destroy(b[0]);
    if (!leave) {
      for (int i = 1; i < 6; ++i) vkds_buffer_destroy(b[i]);
      vkds_kernel_destroy(k);
    }
    buffer_warnings = buffer_counts = kernel_warnings = policy_errors = 0;
    vkds_context_destroy(ctx); /* (when left, b[1..5] and k live until the policy's release, then dangle) */
    ck_assert_int_eq(policy_errors, leave);
    if (leave) {
      /* the context waits for its policy: nothing destroyed yet, and the policy still
       * works (it was a use after free); its release destroys the context, with the
       * warnings then */
      ck_assert_int_eq(buffer_warnings, 0);
      ck_assert_vkds(vkds_launch(left_policy, k, &(vkds_launch_info){.global = {64}}, NULL));
      ck_assert_vkds(vkds_policy_wait_all(left_policy, UINT64_MAX));
      vkds_policy_release(left_policy);
      left_policy = NULL;
    }
    free(mem);
    ck_assert_int_eq(buffer_warnings, leave);
    ck_assert_int_eq(buffer_counts, leave);
    ck_assert_int_eq(kernel_warnings, leave);
    ck_assert_int_eq(policy_errors, leave);
  }
}
END_TEST

/* Validation on and no logger: the layer's warnings and errors reach stderr (vkds's
 * messenger replaced the layer's own printing, and an application that asked for
 * validation saw nothing; a packaging probe). The task below breaks a rule on purpose:
 * a fill at an offset that is not a multiple of 4 (harmless to the driver). */
static vkds_result misaligned_fill(void *user, const vkds_task *task, void **wait_object) {
  (void)wait_object;
  vkds_buffer *b = user;
  vkCmdFillBuffer(task->cmd, vkds_buffer_vk(b), vkds_buffer_offset(b) + 2, 4, 0);
  return VKDS_SUCCESS;
}
START_TEST(validation_without_a_logger_goes_to_stderr) {
  vkds_context *ctx;
  ck_assert_vkds(vkds_context_create(&(vkds_context_info){.validation = true, .ignore_env = true}, &ctx));
  vkds_buffer *b;
  ck_assert_vkds(vkds_buffer_create(vkds_context_resource(ctx, 0), &(vkds_buffer_info){.size = 64}, &b));
  vkds_policy *p;
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = {.context = ctx}}, &p));
  char path[] = "/tmp/vkds-stderr-XXXXXX";
  int fd = mkstemp(path), saved = dup(2);
  ck_assert_int_ge(fd, 0);
  fflush(stderr);
  dup2(fd, 2);
  vkds_result r = vkds_submit_and_wait(p, &(vkds_task_info){.fn = misaligned_fill, .user = b});
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  ck_assert_vkds(r);
  char text[8192] = {0};
  ck_assert_int_ge(pread(fd, text, sizeof text - 1, 0), 0);
  close(fd);
  unlink(path);
  ck_assert_msg(strstr(text, "[vkds validation]") && strstr(text, "vkCmdFillBuffer"), "stderr had: %s", text);
  vkds_policy_release(p);
  vkds_buffer_destroy(b);
  vkds_context_destroy(ctx);
}
END_TEST

/* A submission the application still has keeps its policy and the context: releasing it
 * after vkds_context_destroy and the policy's release finishes the call (its host output
 * written) and then destroys the context (both were a use after free). */
START_TEST(a_submission_released_after_the_context) {
  vkds_context *ctx = counted_context();
  vkds_policy *p;
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = {.context = ctx}}, &p));
  enum { N = 4096 };
  static uint32_t data[N];
  uint64_t want = 0;
  for (uint32_t i = 0; i < N; ++i) data[i] = i * 3u, want += data[i];
  vkds_seq in = vkds_seq_host(data, N, VKDS_U32);
  uint64_t sum = 0;
  vkds_submission *s;
  vkds_seq wide = vkds_seq_transform(&in, &(vkds_transform_op){.glsl = "uint64_t(x)", .type = VKDS_U64});
  ck_assert_vkds(vkds_reduce_async(p, &wide, NULL, NULL, &sum, &s));
  vkds_policy_release(p);
  destroy_while_held(ctx); /* deferred: the submission holds the policy, which holds it */
  ck_assert_vkds(vkds_submission_wait(s));
  ck_assert_uint_eq(sum, want);
  vkds_submission_release(s); /* the last: the policy, then the context, go */
}
END_TEST

/* Two more orders (a lifetimes probe; use after free under ASan without the fix): a
 * deferred policy not yet initialized holds the context its memory came from; a
 * backend's selection the application still holds keeps the backend, and so the
 * context, past vkds_backend_destroy and vkds_context_destroy. */
static vkds_result no_work(void *user, const vkds_task *task, void **wait_object) {
  (void)user, (void)task, (void)wait_object;
  return VKDS_SUCCESS;
}
START_TEST(deferred_policies_and_held_selections_keep_the_context) {
  vkds_context *ctx = counted_context();
  vkds_policy *p;
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.deferred = true, .resources = {.context = ctx}}, &p));
  destroy_while_held(ctx);
  vkds_policy_release(p); /* destroys the context */

  ctx = counted_context();
  vkds_backend *b;
  ck_assert_vkds(vkds_backend_create(&(vkds_backend_info){.context = ctx}, &b));
  vkds_selection *sel;
  ck_assert_vkds(vkds_selection_create(b, 0, 0, NULL, &sel));
  ck_assert_vkds(vkds_selection_submit(sel, &(vkds_task_info){.fn = no_work}, NULL));
  destroy_while_held(ctx);
  vkds_backend_destroy(b);     /* waits for the selection */
  vkds_selection_release(sel); /* the backend, then the context, go */
}
END_TEST

/* A context vkds_context_destroy was called on, alive for a policy made before, takes no
 * new policy (or deferred policy's init, or backend): a named error, and the context is
 * still destroyed by the first policy's release (new policies kept it alive; a probe). */
START_TEST(a_destroyed_context_takes_no_new_policies) {
  vkds_context *ctx = counted_context();
  vkds_policy *p, *q = NULL, *deferred;
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = {.context = ctx}}, &p));
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.deferred = true, .resources = {.context = ctx}}, &deferred));
  policy_errors = 0;
  vkds_context_destroy(ctx);
  ck_assert_int_eq(policy_errors, 1);
  ck_assert_int_eq(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_ROUND_ROBIN, .resources = {.context = ctx}}, &q),
                   VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_null(q);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "vkds_policy_create: vkds_context_destroy was called"));
  ck_assert_int_eq(vkds_policy_init(deferred, &(vkds_policy_resources){.context = ctx}), VKDS_ERROR_INVALID_ARGUMENT);
  vkds_backend *b = NULL;
  ck_assert_int_eq(vkds_backend_create(&(vkds_backend_info){.context = ctx}, &b), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_null(b);
  vkds_policy_release(deferred);
  vkds_policy_release(p); /* the last: destroys the context */
}
END_TEST

START_TEST(version_string) {
  char expect[32];
  snprintf(expect, sizeof expect, "%d.%d.%d", VKDS_VERSION_MAJOR, VKDS_VERSION_MINOR, VKDS_VERSION_PATCH);
  ck_assert_str_eq(vkds_version(), expect);
}
END_TEST

int main(void) {
  Suite *s = suite_create("lifecycle");
  TCase *tc = harness_tcase("lifecycle");
  tcase_add_test(tc, default_context_has_resources);
  tcase_add_test(tc, resources_are_ordered_by_device_family_queue);
  tcase_add_test(tc, queue_cap_per_family);
  tcase_add_test(tc, several_vkdevices_per_physical_device);
  tcase_add_test(tc, repeated_create_destroy);
  tcase_add_test(tc, destroy_null_is_a_no_op);
  tcase_add_test(tc, absurd_counts_are_refused);
  tcase_add_test(tc, contexts_from_several_threads);
  tcase_add_test(tc, destroying_a_context_before_its_objects_warns);
  tcase_add_test(tc, validation_without_a_logger_goes_to_stderr);
  tcase_add_test(tc, a_submission_released_after_the_context);
  tcase_add_test(tc, deferred_policies_and_held_selections_keep_the_context);
  tcase_add_test(tc, a_destroyed_context_takes_no_new_policies);
  tcase_add_test(tc, version_string);
  suite_add_tcase(s, tc);
  return harness_run(s);
}
