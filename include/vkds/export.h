/* vkds/export.h: symbol visibility. The library is built with hidden visibility;
 * only functions marked VKDS_API are exported from the shared library. */
#ifndef VKDS_EXPORT_H
#define VKDS_EXPORT_H

#if defined(VKDS_BUILDING) && defined(__GNUC__)
#define VKDS_API __attribute__((visibility("default")))
#else
#define VKDS_API
#endif

#endif
