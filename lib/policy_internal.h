/* lib/policy_internal.h: what lib/policy.c and selectors/ share. */
#ifndef VKDS_POLICY_INTERNAL_H
#define VKDS_POLICY_INTERNAL_H

#include <stdalign.h>

#include "internal.h"

/* Task-time statistics of one key on one resource. */
typedef struct vkds__key_stats {
  uint64_t key;
  bool used;
  uint64_t samples, warmups;
  double mean_ns;
  uint64_t best_ns;
} vkds__key_stats;

/* Per-resource counters: atomics on the select path, a lock for the key table. Each on
 * its own cache line, so that threads selecting different resources do not share one. */
typedef struct vkds__resource_stats {
  alignas(64)
  _Atomic uint64_t selections;
  _Atomic uint64_t in_flight;
  _Atomic uint64_t completed;
  pthread_mutex_t lock;
  vkds__key_stats *keys; /* open addressing, power-of-two capacity */
  uint32_t key_cap, key_count;
} vkds__resource_stats;

typedef struct vkds__policy_internal {
  vkds_policy_ops ops;
  vkds_policy_info info;
  atomic_uint refs;
  atomic_bool initialized;
  uint32_t reports; /* asked of the backend */
  size_t scratch;    /* per selection, for those reports */
  bool tracks_completion;
  vkds__resource_stats *stats;
} vkds__policy_internal;

static inline vkds__policy_internal *vkds__policy_in(const vkds_policy *p) { return p->internal; }

/* Looks up (and with create, adds) the key's entry; call with s->lock held. NULL when
 * absent (or out of memory). */
vkds__key_stats *vkds__key_stats_find(vkds__resource_stats *s, uint64_t key, bool create);

/* The device index of resource i (Vulkan), or i itself for other kinds. */
uint32_t vkds__policy_device_of(const vkds_policy *p, uint32_t i);
/* The lowest resource index on the same physical device as resource i (Vulkan: same
 * device UUID, also across VkDevices), or i itself for other kinds. */
uint32_t vkds__policy_hardware_of(const vkds_policy *p, uint32_t i);

#endif
