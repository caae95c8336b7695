#version 460
#include "other.glsl"
void main() {}
