/* tests/test_policy.c: the policies (selectors/), with the fake backend where a test
 * needs exact timing or held completions, and on lavapipe for real. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "../examples/cpu_pool.h"
#include "fake_backend.h"
#include "gpu_counter.h"
#include "harness.h"
#include "multi_device.h"

/* ---- policies over fake resources ---- */

enum { N = 4 };
static fake_resource res[N];
static void *res_ptr[N];

static void fake_setup(void) {
  for (int i = 0; i < N; ++i) {
    res[i] = (fake_resource){.id = 4 + i, .cost_ns = {1000, 1000, 1000, 1000}};
    res_ptr[i] = &res[i];
  }
  fake_hold_completions(false);
}

static vkds_policy *fake_policy(vkds_policy_info info) {
  info.resources = (vkds_policy_resources){.kind = &fake_kind, .resource_count = N, .resources = res_ptr,
                                           .backend_ops = &fake_backend_ops};
  vkds_policy *p = NULL;
  ck_assert_vkds(vkds_policy_create(&info, &p));
  return p;
}

/* Submits one task; returns the id of the resource it ran on. how: 0 wait it,
 * 1 submit-and-wait, 2 fire and forget (group wait later). */
static int run_one(vkds_policy *p, uint64_t key, int how) {
  int id = -1;
  vkds_task_info t = {.fn = fake_task, .user = &id, .key = key};
  if (how == 1) {
    ck_assert_vkds(vkds_submit_and_wait(p, &t));
  } else if (how == 0) {
    vkds_submission *s;
    ck_assert_vkds(vkds_submit(p, &t, &s));
    ck_assert_vkds(vkds_submission_wait(s));
    vkds_submission_release(s);
  } else {
    ck_assert_vkds(vkds_submit(p, &t, NULL));
  }
  return id;
}

START_TEST(round_robin_cycles) {
  for (int how = 0; how < 3; ++how) {
    fake_setup();
    vkds_policy *p = fake_policy((vkds_policy_info){.kind = VKDS_POLICY_ROUND_ROBIN});
    ck_assert_str_eq(vkds_policy_name(p), "round_robin");
    for (int i = 1; i <= 100; ++i) ck_assert_int_eq(run_one(p, 0, how), 4 + (i - 1) % 4);
    ck_assert_vkds(vkds_policy_wait_all(p, UINT64_MAX));
    for (int i = 0; i < N; ++i) {
      vkds_policy_resource_stats st;
      ck_assert_vkds(vkds_policy_get_resource_stats(p, (uint32_t)i, &st));
      ck_assert_uint_eq(st.selections, 25);
      ck_assert(!st.tracks_completion); /* round robin needs no completion reports */
    }
    vkds_policy_release(p);
  }
}
END_TEST

typedef struct rr_thread {
  vkds_policy *p;
  int fails;
} rr_thread;

static void *rr_worker(void *arg) {
  rr_thread *t = arg;
  for (int i = 0; i < 25000; ++i)
    if (vkds_submit(t->p, &(vkds_task_info){.fn = fake_task}, NULL) != VKDS_SUCCESS) ++t->fails;
  return NULL;
}

START_TEST(round_robin_four_threads) {
  fake_setup();
  vkds_policy *p = fake_policy((vkds_policy_info){.kind = VKDS_POLICY_ROUND_ROBIN});
  pthread_t th[4];
  rr_thread args[4];
  for (int i = 0; i < 4; ++i) args[i] = (rr_thread){.p = p}, pthread_create(&th[i], NULL, rr_worker, &args[i]);
  for (int i = 0; i < 4; ++i) {
    pthread_join(th[i], NULL);
    ck_assert_int_eq(args[i].fails, 0);
  }
  for (int i = 0; i < N; ++i) ck_assert_int_eq(atomic_load(&res[i].runs), 25000);
  vkds_policy_release(p);
}
END_TEST

START_TEST(fixed_index) {
  for (uint32_t k = 0; k < N; ++k) {
    fake_setup();
    vkds_policy *p = fake_policy((vkds_policy_info){.kind = VKDS_POLICY_FIXED, .fixed_index = k});
    for (int i = 0; i < 20; ++i) ck_assert_int_eq(run_one(p, 0, i % 3), 4 + (int)k);
    vkds_policy_release(p);
  }
}
END_TEST

START_TEST(dynamic_load_balanced_with_synchronous_completion) {
  fake_setup();
  vkds_policy *p = fake_policy((vkds_policy_info){.kind = VKDS_POLICY_DYNAMIC_LOAD});
  for (int i = 0; i < 100; ++i) run_one(p, 0, 2);
  for (int i = 0; i < N; ++i) {
    ck_assert_int_eq(atomic_load(&res[i].runs), 25); /* ties rotate: not all on the first */
    vkds_policy_resource_stats st;
    ck_assert_vkds(vkds_policy_get_resource_stats(p, (uint32_t)i, &st));
    ck_assert(st.tracks_completion);
    ck_assert_uint_eq(st.in_flight, 0);
    ck_assert_uint_eq(st.completed, 25);
  }
  vkds_policy_release(p);
}
END_TEST

START_TEST(dynamic_load_follows_counts) {
  fake_setup();
  fake_hold_completions(true);
  vkds_policy *p = fake_policy((vkds_policy_info){.kind = VKDS_POLICY_DYNAMIC_LOAD});
  for (int i = 0; i < 8; ++i) run_one(p, 0, 2); /* two in flight on each */
  for (int i = 0; i < N; ++i) ck_assert_uint_eq(vkds_policy_in_flight(p, (uint32_t)i), 2);
  ck_assert_int_eq(fake_complete(6), 2); /* resource 2 (id 6) is free again */
  ck_assert_int_eq(run_one(p, 0, 2), 6);
  ck_assert_int_eq(run_one(p, 0, 2), 6);
  ck_assert_int_eq(fake_complete(4), 2); /* now resource 0 */
  ck_assert_int_eq(run_one(p, 0, 2), 4);
  fake_complete(-1);
  fake_hold_completions(false);
  vkds_policy_release(p);
}
END_TEST

/* Many threads selecting at once spread out: the pick and the count are one step. */
typedef struct dl_thread {
  vkds_policy *p;
  int per;
} dl_thread;

static void *dl_worker(void *arg) {
  dl_thread *t = arg;
  for (int i = 0; i < t->per; ++i) vkds_submit(t->p, &(vkds_task_info){.fn = fake_task}, NULL);
  return NULL;
}

START_TEST(dynamic_load_concurrent_selections_spread) {
  fake_setup();
  fake_hold_completions(true); /* nothing completes: every pick must go to the least loaded */
  vkds_policy *p = fake_policy((vkds_policy_info){.kind = VKDS_POLICY_DYNAMIC_LOAD});
  pthread_t th[4];
  dl_thread arg = {.p = p, .per = 250};
  for (int i = 0; i < 4; ++i) pthread_create(&th[i], NULL, dl_worker, &arg);
  for (int i = 0; i < 4; ++i) pthread_join(th[i], NULL);
  for (int i = 0; i < N; ++i) ck_assert_uint_eq(vkds_policy_in_flight(p, (uint32_t)i), 250);
  fake_complete(-1);
  fake_hold_completions(false);
  vkds_policy_release(p);
}
END_TEST

START_TEST(auto_tune_finds_the_fast_one) {
  for (int fast = 0; fast < N; ++fast) {
    fake_setup();
    for (int i = 0; i < N; ++i) res[i].cost_ns[0] = i == fast ? 1000 : 100000;
    vkds_policy *p = fake_policy((vkds_policy_info){.kind = VKDS_POLICY_AUTO_TUNE});
    vkds_auto_tune_phase phase;
    uint32_t best;
    ck_assert_vkds(vkds_policy_auto_tune_state(p, 7, &phase, &best));
    ck_assert_int_eq(phase, VKDS_AUTO_TUNE_UNSEEN);
    /* two rounds round robin: a warm-up and a measured sample each */
    for (int i = 1; i <= 2 * N; ++i) ck_assert_int_eq(run_one(p, 0, i % 3), 4 + (i - 1) % N);
    for (int i = 0; i < 40; ++i) ck_assert_int_eq(run_one(p, 0, i % 3), 4 + fast);
    ck_assert_vkds(vkds_policy_auto_tune_state(p, 0, &phase, &best));
    ck_assert_int_eq(phase, VKDS_AUTO_TUNE_CHOSEN);
    ck_assert_uint_eq(best, (uint32_t)fast);
    vkds_policy_key_stats ks;
    ck_assert_vkds(vkds_policy_get_key_stats(p, (uint32_t)fast, 0, &ks));
    ck_assert_uint_eq(ks.warmups, 1);
    ck_assert_uint_eq(ks.samples, 1 + 40 / 8); /* its trial sample, then one in 8 of the 40 chosen */
    ck_assert_uint_eq(ks.best_ns, 1000);
    ck_assert(ks.mean_ns > 999.0 && ks.mean_ns < 1001.0);
    vkds_policy_release(p);
  }
}
END_TEST

/* Past 4,096 keys auto tune forgets the quarter used longest ago (a soak probe: every
 * key kept for ever): key 0, tuned and then left alone, is unseen again; key 8, used
 * all along, keeps its choice. */
START_TEST(auto_tune_forgets_keys_unused_longest) {
  fake_setup();
  for (int i = 0; i < N; ++i) res[i].cost_ns[0] = i == 2 ? 1000 : 100000;
  vkds_policy *p = fake_policy((vkds_policy_info){.kind = VKDS_POLICY_AUTO_TUNE});
  for (int i = 0; i < 2 * N + 1; ++i) run_one(p, 0, 0), run_one(p, 8, 0);
  vkds_auto_tune_phase phase;
  uint32_t best;
  ck_assert_vkds(vkds_policy_auto_tune_state(p, 0, &phase, &best));
  ck_assert_int_eq(phase, VKDS_AUTO_TUNE_CHOSEN);
  for (uint64_t key = 100; key < 100 + 6000; ++key) {
    vkds_selection *sel = NULL;
    ck_assert_vkds(vkds_select(p, &(vkds_task_info){.key = key}, &sel));
    vkds_selection_release(sel);
    if (key % 500 == 0) ck_assert_int_eq(run_one(p, 8, 0), 6);
  }
  ck_assert_vkds(vkds_policy_auto_tune_state(p, 0, &phase, &best));
  ck_assert_int_eq(phase, VKDS_AUTO_TUNE_UNSEEN);
  ck_assert_vkds(vkds_policy_auto_tune_state(p, 8, &phase, &best));
  ck_assert_int_eq(phase, VKDS_AUTO_TUNE_CHOSEN);
  ck_assert_uint_eq(best, 2);
  vkds_policy_release(p);
}
END_TEST

START_TEST(auto_tune_warmup_is_excluded) {
  fake_setup();
  /* resource 1 is slow only on its first run (its warm-up): it must still win */
  for (int i = 0; i < N; ++i) res[i].cost_ns[0] = 5000;
  res[1].cost_ns[0] = 1000000;
  vkds_policy *p = fake_policy((vkds_policy_info){.kind = VKDS_POLICY_AUTO_TUNE});
  for (int i = 0; i < N; ++i) run_one(p, 0, 2); /* warm-ups */
  res[1].cost_ns[0] = 100;
  for (int i = 0; i < N; ++i) run_one(p, 0, 2); /* measured */
  ck_assert_int_eq(run_one(p, 0, 2), 5);
  vkds_policy_release(p);
}
END_TEST

START_TEST(auto_tune_keys_are_independent) {
  fake_setup();
  for (int i = 0; i < N; ++i) {
    res[i].cost_ns[1] = i == 1 ? 10 : 1000;
    res[i].cost_ns[2] = i == 3 ? 10 : 1000;
  }
  vkds_policy *p = fake_policy((vkds_policy_info){.kind = VKDS_POLICY_AUTO_TUNE});
  for (int i = 1; i <= 2 * N; ++i) { /* interleaved trials */
    ck_assert_int_eq(run_one(p, 1, 2), 4 + (i - 1) % N);
    ck_assert_int_eq(run_one(p, 2, 2), 4 + (i - 1) % N);
  }
  for (int i = 0; i < 10; ++i) {
    ck_assert_int_eq(run_one(p, 1, 2), 5);
    ck_assert_int_eq(run_one(p, 2, 2), 7);
  }
  uint64_t keys[4];
  ck_assert_uint_eq(vkds_policy_keys(p, keys, 4), 2);
  vkds_policy_release(p);
}
END_TEST

START_TEST(auto_tune_retunes_after_the_interval) {
  fake_setup();
  for (int i = 0; i < N; ++i) res[i].cost_ns[0] = i == 2 ? 10 : 1000;
  vkds_policy *p = fake_policy((vkds_policy_info){.kind = VKDS_POLICY_AUTO_TUNE, .retune_interval_ns = 20000000});
  for (int i = 0; i < 2 * N; ++i) run_one(p, 0, 2);
  ck_assert_int_eq(run_one(p, 0, 2), 6);
  /* the device changed: now resource 0 is fastest; fresh statistics find it */
  for (int i = 0; i < N; ++i) res[i].cost_ns[0] = i == 0 ? 10 : 1000;
  nanosleep(&(struct timespec){0, 30000000}, NULL);
  vkds_auto_tune_phase phase;
  uint32_t best;
  for (int i = 1; i <= 2 * N; ++i) {
    ck_assert_int_eq(run_one(p, 0, 2), 4 + (i - 1) % N); /* a new trial round */
    if (i == 1) {
      ck_assert_vkds(vkds_policy_auto_tune_state(p, 0, &phase, &best));
      ck_assert_int_eq(phase, VKDS_AUTO_TUNE_TRIAL);
    }
  }
  /* the key's statistics are the new round's too: a warm-up and one sample each (they
   * kept the first round's and counted the new warm-up among them: a policies probe) */
  vkds_policy_key_stats ks;
  ck_assert_vkds(vkds_policy_wait_all(p, UINT64_MAX));
  for (uint32_t i = 0; i < N; ++i) {
    ck_assert_vkds(vkds_policy_get_key_stats(p, i, 0, &ks));
    ck_assert_uint_eq(ks.warmups, 1);
    ck_assert_uint_eq(ks.samples, 1);
    ck_assert_msg(ks.mean_ns == (i == 0 ? 10 : 1000), "resource %u: mean %g", i, ks.mean_ns);
  }
  ck_assert_int_eq(run_one(p, 0, 2), 4);
  vkds_policy_release(p);
}
END_TEST

START_TEST(earliest_finish_weighs_queue_cost_and_data) {
  fake_setup();
  /* resource 0 is 3x faster than resource 1; the rest are very slow */
  res[0].cost_ns[0] = 1000, res[1].cost_ns[0] = 3000, res[2].cost_ns[0] = res[3].cost_ns[0] = 1000000;
  fake_hold_completions(true);
  vkds_policy *p = fake_policy((vkds_policy_info){.kind = VKDS_POLICY_EARLIEST_FINISH});
  /* exploration: each resource gets one first run */
  int seen = 0;
  for (int i = 0; i < N; ++i) seen |= 1 << (run_one(p, 0, 2) - 4);
  ck_assert_int_eq(seen, 0xf);
  fake_complete(-1); /* warm-ups reported */
  for (int i = 0; i < N; ++i) run_one(p, 0, 2); /* a measured sample each */
  fake_complete(-1);
  /* with completions held, work queues up: 3 of every 4 tasks go to the 3x faster one */
  int on[N] = {0};
  for (int i = 0; i < 40; ++i) ++on[run_one(p, 0, 2) - 4];
  ck_assert_int_eq(on[0] + on[1], 40);
  ck_assert_int_ge(on[0], 29);
  ck_assert_int_le(on[0], 31);
  fake_complete(-1);
  /* data already on resource 1's "device" (fake resources are their own devices) and a
   * large transfer: resource 1 finishes first even though it computes slower */
  int id = -1;
  ck_assert_vkds(vkds_submit(p, &(vkds_task_info){.fn = fake_task, .user = &id, .bytes = 1 << 20,
                                                  .data_devices = 1u << 1}, NULL));
  ck_assert_int_eq(id, 5);
  fake_complete(-1);
  /* 7 MB on resource 2's device: moving them elsewhere takes them down to the host and
   * up again (1.4 ms at the default 10 GB/s), more than resource 2's 1 ms: resource 2.
   * The same bytes from the host (0.7 ms up, wherever it runs): resource 0. */
  ck_assert_vkds(vkds_submit(p, &(vkds_task_info){.fn = fake_task, .user = &id, .bytes = 7000000,
                                                  .data_devices = 1u << 2}, NULL));
  ck_assert_int_eq(id, 6);
  fake_complete(-1);
  ck_assert_vkds(vkds_submit(p, &(vkds_task_info){.fn = fake_task, .user = &id, .bytes = 7000000}, NULL));
  ck_assert_int_eq(id, 4);
  fake_complete(-1);
  fake_hold_completions(false);
  vkds_policy_release(p);
}
END_TEST

/* Past 4,096 keys, earliest finish forgets the key used longest ago with nothing in
 * flight (a soak probe: 20,000 keys kept for ever, each selection slower than the last):
 * key 0, trained and then left alone, is explored again on other resources; key 8, used
 * all along, keeps its resource; key 12, in flight the whole time, is kept. */
START_TEST(earliest_finish_forgets_keys_unused_longest) {
  fake_setup();
  for (int i = 0; i < N; ++i) res[i].cost_ns[0] = 1000000;
  res[0].cost_ns[0] = 1000;
  vkds_policy *p = fake_policy((vkds_policy_info){.kind = VKDS_POLICY_EARLIEST_FINISH});
  for (int i = 0; i < 3 * N; ++i) run_one(p, 0, 0), run_one(p, 8, 0); /* trained: both on resource 0 */
  ck_assert_int_eq(run_one(p, 0, 0), 4);
  ck_assert_int_eq(run_one(p, 8, 0), 4);
  vkds_selection *held = NULL;
  ck_assert_vkds(vkds_select(p, &(vkds_task_info){.key = 12}, &held)); /* in flight throughout */
  for (uint64_t key = 100; key < 100 + 6000; ++key) {
    vkds_selection *sel = NULL;
    ck_assert_vkds(vkds_select(p, &(vkds_task_info){.key = key}, &sel));
    vkds_selection_release(sel);
    if (key % 500 == 0) ck_assert_int_eq(run_one(p, 8, 0), 4);
  }
  ck_assert_int_eq(run_one(p, 8, 0), 4);
  int seen = 0;
  for (int i = 0; i < 2 * N; ++i) seen |= 1 << (run_one(p, 0, 0) - 4); /* explored afresh: not only resource 0 */
  ck_assert_int_ne(seen & ~1, 0);
  vkds_selection_release(held);
  vkds_policy_release(p);
}
END_TEST

/* A resource whose first task was slow (its warm-up: a pipeline made, caches cold) is
 * judged on what it does next: judged on the warm-up alone, it was never picked again,
 * and the warm-up never replaced (a probe: 29 of 30 reductions on the slower device). */
START_TEST(earliest_finish_looks_past_a_slow_warm_up) {
  fake_setup();
  for (int i = 0; i < N; ++i) res[i].cost_ns[0] = 5000;
  res[0].cost_ns[0] = 1000000; /* resource 0's first task */
  vkds_policy *p = fake_policy((vkds_policy_info){.kind = VKDS_POLICY_EARLIEST_FINISH});
  ck_assert_int_eq(run_one(p, 0, 0), 4); /* the first explored: resource 0 (ids start at 4) */
  res[0].cost_ns[0] = 1000;               /* from then on the fastest */
  for (int i = 0; i < 2 * N; ++i) run_one(p, 0, 0);
  for (int i = 0; i < 10; ++i) ck_assert_int_eq(run_one(p, 0, 0), 4);
  vkds_policy_release(p);
}
END_TEST

/* One pick of key 7 through earliest finish with these hints; reports `time_ns` as the
 * task's time (none when 0) and gives the selection back unsubmitted. Returns the
 * resource index. */
static uint32_t ef_pick(vkds_policy *p, uint64_t bytes, uint32_t data_devices, uint64_t time_ns) {
  vkds_selection *sel = NULL;
  ck_assert_vkds(vkds_select(p, &(vkds_task_info){.key = 7, .bytes = bytes, .data_devices = data_devices}, &sel));
  uint32_t index = vkds_selection_index(sel);
  if (time_ns) vkds_selection_report(sel, VKDS_REPORT_TIME, 7, time_ns);
  vkds_selection_release(sel);
  return index;
}

/* Resources on one physical device run a key at one speed. One judged on a slow sample
 * (taken while the device also ran a sibling's work) is rated by the device's best
 * sample, so a task whose data it holds still goes there: rated on its own sample, it
 * lost every pick to the sibling, which then had to copy the data through the host (two
 * VkDevices on one lavapipe: 96 of 96 reductions, examples/several_gpus.c). */
START_TEST(earliest_finish_rates_one_devices_resources_alike) {
  vkds_context_info info = harness_info();
  info.devices_per_physical = 2;
  vkds_context *ctx = NULL;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  void *two[2] = {harness_device_resource(ctx, 0), harness_device_resource(ctx, 1)};
  ck_assert_ptr_nonnull(two[1]);
  vkds_policy *p = NULL;
  ck_assert_vkds(vkds_policy_create(
      &(vkds_policy_info){.kind = VKDS_POLICY_EARLIEST_FINISH,
                          .resources = {.context = ctx, .resource_count = 2, .resources = two}},
      &p));
  /* each explored twice (a warm-up and a judged sample): 1 us on 0, 9 us on 1 */
  ck_assert_uint_eq(ef_pick(p, 0, 0, 1000000), 0);
  ck_assert_uint_eq(ef_pick(p, 0, 0, 1000), 0);
  ck_assert_uint_eq(ef_pick(p, 0, 0, 1000000), 1);
  ck_assert_uint_eq(ef_pick(p, 0, 0, 9000), 1);
  /* data on device 1 (4 KiB: 0.8 us to move from there at the default 10 GB/s, down
   * and up): device 1, which holds them; data on device 0: device 0 */
  ck_assert_uint_eq(ef_pick(p, 4096, 1u << 1, 0), 1);
  ck_assert_uint_eq(ef_pick(p, 4096, 1u << 0, 0), 0);
  vkds_policy_release(p);
  vkds_context_destroy(ctx);
}
END_TEST

/* ---- policies of the application's own (probes of the ops tables) ---- */

/* A table derived from a built-in one with state of its own would put its fields on the
 * parent's private state (earliest finish's init and select wrote past a 48-byte
 * policy): refused, naming the way (the parent's size, own state behind info.user). */
typedef struct derived_policy {
  vkds_policy base;
  int mine;
} derived_policy;

START_TEST(a_policy_derived_from_a_built_in_keeps_its_size) {
  fake_setup();
  vkds_policy_ops ops = {.version = VKDS_POLICY_OPS_VERSION, .name = "derived",
                         .parent = &vkds_policy_earliest_finish_ops, .policy_size = sizeof(derived_policy)};
  vkds_policy *p = (vkds_policy *)1;
  vkds_policy_info info = {.ops = &ops, .resources = {.kind = &fake_kind, .resource_count = N, .resources = res_ptr,
                                                     .backend_ops = &fake_backend_ops}};
  ck_assert_int_eq(vkds_policy_create(&info, &p), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_null(p);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "vkds_policy_info.user"));
  ops.policy_size = 0; /* the parent's: works, all of earliest finish inherited */
  p = fake_policy((vkds_policy_info){.ops = &ops});
  for (int i = 0; i < 3 * N; ++i) ck_assert_int_ge(run_one(p, 0, 0), 4);
  vkds_policy_release(p);
}
END_TEST

/* A select that counts its own picks (select_counts_in_flight) gets the completions that
 * count them out, and the capacity through vkds_policy_count_in_flight (a probe: counts
 * that only grew; 3 in flight at capacity 1). */
static vkds_result counting_select(vkds_policy *p, const vkds_task_info *hints, uint32_t *index) {
  (void)hints;
  for (uint32_t i = 0; i < p->resource_count; ++i)
    if (vkds_policy_count_in_flight(p, i, vkds_policy_in_flight(p, i))) {
      *index = i;
      return VKDS_SUCCESS;
    }
  return VKDS_ERROR_WOULD_BLOCK;
}

START_TEST(a_select_that_counts_its_picks_keeps_capacity_and_counts_out) {
  fake_setup();
  static const vkds_policy_ops ops = {.version = VKDS_POLICY_OPS_VERSION, .name = "counting",
                                      .select = counting_select, .select_counts_in_flight = true};
  fake_hold_completions(true);
  vkds_policy *p = fake_policy((vkds_policy_info){.ops = &ops, .capacity = 1});
  int ran = 0;
  for (int i = 0; i < 2 * N; ++i) {
    int id = -1;
    vkds_result r = vkds_try_submit(p, &(vkds_task_info){.fn = fake_task, .user = &id}, NULL);
    ck_assert(r == VKDS_SUCCESS || r == VKDS_ERROR_WOULD_BLOCK);
    ran += r == VKDS_SUCCESS;
  }
  ck_assert_int_eq(ran, N); /* one a resource */
  for (uint32_t i = 0; i < N; ++i) ck_assert_uint_eq(vkds_policy_in_flight(p, i), 1);
  fake_complete(-1);
  fake_hold_completions(false);
  ck_assert_vkds(vkds_policy_wait_all(p, UINT64_MAX));
  for (uint32_t i = 0; i < N; ++i) ck_assert_uint_eq(vkds_policy_in_flight(p, i), 0);
  vkds_policy_release(p);
}
END_TEST

/* A report slot inherited from a table in the middle of a chain brings the reports it
 * acts on (a probe: through the leaf, the middle table's report saw none). */
static atomic_int middle_completions;
static void middle_report(vkds_policy *p, const vkds_report *r) {
  (void)p;
  if (r->what == VKDS_REPORT_COMPLETION) atomic_fetch_add(&middle_completions, 1);
}
static const vkds_policy_ops middle_ops = {.version = VKDS_POLICY_OPS_VERSION, .name = "middle",
                                           .parent = &vkds_policy_round_robin_ops,
                                           .reports = VKDS_REPORT_COMPLETION, .report = middle_report};
static const vkds_policy_ops leaf_ops = {.version = VKDS_POLICY_OPS_VERSION, .name = "leaf", .parent = &middle_ops};

START_TEST(an_inherited_report_slot_gets_its_reports) {
  fake_setup();
  atomic_store(&middle_completions, 0);
  vkds_policy *p = fake_policy((vkds_policy_info){.ops = &leaf_ops});
  for (int i = 0; i < 8; ++i) run_one(p, 0, 0);
  ck_assert_int_eq(atomic_load(&middle_completions), 8);
  vkds_policy_release(p);
}
END_TEST

/* A select of the application's that fails without a message gets one (the thread's
 * last message was an earlier, unrelated failure's; a probe). */
static vkds_result failing_select(vkds_policy *p, const vkds_task_info *hints, uint32_t *index) {
  (void)p, (void)hints, (void)index;
  return VKDS_ERROR_UNSUPPORTED;
}

static vkds_result positive_select(vkds_policy *p, const vkds_task_info *hints, uint32_t *index) {
  (void)p, (void)hints, (void)index;
  return (vkds_result)42;
}

START_TEST(a_failing_select_is_named) {
  fake_setup();
  static const vkds_policy_ops ops = {.version = VKDS_POLICY_OPS_VERSION, .name = "refusing", .select = failing_select};
  vkds_policy *p = fake_policy((vkds_policy_info){.ops = &ops});
  ck_assert_int_eq(vkds_submit(NULL, &(vkds_task_info){.fn = fake_task}, NULL), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_submit(p, &(vkds_task_info){.fn = fake_task}, NULL), VKDS_ERROR_UNSUPPORTED);
  ck_assert_msg(strstr(vkds_last_error_message(), "policy 'refusing': its select returned unsupported"), "%s",
                vkds_last_error_message());
  vkds_policy_release(p);
  /* a value that is no vkds error, a positive one above all (a caller testing r < 0
   * would take it for success), comes back as INVALID_ARGUMENT, named (a backends probe) */
  static const vkds_policy_ops positive = {.version = VKDS_POLICY_OPS_VERSION, .name = "positive", .select = positive_select};
  p = fake_policy((vkds_policy_info){.ops = &positive});
  vkds_submission *sub = NULL;
  ck_assert_int_eq(vkds_submit(p, &(vkds_task_info){.fn = fake_task}, &sub), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_null(sub);
  ck_assert_msg(strstr(vkds_last_error_message(), "policy 'positive': its select returned unknown result (42, which is "
                                                  "not a vkds_result"),
                "%s", vkds_last_error_message());
  vkds_selection *sel = NULL;
  ck_assert_int_eq(vkds_select(p, &(vkds_task_info){0}, &sel), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_null(sel);
  vkds_policy_release(p);
}
END_TEST

/* A fixed policy whose capacity needs completions that one resource cannot report: that
 * resource is left out, and fixed_index still names the resource of the caller's list
 * (the task ran on the next one, the kept list's index; a probe). */
static uint32_t first_reports_submissions_only(vkds_backend *b, uint32_t index, uint32_t reports) {
  (void)b;
  return index == 0 ? reports & VKDS_REPORT_SUBMISSION : reports;
}
static const vkds_backend_ops partial_ops = {.version = VKDS_BACKEND_OPS_VERSION, .name = "partial fake",
                                             .parent = &fake_backend_ops, .supports = first_reports_submissions_only};

START_TEST(a_fixed_index_names_the_callers_resource) {
  fake_setup();
  for (uint32_t f = 0; f < N; ++f) {
    vkds_policy_info info = {.kind = VKDS_POLICY_FIXED, .fixed_index = f, .capacity = 1,
                             .resources = {.kind = &fake_kind, .resource_count = N, .resources = res_ptr,
                                           .backend_ops = &partial_ops}};
    vkds_policy *p = NULL;
    if (f == 0) { /* the one left out */
      ck_assert_int_eq(vkds_policy_create(&info, &p), VKDS_ERROR_UNSUPPORTED);
      ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "resource 0 cannot report"));
      continue;
    }
    ck_assert_vkds(vkds_policy_create(&info, &p));
    ck_assert_int_eq(run_one(p, 0, 0), 4 + (int)f);
    vkds_policy_release(p);
  }
}
END_TEST

/* A completion reported twice (a faulty backend) is ignored: it wrapped the in-flight
 * count into the selections, and the policy refused every later task. */
START_TEST(a_completion_reported_twice_is_ignored) {
  fake_setup();
  vkds_policy *p = fake_policy((vkds_policy_info){.kind = VKDS_POLICY_DYNAMIC_LOAD, .capacity = 4});
  vkds_selection *sel;
  ck_assert_vkds(vkds_select(p, &(vkds_task_info){0}, &sel));
  ck_assert_vkds(vkds_selection_submit(sel, &(vkds_task_info){.fn = fake_task}, NULL));
  ck_assert_vkds(vkds_policy_wait_all(p, UINT64_MAX));
  vkds_selection_report(sel, VKDS_REPORT_COMPLETION, 0, 0); /* again */
  vkds_selection_release(sel);
  vkds_policy_resource_stats st;
  uint64_t selections = 0, in_flight = 0;
  for (uint32_t i = 0; i < N; ++i) {
    ck_assert_vkds(vkds_policy_get_resource_stats(p, i, &st));
    selections += st.selections, in_flight += st.in_flight;
  }
  ck_assert_uint_eq(selections, 1);
  ck_assert_uint_eq(in_flight, 0);
  for (int i = 0; i < 8; ++i) ck_assert_int_ge(run_one(p, 0, 0), 4);
  vkds_policy_release(p);
}
END_TEST

/* A selection released twice (its memory kept for the thread's next select): the second
 * release is ignored with an error logged. It counted the pick out twice and freed the
 * selection under the thread's cache, which the next select handed out (a probe: use
 * after free; the plain build aborted in malloc). */
START_TEST(a_second_selection_release_is_ignored) {
  fake_setup();
  fake_hold_completions(true);
  vkds_policy *p = fake_policy((vkds_policy_info){.kind = VKDS_POLICY_DYNAMIC_LOAD, .track_completion = true});
  vkds_selection *sel, *a, *b;
  ck_assert_vkds(vkds_select(p, NULL, &sel));
  uint32_t at = vkds_selection_index(sel);
  vkds_selection_release(sel);
  vkds_selection_release(sel);
  ck_assert_uint_eq(vkds_policy_in_flight(p, at), 0);
  ck_assert_vkds(vkds_select(p, NULL, &a));
  ck_assert_vkds(vkds_select(p, NULL, &b));
  ck_assert_ptr_ne(a, b);
  ck_assert_vkds(vkds_selection_submit(a, &(vkds_task_info){.fn = fake_task}, NULL));
  ck_assert_vkds(vkds_selection_submit(b, &(vkds_task_info){.fn = fake_task}, NULL));
  vkds_selection_release(a);
  vkds_selection_release(b);
  ck_assert_int_eq(fake_complete(-1), 2);
  for (uint32_t i = 0; i < N; ++i) ck_assert_uint_eq(vkds_policy_in_flight(p, i), 0);
  fake_hold_completions(false);
  vkds_policy_release(p);
}
END_TEST

/* A selection stands for one task. Released unsubmitted, it gives back what its select
 * counted (dynamic load's in-flight count, earliest finish's queued work, the capacity
 * it took); submitted a second time, it is a named error, since its task is counted
 * once. The selection count keeps every pick. */
START_TEST(unsubmitted_selection_gives_its_place_back) {
  const vkds_policy_kind kinds[] = {VKDS_POLICY_DYNAMIC_LOAD, VKDS_POLICY_EARLIEST_FINISH, VKDS_POLICY_ROUND_ROBIN};
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k) {
    fake_setup();
    fake_hold_completions(true);
    vkds_policy *p = fake_policy((vkds_policy_info){.kind = kinds[k], .capacity = 1, .track_completion = true});
    for (int round = 0; round < 3 * N; ++round) { /* more than the capacity of all N */
      vkds_selection *sel;
      ck_assert_vkds(vkds_select(p, NULL, &sel));
      ck_assert_uint_eq(vkds_policy_in_flight(p, vkds_selection_index(sel)), 1);
      vkds_selection_release(sel);
    }
    uint64_t picks = 0;
    for (uint32_t i = 0; i < N; ++i) {
      vkds_policy_resource_stats st;
      ck_assert_vkds(vkds_policy_get_resource_stats(p, i, &st));
      ck_assert_uint_eq(st.in_flight, 0);
      ck_assert_uint_eq(st.completed, 0);
      picks += st.selections;
    }
    ck_assert_uint_eq(picks, 3 * N);
    /* submitted once it counts; a second submission of it is refused */
    vkds_selection *sel;
    ck_assert_vkds(vkds_select(p, NULL, &sel));
    uint32_t at = vkds_selection_index(sel);
    ck_assert_vkds(vkds_selection_submit(sel, &(vkds_task_info){.fn = fake_task}, NULL));
    ck_assert_int_eq(vkds_selection_submit(sel, &(vkds_task_info){.fn = fake_task}, NULL), VKDS_ERROR_INVALID_ARGUMENT);
    vkds_selection_release(sel);
    ck_assert_uint_eq(vkds_policy_in_flight(p, at), 1);
    ck_assert_int_eq(fake_complete(-1), 1);
    vkds_policy_resource_stats st;
    ck_assert_vkds(vkds_policy_get_resource_stats(p, at, &st));
    ck_assert_uint_eq(st.in_flight, 0);
    ck_assert_uint_eq(st.completed, 1);
    fake_hold_completions(false);
    vkds_policy_release(p);
  }
}
END_TEST

/* ---- the verbs' errors ---- */

typedef struct init_race {
  vkds_policy *p;
  vkds_policy_resources res;
  vkds_result result;
} init_race;
static void *init_in_thread(void *arg) {
  init_race *race = arg;
  race->result = vkds_policy_init(race->p, &race->res);
  return NULL;
}
/* a backend that takes 2 ms to make: the other thread's init comes in meanwhile */
static vkds_result slow_backend_init(vkds_backend *b) {
  nanosleep(&(struct timespec){.tv_nsec = 2000000}, NULL);
  return vkds_backend_base_ops.init(b);
}
static const vkds_backend_ops slow_backend_ops = {.version = VKDS_BACKEND_OPS_VERSION, .name = "slow fake",
                                                  .parent = &fake_backend_ops, .init = slow_backend_init};

START_TEST(deferred_initialization) {
  fake_setup();
  vkds_policy *p = NULL;
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_ROUND_ROBIN, .deferred = true}, &p));
  ck_assert(!vkds_policy_initialized(p));
  vkds_selection *sel = NULL;
  ck_assert_int_eq(vkds_select(p, NULL, &sel), VKDS_ERROR_NOT_INITIALIZED);
  ck_assert_int_eq(vkds_submit(p, &(vkds_task_info){.fn = fake_task}, NULL), VKDS_ERROR_NOT_INITIALIZED);
  ck_assert_int_eq(vkds_policy_wait_all(p, 0), VKDS_ERROR_NOT_INITIALIZED);
  vkds_policy_resources r = {.kind = &fake_kind, .resource_count = N, .resources = res_ptr,
                             .backend_ops = &fake_backend_ops};
  ck_assert_vkds(vkds_policy_init(p, &r));
  ck_assert_int_eq(vkds_policy_init(p, &r), VKDS_ERROR_ALREADY_INITIALIZED);
  ck_assert_int_eq(run_one(p, 0, 0), 4);
  ck_assert_ptr_eq(vkds_policy_resource(p, 3), &res[3]);
  ck_assert_ptr_null(vkds_policy_resource(p, 4));
  vkds_policy_release(p);
  /* two threads initializing one deferred policy: one succeeds (both did, and one
   * backend leaked: a concurrency probe) */
  vkds_policy_resources slow = r;
  slow.backend_ops = &slow_backend_ops;
  for (int round = 0; round < 20; ++round) {
    ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_ROUND_ROBIN, .deferred = true}, &p));
    init_race race = {.p = p, .res = slow};
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, init_in_thread, &race), 0);
    vkds_result mine = vkds_policy_init(p, &slow);
    pthread_join(t, NULL);
    ck_assert_msg((mine == VKDS_SUCCESS) != (race.result == VKDS_SUCCESS), "round %d: %s and %s", round,
                  vkds_result_str(mine), vkds_result_str(race.result));
    ck_assert_int_eq(mine == VKDS_SUCCESS ? race.result : mine, VKDS_ERROR_ALREADY_INITIALIZED);
    vkds_policy_release(p);
  }
}
END_TEST

START_TEST(bad_policies_are_named_errors) {
  fake_setup();
  vkds_policy *p = NULL;
  vkds_policy_resources r = {.kind = &fake_kind, .resource_count = N, .resources = res_ptr,
                             .backend_ops = &fake_backend_ops};
  ck_assert_int_eq(vkds_policy_create(NULL, &p), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_policy_create(&(vkds_policy_info){.resources = r}, NULL), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_policy_create(&(vkds_policy_info){.kind = 99, .resources = r}, &p), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .fixed_index = N, .resources = r}, &p),
                   VKDS_ERROR_OUT_OF_RANGE);
  /* earliest finish's transfer rate: 0 or finite and positive */
  const double bad_rates[] = {-1.0, NAN, INFINITY};
  for (int i = 0; i < 3; ++i) {
    ck_assert_int_eq(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_EARLIEST_FINISH, .resources = r,
                                                            .transfer_bytes_per_s = bad_rates[i]},
                                        &p),
                     VKDS_ERROR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "transfer_bytes_per_s"));
  }
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_EARLIEST_FINISH, .resources = r,
                                                        .transfer_bytes_per_s = 25e9},
                                    &p));
  vkds_policy_release(p);
  vkds_policy_resources none = r; /* a count without the resources */
  none.resources = NULL;
  ck_assert_int_eq(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_ROUND_ROBIN, .resources = none}, &p),
                   VKDS_ERROR_INVALID_ARGUMENT);
  vkds_policy_resources empty = r;
  empty.resource_count = 0;
  ck_assert_int_eq(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_ROUND_ROBIN, .resources = empty}, &p),
                   VKDS_ERROR_EMPTY);
  /* the resources' errors name the call made, not the backend made inside it (a contract
   * probe) */
  ck_assert_str_eq(vkds_last_error_message(), "empty resource list: vkds_policy_create: no resources");
  vkds_policy_ops no_select = {.version = VKDS_POLICY_OPS_VERSION, .name = "x"};
  ck_assert_int_eq(vkds_policy_create(&(vkds_policy_info){.ops = &no_select, .resources = r}, &p),
                   VKDS_ERROR_INVALID_ARGUMENT);
  /* a parent of a version this library does not know, and report bits no policy asks for
   * (both taken, or read as a report no backend gives: a policies probe) */
  vkds_policy_ops future = vkds_policy_round_robin_ops, child = {.version = VKDS_POLICY_OPS_VERSION, .name = "child",
                                                                  .parent = &future};
  future.version = 99;
  ck_assert_int_eq(vkds_policy_create(&(vkds_policy_info){.ops = &child, .resources = r}, &p),
                   VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "its parent 'round_robin' has version 99"));
  /* named by the call (it said only "policy ops ...": an embedding probe) */
  ck_assert_msg(strstr(vkds_last_error_message(), "vkds_policy_create: policy ops 'child'") != NULL, "%s",
                vkds_last_error_message());
  vkds_policy_ops unversioned = {.name = "unversioned", .select = vkds_policy_round_robin_ops.select};
  ck_assert_int_eq(vkds_policy_create(&(vkds_policy_info){.ops = &unversioned, .resources = r}, &p),
                   VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_msg(strstr(vkds_last_error_message(), "vkds_policy_create: policy ops version 0") != NULL, "%s",
                vkds_last_error_message());
  vkds_policy_ops asks = {.version = VKDS_POLICY_OPS_VERSION, .name = "asks", .parent = &vkds_policy_round_robin_ops,
                          .reports = VKDS_REPORT_UNUSED};
  ck_assert_int_eq(vkds_policy_create(&(vkds_policy_info){.ops = &asks, .resources = r}, &p),
                   VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "report bits 0x8"));
  asks.reports = 1u << 9;
  ck_assert_int_eq(vkds_policy_create(&(vkds_policy_info){.ops = &asks, .resources = r}, &p),
                   VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_null(p);
  /* auto tune needs task times, which the base backend (no backend_ops) cannot give */
  vkds_policy_resources base = r;
  base.backend_ops = &vkds_backend_base_ops;
  ck_assert_int_eq(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_AUTO_TUNE, .resources = base}, &p),
                   VKDS_ERROR_UNSUPPORTED);
  ck_assert_ptr_null(p);
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_ROUND_ROBIN, .resources = r}, &p));
  ck_assert_int_eq(vkds_submit(p, NULL, NULL), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_submit(p, &(vkds_task_info){0}, NULL), VKDS_ERROR_INVALID_ARGUMENT);
  vkds_policy_key_stats ks;
  ck_assert_int_eq(vkds_policy_get_key_stats(p, 0, 0, &ks), VKDS_ERROR_UNSUPPORTED);
  vkds_auto_tune_phase ph;
  uint32_t best;
  ck_assert_int_eq(vkds_policy_auto_tune_state(p, 0, &ph, &best), VKDS_ERROR_UNSUPPORTED);
  vkds_policy_resource_stats rs;
  ck_assert_int_eq(vkds_policy_get_resource_stats(p, N, &rs), VKDS_ERROR_OUT_OF_RANGE);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "resource 4 of the policy's 4"));
  ck_assert_int_eq(vkds_policy_get_resource_stats(p, 0, NULL), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "out is NULL"));
  vkds_policy_release(p);
  vkds_policy_release(NULL);
}
END_TEST

START_TEST(capacity_blocks_and_times_out) {
  fake_setup();
  fake_hold_completions(true);
  vkds_policy *p = fake_policy((vkds_policy_info){.kind = VKDS_POLICY_ROUND_ROBIN, .capacity = 1,
                                                  .submit_timeout_ns = 5000000});
  for (int i = 0; i < N; ++i) ck_assert_vkds(vkds_try_submit(p, &(vkds_task_info){.fn = fake_task}, NULL));
  ck_assert_int_eq(vkds_try_submit(p, &(vkds_task_info){.fn = fake_task}, NULL), VKDS_ERROR_WOULD_BLOCK);
  ck_assert_int_eq(vkds_submit(p, &(vkds_task_info){.fn = fake_task}, NULL), VKDS_ERROR_TIMEOUT);
  fake_complete(-1);
  ck_assert_vkds(vkds_try_submit(p, &(vkds_task_info){.fn = fake_task}, NULL));
  fake_complete(-1);
  fake_hold_completions(false);
  vkds_policy_release(p);
}
END_TEST

/* A full resource does not block a selection while another has room: every policy that
 * chooses among resources skips the full ones (round robin passes its turn on), and says
 * WOULD_BLOCK only when all are full. */
START_TEST(capacity_skips_full_resources) {
  static const vkds_policy_kind kinds[] = {VKDS_POLICY_ROUND_ROBIN, VKDS_POLICY_DYNAMIC_LOAD,
                                           VKDS_POLICY_EARLIEST_FINISH};
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k) {
    fake_setup();
    fake_hold_completions(true);
    vkds_policy *p = fake_policy((vkds_policy_info){.kind = kinds[k], .capacity = 1});
    int first = -1;
    ck_assert_vkds(vkds_try_submit(p, &(vkds_task_info){.fn = fake_task, .user = &first}, NULL));
    /* `first`'s resource stays full; tasks finished as they come keep the others free,
     * and round robin's turns keep reaching the full one */
    for (int i = 0; i < 3 * N; ++i) {
      int id = -1;
      ck_assert_msg(vkds_try_submit(p, &(vkds_task_info){.fn = fake_task, .user = &id}, NULL) == VKDS_SUCCESS,
                    "%s: task %d refused while resources had room", vkds_policy_name(p), i);
      ck_assert_int_ne(id, first);
      fake_complete(id);
    }
    /* the others full too: now it blocks */
    for (int i = 0; i < N - 1; ++i) ck_assert_vkds(vkds_try_submit(p, &(vkds_task_info){.fn = fake_task}, NULL));
    ck_assert_int_eq(vkds_try_submit(p, &(vkds_task_info){.fn = fake_task}, NULL), VKDS_ERROR_WOULD_BLOCK);
    fake_complete(first); /* room on that one only: the next task goes there */
    int id = -1;
    ck_assert_vkds(vkds_try_submit(p, &(vkds_task_info){.fn = fake_task, .user = &id}, NULL));
    ck_assert_int_eq(id, first);
    fake_complete(-1);
    fake_hold_completions(false);
    vkds_policy_release(p);
  }
}
END_TEST

/* Threads that select and release unsubmitted as fast as they can, counting the
 * selections they got. */
typedef struct select_thread {
  vkds_policy *p;
  int rounds;
  uint64_t got;
} select_thread;
static void *select_worker(void *arg) {
  select_thread *t = arg;
  for (int i = 0; i < t->rounds; ++i) {
    vkds_selection *sel;
    vkds_result r = vkds_select(t->p, NULL, &sel);
    if (r == VKDS_SUCCESS) ++t->got, vkds_selection_release(sel);
    else if (r != VKDS_ERROR_WOULD_BLOCK) ck_abort_msg("select: %s", vkds_result_str(r));
  }
  return NULL;
}

/* With capacity, a pick that finds its resource filled by another thread meanwhile makes
 * no selection, and the statistics count none (a policies probe: round robin's turn
 * counted one, 2-23 too many over 8 threads). Every policy over the same race. */
START_TEST(selections_count_exactly_under_capacity) {
  static const vkds_policy_kind kinds[] = {VKDS_POLICY_ROUND_ROBIN, VKDS_POLICY_DYNAMIC_LOAD,
                                           VKDS_POLICY_EARLIEST_FINISH, VKDS_POLICY_AUTO_TUNE};
  enum { THREADS = 8 };
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k) {
    fake_setup();
    vkds_policy *p = fake_policy((vkds_policy_info){.kind = kinds[k], .capacity = 1});
    pthread_t th[THREADS];
    select_thread args[THREADS];
    for (int i = 0; i < THREADS; ++i) {
      args[i] = (select_thread){.p = p, .rounds = harness_rounds(60000)};
      pthread_create(&th[i], NULL, select_worker, &args[i]);
    }
    uint64_t got = 0, counted = 0;
    for (int i = 0; i < THREADS; ++i) pthread_join(th[i], NULL), got += args[i].got;
    for (uint32_t i = 0; i < N; ++i) {
      vkds_policy_resource_stats st;
      ck_assert_vkds(vkds_policy_get_resource_stats(p, i, &st));
      counted += st.selections;
      ck_assert_uint_eq(st.in_flight, 0);
    }
    ck_assert_msg(counted == got, "%s: %llu selections counted, %llu made", vkds_policy_name(p),
                  (unsigned long long)counted, (unsigned long long)got);
    vkds_policy_release(p);
  }
}
END_TEST

static vkds_result failing_task(void *user, const vkds_task *task, void **wait_object) {
  (void)user, (void)task, (void)wait_object;
  return VKDS_ERROR_UNSUPPORTED;
}

/* A task function's own failure is the call's result and its message (an older message
 * of another failure used to stay). */
START_TEST(task_failure_is_named) {
  fake_setup();
  vkds_policy *p = fake_policy((vkds_policy_info){.kind = VKDS_POLICY_ROUND_ROBIN});
  ck_assert_int_ne(vkds_select(NULL, NULL, NULL), VKDS_SUCCESS); /* an older failure */
  ck_assert_int_eq(vkds_submit(p, &(vkds_task_info){.fn = failing_task}, NULL), VKDS_ERROR_UNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "task function returned"));
  vkds_policy_release(p);
}
END_TEST

START_TEST(copies_share_state) {
  fake_setup();
  vkds_policy *p = fake_policy((vkds_policy_info){.kind = VKDS_POLICY_ROUND_ROBIN});
  vkds_policy *copy = vkds_policy_retain(p);
  ck_assert_int_eq(run_one(p, 0, 2), 4);
  ck_assert_int_eq(run_one(copy, 0, 2), 5); /* the same counter */
  vkds_policy_release(p);
  ck_assert_int_eq(run_one(copy, 0, 2), 6); /* still alive */
  vkds_policy_release(copy);
}
END_TEST

/* ---- for real: lavapipe, three VkDevices, every policy ---- */

typedef struct counters {
  gpu_counter c[DEVICES];
  vkds_context *ctx;
} counters;

static vkds_result record_add_real(void *user, const vkds_task *task, void **wait_object) {
  (void)wait_object;
  counters *cs = user;
  vkds_resource_info ri;
  vkds_resource_get_info(task->resource, &ri);
  gpu_counter_record(&cs->c[ri.device_index], task->cmd, 1, 1, 0);
  return VKDS_SUCCESS;
}

static vkds_result record_nothing(void *user, const vkds_task *task, void **wait_object) {
  (void)user, (void)task, (void)wait_object;
  return VKDS_SUCCESS;
}

/* Auto tune over several devices, a key whose tasks may run on one only (as launches of
 * buffers there): its trial never measures the others, so it never ends; it timed
 * every task there (199 of 200, a README probe), now one in 8 once that resource has
 * its samples (tasks waited for one by one, so that each time is in before the next
 * pick). */
START_TEST(auto_tune_times_few_tasks_of_a_key_bound_to_one_device) {
  app a = {0};
  app_create(&a);
  vkds_context *ctx = app_context(&a);
  vkds_policy *p;
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_AUTO_TUNE, .resources = {.context = ctx}}, &p));
  for (int i = 0; i < 200; ++i)
    ck_assert_vkds(vkds_submit_and_wait(p, &(vkds_task_info){.fn = record_nothing, .key = 9, .only_devices = 1u << 1}));
  ck_assert_vkds(vkds_policy_wait_all(p, UINT64_MAX));
  uint64_t samples = 0;
  for (uint32_t r = 0; r < vkds_context_resource_count(ctx); ++r) {
    vkds_policy_key_stats ks;
    if (vkds_policy_get_key_stats(p, r, 9, &ks) == VKDS_SUCCESS) samples += ks.samples + ks.warmups;
  }
  ck_assert_msg(samples >= 8 && samples <= 60, "%llu of 200 tasks timed", (unsigned long long)samples);
  vkds_policy_release(p);
  vkds_context_destroy(ctx);
  app_use_and_destroy(&a);
}
END_TEST

START_TEST(every_policy_on_three_lavapipe_devices) {
  app a = {0};
  app_create(&a);
  counters cs = {.ctx = app_context(&a)};
  for (int d = 0; d < DEVICES; ++d) ck_assert_int_eq(gpu_counter_create(&cs.c[d], vkds_context_resource(cs.ctx, (uint32_t)d)), VK_SUCCESS);
  static const vkds_policy_kind kinds[] = {VKDS_POLICY_FIXED, VKDS_POLICY_ROUND_ROBIN, VKDS_POLICY_DYNAMIC_LOAD,
                                           VKDS_POLICY_AUTO_TUNE, VKDS_POLICY_EARLIEST_FINISH};
  uint32_t expect = 0;
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k) {
    vkds_policy *p;
    ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = kinds[k], .resources = {.context = cs.ctx}, .fixed_index = 1}, &p));
    for (int i = 0; i < 30; ++i) ck_assert_vkds(vkds_submit(p, &(vkds_task_info){.fn = record_add_real, .user = &cs, .key = 9}, NULL));
    ck_assert_vkds(vkds_submit_and_wait(p, &(vkds_task_info){.fn = record_add_real, .user = &cs, .key = 9}));
    ck_assert_vkds(vkds_policy_wait_all(p, UINT64_MAX));
    expect += 31;
    uint32_t total = 0;
    uint64_t selections = 0;
    for (int d = 0; d < DEVICES; ++d) total += gpu_counter_value(&cs.c[d]);
    for (uint32_t i = 0; i < 3; ++i) {
      vkds_policy_resource_stats st;
      ck_assert_vkds(vkds_policy_get_resource_stats(p, i, &st));
      selections += st.selections;
    }
    ck_assert_uint_eq(total, expect);
    ck_assert_uint_eq(selections, 31);
    if (kinds[k] == VKDS_POLICY_AUTO_TUNE) {
      vkds_policy_key_stats ks;
      ck_assert_vkds(vkds_policy_get_key_stats(p, 0, 9, &ks));
      ck_assert_uint_eq(ks.warmups, 1); /* real task times from GPU timestamps */
      ck_assert(ks.mean_ns > 0);
    }
    if (kinds[k] == VKDS_POLICY_EARLIEST_FINISH) {
      /* a key's first 8 tasks on a resource are timed, then one in 8 */
      uint64_t all_asked = 0;
      for (uint32_t i = 0; i < 3; ++i) {
        vkds_policy_resource_stats st;
        vkds_policy_key_stats ks;
        ck_assert_vkds(vkds_policy_get_resource_stats(p, i, &st));
        ck_assert_vkds(vkds_policy_get_key_stats(p, i, 9, &ks));
        uint64_t asked = st.selections <= 8 ? st.selections : 8 + (st.selections - 8) / 8;
        ck_assert_uint_eq(ks.samples + ks.warmups, asked);
        if (st.selections) ck_assert(ks.mean_ns > 0 || ks.warmups == 1);
        all_asked += asked;
      }
      ck_assert_uint_lt(all_asked, 31); /* 31 tasks over 3: one resource ran 11 or more */
    }
    vkds_policy_release(p);
  }
  for (int d = 0; d < DEVICES; ++d) gpu_counter_destroy(&cs.c[d]);
  vkds_context_destroy(cs.ctx);
  app_use_and_destroy(&a);
}
END_TEST

/* A task function that returns VKDS_ERROR_DEVICE_LOST on a Vulkan resource whose device
 * is fine: the policy marks that resource lost for good (policy.h said "for other kinds"
 * only; a policies probe), the context's device stays usable and other policies keep it. */
static vkds_result says_lost(void *user, const vkds_task *task, void **wait_object) {
  (void)user, (void)task, (void)wait_object;
  return VKDS_ERROR_DEVICE_LOST;
}
START_TEST(a_task_that_says_lost_loses_its_resource_in_that_policy) {
  vkds_context *ctx;
  vkds_context_info info = harness_info();
  info.devices_per_physical = 2;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  vkds_policy *p, *other;
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_ROUND_ROBIN, .resources = {.context = ctx}}, &p));
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = {.context = ctx}}, &other));
  ck_assert_int_eq(vkds_submit(p, &(vkds_task_info){.fn = says_lost}, NULL), VKDS_ERROR_DEVICE_LOST);
  ck_assert_int_eq(vkds_policy_resource_health(p, 0), VKDS_RESOURCE_LOST);
  ck_assert_int_eq(vkds_policy_resource_health(p, 1), VKDS_RESOURCE_HEALTHY);
  for (int i = 0; i < 4; ++i) { /* the other resources take every task (one on lavapipe, 47 on an H200) */
    vkds_selection *s;
    ck_assert_vkds(vkds_select(p, NULL, &s));
    ck_assert_uint_ne(vkds_selection_index(s), 0);
    vkds_selection_release(s);
  }
  /* the device is not lost: another policy still runs on resource 0 */
  ck_assert_int_eq(vkds_policy_resource_health(other, 0), VKDS_RESOURCE_HEALTHY);
  ck_assert_vkds(vkds_submit_and_wait(other, &(vkds_task_info){.fn = record_nothing}));
  vkds_policy_release(other);
  vkds_policy_release(p);
  vkds_context_destroy(ctx);
}
END_TEST

/* ---- the CPU thread-pool backend (examples/) under every policy ---- */

static void add_one(void *arg) { atomic_fetch_add((atomic_int *)arg, 1); }

static vkds_result enqueue(void *user, const vkds_task *task, void **wait_object) {
  *wait_object = cpu_pool_run(task->resource, add_one, user);
  return *wait_object ? VKDS_SUCCESS : VKDS_ERROR_OUT_OF_HOST_MEMORY;
}

/* ---- tables derived from the built-in ones (found by a new-user probe) ---- */

static atomic_int derived_reports, derived_destroys;
static void derived_report(vkds_policy *p, const vkds_report *r) {
  atomic_fetch_add(&derived_reports, 1);
  vkds_policy_dynamic_load_ops.report(p, r); /* super: every slot of a built-in table is set */
}
static void derived_destroy(vkds_policy *p) {
  atomic_fetch_add(&derived_destroys, 1);
  vkds_policy_dynamic_load_ops.destroy(p);
}
static vkds_result derived_init(vkds_policy *p) { return vkds_policy_dynamic_load_ops.init(p); }

START_TEST(derived_policies_inherit_and_call_their_parent) {
  fake_setup();
  /* every DEFAULTED slot of the built-in tables is set: callable as "super" */
  const vkds_policy_ops *tables[] = {&vkds_policy_fixed_ops, &vkds_policy_round_robin_ops,
                                     &vkds_policy_dynamic_load_ops, &vkds_policy_auto_tune_ops,
                                     &vkds_policy_earliest_finish_ops};
  for (size_t t = 0; t < sizeof tables / sizeof *tables; ++t)
    ck_assert(tables[t]->init && tables[t]->destroy && tables[t]->select && tables[t]->report &&
              tables[t]->policy_size >= sizeof(vkds_policy));
  /* dynamic load's select counts its own picks: a table inheriting it does not count
   * them again (60 tasks read 120 selections) */
  static const vkds_policy_ops derived = {.version = VKDS_POLICY_OPS_VERSION, .name = "derived",
                                          .parent = &vkds_policy_dynamic_load_ops, .init = derived_init,
                                          .destroy = derived_destroy, .report = derived_report};
  vkds_policy *p = fake_policy((vkds_policy_info){.ops = &derived});
  atomic_store(&derived_reports, 0), atomic_store(&derived_destroys, 0);
  for (int i = 0; i < 60; ++i) run_one(p, 0, 0);
  uint64_t picks = 0;
  for (uint32_t i = 0; i < N; ++i) {
    vkds_policy_resource_stats st;
    ck_assert_vkds(vkds_policy_get_resource_stats(p, i, &st));
    ck_assert_uint_eq(st.in_flight, 0);
    picks += st.selections;
  }
  ck_assert_uint_eq(picks, 60);
  ck_assert_int_ge(atomic_load(&derived_reports), 60); /* its completions at least */
  vkds_policy_release(p);
  ck_assert_int_eq(atomic_load(&derived_destroys), 1);
  /* auto tune's select needs task times: a table inheriting it needs them too (it was
   * made over a backend without them, and never tuned) */
  static const vkds_policy_ops tuned = {.version = VKDS_POLICY_OPS_VERSION, .parent = &vkds_policy_auto_tune_ops};
  vkds_policy_resources base = {.kind = &fake_kind, .resource_count = N, .resources = res_ptr,
                                .backend_ops = &vkds_backend_base_ops};
  ck_assert_int_eq(vkds_policy_create(&(vkds_policy_info){.ops = &tuned, .resources = base}, &p), VKDS_ERROR_UNSUPPORTED);
  /* and the settings that need completions are named as the reason */
  ck_assert_int_eq(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_ROUND_ROBIN, .capacity = 2,
                                                          .resources = base}, &p), VKDS_ERROR_UNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "needs reports of completion for its capacity"));
}
END_TEST

/* A policy's last release while another thread delivers its task's completion: on a
 * queue shared with another policy, that policy's thread may take the finished slot and
 * report it outside the queue's lock; the owner's wait must not return (and let the
 * policy go) before the report is out. It did: a use after free in the report sink,
 * 25-1,100 times in 20,000 releases (session 27's concurrency probe). The policy's
 * report slot counts reports that arrive after its destroy slot ran. */
static _Atomic(vkds_policy *) short_lived;
static atomic_int late_reports, short_reports;
static void short_lived_report(vkds_policy *p, const vkds_report *r) {
  /* a slow sink (50 us) widens the window: the owner's wait returned during it */
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  do clock_gettime(CLOCK_MONOTONIC, &t);
  while ((t.tv_sec - t0.tv_sec) * 1000000000l + (t.tv_nsec - t0.tv_nsec) < 50000);
  if (r->what == VKDS_REPORT_COMPLETION) atomic_fetch_add(&short_reports, 1);
  if (atomic_load(&short_lived) != p) atomic_fetch_add(&late_reports, 1);
}
static void short_lived_destroy(vkds_policy *p) {
  atomic_store(&short_lived, NULL);
  vkds_policy_fixed_ops.destroy(p);
}
static vkds_result no_work(void *user, const vkds_task *t, void **w) {
  (void)user, (void)t, (void)w;
  return VKDS_SUCCESS;
}
static atomic_bool others_stop;
static void *other_policy_thread(void *arg) {
  while (!atomic_load(&others_stop)) {
    vkds_submission *sub;
    ck_assert_vkds(vkds_submit(arg, &(vkds_task_info){.fn = no_work}, &sub));
    ck_assert_vkds(vkds_submission_wait(sub));
    vkds_submission_release(sub);
  }
  return NULL;
}

START_TEST(last_release_waits_for_reports_other_threads_deliver) {
  vkds_context *ctx = harness_context();
  vkds_policy *other;
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = {.context = ctx}}, &other));
  atomic_store(&others_stop, false);
  pthread_t threads[2];
  for (int t = 0; t < 2; ++t) ck_assert_int_eq(pthread_create(&threads[t], NULL, other_policy_thread, other), 0);
  static const vkds_policy_ops reporting = {.version = VKDS_POLICY_OPS_VERSION, .name = "short lived",
                                            .parent = &vkds_policy_fixed_ops, .reports = VKDS_REPORT_COMPLETION,
                                            .destroy = short_lived_destroy, .report = short_lived_report};
  atomic_store(&late_reports, 0), atomic_store(&short_reports, 0);
  /* about three seconds' worth, at least 300 releases */
  time_t start = time(NULL);
  int rounds = 0;
  for (; rounds < 20000 && (rounds < 300 || time(NULL) - start < 3); ++rounds) {
    vkds_policy *p;
    ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.ops = &reporting, .resources = {.context = ctx}}, &p));
    atomic_store(&short_lived, p);
    vkds_submission *sub;
    ck_assert_vkds(vkds_submit(p, &(vkds_task_info){.fn = no_work, .key = 1}, &sub));
    ck_assert_vkds(vkds_submission_wait(sub));
    vkds_submission_release(sub);
    vkds_policy_release(p);
    int late = atomic_load(&late_reports);
    ck_assert_msg(late == 0, "round %d: a report reached the policy after its destroy", rounds);
  }
  atomic_store(&others_stop, true);
  for (int t = 0; t < 2; ++t) pthread_join(threads[t], NULL);
  ck_assert_int_eq(atomic_load(&short_reports), rounds); /* every completion reached its policy, once */
  vkds_policy_release(other);
  vkds_context_destroy(ctx);
}
END_TEST

START_TEST(cpu_pool_backend_under_every_policy) {
  cpu_pool *pools[2] = {cpu_pool_create(2), cpu_pool_create(2)};
  ck_assert_vkds(vkds_backend_register(&cpu_pool_kind, &cpu_pool_backend_ops));
  static const vkds_policy_kind kinds[] = {VKDS_POLICY_FIXED, VKDS_POLICY_ROUND_ROBIN, VKDS_POLICY_DYNAMIC_LOAD,
                                           VKDS_POLICY_AUTO_TUNE, VKDS_POLICY_EARLIEST_FINISH};
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k) {
    vkds_policy *p;
    atomic_int sum = 0;
    ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = kinds[k],
        .resources = {.kind = &cpu_pool_kind, .resource_count = 2, .resources = (void *const *)pools}}, &p));
    for (int i = 0; i < 100; ++i) ck_assert_vkds(vkds_submit(p, &(vkds_task_info){.fn = enqueue, .user = &sum}, NULL));
    ck_assert_vkds(vkds_submit_and_wait(p, &(vkds_task_info){.fn = enqueue, .user = &sum}));
    ck_assert_vkds(vkds_policy_wait_all(p, UINT64_MAX));
    ck_assert_int_eq(atomic_load(&sum), 101);
    vkds_policy_release(p);
  }
  ck_assert_vkds(vkds_backend_register(&cpu_pool_kind, NULL));
  for (int i = 0; i < 2; ++i) cpu_pool_destroy(pools[i]);
}
END_TEST

int main(void) {
  Suite *s = suite_create("policy");
  TCase *tc = harness_tcase("policy");
  tcase_add_test(tc, round_robin_cycles);
  tcase_add_test(tc, round_robin_four_threads);
  tcase_add_test(tc, fixed_index);
  tcase_add_test(tc, dynamic_load_balanced_with_synchronous_completion);
  tcase_add_test(tc, dynamic_load_follows_counts);
  tcase_add_test(tc, dynamic_load_concurrent_selections_spread);
  tcase_add_test(tc, auto_tune_finds_the_fast_one);
  tcase_add_test(tc, auto_tune_warmup_is_excluded);
  tcase_add_test(tc, auto_tune_keys_are_independent);
  tcase_add_test(tc, auto_tune_retunes_after_the_interval);
  tcase_add_test(tc, auto_tune_forgets_keys_unused_longest);
  tcase_add_test(tc, earliest_finish_weighs_queue_cost_and_data);
  tcase_add_test(tc, earliest_finish_looks_past_a_slow_warm_up);
  tcase_add_test(tc, earliest_finish_forgets_keys_unused_longest);
  tcase_add_test(tc, earliest_finish_rates_one_devices_resources_alike);
  tcase_add_test(tc, a_policy_derived_from_a_built_in_keeps_its_size);
  tcase_add_test(tc, a_select_that_counts_its_picks_keeps_capacity_and_counts_out);
  tcase_add_test(tc, a_completion_reported_twice_is_ignored);
  tcase_add_test(tc, a_fixed_index_names_the_callers_resource);
  tcase_add_test(tc, an_inherited_report_slot_gets_its_reports);
  tcase_add_test(tc, a_failing_select_is_named);
  tcase_add_test(tc, unsubmitted_selection_gives_its_place_back);
  tcase_add_test(tc, a_second_selection_release_is_ignored);
  tcase_add_test(tc, deferred_initialization);
  tcase_add_test(tc, bad_policies_are_named_errors);
  tcase_add_test(tc, capacity_blocks_and_times_out);
  tcase_add_test(tc, capacity_skips_full_resources);
  tcase_add_test(tc, selections_count_exactly_under_capacity);
  tcase_add_test(tc, task_failure_is_named);
  tcase_add_test(tc, copies_share_state);
  tcase_add_test(tc, every_policy_on_three_lavapipe_devices);
  tcase_add_test(tc, a_task_that_says_lost_loses_its_resource_in_that_policy);
  tcase_add_test(tc, auto_tune_times_few_tasks_of_a_key_bound_to_one_device);
  tcase_add_test(tc, derived_policies_inherit_and_call_their_parent);
  tcase_add_test(tc, cpu_pool_backend_under_every_policy);
  tcase_add_test(tc, last_release_waits_for_reports_other_threads_deliver);
  suite_add_tcase(s, tc);
  return harness_run(s);
}
