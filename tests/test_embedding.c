/* tests/test_embedding.c: an application that owns its Vulkan objects hands them to
 * vkds. Here the "application" creates three VkDevices on the first physical device
 * (lavapipe on a machine without a GPU) and vkds uses them as three resources. */
#include <stdatomic.h>
#include <string.h>
#include <vulkan/vulkan.h>

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
  describe(&a, q, ed, &ei);
  q[1].index = 7;
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
  describe(&a, q, ed, &ei);
  ei.device_count = 0;
  ck_assert_int_eq(vkds_context_create(&info, &ctx), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_null(ctx);
  app_use_and_destroy(&a);
}
END_TEST

int main(void) {
  Suite *s = suite_create("embedding");
  TCase *tc = harness_tcase("embedding");
  tcase_add_test(tc, three_devices_as_three_resources);
  tcase_add_test(tc, adopted_device_needs_timeline_semaphores);
  tcase_add_test(tc, bad_embed_descriptions);
  suite_add_tcase(s, tc);
  return harness_run(s);
}
