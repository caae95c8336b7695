/* fuzz/fuzz_glsl.c: libFuzzer target for vkds's GLSL path (lib/kernel/glsl.c:
 * vkds__glsl_compile, what vkds_kernel_from_glsl runs): vkds's own reading of the source
 * (#version, #include "vkds.glsl", comments, line splices), glslang under vkds__cxx_guard,
 * and on success what kernel creation does next: SPIRV-Tools validation
 * (lib/kernel/spirv.c), reflection (lib/kernel/spirv_reflect.c) and the layout of the
 * argument block (lib/kernel/args.c). The input is the source text (up to its first NUL);
 * its length's parity picks Vulkan 1.2 or 1.3 rules.
 *
 * Only vkds's code is instrumented: glslang and SPIRV-Tools are Debian's static
 * libraries, so the fuzzer is guided by vkds's preprocessing and by what the reflection
 * of the output reaches, not by glslang's own branches (its string compares still feed
 * the dictionary). A crash or sanitizer report inside glslang still ends the run.
 *
 * Checked: every outcome is named (compile: VKDS_SUCCESS, VKDS_ERROR_COMPILE,
 * VKDS_ERROR_LIMIT_EXCEEDED (too long after preprocessing), VKDS_ERROR_OUT_OF_HOST_MEMORY;
 * validation: VKDS_ERROR_INVALID_SPIRV; reflection: also VKDS_ERROR_UNSUPPORTED),
 * failures carry a message, what succeeded is freed, and glslang never throws (vkds
 * catches it, but Debian's glslang leaks what it held). Found (tests/test_glsl.c): a
 * macro ending at a line splice made glslang throw (vkds now puts a space there), and
 * expressions deep enough to overflow glslang's recursion on the caller's stack
 * (glslang now runs on a thread of vkds's own, with a length limit).
 * Seeds: fuzz/corpus/glsl (compute shaders from tests/ and shaders/). Run by
 * scripts/fuzz.sh. */
#include "kernel/kernel_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void expect(vkds_result r, const vkds_result *allowed, size_t n, const char *what) {
  for (size_t i = 0; i < n; ++i)
    if (r == allowed[i]) {
      if (r != VKDS_SUCCESS && !vkds_last_error_message()[0]) {
        fprintf(stderr, "fuzz_glsl: %s failed (%d) without a message\n", what, (int)r);
        abort();
      }
      return;
    }
  fprintf(stderr, "fuzz_glsl: %s returned %d (%s), not one of its named outcomes\n", what, (int)r,
          vkds_last_error_message());
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *source = malloc(size + 1);
  if (!source) return 0;
  memcpy(source, data, size);
  source[size] = '\0';
  uint32_t api = size & 1 ? VK_API_VERSION_1_2 : VK_API_VERSION_1_3;
  uint32_t *words = NULL;
  size_t n = 0;
  vkds_result r = vkds__glsl_compile(NULL, source, "fuzz", NULL, 0, api, &words, &n);
  static const vkds_result compile[] = {VKDS_SUCCESS, VKDS_ERROR_COMPILE, VKDS_ERROR_LIMIT_EXCEEDED,
                                        VKDS_ERROR_OUT_OF_HOST_MEMORY};
  expect(r, compile, sizeof compile / sizeof compile[0], "vkds__glsl_compile");
  /* caught, but glslang (built without unwind cleanups) leaks what it held: an input
   * class for vkds to keep from glslang, as it does a macro before a line splice */
  char threw[128];
  snprintf(threw, sizeof threw, "%s: GLSL: fuzz: glslang threw an exception", vkds_result_str(VKDS_ERROR_COMPILE));
  if (r == VKDS_ERROR_COMPILE && strcmp(vkds_last_error_message(), threw) == 0) {
    fprintf(stderr, "fuzz_glsl: %s\n", threw);
    abort();
  }
  if (r == VKDS_SUCCESS) {
    if (!words || n < 5) {
      fprintf(stderr, "fuzz_glsl: a compile succeeded with %zu words\n", n);
      abort();
    }
    static const vkds_result validate[] = {VKDS_SUCCESS, VKDS_ERROR_INVALID_SPIRV, VKDS_ERROR_OUT_OF_HOST_MEMORY};
    expect(vkds__spirv_validate(NULL, words, n, api), validate, sizeof validate / sizeof validate[0],
           "vkds__spirv_validate");
    /* reflection reads any module (kernel creation reflects validated ones only) */
    vkds__reflection refl;
    r = vkds__spirv_reflect(NULL, words, n, NULL, &refl);
    static const vkds_result reflect[] = {VKDS_SUCCESS, VKDS_ERROR_INVALID_SPIRV, VKDS_ERROR_UNSUPPORTED,
                                          VKDS_ERROR_OUT_OF_HOST_MEMORY};
    expect(r, reflect, sizeof reflect / sizeof reflect[0], "vkds__spirv_reflect");
    if (r == VKDS_SUCCESS) {
      vkds__arg_layout layout;
      vkds__args_layout(&refl, &layout);
      /* (UNSUPPORTED: a descriptor vkds does not bind, one outside set 0 or an array of
       * buffers, refused when the kernel is made since session 44) */
      static const vkds_result check[] = {VKDS_SUCCESS, VKDS_ERROR_ARGUMENT_MISMATCH, VKDS_ERROR_UNSUPPORTED};
      expect(vkds__args_check(NULL, "fuzz", &refl, &layout, NULL), check, sizeof check / sizeof check[0],
             "vkds__args_check");
    }
    vkds__reflection_free(&refl);
  }
  vkds__free(NULL, words);
  free(source);
  return 0;
}
