/* lib/algorithm/histogram.c: histograms, even bins over [lower, upper) and bins between
 * sorted boundaries (vkds/algorithm.h, "histograms").
 *
 * A histogram is a description (vkds__alg, template HISTOGRAM: input 0 the samples,
 * input 1 the boundaries, the output the u32 counts) that lib/algorithm/frame.c runs in
 * the three forms; this file checks what the frame cannot (bounds, types, lengths),
 * computes the bin rule's constants on the host, picks the kernel's shared-memory size
 * for the bin count and the device, and records the three passes of
 * shaders/algorithm/histogram.glsl. Boundaries are checked on the device, by pass 0,
 * before anything is counted or written; the status comes back through a mapped word
 * (blocking and asynchronous forms: VKDS_ERROR_INVALID_ARGUMENT when the submission is
 * done) or to the application's status view (recorded form). */
#include "algorithm_internal.h"

#include <math.h>
#include <string.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverlength-strings"
#include "algorithm_histogram.h"
#pragma GCC diagnostic pop

enum {
  STATUS_BYTES = 64,  /* the status word, then the counters */
  MAX_SHARED_LOG2 = 13, /* at most 8192 bins in shared memory (32 KiB) */
  MIN_SHARED_LOG2 = 8,
  SHARED_WORDS = 2048, /* bins times copies, up to 8 copies for 256 bins */
  /* loop rounds per thread: lavapipe's 65,535 iterations per invocation (a counting
   * round is 17 on a CPU device) */
  MAX_ROUNDS = 16384,
  MAX_COUNT_ROUNDS = 2048,
};

/* Pass flags (histogram.glsl) */
#define FLAG_DIRECT 4u

/* The kernel variants: bins in shared memory (a power of two) and their copies; 0 is the
 * global-atomics kernel for bin counts past the shared memory; CPU devices' kernels (from
 * CPU_VARIANTS on, where the device has subgroup votes) count in a loop that is not
 * unrolled and skip the rare search on a vote (histogram.glsl). */
#define SHARED(bins, copies) "#define VKDS_HIST_SHARED " #bins "\n#define VKDS_HIST_REPLICAS " #copies "\n"
#define CPU "#extension GL_KHR_shader_subgroup_vote : require\n#define VKDS_HIST_CPU 1\n"
#define EXT "#extension GL_EXT_control_flow_attributes : require\n"
enum { CPU_VARIANTS = 7 };
static const char *const PREAMBLES[2 * CPU_VARIANTS] = {
    EXT SHARED(0, 1),       EXT SHARED(256, 8),       EXT SHARED(512, 4),       EXT SHARED(1024, 2),
    EXT SHARED(2048, 1),    EXT SHARED(4096, 1),      EXT SHARED(8192, 1),      EXT CPU SHARED(0, 1),
    EXT CPU SHARED(256, 8), EXT CPU SHARED(512, 4),   EXT CPU SHARED(1024, 2),  EXT CPU SHARED(2048, 1),
    EXT CPU SHARED(4096, 1), EXT CPU SHARED(8192, 1),
};

const char *vkds__histogram_preamble(const vkds__alg *a) {
  return a->variant < 2 * CPU_VARIANTS ? PREAMBLES[a->variant] : PREAMBLES[0];
}
const char *vkds__histogram_template(const vkds__alg *a) {
  (void)a;
  return vkds_template_histogram;
}

bool vkds__histogram_direct_leaf(const vkds__alg *a) {
  const vkds_seq *o = a->output;
  bool leaf = o->ops == &vkds_seq_buffer_ops || o->ops == &vkds_seq_mapped_ops || o->ops == &vkds_seq_host_ops;
  return a->input_count == 1 && leaf && o->type == VKDS_U32;
}

/* ---- sizes ---- */

static uint64_t bins_of(const vkds__alg *a) { return a->extra[3]; }

uint64_t vkds__histogram_scratch_bytes(const vkds__call *c) { return STATUS_BYTES + 4 * bins_of(&c->a); }

uint64_t vkds_histogram_scratch_bytes(const vkds_resource *res, uint64_t bins) {
  if (!res) return 0;
  uint64_t room = vkds__args_room(VKDS__HISTOGRAM_DISPATCHES); /* (frame.c args_in_scratch) */
  return bins > (UINT64_MAX - STATUS_BYTES - room) / 4 ? UINT64_MAX : STATUS_BYTES + 4 * bins + room; /* (wrapped) */
}

vkds_result vkds__histogram_choose(vkds__call *c) {
  const vkds__device *dev = c->res->dev;
  uint64_t bins = bins_of(&c->a);
  uint32_t limit = dev->facts.props.properties.limits.maxComputeSharedMemorySize / 4;
  uint32_t variant = 0, from = MIN_SHARED_LOG2;
  uint32_t env = vkds__getenv_positive("VKDS_HISTOGRAM_SHARED_LOG2"); /* fewer copies of the bins (benchmarking) */
  if (env > MIN_SHARED_LOG2 && env <= MAX_SHARED_LOG2) from = env;
  for (uint32_t log2 = from; log2 <= MAX_SHARED_LOG2; ++log2) {
    uint32_t words = 1u << log2, copies = words >= SHARED_WORDS ? 1 : SHARED_WORDS / words;
    if (bins <= words && words * copies <= limit) {
      variant = log2 - MIN_SHARED_LOG2 + 1;
      break;
    }
  }
  bool vote = vkds__subgroup_ops(dev, VK_SUBGROUP_FEATURE_VOTE_BIT);
  if (dev->facts.props.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU && vote) variant += CPU_VARIANTS;
  c->a.variant = variant;
  return VKDS_SUCCESS;
}

/* ---- recording ---- */

/* Work groups for `items` at `per` items per thread and round: enough for the device
 * (few on a CPU device, where lavapipe spends about half a millisecond starting each),
 * never so few that a thread runs more than `rounds` rounds. */
static uint64_t groups_for(const vkds__device *dev, uint64_t items, uint64_t per, uint64_t rounds) {
  bool cpu = dev->facts.props.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
  uint64_t per_group = 256 * per;
  /* a GPU: half the groups that fit at once, a whole number per compute unit where the
   * units are known (the reductions' rule, vkds__half_resident_groups). Measured on the H100 at 2^28 u32,
   * 256 bins, GPU time (bench/RESULTS.md): 528 groups (4 per unit) 371 us, 660 (5) 371,
   * 1,024 (the old cap) 392, 1,056 (8) 392, 396 (3) 397, 792 (6) 456, 264 (2) 495.
   * VKDS_HISTOGRAM_GROUPS overrides it (benchmarking the rule). */
  uint64_t most = cpu ? 16 : vkds__half_resident_groups(dev);
  uint32_t env = vkds__getenv_positive("VKDS_HISTOGRAM_GROUPS");
  if (env) most = env;
  uint64_t g = (items + per_group - 1) / per_group;
  if (g > most) g = most;
  uint64_t least = (items + per_group * rounds - 1) / (per_group * rounds);
  if (g < least) g = least;
  /* at most 2^18 groups: the counting pass's 32-bit stride (4,096 samples a group) stays
   * below 2^30, so its index below 2^31 plus a stride does not wrap (histogram.glsl) */
  if (g > (1ull << 18)) g = 1ull << 18;
  return g ? g : 1;
}

static vkds_result dispatch(vkds__call *c, VkCommandBuffer cmd, uint64_t groups) {
  return vkds__alg_dispatch(c, cmd, c->kernel, &(vkds_launch_info){.global = {256 * groups}, .args = &c->gen.args});
}

vkds_result vkds__histogram_record(vkds__call *c, VkCommandBuffer cmd) {
  const vkds__device *dev = c->res->dev;
  uint64_t *p = c->gen.args.p, bins = bins_of(&c->a);
  const VkPipelineStageFlags compute = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
  const VkAccessFlags rw = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  if (bins == 0) { /* nothing to count into */
    /* one boundary is sorted: its status says so (it would read what the word held) */
    const vkds_view *st = &c->scan_result_view;
    if (c->a.input_count == 2 && st->buffer) {
      vkds__cmd_barrier(dev, cmd, compute | VK_PIPELINE_STAGE_TRANSFER_BIT, rw | VK_ACCESS_TRANSFER_WRITE_BIT,
                        VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
      dev->vk.vkCmdFillBuffer(cmd, st->buffer->vk, st->buffer->offset + st->offset, 4, 0);
      vkds__cmd_barrier(dev, cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                        compute | VK_PIPELINE_STAGE_HOST_BIT, rw | VK_ACCESS_HOST_READ_BIT);
    }
    return VKDS_SUCCESS;
  }
  const vkds_view *s = &c->scan_scratch;
  p[2] = vkds_buffer_address(s->buffer) + s->offset;
  p[3] = c->scan_result_view.buffer ? vkds_buffer_address(c->scan_result_view.buffer) + c->scan_result_view.offset : 0;
  p[5] = bins;
  /* even bins into plain u32 memory: the counters are the output itself (no pass 2) */
  uint32_t out = c->gen.out_param;
  bool direct = c->a.input_count == 1 && out && p[out] && p[out] % 4 == 0;
  uint64_t flags = direct ? FLAG_DIRECT : 0;
  /* boundaries: the status starts "sorted" (after whatever used the scratch before).
   * Even bins have no status to keep (histogram.glsl): no fill and no two barriers
   * (which cost nothing measurable on the H100: 372.4-372.9 us at 2^28 either way). */
  if (c->a.input_count == 2) {
    vkds__cmd_barrier(dev, cmd, compute | VK_PIPELINE_STAGE_TRANSFER_BIT, rw | VK_ACCESS_TRANSFER_WRITE_BIT,
                      VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
    dev->vk.vkCmdFillBuffer(cmd, s->buffer->vk, s->buffer->offset + s->offset, 4, 0xffffffffu);
    vkds__cmd_barrier(dev, cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, compute, rw);
  }
  p[4] = flags | 0;
  VKDS_CHECK(dispatch(c, cmd, groups_for(dev, bins, 1, MAX_ROUNDS)));
  vkds__cmd_barrier(dev, cmd, compute, VK_ACCESS_SHADER_WRITE_BIT, compute, rw);
  if (c->a.count) {
    p[4] = flags | 1;
    VKDS_CHECK(dispatch(c, cmd, groups_for(dev, c->a.count, 16, MAX_COUNT_ROUNDS)));
  }
  if (direct) return VKDS_SUCCESS;
  vkds__cmd_barrier(dev, cmd, compute, VK_ACCESS_SHADER_WRITE_BIT, compute, rw);
  p[4] = flags | 2;
  return dispatch(c, cmd, groups_for(dev, (bins + 3) / 4, 1, MAX_ROUNDS));
}

vkds_result vkds__histogram_status(const vkds__call *c) {
  if (!c->scan_result) return VKDS_SUCCESS;
  uint32_t status;
  vkds__buffer_invalidate_range(c->scan_result, 0, 4); /* (readback memory may not be coherent) */
  memcpy(&status, vkds_buffer_map(c->scan_result), 4);
  if (status == 0) return VKDS_SUCCESS;
  return vkds__fail(c->res->dev->ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                    "%s: the boundaries are not sorted: boundary %u is greater than boundary %u, or one of them is "
                    "NaN (checked on the device; nothing was counted or written)",
                    c->a.name, status - 1, status);
}

/* ---- the descriptions ---- */

/* What the frame cannot check: the sequences' roles. Every sequence is validated first
 * (the frame would say the same, but the checks here read their types). */
static vkds_result check_roles(const char *name, const vkds_seq *in, const vkds_seq *boundaries, const vkds_seq *counts,
                               bool ranged) {
  const vkds_result E = VKDS_ERROR_INVALID_ARGUMENT;
  if (!in || !counts || (ranged && !boundaries))
    return vkds__fail(NULL, E, VK_SUCCESS, "%s: the %s is NULL", name,
                      !in ? "input" : !counts ? "counts sequence" : "boundaries sequence");
  const vkds_seq *role_seq[3] = {in, counts, ranged ? boundaries : NULL};
  static const char *const role_name[3] = {"the input", "the counts", "the boundaries"};
  for (int r = 0; r < 3; ++r) {
    char why[VKDS__SEQ_WHY];
    vkds_result bad = role_seq[r] ? vkds__seq_validate_quiet(role_seq[r], why) : VKDS_SUCCESS;
    if (bad != VKDS_SUCCESS) return vkds__fail(NULL, bad, VK_SUCCESS, "%s: %s: %s", name, role_name[r], why);
  }
  if (!vkds__type_is_number(in->type))
    return vkds__fail(NULL, E, VK_SUCCESS, "%s: the samples must be numbers (I32, U32, F32, I64, U64, F64), not %s",
                      name, vkds__type_name(in->type));
  if (counts->type != VKDS_U32)
    return vkds__fail(NULL, E, VK_SUCCESS, "%s: the counts are U32 elements, not %s", name, vkds__type_name(counts->type));
  if (in->count > UINT32_MAX)
    return vkds__fail(NULL, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS,
                      "%s: %llu samples are more than 32-bit counts can hold (at most 2^32 - 1)", name,
                      (unsigned long long)in->count);
  if (counts->count > UINT32_MAX - 1)
    return vkds__fail(NULL, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS, "%s: %llu bins are more than one histogram takes", name,
                      (unsigned long long)counts->count);
  if (ranged) {
    if (boundaries->type != in->type)
      return vkds__fail(NULL, E, VK_SUCCESS, "%s: the boundaries (%s) must be of the samples' type (%s)", name,
                        vkds__type_name(boundaries->type), vkds__type_name(in->type));
    if (boundaries->count != counts->count + 1)
      return vkds__fail(NULL, E, VK_SUCCESS,
                        "%s: %llu boundaries for %llu counts: k bins take k + 1 boundaries", name,
                        (unsigned long long)boundaries->count, (unsigned long long)counts->count);
  }
  return VKDS_SUCCESS;
}

static vkds__alg histogram_alg(const char *name, const vkds_seq *in, const vkds_seq *boundaries,
                               const vkds_seq *counts) {
  return (vkds__alg){.name = name, .template_kind = VKDS__TEMPLATE_HISTOGRAM, .input_count = boundaries ? 2 : 1,
                     .inputs = {in, boundaries}, .output = counts, .count = in->count, .elem = VKDS__ELEM_COPY,
                     .elem_type = VKDS_U32, .extra = {0, 0, 0, counts->count}};
}

static uint64_t f32_bits(float f) {
  uint32_t b;
  memcpy(&b, &f, 4);
  return b;
}
static uint64_t f64_bits(double d) {
  uint64_t b;
  memcpy(&b, &d, 8);
  return b;
}

/* Even bins: lower and upper (of the samples' type) become P(1) and the histogram's own
 * parameters: upper, the width (floats: (upper - lower) / bins in the type; integers:
 * upper - lower) and the estimate's scale (histogram.glsl). */
static vkds_result even_alg(const char *name, const vkds_seq *in, const void *lower, const void *upper,
                            const vkds_seq *counts, vkds__alg *out) {
  VKDS_CHECK(check_roles(name, in, NULL, counts, false));
  if (!lower || !upper)
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: lower and upper are REQUIRED", name);
  vkds__alg a = histogram_alg(name, in, NULL, counts);
  uint64_t bins = counts->count ? counts->count : 1;
  uint32_t size = vkds_type_size(in->type);
  memcpy(a.value, lower, size);
  memcpy(&a.extra[0], upper, size);
  a.has_value = true;
  bool ordered = false;
  uint64_t range = 0;
  switch (in->type) {
  case VKDS_F32: {
    float lo, hi;
    memcpy(&lo, lower, 4), memcpy(&hi, upper, 4);
    float span = hi - lo, width = span / (float)bins;
    ordered = isfinite(lo) && isfinite(hi) && lo < hi && isfinite(span);
    a.extra[1] = f32_bits(width);
    a.extra[2] = f32_bits(1.0f / width);
    /* every edge lower + j * width exact (histogram.glsl's one-edge way): a power-of-two
     * width of normal range, lower a multiple of it, the edges within 2^24 widths */
    int e2;
    double q = (double)lo / (double)width;
    if (ordered && width >= 0x1p-100f && frexpf(width, &e2) == 0.5f && q == floor(q) &&
        fabs(q) + (double)bins <= 0x1p24)
      a.extra[2] |= 1ull << 40;
    break;
  }
  case VKDS_F64: {
    double lo, hi;
    memcpy(&lo, lower, 8), memcpy(&hi, upper, 8);
    double span = hi - lo, width = span / (double)bins;
    ordered = isfinite(lo) && isfinite(hi) && lo < hi && isfinite(span);
    a.extra[1] = f64_bits(width);
    a.extra[2] = f64_bits(1.0 / width);
    break;
  }
  case VKDS_I32: {
    int32_t lo, hi;
    memcpy(&lo, lower, 4), memcpy(&hi, upper, 4);
    ordered = lo < hi, range = (uint32_t)hi - (uint32_t)lo;
    break;
  }
  case VKDS_U32: {
    uint32_t lo, hi;
    memcpy(&lo, lower, 4), memcpy(&hi, upper, 4);
    ordered = lo < hi, range = hi - lo;
    break;
  }
  case VKDS_I64: {
    int64_t lo, hi;
    memcpy(&lo, lower, 8), memcpy(&hi, upper, 8);
    ordered = lo < hi, range = (uint64_t)hi - (uint64_t)lo;
    break;
  }
  default: {
    uint64_t lo, hi;
    memcpy(&lo, lower, 8), memcpy(&hi, upper, 8);
    ordered = lo < hi, range = hi - lo;
    break;
  }
  }
  if (!ordered)
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "%s: the bins need lower < upper%s", name,
                      vkds__type_is_float(in->type) ? ", both finite, and upper - lower finite in the samples' type" : "");
  if (!vkds__type_is_float(in->type)) {
    /* the width, and when it is bins times a power of two that shift (a sample's bin is
     * then d >> shift) */
    a.extra[1] = range;
    uint64_t shift = 0;
    if (range % bins == 0 && ((range / bins) & (range / bins - 1)) == 0)
      shift = 1 + (uint64_t)__builtin_ctzll(range / bins);
    a.extra[2] = f32_bits((float)bins / (float)range) | shift << 32;
    /* 32-bit samples, fewer bins than the range: the multiply-high's M in the low word,
     * flagged by bit 40 (histogram.glsl says why it is exact) */
    if (size == 4 && !shift && bins < range)
      a.extra[2] = ((1ull << 32) * bins / range) | 1ull << 40;
  }
  *out = a;
  return VKDS_SUCCESS;
}

static vkds_result range_alg(const char *name, const vkds_seq *in, const vkds_seq *boundaries, const vkds_seq *counts,
                             vkds__alg *out) {
  VKDS_CHECK(check_roles(name, in, boundaries, counts, true));
  *out = histogram_alg(name, in, boundaries, counts);
  return VKDS_SUCCESS;
}

vkds_result vkds_histogram_even(vkds_policy *p, const vkds_seq *in, const void *lower, const void *upper,
                                const vkds_seq *counts) {
  vkds__alg a;
  VKDS_CHECK_P(p, even_alg("vkds_histogram_even", in, lower, upper, counts, &a));
  return vkds__alg_run(p, &a);
}
vkds_result vkds_histogram_even_async(vkds_policy *p, const vkds_seq *in, const void *lower, const void *upper,
                                      const vkds_seq *counts, vkds_submission **sub) {
  if (sub) *sub = NULL; /* (also when the arguments are refused) */
  vkds__alg a;
  VKDS_CHECK_P(p, even_alg("vkds_histogram_even_async", in, lower, upper, counts, &a));
  return vkds__alg_run_async(p, &a, sub);
}
vkds_result vkds_cmd_histogram_even(const vkds_cmd *c, const vkds_seq *in, const void *lower, const void *upper,
                                    const vkds_seq *counts) {
  vkds__alg a;
  VKDS_CHECK_C(c, even_alg("vkds_cmd_histogram_even", in, lower, upper, counts, &a));
  return vkds__alg_record(c, &a, (vkds_view){0});
}

vkds_result vkds_histogram_range(vkds_policy *p, const vkds_seq *in, const vkds_seq *boundaries,
                                 const vkds_seq *counts) {
  vkds__alg a;
  VKDS_CHECK_P(p, range_alg("vkds_histogram_range", in, boundaries, counts, &a));
  return vkds__alg_run(p, &a);
}
vkds_result vkds_histogram_range_async(vkds_policy *p, const vkds_seq *in, const vkds_seq *boundaries,
                                       const vkds_seq *counts, vkds_submission **sub) {
  if (sub) *sub = NULL; /* (also when the arguments are refused) */
  vkds__alg a;
  VKDS_CHECK_P(p, range_alg("vkds_histogram_range_async", in, boundaries, counts, &a));
  return vkds__alg_run_async(p, &a, sub);
}
vkds_result vkds_cmd_histogram_range(const vkds_cmd *c, const vkds_seq *in, const vkds_seq *boundaries,
                                     const vkds_seq *counts, vkds_view status) {
  vkds__alg a;
  VKDS_CHECK_C(c, range_alg("vkds_cmd_histogram_range", in, boundaries, counts, &a));
  return vkds__alg_record(c, &a, status);
}
