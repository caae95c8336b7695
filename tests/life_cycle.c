/* tests/life_cycle.c: see life_cycle.h. */
#include "life_cycle.h"

#include <stddef.h>

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

vkds_result life_cycle_steps(vkds_context *ctx, bool host_data, bool *right) {
  vkds_policy *pol = NULL;
  vkds_kernel *k = NULL;
  vkds_buffer *buf = NULL;
  vkds_submission *sub = NULL;
  uint32_t host[N], back[N], sum = 0, host_sum = 0, want = 0, want_host = 0;
  for (uint32_t i = 0; i < N; ++i) host[i] = i * 7u, want += 3u * (i * 7u) + 1u, want_host += i * 7u;
  vkds_resource *res = vkds_context_resource(ctx, 0);
  void *only[1] = {res};
  vkds_policy_info pi = {.kind = VKDS_POLICY_FIXED, .resources = {.context = ctx, .resource_count = 1, .resources = only}};
  vkds_result r = vkds_policy_create(&pi, &pol);
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
  const vkds_op plus = {.kind = VKDS_OP_GLSL, .glsl = "a + b", .identity = "0u"};
  if (r == VKDS_SUCCESS) {
    vkds_seq s = vkds_seq_buffer(vkds_view_of(buf), VKDS_U32);
    r = vkds_reduce(pol, &s, &plus, NULL, &sum);
  }
  if (r == VKDS_SUCCESS && host_data) {
    vkds_seq s = vkds_seq_host_const(host, N, VKDS_U32);
    r = vkds_reduce(pol, &s, &plus, NULL, &host_sum);
  }
  *right = r == VKDS_SUCCESS && sum == want && (!host_data || host_sum == want_host);
  for (uint32_t i = 0; *right && i < N; ++i) *right = back[i] == 3u * host[i] + 1u;
  /* What a careful application does after a failure: objects the GPU may still use
   * are destroyed only once their work is done (a failed wait did not cancel it). */
  if (sub && r != VKDS_SUCCESS) vkds_submission_wait(sub);
  vkds_submission_release(sub);
  vkds_buffer_destroy(buf);
  vkds_kernel_destroy(k);
  vkds_policy_release(pol);
  return r;
}

vkds_context_info life_cycle_info(void) {
  vkds_context_info info = harness_info();
  info.device_memory_limit = 16u << 20; /* blocks of a quarter of it */
  info.staging_chunks = 2;
  info.staging_chunk_bytes = 1u << 20;
  return info;
}

vkds_result life_cycle(const vkds_context_info *given, bool *right) {
  vkds_context *ctx = NULL;
  vkds_context_info info = given ? *given : life_cycle_info();
  *right = false;
  vkds_result r = vkds_context_create(&info, &ctx);
  if (r == VKDS_SUCCESS) r = life_cycle_steps(ctx, true, right);
  vkds_context_destroy(ctx);
  return r;
}
