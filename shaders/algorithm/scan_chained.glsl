// shaders/algorithm/scan_chained.glsl: the single pass for scans whose result does not
// depend on how the elements are grouped: 4-byte integers under plus, multiplies, min,
// max or a bitwise operator, and compaction's 1-or-0 flags under plus (VKDS_COMPACT:
// every shape reads the tile again, and the stores write the kept elements where the
// count puts them; scan.c, `chained`). After scan_tile.glsl, which leaves the
// local size to this file (VKDS_SCAN_CHAINED); the preamble adds the 64-bit atomics,
// GL_KHR_memory_scope_semantics and the ballots. One dispatch; 2n words move (3n with
// VKDS_CH_REREAD, the third from L2 for the most part).
//
// The textbook chained scan with decoupled look-back (Merrill and Garland), after the
// shape that measured fastest in plain Vulkan on an H100 (bench/scan1.comp,
// bench/RESULTS.md 2026-11-26: 0.95x CUB's InclusiveSum for u32 at 2^28 in 1024 x 5
// tiles, where 256-thread tiles of 4,096 elements reached 0.79x):
// - tiles of VKDS_CH_THREADS threads x VKDS_CH_RUNS runs of 4 elements (scan.c: 256 x 4
//   for small scans, 512 x 8 from 2^24 elements, steps between), numbered by an atomic
//   counter, never by gl_WorkGroupID: a group only waits for tiles taken by groups that
//   already run;
// - lane l of subgroup g owns runs r = 0..RUNS-1 at 4-element index (g * RUNS + r) * S + l
//   of the tile: consecutive lanes load consecutive 16 bytes, a whole tile's runs all
//   at once (vkds_ch_load_tile); the tile's scanned values wait out the look-back in
//   registers, or, with VKDS_CH_REREAD (scan.c sets it for groups of 512 threads and
//   more), only the subgroups' totals do and the stores read the tile again (from L2,
//   for the most part). Why: a kept tile in large groups takes ~60 registers a thread,
//   so few groups fit an SM and nothing hides their look-backs' waits; measured on an
//   H100 (bench/RESULTS.md, 2026-11-26, session 20), u32 at 2^28, GPU us: 512 x 8
//   re-reading 932.7 (0.95x CUB), 1024 x 5 kept 986.7, 512 x 4 kept 988.1; in 256-thread
//   tiles the re-read was slower below 2^24 (session 17);
// - each tile publishes one 64-bit word: flag 1 (its aggregate A) or 2 (its inclusive
//   prefix P, everything up to its end, init included) in the high half, the value in
//   the low half; one relaxed atomic carries both, so no ordering is needed;
// - subgroup 0 looks back over S tiles at a time, combining the aggregates down to the
//   nearest inclusive prefix, and publishes its own P;
// The combines of the look-back fall wherever the prefixes happen to be, so the result is
// the same bits only because every grouping of these operators gives the same value:
// floats and user operators keep scan_single.glsl's fixed order.
//
// Every spin is bounded (P(5) polls in all, lavapipe's loop budget: scan_single.glsl);
// after that the group reduces a tile that has published nothing itself and publishes its
// aggregate (the decoupled fallback), so nothing waits on a group that is not running.
// The fallback reads the tile's input: never in place (scan.c).

// The shape (scan.c puts it in the preamble): VKDS_CH_THREADS threads a group, each
// holding VKDS_CH_RUNS runs of 4 elements; VKDS_CH_REREAD as above.
#ifndef VKDS_CH_THREADS
#define VKDS_CH_THREADS 1024
#define VKDS_CH_RUNS 5u
#endif
#define VKDS_CH_TILE (4ul * uint64_t(VKDS_CH_THREADS) * uint64_t(VKDS_CH_RUNS))
layout(local_size_x = VKDS_CH_THREADS) in;

layout(buffer_reference, std430, buffer_reference_align = 8) buffer vkds_dword { uint64_t v; };

#define VKDS_SCAN_TEST_FALLBACK 128ul // scan.c's VKDS_SCAN_SPINS=-1
#define VKDS_CH_A 1u
#define VKDS_CH_P 2u

// Tile k's word, at P(2) + 64 + 8k. Tile numbers are 32-bit, as the counter's (scan.c
// refuses 2^31 tiles, 2^43 elements and more): the look-back's arithmetic in 32 bits
// leaves more registers to a kept tile (1024 x 5 kept on an H100: 0.88x -> 0.89x CUB).
uint64_t vkds_ch_load(uint k) {
  return atomicLoad(vkds_dword(P(2) + 64ul + 8ul * uint64_t(k)).v, gl_ScopeDevice, gl_StorageSemanticsBuffer,
                    gl_SemanticsRelaxed);
}
uint64_t vkds_ch_word(uint flag, ACC_T v) { return uint64_t(flag) << 32 | uint64_t(vkds_value_bits(v).x); }
void vkds_ch_publish(uint k, uint flag, ACC_T v) {
  atomicStore(vkds_dword(P(2) + 64ul + 8ul * uint64_t(k)).v, vkds_ch_word(flag, v), gl_ScopeDevice,
              gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
}
// A fallback's aggregate goes only where the tile has published nothing (never over a P).
void vkds_ch_publish_fallback(uint k, ACC_T v) {
  atomicCompSwap(vkds_dword(P(2) + 64ul + 8ul * uint64_t(k)).v, 0ul, vkds_ch_word(VKDS_CH_A, v), gl_ScopeDevice,
                 gl_StorageSemanticsBuffer, gl_SemanticsRelaxed, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
  atomicAdd(vkds_word(P(2) + 36ul).v, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
}

// The first element of the thread's run r in the tile at `base`.
uint64_t vkds_ch_at(uint64_t base, uint r) {
  return base + 4ul * uint64_t((gl_SubgroupID * VKDS_CH_RUNS + r) * gl_SubgroupSize + gl_SubgroupInvocationID);
}

// The 4 elements at i (a; past the end: not set) and their mapped values (x; past the
// end: the identity).
void vkds_ch_load_elems(uint64_t i, uint64_t n, out IN0_T a[4], out ACC_T x[4]) {
  if (i + 4ul <= n) {
    in0_v(i, a);
    for (uint k = 0u; k < 4u; ++k) x[k] = vkds_map(i + uint64_t(k) + P(6), a[k]);
  } else {
    for (uint k = 0u; k < 4u; ++k) {
      x[k] = vkds_identity();
      if (i + uint64_t(k) < n) {
        a[k] = in0(i + uint64_t(k));
        x[k] = vkds_map(i + uint64_t(k) + P(6), a[k]);
      }
    }
  }
}
void vkds_ch_load_run(uint64_t i, uint64_t n, out ACC_T x[4]) {
  IN0_T a[4];
  vkds_ch_load_elems(i, n, a, x);
}

// A subgroup's total, on every lane.
ACC_T vkds_ch_subgroup_total(ACC_T x) { return vkds_shuffle(vkds_subgroup_scan(x), gl_SubgroupSize - 1u); }

shared ACC_T vkds_ch_sums[VKDS_CH_THREADS]; // subgroup totals (VKDS_CH_THREADS / S of them)
shared ACC_T vkds_ch_red[VKDS_CH_THREADS];  // a fallback's subgroup totals
shared uint vkds_ch_tile_sh;
shared uint vkds_ch_next; // after a look-back round: ~0u found, else a tile to reduce
shared ACC_T vkds_ch_prefix_sh;

// The thread's runs of the tile at `base`, mapped: x[r] is run r's (past the end: the
// identity). In a whole tile every load is issued before any value is used, so a
// thread's runs are in flight together: loaded run by run, each run's use waited for its
// load (a memory latency a run, in the SASS of the H100's driver) and the tile held its
// group that much longer.
void vkds_ch_load_tile(uint64_t base, out ACC_T x[VKDS_CH_RUNS][4]) {
  uint64_t n = P(0);
  if (base + VKDS_CH_TILE <= n) {
    IN0_T a[VKDS_CH_RUNS][4];
    for (uint r = 0u; r < VKDS_CH_RUNS; ++r) in0_v(vkds_ch_at(base, r), a[r]);
    for (uint r = 0u; r < VKDS_CH_RUNS; ++r) {
      uint64_t i = vkds_ch_at(base, r);
      for (uint k = 0u; k < 4u; ++k) x[r][k] = vkds_map(i + uint64_t(k) + P(6), a[r][k]);
    }
  } else {
    for (uint r = 0u; r < VKDS_CH_RUNS; ++r) vkds_ch_load_run(vkds_ch_at(base, r), n, x[r]);
  }
}

ACC_T vkds_ch_run_total(ACC_T x[4]) { return vkds_combine(vkds_combine(x[0], x[1]), vkds_combine(x[2], x[3])); }

// The thread's runs of the tile at `base`, combined (in any order: these operators'
// results do not depend on it).
ACC_T vkds_ch_thread_total(uint64_t base) {
  ACC_T x[VKDS_CH_RUNS][4];
  vkds_ch_load_tile(base, x);
  ACC_T acc = vkds_identity();
  for (uint r = 0u; r < VKDS_CH_RUNS; ++r) acc = vkds_combine(acc, vkds_ch_run_total(x[r]));
  return acc;
}

// The same, run by run: a fallback's reduction of a stalled tile, inside the look-back,
// where a whole tile's loads at once would add their registers to the kept tile's.
ACC_T vkds_ch_thread_total_lean(uint64_t base) {
  ACC_T acc = vkds_identity();
  for (uint r = 0u; r < VKDS_CH_RUNS; ++r) {
    ACC_T x[4];
    vkds_ch_load_run(vkds_ch_at(base, r), P(0), x);
    acc = vkds_combine(acc, vkds_ch_run_total(x));
  }
  return acc;
}

// Run x (loaded) scanned across the subgroup: y[k] is what precedes element k inside the
// subgroup's part of the tile, `run` included (exclusive), or that and the element
// (inclusive); `run` moves past the subgroup's run.
void vkds_ch_scan_run(ACC_T x[4], bool exclusive, inout ACC_T run, out ACC_T y[4]) {
  uint lane = gl_SubgroupInvocationID;
  ACC_T s1 = vkds_combine(x[0], x[1]), s2 = vkds_combine(s1, x[2]), s3 = vkds_combine(s2, x[3]);
  ACC_T incl = vkds_subgroup_scan(s3);
  ACC_T left = vkds_shuffle(incl, lane > 0u ? lane - 1u : 0u);
  ACC_T pre = lane > 0u ? vkds_combine(run, left) : run;
  if (exclusive) {
    y[0] = pre, y[1] = vkds_combine(pre, x[0]), y[2] = vkds_combine(pre, s1), y[3] = vkds_combine(pre, s2);
  } else {
    y[0] = vkds_combine(pre, x[0]), y[1] = vkds_combine(pre, s1);
    y[2] = vkds_combine(pre, s2), y[3] = vkds_combine(pre, s3);
  }
  run = vkds_combine(run, vkds_shuffle(incl, gl_SubgroupSize - 1u));
}

#ifdef VKDS_COMPACT
#if VKDS_OUT_SIZE == 4
// Each subgroup's kept elements of a run, in order, staged so that its lanes write them
// out as consecutive words (scattered 4-byte stores cost the portable path's compaction
// half its speed on an H100: scan_tile.glsl). Larger elements are written directly.
#define VKDS_CH_STAGED 1
shared OUT_T vkds_ch_stage[VKDS_CH_THREADS * 4];
#endif

// A compaction's step for the run at i (vkds_ch_scan_run's shape): the elements whose
// flag is 1 go to out[the flags before them, `run` included], a partition's others to
// out2[their index - that count]; what lands past an output's count is not written.
// `run` moves past the subgroup's run.
void vkds_ch_compact_run(uint64_t i, inout ACC_T run) {
  uint lane = gl_SubgroupInvocationID;
  uint64_t n = P(0);
  IN0_T a[4];
  ACC_T f[4]; // the flags
  vkds_ch_load_elems(i, n, a, f);
  ACC_T s3 = f[0] + f[1] + f[2] + f[3];
  ACC_T incl = vkds_subgroup_scan(s3);
  ACC_T left = vkds_shuffle(incl, lane > 0u ? lane - 1u : 0u);
  uint64_t kept = uint64_t(lane > 0u ? run + left : run); // the flags before element k
#ifdef VKDS_CH_STAGED
  uint stage = gl_SubgroupID * gl_SubgroupSize * 4u; // the subgroup's part of the stage
#endif
  for (uint k = 0u; k < 4u && i + uint64_t(k) < n; ++k) {
    if (f[k] != 0u) {
#ifdef VKDS_CH_STAGED
      vkds_ch_stage[stage + uint(kept - uint64_t(run))] = vkds_out_of(a[k]);
#else
      if (kept < VKDS_OUT_COUNT) out_st(kept, vkds_out_of(a[k]));
#endif
      ++kept;
    } else {
#ifdef VKDS_PARTITION
      uint64_t at = i + uint64_t(k) - kept;
      if (at < VKDS_OUT2_COUNT) out2_st(at, vkds_out2_of(a[k]));
#endif
    }
  }
  ACC_T all = vkds_shuffle(incl, gl_SubgroupSize - 1u); // the subgroup's kept elements of the run
#ifdef VKDS_CH_STAGED
  subgroupMemoryBarrierShared();
  subgroupBarrier();
  for (uint j = lane; j < all; j += gl_SubgroupSize)
    if (uint64_t(run) + uint64_t(j) < VKDS_OUT_COUNT) out_st(uint64_t(run) + uint64_t(j), vkds_ch_stage[stage + j]);
  subgroupBarrier(); // read out before the next run writes the stage again
#endif
  run += all;
}
#endif

// Tile m's aggregate (every thread calls it).
ACC_T vkds_ch_reduce(uint m) {
  ACC_T s = vkds_ch_subgroup_total(vkds_ch_thread_total_lean(uint64_t(m) * VKDS_CH_TILE));
  if (gl_SubgroupInvocationID == 0u) vkds_ch_red[gl_SubgroupID] = s;
  barrier();
  ACC_T total = vkds_identity();
  for (uint g = 0u; g < gl_NumSubgroups; ++g) total = vkds_combine(total, vkds_ch_red[g]);
  barrier(); // vkds_ch_red is read out before the next fallback writes it
  return total;
}

// Subgroup 0: everything before tile k (start, then tiles 0..k-1), looking back S tiles
// a round trip. True with it; false with `reduce`, a tile that published nothing within
// the spins (the group reduces it and looks again). Below tile 0 lies `start`, as a
// prefix: what a tile 0 that only a fallback reduced leaves to find.
bool vkds_ch_look_back(uint k, inout uint spins, ACC_T start, out ACC_T prefix, out uint reduce) {
  uint lane = gl_SubgroupInvocationID, S = gl_SubgroupSize;
  ACC_T acc = vkds_identity();
  int top = int(k) - 1;
  prefix = acc;
  reduce = ~0u;
  // each pass spends a spin or moves S tiles down: at most P(5) + k / S + 1 passes
  for (;;) {
    int t = top - int(lane);
    uint64_t w = t >= 0 ? vkds_ch_load(uint(t)) : vkds_ch_word(VKDS_CH_P, start);
    uint flag = uint(w >> 32);
    uvec4 pb = subgroupBallot(flag == VKDS_CH_P), nb = subgroupBallot(flag == 0u);
    uint lp = subgroupBallotBitCount(pb) > 0u ? subgroupBallotFindLSB(pb) : S;
    uint miss = subgroupBallotBitCount(nb) > 0u ? subgroupBallotFindLSB(nb) : S;
    if (miss < lp) { // a tile above the nearest prefix has published nothing yet
      if (spins == 0u) {
        reduce = uint(top - int(miss));
        return false;
      }
      --spins;
      continue;
    }
    ACC_T v = lane <= lp ? vkds_value_from_bits(uvec2(uint(w), 0u)) : vkds_identity();
    acc = vkds_combine(acc, vkds_ch_subgroup_total(v));
    if (lp < S) {
      prefix = acc;
      return true;
    }
    top -= int(S);
  }
  return false; // (never)
}

// Tile `tile`'s group totals: `before` (the subgroups before this one, on every thread)
// and the tile's `total`; `run` is the subgroup's part.
void vkds_ch_tile_sums(ACC_T run, out ACC_T before, out ACC_T total) {
  if (gl_SubgroupInvocationID == 0u) vkds_ch_sums[gl_SubgroupID] = run;
  barrier();
  before = vkds_identity(), total = vkds_identity();
  for (uint g = 0u; g < gl_NumSubgroups; ++g) {
    if (g == gl_SubgroupID) before = total;
    total = vkds_combine(total, vkds_ch_sums[g]);
  }
}

// What a tile publishes as soon as its total is known: tile 0 its inclusive prefix, the
// others their aggregate.
void vkds_ch_publish_total(uint tile, ACC_T start, ACC_T total) {
  if (vkds_rank() != 0u) return;
  if (tile == 0u) vkds_ch_publish(0u, VKDS_CH_P, vkds_combine(start, total));
  else vkds_ch_publish(tile, VKDS_CH_A, total);
}

// Everything before `tile` (start, then tiles 0..tile-1), on every thread, once its
// aggregate is out (vkds_ch_publish_total); publishes the tile's inclusive prefix. Tiles
// that publish nothing within the spins are reduced here (the decoupled fallback).
ACC_T vkds_ch_prefix_of(uint tile, ACC_T start, ACC_T total, inout uint spins) {
  uint t = vkds_rank(), sg = gl_SubgroupID, lane = gl_SubgroupInvocationID;
  if (tile == 0u) {
    if (t == 0u) vkds_ch_prefix_sh = start;
  } else {
    // the test hook: as if the predecessor stalled, every tile reduces it once
    if ((P(4) & VKDS_SCAN_TEST_FALLBACK) != 0ul) {
      ACC_T m = vkds_ch_reduce(tile - 1u);
      if (t == 0u) vkds_ch_publish_fallback(tile - 1u, m);
    }
    // a round finds the prefix or has one more tile reduced: tile + 1 rounds suffice
    for (uint round = 0u; round <= tile; ++round) {
      if (sg == 0u) {
        ACC_T prefix;
        uint reduce;
        bool found = vkds_ch_look_back(tile, spins, start, prefix, reduce);
        if (lane == 0u) {
          if (found) {
            vkds_ch_publish(tile, VKDS_CH_P, vkds_combine(prefix, total));
            vkds_ch_prefix_sh = prefix;
          }
          vkds_ch_next = found ? ~0u : reduce;
        }
      }
      barrier();
      uint next = vkds_ch_next;
      if (next == ~0u) break;
      ACC_T m = vkds_ch_reduce(next);
      if (t == 0u) vkds_ch_publish_fallback(next, m);
    }
  }
  barrier();
  return vkds_ch_prefix_sh;
}

// A streamed chunk's carry, by thread 0 of the tile holding the chunk's end: everything
// up to its last element (past the end, identities).
void vkds_ch_carry(uint64_t at, ACC_T prefix, ACC_T total) {
  if (vkds_rank() == 0u && (P(4) & VKDS_SCAN_CARRY_OUT) != 0ul && at + VKDS_CH_TILE >= P(0))
    vkds_carry_out(vkds_combine(prefix, total));
}

// Run at i's 4 outputs: one vector store where the run is whole, else those before n.
void vkds_ch_store_run(uint64_t i, uint64_t n, OUT_T o[4]) {
  if (i + 4ul <= n) {
    out_vst(i, o);
  } else {
    for (uint k = 0u; k < 4u && i + uint64_t(k) < n; ++k) out_st(i + uint64_t(k), o[k]);
  }
}

#if defined(VKDS_CH_REREAD) || defined(VKDS_COMPACT)
// The stores of the tile at `at` (its first element): `prefix` everything before the
// tile, `before` the subgroups before this one in it, `total` the tile's own; each run
// read again and scanned, or compacted.
void vkds_ch_store_tile(uint64_t at, ACC_T prefix, ACC_T before, ACC_T total, bool exclusive) {
  uint64_t n = P(0);
  ACC_T p = vkds_combine(prefix, before);
  vkds_ch_carry(at, prefix, total);
#ifdef VKDS_COMPACT
  // the count of kept elements, by the tile that holds the last one
  if (vkds_rank() == 0u && at < n && n - at <= VKDS_CH_TILE)
    vkds_u64(P(3)).v = uint64_t(vkds_combine(prefix, total));
  // one run at a time: loading 2, 5 or 10 runs before compacting them took 1.5-3x the
  // time on an H200 (session 42, bench/RESULTS.md)
  for (uint r = 0u; r < VKDS_CH_RUNS; ++r) vkds_ch_compact_run(vkds_ch_at(at, r), p);
#else
  ACC_T x[VKDS_CH_RUNS][4];
  vkds_ch_load_tile(at, x); // the whole tile first: its loads in flight together
  for (uint r = 0u; r < VKDS_CH_RUNS; ++r) {
    uint64_t i = vkds_ch_at(at, r);
    ACC_T y[4];
    OUT_T o[4];
    vkds_ch_scan_run(x[r], exclusive, p, y); // p moves along the subgroup's runs
    for (uint k = 0u; k < 4u; ++k) o[k] = OUT_T(y[k]);
    vkds_ch_store_run(i, n, o);
  }
#endif
}
#endif

// The group's next tile from the counter, on every thread (a barrier inside).
uint vkds_ch_take() {
  if (vkds_rank() == 0u)
    vkds_ch_tile_sh = atomicAdd(vkds_word(P(2) + 32ul).v, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer,
                                gl_SemanticsRelaxed);
  barrier();
  return vkds_ch_tile_sh;
}

void main() {
  uint tile = vkds_ch_take();
  uint64_t n = P(0), base = uint64_t(tile) * VKDS_CH_TILE;
  bool exclusive = (P(4) & VKDS_SCAN_EXCLUSIVE) != 0ul;

#if defined(VKDS_CH_REREAD) || defined(VKDS_COMPACT)
  // The subgroup's part of the tile, reduced; the stores read the tile again (below).
  ACC_T run = vkds_ch_subgroup_total(vkds_ch_thread_total(base));
#else
  // Each run scanned, and each subgroup's runs chained: v[4r + k] is run r's y[k]
  // (vkds_ch_scan_run), kept in registers across the look-back.
  ACC_T v[VKDS_CH_RUNS * 4u];
  ACC_T run = vkds_identity(); // the subgroup's runs so far
  ACC_T x[VKDS_CH_RUNS][4];
  vkds_ch_load_tile(base, x);
  for (uint r = 0u; r < VKDS_CH_RUNS; ++r) {
    ACC_T y[4];
    vkds_ch_scan_run(x[r], exclusive, run, y);
    for (uint k = 0u; k < 4u; ++k) v[4u * r + k] = y[k];
  }
#endif
  ACC_T before, total; // the subgroups before this one; the tile
  vkds_ch_tile_sums(run, before, total);
  bool hs;
  ACC_T start = vkds_scan_start(hs);
  if (!hs) start = vkds_identity();
  vkds_ch_publish_total(tile, start, total);
  uint spins = uint(P(5));
  ACC_T prefix = vkds_ch_prefix_of(tile, start, total, spins);
  // The tile's place again, read from shared memory: the compiler cannot prove it equal
  // to `base`, so it does not keep the loads' 64-bit addresses alive across the look-back
  // for the stores (two registers a run, where 1024-thread groups get 64 in all; 2^28
  // u32 1,189 -> 1,136 us on an H100 before the re-read: bench/RESULTS.md, session 16).
  uint64_t at = uint64_t(vkds_ch_tile_sh) * VKDS_CH_TILE;
#if defined(VKDS_CH_REREAD) || defined(VKDS_COMPACT)
  vkds_ch_store_tile(at, prefix, before, total, exclusive);
#else
  ACC_T p = vkds_combine(prefix, before);
  vkds_ch_carry(at, prefix, total);
  for (uint r = 0u; r < VKDS_CH_RUNS; ++r) {
    uint64_t i = vkds_ch_at(at, r);
    OUT_T o[4];
    for (uint k = 0u; k < 4u; ++k) o[k] = OUT_T(vkds_combine(p, v[4u * r + k]));
    vkds_ch_store_run(i, n, o);
  }
#endif
}
