/* lib/algorithm/scan.c: the scans (inclusive, exclusive, and their transform forms),
 * their two paths and the rule that picks one per device.
 *
 * A scan is a description (vkds__alg, template SCAN) that lib/algorithm/frame.c runs in
 * the three forms like any other; this file chooses the path once the device is known
 * (the path is part of the kernel's signature), sizes the scratch and records the
 * dispatches:
 *   single pass  shaders/algorithm/scan_single.glsl: one dispatch, a chained scan with
 *                decoupled look-back that falls back to reducing a stalled tile itself
 *                (it needs subgroup ballots and 64-bit buffer atomics);
 *                For 4-byte integers under plus, multiplies, min, max or a bitwise
 *                operator, where any grouping gives the same bits, the single pass
 *                is the textbook chained scan in larger tiles instead
 *                (shaders/algorithm/scan_chained.glsl);
 *   portable     shaders/algorithm/scan_portable.glsl: reduce-then-scan, three
 *                dispatches (one when the data fits one group's share).
 * Both share the tile (scan_tile.glsl) and are repeatable for floats; algorithm.h says
 * which device gets which path and what each costs. */
#include "algorithm_internal.h"

#include <stdlib.h>
#include <string.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverlength-strings"
#include "algorithm_scan_chained.h"
#include "algorithm_scan_portable.h"
#include "algorithm_scan_single.h"
#include "algorithm_scan_tile.h"
#pragma GCC diagnostic pop

enum {
  HEADER_BYTES = 64,     /* two carry slots, the tile counter, the fallback count */
  GROUP_BYTES = 16,      /* portable: one value per group */
  STATE_WORD_BYTES = 24, /* single: per tile and 32-bit word of a value, three flagged 64-bit words (A, B, R planes) */
  WIDE_STATE_BYTES = 72, /* single: the most per tile (a segmented scan's 8-byte pairs, three words each) */
  MAX_GROUPS = 1024,     /* portable: the group values pass 1 scans (4 per thread) */
  /* lavapipe gives an invocation 65,535 loop iterations in all, shared by every loop of
   * the shader, and silently ends every loop once they are spent: a portable group's
   * tile costs about 25 (the loops of the subgroup steps), a single-pass group's spins
   * one each */
  MAX_TILES_PER_GROUP = 1024,
  DEFAULT_SPINS = 4096,  /* single: spins in all, waiting for tiles, before reducing them itself */
  MAX_SPINS = 16384,
};

/* The single pass in scan_chained.glsl's shape: `variant`'s values for it, beside the
 * public vkds_scan_path values (the kernel differs, so the signature must): VARIANT_CHAINED
 * plus the shape's index below. Its state: one 64-bit word a tile. */
#define VARIANT_CHAINED 0x100u
/* What codegen puts after #version for the single pass: the extensions its templates use.
 * Its atomics are all relaxed (its 64-bit words carry their own flags: scan_single.glsl). */
#define SINGLE_EXTENSIONS                                                                                        \
  "#extension GL_EXT_shader_atomic_int64 : require\n"                                                            \
  "#extension GL_KHR_memory_scope_semantics : require\n"                                                         \
  "#extension GL_KHR_shader_subgroup_basic : require\n"                                                          \
  "#extension GL_KHR_shader_subgroup_ballot : require\n"                                                         \
  "#extension GL_KHR_shader_subgroup_shuffle : require\n"
#define CHAINED_STATE_BYTES 8ull
typedef struct chained_shape {
  const char *name;     /* VKDS_SCAN_CHAINED's value */
  uint32_t threads;     /* a group */
  uint32_t runs;        /* runs of 4 elements a thread */
  const char *preamble; /* what codegen puts after #version: the extensions, the defines */
} chained_shape;
/* REREAD: the tile's values do not wait out the look-back in registers; the stores read
 * the tile again (scan_chained.glsl says why: occupancy, measured on an H100) */
#define SHAPE(t, r, extra)                                                                                       \
  {#t "x" #r, t, r,                                                                                                \
   SINGLE_EXTENSIONS "#define VKDS_SCAN_CHAINED\n#define VKDS_CH_THREADS " #t "\n#define VKDS_CH_RUNS " #r "u\n" extra}
#define REREAD "#define VKDS_CH_REREAD\n"
/* largest groups first: chained() picks one by the count and the algorithm (SHAPE_*
 * below) and walks down from it to one the device takes; 1024x5 only where
 * VKDS_SCAN_CHAINED asks (the shape of the plain-Vulkan baseline, bench/scan1.comp).
 * (Session 18 built shapes whose groups took 2 or 4 tiles each and looked back for each
 * after reducing them all, to hide the waits behind the next reductions; session 19 the
 * tile waiting in an array indexed by a value the compiler cannot prove constant, to
 * move it to local memory; session 20 tiles kept in registers in 512- and 1024-thread
 * groups (1024x5 0.89x CUB at 2^28, 512x4 0.90x) and 512x6, 256x8 and 1024x4 re-reading
 * (0.90x, 0.90x, 0.69x): all slower on an H100 than the rule's 512x8, so removed;
 * session 26 compaction in 384 x 6 and 12: bench/RESULTS.md.) */
static const chained_shape SHAPES[] = {SHAPE(1024, 5, REREAD), SHAPE(512, 8, REREAD), SHAPE(384, 10, REREAD),
                                       SHAPE(384, 8, REREAD),  SHAPE(512, 5, REREAD), SHAPE(512, 4, REREAD),
                                       SHAPE(256, 4, "")};
/* SHAPES' indices, as the rule names them */
enum { SHAPE_512X8 = 1, SHAPE_384X10, SHAPE_384X8, SHAPE_512X5, SHAPE_512X4, SHAPE_256X4 };
#undef REREAD
#undef SHAPE
#define SHAPE_COUNT (sizeof SHAPES / sizeof SHAPES[0])
static bool is_chained(uint32_t variant) {
  return variant >= VARIANT_CHAINED && variant < VARIANT_CHAINED + SHAPE_COUNT;
}
static const chained_shape *shape_of(uint32_t variant) { return &SHAPES[variant - VARIANT_CHAINED]; }
static uint64_t chained_tile(uint32_t variant) { return 4ull * shape_of(variant)->threads * shape_of(variant)->runs; }

/* P(4) flags (scan_tile.glsl) */
#define FLAG_HAS_INIT 4u
#define FLAG_EXCLUSIVE 8u
#define FLAG_CARRY_IN 16u
#define FLAG_CARRY_OUT 32u
#define FLAG_OUT_SLOT 64u
#define FLAG_TEST_FALLBACK 128u
#define FLAG_SEG_INIT 256u

/* ---- the rule ---- */

/* Whether the device can run the single pass at all: the look-back takes ballots, and
 * tiles publish through 64-bit atomics. */
static bool can_single(const vkds__device *dev) {
  return dev->enabled.int64_atomics &&
         vkds__subgroup_ops(dev, VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_BALLOT_BIT | VK_SUBGROUP_FEATURE_SHUFFLE_BIT);
}

/* The rule: the portable path on every device. The single pass moves a third less
 * memory, but measured against it on the only GPU tried (an H100, 2026-11-23, GPU time
 * of recorded calls, u32, the same run: bench/RESULTS.md) the portable path was faster
 * at every size: 12.2 against 17.5 us at 2^16, 94.6 against 113.0 at 2^24, 1,216
 * against 1,493 at 2^28 (0.73x and 0.59x CUB's InclusiveSum); the radix sorts built on
 * the same rule likewise (portable 20.9 G keys/s, Onesweep 9.7, at 2^28). Only the
 * chained shape of the single pass has since won a measurement, for the integer scans it
 * takes, on NVIDIA: rule_takes_chained(), per call. Otherwise the single pass runs where
 * it is asked for (vkds_context_info.scan_path, VKDS_SCAN_PATH) and the device can run it. */
static vkds_scan_path rule(const vkds__device *dev) {
  (void)dev; /* the place for a device's own rule, once one is measured */
  return VKDS_SCAN_PATH_PORTABLE;
}

vkds_scan_path vkds_resource_scan_path(const vkds_resource *res) {
  if (!res) return VKDS_SCAN_PATH_DEFAULT;
  const vkds__device *dev = res->dev;
  switch (dev->ctx->scan_path) {
  case VKDS_SCAN_PATH_SINGLE: return can_single(dev) ? VKDS_SCAN_PATH_SINGLE : VKDS_SCAN_PATH_PORTABLE;
  case VKDS_SCAN_PATH_PORTABLE: return VKDS_SCAN_PATH_PORTABLE;
  default: return rule(dev);
  }
}

/* The output is the input's memory (the frame allows nothing else that overlaps): the
 * same plain memory, or the same views of it (vkds__alg_in_place). */
static bool in_place(const vkds__alg *a) { return vkds__alg_in_place(a); }

/* ---- sizes ---- */

static uint64_t tile_elems(vkds_type acc) { return 256ull * (vkds_type_size(acc) == 8 ? 8 : 16); }

/* The single pass's state per tile (scan_single.glsl): the 32-bit words of one value
 * (one, two for an 8-byte value or a segmented scan's pair, three for an 8-byte pair). */
static uint64_t state_bytes(const vkds__alg *a) {
  uint64_t words = vkds_type_size(a->elem_type) == 8 ? 2 : 1;
  if (a->elem == VKDS__ELEM_BY_KEY) words++;
  return STATE_WORD_BYTES * words;
}

/* Portable: tiles per group for `tiles` tiles (one group takes up to 4 tiles alone:
 * one dispatch instead of three). */
static uint64_t tiles_per_group(uint64_t tiles) {
  if (tiles <= 4) return tiles ? tiles : 1;
  uint64_t groups = tiles < MAX_GROUPS ? tiles : MAX_GROUPS;
  return (tiles + groups - 1) / groups;
}

static uint64_t elements_of_call(const vkds__call *c) { return c->streaming ? c->chunk_elems : c->a.count; }

uint64_t vkds__scan_scratch_bytes(const vkds__call *c) {
  if (is_chained(c->a.variant)) {
    uint64_t tile = chained_tile(c->a.variant);
    return HEADER_BYTES + CHAINED_STATE_BYTES * ((elements_of_call(c) + tile - 1) / tile);
  }
  uint64_t tiles = (elements_of_call(c) + tile_elems(c->a.elem_type) - 1) / tile_elems(c->a.elem_type);
  if (c->a.variant == VKDS_SCAN_PATH_SINGLE) return HEADER_BYTES + state_bytes(&c->a) * tiles;
  uint64_t per = tiles_per_group(tiles);
  return HEADER_BYTES + GROUP_BYTES * ((tiles + per - 1) / per);
}

uint64_t vkds__scan_scratch_bound(uint64_t count) {
  /* the smaller tiles (8-byte values) with the larger states (segmented) */
  uint64_t single = HEADER_BYTES + WIDE_STATE_BYTES * ((count + 2047) / 2048);
  uint64_t portable = HEADER_BYTES + GROUP_BYTES * MAX_GROUPS;
  return single > portable ? single : portable;
}

/* ---- choosing the path for a call ---- */

/* Whether a single-pass call takes the chained shape: a scan (not by key) of 4-byte
 * integers under plus, multiplies, min, max or a bitwise operator, whose result is the
 * same bits whatever the grouping, so the look-back may combine wherever it finds
 * prefixes; compaction's flags, counted by an integer plus, included. (Not the logical
 * operators: their identity is not neutral, 0 || x is 1 for x = 3, and an element with
 * nothing before it must come out as itself.) On an H100 the textbook chained scan
 * scanned 2^28 u32 at 0.95x CUB in plain Vulkan where this file's other single pass
 * reached 0.59x (bench/RESULTS.md, 2026-11-26); vkds's reaches 0.95x in 512 x 8 tiles
 * that read their input again after the look-back (session 20).
 * Returns the variant: VARIANT_CHAINED plus the shape (by the count, below), or `path`.
 * VKDS_SCAN_CHAINED=off keeps the A/B/R single pass for them too (A/B measurements, and
 * tests of that path on integers); =1024x5 (a SHAPES name) picks the shape, for
 * measurements and tests. */
static uint32_t chained(const vkds__alg *a, const vkds__device *dev, vkds_scan_path path) {
  const char *v = vkds__getenv("VKDS_SCAN_CHAINED");
  /* by size: 256 x 4 (4,096 elements, the tile in registers) below 2^22, where larger
   * tiles leave SMs idle; then, read again, 512 x 4 below 2^23, 512 x 5 below 2^24 and
   * 512 x 8 (16,384) from there. Measured on an H100 (2026-11-26, session 20), u32 plus,
   * GPU us: 2^22 256x4 27.0, 512x4 27.1, 512x5 31.6; 2^23 42.7, 42.8, 39.9; 2^24 512x4
   * 73.2, 512x5 70.5, 512x8 71.0; 2^28 990.9, 954.9, 932.7 (CUB's InclusiveSum 886).
   * Compaction (its flags' count) takes 384 x 8 there instead, CUB's DeviceSelect group
   * (384 threads): faster for copy_if, slower for the scan. Measured on an H100
   * (2026-11-27, session 26, one call, two rounds each), GPU us, 512x8 / 384x8: u32
   * copy_if 2^24 70.4 / 70.1, 2^26 229.0 / 226.0, 2^28 862.7 / 853.6 (0.830x -> 0.840x
   * CUB); f32 copy_if 2^28 791 / 765 (0.757x -> 0.784x); u32 inclusive scan 2^24 71.0 /
   * 73.9, 2^28 935.7 / 989.7 (0.940x -> 0.889x). From 2^26 compaction takes 384 x 10:
   * (2026-11-27, session 27, one call, two rounds each), GPU us, 384x8 / 384x10: f32
   * copy_if 2^26 205.0-205.5 / 199.5, 2^27 391.7-391.8 / 377.7-379.1, 2^28 762.5-765.4 /
   * 735.3-736.0 (0.78x -> 0.81x CUB); u32 the same from 2^26 (2^28 851.0-852.4 /
   * 851.6-851.9), 2% slower at 2^24 and 2^25 (69.9 / 71.3-71.5, 121.4-121.7 /
   * 123.6-123.9). */
  bool counts = a->result == VKDS__RESULT_COUNT;
  uint32_t shape = a->count < (1ull << 22)            ? SHAPE_256X4
                   : a->count < (1ull << 23)          ? SHAPE_512X4
                   : a->count < (1ull << 24)          ? SHAPE_512X5
                   : counts && a->count >= (1ull << 26) ? SHAPE_384X10
                   : counts                           ? SHAPE_384X8
                                                      : SHAPE_512X8;
  for (uint32_t i = 0; v && i < SHAPE_COUNT; ++i)
    if (strcmp(v, SHAPES[i].name) == 0) shape = i;
  /* a group the device takes (Vulkan promises only 128 threads; vkds's other scans take
   * 256, the last shape's) */
  const VkPhysicalDeviceLimits *lim = &dev->facts.props.properties.limits;
  while (shape + 1 < SHAPE_COUNT && (SHAPES[shape].threads > lim->maxComputeWorkGroupInvocations ||
                                     SHAPES[shape].threads > lim->maxComputeWorkGroupSize[0]))
    ++shape;
  bool fits = path == VKDS_SCAN_PATH_SINGLE && !(v && strcmp(v, "off") == 0) &&
         a->elem != VKDS__ELEM_BY_KEY && a->combine == VKDS__COMBINE_OP &&
         a->op.kind >= VKDS_OP_PLUS && a->op.kind <= VKDS_OP_BIT_XOR &&
         (a->elem_type == VKDS_I32 || a->elem_type == VKDS_U32);
  return fits ? VARIANT_CHAINED + shape : (uint32_t)path;
}

/* The rule's refinement for one call: on NVIDIA GPUs, whose running work groups make
 * progress in practice, a scan the chained shape takes (chained()) of at least 2^21
 * elements runs the chained single pass, unless a path is forced (context or
 * environment). Measured on an H100 (2026-11-26, bench/RESULTS.md), u32 plus, GPU us,
 * chained against portable: 2^21 19.4 / 21.0, 2^22 25.3 / 31.0, 2^23 42.6 / 53.6, 2^24
 * 76.9 / 91.4, 2^28 1,056 / 1,166 (the shapes of chained(), session 17); below 2^21 the
 * portable path is faster (2^20 18.7 / 16.0: a few large tiles leave the GPU idle while
 * they wait). */
#define NVIDIA_VENDOR_ID 0x10deu
/* Compaction in the chained tiles (copy_if, remove_if, partition, unique: their flags'
 * count is an integer plus) takes the rule's chained path from 2^22 elements, where it
 * was measured faster on an H100 once a tile's loads were issued together (2026-11-26,
 * session 20, u32 copy_if, GPU us, chained / portable: 2^21 20.7 / 20.1, 2^22 28.5 /
 * 29.2, 2^23 41.1 / 46.6, 2^24 70.7 / 79.1, 2^26 229.0 / 260.6, 2^28 864.2 / 989.5, CUB's
 * DeviceSelect::If 714; session 18, before that change, measured it slower from 2^25). */
#define CHAINED_COMPACTION_MIN (1ull << 22)
static bool compaction_stays_portable(const vkds__alg *a) {
  return a->result == VKDS__RESULT_COUNT && a->count < CHAINED_COMPACTION_MIN;
}
#define CHAINED_RULE_MIN (1ull << 21)
bool vkds__rule_refined(const vkds__device *dev) {
  return dev->ctx->scan_path == VKDS_SCAN_PATH_DEFAULT && dev->facts.props.properties.vendorID == NVIDIA_VENDOR_ID &&
         can_single(dev);
}
static bool rule_takes_chained(const vkds__alg *a, const vkds__device *dev) {
  return vkds__rule_refined(dev) && a->count >= CHAINED_RULE_MIN && !in_place(a) && !compaction_stays_portable(a);
}

/* Whether the single pass's one dispatch, a work group a tile, stays within the 32-bit
 * work-item range its kernels are launched with: 2^32 - 1 threads, so about 2^36 4-byte
 * elements (2^35 8-byte) in the general tiles, 2^37 in the chained 512 x 8. Past that
 * the launch refused it as VKDS_ERROR_ND_RANGE, naming the kernel's range type, which
 * the caller never chose (a float scan of 2^36 + 4096 elements with VKDS_SCAN_PATH=
 * single; a large-sizes probe). */
static bool single_fits(const vkds__alg *a, uint32_t variant) {
  bool chain = is_chained(variant);
  uint64_t tile = chain ? chained_tile(variant) : tile_elems(a->elem_type);
  uint64_t threads = chain ? shape_of(variant)->threads : 256;
  return a->count / tile + (a->count % tile != 0) <= UINT32_MAX / threads;
}

vkds_result vkds__scan_choose(vkds__call *c) {
  const vkds__device *dev = c->res->dev;
  if (!vkds__subgroup_ops(dev, VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_SHUFFLE_BIT))
    return vkds__fail(dev->ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS,
                      "%s: scans need subgroup shuffles in compute shaders, which device %u (%s) does not have",
                      c->a.name, dev->index, dev->facts.props.properties.deviceName);
  vkds_scan_path path = vkds_resource_scan_path(c->res);
  /* the single pass's fallback re-reads a stalled tile's input, which in place its
   * owner may have overwritten already */
  if (in_place(&c->a)) path = VKDS_SCAN_PATH_PORTABLE;
  /* the chained tiles where the path or the rule's refinement asks for them; else `path` */
  uint32_t v = chained(&c->a, dev, rule_takes_chained(&c->a, dev) ? VKDS_SCAN_PATH_SINGLE : path);
  if (is_chained(v)) path = VKDS_SCAN_PATH_SINGLE;
  c->a.variant = is_chained(v) ? v : (uint32_t)path;
  uint64_t tiles = (c->a.count + tile_elems(c->a.elem_type) - 1) / tile_elems(c->a.elem_type);
  if (path == VKDS_SCAN_PATH_PORTABLE && tiles_per_group(tiles) > MAX_TILES_PER_GROUP)
    return vkds__fail(dev->ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS, "%s: %llu elements are more than one scan takes",
                      c->a.name, (unsigned long long)c->a.count);
  /* (the chained look-back numbers its tiles as 32-bit ints: under 2^31 of them, 2^43
   * elements and more) */
  if ((path == VKDS_SCAN_PATH_SINGLE && tiles > UINT32_MAX - 1) ||
      (is_chained(v) && (c->a.count + chained_tile(v) - 1) / chained_tile(v) > INT32_MAX) ||
      (path == VKDS_SCAN_PATH_SINGLE && !single_fits(&c->a, v)) ||
      (c->a.result == VKDS__RESULT_COUNT && c->a.count > UINT32_MAX)) /* compaction counts in 32 bits */
    return vkds__fail(dev->ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS, "%s: %llu elements are more than one scan takes",
                      c->a.name, (unsigned long long)c->a.count);
  return VKDS_SUCCESS;
}

/* The portable path moves whole tiles through shared memory (scan_tile.glsl) on GPUs:
 * on an H100 that made it 1.25x faster at 2^28 (1,633 -> 1,301 us). Not on CPU devices,
 * where each barrier and shared access is work of its own: lavapipe scanned 2^20 u32
 * 2.3x slower with it (36.3 against 15.8 ms). Not in the single pass: on the H100 it
 * made that 1.4x slower (1,682 -> 2,423 us; 66 registers a thread instead of 40, so 3
 * groups resident per SM instead of 6, which it needs to hide its look-back's waits). */
bool vkds__scan_striped_tiles(const vkds__alg *a, const vkds_resource *res) {
  if (a->template_kind != VKDS__TEMPLATE_SCAN || a->variant != VKDS_SCAN_PATH_PORTABLE) return false;
  /* VKDS_SCAN_TILES=shared|direct overrides the rule (tests run the shared tiles on
   * lavapipe, benchmarks compare) */
  const char *v = vkds__getenv("VKDS_SCAN_TILES");
  if (v && strcmp(v, "shared") == 0) return true;
  if (v && strcmp(v, "direct") == 0) return false;
  return res->dev->facts.props.properties.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU;
}

/* What codegen puts after #version: the extensions the templates use. The single
 * pass's atomics are all relaxed (its 64-bit words carry their own flags: see
 * scan_single.glsl) and the module stays on the GLSL450 memory model: under
 * `#pragma use_vulkan_memory_model` every shared-memory access is coherent, and lavapipe
 * (Mesa 22.3) then lost the shared stores of a loop's last run in the portable kernel. */
#define PORTABLE_EXTENSIONS                                                                                      \
  "#extension GL_KHR_shader_subgroup_basic : require\n"                                                          \
  "#extension GL_KHR_shader_subgroup_shuffle : require\n"
const char *vkds__scan_preamble(const vkds__alg *a, bool striped_tiles) {
  static const char portable[] = PORTABLE_EXTENSIONS;
  static const char striped[] = PORTABLE_EXTENSIONS "#define VKDS_STRIPED_TILES\n";
  static const char single[] = SINGLE_EXTENSIONS;
  if (is_chained(a->variant)) return shape_of(a->variant)->preamble;
  return a->variant == VKDS_SCAN_PATH_SINGLE ? single : striped_tiles ? striped : portable;
}

const char *vkds__scan_template(const vkds__alg *a, uint32_t part) {
  if (part == 0) return vkds_template_scan_tile;
  if (part == 1 && is_chained(a->variant)) return vkds_template_scan_chained;
  if (part == 1) return a->variant == VKDS_SCAN_PATH_SINGLE ? vkds_template_scan_single : vkds_template_scan_portable;
  return NULL;
}

/* ---- recording ---- */

/* The single pass's spins (in all, per group) before it reduces the tiles it waits for
 * itself: VKDS_SCAN_SPINS, a knob for tests and tuning (0: fall back at the first flag
 * not there; -1: also, every tile reduces its predecessor once whatever it finds there,
 * so that tests see fallbacks for certain). */
static uint32_t spins(uint64_t *flags) {
  int64_t n;
  if (!vkds__getenv_int("VKDS_SCAN_SPINS", -1, INT32_MAX, &n)) return DEFAULT_SPINS;
  if (n == -1) *flags |= FLAG_TEST_FALLBACK;
  return n < 0 ? 0 : n > MAX_SPINS ? MAX_SPINS : (uint32_t)n;
}

static vkds_result dispatch(vkds__call *c, VkCommandBuffer cmd, uint64_t groups) {
  uint64_t threads = is_chained(c->a.variant) ? shape_of(c->a.variant)->threads : 256; /* the local size */
  return vkds__alg_dispatch(c, cmd, c->kernel,
                           &(vkds_launch_info){.global = {threads * groups}, .args = &c->gen.args});
}

vkds_result vkds__scan_record(vkds__call *c, VkCommandBuffer cmd, vkds__part part, uint64_t chunk) {
  const vkds__device *dev = c->res->dev;
  uint64_t *p = c->gen.args.p;
  uint64_t n = p[VKDS__P_COUNT];
  const VkPipelineStageFlags compute = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
  const VkAccessFlags rw = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  bool compacts = c->a.result == VKDS__RESULT_COUNT;
  const vkds_view *r = &c->scan_result_view;
  if (compacts) p[3] = vkds_buffer_address(r->buffer) + r->offset; /* the count (the last element's thread writes it) */
  if (n == 0 && compacts) { /* nothing kept: the count is 0 */
    vkds__cmd_barrier(dev, cmd, compute | VK_PIPELINE_STAGE_TRANSFER_BIT, rw | VK_ACCESS_TRANSFER_WRITE_BIT,
                      VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
    dev->vk.vkCmdFillBuffer(cmd, r->buffer->vk, r->buffer->offset + r->offset, 8, 0);
    vkds__cmd_barrier(dev, cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                      compute | VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_HOST_BIT,
                      rw | VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_HOST_READ_BIT);
  }
  if (n == 0) return VKDS_SUCCESS;
  /* a streamed chunk starts from the carry the one before left in one slot and leaves
   * its own in the other; the first starts from init */
  /* a segmented scan takes init at every segment start instead (scan_tile.glsl) */
  bool segmented = c->a.elem == VKDS__ELEM_BY_KEY;
  uint64_t flags = (c->a.has_value ? (segmented ? FLAG_SEG_INIT : FLAG_HAS_INIT) : 0) |
                   (c->a.exclusive ? FLAG_EXCLUSIVE : 0);
  if (part != VKDS__PART_WHOLE) {
    if (chunk > 0) flags |= FLAG_CARRY_IN;
    if (part == VKDS__PART_CHUNK) flags |= FLAG_CARRY_OUT;
    if (chunk & 1) flags |= FLAG_OUT_SLOT;
  }
  const vkds_view *s = &c->scan_scratch;
  p[2] = vkds_buffer_address(s->buffer) + s->offset;
  bool chain = is_chained(c->a.variant);
  uint64_t tile = chain ? chained_tile(c->a.variant) : tile_elems(c->a.elem_type), tiles = (n + tile - 1) / tile;
  if (c->a.variant == VKDS_SCAN_PATH_SINGLE || chain) {
    /* tile counter, fallback count and states start at zero (after whatever used the
     * scratch before: an earlier chunk, an earlier recorded algorithm) */
    vkds__cmd_barrier(dev, cmd, compute | VK_PIPELINE_STAGE_TRANSFER_BIT, rw | VK_ACCESS_TRANSFER_WRITE_BIT,
                      VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
    dev->vk.vkCmdFillBuffer(cmd, s->buffer->vk, s->buffer->offset + s->offset + 32,
                            HEADER_BYTES - 32 + (chain ? CHAINED_STATE_BYTES : state_bytes(&c->a)) * tiles, 0);
    vkds__cmd_barrier(dev, cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, compute, rw);
    p[5] = spins(&flags);
    p[4] = flags;
    return dispatch(c, cmd, tiles);
  }
  uint64_t per = tiles_per_group(tiles), groups = (tiles + per - 1) / per;
  p[5] = per;
  if (groups > 1) {
    p[4] = flags | 0; /* each group's total */
    VKDS_CHECK(dispatch(c, cmd, groups));
    vkds__cmd_barrier(dev, cmd, compute, VK_ACCESS_SHADER_WRITE_BIT, compute, rw);
    p[4] = flags | 1; /* the totals become carries */
    VKDS_CHECK(dispatch(c, cmd, 1));
    vkds__cmd_barrier(dev, cmd, compute, VK_ACCESS_SHADER_WRITE_BIT, compute, rw);
  }
  p[4] = flags | 2; /* the scan */
  return dispatch(c, cmd, groups);
}

/* ---- the descriptions and the public functions ---- */

static vkds__alg describe(const char *name, const vkds_seq *in, const vkds_seq *out, const char *transform,
                          const vkds_op *op, const void *init, bool exclusive, bool transformed) {
  vkds__alg a = {.name = name, .template_kind = VKDS__TEMPLATE_SCAN, .input_count = 1, .inputs = {in},
                 .output = out, .in_place_allowed = true, .count = in ? in->count : 0,
                 .elem = transformed ? VKDS__ELEM_GLSL : VKDS__ELEM_COPY, .glsl = transform,
                 .elem_type = out ? out->type : VKDS_TYPE_BYTES, .combine = VKDS__COMBINE_OP,
                 .op = {.kind = VKDS_OP_PLUS}, .exclusive = exclusive};
  if (op) a.op = *op;
  if (a.op.kind == VKDS_OP_DEFAULT) a.op.kind = VKDS_OP_PLUS;
  if (init && vkds_type_size(a.elem_type) >= 1 && vkds_type_size(a.elem_type) <= 8) {
    memcpy(a.value, init, vkds_type_size(a.elem_type));
    a.has_value = true;
  }
  return a;
}

vkds_result vkds_inclusive_scan(vkds_policy *p, const vkds_seq *in, const vkds_seq *out, const vkds_op *op,
                         const void *init) {
  vkds__alg a = describe("vkds_inclusive_scan", in, out, NULL, op, init, false, false);
  return vkds__alg_run(p, &a);
}
vkds_result vkds_inclusive_scan_async(vkds_policy *p, const vkds_seq *in, const vkds_seq *out, const vkds_op *op,
                               const void *init, vkds_submission **sub) {
  if (sub) *sub = NULL; /* (also when the arguments are refused) */
  vkds__alg a = describe("vkds_inclusive_scan_async", in, out, NULL, op, init, false, false);
  return vkds__alg_run_async(p, &a, sub);
}
vkds_result vkds_cmd_inclusive_scan(const vkds_cmd *c, const vkds_seq *in, const vkds_seq *out, const vkds_op *op,
                             const void *init) {
  vkds__alg a = describe("vkds_cmd_inclusive_scan", in, out, NULL, op, init, false, false);
  return vkds__alg_record(c, &a, (vkds_view){0});
}

vkds_result vkds_transform_inclusive_scan(vkds_policy *p, const vkds_seq *in, const vkds_seq *out, const char *transform,
                                   const vkds_op *op, const void *init) {
  vkds__alg a = describe("vkds_transform_inclusive_scan", in, out, transform, op, init, false, true);
  return vkds__alg_run(p, &a);
}
vkds_result vkds_transform_inclusive_scan_async(vkds_policy *p, const vkds_seq *in, const vkds_seq *out,
                                         const char *transform, const vkds_op *op, const void *init,
                                         vkds_submission **sub) {
  if (sub) *sub = NULL; /* (also when the arguments are refused) */
  vkds__alg a = describe("vkds_transform_inclusive_scan_async", in, out, transform, op, init, false, true);
  return vkds__alg_run_async(p, &a, sub);
}
vkds_result vkds_cmd_transform_inclusive_scan(const vkds_cmd *c, const vkds_seq *in, const vkds_seq *out,
                                       const char *transform, const vkds_op *op, const void *init) {
  vkds__alg a = describe("vkds_cmd_transform_inclusive_scan", in, out, transform, op, init, false, true);
  return vkds__alg_record(c, &a, (vkds_view){0});
}

vkds_result vkds_exclusive_scan(vkds_policy *p, const vkds_seq *in, const vkds_seq *out, const vkds_op *op,
                         const void *init) {
  vkds__alg a = describe("vkds_exclusive_scan", in, out, NULL, op, init, true, false);
  return vkds__alg_run(p, &a);
}
vkds_result vkds_exclusive_scan_async(vkds_policy *p, const vkds_seq *in, const vkds_seq *out, const vkds_op *op,
                               const void *init, vkds_submission **sub) {
  if (sub) *sub = NULL; /* (also when the arguments are refused) */
  vkds__alg a = describe("vkds_exclusive_scan_async", in, out, NULL, op, init, true, false);
  return vkds__alg_run_async(p, &a, sub);
}
vkds_result vkds_cmd_exclusive_scan(const vkds_cmd *c, const vkds_seq *in, const vkds_seq *out, const vkds_op *op,
                             const void *init) {
  vkds__alg a = describe("vkds_cmd_exclusive_scan", in, out, NULL, op, init, true, false);
  return vkds__alg_record(c, &a, (vkds_view){0});
}

vkds_result vkds_transform_exclusive_scan(vkds_policy *p, const vkds_seq *in, const vkds_seq *out, const char *transform,
                                   const vkds_op *op, const void *init) {
  vkds__alg a = describe("vkds_transform_exclusive_scan", in, out, transform, op, init, true, true);
  return vkds__alg_run(p, &a);
}
vkds_result vkds_transform_exclusive_scan_async(vkds_policy *p, const vkds_seq *in, const vkds_seq *out,
                                         const char *transform, const vkds_op *op, const void *init,
                                         vkds_submission **sub) {
  if (sub) *sub = NULL; /* (also when the arguments are refused) */
  vkds__alg a = describe("vkds_transform_exclusive_scan_async", in, out, transform, op, init, true, true);
  return vkds__alg_run_async(p, &a, sub);
}
vkds_result vkds_cmd_transform_exclusive_scan(const vkds_cmd *c, const vkds_seq *in, const vkds_seq *out,
                                       const char *transform, const vkds_op *op, const void *init) {
  vkds__alg a = describe("vkds_cmd_transform_exclusive_scan", in, out, transform, op, init, true, true);
  return vkds__alg_record(c, &a, (vkds_view){0});
}

/* ---- by key: segmented scans and reduce by key ----
 *
 * The keys and values go in as one zip (scan_tile.glsl reads the key as x.p0 and the
 * value as x.p1), made here and alive for the call: the frame copies the leaves it binds
 * and reads nothing of the description after the call returns (nothing by key streams). */

typedef struct by_key {
  vkds_seq parts[2];
  vkds_seq zip;
} by_key;

/* What the frame cannot say about keys and values: their roles and their lengths. */
/* keys_out: reduce by key's (NULL: a scan by key, whose keys are not written). */
static vkds_result check_by_key(const char *name, const vkds_seq *keys, const vkds_seq *values,
                                const vkds_seq *keys_out, by_key *z) {
  const vkds_result E = VKDS_ERROR_INVALID_ARGUMENT;
  if (!keys || !values) return vkds__fail(NULL, E, VK_SUCCESS, "%s: the %s are NULL", name, keys ? "values" : "keys");
  for (int r = 0; r < 2; ++r) {
    char why[VKDS__SEQ_WHY];
    vkds_result bad = vkds__seq_validate_quiet(r ? values : keys, why);
    if (bad != VKDS_SUCCESS) return vkds__fail(NULL, bad, VK_SUCCESS, "%s: the %s: %s", name, r ? "values" : "keys", why);
  }
  if (keys->count != values->count)
    return vkds__fail(NULL, E, VK_SUCCESS, "%s: %llu keys and %llu values: they must be as many", name,
                      (unsigned long long)keys->count, (unsigned long long)values->count);
  if (!vkds__type_is_number(values->type))
    return vkds__fail(NULL, E, VK_SUCCESS, "%s: the values must be numbers (I32, U32, F32, I64, U64, F64), not %s",
                      name, vkds__type_name(values->type));
  if (!vkds__type_is_number(keys->type) && keys->type != VKDS_TYPE_COMPOSITE)
    return vkds__fail(NULL, E, VK_SUCCESS, "%s: the keys must be numbers or a zip of them, not %s", name,
                      vkds__type_name(keys->type));
  if (keys_out && keys_out->ops && keys->type == VKDS_TYPE_COMPOSITE) { /* reduce by key: a zip's keys written out */
    bool zip_of_numbers = vkds__zip_of_numbers(keys, 0);
    bool out_ok = keys_out->ops == &vkds_seq_discard_ops || vkds__zip_of_numbers(keys_out, keys->part_count);
    if (!zip_of_numbers || !out_ok)
      return vkds__fail(NULL, E, VK_SUCCESS,
                        "%s: the keys are a zip, so keys_out must be a zip of as many numeric parts (part k of each "
                        "segment's first key to its part k) or a discard view%s",
                        name, zip_of_numbers ? "" : ", and the keys' parts numbers");
  }
  z->parts[0] = *keys;
  z->parts[1] = *values;
  z->zip = vkds_seq_zip(z->parts, 2);
  return VKDS_SUCCESS;
}

static vkds_result scan_by_key(const char *name, const vkds_seq *keys, const vkds_seq *values, const vkds_seq *out,
                               const vkds_op *op, const void *init, bool exclusive, by_key *z, vkds__alg *a) {
  VKDS_CHECK(check_by_key(name, keys, values, NULL, z));
  if (!out) return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: the output is NULL", name);
  *a = describe(name, &z->zip, out, NULL, op, init, exclusive, false);
  a->elem = VKDS__ELEM_BY_KEY;
  a->in_place_allowed = false;
  return VKDS_SUCCESS;
}

static vkds_result reduce_by_key(const char *name, const vkds_seq *keys, const vkds_seq *values,
                                 const vkds_seq *keys_out, const vkds_seq *values_out, const vkds_op *op,
                                 uint64_t *count, by_key *z, vkds__alg *a) {
  if (!keys_out || !values_out)
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: the %s output is NULL", name,
                      keys_out ? "values'" : "keys'");
  VKDS_CHECK(check_by_key(name, keys, values, keys_out, z));
  *a = (vkds__alg){.name = name, .template_kind = VKDS__TEMPLATE_SCAN, .input_count = 1, .inputs = {&z->zip},
                   .output = keys_out, .output2 = values_out, .count = keys->count, .elem = VKDS__ELEM_BY_KEY,
                   .elem_type = values_out->type, .combine = VKDS__COMBINE_OP, .op = {.kind = VKDS_OP_PLUS},
                   .result = VKDS__RESULT_COUNT, .host_result = count};
  if (op) a->op = *op;
  if (a->op.kind == VKDS_OP_DEFAULT) a->op.kind = VKDS_OP_PLUS;
  return VKDS_SUCCESS;
}

vkds_result vkds_inclusive_scan_by_key(vkds_policy *p, const vkds_seq *keys, const vkds_seq *values,
                                       const vkds_seq *out, const vkds_op *op, const void *init) {
  by_key z;
  vkds__alg a;
  VKDS_CHECK_P(p, scan_by_key("vkds_inclusive_scan_by_key", keys, values, out, op, init, false, &z, &a));
  return vkds__alg_run(p, &a);
}
vkds_result vkds_inclusive_scan_by_key_async(vkds_policy *p, const vkds_seq *keys, const vkds_seq *values,
                                             const vkds_seq *out, const vkds_op *op, const void *init,
                                             vkds_submission **sub) {
  if (sub) *sub = NULL; /* (also when the arguments are refused) */
  by_key z;
  vkds__alg a;
  VKDS_CHECK_P(p, scan_by_key("vkds_inclusive_scan_by_key_async", keys, values, out, op, init, false, &z, &a));
  return vkds__alg_run_async(p, &a, sub);
}
vkds_result vkds_cmd_inclusive_scan_by_key(const vkds_cmd *c, const vkds_seq *keys, const vkds_seq *values,
                                           const vkds_seq *out, const vkds_op *op, const void *init) {
  by_key z;
  vkds__alg a;
  VKDS_CHECK_C(c, scan_by_key("vkds_cmd_inclusive_scan_by_key", keys, values, out, op, init, false, &z, &a));
  return vkds__alg_record(c, &a, (vkds_view){0});
}

vkds_result vkds_exclusive_scan_by_key(vkds_policy *p, const vkds_seq *keys, const vkds_seq *values,
                                       const vkds_seq *out, const vkds_op *op, const void *init) {
  by_key z;
  vkds__alg a;
  VKDS_CHECK_P(p, scan_by_key("vkds_exclusive_scan_by_key", keys, values, out, op, init, true, &z, &a));
  return vkds__alg_run(p, &a);
}
vkds_result vkds_exclusive_scan_by_key_async(vkds_policy *p, const vkds_seq *keys, const vkds_seq *values,
                                             const vkds_seq *out, const vkds_op *op, const void *init,
                                             vkds_submission **sub) {
  if (sub) *sub = NULL; /* (also when the arguments are refused) */
  by_key z;
  vkds__alg a;
  VKDS_CHECK_P(p, scan_by_key("vkds_exclusive_scan_by_key_async", keys, values, out, op, init, true, &z, &a));
  return vkds__alg_run_async(p, &a, sub);
}
vkds_result vkds_cmd_exclusive_scan_by_key(const vkds_cmd *c, const vkds_seq *keys, const vkds_seq *values,
                                           const vkds_seq *out, const vkds_op *op, const void *init) {
  by_key z;
  vkds__alg a;
  VKDS_CHECK_C(c, scan_by_key("vkds_cmd_exclusive_scan_by_key", keys, values, out, op, init, true, &z, &a));
  return vkds__alg_record(c, &a, (vkds_view){0});
}

vkds_result vkds_reduce_by_key(vkds_policy *p, const vkds_seq *keys, const vkds_seq *values, const vkds_seq *keys_out,
                               const vkds_seq *values_out, const vkds_op *op, uint64_t *count) {
  by_key z;
  vkds__alg a;
  VKDS_CHECK_P(p, reduce_by_key("vkds_reduce_by_key", keys, values, keys_out, values_out, op, count, &z, &a));
  return vkds__alg_run(p, &a);
}
vkds_result vkds_reduce_by_key_async(vkds_policy *p, const vkds_seq *keys, const vkds_seq *values,
                                     const vkds_seq *keys_out, const vkds_seq *values_out, const vkds_op *op,
                                     uint64_t *count, vkds_submission **sub) {
  if (sub) *sub = NULL; /* (also when the arguments are refused) */
  by_key z;
  vkds__alg a;
  VKDS_CHECK_P(p, reduce_by_key("vkds_reduce_by_key_async", keys, values, keys_out, values_out, op, count, &z, &a));
  return vkds__alg_run_async(p, &a, sub);
}
vkds_result vkds_cmd_reduce_by_key(const vkds_cmd *c, const vkds_seq *keys, const vkds_seq *values,
                                   const vkds_seq *keys_out, const vkds_seq *values_out, const vkds_op *op,
                                   vkds_view count) {
  by_key z;
  vkds__alg a;
  VKDS_CHECK_C(c, reduce_by_key("vkds_cmd_reduce_by_key", keys, values, keys_out, values_out, op, NULL, &z, &a));
  return vkds__alg_record(c, &a, count);
}
