/* lib/backend/policy.c: what every policy shares: creation (deferred or not), the backend it
 * owns, reference counting, select/submit, and the statistics behind the query API.
 * The strategies themselves are in selectors/. */
#include "policy_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the base table ---- */

vkds_result vkds__policy_base_init(vkds_policy *p) {
  (void)p;
  return VKDS_SUCCESS;
}
void vkds__policy_base_destroy(vkds_policy *p) { (void)p; }
void vkds__policy_base_report(vkds_policy *p, const vkds_report *r) { (void)p, (void)r; }

const vkds_policy_ops vkds_policy_base_ops = {
    .version = VKDS_POLICY_OPS_VERSION,
    .policy_size = sizeof(vkds_policy),
    .name = "base",
    .init = vkds__policy_base_init,
    .destroy = vkds__policy_base_destroy,
    .select = NULL, /* REQUIRED of every policy */
    .report = vkds__policy_base_report,
};

static bool is_built_in(const vkds_policy_ops *o) {
  return o == &vkds_policy_base_ops || o == &vkds_policy_fixed_ops || o == &vkds_policy_round_robin_ops ||
         o == &vkds_policy_dynamic_load_ops || o == &vkds_policy_auto_tune_ops || o == &vkds_policy_earliest_finish_ops;
}

static vkds_result complete_ops(const vkds_policy_ops *given, vkds_policy_ops *dst) {
  if (given->version == 0 || given->version > VKDS_POLICY_OPS_VERSION)
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "policy ops version %u: this library knows versions 1..%u", given->version,
                      VKDS_POLICY_OPS_VERSION);
  /* Copy only what the caller's version of the table has: a table built against an
   * older header is shorter, and the slots it lacks stay NULL. */
  static const size_t size_of_version[] = {0, offsetof(vkds_policy_ops, selections), sizeof(vkds_policy_ops)};
  *dst = (vkds_policy_ops){0};
  memcpy(dst, given, size_of_version[given->version]);
  dst->version = VKDS_POLICY_OPS_VERSION;
  const vkds_policy_ops *p = given;
  /* the largest state any ancestor keeps, and the first built-in one that keeps some */
  size_t ancestors_size = 0;
  const vkds_policy_ops *private_state = NULL;
  for (int depth = 0; p != &vkds_policy_base_ops; ++depth) {
    if (depth > 16)
      return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "policy ops: parent chain too long");
    p = p->parent ? p->parent : &vkds_policy_base_ops;
    /* (a parent of version 0 or 99 was read as this library's layout: a policies probe;
     * the backends' tables already checked theirs) */
    if (p->version == 0 || p->version > VKDS_POLICY_OPS_VERSION)
      return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                        "policy ops '%s': its parent '%s' has version %u; this library knows versions 1..%u",
                        given->name ? given->name : "?", p->name ? p->name : "?", p->version, VKDS_POLICY_OPS_VERSION);
    if (p->policy_size > ancestors_size) ancestors_size = p->policy_size;
    if (!private_state && p->policy_size > sizeof(vkds_policy) && is_built_in(p)) private_state = p;
    if (!dst->init) dst->init = p->init;
    if (!dst->destroy) dst->destroy = p->destroy;
    if (!dst->select && p->select) {
      /* what the select needs and does comes with it: the reports its picks depend on
       * (auto tune's task times), and whether it counts its picks itself (dynamic load:
       * counted again by vkds, every task would be two in flight) */
      dst->select = p->select;
      dst->reports |= p->reports;
      dst->select_counts_in_flight = p->select_counts_in_flight;
    }
    if (!dst->report) {
      dst->report = p->report;
      dst->reports |= p->reports; /* the reports it acts on come with it, as with select */
    }
    if (!dst->policy_size) dst->policy_size = p->policy_size;
    if (!dst->name) dst->name = p->name;
  }
  if (!dst->select)
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "policy ops '%s': select is REQUIRED",
                      dst->name ? dst->name : "?");
  /* (VKDS_REPORT_UNUSED, which vkds sends itself, or an unknown bit read as a report no
   * backend gives: UNSUPPORTED with an empty list; a policies probe) */
  const uint32_t askable = VKDS_REPORT_SUBMISSION | VKDS_REPORT_COMPLETION | VKDS_REPORT_TIME;
  if (dst->reports & ~askable)
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "policy ops '%s': report bits 0x%x are not ones a policy asks for (SUBMISSION, COMPLETION and "
                      "TIME are; UNUSED comes to a policy's own report slot unasked)",
                      dst->name ? dst->name : "?", dst->reports & ~askable);
  if (dst->policy_size < sizeof(vkds_policy))
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "policy ops: policy_size too small");
  /* A built-in parent's state is private: a derived struct's fields would lie on it (a
   * probe: 48 bytes given, auto tune's and earliest finish's init and select wrote past
   * them). Such a table keeps the parent's size; its own state goes behind info->user. */
  if (private_state && given->policy_size && given->policy_size != private_state->policy_size)
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "policy ops '%s': derived from '%s', whose state is private: leave policy_size 0 (the parent's) "
                      "and keep your own state behind vkds_policy_info.user",
                      dst->name ? dst->name : "?", private_state->name);
  /* a table derived from the application's own must hold its parents' state */
  if (dst->policy_size < ancestors_size)
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "policy ops '%s': policy_size %zu is smaller than a parent's (%zu)", dst->name ? dst->name : "?",
                      dst->policy_size, ancestors_size);
  return VKDS_SUCCESS;
}

static const vkds_policy_ops *ops_for_kind(vkds_policy_kind kind) {
  switch (kind) {
  case VKDS_POLICY_DEFAULT:
  case VKDS_POLICY_DYNAMIC_LOAD: return &vkds_policy_dynamic_load_ops;
  case VKDS_POLICY_FIXED: return &vkds_policy_fixed_ops;
  case VKDS_POLICY_ROUND_ROBIN: return &vkds_policy_round_robin_ops;
  case VKDS_POLICY_AUTO_TUNE: return &vkds_policy_auto_tune_ops;
  case VKDS_POLICY_EARLIEST_FINISH: return &vkds_policy_earliest_finish_ops;
  }
  return NULL;
}

/* ---- key statistics ---- */

vkds__key_stats *vkds__key_stats_find(const vkds_context *ctx, vkds__resource_stats *s, uint64_t key, bool create) {
  if (s->key_cap) {
    uint64_t h = key * 0x9e3779b97f4a7c15ull;
    for (uint32_t i = 0, at = (uint32_t)(h >> 32) & (s->key_cap - 1); i < s->key_cap; ++i, at = (at + 1) & (s->key_cap - 1)) {
      if (!s->keys[at].used) break;
      if (s->keys[at].key == key) return &s->keys[at];
    }
  }
  if (!create) return NULL;
  if ((s->key_count + 1) * 2 > s->key_cap) { /* grow: keep the load at most one half */
    uint32_t cap = s->key_cap ? s->key_cap * 2 : 8;
    vkds__key_stats *old = s->keys, *grown = vkds__alloc_array(ctx, cap, sizeof *grown);
    if (!grown) return NULL;
    uint32_t old_cap = s->key_cap;
    s->keys = grown, s->key_cap = cap, s->key_count = 0;
    for (uint32_t i = 0; i < old_cap; ++i)
      if (old[i].used) *vkds__key_stats_find(ctx, s, old[i].key, true) = old[i], ++s->key_count;
    vkds__free(ctx, old);
  }
  uint64_t h = key * 0x9e3779b97f4a7c15ull;
  uint32_t at = (uint32_t)(h >> 32) & (s->key_cap - 1);
  while (s->keys[at].used) at = (at + 1) & (s->key_cap - 1);
  s->keys[at] = (vkds__key_stats){.key = key, .used = true};
  ++s->key_count;
  return &s->keys[at];
}

uint32_t vkds__policy_device_of(const vkds_policy *p, uint32_t i) { return vkds__backend_device_of(p->backend, i); }

uint32_t vkds__policy_hardware_of(const vkds_policy *p, uint32_t i) {
  if (p->backend->kind != &vkds_resource_kind_vulkan) return i;
  const vkds_resource *ri = p->backend->resources[i];
  for (uint32_t j = 0; j < i; ++j) {
    const vkds_resource *rj = p->backend->resources[j];
    if (memcmp(rj->dev->facts.props11.deviceUUID, ri->dev->facts.props11.deviceUUID, VK_UUID_SIZE) == 0) return j;
  }
  return i;
}

/* ---- reports ---- */

/* One task fewer in flight on s; false (nothing changed) when none is: a backend that
 * reports a completion twice wrapped the count into the selections' bits, and the
 * policy refused every later task (a probe). */
static bool one_fewer_in_flight(vkds__resource_stats *s) {
  for (uint64_t w = atomic_load_explicit(&s->picks, memory_order_relaxed); w & VKDS__IN_FLIGHT_MASK;)
    if (atomic_compare_exchange_weak_explicit(&s->picks, &w, w - 1, memory_order_relaxed, memory_order_relaxed))
      return true;
  return false;
}

static void on_report(void *user, const vkds_report *r) {
  vkds_policy *p = user;
  vkds__policy_internal *in = vkds__policy_in(p);
  if (r->resource_index >= p->resource_count) return; /* (not one of this policy's: a backend's error) */
  vkds__resource_stats *s = &in->stats[r->resource_index];
  if ((r->what == VKDS_REPORT_COMPLETION || r->what == VKDS_REPORT_UNUSED) && in->tracks_completion &&
      !one_fewer_in_flight(s)) {
    vkds__log(p->backend->context, VKDS_LOG_ERROR, "policy '%s': resource %u reported %s with no task in flight "
              "(ignored; its backend reports a task more than once?)", p->ops->name, r->resource_index,
              r->what == VKDS_REPORT_COMPLETION ? "a completion" : "an unused selection");
    return;
  }
  if (r->what == VKDS_REPORT_COMPLETION && in->tracks_completion) {
    atomic_fetch_add_explicit(&s->completed, 1, memory_order_relaxed);
    if (in->info.task_deadline_ns) atomic_store_explicit(&s->progress_ns, vkds__now_ns(), memory_order_relaxed);
  } else if (r->what == VKDS_REPORT_TIME) {
    pthread_mutex_lock(&s->lock);
    vkds__key_stats *k = vkds__key_stats_find(in->alloc_ctx, s, r->key, true);
    if (k && k->warmups == 0) {
      k->warmups = 1; /* first run of a key on a resource: pipeline creation, cold caches */
    } else if (k) {
      ++k->samples;
      k->mean_ns += ((double)r->value_ns - k->mean_ns) / (double)k->samples;
      if (k->samples == 1 || r->value_ns < k->best_ns) k->best_ns = r->value_ns;
    }
    pthread_mutex_unlock(&s->lock);
  }
  p->ops->report(p, r);
}

/* ---- creation ---- */

static vkds_result make_backend(vkds_policy *p, const vkds_policy_resources *res) {
  vkds__policy_internal *in = vkds__policy_in(p);
  const vkds_context *ctx = res->context;
  vkds_backend_info bi = {.kind = res->kind, .resource_count = res->resource_count, .resources = res->resources,
                          .context = res->context, .ops = res->backend_ops, .user = in->info.user};
  vkds_backend *b;
  VKDS_CHECK(vkds_backend_create(&bi, &b));
  /* drop the resources that cannot report what the policy needs */
  uint32_t keep = 0;
  for (uint32_t i = 0; i < b->resource_count; ++i) keep += vkds_backend_supports(b, i, in->reports) == in->reports;
  if (keep == 0) {
    vkds_backend_destroy(b);
    uint32_t want = in->reports, own = p->ops->reports;
    /* why it needs them: its kind, or the settings that count tasks in flight */
    const vkds_policy_info *pi = &in->info;
    bool settings = (want & ~own & VKDS_REPORT_COMPLETION) != 0;
    const char *why = !settings           ? "by its kind (round_robin and fixed need none)"
                      : pi->capacity      ? "for its capacity"
                      : pi->task_deadline_ns ? "for its task_deadline_ns"
                                          : "for track_completion";
    return vkds__fail(ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS,
                      "policy '%s' needs reports of%s%s%s %s, which no resource's backend gives (the base backend "
                      "reports submissions only; task times need GPU timestamps)",
                      p->ops->name, want & VKDS_REPORT_SUBMISSION ? " submission" : "",
                      want & VKDS_REPORT_COMPLETION ? " completion" : "",
                      want & VKDS_REPORT_TIME ? (want & VKDS_REPORT_COMPLETION ? " and task time" : " task time") : "",
                      why);
  }
  /* A fixed policy's index names a resource of the caller's list: with some left out,
   * it is that resource's place among the kept ones, and that resource must be kept (it
   * ran on another resource, the kept list's index, before; a probe) */
  if (keep < b->resource_count && p->ops->select == vkds_policy_fixed_ops.select &&
      in->info.fixed_index < b->resource_count) {
    uint32_t f = in->info.fixed_index, at = 0;
    for (uint32_t i = 0; i < f; ++i) at += vkds_backend_supports(b, i, in->reports) == in->reports;
    if (vkds_backend_supports(b, f, in->reports) != in->reports) {
      vkds_backend_destroy(b);
      return vkds__fail(ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS,
                        "fixed policy: resource %u cannot report 0x%x, which the policy's settings need (capacity, "
                        "task_deadline_ns or track_completion)", f, in->reports);
    }
    in->info.fixed_index = at;
  }
  if (keep < b->resource_count) {
    void **kept = vkds__temp_alloc_array(vkds__backend_alloc_ctx(b), keep, sizeof *kept);
    if (!kept) {
      vkds_backend_destroy(b);
      return vkds__fail(ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "policy resources");
    }
    for (uint32_t i = 0, k = 0; i < b->resource_count; ++i)
      if (vkds_backend_supports(b, i, in->reports) == in->reports) kept[k++] = b->resources[i];
    vkds__log(ctx, VKDS_LOG_INFO, "policy '%s': %u of %u resources cannot report 0x%x and are left out",
              p->ops->name, b->resource_count - keep, b->resource_count, in->reports);
    bi.kind = b->kind;
    bi.resource_count = keep;
    bi.resources = kept;
    bi.context = b->context;
    const vkds_context *actx = vkds__backend_alloc_ctx(b);
    vkds_backend_destroy(b);
    vkds_result r = vkds_backend_create(&bi, &b);
    vkds__free(actx, kept);
    VKDS_CHECK(r);
  }
  p->backend = b;
  return VKDS_SUCCESS;
}

vkds_result vkds_policy_init(vkds_policy *p, const vkds_policy_resources *res) {
  if (!p || !res)
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "vkds_policy_init: NULL argument");
  vkds__policy_internal *in = vkds__policy_in(p);
  /* one init at a time: two threads initializing one deferred policy both succeeded,
   * each making a backend, one leaked (a concurrency probe) */
  bool unclaimed = false;
  if (!atomic_compare_exchange_strong(&in->init_claimed, &unclaimed, true))
    return vkds__fail_info(res->context, VKDS_ERROR_ALREADY_INITIALIZED,
                           "vkds_policy_init: policy '%s' is already initialized (or being initialized by "
                           "another thread)", p->ops->name);
  in->info.resources = *res;
  const char *outer = vkds__call_begin("vkds_policy_init"); /* its resources' errors name the call made */
  vkds_result made = make_backend(p, res);
  vkds__call_end(outer);
  if (made != VKDS_SUCCESS) {
    atomic_store(&in->init_claimed, false); /* (a later init may try again) */
    return made;
  }
  p->resource_count = p->backend->resource_count;
  vkds_result r = VKDS_SUCCESS;
  in->scratch = p->backend->ops->scratch_size(p->backend, in->reports);
  if (in->reports & (VKDS_REPORT_COMPLETION | VKDS_REPORT_TIME)) in->lazy_report = p->backend->ops->lazy_report;
  in->sink = (vkds_report_sink){on_report, p};
  /* An unused selection is worth a report only where select counted something. */
  in->selection_reports = in->reports;
  if (in->tracks_completion || p->ops->report != vkds__policy_base_report) in->selection_reports |= VKDS_REPORT_UNUSED;
  /* from here on the policy's memory comes from its backend's context (a deferred policy
   * made without one learns it only now) */
  in->alloc_ctx = vkds__backend_alloc_ctx(p->backend);
  in->recycle = !in->scratch && !vkds__vk_allocator(in->alloc_ctx);
  in->stats = vkds__alloc_aligned(in->alloc_ctx, (size_t)p->resource_count * sizeof *in->stats,
                                  alignof(vkds__resource_stats));
  if (in->stats) memset(in->stats, 0, p->resource_count * sizeof *in->stats);
  if (!in->stats) r = vkds__fail(res->context, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "policy statistics");
  if (r == VKDS_SUCCESS) {
    in->device_bits = 0; /* (an init may follow a failed one) */
    for (uint32_t i = 0; i < p->resource_count; ++i) {
      pthread_mutex_init(&in->stats[i].lock, NULL);
      in->stats[i].device_bit = vkds__device_bit(vkds__policy_device_of(p, i));
      in->device_bits |= in->stats[i].device_bit;
    }
    uint64_t failures = vkds__failures();
    r = p->ops->init(p);
    if (r != VKDS_SUCCESS) {
      for (uint32_t i = 0; i < p->resource_count; ++i) pthread_mutex_destroy(&in->stats[i].lock);
      /* a policy's init that said nothing left an earlier, unrelated message (a probe) */
      r = vkds__fail_if_silent(res->context, r, failures, "policy '%s': its init returned %s", p->ops->name,
                               vkds_result_str(r));
    }
  }
  if (r != VKDS_SUCCESS) {
    vkds__free(in->alloc_ctx, in->stats);
    in->stats = NULL;
    /* the backend's teardown may fail in turn (a kind that cannot wait): the message the
     * caller reads stays this failure's (it named the teardown's; a probe) */
    char why[512];
    snprintf(why, sizeof why, "%s", vkds__last_reason(r));
    uint64_t failures = vkds__failures();
    bool held = vkds__hold_failure_logs(true);
    vkds_backend_destroy(p->backend);
    vkds__hold_failure_logs(held);
    if (vkds__failures() != failures) vkds__fail(NULL, r, VK_SUCCESS, "%s", why);
    p->backend = NULL;
    p->resource_count = 0;
    atomic_store(&in->init_claimed, false);
    return r;
  }
  /* the backend's context, unless the policy holds it already as its creation's */
  vkds_context *bctx = vkds__backend_held_context(p->backend);
  if (bctx && bctx != in->own_held) vkds__context_hold(in->held = bctx);
  atomic_store(&in->initialized, true);
  return VKDS_SUCCESS;
}

/* The context whose allocator a policy's own struct comes from: its resources' (given,
 * or of the first Vulkan resource), also when deferred; none (malloc) for a user's
 * resources without a context or a deferred policy given none. */
static const vkds_context *creation_ctx(const vkds_policy_resources *res) {
  if (res->context) return res->context;
  if ((!res->kind || res->kind == &vkds_resource_kind_vulkan) && res->resources && res->resource_count &&
      res->resources[0])
    return vkds_resource_context(res->resources[0]);
  return NULL;
}

vkds_result vkds_policy_create(const vkds_policy_info *info, vkds_policy **out) {
  if (out) *out = NULL;
  if (!info || !out)
    return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "vkds_policy_create: NULL argument");
  /* (NaN and negative rates were taken as the default, infinity made every transfer
   * free: none said so; a new-user probe) */
  double rate = info->transfer_bytes_per_s;
  if (!(rate == 0 || (rate > 0 && isfinite(rate))))
    return vkds__fail(info->resources.context, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "vkds_policy_create: transfer_bytes_per_s %g: 0 (the default, 10e9) or a finite positive "
                      "rate in bytes per second", rate);
  const vkds_policy_ops *given = info->ops ? info->ops : ops_for_kind(info->kind);
  if (!given)
    return vkds__fail(info->resources.context, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "vkds_policy_create: unknown policy kind %d", (int)info->kind);
  const vkds_context *own = creation_ctx(&info->resources);
  vkds__policy_internal *in = vkds__alloc(own, sizeof *in);
  /* (through the context's logger, as the later failures: a probe saw these unlogged) */
  if (!in) return vkds__fail(own, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "vkds_policy_create: policy");
  in->own_ctx = in->alloc_ctx = own;
  /* (named by the call and logged: it said only "policy ops version 3: ...", unlogged; an
   * embedding probe) */
  vkds_result r = vkds__fail_as(own, "vkds_policy_create", complete_ops(given, &in->ops));
  vkds_policy *p = r == VKDS_SUCCESS ? vkds__alloc(own, in->ops.policy_size) : NULL;
  if (r == VKDS_SUCCESS && !p) r = vkds__fail(own, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "vkds_policy_create: policy");
  if (r != VKDS_SUCCESS) {
    vkds__free(own, in);
    return r;
  }
  in->info = *info;
  atomic_init(&in->refs, 1);
  in->reports = in->ops.reports; /* its own, and its inherited select's (complete_ops) */
  /* a select that counts its picks in flight needs the completions that count them out
   * (without, a probe's custom policy saw its counts only grow, and would have refused
   * every task at the count's limit) */
  if (info->capacity || info->track_completion || info->task_deadline_ns || in->ops.select_counts_in_flight)
    in->reports |= VKDS_REPORT_COMPLETION;
  in->tracks_completion = in->reports & VKDS_REPORT_COMPLETION;
  p->ops = &in->ops;
  p->info = &in->info;
  p->internal = in;
  /* its memory comes from `own`'s allocator: held until it is freed, also while it is
   * deferred and not yet initialized (destroying the context then freed it under the
   * policy; a lifetimes probe) */
  in->own_held = (vkds_context *)own;
  if (own) vkds__context_hold(in->own_held);
  if (!info->deferred) {
    const char *outer = vkds__call_begin("vkds_policy_create"); /* (names the resources' errors) */
    r = vkds_policy_init(p, &info->resources);
    vkds__call_end(outer);
    if (r != VKDS_SUCCESS) {
      vkds__free(own, p);
      vkds__free(own, in);
      if (own) vkds__context_let_go((vkds_context *)own);
      return r;
    }
  }
  *out = p;
  return VKDS_SUCCESS;
}

vkds_policy *vkds_policy_retain(vkds_policy *p) {
  if (p) atomic_fetch_add_explicit(&vkds__policy_in(p)->refs, 1, memory_order_relaxed);
  return p;
}

static void destroy_policy(void *arg);

void vkds_policy_release(vkds_policy *p) {
  if (!p) return;
  vkds__policy_internal *in = vkds__policy_in(p);
  if (atomic_fetch_sub_explicit(&in->refs, 1, memory_order_acq_rel) != 1) return;
  /* submissions not yet released still report to it and wait through its backend: the
   * last one's release destroys it (and lets go of the contexts then) */
  if (p->backend && vkds__backend_defer(p->backend, destroy_policy, p)) return;
  destroy_policy(p);
}

/* Lets go of the contexts the policy holds (its creation's and its backend's). */
static void let_go_contexts(vkds_context *own, vkds_context *held) {
  if (own) vkds__context_let_go(own);
  if (held) vkds__context_let_go(held);
}

static void destroy_policy(void *arg) {
  vkds_policy *p = arg;
  vkds__policy_internal *in = vkds__policy_in(p);
  if (p->backend) {
    /* every report delivered before the state goes; work that never ends keeps it */
    if (vkds_backend_wait_all(p->backend, vkds__destroy_timeout(p->backend->context)) == VKDS_ERROR_TIMEOUT) {
      vkds__log(p->backend->context, VKDS_LOG_ERROR,
                "vkds_policy_release: policy '%s' still has work in flight after the destroy timeout; it is left "
                "allocated (its tasks still report to it)", p->ops->name);
      vkds__abandon(p);
      /* left, not alive: the context's own destroy meets the same work and leaves itself
       * allocated too, rather than waiting for a release that will not come */
      vkds__backend_abandon_context(p->backend);
      let_go_contexts(in->own_held, in->held);
      in->own_held = in->held = NULL;
      return;
    }
    p->ops->destroy(p);
    vkds_backend_destroy(p->backend);
  }
  for (uint32_t i = 0; in->stats && i < p->resource_count; ++i) {
    pthread_mutex_destroy(&in->stats[i].lock);
    vkds__free(in->alloc_ctx, in->stats[i].keys);
  }
  vkds__free(in->alloc_ctx, in->stats);
  const vkds_context *own = in->own_ctx;
  vkds_context *own_held = in->own_held, *held = in->held;
  vkds__free(own, in);
  vkds__free(own, p);
  let_go_contexts(own_held, held); /* last: it may destroy the context */
}

/* ---- selecting and submitting ---- */

static vkds_result require_initialized(const vkds_policy *p, const char *what) {
  if (!p) return vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: NULL policy", what);
  if (!atomic_load(&vkds__policy_in(p)->initialized))
    return vkds__fail(NULL, VKDS_ERROR_NOT_INITIALIZED, VK_SUCCESS,
                      "%s: policy '%s' was created deferred and is not initialized yet", what, p->ops->name);
  return VKDS_SUCCESS;
}

/* Both refuse a policy that is NULL, not yet initialized or without that resource (a
 * policy writer's mistake must not crash the application): 0 in flight, nothing counted. */
/* (the initialized flag, set last by init, not the statistics pointer: reading that while
 * another thread initialized the policy was a data race, TSan; a probe) */
static bool has_resource(const vkds_policy *p, uint32_t index) {
  return p && p->internal && vkds_policy_initialized(p) && index < p->resource_count;
}

bool vkds_policy_count_in_flight(vkds_policy *p, uint32_t index, uint64_t expected) {
  if (!has_resource(p, index)) return false;
  /* at the capacity no more is counted: a select that counts its own picks keeps the
   * limit too (a probe's custom policy ran 3 in flight at capacity 1) */
  for (uint64_t w = vkds__picks(p, index); (w & VKDS__IN_FLIGHT_MASK) == expected && expected < vkds__in_flight_limit(p);) {
    /* only the in-flight count decides; a change in the selection count is retried */
    if (atomic_compare_exchange_weak(&vkds__policy_in(p)->stats[index].picks, &w, w + VKDS__ONE_PICK)) return true;
  }
  return false;
}

uint64_t vkds_policy_in_flight(const vkds_policy *p, uint32_t index) {
  if (!has_resource(p, index)) return 0;
  return vkds__picks(p, index) & VKDS__IN_FLIGHT_MASK;
}

/* Counts a pick of resource s in both counts unless the policy's select did: a
 * selection always, and a task in flight when completions are tracked (where the
 * capacity applies). */
static vkds_result count_pick(const vkds_policy *p, vkds__policy_internal *in, vkds__resource_stats *s) {
  if (p->ops->select_counts_in_flight) return VKDS_SUCCESS;
  if (in->tracks_completion) {
    const uint64_t limit = vkds__in_flight_limit(p);
    for (uint64_t w = atomic_load_explicit(&s->picks, memory_order_relaxed);;) {
      if ((w & VKDS__IN_FLIGHT_MASK) >= limit) return VKDS_ERROR_WOULD_BLOCK;
      if (atomic_compare_exchange_weak_explicit(&s->picks, &w, w + VKDS__ONE_PICK, memory_order_relaxed,
                                                memory_order_relaxed))
        return VKDS_SUCCESS;
    }
  }
  if (!p->ops->selections) atomic_fetch_add_explicit(&s->picks, VKDS__ONE_SELECTION, memory_order_relaxed);
  return VKDS_SUCCESS;
}

/* ---- health (vkds_resource_health) ---- */

static void set_health(vkds_policy *p, uint32_t i, vkds_resource_health h, const char *why) {
  vkds__resource_stats *s = &vkds__policy_in(p)->stats[i];
  uint32_t was = atomic_exchange(&s->health, (uint32_t)h);
  if (was == (uint32_t)h) return;
  vkds__log(p->backend->context, h == VKDS_RESOURCE_HEALTHY ? VKDS_LOG_INFO : VKDS_LOG_WARN,
            "policy '%s': resource %u is %s (%s)", p->ops->name, i,
            h == VKDS_RESOURCE_HEALTHY ? "healthy again" : h == VKDS_RESOURCE_STALLED ? "unhealthy" : "lost", why);
}

/* Whether resource i has work on its queue that has not finished. Only a Vulkan
 * resource can say; others count as having some. A policy's in-flight count also holds
 * picks not yet submitted (an algorithm call compiling its kernel on first use, an
 * application holding a vkds_select): those are no stalled task, and the deadline's
 * clock starts again when the queue has nothing unfinished (a threads probe: a first
 * copy_if's 5 s compile under a 0.1 s deadline took both resources out of service). */
static bool queue_has_unfinished_work(const vkds_policy *p, uint32_t i) {
  if (p->backend->kind != &vkds_resource_kind_vulkan) return true;
  vkds_resource *r = p->backend->resources[i];
  /* (assigned: values given to submits, deferred ones and self-submitting tasks too) */
  uint64_t last = atomic_load_explicit(&r->assigned, memory_order_relaxed);
  return last && vkds__queue_poll(r, last) != VKDS_SUCCESS; /* (an error: let the device's loss say) */
}

/* Before a selection: resources of a device the context lost since the last look are
 * lost; with a task deadline, a busy resource without a finished task for that long is
 * stalled, and a stalled one with nothing left in flight is healthy again. Costs one
 * atomic load without a deadline and no lost device. */
static void check_health(vkds_policy *p, vkds__policy_internal *in) {
  const vkds_context *ctx = p->backend->context;
  bool check_lost = false;
  if (ctx && p->backend->kind == &vkds_resource_kind_vulkan) {
    unsigned lost = atomic_load_explicit(&ctx->lost_devices, memory_order_relaxed);
    check_lost = lost != atomic_load_explicit(&in->lost_seen, memory_order_relaxed);
    if (check_lost) atomic_store(&in->lost_seen, lost);
  }
  const uint64_t deadline = in->info.task_deadline_ns;
  if (!check_lost && !deadline) return;
  const uint64_t now = deadline ? vkds__now_ns() : 0;
  for (uint32_t i = 0; i < p->resource_count; ++i) {
    vkds__resource_stats *s = &in->stats[i];
    uint32_t health = atomic_load(&s->health);
    if (health == VKDS_RESOURCE_LOST) continue;
    if (check_lost && atomic_load(&((vkds_resource *)p->backend->resources[i])->dev->lost)) {
      set_health(p, i, VKDS_RESOURCE_LOST, "its device was lost");
      continue;
    }
    if (!deadline) continue;
    if ((atomic_load(&s->picks) & VKDS__IN_FLIGHT_MASK) == 0) { /* idle: the clock starts at its next task */
      atomic_store(&s->progress_ns, now);
      if (health == VKDS_RESOURCE_STALLED) set_health(p, i, VKDS_RESOURCE_HEALTHY, "its work drained");
      continue;
    }
    uint64_t since = atomic_load(&s->progress_ns);
    if (health == VKDS_RESOURCE_HEALTHY && now > since && now - since > deadline) {
      if (queue_has_unfinished_work(p, i))
        set_health(p, i, VKDS_RESOURCE_STALLED, "no task finished within the policy's task deadline");
      else /* only picks not yet submitted: nothing is late */
        atomic_store(&s->progress_ns, now);
    }
  }
}

vkds_result vkds__none_usable(const vkds_policy *p, const vkds_task_info *hints) {
  for (uint32_t i = 0; i < p->resource_count; ++i)
    if (vkds__allowed(p, hints, i) && atomic_load(&vkds__policy_in(p)->stats[i].health) != VKDS_RESOURCE_LOST)
      return VKDS_ERROR_WOULD_BLOCK;
  return vkds__fail(p->backend->context, VKDS_ERROR_DEVICE_LOST, VK_ERROR_DEVICE_LOST, "policy '%s': every resource%s is lost",
                    p->ops->name, hints->only_devices ? " of the task's devices" : "");
}

vkds_resource_health vkds_policy_resource_health(const vkds_policy *p, uint32_t index) {
  if (!has_resource(p, index)) return VKDS_RESOURCE_LOST;
  return (vkds_resource_health)atomic_load(&vkds__policy_in(p)->stats[index].health);
}

/* Whether this selection has the backend deliver its due reports first: when the policy
 * needs them and no selection did in the context's lazy_report_ns (lib/core/context.c
 * says why; a backend without a context: every time). One of the threads selecting at
 * once takes the turn; the others select on what it delivers. */
static bool lazy_report_due(const vkds_policy *p, vkds__policy_internal *in) {
  if (!in->lazy_report) return false;
  const vkds_context *ctx = p->backend->context;
  if (!ctx || !ctx->lazy_report_ns) return true;
  uint64_t now = vkds__now_ns(), last = atomic_load_explicit(&in->reported_ns, memory_order_relaxed);
  if (last > now || now - last < ctx->lazy_report_ns) return false; /* (last > now: another thread just did) */
  return atomic_compare_exchange_strong_explicit(&in->reported_ns, &last, now, memory_order_relaxed,
                                                 memory_order_relaxed);
}

void vkds__pick_untimed(void) { vkds__thread.pick_untimed = true; }

/* The hot path of every policy, kept to: the policy's select, one atomic step to count
 * it (none for round robin), and the thread's recycled selection filled in place. */
vkds_result vkds_select(vkds_policy *p, const vkds_task_info *hints, vkds_selection **out) {
  if (out) *out = NULL;
  if (!p || !atomic_load_explicit(&vkds__policy_in(p)->initialized, memory_order_acquire))
    return require_initialized(p, "vkds_select");
  if (!out) return vkds__fail(p->backend->context, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "vkds_select: out is NULL");
  vkds__policy_internal *in = vkds__policy_in(p);
  static const vkds_task_info none = {0};
  if (!hints) hints = &none;
  if (hints->only_devices && !(hints->only_devices & in->device_bits))
    return vkds__fail(p->backend->context, VKDS_ERROR_WRONG_DEVICE, VK_SUCCESS,
                      "policy '%s' has no resource on the task's devices (only_devices 0x%x; vkds_launch sets it to "
                      "its buffers' device)",
                      p->ops->name, hints->only_devices);
  if (lazy_report_due(p, in)) in->lazy_report(p->backend); /* completions and times first: select on fresh facts */
  check_health(p, in);
  uint32_t index = UINT32_MAX;
  vkds__thread_state *here = &vkds__thread;
  here->pick_untimed = false;
  uint64_t failures = vkds__failures();
  vkds_result chosen = p->ops->select(p, hints, &index);
  if (chosen != VKDS_SUCCESS) {
    /* a select of the application's that failed without saying why (through vkds) left
     * the thread's last message to an earlier, unrelated failure (a probe) */
    if (chosen == VKDS_ERROR_WOULD_BLOCK) return chosen; /* (an answer, not a failure) */
    return vkds__fail_if_silent(p->backend->context, chosen, failures, "policy '%s': its select returned %s",
                                p->ops->name, vkds_result_str(chosen));
  }
  uint32_t reports = in->selection_reports;
  if (here->pick_untimed) reports &= ~(uint32_t)VKDS_REPORT_TIME, here->pick_untimed = false;
  if (index >= p->resource_count)
    return vkds__fail(p->backend->context, VKDS_ERROR_OUT_OF_RANGE, VK_SUCCESS,
                      "policy '%s' selected index %u of %u", p->ops->name, index, p->resource_count);
  vkds__resource_stats *s = &in->stats[index];
  /* If no selection comes of the pick, the policy's own count of it (earliest finish's
   * queued work) is given back as for a selection released unsubmitted. */
  const vkds_report unused = {.what = VKDS_REPORT_UNUSED, .resource_index = index, .key = hints->key};
  if (!vkds__allowed(p, hints, index)) { /* a select of the application's (or fixed) ignored only_devices */
    p->ops->report(p, &unused);
    return vkds__fail(p->backend->context, VKDS_ERROR_WRONG_DEVICE, VK_SUCCESS,
                      "policy '%s' picked resource %u (device %u), but the task runs only on devices of only_devices "
                      "0x%x (vkds_launch sets it to its buffers' device)",
                      p->ops->name, index, vkds__policy_device_of(p, index), hints->only_devices);
  }
  vkds_result r = count_pick(p, in, s);
  if (r != VKDS_SUCCESS) {
    p->ops->report(p, &unused); /* vkds counted nothing */
    return r;
  }
  vkds_selection *sel = in->recycle ? here->cached_selection : NULL;
  if (sel) { /* vkds__selection_make without the call */
    here->cached_selection = NULL;
    vkds__selection_init(sel, p->backend, index, reports, 0, &in->sink);
  } else {
    r = vkds__selection_make(p->backend, index, reports, in->scratch, &in->sink, &sel);
    if (r != VKDS_SUCCESS) {
      on_report(p, &unused); /* counted by vkds and the policy: both give it back */
      return r;
    }
  }
  sel->key = hints->key;
  atomic_init(&sel->state, VKDS__SEL_PICKED);
  *out = sel;
  return VKDS_SUCCESS;
}

/* Whether a waiting call, blocked since `start`, may try again (after a short nap: what
 * unblocks it needs the GPU or another thread, not this one); when submit_timeout_ns has
 * passed, *r becomes VKDS_ERROR_TIMEOUT with `blocked` in its message. */
static bool nap_or_time_out(vkds_policy *p, uint64_t start, const char *what, const char *blocked, vkds_result *r) {
  uint64_t limit = vkds__policy_in(p)->info.submit_timeout_ns ? vkds__policy_in(p)->info.submit_timeout_ns : 10000000000ull;
  if (vkds__now_ns() - start >= limit) {
    *r = vkds__fail(p->backend->context, VKDS_ERROR_TIMEOUT, VK_SUCCESS, "%s: %s for %llu ns", what, blocked,
                    (unsigned long long)limit);
    return false;
  }
  struct timespec nap = {0, 20000};
  nanosleep(&nap, NULL);
  return true;
}

vkds_result vkds__select_waiting(vkds_policy *p, const vkds_task_info *hints, vkds_selection **out, const char *what) {
  vkds_result r = vkds_select(p, hints, out);
  const char *blocked = hints && hints->only_devices
                          ? "every resource of the task's devices stayed at capacity or unhealthy"
                          : "every resource stayed at capacity or unhealthy";
  for (uint64_t start = vkds__now_ns(); r == VKDS_ERROR_WOULD_BLOCK && nap_or_time_out(p, start, what, blocked, &r);)
    r = vkds_select(p, hints, out);
  return r;
}

vkds_result vkds__submit_waiting(vkds_policy *p, vkds_selection *sel, const vkds_task_info *task, vkds_submission **out,
                                 const char *what) {
  /* A backend's submit that returns VKDS_ERROR_WOULD_BLOCK says that its resource cannot
   * take the task now, and that nothing ran (backend.h): the selection is still unused,
   * so the waiting forms give it the same time as a blocked selection. (Passed on at
   * once, a blocking algorithm returned "would block" with an earlier call's message.) */
  vkds_result r = vkds_selection_submit(sel, task, out);
  if (r != VKDS_ERROR_WOULD_BLOCK) return r; /* (the message below only when it is needed: the tiny tasks' path) */
  char blocked[96];
  snprintf(blocked, sizeof blocked, "backend '%s' kept answering that resource %u cannot take the task now",
           p->backend->ops->name ? p->backend->ops->name : "?", vkds_selection_index(sel));
  for (uint64_t start = vkds__now_ns(); r == VKDS_ERROR_WOULD_BLOCK && nap_or_time_out(p, start, what, blocked, &r);)
    r = vkds_selection_submit(sel, task, out);
  return r;
}

vkds_result vkds__policy_submitted(vkds_policy *p, vkds_selection *sel, vkds_result r) {
  /* Vulkan resources learn it from their device (check_health); other kinds, and a
   * backend's submit that says so of itself, from here (an algorithm's call did not: a
   * probe's backend kept a resource healthy through three, one vkds_submit marked it) */
  if (r == VKDS_ERROR_DEVICE_LOST)
    set_health(p, vkds_selection_index(sel), VKDS_RESOURCE_LOST, "a task returned VKDS_ERROR_DEVICE_LOST");
  return r;
}

/* Submits the task on a selection and releases it. */
static vkds_result submit_selected(vkds_policy *p, vkds_selection *sel, const vkds_task_info *task,
                                   vkds_submission **out, bool wait) {
  vkds_result r = vkds__policy_submitted(p, sel, wait ? vkds__submit_waiting(p, sel, task, out, "vkds_submit")
                                                      : vkds_selection_submit(sel, task, out));
  vkds_selection_release(sel); /* unsubmitted (an error), it gives its place back */
  return r;
}

/* (the policy's context hears it, as the algorithms' argument checks are heard, and the
 * message names the call that was made: vkds_try_submit's said vkds_submit, and neither
 * reached the logger; an embedding probe) */
static vkds_result check_task(const vkds_policy *p, const vkds_task_info *task, vkds_submission **out,
                              const char *what) {
  if (out) *out = NULL;
  if (!task || !task->fn) {
    const vkds_context *ctx = p && atomic_load(&vkds__policy_in(p)->initialized) ? p->backend->context : NULL;
    return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "%s: task and task->fn are required", what);
  }
  return VKDS_SUCCESS;
}

vkds_result vkds_try_submit(vkds_policy *p, const vkds_task_info *task, vkds_submission **out) {
  VKDS_CHECK(check_task(p, task, out, "vkds_try_submit"));
  vkds_selection *sel;
  VKDS_CHECK(vkds_select(p, task, &sel));
  return submit_selected(p, sel, task, out, false);
}

vkds_result vkds_submit(vkds_policy *p, const vkds_task_info *task, vkds_submission **out) {
  VKDS_CHECK(check_task(p, task, out, "vkds_submit"));
  vkds_selection *sel;
  VKDS_CHECK(vkds__select_waiting(p, task, &sel, "vkds_submit"));
  return submit_selected(p, sel, task, out, true);
}

vkds_result vkds_submit_and_wait(vkds_policy *p, const vkds_task_info *task) {
  vkds_submission *s;
  VKDS_CHECK(vkds_submit(p, task, &s));
  vkds_result r = vkds_submission_wait(s);
  vkds_submission_release(s);
  return r;
}

vkds_result vkds_policy_wait_all(vkds_policy *p, uint64_t timeout_ns) {
  VKDS_CHECK(require_initialized(p, "vkds_policy_wait_all"));
  const char *outer = vkds__call_begin("vkds_policy_wait_all"); /* (a timeout names the call) */
  vkds_result r = vkds_backend_wait_all(p->backend, timeout_ns);
  vkds__call_end(outer);
  return r;
}

/* ---- queries ---- */

const char *vkds_policy_name(const vkds_policy *p) { return p ? p->ops->name : ""; }
bool vkds_policy_initialized(const vkds_policy *p) { return p && atomic_load(&vkds__policy_in(p)->initialized); }
void *vkds_policy_resource(const vkds_policy *p, uint32_t i) {
  return vkds_policy_initialized(p) && i < p->resource_count ? p->backend->resources[i] : NULL;
}

vkds_result vkds_policy_get_resource_stats(const vkds_policy *p, uint32_t index, vkds_policy_resource_stats *out) {
  VKDS_CHECK(require_initialized(p, "vkds_policy_get_resource_stats"));
  if (!out || index >= p->resource_count)
    return out ? vkds__fail(NULL, VKDS_ERROR_OUT_OF_RANGE, VK_SUCCESS,
                            "vkds_policy_get_resource_stats: resource %u of the policy's %u", index, p->resource_count)
               : vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "vkds_policy_get_resource_stats: out is NULL");
  vkds__policy_internal *in = vkds__policy_in(p);
  vkds__resource_stats *s = &in->stats[index];
  uint64_t picks = atomic_load(&s->picks);
  *out = (vkds_policy_resource_stats){.selections = p->ops->selections ? p->ops->selections(p, index)
                                                                      : picks / VKDS__ONE_SELECTION,
                                      .tracks_completion = in->tracks_completion,
                                      .in_flight = in->tracks_completion ? picks & VKDS__IN_FLIGHT_MASK : 0,
                                      .completed = atomic_load(&s->completed),
                                      .health = (vkds_resource_health)atomic_load(&s->health)};
  return VKDS_SUCCESS;
}

void vkds__key_stats_forget(vkds_policy *p, uint64_t key) {
  vkds__policy_internal *in = vkds__policy_in(p);
  for (uint32_t i = 0; i < p->resource_count; ++i) {
    vkds__resource_stats *s = &in->stats[i];
    pthread_mutex_lock(&s->lock);
    vkds__key_stats *k = vkds__key_stats_find(in->alloc_ctx, s, key, false);
    if (k) k->samples = k->warmups = 0, k->mean_ns = 0.0, k->best_ns = 0;
    pthread_mutex_unlock(&s->lock);
  }
}

vkds_result vkds_policy_get_key_stats(const vkds_policy *p, uint32_t index, uint64_t key, vkds_policy_key_stats *out) {
  VKDS_CHECK(require_initialized(p, "vkds_policy_get_key_stats"));
  vkds__policy_internal *in = vkds__policy_in(p);
  if (!out || index >= p->resource_count)
    return out ? vkds__fail(NULL, VKDS_ERROR_OUT_OF_RANGE, VK_SUCCESS,
                            "vkds_policy_get_key_stats: resource %u of the policy's %u", index, p->resource_count)
               : vkds__fail(NULL, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "vkds_policy_get_key_stats: out is NULL");
  if (!(in->reports & VKDS_REPORT_TIME))
    return vkds__fail(NULL, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS, "policy '%s' does not measure task times", p->ops->name);
  vkds__resource_stats *s = &in->stats[index];
  pthread_mutex_lock(&s->lock);
  const vkds__key_stats *k = vkds__key_stats_find(in->alloc_ctx, s, key, false);
  *out = k ? (vkds_policy_key_stats){.samples = k->samples, .warmups = k->warmups, .mean_ns = k->mean_ns,
                                     .best_ns = k->best_ns}
           : (vkds_policy_key_stats){0};
  pthread_mutex_unlock(&s->lock);
  return VKDS_SUCCESS;
}

uint32_t vkds_policy_keys(const vkds_policy *p, uint64_t *keys, uint32_t cap) {
  if (!vkds_policy_initialized(p)) return 0;
  vkds__policy_internal *in = vkds__policy_in(p);
  /* the distinct keys of every resource's table */
  uint64_t *all = NULL;
  uint32_t n = 0, room = 0;
  for (uint32_t r = 0; r < p->resource_count; ++r) {
    vkds__resource_stats *s = &in->stats[r];
    pthread_mutex_lock(&s->lock);
    for (uint32_t i = 0; i < s->key_cap; ++i) {
      if (!s->keys[i].used) continue;
      bool seen = false;
      for (uint32_t j = 0; j < n && !seen; ++j) seen = all[j] == s->keys[i].key;
      if (seen) continue;
      if (n == room) {
        /* out of memory: the keys found so far (room stays what `all` holds) */
        uint32_t more = room ? room * 2 : 16;
        uint64_t *grown = vkds__realloc(in->alloc_ctx, all, more * sizeof *all);
        if (!grown) break;
        all = grown, room = more;
      }
      all[n++] = s->keys[i].key;
    }
    pthread_mutex_unlock(&s->lock);
  }
  for (uint32_t i = 0; i < n && i < cap && keys; ++i) keys[i] = all[i];
  vkds__free(in->alloc_ctx, all);
  return n;
}
