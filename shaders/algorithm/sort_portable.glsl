// shaders/algorithm/sort_portable.glsl: the portable radix sort's passes (after
// sort_tile.glsl; sort_main.glsl calls them): count and spine in one kernel, scatter in
// another. Per pass three dispatches with barriers between them; no work
// group ever waits for another, on any device:
//   count    tile k counts its digits: count(d, k) at d * tiles + k of the region;
//   spine    digit d's counts are scanned over the tiles, exclusive, starting from the
//            digit's start: the global index of tile k's first key of digit d;
//   scatter  tile k ranks its keys (stable) and writes each to that index plus its rank
//            among the tile's keys of its digit.
// Count and scatter groups take P(5) consecutive tiles each, spine groups P(5) digits
// (sort.c: one each on GPUs; fewer, larger groups on CPU devices, where every work group
// costs much to start). The keys are read twice per pass (count, scatter) and written
// once.

uint64_t vkds_count_at(uint d, uint tile) { return P(2) + VKDS_AT_REGIONS + 4ul * (uint64_t(d) * P(3) + uint64_t(tile)); }

void vkds_spine(uint pass, uint d) {
  uint t = vkds_tid(), tiles = uint(P(3));
  uint carry = vkds_sw(P(2) + VKDS_AT_BASES + 4ul * uint64_t(pass * 256u + d)).v;
  // 1024 counts a round, 4 per thread (sort.c keeps rounds * digits per group small:
  // lavapipe's loop budget)
  for (uint first = 0u; first < tiles; first += 1024u) {
    uint c[4], sum = 0u;
    [[unroll]] for (uint q = 0u; q < 4u; ++q) {
      uint k = first + 4u * t + q;
      c[q] = k < tiles ? vkds_sw(vkds_count_at(d, k)).v : 0u;
      sum += c[q];
    }
    uint total;
    uint at = carry + vkds_block_exclusive(sum, total);
    [[unroll]] for (uint q = 0u; q < 4u; ++q) {
      uint k = first + 4u * t + q;
      if (k < tiles) vkds_sw(vkds_count_at(d, k)).v = at;
      at += c[q];
    }
    carry += total;
  }
}

// Count and scatter for group g: tiles g * P(5) .. (g + 1) * P(5) - 1; spine: digits, or
// with P(6) every digit by its own thread (few tiles on a CPU device: no barriers).
void vkds_portable(uint stage, uint pass, bool from_a) {
  uint per = uint(P(5)), first = vkds_group() * per, t = vkds_tid();
#if VKDS_SORT_KERNEL == 1
  if (stage == VKDS_STAGE_SPINE && P(6) != 0ul) { // one group, thread d scans digit d alone
    uint carry = vkds_sw(P(2) + VKDS_AT_BASES + 4ul * uint64_t(pass * 256u + t)).v;
    for (uint k = 0u; k < uint(P(3)); ++k) {
      uint c = vkds_sw(vkds_count_at(t, k)).v;
      vkds_sw(vkds_count_at(t, k)).v = carry;
      carry += c;
    }
    return;
  }
  if (stage == VKDS_STAGE_SPINE) {
    for (uint d = first; d < min(first + per, 256u); ++d) vkds_spine(pass, d);
    return;
  }
  for (uint tile = first; tile < min(first + per, uint(P(3))); ++tile) {
    uint64_t base = uint64_t(tile) * uint64_t(VKDS_TILE);
    uint valid = uint(min(P(0) - base, uint64_t(VKDS_TILE)));
    vkds_count_tile(from_a, base, valid, pass);
    vkds_sw(vkds_count_at(t, tile)).v = vkds_sh[t];
    barrier(); // vkds_sh is the next tile's
  }
#else
  for (uint tile = first; tile < min(first + per, uint(P(3))); ++tile) {
    uint64_t base = uint64_t(tile) * uint64_t(VKDS_TILE);
    uint valid = uint(min(P(0) - base, uint64_t(VKDS_TILE)));
    KW_T k[VKDS_ITEMS];
    vkds_load_tile(from_a, base, valid, k);
    uint loc[VKDS_ITEMS];
#if VKDS_SORT_WORD_COUNTERS // counts first (sort_tile.glsl says why)
    vkds_rank_counts(k, pass);
    vkds_rank_items(k, pass, loc);
#else
    vkds_rank(k, pass, loc);
#endif
    vkds_goff[t] = vkds_sw(vkds_count_at(t, tile)).v - vkds_toff[t]; // seen after the exchange's barrier
#if VKDS_VALUES // loaded here: sort_tile.glsl's vkds_load_values says why
    uvec2 v[VKDS_ITEMS];
    vkds_load_values(from_a, base, valid, v);
#endif
    KW_T o[VKDS_ITEMS];
    vkds_exchange_keys(k, loc, o);
#if VKDS_VALUES
    barrier(); // the values go through vkds_sh next
#endif
    uint g[VKDS_ITEMS];
    vkds_write_keys(pass, from_a, valid, o, g);
#if VKDS_VALUES
    vkds_write_values(from_a, valid, v, loc, g);
#endif
    barrier(); // vkds_goff and vkds_sh are the next tile's
  }
#endif
}
