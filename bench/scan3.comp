#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
// bench/scan3.comp: the plain-Vulkan reduce-then-scan baseline of --algorithms: an
// inclusive plus scan of u32 (wrapping) or f32 words, the work vkds's portable scan path
// does, written as a Vulkan programmer would without vkds. One shader, three dispatches
// (push constant `pass`), tiles of 4096 words (1024 uvec4) in runs of `per` tiles per
// group, at most 1024 groups:
//   0: each group's total                       -> part[g]
//   1: one group scans the totals (exclusive)   -> part[g], the group's carry
//   2: each group scans its tiles from its carry, one row of 256 uvec4 at a time
// Loads and stores are uvec4, consecutive threads at consecutive addresses. The counts
// of the bench are multiples of 4 (powers of two from 2^10). Loops stay far under
// lavapipe's 65,535 iterations per invocation (per <= 1024 tiles, 4 rows each).
layout(local_size_x = 256) in;

layout(constant_id = 0) const bool IS_FLOAT = false;

layout(std430, set = 0, binding = 0) readonly buffer Src { uvec4 src[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Dst { uvec4 dst[]; };
layout(std430, set = 0, binding = 2) buffer Part { uint part[]; };

layout(push_constant) uniform Params {
  uint count4; // uvec4 elements
  uint per;    // tiles per group
  uint pass;
};

shared uint sh[256]; // subgroup totals (256: any subgroup size)

uint add(uint a, uint b) { return IS_FLOAT ? floatBitsToUint(uintBitsToFloat(a) + uintBitsToFloat(b)) : a + b; }
uint sg_add(uint x) { return IS_FLOAT ? floatBitsToUint(subgroupAdd(uintBitsToFloat(x))) : subgroupAdd(x); }
uint sg_excl(uint x) {
  return IS_FLOAT ? floatBitsToUint(subgroupExclusiveAdd(uintBitsToFloat(x))) : subgroupExclusiveAdd(x);
}

// The group's exclusive scan of one value per thread; total: all of them.
uint group_scan(uint x, out uint total) {
  uint e = sg_excl(x);
  if (gl_SubgroupInvocationID == gl_SubgroupSize - 1u) sh[gl_SubgroupID] = add(e, x);
  barrier();
  uint before = 0u;
  total = 0u;
  for (uint i = 0u; i < gl_NumSubgroups; ++i) {
    if (i == gl_SubgroupID) before = total;
    total = add(total, sh[i]);
  }
  barrier(); // sh is the next call's
  return add(before, e);
}

uint sum4(uvec4 v) { return add(add(v.x, v.y), add(v.z, v.w)); }

void main() {
  uint t = gl_LocalInvocationID.x, g = gl_WorkGroupID.x;
  uint tiles = (count4 + 1023u) / 1024u, groups = (tiles + per - 1u) / per;
  if (pass == 1u) { // part[0..groups) -> exclusive prefixes, 4 per thread
    uint v[4], acc = 0u;
    for (uint k = 0u; k < 4u; ++k) {
      v[k] = 4u * t + k < groups ? part[4u * t + k] : 0u;
      acc = add(acc, v[k]);
    }
    uint total, p = group_scan(acc, total);
    for (uint k = 0u; k < 4u; ++k) {
      if (4u * t + k < groups) part[4u * t + k] = p;
      p = add(p, v[k]);
    }
    return;
  }
  uint first = g * per * 1024u, end = min(first + per * 1024u, count4);
  if (pass == 0u) {
    uint acc = 0u;
    for (uint i = first + t; i < end; i += 256u) acc = add(acc, sum4(src[i]));
    uint total;
    group_scan(acc, total);
    if (t == 0u) part[g] = total;
    return;
  }
  uint carry = part[g];
  for (uint row = first; row < end; row += 256u) {
    uint i = row + t;
    uvec4 x = i < end ? src[i] : uvec4(0u);
    x.y = add(x.x, x.y);
    x.z = add(x.y, x.z);
    x.w = add(x.z, x.w);
    uint total, p = add(carry, group_scan(x.w, total));
    if (i < end) dst[i] = uvec4(add(p, x.x), add(p, x.y), add(p, x.z), add(p, x.w));
    carry = add(carry, total);
  }
}
