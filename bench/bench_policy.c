/* bench/bench_policy.c: the policies.
 *
 * --select: the cost of vkds_select + vkds_selection_release per policy, over 1, 8 and
 *   64 opaque resources (a backend that does nothing), on 1 and 4 threads, against a
 *   bare atomic increment measured in the same run (the floor of any shared counter).
 *   The selection is released unsubmitted, so it gives its place back (the policy's
 *   in-flight count goes down again); one task stays in flight on every resource.
 * --balance: many independent GPU tasks of mixed sizes over resources of unequal speed
 *   (resource r runs every task 1 + r % 4 times slower); each policy's makespan against
 *   the ideal: total work over the total throughput, the sum of what each resource
 *   reaches alone (measured in the same run). Resources that share hardware (lavapipe's
 *   devices share two CPU cores) cannot reach that sum; the all-at-once throughput is
 *   printed next to it. The slowdowns are this benchmark's: real queues of one device
 *   run a task at one speed, and earliest finish rates them so (the best any of them
 *   measured), so on one device it tells them apart by the queued work only and keeps to
 *   the first it finds fastest (resource 0 here, whose slowdown is 1).
 * --balance-devices: the same over the first queue of every device with no slowdown
 *   added: the devices differ by what they are (the GPU next to lavapipe).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <vulkan/vulkan.h>

#include "../examples/cpu_pool.h"
#include "../tests/gpu_counter.h"
#include "bench.h"

static const struct {
  const char *name;
  vkds_policy_kind kind;
} POLICIES[] = {
    {"fixed", VKDS_POLICY_FIXED},
    {"round_robin", VKDS_POLICY_ROUND_ROBIN},
    {"dynamic_load", VKDS_POLICY_DYNAMIC_LOAD},
    {"auto_tune", VKDS_POLICY_AUTO_TUNE},
    {"earliest_finish", VKDS_POLICY_EARLIEST_FINISH},
};
#define POLICY_COUNT (sizeof POLICIES / sizeof POLICIES[0])

/* ---- --select ---- */

static const vkds_resource_kind opaque = {.name = "opaque"};

static uint32_t all_reports(vkds_backend *b, uint32_t index, uint32_t reports) {
  (void)b, (void)index;
  return reports;
}

static const vkds_backend_ops null_backend = {.version = VKDS_BACKEND_OPS_VERSION, .name = "null",
                                              .supports = all_reports};

typedef struct select_job {
  vkds_policy *p;
  uint32_t iterations;
  _Atomic uint64_t *counter; /* for the baseline */
  double ns;
} select_job;

static void *select_loop(void *arg) {
  select_job *j = arg;
  vkds_task_info hints = {.key = 1};
  uint64_t t0 = bench_now_ns();
  for (uint32_t i = 0; i < j->iterations; ++i) {
    vkds_selection *sel;
    if (vkds_select(j->p, &hints, &sel) == VKDS_SUCCESS) vkds_selection_release(sel);
  }
  j->ns = (double)(bench_now_ns() - t0) / j->iterations;
  return NULL;
}

static void *atomic_loop(void *arg) {
  select_job *j = arg;
  uint64_t t0 = bench_now_ns();
  for (uint32_t i = 0; i < j->iterations; ++i) atomic_fetch_add_explicit(j->counter, 1, memory_order_relaxed);
  j->ns = (double)(bench_now_ns() - t0) / j->iterations;
  return NULL;
}

/* Runs `fn` on `threads` threads; returns the mean ns per call. */
static double on_threads(void *(*fn)(void *), select_job proto, int threads) {
  pthread_t t[4];
  select_job jobs[4];
  for (int i = 0; i < threads; ++i) jobs[i] = proto, pthread_create(&t[i], NULL, fn, &jobs[i]);
  double sum = 0;
  for (int i = 0; i < threads; ++i) pthread_join(t[i], NULL), sum += jobs[i].ns;
  return sum / threads;
}

int bench_select(vkds_context *ctx, const bench_options *opt) {
  (void)ctx;
  uint32_t iterations = opt->count ? opt->count : 200000;
  static int dummy[64];
  void *res[64];
  for (int i = 0; i < 64; ++i) res[i] = &dummy[i];
  _Atomic uint64_t counter = 0;
  printf("%-16s %9s %8s %12s %10s %16s\n", "policy", "resources", "threads", "ns/select", "vs atomic", "trials min-max");
  enum { TRIALS = 5 };
  for (int threads = 1; threads <= 4; threads *= 4) {
    double floor = on_threads(atomic_loop, (select_job){.iterations = iterations, .counter = &counter}, threads);
    printf("%-16s %9s %8d %12.1f %10s\n", "(atomic add)", "-", threads, floor, "1.00x");
    for (size_t k = 0; k < POLICY_COUNT; ++k)
      for (uint32_t n = 1; n <= 64; n *= 8) {
        /* the median of TRIALS, each with a fresh policy on fresh threads: one trial's
         * figure can hang on where its allocations happened to land */
        double trial[TRIALS];
        for (int t = 0; t < TRIALS; ++t) {
          vkds_policy *p;
          vkds_result r = vkds_policy_create(&(vkds_policy_info){.kind = POLICIES[k].kind,
              .resources = {.kind = &opaque, .resource_count = n, .resources = res, .backend_ops = &null_backend}}, &p);
          if (r != VKDS_SUCCESS) {
            fprintf(stderr, "vkds-bench: %s: %s\n", POLICIES[k].name, vkds_last_error_message());
            return 1;
          }
          /* one task in flight on each resource throughout: dynamic load then scans them
           * all and earliest finish has queued work to estimate (idle resources would let
           * both stop early) */
          vkds_selection *held[64] = {0};
          for (uint32_t i = 0; i < n; ++i) vkds_select(p, &(vkds_task_info){.key = 1}, &held[i]);
          trial[t] = on_threads(select_loop, (select_job){.p = p, .iterations = iterations}, threads);
          for (uint32_t i = 0; i < n; ++i) vkds_selection_release(held[i]);
          vkds_policy_release(p);
        }
        double lo = trial[0], hi = trial[0];
        for (int t = 1; t < TRIALS; ++t) lo = trial[t] < lo ? trial[t] : lo, hi = trial[t] > hi ? trial[t] : hi;
        double ns = bench_median(trial, TRIALS);
        printf("%-16s %9u %8d %12.1f %9.2fx %8.1f-%.1f\n", POLICIES[k].name, n, threads, ns, ns / floor, lo, hi);
      }
  }
  printf("ns/select: vkds_select + vkds_selection_release, mean over %u calls per thread,\n"
         "one task in flight on every resource; the median of %d trials;\n"
         "vs atomic: against one relaxed atomic add on a shared counter, same threads, same run.\n", iterations, TRIALS);
  return 0;
}

/* ---- --balance ---- */

enum { MAX_RES = 16, SIZES = 4 };

typedef struct balance {
  vkds_context *ctx;
  uint32_t n;              /* resources used */
  void *res[MAX_RES];
  uint32_t slow[MAX_RES];  /* per resource: every task runs this many times its size */
  gpu_counter *counters;   /* per device */
  uint32_t unit;           /* iterations of one unit of work */
} balance;

typedef struct task_arg {
  const balance *bal;
  uint32_t size; /* units */
} task_arg;

static uint32_t slowdown(uint32_t resource_index) { return 1 + resource_index % 4; }

static vkds_result record_task(void *user, const vkds_task *task, void **wait_object) {
  (void)wait_object;
  const task_arg *a = user;
  const balance *b = a->bal;
  vkds_resource_info ri;
  vkds_resource_get_info(task->resource, &ri);
  /* every policy and backend here is made over b->res, so the index is the position */
  gpu_counter_record(&b->counters[ri.device_index], task->cmd, 1, 2, b->unit * a->size * b->slow[task->resource_index]);
  return VKDS_SUCCESS;
}

/* Units per second: each resource alone (summed into *solo_sum, the best in *solo_best)
 * and every resource flooded at once (returned), each running the first `per_resource`
 * tasks of the workload itself. (Unit tasks would not do: on the H200 a task of 8 units
 * ran 1.23x longer per unit than one of 1, so an ideal from unit tasks was 14% too
 * optimistic.) */
static double concurrent_throughput(balance *b, const task_arg *tasks, uint32_t per_resource, double *solo_sum,
                                    double *solo_best) {
  vkds_backend *be;
  if (vkds_backend_create(&(vkds_backend_info){.resource_count = b->n, .resources = b->res, .spin_ns = 1}, &be) != VKDS_SUCCESS)
    return 0;
  vkds_selection *sel[MAX_RES];
  vkds_submission *last[MAX_RES];
  uint64_t units = 0;
  for (uint32_t k = 0; k < per_resource; ++k) units += tasks[k].size;
  for (uint32_t i = 0; i < b->n; ++i) vkds_selection_create(be, i, 0, NULL, &sel[i]);
  /* warm, untimed: each resource's first tasks made its pipeline and command pools inside
   * the timed "alone" run, and at small counts the ideal came out up to 50x too slow
   * (policies at 0.02x of it; a CLI probe) */
  for (uint32_t i = 0; i < b->n; ++i)
    for (uint32_t k = 0; k < 4; ++k)
      vkds_selection_submit(sel[i], &(vkds_task_info){.fn = record_task, .user = (void *)&tasks[k % per_resource]}, NULL);
  vkds_backend_wait_all(be, UINT64_MAX);
  /* alone, one after another */
  *solo_sum = 0, *solo_best = 0;
  for (uint32_t i = 0; i < b->n; ++i) {
    uint64_t t0 = bench_now_ns();
    for (uint32_t k = 0; k < per_resource; ++k)
      vkds_selection_submit(sel[i], &(vkds_task_info){.fn = record_task, .user = (void *)&tasks[k]}, NULL);
    vkds_backend_wait_all(be, UINT64_MAX);
    double solo = (double)units / ((double)(bench_now_ns() - t0) * 1e-9);
    *solo_sum += solo;
    if (solo > *solo_best) *solo_best = solo;
  }
  /* all at once */
  uint64_t t0 = bench_now_ns();
  for (uint32_t k = 0; k < per_resource; ++k)
    for (uint32_t i = 0; i < b->n; ++i)
      vkds_selection_submit(sel[i], &(vkds_task_info){.fn = record_task, .user = (void *)&tasks[k]},
                            k + 1 == per_resource ? &last[i] : NULL);
  /* wait in the order they should finish (fastest first), sleeping, so that the waiting
   * thread takes no CPU from a CPU device */
  double total = 0;
  for (uint32_t s = 1; s <= 4; ++s)
    for (uint32_t i = 0; i < b->n; ++i)
      if (b->slow[i] == s) {
        vkds_submission_wait(last[i]);
        total += (double)units / ((double)(bench_now_ns() - t0) * 1e-9);
        vkds_submission_release(last[i]);
      }
  for (uint32_t i = 0; i < b->n; ++i) vkds_selection_release(sel[i]);
  vkds_backend_destroy(be);
  return total;
}

/* Submits the workload through a policy; returns the makespan in seconds. */
static double run_workload(vkds_policy *p, const task_arg *tasks, uint32_t count) {
  uint64_t t0 = bench_now_ns();
  for (uint32_t i = 0; i < count; ++i)
    vkds_submit(p, &(vkds_task_info){.fn = record_task, .user = (void *)&tasks[i], .key = tasks[i].size,
                                     .bytes = 0}, NULL);
  vkds_policy_wait_all(p, UINT64_MAX);
  return (double)(bench_now_ns() - t0) * 1e-9;
}

/* per_device: the first queue of every device, each at its own speed (the GPU next to
 * lavapipe); else the first 16 resources with slowdown 1 + index % 4. */
static int balance_run(vkds_context *ctx, const bench_options *opt, bool per_device) {
  balance b = {.ctx = ctx};
  for (uint32_t i = 0, d = UINT32_MAX; i < vkds_context_resource_count(ctx) && b.n < MAX_RES; ++i) {
    vkds_resource_info r;
    vkds_resource_get_info(vkds_context_resource(ctx, i), &r);
    if (per_device && r.device_index == d) continue;
    d = r.device_index;
    b.res[b.n] = vkds_context_resource(ctx, i);
    b.slow[b.n] = per_device ? 1 : slowdown(b.n);
    ++b.n;
  }
  vkds_resource_info ri;
  vkds_resource_get_info(b.res[0], &ri);
  b.unit = ri.device_type == VKDS_DEVICE_CPU ? 2000 : 20000;
  uint32_t devices = vkds_context_device_count(ctx);
  b.counters = calloc(devices, sizeof *b.counters);
  if (!b.counters) {
    fprintf(stderr, "vkds-bench: out of host memory\n");
    return 1;
  }
  for (uint32_t i = 0, d = UINT32_MAX; i < vkds_context_resource_count(ctx); ++i) {
    vkds_resource_info r;
    vkds_resource_get_info(vkds_context_resource(ctx, i), &r);
    if (r.device_index != d && gpu_counter_create(&b.counters[r.device_index], vkds_context_resource(ctx, i)) != VK_SUCCESS) {
      fprintf(stderr, "vkds-bench: cannot create the counter pipeline\n");
      return 1;
    }
    d = r.device_index;
  }
  uint32_t count = opt->count ? opt->count : (ri.device_type == VKDS_DEVICE_CPU ? 400 : 4000);
  task_arg *tasks = calloc(count, sizeof *tasks);
  if (!tasks) { /* (--count 4294967295 crashed here) */
    fprintf(stderr, "vkds-bench: --count %u: out of host memory for the tasks\n", count);
    for (uint32_t d = 0; d < devices; ++d) gpu_counter_destroy(&b.counters[d]);
    free(b.counters);
    return 1;
  }
  uint64_t units = 0, rng = 12345;
  for (uint32_t i = 0; i < count; ++i) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    tasks[i] = (task_arg){.bal = &b, .size = 1u << ((rng >> 33) % SIZES)}; /* 1, 2, 4 or 8 units */
    units += tasks[i].size;
  }
  double solo = 0, best_solo = 0;
  uint32_t per_resource = count / b.n / 2 + 1;
  double rate = concurrent_throughput(&b, tasks, per_resource < count ? per_resource : count, &solo, &best_solo);
  /* the ideal treats resources as independent, each at the throughput it reaches alone;
   * where they share hardware (lavapipe's devices share the CPU) it is a lower bound */
  double ideal = (double)units / solo;
  /* where the resources take turns on one device, the best is every unit at the cheapest
   * resource's cost: units over the best single resource's throughput (the fixed row
   * below measures it: everything on resource 0, the fastest) */
  double ideal_shared = (double)units / best_solo;
  printf("%u resources (%s), %u tasks, %llu units of %u iterations\n", b.n,
         per_device ? "the first queue of each device, each at its own speed" : "slowdown 1 + index % 4", count,
         (unsigned long long)units, b.unit);
  printf("throughput: %.0f units/s summed over each resource alone (the ideal's), %.0f all at once\n", solo, rate);
  printf("ideal makespan: %.2f ms if the resources were independent; %.2f ms if they take turns\n"
         "on shared hardware (every unit on the cheapest resource)\n\n%-16s %12s %12s %12s %12s\n",
         ideal * 1e3, ideal_shared * 1e3, "policy", "cold ms", "warm ms", "/indep.", "/shared");
  /* fixed (everything on resource 0, the fastest) is not a balancer: it is the measured
   * form of the shared ideal */
  for (size_t k = 0; k < POLICY_COUNT; ++k) {
    vkds_policy *p;
    if (vkds_policy_create(&(vkds_policy_info){.kind = POLICIES[k].kind,
            .resources = {.resource_count = b.n, .resources = b.res}}, &p) != VKDS_SUCCESS) {
      fprintf(stderr, "vkds-bench: %s: %s\n", POLICIES[k].name, vkds_last_error_message());
      continue;
    }
    double cold = run_workload(p, tasks, count); /* includes learning */
    uint64_t before[MAX_RES];
    for (uint32_t i = 0; i < b.n; ++i) {
      vkds_policy_resource_stats st;
      vkds_policy_get_resource_stats(p, i, &st);
      before[i] = st.selections;
    }
    double warm = run_workload(p, tasks, count);
    printf("%-16s %12.2f %12.2f %11.2fx %11.2fx   warm tasks per resource:", POLICIES[k].name, cold * 1e3,
           warm * 1e3, warm / ideal, warm / ideal_shared);
    for (uint32_t i = 0; i < b.n; ++i) {
      vkds_policy_resource_stats st;
      vkds_policy_get_resource_stats(p, i, &st);
      printf(" %llu", (unsigned long long)(st.selections - before[i]));
    }
    printf("\n");
    if (bench_env_on("VKDS_BENCH_KEYS")) /* what a timing policy measured: mean/best µs per key, per resource */
      for (uint32_t i = 0; i < b.n; ++i) {
        printf("    resource %2u:", i);
        for (uint64_t key = 1; key <= 8; key *= 2) {
          vkds_policy_key_stats ks;
          if (vkds_policy_get_key_stats(p, i, key, &ks) == VKDS_SUCCESS)
            printf("  key %llu: %llu x %.0f/%.0f", (unsigned long long)key, (unsigned long long)ks.samples,
                   ks.mean_ns / 1e3, ks.best_ns / 1e3);
        }
        printf("\n");
      }
    vkds_policy_release(p);
  }
  printf("cold: the first run of a fresh policy (auto tune and earliest finish learn during it);\n"
         "warm: the same workload again through the same policy. Both ideals from throughputs\n"
         "measured above, same run.\n");
  for (uint32_t d = 0; d < devices; ++d) gpu_counter_destroy(&b.counters[d]);
  free(b.counters);
  free(tasks);
  return 0;
}

int bench_balance(vkds_context *ctx, const bench_options *opt) { return balance_run(ctx, opt, false); }
int bench_balance_devices(vkds_context *ctx, const bench_options *opt) { return balance_run(ctx, opt, true); }

/* ---- --balance-cpu: the same over independent resources ----
 * One-thread CPU pools (examples/cpu_pool*) as resources: on a machine with a core per
 * pool they really run side by side, which the queues of one GPU do not. A task of size
 * z on pool r spins for z * (1 + r % 4) units of 100 µs. */

static void spin_units(void *arg) {
  uint64_t until = bench_now_ns() + (uint64_t)(uintptr_t)arg * 100000u;
  while (bench_now_ns() < until) {
  }
}

typedef struct cpu_task_arg {
  uint32_t size;
} cpu_task_arg;

static vkds_result enqueue_spin(void *user, const vkds_task *task, void **wait_object) {
  const cpu_task_arg *a = user;
  uint32_t slow = slowdown(task->resource_index);
  *wait_object = cpu_pool_run(task->resource, spin_units, (void *)(uintptr_t)(a->size * slow));
  return *wait_object ? VKDS_SUCCESS : VKDS_ERROR_OUT_OF_HOST_MEMORY;
}

int bench_balance_cpu(vkds_context *ctx, const bench_options *opt) {
  (void)ctx;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  uint32_t n = cores > 1 ? (uint32_t)(cores - 1 < 8 ? cores - 1 : 8) : 1; /* a core left for submitting */
  cpu_pool *pools[8];
  for (uint32_t i = 0; i < n; ++i) pools[i] = cpu_pool_create(1);
  vkds_backend_register(&cpu_pool_kind, &cpu_pool_backend_ops);
  uint32_t count = opt->count ? opt->count : 400;
  cpu_task_arg *tasks = calloc(count, sizeof *tasks);
  if (!tasks) {
    fprintf(stderr, "vkds-bench: --count %u: out of host memory for the tasks\n", count);
    vkds_backend_register(&cpu_pool_kind, NULL);
    for (uint32_t i = 0; i < n; ++i) cpu_pool_destroy(pools[i]);
    return 1;
  }
  uint64_t units = 0, rng = 12345;
  for (uint32_t i = 0; i < count; ++i) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    tasks[i] = (cpu_task_arg){.size = 1u << ((rng >> 33) % SIZES)};
    units += tasks[i].size;
  }
  double rate = 0; /* units per second, each pool alone: 1 / (slowdown * 100 µs) */
  for (uint32_t i = 0; i < n; ++i) rate += 1.0 / (slowdown(i) * 100e-6);
  double ideal = (double)units / rate;
  printf("%u one-thread CPU pools (slowdown 1 + index %% 4), %u tasks, %llu units of 100 us\n", n, count,
         (unsigned long long)units);
  printf("ideal makespan: %.2f ms (total units over the summed throughput)\n\n%-16s %14s %14s %12s\n",
         ideal * 1e3, "policy", "cold ms", "warm ms", "warm/ideal");
  for (size_t k = 1; k < POLICY_COUNT; ++k) {
    vkds_policy *p;
    if (vkds_policy_create(&(vkds_policy_info){.kind = POLICIES[k].kind,
            .resources = {.kind = &cpu_pool_kind, .resource_count = n, .resources = (void *const *)pools}}, &p) != VKDS_SUCCESS) {
      fprintf(stderr, "vkds-bench: %s: %s\n", POLICIES[k].name, vkds_last_error_message());
      continue;
    }
    double ms[2];
    for (int run = 0; run < 2; ++run) {
      uint64_t t0 = bench_now_ns();
      for (uint32_t i = 0; i < count; ++i)
        vkds_submit(p, &(vkds_task_info){.fn = enqueue_spin, .user = &tasks[i], .key = tasks[i].size}, NULL);
      vkds_policy_wait_all(p, UINT64_MAX);
      ms[run] = (double)(bench_now_ns() - t0) * 1e-6;
    }
    printf("%-16s %14.2f %14.2f %11.2fx\n", POLICIES[k].name, ms[0], ms[1], ms[1] * 1e-3 / ideal);
    vkds_policy_release(p);
  }
  printf("cold: a fresh policy (auto tune and earliest finish learn during it); warm: the same\n"
         "workload again through the same policy.\n");
  vkds_backend_register(&cpu_pool_kind, NULL);
  for (uint32_t i = 0; i < n; ++i) cpu_pool_destroy(pools[i]);
  free(tasks);
  return 0;
}
