// shaders/algorithm/scan_single.glsl: the single-pass scan, a chained scan with
// decoupled look-back and decoupled fallback (after scan_tile.glsl; the preamble adds
// the 64-bit atomics, GL_KHR_memory_scope_semantics and the ballots). One dispatch of
// one work group per tile; 2n words move.
//
// Tiles are numbered by an atomic counter, never by gl_WorkGroupID: a group only waits
// for tiles taken by groups that already run. Each tile publishes, in its state (32
// bytes; 64 for a segmented scan's 8-byte pairs), its aggregate A as soon as it has it
// and its inclusive prefix P once it knows what precedes it. Each value goes in 64-bit words that carry their own flag: the flag in
// the high half, 32 bits of the value in the low half (one word for a 4-byte value, two
// for an 8-byte one; a segmented scan's pairs one more, for the starts). A reader that
// sees the flag in every word of a value holds the value, with no other location to
// order after it; so every access is a relaxed atomic (Device scope) and no
// release/acquire pairing is needed, on any memory model. That is also what lavapipe
// (Mesa 22.3) needs: there an atomic with acquire semantics acts as a work-group
// barrier, and in code only the look-back subgroup runs it desynchronizes the group's
// barriers (the other subgroups ran past the round's barrier and read stale shared
// state).
//
// The look-back is done by subgroup 0: lane l looks at tile pos - l, a subgroup-wide
// batch at a time, until the nearest tile j with P(j) is found with an A for every tile
// between. Every spin is bounded: a group spins P(5) times in all; a tile still without
// A then is reduced by the whole group itself (the decoupled fallback), which publishes
// its A, so nothing ever waits on a group that is not running (lavapipe promises no
// forward progress between groups). One budget for all spins, not one per wait:
// lavapipe gives an invocation 65,535 loop iterations in all, shared by every loop of
// the shader, and silently ends every loop once they are spent. The fallback reads the
// tile's input: so this path never runs in place (scan.c), where the owner may already
// have overwritten it.
//
// Repeatable floats: the prefix is always the left fold P(j) op A(j+1) op ... op A(k-1),
// in that order, whichever j the look-back finds. As P(j) is itself the left fold
// start op A(0) op ... op A(j) (by induction: tile 0 publishes start op A(0)), tile k's
// prefix is that fold up to A(k-1) bit for bit, however the groups were timed. The
// look-back finds the window from its near end, so the fold goes over it again from
// the far end: the found batch from the registers its lanes read, the nearer batches
// re-read by the same lanes (values never change once there). The cost: the window is
// folded one value at a time (on a GPU it is a few tiles), where a timing-dependent
// look-back could fold it as it goes. A fallback's A is the same bits as the owner's:
// the same code on the same elements (one call site, below).

#define VKDS_SCAN_TEST_FALLBACK 128ul // scan.c's VKDS_SCAN_SPINS=-1

#define VKDS_NOT_READY 0u
#define VKDS_AGGREGATE 1u
#define VKDS_INCLUSIVE 2u

layout(buffer_reference, std430, buffer_reference_align = 8) buffer vkds_dword { uint64_t v; };

// Tile k's state: A in words 0 and 1, P in words 2 and 3 (the second word of each only
// for 8-byte values); a segmented scan's 8-byte pairs take three words each: A in 0-2,
// P in 4-6.
#if VKDS_VALUE_WORDS == 3
#define VKDS_STATE_BYTES 64ul
#else
#define VKDS_STATE_BYTES 32ul
#endif
uint64_t vkds_state(uint64_t k) { return P(2) + 64ul + VKDS_STATE_BYTES * k; }

// Value `which` (0: A, 1: P) of tile k, when it is there.
bool vkds_read(uint64_t k, uint which, out SCAN_T v) {
  uint64_t a = vkds_state(k) + VKDS_STATE_BYTES / 2ul * uint64_t(which);
  uint64_t w0 = atomicLoad(vkds_dword(a).v, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
  uint64_t w1 = w0, w2 = w0;
#if VKDS_VALUE_WORDS >= 2
  w1 = atomicLoad(vkds_dword(a + 8ul).v, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
#endif
#if VKDS_VALUE_WORDS == 3
  w2 = atomicLoad(vkds_dword(a + 16ul).v, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
  v = vkds_from_bits(uvec4(uint(w0), uint(w1), uint(w2), 0u));
#else
  v = vkds_from_bits(uvec2(uint(w0), uint(w1)));
#endif
  return (w0 >> 32) != 0ul && (w1 >> 32) != 0ul && (w2 >> 32) != 0ul;
}

// What tile k has published: VKDS_INCLUSIVE with P in v, VKDS_AGGREGATE with A, or
// VKDS_NOT_READY.
uint vkds_status(uint64_t k, out SCAN_T v) {
  if (vkds_read(k, 1u, v)) return VKDS_INCLUSIVE;
  return vkds_read(k, 0u, v) ? VKDS_AGGREGATE : VKDS_NOT_READY;
}

// Publishes value `which` of tile k. A may be written twice (by its owner and by a
// fallback), with the same bits.
void vkds_publish(uint64_t k, uint which, SCAN_T v) {
  uint64_t a = vkds_state(k) + VKDS_STATE_BYTES / 2ul * uint64_t(which);
  VKDS_WORDS_T w = vkds_bits(v);
  atomicStore(vkds_dword(a).v, 1ul << 32 | uint64_t(w.x), gl_ScopeDevice, gl_StorageSemanticsBuffer,
              gl_SemanticsRelaxed);
#if VKDS_VALUE_WORDS >= 2
  atomicStore(vkds_dword(a + 8ul).v, 1ul << 32 | uint64_t(w.y), gl_ScopeDevice, gl_StorageSemanticsBuffer,
              gl_SemanticsRelaxed);
#endif
#if VKDS_VALUE_WORDS == 3
  atomicStore(vkds_dword(a + 16ul).v, 1ul << 32 | uint64_t(w.z), gl_ScopeDevice, gl_StorageSemanticsBuffer,
              gl_SemanticsRelaxed);
#endif
}

shared uint vkds_sh_tile;
shared uint vkds_sh_next; // after a look-back round: the tile to reduce, or ~0u when done
shared SCAN_T vkds_sh_prefix;

// Subgroup 0's look-back from `pos` (the nearest tile not yet seen with A or P) for
// tile `tile`. Returns 0 with the prefix, 1 with a tile still without A once `spins`
// (what is left of the group's spins) ran out (the group reduces it, then calls again),
// 2 when it walked 4096 batches (it goes on from there in the next round).
uint vkds_look_back(uint64_t tile, inout uint64_t pos, inout uint spins, out uint64_t stalled, out SCAN_T prefix) {
  uint lane = gl_SubgroupInvocationID, S = gl_SubgroupSize;
  for (uint batch = 0u; batch < 4096u; ++batch) {
    bool exists = uint64_t(lane) <= pos;
    uint64_t k = exists ? pos - uint64_t(lane) : 0ul;
    uint f = VKDS_AGGREGATE, first = S;
    SCAN_T val = vkds_scan_identity();
    for (;;) { // at most `spins` + 1 times in all
      f = exists ? vkds_status(k, val) : VKDS_AGGREGATE; // lanes before tile 0 never matter
      if (exists && k == 0ul && f == VKDS_AGGREGATE) f = VKDS_NOT_READY; // nothing to walk to past it: wait for its P
      uvec4 inc = subgroupBallot(f == VKDS_INCLUSIVE);
      first = subgroupBallotBitCount(inc) > 0u ? subgroupBallotFindLSB(inc) : S;
      uvec4 waiting = subgroupBallot(f == VKDS_NOT_READY && lane < first);
      if (subgroupBallotBitCount(waiting) == 0u) break;
      if (spins == 0u) {
        stalled = pos - uint64_t(subgroupBallotFindLSB(waiting));
        return 1u;
      }
      --spins;
    }
    if (first < S) {
      // the fold, left to right: P(pos - first), this batch's A nearer than it, then
      // the batches passed before, each lane re-reading the tile it read there
      SCAN_T acc = vkds_shuffle(val, first);
      for (uint l = first; l > 0u; --l) acc = vkds_scan_combine(acc, vkds_shuffle(val, l - 1u));
      for (uint64_t p = pos + uint64_t(S); p < tile; p += uint64_t(S)) {
        SCAN_T a;
        vkds_read(p - uint64_t(lane), 0u, a);
        for (uint l = S; l > 0u; --l) acc = vkds_scan_combine(acc, vkds_shuffle(a, l - 1u));
      }
      prefix = acc;
      return 0u;
    }
    pos -= uint64_t(S); // no wrap: a batch that holds tile 0 waits for its P
  }
  return 2u;
}

void main() {
  uint t = vkds_rank(); // 0: lane 0 of subgroup 0, which also leads the look-back
  bool lead = gl_SubgroupID == 0u;
  if (t == 0u)
    vkds_sh_tile = atomicAdd(vkds_word(P(2) + 32ul).v, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer,
                             gl_SemanticsRelaxed);
  barrier();
  uint64_t tile = uint64_t(vkds_sh_tile), n = P(0);
  bool hs;
  SCAN_T start = vkds_scan_start(hs);

  // Round 0 scans this group's tile; later rounds reduce a stalled predecessor (the
  // fallback) through the same call, so both give the same bits. Each round finds the
  // prefix, makes one more tile publish, or walks 4096 batches further back: 2 * tile + 2
  // rounds always suffice.
  SCAN_T v[VKDS_ITEMS], tp, total, prefix;
  bool th = false;
#ifdef VKDS_COMPACT
  IN0_T xs[VKDS_ITEMS]; // this tile's elements (a fallback round loads another's)
#endif
#ifdef VKDS_SEGMENTED
  uint starts = 0u; // and their segment starts
#endif
  uint spins = uint(P(5));
  uint64_t work = tile, pos = tile - 1ul;
  for (uint64_t round = 0ul; round < 2ul * tile + 2ul; ++round) {
    SCAN_T w[VKDS_ITEMS];
    vkds_thread_scan(work * VKDS_TILE + uint64_t(t) * uint64_t(VKDS_ITEMS), n, w);
    bool wh;
    SCAN_T wtotal;
    SCAN_T wp = vkds_tile_prefix(w[VKDS_ITEMS - 1], wh, wtotal);
    if (round == 0ul) v = w, th = wh, tp = wp, total = wtotal;
#ifdef VKDS_COMPACT
    if (round == 0ul) xs = vkds_xs;
#endif
#ifdef VKDS_SEGMENTED
    if (round == 0ul) starts = vkds_starts;
#endif
    if (t == 0u) {
      vkds_publish(work, 0u, wtotal);
      if (work == 0ul) vkds_publish(0ul, 1u, hs ? vkds_scan_combine(start, wtotal) : wtotal);
      if (round > 0ul)
        atomicAdd(vkds_word(P(2) + 36ul).v, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
    }
    if (tile == 0ul) break;
    if (lead) {
      uint64_t stalled = tile - 1ul;
      uint r = 1u; // the test hook: as if the predecessor stalled, every tile reduces it once
      if (round > 0ul || (P(4) & VKDS_SCAN_TEST_FALLBACK) == 0ul) r = vkds_look_back(tile, pos, spins, stalled, prefix);
      if (t == 0u) {
        vkds_sh_next = r == 0u ? ~0u : r == 1u ? uint(stalled) : uint(pos);
        // P as soon as it is known: the groups after this one stop looking there
        if (r == 0u) vkds_sh_prefix = prefix, vkds_publish(tile, 1u, vkds_scan_combine(prefix, total));
      }
    }
    barrier();
    uint next = vkds_sh_next;
    if (next == ~0u) break;
    work = uint64_t(next); // out of batches: `pos` is reduced again (harmless, the same bits)
  }
  bool h = hs;
  prefix = start;
  if (tile > 0ul) h = true, prefix = vkds_sh_prefix;
  bool ht;
  SCAN_T p;
  vkds_join(h, prefix, th, tp, ht, p);
#ifdef VKDS_COMPACT
  vkds_xs = xs;
#endif
#ifdef VKDS_SEGMENTED
  vkds_starts = starts;
#endif
  vkds_store_run(tile * VKDS_TILE + uint64_t(t) * uint64_t(VKDS_ITEMS), n, v, ht, p);
}
