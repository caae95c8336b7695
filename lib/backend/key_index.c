/* lib/backend/key_index.c: a map from 64-bit task keys to the places of the selectors'
 * per-key state (selectors/earliest_finish.c, auto_tune.c).
 *
 * Open addressing with linear probing, at most half full, so that a lookup is a probe
 * or two whatever the number of keys (both selectors searched their keys one by one: a
 * soak probe's 20,000 keys made each selection 9x slower). Entries are never removed
 * one at a time: a selector that forgets keys clears the index and puts back the ones
 * it keeps. */
#include "policy_internal.h"

#include <stdlib.h>
#include <string.h>

static uint32_t first_slot(const vkds__key_index *ix, uint64_t key) {
  return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & (ix->capacity - 1);
}

uint32_t vkds__key_index_get(const vkds__key_index *ix, uint64_t key) {
  if (!ix->capacity) return UINT32_MAX;
  for (uint32_t at = first_slot(ix, key);; at = (at + 1) & (ix->capacity - 1)) {
    const vkds__key_slot *s = &ix->slots[at];
    if (!s->place) return UINT32_MAX;
    if (s->key == key) return s->place - 1;
  }
}

/* Puts key -> place, the room for it there (reserve). */
static void put(vkds__key_index *ix, uint64_t key, uint32_t place) {
  uint32_t at = first_slot(ix, key);
  while (ix->slots[at].place && ix->slots[at].key != key) at = (at + 1) & (ix->capacity - 1);
  if (!ix->slots[at].place) ++ix->count;
  ix->slots[at] = (vkds__key_slot){.key = key, .place = place + 1};
}

bool vkds__key_index_put(const vkds_context *ctx, vkds__key_index *ix, uint64_t key, uint32_t place) {
  if (2 * (ix->count + 1) > ix->capacity) { /* grow: twice the room, everything put back */
    uint32_t capacity = ix->capacity ? 2 * ix->capacity : 16;
    vkds__key_slot *slots = vkds__alloc_array(ctx, capacity, sizeof *slots), *old = ix->slots;
    if (!slots) return false;
    uint32_t old_capacity = ix->capacity;
    ix->slots = slots, ix->capacity = capacity, ix->count = 0;
    for (uint32_t i = 0; i < old_capacity; ++i)
      if (old[i].place) put(ix, old[i].key, old[i].place - 1);
    vkds__free(ctx, old);
  }
  put(ix, key, place);
  return true;
}

void vkds__key_index_clear(vkds__key_index *ix) {
  if (ix->slots) memset(ix->slots, 0, (size_t)ix->capacity * sizeof *ix->slots);
  ix->count = 0;
}

static int by_value(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

uint64_t vkds__quarter_mark(uint64_t *uses, uint32_t n) {
  qsort(uses, n, sizeof *uses, by_value);
  return uses[n / 4];
}

void vkds__key_index_free(const vkds_context *ctx, vkds__key_index *ix) {
  vkds__free(ctx, ix->slots);
  *ix = (vkds__key_index){0};
}
