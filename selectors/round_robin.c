/* selectors/round_robin.c: task i goes to resource i mod n. One relaxed atomic add per
 * selection; no reports needed, so nothing is tracked per task. */
#include "../lib/policy_internal.h"

typedef struct round_robin {
  vkds_policy base;
  _Atomic uint32_t next; /* 32 bits: a 32-bit modulo is several times cheaper than a 64-bit one */
} round_robin;

static vkds_result rr_select(vkds_policy *p, const vkds_task_info *hints, uint32_t *index) {
  (void)hints;
  round_robin *rr = (round_robin *)p;
  uint32_t ticket = atomic_fetch_add_explicit(&rr->next, 1, memory_order_relaxed);
  uint32_t n = p->resource_count;
  *index = (n & (n - 1)) == 0 ? ticket & (n - 1) : ticket % n; /* a mask for powers of two */
  return VKDS_SUCCESS;
}

const vkds_policy_ops vkds_policy_round_robin_ops = {
    .version = VKDS_POLICY_OPS_VERSION,
    .policy_size = sizeof(round_robin),
    .name = "round_robin",
    .select = rr_select,
};
