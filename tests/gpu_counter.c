/* tests/gpu_counter.c */
#include "gpu_counter.h"

#include "counter.comp.h"

#define TRY(call)                                                                           \
  do {                                                                                      \
    VkResult vr_ = (call);                                                                  \
    if (vr_ != VK_SUCCESS) return vr_;                                                      \
  } while (0)

VkResult gpu_counter_create(gpu_counter *c, vkds_resource *res) {
  *c = (gpu_counter){0};
  VkPhysicalDevice phys;
  if (vkds_resource_vk_handles(res, &phys, &c->dev, NULL) != VKDS_SUCCESS) return VK_ERROR_UNKNOWN;
  VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = 256,
                            .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT};
  TRY(vkCreateBuffer(c->dev, &bci, NULL, &c->buffer));
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(c->dev, c->buffer, &req);
  VkPhysicalDeviceMemoryProperties mp;
  vkGetPhysicalDeviceMemoryProperties(phys, &mp);
  const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  uint32_t type = UINT32_MAX;
  for (uint32_t t = 0; t < mp.memoryTypeCount && type == UINT32_MAX; ++t)
    if ((req.memoryTypeBits & (1u << t)) && (mp.memoryTypes[t].propertyFlags & want) == want) type = t;
  if (type == UINT32_MAX) return VK_ERROR_FEATURE_NOT_PRESENT;
  VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = req.size,
                              .memoryTypeIndex = type};
  TRY(vkAllocateMemory(c->dev, &mai, NULL, &c->memory));
  TRY(vkBindBufferMemory(c->dev, c->buffer, c->memory, 0));
  void *p;
  TRY(vkMapMemory(c->dev, c->memory, 0, VK_WHOLE_SIZE, 0, &p));
  c->mapped = p;
  c->mapped[0] = 0;

  VkDescriptorSetLayoutBinding b = {.binding = 0, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                    .descriptorCount = 1, .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
  VkDescriptorSetLayoutCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                         .bindingCount = 1, .pBindings = &b};
  TRY(vkCreateDescriptorSetLayout(c->dev, &dci, NULL, &c->set_layout));
  VkPushConstantRange pr = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .size = 12};
  VkPipelineLayoutCreateInfo lci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, .setLayoutCount = 1,
                                    .pSetLayouts = &c->set_layout, .pushConstantRangeCount = 1,
                                    .pPushConstantRanges = &pr};
  TRY(vkCreatePipelineLayout(c->dev, &lci, NULL, &c->layout));
  VkShaderModuleCreateInfo mci = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                  .codeSize = sizeof vkds_spirv_counter, .pCode = vkds_spirv_counter};
  TRY(vkCreateShaderModule(c->dev, &mci, NULL, &c->module));
  VkComputePipelineCreateInfo cpci = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = c->module, .pName = "main"},
      .layout = c->layout};
  TRY(vkCreateComputePipelines(c->dev, VK_NULL_HANDLE, 1, &cpci, NULL, &c->pipeline));
  VkDescriptorPoolSize ps = {.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .descriptorCount = 1};
  VkDescriptorPoolCreateInfo dpci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, .maxSets = 1,
                                     .poolSizeCount = 1, .pPoolSizes = &ps};
  TRY(vkCreateDescriptorPool(c->dev, &dpci, NULL, &c->pool));
  VkDescriptorSetAllocateInfo dsai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                      .descriptorPool = c->pool, .descriptorSetCount = 1,
                                      .pSetLayouts = &c->set_layout};
  TRY(vkAllocateDescriptorSets(c->dev, &dsai, &c->set));
  VkDescriptorBufferInfo dbi = {.buffer = c->buffer, .range = VK_WHOLE_SIZE};
  VkWriteDescriptorSet w = {.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, .dstSet = c->set,
                            .descriptorCount = 1, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                            .pBufferInfo = &dbi};
  vkUpdateDescriptorSets(c->dev, 1, &w, 0, NULL);
  return VK_SUCCESS;
}

void gpu_counter_record(const gpu_counter *c, VkCommandBuffer cmd, uint32_t add, uint32_t groups,
                        uint32_t iterations) {
  /* the shader runs rounds x per-round iterations, each loop under lavapipe's cut */
  uint32_t per = iterations < 50000 ? iterations : 50000;
  uint32_t push[3] = {add, per, per ? (iterations + per - 1) / per : 0};
  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, c->pipeline);
  vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, c->layout, 0, 1, &c->set, 0, NULL);
  vkCmdPushConstants(cmd, c->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof push, push);
  vkCmdDispatch(cmd, groups, 1, 1);
  VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                        .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0,
                       NULL, 0, NULL);
}

uint32_t gpu_counter_value(const gpu_counter *c) { return c->mapped[0]; }

void gpu_counter_destroy(gpu_counter *c) {
  vkDestroyPipeline(c->dev, c->pipeline, NULL);
  vkDestroyShaderModule(c->dev, c->module, NULL);
  vkDestroyDescriptorPool(c->dev, c->pool, NULL);
  vkDestroyPipelineLayout(c->dev, c->layout, NULL);
  vkDestroyDescriptorSetLayout(c->dev, c->set_layout, NULL);
  vkDestroyBuffer(c->dev, c->buffer, NULL);
  vkFreeMemory(c->dev, c->memory, NULL);
}
