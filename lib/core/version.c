/* lib/core/version.c */
#include "internal.h"

#define STR2(x) #x
#define STR(x) STR2(x)

const char *vkds_version(void) {
  return STR(VKDS_VERSION_MAJOR) "." STR(VKDS_VERSION_MINOR) "." STR(VKDS_VERSION_PATCH);
}
