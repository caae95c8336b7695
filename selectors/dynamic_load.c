/* selectors/dynamic_load.c: the resource with the fewest tasks submitted but not yet
 * completed.
 *
 * Better than oneDPL's: the pick and the count are one atomic step (a compare-and-swap
 * of the chosen resource's count from the value the choice was made on), so threads
 * selecting at once spread over the resources instead of all taking the one that was
 * least loaded when they looked; and ties rotate instead of always going to the first. */
#include "../lib/policy_internal.h"

typedef struct dynamic_load {
  vkds_policy base;
  _Atomic uint32_t rotate; /* where the scan starts: rotates ties */
} dynamic_load;

static vkds_result dl_select(vkds_policy *p, const vkds_task_info *hints, uint32_t *index) {
  (void)hints;
  dynamic_load *dl = (dynamic_load *)p;
  const uint32_t n = p->resource_count;
  const uint32_t capacity = p->info->capacity;
  for (;;) {
    uint32_t start = atomic_fetch_add_explicit(&dl->rotate, 1, memory_order_relaxed) % n;
    uint32_t best = start;
    uint64_t best_load = vkds_policy_in_flight(p, start);
    for (uint32_t k = 1; k < n && best_load; ++k) {
      uint32_t i = start + k < n ? start + k : start + k - n;
      uint64_t load = vkds_policy_in_flight(p, i);
      if (load < best_load) best = i, best_load = load;
    }
    if (capacity && best_load >= capacity) return VKDS_ERROR_WOULD_BLOCK;
    if (vkds_policy_count_in_flight(p, best, best_load)) {
      *index = best;
      return VKDS_SUCCESS;
    }
    /* another thread changed that count since we looked: look again */
  }
}

const vkds_policy_ops vkds_policy_dynamic_load_ops = {
    .version = VKDS_POLICY_OPS_VERSION,
    .policy_size = sizeof(dynamic_load),
    .name = "dynamic_load",
    .reports = VKDS_REPORT_COMPLETION,
    .select_counts_in_flight = true,
    .select = dl_select,
};
