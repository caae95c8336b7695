/* fuzz/fuzz_operator.c: libFuzzer target for the algorithms' user operators: GLSL
 * snippets (include/vkds/algorithm.h: expressions of x, of a and b, predicates, a
 * reduction's operator and identity, a comparator, a transform view's operator, a user
 * sequence type's device code) that lib/algorithm/codegen.c places into an algorithm's
 * kernel. Each input is one call's description, run through what an algorithm does to
 * get its kernel on a cache miss (lib/algorithm/kernels.c, vkds__alg_kernel): code
 * generation, vkds_kernel_from_glsl (glslang, SPIR-V validation, reflection, the check
 * of the kernel's arguments), and on a compile error the message that names the
 * snippet. The context is a stand-in with one device and no Vulkan: kernel creation
 * makes no pipeline (that happens at a launch). Each input's kernels are freed after it.
 *
 * Input: byte 0 the algorithm family (see `family` below), byte 1 the element type,
 * byte 2 flags (the device's kind and access rule, the element count, a zip input, the
 * scan's path); then up to three snippets separated by NUL bytes (a C string ends at
 * its NUL: what follows is the next snippet).
 *
 * Checked: no crash, no sanitizer report, and every outcome named: VKDS_SUCCESS, or
 * VKDS_ERROR_COMPILE / VKDS_ERROR_INVALID_SPIRV / VKDS_ERROR_ARGUMENT_MISMATCH /
 * VKDS_ERROR_INVALID_ARGUMENT / VKDS_ERROR_UNSUPPORTED / VKDS_ERROR_LIMIT_EXCEEDED with a
 * message (a compile error's names the algorithm). vkds does not filter snippets (RELIABILITY.md): one that closes
 * the function it sits in and declares more compiles when the result is valid GLSL, as
 * a kernel source would. Seeds: fuzz/corpus/operator. Run by scripts/fuzz.sh. */
#include "algorithm/algorithm_internal.h"
#include "kernel/kernel_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static vkds_context ctx;
static vkds__device dev;
static vkds_resource res;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  ctx.api_version = VK_API_VERSION_1_3;
  pthread_mutex_init(&ctx.glsl_lock, NULL);
  pthread_mutex_init(&ctx.alg_lock, NULL);
  ctx.device_count = 1;
  ctx.devices = &dev;
  dev.ctx = &ctx;
  VkPhysicalDeviceLimits *lim = &dev.facts.props.properties.limits;
  lim->maxPushConstantsSize = 256;
  lim->minStorageBufferOffsetAlignment = 16;
  lim->maxStorageBufferRange = 1u << 27;
  lim->maxPerStageDescriptorStorageBuffers = 8;
  dev.enabled = (vkds__device_enabled){.buffer_device_address = true, .shader_int64 = true, .float64 = true,
                                        .push_descriptor = true};
  res.dev = &dev;
  return 0;
}

/* ---- a user sequence type whose device code is a snippet ---- */

typedef struct user_code {
  const char *load, *store;
  const vkds_seq *part;
} user_code;

static bool user_direct(const vkds_seq *s, const vkds_resource *r) { return (void)s, (void)r, true; }
static vkds_result user_device_code(const vkds_seq *s, const vkds_resource *r, vkds_seq_device_code *out) {
  (void)r;
  const user_code *u = s->user;
  *out = (vkds_seq_device_code){.load = u->load, .store = u->store, .part_count = 1, .parts = {u->part},
                                .param_count = 1, .params = {s->count}};
  return VKDS_SUCCESS;
}
static const vkds_seq_ops user_ops = {.version = VKDS_SEQ_OPS_VERSION, .name = "fuzz_user",
                                      .is_passed_directly = user_direct, .device_code = user_device_code};

/* ---- the families ---- */

enum family {
  TRANSFORM,        /* vkds_transform: x */
  TRANSFORM2,       /* vkds_transform2: a, b */
  REDUCE_GLSL,      /* vkds_reduce with VKDS_OP_GLSL: a, b and an identity */
  COUNT_IF,         /* a predicate of x */
  NONE_OF,          /* its negation */
  MERGE_SORT,       /* vkds_sort_by: a comparator of a, b */
  TRANSFORM_VIEW,   /* vkds_copy from a vkds_seq_transform view: its operator of x */
  SCAN_GLSL,        /* vkds_inclusive_scan with VKDS_OP_GLSL */
  COPY_IF,          /* compaction by a predicate */
  USER_LOAD,        /* vkds_copy from a user type: its load (and store) code */
  USER_STORE,       /* vkds_copy into a user type: its store code */
  TRANSFORM_REDUCE, /* vkds_transform_reduce: a transform, an operator and an identity */
  FAMILIES
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 3) return 0;
  enum family fam = (enum family)(data[0] % FAMILIES);
  vkds_type type = (vkds_type)(VKDS_I32 + data[1] % 6);
  uint8_t flags = data[2];
  /* the snippets: NUL-separated */
  char *text = malloc(size - 3 + 1);
  if (!text) return 0;
  memcpy(text, data + 3, size - 3);
  text[size - 3] = '\0';
  const char *snip[3] = {"", "", ""};
  size_t at = 0;
  for (int k = 0; k < 3 && at <= size - 3; ++k) {
    snip[k] = text + at;
    at += strlen(text + at) + 1;
  }

  dev.facts.props.properties.deviceType = flags & 1 ? VK_PHYSICAL_DEVICE_TYPE_CPU : VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU;
  dev.facts.prefers_descriptors = flags & 2;
  uint64_t count = flags & 4 ? 1000 : 1024;
  if (flags & 8) count = (1ull << 31) + 5; /* 64-bit indices */

  static unsigned char host[2][64];
  vkds_seq in1 = vkds_seq_host(host[0], count, type), in2 = vkds_seq_host(host[1], count, type);
  vkds_seq out = vkds_seq_host(host[1], count, type);
  vkds_seq parts[2] = {in1, vkds_seq_host(host[1], count, VKDS_I32 + (flags >> 4) % 6)};
  vkds_seq zip = vkds_seq_zip(parts, 2);
  const vkds_seq *input = flags & 16 && (fam == TRANSFORM || fam == COUNT_IF || fam == COPY_IF) ? &zip : &in1;
  vkds_transform_op view_op = {.glsl = snip[0], .type = flags & 32 ? VKDS_F32 : VKDS_TYPE_BYTES};
  vkds_seq view = vkds_seq_transform(&in1, &view_op);
  user_code uc = {.load = snip[0], .store = snip[1][0] ? snip[1] : NULL, .part = &in2};
  vkds_seq user = {.ops = &user_ops, .count = count, .type = type, .elem_size = vkds_type_size(type), .user = &uc};
  vkds_op op = {.kind = VKDS_OP_GLSL, .glsl = snip[0], .identity = snip[1]};

  vkds__alg a = {.name = "fuzz", .count = count, .elem_type = type, .combine = VKDS__COMBINE_OP,
                 .op = {.kind = VKDS_OP_PLUS}, .input_count = 1, .inputs = {input}, .output = &out};
  switch (fam) {
  case TRANSFORM: case TRANSFORM2:
    a.template_kind = VKDS__TEMPLATE_MAP, a.elem = VKDS__ELEM_GLSL, a.glsl = snip[0];
    if (fam == TRANSFORM2) a.inputs[a.input_count++] = &in2;
    break;
  case REDUCE_GLSL: case TRANSFORM_REDUCE:
    a.template_kind = VKDS__TEMPLATE_REDUCE, a.elem = VKDS__ELEM_COPY, a.result = VKDS__RESULT_VALUE, a.output = NULL;
    if (fam == TRANSFORM_REDUCE) {
      a.elem = VKDS__ELEM_GLSL, a.glsl = snip[0];
      op = (vkds_op){.kind = VKDS_OP_GLSL, .glsl = snip[1], .identity = snip[2]};
    }
    a.op = op;
    break;
  case COUNT_IF: case NONE_OF:
    a.template_kind = VKDS__TEMPLATE_REDUCE, a.elem = fam == COUNT_IF ? VKDS__ELEM_PRED : VKDS__ELEM_NOT_PRED;
    a.glsl = snip[0], a.output = NULL;
    a.elem_type = fam == COUNT_IF ? VKDS_U64 : VKDS_U32;
    a.op.kind = fam == COUNT_IF ? VKDS_OP_PLUS : VKDS_OP_BIT_AND;
    a.result = fam == COUNT_IF ? VKDS__RESULT_COUNT : VKDS__RESULT_BOOL;
    break;
  case MERGE_SORT:
    a.template_kind = VKDS__TEMPLATE_MSORT, a.elem = VKDS__ELEM_GLSL, a.glsl = snip[0], a.output = NULL;
    break;
  case TRANSFORM_VIEW:
    a.template_kind = VKDS__TEMPLATE_MAP, a.elem = VKDS__ELEM_COPY, a.inputs[0] = &view;
    break;
  case SCAN_GLSL:
    a.template_kind = VKDS__TEMPLATE_SCAN, a.elem = VKDS__ELEM_COPY, a.op = op, a.exclusive = flags & 32;
    a.variant = flags & 64 ? VKDS_SCAN_PATH_SINGLE : VKDS_SCAN_PATH_PORTABLE;
    break;
  case COPY_IF:
    a.template_kind = VKDS__TEMPLATE_SCAN, a.elem = VKDS__ELEM_PRED, a.glsl = snip[0], a.elem_type = VKDS_U32;
    a.result = VKDS__RESULT_COUNT;
    a.variant = flags & 64 ? VKDS_SCAN_PATH_SINGLE : VKDS_SCAN_PATH_PORTABLE;
    break;
  case USER_LOAD:
    a.template_kind = VKDS__TEMPLATE_MAP, a.elem = VKDS__ELEM_COPY, a.inputs[0] = &user;
    break;
  case USER_STORE:
    uc.store = snip[0], uc.load = snip[1];
    a.template_kind = VKDS__TEMPLATE_MAP, a.elem = VKDS__ELEM_COPY, a.output = &user;
    break;
  default: abort();
  }

  /* what an algorithm call does to find its kernel (lib/algorithm/frame.c: prepare,
   * find_kernel): the signature, then on a miss the source and its compile */
  vkds__gen g;
  vkds_result r = vkds__gen_build(&g, &a, &res, false, 0);
  if (r == VKDS_SUCCESS) {
    vkds__gen_aligned(&g, 0);
    vkds_kernel *k = NULL;
    bool range64 = count / 4 > UINT32_MAX;
    r = vkds__alg_kernel(&ctx, &g, &a, range64, &k);
  }
  vkds__gen_free(&g);
#ifdef FUZZ_VERBOSE /* scripts/fuzz.sh builds without; for looking at what seeds do */
  fprintf(stderr, "family %d: %d %s\n", (int)fam, (int)r, r ? vkds_last_error_message() : "");
#endif
  switch (r) {
  case VKDS_SUCCESS: break;
  case VKDS_ERROR_COMPILE:
    if (!strstr(vkds_last_error_message(), "fuzz")) {
      fprintf(stderr, "fuzz_operator: a compile error that does not name the algorithm: %s\n", vkds_last_error_message());
      abort();
    }
    break;
  case VKDS_ERROR_INVALID_SPIRV: case VKDS_ERROR_ARGUMENT_MISMATCH: case VKDS_ERROR_INVALID_ARGUMENT:
  case VKDS_ERROR_UNSUPPORTED: case VKDS_ERROR_LIMIT_EXCEEDED: case VKDS_ERROR_OUT_OF_HOST_MEMORY:
    if (!vkds_last_error_message()[0]) abort();
    break;
  default:
    fprintf(stderr, "fuzz_operator: outcome %d (%s) is not a named outcome of an operator\n", (int)r,
            vkds_last_error_message());
    abort();
  }
  /* nothing kept between inputs: the kernel cache and the GLSL cache */
  vkds__algorithm_state_free(&ctx);
  vkds__glsl_cache_free(&ctx);
  free(text);
  return 0;
}
