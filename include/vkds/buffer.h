/* vkds/buffer.h: memory the kernels read and write, and memory they cannot.
 *
 * A buffer lives on one VkDevice (the device of the resource it was made for). Device,
 * mapped and readback buffers have a device address; kernels see them through vkds_view
 * arguments. Small buffers are sub-allocated from large VkDeviceMemory blocks that vkds
 * keeps per device and memory type, so vkds_buffer_vk() may be shared by several
 * buffers: always pair it with vkds_buffer_offset(). Plain host buffers are memory the
 * device cannot see; algorithms stage them (vkds/staging.h). */
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
  VKDS_MEMORY_DEVICE = 0, /* device-local; not mapped. The default. */
  VKDS_MEMORY_MAPPED = 1, /* host-visible and coherent, device-local where the device has
                             such memory (ReBAR; all memory on lavapipe); mapped. The
                             analogue of USM shared memory. */
  VKDS_MEMORY_READBACK = 2, /* host-visible, host-cached where possible: for reading back */
  VKDS_MEMORY_HOST = 3,     /* plain host memory (page-aligned malloc): mapped, but the device
                               cannot see it; no VkBuffer, no address */
  VKDS_MEMORY_IMPORTED = 4, /* the application's host memory imported into a device with
                               VK_EXT_external_memory_host (vkds_buffer_import_host only) */
} vkds_memory_kind;

typedef enum vkds_buffer_flags {
  /* Give the buffer its own VkDeviceMemory instead of a piece of a shared block.
   * Buffers larger than a quarter of a block get their own memory anyway. */
  VKDS_BUFFER_DEDICATED = 1u << 0,
  /* Fail with VKDS_ERROR_OUT_OF_DEVICE_MEMORY rather than fall back to a memory type
   * without the kind's preferred properties (e.g. host memory for a device buffer). */
  VKDS_BUFFER_NO_FALLBACK = 1u << 1,
} vkds_buffer_flags;

typedef struct vkds_buffer_info {
  uint64_t size; /* bytes, > 0 */
  vkds_memory_kind memory;
  uint32_t flags; /* vkds_buffer_flags */
} vkds_buffer_info;

/* Creates a buffer on the device of `res`. When the preferred memory is exhausted (or
 * over the context's device_memory_limit) vkds tries, in order: a dedicated allocation
 * instead of a new block, then any other memory type that can hold the buffer (a device
 * buffer in host memory, a mapped buffer outside ReBAR); vkds_buffer_memory_flags() tells
 * what it got. Returns VKDS_ERROR_INVALID_ARGUMENT (NULL, size 0, unknown memory kind or
 * flag, VKDS_MEMORY_IMPORTED), VKDS_ERROR_OUT_OF_DEVICE_MEMORY (nothing could hold it; a
 * size past all of the device's memory heaps together),
 * VKDS_ERROR_OUT_OF_HOST_MEMORY, VKDS_ERROR_UNSUPPORTED (no memory type of that kind). */
VKDS_API vkds_result vkds_buffer_create(vkds_resource *res, const vkds_buffer_info *info, vkds_buffer **out);

/* Imports `size` bytes of the application's memory at `host` into the device of `res`
 * (VK_EXT_external_memory_host): the device reads and writes that memory in place. Both
 * `host` and `size` must be multiples of vkds_import_alignment(res). The memory must
 * outlive the buffer. Returns VKDS_ERROR_UNSUPPORTED (the device lacks the extension),
 * VKDS_ERROR_INVALID_ARGUMENT (NULL, size 0, misaligned: the message says the
 * alignment), VKDS_ERROR_OUT_OF_DEVICE_MEMORY or VKDS_ERROR_VULKAN (the driver refused
 * the pointer). */
VKDS_API vkds_result vkds_buffer_import_host(vkds_resource *res, void *host, uint64_t size, vkds_buffer **out);

/* The alignment an imported pointer and size need on the device of `res`
 * (minImportedHostPointerAlignment); 0 when the device cannot import host memory. */
VKDS_API uint64_t vkds_import_alignment(const vkds_resource *res);

/* Destroys it; the device must be done with it. NULL is a no-op. An imported buffer
 * leaves the application's memory alone. */
VKDS_API void vkds_buffer_destroy(vkds_buffer *buf);
/* The host pointer of a mapped, readback, host or imported buffer; NULL for a
 * VKDS_MEMORY_DEVICE buffer (never mapped, even where its memory is host-visible, as on
 * lavapipe: vkds_upload and vkds_download reach it on every device alike) or a NULL buf. */
VKDS_API void *vkds_buffer_map(const vkds_buffer *buf);
/* Its size in bytes (as asked for); 0 for NULL. */
VKDS_API uint64_t vkds_buffer_size(const vkds_buffer *buf);
/* The kind it was made as; VKDS_MEMORY_DEVICE for NULL. */
VKDS_API vkds_memory_kind vkds_buffer_memory(const vkds_buffer *buf);
/* The VkMemoryPropertyFlags of the memory it got (0 for host buffers and NULL). */
VKDS_API VkMemoryPropertyFlags vkds_buffer_memory_flags(const vkds_buffer *buf);
/* The VkBuffer holding it and its byte offset there (VK_NULL_HANDLE / 0 for host
 * buffers). Sub-allocated buffers share a VkBuffer: use both. Its sharing mode is
 * VK_SHARING_MODE_CONCURRENT over the queue families of the context's resources on its
 * device where those are more than one (a policy may run one call's work on queues of
 * different families), exclusive where there is one: an application that uses it on a
 * queue of another family does the queue family ownership transfer itself. */
VKDS_API VkBuffer vkds_buffer_vk(const vkds_buffer *buf);
VKDS_API uint64_t vkds_buffer_offset(const vkds_buffer *buf);
/* The buffer's device address (0 for host buffers and on devices without buffer device
 * address). */
VKDS_API VkDeviceAddress vkds_buffer_address(const vkds_buffer *buf);
/* Whether the buffer is memory of the device of `res` (so a kernel there can use it);
 * false for host buffers, NULL arguments, or another device. */
VKDS_API bool vkds_buffer_is_on(const vkds_buffer *buf, const vkds_resource *res);

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

/* What the context's allocator holds on one device: bytes in VkDeviceMemory it
 * allocated (blocks and dedicated), bytes handed out as buffers, and counts. vkds's own
 * buffers count too: the staging ring (made on the first staged copy) and the
 * temporaries algorithms keep for reuse (vkds/algorithm.h: up to keep_bytes, eight
 * staging rings' worth by default, more on a discrete GPU, and as much again of data
 * staged whole; vkds_context_trim gives them back), so these do not come back to zero
 * when the application's buffers are gone. */
typedef struct vkds_memory_stats {
  uint64_t allocated_bytes, used_bytes;
  uint32_t blocks, dedicated, buffers;
  uint64_t device_local_bytes; /* of allocated_bytes, in device-local heaps */
} vkds_memory_stats;

/* Fills *out for the device of `res`. VKDS_ERROR_INVALID_ARGUMENT for NULL. */
VKDS_API vkds_result vkds_memory_get_stats(const vkds_resource *res, vkds_memory_stats *out);

#ifdef __cplusplus
}
#endif
#endif
