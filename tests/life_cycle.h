/* tests/life_cycle.h: one whole use of vkds, for the tests that make each step of it
 * fail in turn (allocations, Vulkan calls): context, policy, a GLSL kernel, a buffer,
 * upload, launch, download, reductions with a GLSL operator of device data and of host
 * data (staged), destroy. */
#ifndef VKDS_TEST_LIFE_CYCLE_H
#define VKDS_TEST_LIFE_CYCLE_H

#include <stdbool.h>
#include <vkds/vkds.h>

/* The steps after the context, on its first resource: a fixed policy, the kernel
 * data[i] = 3 * data[i] + 1, a buffer, upload, launch, download, a reduction of the
 * buffer and, with host_data, one of host memory (staged); then every object made is
 * destroyed (the context is not). Returns the first error; with success, *right says
 * whether every result was right. */
vkds_result life_cycle_steps(vkds_context *ctx, bool host_data, bool *right);

/* harness_info() with small memory: device-memory blocks of 4 MiB (a 16 MiB
 * device_memory_limit) and a staging ring of 2 x 1 MiB, which hold the cycle's 4 KB.
 * The sweeps make a few hundred contexts, and lavapipe's default 64 MiB blocks and
 * 32 MiB ring were mapped and freed with each: under ASan every map and free fills an
 * eighth of the range's size in shadow memory, half of test_faults' injected sweep. */
vkds_context_info life_cycle_info(void);

/* The whole life cycle: a context with this info (NULL: life_cycle_info()), every step
 * (host data too), destroy. Returns the first error, having cleaned up what it made;
 * with success, *right says whether every result was right. */
vkds_result life_cycle(const vkds_context_info *info, bool *right);

#endif
