/* lib/backend/backend_base.c: vkds_backend_base_ops, the defaults every backend table is
 * completed from (seed 004's backend_base). They work for any opaque resource kind. */
#include "internal.h"

static vkds_result base_init(vkds_backend *b) {
  (void)b;
  return VKDS_SUCCESS;
}

void vkds__backend_base_destroy(vkds_backend *b) { (void)b; }

vkds_result vkds__backend_base_get_resources(vkds_backend *b, uint32_t *count, void *const **resources) {
  *count = b->resource_count;
  *resources = b->resources;
  return VKDS_SUCCESS;
}

/* The base can only say "the task was submitted": it sees the call, not the work. */
static uint32_t base_supports(vkds_backend *b, uint32_t index, uint32_t reports) {
  (void)b, (void)index;
  return reports & VKDS_REPORT_SUBMISSION;
}

size_t vkds__backend_base_scratch_size(vkds_backend *b, uint32_t reports) {
  (void)b, (void)reports;
  return 0;
}

/* The four steps of seed 004, each through the table so an override of one hook
 * changes what submit does. */
vkds_result vkds__backend_base_submit(vkds_backend *b, vkds_selection *sel, const vkds_task_info *info,
                                      vkds_submission **out) {
  vkds_task task = {.resource = vkds_selection_resource(sel),
                    .resource_index = vkds_selection_index(sel),
                    .selection = sel,
                    .mode = info->mode};
  VKDS_CHECK(b->ops->instrument_before(b, sel, info, &task));
  void *wait_object = NULL;
  uint64_t failures = vkds__failures();
  vkds_result r = task.replayed ? VKDS_SUCCESS : info->fn(info->user, &task, &wait_object);
  if (r != VKDS_SUCCESS) {
    b->ops->abandon(b, sel, &task);
    /* a failure the task function made up itself: say so, rather than leave an older
     * message in place (one from a vkds call inside it stays) */
    return vkds__fail_if_silent(b->context, r, failures, "vkds_submit: the task function returned %s (%d)",
                                vkds_result_str(r), (int)r);
  }
  return b->ops->instrument_after(b, sel, info, &task, wait_object, out);
}

static vkds_result base_instrument_before(vkds_backend *b, vkds_selection *sel,
                                          const vkds_task_info *info, vkds_task *task) {
  (void)b, (void)task;
  vkds_selection_report(sel, VKDS_REPORT_SUBMISSION, info->key, 0);
  return VKDS_SUCCESS;
}

static vkds_result base_instrument_after(vkds_backend *b, vkds_selection *sel,
                                         const vkds_task_info *info, vkds_task *task,
                                         void *wait_object, vkds_submission **out) {
  (void)info, (void)task;
  return vkds_submission_create(b, sel, wait_object, 0, out);
}

static void base_abandon(vkds_backend *b, vkds_selection *sel, vkds_task *task) {
  (void)b, (void)sel, (void)task;
}

static vkds_result base_wait(vkds_backend *b, vkds_submission *s, uint64_t timeout_ns) {
  (void)timeout_ns; /* a kind's wait function has no time limit */
  void *object = vkds_submission_unwrap(s);
  if (!object) return VKDS_SUCCESS; /* the task finished inside its function */
  if (!b->kind->wait_object)
    return vkds__fail(b->context, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS,
                      "resource kind '%s' cannot wait for a submission (no wait_object)",
                      b->kind->name ? b->kind->name : "?");
  return b->kind->wait_object(object);
}

static vkds_result base_poll(vkds_backend *b, vkds_submission *s) {
  if (!vkds_submission_unwrap(s)) return VKDS_SUCCESS;
  return vkds__fail(b->context, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS,
                    "resource kind '%s' cannot poll a submission", b->kind->name ? b->kind->name : "?");
}

static vkds_result base_wait_all(vkds_backend *b, uint64_t timeout_ns) {
  (void)timeout_ns;
  if (!b->kind->wait_resource)
    return vkds__fail(b->context, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS,
                      "resource kind '%s' cannot wait for a submission group (no wait_resource)",
                      b->kind->name ? b->kind->name : "?");
  for (uint32_t i = 0; i < b->resource_count; ++i) VKDS_CHECK(b->kind->wait_resource(b->resources[i]));
  return VKDS_SUCCESS;
}

const vkds_backend_ops vkds_backend_base_ops = {
    .version = VKDS_BACKEND_OPS_VERSION,
    .backend_size = sizeof(vkds_backend),
    .name = "base",
    .parent = NULL,
    .init = base_init,
    .destroy = vkds__backend_base_destroy,
    .get_resources = vkds__backend_base_get_resources,
    .supports = base_supports,
    .scratch_size = vkds__backend_base_scratch_size,
    .submit = vkds__backend_base_submit,
    .instrument_before = base_instrument_before,
    .instrument_after = base_instrument_after,
    .abandon = base_abandon,
    .wait = base_wait,
    .poll = base_poll,
    .wait_all = base_wait_all,
    .lazy_report = NULL, /* lazy reporting is off */
};
