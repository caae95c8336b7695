/* tests/multi_device.c */
#include "multi_device.h"

#include <check.h>
#include <string.h>

#include "harness.h"



static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT sev,
                                                 VkDebugUtilsMessageTypeFlagsEXT type,
                                                 const VkDebugUtilsMessengerCallbackDataEXT *d,
                                                 void *user) {
  (void)type, (void)user;
  harness_log(NULL, sev >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? VKDS_LOG_ERROR : VKDS_LOG_WARN,
              VKDS_LOG_SOURCE_VALIDATION, d->pMessage);
  return VK_FALSE;
}

void app_create(app *a) {
  __typeof__(a->want) want = a->want; /* the only field the caller sets */
  memset(a, 0, sizeof *a);
  a->want = want;
  VkDebugUtilsMessengerCreateInfoEXT mci = {
      .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
      .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
      .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
      .pfnUserCallback = on_message};
  const char *layer = "VK_LAYER_KHRONOS_validation";
  const char *ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
  VkApplicationInfo ai = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                          .apiVersion = a->want.v13 ? VK_API_VERSION_1_3 : VK_API_VERSION_1_2};
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
                                              .timelineSemaphore = VK_TRUE, .bufferDeviceAddress = a->want.address};
  a->features = (VkPhysicalDeviceFeatures2){.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &a->f12};
  a->features.features.shaderInt64 = a->want.int64;
  a->features.features.shaderFloat64 = a->want.float64;
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
void app_use_and_destroy(app *a) {
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

void describe(app *a, vkds_embed_queue q[DEVICES], vkds_embed_device ed[DEVICES], vkds_embed_info *ei) {
  for (int d = 0; d < DEVICES; ++d) {
    q[d] = (vkds_embed_queue){.queue = a->queue[d], .family = a->family, .index = 0};
    ed[d] = (vkds_embed_device){.physical_device = a->phys, .device = a->dev[d], .queue_count = 1,
                                .queues = &q[d], .enabled_features = &a->features};
  }
  *ei = (vkds_embed_info){.instance = a->instance, .api_version = a->want.v13 ? VK_API_VERSION_1_3 : VK_API_VERSION_1_2,
                          .debug_utils = true, .device_count = DEVICES, .devices = ed};
}


vkds_context *app_context(app *a) {
  static vkds_embed_queue q[DEVICES];
  static vkds_embed_device ed[DEVICES];
  static vkds_embed_info ei;
  describe(a, q, ed, &ei);
  vkds_context_info info = harness_info();
  info.embed = &ei;
  vkds_context *ctx = NULL;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  return ctx;
}
