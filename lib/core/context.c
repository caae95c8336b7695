/* lib/core/context.c: creating and destroying a context, over vkds's own Vulkan objects or
 * over the application's (embedding). */
#include "kernel/kernel_internal.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The scan path the context forces on its devices: the info's, else VKDS_SCAN_PATH's
 * ("single", "portable"; unset or empty: none), else DEFAULT (each device's rule, in
 * lib/algorithm/scan.c). A value vkds does not know is the caller's error, as a typo
 * in VKDS_DEVICES is. */
static vkds_result resolve_scan_path(vkds_context *ctx, const vkds_context_info *info) {
  if ((unsigned)info->scan_path > VKDS_SCAN_PATH_PORTABLE)
    return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "vkds_context_create: unknown scan_path %d",
                      (int)info->scan_path);
  ctx->scan_path = info->scan_path;
  const char *v = info->ignore_env ? NULL : vkds__getenv("VKDS_SCAN_PATH");
  if (ctx->scan_path != VKDS_SCAN_PATH_DEFAULT || !v || !*v) return VKDS_SUCCESS;
  if (strcmp(v, "single") == 0) ctx->scan_path = VKDS_SCAN_PATH_SINGLE;
  else if (strcmp(v, "portable") == 0) ctx->scan_path = VKDS_SCAN_PATH_PORTABLE;
  else
    return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "VKDS_SCAN_PATH=\"%s\": the values are \"single\" and \"portable\"", v);
  return VKDS_SUCCESS;
}

/* How often a policy has its backend's due reports delivered before a selection
 * (lib/backend/policy.c, lazy_report_due). Delivering them reads the timeline of every
 * busy queue the policy covers, a driver call each (24 queues on an H100): before this,
 * every selection did. Over an H100's queues with 16 threads sending tiny tasks, once
 * in 20 us cut the host time spent before each task under earliest finish by about a
 * third (52-80 -> 35-62 us summed over the threads) and made replayed tasks by dynamic
 * load ~4% faster; the other rows did not move, being bound by the GPU
 * (bench/RESULTS.md, session 19). 20 us: a finished task is counted within
 * about one tiny task's round trip, and vkds_submit's retries at capacity are 20 us
 * apart as well; waits deliver their own queue's reports at once.
 * VKDS_LAZY_REPORT_NS=N overrides it (0: before every selection; measuring): digits
 * only, at most MAX_LAZY_REPORT_NS (a selection waiting at a capacity limit sees
 * completions no sooner: -5 read as ~2^64 stalled such policies until their submit
 * timeout; a probe); anything else gives the default. */
#define MAX_LAZY_REPORT_NS 100000000ull
static uint64_t lazy_report_ns(const vkds_context_info *info) {
  const char *v = info->ignore_env ? NULL : vkds__getenv("VKDS_LAZY_REPORT_NS");
  if (!v || *v < '0' || *v > '9') return 20000;
  char *end;
  errno = 0;
  unsigned long long n = strtoull(v, &end, 10);
  return *end || errno || n > MAX_LAZY_REPORT_NS ? 20000 : (uint64_t)n;
}

/* Counts of things vkds makes at creation, within reason: 100,000 devices a physical
 * device ran for minutes unrefused, and 2^32 - 1 host copy threads asked for 32 GiB of
 * thread state at the first upload (a probe). */
#define MAX_DEVICES_PER_PHYSICAL 64u
#define MAX_HOST_COPY_THREADS 256u
static vkds_result check_counts(vkds_context *ctx, const vkds_context_info *info) {
  if (info->devices_per_physical > MAX_DEVICES_PER_PHYSICAL)
    return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "vkds_context_create: devices_per_physical %u: at most %u",
                      info->devices_per_physical, MAX_DEVICES_PER_PHYSICAL);
  if (info->keep_bytes > (1ull << 40))
    return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "vkds_context_create: keep_bytes %llu: at most 2^40 (1 TiB)", (unsigned long long)info->keep_bytes);
  if (info->host_copy_threads > MAX_HOST_COPY_THREADS)
    return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "vkds_context_create: host_copy_threads %u: at most %u",
                      info->host_copy_threads, MAX_HOST_COPY_THREADS);
  return VKDS_SUCCESS;
}

/* The staging ring's shape within what vkds handles: a ring of bytes-sized chunks took
 * 70 times as long as the default for the same work, and sizes near 2^64 only failed at
 * the first transfer, with a wrapped byte count in the message (context.h's limits). */
static vkds_result check_staging(vkds_context *ctx) {
  if (ctx->staging_chunks > 64)
    return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "vkds_context_create: staging_chunks %u: at most 64", ctx->staging_chunks);
  if (ctx->staging_chunk_bytes < 4096 || ctx->staging_chunk_bytes > (1ull << 30))
    return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "vkds_context_create: staging_chunk_bytes %llu: from 4096 (4 KiB) to 1073741824 (1 GiB)",
                      (unsigned long long)ctx->staging_chunk_bytes);
  return VKDS_SUCCESS;
}

/* Adds resources for `count` queues of `family` on `dev`. */
static vkds_result add_resources(vkds_context *ctx, vkds__device *dev, uint32_t family,
                          const VkQueue *queues, uint32_t count) {
  for (uint32_t q = 0; q < count; ++q) {
    vkds_resource *r = &ctx->resources[ctx->resource_count];
    *r = (vkds_resource){.dev = dev, .index = ctx->resource_count, .family = family, .queue_index = q};
    if (queues) {
      r->queue = queues[q];
    } else {
      dev->vk.vkGetDeviceQueue(dev->device, family, q, &r->queue);
    }
    pthread_mutex_init(&r->queue_lock, NULL);
    ++ctx->resource_count;
    vkds_result res = vkds__queue_init(r);
    if (res != VKDS_SUCCESS) return res;
  }
  return VKDS_SUCCESS;
}

static uint32_t compute_queue_total(const vkds__device_facts *f, uint32_t cap) {
  uint32_t total = 0;
  for (uint32_t i = 0; i < f->family_count; ++i)
    if (f->families[i].queueFlags & VK_QUEUE_COMPUTE_BIT)
      total += (cap && f->families[i].queueCount > cap) ? cap : f->families[i].queueCount;
  return total;
}

/* Why a physical device cannot be used, or NULL when it can. */
static const char *unusable(const vkds__device_facts *f) {
  if (f->props.properties.apiVersion < VK_API_VERSION_1_2) return "Vulkan < 1.2";
  if (compute_queue_total(f, 0) == 0) return "no compute queue";
  if (!f->features12.timelineSemaphore) return "no timeline semaphores";
  return NULL;
}

static void append(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t size, const char *fmt, ...) {
  size_t used = strlen(buf);
  if (used + 1 >= size) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + used, size - used, fmt, ap);
  va_end(ap);
}

static vkds_result create_own(vkds_context *ctx, const vkds_context_info *info) {
  bool use_env = !info->ignore_env;
  bool validation = info->validation || (use_env && vkds__getenv_on("VKDS_VALIDATION"));
  const char *env_filter = use_env ? vkds__getenv("VKDS_DEVICES") : NULL;

  /* parse both filters before touching Vulkan: a typo is the caller's error */
  vkds__filter *filters[2] = {NULL, NULL};
  vkds_result r = vkds__filter_parse(ctx, info->devices ? info->devices : "", "vkds_context_info.devices", &filters[0]);
  if (r == VKDS_SUCCESS && env_filter) r = vkds__filter_parse(ctx, env_filter, "VKDS_DEVICES", &filters[1]);
  if (r != VKDS_SUCCESS) goto done;

  r = vkds__loader_open(ctx, info->vulkan_library, &ctx->loader, &ctx->fn);
  if (r != VKDS_SUCCESS) goto done;
  r = vkds__instance_create(ctx, info, validation);
  if (r != VKDS_SUCCESS) goto done;

  uint32_t phys_count = 0;
  VkResult vr = ctx->fn.EnumeratePhysicalDevices(ctx->instance, &phys_count, NULL);
  if (vr != VK_SUCCESS) { r = vkds__vk_fail(ctx, vr, "vkEnumeratePhysicalDevices"); goto done; }
  VkPhysicalDevice *phys = vkds__temp_alloc_array(ctx, phys_count ? phys_count : 1, sizeof *phys);
  uint32_t copies = info->devices_per_physical ? info->devices_per_physical : 1;
  ctx->devices = vkds__alloc_array(ctx, (phys_count ? phys_count : 1) * (size_t)copies, sizeof *ctx->devices);
  if (!phys || !ctx->devices) {
    vkds__free(ctx, phys);
    r = vkds__fail(ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "device list");
    goto done;
  }
  vr = ctx->fn.EnumeratePhysicalDevices(ctx->instance, &phys_count, phys);
  if (vr != VK_SUCCESS && vr != VK_INCOMPLETE) {
    vkds__free(ctx, phys);
    r = vkds__vk_fail(ctx, vr, "vkEnumeratePhysicalDevices");
    goto done;
  }

  char found[1024] = "";
  uint32_t total_queues = 0;
  for (uint32_t i = 0; i < phys_count && r == VKDS_SUCCESS; ++i) {
    vkds__device *dev = &ctx->devices[ctx->device_count];
    *dev = (vkds__device){.ctx = ctx, .index = ctx->device_count, .physical = phys[i]};
    r = vkds__device_query(ctx, phys[i], &dev->facts);
    if (r != VKDS_SUCCESS) {
      vkds__device_facts_free(ctx, &dev->facts);
      break;
    }
    const VkPhysicalDeviceProperties *p = &dev->facts.props.properties;
    const char *why = unusable(&dev->facts);
    bool wanted = vkds__filter_match(filters[0], i, p) && vkds__filter_match(filters[1], i, p);
    append(found, sizeof found, "%s[%u] %s (%s, vendor=0x%04x)%s%s", i ? "; " : "", i,
           p->deviceName, vkds_device_type_str((vkds_device_type)p->deviceType), p->vendorID,
           why ? ": unusable, " : "", why ? why : "");
    if (!wanted || why) {
      if (wanted) vkds__log(ctx, VKDS_LOG_WARN, "skipping device %u (%s): %s", i, p->deviceName, why);
      vkds__device_facts_free(ctx, &dev->facts);
      continue;
    }
    total_queues += copies * compute_queue_total(&dev->facts, info->max_queues_per_family);
    ++ctx->device_count;
    /* more VkDevices on the same physical device: separate resources (tests, and
     * policies over "several devices" on a machine with one) */
    for (uint32_t c = 1; c < copies && r == VKDS_SUCCESS; ++c) {
      vkds__device *copy = &ctx->devices[ctx->device_count];
      *copy = *dev;
      copy->index = ctx->device_count;
      copy->facts.families = vkds__alloc_array(ctx, dev->facts.family_count, sizeof *dev->facts.families);
      if (!copy->facts.families) {
        r = vkds__fail(ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "device copies");
        break;
      }
      memcpy(copy->facts.families, dev->facts.families, dev->facts.family_count * sizeof *dev->facts.families);
      ++ctx->device_count;
    }
  }
  vkds__free(ctx, phys);
  if (r != VKDS_SUCCESS) goto done;
  if (ctx->device_count == 0) {
    /* (only the filters that were given: an unset one was quoted as "") */
    const char *filter = info->devices && *info->devices ? info->devices : NULL;
    r = vkds__fail(ctx, VKDS_ERROR_NO_DEVICE, VK_SUCCESS, "no usable device%s%s%s%s%s%s%s%s; found: %s",
                   filter || env_filter ? " matches " : "", filter ? "the filter \"" : "", filter ? filter : "",
                   filter ? "\"" : "", filter && env_filter ? " and " : "", env_filter ? "VKDS_DEVICES=\"" : "",
                   env_filter ? env_filter : "", env_filter ? "\"" : "", phys_count ? found : "no physical devices");
    goto done;
  }

  ctx->resources = vkds__alloc_array(ctx, total_queues, sizeof *ctx->resources);
  if (!ctx->resources) {
    r = vkds__fail(ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "resources");
    goto done;
  }
  for (uint32_t d = 0; d < ctx->device_count && r == VKDS_SUCCESS; ++d) {
    vkds__device *dev = &ctx->devices[d];
    r = vkds__device_create(dev, info->max_queues_per_family);
    for (uint32_t fam = 0; r == VKDS_SUCCESS && fam < dev->facts.family_count; ++fam) {
      const VkQueueFamilyProperties *fp = &dev->facts.families[fam];
      if (!(fp->queueFlags & VK_QUEUE_COMPUTE_BIT)) continue;
      uint32_t n = fp->queueCount;
      if (info->max_queues_per_family && n > info->max_queues_per_family) n = info->max_queues_per_family;
      r = add_resources(ctx, dev, fam, NULL, n);
    }
  }
done:
  vkds__filter_free(filters[0]);
  vkds__filter_free(filters[1]);
  return r;
}

/* The embed description's shape, each refusal named in the user's terms (these were
 * assertion texts: "check_embed: e->instance != VK_NULL_HANDLE is false"). A queue
 * listed twice (the same handle, or the same family and index of one VkDevice, within
 * one entry or across entries for the same device) would become two resources with
 * two locks submitting to one VkQueue at once, which Vulkan forbids (a probe: 36
 * threading errors from the validation layer, success returned). */
#define EMBED_REFUSE(...) return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "vkds_context_create: " __VA_ARGS__)
static vkds_result check_embed(vkds_context *ctx, const vkds_embed_info *e) {
  if (e->instance == VK_NULL_HANDLE) EMBED_REFUSE("embed->instance is VK_NULL_HANDLE");
  if (e->device_count == 0 || e->devices == NULL) EMBED_REFUSE("embed->devices is NULL or device_count is 0");
  /* (a 1.1 instance was taken, then the first buffer called a 1.2 entry point the loader
   * had left NULL: a new-user probe) */
  if (e->api_version && e->api_version < VK_API_VERSION_1_2)
    return vkds__fail(ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS,
                      "vkds_context_create: embed->api_version is %u.%u: vkds needs an instance of Vulkan 1.2 or later",
                      VK_API_VERSION_MAJOR(e->api_version), VK_API_VERSION_MINOR(e->api_version));
  for (uint32_t d = 0; d < e->device_count; ++d) {
    const vkds_embed_device *ed = &e->devices[d];
    if (ed->physical_device == VK_NULL_HANDLE || ed->device == VK_NULL_HANDLE)
      EMBED_REFUSE("embed->devices[%u]: physical_device and device are required", d);
    if (ed->queue_count == 0 || ed->queues == NULL) EMBED_REFUSE("embed->devices[%u]: no queues", d);
    if (ed->enabled_features && ed->enabled_features->sType != VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2)
      EMBED_REFUSE("embed->devices[%u].enabled_features is not a VkPhysicalDeviceFeatures2 (its sType is %d)", d,
                   (int)ed->enabled_features->sType);
    if (ed->enabled_extension_count && !ed->enabled_extensions)
      EMBED_REFUSE("embed->devices[%u]: enabled_extensions is NULL with a count of %u", d, ed->enabled_extension_count);
    if ((ed->queue_lock == NULL) != (ed->queue_unlock == NULL))
      EMBED_REFUSE("embed->devices[%u]: queue_lock and queue_unlock come together (one is NULL)", d);
    for (uint32_t q = 0; q < ed->queue_count; ++q) {
      const vkds_embed_queue *eq = &ed->queues[q];
      if (eq->queue == VK_NULL_HANDLE) EMBED_REFUSE("embed->devices[%u].queues[%u].queue is VK_NULL_HANDLE", d, q);
      /* every earlier queue of every entry: descriptions are a few queues long */
      for (uint32_t d2 = 0; d2 <= d; ++d2)
        for (uint32_t q2 = 0; q2 < (d2 == d ? q : e->devices[d2].queue_count); ++q2) {
          const vkds_embed_queue *other = &e->devices[d2].queues[q2];
          bool same_device = e->devices[d2].device == ed->device;
          if (other->queue == eq->queue || (same_device && other->family == eq->family && other->index == eq->index))
            EMBED_REFUSE("embed->devices[%u].queues[%u] is also listed as devices[%u].queues[%u]: each VkQueue once",
                         d, q, d2, q2);
        }
    }
  }
  return VKDS_SUCCESS;
}
#undef EMBED_REFUSE

/* The VkQueues embedded contexts of the process submit to, and whether each came with a
 * lock: one VkQueue embedded in two contexts without a lock in both would be submitted to
 * by both at once, which Vulkan forbids (a probe: the validation layer's threading
 * errors, nothing refused). A fixed array: past it, queues are not checked. */
typedef struct embedded_queue {
  VkQueue queue;
  const vkds_context *ctx;
  bool locked;
} embedded_queue;
static pthread_mutex_t embedded_lock = PTHREAD_MUTEX_INITIALIZER;
static embedded_queue embedded[256];
static uint32_t embedded_count;

static void forget_embedded(const vkds_context *ctx) {
  pthread_mutex_lock(&embedded_lock);
  uint32_t kept = 0;
  for (uint32_t i = 0; i < embedded_count; ++i)
    if (embedded[i].ctx != ctx) embedded[kept++] = embedded[i];
  embedded_count = kept;
  pthread_mutex_unlock(&embedded_lock);
}

static vkds_result register_embedded(vkds_context *ctx, const vkds_embed_info *e) {
  pthread_mutex_lock(&embedded_lock);
  for (uint32_t d = 0; d < e->device_count; ++d)
    for (uint32_t q = 0; q < e->devices[d].queue_count; ++q) {
      VkQueue queue = e->devices[d].queues[q].queue;
      bool locked = e->devices[d].queue_lock != NULL;
      for (uint32_t i = 0; i < embedded_count; ++i)
        if (embedded[i].queue == queue && embedded[i].ctx != ctx && !(embedded[i].locked && locked)) {
          pthread_mutex_unlock(&embedded_lock);
          forget_embedded(ctx);
          return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                            "vkds_context_create: embed->devices[%u].queues[%u] is embedded in another live context "
                            "too, and %s has no queue_lock: the two would submit to it at once; give both the "
                            "same lock", d, q, locked ? "that one" : "this one");
        }
      if (embedded_count < sizeof embedded / sizeof embedded[0])
        embedded[embedded_count++] = (embedded_queue){queue, ctx, locked};
    }
  pthread_mutex_unlock(&embedded_lock);
  return VKDS_SUCCESS;
}

static vkds_result create_adopted(vkds_context *ctx, const vkds_embed_info *e) {
  VKDS_CHECK(check_embed(ctx, e));
  if (e->get_instance_proc_addr) {
    ctx->fn = (vkds__instance_fns){.GetInstanceProcAddr = e->get_instance_proc_addr};
  } else {
    VKDS_CHECK(vkds__loader_open(ctx, NULL, &ctx->loader, &ctx->fn));
  }
  ctx->instance = e->instance;
  ctx->instance_adopted = true;
  ctx->api_version = e->api_version ? e->api_version : VK_API_VERSION_1_2;
  ctx->debug_utils = e->debug_utils;
  vkds__loader_load_instance(&ctx->fn, ctx->instance);

  uint32_t total = 0;
  for (uint32_t d = 0; d < e->device_count; ++d) total += e->devices[d].queue_count;
  ctx->devices = vkds__alloc_array(ctx, e->device_count, sizeof *ctx->devices);
  ctx->resources = vkds__alloc_array(ctx, total, sizeof *ctx->resources);
  if (!ctx->devices || !ctx->resources)
    return vkds__fail(ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "adopted devices");

  for (uint32_t d = 0; d < e->device_count; ++d) {
    const vkds_embed_device *ed = &e->devices[d];
    vkds__device *dev = &ctx->devices[d];
    *dev = (vkds__device){.ctx = ctx, .index = d, .physical = ed->physical_device,
                          .device = ed->device, .adopted = true,
                          .queue_lock = ed->queue_lock, .queue_unlock = ed->queue_unlock,
                          .queue_lock_user = ed->queue_lock_user};
    ++ctx->device_count; /* counted before the checks below so cleanup frees its facts */
    VKDS_CHECK(vkds__device_query(ctx, ed->physical_device, &dev->facts));
    const char *why = unusable(&dev->facts);
    if (why)
      return vkds__fail(ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS, "adopted device %u (%s): %s", d,
                        dev->facts.props.properties.deviceName, why);
    for (uint32_t q = 0; q < ed->queue_count; ++q) {
      const vkds_embed_queue *eq = &ed->queues[q];
      if (eq->family >= dev->facts.family_count ||
          !(dev->facts.families[eq->family].queueFlags & VK_QUEUE_COMPUTE_BIT) ||
          eq->index >= dev->facts.families[eq->family].queueCount)
        return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                          "adopted device %u, queue %u: family %u index %u is not a compute "
                          "queue of that device", d, q, eq->family, eq->index);
    }
    vkds__loader_load_device(&ctx->fn, dev->device, &dev->vk);
    /* Vulkan 1.2's core entry points: the loader leaves them NULL below 1.2 (an instance
     * of 1.1 given as api_version 0, which says 1.2) */
    if (!dev->vk.vkWaitSemaphores || !dev->vk.vkGetSemaphoreCounterValue || !dev->vk.vkGetBufferDeviceAddress)
      return vkds__fail(ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS,
                        "adopted device %u (%s): Vulkan 1.2's vkWaitSemaphores, vkGetSemaphoreCounterValue or "
                        "vkGetBufferDeviceAddress did not load: vkds needs an instance and device of Vulkan 1.2 or "
                        "later (embed->api_version 0 means 1.2)", d, dev->facts.props.properties.deviceName);
    /* The VkQueue must be the device's queue of that family and index: one of another
     * VkDevice was taken, and the first submit drew a validation error, then a crash in
     * the layer (an embedding probe). Vulkan has no query for a queue's device, but the
     * device answers for the family and index the application says it created. */
    for (uint32_t q = 0; q < ed->queue_count; ++q) {
      const vkds_embed_queue *eq = &ed->queues[q];
      VkQueue own = VK_NULL_HANDLE;
      dev->vk.vkGetDeviceQueue(dev->device, eq->family, eq->index, &own);
      if (own != eq->queue)
        return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                          "adopted device %u, queue %u: that VkQueue is not the device's queue %u of family %u (a "
                          "queue of another VkDevice, or another family or index)", d, q, eq->index, eq->family);
    }
    vkds__device_adopt_features(dev, ed); /* (after: what it enables needs entry points) */
    if (!dev->enabled.timeline_semaphore)
      return vkds__fail(ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS,
                        "adopted device %u: vkds needs timelineSemaphore enabled on it; enable "
                        "it and list it in vkds_embed_device.enabled_features", d);
    for (uint32_t q = 0; q < ed->queue_count; ++q) {
      VKDS_CHECK(add_resources(ctx, dev, ed->queues[q].family, &ed->queues[q].queue, 1));
      ctx->resources[ctx->resource_count - 1].queue_index = ed->queues[q].index;
    }
  }
  return register_embedded(ctx, e);
}

/* pipeline_cache_dir made where it is missing (with its parents); a path that cannot be
 * a folder is said once and caching stays in memory (a warning each time a file could
 * not be saved, with no reason given, was all a user saw: found by a new-user probe).
 * So is one too long for its files' names to fit vkds's path buffers (1,024 bytes with
 * the longest name): such names were cut short, and the files landed beside the folder,
 * under the folder's own name cut short (a probe, with a 1,125-byte folder).
 * The folder is kept as an absolute path: a relative one was looked up again at every
 * save, in whatever folder the application had moved to since (a probe). One that vkds
 * may not write to is read (a cache shipped read-only) and said once, instead of a
 * warning at every save. */
static void make_cache_dir(vkds_context *ctx) {
  char *path = ctx->pipeline_cache_dir;
  struct stat st;
  int err = strlen(path) > VKDS__CACHE_DIR_MAX ? ENAMETOOLONG : 0;
  for (char *p = path + 1; !err; ++p) {
    if (*p != '/' && *p != '\0') continue;
    char c = *p;
    *p = '\0';
    if (mkdir(path, 0777) != 0 && errno != EEXIST) err = errno;
    *p = c;
    if (!c || err) break;
  }
  if (!err && stat(path, &st) != 0) err = errno;
  else if (!err && !S_ISDIR(st.st_mode)) err = ENOTDIR;
  char *absolute = err ? NULL : realpath(path, NULL); /* libc's malloc: copied below */
  if (!err && !absolute) err = errno;
  if (absolute && strlen(absolute) > VKDS__CACHE_DIR_MAX) err = ENAMETOOLONG;
  char *kept = err ? NULL : vkds__strdup(ctx, absolute);
  free(absolute);
  if (!err && !kept) err = ENOMEM;
  if (err) {
    vkds__log(ctx, VKDS_LOG_WARN, "pipeline_cache_dir \"%s\" cannot be a folder (%s): pipelines and compiled GLSL are "
              "cached in memory only", path, strerror(err));
    vkds__free(ctx, path);
    ctx->pipeline_cache_dir = NULL;
    return;
  }
  vkds__free(ctx, path);
  ctx->pipeline_cache_dir = kept;
  if (access(kept, W_OK | X_OK) != 0) {
    ctx->pipeline_cache_readonly = true;
    vkds__log(ctx, VKDS_LOG_WARN, "pipeline_cache_dir \"%s\" cannot be written to (%s): its files are read, new ones "
              "are not saved", kept, strerror(errno));
  }
}

/* keep_bytes' default where a discrete GPU is in the context: a sixteenth of its largest
 * device-local heap, up to 2 GiB, if that is more than eight staging rings. Host data
 * staged whole needs its buffers each call, and at 1 GiB NVIDIA's driver takes 40 ms to
 * make and destroy one (an H200, bench/RESULTS.md, sessions 36-37), more than the
 * transfer; device memory there is the GPU's own and plentiful. Integrated and CPU
 * devices share the host's memory: they keep the eight rings. */
static uint64_t gpu_keep_bytes(const vkds_context *ctx) {
  uint64_t keep = ctx->keep_bytes;
  for (uint32_t d = 0; d < ctx->device_count; ++d) {
    const vkds__device *dev = &ctx->devices[d];
    if (dev->facts.props.properties.deviceType != VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU) continue;
    const VkPhysicalDeviceMemoryProperties *m = &dev->facts.memory;
    for (uint32_t h = 0; h < m->memoryHeapCount; ++h) {
      if (!(m->memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)) continue;
      uint64_t share = m->memoryHeaps[h].size / 16;
      if (share > (2ull << 30)) share = 2ull << 30;
      if (share > keep) keep = share;
    }
  }
  return keep;
}

vkds_result vkds_context_create(const vkds_context_info *info, vkds_context **out) {
  if (out) *out = NULL;
  if (!info || !out)
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "vkds_context_create: info and out must not be NULL");
  const VkAllocationCallbacks *a = info->allocator;
  /* (the logger the info gives hears this too, as every other refusal of the info: a probe) */
  const vkds_context logs = {.log = info->log, .log_user = info->log_user,
                             .log_level = info->log_level ? info->log_level : VKDS_LOG_WARN};
  if (a && (!a->pfnAllocation || !a->pfnReallocation || !a->pfnFree || !a->pfnInternalAllocation != !a->pfnInternalFree))
    return vkds__fail(&logs, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "vkds_context_create: the allocator's pfnAllocation, pfnReallocation and pfnFree must all be "
                      "set, and pfnInternalAllocation and pfnInternalFree both or neither");
  /* The context itself comes from the user's allocator: a stand-in carries it for that
   * one allocation, then the context keeps its own copy (freed last, in destroy). */
  vkds_context boot = {.has_allocator = a != NULL};
  if (a) boot.allocator = *a;
  vkds_context *ctx = vkds__alloc(&boot, sizeof *ctx);
  /* (named, and heard by the info's logger: it said only "out of host memory: context",
   * unlogged; an embedding probe) */
  if (!ctx)
    return vkds__fail(&logs, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS,
                      "vkds_context_create: the context (%zu bytes)", sizeof *ctx);
  ctx->has_allocator = boot.has_allocator;
  ctx->allocator = boot.allocator;
  ctx->log = info->log;
  ctx->log_user = info->log_user;
  ctx->log_level = info->log_level ? info->log_level : VKDS_LOG_WARN;
  pthread_mutex_init(&ctx->glsl_lock, NULL);
  pthread_mutex_init(&ctx->glsl_compile_lock, NULL);
  pthread_mutex_init(&ctx->alg_lock, NULL);
  pthread_mutex_init(&ctx->spare_lock, NULL);
  pthread_mutex_init(&ctx->kernels_lock, NULL);
  ctx->device_memory_limit = info->device_memory_limit;
  ctx->destroy_timeout_ns = info->destroy_timeout_ns ? info->destroy_timeout_ns : 10000000000ull;
  ctx->staging_chunks = info->staging_chunks ? info->staging_chunks : 4;
  ctx->staging_chunk_bytes = info->staging_chunk_bytes ? info->staging_chunk_bytes : 8ull << 20;
  ctx->keep_bytes = info->keep_bytes ? info->keep_bytes : 8ull * ctx->staging_chunks * ctx->staging_chunk_bytes;
  ctx->lazy_report_ns = lazy_report_ns(info);
  vkds_result r = check_staging(ctx);
  if (r == VKDS_SUCCESS) r = check_counts(ctx, info);
  if (r == VKDS_SUCCESS) r = resolve_scan_path(ctx, info);
  if (r == VKDS_SUCCESS) r = vkds__host_copy_init(ctx, info->host_copy_threads);
  /* "" is no folder (joined with a file name it was the root directory) */
  if (info->pipeline_cache_dir && info->pipeline_cache_dir[0] &&
      !(ctx->pipeline_cache_dir = vkds__strdup(ctx, info->pipeline_cache_dir)))
    r = vkds__fail(ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "pipeline cache path");
  if (r == VKDS_SUCCESS && ctx->pipeline_cache_dir) make_cache_dir(ctx);
  if (r == VKDS_SUCCESS) r = info->embed ? create_adopted(ctx, info->embed) : create_own(ctx, info);
  for (uint32_t d = 0; r == VKDS_SUCCESS && d < ctx->device_count; ++d) {
    r = vkds__pipeline_cache_open(&ctx->devices[d]);
    if (r == VKDS_SUCCESS) r = vkds__allocator_init(&ctx->devices[d]);
  }
  if (r == VKDS_SUCCESS && !info->keep_bytes && !info->device_memory_limit) ctx->keep_bytes = gpu_keep_bytes(ctx);
  if (r != VKDS_SUCCESS) {
    vkds_context_destroy(ctx);
    return r;
  }
  *out = ctx;
  return VKDS_SUCCESS;
}

/* Waits, at most ctx->destroy_timeout_ns in all, for vkds's own work only: an adopted
 * device may be busy with the application's, which is not ours to wait for. False when
 * some queue's work is still running then. A lost device's work never finishes and
 * need not: its objects may be destroyed (the specification allows it), once a
 * vkDeviceWaitIdle has returned where vkds owns the device. */
static bool wait_for_work(vkds_context *ctx, const char *then) {
  const uint64_t limit = ctx->destroy_timeout_ns, start = vkds__now_ns();
  for (uint32_t i = 0; i < ctx->resource_count; ++i) {
    vkds_resource *r = &ctx->resources[i];
    if (r->timeline) vkds__queue_flush(r); /* deferred tasks too */
    uint64_t target = r->timeline ? atomic_load(&r->submitted) : 0, spent = vkds__now_ns() - start;
    if (!target) continue;
    uint64_t left = limit == UINT64_MAX ? UINT64_MAX : spent < limit ? limit - spent : 0;
    if (vkds__queue_wait(r, target, left, 0) == VKDS_ERROR_TIMEOUT) {
      vkds__log(ctx, VKDS_LOG_ERROR,
                "vkds_context_destroy: queue %u still runs vkds's work after %.3f s (timeline %llu of %llu); %s", i,
                (double)limit / 1e9, (unsigned long long)atomic_load(&r->completed), (unsigned long long)target, then);
      return false;
    }
  }
  for (uint32_t d = 0; d < ctx->device_count; ++d) {
    vkds__device *dev = &ctx->devices[d];
    if (dev->device && !dev->adopted && atomic_load(&dev->lost)) dev->vk.vkDeviceWaitIdle(dev->device);
  }
  /* Every report delivered and every slot back while all queues still work: a slot's
   * selection may be the last of a backend whose destroy waited for it, and that destroy
   * waits on the backend's queues (run from the queues' teardown instead, it walked a
   * list being freed and freed a selection twice: a concurrency probe). */
  for (uint32_t i = 0; i < ctx->resource_count; ++i) {
    vkds_resource *r = &ctx->resources[i];
    if (!r->timeline) continue;
    vkds__queue_reclaim(r);
    vkds__queue_settle(r);
  }
  return true;
}

/* Objects whose work never finished: kept reachable, never freed (a leak checker that
 * finds them reachable is right: they are kept on purpose). A fixed array: a process
 * that abandons more has bigger problems than a leak report. */
static pthread_mutex_t abandoned_lock = PTHREAD_MUTEX_INITIALIZER;
static void *abandoned[64];
static uint32_t abandoned_count;

void vkds__abandon(void *object) {
  pthread_mutex_lock(&abandoned_lock);
  if (abandoned_count < sizeof abandoned / sizeof *abandoned) abandoned[abandoned_count++] = object;
  pthread_mutex_unlock(&abandoned_lock);
}

uint64_t vkds__destroy_timeout(const vkds_context *ctx) { return ctx ? ctx->destroy_timeout_ns : UINT64_MAX; }

static void destroy_now(vkds_context *ctx);

void vkds_context_destroy(vkds_context *ctx) {
  if (!ctx) return;
  /* Policies (their backends) still alive keep pointers into the context: their release
   * afterwards was a use after free (a lifetimes probe found it silent, then named it).
   * The context now lives on until the last of them is released, which destroys it. */
  unsigned before = atomic_fetch_or_explicit(&ctx->live_backends, VKDS__CONTEXT_DESTROY_PENDING, memory_order_acq_rel);
  if (before & VKDS__CONTEXT_DESTROY_PENDING) {
    vkds__log(ctx, VKDS_LOG_ERROR, "vkds_context_destroy: called again while its policies are alive (ignored)");
    return;
  }
  if (before) { /* (policies and backends hold it, each policy with its backend) */
    /* Destroys the application asked for that wait only for the queues' finished work
     * (a backend destroyed before its tasks ended) run when that work is reclaimed, as
     * the teardown below does, and let go; this call holds the context meanwhile, so
     * that the last of them does not destroy it under the loop. */
    vkds__context_hold(ctx);
    /* (a time-out is logged; what is still alive decides. The message said the context
     * was left allocated until the process ended, which is not what happens here: the
     * last release destroys it, its work waited for again then; a new-user probe) */
    (void)wait_for_work(ctx, "the context is destroyed when the last policy or backend made from it is released "
                             "and that work is done");
    if ((atomic_load(&ctx->live_backends) & ~VKDS__CONTEXT_DESTROY_PENDING) > 1)
      vkds__log(ctx, VKDS_LOG_ERROR,
                "vkds_context_destroy: policies (or backends) made from the context are still alive; the context is "
                "destroyed when the last of them, and their submissions and selections, are released (until then "
                "nothing of it is freed)");
    vkds__context_let_go(ctx); /* the last: destroys it now */
    return;
  }
  destroy_now(ctx);
}

void vkds__context_hold(vkds_context *ctx) { atomic_fetch_add_explicit(&ctx->live_backends, 1, memory_order_relaxed); }

void vkds__context_let_go(vkds_context *ctx) {
  unsigned before = atomic_fetch_sub_explicit(&ctx->live_backends, 1, memory_order_acq_rel);
  if (before == (VKDS__CONTEXT_DESTROY_PENDING | 1u)) destroy_now(ctx); /* the last, after the destroy call */
}

static void destroy_now(vkds_context *ctx) {
  forget_embedded(ctx);
  if (!wait_for_work(ctx, "the context's Vulkan objects and memory are left allocated until the process ends, not "
                          "destroyed under the GPU")) {
    vkds__abandon(ctx);
    return;
  }
  for (uint32_t i = 0; i < ctx->resource_count; ++i) {
    vkds_resource *r = &ctx->resources[i];
    vkds__queue_destroy(r);
    pthread_mutex_destroy(&r->queue_lock);
  }
  vkds__algorithm_state_free(ctx); /* kernels and buffers, while the devices live */
  /* the application's kernels left alive: destroyed now, while their devices live */
  unsigned kernels = 0;
  char first[64] = "";
  while (ctx->live_kernels) {
    if (!kernels++) snprintf(first, sizeof first, "%s", ctx->live_kernels->name);
    vkds_kernel_destroy(ctx->live_kernels);
  }
  pthread_mutex_destroy(&ctx->kernels_lock);
  if (kernels)
    vkds__log(ctx, VKDS_LOG_WARN,
              "vkds_context_destroy: %u kernel(s) made from the context (the last made: '%s') were not destroyed "
              "first; they are destroyed now, and their handles may not be used, nor destroyed, afterwards",
              kernels, first);
  pthread_mutex_destroy(&ctx->alg_lock);
  pthread_mutex_destroy(&ctx->spare_lock);
  for (uint32_t d = 0; d < ctx->device_count; ++d) {
    vkds__device *dev = &ctx->devices[d];
    if (dev->device) {
      vkds__staging_destroy(dev);
      vkds__allocator_destroy(dev);
      vkds__pipeline_cache_close(dev);
    }
    if (dev->device && !dev->adopted) {
      dev->vk.vkDeviceWaitIdle(dev->device);
      dev->vk.vkDestroyDevice(dev->device, vkds__vk_allocator(ctx));
    }
    vkds__device_facts_free(ctx, &dev->facts);
  }
  vkds__instance_destroy(ctx);
  vkds__loader_close(ctx->loader);
  vkds__glsl_cache_free(ctx);
  pthread_mutex_destroy(&ctx->glsl_lock);
  pthread_mutex_destroy(&ctx->glsl_compile_lock);
  vkds__host_copy_destroy(ctx);
  vkds__free(ctx, ctx->pipeline_cache_dir);
  vkds__free(ctx, ctx->resources);
  vkds__free(ctx, ctx->devices);
  vkds__free(ctx, ctx); /* reads the callbacks before the call that frees them */
}

uint32_t vkds_context_resource_count(const vkds_context *ctx) { return ctx ? ctx->resource_count : 0; }

vkds_resource *vkds_context_resource(const vkds_context *ctx, uint32_t i) {
  return (ctx && i < ctx->resource_count) ? &ctx->resources[i] : NULL;
}

uint32_t vkds_context_device_count(const vkds_context *ctx) { return ctx ? ctx->device_count : 0; }

bool vkds_context_validation_enabled(const vkds_context *ctx) { return ctx && ctx->validation; }

VkInstance vkds_context_vk_instance(const vkds_context *ctx) {
  return ctx ? ctx->instance : VK_NULL_HANDLE;
}
