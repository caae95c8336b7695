/* lib/kernel/pipeline_cache.c: one VkPipelineCache per device, loaded from and saved to the
 * folder given in vkds_context_info.pipeline_cache_dir, so a second start of a program
 * does not compile its pipelines again. The file is named after the device's
 * pipelineCacheUUID: another driver or device never reads it. */
#include "kernel_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The largest file vkds reads from the cache folder (a pipeline cache or a module): more
 * is not one of its files. */
#define VKDS__CACHE_FILE_MAX (1ull << 30)

static void cache_path(const vkds_context *ctx, const vkds__device *dev, char *path, size_t size) {
  const uint8_t *u = dev->facts.props.properties.pipelineCacheUUID;
  int n = snprintf(path, size, "%s/vkds-pipelines-", ctx->pipeline_cache_dir);
  for (unsigned i = 0; i < VK_UUID_SIZE && n > 0 && (size_t)n + 2 < size; ++i) n += snprintf(path + n, size - (size_t)n, "%02x", u[i]);
  if (n > 0 && (size_t)n < size) snprintf(path + n, size - (size_t)n, ".bin");
}

void *vkds__read_file(const vkds_context *ctx, const char *path, size_t *size) {
  *size = 0;
  /* a regular file only, opened without blocking: a FIFO of the name hung the open, and
   * a folder's ftell asked malloc for LONG_MAX bytes (a probe) */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return NULL;
  struct stat st;
  void *data = NULL;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && (uint64_t)st.st_size <= VKDS__CACHE_FILE_MAX &&
      (data = vkds__temp_alloc_raw(ctx, (size_t)st.st_size))) {
    size_t got = 0;
    while (got < (size_t)st.st_size) {
      ssize_t n = read(fd, (char *)data + got, (size_t)st.st_size - got);
      if (n <= 0 && !(n < 0 && errno == EINTR)) break;
      if (n > 0) got += (size_t)n;
    }
    if (got == (size_t)st.st_size) *size = got;
  }
  close(fd);
  if (!*size) vkds__free(ctx, data), data = NULL;
  return data;
}

int vkds__write_file(const char *path, const void *data, size_t size) {
  char tmp[1100];
  static atomic_uint serial;
  snprintf(tmp, sizeof tmp, "%s.%u.%u.tmp", path, (unsigned)getpid(), atomic_fetch_add(&serial, 1));
  /* write then rename: a reader never sees half a file */
  errno = 0;
  FILE *f = fopen(tmp, "wb");
  bool ok = f && fwrite(data, 1, size, f) == size;
  if (f) ok = (fclose(f) == 0) && ok;
  if (ok && rename(tmp, path) == 0) return 0;
  int err = errno ? errno : EIO;
  remove(tmp);
  return err;
}

vkds_result vkds__pipeline_cache_open(vkds__device *dev) {
  const vkds_context *ctx = dev->ctx;
  char path[1024];
  size_t size = 0;
  void *data = NULL;
  if (ctx->pipeline_cache_dir) {
    cache_path(ctx, dev, path, sizeof path);
    data = vkds__read_file(ctx, path, &size);
    /* the header (its length, version 1, vendor, device, cache UUID) says which device
     * wrote it; a foreign or damaged file is ignored, and the warning says which */
    const uint8_t *bytes = data;
    uint32_t head[2] = {0, 0};
    if (data && size >= 8) memcpy(head, bytes, 8);
    const char *why = !data ? NULL
                      : size < 32 || head[0] < 32 || head[1] != VK_PIPELINE_CACHE_HEADER_VERSION_ONE
                          ? "is damaged (no Vulkan pipeline cache header)"
                      : memcmp(bytes + 16, dev->facts.props.properties.pipelineCacheUUID, VK_UUID_SIZE) != 0
                          ? "is not for this device"
                          : NULL;
    if (why) {
      vkds__log(ctx, VKDS_LOG_WARN, "pipeline cache %s %s: ignored", path, why);
      vkds__free(ctx, data), data = NULL, size = 0;
    }
  }
  VkPipelineCacheCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO,
                                  .initialDataSize = size, .pInitialData = data};
  VkResult vr = dev->vk.vkCreatePipelineCache(dev->device, &ci, vkds__vk_allocator(ctx), &dev->pipeline_cache);
  vkds__free(ctx, data);
  if (vr != VK_SUCCESS) {
    dev->pipeline_cache = VK_NULL_HANDLE; /* undefined after a failure: close must not see it */
    return vkds__vk_fail(ctx, vr, "vkCreatePipelineCache");
  }
  return VKDS_SUCCESS;
}

void vkds__pipeline_cache_close(vkds__device *dev) {
  const vkds_context *ctx = dev->ctx;
  if (!dev->pipeline_cache) return;
  size_t size = 0;
  void *data = NULL;
  if (ctx->pipeline_cache_dir && !ctx->pipeline_cache_readonly &&
      dev->vk.vkGetPipelineCacheData(dev->device, dev->pipeline_cache, &size, NULL) == VK_SUCCESS && size &&
      (data = vkds__temp_alloc_raw(ctx, size)) &&
      dev->vk.vkGetPipelineCacheData(dev->device, dev->pipeline_cache, &size, data) == VK_SUCCESS) {
    char path[1024];
    cache_path(ctx, dev, path, sizeof path);
    int err = vkds__write_file(path, data, size);
    if (err) vkds__log(ctx, VKDS_LOG_WARN, "cannot save the pipeline cache to %s (%s)", path, strerror(err));
  }
  vkds__free(ctx, data);
  dev->vk.vkDestroyPipelineCache(dev->device, dev->pipeline_cache, vkds__vk_allocator(ctx));
  dev->pipeline_cache = VK_NULL_HANDLE;
}
