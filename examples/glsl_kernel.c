/* examples/glsl_kernel.c: a kernel of your own, written in GLSL and compiled at run
 * time, launched on whichever queue a policy picks: y = a * x + y (saxpy) over device
 * buffers, checked on the host.
 *
 * The steps: context -> policy -> kernel (GLSL + a description of its arguments) ->
 * buffers and uploads -> launch -> wait -> download -> check. */
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>

#include <vkds/vkds.h>

#define CHECK(call)                                                                            \
  do {                                                                                         \
    vkds_result check_r_ = (call);                                                             \
    if (check_r_ != VKDS_SUCCESS) {                                                            \
      /* (the message begins with the result's name) */                                        \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, vkds_last_error_message()); \
      goto done;                                                                               \
    }                                                                                          \
  } while (0)

/* Validation-layer messages mean a bug: count them and fail (see list_resources.c). */
static atomic_int validation_messages;
static void logger(void *user, vkds_log_level level, vkds_log_source source, const char *message) {
  (void)user;
  if (source == VKDS_LOG_SOURCE_VALIDATION && level >= VKDS_LOG_WARN) atomic_fetch_add(&validation_messages, 1);
  fprintf(stderr, "[%s] %s\n", source == VKDS_LOG_SOURCE_VALIDATION ? "validation" : "vkds", message);
}

/* The kernel. "vkds.glsl" is vkds's device-side header: VKDS_VIEW declares a typed view
 * (a buffer's device address and length, read with Floats_load / written with
 * Floats_store), and VKDS_ARGS lists the push constants the launch fills from a C
 * struct. vkds_global_index() is the work-item's index, right also when vkds splits a
 * large launch into several dispatches. */
static const char saxpy_glsl[] =
    "#version 450\n"
    "#include \"vkds.glsl\"\n"
    "layout(local_size_x = 64) in;\n"
    "VKDS_VIEW(float, 4, Floats)\n"
    "#define VKDS_ARGS uint n; float a; Floats x; Floats y;\n"
    "VKDS_DECLARE_ARGS\n"
    "void main() {\n"
    "  uint64_t i = vkds_global_index();\n"
    "  if (i < VKDS_ARG(n))\n" /* the launch is rounded up to whole work groups */
    "    Floats_store(VKDS_ARG(y), i, VKDS_ARG(a) * Floats_load(VKDS_ARG(x), i) + Floats_load(VKDS_ARG(y), i));\n"
    "}\n";

/* The same arguments as a C struct, and a description of it, member by member, in the
 * shader's order: vkds checks it against the shader when the kernel is made (a mismatch
 * is VKDS_ERROR_ARGUMENT_MISMATCH naming the member) and packs the struct at launch. */
typedef struct saxpy_args {
  uint32_t n;
  float a;
  vkds_view x, y;
} saxpy_args;
static const vkds_arg saxpy_desc[] = {
    {.kind = VKDS_ARG_UINT, .offset = offsetof(saxpy_args, n), .name = "n"},
    {.kind = VKDS_ARG_FLOAT, .offset = offsetof(saxpy_args, a), .name = "a"},
    {.kind = VKDS_ARG_VIEW, .offset = offsetof(saxpy_args, x), .name = "x"},
    {.kind = VKDS_ARG_VIEW, .offset = offsetof(saxpy_args, y), .name = "y"},
    {0}, /* VKDS_ARG_END */
};

enum { N = 100000 };
static float x[N], y[N];

int main(void) {
  int status = 1;
  vkds_context *ctx = NULL;
  vkds_policy *pol = NULL;
  vkds_kernel *k = NULL;
  vkds_buffer *xb = NULL, *yb = NULL;
  vkds_submission *sub = NULL;

  CHECK(vkds_context_create(&(vkds_context_info){.log = logger, .log_level = VKDS_LOG_WARN}, &ctx));

  /* Dynamic load: each task goes to the queue with the fewest tasks in flight. The
   * policy spans every queue of every device; a launch runs on its buffers' device, so
   * the policy picks among that device's queues. */
  CHECK(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_DYNAMIC_LOAD, .resources = {.context = ctx}}, &pol));
  vkds_resource *res = vkds_context_resource(ctx, 0); /* the buffers' device: the first */

  /* Compiled by glslang now (and cached in the context: a second identical call is
   * free). A GLSL error is VKDS_ERROR_COMPILE with glslang's log, line numbers included. */
  CHECK(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = saxpy_glsl, .args = saxpy_desc, .name = "saxpy"},
                              &k));

  for (uint32_t i = 0; i < N; ++i) {
    x[i] = (float)i;
    y[i] = 1.0f;
  }
  /* Device-local buffers (the default memory kind); the uploads go through vkds's
   * staging ring and return when the bytes have arrived. */
  CHECK(vkds_buffer_create(res, &(vkds_buffer_info){.size = sizeof x}, &xb));
  CHECK(vkds_buffer_create(res, &(vkds_buffer_info){.size = sizeof y}, &yb));
  CHECK(vkds_upload(res, vkds_view_of(xb), x, sizeof x));
  CHECK(vkds_upload(res, vkds_view_of(yb), y, sizeof y));

  /* One work-item per element. The arguments are packed before vkds_launch returns, so
   * `args` may be a local. The submission says when the kernel is done. */
  saxpy_args args = {.n = N, .a = 2.0f, .x = vkds_view_of(xb), .y = vkds_view_of(yb)};
  CHECK(vkds_launch(pol, k, &(vkds_launch_info){.global = {N}, .args = &args}, &sub));
  CHECK(vkds_submission_wait(sub));
  /* Which queue did the policy pick? The submission's selection knows. */
  vkds_resource_info picked;
  CHECK(vkds_resource_get_info(vkds_selection_resource(vkds_submission_selection(sub)), &picked));
  vkds_submission_release(sub);
  sub = NULL;

  /* vkds_download does not wait for kernels using the buffer: that is why the
   * submission was waited for first. */
  CHECK(vkds_download(res, y, vkds_view_of(yb), sizeof y));

  uint32_t wrong = 0;
  for (uint32_t i = 0; i < N; ++i)
    if (y[i] != 2.0f * (float)i + 1.0f) { /* exact: small integers are exact in float */
      if (wrong++ < 5) fprintf(stderr, "y[%u] = %g, expected %g\n", i, y[i], 2.0f * (float)i + 1.0f);
    }
  printf("saxpy over %d floats on resource %u (%s, family %u queue %u): %s\n", N, picked.index,
         picked.device_name, picked.queue_family, picked.queue_index, wrong ? "WRONG" : "correct");
  printf("y[0] = %g, y[%d] = %g\n", y[0], N - 1, y[N - 1]);
  if (wrong == 0) status = 0;

done:
  /* Everything made from the context goes before it; each destroy takes NULL. */
  vkds_submission_release(sub);
  vkds_buffer_destroy(xb);
  vkds_buffer_destroy(yb);
  vkds_kernel_destroy(k);
  vkds_policy_release(pol);
  vkds_context_destroy(ctx);
  if (atomic_load(&validation_messages) > 0) {
    fprintf(stderr, "%d validation message(s)\n", atomic_load(&validation_messages));
    status = 1;
  }
  return status;
}
