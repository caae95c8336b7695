/* lib/backend/policy_internal.h: what lib/backend/policy.c and selectors/ share. */
#ifndef VKDS_POLICY_INTERNAL_H
#define VKDS_POLICY_INTERNAL_H

#include <stdalign.h>

#include "internal.h"

/* vkds_policy_base_ops's slots (lib/backend/policy.c), which the built-in tables name
 * where they keep them: a table derived from one finds every DEFAULTED slot set. */
vkds_result vkds__policy_base_init(vkds_policy *p);
void vkds__policy_base_destroy(vkds_policy *p);
void vkds__policy_base_report(vkds_policy *p, const vkds_report *r);

/* Task-time statistics of one key on one resource. */
typedef struct vkds__key_stats {
  uint64_t key;
  bool used;
  uint64_t samples, warmups;
  double mean_ns;
  uint64_t best_ns;
} vkds__key_stats;

/* A resource's selections and tasks in flight share one 64-bit word: selections in the
 * high 40 bits, tasks in flight in the low 24. So a pick is counted in both by one
 * atomic step (one compare-and-swap for dynamic load, which picks on the in-flight
 * count), not two or three. The price: at most 16,777,215 tasks in flight per resource
 * (a pick beyond that would block), and selection counts wrap after 2^40. */
#define VKDS__IN_FLIGHT_MASK ((UINT64_C(1) << 24) - 1)
#define VKDS__ONE_SELECTION (UINT64_C(1) << 24)
#define VKDS__ONE_PICK (VKDS__ONE_SELECTION + 1) /* a selection that is also in flight */

/* Per-resource counters: atomics on the select path, a lock for the key table. Each on
 * its own cache line, so that threads selecting different resources do not share one. */
typedef struct vkds__resource_stats {
  alignas(64)
  _Atomic uint64_t picks; /* selections << 24 | in flight (see above) */
  _Atomic uint64_t completed;
  _Atomic uint32_t health;      /* vkds_resource_health */
  _Atomic uint64_t progress_ns; /* with a task deadline: when it was last idle or finished a task */
  uint32_t device_bit;          /* 1 << its device index (vkds_task_info.only_devices); 0 from device 32 on */
  pthread_mutex_t lock;
  vkds__key_stats *keys; /* open addressing, power-of-two capacity */
  uint32_t key_cap, key_count;
} vkds__resource_stats;

typedef struct vkds__policy_internal {
  vkds_policy_ops ops;
  vkds_policy_info info;
  atomic_uint refs;
  atomic_bool initialized;
  atomic_bool init_claimed; /* a vkds_policy_init is under way or done: a second one is refused */
  uint32_t reports; /* asked of the backend */
  size_t scratch;    /* per selection, for those reports */
  void (*lazy_report)(vkds_backend *b); /* the backend's, when the policy needs reports; else NULL */
  _Atomic uint64_t reported_ns;          /* when lazy_report last ran before a selection */
  vkds_report_sink sink;                /* on_report, to this policy */
  uint32_t selection_reports;           /* reports | VKDS_REPORT_UNUSED when the policy needs it */
  bool tracks_completion;
  /* the thread's cached selection may be used (no scratch, no user allocator: see
   * lib/backend/backend.c) */
  bool recycle;
  /* whose allocator the policy's own struct came from (at creation), and its state's
   * (statistics, keys, the selectors' tables: its backend's, from initialization) */
  const vkds_context *own_ctx, *alloc_ctx;
  vkds__resource_stats *stats;
  uint32_t device_bits; /* the resources' device_bit, together */
  /* The contexts the policy holds until it is freed (a context destroyed before its
   * policies lives on until they are released): its creation's, whose allocator its
   * memory came from, and its backend's when that is another. */
  vkds_context *own_held, *held;
  atomic_uint lost_seen; /* the context's lost-device count when the resources were last checked */
} vkds__policy_internal;

static inline vkds__policy_internal *vkds__policy_in(const vkds_policy *p) { return p->internal; }

/* The resource's picks word (selections and in-flight count), for selectors that pick
 * on the in-flight count: read it, choose, then vkds__count_pick from what was read. */
static inline uint64_t vkds__picks(const vkds_policy *p, uint32_t index) {
  return atomic_load_explicit(&vkds__policy_in(p)->stats[index].picks, memory_order_relaxed);
}
/* Tasks in flight a resource may have: the policy's capacity, within what the word holds. */
static inline uint64_t vkds__in_flight_limit(const vkds_policy *p) {
  uint32_t capacity = p->info->capacity;
  return capacity && capacity < VKDS__IN_FLIGHT_MASK ? capacity : VKDS__IN_FLIGHT_MASK;
}
/* Whether resource `index` is healthy (vkds_resource_health). */
static inline bool vkds__healthy(const vkds_policy *p, uint32_t index) {
  return atomic_load_explicit(&vkds__policy_in(p)->stats[index].health, memory_order_relaxed) ==
         VKDS_RESOURCE_HEALTHY;
}
/* Whether the policy may select resource `index` now: healthy, and below the capacity
 * (tasks in flight; without a capacity always). Selectors skip those it may not, so that
 * a full resource does not block a selection while another has room (vkds_select
 * counts the pick against the capacity again, atomically). */
static inline bool vkds__usable(const vkds_policy *p, uint32_t index) {
  return vkds__healthy(p, index) && (vkds__picks(p, index) & VKDS__IN_FLIGHT_MASK) < vkds__in_flight_limit(p);
}
/* Whether a task with these hints may run on resource `index` (hints->only_devices). */
static inline bool vkds__allowed(const vkds_policy *p, const vkds_task_info *hints, uint32_t index) {
  return !hints->only_devices || (hints->only_devices & vkds__policy_in(p)->stats[index].device_bit);
}
/* Whether the policy may give a task with these hints resource `index` now: allowed for
 * it and usable. What the built-in selectors ask of every candidate. */
static inline bool vkds__may_take(const vkds_policy *p, const vkds_task_info *hints, uint32_t index) {
  return vkds__allowed(p, hints, index) && vkds__usable(p, index);
}
/* What select returns when no resource may take the task (vkds__may_take):
 * VKDS_ERROR_DEVICE_LOST when every one it is allowed is lost, else
 * VKDS_ERROR_WOULD_BLOCK (stalled ones drain). */
vkds_result vkds__none_usable(const vkds_policy *p, const vkds_task_info *hints);

/* Counts a pick of `index` (a selection and a task in flight) if its word is still
 * `seen`; false when another thread changed it meanwhile (look again). */
static inline bool vkds__count_pick(vkds_policy *p, uint32_t index, uint64_t seen) {
  return atomic_compare_exchange_weak_explicit(&vkds__policy_in(p)->stats[index].picks, &seen, seen + VKDS__ONE_PICK,
                                               memory_order_relaxed, memory_order_relaxed);
}

/* ---- selectors' per-key state (lib/backend/key_index.c) ---- */

/* A map from task keys to places (indices) in a selector's own array of key states. */
typedef struct vkds__key_slot {
  uint64_t key;
  uint32_t place; /* + 1; 0: an empty slot */
} vkds__key_slot;
typedef struct vkds__key_index {
  vkds__key_slot *slots;
  uint32_t capacity, count; /* a power of two (or 0), at most half of it used */
} vkds__key_index;
/* The key's place; UINT32_MAX when it has none. */
uint32_t vkds__key_index_get(const vkds__key_index *ix, uint64_t key);
/* Gives the key that place (a new key, or a moved one); false when out of memory (the
 * index is left as it was). ctx: the policy's alloc_ctx. */
bool vkds__key_index_put(const vkds_context *ctx, vkds__key_index *ix, uint64_t key, uint32_t place);
/* Empties it (keeps its memory): a selector that forgets keys puts back those it keeps. */
/* How selectors forget keys: past VKDS__MAX_KEYS, the quarter used longest ago (of those
 * they may forget) goes; a key that comes back is measured afresh. The mark: sorts the
 * n (> 0) last uses and returns the one a quarter in (keys used at or before it go). */
#define VKDS__MAX_KEYS 4096u
uint64_t vkds__quarter_mark(uint64_t *uses, uint32_t n);
void vkds__key_index_clear(vkds__key_index *ix);
void vkds__key_index_free(const vkds_context *ctx, vkds__key_index *ix);

/* Looks up (and with create, adds) the key's entry; call with s->lock held. NULL when
 * absent (or out of memory). ctx: the policy's alloc_ctx. */
vkds__key_stats *vkds__key_stats_find(const vkds_context *ctx, vkds__resource_stats *s, uint64_t key, bool create);
/* Starts the key's task-time statistics afresh on every resource (its next time is a
 * warm-up again): auto tune's new trial round. Takes each resource's lock. */
void vkds__key_stats_forget(vkds_policy *p, uint64_t key);

/* Called by a selector's select for a pick whose task need not be timed: the selection
 * then asks the backend for no VKDS_REPORT_TIME (no timestamps in that task). For the
 * calling thread's current vkds_select only. */
void vkds__pick_untimed(void);

/* The context whose allocator an initialized policy's state comes from (selectors/). */
static inline const vkds_context *vkds__policy_alloc_ctx(const vkds_policy *p) {
  return vkds__policy_in(p)->alloc_ctx;
}

/* The device index of resource i (Vulkan), or i itself for other kinds. */
uint32_t vkds__policy_device_of(const vkds_policy *p, uint32_t i);
/* The lowest resource index on the same physical device as resource i (Vulkan: same
 * device UUID, also across VkDevices), or i itself for other kinds. */
uint32_t vkds__policy_hardware_of(const vkds_policy *p, uint32_t i);

#endif
