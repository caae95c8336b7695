/* tests/life_cycle.h: one whole use of vkds, for the tests that make each step of it
 * fail in turn (allocations, Vulkan calls): context, policy, a GLSL kernel, a buffer,
 * upload, launch, download, reductions with a GLSL operator of device data and of host
 * data (staged), destroy. */
#ifndef VKDS_TEST_LIFE_CYCLE_H
#define VKDS_TEST_LIFE_CYCLE_H

#include <stdbool.h>
#include <vkds/vkds.h>

/* Its kernel: data[i] = 3 * data[i] + 1 for i < n, and the argument struct it takes. */
typedef struct life_cycle_args {
  uint32_t n;
  vkds_view data;
} life_cycle_args;
extern const char life_cycle_kernel_glsl[];
extern const vkds_arg life_cycle_arg_desc[];
enum { LIFE_CYCLE_N = 1000 }; /* elements */

/* Runs the life cycle with this context info (NULL: harness_info()); returns its first
 * error, having cleaned up what it made. With success, *right says whether every result
 * was right. */
vkds_result life_cycle(const vkds_context_info *info, bool *right);

#endif
