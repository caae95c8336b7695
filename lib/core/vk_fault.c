/* lib/core/vk_fault.c: Vulkan fault injection for tests (lib/core/vk_fault.h says what).
 *
 * A wrapper must find the real entry point of the device its first argument belongs
 * to. VkDevice, VkQueue and VkCommandBuffer are dispatchable handles: the Vulkan loader
 * stores its dispatch table pointer in their first word, the same for a device and its
 * queues and command buffers (the loader-ICD interface requires it). That word is the
 * key of the registry below, so one lookup serves all three. */
#include "internal.h"
#include "vk_fault.h"

#include <string.h>
#include <time.h>

#define MAX_DEVICES 64

typedef struct wrapped {
  const void *key; /* the loader's dispatch pointer of the device */
  VkDevice device;
  struct VolkDeviceTable real;
  bool lost;
} wrapped;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool installed;
static wrapped devices[MAX_DEVICES];
static uint32_t device_count, next_victim;
static vkds__vk_fault_plan plan;
static const void *plan_key;
static uint64_t calls;
static bool fired;

static const void *key_of(const void *handle) { return *(const void *const *)handle; }

void vkds__vk_fault_install(void) { atomic_store(&installed, true); }

void vkds__vk_fault_arm(const vkds__vk_fault_plan *p) {
  pthread_mutex_lock(&lock);
  plan = p ? *p : (vkds__vk_fault_plan){0};
  plan_key = p && p->device ? key_of(p->device) : NULL;
  calls = 0;
  fired = false;
  pthread_mutex_unlock(&lock);
}

uint64_t vkds__vk_fault_calls(void) {
  pthread_mutex_lock(&lock);
  uint64_t n = calls;
  pthread_mutex_unlock(&lock);
  return n;
}

bool vkds__vk_fault_fired(void) {
  pthread_mutex_lock(&lock);
  bool f = fired;
  pthread_mutex_unlock(&lock);
  return f;
}

static wrapped *find(const void *key) {
  for (uint32_t i = 0; i < device_count; ++i)
    if (devices[i].key == key) return &devices[i];
  return NULL;
}

/* A delay the plan puts after the calling thread's current driver call (late()). */
static _Thread_local uint64_t delay_due;

static void late(void) {
  if (!delay_due) return;
  struct timespec ts = {.tv_sec = (time_t)(delay_due / 1000000000u), .tv_nsec = (long)(delay_due % 1000000000u)};
  delay_due = 0;
  nanosleep(&ts, NULL);
}

/* What a wrapper does first: finds the real table, and decides whether this call fails
 * (or, not failing, returns late). `lossy`: a lost device fails this call. */
static bool intercept(const void *handle, const char *name, bool lossy, const struct VolkDeviceTable **real,
                      VkResult *result) {
  const void *key = key_of(handle);
  pthread_mutex_lock(&lock);
  wrapped *w = find(key);
  *real = &w->real; /* wrapped devices only reach here */
  bool fail = false;
  VkDevice drain = VK_NULL_HANDLE;
  if (w->lost && lossy) {
    fail = true;
    *result = VK_ERROR_DEVICE_LOST;
  } else if ((!plan.function || strcmp(plan.function, name) == 0) && (!plan_key || plan_key == key)) {
    ++calls;
    if (plan.nth && calls == plan.nth) {
      fail = fired = true;
      *result = plan.result;
      if (plan.lose_device && !w->lost) w->lost = true, drain = w->device;
    } else {
      delay_due = plan.delay_ns;
    }
  }
  pthread_mutex_unlock(&lock);
  /* A lost device runs nothing more: let what it was running end now, so that objects
   * vkds destroys afterwards are idle, as they are on a really lost device. (Waiting
   * for the whole device needs its queues to itself: a test that loses a device must
   * not submit to it from another thread at that moment.) */
  if (drain) (*real)->vkDeviceWaitIdle(drain);
  return fail;
}

/* One wrapper per failable entry point vkds calls: WRAP(name, lossy, (params), first
 * parameter, (arguments)). */
#define WRAP(name, lossy, params, first, args)                                              \
  static VkResult VKAPI_PTR wrap_##name params {                                            \
    const struct VolkDeviceTable *real;                                                     \
    VkResult injected;                                                                      \
    if (intercept(first, #name, lossy, &real, &injected)) return injected;                  \
    VkResult vr = real->name args;                                                          \
    late();                                                                                 \
    return vr;                                                                              \
  }

#define ALLOC const VkAllocationCallbacks *a
WRAP(vkAllocateMemory, false, (VkDevice d, const VkMemoryAllocateInfo *i, ALLOC, VkDeviceMemory *o), d, (d, i, a, o))
WRAP(vkCreateBuffer, false, (VkDevice d, const VkBufferCreateInfo *i, ALLOC, VkBuffer *o), d, (d, i, a, o))
WRAP(vkBindBufferMemory, false, (VkDevice d, VkBuffer b, VkDeviceMemory m, VkDeviceSize off), d, (d, b, m, off))
WRAP(vkMapMemory, false, (VkDevice d, VkDeviceMemory m, VkDeviceSize off, VkDeviceSize size, VkMemoryMapFlags f, void **o),
     d, (d, m, off, size, f, o))
WRAP(vkFlushMappedMemoryRanges, false, (VkDevice d, uint32_t n, const VkMappedMemoryRange *r), d, (d, n, r))
WRAP(vkInvalidateMappedMemoryRanges, false, (VkDevice d, uint32_t n, const VkMappedMemoryRange *r), d, (d, n, r))
WRAP(vkCreateSemaphore, false, (VkDevice d, const VkSemaphoreCreateInfo *i, ALLOC, VkSemaphore *o), d, (d, i, a, o))
WRAP(vkCreateCommandPool, false, (VkDevice d, const VkCommandPoolCreateInfo *i, ALLOC, VkCommandPool *o), d, (d, i, a, o))
WRAP(vkResetCommandPool, false, (VkDevice d, VkCommandPool p, VkCommandPoolResetFlags f), d, (d, p, f))
WRAP(vkResetCommandBuffer, false, (VkCommandBuffer c, VkCommandBufferResetFlags f), c, (c, f))
WRAP(vkBeginCommandBuffer, false, (VkCommandBuffer c, const VkCommandBufferBeginInfo *i), c, (c, i))
WRAP(vkEndCommandBuffer, false, (VkCommandBuffer c), c, (c))
WRAP(vkQueueSubmit, true, (VkQueue q, uint32_t n, const VkSubmitInfo *s, VkFence f), q, (q, n, s, f))
WRAP(vkWaitSemaphores, true, (VkDevice d, const VkSemaphoreWaitInfo *i, uint64_t t), d, (d, i, t))
WRAP(vkGetSemaphoreCounterValue, true, (VkDevice d, VkSemaphore s, uint64_t *v), d, (d, s, v))
WRAP(vkCreateQueryPool, false, (VkDevice d, const VkQueryPoolCreateInfo *i, ALLOC, VkQueryPool *o), d, (d, i, a, o))
WRAP(vkGetQueryPoolResults, true,
     (VkDevice d, VkQueryPool p, uint32_t first, uint32_t n, size_t size, void *data, VkDeviceSize stride,
      VkQueryResultFlags f),
     d, (d, p, first, n, size, data, stride, f))
WRAP(vkCreateShaderModule, false, (VkDevice d, const VkShaderModuleCreateInfo *i, ALLOC, VkShaderModule *o), d,
     (d, i, a, o))
WRAP(vkCreatePipelineLayout, false, (VkDevice d, const VkPipelineLayoutCreateInfo *i, ALLOC, VkPipelineLayout *o), d,
     (d, i, a, o))
WRAP(vkCreateDescriptorSetLayout, false,
     (VkDevice d, const VkDescriptorSetLayoutCreateInfo *i, ALLOC, VkDescriptorSetLayout *o), d, (d, i, a, o))
WRAP(vkCreatePipelineCache, false, (VkDevice d, const VkPipelineCacheCreateInfo *i, ALLOC, VkPipelineCache *o), d,
     (d, i, a, o))
WRAP(vkGetPipelineCacheData, false, (VkDevice d, VkPipelineCache c, size_t *size, void *data), d, (d, c, size, data))
WRAP(vkCreateFence, false, (VkDevice d, const VkFenceCreateInfo *i, ALLOC, VkFence *o), d, (d, i, a, o))
WRAP(vkWaitForFences, true, (VkDevice d, uint32_t n, const VkFence *f, VkBool32 all, uint64_t t), d, (d, n, f, all, t))
WRAP(vkResetFences, false, (VkDevice d, uint32_t n, const VkFence *f), d, (d, n, f))
WRAP(vkCreateDescriptorPool, false, (VkDevice d, const VkDescriptorPoolCreateInfo *i, ALLOC, VkDescriptorPool *o), d,
     (d, i, a, o))
WRAP(vkGetMemoryHostPointerPropertiesEXT, false,
     (VkDevice d, VkExternalMemoryHandleTypeFlagBits t, const void *p, VkMemoryHostPointerPropertiesEXT *o), d,
     (d, t, p, o))
#undef ALLOC

/* The two whose failure the specification defines their outputs for: every handle
 * VK_NULL_HANDLE. */
static VkResult VKAPI_PTR wrap_vkCreateComputePipelines(VkDevice d, VkPipelineCache c, uint32_t n,
                                                       const VkComputePipelineCreateInfo *i,
                                                       const VkAllocationCallbacks *a, VkPipeline *o) {
  const struct VolkDeviceTable *real;
  VkResult injected;
  if (!intercept(d, "vkCreateComputePipelines", false, &real, &injected)) {
    VkResult vr = real->vkCreateComputePipelines(d, c, n, i, a, o);
    late();
    return vr;
  }
  for (uint32_t k = 0; k < n; ++k) o[k] = VK_NULL_HANDLE;
  return injected;
}

static VkResult VKAPI_PTR wrap_vkAllocateCommandBuffers(VkDevice d, const VkCommandBufferAllocateInfo *i,
                                                       VkCommandBuffer *o) {
  const struct VolkDeviceTable *real;
  VkResult injected;
  if (!intercept(d, "vkAllocateCommandBuffers", false, &real, &injected)) {
    VkResult vr = real->vkAllocateCommandBuffers(d, i, o);
    late();
    return vr;
  }
  for (uint32_t k = 0; k < i->commandBufferCount; ++k) o[k] = VK_NULL_HANDLE;
  return injected;
}

/* vkDeviceWaitIdle waits for what really runs even when it fails (see the header). */
static VkResult VKAPI_PTR wrap_vkDeviceWaitIdle(VkDevice d) {
  const struct VolkDeviceTable *real;
  VkResult injected;
  bool fail = intercept(d, "vkDeviceWaitIdle", true, &real, &injected);
  VkResult vr = real->vkDeviceWaitIdle(d);
  late();
  return fail ? injected : vr;
}

#define FUNCTIONS(X)                                                                        \
  X(vkAllocateMemory)                                                                       \
  X(vkCreateBuffer)                                                                         \
  X(vkBindBufferMemory)                                                                     \
  X(vkMapMemory)                                                                            \
  X(vkFlushMappedMemoryRanges)                                                              \
  X(vkInvalidateMappedMemoryRanges)                                                         \
  X(vkCreateSemaphore)                                                                      \
  X(vkCreateCommandPool)                                                                    \
  X(vkAllocateCommandBuffers)                                                               \
  X(vkResetCommandPool)                                                                     \
  X(vkResetCommandBuffer)                                                                   \
  X(vkBeginCommandBuffer)                                                                   \
  X(vkEndCommandBuffer)                                                                     \
  X(vkQueueSubmit)                                                                          \
  X(vkWaitSemaphores)                                                                       \
  X(vkGetSemaphoreCounterValue)                                                             \
  X(vkCreateQueryPool)                                                                      \
  X(vkGetQueryPoolResults)                                                                  \
  X(vkCreateShaderModule)                                                                   \
  X(vkCreatePipelineLayout)                                                                 \
  X(vkCreateDescriptorSetLayout)                                                            \
  X(vkCreateComputePipelines)                                                               \
  X(vkCreatePipelineCache)                                                                  \
  X(vkGetPipelineCacheData)                                                                 \
  X(vkCreateFence)                                                                          \
  X(vkWaitForFences)                                                                        \
  X(vkResetFences)                                                                          \
  X(vkCreateDescriptorPool)                                                                 \
  X(vkDeviceWaitIdle)                                                                       \
  X(vkGetMemoryHostPointerPropertiesEXT)

const char *const *vkds__vk_fault_functions(void) {
#define NAME(f) #f,
  static const char *const names[] = {FUNCTIONS(NAME) NULL};
#undef NAME
  return names;
}

void vkds__vk_fault_wrap(VkDevice device, struct VolkDeviceTable *table) {
  if (!atomic_load(&installed)) return;
  const void *key = key_of(device);
  pthread_mutex_lock(&lock);
  wrapped *w = find(key); /* a device made where a destroyed one was */
  if (!w) {
    /* more devices than a test keeps alive: the oldest is surely gone */
    w = device_count < MAX_DEVICES ? &devices[device_count++] : &devices[next_victim++ % MAX_DEVICES];
  }
  *w = (wrapped){.key = key, .device = device, .real = *table};
  pthread_mutex_unlock(&lock);
  /* entry points the device does not have (an extension off) stay NULL */
#define SWAP(f) if (table->f) table->f = wrap_##f;
  FUNCTIONS(SWAP)
#undef SWAP
}
