/* bench/bench_memory.c: --bandwidth, host<->device bandwidth on the first resource of
 * each device, vkds against plain Vulkan doing the same in the same run.
 *
 *   plain      plain Vulkan staging: memcpy into one host-visible buffer of the whole
 *              size, one vkCmdCopyBuffer, a fence wait (the other way for downloads:
 *              copy into host-cached memory, wait, memcpy out)
 *   vkds       vkds_upload / vkds_download into a device buffer: the chunk ring, host
 *              copies on several threads overlapping the GPU copies
 *   imported   the host memory imported once (vkds_buffer_import_host, not timed; its
 *              cost is printed), then vkds_upload / vkds_download: one GPU copy, no memcpy;
 *              measured rep by rep in turn with `vkds` (which copies its own, not
 *              imported, arrays), so that both see the same machine state
 *   mapped     vkds_upload / vkds_download on a mapped buffer (device-local host-visible
 *              memory where the device has it): host copies straight into device memory
 *   roof       the plain GPU copy alone from (to) host-visible memory, no memcpy: what
 *              the link gives
 * GB/s are 10^9 bytes per second, medians; (x) is the ratio to plain in the same run.
 * Sizes 1, 4, 16, ... MiB up to --count N MiB (default 1024 on GPUs, 256 on CPU devices). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

#define MiB (1ull << 20)

enum { UP, DOWN };
enum { PLAIN, VKDS, IMPORTED, MAPPED, ROOF, VARIANTS };
static const char *const variant_names[VARIANTS] = {"plain", "vkds", "imported", "mapped", "roof"};

typedef struct plain_copy {
  bench_vk_buffer staging[2], device; /* [UP]: coherent, [DOWN]: host-cached */
  VkCommandPool pool;
  VkCommandBuffer cmd[2]; /* [UP]: staging -> device, [DOWN]: device -> staging */
  VkFence fence;
  VkQueue queue;
  vkds_resource *res;
} plain_copy;

static int plain_open(plain_copy *p, vkds_resource *res, uint64_t size) {
  vkds_resource_info ri;
  vkds_resource_get_info(res, &ri);
  *p = (plain_copy){.res = res};
  VkDevice dev;
  vkds_resource_vk_handles(res, NULL, &dev, &p->queue);
  VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  const VkBufferUsageFlags usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  if (bench_vk_buffer_create(res, size, usage, host, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, &p->staging[UP]) ||
      bench_vk_buffer_create(res, size, usage, host | VK_MEMORY_PROPERTY_HOST_CACHED_BIT,
                             VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, &p->staging[DOWN]) ||
      bench_vk_buffer_create(res, size, usage, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
                             &p->device))
    return 1;
  VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, .queueFamilyIndex = ri.queue_family};
  VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  if (vkCreateCommandPool(dev, &pci, NULL, &p->pool) != VK_SUCCESS || vkCreateFence(dev, &fci, NULL, &p->fence))
    return 1;
  VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = p->pool,
                                    .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 2};
  if (vkAllocateCommandBuffers(dev, &ai, p->cmd) != VK_SUCCESS) return 1;
  for (int d = 0; d < 2; ++d) {
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    vkBeginCommandBuffer(p->cmd[d], &bi);
    VkBufferCopy region = {.size = size};
    vkCmdCopyBuffer(p->cmd[d], d == UP ? p->staging[UP].buffer : p->device.buffer,
                    d == UP ? p->device.buffer : p->staging[DOWN].buffer, 1, &region);
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
    vkCmdPipelineBarrier(p->cmd[d], VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL, 0,
                         NULL);
    vkEndCommandBuffer(p->cmd[d]);
  }
  return 0;
}

static void plain_run(plain_copy *p, int dir, vkds_resource *res) {
  VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &p->cmd[dir]};
  vkds_resource_lock_queue(res);
  vkQueueSubmit(p->queue, 1, &si, p->fence);
  vkds_resource_unlock_queue(res);
  vkWaitForFences(p->device.dev, 1, &p->fence, VK_TRUE, UINT64_MAX);
  vkResetFences(p->device.dev, 1, &p->fence);
}

static void plain_close(plain_copy *p) {
  VkDevice dev;
  vkds_resource_vk_handles(p->res, NULL, &dev, NULL);
  if (p->fence) vkDestroyFence(dev, p->fence, NULL);
  if (p->pool) vkDestroyCommandPool(dev, p->pool, NULL);
  bench_vk_buffer_destroy(&p->staging[UP]);
  bench_vk_buffer_destroy(&p->staging[DOWN]);
  bench_vk_buffer_destroy(&p->device);
}

/* One timed run of a variant in a direction; returns seconds, or a negative number when
 * it cannot run or a round trip came back wrong. */
typedef struct setup {
  vkds_resource *res;
  uint64_t size;
  unsigned char *host, *back; /* aligned for import */
  unsigned char *own_host, *own_back; /* the vkds variant's: never imported */
  vkds_buffer *device, *mapped, *imported_host, *imported_back;
  plain_copy plain;
} setup;

static double run_once(setup *s, int variant, int dir) {
  uint64_t t0 = bench_now_ns();
  vkds_result r = VKDS_SUCCESS;
  switch (variant) {
  case PLAIN:
    if (dir == UP) memcpy(s->plain.staging[UP].mapped, s->host, s->size);
    plain_run(&s->plain, dir, s->res);
    if (dir == DOWN) memcpy(s->back, s->plain.staging[DOWN].mapped, s->size);
    break;
  case ROOF: plain_run(&s->plain, dir, s->res); break;
  case VKDS:
    r = dir == UP ? vkds_upload(s->res, vkds_view_of(s->device), s->own_host, s->size)
                  : vkds_download(s->res, s->own_back, vkds_view_of(s->device), s->size);
    break;
  case IMPORTED:
    r = dir == UP ? vkds_upload(s->res, vkds_view_of(s->device), s->host, s->size)
                  : vkds_download(s->res, s->back, vkds_view_of(s->device), s->size);
    break;
  case MAPPED:
    r = dir == UP ? vkds_upload(s->res, vkds_view_of(s->mapped), s->host, s->size)
                  : vkds_download(s->res, s->back, vkds_view_of(s->mapped), s->size);
    break;
  }
  double secs = (double)(bench_now_ns() - t0) * 1e-9;
  return r == VKDS_SUCCESS ? secs : -1.0;
}

/* GB/s of `n` variants (1 or 2) measured rep by rep in turn, into gbs[variant]; -1 for
 * a variant that failed or whose download came back wrong. */
static void measure(setup *s, const int *variants, int n, int dir, uint32_t reps, double *gbs) {
  double *t = calloc((size_t)reps * 2, sizeof *t);
  if (dir == DOWN) /* what a download writes is checked below: nothing left from an earlier variant */
    for (int v = 0; v < n; ++v) memset(variants[v] == VKDS ? s->own_back : s->back, 0, s->size);
  for (int v = 0; v < n; ++v) run_once(s, variants[v], dir); /* warm-up: first touches, lazily made rings */
  bool ok[2] = {t != NULL, t != NULL};
  for (uint32_t i = 0; i < reps && t; ++i)
    for (int v = 0; v < n; ++v)
      if (ok[v] && (t[v * reps + i] = run_once(s, variants[v], dir)) < 0) ok[v] = false;
  for (int v = 0; v < n; ++v) {
    const unsigned char *back = variants[v] == VKDS ? s->own_back : s->back;
    if (ok[v] && dir == DOWN && variants[v] != ROOF && memcmp(back, s->host, s->size) != 0) {
      fprintf(stderr, "bandwidth: %s download differs from what was uploaded\n", variant_names[variants[v]]);
      ok[v] = false;
    }
    gbs[variants[v]] = ok[v] ? (double)s->size / bench_median(t + v * reps, reps) * 1e-9 : -1.0;
  }
  free(t);
}

static void measure_one(setup *s, int variant, int dir, uint32_t reps, double *gbs) {
  measure(s, &variant, 1, dir, reps, gbs);
}

static void print_row(uint64_t size, int dir, const double gbs[VARIANTS]) {
  printf("%8.0f MiB  %s ", (double)size / MiB, dir == UP ? "H->D" : "D->H");
  for (int v = 0; v < VARIANTS; ++v) {
    if (gbs[v] < 0) printf("  %15s", "-");
    else if (v == PLAIN) printf("  %15.2f", gbs[v]);
    else printf("  %7.2f (%5.2fx)", gbs[v], gbs[PLAIN] > 0 ? gbs[v] / gbs[PLAIN] : 0.0);
  }
  printf("\n");
}

/* All variants at one size; returns 0 when every variant that could run ran right. */
static int bench_size(vkds_resource *res, uint64_t size, uint64_t align) {
  int status = 0;
  setup s = {.res = res, .size = size};
  uint64_t rounded = (size + align - 1) / align * align;
  s.host = aligned_alloc(align, rounded), s.back = aligned_alloc(align, rounded);
  s.own_host = aligned_alloc(align, rounded), s.own_back = aligned_alloc(align, rounded);
  if (!s.host || !s.back || !s.own_host || !s.own_back) { /* (it returned 1 without a word: a CLI probe) */
    printf("%8.0f MiB  no host memory for the four %.0f MiB arrays\n", (double)size / MiB, (double)rounded / MiB);
    free(s.host), free(s.back), free(s.own_host), free(s.own_back);
    return 1;
  }
  for (uint64_t i = 0; i < rounded; ++i) s.host[i] = (unsigned char)(i * 2654435761u >> 13);
  memcpy(s.own_host, s.host, rounded);
  memset(s.back, 0, rounded), memset(s.own_back, 0, rounded);
  /* (64 MiB with 7 reps swung by +-0.1x between processes, session 45) */
  uint32_t reps = size >= 256 * MiB ? 5 : size >= 16 * MiB ? 15 : 21;
  double gbs[2][VARIANTS];
  for (int d = 0; d < 2; ++d)
    for (int v = 0; v < VARIANTS; ++v) gbs[d][v] = -1.0;
  if (vkds_buffer_create(res, &(vkds_buffer_info){.size = size}, &s.device) != VKDS_SUCCESS)
    printf("%8.0f MiB  no device buffer: %s\n", (double)size / MiB, vkds_last_error_message());
  else {
    double import_ms = -1.0;
    if (vkds_import_alignment(res)) {
      uint64_t t0 = bench_now_ns();
      if (vkds_buffer_import_host(res, s.host, rounded, &s.imported_host) == VKDS_SUCCESS &&
          vkds_buffer_import_host(res, s.back, rounded, &s.imported_back) == VKDS_SUCCESS)
        import_ms = (double)(bench_now_ns() - t0) * 1e-6 / 2;
    }
    const int both[2] = {VKDS, IMPORTED};
    for (int d = 0; d < 2; ++d) measure(&s, both, import_ms >= 0 ? 2 : 1, d, reps, gbs[d]);
    vkds_buffer_destroy(s.imported_host), vkds_buffer_destroy(s.imported_back);
    if (import_ms >= 0) printf("%8.0f MiB  import of the host range: %.2f ms\n", (double)size / MiB, import_ms);
  }
  if (vkds_buffer_create(res, &(vkds_buffer_info){.size = size, .memory = VKDS_MEMORY_MAPPED}, &s.mapped) ==
      VKDS_SUCCESS)
    for (int d = 0; d < 2; ++d) measure_one(&s, MAPPED, d, reps, gbs[d]);
  vkds_buffer_destroy(s.mapped), vkds_buffer_destroy(s.device);
  if (plain_open(&s.plain, res, size) != 0)
    printf("%8.0f MiB  plain Vulkan could not allocate its buffers\n", (double)size / MiB);
  else
    for (int d = 0; d < 2; ++d) { /* up first: the download checks what it put there */
      measure_one(&s, PLAIN, d, reps, gbs[d]);
      measure_one(&s, ROOF, d, reps, gbs[d]);
    }
  plain_close(&s.plain);
  for (int d = 0; d < 2; ++d) {
    print_row(size, d, gbs[d]);
    if (gbs[d][VKDS] < 0 || gbs[d][PLAIN] < 0) status = 1;
  }
  fflush(stdout);
  free(s.host), free(s.back), free(s.own_host), free(s.own_back);
  return status;
}

/* What a device buffer gets when device-local memory is capped below its size: on a
 * GPU another memory type (system memory), on a one-type device a clean error. */
static void show_fallback(uint32_t device_index) {
  vkds_context *ctx;
  vkds_context_info info = {.device_memory_limit = 64 * MiB, .devices = NULL};
  if (vkds_context_create(&info, &ctx) != VKDS_SUCCESS) return;
  vkds_resource *res = NULL;
  for (uint32_t i = 0; i < vkds_context_resource_count(ctx) && !res; ++i) {
    vkds_resource_info ri;
    vkds_resource_get_info(vkds_context_resource(ctx, i), &ri);
    if (ri.device_index == device_index) res = vkds_context_resource(ctx, i);
  }
  vkds_buffer *b;
  vkds_result r = res ? vkds_buffer_create(res, &(vkds_buffer_info){.size = 256 * MiB}, &b) : VKDS_ERROR_NO_DEVICE;
  if (r == VKDS_SUCCESS) {
    VkMemoryPropertyFlags f = vkds_buffer_memory_flags(b);
    printf("fallback: a 256 MiB device buffer with device-local memory capped at 64 MiB landed in %s memory "
           "(flags 0x%x)\n",
           (f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) ? "device-local" : "non-device-local", (unsigned)f);
    vkds_buffer_destroy(b);
  } else {
    printf("fallback: a 256 MiB device buffer with device-local memory capped at 64 MiB: %s\n",
           vkds_last_error_message());
  }
  vkds_context_destroy(ctx);
}

int bench_bandwidth(vkds_context *ctx, const bench_options *opt) {
  int status = 0;
  long page = sysconf(_SC_PAGESIZE);
  for (uint32_t d = 0; d < vkds_context_device_count(ctx); ++d) {
    vkds_resource *res = NULL;
    vkds_resource_info ri;
    for (uint32_t i = 0; i < vkds_context_resource_count(ctx) && !res; ++i) {
      vkds_resource_get_info(vkds_context_resource(ctx, i), &ri);
      if (ri.device_index == d) res = vkds_context_resource(ctx, i);
    }
    if (!res) continue;
    bool cpu = ri.device_type == VKDS_DEVICE_CPU;
    uint64_t max = opt->count ? (uint64_t)opt->count * MiB : (cpu ? 256 : 1024) * MiB;
    /* the largest size measured (sizes go up 4x from 1 MiB) holds four host arrays */
    uint64_t top = MiB;
    while (top * 4 <= max) top *= 4;
    long phys = sysconf(_SC_PHYS_PAGES);
    if (phys > 0 && 4 * top > (uint64_t)phys * (uint64_t)page) {
      fprintf(stderr, "vkds-bench: --bandwidth at %.0f MiB needs four host arrays of that size, more than this "
                      "machine's %.0f MiB of memory (give a smaller --count)\n",
              (double)top / MiB, (double)phys * (double)page / MiB);
      return 1;
    }
    uint64_t align = vkds_import_alignment(res) > (uint64_t)page ? vkds_import_alignment(res) : (uint64_t)page;
    printf("\n%s (device %u): host<->device GB/s, (x) against plain staging in the same run\n", ri.device_name, d);
    printf("%8s      %4s ", "size", "dir");
    for (int v = 0; v < VARIANTS; ++v) printf("  %15s", variant_names[v]);
    printf("\n");
    for (uint64_t size = MiB; size <= max; size *= 4) status |= bench_size(res, size, align);
    show_fallback(d);
  }
  return status;
}
