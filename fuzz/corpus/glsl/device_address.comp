#version 460
// buffers by device address in push constants, 64-bit and 16-bit types, a loop
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 64) in;
layout(buffer_reference, std430, buffer_reference_align = 8) buffer U64s { uint64_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 2) buffer Halves { float16_t h[]; };
layout(push_constant) uniform Args { U64s out_values; Halves in_halves; uint count; i16vec2 pair; } args;
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= args.count) return;
  uint64_t acc = 0ul;
  for (int k = 0; k < int(args.pair.x); ++k) acc += uint64_t(float(args.in_halves.h[i]) * float(k));
  args.out_values.v[i] = acc;
}
