/* tests/harness.c */
#include "harness.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static void setup(void) {
  atomic_store(&messages, 0);
  first_message[0] = '\0';
}

static void teardown(void) {
  ck_assert_msg(atomic_load(&messages) == 0, "%d validation message(s); first: %s",
                atomic_load(&messages), first_message);
}

TCase *harness_tcase(const char *name) {
  TCase *tc = tcase_create(name);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 600);
  return tc;
}

vkds_context *harness_context(void) {
  vkds_context_info info = harness_info();
  vkds_context *ctx = NULL;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  return ctx;
}

int harness_run(Suite *suite) {
  SRunner *sr = srunner_create(suite);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
