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
 * (default: as many as fit 100 runs, about 25 s here; 1: all of them, a long run). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_fail.h"
#include "harness.h"

static const char kernel_glsl[] = "#version 450\n"
                                  "#include \"vkds.glsl\"\n"
                                  "layout(local_size_x = 64) in;\n"
                                  "VKDS_VIEW(uint, 4, Words)\n"
                                  "#define VKDS_ARGS uint n; Words data;\n"
                                  "VKDS_DECLARE_ARGS\n"
                                  "void main() {\n"
                                  "  uint64_t i = vkds_global_index();\n"
                                  "  if (i < VKDS_ARG(n)) Words_store(VKDS_ARG(data), i, 3u * Words_load(VKDS_ARG(data), i) + 1u);\n"
                                  "}\n";
typedef struct args {
  uint32_t n;
  vkds_view data;
} args;
static const vkds_arg arg_desc[] = {
    {.kind = VKDS_ARG_UINT, .offset = offsetof(args, n), .name = "n"},
    {.kind = VKDS_ARG_VIEW, .offset = offsetof(args, data), .name = "data"},
    {0},
};

enum { N = 1000 };

/* The life cycle; returns its first error (cleaning up what it made). With success,
 * *right says whether the launch's and the reduction's results were right. */
static vkds_result life_cycle(bool *right) {
  vkds_context *ctx = NULL;
  vkds_policy *pol = NULL;
  vkds_kernel *k = NULL;
  vkds_buffer *buf = NULL;
  vkds_submission *sub = NULL;
  uint32_t host[N], back[N], sum = 0, want = 0;
  for (uint32_t i = 0; i < N; ++i) host[i] = i * 7u, want += 3u * (i * 7u) + 1u;
  vkds_context_info info = harness_info();
  vkds_result r = vkds_context_create(&info, &ctx);
  vkds_resource *res = r == VKDS_SUCCESS ? vkds_context_resource(ctx, 0) : NULL;
  if (r == VKDS_SUCCESS) {
    void *only[1] = {res};
    vkds_policy_info pi = {.kind = VKDS_POLICY_FIXED, .resources = {.context = ctx, .resource_count = 1, .resources = only}};
    r = vkds_policy_create(&pi, &pol);
  }
  if (r == VKDS_SUCCESS)
    r = vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = kernel_glsl, .args = arg_desc, .name = "triple"}, &k);
  if (r == VKDS_SUCCESS) r = vkds_buffer_create(res, &(vkds_buffer_info){.size = sizeof host}, &buf);
  if (r == VKDS_SUCCESS) r = vkds_upload(res, vkds_view_of(buf), host, sizeof host);
  if (r == VKDS_SUCCESS) {
    args a = {.n = N, .data = vkds_view_of(buf)};
    r = vkds_launch(pol, k, &(vkds_launch_info){.global = {N}, .args = &a}, &sub);
  }
  if (r == VKDS_SUCCESS) r = vkds_submission_wait(sub);
  if (r == VKDS_SUCCESS) r = vkds_download(res, back, vkds_view_of(buf), sizeof back);
  if (r == VKDS_SUCCESS) {
    vkds_seq s = vkds_seq_buffer(vkds_view_of(buf), VKDS_U32);
    r = vkds_reduce(pol, &s, &(vkds_op){.kind = VKDS_OP_GLSL, .glsl = "a + b", .identity = "0u"}, NULL, &sum);
  }
  *right = r == VKDS_SUCCESS && sum == want;
  for (uint32_t i = 0; *right && i < N; ++i) *right = back[i] == 3u * host[i] + 1u;
  vkds_submission_release(sub);
  vkds_buffer_destroy(buf);
  vkds_kernel_destroy(k);
  vkds_policy_release(pol);
  vkds_context_destroy(ctx);
  return r;
}

static long sites;  /* allocations of one life cycle (the counting run in main) */
static long stride; /* every stride-th site is failed */

START_TEST(each_allocation_fails) {
  long n = (long)_i * stride;
  long held = alloc_fail_held();
  alloc_fail_arm(n);
  bool right;
  vkds_result r = life_cycle(&right);
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
  ck_assert_msg(life_cycle(&right) == VKDS_SUCCESS && right, "after allocation %ld failed, a life cycle fails: %s", n,
                vkds_last_error_message());
}
END_TEST

int main(void) {
  if (!alloc_fail_ready()) {
    fprintf(stderr, "test_alloc_fail: libvkds.so is not loaded (a static build?): nothing to test\n");
    return 77; /* skipped */
  }
  /* two life cycles, nothing failing: the first does glslang's process set-up (which
   * stays), the second is counted */
  bool right = false;
  for (int run = 0; run < 2; ++run) {
    alloc_fail_arm(-1);
    if (life_cycle(&right) != VKDS_SUCCESS || !right) {
      fprintf(stderr, "test_alloc_fail: the life cycle fails without any failed allocation: %s\n",
              vkds_last_error_message());
      return 1;
    }
  }
  sites = alloc_fail_counted();
  const char *s = getenv("VKDS_ALLOC_FAIL_STRIDE");
  stride = s ? atol(s) : (sites + 99) / 100;
  if (stride < 1) stride = 1;
  printf("test_alloc_fail: %ld allocations in a life cycle; failing every %ld-th\n", sites, stride);
  Suite *suite = suite_create("alloc_fail");
  TCase *t = harness_tcase("life_cycle");
  tcase_add_loop_test(t, each_allocation_fails, 0, (int)((sites + stride - 1) / stride));
  suite_add_tcase(suite, t);
  return harness_run(suite);
}
