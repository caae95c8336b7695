/* examples/reduce_transform.c: the algorithm layer (vkds/algorithm.h) over sequences
 * (vkds/seq.h). The same calls take host memory, which vkds stages (copies to the device
 * and back), and device buffers, which it "passes directly" (uses in place); views such
 * as reverse and counting cost no copy at all, they become code in the kernel.
 *
 * Every result is checked against the same computation on the host. The data are small
 * integers stored as floats, so every float sum here is exact and can be compared with
 * ==; with arbitrary floats the device's order of additions (documented in
 * algorithm.h) would make it differ from a sequential host loop in the last bits. */
#include <stdatomic.h>
#include <stdbool.h>
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

/* Prints one checked result; returns whether it was right. */
static bool report(const char *what, double got, double expected) {
  printf("  %-44s %14.1f  %s\n", what, got, got == expected ? "ok" : "WRONG");
  if (got != expected) fprintf(stderr, "%s: got %.1f, expected %.1f\n", what, got, expected);
  return got == expected;
}

enum { N = 1 << 16, MAX_RESOURCES = 64 };
static float data[N], out[N];

int main(void) {
  int status = 1;
  bool ok = true;
  vkds_context *ctx = NULL;
  vkds_policy *pol = NULL;
  vkds_buffer *buf = NULL;

  CHECK(vkds_context_create(&(vkds_context_info){.log = logger, .log_level = VKDS_LOG_WARN}, &ctx));

  /* The policy gets the queues of the first device only: the device buffer below lives
   * there, and a buffer is passed directly on its own device only (on another it would
   * be staged through the host, which works but costs two copies). */
  void *queues[MAX_RESOURCES];
  uint32_t queue_count = 0;
  for (uint32_t i = 0; i < vkds_context_resource_count(ctx) && queue_count < MAX_RESOURCES; ++i) {
    vkds_resource_info info;
    CHECK(vkds_resource_get_info(vkds_context_resource(ctx, i), &info));
    if (info.device_index == 0) queues[queue_count++] = vkds_context_resource(ctx, i);
  }
  vkds_resource *res = queues[0];
  CHECK(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_DYNAMIC_LOAD,
                                               .resources = {.context = ctx,
                                                             .resource_count = queue_count,
                                                             .resources = queues}},
                           &pol));

  double host_sum = 0, host_max_dist = 0, host_sum_2x1 = 0;
  for (uint32_t i = 0; i < N; ++i) {
    data[i] = (float)(i % 17);
    host_sum += data[i];
    host_sum_2x1 += 2.0 * data[i] + 1.0;
    double dist = data[i] > 5.0f ? data[i] - 5.0 : 5.0 - data[i];
    if (dist > host_max_dist) host_max_dist = dist;
  }

  /* ---- host memory: staged ---------------------------------------------------------- */
  /* A sequence is a small value describing elements: here N floats of host memory. */
  vkds_seq host_in = vkds_seq_host(data, N, VKDS_F32);
  vkds_seq host_out = vkds_seq_host(out, N, VKDS_F32);
  /* The trait asks: can a kernel on this device use the sequence as it is? Plain host
   * memory: no, so every call below copies it (streamed in chunks) to the device. */
  printf("host memory:   passed directly = %s\n", vkds_seq_is_passed_directly(&host_in, res) ? "yes" : "no");

  float sum = 0;
  CHECK(vkds_reduce(pol, &host_in, NULL, NULL, &sum)); /* NULL op: plus; NULL init: none */
  ok &= report("reduce(host)", sum, host_sum);

  /* out[i] = op(data[i]); the operator is a GLSL expression of `x`, compiled into the
   * kernel. The results come back into `out`. */
  CHECK(vkds_transform(pol, &host_in, &host_out, "x * 2.0 + 1.0"));
  uint32_t wrong = 0;
  for (uint32_t i = 0; i < N; ++i) wrong += out[i] != 2.0f * data[i] + 1.0f;
  ok &= report("transform(host) wrong elements", wrong, 0);

  /* ---- a device buffer: passed directly --------------------------------------------- */
  CHECK(vkds_buffer_create(res, &(vkds_buffer_info){.size = sizeof data}, &buf));
  CHECK(vkds_upload(res, vkds_view_of(buf), data, sizeof data));
  vkds_seq dev = vkds_seq_buffer(vkds_view_of(buf), VKDS_F32); /* N floats: the whole buffer */
  printf("device buffer: passed directly = %s\n", vkds_seq_is_passed_directly(&dev, res) ? "yes" : "no");

  /* In place (out may be the input itself): the data never leave the device. */
  CHECK(vkds_transform(pol, &dev, &dev, "x * 2.0 + 1.0"));
  CHECK(vkds_reduce(pol, &dev, NULL, NULL, &sum));
  ok &= report("reduce(transform(buffer)) in place", sum, host_sum_2x1);

  /* transform_reduce: the reduction of op(x), without storing op(x) anywhere. Here the
   * reduction is max instead of plus (a vkds_op), and the transform's value is
   * converted to the reduction's type, F32 (VKDS_TYPE_BYTES would mean: the input's). */
  float max_dist = 0;
  CHECK(vkds_transform_reduce(pol, &dev, "abs((x - 1.0) / 2.0 - 5.0)", VKDS_F32, &(vkds_op){.kind = VKDS_OP_MAX},
                              NULL, &max_dist));
  ok &= report("transform_reduce(buffer, max |x - 5|)", max_dist, host_max_dist);

  /* ---- views: code, not copies ------------------------------------------------------ */
  /* reverse(dev)[i] = dev[N-1-i]. A view is passed directly when its base is. Copying it
   * into host memory makes a kernel that reads dev backwards and streams to `out`. */
  vkds_seq rev = vkds_seq_reverse(&dev);
  vkds_seq rev_host = vkds_seq_reverse(&host_in);
  printf("reverse(buffer): passed directly = %s, reverse(host): %s\n",
         vkds_seq_is_passed_directly(&rev, res) ? "yes" : "no",
         vkds_seq_is_passed_directly(&rev_host, res) ? "yes" : "no");
  CHECK(vkds_transform(pol, &rev, &host_out, "x"));
  wrong = 0;
  for (uint32_t i = 0; i < N; ++i) wrong += out[i] != 2.0f * data[N - 1 - i] + 1.0f;
  ok &= report("transform(reverse(buffer)) wrong elements", wrong, 0);

  /* counting(0, N) is 0, 1, ..., N-1, computed on the device: no memory at all. */
  vkds_seq count = vkds_seq_counting(0, N, VKDS_U32);
  printf("counting:      passed directly = %s\n", vkds_seq_is_passed_directly(&count, res) ? "yes" : "no");
  uint32_t count_sum = 0;
  CHECK(vkds_reduce(pol, &count, NULL, NULL, &count_sum)); /* result is a uint32_t: the sequence's type */
  ok &= report("reduce(counting(0, N))", count_sum, (double)N * (N - 1) / 2);

  if (ok) status = 0;

done:
  vkds_buffer_destroy(buf);
  vkds_policy_release(pol);
  vkds_context_destroy(ctx);
  if (atomic_load(&validation_messages) > 0) {
    fprintf(stderr, "%d validation message(s)\n", atomic_load(&validation_messages));
    status = 1;
  }
  return status;
}
