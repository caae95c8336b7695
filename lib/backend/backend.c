/* lib/backend/backend.c: creating backends (completing their ops tables), the registry,
 * selections and submissions. The base backend's slots are in lib/backend/backend_base.c, the
 * Vulkan backend's in lib/backend/backend_vulkan.c. */
#include "internal.h"

#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- completing a table ---- */

#define OPS_SLOTS(X)                                                                        \
  X(init) X(destroy) X(get_resources) X(supports) X(scratch_size) X(submit)                 \
  X(instrument_before) X(instrument_after) X(abandon) X(wait) X(poll) X(wait_all)

/* Fills every NULL slot of *dst from the parent chain, ending at the base. Once, at
 * creation: the hot paths call through the completed table without checks. */
static vkds_result complete_ops(const vkds_backend_ops *given, vkds_backend_ops *dst) {
  if (given->version == 0 || given->version > VKDS_BACKEND_OPS_VERSION)
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "backend ops version %u: this library knows versions 1..%u",
                      given->version, VKDS_BACKEND_OPS_VERSION);
  *dst = *given;
  const vkds_backend_ops *p = given;
  for (int depth = 0; p != &vkds_backend_base_ops; ++depth) {
    if (depth > 16)
      return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                        "backend ops: parent chain longer than 16 (a cycle?)");
    p = p->parent ? p->parent : &vkds_backend_base_ops;
    /* (a parent table of version 0 was taken: its slots may be of another shape; a probe) */
    if (p->version == 0 || p->version > VKDS_BACKEND_OPS_VERSION)
      return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                        "backend ops '%s': its parent '%s' has version %u; this library knows versions 1..%u",
                        given->name ? given->name : "?", p->name ? p->name : "?", p->version, VKDS_BACKEND_OPS_VERSION);
#define FILL(slot)                                                                          \
  if (!dst->slot) dst->slot = p->slot;
    OPS_SLOTS(FILL)
#undef FILL
    if (!dst->backend_size) dst->backend_size = p->backend_size;
    if (!dst->name) dst->name = p->name;
    /* lazy_report is OPTIONAL, but an override of a backend that has it inherits it */
    if (!dst->lazy_report) dst->lazy_report = p->lazy_report;
  }
  if (dst->backend_size < sizeof(vkds_backend))
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "backend ops: backend_size %zu is smaller than vkds_backend", dst->backend_size);
  return VKDS_SUCCESS;
}

/* ---- the registry ---- */

enum { MAX_KINDS = 64 };
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
typedef struct registry_entry {
  const vkds_resource_kind *kind;
  const vkds_backend_ops *ops;
} registry_entry;
static registry_entry registry[MAX_KINDS];
static uint32_t registry_count;

/* A kind description from a newer header than this library's has members it would not
 * read: refused where it is given. */
static vkds_result check_kind(const vkds_context *ctx, const vkds_resource_kind *kind, const char *what) {
  if (kind->version <= VKDS_RESOURCE_KIND_VERSION) return VKDS_SUCCESS;
  return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                    "%s: resource kind '%s' has version %u; this library knows version %u at most", what,
                    kind->name ? kind->name : "(unnamed)", kind->version, VKDS_RESOURCE_KIND_VERSION);
}

vkds_result vkds_backend_register(const vkds_resource_kind *kind, const vkds_backend_ops *ops) {
  if (!kind)
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "vkds_backend_register: kind is NULL");
  VKDS_CHECK(check_kind(NULL, kind, "vkds_backend_register"));
  /* a table no backend could be made from is refused here, where it is given, not at
   * every later vkds_backend_create of the kind (a probe registered a version-0 table) */
  vkds_backend_ops checked;
  if (ops) {
    char who[320];
    snprintf(who, sizeof who, "vkds_backend_register: kind '%.256s'", kind->name ? kind->name : "(unnamed)");
    VKDS_CHECK(vkds__fail_as(NULL, who, complete_ops(ops, &checked)));
  }
  vkds_result r = VKDS_SUCCESS;
  pthread_mutex_lock(&registry_lock);
  uint32_t i = 0;
  while (i < registry_count && registry[i].kind != kind) ++i;
  if (ops == NULL) {
    if (i < registry_count) registry[i] = registry[--registry_count];
  } else if (i < registry_count) {
    registry[i].ops = ops;
  } else if (registry_count < MAX_KINDS) {
    registry[registry_count++] = (registry_entry){kind, ops};
  } else {
    r = vkds__fail(NULL, VKDS_ERROR_LIMIT_EXCEEDED, VK_SUCCESS,
                   "vkds_backend_register: the registry holds %d kinds, all taken (unregister one with NULL ops)",
                   MAX_KINDS);
  }
  pthread_mutex_unlock(&registry_lock);
  return r;
}

const vkds_backend_ops *vkds_backend_lookup(const vkds_resource_kind *kind) {
  const vkds_backend_ops *ops = NULL;
  pthread_mutex_lock(&registry_lock);
  for (uint32_t i = 0; i < registry_count && !ops; ++i)
    if (registry[i].kind == kind) ops = registry[i].ops;
  pthread_mutex_unlock(&registry_lock);
  if (ops) return ops;
  return kind == &vkds_resource_kind_vulkan ? &vkds_backend_vulkan_ops : &vkds_backend_base_ops;
}

/* ---- backends ---- */

typedef struct backend_internal {
  vkds_backend_ops ops; /* the completed table b->ops points to */
  const vkds_context *alloc_ctx; /* whose allocator the backend's memory comes from; NULL: malloc */
  pthread_mutex_t free_lock;
  vkds_submission *free_submissions;
  /* under free_lock: submissions made and not yet released, and what runs when the last
   * of them is (a destroy asked for while some were out: vkds__backend_defer) */
  uint64_t live;
  /* selections of vkds_selection_create not yet released: each holds the backend (the
   * last one's release, 1 -> 0, under free_lock). Not a policy's: counting those cost
   * vkds_select 17 ns on one thread and 150-170 at four (one cache line for every
   * thread; H100 host, 2026-11-27, bench/RESULTS.md); a policy outlives them by its
   * own rule (policy.h). */
  _Atomic uint64_t live_selections;
  void (*on_last)(void *);
  void *on_last_user;
  pthread_mutex_t finish_lock; /* runs each submission's finishing step once */
  /* Submissions whose finishing step has not run (under finish_lock), oldest first (by
   * `order`): a wait for all runs theirs in that order (vkds_backend_wait_all), and a
   * wait for one first runs those of the older ones that are done, so that of two calls
   * on one queue writing the same host memory the later one's values stay, as its
   * writes to device memory do (newest first, a wait_all, or a wait for the later call
   * before the earlier, left the earlier call's values: an async probe). */
  vkds_submission *unfinished, *unfinished_tail;
  atomic_uint_fast64_t unfinished_count; /* read without the lock: anything to finish? */
  atomic_uint_fast64_t next_order;       /* numbers submissions as they are made */
  /* vkds__backend_hold_context: let go once the backend is freed (or left for good) */
  vkds_context *held;
} backend_internal;

struct vkds_submission {
  vkds_backend *backend;
  vkds_selection *selection;
  void *wait_object;
  uint64_t data;
  vkds_submission *next_free;
  /* set by its release, cleared when it is handed out again: a second release of a
   * submission still free is refused (it pushed the submission on the free list twice
   * and released its selection twice: later calls used freed memory; a probe) */
  atomic_bool released;
  /* A finishing step (vkds__submission_set_finish), run once under finish_lock by the
   * first wait or poll that sees the work done, or by the release; its result is what
   * every later wait and poll returns. */
  vkds__finish_fn finish;
  void *finish_user;
  bool has_finish;
  vkds_result finish_result;
  /* a wait, poll or wait_all returned its failure to a caller: its release then does
   * not log it again (it logged every handled failure at error level; a probe) */
  atomic_bool failure_returned;
  vkds_submission *prev_unfinished, *next_unfinished; /* backend_internal.unfinished */
  uint64_t order; /* when it was made, among the backend's submissions */
};

static backend_internal *internal_of(const vkds_backend *b) { return b->internal; }
static void finish_locked(backend_internal *in, vkds_submission *s, bool run, bool done);

const vkds_context *vkds__backend_alloc_ctx(const vkds_backend *b) { return internal_of(b)->alloc_ctx; }

/* The context whose allocator a backend over these resources uses: the one given, else
 * (Vulkan resources) the first resource's; a user's resources without a context: none
 * (malloc). */
static const vkds_context *alloc_ctx_of(const vkds_backend_info *info, const vkds_resource_kind *kind) {
  if (info->context) return info->context;
  if (kind == &vkds_resource_kind_vulkan && info->resources && info->resource_count && info->resources[0])
    return vkds_resource_context(info->resources[0]);
  return NULL;
}

vkds_result vkds_backend_create(const vkds_backend_info *info, vkds_backend **out) {
  if (out) *out = NULL;
  if (!info || !out)
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "vkds_backend_create: NULL argument");
  const vkds_resource_kind *kind = info->kind ? info->kind : &vkds_resource_kind_vulkan;
  bool all_of_context = kind == &vkds_resource_kind_vulkan && !info->resources;
  const vkds_context *ctx = info->context;
  /* (named as the call made: a policy's creation makes its backend) */
  const char *who = vkds__caller("vkds_backend_create");
  VKDS_CHECK(check_kind(ctx, kind, who));
  if (all_of_context && !ctx)
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "%s: give resources or a context", who);
  uint32_t count = all_of_context ? ctx->resource_count : info->resource_count;
  if (count == 0)
    return vkds__fail(ctx, VKDS_ERROR_EMPTY, VK_SUCCESS, "%s: no resources", who);
  if (!all_of_context && !info->resources)
    return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "%s: resources is NULL (with %u resources of a kind other than Vulkan's)", who, count);
  if (!all_of_context)
    for (uint32_t i = 0; i < count; ++i)
      if (!info->resources[i])
        return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: resource %u is NULL", who, i);

  const vkds_context *actx = alloc_ctx_of(info, kind);
  backend_internal *in = vkds__alloc(actx, sizeof *in);
  if (!in) return vkds__fail(ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "backend");
  in->alloc_ctx = actx;
  /* (named by the call and logged: it said only "backend ops version 0: ...", unlogged; an
   * embedding probe) */
  vkds_result r = vkds__fail_as(ctx, who, complete_ops(info->ops ? info->ops : vkds_backend_lookup(kind), &in->ops));
  if (r != VKDS_SUCCESS) {
    vkds__free(actx, in);
    return r;
  }
  vkds_backend *b = vkds__alloc(actx, in->ops.backend_size);
  void **resources = vkds__alloc_array(actx, count, sizeof *resources);
  if (!b || !resources) {
    vkds__free(actx, b), vkds__free(actx, resources), vkds__free(actx, in);
    return vkds__fail(ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "backend");
  }
  pthread_mutex_init(&in->free_lock, NULL);
  pthread_mutex_init(&in->finish_lock, NULL);
  for (uint32_t i = 0; i < count; ++i)
    resources[i] = all_of_context ? (void *)&ctx->resources[i] : info->resources[i];
  *b = (vkds_backend){.ops = &in->ops, .kind = kind, .context = info->context,
                      .resource_count = count, .resources = resources, .user = info->user,
                      .spin_ns = info->spin_ns ? info->spin_ns : 50000, .internal = in};
  uint64_t failures = vkds__failures();
  r = b->ops->init(b);
  /* a slot of the application's that fails without saying why (through vkds) left the
   * thread's last message to an earlier, unrelated failure (a probe) */
  r = vkds__fail_if_silent(info->context, r, failures, "backend '%s': its init returned %s",
                           b->ops->name ? b->ops->name : "?", vkds_result_str(r));
  if (r != VKDS_SUCCESS) {
    pthread_mutex_destroy(&in->free_lock);
    pthread_mutex_destroy(&in->finish_lock);
    vkds_context *held = in->held; /* (a derived init that failed after the Vulkan one's) */
    vkds__free(actx, resources), vkds__free(actx, b), vkds__free(actx, in);
    if (held) vkds__context_let_go(held);
    return r;
  }
  *out = b;
  return VKDS_SUCCESS;
}

bool vkds__backend_defer(vkds_backend *b, void (*fn)(void *), void *user) {
  backend_internal *in = internal_of(b);
  pthread_mutex_lock(&in->free_lock);
  bool later = in->live > 0 || atomic_load_explicit(&in->live_selections, memory_order_relaxed) > 0;
  if (later) in->on_last = fn, in->on_last_user = user;
  pthread_mutex_unlock(&in->free_lock);
  return later;
}

static void destroy_now(void *b);

void vkds_backend_destroy(vkds_backend *b) {
  if (!b) return;
  /* submissions and selections not yet released still use it (a wait, a poll, their
   * release): the last release destroys it (and lets go of the context then) */
  if (vkds__backend_defer(b, destroy_now, b)) return;
  destroy_now(b);
}

static void destroy_now(void *arg) {
  vkds_backend *b = arg;
  backend_internal *in = internal_of(b);
  if (b->ops->wait_all(b, vkds__destroy_timeout(b->context)) == VKDS_ERROR_TIMEOUT) {
    /* its submissions still run and will report through it: never freed under them */
    vkds__log(b->context, VKDS_LOG_ERROR, "vkds_backend_destroy: work still in flight after the destroy timeout; "
              "the backend is left allocated");
    vkds__abandon(b);
    vkds__backend_abandon_context(b); /* (its own destroy then meets that work too) */
    return;
  }
  b->ops->destroy(b);
  const vkds_context *actx = in->alloc_ctx;
  for (vkds_submission *s = in->free_submissions, *next; s; s = next) {
    next = s->next_free;
    vkds__free(actx, s);
  }
  pthread_mutex_destroy(&in->free_lock);
  pthread_mutex_destroy(&in->finish_lock);
  vkds_context *held = in->held;
  vkds__free(actx, b->resources);
  vkds__free(actx, in);
  vkds__free(actx, b);
  if (held) vkds__context_let_go(held); /* last: it may destroy the context */
}

void vkds__backend_hold_context(vkds_backend *b, vkds_context *ctx) {
  backend_internal *in = internal_of(b);
  if (in->held) return;
  in->held = ctx;
  vkds__context_hold(ctx);
}

vkds_context *vkds__backend_held_context(const vkds_backend *b) { return b ? internal_of(b)->held : NULL; }

uint32_t vkds__backend_device_of(const vkds_backend *b, uint32_t i) {
  return b->kind == &vkds_resource_kind_vulkan ? ((const vkds_resource *)b->resources[i])->dev->index : i;
}

void vkds__backend_abandon_context(vkds_backend *b) {
  backend_internal *in = internal_of(b);
  vkds_context *held = in->held;
  in->held = NULL;
  if (held) vkds__context_let_go(held);
}

vkds_result vkds_backend_get_resources(vkds_backend *b, uint32_t *count, void *const **resources) {
  if (!b || !count || !resources)
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "vkds_backend_get_resources: NULL argument");
  return b->ops->get_resources(b, count, resources);
}

uint32_t vkds_backend_supports(vkds_backend *b, uint32_t index, uint32_t reports) {
  if (!b || index >= b->resource_count) return 0;
  return b->ops->supports(b, index, reports);
}

vkds_result vkds_backend_wait_all(vkds_backend *b, uint64_t timeout_ns) {
  if (!b) return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "vkds_backend_wait_all: NULL backend");
  VKDS_CHECK(b->ops->wait_all(b, timeout_ns));
  /* Asynchronous calls' finishing steps (their host outputs, their outputs staged to
   * buffers of another device) run here too, for the work that is done: they ran only
   * in the submission's own wait, poll or release, so after this wait the outputs were
   * not there, and a release after the application reused or freed an output buffer
   * wrote into it (a several-devices probe). Work submitted since the wait began and not
   * yet done keeps its step for later. */
  backend_internal *in = internal_of(b);
  vkds_result r = VKDS_SUCCESS;
  pthread_mutex_lock(&in->finish_lock);
  for (vkds_submission *s = in->unfinished, *next; s; s = next) {
    next = s->next_unfinished;
    if (b->ops->poll(b, s) != VKDS_SUCCESS) continue;
    finish_locked(in, s, true, true);
    if (r == VKDS_SUCCESS && s->finish_result != VKDS_SUCCESS) {
      r = s->finish_result;
      atomic_store(&s->failure_returned, true);
    }
  }
  pthread_mutex_unlock(&in->finish_lock);
  return r;
}

void vkds_backend_lazy_report(vkds_backend *b) {
  if (b && b->ops->lazy_report) b->ops->lazy_report(b);
}

/* ---- selections ---- */

/* Selecting is the hot path of every policy: a select-release pair costs a calloc and
 * a free unless the thread keeps its last released selection (without scratch) for the
 * next one. The pointer is a C11 thread-local (a plain load); a pthread key, set once
 * per thread, only exists so that its destructor frees the cached one at thread exit.
 * Only selections from malloc are cached, and only backends without a user allocator
 * take them: a cached one outlives its context, and the destructor frees it with free.
 * With a user allocator every selection is allocated and freed through it. */
VKDS__FAST_TLS vkds__thread_state vkds__thread;
static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;
static void free_cached(void *unused) {
  (void)unused;
  free(vkds__thread.cached_selection);
  vkds__thread.cached_selection = NULL;
}
static atomic_bool cache_key_made;
static void make_cache_key(void) {
  if (pthread_key_create(&cache_key, free_cached) == 0) atomic_store(&cache_key_made, true);
}

/* When the library is unloaded (dlclose; also at exit), the key goes with it: a thread
 * that used vkds and exits after the unload would otherwise run free_cached, which is
 * no longer mapped (a probe's plugin host: SIGSEGV at the thread's exit). Other threads'
 * cached selections are left to the process then: one small block a thread. */
__attribute__((destructor)) static void forget_cache_key(void) {
  if (!atomic_exchange(&cache_key_made, false)) return;
  pthread_key_delete(cache_key);
  free_cached(NULL);
}

static vkds_selection *take_cached_selection(void) {
  vkds_selection *sel = vkds__thread.cached_selection;
  vkds__thread.cached_selection = NULL;
  return sel;
}

static bool cache_selection(vkds_selection *sel) {
  if (vkds__thread.cached_selection) return false;
  if (!vkds__thread.cache_registered) {
    pthread_once(&cache_once, make_cache_key);
    /* any non-NULL value makes the destructor run for this thread */
    if (!atomic_load(&cache_key_made) || pthread_setspecific(cache_key, (void *)1) != 0) return false;
    vkds__thread.cache_registered = true;
  }
  vkds__thread.cached_selection = sel;
  return true;
}

vkds_result vkds_selection_create(vkds_backend *b, uint32_t index, uint32_t reports,
                                  const vkds_report_sink *sink, vkds_selection **out) {
  if (out) *out = NULL;
  if (!b || !out)
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "vkds_selection_create: NULL argument");
  if (index >= b->resource_count)
    return vkds__fail(b->context, VKDS_ERROR_OUT_OF_RANGE, VK_SUCCESS,
                      "vkds_selection_create: index %u, but the backend has %u resource%s", index,
                      b->resource_count, b->resource_count == 1 ? "" : "s");
  const uint32_t known = VKDS_REPORT_SUBMISSION | VKDS_REPORT_COMPLETION | VKDS_REPORT_TIME;
  if (reports & ~known)
    return vkds__fail(b->context, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "vkds_selection_create: report bits 0x%x are not ones a selection asks for (SUBMISSION, "
                      "COMPLETION and TIME are)", reports & ~known);
  uint32_t missing = reports & ~b->ops->supports(b, index, reports);
  if (missing)
    return vkds__fail(b->context, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS,
                      "resource %u of backend '%s' cannot report 0x%x", index, b->ops->name, missing);
  VKDS_CHECK(vkds__selection_make(b, index, reports, b->ops->scratch_size(b, reports), sink, out));
  atomic_fetch_add_explicit(&internal_of(b)->live_selections, 1, memory_order_relaxed);
  return VKDS_SUCCESS;
}

vkds_result vkds__selection_make(vkds_backend *b, uint32_t index, uint32_t reports, size_t scratch,
                                 const vkds_report_sink *sink, vkds_selection **out) {
  const vkds_context *actx = vkds__vk_allocator(internal_of(b)->alloc_ctx) ? internal_of(b)->alloc_ctx : NULL;
  vkds_selection *sel = scratch || actx ? NULL : take_cached_selection();
  if (!sel) {
    if (scratch > SIZE_MAX - sizeof *sel || !(sel = vkds__alloc(actx, sizeof *sel + scratch)))
      return vkds__fail(b->context, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "selection");
    sel->alloc_ctx = actx;
  }
  vkds__selection_init(sel, b, index, reports, scratch, sink);
  *out = sel;
  return VKDS_SUCCESS;
}

/* A selection of b released: the last one out runs a destroy that waited for it. Only the
 * step from 1 to 0 takes the lock, so a destroy (vkds__backend_defer) sees either a
 * selection still out, whose release will run it, or none, and then nothing here touches
 * b again. */
static void selection_gone(vkds_backend *b) {
  backend_internal *in = internal_of(b);
  uint64_t n = atomic_load_explicit(&in->live_selections, memory_order_relaxed);
  while (n > 1)
    if (atomic_compare_exchange_weak_explicit(&in->live_selections, &n, n - 1, memory_order_acq_rel,
                                              memory_order_relaxed))
      return;
  pthread_mutex_lock(&in->free_lock);
  bool none = atomic_fetch_sub_explicit(&in->live_selections, 1, memory_order_acq_rel) == 1 && in->live == 0;
  void (*last)(void *) = none ? in->on_last : NULL;
  void *user = in->on_last_user;
  if (last) in->on_last = NULL;
  pthread_mutex_unlock(&in->free_lock);
  if (last) last(user);
}

vkds_selection *vkds_selection_retain(vkds_selection *sel) {
  if (sel) atomic_fetch_add_explicit(&sel->refs, 1, memory_order_relaxed);
  return sel;
}

void vkds_selection_release(vkds_selection *sel) {
  if (!sel) return;
  /* The last reference (the common case: select, submit, release) needs no atomic
   * read-modify-write: holding the only reference, nobody else can take one. It leaves
   * the count at 0, so that a second release of a selection the thread keeps for its
   * next select is seen and ignored (it was released twice: the policy counted its
   * pick out twice, and the cached selection was freed under the cache; a probe). */
  unsigned refs = atomic_load_explicit(&sel->refs, memory_order_acquire);
  if (refs == 0) {
    vkds__log(sel->backend->context, VKDS_LOG_ERROR,
              "vkds_selection_release: this selection was released already (ignored; a selection is released once)");
    return;
  }
  if (refs != 1 && atomic_fetch_sub_explicit(&sel->refs, 1, memory_order_acq_rel) != 1) return;
  atomic_store_explicit(&sel->refs, 0, memory_order_relaxed);
  if ((sel->reports & VKDS_REPORT_UNUSED) && atomic_load_explicit(&sel->state, memory_order_relaxed) == VKDS__SEL_PICKED) {
    /* a policy's pick that never ran: it gives back what the policy counted */
    vkds_report rep = {.what = VKDS_REPORT_UNUSED, .resource_index = sel->index, .key = sel->key};
    sel->sink.report(sel->sink.user, &rep);
  }
  vkds_backend *b = sel->backend;
  bool counted = atomic_load_explicit(&sel->state, memory_order_relaxed) == VKDS__SEL_FREE;
  if (sel->alloc_ctx || sel->scratch_size || !cache_selection(sel)) vkds__free(sel->alloc_ctx, sel);
  if (counted) selection_gone(b); /* (last: it may destroy b) */
}

void *vkds_selection_resource(const vkds_selection *sel) {
  return sel ? sel->backend->resources[sel->index] : NULL;
}
uint32_t vkds_selection_index(const vkds_selection *sel) { return sel ? sel->index : UINT32_MAX; }
vkds_backend *vkds_selection_backend(const vkds_selection *sel) { return sel ? sel->backend : NULL; }
void *vkds_selection_scratch(const vkds_selection *sel) {
  return sel && sel->scratch_size ? (void *)sel->scratch : NULL;
}
uint32_t vkds_selection_reports(const vkds_selection *sel) { return sel ? sel->reports : 0; }

void vkds_selection_report(vkds_selection *sel, vkds_report_bits what, uint64_t key, uint64_t value_ns) {
  if (!sel || !(sel->reports & what) || !sel->sink.report) return;
  vkds_report rep = {.what = what, .resource_index = sel->index, .key = key, .value_ns = value_ns};
  sel->sink.report(sel->sink.user, &rep);
}

/* ---- submissions ---- */

vkds_result vkds_submission_create(vkds_backend *b, vkds_selection *sel, void *wait_object,
                                   uint64_t data, vkds_submission **out) {
  if (!b || !sel || !out)
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "vkds_submission_create: NULL argument");
  backend_internal *in = internal_of(b);
  pthread_mutex_lock(&in->free_lock);
  vkds_submission *s = in->free_submissions;
  if (s) in->free_submissions = s->next_free;
  ++in->live;
  pthread_mutex_unlock(&in->free_lock);
  if (!s && !(s = vkds__alloc(in->alloc_ctx, sizeof *s))) {
    pthread_mutex_lock(&in->free_lock);
    --in->live;
    pthread_mutex_unlock(&in->free_lock);
    return vkds__fail(b->context, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "submission");
  }
  vkds_selection_retain(sel);
  *s = (vkds_submission){.backend = b, .selection = sel, .wait_object = wait_object, .data = data,
                         .order = atomic_fetch_add_explicit(&in->next_order, 1, memory_order_relaxed)};
  *out = s;
  return VKDS_SUCCESS;
}

void vkds__submission_set_work(vkds_submission *s, void *wait_object, uint64_t data) {
  s->wait_object = wait_object;
  s->data = data;
}

void vkds__submission_set_finish(vkds_submission *s, vkds__finish_fn fn, void *user) {
  backend_internal *in = internal_of(s->backend);
  pthread_mutex_lock(&in->finish_lock);
  s->finish = fn;
  s->finish_user = user;
  s->has_finish = true;
  s->finish_result = VKDS_SUCCESS;
  /* in order: after the last older one (at the tail, but for another thread's call made
   * meanwhile) */
  vkds_submission *before = in->unfinished_tail;
  while (before && before->order > s->order) before = before->prev_unfinished;
  s->prev_unfinished = before;
  s->next_unfinished = before ? before->next_unfinished : in->unfinished;
  if (s->next_unfinished) s->next_unfinished->prev_unfinished = s;
  else in->unfinished_tail = s;
  if (before) before->next_unfinished = s;
  else in->unfinished = s;
  atomic_fetch_add_explicit(&in->unfinished_count, 1, memory_order_relaxed);
  pthread_mutex_unlock(&in->finish_lock);
}

/* Takes s off the unfinished list and runs or drops its step (with finish_lock held). */
static void finish_locked(backend_internal *in, vkds_submission *s, bool run, bool done) {
  if (!s->finish) return;
  if (run) s->finish_result = s->finish(s->finish_user, done);
  s->finish = NULL;
  if (s->prev_unfinished) s->prev_unfinished->next_unfinished = s->next_unfinished;
  else in->unfinished = s->next_unfinished;
  if (s->next_unfinished) s->next_unfinished->prev_unfinished = s->prev_unfinished;
  else in->unfinished_tail = s->prev_unfinished;
  s->prev_unfinished = s->next_unfinished = NULL;
  atomic_fetch_sub_explicit(&in->unfinished_count, 1, memory_order_relaxed);
}

/* Runs the finishing steps of the submissions made before `order` whose work is done,
 * oldest first (with finish_lock held): their outputs are written before a later
 * call's. Their results stay theirs: their own waits return them. */
static void finish_older_locked(backend_internal *in, vkds_backend *b, uint64_t order) {
  for (vkds_submission *o = in->unfinished, *next; o && o->order < order; o = next) {
    next = o->next_unfinished;
    if (b->ops->poll(b, o) == VKDS_SUCCESS) finish_locked(in, o, true, true);
  }
}

/* For a wait or poll that saw `s` done: the older calls' steps first (for a blocking
 * call's submission, which has none of its own, before the call writes its outputs). */
static void finish_older(vkds_submission *s) {
  backend_internal *in = internal_of(s->backend);
  if (!atomic_load_explicit(&in->unfinished_count, memory_order_relaxed)) return;
  pthread_mutex_lock(&in->finish_lock);
  finish_older_locked(in, s->backend, s->order);
  pthread_mutex_unlock(&in->finish_lock);
}

/* Runs the finishing step if nobody has yet; returns what it returned. `done`: the work
 * completed (else the step only frees what it holds). */
static vkds_result run_finish(vkds_submission *s, bool done) {
  backend_internal *in = internal_of(s->backend);
  pthread_mutex_lock(&in->finish_lock);
  if (done && s->finish) finish_older_locked(in, s->backend, s->order);
  finish_locked(in, s, true, done);
  vkds_result r = s->finish_result;
  pthread_mutex_unlock(&in->finish_lock);
  return r;
}

void vkds_submission_release(vkds_submission *s) {
  if (!s) return;
  if (atomic_exchange(&s->released, true)) {
    vkds__log(s->backend->context, VKDS_LOG_ERROR,
              "vkds_submission_release: this submission was released already (ignored; a submission is released "
              "once)");
    return;
  }
  backend_internal *in = internal_of(s->backend);
  if (s->has_finish) { /* nothing is lost: the work is waited for and finished */
    vkds_result r = s->backend->ops->wait(s->backend, s, vkds__destroy_timeout(s->backend->context));
    if (r == VKDS_ERROR_TIMEOUT) {
      /* work that does not end: its finishing step (and what it holds, which the GPU may
       * still use) is kept, never run, rather than this release hanging */
      vkds__log(s->backend->context, VKDS_LOG_ERROR,
                "vkds_submission_release: the work is still running after the destroy timeout; its results are "
                "dropped and what it holds is left allocated");
      vkds__abandon(s->finish_user);
      pthread_mutex_lock(&in->finish_lock);
      finish_locked(in, s, false, false);
      pthread_mutex_unlock(&in->finish_lock);
    } else {
      /* the finishing step's own failure is told once, in the line below (it was logged
       * twice, as itself and as the release's: a streaming probe) */
      bool held = vkds__hold_failure_logs(!atomic_load(&s->failure_returned));
      vkds_result done = run_finish(s, r == VKDS_SUCCESS);
      vkds__hold_failure_logs(held);
      if (r == VKDS_SUCCESS) r = done;
      /* no caller to return it to (a probe: a sort whose deferred submit found no host
       * memory for its slot at this release left only "slot" in the log), unless a wait
       * or poll returned it already */
      if (r != VKDS_SUCCESS && !atomic_load(&s->failure_returned))
        vkds__log(s->backend->context, VKDS_LOG_ERROR,
                  "vkds_submission_release: the released call failed (%s), and its outputs were not written",
                  vkds_last_error_message());
    }
  }
  /* the kind may free the wait object now (a backend written from the header alone
   * could not tell when vkds was done with it, and kept every one: a new-user probe) */
  const vkds_resource_kind *kind = s->backend->kind;
  if (s->wait_object && kind && kind->version >= 2 && kind->release_object) kind->release_object(s->wait_object);
  vkds_selection_release(s->selection);
  pthread_mutex_lock(&in->free_lock);
  s->next_free = in->free_submissions;
  in->free_submissions = s;
  bool none = --in->live == 0 && atomic_load_explicit(&in->live_selections, memory_order_relaxed) == 0;
  void (*last)(void *) = none ? in->on_last : NULL;
  void *user = in->on_last_user;
  if (last) in->on_last = NULL;
  pthread_mutex_unlock(&in->free_lock);
  if (last) last(user); /* a destroy that waited for this release */
}

uint64_t vkds_submission_data(const vkds_submission *s) { return s ? s->data : 0; }
void *vkds_submission_unwrap(const vkds_submission *s) { return s ? s->wait_object : NULL; }
vkds_selection *vkds_submission_selection(const vkds_submission *s) { return s ? s->selection : NULL; }

vkds_result vkds_selection_submit(vkds_selection *sel, const vkds_task_info *info, vkds_submission **out) {
  if (out) *out = NULL;
  if (!sel || !info || !info->fn)
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "vkds_submit: selection, info and info->fn are required");
  if (info->mode != VKDS_TASK_RECORD && info->mode != VKDS_TASK_SELF_SUBMIT)
    return vkds__fail(sel->backend->context, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "vkds_submit: unknown mode %d", (int)info->mode);
  vkds_backend *b = sel->backend;
  /* a selection made without the task's only_devices (vkds_select with other hints) ran
   * it elsewhere (a several-devices probe) */
  if (info->only_devices) {
    uint32_t d = vkds__backend_device_of(b, sel->index);
    if (!(info->only_devices & vkds__device_bit(d)))
      return vkds__fail(b->context, VKDS_ERROR_WRONG_DEVICE, VK_SUCCESS,
                        "vkds_selection_submit: the selection's resource %u is on device %u, the task runs only on "
                        "devices of mask 0x%x (select with the task's hints)",
                        sel->index, d, info->only_devices);
  }
  /* A policy's pick stands for one task (the policy counted it once): claim it. */
  unsigned char picked = VKDS__SEL_PICKED;
  bool claimed = atomic_compare_exchange_strong(&sel->state, &picked, VKDS__SEL_SUBMITTED);
  if (!claimed && picked == VKDS__SEL_SUBMITTED)
    return vkds__fail(b->context, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "vkds_selection_submit: this selection of policy-picked resource %u was already submitted; "
                      "a policy's selection runs one task (select again)", sel->index);
  vkds_submission *s = NULL;
  uint64_t failures = vkds__failures();
  vkds_result r = b->ops->submit(b, sel, info, &s);
  if (r != VKDS_SUCCESS) {
    if (claimed) atomic_store(&sel->state, VKDS__SEL_PICKED); /* nothing ran: still unused */
    /* (as for init: the backend's submit or instrument hooks, or the task, said nothing) */
    if (r == VKDS_ERROR_WOULD_BLOCK) return r; /* (an answer, not a failure) */
    return vkds__fail_if_silent(b->context, r, failures, "backend '%s': submitting to resource %u returned %s",
                                b->ops->name ? b->ops->name : "?", sel->index, vkds_result_str(r));
  }
  if (out) *out = s;
  else vkds_submission_release(s); /* fire and forget: the backend still tracks the work */
  return VKDS_SUCCESS;
}

/* What a wait or poll returns to its caller, noting a failure (not "not yet") as told. */
static vkds_result returned(vkds_submission *s, vkds_result r) {
  if (r != VKDS_SUCCESS && r != VKDS_ERROR_TIMEOUT && r != VKDS_ERROR_WOULD_BLOCK) atomic_store(&s->failure_returned, true);
  return r;
}

vkds_result vkds_submission_wait_timeout(vkds_submission *s, uint64_t timeout_ns) {
  if (!s) return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "vkds_submission_wait: NULL submission");
  const char *outer = vkds__call_begin("vkds_submission_wait"); /* (a timeout names the call) */
  vkds_result r = s->backend->ops->wait(s->backend, s, timeout_ns);
  vkds__call_end(outer);
  if (r == VKDS_SUCCESS && !s->has_finish) finish_older(s);
  return returned(s, r == VKDS_SUCCESS && s->has_finish ? run_finish(s, true) : r);
}

vkds_result vkds_submission_wait(vkds_submission *s) { return vkds_submission_wait_timeout(s, UINT64_MAX); }

vkds_result vkds_submission_poll(vkds_submission *s) {
  if (!s) return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "vkds_submission_poll: NULL submission");
  vkds_result r = s->backend->ops->poll(s->backend, s);
  if (r == VKDS_SUCCESS && !s->has_finish) finish_older(s);
  return returned(s, r == VKDS_SUCCESS && s->has_finish ? run_finish(s, true) : r);
}
