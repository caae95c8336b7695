// shaders/algorithm/map.glsl: the element-wise template (fill, copy, transform).
// Appended by lib/algorithm/codegen.c after the code it generates, which defines:
//   P(k)                  launch parameter k (uint64_t); P(0) is the element count
//   VKDS_INPUTS           0, 1 or 2
//   IN0_T, in0(i), in0_v(i, r)   input 0: its GLSL type, element i, elements i..i+3
//   IN1_T, in1(i), in1_v(i, r)   input 1
//   OUT_T, out_st(i, v), out_vst(i, r)   the output: store element i, elements i..i+3
//   vkds_elem(...)        the element function of the inputs' elements (with
//                         VKDS_ELEM_INDEXED, of the index and the element before it
//                         too: adjacent_difference)
//   VKDS_WHOLE_RUNS       defined when P(0) is a multiple of 4
//   VKDS_IDX              the index type: uint when P(0) <= 2^31, else uint64_t
// Each thread does 4 consecutive elements: one 16-byte load per 4-byte leaf when its
// address allows (the leaves decide), the scalar path for the last, partial group. With
// whole runs there is none, and its code is left out: a CPU device (lavapipe) runs both
// sides of a branch.
layout(local_size_x = 256) in;

#if VKDS_INPUTS == 0
#define VKDS_ELEM4(k) vkds_elem()
#define VKDS_ELEM1(j) vkds_elem()
#elif VKDS_INPUTS == 1 && defined(VKDS_ELEM_INDEXED)
// (the element before: the thread's own but for its first; an index never below 0, even
// where a compiler evaluates both sides)
#define VKDS_ELEM4(k) vkds_elem(uint64_t(i) + uint64_t(k), a[k], (k) == 0 ? in0(i > 0 ? uint64_t(i) - 1ul : 0ul) : a[max((k) - 1, 0)])
#define VKDS_ELEM1(j) vkds_elem(j, in0(j), in0(j > 0ul ? j - 1ul : 0ul))
#elif VKDS_INPUTS == 1
#define VKDS_ELEM4(k) vkds_elem(a[k])
#define VKDS_ELEM1(j) vkds_elem(in0(j))
#else
#define VKDS_ELEM4(k) vkds_elem(a[k], b[k])
#define VKDS_ELEM1(j) vkds_elem(in0(j), in1(j))
#endif

void main() {
  VKDS_IDX n = VKDS_IDX(P(0));
  VKDS_IDX i = VKDS_IDX(vkds_global_index()) * VKDS_IDX(4);
#ifdef VKDS_WHOLE_RUNS
  if (i < n) {
#else
  if (i >= n) return;
  if (i + VKDS_IDX(4) <= n) {
#endif
#if VKDS_INPUTS >= 1
    IN0_T a[4];
    in0_v(uint64_t(i), a);
#endif
#if VKDS_INPUTS >= 2
    IN1_T b[4];
    in1_v(uint64_t(i), b);
#endif
    OUT_T r[4];
    for (int k = 0; k < 4; ++k) r[k] = VKDS_ELEM4(k);
    out_vst(uint64_t(i), r);
  }
#ifndef VKDS_WHOLE_RUNS
  else {
    for (uint64_t j = uint64_t(i); j < uint64_t(n); ++j) out_st(j, VKDS_ELEM1(j));
  }
#endif
}
