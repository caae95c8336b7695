/* tests/test_null.c: every public function called with NULL for each pointer and zero for
 * everything else (the calls are generated from the headers by tests/gen_null_calls.py,
 * so a new function is covered the day it is declared). Each must come back, without a
 * crash or a validation message; one that returns vkds_result must return a named error
 * with a message, except the few documented to accept nothing (below, each with where
 * its header says so).
 * Then again with live objects (a context, its first resource, a policy, a buffer, a
 * vkds_cmd without a command buffer) wherever a parameter takes one, NULL and zero for the
 * rest: the checks past the first argument. There a zero-sized request may succeed; an
 * error must still be a named one with a message. */
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "null_calls.h"

/* Functions whose headers say NULL or zero arguments are fine and succeed. */
static const char *const succeeds[] = {
    "vkds_seq_unbind", /* seq.h: "NULL, or a binding that failed, is a no-op returning VKDS_SUCCESS" */
    NULL,
};

static bool documented_to_succeed(const char *name) {
  for (size_t i = 0; succeeds[i]; ++i)
    if (strcmp(succeeds[i], name) == 0) return true;
  return false;
}

/* A crash names the function (Check only reports the signal and the last check passed);
 * not under the sanitizers, whose own reports say more. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define NAME_CRASHES 0
#else
#define NAME_CRASHES 1
#endif
static const char *calling;
static void name_the_crash(int sig) {
  static const char head[] = "test_null: crashed in ";
  ssize_t ignored = write(2, head, sizeof head - 1);
  ignored = write(2, calling, strlen(calling));
  ignored = write(2, "\n", 1);
  (void)ignored;
  signal(sig, SIG_DFL);
  raise(sig);
}
static const int signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
static void watch(const char *name) {
  calling = name;
  for (size_t k = 0; NAME_CRASHES && k < sizeof signals / sizeof signals[0]; ++k) signal(signals[k], name_the_crash);
}
static void unwatch(void) {
  for (size_t k = 0; NAME_CRASHES && k < sizeof signals / sizeof signals[0]; ++k) signal(signals[k], SIG_DFL);
}

static void expect_named_error(const char *name, vkds_result r) {
  ck_assert_msg(strcmp(vkds_result_str(r), "unknown result") != 0, "%s returned %d, not a vkds_result", name, (int)r);
  ck_assert_msg(vkds_last_error_message()[0] != '\0', "%s returned %s without a message", name, vkds_result_str(r));
}

/* All the calls in one test (not a forked test each, which was most of this suite's
 * time): a crash still names its function (name_the_crash), a failure names it in its
 * message. */
START_TEST(every_public_function) {
  for (size_t i = 0; i < sizeof null_calls / sizeof null_calls[0]; ++i) {
    const struct null_call *c = &null_calls[i];
    watch(c->name);
    vkds_result r = (vkds_result)c->call();
    unwatch();
    if (!c->returns_result) continue;
    if (documented_to_succeed(c->name)) {
      ck_assert_msg(r == VKDS_SUCCESS, "%s with NULL and zero arguments: %s (its header says it succeeds)", c->name,
                    vkds_result_str(r));
      continue;
    }
    ck_assert_msg(r != VKDS_SUCCESS, "%s with NULL and zero arguments succeeded", c->name);
    expect_named_error(c->name, r);
  }
}
END_TEST

/* One context for every call; each call gets a policy, a buffer and a vkds_cmd of its own,
 * made before it and released after it, so that no call sees what another left. */
START_TEST(every_public_function_with_live_objects) {
  vkds_context_info info = harness_info();
  vkds_context *ctx;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  for (size_t i = 0; i < sizeof null_calls / sizeof null_calls[0]; ++i) {
    const struct null_call *c = &null_calls[i];
    if (!c->live) continue;
    struct null_objects live = {.ctx = ctx, .res = vkds_context_resource(ctx, 0)};
    ck_assert_ptr_nonnull(live.res);
    vkds_policy_info pi = {.kind = VKDS_POLICY_FIXED, .resources = {.context = ctx}};
    ck_assert_vkds(vkds_policy_create(&pi, &live.pol));
    ck_assert_vkds(vkds_buffer_create(live.res, &(vkds_buffer_info){.size = 4096}, &live.buf));
    live.cmd = (vkds_cmd){.resource = live.res, .scratch = vkds_view_of(live.buf)};
    watch(c->name);
    vkds_result r = (vkds_result)c->live(&live);
    unwatch();
    if (c->returns_result && r != VKDS_SUCCESS) expect_named_error(c->name, r);
    vkds_buffer_destroy(live.buf);
    vkds_policy_release(live.pol);
  }
  vkds_context_destroy(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("null");
  TCase *t = harness_tcase("calls");
  tcase_add_test(t, every_public_function);
  suite_add_tcase(s, t);
  t = harness_tcase("live_objects");
  tcase_add_test(t, every_public_function_with_live_objects);
  suite_add_tcase(s, t);
  return harness_run(s);
}
