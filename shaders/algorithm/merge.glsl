// shaders/algorithm/merge.glsl: the merge of two sorted sequences (lib/algorithm/merge.c),
// after order.glsl. Appended by lib/algorithm/codegen.c after the code it generates:
//   P(k)                          launch parameter k (uint64_t); P(0) the output's count
//   IN0_T, in0(i); IN1_T, in1(i)  the sorted sequences a and b, read at random
//   OUT_T, out_st(i, v), out_vst(i, r)   the output, |a| + |b| elements
//   VKDS_KEY_TYPE                 a's vkds_type (b's and the output's too)
// P(1): |a| | descending << 62.
//
// Stable: where elements are equal in the order, a's come first (each side keeps its
// own order). Merge path: thread t writes outputs 4t .. 4t + 3. It finds how many of the
// first 4t outputs come from a by a binary search on the diagonal (i from a, 4t - i from
// b, the smallest i with b[4t - i - 1] before a[i]), then merges its 4 from there. Every
// loop is bounded (64 search steps, 4 outputs).

#define VKDS_MERGE_COUNT 0x3ffffffffffffffful

// How many of the first k outputs come from a.
uint64_t vkds_corank(uint64_t k, uint64_t na, uint64_t nb) {
  uint64_t lo = k > nb ? k - nb : 0ul, hi = min(k, na);
  for (uint step = 0u; step < 64u && lo < hi; ++step) {
    uint64_t i = lo + (hi - lo) / 2ul; // i < hi <= k, so k - i - 1 >= 0; and k - i - 1 < nb
    if (vkds_ord(IN0_T(in1(k - i - 1ul))) < vkds_ord(in0(i))) hi = i;
    else lo = i + 1ul;
  }
  return lo;
}

void main() {
  uint64_t n = P(0), na = P(1) & VKDS_MERGE_COUNT, nb = n - na;
  uint64_t k = vkds_global_index() * 4ul;
  if (k >= n) return;
  uint64_t i = vkds_corank(k, na, nb), j = k - i;
  OUT_T r[4];
  uint m = uint(min(n - k, 4ul));
  for (uint q = 0u; q < m; ++q) {
    // a's element unless b's comes before it (ties: a)
    bool take_a = i < na && (j >= nb || !(vkds_ord(IN0_T(in1(j))) < vkds_ord(in0(i))));
    r[q] = take_a ? OUT_T(in0(i)) : OUT_T(in1(j));
    if (take_a) ++i;
    else ++j;
  }
  if (m == 4u) {
    out_vst(k, r);
  } else {
    for (uint q = 0u; q < m; ++q) out_st(k + uint64_t(q), r[q]);
  }
}
