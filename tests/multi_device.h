/* tests/multi_device.h: an "application" that owns a VkInstance (validation on, its
 * messages to the harness) and three VkDevices on the first physical device (lavapipe
 * on a machine without a GPU): for embedding tests and for policies over several
 * devices. */
#ifndef VKDS_TEST_MULTI_DEVICE_H
#define VKDS_TEST_MULTI_DEVICE_H

#include <vkds/vkds.h>
#include <vulkan/vulkan.h>

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
  /* Optional features to enable beyond timelineSemaphore: set before app_create. */
  struct {
    bool address, int64, float64;
    bool v13; /* a Vulkan 1.3 instance and description (its devices' features stay 1.2's) */
  } want;
} app;

/* Creates the instance and the devices; zero-initialise *a first (and set a->want). */
void app_create(app *a);
/* Uses each device once more (it must still work: vkds destroyed none of it), then
 * destroys everything. */
void app_use_and_destroy(app *a);
/* Describes the application's objects for vkds_context_info.embed. */
void describe(app *a, vkds_embed_queue q[DEVICES], vkds_embed_device ed[DEVICES], vkds_embed_info *ei);
/* A validated context over the three devices; *a must stay alive until it is destroyed. */
vkds_context *app_context(app *a);

#endif
