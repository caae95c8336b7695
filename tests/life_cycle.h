/* tests/life_cycle.h: one whole use of vkds, for the tests that make each step of it
 * fail in turn (allocations, Vulkan calls): context, policy, a GLSL kernel, a buffer,
 * upload, launch, download, reductions with a GLSL operator of device data and of host
 * data (staged), destroy. */
#ifndef VKDS_TEST_LIFE_CYCLE_H
#define VKDS_TEST_LIFE_CYCLE_H

#include <stdbool.h>
#include <vkds/vkds.h>

/* Runs the life cycle with this context info (NULL: harness_info()); returns its first
 * error, having cleaned up what it made. With success, *right says whether every result
 * was right. */
vkds_result life_cycle(const vkds_context_info *info, bool *right);

#endif
