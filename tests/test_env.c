/* tests/test_env.c: how the environment variables are read (lib/core/result.c): the
 * tuning knobs' decimal integers in their range, anything else unset, and the switches'
 * off values, as the README's table says. Links the static library (the readers are
 * internal). */
#include <stdint.h>
#include <stdlib.h>

#include "harness.h"
#include "internal.h"

static const char NAME[] = "VKDS_TEST_KNOB";

/* Whether the reader takes `value` in [min, max], and as what. */
static bool reads(const char *value, int64_t min, int64_t max, int64_t *out) {
  if (value) setenv(NAME, value, 1);
  else unsetenv(NAME);
  *out = 12345;
  return vkds__getenv_int(NAME, min, max, out);
}

START_TEST(numbers_in_range_are_taken) {
  int64_t n;
  ck_assert(reads("5", -1, 100, &n) && n == 5);
  ck_assert(reads("-1", -1, 100, &n) && n == -1);
  ck_assert(reads("0", 0, 100, &n) && n == 0);
  ck_assert(reads("100", -1, 100, &n) && n == 100);
  ck_assert(reads("007", 0, 100, &n) && n == 7); /* decimal, not octal */
  ck_assert(reads("2147483647", 1, INT32_MAX, &n) && n == INT32_MAX);
}
END_TEST

/* atoi took "8abc" as 8 and wrapped "4294967297" to 1; strtol without an end check took
 * "abc" and "-7" as 0 spins, which forced the scans' fallback (a CLI probe). */
START_TEST(anything_else_is_unset) {
  static const char *const bad[] = {"",    "abc", "8abc", " 5",   "5 ",        "-",          "--1", "+5",
                                    "0x10", "1e3", "-7",   "101", "4294967297", "99999999999999999999"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i) {
    int64_t n;
    ck_assert_msg(!reads(bad[i], -1, 100, &n), "'%s' was read as %lld", bad[i], (long long)n);
    ck_assert_int_eq(n, 12345); /* untouched */
  }
  int64_t n;
  ck_assert(!reads(NULL, -1, 100, &n));
  /* the positive form: 0 for all of those, and for 0 and negatives */
  setenv(NAME, "4294967297", 1);
  ck_assert_uint_eq(vkds__getenv_positive(NAME), 0);
  setenv(NAME, "0", 1);
  ck_assert_uint_eq(vkds__getenv_positive(NAME), 0);
  setenv(NAME, "64", 1);
  ck_assert_uint_eq(vkds__getenv_positive(NAME), 64);
  unsetenv(NAME);
}
END_TEST

/* The switches (VKDS_VALIDATION, VKDS_PIPELINE_STATS, VKDS_DUMP_ALGORITHMS): off when
 * unset, empty, 0, false or off in any case (VKDS_PIPELINE_STATS=false turned the
 * statistics on; a CLI probe). */
START_TEST(switches_have_one_set_of_off_values) {
  static const char *const off[] = {"", "0", "false", "FALSE", "Off", "off"};
  static const char *const on[] = {"1", "yes", "true", "2", "on"};
  for (size_t i = 0; i < sizeof off / sizeof *off; ++i) {
    setenv(NAME, off[i], 1);
    ck_assert_msg(!vkds__getenv_on(NAME), "'%s' read as on", off[i]);
  }
  for (size_t i = 0; i < sizeof on / sizeof *on; ++i) {
    setenv(NAME, on[i], 1);
    ck_assert_msg(vkds__getenv_on(NAME), "'%s' read as off", on[i]);
  }
  unsetenv(NAME);
  ck_assert(!vkds__getenv_on(NAME));
}
END_TEST

int main(void) {
  Suite *s = suite_create("env");
  TCase *tc = harness_tcase("env");
  tcase_add_test(tc, numbers_in_range_are_taken);
  tcase_add_test(tc, anything_else_is_unset);
  tcase_add_test(tc, switches_have_one_set_of_off_values);
  suite_add_tcase(s, tc);
  return harness_run(s);
}
