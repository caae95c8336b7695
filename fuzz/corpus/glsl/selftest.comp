#version 450
// The self-test kernel: every element gets a hash of its index and a seed, so a
// missing, duplicated or misplaced work-item shows up as a wrong value on the host
// (lib/selftest.c computes the same hash).
layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) writeonly buffer Out { uint data[]; };

layout(push_constant) uniform Params {
  uint count;
  uint seed;
  uint base; // work-item offset of this dispatch, for launches split into pieces
};

uint hash(uint x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

void main() {
  uint i = base + gl_GlobalInvocationID.x;
  if (i < count) data[i] = hash(i ^ seed);
}
