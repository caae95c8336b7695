/* lib/buffer_public.c: vkds_buffer, the public face of lib/buffer.c's raw buffers. */
#include "internal.h"

#include <stdlib.h>

vkds_result vkds_buffer_create(vkds_resource *res, const vkds_buffer_info *info, vkds_buffer **out) {
  if (out) *out = NULL;
  if (!res || !info || !out)
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "vkds_buffer_create: NULL argument");
  vkds__device *dev = res->dev;
  if (info->size == 0)
    return vkds__fail(dev->ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "vkds_buffer_create: size 0");
  VkMemoryPropertyFlags required, preferred;
  switch (info->memory) {
  case VKDS_MEMORY_DEVICE:
    required = 0, preferred = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    break;
  case VKDS_MEMORY_MAPPED:
    required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    preferred = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    break;
  case VKDS_MEMORY_READBACK:
    required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, preferred = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
    break;
  default:
    return vkds__fail(dev->ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "vkds_buffer_create: unknown memory kind %d",
                      (int)info->memory);
  }
  vkds_buffer *b = calloc(1, sizeof *b);
  if (!b) return vkds__fail(dev->ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "buffer");
  b->dev = dev;
  const VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                   VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  vkds_result r = vkds__buffer_create(dev, info->size, usage, required, preferred, &b->raw);
  if (r != VKDS_SUCCESS) {
    free(b);
    return r;
  }
  if (dev->enabled.buffer_device_address) {
    VkBufferDeviceAddressInfo ai = {.sType = VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO, .buffer = b->raw.buffer};
    b->address = dev->vk.vkGetBufferDeviceAddress(dev->device, &ai);
  }
  *out = b;
  return VKDS_SUCCESS;
}

void vkds_buffer_destroy(vkds_buffer *buf) {
  if (!buf) return;
  vkds__buffer_destroy(buf->dev, &buf->raw);
  free(buf);
}

void *vkds_buffer_map(const vkds_buffer *buf) { return buf ? buf->raw.mapped : NULL; }
uint64_t vkds_buffer_size(const vkds_buffer *buf) { return buf ? buf->raw.size : 0; }
VkBuffer vkds_buffer_vk(const vkds_buffer *buf) { return buf ? buf->raw.buffer : VK_NULL_HANDLE; }
VkDeviceAddress vkds_buffer_address(const vkds_buffer *buf) { return buf ? buf->address : 0; }
