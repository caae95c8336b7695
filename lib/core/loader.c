/* lib/core/loader.c: finding the Vulkan loader and its entry points. */
#include "internal.h"
#include "vk_fault.h"

#include <dlfcn.h>

vkds_result vkds__loader_open(const vkds_context *ctx, const char *path, void **handle,
                              vkds__instance_fns *fns) {
  *handle = NULL;
  /* "" is unset, as for the info's other strings: dlopen("") is the program itself, and
   * the failure named no library (" has no vkGetInstanceProcAddr"; a new-user probe) */
  if (path && !*path) path = NULL;
  const char *names[] = {path ? path : "libvulkan.so.1", path ? NULL : "libvulkan.so"};
  void *lib = NULL;
  for (size_t i = 0; i < 2 && !lib && names[i]; ++i) lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    return vkds__fail(ctx, VKDS_ERROR_NO_VULKAN, VK_SUCCESS,
                      "cannot open the Vulkan loader %s (%s)%s", names[0], dlerror(),
                      path ? " (vkds_context_info.vulkan_library)" : "; install libvulkan1");
  /* dlsym returns an object pointer; ISO C has no cast from it to a function pointer
   * (-Wpedantic says so), POSIX guarantees the representation, so a union converts. */
  union { void *object; PFN_vkGetInstanceProcAddr fn; } gipa = {dlsym(lib, "vkGetInstanceProcAddr")};
  if (!gipa.fn) {
    dlclose(lib);
    return vkds__fail(ctx, VKDS_ERROR_NO_VULKAN, VK_SUCCESS,
                      "%s has no vkGetInstanceProcAddr: not a Vulkan loader", names[0]);
  }
  *handle = lib;
  *fns = (vkds__instance_fns){.GetInstanceProcAddr = gipa.fn};
  vkds__loader_load_instance(fns, VK_NULL_HANDLE);
  return VKDS_SUCCESS;
}

void vkds__loader_load_instance(vkds__instance_fns *fns, VkInstance instance) {
  PFN_vkGetInstanceProcAddr gipa = fns->GetInstanceProcAddr;
#define LOAD(name) fns->name = (PFN_vk##name)gipa(instance, "vk" #name)
  if (instance == VK_NULL_HANDLE) {
    LOAD(CreateInstance);
    LOAD(EnumerateInstanceVersion);
    LOAD(EnumerateInstanceLayerProperties);
    LOAD(EnumerateInstanceExtensionProperties);
    return;
  }
  LOAD(DestroyInstance);
  LOAD(EnumeratePhysicalDevices);
  LOAD(GetPhysicalDeviceProperties2);
  LOAD(GetPhysicalDeviceFeatures2);
  LOAD(GetPhysicalDeviceMemoryProperties);
  LOAD(GetPhysicalDeviceQueueFamilyProperties);
  LOAD(EnumerateDeviceExtensionProperties);
  LOAD(CreateDevice);
  LOAD(GetDeviceProcAddr);
  /* NULL unless VK_EXT_debug_utils is enabled on the instance */
  LOAD(CreateDebugUtilsMessengerEXT);
  LOAD(DestroyDebugUtilsMessengerEXT);
  LOAD(SetDebugUtilsObjectNameEXT);
  LOAD(CmdBeginDebugUtilsLabelEXT);
  LOAD(CmdEndDebugUtilsLabelEXT);
#undef LOAD
}

/* volk reads its one global vkGetDeviceProcAddr when it fills a device table. */
static pthread_mutex_t volk_lock = PTHREAD_MUTEX_INITIALIZER;

void vkds__loader_load_device(const vkds__instance_fns *fns, VkDevice device,
                              struct VolkDeviceTable *table) {
  pthread_mutex_lock(&volk_lock);
  vkGetDeviceProcAddr = fns->GetDeviceProcAddr;
  volkLoadDeviceTable(table, device);
  pthread_mutex_unlock(&volk_lock);
  vkds__vk_fault_wrap(device, table); /* tests only: nothing unless installed */
}

void vkds__loader_close(void *handle) {
  if (handle) dlclose(handle);
}
