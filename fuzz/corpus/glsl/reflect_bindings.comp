#version 450
// tests/test_reflect.c: two storage buffers at set 0, bindings 0 and 2; a work-group
// width from specialization constant 3; buffer_reference pointers straight in the push
// constants (one, and an array of two).
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

layout(local_size_x_id = 3, local_size_y = 2) in;

layout(std430, set = 0, binding = 0) readonly buffer Src { float src[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Dst { float dst[]; } dst_block;

layout(buffer_reference, std430, buffer_reference_align = 4) buffer Words { uint w[]; };

layout(push_constant) uniform Params {
  Words direct;
  uint count;
  Words many[2];
} params;

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= params.count) return;
  dst_block.dst[i] = src[i] * float(gl_WorkGroupSize.x);
  params.direct.w[i] = params.many[0].w[i] + params.many[1].w[i];
}
