#version 450
// specialization constants: the work-group size and values
layout(local_size_x_id = 0, local_size_y_id = 1) in;
layout(constant_id = 2) const int SCALE = 3;
layout(constant_id = 3) const bool NEGATE = false;
layout(constant_id = 4) const float BIAS = 0.5;
layout(std430, binding = 1) buffer Out { float values[]; };
void main() {
  float x = float(gl_GlobalInvocationID.x * uint(SCALE)) + BIAS;
  values[gl_GlobalInvocationID.x] = NEGATE ? -x : x;
}
