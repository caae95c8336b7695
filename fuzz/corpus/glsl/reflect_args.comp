#version 450
// tests/test_reflect.c: vkds.glsl's argument block with an int, a nested struct holding a
// float and a view, and an array of three views; 64 x 1 x 1 work-groups.
#extension GL_GOOGLE_include_directive : require
#include "vkds.glsl"

layout(local_size_x = 64) in;

VKDS_VIEW(float, 4, FloatView)

struct Inner {
  float scale;
  FloatView data;
};

#define VKDS_ARGS int n; Inner inner; FloatView views[3];
VKDS_DECLARE_ARGS

void main() {
  uint64_t i = vkds_global_index(); // uses vkds_range64, so the optimizer keeps it
  if (i >= uint64_t(VKDS_ARG(n))) return;
  float x = FloatView_load(VKDS_ARG(inner).data, i) * VKDS_ARG(inner).scale;
  for (int k = 0; k < 3; ++k) FloatView_store(VKDS_ARG(views)[k], i, x);
}
