/* tests/test_faults.c: what vkds does when the GPU side goes wrong (issue 14, faults).
 *
 * - A task that does not finish: its GPU work waits on a VkEvent that the host sets
 *   later (vkCmdWaitEvents with the host stage, legal outside a render pass), so the
 *   "hang" is real GPU work and ends when the test says. Waits with a timeout return
 *   VKDS_ERROR_TIMEOUT; a policy's task deadline marks the resource unhealthy, the
 *   others take the work, and it is healthy again once its work drains; releasing a
 *   policy and destroying a context wait with a bound, then leave the objects allocated
 *   instead of destroying them under the GPU.
 * - Vulkan failures, injected (lib/core/vk_fault.h wraps the device's entry points):
 *   VK_ERROR_DEVICE_LOST on one of two devices becomes VKDS_ERROR_DEVICE_LOST for work
 *   there while the other keeps working and policies stop selecting the lost one; and
 *   VK_ERROR_OUT_OF_HOST_MEMORY / _DEVICE_MEMORY at every call of a life cycle: a named
 *   error, and the next life cycle works. Any validation message fails a test, as
 *   everywhere (the harness). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <vulkan/vulkan.h>

#include "core/vk_fault.h"
#include "harness.h"
#include "life_cycle.h"

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(unsigned ms) {
  struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

/* ---- a task that runs until the host lets it end ---- */

typedef struct gate {
  VkDevice device;
  VkEvent event;
} gate;

static gate gate_open(vkds_resource *res) {
  gate g = {0};
  ck_assert_vkds(vkds_resource_vk_handles(res, NULL, &g.device, NULL));
  VkEventCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_EVENT_CREATE_INFO};
  ck_assert_int_eq(vkCreateEvent(g.device, &ci, NULL, &g.event), VK_SUCCESS);
  return g;
}

static void gate_release(gate *g) { ck_assert_int_eq(vkSetEvent(g->device, g->event), VK_SUCCESS); }

static void gate_close(gate *g) {
  vkDeviceWaitIdle(g->device);
  vkDestroyEvent(g->device, g->event, NULL);
}

/* RECORD task: waits on its gate (user: one gate per context device, by device index). */
static vkds_result hang_task(void *user, const vkds_task *task, void **wait_object) {
  (void)wait_object;
  const gate *gates = user;
  vkds_resource_info ri;
  if (vkds_resource_get_info(task->resource, &ri) != VKDS_SUCCESS) return VKDS_ERROR_INVALID_ARGUMENT;
  vkCmdWaitEvents(task->cmd, 1, &gates[ri.device_index].event, VK_PIPELINE_STAGE_HOST_BIT,
                  VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, NULL, 0, NULL, 0, NULL);
  return VKDS_SUCCESS;
}

/* RECORD task that records nothing: done as soon as the queue reaches it. */
static vkds_result quick_task(void *user, const vkds_task *task, void **wait_object) {
  (void)user, (void)task, (void)wait_object;
  return VKDS_SUCCESS;
}

static uint32_t index_of(vkds_submission *s) { return vkds_selection_index(vkds_submission_selection(s)); }

static int errors_logged;
static char last_logged[512];
static int left_allocated_logged; /* errors that said something is left allocated */
static int timeouts_logged;       /* messages of waits not done in time */
static void counting_log(void *user, vkds_log_level level, vkds_log_source source, const char *message) {
  harness_log(user, level, source, message);
  if (strstr(message, "not done after")) ++timeouts_logged;
  if (level == VKDS_LOG_ERROR) ++errors_logged, snprintf(last_logged, sizeof last_logged, "%s", message);
  if (level == VKDS_LOG_ERROR && strstr(message, "left allocated")) ++left_allocated_logged;
}

/* A wait given a timeout that runs out is VKDS_ERROR_TIMEOUT, says why in the thread's
 * last error, and logs it below VKDS_LOG_ERROR: the caller chose the timeout (one who
 * polls with short ones would fill its logger with errors). */
START_TEST(a_wait_with_a_timeout_times_out) {
  vkds_context_info info = harness_info();
  info.log = counting_log;
  info.log_level = VKDS_LOG_INFO; /* (where the timeouts are logged) */
  vkds_context *ctx;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  gate g = gate_open(vkds_context_resource(ctx, 0));
  vkds_backend *b;
  ck_assert_vkds(vkds_backend_create(&(vkds_backend_info){.context = ctx}, &b));
  vkds_selection *sel;
  ck_assert_vkds(vkds_selection_create(b, 0, 0, NULL, &sel));
  vkds_submission *s;
  ck_assert_vkds(vkds_selection_submit(sel, &(vkds_task_info){.fn = hang_task, .user = &g}, &s));
  errors_logged = 0;
  ck_assert_int_eq(vkds_submission_wait_timeout(s, 0), VKDS_ERROR_TIMEOUT);
  uint64_t t0 = now_ns();
  ck_assert_int_eq(vkds_submission_wait_timeout(s, 50000000ull), VKDS_ERROR_TIMEOUT);
  uint64_t waited = now_ns() - t0;
  ck_assert_msg(waited >= 50000000ull && waited < 5000000000ull, "waited %llu ns", (unsigned long long)waited);
  /* the message names the call (it said "queue 0: ..." alone: a contract probe) */
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "vkds_submission_wait: queue 0: not done after"));
  ck_assert_int_eq(vkds_submission_poll(s), VKDS_ERROR_WOULD_BLOCK);
  /* logged once, with the caller's timeout (the queue's wait logged it first, with what
   * was left of it: a docs probe) */
  timeouts_logged = 0;
  ck_assert_int_eq(vkds_backend_wait_all(b, 10000000ull), VKDS_ERROR_TIMEOUT);
  ck_assert_int_eq(timeouts_logged, 1);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "not done after 10000000 ns"));
  ck_assert_int_eq(errors_logged, 0);
  gate_release(&g);
  ck_assert_vkds(vkds_submission_wait_timeout(s, 10000000000ull));
  ck_assert_vkds(vkds_submission_poll(s));
  vkds_submission_release(s);
  vkds_selection_release(sel);
  vkds_backend_destroy(b);
  gate_close(&g);
  vkds_context_destroy(ctx);
}
END_TEST

/* Two resources on two VkDevices (lavapipe: devices_per_physical = 2). */
typedef struct two {
  vkds_context *ctx;
  void *res[2];
  gate gates[2];
} two;

static two two_open(void) {
  two t = {0};
  vkds_context_info info = harness_info();
  info.devices_per_physical = 2;
  ck_assert_vkds(vkds_context_create(&info, &t.ctx));
  ck_assert_uint_eq(vkds_context_device_count(t.ctx), 2);
  for (uint32_t i = 0, d = 0; i < vkds_context_resource_count(t.ctx) && d < 2; ++i) {
    vkds_resource_info ri;
    ck_assert_vkds(vkds_resource_get_info(vkds_context_resource(t.ctx, i), &ri));
    if (ri.device_index == d) t.res[d] = vkds_context_resource(t.ctx, i), t.gates[d] = gate_open(t.res[d]), ++d;
  }
  ck_assert_ptr_nonnull(t.res[1]);
  return t;
}

static void two_close(two *t) {
  gate_close(&t->gates[0]);
  gate_close(&t->gates[1]);
  vkds_context_destroy(t->ctx);
}

static const vkds_policy_kind deadline_kinds[] = {VKDS_POLICY_ROUND_ROBIN, VKDS_POLICY_DYNAMIC_LOAD,
                                                  VKDS_POLICY_EARLIEST_FINISH, VKDS_POLICY_AUTO_TUNE};

static vkds_resource_health health_of(vkds_policy *p, uint32_t i) {
  vkds_policy_resource_stats st;
  ck_assert_vkds(vkds_policy_get_resource_stats(p, i, &st));
  ck_assert_int_eq(st.health, vkds_policy_resource_health(p, i));
  return st.health;
}

/* A policy of `kind` over both resources with a task deadline, warmed up: it has run the
 * quick task on both (auto tune and earliest finish measure first). */
static vkds_policy *deadline_policy(const two *t, vkds_policy_kind kind, uint64_t deadline_ns) {
  vkds_policy *p;
  vkds_policy_info pi = {.kind = kind, .task_deadline_ns = deadline_ns,
                         .resources = {.context = t->ctx, .resource_count = 2, .resources = t->res}};
  ck_assert_vkds(vkds_policy_create(&pi, &p));
  for (int i = 0; i < 8; ++i) ck_assert_vkds(vkds_submit_and_wait(p, &(vkds_task_info){.fn = quick_task, .key = 1}));
  return p;
}

START_TEST(a_stalled_resource_is_skipped_until_it_drains) {
  const vkds_policy_kind kind = deadline_kinds[_i];
  two t = two_open();
  vkds_policy *p = deadline_policy(&t, kind, 50000000ull);
  /* the hang goes to resource 0: a fixed selection, through the policy's backend-free path */
  vkds_submission *hung = NULL;
  for (int tries = 0; tries < 8 && !hung; ++tries) {
    vkds_selection *sel;
    ck_assert_vkds(vkds_select(p, &(vkds_task_info){.key = 2}, &sel));
    if (vkds_selection_index(sel) == 0)
      ck_assert_vkds(vkds_selection_submit(sel, &(vkds_task_info){.fn = hang_task, .user = t.gates, .key = 2}, &hung));
    vkds_selection_release(sel);
  }
  ck_assert_ptr_nonnull(hung);
  ck_assert_int_eq(health_of(p, 0), VKDS_RESOURCE_HEALTHY);
  sleep_ms(120); /* past the deadline, nothing finished on resource 0 */
  for (int i = 0; i < 12; ++i) {
    vkds_submission *s;
    ck_assert_vkds(vkds_submit(p, &(vkds_task_info){.fn = quick_task, .key = 1}, &s));
    ck_assert_msg(index_of(s) == 1, "policy %d: task %d went to the stalled resource", (int)kind, i);
    ck_assert_vkds(vkds_submission_wait(s));
    vkds_submission_release(s);
  }
  ck_assert_int_eq(health_of(p, 0), VKDS_RESOURCE_STALLED);
  ck_assert_int_eq(health_of(p, 1), VKDS_RESOURCE_HEALTHY);
  gate_release(&t.gates[0]);
  ck_assert_vkds(vkds_submission_wait(hung));
  vkds_submission_release(hung);
  /* drained: healthy at the next selection, and selected again */
  bool back = false;
  for (int i = 0; i < 64 && !back; ++i) {
    vkds_submission *s;
    ck_assert_vkds(vkds_submit(p, &(vkds_task_info){.fn = quick_task, .key = 1}, &s));
    back = index_of(s) == 0;
    ck_assert_vkds(vkds_submission_wait(s));
    vkds_submission_release(s);
  }
  ck_assert_int_eq(health_of(p, 0), VKDS_RESOURCE_HEALTHY);
  /* (earliest finish and auto tune may rightly prefer resource 1 for good) */
  if (kind == VKDS_POLICY_ROUND_ROBIN || kind == VKDS_POLICY_DYNAMIC_LOAD)
    ck_assert_msg(back, "policy %d never selected the drained resource again", (int)kind);
  vkds_policy_release(p);
  two_close(&t);
}
END_TEST

/* A pick held past the deadline without being submitted (an algorithm call compiling
 * its kernel, an application holding a vkds_select) is no stalled task: nothing is on
 * the queue (a threads probe saw a first copy_if's compile take both resources out of
 * service). */
START_TEST(a_held_selection_is_not_a_stalled_task) {
  const vkds_policy_kind kind = deadline_kinds[_i];
  two t = two_open();
  vkds_policy *p = deadline_policy(&t, kind, 30000000ull);
  vkds_selection *held[2];
  ck_assert_vkds(vkds_select(p, &(vkds_task_info){.key = 1}, &held[0]));
  ck_assert_vkds(vkds_select(p, &(vkds_task_info){.key = 1}, &held[1]));
  sleep_ms(100); /* past the deadline, nothing submitted */
  for (int i = 0; i < 6; ++i) ck_assert_vkds(vkds_submit_and_wait(p, &(vkds_task_info){.fn = quick_task, .key = 1}));
  ck_assert_int_eq(health_of(p, 0), VKDS_RESOURCE_HEALTHY);
  ck_assert_int_eq(health_of(p, 1), VKDS_RESOURCE_HEALTHY);
  for (int k = 0; k < 2; ++k) {
    vkds_submission *s;
    ck_assert_vkds(vkds_selection_submit(held[k], &(vkds_task_info){.fn = quick_task, .key = 1}, &s));
    ck_assert_vkds(vkds_submission_wait(s));
    vkds_submission_release(s);
    vkds_selection_release(held[k]);
  }
  vkds_policy_release(p);
  two_close(&t);
}
END_TEST

/* A task the test lets finish after `ms` milliseconds, from another thread. */
typedef struct later {
  gate *g;
  unsigned ms;
} later;

static void *release_later(void *arg) {
  later *l = arg;
  sleep_ms(l->ms);
  vkSetEvent(l->g->device, l->g->event);
  return NULL;
}

START_TEST(releasing_and_destroying_wait_for_work_that_finishes) {
  vkds_context *ctx = harness_context();
  gate g = gate_open(vkds_context_resource(ctx, 0));
  vkds_policy *p;
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = {.context = ctx}}, &p));
  ck_assert_vkds(vkds_submit(p, &(vkds_task_info){.fn = hang_task, .user = &g}, NULL)); /* fire and forget */
  later l = {&g, 100};
  pthread_t th;
  ck_assert_int_eq(pthread_create(&th, NULL, release_later, &l), 0);
  uint64_t t0 = now_ns();
  vkds_policy_release(p); /* waits for the task, then destroys */
  uint64_t waited = now_ns() - t0;
  pthread_join(th, NULL);
  ck_assert_msg(waited >= 90000000ull, "the release returned after %llu ns, before the task ended",
                (unsigned long long)waited);
  gate_close(&g);
  vkds_context_destroy(ctx);
}
END_TEST

/* A context that waits 200 ms for work at its destroy, its errors counted
 * (counting_log), and a fixed policy over it with one task that runs until `g` opens. */
static vkds_context *hung_context(gate *g, vkds_policy **p) {
  vkds_context_info info = harness_info();
  info.destroy_timeout_ns = 200000000ull;
  info.log = counting_log;
  vkds_context *ctx;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  *g = gate_open(vkds_context_resource(ctx, 0));
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = {.context = ctx}}, p));
  ck_assert_vkds(vkds_submit(*p, &(vkds_task_info){.fn = hang_task, .user = g}, NULL));
  return ctx;
}

START_TEST(work_that_never_finishes_is_left_not_destroyed) {
  gate g;
  vkds_policy *p;
  vkds_context *ctx = hung_context(&g, &p);
  errors_logged = 0;
  uint64_t t0 = now_ns();
  vkds_policy_release(p);
  uint64_t waited = now_ns() - t0;
  ck_assert_msg(waited >= 200000000ull && waited < 5000000000ull, "release: %llu ns", (unsigned long long)waited);
  ck_assert_int_ge(errors_logged, 1); /* the wait's time-out, then what it means */
  ck_assert_ptr_nonnull(strstr(last_logged, "left allocated"));
  int after_release = errors_logged;
  t0 = now_ns();
  vkds_context_destroy(ctx);
  waited = now_ns() - t0;
  ck_assert_msg(waited >= 200000000ull && waited < 5000000000ull, "destroy: %llu ns", (unsigned long long)waited);
  ck_assert_int_gt(errors_logged, after_release);
  ck_assert_ptr_nonnull(strstr(last_logged, "left allocated"));
  /* the device was left alive: the work can still end, and the test's own event go */
  gate_release(&g);
  gate_close(&g);
}
END_TEST

/* vkds_context_destroy while a policy made from it is alive and its work runs on: the
 * context lives on (the policy's release destroys it), so the wait's time-out must not
 * say it is left allocated until the process ends (a new-user probe read that, then saw
 * the release destroy it). */
START_TEST(destroying_under_a_live_policy_says_what_happens) {
  gate g;
  vkds_policy *p;
  vkds_context *ctx = hung_context(&g, &p);
  errors_logged = left_allocated_logged = 0;
  vkds_context_destroy(ctx); /* waits the timeout, then lives on for the policy */
  ck_assert_int_eq(errors_logged, 2);
  ck_assert_int_eq(left_allocated_logged, 0);
  ck_assert_ptr_nonnull(strstr(last_logged, "policies (or backends) made from the context are still alive"));
  gate_release(&g);
  ck_assert_vkds(vkds_policy_wait_all(p, UINT64_MAX));
  gate_close(&g);             /* (its device is the context's: closed before that goes) */
  vkds_policy_release(p);     /* this destroys the context: nothing more to say */
  ck_assert_int_eq(errors_logged, 2);
  ck_assert_int_eq(left_allocated_logged, 0);
}
END_TEST

/* ---- injected Vulkan failures ---- */

static VkDevice device_of(void *res) {
  VkDevice d;
  ck_assert_vkds(vkds_resource_vk_handles(res, NULL, &d, NULL));
  return d;
}

START_TEST(a_lost_device_fails_its_work_and_the_other_keeps_working) {
  vkds__vk_fault_install();
  two t = two_open();
  /* policies over both; a fixed one on each */
  vkds_policy *both, *on[2];
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_DYNAMIC_LOAD,
                                                        .resources = {.context = t.ctx, .resource_count = 2,
                                                                      .resources = t.res}},
                                    &both));
  for (int d = 0; d < 2; ++d)
    ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED,
                                                          .resources = {.context = t.ctx, .resource_count = 1,
                                                                        .resources = &t.res[d]}},
                                      &on[d]));
  const vkds_op plus = {.kind = VKDS_OP_GLSL, .glsl = "a + b", .identity = "0u"};
  vkds_seq count = vkds_seq_counting(1, 1000, VKDS_U32);
  uint32_t sum = 0;
  ck_assert_vkds(vkds_reduce(on[1], &count, &plus, NULL, &sum)); /* kernels exist on both before the loss */
  ck_assert_vkds(vkds_reduce(on[0], &count, &plus, NULL, &sum));
  ck_assert_uint_eq(sum, 500500);

  vkds__vk_fault_arm(&(vkds__vk_fault_plan){.function = "vkQueueSubmit", .device = device_of(t.res[1]), .nth = 1,
                                            .result = VK_ERROR_DEVICE_LOST, .lose_device = true});
  ck_assert_int_eq(vkds_reduce(on[1], &count, &plus, NULL, &sum), VKDS_ERROR_DEVICE_LOST);
  ck_assert(vkds__vk_fault_fired());
  ck_assert_int_eq(vkds_last_vk_result(), VK_ERROR_DEVICE_LOST);
  /* from now on, at once and without the driver */
  ck_assert_int_eq(vkds_reduce(on[1], &count, &plus, NULL, &sum), VKDS_ERROR_DEVICE_LOST);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "lost"));
  ck_assert_int_eq(vkds_submit_and_wait(on[1], &(vkds_task_info){.fn = quick_task}), VKDS_ERROR_DEVICE_LOST);
  uint32_t down[4];
  vkds_buffer *buf;
  ck_assert_vkds(vkds_buffer_create(t.res[1], &(vkds_buffer_info){.size = sizeof down}, &buf));
  ck_assert_int_eq(vkds_download(t.res[1], down, vkds_view_of(buf), sizeof down), VKDS_ERROR_DEVICE_LOST);
  vkds_buffer_destroy(buf);
  /* the other device works, alone and through the policy over both */
  sum = 0;
  ck_assert_vkds(vkds_reduce(on[0], &count, &plus, NULL, &sum));
  ck_assert_uint_eq(sum, 500500);
  for (int i = 0; i < 8; ++i) {
    vkds_submission *s;
    ck_assert_vkds(vkds_submit(both, &(vkds_task_info){.fn = quick_task}, &s));
    ck_assert_uint_eq(index_of(s), 0);
    ck_assert_vkds(vkds_submission_wait(s));
    vkds_submission_release(s);
  }
  sum = 0;
  ck_assert_vkds(vkds_reduce(both, &count, &plus, NULL, &sum));
  ck_assert_uint_eq(sum, 500500);
  ck_assert_int_eq(health_of(both, 1), VKDS_RESOURCE_LOST);
  ck_assert_int_eq(health_of(both, 0), VKDS_RESOURCE_HEALTHY);
  /* every resource lost: a named error at once, not a wait */
  ck_assert_int_eq(vkds_submit(on[1], &(vkds_task_info){.fn = quick_task}, NULL), VKDS_ERROR_DEVICE_LOST);
  vkds__vk_fault_arm(NULL);
  for (int d = 0; d < 2; ++d) vkds_policy_release(on[d]);
  vkds_policy_release(both);
  two_close(&t); /* the lost device's objects are destroyed, nothing waits for ever */
}
END_TEST

/* A backend whose submit says its device is lost (other kinds of resources have no
 * device for vkds to see): the resource is lost for good after an algorithm's call as
 * after a vkds_submit (the algorithms left it healthy: a probe). */
static vkds_result lost_submit(vkds_backend *b, vkds_selection *s, const vkds_task_info *i, vkds_submission **o) {
  (void)b, (void)s, (void)i, (void)o;
  return VKDS_ERROR_DEVICE_LOST;
}
START_TEST(a_backend_that_says_lost_loses_its_resource) {
  static const vkds_backend_ops lost = {.version = VKDS_BACKEND_OPS_VERSION, .name = "says_lost",
                                        .parent = &vkds_backend_vulkan_ops, .submit = lost_submit};
  vkds_context *ctx;
  vkds_context_info info = harness_info();
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  void *rs[1] = {vkds_context_resource(ctx, 0)};
  vkds_policy *p;
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED,
                                                        .resources = {.context = ctx, .resource_count = 1,
                                                                      .resources = rs, .backend_ops = &lost}},
                                    &p));
  uint32_t data[8] = {0}, sum;
  vkds_seq s = vkds_seq_host(data, 8, VKDS_U32);
  ck_assert_int_eq(vkds_reduce(p, &s, NULL, NULL, &sum), VKDS_ERROR_DEVICE_LOST);
  ck_assert_int_eq(health_of(p, 0), VKDS_RESOURCE_LOST);
  ck_assert_int_eq(vkds_reduce(p, &s, NULL, NULL, &sum), VKDS_ERROR_DEVICE_LOST); /* at once: none left */
  vkds_policy_release(p);
  vkds_context_destroy(ctx);
}
END_TEST

/* Calls of one function in a life cycle (counted, not failed). */
static uint64_t calls_in_life_cycle(const char *function) {
  vkds__vk_fault_arm(&(vkds__vk_fault_plan){.function = function});
  bool right = false;
  ck_assert_vkds(life_cycle(NULL, &right));
  ck_assert(right);
  uint64_t n = vkds__vk_fault_calls();
  vkds__vk_fault_arm(NULL);
  return n;
}

/* The functions a lost device fails (lib/core/vk_fault.c marks them lossy). */
static const char *const lossy_functions[] = {"vkQueueSubmit",      "vkWaitSemaphores", "vkGetSemaphoreCounterValue",
                                              "vkGetQueryPoolResults", "vkWaitForFences", "vkDeviceWaitIdle", NULL};

/* Fails the calls of each of `functions` in turn over a life cycle: out of memory
 * (lose false: VK_ERROR_OUT_OF_DEVICE_MEMORY for vkAllocateMemory, else
 * _OUT_OF_HOST_MEMORY) or a lost device. VKDS_VK_FAULT_PER_FUNCTION=k fails k of a
 * function's calls, spread from its first to its last (default 4, 3 under the
 * sanitizers; 0: every call).
 * Every run must succeed with the right results (a fallback) or fail with the matching
 * named error and a message, draw no validation message, and leave a process where the
 * next life cycle succeeds. */
static void sweep(const char *const *functions, bool lose) {
  vkds__vk_fault_install();
  const char *env = getenv("VKDS_VK_FAULT_PER_FUNCTION");
  /* (3 under the sanitizers, where this sweep was the ASan stage's longest test: the
   * first, middle and last call; the validation stage keeps 4) */
  uint64_t per_function = env ? (uint64_t)strtoull(env, NULL, 10) : harness_rounds(10) == 10 ? 4 : 3;
  uint64_t runs = 0, named = 0, succeeded = 0;
  for (const char *const *f = functions; *f; ++f) {
    uint64_t calls = calls_in_life_cycle(*f);
    VkResult inject = lose                                   ? VK_ERROR_DEVICE_LOST
                      : strcmp(*f, "vkAllocateMemory") == 0 ? VK_ERROR_OUT_OF_DEVICE_MEMORY
                                                             : VK_ERROR_OUT_OF_HOST_MEMORY;
    uint64_t step = per_function == 0 || calls <= per_function ? 1
                    : per_function == 1                     ? calls
                                                            : (calls - 1) / (per_function - 1);
    for (uint64_t n = 1; n <= calls; n += step) {
      vkds__vk_fault_arm(&(vkds__vk_fault_plan){.function = *f, .nth = n, .result = inject, .lose_device = lose});
      bool right = false;
      vkds_result r = life_cycle(NULL, &right);
      bool fired = vkds__vk_fault_fired();
      vkds__vk_fault_arm(NULL);
      ++runs;
      if (r == VKDS_SUCCESS) {
        ++succeeded; /* a fallback (another memory type, no pipeline cache), or a failure past the last check */
        ck_assert_msg(right, "%s call %llu failed: the life cycle succeeded with wrong results", *f,
                      (unsigned long long)n);
      } else {
        ++named;
        ck_assert_msg(fired, "%s call %llu: %s without the injected failure", *f, (unsigned long long)n,
                      vkds_result_str(r));
        ck_assert_msg(lose ? r == VKDS_ERROR_DEVICE_LOST
                           : r == VKDS_ERROR_OUT_OF_HOST_MEMORY || r == VKDS_ERROR_OUT_OF_DEVICE_MEMORY,
                      "%s call %llu failed with %s: %s", *f, (unsigned long long)n, vkds_result_str(r),
                      vkds_last_error_message());
        ck_assert_msg(vkds_last_error_message()[0], "%s call %llu: no message", *f, (unsigned long long)n);
      }
      ck_assert_msg(harness_validation_messages() == 0, "%s call %llu failed: validation messages", *f,
                    (unsigned long long)n);
      ck_assert_msg(life_cycle(NULL, &right) == VKDS_SUCCESS && right, "after %s call %llu failed, a life cycle fails: %s",
                    *f, (unsigned long long)n, vkds_last_error_message());
    }
  }
  fprintf(stderr, "test_faults: %llu Vulkan calls failed in turn (%s): %llu named errors, %llu runs that succeeded\n",
          (unsigned long long)runs, lose ? "device lost" : "out of memory", (unsigned long long)named,
          (unsigned long long)succeeded);
}

START_TEST(each_vulkan_call_runs_out_of_memory_in_turn) { sweep(vkds__vk_fault_functions(), false); }
END_TEST

START_TEST(the_device_is_lost_at_each_call_in_turn) { sweep(lossy_functions, true); }
END_TEST

int main(void) {
  Suite *s = suite_create("faults");
  TCase *t = harness_tcase("hangs");
  tcase_add_test(t, a_wait_with_a_timeout_times_out);
  tcase_add_loop_test(t, a_stalled_resource_is_skipped_until_it_drains, 0,
                      (int)(sizeof deadline_kinds / sizeof *deadline_kinds));
  tcase_add_loop_test(t, a_held_selection_is_not_a_stalled_task, 0,
                      (int)(sizeof deadline_kinds / sizeof *deadline_kinds));
  tcase_add_test(t, releasing_and_destroying_wait_for_work_that_finishes);
  tcase_add_test(t, work_that_never_finishes_is_left_not_destroyed);
  tcase_add_test(t, destroying_under_a_live_policy_says_what_happens);
  suite_add_tcase(s, t);
  t = harness_tcase("injected");
  tcase_add_test(t, a_lost_device_fails_its_work_and_the_other_keeps_working);
  tcase_add_test(t, a_backend_that_says_lost_loses_its_resource);
  tcase_add_test(t, each_vulkan_call_runs_out_of_memory_in_turn);
  tcase_add_test(t, the_device_is_lost_at_each_call_in_turn);
  suite_add_tcase(s, t);
  return harness_run(s);
}
