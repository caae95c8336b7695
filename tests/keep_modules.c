/* tests/keep_modules.c: compiled into every test (harness_dep) and, in sanitizer
 * builds, into every example.
 *
 * The Vulkan loader unloads the validation layer and the driver when the last instance
 * goes; a leak the sanitizer finds in them afterwards has no names in its stack
 * ("<unknown module>"), so nobody can tell whose it is, and tests/lsan.supp cannot set it
 * aside. Keeping them loaded for the whole run names every frame. */
#include <dlfcn.h>
#include <stddef.h>

__attribute__((constructor)) static void keep_vulkan_modules_loaded(void) {
  static const char *const modules[] = {"libVkLayer_khronos_validation.so", "libvulkan_lvp.so"};
  for (size_t i = 0; i < sizeof modules / sizeof modules[0]; ++i)
    dlopen(modules[i], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE); /* absent: nothing to keep */
}
