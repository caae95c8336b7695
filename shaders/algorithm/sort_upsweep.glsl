// shaders/algorithm/sort_upsweep.glsl: the sort's first two dispatches, on both paths
// (after sort_tile.glsl; a kernel of their own, sort_main.glsl).
//
// Upsweep: one read of the keys builds the histogram of every pass's digit at once (and
// for argsort writes the keys' copy B and the indices 0, 1, ... the passes start from).
// Work group g takes tiles g, g + G, ... (G = P(5)), counts into shared memory (every
// pass's 256 counters, in copies, below) and adds its non-zero counts to the scratch's
// histograms.
//
// Plan: one work group turns the histograms into what each pass needs to know:
//   - the digit starts, the exclusive scan of the pass's histogram (where digit d's
//     keys begin in the pass's output);
//   - whether the pass runs: a pass whose digit is the same for every key moves nothing
//     (every key would stay where it is), so it is skipped. The data moves S -> A -> S
//     ...: an odd number of passes would leave it in A, so then one skippable pass runs
//     after all (as a copy that keeps the order); none runs when every key is equal;
//   - its direction: runs 0, 2, 4, ... read S and write A, the others read A and write S.
// The passes' groups read the plan and return at once when theirs does not run.

// Subgroups count into VKDS_COPIES copies of the histograms (as many as vkds_sh holds):
// keys whose digits repeat (a constant byte, small numbers in wide keys) otherwise send
// every atomic of a work group to one counter.
#define VKDS_HIST_WORDS (VKDS_PASSES * 256u)
#define VKDS_COPIES (uint(VKDS_SH_WORDS) / VKDS_HIST_WORDS)

void vkds_count_key(KW_T b, uint copy) {
  [[unroll]] for (uint p = 0u; p < VKDS_PASSES; ++p) atomicAdd(vkds_sh[copy + p * 256u + vkds_digit(b, p)], 1u);
}

#if VKDS_SORT_ARGSORT
// argsort: value i is i (the passes then move each key's index with it)
VAL_T vkds_index(uint64_t i) { return vkds_vfrom(uvec2(uint(i), uint(i >> 32))); }
#endif

void vkds_upsweep() {
  uint t = vkds_tid(), groups = uint(P(5)), tiles = uint(P(3));
  uint copy = (gl_SubgroupID % VKDS_COPIES) * VKDS_HIST_WORDS;
  uint64_t n = P(0);
  for (uint i = t; i < VKDS_COPIES * VKDS_HIST_WORDS; i += 256u) vkds_sh[i] = 0u;
  barrier();
  // tiles / groups <= 2048 (sort.c): lavapipe's loop budget
  for (uint tile = vkds_group(); tile < tiles; tile += groups) {
    uint64_t base = uint64_t(tile) * uint64_t(VKDS_TILE);
    uint valid = uint(min(n - base, uint64_t(VKDS_TILE)));
    if (valid == VKDS_TILE) {
      [[unroll]] for (uint q = 0u; q < uint(VKDS_ITEMS) / 4u; ++q) {
        uint64_t i = base + uint64_t(4u * (q * 256u + t));
        KW_T r[4];
        vkds_seq_key4(i, r);
        [[unroll]] for (uint c = 0u; c < 4u; ++c) vkds_count_key(r[c], copy);
#if VKDS_SORT_ARGSORT
        VAL_T x[4];
        [[unroll]] for (uint c = 0u; c < 4u; ++c) {
          vkds_raw_key_st(vkds_keys_b_at(), i + uint64_t(c), r[c]);
          x[c] = vkds_index(i + uint64_t(c));
        }
        val_vst(i, x);
#endif
      }
    } else {
      [[unroll]] for (uint q = 0u; q < uint(VKDS_ITEMS); ++q) {
        uint s = t + 256u * q;
        if (s < valid) {
          uint64_t i = base + uint64_t(s);
          KW_T r = vkds_seq_key(i);
          vkds_count_key(r, copy);
#if VKDS_SORT_ARGSORT
          vkds_raw_key_st(vkds_keys_b_at(), i, r);
          val_st(i, vkds_index(i));
#endif
        }
      }
    }
  }
  barrier();
  for (uint i = t; i < VKDS_HIST_WORDS; i += 256u) {
    uint c = 0u;
    for (uint k = 0u; k < VKDS_COPIES; ++k) c += vkds_sh[k * VKDS_HIST_WORDS + i];
    if (c != 0u) atomicAdd(vkds_sw(P(2) + VKDS_AT_HIST + 4ul * uint64_t(i)).v, c);
  }
}

void vkds_make_plan() {
  uint t = vkds_tid();
  uint n = uint(P(0));
  if (t == 0u) vkds_misc[0] = 0u;
  barrier();
  for (uint p = 0u; p < VKDS_PASSES; ++p) {
    uint64_t at = 4ul * uint64_t(p * 256u + t);
    uint c = vkds_sw(P(2) + VKDS_AT_HIST + at).v;
    if (c == n) atomicOr(vkds_misc[0], 1u << p); // every key has digit t
    uint total;
    vkds_sw(P(2) + VKDS_AT_BASES + at).v = vkds_block_exclusive(c, total);
  }
  barrier();
  if (t != 0u) return;
  uint all = (1u << VKDS_PASSES) - 1u, skip = vkds_misc[0];
  if ((bitCount(all & ~skip) & 1) != 0) skip &= ~(1u << uint(findLSB(skip))); // an even number runs
  uint run = 0u;
  for (uint p = 0u; p < VKDS_PASSES; ++p) {
    uint word = 0u;
    if ((skip & (1u << p)) == 0u) word = 1u | ((run++ & 1u) != 0u ? 2u : 0u);
    vkds_sw(P(2) + VKDS_AT_PLAN + 4ul * uint64_t(p)).v = word;
  }
}
