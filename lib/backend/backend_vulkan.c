/* lib/backend/backend_vulkan.c: vkds_backend_vulkan_ops, the backend for vkds's compute queues.
 *
 * It keeps the base's submit (instrument_before, the task function, instrument_after)
 * and overrides the hooks: before hands the function a begun command buffer from a
 * recycled slot (and writes a timestamp when task time is wanted); after ends it and
 * submits it, signalling the queue's timeline semaphore. Completion is lazy: the
 * timeline is polled before selections (lazy_report: policies call it at most once in
 * ctx->lazy_report_ns), on waits and on later submits. */
#include "internal.h"

const vkds_resource_kind vkds_resource_kind_vulkan = {.version = VKDS_RESOURCE_KIND_VERSION, .name = "vulkan"};

static vkds_resource *res_of(vkds_backend *b, uint32_t index) { return b->resources[index]; }

static vkds_result vulkan_init(vkds_backend *b) {
  /* (a table derived from this one over resources of another kind read them as vkds's
   * queues: a crash; a probe) */
  if (b->kind != &vkds_resource_kind_vulkan)
    return vkds__fail(b->context, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "backend '%s': vkds_backend_vulkan_ops (or a table derived from it) runs vkds's compute queues, "
                      "resources of kind 'vulkan'; these are of kind '%s'",
                      b->ops->name ? b->ops->name : "vulkan", b->kind && b->kind->name ? b->kind->name : "(unnamed)");
  vkds_context *ctx = vkds_resource_context(b->resources[0]);
  if (b->context && b->context != ctx)
    return vkds__fail(b->context, VKDS_ERROR_WRONG_CONTEXT, VK_SUCCESS,
                      "backend: resource 0 belongs to another context");
  for (uint32_t i = 1; i < b->resource_count; ++i)
    if (vkds_resource_context(b->resources[i]) != ctx)
      return vkds__fail(ctx, VKDS_ERROR_WRONG_CONTEXT, VK_SUCCESS,
                        "backend: resources 0 and %u belong to different contexts", i);
  /* a context vkds_context_destroy was called on lives on only for the policies and
   * backends already made (new ones were made as from a live context and kept it alive
   * until their own release; an open item of session 43's probes) */
  if (atomic_load(&ctx->live_backends) & VKDS__CONTEXT_DESTROY_PENDING)
    return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "%s: vkds_context_destroy was called on the context (it waits for the policies and "
                      "backends made from it, and takes no new ones)", vkds__caller("vkds_backend_create"));
  b->context = ctx;
  vkds__backend_hold_context(b, ctx);
  return VKDS_SUCCESS;
}

static void vulkan_destroy(vkds_backend *b) { vkds__backend_base_destroy(b); }

static uint32_t vulkan_supports(vkds_backend *b, uint32_t index, uint32_t reports) {
  vkds_resource *r = res_of(b, index);
  uint32_t can = VKDS_REPORT_SUBMISSION | VKDS_REPORT_COMPLETION;
  if (r->dev->facts.families[r->family].timestampValidBits) can |= VKDS_REPORT_TIME;
  return reports & can;
}

/* The slot's two timestamp queries made available again: from the host where the device
 * allows it (the slot is reused only once its last task finished and its times were
 * read), else by a command. The command costs GPU time on every task: on an H100, tiny
 * tasks timed by earliest finish (the policy that wants times) ran 11.3-12.2 us apart
 * with it and 10.0-10.5 with the host's reset (untimed: ~6; bench/RESULTS.md, session 19). */
static void reset_timestamps(vkds__device *dev, vkds__slot *s) {
  if (dev->enabled.host_query_reset) dev->vk.vkResetQueryPool(dev->device, s->timestamps, 0, 2);
  else dev->vk.vkCmdResetQueryPool(s->cmd, s->timestamps, 0, 2);
}

static vkds_result write_start_timestamp(vkds_resource *r, vkds__slot *s) {
  vkds__device *dev = r->dev;
  if (!s->timestamps) {
    VkQueryPoolCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                 .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                 .queryCount = 2};
    VkResult vr = dev->vk.vkCreateQueryPool(dev->device, &qci, vkds__vk_allocator(dev->ctx), &s->timestamps);
    if (vr != VK_SUCCESS) {
      s->timestamps = VK_NULL_HANDLE; /* undefined after a failure; the slot's free must not see it */
      return vkds__vk_fail(dev->ctx, vr, "vkCreateQueryPool");
    }
  }
  reset_timestamps(dev, s);
  dev->vk.vkCmdWriteTimestamp(s->cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, s->timestamps, 0);
  s->timed = true;
  return VKDS_SUCCESS;
}

static vkds_result prepare_task(vkds_backend *b, vkds_selection *sel, const vkds_task_info *info, vkds_task *task) {
  vkds_resource *r = task->resource;
  vkds__device *dev = r->dev;
  /* (it would wait for the lock its thread holds) */
  if (info->mode == VKDS_TASK_SELF_SUBMIT && vkds__resource_held_here(r))
    return vkds__fail(dev->ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "%s: a task that submits by itself (VKDS_TASK_SELF_SUBMIT) on queue %u, whose lock its thread "
                      "holds (vkds_resource_lock_queue): it takes the lock for the task's own submit",
                      vkds__caller("vkds_submit"), r->index);
  vkds__slot *s;
  bool record = info->mode == VKDS_TASK_RECORD, timed = vkds_selection_reports(sel) & VKDS_REPORT_TIME;
  vkds__replay replay = {.key = info->replay_key, .timed = timed, .label = info->label};
  VKDS_CHECK(vkds__queue_acquire_slot(r, record && info->replay_key ? &replay : NULL,
                                      info->mode != VKDS_TASK_SELF_SUBMIT, &s));
  s->key = info->key;
  if (vkds_selection_reports(sel) & (VKDS_REPORT_COMPLETION | VKDS_REPORT_TIME)) {
    vkds_selection_retain(sel);
    s->report_to = sel;
  }
  task->backend_data = s;
  if (info->mode == VKDS_TASK_SELF_SUBMIT) {
    /* the value must be signalled in submission order: hold the queue until after */
    vkds_resource_lock_queue(r);
    task->queue = r->queue;
    task->signal_semaphore = r->timeline;
    task->signal_value = vkds__queue_reserve_value(r); /* after the requests queued before it */
  } else if (s->replayed) {
    task->cmd = s->cmd; /* recorded, timestamps and label included: submitted again */
    if (s->timed && dev->enabled.host_query_reset) reset_timestamps(dev, s); /* (the recording does not) */
    task->replayed = true;
    atomic_fetch_add_explicit(&r->replayed_tasks, 1, memory_order_relaxed);
  } else {
    /* a recording kept for replays is submitted more than once */
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = info->replay_key ? 0 : VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    VkResult vr = dev->vk.vkBeginCommandBuffer(s->cmd, &bi);
    if (vr != VK_SUCCESS) {
      vkds__queue_release_slot(r, s);
      return vkds__vk_fail(dev->ctx, vr, "vkBeginCommandBuffer");
    }
    if (info->label && dev->ctx->debug_utils && dev->ctx->fn.CmdBeginDebugUtilsLabelEXT) {
      VkDebugUtilsLabelEXT label = {.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT, .pLabelName = info->label};
      dev->ctx->fn.CmdBeginDebugUtilsLabelEXT(s->cmd, &label);
    }
    if (timed) {
      vkds_result res = write_start_timestamp(r, s);
      if (res != VKDS_SUCCESS) {
        dev->vk.vkEndCommandBuffer(s->cmd);
        vkds__queue_release_slot(r, s);
        return res;
      }
    }
    task->cmd = s->cmd;
  }
  /* super: the base reports the submission */
  return vkds_backend_base_ops.instrument_before(b, sel, info, task);
}

/* The submission the caller gets is made first, before the task's work can reach the
 * queue: made after the submit, its allocation could fail with the work already run
 * (an in-place transform applied, which a retry would apply twice) and the selection
 * reported both unused and completed (a limits probe). */
static vkds_result vulkan_instrument_before(vkds_backend *b, vkds_selection *sel,
                                            const vkds_task_info *info, vkds_task *task) {
  vkds_submission *sub;
  VKDS_CHECK(vkds_submission_create(b, sel, NULL, 0, &sub));
  vkds_result res = prepare_task(b, sel, info, task);
  if (res != VKDS_SUCCESS) {
    vkds_submission_release(sub); /* (nothing ran: no finishing step, nothing to wait for) */
    return res;
  }
  ((vkds__slot *)task->backend_data)->submission = sub;
  return VKDS_SUCCESS;
}

static void vulkan_abandon(vkds_backend *b, vkds_selection *sel, vkds_task *task) {
  (void)b, (void)sel;
  vkds_resource *r = task->resource;
  vkds__slot *s = task->backend_data;
  vkds_submission_release(s->submission);
  s->submission = NULL;
  if (task->mode == VKDS_TASK_SELF_SUBMIT) vkds_resource_unlock_queue(r);
  else r->dev->vk.vkEndCommandBuffer(s->cmd); /* the next vkBeginCommandBuffer resets it */
  vkds__queue_release_slot(r, s);
}

/* Ends the slot's command buffer (unless it is a replay) and submits it, signalling the
 * next timeline value. */
static vkds_result submit_recorded(vkds_resource *r, vkds__slot *s, const vkds_task_info *info, uint64_t *value) {
  vkds__device *dev = r->dev;
  if (s->replayed) return vkds__queue_submit(r, s, true, value);
  if (s->timed) dev->vk.vkCmdWriteTimestamp(s->cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, s->timestamps, 1);
  if (info->label && dev->ctx->debug_utils && dev->ctx->fn.CmdEndDebugUtilsLabelEXT)
    dev->ctx->fn.CmdEndDebugUtilsLabelEXT(s->cmd);
  VkResult vr = dev->vk.vkEndCommandBuffer(s->cmd);
  vkds__queue_recorded(s); /* (the pool is free for other threads' recordings) */
  if (vr != VK_SUCCESS) return vkds__vk_fail(dev->ctx, vr, "vkEndCommandBuffer");
  if (info->replay_key) { /* kept for the next task with this key */
    s->replay_key = info->replay_key;
    s->replay_timed = s->timed;
    s->replay_label = info->label;
  }
  return vkds__queue_submit(r, s, true, value);
}

static vkds_result vulkan_instrument_after(vkds_backend *b, vkds_selection *sel,
                                           const vkds_task_info *info, vkds_task *task,
                                           void *wait_object, vkds_submission **out) {
  vkds_resource *r = task->resource;
  (void)b, (void)sel; /* (the submission was made in instrument_before) */
  vkds__slot *s = task->backend_data;
  vkds_submission *sub = s->submission; /* (taken before the submit: then the slot is the queue's) */
  s->submission = NULL;
  uint64_t value; /* not read back from s: once tracked, another thread may recycle it */
  if (task->mode == VKDS_TASK_SELF_SUBMIT) {
    /* the function submitted (signalling task->signal_value) with the queue held */
    value = s->value = task->signal_value;
    vkds__queue_self_submitted(r, value);
    vkds__queue_track(r, s);
    vkds_resource_unlock_queue(r);
  } else {
    vkds_result res = submit_recorded(r, s, info, &value);
    if (res != VKDS_SUCCESS) {
      s->replay_key = 0; /* not known to be submittable */
      vkds__queue_release_slot(r, s);
      vkds_submission_release(sub);
      return res;
    }
  }
  vkds__submission_set_work(sub, wait_object, value);
  *out = sub;
  return VKDS_SUCCESS;
}

static vkds_result vulkan_wait(vkds_backend *b, vkds_submission *sub, uint64_t timeout_ns) {
  vkds_resource *r = vkds_selection_resource(vkds_submission_selection(sub));
  VKDS_CHECK(vkds__queue_wait(r, vkds_submission_data(sub), timeout_ns, b->spin_ns));
  /* completion reports are due now: up to what the wait read (reading the timeline
   * again is a driver call, ~0.3 us of a 20 us round trip; what finished since is
   * reclaimed by the next acquire or wait); another thread that took them first may
   * still be delivering them */
  vkds__queue_settle(r);
  return VKDS_SUCCESS;
}

static vkds_result vulkan_poll(vkds_backend *b, vkds_submission *sub) {
  (void)b;
  vkds_resource *r = vkds_selection_resource(vkds_submission_selection(sub));
  return vkds__queue_poll(r, vkds_submission_data(sub));
}

/* Waits for the last value each queue had been given when the call began: every earlier
 * submission (also those of other backends on the same queue), none later. */
static vkds_result vulkan_wait_all(vkds_backend *b, uint64_t timeout_ns) {
  uint64_t start = vkds__now_ns();
  vkds_result first = VKDS_SUCCESS; /* a lost device fails its queues; the others are still waited for */
  for (uint32_t i = 0; i < b->resource_count; ++i) {
    vkds_resource *r = res_of(b, i);
    vkds__queue_flush(r); /* deferred tasks are submitted, not left behind */
    uint64_t target = atomic_load(&r->submitted);
    uint64_t spent = vkds__now_ns() - start;
    uint64_t left = timeout_ns == UINT64_MAX ? UINT64_MAX : (spent < timeout_ns ? timeout_ns - spent : 0);
    /* the queue's timeout gives what was left of the caller's for it: said once, below,
     * with the caller's (it was logged twice, the first with the remainder; a docs probe) */
    bool held = vkds__hold_failure_logs(true);
    vkds_result res = target ? vkds__queue_wait(r, target, left, b->spin_ns) : VKDS_SUCCESS;
    vkds__hold_failure_logs(held);
    if (res == VKDS_ERROR_TIMEOUT) return vkds__queue_timed_out(r, VK_TIMEOUT, timeout_ns);
    if (!held) vkds__log_unlogged(r->dev->ctx, res); /* any other failure, logged as it was */
    if (res == VKDS_SUCCESS) res = vkds__queue_reclaim(r); /* (reads the timeline: what finished since) */
    vkds__queue_settle(r); /* (also after an error: a destroy goes on then) */
    if (first == VKDS_SUCCESS) first = res;
  }
  return first;
}

static void vulkan_lazy_report(vkds_backend *b) {
  for (uint32_t i = 0; i < b->resource_count; ++i) vkds__queue_reclaim(res_of(b, i));
}

/* Every slot set, the base's where it keeps them: a backend derived from this table
 * calls any of its slots as "super". */
const vkds_backend_ops vkds_backend_vulkan_ops = {
    .version = VKDS_BACKEND_OPS_VERSION,
    .backend_size = sizeof(vkds_backend),
    .name = "vulkan",
    .parent = &vkds_backend_base_ops,
    .init = vulkan_init,
    .destroy = vulkan_destroy,
    .get_resources = vkds__backend_base_get_resources,
    .supports = vulkan_supports,
    .scratch_size = vkds__backend_base_scratch_size,
    .submit = vkds__backend_base_submit,
    .instrument_before = vulkan_instrument_before,
    .instrument_after = vulkan_instrument_after,
    .abandon = vulkan_abandon,
    .wait = vulkan_wait,
    .poll = vulkan_poll,
    .wait_all = vulkan_wait_all,
    .lazy_report = vulkan_lazy_report,
};
