/* examples/cpu_pool.h: a small CPU thread pool, the resource of the example backend
 * (examples/cpu_pool_backend.c). Not part of the library. */
#ifndef VKDS_EXAMPLE_CPU_POOL_H
#define VKDS_EXAMPLE_CPU_POOL_H

#include <vkds/vkds.h>

typedef struct cpu_pool cpu_pool;
typedef struct cpu_task cpu_task;

cpu_pool *cpu_pool_create(int threads);
/* Runs fn(arg) on a pool thread; the handle lives until cpu_task_release (or until the
 * pool is destroyed). */
cpu_task *cpu_pool_run(cpu_pool *pool, void (*fn)(void *), void *arg);
/* Done with the handle: the task is freed once it has run (it may still be queued or
 * running). The handle may not be used afterwards. */
void cpu_task_release(cpu_task *task);
void cpu_task_wait(cpu_task *task);
/* How long the task's function ran, in nanoseconds (0 until it has). */
uint64_t cpu_task_elapsed_ns(const cpu_task *task);
/* Calls done(arg) once the task has run (at once, on this thread, if it already has). */
void cpu_task_on_done(cpu_task *task, void (*done)(void *), void *arg);
void cpu_pool_wait_idle(cpu_pool *pool);
void cpu_pool_destroy(cpu_pool *pool);

/* The resource kind (a `void *` is a cpu_pool *) and its backend. */
extern const vkds_resource_kind cpu_pool_kind;
extern const vkds_backend_ops cpu_pool_backend_ops;

#endif
