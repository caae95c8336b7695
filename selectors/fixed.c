/* selectors/fixed.c: every task goes to one resource, chosen by index at creation. */
#include "../lib/backend/policy_internal.h"

static vkds_result fixed_init(vkds_policy *p) {
  if (p->info->fixed_index >= p->resource_count)
    return vkds__fail(p->backend->context, VKDS_ERROR_OUT_OF_RANGE, VK_SUCCESS,
                      "fixed policy: index %u, but the policy has %u resource%s", p->info->fixed_index,
                      p->resource_count, p->resource_count == 1 ? "" : "s");
  return VKDS_SUCCESS;
}

static vkds_result fixed_select(vkds_policy *p, const vkds_task_info *hints, uint32_t *index) {
  (void)hints;
  if (vkds_policy_resource_health(p, p->info->fixed_index) == VKDS_RESOURCE_LOST)
    return vkds__fail(p->backend->context, VKDS_ERROR_DEVICE_LOST, VK_ERROR_DEVICE_LOST,
                      "fixed policy: resource %u is lost", p->info->fixed_index);
  if (!vkds__usable(p, p->info->fixed_index)) return VKDS_ERROR_WOULD_BLOCK; /* stalled: wait for it to drain */
  *index = p->info->fixed_index;
  return VKDS_SUCCESS;
}

const vkds_policy_ops vkds_policy_fixed_ops = {
    .version = VKDS_POLICY_OPS_VERSION,
    .policy_size = sizeof(vkds_policy),
    .name = "fixed",
    .parent = &vkds_policy_base_ops,
    .init = fixed_init,
    .destroy = vkds__policy_base_destroy,
    .select = fixed_select,
    .report = vkds__policy_base_report,
};
