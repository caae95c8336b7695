/* examples/cpu_pool_backend.c: a backend for a CPU thread pool, written against the
 * base. The kind's two wait functions give the base everything it needs to wait for one
 * task or for the whole group; the backend overrides only what the base cannot know:
 * that a pool can report when a task completed. */
#include "cpu_pool.h"

static vkds_result pool_wait_resource(void *pool) { cpu_pool_wait_idle(pool); return VKDS_SUCCESS; }
static vkds_result pool_wait_task(void *task) { cpu_task_wait(task); return VKDS_SUCCESS; }

const vkds_resource_kind cpu_pool_kind = {
    .name = "cpu-pool", .wait_resource = pool_wait_resource, .wait_object = pool_wait_task};

static uint32_t pool_supports(vkds_backend *b, uint32_t index, uint32_t reports) {
  return reports & (vkds_backend_base_ops.supports(b, index, reports) | VKDS_REPORT_COMPLETION);
}

/* A completion is reported once the waiting thread has seen it. */
static vkds_result pool_wait(vkds_backend *b, vkds_submission *s, uint64_t timeout_ns) {
  VKDS_CHECK(vkds_backend_base_ops.wait(b, s, timeout_ns)); /* super */
  vkds_selection_report(vkds_submission_selection(s), VKDS_REPORT_COMPLETION, 0, 0);
  return VKDS_SUCCESS;
}

const vkds_backend_ops cpu_pool_backend_ops = {
    .version = VKDS_BACKEND_OPS_VERSION,
    .name = "cpu-pool",
    .supports = pool_supports,
    .wait = pool_wait,
};
