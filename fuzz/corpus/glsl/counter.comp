#version 450
// Used by the tests and benchmarks: one invocation adds `add` to a counter; every invocation first
// burns `iterations` rounds of arithmetic so that tasks of different lengths exist.
// (Each loop stays under 65,535 iterations: lavapipe cuts longer ones short.)
layout(local_size_x = 64) in;

layout(std430, set = 0, binding = 0) buffer Counter {
  uint value;
  uint sink; // written only when the arithmetic hits an impossible value, so it stays
};

layout(push_constant) uniform Params {
  uint add;
  uint iterations; // per round, at most 60,000
  uint rounds;     // total work: iterations * rounds
};

void main() {
  uint x = gl_GlobalInvocationID.x;
  for (uint r = 0u; r < min(rounds, 60000u); ++r)
    for (uint i = 0u; i < min(iterations, 60000u); ++i) x = x * 1664525u + 1013904223u;
  if (x == 0xffffffffu && iterations == 0xffffffffu) sink = x;
  if (gl_GlobalInvocationID.x == 0u) atomicAdd(value, add);
}
