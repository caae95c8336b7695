/* lib/algorithm/msort.c: the comparison sort (vkds_merge_sort): a stable merge sort by a
 * GLSL comparator, for what the radix sort does not order (any strict weak order over the
 * elements of a numeric sequence: by a part of the bits, by absolute value, descending
 * with ties kept, ...). A description (template MSORT, shaders/algorithm/msort.glsl) that
 * lib/algorithm/frame.c runs in the three forms; this file sizes the scratch and records
 * the stages:
 *   tiles   each work group sorts 1024 elements in shared memory (insertion sorts of 4,
 *           then merges of runs of 4, 8, ..., 512);
 *   merges  ceil(log2(tiles)) passes, each merging pairs of runs into runs twice as long
 *           (merge path): a partition dispatch finds where each work group's 2048
 *           outputs start (a binary search a group, into the scratch; small sorts'
 *           groups search for themselves), then every group loads its parts of both
 *           runs into shared memory and merges them there.
 * The data moves between the sequence (S) and a copy of its size in the scratch (A),
 * each pass the other way; the tiles go where an even number of passes ends in S. */
#include "algorithm_internal.h"

#include <stdlib.h>

enum { TILE = 1024, MERGE_OUT = 2048 /* outputs a work group of a merge pass (msort.glsl) */ };
#define STAGE_FROM_A 0x100u
#define STAGE_IN_PLACE 0x200u
#define STAGE_PARTITION 0x400u
#define STAGE_SEARCH_IN_GROUP 0x800u

static uint64_t tiles_of(uint64_t n) { return (n + TILE - 1) / TILE; }
/* The tiles' dispatch, 256 threads a tile, runs in the 32-bit work-item range (the
 * kernel's index math is 32-bit there: msort.glsl's vkds_global_id()): 2^32 - 1 threads
 * at most, so 2^34 - 1024 elements. Past that the launch refused the call as
 * VKDS_ERROR_ND_RANGE, naming a range type the caller never chose, and only after the
 * scratch (the data's size again) was made (a large-sizes probe). */
#define MAX_COUNT ((uint64_t)(UINT32_MAX / 256) * TILE)
static uint64_t merge_groups(uint64_t n) { return (n + MERGE_OUT - 1) / MERGE_OUT; }

/* Whether a pass's groups find their ends themselves (the search's latency idles the
 * group) instead of a partition dispatch before it. Measured on an H100 (bench/RESULTS.md,
 * 2026-11-25), u32, with two threads searching and a barrier: for runs up to 2^16 it
 * saved a dispatch and a barrier a pass up to 2^21 elements (2^16: 52 against 68 us), and
 * lost above (2^28: 31.0 against 26.9 ms; even with runs up to 4,096 only, 28.0): a
 * partition thread's latency is hidden by many others. The groups now search both ends
 * at once by subgroup ballots (merge_group.glsl vkds_corank2: a k-ary search, no shared
 * words, no barrier): on an H200 (session 14) 2^16 sorted at 0.91-0.94x CUB's merge sort
 * against 0.78x, 2^20 at 0.65x against 0.56x; the rule's bounds were not measured again. */
static bool searches_in_group(uint64_t n, uint64_t run) { return n <= (1ull << 21) && run <= (1ull << 16); }
static uint32_t merge_passes(uint64_t n) {
  uint32_t p = 0;
  while (((uint64_t)TILE << p) < n && p < 40) ++p;
  return p;
}

/* The largest stride of a zip's tuple the merge sort takes: 16 bytes of parts laid out as
 * a std430 struct, at worst (4, 8, 4 bytes) 24. */
enum { MAX_STRIDE = 24 };

uint32_t vkds__msort_stride(const vkds_seq *data) {
  if (data->ops != &vkds_seq_zip_ops) return data->elem_size;
  uint32_t at = 0, align = 4;
  for (uint32_t k = 0; k < data->part_count; ++k) {
    uint32_t size = data->parts[k].elem_size;
    at = (at + size - 1) / size * size + size; /* std430: a scalar aligned to its size */
    if (size > align) align = size;
  }
  return (at + align - 1) / align * align;
}

/* A (count elements, to 16 bytes), then the merge passes' partition: a group's first
 * output's place in the left run, 8 bytes a group and one more (msort.glsl
 * vkds_bounds_at: the last group's read of the next one's, not used, stays in range
 * where a compiler evaluates both sides of a select) */
static uint64_t scratch_bytes(uint64_t count, uint32_t stride) {
  return ((count * stride + 15) & ~15ull) + 8 * (merge_groups(count) + 1);
}

uint64_t vkds__msort_scratch_bytes(const vkds__call *c) {
  return scratch_bytes(c->a.count, vkds__msort_stride(c->a.inputs[0]));
}

/* the tiles, then each merge pass's partition and merge */
uint32_t vkds__msort_dispatches(uint64_t count) { return 1 + 2 * merge_passes(count); }

uint64_t vkds_merge_sort_scratch_bytes(const vkds_resource *res, uint64_t count, vkds_type type) {
  if (!res || !(vkds__type_is_number(type) || type == VKDS_TYPE_COMPOSITE)) return 0;
  if (count > VKDS__ALG_MAX_SCRATCH_COUNT) return UINT64_MAX; /* (wrapped) */
  return scratch_bytes(count, type == VKDS_TYPE_COMPOSITE ? MAX_STRIDE : vkds_type_size(type)) +
         vkds__args_room(vkds__msort_dispatches(count));
}

vkds_result vkds__msort_check(const vkds__call *c) {
  const vkds__device *dev = c->res->dev;
  uint32_t need = MERGE_OUT * vkds__msort_stride(c->a.inputs[0]);
  uint32_t limit = dev->facts.props.properties.limits.maxComputeSharedMemorySize;
  if (need <= limit) return VKDS_SUCCESS;
  return vkds__fail(dev->ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS,
                    "%s: elements of %u bytes (as laid out in shared memory) need %u bytes of shared memory; device %u "
                    "has %u", c->a.name, vkds__msort_stride(c->a.inputs[0]), need, dev->index, limit);
}

static void barrier(const vkds__device *dev, VkCommandBuffer cmd) {
  vkds__cmd_barrier(dev, cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                    VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
}

vkds_result vkds__msort_record(vkds__call *c, VkCommandBuffer cmd) {
  uint64_t *p = c->gen.args.p;
  uint64_t n = p[VKDS__P_COUNT];
  if (n < 2) return VKDS_SUCCESS;
  const vkds_view *s = &c->scan_scratch;
  p[2] = vkds_buffer_address(s->buffer) + s->offset;
  uint32_t passes = merge_passes(n);
  /* pass k reads A when passes - k is odd... so that the last writes S: the tiles write S
   * (in place) when the count of passes is even, else A */
  bool in_a = passes % 2 == 1;
  p[4] = in_a ? 0 : STAGE_IN_PLACE;
  VKDS_CHECK(vkds__alg_dispatch(c, cmd, c->kernel,
                               &(vkds_launch_info){.global = {256 * tiles_of(n)}, .args = p}));
  /* VKDS_MSORT_PASSES=k records only the first k merge passes (a measuring aid: the
   * differences of such runs time one pass alone; the output is then not sorted) */
  uint32_t recorded = passes;
  /* the knobs' one reader: a value that is not a whole number is ignored (it read as 0
   * passes: unsorted output), as are " 0" and "+0", which strtol took (a new-user probe) */
  int64_t asked;
  if (vkds__getenv_int("VKDS_MSORT_PASSES", 0, INT32_MAX, &asked) && asked < (int64_t)passes) recorded = (uint32_t)asked;
  for (uint32_t k = 1; k <= recorded; ++k) {
    /* the partition first (a thread a group, its search's latency hidden by the others'),
     * unless the pass is short enough for the groups to search themselves */
    barrier(c->res->dev, cmd);
    bool in_group = searches_in_group(n, (uint64_t)TILE << (k - 1));
    if (!in_group) {
      p[4] = k | (in_a ? STAGE_FROM_A : 0) | STAGE_PARTITION;
      VKDS_CHECK(vkds__alg_dispatch(c, cmd, c->kernel, &(vkds_launch_info){.global = {merge_groups(n)}, .args = p}));
      barrier(c->res->dev, cmd);
    }
    p[4] = k | (in_a ? STAGE_FROM_A : 0) | (in_group ? STAGE_SEARCH_IN_GROUP : 0);
    VKDS_CHECK(vkds__alg_dispatch(c, cmd, c->kernel, &(vkds_launch_info){.global = {256 * merge_groups(n)}, .args = p}));
    in_a = !in_a;
  }
  return VKDS_SUCCESS;
}

vkds_result vkds__check_compared(const char *name, const vkds_seq *const *s, const char *const *what, uint32_t n) {
  for (uint32_t k = 0; k < n; ++k) /* (the frame names what is wrong with those) */
    if (!s[k]->ops || (s[k]->ops == &vkds_seq_zip_ops && !s[k]->parts)) return VKDS_SUCCESS;
  for (uint32_t k = 0; k < n; ++k) {
    bool zip = s[k]->ops == &vkds_seq_zip_ops;
    if (!zip && s[k]->type == VKDS_TYPE_COMPOSITE)
      return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                        "%s: %s: a view of tuples; records are compared as a zip itself, not a view of one (copy "
                        "the view into a zip of buffers first)", name, what[k]);
    if (!zip && !vkds__type_is_number(s[k]->type))
      return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                        "%s: %s: elements of type %s; comparators take I32, U32, F32, I64, U64, F64 and zips of them",
                        name, what[k], vkds__type_name(s[k]->type));
    bool numeric_parts = zip;
    for (uint32_t j = 0; zip && j < s[k]->part_count; ++j)
      numeric_parts = numeric_parts && vkds__type_is_number(s[k]->parts[j].type);
    if (zip && (!numeric_parts || (s[k]->elem_size != 4 && s[k]->elem_size != 8 && s[k]->elem_size != 16)))
      return vkds__fail(NULL, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS,
                        "%s: %s: a zip of %u bytes%s; comparators take zips of numeric parts of 4, 8 or 16 bytes in "
                        "all", name, what[k], s[k]->elem_size, numeric_parts ? "" : " (a part is not numeric)");
  }
  for (uint32_t k = 1; k < n; ++k) {
    const vkds_seq *x = s[0], *y = s[k];
    if (x->type != y->type || x->part_count != y->part_count)
      return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                        "%s: %s (%s%s) and %s (%s%s) must have one element type", name, what[0],
                        vkds__type_name(x->type), x->ops == &vkds_seq_zip_ops ? ", a zip" : "", what[k],
                        vkds__type_name(y->type), y->ops == &vkds_seq_zip_ops ? ", a zip" : "");
    for (uint32_t j = 0; x->ops == &vkds_seq_zip_ops && j < x->part_count; ++j)
      if (x->parts[j].type != y->parts[j].type)
        return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                          "%s: the zips' parts must have the same types: part %u is %s in %s, %s in %s", name, j,
                          vkds__type_name(x->parts[j].type), what[0], vkds__type_name(y->parts[j].type), what[k]);
  }
  return VKDS_SUCCESS;
}

static vkds_result describe(const char *name, const vkds_seq *data, const char *less, vkds__alg *a) {
  *a = (vkds__alg){.name = name, .template_kind = VKDS__TEMPLATE_MSORT, .input_count = 1, .inputs = {data},
                   .count = data ? data->count : 0, .elem = VKDS__ELEM_GLSL, .glsl = less,
                   .elem_type = data ? data->type : VKDS_TYPE_BYTES};
  if (!data) return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: the sequence is NULL", name);
  if (!less) return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: the comparator is NULL", name);
  if (data->ops && data->count > MAX_COUNT)
    return vkds__fail(NULL, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS,
                      "%s: %llu elements are more than a merge sort takes (2^34 - 1024)", name,
                      (unsigned long long)data->count);
  const char *what = "the data";
  return vkds__check_compared(name, &data, &what, 1);
}

vkds_result vkds_merge_sort(vkds_policy *p, const vkds_seq *data, const char *less) {
  vkds__alg a;
  VKDS_CHECK_P(p, describe("vkds_merge_sort", data, less, &a));
  return vkds__alg_run(p, &a);
}
vkds_result vkds_merge_sort_async(vkds_policy *p, const vkds_seq *data, const char *less, vkds_submission **sub) {
  if (sub) *sub = NULL; /* (also when the arguments are refused) */
  vkds__alg a;
  VKDS_CHECK_P(p, describe("vkds_merge_sort_async", data, less, &a));
  return vkds__alg_run_async(p, &a, sub);
}
vkds_result vkds_cmd_merge_sort(const vkds_cmd *c, const vkds_seq *data, const char *less) {
  vkds__alg a;
  VKDS_CHECK_C(c, describe("vkds_cmd_merge_sort", data, less, &a));
  return vkds__alg_record(c, &a, (vkds_view){0});
}
