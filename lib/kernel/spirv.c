/* lib/kernel/spirv.c: SPIR-V validation through SPIRV-Tools' C API. Every failure goes
 * through vkds__fail; the library is not allowed to print (it reports through the
 * diagnostic). The compute interface is read by lib/kernel/spirv_reflect.c. */
#include "kernel_internal.h"

/* libspirv.h defines `const uint32_t kDefaultMaxIdBound` at file scope, which in C is a
 * global definition: libvkds.a exported it, and an application of its own that
 * includes libspirv.h failed to link statically (multiple definition; a packaging
 * probe). Named inside vkds's namespace here. */
#define kDefaultMaxIdBound vkds__spirv_default_max_id_bound
#include <spirv-tools/libspirv.h>
#undef kDefaultMaxIdBound

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  SPIRV_MAGIC = 0x07230203u,
  SPIRV_HEADER_WORDS = 5,
};

/* What validation checks first: SPIRV-Tools should not be handed something that is not
 * even a SPIR-V module (it would also accept a byte-swapped module, which no Vulkan
 * driver takes). */
static vkds_result check_header(const vkds_context *ctx, const uint32_t *words, size_t word_count) {
  if (!words || word_count == 0)
    return vkds__fail(ctx, VKDS_ERROR_INVALID_SPIRV, VK_SUCCESS, "the SPIR-V module is empty");
  if (word_count < SPIRV_HEADER_WORDS)
    return vkds__fail(ctx, VKDS_ERROR_INVALID_SPIRV, VK_SUCCESS,
                      "the SPIR-V module is %zu words long, shorter than its 5-word header",
                      word_count);
  if (words[0] != SPIRV_MAGIC)
    return vkds__fail(ctx, VKDS_ERROR_INVALID_SPIRV, VK_SUCCESS,
                      "not a SPIR-V module: magic number 0x%08x, expected 0x%08x",
                      (unsigned)words[0], (unsigned)SPIRV_MAGIC);
  return VKDS_SUCCESS;
}

/* ---- validation ---- */

/* The validator's text with trailing newlines removed, so that it ends the error message
 * cleanly. Writes into buf. */
static const char *diagnostic_text(spv_diagnostic diag, spv_result_t sr, char *buf, size_t size) {
  if (!diag || !diag->error || !diag->error[0]) {
    snprintf(buf, size, "the validator gave no reason (spv_result_t %d)", (int)sr);
    return buf;
  }
  size_t n = strlen(diag->error);
  while (n && (diag->error[n - 1] == '\n' || diag->error[n - 1] == '\r')) --n;
  if (n >= size) n = size - 1;
  memcpy(buf, diag->error, n);
  buf[n] = '\0';
  return buf;
}

/* The validation's SPIRV-Tools calls, run under vkds__cxx_guard (SPIRV-Tools throws
 * std::bad_alloc when an allocation fails): what they make is kept here, so that it is
 * freed whether they returned or threw. */
typedef struct validate_job {
  const vkds_context *ctx;
  const uint32_t *words;
  size_t word_count;
  bool v13;
  spv_context sc;
  spv_validator_options opts;
  spv_diagnostic diag;
  vkds_result r;
} validate_job;

static void validate_run(void *arg) {
  validate_job *j = arg;
  j->sc = spvContextCreate(j->v13 ? SPV_ENV_VULKAN_1_3 : SPV_ENV_VULKAN_1_2);
  j->opts = spvValidatorOptionsCreate();
  if (!j->sc || !j->opts) {
    j->r = vkds__fail(j->ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "SPIR-V validation: cannot create the validator");
    return;
  }
  /* The block-layout rules vkds's argument packing relies on: the environment's own
   * (Vulkan 1.1+ makes relaxed block layout core, which the validator applies by
   * itself); scalar and standard uniform-buffer layouts are device features that vkds
   * does not enable, so a module needing them must fail here, not in the driver. */
  spvValidatorOptionsSetRelaxBlockLayout(j->opts, false);
  spvValidatorOptionsSetUniformBufferStandardLayout(j->opts, false);
  spvValidatorOptionsSetScalarBlockLayout(j->opts, false);

  spv_const_binary_t binary = {.code = j->words, .wordCount = j->word_count};
  spv_result_t sr = spvValidateWithOptions(j->sc, j->opts, &binary, &j->diag);
  if (sr != SPV_SUCCESS) {
    char text[900];
    j->r = vkds__fail(j->ctx, VKDS_ERROR_INVALID_SPIRV, VK_SUCCESS, "SPIR-V validation (Vulkan 1.%d rules) failed: %s",
                      j->v13 ? 3 : 2, diagnostic_text(j->diag, sr, text, sizeof text));
  }
}

vkds_result vkds__spirv_validate(const vkds_context *ctx, const uint32_t *words, size_t word_count,
                                 uint32_t api_version) {
  vkds_result r = check_header(ctx, words, word_count);
  if (r != VKDS_SUCCESS) return r;

  /* SPIRV-Tools (2023.1) knows Vulkan 1.0-1.3: anything newer than 1.2 gets 1.3 rules;
   * vkds requires at least 1.2, so older versions get 1.2 rules too. */
  bool v13 = VK_API_VERSION_MAJOR(api_version) > 1 ||
             (VK_API_VERSION_MAJOR(api_version) == 1 && VK_API_VERSION_MINOR(api_version) >= 3);
  validate_job j = {.ctx = ctx, .words = words, .word_count = word_count, .v13 = v13};
  vkds__cxx_outcome o = vkds__cxx_guard(validate_run, &j);
  spvDiagnosticDestroy(j.diag);
  spvValidatorOptionsDestroy(j.opts);
  spvContextDestroy(j.sc);
  if (o != VKDS__CXX_RETURNED)
    return vkds__fail(ctx, o == VKDS__CXX_OUT_OF_MEMORY ? VKDS_ERROR_OUT_OF_HOST_MEMORY : VKDS_ERROR_INVALID_SPIRV,
                      VK_SUCCESS, "SPIR-V validation: SPIRV-Tools %s",
                      o == VKDS__CXX_OUT_OF_MEMORY ? "ran out of memory" : "threw an exception");
  return j.r;
}
