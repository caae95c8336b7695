#version 450
layout(local_size_x=64) in;
layout(push_constant) uniform P { uvec4 v; } p;
void main(){}
