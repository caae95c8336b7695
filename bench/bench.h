/* bench/bench.h: what the benchmark modes share. */
#ifndef VKDS_BENCH_H
#define VKDS_BENCH_H

#include <stdbool.h>
#include <stdint.h>
#include <vkds/vkds.h>
#include <vulkan/vulkan.h>

/* Options every mode may use. */
typedef struct bench_options {
  uint32_t count; /* elements, submissions or repetitions; 0: the mode's default */
  uint32_t devices_per_physical; /* vkds_context_info.devices_per_physical */
  /* --algorithms */
  uint32_t max_log2;    /* the largest size, 2^max_log2 elements; 0: the mode's default */
  uint32_t min_log2;    /* the smallest size measured (the round trips stay at 2^10); 0: 10 */
  bool json;            /* also print one JSON object per row */
  const char *cub_path; /* cub_bench's JSON lines, the reduce baseline; NULL: none */
  const char *only;     /* comma-separated parts of the algorithm rows' names to measure; NULL: all */
  /* The info main() created the context with: --algorithms makes a context like it for
   * each forced scan path. NULL: none are made. */
  const vkds_context_info *context_info;
} bench_options;

/* A mode: gets the context and the options, returns an exit status. */
typedef int (*bench_fn)(vkds_context *ctx, const bench_options *opt);

int bench_submit(vkds_context *ctx, const bench_options *opt);
int bench_select(vkds_context *ctx, const bench_options *opt);
int bench_balance(vkds_context *ctx, const bench_options *opt);
int bench_balance_devices(vkds_context *ctx, const bench_options *opt);
int bench_balance_cpu(vkds_context *ctx, const bench_options *opt);
int bench_launch(vkds_context *ctx, const bench_options *opt);
int bench_bandwidth(vkds_context *ctx, const bench_options *opt);
int bench_algorithms(vkds_context *ctx, const bench_options *opt);
/* Whether each comma-separated part of --only names an algorithm of --algorithms; if
 * not, says so on stderr (with the names there are) and returns false. Needs no device:
 * vkds-bench checks it before it makes a context. */
bool bench_algorithms_only_ok(const char *only);

/* A plain-Vulkan buffer with its own memory, for the baselines. */
typedef struct bench_vk_buffer {
  VkDevice dev;
  VkBuffer buffer;
  VkDeviceMemory memory;
  void *mapped; /* when host-visible */
} bench_vk_buffer;

/* Creates one of `size` bytes in the first memory type that has every `want` flag and
 * none of `avoid` (then, failing that, in any type with `want`); maps it when
 * host-visible. Returns 0 on success. */
int bench_vk_buffer_create(vkds_resource *res, VkDeviceSize size, VkBufferUsageFlags usage, VkMemoryPropertyFlags want,
                           VkMemoryPropertyFlags avoid, bench_vk_buffer *out);
void bench_vk_buffer_destroy(bench_vk_buffer *b);

/* Records a global memory barrier: the writes of `src` stages (compute shaders,
 * transfers) made visible to what `dst` stages (compute shaders, transfers, the host)
 * do next. */
void bench_global_barrier(VkCommandBuffer cmd, VkPipelineStageFlags src, VkPipelineStageFlags dst);

/* Monotonic time in nanoseconds. */
uint64_t bench_now_ns(void);
/* Whether a switch in the environment is on: set, not empty, not "0" (VKDS_BENCH_TRACE
 * =0 turned tracing on; a CLI probe). */
bool bench_env_on(const char *name);
/* The last error message, less the "<result text>: " it starts with (the result `r`'s),
 * so that a line printing both does not say the same thing twice (a CLI probe). */
const char *bench_error_detail(vkds_result r);
/* Sorts `n` samples and returns the median. */
double bench_median(double *samples, uint32_t n);

#endif
