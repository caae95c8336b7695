/* lib/backend/queue.c: what vkds tracks per VkQueue: a timeline semaphore that every vkds
 * submit signals, recycled slots (command pool, buffer, timestamp queries), the
 * in-flight list that completion reports come from, and the pending list that
 * coalesced and deferred submits go through (with the queue's flusher thread). */
#include "internal.h"
#include "queue_test.h"

#include <sched.h>
#include <stdlib.h>
#include <time.h>

/* Deferred tasks next to each other in a call share a VkSubmitInfo and one signal, the
 * group's last value, this many at most. Each keeps its own value: the timeline passes
 * it when the group is done, and a wait for it waits for the group's signal
 * (signal_point: waiting for a value that only a larger signal reaches makes the
 * validation layer of Debian bookworm time out, a layer bug fixed in 2024). Each keeps
 * its reports and GPU time (timestamps). A signal costs the GPU about 0.7 us a task
 * (H100: 6.1 against 5.4 us a tiny task, bench/RESULTS.md); tiny tasks on one queue
 * reached 0.78-0.89x plain Vulkan's all-in-one submit with a signal each, 0.88-0.94x in
 * groups of 8 and 0.87-0.97x of 64 (one thread, 0.90-0.97x with this code; issue 15,
 * session 16). 8 bounds what a task can wait for behind it: seven tasks queued after it. */
#define SIGNAL_GROUP 8

uint64_t vkds__now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

vkds_result vkds__queue_init(vkds_resource *r) {
  vkds__device *dev = r->dev;
  VkSemaphoreTypeCreateInfo type = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                    .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
  VkSemaphoreCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &type};
  VkResult vr = dev->vk.vkCreateSemaphore(dev->device, &ci, vkds__vk_allocator(dev->ctx), &r->timeline);
  if (vr != VK_SUCCESS) {
    r->timeline = VK_NULL_HANDLE; /* undefined after a failure: vkds__queue_destroy must not see it */
    return vkds__vk_fail(dev->ctx, vr, "vkCreateSemaphore (timeline)");
  }
  pthread_mutex_init(&r->track_lock, NULL);
  pthread_mutex_init(&r->pending_lock, NULL);
  return VKDS_SUCCESS;
}

/* (its command buffer goes with its group's pool) */
static void slot_free(vkds__device *dev, vkds__slot *s) {
  vkds__buffer_destroy(dev, &s->scratch);
  if (s->timestamps) dev->vk.vkDestroyQueryPool(dev->device, s->timestamps, vkds__vk_allocator(dev->ctx));
  vkds_selection_release(s->report_to);
  vkds__free(dev->ctx, s);
}

static void group_free(vkds__device *dev, vkds__pool_group *g) {
  if (g->pool) dev->vk.vkDestroyCommandPool(dev->device, g->pool, vkds__vk_allocator(dev->ctx));
  pthread_mutex_destroy(&g->lock);
  vkds__free(dev->ctx, g);
}

static void stop_flusher(vkds_resource *r);

void vkds__queue_destroy(vkds_resource *r) {
  vkds__device *dev = r->dev;
  if (!r->timeline) return;
  stop_flusher(r); /* (nothing is pending: the context waited for everything) */
  if (r->lead_pool) dev->vk.vkDestroyCommandPool(dev->device, r->lead_pool, vkds__vk_allocator(dev->ctx));
  r->lead_pool = VK_NULL_HANDLE;
  /* (the context reclaimed every queue first, so no slot holds a selection whose
   * release could run a backend's destroy, and with it a reclaim, from here; the lists
   * are detached first all the same) */
  vkds__slot *lists[2] = {r->free_slots, r->inflight_head};
  r->free_slots = r->inflight_head = r->inflight_tail = NULL;
  atomic_store(&r->inflight_count, 0);
  for (vkds__slot **l = lists; l < lists + 2; ++l)
    for (vkds__slot *s = *l, *next; s; s = next) {
      next = s->next;
      slot_free(dev, s);
    }
  for (vkds__pool_group *g = r->groups, *next; g; g = next) {
    next = g->next;
    group_free(dev, g);
  }
  r->groups = NULL;
  dev->vk.vkDestroySemaphore(dev->device, r->timeline, vkds__vk_allocator(dev->ctx));
  r->timeline = VK_NULL_HANDLE;
  pthread_mutex_destroy(&r->track_lock);
  pthread_mutex_destroy(&r->pending_lock);
}

/* ---- slots and their command pools ----
 *
 * A slot's command buffer comes from a pool that up to VKDS__GROUP_SLOTS slots of the
 * queue share (vkds__pool_group), not from a pool of its own. On NVIDIA's driver (580,
 * H200; bench/RESULTS.md, session 44) vkds_submit's vkBeginCommandBuffer, resetting a
 * buffer alone in its pool, took 1.6 us a task from one thread and 9.3 / 16.6 us from 4 /
 * 16 threads; in plain Vulkan (bench/experiments/command_pools.c) such begins took 1.3-17
 * us from 1-12 threads while another thread submitted, and 0.8-2.5 us for buffers that
 * share a pool. Tiny tasks on one queue went from 0.95 / 0.83 / 0.69x plain Vulkan's
 * all-in-one submit at 1 / 4 / 16 threads to 0.98 / 0.93 / 0.77x (medians of ten runs).
 * A pool is externally synchronized:
 * the thread that records a slot holds its group's lock from the reset to
 * vkEndCommandBuffer (vkds__queue_recorded), and others only try it, taking slots of
 * groups nobody records meanwhile. vkQueueSubmit does not touch the pool, so a
 * group's other slots are submitted while one is recorded. */

/* Makes a group with its pool, locked for the caller. */
static vkds_result group_create(vkds_resource *r, vkds__pool_group **out) {
  vkds__device *dev = r->dev;
  vkds__pool_group *g = vkds__alloc(dev->ctx, sizeof *g);
  if (!g) return vkds__fail(dev->ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "command pool group");
  *g = (vkds__pool_group){0};
  VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                 /* each buffer reset by its vkBeginCommandBuffer, apart
                                  * from the kept recordings beside it */
                                 .flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT |
                                          VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                 .queueFamilyIndex = r->family};
  VkResult vr = dev->vk.vkCreateCommandPool(dev->device, &pci, vkds__vk_allocator(dev->ctx), &g->pool);
  if (vr != VK_SUCCESS) {
    vkds__free(dev->ctx, g);
    return vkds__vk_fail(dev->ctx, vr, "vkCreateCommandPool");
  }
  pthread_mutex_init(&g->lock, NULL);
  pthread_mutex_lock(&g->lock); /* (nobody else sees it yet) */
  *out = g;
  return VKDS_SUCCESS;
}

/* A group with room for one more slot, locked for the caller and its place reserved
 * (made when no group with room is free to lock). */
static vkds_result group_with_room(vkds_resource *r, vkds__pool_group **out) {
  pthread_mutex_lock(&r->track_lock);
  vkds__pool_group *g = r->groups;
  for (; g; g = g->next)
    if (g->slots < VKDS__GROUP_SLOTS && pthread_mutex_trylock(&g->lock) == 0) break;
  if (g) ++g->slots;
  pthread_mutex_unlock(&r->track_lock);
  if (!g) {
    VKDS_CHECK(group_create(r, &g));
    g->slots = 1;
    pthread_mutex_lock(&r->track_lock);
    g->next = r->groups;
    r->groups = g;
    pthread_mutex_unlock(&r->track_lock);
  }
  *out = g;
  return VKDS_SUCCESS;
}

/* A new slot whose command buffer comes from a group this thread then holds (`record`)
 * or not. */
static vkds_result slot_create(vkds_resource *r, bool record, vkds__slot **out) {
  vkds__device *dev = r->dev;
  vkds__slot *s = vkds__alloc(dev->ctx, sizeof *s);
  if (!s) return vkds__fail(dev->ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "slot");
  *s = (vkds__slot){0};
  vkds__pool_group *g;
  vkds_result res = group_with_room(r, &g);
  if (res != VKDS_SUCCESS) {
    vkds__free(dev->ctx, s);
    return res;
  }
  VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                    .commandPool = g->pool,
                                    .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                    .commandBufferCount = 1};
  VkResult vr = dev->vk.vkAllocateCommandBuffers(dev->device, &ai, &s->cmd);
  if (vr != VK_SUCCESS) {
    pthread_mutex_lock(&r->track_lock);
    --g->slots;
    pthread_mutex_unlock(&r->track_lock);
    pthread_mutex_unlock(&g->lock);
    vkds__free(dev->ctx, s);
    return vkds__vk_fail(dev->ctx, vr, "vkAllocateCommandBuffers");
  }
  s->group = g;
  s->recording = record;
  if (!record) pthread_mutex_unlock(&g->lock);
  *out = s;
  return VKDS_SUCCESS;
}

void vkds__queue_recorded(vkds__slot *s) {
  if (!s->recording) return;
  s->recording = false;
  pthread_mutex_unlock(&s->group->lock);
}

/* ---- vkds's barriers (recorded by algorithms, launches and the queue's lead) ---- */

void vkds__cmd_barrier(const vkds__device *dev, VkCommandBuffer cmd, VkPipelineStageFlags src,
                       VkAccessFlags src_access, VkPipelineStageFlags dst, VkAccessFlags dst_access) {
  VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = src_access, .dstAccessMask = dst_access};
  dev->vk.vkCmdPipelineBarrier(cmd, src, dst, 0, 1, &mb, 0, NULL, 0, NULL);
}

#define WORK_STAGES (VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT)
#define WORK_WRITES (VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT)
#define WORK_ACCESS (VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT | \
                     VK_ACCESS_TRANSFER_WRITE_BIT)

void vkds__cmd_lead_barrier(const vkds__device *dev, VkCommandBuffer cmd) {
  vkds__cmd_barrier(dev, cmd, WORK_STAGES, WORK_WRITES, WORK_STAGES, WORK_ACCESS);
}

void vkds__cmd_full_barrier(const vkds__device *dev, VkCommandBuffer cmd) {
  vkds__cmd_barrier(dev, cmd, WORK_STAGES, WORK_WRITES, WORK_STAGES | VK_PIPELINE_STAGE_HOST_BIT,
                    WORK_ACCESS | VK_ACCESS_HOST_READ_BIT);
}

/* ---- the queue's leading barrier ----
 *
 * An algorithm call's or a launch's recording would begin with a barrier that orders it
 * after the writes of whatever ran before it on the queue, and ends with one that orders
 * its own writes before whatever comes next (and the host). When the command buffer before it ends in
 * such a full barrier, the leading one orders nothing more, and costs 1.3 us of a 20 us
 * round trip on the H100 (bench/RESULTS.md). So a task may leave its leading barrier to
 * the queue (vkds__slot.needs_lead): submit_batch, which knows what went to the queue
 * just before, in order, puts this barrier-only command buffer before it in the same
 * VkSubmitInfo when that did not end in a full barrier: another kind of vkds task, a
 * staging copy, the first submission, or anything after vkds_resource_unlock_queue (the
 * application's own submissions). Barriers order across submissions to one queue. */
static bool make_lead(vkds_resource *r) {
  vkds__device *dev = r->dev;
  VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, .queueFamilyIndex = r->family};
  if (dev->vk.vkCreateCommandPool(dev->device, &pci, vkds__vk_allocator(dev->ctx), &r->lead_pool) != VK_SUCCESS) {
    r->lead_pool = VK_NULL_HANDLE;
    return false;
  }
  VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = r->lead_pool,
                                    .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
  /* pending in several submissions at once */
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                 .flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT};
  bool ok = dev->vk.vkAllocateCommandBuffers(dev->device, &ai, &r->lead_cmd) == VK_SUCCESS &&
            dev->vk.vkBeginCommandBuffer(r->lead_cmd, &bi) == VK_SUCCESS;
  if (ok) {
    vkds__cmd_lead_barrier(dev, r->lead_cmd);
    ok = dev->vk.vkEndCommandBuffer(r->lead_cmd) == VK_SUCCESS;
  }
  if (!ok) {
    dev->vk.vkDestroyCommandPool(dev->device, r->lead_pool, vkds__vk_allocator(dev->ctx));
    r->lead_pool = VK_NULL_HANDLE;
  }
  return ok;
}

bool vkds__queue_takes_lead(const vkds_backend *b, vkds_resource *res) {
  const vkds_backend_ops *ops = b->ops;
  return ops->instrument_before == vkds_backend_vulkan_ops.instrument_before &&
         ops->instrument_after == vkds_backend_vulkan_ops.instrument_after && ops->submit == vkds_backend_base_ops.submit &&
         vkds__queue_lead_ready(res);
}

uint64_t vkds__queue_lead_barriers(const vkds_resource *r) {
  return r ? atomic_load_explicit(&r->lead_barriers, memory_order_relaxed) : 0;
}

bool vkds__queue_lead_ready(vkds_resource *r) {
  if (r->dev->adopted) return false;
  int state = atomic_load_explicit(&r->lead_state, memory_order_acquire);
  if (state) return state == 1;
  pthread_mutex_lock(&r->pending_lock); /* once per queue */
  state = atomic_load_explicit(&r->lead_state, memory_order_relaxed);
  if (!state) {
    state = make_lead(r) ? 1 : 2;
    atomic_store_explicit(&r->lead_state, state, memory_order_release);
  }
  pthread_mutex_unlock(&r->pending_lock);
  return state == 1;
}

/* Free slots that hold a recording kept for replays are taken for other work only when
 * this many are free and none without one: below it, other work gets a new slot, so
 * that the staging copies between two identical calls do not record over the first
 * call's recording. */
enum { KEEP_RECORDINGS = 8 };

/* With `replay`, the free slot that holds that recording (NULL when none does); else the
 * first free slot that holds none, or, when every free slot holds one and there are at
 * least KEEP_RECORDINGS of them, the one released longest ago (the list is in order of
 * release, the latest first: taking the latest recorded over the recording a loop of
 * two alternating calls was about to replay, so neither was ever replayed once eight
 * older recordings were kept; a new-user probe); NULL otherwise. With `record`, only a
 * slot whose group this thread can lock (then held: see vkds__pool_group). With
 * count_new, a slot about to be created is counted when NULL is returned. */
static vkds__slot *pop_free(vkds_resource *r, bool count_new, const vkds__replay *replay, bool record) {
  pthread_mutex_lock(&r->track_lock);
  vkds__slot **at = &r->free_slots;
  uint32_t kept = 0;
  if (replay) {
    while (*at && !((*at)->replay_key == replay->key && (*at)->replay_timed == replay->timed &&
                    (*at)->replay_label == replay->label))
      at = &(*at)->next;
  } else {
    vkds__slot **oldest = NULL;
    for (; *at; at = &(*at)->next) {
      if ((*at)->replay_key) oldest = at, ++kept;
      else if (!record || pthread_mutex_trylock(&(*at)->group->lock) == 0) break;
    }
    if (!*at && kept >= KEEP_RECORDINGS && (!record || pthread_mutex_trylock(&(*oldest)->group->lock) == 0))
      at = oldest;
  }
  vkds__slot *s = *at;
  if (s) *at = s->next, s->recording = record && !replay;
  else if (count_new) ++r->slot_count;
  pthread_mutex_unlock(&r->track_lock);
  return s;
}

static vkds_result reclaim_upto(vkds_resource *r, uint64_t done);

vkds_result vkds__queue_acquire_slot(vkds_resource *r, const vkds__replay *replay, bool record, vkds__slot **out) {
  /* Reclaim first, so that a slot just finished is the one reused and slots never pile
   * up behind finished work: what the last read of the timeline says is finished (no
   * driver call), and only when that frees no slot, a new read of the timeline (driver
   * calls contend when several threads submit, and on lavapipe each read costs more
   * the more work is in flight: bench/RESULTS.md). */
  vkds_result res = vkds__queue_reclaim_known(r);
  vkds__slot *s = res == VKDS_SUCCESS && replay && replay->key ? pop_free(r, false, replay, record) : NULL;
  bool replayed = s != NULL;
  if (!s && res == VKDS_SUCCESS) s = pop_free(r, false, NULL, record);
  if (!s && res == VKDS_SUCCESS) {
    res = vkds__queue_reclaim(r);
    if (res == VKDS_SUCCESS) s = pop_free(r, true, NULL, record);
  }
  /* (a reused slot's command buffer finished, so vkBeginCommandBuffer may reset it) */
  if (!s && res == VKDS_SUCCESS) {
    res = slot_create(r, record, &s);
    if (res != VKDS_SUCCESS) {
      pthread_mutex_lock(&r->track_lock);
      --r->slot_count;
      pthread_mutex_unlock(&r->track_lock);
    }
  }
  if (res != VKDS_SUCCESS) return res;
  s->next = NULL;
  s->replayed = replayed;
  if (!replayed) s->replay_key = 0, s->needs_lead = s->ends_full = false; /* whatever it held is recorded over */
  s->timed = replayed && s->replay_timed;
  s->value = 0;
  s->report_to = NULL;
  *out = s;
  return VKDS_SUCCESS;
}

void vkds__queue_release_slot(vkds_resource *r, vkds__slot *s) {
  vkds__queue_recorded(s); /* (a recording given up) */
  vkds_selection_release(s->report_to);
  s->report_to = NULL;
  pthread_mutex_lock(&r->track_lock);
  s->next = r->free_slots;
  r->free_slots = s;
  pthread_mutex_unlock(&r->track_lock);
}

void vkds__queue_track(vkds_resource *r, vkds__slot *s) {
  s->next = NULL;
  pthread_mutex_lock(&r->track_lock);
  if (r->inflight_tail) r->inflight_tail->next = s;
  else r->inflight_head = s;
  r->inflight_tail = s;
  atomic_fetch_add_explicit(&r->inflight_count, 1, memory_order_release);
  pthread_mutex_unlock(&r->track_lock);
}

/* Raises the cached completed value to at least v. */
static void note_completed(vkds_resource *r, uint64_t v) {
  uint64_t old = atomic_load_explicit(&r->completed, memory_order_relaxed);
  while (old < v && !atomic_compare_exchange_weak(&r->completed, &old, v)) {
  }
}

static vkds_result read_counter(vkds_resource *r, uint64_t *value) {
  VkResult vr = r->dev->vk.vkGetSemaphoreCounterValue(r->dev->device, r->timeline, value);
  if (vr != VK_SUCCESS) return vkds__device_vk_fail(r->dev, vr, "vkGetSemaphoreCounterValue");
  note_completed(r, *value);
  return VKDS_SUCCESS;
}

/* Reads the timestamps of a finished slot into s->time_ns; call in completion order,
 * under track_lock. A task's time runs from its start, or from the end of the task
 * before it on this queue if that came later: submissions to one queue overlap, and a
 * TOP_OF_PIPE timestamp is written when the command reaches the front of the pipe,
 * while the task before may still be running. Without this, every task of a backed-up
 * queue could be charged with part of its predecessor's time, and a busy queue would
 * look slower than an idle one of the same speed. */
static void read_task_time(vkds_resource *r, vkds__slot *s) {
  s->time_known = false;
  if (!s->timed) {
    r->last_end_ticks = 0; /* an untimed task ran in between: its end is unknown */
    return;
  }
  uint64_t ticks[2];
  VkResult vr = r->dev->vk.vkGetQueryPoolResults(r->dev->device, s->timestamps, 0, 2, sizeof ticks, ticks,
                                                 sizeof ticks[0], VK_QUERY_RESULT_64_BIT);
  if (vr != VK_SUCCESS) {
    r->last_end_ticks = 0;
    return;
  }
  uint32_t bits = r->dev->facts.families[r->family].timestampValidBits;
  uint64_t mask = bits >= 64 ? UINT64_MAX : (1ull << bits) - 1;
  uint64_t start = ticks[0], length = (ticks[1] - start) & mask;
  uint64_t prev = r->last_end_ticks;
  if (prev && ((prev - start) & mask) < length) start = prev; /* the previous task ended inside this one */
  s->time_ns = (uint64_t)((double)((ticks[1] - start) & mask) * r->dev->facts.props.properties.limits.timestampPeriod + 0.5);
  s->time_known = true;
  r->last_end_ticks = ticks[1];
}

static void report_finished(vkds__slot *s) {
  if (!s->report_to) return;
  if (s->time_known) vkds_selection_report(s->report_to, VKDS_REPORT_TIME, s->key, s->time_ns);
  vkds_selection_report(s->report_to, VKDS_REPORT_COMPLETION, s->key, 0);
}

/* The reclaims this thread is delivering reports of, innermost first: a report sink
 * may wait (for its own queue too), and must not wait for its own delivery. */
typedef struct delivery {
  vkds_resource *r;
  struct delivery *up;
} delivery;
static VKDS__FAST_TLS delivery *deliveries_here;

/* Releases the slots of work up to timeline value `done` (and reports them). The
 * reports are delivered outside track_lock, so a thread that finds the slots already
 * taken must not take that for "reported": on a queue shared by several policies the
 * taker may be a thread of another policy, and a wait returning early let the owner
 * free its policy under the delivery (use after free in the policy's report sink,
 * session 27). `delivering` counts such deliveries (and deferred tasks submitted but
 * not yet tracked: submit_batch); vkds__queue_settle waits for them. */
static vkds_result reclaim_upto(vkds_resource *r, uint64_t done) {
  if (atomic_load_explicit(&r->inflight_count, memory_order_acquire) == 0) return VKDS_SUCCESS;
  pthread_mutex_lock(&r->track_lock);
  if (!r->inflight_head || r->inflight_head->value > done) { /* nothing new finished */
    pthread_mutex_unlock(&r->track_lock);
    return VKDS_SUCCESS;
  }
  /* before the slots leave: a thread that then reads inflight_count (acquire) as 0 and
   * skips the lock still sees this delivery */
  atomic_fetch_add_explicit(&r->delivering, 1, memory_order_relaxed);
  vkds__slot *finished = NULL, **tail = &finished;
  while (r->inflight_head && r->inflight_head->value <= done) {
    vkds__slot *s = r->inflight_head;
    r->inflight_head = s->next;
    read_task_time(r, s);
    *tail = s;
    tail = &s->next;
    atomic_fetch_sub_explicit(&r->inflight_count, 1, memory_order_release);
  }
  *tail = NULL;
  if (!r->inflight_head) r->inflight_tail = NULL;
  pthread_mutex_unlock(&r->track_lock);
  /* reports call user code: outside the lock */
  delivery here = {.r = r, .up = deliveries_here};
  deliveries_here = &here;
  for (vkds__slot *s = finished; s; s = s->next) report_finished(s);
  deliveries_here = here.up;
  atomic_fetch_sub_explicit(&r->delivering, 1, memory_order_release);
  /* The slots go back after the delivery: releasing one releases its selection, whose
   * backend (vkds_selection_create's, destroyed while the task ran) may then be
   * destroyed here, and that destroy waits for the queue's deliveries: inside its own,
   * two threads doing so waited for each other forever (a concurrency probe). A policy
   * is not touched by the release of a submitted selection. */
  for (vkds__slot *s = finished, *next; s; s = next) {
    next = s->next;
    vkds__queue_release_slot(r, s);
  }
  return VKDS_SUCCESS;
}

void vkds__queue_settle(vkds_resource *r) {
  uint32_t own = 0;
  for (const delivery *d = deliveries_here; d; d = d->up) own += d->r == r;
  for (;;) {
    reclaim_upto(r, atomic_load_explicit(&r->completed, memory_order_acquire));
    if (atomic_load_explicit(&r->delivering, memory_order_acquire) <= own) return;
    /* reports are a few policy updates each: spin, then give the core away; then look
     * again, for slots a deferred batch tracked meanwhile */
    for (uint32_t round = 0; atomic_load_explicit(&r->delivering, memory_order_acquire) > own; ++round) {
      if (round < 1024) vkds__cpu_relax();
      else sched_yield();
    }
  }
}

vkds_result vkds__queue_reclaim(vkds_resource *r) {
  /* nothing in flight: no lock, no driver call (a slot tracked concurrently is reclaimed
   * by a later call) */
  uint64_t done;
  if (atomic_load_explicit(&r->inflight_count, memory_order_acquire) == 0) return VKDS_SUCCESS;
  VKDS_CHECK(read_counter(r, &done));
  return reclaim_upto(r, done);
}

vkds_result vkds__queue_reclaim_known(vkds_resource *r) {
  return reclaim_upto(r, atomic_load_explicit(&r->completed, memory_order_acquire));
}

static vkds_result submit_for(vkds_resource *r, uint64_t value, bool block);

vkds_result vkds__queue_timed_out(vkds_resource *r, VkResult vk, uint64_t timeout_ns) {
  return vkds__timed_out(r->dev->ctx, vk, "%s%squeue %u: not done after %llu ns", vkds__in_call() ? vkds__caller("") : "",
                         vkds__in_call() ? ": " : "", r->index, (unsigned long long)timeout_ns);
}

/* The value whose signal tells that submitted value v is reached: v, or the last value
 * of v's group of deferred tasks (submit_batch). An entry a later value took over (or a
 * value that was never signalled) gives the last value submitted, which is signalled
 * and at least v. */
static uint64_t signal_point(vkds_resource *r, uint64_t v) {
  uint64_t submitted = atomic_load(&r->submitted); /* (before the entry: its store published it) */
  if (v > submitted) return v; /* (not submitted yet: a task that submits by itself, say) */
  uint64_t p = atomic_load_explicit(&r->signal_points[v % VKDS__SIGNAL_RING], memory_order_relaxed);
  return p >= v && p - v < SIGNAL_GROUP && p <= submitted ? p : submitted;
}

vkds_result vkds__queue_poll(vkds_resource *r, uint64_t value) {
  if (atomic_load_explicit(&r->completed, memory_order_acquire) >= value) return VKDS_SUCCESS;
  VKDS_CHECK(vkds__device_check_lost(r->dev, "waiting for a submission"));
  VKDS_CHECK(submit_for(r, value, false));
  uint64_t now;
  VKDS_CHECK(read_counter(r, &now));
  return now >= value ? VKDS_SUCCESS : VKDS_ERROR_WOULD_BLOCK;
}

vkds_result vkds__queue_wait(vkds_resource *r, uint64_t value, uint64_t timeout_ns, uint64_t spin_ns) {
  if (atomic_load_explicit(&r->completed, memory_order_acquire) >= value) return VKDS_SUCCESS;
  /* work that had not finished when the device was lost never will */
  VKDS_CHECK(vkds__device_check_lost(r->dev, "waiting for a submission"));
  VKDS_CHECK(submit_for(r, value, true));
  /* Spin first: sleeping in the driver costs tens of microseconds of wake-up on some
   * GPUs (bench/RESULTS.md has the numbers), more than short tasks take. */
  uint64_t start = vkds__now_ns(), elapsed = 0;
  uint64_t spin = spin_ns < timeout_ns ? spin_ns : timeout_ns;
  for (;;) {
    uint64_t now_value;
    VKDS_CHECK(read_counter(r, &now_value));
    if (now_value >= value) return VKDS_SUCCESS;
    elapsed = vkds__now_ns() - start;
    if (elapsed >= spin) break;
  }
  if (elapsed >= timeout_ns) return vkds__queue_timed_out(r, VK_TIMEOUT, timeout_ns);
  uint64_t point = signal_point(r, value);
  VkSemaphoreWaitInfo wi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                            .semaphoreCount = 1,
                            .pSemaphores = &r->timeline,
                            .pValues = &point};
  uint64_t left = timeout_ns == UINT64_MAX ? UINT64_MAX : timeout_ns - elapsed;
  VkResult vr = r->dev->vk.vkWaitSemaphores(r->dev->device, &wi, left);
  if (vr == VK_TIMEOUT) return vkds__queue_timed_out(r, vr, timeout_ns);
  if (vr != VK_SUCCESS) return vkds__device_vk_fail(r->dev, vr, "vkWaitSemaphores");
  note_completed(r, point);
  return VKDS_SUCCESS;
}

/* ---- coalesced submission ----
 *
 * One vkQueueSubmit costs the GPU's front end about as much as the tiny task it
 * carries, and several tasks in one call cost less each (H100: 9.4-14.6 us per
 * dispatch one call each, 5.5-6.3 us each in one call, bench/RESULTS.md). Two ways put
 * several tasks in one call.
 *
 * Flat combining: threads that submit to one queue at once share submits. A thread puts
 * its request on the queue's pending list (which gives it its timeline value, in list
 * order), then takes the queue; if its request is still there, it submits every pending
 * request (its own and those of threads that queued meanwhile) in one call, each with
 * its own VkSubmitInfo and value, in list order, and marks them done. While another
 * thread holds the queue, a thread watches its request instead of queueing up for the
 * lock (for at most QUEUE_SPIN_NS, then it blocks): threads blocked on the lock would
 * each have to take it in turn only to find their requests done, and that convoy left
 * every new holder almost nothing to combine (H100, 16 threads: 1.08 tasks per call).
 *
 * Deferred submission: flat combining alone gives a call at most one task a thread (a
 * thread waits for its request), so one thread that does not wait for its tasks paid a
 * call each, and 16 threads reached 2.2-4.2 tasks a call (bench/RESULTS.md, session 12).
 * So while the GPU is backed up (DEFER_BACKLOG or more of this queue's submits not
 * finished), a task that may be deferred (the backend's tasks; not staging, which waits
 * at once) is put on the pending list with its value and its thread goes on. The
 * queue's flusher thread (started on the first deferral) waits for the GPU, not for a
 * timer: when all but the last submit finished, everything pending goes in one call
 * (the GPU still has the last one to run meanwhile); deferred tasks next to each other
 * in it share a signal, up to SIGNAL_GROUP of them. Anyone who waits for a value not
 * yet submitted submits the pending requests first, as do a submit that is not
 * deferred and vkds_resource_lock_queue: nothing waits behind a deferred task, and an
 * application's own submits come after the tasks before them. A lone task, or
 * one reaching an idle or nearly idle queue, is submitted at once, at the price of two
 * uncontended lock operations.
 *
 * A failed call fails every request in it. A thread that waits for its request reports
 * the VkResult itself (its own last-error message says it); deferred tasks report
 * completion (so that policies stop counting them), and the queue keeps the VkResult:
 * every later wait for a value not submitted, and every later submit, fails with it
 * (values after a lost one would otherwise make it look finished). Stack requests live
 * until their thread saw them done; deferred ones live in their slots, which belong to
 * the queue once tracked. */
enum { DEFER_BACKLOG = 2 };
#define QUEUE_SPIN_NS 50000u
#define FLUSHER_SPIN_NS 20000u
/* the longest the flusher holds tasks back for a GPU that makes no progress (a queue
 * stalled behind a task that waits for the host): then it submits them anyway */
#define FLUSHER_SLICE_NS 10000000u
#define MAX_COALESCED 64

/* Puts a request on the pending list and gives it the next value, which it returns
 * (read nothing from a deferred request afterwards: it may be submitted and its slot
 * reused at once). */
static uint64_t enqueue(vkds_resource *r, vkds__submit_req *req) {
  req->next = NULL;
  pthread_mutex_lock(&r->pending_lock);
  req->value = atomic_load_explicit(&r->assigned, memory_order_relaxed) + 1;
  atomic_store_explicit(&r->assigned, req->value, memory_order_relaxed);
  if (r->pending_tail) r->pending_tail->next = req;
  else r->pending_head = req;
  r->pending_tail = req;
  ++r->pending_count;
  uint64_t value = req->value;
  if (req->deferred && r->flusher_started) pthread_cond_signal(&r->flusher_cv);
  pthread_mutex_unlock(&r->pending_lock);
  return value;
}

/* A deferred task whose call failed: it never runs; its completion is reported (it is
 * no longer in flight for a policy); submit_batch gives its slot back afterwards. */
static void drop_deferred(vkds__slot *s) {
  s->time_known = false;
  report_finished(s);
}

/* Submits up to MAX_COALESCED requests (linked) in one call; returns what follows them.
 * A request whose thread waits for it is its own VkSubmitInfo with its own signal, so
 * it completes when it is done, not when the last task of its call is (one signal for a
 * whole call measured 4-15% more tiny tasks a second at 16 threads on the H100, before
 * deferral: bench/RESULTS.md, issue 15, session 12); deferred ones next to each other,
 * whose threads went on, share one VkSubmitInfo and its signal (their last value), up
 * to SIGNAL_GROUP of them. */
static vkds__submit_req *submit_batch(vkds_resource *r, vkds__submit_req *first) {
  vkds__device *dev = r->dev;
  vkds__submit_req *reqs[MAX_COALESCED];
  VkTimelineSemaphoreSubmitInfo ts[MAX_COALESCED];
  VkSubmitInfo si[MAX_COALESCED];
  VkCommandBuffer cmds[2 * MAX_COALESCED];
  uint32_t info_of[MAX_COALESCED];
  uint32_t n = 0, infos = 0, c = 0, deferred = 0, grouped = 0, drops = 0;
  vkds__slot *dropped[MAX_COALESCED];
  bool tail_full = r->tail_full; /* the queue is held: this is the order the GPU sees */
  vkds__submit_req *q = first;
  for (; q && n < MAX_COALESCED; q = q->next, ++n) {
    reqs[n] = q;
    deferred += q->deferred;
    /* a deferred task joins the deferred one before it, SIGNAL_GROUP at most a signal */
    if (!(q->deferred && n && reqs[n - 1]->deferred && grouped < SIGNAL_GROUP)) {
      ts[infos] = (VkTimelineSemaphoreSubmitInfo){.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                                                   .signalSemaphoreValueCount = 1};
      si[infos] = (VkSubmitInfo){.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                                 .pNext = &ts[infos],
                                 .pCommandBuffers = &cmds[c],
                                 .signalSemaphoreCount = 1,
                                 .pSignalSemaphores = &r->timeline};
      ++infos;
      grouped = 0;
    }
    if (q->slot->needs_lead && !tail_full) { /* (made: see needs_lead) */
      cmds[c++] = r->lead_cmd;
      si[infos - 1].commandBufferCount++;
      atomic_fetch_add_explicit(&r->lead_barriers, 1, memory_order_relaxed);
    }
    cmds[c++] = q->slot->cmd;
    si[infos - 1].commandBufferCount++;
    ts[infos - 1].pSignalSemaphoreValues = &q->value; /* the group's last */
    info_of[n] = infos - 1;
    ++grouped;
    tail_full = q->slot->ends_full;
  }
  if (!n) return q; /* (first is never NULL) */
  /* Deferred tasks are tracked (or, failed, reported) below, after the GPU may have run
   * them and any thread may have seen their values reached: until then they count as
   * reports on their way, or a wait for one could find it done, find nothing to reclaim
   * and return before its report (a probe: a capacity-1 policy still counted the task
   * after its wait). Whoever waits for the value of a task not deferred is the thread
   * that submitted it, which returns only once it is tracked. */
  if (deferred) atomic_fetch_add(&r->delivering, 1); /* (a full barrier: before the submit) */
  /* a device lost meanwhile (by another queue's thread), or a queue that lost deferred
   * tasks, takes nothing more */
  int lost_before = atomic_load(&r->deferred_error);
  VkResult vr = atomic_load(&dev->lost) ? VK_ERROR_DEVICE_LOST
                : lost_before          ? (VkResult)lost_before
                                       : dev->vk.vkQueueSubmit(r->queue, infos, si, VK_NULL_HANDLE);
  r->tail_full = vr == VK_SUCCESS && tail_full;
  if (vr == VK_SUCCESS) {
    /* where each value's signal is, then (publishing them) the last value submitted */
    for (uint32_t k = 0; k < n; ++k)
      atomic_store_explicit(&r->signal_points[reqs[k]->value % VKDS__SIGNAL_RING],
                            *ts[info_of[k]].pSignalSemaphoreValues, memory_order_relaxed);
    atomic_store_explicit(&r->before_last_signal,
                          infos > 1 ? *ts[infos - 2].pSignalSemaphoreValues : atomic_load(&r->submitted),
                          memory_order_relaxed);
    atomic_store(&r->submitted, reqs[n - 1]->value);
    atomic_fetch_add_explicit(&r->submit_calls, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&r->submitted_tasks, n, memory_order_relaxed);
  } else if (deferred) {
    int none = 0;
    atomic_compare_exchange_strong(&r->deferred_error, &none, (int)vr);
  }
  for (uint32_t k = 0; k < n; ++k) {
    vkds__submit_req *req = reqs[k];
    vkds__slot *slot = req->slot;
    if (req->deferred) { /* its slot's last use here: once tracked, another thread may reuse it */
      if (vr != VK_SUCCESS) {
        drop_deferred(slot);
        dropped[drops++] = slot;
        continue;
      }
      slot->value = req->value;
      vkds__queue_track(r, slot);
      continue;
    }
    req->vk = vr;
    if (vr == VK_SUCCESS) {
      slot->value = req->value;
      vkds__queue_track(r, slot); /* from here on another thread may reclaim and reuse it */
    }
    atomic_store_explicit(&req->done, true, memory_order_release); /* the owner may return now */
  }
  if (deferred) atomic_fetch_sub_explicit(&r->delivering, 1, memory_order_release);
  /* (after the delivery, as reclaim_upto does: a slot's release may run a backend's
   * destroy, which settles the queue) */
  for (uint32_t k = 0; k < drops; ++k) vkds__queue_release_slot(r, dropped[k]);
  return q;
}

void vkds__queue_flush_pending(vkds_resource *r) {
  for (;;) {
    pthread_mutex_lock(&r->pending_lock);
    vkds__submit_req *batch = r->pending_head;
    r->pending_head = r->pending_tail = NULL;
    r->pending_count = 0;
    if (batch) atomic_fetch_add(&r->flushing, 1);
    pthread_mutex_unlock(&r->pending_lock);
    if (!batch) return;
    while (batch) batch = submit_batch(r, batch);
    atomic_fetch_sub(&r->flushing, 1);
  }
}

/* The queue's failure of deferred work, as the caller's error (VKDS_SUCCESS: none). */
static vkds_result deferred_failure(vkds_resource *r, const char *what) {
  int vk = atomic_load(&r->deferred_error);
  return vk ? vkds__device_vk_fail(r->dev, (VkResult)vk, what) : VKDS_SUCCESS;
}

/* Before waiting for `value`: submits the pending requests when it is one of them
 * (block: taking the queue even when another thread holds it; else only if it is free,
 * and the flusher will submit it). Not blocking never tries a queue the application
 * locks: its lock callback has no "try" and would block (a poll waited 1.5 s for an
 * application's present, and deadlocked on a thread that held the lock itself; a
 * probe); a value still pending there was deferred, so the flusher submits it. An
 * error when the call that carried it failed. */
static vkds_result submit_for(vkds_resource *r, uint64_t value, bool block) {
  if (atomic_load(&r->submitted) >= value) return VKDS_SUCCESS;
  /* (a caller that holds the queue flushes under its hold: vkds__queue_flush) */
  if (block || vkds__resource_held_here(r)) vkds__queue_flush(r);
  else if (!r->dev->queue_lock && vkds__resource_try_lock_queue(r)) {
    vkds__queue_flush_pending(r);
    vkds__resource_unlock_queue_own(r);
  }
  if (atomic_load(&r->submitted) >= value) return VKDS_SUCCESS;
  return deferred_failure(r, "vkQueueSubmit (of deferred tasks)");
}

void vkds__queue_self_submitted(vkds_resource *r, uint64_t value) {
  atomic_store_explicit(&r->signal_points[value % VKDS__SIGNAL_RING], value, memory_order_relaxed);
  atomic_store_explicit(&r->before_last_signal, atomic_load(&r->submitted), memory_order_relaxed);
  atomic_store(&r->submitted, value);
  atomic_fetch_add_explicit(&r->submit_calls, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&r->submitted_tasks, 1, memory_order_relaxed);
}

void vkds__queue_flush(vkds_resource *r) {
  pthread_mutex_lock(&r->pending_lock);
  /* a batch another thread took and is submitting counts as pending: taking the queue
   * waits for it (wait_all read the last submitted value before that submit and returned
   * before its tasks ran: 1,801 of 2,000 counted in test_backend under ASan). A caller
   * holding the queue sees none being submitted: that happens under the queue's lock. */
  bool none = !r->pending_head && atomic_load(&r->flushing) == 0;
  pthread_mutex_unlock(&r->pending_lock);
  if (none) return; /* (no lock taken: a caller that holds the queue, a task that submits by itself, may wait) */
  if (vkds__resource_held_here(r)) { /* (the thread holds the queue: vkds_resource_lock_queue) */
    vkds__queue_flush_pending(r);
    return;
  }
  vkds_resource_lock_queue(r);
  vkds__queue_flush_pending(r);
  vkds__resource_unlock_queue_own(r);
}

uint64_t vkds__queue_reserve_value(vkds_resource *r) {
  for (;;) {
    vkds__queue_flush_pending(r);
    pthread_mutex_lock(&r->pending_lock);
    if (!r->pending_head) { /* nothing queued before it: the next value is the next signalled */
      uint64_t v = atomic_load_explicit(&r->assigned, memory_order_relaxed) + 1;
      atomic_store_explicit(&r->assigned, v, memory_order_relaxed);
      pthread_mutex_unlock(&r->pending_lock);
      return v;
    }
    pthread_mutex_unlock(&r->pending_lock);
  }
}

/* Whether the GPU is backed up: DEFER_BACKLOG or more of the queue's submits unfinished
 * (the timeline is read only when the last value read says so). */
static bool backed_up(vkds_resource *r) {
  uint64_t submitted = atomic_load(&r->submitted);
  if (submitted - atomic_load_explicit(&r->completed, memory_order_acquire) < DEFER_BACKLOG) return false;
  uint64_t done;
  if (read_counter(r, &done) != VKDS_SUCCESS) return false; /* the submit will say what is wrong */
  return done < submitted && submitted - done >= DEFER_BACKLOG;
}

/* Waits until the queue's timeline reaches `value` or FLUSHER_SLICE_NS passed (spinning
 * FLUSHER_SPIN_NS first): the flusher's wait. Not vkds__queue_wait, which logs a
 * timeout as an error; errors here surface in the submit that follows. */
static void flusher_wait(vkds_resource *r, uint64_t value) {
  uint64_t start = vkds__now_ns(), done;
  do {
    if (read_counter(r, &done) != VKDS_SUCCESS || done >= value) return;
  } while (vkds__now_ns() - start < FLUSHER_SPIN_NS);
  VkSemaphoreWaitInfo wi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO, .semaphoreCount = 1,
                            .pSemaphores = &r->timeline, .pValues = &value};
  if (r->dev->vk.vkWaitSemaphores(r->dev->device, &wi, FLUSHER_SLICE_NS) == VK_SUCCESS) note_completed(r, value);
}

static void *flusher_main(void *arg) {
  vkds_resource *r = arg;
  pthread_mutex_lock(&r->pending_lock);
  for (;;) {
    while (!r->flusher_stop && !r->pending_head) pthread_cond_wait(&r->flusher_cv, &r->pending_lock);
    if (!r->pending_head) break; /* stopped, nothing left */
    bool stop = r->flusher_stop;
    pthread_mutex_unlock(&r->pending_lock);
    /* let the GPU come down to its last submit: then everything pending goes in one call,
     * while the GPU runs that one (a stop, or a lost device, submits at once) */
    uint64_t before_last = atomic_load_explicit(&r->before_last_signal, memory_order_relaxed);
    if (!stop && before_last && !atomic_load(&r->dev->lost)) flusher_wait(r, before_last);
    vkds__queue_flush(r);
    pthread_mutex_lock(&r->pending_lock);
  }
  pthread_mutex_unlock(&r->pending_lock);
  return NULL;
}

/* Starts the queue's flusher if it is not running; false if it cannot be started. */
static bool flusher_running(vkds_resource *r) {
  pthread_mutex_lock(&r->pending_lock);
  if (!r->flusher_started && !r->flusher_stop) {
    pthread_cond_init(&r->flusher_cv, NULL);
    r->flusher_started = pthread_create(&r->flusher, NULL, flusher_main, r) == 0;
    if (!r->flusher_started) pthread_cond_destroy(&r->flusher_cv);
  }
  bool running = r->flusher_started;
  pthread_mutex_unlock(&r->pending_lock);
  return running;
}

static void stop_flusher(vkds_resource *r) {
  pthread_mutex_lock(&r->pending_lock);
  r->flusher_stop = true;
  bool started = r->flusher_started;
  if (started) pthread_cond_signal(&r->flusher_cv);
  pthread_mutex_unlock(&r->pending_lock);
  if (!started) return;
  pthread_join(r->flusher, NULL); /* it submits what is still pending first */
  pthread_cond_destroy(&r->flusher_cv);
  r->flusher_started = false;
}

vkds_result vkds__queue_submit(vkds_resource *r, vkds__slot *s, bool may_defer, uint64_t *value_out) {
  vkds__device *dev = r->dev;
  VKDS_CHECK(vkds__device_check_lost(dev, "vkQueueSubmit"));
  VKDS_CHECK(deferred_failure(r, "vkQueueSubmit (of deferred tasks, earlier)"));
  if (may_defer && backed_up(r) && flusher_running(r)) {
    vkds__submit_req *req = &s->deferred;
    *req = (vkds__submit_req){.slot = s, .deferred = true};
    *value_out = enqueue(r, req);
    return VKDS_SUCCESS;
  }
  vkds__submit_req req = {.slot = s};
  atomic_init(&req.done, false);
  enqueue(r, &req);
  /* A thread that holds the queue (vkds_resource_lock_queue) and calls vkds on it submits
   * what is pending itself, this task last: waiting for the lock it holds, it hung (a
   * threads probe: vkds_upload, or a blocking algorithm, between lock and unlock). */
  if (vkds__resource_held_here(r)) vkds__queue_flush_pending(r);
  /* Until the request is done, take the queue if it is free and submit what is pending;
   * while another thread holds it (and may take this request along), watch the request
   * (see above). After QUEUE_SPIN_NS, block. */
  uint64_t spin_start = 0;
  for (uint32_t round = 0; !atomic_load_explicit(&req.done, memory_order_acquire); ++round) {
    bool held = vkds__resource_try_lock_queue(r);
    if (!held && (round & 63) == 63) { /* read the clock now and then */
      uint64_t now = vkds__now_ns();
      if (!spin_start) spin_start = now;
      else if (now - spin_start >= QUEUE_SPIN_NS) {
        vkds_resource_lock_queue(r);
        held = true;
      }
    }
    if (!held) {
      vkds__cpu_relax();
      continue;
    }
    /* still pending: nobody who held the queue since took it, so this thread submits */
    if (!atomic_load_explicit(&req.done, memory_order_acquire)) vkds__queue_flush_pending(r);
    vkds__resource_unlock_queue_own(r);
    break;
  }
  if (req.vk != VK_SUCCESS) return vkds__device_vk_fail(dev, req.vk, "vkQueueSubmit");
  *value_out = req.value;
  return VKDS_SUCCESS;
}
