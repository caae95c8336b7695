// shaders/algorithm/reduce.glsl: the reduction template (reduce, transform_reduce,
// count, min/max element, any/all/none, equal, inner product).
// Appended by lib/algorithm/codegen.c after the code it generates, which defines:
//   P(k)                         launch parameter k (uint64_t): 0 element count,
//                                2 result address, 3 partials address, 4 flags
//                                (bit 0: second pass, bit 1: init given, bit 2: store the
//                                total as an accumulator at the result address: a streamed
//                                chunk's), 5 first-pass groups, 6 index of element 0
//   VKDS_INPUTS, IN0_T, in0, in0_v, IN1_T, in1, in1_v, VKDS_WHOLE_RUNS, VKDS_IDX   as in map.glsl
//   VKDS_CONTIGUOUS              defined on a CPU device: each thread folds one contiguous
//                                range of runs (below)
//   ACC_T                        the accumulated type
//   vkds_map(i, x[, y])          element i's contribution (ACC_T)
//   vkds_combine(a, b)           the operator; vkds_identity(); vkds_init() (from P(1))
//   vkds_partial_load(j), vkds_partial_store(j, v), vkds_result_store(v)
//
// The order of the operations is fixed for a device, count and type (no atomics), so a
// float reduction is repeatable bit for bit; include/vkds/algorithm.h documents it:
// thread t of group g folds the runs of 4 elements at 4 * (g * 256 + t + k * G * 256) in
// order (with VKDS_CONTIGUOUS, thread T = g * 256 + t folds runs T * R .. T * R + R - 1,
// R = ceil(runs / (G * 256)): a CPU device runs a thread's lanes through the whole loop
// one 8-lane batch after another, and a grid stride would make each batch jump G * 4 KiB
// between 128-byte loads); the group folds its 256 values pairwise (t with t + s, s =
// 128 ... 1); a single group then folds the G group values the same way; init goes in
// last, on the left.
layout(local_size_x = 256) in;

// A thread's own elements are folded in index order: an operator may have a cheaper form
// for b after a (codegen.c: min/max element's, which need not compare indices then).
#ifndef VKDS_COMBINE_IN_ORDER
#define vkds_combine_in_order(a, b) vkds_combine(a, b)
#endif

shared ACC_T vkds_sh[256];

#if VKDS_INPUTS == 1
#define VKDS_MAP1(j) vkds_map(j, in0(j))
#else
#define VKDS_MAP1(j) vkds_map(j, in0(j), in1(j))
#endif

// Loads run r (4 elements at i + r * stride) of the step into a[r] (and b[r]).
#define VKDS_AT(r) uint64_t(i + VKDS_IDX(r) * stride)
#if VKDS_INPUTS == 1
#define VKDS_LOAD(r) in0_v(VKDS_AT(r), a[r])
#define VKDS_FOLD(r, k) vkds_map(VKDS_AT(r) + uint64_t(k), a[r][k])
#else
#define VKDS_LOAD(r) in0_v(VKDS_AT(r), a[r]); in1_v(VKDS_AT(r), b[r])
#define VKDS_FOLD(r, k) vkds_map(VKDS_AT(r) + uint64_t(k), a[r][k], b[r][k])
#endif

// Folds the run of 4 elements at i (fewer at the end) into acc, in index order.
void vkds_fold_run(inout ACC_T acc, uint64_t i, uint64_t n) {
#ifndef VKDS_WHOLE_RUNS
  if (i + 4ul <= n)
#endif
  {
    IN0_T x[4];
    in0_v(i, x);
#if VKDS_INPUTS >= 2
    IN1_T y[4];
    in1_v(i, y);
    for (int k = 0; k < 4; ++k) acc = vkds_combine_in_order(acc, vkds_map(i + uint64_t(k), x[k], y[k]));
#else
    for (int k = 0; k < 4; ++k) acc = vkds_combine_in_order(acc, vkds_map(i + uint64_t(k), x[k]));
#endif
  }
#ifndef VKDS_WHOLE_RUNS
  else {
    for (uint64_t j = i; j < n; ++j) acc = vkds_combine_in_order(acc, VKDS_MAP1(j));
  }
#endif
}

void main() {
  uint t = gl_LocalInvocationID.x;
  uint g = gl_WorkGroupID.x;
  uint groups = gl_NumWorkGroups.x;
  bool second = (P(4) & 1ul) != 0ul;
  ACC_T acc = vkds_identity();
  if (!second) {
    VKDS_IDX n = VKDS_IDX(P(0));
    VKDS_IDX thread = VKDS_IDX(g) * VKDS_IDX(256) + VKDS_IDX(t);
#ifdef VKDS_CONTIGUOUS
    VKDS_IDX threads = VKDS_IDX(groups) * VKDS_IDX(256);
    VKDS_IDX per = ((n + VKDS_IDX(3)) / VKDS_IDX(4) + threads - VKDS_IDX(1)) / threads;
    VKDS_IDX i = thread * per * VKDS_IDX(4), stride = VKDS_IDX(4);
    VKDS_IDX end = min(n, i + per * VKDS_IDX(4));
#else
    VKDS_IDX i = thread * VKDS_IDX(4), stride = VKDS_IDX(groups) * VKDS_IDX(1024), end = n;
#endif
    // four runs per step, all loaded before any is folded (64 bytes of loads in flight
    // per thread for 4-byte types); the folding order stays run r, then run r + 1
    for (; i + VKDS_IDX(3) * stride + VKDS_IDX(4) <= end; i += VKDS_IDX(4) * stride) {
      IN0_T a[4][4];
#if VKDS_INPUTS >= 2
      IN1_T b[4][4];
#endif
      VKDS_LOAD(0); VKDS_LOAD(1); VKDS_LOAD(2); VKDS_LOAD(3);
      for (int r = 0; r < 4; ++r)
        for (int k = 0; k < 4; ++k) acc = vkds_combine_in_order(acc, VKDS_FOLD(r, k));
    }
    for (; i < end; i += stride) vkds_fold_run(acc, uint64_t(i), uint64_t(n));
  } else {
    uint m = uint(P(5));
    for (uint j = t; j < m; j += 256u) acc = vkds_combine(acc, vkds_partial_load(j));
  }
  vkds_sh[t] = acc;
  barrier();
  for (uint s = 128u; s > 0u; s >>= 1) {
    if (t < s) vkds_sh[t] = vkds_combine(vkds_sh[t], vkds_sh[t + s]);
    barrier();
  }
  if (t == 0u) {
    ACC_T total = vkds_sh[0];
    if (groups == 1u && (P(4) & 4ul) != 0ul) {
      vkds_p_acc(P(2)).v = total; // a streamed chunk's total, combined later
    } else if (groups == 1u) {
      // an empty sequence's result is init itself (std::reduce's): op(init, identity)
      // is not init where the identity is not one on the right for every init (the
      // logical operators' 1 and 0 turn an init of 5 into 1; min's +inf turns a NaN
      // init into +inf)
      if ((P(4) & 2ul) != 0ul) total = P(0) == 0ul ? vkds_init() : vkds_combine(vkds_init(), total);
      vkds_result_store(total);
    } else {
      vkds_partial_store(g, total);
    }
  }
}
