/* tests/harness.c */
#include "harness.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local const char *last_file;
static _Thread_local int last_line;

void harness_mark_point(const char *file, int line) {
  if (file == last_file && line == last_line) return;
  last_file = file, last_line = line;
  (_mark_point)(file, line); /* Check's own: the parentheses keep the macro out */
}

static atomic_int messages;
static char first_message[2048];

void harness_log(void *user, vkds_log_level level, vkds_log_source source, const char *message) {
  (void)user;
  if (source == VKDS_LOG_SOURCE_VKDS) {
    if (level >= VKDS_LOG_WARN) fprintf(stderr, "[vkds] %s\n", message);
    return;
  }
  if (level < VKDS_LOG_WARN) return;
  if (atomic_fetch_add(&messages, 1) == 0)
    snprintf(first_message, sizeof first_message, "%s", message);
  fprintf(stderr, "[validation] %s\n", message);
}

int harness_validation_messages(void) { return atomic_load(&messages); }

void harness_forget_validation_messages(void) { atomic_store(&messages, 0); }

vkds_context_info harness_info(void) {
  return (vkds_context_info){.validation = true, .log = harness_log, .log_level = VKDS_LOG_WARN};
}

/* environment variables a test changed, with their values before */
enum { MAX_SAVED = 64 }; /* a test may set one variable many times (test_scan: two a chained shape) */
static struct { char *name, *old; } saved[MAX_SAVED];
static int saved_count;

int harness_top_log2(int log2) {
  const char *v = getenv("VKDS_TEST_TOP_LOG2");
  int cap = v && *v ? atoi(v) : 0;
  return cap > 0 && cap < log2 ? cap : log2;
}

int harness_rounds(int rounds) {
  const char *v = getenv("VKDS_TEST_TOP_LOG2");
  return v && *v && rounds >= 10 ? rounds / 10 : rounds;
}

void harness_setenv(const char *name, const char *value) {
  ck_assert_int_lt(saved_count, MAX_SAVED);
  const char *old = getenv(name);
  saved[saved_count].name = strdup(name);
  saved[saved_count].old = old ? strdup(old) : NULL;
  ++saved_count;
  if (value) setenv(name, value, 1);
  else unsetenv(name);
}

static void restore_env(void) {
  while (saved_count > 0) { /* newest first, so the oldest value wins */
    --saved_count;
    if (saved[saved_count].old) setenv(saved[saved_count].name, saved[saved_count].old, 1);
    else unsetenv(saved[saved_count].name);
    free(saved[saved_count].name);
    free(saved[saved_count].old);
  }
}

static void setup(void) {
  last_file = NULL; /* a test's first place always goes to Check (unforked, the same loop test runs again) */
  atomic_store(&messages, 0);
  first_message[0] = '\0';
}

static void teardown(void) {
  restore_env();
  ck_assert_msg(atomic_load(&messages) == 0, "%d validation message(s); first: %s",
                atomic_load(&messages), first_message);
}

TCase *harness_tcase(const char *name) {
  TCase *tc = tcase_create(name);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 600);
  return tc;
}

TCase *harness_long_tcase(const char *name) {
  TCase *tc = harness_tcase(name);
  tcase_set_tags(tc, "long");
  return tc;
}

vkds_context *harness_context(void) {
  vkds_context_info info = harness_info();
  vkds_context *ctx = NULL;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  return ctx;
}

vkds_resource *harness_device_resource(vkds_context *ctx, uint32_t device_index) {
  for (uint32_t i = 0; i < vkds_context_resource_count(ctx); ++i) {
    vkds_resource_info ri;
    ck_assert_vkds(vkds_resource_get_info(vkds_context_resource(ctx, i), &ri));
    if (ri.device_index == device_index) return vkds_context_resource(ctx, i);
  }
  return NULL;
}

void harness_open_fixed(const vkds_context_info *info, vkds_context **ctx, vkds_resource **r0, vkds_policy **pol) {
  vkds_context_info own = harness_info();
  ck_assert_vkds(vkds_context_create(info ? info : &own, ctx));
  *r0 = vkds_context_resource(*ctx, 0);
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = {.context = *ctx}}, pol));
}

void harness_close_fixed(vkds_context **ctx, vkds_policy **pol) {
  vkds_policy_release(*pol);
  vkds_context_destroy(*ctx);
  *pol = NULL, *ctx = NULL;
}

uint64_t harness_xorshift(uint64_t *state) {
  uint64_t x = *state;
  x ^= x << 13, x ^= x >> 7, x ^= x << 17;
  return *state = x;
}

vkds_buffer *harness_device_copy(vkds_resource *res, const void *data, uint64_t bytes) {
  vkds_buffer *b;
  ck_assert_vkds(vkds_buffer_create(res, &(vkds_buffer_info){.size = bytes ? bytes : 16}, &b));
  if (bytes && data) ck_assert_vkds(vkds_upload(res, vkds_view_of(b), data, bytes));
  return b;
}

int harness_run(Suite *suite) {
  SRunner *sr = srunner_create(suite);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
