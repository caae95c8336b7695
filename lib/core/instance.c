/* lib/core/instance.c: the VkInstance vkds creates, and the validation-layer messenger. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char VALIDATION_LAYER[] = "VK_LAYER_KHRONOS_validation";

static VKAPI_ATTR VkBool32 VKAPI_CALL on_debug_message(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT types,
    const VkDebugUtilsMessengerCallbackDataEXT *data, void *user) {
  const vkds_context *ctx = user;
  vkds_log_level level = severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT     ? VKDS_LOG_ERROR
                         : severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT ? VKDS_LOG_WARN
                         : severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT    ? VKDS_LOG_INFO
                                                                                       : VKDS_LOG_DEBUG;
  vkds_log_source source = (types & (VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT))
                               ? VKDS_LOG_SOURCE_VALIDATION
                               : VKDS_LOG_SOURCE_DRIVER;
  const char *text = data && data->pMessage ? data->pMessage : "";
  if (ctx->log && level >= ctx->log_level) ctx->log(ctx->log_user, level, source, text);
  /* Without a logger the layer's own default (printing) is replaced by this messenger,
   * so an application that asked for validation saw nothing at all (a packaging
   * probe): its warnings and errors go to stderr then. */
  if (!ctx->log && level >= VKDS_LOG_WARN) fprintf(stderr, "[vkds validation] %s\n", text);
  return VK_FALSE; /* never abort the Vulkan call */
}

/* Whether the loader offers layer `name` (*found); out of memory for the list is an
 * error, not "absent" (which would turn it into a wrong VKDS_ERROR_UNSUPPORTED). */
static vkds_result has_layer(const vkds_context *ctx, const char *name, bool *found) {
  const vkds__instance_fns *fn = &ctx->fn;
  uint32_t n = 0;
  *found = false;
  if (fn->EnumerateInstanceLayerProperties(&n, NULL) != VK_SUCCESS || n == 0) return VKDS_SUCCESS;
  VkLayerProperties *layers = vkds__temp_alloc_array(ctx, n, sizeof *layers);
  if (!layers) return vkds__fail(ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "instance layer list");
  if (fn->EnumerateInstanceLayerProperties(&n, layers) == VK_SUCCESS)
    for (uint32_t i = 0; i < n && !*found; ++i) *found = strcmp(layers[i].layerName, name) == 0;
  vkds__free(ctx, layers);
  return VKDS_SUCCESS;
}

/* The same for an instance extension (without it, vkds would quietly go without). */
static vkds_result has_instance_extension(const vkds_context *ctx, const char *name, bool *found) {
  const vkds__instance_fns *fn = &ctx->fn;
  uint32_t n = 0;
  *found = false;
  if (fn->EnumerateInstanceExtensionProperties(NULL, &n, NULL) != VK_SUCCESS || n == 0) return VKDS_SUCCESS;
  VkExtensionProperties *exts = vkds__temp_alloc_array(ctx, n, sizeof *exts);
  if (!exts) return vkds__fail(ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "instance extension list");
  if (fn->EnumerateInstanceExtensionProperties(NULL, &n, exts) == VK_SUCCESS)
    for (uint32_t i = 0; i < n && !*found; ++i) *found = strcmp(exts[i].extensionName, name) == 0;
  vkds__free(ctx, exts);
  return VKDS_SUCCESS;
}

static VkDebugUtilsMessengerCreateInfoEXT messenger_info(vkds_context *ctx) {
  VkDebugUtilsMessageSeverityFlagsEXT severity =
      VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  if (ctx->log_level <= VKDS_LOG_INFO) severity |= VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT;
  if (ctx->log_level <= VKDS_LOG_DEBUG) severity |= VK_DEBUG_UTILS_MESSAGE_SEVERITY_VERBOSE_BIT_EXT;
  return (VkDebugUtilsMessengerCreateInfoEXT){
      .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
      .messageSeverity = severity,
      .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
      .pfnUserCallback = on_debug_message,
      .pUserData = ctx,
  };
}

vkds_result vkds__instance_create(vkds_context *ctx, const vkds_context_info *info,
                                  bool validation) {
  vkds__instance_fns *fn = &ctx->fn;
  uint32_t loader_version = VK_API_VERSION_1_0;
  if (fn->EnumerateInstanceVersion) fn->EnumerateInstanceVersion(&loader_version);
  if (loader_version < VK_API_VERSION_1_2)
    return vkds__fail(ctx, VKDS_ERROR_NO_VULKAN, VK_SUCCESS,
                      "the Vulkan loader supports only %u.%u; vkds needs 1.2",
                      VK_API_VERSION_MAJOR(loader_version), VK_API_VERSION_MINOR(loader_version));
  ctx->api_version = loader_version < VK_API_VERSION_1_3 ? loader_version : VK_API_VERSION_1_3;

  bool have_layer = false;
  if (validation) VKDS_CHECK(has_layer(ctx, VALIDATION_LAYER, &have_layer));
  if (validation && !have_layer)
    return vkds__fail(ctx, VKDS_ERROR_UNSUPPORTED, VK_ERROR_LAYER_NOT_PRESENT,
                      "validation asked for, but %s is not installed "
                      "(Debian: vulkan-validationlayers)", VALIDATION_LAYER);

  const char *exts[2];
  uint32_t ext_count = 0;
  VKDS_CHECK(has_instance_extension(ctx, VK_EXT_DEBUG_UTILS_EXTENSION_NAME, &ctx->debug_utils));
  if (ctx->debug_utils) exts[ext_count++] = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
  bool portability;
  VKDS_CHECK(has_instance_extension(ctx, VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME, &portability));
  if (portability) exts[ext_count++] = VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME;

  VkDebugUtilsMessengerCreateInfoEXT msg = messenger_info(ctx);
  VkApplicationInfo app = {
      .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
      .pApplicationName = info->app_name ? info->app_name : "vkds",
      .pEngineName = "vkds",
      .apiVersion = ctx->api_version,
  };
  const char *layers[] = {VALIDATION_LAYER};
  VkInstanceCreateInfo ci = {
      .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
      /* the messenger in pNext also covers vkCreateInstance and vkDestroyInstance */
      .pNext = (validation && ctx->debug_utils) ? &msg : NULL,
      .flags = portability ? VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR : 0,
      .pApplicationInfo = &app,
      .enabledLayerCount = validation ? 1u : 0u,
      .ppEnabledLayerNames = layers,
      .enabledExtensionCount = ext_count,
      .ppEnabledExtensionNames = exts,
  };
  VkResult vr = fn->CreateInstance(&ci, vkds__vk_allocator(ctx), &ctx->instance);
  /* a failed call leaves its outputs undefined (Vulkan's rule): destroy must not see them */
  if (vr != VK_SUCCESS) ctx->instance = VK_NULL_HANDLE;
  if (vr == VK_ERROR_INCOMPATIBLE_DRIVER)
    return vkds__fail(ctx, VKDS_ERROR_NO_DEVICE, vr, "no Vulkan driver is installed "
                      "(Debian: mesa-vulkan-drivers gives the lavapipe CPU device)");
  if (vr != VK_SUCCESS) return vkds__vk_fail(ctx, vr, "vkCreateInstance");
  vkds__loader_load_instance(fn, ctx->instance);
  ctx->validation = validation;

  if (validation && ctx->debug_utils) {
    vr = fn->CreateDebugUtilsMessengerEXT(ctx->instance, &msg, vkds__vk_allocator(ctx), &ctx->messenger);
    if (vr != VK_SUCCESS) {
      ctx->messenger = VK_NULL_HANDLE;
      return vkds__vk_fail(ctx, vr, "vkCreateDebugUtilsMessengerEXT");
    }
  }
  return VKDS_SUCCESS;
}

void vkds__instance_destroy(vkds_context *ctx) {
  if (ctx->instance_adopted || ctx->instance == VK_NULL_HANDLE) return;
  if (ctx->messenger) ctx->fn.DestroyDebugUtilsMessengerEXT(ctx->instance, ctx->messenger, vkds__vk_allocator(ctx));
  ctx->fn.DestroyInstance(ctx->instance, vkds__vk_allocator(ctx));
  ctx->instance = VK_NULL_HANDLE;
}
