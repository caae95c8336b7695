// shaders/algorithm/search.glsl: lower_bound and upper_bound of many needles in a sorted
// sequence (lib/algorithm/search.c). Appended by lib/algorithm/codegen.c after the code
// it generates, which defines:
//   P(k)                          launch parameter k (uint64_t); P(0) the needles
//   IN0_T, in0(i), in0_v(i, r)    the needles
//   IN1_T, in1(i)                 the sorted sequence, read at random
//   OUT_T, out_st(i, v), out_vst(i, r)   the output: one index per needle
//   VKDS_KEY_TYPE                 the needles' vkds_type (the sorted sequence's too)
//   vkds_in0_of(x)                the sorted sequence's element as a needle's
//   VKDS_LESS, vkds_less(a, b)    by a comparator (lower_bound_by, upper_bound_by): a
//                                 must come before b; else in the sorts' order
// P(1): the sorted sequence's count | descending << 62 (not by a comparator) | upper
// bound << 63. The order's bits come from order.glsl, before this file.
//
// The order is the sorts' (vkds/algorithm.h): elements compare by their order-preserving
// bits, so floats in totalOrder, and descending reverses it. lower_bound: the first index
// whose element does not come before the needle; upper_bound: the first whose element
// comes after it (the count when there is none). Each thread takes 4 needles (one 16-byte
// load when the address allows); a binary search takes at most 64 steps.

#define VKDS_SEARCH_COUNT 0x3ffffffffffffffful
#define VKDS_SEARCH_UPPER 0x8000000000000000ul

#ifdef VKDS_LESS
// By the comparator: lower_bound moves right past the elements that come before the
// needle, upper_bound past those the needle does not come before.
uint64_t vkds_bound(IN0_T x) {
  bool upper = (P(1) & VKDS_SEARCH_UPPER) != 0ul;
  uint64_t lo = 0ul, hi = P(1) & VKDS_SEARCH_COUNT;
  for (uint step = 0u; step < 64u && lo < hi; ++step) {
    uint64_t mid = lo + (hi - lo) / 2ul;
    IN0_T m = vkds_in0_of(in1(mid));
    if (upper ? !vkds_less(x, m) : vkds_less(m, x)) lo = mid + 1ul;
    else hi = mid;
  }
  return lo;
}
#else
uint64_t vkds_search(KW_T key) {
  bool upper = (P(1) & VKDS_SEARCH_UPPER) != 0ul;
  uint64_t lo = 0ul, hi = P(1) & VKDS_SEARCH_COUNT;
  for (uint step = 0u; step < 64u && lo < hi; ++step) {
    uint64_t mid = lo + (hi - lo) / 2ul;
    KW_T m = vkds_ord(vkds_in0_of(in1(mid)));
    if (upper ? !(key < m) : m < key) lo = mid + 1ul;
    else hi = mid;
  }
  return lo;
}
uint64_t vkds_bound(IN0_T x) { return vkds_search(vkds_ord(x)); }
#endif

void main() {
  uint64_t n = P(0);
  uint64_t i = vkds_global_index() * 4ul;
  if (i >= n) return;
  if (i + 4ul <= n) {
    IN0_T x[4];
    in0_v(i, x);
    OUT_T r[4];
    for (int k = 0; k < 4; ++k) r[k] = OUT_T(vkds_bound(x[k]));
    out_vst(i, r);
  } else {
    for (uint64_t j = i; j < n; ++j) out_st(j, OUT_T(vkds_bound(in0(j))));
  }
}
