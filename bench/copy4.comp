#version 450
// bench/copy4.comp: the plain-Vulkan copy baseline of --algorithms. Each invocation moves
// 16 bytes (one uvec4) per step, the access width that reaches 90-95% of memory bandwidth
// on Hopper (4-byte loads reach 60-70%). Grid-stride so that a dispatch capped at the
// device's maximum group count (65,535 on lavapipe) still covers every element; the loop
// runs at most a few steps, far under lavapipe's 65,535-iteration cut.
layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer Src { uvec4 src[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Dst { uvec4 dst[]; };

layout(push_constant) uniform Params {
  uint count; // uvec4 elements (the 32-bit word count / 4)
};

void main() {
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < count; i += stride) dst[i] = src[i];
}
