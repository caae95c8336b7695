/* tests/test_resources.c: every fact a resource reports, compared with what Vulkan
 * itself reports for the same physical device and queue family. */
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>

#include "harness.h"

typedef struct oracle {
  VkPhysicalDeviceProperties2 p;
  VkPhysicalDeviceVulkan11Properties p11;
  VkPhysicalDeviceVulkan12Properties p12;
  VkPhysicalDeviceFeatures2 f;
  VkPhysicalDeviceVulkan12Features f12;
  VkPhysicalDeviceMemoryProperties mem;
  VkQueueFamilyProperties fam[32];
  uint32_t fam_count;
  bool has_emh, has_pd;
} oracle;

static void ask_vulkan(VkPhysicalDevice phys, oracle *o) {
  memset(o, 0, sizeof *o);
  o->p12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES;
  o->p11 = (VkPhysicalDeviceVulkan11Properties){VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES, &o->p12};
  o->p = (VkPhysicalDeviceProperties2){VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &o->p11};
  vkGetPhysicalDeviceProperties2(phys, &o->p);
  o->f12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  o->f = (VkPhysicalDeviceFeatures2){VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &o->f12};
  vkGetPhysicalDeviceFeatures2(phys, &o->f);
  vkGetPhysicalDeviceMemoryProperties(phys, &o->mem);
  o->fam_count = 32;
  vkGetPhysicalDeviceQueueFamilyProperties(phys, &o->fam_count, o->fam);
  uint32_t n = 0;
  vkEnumerateDeviceExtensionProperties(phys, NULL, &n, NULL);
  VkExtensionProperties *e = calloc(n, sizeof *e);
  vkEnumerateDeviceExtensionProperties(phys, NULL, &n, e);
  for (uint32_t i = 0; i < n; ++i) {
    o->has_emh |= strcmp(e[i].extensionName, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME) == 0;
    o->has_pd |= strcmp(e[i].extensionName, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME) == 0;
  }
  free(e);
}

START_TEST(facts_match_vulkan) {
  vkds_context *ctx = harness_context();
  for (uint32_t i = 0; i < vkds_context_resource_count(ctx); ++i) {
    vkds_resource *res = vkds_context_resource(ctx, i);
    vkds_resource_info ri;
    ck_assert_vkds(vkds_resource_get_info(res, &ri));
    VkPhysicalDevice phys;
    VkDevice dev;
    VkQueue queue;
    ck_assert_vkds(vkds_resource_vk_handles(res, &phys, &dev, &queue));
    ck_assert_ptr_nonnull(phys);
    ck_assert_ptr_nonnull(dev);
    ck_assert_ptr_nonnull(queue);
    VkQueue expect_queue;
    vkGetDeviceQueue(dev, ri.queue_family, ri.queue_index, &expect_queue);
    ck_assert_ptr_eq(queue, expect_queue);

    oracle o;
    ask_vulkan(phys, &o);
    const VkPhysicalDeviceLimits *l = &o.p.properties.limits;
    ck_assert_str_eq(ri.device_name, o.p.properties.deviceName);
    ck_assert_int_eq((int)ri.device_type, (int)o.p.properties.deviceType);
    ck_assert_uint_eq(ri.vendor_id, o.p.properties.vendorID);
    ck_assert_uint_eq(ri.device_id, o.p.properties.deviceID);
    ck_assert_mem_eq(ri.device_uuid, o.p11.deviceUUID, VK_UUID_SIZE);
    ck_assert_mem_eq(ri.driver_uuid, o.p11.driverUUID, VK_UUID_SIZE);
    ck_assert_uint_eq(ri.driver_id, (uint32_t)o.p12.driverID);
    ck_assert_str_eq(ri.driver_name, o.p12.driverName);
    ck_assert_str_eq(ri.driver_info, o.p12.driverInfo);
    ck_assert_uint_eq(ri.api_version, o.p.properties.apiVersion);
    ck_assert_uint_eq(ri.driver_version, o.p.properties.driverVersion);

    ck_assert_uint_lt(ri.queue_family, o.fam_count);
    const VkQueueFamilyProperties *fam = &o.fam[ri.queue_family];
    ck_assert(fam->queueFlags & VK_QUEUE_COMPUTE_BIT);
    ck_assert_uint_eq(ri.queue_flags, fam->queueFlags);
    ck_assert_uint_eq(ri.family_queue_count, fam->queueCount);
    ck_assert_uint_lt(ri.queue_index, fam->queueCount);
    ck_assert_int_eq(ri.timestamps, fam->timestampValidBits > 0);
    ck_assert_uint_eq(ri.timestamp_valid_bits, fam->timestampValidBits);
    ck_assert_float_eq(ri.timestamp_period_ns, l->timestampPeriod);

    ck_assert_uint_eq(ri.heap_count, o.mem.memoryHeapCount);
    for (uint32_t h = 0; h < ri.heap_count; ++h) {
      ck_assert_uint_eq(ri.heaps[h].size, o.mem.memoryHeaps[h].size);
      ck_assert_int_eq(ri.heaps[h].device_local, !!(o.mem.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT));
    }
    bool dlhv = false;
    for (uint32_t t = 0; t < o.mem.memoryTypeCount; ++t) {
      VkMemoryPropertyFlags f = o.mem.memoryTypes[t].propertyFlags;
      dlhv |= (f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) && (f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT);
    }
    ck_assert_int_eq(ri.device_local_host_visible, dlhv);

    for (int k = 0; k < 3; ++k) {
      ck_assert_uint_eq(ri.max_work_group_count[k], l->maxComputeWorkGroupCount[k]);
      ck_assert_uint_eq(ri.max_work_group_size[k], l->maxComputeWorkGroupSize[k]);
    }
    ck_assert_uint_eq(ri.max_work_group_invocations, l->maxComputeWorkGroupInvocations);
    ck_assert_uint_eq(ri.max_push_constants_size, l->maxPushConstantsSize);
    ck_assert_uint_eq(ri.max_storage_buffer_range, l->maxStorageBufferRange);
    ck_assert_uint_eq(ri.max_shared_memory_size, l->maxComputeSharedMemorySize);
    ck_assert_uint_eq(ri.subgroup_size, o.p11.subgroupSize);
    ck_assert_uint_eq(ri.subgroup_operations, o.p11.subgroupSupportedOperations);
    ck_assert(ri.subgroup_operations & VK_SUBGROUP_FEATURE_BASIC_BIT);

    /* vkds enables every optional feature the device has */
    ck_assert_int_eq(ri.buffer_device_address, o.f12.bufferDeviceAddress);
    ck_assert_int_eq(ri.timeline_semaphore, o.f12.timelineSemaphore);
    ck_assert(ri.timeline_semaphore); /* vkds requires it */
    ck_assert_int_eq(ri.shader_int64, o.f.features.shaderInt64);
    ck_assert_int_eq(ri.shader_buffer_int64_atomics, o.f12.shaderBufferInt64Atomics);
    ck_assert_int_eq(ri.shader_float64, o.f.features.shaderFloat64);
    ck_assert_int_eq(ri.external_memory_host, o.has_emh);
    ck_assert_int_eq(ri.push_descriptor, o.has_pd);
  }
  vkds_context_destroy(ctx);
}
END_TEST

/* Every compute queue of every device is a resource: count them with Vulkan. */
START_TEST(every_compute_queue_is_a_resource) {
  vkds_context *ctx = harness_context();
  uint32_t expected = 0;
  for (uint32_t d = 0; d < vkds_context_device_count(ctx); ++d) {
    VkPhysicalDevice phys = VK_NULL_HANDLE;
    for (uint32_t i = 0; i < vkds_context_resource_count(ctx); ++i) {
      vkds_resource_info ri;
      ck_assert_vkds(vkds_resource_get_info(vkds_context_resource(ctx, i), &ri));
      if (ri.device_index == d) {
        ck_assert_vkds(vkds_resource_vk_handles(vkds_context_resource(ctx, i), &phys, NULL, NULL));
        break;
      }
    }
    ck_assert_ptr_nonnull(phys);
    oracle o;
    ask_vulkan(phys, &o);
    for (uint32_t f = 0; f < o.fam_count; ++f)
      if (o.fam[f].queueFlags & VK_QUEUE_COMPUTE_BIT) expected += o.fam[f].queueCount;
  }
  ck_assert_uint_eq(vkds_context_resource_count(ctx), expected);
  vkds_context_destroy(ctx);
}
END_TEST

START_TEST(device_type_names) {
  ck_assert_str_eq(vkds_device_type_str(VKDS_DEVICE_CPU), "cpu");
  ck_assert_str_eq(vkds_device_type_str(VKDS_DEVICE_DISCRETE), "discrete");
  ck_assert_str_eq(vkds_device_type_str(VKDS_DEVICE_INTEGRATED), "integrated");
  ck_assert_str_eq(vkds_device_type_str(VKDS_DEVICE_VIRTUAL), "virtual");
  ck_assert_str_eq(vkds_device_type_str(VKDS_DEVICE_OTHER), "other");
  ck_assert_str_eq(vkds_device_type_str((vkds_device_type)77), "other");
}
END_TEST

int main(void) {
  Suite *s = suite_create("resources");
  TCase *tc = harness_tcase("resources");
  tcase_add_test(tc, facts_match_vulkan);
  tcase_add_test(tc, every_compute_queue_is_a_resource);
  tcase_add_test(tc, device_type_names);
  suite_add_tcase(s, tc);
  return harness_run(s);
}
