#version 460
// subgroup arithmetic and shuffles, shared memory, a barrier
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_shuffle : require
layout(local_size_x = 128) in;
layout(std430, set = 0, binding = 0) buffer Data { uint data[]; };
shared uint partial[32];
void main() {
  uint v = data[gl_GlobalInvocationID.x];
  uint s = subgroupInclusiveAdd(v) + subgroupShuffleXor(v, 1u);
  if (subgroupElect()) partial[gl_SubgroupID] = subgroupMax(s);
  barrier();
  data[gl_GlobalInvocationID.x] = s + partial[0];
}
