/* selectors/dynamic_load.c: the resource with the fewest tasks submitted but not yet
 * completed.
 *
 * Better than oneDPL's: the pick and the count are one atomic step (a compare-and-swap
 * of the chosen resource's count from the value the choice was made on), so threads
 * selecting at once spread over the resources instead of all taking the one that was
 * least loaded when they looked; and ties rotate instead of always going to the first.
 * The compare-and-swap also counts the selection (both live in one word, see
 * lib/backend/policy_internal.h), so a pick is one atomic step in all. */
#include "../lib/backend/policy_internal.h"

/* Where this thread's next scan starts, so that ties rotate. Per thread, not shared: a
 * shared counter would cost every selection one more contended atomic add, and the
 * compare-and-swap below already spreads threads that look at once. */
static VKDS__FAST_TLS uint32_t rotate;

static vkds_result dl_select(vkds_policy *p, const vkds_task_info *hints, uint32_t *index) {
  const uint32_t n = p->resource_count;
  const uint64_t capacity = vkds__in_flight_limit(p);
  for (;;) {
    uint32_t start = rotate++ % n;
    uint32_t best = UINT32_MAX;
    uint64_t best_word = 0;
    /* stops at the first idle resource: none can beat it */
    for (uint32_t k = 0; k < n && (best == UINT32_MAX || (best_word & VKDS__IN_FLIGHT_MASK)); ++k) {
      uint32_t i = start + k < n ? start + k : start + k - n;
      if (!vkds__may_take(p, hints, i)) continue;
      uint64_t word = vkds__picks(p, i);
      if (best == UINT32_MAX || (word & VKDS__IN_FLIGHT_MASK) < (best_word & VKDS__IN_FLIGHT_MASK))
        best = i, best_word = word;
    }
    if (best == UINT32_MAX) return vkds__none_usable(p, hints);
    if ((best_word & VKDS__IN_FLIGHT_MASK) >= capacity) return VKDS_ERROR_WOULD_BLOCK;
    if (vkds__count_pick(p, best, best_word)) {
      *index = best;
      return VKDS_SUCCESS;
    }
    /* another thread changed that count since we looked: look again */
  }
}

const vkds_policy_ops vkds_policy_dynamic_load_ops = {
    .version = VKDS_POLICY_OPS_VERSION,
    .policy_size = sizeof(vkds_policy),
    .name = "dynamic_load",
    .parent = &vkds_policy_base_ops,
    .reports = VKDS_REPORT_COMPLETION,
    .select_counts_in_flight = true,
    .init = vkds__policy_base_init,
    .destroy = vkds__policy_base_destroy,
    .select = dl_select,
    .report = vkds__policy_base_report,
};
