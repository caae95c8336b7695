/* tests/app_cmd.h: an application's own command buffer on a vkds resource's queue, for
 * the tests of the recording forms (vkds_cmd_*): begun, then submitted and waited for,
 * as an application that embeds vkds would. */
#ifndef VKDS_TEST_APP_CMD_H
#define VKDS_TEST_APP_CMD_H

#include <stdint.h>
#include <vulkan/vulkan.h>
#include <vkds/vkds.h>

typedef struct app_cmd {
  vkds_resource *res;
  VkDevice dev;
  VkQueue queue;
  VkCommandPool pool;
  VkCommandBuffer cmd;
  VkFence fence;
} app_cmd;

/* Begins a->cmd on res's queue family (made at the first call on a zeroed app_cmd; later
 * calls reuse it, after app_cmd_submit). */
void app_cmd_begin(app_cmd *a, vkds_resource *res);

/* Ends a->cmd, submits it under vkds's queue lock and waits for it: the test fails when
 * that takes more than `timeout_s` seconds (a hang fails, it never blocks the suite). */
void app_cmd_submit(app_cmd *a, uint64_t timeout_s);

/* Destroys what app_cmd_begin made (nothing for one never begun). */
void app_cmd_destroy(app_cmd *a);

#endif
