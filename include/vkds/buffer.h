/* vkds/buffer.h: device memory the kernels read and write.
 *
 * A buffer lives on one VkDevice (the device of the resource it was made for) and has a
 * device address; kernels see it through vkds_view arguments. (Staging, sub-allocation
 * and host memory sequences build on this in the memory layer.) */
#ifndef VKDS_BUFFER_H
#define VKDS_BUFFER_H

#include <stdint.h>
#include <vulkan/vulkan_core.h>

#include "vkds/context.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vkds_buffer vkds_buffer;

typedef enum vkds_memory_kind {
  VKDS_MEMORY_DEVICE = 0, /* device-local; not mapped */
  VKDS_MEMORY_MAPPED = 1, /* host-visible and coherent, device-local where the device has
                             such memory (ReBAR; all memory on lavapipe); mapped */
  VKDS_MEMORY_READBACK = 2, /* host-visible, host-cached where possible: for reading back */
} vkds_memory_kind;

typedef struct vkds_buffer_info {
  uint64_t size; /* bytes, > 0 */
  vkds_memory_kind memory;
} vkds_buffer_info;

/* Creates a buffer on the device of `res`. VKDS_ERROR_INVALID_ARGUMENT (NULL, size 0,
 * unknown memory kind), VKDS_ERROR_OUT_OF_DEVICE_MEMORY, VKDS_ERROR_UNSUPPORTED (no
 * memory type of that kind). */
VKDS_API vkds_result vkds_buffer_create(vkds_resource *res, const vkds_buffer_info *info, vkds_buffer **out);
/* Destroys it; the device must be done with it. NULL is a no-op. */
VKDS_API void vkds_buffer_destroy(vkds_buffer *buf);
/* The host pointer of a mapped buffer; NULL for VKDS_MEMORY_DEVICE (or NULL buf). */
VKDS_API void *vkds_buffer_map(const vkds_buffer *buf);
VKDS_API uint64_t vkds_buffer_size(const vkds_buffer *buf);
VKDS_API VkBuffer vkds_buffer_vk(const vkds_buffer *buf);
/* The buffer's device address (0 when the device has no buffer device address). */
VKDS_API VkDeviceAddress vkds_buffer_address(const vkds_buffer *buf);

/* A range of a buffer, as kernels take it. bytes 0: to the end of the buffer. */
typedef struct vkds_view {
  vkds_buffer *buffer;
  uint64_t offset;
  uint64_t bytes;
} vkds_view;

/* The whole buffer. */
static inline vkds_view vkds_view_of(vkds_buffer *buf) {
  vkds_view v = {buf, 0, 0};
  return v;
}

#ifdef __cplusplus
}
#endif
#endif
