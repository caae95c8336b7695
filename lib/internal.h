/* lib/internal.h: what the library's files share. Include it first: volk must come
 * before any Vulkan header (it defines VK_NO_PROTOTYPES), and its symbols are renamed
 * to vkds_volk_* (subprojects/volk/meson.build says why). */
#ifndef VKDS_INTERNAL_H
#define VKDS_INTERNAL_H

#include "volk_rename.h"
#include <volk.h>

#include <stdarg.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
/* POSIX threads, not C11 <threads.h>: glibc implements thrd_create and mtx_lock by
 * calling its internal pthread functions directly, past ThreadSanitizer's interceptors,
 * so a TSan build would neither start such threads correctly nor see such locks. */
#include <pthread.h>

#include "vkds/vkds.h"

/* ---- errors and logging (lib/core/result.c) ---- */

/* Logs at `level` through the context's logger (ctx may be NULL: then only thread-local
 * state is touched). */
void vkds__log(const vkds_context *ctx, vkds_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Records a failure as the thread's last error, logs it as an error, returns `result`.
 * `vk` is the VkResult behind it (VK_SUCCESS when none). */
vkds_result vkds__fail(const vkds_context *ctx, vkds_result result, VkResult vk,
                       const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* The Vulkan version GLSL is compiled for (lib/kernel/kernel.c), one for the whole context
 * since a kernel's SPIR-V serves every device: the instance's, or 1.2 (SPIR-V 1.5) where a
 * device is older than 1.3 or has maintenance4 off. glslang's SPIR-V 1.6 declares the work
 * group size with LocalSizeId, which needs maintenance4 (VUID-RuntimeSpirv-LocalSizeId-06434):
 * vkds enables it where a device has it, an application's own 1.3 device may not. */
uint32_t vkds__glsl_api_version(const vkds_context *ctx);

/* A wait given a timeout that ran out: VKDS_ERROR_TIMEOUT, recorded as vkds__fail records
 * a failure but logged at VKDS_LOG_INFO: the caller chose the timeout, and one who polls
 * with short ones should not fill its logger with errors. */
vkds_result vkds__timed_out(const vkds_context *ctx, VkResult vk, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* An error that is an expected answer of a documented race (vkds_policy_init's second
 * caller): recorded as vkds__fail records a failure, logged at VKDS_LOG_INFO (a probe's
 * threads racing to initialize filled its logger with errors). */
vkds_result vkds__fail_info(const vkds_context *ctx, vkds_result result, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A failure recorded with no context (checks of a public call's arguments before its
 * context is known) reached no logger: for a failed `result`, hands the thread's last
 * error to ctx's logger if that is so (once), and returns `result`. */
vkds_result vkds__log_unlogged(const vkds_context *ctx, vkds_result result);
/* How many failures the calling thread has recorded (vkds__fail, vkds__relay_error):
 * a caller of user code compares it before and after to tell whether a failure the code
 * returned came with a message. */
uint64_t vkds__failures(void);
/* For code of the application's that vkds called (a slot, a select, a task function):
 * its failure `result`, when nothing was recorded on the thread since vkds__failures()
 * read `before`, is recorded with the message fmt (so that the thread's last message is not an
 * earlier, unrelated failure's); a failure it explained, or success, stays as it is.
 * Returns `result`. */
vkds_result vkds__fail_if_silent(const vkds_context *ctx, vkds_result result, uint64_t before, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Whether user code's return value is a vkds_result: VKDS_SUCCESS or a known negative
 * error (a positive value passed on reads as success to a caller that tests r < 0). */
bool vkds__is_result(vkds_result result);
/* The thread's last error message without the "<result>: " that vkds__fail puts in
 * front of it (when `result` is the one there): the reason, for a caller that wraps it
 * in a message of its own. */
const char *vkds__last_reason(vkds_result result);
/* A failure `result` whose message the thread already holds, recorded again as "who:
 * <reason>" and heard by ctx's logger (for checks made before the caller's context was
 * known); VKDS_SUCCESS passes through. Returns `result`. */
vkds_result vkds__fail_as(const vkds_context *ctx, const char *who, vkds_result result);
/* While held, the calling thread's failures are recorded but not logged (they count as
 * unlogged for vkds__log_unlogged): for a caller that rewrites an inner failure's
 * message before the user sees it (an algorithm's snippet that does not compile). */
bool vkds__hold_failure_logs(bool hold); /* (returns the state before) */
/* The public call the thread is in (an algorithm, an upload), so that what fails on its
 * way (a buffer of vkds's own that found no memory) is named by the call the user made,
 * not by vkds_buffer_create (a probe). begin returns what to give end; an inner begin
 * keeps the outer name. vkds__caller: that call's name, else `own`. */
const char *vkds__call_begin(const char *name);
void vkds__call_end(const char *before);
const char *vkds__caller(const char *own);
bool vkds__in_call(void);

/* Maps a failed VkResult to a vkds_result, records it, and returns it. */
vkds_result vkds__vk_fail(const vkds_context *ctx, VkResult vk, const char *what);

/* Makes `message` (a vkds_last_error_message() of another thread, which held its logs:
 * vkds__hold_failure_logs) and `vk` the calling thread's last error, logs it as
 * vkds__fail would, and returns `result`. */
vkds_result vkds__relay_error(const vkds_context *ctx, vkds_result result, const char *message, VkResult vk);

/* Shorthand for the ubiquitous NULL-argument check. */
#define VKDS__REQUIRE(ctx, cond)                                                            \
  do {                                                                                      \
    if (!(cond))                                                                            \
      return vkds__fail((ctx), VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: %s is false",  \
                        __func__, #cond);                                                   \
  } while (0)

/* ---- host memory (lib/core/host_alloc.c) ----
 * Every host allocation vkds makes goes through these: the context's allocator
 * (vkds_context_info.allocator) when it has one, else (and when ctx is NULL: code that
 * runs without a context, such as reflection called by the fuzz targets) calloc,
 * malloc, realloc, aligned_alloc and free. A block must be freed with the context it
 * was allocated with: objects keep the context (or a device that has it).
 * Scopes given to the user's callbacks: VK_SYSTEM_ALLOCATION_SCOPE_OBJECT for what lives
 * with an object (vkds__alloc, _alloc_array, _alloc_aligned, _realloc, _strdup),
 * VK_SYSTEM_ALLOCATION_SCOPE_COMMAND for temporaries freed before the call that made
 * them returns (vkds__temp_alloc, _temp_alloc_array, _temp_alloc_raw). Alignment: alignof(max_align_t)
 * unless asked (strdup: 1). A size of 0 allocates 1 byte. NULL when out of memory. */
/* Zeroed, like calloc. */
void *vkds__alloc(const vkds_context *ctx, size_t size);
/* n * size bytes, zeroed; NULL when the product overflows. */
void *vkds__alloc_array(const vkds_context *ctx, size_t n, size_t size);
/* Zeroed temporaries (COMMAND scope). */
void *vkds__temp_alloc(const vkds_context *ctx, size_t size);
void *vkds__temp_alloc_array(const vkds_context *ctx, size_t n, size_t size);
/* A temporary that is NOT zeroed: for data buffers the caller fills whole. */
void *vkds__temp_alloc_raw(const vkds_context *ctx, size_t size);
/* Aligned to `align` (a power of two; at least alignof(max_align_t)); NOT zeroed (host
 * buffers can be large: their users write them). */
void *vkds__alloc_aligned(const vkds_context *ctx, size_t size, size_t align);
/* realloc: p NULL allocates; on failure NULL and p is untouched. Not zeroed. */
void *vkds__realloc(const vkds_context *ctx, void *p, size_t size);
/* NULL is a no-op. */
void vkds__free(const vkds_context *ctx, void *p);
char *vkds__strdup(const vkds_context *ctx, const char *s);
/* What vkds passes as pAllocator to every vkCreate*, vkAllocate*, vkDestroy*, vkFree*
 * it calls for the context: its copy of the user's callbacks, or NULL (the driver's). */
const VkAllocationCallbacks *vkds__vk_allocator(const vkds_context *ctx);

/* ---- instance-level entry points, per context (lib/core/loader.c) ----
 * Kept per context rather than in volk's globals so that contexts on different loaders
 * or instances, created from different threads, never write shared state. */
typedef struct vkds__instance_fns {
  PFN_vkGetInstanceProcAddr GetInstanceProcAddr;
  PFN_vkCreateInstance CreateInstance;
  PFN_vkEnumerateInstanceVersion EnumerateInstanceVersion;
  PFN_vkEnumerateInstanceLayerProperties EnumerateInstanceLayerProperties;
  PFN_vkEnumerateInstanceExtensionProperties EnumerateInstanceExtensionProperties;
  PFN_vkDestroyInstance DestroyInstance;
  PFN_vkEnumeratePhysicalDevices EnumeratePhysicalDevices;
  PFN_vkGetPhysicalDeviceProperties2 GetPhysicalDeviceProperties2;
  PFN_vkGetPhysicalDeviceFeatures2 GetPhysicalDeviceFeatures2;
  PFN_vkGetPhysicalDeviceMemoryProperties GetPhysicalDeviceMemoryProperties;
  PFN_vkGetPhysicalDeviceQueueFamilyProperties GetPhysicalDeviceQueueFamilyProperties;
  PFN_vkEnumerateDeviceExtensionProperties EnumerateDeviceExtensionProperties;
  PFN_vkCreateDevice CreateDevice;
  PFN_vkGetDeviceProcAddr GetDeviceProcAddr;
  PFN_vkCreateDebugUtilsMessengerEXT CreateDebugUtilsMessengerEXT;
  PFN_vkDestroyDebugUtilsMessengerEXT DestroyDebugUtilsMessengerEXT;
  PFN_vkSetDebugUtilsObjectNameEXT SetDebugUtilsObjectNameEXT;
  PFN_vkCmdBeginDebugUtilsLabelEXT CmdBeginDebugUtilsLabelEXT;
  PFN_vkCmdEndDebugUtilsLabelEXT CmdEndDebugUtilsLabelEXT;
} vkds__instance_fns;

/* Opens the loader (path NULL: the system's); sets *handle (for dlclose) and the
 * global-level entry points of *fns. */
vkds_result vkds__loader_open(const vkds_context *ctx, const char *path, void **handle,
                              vkds__instance_fns *fns);
/* Loads the instance-level entry points of *fns for `instance`. */
void vkds__loader_load_instance(vkds__instance_fns *fns, VkInstance instance);
/* Fills a volk device table for `device` (serialized: volk keeps one global pointer to
 * vkGetDeviceProcAddr). */
void vkds__loader_load_device(const vkds__instance_fns *fns, VkDevice device,
                              struct VolkDeviceTable *table);
void vkds__loader_close(void *handle);

/* ---- devices and resources (lib/core/device.c) ---- */

/* Everything vkds knows about one physical device, queried once. */
typedef struct vkds__device_facts {
  VkPhysicalDeviceProperties2 props;
  VkPhysicalDeviceVulkan11Properties props11;
  VkPhysicalDeviceVulkan12Properties props12;
  VkPhysicalDeviceVulkan13Properties props13; /* zero unless the device and the context speak Vulkan 1.3 */
  VkPhysicalDeviceFeatures2 features;
  VkPhysicalDeviceVulkan11Features features11;
  VkPhysicalDeviceVulkan12Features features12;
  VkPhysicalDeviceVulkan13Features features13;
  VkPhysicalDeviceMemoryProperties memory;
  uint32_t family_count;
  VkQueueFamilyProperties *families;
  bool has_external_memory_host;
  VkDeviceSize import_alignment; /* minImportedHostPointerAlignment, with the extension */
  bool has_push_descriptor;
  bool has_pipeline_executable_properties; /* VK_KHR_pipeline_executable_properties */
  /* The device's parallel units, where its driver says (VK_NV_shader_sm_builtins,
   * VK_AMD_shader_core_properties), else 0: compute units (SMs, CUs) and the threads one
   * unit keeps resident at most. Grids that should fill the device once (a reduction's
   * first pass) are sized from them. */
  uint32_t compute_units, threads_per_unit;
  /* Whether kernels that vkds generates (the algorithms) should reach memory through
   * storage-buffer descriptors rather than device addresses: on a CPU device (lavapipe
   * loads through a buffer reference ~3.5x slower than through a descriptor); GPUs reach
   * full bandwidth through addresses. VKDS_ALGORITHM_ACCESS=descriptor|address, read
   * when the context is created, overrides it (tests, benchmarks). The algorithms use it
   * only where push descriptors are enabled (lib/algorithm/codegen.c). */
  bool prefers_descriptors;
} vkds__device_facts;

/* Capabilities a module may declare that a device has only with a feature enabled
 * (kernel.c checks them against each device before making its pipeline). */
enum {
  VKDS__CAP_FLOAT16 = 1u << 0, VKDS__CAP_FLOAT64 = 1u << 1, VKDS__CAP_INT64 = 1u << 2,
  VKDS__CAP_INT64_ATOMICS = 1u << 3, VKDS__CAP_INT16 = 1u << 4, VKDS__CAP_INT8 = 1u << 5,
  VKDS__CAP_STORAGE16 = 1u << 6, VKDS__CAP_UNIFORM_STORAGE16 = 1u << 7, VKDS__CAP_PUSH16 = 1u << 8,
  VKDS__CAP_STORAGE8 = 1u << 9, VKDS__CAP_UNIFORM_STORAGE8 = 1u << 10, VKDS__CAP_PUSH8 = 1u << 11,
  VKDS__CAP_BUFFER_ADDRESS = 1u << 12, VKDS__CAP_MEMORY_MODEL = 1u << 13, VKDS__CAP_MEMORY_MODEL_DEVICE = 1u << 14,
};

/* What is enabled on a VkDevice vkds uses (queried facts ∩ what was turned on). */
typedef struct vkds__device_enabled {
  bool buffer_device_address, timeline_semaphore, shader_int64, int64_atomics, float64;
  bool external_memory_host, push_descriptor;
  bool host_query_reset; /* vkResetQueryPool from the host (lib/backend/backend_vulkan.c says why) */
  /* subgroupSizeControl (Vulkan 1.3) on: with props13 (1.3 on both sides), a pipeline
   * may name its subgroup size (vkds__device_required_subgroup_size) */
  bool subgroup_size_control;
  /* maintenance4 (Vulkan 1.3) on: SPIR-V 1.6 modules may declare their work group size
   * with LocalSizeId, as glslang's do (vkds__glsl_api_version) */
  bool maintenance4;
  /* the SPIR-V capabilities whose features are on (VKDS__CAP_*), checked before a
   * pipeline is made, for those in caps_known: all where vkds made the device; for an
   * adopted one those its enabled_features tell for certain (the core features and
   * bufferDeviceAddress: the others may come in structs vkds does not read) */
  uint32_t caps;
  uint32_t caps_known;
  /* VKDS_PIPELINE_STATS set and the device has VK_KHR_pipeline_executable_properties:
   * every pipeline vkds makes prints its driver's statistics to stderr (kernel.c) */
  bool pipeline_stats;
} vkds__device_enabled;

typedef struct vkds__device {
  vkds_context *ctx;
  uint32_t index;
  VkPhysicalDevice physical;
  VkDevice device;
  bool adopted;
  struct VolkDeviceTable vk; /* this device's own entry points */
  vkds__device_facts facts;
  vkds__device_enabled enabled;
  VkPipelineCache pipeline_cache; /* loaded from / saved to the context's cache folder */
  /* embedding: the application's queue lock */
  void (*queue_lock)(void *user, VkQueue queue);
  void (*queue_unlock)(void *user, VkQueue queue);
  void *queue_lock_user;
  struct vkds__allocator *allocator; /* lib/memory/memory.c */
  struct vkds__staging *staging;     /* lib/memory/staging.c, made on first use */
  pthread_mutex_t staging_lock;
  /* A call on it returned VK_ERROR_DEVICE_LOST (vkds__device_vk_fail): from then on
   * vkds's work on it fails at once with VKDS_ERROR_DEVICE_LOST (vkds__device_check_lost),
   * and policies skip its queues. */
  atomic_bool lost;
} vkds__device;

/* A VkBuffer with its own memory (lib/memory/buffer.c). */
typedef struct vkds__buffer {
  VkBuffer buffer;
  VkDeviceMemory memory;
  VkDeviceSize size;
  void *mapped;       /* when the memory is host-visible */
  bool coherent;      /* host-coherent: no flush/invalidate needed */
  uint32_t type_index;
} vkds__buffer;

/* A task on its way to a queue's vkQueueSubmit (lib/backend/queue.c, coalesced
 * submission): on its thread's stack while the thread waits for it to be submitted, in
 * its slot (vkds__slot.deferred) when the thread went on without waiting. */
typedef struct vkds__submit_req {
  struct vkds__submit_req *next;
  struct vkds__slot *slot;
  uint64_t value;   /* the timeline value its submit signals (given when it is queued) */
  bool deferred;    /* nobody waits for it: whoever submits it must not touch it after */
  VkResult vk;      /* the call's result (stack requests) */
  atomic_bool done; /* set (release) by the thread that submitted it, under the queue lock */
} vkds__submit_req;

/* One unit of in-flight work on a queue: the command pool and buffer it was recorded
 * with, timestamp queries, and whom to report its completion to. Slots are recycled. */
/* A command pool that up to VKDS__GROUP_SLOTS slots of one queue allocate their command
 * buffers from (lib/backend/queue.c). A pool is externally synchronized: `lock` is held
 * by the thread that records one of its slots, from the reset to vkEndCommandBuffer,
 * and taken only by trylock (a thread skips slots whose group another is recording). */
typedef struct vkds__pool_group {
  struct vkds__pool_group *next; /* the queue's groups (track_lock) */
  VkCommandPool pool;
  pthread_mutex_t lock;
  uint32_t slots; /* command buffers allocated from it, or being allocated (track_lock) */
} vkds__pool_group;
enum { VKDS__GROUP_SLOTS = 16 };

typedef struct vkds__slot {
  struct vkds__slot *next;
  vkds__pool_group *group; /* its command buffer's pool */
  bool recording;          /* this thread holds group->lock (queue.c, vkds__queue_recorded) */
  VkCommandBuffer cmd;
  VkQueryPool timestamps; /* created on first use */
  bool timed;             /* this use wrote timestamps */
  bool time_known;        /* time_ns holds the task's time (read when it finished) */
  uint64_t time_ns;
  uint64_t value;         /* the timeline value its submit signals */
  vkds_selection *report_to; /* retained when completion or time must be reported */
  uint64_t key;
  /* What its command buffer holds, for a replay (vkds_task_info.replay_key): the task's
   * replay_key (0: a recording for one submission), whether it wrote timestamps, its
   * label; `replayed`: this use submits that recording again. */
  uint64_t replay_key;
  bool replay_timed, replayed;
  const char *replay_label;
  /* needs_lead: the recording has no leading barrier; the queue puts one before it
   * unless the command buffer before it ends in one (ends_full: vkds's full barrier,
   * src compute and transfer writes, dst compute, transfer and host). Kept with the
   * recording for its replays. */
  bool needs_lead, ends_full;
  vkds__buffer scratch;       /* per-launch data that must live until the work is done */
  VkDeviceAddress scratch_address;
  vkds__submit_req deferred;  /* its request while it waits for a deferred submit */
  struct vkds_submission *submission; /* the task's, made before its work (backend_vulkan.c) */
} vkds__slot;

enum { VKDS__SIGNAL_RING = 1024 };
struct vkds_resource {
  vkds__device *dev;
  uint32_t index; /* in the context */
  uint32_t family, queue_index;
  VkQueue queue;
  pthread_mutex_t queue_lock; /* VkQueue is externally synchronized */
  /* the thread holding queue_lock (its &vkds__thread), 0: none: a thread that holds it
   * (vkds_resource_lock_queue) and calls vkds on the queue submits itself instead of
   * waiting for the lock it holds (resource.c, queue.c) */
  _Atomic uintptr_t lock_owner;

  /* submission tracking (lib/backend/queue.c) */
  VkSemaphore timeline;            /* signalled by every vkds submit to this queue */
  _Atomic uint64_t submitted;      /* the last value a submit signals (set under queue_lock) */
  _Atomic uint32_t flushing;       /* deferred batches taken from the pending list, not yet submitted */
  _Atomic uint64_t completed;      /* the last value seen reached */
  pthread_mutex_t track_lock;      /* guards the slot lists */
  uint64_t last_end_ticks;         /* end timestamp of the last reclaimed task, 0: unknown (track_lock) */
  vkds__slot *free_slots;
  vkds__pool_group *groups;
  vkds__slot *inflight_head, *inflight_tail; /* in timeline order */
  _Atomic uint32_t inflight_count;           /* lets reclaim skip an idle queue without the lock */
  /* reclaims whose reports are being delivered (raised under track_lock as they take
   * their slots), and deferred batches submitted but not yet tracked: a wait does not
   * return before they are out (queue.c, vkds__queue_settle) */
  _Atomic uint32_t delivering;
  uint32_t slot_count;

  /* coalesced submission (lib/backend/queue.c): requests waiting for the thread that
   * holds the queue to put them in its vkQueueSubmit */
  pthread_mutex_t pending_lock;
  struct vkds__submit_req *pending_head, *pending_tail;
  uint32_t pending_count;      /* (pending_lock) */
  _Atomic uint64_t assigned;   /* the last value given to a request (set under pending_lock) */
  /* Deferred submission: the queue's flusher thread (started on the first deferral;
   * waits on flusher_cv with pending_lock), and the VkResult of a failed vkQueueSubmit
   * that carried deferred tasks (0: none), after which the queue takes no more work. */
  pthread_t flusher;
  bool flusher_started, flusher_stop; /* (pending_lock) */
  pthread_cond_t flusher_cv;
  _Atomic int deferred_error;
  /* The value whose signal reaches value v, at v % VKDS__SIGNAL_RING: v, or the last of
   * its group of deferred tasks; and the value signalled before the last call's last
   * signal (queue.c, signal_point and the flusher). */
  _Atomic uint64_t signal_points[VKDS__SIGNAL_RING];
  _Atomic uint64_t before_last_signal;
  _Atomic uint64_t submit_calls, submitted_tasks; /* vkds_resource_submit_counts */
  _Atomic uint64_t replayed_tasks; /* submissions of a kept recording (vkds_task_info.replay_key) */
  /* Ordering between submissions (queue.c, vkds__queue_lead_ready): whether the last
   * command buffer submitted to the queue ends in vkds's full barrier (queue_lock held),
   * and the barrier-only command buffer put before a task that leaves its leading
   * barrier to the queue (made on first use; lead_state 0: not yet, 1: ready, 2: failed). */
  bool tail_full;
  _Atomic uint64_t lead_barriers; /* how often submit_batch put it before a task (tests read it) */
  _Atomic int lead_state;
  VkCommandPool lead_pool;
  VkCommandBuffer lead_cmd;
};

/* Marks dev lost when vk is VK_ERROR_DEVICE_LOST (logging it once); then, like
 * vkds__vk_fail, records the failure and returns its vkds_result. */
vkds_result vkds__device_vk_fail(vkds__device *dev, VkResult vk, const char *what);
/* VKDS_ERROR_DEVICE_LOST (recorded) when dev is lost, else VKDS_SUCCESS. */
vkds_result vkds__device_check_lost(const vkds__device *dev, const char *what);
/* Keeps an object whose work never finished (a destroy's wait timed out) allocated and
 * reachable until the process ends, instead of freeing it under the GPU (context.c). */
void vkds__abandon(void *object);
/* How long destroying something of ctx waits for its work: ctx's destroy_timeout_ns;
 * no limit without a context (resources of other kinds). */
uint64_t vkds__destroy_timeout(const vkds_context *ctx);
/* Whether `b` still has submissions not yet released; if so, fn(user) runs when the last
 * of them is released (it does the destroy asked for now), else the caller goes on. */
bool vkds__backend_defer(vkds_backend *b, void (*fn)(void *), void *user);
/* The backend holds its resources' context (vkds__context_hold) until it is freed; the
 * Vulkan backend's init calls this. */
void vkds__backend_hold_context(vkds_backend *b, vkds_context *ctx);
/* The context the backend holds, or NULL. */
vkds_context *vkds__backend_held_context(const vkds_backend *b);
/* The device index of the backend's resource i (Vulkan), or i itself for other kinds
 * (each such resource a device of its own: vkds_task_info.data_devices, only_devices). */
uint32_t vkds__backend_device_of(const vkds_backend *b, uint32_t i);
/* Device d's bit in vkds_task_info.data_devices and only_devices; 0 from device 32 on,
 * which has none. */
static inline uint32_t vkds__device_bit(uint32_t d) { return d < 32 ? 1u << d : 0; }
/* The backend is left allocated for good (work that never ends): it lets go of its
 * context, whose own destroy then meets the same work and is left allocated too. */
void vkds__backend_abandon_context(vkds_backend *b);

/* One round of a spin-wait: tells the core that this thread only waits. */
static inline void vkds__cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* vkds_resource_lock_queue if the queue is free now; false (nothing locked) if not. */
bool vkds__resource_try_lock_queue(vkds_resource *res);
/* Whether the calling thread holds the queue's lock. */
bool vkds__resource_held_here(const vkds_resource *res);
/* Unlocks after vkds's own submits: unlike vkds_resource_unlock_queue, which forgets how
 * the queue's last command buffer ended (the application may have submitted its own). */
void vkds__resource_unlock_queue_own(vkds_resource *res);
/* Whether the queue can put its barrier before tasks (vkds__slot.needs_lead): makes the
 * barrier's command buffer on first use; false on an adopted device (the application
 * may submit to the queue without telling vkds) or when it could not be made. */
bool vkds__queue_lead_ready(vkds_resource *r);
/* Whether a task of backend b on res may leave its leading barrier to the queue
 * (vkds__slot.needs_lead): b records and submits as vkds's own Vulkan backend does (its
 * tasks' backend_data is their slot) and the queue's barrier is ready. */
bool vkds__queue_takes_lead(const vkds_backend *b, vkds_resource *res);
/* Records one global memory barrier: `src` stages' `src_access` made available and
 * visible to `dst` stages' `dst_access`. */
void vkds__cmd_barrier(const vkds__device *dev, VkCommandBuffer cmd, VkPipelineStageFlags src,
                       VkAccessFlags src_access, VkPipelineStageFlags dst, VkAccessFlags dst_access);
/* vkds's two barriers around a task's work on a queue. The leading one: compute and
 * transfer writes before compute and transfer work (the queue's own, vkds__slot.
 * needs_lead, holds the same). The full one (vkds__slot.ends_full): compute and transfer
 * writes before compute and transfer work and the host. */
void vkds__cmd_lead_barrier(const vkds__device *dev, VkCommandBuffer cmd);
void vkds__cmd_full_barrier(const vkds__device *dev, VkCommandBuffer cmd);

/* ---- queue tracking (lib/backend/queue.c) ---- */
vkds_result vkds__queue_init(vkds_resource *r);
/* The device must be idle. */
void vkds__queue_destroy(vkds_resource *r);
/* A slot whose command buffer is not pending (vkBeginCommandBuffer resets it: its pool
 * has RESET_COMMAND_BUFFER_BIT). */
/* `replay` (NULL: none) asks for a free slot that holds this recording (see
 * vkds__slot.replay_key); such a slot comes back with `replayed` set, its command buffer
 * ready to submit again. Any other slot comes back with its recording forgotten, and
 * with `record`, its command pool held by this thread (vkds__slot.recording) until
 * vkds__queue_recorded or the slot's release: record into it, nothing else. */
typedef struct vkds__replay {
  uint64_t key;
  bool timed;
  const char *label;
} vkds__replay;
vkds_result vkds__queue_acquire_slot(vkds_resource *r, const vkds__replay *replay, bool record, vkds__slot **out);
/* Call right after vkEndCommandBuffer of a slot acquired with `record`: its pool is free
 * for other threads' recordings (no effect on a slot not being recorded). */
void vkds__queue_recorded(vkds__slot *slot);
void vkds__queue_release_slot(vkds_resource *r, vkds__slot *slot);
/* Appends a submitted slot; call with queue_lock held so slots stay in value order. */
void vkds__queue_track(vkds_resource *r, vkds__slot *slot);
/* Submits the slot's ended command buffer to the queue, signalling the next timeline
 * value (*value), and tracks the slot. Once tracked, the slot belongs to the queue: a
 * concurrent reclaim may recycle it, so read nothing from it afterwards. Submissions
 * from several threads at once are coalesced: whoever holds the queue submits every
 * request waiting then, in one vkQueueSubmit (queue.c says how). */
/* may_defer: while the GPU is backed up the request may be queued for a later
 * vkQueueSubmit (queue.c: deferred submission) and the call return at once with the
 * value it will signal; waits for that value submit it first. */
vkds_result vkds__queue_submit(vkds_resource *r, vkds__slot *s, bool may_defer, uint64_t *value);
/* Submits the waiting requests; call with the queue locked (before a submission of
 * one's own, so that it comes after them). */
void vkds__queue_flush_pending(vkds_resource *r);
/* Takes the queue, submits the waiting requests, gives the queue back. */
void vkds__queue_flush(vkds_resource *r);
/* With the queue locked: submits the waiting requests and gives the caller the next
 * timeline value, which nothing else signals (a task that submits by itself). */
uint64_t vkds__queue_reserve_value(vkds_resource *r);
/* With the queue locked: the task that submitted by itself signalled `value`. */
void vkds__queue_self_submitted(vkds_resource *r, uint64_t value);
/* Recycles finished slots, delivering their completion and time reports. */
vkds_result vkds__queue_reclaim(vkds_resource *r);
/* The same, up to the last value read from the timeline (no driver call). */
vkds_result vkds__queue_reclaim_known(vkds_resource *r);
/* After a wait reached its value: reclaims what finished up to the last value read,
 * and returns once every report of finished slots has been delivered, by whichever
 * thread took them (its own deliveries excepted: a report sink that waits), deferred
 * tasks tracked meanwhile included. Its caller may then free what the reports go to (a
 * policy, a sink's data). */
void vkds__queue_settle(vkds_resource *r);
/* Waits until the timeline reaches `value`: spins up to spin_ns, then sleeps. */
vkds_result vkds__queue_wait(vkds_resource *r, uint64_t value, uint64_t timeout_ns, uint64_t spin_ns);
/* VKDS_ERROR_TIMEOUT (Vulkan's `vk`), logged as queue r's work not done after
 * `timeout_ns`, naming the vkds call it is in. */
vkds_result vkds__queue_timed_out(vkds_resource *r, VkResult vk, uint64_t timeout_ns);
/* Whether the timeline has reached `value` (VKDS_SUCCESS / VKDS_ERROR_WOULD_BLOCK). */
vkds_result vkds__queue_poll(vkds_resource *r, uint64_t value);

/* Thread-local storage for the hot paths (the select path's recycled selection, ...).
 * The library is built with TLS descriptors where the compiler has them
 * (-mtls-dialect=gnu2, lib/meson.build): a function's first access is then a call that
 * returns a fixed offset (where the library was loaded with the program), and the
 * library's TLS is allocated as glibc sees fit. It was initial-exec, ~2 ns faster a
 * select-release pair (vkds__thread_state), but that marks the whole library
 * STATIC_TLS, and a dlopen()ed library's static TLS comes out of a reserve of about
 * 1.5-2 KiB, which vkds's 1.1 KiB (the thread's last message) nearly filled: two
 * copies of vkds in one process (two plugins), or vkds beside another library with
 * 1 KiB of TLS, failed to load ("cannot allocate memory in static TLS block": a
 * packaging probe; tests/test_unload.c). */
#define VKDS__FAST_TLS _Thread_local

/* A selection: which resource, which reports go where. Defined here so that a policy's
 * select (lib/backend/policy.c) fills the recycled one in place; lib/backend/backend.c owns the rest. */
enum {
  VKDS__SEL_FREE = 0,      /* vkds_selection_create: any number of submissions */
  VKDS__SEL_PICKED = 1,    /* a policy's pick, not submitted: released so, it is UNUSED */
  VKDS__SEL_SUBMITTED = 2, /* a policy's pick, submitted (once) */
};
struct vkds_selection {
  atomic_uint refs;
  atomic_uchar state; /* VKDS__SEL_* */
  /* the context whose user allocator it came from; NULL: malloc (then it may be cached
   * for the thread's next selection). Kept across reuse. */
  const vkds_context *alloc_ctx;
  uint32_t index;
  uint32_t reports;
  vkds_backend *backend;
  uint64_t key; /* the hints' key, for the UNUSED report */
  vkds_report_sink sink;
  size_t scratch_size;
  alignas(16) unsigned char scratch[];
};

/* The calling thread's state on the select path, in one thread-local, so that a function
 * that uses several of its fields asks for the thread's block once (one TLS descriptor
 * call). fixed's select-release pair on the 2-core development box: 13.1 ns with
 * initial-exec thread-locals, 16.0 with three through descriptors, 15.3 with this one. */
typedef struct vkds__thread_state {
  /* the last released selection without scratch (NULL: none), kept for the next select
   * instead of a free and a calloc (lib/backend/backend.c) */
  vkds_selection *cached_selection;
  bool cache_registered; /* its thread-exit hook is set (backend.c) */
  bool pick_untimed;     /* set by vkds__pick_untimed during the current select (policy.c) */
} vkds__thread_state;
extern VKDS__FAST_TLS vkds__thread_state vkds__thread;

/* The base backend's slots that vkds_backend_vulkan_ops keeps (lib/backend/backend_base.c):
 * named in its table, so that a table derived from it finds every slot set. */
void vkds__backend_base_destroy(vkds_backend *b);
vkds_result vkds__backend_base_get_resources(vkds_backend *b, uint32_t *count, void *const **resources);
size_t vkds__backend_base_scratch_size(vkds_backend *b, uint32_t reports);
vkds_result vkds__backend_base_submit(vkds_backend *b, vkds_selection *sel, const vkds_task_info *info,
                                      vkds_submission **out);

/* A kernel whose arguments did not fit the push constants (vkds.glsl's spilled block):
 * their bytes, else 0 (lib/kernel/launch.c). vkds__cmd_dispatch_spilled records it as
 * vkds_cmd_dispatch would, its arguments written to `mapped`, which the GPU reads at
 * `address` (host-visible memory the caller keeps until the work is done). */
uint64_t vkds__kernel_spilled_bytes(const vkds_kernel *k);
vkds_result vkds__cmd_dispatch_spilled(VkCommandBuffer cmd, vkds_resource *res, vkds_kernel *k,
                                       const vkds_launch_info *li, void *mapped, VkDeviceAddress address);
/* The same with the arguments written into the command buffer itself
 * (vkCmdUpdateBuffer, then a barrier before the dispatch) at `offset` of `buffer`, a
 * multiple of 4, which the GPU reads at `address`: for a recording whose submission the
 * caller does not see. */
vkds_result vkds__cmd_dispatch_spilled_inline(VkCommandBuffer cmd, vkds_resource *res, vkds_kernel *k,
                                              const vkds_launch_info *li, VkBuffer buffer, VkDeviceSize offset,
                                              VkDeviceAddress address);

/* A vkds_type's name for messages ("I32", ...; "an unknown type"; lib/seq/seq.c). */
const char *vkds__type_name(vkds_type t);

/* Fills a selection (one reference, state FREE); `sink` may be NULL. */
static inline void vkds__selection_init(vkds_selection *sel, vkds_backend *b, uint32_t index, uint32_t reports,
                                        size_t scratch, const vkds_report_sink *sink) {
  /* one store of the whole struct: the object is not shared yet */
  *sel = (vkds_selection){.refs = 1, .state = VKDS__SEL_FREE, .alloc_ctx = sel->alloc_ctx, .index = index,
                          .reports = reports, .backend = b, .sink = sink ? *sink : (vkds_report_sink){0},
                          .scratch_size = scratch};
}

/* The context whose allocator backend b's memory (its selections, submissions) comes
 * from: the backend's context, or its Vulkan resources'; NULL: malloc
 * (lib/backend/backend.c). */
const vkds_context *vkds__backend_alloc_ctx(const vkds_backend *b);

/* vkds_select, with a selection that finds every candidate at capacity (or unhealthy,
 * none lost) waited out as vkds_submit waits it out: retried until the policy's
 * submit_timeout_ns (0: 10 s), then VKDS_ERROR_TIMEOUT, whose message names `what`. */
vkds_result vkds__select_waiting(vkds_policy *p, const vkds_task_info *hints, vkds_selection **out, const char *what);
/* vkds_selection_submit on a selection of `p`, with a backend's VKDS_ERROR_WOULD_BLOCK
 * (its resource cannot take the task now; nothing ran) waited out the same way. */
vkds_result vkds__submit_waiting(vkds_policy *p, vkds_selection *sel, const vkds_task_info *task, vkds_submission **out,
                                 const char *what);
/* After a task was submitted on `sel` of `p`: VKDS_ERROR_DEVICE_LOST marks the resource
 * lost for good (policy.h, VKDS_RESOURCE_LOST), as vkds_submit does; returns r. */
vkds_result vkds__policy_submitted(vkds_policy *p, vkds_selection *sel, vkds_result r);

/* vkds_selection_create without the argument and capability checks: a FREE selection
 * (lib/backend/backend.c); a policy then marks it PICKED. */
vkds_result vkds__selection_make(vkds_backend *b, uint32_t index, uint32_t reports, size_t scratch,
                                 const vkds_report_sink *sink, vkds_selection **out);

/* A submission's finishing step (lib/backend/backend.c): what must happen on the host
 * after the work is done (an algorithm's results and staged outputs written back, its
 * temporaries freed). Runs once: by the first vkds_submission_wait or _poll that sees
 * the work done (done = true; its result becomes theirs), or by the release (which waits
 * first; done = false when that wait failed, and the step then only frees). Set it
 * before the submission is handed to anyone. */
typedef vkds_result (*vkds__finish_fn)(void *user, bool done);
void vkds__submission_set_finish(vkds_submission *s, vkds__finish_fn fn, void *user);
/* Gives a submission made before its work (vkds_submission_create's record, data 0) the
 * work's wait object and data once it is submitted. */
void vkds__submission_set_work(vkds_submission *s, void *wait_object, uint64_t data);

/* Monotonic nanoseconds. */
uint64_t vkds__now_ns(void);

/* Queries the facts of a physical device. */
vkds_result vkds__device_query(const vkds_context *ctx, VkPhysicalDevice phys,
                               vkds__device_facts *facts);
void vkds__device_facts_free(const vkds_context *ctx, vkds__device_facts *facts);
/* Creates the VkDevice for dev->physical with every compute family's queues (capped
 * by max_queues, 0 = all) and the optional features vkds uses. */
vkds_result vkds__device_create(vkds__device *dev, uint32_t max_queues);
/* Reads what the application enabled on an adopted device. */
void vkds__device_adopt_features(vkds__device *dev, const vkds_embed_device *embed);
/* The subgroup size a compute pipeline on `dev` can require (its subgroupSize, through
 * VkPipelineShaderStageRequiredSubgroupSizeCreateInfo), or 0 where it cannot: without
 * Vulkan 1.3's subgroupSizeControl enabled, or compute not among the stages that allow it.
 * Under SPIR-V 1.6 a pipeline that requires none may get any size the device has. */
uint32_t vkds__device_required_subgroup_size(const vkds__device *dev);

/* ---- device filters (lib/core/filter.c) ---- */

/* A parsed filter: positive and negative terms. */
typedef struct vkds__filter vkds__filter;
vkds_result vkds__filter_parse(const vkds_context *ctx, const char *text, const char *where, vkds__filter **out);
bool vkds__filter_match(const vkds__filter *f, uint32_t index,
                        const VkPhysicalDeviceProperties *props);
void vkds__filter_free(vkds__filter *f);

/* An object that keeps pointers into the context or memory from its allocator (a Vulkan
 * backend, a policy) holds it until it is freed (or left for good): the last to let go
 * destroys the context if vkds_context_destroy was called meanwhile
 * (lib/core/context.c, which first reclaims the queues' finished work, so that destroys
 * deferred only for that work run and let go). */
void vkds__context_hold(vkds_context *ctx);
void vkds__context_let_go(vkds_context *ctx);

/* ---- the context ---- */

/* vkds_context.live_backends: the count in the low bits, and this bit once
 * vkds_context_destroy was called while the count was not 0 (the last backend's
 * destroy then destroys the context). One word, so that exactly one of the two sees
 * "destroy called and no backend left". */
#define VKDS__CONTEXT_DESTROY_PENDING 0x80000000u

/* The spares' pools (lib/memory/spares.c), each with its own budget: a call's scratch and
 * stream buffers; data staged whole (vkds_seq_bind). */
typedef enum vkds__spare_pool { VKDS__SPARES_CALL = 0, VKDS__SPARES_STAGED = 1 } vkds__spare_pool;

struct vkds_context {
  /* vkds_backend_vulkan_ops backends (every policy over its resources has one) made and
   * not yet destroyed (lib/backend/backend_vulkan.c), and VKDS__CONTEXT_DESTROY_PENDING */
  atomic_uint live_backends;
  vkds_log_fn log;
  void *log_user;
  vkds_log_level log_level;
  /* the user's allocator (a copy of vkds_context_info.allocator), lib/core/host_alloc.c */
  bool has_allocator;
  VkAllocationCallbacks allocator;

  void *loader; /* dlopen handle; NULL when adopted with the application's loader */
  vkds__instance_fns fn;
  VkInstance instance;
  uint32_t api_version; /* of the instance */
  bool instance_adopted;
  bool validation;
  bool debug_utils;
  VkDebugUtilsMessengerEXT messenger;

  uint32_t device_count;
  vkds__device *devices;
  uint32_t resource_count;
  vkds_resource *resources;

  /* kernels (lib/kernel/kernel.c) */
  pthread_mutex_t glsl_lock;
  /* held while a source missing from the cache is compiled (or loaded from disk), so
   * that threads asking for the same source at once compile it once */
  pthread_mutex_t glsl_compile_lock;
  struct vkds__glsl_entry *glsl_cache;
  uint64_t glsl_compiles, glsl_hits;
  char *pipeline_cache_dir;     /* absolute (a relative one would follow the application's chdir) */
  bool pipeline_cache_readonly; /* its files are read, new ones not saved (said once, at creation) */
  /* a compiled kernel could not be saved there (the folder removed while in use): said
   * once, not for each kernel (19 warnings in a probe's run) */
  atomic_bool spirv_save_failed;

  /* algorithms (lib/algorithm/kernels.c): compiled kernels by signature */
  pthread_mutex_t alg_lock;
  struct vkds__alg_kernel *alg_kernels;
  /* buffers kept for the next call (lib/memory/spares.c) */
  pthread_mutex_t spare_lock;
  struct vkds__spare *spares;      /* newest first */
  uint64_t spare_bytes[2];         /* their sizes by pool, each within keep_bytes */
  uint64_t keep_bytes;             /* vkds_context_info.keep_bytes, resolved */
  struct vkds__spare *spare_nodes; /* emptied list nodes, for the next put */
  void *alg_spare_call; /* one call's state kept for the next (frame.c): a blocking call's
                           allocation and free of ~6 KB were a sixth of its host work */
  vkds_scan_path scan_path; /* from the info, else VKDS_SCAN_PATH; DEFAULT: each device's rule */

  /* memory (lib/memory/memory.c, lib/memory/staging.c, lib/memory/host_copy.c), resolved from the info */
  uint64_t device_memory_limit;
  uint32_t staging_chunks;
  uint64_t staging_chunk_bytes;
  struct vkds__host_copy_pool *host_copy; /* host_copy_teams of them (host_copy.c) */
  uint32_t host_copy_teams;

  /* faults: how many of its devices were lost so far (policies recheck their resources
   * when it changes), and how long vkds_context_destroy waits for work in flight */
  atomic_uint lost_devices;
  uint64_t destroy_timeout_ns;
  /* kernels made from the context and not yet destroyed, vkds's own included, linked
   * under kernels_lock: at vkds_context_destroy, once vkds's are gone, those left are the
   * application's, destroyed then while the devices live (a warning names how many) */
  pthread_mutex_t kernels_lock;
  struct vkds_kernel *live_kernels;

  /* how often a policy over this context's queues has its backend's due reports
   * delivered before a selection (lib/backend/policy.c, lazy_report_due): at most once
   * in this many ns; VKDS_LAZY_REPORT_NS, else 20 us */
  uint64_t lazy_report_ns;
};

/* Frees the algorithm layer's kernels and buffers (lib/algorithm/kernels.c); called by
 * vkds_context_destroy once the queues are idle, before the devices go. */
void vkds__algorithm_state_free(vkds_context *ctx);

/* ---- parallel host copies (lib/memory/host_copy.c) ---- */

/* Prepares the context's copy teams (threads - 1 helpers each, started on a team's
 * first use; 0: as many processors as there are, at most 16; processors / threads
 * teams, 2 to 8). */
vkds_result vkds__host_copy_init(vkds_context *ctx, uint32_t threads);
void vkds__host_copy_destroy(vkds_context *ctx);
/* memcpy, split over a team of copy threads when it is large and one is free. */
void vkds__host_copy(vkds_context *ctx, void *dst, const void *src, uint64_t bytes);

/* ---- staging (lib/memory/staging.c) ---- */
void vkds__staging_destroy(vkds__device *dev);
/* Makes the staging ring of `res`'s device now, where a transfer of `bytes` between `b`
 * and host memory at `host` (NULL: not known yet) would go through it (to_host: a
 * download), so that the transfer cannot fail for want of it later; the ring, once made,
 * stays until the context goes. */
vkds_result vkds__staging_ready(vkds_resource *res, const vkds_buffer *b, const void *host, uint64_t bytes,
                                bool to_host);

/* Per-device pipeline caches (lib/kernel/pipeline_cache.c). */
vkds_result vkds__pipeline_cache_open(vkds__device *dev);
void vkds__pipeline_cache_close(vkds__device *dev);

/* Instance creation and the validation messenger (lib/core/instance.c). */
vkds_result vkds__instance_create(vkds_context *ctx, const vkds_context_info *info,
                                  bool validation);
void vkds__instance_destroy(vkds_context *ctx);

/* ---- raw buffers (lib/memory/buffer.c) ---- */

/* Picks the memory type for `type_bits` that has every `required` flag and, among
 * those, the most `preferred` flags; UINT32_MAX when none has the required ones. */
uint32_t vkds__memory_type(const vkds__device *dev, uint32_t type_bits,
                           VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred);
/* Creates a buffer with its own memory (mapped when host-visible). */
vkds_result vkds__buffer_create(vkds__device *dev, VkDeviceSize size, VkBufferUsageFlags usage,
                                VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred,
                                vkds__buffer *out);
void vkds__buffer_destroy(vkds__device *dev, vkds__buffer *buf);
/* Makes device writes visible to the host for a non-coherent mapping. */
void vkds__buffer_invalidate(vkds__device *dev, const vkds__buffer *buf);

/* ---- buffers and the allocator (lib/memory/memory.c, lib/memory/buffer_public.c) ---- */

typedef struct vkds__block vkds__block;

struct vkds_buffer {
  vkds__device *dev;      /* the device it was made for (host buffers: for messages only) */
  vkds_memory_kind kind;
  uint64_t size;          /* as asked for */
  VkBuffer vk;            /* VK_NULL_HANDLE for host buffers */
  uint64_t offset;        /* of the buffer's first byte in `vk` */
  VkDeviceAddress address;
  void *mapped;           /* host pointer of the first byte, or NULL */
  VkMemoryPropertyFlags flags;
  bool coherent;          /* no flush/invalidate needed */
  /* where the memory came from: a block (sub-allocated), or its own VkDeviceMemory */
  vkds__block *block;
  uint64_t reserved; /* bytes taken in the block */
  VkDeviceMemory memory;
  uint32_t type_index;
  struct vkds_buffer *next_import; /* the device's imported ranges */
  struct vkds_buffer *prev_live, *next_live; /* the device's buffers (vkds__buffer_track) */
};

/* Links a made buffer into its device's list of buffers, or takes it out (destroyed):
 * vkds_context_destroy destroys what is left there (lib/memory/memory.c). */
void vkds__buffer_track(vkds__device *dev, vkds_buffer *buf);
void vkds__buffer_untrack(vkds__device *dev, vkds_buffer *buf);

/* The device's allocator: blocks per memory type, accounting, imported ranges; also
 * notes the queue families of the device's resources (made before it). */
vkds_result vkds__allocator_init(vkds__device *dev);
/* Whether memory of these flags needs no flush or invalidation (lib/memory/memory_test.h
 * can say no for tests). */
bool vkds__memory_coherent(VkMemoryPropertyFlags flags);
/* Sets bci's sharing mode for a buffer of vkds on dev: VK_SHARING_MODE_CONCURRENT over
 * the queue families of dev's resources where they are more than one (NVIDIA's GPUs have
 * two compute families, and policies run one call's kernels on either: an exclusive
 * buffer read by a family other than the last writer's, without a queue family
 * ownership transfer, has undefined contents by the specification), else exclusive. */
void vkds__buffer_sharing(const vkds__device *dev, VkBufferCreateInfo *bci);
/* Frees every block (buffers must be gone). */
void vkds__allocator_destroy(vkds__device *dev);
/* Allocates memory for `buf` (dev, kind and size set) by the fallback order of
 * vkds_buffer_create; fills vk, offset, address, mapped, flags and the origin. */
vkds_result vkds__allocator_alloc(vkds__device *dev, vkds_buffer *buf, uint32_t flags);
void vkds__allocator_free(vkds__device *dev, vkds_buffer *buf);
/* Gives the device's empty blocks back to the driver (the one kept per memory type for
 * reuse included); whether there was any. */
bool vkds__allocator_trim(vkds__device *dev);
/* Imports `host` (buf->size bytes) into `dev` and registers the range so that
 * vkds__import_find sees it; vkds__import_unregister before vkds__allocator_free. */
vkds_result vkds__allocator_import(vkds__device *dev, vkds_buffer *buf, void *host);
void vkds__import_unregister(vkds__device *dev, vkds_buffer *buf);
/* Whether [host, host+bytes) lies inside memory imported into `dev`; if so sets *buf
 * and *offset (of `host` in it). Thread-safe. */
bool vkds__import_find(vkds__device *dev, const void *host, uint64_t bytes, vkds_buffer **buf, uint64_t *offset);
/* Whether host sequence `s` lies inside memory imported into `dev` where the device can
 * use it in place: its elements start on a multiple of a numeric type's size (as a buffer
 * sequence's must) or of 4 bytes (lib/seq/seq.c). If so sets *buf and *offset. */
bool vkds__seq_host_import(vkds__device *dev, const vkds_seq *s, vkds_buffer **buf, uint64_t *offset);
/* Ends a binding without writing anything back: its temporary, if staged, goes back to
 * the context's kept ones (the staged pool); the binding is zeroed. */
void vkds__seq_binding_drop(vkds_seq_binding *b);
/* Makes the host's writes to a non-coherent mapped range visible to the device, and the
 * device's writes visible to the host. */
void vkds__buffer_flush(const vkds_buffer *buf, uint64_t offset, uint64_t bytes);
void vkds__buffer_invalidate_range(const vkds_buffer *buf, uint64_t offset, uint64_t bytes);

/* vkds_seq_validate's check without recording a failure (the caller reports it under
 * its own name): the result, and the reason in `why` (VKDS__SEQ_WHY bytes). */
#define VKDS__SEQ_WHY 256
vkds_result vkds__seq_validate_quiet(const vkds_seq *seq, char *why);

/* Every buffer under a validated sequence, through the built-in views, must be of `ctx`
 * (VKDS_ERROR_WRONG_CONTEXT, the message starting with `name`; a user type's own parts
 * are checked where vkds_seq_bind resolves them). ORs into *devices a bit per device
 * index a buffer is on and sets *on_host where some data is host memory; either may be
 * NULL. */
vkds_result vkds__seq_check_context(const vkds_context *ctx, const char *name, const vkds_seq *s, uint32_t *devices,
                                    bool *on_host);

/* Case-insensitive substring search. */
bool vkds__str_icontains(const char *haystack, const char *needle);

/* Returns an environment variable's value, or NULL when unset or empty. */
/* ---- buffers kept for the next call (lib/memory/spares.c) ---- */
/* A buffer of this resource's device, kind and size: a kept one, else a new one. */
vkds_result vkds__spare_get(vkds_resource *res, vkds_memory_kind kind, uint64_t size, vkds_buffer **out);
/* Keeps `buf` for a later get, in `pool` (within its budget; NULL: nothing). */
void vkds__spare_put(vkds_buffer *buf, vkds__spare_pool pool);
/* The size a spare for `bytes` is made with: a class of four a power of two (at most 25%
 * more), so that buffers for data of similar sizes are found again. */
uint64_t vkds__spare_size(uint64_t bytes);
/* Destroys every kept buffer of `dev`; whether there was any (vkds_buffer_create, out of
 * memory, before it tries again). */
bool vkds__spares_drop(vkds__device *dev);
/* Destroys them all (the context's teardown). */
void vkds__spares_free(vkds_context *ctx);

const char *vkds__getenv(const char *name);
/* The longest pipeline_cache_dir vkds keeps files in (context.c): its files' paths, the
 * folder and up to ~80 bytes of name, fit the 1,024-byte buffers of
 * lib/kernel/pipeline_cache.c and spirv_cache.c. */
#define VKDS__CACHE_DIR_MAX 900u
/* Whether a switch in the environment is on: set, not empty, and not 0, false or off
 * (any case): VKDS_VALIDATION, VKDS_PIPELINE_STATS, VKDS_DUMP_ALGORITHMS. */
bool vkds__getenv_on(const char *name);
/* An environment variable's value as a decimal integer in [min, max] (the tuning
 * knobs): true and *out set when it is one, false when it is unset, empty, anything
 * but digits after an optional '-', or out of the range. */
bool vkds__getenv_int(const char *name, int64_t min, int64_t max, int64_t *out);
/* The same, for a positive value up to INT32_MAX; 0 when there is none. */
uint32_t vkds__getenv_positive(const char *name);

#endif
