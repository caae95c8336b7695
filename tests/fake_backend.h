/* tests/fake_backend.h: an in-process backend whose tasks take exactly the time the
 * test says, and complete when the test says: for testing policies without timing
 * noise. Resources are fake_resource pointers. (The real backend is tested too.) */
#ifndef VKDS_TEST_FAKE_BACKEND_H
#define VKDS_TEST_FAKE_BACKEND_H

#include <stdatomic.h>
#include <vkds/vkds.h>

typedef struct fake_resource {
  int id;                 /* what the test recognizes it by */
  uint64_t cost_ns[4];    /* task time reported for key % 4 */
  atomic_int runs;        /* tasks run on it */
} fake_resource;

extern const vkds_resource_kind fake_kind;
extern const vkds_backend_ops fake_backend_ops;

/* Completion control, shared by every fake backend of the process. */
void fake_hold_completions(bool hold);
/* Completes the held tasks of resource `id` (-1: all), oldest first; returns how many. */
int fake_complete(int id);

/* A task function that counts the run on its resource and records its id in
 * *(int *)user when user is not NULL. */
vkds_result fake_task(void *user, const vkds_task *task, void **wait_object);

#endif
