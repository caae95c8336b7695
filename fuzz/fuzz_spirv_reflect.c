/* fuzz/fuzz_spirv_reflect.c: libFuzzer target for vkds's SPIR-V reflection
 * (lib/kernel/spirv_reflect.c), which reads words an application hands to
 * vkds_kernel_from_spirv. The input's bytes are the module's words (a trailing partial
 * word is dropped); a reflection must succeed or fail with a named error, and what it
 * returns is freed. Seeds: fuzz/corpus/spirv_reflect (the test modules). Built and run
 * for a bounded time by scripts/fuzz.sh. */
#include "kernel/kernel_internal.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  size_t words = size / 4;
  uint32_t *w = malloc(words ? words * 4 : 4);
  if (!w) return 0;
  memcpy(w, data, words * 4);
  vkds__reflection r;
  vkds_result res = vkds__spirv_reflect(NULL, w, words, NULL, &r);
  if (res != VKDS_SUCCESS && res != VKDS_ERROR_INVALID_SPIRV && res != VKDS_ERROR_UNSUPPORTED &&
      res != VKDS_ERROR_OUT_OF_HOST_MEMORY)
    abort(); /* not a named outcome of reflection */
  if (res == VKDS_SUCCESS) {
    /* touch everything it returned */
    volatile uint32_t sink = r.local_size[0] + r.push.size + r.binding_count + r.spec_count;
    for (uint32_t i = 0; i < r.binding_count; ++i) sink += r.bindings[i].binding + (uint32_t)strlen(r.bindings[i].name);
    (void)sink;
  }
  vkds__reflection_free(&r);
  free(w);
  return 0;
}
