/* lib/algorithm/sort.c: the radix sorts (vkds_sort, vkds_sort_by_key), their two paths
 * and their scratch.
 *
 * A sort is a description (vkds__alg, template SORT) that lib/algorithm/frame.c runs in
 * the three forms like any other; this file picks the path once the device is known,
 * sizes the scratch and records the dispatches:
 *   upsweep, plan  shaders/algorithm/sort_upsweep.glsl: every pass's digit histogram in
 *                  one read of the keys; which passes run (a digit that is the same for
 *                  every key skips its pass) and in which direction;
 *   onesweep       shaders/algorithm/sort_onesweep.glsl: per pass one dispatch, a chained
 *                  scan of the digit counts across tiles with decoupled look-back and a
 *                  decoupled fallback;
 *   portable       shaders/algorithm/sort_portable.glsl: per pass count, spine, scatter.
 * The path follows the scans' rule and overrides (vkds_resource_scan_path): the same
 * question (do groups that run make progress while another spins?) decides both; on
 * NVIDIA small sorts take Onesweep (path_for; vkds_resource_sort_path answers per size).
 * vkds/algorithm.h says what each path costs. */
#include "algorithm_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverlength-strings"
#include "algorithm_sort_main.h"
#include "algorithm_sort_onesweep.h"
#include "algorithm_sort_portable.h"
#include "algorithm_sort_tile.h"
#include "algorithm_sort_upsweep.h"
#pragma GCC diagnostic pop

/* The scratch's layout (sort_tile.glsl says the same). */
enum {
  AT_FALLBACKS = 64,    /* onesweep: the fallbacks' count (tests) */
  HEADER_BYTES = 16896, /* tile counters, histograms, digit starts, the plan */
  ROW_BYTES = 1024,     /* per tile and region: 256 words */
  UPSWEEP_GROUPS = 1024,
  /* CPU devices (lavapipe): every work group costs about half a millisecond to start
   * there, whatever it does, so groups take several tiles: up to CPU_TILES each, in at
   * least CPU_GROUPS groups (two threads run them by default) */
  CPU_GROUPS = 64,
  CPU_TILES = 16,
  SERIAL_SPINE = 1024, /* CPU devices: up to this many tiles, a thread scans a digit alone */
  /* lavapipe gives an invocation 65,535 loop iterations in all: an upsweep group takes
   * at most tiles / 1024 tiles (2048 at 2^32 - 1 keys of 8 bytes), 256 on CPU devices */
  DEFAULT_SPINS = 4096, /* onesweep: spins in all, per thread, before counting a tile itself */
  /* CPU devices (where onesweep runs when forced): a predecessor that is not running
   * only comes back when the OS says so, and a tile counted again costs far less than
   * spinning for it */
  CPU_SPINS = 256,
  MAX_SPINS = 16384,
};

/* P(4) */
enum { STAGE_UPSWEEP = 0, STAGE_PLAN = 1, STAGE_COUNT = 2, STAGE_SPINE = 3, STAGE_SCATTER = 4, STAGE_ONESWEEP = 5 };

/* The kernels of a sort (sort_main.glsl), one per group of stages: on lavapipe, which
 * runs every branch of a kernel under a mask, a stage pays for the code of every other
 * stage in its kernel; on GPUs each kernel gets the registers its own stages need. A
 * device compiles the first and those of its path: three (portable) or two (onesweep)
 * per key and value size. */
enum { KERNEL_UP = 0, KERNEL_COUNT = 1, KERNEL_SCATTER = 2, KERNEL_ONESWEEP = 3 };
/* a->variant: the most subgroups (bits 0-15), lane masks of four words (bit 16), argsort
 * (bit 17), whole tiles loaded straight into registers (bit 18), large tiles (bit 19,
 * big_tiles), the kernel (bits 20-21), the rank's counters in words of their own (bit 22,
 * word_counters), the portable path's large tiles (bit 23, portable_tiles) */
#define VARIANT_WIDE (1u << 16)
#define VARIANT_ARGSORT (1u << 17)
#define VARIANT_DIRECT_LOADS (1u << 18)
#define VARIANT_BIG_TILES (1u << 19)
#define VARIANT_KERNEL_SHIFT 20
#define VARIANT_WORD_COUNTERS (1u << 22)
#define VARIANT_PORTABLE_TILES (1u << 23)
#define FLAG_TEST_FALLBACK 0x10000u
#define FLAG_ONESWEEP 0x20000u

/* Onesweep's look-back words hold 30-bit counts. */
#define ONESWEEP_MAX_COUNT ((1ull << 30) - 1)

static uint32_t key_words(vkds_type t) { return vkds_type_size(t) == 8 ? 2 : 1; }
/* Whether a sort of n keys of `key` on `dev` takes the large tiles of
 * 4-byte keys (sort_tile.glsl's VKDS_TILE: 5,120 keys, 20 a thread, instead of 4,096; on
 * the portable path 6,144, portable_tiles):
 * on GPUs from 2^22 keys on the Onesweep path and 2^25 on the portable one, where a
 * tile's fixed costs (barriers, rank, look-back) spread over more keys pay; below that,
 * fewer and longer tiles leave the GPU's groups idle. Measured on an H100 (2026-11-26,
 * session 21, bench/RESULTS.md), u32 keys, GPU us, 4,096 / 5,120 keys a tile:
 *   portable  2^20 87.7 / 107.2, 2^22 216.1 / 231.7, 2^24 826.6 / 828.0,
 *             2^25 1,606 / 1,556, 2^27 6,217 / 5,947, 2^28 12,364 / 11,705
 *   Onesweep  2^20 92.5 / 96.1, 2^21 149.0 / 149.9, 2^22 250.3 / 235.3, 2^24 892.9 / 819.2
 * CPU devices keep 4,096 (not measured there). VKDS_SORT_TILE=4096|5120 forces the
 * small or the large ones (tests, measurements). */
static bool big_tiles(const vkds__device *dev, vkds_type key, uint64_t n, bool onesweep) {
  if (key_words(key) == 2) return false;
  const char *v = vkds__getenv("VKDS_SORT_TILE");
  if (v && strcmp(v, "5120") == 0) return true;
  if (v && strcmp(v, "4096") == 0) return false;
  return dev->facts.props.properties.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU &&
         n >= (onesweep ? 1ull << 22 : 1ull << 25);
}
/* The large tiles of 4-byte keys on the portable path: 6,144 keys (24 a thread), and the
 * scatter's exchange moves them through shared memory half at a time (sort_tile.glsl,
 * VKDS_SORT_HALVES), so that its shared array is 12 KiB, not 24. Why: NVIDIA's driver
 * sizes a kernel's registers and work groups an SM by the shared memory it declares (as if
 * ~48 KiB an SM were to be shared out: 2 groups of 23.5 KB got 128 registers, 3 of 15 KB
 * 80, one of 33.8 KB 168); the 24 keys then cost no more registers than 20 did (128, no
 * spills). Measured on an H200 (2026-11-29, session 40, bench/RESULTS.md), u32 keys at
 * 2^28, portable path, GPU us: 5,120-key tiles 8,820, halved exchange 8,622, and 6,144
 * keys halved 8,125 (0.78x CUB's SortKeys). Onesweep keeps 5,120 whole: halved, its
 * kernel got 80 registers and spilled (12,384 us). */
static bool portable_tiles(vkds_type key, bool big, bool onesweep) { return big && !onesweep && key_words(key) == 1; }
/* Keys a thread (sort_tile.glsl's VKDS_SORT_ITEMS), with the portable path's large tiles
 * (`halved`) or not, and the parts the exchange moves a tile in (VKDS_SORT_HALVES): the
 * one place sort.c and the kernels' defines take them from. */
static uint32_t tile_items(vkds_type key, bool big, bool halved) {
  return key_words(key) == 2 ? 8 : halved ? 24 : big ? 20 : 16;
}
static uint32_t exchange_parts(bool halved) { return halved ? 2 : 1; }
/* Keys a tile: sort_tile.glsl's VKDS_TILE (256 threads) */
static uint64_t tile_elems(vkds_type key, bool big, bool onesweep) {
  return 256ull * tile_items(key, big, portable_tiles(key, big, onesweep));
}
static uint64_t align16(uint64_t v) { return (v + 15) & ~15ull; }

/* Bytes of the scratch for n keys of `key` with values of `value` (BYTES: none) in tiles
 * of `tile` keys; argsort also keeps a copy of the keys (B). */
static uint64_t layout_bytes(uint64_t n, vkds_type key, uint64_t tile, vkds_type value, bool onesweep, bool argsort) {
  uint64_t tiles = (n + tile - 1) / tile;
  uint64_t value_bytes = value == VKDS_TYPE_BYTES ? 0 : vkds_type_size(value);
  uint64_t keys = align16(n * 4 * key_words(key));
  return HEADER_BYTES + (onesweep ? 2 : 1) * tiles * ROW_BYTES + keys + align16(n * value_bytes) + (argsort ? keys : 0);
}

static vkds_type value_type(const vkds__alg *a) { return a->input_count == 2 ? a->inputs[1]->type : VKDS_TYPE_BYTES; }

/* ---- choosing the path ---- */

/* The most subgroups a work group of 256 can have: sized for subgroups of 8 (no smaller
 * on the devices that vary it, such as Intel's), or the device's own when smaller. */
static uint32_t max_subgroups(const vkds__device *dev) {
  uint32_t s = dev->facts.props11.subgroupSize;
  if (s == 0 || s > 8) s = 8;
  return 256 / s;
}

/* A tile's keys in 32-bit words that pass through shared memory at once: the size of its
 * shared array (half of the portable path's large tile). */
static uint32_t tile_words(vkds_type key, bool big, bool onesweep) {
  return (uint32_t)(tile_elems(key, big, onesweep) * key_words(key) / exchange_parts(portable_tiles(key, big, onesweep)));
}

/* The shared memory the kernel declares (sort_tile.glsl): the tile's array, or the rank's
 * counters where they take more (256 words a subgroup, or 128 of two 16-bit counters),
 * and four small arrays. */
static uint32_t shared_bytes(uint32_t subgroups, vkds_type key, bool big, bool onesweep, bool word_counters) {
  uint32_t counters = (word_counters ? 256 : 128) * subgroups, tile = tile_words(key, big, onesweep);
  uint32_t words = counters > tile ? counters : tile;
  return 4 * (words + 3 * 256 + 4);
}

/* The subgroup size a sort's pipelines require for its rank's counters in words of their
 * own, or 0: two 16-bit counters a word. A subgroup ranks its keys against its own
 * histogram of the pass's 256 digits (sort_tile.glsl). In words of their own, a key's
 * count is one `atomicAdd(counter, 1)` (on NVIDIA one warp-wide ATOMS.POPC.INC), no two
 * digits share a word, and the counters can hold each digit's first slot before the rank,
 * so both paths count first and rank straight into slots. Their 256 words a subgroup fit
 * the tile's shared array only where the subgroups are few and their number known when
 * the kernel is built: where the pipeline can require the device's subgroup size (under
 * SPIR-V 1.6 a driver may otherwise run a compute shader in any of its sizes) and
 * 256 x (256 / size) words fit the tile's. Else 16-bit counters, two digits a word,
 * sized for the most subgroups a group can have (max_subgroups). Measured on an H100
 * (u32 keys at 2^28, one call, 2026-11-27, session 25; bench/RESULTS.md): the portable
 * path 11,076 -> 10,444 us, Onesweep 10,860 -> 10,337. VKDS_SORT_COUNTERS=word|packed
 * overrides (tests, measurements): word where it cannot be is VKDS_ERROR_UNSUPPORTED. */
static vkds_result word_counters(const vkds__call *c, bool big, bool onesweep, uint32_t *size) {
  const vkds__device *dev = c->res->dev;
  uint32_t s = vkds__device_required_subgroup_size(dev);
  bool fits = s >= 2 && 256 * (256 / s) <= tile_words(c->a.inputs[0]->type, big, onesweep);
  const char *v = vkds__getenv("VKDS_SORT_COUNTERS");
  if (v && strcmp(v, "word") == 0 && !fits)
    return vkds__fail(dev->ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS,
                      "%s: VKDS_SORT_COUNTERS=word: device %u (%s) cannot require its subgroup size (%u) for compute "
                      "pipelines, or its subgroups' counters do not fit a tile",
                      c->a.name, dev->index, dev->facts.props.properties.deviceName, dev->facts.props11.subgroupSize);
  *size = fits && !(v && strcmp(v, "packed") == 0) ? s : 0;
  return VKDS_SUCCESS;
}

/* The rule's refinement for sorts: on NVIDIA GPUs (vkds__rule_refined), sorts of fewer
 * than 2^21 keys take Onesweep, one dispatch a pass where the portable path has three.
 * Measured on an H100 (u32 keys, GPU us, Onesweep / portable): 2026-11-26 (session 22)
 * 2^16 52.8 / 70.0, 2^17 57.2 / 71.2, 2^18 62.4 / 71.1, 2^19 70.6 / 74.2. From 2^24 keys
 * Onesweep was the rule too (2^28 10,410 / 10,690 us, session 25) until the portable
 * path's count kernel declared only the shared memory it uses and its large tiles went
 * to 6,144 keys (sort_tile.glsl): on an H200 (2026-11-29, session 40, one call,
 * bench/RESULTS.md) 2^20 86.7 / 83.1, 2^22 209.3 / 192.3, 2^24 708.9 / 636.2, 2^26
 * 2,647 / 2,105, 2^28 10,377 / 8,122 (0.79x CUB's SortKeys). Onesweep's look-back then
 * went to four tiles a load (sort_onesweep.glsl; session 41, H200): 2^19 65.5 -> 59.0
 * (portable 69.4), 2^28 10,358 -> 9,142 (portable 8,047). Measured again from 2^19 to
 * 2^24 (H200, 2026-11-29, session 42, one call, u32 / f32): 2^20 75.5 / 74.9 against
 * 83.5 / 81.1, so the line moved to 2^21; 2^21 121.5 / 118.2 against 118.8 / 116.7, 2^22
 * 185.7 / 182.1 against 193.1 / 185.8, 2^23 341.9 / 334.8 against 338.6 / 330.4, 2^24
 * 627.7 / 616.6 against 633.5 / 622.8: within 4% either way from 2^21 to 2^24. */
#define ONESWEEP_RULE_BELOW (1ull << 21)

/* The path for n elements on a device: the scans' path, refined as above, except that
 * onesweep's counts are 30 bits wide. */
static vkds_scan_path path_for(const vkds_resource *res, uint64_t n) {
  vkds_scan_path path = vkds_resource_scan_path(res);
  if (n < ONESWEEP_RULE_BELOW && vkds__rule_refined(res->dev))
    path = VKDS_SCAN_PATH_SINGLE;
  return path == VKDS_SCAN_PATH_SINGLE && n > ONESWEEP_MAX_COUNT ? VKDS_SCAN_PATH_PORTABLE : path;
}

vkds_result vkds__sort_choose(vkds__call *c) {
  const vkds__device *dev = c->res->dev;
  const char *name = dev->facts.props.properties.deviceName;
  /* (the rank pairs neighbouring lanes: subgroups of one lane cannot sort) */
  if (!vkds__subgroup_ops(dev, VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_BALLOT_BIT | VK_SUBGROUP_FEATURE_SHUFFLE_BIT) ||
      dev->facts.props11.subgroupSize < 2)
    return vkds__fail(dev->ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS,
                      "%s: sorts need subgroup ballots and shuffles in compute shaders, in subgroups of 2 lanes or more, "
                      "which device %u (%s) does not have", c->a.name, dev->index, name);
  if (c->a.count > UINT32_MAX)
    return vkds__fail(dev->ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS,
                      "%s: %llu elements are more than a sort takes (2^32 - 1)", c->a.name,
                      (unsigned long long)c->a.count);
  uint32_t limit = dev->facts.props.properties.limits.maxComputeSharedMemorySize;
  vkds_type key = c->a.inputs[0]->type;
  c->path = path_for(c->res, c->a.count);
  bool onesweep = c->path == VKDS_SCAN_PATH_SINGLE;
  bool big = big_tiles(dev, key, c->a.count, onesweep);
  uint32_t size = 0; /* (set by word_counters on success) */
  VKDS_CHECK(word_counters(c, big, onesweep, &size));
  bool words = size != 0;
  uint32_t subgroups = words ? 256 / size : max_subgroups(dev);
  c->a.subgroup_size = size;
  if (shared_bytes(subgroups, key, big, onesweep, words) > limit)
    return vkds__fail(dev->ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS,
                      "%s: sorts need %u bytes of shared memory with subgroups of %u; device %u (%s) has %u",
                      c->a.name, shared_bytes(subgroups, key, big, onesweep, words), 256 / subgroups, dev->index, name,
                      limit);
  /* the code: the shared memory's layout, and one word of lane masks where subgroups
   * have at most 32 lanes (the device's subgroupSize is the most it uses); the path is
   * a parameter. VKDS_SORT_MASKS=wide takes the four words on any device: the code of
   * subgroups of 64 lanes (AMD's) then runs where there is none, as in test_sort on
   * lavapipe. */
  const char *masks = vkds__getenv("VKDS_SORT_MASKS");
  bool wide = dev->facts.props11.subgroupSize > 32 || (masks && strcmp(masks, "wide") == 0);
  /* How a whole tile reaches its threads' registers: 16 bytes a load in memory order,
   * handed round through shared memory, or each item loaded by the thread that ranks it
   * (4 bytes a load, consecutive lanes on consecutive keys, no shared memory and no two
   * barriers). Measured (bench/RESULTS.md, 2026-11-25): on an H100 the direct loads were
   * 0.85x as fast (2^28 u32 keys 17.5 against 20.5 G keys/s), on lavapipe 1.07x: the
   * scans' rule, shared on GPUs and direct on CPU devices; VKDS_SORT_LOADS=shared|direct
   * overrides it. Measured again with the word counters (2026-11-27, session 25, one
   * call): direct 10,403 against 10,510 us for keys (1.01x), 14,354 against 14,107 for
   * pairs (0.98x): left as it was. */
  const char *loads = vkds__getenv("VKDS_SORT_LOADS");
  bool direct = loads && strcmp(loads, "direct") == 0 ? true
                : loads && strcmp(loads, "shared") == 0 ? false
                : dev->facts.props.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
  c->a.variant = subgroups | (wide ? VARIANT_WIDE : 0) | (c->a.elem == VKDS__ELEM_INDEX ? VARIANT_ARGSORT : 0) |
                 (direct ? VARIANT_DIRECT_LOADS : 0) | (big ? VARIANT_BIG_TILES : 0) |
                 (words ? VARIANT_WORD_COUNTERS : 0) | (portable_tiles(key, big, onesweep) ? VARIANT_PORTABLE_TILES : 0) |
                 (uint32_t)KERNEL_UP << VARIANT_KERNEL_SHIFT;
  return VKDS_SUCCESS;
}

/* Keys a tile of a chosen call (vkds__sort_choose) */
static uint64_t call_tile(const vkds__call *c) {
  return tile_elems(c->a.inputs[0]->type, (c->a.variant & VARIANT_BIG_TILES) != 0, c->path == VKDS_SCAN_PATH_SINGLE);
}

uint64_t vkds__sort_scratch_bytes(const vkds__call *c) {
  return layout_bytes(c->a.count, c->a.inputs[0]->type, call_tile(c), value_type(&c->a),
                      c->path == VKDS_SCAN_PATH_SINGLE, c->a.elem == VKDS__ELEM_INDEX);
}

/* upsweep and plan, then each pass's count, spine and scatter (Onesweep: one) */
uint32_t vkds__sort_dispatches(vkds_type key) { return 2 + 3 * 4 * key_words(key); }

uint64_t vkds__sort_scratch_bound(uint64_t count) {
  /* (the smaller tiles: the more of them) */
  uint64_t narrow = layout_bytes(count, VKDS_U32, tile_elems(VKDS_U32, false, true), VKDS_U64, true, true) +
                    vkds__args_room(vkds__sort_dispatches(VKDS_U32));
  uint64_t wide = layout_bytes(count, VKDS_U64, tile_elems(VKDS_U64, false, true), VKDS_U64, true, true) +
                  vkds__args_room(vkds__sort_dispatches(VKDS_U64));
  return narrow > wide ? narrow : wide;
}

/* The scratch of a sort of `count` keys on `res`, as vkds__sort_choose will lay it out,
 * and room for the launch arguments of the recording form's dispatches where they spill. */
static uint64_t scratch_on(const vkds_resource *res, uint64_t count, vkds_type key, vkds_type value, bool argsort) {
  bool onesweep = path_for(res, count) == VKDS_SCAN_PATH_SINGLE;
  return layout_bytes(count, key, tile_elems(key, big_tiles(res->dev, key, count, onesweep), onesweep), value, onesweep,
                      argsort) +
         vkds__args_room(vkds__sort_dispatches(key));
}

uint64_t vkds_sort_scratch_bytes(const vkds_resource *res, uint64_t count, vkds_type key_type, vkds_type value_type) {
  if (!res || vkds_type_size(key_type) < 4 || vkds_type_size(key_type) > 8) return 0;
  if (value_type != VKDS_TYPE_BYTES && (vkds_type_size(value_type) < 4 || vkds_type_size(value_type) > 8)) return 0;
  /* past what a sort takes, no buffer holds it (the sizes wrapped: found by a
   * hostile-input probe) */
  if (count > UINT32_MAX) return UINT64_MAX;
  return scratch_on(res, count, key_type, value_type, false);
}

vkds_scan_path vkds_resource_sort_path(const vkds_resource *res, uint64_t count) {
  return res ? path_for(res, count) : VKDS_SCAN_PATH_DEFAULT;
}

uint64_t vkds_argsort_scratch_bytes(const vkds_resource *res, uint64_t count, vkds_type key_type, vkds_type index_type) {
  if (!res || vkds_type_size(key_type) < 4 || vkds_type_size(key_type) > 8) return 0;
  if (index_type != VKDS_I32 && index_type != VKDS_U32 && index_type != VKDS_I64 && index_type != VKDS_U64) return 0;
  if (count > UINT32_MAX) return UINT64_MAX;
  return scratch_on(res, count, key_type, index_type, true);
}

/* ---- the kernel's source ---- */

/* Every atomic is relaxed and the module stays on the GLSL450 memory model, as the
 * scans' (scan.c says why). */
const char *vkds__sort_preamble(const vkds__alg *a) {
  (void)a;
  return "#extension GL_KHR_shader_subgroup_basic : require\n"
         "#extension GL_KHR_shader_subgroup_ballot : require\n"
         "#extension GL_KHR_shader_subgroup_shuffle : require\n"
         "#extension GL_KHR_memory_scope_semantics : require\n"
         "#extension GL_EXT_control_flow_attributes : require\n";
}

void vkds__sort_defines(const vkds__alg *a, char *buf, size_t cap) {
  bool big = (a->variant & VARIANT_BIG_TILES) != 0, halved = (a->variant & VARIANT_PORTABLE_TILES) != 0;
  snprintf(buf, cap,
           "#define VKDS_SORT_SUBGROUPS %u\n#define VKDS_SORT_WIDE_SUBGROUPS %d\n#define VKDS_SORT_KERNEL %u\n"
           "#define VKDS_SORT_ARGSORT %d\n#define VKDS_SORT_DIRECT_LOADS %d\n#define VKDS_SORT_BIG_TILES %d\n"
           "#define VKDS_SORT_WORD_COUNTERS %d\n#define VKDS_SORT_ITEMS %u\n#define VKDS_SORT_HALVES %u\n",
           a->variant & 0xffff, (a->variant & VARIANT_WIDE) != 0, a->variant >> VARIANT_KERNEL_SHIFT & 3,
           (a->variant & VARIANT_ARGSORT) != 0, (a->variant & VARIANT_DIRECT_LOADS) != 0,
           big, (a->variant & VARIANT_WORD_COUNTERS) != 0, tile_items(a->inputs[0]->type, big, halved),
           exchange_parts(halved));
}

const char *vkds__sort_template(const vkds__alg *a, uint32_t part) {
  static const char *const middle[] = {vkds_template_sort_upsweep, vkds_template_sort_portable,
                                       vkds_template_sort_portable, vkds_template_sort_onesweep};
  switch (part) {
  case 0: return vkds_template_sort_tile;
  case 1: return middle[a->variant >> VARIANT_KERNEL_SHIFT & 3];
  case 2: return vkds_template_sort_main;
  default: return NULL;
  }
}

/* The kernel of `which` for the call: the same walk as the call's own (so the same
 * parameters), another template. */
static vkds_result stage_kernel(vkds__call *c, uint32_t which, vkds_kernel **out) {
  if (which == KERNEL_UP) {
    *out = c->kernel;
    return VKDS_SUCCESS;
  }
  vkds__alg a = c->a;
  a.variant = (a.variant & ~(3u << VARIANT_KERNEL_SHIFT)) | which << VARIANT_KERNEL_SHIFT;
  vkds__gen g;
  /* the same leaves, placed as the call's are (bound leaves: the same alignment) */
  vkds_result r = vkds__gen_build(&g, &a, c->res, false, c->gen.aligned);
  if (r == VKDS_SUCCESS) vkds__gen_aligned(&g, c->gen.aligned);
  if (r == VKDS_SUCCESS) r = vkds__alg_kernel(c->res->dev->ctx, &g, &a, false, out);
  vkds__gen_free(&g);
  return r;
}

/* ---- recording ---- */

/* Onesweep's spins (in all, per thread) before its group counts a tile it waits for
 * itself: VKDS_SORT_SPINS, a knob for tests and tuning (0: fall back at the first word
 * not there; -1: also, every tile counts its predecessor once whatever it finds there,
 * so that tests see fallbacks for certain). */
static uint32_t spins(const vkds__device *dev, uint64_t *flags) {
  int64_t n;
  if (!vkds__getenv_int("VKDS_SORT_SPINS", -1, INT32_MAX, &n))
    return dev->facts.props.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? CPU_SPINS : DEFAULT_SPINS;
  if (n == -1) *flags |= FLAG_TEST_FALLBACK;
  return n < 0 ? 0 : n > MAX_SPINS ? MAX_SPINS : (uint32_t)n;
}

/* How many of `units` (tiles, digits) a work group takes: one on GPUs; on CPU devices
 * enough for CPU_GROUPS groups, at most CPU_TILES (lavapipe's loop budget). */
static uint64_t per_group(const vkds__device *dev, uint64_t units) {
  if (dev->facts.props.properties.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU) return 1;
  uint64_t per = (units + CPU_GROUPS - 1) / CPU_GROUPS;
  return per < 1 ? 1 : per > CPU_TILES ? CPU_TILES : per;
}

static vkds_result dispatch(vkds__call *c, VkCommandBuffer cmd, vkds_kernel *k, uint64_t groups) {
  return vkds__alg_dispatch(c, cmd, k, &(vkds_launch_info){.global = {256 * groups}, .args = &c->gen.args});
}

vkds_result vkds__sort_record(vkds__call *c, VkCommandBuffer cmd) {
  const vkds__device *dev = c->res->dev;
  uint64_t *p = c->gen.args.p;
  uint64_t n = p[VKDS__P_COUNT];
  if (n == 0) return VKDS_SUCCESS;
  vkds_type key = c->a.inputs[0]->type;
  bool onesweep = c->path == VKDS_SCAN_PATH_SINGLE;
  /* every kernel first, so that a source that does not build records nothing (their
   * pipelines are made at their first dispatch: a driver's refusal there leaves the
   * dispatches before it recorded, algorithm.h's vkds_cmd says so) */
  vkds_kernel *up = c->kernel, *count = NULL, *scatter = NULL;
  if (onesweep) {
    VKDS_CHECK(stage_kernel(c, KERNEL_ONESWEEP, &scatter));
  } else {
    VKDS_CHECK(stage_kernel(c, KERNEL_COUNT, &count));
    VKDS_CHECK(stage_kernel(c, KERNEL_SCATTER, &scatter));
  }
  uint64_t tile = call_tile(c), tiles = (n + tile - 1) / tile;
  const vkds_view *s = &c->scan_scratch;
  p[2] = vkds_buffer_address(s->buffer) + s->offset;
  p[3] = tiles;
  uint64_t flags = onesweep ? FLAG_ONESWEEP : 0;
  const VkPipelineStageFlags compute = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
  const VkAccessFlags rw = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  /* counters and histograms (and onesweep's states) start at zero, after whatever used
   * the scratch before */
  vkds__cmd_barrier(dev, cmd, compute | VK_PIPELINE_STAGE_TRANSFER_BIT, rw | VK_ACCESS_TRANSFER_WRITE_BIT,
                    VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
  dev->vk.vkCmdFillBuffer(cmd, s->buffer->vk, s->buffer->offset + s->offset,
                          HEADER_BYTES + (onesweep ? 2 * tiles * ROW_BYTES : 0), 0);
  vkds__cmd_barrier(dev, cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, compute, rw);
  p[4] = STAGE_UPSWEEP | flags;
  p[5] = tiles < UPSWEEP_GROUPS ? tiles : UPSWEEP_GROUPS;
  if (dev->facts.props.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU && p[5] > CPU_GROUPS) {
    uint64_t few = (tiles + 255) / 256; /* at most 256 tiles a group */
    p[5] = few > CPU_GROUPS ? few : CPU_GROUPS;
  }
  VKDS_CHECK(dispatch(c, cmd, up, p[5]));
  vkds__cmd_barrier(dev, cmd, compute, VK_ACCESS_SHADER_WRITE_BIT, compute, rw);
  p[4] = STAGE_PLAN | flags;
  VKDS_CHECK(dispatch(c, cmd, up, 1));
  uint32_t spin = spins(dev, &flags);
  uint64_t per = per_group(dev, tiles), groups = (tiles + per - 1) / per;
  /* spine groups take digits (rounds of 1024 tiles each): on CPU devices as many as keep
   * a group to 1024 rounds (a round costs about 40 of lavapipe's loop budget) */
  uint64_t digits = 1, rounds = (tiles + 1023) / 1024;
  if (dev->facts.props.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU)
    while (digits < 256 && 2 * digits * rounds <= 1024) digits *= 2;
  for (uint32_t pass = 0; pass < 4 * key_words(key); ++pass) {
    vkds__cmd_barrier(dev, cmd, compute, VK_ACCESS_SHADER_WRITE_BIT, compute, rw);
    if (onesweep) {
      p[4] = STAGE_ONESWEEP | pass << 8 | flags;
      p[5] = spin;
      p[6] = per;
      VKDS_CHECK(dispatch(c, cmd, scatter, groups));
      continue;
    }
    p[4] = STAGE_COUNT | pass << 8 | flags;
    p[5] = per;
    VKDS_CHECK(dispatch(c, cmd, count, groups));
    vkds__cmd_barrier(dev, cmd, compute, VK_ACCESS_SHADER_WRITE_BIT, compute, rw);
    p[4] = STAGE_SPINE | pass << 8 | flags;
    p[5] = digits;
    p[6] = digits == 256 && tiles <= SERIAL_SPINE; /* one group: each thread its digit */
    VKDS_CHECK(dispatch(c, cmd, count, (256 + digits - 1) / digits));
    vkds__cmd_barrier(dev, cmd, compute, VK_ACCESS_SHADER_WRITE_BIT, compute, rw);
    p[4] = STAGE_SCATTER | pass << 8 | flags;
    p[5] = per;
    VKDS_CHECK(dispatch(c, cmd, scatter, groups));
  }
  return VKDS_SUCCESS;
}

/* ---- the descriptions and the public functions ---- */

static vkds_result describe(const char *name, const vkds_seq *keys, const vkds_seq *values, bool by_key,
                            vkds_sort_order order, vkds__alg *a, bool argsort) {
  *a = (vkds__alg){.name = name, .template_kind = VKDS__TEMPLATE_SORT, .input_count = by_key ? 2 : 1,
                   .inputs = {keys, values}, .count = keys ? keys->count : 0, .elem = VKDS__ELEM_COPY,
                   .elem_type = keys ? keys->type : VKDS_TYPE_BYTES};
  if (argsort) a->elem = VKDS__ELEM_INDEX;
  const vkds_seq *seqs[2] = {keys, values};
  for (int k = 0; k < (by_key ? 2 : 1); ++k) {
    const char *what = k ? (argsort ? "indices" : "values") : "keys";
    if (!seqs[k]) return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: the %s are NULL", name, what);
    vkds_type t = seqs[k]->type;
    if (seqs[k]->ops && (t < VKDS_I32 || t > VKDS_F64))
      return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                        "%s: the %s have elements of type %s (%u byte%s); sorts take I32, U32, F32, I64, U64 and F64 "
                        "keys and values (records: sort their indices by key and gather each part through a "
                        "permutation view, or vkds_merge_sort a zip of 4, 8 or 16 bytes)",
                        name, what, vkds__type_name(t), seqs[k]->elem_size, seqs[k]->elem_size == 1 ? "" : "s");
  }
  if ((unsigned)order > VKDS_SORT_DESCENDING)
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: unknown order %d", name, (int)order);
  if (argsort && values->ops && values->type != VKDS_I32 && values->type != VKDS_U32 && values->type != VKDS_I64 &&
      values->type != VKDS_U64)
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "%s: the indices must be of an integer type (I32, U32, I64, U64)", name);
  if (argsort && keys && values->ops && keys->count && keys->count - 1 > vkds__index_max(values->type))
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "%s: the indices' %s elements cannot hold the indices of %llu keys", name,
                      vkds__type_name(values->type), (unsigned long long)keys->count);
  if (keys && values && keys->count != values->count)
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "%s: the keys have %llu elements and the %s %llu", name, (unsigned long long)keys->count,
                      argsort ? "indices" : "values", (unsigned long long)values->count);
  /* P(1) (sort_tile.glsl): bit 0 descending, bits 1-2 the keys' kind */
  vkds_type t = a->elem_type;
  uint32_t kind = t == VKDS_I32 || t == VKDS_I64 ? 1 : t == VKDS_F32 || t == VKDS_F64 ? 2 : 0;
  a->value[0] = (unsigned char)((order == VKDS_SORT_DESCENDING) | kind << 1);
  a->has_value = true;
  return VKDS_SUCCESS;
}

vkds_result vkds_sort(vkds_policy *p, const vkds_seq *keys, vkds_sort_order order) {
  vkds__alg a;
  VKDS_CHECK_P(p, describe("vkds_sort", keys, NULL, false, order, &a, false));
  return vkds__alg_run(p, &a);
}
vkds_result vkds_sort_async(vkds_policy *p, const vkds_seq *keys, vkds_sort_order order, vkds_submission **sub) {
  if (sub) *sub = NULL; /* (also when the arguments are refused) */
  vkds__alg a;
  VKDS_CHECK_P(p, describe("vkds_sort_async", keys, NULL, false, order, &a, false));
  return vkds__alg_run_async(p, &a, sub);
}
vkds_result vkds_cmd_sort(const vkds_cmd *c, const vkds_seq *keys, vkds_sort_order order) {
  vkds__alg a;
  VKDS_CHECK_C(c, describe("vkds_cmd_sort", keys, NULL, false, order, &a, false));
  return vkds__alg_record(c, &a, (vkds_view){0});
}

vkds_result vkds_sort_by_key(vkds_policy *p, const vkds_seq *keys, const vkds_seq *values, vkds_sort_order order) {
  vkds__alg a;
  VKDS_CHECK_P(p, describe("vkds_sort_by_key", keys, values, true, order, &a, false));
  return vkds__alg_run(p, &a);
}
vkds_result vkds_sort_by_key_async(vkds_policy *p, const vkds_seq *keys, const vkds_seq *values, vkds_sort_order order,
                                   vkds_submission **sub) {
  if (sub) *sub = NULL; /* (also when the arguments are refused) */
  vkds__alg a;
  VKDS_CHECK_P(p, describe("vkds_sort_by_key_async", keys, values, true, order, &a, false));
  return vkds__alg_run_async(p, &a, sub);
}
vkds_result vkds_cmd_sort_by_key(const vkds_cmd *c, const vkds_seq *keys, const vkds_seq *values,
                                 vkds_sort_order order) {
  vkds__alg a;
  VKDS_CHECK_C(c, describe("vkds_cmd_sort_by_key", keys, values, true, order, &a, false));
  return vkds__alg_record(c, &a, (vkds_view){0});
}

vkds_result vkds_argsort(vkds_policy *p, const vkds_seq *keys, const vkds_seq *indices, vkds_sort_order order) {
  vkds__alg a;
  VKDS_CHECK_P(p, describe("vkds_argsort", keys, indices, true, order, &a, true));
  return vkds__alg_run(p, &a);
}
vkds_result vkds_argsort_async(vkds_policy *p, const vkds_seq *keys, const vkds_seq *indices, vkds_sort_order order,
                               vkds_submission **sub) {
  if (sub) *sub = NULL; /* (also when the arguments are refused) */
  vkds__alg a;
  VKDS_CHECK_P(p, describe("vkds_argsort_async", keys, indices, true, order, &a, true));
  return vkds__alg_run_async(p, &a, sub);
}
vkds_result vkds_cmd_argsort(const vkds_cmd *c, const vkds_seq *keys, const vkds_seq *indices, vkds_sort_order order) {
  vkds__alg a;
  VKDS_CHECK_C(c, describe("vkds_cmd_argsort", keys, indices, true, order, &a, true));
  return vkds__alg_record(c, &a, (vkds_view){0});
}
