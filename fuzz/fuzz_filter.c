/* fuzz/fuzz_filter.c: libFuzzer target for the device filter language
 * (lib/core/filter.c: vkds_context_info.devices and VKDS_DEVICES, text an application or
 * its user types). The input is the filter's text (up to its first NUL); a parse must
 * succeed or fail with VKDS_ERROR_INVALID_ARGUMENT, and a parsed filter is matched
 * against a few devices. Seeds: fuzz/corpus/filter. Run by scripts/fuzz.sh. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  vkds__filter *f = NULL;
  vkds_result r = vkds__filter_parse(NULL, text, "the fuzzed filter", &f);
  if (r != VKDS_SUCCESS && r != VKDS_ERROR_INVALID_ARGUMENT && r != VKDS_ERROR_OUT_OF_HOST_MEMORY) abort();
  if (r == VKDS_SUCCESS) {
    static const struct { VkPhysicalDeviceType type; uint32_t vendor; const char *name; } devices[] = {
        {VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU, 0x10de, "NVIDIA H100 80GB HBM3"},
        {VK_PHYSICAL_DEVICE_TYPE_CPU, 0x10005, "llvmpipe (LLVM 15.0.6, 256 bits)"},
        {VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU, 0x8086, ""},
    };
    for (uint32_t i = 0; i < sizeof devices / sizeof devices[0]; ++i) {
      VkPhysicalDeviceProperties props = {.deviceType = devices[i].type, .vendorID = devices[i].vendor};
      strncpy(props.deviceName, devices[i].name, sizeof props.deviceName - 1);
      (void)vkds__filter_match(f, i, &props);
    }
  }
  vkds__filter_free(f);
  free(text);
  return 0;
}
