/* lib/kernel/launch.c: launching kernels: the range-type check, packing the argument struct
 * into the reflected push-constant layout, push descriptors for bound buffers, and
 * dispatches split to fit maxComputeWorkGroupCount. */
#include "kernel_internal.h"

#include <stdlib.h>
#include <string.h>

enum { MAX_BOUND = 32 };

/* Everything a launch records, prepared (and checked) before anything is recorded. */
typedef struct packed_launch {
  vkds_kernel *k;
  vkds__device *dev;
  const vkds__pipeline *pipe;
  unsigned char push[256]; /* maxPushConstantsSize is at most 256 on the devices we know */
  uint32_t push_size;
  unsigned char *spill;    /* spilled kernels: the arguments, for the slot's scratch buffer */
  unsigned char *target;   /* where pack() writes: push, or spill */
  VkDescriptorBufferInfo bound[MAX_BOUND];
  uint32_t bound_binding[MAX_BOUND];
  uint32_t bound_count;
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

/* Resolves a view against the launch's device: address and length. */
static vkds_result resolve_view(packed_launch *pl, const vkds_view *v, const char *what, uint64_t *address,
                                uint64_t *bytes) {
  const vkds_kernel *k = pl->k;
  if (!v->buffer)
    return vkds__fail(k->ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "launch of kernel '%s': %s has a NULL buffer",
                      k->name, what);
  if (v->buffer->kind == VKDS_MEMORY_HOST)
    return vkds__fail(k->ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "launch of kernel '%s': %s is plain host memory, which a device cannot see (upload it to a "
                      "device buffer, or import it with vkds_buffer_import_host)", k->name, what);
  if (v->buffer->dev != pl->dev)
    return vkds__fail(k->ctx, VKDS_ERROR_WRONG_DEVICE, VK_SUCCESS,
                      "launch of kernel '%s': %s's buffer lives on device %u, the launch runs on device %u", k->name,
                      what, v->buffer->dev->index, pl->dev->index);
  uint64_t size = v->buffer->size;
  uint64_t n = v->bytes ? v->bytes : (v->offset <= size ? size - v->offset : 0);
  if (v->offset > size || n > size - v->offset)
    return vkds__fail(k->ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "launch of kernel '%s': %s (offset %llu, %llu bytes) is outside its %llu-byte buffer", k->name,
                      what, (unsigned long long)v->offset, (unsigned long long)n, (unsigned long long)size);
  *address = v->buffer->address ? v->buffer->address + v->offset : 0;
  *bytes = n;
  return VKDS_SUCCESS;
}

/* Packs the described arguments (at `src`) into the block `block` (at `dst` in the push
 * constants), pairing them with its members from `first` on. The description was
 * checked against the shader when the kernel was made. */
static vkds_result pack(packed_launch *pl, const vkds_arg *args, const unsigned char *src, const vkds__member *block,
                        uint32_t first, uint32_t dst) {
  uint32_t m = first;
  for (size_t i = 0; args && args[i].kind != VKDS_ARG_END; ++i) {
    const vkds_arg *a = &args[i];
    if (a->kind == VKDS_ARG_BINDING) {
      uint64_t address, bytes;
      VKDS_CHECK(resolve_view(pl, (const vkds_view *)(src + a->offset), "a bound buffer", &address, &bytes));
      if (pl->bound_count == MAX_BOUND)
        return vkds__fail(pl->k->ctx, VKDS_ERROR_LIMIT_EXCEEDED, VK_SUCCESS, "more than %d bound buffers", MAX_BOUND);
      const vkds_view *v = (const vkds_view *)(src + a->offset);
      pl->bound[pl->bound_count] = (VkDescriptorBufferInfo){.buffer = v->buffer->vk, .offset = v->buffer->offset + v->offset,
                                                            .range = bytes};
      pl->bound_binding[pl->bound_count++] = a->binding;
      continue;
    }
    const vkds__member *s = &block->members[m++];
    uint32_t elements = a->count ? a->count : 1;
    for (uint32_t e = 0; e < elements; ++e) {
      size_t natural = a->kind == VKDS_ARG_VIEW ? sizeof(vkds_view)
                       : a->kind == VKDS_ARG_STRUCT ? 0
                                                    : (size_t)(a->bits ? a->bits : 32) / 8 * (a->components ? a->components : 1);
      const unsigned char *from = src + a->offset + e * (a->stride ? a->stride : natural);
      uint32_t to = dst + s->offset + e * s->array_stride;
      if (a->kind == VKDS_ARG_STRUCT && a->count > 1 && !a->stride)
        return vkds__fail(pl->k->ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                          "kernel '%s': an array of structs needs its stride", pl->k->name);
      if (a->kind == VKDS_ARG_VIEW) {
        uint64_t address, bytes;
        VKDS_CHECK(resolve_view(pl, (const vkds_view *)from, s->name, &address, &bytes));
        if (!address)
          return vkds__fail(pl->k->ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS,
                            "kernel '%s': views need buffer device address, which this device lacks", pl->k->name);
        memcpy(pl->target + to + s->members[0].offset, &address, 8);
        memcpy(pl->target + to + s->members[1].offset, &bytes, 8);
      } else if (a->kind == VKDS_ARG_STRUCT) {
        VKDS_CHECK(pack(pl, a->members, from, s, 0, to));
      } else {
        memcpy(pl->target + to, from, natural);
      }
    }
  }
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
    return vkds__fail(k->ctx, VKDS_ERROR_LIMIT_EXCEEDED, VK_SUCCESS, "kernel '%s': push constants over 256 bytes", k->name);
  pl->target = pl->push;
  if (k->spilled) {
    if (!(pl->spill = vkds__temp_alloc(k->ctx, k->arg_size)))
      return vkds__fail(k->ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "spilled arguments");
    pl->target = pl->spill;
  }
  VKDS_CHECK(pack(pl, k->args, li->args, k->arg_block, k->spilled ? 0 : k->first_member, 0));
  const VkPhysicalDeviceLimits *lim = &dev->facts.props.properties.limits;
  for (int d = 0; d < 3; ++d) {
    pl->groups[d] = (global[d] + k->refl.local_size[d] - 1) / k->refl.local_size[d];
    pl->max_groups[d] = lim->maxComputeWorkGroupCount[d];
    if (li->max_groups && li->max_groups < pl->max_groups[d]) pl->max_groups[d] = li->max_groups;
  }
  if ((pl->groups[1] > 1 || pl->groups[2] > 1) && !k->first_member &&
      (pl->groups[1] > pl->max_groups[1] || pl->groups[2] > pl->max_groups[2] || pl->groups[0] > pl->max_groups[0]))
    return vkds__fail(k->ctx, VKDS_ERROR_LIMIT_EXCEEDED, VK_SUCCESS,
                      "kernel '%s' must be split but does not use vkds.glsl's vkds_global_id()", k->name);
  if (!k->first_member && pl->groups[0] > pl->max_groups[0])
    return vkds__fail(k->ctx, VKDS_ERROR_LIMIT_EXCEEDED, VK_SUCCESS,
                      "kernel '%s': %llu work groups exceed the device's %u, and the kernel does not use vkds.glsl's "
                      "vkds_global_id() (which splitting needs)", k->name, (unsigned long long)pl->groups[0],
                      pl->max_groups[0]);
  return VKDS_SUCCESS;
}

/* Records the prepared launch: one dispatch per piece of at most max_groups groups per
 * dimension, each told its work-item offset through vkds_base. */
static void record(const packed_launch *pl, VkCommandBuffer cmd) {
  const struct VolkDeviceTable *vk = &pl->dev->vk;
  const vkds_kernel *k = pl->k;
  vk->vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pl->pipe->pipeline);
  if (pl->bound_count) {
    VkWriteDescriptorSet w[MAX_BOUND];
    for (uint32_t i = 0; i < pl->bound_count; ++i)
      w[i] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, .dstBinding = pl->bound_binding[i],
                                    .descriptorCount = 1, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                    .pBufferInfo = &pl->bound[i]};
    vk->vkCmdPushDescriptorSetKHR(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pl->pipe->layout, 0, pl->bound_count, w);
  }
  unsigned char push[256];
  memcpy(push, pl->push, pl->push_size);
  for (uint64_t z = 0; z < pl->groups[2]; z += pl->max_groups[2])
    for (uint64_t y = 0; y < pl->groups[1]; y += pl->max_groups[1])
      for (uint64_t x = 0; x < pl->groups[0]; x += pl->max_groups[0]) {
        if (k->first_member) {
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
  if (!k || !li) return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "launch: kernel and launch info are required");
  return VKDS_SUCCESS;
}

vkds_result vkds_cmd_dispatch(VkCommandBuffer cmd, vkds_resource *res, vkds_kernel *k, const vkds_launch_info *li) {
  VKDS_CHECK(check_kernel(k, li));
  if (!cmd || !res) return vkds__fail(k->ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "vkds_cmd_dispatch: cmd and res are required");
  if (res->dev->ctx != k->ctx)
    return vkds__fail(k->ctx, VKDS_ERROR_WRONG_CONTEXT, VK_SUCCESS, "vkds_cmd_dispatch: kernel '%s' belongs to another context",
                      k->name);
  if (k->spilled)
    return vkds__fail(k->ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS,
                      "kernel '%s' keeps its arguments in a buffer (too large for push constants): launch it with "
                      "vkds_launch, which keeps that buffer alive until the work is done", k->name);
  packed_launch pl;
  vkds_result r = prepare(&pl, k, res->dev, li);
  if (r == VKDS_SUCCESS) record(&pl, cmd);
  release(&pl);
  return r;
}

typedef struct launch_task {
  vkds_kernel *k;
  const vkds_launch_info *li;
} launch_task;

static vkds_result launch_fn(void *user, const vkds_task *task, void **wait_object) {
  (void)wait_object;
  const launch_task *t = user;
  vkds__device *dev = ((vkds_resource *)task->resource)->dev;
  packed_launch pl;
  vkds_result r = prepare(&pl, t->k, dev, t->li);
  if (r == VKDS_SUCCESS && t->k->spilled) {
    /* the arguments go to this task's slot: it is reused only after the GPU is done */
    vkds__slot *slot = task->backend_data;
    r = vkds__scratch_reserve(dev, &slot->scratch, &slot->scratch_address, t->k->arg_size);
    if (r == VKDS_SUCCESS) {
      memcpy(slot->scratch.mapped, pl.spill, t->k->arg_size);
      memcpy(pl.push + t->k->refl.push.members[1].offset, &slot->scratch_address, 8);
    }
  }
  if (r == VKDS_SUCCESS) record(&pl, task->cmd);
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
  return vkds_submit(p, &(vkds_task_info){.fn = launch_fn, .user = &t, .key = key, .label = k->name}, out);
}
