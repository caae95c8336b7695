// shaders/algorithm/sort_onesweep.glsl: the single-pass radix sort's passes, Onesweep
// (after sort_tile.glsl; sort_main.glsl calls them).
// Per pass one dispatch of one work group per tile: the keys are read once and written
// once, the digit offsets found by a chained scan across tiles with decoupled look-back.
//
// Tiles are numbered by an atomic counter (one per pass), never by gl_WorkGroupID: a
// group only waits for tiles taken by groups that already run. Tile k publishes, for each
// digit d, a 32-bit word in its row of the pass's region: the flag in the top two bits
// (1: the tile's count of d, 2: the inclusive prefix, the count of d in tiles 0..k), the
// value in the low 30 (sort.c sends a sort of 2^30 keys or more to the portable path).
// A reader that sees the flag holds the value: every access is a relaxed atomic, no
// release/acquire pairing is needed (on lavapipe, Mesa 22.3, an acquiring atomic acts as
// a work-group barrier, which desynchronizes code that only some threads run). Words are
// only ever raised with atomicMax: a count never overwrites an inclusive prefix, and a
// count published twice is the same value.
//
// Thread d looks back for digit d (four tiles a load, below): it adds counts of tiles
// k-1, k-2, ... until it finds an inclusive prefix (or reaches tile 0, whose count is its
// prefix). Every spin is bounded: each thread spins P(5) times in all, over every tile
// its group takes; once a thread has none left, its group counts the tile it waits for
// itself (the decoupled fallback: the tile's keys are in the pass's source, which nobody
// writes during the pass) and publishes the counts for it, so nothing ever waits on a
// group that is not running (lavapipe promises no forward progress between groups). One
// budget for all spins, not one per wait: lavapipe gives an invocation 65,535 loop
// iterations in all, shared by every loop of the shader.
//
// A group takes up to P(6) tiles from the counter, one after the other (sort.c: one on
// GPUs; several on CPU devices, where every work group costs much to start). The states
// of the next pass (the other region) are zeroed here, each tile's row by whoever takes
// the tile, so the passes need no fill between them; a skipped pass still does that.

#define VKDS_COUNT 0x40000000u
#define VKDS_PREFIX 0x80000000u
#define VKDS_VALUE 0x3fffffffu

uint64_t vkds_state(uint region, uint tile, uint d) {
  return P(2) + VKDS_AT_REGIONS + (uint64_t(region) * P(3) + uint64_t(tile)) * 1024ul + 4ul * uint64_t(d);
}

uint vkds_state_load(uint64_t a) {
  return atomicLoad(vkds_sw(a).v, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
}

// The decoupled fallback: counts tile j's digits from the pass's source and publishes
// them, as its owner does (the same values). Every thread calls it.
void vkds_fallback(uint region, uint j, uint pass, bool from_a) {
  uint t = vkds_tid();
  uint64_t base = uint64_t(j) * uint64_t(VKDS_TILE);
  vkds_count_tile(from_a, base, uint(min(P(0) - base, uint64_t(VKDS_TILE))), pass);
  atomicMax(vkds_sw(vkds_state(region, j, t)).v, VKDS_COUNT | vkds_sh[t]);
  if (t == 0u) atomicAdd(vkds_sw(P(2) + 64ul).v, 1u);
  barrier(); // vkds_sh is used again
}

// The look-back reads the words of VKDS_LOOK_BACK_WINDOW tiles at once (pos, pos - 1, ...)
// and then walks them in order, stopping at the first without a word: one memory latency
// for up to that many tiles, where one tile a load made every step wait for the last.
// Measured on an H200 (2026-11-29, session 41, bench/RESULTS.md), u32 keys, Onesweep,
// GPU us, one tile a load / 4 at once: 2^16 47.0 / 44.6, 2^18 56.6 / 51.9, 2^19 65.5 /
// 59.0, 2^28 10,358 / 9,142 (0.61x -> 0.69x CUB's SortKeys); 8 at once 9,467 and 16
// 10,462 at 2^28 (the window's registers).
#define VKDS_LOOK_BACK_WINDOW 4

// Thread t's exclusive prefix of digit t over the tiles before `tile` (> 0). Rounds: each
// thread walks back (at most 1024 tiles a round) until it has its prefix or runs out of
// spins (what is left of its group's life's budget) on a tile without a word; then the
// group reduces the nearest such tile itself.
// Each round either finishes, moves some thread back, or publishes one more tile: 2 *
// tile + 2 rounds always suffice.
uint vkds_look_back(uint region, uint tile, uint pass, bool from_a, inout uint spins) {
  uint t = vkds_tid(), acc = 0u, pos = tile - 1u;
  bool done = false;
  for (uint round = 0u; round < 2u * tile + 2u; ++round) {
    uint stalled = 0u; // the tile waited for, plus one
    for (uint step = 0u; step < 1024u && !done && stalled == 0u; ++step) {
      uint w[VKDS_LOOK_BACK_WINDOW];
      [[unroll]] for (uint i = 0u; i < uint(VKDS_LOOK_BACK_WINDOW); ++i)
        w[i] = pos >= i ? vkds_state_load(vkds_state(region, pos - i, t)) : 0u;
      bool go = true;
      [[unroll]] for (uint i = 0u; i < uint(VKDS_LOOK_BACK_WINDOW); ++i) {
        if (!go) continue;
        uint x = w[i];
        if ((x & VKDS_PREFIX) != 0u || ((x & VKDS_COUNT) != 0u && pos == 0u)) {
          acc += x & VKDS_VALUE;
          done = true;
          go = false;
        } else if ((x & VKDS_COUNT) != 0u) {
          acc += x & VKDS_VALUE;
          --pos;
        } else { // no word yet: the next step loads from here; a spin only if nothing moved
          go = false;
          if (i == 0u && spins == 0u) stalled = pos + 1u;
          else if (i == 0u) --spins;
        }
      }
    }
    if (t == 0u) vkds_misc[1] = 0u, vkds_misc[2] = 0u;
    barrier();
    if (!done) atomicAdd(vkds_misc[1], 1u);
    if (stalled != 0u) atomicMax(vkds_misc[2], stalled);
    barrier();
    uint left = vkds_misc[1], fallback = vkds_misc[2];
    barrier();
    if (left == 0u) break;
    if (fallback != 0u) vkds_fallback(region, fallback - 1u, pass, from_a);
  }
  return acc;
}

// One tile of an active pass. Its counts are published as soon as they are known, before
// its keys are ranked, and its look-back comes after they are exchanged: by then the
// tiles before it have had the rank and the exchange's time to publish theirs (CUB's
// Onesweep orders a tile the same way). Ranked first and published after, with the
// look-back before the exchange, u32 keys at 2^28 sorted in 12,004-12,077 us on an H100;
// in this order 11,675-11,690 (2026-11-26, session 23; bench/RESULTS.md).
void vkds_onesweep_tile(uint pass, uint region, bool from_a, uint tile, inout uint spins) {
  uint t = vkds_tid();
  vkds_sw(vkds_state(region ^ 1u, tile, t)).v = 0u;
  uint64_t base = uint64_t(tile) * uint64_t(VKDS_TILE);
  uint valid = uint(min(P(0) - base, uint64_t(VKDS_TILE)));
  KW_T k[VKDS_ITEMS];
  vkds_load_tile(from_a, base, valid, k);
  uint count = vkds_rank_counts(k, pass);
  if (t == 255u) count -= VKDS_TILE - valid; // the padding ranked last, as digit 255
  atomicMax(vkds_sw(vkds_state(region, tile, t)).v, (tile == 0u ? VKDS_PREFIX : VKDS_COUNT) | count);
  uint loc[VKDS_ITEMS];
  vkds_rank_items(k, pass, loc);
#if VKDS_VALUES // loaded here, their latency behind the exchange and the look-back
  uvec2 v[VKDS_ITEMS];
  vkds_load_values(from_a, base, valid, v);
#endif
  KW_T o[VKDS_ITEMS];
  vkds_exchange_keys(k, loc, o);
  uint prefix = 0u;
  if (tile != 0u) {
    // the test hook (VKDS_SORT_SPINS=-1): every tile reduces its predecessor once
    if ((P(4) & VKDS_SORT_TEST_FALLBACK) != 0ul) {
      barrier(); // the exchange's reads of vkds_sh are done
      vkds_fallback(region, tile - 1u, pass, from_a);
    }
    prefix = vkds_look_back(region, tile, pass, from_a, spins);
    atomicMax(vkds_sw(vkds_state(region, tile, t)).v, VKDS_PREFIX | (prefix + count));
  }
  vkds_goff[t] = vkds_sw(P(2) + VKDS_AT_BASES + 4ul * uint64_t(pass * 256u + t)).v + prefix - vkds_toff[t];
  barrier();
  uint g[VKDS_ITEMS];
  vkds_write_keys(pass, from_a, valid, o, g);
#if VKDS_VALUES
  vkds_write_values(from_a, valid, v, loc, g);
#endif
  barrier(); // vkds_goff and vkds_sh are the next tile's
}

// A pass: up to P(6) tiles per group; a skipped pass only zeroes the next pass's states.
void vkds_onesweep(uint pass, uint plan) {
  uint t = vkds_tid(), region = pass & 1u, tiles = uint(P(3)), per = uint(P(6));
  if ((plan & 1u) == 0u) {
    for (uint tile = vkds_group() * per; tile < min(tiles, (vkds_group() + 1u) * per); ++tile)
      vkds_sw(vkds_state(region ^ 1u, tile, t)).v = 0u;
    return;
  }
  bool from_a = (plan & 2u) != 0u;
  uint spins = uint(P(5));
  // at most P(6) tiles a group (lavapipe's loop budget: a group that runs early would
  // otherwise take tile after tile); the groups' quotas cover every tile
  for (uint taken = 0u; taken < per; ++taken) {
    if (t == 0u)
      vkds_misc[0] = atomicAdd(vkds_sw(P(2) + 4ul * uint64_t(pass)).v, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer,
                               gl_SemanticsRelaxed);
    barrier();
    uint tile = vkds_misc[0];
    barrier(); // vkds_misc[0] is the next round's
    if (tile >= tiles) break;
    vkds_onesweep_tile(pass, region, from_a, tile, spins);
  }
}
