// shaders/algorithm/merge_group.glsl: merge path by work groups, shared by the merge
// (merge.glsl) and the merge sort's passes (msort.glsl); lib/algorithm/codegen.c puts it
// in front of them. They define what it declares here:
//   IN0_T                                  the elements
//   bool vkds_before(IN0_T x, IN0_T y)     x must come before y (equal: neither)
//   IN0_T vkds_left(uint64_t i), vkds_right(uint64_t i)
//                                          the two sorted inputs, from each one's start
//   void vkds_out(uint64_t o, IN0_T v)     output o
//   void vkds_out4(uint64_t o, IN0_T v[4]) outputs o .. o + 3 (o a multiple of 4: 16-byte
//                                          stores where the output allows)
//   IN0_T vkds_sh(uint x), vkds_sh_st(uint x, IN0_T v)
//                                          VKDS_MERGE_OUT elements of shared memory, at
//                                          VKDS_SH_AT(x) of VKDS_SH_SLOTS (below)
// Stable: the left input's element is taken unless the right's comes before it. A work
// group writes VKDS_MERGE_OUT consecutive outputs: where they come from is found on the
// diagonal (how many of the first k outputs come from the left: the smallest i with
// right[k - i - 1] before left[i]) by a binary search; the group loads those parts of
// both inputs into shared memory (consecutive threads on consecutive elements, all of a
// thread's loads in flight together), every thread merges VKDS_MERGE_ITEMS outputs there
// (a search on its own diagonal) and the group writes them in order (a whole group in
// runs of 4 a thread). Every loop is bounded (64 steps of search, VKDS_MERGE_ITEMS loads
// and outputs), no index goes past a part (even for a compiler that evaluates both sides
// of a select, or for inputs that are not sorted), and no group waits on another.

#define VKDS_MERGE_ITEMS 8u
#define VKDS_MERGE_OUT (256u * VKDS_MERGE_ITEMS)

// Shared memory's slots for n elements, and element x's slot: with VKDS_SH_PAD (codegen.c
// merge_pad: where it fits) a spare slot after every 32, so that a thread's consecutive
// elements (8t + q, the merged outputs) fall in different banks across a warp.
#ifdef VKDS_SH_PAD
#define VKDS_SH_SLOTS(n) ((n) + ((n) >> 5u))
#define VKDS_SH_AT(x) ((x) + ((x) >> 5u))
#else
#define VKDS_SH_SLOTS(n) (n)
#define VKDS_SH_AT(x) (x)
#endif

bool vkds_before(IN0_T x, IN0_T y);
IN0_T vkds_left(uint64_t i);
IN0_T vkds_right(uint64_t i);
void vkds_out(uint64_t o, IN0_T v);
void vkds_out4(uint64_t o, IN0_T v[4]);
IN0_T vkds_sh(uint x);
void vkds_sh_st(uint x, IN0_T v);

// How many of the first k outputs of merging left [0, nl) and right [0, nr) come from
// the left.
uint64_t vkds_corank(uint64_t k, uint64_t nl, uint64_t nr) {
  uint64_t lo = k > nr ? k - nr : 0ul, hi = min(k, nl);
  for (uint step = 0u; step < 64u && lo < hi; ++step) {
    uint64_t m = lo + (hi - lo) / 2ul; // m < hi <= k, so k - m - 1 >= 0; and k - m - 1 < nr
    if (vkds_before(vkds_right(k - m - 1ul), vkds_left(m))) hi = m;
    else lo = m + 1ul;
  }
  return lo;
}

// vkds_corank for k0 and k1 at once, run by every thread of a group on the group's two
// ends (no shared memory, which an 8-byte element type fills to Vulkan's least 16 KiB,
// and no barrier). A finished search loads index 0 of each input (both are non-empty
// where it loads at all), not past one.
#ifdef VKDS_MERGE_BALLOT
// By subgroups (the preamble enables ballots where the device has them), each a k-ary
// search: half the lanes probe k0's range, half k1's, h = S/2 evenly spaced places each
// round, and a ballot of "not yet" narrows each range h times. The predicate (right[k -
// m - 1] before left[m]) goes from false to true as m grows, so the probes that see
// false are the first c, and the answer lies after probe c - 1 and at or before probe c.
// Against a binary search in every thread (as below) this takes log_h instead of log_2
// of the range in memory round trips: 7 rounds instead of 28 at 2^27 on a subgroup of
// 32. On an H200 that took vkds_merge from 0.18x to 0.275x CUB's merge at 2^28 and from
// 0.30x to 0.47x at 2^24 (bench/RESULTS.md, session 14); a dispatch that found every
// group's start first gained nothing more, so the searches no longer set the pace.
uint64_t vkds_probe(uint64_t lo, uint64_t hi, uint p, uint hlog) {
  uint64_t range = hi - lo; // p < 2^hlog, so neither product overflows
  return lo + (range >> hlog) * uint64_t(p) + (((range & ((1ul << hlog) - 1ul)) * uint64_t(p)) >> hlog);
}
// One end's range after a round whose first c of 2^hlog probes saw "not yet".
void vkds_narrow(inout uint64_t lo, inout uint64_t hi, uint c, uint hlog) {
  if (lo >= hi) return;
  uint64_t l = lo, u = hi;
  if (c > 0u) lo = vkds_probe(l, u, c - 1u, hlog) + 1ul;
  if (c < (1u << hlog)) hi = vkds_probe(l, u, c, hlog);
}
void vkds_corank2_ballot(uint64_t k0, uint64_t k1, uint64_t nl, uint64_t nr, out uint64_t i0, out uint64_t i1) {
  uint h = gl_SubgroupSize / 2u, hlog = uint(findMSB(h)), lane = gl_SubgroupInvocationID;
  bool second = lane >= h;
  uint p = second ? lane - h : lane;
  uint64_t k = second ? k1 : k0;
  uint64_t lo0 = k0 > nr ? k0 - nr : 0ul, hi0 = min(k0, nl), lo1 = k1 > nr ? k1 - nr : 0ul, hi1 = min(k1, nl);
  for (uint round = 0u; round < 64u && (lo0 < hi0 || lo1 < hi1); ++round) { // (uniform: every lane has all four)
    uint64_t lo = second ? lo1 : lo0, hi = second ? hi1 : hi0;
    bool on = lo < hi;
    uint64_t m = on ? vkds_probe(lo, hi, p, hlog) : 0ul; // m < hi <= k, and k - m - 1 < nr
    bool not_yet = on && !vkds_before(vkds_right(on ? k - m - 1ul : 0ul), vkds_left(m));
    vkds_narrow(lo0, hi0, subgroupBallotBitCount(subgroupBallot(not_yet && !second)), hlog);
    vkds_narrow(lo1, hi1, subgroupBallotBitCount(subgroupBallot(not_yet && second)), hlog);
  }
  i0 = lo0, i1 = lo1;
}
#endif
// The same by a binary search in every thread, both searches' loads in flight together
// (the same addresses across the group): where subgroups are small or without ballots.
void vkds_corank2_binary(uint64_t k0, uint64_t k1, uint64_t nl, uint64_t nr, out uint64_t i0, out uint64_t i1) {
  uint64_t lo0 = k0 > nr ? k0 - nr : 0ul, hi0 = min(k0, nl), lo1 = k1 > nr ? k1 - nr : 0ul, hi1 = min(k1, nl);
  for (uint step = 0u; step < 64u && (lo0 < hi0 || lo1 < hi1); ++step) {
    bool on0 = lo0 < hi0, on1 = lo1 < hi1;
    uint64_t m0 = lo0 + (hi0 - lo0) / 2ul, m1 = lo1 + (hi1 - lo1) / 2ul;
    bool before0 = vkds_before(vkds_right(on0 ? k0 - m0 - 1ul : 0ul), vkds_left(on0 ? m0 : 0ul));
    bool before1 = vkds_before(vkds_right(on1 ? k1 - m1 - 1ul : 0ul), vkds_left(on1 ? m1 : 0ul));
    if (on0 && before0) hi0 = m0;
    else if (on0) lo0 = m0 + 1ul;
    if (on1 && before1) hi1 = m1;
    else if (on1) lo1 = m1 + 1ul;
  }
  i0 = lo0, i1 = lo1;
}

void vkds_corank2(uint64_t k0, uint64_t k1, uint64_t nl, uint64_t nr, out uint64_t i0, out uint64_t i1) {
#ifdef VKDS_MERGE_BALLOT
  if (gl_SubgroupSize >= 8u) { // (4 probes a round and more)
    vkds_corank2_ballot(k0, k1, nl, nr, i0, i1);
    return;
  }
#endif
  vkds_corank2_binary(k0, k1, nl, nr, i0, i1);
}

// The work group's `total` outputs from o0 on, outputs k0 .. k0 + total of its merge:
// the left input's [i0, i1) and the right's from k0 - i0 on; nl and nr the inputs'
// lengths.
void vkds_merge_group(uint64_t o0, uint64_t k0, uint64_t i0, uint64_t i1, uint total, uint64_t nl, uint64_t nr) {
  uint t = gl_LocalInvocationIndex;
  // Inputs that are not sorted (or a comparator that is not a strict weak order) make the
  // two ends' searches disagree: i1 below i0, or more than `total` past it, and the parts
  // ran past shared memory and the inputs (lavapipe crashed on an unsorted merge; a
  // probe). Each search's answer lies in its own diagonal's range, so i1 clamped to
  // [max(i0, k1 - nr), min(i0 + total, nl, k1)], never empty, keeps both parts inside
  // their inputs and `total` long: the output is then wrong, as documented, but nothing
  // is read or written out of place.
  uint64_t k1 = k0 + uint64_t(total);
  i0 = clamp(i0, k0 > nr ? k0 - nr : 0ul, min(k0, nl)); // (a search's own range; a stored partition's too)
  i1 = clamp(i1, max(i0, k1 > nr ? k1 - nr : 0ul), min(min(i0 + uint64_t(total), nl), k1));
  uint64_t j0 = k0 - i0;
  uint na = uint(i1 - i0), nb = total - na;
  // the parts: the left's [0, na), the right's [na, total). (Loaded in runs of 4 from
  // multiples of 4 with 16-byte loads, each thread keeping the run's elements that fall
  // in a part, the merge was 8-13% slower on an H200: bench/RESULTS.md, session 39.)
  IN0_T r[VKDS_MERGE_ITEMS];
  for (uint q = 0u; q < VKDS_MERGE_ITEMS; ++q) {
    uint x = t + 256u * q;
    if (x < na) r[q] = vkds_left(i0 + uint64_t(x));
    else if (x < total) r[q] = vkds_right(j0 + uint64_t(x - na));
  }
  for (uint q = 0u; q < VKDS_MERGE_ITEMS; ++q)
    if (t + 256u * q < total) vkds_sh_st(t + 256u * q, r[q]);
  barrier();
  uint d = t * VKDS_MERGE_ITEMS;
  if (d < total) {
    uint lo = d > nb ? d - nb : 0u, hi = min(d, na);
    for (uint step = 0u; step < 16u && lo < hi; ++step) {
      uint m = (lo + hi) / 2u;
      if (vkds_before(vkds_sh(na + d - m - 1u), vkds_sh(m))) hi = m;
      else lo = m + 1u;
    }
    uint i = lo, j = d - lo;
    for (uint q = 0u; q < VKDS_MERGE_ITEMS; ++q) {
      bool has_l = i < na, has_r = j < nb;
      IN0_T a = vkds_sh(has_l ? i : 0u), b = vkds_sh(has_r ? na + j : 0u);
      bool left = has_l && (!has_r || !vkds_before(b, a));
      r[q] = left ? a : b;
      if (left) ++i;
      else ++j;
    }
  }
  barrier();
  for (uint q = 0u; q < VKDS_MERGE_ITEMS; ++q)
    if (d + q < total) vkds_sh_st(d + q, r[q]);
  barrier();
  // a whole group: each thread writes runs of 4, 16-byte stores where the output allows
  // (H200, 2^28 u32: the merge 1,065 -> 1,049 us, the merge sort 24.6 -> 23.0 ms)
  if (total == VKDS_MERGE_OUT) {
    for (uint q = 0u; q < VKDS_MERGE_ITEMS / 4u; ++q) {
      uint x = 4u * (t + 256u * q);
      IN0_T v[4];
      for (uint k = 0u; k < 4u; ++k) v[k] = vkds_sh(x + k);
      vkds_out4(o0 + uint64_t(x), v);
    }
    return;
  }
  for (uint q = 0u; q < VKDS_MERGE_ITEMS; ++q)
    if (t + 256u * q < total) vkds_out(o0 + uint64_t(t + 256u * q), vkds_sh(t + 256u * q));
}
