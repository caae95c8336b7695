/* vkds/version.h: the library's version. */
#ifndef VKDS_VERSION_H
#define VKDS_VERSION_H

#include "vkds/export.h"

#define VKDS_VERSION_MAJOR 0
#define VKDS_VERSION_MINOR 1
#define VKDS_VERSION_PATCH 0

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the library actually linked, as "MAJOR.MINOR.PATCH". */
VKDS_API const char *vkds_version(void);

#ifdef __cplusplus
}
#endif
#endif
