/* examples/cpu_pool_backend.c: a backend for a CPU thread pool, written against the
 * base. The kind's two wait functions give the base everything it needs to wait for one
 * task or for the whole group; the backend overrides only what the base cannot know:
 * when a task completed and how long it ran, which the pool tells through
 * cpu_task_on_done. So every policy works on it, auto tune included. */
#include "cpu_pool.h"

#include <stdlib.h>

static vkds_result pool_wait_resource(void *pool) { cpu_pool_wait_idle(pool); return VKDS_SUCCESS; }
static vkds_result pool_wait_task(void *task) { cpu_task_wait(task); return VKDS_SUCCESS; }
/* vkds is done with the task's handle (its submission was released): the pool frees the
 * task once it has run, so a long run of tasks does not pile up */
static void pool_release_task(void *task) { cpu_task_release(task); }

const vkds_resource_kind cpu_pool_kind = {
    .version = VKDS_RESOURCE_KIND_VERSION, .name = "cpu-pool", .wait_resource = pool_wait_resource,
    .wait_object = pool_wait_task, .release_object = pool_release_task};

static uint32_t pool_supports(vkds_backend *b, uint32_t index, uint32_t reports) {
  (void)b, (void)index;
  return reports; /* submission (the base's), completion and time (below) */
}

typedef struct done_arg { vkds_selection *sel; cpu_task *task; uint64_t key; } done_arg;

static void report_done(void *arg) {
  done_arg *d = arg;
  vkds_selection_report(d->sel, VKDS_REPORT_TIME, d->key, cpu_task_elapsed_ns(d->task));
  vkds_selection_report(d->sel, VKDS_REPORT_COMPLETION, d->key, 0);
  vkds_selection_release(d->sel);
  free(d);
}

static vkds_result pool_after(vkds_backend *b, vkds_selection *sel, const vkds_task_info *info,
                              vkds_task *task, void *wait_object, vkds_submission **out) {
  VKDS_CHECK(vkds_backend_base_ops.instrument_after(b, sel, info, task, wait_object, out)); /* super */
  if (!wait_object) return vkds_selection_report(sel, VKDS_REPORT_COMPLETION, info->key, 0), VKDS_SUCCESS;
  done_arg *d = malloc(sizeof *d);
  if (!d) return vkds_submission_release(*out), *out = NULL, VKDS_ERROR_OUT_OF_HOST_MEMORY;
  *d = (done_arg){vkds_selection_retain(sel), wait_object, info->key};
  cpu_task_on_done(wait_object, report_done, d);
  return VKDS_SUCCESS;
}

const vkds_backend_ops cpu_pool_backend_ops = {
    .version = VKDS_BACKEND_OPS_VERSION, .name = "cpu-pool", .supports = pool_supports,
    .instrument_after = pool_after};
