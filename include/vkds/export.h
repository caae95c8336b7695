/* vkds/export.h: symbol visibility. The library is built with hidden visibility;
 * only functions marked VKDS_API are exported from the shared library. A build with
 * its tests (meson's `tests` option, on by default) also exports a few vkds__ test
 * hooks (fault injection, queue counters) that no header here declares: not API; a
 * build with -Dtests=false exports none of them. */
#ifndef VKDS_EXPORT_H
#define VKDS_EXPORT_H

#if defined(VKDS_BUILDING) && defined(__GNUC__)
#define VKDS_API __attribute__((visibility("default")))
#else
#define VKDS_API
#endif

#endif
