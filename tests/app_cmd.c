/* tests/app_cmd.c: see app_cmd.h. */
#include "app_cmd.h"

#include <check.h>

#include "harness.h"

void app_cmd_begin(app_cmd *a, vkds_resource *res) {
  if (!a->pool) {
    vkds_resource_info info;
    a->res = res;
    ck_assert_vkds(vkds_resource_get_info(res, &info));
    ck_assert_vkds(vkds_resource_vk_handles(res, NULL, &a->dev, &a->queue));
    ck_assert_int_eq(vkCreateCommandPool(a->dev,
                                         &(VkCommandPoolCreateInfo){.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                                                    .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                                                    .queueFamilyIndex = info.queue_family},
                                         NULL, &a->pool),
                     0);
    ck_assert_int_eq(vkAllocateCommandBuffers(a->dev,
                                              &(VkCommandBufferAllocateInfo){
                                                  .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                                  .commandPool = a->pool, .commandBufferCount = 1},
                                              &a->cmd),
                     0);
    ck_assert_int_eq(vkCreateFence(a->dev, &(VkFenceCreateInfo){.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO}, NULL, &a->fence),
                     0);
  }
  ck_assert_ptr_eq(a->res, res);
  ck_assert_int_eq(vkBeginCommandBuffer(a->cmd, &(VkCommandBufferBeginInfo){.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO}), 0);
}

void app_cmd_submit(app_cmd *a, uint64_t timeout_s) {
  ck_assert_int_eq(vkEndCommandBuffer(a->cmd), 0);
  vkds_resource_lock_queue(a->res);
  ck_assert_int_eq(vkQueueSubmit(a->queue, 1,
                                 &(VkSubmitInfo){.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1,
                                                 .pCommandBuffers = &a->cmd},
                                 a->fence),
                   0);
  vkds_resource_unlock_queue(a->res);
  ck_assert_int_eq(vkWaitForFences(a->dev, 1, &a->fence, VK_TRUE, timeout_s * 1000 * 1000 * 1000), 0);
  ck_assert_int_eq(vkResetFences(a->dev, 1, &a->fence), 0);
}

void app_cmd_destroy(app_cmd *a) {
  if (!a->pool) return;
  vkDestroyFence(a->dev, a->fence, NULL);
  vkDestroyCommandPool(a->dev, a->pool, NULL);
}
