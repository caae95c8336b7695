/* lib/core/vk_fault.h: Vulkan fault injection, for tests (not public API).
 *
 * Once installed (before a context is created), every VkDevice vkds creates or adopts
 * afterwards gets its failable entry points (those that return a VkResult) replaced in
 * its volk table by wrappers. A wrapper counts the calls that match the armed plan and
 * makes the chosen one return the plan's result without calling the driver, so the
 * object it would have made does not exist: what a real out-of-memory or lost device
 * looks like to vkds. Uninstalled (the default) nothing is wrapped and nothing costs.
 *
 * A lost device stays lost: when a plan with lose_device fires, the wrapper first lets
 * the device finish what it was running (vkDeviceWaitIdle: a test must not submit to
 * that device from another thread at that moment), so that nothing runs on it any more
 * and the objects vkds destroys afterwards are idle, as the validation layer (and the
 * driver) require; from then on the calls a lost device fails (submits, waits, counter
 * and query reads) return VK_ERROR_DEVICE_LOST on it without reaching the driver.
 * vkDeviceWaitIdle still waits for the real device whatever it returns. Creating and
 * destroying objects keeps working, as on a really lost device.
 *
 * The five functions below are exported from libvkds built with its tests (as SQLite
 * exports its test control), so that a test drives the library it ships; they are not
 * public API: no header under include/ declares them, and they may change at any time. */
#ifndef VKDS_VK_FAULT_H
#define VKDS_VK_FAULT_H

/* Vulkan's types only (not volk): the fault test includes this beside <vulkan/vulkan.h>. */
#include <stdbool.h>
#include <stdint.h>
#include <vulkan/vulkan_core.h>

#include "test_hook.h"

struct VolkDeviceTable;

typedef struct vkds__vk_fault_plan {
  /* The wrapped function whose calls count ("vkQueueSubmit"); NULL: every wrapped one. */
  const char *function;
  /* Only calls on this device count; VK_NULL_HANDLE: any device. */
  VkDevice device;
  /* The matching call that fails, from 1 after arming; 0: none (only count them). */
  uint64_t nth;
  /* What it returns instead (VK_ERROR_OUT_OF_HOST_MEMORY, VK_ERROR_DEVICE_LOST, ...). */
  VkResult result;
  /* The device of the failing call is lost from then on (see above). */
  bool lose_device;
  /* Every matching call that does not fail returns this many ns late, after the
   * driver's call: a window between what the driver did and what vkds does next,
   * widened for a race test. 0: none. */
  uint64_t delay_ns;
} vkds__vk_fault_plan;

/* Wraps the devices made from now on. Not undone (devices already wrapped stay so). */
VKDS__TEST_HOOK void vkds__vk_fault_install(void);
/* Replaces the plan and restarts the count (NULL: disarm). Thread-safe. */
VKDS__TEST_HOOK void vkds__vk_fault_arm(const vkds__vk_fault_plan *plan);
/* Matching calls since the plan was armed; whether its failure happened. */
VKDS__TEST_HOOK uint64_t vkds__vk_fault_calls(void);
VKDS__TEST_HOOK bool vkds__vk_fault_fired(void);
/* The names of the wrapped functions, NULL-terminated (for sweeps over each of them). */
VKDS__TEST_HOOK const char *const *vkds__vk_fault_functions(void);

/* lib/core/loader.c calls this for every device table it fills. */
void vkds__vk_fault_wrap(VkDevice device, struct VolkDeviceTable *table);

#endif
