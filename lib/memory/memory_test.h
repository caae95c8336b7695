/* lib/memory/memory_test.h: a switch for tests (not public API), exported from libvkds
 * as lib/backend/queue_test.h's function is.
 *
 * The host-visible memory of lavapipe and of the NVIDIA GPUs here is all host-coherent,
 * so the flushes and invalidations that non-coherent memory needs (staging.c's ring,
 * lib/seq/seq_bind.c's sequences passed directly) would run on no device the tests
 * see. With this on, memory vkds allocates from then on is treated as not coherent:
 * those calls are made (flushing coherent memory is allowed), and the validation layer
 * checks their ranges. */
#ifndef VKDS_MEMORY_TEST_H
#define VKDS_MEMORY_TEST_H

#include <stdbool.h>

#include "core/test_hook.h"

VKDS__TEST_HOOK void vkds__test_treat_memory_noncoherent(bool on);

#endif
