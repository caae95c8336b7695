// shaders/algorithm/sort_tile.glsl: what every sort kernel shares (lib/algorithm/sort.c
// records them; one of sort_upsweep.glsl, sort_portable.glsl, sort_onesweep.glsl, then
// sort_main.glsl follow this file).
// Appended by lib/algorithm/codegen.c after the code it generates:
//   P(k)                          launch parameter k (uint64_t), below
//   KEY_T, VKDS_KEY_TYPE          the keys' GLSL type and vkds_type (U32 or U64 for every
//                                 built-in sequence: their leaves are walked as bits)
//   key_ld(i), key_ld_v(i, r), key_st(i, v)   the key sequence (its views as code)
//   VKDS_VALUES                   1 with values (sort_by_key), then
//   VAL_T, VKDS_VAL_TYPE, val_ld(i), val_st(i, v)   the value sequence
// The preamble (sort.c) enables the extensions; sort.c's defines come with the generated
// code: VKDS_SORT_SUBGROUPS (the most subgroups a work group can have on the device),
// VKDS_SORT_WIDE_SUBGROUPS (1 where a subgroup may have more than 32 lanes),
// VKDS_SORT_KERNEL (sort_main.glsl), VKDS_SORT_ARGSORT (1: the values are the keys'
// indices, made by the upsweep, and the key sequence is only read; val_vst is there),
// VKDS_SORT_DIRECT_LOADS (vkds_load_tile) and VKDS_SORT_BIG_TILES (VKDS_ITEMS).
//
// Parameters: P(0) elements n (< 2^32), P(1) the order and the keys' kind (below), P(2) the
// scratch's address (16-byte aligned), P(3) tiles, P(4) the stage | pass << 8 | flags
// (VKDS_SORT_*),
// P(5) the stage's own (upsweep: its work groups; portable count and scatter: tiles per
// group; spine: digits per group; onesweep: spins before a fallback), P(6) onesweep:
// tiles per group.
//
// Loops over a thread's items are unrolled ([[unroll]]): the items then stay in
// registers, and on lavapipe (which counts every loop iteration against a budget of
// 65,535 per invocation, shared by all loops) they cost nothing of it.
//
// LSD radix sort over 8-bit digits of the key's order-preserving bits: pass p sorts
// stably by bits [8p, 8p + 8) of
//   u32: x   i32: x ^ 2^31   f32: x ^ (sign ? ~0 : 2^31)   (the same for 64 bits)
// then ~ for descending (so equal keys keep their order in both directions). Floats
// end up in IEEE 754 totalOrder: -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN.
//
// The data moves between the sequence itself (S, through its accessors: the views are
// code) and one device buffer A of its size in the scratch, which holds the ordered bits
// as they are. The plan (sort_upsweep.glsl) gives every pass its direction; an even
// number of passes runs, so the last one writes S.
//
// The scratch (sort.c computes the same):
//   0       tile counters, one per pass (onesweep), and the fallback count at 64
//   256     histograms: pass p's digit d count at 256 + 4 * (256 p + d)
//   8448    digit starts: the exclusive scan of each histogram, the same layout
//   16640   the plan: one word per pass (bit 0 runs, bit 1 reads A and writes S)
//   16896   regions of 256 words per tile: the portable path's digit counts (digit d of
//           tile k at d * tiles + k, scanned in place into offsets), or the onesweep
//           look-back states (two regions, passes alternating; tile k's at 256 k + d)
//   then A's keys (16-byte aligned), then A's values, then (argsort) B's keys
layout(local_size_x = 256) in;

// VKDS_SORT_ITEMS (sort.c, tile_items): keys a thread. 8 of 8 bytes; of 4 bytes 16, 20
// with VKDS_SORT_BIG_TILES (big_tiles: GPUs, large sorts), or 24 for the portable path's
// large tiles (portable_tiles), whose exchange goes half a tile at a time
// (VKDS_SORT_HALVES 2). Larger tiles spread a tile's barriers, rank and look-back over
// more keys: on an H100 (2026-11-26, session 21, one call) u32 keys at 2^28 sorted in
// 12,364 us with 16 items, 11,705 with 20, 18,868 with 24 (where the whole tile's 24 KiB
// of shared memory made the driver give the kernel 255 registers instead of 128: one
// group an SM); 8 and 12 items were slower.
#define VKDS_ITEMS VKDS_SORT_ITEMS
#if VKDS_KEY_TYPE >= 4
#define VKDS_KEY_WORDS 2
#define KW_T uint64_t
#define VKDS_KW_MAX 0xfffffffffffffffful
#else
#define VKDS_KEY_WORDS 1
#define KW_T uint
#define VKDS_KW_MAX 0xffffffffu
#endif
#define VKDS_TILE (256u * uint(VKDS_ITEMS))  // 4096, 5120 or 6144 4-byte keys, 2048 8-byte keys
#if VKDS_VALUES && VKDS_VAL_TYPE >= 4
#define VKDS_VAL_WORDS 2
#elif VKDS_VALUES
#define VKDS_VAL_WORDS 1
#else
#define VKDS_VAL_WORDS 0
#endif
#define VKDS_PASSES (4u * uint(VKDS_KEY_WORDS))

#define VKDS_STAGE_UPSWEEP 0u
#define VKDS_STAGE_PLAN 1u
#define VKDS_STAGE_COUNT 2u
#define VKDS_STAGE_SPINE 3u
#define VKDS_STAGE_SCATTER 4u  // portable
#define VKDS_STAGE_ONESWEEP 5u
#define VKDS_SORT_TEST_FALLBACK 0x10000ul
#define VKDS_SORT_ONESWEEP_PATH 0x20000ul // the scratch has onesweep's two regions

#define VKDS_AT_HIST 256ul
#define VKDS_AT_BASES 8448ul
#define VKDS_AT_PLAN 16640ul
#define VKDS_AT_REGIONS 16896ul

layout(buffer_reference, std430, buffer_reference_align = 4) buffer vkds_sw { uint v; };
layout(buffer_reference, std430, buffer_reference_align = 8) buffer vkds_sd { uint64_t v; };

// One array for every stage, used in turn: the upsweep's histograms, the 16-byte loads'
// transposition, the rank's subgroup histograms, the exchange that makes the writes run
// in digit order. A tile's words (4,096 or 5,120 of 4-byte keys, 4,096 of 8-byte ones) or
// the histograms' if they take more (sort.c, shared_bytes): 256 words a subgroup with
// VKDS_SORT_WORD_COUNTERS (sort.c, word_counters: the subgroup count is then exact), else
// 128 words of two 16-bit counters.
// The exchange's part of a tile: all of it, or half (VKDS_SORT_HALVES 2: 4-byte keys).
#define VKDS_TILE_WORDS (256 * VKDS_ITEMS * VKDS_KEY_WORDS / VKDS_SORT_HALVES)
#if VKDS_SORT_WORD_COUNTERS
#define VKDS_CTR_WORDS 256
#else
#define VKDS_CTR_WORDS 128
#endif
// The portable count kernel (sort_portable.glsl) counts into 256 of them and declares no
// more: NVIDIA's driver sizes a kernel's work groups an SM by the shared memory it
// declares, and the tile's 20 KiB held the count (40 registers) to what that allows
// (u32 keys at 2^28 on an H200, portable path: 10,116 -> 8,820 us; session 40,
// bench/RESULTS.md).
#if VKDS_SORT_KERNEL == 1
#define VKDS_SH_WORDS 256
#elif VKDS_CTR_WORDS * VKDS_SORT_SUBGROUPS > VKDS_TILE_WORDS
#define VKDS_SH_WORDS (VKDS_CTR_WORDS * VKDS_SORT_SUBGROUPS)
#else
#define VKDS_SH_WORDS VKDS_TILE_WORDS
#endif
shared uint vkds_sh[VKDS_SH_WORDS];
shared uint vkds_toff[256]; // digit d's first slot in the tile (its counts, for a moment)
shared uint vkds_goff[256]; // digit d's global index minus its first slot
shared uint vkds_sgt[256];  // subgroup totals of vkds_block_exclusive
shared uint vkds_misc[4];

uint vkds_stage() { return uint(P(4)) & 255u; }
uint vkds_pass() { return (uint(P(4)) >> 8) & 15u; }
// The work group's index across dispatches (vkds splits large launches).
uint vkds_group() { return vkds_global_id().x / 256u; }
// A thread's place: subgroup by subgroup, lane by lane (a bijection onto 0..255; the
// order vkds_block_exclusive scans in).
uint vkds_tid() { return gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID; }

uint64_t vkds_regions() { return (P(4) & VKDS_SORT_ONESWEEP_PATH) != 0ul ? 2ul : 1ul; }
uint64_t vkds_keys_at() { return P(2) + VKDS_AT_REGIONS + vkds_regions() * P(3) * 1024ul; }
uint64_t vkds_vals_at() { return vkds_keys_at() + ((P(0) * uint64_t(4 * VKDS_KEY_WORDS) + 15ul) & ~15ul); }
uint vkds_plan(uint pass) { return vkds_sw(P(2) + VKDS_AT_PLAN + 4ul * uint64_t(pass)).v; }

// ---- keys as ordered bits ----

// P(1): bit 0 descending; bits 1-2 the keys' kind (0 unsigned, 1 signed, 2 float). The
// kind is a parameter, not code: sequences of the built-in kinds reach the kernel as
// bits (codegen.c), so one kernel sorts every key type of a size.
uint vkds_kind() { return uint(P(1) >> 1) & 3u; }
KW_T vkds_desc() { return (P(1) & 1ul) != 0ul ? VKDS_KW_MAX : KW_T(0); }
#define VKDS_KW_TOP (KW_T(1) << (32 * VKDS_KEY_WORDS - 1))

KW_T vkds_kbits(KEY_T x) {
#if VKDS_KEY_TYPE == 1
  return uint(x);
#elif VKDS_KEY_TYPE == 2 || VKDS_KEY_TYPE == 5
  return x;
#elif VKDS_KEY_TYPE == 3
  return floatBitsToUint(x);
#elif VKDS_KEY_TYPE == 4
  return uint64_t(x);
#else
  return pack64(unpackDouble2x32(x));
#endif
}

KEY_T vkds_kfrom(KW_T b) {
#if VKDS_KEY_TYPE == 1
  return int(b);
#elif VKDS_KEY_TYPE == 2 || VKDS_KEY_TYPE == 5
  return b;
#elif VKDS_KEY_TYPE == 3
  return uintBitsToFloat(b);
#elif VKDS_KEY_TYPE == 4
  return int64_t(b);
#else
  return packDouble2x32(unpack32(b));
#endif
}

// The kind's transform as masks, without a branch (they are the same in every thread;
// a branch on the kind stood in the SASS of every load from and store to the sequence,
// 2026-11-27): the bits are XORed with vkds_flip_top(), and where the sign bit is set
// (forward) or clear (back) with vkds_flip_neg() too, then with vkds_desc().
KW_T vkds_flip_top() { return vkds_kind() != 0u ? VKDS_KW_TOP : KW_T(0); }
KW_T vkds_flip_neg() { return vkds_kind() == 2u ? ~VKDS_KW_TOP : KW_T(0); }
#if VKDS_KEY_WORDS == 1
KW_T vkds_sign_mask(KW_T b) { return uint(int(b) >> 31); }
#else
KW_T vkds_sign_mask(KW_T b) { return uint64_t(int64_t(b) >> 63); }
#endif

KW_T vkds_ord(KEY_T x) {
  KW_T b = vkds_kbits(x);
  return b ^ vkds_flip_top() ^ (vkds_sign_mask(b) & vkds_flip_neg()) ^ vkds_desc();
}

KEY_T vkds_key(KW_T b) {
  b ^= vkds_desc();
  return vkds_kfrom(b ^ vkds_flip_top() ^ (vkds_sign_mask(~b) & vkds_flip_neg()));
}

uint vkds_digit(KW_T b, uint pass) { return uint(b >> (8u * pass)) & 255u; }

// ---- the pass's source and destination: S (the sequence) or A (the scratch) ----
// (argsort, VKDS_SORT_ARGSORT: S for the keys is B, a copy of them in the scratch that
// the upsweep makes; the key sequence itself is only read, by the upsweep)

// Ordered bits in the scratch at `at`: key i, keys i..i+3 (16-byte loads), stores.
KW_T vkds_raw_key(uint64_t at, uint64_t i) {
#if VKDS_KEY_WORDS == 1
  return vkds_sw(at + 4ul * i).v;
#else
  return vkds_sd(at + 8ul * i).v;
#endif
}

void vkds_raw_key4(uint64_t at, uint64_t i, out KW_T r[4]) {
#if VKDS_KEY_WORDS == 1
  uvec4 w = vkds_p_uvec4(at + 4ul * i).v;
  r[0] = w.x, r[1] = w.y, r[2] = w.z, r[3] = w.w;
#else
  uint64_t a = at + 8ul * i;
  uvec4 w0 = vkds_p_uvec4(a).v, w1 = vkds_p_uvec4(a + 16ul).v;
  r[0] = pack64(w0.xy), r[1] = pack64(w0.zw), r[2] = pack64(w1.xy), r[3] = pack64(w1.zw);
#endif
}

void vkds_raw_key_st(uint64_t at, uint64_t i, KW_T b) {
#if VKDS_KEY_WORDS == 1
  vkds_sw(at + 4ul * i).v = b;
#else
  vkds_sd(at + 8ul * i).v = b;
#endif
}

// The key sequence's key i, keys i..i+3 (16 bytes at a time from a 16-byte aligned
// buffer, as its views allow), as ordered bits.
KW_T vkds_seq_key(uint64_t i) { return vkds_ord(key_ld(i)); }
void vkds_seq_key4(uint64_t i, out KW_T r[4]) {
  KEY_T x[4];
  key_ld_v(i, x);
  [[unroll]] for (int c = 0; c < 4; ++c) r[c] = vkds_ord(x[c]);
}

#if VKDS_SORT_ARGSORT
uint64_t vkds_keys_b_at() { return vkds_vals_at() + ((P(0) * uint64_t(4 * VKDS_VAL_WORDS) + 15ul) & ~15ul); }
#endif

KW_T vkds_src_key(bool from_a, uint64_t i) {
  if (from_a) return vkds_raw_key(vkds_keys_at(), i);
#if VKDS_SORT_ARGSORT
  return vkds_raw_key(vkds_keys_b_at(), i);
#else
  return vkds_seq_key(i);
#endif
}

// Keys i..i+3 (i a multiple of 4).
void vkds_src_key4(bool from_a, uint64_t i, out KW_T r[4]) {
  if (from_a) {
    vkds_raw_key4(vkds_keys_at(), i, r);
    return;
  }
#if VKDS_SORT_ARGSORT
  vkds_raw_key4(vkds_keys_b_at(), i, r);
#else
  vkds_seq_key4(i, r);
#endif
}

void vkds_dst_key(bool to_a, uint64_t i, KW_T b) {
  if (to_a) {
    vkds_raw_key_st(vkds_keys_at(), i, b);
    return;
  }
#if VKDS_SORT_ARGSORT
  vkds_raw_key_st(vkds_keys_b_at(), i, b);
#else
  key_st(i, vkds_key(b));
#endif
}

#if VKDS_VALUES

// A value as words (the second 0 for 4-byte values) and back.
uvec2 vkds_vbits(VAL_T v) {
#if VKDS_VAL_TYPE == 1
  return uvec2(uint(v), 0u);
#elif VKDS_VAL_TYPE == 2
  return uvec2(v, 0u);
#elif VKDS_VAL_TYPE == 3
  return uvec2(floatBitsToUint(v), 0u);
#elif VKDS_VAL_TYPE == 4 || VKDS_VAL_TYPE == 5
  return unpack32(uint64_t(v));
#else
  return unpackDouble2x32(v);
#endif
}

VAL_T vkds_vfrom(uvec2 w) {
#if VKDS_VAL_TYPE == 1
  return int(w.x);
#elif VKDS_VAL_TYPE == 2
  return w.x;
#elif VKDS_VAL_TYPE == 3
  return uintBitsToFloat(w.x);
#elif VKDS_VAL_TYPE == 4
  return int64_t(pack64(w));
#elif VKDS_VAL_TYPE == 5
  return pack64(w);
#else
  return packDouble2x32(w);
#endif
}

uvec2 vkds_src_val(bool from_a, uint64_t i) {
  if (!from_a) return vkds_vbits(val_ld(i));
#if VKDS_VAL_WORDS == 1
  return uvec2(vkds_sw(vkds_vals_at() + 4ul * i).v, 0u);
#else
  return unpack32(vkds_sd(vkds_vals_at() + 8ul * i).v);
#endif
}

void vkds_dst_val(bool to_a, uint64_t i, uvec2 w) {
  if (!to_a) {
    val_st(i, vkds_vfrom(w));
    return;
  }
#if VKDS_VAL_WORDS == 1
  vkds_sw(vkds_vals_at() + 4ul * i).v = w.x;
#else
  vkds_sd(vkds_vals_at() + 8ul * i).v = pack64(w);
#endif
}
#endif

// ---- work-group helpers ----

// Lane masks: one word where subgroups have at most 32 lanes (VKDS_SORT_WIDE_SUBGROUPS 0,
// from the device's subgroup size), else all four words of a ballot.
#if VKDS_SORT_WIDE_SUBGROUPS
#define VKDS_MASK uvec4
VKDS_MASK vkds_ballot(bool b) { return subgroupBallot(b); }
VKDS_MASK vkds_lt_mask() { return gl_SubgroupLtMask; }
uint vkds_popc(uvec4 m) { return uint(bitCount(m.x) + bitCount(m.y) + bitCount(m.z) + bitCount(m.w)); }
uint vkds_lsb(uvec4 m) {
  return m.x != 0u ? uint(findLSB(m.x)) : m.y != 0u ? 32u + uint(findLSB(m.y)) : m.z != 0u ? 64u + uint(findLSB(m.z))
                                                                                          : 96u + uint(findLSB(m.w));
}
#else
#define VKDS_MASK uint
VKDS_MASK vkds_ballot(bool b) { return subgroupBallot(b).x; }
VKDS_MASK vkds_lt_mask() { return gl_SubgroupLtMask.x; }
uint vkds_popc(uint m) { return uint(bitCount(m)); }
uint vkds_lsb(uint m) { return uint(findLSB(m)); }
#endif

// The sum of v over the threads before this one in vkds_tid order, and over all of them
// (`total`). Every thread calls it; barriers inside. With `reuse` false the last barrier
// is left out: the caller puts one before anything writes vkds_sgt again.
uint vkds_block_exclusive_of(uint v, out uint total, bool reuse) {
  uint lane = gl_SubgroupInvocationID, sg = gl_SubgroupID;
  uint x = v;
  for (uint d = 1u; d < gl_SubgroupSize; d <<= 1) {
    uint y = subgroupShuffle(x, lane >= d ? lane - d : lane);
    if (lane >= d) x += y;
  }
  if (lane == gl_SubgroupSize - 1u) vkds_sgt[sg] = x;
  barrier();
  uint before = 0u, all = 0u;
  for (uint w = 0u; w < gl_NumSubgroups; ++w) {
    uint s = vkds_sgt[w];
    if (w < sg) before += s;
    all += s;
  }
  total = all;
  if (reuse) barrier();
  return before + x - v;
}
uint vkds_block_exclusive(uint v, out uint total) { return vkds_block_exclusive_of(v, total, true); }

// ---- one tile ----

// The tile's slot of item j of this thread: subgroup sg owns the slots
// [sg * S * ITEMS, (sg + 1) * S * ITEMS), item by item, lane by lane. Ranking items in
// order j then gives each key its place among equal digits in slot order: stable.
uint vkds_pos(uint j) {
  return gl_SubgroupID * gl_SubgroupSize * uint(VKDS_ITEMS) + j * gl_SubgroupSize + gl_SubgroupInvocationID;
}

// The ordered bits of this thread's items of the tile at `base` (`valid` keys there);
// slots past them hold all ones (digit 255 in every pass: they rank last). A whole tile
// is read 16 bytes at a time in memory order and handed round through shared memory;
// with VKDS_SORT_DIRECT_LOADS (sort.c: CPU devices, or VKDS_SORT_LOADS=direct) each
// thread loads its own items, as a partial tile's are.
void vkds_load_tile(bool from_a, uint64_t base, uint valid, out KW_T k[VKDS_ITEMS]) {
  uint t = vkds_tid();
  // (a tile exchanged in halves does not fit shared memory whole: straight loads)
  if (VKDS_SORT_DIRECT_LOADS == 0 && VKDS_SORT_HALVES == 1 && valid == VKDS_TILE) {
    // every load issued before the first store to shared memory: one memory latency a
    // tile, where a load then its stores, quad by quad, waited once a quad (the SASS of
    // the H100's driver; the scan's tiles likewise, scan_chained.glsl)
    // (the source chosen once, outside the loop, so that no branch stands between loads)
    KW_T r[VKDS_ITEMS / 4][4];
    if (from_a) {
      [[unroll]] for (uint q = 0u; q < uint(VKDS_ITEMS) / 4u; ++q)
        vkds_src_key4(true, base + uint64_t(4u * (q * 256u + t)), r[q]);
    } else {
      [[unroll]] for (uint q = 0u; q < uint(VKDS_ITEMS) / 4u; ++q)
        vkds_src_key4(false, base + uint64_t(4u * (q * 256u + t)), r[q]);
    }
    [[unroll]] for (uint q = 0u; q < uint(VKDS_ITEMS) / 4u; ++q) {
      uint s = 4u * (q * 256u + t);
      [[unroll]] for (uint c = 0u; c < 4u; ++c) {
#if VKDS_KEY_WORDS == 1
        vkds_sh[s + c] = r[q][c];
#else
        vkds_sh[2u * (s + c)] = uint(r[q][c]);
        vkds_sh[2u * (s + c) + 1u] = uint(r[q][c] >> 32);
#endif
      }
    }
    barrier();
    [[unroll]] for (uint j = 0u; j < uint(VKDS_ITEMS); ++j) {
      uint s = vkds_pos(j);
#if VKDS_KEY_WORDS == 1
      k[j] = vkds_sh[s];
#else
      k[j] = pack64(uvec2(vkds_sh[2u * s], vkds_sh[2u * s + 1u]));
#endif
    }
    barrier();
    return;
  }
  if (valid == VKDS_TILE) {
    // a whole tile: no bounds, and the source chosen outside the loop, so that every load
    // is issued before the first is waited for
    if (from_a) {
      [[unroll]] for (uint j = 0u; j < uint(VKDS_ITEMS); ++j) k[j] = vkds_src_key(true, base + uint64_t(vkds_pos(j)));
    } else {
      [[unroll]] for (uint j = 0u; j < uint(VKDS_ITEMS); ++j) k[j] = vkds_src_key(false, base + uint64_t(vkds_pos(j)));
    }
    return;
  }
  [[unroll]] for (uint j = 0u; j < uint(VKDS_ITEMS); ++j) {
    uint s = vkds_pos(j);
    k[j] = s < valid ? vkds_src_key(from_a, base + uint64_t(s)) : VKDS_KW_MAX;
  }
}

// The counts of the pass's digits among the tile's `valid` keys, into vkds_sh[0..255]
// (the order of loads does not matter: 16 bytes at a time in memory order).
void vkds_count_tile(bool from_a, uint64_t base, uint valid, uint pass) {
  uint t = vkds_tid();
  vkds_sh[t] = 0u;
  barrier();
  if (valid == VKDS_TILE) {
    [[unroll]] for (uint q = 0u; q < uint(VKDS_ITEMS) / 4u; ++q) {
      KW_T r[4];
      vkds_src_key4(from_a, base + uint64_t(4u * (q * 256u + t)), r);
      [[unroll]] for (uint c = 0u; c < 4u; ++c) atomicAdd(vkds_sh[vkds_digit(r[c], pass)], 1u);
    }
  } else {
    [[unroll]] for (uint i = 0u; i < uint(VKDS_ITEMS); ++i) {
      uint s = t + 256u * i;
      if (s < valid) atomicAdd(vkds_sh[vkds_digit(vkds_src_key(from_a, base + uint64_t(s)), pass)], 1u);
    }
  }
  barrier();
}

// `peers` (declared) becomes the lanes of the subgroup whose digit is d, `everyone` the
// active lanes: 8 ballots, one per bit (GL_NV_shader_subgroup_partitioned's one match
// instruction in their place was slower on an H100: bench/RESULTS.md, session 21). A
// macro, not a function, so that the compiled code stays the measured one: with a helper
// function the portable sort read 5% slower in one call, not settled (same section).
#define VKDS_PEERS(peers, d, everyone)                                                     \
  peers = everyone;                                                                        \
  [[unroll]] for (uint b_ = 0u; b_ < 8u; ++b_) {                                           \
    bool bit_ = (((d) >> b_) & 1u) != 0u;                                                  \
    VKDS_MASK v_ = vkds_ballot(bit_);                                                      \
    peers &= bit_ ? v_ : ~v_;                                                              \
  }

// Ranking a tile by the pass's digit, stably in slot order: loc[j] becomes item j's slot
// in the tile ordered by digit. Each subgroup has its own histogram of the 256 digits in
// vkds_sh at vkds_hist_at(): a word a counter (VKDS_SORT_WORD_COUNTERS), else 16-bit
// counters, two digits a word. A subgroup ranks its items with ballots (the lanes holding
// the same digit: VKDS_PEERS), one leader per digit adding the lanes to the subgroup's
// counter; the histograms' exclusive scan across the subgroups and each digit's first
// slot in the tile (vkds_toff) complete the places. Two orders of the same steps:
//   vkds_rank         (the portable scatter, 16-bit counters) ranks first, the counters
//                     start at zero and their scan comes after, then each item adds its
//                     subgroup's prefix;
//   vkds_rank_counts, (Onesweep; both paths with word counters) counts first (each item
//   vkds_rank_items   adds one to its counter), scans, and only then ranks, the counters
//                     already holding the prefixes: the tile's counts are known before
//                     its keys are ranked, so Onesweep publishes them earlier. With 16-bit
//                     counters that is one more atomic an item, and on the portable path,
//                     where nothing waits for the counts, ranking first was faster (H100,
//                     u32 at 2^28, 2026-11-26, session 23: 11,411-11,416 against
//                     11,758-11,818 us; bench/RESULTS.md). A word counter's count is one
//                     atomicAdd(, 1) (NVIDIA: ATOMS.POPC.INC, one a subgroup), and its scan
//                     can leave each digit's first slot in the counters (no addition
//                     after the rank).

uint vkds_hist_at() { return gl_SubgroupID * uint(VKDS_CTR_WORDS); }
// Digit d's counter in the subgroup's histogram, what one key adds to it, its value in
// the counter's word w.
#if VKDS_SORT_WORD_COUNTERS
uint vkds_ctr(uint d) { return vkds_hist_at() + d; }
uint vkds_ctr_unit(uint d) { return 1u; }
uint vkds_ctr_get(uint w, uint d) { return w; }
#else
uint vkds_ctr(uint d) { return vkds_hist_at() + (d >> 1); }
uint vkds_ctr_unit(uint d) { return 1u << ((d & 1u) * 16u); }
uint vkds_ctr_get(uint w, uint d) { return (w >> ((d & 1u) * 16u)) & 0xffffu; }
#endif

// Zeroes this subgroup's histogram. Only the subgroup itself writes it until the next
// work-group barrier, and everyone who read the last tile's has passed one since: a
// subgroup barrier is enough.
void vkds_hist_zero() {
  for (uint i = gl_SubgroupInvocationID; i < uint(VKDS_CTR_WORDS); i += gl_SubgroupSize) vkds_sh[vkds_hist_at() + i] = 0u;
  subgroupMemoryBarrierShared();
  subgroupBarrier();
}

// The histograms (complete, a barrier after their last update) become each subgroup's
// exclusive prefix of each digit across the subgroups before it, in place; word counters
// also hold the digit's vkds_toff (the slot of its subgroup's first key). Returns the
// tile's count of digit vkds_tid() and sets vkds_toff[vkds_tid()] to the digit's first
// slot; the block scan's last barrier is left to the caller. Word counters: thread t walks
// digit t's counters. 16-bit counters: threads t and t ^ 1 (neighbouring lanes) hold
// digits 2w and 2w + 1 of word w; only the even one reads and writes the word, and one
// shuffle hands it to the odd one and brings back the odd one's prefix (sort.c refuses
// subgroups of one lane); a digit's count is at most 5,120: 16 bits hold it. (This was
// half the threads walking the words, then the counts through vkds_toff: two barriers
// more; u32 at 2^28 on an H100, portable path, two rounds in one call: 11,726 / 11,764 ->
// 11,585 / 11,586 us; Onesweep unchanged. bench/RESULTS.md, session 22.)
#if VKDS_SORT_WORD_COUNTERS
uint vkds_hist_scan() {
  uint t = vkds_tid(), count = 0u, total;
  for (uint g = 0u; g < gl_NumSubgroups; ++g) count += vkds_sh[g * 256u + t];
  uint first = vkds_block_exclusive_of(count, total, false);
  vkds_toff[t] = first;
  for (uint g = 0u; g < gl_NumSubgroups; ++g) {
    uint c = vkds_sh[g * 256u + t];
    vkds_sh[g * 256u + t] = first;
    first += c;
  }
  return count;
}
#else
uint vkds_hist_scan() {
  uint t = vkds_tid();
  bool even = (t & 1u) == 0u;
  uint count = 0u;
  for (uint g = 0u; g < gl_NumSubgroups; ++g) {
    uint at = g * 128u + (t >> 1);
    uint word = even ? vkds_sh[at] : 0u;
    uint got = subgroupShuffleXor(even ? word : count, 1u); // even: the odd's prefix; odd: the word
    if (even) {
      vkds_sh[at] = count | got << 16;
      count += word & 0xffffu;
    } else {
      count += got >> 16;
    }
  }
  uint total;
  vkds_toff[t] = vkds_block_exclusive_of(count, total, false);
  return count;
}
#endif

// The subgroup's ranking: loc[j] becomes item j's place among the subgroup's items of its
// digit before it, plus the value its digit's counter had before the subgroup's items of
// that digit were added to it, plus (with `first`, a constant) the digit's vkds_toff.
void vkds_rank_peers(KW_T k[VKDS_ITEMS], uint pass, const bool first, out uint loc[VKDS_ITEMS]) {
  uint lane = gl_SubgroupInvocationID;
  VKDS_MASK lt = vkds_lt_mask(), everyone = vkds_ballot(true);
#if VKDS_SORT_WIDE_SUBGROUPS
  // item by item (a lane mask of four words does not fit loc[j] while it waits)
  [[unroll]] for (uint j = 0u; j < uint(VKDS_ITEMS); ++j) {
    uint d = vkds_digit(k[j], pass);
    VKDS_MASK peers;
    VKDS_PEERS(peers, d, everyone)
    uint leader = vkds_lsb(peers), before = 0u;
    if (lane == leader) before = vkds_ctr_get(atomicAdd(vkds_sh[vkds_ctr(d)], vkds_popc(peers) * vkds_ctr_unit(d)), d);
    loc[j] = subgroupShuffle(before, leader) + vkds_popc(peers & lt) + (first ? vkds_toff[d] : 0u);
  }
#else
  // in three rounds, each over every item: the peers (ballots), the leaders' atomics
  // (issued back to back, their results waited for only in the third round), the
  // shuffles. Item by item, each item's atomic was waited for before the next item's
  // ballots: one shared-memory round trip an item. Measured on an H100 (2026-11-26,
  // session 21, A/B in one call, two rounds), u32 keys at 2^28: Onesweep 14,747 /
  // 14,616 -> 13,332 / 13,287 us (0.44x -> 0.48x CUB), the portable path 12,525 /
  // 12,464 -> 12,351 / 12,327 (0.51x -> 0.52x); 128 registers where 95 spilled 128 bytes.
  [[unroll]] for (uint j = 0u; j < uint(VKDS_ITEMS); ++j) {
    uint d = vkds_digit(k[j], pass);
    VKDS_MASK peers;
    VKDS_PEERS(peers, d, everyone)
    loc[j] = peers;
  }
  uint before[VKDS_ITEMS];
  [[unroll]] for (uint j = 0u; j < uint(VKDS_ITEMS); ++j) {
    uint d = vkds_digit(k[j], pass);
    before[j] = 0u;
    if (lane == vkds_lsb(loc[j])) before[j] = atomicAdd(vkds_sh[vkds_ctr(d)], vkds_popc(loc[j]) * vkds_ctr_unit(d));
  }
  [[unroll]] for (uint j = 0u; j < uint(VKDS_ITEMS); ++j) {
    uint d = vkds_digit(k[j], pass);
    uint b = vkds_ctr_get(before[j], d);
    loc[j] = subgroupShuffle(b, vkds_lsb(loc[j])) + vkds_popc(loc[j] & lt) + (first ? vkds_toff[d] : 0u);
  }
#endif
}

// Ranks first (above). Leaves digit d's first slot in vkds_toff[d]; the histograms in
// vkds_sh are still being read on return (vkds_exchange_keys begins with a barrier).
void vkds_rank(KW_T k[VKDS_ITEMS], uint pass, out uint loc[VKDS_ITEMS]) {
  vkds_hist_zero();
  vkds_rank_peers(k, pass, false, loc);
  barrier();
  vkds_hist_scan();
  barrier();
  [[unroll]] for (uint j = 0u; j < uint(VKDS_ITEMS); ++j) {
    uint d = vkds_digit(k[j], pass);
    loc[j] += vkds_toff[d] + vkds_ctr_get(vkds_sh[vkds_ctr(d)], d);
  }
}

// Counts first (above): returns the tile's count of digit vkds_tid() (the padding
// included), leaves digit d's first slot in vkds_toff[d] and the prefixes in the
// counters, for vkds_rank_items.
uint vkds_rank_counts(KW_T k[VKDS_ITEMS], uint pass) {
  vkds_hist_zero();
  [[unroll]] for (uint j = 0u; j < uint(VKDS_ITEMS); ++j) {
    uint d = vkds_digit(k[j], pass);
    atomicAdd(vkds_sh[vkds_ctr(d)], vkds_ctr_unit(d));
  }
  barrier();
  uint count = vkds_hist_scan();
  barrier();
  return count;
}

// After vkds_rank_counts; vkds_sh is still being read on return (as after vkds_rank).
void vkds_rank_items(KW_T k[VKDS_ITEMS], uint pass, out uint loc[VKDS_ITEMS]) {
  // (word counters already hold each digit's first slot)
  vkds_rank_peers(k, pass, VKDS_SORT_WORD_COUNTERS == 0, loc);
}

// Words x of the items at slots loc, in slot order: y[i] is slot t + 256 i's. vkds_sh is
// free on entry and still being read on return. With VKDS_SORT_HALVES 2, part h holds
// the slots [h * VKDS_HW, (h + 1) * VKDS_HW) and fills y[h * VKDS_IH ...]: every item
// is stored in the part that holds its slot (a slot below the part wraps past it).
#define VKDS_HW (256u * uint(VKDS_ITEMS) / uint(VKDS_SORT_HALVES))
#define VKDS_IH (uint(VKDS_ITEMS) / uint(VKDS_SORT_HALVES))
void vkds_exchange_words(uint x[VKDS_ITEMS], uint loc[VKDS_ITEMS], out uint y[VKDS_ITEMS]) {
  uint t = vkds_tid();
  [[unroll]] for (uint h = 0u; h < uint(VKDS_SORT_HALVES); ++h) {
    if (h > 0u) barrier(); // the last part is read out
    [[unroll]] for (uint j = 0u; j < uint(VKDS_ITEMS); ++j) {
      uint s = loc[j] - h * VKDS_HW;
      if (VKDS_SORT_HALVES == 1 || s < VKDS_HW) vkds_sh[s] = x[j];
    }
    barrier();
    [[unroll]] for (uint i = 0u; i < VKDS_IH; ++i) y[h * VKDS_IH + i] = vkds_sh[t + 256u * i];
  }
}

// The ranked tile's keys in slot order: o[i] is slot t + 256 i's (the keys go through
// vkds_sh to their slots). vkds_sh is still being read on return: a barrier comes before
// anything writes it again.
void vkds_exchange_keys(KW_T k[VKDS_ITEMS], uint loc[VKDS_ITEMS], out KW_T o[VKDS_ITEMS]) {
  uint t = vkds_tid();
  barrier(); // the histograms in vkds_sh are done with
#if VKDS_KEY_WORDS == 1
  vkds_exchange_words(k, loc, o);
#else
  uint w0[VKDS_ITEMS];
  [[unroll]] for (uint j = 0u; j < uint(VKDS_ITEMS); ++j) vkds_sh[loc[j]] = uint(k[j]);
  barrier();
  [[unroll]] for (uint i = 0u; i < uint(VKDS_ITEMS); ++i) w0[i] = vkds_sh[t + 256u * i];
  barrier();
  [[unroll]] for (uint j = 0u; j < uint(VKDS_ITEMS); ++j) vkds_sh[loc[j]] = uint(k[j] >> 32);
  barrier();
  [[unroll]] for (uint i = 0u; i < uint(VKDS_ITEMS); ++i) o[i] = pack64(uvec2(w0[i], vkds_sh[t + 256u * i]));
#endif
}

#if VKDS_VALUES
// This thread's values of the tile at `base`, at the slots of its keys' items (vkds_pos):
// v[j] is item j's (past `valid`: zeros). The source chosen once outside the loop, so
// that every load is issued before the first is waited for.
// Both paths call it once the keys are ranked, before the keys' exchange, so that the
// loads' latency passes behind the exchange and the keys' stores (and Onesweep's
// look-back). Loaded after the keys' stores, as until session 41, each tile waited for
// them at the end. Measured on an H200 (2026-11-29, session 41, bench/RESULTS.md), u32
// pairs at 2^28, portable path, GPU us, two calls: after the keys' stores 10,453-10,465
// (0.71x CUB's SortPairs), before the exchange 9,887-10,056 (0.74-0.75x), after it
// 10,344-10,361; before the rank 14,201-14,286 (182 registers: one group an SM).
void vkds_load_values(bool from_a, uint64_t base, uint valid, out uvec2 v[VKDS_ITEMS]) {
  if (valid == VKDS_TILE && from_a) {
    [[unroll]] for (uint j = 0u; j < uint(VKDS_ITEMS); ++j) v[j] = vkds_src_val(true, base + uint64_t(vkds_pos(j)));
  } else if (valid == VKDS_TILE) {
    [[unroll]] for (uint j = 0u; j < uint(VKDS_ITEMS); ++j) v[j] = vkds_src_val(false, base + uint64_t(vkds_pos(j)));
  } else {
    [[unroll]] for (uint j = 0u; j < uint(VKDS_ITEMS); ++j) {
      uint s = vkds_pos(j);
      v[j] = s < valid ? vkds_src_val(from_a, base + uint64_t(s)) : uvec2(0u);
    }
  }
}
#endif

// Writes the exchanged tile's keys to the pass's destination: slot s (< valid) goes to
// global index vkds_goff[its digit] + s, so consecutive threads write consecutive
// addresses within each digit's run; g[i] is slot t + 256 i's index, for the values.
// vkds_goff is set, and a barrier has passed since the exchange's reads.
void vkds_write_keys(uint pass, bool from_a, uint valid, KW_T o[VKDS_ITEMS], out uint g[VKDS_ITEMS]) {
  uint t = vkds_tid();
  bool to_a = !from_a;
  // every index first (their shared-memory reads issued together), then the stores, with
  // the destination and the bounds decided once outside the loops: item by item, each
  // store waited for its own read and stood behind two branches (the SASS, 2026-11-27)
  [[unroll]] for (uint i = 0u; i < uint(VKDS_ITEMS); ++i) g[i] = vkds_goff[vkds_digit(o[i], pass)] + t + 256u * i;
  if (valid == VKDS_TILE && to_a) {
    [[unroll]] for (uint i = 0u; i < uint(VKDS_ITEMS); ++i) vkds_dst_key(true, uint64_t(g[i]), o[i]);
  } else if (valid == VKDS_TILE) {
    [[unroll]] for (uint i = 0u; i < uint(VKDS_ITEMS); ++i) vkds_dst_key(false, uint64_t(g[i]), o[i]);
  } else {
    [[unroll]] for (uint i = 0u; i < uint(VKDS_ITEMS); ++i)
      if (t + 256u * i < valid) vkds_dst_key(to_a, uint64_t(g[i]), o[i]);
  }
}

#if VKDS_VALUES
// The values v (vkds_load_values) take their keys' way: through vkds_sh to the slots loc,
// then to the indices g (vkds_write_keys). vkds_sh is free on entry and still being read
// on return.
void vkds_write_values(bool from_a, uint valid, uvec2 v[VKDS_ITEMS], uint loc[VKDS_ITEMS], uint g[VKDS_ITEMS]) {
  uint t = vkds_tid();
  bool to_a = !from_a;
  uvec2 w[VKDS_ITEMS];
  uint x[VKDS_ITEMS], y[VKDS_ITEMS];
  [[unroll]] for (uint j = 0u; j < uint(VKDS_ITEMS); ++j) x[j] = v[j].x;
  vkds_exchange_words(x, loc, y);
  [[unroll]] for (uint i = 0u; i < uint(VKDS_ITEMS); ++i) w[i] = uvec2(y[i], 0u);
#if VKDS_VAL_WORDS == 2
  [[unroll]] for (uint j = 0u; j < uint(VKDS_ITEMS); ++j) x[j] = v[j].y;
  barrier();
  vkds_exchange_words(x, loc, y);
  [[unroll]] for (uint i = 0u; i < uint(VKDS_ITEMS); ++i) w[i].y = y[i];
#endif
  if (valid == VKDS_TILE && to_a) {
    [[unroll]] for (uint i = 0u; i < uint(VKDS_ITEMS); ++i) vkds_dst_val(true, uint64_t(g[i]), w[i]);
  } else if (valid == VKDS_TILE) {
    [[unroll]] for (uint i = 0u; i < uint(VKDS_ITEMS); ++i) vkds_dst_val(false, uint64_t(g[i]), w[i]);
  } else {
    [[unroll]] for (uint i = 0u; i < uint(VKDS_ITEMS); ++i)
      if (t + 256u * i < valid) vkds_dst_val(to_a, uint64_t(g[i]), w[i]);
  }
}
#endif
