// shaders/algorithm/scan_single.glsl: the single-pass scan, a chained scan with
// decoupled look-back and decoupled fallback (after scan_tile.glsl; the preamble adds
// the 64-bit atomics, GL_KHR_memory_scope_semantics and the ballots). One dispatch;
// 2n words move.
//
// Tiles are numbered by an atomic counter, never by gl_WorkGroupID: a group only waits
// for values of tiles taken by groups that already run.
//
// What tiles publish, with S the subgroup size (32 on NVIDIA, 8 on lavapipe): tiles come
// in blocks of S, blocks in superblocks of S (S * S tiles: 1024 on NVIDIA, 4M elements of
// 4 bytes).
//   A(k)  tile k's aggregate, by its owner as soon as it has it;
//   B(c)  block c's aggregate, the Kogge-Stone scan over lanes of its S A's (lane S-1's
//         value), by the block's last tile;
//   R(s)  everything up to the end of superblock s: R(s-1) (or start) op the same scan
//         over its S B's, by the superblock's last tile.
// Tile k (block b = k / S, lane i = k % S in it; superblock s = b / S, lane j = b % S)
// starts from R(s-1) op Bscan(j-1) op Ascan(i-1): the lane scans of the B's of its
// superblock before its block and of the A's of its block before it (a part left out
// where it is empty). So a tile waits on at most 2S values, read by the S lanes of
// subgroup 0 in three rounds of loads, none of them published by a tile that itself
// waits on a chain: R(s-1) comes from a tile that started S * S tiles earlier. A chained
// look-back that walks back to the nearest inclusive prefix moves that prefix forward
// only a few windows per memory round trip: on an H100 it paced the whole scan at one
// 4096-element tile per 66 ns (0.2x CUB), where the kernel without it ran 4x faster.
//
// Repeatable floats: every value above is a fixed expression of the tiles' aggregates
// (the lane scans' trees are fixed for S), whoever computes it and whenever; A is the
// same code on the same elements for the owner and a fallback. So a float scan gives the
// same bits every time on a device (the order: algorithm.h).
//
// Each value goes in 64-bit words that carry their own flag: the flag in the high half,
// 32 bits of the value in the low half (one word for a 4-byte value, two for an 8-byte
// one; a segmented scan's pairs one more, for the starts). A reader that sees the flag
// in every word of a value holds the value, with no other location to order after it;
// so every access is a relaxed atomic (Device scope) and no release/acquire pairing is
// needed, on any memory model. That is also what lavapipe (Mesa 22.3) needs: there an
// atomic with acquire semantics acts as a work-group barrier, and in code only the
// look-back subgroup runs it desynchronizes the group's barriers.
//
// Every spin is bounded: a group spins P(5) (low half) times in all; after that a value
// not there is made by the group itself (the decoupled fallback): an A by reducing the
// tile, a B from its block's A's, an R from the R before it and its B's (each publishes
// what it made), so nothing ever waits on a group that is not running (lavapipe promises
// no forward progress between groups). One budget for all spins, not one per wait:
// lavapipe gives an invocation 65,535 loop iterations in all, shared by every loop of the
// shader, and silently ends every loop once they are spent. The fallback reads the tile's
// input: so this path never runs in place (scan.c), where the owner may already have
// overwritten it.

#define VKDS_SCAN_TEST_FALLBACK 128ul // scan.c's VKDS_SCAN_SPINS=-1

#define VKDS_KIND_A 0u
#define VKDS_KIND_B 1u
#define VKDS_KIND_R 2u

layout(buffer_reference, std430, buffer_reference_align = 8) buffer vkds_dword { uint64_t v; };

// The values, as planes (structure of arrays): word w of entry e of a kind at plane
// kind * VKDS_VALUE_WORDS + w, each plane 8 bytes an entry and as long as there are
// tiles (S is not known on the host). Lanes reading S neighbouring entries read S
// consecutive words per plane: one or two 128-byte lines.
uint64_t vkds_tiles() { return (P(0) + VKDS_TILE - 1ul) / VKDS_TILE; }
uint64_t vkds_state_word(uint kind, uint64_t e, uint w) {
  return P(2) + 64ul + 8ul * (uint64_t(kind * uint(VKDS_VALUE_WORDS) + w) * vkds_tiles() + e);
}

uint64_t vkds_state_load(uint kind, uint64_t e, uint w) {
  return atomicLoad(vkds_dword(vkds_state_word(kind, e, w)).v, gl_ScopeDevice, gl_StorageSemanticsBuffer,
                    gl_SemanticsRelaxed);
}

// Entry e of `kind`, when it is there.
bool vkds_read(uint kind, uint64_t e, out SCAN_T v) {
  uint64_t w0 = vkds_state_load(kind, e, 0u);
  uint64_t w1 = w0, w2 = w0;
#if VKDS_VALUE_WORDS >= 2
  w1 = vkds_state_load(kind, e, 1u);
#endif
#if VKDS_VALUE_WORDS == 3
  w2 = vkds_state_load(kind, e, 2u);
  v = vkds_from_bits(uvec4(uint(w0), uint(w1), uint(w2), 0u));
#else
  v = vkds_from_bits(uvec2(uint(w0), uint(w1)));
#endif
  return (w0 >> 32) != 0ul && (w1 >> 32) != 0ul && (w2 >> 32) != 0ul;
}

// Publishes entry e of `kind` (it may be published twice, with the same bits).
void vkds_publish(uint kind, uint64_t e, SCAN_T v) {
  VKDS_WORDS_T w = vkds_bits(v);
  atomicStore(vkds_dword(vkds_state_word(kind, e, 0u)).v, 1ul << 32 | uint64_t(w.x), gl_ScopeDevice,
              gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
#if VKDS_VALUE_WORDS >= 2
  atomicStore(vkds_dword(vkds_state_word(kind, e, 1u)).v, 1ul << 32 | uint64_t(w.y), gl_ScopeDevice,
              gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
#endif
#if VKDS_VALUE_WORDS == 3
  atomicStore(vkds_dword(vkds_state_word(kind, e, 2u)).v, 1ul << 32 | uint64_t(w.z), gl_ScopeDevice,
              gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
#endif
}

// ---- subgroup 0's reads ----

// Lane l < count reads entry first + l of `kind` (v; the identity on the other lanes),
// spinning until all are there or `spins` is spent. Returns S when all are there, else
// the first lane still without its entry.
uint vkds_gather(uint kind, uint64_t first, uint count, inout uint spins, out SCAN_T v) {
  uint lane = gl_SubgroupInvocationID;
  for (;;) { // at most `spins` + 1 times in all
    bool there = true;
    v = vkds_scan_identity();
    if (lane < count) there = vkds_read(kind, first + uint64_t(lane), v);
    uvec4 missing = subgroupBallot(!there);
    if (subgroupBallotBitCount(missing) == 0u) return gl_SubgroupSize;
    if (spins == 0u) return subgroupBallotFindLSB(missing);
    --spins;
  }
  return 0u; // (never)
}

// The lane scan's value at lane l (a fixed tree for S: Kogge-Stone).
SCAN_T vkds_lane_total(SCAN_T scanned, uint l) { return vkds_shuffle(scanned, l); }

// B(c) from its block's A's, published. Returns ~0ul, or the tile to reduce first.
uint64_t vkds_make_b(uint64_t c, inout uint spins) {
  uint S = gl_SubgroupSize;
  SCAN_T a;
  uint got = vkds_gather(VKDS_KIND_A, c * uint64_t(S), S, spins, a);
  if (got < S) return c * uint64_t(S) + uint64_t(got);
  SCAN_T b = vkds_lane_total(vkds_subgroup_scan(a), S - 1u);
  if (gl_SubgroupInvocationID == 0u) vkds_publish(VKDS_KIND_B, c, b);
  return ~0ul;
}

// R(y), published, for a y whose R(y-1) is there. Returns ~0ul, or the tile to reduce
// first (a B it needs made along the way is published).
uint64_t vkds_make_r(uint64_t y, inout uint spins, bool hs, SCAN_T start) {
  uint S = gl_SubgroupSize;
  SCAN_T b;
  uint got = vkds_gather(VKDS_KIND_B, y * uint64_t(S), S, spins, b);
  if (got < S) return vkds_make_b(y * uint64_t(S) + uint64_t(got), spins);
  SCAN_T r, sum = vkds_lane_total(vkds_subgroup_scan(b), S - 1u);
  bool h = hs;
  r = start;
  if (y > 0ul) {
    if (!vkds_read(VKDS_KIND_R, y - 1ul, r)) return ~0ul; // (the caller saw it there)
    h = true;
  }
  if (gl_SubgroupInvocationID == 0u) vkds_publish(VKDS_KIND_R, y, h ? vkds_scan_combine(r, sum) : sum);
  return ~0ul;
}

// R(s-1) missing: the nearest R before it that is there found (a batch of S at a time),
// the next one made. Returns ~0ul when one more R is there, or the tile to reduce first.
uint64_t vkds_advance_r(uint64_t s, inout uint spins, bool hs, SCAN_T start) {
  uint S = gl_SubgroupSize, lane = gl_SubgroupInvocationID;
  uint64_t y = s - 1ul; // R(y) is missing; find the largest x < y with R(x), or none
  while (y > 0ul) { // at most s / S batches
    SCAN_T r;
    bool there = uint64_t(lane) < y && vkds_read(VKDS_KIND_R, y - 1ul - uint64_t(lane), r);
    uvec4 found = subgroupBallot(there);
    if (subgroupBallotBitCount(found) > 0u) return vkds_make_r(y - uint64_t(subgroupBallotFindLSB(found)), spins, hs, start);
    y = y > uint64_t(S) ? y - uint64_t(S) : 0ul;
  }
  return vkds_make_r(0ul, spins, hs, start);
}

shared uint vkds_sh_tile;
shared uint vkds_sh_next_lo, vkds_sh_next_hi; // after a round: the tile to reduce, ~0ul when done, ~1ul to look again
shared SCAN_T vkds_sh_prefix;
shared bool vkds_sh_has;

// Subgroup 0's search for tile k's prefix (own: k's A), one round: true with it (h:
// whether anything precedes the tile), false with `reduce` (a tile without A the group
// must reduce first; ~0ul when this round made a B or an R and the next round looks
// again). The owners of
// a block's and a superblock's last tile publish B and R on the way.
bool vkds_find_prefix(uint64_t k, SCAN_T own, inout uint spins, bool hs, SCAN_T start, out bool h,
                      out SCAN_T prefix, out uint64_t reduce) {
  uint S = gl_SubgroupSize, lane = gl_SubgroupInvocationID;
  uint64_t b = k / uint64_t(S), s = b / uint64_t(S);
  uint i = uint(k % uint64_t(S)), j = uint(b % uint64_t(S));
  reduce = ~0ul;
  // In turn: the A's, the B's, R. (All three read in each spin, one memory round trip
  // a look instead of three, scanned 2^28 elements 2x slower on an H100: every spin then
  // polls the B's and R, the lines every group in a superblock reads.)
  SCAN_T a, bv, r;
  uint got = vkds_gather(VKDS_KIND_A, b * uint64_t(S), i, spins, a);
  if (got < S) {
    reduce = b * uint64_t(S) + uint64_t(got);
    return false;
  }
  // the A's of the block before k; lane i holds k's own (the block's B when i = S-1).
  // B(b) goes out now, before the B's before it are read: it depends on the block's A's
  // alone, and published after this tile's own search it chained every block to the one
  // before (2,048 blocks one after the other at 2^28: 4 ms on an H100, 0.23x CUB).
  if (lane == i) a = own;
  SCAN_T ascan = vkds_subgroup_scan(a);
  SCAN_T bk = vkds_lane_total(ascan, S - 1u); // B(b), when i = S-1
  if (i == S - 1u && lane == 0u) vkds_publish(VKDS_KIND_B, b, bk);
  got = vkds_gather(VKDS_KIND_B, s * uint64_t(S), j, spins, bv);
  if (got < S) {
    reduce = vkds_make_b(s * uint64_t(S) + uint64_t(got), spins);
    return false;
  }
  if (s > 0ul && vkds_gather(VKDS_KIND_R, s - 1ul, 1u, spins, r) < S) {
    reduce = vkds_advance_r(s, spins, hs, start);
    return false;
  }
  // the B's of the superblock before b; lane j holds B(b) (R(s) when j = S-1)
  if (lane == j) bv = bk;
  SCAN_T bscan = vkds_subgroup_scan(bv);
  // what precedes the superblock
  bool hr = hs;
  if (s > 0ul) r = vkds_lane_total(r, 0u), hr = true;
  else r = start;
  SCAN_T sum = vkds_lane_total(bscan, S - 1u); // (every lane shuffles: a lane that is not active gives nothing)
  if (i == S - 1u && j == S - 1u && lane == 0u) vkds_publish(VKDS_KIND_R, s, hr ? vkds_scan_combine(r, sum) : sum);
  // R(s-1) op Bscan(j-1) op Ascan(i-1), each where there is one
  h = hr;
  prefix = r;
  if (j > 0u) vkds_join(h, prefix, true, vkds_lane_total(bscan, j - 1u), h, prefix);
  if (i > 0u) vkds_join(h, prefix, true, vkds_lane_total(ascan, i - 1u), h, prefix);
  return true;
}

// A(m) published for tile m (its owner, or a fallback: the same bits, vkds_thread_total
// being vkds_thread_scan's fold). Every thread calls it.
SCAN_T vkds_reduce_tile(uint64_t m) {
  bool h;
  SCAN_T total;
  vkds_tile_prefix(vkds_thread_total(m * VKDS_TILE + uint64_t(vkds_rank()) * uint64_t(VKDS_ITEMS), P(0)), h, total);
  return total;
}

// One group per tile, its number from the counter. (Groups that each took tiles one
// after the other, as many as the device keeps resident, scanned 2^28 elements 15%
// slower on an H100.)
void main() {
  uint t = vkds_rank(); // 0: lane 0 of subgroup 0, which also leads the search
  if (t == 0u)
    vkds_sh_tile = atomicAdd(vkds_word(P(2) + 32ul).v, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer,
                             gl_SemanticsRelaxed);
  barrier();
  uint64_t tile = uint64_t(vkds_sh_tile);
  uint spins = uint(P(5));
  bool hs;
  SCAN_T start = vkds_scan_start(hs);
  bool lead = gl_SubgroupID == 0u;
  uint64_t n = P(0), e0 = tile * VKDS_TILE + uint64_t(t) * uint64_t(VKDS_ITEMS);
  SCAN_T v[VKDS_ITEMS];
  vkds_thread_scan(e0, n, v);
  bool th;
  SCAN_T total;
  SCAN_T tp = vkds_tile_prefix(v[VKDS_ITEMS - 1], th, total);
  if (t == 0u) vkds_publish(VKDS_KIND_A, tile, total);

  bool h = hs;
  SCAN_T prefix = start;
  if (tile > 0ul) {
    // the test hook: as if the predecessor stalled, every tile reduces it once
    if ((P(4) & VKDS_SCAN_TEST_FALLBACK) != 0ul) {
      SCAN_T m = vkds_reduce_tile(tile - 1ul);
      if (t == 0u) {
        vkds_publish(VKDS_KIND_A, tile - 1ul, m);
        atomicAdd(vkds_word(P(2) + 36ul).v, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
      }
    }
    // Rounds: each finds the prefix or publishes one more value (of fewer than 3 * tiles
    // in all): 3 * tile + 3 rounds always suffice.
    for (uint64_t round = 0ul; round < 3ul * tile + 3ul; ++round) {
      if (lead) {
        uint64_t reduce;
        bool found = vkds_find_prefix(tile, total, spins, hs, start, h, prefix, reduce);
        if (t == 0u) {
          if (!found && reduce == ~0ul) reduce = ~1ul; // made a B or an R: look again
          if (found) reduce = ~0ul;
          vkds_sh_next_lo = uint(reduce), vkds_sh_next_hi = uint(reduce >> 32);
          if (found) vkds_sh_prefix = prefix, vkds_sh_has = h;
        }
      }
      barrier(); // (the next writes come after the fallback's barriers)
      uint64_t next = uint64_t(vkds_sh_next_hi) << 32 | uint64_t(vkds_sh_next_lo);
      if (next == ~0ul) break;
      if (next >= vkds_tiles()) continue; // ~1ul: a round that made a B or an R
      SCAN_T m = vkds_reduce_tile(next);
      if (t == 0u) {
        vkds_publish(VKDS_KIND_A, next, m);
        atomicAdd(vkds_word(P(2) + 36ul).v, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
      }
    }
    h = vkds_sh_has;
    prefix = vkds_sh_prefix;
  }
  bool ht;
  SCAN_T p;
  vkds_join(h, prefix, th, tp, ht, p);
  vkds_store_run(e0, n, v, ht, p);
}
