// a comment before #version, a line splice, and vkds.glsl by angle brackets
#version 460
#include <vkds.glsl>
layout(local_size_x = 32) in;
VKDS_VIEW(uint, 4, UintView)
#define VKDS_ARGS uint n; \
  UintView out_view;
VKDS_DECLARE_ARGS
/* #include "other.glsl" stays in a comment */
void main() {
  uint64_t i = vkds_global_index();
  if (i < uint64_t(VKDS_ARG(n))) UintView_store(VKDS_ARG(out_view), i, uint(i));
}
