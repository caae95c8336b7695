/* lib/kernel/kernel.c: kernels from SPIR-V or GLSL (their argument description checked
 * against the reflected interface by lib/kernel/args.c), and their pipelines per device. */
#include "kernel_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the argument description ---- */

static size_t arg_list_length(const vkds_arg *a) {
  size_t n = 0;
  while (a && a[n].kind != VKDS_ARG_END) ++n;
  return n;
}

/* A deep copy (members too), so callers may describe arguments on the stack. */
static void arg_list_free(const vkds_context *ctx, vkds_arg *a);

static vkds_arg *arg_list_copy(const vkds_context *ctx, const vkds_arg *src) {
  size_t n = arg_list_length(src);
  vkds_arg *dst = vkds__alloc_array(ctx, n + 1, sizeof *dst);
  if (!dst) return NULL;
  for (size_t i = 0; i < n; ++i) {
    dst[i] = src[i];
    dst[i].name = NULL; /* names are only for messages: not kept, not dangling */
    if (src[i].kind == VKDS_ARG_STRUCT) {
      dst[i].members = src[i].members ? arg_list_copy(ctx, src[i].members) : NULL;
      if (src[i].members && !dst[i].members) {
        dst[i].kind = VKDS_ARG_END; /* so the free below stops here */
        arg_list_free(ctx, dst);
        return NULL;
      }
    }
  }
  return dst;
}

static void arg_list_free(const vkds_context *ctx, vkds_arg *a) {
  for (size_t i = 0; a && a[i].kind != VKDS_ARG_END; ++i)
    if (a[i].kind == VKDS_ARG_STRUCT) arg_list_free(ctx, (vkds_arg *)a[i].members);
  vkds__free(ctx, a);
}

/* ---- creation ---- */

uint64_t vkds__hash(const void *data, size_t n) {
  const unsigned char *p = data;
  uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

static vkds_result kernel_make(vkds_context *ctx, const uint32_t *words, size_t word_count, const char *entry,
                               const vkds_arg *args, vkds_range_type range, const char *name, vkds_kernel **out) {
  if ((unsigned)range > VKDS_RANGE_U64)
    return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "kernel: unknown range type %d", (int)range);
  VKDS_CHECK(vkds__spirv_validate(ctx, words, word_count, ctx->api_version));
  vkds_kernel *k = vkds__alloc(ctx, sizeof *k);
  if (!k) return vkds__fail(ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "kernel");
  k->ctx = ctx;
  pthread_mutex_lock(&ctx->kernels_lock);
  k->next_live = ctx->live_kernels;
  if (k->next_live) k->next_live->prev_live = k;
  ctx->live_kernels = k;
  pthread_mutex_unlock(&ctx->kernels_lock);
  snprintf(k->name, sizeof k->name, "%s", name ? name : "kernel");
  k->range = range ? range : VKDS_RANGE_U32;
  k->hash = vkds__hash(words, word_count * 4);
  pthread_mutex_init(&k->lock, NULL);
  k->words = vkds__alloc_array(ctx, word_count, 4);
  k->pipelines = vkds__alloc_array(ctx, ctx->device_count, sizeof *k->pipelines);
  k->args = args ? arg_list_copy(ctx, args) : NULL;
  vkds_result r = VKDS_SUCCESS;
  if (!k->words || !k->pipelines || (args && !k->args))
    r = vkds__fail(ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "kernel");
  if (r == VKDS_SUCCESS) {
    memcpy(k->words, words, word_count * 4);
    k->word_count = word_count;
    r = vkds__spirv_reflect(ctx, words, word_count, entry, &k->refl);
  }
  /* (a local size of 0, which spirv-val lets by, divided by zero at the first launch; a probe) */
  for (int d = 0; r == VKDS_SUCCESS && d < 3; ++d)
    if (k->refl.local_size[d] == 0)
      r = vkds__fail(ctx, VKDS_ERROR_INVALID_SPIRV, VK_SUCCESS,
                     "kernel '%s': the entry point's local size is 0 in dimension %d (%s); a work group has at least "
                     "one invocation each way", k->name, d,
                     k->refl.local_size_spec_id[d] != UINT32_MAX ? "a specialization constant's default" : "LocalSize");
  if (r == VKDS_SUCCESS) {
    vkds__args_layout(&k->refl, &k->layout);
    /* the caller's description, not the copy: its names are for these messages */
    r = vkds__args_check(ctx, k->name, &k->refl, &k->layout, args);
  }
  if (r != VKDS_SUCCESS) {
    vkds_kernel_destroy(k);
    return r;
  }
  *out = k;
  return VKDS_SUCCESS;
}

vkds_result vkds_kernel_create(vkds_context *ctx, const vkds_kernel_info *info, vkds_kernel **out) {
  if (out) *out = NULL;
  if (!ctx || !info || !out || !info->spirv)
    return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "vkds_kernel_create: ctx, info, info->spirv and out are required");
  if (info->spirv_size == 0 || info->spirv_size % 4)
    return vkds__fail(ctx, VKDS_ERROR_INVALID_SPIRV, VK_SUCCESS, "vkds_kernel_create: %zu bytes is not a SPIR-V module",
                      info->spirv_size);
  return kernel_make(ctx, info->spirv, info->spirv_size / 4, info->entry, info->args, info->range_type, info->name, out);
}

/* ---- the context's GLSL cache ---- */

struct vkds__glsl_entry {
  struct vkds__glsl_entry *next;
  uint64_t hash;
  char *key;
  uint32_t *words;
  size_t word_count;
};

uint32_t vkds__glsl_api_version(const vkds_context *ctx) {
  uint32_t v = ctx->api_version;
  for (uint32_t d = 0; d < ctx->device_count && v >= VK_API_VERSION_1_3; ++d) {
    const vkds__device *dev = &ctx->devices[d];
    if (dev->device && (dev->facts.props.properties.apiVersion < VK_API_VERSION_1_3 || !dev->enabled.maintenance4))
      v = VK_API_VERSION_1_2;
  }
  return v;
}

uint64_t vkds__glsl_header_hash(void) {
  static _Atomic uint64_t known; /* (computed once; a race computes the same value twice) */
  uint64_t h = atomic_load_explicit(&known, memory_order_relaxed);
  if (!h) {
    const char *text = vkds__glsl_header_text();
    h = vkds__hash(text, strlen(text)) | 1;
    atomic_store_explicit(&known, h, memory_order_relaxed);
  }
  return h;
}

/* The cache key: everything that changes the SPIR-V, one string. */
static char *glsl_key(const vkds_context *ctx, const vkds_glsl_info *info, uint32_t api_version) {
  size_t n = strlen(info->source) + 128;
  for (uint32_t i = 0; i < info->define_count; ++i) n += strlen(info->defines[i] ? info->defines[i] : "") + 1;
  char *key = vkds__alloc(ctx, n);
  if (!key) return NULL;
  /* the vkds (and so glslang) and the vkds.glsl that compile it: a folder written by
   * another version ran that version's vkds.glsl here (a probe) */
  int used = snprintf(key, n, "%s|%016llx|%u|%d|", vkds_version(), (unsigned long long)vkds__glsl_header_hash(),
                      api_version, info->debug ? 1 : 0);
  for (uint32_t i = 0; i < info->define_count; ++i)
    used += snprintf(key + used, n - (size_t)used, "%s\n", info->defines[i] ? info->defines[i] : "");
  snprintf(key + used, n - (size_t)used, "|%s", info->source);
  return key;
}

/* The cache's entry for (hash, key), counted as a hit; NULL when there is none. */
static struct vkds__glsl_entry *glsl_lookup(vkds_context *ctx, uint64_t hash, const char *key) {
  pthread_mutex_lock(&ctx->glsl_lock);
  struct vkds__glsl_entry *e = ctx->glsl_cache;
  while (e && (e->hash != hash || strcmp(e->key, key) != 0)) e = e->next;
  if (e) ++ctx->glsl_hits;
  pthread_mutex_unlock(&ctx->glsl_lock);
  return e;
}

static vkds_result glsl_compile_and_keep(vkds_context *ctx, const vkds_glsl_info *info, const char **defines,
                                         uint32_t nd, uint32_t api_version, uint64_t hash, char *key,
                                         const struct vkds__glsl_entry **out);

/* The SPIR-V for `info` (plus `extra`, a define, when not NULL), from the context's
 * cache or compiled into it. Entries live until the context goes, so no copy. */
static vkds_result glsl_module(vkds_context *ctx, const vkds_glsl_info *info, const char *extra,
                               const struct vkds__glsl_entry **out) {
  const char *defines[66];
  uint32_t nd = info->define_count;
  if (nd > 64) return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "vkds_kernel_from_glsl: more than 64 defines");
  for (uint32_t i = 0; i < nd; ++i) defines[i] = info->defines[i];
  if (info->debug) defines[nd++] = "VKDS_DEBUG";
  if (extra) defines[nd++] = extra;
  vkds_glsl_info keyed = *info;
  keyed.defines = defines;
  keyed.define_count = nd;
  keyed.debug = false; /* already among the defines */
  uint32_t api_version = vkds__glsl_api_version(ctx);
  char *key = glsl_key(ctx, &keyed, api_version);
  if (!key) return vkds__fail(ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "GLSL cache key");
  uint64_t hash = vkds__hash(key, strlen(key));
  struct vkds__glsl_entry *e = glsl_lookup(ctx, hash, key);
  if (e) {
    vkds__free(ctx, key);
    *out = e;
    return VKDS_SUCCESS;
  }
  /* A miss compiles under the context's compile lock, outside the cache lock: threads
   * asking for the same source at once wait for the first one's result and compile
   * nothing (each compiled it, and each copy stayed cached until the context went: a
   * probe, 8 compiles for 8 threads). glslang is serialized in lib/kernel/glsl.c
   * anyway, so the lock costs no parallelism. */
  pthread_mutex_lock(&ctx->glsl_compile_lock);
  if ((e = glsl_lookup(ctx, hash, key))) {
    pthread_mutex_unlock(&ctx->glsl_compile_lock);
    vkds__free(ctx, key);
    *out = e;
    return VKDS_SUCCESS;
  }
  vkds_result r = glsl_compile_and_keep(ctx, info, defines, nd, api_version, hash, key, out);
  pthread_mutex_unlock(&ctx->glsl_compile_lock);
  return r;
}

/* The rest of glsl_module's miss, under the compile lock: the source compiled (or loaded
 * from pipeline_cache_dir) and put in the cache, which takes `key`. */
static vkds_result glsl_compile_and_keep(vkds_context *ctx, const vkds_glsl_info *info, const char **defines,
                                         uint32_t nd, uint32_t api_version, uint64_t hash, char *key,
                                         const struct vkds__glsl_entry **out) {
  struct vkds__glsl_entry *fresh = vkds__alloc(ctx, sizeof *fresh);
  if (!fresh) {
    vkds__free(ctx, key);
    return vkds__fail(ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "GLSL cache entry");
  }
  /* compiled by an earlier process into pipeline_cache_dir? */
  bool from_disk = vkds__spirv_cache_load(ctx, hash, key, &fresh->words, &fresh->word_count);
  if (!from_disk) {
    vkds_result r = vkds__glsl_compile(ctx, info->source, info->name, defines, nd, api_version, &fresh->words,
                                       &fresh->word_count);
    if (r != VKDS_SUCCESS) {
      vkds__free(ctx, fresh);
      vkds__free(ctx, key);
      return r;
    }
    vkds__spirv_cache_store(ctx, hash, key, fresh->words, fresh->word_count);
  }
  fresh->hash = hash;
  fresh->key = key;
  pthread_mutex_lock(&ctx->glsl_lock);
  if (from_disk) ++ctx->glsl_hits;
  else ++ctx->glsl_compiles;
  fresh->next = ctx->glsl_cache;
  ctx->glsl_cache = fresh;
  pthread_mutex_unlock(&ctx->glsl_lock);
  *out = fresh;
  return VKDS_SUCCESS;
}

/* The smallest maxPushConstantsSize among the context's devices, and at most what a
 * launch packs (VKDS__MAX_PUSH): a device offering 512 bytes kept a 300-byte argument
 * block in push constants, and every launch then failed with LIMIT_EXCEEDED (a
 * new-user probe). */
static uint32_t min_push_size(const vkds_context *ctx) {
  uint32_t least = VKDS__MAX_PUSH;
  for (uint32_t d = 0; d < ctx->device_count; ++d) {
    uint32_t n = ctx->devices[d].facts.props.properties.limits.maxPushConstantsSize;
    if (n < least) least = n;
  }
  return least;
}

vkds_result vkds_kernel_from_glsl(vkds_context *ctx, const vkds_glsl_info *info, vkds_kernel **out) {
  if (out) *out = NULL;
  if (!ctx || !info || !out || !info->source || (info->define_count && !info->defines))
    return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "vkds_kernel_from_glsl: ctx, info, info->source and out are required (and info->defines "
                      "when define_count is not 0)");
  const struct vkds__glsl_entry *e;
  VKDS_CHECK(glsl_module(ctx, info, NULL, &e));
  VKDS_CHECK(kernel_make(ctx, e->words, e->word_count, info->entry, info->args, info->range_type, info->name, out));
  vkds_kernel *k = *out;
  if (!k->refl.has_push || k->refl.push.size <= min_push_size(ctx) || !k->layout.first_member) return VKDS_SUCCESS;
  /* too many argument bytes for some device's push constants: the same source with the
   * arguments in a buffer (vkds.glsl's VKDS_SPILL), for every device of the context */
  vkds_kernel_destroy(k);
  *out = NULL;
  VKDS_CHECK(glsl_module(ctx, info, "VKDS_SPILL", &e));
  return kernel_make(ctx, e->words, e->word_count, info->entry, info->args, info->range_type, info->name, out);
}

void vkds__glsl_cache_free(vkds_context *ctx) {
  for (struct vkds__glsl_entry *e = ctx->glsl_cache, *next; e; e = next) {
    next = e->next;
    vkds__free(ctx, e->words);
    vkds__free(ctx, e->key);
    vkds__free(ctx, e);
  }
  ctx->glsl_cache = NULL;
}

void vkds_context_glsl_stats(const vkds_context *ctx, uint64_t *compiles, uint64_t *cache_hits) {
  uint64_t c = 0, h = 0;
  if (ctx) {
    pthread_mutex_lock((pthread_mutex_t *)&ctx->glsl_lock);
    c = ctx->glsl_compiles, h = ctx->glsl_hits;
    pthread_mutex_unlock((pthread_mutex_t *)&ctx->glsl_lock);
  }
  if (compiles) *compiles = c;
  if (cache_hits) *cache_hits = h;
}

/* ---- pipelines ---- */

static void name_object(vkds__device *dev, VkObjectType type, uint64_t handle, const char *name) {
  if (!dev->ctx->debug_utils || !dev->ctx->fn.SetDebugUtilsObjectNameEXT) return;
  VkDebugUtilsObjectNameInfoEXT ni = {.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT,
                                      .objectType = type, .objectHandle = handle, .pObjectName = name};
  dev->ctx->fn.SetDebugUtilsObjectNameEXT(dev->device, &ni);
}

/* VKDS_PIPELINE_STATS: one line per executable of the pipeline on stderr, every
 * statistic its driver reports ("vkds: pipeline NAME on DEVICE, EXECUTABLE: name=value,
 * ..."). A tuning aid: what registers, shared memory or spills a generated kernel costs
 * decides how many of its work groups a GPU keeps resident. */
static void print_statistics(const vkds__device *dev, VkPipeline pipeline, const char *name) {
  const struct VolkDeviceTable *vk = &dev->vk;
  VkPipelineInfoKHR pi = {.sType = VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR, .pipeline = pipeline};
  VkPipelineExecutablePropertiesKHR props[4];
  uint32_t n = 4;
  for (uint32_t i = 0; i < n; ++i) props[i] = (VkPipelineExecutablePropertiesKHR){
      .sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR};
  VkResult vr = vk->vkGetPipelineExecutablePropertiesKHR(dev->device, &pi, &n, props);
  if (vr != VK_SUCCESS && vr != VK_INCOMPLETE) return;
  for (uint32_t e = 0; e < n; ++e) {
    VkPipelineExecutableInfoKHR ei = {.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR, .pipeline = pipeline,
                                      .executableIndex = e};
    VkPipelineExecutableStatisticKHR st[32];
    uint32_t m = 32;
    for (uint32_t i = 0; i < m; ++i) st[i] = (VkPipelineExecutableStatisticKHR){
        .sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR};
    vr = vk->vkGetPipelineExecutableStatisticsKHR(dev->device, &ei, &m, st);
    if (vr != VK_SUCCESS && vr != VK_INCOMPLETE) continue;
    fprintf(stderr, "vkds: pipeline %s on %s, %s:", name, dev->facts.props.properties.deviceName, props[e].name);
    for (uint32_t i = 0; i < m; ++i) {
      const VkPipelineExecutableStatisticValueKHR *v = &st[i].value;
      switch (st[i].format) {
      case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR:
        fprintf(stderr, " %s=%s", st[i].name, v->b32 ? "yes" : "no");
        break;
      case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR:
        fprintf(stderr, " %s=%lld", st[i].name, (long long)v->i64);
        break;
      case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR:
        fprintf(stderr, " %s=%llu", st[i].name, (unsigned long long)v->u64);
        break;
      default: fprintf(stderr, " %s=%g", st[i].name, v->f64); break;
      }
      fputc(i + 1 < m ? ',' : '\n', stderr);
    }
    if (m == 0) fputc('\n', stderr);
  }
}

/* A capability of the kernel's module whose feature the device does not have enabled,
 * by the names a GLSL writer knows it under; NULL when none (or the device's features are
 * the application's: an adopted device). Making the pipeline anyway is undefined
 * behaviour: the validation layer reports it, a driver may fail or crash. */
static const char *missing_feature(const vkds__reflection *r, const vkds__device *dev) {
  static const struct { uint32_t cap; const char *what; } names[] = {
      {VKDS__CAP_FLOAT16, "16-bit floats (shaderFloat16)"},
      {VKDS__CAP_FLOAT64, "64-bit floats (shaderFloat64)"},
      {VKDS__CAP_INT64, "64-bit integers (shaderInt64)"},
      {VKDS__CAP_INT64_ATOMICS, "64-bit atomics (shaderBufferInt64Atomics)"},
      {VKDS__CAP_INT16, "16-bit integers (shaderInt16)"},
      {VKDS__CAP_INT8, "8-bit integers (shaderInt8)"},
      {VKDS__CAP_STORAGE16, "16-bit values in storage buffers (storageBuffer16BitAccess)"},
      {VKDS__CAP_UNIFORM_STORAGE16, "16-bit values in uniform buffers (uniformAndStorageBuffer16BitAccess)"},
      {VKDS__CAP_PUSH16, "16-bit arguments (storagePushConstant16)"},
      {VKDS__CAP_STORAGE8, "8-bit values in storage buffers (storageBuffer8BitAccess)"},
      {VKDS__CAP_UNIFORM_STORAGE8, "8-bit values in uniform buffers (uniformAndStorageBuffer8BitAccess)"},
      {VKDS__CAP_PUSH8, "8-bit arguments (storagePushConstant8)"},
      {VKDS__CAP_BUFFER_ADDRESS, "buffer device addresses (bufferDeviceAddress)"},
      {VKDS__CAP_MEMORY_MODEL, "the Vulkan memory model (vulkanMemoryModel)"},
      {VKDS__CAP_MEMORY_MODEL_DEVICE, "device scope in the memory model (vulkanMemoryModelDeviceScope)"},
  };
  uint32_t missing = r->caps & dev->enabled.caps_known & ~dev->enabled.caps;
  for (size_t i = 0; missing && i < sizeof names / sizeof names[0]; ++i)
    if (missing & names[i].cap) return names[i].what;
  return NULL;
}

static vkds_result make_pipeline(vkds_kernel *k, vkds__device *dev, vkds__pipeline *p) {
  const vkds_context *ctx = k->ctx;
  const VkPhysicalDeviceLimits *lim = &dev->facts.props.properties.limits;
  const vkds__reflection *r = &k->refl;
  uint64_t invocations = (uint64_t)r->local_size[0] * r->local_size[1] * r->local_size[2];
  for (int d = 0; d < 3; ++d)
    if (r->local_size[d] > lim->maxComputeWorkGroupSize[d])
      return vkds__fail(ctx, VKDS_ERROR_LIMIT_EXCEEDED, VK_SUCCESS,
                        "kernel '%s': local size %u in dimension %d exceeds %s's limit %u", k->name, r->local_size[d], d,
                        dev->facts.props.properties.deviceName, lim->maxComputeWorkGroupSize[d]);
  if (invocations > lim->maxComputeWorkGroupInvocations)
    return vkds__fail(ctx, VKDS_ERROR_LIMIT_EXCEEDED, VK_SUCCESS,
                      "kernel '%s': %llu invocations per work group exceed %s's limit %u", k->name,
                      (unsigned long long)invocations, dev->facts.props.properties.deviceName,
                      lim->maxComputeWorkGroupInvocations);
  if (r->shared_bytes > lim->maxComputeSharedMemorySize)
    return vkds__fail(ctx, VKDS_ERROR_LIMIT_EXCEEDED, VK_SUCCESS,
                      "kernel '%s': its shared variables take at least %llu bytes, over %s's limit of %u", k->name,
                      (unsigned long long)r->shared_bytes, dev->facts.props.properties.deviceName,
                      lim->maxComputeSharedMemorySize);
  const char *feature = missing_feature(r, dev);
  if (feature)
    return vkds__fail(ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS, "kernel '%s' uses %s, which %s does not have enabled",
                      k->name, feature, dev->facts.props.properties.deviceName);
  uint32_t push_size = r->has_push ? r->push.size : 0;
  if (push_size > lim->maxPushConstantsSize)
    return vkds__fail(ctx, VKDS_ERROR_LIMIT_EXCEEDED, VK_SUCCESS,
                      "kernel '%s': %u bytes of arguments exceed %s's %u bytes of push constants (GLSL kernels can "
                      "be compiled with VKDS_SPILL)", k->name, push_size, dev->facts.props.properties.deviceName,
                      lim->maxPushConstantsSize);
  VkDescriptorSetLayoutBinding bindings[32];
  uint32_t nb = 0;
  /* (every binding is in set 0: vkds__args_check refused the kernel at its creation
   * otherwise) */
  for (uint32_t i = 0; i < r->binding_count; ++i) {
    if (nb == 32) /* (the message said set 0 was the matter; a probe) */
      return vkds__fail(ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS,
                        "kernel '%s': %u bindings in set 0; vkds binds at most 32 (pass further buffers as views)",
                        k->name, r->binding_count);
    bindings[nb++] = (VkDescriptorSetLayoutBinding){.binding = r->bindings[i].binding,
                                                     .descriptorType = r->bindings[i].type,
                                                     .descriptorCount = r->bindings[i].count,
                                                     .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
  }
  if (nb && !dev->enabled.push_descriptor)
    return vkds__fail(ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS,
                      "kernel '%s' has descriptor bindings, which need VK_KHR_push_descriptor on %s; pass buffers as "
                      "views (device addresses) instead", k->name, dev->facts.props.properties.deviceName);
  const struct VolkDeviceTable *vk = &dev->vk;
  VkResult vr;
  VkShaderModuleCreateInfo mci = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                  .codeSize = k->word_count * 4, .pCode = k->words};
  /* a failed call leaves its output undefined (Vulkan's rule): each handle is cleared, since
   * pipeline_free destroys the ones that are set */
  if ((vr = vk->vkCreateShaderModule(dev->device, &mci, vkds__vk_allocator(ctx), &p->module)) != VK_SUCCESS)
    return p->module = VK_NULL_HANDLE, vkds__vk_fail(ctx, vr, "vkCreateShaderModule");
  VkDescriptorSetLayoutCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                         .flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR,
                                         .bindingCount = nb, .pBindings = bindings};
  if (nb && (vr = vk->vkCreateDescriptorSetLayout(dev->device, &dci, vkds__vk_allocator(ctx), &p->set_layout)) != VK_SUCCESS)
    return p->set_layout = VK_NULL_HANDLE, vkds__vk_fail(ctx, vr, "vkCreateDescriptorSetLayout");
  VkPushConstantRange pcr = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .size = push_size};
  VkPipelineLayoutCreateInfo lci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                    .setLayoutCount = nb ? 1 : 0, .pSetLayouts = &p->set_layout,
                                    .pushConstantRangeCount = push_size ? 1 : 0, .pPushConstantRanges = &pcr};
  if ((vr = vk->vkCreatePipelineLayout(dev->device, &lci, vkds__vk_allocator(ctx), &p->layout)) != VK_SUCCESS)
    return p->layout = VK_NULL_HANDLE, vkds__vk_fail(ctx, vr, "vkCreatePipelineLayout");
  /* the range type reaches the shader through vkds.glsl's vkds_range64; the kernel's own
   * constants are left alone */
  uint32_t range64 = k->range == VKDS_RANGE_U64;
  bool has_range_constant = false;
  for (uint32_t i = 0; i < r->spec_count; ++i) has_range_constant |= r->specs[i].id == VKDS__RANGE_CONSTANT_ID;
  VkSpecializationMapEntry entry = {.constantID = VKDS__RANGE_CONSTANT_ID, .offset = 0, .size = 4};
  VkSpecializationInfo spec = {.mapEntryCount = 1, .pMapEntries = &entry, .dataSize = 4, .pData = &range64};
  if (k->subgroup_size && k->subgroup_size != vkds__device_required_subgroup_size(dev))
    return vkds__fail(ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS, "kernel '%s' needs subgroups of %u lanes, which %s cannot "
                      "require", k->name, k->subgroup_size, dev->facts.props.properties.deviceName);
  VkPipelineShaderStageRequiredSubgroupSizeCreateInfo size = {
      .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO,
      .requiredSubgroupSize = k->subgroup_size};
  VkComputePipelineCreateInfo cpci = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, .pNext = k->subgroup_size ? &size : NULL,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = p->module, .pName = r->entry, .pSpecializationInfo = has_range_constant ? &spec : NULL},
      .layout = p->layout};
  if (dev->enabled.pipeline_stats) cpci.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
  if ((vr = vk->vkCreateComputePipelines(dev->device, dev->pipeline_cache, 1, &cpci, vkds__vk_allocator(ctx), &p->pipeline)) != VK_SUCCESS)
    return p->pipeline = VK_NULL_HANDLE, vkds__vk_fail(ctx, vr, "vkCreateComputePipelines");
  if (dev->enabled.pipeline_stats) print_statistics(dev, p->pipeline, k->name);
  name_object(dev, VK_OBJECT_TYPE_PIPELINE, (uint64_t)(uintptr_t)p->pipeline, k->name);
  name_object(dev, VK_OBJECT_TYPE_SHADER_MODULE, (uint64_t)(uintptr_t)p->module, k->name);
  return VKDS_SUCCESS;
}

static void pipeline_free(vkds__device *dev, vkds__pipeline *p) {
  const VkAllocationCallbacks *a = vkds__vk_allocator(dev->ctx);
  if (p->pipeline) dev->vk.vkDestroyPipeline(dev->device, p->pipeline, a);
  if (p->layout) dev->vk.vkDestroyPipelineLayout(dev->device, p->layout, a);
  if (p->set_layout) dev->vk.vkDestroyDescriptorSetLayout(dev->device, p->set_layout, a);
  if (p->module) dev->vk.vkDestroyShaderModule(dev->device, p->module, a);
  vkds__free(dev->ctx, p->why);
  *p = (vkds__pipeline){0};
}

vkds_result vkds__kernel_pipeline(vkds_kernel *k, vkds__device *dev, const vkds__pipeline **out) {
  vkds__pipeline *p = &k->pipelines[dev->index];
  if (atomic_load_explicit(&p->ready, memory_order_acquire)) { /* every launch after the first */
    *out = p;
    return VKDS_SUCCESS;
  }
  pthread_mutex_lock(&k->lock);
  if (!p->tried) {
    /* its failure is told once, by the message below, which carries its reason (it was
     * logged twice: as itself, then as the launch's) */
    bool held = vkds__hold_failure_logs(true);
    vkds_result made = make_pipeline(k, dev, p);
    vkds__hold_failure_logs(held);
    if (made != VKDS_SUCCESS) {
      pipeline_free(dev, p); /* (clears *p) */
      /* kept for later launches' messages, which would otherwise point at this one: the
       * reason only, without the result and kernel name the message around it repeats */
      const char *m = vkds__last_reason(made);
      char named[80];
      int len = snprintf(named, sizeof named, "kernel '%s'", k->name);
      if (len > 0 && strncmp(m, named, (size_t)len) == 0 && (m[len] == ':' || m[len] == ' '))
        m += len + (m[len] == ':' ? 2 : 1);
      if ((p->why = vkds__alloc(k->ctx, strlen(m) + 1))) memcpy(p->why, m, strlen(m) + 1);
    }
    p->result = made;
    /* running out of memory passes: the next launch tries again (a kernel of the
     * algorithm layer's cache would otherwise fail for the context's whole life) */
    p->tried = made != VKDS_ERROR_OUT_OF_HOST_MEMORY && made != VKDS_ERROR_OUT_OF_DEVICE_MEMORY;
    atomic_store_explicit(&p->ready, made == VKDS_SUCCESS, memory_order_release);
  }
  vkds_result r = p->result;
  pthread_mutex_unlock(&k->lock);
  if (r != VKDS_SUCCESS)
    return vkds__fail(k->ctx, r, VK_SUCCESS, "kernel '%s' cannot run on %s: %s", k->name,
                      dev->facts.props.properties.deviceName, p->why ? p->why : "see the first error");
  *out = p;
  return VKDS_SUCCESS;
}

void vkds_kernel_destroy(vkds_kernel *k) {
  if (!k) return;
  for (uint32_t d = 0; k->pipelines && d < k->ctx->device_count; ++d) pipeline_free(&k->ctx->devices[d], &k->pipelines[d]);
  const vkds_context *ctx = k->ctx;
  vkds__free(ctx, k->pipelines);
  vkds__reflection_free(&k->refl);
  arg_list_free(ctx, k->args);
  vkds__free(ctx, k->words);
  pthread_mutex_destroy(&k->lock);
  pthread_mutex_lock(&k->ctx->kernels_lock);
  if (k->prev_live) k->prev_live->next_live = k->next_live;
  else k->ctx->live_kernels = k->next_live;
  if (k->next_live) k->next_live->prev_live = k->prev_live;
  pthread_mutex_unlock(&k->ctx->kernels_lock);
  vkds__free(ctx, k);
}

vkds_result vkds_kernel_reflect(const vkds_kernel *k, vkds_kernel_reflection *out) {
  if (!k || !out) return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "vkds_kernel_reflect: NULL argument");
  *out = (vkds_kernel_reflection){.local_size = {k->refl.local_size[0], k->refl.local_size[1], k->refl.local_size[2]},
                                  .push_constant_size = k->refl.has_push ? k->refl.push.size : 0,
                                  .binding_count = k->refl.binding_count,
                                  .uses_vkds_header = k->layout.first_member == 1};
  return VKDS_SUCCESS;
}
