/* lib/kernel/cxx_guard.h: running C code that calls into C++ libraries with their
 * exceptions caught (lib/kernel/cxx_guard.cpp); readable from C and C++. */
#ifndef VKDS_CXX_GUARD_H
#define VKDS_CXX_GUARD_H
#ifdef __cplusplus
extern "C" {
#endif

typedef enum vkds__cxx_outcome {
  VKDS__CXX_RETURNED,      /* fn returned */
  VKDS__CXX_OUT_OF_MEMORY, /* it threw std::bad_alloc */
  VKDS__CXX_THREW,         /* it threw something else */
} vkds__cxx_outcome;

/* Runs fn(job), catching any C++ exception thrown below it (glslang, SPIRV-Tools). */
vkds__cxx_outcome vkds__cxx_guard(void (*fn)(void *), void *job);

#ifdef __cplusplus
}
#endif
#endif
