// vkds.glsl: vkds's device-side header. `#include "vkds.glsl"` in a kernel given to
// vkds_kernel_from_glsl (or compiled by the build with -I shaders/include).
//
// It gives a kernel:
//   - its launch-wide index, right also when vkds split a large launch into several
//     dispatches: vkds_global_id() (uvec3) and vkds_global_index() (the x index, 64-bit
//     when the kernel's range type is 64-bit: a specialization constant decides, so a
//     32-bit range costs no 64-bit arithmetic);
//   - typed, bounds-aware views of buffers passed by device address:
//     VKDS_VIEW(T, BYTES, Name) declares Name (an argument type: a device address and a
//     length in bytes; BYTES is sizeof T, which GLSL cannot compute) with Name_load, Name_store,
//     Name_count and Name_in; with VKDS_DEBUG defined, an out-of-bounds access loads T(0)
//     and stores nothing instead of touching memory;
//   - the argument block: #define VKDS_ARGS as the members, then say VKDS_DECLARE_ARGS;
//     read a member with VKDS_ARG(name). vkds reads the layout from the compiled module
//     and packs the C struct into it (into a buffer when the device's push constants are
//     too small: then VKDS_SPILL is defined and VKDS_ARG reads from there).
#ifndef VKDS_GLSL
#define VKDS_GLSL

#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

// 1 when the kernel's range type is 64-bit (VKDS_RANGE_U64), set by vkds: the one
// specialization constant vkds sets (lib/kernel/kernel.c), at the highest id glslang
// allows, out of the way of a kernel's own (at id 0 it overwrote theirs; a probe).
layout(constant_id = 2046) const uint vkds_range64 = 0u;

// Declares a view type `Name` over elements of type T.
#define VKDS_VIEW(T, BYTES, Name)                                                            \
  layout(buffer_reference, std430, buffer_reference_align = 4) buffer Name##_ptr { T v; };   \
  struct Name { uint64_t address; uint64_t bytes; };                                         \
  uint64_t Name##_count(Name view) { return view.bytes / uint64_t(BYTES); }                  \
  bool Name##_in(Name view, uint64_t i) { return i < Name##_count(view); }                   \
  T Name##_load(Name view, uint64_t i) {                                                     \
    VKDS_GUARD_LOAD(Name, view, i, T)                                                        \
    return Name##_ptr(view.address + i * uint64_t(BYTES)).v;                                 \
  }                                                                                          \
  void Name##_store(Name view, uint64_t i, T x) {                                            \
    VKDS_GUARD_STORE(Name, view, i)                                                          \
    Name##_ptr(view.address + i * uint64_t(BYTES)).v = x;                                    \
  }

#ifdef VKDS_DEBUG
#define VKDS_GUARD_LOAD(Name, view, i, T) if (!Name##_in(view, i)) return T(0);
#define VKDS_GUARD_STORE(Name, view, i) if (!Name##_in(view, i)) return;
#else
#define VKDS_GUARD_LOAD(Name, view, i, T)
#define VKDS_GUARD_STORE(Name, view, i)
#endif

// The argument block: vkds_base (first, reserved) is the work-item offset of this
// dispatch when a launch is split (xyz; w: the high 32 bits of x for 64-bit ranges); the
// kernel's own members follow. VKDS_DECLARE_ARGS also defines vkds_global_id() and
// vkds_global_index().
#define VKDS_INDEX_FUNCTIONS                                                                 \
  uvec3 vkds_global_id() { return gl_GlobalInvocationID + vkds_push.vkds_base.xyz; }         \
  uint64_t vkds_global_index() {                                                             \
    if (vkds_range64 != 0u)                                                                  \
      return uint64_t(gl_GlobalInvocationID.x) +                                             \
             (uint64_t(vkds_push.vkds_base.w) << 32 | uint64_t(vkds_push.vkds_base.x));      \
    return uint64_t(gl_GlobalInvocationID.x + vkds_push.vkds_base.x);                        \
  }

#ifdef VKDS_SPILL
// too large for this device's push constants: the members live in a buffer
#define VKDS_DECLARE_ARGS                                                                    \
  layout(buffer_reference, std430) readonly buffer VkdsArgs { VKDS_ARGS };                   \
  layout(push_constant) uniform VkdsPush { uvec4 vkds_base; VkdsArgs vkds_args; } vkds_push; \
  VKDS_INDEX_FUNCTIONS
#define VKDS_ARG(name) vkds_push.vkds_args.name
#else
#define VKDS_DECLARE_ARGS                                                                    \
  layout(push_constant) uniform VkdsPush { uvec4 vkds_base; VKDS_ARGS } vkds_push;           \
  VKDS_INDEX_FUNCTIONS
#define VKDS_ARG(name) vkds_push.name
#endif

#endif
