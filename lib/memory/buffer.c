/* lib/memory/buffer.c: plain VkBuffers with dedicated memory. (Sub-allocation and staging
 * build on this in the memory layer.) */
#include "kernel/kernel_internal.h"


uint32_t vkds__memory_type(const vkds__device *dev, uint32_t type_bits,
                           VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred) {
  const VkPhysicalDeviceMemoryProperties *m = &dev->facts.memory;
  uint32_t best = UINT32_MAX;
  int best_score = -1;
  for (uint32_t t = 0; t < m->memoryTypeCount; ++t) {
    VkMemoryPropertyFlags flags = m->memoryTypes[t].propertyFlags;
    if (!(type_bits & (1u << t)) || (flags & required) != required) continue;
    int score = __builtin_popcount(flags & preferred);
    if (score > best_score) best = t, best_score = score;
  }
  return best;
}

vkds_result vkds__buffer_create(vkds__device *dev, VkDeviceSize size, VkBufferUsageFlags usage,
                                VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred,
                                vkds__buffer *out) {
  const vkds_context *ctx = dev->ctx;
  *out = (vkds__buffer){.size = size};
  if (dev->enabled.buffer_device_address) usage |= VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
  VkBufferCreateInfo bci = {
      .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
      .size = size,
      .usage = usage,
  };
  vkds__buffer_sharing(dev, &bci);
  VkResult vr = dev->vk.vkCreateBuffer(dev->device, &bci, vkds__vk_allocator(ctx), &out->buffer);
  if (vr != VK_SUCCESS) {
    out->buffer = VK_NULL_HANDLE; /* a failed call's outputs are undefined */
    return vkds__vk_fail(ctx, vr, "vkCreateBuffer");
  }
  VkMemoryRequirements req;
  dev->vk.vkGetBufferMemoryRequirements(dev->device, out->buffer, &req);
  out->type_index = vkds__memory_type(dev, req.memoryTypeBits, required, preferred);
  if (out->type_index == UINT32_MAX) {
    vkds__buffer_destroy(dev, out);
    return vkds__fail(ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS,
                      "no memory type with flags 0x%x for a buffer", (unsigned)required);
  }
  VkMemoryAllocateFlagsInfo flags = {
      .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO,
      .flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT,
  };
  VkMemoryAllocateInfo mai = {
      .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
      .pNext = dev->enabled.buffer_device_address ? &flags : NULL,
      .allocationSize = req.size,
      .memoryTypeIndex = out->type_index,
  };
  vr = dev->vk.vkAllocateMemory(dev->device, &mai, vkds__vk_allocator(ctx), &out->memory);
  if (vr != VK_SUCCESS) out->memory = VK_NULL_HANDLE;
  if (vr == VK_SUCCESS) vr = dev->vk.vkBindBufferMemory(dev->device, out->buffer, out->memory, 0);
  VkMemoryPropertyFlags mflags = dev->facts.memory.memoryTypes[out->type_index].propertyFlags;
  if (vr == VK_SUCCESS && (mflags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT))
    vr = dev->vk.vkMapMemory(dev->device, out->memory, 0, VK_WHOLE_SIZE, 0, &out->mapped);
  out->coherent = vkds__memory_coherent(mflags);
  if (vr != VK_SUCCESS) {
    vkds__buffer_destroy(dev, out);
    return vkds__vk_fail(ctx, vr, "allocating buffer memory");
  }
  return VKDS_SUCCESS;
}

void vkds__buffer_destroy(vkds__device *dev, vkds__buffer *buf) {
  if (buf->buffer) dev->vk.vkDestroyBuffer(dev->device, buf->buffer, vkds__vk_allocator(dev->ctx));
  if (buf->memory) dev->vk.vkFreeMemory(dev->device, buf->memory, vkds__vk_allocator(dev->ctx)); /* unmaps */
  *buf = (vkds__buffer){0};
}

void vkds__buffer_invalidate(vkds__device *dev, const vkds__buffer *buf) {
  if (!buf->mapped || buf->coherent) return;
  VkMappedMemoryRange range = {
      .sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE,
      .memory = buf->memory,
      .size = VK_WHOLE_SIZE,
  };
  dev->vk.vkInvalidateMappedMemoryRanges(dev->device, 1, &range);
}

vkds_result vkds__scratch_reserve(vkds__device *dev, vkds__buffer *buf, VkDeviceAddress *address, VkDeviceSize size) {
  if (buf->buffer && buf->size >= size) return VKDS_SUCCESS;
  if (!dev->enabled.buffer_device_address)
    return vkds__fail(dev->ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS, "spilled arguments need buffer device address");
  vkds__buffer_destroy(dev, buf);
  VkDeviceSize rounded = 256;
  while (rounded < size) rounded *= 2; /* grow in steps: a slot serves many launches */
  VKDS_CHECK(vkds__buffer_create(dev, rounded, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                                 VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                 VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, buf));
  VkBufferDeviceAddressInfo ai = {.sType = VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO, .buffer = buf->buffer};
  *address = dev->vk.vkGetBufferDeviceAddress(dev->device, &ai);
  return VKDS_SUCCESS;
}
