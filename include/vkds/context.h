/* vkds/context.h: the context, its devices and their queues as resources.
 *
 * A context owns (or adopts) one VkInstance and a VkDevice per chosen physical device,
 * and exposes every compute-capable VkQueue of those devices as a vkds_resource. It is
 * the root object: everything else (policies, kernels, buffers) belongs to one context.
 */
#ifndef VKDS_CONTEXT_H
#define VKDS_CONTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <vulkan/vulkan_core.h>

#include "vkds/export.h"
#include "vkds/result.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vkds_context vkds_context;
typedef struct vkds_resource vkds_resource;

/* ---- embedding: building a context over the application's own Vulkan objects ------ */

/* One of the application's queues, created without flags (vkds checks that the device's
 * vkGetDeviceQueue gives this VkQueue for the family and index: VKDS_ERROR_INVALID_ARGUMENT
 * otherwise, e.g. for a queue of another VkDevice). The family and index must be ones the
 * device was created with: an index past the family's queueCount is refused, but one
 * below it that the application's VkDeviceCreateInfo did not ask for cannot be told apart
 * (Vulkan has no query for it), and asking the device for it is invalid usage that the
 * validation layer reports. */
typedef struct vkds_embed_queue {
  VkQueue queue;   /* REQUIRED */
  uint32_t family; /* the queue family it was created in; must support compute */
  uint32_t index;  /* its index within that family */
} vkds_embed_queue;

/* One of the application's devices and the queues vkds may use on it. */
typedef struct vkds_embed_device {
  VkPhysicalDevice physical_device; /* REQUIRED */
  VkDevice device;                  /* REQUIRED; vkds never destroys it */
  uint32_t queue_count;             /* REQUIRED, > 0 */
  const vkds_embed_queue *queues;
  /* The features the application enabled when it created `device`, as the pNext chain
   * of a VkPhysicalDeviceFeatures2 (Vulkan11/12/13 feature structs are read from it).
   * NULL: vkds assumes none of the features it uses are enabled. vkds needs
   * timelineSemaphore (Vulkan 1.2 core): a device without it is VKDS_ERROR_UNSUPPORTED.
   * The algorithms (algorithm.h) need shaderInt64 and bufferDeviceAddress too (without
   * them each is VKDS_ERROR_UNSUPPORTED, naming them); kernels and buffers work without.
   * 64-bit atomics and float64 are used where enabled, as is
   * hostQueryReset (task times then cost the GPU less: no query reset in each task), and
   * on Vulkan 1.3 subgroupSizeControl (the sorts' faster counters) and maintenance4: with
   * it off on any device, GLSL compiles for Vulkan 1.2 (SPIR-V 1.5) in the whole context,
   * since glslang's SPIR-V 1.6 declares work group sizes in a way that needs it. */
  const VkPhysicalDeviceFeatures2 *enabled_features;
  /* The device extensions the application enabled (for push descriptors and
   * VK_EXT_external_memory_host). */
  uint32_t enabled_extension_count;
  const char *const *enabled_extensions;
  /* Queues submitted to by the application outside vkds must be locked against vkds's
   * own submissions: give a lock (or leave NULL if only vkds submits to them, and only
   * through this one context: a VkQueue embedded in two live contexts is submitted to by
   * both, so both must give the same lock; vkds_context_create refuses the second
   * with VKDS_ERROR_INVALID_ARGUMENT where either gives none, but cannot tell two locks
   * apart: that both lock one mutex is the application's to make sure). vkds
   * calls queue_lock around each vkQueueSubmit of its own, from the thread that submits
   * (a caller of vkds, or a queue's flusher thread of vkds's, which submits tasks
   * queued while the GPU was busy), and never holds it while it waits for the GPU.
   * vkds_submission_poll never takes it (its answer never waits for the lock). A
   * thread that holds the lock must not call vkds functions that submit or wait on that
   * queue (they take it). To submit after the tasks vkds has queued, take the queue
   * with vkds_resource_lock_queue() (which calls queue_lock) rather than the lock
   * alone. Each VkQueue may be listed once in the whole description
   * (VKDS_ERROR_INVALID_ARGUMENT otherwise). */
  void (*queue_lock)(void *user, VkQueue queue);
  void (*queue_unlock)(void *user, VkQueue queue);
  void *queue_lock_user;
} vkds_embed_device;

typedef struct vkds_embed_info {
  VkInstance instance;                         /* REQUIRED; vkds never destroys it */
  PFN_vkGetInstanceProcAddr get_instance_proc_addr; /* NULL: the system loader's */
  uint32_t api_version; /* the instance's apiVersion; 0: VK_API_VERSION_1_2 assumed; below
                         * 1.2: VKDS_ERROR_UNSUPPORTED */
  /* true when the application enabled VK_EXT_debug_utils on the instance (then vkds
   * labels its work for RenderDoc and Nsight). */
  bool debug_utils;
  uint32_t device_count; /* REQUIRED, > 0 */
  const vkds_embed_device *devices;
} vkds_embed_info;

/* ---- creation ---------------------------------------------------------------------- */

/* Which kernel runs scans on a device (vkds/algorithm.h, "Scans", has the rule and
 * what each costs). */
typedef enum vkds_scan_path {
  VKDS_SCAN_PATH_DEFAULT = 0,  /* the device's rule, or VKDS_SCAN_PATH from the environment */
  VKDS_SCAN_PATH_SINGLE = 1,   /* one pass: a chained scan with decoupled look-back */
  VKDS_SCAN_PATH_PORTABLE = 2, /* reduce-then-scan: three passes, never waits on another work group */
} vkds_scan_path;

/* Zero-initialised means: every device, every compute queue, no validation unless
 * VKDS_VALIDATION=1, vkds's warnings and errors to no one (see vkds_last_error_message);
 * the validation layer's warnings and errors, when it is on, to stderr. */
typedef struct vkds_context_info {
  /* Which physical devices to use, e.g. "gpu", "!cpu", "0,2", "name=llvmpipe",
   * "vendor=0x10de". Comma-separated terms; a term is an index, a type (gpu, cpu,
   * discrete, integrated, virtual, other), vendor=ID (decimal or 0x hex) or
   * name=SUBSTRING (case-insensitive); '!' in front excludes. A device is used when it
   * matches any positive term (or there is none) and no negative term. The
   * VKDS_DEVICES environment variable, same syntax, further restricts the choice unless
   * ignore_env is set. NULL or "": no restriction. */
  const char *devices;
  /* At most this many queues per compute-capable queue family; 0: all of them. */
  uint32_t max_queues_per_family;
  /* Create this many VkDevices on each chosen physical device (each with its own
   * queues, so its own resources); 0 or 1: one. Several devices on a machine that has
   * one (lavapipe) is how policies over "several devices" are tested there. At most 64
   * (VKDS_ERROR_INVALID_ARGUMENT past it). */
  uint32_t devices_per_physical;
  /* Enable the Khronos validation layer and route its messages to the logger, or
   * without one its warnings and errors to stderr (also enabled by VKDS_VALIDATION=1 in
   * the environment). Asking for it when the layer is not installed fails with
   * VKDS_ERROR_UNSUPPORTED. */
  bool validation;
  /* Ignore VKDS_DEVICES, VKDS_VALIDATION, VKDS_SCAN_PATH and VKDS_LAZY_REPORT_NS. The
   * other variables (README.md, "Environment variables": the tuning and measuring
   * knobs, VKDS_ALGORITHM_ACCESS, VKDS_DUMP_ALGORITHMS, VKDS_PIPELINE_STATS) apply to
   * every context, this one included. */
  bool ignore_env;
  /* The logger, its user pointer, and the least severe level it receives (a level above
   * VKDS_LOG_ERROR: nothing is logged). */
  vkds_log_fn log;
  void *log_user;
  vkds_log_level log_level;
  /* The Vulkan loader to open; NULL or "": "libvulkan.so.1" (then "libvulkan.so"). */
  const char *vulkan_library;
  /* A folder where vkds keeps each device's VkPipelineCache and compiled GLSL between
   * runs (one file per device kind, one per kernel); made, with its parents, where it is
   * missing; one that cannot be made (a warning says why), one longer than 900 bytes,
   * or NULL or "": in memory only. A relative path is taken from the current folder at
   * vkds_context_create, once. One vkds cannot write to is read, and nothing new is
   * saved (said once, at creation). vkds never deletes its files: the folder grows by
   * a file for each distinct kernel (its source, kept to be compared, and its SPIR-V: a
   * few KB for a small kernel of your own, 20 to 80 KB for one of an algorithm's
   * generated kernels, of which a call may make several, e.g. a sort 2 or 3), plus what
   * the driver keeps in its pipeline cache, and is yours to trim (any file may be
   * deleted while no context uses the folder). */
  const char *pipeline_cache_dir;
  /* The application name given to the VkInstance; NULL: "vkds". */
  const char *app_name;
  /* Build the context over the application's Vulkan objects instead of creating its
   * own; `devices`, `max_queues_per_family`, `validation` and `vulkan_library` are then
   * ignored (the application chose them), as are VKDS_DEVICES and VKDS_VALIDATION. */
  const vkds_embed_info *embed;
  /* Memory (vkds/buffer.h, vkds/staging.h). A cap on the bytes vkds allocates from each
   * device's device-local heaps; past it, buffers fall back to other memory. 0: none
   * (the driver's own limits apply). */
  uint64_t device_memory_limit;
  /* The staging area of each device: this many chunks of this many bytes, 0: 4 chunks
   * of 8 MiB. More and larger chunks overlap more, at the cost of host memory. At most
   * 64 chunks of 4 KiB to 1 GiB each (else vkds_context_create is
   * VKDS_ERROR_INVALID_ARGUMENT); below ~1 MiB transfers slow down sharply. */
  uint32_t staging_chunks;
  uint64_t staging_chunk_bytes;
  /* Threads that copy a large host range in parallel (staging, mapped memory), the
   * calling thread included; 0: the number of processors, at most 16. 1: no helpers. At
   * most 256 (VKDS_ERROR_INVALID_ARGUMENT past it). Copies at the same time (several
   * devices fed at once, several threads' transfers) each get such a team, up to
   * processors / threads teams (at least 2, at most 8); one that finds every team busy
   * copies on its own thread. */
  uint32_t host_copy_threads;
  /* The scan path of every device of the context, overriding the rule and
   * VKDS_SCAN_PATH (whose values are "single" and "portable"); DEFAULT: VKDS_SCAN_PATH
   * when set (and not ignore_env), else each device's rule. A device that cannot run
   * the single pass runs the portable one. See vkds_resource_scan_path(). */
  vkds_scan_path scan_path;
  /* How long vkds_context_destroy (and the last vkds_policy_release) waits for vkds's
   * work still in flight; 0: 10 seconds; UINT64_MAX: no limit. Work that is not done
   * by then (a kernel that never ends) is not destroyed under the GPU: the call logs an
   * error and leaves the context's Vulkan objects and memory allocated until the process
   * ends (see vkds_context_destroy). */
  uint64_t destroy_timeout_ns;
  /* Host memory, the way Vulkan takes it. NULL: malloc and free for vkds, the driver's
   * own allocator for Vulkan. Otherwise vkds copies the struct (this pointer need not
   * outlive vkds_context_create; pUserData and the three functions must outlive the
   * context) and:
   * - makes every host allocation of the context and of everything made from it
   *   (resources, devices' bookkeeping, policies and their backends, selections,
   *   submissions, kernels, GLSL caches, buffers, staging, algorithms' generated
   *   sources and kernels, temporaries) through pfnAllocation, pfnReallocation and
   *   pfnFree, with VK_SYSTEM_ALLOCATION_SCOPE_OBJECT for what lives with an object and
   *   VK_SYSTEM_ALLOCATION_SCOPE_COMMAND for what one call frees before it returns;
   * - passes it as pAllocator to every vkCreate*, vkAllocate*, vkDestroy* and vkFree*
   *   it calls (instance, messenger, devices, buffers, memory, semaphores, command
   *   pools, pipelines, ...), the same pointer on creation and destruction. On an
   *   embedded context vkds creates no instance or device: only the objects it creates
   *   on the application's device get it.
   * An allocation that fails is VKDS_ERROR_OUT_OF_HOST_MEMORY (or the VkResult's error
   * where a Vulkan call failed), and nothing vkds allocated is left behind.
   * Not through it: glslang and SPIRV-Tools (C++ libraries inside vkds that allocate
   * through the global operator new and have no hooks: GLSL compiles and SPIR-V
   * validation), allocations the Vulkan loader, layers or driver make outside the calls
   * vkds passes it to (e.g. at dlopen, or per physical device), glslang's process-wide
   * set-up (once per process), the per-thread cached selection of contexts without an
   * allocator (none is cached for a context with one), and the C library's own (dlopen
   * of the loader, fopen of pipeline_cache_dir's files, thread stacks).
   * pfnInternalAllocation/pfnInternalFree are only Vulkan's to call. pfnAllocation,
   * pfnReallocation and pfnFree must all be set, and the two notifications both or
   * neither (VKDS_ERROR_INVALID_ARGUMENT otherwise). */
  const VkAllocationCallbacks *allocator;
  /* The most bytes of temporary device buffers the context keeps for the next calls, in
   * each of its two pools (vkds/algorithm.h: the calls' scratch and stream buffers; data
   * staged whole). 0: eight staging rings' worth (256 MiB by default), or where the
   * context has a discrete GPU and no device_memory_limit, a sixteenth of its largest
   * device-local heap up to 2 GiB if that is more (2 GiB on a GPU of 32 GiB or more). A
   * host histogram, sort or compaction of data larger than this makes its staging
   * buffers each call (a 1 GiB buffer took 21 ms to make and 19.5 ms to destroy on an
   * H200: a 2^28-element u32 host histogram took 62-69 ms so, 23 ms with its buffer
   * kept). The cost is device memory held until the context goes, vkds_context_trim, or
   * a device running out (kept buffers are given back first, then the allocation is
   * tried again); nothing is held before a call needed it. At most 2^40
   * (VKDS_ERROR_INVALID_ARGUMENT past it). */
  uint64_t keep_bytes;
} vkds_context_info;

/* Creates a context. Returns VKDS_SUCCESS and sets *out, or: VKDS_ERROR_INVALID_ARGUMENT
 * (NULL pointers, a malformed device filter, a bad embed description, an unknown
 * scan_path or VKDS_SCAN_PATH value),
 * VKDS_ERROR_NO_VULKAN (no loader), VKDS_ERROR_NO_DEVICE (no device matched: the
 * message lists what was found), VKDS_ERROR_UNSUPPORTED (validation asked for but not
 * installed), VKDS_ERROR_VULKAN and the out-of-memory errors. On failure *out is NULL. */
VKDS_API vkds_result vkds_context_create(const vkds_context_info *info, vkds_context **out);

/* Waits for vkds's work on the context's queues to finish, then destroys everything vkds
 * created. Objects it adopted (embedding) are left alone. NULL is a no-op. Every object
 * made from the context must be destroyed first: device buffers still alive have their
 * memory freed here, kernels still alive are destroyed here, both named in a warning
 * (VKDS_LOG_WARN, how many of each), and none of their handles may be used, nor
 * destroyed, afterwards. Policies and backends (and their submissions and selections)
 * still alive, deferred policies not yet initialized included, are reported in one
 * error (VKDS_LOG_ERROR; it does not count them), and the context then lives on,
 * whole, until the last of them is released, whose release destroys it as this call
 * would have (its work waited for, the warnings above logged then); everything made
 * from it stays usable until then, but it takes no new policy or backend (their
 * creation, and a deferred policy's vkds_policy_init, are VKDS_ERROR_INVALID_ARGUMENT).
 * The wait is bounded by vkds_context_info.destroy_timeout_ns (default 10 s). Work still
 * running then (a kernel that never ends, a task waiting on a semaphore nobody signals)
 * is never destroyed under the GPU: the call logs an error and returns, leaving the
 * context's Vulkan objects and memory allocated until the process ends (vkds's own
 * allocations stay reachable; what the driver and the validation layer allocated for
 * those objects, a leak checker may still report: lavapipe, ~0.9 MB a device with the
 * layer, ~50 bytes without). Work on a lost device (VKDS_ERROR_DEVICE_LOST) is not
 * waited for: its objects are destroyed. */
VKDS_API void vkds_context_destroy(vkds_context *ctx);

/* Gives back, now, every device buffer the context keeps for the next algorithm calls
 * (keep_bytes' pools), and the memory blocks (vkds/buffer.h) left with no buffer in
 * them, as a device that runs out of memory would; later calls make what they need
 * again. For an application about to allocate much device memory of its own.
 * Thread-safe; calls running meanwhile keep the buffers they hold. Returns the bytes of
 * the kept buffers given back; 0 for NULL. */
VKDS_API uint64_t vkds_context_trim(vkds_context *ctx);

/* Number of resources (compute queues) in the context; 0 for NULL. */
VKDS_API uint32_t vkds_context_resource_count(const vkds_context *ctx);

/* The i-th resource, ordered by device, then family, then queue index; NULL when i is
 * out of range or ctx is NULL. Resources live as long as their context. */
VKDS_API vkds_resource *vkds_context_resource(const vkds_context *ctx, uint32_t i);

/* Number of VkDevices in the context; 0 for NULL. */
VKDS_API uint32_t vkds_context_device_count(const vkds_context *ctx);

/* Whether vkds enabled the validation layer on this context (vkds_context_info.validation
 * or VKDS_VALIDATION). An embedded context reports false: the layers the application put
 * on its own instance are its own. */
VKDS_API bool vkds_context_validation_enabled(const vkds_context *ctx);

/* The context's VkInstance (created or adopted); VK_NULL_HANDLE for NULL. */
VKDS_API VkInstance vkds_context_vk_instance(const vkds_context *ctx);

/* ---- resources --------------------------------------------------------------------- */

typedef enum vkds_device_type {
  VKDS_DEVICE_OTHER = 0,
  VKDS_DEVICE_INTEGRATED = 1,
  VKDS_DEVICE_DISCRETE = 2,
  VKDS_DEVICE_VIRTUAL = 3,
  VKDS_DEVICE_CPU = 4,
} vkds_device_type; /* same values as VkPhysicalDeviceType */

/* A short name for a device type: "other", "integrated", "discrete", "virtual", "cpu";
 * "other" for values not in vkds_device_type. Never NULL. */
VKDS_API const char *vkds_device_type_str(vkds_device_type type);

#define VKDS_MAX_HEAPS 16

typedef struct vkds_heap_info {
  uint64_t size;
  bool device_local;
} vkds_heap_info;

/* What a resource is: its queue and the facts of the device the queue belongs to. */
typedef struct vkds_resource_info {
  uint32_t index;        /* in the context */
  uint32_t device_index; /* the context's device it belongs to */
  bool adopted;          /* the VkDevice came from the application (embedding) */

  /* device identity */
  char device_name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
  vkds_device_type device_type;
  uint32_t vendor_id, device_id;
  uint8_t device_uuid[VK_UUID_SIZE];
  uint8_t driver_uuid[VK_UUID_SIZE];
  uint32_t driver_id; /* VkDriverId */
  char driver_name[VK_MAX_DRIVER_NAME_SIZE];
  char driver_info[VK_MAX_DRIVER_INFO_SIZE];
  uint32_t api_version;    /* of the physical device */
  uint32_t driver_version; /* vendor-encoded */

  /* the queue */
  uint32_t queue_family, queue_index;
  VkQueueFlags queue_flags;
  uint32_t family_queue_count; /* queues in the family on this device */
  bool timestamps;             /* the family supports timestamp queries */
  uint32_t timestamp_valid_bits;
  float timestamp_period_ns; /* nanoseconds per timestamp tick */

  /* memory */
  uint32_t heap_count;
  vkds_heap_info heaps[VKDS_MAX_HEAPS];
  bool device_local_host_visible; /* a memory type both device-local and host-visible */

  /* compute limits */
  uint32_t max_work_group_count[3];
  uint32_t max_work_group_size[3];
  uint32_t max_work_group_invocations;
  uint32_t max_push_constants_size;
  uint32_t max_storage_buffer_range;
  uint32_t max_shared_memory_size;
  uint32_t subgroup_size;
  VkSubgroupFeatureFlags subgroup_operations; /* supported in compute shaders */

  /* features: each is true only when the device has it *and* it is enabled */
  bool buffer_device_address;
  bool timeline_semaphore;
  bool shader_int64;
  bool shader_buffer_int64_atomics;
  bool shader_float64;
  bool external_memory_host; /* VK_EXT_external_memory_host */
  bool push_descriptor;      /* VK_KHR_push_descriptor */
} vkds_resource_info;

/* Fills *out with the resource's facts. VKDS_ERROR_INVALID_ARGUMENT for NULL. */
VKDS_API vkds_result vkds_resource_get_info(const vkds_resource *res, vkds_resource_info *out);

/* The raw Vulkan handles behind a resource, for applications that record their own
 * work. Any pointer may be NULL. VKDS_ERROR_INVALID_ARGUMENT for a NULL resource.
 * The queue must not be submitted to outside vkds without vkds_resource_lock_queue. */
VKDS_API vkds_result vkds_resource_vk_handles(const vkds_resource *res,
                                              VkPhysicalDevice *physical_device,
                                              VkDevice *device, VkQueue *queue);

/* Lock and unlock the resource's VkQueue (Vulkan queues are externally synchronized);
 * for applications that submit to a vkds-created queue themselves. The lock first puts
 * on the queue every vkds task submitted before it (vkds_submit may defer tasks while
 * the queue is backed up), so what the holder submits runs after them. After an unlock vkds
 * assumes the application submitted work of its own, and orders its next algorithm call
 * after that work with a full barrier (between vkds's own calls the barrier at the end
 * of one call orders it before the next). The holder may call vkds on this queue
 * meanwhile (vkds_upload, vkds_download, launches and algorithm calls a policy sends here,
 * their waits): they submit under its hold, in the order of the calls, after what was
 * pending; a task that submits by itself (VKDS_TASK_SELF_SUBMIT) is
 * VKDS_ERROR_INVALID_ARGUMENT there. Another thread's submissions to the queue wait for
 * the unlock (deferred ones are submitted then). Not recursive: a second
 * vkds_resource_lock_queue by the holder waits for ever. */
VKDS_API void vkds_resource_lock_queue(vkds_resource *res);
VKDS_API void vkds_resource_unlock_queue(vkds_resource *res);

/* The context a resource belongs to; NULL for NULL. */
VKDS_API vkds_context *vkds_resource_context(const vkds_resource *res);

/* How many vkQueueSubmit calls vkds made on the resource's queue (*calls) for how many
 * submissions (*tasks), since the context was created. Tasks submitted from several
 * threads at once share calls (coalescing), so tasks / calls is the mean batch. Either
 * pointer may be NULL; a NULL resource gives zeros. */
VKDS_API void vkds_resource_submit_counts(const vkds_resource *res, uint64_t *calls, uint64_t *tasks);

/* How many of the resource's submissions reused an earlier recording instead of
 * recording again (vkds_task_info.replay_key: vkds's algorithms set it for reductions
 * and element-wise calls whose data is passed by device address, so that the same call
 * again, on the same buffers with the same arguments, records nothing). 0 for NULL. */
VKDS_API uint64_t vkds_resource_replay_count(const vkds_resource *res);

#ifdef __cplusplus
}
#endif
#endif
