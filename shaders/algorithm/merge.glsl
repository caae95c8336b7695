// shaders/algorithm/merge.glsl: the merge of two sorted sequences (lib/algorithm/merge.c),
// after order.glsl. Appended by lib/algorithm/codegen.c after the code it generates:
//   P(k)                          launch parameter k (uint64_t); P(0) the output's count
//   IN0_T, in0(i); IN1_T, in1(i)  the sorted sequences a and b, read at random
//   OUT_T, out_st(i, v), out_vst(i, r)   the output, |a| + |b| elements
//   VKDS_KEY_TYPE                 a's vkds_type (b's and the output's too)
// P(1): |a| | descending << 62. Dispatched as 256 threads a 2048 outputs (frame.c).
//
// Stable: where elements are equal in the order, a's come first (each side keeps its
// own order). Merge path by work groups: group g writes outputs [2048 g, 2048 g + 2048).
// Its threads all find where its two ends lie on the diagonal (how many of the first k
// outputs come from a: the smallest i with b[k - i - 1] before a[i]) by one loop of two
// binary searches (the same addresses across the group: no shared words, no barrier),
// load those parts of a and b into shared memory (consecutive threads on consecutive
// elements, all of a thread's loads in flight together), merge 8 outputs a thread there
// (a search on its own diagonal) and write the group's outputs in order. Every loop is
// bounded (64 steps of search, 8 loads, 8 outputs), no index goes past a part, and no
// group waits on another.

#define VKDS_MERGE_COUNT 0x3ffffffffffffffful
#define VKDS_MERGE_ITEMS 8u
#define VKDS_MERGE_OUT (256u * VKDS_MERGE_ITEMS)

shared IN0_T vkds_m[VKDS_MERGE_OUT];

IN0_T vkds_a(uint64_t i) { return in0(i); }
IN0_T vkds_b(uint64_t i) { return IN0_T(in1(i)); }

// How many of the first k0 (k1) outputs come from a, both searches in one loop; a
// finished search loads index 0 (both inputs are non-empty where it loads at all).
void vkds_corank2(uint64_t k0, uint64_t k1, uint64_t na, uint64_t nb, out uint64_t i0, out uint64_t i1) {
  uint64_t lo0 = k0 > nb ? k0 - nb : 0ul, hi0 = min(k0, na), lo1 = k1 > nb ? k1 - nb : 0ul, hi1 = min(k1, na);
  for (uint step = 0u; step < 64u && (lo0 < hi0 || lo1 < hi1); ++step) {
    bool on0 = lo0 < hi0, on1 = lo1 < hi1;
    uint64_t m0 = lo0 + (hi0 - lo0) / 2ul, m1 = lo1 + (hi1 - lo1) / 2ul;
    // m < hi <= k, so k - m - 1 >= 0; and k - m - 1 < nb
    bool before0 = vkds_ord(vkds_b(on0 ? k0 - m0 - 1ul : 0ul)) < vkds_ord(vkds_a(on0 ? m0 : 0ul));
    bool before1 = vkds_ord(vkds_b(on1 ? k1 - m1 - 1ul : 0ul)) < vkds_ord(vkds_a(on1 ? m1 : 0ul));
    if (on0 && before0) hi0 = m0;
    else if (on0) lo0 = m0 + 1ul;
    if (on1 && before1) hi1 = m1;
    else if (on1) lo1 = m1 + 1ul;
  }
  i0 = lo0, i1 = lo1;
}

void main() {
  uint64_t n = P(0), na = P(1) & VKDS_MERGE_COUNT, nb = n - na;
  uint t = gl_LocalInvocationIndex;
  uint64_t g0 = (vkds_global_index() - uint64_t(t)) * uint64_t(VKDS_MERGE_ITEMS);
  if (g0 >= n) return; // the whole group
  uint64_t g1 = min(g0 + uint64_t(VKDS_MERGE_OUT), n), i0, i1;
  vkds_corank2(g0, g1, na, nb, i0, i1);
  uint64_t j0 = g0 - i0;
  uint ca = uint(i1 - i0), total = uint(g1 - g0), cb = total - ca;
  // the group's parts: a's [0, ca), b's [ca, total)
  IN0_T r[VKDS_MERGE_ITEMS];
  for (uint q = 0u; q < VKDS_MERGE_ITEMS; ++q) {
    uint x = t + 256u * q;
    if (x < ca) r[q] = vkds_a(i0 + uint64_t(x));
    else if (x < total) r[q] = vkds_b(j0 + uint64_t(x - ca));
  }
  for (uint q = 0u; q < VKDS_MERGE_ITEMS; ++q)
    if (t + 256u * q < total) vkds_m[t + 256u * q] = r[q];
  barrier();
  uint d = t * VKDS_MERGE_ITEMS;
  if (d < total) {
    uint lo = d > cb ? d - cb : 0u, hi = min(d, ca);
    for (uint step = 0u; step < 16u && lo < hi; ++step) {
      uint m = (lo + hi) / 2u;
      if (vkds_ord(vkds_m[ca + d - m - 1u]) < vkds_ord(vkds_m[m])) hi = m;
      else lo = m + 1u;
    }
    uint i = lo, j = d - lo;
    for (uint q = 0u; q < VKDS_MERGE_ITEMS; ++q) {
      // a's element unless b's comes before it (ties: a)
      bool has_a = i < ca, has_b = j < cb;
      IN0_T x = vkds_m[has_a ? i : 0u], y = vkds_m[has_b ? ca + j : 0u];
      bool take_a = has_a && (!has_b || !(vkds_ord(y) < vkds_ord(x)));
      r[q] = take_a ? x : y;
      if (take_a) ++i;
      else ++j;
    }
  }
  barrier();
  for (uint q = 0u; q < VKDS_MERGE_ITEMS; ++q)
    if (d + q < total) vkds_m[d + q] = r[q];
  barrier();
  for (uint q = 0u; q < VKDS_MERGE_ITEMS; ++q)
    if (t + 256u * q < total) out_st(g0 + uint64_t(t + 256u * q), OUT_T(vkds_m[t + 256u * q]));
}
