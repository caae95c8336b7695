#version 450
// tests/test_reflect.c: the argument block spilled to a buffer (VKDS_SPILL): the push
// constants then hold vkds_base and a buffer_reference to the members.
#extension GL_GOOGLE_include_directive : require
#define VKDS_SPILL
#include "vkds.glsl"

layout(local_size_x = 32, local_size_y = 2, local_size_z = 4) in;

VKDS_VIEW(uint, 4, UintView)

#define VKDS_ARGS uint n; UintView out_view;
VKDS_DECLARE_ARGS

void main() {
  uint64_t i = vkds_global_index();
  if (i < uint64_t(VKDS_ARG(n))) UintView_store(VKDS_ARG(out_view), i, uint(i));
}
