// shaders/algorithm/histogram.glsl: the histograms (lib/algorithm/histogram.c): even bins
// over [lower, upper) (VKDS_INPUTS 1) and bins between sorted boundaries (VKDS_INPUTS 2).
// Appended by lib/algorithm/codegen.c after the code it generates, which defines:
//   P(k)                         launch parameter k (uint64_t), below
//   IN0_T, in0(i), in0_v(i, r)   the samples; VKDS_IN0_TYPE their vkds_type (1..6)
//   IN1_T, in1(i)                the boundaries (of the samples' type), VKDS_INPUTS 2
//   OUT_T, out_st(i, v), out_vst(i, r)   the counts (uint)
//   VKDS_HP(k)                   the histogram's own parameters 0..2, below
//   VKDS_HIST_OUT                the counts' address, when they are plain u32 memory
// and histogram.c's preamble VKDS_HIST_SHARED (bins in shared memory: a power of two, or
// 0 when they do not fit: then every sample is a global atomic), VKDS_HIST_REPLICAS
// (copies of the shared bins; thread t counts into copy t % R, so that lanes counting
// into one bin mostly hit different words) and VKDS_HIST_CPU on CPU devices (with
// subgroup votes).
//
// Parameters: P(0) samples, P(1) lower's bits, P(2) the scratch (a u32 status at 0: the
// first j with boundary j > boundary j + 1 (or a NaN), ~0 when sorted; the counters from
// 64), P(3) where the pass 2 writes the status for the host or the application (0: not
// wanted), P(4) the pass (bits 0-1) and flags, P(5) bins; VKDS_HP(0) upper's bits,
// VKDS_HP(1) the bin width (floats: its bits in the type; integers: upper - lower),
// VKDS_HP(2) the estimate's scale (f64: its bits; else f32 bits, and for integers a
// shift in bits 32-39, plus one, when the width is a power of two; for 32-bit integers
// with fewer bins than upper - lower, bit 40 set and the low word M instead, below; for
// f32, bit 40 set where every edge is exact, below).
//
// Three dispatches with barriers between them (histogram.c records them, after a fill
// of the status for boundaries):
//   0  zero the counters; check the boundaries' order (atomicMin of the first pair out of
//      order into the status);
//   1  each group counts its samples into its shared bins with 32-bit shared atomics
//      (16-byte loads, four runs of loads in flight per thread), then adds each nonzero
//      bin to the counters with one global atomic; nothing when the status says unsorted;
//   2  the counters go to the output through its store (any writable sequence), and the
//      status to P(3); nothing but the status when unsorted. Skipped when the counters
//      are the output itself (even bins into plain u32 memory: flag DIRECT).
// Integers are exact: u32 counters, at most 2^32 - 1 samples (histogram.c). Where a
// sample goes (algorithm.h has the rule) is computed without rounding for integers and
// with each float operation rounded (no fused multiply-add), as the host does.
layout(local_size_x = 256) in;

layout(buffer_reference, std430, buffer_reference_align = 4) buffer vkds_word { uint v; };

#define VKDS_HIST_DIRECT 4ul
#define VKDS_NONE 0xffffffffu

uint64_t vkds_counters() {
#ifdef VKDS_HIST_OUT
  if ((P(4) & VKDS_HIST_DIRECT) != 0ul) return VKDS_HIST_OUT;
#endif
  return P(2) + 64ul;
}

// (even bins have no boundaries to check: their status is "sorted" without a load, and
// histogram.c records no fill for it)
#if VKDS_INPUTS == 2
uint vkds_status() { return vkds_word(P(2)).v; }
#else
uint vkds_status() { return 0xffffffffu; }
#endif

// ---- the samples' bins ----

IN0_T vkds_value_of(uint64_t bits) {
#if VKDS_IN0_TYPE == 1
  return int(uint(bits));
#elif VKDS_IN0_TYPE == 2
  return uint(bits);
#elif VKDS_IN0_TYPE == 3
  return uintBitsToFloat(uint(bits));
#elif VKDS_IN0_TYPE == 4
  return int64_t(bits);
#elif VKDS_IN0_TYPE == 5
  return bits;
#else
  return uint64BitsToDouble(bits);
#endif
}

#define VKDS_FLOAT (VKDS_IN0_TYPE == 3 || VKDS_IN0_TYPE == 6)
#define VKDS_WIDE (VKDS_IN0_TYPE >= 4)

IN0_T vkds_lo, vkds_hi; // samples in [vkds_lo, vkds_hi) are counted
uint vkds_bins;

// The samples' order as the host sees it. f32 values are compared through their bits: a
// device may flush denormals to zero in float compares, and an H200's counts fit that
// (session 42: test_histogram's samples of -1.4e-45 beside a boundary of 0 counted in
// the bin above it, both miscounts the share of such samples). The key orders every
// float as IEEE 754 compares them, -0 equal to +0, denormals included; NaNs are kept out
// before (VKDS_IN_RANGE).
#if VKDS_IN0_TYPE == 3
uint vkds_fkey(float x) {
  uint b = floatBitsToUint(x);
  b = b == 0x80000000u ? 0u : b; // -0 is +0
  return (b & 0x80000000u) != 0u ? ~b : b | 0x80000000u;
}
#define VKDS_LEQ(a, b) (vkds_fkey(a) <= vkds_fkey(b))
#define VKDS_LESS(a, b) (vkds_fkey(a) < vkds_fkey(b))
#else
#define VKDS_LEQ(a, b) ((a) <= (b))
#define VKDS_LESS(a, b) ((a) < (b))
#endif
#if VKDS_FLOAT
#define VKDS_IN_RANGE(x) (!isnan(x) && VKDS_LEQ(vkds_lo, x) && VKDS_LESS(x, vkds_hi))
#else
#define VKDS_IN_RANGE(x) ((x) >= vkds_lo && (x) < vkds_hi)
#endif

// k becomes the last j in [k, hi) for which VKDS_LE(j) holds, given that it holds for k
// (VKDS_LE is true up to some j and false after it): binary lifting, straight-line code
// (lavapipe cuts loops of more than 65,535 iterations per invocation in all). Steps
// past the bin count are skipped on a uniform test: lavapipe runs both sides of a
// divergent branch, so only such a test saves work there.
#define VKDS_STEP(k, hi, s)                                                                           \
  if ((1u << s) < vkds_bins) {                                                                        \
    if ((1u << s) < hi - k && VKDS_LE(k + (1u << s))) k += 1u << s;                                   \
  }
#define VKDS_SEARCH(k, hi)                                                                            \
  VKDS_STEP(k, hi, 31) VKDS_STEP(k, hi, 30) VKDS_STEP(k, hi, 29) VKDS_STEP(k, hi, 28)                 \
  VKDS_STEP(k, hi, 27) VKDS_STEP(k, hi, 26) VKDS_STEP(k, hi, 25) VKDS_STEP(k, hi, 24)                 \
  VKDS_STEP(k, hi, 23) VKDS_STEP(k, hi, 22) VKDS_STEP(k, hi, 21) VKDS_STEP(k, hi, 20)                 \
  VKDS_STEP(k, hi, 19) VKDS_STEP(k, hi, 18) VKDS_STEP(k, hi, 17) VKDS_STEP(k, hi, 16)                 \
  VKDS_STEP(k, hi, 15) VKDS_STEP(k, hi, 14) VKDS_STEP(k, hi, 13) VKDS_STEP(k, hi, 12)                 \
  VKDS_STEP(k, hi, 11) VKDS_STEP(k, hi, 10) VKDS_STEP(k, hi, 9) VKDS_STEP(k, hi, 8)                   \
  VKDS_STEP(k, hi, 7) VKDS_STEP(k, hi, 6) VKDS_STEP(k, hi, 5) VKDS_STEP(k, hi, 4)                     \
  VKDS_STEP(k, hi, 3) VKDS_STEP(k, hi, 2) VKDS_STEP(k, hi, 1) VKDS_STEP(k, hi, 0)

// Whether any lane of the subgroup holds c: on a CPU device the rare path is skipped on a
// uniform test (a subgroup vote); a GPU skips it by itself when no lane takes it.
#ifdef VKDS_HIST_CPU
#define VKDS_ANY(c) subgroupAny(c)
#else
#define VKDS_ANY(c) (c)
#endif

// k, an estimate in [0, bins), becomes the last j < bins for which VKDS_LE(j) holds
// (VKDS_LE(0) always does): a step from the estimate, rarely (an estimate off by more
// than one) a search.
#define VKDS_FIX(k)                                                                                   \
  uint from = 0u, to = 0u;                                                                            \
  bool far = false;                                                                                   \
  if (!VKDS_LE(k)) {                                                                                  \
    if (VKDS_LE(k - 1u)) k -= 1u;                                                                     \
    else far = true, from = 0u, to = k - 1u;                                                          \
  } else if (k + 1u < vkds_bins && VKDS_LE(k + 1u)) {                                                 \
    k += 1u;                                                                                          \
    if (k + 1u < vkds_bins && VKDS_LE(k + 1u)) far = true, from = k + 1u, to = vkds_bins;             \
  }                                                                                                   \
  if (VKDS_ANY(far)) {                                                                                \
    if (far) {                                                                                        \
      VKDS_SEARCH(from, to)                                                                           \
      k = from;                                                                                       \
    }                                                                                                 \
  }

#if VKDS_INPUTS == 2
// Bins between boundaries: the last j < bins with boundary j <= x.
#define VKDS_LE(j) VKDS_LEQ(IN0_T(in1(uint64_t(j))), x)
uint vkds_bin(IN0_T x) {
  if (!VKDS_IN_RANGE(x)) return VKDS_NONE; // NaN too
  uint k = 0u;
  VKDS_SEARCH(k, vkds_bins)
  return k;
}
#elif VKDS_FLOAT
// Even float bins: edge j is lower + T(j) * width, each operation rounded to the type
// (edge 0 is lower itself); x goes to the last j < bins whose edge is <= x.
IN0_T vkds_width, vkds_scale;
// f32 bins whose every edge lower + j * width is exact (histogram.c: a power-of-two width,
// lower a multiple of it, edges within 2^24 widths): x - lower rounds monotonically and
// each j * width is a float, so floor((x - lower) * scale) is the bin or one more, and
// one edge settles it, without the general fix's branches. The general way made f32
// histograms 0.54x CUB's at 2^28 on an H200 (2026-11-28, session 36, bench/RESULTS.md).
bool vkds_exact;
bool vkds_edge_le(uint j, IN0_T x) {
  precise IN0_T e = vkds_lo + IN0_T(j) * vkds_width;
  return j == 0u || VKDS_LEQ(e, x);
}
#define VKDS_LE(j) vkds_edge_le(j, x)
uint vkds_bin(IN0_T x) {
  if (!VKDS_IN_RANGE(x)) return VKDS_NONE; // NaN too
#if VKDS_IN0_TYPE == 3
  if (vkds_exact) {
    precise float d = x - vkds_lo;
    uint k = min(uint(d * vkds_scale), vkds_bins - 1u);
    return vkds_edge_le(k, x) ? k : k - 1u;
  }
  float f = min((x - vkds_lo) * vkds_scale, 4294967040.0);
#else
  double f = min((x - vkds_lo) * vkds_scale, 4294967295.0lf);
#endif
  uint k = min(uint(f), vkds_bins - 1u);
  VKDS_FIX(k)
  return k;
}
#else
// Even integer bins: floor((x - lower) * bins / (upper - lower)), exactly: the last j
// with j * range <= d * bins (d = x - lower), products in 64 bits (32-bit types) or 96
// (64-bit types, as two words); a float estimate first.
// 32-bit types with bins < range take a multiply-high instead: with M = floor(2^32 * bins
// / range) (< 2^32), k0 = floor(d * M / 2^32) is the bin or one less (d * M / 2^32 lies
// in (d * bins / range - 1, d * bins / range], as d < 2^32), so one test of k0 + 1 with
// 32 x 32 -> 64-bit products settles it. The estimate and its fix took ~40 instructions
// a sample and made the kernel compute-bound: 2^28 u32 samples in 256 bins over
// [0, 2^32 - 1) took 591 us on an H200 against 303 us for bins of a power-of-two width
// (2026-11-28, session 36, bench/RESULTS.md).
uint64_t vkds_range;
float vkds_scale;
uint vkds_shift; // a power-of-two width: its log2, plus one (0: none)
uint vkds_m;     // M above (0: not this way)
#if VKDS_WIDE
void vkds_mul(uint64_t a, uint b, out uint64_t hi, out uint64_t lo) {
  uint64_t p0 = (a & 0xfffffffful) * uint64_t(b), p1 = (a >> 32) * uint64_t(b);
  lo = p0 + (p1 << 32);
  hi = (p1 >> 32) + (lo < p0 ? 1ul : 0ul);
}
bool vkds_le96(uint j, uint64_t dh, uint64_t dl) {
  uint64_t h, l;
  vkds_mul(vkds_range, j, h, l);
  return h < dh || (h == dh && l <= dl);
}
#define VKDS_LE(j) vkds_le96(j, dh, dl)
#else
#define VKDS_LE(j) (uint64_t(j) * vkds_range <= db)
#endif
uint vkds_bin(IN0_T x) {
  if (!VKDS_IN_RANGE(x)) return VKDS_NONE;
#if VKDS_WIDE
  uint64_t d = uint64_t(x) - uint64_t(vkds_lo);
#else
  uint d = uint(x) - uint(vkds_lo);
#endif
  if (vkds_shift != 0u) return uint(d >> (vkds_shift - 1u));
#if !VKDS_WIDE
  if (vkds_m != 0u) {
    uint k, low;
    umulExtended(d, vkds_m, k, low);
    return uint64_t(k + 1u) * uint64_t(uint(vkds_range)) <= uint64_t(d) * uint64_t(vkds_bins) ? k + 1u : k;
  }
#endif
#if VKDS_WIDE
  uint64_t dh, dl;
  vkds_mul(d, vkds_bins, dh, dl);
#else
  uint64_t db = uint64_t(d) * uint64_t(vkds_bins);
#endif
  uint k = min(uint(min(float(d) * vkds_scale, 4294967040.0)), vkds_bins - 1u);
  VKDS_FIX(k)
  return k;
}
#endif

void vkds_setup() {
  vkds_bins = uint(P(5));
#if VKDS_INPUTS == 2
  vkds_lo = IN0_T(in1(0ul));
  vkds_hi = IN0_T(in1(uint64_t(vkds_bins)));
#else
  vkds_lo = vkds_value_of(P(1));
  vkds_hi = vkds_value_of(VKDS_HP(0));
#if VKDS_FLOAT
  vkds_width = vkds_value_of(VKDS_HP(1));
#if VKDS_IN0_TYPE == 3
  vkds_scale = uintBitsToFloat(uint(VKDS_HP(2)));
  vkds_exact = (VKDS_HP(2) & (1ul << 40)) != 0ul;
#else
  vkds_scale = uint64BitsToDouble(VKDS_HP(2));
#endif
#else
  vkds_range = VKDS_HP(1);
  vkds_scale = uintBitsToFloat(uint(VKDS_HP(2)));
  vkds_shift = uint(VKDS_HP(2) >> 32) & 0xffu;
  vkds_m = (VKDS_HP(2) & (1ul << 40)) != 0ul ? uint(VKDS_HP(2)) : 0u;
#endif
#endif
}

// ---- pass 1: counting ----

#if VKDS_HIST_SHARED > 0
shared uint vkds_sh[VKDS_HIST_SHARED * VKDS_HIST_REPLICAS];
#endif

void vkds_add(IN0_T x, uint copy) {
  uint k = vkds_bin(x);
  if (k == VKDS_NONE) return;
#if VKDS_HIST_SHARED > 0
  atomicAdd(vkds_sh[k * uint(VKDS_HIST_REPLICAS) + copy], 1u);
#else
  atomicAdd(vkds_word(vkds_counters() + 4ul * uint64_t(k)).v, 1u);
#endif
}

// Four runs of 4 samples from i, 1024 apart (fewer at the end): all loaded first, then
// counted through one call site (on a CPU device in a loop that is not unrolled: one copy
// of the bin search to compile instead of 16).
#ifdef VKDS_HIST_CPU
#define VKDS_EACH [[dont_unroll]]
#else
#define VKDS_EACH [[unroll]]
#endif
void vkds_add_runs(VKDS_IDX i, VKDS_IDX n, uint copy) {
  IN0_T v[16];
  uint valid = 0xffffu;
  if (i + VKDS_IDX(3076) <= n) {
    [[unroll]] for (uint q = 0u; q < 4u; ++q) {
      IN0_T a[4];
      in0_v(uint64_t(i + VKDS_IDX(1024u * q)), a);
      for (uint k = 0u; k < 4u; ++k) v[4u * q + k] = a[k];
    }
  } else {
    valid = 0u;
    for (uint j = 0u; j < 16u; ++j) {
      VKDS_IDX at = i + VKDS_IDX(1024u * (j >> 2) + (j & 3u));
      if (at < n) v[j] = in0(uint64_t(at)), valid |= 1u << j;
    }
  }
  VKDS_EACH for (uint k = 0u; k < 16u; ++k)
    if (((valid >> k) & 1u) != 0u) vkds_add(v[k], copy);
}

void vkds_count_pass() {
  if (vkds_status() != VKDS_NONE) return; // unsorted boundaries: nothing is counted
  uint t = gl_LocalInvocationID.x;
  uint copy = t % uint(VKDS_HIST_REPLICAS);
#if VKDS_HIST_SHARED > 0
  for (uint j = t; j < uint(VKDS_HIST_SHARED * VKDS_HIST_REPLICAS); j += 256u) vkds_sh[j] = 0u;
  barrier();
#endif
  // 32-bit index arithmetic up to 2^31 samples (VKDS_IDX; histogram.c keeps the stride
  // below 2^30, so i + stride cannot wrap), as the reductions': the 64-bit loop read
  // 2^28 u32 in 372 us on an H100 against CUB's 367
  VKDS_IDX n = VKDS_IDX(P(0)), stride = VKDS_IDX(4096u) * VKDS_IDX(gl_NumWorkGroups.x);
  // a group takes 4096 samples a round: thread t the runs at 4t + 1024q (q < 4); the
  // grid bounds the rounds per thread (histogram.c: lavapipe's loop budget)
  for (VKDS_IDX i = VKDS_IDX(4096u) * VKDS_IDX(gl_WorkGroupID.x) + VKDS_IDX(4u * t); i < n; i += stride)
    vkds_add_runs(i, n, copy);
#if VKDS_HIST_SHARED > 0
  barrier();
  uint64_t counters = vkds_counters();
  for (uint k = t; k < vkds_bins; k += 256u) {
    uint s = 0u;
    for (uint c = 0u; c < uint(VKDS_HIST_REPLICAS); ++c) s += vkds_sh[k * uint(VKDS_HIST_REPLICAS) + c];
    if (s != 0u) atomicAdd(vkds_word(counters + 4ul * uint64_t(k)).v, s);
  }
#endif
}

// ---- passes 0 and 2 ----

void main() {
  vkds_setup();
  uint pass = uint(P(4)) & 3u;
  if (pass == 1u) {
    vkds_count_pass();
    return;
  }
  uint64_t threads = 256ul * uint64_t(gl_NumWorkGroups.x);
  uint64_t id = 256ul * uint64_t(gl_WorkGroupID.x) + uint64_t(gl_LocalInvocationID.x);
  uint64_t bins = uint64_t(vkds_bins), counters = vkds_counters();
  if (pass == 0u) {
    for (uint64_t j = id; j < bins; j += threads) {
      vkds_word(counters + 4ul * j).v = 0u;
#if VKDS_INPUTS == 2
#if VKDS_FLOAT
      IN0_T a = IN0_T(in1(j)), b = IN0_T(in1(j + 1ul));
      if (isnan(a) || isnan(b) || !VKDS_LEQ(a, b)) atomicMin(vkds_word(P(2)).v, uint(j));
#else
      if (!(in1(j) <= in1(j + 1ul))) atomicMin(vkds_word(P(2)).v, uint(j));
#endif
#endif
    }
    return;
  }
  uint status = vkds_status();
  if (id == 0ul && P(3) != 0ul) vkds_word(P(3)).v = status == VKDS_NONE ? 0u : status + 1u;
  if (status != VKDS_NONE) return; // unsorted: the counts are not written
  for (uint64_t j = 4ul * id; j < bins; j += 4ul * threads) {
    if (j + 4ul <= bins) {
      uvec4 c = vkds_p_uvec4(counters + 4ul * j).v;
      OUT_T r[4] = OUT_T[4](OUT_T(c.x), OUT_T(c.y), OUT_T(c.z), OUT_T(c.w));
      out_vst(j, r);
    } else {
      for (uint64_t m = j; m < bins; ++m) out_st(m, OUT_T(vkds_word(counters + 4ul * m).v));
    }
  }
}
