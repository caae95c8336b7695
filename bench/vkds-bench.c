/* bench/vkds-bench.c: microbenchmarks of every vkds resource on this machine.
 *
 * Modes are looked up by name in `modes` below; each gets the context and the common
 * options and returns an exit status. Only --quick (the self-test of every resource)
 * exists so far. Public API only. */
#include <vkds/vkds.h>

#include "bench.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "vkds-bench"


typedef struct bench_mode {
  const char *name; /* selected by --NAME */
  const char *help;
  bench_fn run;
} bench_mode;

/* ---- errors and logging ------------------------------------------------------------ */

/* vkds's errors and, with VKDS_VALIDATION=1, the validation layer's messages. */
/* Whether the logger printed an error: the failure's own line then needs no detail. */
static bool error_logged;

static void log_to_stderr(void *user, vkds_log_level level, vkds_log_source source,
                          const char *message) {
  static const char *const levels[] = {"", "debug", "info", "warning", "error"};
  static const char *const sources[] = {"", "vkds", "validation", "driver"};
  (void)user;
  if (level == VKDS_LOG_ERROR) error_logged = true;
  fprintf(stderr, PROG ": %s %s: %s\n", (unsigned)source < 4 ? sources[source] : "?",
          (unsigned)level < 5 ? levels[level] : "?", message);
}

/* ---- --quick: the self-test of every resource ---------------------------------------- */

/* One row of the table. The header and the rows share the column widths (long device
 * names are cut to 28 bytes); the round trip header is one column wider because "µ"
 * takes two bytes in UTF-8 and printf pads by bytes. */
#define QUICK_ROW "%3s  %-28.28s  %-10s  %-5s  %-18s  %10s  %8s  %8s  %6s  %s\n"
#define QUICK_HEAD "%3s  %-28.28s  %-10s  %-5s  %-18s  %10s  %9s  %8s  %6s  %s\n"

static void quick_header(void) {
  printf(QUICK_HEAD, "res", "device", "type", "queue", "result", "dispatches", "rt µs",
         "fill ms", "GB/s", "timing");
}

/* Prints one resource's row; `out` is meaningful only when the test ran to the check
 * (VKDS_SUCCESS or VKDS_ERROR_WRONG_RESULT). */
static void quick_row(const vkds_resource_info *info, vkds_result r,
                      const vkds_self_test_result *out) {
  char index[12], queue[24], result[32], dispatches[12], rt[24], fill[24], bw[24];
  snprintf(index, sizeof index, "%u", (unsigned)info->index);
  snprintf(queue, sizeof queue, "%u.%u", (unsigned)info->queue_family,
           (unsigned)info->queue_index);
  const bool measured = r == VKDS_SUCCESS || r == VKDS_ERROR_WRONG_RESULT;
  if (r == VKDS_SUCCESS)
    snprintf(result, sizeof result, "ok");
  else if (r == VKDS_ERROR_WRONG_RESULT)
    snprintf(result, sizeof result, "FAIL %u wrong", (unsigned)out->mismatches);
  else
    snprintf(result, sizeof result, "ERROR");
  if (measured) {
    snprintf(dispatches, sizeof dispatches, "%u", (unsigned)out->dispatches);
    snprintf(rt, sizeof rt, "%.1f", out->round_trip_ns / 1e3);
    snprintf(fill, sizeof fill, "%.3f", out->fill_ns / 1e6);
    snprintf(bw, sizeof bw, "%.2f", out->fill_gb_per_s);
  } else {
    strcpy(dispatches, "-");
    strcpy(rt, "-");
    strcpy(fill, "-");
    strcpy(bw, "-");
  }
  printf(QUICK_ROW, index, info->device_name, vkds_device_type_str(info->device_type), queue,
         result, dispatches, rt, fill, bw,
         !measured ? "-" : out->gpu_timed ? "gpu timestamps" : "wall clock");
}

/* Self-tests one resource and prints its row; returns whether it passed. Failures
 * other than a wrong result are explained on stderr, since the row has no room. */
static bool quick_one(vkds_resource *res, const bench_options *opt, uint32_t *elements) {
  vkds_resource_info info;
  vkds_result r = vkds_resource_get_info(res, &info);
  if (r != VKDS_SUCCESS) {
    fprintf(stderr, PROG ": vkds_resource_get_info failed: %s: %s\n", vkds_result_str(r),
            bench_error_detail(r));
    return false;
  }
  vkds_self_test_info test = {.count = opt->count};
  vkds_self_test_result out = {0};
  r = vkds_resource_self_test(res, &test, &out);
  quick_row(&info, r, &out);
  if (r == VKDS_SUCCESS || r == VKDS_ERROR_WRONG_RESULT) *elements = out.count;
  if (r == VKDS_ERROR_WRONG_RESULT)
    fprintf(stderr, PROG ": resource %u: %u of %u elements wrong, the first at index %u\n",
            (unsigned)info.index, (unsigned)out.mismatches, (unsigned)out.count,
            (unsigned)out.first_bad);
  else if (r != VKDS_SUCCESS)
    fprintf(stderr, PROG ": resource %u: vkds_resource_self_test failed: %s: %s\n",
            (unsigned)info.index, vkds_result_str(r), bench_error_detail(r));
  return r == VKDS_SUCCESS;
}

static int run_quick(vkds_context *ctx, const bench_options *opt) {
  const uint32_t n = vkds_context_resource_count(ctx);
  uint32_t elements = 0; /* of the fills, as the self-test reports it */
  bool all_ok = true;
  quick_header();
  for (uint32_t i = 0; i < n; i++) {
    /* Flush so that a slow device shows the rows done so far. */
    all_ok = quick_one(vkds_context_resource(ctx, i), opt, &elements) && all_ok;
    fflush(stdout);
  }
  if (elements)
    printf("rt: median round trip of a one-group dispatch; fill: the best of the timed\n"
           "fills of %u elements (%.3g MiB) each; timing: how the fill was timed.\n",
           (unsigned)elements, (double)elements * 4.0 / (1024.0 * 1024.0));
  return all_ok ? 0 : 1;
}

/* ---- modes and command line -------------------------------------------------------- */

/* The first mode is the default. */
static const bench_mode modes[] = {
    {"quick", "self-test every resource: correctness, round trip, fill bandwidth", run_quick},
    {"submit", "submit-to-completion round trip and batched submissions, vkds against plain Vulkan", bench_submit},
    {"select", "select overhead per policy (1, 8, 64 resources; 1 and 4 threads)", bench_select},
    {"balance", "makespan of mixed GPU tasks over resources of unequal speed, per policy, against the ideal", bench_balance},
    {"launch", "kernel launches against plain Vulkan; pipeline creation cold and from the disk cache", bench_launch},
    {"balance-devices", "the same over the first queue of every device, each at its own speed (a GPU next to lavapipe)",
     bench_balance_devices},
    {"balance-cpu", "the same over independent one-thread CPU pools (examples/cpu_pool)", bench_balance_cpu},
    {"bandwidth", "host<->device bandwidth: plain staging, vkds pipelined, imported, mapped; 1 MiB to 1 GiB", bench_bandwidth},
    {"algorithms", "vkds/algorithm.h over 2^10..2^28 u32 and f32, device data (GPU timestamps) and host data"
                   " (wall time), against a plain copy shader (and CUB)", bench_algorithms},
};
#define MODE_COUNT (sizeof modes / sizeof modes[0])

static void usage(FILE *f) {
  fprintf(f, "Usage: " PROG " [MODE] [--count N] [--devices-per-physical N] [--min-log2 N] [--max-log2 N]\n"
             "                  [--json] [--cub FILE] [--only NAMES]\n"
             "Benchmarks every vkds resource (compute queue) on this machine.\n\nModes:\n");
  for (size_t i = 0; i < MODE_COUNT; i++)
    fprintf(f, "  --%-12s %s%s\n", modes[i].name, modes[i].help, i == 0 ? " (default)" : "");
  fprintf(f, "\nOptions (numbers in decimal):\n"
             "  --count N      --quick: elements per fill; --submit: dispatches per batch;\n"
             "                 --select: calls per thread; --balance, --balance-devices,\n"
             "                 --balance-cpu: tasks; --launch: launches per batch;\n"
             "                 --bandwidth: sizes 1, 4, 16, ... MiB up to N (not\n"
             "                 --algorithms)\n"
             "  --devices-per-physical N  N VkDevices on each physical device, 1..64\n"
             "                 (several resources where there is one queue, as on lavapipe)\n"
             "  --max-log2 N   --algorithms: the largest size, 2^N elements (10..30; default\n"
             "                 28, 24 on CPU devices; smaller where memory is short)\n"
             "  --min-log2 N   --algorithms: the smallest size (default 10; the round trips\n"
             "                 are always measured at 2^10)\n"
             "  --json         --algorithms: also one JSON object per row (before the table)\n"
             "  --cub FILE     --algorithms: cub_bench's JSON lines (bench/cub), the baseline\n"
             "                 of the reductions, scans, copy_if, reduce_by_key, histograms,\n"
             "                 sorts and merges\n"
             "  --only NAMES   --algorithms: only the algorithms whose names contain one of\n"
             "                 the comma-separated NAMES (e.g. histogram,reduce; each must\n"
             "                 name one; 'vkds_sort$', a name ending there: that one\n"
             "                 alone); an algorithm's forced-path rows come with it; the\n"
             "                 plain copy and the round trips are always measured\n"
             "  -h, --help     show this help\n"
             "\nEnvironment: VKDS_DEVICES restricts the devices, VKDS_VALIDATION=1 enables\n"
             "the Khronos validation layer.\n");
}

static const bench_mode *find_mode(const char *arg) {
  if (strncmp(arg, "--", 2) != 0) return NULL;
  for (size_t i = 0; i < MODE_COUNT; i++)
    if (strcmp(arg + 2, modes[i].name) == 0) return &modes[i];
  return NULL;
}

static bool parse_count(const char *s, uint32_t *out) {
  char *end;
  errno = 0;
  /* decimal digits only: strtoull takes a sign, leading blanks, and with base 0 octal
   * ("010" was 8) and hex (a CLI probe) */
  if (*s < '0' || *s > '9') return false;
  unsigned long long v = strtoull(s, &end, 10);
  if (end == s || *end || errno || v == 0 || v > UINT32_MAX) return false;
  *out = (uint32_t)v;
  return true;
}

typedef enum parse_status { PARSE_RUN, PARSE_EXIT_OK, PARSE_EXIT_USAGE } parse_status;

static parse_status usage_error(const char *what, const char *arg) {
  fprintf(stderr, PROG ": %s '%s'\n\n", what, arg);
  usage(stderr);
  return PARSE_EXIT_USAGE;
}

static parse_status parse_args(int argc, char **argv, const bench_mode **mode,
                               bench_options *opt) {
  *mode = NULL;
  /* an option given twice is refused: which one counts would be a guess */
  static const char *const once[] = {"--count", "--devices-per-physical", "--max-log2", "--min-log2",
                                     "--json",  "--cub",                  "--only"};
  uint32_t seen = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    for (uint32_t k = 0; k < sizeof once / sizeof once[0]; ++k)
      if (strcmp(a, once[k]) == 0) {
        if (seen & (1u << k)) return usage_error("given twice:", a);
        seen |= 1u << k;
      }
    /* an option's value that is itself an option: its value is missing (`--cub
     * --algorithms` took "--algorithms" as the file, then said --cub needs --algorithms;
     * a CLI probe) */
    bool takes_value = false;
    for (uint32_t k = 0; k < sizeof once / sizeof once[0]; ++k)
      takes_value |= strcmp(a, once[k]) == 0 && strcmp(a, "--json") != 0; /* (--json takes none) */
    if (takes_value && i + 1 < argc && strncmp(argv[i + 1], "--", 2) == 0)
      return usage_error("missing value after", a);
    const bench_mode *m = find_mode(a);
    if (m) {
      if (*mode && *mode != m) return usage_error("only one mode at a time:", a);
      *mode = m;
    } else if (strcmp(a, "--count") == 0) {
      if (++i == argc) return usage_error("missing value after", a);
      if (!parse_count(argv[i], &opt->count))
        return usage_error("--count wants a positive 32-bit integer, not", argv[i]);
    } else if (strcmp(a, "--devices-per-physical") == 0) {
      if (++i == argc) return usage_error("missing value after", a);
      if (!parse_count(argv[i], &opt->devices_per_physical) || opt->devices_per_physical > 64)
        return usage_error("--devices-per-physical wants an integer from 1 to 64, not", argv[i]);
    } else if (strcmp(a, "--max-log2") == 0) {
      if (++i == argc) return usage_error("missing value after", a);
      if (!parse_count(argv[i], &opt->max_log2) || opt->max_log2 < 10 || opt->max_log2 > 30)
        return usage_error("--max-log2 wants an integer from 10 to 30, not", argv[i]);
    } else if (strcmp(a, "--min-log2") == 0) {
      if (++i == argc) return usage_error("missing value after", a);
      if (!parse_count(argv[i], &opt->min_log2) || opt->min_log2 < 10 || opt->min_log2 > 30)
        return usage_error("--min-log2 wants an integer from 10 to 30, not", argv[i]);
    } else if (strcmp(a, "--json") == 0) {
      opt->json = true;
    } else if (strcmp(a, "--cub") == 0) {
      if (++i == argc) return usage_error("missing value after", a);
      opt->cub_path = argv[i];
    } else if (strcmp(a, "--only") == 0) {
      if (++i == argc) return usage_error("missing value after", a);
      if (!*argv[i]) return usage_error("--only names no algorithm:", argv[i]); /* (it ran them all) */
      opt->only = argv[i];
    } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      return PARSE_EXIT_OK;
    } else {
      return usage_error("unknown argument", a);
    }
  }
  if (!*mode) *mode = &modes[0];
  /* the options of --algorithms elsewhere would be ignored without a word */
  const char *only_algorithms = opt->json ? "--json" : opt->cub_path ? "--cub" : opt->only ? "--only"
                                : opt->min_log2 ? "--min-log2" : opt->max_log2 ? "--max-log2" : NULL;
  if (only_algorithms && strcmp((*mode)->name, "algorithms") != 0)
    return usage_error("this option applies to --algorithms only:", only_algorithms);
  if (opt->count && strcmp((*mode)->name, "algorithms") == 0) /* (ignored without a word) */
    return usage_error("--algorithms takes no --count (its sizes: --min-log2, --max-log2):", "--count");
  if (opt->min_log2 && opt->max_log2 && opt->min_log2 > opt->max_log2)
    return usage_error("--min-log2 is above --max-log2:", "--min-log2");
  /* (before any context: "--only ," listed the devices first; a new-user probe) */
  if (opt->only && !bench_algorithms_only_ok(opt->only)) return PARSE_EXIT_USAGE;
  return PARSE_RUN;
}

/* A whole number from the environment variable `name` (unset or empty: *out stays 0);
 * false, after a usage message, for anything else or more than `max`. */
static bool env_count(const char *name, uint64_t max, uint64_t *out) {
  const char *v = getenv(name);
  if (!v || !*v) return true;
  char *end;
  errno = 0;
  unsigned long long n = strtoull(v, &end, 10);
  if (*end || errno || v[0] == '-' || n > max) {
    fprintf(stderr, PROG ": %s=\"%s\" is not a whole number up to %llu\n", name, v, (unsigned long long)max);
    return false;
  }
  *out = n;
  return true;
}

int main(int argc, char **argv) {
  const bench_mode *mode;
  bench_options opt = {0};
  switch (parse_args(argc, argv, &mode, &opt)) {
  case PARSE_EXIT_OK: return 0;
  case PARSE_EXIT_USAGE: return 2;
  case PARSE_RUN: break;
  }

  vkds_context_info info = {.log = log_to_stderr, .log_level = VKDS_LOG_WARN,
                            .devices_per_physical = opt.devices_per_physical};
  /* the staging ring's shape, for measuring it (vkds_context_info.staging_chunks and
   * staging_chunk_bytes; unset: vkds's defaults) */
  uint64_t chunks = 0, chunk_mib = 0, max_queues = 0;
  if (!env_count("VKDS_BENCH_STAGING_CHUNKS", UINT32_MAX, &chunks) ||
      !env_count("VKDS_BENCH_STAGING_CHUNK_MIB", UINT64_MAX >> 20, &chunk_mib) ||
      !env_count("VKDS_BENCH_MAX_QUEUES", UINT32_MAX, &max_queues))
    return 2;
  info.staging_chunks = (uint32_t)chunks;
  info.staging_chunk_bytes = chunk_mib << 20;
  /* where the driver's compiled pipelines go (vkds_context_info.pipeline_cache_dir), for
   * reading their machine code: scripts/nvidia-cache-sass.py */
  info.pipeline_cache_dir = getenv("VKDS_BENCH_PIPELINE_CACHE");
  /* queues a family (vkds_context_info.max_queues_per_family; unset: all), to compare the
   * main context with the forced scan paths' one-queue contexts */
  info.max_queues_per_family = (uint32_t)max_queues;
  vkds_context *ctx = NULL;
  vkds_result r = vkds_context_create(&info, &ctx);
  if (r != VKDS_SUCCESS) {
    if (error_logged) fprintf(stderr, PROG ": vkds_context_create failed (%s, above)\n", vkds_result_str(r));
    else fprintf(stderr, PROG ": vkds_context_create failed: %s: %s\n", vkds_result_str(r), bench_error_detail(r));
    return 1;
  }
  printf("vkds %s: %u device(s), %u resource(s)%s\n", vkds_version(),
         (unsigned)vkds_context_device_count(ctx), (unsigned)vkds_context_resource_count(ctx),
         vkds_context_validation_enabled(ctx) ? ", validation on" : "");
  opt.context_info = &info;
  int status = mode->run(ctx, &opt);
  vkds_context_destroy(ctx);
  /* the rows went nowhere (a full disk, a closed pipe): a failure, not a silent 0 (a CLI
   * probe; vkds-info does the same) */
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, PROG ": writing the output failed\n");
    if (status == 0) status = 1;
  }
  return status;
}
