/* lib/backend/queue_test.h: what a queue did, for tests (not public API).
 *
 * Exported from libvkds as lib/core/vk_fault.h's functions are, so that a test checks
 * the library it ships; no header under include/ declares it. */
#ifndef VKDS_QUEUE_TEST_H
#define VKDS_QUEUE_TEST_H

#include <stdint.h>

#include "vkds/context.h"

#include "core/test_hook.h"

/* How many times the queue put its leading barrier before a task that left it to the
 * queue (lib/backend/queue.c, "the queue's leading barrier"). 0 for NULL. */
VKDS__TEST_HOOK uint64_t vkds__queue_lead_barriers(const vkds_resource *r);

#endif
