#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_atomic_int64 : require
// bench/scan1.comp: the plain-Vulkan single-pass baseline of --algorithms (plain_scan1):
// an inclusive plus scan of u32 (wrapping) or f32 words as the textbook chained scan with
// decoupled look-back (Merrill and Garland), written as a Vulkan programmer would without
// vkds, to tell what the single pass can reach on a device apart from what vkds's general
// kernel costs. Not repeatable for floats (the look-back stops wherever it finds an
// inclusive prefix), which is why vkds's own single pass is built differently.
//
// Tiles of GROUP threads x ITEMS4 uvec4 (the host's default: 1024 x 5). The tile number comes from an
// atomic counter, so a group only ever waits for tiles taken by groups that already run;
// a group takes tiles until none is left (the dispatch may be capped at the device's
// group count). TILE_BY_ID instead takes the group's id (one tile a group), as CUB does
// on NVIDIA, which dispatches groups in order in practice.
// ROWS: each subgroup owns S * ITEMS4 consecutive uvec4 and lane l loads row k's uvec4
// k * S + l (consecutive lanes, consecutive 16 bytes: coalesced, no shared memory); else
// each thread owns ITEMS4 consecutive uvec4 (the layout of vkds's direct loads).
// Look-back: subgroup 0, lane l reading tile (top - l)'s status word (64 bits: flag in
// the high half, 1 aggregate and 2 inclusive prefix, the value in the low half, so one
// relaxed atomic carries both and no ordering is needed); it adds the aggregates down to
// the nearest inclusive prefix, a window of S tiles a memory round trip. The spin is not
// bounded: like CUB's, this scan relies on groups that run making progress (NVIDIA, and
// lavapipe's threads), which is the assumption vkds's portable path avoids. LOOK_BACK
// false skips it (every tile starts from 0: wrong output past the first tile; the bench
// says FAILED) to time the kernel's own bound.
// state: word 0 the tile counter, then from byte 8 one status word per tile, zeroed by
// the host before every scan.
layout(local_size_x_id = 3) in;

layout(constant_id = 0) const bool IS_FLOAT = false;
layout(constant_id = 1) const uint ITEMS4 = 4u;
layout(constant_id = 2) const bool ROWS = true;
layout(constant_id = 3) const uint GROUP = 256u; // (the local size: local_size_x_id above)
layout(constant_id = 4) const bool TILE_BY_ID = false;
layout(constant_id = 5) const bool LOOK_BACK = true;
layout(constant_id = 6) const uint LB_WORDS = 1u; // status words a lane reads a round (1..4)
layout(constant_id = 7) const uint LB_DELAY = 0u; // ALU steps between polls (0: none)
// 0: as described; 1: one look at the window, no waiting (wrong output: the reads' own
// cost without the chain's waits); 2: the status words through a coherent volatile view
// (plain loads and stores) instead of atomics
layout(constant_id = 8) const uint LB_MODE = 0u;
// ROWS only: the tile's locally scanned words wait out the look-back in shared memory, not
// in registers (fewer registers live across the look-back, more groups an SM)
layout(constant_id = 9) const bool STASH = false;
// ALU steps between publishing the aggregate and the look-back's first poll: CUB's
// "L2 write latency" wait (__nanosleep(1245 ns) for 4-byte sums on sm90), which GLSL has
// no sleep for; this delay keeps the issue slot busy instead
layout(constant_id = 10) const uint LB_INIT_DELAY = 0u;

layout(std430, set = 0, binding = 0) readonly buffer Src { uvec4 src[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Dst { uvec4 dst[]; };
layout(std430, set = 0, binding = 2) buffer State {
  uint counter;
  uint pad;
  uint64_t status[];
};

layout(std430, set = 0, binding = 2) coherent volatile buffer StateV {
  uint vcounter;
  uint vpad;
  uint64_t vstatus[];
};

layout(push_constant) uniform Params {
  uint count4; // uvec4 elements
  uint tiles;
};

const uint64_t AGGREGATE = 1ul << 32, PREFIX = 2ul << 32;

shared uint sh_tile;
shared uint sh_sum[256]; // subgroup totals (256: any subgroup size)
shared uint sh_prefix;   // everything before the tile
shared uvec4 sh_stash[STASH ? GROUP * ITEMS4 : 1];

uint add(uint a, uint b) { return IS_FLOAT ? floatBitsToUint(uintBitsToFloat(a) + uintBitsToFloat(b)) : a + b; }
uint sg_incl(uint x) {
  return IS_FLOAT ? floatBitsToUint(subgroupInclusiveAdd(uintBitsToFloat(x))) : subgroupInclusiveAdd(x);
}
uint sg_sum(uint x) { return IS_FLOAT ? floatBitsToUint(subgroupAdd(uintBitsToFloat(x))) : subgroupAdd(x); }
uvec4 add4(uint p, uvec4 v) { return uvec4(add(p, v.x), add(p, v.y), add(p, v.z), add(p, v.w)); }

uint64_t status_load(uint t) {
  if (LB_MODE == 2u) return vstatus[t];
  return atomicLoad(status[t], gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
}
void status_store(uint t, uint64_t w) {
  if (LB_MODE == 2u) {
    vstatus[t] = w;
    return;
  }
  atomicStore(status[t], w, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
}

// Subgroup 0: the sum of every tile before `tile` (which is not 0). A round reads a
// window of LB_WORDS * S tiles, lane l's word j tile top - (j * S + l): position j * S + l,
// 0 the newest. It adds the aggregates down to the newest inclusive prefix in the window
// (all of them where there is none, and goes on below); where a tile above that prefix has
// published nothing yet it polls again, after LB_DELAY dependent ALU steps (a backoff that
// keeps the spinning groups off the memory system, as CUB's delay constructors do).
shared uint sh_sink;
uint spin(uint steps) {
  uint x = gl_SubgroupInvocationID;
  for (uint i = 0u; i < steps; ++i) x = x * (x | 1u) + 1013904223u; // (no closed form to fold)
  return x;
}

uint look_back(uint tile) {
  uint lane = gl_SubgroupInvocationID, S = gl_SubgroupSize, acc = 0u;
  int top = int(tile) - 1;
  if (LB_INIT_DELAY > 0u && spin(LB_INIT_DELAY) == 0x9e3779b9u) sh_sink = 1u; // (keeps the loop)
  for (;;) {
    uint64_t w[4];
    uint lp = 4u * S, miss = 4u * S; // newest prefix, newest missing tile (positions)
    for (uint j = 0u; j < LB_WORDS; ++j) {
      int t = top - int(j * S + lane);
      w[j] = t >= 0 ? status_load(uint(t)) : 0ul;
    }
    for (uint j = 0u; j < LB_WORDS; ++j) {
      uint flag = uint(w[j] >> 32);
      uvec4 pb = subgroupBallot(flag == 2u), nb = subgroupBallot(flag == 0u && top - int(j * S + lane) >= 0);
      if (lp == 4u * S && subgroupBallotBitCount(pb) > 0u) lp = j * S + subgroupBallotFindLSB(pb);
      if (miss == 4u * S && subgroupBallotBitCount(nb) > 0u) miss = j * S + subgroupBallotFindLSB(nb);
    }
    // a tile above the prefix (or, with none in the window, any) not there yet: again.
    if (miss < lp && LB_MODE != 1u) {
      if (LB_DELAY > 0u && spin(LB_DELAY) == 0x9e3779b9u) sh_sink = 1u; // (keeps the loop)
      continue;
    }
    uint v = IS_FLOAT ? floatBitsToUint(0.0) : 0u;
    for (uint j = 0u; j < LB_WORDS; ++j)
      if (j * S + lane <= lp) v = add(v, uint(w[j]));
    acc = add(sg_sum(v), acc);
    top -= int(LB_WORDS * S);
    if (lp < 4u * S || top < 0) return acc; // (top < 0 only without waiting: tile 0 is a prefix)
  }
  return acc;
}

void main() {
  uint t = gl_LocalInvocationID.x, sg = gl_SubgroupID, lane = gl_SubgroupInvocationID, S = gl_SubgroupSize;
  for (;;) {
    if (t == 0u) sh_tile = TILE_BY_ID ? gl_WorkGroupID.x : atomicAdd(counter, 1u);
    barrier();
    uint tile = sh_tile;
    if (tile >= tiles) return;
    uint base = tile * GROUP * ITEMS4;
    uvec4 v[ITEMS4];
    uint run = 0u; // ROWS: the subgroup's running total over its rows; else the thread's
    uint thread_prefix = 0u;
    if (ROWS) {
      uint seg = base + sg * S * ITEMS4;
      for (uint k = 0u; k < ITEMS4; ++k) {
        uint i = seg + k * S + lane;
        uvec4 x = i < count4 ? src[i] : uvec4(0u);
        x.y = add(x.x, x.y), x.z = add(x.y, x.z), x.w = add(x.z, x.w);
        uint incl = sg_incl(x.w);
        uint before = add(run, subgroupShuffle(incl, lane > 0u ? lane - 1u : 0u));
        v[k] = add4(lane > 0u ? before : run, x);
        run = add(run, subgroupShuffle(incl, S - 1u));
      }
      if (lane == 0u) sh_sum[sg] = run;
      if (STASH)
        for (uint k = 0u; k < ITEMS4; ++k) sh_stash[sg * S * ITEMS4 + k * S + lane] = v[k];
    } else {
      uint first = base + t * ITEMS4;
      for (uint k = 0u; k < ITEMS4; ++k) {
        uvec4 x = first + k < count4 ? src[first + k] : uvec4(0u);
        x.y = add(x.x, x.y), x.z = add(x.y, x.z), x.w = add(x.z, x.w);
        v[k] = add4(run, x);
        run = add(run, x.w);
      }
      uint incl = sg_incl(run);
      thread_prefix = subgroupShuffle(incl, lane > 0u ? lane - 1u : 0u);
      if (lane == 0u) thread_prefix = IS_FLOAT ? floatBitsToUint(0.0) : 0u;
      if (lane == S - 1u) sh_sum[sg] = incl;
    }
    barrier();
    uint before = IS_FLOAT ? floatBitsToUint(0.0) : 0u, total = before;
    for (uint g = 0u; g < gl_NumSubgroups; ++g) {
      if (g == sg) before = total;
      total = add(total, sh_sum[g]);
    }
    if (sg == 0u) {
      uint prefix = IS_FLOAT ? floatBitsToUint(0.0) : 0u;
      if (tile == 0u) {
        if (lane == 0u) status_store(0u, PREFIX | uint64_t(total));
      } else {
        if (lane == 0u) status_store(tile, AGGREGATE | uint64_t(total));
        if (LOOK_BACK) prefix = look_back(tile);
        if (lane == 0u) status_store(tile, PREFIX | uint64_t(add(prefix, total)));
      }
      if (lane == 0u) sh_prefix = prefix;
    }
    barrier();
    uint p = add(sh_prefix, add(before, thread_prefix));
    if (ROWS) {
      uint seg = base + sg * S * ITEMS4;
      for (uint k = 0u; k < ITEMS4; ++k) {
        uint i = seg + k * S + lane;
        if (i < count4) dst[i] = add4(p, STASH ? sh_stash[sg * S * ITEMS4 + k * S + lane] : v[k]);
      }
    } else {
      uint first = base + t * ITEMS4;
      for (uint k = 0u; k < ITEMS4; ++k)
        if (first + k < count4) dst[first + k] = add4(p, v[k]);
    }
    if (TILE_BY_ID) return; // one tile a group
  }
}
