/* lib/core/resource.c: what a resource reports about itself. */
#include "internal.h"

#include <string.h>

const char *vkds_device_type_str(vkds_device_type type) {
  switch (type) {
  case VKDS_DEVICE_INTEGRATED: return "integrated";
  case VKDS_DEVICE_DISCRETE: return "discrete";
  case VKDS_DEVICE_VIRTUAL: return "virtual";
  case VKDS_DEVICE_CPU: return "cpu";
  case VKDS_DEVICE_OTHER: break;
  }
  return "other";
}

vkds_result vkds_resource_get_info(const vkds_resource *res, vkds_resource_info *out) {
  if (!res || !out)
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "vkds_resource_get_info: res and out must not be NULL");
  const vkds__device *dev = res->dev;
  const vkds__device_facts *f = &dev->facts;
  const VkPhysicalDeviceProperties *p = &f->props.properties;
  const VkQueueFamilyProperties *fam = &f->families[res->family];
  *out = (vkds_resource_info){
      .index = res->index,
      .device_index = dev->index,
      .adopted = dev->adopted,
      .device_type = (vkds_device_type)p->deviceType,
      .vendor_id = p->vendorID,
      .device_id = p->deviceID,
      .driver_id = (uint32_t)f->props12.driverID,
      .api_version = p->apiVersion,
      .driver_version = p->driverVersion,
      .queue_family = res->family,
      .queue_index = res->queue_index,
      .queue_flags = fam->queueFlags,
      .family_queue_count = fam->queueCount,
      .timestamps = fam->timestampValidBits > 0,
      .timestamp_valid_bits = fam->timestampValidBits,
      .timestamp_period_ns = p->limits.timestampPeriod,
      .max_work_group_invocations = p->limits.maxComputeWorkGroupInvocations,
      .max_push_constants_size = p->limits.maxPushConstantsSize,
      .max_storage_buffer_range = p->limits.maxStorageBufferRange,
      .max_shared_memory_size = p->limits.maxComputeSharedMemorySize,
      .subgroup_size = f->props11.subgroupSize,
      .subgroup_operations = (f->props11.subgroupSupportedStages & VK_SHADER_STAGE_COMPUTE_BIT)
                                 ? f->props11.subgroupSupportedOperations : 0,
      .buffer_device_address = dev->enabled.buffer_device_address,
      .timeline_semaphore = dev->enabled.timeline_semaphore,
      .shader_int64 = dev->enabled.shader_int64,
      .shader_buffer_int64_atomics = dev->enabled.int64_atomics,
      .shader_float64 = dev->enabled.float64,
      .external_memory_host = dev->enabled.external_memory_host,
      .push_descriptor = dev->enabled.push_descriptor,
  };
  memcpy(out->device_name, p->deviceName, sizeof out->device_name);
  memcpy(out->device_uuid, f->props11.deviceUUID, sizeof out->device_uuid);
  memcpy(out->driver_uuid, f->props11.driverUUID, sizeof out->driver_uuid);
  memcpy(out->driver_name, f->props12.driverName, sizeof out->driver_name);
  memcpy(out->driver_info, f->props12.driverInfo, sizeof out->driver_info);
  for (int i = 0; i < 3; ++i) {
    out->max_work_group_count[i] = p->limits.maxComputeWorkGroupCount[i];
    out->max_work_group_size[i] = p->limits.maxComputeWorkGroupSize[i];
  }
  out->heap_count = f->memory.memoryHeapCount < VKDS_MAX_HEAPS ? f->memory.memoryHeapCount : VKDS_MAX_HEAPS;
  for (uint32_t h = 0; h < out->heap_count; ++h)
    out->heaps[h] = (vkds_heap_info){
        .size = f->memory.memoryHeaps[h].size,
        .device_local = f->memory.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT,
    };
  const VkMemoryPropertyFlags both = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
  for (uint32_t t = 0; t < f->memory.memoryTypeCount; ++t)
    if ((f->memory.memoryTypes[t].propertyFlags & both) == both) out->device_local_host_visible = true;
  return VKDS_SUCCESS;
}

vkds_result vkds_resource_vk_handles(const vkds_resource *res, VkPhysicalDevice *physical_device,
                                     VkDevice *device, VkQueue *queue) {
  if (!res)
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "vkds_resource_vk_handles: res must not be NULL");
  if (physical_device) *physical_device = res->dev->physical;
  if (device) *device = res->dev->device;
  if (queue) *queue = res->queue;
  return VKDS_SUCCESS;
}

/* A thread's token: the address of its thread-local block (unique among live threads). */
static uintptr_t this_thread(void) { return (uintptr_t)&vkds__thread; }

bool vkds__resource_held_here(const vkds_resource *res) {
  /* (only this thread stores its own token: a relaxed read that sees it is its own store) */
  return atomic_load_explicit(&res->lock_owner, memory_order_relaxed) == this_thread();
}

void vkds_resource_lock_queue(vkds_resource *res) {
  if (!res) return;
  pthread_mutex_lock(&res->queue_lock);
  atomic_store_explicit(&res->lock_owner, this_thread(), memory_order_relaxed);
  if (res->dev->queue_lock) res->dev->queue_lock(res->dev->queue_lock_user, res->queue);
  /* tasks vkds_submit deferred go first: what the holder submits comes after every task
   * submitted before the lock, as if none had been deferred */
  if (res->timeline) vkds__queue_flush_pending(res);
}

bool vkds__resource_try_lock_queue(vkds_resource *res) {
  if (pthread_mutex_trylock(&res->queue_lock) != 0) return false;
  atomic_store_explicit(&res->lock_owner, this_thread(), memory_order_relaxed);
  if (res->dev->queue_lock) res->dev->queue_lock(res->dev->queue_lock_user, res->queue);
  return true;
}

void vkds__resource_unlock_queue_own(vkds_resource *res) {
  if (res->dev->queue_unlock) res->dev->queue_unlock(res->dev->queue_lock_user, res->queue);
  atomic_store_explicit(&res->lock_owner, 0, memory_order_relaxed);
  pthread_mutex_unlock(&res->queue_lock);
}

void vkds_resource_unlock_queue(vkds_resource *res) {
  if (!res) return;
  res->tail_full = false; /* whatever was submitted meanwhile may end without vkds's barrier */
  vkds__resource_unlock_queue_own(res);
}

vkds_context *vkds_resource_context(const vkds_resource *res) { return res ? res->dev->ctx : NULL; }

void vkds_resource_submit_counts(const vkds_resource *res, uint64_t *calls, uint64_t *tasks) {
  if (calls) *calls = res ? atomic_load_explicit(&res->submit_calls, memory_order_relaxed) : 0;
  if (tasks) *tasks = res ? atomic_load_explicit(&res->submitted_tasks, memory_order_relaxed) : 0;
}

uint64_t vkds_resource_replay_count(const vkds_resource *res) {
  return res ? atomic_load_explicit(&res->replayed_tasks, memory_order_relaxed) : 0;
}
