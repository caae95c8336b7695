/* examples/embedded.c: vkds inside an application that owns its Vulkan objects.
 *
 * The application (a renderer, a game, a simulation) has already made its VkInstance
 * and VkDevice with the plain Vulkan loader. It hands them to vkds, which then works on
 * them without creating or destroying any of them, in two ways:
 *   1. through a policy, like any vkds program (vkds records, submits and waits);
 *   2. recorded into the application's own command buffer with a vkds_cmd_ function,
 *      next to its own work: the application submits it, waits on its own fence, and
 *      reads the result itself.
 *
 * With VKDS_VALIDATION=1 the application enables the validation layer on its instance
 * (vkds cannot: it did not create it) and fails on any message. Exits 77 (a skip, for
 * meson) when no device has the features this needs. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <vkds/vkds.h>
#include <vulkan/vulkan.h>

#define CHECK(call)                                                                            \
  do {                                                                                         \
    vkds_result check_r_ = (call);                                                             \
    if (check_r_ != VKDS_SUCCESS) {                                                            \
      /* (the message begins with the result's name) */                                        \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, vkds_last_error_message()); \
      goto done;                                                                               \
    }                                                                                          \
  } while (0)

/* The application's own Vulkan calls are checked the same way. */
#define VK_CHECK(call)                                                                         \
  do {                                                                                         \
    VkResult check_vr_ = (call);                                                               \
    if (check_vr_ != VK_SUCCESS) {                                                             \
      fprintf(stderr, "%s:%d: %s: VkResult %d\n", __FILE__, __LINE__, #call, (int)check_vr_);  \
      goto done;                                                                               \
    }                                                                                          \
  } while (0)

/* One logger for everything: vkds's own messages, and the validation layer's, which
 * reach it through the application's debug messenger below. Any validation message is
 * a bug, in vkds or here: count them, and fail at the end if there were any. */
static atomic_int validation_messages;
static void logger(void *user, vkds_log_level level, vkds_log_source source, const char *message) {
  (void)user;
  if (source == VKDS_LOG_SOURCE_VALIDATION && level >= VKDS_LOG_WARN) atomic_fetch_add(&validation_messages, 1);
  fprintf(stderr, "[%s] %s\n", source == VKDS_LOG_SOURCE_VALIDATION ? "validation" : "vkds", message);
}

/* An adopted instance keeps its debug messengers: vkds installs none on it, so the
 * application routes the layer's messages itself. */
static VKAPI_ATTR VkBool32 VKAPI_CALL on_vk_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                    VkDebugUtilsMessageTypeFlagsEXT type,
                                                    const VkDebugUtilsMessengerCallbackDataEXT *data, void *user) {
  (void)type;
  logger(user, severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? VKDS_LOG_ERROR : VKDS_LOG_WARN,
         VKDS_LOG_SOURCE_VALIDATION, data->pMessage);
  return VK_FALSE;
}

/* Vulkan queues are externally synchronized: when both the application and vkds submit
 * to one VkQueue, both take this lock. vkds calls queue_lock/queue_unlock around its
 * own submissions; the application does so around its vkQueueSubmit. */
static pthread_mutex_t queue_mutex = PTHREAD_MUTEX_INITIALIZER;
static void lock_queue(void *user, VkQueue q) {
  (void)user, (void)q;
  pthread_mutex_lock(&queue_mutex);
}
static void unlock_queue(void *user, VkQueue q) {
  (void)user, (void)q;
  pthread_mutex_unlock(&queue_mutex);
}

static bool env_on(const char *name) {
  const char *v = getenv(name);
  return v && *v && strcmp(v, "0") != 0 && strcasecmp(v, "false") != 0 && strcasecmp(v, "off") != 0;
}

enum { N = 1 << 16 };
static float data[N];

int main(void) {
  int status = 1;
  /* the application's objects */
  VkInstance instance = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  PFN_vkDestroyDebugUtilsMessengerEXT destroy_messenger = NULL;
  VkDevice device = VK_NULL_HANDLE;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  /* vkds's objects */
  vkds_context *ctx = NULL;
  vkds_policy *pol = NULL;
  vkds_buffer *buf = NULL, *scratch = NULL, *result = NULL;

  /* ---- the application's Vulkan setup, nothing vkds-specific ------------------------ */
  bool validation = env_on("VKDS_VALIDATION");
  const char *layer = "VK_LAYER_KHRONOS_validation";
  const char *instance_ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
  VkDebugUtilsMessengerCreateInfoEXT messenger_info = {
      .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
      .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
      .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
      .pfnUserCallback = on_vk_message};
  /* vkds needs Vulkan 1.2 (timeline semaphores, buffer device address are core there). */
  VkApplicationInfo app_info = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .pApplicationName = "embedded",
                                .apiVersion = VK_API_VERSION_1_2};
  VK_CHECK(vkCreateInstance(&(VkInstanceCreateInfo){.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                                                    .pNext = validation ? &messenger_info : NULL, /* covers creation */
                                                    .pApplicationInfo = &app_info,
                                                    .enabledLayerCount = validation ? 1u : 0u,
                                                    .ppEnabledLayerNames = &layer,
                                                    .enabledExtensionCount = validation ? 1u : 0u,
                                                    .ppEnabledExtensionNames = &instance_ext},
                            NULL, &instance));
  if (validation) {
    PFN_vkCreateDebugUtilsMessengerEXT create_messenger =
        (PFN_vkCreateDebugUtilsMessengerEXT)vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT");
    destroy_messenger =
        (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT");
    VK_CHECK(create_messenger(instance, &messenger_info, NULL, &messenger));
  }

  /* The first device with a compute queue and what the algorithms need:
   * timelineSemaphore (vkds's submissions), bufferDeviceAddress (kernels reach memory
   * through device addresses) and shaderInt64 (64-bit indices in the kernels). */
  VkPhysicalDevice phys = VK_NULL_HANDLE, all[16];
  uint32_t phys_count = 16, family = UINT32_MAX;
  VkResult vr = vkEnumeratePhysicalDevices(instance, &phys_count, all);
  if (vr != VK_SUCCESS && vr != VK_INCOMPLETE) VK_CHECK(vr);
  for (uint32_t d = 0; d < phys_count && phys == VK_NULL_HANDLE; ++d) {
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(all[d], &props);
    VkPhysicalDeviceVulkan12Features has12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceFeatures2 has = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &has12};
    if (props.apiVersion < VK_API_VERSION_1_2) continue;
    vkGetPhysicalDeviceFeatures2(all[d], &has);
    if (!has12.timelineSemaphore || !has12.bufferDeviceAddress || !has.features.shaderInt64) continue;
    VkQueueFamilyProperties families[16];
    uint32_t family_count = 16;
    vkGetPhysicalDeviceQueueFamilyProperties(all[d], &family_count, families);
    for (uint32_t f = 0; f < family_count && family == UINT32_MAX; ++f)
      if (families[f].queueFlags & VK_QUEUE_COMPUTE_BIT) family = f;
    if (family != UINT32_MAX) {
      phys = all[d];
      printf("application: device %s, queue family %u\n", props.deviceName, family);
    }
  }
  if (phys == VK_NULL_HANDLE) {
    fprintf(stderr, "no device with Vulkan 1.2, timelineSemaphore, bufferDeviceAddress and shaderInt64\n");
    status = 77; /* meson's "skipped" */
    goto done;
  }

  /* The features are kept: vkds is told exactly what was enabled (same chain). */
  VkPhysicalDeviceVulkan12Features enabled12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                                .timelineSemaphore = VK_TRUE, .bufferDeviceAddress = VK_TRUE};
  VkPhysicalDeviceFeatures2 enabled = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &enabled12,
                                       .features = {.shaderInt64 = VK_TRUE}};
  float priority = 1.0f;
  VkDeviceQueueCreateInfo queue_info = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                        .queueFamilyIndex = family, .queueCount = 1, .pQueuePriorities = &priority};
  VK_CHECK(vkCreateDevice(phys,
                          &(VkDeviceCreateInfo){.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .pNext = &enabled,
                                                .queueCreateInfoCount = 1, .pQueueCreateInfos = &queue_info},
                          NULL, &device));
  VkQueue queue;
  vkGetDeviceQueue(device, family, 0, &queue);
  VK_CHECK(vkCreateCommandPool(device,
                               &(VkCommandPoolCreateInfo){.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                                          .queueFamilyIndex = family},
                               NULL, &pool));
  VkCommandBuffer cmd;
  VK_CHECK(vkAllocateCommandBuffers(device,
                                    &(VkCommandBufferAllocateInfo){.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                                                   .commandPool = pool,
                                                                   .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                                                   .commandBufferCount = 1},
                                    &cmd));
  VK_CHECK(vkCreateFence(device, &(VkFenceCreateInfo){.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO}, NULL, &fence));

  /* ---- handing them to vkds ---------------------------------------------------------- */
  vkds_embed_queue embed_queue = {.queue = queue, .family = family, .index = 0};
  vkds_embed_device embed_device = {.physical_device = phys,
                                    .device = device,
                                    .queue_count = 1,
                                    .queues = &embed_queue,
                                    .enabled_features = &enabled, /* without it vkds assumes nothing is enabled */
                                    .queue_lock = lock_queue,
                                    .queue_unlock = unlock_queue};
  vkds_embed_info embed = {.instance = instance,
                           .api_version = VK_API_VERSION_1_2,
                           .debug_utils = validation, /* the extension is on only then */
                           .device_count = 1,
                           .devices = &embed_device};
  CHECK(vkds_context_create(&(vkds_context_info){.embed = &embed, .log = logger, .log_level = VKDS_LOG_WARN}, &ctx));
  vkds_resource *res = vkds_context_resource(ctx, 0); /* our one queue */

  for (uint32_t i = 0; i < N; ++i) data[i] = (float)(i % 17); /* small integers: float sums are exact */
  double host_sum = 0, host_sum_2x1 = 0;
  for (uint32_t i = 0; i < N; ++i) {
    host_sum += data[i];
    host_sum_2x1 += 2.0 * data[i] + 1.0;
  }
  CHECK(vkds_buffer_create(res, &(vkds_buffer_info){.size = sizeof data}, &buf));
  CHECK(vkds_upload(res, vkds_view_of(buf), data, sizeof data));
  vkds_seq dev = vkds_seq_buffer(vkds_view_of(buf), VKDS_F32);

  /* ---- 1. through a policy: vkds submits to the application's queue ----------------- */
  CHECK(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_DYNAMIC_LOAD, .resources = {.context = ctx}}, &pol));
  float sum = 0;
  CHECK(vkds_reduce(pol, &dev, NULL, NULL, &sum));
  printf("policy:         reduce = %.1f (expected %.1f)\n", sum, host_sum);
  if (sum != host_sum) goto done;

  /* ---- 2. recorded into the application's command buffer ---------------------------- */
  /* Scratch: device memory the algorithms may need for partial results. Both calls
   * below share it because they cannot overlap: vkds puts a barrier before and after
   * each recorded algorithm. The result is a mapped (host-visible, coherent) buffer, so
   * the application reads it without a copy. */
  uint64_t scratch_bytes = vkds_algorithm_scratch_bytes(res, N);
  if (scratch_bytes > 0) CHECK(vkds_buffer_create(res, &(vkds_buffer_info){.size = scratch_bytes}, &scratch));
  CHECK(vkds_buffer_create(res, &(vkds_buffer_info){.size = sizeof(float), .memory = VKDS_MEMORY_MAPPED}, &result));
  vkds_cmd c = {.cmd = cmd, .resource = res, .scratch = scratch ? vkds_view_of(scratch) : (vkds_view){0}};

  VK_CHECK(vkBeginCommandBuffer(cmd, &(VkCommandBufferBeginInfo){.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                                                .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT}));
  /* ... the application's own commands could come here ... */
  CHECK(vkds_cmd_transform(&c, &dev, &dev, "x * 2.0 + 1.0"));        /* in place */
  CHECK(vkds_cmd_reduce(&c, &dev, NULL, NULL, vkds_view_of(result))); /* the sum lands in `result` */
  VK_CHECK(vkEndCommandBuffer(cmd));

  /* The application's submission: under the same lock vkds takes for this queue. */
  pthread_mutex_lock(&queue_mutex);
  vr = vkQueueSubmit(queue, 1,
                     &(VkSubmitInfo){.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1,
                                     .pCommandBuffers = &cmd},
                     fence);
  pthread_mutex_unlock(&queue_mutex);
  VK_CHECK(vr);
  VK_CHECK(vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX));
  /* vkds's last barrier makes the result visible to host reads once the fence signals. */
  float recorded_sum;
  memcpy(&recorded_sum, vkds_buffer_map(result), sizeof recorded_sum);
  printf("command buffer: reduce(transform) = %.1f (expected %.1f)\n", recorded_sum, host_sum_2x1);
  if (recorded_sum != host_sum_2x1) goto done;
  status = 0;

done:
  /* vkds first (its buffers, policy, context): it leaves the adopted instance, device
   * and queue alone, so the application destroys them afterwards, as it would anyway. */
  vkds_buffer_destroy(result);
  vkds_buffer_destroy(scratch);
  vkds_buffer_destroy(buf);
  vkds_policy_release(pol);
  vkds_context_destroy(ctx);
  if (device != VK_NULL_HANDLE) {
    vkDeviceWaitIdle(device); /* after a failure, work may still be in flight */
    vkDestroyFence(device, fence, NULL);
    vkDestroyCommandPool(device, pool, NULL); /* frees cmd */
    vkDestroyDevice(device, NULL);
  }
  if (messenger != VK_NULL_HANDLE) destroy_messenger(instance, messenger, NULL);
  vkDestroyInstance(instance, NULL);
  if (atomic_load(&validation_messages) > 0) {
    fprintf(stderr, "%d validation message(s)\n", atomic_load(&validation_messages));
    status = 1;
  }
  return status;
}
