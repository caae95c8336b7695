/* lib/kernel/launch.c: launching kernels: the range-type check, the argument struct packed
 * into the reflected push-constant layout (lib/kernel/args.c), push descriptors for bound
 * buffers, and dispatches split to fit maxComputeWorkGroupCount. */
#include "kernel_internal.h"

#include <stdlib.h>
#include <string.h>

/* The most dispatches one launch records (each of up to maxComputeWorkGroupCount groups,
 * or max_groups): 65,536 x 65,535 groups of 64 is 2^38 items; past that a launch is a
 * mistake (2^64 items would record 2^42 dispatches), refused as LIMIT_EXCEEDED. */
#define MAX_PIECES 65536u

/* Everything a launch records, prepared (and checked) before anything is recorded. */
typedef struct packed_launch {
  vkds_kernel *k;
  vkds__device *dev;
  const vkds__pipeline *pipe;
  unsigned char push[VKDS__MAX_PUSH]; /* what vkds packs, whatever the device offers */
  uint32_t push_size;
  unsigned char *spill;    /* spilled kernels: the arguments, for the slot's scratch buffer */
  vkds__arg_pack args;     /* the packed arguments (into push, or spill) and bound buffers */
  uint64_t groups[3];
  uint32_t max_groups[3];
} packed_launch;

/* The range type's limit on the total number of work-items. */
static uint64_t range_limit(vkds_range_type t) {
  return t == VKDS_RANGE_I32 ? INT32_MAX : t == VKDS_RANGE_U64 ? UINT64_MAX : UINT32_MAX;
}

static vkds_result check_range(const vkds_kernel *k, const vkds_launch_info *li, uint64_t global[3]) {
  for (int d = 0; d < 3; ++d) global[d] = li->global[d] ? li->global[d] : (d ? 1 : 0);
  if (global[0] == 0)
    return vkds__fail(k->ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "launch of kernel '%s': zero work-items", k->name);
  uint64_t limit = range_limit(k->range), total = global[0];
  bool over = false;
  for (int d = 1; d < 3 && !over; ++d) {
    over = total > limit / global[d];
    total *= global[d];
  }
  if (over || total > limit)
    return vkds__fail(k->ctx, VKDS_ERROR_ND_RANGE, VK_SUCCESS,
                      "launch of kernel '%s': %llu x %llu x %llu work-items exceed its range type's %llu", k->name,
                      (unsigned long long)global[0], (unsigned long long)global[1], (unsigned long long)global[2],
                      (unsigned long long)limit);
  return VKDS_SUCCESS;
}

static vkds_result prepare(packed_launch *pl, vkds_kernel *k, vkds__device *dev, const vkds_launch_info *li) {
  *pl = (packed_launch){.k = k, .dev = dev};
  uint64_t global[3];
  VKDS_CHECK(check_range(k, li, global));
  if (k->args && !li->args)
    return vkds__fail(k->ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "launch of kernel '%s': args is NULL", k->name);
  VKDS_CHECK(vkds__kernel_pipeline(k, dev, &pl->pipe));
  pl->push_size = k->refl.has_push ? k->refl.push.size : 0;
  if (pl->push_size > sizeof pl->push)
    return vkds__fail(k->ctx, VKDS_ERROR_LIMIT_EXCEEDED, VK_SUCCESS,
                      "kernel '%s': %u bytes of push constants, over the %u vkds packs (GLSL kernels are spilled to a "
                      "buffer past that)", k->name, pl->push_size, (unsigned)VKDS__MAX_PUSH);
  pl->args = (vkds__arg_pack){.ctx = k->ctx, .kernel = k->name, .dev = dev, .target = pl->push};
  if (k->layout.spilled) {
    if (!(pl->spill = vkds__temp_alloc(k->ctx, k->layout.size)))
      return vkds__fail(k->ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "spilled arguments");
    pl->args.target = pl->spill;
  }
  VKDS_CHECK(vkds__args_pack(&pl->args, &k->layout, k->args, li->args));
  const VkPhysicalDeviceLimits *lim = &dev->facts.props.properties.limits;
  /* (groups rounded up without global + local - 1, which wrapped to 0 groups near 2^64:
   * nothing ran and the launch said success; found by a hostile-input probe) */
  uint64_t pieces = 1;
  for (int d = 0; d < 3; ++d) {
    uint32_t local = k->refl.local_size[d];
    pl->groups[d] = global[d] / local + (global[d] % local != 0);
    /* The padding past global must not wrap the index onto a real work-item: 2^32 - 1
     * items in groups of 192 covered 2^32 + 128, whose last 128 indices read 0-127
     * and passed the kernel's `i < n` (run twice; a kernels probe). y and z are 32-bit
     * in every range type; x in the 32-bit ones (a signed index for I32); a 64-bit x
     * is bounded by the dispatches below. */
    uint64_t cap = d == 0 && k->range == VKDS_RANGE_I32 ? 1ull << 31 : 1ull << 32;
    if (!(d == 0 && k->range == VKDS_RANGE_U64) && pl->groups[d] > cap / local)
      return vkds__fail(k->ctx, VKDS_ERROR_ND_RANGE, VK_SUCCESS,
                        "launch of kernel '%s': %llu work-items in %c, rounded up to groups of %u, cover %llu, past the "
                        "%llu indices its range type gives that dimension (so some would repeat others); launch at "
                        "most %llu there",
                        k->name, (unsigned long long)global[d], "xyz"[d], local,
                        (unsigned long long)(pl->groups[d] * local), (unsigned long long)cap,
                        (unsigned long long)(cap / local * local));
    pl->max_groups[d] = lim->maxComputeWorkGroupCount[d];
    if (li->max_groups && li->max_groups < pl->max_groups[d]) pl->max_groups[d] = li->max_groups;
    uint64_t along = pl->groups[d] / pl->max_groups[d] + (pl->groups[d] % pl->max_groups[d] != 0);
    pieces = along > MAX_PIECES || pieces * along > MAX_PIECES ? MAX_PIECES + 1 : pieces * along;
  }
  if (pieces > MAX_PIECES)
    return vkds__fail(k->ctx, VKDS_ERROR_LIMIT_EXCEEDED, VK_SUCCESS,
                      "kernel '%s': %llu x %llu x %llu work groups take more than %u dispatches of the largest "
                      "(%u x %u x %u: the device's maxComputeWorkGroupCount, or the launch's max_groups)", k->name, (unsigned long long)pl->groups[0],
                      (unsigned long long)pl->groups[1], (unsigned long long)pl->groups[2], MAX_PIECES,
                      pl->max_groups[0], pl->max_groups[1], pl->max_groups[2]);
  if ((pl->groups[1] > 1 || pl->groups[2] > 1) && !k->layout.first_member &&
      (pl->groups[1] > pl->max_groups[1] || pl->groups[2] > pl->max_groups[2] || pl->groups[0] > pl->max_groups[0]))
    return vkds__fail(k->ctx, VKDS_ERROR_LIMIT_EXCEEDED, VK_SUCCESS,
                      "kernel '%s' must be split but does not use vkds.glsl's vkds_global_id()", k->name);
  if (!k->layout.first_member && pl->groups[0] > pl->max_groups[0])
    return vkds__fail(k->ctx, VKDS_ERROR_LIMIT_EXCEEDED, VK_SUCCESS,
                      "kernel '%s': %llu work groups exceed the %u of one dispatch (%s), and the kernel does not use "
                      "vkds.glsl's vkds_global_id() (which splitting needs)", k->name, (unsigned long long)pl->groups[0],
                      pl->max_groups[0], li->max_groups && li->max_groups == pl->max_groups[0]
                                           ? "the launch's max_groups" : "the device's maxComputeWorkGroupCount");
  return VKDS_SUCCESS;
}

/* Records the prepared launch: one dispatch per piece of at most max_groups groups per
 * dimension, each told its work-item offset through vkds_base. */
static void record(const packed_launch *pl, VkCommandBuffer cmd) {
  const struct VolkDeviceTable *vk = &pl->dev->vk;
  const vkds_kernel *k = pl->k;
  vk->vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pl->pipe->pipeline);
  if (pl->args.bound_count) {
    VkWriteDescriptorSet w[VKDS__MAX_BOUND];
    for (uint32_t i = 0; i < pl->args.bound_count; ++i)
      w[i] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, .dstBinding = pl->args.bound_binding[i],
                                    .descriptorCount = 1, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                    .pBufferInfo = &pl->args.bound[i]};
    vk->vkCmdPushDescriptorSetKHR(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pl->pipe->layout, 0, pl->args.bound_count, w);
  }
  unsigned char push[VKDS__MAX_PUSH];
  memcpy(push, pl->push, pl->push_size);
  for (uint64_t z = 0; z < pl->groups[2]; z += pl->max_groups[2])
    for (uint64_t y = 0; y < pl->groups[1]; y += pl->max_groups[1])
      for (uint64_t x = 0; x < pl->groups[0]; x += pl->max_groups[0]) {
        if (k->layout.first_member) {
          uint64_t base_x = x * k->refl.local_size[0];
          uint32_t base[4] = {(uint32_t)base_x, (uint32_t)(y * k->refl.local_size[1]),
                              (uint32_t)(z * k->refl.local_size[2]), (uint32_t)(base_x >> 32)};
          memcpy(push, base, sizeof base);
        }
        if (pl->push_size)
          vk->vkCmdPushConstants(cmd, pl->pipe->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, pl->push_size, push);
        uint64_t nx = pl->groups[0] - x, ny = pl->groups[1] - y, nz = pl->groups[2] - z;
        vk->vkCmdDispatch(cmd, (uint32_t)(nx < pl->max_groups[0] ? nx : pl->max_groups[0]),
                          (uint32_t)(ny < pl->max_groups[1] ? ny : pl->max_groups[1]),
                          (uint32_t)(nz < pl->max_groups[2] ? nz : pl->max_groups[2]));
      }
}

static void release(packed_launch *pl) {
  vkds__free(pl->k->ctx, pl->spill);
  pl->spill = NULL;
}

static vkds_result check_kernel(const vkds_kernel *k, const vkds_launch_info *li) {
  if (!k || !li) return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "vkds_launch: kernel and launch info are required");
  return VKDS_SUCCESS;
}

vkds_result vkds_cmd_dispatch(VkCommandBuffer cmd, vkds_resource *res, vkds_kernel *k, const vkds_launch_info *li) {
  VKDS_CHECK(check_kernel(k, li));
  if (!cmd || !res) return vkds__fail(k->ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "vkds_cmd_dispatch: cmd and res are required");
  if (res->dev->ctx != k->ctx)
    return vkds__fail(k->ctx, VKDS_ERROR_WRONG_CONTEXT, VK_SUCCESS, "vkds_cmd_dispatch: kernel '%s' belongs to another context",
                      k->name);
  if (k->layout.spilled)
    return vkds__fail(k->ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS,
                      "kernel '%s' keeps its arguments in a buffer (too large for push constants): launch it with "
                      "vkds_launch, which keeps that buffer alive until the work is done", k->name);
  packed_launch pl;
  vkds_result r = prepare(&pl, k, res->dev, li);
  if (r == VKDS_SUCCESS) record(&pl, cmd);
  release(&pl);
  return r;
}

uint64_t vkds__kernel_spilled_bytes(const vkds_kernel *k) { return k->layout.spilled ? k->layout.size : 0; }

vkds_result vkds__cmd_dispatch_spilled_inline(VkCommandBuffer cmd, vkds_resource *res, vkds_kernel *k,
                                              const vkds_launch_info *li, VkBuffer buffer, VkDeviceSize offset,
                                              VkDeviceAddress address) {
  packed_launch pl;
  vkds_result r = prepare(&pl, k, res->dev, li);
  /* (vkCmdUpdateBuffer takes whole words and at most 65,536 bytes) */
  uint32_t words = (k->layout.size + 3) / 4;
  unsigned char *data = r == VKDS_SUCCESS ? vkds__temp_alloc(k->ctx, 4ull * words) : NULL;
  if (r == VKDS_SUCCESS && !data)
    r = vkds__fail(k->ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "spilled arguments");
  if (r == VKDS_SUCCESS && 4ull * words > 65536)
    r = vkds__fail(k->ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS, "kernel '%s': %u bytes of arguments, more than a command "
                   "buffer takes in one update (65,536)", k->name, 4 * words);
  if (r == VKDS_SUCCESS) {
    memcpy(data, pl.spill, k->layout.size); /* (the rest of the last word stays zero) */
    res->dev->vk.vkCmdUpdateBuffer(cmd, buffer, offset, 4ull * words, data);
    vkds__cmd_barrier(res->dev, cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);
    memcpy(pl.push + k->refl.push.members[1].offset, &address, 8);
    record(&pl, cmd);
  }
  vkds__free(k->ctx, data);
  release(&pl);
  return r;
}

vkds_result vkds__cmd_dispatch_spilled(VkCommandBuffer cmd, vkds_resource *res, vkds_kernel *k,
                                       const vkds_launch_info *li, void *mapped, VkDeviceAddress address) {
  packed_launch pl;
  vkds_result r = prepare(&pl, k, res->dev, li);
  if (r == VKDS_SUCCESS) {
    memcpy(mapped, pl.spill, k->layout.size);
    memcpy(pl.push + k->refl.push.members[1].offset, &address, 8);
    record(&pl, cmd);
  }
  release(&pl);
  return r;
}

typedef struct launch_task {
  vkds_kernel *k;
  const vkds_launch_info *li;
} launch_task;

/* A launch runs after the work before it on its queue and before the work after it, as
 * an algorithm call does: vkds's leading barrier (left to the queue where it can put it,
 * and skipped there after a command buffer that ended in the full one) and its full
 * barrier after the dispatches. Without them two launches on one queue overlapped on a
 * GPU, the second reading what the first had not yet written (on an H100, 17 and 20 of
 * 20 rounds of 50 chained launches came out wrong: bench/RESULTS.md; lavapipe runs
 * them one after the other). */
static vkds_result launch_fn(void *user, const vkds_task *task, void **wait_object) {
  (void)wait_object;
  const launch_task *t = user;
  vkds_resource *res = task->resource;
  vkds__device *dev = res->dev;
  vkds__slot *slot = task->backend_data; /* (vkds_launch takes Vulkan backends only) */
  packed_launch pl;
  vkds_result r = prepare(&pl, t->k, dev, t->li);
  if (r == VKDS_SUCCESS && t->k->layout.spilled) {
    /* the arguments go to this task's slot: it is reused only after the GPU is done */
    r = vkds__scratch_reserve(dev, &slot->scratch, &slot->scratch_address, t->k->layout.size);
    if (r == VKDS_SUCCESS) {
      memcpy(slot->scratch.mapped, pl.spill, t->k->layout.size);
      memcpy(pl.push + t->k->refl.push.members[1].offset, &slot->scratch_address, 8);
    }
  }
  if (r == VKDS_SUCCESS) {
    if (vkds__queue_takes_lead(task->selection->backend, res)) slot->needs_lead = slot->ends_full = true;
    else vkds__cmd_lead_barrier(dev, task->cmd);
    record(&pl, task->cmd);
    vkds__cmd_full_barrier(dev, task->cmd);
  }
  release(&pl);
  return r;
}

vkds_result vkds_launch(vkds_policy *p, vkds_kernel *k, const vkds_launch_info *li, vkds_submission **out) {
  if (out) *out = NULL;
  VKDS_CHECK(check_kernel(k, li));
  if (!p) return vkds__fail(k->ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "vkds_launch: policy is NULL");
  if (!vkds_policy_initialized(p) || p->backend->kind != &vkds_resource_kind_vulkan)
    return vkds__fail(k->ctx, vkds_policy_initialized(p) ? VKDS_ERROR_INVALID_ARGUMENT : VKDS_ERROR_NOT_INITIALIZED,
                      VK_SUCCESS, "vkds_launch: the policy must be initialized, over vkds resources");
  if (p->backend->context != k->ctx)
    return vkds__fail(k->ctx, VKDS_ERROR_WRONG_CONTEXT, VK_SUCCESS,
                      "vkds_launch: kernel '%s' and the policy belong to different contexts", k->name);
  uint64_t global[3];
  VKDS_CHECK(check_range(k, li, global)); /* before selecting: nothing happens on error */
  uint64_t key = li->key;
  if (!key) {
    uint64_t total = global[0] * global[1] * global[2];
    key = k->hash ^ (uint64_t)(63 - __builtin_clzll(total));
  }
  launch_task t = {.k = k, .li = li};
  /* Where its buffers live binds the launch to their device: a policy over several
   * devices sent launches to one without the buffers (a README probe: WRONG_DEVICE
   * every other launch under round robin). Buffers of several devices can never run. */
  vkds__args_where w = {0};
  vkds__args_data(k->ctx, k->args, li->args, 0, &w);
  if ((w.devices & (w.devices - 1)) || (w.devices && w.far))
    return vkds__fail(k->ctx, VKDS_ERROR_WRONG_DEVICE, VK_SUCCESS,
                      "vkds_launch: kernel '%s' names buffers of several devices (mask 0x%x%s): a launch runs on one "
                      "device, with buffers of that device",
                      k->name, w.devices, w.far ? " and device 32 or above" : "");
  return vkds_submit(p, &(vkds_task_info){.fn = launch_fn, .user = &t, .key = key, .label = k->name, .bytes = w.bytes,
                                           .data_devices = w.devices, .only_devices = w.far ? 0 : w.devices},
                     out);
}
