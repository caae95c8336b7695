/* tests/test_embedding.c: an application that owns its Vulkan objects hands them to
 * vkds. Here the "application" creates three VkDevices on the first physical device
 * (lavapipe on a machine without a GPU) and vkds uses them as three resources. */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include <vulkan/vulkan.h>

#include "gpu_counter.h"
#include "harness.h"

#include "multi_device.h"

static atomic_int locks, unlocks;
static void count_lock(void *user, VkQueue q) {
  (void)user, (void)q;
  atomic_fetch_add(&locks, 1);
}
static void count_unlock(void *user, VkQueue q) {
  (void)user, (void)q;
  atomic_fetch_add(&unlocks, 1);
}

START_TEST(three_devices_as_three_resources) {
  app a = {0};
  app_create(&a);
  vkds_embed_queue q[DEVICES];
  vkds_embed_device ed[DEVICES];
  vkds_embed_info ei;
  describe(&a, q, ed, &ei);
  ed[1].queue_lock = count_lock;
  ed[1].queue_unlock = count_unlock;
  vkds_context_info info = harness_info();
  info.embed = &ei;
  vkds_context *ctx = NULL;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  ck_assert_ptr_eq(vkds_context_vk_instance(ctx), a.instance);
  ck_assert_uint_eq(vkds_context_device_count(ctx), DEVICES);
  ck_assert_uint_eq(vkds_context_resource_count(ctx), DEVICES);
  for (uint32_t i = 0; i < DEVICES; ++i) {
    vkds_resource *r = vkds_context_resource(ctx, i);
    vkds_resource_info ri;
    ck_assert_vkds(vkds_resource_get_info(r, &ri));
    ck_assert(ri.adopted);
    ck_assert_uint_eq(ri.device_index, i);
    ck_assert_uint_eq(ri.queue_family, a.family);
    ck_assert(ri.timeline_semaphore);
    ck_assert(!ri.buffer_device_address); /* the application did not enable it */
    VkPhysicalDevice p;
    VkDevice dev;
    VkQueue queue;
    ck_assert_vkds(vkds_resource_vk_handles(r, &p, &dev, &queue));
    ck_assert_ptr_eq(p, a.phys);
    ck_assert_ptr_eq(dev, a.dev[i]);
    ck_assert_ptr_eq(queue, a.queue[i]);
    /* real work through each adopted device */
    vkds_self_test_result st;
    ck_assert_vkds(vkds_resource_self_test(r, &(vkds_self_test_info){.count = 10000, .round_trips = 3,
                                                                     .fill_repeats = 1}, &st));
    ck_assert_uint_eq(st.mismatches, 0);
  }
  /* only the device with a lock callback used it, balanced */
  ck_assert_int_gt(atomic_load(&locks), 0);
  ck_assert_int_eq(atomic_load(&locks), atomic_load(&unlocks));
  vkds_context_destroy(ctx);
  app_use_and_destroy(&a); /* vkds destroyed none of it */
}
END_TEST

/* An application's Vulkan 1.3 devices without maintenance4 (which vkds enables on its own
 * devices where they have it): kernels compiled for SPIR-V 1.6 would declare their work
 * group size with LocalSizeId, which needs it (every launch was a validation error), so
 * GLSL is compiled for Vulkan 1.2 there. A run-time GLSL kernel and an algorithm, checked,
 * with validation on. */
static const char fill_glsl[] =
    "#version 450\n"
    "#include \"vkds.glsl\"\n"
    "layout(local_size_x = 64) in;\n"
    "VKDS_VIEW(uint, 4, Words)\n"
    "#define VKDS_ARGS uint n; Words out_;\n"
    "VKDS_DECLARE_ARGS\n"
    "void main() {\n"
    "  uint64_t i = vkds_global_index();\n"
    "  if (i < VKDS_ARG(n)) Words_store(VKDS_ARG(out_), i, uint(i) * 3u);\n"
    "}\n";
typedef struct fill_args {
  uint32_t n;
  vkds_view out;
} fill_args;

/* A fixed policy on `r` and the fill kernel, for the tests of an application's devices. */
static void open_fill(vkds_context *ctx, vkds_resource *r, vkds_policy **p, vkds_kernel **k) {
  ck_assert_vkds(vkds_policy_create(
      &(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = {.resource_count = 1, .resources = (void *[]){r}}}, p));
  static const vkds_arg desc[] = {{.kind = VKDS_ARG_UINT, .offset = offsetof(fill_args, n), .name = "n"},
                                  {.kind = VKDS_ARG_VIEW, .offset = offsetof(fill_args, out), .name = "out_"},
                                  {0}};
  ck_assert_vkds(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = fill_glsl, .args = desc, .name = "fill"}, k));
}

START_TEST(vulkan_13_devices_without_maintenance4) {
  app a = {.want = {.address = true, .int64 = true, .v13 = true}};
  app_create(&a);
  vkds_context *ctx = app_context(&a);
  vkds_resource *r = vkds_context_resource(ctx, 0);
  vkds_policy *p;
  vkds_kernel *k;
  open_fill(ctx, r, &p, &k);
  enum { N = 1000 };
  vkds_buffer *b;
  ck_assert_vkds(vkds_buffer_create(r, &(vkds_buffer_info){.size = 4 * N}, &b));
  fill_args args = {.n = N, .out = vkds_view_of(b)};
  vkds_submission *s;
  ck_assert_vkds(vkds_launch(p, k, &(vkds_launch_info){.global = {N}, .args = &args}, &s));
  ck_assert_vkds(vkds_submission_wait(s));
  vkds_submission_release(s);
  static uint32_t got[N];
  ck_assert_vkds(vkds_download(r, got, vkds_view_of(b), sizeof got));
  for (uint32_t i = 0; i < N; ++i) ck_assert_uint_eq(got[i], 3u * i);
  uint32_t sum = 0;
  vkds_seq seq = vkds_seq_buffer(vkds_view_of(b), VKDS_U32);
  ck_assert_vkds(vkds_reduce(p, &seq, NULL, NULL, &sum));
  ck_assert_uint_eq(sum, 3u * N * (N - 1) / 2);
  ck_assert_int_eq(harness_validation_messages(), 0);
  vkds_buffer_destroy(b);
  vkds_kernel_destroy(k);
  vkds_policy_release(p);
  vkds_context_destroy(ctx);
  app_use_and_destroy(&a);
}
END_TEST

/* A kernel that needs a feature the application's device has off (its enabled_features
 * say bufferDeviceAddress is off): refused before its module reaches the driver (it was
 * a validation error, then UNSUPPORTED: found by a new-user probe). */
START_TEST(adopted_device_without_a_kernels_feature) {
  app a = {.want = {.address = false, .int64 = true}};
  app_create(&a);
  vkds_context *ctx = app_context(&a);
  vkds_resource *r = vkds_context_resource(ctx, 0);
  vkds_policy *p;
  vkds_kernel *k;
  open_fill(ctx, r, &p, &k);
  vkds_buffer *b;
  ck_assert_vkds(vkds_buffer_create(r, &(vkds_buffer_info){.size = 64}, &b));
  fill_args args = {.n = 16, .out = vkds_view_of(b)};
  ck_assert_int_eq(vkds_launch(p, k, &(vkds_launch_info){.global = {16}, .args = &args}, NULL), VKDS_ERROR_UNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "bufferDeviceAddress"));
  /* an algorithm names the one feature missing (it named both whichever it was: a probe) */
  uint32_t sum = 0;
  vkds_seq s = vkds_seq_counting(0, 16, VKDS_U32);
  ck_assert_int_eq(vkds_reduce(p, &s, NULL, NULL, &sum), VKDS_ERROR_UNSUPPORTED);
  ck_assert_msg(strstr(vkds_last_error_message(), "does not have bufferDeviceAddress enabled"), "%s",
                vkds_last_error_message());
  ck_assert_int_eq(harness_validation_messages(), 0);
  vkds_buffer_destroy(b);
  vkds_kernel_destroy(k);
  vkds_policy_release(p);
  vkds_context_destroy(ctx);
  app_use_and_destroy(&a);
}
END_TEST

START_TEST(adopted_device_needs_timeline_semaphores) {
  app a = {0};
  app_create(&a);
  vkds_embed_queue q[DEVICES];
  vkds_embed_device ed[DEVICES];
  vkds_embed_info ei;
  describe(&a, q, ed, &ei);
  ed[2].enabled_features = NULL; /* vkds cannot know timelines are on */
  vkds_context_info info = harness_info();
  info.embed = &ei;
  vkds_context *ctx = NULL;
  ck_assert_int_eq(vkds_context_create(&info, &ctx), VKDS_ERROR_UNSUPPORTED);
  ck_assert_ptr_null(ctx);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "timelineSemaphore"));
  app_use_and_destroy(&a);
}
END_TEST

START_TEST(bad_embed_descriptions) {
  app a = {0};
  app_create(&a);
  vkds_embed_queue q[DEVICES];
  vkds_embed_device ed[DEVICES];
  vkds_embed_info ei;
  vkds_context_info info = harness_info();
  info.embed = &ei;
  vkds_context *ctx = NULL;

  describe(&a, q, ed, &ei);
  q[0].family = 99;
  ck_assert_int_eq(vkds_context_create(&info, &ctx), VKDS_ERROR_INVALID_ARGUMENT);
  /* an index past the family's queues (7 was below NVIDIA's 16: an index the device was not
   * created with, which vkds cannot tell apart without asking the device for it, invalid
   * usage: session 43 on an H200) */
  describe(&a, q, ed, &ei);
  uint32_t families = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(ed[1].physical_device, &families, NULL);
  VkQueueFamilyProperties props[16];
  families = families < 16 ? families : 16;
  vkGetPhysicalDeviceQueueFamilyProperties(ed[1].physical_device, &families, props);
  ck_assert_uint_lt(q[1].family, families);
  q[1].index = props[q[1].family].queueCount;
  ck_assert_int_eq(vkds_context_create(&info, &ctx), VKDS_ERROR_INVALID_ARGUMENT);
  describe(&a, q, ed, &ei);
  q[2].queue = VK_NULL_HANDLE;
  ck_assert_int_eq(vkds_context_create(&info, &ctx), VKDS_ERROR_INVALID_ARGUMENT);
  describe(&a, q, ed, &ei);
  ed[0].queues = NULL;
  ck_assert_int_eq(vkds_context_create(&info, &ctx), VKDS_ERROR_INVALID_ARGUMENT);
  describe(&a, q, ed, &ei);
  ed[0].queue_count = 0;
  ck_assert_int_eq(vkds_context_create(&info, &ctx), VKDS_ERROR_INVALID_ARGUMENT);
  describe(&a, q, ed, &ei);
  ed[1].queue_lock = count_lock; /* a lock without an unlock */
  ck_assert_int_eq(vkds_context_create(&info, &ctx), VKDS_ERROR_INVALID_ARGUMENT);
  describe(&a, q, ed, &ei);
  ei.instance = VK_NULL_HANDLE;
  ck_assert_int_eq(vkds_context_create(&info, &ctx), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_msg(strstr(vkds_last_error_message(), "embed->instance"), "%s", vkds_last_error_message());
  /* a VkQueue listed twice: two resources would submit to it at once (Vulkan forbids) */
  describe(&a, q, ed, &ei);
  vkds_embed_queue twice[2] = {q[0], q[0]};
  ed[0].queues = twice;
  ed[0].queue_count = 2;
  ck_assert_int_eq(vkds_context_create(&info, &ctx), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_msg(strstr(vkds_last_error_message(), "each VkQueue once"), "%s", vkds_last_error_message());
  describe(&a, q, ed, &ei);
  ed[2] = ed[0]; /* the same device and queue in two entries */
  ck_assert_int_eq(vkds_context_create(&info, &ctx), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_msg(strstr(vkds_last_error_message(), "devices[2].queues[0] is also listed as devices[0].queues[0]"), "%s",
                vkds_last_error_message());
  /* a VkQueue of another VkDevice (an embedding probe: taken, then the layer crashed) */
  describe(&a, q, ed, &ei);
  q[0].queue = q[1].queue;
  ei.device_count = 1; /* (device 1 not listed: its queue appears once) */
  ck_assert_int_eq(vkds_context_create(&info, &ctx), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_msg(strstr(vkds_last_error_message(), "is not the device's queue 0 of family"), "%s",
                vkds_last_error_message());
  describe(&a, q, ed, &ei);
  ei.device_count = 0;
  ck_assert_int_eq(vkds_context_create(&info, &ctx), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_null(ctx);
  /* an instance below Vulkan 1.2 (a probe: taken, then the first buffer called an entry
   * point the loader had left NULL), and features that are not a VkPhysicalDeviceFeatures2 */
  describe(&a, q, ed, &ei);
  ei.api_version = VK_API_VERSION_1_1;
  ck_assert_int_eq(vkds_context_create(&info, &ctx), VKDS_ERROR_UNSUPPORTED);
  ck_assert_msg(strstr(vkds_last_error_message(), "Vulkan 1.2 or later"), "%s", vkds_last_error_message());
  ck_assert_ptr_null(ctx);
  describe(&a, q, ed, &ei);
  VkPhysicalDeviceFeatures2 not_features = *ed[1].enabled_features;
  not_features.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  ed[1].enabled_features = &not_features;
  ck_assert_int_eq(vkds_context_create(&info, &ctx), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_msg(strstr(vkds_last_error_message(), "devices[1].enabled_features is not a VkPhysicalDeviceFeatures2"),
                "%s", vkds_last_error_message());
  ck_assert_ptr_null(ctx);
  /* a VkQueue embedded in two live contexts: both submit to it, so both need a lock
   * (unlocked, two threads' submissions met in the validation layer; a probe) */
  describe(&a, q, ed, &ei);
  vkds_context *first, *second;
  ei.device_count = 1; /* the first context: device 0's queue */
  ck_assert_vkds(vkds_context_create(&info, &first));
  ei.device_count = DEVICES; /* the second: every device's, device 0's too */
  ck_assert_int_eq(vkds_context_create(&info, &ctx), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_msg(strstr(vkds_last_error_message(), "embedded in another live context too"), "%s",
                vkds_last_error_message());
  ed[0].queue_lock = count_lock, ed[0].queue_unlock = count_unlock; /* locked here only: still refused */
  ck_assert_int_eq(vkds_context_create(&info, &ctx), VKDS_ERROR_INVALID_ARGUMENT);
  ed[0] = (vkds_embed_device){0}, ed[0] = ed[1]; /* another device's queue alone: fine */
  ei.device_count = 1;
  ck_assert_vkds(vkds_context_create(&info, &second));
  vkds_context_destroy(second);
  vkds_context_destroy(first);
  describe(&a, q, ed, &ei); /* the first gone, the queue is free again */
  ck_assert_vkds(vkds_context_create(&info, &second));
  vkds_context_destroy(second);
  describe(&a, q, ed, &ei); /* locked in both: the application's lock orders them */
  for (uint32_t d = 0; d < DEVICES; ++d) ed[d].queue_lock = count_lock, ed[d].queue_unlock = count_unlock;
  ck_assert_vkds(vkds_context_create(&info, &first));
  ck_assert_vkds(vkds_context_create(&info, &second));
  vkds_context_destroy(second);
  vkds_context_destroy(first);
  app_use_and_destroy(&a);
}
END_TEST

/* The application's queue lock: a mutex of its own, which its threads hold while they
 * submit or present. */
static pthread_mutex_t app_queue_mutex = PTHREAD_MUTEX_INITIALIZER;
static void app_lock(void *user, VkQueue q) {
  (void)user, (void)q;
  pthread_mutex_lock(&app_queue_mutex);
}
static void app_unlock(void *user, VkQueue q) {
  (void)user, (void)q;
  pthread_mutex_unlock(&app_queue_mutex);
}
static void *hold_app_lock(void *held) {
  pthread_mutex_lock(&app_queue_mutex);
  atomic_store((atomic_bool *)held, true);
  nanosleep(&(struct timespec){.tv_sec = 2}, NULL); /* a present waiting for the display, say */
  pthread_mutex_unlock(&app_queue_mutex);
  return NULL;
}
static vkds_result record_slow(void *user, const vkds_task *task, void **wait_object) {
  (void)wait_object;
  gpu_counter_record(user, task->cmd, 1, 4, 20000);
  return VKDS_SUCCESS;
}
static double seconds_since(const struct timespec *t0) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) * 1e-9;
}

/* vkds_submission_poll never blocks, also on a queue the application locks: a poll of a
 * task still queued (deferred while the GPU was backed up) tried to take the queue to
 * submit it, through the application's lock callback, which blocks (a probe: 1.5 s, and
 * a deadlock when the polling thread held that lock itself). It leaves the submit to
 * vkds's flusher there. */
START_TEST(poll_never_waits_for_the_applications_queue_lock) {
  app a = {0};
  app_create(&a);
  vkds_embed_queue q[DEVICES];
  vkds_embed_device ed[DEVICES];
  vkds_embed_info ei;
  describe(&a, q, ed, &ei);
  ed[0].queue_lock = app_lock;
  ed[0].queue_unlock = app_unlock;
  vkds_context_info info = harness_info();
  info.embed = &ei;
  vkds_context *ctx = NULL;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  vkds_resource *r = vkds_context_resource(ctx, 0);
  gpu_counter c;
  ck_assert_int_eq(gpu_counter_create(&c, r), VK_SUCCESS);
  vkds_backend *b;
  ck_assert_vkds(vkds_backend_create(&(vkds_backend_info){.context = ctx, .resource_count = 1,
                                                          .resources = (void *[]){r}}, &b));
  vkds_selection *sel;
  ck_assert_vkds(vkds_selection_create(b, 0, 0, NULL, &sel));
  enum { TASKS = 4 };
  vkds_submission *s[TASKS];
  bool deferred = false;
  uint32_t ran = 0;
  for (int round = 0; round < 3 && !deferred; ++round) {
    uint64_t calls0, tasks0, calls, tasks;
    vkds_resource_submit_counts(r, &calls0, &tasks0);
    for (int i = 0; i < TASKS; ++i)
      ck_assert_vkds(vkds_selection_submit(sel, &(vkds_task_info){.fn = record_slow, .user = &c}, &s[i]));
    vkds_resource_submit_counts(r, &calls, &tasks);
    deferred = tasks - tasks0 < TASKS; /* the last still queued: the GPU was backed up */
    if (deferred) {
      /* another thread of the application holds its lock for 2 s */
      atomic_bool held = false;
      pthread_t t;
      ck_assert_int_eq(pthread_create(&t, NULL, hold_app_lock, &held), 0);
      while (!atomic_load(&held)) nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
      struct timespec t0;
      clock_gettime(CLOCK_MONOTONIC, &t0);
      vkds_result pr = vkds_submission_poll(s[TASKS - 1]);
      double took = seconds_since(&t0);
      ck_assert_msg(pr == VKDS_ERROR_WOULD_BLOCK || pr == VKDS_SUCCESS, "%s", vkds_result_str(pr));
      ck_assert_msg(took < 1.0, "poll took %.3f s: it waited for the application's queue lock", took);
      pthread_join(t, NULL);
      /* and the polling thread holding that lock itself */
      pthread_mutex_lock(&app_queue_mutex);
      clock_gettime(CLOCK_MONOTONIC, &t0);
      pr = vkds_submission_poll(s[TASKS - 1]);
      took = seconds_since(&t0);
      pthread_mutex_unlock(&app_queue_mutex);
      ck_assert_msg(pr == VKDS_ERROR_WOULD_BLOCK || pr == VKDS_SUCCESS, "%s", vkds_result_str(pr));
      ck_assert_msg(took < 1.0, "poll took %.3f s under the application's own lock", took);
    }
    for (int i = 0; i < TASKS; ++i) {
      ck_assert_vkds(vkds_submission_wait(s[i]));
      vkds_submission_release(s[i]);
    }
    ran += TASKS;
  }
  ck_assert_msg(deferred, "no task was deferred in 3 rounds: nothing tested");
  ck_assert_uint_eq(gpu_counter_value(&c), ran); /* every task ran once */
  vkds_selection_release(sel);
  vkds_backend_destroy(b);
  gpu_counter_destroy(&c);
  vkds_context_destroy(ctx);
  app_use_and_destroy(&a);
}
END_TEST

int main(void) {
  Suite *s = suite_create("embedding");
  TCase *tc = harness_tcase("embedding");
  tcase_add_test(tc, three_devices_as_three_resources);
  tcase_add_test(tc, vulkan_13_devices_without_maintenance4);
  tcase_add_test(tc, adopted_device_without_a_kernels_feature);
  tcase_add_test(tc, adopted_device_needs_timeline_semaphores);
  tcase_add_test(tc, bad_embed_descriptions);
  tcase_add_test(tc, poll_never_waits_for_the_applications_queue_lock);
  suite_add_tcase(s, tc);
  return harness_run(s);
}
