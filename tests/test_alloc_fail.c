/* tests/test_alloc_fail.c: a whole life cycle (context, policy, a GLSL kernel, buffers,
 * upload, launch, download, an algorithm with a GLSL operator, destroy) run once with
 * each of libvkds's host allocations failing in turn (tests/alloc_fail.cpp fails them:
 * vkds's own and those of glslang and SPIRV-Tools, linked into it). Every run must come
 * back (no crash, no abort: each run is a forked Check test) with success or a named
 * error, leave no block of libvkds's allocated (tests/alloc_fail.cpp keeps the count;
 * failures inside glslang and SPIRV-Tools excepted, below),
 * and a life cycle right after it, nothing failing, must succeed: a failure leaves
 * nothing behind that breaks the next one (glslang's global state included). The
 * process has run one life cycle before the numbering: glslang's one-time set-up is
 * done by then (its failures are not covered here).
 *
 * The sites are numbered by one counting run. VKDS_ALLOC_FAIL_STRIDE=k tests every k-th
 * (default: as many as fit 60 runs, about 25 s in CI's validation stage; 1: all of them,
 * a long run), from site VKDS_ALLOC_FAIL_FIRST (default: one that moves on each day, so
 * that CI's runs over time fail other sites than the same 60; the test prints it).
 *
 * A second sweep ("user_allocator") gives the context a VkAllocationCallbacks
 * (vkds_context_info.allocator) that fails its Nth call (allocation or reallocation) and
 * keeps every block it handed out (pointer and size): a free of an unknown pointer, a
 * double free, a reallocation of an unknown block, and any block still out once the
 * context is gone fail the run, whoever made the call (vkds, or the Vulkan loader, the
 * validation layer or lavapipe, since vkds passes the callbacks to Vulkan). Where the
 * failure leaves a context, it must still run a launch and a reduction afterwards.
 * Only vkds's own calls are numbered and failed: the loader's, the validation layer's and
 * lavapipe's go through the callbacks too (counted, their blocks tracked), but failing
 * them crashes or misleads those libraries (RELIABILITY.md has what; vkds cannot answer
 * for it). VKDS_USER_ALLOC_FAIL_ORIGIN=all numbers and fails every caller's calls (to
 * look at them), VKDS_USER_ALLOC_FAIL_STRIDE=k fails every k-th (default: as many as fit
 * 40 runs; 1: every one), VKDS_USER_ALLOC_FAIL_ONLY=n the one numbered n. Without libvkds.so
 * (a static build) or under a sanitizer (VKDS_ALLOC_FAIL_NO_INTERPOSE: tests/meson.build
 * builds this file without tests/alloc_fail.cpp there) only this sweep runs. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <pthread.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc_fail.h"
#include "harness.h"
#include "life_cycle.h"

#ifdef VKDS_ALLOC_FAIL_NO_INTERPOSE
/* no tests/alloc_fail.cpp: the malloc sweep is not built */
bool alloc_fail_ready(void) { return false; }
void alloc_fail_arm(long n) { (void)n; }
long alloc_fail_counted(void) { return 0; }
bool alloc_fail_fired(void) { return false; }
long alloc_fail_held(void) { return 0; }
#endif

enum { WHY = 600 };

static void sweep_log(void *user, vkds_log_level level, vkds_log_source source, const char *message);

/* The whole life cycle, the context made with `allocator`; returns its first error
 * (cleaning up what it made) and, in why[WHY] (when not NULL), its message. With
 * `after_failure` (then *usable is set): when a step after the context failed,
 * after_failure() stops the failures and the same context runs the steps again, which
 * must work. */
static vkds_result life_cycle_with(const VkAllocationCallbacks *allocator, bool *right, char *why,
                                   void (*after_failure)(void), bool *usable) {
  vkds_context *ctx = NULL;
  vkds_context_info info = life_cycle_info();
  info.allocator = allocator;
  if (allocator) info.log = sweep_log;
  *right = false;
  vkds_result r = vkds_context_create(&info, &ctx);
  if (r == VKDS_SUCCESS) r = life_cycle_steps(ctx, false, right);
  if (why) snprintf(why, WHY, "%s", r == VKDS_SUCCESS ? "" : vkds_last_error_message());
  if (after_failure) {
    *usable = true;
    if (r != VKDS_SUCCESS && ctx) {
      after_failure();
      bool again = false;
      *usable = life_cycle_steps(ctx, false, &again) == VKDS_SUCCESS && again;
    }
  }
  vkds_context_destroy(ctx);
  return r;
}

static vkds_result plain_life_cycle(bool *right) { return life_cycle_with(NULL, right, NULL, NULL, NULL); }

static long sites;  /* allocations of one life cycle (the counting run in main) */
static long stride; /* every stride-th site is failed, */
static long first_site; /* from this one */

START_TEST(each_allocation_fails) {
  long n = first_site + (long)_i * stride;
  long held = alloc_fail_held();
  alloc_fail_arm(n);
  bool right;
  vkds_result r = plain_life_cycle(&right);
  bool fired = alloc_fail_fired();
  alloc_fail_arm(-1);
  /* glslang and SPIRV-Tools (Debian's) are built without exception support: a
   * std::bad_alloc thrown inside them unwinds through their frames without running
   * their destructors, so what they held then stays allocated (RELIABILITY.md has how
   * much). Everywhere else a failure must free everything. */
  char why[300];
  snprintf(why, sizeof why, "%s", r == VKDS_SUCCESS ? "" : vkds_last_error_message());
  bool theirs = strstr(why, "glslang ran out of memory") || strstr(why, "SPIRV-Tools ran out of memory");
  ck_assert_msg(theirs || alloc_fail_held() == held, "allocation %ld failed (%s): libvkds holds %ld blocks more", n,
                why, alloc_fail_held() - held);
  ck_assert_msg(r != VKDS_SUCCESS || right, "allocation %ld failed, the life cycle succeeded with wrong results", n);
  if (r != VKDS_SUCCESS) {
    ck_assert_msg(strcmp(vkds_result_str(r), "unknown result") != 0, "allocation %ld: result %d", n, (int)r);
    ck_assert_msg(vkds_last_error_message()[0] != '\0', "allocation %ld: %s without a message", n, vkds_result_str(r));
    ck_assert_msg(fired, "allocation %ld: %s, but no allocation failed", n, vkds_result_str(r));
  }
  /* and then, nothing failing, the life cycle works again */
  ck_assert_msg(plain_life_cycle(&right) == VKDS_SUCCESS && right, "after allocation %ld failed, a life cycle fails: %s", n,
                vkds_last_error_message());
}
END_TEST

/* ---- the user's allocator ---------------------------------------------------------- */

/* Who called the callbacks: the function's return address, by library. */
enum { FROM_VKDS, FROM_LOADER, FROM_LAYER, FROM_LAVAPIPE, FROM_DRIVER, FROM_OTHER, ORIGINS };
static const char *const origin_names[ORIGINS] = {"vkds", "the Vulkan loader", "the validation layer", "lavapipe",
                                                  "another driver", "another library"};

/* The live blocks: open addressing, linear probing, entries moved back on removal. */
enum { SLOTS = 1 << 18 };
typedef struct block {
  void *p;
  size_t size;
  int origin;
} block;

static struct {
  pthread_mutex_t lock;
  block live[SLOTS];
  long live_count;
  long calls;             /* allocations and reallocations numbered since user_arm */
  long by_origin[ORIGINS]; /* all of them, by caller */
  long live_by_origin[ORIGINS];
  long target;            /* the numbered call to fail; -1: none */
  bool vkds_only;         /* only vkds's own calls are numbered (and failed) */
  bool fired;
  int fired_origin;
  long bad_frees, bad_reallocs, bad_arguments, full;
  char first_bad[160];
} ua = {.lock = PTHREAD_MUTEX_INITIALIZER, .target = -1};

static int origin_of(const void *ret) {
  Dl_info info;
  if (!dladdr(ret, &info) || !info.dli_fname) return FROM_OTHER;
  const char *f = info.dli_fname;
  if (strstr(f, "libvkds")) return FROM_VKDS;
  if (strstr(f, "libvulkan.so")) return FROM_LOADER;
  if (strstr(f, "VkLayer")) return FROM_LAYER;
  if (strstr(f, "libvulkan_lvp")) return FROM_LAVAPIPE;
  if (strstr(f, "libvulkan_")) return FROM_DRIVER; /* the other drivers the loader opens (for the instance) */
  return FROM_OTHER;
}

static size_t slot_of(const void *p) { return (size_t)(((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ull >> 46) & (SLOTS - 1); }

static void note_bad(long *counter, const char *what, const void *p, int origin) {
  if ((*counter)++ == 0 && !ua.first_bad[0])
    snprintf(ua.first_bad, sizeof ua.first_bad, "%s %p by %s", what, p, origin_names[origin]);
}

/* With the lock held. */
static void hold(void *p, size_t size, int origin) {
  if (ua.live_count >= SLOTS / 2) {
    ++ua.full;
    return;
  }
  size_t i = slot_of(p);
  while (ua.live[i].p) i = (i + 1) & (SLOTS - 1);
  ua.live[i] = (block){p, size, origin};
  ++ua.live_count;
  ++ua.live_by_origin[origin];
}

/* With the lock held: removes p, returning its entry (p NULL when unknown). */
static block unhold(const void *p) {
  size_t i = slot_of(p);
  while (ua.live[i].p && ua.live[i].p != p) i = (i + 1) & (SLOTS - 1);
  block b = ua.live[i];
  if (!b.p) return b;
  ua.live[i] = (block){0};
  --ua.live_count;
  --ua.live_by_origin[b.origin];
  for (size_t j = (i + 1) & (SLOTS - 1); ua.live[j].p; j = (j + 1) & (SLOTS - 1)) {
    block q = ua.live[j];
    ua.live[j] = (block){0};
    size_t k = slot_of(q.p);
    while (ua.live[k].p) k = (k + 1) & (SLOTS - 1);
    ua.live[k] = q;
  }
  return b;
}

/* Called when the armed call fails: a place for a debugger's breakpoint (gdb -ex 'break
 * user_allocation_fails_here' with VKDS_USER_ALLOC_FAIL_ONLY=n and CK_FORK=no). */
__attribute__((noinline)) void user_allocation_fails_here(void);
__attribute__((noinline)) void user_allocation_fails_here(void) { __asm__ volatile(""); }

/* With the lock held: counts a call; whether it must fail. */
static bool numbered_call_fails(int origin) {
  ++ua.by_origin[origin];
  if (ua.vkds_only && origin != FROM_VKDS) return false;
  if (ua.calls++ != ua.target) return false;
  user_allocation_fails_here();
  ua.fired = true;
  ua.fired_origin = origin;
  return true;
}

static bool valid_alignment(size_t a) { return a && !(a & (a - 1)); }

static void *aligned_block(size_t size, size_t alignment) {
  if (alignment < alignof(max_align_t)) alignment = alignof(max_align_t);
  return aligned_alloc(alignment, (size + alignment) / alignment * alignment); /* size 0 too */
}

static void *VKAPI_CALL ua_alloc_from(const void *ret, size_t size, size_t alignment, VkSystemAllocationScope scope) {
  int origin = origin_of(ret);
  pthread_mutex_lock(&ua.lock);
  void *p = NULL;
  /* size 0 is allowed (lavapipe asks for it while recording): a block of 1 byte */
  if (!valid_alignment(alignment) || (unsigned)scope > VK_SYSTEM_ALLOCATION_SCOPE_INSTANCE) {
    char what[100];
    snprintf(what, sizeof what, "an allocation of %zu bytes aligned to %zu in scope %d", size, alignment, (int)scope);
    note_bad(&ua.bad_arguments, what, NULL, origin);
  } else if (!numbered_call_fails(origin) && (p = aligned_block(size, alignment))) {
    hold(p, size, origin);
  }
  pthread_mutex_unlock(&ua.lock);
  return p;
}

static void *VKAPI_CALL ua_alloc(void *user, size_t size, size_t alignment, VkSystemAllocationScope scope) {
  (void)user;
  return ua_alloc_from(__builtin_return_address(0), size, alignment, scope);
}

static void ua_free_from(const void *ret, void *p) {
  if (!p) return;
  pthread_mutex_lock(&ua.lock);
  block b = unhold(p);
  if (!b.p) note_bad(&ua.bad_frees, "a free of an unknown block (or a double free)", p, origin_of(ret));
  pthread_mutex_unlock(&ua.lock);
  if (b.p) free(p); /* an unknown pointer is not ours to free */
}

static void VKAPI_CALL ua_free(void *user, void *p) {
  (void)user;
  ua_free_from(__builtin_return_address(0), p);
}

static void *VKAPI_CALL ua_realloc(void *user, void *original, size_t size, size_t alignment,
                                   VkSystemAllocationScope scope) {
  (void)user;
  const void *ret = __builtin_return_address(0);
  if (!original) return ua_alloc_from(ret, size, alignment, scope);
  if (size == 0) { /* Vulkan: behaves as pfnFree */
    ua_free_from(ret, original);
    return NULL;
  }
  int origin = origin_of(ret);
  pthread_mutex_lock(&ua.lock);
  size_t i = slot_of(original);
  while (ua.live[i].p && ua.live[i].p != original) i = (i + 1) & (SLOTS - 1);
  block old = ua.live[i];
  void *p = NULL;
  if (!old.p) {
    note_bad(&ua.bad_reallocs, "a reallocation of an unknown block", original, origin);
  } else if (!valid_alignment(alignment)) {
    note_bad(&ua.bad_arguments, "a reallocation with a bad alignment", original, origin);
  } else if (!numbered_call_fails(origin) && (p = aligned_block(size, alignment))) {
    memcpy(p, original, old.size < size ? old.size : size);
    unhold(original);
    hold(p, size, origin);
  }
  pthread_mutex_unlock(&ua.lock);
  if (p) free(original);
  return p;
}

/* The user allocator's runs log here: when the failed call was Vulkan's own (the loader's,
 * a driver's: VKDS_USER_ALLOC_FAIL_ORIGIN=all), its reports of it ("ran out of memory",
 * "VK_ERROR_OUT_OF_HOST_MEMORY") are expected and only counted; a validation error (a
 * VUID) never is, nor anything when vkds's own call failed. */
static long expected_messages;
static void sweep_log(void *user, vkds_log_level level, vkds_log_source source, const char *message) {
  pthread_mutex_lock(&ua.lock);
  bool theirs = ua.fired && ua.fired_origin != FROM_VKDS && source != VKDS_LOG_SOURCE_VKDS && !strstr(message, "VUID-");
  if (theirs) ++expected_messages;
  pthread_mutex_unlock(&ua.lock);
  if (!theirs) harness_log(user, level, source, message);
}

static const VkAllocationCallbacks user_allocator = {
    .pfnAllocation = ua_alloc, .pfnReallocation = ua_realloc, .pfnFree = ua_free};

/* From now on numbers the calls from 0 and fails the one numbered n (n < 0: none). */
static void user_arm(long n) {
  pthread_mutex_lock(&ua.lock);
  ua.calls = 0;
  memset(ua.by_origin, 0, sizeof ua.by_origin);
  ua.target = n;
  ua.fired = false;
  pthread_mutex_unlock(&ua.lock);
}
static void user_disarm(void) {
  pthread_mutex_lock(&ua.lock);
  ua.target = -1;
  pthread_mutex_unlock(&ua.lock);
}

/* Fails the test when a block is still out or a call was wrong. */
static void expect_all_back(const char *when) {
  pthread_mutex_lock(&ua.lock);
  long live = ua.live_count, bad = ua.bad_frees + ua.bad_reallocs + ua.bad_arguments;
  char whose[300] = "";
  for (int o = 0; o < ORIGINS; ++o)
    if (ua.live_by_origin[o])
      snprintf(whose + strlen(whose), sizeof whose - strlen(whose), " %ld of %s;", ua.live_by_origin[o], origin_names[o]);
  char first[160];
  snprintf(first, sizeof first, "%s", ua.first_bad);
  long full = ua.full;
  pthread_mutex_unlock(&ua.lock);
  ck_assert_msg(full == 0, "%s: the test's block table overflowed", when);
  ck_assert_msg(live == 0, "%s: %ld blocks of the user's allocator still out:%s", when, live, whose);
  ck_assert_msg(bad == 0, "%s: %ld wrong calls to the user's allocator; first: %s", when, bad, first);
}

static long user_sites;  /* numbered calls of one life cycle */
static long user_stride; /* every user_stride-th is failed */

START_TEST(each_user_allocation_fails) {
  long n = (long)_i * user_stride;
  user_arm(n);
  bool right, usable;
  char why[WHY];
  vkds_result r = life_cycle_with(&user_allocator, &right, why, user_disarm, &usable);
  pthread_mutex_lock(&ua.lock);
  bool fired = ua.fired;
  int origin = ua.fired_origin;
  pthread_mutex_unlock(&ua.lock);
  user_disarm();
  char when[80];
  snprintf(when, sizeof when, "call %ld failed (by %s)", n, fired ? origin_names[origin] : "nobody");
  if (getenv("VKDS_ALLOC_FAIL_VERBOSE")) fprintf(stderr, "%s: %s: %s\n", when, vkds_result_str(r), why);
  expect_all_back(when);
  ck_assert_msg(r != VKDS_SUCCESS || right, "%s: the life cycle succeeded with wrong results", when);
  if (r != VKDS_SUCCESS) {
    ck_assert_msg(strcmp(vkds_result_str(r), "unknown result") != 0, "%s: result %d", when, (int)r);
    ck_assert_msg(why[0] != '\0', "%s: %s without a message", when, vkds_result_str(r));
    ck_assert_msg(fired, "%s: %s (%s), but no allocation failed", when, vkds_result_str(r), why);
    /* vkds's own allocation failed: it says so (not "unsupported", not "out of device memory") */
    ck_assert_msg(origin != FROM_VKDS || r == VKDS_ERROR_OUT_OF_HOST_MEMORY, "%s: %s (%s)", when, vkds_result_str(r),
                  why);
  }
  ck_assert_msg(usable, "%s (%s: %s): the context no longer works: %s", when, vkds_result_str(r), why,
                vkds_last_error_message());
  /* and then, nothing failing, a whole life cycle works again */
  ck_assert_msg(life_cycle_with(&user_allocator, &right, NULL, NULL, NULL) == VKDS_SUCCESS && right,
                "%s: a life cycle after it fails: %s", when, vkds_last_error_message());
  expect_all_back(when);
}
END_TEST

/* A call that fails for want of host memory has written nothing: the submission the
 * caller gets is made before the work reaches the queue (it was made after, and an
 * in-place transform that returned OUT_OF_HOST_MEMORY had run: a retry applied it
 * twice; a limits probe). Every one of vkds's allocations in an in-place transform (its
 * kernel compiled, its policy new) fails once. */
START_TEST(a_call_that_fails_for_memory_writes_nothing) {
  vkds_context_info info = harness_info();
  info.allocator = &user_allocator;
  vkds_context *ctx;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  void *res[1] = {vkds_context_resource(ctx, 0)};
  const vkds_policy_info pi = {.kind = VKDS_POLICY_FIXED,
                               .resources = {.context = ctx, .resource_count = 1, .resources = res}};
  vkds_policy *pol;
  ck_assert_vkds(vkds_policy_create(&pi, &pol));
  vkds_buffer *b;
  ck_assert_vkds(vkds_buffer_create(res[0], &(vkds_buffer_info){.size = 4096, .memory = VKDS_MEMORY_MAPPED}, &b));
  uint32_t *m = vkds_buffer_map(b);
  vkds_seq s = vkds_seq_mapped(vkds_view_of(b), VKDS_U32);
  ck_assert_vkds(vkds_transform(pol, &s, &s, "x + 1u")); /* compiled once, before the sweep */
  bool swept = false;
  for (long n = 0; n < 1000 && !swept; ++n) {
    for (int i = 0; i < 1024; ++i) m[i] = 5;
    /* a new policy each time: its backend has no submission to reuse yet */
    vkds_policy_release(pol);
    ck_assert_vkds(vkds_policy_create(&pi, &pol));
    user_arm(n);
    vkds_result r = vkds_transform(pol, &s, &s, "x + 1u");
    pthread_mutex_lock(&ua.lock);
    bool fired = ua.fired;
    pthread_mutex_unlock(&ua.lock);
    user_disarm();
    swept = !fired;
    uint32_t want = r == VKDS_SUCCESS ? 6 : 5;
    for (int i = 0; i < 1024; ++i)
      ck_assert_msg(m[i] == want, "allocation %ld failed, the call returned %s, element %d is %u", n, vkds_result_str(r), i,
                    m[i]);
    ck_assert_msg(r == VKDS_SUCCESS || r == VKDS_ERROR_OUT_OF_HOST_MEMORY, "allocation %ld: %s", n, vkds_result_str(r));
  }
  ck_assert_msg(swept, "the call still made allocations after 1000");
  vkds_buffer_destroy(b);
  vkds_policy_release(pol);
  vkds_context_destroy(ctx);
  expect_all_back("after the sweep");
}
END_TEST

/* What one life cycle asks of the allocator, by caller: vkds's own and Vulkan's. */
START_TEST(user_allocator_sees_vkds_and_vulkan) {
  user_arm(-1);
  bool right;
  ck_assert_int_eq(life_cycle_with(&user_allocator, &right, NULL, NULL, NULL), VKDS_SUCCESS);
  ck_assert(right);
  expect_all_back("a life cycle");
  pthread_mutex_lock(&ua.lock);
  long vkds = ua.by_origin[FROM_VKDS], vulkan = ua.by_origin[FROM_LOADER] + ua.by_origin[FROM_LAYER] +
                                                ua.by_origin[FROM_LAVAPIPE] + ua.by_origin[FROM_DRIVER];
  pthread_mutex_unlock(&ua.lock);
  ck_assert_msg(vkds > 0, "vkds made no allocation through the user's allocator");
  ck_assert_msg(vulkan > 0, "Vulkan made no allocation through the user's allocator (pAllocator not passed?)");
}
END_TEST

/* The context itself comes from the allocator: a context alone holds blocks. */
START_TEST(user_allocator_holds_the_context) {
  user_arm(-1);
  vkds_context_info info = harness_info();
  info.allocator = &user_allocator;
  vkds_context *ctx;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  pthread_mutex_lock(&ua.lock);
  long vkds = ua.live_by_origin[FROM_VKDS];
  pthread_mutex_unlock(&ua.lock);
  ck_assert_msg(vkds > 0, "a live context holds no block of vkds's");
  vkds_context_destroy(ctx);
  expect_all_back("a context");
}
END_TEST

START_TEST(null_allocator_as_before) {
  user_arm(-1);
  bool right;
  ck_assert_int_eq(life_cycle_with(NULL, &right, NULL, NULL, NULL), VKDS_SUCCESS);
  ck_assert(right);
  pthread_mutex_lock(&ua.lock);
  long calls = ua.by_origin[FROM_VKDS] + ua.by_origin[FROM_LOADER] + ua.by_origin[FROM_LAYER] +
               ua.by_origin[FROM_LAVAPIPE] + ua.by_origin[FROM_DRIVER] + ua.by_origin[FROM_OTHER];
  pthread_mutex_unlock(&ua.lock);
  ck_assert_int_eq(calls, 0);
}
END_TEST

START_TEST(allocator_without_a_function_is_refused) {
  for (int missing = 0; missing < 4; ++missing) {
    VkAllocationCallbacks a = user_allocator;
    if (missing == 0) a.pfnAllocation = NULL;
    if (missing == 1) a.pfnReallocation = NULL;
    if (missing == 2) a.pfnFree = NULL;
    if (missing == 3) a.pfnInternalFree = NULL, a.pfnInternalAllocation = (PFN_vkInternalAllocationNotification)1;
    vkds_context_info info = harness_info();
    info.allocator = &a;
    vkds_context *ctx = (vkds_context *)&a;
    ck_assert_int_eq(vkds_context_create(&info, &ctx), VKDS_ERROR_INVALID_ARGUMENT);
    ck_assert_ptr_null(ctx);
    ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "allocator"));
  }
}
END_TEST

int main(void) {
  Suite *suite = suite_create("alloc_fail");
  bool right = false;
  /* (the malloc sweep numbers the sites of one process state, which each run must start
   * from: unforked, every run would start where the last one left off) */
  const char *fork_env = getenv("CK_FORK");
  bool unforked = fork_env && strcmp(fork_env, "no") == 0;
  if (alloc_fail_ready() && unforked)
    fprintf(stderr, "test_alloc_fail: CK_FORK=no: the malloc sweep needs a forked run each, and is left out\n");
  if (alloc_fail_ready() && !unforked) {
    /* two life cycles, nothing failing: the first does glslang's process set-up (which
     * stays), the second is counted */
    for (int run = 0; run < 2; ++run) {
      alloc_fail_arm(-1);
      if (plain_life_cycle(&right) != VKDS_SUCCESS || !right) {
        fprintf(stderr, "test_alloc_fail: the life cycle fails without any failed allocation: %s\n",
                vkds_last_error_message());
        return 1;
      }
    }
    sites = alloc_fail_counted();
    const char *s = getenv("VKDS_ALLOC_FAIL_STRIDE");
    stride = s ? atol(s) : (sites + 59) / 60;
    if (stride < 1) stride = 1;
    /* (each run forks the process, which holds the validation layer and lavapipe: its
     * copy-on-write faults were half the 100 runs' 40 s CPU; 60 a day, moving) */
    const char *f = getenv("VKDS_ALLOC_FAIL_FIRST");
    first_site = f ? atol(f) : (long)((unsigned long long)time(NULL) / 86400 * 7919 % (unsigned long long)stride);
    if (first_site < 0 || first_site >= sites) first_site = 0;
    printf("test_alloc_fail: %ld allocations in a life cycle; failing every %ld-th from %ld "
           "(VKDS_ALLOC_FAIL_FIRST=%ld repeats these)\n", sites, stride, first_site, first_site);
    TCase *t = harness_tcase("life_cycle");
    tcase_add_loop_test(t, each_allocation_fails, 0, (int)((sites - first_site + stride - 1) / stride));
    suite_add_tcase(suite, t);
  } else {
    fprintf(stderr, "test_alloc_fail: malloc is not interposed (a static or sanitizer build): only the user "
                    "allocator's sweep runs\n");
  }

  /* the user's allocator: two life cycles through it, nothing failing (the first for
   * one-time set-up), the second counted */
  const char *origin = getenv("VKDS_USER_ALLOC_FAIL_ORIGIN");
  ua.vkds_only = !(origin && strcmp(origin, "all") == 0);
  for (int run = 0; run < 2; ++run) {
    user_arm(-1);
    if (life_cycle_with(&user_allocator, &right, NULL, NULL, NULL) != VKDS_SUCCESS || !right) {
      fprintf(stderr, "test_alloc_fail: the life cycle fails with the user's allocator, nothing failing: %s%s%s\n",
              vkds_last_error_message(), ua.first_bad[0] ? "; first wrong call: " : "", ua.first_bad);
      return 1;
    }
  }
  user_sites = ua.calls;
  printf("test_alloc_fail: one life cycle through the user's allocator: %ld calls by vkds, %ld by the loader, %ld "
         "by the validation layer, %ld by lavapipe, %ld by the other drivers installed, %ld by others; %ld blocks "
         "still out\n",
         ua.by_origin[FROM_VKDS], ua.by_origin[FROM_LOADER], ua.by_origin[FROM_LAYER], ua.by_origin[FROM_LAVAPIPE],
         ua.by_origin[FROM_DRIVER], ua.by_origin[FROM_OTHER], ua.live_count);
  const char *us = getenv("VKDS_USER_ALLOC_FAIL_STRIDE");
  user_stride = us ? atol(us) : (user_sites + 39) / 40; /* CI: about 10 s */
  if (user_stride < 1) user_stride = 1;
  printf("test_alloc_fail: %ld numbered calls (%s); failing every %ld-th\n", user_sites,
         ua.vkds_only ? "vkds's own" : "every caller's", user_stride);
  TCase *a = harness_tcase("allocator");
  tcase_add_test(a, user_allocator_sees_vkds_and_vulkan);
  tcase_add_test(a, user_allocator_holds_the_context);
  tcase_add_test(a, null_allocator_as_before);
  tcase_add_test(a, allocator_without_a_function_is_refused);
  tcase_add_test(a, a_call_that_fails_for_memory_writes_nothing);
  suite_add_tcase(suite, a);
  TCase *u = harness_tcase("user_allocator");
  /* VKDS_USER_ALLOC_FAIL_ONLY=n: the one run that fails call n (to look at it) */
  const char *only = getenv("VKDS_USER_ALLOC_FAIL_ONLY");
  if (only) user_stride = atol(only) > 0 ? atol(only) : 1;
  tcase_add_loop_test(u, each_user_allocation_fails, only ? (atol(only) > 0) : 0,
                      only ? (atol(only) > 0) + 1 : (int)((user_sites + user_stride - 1) / user_stride));
  suite_add_tcase(suite, u);
  return harness_run(suite);
}
