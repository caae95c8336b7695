/* selectors/round_robin.c: task i goes to resource i mod n. One relaxed atomic add per
 * selection, which also serves as the selection count; no reports needed, so nothing
 * is tracked per task. */
#include "../lib/backend/policy_internal.h"

typedef struct round_robin {
  vkds_policy base;
  _Atomic uint64_t next; /* 64 bits: it is also the selection count (rr_selections) */
} round_robin;

static vkds_result rr_select(vkds_policy *p, const vkds_task_info *hints, uint32_t *index) {
  (void)hints;
  round_robin *rr = (round_robin *)p;
  uint64_t ticket = atomic_fetch_add_explicit(&rr->next, 1, memory_order_relaxed);
  uint32_t n = p->resource_count;
  *index = (uint32_t)((n & (n - 1)) == 0 ? ticket & (n - 1) : ticket % n); /* a mask for powers of two */
  return VKDS_SUCCESS;
}

/* Ticket t went to resource t mod n: resource i got one per full turn, plus one if the
 * current turn has passed it. Exact once selections stop; the count also covers a pick
 * whose selection then failed (out of memory), which vkds's own count would not. */
static uint64_t rr_selections(const vkds_policy *p, uint32_t index) {
  const round_robin *rr = (const round_robin *)p;
  uint64_t tickets = atomic_load_explicit(&rr->next, memory_order_relaxed), n = p->resource_count;
  return tickets / n + (index < tickets % n);
}

const vkds_policy_ops vkds_policy_round_robin_ops = {
    .version = VKDS_POLICY_OPS_VERSION,
    .policy_size = sizeof(round_robin),
    .name = "round_robin",
    .select = rr_select,
    .selections = rr_selections,
};
