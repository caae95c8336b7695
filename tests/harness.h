/* tests/harness.h: what every vkds test shares.
 *
 * Every context a test makes goes through harness_info(), which turns the Khronos
 * validation layer on and routes every message to harness_log(); the checked fixture
 * added by harness_tcase() fails the test when any validation or driver warning or
 * error arrived while it ran. */
#ifndef VKDS_TEST_HARNESS_H
#define VKDS_TEST_HARNESS_H

#include <check.h>
#include <stdint.h>
#include <vkds/vkds.h>

/* Check sends the place of every passing assertion to the process that reports the test
 * (a write each: a million from one element-wise loop, a third of a suite's time). Every
 * assertion macro ends in _mark_point; through this one a place goes on only when it
 * differs from the same thread's previous one, which changes nothing Check can report
 * (the last place reached before a crash or a timeout). */
void harness_mark_point(const char *file, int line);
#define _mark_point(file, line) harness_mark_point(file, line)

/* A context create-info with validation on and the harness's logger. */
vkds_context_info harness_info(void);

/* The harness's logger: counts validation/driver warnings and errors, remembers the
 * first; prints vkds's own errors (tests that expect them are fine). */
void harness_log(void *user, vkds_log_level level, vkds_log_source source, const char *message);

/* Validation and driver messages seen since the test started. */
int harness_validation_messages(void);

/* Forgets the messages seen so far: only for a test that provokes one on purpose. */
void harness_forget_validation_messages(void);

/* Sets (value non-NULL) or unsets an environment variable for the rest of the test;
 * the fixture restores the old value, so tests also run unforked (CK_FORK=no). */
void harness_setenv(const char *name, const char *value);

/* The largest size's log2 a test uses: `log2`, or less where VKDS_TEST_TOP_LOG2 says
 * so (scripts/test.sh's sanitizer stages: their instrumented host references make the
 * 2^24-element cases the suite's slowest, and the validation stage runs them in full). */
int harness_top_log2(int log2);

/* `rounds`, or a tenth of them (at least 1) in the sanitizer stages (VKDS_TEST_TOP_LOG2
 * set, as above): a loop whose rounds run the same host code again, where the stage
 * without sanitizers runs them all (test_scan's 10,000 single-pass scans). */
int harness_rounds(int rounds);

/* Checks for loops over elements. Check records every passing ck_assert (a message
 * per call, which an unforked run, as under the sanitizers, reads back with a memmove
 * each: element-wise loops were most of the ASan stage's time). These call into Check
 * only when the check fails, with ck_assert's own message. Arguments are evaluated
 * twice on failure: pass expressions without side effects. */
#define harness_expect(cond)                                                                                      \
  do {                                                                                                             \
    if (!(cond)) ck_assert(cond);                                                                                  \
  } while (0)
#define harness_expect_uint_eq(a, b)                                                                              \
  do {                                                                                                             \
    if ((uintmax_t)(a) != (uintmax_t)(b)) ck_assert_uint_eq(a, b);                                                 \
  } while (0)
#define harness_expect_int_eq(a, b)                                                                               \
  do {                                                                                                             \
    if ((intmax_t)(a) != (intmax_t)(b)) ck_assert_int_eq(a, b);                                                    \
  } while (0)
#define harness_expect_float_eq(a, b)                                                                             \
  do {                                                                                                             \
    if (!((a) == (b))) ck_assert_float_eq(a, b);                                                                   \
  } while (0)

/* A test case with the validation-checking fixture and a generous timeout. */
TCase *harness_tcase(const char *name);

/* The same, tagged "long": the sanitizer stages leave it out (CK_EXCLUDE_TAGS=long in
 * scripts/test.sh) to keep CI within its 15 minutes. For cases that run host code the
 * suite's other cases also reach, many times over (every type, size and pattern against
 * the host reference; a path variant forced), which the stage without sanitizers runs
 * in full. */
TCase *harness_long_tcase(const char *name);

/* Creates a default (validated) context; fails the test when that is impossible. */
vkds_context *harness_context(void);

/* The first resource of device `device_index` of `ctx` (e.g. 1: a second VkDevice, made
 * with devices_per_physical = 2), or NULL when it has none. */
vkds_resource *harness_device_resource(vkds_context *ctx, uint32_t device_index);

/* A test's usual objects: a context made from `info` (NULL: harness_info()), its first
 * resource and a fixed policy over the context; fails the test when one cannot be made.
 * harness_close_fixed releases the policy, destroys the context and sets both NULL. */
void harness_open_fixed(const vkds_context_info *info, vkds_context **ctx, vkds_resource **r0, vkds_policy **pol);
void harness_close_fixed(vkds_context **ctx, vkds_policy **pol);

/* The next number of a xorshift64 generator whose state (not 0) is *state: the tests'
 * data, the same every run. */
uint64_t harness_xorshift(uint64_t *state);

/* A device buffer of `bytes` on `res` (16 when 0: a buffer is never empty), holding a
 * copy of `data` unless that is NULL; fails the test when it cannot. */
vkds_buffer *harness_device_copy(vkds_resource *res, const void *data, uint64_t bytes);

/* Runs a suite; returns the process exit status. */
int harness_run(Suite *suite);

#define ck_assert_vkds(call)                                                                \
  do {                                                                                      \
    vkds_result r_ = (call);                                                                \
    ck_assert_msg(r_ == VKDS_SUCCESS, "%s -> %s", #call, vkds_last_error_message());        \
  } while (0)

#endif
