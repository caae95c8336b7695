/* tests/test_embedding.c: an application that owns its Vulkan objects hands them to
 * vkds. Here the "application" creates three VkDevices on the first physical device
 * (lavapipe on a machine without a GPU) and vkds uses them as three resources. */
#include <stdatomic.h>
#include <string.h>
#include <vulkan/vulkan.h>

#include "harness.h"

enum { DEVICES = 3 };

typedef struct app {
  VkInstance instance;
  VkDebugUtilsMessengerEXT messenger;
  VkPhysicalDevice phys;
  uint32_t family;
  VkDevice dev[DEVICES];
  VkQueue queue[DEVICES];
  VkPhysicalDeviceVulkan12Features f12;
  VkPhysicalDeviceFeatures2 features;
} app;

static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT sev,
                                                 VkDebugUtilsMessageTypeFlagsEXT type,
                                                 const VkDebugUtilsMessengerCallbackDataEXT *d,
                                                 void *user) {
  (void)type, (void)user;
  harness_log(NULL, sev >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? VKDS_LOG_ERROR : VKDS_LOG_WARN,
              VKDS_LOG_SOURCE_VALIDATION, d->pMessage);
  return VK_FALSE;
}

static void app_create(app *a) {
  memset(a, 0, sizeof *a);
  VkDebugUtilsMessengerCreateInfoEXT mci = {
      .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
      .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
      .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
      .pfnUserCallback = on_message};
  const char *layer = "VK_LAYER_KHRONOS_validation";
  const char *ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
  VkApplicationInfo ai = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_2};
  VkInstanceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pNext = &mci,
                             .pApplicationInfo = &ai, .enabledLayerCount = 1, .ppEnabledLayerNames = &layer,
                             .enabledExtensionCount = 1, .ppEnabledExtensionNames = &ext};
  ck_assert_int_eq(vkCreateInstance(&ci, NULL, &a->instance), VK_SUCCESS);
  PFN_vkCreateDebugUtilsMessengerEXT create_messenger =
      (PFN_vkCreateDebugUtilsMessengerEXT)vkGetInstanceProcAddr(a->instance, "vkCreateDebugUtilsMessengerEXT");
  ck_assert_int_eq(create_messenger(a->instance, &mci, NULL, &a->messenger), VK_SUCCESS);

  uint32_t n = 1;
  ck_assert_int_ge(vkEnumeratePhysicalDevices(a->instance, &n, &a->phys), 0);
  ck_assert_uint_eq(n, 1);
  VkQueueFamilyProperties fam[16];
  uint32_t nf = 16;
  vkGetPhysicalDeviceQueueFamilyProperties(a->phys, &nf, fam);
  a->family = UINT32_MAX;
  for (uint32_t f = 0; f < nf && a->family == UINT32_MAX; ++f)
    if (fam[f].queueFlags & VK_QUEUE_COMPUTE_BIT) a->family = f;
  ck_assert_uint_ne(a->family, UINT32_MAX);

  a->f12 = (VkPhysicalDeviceVulkan12Features){.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                              .timelineSemaphore = VK_TRUE};
  a->features = (VkPhysicalDeviceFeatures2){.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &a->f12};
  float prio = 1.0f;
  for (int d = 0; d < DEVICES; ++d) {
    VkDeviceQueueCreateInfo q = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                 .queueFamilyIndex = a->family, .queueCount = 1, .pQueuePriorities = &prio};
    VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .pNext = &a->features,
                              .queueCreateInfoCount = 1, .pQueueCreateInfos = &q};
    ck_assert_int_eq(vkCreateDevice(a->phys, &dci, NULL, &a->dev[d]), VK_SUCCESS);
    vkGetDeviceQueue(a->dev[d], a->family, 0, &a->queue[d]);
  }
}

/* The application still owns working devices: use each one, then destroy everything. */
static void app_use_and_destroy(app *a) {
  for (int d = 0; d < DEVICES; ++d) {
    ck_assert_int_eq(vkDeviceWaitIdle(a->dev[d]), VK_SUCCESS);
    VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = 256,
                              .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT};
    VkBuffer b;
    ck_assert_int_eq(vkCreateBuffer(a->dev[d], &bci, NULL, &b), VK_SUCCESS);
    vkDestroyBuffer(a->dev[d], b, NULL);
    vkDestroyDevice(a->dev[d], NULL);
  }
  PFN_vkDestroyDebugUtilsMessengerEXT destroy_messenger =
      (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(a->instance, "vkDestroyDebugUtilsMessengerEXT");
  destroy_messenger(a->instance, a->messenger, NULL);
  vkDestroyInstance(a->instance, NULL);
}

static atomic_int locks, unlocks;
static void count_lock(void *user, VkQueue q) {
  (void)user, (void)q;
  atomic_fetch_add(&locks, 1);
}
static void count_unlock(void *user, VkQueue q) {
  (void)user, (void)q;
  atomic_fetch_add(&unlocks, 1);
}

static void describe(app *a, vkds_embed_queue q[DEVICES], vkds_embed_device ed[DEVICES], vkds_embed_info *ei) {
  for (int d = 0; d < DEVICES; ++d) {
    q[d] = (vkds_embed_queue){.queue = a->queue[d], .family = a->family, .index = 0};
    ed[d] = (vkds_embed_device){.physical_device = a->phys, .device = a->dev[d], .queue_count = 1,
                                .queues = &q[d], .enabled_features = &a->features};
  }
  *ei = (vkds_embed_info){.instance = a->instance, .api_version = VK_API_VERSION_1_2,
                          .debug_utils = true, .device_count = DEVICES, .devices = ed};
}

START_TEST(three_devices_as_three_resources) {
  app a;
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
  app a;
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
  app a;
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
