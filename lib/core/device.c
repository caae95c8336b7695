/* lib/core/device.c: a physical device's facts, and the VkDevice vkds creates on it. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool has_device_extension(const VkExtensionProperties *exts, uint32_t n, const char *name) {
  for (uint32_t i = 0; i < n; ++i)
    if (strcmp(exts[i].extensionName, name) == 0) return true;
  return false;
}

/* The compute-unit facts (vkds__device_facts): read through the vendors' property
 * extensions, which need only be supported, not enabled. */
static void query_compute_units(const vkds__instance_fns *fn, VkPhysicalDevice phys, vkds__device_facts *f, bool nv,
                                bool amd) {
  if (nv) {
    VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sm = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &sm};
    fn->GetPhysicalDeviceProperties2(phys, &p2);
    f->compute_units = sm.shaderSMCount;
    f->threads_per_unit = sm.shaderWarpsPerSM * 32u; /* NVIDIA's warps are 32 threads */
  } else if (amd) {
    VkPhysicalDeviceShaderCorePropertiesAMD core = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_PROPERTIES_AMD};
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &core};
    fn->GetPhysicalDeviceProperties2(phys, &p2);
    f->compute_units = core.shaderEngineCount * core.shaderArraysPerEngineCount * core.computeUnitsPerShaderArray;
    f->threads_per_unit = core.simdPerComputeUnit * core.wavefrontsPerSimd * core.wavefrontSize;
  }
}

/* vkds__device_facts.prefers_descriptors: the rule, or the environment's choice. */
static bool prefers_descriptors(const VkPhysicalDeviceProperties *p) {
  const char *v = vkds__getenv("VKDS_ALGORITHM_ACCESS");
  if (v && strcmp(v, "descriptor") == 0) return true;
  if (v && strcmp(v, "address") == 0) return false;
  return p->deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
}

vkds_result vkds__device_query(const vkds_context *ctx, VkPhysicalDevice phys,
                               vkds__device_facts *f) {
  const vkds__instance_fns *fn = &ctx->fn;
  *f = (vkds__device_facts){0};
  f->props12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES;
  f->props11 = (VkPhysicalDeviceVulkan11Properties){
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES, .pNext = &f->props12};
  f->props = (VkPhysicalDeviceProperties2){.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                           .pNext = &f->props11};
  /* Vulkan11/12 property structs are only valid on 1.2 devices; query the core struct
   * alone first so older devices can still be listed (and rejected with a reason). */
  VkPhysicalDeviceProperties2 core = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  fn->GetPhysicalDeviceProperties2(phys, &core);
  if (core.properties.apiVersion < VK_API_VERSION_1_2) {
    f->props.properties = core.properties;
    return VKDS_SUCCESS;
  }
  if (core.properties.apiVersion >= VK_API_VERSION_1_3 && ctx->api_version >= VK_API_VERSION_1_3) {
    f->props13.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_PROPERTIES;
    f->props12.pNext = &f->props13;
  }
  fn->GetPhysicalDeviceProperties2(phys, &f->props);
  f->prefers_descriptors = prefers_descriptors(&f->props.properties);

  f->features13.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES;
  f->features12 = (VkPhysicalDeviceVulkan12Features){
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
      .pNext = core.properties.apiVersion >= VK_API_VERSION_1_3 ? &f->features13 : NULL};
  f->features11 = (VkPhysicalDeviceVulkan11Features){
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, .pNext = &f->features12};
  f->features = (VkPhysicalDeviceFeatures2){.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                            .pNext = &f->features11};
  fn->GetPhysicalDeviceFeatures2(phys, &f->features);
  fn->GetPhysicalDeviceMemoryProperties(phys, &f->memory);

  fn->GetPhysicalDeviceQueueFamilyProperties(phys, &f->family_count, NULL);
  f->families = vkds__alloc_array(ctx, f->family_count ? f->family_count : 1, sizeof *f->families);
  if (!f->families) return vkds__fail(ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "queue families");
  fn->GetPhysicalDeviceQueueFamilyProperties(phys, &f->family_count, f->families);

  uint32_t n = 0;
  VkResult vr = fn->EnumerateDeviceExtensionProperties(phys, NULL, &n, NULL);
  if (vr != VK_SUCCESS) return vkds__vk_fail(ctx, vr, "vkEnumerateDeviceExtensionProperties");
  VkExtensionProperties *exts = vkds__temp_alloc_array(ctx, n ? n : 1, sizeof *exts);
  if (!exts) return vkds__fail(ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "extensions");
  vr = fn->EnumerateDeviceExtensionProperties(phys, NULL, &n, exts);
  if (vr == VK_SUCCESS || vr == VK_INCOMPLETE) {
    f->has_external_memory_host = has_device_extension(exts, n, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME);
    f->has_push_descriptor = has_device_extension(exts, n, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
    f->has_pipeline_executable_properties =
        has_device_extension(exts, n, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
    query_compute_units(fn, phys, f, has_device_extension(exts, n, VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME),
                        has_device_extension(exts, n, VK_AMD_SHADER_CORE_PROPERTIES_EXTENSION_NAME));
  }
  vkds__free(ctx, exts);
  if (f->has_external_memory_host) {
    VkPhysicalDeviceExternalMemoryHostPropertiesEXT host = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT};
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &host};
    fn->GetPhysicalDeviceProperties2(phys, &p2);
    f->import_alignment = host.minImportedHostPointerAlignment;
  }
  return VKDS_SUCCESS;
}

void vkds__device_facts_free(const vkds_context *ctx, vkds__device_facts *f) {
  vkds__free(ctx, f->families);
  f->families = NULL;
}

/* Turns on, in `on`, each optional feature vkds can use that `have` offers. Anything
 * listed here is what the algorithms and kernels may rely on when the resource says so. */
static void choose_features(const vkds__device_facts *have, VkPhysicalDeviceFeatures2 *on,
                            VkPhysicalDeviceVulkan11Features *on11,
                            VkPhysicalDeviceVulkan12Features *on12,
                            VkPhysicalDeviceVulkan13Features *on13) {
  const VkPhysicalDeviceFeatures *h = &have->features.features;
  on->features.shaderInt64 = h->shaderInt64;
  on->features.shaderInt16 = h->shaderInt16;
  on->features.shaderFloat64 = h->shaderFloat64;
  const VkPhysicalDeviceVulkan11Features *h11 = &have->features11;
  on11->storageBuffer16BitAccess = h11->storageBuffer16BitAccess;
  on11->uniformAndStorageBuffer16BitAccess = h11->uniformAndStorageBuffer16BitAccess;
  on11->storagePushConstant16 = h11->storagePushConstant16; /* 16-bit kernel arguments */
  const VkPhysicalDeviceVulkan12Features *h12 = &have->features12;
  on12->bufferDeviceAddress = h12->bufferDeviceAddress;
  on12->timelineSemaphore = h12->timelineSemaphore;
  on12->shaderBufferInt64Atomics = h12->shaderBufferInt64Atomics;
  on12->shaderSharedInt64Atomics = h12->shaderSharedInt64Atomics;
  on12->storageBuffer8BitAccess = h12->storageBuffer8BitAccess;
  on12->uniformAndStorageBuffer8BitAccess = h12->uniformAndStorageBuffer8BitAccess;
  on12->storagePushConstant8 = h12->storagePushConstant8; /* 8-bit kernel arguments */
  on12->shaderInt8 = h12->shaderInt8;
  on12->shaderFloat16 = h12->shaderFloat16;
  on12->scalarBlockLayout = h12->scalarBlockLayout;
  on12->hostQueryReset = h12->hostQueryReset;
  on12->vulkanMemoryModel = h12->vulkanMemoryModel;
  on12->vulkanMemoryModelDeviceScope = h12->vulkanMemoryModelDeviceScope;
  on12->subgroupBroadcastDynamicId = h12->subgroupBroadcastDynamicId;
  on12->bufferDeviceAddressCaptureReplay = VK_FALSE;
  if (on13) {
    const VkPhysicalDeviceVulkan13Features *h13 = &have->features13;
    on13->synchronization2 = h13->synchronization2;
    on13->subgroupSizeControl = h13->subgroupSizeControl;
    on13->computeFullSubgroups = h13->computeFullSubgroups;
    on13->maintenance4 = h13->maintenance4;
  }
}

/* The VKDS__CAP_* whose features are on in these structs. */
static uint32_t caps_enabled(const VkPhysicalDeviceFeatures *f, const VkPhysicalDeviceVulkan11Features *f11,
                             const VkPhysicalDeviceVulkan12Features *f12) {
  const struct { VkBool32 on; uint32_t cap; } all[] = {
      {f12->shaderFloat16, VKDS__CAP_FLOAT16},
      {f->shaderFloat64, VKDS__CAP_FLOAT64},
      {f->shaderInt64, VKDS__CAP_INT64},
      {f12->shaderBufferInt64Atomics || f12->shaderSharedInt64Atomics, VKDS__CAP_INT64_ATOMICS},
      {f->shaderInt16, VKDS__CAP_INT16},
      {f12->shaderInt8, VKDS__CAP_INT8},
      {f11->storageBuffer16BitAccess, VKDS__CAP_STORAGE16},
      {f11->uniformAndStorageBuffer16BitAccess, VKDS__CAP_UNIFORM_STORAGE16},
      {f11->storagePushConstant16, VKDS__CAP_PUSH16},
      {f12->storageBuffer8BitAccess, VKDS__CAP_STORAGE8},
      {f12->uniformAndStorageBuffer8BitAccess, VKDS__CAP_UNIFORM_STORAGE8},
      {f12->storagePushConstant8, VKDS__CAP_PUSH8},
      {f12->bufferDeviceAddress, VKDS__CAP_BUFFER_ADDRESS},
      {f12->vulkanMemoryModel, VKDS__CAP_MEMORY_MODEL},
      {f12->vulkanMemoryModelDeviceScope, VKDS__CAP_MEMORY_MODEL_DEVICE},
  };
  uint32_t caps = 0;
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i)
    if (all[i].on) caps |= all[i].cap;
  return caps;
}

static void record_enabled(vkds__device *dev, const VkPhysicalDeviceFeatures *f,
                           const VkPhysicalDeviceVulkan12Features *f12, bool emh, bool pd, bool size_control,
                           bool maintenance4) {
  dev->enabled = (vkds__device_enabled){
      .subgroup_size_control = size_control,
      .maintenance4 = maintenance4,
      .buffer_device_address = f12 && f12->bufferDeviceAddress,
      .timeline_semaphore = f12 && f12->timelineSemaphore,
      .shader_int64 = f && f->shaderInt64,
      .int64_atomics = f12 && f12->shaderBufferInt64Atomics,
      .float64 = f && f->shaderFloat64,
      .external_memory_host = emh,
      .push_descriptor = pd,
      .host_query_reset = f12 && f12->hostQueryReset && dev->vk.vkResetQueryPool,
  };
}

vkds_result vkds__device_create(vkds__device *dev, uint32_t max_queues) {
  const vkds_context *ctx = dev->ctx;
  const vkds__device_facts *facts = &dev->facts;

  VkDeviceQueueCreateInfo *queues = vkds__temp_alloc_array(ctx, facts->family_count, sizeof *queues);
  uint32_t most = 0;
  for (uint32_t i = 0; i < facts->family_count; ++i)
    if (facts->families[i].queueCount > most) most = facts->families[i].queueCount;
  float *priorities = vkds__temp_alloc_array(ctx, most ? most : 1, sizeof *priorities);
  if (!queues || !priorities) {
    vkds__free(ctx, queues), vkds__free(ctx, priorities);
    return vkds__fail(ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "queue create infos");
  }
  for (uint32_t i = 0; i < most; ++i) priorities[i] = 1.0f;
  uint32_t qci_count = 0;
  for (uint32_t i = 0; i < facts->family_count; ++i) {
    const VkQueueFamilyProperties *fam = &facts->families[i];
    if (!(fam->queueFlags & VK_QUEUE_COMPUTE_BIT) || fam->queueCount == 0) continue;
    uint32_t count = fam->queueCount;
    if (max_queues && count > max_queues) count = max_queues;
    queues[qci_count++] = (VkDeviceQueueCreateInfo){
        .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
        .queueFamilyIndex = i,
        .queueCount = count,
        .pQueuePriorities = priorities,
    };
  }

  bool v13 = facts->props.properties.apiVersion >= VK_API_VERSION_1_3 &&
             ctx->api_version >= VK_API_VERSION_1_3;
  VkPhysicalDeviceVulkan13Features on13 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  VkPhysicalDeviceVulkan12Features on12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                           .pNext = v13 ? &on13 : NULL};
  VkPhysicalDeviceVulkan11Features on11 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
                                           .pNext = &on12};
  VkPhysicalDeviceFeatures2 on = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &on11};
  choose_features(facts, &on, &on11, &on12, v13 ? &on13 : NULL);

  const char *exts[3];
  uint32_t ext_count = 0;
  if (facts->has_external_memory_host) exts[ext_count++] = VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME;
  if (facts->has_push_descriptor) exts[ext_count++] = VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME;
  /* VKDS_PIPELINE_STATS (a tuning aid: registers, shared memory, spills per kernel, as
   * the driver reports them): only when asked, as capturing may cost compile time */
  bool stats_asked = vkds__getenv_on("VKDS_PIPELINE_STATS");
  bool stats = facts->has_pipeline_executable_properties && stats_asked;
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR exec = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR,
      .pNext = on.pNext, .pipelineExecutableInfo = VK_TRUE};
  if (stats) {
    exts[ext_count++] = VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME;
    on.pNext = &exec;
  } else if (stats_asked) {
    fprintf(stderr, "vkds: VKDS_PIPELINE_STATS: %s has no VK_KHR_pipeline_executable_properties\n",
            facts->props.properties.deviceName);
  }

  VkDeviceCreateInfo ci = {
      .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
      .pNext = &on,
      .queueCreateInfoCount = qci_count,
      .pQueueCreateInfos = queues,
      .enabledExtensionCount = ext_count,
      .ppEnabledExtensionNames = exts,
  };
  VkResult vr = ctx->fn.CreateDevice(dev->physical, &ci, vkds__vk_allocator(ctx), &dev->device);
  vkds__free(ctx, queues);
  vkds__free(ctx, priorities);
  if (vr != VK_SUCCESS) {
    dev->device = VK_NULL_HANDLE; /* undefined after a failure: the context's destroy must not see it */
    return vkds__vk_fail(ctx, vr, "vkCreateDevice");
  }
  vkds__loader_load_device(&ctx->fn, dev->device, &dev->vk);
  record_enabled(dev, &on.features, &on12, facts->has_external_memory_host, facts->has_push_descriptor,
                 v13 && on13.subgroupSizeControl, v13 && on13.maintenance4);
  dev->enabled.pipeline_stats = stats;
  dev->enabled.caps = caps_enabled(&on.features, &on11, &on12);
  dev->enabled.caps_known = UINT32_MAX;
  return VKDS_SUCCESS;
}

/* Finds a struct of type `type` in a pNext chain. */
static const void *find_in_chain(const void *chain, VkStructureType type) {
  for (const VkBaseInStructure *s = chain; s; s = s->pNext)
    if (s->sType == type) return s;
  return NULL;
}

void vkds__device_adopt_features(vkds__device *dev, const vkds_embed_device *embed) {
  const VkPhysicalDeviceFeatures2 *f = embed->enabled_features;
  const VkPhysicalDeviceVulkan12Features *f12 =
      f ? find_in_chain(f->pNext, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES) : NULL;
  /* timeline semaphores, buffer device address and host query reset may also come as
   * their own structs */
  VkPhysicalDeviceVulkan12Features merged = {0};
  if (f12) merged = *f12;
  const VkPhysicalDeviceTimelineSemaphoreFeatures *ts =
      f ? find_in_chain(f->pNext, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES) : NULL;
  const VkPhysicalDeviceBufferDeviceAddressFeatures *bda =
      f ? find_in_chain(f->pNext, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES) : NULL;
  const VkPhysicalDeviceHostQueryResetFeatures *hqr =
      f ? find_in_chain(f->pNext, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES) : NULL;
  if (ts) merged.timelineSemaphore |= ts->timelineSemaphore;
  if (bda) merged.bufferDeviceAddress |= bda->bufferDeviceAddress;
  if (hqr) merged.hostQueryReset |= hqr->hostQueryReset;
  bool emh = false, pd = false;
  for (uint32_t i = 0; i < embed->enabled_extension_count; ++i) {
    const char *e = embed->enabled_extensions[i];
    if (!e) continue;
    emh |= strcmp(e, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME) == 0;
    pd |= strcmp(e, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME) == 0;
  }
  const VkPhysicalDeviceVulkan13Features *f13 =
      f ? find_in_chain(f->pNext, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES) : NULL;
  const VkPhysicalDeviceSubgroupSizeControlFeatures *ssc =
      f ? find_in_chain(f->pNext, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES) : NULL;
  const VkPhysicalDeviceMaintenance4Features *m4 =
      f ? find_in_chain(f->pNext, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_4_FEATURES) : NULL;
  record_enabled(dev, f ? &f->features : NULL, &merged, emh && dev->facts.has_external_memory_host,
                 pd && dev->facts.has_push_descriptor,
                 (f13 && f13->subgroupSizeControl) || (ssc && ssc->subgroupSizeControl),
                 (f13 && f13->maintenance4) || (m4 && m4->maintenance4));
  /* what the application's chain tells for certain: a kernel that needs one of these
   * and finds it off is refused before its module reaches the driver (it was a
   * validation error, then UNSUPPORTED: found by a new-user probe) */
  if (f) {
    dev->enabled.caps = (f->features.shaderFloat64 ? VKDS__CAP_FLOAT64 : 0) |
                        (f->features.shaderInt64 ? VKDS__CAP_INT64 : 0) | (f->features.shaderInt16 ? VKDS__CAP_INT16 : 0) |
                        (merged.bufferDeviceAddress ? VKDS__CAP_BUFFER_ADDRESS : 0);
    dev->enabled.caps_known = VKDS__CAP_FLOAT64 | VKDS__CAP_INT64 | VKDS__CAP_INT16 | VKDS__CAP_BUFFER_ADDRESS;
  }
}

uint32_t vkds__device_required_subgroup_size(const vkds__device *dev) {
  const VkPhysicalDeviceVulkan13Properties *p13 = &dev->facts.props13;
  uint32_t s = dev->facts.props11.subgroupSize;
  if (!dev->enabled.subgroup_size_control || !(p13->requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT) ||
      s < p13->minSubgroupSize || s > p13->maxSubgroupSize)
    return 0;
  return s;
}

/* ---- lost devices ---- */

vkds_result vkds__device_vk_fail(vkds__device *dev, VkResult vk, const char *what) {
  if (vk == VK_ERROR_DEVICE_LOST && !atomic_exchange(&dev->lost, true)) {
    atomic_fetch_add(&dev->ctx->lost_devices, 1);
    vkds__log(dev->ctx, VKDS_LOG_ERROR,
              "device %u (%s) is lost (%s): its work fails with VKDS_ERROR_DEVICE_LOST from now on, and "
              "policies no longer select its queues",
              dev->index, dev->facts.props.properties.deviceName, what);
  }
  return vkds__vk_fail(dev->ctx, vk, what);
}

vkds_result vkds__device_check_lost(const vkds__device *dev, const char *what) {
  if (!atomic_load_explicit(&dev->lost, memory_order_relaxed)) return VKDS_SUCCESS;
  return vkds__fail(dev->ctx, VKDS_ERROR_DEVICE_LOST, VK_ERROR_DEVICE_LOST, "%s: device %u (%s) was lost", what,
                    dev->index, dev->facts.props.properties.deviceName);
}
