/* selectors/earliest_finish.c: the resource where this task would finish first.
 *
 * Beyond oneDPL. For a task with key K, the estimated finish on resource r is
 *   queued(r)    the estimated time of the tasks already in flight there (for each key,
 *                tasks in flight × that key's measured cost on r), plus
 *   cost(K, r)   K's measured task time on r (from the tasks timed: EF_TIMED_FIRST
 *                below) without the warm-up sample (the warm-up
 *                alone until there is more): the mean, except on a resource that shares
 *                its device with others of the policy, where it is the best sample of
 *                any of the device's resources judged so far (a task timed while the
 *                device also ran other queues' work has that work in its time, and
 *                queued(r) counts it already; and the queues of one device run a key at
 *                one speed: a resource judged on its own few samples, all taken while
 *                a sibling ran, looked slower than a sibling whose best of many was
 *                taken alone, and lost every pick, even of tasks whose data it held:
 *                two VkDevices on one lavapipe, examples/several_gpus.c, session 42),
 *                plus
 *   move(r)      hints->bytes / transfer_bytes_per_s unless hints->data_devices says the
 *                data already lives on r's device (then 0); twice that when the data
 *                live on another device (they go down to the host, then up).
 * A resource that has not yet run K twice is tried first (one exploring task at a time
 * on it: a burst that ends before the first one's report comes back leaves it at its
 * warm-up, a new-user probe's reading), so every estimate comes from a measurement past
 * the warm-up: judged on its
 * warm-up sample alone (a pipeline made, caches cold), a resource that started slow
 * was never picked again, so that sample was never replaced (a new-user probe: 29 of 30
 * reductions went to the device without the data, 3.9x slower than the one with it).
 *
 * Queues of one physical device share its execution units: on the H100 (driver 580) 16
 * queues flooded at once retire work no faster than one (bench/RESULTS.md). So queued(r)
 * counts the work in flight on every resource of r's physical device, not only on r;
 * resources of different devices (or other kinds) are independent.
 *
 * For the same reason, the queues of one GPU whose estimates are within 5% of each
 * other are a tie, broken toward the queue with more tasks in flight: under the shared
 * model the choice changes nothing but the queue's own cost, and spreading one GPU's
 * work over several of its queues makes the driver switch between them (time slicing)
 * for no gain. Without it, measurement noise between equally fast queues decided (H100
 * balance benchmark: 2,599-2,758 ms without it in session 1, 2,575 ms with it, against
 * 2,563 ms for everything on the fastest queue in the same run; bench/RESULTS.md). Not
 * on CPU devices: lavapipe runs each VkDevice on threads of its own, which do overlap
 * where there are cores for them. */
#include <stdlib.h>

#include "../lib/backend/policy_internal.h"

typedef struct ef_cost {
  uint64_t in_flight; /* this key's tasks in flight on the resource */
  uint64_t warmup_ns; /* the first sample */
  uint64_t count;     /* later samples */
  double mean_ns;
  double best_ns;
  double cost_ns;     /* what the estimate uses (see cost(K, r) above) */
  uint64_t picks;     /* selections of this key here (which are timed: EF_TIMED_FIRST) */
} ef_cost;

/* Which tasks are timed: the first EF_TIMED_FIRST of a key on a resource, then one in
 * EF_TIMED_EVERY. A timed task carries two timestamps, and its end stamp waits for its
 * work, so timed tasks do not overlap: on an H100 a tiny task timed took ~10 us of the
 * queue against ~6 untimed (bench/RESULTS.md, session 19). The estimates stay measured
 * (a mean, or a best sample) and keep following the device, one task in 8. */
#define EF_TIMED_FIRST 8
#define EF_TIMED_EVERY 8

/* The keys a policy keeps: at VKDS__MAX_KEYS, the quarter used longest ago of those
 * with no task in flight is forgotten (a key is measured afresh if it comes back). Keys
 * were kept for ever and looked up one by one, and every selection walked all of them:
 * a soak probe's 20,000 keys made a selection 2.5x slower by the end (0.31 -> 0.78 s a
 * 2,000), growing ~200 bytes a key with one resource (and resource_count times that
 * with more); a service that makes kernels from generated GLSL makes a key of each
 * (vkds_launch's default key). Now a key is found through an index (key_index.c), a
 * selection walks only the keys with tasks in flight, and the mean over every
 * measurement that guesses an unmeasured key's cost is kept as it changes (20,000
 * keys on lavapipe: 6 -> 54 us a selection before, 0.4-3 us now). */

typedef struct ef_key {
  uint64_t key;
  ef_cost *per;       /* per resource */
  uint64_t in_flight; /* its tasks in flight, over every resource */
  uint64_t last_use;  /* ef->uses at its last selection */
  uint32_t active_at; /* its place in ef->active while it has tasks in flight */
} ef_key;

typedef struct earliest_finish {
  vkds_policy base;
  pthread_mutex_t lock;
  ef_key *keys;
  uint32_t key_count, key_room;
  vkds__key_index index; /* key -> its place in keys */
  uint32_t *active;       /* places of the keys with tasks in flight */
  uint32_t active_count;
  uint64_t uses;
  double measured_sum; /* cost_of over every measured key and resource, and how many */
  uint64_t measured_count;
  double ns_per_byte;
  uint32_t *hw; /* per resource: the first resource on the same physical device */
  double *queued_hw; /* per hardware (first resource): scratch of estimate_queued */
  bool *sticky;      /* per resource: the tie rule applies (a GPU queue) */
  bool *shared;      /* per resource: another resource of the policy is on its device */
  double *best_hw;   /* per hardware (first resource): scratch of ef_select, cost(K, r) */
} earliest_finish;

static bool measured(const ef_cost *c) { return c->warmup_ns || c->count; }
static double cost_of(const ef_cost *c) { return c->count ? c->cost_ns : (double)c->warmup_ns; }

static bool grow(earliest_finish *ef) {
  const vkds_context *ctx = vkds__policy_alloc_ctx(&ef->base);
  uint32_t room = ef->key_room ? ef->key_room * 2 : 8;
  ef_key *keys = vkds__realloc(ctx, ef->keys, room * sizeof *keys);
  if (!keys) return false;
  ef->keys = keys;
  uint32_t *active = vkds__realloc(ctx, ef->active, room * sizeof *active);
  if (!active) return false;
  ef->active = active, ef->key_room = room;
  return true;
}

/* Drops the quarter of the keys with no task in flight that were used longest ago (at
 * once, so that the index is made again once per VKDS__MAX_KEYS / 4 new keys: one key
 * at a time, the search and the index cost ~15 us a new key): their measurements leave
 * the mean, the others move up. */
static void forget_oldest(earliest_finish *ef) {
  const vkds_context *ctx = vkds__policy_alloc_ctx(&ef->base);
  uint64_t *uses = vkds__alloc_array(ctx, ef->key_count, sizeof *uses);
  if (!uses) return; /* (the store grows instead) */
  uint32_t idle = 0;
  for (uint32_t i = 0; i < ef->key_count; ++i)
    if (!ef->keys[i].in_flight) uses[idle++] = ef->keys[i].last_use;
  if (idle) {
    uint64_t threshold = vkds__quarter_mark(uses, idle);
    uint32_t kept = 0;
    for (uint32_t i = 0; i < ef->key_count; ++i) {
      ef_key *k = &ef->keys[i];
      if (!k->in_flight && k->last_use <= threshold) {
        for (uint32_t r = 0; r < ef->base.resource_count; ++r)
          if (measured(&k->per[r])) ef->measured_sum -= cost_of(&k->per[r]), --ef->measured_count;
        vkds__free(ctx, k->per);
        continue;
      }
      ef->keys[kept] = *k;
      if (k->in_flight) ef->active[k->active_at] = kept;
      ++kept;
    }
    ef->key_count = kept;
    vkds__key_index_clear(&ef->index); /* (the kept keys fit the memory it had) */
    for (uint32_t i = 0; i < kept; ++i) vkds__key_index_put(ctx, &ef->index, ef->keys[i].key, i);
  }
  vkds__free(ctx, uses);
}

/* The key's state, made when `create` (the keys used longest ago give way at
 * VKDS__MAX_KEYS); NULL when it has none (or no memory). */
static ef_key *find_key(earliest_finish *ef, uint64_t key, bool create) {
  uint32_t at = vkds__key_index_get(&ef->index, key);
  if (at != UINT32_MAX) return &ef->keys[at];
  if (!create) return NULL;
  if (ef->key_count >= VKDS__MAX_KEYS) forget_oldest(ef); /* (every key busy: the store grows) */
  if (ef->key_count == ef->key_room && !grow(ef)) return NULL;
  const vkds_context *ctx = vkds__policy_alloc_ctx(&ef->base);
  ef_cost *per = vkds__alloc_array(ctx, ef->base.resource_count, sizeof *per);
  if (!per || !vkds__key_index_put(ctx, &ef->index, key, ef->key_count)) {
    vkds__free(ctx, per);
    return NULL;
  }
  ef->keys[ef->key_count] = (ef_key){.key = key, .per = per};
  return &ef->keys[ef->key_count++];
}

/* A task of key k went in flight on resource r, or left it (delta -1). */
static void in_flight(earliest_finish *ef, ef_key *k, uint32_t r, int delta) {
  uint32_t i = (uint32_t)(k - ef->keys);
  if (delta > 0) {
    if (k->in_flight++ == 0) k->active_at = ef->active_count, ef->active[ef->active_count++] = i;
    ++k->per[r].in_flight;
    return;
  }
  --k->per[r].in_flight;
  if (--k->in_flight == 0) { /* off the active list: the last one takes its place */
    uint32_t last = ef->active[--ef->active_count];
    ef->active[k->active_at] = last;
    ef->keys[last].active_at = k->active_at;
  }
}
/* Whether the key's cost here is known past the warm-up: then it competes; else it is
 * explored. */
static bool judged(const ef_cost *c) { return c->count > 0; }

/* A key's cost on a resource that has not run it yet: its mean over the resources that
 * have; else the mean over every measured key and resource (unknown work is assumed
 * typical, not free, or everything would pile onto the unmeasured); else 1 ns. */
static double guess(const earliest_finish *ef, const ef_key *k) {
  double sum = 0.0;
  uint32_t n = 0;
  for (uint32_t r = 0; r < ef->base.resource_count; ++r)
    if (measured(&k->per[r])) sum += cost_of(&k->per[r]), ++n;
  if (n) return sum / n;
  return ef->measured_count && ef->measured_sum > 0 ? ef->measured_sum / (double)ef->measured_count : 1.0;
}

/* Fills ef->queued_hw[h] with the estimated time of everything in flight on hardware
 * h (indexed by its first resource): one pass over the keys with tasks in flight and
 * the resources per selection. */
static void estimate_queued(earliest_finish *ef) {
  uint32_t n = ef->base.resource_count;
  for (uint32_t r = 0; r < n; ++r) ef->queued_hw[r] = 0.0;
  for (uint32_t a = 0; a < ef->active_count; ++a) {
    const ef_key *k = &ef->keys[ef->active[a]];
    double guessed = -1.0; /* computed once per key, when some in-flight task needs it */
    for (uint32_t r = 0; r < n; ++r) {
      const ef_cost *c = &k->per[r];
      if (!c->in_flight) continue;
      double cost = measured(c) ? cost_of(c) : (guessed >= 0 ? guessed : (guessed = guess(ef, k)));
      ef->queued_hw[ef->hw[r]] += (double)c->in_flight * cost;
    }
  }
}

/* Whether resource r (estimated finish `finish`) beats the best so far (see the tie rule
 * at the top). */
static bool replaces(const vkds_policy *p, uint32_t r, double finish, uint32_t best, double best_finish) {
  const earliest_finish *ef = (const earliest_finish *)p;
  if (ef->hw[r] == ef->hw[best] && ef->sticky[r] && finish <= best_finish * 1.05 && best_finish <= finish * 1.05)
    return (vkds__picks(p, r) & VKDS__IN_FLIGHT_MASK) > (vkds__picks(p, best) & VKDS__IN_FLIGHT_MASK);
  return finish < best_finish;
}

static vkds_result ef_select(vkds_policy *p, const vkds_task_info *hints, uint32_t *index) {
  earliest_finish *ef = (earliest_finish *)p;
  pthread_mutex_lock(&ef->lock);
  ef_key *k = find_key(ef, hints->key, true);
  if (!k) {
    pthread_mutex_unlock(&ef->lock);
    return vkds__fail(p->backend->context, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "earliest finish key");
  }
  estimate_queued(ef);
  for (uint32_t r = 0; r < p->resource_count; ++r) ef->best_hw[r] = -1.0; /* (-1: none judged) */
  for (uint32_t r = 0; r < p->resource_count; ++r) {
    double *b = &ef->best_hw[ef->hw[r]];
    if (ef->shared[r] && judged(&k->per[r]) && (*b < 0.0 || k->per[r].cost_ns < *b)) *b = k->per[r].cost_ns;
  }
  uint32_t best = UINT32_MAX, explore = UINT32_MAX, idlest = UINT32_MAX; /* UINT32_MAX: none yet */
  double best_finish = 0.0, explore_queued = 0.0, idlest_queued = 0.0;
  for (uint32_t r = 0; r < p->resource_count; ++r) {
    if (!vkds__may_take(p, hints, r)) continue;
    const ef_cost *c = &k->per[r];
    double q = ef->queued_hw[ef->hw[r]];
    if (idlest == UINT32_MAX || q < idlest_queued) idlest = r, idlest_queued = q;
    if (!judged(c)) { /* not run twice yet: try it, unless a try is already running */
      if (c->in_flight == 0 && (explore == UINT32_MAX || q < explore_queued)) explore = r, explore_queued = q;
      continue;
    }
    bool resident = hints->data_devices & vkds__policy_in(p)->stats[r].device_bit;
    double move = resident ? 0.0 : (double)hints->bytes * ef->ns_per_byte * (hints->data_devices ? 2.0 : 1.0);
    double finish = q + (ef->shared[r] ? ef->best_hw[ef->hw[r]] : cost_of(c)) + move;
    if (best == UINT32_MAX || replaces(p, r, finish, best, best_finish)) best = r, best_finish = finish;
  }
  if (idlest == UINT32_MAX) { /* none usable */
    pthread_mutex_unlock(&ef->lock);
    return vkds__none_usable(p, hints);
  }
  if (explore != UINT32_MAX) best = explore;
  /* every resource is still exploring this key: the one with the least work queued */
  if (best == UINT32_MAX) best = idlest;
  ef_cost *chosen = &k->per[best];
  in_flight(ef, k, best, +1);
  k->last_use = ++ef->uses;
  if (chosen->picks >= EF_TIMED_FIRST && (chosen->picks - EF_TIMED_FIRST) % EF_TIMED_EVERY != EF_TIMED_EVERY - 1)
    vkds__pick_untimed();
  ++chosen->picks;
  *index = best;
  pthread_mutex_unlock(&ef->lock);
  return VKDS_SUCCESS;
}

static void ef_report(vkds_policy *p, const vkds_report *r) {
  earliest_finish *ef = (earliest_finish *)p;
  pthread_mutex_lock(&ef->lock);
  ef_key *k = find_key(ef, r->key, false);
  if (k) {
    ef_cost *c = &k->per[r->resource_index];
    if ((r->what == VKDS_REPORT_COMPLETION || r->what == VKDS_REPORT_UNUSED) && c->in_flight) {
      in_flight(ef, k, r->resource_index, -1);
    } else if (r->what == VKDS_REPORT_TIME) {
      if (measured(c)) ef->measured_sum -= cost_of(c);
      else ++ef->measured_count;
      if (!c->warmup_ns && !c->count) {
        c->warmup_ns = r->value_ns ? r->value_ns : 1;
      } else {
        ++c->count;
        c->mean_ns += ((double)r->value_ns - c->mean_ns) / (double)c->count;
        if (c->count == 1 || (double)r->value_ns < c->best_ns) c->best_ns = (double)r->value_ns;
        c->cost_ns = ef->shared[r->resource_index] ? c->best_ns : c->mean_ns;
      }
      ef->measured_sum += cost_of(c);
    }
  }
  pthread_mutex_unlock(&ef->lock);
}

static vkds_result ef_init(vkds_policy *p) {
  earliest_finish *ef = (earliest_finish *)p;
  pthread_mutex_init(&ef->lock, NULL);
  double bw = p->info->transfer_bytes_per_s > 0 ? p->info->transfer_bytes_per_s : 10e9;
  ef->ns_per_byte = 1e9 / bw;
  const vkds_context *ctx = vkds__policy_alloc_ctx(p);
  ef->hw = vkds__alloc_array(ctx, p->resource_count, sizeof *ef->hw);
  ef->queued_hw = vkds__alloc_array(ctx, p->resource_count, sizeof *ef->queued_hw);
  ef->sticky = vkds__alloc_array(ctx, p->resource_count, sizeof *ef->sticky);
  ef->shared = vkds__alloc_array(ctx, p->resource_count, sizeof *ef->shared);
  ef->best_hw = vkds__alloc_array(ctx, p->resource_count, sizeof *ef->best_hw);
  if (!ef->hw || !ef->queued_hw || !ef->sticky || !ef->shared || !ef->best_hw) { /* destroy is not called when init fails */
    vkds__free(ctx, ef->hw), vkds__free(ctx, ef->queued_hw), vkds__free(ctx, ef->sticky), vkds__free(ctx, ef->shared);
    vkds__free(ctx, ef->best_hw);
    pthread_mutex_destroy(&ef->lock);
    return vkds__fail(p->backend->context, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "earliest finish");
  }
  for (uint32_t r = 0; r < p->resource_count; ++r) {
    ef->hw[r] = vkds__policy_hardware_of(p, r);
    vkds_resource_info ri;
    ef->sticky[r] = p->backend->kind == &vkds_resource_kind_vulkan &&
                    vkds_resource_get_info(p->backend->resources[r], &ri) == VKDS_SUCCESS &&
                    ri.device_type != VKDS_DEVICE_CPU;
    if (ef->hw[r] != r) ef->shared[r] = ef->shared[ef->hw[r]] = true;
  }
  return VKDS_SUCCESS;
}

static void ef_destroy(vkds_policy *p) {
  earliest_finish *ef = (earliest_finish *)p;
  const vkds_context *ctx = vkds__policy_alloc_ctx(p);
  for (uint32_t i = 0; i < ef->key_count; ++i) vkds__free(ctx, ef->keys[i].per);
  vkds__free(ctx, ef->keys);
  vkds__key_index_free(ctx, &ef->index);
  vkds__free(ctx, ef->active);
  vkds__free(ctx, ef->hw);
  vkds__free(ctx, ef->queued_hw);
  vkds__free(ctx, ef->sticky);
  vkds__free(ctx, ef->shared);
  vkds__free(ctx, ef->best_hw);
  pthread_mutex_destroy(&ef->lock);
}

const vkds_policy_ops vkds_policy_earliest_finish_ops = {
    .version = VKDS_POLICY_OPS_VERSION,
    .policy_size = sizeof(earliest_finish),
    .name = "earliest_finish",
    .parent = &vkds_policy_base_ops,
    .reports = VKDS_REPORT_COMPLETION | VKDS_REPORT_TIME,
    .init = ef_init,
    .destroy = ef_destroy,
    .select = ef_select,
    .report = ef_report,
};
