// shaders/algorithm/msort.glsl: the comparison sort, a stable merge sort by the user's
// comparator (lib/algorithm/msort.c records it). Appended by lib/algorithm/codegen.c
// after the code it generates, which defines:
//   P(k)                              launch parameter k (uint64_t), below
//   IN0_T, in0(i), in0_st(i, v)       the sequence, read and written in place
//   VKDS_ELEM_SIZE, VKDS_EL_PTR       its element's bytes, a pointer type to one
//   vkds_less(a, b)                   the comparator: a must come before b
// Parameters: P(0) elements n, P(2) the scratch's address (A: n elements, 16-byte
// aligned), P(4) the stage: 0 the tiles, k > 0 the merge of runs of VKDS_TILE << (k - 1)
// elements into runs twice as long; bit 8: the stage reads A (and writes the sequence S),
// else it reads S and writes A; bit 9: it writes where it reads (the tiles alone, in
// place: a work group reads its whole tile before it writes).
//
// Stable everywhere: within a thread's 4 elements an insertion sort moves an element only
// past elements that come after it; every merge takes the left run's element unless the
// right run's comes before it (vkds_less(right, left)). A merge finds where each thread's
// 4 outputs start by a binary search on the diagonal of its pair of runs (merge path), so
// no thread waits on another across work groups, and every loop is bounded (64 steps of
// search, 4 outputs).
layout(local_size_x = 256) in;

#define VKDS_TILE 1024u // 256 threads, 4 elements each

shared IN0_T vkds_run[2][VKDS_TILE];

bool vkds_from_a() { return (P(4) & 0x100ul) != 0ul; }
IN0_T vkds_src(uint64_t i) { return vkds_from_a() ? VKDS_EL_PTR(P(2) + i * uint64_t(VKDS_ELEM_SIZE)).v : in0(i); }
void vkds_dst(uint64_t i, IN0_T v) {
  bool to_s = vkds_from_a() || (P(4) & 0x200ul) != 0ul;
  if (to_s) in0_st(i, v);
  else VKDS_EL_PTR(P(2) + i * uint64_t(VKDS_ELEM_SIZE)).v = v;
}

// ---- the tiles: sorted in shared memory ----

// How many of the first k outputs of merging left [l0, l0 + nl) and right [r0, r0 + nr)
// of vkds_run[s] come from the left.
uint vkds_corank_shared(uint s, uint k, uint l0, uint nl, uint r0, uint nr) {
  uint lo = k > nr ? k - nr : 0u, hi = min(k, nl);
  for (uint step = 0u; step < 16u && lo < hi; ++step) {
    uint i = (lo + hi) / 2u;
    if (vkds_less(vkds_run[s][r0 + k - i - 1u], vkds_run[s][l0 + i])) hi = i;
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
  for (uint q = 0u; q < m; ++q) vkds_run[0][e + q] = x[q];
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
        IN0_T a = vkds_run[s][has_l ? l0 + i : l0], b = vkds_run[s][has_r ? r0 + j : l0];
        bool left = has_l && (!has_r || !vkds_less(b, a));
        vkds_run[s ^ 1u][e + q] = left ? a : b;
        if (left) ++i;
        else ++j;
      }
    }
    barrier();
    s ^= 1u;
  }
  for (uint q = 0u; q < m; ++q) vkds_dst(base + uint64_t(e + q), vkds_run[s][e + q]);
}

// ---- the merges of runs across tiles ----

uint64_t vkds_corank(uint64_t k, uint64_t l0, uint64_t nl, uint64_t r0, uint64_t nr) {
  uint64_t lo = k > nr ? k - nr : 0ul, hi = min(k, nl);
  for (uint step = 0u; step < 64u && lo < hi; ++step) {
    uint64_t i = lo + (hi - lo) / 2ul;
    if (vkds_less(vkds_src(r0 + k - i - 1ul), vkds_src(l0 + i))) hi = i;
    else lo = i + 1ul;
  }
  return lo;
}

void vkds_merge_runs(uint64_t run) {
  uint64_t n = P(0), o = vkds_global_index() * 4ul;
  if (o >= n) return;
  // run is a power of two: the pair's start by a mask, not by a 64-bit division. With
  // `o / (2 * run) * (2 * run)` here, an NVIDIA H100 (driver 580.159.04) merged wrong
  // elements from the first pass (the threads at a pair's start, other than the first
  // pair's, read as if both runs were used up) and from 16,384 elements hung the GPU;
  // with the mask every size sorts right there (bench/RESULTS.md, 2026-11-25).
  uint64_t pair = o & ~(2ul * run - 1ul), l0 = pair, r0 = min(pair + run, n);
  uint64_t nl = r0 - l0, nr = min(pair + 2ul * run, n) - r0;
  uint64_t k = o - pair, i = vkds_corank(k, l0, nl, r0, nr), j = k - i;
  // Each output loads the next element of each run once (not three times), and no
  // index past a run is formed, even for a compiler that evaluates both sides of a
  // select: past the right run's end may lie past the buffer.
  for (uint q = 0u; q < 4u && o + uint64_t(q) < n; ++q) {
    bool has_l = i < nl, has_r = j < nr;
    IN0_T a = vkds_src(has_l ? l0 + i : l0), b = vkds_src(has_r ? r0 + j : l0);
    bool left = has_l && (!has_r || !vkds_less(b, a));
    vkds_dst(o + uint64_t(q), left ? a : b);
    if (left) ++i;
    else ++j;
  }
}

void main() {
  uint stage = uint(P(4)) & 255u;
  if (stage == 0u) {
    uint64_t base = uint64_t(vkds_global_id().x / 256u) * uint64_t(VKDS_TILE);
    vkds_sort_tile(base, uint(min(P(0) - base, uint64_t(VKDS_TILE))));
  } else {
    vkds_merge_runs(uint64_t(VKDS_TILE) << (stage - 1u));
  }
}
