// shaders/algorithm/sort_portable.glsl: the portable radix sort (after sort_tile.glsl
// and sort_upsweep.glsl). Per pass three dispatches with barriers between them; no work
// group ever waits for another, on any device:
//   count    tile k counts its digits: count(d, k) at d * tiles + k of the region;
//   spine    work group d scans digit d's counts over the tiles, exclusive, starting
//            from the digit's start: the global index of tile k's first key of digit d;
//   scatter  tile k ranks its keys (stable) and writes each to that index plus its rank
//            among the tile's keys of its digit.
// The keys are read twice per pass (count, scatter) and written once.

uint64_t vkds_count_at(uint d, uint tile) { return P(2) + VKDS_AT_REGIONS + 4ul * (uint64_t(d) * P(3) + uint64_t(tile)); }

void vkds_spine(uint pass) {
  uint d = vkds_group(), t = vkds_tid(), tiles = uint(P(3));
  uint carry = vkds_sw(P(2) + VKDS_AT_BASES + 4ul * uint64_t(pass * 256u + d)).v;
  // 1024 counts a round, 4 per thread; tiles <= 2^21 (sort.c): at most 2048 rounds
  for (uint first = 0u; first < tiles; first += 1024u) {
    uint c[4], sum = 0u;
    for (uint q = 0u; q < 4u; ++q) {
      uint k = first + 4u * t + q;
      c[q] = k < tiles ? vkds_sw(vkds_count_at(d, k)).v : 0u;
      sum += c[q];
    }
    uint total;
    uint at = carry + vkds_block_exclusive(sum, total);
    for (uint q = 0u; q < 4u; ++q) {
      uint k = first + 4u * t + q;
      if (k < tiles) vkds_sw(vkds_count_at(d, k)).v = at;
      at += c[q];
    }
    carry += total;
  }
}

void main() {
  uint stage = vkds_stage(), pass = vkds_pass();
  if (stage == VKDS_STAGE_UPSWEEP) {
    vkds_upsweep();
    return;
  }
  if (stage == VKDS_STAGE_PLAN) {
    vkds_make_plan();
    return;
  }
  uint plan = vkds_plan(pass);
  if ((plan & 1u) == 0u) return; // a pass whose digit is the same for every key
  bool from_a = (plan & 2u) != 0u;
  if (stage == VKDS_STAGE_SPINE) {
    vkds_spine(pass);
    return;
  }
  uint tile = vkds_group(), t = vkds_tid();
  uint64_t base = uint64_t(tile) * uint64_t(VKDS_TILE);
  uint valid = uint(min(P(0) - base, uint64_t(VKDS_TILE)));
  if (stage == VKDS_STAGE_COUNT) {
    vkds_count_tile(from_a, base, valid, pass);
    vkds_sw(vkds_count_at(t, tile)).v = vkds_sh[t];
    return;
  }
  KW_T k[VKDS_ITEMS];
  vkds_load_tile(from_a, base, valid, k);
  uint loc[VKDS_ITEMS], count;
  vkds_rank(k, pass, loc, count);
  vkds_goff[t] = vkds_sw(vkds_count_at(t, tile)).v - vkds_toff[t];
  barrier();
  vkds_write_tile(pass, from_a, base, valid, k, loc);
}
