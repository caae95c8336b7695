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
