// shaders/algorithm/scan_portable.glsl: the portable scan, reduce-then-scan (after
// scan_tile.glsl). No work group ever waits for another: three dispatches with
// barriers between them, chosen by P(4) & 3:
//   0  group g folds the tiles [g * per, (g + 1) * per) (per = P(5)) left to right into
//      its total, stored at group value g;
//   1  one group turns the group totals into each group's carry: group g's value
//      becomes start op total(0) op ... op total(g - 1) (scanned as a tile's thread
//      totals are, 4 per thread), start being init or a streamed chunk's carry;
//   2  group g scans its tiles in order, starting from its carry (group 0: start).
// With one group only pass 2 runs. 3n words move (read, read, write) against the single
// pass's 2n, but the passes depend only on barriers between dispatches, which every
// device keeps.

SCAN_T vkds_group_load(uint g) { return vkds_from_bits(vkds_words_load(P(2) + 64ul + 16ul * g)); }
void vkds_group_store(uint g, SCAN_T v) { vkds_words_store(P(2) + 64ul + 16ul * g, vkds_bits(v)); }

// Pass 1: the group totals (at most 1024: 4 per thread) become carries.
void vkds_scan_group_totals(uint groups) {
  uint t = vkds_rank();
  SCAN_T u[4];
  for (uint k = 0u; k < 4u; ++k) {
    uint j = 4u * t + k;
    if (j < groups) {
      SCAN_T x = vkds_group_load(j);
      u[k] = k > 0u ? vkds_scan_combine(u[k - 1u], x) : x;
    } else {
      u[k] = k > 0u ? u[k - 1u] : vkds_scan_identity();
    }
  }
  bool th;
  SCAN_T total;
  SCAN_T tp = vkds_tile_prefix(u[3], th, total); // every load is done past its barriers
  bool hs;
  SCAN_T start = vkds_scan_start(hs);
  bool h;
  SCAN_T p;
  vkds_join(hs, start, th, tp, h, p); // what precedes group 4t
  for (uint k = 0u; k < 4u; ++k) {
    uint j = 4u * t + k;
    if (j == 0u || j >= groups) continue; // group 0 starts from `start` itself
    if (k == 0u) vkds_group_store(j, p);
    else vkds_group_store(j, h ? vkds_scan_combine(p, u[k - 1u]) : u[k - 1u]);
  }
}

// Pass 0's total of tiles [first, end) when any order gives the same bits: a commutative
// operator (codegen.c says which: the built-in ones) on integers, not by key. The group
// then reads its tiles as a reduction does, consecutive threads on consecutive runs of
// 4, folding into one value a thread, instead of each tile's runs transposed through
// shared memory and scanned (two barriers and a group scan a tile, for a total). On GPUs
// only (VKDS_STRIPED_TILES): there the group's loads are coalesced this way; a CPU
// device's threads read their own runs already.
#if defined(VKDS_STRIPED_TILES) && defined(VKDS_OP_COMMUTATIVE) && !defined(VKDS_SEGMENTED) && \
    (VKDS_ACC_TYPE == 1 || VKDS_ACC_TYPE == 2 || VKDS_ACC_TYPE == 4 || VKDS_ACC_TYPE == 5)
#define VKDS_FAST_TOTALS 1
#define VKDS_RUNS (uint(VKDS_ITEMS) / 4u) // runs of 4 a thread a tile
SCAN_T vkds_fast_total(uint64_t first, uint64_t end, uint64_t n) {
  uint t = vkds_rank();
  ACC_T acc = vkds_identity();
  for (uint64_t tile = first; tile < end; ++tile) { // per <= 1024 (scan.c)
    uint64_t base = tile * VKDS_TILE;
    if (base + VKDS_TILE <= n) {
      IN0_T a[VKDS_RUNS][4];
      for (uint q = 0u; q < VKDS_RUNS; ++q) in0_v(base + 4ul * uint64_t(q * 256u + t), a[q]);
      for (uint q = 0u; q < VKDS_RUNS; ++q)
        for (uint k = 0u; k < 4u; ++k) {
          uint64_t i = base + 4ul * uint64_t(q * 256u + t) + uint64_t(k);
          acc = vkds_combine(acc, vkds_map(i + P(6), a[q][k]));
        }
    } else {
      for (uint64_t i = base + uint64_t(t); i < n; i += 256ul) acc = vkds_combine(acc, vkds_map(i + P(6), in0(i)));
    }
  }
  bool has;
  SCAN_T total;
  vkds_tile_prefix(acc, has, total);
  return total;
}
#endif

// Pass 2's tiles by rows, for integer scans (not by key, not compaction) on GPUs: exact,
// so the grouping of the combines may differ from the float order (algorithm.h). Row q
// of a tile is 256 runs of 4 consecutive elements, thread t's at base + 4 (256 q + t):
// each thread loads its runs straight from memory (consecutive threads, consecutive 16
// bytes), scans each run in place, each subgroup scans its lanes' run totals per row,
// and one barrier shares the subgroups' row totals, which every thread folds in index
// order (row by row, subgroup by subgroup) into its prefixes. Against the tile moved
// through shared memory and back (four barriers and a thread's 16 elements out of
// shared memory twice) that is half the barriers and no transposition; the elements
// still combine in index order only, so an operator need not commute.
#if defined(VKDS_STRIPED_TILES) && !defined(VKDS_SEGMENTED) && !defined(VKDS_COMPACT) && \
    (VKDS_ACC_TYPE == 1 || VKDS_ACC_TYPE == 2 || VKDS_ACC_TYPE == 4 || VKDS_ACC_TYPE == 5)
#define VKDS_ROW_TILES 1
#ifndef VKDS_RUNS
#define VKDS_RUNS (uint(VKDS_ITEMS) / 4u)
#endif
shared ACC_T vkds_row_sh[VKDS_ITEMS / 4][256]; // [row][subgroup]: the subgroups' row totals

// Scans the tile at base from (has, carry); returns the tile's total.
ACC_T vkds_row_tile(uint64_t base, uint64_t n, bool has, ACC_T carry) {
  uint t = vkds_rank(), lane = gl_SubgroupInvocationID, sg = gl_SubgroupID, S = gl_SubgroupSize;
  bool whole = base + VKDS_TILE <= n;
  ACC_T v[VKDS_RUNS][4];
  if (whole) {
    IN0_T a[VKDS_RUNS][4];
    for (uint q = 0u; q < VKDS_RUNS; ++q) in0_v(base + 4ul * uint64_t(q * 256u + t), a[q]);
    for (uint q = 0u; q < VKDS_RUNS; ++q)
      for (uint k = 0u; k < 4u; ++k) v[q][k] = vkds_map(base + 4ul * uint64_t(q * 256u + t) + uint64_t(k) + P(6), a[q][k]);
  } else {
    // past the end an element is the identity: it only ever follows the last one
    for (uint q = 0u; q < VKDS_RUNS; ++q)
      for (uint k = 0u; k < 4u; ++k) {
        uint64_t i = base + 4ul * uint64_t(q * 256u + t) + uint64_t(k);
        v[q][k] = i < n ? vkds_map(i + P(6), in0(i)) : vkds_identity();
      }
  }
  ACC_T before[VKDS_RUNS]; // the lanes' exclusive prefixes in their subgroup's row (lane 0: none)
  for (uint q = 0u; q < VKDS_RUNS; ++q) {
    for (uint k = 1u; k < 4u; ++k) v[q][k] = vkds_combine(v[q][k - 1u], v[q][k]);
    ACC_T incl = vkds_subgroup_scan(v[q][3]);
    before[q] = vkds_shuffle(incl, lane > 0u ? lane - 1u : 0u);
    ACC_T row = vkds_shuffle(incl, S - 1u); // (every lane shuffles)
    if (lane == 0u) vkds_row_sh[q][sg] = row;
  }
  barrier();
  // the prefix of each of the thread's rows: the carry, the rows before, the subgroups
  // before in the row, in order
  bool h = has;
  ACC_T run = carry, pre[VKDS_RUNS];
  bool hp[VKDS_RUNS];
  for (uint q = 0u; q < VKDS_RUNS; ++q)
    for (uint s = 0u; s < gl_NumSubgroups; ++s) {
      if (s == sg) pre[q] = run, hp[q] = h;
      ACC_T x = vkds_row_sh[q][s];
      run = h ? vkds_combine(run, x) : x;
      h = true;
    }
  barrier(); // vkds_row_sh is the next tile's
  bool exclusive = (P(4) & VKDS_SCAN_EXCLUSIVE) != 0ul;
  for (uint q = 0u; q < VKDS_RUNS; ++q) {
    uint64_t i0 = base + 4ul * uint64_t(q * 256u + t);
    bool hq = hp[q] || lane > 0u;
    ACC_T p = hp[q] ? (lane > 0u ? vkds_combine(pre[q], before[q]) : pre[q]) : before[q];
    ACC_T w[4], o[4];
    for (uint k = 0u; k < 4u; ++k) w[k] = hq ? vkds_combine(p, v[q][k]) : v[q][k];
    o[0] = exclusive ? (hq ? p : vkds_identity()) : w[0];
    for (uint k = 1u; k < 4u; ++k) o[k] = exclusive ? w[k - 1u] : w[k];
    if ((P(4) & VKDS_SCAN_CARRY_OUT) != 0ul && i0 < n && n - i0 <= 4ul) vkds_carry_out(w[uint(n - i0) - 1u]);
    if (whole) {
      OUT_T r[4] = OUT_T[4](OUT_T(o[0]), OUT_T(o[1]), OUT_T(o[2]), OUT_T(o[3]));
      out_vst(i0, r);
    } else {
      for (uint k = 0u; k < 4u; ++k)
        if (i0 + uint64_t(k) < n) out_st(i0 + uint64_t(k), OUT_T(o[k]));
    }
  }
  return run;
}
#endif

void main() {
  uint pass = uint(P(4) & 3ul);
  uint64_t n = P(0), per = P(5);
  uint64_t tiles = (n + VKDS_TILE - 1ul) / VKDS_TILE;
  if (pass == 1u) {
    vkds_scan_group_totals(uint((tiles + per - 1ul) / per));
    return;
  }
  uint g = gl_WorkGroupID.x, t = vkds_rank();
  uint64_t first = uint64_t(g) * per, end = min(first + per, tiles);
  bool has = false;
  SCAN_T carry = vkds_scan_identity();
  if (pass == 2u) {
    if (g == 0u) carry = vkds_scan_start(has);
    else has = true, carry = vkds_group_load(g);
  }
#ifdef VKDS_FAST_TOTALS
  if (pass == 0u) {
    SCAN_T total = vkds_fast_total(first, end, n);
    if (t == 0u) vkds_group_store(g, total);
    return;
  }
#endif
#ifdef VKDS_ROW_TILES
  if (pass == 2u) {
    for (uint64_t tile = first; tile < end; ++tile) { // per <= 1024 (scan.c)
      carry = vkds_row_tile(tile * VKDS_TILE, n, has, carry);
      has = true;
    }
    return;
  }
#endif
  // per <= 1024 (scan.c): lavapipe's loop budget
  for (uint64_t tile = first; tile < end; ++tile) {
    uint64_t e0 = tile * VKDS_TILE + uint64_t(t) * uint64_t(VKDS_ITEMS);
    SCAN_T v[VKDS_ITEMS];
    vkds_thread_scan(e0, n, v);
    bool th;
    SCAN_T total;
    SCAN_T tp = vkds_tile_prefix(v[VKDS_ITEMS - 1], th, total);
    if (pass == 2u) {
      bool h;
      SCAN_T p;
      vkds_join(has, carry, th, tp, h, p);
      vkds_store_run(e0, n, v, h, p);
    }
    carry = has ? vkds_scan_combine(carry, total) : total;
    has = true;
  }
  if (pass == 0u && t == 0u) vkds_group_store(g, carry);
}
