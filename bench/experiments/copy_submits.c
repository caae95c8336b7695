/* bench/experiments/copy_submits.c: what a vkQueueSubmit boundary costs a GPU copy
 * from host-visible memory to device memory, on the compute queue family that vkds's
 * staging uses and on a transfer-only family (the copy engines), in plain Vulkan.
 * 64 MiB moves as one copy in one submission, or in G submissions of 64/G MiB queued back
 * to back (with or without a timeline signal each, with or without the barrier vkds ends
 * its staging copies with), or paced: each submission made when a host filling the ring
 * at `rate` GB/s would have filled its blocks (vkds's upload pipeline without the host
 * copies). Prints medians of 7 of the wall time from the first submit to the wait's end.
 * Not built by meson (an experiment kept with its results, bench/RESULTS.md):
 *   gcc -O2 bench/experiments/copy_submits.c -o /tmp/copy_submits -lvulkan
 *   /tmp/copy_submits [rate GB/s, default 48] */
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <vulkan/vulkan.h>
static uint64_t now(void) { struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec; }
#define CK(x) do { VkResult r_ = (x); if (r_ != VK_SUCCESS) { fprintf(stderr, "%d %s -> %d\n", __LINE__, #x, r_); exit(1); } } while (0)
#define MiB (1ull << 20)
enum { TOTAL = 64, MAXG = 64, REPS = 7 };
static VkPhysicalDevice phys; static VkDevice dev; static VkPhysicalDeviceMemoryProperties mp;
static uint32_t find_type(uint32_t bits, VkMemoryPropertyFlags want, VkMemoryPropertyFlags avoid) {
  for (int pass = 0; pass < 2; ++pass)
    for (uint32_t i = 0; i < mp.memoryTypeCount; ++i)
      if ((bits >> i & 1) && (mp.memoryTypes[i].propertyFlags & want) == want && (pass || !(mp.memoryTypes[i].propertyFlags & avoid))) return i;
  fprintf(stderr, "no memory type\n"); exit(1);
}
static VkBuffer make_buffer(VkMemoryPropertyFlags want, VkMemoryPropertyFlags avoid, void **map) {
  VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = TOTAL * MiB, .usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT};
  VkBuffer b; CK(vkCreateBuffer(dev, &bi, NULL, &b));
  VkMemoryRequirements mr; vkGetBufferMemoryRequirements(dev, b, &mr);
  VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = mr.size, .memoryTypeIndex = find_type(mr.memoryTypeBits, want, avoid)};
  VkDeviceMemory m; CK(vkAllocateMemory(dev, &ai, NULL, &m)); CK(vkBindBufferMemory(dev, b, m, 0));
  if (map) { CK(vkMapMemory(dev, m, 0, VK_WHOLE_SIZE, 0, map)); memset(*map, 1, TOTAL * MiB); }
  return b;
}
typedef struct fam { uint32_t index; VkQueue q; VkCommandPool pool; VkCommandBuffer cmd[MAXG + 1]; VkSemaphore tl; uint64_t value; } fam;
static VkBuffer src, dst;
/* records G command buffers of 64/G MiB each (cmd[G]: unused) */
static void record(fam *f, int groups, int barrier) {
  CK(vkResetCommandPool(dev, f->pool, 0));
  uint64_t per = TOTAL * MiB / (uint64_t)groups;
  for (int g = 0; g < groups; ++g) {
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    CK(vkBeginCommandBuffer(f->cmd[g], &bi));
    VkBufferCopy r = {.srcOffset = g * per, .dstOffset = g * per, .size = per};
    vkCmdCopyBuffer(f->cmd[g], src, dst, 1, &r);
    if (barrier) {
      VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT, .dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT};
      vkCmdPipelineBarrier(f->cmd[g], VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
    }
    CK(vkEndCommandBuffer(f->cmd[g]));
  }
}
/* one run: G submissions, each signalling (or only the last), paced at `rate` GB/s
 * (0: back to back); returns microseconds from the first submit to the wait's end */
static double run(fam *f, int groups, int signal_each, double rate) {
  uint64_t per = TOTAL * MiB / (uint64_t)groups, t0 = now();
  for (int g = 0; g < groups; ++g) {
    if (rate > 0) { uint64_t due = t0 + (uint64_t)((double)(g + 1) * per / rate); while (now() < due) {} }
    int sig = signal_each || g == groups - 1;
    uint64_t v = f->value + 1;
    VkTimelineSemaphoreSubmitInfo ts = {.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO, .signalSemaphoreValueCount = 1, .pSignalSemaphoreValues = &v};
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .pNext = sig ? &ts : NULL, .commandBufferCount = 1, .pCommandBuffers = &f->cmd[g], .signalSemaphoreCount = sig, .pSignalSemaphores = &f->tl};
    CK(vkQueueSubmit(f->q, 1, &si, VK_NULL_HANDLE));
    if (sig) f->value = v;
  }
  uint64_t v;
  do CK(vkGetSemaphoreCounterValue(dev, f->tl, &v)); while (v < f->value);
  return (double)(now() - t0) / 1e3;
}
static int cmpd(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }
static double median(fam *f, int groups, int signal_each, double rate) {
  double t[REPS]; run(f, groups, signal_each, rate);
  for (int i = 0; i < REPS; ++i) t[i] = run(f, groups, signal_each, rate);
  qsort(t, REPS, sizeof *t, cmpd); return t[REPS / 2];
}
int main(int argc, char **argv) {
  double rate = argc > 1 ? atof(argv[1]) : 48.0; /* GB/s = bytes per ns */
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_2};
  VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
  VkInstance inst; CK(vkCreateInstance(&ici, NULL, &inst));
  uint32_t n = 1; CK(vkEnumeratePhysicalDevices(inst, &n, &phys) < 0); if (!n) return 1;
  vkGetPhysicalDeviceMemoryProperties(phys, &mp);
  uint32_t nf = 0; vkGetPhysicalDeviceQueueFamilyProperties(phys, &nf, NULL);
  VkQueueFamilyProperties qf[16]; if (nf > 16) nf = 16; vkGetPhysicalDeviceQueueFamilyProperties(phys, &nf, qf);
  fam fams[2] = {{.index = UINT32_MAX}, {.index = UINT32_MAX}};
  for (uint32_t i = 0; i < nf; ++i) {
    if ((qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && fams[0].index == UINT32_MAX) fams[0].index = i;
    if ((qf[i].queueFlags & VK_QUEUE_TRANSFER_BIT) && !(qf[i].queueFlags & (VK_QUEUE_COMPUTE_BIT | VK_QUEUE_GRAPHICS_BIT)) && fams[1].index == UINT32_MAX) fams[1].index = i;
  }
  int nfam = fams[1].index == UINT32_MAX ? 1 : 2;
  float prio = 1.0f; VkDeviceQueueCreateInfo qci[2];
  for (int i = 0; i < nfam; ++i) qci[i] = (VkDeviceQueueCreateInfo){.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = fams[i].index, .queueCount = 1, .pQueuePriorities = &prio};
  VkPhysicalDeviceVulkan12Features f12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, .timelineSemaphore = VK_TRUE};
  VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .pNext = &f12, .queueCreateInfoCount = (uint32_t)nfam, .pQueueCreateInfos = qci};
  CK(vkCreateDevice(phys, &dci, NULL, &dev));
  void *map;
  src = make_buffer(VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, &map);
  dst = make_buffer(VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, NULL);
  for (int i = 0; i < nfam; ++i) {
    fam *f = &fams[i];
    vkGetDeviceQueue(dev, f->index, 0, &f->q);
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, .queueFamilyIndex = f->index};
    CK(vkCreateCommandPool(dev, &pci, NULL, &f->pool));
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = f->pool, .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = MAXG + 1};
    CK(vkAllocateCommandBuffers(dev, &cai, f->cmd));
    VkSemaphoreTypeCreateInfo sti = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO, .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
    VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &sti};
    CK(vkCreateSemaphore(dev, &sci, NULL, &f->tl));
  }
  printf("64 MiB host-visible -> device-local; us, medians of %d; (GB/s); paced at %.0f GB/s\n", REPS, rate);
  printf("%-9s %-32s %7s %7s %7s %7s %7s\n", "family", "groups of 64/G MiB", "G=1", "G=4", "G=8", "G=16", "G=64");
  const int gs[] = {1, 4, 8, 16, 64};
  for (int i = 0; i < nfam; ++i) {
    const char *modes[] = {"back to back, signal each", "back to back, signal last", "+ vkds's barrier, signal each", "paced, signal each"};
    for (int m = 0; m < 4; ++m) {
      printf("%-9s %-32s", i ? "transfer" : "compute", modes[m]);
      for (int k = 0; k < 5; ++k) {
        record(&fams[i], gs[k], m == 2);
        double us = median(&fams[i], gs[k], m != 1, m == 3 ? rate : 0);
        printf(" %7.0f", us);
      }
      printf("\n");
    }
  }
  printf("(family indices: compute %u, transfer %d)\n", fams[0].index, nfam > 1 ? (int)fams[1].index : -1);
  return 0;
}
