/* bench/plain_scan.h: the plain-Vulkan scan baselines of --algorithms: reduce-then-scan
 * (bench/scan3.comp, what vkds's portable scan path does) and the textbook single pass
 * with decoupled look-back (bench/scan1.comp), written without vkds, so that a path's
 * cost can be told from the algorithm's. */
#ifndef VKDS_BENCH_PLAIN_SCAN_H
#define VKDS_BENCH_PLAIN_SCAN_H

#include <stdbool.h>
#include <stdint.h>
#include <vulkan/vulkan.h>

#include "bench.h"

#define PLAIN_SCAN_SETS 16 /* descriptor sets: one per input/output pair bound */

typedef struct plain_scan {
  VkDevice dev;
  VkDescriptorSetLayout set_layout;
  VkPipelineLayout layout;
  VkShaderModule module;
  VkPipeline pipeline[2]; /* u32, f32 (the shader's IS_FLOAT) */
  VkShaderModule module1; /* scan1 */
  VkPipeline pipeline1[2];
  uint32_t items4, group; /* scan1's shape (VKDS_BENCH_SCAN1): uvec4 a thread, threads a group */
  VkBool32 rows, by_id, look_back, stash;
  uint32_t lb_words, lb_delay, lb_mode; /* look-back: status words a lane reads a round; ALU
                                           steps between polls; 0, 1 no waiting, 2 volatile */
  uint32_t lb_init;                     /* ALU steps before the look-back's first poll */
  uint32_t max_groups;    /* the device's group count in x */
  bool single_pass;       /* scan1 runs here: not on CPU devices, where its unbounded spins
                             meet lavapipe's silent cut of loops after 65,535 iterations */
  VkDescriptorPool pool;
  VkDescriptorSet sets[PLAIN_SCAN_SETS];
  bench_vk_buffer part; /* scan3: the groups' totals and carries; scan1: its state */
} plain_scan;

/* Creates the pipelines and the sets on the device of `res`. Returns 0, or 1 (every
 * handle made so far released). */
int plain_scan_open(plain_scan *s, vkds_resource *res);
void plain_scan_close(plain_scan *s);

/* Points set `set` at `bytes` bytes of input and of output (a multiple of 16). */
void plain_scan_bind(plain_scan *s, uint32_t set, VkBuffer in, VkDeviceSize in_offset, VkBuffer out,
                     VkDeviceSize out_offset, VkDeviceSize bytes);

/* Records the inclusive scan of `words` 32-bit words (a multiple of 4) of set `set`:
 * three dispatches, a global barrier before each (earlier shader and transfer writes) and
 * after the last (later shaders, transfers and the host see the output). */
void plain_scan_record(const plain_scan *s, VkCommandBuffer cmd, uint32_t set, bool is_float, uint64_t words);

/* Records the single-pass scan of the same: the state zeroed, one dispatch, barriers as
 * above. VKDS_BENCH_SCAN1 picks its shape (plain_scan.c scan1_shape). */
void plain_scan1_record(const plain_scan *s, VkCommandBuffer cmd, uint32_t set, bool is_float, uint64_t words);

#endif
