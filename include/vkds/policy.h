/* vkds/policy.h: policies pick a resource for each task (oneDPL's Dynamic Selection).
 *
 * A policy owns a backend over its resources and a selection strategy given by a
 * versioned ops table (vkds_policy_ops, completed from vkds_policy_base_ops like
 * backends are). Built in (selectors/): fixed resource, round robin, dynamic load
 * (fewest tasks in flight), auto tune (try each, time it, keep the fastest per key) and
 * earliest finish (queued work + measured cost + data movement). A timed task costs the
 * GPU more (two timestamps, and its work does not overlap the next task's), so once they
 * have their measurements these two time one task in 8: auto tune of those sent to its
 * choice, earliest finish of a key's tasks on a resource after its first 8. Both keep
 * what they measured of 4,096 keys; at that they forget the quarter used longest ago
 * (earliest finish: of those with no task in flight), which are measured (tuned) afresh
 * when they come back.
 * Every policy keeps the statistics the query functions return (vkds_policy_keys: every
 * key ever timed, 48-96 bytes a key and resource that ran it, for the policy's life).
 */
#ifndef VKDS_POLICY_H
#define VKDS_POLICY_H

#include "vkds/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vkds_policy vkds_policy;

typedef enum vkds_policy_kind {
  VKDS_POLICY_DEFAULT = 0, /* dynamic load */
  VKDS_POLICY_FIXED = 1,
  VKDS_POLICY_ROUND_ROBIN = 2,
  VKDS_POLICY_DYNAMIC_LOAD = 3,
  VKDS_POLICY_AUTO_TUNE = 4,
  VKDS_POLICY_EARLIEST_FINISH = 5,
} vkds_policy_kind;

/* The table behind a policy. Slots are REQUIRED, DEFAULTED (NULL: the parent's) or
 * OPTIONAL, as for backends; the table grows only by appending. The built-in tables
 * below have every DEFAULTED slot set, so a policy derived from one may call any of its
 * parent's slots ("super"). */
#define VKDS_POLICY_OPS_VERSION 2
typedef struct vkds_policy_ops {
  uint32_t version;   /* REQUIRED: VKDS_POLICY_OPS_VERSION */
  /* DEFAULTED: sizeof the struct that embeds vkds_policy first, at least a parent's of
   * your own. A table derived from a built-in one with state of its own (round robin,
   * auto tune, earliest finish) leaves it 0: that state is private, so your fields would
   * lie on it (VKDS_ERROR_INVALID_ARGUMENT); keep yours behind vkds_policy_info.user. */
  size_t policy_size;
  const char *name;   /* DEFAULTED */
  const struct vkds_policy_ops *parent; /* NULL: vkds_policy_base_ops */
  /* The reports (vkds_report_bits) the policy needs: SUBMISSION, COMPLETION or TIME
   * (another bit is VKDS_ERROR_INVALID_ARGUMENT); its backend must deliver them.
   * Resources that cannot deliver them (task times; or completions, which capacity,
   * task_deadline_ns and track_completion need) are left out (none left: VKDS_ERROR_
   * UNSUPPORTED), and the policy's resource indices then count the kept ones
   * (vkds_policy_resource(p, i) says which; a fixed policy's fixed_index still names
   * one of your list, which must be kept). A table that inherits its select also
   * inherits the parent's reports (added to its own), and its select_counts_in_flight:
   * they belong to the select. */
  uint32_t reports;
  /* Set when select itself counts the pick in the resource's in-flight count
   * (vkds_policy_count_in_flight), so that picking and counting are one atomic step.
   * Such a policy is given completions (they count the tasks out). */
  bool select_counts_in_flight;
  /* DEFAULTED: set up after the resources are known (creation or deferred init). */
  vkds_result (*init)(vkds_policy *p);
  /* DEFAULTED: release the policy's own state. */
  void (*destroy)(vkds_policy *p);
  /* REQUIRED: pick a resource index for a task with these hints (key, bytes,
   * data_devices, only_devices; fn may be NULL). With only_devices set, pick a resource
   * on one of those devices (vkds_policy_resource and vkds_resource_get_info's
   * device_index tell; vkds_select refuses another pick, VKDS_ERROR_WRONG_DEVICE, and
   * answers that error itself when the policy has none there).
   * VKDS_ERROR_WOULD_BLOCK: nothing can take it now. Any other error is passed on; a
   * value that is no VKDS_ERROR_* (a positive one) becomes VKDS_ERROR_INVALID_ARGUMENT,
   * as does one from a task function or a backend's submit. */
  vkds_result (*select)(vkds_policy *p, const vkds_task_info *hints, uint32_t *index);
  /* DEFAULTED: a report arrived (after vkds updated the statistics). Base: nothing.
   * Besides the backend's reports, VKDS_REPORT_UNUSED: a selection was released without
   * being submitted; undo what select counted for it. */
  void (*report)(vkds_policy *p, const vkds_report *report);
  /* ---- version 2 ---- */
  /* OPTIONAL, not inherited: how many times the policy picked resource `index`, from its
   * own state. A policy that can tell (round robin: from its ticket counter) spares
   * every selection vkds's own atomic count. NULL: vkds counts. */
  uint64_t (*selections)(const vkds_policy *p, uint32_t index);
} vkds_policy_ops;

VKDS_API extern const vkds_policy_ops vkds_policy_base_ops;
VKDS_API extern const vkds_policy_ops vkds_policy_fixed_ops;
VKDS_API extern const vkds_policy_ops vkds_policy_round_robin_ops;
VKDS_API extern const vkds_policy_ops vkds_policy_dynamic_load_ops;
VKDS_API extern const vkds_policy_ops vkds_policy_auto_tune_ops;
VKDS_API extern const vkds_policy_ops vkds_policy_earliest_finish_ops;

/* The state every policy starts with; a custom policy embeds it first. */
struct vkds_policy {
  const vkds_policy_ops *ops; /* the completed table */
  vkds_backend *backend;      /* NULL until initialized */
  uint32_t resource_count;
  const struct vkds_policy_info *info; /* the settings (a copy vkds keeps) */
  void *internal;                      /* vkds's; do not touch */
};

/* Where the resources come from: the same fields as vkds_backend_info. */
typedef struct vkds_policy_resources {
  vkds_context *context; /* Vulkan: every resource of it when `resources` is NULL */
  uint32_t resource_count;
  void *const *resources;
  const vkds_resource_kind *kind;      /* NULL: vkds_resource_kind_vulkan */
  const vkds_backend_ops *backend_ops; /* NULL: the registry's for the kind */
} vkds_policy_resources;

typedef struct vkds_policy_info {
  vkds_policy_kind kind;
  const vkds_policy_ops *ops; /* a user policy; overrides `kind` */
  /* The resources; ignored when `deferred` (see vkds_policy_init). */
  vkds_policy_resources resources;
  bool deferred;
  /* fixed: the resource index. */
  uint32_t fixed_index;
  /* At most this many tasks in flight per resource. The policies choose among the
   * resources with room (round robin passes a full resource's turn on); a selection
   * that finds none is VKDS_ERROR_WOULD_BLOCK (vkds_try_submit, vkds_select) or waited
   * out (vkds_submit, vkds_launch and the algorithms). fixed and auto tune once it has
   * chosen wait for their one resource instead. 0: no limit. Needs completion reports,
   * which it turns on. */
  uint32_t capacity;
  /* vkds_submit (and vkds_launch and the algorithms) retry a blocked selection until this
   * much time passed, then return VKDS_ERROR_TIMEOUT; 0: 10 seconds. */
  uint64_t submit_timeout_ns;
  /* auto tune: measured samples per resource in a trial round (after one warm-up
   * sample, which is excluded); 0: 1. */
  uint32_t trial_samples;
  /* auto tune: start a fresh trial round (fresh statistics) this long after a best was
   * chosen; 0: never. */
  uint64_t retune_interval_ns;
  /* earliest finish: host-to-device bandwidth for data not already on the device it
   * weighs, in bytes per second (data on another device are counted twice: down to the
   * host and up); 0: 10e9. A negative, NaN or infinite rate is VKDS_ERROR_INVALID_ARGUMENT. */
  double transfer_bytes_per_s;
  /* Track completions (in-flight and completed counts for the query API) even when the
   * policy does not need them. */
  bool track_completion;
  void *user;
  /* A resource with tasks in flight that finishes none of them for this long is
   * unhealthy: no longer selected until all of its tasks are done (its work drained),
   * then healthy again. For tasks that may hang (a kernel that never ends, a wait on a
   * semaphore nobody signals) on a policy over several resources: the others take the
   * new work. Checked at each selection (so to the precision of the gaps between
   * them), from the completions vkds has seen; turns on completion reports. Picks not
   * yet submitted (a selection held, an algorithm call compiling its kernel on first
   * use) are no late task: a Vulkan resource whose queue has no unfinished work is not
   * made unhealthy. 0: none. */
  uint64_t task_deadline_ns;
} vkds_policy_info;

/* Creates a policy (refcount 1). Errors: VKDS_ERROR_INVALID_ARGUMENT (NULL, unknown
 * kind, bad ops, neither a context nor a resource list in info->resources),
 * VKDS_ERROR_EMPTY (an empty resource list), VKDS_ERROR_OUT_OF_RANGE (fixed index),
 * VKDS_ERROR_UNSUPPORTED (the backend cannot report what the policy needs), and the
 * backend's errors. */
VKDS_API vkds_result vkds_policy_create(const vkds_policy_info *info, vkds_policy **out);
/* Gives a deferred policy its resources. VKDS_ERROR_ALREADY_INITIALIZED the second time,
 * also when two threads call it at once (one succeeds); after a failed init it may be
 * called again. */
VKDS_API vkds_result vkds_policy_init(vkds_policy *p, const vkds_policy_resources *resources);
/* Copies share state: retain adds a reference, release drops one; the last release
 * waits for the policy's work and destroys it (submissions not yet released keep it
 * until theirs), and if vkds_context_destroy was called meanwhile and this was the
 * context's last policy, destroys the context too. NULL is a no-op. Its selections
 * (vkds_select) must be submitted or released first (a selection released after it
 * reports to freed memory). Each reference is released once: a release more than the
 * create and the retains gave is a use after free, as with free() (a crash, not an
 * error vkds can report). */
VKDS_API vkds_policy *vkds_policy_retain(vkds_policy *p);
VKDS_API void vkds_policy_release(vkds_policy *p);

/* Picks a resource for a task with these hints (NULL: none) and returns a selection
 * (release it, before the policy's last release). Delivers due reports first. VKDS_ERROR_NOT_INITIALIZED for a deferred
 * policy not yet initialized; VKDS_ERROR_WOULD_BLOCK when every candidate is at capacity. */
VKDS_API vkds_result vkds_select(vkds_policy *p, const vkds_task_info *hints, vkds_selection **out);
/* Selects and submits. Blocked selections, and a backend's submit that answers
 * VKDS_ERROR_WOULD_BLOCK (backend.h), are retried until submit_timeout_ns, then
 * VKDS_ERROR_TIMEOUT. With out NULL the submission is not returned. */
VKDS_API vkds_result vkds_submit(vkds_policy *p, const vkds_task_info *task, vkds_submission **out);
/* Like vkds_submit but returns VKDS_ERROR_WOULD_BLOCK at once instead of retrying. */
VKDS_API vkds_result vkds_try_submit(vkds_policy *p, const vkds_task_info *task, vkds_submission **out);
/* Submits and waits for the task. */
VKDS_API vkds_result vkds_submit_and_wait(vkds_policy *p, const vkds_task_info *task);
/* Waits for every task submitted through the policy (the submission group), and
 * completes the staged outputs of the asynchronous algorithm calls among them
 * (vkds/algorithm.h) as their own waits would. VKDS_ERROR_TIMEOUT after timeout_ns
 * (UINT64_MAX: no limit); a call whose outputs could not be written returns its error
 * (its submission's wait says it again). */
VKDS_API vkds_result vkds_policy_wait_all(vkds_policy *p, uint64_t timeout_ns);

/* ---- queries ---- */

/* The policy's name (its ops table's, or the nearest parent's: "round_robin", ...); ""
 * for NULL. Never NULL. */
VKDS_API const char *vkds_policy_name(const vkds_policy *p);
/* Whether the policy has its resources: true once created, or for a deferred one once
 * vkds_policy_init succeeded; false for NULL. */
VKDS_API bool vkds_policy_initialized(const vkds_policy *p);
/* The i-th resource (NULL when out of range or not initialized). */
VKDS_API void *vkds_policy_resource(const vkds_policy *p, uint32_t i);

/* Whether a policy selects a resource. Every built-in policy skips resources that are
 * not healthy; a selection that finds none is VKDS_ERROR_WOULD_BLOCK (vkds_submit waits
 * until one drains, up to submit_timeout_ns), or VKDS_ERROR_DEVICE_LOST when every one is
 * lost. */
typedef enum vkds_resource_health {
  VKDS_RESOURCE_HEALTHY = 0,
  /* past the policy's task_deadline_ns without finishing a task; healthy again once
   * its tasks in flight are done */
  VKDS_RESOURCE_STALLED = 1,
  /* its device was lost (VK_ERROR_DEVICE_LOST), or a task on it returned
   * VKDS_ERROR_DEVICE_LOST (its backend's submit or its task function, for Vulkan
   * resources too: the policy then marks the resource, not the context's device, and
   * other policies keep selecting it): for good */
  VKDS_RESOURCE_LOST = 2,
} vkds_resource_health;

typedef struct vkds_policy_resource_stats {
  /* picks of this resource, submitted or not: a selection released unsubmitted (a call
   * that failed after selecting, say) is counted here too. A pick refused at once
   * because the task cannot run on the resource's device (VKDS_ERROR_WRONG_DEVICE: a
   * launch's buffers on another device) made no selection and is not counted, nor is
   * one refused because the resource filled up meanwhile (another thread's). For the
   * built-in policies it counts modulo 2^40 (it shares a word with the in-flight count:
   * 12.7 days at a million picks a second), except round robin without completion
   * tracking (no capacity, deadline or track_completion); `completed` does not wrap. */
  uint64_t selections;
  bool tracks_completion; /* the two counts below are only kept when true */
  uint64_t in_flight;
  uint64_t completed;
  vkds_resource_health health;
} vkds_policy_resource_stats;

/* Fills *out with what the policy has seen of resource `index` (its resources, as
 * vkds_policy_resource counts them). VKDS_SUCCESS, or VKDS_ERROR_INVALID_ARGUMENT (NULL p
 * or out), VKDS_ERROR_NOT_INITIALIZED (a deferred policy not yet initialized),
 * VKDS_ERROR_OUT_OF_RANGE (index past its resources). */
VKDS_API vkds_result vkds_policy_get_resource_stats(const vkds_policy *p, uint32_t index,
                                                vkds_policy_resource_stats *out);

/* The health of resource `index` (see vkds_resource_health): what a custom policy's
 * select should check to skip the resources the built-in ones skip.
 * VKDS_RESOURCE_LOST for a NULL or uninitialized policy or an index out of range. */
VKDS_API vkds_resource_health vkds_policy_resource_health(const vkds_policy *p, uint32_t index);

typedef struct vkds_policy_key_stats {
  uint64_t samples;  /* task times counted (warm-up excluded; earliest finish and a tuned
                      * auto tune time only some of a key's tasks: policy.h's top) */
  uint64_t warmups;  /* the first sample of a key on a resource, excluded */
  double mean_ns;
  uint64_t best_ns;
} vkds_policy_key_stats;

/* Task-time statistics of `key` on resource `index` (all zero when none yet; auto tune
 * starts them afresh with each trial round, retune_interval_ns).
 * Needs a policy that asks for VKDS_REPORT_TIME (auto tune, earliest finish);
 * VKDS_ERROR_UNSUPPORTED otherwise. */
VKDS_API vkds_result vkds_policy_get_key_stats(const vkds_policy *p, uint32_t index, uint64_t key,
                                           vkds_policy_key_stats *out);
/* The keys with task-time statistics so far (up to `cap` of them in keys[]): keys of
 * tasks whose times were reported, so only under a policy that asks for
 * VKDS_REPORT_TIME (auto tune, earliest finish; 0 under the others). Returns how many
 * there are (keys NULL or cap 0: only counts). */
VKDS_API uint32_t vkds_policy_keys(const vkds_policy *p, uint64_t *keys, uint32_t cap);

typedef enum vkds_auto_tune_phase {
  VKDS_AUTO_TUNE_UNSEEN = 0,  /* the key has not been selected for yet (or was forgotten: policy.h's top) */
  VKDS_AUTO_TUNE_TRIAL = 1,   /* trying every resource */
  VKDS_AUTO_TUNE_CHOSEN = 2,  /* sending everything to the best */
} vkds_auto_tune_phase;

/* Auto tune only: the phase of `key` and, once chosen, the best resource's index
 * (UINT32_MAX before: UNSEEN or TRIAL). Both pointers are required, as is p
 * (VKDS_ERROR_INVALID_ARGUMENT); VKDS_ERROR_UNSUPPORTED for other policies,
 * VKDS_ERROR_NOT_INITIALIZED for a deferred one not yet initialized. */
VKDS_API vkds_result vkds_policy_auto_tune_state(const vkds_policy *p, uint64_t key,
                                                 vkds_auto_tune_phase *phase, uint32_t *best);

/* ---- for policy writers ---- */

/* The resource's in-flight counter, for a select that counts its own pick
 * (select_counts_in_flight): vkds_policy_in_flight reads it; vkds_policy_count_in_flight
 * counts one selection and one task in flight if the count is still `expected` and
 * returns true, else false (another thread changed it: look again; or it is at the
 * policy's capacity, or at the limit of 16,777,215 tasks in flight). A NULL or uninitialized policy, or an index
 * past its resources: 0 in flight, and nothing is counted (false). */
VKDS_API uint64_t vkds_policy_in_flight(const vkds_policy *p, uint32_t index);
VKDS_API bool vkds_policy_count_in_flight(vkds_policy *p, uint32_t index, uint64_t expected);

#ifdef __cplusplus
}
#endif
#endif
