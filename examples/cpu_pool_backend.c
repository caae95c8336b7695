/* examples/cpu_pool_backend.c: a backend for a CPU thread pool, written against the
 * base. The kind's two wait functions give the base everything it needs to wait for one
 * task or for the whole group; the backend overrides only what the base cannot know:
 * when a task completed, which the pool tells through cpu_task_on_done. */
#include "cpu_pool.h"

static vkds_result pool_wait_resource(void *pool) { cpu_pool_wait_idle(pool); return VKDS_SUCCESS; }
static vkds_result pool_wait_task(void *task) { cpu_task_wait(task); return VKDS_SUCCESS; }

const vkds_resource_kind cpu_pool_kind = {
    .name = "cpu-pool", .wait_resource = pool_wait_resource, .wait_object = pool_wait_task};

static uint32_t pool_supports(vkds_backend *b, uint32_t index, uint32_t reports) {
  return reports & (vkds_backend_base_ops.supports(b, index, reports) | VKDS_REPORT_COMPLETION);
}

static void report_done(void *sel) {
  vkds_selection_report(sel, VKDS_REPORT_COMPLETION, 0, 0);
  vkds_selection_release(sel);
}

static vkds_result pool_after(vkds_backend *b, vkds_selection *sel, const vkds_task_info *info,
                              vkds_task *task, void *wait_object, vkds_submission **out) {
  VKDS_CHECK(vkds_backend_base_ops.instrument_after(b, sel, info, task, wait_object, out)); /* super */
  if (!wait_object) return vkds_selection_report(sel, VKDS_REPORT_COMPLETION, 0, 0), VKDS_SUCCESS;
  vkds_selection_retain(sel);
  cpu_task_on_done(wait_object, report_done, sel);
  return VKDS_SUCCESS;
}

const vkds_backend_ops cpu_pool_backend_ops = {
    .version = VKDS_BACKEND_OPS_VERSION, .name = "cpu-pool", .supports = pool_supports,
    .instrument_after = pool_after};
