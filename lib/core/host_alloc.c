/* lib/core/host_alloc.c: every host allocation vkds makes, through the context's
 * allocator (vkds_context_info.allocator) or, without one (or without a context), the C
 * library's malloc family. lib/internal.h says which scope each helper passes. */
#include "internal.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static const VkAllocationCallbacks *callbacks(const vkds_context *ctx) {
  return ctx && ctx->has_allocator ? &ctx->allocator : NULL;
}

const VkAllocationCallbacks *vkds__vk_allocator(const vkds_context *ctx) { return callbacks(ctx); }

static void *allocate(const vkds_context *ctx, size_t size, size_t align, VkSystemAllocationScope scope, bool zero) {
  const VkAllocationCallbacks *a = callbacks(ctx);
  if (size == 0) size = 1; /* a unique pointer, as calloc(0) may not give */
  if (!a) return zero ? calloc(1, size) : malloc(size);
  void *p = a->pfnAllocation(a->pUserData, size, align, scope);
  if (p && zero) memset(p, 0, size);
  return p;
}

void *vkds__alloc(const vkds_context *ctx, size_t size) {
  return allocate(ctx, size, alignof(max_align_t), VK_SYSTEM_ALLOCATION_SCOPE_OBJECT, true);
}

void *vkds__alloc_array(const vkds_context *ctx, size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) return NULL;
  return allocate(ctx, n * size, alignof(max_align_t), VK_SYSTEM_ALLOCATION_SCOPE_OBJECT, true);
}

void *vkds__temp_alloc(const vkds_context *ctx, size_t size) {
  return allocate(ctx, size, alignof(max_align_t), VK_SYSTEM_ALLOCATION_SCOPE_COMMAND, true);
}

void *vkds__temp_alloc_raw(const vkds_context *ctx, size_t size) {
  return allocate(ctx, size, alignof(max_align_t), VK_SYSTEM_ALLOCATION_SCOPE_COMMAND, false);
}

void *vkds__temp_alloc_array(const vkds_context *ctx, size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) return NULL;
  return allocate(ctx, n * size, alignof(max_align_t), VK_SYSTEM_ALLOCATION_SCOPE_COMMAND, true);
}

void *vkds__alloc_aligned(const vkds_context *ctx, size_t size, size_t align) {
  if (align < alignof(max_align_t)) align = alignof(max_align_t);
  if (align & (align - 1)) return NULL;
  const VkAllocationCallbacks *a = callbacks(ctx);
  if (a) return a->pfnAllocation(a->pUserData, size ? size : 1, align, VK_SYSTEM_ALLOCATION_SCOPE_OBJECT);
  /* C11 asks aligned_alloc for a size that is a multiple of the alignment */
  size_t rounded = ((size ? size : 1) + align - 1) & ~(align - 1);
  if (rounded < size) return NULL;
  return aligned_alloc(align, rounded);
}

void *vkds__realloc(const vkds_context *ctx, void *p, size_t size) {
  const VkAllocationCallbacks *a = callbacks(ctx);
  if (size == 0) size = 1; /* never a free in disguise */
  if (!a) return realloc(p, size);
  return a->pfnReallocation(a->pUserData, p, size, alignof(max_align_t), VK_SYSTEM_ALLOCATION_SCOPE_OBJECT);
}

void vkds__free(const vkds_context *ctx, void *p) {
  if (!p) return;
  const VkAllocationCallbacks *a = callbacks(ctx);
  if (a) a->pfnFree(a->pUserData, p);
  else free(p);
}

char *vkds__strdup(const vkds_context *ctx, const char *s) {
  size_t n = strlen(s) + 1;
  char *d = allocate(ctx, n, 1, VK_SYSTEM_ALLOCATION_SCOPE_OBJECT, false);
  if (d) memcpy(d, s, n);
  return d;
}
