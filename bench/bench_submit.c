/* bench/bench_submit.c: --submit, the cost of running one tiny dispatch through the
 * Vulkan backend, against plain Vulkan doing the same work in the same run.
 *
 * On the first queue of every queue family of every device.
 * Round trip: one dispatch submitted, then waited for, again and again (median).
 *   plain/fence     pre-recorded command buffer, vkQueueSubmit with a fence, vkWaitForFences
 *   plain/timeline  the same, signalling a timeline semaphore, vkWaitSemaphores
 *   plain/spin      the same, spinning on vkGetSemaphoreCounterValue
 *   plain/spin, empty submit: a submission without command buffers that only signals
 *   plain/spin, recorded: the command buffer recorded before each submission, as vkds's
 *                   task functions do (pool reset first, or reset by vkBeginCommandBuffer)
 *   plain/spin on host memory: the command buffer also writes a word to host-visible
 *                   memory (vkCmdFillBuffer), and the host spins on that word
 *   vkQueueSubmit call: how long the call alone takes (with a timeline signal, or a fence)
 *   vkds (3 rows)   vkds_submit (records the dispatch each time) + vkds_submission_wait,
 *                   with the backend's spin-then-sleep wait at three spin lengths
 * Batched: N dispatches each in its own submission, then one wait (mean per dispatch).
 *   plain           N pre-recorded command buffers, N vkQueueSubmit, one wait
 *   plain, one vkQueueSubmit: the N command buffers in one submission
 *   plain, one command buffer: the N dispatches recorded into one command buffer
 *   plain, N secondaries: each in a secondary, one primary executes them all
 *   vkds            N vkds_submit (fire and forget), one vkds_backend_wait_all
 * Throughput (issue 15): tiny tasks through a policy, from 1, 4 and 16 threads (each
 * N / threads tasks, fire and forget, then one wait), on the resource alone (fixed
 * policy) and over every queue of its device (dynamic load, and earliest finish); ns
 * per task, and plain one by one and plain all in one vkQueueSubmit divided by it
 * (higher is better); each with the dispatch recorded for every task, and replayed
 * (vkdsR: the task says it records the same every time, vkds_task_info.replay_key).
 * Beside them plain Vulkan from as many threads, each recording every dispatch into
 * its own command buffers and submitting it by itself (on one queue, or each thread on
 * one of the device's queues), or handing it to one more thread that submits all that
 * was handed over in one vkQueueSubmit; plain Vulkan with the N tasks pre-recorded and
 * spread over the device's queues (up to 16), one vkQueueSubmit each (what all in one
 * becomes over a policy's queues); and for every row the host time per task (summed
 * over threads) before recording, recording, and after it.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>

#include "../tests/gpu_counter.h"
#include "bench.h"

enum { TRIPS = 300, WARMUP = 20 };

typedef struct plain {
  VkDevice dev;
  VkQueue queue;
  vkds_resource *res;
  VkCommandPool pool;
  VkCommandBuffer *cmds;
  uint32_t cmd_count;
  VkFence fence;
  VkSemaphore timeline;
  uint64_t value;
  /* the memory-spin probe: command buffers that also write their number to host memory */
  bench_vk_buffer flag;
  volatile uint32_t *flag_word;
  VkCommandBuffer flag_cmds[2];
} plain;

static int plain_open(plain *p, vkds_resource *res, const gpu_counter *c, uint32_t cmd_count) {
  vkds_resource_info ri;
  vkds_resource_get_info(res, &ri);
  p->res = res;
  vkds_resource_vk_handles(res, NULL, &p->dev, &p->queue);
  VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, .queueFamilyIndex = ri.queue_family};
  if (vkCreateCommandPool(p->dev, &pci, NULL, &p->pool) != VK_SUCCESS) return 1;
  p->cmds = calloc(cmd_count, sizeof *p->cmds);
  p->cmd_count = cmd_count;
  VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = p->pool,
                                    .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = cmd_count};
  if (!p->cmds || vkAllocateCommandBuffers(p->dev, &ai, p->cmds) != VK_SUCCESS) return 1;
  for (uint32_t i = 0; i < cmd_count; ++i) {
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    vkBeginCommandBuffer(p->cmds[i], &bi);
    gpu_counter_record(c, p->cmds[i], 1, 1, 0);
    vkEndCommandBuffer(p->cmds[i]);
  }
  VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkSemaphoreTypeCreateInfo type = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                    .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
  VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &type};
  if (vkCreateFence(p->dev, &fci, NULL, &p->fence) != VK_SUCCESS ||
      vkCreateSemaphore(p->dev, &sci, NULL, &p->timeline) != VK_SUCCESS)
    return 1;
  return 0;
}

/* Host-visible, coherent memory for one word, and two command buffers that run the tiny
 * dispatch and then write 1 or 2 there (vkCmdFillBuffer after a barrier). */
static int plain_open_flag(plain *p, const gpu_counter *c) {
  const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  if (bench_vk_buffer_create(p->res, 64, VK_BUFFER_USAGE_TRANSFER_DST_BIT, want, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                             &p->flag))
    return 1;
  p->flag_word = p->flag.mapped;
  *p->flag_word = 0;
  VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = p->pool,
                                    .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 2};
  if (vkAllocateCommandBuffers(p->dev, &ai, p->flag_cmds) != VK_SUCCESS) return 1;
  for (uint32_t i = 0; i < 2; ++i) {
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    vkBeginCommandBuffer(p->flag_cmds[i], &bi);
    gpu_counter_record(c, p->flag_cmds[i], 1, 1, 0);
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT};
    vkCmdPipelineBarrier(p->flag_cmds[i], VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1,
                         &mb, 0, NULL, 0, NULL);
    vkCmdFillBuffer(p->flag_cmds[i], p->flag.buffer, 0, 4, i + 1);
    VkMemoryBarrier hb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
    vkCmdPipelineBarrier(p->flag_cmds[i], VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &hb, 0,
                         NULL, 0, NULL);
    vkEndCommandBuffer(p->flag_cmds[i]);
  }
  return 0;
}

/* Round trip waiting by spinning on the word the command buffer writes (no driver call
 * while waiting); also signals the timeline so the next submit can be ordered. */
static double plain_memspin_round_trip(plain *p, bool signal) {
  double samples[TRIPS];
  for (uint32_t i = 0; i < TRIPS + WARMUP; ++i) {
    uint32_t want = (i & 1) + 1;
    uint64_t t0 = bench_now_ns();
    ++p->value;
    VkTimelineSemaphoreSubmitInfo ts = {.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                                        .signalSemaphoreValueCount = 1, .pSignalSemaphoreValues = &p->value};
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .pNext = signal ? &ts : NULL,
                       .commandBufferCount = 1, .pCommandBuffers = &p->flag_cmds[i & 1],
                       .signalSemaphoreCount = signal ? 1 : 0, .pSignalSemaphores = &p->timeline};
    vkds_resource_lock_queue(p->res);
    vkQueueSubmit(p->queue, 1, &si, signal ? VK_NULL_HANDLE : p->fence);
    vkds_resource_unlock_queue(p->res);
    while (*p->flag_word != want) {
    }
    if (i >= WARMUP) samples[i - WARMUP] = (double)(bench_now_ns() - t0);
    /* the command buffer is reused two submits later: make sure it is no longer pending */
    if (signal) {
      VkSemaphoreWaitInfo wi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO, .semaphoreCount = 1,
                                .pSemaphores = &p->timeline, .pValues = &p->value};
      vkWaitSemaphores(p->dev, &wi, UINT64_MAX);
    } else {
      --p->value;
      vkWaitForFences(p->dev, 1, &p->fence, VK_TRUE, UINT64_MAX);
      vkResetFences(p->dev, 1, &p->fence);
    }
  }
  return bench_median(samples, TRIPS);
}

/* How long the vkQueueSubmit call itself takes, with a timeline signal or with none. */
static double plain_submit_call(plain *p, bool signal) {
  double samples[TRIPS];
  for (uint32_t i = 0; i < TRIPS + WARMUP; ++i) {
    ++p->value;
    VkTimelineSemaphoreSubmitInfo ts = {.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                                        .signalSemaphoreValueCount = 1, .pSignalSemaphoreValues = &p->value};
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .pNext = signal ? &ts : NULL, .commandBufferCount = 1,
                       .pCommandBuffers = &p->cmds[0], .signalSemaphoreCount = signal ? 1 : 0,
                       .pSignalSemaphores = &p->timeline};
    vkds_resource_lock_queue(p->res);
    uint64_t t0 = bench_now_ns();
    vkQueueSubmit(p->queue, 1, &si, signal ? VK_NULL_HANDLE : p->fence);
    uint64_t t1 = bench_now_ns();
    vkds_resource_unlock_queue(p->res);
    if (signal) {
      VkSemaphoreWaitInfo wi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO, .semaphoreCount = 1,
                                .pSemaphores = &p->timeline, .pValues = &p->value};
      vkWaitSemaphores(p->dev, &wi, UINT64_MAX);
    } else {
      --p->value;
      vkWaitForFences(p->dev, 1, &p->fence, VK_TRUE, UINT64_MAX);
      vkResetFences(p->dev, 1, &p->fence);
    }
    if (i >= WARMUP) samples[i - WARMUP] = (double)(t1 - t0);
  }
  return bench_median(samples, TRIPS);
}

static void plain_close(plain *p) {
  bench_vk_buffer_destroy(&p->flag);
  vkDestroySemaphore(p->dev, p->timeline, NULL);
  vkDestroyFence(p->dev, p->fence, NULL);
  vkDestroyCommandPool(p->dev, p->pool, NULL);
  free(p->cmds);
}

/* Submits `count` command buffers (0: none) in one vkQueueSubmit that signals the next
 * timeline value (and the fence when given). */
static void plain_submit_cmds(plain *p, uint32_t count, const VkCommandBuffer *cmds, VkFence fence) {
  ++p->value;
  VkTimelineSemaphoreSubmitInfo ts = {.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                                      .signalSemaphoreValueCount = 1, .pSignalSemaphoreValues = &p->value};
  VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .pNext = &ts, .commandBufferCount = count,
                     .pCommandBuffers = cmds, .signalSemaphoreCount = 1, .pSignalSemaphores = &p->timeline};
  vkds_resource_lock_queue(p->res); /* vkds may share the queue */
  vkQueueSubmit(p->queue, 1, &si, fence);
  vkds_resource_unlock_queue(p->res);
}

/* Submits command buffer i, signalling the timeline (and the fence when asked). */
static void plain_submit(plain *p, uint32_t i, VkFence fence) { plain_submit_cmds(p, 1, &p->cmds[i], fence); }

/* Waits for the last signalled timeline value: sleeping in the driver, or spinning on
 * vkGetSemaphoreCounterValue. */
static void plain_wait_timeline(plain *p) {
  VkSemaphoreWaitInfo wi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO, .semaphoreCount = 1,
                            .pSemaphores = &p->timeline, .pValues = &p->value};
  vkWaitSemaphores(p->dev, &wi, UINT64_MAX);
}
static void plain_spin_timeline(plain *p) {
  uint64_t v = 0;
  while (vkGetSemaphoreCounterValue(p->dev, p->timeline, &v) == VK_SUCCESS && v < p->value) {
  }
}

typedef enum plain_wait { WAIT_FENCE, WAIT_TIMELINE, WAIT_SPIN } plain_wait;

/* The floor under any task: a submission with no command buffer that only signals the
 * timeline, spun on like plain/spin. */
static double plain_empty_round_trip(plain *p) {
  double samples[TRIPS];
  for (uint32_t i = 0; i < TRIPS + WARMUP; ++i) {
    uint64_t t0 = bench_now_ns();
    plain_submit_cmds(p, 0, NULL, VK_NULL_HANDLE);
    plain_spin_timeline(p);
    if (i >= WARMUP) samples[i - WARMUP] = (double)(bench_now_ns() - t0);
  }
  return bench_median(samples, TRIPS);
}

/* Like plain/spin, but recording the command buffer before each submission, as vkds
 * does (the task function records): after resetting its pool (pool_reset), or letting
 * vkBeginCommandBuffer reset it (a pool made with RESET_COMMAND_BUFFER_BIT). */
static double plain_recorded_round_trip(plain *p, const gpu_counter *c, bool pool_reset) {
  VkCommandPool pool;
  VkCommandBuffer cmd;
  vkds_resource_info ri;
  vkds_resource_get_info(p->res, &ri);
  VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                 .flags = pool_reset ? VK_COMMAND_POOL_CREATE_TRANSIENT_BIT
                                                     : VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                 .queueFamilyIndex = ri.queue_family};
  if (vkCreateCommandPool(p->dev, &pci, NULL, &pool) != VK_SUCCESS) return 0;
  VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = pool,
                                    .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
  vkAllocateCommandBuffers(p->dev, &ai, &cmd);
  double samples[TRIPS];
  for (uint32_t i = 0; i < TRIPS + WARMUP; ++i) {
    uint64_t t0 = bench_now_ns();
    if (pool_reset) vkResetCommandPool(p->dev, pool, 0);
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    vkBeginCommandBuffer(cmd, &bi);
    gpu_counter_record(c, cmd, 1, 1, 0);
    vkEndCommandBuffer(cmd);
    plain_submit_cmds(p, 1, &cmd, VK_NULL_HANDLE);
    plain_spin_timeline(p);
    if (i >= WARMUP) samples[i - WARMUP] = (double)(bench_now_ns() - t0);
  }
  vkDestroyCommandPool(p->dev, pool, NULL);
  return bench_median(samples, TRIPS);
}

/* N dispatches in one vkQueueSubmit (N command buffers, the last signals): what
 * coalescing tasks into one submission would buy. */
/* All N in one vkQueueSubmit, but each in its own VkSubmitInfo signalling its own
 * timeline value: what coalescing tasks that each keep their value costs the GPU. */
static double plain_one_call_each_signals(plain *p) {
  uint32_t n = p->cmd_count;
  uint64_t *values = malloc(n * sizeof *values);
  VkTimelineSemaphoreSubmitInfo *ts = malloc(n * sizeof *ts);
  VkSubmitInfo *si = malloc(n * sizeof *si);
  if (!values || !ts || !si) {
    free(values), free(ts), free(si);
    return 0.0;
  }
  uint64_t t0 = bench_now_ns();
  for (uint32_t i = 0; i < n; ++i) {
    values[i] = ++p->value;
    ts[i] = (VkTimelineSemaphoreSubmitInfo){.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                                            .signalSemaphoreValueCount = 1, .pSignalSemaphoreValues = &values[i]};
    si[i] = (VkSubmitInfo){.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .pNext = &ts[i], .commandBufferCount = 1,
                           .pCommandBuffers = &p->cmds[i], .signalSemaphoreCount = 1, .pSignalSemaphores = &p->timeline};
  }
  vkds_resource_lock_queue(p->res);
  vkQueueSubmit(p->queue, n, si, VK_NULL_HANDLE);
  vkds_resource_unlock_queue(p->res);
  plain_wait_timeline(p);
  double per = (double)(bench_now_ns() - t0) / n;
  free(values), free(ts), free(si);
  return per;
}

static double plain_one_submit(plain *p) {
  uint64_t t0 = bench_now_ns();
  plain_submit_cmds(p, p->cmd_count, p->cmds, VK_NULL_HANDLE);
  plain_wait_timeline(p);
  return (double)(bench_now_ns() - t0) / p->cmd_count;
}

/* All N tiny tasks recorded into one command buffer (each the dispatch and its barrier,
 * as in its own command buffer), one vkQueueSubmit: whether the GPU's cost of a task in
 * one submission (all in one, above) is the command buffer's or the dispatch's own.
 * With `secondaries`, each task is recorded into a secondary command buffer and one
 * primary executes them all: what merging tasks that each record their own would cost. */
static double plain_one_cmd(plain *p, const gpu_counter *c, bool secondaries) {
  uint32_t n = p->cmd_count;
  VkCommandBuffer primary = VK_NULL_HANDLE, *sec = NULL;
  VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = p->pool,
                                    .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
  if (vkAllocateCommandBuffers(p->dev, &ai, &primary) != VK_SUCCESS) return 0.0;
  if (secondaries) {
    sec = malloc(n * sizeof *sec);
    ai.level = VK_COMMAND_BUFFER_LEVEL_SECONDARY;
    ai.commandBufferCount = n;
    if (!sec || vkAllocateCommandBuffers(p->dev, &ai, sec) != VK_SUCCESS) {
      free(sec);
      return 0.0;
    }
    VkCommandBufferInheritanceInfo inh = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO};
    for (uint32_t i = 0; i < n; ++i) {
      VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, .pInheritanceInfo = &inh};
      vkBeginCommandBuffer(sec[i], &bi);
      gpu_counter_record(c, sec[i], 1, 1, 0);
      vkEndCommandBuffer(sec[i]);
    }
  }
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  vkBeginCommandBuffer(primary, &bi);
  if (secondaries)
    vkCmdExecuteCommands(primary, n, sec);
  else
    for (uint32_t i = 0; i < n; ++i) gpu_counter_record(c, primary, 1, 1, 0);
  vkEndCommandBuffer(primary);
  uint64_t t0 = bench_now_ns();
  plain_submit_cmds(p, 1, &primary, VK_NULL_HANDLE);
  plain_wait_timeline(p);
  double per = (double)(bench_now_ns() - t0) / n;
  vkFreeCommandBuffers(p->dev, p->pool, 1, &primary);
  if (sec) vkFreeCommandBuffers(p->dev, p->pool, n, sec);
  free(sec);
  return per;
}

static double plain_round_trip(plain *p, plain_wait how) {
  double samples[TRIPS];
  for (uint32_t i = 0; i < TRIPS + WARMUP; ++i) {
    uint64_t t0 = bench_now_ns();
    plain_submit(p, 0, how == WAIT_FENCE ? p->fence : VK_NULL_HANDLE);
    if (how == WAIT_FENCE) {
      vkWaitForFences(p->dev, 1, &p->fence, VK_TRUE, UINT64_MAX);
      vkResetFences(p->dev, 1, &p->fence);
    } else if (how == WAIT_TIMELINE) {
      plain_wait_timeline(p);
    } else {
      plain_spin_timeline(p);
    }
    if (i >= WARMUP) samples[i - WARMUP] = (double)(bench_now_ns() - t0);
  }
  return bench_median(samples, TRIPS);
}

/* N submissions, each signalling the timeline, or only the last one. */
static double plain_batched(plain *p, bool signal_each) {
  uint64_t t0 = bench_now_ns();
  for (uint32_t i = 0; i < p->cmd_count; ++i) {
    if (signal_each || i + 1 == p->cmd_count) {
      plain_submit(p, i, VK_NULL_HANDLE);
    } else {
      VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &p->cmds[i]};
      vkds_resource_lock_queue(p->res);
      vkQueueSubmit(p->queue, 1, &si, VK_NULL_HANDLE);
      vkds_resource_unlock_queue(p->res);
    }
  }
  plain_wait_timeline(p);
  return (double)(bench_now_ns() - t0) / p->cmd_count;
}

/* When the task function last began and ended on this thread: the throughput rows split
 * a vkds_submit into what vkds does before recording, the recording, and after. */
static _Thread_local uint64_t fn_in_ns, fn_out_ns;

static vkds_result record_tiny(void *user, const vkds_task *task, void **wait_object) {
  (void)wait_object;
  fn_in_ns = bench_now_ns();
  gpu_counter_record(user, task->cmd, 1, 1, 0);
  fn_out_ns = bench_now_ns();
  return VKDS_SUCCESS;
}

/* vkds round trip with a backend whose waits spin for spin_ns before sleeping. */
static double vkds_round_trip(vkds_resource *res, gpu_counter *c, uint64_t spin_ns, vkds_result *err) {
  vkds_backend *b = NULL;
  vkds_selection *sel = NULL;
  double samples[TRIPS];
  void *r = res;
  *err = vkds_backend_create(&(vkds_backend_info){.resource_count = 1, .resources = &r, .spin_ns = spin_ns}, &b);
  if (*err == VKDS_SUCCESS) *err = vkds_selection_create(b, 0, 0, NULL, &sel);
  vkds_task_info task = {.fn = record_tiny, .user = c};
  for (uint32_t i = 0; i < TRIPS + WARMUP && *err == VKDS_SUCCESS; ++i) {
    vkds_submission *s;
    uint64_t t0 = bench_now_ns();
    *err = vkds_selection_submit(sel, &task, &s);
    if (*err != VKDS_SUCCESS) break;
    *err = vkds_submission_wait(s);
    if (i >= WARMUP) samples[i - WARMUP] = (double)(bench_now_ns() - t0);
    vkds_submission_release(s);
  }
  vkds_selection_release(sel);
  vkds_backend_destroy(b);
  return *err == VKDS_SUCCESS ? bench_median(samples, TRIPS) : 0.0;
}

static double vkds_batched(vkds_resource *res, gpu_counter *c, uint32_t n, vkds_result *err) {
  vkds_backend *b = NULL;
  vkds_selection *sel = NULL;
  void *r = res;
  double per = 0.0;
  *err = vkds_backend_create(&(vkds_backend_info){.resource_count = 1, .resources = &r}, &b);
  if (*err == VKDS_SUCCESS) *err = vkds_selection_create(b, 0, 0, NULL, &sel);
  vkds_task_info task = {.fn = record_tiny, .user = c};
  if (*err == VKDS_SUCCESS) {
    uint64_t t0 = bench_now_ns();
    for (uint32_t i = 0; i < n && *err == VKDS_SUCCESS; ++i) *err = vkds_selection_submit(sel, &task, NULL);
    if (*err == VKDS_SUCCESS) *err = vkds_backend_wait_all(b, UINT64_MAX);
    per = (double)(bench_now_ns() - t0) / n;
  }
  vkds_selection_release(sel);
  vkds_backend_destroy(b);
  return per;
}

/* ---- throughput of tiny tasks from several threads (issue 15) ---- */

/* Host time per task by phase, summed over a run's threads. vkds: before the task
 * function (select, slot, pool reset, begin), in it (recording), after it (end, submit,
 * waiting for the queue). Plain: waiting for a free command buffer and recording, then
 * taking the queue and submitting. */
typedef struct phases {
  uint64_t before, record, after;
} phases;

typedef struct submitter {
  vkds_policy *pol;
  const vkds_task_info *task;
  uint32_t count;
  vkds_result err;
  phases ns;
} submitter;

static void *submit_loop(void *arg) {
  submitter *s = arg;
  for (uint32_t i = 0; i < s->count && s->err == VKDS_SUCCESS; ++i) {
    uint64_t t0 = bench_now_ns();
    fn_in_ns = 0;
    s->err = vkds_submit(s->pol, s->task, NULL);
    uint64_t t1 = bench_now_ns();
    if (!fn_in_ns) fn_in_ns = fn_out_ns = t0; /* a replay: the task function was not called */
    s->ns.before += fn_in_ns - t0, s->ns.record += fn_out_ns - fn_in_ns, s->ns.after += t1 - fn_out_ns;
  }
  return NULL;
}

/* ---- plain Vulkan from several threads: each thread records each dispatch into a ring
 * of command buffers of its own pool (reset by vkBeginCommandBuffer) and submits it by
 * itself under the queue's lock, one by one: what an application without vkds does. */
enum { PLAIN_RING = 32 };

/* The hand-off of "plain, threads record, one submits": recorded command buffers wait
 * here for the submitting thread, which puts all that wait in one vkQueueSubmit (one
 * VkSubmitInfo, one signal) and writes the value it signals into each one's slot. */
enum { HANDOFF_MAX = 1024 };
typedef struct handoff {
  pthread_mutex_t lock;
  VkCommandBuffer cmds[HANDOFF_MAX];
  _Atomic uint64_t *values[HANDOFF_MAX];
  uint32_t count;
  atomic_bool stop;
  plain *p;
  uint64_t calls, tasks;
  int failed;
} handoff;

static void *handoff_loop(void *arg) {
  handoff *h = arg;
  VkCommandBuffer cmds[HANDOFF_MAX];
  _Atomic uint64_t *values[HANDOFF_MAX];
  for (;;) {
    pthread_mutex_lock(&h->lock);
    uint32_t n = h->count;
    memcpy(cmds, h->cmds, n * sizeof *cmds);
    memcpy(values, h->values, n * sizeof *values);
    h->count = 0;
    pthread_mutex_unlock(&h->lock);
    if (!n) {
      if (atomic_load(&h->stop)) return NULL;
      continue;
    }
    uint64_t value = ++h->p->value;
    VkTimelineSemaphoreSubmitInfo ts = {.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                                        .signalSemaphoreValueCount = 1, .pSignalSemaphoreValues = &value};
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .pNext = &ts, .commandBufferCount = n,
                       .pCommandBuffers = cmds, .signalSemaphoreCount = 1, .pSignalSemaphores = &h->p->timeline};
    vkds_resource_lock_queue(h->p->res);
    if (vkQueueSubmit(h->p->queue, 1, &si, VK_NULL_HANDLE) != VK_SUCCESS) h->failed = 1;
    vkds_resource_unlock_queue(h->p->res);
    ++h->calls, h->tasks += n;
    for (uint32_t i = 0; i < n; ++i) atomic_store(values[i], value);
  }
}

typedef struct plain_thread {
  plain *p;
  const gpu_counter *c;
  uint32_t count;
  handoff *handoff; /* NULL: the thread submits by itself */
  phases ns;
  int failed;
} plain_thread;

/* Puts a recorded command buffer on the hand-off; its value appears in *value. */
static void handoff_post(handoff *h, VkCommandBuffer cmd, _Atomic uint64_t *value) {
  atomic_store(value, UINT64_MAX);
  for (;;) {
    pthread_mutex_lock(&h->lock);
    bool room = h->count < HANDOFF_MAX;
    if (room) h->cmds[h->count] = cmd, h->values[h->count] = value, ++h->count;
    pthread_mutex_unlock(&h->lock);
    if (room) return;
  }
}

static void *plain_thread_loop(void *arg) {
  plain_thread *t = arg;
  plain *p = t->p;
  vkds_resource_info ri;
  vkds_resource_get_info(p->res, &ri);
  VkCommandPool pool;
  VkCommandBuffer cmds[PLAIN_RING];
  _Atomic uint64_t pending[PLAIN_RING];
  for (uint32_t k = 0; k < PLAIN_RING; ++k) atomic_init(&pending[k], 0);
  VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                 .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                 .queueFamilyIndex = ri.queue_family};
  VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                    .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = PLAIN_RING};
  if (vkCreateCommandPool(p->dev, &pci, NULL, &pool) != VK_SUCCESS) {
    t->failed = 1;
    return NULL;
  }
  ai.commandPool = pool;
  if (vkAllocateCommandBuffers(p->dev, &ai, cmds) != VK_SUCCESS) t->failed = 1;
  for (uint32_t i = 0; i < t->count && !t->failed; ++i) {
    uint32_t k = i % PLAIN_RING;
    uint64_t t0 = bench_now_ns(), done = 0;
    while (atomic_load(&pending[k]) == UINT64_MAX) { /* not submitted yet */
    }
    while (pending[k] && vkGetSemaphoreCounterValue(p->dev, p->timeline, &done) == VK_SUCCESS && done < pending[k]) {
    }
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    vkBeginCommandBuffer(cmds[k], &bi);
    gpu_counter_record(t->c, cmds[k], 1, 1, 0);
    vkEndCommandBuffer(cmds[k]);
    uint64_t t1 = bench_now_ns();
    if (t->handoff) {
      handoff_post(t->handoff, cmds[k], &pending[k]);
      t->ns.record += t1 - t0, t->ns.after += bench_now_ns() - t1;
      continue;
    }
    vkds_resource_lock_queue(p->res); /* also orders the timeline values */
    uint64_t value = ++p->value;
    VkTimelineSemaphoreSubmitInfo ts = {.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                                        .signalSemaphoreValueCount = 1, .pSignalSemaphoreValues = &value};
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .pNext = &ts, .commandBufferCount = 1,
                       .pCommandBuffers = &cmds[k], .signalSemaphoreCount = 1, .pSignalSemaphores = &p->timeline};
    if (vkQueueSubmit(p->queue, 1, &si, VK_NULL_HANDLE) != VK_SUCCESS) t->failed = 1;
    vkds_resource_unlock_queue(p->res);
    pending[k] = value;
    t->ns.record += t1 - t0, t->ns.after += bench_now_ns() - t1;
  }
  /* the ring's buffers may still be pending: wait for this thread's last one */
  uint64_t last = 0;
  for (uint32_t k = 0; k < PLAIN_RING; ++k) {
    while (atomic_load(&pending[k]) == UINT64_MAX) { /* not submitted yet */
    }
    last = pending[k] > last ? pending[k] : last;
  }
  VkSemaphoreWaitInfo wi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO, .semaphoreCount = 1,
                            .pSemaphores = &p->timeline, .pValues = &last};
  if (last) vkWaitSemaphores(p->dev, &wi, UINT64_MAX);
  vkDestroyCommandPool(p->dev, pool, NULL);
  return NULL;
}

/* ns per task of plain Vulkan from `threads` threads, thread t on queue ps[t % queues]
 * (phase sums in *ns), 0 on failure. */
static double plain_threads_throughput(plain *ps, uint32_t queues, const gpu_counter *c, uint32_t threads,
                                       uint32_t per_thread, handoff *h, phases *ns) {
  plain_thread th[16];
  pthread_t id[16], handoff_thread;
  int failed = 0;
  uint64_t t0 = bench_now_ns();
  if (h) pthread_create(&handoff_thread, NULL, handoff_loop, h);
  for (uint32_t t = 0; t < threads; ++t) {
    th[t] = (plain_thread){.p = &ps[t % queues], .c = c, .count = per_thread, .handoff = h};
    pthread_create(&id[t], NULL, plain_thread_loop, &th[t]);
  }
  *ns = (phases){0};
  for (uint32_t t = 0; t < threads; ++t) {
    pthread_join(id[t], NULL);
    failed |= th[t].failed;
    ns->record += th[t].ns.record, ns->after += th[t].ns.after;
  }
  double per = (double)(bench_now_ns() - t0) / ((double)threads * per_thread);
  if (h) {
    atomic_store(&h->stop, true);
    pthread_join(handoff_thread, NULL);
    failed |= h->failed;
  }
  return failed ? 0.0 : per;
}

/* ns per task of plain Vulkan with the N pre-recorded tasks spread over `queues` queues
 * (the N / queues of each in one vkQueueSubmit, all submitted, then all waited for): the
 * all-in-one baseline for work that a policy spreads over a device's queues. */
static double plain_spread_one_submit(plain *qs, uint32_t queues, uint64_t *tasks) {
  uint64_t t0 = bench_now_ns(), n = 0;
  for (uint32_t q = 0; q < queues; ++q) plain_submit_cmds(&qs[q], qs[q].cmd_count, qs[q].cmds, VK_NULL_HANDLE);
  for (uint32_t q = 0; q < queues; ++q) plain_wait_timeline(&qs[q]), n += qs[q].cmd_count;
  *tasks = n;
  return (double)(bench_now_ns() - t0) / (double)n;
}

/* The replay key of the tiny task: every call records the same dispatch, so an
 * application may say so (vkds_task_info.replay_key) and vkds submits a kept recording
 * again instead of calling the task function. */
#define TINY_REPLAY_KEY 0x74696e79ull

/* ns per task: `threads` threads each submit `per_thread` tiny tasks through `pol`
 * (fire and forget; with `replay`, under TINY_REPLAY_KEY), then one wait for all of
 * them. */
static double policy_throughput(vkds_policy *pol, gpu_counter *c, bool replay, uint32_t threads, uint32_t per_thread,
                                phases *ns, vkds_result *err) {
  vkds_task_info task = {.fn = record_tiny, .user = c, .replay_key = replay ? TINY_REPLAY_KEY : 0};
  submitter subs[16];
  pthread_t th[16];
  uint64_t t0 = bench_now_ns();
  for (uint32_t t = 0; t < threads; ++t) {
    subs[t] = (submitter){.pol = pol, .task = &task, .count = per_thread};
    pthread_create(&th[t], NULL, submit_loop, &subs[t]);
  }
  if (ns) *ns = (phases){0};
  for (uint32_t t = 0; t < threads; ++t) {
    pthread_join(th[t], NULL);
    if (subs[t].err != VKDS_SUCCESS && *err == VKDS_SUCCESS) *err = subs[t].err;
    if (ns) ns->before += subs[t].ns.before, ns->record += subs[t].ns.record, ns->after += subs[t].ns.after;
  }
  vkds_result w = vkds_policy_wait_all(pol, UINT64_MAX);
  if (*err == VKDS_SUCCESS) *err = w;
  return (double)(bench_now_ns() - t0) / ((double)threads * per_thread);
}

/* A policy of this kind: FIXED over `res` alone, any other kind over every queue of
 * its device. */
static vkds_result throughput_policy(vkds_resource *res, vkds_policy_kind kind, vkds_policy **out) {
  bool device_queues = kind != VKDS_POLICY_FIXED;
  vkds_context *ctx = vkds_resource_context(res);
  vkds_resource_info ri;
  vkds_resource_get_info(res, &ri);
  void *on[64];
  uint32_t n = 0;
  for (uint32_t i = 0; i < vkds_context_resource_count(ctx) && n < 64; ++i) {
    vkds_resource *r = vkds_context_resource(ctx, i);
    vkds_resource_info info;
    vkds_resource_get_info(r, &info);
    if (r == res || (device_queues && info.device_index == ri.device_index)) on[n++] = r;
  }
  return vkds_policy_create(&(vkds_policy_info){.kind = kind,
                                                .resources = {.context = ctx, .resource_count = n, .resources = on}},
                            out);
}

/* vkQueueSubmit calls and the tasks they carried, over the policy's resources. */
static void policy_submit_counts(vkds_policy *pol, uint64_t *calls, uint64_t *tasks) {
  *calls = *tasks = 0;
  for (uint32_t i = 0; i < pol->resource_count; ++i) {
    uint64_t c, t;
    vkds_resource_submit_counts(vkds_policy_resource(pol, i), &c, &t);
    *calls += c, *tasks += t;
  }
}

static void print_throughput(const char *what, double ns, double one_by_one, double all_in_one, double per_call,
                             const phases *ph, double tasks) {
  printf("%-26s  %-42s %10.2f  %8.2fx %8.2fx %8.2f %6.2f %6.2f %6.2f\n", "", what, ns / 1e3, one_by_one / ns,
         all_in_one / ns, per_call, (double)ph->before / tasks / 1e3, (double)ph->record / tasks / 1e3,
         (double)ph->after / tasks / 1e3);
}

/* Prints the throughput rows of one resource: ns per task against plain Vulkan one by
 * one (`one_by_one`) and all in one vkQueueSubmit (`all_in_one`), same run; plain
 * Vulkan from as many threads; the host time per task in each phase. */
static vkds_result throughput_rows(plain *p, vkds_resource *res, gpu_counter *c, uint32_t batch, double one_by_one,
                                   double all_in_one) {
  static const uint32_t thread_counts[] = {1, 4, 16};
  vkds_result err = VKDS_SUCCESS;
  uint64_t expected = gpu_counter_value(c); /* every task adds 1: checked at the end */
  /* plain Vulkan on this queue, and on every queue of its device */
  enum { MAX_QUEUES = 16 };
  plain qs[MAX_QUEUES] = {{0}};
  uint32_t nq = 0;
  vkds_context *ctx = vkds_resource_context(res);
  vkds_resource_info ri;
  vkds_resource_get_info(res, &ri);
  for (uint32_t i = 0; i < vkds_context_resource_count(ctx) && nq < MAX_QUEUES; ++i) {
    vkds_resource *q = vkds_context_resource(ctx, i);
    vkds_resource_info qi;
    vkds_resource_get_info(q, &qi);
    if (qi.device_index == ri.device_index && nq < MAX_QUEUES) ++nq;
  }
  /* (the device's first MAX_QUEUES queues, each with its share of the batch recorded) */
  uint32_t opened = 0;
  for (uint32_t i = 0; i < vkds_context_resource_count(ctx) && opened < nq; ++i) {
    vkds_resource *q = vkds_context_resource(ctx, i);
    vkds_resource_info qi;
    vkds_resource_get_info(q, &qi);
    if (qi.device_index == ri.device_index && !plain_open(&qs[opened], q, c, batch / nq ? batch / nq : 1)) ++opened;
  }
  nq = opened;
  /* mode 0: one queue, each thread submits; 1: the device's queues, likewise; 2: one
   * queue, the threads only record and one more thread submits what they recorded */
  for (int mode = 0; mode < 3 && err == VKDS_SUCCESS; ++mode) {
    for (size_t k = 0; k < 3; ++k) {
      uint32_t threads = thread_counts[k], per_thread = batch / threads ? batch / threads : 1;
      phases ph;
      plain *on = mode == 1 ? qs : p;
      uint32_t n = mode == 1 ? nq : 1;
      if (!n) break;
      static handoff h; /* large: not on the stack */
      double ns = 0.0, per_call = 1.0;
      for (int round = 0; round < 2; ++round) { /* a warm-up, then the row */
        h = (handoff){.p = p};
        pthread_mutex_init(&h.lock, NULL);
        ns = plain_threads_throughput(on, n, c, threads, per_thread, mode == 2 ? &h : NULL, &ph);
        pthread_mutex_destroy(&h.lock);
        if (mode == 2 && h.calls) per_call = (double)h.tasks / (double)h.calls;
      }
      expected += 2ull * threads * per_thread;
      if (ns == 0.0) {
        fprintf(stderr, "vkds-bench: plain Vulkan from %u threads failed\n", threads);
        err = VKDS_ERROR_VULKAN;
        break;
      }
      static const char *const modes[] = {"one queue", "device's queues", "1 q, +1 submits"};
      char what[64];
      snprintf(what, sizeof what, "plain  %s, %2u thread%s", modes[mode], threads, threads > 1 ? "s" : "");
      print_throughput(what, ns, one_by_one, all_in_one, per_call, &ph, (double)threads * per_thread);
    }
  }
  if (err == VKDS_SUCCESS && nq) {
    uint64_t tasks = 0;
    plain_spread_one_submit(qs, nq, &tasks); /* warm-up */
    double ns = plain_spread_one_submit(qs, nq, &tasks);
    expected += 2 * tasks;
    char what[64];
    snprintf(what, sizeof what, "plain  %u queues, all in one each", nq);
    print_throughput(what, ns, one_by_one, all_in_one, (double)tasks / nq, &(phases){0}, (double)tasks);
  }
  for (uint32_t i = 0; i < nq; ++i) plain_close(&qs[i]);
  /* one queue (fixed), the device's queues by dynamic load, and by earliest finish */
  static const vkds_policy_kind kinds[] = {VKDS_POLICY_FIXED, VKDS_POLICY_DYNAMIC_LOAD, VKDS_POLICY_EARLIEST_FINISH};
  static const char *const over[] = {"one queue", "device's queues", "dev. queues, EF"};
  /* each recorded every time, and replayed (m >= 3) */
  for (int m = 0; m < 6 && err == VKDS_SUCCESS; ++m) {
    vkds_policy *pol;
    bool replay = m >= 3;
    err = throughput_policy(res, kinds[m % 3], &pol);
    for (size_t k = 0; k < 3 && err == VKDS_SUCCESS; ++k) {
      uint32_t threads = thread_counts[k], per_thread = batch / threads ? batch / threads : 1;
      /* warm-up: as many slots and pools (and recordings) as the run needs */
      policy_throughput(pol, c, replay, threads, per_thread, NULL, &err);
      uint64_t calls_before, tasks_before, calls, tasks;
      policy_submit_counts(pol, &calls_before, &tasks_before);
      phases ph;
      double ns = policy_throughput(pol, c, replay, threads, per_thread, &ph, &err);
      expected += 2ull * threads * per_thread;
      policy_submit_counts(pol, &calls, &tasks);
      double per_call = calls > calls_before ? (double)(tasks - tasks_before) / (double)(calls - calls_before) : 0.0;
      char what[64];
      snprintf(what, sizeof what, "vkds%s %s, %2u thread%s", replay ? "R" : " ", over[m % 3], threads,
               threads > 1 ? "s" : "");
      print_throughput(what, ns, one_by_one, all_in_one, per_call, &ph, (double)threads * per_thread);
    }
    vkds_policy_release(pol);
  }
  if (err == VKDS_SUCCESS && gpu_counter_value(c) != (uint32_t)expected) {
    fprintf(stderr, "vkds-bench: the throughput rows ran %u tasks, not %llu\n", gpu_counter_value(c),
            (unsigned long long)expected);
    return VKDS_ERROR_WRONG_RESULT;
  }
  return err;
}

/* Runs every variant on one resource and prints its rows. */
static int bench_resource(vkds_resource *res, uint32_t batch) {
  vkds_resource_info ri;
  vkds_resource_get_info(res, &ri);
  gpu_counter c;
  plain p = {0};
  if (gpu_counter_create(&c, res) != VK_SUCCESS || plain_open(&p, res, &c, batch) ||
      plain_open_flag(&p, &c)) {
    fprintf(stderr, "vkds-bench: cannot set up plain Vulkan on resource %u\n", ri.index);
    return 1;
  }
  vkds_result err = VKDS_SUCCESS, e;
  double fence = plain_round_trip(&p, WAIT_FENCE);
  double timeline = plain_round_trip(&p, WAIT_TIMELINE);
  double spin = plain_round_trip(&p, WAIT_SPIN);
  double empty = plain_empty_round_trip(&p);
  double recorded = plain_recorded_round_trip(&p, &c, true);
  double recorded_implicit = plain_recorded_round_trip(&p, &c, false);
  double memspin = plain_memspin_round_trip(&p, true);
  double memspin_nosignal = plain_memspin_round_trip(&p, false);
  double call_signal = plain_submit_call(&p, true);
  double call_fence = plain_submit_call(&p, false);
  double v_default = vkds_round_trip(res, &c, 0, &e);
  err = err ? err : e;
  double v_sleep = vkds_round_trip(res, &c, 1, &e);
  err = err ? err : e;
  double v_spin = vkds_round_trip(res, &c, UINT64_MAX, &e);
  err = err ? err : e;
  double b_plain = plain_batched(&p, true);
  double b_plain_last = plain_batched(&p, false);
  double b_plain_one = plain_one_submit(&p);
  double b_plain_each = plain_one_call_each_signals(&p);
  double b_plain_cmd = plain_one_cmd(&p, &c, false);
  double b_plain_sec = plain_one_cmd(&p, &c, true);
  double b_vkds = vkds_batched(res, &c, batch, &e);
  err = err ? err : e;
  gpu_counter_destroy(&c);
  if (err != VKDS_SUCCESS) {
    plain_close(&p);
    fprintf(stderr, "vkds-bench: %s: %s\n", vkds_result_str(err), bench_error_detail(err));
    return 1;
  }
  char where[64];
  snprintf(where, sizeof where, "%u %.16s fam %u", ri.index, ri.device_name, ri.queue_family);
  const struct { const char *what; double ns, base; } rows[] = {
      {"round trip  plain/fence", fence, fence},
      {"round trip  plain/timeline", timeline, fence},
      {"round trip  plain/spin", spin, fence},
      {"round trip  plain/spin, empty submit", empty, fence},
      {"round trip  plain/spin, recorded each time", recorded, fence},
      {"round trip  plain/spin, recorded, reset by begin", recorded_implicit, fence},
      {"round trip  plain/spin on host memory", memspin, fence},
      {"round trip  plain/spin on host memory, no sem.", memspin_nosignal, fence},
      {"vkQueueSubmit call, timeline signal", call_signal, fence},
      {"vkQueueSubmit call, fence only", call_fence, fence},
      {"round trip  vkds (spin 50us, then sleep)", v_default, spin},
      {"round trip  vkds (sleep at once)", v_sleep, timeline},
      {"round trip  vkds (spin only)", v_spin, spin},
      {"batched     plain (per dispatch)", b_plain, b_plain},
      {"batched     plain, only the last signals", b_plain_last, b_plain},
      {"batched     plain, all in one vkQueueSubmit", b_plain_one, b_plain},
      {"batched     plain, one call, each signals", b_plain_each, b_plain},
      {"batched     plain, all in one command buffer", b_plain_cmd, b_plain},
      {"batched     plain, one primary, N secondaries", b_plain_sec, b_plain},
      {"batched     vkds (per dispatch)", b_vkds, b_plain},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i)
    printf("%-26s  %-42s %10.2f  %8.2fx\n", i ? "" : where, rows[i].what, rows[i].ns / 1e3,
           rows[i].ns / rows[i].base);
  printf("%-26s  %-42s %10.2f  %8.2fx\n", "", "round trip  vkds / plain recorded each time", v_default / 1e3,
         v_default / recorded);
  printf("%-26s  %-42s %10s  %9s %9s %8s %6s %6s %6s\n", "", "throughput (per task; ratio = plain / row)", "µs",
         "1-by-1", "all-in-1", "per call", "before", "record", "after");
  gpu_counter c2;
  if (gpu_counter_create(&c2, res) != VK_SUCCESS) {
    plain_close(&p);
    return 1;
  }
  err = throughput_rows(&p, res, &c2, batch, b_plain, b_plain_one);
  gpu_counter_destroy(&c2);
  plain_close(&p);
  if (err != VKDS_SUCCESS) {
    fprintf(stderr, "vkds-bench: %s: %s\n", vkds_result_str(err), bench_error_detail(err));
    return 1;
  }
  return 0;
}

int bench_submit(vkds_context *ctx, const bench_options *opt) {
  uint32_t batch = opt->count ? opt->count : 1000;
  printf("%-26s  %-42s %10s  %9s\n", "resource", "variant", "µs", "ratio");
  int status = 0;
  /* the first queue of every queue family of every device (a compute-only family may
   * answer faster than a graphics one) */
  uint32_t last_device = UINT32_MAX, last_family = UINT32_MAX;
  for (uint32_t i = 0; i < vkds_context_resource_count(ctx); ++i) {
    vkds_resource_info ri;
    vkds_resource_get_info(vkds_context_resource(ctx, i), &ri);
    if (ri.device_index == last_device && ri.queue_family == last_family) continue;
    last_device = ri.device_index, last_family = ri.queue_family;
    status |= bench_resource(vkds_context_resource(ctx, i), batch);
  }
  printf("ratio: plain rows against plain/fence; each vkds round trip against the plain one that\n"
         "waits alike (spin-then-sleep and spin only: plain/spin; sleep: plain/timeline);\n"
         "batched vkds against batched plain. Same device, same run. Throughput: vkdsR rows\n"
         "replay one kept recording (vkds_task_info.replay_key), vkds rows record every task.\n");
  return status;
}
