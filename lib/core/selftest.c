/* lib/core/selftest.c: vkds_resource_self_test, the end-to-end proof that a queue computes.
 *
 * It deliberately uses plain Vulkan objects of its own (a fence, a descriptor set, a
 * pipeline made from the embedded SPIR-V) rather than the backend and kernel layers, so
 * that it checks the device and the shader chain, not the rest of vkds. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "selftest.comp.h"

#define GROUP_SIZE 256u /* local_size_x of shaders/selftest.comp */
#define WAIT_NS 30000000000ull /* 30 s: a fill of 2^32 elements on a CPU device fits */

typedef struct params {
  uint32_t count, seed, base;
} params;

typedef struct state {
  vkds_resource *res;
  vkds__device *dev;
  VkCommandPool pool;
  VkCommandBuffer cmd;
  VkFence fence;
  VkQueryPool timestamps;
  VkDescriptorSetLayout set_layout;
  VkPipelineLayout layout;
  VkShaderModule module;
  VkPipeline pipeline;
  VkDescriptorPool descriptor_pool;
  VkDescriptorSet set;
  vkds__buffer data, readback;
} state;

/* The same hash as shaders/selftest.comp. */
static uint32_t hash(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

static double now_ns(void) {
  struct timespec ts;
  timespec_get(&ts, TIME_UTC);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

#define VKTRY(call, what)                                                                   \
  do {                                                                                      \
    VkResult vr_ = (call);                                                                  \
    if (vr_ != VK_SUCCESS) return vkds__vk_fail(s->dev->ctx, vr_, what);                   \
  } while (0)
/* A creation: a failed call leaves its output undefined (Vulkan's rule), so the handle
 * is cleared (teardown destroys the ones that are set). */
#define VKCREATE(call, handle, what)                                                        \
  do {                                                                                      \
    VkResult vr_ = (call);                                                                  \
    if (vr_ != VK_SUCCESS) {                                                                \
      (handle) = VK_NULL_HANDLE;                                                            \
      return vkds__vk_fail(s->dev->ctx, vr_, what);                                         \
    }                                                                                       \
  } while (0)

static vkds_result setup(state *s, VkDeviceSize bytes) {
  vkds__device *dev = s->dev;
  const struct VolkDeviceTable *vk = &dev->vk;
  VkDevice d = dev->device;

  VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                 .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                 .queueFamilyIndex = s->res->family};
  VKCREATE(vk->vkCreateCommandPool(d, &pci, vkds__vk_allocator(s->dev->ctx), &s->pool), s->pool, "vkCreateCommandPool");
  VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                     .commandPool = s->pool,
                                     .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                     .commandBufferCount = 1};
  VKTRY(vk->vkAllocateCommandBuffers(d, &cai, &s->cmd), "vkAllocateCommandBuffers");
  VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VKCREATE(vk->vkCreateFence(d, &fci, vkds__vk_allocator(s->dev->ctx), &s->fence), s->fence, "vkCreateFence");
  if (dev->facts.families[s->res->family].timestampValidBits) {
    VkQueryPoolCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                 .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                 .queryCount = 2};
    VKCREATE(vk->vkCreateQueryPool(d, &qci, vkds__vk_allocator(s->dev->ctx), &s->timestamps), s->timestamps, "vkCreateQueryPool");
  }

  VkDescriptorSetLayoutBinding binding = {.binding = 0,
                                          .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                          .descriptorCount = 1,
                                          .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
  VkDescriptorSetLayoutCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                         .bindingCount = 1,
                                         .pBindings = &binding};
  VKCREATE(vk->vkCreateDescriptorSetLayout(d, &dci, vkds__vk_allocator(s->dev->ctx), &s->set_layout), s->set_layout, "vkCreateDescriptorSetLayout");
  VkPushConstantRange push = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .size = sizeof(params)};
  VkPipelineLayoutCreateInfo lci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                    .setLayoutCount = 1,
                                    .pSetLayouts = &s->set_layout,
                                    .pushConstantRangeCount = 1,
                                    .pPushConstantRanges = &push};
  VKCREATE(vk->vkCreatePipelineLayout(d, &lci, vkds__vk_allocator(s->dev->ctx), &s->layout), s->layout, "vkCreatePipelineLayout");
  VkShaderModuleCreateInfo mci = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                  .codeSize = sizeof vkds_spirv_selftest,
                                  .pCode = vkds_spirv_selftest};
  VKCREATE(vk->vkCreateShaderModule(d, &mci, vkds__vk_allocator(s->dev->ctx), &s->module), s->module, "vkCreateShaderModule");
  VkComputePipelineCreateInfo cpci = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = s->module,
                .pName = "main"},
      .layout = s->layout,
  };
  VKCREATE(vk->vkCreateComputePipelines(d, VK_NULL_HANDLE, 1, &cpci, vkds__vk_allocator(s->dev->ctx), &s->pipeline), s->pipeline,
        "vkCreateComputePipelines");

  VkDescriptorPoolSize size = {.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .descriptorCount = 1};
  VkDescriptorPoolCreateInfo dpci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                     .maxSets = 1,
                                     .poolSizeCount = 1,
                                     .pPoolSizes = &size};
  VKCREATE(vk->vkCreateDescriptorPool(d, &dpci, vkds__vk_allocator(s->dev->ctx), &s->descriptor_pool), s->descriptor_pool, "vkCreateDescriptorPool");
  VkDescriptorSetAllocateInfo dsai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                      .descriptorPool = s->descriptor_pool,
                                      .descriptorSetCount = 1,
                                      .pSetLayouts = &s->set_layout};
  VKTRY(vk->vkAllocateDescriptorSets(d, &dsai, &s->set), "vkAllocateDescriptorSets");

  VKDS_CHECK(vkds__buffer_create(dev, bytes,
                                 VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                                 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, &s->data));
  VKDS_CHECK(vkds__buffer_create(dev, bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                 VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
                                 VK_MEMORY_PROPERTY_HOST_CACHED_BIT, &s->readback));
  VkDescriptorBufferInfo dbi = {.buffer = s->data.buffer, .range = bytes};
  VkWriteDescriptorSet w = {.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                            .dstSet = s->set,
                            .descriptorCount = 1,
                            .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                            .pBufferInfo = &dbi};
  vk->vkUpdateDescriptorSets(d, 1, &w, 0, NULL);
  return VKDS_SUCCESS;
}

static void teardown(state *s) {
  vkds__device *dev = s->dev;
  const struct VolkDeviceTable *vk = &dev->vk;
  VkDevice d = dev->device;
  vkds__buffer_destroy(dev, &s->data);
  vkds__buffer_destroy(dev, &s->readback);
  if (s->descriptor_pool) vk->vkDestroyDescriptorPool(d, s->descriptor_pool, vkds__vk_allocator(s->dev->ctx));
  if (s->pipeline) vk->vkDestroyPipeline(d, s->pipeline, vkds__vk_allocator(s->dev->ctx));
  if (s->module) vk->vkDestroyShaderModule(d, s->module, vkds__vk_allocator(s->dev->ctx));
  if (s->layout) vk->vkDestroyPipelineLayout(d, s->layout, vkds__vk_allocator(s->dev->ctx));
  if (s->set_layout) vk->vkDestroyDescriptorSetLayout(d, s->set_layout, vkds__vk_allocator(s->dev->ctx));
  if (s->timestamps) vk->vkDestroyQueryPool(d, s->timestamps, vkds__vk_allocator(s->dev->ctx));
  if (s->fence) vk->vkDestroyFence(d, s->fence, vkds__vk_allocator(s->dev->ctx));
  if (s->pool) vk->vkDestroyCommandPool(d, s->pool, vkds__vk_allocator(s->dev->ctx));
}

/* Records a fill of `count` elements in dispatches of at most `max_groups` groups;
 * returns the number of dispatches. With `readback`, also copies the result to the
 * host-visible buffer. */
static uint32_t record_fill(state *s, uint32_t count, uint32_t seed, uint32_t max_groups,
                            bool readback) {
  const struct VolkDeviceTable *vk = &s->dev->vk;
  VkCommandBuffer c = s->cmd;
  vk->vkCmdBindPipeline(c, VK_PIPELINE_BIND_POINT_COMPUTE, s->pipeline);
  vk->vkCmdBindDescriptorSets(c, VK_PIPELINE_BIND_POINT_COMPUTE, s->layout, 0, 1, &s->set, 0, NULL);
  if (s->timestamps) {
    vk->vkCmdResetQueryPool(c, s->timestamps, 0, 2);
    vk->vkCmdWriteTimestamp(c, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, s->timestamps, 0);
  }
  uint64_t groups = ((uint64_t)count + GROUP_SIZE - 1) / GROUP_SIZE;
  uint32_t dispatches = 0;
  for (uint64_t first = 0; first < groups; first += max_groups, ++dispatches) {
    uint64_t n = groups - first < max_groups ? groups - first : max_groups;
    params p = {.count = count, .seed = seed, .base = (uint32_t)(first * GROUP_SIZE)};
    vk->vkCmdPushConstants(c, s->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof p, &p);
    vk->vkCmdDispatch(c, (uint32_t)n, 1, 1);
  }
  if (s->timestamps) vk->vkCmdWriteTimestamp(c, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, s->timestamps, 1);
  if (readback) {
    VkMemoryBarrier to_copy = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                               .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                               .dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT};
    vk->vkCmdPipelineBarrier(c, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                             0, 1, &to_copy, 0, NULL, 0, NULL);
    VkBufferCopy region = {.size = (VkDeviceSize)count * 4};
    vk->vkCmdCopyBuffer(c, s->data.buffer, s->readback.buffer, 1, &region);
    VkMemoryBarrier to_host = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                               .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                               .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
    vk->vkCmdPipelineBarrier(c, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
                             &to_host, 0, NULL, 0, NULL);
  }
  return dispatches;
}

static vkds_result begin(state *s) {
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  VKTRY(s->dev->vk.vkResetCommandBuffer(s->cmd, 0), "vkResetCommandBuffer");
  VKTRY(s->dev->vk.vkBeginCommandBuffer(s->cmd, &bi), "vkBeginCommandBuffer");
  return VKDS_SUCCESS;
}

/* Submits the recorded command buffer and waits for it; *ns gets the wall time. */
static vkds_result submit_wait(state *s, double *ns) {
  const struct VolkDeviceTable *vk = &s->dev->vk;
  VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1,
                     .pCommandBuffers = &s->cmd};
  double t0 = now_ns();
  bool lock = !vkds__resource_held_here(s->res); /* (a caller that holds the queue submits under its own hold) */
  if (lock) vkds_resource_lock_queue(s->res);
  VkResult vr = vk->vkQueueSubmit(s->res->queue, 1, &si, s->fence);
  if (lock) vkds_resource_unlock_queue(s->res);
  if (vr != VK_SUCCESS) return vkds__device_vk_fail(s->dev, vr, "vkQueueSubmit");
  /* counted as every submit vkds makes on the queue (vkds_resource_submit_counts: the
   * self test's were missing; a contract probe) */
  atomic_fetch_add_explicit(&s->res->submit_calls, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&s->res->submitted_tasks, 1, memory_order_relaxed);
  vr = vk->vkWaitForFences(s->dev->device, 1, &s->fence, VK_TRUE, WAIT_NS);
  if (ns) *ns = now_ns() - t0;
  if (vr == VK_TIMEOUT)
    return vkds__fail(s->dev->ctx, VKDS_ERROR_TIMEOUT, vr, "self test did not finish in 30 s");
  if (vr != VK_SUCCESS) return vkds__device_vk_fail(s->dev, vr, "vkWaitForFences");
  VKTRY(vk->vkResetFences(s->dev->device, 1, &s->fence), "vkResetFences");
  return VKDS_SUCCESS;
}

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static vkds_result gpu_time(state *s, double *ns) {
  uint64_t ticks[2];
  VKTRY(s->dev->vk.vkGetQueryPoolResults(s->dev->device, s->timestamps, 0, 2, sizeof ticks, ticks,
                                         sizeof ticks[0], VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
        "vkGetQueryPoolResults");
  uint32_t bits = s->dev->facts.families[s->res->family].timestampValidBits;
  uint64_t mask = bits >= 64 ? UINT64_MAX : ((1ull << bits) - 1);
  *ns = (double)((ticks[1] - ticks[0]) & mask) * s->dev->facts.props.properties.limits.timestampPeriod;
  return VKDS_SUCCESS;
}

static vkds_result run(state *s, const vkds_self_test_info *in, vkds_self_test_result *out) {
  uint32_t count = out->count;
  uint32_t max_groups = s->dev->facts.props.properties.limits.maxComputeWorkGroupCount[0];
  if (in->max_group_count && in->max_group_count < max_groups) max_groups = in->max_group_count;

  /* round trip: one group, recorded once, submitted again and again */
  uint32_t trips = in->round_trips ? in->round_trips : 20;
  double *samples = vkds__temp_alloc_array(s->dev->ctx, trips, sizeof *samples);
  if (!samples) return vkds__fail(s->dev->ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "samples");
  vkds_result r = begin(s);
  if (r == VKDS_SUCCESS) {
    record_fill(s, GROUP_SIZE, 1, max_groups, false);
    VkResult vr = s->dev->vk.vkEndCommandBuffer(s->cmd);
    if (vr != VK_SUCCESS) r = vkds__vk_fail(s->dev->ctx, vr, "vkEndCommandBuffer");
  }
  for (uint32_t i = 0; i < trips && r == VKDS_SUCCESS; ++i) r = submit_wait(s, &samples[i]);
  if (r == VKDS_SUCCESS) {
    qsort(samples, trips, sizeof *samples, compare_double);
    out->round_trip_ns = samples[trips / 2];
  }
  vkds__free(s->dev->ctx, samples);
  VKDS_CHECK(r);

  /* timed fills, the last one read back and checked */
  uint32_t repeats = in->fill_repeats ? in->fill_repeats : 5;
  uint32_t seed = (uint32_t)s->res->index * 0x9e3779b9u + 0x1234567u;
  out->gpu_timed = s->timestamps != VK_NULL_HANDLE;
  for (uint32_t rep = 0; rep < repeats; ++rep) {
    bool last = rep + 1 == repeats;
    VKDS_CHECK(begin(s));
    out->dispatches = record_fill(s, count, seed, max_groups, last);
    VKTRY(s->dev->vk.vkEndCommandBuffer(s->cmd), "vkEndCommandBuffer");
    double wall = 0, ns = 0;
    VKDS_CHECK(submit_wait(s, &wall));
    if (out->gpu_timed) VKDS_CHECK(gpu_time(s, &ns));
    else ns = wall;
    if (rep == 0 || ns < out->fill_ns) out->fill_ns = ns;
  }
  out->fill_gb_per_s = out->fill_ns > 0 ? (double)count * 4.0 / out->fill_ns : 0.0;

  vkds__buffer_invalidate(s->dev, &s->readback);
  const uint32_t *got = s->readback.mapped;
  for (uint32_t i = 0; i < count; ++i)
    if (got[i] != hash(i ^ seed) && out->mismatches++ == 0) out->first_bad = i;
  if (out->mismatches)
    return vkds__fail(s->dev->ctx, VKDS_ERROR_WRONG_RESULT, VK_SUCCESS,
                      "self test on resource %u: %u of %u elements wrong, first at %u "
                      "(got 0x%08x, expected 0x%08x)", s->res->index, out->mismatches, count,
                      out->first_bad, got[out->first_bad], hash(out->first_bad ^ seed));
  return VKDS_SUCCESS;
}

vkds_result vkds_resource_self_test(vkds_resource *res, const vkds_self_test_info *info,
                                    vkds_self_test_result *out) {
  if (!res || !out)
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "vkds_resource_self_test: res and out must not be NULL");
  vkds_self_test_info defaults = {0};
  const vkds_self_test_info *in = info ? info : &defaults;
  *out = (vkds_self_test_result){.count = in->count ? in->count : 1u << 22};
  uint64_t bytes = (uint64_t)out->count * 4;
  if (bytes > res->dev->facts.props.properties.limits.maxStorageBufferRange)
    return vkds__fail(res->dev->ctx, VKDS_ERROR_LIMIT_EXCEEDED, VK_SUCCESS,
                      "self test of %u elements exceeds maxStorageBufferRange (%u bytes)",
                      out->count, res->dev->facts.props.properties.limits.maxStorageBufferRange);
  state s = {.res = res, .dev = res->dev};
  vkds_result r = setup(&s, bytes);
  if (r == VKDS_SUCCESS) r = run(&s, in, out);
  /* After a timeout the GPU may still use these objects: leaking them is the safe choice. */
  if (r != VKDS_ERROR_TIMEOUT) teardown(&s);
  return r;
}
