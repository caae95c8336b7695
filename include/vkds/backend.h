/* vkds/backend.h: backends, selections and submissions (seed 004).
 *
 * A backend knows how to run a task on a resource and how to report on it. It is a
 * struct of function pointers (vkds_backend_ops) whose empty slots are filled once, at
 * creation, from a parent table, by default vkds_backend_base_ops, so a custom backend
 * overrides only what it must and can call the function it replaces ("super"). The base
 * works for any opaque resource kind; vkds_backend_vulkan_ops is the backend for vkds's
 * own resources (compute queues).
 *
 * The flow: a selection names one resource of a backend (policies make them; see
 * vkds_selection_create for a fixed one); vkds_submit runs the user's task function on
 * it and returns a submission to wait on; the backend reports submission, completion
 * and task time to the selection's report sink (a policy) when asked to.
 */
#ifndef VKDS_BACKEND_H
#define VKDS_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <vulkan/vulkan_core.h>

#include "vkds/context.h"
#include "vkds/export.h"
#include "vkds/result.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vkds_backend vkds_backend;
typedef struct vkds_selection vkds_selection;
typedef struct vkds_submission vkds_submission;

/* ---- resource kinds ---------------------------------------------------------------- */

#define VKDS_RESOURCE_KIND_VERSION 2

/* A kind of resource: what a `void *resource` points to. A kind is identified by the
 * address of its (static) description. Its functions are OPTIONAL. The description
 * grows only by appending, as the ops tables do: `version` says how many members the
 * application's has (0 is read as 1, so `{.name = "mine"}` stays a version-1 kind; one
 * from a newer header than the library's is refused, VKDS_ERROR_INVALID_ARGUMENT). */
typedef struct vkds_resource_kind {
  uint32_t version; /* VKDS_RESOURCE_KIND_VERSION, or 0 */
  const char *name;
  /* These waits take no time limit: over a kind of yours, vkds's timed waits
   * (vkds_submission_wait_timeout, vkds_policy_wait_all) and the destroy timeout wait
   * as long as they do, and vkds_submission_poll says VKDS_ERROR_UNSUPPORTED, unless
   * the kind's backend overrides wait, poll and wait_all (vkds_backend_ops), which are
   * given the timeout. */
  /* Blocks until everything submitted to `resource` is done (submission groups). */
  vkds_result (*wait_resource)(void *resource);
  /* Blocks until the task that returned `wait_object` is done (submission waits). */
  vkds_result (*wait_object)(void *wait_object);
  /* ---- version 2 ---- */
  /* OPTIONAL: vkds is done with `wait_object` (never NULL): called once, when the
   * submission that holds it is released (vkds_submission_release; for a
   * fire-and-forget vkds_submit, right after the submit). vkds neither waits on it nor
   * returns it after this, but the task may still be running: an object that the
   * kind's own threads also use is freed once both are done with it (e.g. a
   * reference count of two, or a flag set here and checked when the task ends; see
   * examples/cpu_pool.c). NULL: vkds never says, and the kind keeps its objects
   * until it chooses to free them (a version-1 kind: until its resources go). */
  void (*release_object)(void *wait_object);
} vkds_resource_kind;

/* The kind of vkds's own resources: `void *` is a `vkds_resource *`. */
VKDS_API extern const vkds_resource_kind vkds_resource_kind_vulkan;

/* ---- reports ----------------------------------------------------------------------- */

/* What a policy can ask a backend to report (bits). */
typedef enum vkds_report_bits {
  VKDS_REPORT_SUBMISSION = 1u << 0, /* task_submission: before the task function runs */
  VKDS_REPORT_COMPLETION = 1u << 1, /* task_completion: when the task has finished */
  VKDS_REPORT_TIME = 1u << 2,       /* task_time: how long it ran, in nanoseconds */
  /* Sent by vkds itself, never asked of a backend: a selection made by a policy was
   * released without being submitted, so the policy gives back what its select counted
   * (a task in flight, queued work). `key` is the hints' key. */
  VKDS_REPORT_UNUSED = 1u << 3,
} vkds_report_bits;

/* One report. `value_ns` is the task time for VKDS_REPORT_TIME and 0 otherwise. */
typedef struct vkds_report {
  vkds_report_bits what;
  uint32_t resource_index; /* in the backend's resource list */
  uint64_t key;            /* the task's key (vkds_task_info.key) */
  uint64_t value_ns;
} vkds_report;

/* Where a selection's reports go (a policy). Called from whichever thread observes the
 * event: the submitting thread, or one that waits or polls, possibly a thread of
 * another policy whose work shares the queue. The Vulkan backend's wait for a
 * submission, and its wait_all, return only after that submission's reports were
 * delivered (whoever delivered them), so a policy may be released then. A sink should
 * be short and must not wait for work on the queue it is called for. */
typedef struct vkds_report_sink {
  void (*report)(void *user, const vkds_report *report);
  void *user;
} vkds_report_sink;

/* ---- tasks ------------------------------------------------------------------------- */

typedef enum vkds_task_mode {
  /* Vulkan backend: the function records into `task->cmd`, already begun; vkds ends and
   * submits it. vkds adds no barrier around what it records: tasks on one queue are
   * submitted in order but may overlap on the GPU, so a task that reads what an earlier
   * one wrote records its own barrier first (vkds's launches and algorithms do: they
   * run after any earlier task's writes). Other backends: the function does the work or
   * enqueues it. */
  VKDS_TASK_RECORD = 0,
  /* Vulkan backend: the function submits by itself to `task->queue` (already locked for
   * it) and must signal `task->signal_semaphore` to `task->signal_value` in that submit
   * (a timeline semaphore) so that vkds can tell when it is done. */
  VKDS_TASK_SELF_SUBMIT = 1,
} vkds_task_mode;

/* What a task function is given. */
typedef struct vkds_task {
  void *resource;          /* the selected resource (a vkds_resource * for Vulkan) */
  uint32_t resource_index; /* its index in the backend */
  vkds_selection *selection;
  vkds_task_mode mode;
  /* Vulkan backend only: */
  VkCommandBuffer cmd;        /* RECORD: begun (ONE_TIME_SUBMIT unless the task has a replay_key) */
  VkQueue queue;              /* SELF_SUBMIT: locked for the function */
  VkSemaphore signal_semaphore; /* SELF_SUBMIT: signal this ... */
  uint64_t signal_value;        /* ... to this value */
  /* For the backend between its hooks; not for task functions. */
  void *backend_data;
  /* Set by instrument_before: an earlier recording of this task (same replay_key, see
   * vkds_task_info) is submitted again, and the task function is not called. */
  bool replayed;
} vkds_task;

/* A task function: does (or records, or enqueues) the work on `task->resource`.
 * May set *wait_object to something the submission can wait on (see
 * vkds_resource_kind.wait_object) and unwrap returns; NULL means done on return (base
 * backend) or nothing to add (Vulkan backend, where vkds tracks completion itself).
 * A failure is returned from vkds_submit and nothing is submitted (RECORD mode). */
typedef vkds_result (*vkds_task_fn)(void *user, const vkds_task *task, void **wait_object);

typedef struct vkds_task_info {
  vkds_task_fn fn; /* REQUIRED */
  void *user;
  vkds_task_mode mode;
  uint64_t key;      /* groups tasks for timing (auto-tuning): e.g. a kernel and a size */
  const char *label; /* Vulkan: a debug-utils label around the work, when available */
  /* Hints for policies that weigh data movement (earliest finish): how many bytes the
   * task reads or writes, and on which of the context's devices they already are (bit
   * d: device d, for devices 0-31; 0: only on the host; over resources of another kind
   * than vkds's, each resource is a device of its own: bit i, resource i). */
  uint64_t bytes;
  uint32_t data_devices;
  /* The task can run only on resources of these devices (bit d: device d, for devices
   * 0-31); 0: on any. Every built-in policy picks among them (a policy's own select
   * must too: vkds_select refuses a pick elsewhere), and vkds_select returns
   * VKDS_ERROR_WRONG_DEVICE when the policy has no resource there, as
   * vkds_selection_submit does for a selection on another device. vkds_launch sets it
   * to its buffers' device. */
  uint32_t only_devices;
  /* RECORD mode: nonzero promises that the function records exactly the same commands
   * (pipelines, arguments, buffers, dispatch sizes) every time it is given a command
   * buffer of the same resource for a task with this replay_key, and does nothing else.
   * The Vulkan backend then keeps the recorded command buffer, and a later task with the
   * same key (and label, and the same need for timestamps) submits it again instead of
   * calling the function, once that recording's last submission has finished: a command
   * buffer still in flight is not submitted again, so tasks queued back to back record
   * each time until recordings come back (each is kept; a loop that waits for its tasks
   * records once). On the NVIDIA driver a replay saves the recording, 2-3 us of a 20 us
   * round trip. Only for recordings whose Vulkan objects outlive every task with
   * the key (device addresses are fine: a command buffer does not hold the buffers
   * behind them). 0: the function records every time. */
  uint64_t replay_key;
} vkds_task_info;

/* ---- the ops table ----------------------------------------------------------------- */

#define VKDS_BACKEND_OPS_VERSION 1

/* Slots are REQUIRED (must be set), DEFAULTED (NULL takes the parent's) or OPTIONAL
 * (NULL means the feature is absent). The table grows only by appending; `version`
 * says how many slots the caller's table has. */
typedef struct vkds_backend_ops {
  uint32_t version;    /* REQUIRED: VKDS_BACKEND_OPS_VERSION */
  size_t backend_size; /* DEFAULTED: sizeof the struct that embeds vkds_backend first */
  const char *name;    /* DEFAULTED */
  /* The table NULL slots are filled from; NULL: vkds_backend_base_ops. */
  const struct vkds_backend_ops *parent;

  /* DEFAULTED: set up the backend's own state after the base is ready. Base: nothing. */
  vkds_result (*init)(vkds_backend *b);
  /* DEFAULTED: release the backend's own state (the base then frees the rest). */
  void (*destroy)(vkds_backend *b);
  /* DEFAULTED: the resources. Base: those the backend was created with, in order. */
  vkds_result (*get_resources)(vkds_backend *b, uint32_t *count, void *const **resources);
  /* DEFAULTED: which of `reports` (vkds_report_bits) resource `index` can deliver.
   * Base: VKDS_REPORT_SUBMISSION only (the base makes every task's submission record). */
  uint32_t (*supports)(vkds_backend *b, uint32_t index, uint32_t reports);
  /* DEFAULTED: bytes of per-selection scratch for selections that ask for `reports`.
   * Base: 0. */
  size_t (*scratch_size)(vkds_backend *b, uint32_t reports);
  /* DEFAULTED: run a task. Base: instrument_before, the task function,
   * instrument_after; on a failure of the function, abandon. A backend whose resource
   * cannot take a task now (a limit of its own) returns VKDS_ERROR_WOULD_BLOCK having
   * run nothing: vkds_submit, vkds_launch and the algorithms then try the same
   * selection again until the policy's submit_timeout_ns (then VKDS_ERROR_TIMEOUT);
   * vkds_try_submit and vkds_selection_submit return it. */
  vkds_result (*submit)(vkds_backend *b, vkds_selection *sel, const vkds_task_info *info,
                        vkds_submission **out);
  /* DEFAULTED: prepare `task` before the function runs (Vulkan: a begun command
   * buffer). Base: reports VKDS_REPORT_SUBMISSION when the selection asked for it. */
  vkds_result (*instrument_before)(vkds_backend *b, vkds_selection *sel,
                                   const vkds_task_info *info, vkds_task *task);
  /* DEFAULTED: after the function returned `wait_object`: finish and make the
   * submission (Vulkan: end and submit). Base: a submission wrapping wait_object. */
  vkds_result (*instrument_after)(vkds_backend *b, vkds_selection *sel,
                                  const vkds_task_info *info, vkds_task *task,
                                  void *wait_object, vkds_submission **out);
  /* DEFAULTED: undo instrument_before when the task function failed. Base: nothing. */
  void (*abandon)(vkds_backend *b, vkds_selection *sel, vkds_task *task);
  /* DEFAULTED: wait for one submission, at most timeout_ns (UINT64_MAX: forever).
   * Base: the kind's wait_object on the wait object; success when it is NULL;
   * VKDS_ERROR_UNSUPPORTED when the kind cannot wait. */
  vkds_result (*wait)(vkds_backend *b, vkds_submission *s, uint64_t timeout_ns);
  /* DEFAULTED: whether a submission is done, without blocking (VKDS_SUCCESS: done,
   * VKDS_ERROR_WOULD_BLOCK: not yet). Base: done when the wait object is NULL,
   * VKDS_ERROR_UNSUPPORTED otherwise. */
  vkds_result (*poll)(vkds_backend *b, vkds_submission *s);
  /* DEFAULTED: wait for every earlier submission to this backend (the submission
   * group). Base: the kind's wait_resource on every resource; VKDS_ERROR_UNSUPPORTED
   * when the kind has none. */
  vkds_result (*wait_all)(vkds_backend *b, uint64_t timeout_ns);
  /* OPTIONAL: deliver reports that are due (completions, task times). Policies call it
   * before selecting; NULL means the backend reports eagerly or not at all ("lazy
   * reporting off"). */
  void (*lazy_report)(vkds_backend *b);
} vkds_backend_ops;

/* The base ("CRTP base") every table is completed from. */
VKDS_API extern const vkds_backend_ops vkds_backend_base_ops;
/* The backend for vkds_resource_kind_vulkan; its parent is the base. */
VKDS_API extern const vkds_backend_ops vkds_backend_vulkan_ops;

/* The state every backend starts with; a custom backend embeds it as its first member
 * and sets ops->backend_size to the size of the whole. */
struct vkds_backend {
  const vkds_backend_ops *ops; /* the completed table (every DEFAULTED slot set) */
  const vkds_resource_kind *kind;
  vkds_context *context; /* for Vulkan resources; else NULL */
  uint32_t resource_count;
  void **resources;
  void *user; /* vkds_backend_info.user */
  uint64_t spin_ns;
  void *internal; /* vkds's; do not touch */
};

typedef struct vkds_backend_info {
  /* The resources, and their kind. NULL kind: vkds_resource_kind_vulkan, and with
   * resources NULL too, every resource of `context`. A resource listed twice is two
   * entries (indices) to the backend and its policy: each is selected, and its work
   * counted, on its own (round robin gives it two turns, dynamic load sees each
   * index's load alone). */
  const vkds_resource_kind *kind;
  uint32_t resource_count;
  void *const *resources;
  vkds_context *context;
  /* The table; NULL: the registry's backend for `kind` (vkds_backend_lookup). Need not
   * outlive the call: vkds keeps its own completed copy. */
  const vkds_backend_ops *ops;
  /* Vulkan backend: how long a wait spins on the timeline value before it sleeps in
   * vkWaitSemaphores; 0: 50 microseconds; UINT64_MAX: never sleep. */
  uint64_t spin_ns;
  void *user;
} vkds_backend_info;

/* Creates a backend. VKDS_ERROR_INVALID_ARGUMENT for NULL pointers, a NULL resource, a
 * table of a version this library does not know or without a version; VKDS_ERROR_EMPTY
 * for no resources (as vkds_policy_create); VKDS_ERROR_OUT_OF_HOST_MEMORY; whatever
 * ops->init returns. */
VKDS_API vkds_result vkds_backend_create(const vkds_backend_info *info, vkds_backend **out);

/* Waits for the backend's submissions, then destroys it. NULL is a no-op. Selections
 * and submissions made from it must be released first. */
VKDS_API void vkds_backend_destroy(vkds_backend *b);

/* The registry (the seed's backend_for_resource): which table a kind gets when none is
 * given. vkds_resource_kind_vulkan starts registered to vkds_backend_vulkan_ops; every
 * other kind gets vkds_backend_base_ops until registered. `ops` must outlive its use
 * (a static table); NULL unregisters. Thread-safe. Returns VKDS_SUCCESS, or
 * VKDS_ERROR_INVALID_ARGUMENT (kind NULL, or a table no backend could be made from: its
 * version, parent chain or backend_size, as vkds_backend_create would say) or
 * VKDS_ERROR_LIMIT_EXCEEDED (64 kinds registered already). */
VKDS_API vkds_result vkds_backend_register(const vkds_resource_kind *kind, const vkds_backend_ops *ops);
VKDS_API const vkds_backend_ops *vkds_backend_lookup(const vkds_resource_kind *kind);

/* The backend's resources, in order (what ops->get_resources says). */
VKDS_API vkds_result vkds_backend_get_resources(vkds_backend *b, uint32_t *count, void *const **resources);

/* Which of `reports` resource `index` can deliver. */
VKDS_API uint32_t vkds_backend_supports(vkds_backend *b, uint32_t index, uint32_t reports);

/* Waits for every earlier submission (the submission group), then runs the finishing
 * steps of those that have one (vkds/algorithm.h's asynchronous calls: their staged
 * outputs). VKDS_ERROR_TIMEOUT after timeout_ns (UINT64_MAX: no limit). Returns at once
 * when there were none. */
VKDS_API vkds_result vkds_backend_wait_all(vkds_backend *b, uint64_t timeout_ns);

/* Delivers due reports now (no-op when the backend has no lazy reporting). */
VKDS_API void vkds_backend_lazy_report(vkds_backend *b);

/* ---- selections -------------------------------------------------------------------- */

/* A selection of resource `index` of `b` (policies make these; this makes a fixed one).
 * `sink` (may be NULL) receives the reports in `reports`; a report the resource cannot
 * deliver is VKDS_ERROR_UNSUPPORTED. The selection holds a reference to the backend
 * until released (vkds_backend_destroy waits for the last one's release).
 * A selection made here may be submitted any number of times. One made by a policy
 * (vkds_select) stands for one task: the policy counted it when it picked, so it is
 * submitted at most once (again: VKDS_ERROR_INVALID_ARGUMENT), and released unsubmitted
 * it gives its place back (VKDS_REPORT_UNUSED to the policy). */
VKDS_API vkds_result vkds_selection_create(vkds_backend *b, uint32_t index, uint32_t reports,
                                           const vkds_report_sink *sink, vkds_selection **out);
/* Drops one reference (retain adds one); the last release frees the selection or keeps
 * its memory for the thread's next select. NULL: nothing. Each reference is released
 * once: a second release of a selection whose memory the thread kept is logged as an
 * error and ignored; of one already freed (made with scratch, or with the context's
 * allocator) it is a use after free, as with free(). */
VKDS_API void vkds_selection_release(vkds_selection *sel);
VKDS_API vkds_selection *vkds_selection_retain(vkds_selection *sel); /* returns sel */
/* The selected resource (the seed's unwrap), its index, its backend. */
VKDS_API void *vkds_selection_resource(const vkds_selection *sel);
VKDS_API uint32_t vkds_selection_index(const vkds_selection *sel);
VKDS_API vkds_backend *vkds_selection_backend(const vkds_selection *sel);
/* The per-selection scratch the backend asked for (NULL when 0 bytes). */
VKDS_API void *vkds_selection_scratch(const vkds_selection *sel);
/* The reports the selection asked for. */
VKDS_API uint32_t vkds_selection_reports(const vkds_selection *sel);
/* Sends a report to the selection's sink, if it asked for that kind; for backends. */
VKDS_API void vkds_selection_report(vkds_selection *sel, vkds_report_bits what, uint64_t key,
                                    uint64_t value_ns);

/* ---- submissions ------------------------------------------------------------------- */

/* Runs a task on the selected resource (the policy's vkds_submit selects first). With
 * out NULL the submission is not returned (fire and forget: vkds_backend_wait_all still
 * covers it). VKDS_ERROR_INVALID_ARGUMENT for a NULL argument or a policy's selection
 * submitted before; VKDS_ERROR_WOULD_BLOCK when the backend's resource cannot take the
 * task now (the ops table's submit); else the backend's or the task function's error
 * (nothing ran then, and a policy's selection may be submitted again). The Vulkan backend may return before
 * the task reaches vkQueueSubmit, while its queue is backed up (README, "share
 * vkQueueSubmit calls"): it is submitted with the next tasks, by a wait for it, or by
 * the queue's flusher thread; if that call fails, the task's waits return the error
 * and the queue takes no more work (its device is usually lost then). */
VKDS_API vkds_result vkds_selection_submit(vkds_selection *sel, const vkds_task_info *info, vkds_submission **out);

/* Waits for a submission (no limit). */
VKDS_API vkds_result vkds_submission_wait(vkds_submission *s);
/* Waits at most timeout_ns: VKDS_ERROR_TIMEOUT when it is not done by then. */
VKDS_API vkds_result vkds_submission_wait_timeout(vkds_submission *s, uint64_t timeout_ns);
/* VKDS_SUCCESS when done, VKDS_ERROR_WOULD_BLOCK when not yet. */
VKDS_API vkds_result vkds_submission_poll(vkds_submission *s);
/* What the task function returned in *wait_object (the seed's unwrap). */
VKDS_API void *vkds_submission_unwrap(const vkds_submission *s);
/* The selection it ran on. */
VKDS_API vkds_selection *vkds_submission_selection(const vkds_submission *s);
/* Releases the handle (the work itself is not cancelled). A submission with a finishing
 * step (the algorithms' asynchronous forms) waits for its work first, at most the
 * context's destroy_timeout_ns; a failure then (the finishing step's, or the work's)
 * is logged, as there is no caller to return it to: wait first to see it (a failure
 * that a wait, poll or wait_all returned is not logged again). NULL is a
 * no-op. Release each submission once: a second release is ignored (an error is
 * logged) until vkds hands the same memory out again, and undefined after that. */
VKDS_API void vkds_submission_release(vkds_submission *s);

/* For backends: makes a submission in instrument_after. `data` is the backend's own
 * (a value or a pointer cast to uintptr_t; vkds_submission_data returns it). The
 * submission holds a reference to `sel`. Submissions are recycled, not freed. */
VKDS_API vkds_result vkds_submission_create(vkds_backend *b, vkds_selection *sel, void *wait_object,
                                            uint64_t data, vkds_submission **out);
VKDS_API uint64_t vkds_submission_data(const vkds_submission *s);

#ifdef __cplusplus
}
#endif
#endif
