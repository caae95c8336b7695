/* examples/several_gpus.c: one job spread over every device of the machine.
 *
 * vkds does not split an algorithm call across devices: a call runs where its policy
 * puts it. Spreading a job is then a matter of cutting it into calls and letting a
 * policy over several devices place them, from a few threads so that the devices work at
 * the same time (a blocking call keeps its thread until its result is back). This
 * program does that three ways, and checks every result against the host:
 *
 *   1. Host data: the sum of a large array in host memory, cut into chunks, each chunk a
 *      blocking vkds_reduce from one of a few worker threads, through an earliest-finish
 *      policy over the first queue of each device. Every chunk is staged (copied to the
 *      device that runs it), so on GPUs with links of their own the copies run side by
 *      side. Timed against the same work through one device.
 *   2. Device data: each device holds part of the array in a buffer of its own, and each
 *      chunk's call reads a range of one of them. The policy learns from the sequence
 *      where its data lives and runs the call there, passed directly; on another device
 *      it would have to be copied through the host (which works, only slower). The
 *      program prints where the calls ran.
 *   3. Host data imported: with VK_EXT_external_memory_host a device reads host memory
 *      itself, over its link, and nothing is copied on the host. Chunk c is imported
 *      into device c % devices; the policy counts imported memory as living on its
 *      device, so each call runs there and reads its chunk in place. Timed against 1.
 *
 * With a single device (lavapipe, or one GPU) it makes two VkDevices on it
 * (devices_per_physical = 2), so the same code runs, without the speed-up.
 *
 *   ./several_gpus [MiB]        the array's size (default 256 on GPUs, 16 on a CPU device)
 *   VKDS_DEVICES=gpu ./several_gpus
 *
 * Exits 0 when every sum was right and the validation layer (VKDS_VALIDATION=1) had
 * nothing to say. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <vkds/vkds.h>

#define CHECK(call)                                                                            \
  do {                                                                                         \
    vkds_result check_r_ = (call);                                                             \
    if (check_r_ != VKDS_SUCCESS) {                                                            \
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

enum { MAX_DEVICES = 16, CHUNKS = 32, THREADS_PER_DEVICE = 2, ROUNDS = 3 };

/* The job: CHUNKS calls, each over one chunk's sequence, taken by the workers in turn. */
typedef struct job {
  vkds_policy *policy;
  vkds_seq chunk[CHUNKS];
  uint32_t partial[CHUNKS]; /* each call's sum (u32: wraps, as the host's below) */
  atomic_uint next;         /* the next chunk to take */
  atomic_int failed;        /* a call failed (its message went to stderr) */
} job;

static void *worker(void *arg) {
  job *j = arg;
  for (unsigned c; (c = atomic_fetch_add(&j->next, 1)) < CHUNKS;) {
    /* NULL op: plus; NULL init: none. The policy picks the queue, per call. */
    if (vkds_reduce(j->policy, &j->chunk[c], NULL, NULL, &j->partial[c]) != VKDS_SUCCESS) {
      fprintf(stderr, "chunk %u: %s\n", c, vkds_last_error_message()); /* (the thread's own message) */
      atomic_store(&j->failed, 1);
      return NULL;
    }
  }
  return NULL;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Runs the job with `threads` workers; returns its wall time in ms (negative: failed),
 * and its sum in *sum. */
static double run(job *j, uint32_t threads, uint32_t *sum) {
  pthread_t t[MAX_DEVICES * THREADS_PER_DEVICE];
  atomic_store(&j->next, 0);
  atomic_store(&j->failed, 0);
  double start = now_ms();
  uint32_t started = 0;
  while (started < threads && pthread_create(&t[started], NULL, worker, j) == 0) ++started;
  if (started == 0) worker(j); /* (no threads to be had: this one does the work) */
  for (uint32_t i = 0; i < started; ++i) pthread_join(t[i], NULL);
  double ms = now_ms() - start;
  *sum = 0;
  for (uint32_t c = 0; c < CHUNKS; ++c) *sum += j->partial[c];
  return atomic_load(&j->failed) ? -1.0 : ms;
}

/* The best of ROUNDS runs (the machine may be busy with something else now and then). */
static double best_of(job *j, uint32_t threads, uint32_t expected, bool *ok) {
  double best = -1.0;
  for (int r = 0; r < ROUNDS; ++r) {
    uint32_t sum = 0;
    double ms = run(j, threads, &sum);
    if (ms < 0 || sum != expected) {
      if (ms >= 0) fprintf(stderr, "sum %u, expected %u\n", sum, expected);
      *ok = false;
      return -1.0;
    }
    if (best < 0 || ms < best) best = ms;
  }
  return best;
}

/* How many of the CHUNKS chunks device d of `devices` has (chunk c goes to device c % devices). */
static uint32_t chunks_of(uint32_t d, uint32_t devices) { return (CHUNKS - d + devices - 1) / devices; }

/* The picks of each of the policy's resources so far (its statistics): one per device. */
static vkds_result picks_so_far(const vkds_policy *p, uint32_t devices, uint64_t *picks) {
  for (uint32_t d = 0; d < devices; ++d) {
    vkds_policy_resource_stats st;
    vkds_result r = vkds_policy_get_resource_stats(p, d, &st);
    if (r != VKDS_SUCCESS) return r;
    picks[d] = st.selections;
  }
  return VKDS_SUCCESS;
}

/* Prints where the calls since `before` ran, beside the chunks each device `has` (its
 * data: "holds", "imported"). */
static vkds_result print_placement(const vkds_policy *p, uint32_t devices, const uint64_t *before, const char *has) {
  uint64_t now[MAX_DEVICES];
  vkds_result r = picks_so_far(p, devices, now);
  for (uint32_t d = 0; r == VKDS_SUCCESS && d < devices; ++d)
    printf("  device %u: %llu calls ran there, of the %u whose chunks it %s\n", d,
           (unsigned long long)(now[d] - before[d]), ROUNDS * chunks_of(d, devices), has);
  return r;
}

int main(int argc, char **argv) {
  int status = 1;
  bool ok = true;
  vkds_context *ctx = NULL;
  vkds_policy *one = NULL, *all = NULL;
  vkds_buffer *held[MAX_DEVICES] = {0}, *imported[CHUNKS] = {0};
  uint32_t *data = NULL;
  static job job_one, job_all, job_held, job_imported;

  /* the size first, a whole number of MiB (0: the default, below): "1.5" read as 1 and
   * "abc" was refused only after the devices were listed (a new-user probe) */
  uint64_t mib = 0;
  if (argc > 1) {
    char *end;
    errno = 0;
    mib = strtoull(argv[1], &end, 10);
    if (argc > 2 || end == argv[1] || *end || errno || argv[1][0] == '-' || mib == 0 || mib > (1u << 16)) {
      fprintf(stderr, "usage: %s [MiB] (a whole number, 1 to 65536)\n", argv[0]);
      return 2;
    }
  }

  vkds_context_info info = {.log = logger, .log_level = VKDS_LOG_WARN};
  CHECK(vkds_context_create(&info, &ctx));
  if (vkds_context_device_count(ctx) == 1) {
    vkds_context_destroy(ctx);
    ctx = NULL;
    info.devices_per_physical = 2;
    CHECK(vkds_context_create(&info, &ctx));
  }

  /* The first queue of each device: one resource per device. (A device's other queues
   * share its memory and its link to the host, so for this job they add little.) */
  void *first[MAX_DEVICES];
  uint32_t devices = 0;
  bool cpu = false;
  for (uint32_t i = 0; i < vkds_context_resource_count(ctx); ++i) {
    vkds_resource_info ri;
    CHECK(vkds_resource_get_info(vkds_context_resource(ctx, i), &ri));
    if (ri.device_index == devices && devices < MAX_DEVICES) {
      first[devices++] = vkds_context_resource(ctx, i);
      cpu |= ri.device_type == VKDS_DEVICE_CPU;
      printf("device %u: %s\n", ri.device_index, ri.device_name);
    }
  }

  if (!mib) mib = cpu ? 16 : 256;
  uint64_t n = mib * (1u << 20) / sizeof(uint32_t), per_chunk = n / CHUNKS;
  n = per_chunk * CHUNKS;
  /* page-aligned (64 KiB), so that its chunks can be imported (part 3) */
  void *mem = NULL;
  if (posix_memalign(&mem, 1 << 16, n * sizeof *data) == 0) data = mem;
  if (!data) {
    fprintf(stderr, "out of host memory for %llu MiB\n", (unsigned long long)mib);
    goto done;
  }
  uint32_t expected = 0, x = 2463534242u;
  for (uint64_t i = 0; i < n; ++i) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5; /* xorshift32: the data */
    data[i] = x;
    expected += x; /* the reduce's u32 plus wraps the same way */
  }

  /* Policies: one device (fixed on device 0's first queue) and every device (earliest
   * finish: it weighs each device's queued work, its measured speed and the data it
   * would have to copy). */
  vkds_policy_resources res = {.context = ctx, .resource_count = devices, .resources = first};
  CHECK(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = res}, &one));
  CHECK(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_EARLIEST_FINISH, .resources = res}, &all));

  /* ---- 1. host data ---------------------------------------------------------------- */
  job_one.policy = one;
  job_all.policy = all;
  for (uint32_t c = 0; c < CHUNKS; ++c)
    job_one.chunk[c] = job_all.chunk[c] = vkds_seq_host(data + c * per_chunk, per_chunk, VKDS_U32);
  /* A first call per device compiles the kernel (once per context, then cached) and
   * gives earliest finish its first measurements; neither belongs in the times. */
  for (uint32_t d = 0; d < devices; ++d) {
    vkds_policy *p = NULL;
    uint32_t s;
    CHECK(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = res, .fixed_index = d}, &p));
    vkds_result r = vkds_reduce(p, &job_one.chunk[0], NULL, NULL, &s);
    vkds_policy_release(p);
    CHECK(r);
  }
  uint32_t sum;
  if (run(&job_all, devices * THREADS_PER_DEVICE, &sum) < 0) goto done; /* earliest finish's warm-up */
  double t_one = best_of(&job_one, THREADS_PER_DEVICE, expected, &ok);
  double t_all = best_of(&job_all, devices * THREADS_PER_DEVICE, expected, &ok);
  if (!ok) goto done;
  double gb = (double)n * sizeof *data / 1e9;
  printf("host data, %llu MiB in %u chunks (best of %d):\n", (unsigned long long)mib, CHUNKS, ROUNDS);
  printf("  one device:    %8.2f ms  %6.1f GB/s  (%u threads)\n", t_one, gb / t_one * 1e3, THREADS_PER_DEVICE);
  printf("  %2u devices:    %8.2f ms  %6.1f GB/s  (%u threads)  %.2fx\n", devices, t_all, gb / t_all * 1e3,
         devices * THREADS_PER_DEVICE, t_one / t_all);

  /* ---- 2. device data -------------------------------------------------------------- */
  /* Chunk c lives on device c % devices, in that device's buffer, chunk after chunk. */
  for (uint32_t d = 0; d < devices; ++d)
    CHECK(vkds_buffer_create(first[d], &(vkds_buffer_info){.size = chunks_of(d, devices) * per_chunk * sizeof *data},
                             &held[d]));
  job_held.policy = all;
  for (uint32_t c = 0; c < CHUNKS; ++c) {
    uint32_t d = c % devices;
    vkds_view v = {held[d], (c / devices) * per_chunk * sizeof *data, per_chunk * sizeof *data};
    CHECK(vkds_upload(first[d], v, data + c * per_chunk, v.bytes));
    job_held.chunk[c] = vkds_seq_buffer(v, VKDS_U32);
  }
  uint64_t before[MAX_DEVICES];
  CHECK(picks_so_far(all, devices, before));
  double t_held = best_of(&job_held, devices * THREADS_PER_DEVICE, expected, &ok);
  if (!ok) goto done;
  printf("device data, chunk c held by device c %% %u (best of %d): %.2f ms\n", devices, ROUNDS, t_held);
  CHECK(print_placement(all, devices, before, "holds"));

  /* ---- 3. host data imported into the devices -------------------------------------- */
  uint64_t chunk_bytes = per_chunk * sizeof *data, align = 0;
  bool importable = true;
  for (uint32_t d = 0; d < devices; ++d) {
    uint64_t a = vkds_import_alignment(first[d]); /* 0: the device cannot import */
    importable &= a != 0 && chunk_bytes % a == 0 && (1u << 16) % a == 0;
    align = a > align ? a : align;
  }
  if (!importable) {
    printf("host data imported: not every device can import these chunks (alignment %llu)\n",
           (unsigned long long)align);
  } else {
    job_imported.policy = all;
    for (uint32_t c = 0; c < CHUNKS; ++c) {
      /* the memory stays the application's: it must outlive the import */
      CHECK(vkds_buffer_import_host(first[c % devices], data + c * per_chunk, chunk_bytes, &imported[c]));
      job_imported.chunk[c] = vkds_seq_host(data + c * per_chunk, per_chunk, VKDS_U32);
    }
    CHECK(picks_so_far(all, devices, before));
    double t_imp = best_of(&job_imported, devices * THREADS_PER_DEVICE, expected, &ok);
    if (!ok) goto done;
    printf("host data imported, chunk c into device c %% %u (best of %d): %.2f ms  %6.1f GB/s  %.2fx one device "
           "staged\n",
           devices, ROUNDS, t_imp, gb / t_imp * 1e3, t_one / t_imp);
    CHECK(print_placement(all, devices, before, "imported"));
  }
  printf("sums: %s\n", ok ? "ok" : "WRONG");
  if (ok) status = 0;

done:
  for (uint32_t d = 0; d < MAX_DEVICES; ++d) vkds_buffer_destroy(held[d]);
  for (uint32_t c = 0; c < CHUNKS; ++c) vkds_buffer_destroy(imported[c]); /* before the memory goes */
  vkds_policy_release(one);
  vkds_policy_release(all);
  vkds_context_destroy(ctx);
  free(data);
  if (atomic_load(&validation_messages) > 0) {
    fprintf(stderr, "%d validation message(s)\n", atomic_load(&validation_messages));
    status = 1;
  }
  return status;
}
