/* lib/memory/memory.c: the allocator behind vkds_buffer.
 *
 * Drivers cap the number of live VkDeviceMemory objects (maxMemoryAllocationCount is
 * 4096 on many), and every vkAllocateMemory is slow (the kernel maps and often clears
 * pages), so buffers up to a quarter of a block share large blocks: one VkDeviceMemory
 * and one VkBuffer over all of it, handed out as (block buffer, offset) ranges from a
 * first-fit free list. Larger buffers, and those that ask, get their own memory.
 *
 * When memory runs out the order is: another block, the buffer's own memory (a smaller
 * request may still fit), then the next memory type that can hold the kind's required
 * properties, best first; only then VKDS_ERROR_OUT_OF_DEVICE_MEMORY. The context's
 * device_memory_limit is enforced here as if the heap were that small, which is also
 * how the fallback is tested on lavapipe (one heap, one type). */
#include "internal.h"
#include "memory/memory_test.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define DEFAULT_BLOCK_BYTES (64ull << 20)

typedef struct free_range {
  struct free_range *next;
  uint64_t offset, size;
} free_range;

struct vkds__block {
  vkds__block *next;
  VkDeviceMemory memory;
  VkBuffer buffer;
  VkDeviceAddress address;
  void *mapped;
  uint64_t size;
  uint32_t type_index;
  uint32_t live;    /* buffers in it */
  free_range *free; /* sorted by offset, neighbours merged */
};

typedef struct vkds__allocator {
  pthread_mutex_t lock;
  VkBufferUsageFlags usage; /* what every vkds buffer can be used for */
  uint32_t type_bits;       /* the memory types such a buffer can live in */
  uint64_t block_bytes, align;
  vkds__block *blocks[VK_MAX_MEMORY_TYPES];
  uint64_t limit; /* on device-local bytes; 0: none */
  vkds_memory_stats stats;
  vkds_buffer *imports; /* imported buffers, for vkds__import_find */
  /* every buffer of the device not yet destroyed, of every kind (vkds__buffer_track):
   * vkds_context_destroy frees those the application left */
  vkds_buffer *live;
  /* the queue families of the device's resources, when more than one: its buffers are
   * shared by them (vkds__buffer_sharing) */
  uint32_t *families, family_count;
} vkds__allocator;

/* What each kind must have, would like, and would rather not have. A device buffer
 * avoids host-visible types so that it lands in plain VRAM, not in the (smaller, on
 * many GPUs) ReBAR window; readback avoids device-local memory, which the CPU reads
 * over PCIe at a fraction of the speed of cached system memory. */
typedef struct kind_policy {
  VkMemoryPropertyFlags required, preferred, avoided;
} kind_policy;

static kind_policy policy_of(vkds_memory_kind kind) {
  switch (kind) {
  case VKDS_MEMORY_MAPPED:
    return (kind_policy){VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                         VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0};
  case VKDS_MEMORY_READBACK:
    return (kind_policy){VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, VK_MEMORY_PROPERTY_HOST_CACHED_BIT,
                         VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT};
  default:
    return (kind_policy){0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT};
  }
}

static uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

static bool type_is_device_local(const vkds__device *dev, uint32_t t) {
  uint32_t heap = dev->facts.memory.memoryTypes[t].heapIndex;
  return dev->facts.memory.memoryHeaps[heap].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT;
}

/* The distinct queue families of dev's resources into a->families (left NULL for one). */
static vkds_result note_families(vkds__device *dev, vkds__allocator *a) {
  const vkds_context *ctx = dev->ctx;
  uint32_t *seen = vkds__alloc_array(ctx, dev->facts.family_count ? dev->facts.family_count : 1, sizeof *seen);
  if (!seen) return vkds__fail(ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "allocator");
  uint32_t n = 0;
  for (uint32_t i = 0; i < ctx->resource_count; ++i) {
    const vkds_resource *r = &ctx->resources[i];
    if (r->dev != dev) continue;
    uint32_t k = 0;
    while (k < n && seen[k] != r->family) ++k;
    if (k == n && n < (dev->facts.family_count ? dev->facts.family_count : 1)) seen[n++] = r->family;
  }
  if (n < 2) {
    vkds__free(ctx, seen);
    return VKDS_SUCCESS;
  }
  a->families = seen, a->family_count = n;
  vkds__log(ctx, VKDS_LOG_DEBUG, "device %u: buffers shared by its resources' %u queue families (concurrent)",
            dev->index, n);
  return VKDS_SUCCESS;
}

void vkds__buffer_sharing(const vkds__device *dev, VkBufferCreateInfo *bci) {
  const vkds__allocator *a = dev->allocator;
  bci->sharingMode = VK_SHARING_MODE_EXCLUSIVE, bci->queueFamilyIndexCount = 0, bci->pQueueFamilyIndices = NULL;
  if (!a || a->family_count < 2) return;
  bci->sharingMode = VK_SHARING_MODE_CONCURRENT;
  bci->queueFamilyIndexCount = a->family_count;
  bci->pQueueFamilyIndices = a->families;
}

vkds_result vkds__allocator_init(vkds__device *dev) {
  vkds__allocator *a = vkds__alloc(dev->ctx, sizeof *a);
  if (!a) return vkds__fail(dev->ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "allocator");
  pthread_mutex_init(&a->lock, NULL);
  pthread_mutex_init(&dev->staging_lock, NULL); /* lives and dies with the allocator */
  a->usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  if (dev->enabled.buffer_device_address) a->usage |= VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
  const VkPhysicalDeviceLimits *lim = &dev->facts.props.properties.limits;
  a->align = 64;
  if (lim->minStorageBufferOffsetAlignment > a->align) a->align = lim->minStorageBufferOffsetAlignment;
  if (lim->nonCoherentAtomSize > a->align) a->align = lim->nonCoherentAtomSize;
  a->block_bytes = DEFAULT_BLOCK_BYTES;
  a->limit = dev->ctx->device_memory_limit;
  if (a->limit && a->block_bytes > a->limit / 4) a->block_bytes = align_up(a->limit / 4 + 1, a->align);
  dev->allocator = a;
  VKDS_CHECK(note_families(dev, a));
  /* The memory types a buffer with this usage may use, asked once of a tiny buffer (the
   * answer depends only on usage and flags, not on size). */
  VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = 256, .usage = a->usage};
  vkds__buffer_sharing(dev, &bci);
  VkBuffer probe;
  VkResult vr = dev->vk.vkCreateBuffer(dev->device, &bci, vkds__vk_allocator(dev->ctx), &probe);
  if (vr != VK_SUCCESS) return vkds__vk_fail(dev->ctx, vr, "vkCreateBuffer");
  VkMemoryRequirements req;
  dev->vk.vkGetBufferMemoryRequirements(dev->device, probe, &req);
  dev->vk.vkDestroyBuffer(dev->device, probe, vkds__vk_allocator(dev->ctx));
  a->type_bits = req.memoryTypeBits;
  return VKDS_SUCCESS;
}

static void block_free(vkds__device *dev, vkds__block *b) {
  for (free_range *f = b->free, *next; f; f = next) {
    next = f->next;
    vkds__free(dev->ctx, f);
  }
  if (b->buffer) dev->vk.vkDestroyBuffer(dev->device, b->buffer, vkds__vk_allocator(dev->ctx));
  if (b->memory) dev->vk.vkFreeMemory(dev->device, b->memory, vkds__vk_allocator(dev->ctx));
  vkds__free(dev->ctx, b);
}

void vkds__allocator_destroy(vkds__device *dev) {
  vkds__allocator *a = dev->allocator;
  if (!a) return;
  /* vkds's own buffers are gone by now: what is left is the application's, destroyed
   * here (its handles dangle from here on: destroying one afterwards is a use after
   * free). Imported, dedicated and host buffers were left to leak before, and the first
   * two to the validation layer's report at vkDestroyDevice (found by a new-user probe). */
  uint64_t live = 0;
  for (vkds_buffer *b = a->live, *next; b; b = next, ++live) {
    next = b->next_live;
    if (b->kind == VKDS_MEMORY_HOST) {
      vkds__free(dev->ctx, b->mapped);
    } else if (!b->block) { /* its own memory (a sub-allocated one goes with its block below) */
      dev->vk.vkDestroyBuffer(dev->device, b->vk, vkds__vk_allocator(dev->ctx));
      dev->vk.vkFreeMemory(dev->device, b->memory, vkds__vk_allocator(dev->ctx));
    }
    vkds__free(dev->ctx, b);
  }
  if (live)
    vkds__log(dev->ctx, VKDS_LOG_WARN,
              "vkds_context_destroy: %llu buffer(s) of device %u were not destroyed first (the application's, "
              "or held by asynchronous calls not yet released, or by calls whose work outlived a destroy timeout "
              "and was dropped); they are destroyed now, and a vkds_buffer_destroy of one afterwards is a use "
              "after free",
              (unsigned long long)live, dev->index);
  for (uint32_t t = 0; t < VK_MAX_MEMORY_TYPES; ++t)
    for (vkds__block *b = a->blocks[t], *next; b; b = next) {
      next = b->next;
      block_free(dev, b);
    }
  pthread_mutex_destroy(&a->lock);
  pthread_mutex_destroy(&dev->staging_lock);
  vkds__free(dev->ctx, a->families);
  vkds__free(dev->ctx, a);
  dev->allocator = NULL;
}

/* Creates a VkBuffer of `size` bound to new memory of type `t` (mapped when
 * host-visible). `import` non-NULL imports that host memory instead of allocating.
 * Returns VK_ERROR_OUT_OF_DEVICE_MEMORY without calling Vulkan when the limit is hit. */
static VkResult make_memory(vkds__device *dev, uint64_t size, uint32_t t, void *import, VkBuffer *buffer,
                            VkDeviceMemory *memory, void **mapped, VkDeviceAddress *address, uint64_t *bytes) {
  vkds__allocator *a = dev->allocator;
  bool local = type_is_device_local(dev, t);
  if (local && a->limit && a->stats.device_local_bytes + size > a->limit) return VK_ERROR_OUT_OF_DEVICE_MEMORY;
  VkExternalMemoryBufferCreateInfo ext = {.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO,
                                          .handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT};
  VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                            .pNext = import ? &ext : NULL,
                            .size = size,
                            .usage = a->usage};
  vkds__buffer_sharing(dev, &bci);
  *buffer = VK_NULL_HANDLE, *memory = VK_NULL_HANDLE, *mapped = NULL, *address = 0;
  VkResult vr = dev->vk.vkCreateBuffer(dev->device, &bci, vkds__vk_allocator(dev->ctx), buffer);
  if (vr != VK_SUCCESS) { /* a failed call's outputs are undefined */
    *buffer = VK_NULL_HANDLE;
    return vr;
  }
  VkMemoryRequirements req;
  dev->vk.vkGetBufferMemoryRequirements(dev->device, *buffer, &req);
  if (import && req.size > size) vr = VK_ERROR_INVALID_EXTERNAL_HANDLE;
  VkImportMemoryHostPointerInfoEXT host = {.sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT,
                                           .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT,
                                           .pHostPointer = import};
  VkMemoryAllocateFlagsInfo flags = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO,
                                     .pNext = import ? &host : NULL,
                                     .flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT};
  VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                              .pNext = dev->enabled.buffer_device_address ? (void *)&flags : (import ? (void *)&host : NULL),
                              .allocationSize = import ? size : req.size,
                              .memoryTypeIndex = t};
  if (vr == VK_SUCCESS) {
    vr = dev->vk.vkAllocateMemory(dev->device, &mai, vkds__vk_allocator(dev->ctx), memory);
    if (vr != VK_SUCCESS) *memory = VK_NULL_HANDLE;
  }
  if (vr == VK_SUCCESS) vr = dev->vk.vkBindBufferMemory(dev->device, *buffer, *memory, 0);
  VkMemoryPropertyFlags mf = dev->facts.memory.memoryTypes[t].propertyFlags;
  if (vr == VK_SUCCESS && !import && (mf & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT))
    vr = dev->vk.vkMapMemory(dev->device, *memory, 0, VK_WHOLE_SIZE, 0, mapped);
  if (vr != VK_SUCCESS) {
    dev->vk.vkDestroyBuffer(dev->device, *buffer, vkds__vk_allocator(dev->ctx));
    if (*memory) dev->vk.vkFreeMemory(dev->device, *memory, vkds__vk_allocator(dev->ctx));
    *buffer = VK_NULL_HANDLE, *memory = VK_NULL_HANDLE, *mapped = NULL;
    return vr;
  }
  if (import) *mapped = import;
  if (dev->enabled.buffer_device_address) {
    VkBufferDeviceAddressInfo ai = {.sType = VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO, .buffer = *buffer};
    *address = dev->vk.vkGetBufferDeviceAddress(dev->device, &ai);
  }
  *bytes = mai.allocationSize;
  a->stats.allocated_bytes += mai.allocationSize;
  if (local) a->stats.device_local_bytes += mai.allocationSize;
  return VK_SUCCESS;
}

static void unmake_memory(vkds__device *dev, uint32_t t, uint64_t bytes) {
  vkds__allocator *a = dev->allocator;
  a->stats.allocated_bytes -= bytes;
  if (type_is_device_local(dev, t)) a->stats.device_local_bytes -= bytes;
}

/* First fit: takes `size` bytes (aligned) from the block's free list. */
static bool block_take(const vkds_context *ctx, vkds__block *b, uint64_t size, uint64_t align, uint64_t *offset) {
  for (free_range **p = &b->free; *p; p = &(*p)->next) {
    free_range *f = *p;
    uint64_t start = align_up(f->offset, align);
    if (start + size > f->offset + f->size) continue;
    uint64_t tail = f->offset + f->size - (start + size);
    if (start > f->offset) {
      /* keep the alignment gap in front as a free range of its own */
      free_range *after = tail ? vkds__alloc(ctx, sizeof *after) : NULL;
      if (tail && !after) return false;
      f->size = start - f->offset;
      if (after) {
        *after = (free_range){f->next, start + size, tail};
        f->next = after;
      }
    } else if (tail) {
      f->offset += size, f->size = tail;
    } else {
      *p = f->next;
      vkds__free(ctx, f);
    }
    *offset = start;
    return true;
  }
  return false;
}

/* Returns a range to the block's free list, merging it with its neighbours. */
static bool block_give(const vkds_context *ctx, vkds__block *b, uint64_t offset, uint64_t size) {
  free_range *prev = NULL, *next = b->free;
  while (next && next->offset < offset) prev = next, next = next->next;
  free_range **p = prev ? &prev->next : &b->free;
  if (prev && prev->offset + prev->size == offset) {
    prev->size += size;
    if (next && prev->offset + prev->size == next->offset) {
      prev->size += next->size;
      prev->next = next->next;
      vkds__free(ctx, next);
    }
    return true;
  }
  if (next && offset + size == next->offset) {
    next->offset = offset, next->size += size;
    return true;
  }
  free_range *f = vkds__alloc(ctx, sizeof *f);
  if (!f) return false; /* the range is lost to this block until it is freed: harmless */
  *f = (free_range){next, offset, size};
  *p = f;
  return true;
}

static VkResult block_create(vkds__device *dev, uint32_t t, vkds__block **out) {
  vkds__allocator *a = dev->allocator;
  vkds__block *b = vkds__alloc(dev->ctx, sizeof *b);
  free_range *f = vkds__alloc(dev->ctx, sizeof *f);
  if (!b || !f) {
    vkds__free(dev->ctx, b), vkds__free(dev->ctx, f);
    return VK_ERROR_OUT_OF_HOST_MEMORY;
  }
  VkResult vr = make_memory(dev, a->block_bytes, t, NULL, &b->buffer, &b->memory, &b->mapped, &b->address, &b->size);
  if (vr != VK_SUCCESS) {
    vkds__free(dev->ctx, b), vkds__free(dev->ctx, f);
    return vr;
  }
  b->type_index = t;
  *f = (free_range){NULL, 0, a->block_bytes}; /* b->size is the allocation, maybe more */
  b->free = f;
  b->next = a->blocks[t];
  a->blocks[t] = b;
  ++a->stats.blocks;
  *out = b;
  return VK_SUCCESS;
}

static void place_in_block(vkds_buffer *buf, vkds__block *b, uint64_t offset, uint64_t reserved) {
  buf->block = b;
  buf->vk = b->buffer;
  buf->offset = offset;
  buf->reserved = reserved;
  buf->address = b->address ? b->address + offset : 0;
  buf->mapped = b->mapped ? (char *)b->mapped + offset : NULL;
  ++b->live;
}

/* Tries memory type `t`: a free range in a block, a new block, the buffer's own memory. */
static VkResult alloc_in_type(vkds__device *dev, vkds_buffer *buf, uint32_t t, uint32_t flags) {
  vkds__allocator *a = dev->allocator;
  VkResult vr = VK_ERROR_OUT_OF_DEVICE_MEMORY;
  uint64_t reserved = align_up(buf->size, a->align);
  if (!(flags & VKDS_BUFFER_DEDICATED) && reserved <= a->block_bytes / 4) {
    uint64_t offset;
    for (vkds__block *b = a->blocks[t]; b; b = b->next)
      if (block_take(dev->ctx, b, reserved, a->align, &offset)) {
        place_in_block(buf, b, offset, reserved);
        return VK_SUCCESS;
      }
    vkds__block *b;
    vr = block_create(dev, t, &b);
    if (vr == VK_SUCCESS && block_take(dev->ctx, b, reserved, a->align, &offset)) {
      place_in_block(buf, b, offset, reserved);
      return VK_SUCCESS;
    }
    if (vr == VK_ERROR_OUT_OF_HOST_MEMORY) return vr;
  }
  vr = make_memory(dev, buf->size, t, NULL, &buf->vk, &buf->memory, &buf->mapped, &buf->address, &buf->reserved);
  if (vr == VK_SUCCESS) ++a->stats.dedicated;
  /* A buffer too large for the blocks' rule, refused its own memory (past
   * device_memory_limit, or the device is full), still fits where a block has that much
   * free: a 4 KiB buffer's 12 MiB block under a 48 MiB limit stayed empty while 5 MiB
   * buffers failed beside it (a memory probe). */
  if (vr == VK_ERROR_OUT_OF_DEVICE_MEMORY && !(flags & VKDS_BUFFER_DEDICATED) && reserved > a->block_bytes / 4) {
    uint64_t offset;
    for (vkds__block *b = a->blocks[t]; b; b = b->next)
      if (block_take(dev->ctx, b, reserved, a->align, &offset)) {
        place_in_block(buf, b, offset, reserved);
        return VK_SUCCESS;
      }
  }
  return vr;
}

vkds_result vkds__allocator_alloc(vkds__device *dev, vkds_buffer *buf, uint32_t flags) {
  vkds__allocator *a = dev->allocator;
  const VkPhysicalDeviceMemoryProperties *m = &dev->facts.memory;
  kind_policy kp = policy_of(buf->kind);
  /* candidates: types with the required flags, best first */
  uint32_t order[VK_MAX_MEMORY_TYPES], n = 0;
  int score[VK_MAX_MEMORY_TYPES];
  for (uint32_t t = 0; t < m->memoryTypeCount; ++t) {
    VkMemoryPropertyFlags f = m->memoryTypes[t].propertyFlags;
    if (!(a->type_bits & (1u << t)) || (f & kp.required) != kp.required) continue;
    if (f & VK_MEMORY_PROPERTY_PROTECTED_BIT) continue;
    bool preferred = (f & kp.preferred) == kp.preferred;
    if ((flags & VKDS_BUFFER_NO_FALLBACK) && !preferred) continue;
    int s = 4 * __builtin_popcount(f & kp.preferred) - __builtin_popcount(f & kp.avoided);
    uint32_t i = n++;
    for (; i > 0 && score[i - 1] < s; --i) order[i] = order[i - 1], score[i] = score[i - 1];
    order[i] = t, score[i] = s;
  }
  if (n == 0)
    return vkds__fail(dev->ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS,
                      "vkds_buffer_create: device '%s' has no memory type for this kind of buffer",
                      dev->facts.props.properties.deviceName);
  pthread_mutex_lock(&a->lock);
  VkResult vr = VK_ERROR_OUT_OF_DEVICE_MEMORY;
  for (uint32_t i = 0; i < n; ++i) {
    vr = alloc_in_type(dev, buf, order[i], flags);
    if (vr == VK_SUCCESS) {
      buf->type_index = order[i];
      break;
    }
    /* only running out moves on to the next type; anything else is a real failure */
    if (vr != VK_ERROR_OUT_OF_DEVICE_MEMORY && vr != VK_ERROR_OUT_OF_HOST_MEMORY) break;
  }
  if (vr == VK_SUCCESS) {
    a->stats.used_bytes += buf->size;
    ++a->stats.buffers;
  }
  pthread_mutex_unlock(&a->lock);
  /* host memory (vkds's bookkeeping, or the driver's) ran out last: that is the error */
  /* (inside another call, this buffer is one of vkds's own for it: named by that call) */
  const char *who = vkds__caller("vkds_buffer_create"), *own = vkds__in_call() ? " (a buffer of vkds's own)" : "";
  if (vr == VK_ERROR_OUT_OF_HOST_MEMORY)
    return vkds__fail(dev->ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, vr, "%s: out of host memory for %llu bytes%s on '%s'", who,
                      (unsigned long long)buf->size, own, dev->facts.props.properties.deviceName);
  if (vr == VK_ERROR_OUT_OF_DEVICE_MEMORY) {
    /* the context's own cap, when it is what stopped it (no Vulkan call failed then) */
    char why[160] = "";
    pthread_mutex_lock(&a->lock);
    uint64_t in_use = a->stats.device_local_bytes;
    pthread_mutex_unlock(&a->lock);
    bool capped = a->limit && in_use + buf->size > a->limit;
    if (capped)
      snprintf(why, sizeof why, "; device_memory_limit is %llu bytes and %llu are allocated",
               (unsigned long long)a->limit, (unsigned long long)in_use);
    return vkds__fail(dev->ctx, VKDS_ERROR_OUT_OF_DEVICE_MEMORY, capped ? VK_SUCCESS : vr,
                      "%s: no memory for %llu bytes%s on '%s'%s%s", who, (unsigned long long)buf->size, own,
                      dev->facts.props.properties.deviceName,
                      (flags & VKDS_BUFFER_NO_FALLBACK) ? " (fallback disabled)" : " (every memory type tried)", why);
  }
  if (vr != VK_SUCCESS) return vkds__vk_fail(dev->ctx, vr, "allocating buffer memory");
  buf->flags = m->memoryTypes[buf->type_index].propertyFlags;
  buf->coherent = vkds__memory_coherent(buf->flags);
  return VKDS_SUCCESS;
}

bool vkds__allocator_trim(vkds__device *dev) {
  vkds__allocator *a = dev->allocator;
  bool freed = false;
  pthread_mutex_lock(&a->lock);
  for (uint32_t t = 0; t < VK_MAX_MEMORY_TYPES; ++t)
    for (vkds__block **p = &a->blocks[t]; *p;) {
      vkds__block *b = *p;
      if (b->live) {
        p = &b->next;
        continue;
      }
      *p = b->next;
      --a->stats.blocks;
      unmake_memory(dev, b->type_index, b->size);
      block_free(dev, b);
      freed = true;
    }
  pthread_mutex_unlock(&a->lock);
  return freed;
}

void vkds__allocator_free(vkds__device *dev, vkds_buffer *buf) {
  vkds__allocator *a = dev->allocator;
  pthread_mutex_lock(&a->lock);
  a->stats.used_bytes -= buf->size;
  --a->stats.buffers;
  if (buf->block) {
    vkds__block *b = buf->block;
    block_give(dev->ctx, b, buf->offset, buf->reserved);
    /* an empty block goes back to the driver unless it is its type's only one: keeping
     * one spares a create/free loop a vkAllocateMemory per iteration */
    if (--b->live == 0 && !(a->blocks[b->type_index] == b && !b->next)) {
      vkds__block **p = &a->blocks[b->type_index];
      while (*p != b) p = &(*p)->next;
      *p = b->next;
      --a->stats.blocks;
      unmake_memory(dev, b->type_index, b->size);
      block_free(dev, b);
    }
  } else {
    dev->vk.vkDestroyBuffer(dev->device, buf->vk, vkds__vk_allocator(dev->ctx));
    dev->vk.vkFreeMemory(dev->device, buf->memory, vkds__vk_allocator(dev->ctx));
    unmake_memory(dev, buf->type_index, buf->reserved);
    if (buf->kind != VKDS_MEMORY_IMPORTED) --a->stats.dedicated;
  }
  pthread_mutex_unlock(&a->lock);
}

vkds_result vkds__allocator_import(vkds__device *dev, vkds_buffer *buf, void *host) {
  vkds__allocator *a = dev->allocator;
  VkMemoryHostPointerPropertiesEXT hp = {.sType = VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT};
  VkResult vr = dev->vk.vkGetMemoryHostPointerPropertiesEXT(
      dev->device, VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT, host, &hp);
  if (vr != VK_SUCCESS) return vkds__vk_fail(dev->ctx, vr, "vkGetMemoryHostPointerPropertiesEXT");
  /* cached, coherent system memory is what imported pages are; prefer the type that
   * says so */
  uint32_t t = vkds__memory_type(dev, hp.memoryTypeBits & a->type_bits, 0,
                                 VK_MEMORY_PROPERTY_HOST_CACHED_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
  if (t == UINT32_MAX)
    return vkds__fail(dev->ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS,
                      "vkds_buffer_import_host: '%s' offers no memory type for this pointer",
                      dev->facts.props.properties.deviceName);
  pthread_mutex_lock(&a->lock);
  vr = make_memory(dev, buf->size, t, host, &buf->vk, &buf->memory, &buf->mapped, &buf->address, &buf->reserved);
  if (vr == VK_SUCCESS) {
    buf->type_index = t;
    buf->flags = dev->facts.memory.memoryTypes[t].propertyFlags;
    /* imported host memory is never mapped through Vulkan, so it cannot be flushed:
     * what its type says, the host's writes reach the device as they do (the types
     * drivers give host pointers are coherent) */
    buf->coherent = true;
    a->stats.used_bytes += buf->size;
    ++a->stats.buffers;
    buf->next_import = a->imports;
    a->imports = buf;
  }
  pthread_mutex_unlock(&a->lock);
  if (vr == VK_ERROR_OUT_OF_DEVICE_MEMORY || vr == VK_ERROR_OUT_OF_HOST_MEMORY)
    return vkds__fail(dev->ctx, VKDS_ERROR_OUT_OF_DEVICE_MEMORY, vr, "vkds_buffer_import_host: out of memory");
  if (vr != VK_SUCCESS) return vkds__vk_fail(dev->ctx, vr, "vkds_buffer_import_host: the driver refused the pointer");
  return VKDS_SUCCESS;
}

void vkds__buffer_track(vkds__device *dev, vkds_buffer *buf) {
  vkds__allocator *a = dev->allocator;
  pthread_mutex_lock(&a->lock);
  buf->prev_live = NULL;
  buf->next_live = a->live;
  if (a->live) a->live->prev_live = buf;
  a->live = buf;
  pthread_mutex_unlock(&a->lock);
}

void vkds__buffer_untrack(vkds__device *dev, vkds_buffer *buf) {
  vkds__allocator *a = dev->allocator;
  pthread_mutex_lock(&a->lock);
  if (buf->prev_live) buf->prev_live->next_live = buf->next_live;
  else a->live = buf->next_live;
  if (buf->next_live) buf->next_live->prev_live = buf->prev_live;
  pthread_mutex_unlock(&a->lock);
}

void vkds__import_unregister(vkds__device *dev, vkds_buffer *buf) {
  vkds__allocator *a = dev->allocator;
  pthread_mutex_lock(&a->lock);
  for (vkds_buffer **p = &a->imports; *p; p = &(*p)->next_import)
    if (*p == buf) {
      *p = buf->next_import;
      break;
    }
  pthread_mutex_unlock(&a->lock);
}

bool vkds__import_find(vkds__device *dev, const void *host, uint64_t bytes, vkds_buffer **buf, uint64_t *offset) {
  vkds__allocator *a = dev->allocator;
  if (!a || !host) return false;
  uintptr_t p = (uintptr_t)host;
  bool found = false;
  pthread_mutex_lock(&a->lock);
  for (vkds_buffer *b = a->imports; b && !found; b = b->next_import) {
    uintptr_t base = (uintptr_t)b->mapped;
    if (p >= base && p - base <= b->size && bytes <= b->size - (p - base)) {
      if (buf) *buf = b;
      if (offset) *offset = p - base;
      found = true;
    }
  }
  pthread_mutex_unlock(&a->lock);
  return found;
}

vkds_result vkds_memory_get_stats(const vkds_resource *res, vkds_memory_stats *out) {
  if (!res || !out)
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "vkds_memory_get_stats: NULL argument");
  vkds__allocator *a = res->dev->allocator;
  pthread_mutex_lock(&a->lock);
  *out = a->stats;
  pthread_mutex_unlock(&a->lock);
  return VKDS_SUCCESS;
}

/* The range of a buffer's memory that holds [offset, offset+bytes) of it, widened to
 * nonCoherentAtomSize as non-coherent flushes require (the allocator aligned every
 * buffer's start to that size). */
static VkMappedMemoryRange mapped_range(const vkds_buffer *buf, uint64_t offset, uint64_t bytes) {
  uint64_t atom = buf->dev->facts.props.properties.limits.nonCoherentAtomSize;
  VkDeviceMemory memory = buf->block ? buf->block->memory : buf->memory;
  uint64_t in_memory = buf->block ? buf->offset : 0, limit = buf->block ? buf->block->size : buf->reserved;
  uint64_t start = (in_memory + offset) / atom * atom, end = align_up(in_memory + offset + bytes, atom);
  return (VkMappedMemoryRange){.sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE,
                               .memory = memory,
                               .offset = start,
                               .size = end > limit ? VK_WHOLE_SIZE : end - start};
}

static atomic_bool treat_noncoherent;

void vkds__test_treat_memory_noncoherent(bool on) { atomic_store(&treat_noncoherent, on); }

bool vkds__memory_coherent(VkMemoryPropertyFlags flags) {
  return (flags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) && !atomic_load(&treat_noncoherent);
}

/* (only memory vkds mapped: a device buffer in memory the host cannot see is not
 * coherent either, and flushing it is invalid usage, which the validation layer on an
 * H200 reported for sequences passed directly) */
void vkds__buffer_flush(const vkds_buffer *buf, uint64_t offset, uint64_t bytes) {
  if (buf->coherent || !bytes || buf->kind == VKDS_MEMORY_HOST || !buf->mapped) return;
  VkMappedMemoryRange r = mapped_range(buf, offset, bytes);
  buf->dev->vk.vkFlushMappedMemoryRanges(buf->dev->device, 1, &r);
}

void vkds__buffer_invalidate_range(const vkds_buffer *buf, uint64_t offset, uint64_t bytes) {
  if (buf->coherent || !bytes || buf->kind == VKDS_MEMORY_HOST || !buf->mapped) return;
  VkMappedMemoryRange r = mapped_range(buf, offset, bytes);
  buf->dev->vk.vkInvalidateMappedMemoryRanges(buf->dev->device, 1, &r);
}
