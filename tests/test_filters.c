/* tests/test_filters.c: choosing devices with vkds_context_info.devices and
 * VKDS_DEVICES. The expected choice comes from enumerating the physical devices with
 * Vulkan directly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>

#include "harness.h"

#define MAX_DEV 16

static uint32_t phys_count;
static VkPhysicalDeviceProperties phys_props[MAX_DEV];

/* Lists the machine's physical devices in enumeration order (the indices filters use). */
static void enumerate(void) {
  harness_setenv("VKDS_DEVICES", NULL); /* the tests set it themselves where they want it */
  VkInstanceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                             .pApplicationInfo = &(VkApplicationInfo){
                                 .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                                 .apiVersion = VK_API_VERSION_1_2}};
  VkInstance inst;
  ck_assert_int_eq(vkCreateInstance(&ci, NULL, &inst), VK_SUCCESS);
  VkPhysicalDevice phys[MAX_DEV];
  phys_count = MAX_DEV;
  ck_assert_int_ge(vkEnumeratePhysicalDevices(inst, &phys_count, phys), 0);
  for (uint32_t i = 0; i < phys_count; ++i) vkGetPhysicalDeviceProperties(phys[i], &phys_props[i]);
  vkDestroyInstance(inst, NULL);
  ck_assert_uint_gt(phys_count, 0);
}

typedef bool (*pick_fn)(uint32_t index, const VkPhysicalDeviceProperties *p, const void *arg);

/* Creates a context with `filter` (and VKDS_DEVICES as the environment has it) and checks
 * that its devices are exactly the physical devices `pick` selects, in order; when none
 * are, checks for VKDS_ERROR_NO_DEVICE instead. */
static void expect_choice(const char *filter, pick_fn pick, const void *arg) {
  vkds_context_info info = harness_info();
  info.devices = filter;
  vkds_context *ctx = NULL;
  vkds_result r = vkds_context_create(&info, &ctx);
  uint32_t expected[MAX_DEV], n = 0;
  for (uint32_t i = 0; i < phys_count; ++i)
    if (pick(i, &phys_props[i], arg)) expected[n++] = i;
  if (n == 0) {
    ck_assert_msg(r == VKDS_ERROR_NO_DEVICE, "filter \"%s\": %s", filter, vkds_result_str(r));
    ck_assert_ptr_null(ctx);
    /* the message lists what was found */
    ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "found:"));
    ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), phys_props[0].deviceName));
    return;
  }
  ck_assert_msg(r == VKDS_SUCCESS, "filter \"%s\": %s: %s", filter, vkds_result_str(r),
                vkds_last_error_message());
  ck_assert_uint_eq(vkds_context_device_count(ctx), n);
  uint32_t next = 0;
  for (uint32_t i = 0; i < vkds_context_resource_count(ctx); ++i) {
    vkds_resource_info ri;
    ck_assert_vkds(vkds_resource_get_info(vkds_context_resource(ctx, i), &ri));
    if (ri.device_index == next) { /* first resource of the next device */
      const VkPhysicalDeviceProperties *p = &phys_props[expected[next]];
      ck_assert_str_eq(ri.device_name, p->deviceName);
      ck_assert_uint_eq(ri.device_id, p->deviceID);
      ++next;
    }
  }
  ck_assert_uint_eq(next, n);
  vkds_context_destroy(ctx);
}

static bool pick_all(uint32_t i, const VkPhysicalDeviceProperties *p, const void *a) {
  (void)i, (void)p, (void)a;
  return true;
}
static bool pick_none(uint32_t i, const VkPhysicalDeviceProperties *p, const void *a) {
  (void)i, (void)p, (void)a;
  return false;
}
static bool pick_index(uint32_t i, const VkPhysicalDeviceProperties *p, const void *a) {
  (void)p;
  return i == *(const uint32_t *)a;
}
static bool pick_not_index(uint32_t i, const VkPhysicalDeviceProperties *p, const void *a) {
  return !pick_index(i, p, a);
}
static bool pick_type(uint32_t i, const VkPhysicalDeviceProperties *p, const void *a) {
  (void)i;
  return p->deviceType == *(const VkPhysicalDeviceType *)a;
}
static bool pick_not_type(uint32_t i, const VkPhysicalDeviceProperties *p, const void *a) {
  return !pick_type(i, p, a);
}
static bool pick_gpu(uint32_t i, const VkPhysicalDeviceProperties *p, const void *a) {
  (void)i, (void)a;
  return p->deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU ||
         p->deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ||
         p->deviceType == VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU;
}
static bool pick_cpu_or_gpu(uint32_t i, const VkPhysicalDeviceProperties *p, const void *a) {
  (void)a;
  return p->deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU || pick_gpu(i, p, NULL);
}
static bool pick_vendor(uint32_t i, const VkPhysicalDeviceProperties *p, const void *a) {
  (void)i;
  return p->vendorID == *(const uint32_t *)a;
}
static bool pick_name(uint32_t i, const VkPhysicalDeviceProperties *p, const void *a) {
  (void)i;
  return strstr(p->deviceName, (const char *)a) != NULL;
}

START_TEST(empty_filter_takes_everything) {
  enumerate();
  expect_choice(NULL, pick_all, NULL);
  expect_choice("", pick_all, NULL);
  expect_choice("  ", pick_all, NULL);
}
END_TEST

START_TEST(by_index) {
  enumerate();
  for (uint32_t i = 0; i < phys_count; ++i) {
    char f[32];
    snprintf(f, sizeof f, "%u", i);
    expect_choice(f, pick_index, &i);
    snprintf(f, sizeof f, "!%u", i);
    expect_choice(f, pick_not_index, &i);
  }
  expect_choice("99", pick_index, &(uint32_t){99});
  /* decimal with leading zeros, not octal ("010" chose device 8; a new-user probe) */
  expect_choice("010", pick_index, &(uint32_t){10});
  expect_choice("00", pick_index, &(uint32_t){0});
}
END_TEST

START_TEST(by_type) {
  enumerate();
  static const struct { const char *word; VkPhysicalDeviceType type; } words[] = {
      {"cpu", VK_PHYSICAL_DEVICE_TYPE_CPU},
      {"discrete", VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU},
      {"integrated", VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU},
      {"virtual", VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU},
      {"other", VK_PHYSICAL_DEVICE_TYPE_OTHER},
  };
  for (size_t i = 0; i < sizeof words / sizeof words[0]; ++i) {
    char neg[32];
    snprintf(neg, sizeof neg, "!%s", words[i].word);
    expect_choice(words[i].word, pick_type, &words[i].type);
    expect_choice(neg, pick_not_type, &words[i].type);
  }
  expect_choice("gpu", pick_gpu, NULL);
  expect_choice("GPU", pick_gpu, NULL); /* case-insensitive */
  expect_choice(" cpu , gpu ,discrete", pick_cpu_or_gpu, NULL);
}
END_TEST

START_TEST(by_vendor_and_name) {
  enumerate();
  uint32_t vendor = phys_props[0].vendorID;
  char f[96];
  snprintf(f, sizeof f, "vendor=0x%x", vendor);
  expect_choice(f, pick_vendor, &vendor);
  snprintf(f, sizeof f, "vendor=%u", vendor);
  expect_choice(f, pick_vendor, &vendor);
  snprintf(f, sizeof f, "vendor=00%u", vendor); /* decimal, not octal (refused as such) */
  expect_choice(f, pick_vendor, &vendor);
  snprintf(f, sizeof f, "vendor=0%o", vendor); /* the id in octal is another number */
  uint32_t as_decimal = (uint32_t)strtoul(f + 7, NULL, 10);
  if (as_decimal != vendor) expect_choice(f, pick_vendor, &as_decimal);
  uint32_t other = vendor ^ 0xffff;
  snprintf(f, sizeof f, "vendor=0x%x", other);
  expect_choice(f, pick_vendor, &other);

  /* a substring of device 0's name, in upper case: matches case-insensitively */
  char sub[8] = {0};
  memcpy(sub, phys_props[0].deviceName, 4);
  char upper[8] = {0};
  for (int i = 0; sub[i]; ++i) upper[i] = (char)(sub[i] >= 'a' && sub[i] <= 'z' ? sub[i] - 32 : sub[i]);
  snprintf(f, sizeof f, "name=%s", upper);
  expect_choice(f, pick_name, sub);
  expect_choice("name=__no_such_device__", pick_none, NULL);
  expect_choice("cpu,!cpu", pick_none, NULL);
}
END_TEST

START_TEST(environment_restricts_further) {
  enumerate();
  harness_setenv("VKDS_DEVICES", "name=__no_such_device__");
  expect_choice(NULL, pick_none, NULL);
  /* the message quotes the filter that was given, not the create-info's unset one */
  ck_assert_msg(strstr(vkds_last_error_message(), "matches VKDS_DEVICES=\"name=__no_such_device__\";") &&
                    !strstr(vkds_last_error_message(), "filter \"\""),
                "%s", vkds_last_error_message());
  /* ignore_env: the variable is not read */
  vkds_context_info info = harness_info();
  info.ignore_env = true;
  vkds_context *ctx = NULL;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  vkds_context_destroy(ctx);
  /* both apply: the create-info takes everything, the variable only device 0 */
  harness_setenv("VKDS_DEVICES", "0");
  uint32_t zero = 0;
  expect_choice("", pick_index, &zero);
  /* a malformed variable is the caller's error too */
  harness_setenv("VKDS_DEVICES", "gpux");
  ctx = NULL;
  info = harness_info();
  ck_assert_int_eq(vkds_context_create(&info, &ctx), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_null(ctx);
}
END_TEST

START_TEST(malformed_filters) {
  static const char *bad[] = {"bogus", "name=", "vendor=", "vendor=xyz", "vendor=0x1ffffffff", "vendor=0x", "vendor=+5", "+1", "0x-1",
                              "!", "0,,1", ",", "cpu,", "-1", "1x", "name", "gpu cpu",
                              "99999999999999999999"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    vkds_context_info info = harness_info();
    info.devices = bad[i];
    info.ignore_env = true;
    vkds_context *ctx = (vkds_context *)&info; /* must be reset to NULL */
    vkds_result r = vkds_context_create(&info, &ctx);
    ck_assert_msg(r == VKDS_ERROR_INVALID_ARGUMENT, "\"%s\" gave %s", bad[i], vkds_result_str(r));
    ck_assert_ptr_null(ctx);
    ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "malformed device filter"));
    ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "in vkds_context_info.devices"));
  }
  /* the variable's own, named as such (both filters apply) */
  harness_setenv("VKDS_DEVICES", "bogus");
  vkds_context_info info = harness_info();
  vkds_context *ctx;
  ck_assert_int_eq(vkds_context_create(&info, &ctx), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "in VKDS_DEVICES \"bogus\""));
  harness_setenv("VKDS_DEVICES", NULL);
}
END_TEST

int main(void) {
  Suite *s = suite_create("filters");
  TCase *tc = harness_tcase("filters");
  tcase_add_test(tc, empty_filter_takes_everything);
  tcase_add_test(tc, by_index);
  tcase_add_test(tc, by_type);
  tcase_add_test(tc, by_vendor_and_name);
  tcase_add_test(tc, environment_restricts_further);
  tcase_add_test(tc, malformed_filters);
  suite_add_tcase(s, tc);
  return harness_run(s);
}
