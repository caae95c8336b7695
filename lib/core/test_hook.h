/* lib/core/test_hook.h: VKDS__TEST_HOOK marks the few functions libvkds exports for its
 * tests (lib/core/vk_fault.h, lib/backend/queue_test.h; not public API, as SQLite exports
 * its test control): exported where the tests are built (VKDS_TEST_HOOKS, set by
 * lib/meson.build), hidden otherwise, so that a release build with -Dtests=false does not
 * ship them. */
#ifndef VKDS_TEST_HOOK_H
#define VKDS_TEST_HOOK_H

#include "vkds/export.h"

#ifdef VKDS_TEST_HOOKS
#define VKDS__TEST_HOOK VKDS_API
#else
#define VKDS__TEST_HOOK
#endif

#endif
