/* bench/experiments/command_pools.c: how command buffers' pools change the host cost
 * of tiny tasks when several threads record and one thread submits (the shape of vkds's
 * coalesced submission), in plain Vulkan. T recorder threads (1, 4, 12) each record an
 * empty dispatch into a ring of P * K command buffers and hand it over; the submitter
 * puts whatever is pending in one vkQueueSubmit while at most two are unfinished. Each
 * mode manages the buffers differently (a pool per buffer, as vkds did before session
 * 44; pools of K buffers). Prints the time per task and each step's host time.
 * Not built by meson (an experiment kept with its results, bench/RESULTS.md):
 *   glslangValidator -V bench/experiments/empty.comp -o /tmp/empty.spv
 *   gcc -O2 -DKK=16 bench/experiments/command_pools.c -o /tmp/command_pools -lvulkan -lpthread
 *   /tmp/command_pools /tmp/empty.spv */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <vulkan/vulkan.h>
static uint64_t now(void) { struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec; }
#define CK(x) do { VkResult r_ = (x); if (r_ != VK_SUCCESS) { fprintf(stderr, "%d %s -> %d\n", __LINE__, #x, r_); exit(1); } } while (0)
enum { P = 4, K = KK, N = 5000, MAXQ = 4096 };
static VkDevice dev; static VkQueue queue; static VkPipeline pipe; static VkPipelineLayout layout; static VkSemaphore timeline;
static int mode;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static VkCommandBuffer pending[MAXQ]; static _Atomic uint64_t *pending_val[MAXQ]; static uint32_t npending;
static atomic_bool stop; static uint64_t value; static atomic_uint_fast64_t calls;
static const char *names[] = {"pool per buffer, reset bit (vkds)", "pool per buffer, reset bit, not transient",
                              "pools of K, pool reset when done", "pools of K, reset bit, explicit reset", "pool per buffer, pool reset, not transient", "pool per buffer, pool reset, transient"};
typedef struct { uint64_t begin, rec, end, reset, wait; } cost;
static uint64_t done_value(void) { uint64_t v; CK(vkGetSemaphoreCounterValue(dev, timeline, &v)); return v; }
static void wait_for(uint64_t v) { while (done_value() < v) sched_yield(); }
static void *submitter(void *arg) {
  (void)arg;
  VkCommandBuffer cmds[MAXQ]; _Atomic uint64_t *vals[MAXQ];
  while (!atomic_load(&stop) || npending) {
    /* like vkds's flusher: hold tasks back while two batches are unfinished */
    if (value >= 2 && done_value() < value - 1) { sched_yield(); continue; }
    pthread_mutex_lock(&lock);
    uint32_t n = npending;
    for (uint32_t i = 0; i < n; ++i) cmds[i] = pending[i], vals[i] = pending_val[i];
    npending = 0;
    pthread_mutex_unlock(&lock);
    if (!n) { sched_yield(); continue; }
    uint64_t v = ++value;
    VkTimelineSemaphoreSubmitInfo ts = {.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO, .signalSemaphoreValueCount = 1, .pSignalSemaphoreValues = &v};
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .pNext = &ts, .commandBufferCount = n, .pCommandBuffers = cmds, .signalSemaphoreCount = 1, .pSignalSemaphores = &timeline};
    CK(vkQueueSubmit(queue, 1, &si, VK_NULL_HANDLE));
    atomic_fetch_add(&calls, 1);
    for (uint32_t i = 0; i < n; ++i) atomic_store(vals[i], v);
  }
  return NULL;
}
static void *recorder(void *arg) {
  cost *c = arg;
  VkCommandPool pools[P * K]; VkCommandBuffer cmds[P * K]; _Atomic uint64_t vals[P * K];
  int per_buf = mode <= 1 || mode >= 4;
  for (int i = 0; i < P * K; ++i) {
    atomic_init(&vals[i], 0);
    if (!per_buf && i % K) { pools[i] = pools[i - i % K]; continue; }
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, .queueFamilyIndex = 0,
      .flags = (mode == 1 || mode == 4 ? 0 : VK_COMMAND_POOL_CREATE_TRANSIENT_BIT) | (mode == 2 || mode >= 4 ? 0 : VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT)};
    CK(vkCreateCommandPool(dev, &pci, NULL, &pools[i]));
  }
  for (int i = 0; i < P * K; ++i) {
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = pools[i], .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
    CK(vkAllocateCommandBuffers(dev, &ai, &cmds[i]));
  }
  for (int it = 0; it < N; ++it) {
    int k = it % (P * K);
    uint64_t t0 = now();
    if (it >= P * K) { /* wait until this buffer (mode 2: its whole pool) is done */
      int last = mode == 2 ? k + K - 1 : k;
      if (mode != 2 || k % K == 0) {
        while (atomic_load(&vals[last]) == UINT64_MAX) sched_yield();
        wait_for(atomic_load(&vals[last]));
      }
    }
    uint64_t t1 = now();
    if (it >= P * K && mode == 2 && k % K == 0) CK(vkResetCommandPool(dev, pools[k], 0));
    if (it >= P * K && mode == 3) CK(vkResetCommandBuffer(cmds[k], 0));
    if (it >= P * K && mode >= 4) CK(vkResetCommandPool(dev, pools[k], 0));
    uint64_t t2 = now();
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    CK(vkBeginCommandBuffer(cmds[k], &bi));
    uint64_t t3 = now();
    vkCmdBindPipeline(cmds[k], VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
    uint32_t pc[4] = {1, 2, 3, 4};
    vkCmdPushConstants(cmds[k], layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, pc);
    vkCmdDispatch(cmds[k], 1, 1, 1);
    uint64_t t4 = now();
    CK(vkEndCommandBuffer(cmds[k]));
    atomic_store(&vals[k], UINT64_MAX);
    pthread_mutex_lock(&lock);
    while (npending == MAXQ) { pthread_mutex_unlock(&lock); pthread_mutex_lock(&lock); }
    pending[npending] = cmds[k]; pending_val[npending] = &vals[k]; ++npending;
    pthread_mutex_unlock(&lock);
    uint64_t t5 = now();
    c->wait += t1 - t0, c->reset += t2 - t1, c->begin += t3 - t2, c->rec += t4 - t3, c->end += t5 - t4;
  }
  for (int i = 0; i < P * K; ++i) { while (atomic_load(&vals[i]) == UINT64_MAX) sched_yield(); wait_for(atomic_load(&vals[i])); }
  for (int i = 0; i < P * K; ++i) if (per_buf || i % K == 0) vkDestroyCommandPool(dev, pools[i], NULL);
  return NULL;
}
int main(int argc, char **argv) {
  FILE *f = fopen(argc > 1 ? argv[1] : "empty.spv", "rb");
  if (!f) return perror("the SPIR-V of empty.comp"), 1;
  static uint32_t code[65536];
  size_t len = fread(code, 1, sizeof code, f);
  fclose(f);
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_3};
  VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
  VkInstance inst; CK(vkCreateInstance(&ici, NULL, &inst));
  uint32_t n = 8; VkPhysicalDevice pds[8]; CK(vkEnumeratePhysicalDevices(inst, &n, pds));
  float prio = 1.0f;
  VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = 0, .queueCount = 1, .pQueuePriorities = &prio};
  VkPhysicalDeviceVulkan12Features f12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, .timelineSemaphore = VK_TRUE};
  VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .pNext = &f12, .queueCreateInfoCount = 1, .pQueueCreateInfos = &qci};
  CK(vkCreateDevice(pds[0], &dci, NULL, &dev));
  vkGetDeviceQueue(dev, 0, 0, &queue);
  VkShaderModuleCreateInfo smci = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = len, .pCode = code};
  VkShaderModule sm; CK(vkCreateShaderModule(dev, &smci, NULL, &sm));
  VkPushConstantRange pcr = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .size = 16};
  VkPipelineLayoutCreateInfo plci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, .pushConstantRangeCount = 1, .pPushConstantRanges = &pcr};
  CK(vkCreatePipelineLayout(dev, &plci, NULL, &layout));
  VkComputePipelineCreateInfo cpci = {.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO, .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, .stage = VK_SHADER_STAGE_COMPUTE_BIT, .module = sm, .pName = "main"}, .layout = layout};
  CK(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cpci, NULL, &pipe));
  VkSemaphoreTypeCreateInfo type = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO, .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
  VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &type};
  CK(vkCreateSemaphore(dev, &sci, NULL, &timeline));
  static const int threads[] = {1, 4, 12};
  printf("%-42s thr  us/task per call   wait  reset  begin record  end+q (us per task per thread)\n", "mode");
  for (int rep = 0; rep < 2; ++rep)
    for (mode = 0; mode < 6; ++mode)
      for (int ti = 0; ti < 3; ++ti) {
        int T = threads[ti]; pthread_t id[16], sub; cost c[16] = {{0}};
        atomic_store(&stop, false); atomic_store(&calls, 0);
        uint64_t t0 = now();
        pthread_create(&sub, NULL, submitter, NULL);
        for (int t = 0; t < T; ++t) pthread_create(&id[t], NULL, recorder, &c[t]);
        cost s = {0};
        for (int t = 0; t < T; ++t) pthread_join(id[t], NULL), s.begin += c[t].begin, s.rec += c[t].rec, s.end += c[t].end, s.reset += c[t].reset, s.wait += c[t].wait;
        atomic_store(&stop, true); pthread_join(sub, NULL);
        vkDeviceWaitIdle(dev);
        double d = 1e3 * N * T;
        printf("%-42s %3d %8.3f %8.1f %6.3f %6.3f %6.3f %6.3f %6.3f\n", names[mode], T, (now() - t0) / d, (double)N * T / atomic_load(&calls), s.wait / d, s.reset / d, s.begin / d, s.rec / d, s.end / d);
      }
  return 0;
}
