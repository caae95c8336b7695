/* tests/gpu_counter.h: a counter in host-visible memory that GPU tasks add to, with the
 * plain-Vulkan pipeline that does it: the tests' way of seeing that work really ran, and
 * the benchmarks' tiny dispatch. */
#ifndef VKDS_TEST_GPU_COUNTER_H
#define VKDS_TEST_GPU_COUNTER_H

#include <stdint.h>
#include <vkds/vkds.h>
#include <vulkan/vulkan.h>

typedef struct gpu_counter {
  VkDevice dev;
  VkBuffer buffer;
  VkDeviceMemory memory;
  volatile uint32_t *mapped;
  VkDescriptorSetLayout set_layout;
  VkPipelineLayout layout;
  VkShaderModule module;
  VkPipeline pipeline;
  VkDescriptorPool pool;
  VkDescriptorSet set;
} gpu_counter;

/* Creates the counter (0) on the device of `res`. (Shared by tests and benchmarks.) */
VkResult gpu_counter_create(gpu_counter *c, vkds_resource *res);
/* Records: `groups` work groups of 64 burn `iterations` rounds of arithmetic each (any
 * number: split into loops that lavapipe runs in full), then one adds `add`;
 * a barrier makes the result visible to the host. */
void gpu_counter_record(const gpu_counter *c, VkCommandBuffer cmd, uint32_t add, uint32_t groups,
                        uint32_t iterations);
uint32_t gpu_counter_value(const gpu_counter *c);
void gpu_counter_destroy(gpu_counter *c);

#endif
