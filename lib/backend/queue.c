/* lib/backend/queue.c: what vkds tracks per VkQueue: a timeline semaphore that every vkds
 * submit signals, recycled slots (command pool, buffer, timestamp queries), and the
 * in-flight list that completion reports come from. */
#include "internal.h"
#include "queue_test.h"

#include <stdlib.h>
#include <time.h>

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

static void slot_free(vkds__device *dev, vkds__slot *s) {
  vkds__buffer_destroy(dev, &s->scratch);
  if (s->timestamps) dev->vk.vkDestroyQueryPool(dev->device, s->timestamps, vkds__vk_allocator(dev->ctx));
  if (s->pool) dev->vk.vkDestroyCommandPool(dev->device, s->pool, vkds__vk_allocator(dev->ctx));
  vkds_selection_release(s->report_to);
  vkds__free(dev->ctx, s);
}

void vkds__queue_destroy(vkds_resource *r) {
  vkds__device *dev = r->dev;
  if (!r->timeline) return;
  if (r->lead_pool) dev->vk.vkDestroyCommandPool(dev->device, r->lead_pool, vkds__vk_allocator(dev->ctx));
  r->lead_pool = VK_NULL_HANDLE;
  for (vkds__slot *lists[2] = {r->free_slots, r->inflight_head}, **l = lists; l < lists + 2; ++l)
    for (vkds__slot *s = *l, *next; s; s = next) {
      next = s->next;
      slot_free(dev, s);
    }
  r->free_slots = r->inflight_head = r->inflight_tail = NULL;
  dev->vk.vkDestroySemaphore(dev->device, r->timeline, vkds__vk_allocator(dev->ctx));
  r->timeline = VK_NULL_HANDLE;
  pthread_mutex_destroy(&r->track_lock);
  pthread_mutex_destroy(&r->pending_lock);
}

static vkds_result slot_create(vkds_resource *r, vkds__slot **out) {
  vkds__device *dev = r->dev;
  vkds__slot *s = vkds__alloc(dev->ctx, sizeof *s);
  if (!s) return vkds__fail(dev->ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "slot");
  VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                 /* reset by vkBeginCommandBuffer: one driver call
                                  * fewer per task (driver calls contend when several
                                  * threads submit, bench/RESULTS.md) */
                                 .flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT |
                                          VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                 .queueFamilyIndex = r->family};
  VkResult vr = dev->vk.vkCreateCommandPool(dev->device, &pci, vkds__vk_allocator(dev->ctx), &s->pool);
  if (vr != VK_SUCCESS) s->pool = VK_NULL_HANDLE; /* undefined after a failure: slot_free must not see it */
  if (vr == VK_SUCCESS) {
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = s->pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = 1};
    vr = dev->vk.vkAllocateCommandBuffers(dev->device, &ai, &s->cmd);
  }
  if (vr != VK_SUCCESS) {
    slot_free(dev, s);
    return vkds__vk_fail(dev->ctx, vr, "creating a command pool and buffer");
  }
  *out = s;
  return VKDS_SUCCESS;
}

/* ---- the queue's leading barrier ----
 *
 * Every algorithm recording used to begin with a barrier that orders it after the writes
 * of whatever ran before it on the queue, and ends with one that orders its own writes
 * before whatever comes next (and the host). When the command buffer before it ends in
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
    const VkPipelineStageFlags work = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                           VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT};
    dev->vk.vkCmdPipelineBarrier(r->lead_cmd, work, work, 0, 1, &mb, 0, NULL, 0, NULL);
    ok = dev->vk.vkEndCommandBuffer(r->lead_cmd) == VK_SUCCESS;
  }
  if (!ok) {
    dev->vk.vkDestroyCommandPool(dev->device, r->lead_pool, vkds__vk_allocator(dev->ctx));
    r->lead_pool = VK_NULL_HANDLE;
  }
  return ok;
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
 * first free slot that holds none (NULL when there is none and fewer than
 * KEEP_RECORDINGS are free). With count_new, a slot about to be created is counted
 * when NULL is returned. */
static vkds__slot *pop_free(vkds_resource *r, bool count_new, const vkds__replay *replay) {
  pthread_mutex_lock(&r->track_lock);
  vkds__slot **at = &r->free_slots;
  uint32_t kept = 0;
  if (replay) {
    while (*at && !((*at)->replay_key == replay->key && (*at)->replay_timed == replay->timed &&
                    (*at)->replay_label == replay->label))
      at = &(*at)->next;
  } else {
    for (; *at && (*at)->replay_key; at = &(*at)->next) ++kept;
    if (!*at && kept >= KEEP_RECORDINGS) at = &r->free_slots;
  }
  vkds__slot *s = *at;
  if (s) *at = s->next;
  else if (count_new) ++r->slot_count;
  pthread_mutex_unlock(&r->track_lock);
  return s;
}

static vkds_result reclaim_upto(vkds_resource *r, uint64_t done);

vkds_result vkds__queue_acquire_slot(vkds_resource *r, bool recording, const vkds__replay *replay, vkds__slot **out) {
  /* counted from here: the combining thread waits for a submit that is on its way */
  if (recording) atomic_fetch_add_explicit(&r->recording, 1, memory_order_relaxed);
  /* Reclaim first, so that a slot just finished is the one reused and slots never pile
   * up behind finished work: what the last read of the timeline says is finished (no
   * driver call), and only when that frees no slot, a new read of the timeline (driver
   * calls contend when several threads submit, and on lavapipe each read costs more
   * the more work is in flight: bench/RESULTS.md). */
  vkds_result res = vkds__queue_reclaim_known(r);
  vkds__slot *s = res == VKDS_SUCCESS && replay && replay->key ? pop_free(r, false, replay) : NULL;
  bool replayed = s != NULL;
  if (!s && res == VKDS_SUCCESS) s = pop_free(r, false, NULL);
  if (!s && res == VKDS_SUCCESS) {
    res = vkds__queue_reclaim(r);
    if (res == VKDS_SUCCESS) s = pop_free(r, true, NULL);
  }
  /* (a reused slot's command buffer finished, so vkBeginCommandBuffer may reset it) */
  if (!s && res == VKDS_SUCCESS) {
    res = slot_create(r, &s);
    if (res != VKDS_SUCCESS) {
      pthread_mutex_lock(&r->track_lock);
      --r->slot_count;
      pthread_mutex_unlock(&r->track_lock);
    }
  }
  if (res != VKDS_SUCCESS) {
    if (recording) atomic_fetch_sub_explicit(&r->recording, 1, memory_order_release);
    return res;
  }
  s->next = NULL;
  s->replayed = replayed;
  if (!replayed) s->replay_key = 0, s->needs_lead = s->ends_full = false; /* whatever it held is recorded over */
  s->timed = replayed && s->replay_timed;
  s->recording = recording;
  s->value = 0;
  s->report_to = NULL;
  *out = s;
  return VKDS_SUCCESS;
}

/* The slot's task is no longer on its way to the queue (submitted or given up). */
static void done_recording(vkds_resource *r, vkds__slot *s) {
  if (!s->recording) return;
  s->recording = false;
  atomic_fetch_sub_explicit(&r->recording, 1, memory_order_release);
}

void vkds__queue_release_slot(vkds_resource *r, vkds__slot *s) {
  done_recording(r, s);
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

/* Releases the slots of work up to timeline value `done` (and reports them). */
static vkds_result reclaim_upto(vkds_resource *r, uint64_t done) {
  if (atomic_load_explicit(&r->inflight_count, memory_order_acquire) == 0) return VKDS_SUCCESS;
  pthread_mutex_lock(&r->track_lock);
  if (!r->inflight_head || r->inflight_head->value > done) { /* nothing new finished */
    pthread_mutex_unlock(&r->track_lock);
    return VKDS_SUCCESS;
  }
  vkds__slot *finished = NULL, **tail = &finished;
  while (r->inflight_head && r->inflight_head->value <= done) {
    vkds__slot *s = r->inflight_head;
    r->inflight_head = s->next;
    read_task_time(r, s);
    *tail = s;
    tail = &s->next;
    atomic_fetch_sub_explicit(&r->inflight_count, 1, memory_order_relaxed);
  }
  *tail = NULL;
  if (!r->inflight_head) r->inflight_tail = NULL;
  pthread_mutex_unlock(&r->track_lock);
  /* reports call user code: outside the lock */
  for (vkds__slot *s = finished, *next; s; s = next) {
    next = s->next;
    report_finished(s);
    vkds__queue_release_slot(r, s);
  }
  return VKDS_SUCCESS;
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

vkds_result vkds__queue_poll(vkds_resource *r, uint64_t value) {
  if (atomic_load_explicit(&r->completed, memory_order_acquire) >= value) return VKDS_SUCCESS;
  VKDS_CHECK(vkds__device_check_lost(r->dev, "waiting for a submission"));
  uint64_t now;
  VKDS_CHECK(read_counter(r, &now));
  return now >= value ? VKDS_SUCCESS : VKDS_ERROR_WOULD_BLOCK;
}

vkds_result vkds__queue_wait(vkds_resource *r, uint64_t value, uint64_t timeout_ns, uint64_t spin_ns) {
  if (atomic_load_explicit(&r->completed, memory_order_acquire) >= value) return VKDS_SUCCESS;
  /* work that had not finished when the device was lost never will */
  VKDS_CHECK(vkds__device_check_lost(r->dev, "waiting for a submission"));
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
  if (elapsed >= timeout_ns)
    return vkds__fail(r->dev->ctx, VKDS_ERROR_TIMEOUT, VK_TIMEOUT, "queue %u: not done after %llu ns",
                      r->index, (unsigned long long)timeout_ns);
  VkSemaphoreWaitInfo wi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                            .semaphoreCount = 1,
                            .pSemaphores = &r->timeline,
                            .pValues = &value};
  uint64_t left = timeout_ns == UINT64_MAX ? UINT64_MAX : timeout_ns - elapsed;
  VkResult vr = r->dev->vk.vkWaitSemaphores(r->dev->device, &wi, left);
  if (vr == VK_TIMEOUT)
    return vkds__fail(r->dev->ctx, VKDS_ERROR_TIMEOUT, vr, "queue %u: not done after %llu ns", r->index,
                      (unsigned long long)timeout_ns);
  if (vr != VK_SUCCESS) return vkds__device_vk_fail(r->dev, vr, "vkWaitSemaphores");
  note_completed(r, value);
  return VKDS_SUCCESS;
}

/* ---- coalesced submission ----
 *
 * One vkQueueSubmit costs the GPU's front end about as much as the tiny task it
 * carries, and several tasks in one call cost less each (H100: 9.4-14.6 us per
 * dispatch one call each, 6.3 us each in one call with a signal each, bench/RESULTS.md).
 * So threads that submit to one queue at once share submits (flat combining): a thread
 * puts its request on the queue's pending list, then takes the queue; if its request is
 * still there, it submits every pending request (its own and those of threads that
 * queued meanwhile) in one call, each with its own VkSubmitInfo and timeline value, in
 * the order they were queued, and marks them done. While another thread holds the
 * queue, a thread watches its request instead of queueing up for the lock (for at most
 * QUEUE_SPIN_NS, then it blocks): threads blocked on the lock would each have to take it
 * in turn only to find their requests done, and that convoy left every new holder
 * almost nothing to combine (H100, 16 threads: 1.08 tasks per call).
 *
 * Threads rarely meet by chance: the host side of a submit is shorter than the GPU's
 * share of it, so each call would carry one task while the GPU falls behind. So while
 * the GPU is backed up (more than COALESCE_BACKLOG of this queue's tasks not finished)
 * and other threads submit to this queue, the thread that holds it waits for the backlog
 * to come down, and for the tasks that arrive meanwhile to join (at most
 * COALESCE_WAIT_NS, or until MAX_COALESCED wait). That costs no task any time on the
 * GPU, which has the backlog to run meanwhile; a lone task, or one reaching an idle or
 * nearly idle queue, is submitted at once, at the price of two uncontended lock
 * operations. The wait is bounded because a task function may take long (or a queue
 * may be stalled behind a task that waits for the host).
 *
 * A failed call fails every request in it (each thread reports the VkResult itself, so
 * its own last-error message says it). Requests live on their threads' stacks: a thread
 * returns only after its request was submitted or failed. */
enum { COALESCE_BACKLOG = 4 };
#define COALESCE_WAIT_NS 20000u
#define QUEUE_SPIN_NS 50000u
#define MAX_COALESCED 64

typedef struct vkds__submit_req {
  struct vkds__submit_req *next;
  vkds__slot *slot;
  uint64_t value;   /* the timeline value its submit signals */
  VkResult vk;      /* the call's result */
  atomic_bool done; /* set (release) by the thread that submitted it, under the queue lock */
} vkds__submit_req;

/* Submits up to MAX_COALESCED requests (linked) in one call; returns what follows them.
 * Each request is its own VkSubmitInfo with its own signal, so each task completes when
 * it is done, not when the last task of its call is: a short task that shares a call
 * with a long one is not held back by it. (One VkSubmitInfo with one signal for the
 * whole call was tried: 4-15% more tiny tasks a second at 16 threads on the H100, within
 * the runs' spread at 4 threads; bench/RESULTS.md, issue 15, session 12.) */
static vkds__submit_req *submit_batch(vkds_resource *r, vkds__submit_req *first) {
  vkds__device *dev = r->dev;
  vkds__submit_req *reqs[MAX_COALESCED];
  uint64_t values[MAX_COALESCED];
  VkTimelineSemaphoreSubmitInfo ts[MAX_COALESCED];
  VkSubmitInfo si[MAX_COALESCED];
  VkCommandBuffer cmds[MAX_COALESCED][2];
  uint32_t n = 0;
  uint64_t next = atomic_load(&r->submitted) + 1;
  bool tail_full = r->tail_full; /* the queue is held: this is the order the GPU sees */
  vkds__submit_req *q = first;
  for (; q && n < MAX_COALESCED; q = q->next, ++n) {
    reqs[n] = q;
    values[n] = next + n;
    uint32_t c = 0;
    if (q->slot->needs_lead && !tail_full) { /* (made: see needs_lead) */
      cmds[n][c++] = r->lead_cmd;
      atomic_fetch_add_explicit(&r->lead_barriers, 1, memory_order_relaxed);
    }
    cmds[n][c++] = q->slot->cmd;
    tail_full = q->slot->ends_full;
    ts[n] = (VkTimelineSemaphoreSubmitInfo){.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                                             .signalSemaphoreValueCount = 1,
                                             .pSignalSemaphoreValues = &values[n]};
    si[n] = (VkSubmitInfo){.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                           .pNext = &ts[n],
                           .commandBufferCount = c,
                           .pCommandBuffers = cmds[n],
                           .signalSemaphoreCount = 1,
                           .pSignalSemaphores = &r->timeline};
  }
  if (!n) return q; /* (first is never NULL) */
  /* a device lost meanwhile (by another queue's thread) takes nothing more */
  VkResult vr = atomic_load(&dev->lost) ? VK_ERROR_DEVICE_LOST : dev->vk.vkQueueSubmit(r->queue, n, si, VK_NULL_HANDLE);
  r->tail_full = vr == VK_SUCCESS && tail_full;
  if (vr == VK_SUCCESS) {
    atomic_store(&r->submitted, values[n - 1]);
    atomic_fetch_add_explicit(&r->submit_calls, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&r->submitted_tasks, n, memory_order_relaxed);
    atomic_store_explicit(&r->last_batch, n, memory_order_relaxed);
  }
  for (uint32_t k = 0; k < n; ++k) {
    reqs[k]->vk = vr;
    if (vr == VK_SUCCESS) {
      reqs[k]->value = reqs[k]->slot->value = values[k];
      vkds__queue_track(r, reqs[k]->slot); /* from here on another thread may reclaim and reuse it */
    }
    atomic_store_explicit(&reqs[k]->done, true, memory_order_release); /* the owner may return now */
  }
  return q;
}

void vkds__queue_flush_pending(vkds_resource *r) {
  for (;;) {
    pthread_mutex_lock(&r->pending_lock);
    vkds__submit_req *batch = r->pending_head;
    r->pending_head = r->pending_tail = NULL;
    r->pending_count = 0;
    pthread_mutex_unlock(&r->pending_lock);
    if (!batch) return;
    while (batch) batch = submit_batch(r, batch);
  }
}

/* With the queue held: while the GPU is backed up (more than COALESCE_BACKLOG of this
 * queue's tasks not finished), and other threads submit to this queue (tasks being
 * recorded for it, or the last call carried more than one task), waits (bounded) for
 * the backlog to come down, gathering the tasks that join the pending requests
 * meanwhile. (Waiting only while tasks were being recorded left the calls 1.3-1.4 tasks
 * each when tasks replay a kept recording, vkds_task_info.replay_key: those take a few
 * microseconds from selection to the queue, and a holder rarely saw one on its way.) */
static void wait_for_company(vkds_resource *r) {
  if (atomic_load_explicit(&r->recording, memory_order_acquire) == 0 &&
      atomic_load_explicit(&r->last_batch, memory_order_relaxed) < 2)
    return; /* a lone thread: nobody to wait for */
  const uint64_t start = vkds__now_ns();
  for (uint32_t round = 0;; ++round) {
    if ((round & 31) == 0) { /* the timeline read is a driver call: now and then */
      uint64_t done;
      if (read_counter(r, &done) != VKDS_SUCCESS) return; /* the submit will say what went wrong */
      uint64_t submitted = atomic_load(&r->submitted);
      if (done >= submitted || submitted - done <= COALESCE_BACKLOG) return; /* the GPU would soon idle */
      pthread_mutex_lock(&r->pending_lock);
      uint32_t pending = r->pending_count;
      pthread_mutex_unlock(&r->pending_lock);
      if (pending >= MAX_COALESCED || vkds__now_ns() - start >= COALESCE_WAIT_NS) return;
    }
    vkds__cpu_relax();
  }
}

vkds_result vkds__queue_submit(vkds_resource *r, vkds__slot *s, uint64_t *value_out) {
  vkds__device *dev = r->dev;
  VKDS_CHECK(vkds__device_check_lost(dev, "vkQueueSubmit"));
  vkds__submit_req req = {.slot = s};
  atomic_init(&req.done, false);
  /* before it is queued: once queued, another thread may submit it, and the slot may
   * be reclaimed and reused */
  done_recording(r, s);
  pthread_mutex_lock(&r->pending_lock);
  if (r->pending_tail) r->pending_tail->next = &req;
  else r->pending_head = &req;
  r->pending_tail = &req;
  ++r->pending_count;
  pthread_mutex_unlock(&r->pending_lock);
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
    if (!atomic_load_explicit(&req.done, memory_order_acquire)) {
      wait_for_company(r);
      vkds__queue_flush_pending(r);
    }
    vkds__resource_unlock_queue_own(r);
    break;
  }
  if (req.vk != VK_SUCCESS) return vkds__device_vk_fail(dev, req.vk, "vkQueueSubmit");
  *value_out = req.value;
  return VKDS_SUCCESS;
}
