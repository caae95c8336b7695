// shaders/algorithm/msort.glsl: the comparison sort, a stable merge sort by the user's
// comparator (lib/algorithm/msort.c records it). Appended by lib/algorithm/codegen.c
// after the code it generates, which defines what follows, and merge_group.glsl:
//   P(k)                              launch parameter k (uint64_t), below
//   IN0_T, in0(i), in0_st(i, v)       the sequence, read and written in place
//   in0_vst(i, r)                     its elements i .. i + 3 (i a multiple of 4)
//   VKDS_ELEM_SIZE                    an element's bytes in the scratch (IN0_T's std430
//                                     stride: a zip's tuple is a struct)
//   vkds_msort_el, vkds_el_ld, vkds_el_st   a pointer to a scratch element, its load, store
//   vkds_el_st4(i, r)                 scratch elements i .. i + 3 (16-byte stores for numbers)
//   vkds_less(a, b)                   the comparator: a must come before b
// Parameters: P(0) elements n, P(2) the scratch's address (A: n elements, 16-byte
// aligned; then 8 bytes a merge group, vkds_bounds_at), P(4) the stage: 0 the tiles,
// k > 0 the merge of runs of VKDS_TILE << (k - 1) elements into runs twice as long; bit
// 8: the stage reads A (and writes the sequence S), else it reads S and writes A; bit 9:
// it writes where it reads (the tiles alone, in place: a work group reads its whole tile
// before it writes); bit 10: the merge's partition (a thread a merge group); bit 11: the
// merge's groups search for their ends themselves (no partition stage before it).
//
// Stable everywhere: within a thread's 4 elements an insertion sort moves an element only
// past elements that come after it; every merge takes the left run's element unless the
// right run's comes before it (vkds_less(right, left)). A merge finds where each work
// group's outputs start by a binary search on the diagonal of its pair of runs (merge
// path), so no group waits on another, and every loop is bounded (64 steps of search, 8
// outputs a thread).
layout(local_size_x = 256) in;

#define VKDS_TILE 1024u // 256 threads, 4 elements each

// two tiles' worth: the tile stage's two buffers, a merge group's 2048 (VKDS_SH_AT)
shared IN0_T vkds_sm[VKDS_SH_SLOTS(2u * VKDS_TILE)];
#define vkds_run(s, i) vkds_sm[VKDS_SH_AT((s) * VKDS_TILE + (i))]

bool vkds_from_a() { return (P(4) & 0x100ul) != 0ul; }
vkds_msort_el vkds_a_at(uint64_t i) { return vkds_msort_el(P(2) + i * uint64_t(VKDS_ELEM_SIZE)); }
IN0_T vkds_src(uint64_t i) { return vkds_from_a() ? vkds_el_ld(vkds_a_at(i)) : in0(i); }
void vkds_dst(uint64_t i, IN0_T v) {
  bool to_s = vkds_from_a() || (P(4) & 0x200ul) != 0ul;
  if (to_s) in0_st(i, v);
  else vkds_el_st(vkds_a_at(i), v);
}

// ---- the tiles: sorted in shared memory ----

// How many of the first k outputs of merging left [l0, l0 + nl) and right [r0, r0 + nr)
// of buffer s of vkds_run come from the left.
uint vkds_corank_shared(uint s, uint k, uint l0, uint nl, uint r0, uint nr) {
  uint lo = k > nr ? k - nr : 0u, hi = min(k, nl);
  for (uint step = 0u; step < 16u && lo < hi; ++step) {
    uint i = (lo + hi) / 2u;
    if (vkds_less(vkds_run(s, r0 + k - i - 1u), vkds_run(s, l0 + i))) hi = i;
    else lo = i + 1u;
  }
  return lo;
}

void vkds_sort_tile(uint64_t base, uint valid) {
  uint t = gl_LocalInvocationIndex, e = 4u * t;
  IN0_T x[4];
  for (uint q = 0u; q < 4u; ++q)
    if (e + q < valid) x[q] = vkds_src(base + uint64_t(e + q));
  // the thread's 4 (fewer at the end): insertion sort
  uint m = e < valid ? min(valid - e, 4u) : 0u;
  for (uint q = 1u; q < m; ++q)
    for (uint p = q; p > 0u && vkds_less(x[p], x[p - 1u]); --p) {
      IN0_T y = x[p];
      x[p] = x[p - 1u], x[p - 1u] = y;
    }
  for (uint q = 0u; q < m; ++q) vkds_run(0, e + q) = x[q];
  barrier();
  // runs of w become runs of 2w: thread t writes outputs 4t .. 4t + 3 of the tile
  uint s = 0u;
  for (uint w = 4u; w < VKDS_TILE; w <<= 1) {
    uint pair = e & ~(2u * w - 1u), l0 = pair, r0 = min(pair + w, valid);
    uint nl = r0 - min(l0, r0), nr = min(pair + 2u * w, valid) - r0;
    if (e < valid) {
      uint k = e - pair, i = vkds_corank_shared(s, k, l0, nl, r0, nr), j = k - i;
      for (uint q = 0u; q < 4u && e + q < valid; ++q) {
        bool has_l = i < nl, has_r = j < nr; // (no index past a run: see vkds_merge_runs)
        IN0_T a = vkds_run(s, has_l ? l0 + i : l0), b = vkds_run(s, has_r ? r0 + j : l0);
        bool left = has_l && (!has_r || !vkds_less(b, a));
        vkds_run(s ^ 1u, e + q) = left ? a : b;
        if (left) ++i;
        else ++j;
      }
    }
    barrier();
    s ^= 1u;
  }
  for (uint q = 0u; q < m; ++q) vkds_dst(base + uint64_t(e + q), vkds_run(s, e + q));
}

// ---- the merges of runs across tiles ----
//
// Merge path by work groups (merge_group.glsl, in front of this file): each group writes
// VKDS_MERGE_OUT consecutive outputs of one pair of runs (a run holds at least VKDS_TILE
// elements, so a group's outputs never span two pairs). The partition stage (bit 10), a
// thread a group, finds where the group's first output comes from and keeps it in the
// scratch after A; with bit 11 the merge's groups search for both their ends themselves
// instead. Global memory is read and written once a pass, in whole lines; only the
// searches go to it at random.

IN0_T vkds_sh(uint x) { return vkds_sm[VKDS_SH_AT(x)]; } // all of it
void vkds_sh_st(uint x, IN0_T v) { vkds_sm[VKDS_SH_AT(x)] = v; }

// the pair of runs being merged: the left run starts at vkds_l0, the right at vkds_r0
uint64_t vkds_l0, vkds_r0;
bool vkds_before(IN0_T x, IN0_T y) { return vkds_less(x, y); }
IN0_T vkds_left(uint64_t i) { return vkds_src(vkds_l0 + i); }
IN0_T vkds_right(uint64_t i) { return vkds_src(vkds_r0 + i); }
void vkds_out(uint64_t o, IN0_T v) { vkds_dst(o, v); }
void vkds_out4(uint64_t o, IN0_T v[4]) {
  if (vkds_from_a() || (P(4) & 0x200ul) != 0ul) in0_vst(o, v);
  else vkds_el_st4(o, v);
}

layout(buffer_reference, std430, buffer_reference_align = 8) buffer vkds_msort_u64 { uint64_t v; };
// the partition: per group, its first output's place in the left run
uint64_t vkds_bounds_at(uint64_t g) {
  return P(2) + ((P(0) * uint64_t(VKDS_ELEM_SIZE) + 15ul) & ~15ul) + g * 8ul;
}

// The pair of runs that output o belongs to: sets vkds_l0 and vkds_r0, returns its end.
uint64_t vkds_pair_of(uint64_t o, uint64_t run) {
  uint64_t n = P(0);
  // run is a power of two: the pair's start by a mask, not by a 64-bit division. With
  // `o / (2 * run) * (2 * run)` here, an NVIDIA H100 (driver 580.159.04) merged wrong
  // elements from the first pass (the threads at a pair's start, other than the first
  // pair's, read as if both runs were used up) and from 16,384 elements hung the GPU;
  // with the mask every size sorts right there (bench/RESULTS.md, 2026-11-25).
  vkds_l0 = o & ~(2ul * run - 1ul);
  vkds_r0 = min(vkds_l0 + run, n);
  return min(vkds_l0 + 2ul * run, n);
}

void vkds_partition(uint64_t run) {
  uint64_t g = vkds_global_index(), o = g * uint64_t(VKDS_MERGE_OUT);
  if (o >= P(0)) return;
  uint64_t end = vkds_pair_of(o, run);
  vkds_msort_u64(vkds_bounds_at(g)).v = vkds_corank(o - vkds_l0, vkds_r0 - vkds_l0, end - vkds_r0);
}

void vkds_merge_runs(uint64_t run) {
  uint64_t n = P(0);
  uint t = gl_LocalInvocationIndex;
  // the group (its first thread's index / 256) and its first output
  uint64_t g = (vkds_global_index() - uint64_t(t)) >> 8, g0 = g * uint64_t(VKDS_MERGE_OUT);
  if (g0 >= n) return; // the whole group
  uint64_t g1 = min(g0 + uint64_t(VKDS_MERGE_OUT), n), end = vkds_pair_of(g0, run);
  uint64_t nl = vkds_r0 - vkds_l0, i0, i1;
  // where the group's outputs come from: [i0, i1) of the left run, the rest of the right;
  // a group that ends its pair uses up the left run (the next group's partition is the
  // next pair's)
  if ((P(4) & 0x800ul) != 0ul) { // short runs: the group searches, no partition stage
    vkds_corank2(g0 - vkds_l0, g1 - vkds_l0, nl, end - vkds_r0, i0, i1);
  } else {
    i0 = vkds_msort_u64(vkds_bounds_at(g)).v;
    i1 = g1 == end ? nl : vkds_msort_u64(vkds_bounds_at(g + 1ul)).v;
  }
  vkds_merge_group(g0, g0 - vkds_l0, i0, i1, uint(g1 - g0), nl, end - vkds_r0);
}

void main() {
  uint stage = uint(P(4)) & 255u;
  if (stage == 0u) {
    uint64_t base = uint64_t(vkds_global_id().x / 256u) * uint64_t(VKDS_TILE);
    vkds_sort_tile(base, uint(min(P(0) - base, uint64_t(VKDS_TILE))));
  } else if ((P(4) & 0x400ul) != 0ul) {
    vkds_partition(uint64_t(VKDS_TILE) << (stage - 1u));
  } else {
    vkds_merge_runs(uint64_t(VKDS_TILE) << (stage - 1u));
  }
}
