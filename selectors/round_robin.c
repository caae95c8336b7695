/* selectors/round_robin.c: task i goes to resource i mod n. One relaxed atomic add per
 * selection, which also serves as the selection count; no reports needed, so nothing
 * is tracked per task. A resource that may not take a task (unhealthy, full, or not on
 * the task's devices) passes its turn to the next that may; `moved` keeps the selection
 * counts exact then. */
#include "../lib/backend/policy_internal.h"

typedef struct round_robin {
  vkds_policy base;
  _Atomic uint64_t next;  /* 64 bits: it is also the selection count (rr_selections) */
  _Atomic int64_t *moved; /* per resource: turns taken from others minus turns passed on */
} round_robin;

static vkds_result rr_init(vkds_policy *p) {
  round_robin *rr = (round_robin *)p;
  rr->moved = vkds__alloc_array(vkds__policy_alloc_ctx(p), p->resource_count, sizeof *rr->moved);
  if (!rr->moved) return vkds__fail(p->backend->context, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "round robin");
  return VKDS_SUCCESS;
}

static void rr_destroy(vkds_policy *p) { vkds__free(vkds__policy_alloc_ctx(p), (void *)((round_robin *)p)->moved); }

/* Resource `turn` may not take its turn: the next one after it that may take the task
 * does. */
static vkds_result pass_turn(vkds_policy *p, const vkds_task_info *hints, uint32_t turn, uint32_t *index) {
  round_robin *rr = (round_robin *)p;
  const uint32_t n = p->resource_count;
  for (uint32_t k = 1; k < n; ++k) {
    uint32_t i = turn + k < n ? turn + k : turn + k - n;
    if (!vkds__may_take(p, hints, i)) continue;
    atomic_fetch_sub_explicit(&rr->moved[turn], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&rr->moved[i], 1, memory_order_relaxed);
    *index = i;
    return VKDS_SUCCESS;
  }
  atomic_fetch_sub_explicit(&rr->moved[turn], 1, memory_order_relaxed); /* nobody took the turn */
  return vkds__none_usable(p, hints);
}

static vkds_result rr_select(vkds_policy *p, const vkds_task_info *hints, uint32_t *index) {
  round_robin *rr = (round_robin *)p;
  uint64_t ticket = atomic_fetch_add_explicit(&rr->next, 1, memory_order_relaxed);
  uint32_t n = p->resource_count;
  uint32_t turn = (uint32_t)((n & (n - 1)) == 0 ? ticket & (n - 1) : ticket % n); /* a mask for powers of two */
  if (!vkds__may_take(p, hints, turn)) return pass_turn(p, hints, turn, index);
  *index = turn;
  return VKDS_SUCCESS;
}

/* Ticket t went to resource t mod n: resource i got one per full turn, plus one if the
 * current turn has passed it, plus what it took over for unhealthy ones. Exact once
 * selections stop; the count also covers a pick whose selection then failed (out of
 * memory), which vkds's own count would not. Where vkds tracks completions (capacity,
 * deadlines) its own count is exact and is taken: there a turn given to a resource that
 * filled up before vkds counted the pick (another thread's) made no selection, and its
 * ticket counted one all the same (a policies probe: 2-23 too many over 8 threads). */
static uint64_t rr_selections(const vkds_policy *p, uint32_t index) {
  if (vkds__policy_in(p)->tracks_completion) return vkds__picks(p, index) / VKDS__ONE_SELECTION;
  const round_robin *rr = (const round_robin *)p;
  uint64_t tickets = atomic_load_explicit(&rr->next, memory_order_relaxed), n = p->resource_count;
  int64_t moved = rr->moved ? atomic_load_explicit(&rr->moved[index], memory_order_relaxed) : 0;
  return (uint64_t)((int64_t)(tickets / n + (index < tickets % n)) + moved);
}

const vkds_policy_ops vkds_policy_round_robin_ops = {
    .version = VKDS_POLICY_OPS_VERSION,
    .policy_size = sizeof(round_robin),
    .name = "round_robin",
    .parent = &vkds_policy_base_ops,
    .init = rr_init,
    .destroy = rr_destroy,
    .select = rr_select,
    .report = vkds__policy_base_report,
    .selections = rr_selections,
};
