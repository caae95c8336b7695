/* bench/bench_util.c: timing and command helpers the modes share. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "bench.h"

uint64_t bench_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The library's rule for its own switches (lib/core/result.c, vkds__getenv_on): unset
 * or empty is off, and so are 0, false and off in any case; anything else is on. */
bool bench_env_on(const char *name) {
  const char *v = getenv(name);
  return v && *v && strcmp(v, "0") != 0 && strcasecmp(v, "false") != 0 && strcasecmp(v, "off") != 0;
}

const char *bench_error_detail(vkds_result r) {
  const char *msg = vkds_last_error_message(), *text = vkds_result_str(r);
  size_t n = strlen(text);
  return strncmp(msg, text, n) == 0 && strncmp(msg + n, ": ", 2) == 0 ? msg + n + 2 : msg;
}

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double bench_median(double *samples, uint32_t n) {
  if (n == 0) return 0.0;
  qsort(samples, n, sizeof *samples, compare);
  return samples[n / 2];
}

int bench_vk_buffer_create(vkds_resource *res, VkDeviceSize size, VkBufferUsageFlags usage, VkMemoryPropertyFlags want,
                           VkMemoryPropertyFlags avoid, bench_vk_buffer *out) {
  VkPhysicalDevice phys;
  *out = (bench_vk_buffer){0};
  vkds_resource_vk_handles(res, &phys, &out->dev, NULL);
  VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = size, .usage = usage};
  if (vkCreateBuffer(out->dev, &bci, NULL, &out->buffer) != VK_SUCCESS) return 1;
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(out->dev, out->buffer, &req);
  VkPhysicalDeviceMemoryProperties mp;
  vkGetPhysicalDeviceMemoryProperties(phys, &mp);
  uint32_t type = UINT32_MAX;
  for (int pass = 0; pass < 2 && type == UINT32_MAX; ++pass)
    for (uint32_t t = 0; t < mp.memoryTypeCount && type == UINT32_MAX; ++t) {
      VkMemoryPropertyFlags f = mp.memoryTypes[t].propertyFlags;
      if ((req.memoryTypeBits & (1u << t)) && (f & want) == want && (pass == 1 || !(f & avoid))) type = t;
    }
  VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = req.size,
                              .memoryTypeIndex = type};
  if (type == UINT32_MAX || vkAllocateMemory(out->dev, &mai, NULL, &out->memory) != VK_SUCCESS ||
      vkBindBufferMemory(out->dev, out->buffer, out->memory, 0) != VK_SUCCESS)
    return bench_vk_buffer_destroy(out), 1;
  if ((mp.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) &&
      vkMapMemory(out->dev, out->memory, 0, VK_WHOLE_SIZE, 0, &out->mapped) != VK_SUCCESS)
    return bench_vk_buffer_destroy(out), 1;
  return 0;
}

void bench_vk_buffer_destroy(bench_vk_buffer *b) {
  if (b->buffer) vkDestroyBuffer(b->dev, b->buffer, NULL);
  if (b->memory) vkFreeMemory(b->dev, b->memory, NULL);
  *b = (bench_vk_buffer){0};
}

void bench_global_barrier(VkCommandBuffer cmd, VkPipelineStageFlags src, VkPipelineStageFlags dst) {
  const VkPipelineStageFlags shader = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, transfer = VK_PIPELINE_STAGE_TRANSFER_BIT;
  VkMemoryBarrier mb = {
      .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
      .srcAccessMask =
          (src & shader ? VK_ACCESS_SHADER_WRITE_BIT : 0) | (src & transfer ? VK_ACCESS_TRANSFER_WRITE_BIT : 0),
      .dstAccessMask = (dst & shader ? VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT : 0) |
                       (dst & transfer ? VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT : 0) |
                       (dst & VK_PIPELINE_STAGE_HOST_BIT ? VK_ACCESS_HOST_READ_BIT : 0)};
  vkCmdPipelineBarrier(cmd, src, dst, 0, 1, &mb, 0, NULL, 0, NULL);
}
