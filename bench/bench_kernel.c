/* bench/bench_kernel.c: --launch, kernel launches against plain Vulkan doing the same
 * dispatches in the same run, and pipeline creation cold and from the disk cache.
 *
 * The kernel is the same tiny one on both sides (shaders/counter.comp: one work group,
 * one atomic add). Plain Vulkan records each command buffer (bind, descriptor set, push
 * constants, dispatch) and submits it, as an application whose arguments change per
 * dispatch would; vkds does vkds_launch. Batched: N, then one wait; round trip: one,
 * then a spinning wait, median. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <vulkan/vulkan.h>

#include "../tests/gpu_counter.h"
#include "bench.h"

static const char COUNTER_GLSL[] =
    "#version 450\n"
    "#include \"vkds.glsl\"\n"
    "layout(local_size_x = 64) in;\n"
    "VKDS_VIEW(uint, 4, Words)\n"
    "#define VKDS_ARGS Words counter; uint add;\n"
    "VKDS_DECLARE_ARGS\n"
    "void main() { if (vkds_global_index() == 0) atomicAdd(Words_ptr(VKDS_ARG(counter).address).v, VKDS_ARG(add)); }\n";

typedef struct counter_args {
  vkds_view counter;
  uint32_t add;
} counter_args;

static const vkds_arg COUNTER_ARGS[] = {
    {.kind = VKDS_ARG_VIEW, .offset = offsetof(counter_args, counter)},
    {.kind = VKDS_ARG_UINT, .offset = offsetof(counter_args, add)},
    {0},
};

typedef struct plain {
  VkDevice dev;
  VkQueue queue;
  vkds_resource *res;
  VkCommandPool pool;
  VkCommandBuffer *cmds;
  VkSemaphore timeline;
  uint64_t value;
} plain;

static int plain_open(plain *p, vkds_resource *res, uint32_t n) {
  vkds_resource_info ri;
  vkds_resource_get_info(res, &ri);
  p->res = res;
  vkds_resource_vk_handles(res, NULL, &p->dev, &p->queue);
  VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                 .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, .queueFamilyIndex = ri.queue_family};
  VkSemaphoreTypeCreateInfo type = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO, .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
  VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &type};
  p->cmds = calloc(n, sizeof *p->cmds);
  VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                    .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = n};
  if (!p->cmds || vkCreateCommandPool(p->dev, &pci, NULL, &p->pool) != VK_SUCCESS) return 1;
  ai.commandPool = p->pool;
  if (vkAllocateCommandBuffers(p->dev, &ai, p->cmds) != VK_SUCCESS) return 1;
  return vkCreateSemaphore(p->dev, &sci, NULL, &p->timeline) != VK_SUCCESS;
}

static void plain_close(plain *p) {
  vkDestroySemaphore(p->dev, p->timeline, NULL);
  vkDestroyCommandPool(p->dev, p->pool, NULL);
  free(p->cmds);
}

/* Records command buffer i with the counter dispatch and submits it. */
static void plain_launch(plain *p, const gpu_counter *c, uint32_t i) {
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                 .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
  vkBeginCommandBuffer(p->cmds[i], &bi);
  gpu_counter_record(c, p->cmds[i], 1, 1, 0);
  vkEndCommandBuffer(p->cmds[i]);
  ++p->value;
  VkTimelineSemaphoreSubmitInfo ts = {.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                                      .signalSemaphoreValueCount = 1, .pSignalSemaphoreValues = &p->value};
  VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .pNext = &ts, .commandBufferCount = 1,
                     .pCommandBuffers = &p->cmds[i], .signalSemaphoreCount = 1, .pSignalSemaphores = &p->timeline};
  vkds_resource_lock_queue(p->res);
  vkQueueSubmit(p->queue, 1, &si, VK_NULL_HANDLE);
  vkds_resource_unlock_queue(p->res);
}

static void plain_spin(plain *p) {
  uint64_t v = 0;
  while (vkGetSemaphoreCounterValue(p->dev, p->timeline, &v) == VK_SUCCESS && v < p->value) {
  }
}

static int bench_device(vkds_context *ctx, uint32_t index, uint32_t n) {
  vkds_resource *res = vkds_context_resource(ctx, index);
  vkds_resource_info ri;
  vkds_resource_get_info(res, &ri);
  gpu_counter c;
  plain p = {0};
  vkds_policy *pol = NULL;
  vkds_kernel *k = NULL;
  vkds_buffer *counter = NULL;
  void *r = res;
  if (gpu_counter_create(&c, res) != VK_SUCCESS || plain_open(&p, res, n)) { /* (not vkds: no message there) */
    fprintf(stderr, "vkds-bench: setup failed: the plain Vulkan baseline's objects (%u command buffers)\n", n);
    return 1;
  }
  if (vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = {.resource_count = 1, .resources = &r}}, &pol) ||
      vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = COUNTER_GLSL, .args = COUNTER_ARGS, .name = "counter"}, &k) ||
      vkds_buffer_create(res, &(vkds_buffer_info){.size = 64, .memory = VKDS_MEMORY_DEVICE}, &counter)) {
    fprintf(stderr, "vkds-bench: setup failed: %s\n", vkds_last_error_message());
    return 1;
  }
  counter_args args = {.counter = vkds_view_of(counter), .add = 1};
  vkds_launch_info li = {.global = {64}, .args = &args};
  vkds_submission *s;
  vkds_launch(pol, k, &li, &s); /* the pipeline is made here, not in the timings */
  vkds_submission_wait(s);
  vkds_submission_release(s);

  enum { TRIPS = 300 };
  double plain_rt[TRIPS], vkds_rt[TRIPS];
  for (uint32_t i = 0; i < TRIPS; ++i) {
    uint64_t t0 = bench_now_ns();
    plain_launch(&p, &c, 0);
    plain_spin(&p);
    plain_rt[i] = (double)(bench_now_ns() - t0);
    t0 = bench_now_ns();
    vkds_launch(pol, k, &li, &s);
    vkds_submission_wait(s);
    vkds_rt[i] = (double)(bench_now_ns() - t0);
    vkds_submission_release(s);
  }
  uint64_t t0 = bench_now_ns();
  for (uint32_t i = 0; i < n; ++i) plain_launch(&p, &c, i);
  plain_spin(&p);
  double plain_batch = (double)(bench_now_ns() - t0) / n;
  /* twice: the first batch also makes vkds's recycled slots (command pools), which
   * plain Vulkan allocated before its timing; the second is the steady state */
  double vkds_batch_first = 0, vkds_batch = 0;
  for (int round = 0; round < 2; ++round) {
    t0 = bench_now_ns();
    for (uint32_t i = 0; i < n; ++i) vkds_launch(pol, k, &li, NULL);
    vkds_policy_wait_all(pol, UINT64_MAX);
    *(round ? &vkds_batch : &vkds_batch_first) = (double)(bench_now_ns() - t0) / n;
  }
  double prt = bench_median(plain_rt, TRIPS), vrt = bench_median(vkds_rt, TRIPS);
  printf("%-28.28s %-34s %10.2f %9s\n", ri.device_name, "round trip, plain Vulkan", prt / 1e3, "1.00x");
  printf("%-28s %-34s %10.2f %8.2fx\n", "", "round trip, vkds_launch", vrt / 1e3, vrt / prt);
  printf("%-28s %-34s %10.2f %9s\n", "", "batched, plain Vulkan (per launch)", plain_batch / 1e3, "1.00x");
  printf("%-28s %-34s %10.2f %8.2fx\n", "", "batched, vkds_launch, first batch", vkds_batch_first / 1e3,
         vkds_batch_first / plain_batch);
  printf("%-28s %-34s %10.2f %8.2fx\n", "", "batched, vkds_launch (per launch)", vkds_batch / 1e3, vkds_batch / plain_batch);
  vkds_policy_release(pol);
  vkds_kernel_destroy(k);
  vkds_buffer_destroy(counter);
  plain_close(&p);
  gpu_counter_destroy(&c);
  return 0;
}

/* Pipeline creation: a fresh context each time, so nothing is cached in memory. */
static double first_launch_ms(const char *cache_dir, const char *devices, double *compile_ms) {
  vkds_context *c;
  if (vkds_context_create(&(vkds_context_info){.pipeline_cache_dir = cache_dir, .devices = devices}, &c)) return -1;
  vkds_policy *pol;
  vkds_kernel *k;
  vkds_buffer *buf;
  double ms = -1;
  uint64_t t0 = bench_now_ns();
  if (!vkds_kernel_from_glsl(c, &(vkds_glsl_info){.source = COUNTER_GLSL, .args = COUNTER_ARGS}, &k)) {
    *compile_ms = (double)(bench_now_ns() - t0) / 1e6;
    if (!vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = {.context = c}}, &pol)) {
      vkds_buffer_create(vkds_context_resource(c, 0), &(vkds_buffer_info){.size = 64}, &buf);
      counter_args a = {.counter = vkds_view_of(buf), .add = 1};
      t0 = bench_now_ns();
      vkds_launch(pol, k, &(vkds_launch_info){.global = {64}, .args = &a}, NULL); /* makes the pipeline */
      ms = (double)(bench_now_ns() - t0) / 1e6;
      vkds_policy_wait_all(pol, UINT64_MAX);
      vkds_policy_release(pol);
      vkds_buffer_destroy(buf);
    }
    vkds_kernel_destroy(k);
  }
  vkds_context_destroy(c);
  return ms;
}

int bench_launch(vkds_context *ctx, const bench_options *opt) {
  uint32_t n = opt->count ? opt->count : 2000;
  printf("%-28s %-34s %10s %9s\n", "device", "variant", "µs", "ratio");
  int status = 0;
  for (uint32_t i = 0, last = UINT32_MAX; i < vkds_context_resource_count(ctx); ++i) {
    vkds_resource_info ri;
    vkds_resource_get_info(vkds_context_resource(ctx, i), &ri);
    if (ri.device_index == last) continue;
    last = ri.device_index;
    status |= bench_device(ctx, i, n);
  }
  char dir[] = "/tmp/vkds-bench-cache-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  double compile_cold = 0, compile_again = 0;
  double cold = first_launch_ms(NULL, NULL, &compile_cold);
  double seeded = first_launch_ms(dir, NULL, &compile_again); /* writes the cache */
  double warm = first_launch_ms(dir, NULL, &compile_again);   /* reads it */
  printf("\npipeline on the first device, first launch: cold %.3f ms, cold with saving %.3f ms,\n"
         "from the disk cache %.3f ms (%.2fx of cold); GLSL compile %.3f ms\n", cold, seeded, warm,
         cold > 0 ? warm / cold : 0.0, compile_cold);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) status = 1;
  return status;
}
