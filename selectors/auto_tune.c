/* selectors/auto_tune.c: for each key, try every resource, time it, then send every task
 * of that key to the fastest; start over after an optional interval.
 *
 * A trial round hands out (1 + trial_samples) selections per resource, round robin. The
 * first task time of a key on a resource in a round is a warm-up (pipeline creation,
 * cold caches) and counts neither in the mean nor in the choice. Once every resource
 * has its measured samples, the best is the minimum over the current means, and it is
 * recomputed as later samples arrive (the chosen resource keeps being measured, one task
 * in AT_TIMED_EVERY: a timed task carries timestamps, which cost a tiny task ~4 us of the
 * queue on an H100, bench/RESULTS.md, session 19; trial tasks are all timed). After
 * retune_interval_ns a fresh round starts with fresh statistics. Fixes against oneDPL:
 * times in nanoseconds, explicit keys, warm-ups excluded, best recomputed, statistics
 * reset between rounds. */
#include <stdlib.h>

#include "../lib/backend/policy_internal.h"

#define AT_TIMED_EVERY 8

typedef struct tune_key {
  uint64_t key;
  vkds_auto_tune_phase phase;
  uint64_t handed; /* selections handed out in the current trial round */
  uint64_t chosen_at;
  uint64_t chosen_picks; /* selections since the choice (which are timed: AT_TIMED_EVERY) */
  uint32_t best;
  uint64_t last_use; /* at->uses at its last selection */
  /* per resource, this round: */
  bool *warm;      /* its warm-up sample has arrived */
  uint64_t *count; /* measured samples */
  double *sum;
} tune_key;

/* Keys are found through an index (lib/backend/key_index.c: they were searched one by
 * one) and at VKDS__MAX_KEYS the quarter used longest ago are forgotten (a soak probe:
 * 20,000 keys kept ~300 bytes each for ever); a forgotten key is tuned afresh when it
 * comes back, and reports for it meanwhile are dropped. */
typedef struct auto_tune {
  vkds_policy base;
  pthread_mutex_t lock;
  tune_key **keys;
  uint32_t key_count, key_room;
  vkds__key_index index; /* key -> its place in keys */
  uint64_t uses;
} auto_tune;

static void free_key(const vkds_context *ctx, tune_key *k) {
  if (k) vkds__free(ctx, k->warm), vkds__free(ctx, k->count), vkds__free(ctx, k->sum);
  vkds__free(ctx, k);
}

static void forget_oldest(auto_tune *at) {
  const vkds_context *ctx = vkds__policy_alloc_ctx(&at->base);
  uint64_t *uses = vkds__alloc_array(ctx, at->key_count, sizeof *uses);
  if (!uses) return; /* (the store grows instead) */
  for (uint32_t i = 0; i < at->key_count; ++i) uses[i] = at->keys[i]->last_use;
  uint64_t mark = vkds__quarter_mark(uses, at->key_count);
  vkds__free(ctx, uses);
  uint32_t kept = 0;
  vkds__key_index_clear(&at->index);
  for (uint32_t i = 0; i < at->key_count; ++i) {
    if (at->keys[i]->last_use <= mark) {
      free_key(ctx, at->keys[i]);
      continue;
    }
    at->keys[kept] = at->keys[i];
    vkds__key_index_put(ctx, &at->index, at->keys[kept]->key, kept); /* (fits: fewer than before) */
    ++kept;
  }
  at->key_count = kept;
}

static uint32_t samples_per_round(const vkds_policy *p) { return p->info->trial_samples ? p->info->trial_samples : 1; }

static void start_round(vkds_policy *p, tune_key *k) {
  k->phase = VKDS_AUTO_TUNE_TRIAL;
  k->handed = 0;
  for (uint32_t i = 0; i < p->resource_count; ++i) k->warm[i] = false, k->count[i] = 0, k->sum[i] = 0.0;
  /* and what vkds_policy_get_key_stats shows, which kept every round's samples and counted
   * a new round's warm-up among them (a policies probe) */
  vkds__key_stats_forget(p, k->key);
}

/* Finds or adds the key's state; call with the lock held. */
static tune_key *find_key(vkds_policy *p, uint64_t key, bool create) {
  auto_tune *at = (auto_tune *)p;
  uint32_t place = vkds__key_index_get(&at->index, key);
  if (place != UINT32_MAX) return at->keys[place];
  if (!create) return NULL;
  if (at->key_count >= VKDS__MAX_KEYS) forget_oldest(at);
  if (at->key_count == at->key_room) {
    uint32_t room = at->key_room ? at->key_room * 2 : 8;
    tune_key **grown = vkds__realloc(vkds__policy_alloc_ctx(p), at->keys, room * sizeof *grown);
    if (!grown) return NULL;
    at->keys = grown, at->key_room = room;
  }
  uint32_t n = p->resource_count;
  const vkds_context *ctx = vkds__policy_alloc_ctx(p);
  tune_key *k = vkds__alloc(ctx, sizeof *k);
  if (k)
    k->warm = vkds__alloc_array(ctx, n, sizeof *k->warm), k->count = vkds__alloc_array(ctx, n, sizeof *k->count),
    k->sum = vkds__alloc_array(ctx, n, sizeof *k->sum);
  if (!k || !k->warm || !k->count || !k->sum || !vkds__key_index_put(ctx, &at->index, key, at->key_count)) {
    free_key(ctx, k);
    return NULL;
  }
  k->key = key;
  start_round(p, k);
  at->keys[at->key_count++] = k;
  return k;
}

/* The best over the current means, if every resource has its measured samples. */
static bool choose(vkds_policy *p, tune_key *k, uint32_t need) {
  uint32_t best = UINT32_MAX;
  double best_mean = 0.0;
  for (uint32_t i = 0; i < p->resource_count; ++i) {
    if (!vkds__healthy(p, i)) continue; /* its samples may never come */
    if (k->count[i] < need) return false;
    double mean = k->sum[i] / (double)k->count[i];
    if (best == UINT32_MAX || mean < best_mean) best = i, best_mean = mean;
  }
  if (k->phase != VKDS_AUTO_TUNE_CHOSEN) k->chosen_at = vkds__now_ns(), k->chosen_picks = 0;
  if (best == UINT32_MAX) return false; /* none usable */
  k->phase = VKDS_AUTO_TUNE_CHOSEN;
  k->best = best;
  return true;
}

/* For a task that may not run on the key's tuned choice (hints->only_devices: a launch
 * whose buffers are on another device): the fastest measured resource of those it may
 * take, else the first of them. */
static vkds_result fastest_allowed(vkds_policy *p, const tune_key *k, const vkds_task_info *hints, uint32_t *index) {
  uint32_t best = UINT32_MAX, first = UINT32_MAX;
  for (uint32_t i = 0; i < p->resource_count; ++i) {
    if (!vkds__may_take(p, hints, i)) continue;
    if (first == UINT32_MAX) first = i;
    if (k->count[i] && (best == UINT32_MAX || k->sum[i] / (double)k->count[i] < k->sum[best] / (double)k->count[best]))
      best = i;
  }
  if (first == UINT32_MAX) return vkds__none_usable(p, hints);
  *index = best != UINT32_MAX ? best : first;
  return VKDS_SUCCESS;
}

static vkds_result at_select(vkds_policy *p, const vkds_task_info *hints, uint32_t *index) {
  auto_tune *at = (auto_tune *)p;
  const uint32_t n = p->resource_count, need = samples_per_round(p);
  pthread_mutex_lock(&at->lock);
  tune_key *k = find_key(p, hints->key, true);
  if (!k) {
    pthread_mutex_unlock(&at->lock);
    return vkds__fail(p->backend->context, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "auto tune key");
  }
  k->last_use = ++at->uses;
  if (k->phase == VKDS_AUTO_TUNE_CHOSEN && p->info->retune_interval_ns &&
      vkds__now_ns() - k->chosen_at >= p->info->retune_interval_ns)
    start_round(p, k);
  if (k->phase == VKDS_AUTO_TUNE_CHOSEN && !vkds__healthy(p, k->best)) start_round(p, k); /* the best went bad */
  if (k->phase == VKDS_AUTO_TUNE_TRIAL && k->handed >= (uint64_t)n * (1 + need)) choose(p, k, need);
  vkds_result r = VKDS_SUCCESS;
  if (k->phase == VKDS_AUTO_TUNE_CHOSEN && !vkds__allowed(p, hints, k->best)) {
    r = fastest_allowed(p, k, hints, index);
  } else if (k->phase == VKDS_AUTO_TUNE_CHOSEN) {
    *index = k->best; /* (at capacity, vkds_select says WOULD_BLOCK: the tuned choice waits for its resource) */
    if (++k->chosen_picks % AT_TIMED_EVERY != 0) vkds__pick_untimed();
  } else { /* trial: round robin over those that may take it (healthy, with room, on its devices), also past
              the planned round while reports are due (a key whose tasks may use only some resources
              stays in its trial: every resource must be measured before a choice) */
    uint32_t tried = 0;
    while (tried < n && !vkds__may_take(p, hints, (uint32_t)(k->handed % n))) ++k->handed, ++tried;
    if (tried == n) r = vkds__none_usable(p, hints);
    *index = (uint32_t)(k->handed % n);
    ++k->handed;
    /* a resource measured enough already is timed one task in AT_TIMED_EVERY, as a
     * chosen one is: a key whose tasks may use only some resources (launches on a
     * context of several devices) stays in its trial, and timed every task there (a
     * README probe: 199 of 200; a timed tiny task costs an H100's queue ~10 us, ~6
     * untimed) */
    if (r == VKDS_SUCCESS && k->count[*index] >= need && ++k->chosen_picks % AT_TIMED_EVERY != 0) vkds__pick_untimed();
  }
  pthread_mutex_unlock(&at->lock);
  return r;
}

static void at_report(vkds_policy *p, const vkds_report *r) {
  if (r->what != VKDS_REPORT_TIME) return;
  auto_tune *at = (auto_tune *)p;
  const uint32_t n = p->resource_count, need = samples_per_round(p);
  pthread_mutex_lock(&at->lock);
  tune_key *k = find_key(p, r->key, false);
  if (k) {
    uint32_t i = r->resource_index;
    if (!k->warm[i]) {
      k->warm[i] = true; /* excluded from the mean and the choice */
    } else {
      ++k->count[i];
      k->sum[i] += (double)r->value_ns;
    }
    if (k->phase == VKDS_AUTO_TUNE_CHOSEN) {
      choose(p, k, 1); /* the best is the minimum over the current means */
    } else if (k->handed >= (uint64_t)n * (1 + need)) {
      choose(p, k, need);
    }
  }
  pthread_mutex_unlock(&at->lock);
}

static vkds_result at_init(vkds_policy *p) {
  pthread_mutex_init(&((auto_tune *)p)->lock, NULL);
  return VKDS_SUCCESS;
}

static void at_destroy(vkds_policy *p) {
  auto_tune *at = (auto_tune *)p;
  const vkds_context *ctx = vkds__policy_alloc_ctx(p);
  for (uint32_t i = 0; i < at->key_count; ++i) free_key(ctx, at->keys[i]);
  vkds__free(ctx, at->keys);
  vkds__key_index_free(ctx, &at->index);
  pthread_mutex_destroy(&at->lock);
}

const vkds_policy_ops vkds_policy_auto_tune_ops = {
    .version = VKDS_POLICY_OPS_VERSION,
    .policy_size = sizeof(auto_tune),
    .name = "auto_tune",
    .parent = &vkds_policy_base_ops,
    .reports = VKDS_REPORT_TIME,
    .init = at_init,
    .destroy = at_destroy,
    .select = at_select,
    .report = at_report,
};

vkds_result vkds_policy_auto_tune_state(const vkds_policy *p, uint64_t key, vkds_auto_tune_phase *phase,
                                        uint32_t *best) {
  if (!p || !phase || !best)
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "vkds_policy_auto_tune_state: NULL argument");
  if (p->ops->select != at_select)
    return vkds__fail(NULL, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS, "policy '%s' is not auto tune", p->ops->name);
  if (!vkds_policy_initialized(p))
    return vkds__fail(NULL, VKDS_ERROR_NOT_INITIALIZED, VK_SUCCESS, "auto tune policy not initialized");
  auto_tune *at = (auto_tune *)p;
  pthread_mutex_lock(&at->lock);
  tune_key *k = find_key((vkds_policy *)p, key, false);
  *phase = k ? k->phase : VKDS_AUTO_TUNE_UNSEEN;
  *best = k && k->phase == VKDS_AUTO_TUNE_CHOSEN ? k->best : UINT32_MAX;
  pthread_mutex_unlock(&at->lock);
  return VKDS_SUCCESS;
}
