#version 450
// tests/test_reflect.c: image descriptors: a storage image, an array of four combined
// image samplers, a uniform texel buffer and a uniform buffer.
layout(local_size_x = 8, local_size_y = 8) in;

layout(set = 1, binding = 0, r32f) uniform writeonly image2D target;
layout(set = 1, binding = 1) uniform sampler2D textures[4];
layout(set = 0, binding = 5) uniform samplerBuffer texels;
layout(std140, set = 0, binding = 1) uniform Scale { vec4 scale; };

void main() {
  ivec2 p = ivec2(gl_GlobalInvocationID.xy);
  vec4 v = vec4(0.0);
  for (int k = 0; k < 4; ++k) v += texelFetch(textures[k], p, 0);
  v += texelFetch(texels, p.x);
  imageStore(target, p, v * scale);
}
