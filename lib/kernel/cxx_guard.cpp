// lib/kernel/cxx_guard.cpp: the one place where vkds meets C++ exceptions. glslang and
// SPIRV-Tools (C++, linked into libvkds) throw std::bad_alloc when an allocation fails;
// uncaught, that ends the application (std::terminate), which a library must never do.
// vkds__cxx_guard runs a C function that calls into them and catches whatever it
// throws. The C frames it unwinds through are built with -fexceptions and run no
// cleanups: the callers keep what they made in the job they pass, and free it when the
// guard reports a throw (lib/kernel/glsl.c, lib/kernel/spirv.c).
#include <new>

#include "cxx_guard.h"

vkds__cxx_outcome vkds__cxx_guard(void (*fn)(void *), void *job) {
  try {
    fn(job);
    return VKDS__CXX_RETURNED;
  } catch (const std::bad_alloc &) {
    return VKDS__CXX_OUT_OF_MEMORY;
  } catch (...) {
    return VKDS__CXX_THREW;
  }
}
