// shaders/algorithm/scan_tile.glsl: what both scan paths share (lib/algorithm/scan.c
// picks the path; scan_portable.glsl and scan_single.glsl follow this file).
// Appended by lib/algorithm/codegen.c after the code it generates, which defines:
//   P(k)                         launch parameter k (uint64_t), below
//   IN0_T, in0(i), in0_v(i, r)   the input, as in map.glsl
//   OUT_T, out_st(i, v), out_vst(i, r)   the output
//   ACC_T, VKDS_ACC_TYPE         the accumulated type (the output's), and its vkds_type
//   vkds_map(i, x)               element i's value (ACC_T(x), or the user's transform)
//   vkds_combine(a, b), vkds_identity(), vkds_init() (from P(1))
//   VKDS_COMPACT, VKDS_OUT_COUNT  compaction (copy_if, partition, unique; compact.c): the
//                                element function is a 1-or-0 flag, summed as uint
//   VKDS_PARTITION, OUT2_T, out2_st(i, v), VKDS_OUT2_COUNT   a partition's second output
//   vkds_out_of(x), vkds_out2_of(x)  a kept element as OUT_T (OUT2_T): a number converted,
//                                a zip's tuple part by part (compaction of records)
//   vkds_key_of(x)               reduce by key: element x's key (x.p0) as OUT_T (a zip's
//                                part by part)
//   VKDS_SEGMENTED               a scan by key (scan.c): IN0_T is a zip of keys (p0) and
//                                values (p1), vkds_map(i, x) the value; with VKDS_COMPACT
//                                and VKDS_REDUCE_BY_KEY too, reduce by key: the unique keys
//                                go to out, the segments' reductions to out2
// The preamble (scan.c) enables the subgroup extensions.
//
// Parameters: P(0) elements (of this chunk, when the host streams), P(1) init's bits,
// P(2) the scratch's address, P(4) flags (below), P(5) the path's own (portable: tiles
// per group; single: spins before a fallback), P(6) the index of element 0, and for
// compaction P(3) the address of the count (a uint64_t).
// The scratch: two carry slots at 0 and 16 (a streamed chunk's prefix, read from one
// and written to the other), the single pass's tile counter at 32 and fallback count
// at 36, then from 64 the portable path's group values (16 bytes each) or the single
// pass's tile states (32 bytes each).
//
// A tile is 256 threads times VKDS_ITEMS consecutive elements each. Its order, which
// makes a float scan repeatable (fixed for a device, through its subgroup size S):
//   1. thread t folds its elements left to right: v[j] = x[0] op ... op x[j];
//   2. the thread totals are scanned inside each subgroup by Kogge-Stone steps (lane l
//      takes op(lane l-d's value, its own) for d = 1, 2, 4, ... < S); then each
//      subgroup folds the subgroup totals before it in runs of S, each run scanned by
//      the same steps and the runs combined left to right (all runs: the tile's total);
//   3. thread t's prefix p is its subgroup's prefix op its lane's exclusive value, and
//      element j is op(op(carry, p), v[j]), carry being everything before the tile.
// No identity is combined where an element has something before it: out[0] is x[0]
// (init op x[0] with init), as the host's scan gives.
//
// A segmented scan runs the same steps on pairs (SCAN_T, below): element i is (s, v) with
// s = 1 where a segment starts (i is 0 or its key differs from the one before, by GLSL
// ==) and v its value (init op value at a start, when init is given); the operator is
// (sa, a) then (sb, b) = (sa | sb, sb != 0 ? b : a op b), so a start drops everything
// before it, and a segment's values are folded in the order above restricted to it.
// Reduce by key counts the starts (sa + sb) instead: the count is the segment's index.
#ifndef VKDS_SCAN_CHAINED // (scan_chained.glsl's groups are larger)
layout(local_size_x = 256) in;
#endif

#if VKDS_ACC_TYPE >= 4
#define VKDS_ITEMS 8
#else
#define VKDS_ITEMS 16
#endif
#define VKDS_TILE (256ul * uint64_t(VKDS_ITEMS))

#define VKDS_SCAN_HAS_INIT 4ul
#define VKDS_SCAN_EXCLUSIVE 8ul
#define VKDS_SCAN_CARRY_IN 16ul
#define VKDS_SCAN_CARRY_OUT 32ul
#define VKDS_SCAN_OUT_SLOT 64ul
#define VKDS_SCAN_SEG_INIT 256ul // a segmented scan's init (combined at every segment start)

// What the scan runs on: ACC_T itself, or for a segmented scan the pair of a value's bits
// and its segment starts: uvec2(bits, starts) for 4-byte values, uvec4(low, high,
// starts, 0) for 8-byte ones. VKDS_VALUE_WORDS: the 32-bit words that hold one (what the
// scratch stores and the single pass publishes).
#ifdef VKDS_SEGMENTED
#if VKDS_ACC_TYPE >= 4
#define SCAN_T uvec4
#define VKDS_VALUE_WORDS 3
#else
#define SCAN_T uvec2
#define VKDS_VALUE_WORDS 2
#endif
#else
#define SCAN_T ACC_T
#if VKDS_ACC_TYPE >= 4
#define VKDS_VALUE_WORDS 2
#else
#define VKDS_VALUE_WORDS 1
#endif
#endif
#if VKDS_VALUE_WORDS == 3
#define VKDS_WORDS_T uvec4
#else
#define VKDS_WORDS_T uvec2
#endif

layout(buffer_reference, std430, buffer_reference_align = 4) buffer vkds_word { uint v; };

shared SCAN_T vkds_sh[256]; // subgroup totals (256: even a subgroup of 1)

#ifdef VKDS_COMPACT
IN0_T vkds_xs[VKDS_ITEMS]; // the thread's elements, which compaction writes out
layout(buffer_reference, std430, buffer_reference_align = 8) buffer vkds_u64 { uint64_t v; };
#endif
#ifdef VKDS_SEGMENTED
uint vkds_starts; // bit j: element j of the thread's run starts a segment
#endif

// ---- ACC_T as two 32-bit words (the scratch holds values as words, so that the single
// pass can publish them with 32-bit atomics) ----

uvec2 vkds_value_bits(ACC_T v) {
#if VKDS_ACC_TYPE == 1
  return uvec2(uint(v), 0u);
#elif VKDS_ACC_TYPE == 2
  return uvec2(v, 0u);
#elif VKDS_ACC_TYPE == 3
  return uvec2(floatBitsToUint(v), 0u);
#elif VKDS_ACC_TYPE == 4 || VKDS_ACC_TYPE == 5
  return unpack32(uint64_t(v));
#else
  return unpackDouble2x32(v);
#endif
}

ACC_T vkds_value_from_bits(uvec2 w) {
#if VKDS_ACC_TYPE == 1
  return int(w.x);
#elif VKDS_ACC_TYPE == 2
  return w.x;
#elif VKDS_ACC_TYPE == 3
  return uintBitsToFloat(w.x);
#elif VKDS_ACC_TYPE == 4
  return int64_t(pack64(w));
#elif VKDS_ACC_TYPE == 5
  return pack64(w);
#else
  return packDouble2x32(w);
#endif
}

// ---- SCAN_T: its operator, and its words ----

#ifdef VKDS_SEGMENTED
ACC_T vkds_val(SCAN_T p) { return vkds_value_from_bits(p.xy); }
#if VKDS_ACC_TYPE >= 4
uint vkds_starts_of(SCAN_T p) { return p.z; }
SCAN_T vkds_pair(uint starts, ACC_T v) { return uvec4(vkds_value_bits(v), starts, 0u); }
#else
uint vkds_starts_of(SCAN_T p) { return p.y; }
SCAN_T vkds_pair(uint starts, ACC_T v) { return uvec2(vkds_value_bits(v).x, starts); }
#endif
SCAN_T vkds_scan_identity() { return vkds_pair(0u, vkds_identity()); }
SCAN_T vkds_scan_combine(SCAN_T a, SCAN_T b) {
  uint sb = vkds_starts_of(b);
#ifdef VKDS_REDUCE_BY_KEY
  uint s = vkds_starts_of(a) + sb;
#else
  uint s = vkds_starts_of(a) | sb;
#endif
  return vkds_pair(s, sb != 0u ? vkds_val(b) : vkds_combine(vkds_val(a), vkds_val(b)));
}
SCAN_T vkds_scan_init() { return vkds_scan_identity(); } // init goes in at each start instead
VKDS_WORDS_T vkds_bits(SCAN_T v) { return v; }
SCAN_T vkds_from_bits(VKDS_WORDS_T w) { return w; }
#else
#define vkds_scan_identity vkds_identity
#define vkds_scan_combine vkds_combine
#define vkds_scan_init vkds_init
uvec2 vkds_bits(ACC_T v) { return vkds_value_bits(v); }
ACC_T vkds_from_bits(uvec2 w) { return vkds_value_from_bits(w); }
#endif

void vkds_words_store(uint64_t a, VKDS_WORDS_T w) {
  vkds_word(a).v = w.x;
  vkds_word(a + 4ul).v = w.y;
#if VKDS_VALUE_WORDS == 3
  vkds_word(a + 8ul).v = w.z;
#endif
}
VKDS_WORDS_T vkds_words_load(uint64_t a) {
#if VKDS_VALUE_WORDS == 3
  return uvec4(vkds_word(a).v, vkds_word(a + 4ul).v, vkds_word(a + 8ul).v, 0u);
#else
  return uvec2(vkds_word(a).v, vkds_word(a + 4ul).v);
#endif
}

// A value from another lane (64-bit integers go as two words: shuffling them directly
// needs an extension for subgroup int64 that not every device has).
SCAN_T vkds_shuffle(SCAN_T v, uint lane) {
#if (VKDS_ACC_TYPE == 4 || VKDS_ACC_TYPE == 5) && !defined(VKDS_SEGMENTED)
  return vkds_from_bits(subgroupShuffle(vkds_bits(v), lane));
#else
  return subgroupShuffle(v, lane);
#endif
}

// ---- the scan's ends: init, and a streamed chunk's carry ----

// What precedes element 0: init, or the previous chunk's carry; has: whether anything does.
SCAN_T vkds_scan_start(out bool has) {
  uint64_t flags = P(4);
  has = (flags & (VKDS_SCAN_HAS_INIT | VKDS_SCAN_CARRY_IN)) != 0ul;
  if ((flags & VKDS_SCAN_CARRY_IN) == 0ul) return vkds_scan_init();
  uint64_t slot = P(2) + ((flags & VKDS_SCAN_OUT_SLOT) != 0ul ? 0ul : 16ul);
  return vkds_from_bits(vkds_words_load(slot));
}

void vkds_carry_out(SCAN_T v) {
  uint64_t slot = P(2) + ((P(4) & VKDS_SCAN_OUT_SLOT) != 0ul ? 16ul : 0ul);
  vkds_words_store(slot, vkds_bits(v));
}

// (ha, a) then (hb, b): op(a, b), or whichever is there.
void vkds_join(bool ha, SCAN_T a, bool hb, SCAN_T b, out bool h, out SCAN_T r) {
  h = ha || hb;
  r = ha && hb ? vkds_scan_combine(a, b) : ha ? a : b;
}

// ---- the tile ----

// A thread's place in the tile: subgroup by subgroup, lane by lane, the order in which
// step 2 combines (how gl_LocalInvocationID maps to subgroups is the device's choice).
uint vkds_rank() { return gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID; }

// Whether the tile of the run at e0 lies wholly inside n elements (the same answer for
// every thread of the group, which must all call what follows).
bool vkds_tile_whole(uint64_t e0, uint64_t n) {
  return e0 - uint64_t(vkds_rank()) * uint64_t(VKDS_ITEMS) + VKDS_TILE <= n;
}

// ---- a whole tile through shared memory (the portable path: VKDS_STRIPED_TILES) ----
//
// Each thread owns VKDS_ITEMS consecutive elements, so its direct 16-byte loads and
// stores lie 4 * VKDS_ITEMS bytes apart across a subgroup: each memory instruction
// touches more sectors than it uses. A tile that lies wholly inside the data can go
// through shared memory instead: the group loads it (and stores it) in 16-byte pieces,
// consecutive lanes at consecutive addresses, and each thread reads (writes) its own run
// in shared memory. The values and the order of their combines do not change. On an
// H100 that made the portable path 1.25x faster at 2^28 u32 and the single pass 1.4x
// slower (it wants every group it can keep resident, to hide its look-back's waits);
// lavapipe ran 2.3x slower with it. So only the portable path on GPUs asks for it
// (scan.c, vkds__scan_striped_tiles; VKDS_SCAN_TILES overrides). Scans that keep their
// elements (compaction) or pair them with keys (by key) load directly: their elements
// would need a second, larger array.
#if defined(VKDS_STRIPED_TILES) && !defined(VKDS_SEGMENTED) && !defined(VKDS_COMPACT)
#define VKDS_STRIPED 1
// one pad slot per 128 bytes of values: a subgroup's accesses, lane runs or lane pieces,
// then fall in different banks
#if VKDS_ACC_TYPE >= 4
#define VKDS_PAD_SHIFT 4u
#else
#define VKDS_PAD_SHIFT 5u
#endif
shared ACC_T vkds_tile_sh[256 * VKDS_ITEMS + ((256 * VKDS_ITEMS) >> VKDS_PAD_SHIFT)];
uint vkds_pad(uint i) { return i + (i >> VKDS_PAD_SHIFT); }

// The thread's mapped run of a whole tile: element e0 + j into x[j].
void vkds_tile_load(uint64_t e0, out ACC_T x[VKDS_ITEMS]) {
  uint t = vkds_rank();
  uint64_t base = e0 - uint64_t(t) * uint64_t(VKDS_ITEMS);
  barrier(); // the tile before is read out
  for (uint q = 0u; q < uint(VKDS_ITEMS) / 4u; ++q) {
    uint i = (q * 256u + t) * 4u;
    IN0_T a[4];
    in0_v(base + uint64_t(i), a);
    for (uint k = 0u; k < 4u; ++k) vkds_tile_sh[vkds_pad(i + k)] = vkds_map(base + uint64_t(i + k) + P(6), a[k]);
  }
  barrier();
  for (uint j = 0u; j < uint(VKDS_ITEMS); ++j) x[j] = vkds_tile_sh[vkds_pad(t * uint(VKDS_ITEMS) + j)];
}

// Writes the thread's run of a whole tile, o[j] to element e0 + j.
void vkds_tile_store(uint64_t e0, ACC_T o[VKDS_ITEMS]) {
  uint t = vkds_rank();
  uint64_t base = e0 - uint64_t(t) * uint64_t(VKDS_ITEMS);
  barrier(); // the tile's load is read out
  for (uint j = 0u; j < uint(VKDS_ITEMS); ++j) vkds_tile_sh[vkds_pad(t * uint(VKDS_ITEMS) + j)] = o[j];
  barrier();
  for (uint q = 0u; q < uint(VKDS_ITEMS) / 4u; ++q) {
    uint i = (q * 256u + t) * 4u;
    OUT_T r[4];
    for (uint k = 0u; k < 4u; ++k) r[k] = OUT_T(vkds_tile_sh[vkds_pad(i + k)]);
    out_vst(base + uint64_t(i), r);
  }
}
#endif

// Step 1 for the run of VKDS_ITEMS elements at e0 (fewer at the end of the data):
// v[j] = x[e0] op ... op x[e0 + j]; past the end v[j] repeats the last (the identity when
// the run is empty), so v[VKDS_ITEMS - 1] is the run's total.
#ifndef VKDS_SEGMENTED
void vkds_thread_scan(uint64_t e0, uint64_t n, out SCAN_T v[VKDS_ITEMS]) {
#ifdef VKDS_STRIPED
  if (vkds_tile_whole(e0, n)) {
    vkds_tile_load(e0, v);
    for (int j = 1; j < VKDS_ITEMS; ++j) v[j] = vkds_combine(v[j - 1], v[j]);
    return;
  }
#endif
  if (e0 + uint64_t(VKDS_ITEMS) <= n) {
    for (int q = 0; q < VKDS_ITEMS / 4; ++q) {
      IN0_T a[4];
      in0_v(e0 + uint64_t(4 * q), a);
      for (int k = 0; k < 4; ++k) v[4 * q + k] = vkds_map(e0 + uint64_t(4 * q + k) + P(6), a[k]);
#ifdef VKDS_COMPACT
      for (int k = 0; k < 4; ++k) vkds_xs[4 * q + k] = a[k];
#endif
    }
    for (int j = 1; j < VKDS_ITEMS; ++j) v[j] = vkds_combine(v[j - 1], v[j]);
    return;
  }
  uint m = e0 < n ? uint(n - e0) : 0u;
  for (uint j = 0u; j < uint(VKDS_ITEMS); ++j) {
    if (j < m) {
      IN0_T a = in0(e0 + uint64_t(j));
#ifdef VKDS_COMPACT
      vkds_xs[j] = a;
#endif
      ACC_T x = vkds_map(e0 + uint64_t(j) + P(6), a);
      v[j] = j > 0u ? vkds_combine(v[j - 1u], x) : x;
    } else {
      v[j] = j > 0u ? v[j - 1u] : vkds_identity();
    }
  }
}

// v[VKDS_ITEMS - 1] of vkds_thread_scan alone, the same combines in the same order (the
// same bits), without the array or the elements kept: the single pass's fallback, which
// reduces another group's tile while this one's scan waits in registers.
SCAN_T vkds_thread_total(uint64_t e0, uint64_t n) {
  SCAN_T acc = vkds_identity();
  uint m = e0 < n ? uint(min(n - e0, uint64_t(VKDS_ITEMS))) : 0u;
  if (m == uint(VKDS_ITEMS)) {
    for (int q = 0; q < VKDS_ITEMS / 4; ++q) {
      IN0_T a[4];
      in0_v(e0 + uint64_t(4 * q), a);
      for (int k = 0; k < 4; ++k) {
        ACC_T x = vkds_map(e0 + uint64_t(4 * q + k) + P(6), a[k]);
        acc = q + k > 0 ? vkds_combine(acc, x) : x;
      }
    }
    return acc;
  }
  for (uint j = 0u; j < m; ++j) {
    ACC_T x = vkds_map(e0 + uint64_t(j) + P(6), in0(e0 + uint64_t(j)));
    acc = j > 0u ? vkds_combine(acc, x) : x;
  }
  return acc;
}
#else
// The segmented step 1: the same fold on pairs; an element starts a segment when it is
// element 0 or its key differs from the key before it (read once per run, then carried).
SCAN_T vkds_seg_elem(uint64_t i, IN0_T x, bool start) {
  ACC_T v = vkds_map(i + P(6), x);
  if (start && (P(4) & VKDS_SCAN_SEG_INIT) != 0ul) v = vkds_combine(vkds_init(), v);
  return vkds_pair(start ? 1u : 0u, v);
}
void vkds_thread_scan(uint64_t e0, uint64_t n, out SCAN_T v[VKDS_ITEMS]) {
  vkds_starts = 0u;
  IN0_T prev;
  if (e0 > 0ul && e0 <= n) prev = in0(e0 - 1ul);
  if (e0 + uint64_t(VKDS_ITEMS) <= n) {
    for (int q = 0; q < VKDS_ITEMS / 4; ++q) {
      IN0_T a[4];
      in0_v(e0 + uint64_t(4 * q), a);
      for (int k = 0; k < 4; ++k) {
        uint j = uint(4 * q + k);
        bool start = (e0 == 0ul && j == 0u) || a[k].p0 != prev.p0;
        v[j] = vkds_seg_elem(e0 + uint64_t(j), a[k], start);
        if (start) vkds_starts |= 1u << j;
        prev = a[k];
#ifdef VKDS_COMPACT
        vkds_xs[j] = a[k];
#endif
      }
    }
    for (int j = 1; j < VKDS_ITEMS; ++j) v[j] = vkds_scan_combine(v[j - 1], v[j]);
    return;
  }
  uint m = e0 < n ? uint(n - e0) : 0u;
  for (uint j = 0u; j < uint(VKDS_ITEMS); ++j) {
    if (j < m) {
      IN0_T a = in0(e0 + uint64_t(j));
#ifdef VKDS_COMPACT
      vkds_xs[j] = a;
#endif
      bool start = (e0 == 0ul && j == 0u) || a.p0 != prev.p0;
      if (start) vkds_starts |= 1u << j;
      prev = a;
      SCAN_T x = vkds_seg_elem(e0 + uint64_t(j), a, start);
      v[j] = j > 0u ? vkds_scan_combine(v[j - 1u], x) : x;
    } else {
      v[j] = j > 0u ? v[j - 1u] : vkds_scan_identity();
    }
  }
}
// vkds_thread_total for pairs (see the one above): the fold of the run's pairs alone.
SCAN_T vkds_thread_total(uint64_t e0, uint64_t n) {
  SCAN_T acc = vkds_scan_identity();
  uint m = e0 < n ? uint(min(n - e0, uint64_t(VKDS_ITEMS))) : 0u;
  IN0_T prev;
  if (e0 > 0ul && e0 <= n) prev = in0(e0 - 1ul);
  for (uint j = 0u; j < m; ++j) {
    IN0_T a = in0(e0 + uint64_t(j));
    SCAN_T x = vkds_seg_elem(e0 + uint64_t(j), a, (e0 == 0ul && j == 0u) || a.p0 != prev.p0);
    prev = a;
    acc = j > 0u ? vkds_scan_combine(acc, x) : x;
  }
  return acc;
}
#endif

// Inclusive scan across the subgroup (Kogge-Stone, fixed for the subgroup size).
SCAN_T vkds_subgroup_scan(SCAN_T x) {
  uint lane = gl_SubgroupInvocationID;
  for (uint d = 1u; d < gl_SubgroupSize; d <<= 1) {
    SCAN_T y = vkds_shuffle(x, lane >= d ? lane - d : lane);
    if (lane >= d) x = vkds_scan_combine(y, x);
  }
  return x;
}

// Step 2 for thread totals x (every thread of the work group calls it): returns the
// thread's prefix in the tile (has: false for thread 0, which has none) and the tile's
// total (of every thread's x: past the end of the data, identities are combined in, and
// that total is never used). Every subgroup reads the subgroup totals itself rather than
// one subgroup scanning them for all: one barrier fewer, and lavapipe (Mesa 22.3) under
// the Vulkan memory model lost the shared stores of such a loop's last run.
SCAN_T vkds_tile_prefix(SCAN_T x, out bool has, out SCAN_T total) {
  uint lane = gl_SubgroupInvocationID, sg = gl_SubgroupID, S = gl_SubgroupSize, groups = gl_NumSubgroups;
  SCAN_T incl = vkds_subgroup_scan(x);
  SCAN_T before = vkds_shuffle(incl, lane > 0u ? lane - 1u : 0u);
  if (lane == S - 1u) vkds_sh[sg] = incl;
  barrier();
  // every subgroup folds the subgroup totals, S at a time, left to right: those before
  // it give its prefix, all of them the tile's total
  bool hp = false;
  SCAN_T sp = vkds_scan_identity(), acc = vkds_scan_identity();
  for (uint b = 0u; b < groups; b += S) {
    SCAN_T y = vkds_subgroup_scan(b + lane < groups ? vkds_sh[b + lane] : vkds_scan_identity());
    if (sg > b) { // the prefix takes lanes up to sg - 1 - b of this run
      SCAN_T part = vkds_shuffle(y, min(sg - b, S) - 1u);
      sp = b > 0u ? vkds_scan_combine(acc, part) : part;
      hp = true;
    }
    SCAN_T run = vkds_shuffle(y, min(groups - b, S) - 1u);
    acc = b > 0u ? vkds_scan_combine(acc, run) : run;
  }
  total = acc;
  has = lane > 0u || sg > 0u;
  SCAN_T p = before;
  if (sg > 0u) p = lane > 0u ? vkds_scan_combine(sp, before) : sp;
  barrier(); // vkds_sh is the next tile's
  return p;
}

#if defined(VKDS_REDUCE_BY_KEY)
// Step 3 of reduce by key: element j's pair (prefix op v[j]) holds the starts up to it,
// so its segment is starts - 1: a start writes its key to out[segment], the last element
// of a segment (the data's last, or one before a start) its value to out2[segment]; what
// lands past an output's count is not written. The thread holding the last element
// writes the count of segments.
void vkds_store_run(uint64_t e0, uint64_t n, SCAN_T v[VKDS_ITEMS], bool has, SCAN_T prefix) {
  uint m = e0 < n ? uint(min(n - e0, uint64_t(VKDS_ITEMS))) : 0u;
  bool next_starts = true; // the element after the run
  if (e0 + uint64_t(VKDS_ITEMS) < n) next_starts = in0(e0 + uint64_t(VKDS_ITEMS)).p0 != vkds_xs[VKDS_ITEMS - 1].p0;
  for (uint j = 0u; j < m; ++j) {
    SCAN_T w = has ? vkds_scan_combine(prefix, v[j]) : v[j];
    uint64_t seg = uint64_t(vkds_starts_of(w)) - 1ul;
    if (((vkds_starts >> j) & 1u) != 0u && seg < VKDS_OUT_COUNT) out_st(seg, vkds_key_of(vkds_xs[j]));
    bool ends = j + 1u < m ? ((vkds_starts >> (j + 1u)) & 1u) != 0u : j + 1u < uint(VKDS_ITEMS) || next_starts;
    if (ends && seg < VKDS_OUT2_COUNT) out2_st(seg, OUT2_T(vkds_val(w)));
    if (e0 + uint64_t(j) + 1ul == n) vkds_u64(P(3)).v = seg + 1ul;
  }
}
#elif defined(VKDS_COMPACT)
#if defined(VKDS_STRIPED_TILES) && !defined(VKDS_PARTITION) && VKDS_OUT_SIZE == 4
// A whole tile's kept elements, gathered in shared memory in their order and written by
// the group together: consecutive lanes, consecutive elements. Written by each thread
// from its own run, they were 4-byte stores scattered across a subgroup (copy_if ran at
// 0.33x CUB's select_if on an H100). Outputs of 4-byte elements: a tile of larger ones
// would not fit where lavapipe gives 32 KiB of shared memory.
#define VKDS_COMPACT_STAGED 1
shared OUT_T vkds_stage[256 * VKDS_ITEMS];
shared uint64_t vkds_stage_first, vkds_stage_end;
void vkds_store_staged(uint64_t before, SCAN_T v[VKDS_ITEMS]) {
  uint t = vkds_rank();
  barrier(); // shared memory is free
  if (t == 0u) vkds_stage_first = before;
  if (t == 255u) vkds_stage_end = before + uint64_t(v[VKDS_ITEMS - 1]);
  barrier();
  uint64_t first = vkds_stage_first;
  uint kept = uint(vkds_stage_end - first);
  for (uint j = 0u; j < uint(VKDS_ITEMS); ++j)
    if (v[j] != (j > 0u ? v[j - 1u] : ACC_T(0))) vkds_stage[uint(before - first) + uint(v[j]) - 1u] = vkds_out_of(vkds_xs[j]);
  barrier();
  for (uint i = t; i < kept; i += 256u)
    if (first + uint64_t(i) < VKDS_OUT_COUNT) out_st(first + uint64_t(i), vkds_stage[i]);
}
#endif
// Step 3 of a compaction: v[j] counts the kept elements of the run up to j, `prefix`
// those before the run. A kept element goes to out[kept before it], a partition's other
// one to out2[its index - kept before it]; what lands past an output's count is not
// written. The thread holding the last element writes the count of kept ones.
void vkds_store_run(uint64_t e0, uint64_t n, SCAN_T v[VKDS_ITEMS], bool has, SCAN_T prefix) {
  uint64_t before = has ? uint64_t(prefix) : 0ul;
#ifdef VKDS_COMPACT_STAGED
  if (vkds_tile_whole(e0, n)) {
    vkds_store_staged(before, v);
    if (e0 < n && n - e0 <= uint64_t(VKDS_ITEMS)) vkds_u64(P(3)).v = before + uint64_t(v[uint(n - e0) - 1u]);
    return;
  }
#endif
  for (uint j = 0u; j < uint(VKDS_ITEMS) && e0 + uint64_t(j) < n; ++j) {
    uint64_t kept = before + uint64_t(v[j]); // up to and with element j
    if (v[j] != (j > 0u ? v[j - 1u] : ACC_T(0))) {
      if (kept - 1ul < VKDS_OUT_COUNT) out_st(kept - 1ul, vkds_out_of(vkds_xs[j]));
    } else {
#ifdef VKDS_PARTITION
      uint64_t at = e0 + uint64_t(j) - kept;
      if (at < VKDS_OUT2_COUNT) out2_st(at, vkds_out2_of(vkds_xs[j]));
#endif
    }
  }
  if (e0 < n && n - e0 <= uint64_t(VKDS_ITEMS)) vkds_u64(P(3)).v = before + uint64_t(v[uint(n - e0) - 1u]);
}
#elif defined(VKDS_SEGMENTED)
// Step 3 of a scan by key: as below on pairs, writing their values; an exclusive scan
// writes init (or the identity) at each start and element j - 1's value elsewhere.
void vkds_store_run(uint64_t e0, uint64_t n, SCAN_T v[VKDS_ITEMS], bool has, SCAN_T prefix) {
  SCAN_T w[VKDS_ITEMS];
  for (int j = 0; j < VKDS_ITEMS; ++j) w[j] = has ? vkds_scan_combine(prefix, v[j]) : v[j];
  OUT_T o[VKDS_ITEMS];
  if ((P(4) & VKDS_SCAN_EXCLUSIVE) != 0ul) {
    ACC_T first = (P(4) & VKDS_SCAN_SEG_INIT) != 0ul ? vkds_init() : vkds_identity();
    for (int j = 0; j < VKDS_ITEMS; ++j) {
      bool start = ((vkds_starts >> uint(j)) & 1u) != 0u;
      o[j] = OUT_T(start ? first : vkds_val(j > 0 ? w[j - 1] : prefix)); // no start: something precedes it
    }
  } else {
    for (int j = 0; j < VKDS_ITEMS; ++j) o[j] = OUT_T(vkds_val(w[j]));
  }
  if (e0 + uint64_t(VKDS_ITEMS) <= n) {
    for (int q = 0; q < VKDS_ITEMS / 4; ++q) {
      OUT_T r[4] = OUT_T[4](o[4 * q], o[4 * q + 1], o[4 * q + 2], o[4 * q + 3]);
      out_vst(e0 + uint64_t(4 * q), r);
    }
  } else {
    for (uint j = 0u; j < uint(VKDS_ITEMS) && e0 + uint64_t(j) < n; ++j) out_st(e0 + uint64_t(j), o[j]);
  }
}
#else
// Step 3: writes the run at e0 given everything before it (has, prefix): element j is
// w[j] = op(prefix, v[j]); an exclusive scan writes prefix, w[0], ..., w[VKDS_ITEMS - 2]
// (the identity for element 0 when nothing precedes it). The thread holding the last
// element writes the carry-out when asked.
void vkds_store_run(uint64_t e0, uint64_t n, SCAN_T v[VKDS_ITEMS], bool has, SCAN_T prefix) {
  SCAN_T w[VKDS_ITEMS];
  for (int j = 0; j < VKDS_ITEMS; ++j) w[j] = has ? vkds_combine(prefix, v[j]) : v[j];
  ACC_T o[VKDS_ITEMS];
  if ((P(4) & VKDS_SCAN_EXCLUSIVE) != 0ul) {
    o[0] = has ? prefix : vkds_identity();
    for (int j = 1; j < VKDS_ITEMS; ++j) o[j] = w[j - 1];
  } else {
    o = w;
  }
  if ((P(4) & VKDS_SCAN_CARRY_OUT) != 0ul && e0 < n && n - e0 <= uint64_t(VKDS_ITEMS))
    vkds_carry_out(w[uint(n - e0) - 1u]);
#ifdef VKDS_STRIPED
  if (vkds_tile_whole(e0, n)) {
    vkds_tile_store(e0, o);
    return;
  }
#endif
  if (e0 + uint64_t(VKDS_ITEMS) <= n) {
    for (int q = 0; q < VKDS_ITEMS / 4; ++q) {
      OUT_T r[4] = OUT_T[4](OUT_T(o[4 * q]), OUT_T(o[4 * q + 1]), OUT_T(o[4 * q + 2]), OUT_T(o[4 * q + 3]));
      out_vst(e0 + uint64_t(4 * q), r);
    }
  } else {
    for (uint j = 0u; j < uint(VKDS_ITEMS) && e0 + uint64_t(j) < n; ++j) out_st(e0 + uint64_t(j), OUT_T(o[j]));
  }
}
#endif
