/* lib/memory/buffer_public.c: vkds_buffer: argument checks, host buffers, and the public
 * accessors; the memory itself comes from lib/memory/memory.c. */
#include "internal.h"

#include <stdlib.h>
#include <unistd.h>

static const char *const kind_names[] = {"device", "mapped", "readback", "host", "imported"};

/* Plain host memory, page-aligned so that it could be imported later. */
static vkds_result host_alloc(vkds__device *dev, vkds_buffer *b) {
  long page = sysconf(_SC_PAGESIZE);
  size_t align = page > 0 ? (size_t)page : 4096;
  /* more than the machine's memory is refused before malloc sees it (a sanitizer's
   * allocator aborts on such sizes; the rounding below would wrap near 2^64) */
  long pages = sysconf(_SC_PHYS_PAGES);
  uint64_t ram = pages > 0 ? (uint64_t)pages * align : UINT64_MAX - align;
  uint64_t rounded = (b->size + align - 1) / align * align;
  if (b->size > ram || rounded != (size_t)rounded ||
      !(b->mapped = vkds__alloc_aligned(dev->ctx, (size_t)rounded, align)))
    return vkds__fail(dev->ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS,
                      "vkds_buffer_create: %llu bytes of host memory", (unsigned long long)b->size);
  b->coherent = true;
  return VKDS_SUCCESS;
}

/* Device memory for b. Out of it, what vkds keeps idle on the device (buffers kept for
 * later calls, empty blocks) is given back and the allocation tried once more; the first
 * failure is logged only when nothing could be given back. Under device_memory_limit
 * the kept ones made every later allocation fail, the application's too, until the
 * context went (a probe). */
static vkds_result alloc_device_memory(vkds__device *dev, vkds_buffer *b, uint32_t flags) {
  bool held = vkds__hold_failure_logs(true);
  vkds_result r = vkds__allocator_alloc(dev, b, flags);
  vkds__hold_failure_logs(held);
  if (r != VKDS_ERROR_OUT_OF_DEVICE_MEMORY) return held ? r : vkds__log_unlogged(dev->ctx, r);
  bool gave_back = vkds__spares_drop(dev);
  gave_back |= vkds__allocator_trim(dev);
  if (!gave_back) return held ? r : vkds__log_unlogged(dev->ctx, r);
  return vkds__allocator_alloc(dev, b, flags);
}

vkds_result vkds_buffer_create(vkds_resource *res, const vkds_buffer_info *info, vkds_buffer **out) {
  if (out) *out = NULL;
  if (!res || !info || !out)
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "vkds_buffer_create: NULL argument");
  vkds__device *dev = res->dev;
  if (info->size == 0)
    return vkds__fail(dev->ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "vkds_buffer_create: size 0");
  if ((unsigned)info->memory > VKDS_MEMORY_HOST)
    return vkds__fail(dev->ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "vkds_buffer_create: memory kind %d is not one vkds_buffer_create makes%s", (int)info->memory,
                      info->memory == VKDS_MEMORY_IMPORTED ? " (use vkds_buffer_import_host)" : "");
  /* nothing larger than all of the device's memory heaps together can be made (the
   * allocator's rounding would wrap near 2^64: such a size once came back as a small
   * buffer that writes overran); maxMemoryAllocationSize is only a hint, which some
   * drivers exceed */
  uint64_t all = 0;
  for (uint32_t h = 0; h < dev->facts.memory.memoryHeapCount; ++h)
    all += dev->facts.memory.memoryHeaps[h].size;
  if (info->memory != VKDS_MEMORY_HOST && info->size > all)
    return vkds__fail(dev->ctx, VKDS_ERROR_OUT_OF_DEVICE_MEMORY, VK_SUCCESS,
                      "vkds_buffer_create: %llu bytes: the device's memory heaps hold %llu bytes in all",
                      (unsigned long long)info->size, (unsigned long long)all);
  if (info->flags & ~(uint32_t)(VKDS_BUFFER_DEDICATED | VKDS_BUFFER_NO_FALLBACK))
    return vkds__fail(dev->ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "vkds_buffer_create: unknown flags 0x%x",
                      info->flags);
  vkds_buffer *b = vkds__alloc(dev->ctx, sizeof *b);
  if (!b) return vkds__fail(dev->ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "buffer");
  *b = (vkds_buffer){.dev = dev, .kind = info->memory, .size = info->size};
  vkds_result r = b->kind == VKDS_MEMORY_HOST ? host_alloc(dev, b) : alloc_device_memory(dev, b, info->flags);
  if (r != VKDS_SUCCESS) {
    vkds__free(dev->ctx, b);
    return r;
  }
  /* Device buffers are never mapped, even where their memory could be (lavapipe, a
   * fallback to system memory): the host reaches them through vkds_upload and
   * vkds_download on every device alike. */
  if (b->kind == VKDS_MEMORY_DEVICE) b->mapped = NULL;
  vkds__log(dev->ctx, VKDS_LOG_DEBUG, "buffer: %llu bytes of %s memory, type %u (flags 0x%x)%s",
            (unsigned long long)b->size, kind_names[b->kind], b->type_index, (unsigned)b->flags,
            b->block ? ", sub-allocated" : "");
  vkds__buffer_track(dev, b);
  *out = b;
  return VKDS_SUCCESS;
}

uint64_t vkds_import_alignment(const vkds_resource *res) {
  if (!res || !res->dev->enabled.external_memory_host) return 0;
  return res->dev->facts.import_alignment;
}

vkds_result vkds_buffer_import_host(vkds_resource *res, void *host, uint64_t size, vkds_buffer **out) {
  if (out) *out = NULL;
  if (!res || !host || !out || size == 0)
    return vkds__fail(res ? res->dev->ctx : NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "vkds_buffer_import_host: NULL argument or size 0");
  vkds__device *dev = res->dev;
  uint64_t align = vkds_import_alignment(res);
  if (!align)
    return vkds__fail(dev->ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS,
                      "vkds_buffer_import_host: '%s' cannot import host memory (no VK_EXT_external_memory_host)",
                      dev->facts.props.properties.deviceName);
  /* (a range past the end of the address space was imported; a probe) */
  if (size > UINTPTR_MAX - (uintptr_t)host)
    return vkds__fail(dev->ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "vkds_buffer_import_host: %llu bytes from %p run past the end of the address space",
                      (unsigned long long)size, host);
  if ((uintptr_t)host % align || size % align)
    return vkds__fail(dev->ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "vkds_buffer_import_host: pointer %p and size %llu must be multiples of %llu on '%s'", host,
                      (unsigned long long)size, (unsigned long long)align, dev->facts.props.properties.deviceName);
  vkds_buffer *b = vkds__alloc(dev->ctx, sizeof *b);
  if (!b) return vkds__fail(dev->ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "buffer");
  *b = (vkds_buffer){.dev = dev, .kind = VKDS_MEMORY_IMPORTED, .size = size};
  vkds_result r = vkds__allocator_import(dev, b, host);
  if (r != VKDS_SUCCESS) {
    vkds__free(dev->ctx, b);
    return r;
  }
  vkds__buffer_track(dev, b);
  *out = b;
  return VKDS_SUCCESS;
}

void vkds_buffer_destroy(vkds_buffer *buf) {
  if (!buf) return;
  vkds__buffer_untrack(buf->dev, buf);
  if (buf->kind == VKDS_MEMORY_HOST) {
    vkds__free(buf->dev->ctx, buf->mapped);
  } else {
    if (buf->kind == VKDS_MEMORY_IMPORTED) vkds__import_unregister(buf->dev, buf);
    vkds__allocator_free(buf->dev, buf);
  }
  vkds__free(buf->dev->ctx, buf);
}

void *vkds_buffer_map(const vkds_buffer *buf) { return buf ? buf->mapped : NULL; }
uint64_t vkds_buffer_size(const vkds_buffer *buf) { return buf ? buf->size : 0; }
vkds_memory_kind vkds_buffer_memory(const vkds_buffer *buf) { return buf ? buf->kind : VKDS_MEMORY_DEVICE; }
VkMemoryPropertyFlags vkds_buffer_memory_flags(const vkds_buffer *buf) { return buf ? buf->flags : 0; }
VkBuffer vkds_buffer_vk(const vkds_buffer *buf) { return buf ? buf->vk : VK_NULL_HANDLE; }
uint64_t vkds_buffer_offset(const vkds_buffer *buf) { return buf ? buf->offset : 0; }
VkDeviceAddress vkds_buffer_address(const vkds_buffer *buf) { return buf ? buf->address : 0; }

bool vkds_buffer_is_on(const vkds_buffer *buf, const vkds_resource *res) {
  return buf && res && buf->kind != VKDS_MEMORY_HOST && buf->dev == res->dev;
}
