/* vkds/selftest.h: proving that a resource really computes, and how fast it answers. */
#ifndef VKDS_SELFTEST_H
#define VKDS_SELFTEST_H

#include <stdbool.h>
#include <stdint.h>

#include "vkds/context.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Zero-initialised means the defaults noted on each field. */
typedef struct vkds_self_test_info {
  uint32_t count;           /* elements the kernel writes (4 bytes each); 0: 1 << 22 */
  uint32_t round_trips;     /* tiny dispatches timed for the round trip; 0: 20 */
  uint32_t fill_repeats;    /* timed fills of `count` elements (best is kept); 0: 5 */
  uint32_t max_group_count; /* split dispatches above this many work groups (to prove
                               splitting works); 0: the device's limit */
} vkds_self_test_info;

typedef struct vkds_self_test_result {
  uint32_t count;        /* elements checked */
  uint32_t dispatches;   /* dispatches one fill was split into */
  uint32_t mismatches;   /* elements with a wrong value */
  uint32_t first_bad;    /* index of the first wrong element (when mismatches > 0) */
  double round_trip_ns;  /* median submit-to-completion time of a one-group dispatch */
  double fill_ns;        /* best time of one fill: GPU timestamps when gpu_timed */
  bool gpu_timed;        /* the queue family has timestamps */
  double fill_gb_per_s;  /* count * 4 bytes / fill_ns */
} vkds_self_test_result;

/* Runs the embedded self-test kernel on `res`: fills a device buffer with a hash of each
 * index, copies it back and checks every element; times a tiny dispatch's round trip
 * and the fill. The check uses the build's embedded SPIR-V, so it proves the whole
 * glslang -> spirv-opt -> driver chain on this queue.
 * Returns VKDS_SUCCESS when every element is right, VKDS_ERROR_WRONG_RESULT when one is
 * not (out says which), VKDS_ERROR_INVALID_ARGUMENT for NULL res/out (info may be NULL),
 * or the Vulkan and memory errors. *out is filled in either of the first two cases. */
VKDS_API vkds_result vkds_resource_self_test(vkds_resource *res, const vkds_self_test_info *info,
                                             vkds_self_test_result *out);

#ifdef __cplusplus
}
#endif
#endif
