/* bench/bench_algorithms.c: --algorithms, the algorithm layer (vkds/algorithm.h) against
 * baselines measured in the same run, on the first resource (a fixed policy over the
 * context, which already honours VKDS_DEVICES).
 *
 * Sizes 2^10 .. 2^max_log2 elements (--max-log2; 28, or 24 on a CPU device, lowered
 * until the data fits in half the memory) of u32 and f32, the data device-resident (a
 * vkds_seq_buffer over a VKDS_MEMORY_DEVICE buffer) or host-resident (vkds_seq_host
 * over malloc'ed memory). Rows, and how each is timed:
 *   plain_copy         bench/copy4.comp (16 bytes per thread and step) over device
 *                      buffers, submitted with raw Vulkan. GPU time: batches of copies
 *                      back to back in one command buffer, two timestamps around each
 *                      (see below); wall time: one pre-recorded dispatch submitted and
 *                      waited for as vkds waits (see plain_wait)
 *   vkds_copy, vkds_transform ("x * 2u + 1u" / "x * 2.0 + 1.0"), vkds_reduce (plus),
 *   vkds_count_if ("(x & 1u) == 0u" / "x > 0.5"), vkds_find_if ("x >= 0xfffff000u" /
 *   "x > 0.99999": rare, so every element is read), vkds_adjacent_difference (a - b),
 *   vkds_min_element, vkds_fill,
 *   vkds_inner_product, vkds_inclusive_scan and vkds_exclusive_scan (plus, no init:
 *   CUB's InclusiveSum and ExclusiveSum), vkds_copy_if (count_if's predicate, CUB's
 *   select_if's, into an output as long as the input), vkds_histogram_even (256 bins
 *   into the output's first 256 elements, as cub_histogram_even: u32 by their top 8
 *   bits, through a transform view "x >> 24u" over [0, 256); f32 over [-1, 1)),
 *   vkds_histogram_wide (u32 only: the same 256 bins asked directly over [0, 2^32 - 1),
 *   a width that is not a power of two, against cub_histogram_wide):
 *     on device data   GPU time: the recording form (vkds_cmd_X, scalar results into a
 *                      device buffer) in batches, as the plain copy's; wall time: the
 *                      blocking call through the policy, one call per sample with its
 *                      own submission and wait, as a user calls it
 *     on host data     wall time of the blocking call only: streaming the data is part
 *                      of what these rows measure
 *   vkds_inclusive_scan_single, vkds_inclusive_scan_portable, vkds_copy_if_single,
 *   vkds_copy_if_portable: the same on each scan path forced (algorithm.h, "Scans"), on
 *                      device data from 2^16 (PATH_MIN_LOG2) up, the recording form only:
 *                      GPU time (the blocking call's wall time only where there are no
 *                      timestamps). The unsuffixed rows run the path the main context
 *                      runs (the device's rule, or VKDS_SCAN_PATH), printed at the top.
 *                      The path is the context's (vkds_context_info.scan_path, resolved at
 *                      creation), so each forced path has a context of its own: made like
 *                      the main one (main()'s vkds_context_info, VKDS_DEVICES and
 *                      VKDS_VALIDATION honoured alike) with scan_path set, one queue per
 *                      family, used on the main resource's device and queue family (found
 *                      by device UUID). A buffer belongs to one context, so each holds
 *                      the same inputs uploaded to its own buffers (the host arrays and
 *                      their answers shared), and its own plain copy, whose batches pair
 *                      with its rows'. A device that cannot run the single pass (the
 *                      forced context would run the portable one) has no _single rows.
 *   vkds_reduce_by_key (plus) as cub_reduce_by_key: u32 keys in runs of random length 1..16
 *                      (the KEYS array), the input the values; the unique keys into the
 *                      output's first half, the sums into its second (on device data as the
 *                      rows above, and on host data)
 *   vkds_sort (ascending; also vkds_sort_single and vkds_sort_portable, each sort path
 *   forced, as the scans' paths), vkds_sort_by_key (4-byte values), vkds_merge_sort ("a
 *   < b"), against cub_sort_keys, cub_sort_pairs and cub_merge_sort_keys: the recording
 *   form only (GPU time), the keys (the output array) restored from the input, and the
 *   values (VALS) from IN2, by a copy recorded before each call's first timestamp (the
 *   sorts sort in place; CUB's out of place). GB/s count each key (and value) read and
 *   written once, as cub_bench's; checked: the output in order and a permutation of the
 *   input (of its (key, value) pairs), by commutative fingerprints; vkds_sort16 (u32
 *   only): keys < 2^16 (the K16 array: IN's low 16 bits), whose two upper passes are
 *   skipped, against cub_sort_keys16 (CUB told the bit range)
 *   vkds_merge (u32 only) of the HALVES array's two ascending halves into the output, as
 *                      cub_merge_keys (DeviceMerge::MergeKeys): out of place, so also
 *                      blocking and on host data; checked as the sorts; vkds_merge_by the
 *                      same by the comparator "a < b"
 *   plain_scan         bench/scan3.comp: an inclusive plus scan in plain Vulkan, the three
 *                      passes of vkds's portable path (group totals, their scan, the scan),
 *                      recorded like vkds's rows and GPU-timed the same way; its output is
 *                      checked as vkds_inclusive_scan's; no blocking or host rows
 *   plain_scan1        bench/scan1.comp: the same scan as the textbook single pass (chained
 *                      scan, decoupled look-back, tile numbers from a counter), recorded
 *                      and checked the same way; VKDS_BENCH_SCAN1 picks its shape
 *                      (loads, uvec4 a thread, group size, tile order, no look-back:
 *                      bench/plain_scan.c); GPUs only (its spins are unbounded)
 *   vkds_upload        the host rows' baseline: host -> device buffer; wall time
 *   rt_plain, rt_plain_recorded, rt_vkds_reduce: at 2^10 u32, the round trip of one
 *                      plain dispatch of the copy shader (pre-recorded, or recorded
 *                      before each submission) against a blocking vkds_reduce; wall time
 *
 * GPU time is what cub_bench (bench/cub) measures with its two cudaEvents around each of
 * its launches, back to back: the work on the queue, without the submission and the wait
 * that the wall time of a blocking call adds (by wall time the copy shader read 1.68
 * TB/s at 2^28 on an H100, CUB's copy 3.0 by events), and with the GPU at sustained
 * load. A GPU's clock governor lowers its clocks whenever it idles a while (an H100
 * dropped to 345-975 MHz, "GpuIdle", through the host rows and through small sizes timed
 * one submission per call, where the GPU waits on the host most of the time; the
 * memory-bound kernels then ran at ~57% speed). So a device row's recorded calls run in
 * batches: K calls recorded back to back into one command buffer (vkds's calls begin and
 * end with their own barriers), a timestamp before and after each (at BOTTOM_OF_PIPE,
 * reached once the work before is done, as an event), one submission and one wait per
 * batch; K aims at BATCH_NS of GPU work (10 ms: from the row's first call, then from
 * each batch's median; 1 to MAX_BATCH), the data sets rotating through the batch. The
 * plain copy's batches alternate with the row's (copy, row, copy, ...; on a GPU each
 * recorded while the other runs, so the GPU waits only for the host to wake from a
 * wait), so that a drift of the GPU's speed hits the row and its baseline alike ("copy
 * GB/s"). Each size's device rows come first and together: on a GPU (not a CPU device),
 * CLOCK_WARM_NS (1 s) of plain copies back to back first, untimed, so the clocks are
 * up when timing starts; then the plain copy's batches and every recorded row's (the
 * forced scan paths' last, in their contexts), nothing host-bound between them (each
 * row's first call, which may compile its kernel, comes before the warm-up; blocking
 * calls and output checks after all of them, then the host rows). A row's GPU time is
 * the median of all its calls' intervals over MIN_BATCHES to MAX_BATCHES batches (as
 * many as BATCHES_NS of wall time allows). A queue family without timestamps leaves
 * every row wall-timed, and the output says so.
 * Wall times are medians of N calls after warm-up (2 calls, and at least 10 ms on GPUs;
 * N from a time budget per row, 5 to 30; the round trips 200 after 20, in runs of 10
 * calls of one kind, the three kinds' runs interleaved). The data rotates over up to 8
 * sets of buffers (ROTATE_BYTES together) so that small sizes are not served from a
 * cache holding one set. GB/s are 10^9 bytes per
 * second of the bytes the algorithm must move, over the row's GPU time where it has one,
 * else its wall time: n*4 (reduce, count_if, min_element read; fill writes), 2*n*4 (copy,
 * transform and the scans read and write; inner_product reads two inputs); copy_if, as
 * cub_bench counts select_if: n*4 read, kept*4 written (the mean over the data sets),
 * and the 8-byte count.
 *
 * Ratio: GB/s over the baseline's. On device data, copy, transform and fill against the
 * plain copy of the same type and size (the batches alternating with the row's); the
 * reductions (reduce, count_if, min_element, inner_product) against cub_reduce of the
 * same type and size when --cub names cub_bench's output (bench/cub), the scans against
 * cub_inclusive_scan and cub_exclusive_scan, copy_if against cub_select_if (the forced
 * paths' rows too), else against the plain copy (a row whose CUB row is missing from the
 * file too). Host-resident rows against vkds_upload of the same bytes: a streamed
 * algorithm moves host data through the same bus. For the rt_ rows the ratio is of times
 * (lower is better) against rt_plain.
 *
 * Every row is checked on fresh random data (a new seed each run, printed), in each form
 * it runs in: scalar results against a host computation (u32 exactly, f32 within
 * F32_TOLERANCE of the sum of magnitudes): the blocking call's on every call, the
 * recording form's on the last call of every batch (read back from its device buffer,
 * which is poisoned just before that call); a scan's scalar result is its output's last
 * element (the total; exclusive: less the last input), poisoned before the call and read
 * after it, copy_if's its count. Written outputs once more after the timed calls, into
 * poisoned memory, every element: scans u32 exactly, f32 within F32_TOLERANCE of the
 * running sum of magnitudes (as cub_bench checks CUB's); copy_if the kept elements in
 * their order and every element after them untouched.
 *
 * Output: with --json, one JSON object per row as soon as it is measured (algo, type, n,
 * resident, us, gbps, timing, gpu_us, wall_us, roof_gbps where the row has one, baseline,
 * ratio, ok: us and gbps are the row's, from its GPU time when timing is "gpu"; cub_bench
 * writes the same format without the timing fields); the table last. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <vulkan/vulkan.h>

#include "bench.h"
#include "copy4.comp.h"
#include "plain_scan.h"

enum {
  MIN_LOG2 = 10,
  MAX_SETS = 8,
  WARMUP = 2,
  MIN_REPS = 5,
  MAX_REPS = 30,
  RT_TRIPS = 200,
  RT_WARMUP = 20,
  RT_RUN = 10, /* round trips timed one after the other (divides both above) */
  COPY_GROUP = 256, /* copy4.comp's local_size_x */
  MAX_BATCH = 256,  /* calls in one GPU-timed batch (one command buffer), at most */
  MIN_BATCHES = 3,  /* timed batches per row (of each kind), at least ... */
  MAX_BATCHES = 6,  /* ... and at most */
  PATH_MIN_LOG2 = 16, /* the forced scan paths' rows from this size up */
  PATHS = 2,          /* forced scan paths: single, portable */
};
#define ROTATE_BYTES (128ull << 20) /* 2.5x an H100's L2 (50 MB) */
#define ROW_BUDGET_NS 150000000ull  /* timed calls per row: as many as fit (within the bounds) */
#define BATCHES_NS (ROW_BUDGET_NS / 3) /* a row's GPU-timed batches: as many as fit (within the bounds) */
#define BATCH_NS 10000000ull        /* the GPU time one batch aims at */
#define LONG_CALL_NS 20000000ull    /* a first call this long is warm-up enough */
#define WARM_NS 10000000ull         /* on GPUs, the warm-up of a wall-timed row lasts at least this long */
/* On GPUs, plain copies back to back before each size's device rows. 200 ms was not
 * enough at 2^28 on an H100 (2026-11-27, session 25, VKDS_BENCH_INTERVALS=1, six runs of
 * `--only copy_if`): in 5 of 12 datasets every call of the plain copy's row ran at 1,239
 * us against 710 (1.74x, a plateau, not a drift), for ~100 ms after the warm-up, and in
 * one the slow state reached into vkds_copy_if's first 8 calls (1,980 us against 862) */
#define CLOCK_WARM_NS 1000000000ull
#define POISON 0xffffffffu          /* a NaN as f32 */
#define HIST_BINS 256u              /* the histogram's bins (cub_bench's) */
#define F32_TOLERANCE 1e-5
#define WAIT_SPIN_NS 50000ull       /* plain waits spin this long, as vkds's (its default spin_ns) */
#define SPIN_ALWAYS UINT64_MAX
#define GPU_WAIT_NS 20000000000ull /* any one wait for the GPU: beyond it, the row fails (never a hang) */

typedef enum residency { DEVICE, HOST } residency;
static const char *const residency_names[] = {"device", "host"};

static const char *type_name(vkds_type t) { return t == VKDS_U32 ? "u32" : "f32"; }

static uint32_t ilog2(uint64_t n) {
  uint32_t k = 0;
  while (n >>= 1) ++k;
  return k;
}

/* ---- rows ------------------------------------------------------------------------- */

struct algo;

typedef struct row {
  char algo[40];
  const struct algo *alg; /* the algorithm a vkds_ row times; NULL: a baseline or round trip */
  vkds_type type;
  uint64_t n;
  residency resident;
  double us, gbps;       /* the row's time (gpu_us where it has one, else wall_us) and its GB/s */
  double gpu_us, wall_us; /* 0: not measured (see the header) */
  double roof_gbps;       /* recorded device rows: plain_copy's GB/s in calls interleaved with the row's; 0: none */
  const char *baseline;  /* NULL: none */
  double ratio;
  bool ok;
} row;

typedef struct row_list {
  row *v;
  size_t count, cap;
} row_list;

static row *row_add(row_list *l, const char *algo, vkds_type type, uint64_t n, residency where) {
  if (l->count == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 256;
    row *v = realloc(l->v, cap * sizeof *v);
    if (!v) return NULL;
    l->v = v, l->cap = cap;
  }
  row *r = &l->v[l->count++];
  *r = (row){.type = type, .n = n, .resident = where};
  snprintf(r->algo, sizeof r->algo, "%s", algo);
  return r;
}

/* Sets a row's times (medians in ns, 0: not measured) and the GB/s of `bytes` moved:
 * from the GPU time where the row has one, so that it compares with CUB's events. */
static void row_times(row *r, double bytes, double gpu_ns, double wall_ns) {
  double ns = gpu_ns > 0 ? gpu_ns : wall_ns;
  r->gpu_us = gpu_ns / 1e3, r->wall_us = wall_ns / 1e3, r->us = ns / 1e3;
  r->gbps = ns > 0 && bytes > 0 ? bytes / ns : 0.0;
}

static const row *row_find(const row_list *l, const char *algo, vkds_type type, uint64_t n) {
  for (size_t i = 0; i < l->count; ++i)
    if (l->v[i].type == type && l->v[i].n == n && strcmp(l->v[i].algo, algo) == 0) return &l->v[i];
  return NULL;
}

/* ---- cub_bench's output (--cub) ----------------------------------------------------- */

/* The value of "key" in one JSON object per line, as cub_bench and --json write them
 * (flat objects, no escapes in strings): a string copied to `s`, or a number. */
static const char *json_value(const char *line, const char *key) {
  char pat[40];
  snprintf(pat, sizeof pat, "\"%s\"", key);
  const char *p = strstr(line, pat);
  if (!p) return NULL;
  p += strlen(pat);
  while (*p == ' ' || *p == ':') ++p;
  return p;
}

static bool json_string(const char *line, const char *key, char *s, size_t cap) {
  const char *p = json_value(line, key);
  if (!p || *p != '"') return false;
  const char *end = strchr(++p, '"');
  if (!end || (size_t)(end - p) >= cap) return false;
  memcpy(s, p, (size_t)(end - p));
  s[end - p] = 0;
  return true;
}

static bool json_number(const char *line, const char *key, double *v) {
  const char *p = json_value(line, key);
  char *end;
  if (!p) return false;
  *v = strtod(p, &end);
  return end != p;
}

/* Reads cub_bench's rows into `l` (resident "device"). Returns 0, or 1 when the file
 * cannot be read. Lines that are not rows are skipped. */
static int cub_load(const char *path, row_list *l) {
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "vkds-bench: cannot read --cub %s\n", path);
    return 1;
  }
  char line[1024], algo[40], type[8];
  double n, gbps;
  uint32_t rows = 0;
  while (fgets(line, sizeof line, f))
    /* (cub_bench's rows only: vkds-bench's own --json output was taken for CUB's, and
     * the legend then named CUB baselines that no row had; a probe) */
    if (json_string(line, "algo", algo, sizeof algo) && strncmp(algo, "cub_", 4) == 0 &&
        json_string(line, "type", type, sizeof type) && json_number(line, "n", &n) && json_number(line, "gbps", &gbps) &&
        (strcmp(type, "u32") == 0 || strcmp(type, "f32") == 0)) {
      row *r = row_add(l, algo, strcmp(type, "u32") == 0 ? VKDS_U32 : VKDS_F32, (uint64_t)n, DEVICE);
      if (r) r->gbps = gbps, r->ok = true, ++rows;
    }
  bool failed = ferror(f);
  fclose(f);
  /* a folder, or a file of something else, gave a table without its baseline and not a
   * word (a probe): a folder is an error; a file without rows is said (the device
   * scripts go on when cub_bench failed) */
  if (failed) {
    fprintf(stderr, "vkds-bench: cannot read --cub %s\n", path);
    return 1;
  }
  if (rows == 0) fprintf(stderr, "vkds-bench: --cub %s holds no cub_bench rows: no CUB baseline in this run\n", path);
  return 0;
}

/* ---- data and the host's answers ---------------------------------------------------- */

static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static float as_f32(uint32_t bits) {
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static uint32_t f32_bits(float f) {
  uint32_t b;
  memcpy(&b, &f, sizeof b);
  return b;
}

/* One random element's bits: any u32; an f32 in [-1, 1) on a 2^-23 grid (signs mixed so
 * that sums cancel, no denormals, no NaN). */
static uint32_t random_element(uint64_t *s, vkds_type t) {
  uint32_t r = (uint32_t)(splitmix(s) >> 32);
  return t == VKDS_U32 ? r : f32_bits((float)(r >> 8) * (1.0f / 8388608.0f) - 1.0f);
}

/* Keys in runs of random length 1..16, each run's key random and unlike the run's
 * before (cub_bench's for cub_reduce_by_key). Returns the number of runs. */
static uint64_t random_runs(uint64_t *s, uint32_t *keys, uint64_t n) {
  uint64_t runs = 0;
  uint32_t key = 0;
  for (uint64_t i = 0; i < n; ++runs) {
    uint64_t r = splitmix(s), len = 1 + (r & 15);
    uint32_t next = (uint32_t)(r >> 32);
    if (runs > 0 && next == key) next ^= 1u;
    key = next;
    for (uint64_t k = 0; k < len && i < n; ++k) keys[i++] = key;
  }
  return runs;
}

/* Two ascending halves of u32, each from a random start below 2^16 in random steps of
 * 0..7 (below 2^31 up to 2^28 elements), as cub_bench's AUX_HALVES. */
static void ascending_halves(uint64_t *s, uint32_t *a, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t r = splitmix(s);
    a[i] = i == 0 || i == n / 2 ? (uint32_t)(r >> 48) : a[i - 1] + (uint32_t)(r & 7);
  }
}

/* The host's answers for one set of inputs. */
typedef struct reference {
  uint32_t sum, dot;                     /* u32: wrapping, as the device's */
  double sum_f, sum_abs, dot_f, dot_abs; /* f32: exact-ish in double, and the tolerance's scale */
  uint64_t count;                        /* count_if, and the elements copy_if keeps */
  uint64_t min_index;
  uint32_t min_bits;
  uint32_t last; /* the last element (the exclusive scan's last output leaves it out) */
  uint64_t runs; /* reduce_by_key: the runs of equal keys */
  uint64_t found; /* find_if: the first index where find_pred holds (n: none) */
} reference;

static bool count_pred(vkds_type t, uint32_t x) { return t == VKDS_U32 ? (x & 1u) == 0u : as_f32(x) > 0.5f; }
/* find_if's: rare (the whole input is read), true at a place that the data decides */
static bool find_pred(vkds_type t, uint32_t x) { return t == VKDS_U32 ? x >= 0xfffff000u : as_f32(x) > 0.99999f; }
static const char *find_op(vkds_type t) { return t == VKDS_U32 ? "x >= 0xfffff000u" : "x > 0.99999"; }

static bool less(vkds_type t, uint32_t a, uint32_t b) { return t == VKDS_U32 ? a < b : as_f32(a) < as_f32(b); }

static void reference_compute(reference *r, vkds_type t, const uint32_t *a, const uint32_t *b, uint64_t n) {
  *r = (reference){.min_bits = a[0], .last = a[n - 1], .found = n};
  for (uint64_t i = 0; i < n; ++i) {
    if (t == VKDS_U32) {
      r->sum += a[i];
      r->dot += a[i] * b[i];
    } else {
      double x = as_f32(a[i]), y = as_f32(b[i]);
      r->sum_f += x, r->sum_abs += fabs(x);
      r->dot_f += x * y, r->dot_abs += fabs(x * y);
    }
    r->count += count_pred(t, a[i]);
    if (r->found == n && find_pred(t, a[i])) r->found = i;
    if (less(t, a[i], r->min_bits)) r->min_bits = a[i], r->min_index = i;
  }
}

/* A float result within F32_TOLERANCE of the sum of magnitudes (the scale of the
 * rounding errors of any summation order); NaN fails. */
static bool f32_close(uint32_t got, double want, double scale) {
  return fabs((double)as_f32(got) - want) <= F32_TOLERANCE * scale + 1e-30;
}

/* ---- the data of one type and size ---------------------------------------------------- */

/* KEYS: reduce_by_key's u32 keys, in runs (random_runs); VALS: sort_by_key's values
 * (restored from IN2 before each call); K16: IN's low 16 bits (vkds_sort16's keys);
 * HALVES: vkds_merge's inputs, two ascending halves (ascending_halves) */
enum { IN, IN2, OUT, KEYS, VALS, K16, HALVES, ARRAYS };

typedef struct dataset {
  vkds_resource *res;
  vkds_type type;
  uint64_t n, bytes;
  uint32_t sets;
  vkds_buffer *dev[MAX_SETS][ARRAYS];
  uint32_t *host[MAX_SETS][ARRAYS];
  reference ref[MAX_SETS];
  uint32_t fill; /* vkds_fill's value */
  bool gpu;         /* not a CPU device: its clocks follow the load (see bench_size) */
  uint64_t warm_ns; /* the least warm-up time of each wall-timed row (see timer) */
  uint32_t *scratch; /* n words: poison to upload, outputs downloaded */
  vkds_buffer *cmd_scratch; /* the recorded forms' scratch (vkds_cmd.scratch); NULL: none needed */
  bool mirror; /* dataset_mirror's: host arrays and scratch are another dataset's */
} dataset;

/* vkds places a buffer elsewhere when device-local memory runs short: such rows would
 * time the wrong memory, so say so. */
static void warn_not_device_local(const dataset *d) {
  for (uint32_t s = 0; s < d->sets; ++s)
    for (int a = 0; a < ARRAYS; ++a)
      if (d->dev[s][a] && !(vkds_buffer_memory_flags(d->dev[s][a]) & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)) {
        fprintf(stderr, "vkds-bench: 2^%u %s: a device buffer is not in device-local memory\n", ilog2(d->n),
                type_name(d->type));
        return;
      }
}

static void dataset_destroy(dataset *d) {
  for (uint32_t s = 0; s < MAX_SETS; ++s)
    for (int a = 0; a < ARRAYS; ++a) {
      vkds_buffer_destroy(d->dev[s][a]);
      if (!d->mirror) free(d->host[s][a]);
    }
  if (!d->mirror) free(d->scratch);
  vkds_buffer_destroy(d->cmd_scratch);
  *d = (dataset){0};
}

/* The recorded forms' scratch: every row's (the histogram's goes by its bins). */
static uint64_t recorded_scratch_bytes(vkds_resource *res, uint64_t n) {
  uint64_t a = vkds_algorithm_scratch_bytes(res, n), h = vkds_histogram_scratch_bytes(res, HIST_BINS);
  return a > h ? a : h;
}

/* Fresh random inputs for every set, on the host and in device buffers (dedicated, so
 * that the plain shader binds them at offset 0). Returns 0, or 1 with a message. */
static int dataset_create(dataset *d, vkds_resource *res, vkds_type type, uint64_t n, uint64_t *seed) {
  vkds_resource_info ri;
  vkds_resource_get_info(res, &ri);
  bool gpu = ri.device_type != VKDS_DEVICE_CPU;
  *d = (dataset){.res = res, .type = type, .n = n, .bytes = n * 4, .gpu = gpu, .warm_ns = gpu ? WARM_NS : 0};
  uint64_t per_set = 2 * d->bytes; /* what one copy touches */
  d->sets = (uint32_t)((ROTATE_BYTES + per_set - 1) / per_set);
  if (d->sets > MAX_SETS) d->sets = MAX_SETS;
  d->scratch = malloc(d->bytes);
  if (!d->scratch) goto oom;
  uint64_t cmd_scratch = recorded_scratch_bytes(res, n);
  if (cmd_scratch && vkds_buffer_create(res, &(vkds_buffer_info){.size = cmd_scratch}, &d->cmd_scratch) != VKDS_SUCCESS)
    goto oom;
  for (uint32_t s = 0; s < d->sets; ++s) {
    for (int a = 0; a < ARRAYS; ++a) {
      vkds_buffer_info bi = {.size = d->bytes, .memory = VKDS_MEMORY_DEVICE, .flags = VKDS_BUFFER_DEDICATED};
      d->host[s][a] = malloc(d->bytes);
      if (!d->host[s][a] || vkds_buffer_create(res, &bi, &d->dev[s][a]) != VKDS_SUCCESS) goto oom;
    }
    for (int a = IN; a <= IN2; ++a)
      for (uint64_t i = 0; i < n; ++i) d->host[s][a][i] = random_element(seed, type);
    uint64_t runs = random_runs(seed, d->host[s][KEYS], n);
    ascending_halves(seed, d->host[s][HALVES], n);
    /* The first write of a page faults, which no timed call should pay: host outputs are
     * written here, device outputs by the plain copy's warm-up (plain_warm, every set). */
    memset(d->host[s][OUT], 0xff, d->bytes);
    memset(d->host[s][VALS], 0xff, d->bytes);
    for (uint64_t i = 0; i < n; ++i) d->host[s][K16][i] = d->host[s][IN][i] & 0xffffu;
    for (int a = IN; a < ARRAYS; ++a)
      if (a != OUT && vkds_upload(res, vkds_view_of(d->dev[s][a]), d->host[s][a], d->bytes) != VKDS_SUCCESS) goto oom;
    reference_compute(&d->ref[s], type, d->host[s][IN], d->host[s][IN2], n);
    d->ref[s].runs = runs;
  }
  do d->fill = random_element(seed, type);
  while (d->fill == POISON);
  warn_not_device_local(d);
  return 0;
oom:
  fprintf(stderr, "vkds-bench: cannot set up 2^%u %s elements: %s\n", ilog2(n), type_name(type),
          vkds_last_error_message());
  dataset_destroy(d);
  return 1;
}

/* The same inputs as `src` (its host arrays, scratch and answers, borrowed: `src` must
 * outlive it) in device buffers of another context's resource: the forced scan paths'
 * data (see bench_size). Only IN and OUT, the arrays the scans and copy_if use. Returns
 * 0, or 1 with a message. */
static int dataset_mirror(dataset *m, vkds_resource *res, const dataset *src) {
  *m = *src;
  m->res = res, m->mirror = true, m->cmd_scratch = NULL;
  memset(m->dev, 0, sizeof m->dev);
  uint64_t cmd_scratch = recorded_scratch_bytes(res, m->n);
  if (cmd_scratch && vkds_buffer_create(res, &(vkds_buffer_info){.size = cmd_scratch}, &m->cmd_scratch) != VKDS_SUCCESS)
    goto oom;
  vkds_buffer_info bi = {.size = m->bytes, .memory = VKDS_MEMORY_DEVICE, .flags = VKDS_BUFFER_DEDICATED};
  for (uint32_t s = 0; s < m->sets; ++s)
    if (vkds_buffer_create(res, &bi, &m->dev[s][IN]) != VKDS_SUCCESS ||
        vkds_buffer_create(res, &bi, &m->dev[s][OUT]) != VKDS_SUCCESS ||
        vkds_upload(res, vkds_view_of(m->dev[s][IN]), m->host[s][IN], m->bytes) != VKDS_SUCCESS)
      goto oom;
  warn_not_device_local(m);
  return 0;
oom:
  fprintf(stderr, "vkds-bench: cannot set up 2^%u %s elements for a forced scan path: %s\n", ilog2(m->n),
          type_name(m->type), vkds_last_error_message());
  dataset_destroy(m);
  return 1;
}

static vkds_seq seq_of(const dataset *d, residency where, uint32_t set, int array) {
  return where == DEVICE ? vkds_seq_buffer(vkds_view_of(d->dev[set][array]), d->type)
                         : vkds_seq_host(d->host[set][array], d->n, d->type);
}

/* Poisons set 0's output, so that a check afterwards sees every element written. */
static vkds_result poison_output(dataset *d, residency where) {
  if (where == HOST) return memset(d->host[0][OUT], 0xff, d->bytes), VKDS_SUCCESS;
  memset(d->scratch, 0xff, d->bytes);
  return vkds_upload(d->res, vkds_view_of(d->dev[0][OUT]), d->scratch, d->bytes);
}

/* Set 0's output where the host can read it (downloaded into scratch when on the device). */
static const uint32_t *fetch_output(dataset *d, residency where, vkds_result *err) {
  if (where == HOST) return d->host[0][OUT];
  *err = vkds_download(d->res, d->scratch, vkds_view_of(d->dev[0][OUT]), d->bytes);
  return *err == VKDS_SUCCESS ? d->scratch : NULL;
}

/* The scans' check of every call: the last element of set `set`'s output poisoned before
 * the call, and read back after it. */
static vkds_view last_element(const dataset *d, uint32_t set) { return (vkds_view){d->dev[set][OUT], d->bytes - 4, 4}; }

static vkds_result poison_last(dataset *d, residency where, uint32_t set) {
  static const uint32_t poison = POISON;
  if (where == HOST) return d->host[set][OUT][d->n - 1] = POISON, VKDS_SUCCESS;
  return vkds_upload(d->res, last_element(d, set), &poison, 4);
}

static vkds_result fetch_last(dataset *d, residency where, uint32_t set, uint32_t *value) {
  if (where == HOST) return *value = d->host[set][OUT][d->n - 1], VKDS_SUCCESS;
  return vkds_download(d->res, value, last_element(d, set), 4);
}

/* ---- the algorithms ------------------------------------------------------------------ */

/* One call of an algorithm: blocking through the policy (results into the fields below),
 * or, with `rec`, recorded into rec->cmd (scalar results into the device view `result`,
 * read back into the same fields by unpack_result). */
typedef struct call {
  vkds_policy *pol;
  const dataset *d;
  vkds_seq in, in2, out;
  const vkds_cmd *rec;   /* non-NULL: the recording form */
  uint32_t set;          /* the dataset's set the sequences are of */
  residency where;
  const plain_scan *pscan; /* the recording form: the plain scan's pipelines (plain_scan's row) */
  vkds_view result;      /* the recording form's scalar results */
  uint32_t value;        /* reduce, inner_product, min_element: the value's bits; scans: the last element */
  uint64_t count, index; /* count_if, copy_if; min_element */
} call;

/* The operators, one per element type (GLSL does not mix int and uint, or float and int,
 * literals). */
static const char *transform_op(vkds_type t) { return t == VKDS_U32 ? "x * 2u + 1u" : "x * 2.0 + 1.0"; }
static const char *count_op(vkds_type t) { return t == VKDS_U32 ? "(x & 1u) == 0u" : "x > 0.5"; }

/* Each algorithm in both forms, so that the two cannot drift apart. */
static vkds_result run_copy(call *c) {
  return c->rec ? vkds_cmd_copy(c->rec, &c->in, &c->out) : vkds_copy(c->pol, &c->in, &c->out);
}
static vkds_result run_transform(call *c) {
  const char *op = transform_op(c->d->type);
  return c->rec ? vkds_cmd_transform(c->rec, &c->in, &c->out, op) : vkds_transform(c->pol, &c->in, &c->out, op);
}
static vkds_result run_reduce(call *c) {
  return c->rec ? vkds_cmd_reduce(c->rec, &c->in, NULL, NULL, c->result)
                : vkds_reduce(c->pol, &c->in, NULL, NULL, &c->value);
}
static vkds_result run_count_if(call *c) {
  const char *op = count_op(c->d->type);
  return c->rec ? vkds_cmd_count_if(c->rec, &c->in, op, c->result) : vkds_count_if(c->pol, &c->in, op, &c->count);
}
static vkds_result run_find_if(call *c) {
  const char *op = find_op(c->d->type);
  return c->rec ? vkds_cmd_find_if(c->rec, &c->in, op, c->result) : vkds_find_if(c->pol, &c->in, op, &c->count);
}
static vkds_result run_adjacent_difference(call *c) {
  return c->rec ? vkds_cmd_adjacent_difference(c->rec, &c->in, &c->out, NULL)
                : vkds_adjacent_difference(c->pol, &c->in, &c->out, NULL);
}
static vkds_result run_min_element(call *c) {
  return c->rec ? vkds_cmd_min_element(c->rec, &c->in, c->result)
                : vkds_min_element(c->pol, &c->in, &c->index, &c->value);
}
static vkds_result run_fill(call *c) {
  return c->rec ? vkds_cmd_fill(c->rec, &c->out, &c->d->fill) : vkds_fill(c->pol, &c->out, &c->d->fill);
}
static vkds_result run_inner_product(call *c) {
  return c->rec ? vkds_cmd_inner_product(c->rec, &c->in, &c->in2, NULL, c->result)
                : vkds_inner_product(c->pol, &c->in, &c->in2, NULL, &c->value);
}
/* The scans: plus, no init (CUB's InclusiveSum and ExclusiveSum). */
static vkds_result run_inclusive_scan(call *c) {
  return c->rec ? vkds_cmd_inclusive_scan(c->rec, &c->in, &c->out, NULL, NULL)
                : vkds_inclusive_scan(c->pol, &c->in, &c->out, NULL, NULL);
}
static vkds_result run_exclusive_scan(call *c) {
  return c->rec ? vkds_cmd_exclusive_scan(c->rec, &c->in, &c->out, NULL, NULL)
                : vkds_exclusive_scan(c->pol, &c->in, &c->out, NULL, NULL);
}
/* count_if's predicate (CUB's select_if keeps the same elements), into an output as long
 * as the input. */
static vkds_result run_copy_if(call *c) {
  const char *op = count_op(c->d->type);
  return c->rec ? vkds_cmd_copy_if(c->rec, &c->in, &c->out, op, c->result)
                : vkds_copy_if(c->pol, &c->in, &c->out, op, &c->count);
}

/* 256 even bins, as cub_histogram_even: u32 over [0, 2^32) (a transform view of the top
 * 8 bits over [0, 256): a U32 range cannot end at 2^32), f32 over [-1, 1) (this data's
 * range); the counts into the output's first 256 elements. */
static const vkds_transform_op TOP8 = {.glsl = "x >> 24u"};
static vkds_result run_histogram(call *c) {
  static const uint32_t lo_u = 0, hi_u = HIST_BINS;
  static const float lo_f = -1.0f, hi_f = 1.0f;
  bool u = c->d->type == VKDS_U32;
  vkds_seq top = vkds_seq_transform(&c->in, &TOP8), *in = u ? &top : &c->in, counts = c->out;
  counts.count = HIST_BINS, counts.type = VKDS_U32;
  const void *lo = u ? (const void *)&lo_u : &lo_f, *hi = u ? (const void *)&hi_u : &hi_f;
  return c->rec ? vkds_cmd_histogram_even(c->rec, in, lo, hi, &counts)
                : vkds_histogram_even(c->pol, in, lo, hi, &counts);
}

/* 256 even bins of u32 samples over [0, 2^32 - 1), asked directly: bins of a width that
 * is not a power of two (the general integer path, histogram.glsl), as
 * cub_histogram_wide asks CUB's with 64-bit levels [0, 2^32). */
static const uint32_t WIDE_HI = UINT32_MAX;
static vkds_result run_histogram_wide(call *c) {
  static const uint32_t lo = 0;
  vkds_seq counts = c->out;
  counts.count = HIST_BINS, counts.type = VKDS_U32;
  return c->rec ? vkds_cmd_histogram_even(c->rec, &c->in, &lo, &WIDE_HI, &counts)
                : vkds_histogram_even(c->pol, &c->in, &lo, &WIDE_HI, &counts);
}

/* plain_scan: bench/scan3.comp, the portable path's work without vkds (recorded only). */
static vkds_result run_plain_scan(call *c) {
  if (!c->rec || !c->pscan) return VKDS_ERROR_UNSUPPORTED;
  plain_scan_record(c->pscan, c->rec->cmd, c->set, c->d->type == VKDS_F32, c->d->n);
  return VKDS_SUCCESS;
}

/* plain_scan1: bench/scan1.comp, the textbook single pass without vkds (recorded only). */
static vkds_result run_plain_scan1(call *c) {
  if (!c->rec || !c->pscan) return VKDS_ERROR_UNSUPPORTED;
  plain_scan1_record(c->pscan, c->rec->cmd, c->set, c->d->type == VKDS_F32, c->d->n);
  return VKDS_SUCCESS;
}

/* reduce_by_key (plus), as cub_reduce_by_key: the KEYS array's runs, the values the
 * input; the unique keys into the output's first half, the runs' sums into its second. */
static vkds_result run_reduce_by_key(call *c) {
  const dataset *d = c->d;
  uint64_t half = d->n / 2;
  vkds_seq keys, keys_out, sums;
  if (c->where == DEVICE) {
    keys = vkds_seq_buffer(vkds_view_of(d->dev[c->set][KEYS]), VKDS_U32);
    keys_out = vkds_seq_buffer((vkds_view){d->dev[c->set][OUT], 0, half * 4}, VKDS_U32);
    sums = vkds_seq_buffer((vkds_view){d->dev[c->set][OUT], half * 4, (d->n - half) * 4}, d->type);
  } else {
    keys = vkds_seq_host(d->host[c->set][KEYS], d->n, VKDS_U32);
    keys_out = vkds_seq_host(d->host[c->set][OUT], half, VKDS_U32);
    sums = vkds_seq_host(d->host[c->set][OUT] + half, d->n - half, d->type);
  }
  return c->rec ? vkds_cmd_reduce_by_key(c->rec, &keys, &c->in, &keys_out, &sums, NULL, c->result)
                : vkds_reduce_by_key(c->pol, &keys, &c->in, &keys_out, &sums, NULL, &c->count);
}
static bool check_runs(const call *c, const reference *r) { return c->count == r->runs; }

/* The sorts sort in place, so before each recorded call, outside its two timestamps
 * (algo.before), the keys (the output array) are restored from the input, and
 * sort_by_key's values (VALS) from IN2: the GPU time is the sort's alone, as cub_bench
 * times CUB's out-of-place sorts. Ascending; sort_by_key's values are 4 bytes; the
 * comparator sort's comparator is "a < b". Recorded forms only (no blocking rows: those
 * would time the restoring copy too). */
static void restore(const call *c, VkCommandBuffer cmd, int from, int to) {
  const vkds_buffer *src = c->d->dev[c->set][from], *dst = c->d->dev[c->set][to];
  VkBufferCopy r = {.srcOffset = vkds_buffer_offset(src), .dstOffset = vkds_buffer_offset(dst), .size = c->d->bytes};
  vkCmdCopyBuffer(cmd, vkds_buffer_vk(src), vkds_buffer_vk(dst), 1, &r);
}
static void restore_keys(const call *c, VkCommandBuffer cmd) { restore(c, cmd, IN, OUT); }
static void restore_keys16(const call *c, VkCommandBuffer cmd) { restore(c, cmd, K16, OUT); }
static void restore_pairs(const call *c, VkCommandBuffer cmd) {
  restore(c, cmd, IN, OUT);
  restore(c, cmd, IN2, VALS);
}
static vkds_result run_sort(call *c) {
  return c->rec ? vkds_cmd_sort(c->rec, &c->out, VKDS_SORT_ASCENDING) : VKDS_ERROR_UNSUPPORTED;
}
static vkds_result run_sort_by_key(call *c) {
  vkds_seq values = vkds_seq_buffer(vkds_view_of(c->d->dev[c->set][VALS]), VKDS_U32);
  return c->rec ? vkds_cmd_sort_by_key(c->rec, &c->out, &values, VKDS_SORT_ASCENDING) : VKDS_ERROR_UNSUPPORTED;
}
static vkds_result run_merge_sort(call *c) {
  return c->rec ? vkds_cmd_merge_sort(c->rec, &c->out, "a < b") : VKDS_ERROR_UNSUPPORTED;
}
/* HALVES's two ascending halves, vkds_merge's inputs (u32 only, as cub_merge_keys) */
static void halves(const call *c, vkds_seq *a, vkds_seq *b) {
  const dataset *d = c->d;
  uint64_t half = d->n / 2;
  if (c->where == DEVICE) {
    *a = vkds_seq_buffer((vkds_view){d->dev[c->set][HALVES], 0, half * 4}, VKDS_U32);
    *b = vkds_seq_buffer((vkds_view){d->dev[c->set][HALVES], half * 4, (d->n - half) * 4}, VKDS_U32);
  } else {
    *a = vkds_seq_host_const(d->host[c->set][HALVES], half, VKDS_U32);
    *b = vkds_seq_host_const(d->host[c->set][HALVES] + half, d->n - half, VKDS_U32);
  }
}
/* vkds_merge of the halves into the output */
static vkds_result run_merge(call *c) {
  vkds_seq a, b;
  halves(c, &a, &b);
  return c->rec ? vkds_cmd_merge(c->rec, &a, &b, &c->out, VKDS_SORT_ASCENDING)
                : vkds_merge(c->pol, &a, &b, &c->out, VKDS_SORT_ASCENDING);
}
/* The same by the comparator "a < b" (vkds_merge_by): what a comparator costs the merge */
static vkds_result run_merge_by(call *c) {
  vkds_seq a, b;
  halves(c, &a, &b);
  return c->rec ? vkds_cmd_merge_by(c->rec, &a, &b, &c->out, "a < b") : vkds_merge_by(c->pol, &a, &b, &c->out, "a < b");
}

static bool check_reduce(const call *c, const reference *r) {
  return c->d->type == VKDS_U32 ? c->value == r->sum : f32_close(c->value, r->sum_f, r->sum_abs);
}
static bool check_count_if(const call *c, const reference *r) { return c->count == r->count; }
static bool check_find_if(const call *c, const reference *r) { return c->count == r->found; }
static bool check_min_element(const call *c, const reference *r) {
  return c->index == r->min_index && c->value == r->min_bits;
}
static bool check_inner_product(const call *c, const reference *r) {
  return c->d->type == VKDS_U32 ? c->value == r->dot : f32_close(c->value, r->dot_f, r->dot_abs);
}
/* The scans' last element: the total; the total without the last element. */
static bool check_inclusive_last(const call *c, const reference *r) { return check_reduce(c, r); }
static bool check_exclusive_last(const call *c, const reference *r) {
  if (c->d->type == VKDS_U32) return c->value == r->sum - r->last;
  double x = as_f32(r->last);
  return f32_close(c->value, r->sum_f - x, r->sum_abs - fabs(x));
}

/* What element i of the output should be, from element i of the input. */
static uint32_t expect_copy(vkds_type t, uint32_t x, uint32_t fill) { return (void)t, (void)fill, x; }
static uint32_t expect_transform(vkds_type t, uint32_t x, uint32_t fill) {
  (void)fill;
  return t == VKDS_U32 ? x * 2u + 1u : f32_bits(as_f32(x) * 2.0f + 1.0f);
}
static uint32_t expect_fill(vkds_type t, uint32_t x, uint32_t fill) { return (void)t, (void)x, fill; }

/* Where the recording forms put their scalar results (algorithm.h): the value; a
 * uint64_t count; a uint64_t index and the value at byte 8. LAST: none, the check reads
 * the output's last element (the scans). */
typedef enum result_layout { NO_RESULT, VALUE, COUNT, INDEX_VALUE, LAST } result_layout;
#define RESULT_BYTES 16u /* the largest layout */

typedef struct algo algo;
struct algo {
  const char *name;
  uint32_t words;  /* 32-bit words it must move per element; 0: copy_if's (algo_bytes) */
  const char *cub; /* cub_bench's row of the same work: the baseline with --cub; NULL: plain_copy */
  bool paths;      /* also on each forced scan path (see bench_size) */
  vkds_result (*run)(call *c);
  result_layout layout;
  bool (*check)(const call *c, const reference *r);           /* scalar results, every call */
  uint32_t (*expect)(vkds_type t, uint32_t in, uint32_t fill); /* element-wise outputs (check_output) */
  /* written outputs, every element, after the timed calls (into poisoned memory); NULL: none */
  bool (*verify)(const algo *a, const dataset *d, const uint32_t *out, const char *where);
  bool recorded_only; /* no blocking form (a plain-Vulkan baseline, the sorts): GPU-timed rows only */
  /* recorded before each recorded call, outside its timestamps (the sorts' inputs
   * restored); NULL: nothing */
  void (*before)(const call *c, VkCommandBuffer cmd);
  bool u32_only; /* no f32 rows (cub_bench has none to compare with) */
  int sorted_from; /* verify_sorted: the array the output is a permutation of (0: IN) */
};

/* Says how many of the output's elements were wrong and where the first was. */
static bool report(const algo *a, const dataset *d, const char *where, const char *what, uint64_t bad,
                   uint64_t first, uint32_t got, uint32_t want) {
  if (bad)
    fprintf(stderr, "vkds-bench: %s %s n=%llu %s: %llu %s wrong, the first at %llu (0x%08x, want 0x%08x)\n",
            a->name, type_name(d->type), (unsigned long long)d->n, where, (unsigned long long)bad, what,
            (unsigned long long)first, got, want);
  return bad == 0;
}

/* Checks every element of set 0's output against `expect`. f32 results compare within a
 * relative 1e-6 (the host's float may round an unfused multiply-add differently). */
static bool check_output(const algo *a, const dataset *d, const uint32_t *out, const char *where) {
  uint64_t bad = 0, first = 0;
  for (uint64_t i = 0; i < d->n; ++i) {
    uint32_t want = a->expect(d->type, d->host[0][IN][i], d->fill);
    bool ok = out[i] == want ||
              (d->type == VKDS_F32 && fabsf(as_f32(out[i]) - as_f32(want)) <= 1e-6f * fabsf(as_f32(want)));
    if (!ok && bad++ == 0) first = i;
  }
  return report(a, d, where, "elements", bad, first, bad ? out[first] : 0,
                bad ? a->expect(d->type, d->host[0][IN][first], d->fill) : 0);
}

/* A scan of set 0's input, every element: u32 exactly (wrapping); f32 within
 * F32_TOLERANCE of the running sum of magnitudes up to the element (the scale of the
 * rounding errors of any order of the additions: vkds folds by tiles, the host left to
 * right in double), as cub_bench checks CUB's. */
static bool verify_scan(const algo *a, const dataset *d, const uint32_t *out, const char *where, bool inclusive) {
  const uint32_t *in = d->host[0][IN];
  uint64_t bad = 0, first = 0;
  uint32_t want_first = 0;
  if (d->type == VKDS_U32) {
    uint32_t sum = 0;
    for (uint64_t i = 0; i < d->n; ++i) {
      uint32_t want = inclusive ? sum + in[i] : sum;
      sum += in[i];
      if (out[i] != want && bad++ == 0) first = i, want_first = want;
    }
  } else {
    double sum = 0, mag = 0;
    for (uint64_t i = 0; i < d->n; ++i) {
      double x = as_f32(in[i]), want = sum, scale = mag;
      sum += x, mag += fabs(x);
      if (inclusive) want = sum, scale = mag;
      if (!f32_close(out[i], want, scale) && bad++ == 0) first = i, want_first = f32_bits((float)want);
    }
  }
  return report(a, d, where, "elements", bad, first, bad ? out[first] : 0, want_first);
}
static bool verify_inclusive(const algo *a, const dataset *d, const uint32_t *out, const char *where) {
  return verify_scan(a, d, out, where, true);
}
static bool verify_exclusive(const algo *a, const dataset *d, const uint32_t *out, const char *where) {
  return verify_scan(a, d, out, where, false);
}

/* adjacent_difference of set 0's input, every element: u32 exactly (wrapping), f32 as the
 * host's float subtraction (within a relative 1e-6, as check_output). */
static bool verify_adjacent(const algo *a, const dataset *d, const uint32_t *out, const char *where) {
  const uint32_t *in = d->host[0][IN];
  uint64_t bad = 0, first = 0;
  uint32_t want_first = 0;
  for (uint64_t i = 0; i < d->n; ++i) {
    uint32_t want = i == 0 ? in[0] : d->type == VKDS_U32 ? in[i] - in[i - 1] : f32_bits(as_f32(in[i]) - as_f32(in[i - 1]));
    bool ok = out[i] == want ||
              (d->type == VKDS_F32 && fabsf(as_f32(out[i]) - as_f32(want)) <= 1e-6f * fabsf(as_f32(want)));
    if (!ok && bad++ == 0) first = i, want_first = want;
  }
  return report(a, d, where, "elements", bad, first, bad ? out[first] : 0, want_first);
}

/* copy_if of set 0's input: the kept elements in their order from element 0, and every
 * element after them untouched (poisoned before the call; algorithm.h: they keep their
 * values). Branch-free in the predicate, which holds for half the u32 at random. */
static bool verify_copy_if(const algo *a, const dataset *d, const uint32_t *out, const char *where) {
  const uint32_t *in = d->host[0][IN];
  uint64_t bad = 0, first = 0, j = 0;
  uint32_t want_first = 0;
  for (uint64_t i = 0; i < d->n; ++i) {
    uint32_t x = in[i];
    uint64_t keep = d->type == VKDS_U32 ? (x & 1u) == 0u : as_f32(x) > 0.5f, wrong = keep & (out[j] != x);
    if (wrong && bad == 0) first = j, want_first = x;
    bad += wrong;
    j += keep; /* j <= i: within the output */
  }
  for (; j < d->n; ++j)
    if (out[j] != POISON && bad++ == 0) first = j, want_first = POISON;
  return report(a, d, where, "output elements", bad, first, bad ? out[first] : 0, want_first);
}

/* The histogram of set 0's input: its 256 counts, every element after them untouched
 * (vkds_histogram_wide: bin floor(x * 256 / (2^32 - 1)), the sample 2^32 - 1 nowhere). */
static bool verify_histogram(const algo *a, const dataset *d, const uint32_t *out, const char *where) {
  uint32_t want[HIST_BINS] = {0};
  bool wide = a->run == run_histogram_wide;
  for (uint64_t i = 0; i < d->n; ++i) {
    uint32_t x = d->host[0][IN][i];
    if (wide && x < WIDE_HI) ++want[(uint64_t)x * HIST_BINS / WIDE_HI];
    else if (!wide && d->type == VKDS_U32) ++want[x >> 24]; /* floor(x * 256 / 2^32) */
    else if (!wide) ++want[(uint32_t)((as_f32(x) + 1.0f) * 128.0f)]; /* exact on this data's grid, in [0, 256) */
  }
  uint64_t bad = 0, first = 0;
  for (uint64_t i = 0; i < d->n; ++i)
    if (out[i] != (i < HIST_BINS ? want[i] : POISON) && bad++ == 0) first = i;
  return report(a, d, where, "counts or untouched elements", bad, first, bad ? out[first] : 0,
                bad ? (first < HIST_BINS ? want[first] : POISON) : 0);
}

/* reduce_by_key of set 0: each run's key and sum (u32 wrapping; f32 within tolerance of
 * the run's sum of magnitudes), every other element of the output untouched. */
static bool verify_reduce_by_key(const algo *a, const dataset *d, const uint32_t *out, const char *where) {
  const uint32_t *keys = d->host[0][KEYS], *x = d->host[0][IN];
  uint64_t half = d->n / 2, run = 0, bad = 0, first = 0;
  uint32_t want_first = 0;
  for (uint64_t i = 0; i < d->n;) {
    uint64_t j = i;
    uint32_t sum = 0;
    double sf = 0, mag = 0;
    for (; j < d->n && keys[j] == keys[i]; ++j) sum += x[j], sf += as_f32(x[j]), mag += fabs(as_f32(x[j]));
    bool ok = run < half && out[run] == keys[i] &&
              (d->type == VKDS_U32 ? out[half + run] == sum : f32_close(out[half + run], sf, mag));
    if (!ok && bad++ == 0) first = run, want_first = keys[i];
    ++run, i = j;
  }
  for (uint64_t k = run; k < half; ++k)
    if ((out[k] != POISON || out[half + k] != POISON) && bad++ == 0) first = k, want_first = POISON;
  return report(a, d, where, "runs or untouched elements", bad, first, bad && first < half ? out[first] : 0,
                want_first);
}

/* A commutative fingerprint of a multiset of 64-bit items (a sum of their mixes): the
 * same for a sequence and any permutation of it, different otherwise but with a chance of
 * about 2^-64 (a host sort to compare with would take tens of seconds at 2^28). */
static uint64_t mix64(uint64_t x) {
  uint64_t s = x;
  return splitmix(&s);
}

/* Whether b may follow a in ascending order of the type (this data has no NaN). */
static bool in_order(vkds_type t, uint32_t a, uint32_t b) { return !less(t, b, a); }

/* A sort of set 0's input (the algorithm's sorted_from array): the output in ascending
 * order and a permutation of the input (fingerprints); with `values`, the (key, value)
 * pairs a permutation of (IN, IN2)'s. */
static bool verify_sorted(const algo *a, const dataset *d, const uint32_t *out, const uint32_t *values,
                          const char *where) {
  const uint32_t *in = d->host[0][a->sorted_from], *in2 = d->host[0][IN2];
  uint64_t bad = 0, first = 0, want_print = 0, got_print = 0;
  for (uint64_t i = 0; i < d->n; ++i) {
    if (i && !in_order(d->type, out[i - 1], out[i]) && bad++ == 0) first = i;
    want_print += mix64(values ? (uint64_t)in[i] << 32 | in2[i] : in[i]);
    got_print += mix64(values ? (uint64_t)out[i] << 32 | values[i] : out[i]);
  }
  /* (a descent: a key smaller than the one before it; "want" there printed the key
   * before, as if it were the expected one: a probe) */
  if (bad) {
    fprintf(stderr, "vkds-bench: %s %s n=%llu %s: not sorted: %llu keys smaller than the one before, the first at %llu "
            "(0x%08x after 0x%08x)\n", a->name, type_name(d->type), (unsigned long long)d->n, where,
            (unsigned long long)bad, (unsigned long long)first, out[first], out[first - 1]);
    return false;
  }
  if (got_print != want_print)
    fprintf(stderr, "vkds-bench: %s %s n=%llu %s: the output is not a permutation of the input%s\n", a->name,
            type_name(d->type), (unsigned long long)d->n, where, values ? " (key, value pairs)" : "");
  return got_print == want_print;
}
static bool verify_sort(const algo *a, const dataset *d, const uint32_t *out, const char *where) {
  return verify_sorted(a, d, out, NULL, where);
}
static bool verify_sort_by_key(const algo *a, const dataset *d, const uint32_t *out, const char *where) {
  uint32_t *values = malloc(d->bytes);
  bool ok = values && vkds_download(d->res, values, vkds_view_of(d->dev[0][VALS]), d->bytes) == VKDS_SUCCESS;
  if (!ok)
    fprintf(stderr, "vkds-bench: %s: cannot read the values back: %s\n", a->name, vkds_last_error_message());
  ok = ok && verify_sorted(a, d, out, values, where);
  free(values);
  return ok;
}

static const algo ALGOS[] = {
    {"vkds_copy", 2, NULL, false, run_copy, NO_RESULT, NULL, expect_copy, check_output},
    {"vkds_transform", 2, NULL, false, run_transform, NO_RESULT, NULL, expect_transform, check_output},
    {"vkds_adjacent_difference", 2, NULL, false, run_adjacent_difference, NO_RESULT, NULL, NULL, verify_adjacent},
    {"vkds_reduce", 1, "cub_reduce", false, run_reduce, VALUE, check_reduce, NULL, NULL},
    {"vkds_count_if", 1, "cub_reduce", false, run_count_if, COUNT, check_count_if, NULL, NULL},
    {"vkds_min_element", 1, "cub_reduce", false, run_min_element, INDEX_VALUE, check_min_element, NULL, NULL},
    /* a predicate true rarely: the index of its first element, every element read */
    {"vkds_find_if", 1, "cub_reduce", false, run_find_if, COUNT, check_find_if, NULL, NULL},
    {"vkds_fill", 1, NULL, false, run_fill, NO_RESULT, NULL, expect_fill, check_output},
    {"vkds_inner_product", 2, "cub_reduce", false, run_inner_product, VALUE, check_inner_product, NULL, NULL},
    {"vkds_inclusive_scan", 2, "cub_inclusive_scan", true, run_inclusive_scan, LAST, check_inclusive_last, NULL,
     verify_inclusive},
    {"vkds_exclusive_scan", 2, "cub_exclusive_scan", false, run_exclusive_scan, LAST, check_exclusive_last, NULL,
     verify_exclusive},
    {"vkds_copy_if", 0, "cub_select_if", true, run_copy_if, COUNT, check_count_if, NULL, verify_copy_if},
    {"vkds_histogram_even", 1, "cub_histogram_even", false, run_histogram, NO_RESULT, NULL, NULL, verify_histogram},
    {"vkds_histogram_wide", 1, "cub_histogram_wide", false, run_histogram_wide, NO_RESULT, NULL, NULL, verify_histogram,
     false, NULL, true},
    {"vkds_reduce_by_key", 0, "cub_reduce_by_key", false, run_reduce_by_key, COUNT, check_runs, NULL,
     verify_reduce_by_key},
    {"plain_scan", 2, NULL, false, run_plain_scan, LAST, check_inclusive_last, NULL, verify_inclusive, true},
    {"plain_scan1", 2, NULL, false, run_plain_scan1, LAST, check_inclusive_last, NULL, verify_inclusive, true},
    {"vkds_sort", 2, "cub_sort_keys", true, run_sort, NO_RESULT, NULL, NULL, verify_sort, true, restore_keys},
    {"vkds_sort_by_key", 4, "cub_sort_pairs", false, run_sort_by_key, NO_RESULT, NULL, NULL, verify_sort_by_key, true,
     restore_pairs},
    {"vkds_merge_sort", 2, "cub_merge_sort_keys", false, run_merge_sort, NO_RESULT, NULL, NULL, verify_sort, true,
     restore_keys},
    /* u32 keys < 2^16: the passes whose digit is the same for every key are skipped;
     * against CUB told the bit range (cub_sort_keys16) */
    {"vkds_sort16", 2, "cub_sort_keys16", false, run_sort, NO_RESULT, NULL, NULL, verify_sort, true, restore_keys16,
     true, K16},
    /* two ascending halves merged, out of place (blocking rows too) */
    {"vkds_merge", 2, "cub_merge_keys", false, run_merge, NO_RESULT, NULL, NULL, verify_sort, false, NULL, true, HALVES},
    {"vkds_merge_by", 2, "cub_merge_keys", false, run_merge_by, NO_RESULT, NULL, NULL, verify_sort, false, NULL, true,
     HALVES},
};
#define ALGO_COUNT (sizeof ALGOS / sizeof ALGOS[0])

/* The bytes a call must move, for its GB/s: words per element, or for copy_if what
 * cub_bench counts for select_if: n read, the kept elements written (their mean over the
 * sets) and the 8-byte count. */
static double algo_bytes(const algo *a, const dataset *d) {
  if (a->words) return (double)a->words * (double)d->bytes;
  if (a->run == run_reduce_by_key) { /* cub_bench's: keys and values read, each run's key and sum written, the count */
    double runs = 0.0;
    for (uint32_t s = 0; s < d->sets; ++s) runs += (double)d->ref[s].runs;
    return (2.0 * (double)d->n + 2.0 * runs / d->sets) * 4.0 + 8.0;
  }
  double kept = 0.0;
  for (uint32_t s = 0; s < d->sets; ++s) kept += (double)d->ref[s].count;
  return ((double)d->n + kept / d->sets) * 4.0 + 8.0;
}

/* A recorded call's scalar results, read back from its result view (LAST: the output's
 * last element), into the fields the blocking form fills: one check serves both forms. */
static void unpack_result(call *c, result_layout layout, const unsigned char *bytes) {
  if (layout == VALUE || layout == LAST) memcpy(&c->value, bytes, 4);
  if (layout == COUNT) memcpy(&c->count, bytes, 8);
  if (layout == INDEX_VALUE) memcpy(&c->index, bytes, 8), memcpy(&c->value, bytes + 8, 4);
}

static call call_of(vkds_policy *pol, const dataset *d, residency where, uint32_t set) {
  return (call){.pol = pol, .d = d, .set = set, .where = where, .in = seq_of(d, where, set, IN),
                .in2 = seq_of(d, where, set, IN2), .out = seq_of(d, where, set, OUT)};
}

/* ---- timing --------------------------------------------------------------------------- */

/* The calls of one wall-timed row (blocking calls, host rows, the plain copy's wall
 * time; the GPU-timed batches are time_batches'): warm-up, then the timed ones. Warm-up
 * is at least `warmup` calls and, on GPUs, at least WARM_NS (a GPU that idled clocks
 * back up); one call of LONG_CALL_NS or more is warm-up enough (the large sizes on a CPU
 * device). The first call may compile the kernel (at the first size) and make vkds's
 * scratch (at each size). Then as many timed calls as ROW_BUDGET_NS allows at the last
 * warm-up call's wall time, within MIN_REPS..MAX_REPS; the median is the row's time. */
typedef struct timer {
  uint64_t start, warm_ns;
  uint32_t warmup, calls, reps, timed;
  double wall[MAX_REPS];
} timer;

static timer timer_start(uint32_t warmup, uint64_t warm_ns) {
  return (timer){.start = bench_now_ns(), .warm_ns = warm_ns, .warmup = warmup, .reps = MAX_REPS};
}

/* Whether another call is due. */
static bool timer_more(const timer *t) { return t->timed < t->reps; }

/* Counts one call that took `wall_ns`. */
static void timer_add(timer *t, uint64_t wall_ns) {
  if (t->calls++ == 0 && wall_ns >= LONG_CALL_NS) t->warmup = 1;
  if (t->timed == 0 && (t->calls <= t->warmup || bench_now_ns() - t->start < t->warm_ns)) {
    uint64_t reps = ROW_BUDGET_NS / (wall_ns ? wall_ns : 1);
    t->reps = reps < MIN_REPS ? MIN_REPS : reps > MAX_REPS ? MAX_REPS : (uint32_t)reps;
  } else {
    t->wall[t->timed++] = (double)wall_ns;
  }
}

/* The median of the timed calls, in ns. */
static double timer_wall(timer *t) { return bench_median(t->wall, t->timed); }

/* ---- plain Vulkan: submissions, GPU timestamps, the copy shader ------------------------- */

/* Timestamps around each call of a batch, as cub_bench puts two cudaEvents around its
 * work: the GPU's time, without the recording, the submission or the wait, which wall
 * time would add (a fixed cost per call that dwarfs the small sizes and still weighs at
 * the large ones). Every timestamp is written at BOTTOM_OF_PIPE, once every command
 * before it is done, as a CUDA event is reached once the work before it on its stream is
 * done: call i of a batch owns queries 2i (before) and 2i+1 (after). One pool serves
 * every row, in ranges of 2 * MAX_BATCH queries: two for the plain copy's batches (one
 * recorded while the other runs), one for vkds's; each batch resets its range before
 * writing it, and each range is read before a batch that uses it is submitted again. */
enum { RANGE_PLAIN, RANGE_VKDS = 2, RANGES, NO_RANGE = RANGES };
#define RANGE_QUERIES (2u * MAX_BATCH)

typedef struct gpu_timer {
  VkDevice dev;
  VkQueryPool pool; /* VK_NULL_HANDLE: the queue family writes no timestamps; rows are wall-timed */
  double period_ns; /* per tick */
  uint64_t mask;    /* the valid bits of a timestamp */
} gpu_timer;

/* Creates the pool when the resource's queue family writes timestamps. Returns 0, or 1
 * when creating it failed. */
static int gpu_timer_open(gpu_timer *g, VkDevice dev, const vkds_resource_info *ri) {
  uint32_t bits = ri->timestamp_valid_bits;
  *g = (gpu_timer){.dev = dev, .period_ns = ri->timestamp_period_ns,
                   .mask = bits >= 64 ? ~0ull : (1ull << bits) - 1};
  if (!ri->timestamps || bits == 0 || ri->timestamp_period_ns <= 0) return 0;
  VkQueryPoolCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                               .queryType = VK_QUERY_TYPE_TIMESTAMP, .queryCount = RANGES * RANGE_QUERIES};
  return vkCreateQueryPool(dev, &qci, NULL, &g->pool) != VK_SUCCESS;
}

static void gpu_timer_close(gpu_timer *g) {
  if (g->pool) vkDestroyQueryPool(g->dev, g->pool, NULL);
  g->pool = VK_NULL_HANDLE;
}

/* At the start of a batch of k calls: the reset that queries need before each use
 * (recorded: a reset from the host needs hostQueryReset). */
static void gpu_timer_reset(const gpu_timer *g, VkCommandBuffer cmd, uint32_t range, uint32_t k) {
  if (g->pool && range < RANGES) vkCmdResetQueryPool(cmd, g->pool, range * RANGE_QUERIES, 2 * k);
}

/* Timestamp `query` of the range (2i: before call i, 2i+1: after it). */
static void gpu_timer_stamp(const gpu_timer *g, VkCommandBuffer cmd, uint32_t range, uint32_t query) {
  if (g->pool && range < RANGES)
    vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, g->pool, range * RANGE_QUERIES + query);
}

/* The ns of each of the k calls of the batch last waited for in `range` into ns[0..k)
 * (each difference modulo the valid bits, so a counter that wrapped still gives the
 * interval). Returns false without timestamps or when they cannot be read. */
static bool gpu_timer_read(const gpu_timer *g, uint32_t range, uint32_t k, double *ns) {
  uint64_t t[RANGE_QUERIES];
  if (!g->pool || range >= RANGES) return false;
  /* polled, not WAIT_BIT: a query that is never written (a bug here, a lost device) must
   * end the row with an error, not the run with a hang */
  VkResult vr;
  uint64_t t0 = bench_now_ns();
  while ((vr = vkGetQueryPoolResults(g->dev, g->pool, range * RANGE_QUERIES, 2 * k, 2 * k * sizeof t[0], t,
                                     sizeof t[0], VK_QUERY_RESULT_64_BIT)) == VK_NOT_READY &&
         bench_now_ns() - t0 < GPU_WAIT_NS)
    ;
  if (vr != VK_SUCCESS) {
    fprintf(stderr, "vkds-bench: timestamps %u..%u of range %u: %s\n", 0u, 2 * k - 1, range,
            vr == VK_NOT_READY ? "not written within the wait limit" : "cannot be read");
    return false;
  }
  for (uint32_t i = 0; i < k; ++i) ns[i] = (double)((t[2 * i + 1] - t[2 * i]) & g->mask) * g->period_ns;
  return true;
}

/* Calls per batch for calls of `ns` each: BATCH_NS of GPU work, within 1..MAX_BATCH. */
static uint32_t batch_calls(double ns) {
  double k = ns > 0 ? (double)BATCH_NS / ns : MAX_BATCH;
  return k < 1 ? 1 : k > MAX_BATCH ? MAX_BATCH : (uint32_t)k;
}

typedef struct plain {
  vkds_resource *res;
  VkDevice dev;
  VkQueue queue;
  uint32_t max_groups;
  uint64_t max_range; /* maxStorageBufferRange */
  VkDescriptorSetLayout set_layout;
  VkPipelineLayout layout;
  VkShaderModule module;
  VkPipeline pipeline;
  VkDescriptorPool dpool;
  VkDescriptorSet sets[MAX_SETS];
  VkCommandPool pool;
  VkCommandBuffer cmds[MAX_SETS]; /* pre-recorded, one dispatch per set (wall time, checks, round trips) */
  VkCommandBuffer record;         /* recorded before each submission (round trip, vkds's recording forms) */
  VkCommandBuffer batch[2];       /* the copy's GPU-timed batches: one recorded while the other runs */
  VkSemaphore timeline;
  uint64_t value; /* the timeline's last value submitted */
  gpu_timer timer; /* shared with vkds's recording forms */
} plain;

static int plain_open(plain *p, vkds_resource *res) {
  vkds_resource_info ri;
  vkds_resource_get_info(res, &ri);
  *p = (plain){.res = res, .max_groups = ri.max_work_group_count[0], .max_range = ri.max_storage_buffer_range};
  vkds_resource_vk_handles(res, NULL, &p->dev, &p->queue);
  VkDescriptorSetLayoutBinding b[2] = {
      {.binding = 0, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .descriptorCount = 1,
       .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT},
      {.binding = 1, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .descriptorCount = 1,
       .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT}};
  VkDescriptorSetLayoutCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                         .bindingCount = 2, .pBindings = b};
  VkPushConstantRange pr = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .size = 4};
  VkPipelineLayoutCreateInfo lci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, .setLayoutCount = 1,
                                    .pSetLayouts = &p->set_layout, .pushConstantRangeCount = 1,
                                    .pPushConstantRanges = &pr};
  VkShaderModuleCreateInfo mci = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                  .codeSize = sizeof vkds_spirv_copy4, .pCode = vkds_spirv_copy4};
  if (vkCreateDescriptorSetLayout(p->dev, &dci, NULL, &p->set_layout) != VK_SUCCESS ||
      vkCreatePipelineLayout(p->dev, &lci, NULL, &p->layout) != VK_SUCCESS ||
      vkCreateShaderModule(p->dev, &mci, NULL, &p->module) != VK_SUCCESS)
    return 1;
  VkComputePipelineCreateInfo cpci = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = p->module, .pName = "main"},
      .layout = p->layout};
  VkDescriptorPoolSize ps = {.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .descriptorCount = 2 * MAX_SETS};
  VkDescriptorPoolCreateInfo dpci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, .maxSets = MAX_SETS,
                                     .poolSizeCount = 1, .pPoolSizes = &ps};
  VkDescriptorSetLayout layouts[MAX_SETS];
  for (int i = 0; i < MAX_SETS; ++i) layouts[i] = p->set_layout;
  VkDescriptorSetAllocateInfo dsai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                      .descriptorSetCount = MAX_SETS, .pSetLayouts = layouts};
  /* RESET_COMMAND_BUFFER: each command buffer is re-recorded by vkBeginCommandBuffer */
  VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                 .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                 .queueFamilyIndex = ri.queue_family};
  VkSemaphoreTypeCreateInfo type = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                    .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
  VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &type};
  if (vkCreateComputePipelines(p->dev, VK_NULL_HANDLE, 1, &cpci, NULL, &p->pipeline) != VK_SUCCESS ||
      vkCreateDescriptorPool(p->dev, &dpci, NULL, &p->dpool) != VK_SUCCESS ||
      (dsai.descriptorPool = p->dpool, vkAllocateDescriptorSets(p->dev, &dsai, p->sets)) != VK_SUCCESS ||
      vkCreateCommandPool(p->dev, &pci, NULL, &p->pool) != VK_SUCCESS ||
      vkCreateSemaphore(p->dev, &sci, NULL, &p->timeline) != VK_SUCCESS)
    return 1;
  VkCommandBuffer all[MAX_SETS + 3];
  VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = p->pool,
                                    .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = MAX_SETS + 3};
  if (vkAllocateCommandBuffers(p->dev, &ai, all) != VK_SUCCESS) return 1;
  memcpy(p->cmds, all, sizeof p->cmds);
  p->record = all[MAX_SETS];
  p->batch[0] = all[MAX_SETS + 1], p->batch[1] = all[MAX_SETS + 2];
  return gpu_timer_open(&p->timer, p->dev, &ri);
}

static void plain_close(plain *p) {
  if (!p->dev) return;
  gpu_timer_close(&p->timer);
  vkDestroySemaphore(p->dev, p->timeline, NULL);
  vkDestroyCommandPool(p->dev, p->pool, NULL);
  vkDestroyDescriptorPool(p->dev, p->dpool, NULL);
  vkDestroyPipeline(p->dev, p->pipeline, NULL);
  vkDestroyShaderModule(p->dev, p->module, NULL);
  vkDestroyPipelineLayout(p->dev, p->layout, NULL);
  vkDestroyDescriptorSetLayout(p->dev, p->set_layout, NULL);
}

/* The copy of `words` 32-bit words (a multiple of 4) with descriptor set `set`: one uvec4
 * per invocation, the group count capped by the device (the shader strides); the
 * pipeline bound and its count pushed before. */
static void plain_dispatch(const plain *p, VkCommandBuffer cmd, uint32_t set, uint64_t words) {
  uint64_t groups = (words / 4 + COPY_GROUP - 1) / COPY_GROUP;
  if (groups > p->max_groups) groups = p->max_groups;
  vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p->layout, 0, 1, &p->sets[set], 0, NULL);
  vkCmdDispatch(cmd, (uint32_t)(groups ? groups : 1), 1, 1);
}

static void plain_bind_pipeline(const plain *p, VkCommandBuffer cmd, uint64_t words) {
  uint32_t count = (uint32_t)(words / 4);
  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p->pipeline);
  vkCmdPushConstants(cmd, p->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 4, &count);
}

/* Records one dispatch of the copy of set `set` (`words` words), untimed. */
static void plain_record(const plain *p, VkCommandBuffer cmd, uint32_t set, uint64_t words) {
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  vkBeginCommandBuffer(cmd, &bi);
  plain_bind_pipeline(p, cmd, words);
  plain_dispatch(p, cmd, set, words);
  vkEndCommandBuffer(cmd);
}

/* Records a batch of k dispatches of the copy into `cmd`, the sets rotating from
 * `first_set`, each between two timestamps of `range` (NO_RANGE: untimed). A global
 * barrier before the first (earlier shader and transfer writes: vkds's calls, uploads),
 * between each two (consecutive copies of one set write the same output: write after
 * write) and after the last (later transfers and the host see the outputs); each
 * between a dispatch's second timestamp and the next one's first, outside both. */
static void plain_record_batch(const plain *p, VkCommandBuffer cmd, const dataset *d, uint32_t first_set, uint32_t k,
                               uint32_t range) {
  const VkPipelineStageFlags work = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                 .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
  vkBeginCommandBuffer(cmd, &bi);
  gpu_timer_reset(&p->timer, cmd, range, k);
  bench_global_barrier(cmd, work, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT);
  plain_bind_pipeline(p, cmd, d->n);
  for (uint32_t i = 0; i < k; ++i) {
    if (i) bench_global_barrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT);
    gpu_timer_stamp(&p->timer, cmd, range, 2 * i);
    plain_dispatch(p, cmd, (first_set + i) % d->sets, d->n);
    gpu_timer_stamp(&p->timer, cmd, range, 2 * i + 1);
  }
  bench_global_barrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, work | VK_PIPELINE_STAGE_HOST_BIT);
  vkEndCommandBuffer(cmd);
}

/* Points the descriptor sets at the dataset's device buffers (set s: in -> out) and
 * records one single-dispatch command buffer per set. Command buffers recorded with the
 * sets before are invalid from here: the batches are recorded anew before each use. */
static void plain_bind(plain *p, const dataset *d) {
  for (uint32_t s = 0; s < d->sets; ++s) {
    VkDescriptorBufferInfo dbi[2] = {
        {.buffer = vkds_buffer_vk(d->dev[s][IN]), .offset = vkds_buffer_offset(d->dev[s][IN]), .range = d->bytes},
        {.buffer = vkds_buffer_vk(d->dev[s][OUT]), .offset = vkds_buffer_offset(d->dev[s][OUT]), .range = d->bytes}};
    VkWriteDescriptorSet w = {.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, .dstSet = p->sets[s],
                              .descriptorCount = 2, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                              .pBufferInfo = dbi};
    vkUpdateDescriptorSets(p->dev, 1, &w, 0, NULL);
    plain_record(p, p->cmds[s], s, d->n);
  }
}

/* Submits one command buffer signalling the next timeline value (returned in *value). */
static VkResult plain_submit(plain *p, VkCommandBuffer cmd, uint64_t *value) {
  uint64_t v = ++p->value;
  VkTimelineSemaphoreSubmitInfo ts = {.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                                      .signalSemaphoreValueCount = 1, .pSignalSemaphoreValues = &v};
  VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .pNext = &ts, .commandBufferCount = 1,
                     .pCommandBuffers = &cmd, .signalSemaphoreCount = 1, .pSignalSemaphores = &p->timeline};
  vkds_resource_lock_queue(p->res); /* vkds submits to the same queue */
  VkResult vr = vkQueueSubmit(p->queue, 1, &si, VK_NULL_HANDLE);
  vkds_resource_unlock_queue(p->res);
  if (value) *value = v;
  return vr;
}

/* Waits for the timeline to reach `value`: spins for up to `spin_ns`, then sleeps in the
 * driver. The round trips spin throughout (SPIN_ALWAYS: the fastest plain wait); the
 * timed rows spin as long as vkds's own wait does (WAIT_SPIN_NS) and then sleep, as a
 * blocking vkds call does, because a longer spin takes a core from a CPU device
 * (lavapipe) and halves the speed of the very work it times. A submission's signal
 * covers every command submitted before it, so one wait covers a batch and the batches
 * before it. */
static VkResult plain_wait(plain *p, uint64_t value, uint64_t spin_ns) {
  uint64_t v = 0, t0 = bench_now_ns();
  VkResult vr;
  while ((vr = vkGetSemaphoreCounterValue(p->dev, p->timeline, &v)) == VK_SUCCESS && v < value) {
    uint64_t spun = bench_now_ns() - t0;
    if (spun >= GPU_WAIT_NS || (spin_ns != SPIN_ALWAYS && spun >= spin_ns)) {
      VkSemaphoreWaitInfo wi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO, .semaphoreCount = 1,
                                .pSemaphores = &p->timeline, .pValues = &value};
      vr = vkWaitSemaphores(p->dev, &wi, spun >= GPU_WAIT_NS ? 0 : GPU_WAIT_NS - spun);
      if (vr == VK_TIMEOUT) {
        vkGetSemaphoreCounterValue(p->dev, p->timeline, &v);
        fprintf(stderr, "vkds-bench: the plain queue's submission %llu not done after %.0f s (done: %llu)\n",
                (unsigned long long)value, GPU_WAIT_NS * 1e-9, (unsigned long long)v);
      }
      return vr;
    }
  }
  return vr;
}

/* Submits one command buffer and waits for it (see plain_wait). */
static VkResult plain_run(plain *p, VkCommandBuffer cmd, uint64_t spin_ns) {
  uint64_t value;
  VkResult vr = plain_submit(p, cmd, &value);
  return vr == VK_SUCCESS ? plain_wait(p, value, spin_ns) : vr;
}

/* ---- the rows' calls ---------------------------------------------------------------------- */

/* What the whole mode shares; and, the rows, the seed and the output aside, what one
 * context's timed calls use: the main context's, and each forced scan path's (its own
 * context on the same device, see bench_size), whose rows go to the main one's list. */
typedef struct run_state {
  vkds_context *own;     /* a forced path's context, destroyed with it; NULL: the main one's */
  vkds_scan_path path;   /* the scan path the context runs on res */
  vkds_resource *res;
  vkds_policy *pol;
  plain plain;
  plain_scan pscan;      /* plain_scan's row */
  bool pscan_bound;      /* its sets point at this size's data (false: over maxStorageBufferRange) */
  vkds_buffer *result;   /* the recording forms' result view (device memory, as CUB's) */
  vkds_buffer *readback; /* mapped: where each recorded batch's last results are copied */
  uint32_t copy_batch;   /* the plain copy's calls per batch at this size; 0: it cannot run here */
  row_list rows, cub;    /* this run's; cub_bench's (--cub) */
  bool json;
  const char *only; /* bench_options.only */
  uint64_t seed;
} run_state;

/* The k-th comma-separated part of --only, spaces around it trimmed, into part[64];
 * false past the last. */
static bool only_part(const char *only, uint32_t k, char part[64]) {
  const char *p = only;
  for (uint32_t i = 0; i < k; ++i) {
    p = strchr(p, ',');
    if (!p) return false;
    ++p;
  }
  const char *end = strchr(p, ',');
  size_t len = end ? (size_t)(end - p) : strlen(p);
  while (len && *p == ' ') ++p, --len;
  while (len && p[len - 1] == ' ') --len;
  if (len >= 64) len = 63; /* (then it names nothing, and is said so) */
  memcpy(part, p, len), part[len] = '\0';
  return true;
}

/* Whether a part of --only names algorithm `name`: contains it, or with a '$' at its
 * end, ends with it (`vkds_sort$`: the sort alone, where `vkds_sort` also brings
 * vkds_sort_by_key and vkds_sort16; a CLI probe found some algorithms could not be
 * chosen alone). */
static bool part_names(const char *name, const char *part) {
  size_t len = strlen(part), n = strlen(name);
  if (!len) return false;
  if (part[len - 1] != '$') return strstr(name, part) != NULL;
  return len > 1 && n >= len - 1 && strncmp(name + n - (len - 1), part, len - 1) == 0;
}

/* Whether --only asks for algorithm `a`: a comma-separated part names it (none given:
 * every algorithm). */
static bool algo_wanted(const run_state *st, const algo *a) {
  if (!st->only || !*st->only) return true;
  char part[64];
  for (uint32_t k = 0; only_part(st->only, k, part); ++k)
    if (part_names(a->name, part)) return true;
  return false;
}

/* The first part of --only that names no algorithm (a typo measured less without a
 * word: a probe), into part; false when every part names one. */
static bool only_names_nothing(const char *only, char part[64]) {
  if (!only || !*only) return false;
  for (uint32_t k = 0; only_part(only, k, part); ++k) {
    bool named = false;
    for (size_t i = 0; i < ALGO_COUNT && !named; ++i) named = part_names(ALGOS[i].name, part);
    if (!named) return true;
  }
  return false;
}

/* The calls' side of a run_state on resource `index` of `ctx`: a fixed policy over it,
 * the plain copy, the result view and its readback. Returns 0, or 1 with a message. */
static int state_open(run_state *st, vkds_context *ctx, uint32_t index) {
  vkds_policy_info pi = {.kind = VKDS_POLICY_FIXED, .resources = {.context = ctx}, .fixed_index = index};
  static const uint32_t poison[RESULT_BYTES / 4] = {POISON, POISON, POISON, POISON};
  st->res = vkds_context_resource(ctx, index);
  st->path = vkds_resource_scan_path(st->res);
  if (vkds_policy_create(&pi, &st->pol) != VKDS_SUCCESS || plain_open(&st->plain, st->res) ||
      plain_scan_open(&st->pscan, st->res) ||
      vkds_buffer_create(st->res, &(vkds_buffer_info){.size = RESULT_BYTES}, &st->result) != VKDS_SUCCESS ||
      vkds_buffer_create(st->res, &(vkds_buffer_info){.size = RESULT_BYTES, .memory = VKDS_MEMORY_MAPPED},
                         &st->readback) != VKDS_SUCCESS ||
      vkds_upload(st->res, vkds_view_of(st->result), poison, RESULT_BYTES) != VKDS_SUCCESS) {
    fprintf(stderr, "vkds-bench: setup failed: %s\n", vkds_last_error_message());
    return 1;
  }
  return 0;
}

static void state_close(run_state *st) {
  vkds_buffer_destroy(st->readback);
  vkds_buffer_destroy(st->result);
  vkds_policy_release(st->pol);
  plain_close(&st->plain);
  plain_scan_close(&st->pscan);
  free(st->rows.v);
  free(st->cub.v);
  vkds_context_destroy(st->own);
  *st = (run_state){0};
}

static const char *path_name(vkds_scan_path path) { return path == VKDS_SCAN_PATH_SINGLE ? "single" : "portable"; }

/* A forced scan path's run_state: a context like the main one (main()'s info, VKDS_DEVICES
 * and VKDS_VALIDATION honoured alike) with scan_path `path`, one VkDevice per physical
 * device and one queue per family, on the resource of the main resource's device and
 * queue family (matched by device UUID). Returns 0; 1 with a message when it cannot be
 * made; 2 when the device cannot run the single pass (the context would run the portable
 * one: nothing to measure). */
static int forced_open(run_state *f, const vkds_context_info *base, vkds_scan_path path, const vkds_resource_info *ri) {
  vkds_context_info info = *base;
  info.scan_path = path, info.devices_per_physical = 1, info.max_queues_per_family = 1;
  *f = (run_state){0};
  vkds_result r = vkds_context_create(&info, &f->own);
  if (r != VKDS_SUCCESS) {
    fprintf(stderr, "vkds-bench: a context with scan_path %s: %s: %s\n", path_name(path), vkds_result_str(r),
            bench_error_detail(r));
    return 1;
  }
  uint32_t count = vkds_context_resource_count(f->own), index = count;
  for (uint32_t i = 0; i < count && index == count; ++i) {
    vkds_resource_info fi;
    vkds_resource_get_info(vkds_context_resource(f->own, i), &fi);
    if (memcmp(fi.device_uuid, ri->device_uuid, VK_UUID_SIZE) == 0 && fi.queue_family == ri->queue_family) index = i;
  }
  int status = index == count ? 1 : 0;
  if (status)
    fprintf(stderr, "vkds-bench: the context with scan_path %s has no queue of %s's family %u\n", path_name(path),
            ri->device_name, ri->queue_family);
  else if (vkds_resource_scan_path(vkds_context_resource(f->own, index)) != path)
    status = 2;
  if (status || (status = state_open(f, f->own, index)) != 0) state_close(f);
  return status;
}

/* Records k calls of `a` in the recording form into one command buffer (plain's `record`),
 * back to back as cub_bench launches CUB, the sets rotating from `first_set`, each call
 * between its two timestamps of RANGE_VKDS; the recording is not GPU time, as the CPU
 * side of a CUDA launch is not inside cub_bench's events. vkds begins and ends each
 * recorded call with a global barrier, so consecutive calls are ordered. Every call's
 * scalar results go to the same device view (st->result): it is poisoned just before the
 * last call, so that a last call that writes nothing fails its check, and the last call's
 * results are copied after it where the host reads them (st->readback); a scan's check
 * reads its output's last element instead, poisoned and copied the same way. The fill
 * and the copy lie between timestamps, outside every call's interval. vkds's first
 * barrier orders the fill before the call's writes, its last one the writes before the
 * copy. */
static vkds_result record_batch(run_state *st, const algo *a, const dataset *d, uint32_t first_set, uint32_t k) {
  plain *p = &st->plain;
  VkCommandBuffer cmd = p->record;
  vkds_cmd rec = {.cmd = cmd, .resource = st->res,
                  .scratch = d->cmd_scratch ? vkds_view_of(d->cmd_scratch) : (vkds_view){0}};
  /* where the last call's checked results are: the result view, or (LAST) its output's
   * last element */
  uint32_t last_set = (first_set + k - 1) % d->sets;
  VkBuffer result = vkds_buffer_vk(st->result);
  VkDeviceSize at = vkds_buffer_offset(st->result), size = RESULT_BYTES;
  if (a->layout == LAST)
    result = vkds_buffer_vk(d->dev[last_set][OUT]), at = vkds_buffer_offset(d->dev[last_set][OUT]) + d->bytes - 4,
    size = 4;
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                 .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
  vkBeginCommandBuffer(cmd, &bi);
  gpu_timer_reset(&p->timer, cmd, RANGE_VKDS, k);
  vkds_result err = VKDS_SUCCESS;
  for (uint32_t i = 0; i < k && err == VKDS_SUCCESS; ++i) {
    call c = call_of(st->pol, d, DEVICE, (first_set + i) % d->sets);
    c.rec = &rec, c.result = (vkds_view){st->result, 0, RESULT_BYTES}, c.pscan = st->pscan_bound ? &st->pscan : NULL;
    if (i == k - 1 && a->layout != NO_RESULT) vkCmdFillBuffer(cmd, result, at, size, POISON);
    if (a->before) a->before(&c, cmd);
    gpu_timer_stamp(&p->timer, cmd, RANGE_VKDS, 2 * i);
    err = a->run(&c);
    gpu_timer_stamp(&p->timer, cmd, RANGE_VKDS, 2 * i + 1);
  }
  if (a->layout != NO_RESULT) {
    VkBufferCopy region = {.srcOffset = at, .dstOffset = vkds_buffer_offset(st->readback), .size = size};
    vkCmdCopyBuffer(cmd, result, vkds_buffer_vk(st->readback), 1, &region);
    /* the host reads the copy; the next batch's fill and copy come after it */
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_HOST_READ_BIT};
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
  }
  VkResult vr = vkEndCommandBuffer(cmd);
  if (err == VKDS_SUCCESS && vr != VK_SUCCESS) {
    fprintf(stderr, "vkds-bench: %s recorded: Vulkan error %d\n", a->name, (int)vr);
    err = VKDS_ERROR_VULKAN;
  }
  return err;
}

/* The last call of a recorded batch, which ran on set `set`: its scalar results, read
 * back, against the host's answer for that set. */
static bool check_batch(const run_state *st, const algo *a, const dataset *d, uint32_t set, uint32_t batch) {
  if (!a->check) return true;
  call c = call_of(st->pol, d, DEVICE, set);
  unpack_result(&c, a->layout, vkds_buffer_map(st->readback));
  if (a->check(&c, &d->ref[set])) return true;
  fprintf(stderr, "vkds-bench: %s %s n=%llu device (recorded): wrong result (batch %u)\n", a->name,
          type_name(d->type), (unsigned long long)d->n, batch);
  return false;
}

/* One call in the recording form on set `set`, alone in its command buffer, submitted and
 * waited for; its result checked. *gpu_ns: its GPU time (0 without timestamps); *wall_ns:
 * the submission and the wait. The first of each row (it compiles the kernel at the first
 * size) and the one that writes the checked outputs. */
/* VKDS_BENCH_TRACE=1: each step of a size's device rows on stderr as it starts (to see
 * where a run that never ends is). */
static bool trace_on(void) {
  static int on = -1;
  if (on < 0) on = bench_env_on("VKDS_BENCH_TRACE");
  return on;
}

static void trace(const char *step, const algo *a, const dataset *d) {
  if (trace_on()) fprintf(stderr, "trace: %s %s 2^%u\n", step, a ? a->name : "plain_copy", ilog2(d->n));
}

static bool record_single(run_state *st, const algo *a, const dataset *d, uint32_t set, double *gpu_ns,
                          uint64_t *wall_ns) {
  trace("first call", a, d);
  *gpu_ns = 0.0;
  uint64_t t0 = bench_now_ns();
  vkds_result err = record_batch(st, a, d, set, 1);
  VkResult vr = err == VKDS_SUCCESS ? plain_run(&st->plain, st->plain.record, WAIT_SPIN_NS) : VK_SUCCESS;
  *wall_ns = bench_now_ns() - t0;
  if (err != VKDS_SUCCESS || vr != VK_SUCCESS) {
    const char *why = vr != VK_SUCCESS ? "Vulkan error" : bench_error_detail(err);
    if (vr != VK_SUCCESS) err = VKDS_ERROR_VULKAN;
    fprintf(stderr, "vkds-bench: %s %s n=%llu device (recorded): %s: %s\n", a->name, type_name(d->type),
            (unsigned long long)d->n, vkds_result_str(err), why);
    return false;
  }
  gpu_timer_read(&st->plain.timer, RANGE_VKDS, 1, gpu_ns);
  return check_batch(st, a, d, set, 0);
}

/* One call of the plain copy alone (a batch of one, set 0), timed: *ns, its GPU time,
 * else (no timestamps) its wall time. */
static VkResult plain_single(plain *p, const dataset *d, double *ns) {
  plain_record_batch(p, p->batch[0], d, 0, 1, RANGE_PLAIN);
  uint64_t t0 = bench_now_ns();
  VkResult vr = plain_run(p, p->batch[0], WAIT_SPIN_NS);
  *ns = (double)(bench_now_ns() - t0);
  if (vr == VK_SUCCESS) gpu_timer_read(&p->timer, RANGE_PLAIN, 1, ns);
  return vr;
}

/* Untimed batches of k plain copies back to back, two in flight, for at least `ns` (at
 * least one batch): on a GPU, the clocks up before the device rows (its governor lowers
 * them within a few idle moments); everywhere, every set's output written once (see
 * dataset_create). */
static VkResult plain_warm(plain *p, const dataset *d, uint32_t k, uint64_t ns) {
  uint64_t t0 = bench_now_ns(), prev = 0, value = 0;
  uint32_t set = 0;
  VkResult vr = VK_SUCCESS;
  for (uint32_t j = 0; vr == VK_SUCCESS; ++j) {
    /* batch[j & 1] last ran as batch j - 2, waited for below in round j - 1 */
    plain_record_batch(p, p->batch[j & 1], d, set, k, NO_RANGE);
    set = (set + k) % d->sets;
    vr = plain_submit(p, p->batch[j & 1], &value);
    if (vr == VK_SUCCESS && prev) vr = plain_wait(p, prev, WAIT_SPIN_NS);
    prev = value;
    if (bench_now_ns() - t0 >= ns) break;
  }
  return vr == VK_SUCCESS ? plain_wait(p, value, WAIT_SPIN_NS) : vr;
}

/* GPU times of one row's calls, in ns, over all its timed batches. */
typedef struct samples {
  double v[MAX_BATCHES * MAX_BATCH];
  uint32_t n;
} samples;

/* VKDS_BENCH_INTERVALS=1: every timed batch's calls, in µs in the order they ran, on
 * stderr (to see whether a slow median comes from every call or from a few). */
static bool intervals_on(void) {
  static int on = -1;
  if (on < 0) on = bench_env_on("VKDS_BENCH_INTERVALS");
  return on;
}

/* Reads the k GPU times of the batch just waited for in `range` into s; returns their
 * median (0: no timestamps). `what` names the batch for VKDS_BENCH_INTERVALS. */
static double samples_add(samples *s, const gpu_timer *g, uint32_t range, uint32_t k, const char *what,
                          const dataset *d) {
  double *at = &s->v[s->n];
  if (!gpu_timer_read(g, range, k, at)) return 0.0;
  if (intervals_on()) {
    fprintf(stderr, "intervals: %s %s 2^%u:", what, type_name(d->type), ilog2(d->n));
    for (uint32_t i = 0; i < k; ++i) fprintf(stderr, " %.1f", at[i] * 1e-3);
    fputc('\n', stderr);
  }
  s->n += k;
  return bench_median(at, k); /* sorts its own k in place: the row's median does not mind */
}

/* The GPU-timed batches of one row on device data: the recording form of `a` (k calls per
 * batch to begin with), or with `a` NULL the plain copy's own row; and batches of the
 * plain copy (st->copy_batch calls) alternating with vkds's, so that a drift of the
 * GPU's speed hits the row and its copy baseline alike. Each round submits a copy batch
 * (recorded before), records and submits vkds's batch while the copy runs, records the
 * next copy batch while vkds's runs, and waits once: the GPU is left idle only for the
 * wake-up of that wait (a CPU device's work takes the cores that record: there nothing
 * is recorded while it runs). After each batch, its kind's calls per batch aim again at
 * BATCH_NS from the batch's median. MIN_BATCHES to MAX_BATCHES rounds, as many as
 * BATCHES_NS of wall time allow, and at least MIN_REPS calls. *gpu_ns: the median of the
 * row's calls (a NULL: of the copy's); *roof_ns: of the copy's (0: none). Scalar results
 * are checked after every batch (its last call). Returns whether every call ran and was
 * right. */
static bool time_batches(run_state *st, const algo *a, const dataset *d, uint32_t k, double *gpu_ns, double *roof_ns) {
  trace("batches", a, d);
  static samples own, copy;
  plain *p = &st->plain;
  uint32_t kc = st->copy_batch, vset = 0, cset = 0, calls = 0;
  bool with_copy = kc > 0, ok = true;
  bool overlap = d->gpu; /* a CPU device runs on the cores that record: record while it idles */
  own.n = copy.n = 0;
  *gpu_ns = *roof_ns = 0.0;
  if (!a && !with_copy) return true;
  char name[96]; /* the row's name, for VKDS_BENCH_INTERVALS */
  if (a) snprintf(name, sizeof name, st->own ? "%s_%s" : "%s", a->name, path_name(st->path));
  vkds_result err = VKDS_SUCCESS;
  VkResult vr = VK_SUCCESS;
  uint64_t t0 = bench_now_ns(), last = 0;
  /* the copies each batch[] holds: a batch is recorded a round before it runs, with the
   * count of that moment, and must be read back with that count (a read of queries
   * that were reset but never written would wait for ever) */
  uint32_t kc_rec[2] = {kc, 0};
  if (with_copy) plain_record_batch(p, p->batch[0], d, cset, kc, RANGE_PLAIN);
  for (uint32_t j = 0; j < MAX_BATCHES; ++j) {
    uint64_t tb = bench_now_ns(), value = 0;
    if (j >= MIN_BATCHES && calls >= MIN_REPS && tb - t0 + last > BATCHES_NS) break;
    uint32_t kc_now = kc_rec[j & 1], kv_now = k, vset_now = vset;
    if (trace_on()) fprintf(stderr, "trace:   round %u: %u copies, %u calls\n", j, with_copy ? kc_now : 0, a ? k : 0);
    if (a && !overlap) err = record_batch(st, a, d, vset, k);
    if (with_copy && err == VKDS_SUCCESS) {
      vr = plain_submit(p, p->batch[j & 1], &value);
      cset = (cset + kc_now) % d->sets;
    }
    if (a && overlap && vr == VK_SUCCESS) err = record_batch(st, a, d, vset, k);
    if (a && vr == VK_SUCCESS && err == VKDS_SUCCESS) vr = plain_submit(p, p->record, &value);
    /* the next copy batch, into the batch[] that ran in round j - 1 */
    if (with_copy && overlap && vr == VK_SUCCESS) {
      plain_record_batch(p, p->batch[(j + 1) & 1], d, cset, kc, RANGE_PLAIN + ((j + 1) & 1));
      kc_rec[(j + 1) & 1] = kc;
    }
    if (vr == VK_SUCCESS && value) vr = plain_wait(p, value, WAIT_SPIN_NS);
    if (with_copy && !overlap && vr == VK_SUCCESS) {
      plain_record_batch(p, p->batch[(j + 1) & 1], d, cset, kc, RANGE_PLAIN + ((j + 1) & 1));
      kc_rec[(j + 1) & 1] = kc;
    }
    if (vr != VK_SUCCESS || err != VKDS_SUCCESS) break;
    last = bench_now_ns() - tb;
    if (with_copy) {
      double m = samples_add(&copy, &p->timer, RANGE_PLAIN + (j & 1), kc_now, "plain_copy", d);
      if (m > 0) kc = batch_calls(m);
    }
    if (a) {
      double m = samples_add(&own, &p->timer, RANGE_VKDS, kv_now, name, d);
      if (m > 0) k = batch_calls(m);
      vset = (vset + kv_now) % d->sets;
      ok = check_batch(st, a, d, (vset_now + kv_now - 1) % d->sets, j) && ok;
    }
    calls += a ? kv_now : kc_now;
  }
  if (vr != VK_SUCCESS) fprintf(stderr, "vkds-bench: %s: Vulkan error %d\n", a ? a->name : "plain_copy", (int)vr);
  if (err != VKDS_SUCCESS)
    fprintf(stderr, "vkds-bench: %s %s n=%llu device (recorded): %s: %s\n", a->name, type_name(d->type),
            (unsigned long long)d->n, vkds_result_str(err), bench_error_detail(err));
  if (with_copy) st->copy_batch = kc;
  *roof_ns = bench_median(copy.v, copy.n);
  *gpu_ns = a ? bench_median(own.v, own.n) : *roof_ns;
  return ok && vr == VK_SUCCESS && err == VKDS_SUCCESS && calls > 0;
}

/* The recording form's written outputs: one call on set 0, into poisoned memory, every
 * element checked. */
static bool check_recorded_output(run_state *st, const algo *a, dataset *d) {
  double gpu;
  uint64_t wall;
  vkds_result err = poison_output(d, DEVICE);
  const uint32_t *out = NULL;
  if (err == VKDS_SUCCESS && !record_single(st, a, d, 0, &gpu, &wall)) return false;
  if (err == VKDS_SUCCESS) out = fetch_output(d, DEVICE, &err);
  if (!out) {
    fprintf(stderr, "vkds-bench: %s %s n=%llu device (recorded): %s: %s\n", a->name, type_name(d->type),
            (unsigned long long)d->n, vkds_result_str(err), bench_error_detail(err));
    return false;
  }
  return a->verify(a, d, out, "device (recorded)");
}

/* Times the blocking call of one algorithm on one dataset and residency, one call per
 * sample as a user calls it (submission and wait included): the median wall time into
 * *wall_ns. Scalar results are checked on every call (a scan's: its output's last
 * element, poisoned before the call and read after it, outside the timed interval),
 * written outputs once more afterwards, into poisoned memory. Returns whether every call
 * succeeded and was right. */
static bool time_blocking(run_state *st, const algo *a, dataset *d, residency where, double *wall_ns) {
  const char *form = residency_names[where];
  timer t = timer_start(WARMUP, d->warm_ns);
  bool ok = true;
  vkds_result err = VKDS_SUCCESS;
  for (uint32_t i = 0; timer_more(&t) && err == VKDS_SUCCESS; ++i) {
    uint32_t set = i % d->sets;
    call c = call_of(st->pol, d, where, set);
    if (a->layout == LAST && (err = poison_last(d, where, set)) != VKDS_SUCCESS) break;
    uint64_t t0 = bench_now_ns();
    err = a->run(&c);
    uint64_t wall = bench_now_ns() - t0;
    if (err == VKDS_SUCCESS && a->layout == LAST) err = fetch_last(d, where, set, &c.value);
    if (err != VKDS_SUCCESS) break;
    if (a->check && !a->check(&c, &d->ref[set])) {
      if (ok)
        fprintf(stderr, "vkds-bench: %s %s n=%llu %s: wrong result (call %u)\n", a->name, type_name(d->type),
                (unsigned long long)d->n, form, i);
      ok = false;
    }
    timer_add(&t, wall);
  }
  if (err == VKDS_SUCCESS && a->verify) {
    call c = call_of(st->pol, d, where, 0);
    const uint32_t *out = NULL;
    if ((err = poison_output(d, where)) == VKDS_SUCCESS && (err = a->run(&c)) == VKDS_SUCCESS &&
        (out = fetch_output(d, where, &err)) != NULL)
      ok = a->verify(a, d, out, form) && ok;
  }
  if (err != VKDS_SUCCESS) {
    fprintf(stderr, "vkds-bench: %s %s n=%llu %s: %s: %s\n", a->name, type_name(d->type), (unsigned long long)d->n,
            form, vkds_result_str(err), bench_error_detail(err));
    ok = false;
  }
  *wall_ns = timer_wall(&t);
  return ok && t.timed > 0;
}

/* The plain copy's wall time: its pre-recorded single dispatches submitted and waited for
 * as vkds waits (plain_run), as the blocking calls are timed; then one checked into
 * poisoned memory. */
static bool plain_wall(plain *p, dataset *d, double *wall_ns) {
  timer t = timer_start(d->sets > WARMUP ? d->sets : WARMUP, d->warm_ns);
  VkResult vr = VK_SUCCESS;
  for (uint32_t i = 0; timer_more(&t) && vr == VK_SUCCESS; ++i) {
    uint64_t t0 = bench_now_ns();
    vr = plain_run(p, p->cmds[i % d->sets], WAIT_SPIN_NS);
    timer_add(&t, bench_now_ns() - t0);
  }
  *wall_ns = timer_wall(&t);
  static const algo copy = {"plain_copy", 2, NULL, false, NULL, NO_RESULT, NULL, expect_copy, check_output};
  vkds_result err = poison_output(d, DEVICE);
  const uint32_t *out = NULL;
  if (err == VKDS_SUCCESS && vr == VK_SUCCESS && (vr = plain_run(p, p->cmds[0], WAIT_SPIN_NS)) == VK_SUCCESS)
    out = fetch_output(d, DEVICE, &err);
  if (vr != VK_SUCCESS) fprintf(stderr, "vkds-bench: plain_copy: Vulkan error %d\n", (int)vr);
  return out && check_output(&copy, d, out, "device");
}

/* vkds_upload of the input (host -> a device buffer), the baseline of the host rows: a
 * streamed algorithm moves host data through the same bus, and its target is a fraction
 * of what vkds's own upload reaches in the same run. Wall time, as the host rows. */
static void upload_row(dataset *d, row *r) {
  timer t = timer_start(WARMUP, d->warm_ns);
  vkds_result err = VKDS_SUCCESS;
  for (uint32_t i = 0; timer_more(&t) && err == VKDS_SUCCESS; ++i) {
    uint32_t set = i % d->sets;
    uint64_t t0 = bench_now_ns();
    err = vkds_upload(d->res, vkds_view_of(d->dev[set][OUT]), d->host[set][IN], d->bytes);
    timer_add(&t, bench_now_ns() - t0);
  }
  const uint32_t *out = err == VKDS_SUCCESS ? fetch_output(d, DEVICE, &err) : NULL;
  if (err != VKDS_SUCCESS)
    fprintf(stderr, "vkds-bench: vkds_upload: %s: %s\n", vkds_result_str(err), bench_error_detail(err));
  row_times(r, (double)d->bytes, 0.0, timer_wall(&t));
  /* set 0's output was written by the set-0 call, last or not: it holds set 0's input */
  r->ok = out && memcmp(out, d->host[0][IN], d->bytes) == 0;
}

/* ---- the run: rows as they are measured ------------------------------------------------- */

/* A vkds row's baseline and ratio (GB/s over the baseline's): the baselines of its type and
 * size are measured (or loaded) before it. */
static void set_baseline(const run_state *st, row *r) {
  const algo *a = r->alg;
  if (!a) return;
  /* a row that failed before it was timed has no figure to compare (it read 0.000x
   * against plain_copy; a probe) */
  if (!(r->gbps > 0)) {
    r->baseline = NULL;
    return;
  }
  const row *base = NULL;
  if (r->resident == HOST) /* host rows: against vkds's own upload of the same bytes */
    base = row_find(&st->rows, "vkds_upload", r->type, r->n), r->baseline = "vkds_upload";
  else if (a->cub) /* a forced path's row too: against the same CUB row */
    base = row_find(&st->cub, a->cub, r->type, r->n), r->baseline = a->cub;
  if (!base && r->roof_gbps > 0) { /* the plain copy interleaved with this row's calls */
    r->baseline = "plain_copy", r->ratio = r->gbps / r->roof_gbps;
    return;
  }
  if (!base) base = row_find(&st->rows, "plain_copy", r->type, r->n), r->baseline = "plain_copy";
  if (!base || !(base->gbps > 0) || !isfinite(base->gbps)) /* (a NaN from a --cub file printed "ratio":nan) */
    r->baseline = NULL;
  else
    r->ratio = r->gbps / base->gbps;
}

/* A time field of a JSON row; null when not measured. */
static void print_json_us(const char *key, double us) {
  if (us > 0)
    printf("\"%s\":%.3f,", key, us);
  else
    printf("\"%s\":null,", key);
}

/* One row as JSON: us and gbps are the row's (GPU-timed when "timing" says "gpu"), gpu_us
 * and wall_us both times (null: not measured). */
static void print_json(const row *r) {
  printf("{\"algo\":\"%s\",\"type\":\"%s\",\"n\":%llu,\"resident\":\"%s\",", r->algo, type_name(r->type),
         (unsigned long long)r->n, residency_names[r->resident]);
  if (r->us > 0) /* (a row that failed before it was timed: nulls, not zeros; a probe) */
    printf("\"us\":%.3f,\"gbps\":%.4f,\"timing\":\"%s\",", r->us, r->gbps, r->gpu_us > 0 ? "gpu" : "wall");
  else
    printf("\"us\":null,\"gbps\":null,\"timing\":null,");
  print_json_us("gpu_us", r->gpu_us);
  print_json_us("wall_us", r->wall_us);
  if (r->roof_gbps > 0) printf("\"roof_gbps\":%.4f,", r->roof_gbps);
  if (r->baseline)
    printf("\"baseline\":\"%s\",\"ratio\":%.4f,", r->baseline, r->ratio);
  else
    printf("\"baseline\":null,\"ratio\":null,");
  printf("\"ok\":%s}\n", r->ok ? "true" : "false");
}

/* A row is measured: its baseline, and its JSON line at once (flushed, so that a run cut
 * short still leaves every row it finished). */
static void row_done(const run_state *st, row *r) {
  set_baseline(st, r);
  if (st->json) print_json(r), fflush(stdout);
}

/* ---- round trips at 2^10 --------------------------------------------------------------- */

/* One plain dispatch (pre-recorded; recorded before each submission) and one blocking
 * vkds_reduce, each timed in runs of RT_RUN calls one after the other (a loop of
 * blocking calls, as an application runs them), the three kinds of runs interleaved so
 * that the machine's drift hits all three alike. (In a run, vkds's first call comes
 * after plain Vulkan's submissions to the same queue, so the queue puts its leading
 * barrier before it; the others follow vkds's own full barrier and need none.) */
static void round_trips(run_state *st, dataset *d) {
  static double pre[RT_TRIPS], rec[RT_TRIPS], red[RT_TRIPS];
  plain *p = &st->plain;
  bool ok = true;
  vkds_result err = VKDS_SUCCESS;
  plain_bind(p, d);
  for (uint32_t i = 0; i < RT_WARMUP + RT_TRIPS && err == VKDS_SUCCESS; i += RT_RUN) {
    for (uint32_t j = 0; j < RT_RUN; ++j) {
      uint64_t t0 = bench_now_ns();
      plain_run(p, p->cmds[0], SPIN_ALWAYS);
      if (i + j >= RT_WARMUP) pre[i + j - RT_WARMUP] = (double)(bench_now_ns() - t0);
    }
    for (uint32_t j = 0; j < RT_RUN; ++j) {
      uint64_t t0 = bench_now_ns();
      plain_record(p, p->record, 0, d->n);
      plain_run(p, p->record, SPIN_ALWAYS);
      if (i + j >= RT_WARMUP) rec[i + j - RT_WARMUP] = (double)(bench_now_ns() - t0);
    }
    for (uint32_t j = 0; j < RT_RUN && err == VKDS_SUCCESS; ++j) {
      call c = call_of(st->pol, d, DEVICE, 0);
      uint64_t t0 = bench_now_ns();
      err = vkds_reduce(st->pol, &c.in, NULL, NULL, &c.value);
      if (i + j >= RT_WARMUP) red[i + j - RT_WARMUP] = (double)(bench_now_ns() - t0);
      ok = ok && err == VKDS_SUCCESS && check_reduce(&c, &d->ref[0]);
    }
  }
  if (err != VKDS_SUCCESS)
    fprintf(stderr, "vkds-bench: round trip vkds_reduce: %s: %s\n", vkds_result_str(err), bench_error_detail(err));
  double us[3] = {bench_median(pre, RT_TRIPS) / 1e3, bench_median(rec, RT_TRIPS) / 1e3,
                  bench_median(red, RT_TRIPS) / 1e3};
  static const char *const names[3] = {"rt_plain", "rt_plain_recorded", "rt_vkds_reduce"};
  for (int k = 0; k < 3; ++k) {
    row *r = row_add(&st->rows, names[k], d->type, d->n, DEVICE);
    if (!r) return;
    r->us = r->wall_us = us[k];
    r->ok = k < 2 || (ok && err == VKDS_SUCCESS);
    if (k > 0) r->baseline = "rt_plain", r->ratio = us[0] > 0 ? us[k] / us[0] : 0.0;
    row_done(st, r);
  }
}

/* ---- sizes and the table ------------------------------------------------------------------- */

/* The largest log2 size: asked for (or 28; 24 on a CPU device), lowered until one set
 * (the ARRAYS, and in and out in each of `paths` forced scan paths' contexts) takes at
 * most half the largest device-local heap and the host's copies (the ARRAYS plus
 * scratch and slack) half of the host's memory. */
static uint32_t max_log2_for(const vkds_resource_info *ri, const bench_options *opt, uint32_t paths) {
  uint32_t want = opt->max_log2 ? opt->max_log2 : ri->device_type == VKDS_DEVICE_CPU ? 24 : 28, log2n = want;
  uint64_t heap = 0, host = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
  for (uint32_t h = 0; h < ri->heap_count; ++h)
    if (ri->heaps[h].device_local && ri->heaps[h].size > heap) heap = ri->heaps[h].size;
  while (log2n > MIN_LOG2 && ((ARRAYS + 2 * paths) * (4ull << log2n) > heap / 2 ||
                              (ARRAYS + 2) * (4ull << log2n) > host / 2))
    --log2n;
  if (log2n < want) fprintf(stderr, "vkds-bench: sizes stop at 2^%u (memory)\n", log2n);
  return log2n;
}

static void print_table(const row_list *rows) {
  /* "µ" is two bytes: its headers are one wider */
  printf("%-5s %-4s %-8s %-28s %12s %12s %10s %10s  %-18s %7s  %s\n", "n", "type", "resident", "algorithm", "GPU µs",
         "wall µs", "GB/s", "copy GB/s", "baseline", "ratio", "check");
  for (size_t i = 0; i < rows->count; ++i) {
    const row *r = &rows->v[i];
    char n[16], gpu[24], wall[24], gbps[16], roof[16], ratio[16];
    snprintf(n, sizeof n, "2^%u", ilog2(r->n));
    snprintf(gpu, sizeof gpu, r->gpu_us > 0 ? "%.1f" : "-", r->gpu_us);
    snprintf(wall, sizeof wall, r->wall_us > 0 ? "%.1f" : "-", r->wall_us);
    snprintf(gbps, sizeof gbps, r->gbps > 0 ? "%.3f" : "-", r->gbps);
    snprintf(roof, sizeof roof, r->roof_gbps > 0 ? "%.3f" : "-", r->roof_gbps);
    snprintf(ratio, sizeof ratio, r->baseline ? "%.3fx" : "-", r->ratio);
    printf("%-5s %-4s %-8s %-28s %11s %11s %10s %10s  %-18s %7s  %s\n", n, type_name(r->type),
           residency_names[r->resident], r->algo, gpu, wall, gbps, roof, r->baseline ? r->baseline : "-", ratio,
           r->ok ? "ok" : "FAIL");
  }
}

/* The round-trip summary: the issue's target is a blocking reduce at 2^10 within 1.2x
 * one plain dispatch's round trip. */
static void print_round_trip(const row_list *rows) {
  const row *pre = row_find(rows, "rt_plain", VKDS_U32, 1u << MIN_LOG2),
            *rec = row_find(rows, "rt_plain_recorded", VKDS_U32, 1u << MIN_LOG2),
            *red = row_find(rows, "rt_vkds_reduce", VKDS_U32, 1u << MIN_LOG2);
  if (pre && rec && red && pre->us > 0 && rec->us > 0)
    printf("round trip at 2^10 u32: blocking vkds_reduce %.1f µs = %.2fx one plain dispatch (%.1f µs, "
           "pre-recorded), %.2fx recorded each time (%.1f µs); target <= 1.2x\n",
           red->us, red->us / pre->us, pre->us, red->us / rec->us, rec->us);
}

/* The forced scan paths' rows of one type and size: a row per path and per algorithm
 * measured on the paths (algo.paths), on the same inputs in each path's context. */
typedef struct path_rows {
  uint32_t count;
  dataset d[PATHS];               /* each path's data */
  row *r[PATHS * ALGO_COUNT];     /* path-major */
  const algo *a[PATHS * ALGO_COUNT];
  uint32_t path[PATHS * ALGO_COUNT], calls[PATHS * ALGO_COUNT];
  double gpu_ns[PATHS * ALGO_COUNT], roof_ns[PATHS * ALGO_COUNT];
} path_rows;

/* Every row of one type and size, the device rows together and first, in three steps:
 *   1. set-up, host-bound: each algorithm's first recorded call (it compiles the kernel at
 *      the first size; its GPU time gives the calls per batch), the plain copy's first;
 *      the same in each forced scan path's context (from PATH_MIN_LOG2 up), whose data
 *      (the same inputs, uploaded) every set of its plain copy then writes once
 *   2. the GPU at sustained load: on a GPU, CLOCK_WARM_NS of plain copies back to back
 *      (its governor lowers the clocks whenever it idles a while, as through the host
 *      rows of the size before, and the copy baseline with them); then the plain copy's
 *      batches and each algorithm's recorded batches, paired with copy batches
 *      (time_batches), one row after the other, nothing host-bound between them; then
 *      the forced paths' rows the same way, each paired with its context's plain copy
 *   3. host-bound again: the blocking calls (wall time), the written outputs checked,
 *      and the rows printed (the forced paths' rows: their recorded form's outputs
 *      checked; no blocking calls, unless there are no timestamps); then vkds_upload and
 *      the host rows.
 * Returns 0, or 1 when the data could not be set up. */
static int bench_size(run_state *st, run_state *paths, uint32_t path_count, vkds_type type, uint64_t n) {
  static path_rows pr;
  dataset d;
  if (dataset_create(&d, st->res, type, n, &st->seed)) return 1;
  pr.count = 0;
  uint32_t np = n >= (1ull << PATH_MIN_LOG2) ? path_count : 0;
  for (uint32_t f = 0; f < np; ++f)
    if (dataset_mirror(&pr.d[f], paths[f].res, &d)) {
      while (f--) dataset_destroy(&pr.d[f]);
      dataset_destroy(&d);
      return 1;
    }
  plain *p = &st->plain;
  bool copy = d.bytes <= p->max_range;
  if (!copy) /* one descriptor cannot hold it */
    fprintf(stderr, "vkds-bench: plain_copy 2^%u: over maxStorageBufferRange, skipped\n", ilog2(n));
  else
    plain_bind(p, &d);
  for (uint32_t s = 0; copy && s < d.sets; ++s)
    plain_scan_bind(&st->pscan, s, vkds_buffer_vk(d.dev[s][IN]), vkds_buffer_offset(d.dev[s][IN]),
                    vkds_buffer_vk(d.dev[s][OUT]), vkds_buffer_offset(d.dev[s][OUT]), d.bytes);
  st->pscan_bound = copy;
  /* the device rows, added before any is measured: pointers into the list hold until the
   * host rows are added */
  size_t first = st->rows.count;
  row *r;
  if (copy && !row_add(&st->rows, "plain_copy", type, n, DEVICE)) goto done;
  size_t sel[ALGO_COUNT], nsel = 0; /* the algorithms measured (--only) */
  for (size_t k = 0; k < ALGO_COUNT; ++k)
    if (algo_wanted(st, &ALGOS[k]) && !(ALGOS[k].u32_only && type != VKDS_U32) &&
        !(ALGOS[k].run == run_plain_scan1 && !st->pscan.single_pass))
      sel[nsel++] = k;
  for (size_t i = 0; i < nsel; ++i)
    if (!(r = row_add(&st->rows, ALGOS[sel[i]].name, type, n, DEVICE)))
      goto done;
    else
      r->alg = &ALGOS[sel[i]];
  for (uint32_t f = 0; f < np; ++f)
    for (size_t k = 0; k < ALGO_COUNT; ++k)
      if (ALGOS[k].paths && algo_wanted(st, &ALGOS[k])) {
        char name[sizeof r->algo];
        snprintf(name, sizeof name, "%s_%s", ALGOS[k].name, path_name(paths[f].path));
        if (!(r = row_add(&st->rows, name, type, n, DEVICE))) goto done;
        r->alg = pr.a[pr.count] = &ALGOS[k], pr.path[pr.count++] = f;
      }
  row *copy_row = copy ? &st->rows.v[first] : NULL, *rows = &st->rows.v[first + copy];
  for (uint32_t j = 0; j < pr.count; ++j) pr.r[j] = &rows[nsel + j];
  /* 1 */
  uint32_t calls[ALGO_COUNT];
  double gpu_ns[ALGO_COUNT + 1] = {0}, roof_ns[ALGO_COUNT + 1] = {0}; /* [ALGO_COUNT]: plain_copy's */
  for (size_t i = 0; i < nsel; ++i) {
    double gpu;
    uint64_t wall;
    rows[i].ok = record_single(st, &ALGOS[sel[i]], &d, 0, &gpu, &wall);
    calls[i] = batch_calls(gpu > 0 ? gpu : (double)wall);
  }
  for (uint32_t j = 0; j < pr.count; ++j) {
    double gpu;
    uint64_t wall;
    uint32_t f = pr.path[j];
    pr.r[j]->ok = record_single(&paths[f], pr.a[j], &pr.d[f], 0, &gpu, &wall);
    pr.calls[j] = batch_calls(gpu > 0 ? gpu : (double)wall);
    pr.gpu_ns[j] = pr.roof_ns[j] = 0.0;
  }
  VkResult vr = VK_SUCCESS;
  for (uint32_t f = 0; f < np; ++f) {
    plain *fp = &paths[f].plain;
    double ns = 0.0;
    paths[f].copy_batch = 0;
    if (!copy) continue;
    plain_bind(fp, &pr.d[f]);
    if ((vr = plain_single(fp, &pr.d[f], &ns)) == VK_SUCCESS) {
      uint32_t k = batch_calls(ns);
      if ((vr = plain_warm(fp, &pr.d[f], k > pr.d[f].sets ? k : pr.d[f].sets, 0)) == VK_SUCCESS)
        paths[f].copy_batch = k;
    }
    if (vr != VK_SUCCESS) /* the path's rows go without their paired copy */
      fprintf(stderr, "vkds-bench: plain_copy (scan path %s) 2^%u %s: Vulkan error %d\n", path_name(paths[f].path),
              ilog2(n), type_name(type), (int)vr);
  }
  st->copy_batch = 0;
  if (copy) {
    double ns = 0.0;
    vr = plain_single(p, &d, &ns);
    st->copy_batch = batch_calls(ns);
    uint32_t warm = st->copy_batch > d.sets ? st->copy_batch : d.sets; /* every set's output */
    /* 2 */
    if (vr != VK_SUCCESS || (vr = plain_warm(p, &d, warm, d.gpu ? CLOCK_WARM_NS : 0)) != VK_SUCCESS) {
      fprintf(stderr, "vkds-bench: plain_copy 2^%u %s: Vulkan error %d\n", ilog2(n), type_name(type), (int)vr);
      st->copy_batch = 0, copy_row->ok = false;
    } else {
      copy_row->ok = time_batches(st, NULL, &d, 0, &gpu_ns[ALGO_COUNT], &roof_ns[ALGO_COUNT]);
    }
  }
  for (size_t i = 0; i < nsel; ++i)
    rows[i].ok = time_batches(st, &ALGOS[sel[i]], &d, calls[i], &gpu_ns[i], &roof_ns[i]) && rows[i].ok;
  for (uint32_t j = 0; j < pr.count; ++j) {
    uint32_t f = pr.path[j];
    pr.r[j]->ok =
        time_batches(&paths[f], pr.a[j], &pr.d[f], pr.calls[j], &pr.gpu_ns[j], &pr.roof_ns[j]) && pr.r[j]->ok;
  }
  /* 3 */
  if (copy) {
    double wall = 0.0;
    copy_row->ok = plain_wall(p, &d, &wall) && copy_row->ok;
    row_times(copy_row, 2.0 * (double)d.bytes, gpu_ns[ALGO_COUNT], wall);
    row_done(st, copy_row);
  }
  for (size_t i = 0; i < nsel; ++i) {
    const algo *a = &ALGOS[sel[i]];
    double wall = 0.0;
    r = &rows[i];
    if (!a->recorded_only) r->ok = time_blocking(st, a, &d, DEVICE, &wall) && r->ok;
    if (a->verify) r->ok = check_recorded_output(st, a, &d) && r->ok;
    row_times(r, algo_bytes(a, &d), gpu_ns[i], wall);
    r->roof_gbps = roof_ns[i] > 0 ? 2.0 * (double)d.bytes / roof_ns[i] : 0.0;
    row_done(st, r);
  }
  for (uint32_t j = 0; j < pr.count; ++j) {
    uint32_t f = pr.path[j];
    double wall = 0.0;
    r = pr.r[j];
    if (pr.gpu_ns[j] <= 0) /* no timestamps: the blocking call's wall time, as the other rows */
      r->ok = time_blocking(&paths[f], pr.a[j], &pr.d[f], DEVICE, &wall) && r->ok;
    r->ok = check_recorded_output(&paths[f], pr.a[j], &pr.d[f]) && r->ok;
    row_times(r, algo_bytes(pr.a[j], &pr.d[f]), pr.gpu_ns[j], wall);
    r->roof_gbps = pr.roof_ns[j] > 0 ? 2.0 * (double)d.bytes / pr.roof_ns[j] : 0.0;
    row_done(st, r);
  }
  for (uint32_t f = 0; f < np; ++f) dataset_destroy(&pr.d[f]);
  np = 0;
  if ((r = row_add(&st->rows, "vkds_upload", type, n, HOST))) upload_row(&d, r), row_done(st, r);
  for (size_t i = 0; i < nsel; ++i) {
    const algo *a = &ALGOS[sel[i]];
    if (!a->recorded_only && (r = row_add(&st->rows, a->name, type, n, HOST))) {
      double wall = 0.0;
      r->alg = a;
      r->ok = time_blocking(st, a, &d, HOST, &wall);
      row_times(r, algo_bytes(a, &d), 0.0, wall);
      row_done(st, r);
    }
  }
done:
  for (uint32_t f = 0; f < np; ++f) dataset_destroy(&pr.d[f]);
  dataset_destroy(&d);
  return 0;
}

/* Issue 12's measurements at the largest size of u32 device data: the scans, copy_if,
 * the 256-bin histogram and reduce_by_key against their baselines (CUB's with --cub), and both scan paths forced. */
/* The u32 device row `algo` at n elements; NULL: none. */
static const row *find_row(const row_list *rows, const char *name, uint64_t n) {
  for (size_t i = 0; i < rows->count; ++i) {
    const row *r = &rows->v[i];
    if (r->type == VKDS_U32 && r->n == n && r->resident == DEVICE && strcmp(r->algo, name) == 0) return r;
  }
  return NULL;
}

static void print_scan_targets(const row_list *rows, vkds_scan_path path) {
  static const struct {
    const char *algo;
    double target; /* 0: none */
  } t[] = {{"vkds_inclusive_scan", 0.95},          {"vkds_exclusive_scan", 0.0},
           {"vkds_copy_if", 0.9},                  {"vkds_inclusive_scan_single", 0.0},
           {"vkds_inclusive_scan_portable", 0.0},  {"vkds_copy_if_single", 0.0},
           {"vkds_copy_if_portable", 0.0},         {"vkds_histogram_even", 1.0},
           {"vkds_reduce_by_key", 0.0}};
  uint64_t n = 0;
  for (size_t i = 0; i < rows->count; ++i)
    if (rows->v[i].type == VKDS_U32 && rows->v[i].resident == DEVICE && rows->v[i].alg && rows->v[i].n > n &&
        strcmp(rows->v[i].algo, "vkds_inclusive_scan") == 0)
      n = rows->v[i].n;
  if (!n) return;
  printf("scans at 2^%u u32, device data (vkds_inclusive_scan etc. on this device's %s path; the targets are "
         "against CUB):\n",
         ilog2(n), path_name(path));
  for (size_t k = 0; k < sizeof t / sizeof t[0]; ++k)
    for (size_t i = 0; i < rows->count; ++i) {
      const row *r = &rows->v[i];
      if (r->type != VKDS_U32 || r->n != n || r->resident != DEVICE || strcmp(r->algo, t[k].algo) != 0) continue;
      printf("  %-28s %10.3f GB/s", r->algo, r->gbps);
      if (r->baseline) printf("  %.3fx %s", r->ratio, r->baseline);
      if (t[k].target > 0) printf("  (target >= %.2fx CUB)", t[k].target);
      printf("%s\n", r->ok ? "" : "  FAILED");
    }
  /* the portable path's overhead over the same work in plain Vulkan (issue 12's target
   * on CPU devices, lavapipe): the forced portable row, else the default one when the
   * default path is portable */
  const row *portable = find_row(rows, "vkds_inclusive_scan_portable", n);
  if (!portable && path == VKDS_SCAN_PATH_PORTABLE) portable = find_row(rows, "vkds_inclusive_scan", n);
  const row *ps = find_row(rows, "plain_scan", n);
  if (portable && ps && portable->us > 0 && ps->us > 0)
    printf("  portable scan / plain_scan (bench/scan3.comp, the same three passes in plain Vulkan): %.3fx the "
           "time%s (target <= 1.10x on CPU devices)\n",
           portable->us / ps->us, portable->ok && ps->ok ? "" : "  FAILED");
}

/* Issue 13's measurements at the largest size of u32 device data: the sorts against
 * CUB's (GB/s counting each key, and value, read and written once, as cub_bench does; the
 * same ratio as of keys per second), both sort paths forced. */
static void print_sort_targets(const row_list *rows) {
  static const struct {
    const char *algo;
    double target; /* 0: none */
  } t[] = {{"vkds_sort", 0.75},       {"vkds_sort_single", 0.0}, {"vkds_sort_portable", 0.0},
           {"vkds_sort_by_key", 0.8}, {"vkds_merge_sort", 0.5}, {"vkds_sort16", 0.0},
           {"vkds_merge", 0.0},       {"vkds_merge_by", 0.0}};
  uint64_t n = 0;
  for (size_t i = 0; i < rows->count; ++i)
    if (rows->v[i].type == VKDS_U32 && rows->v[i].resident == DEVICE && rows->v[i].n > n &&
        strcmp(rows->v[i].algo, "vkds_sort") == 0)
      n = rows->v[i].n;
  if (!n) return;
  printf("sorts at 2^%u u32, device data (G keys/s; the targets are against CUB):\n", ilog2(n));
  for (size_t k = 0; k < sizeof t / sizeof t[0]; ++k) {
    const row *r = find_row(rows, t[k].algo, n);
    if (!r) continue;
    printf("  %-28s %10.4g G keys/s", r->algo, r->us > 0 ? (double)n / (r->us * 1e3) : 0.0);
    if (r->baseline) printf("  %.3fx %s", r->ratio, r->baseline);
    if (t[k].target > 0) printf("  (target >= %.2fx CUB)", t[k].target);
    printf("%s\n", r->ok ? "" : "  FAILED");
  }
}

bool bench_algorithms_only_ok(const char *only) {
  char unnamed[64];
  if (!only_names_nothing(only, unnamed)) return true;
  fprintf(stderr, "vkds-bench: --only: \"%s\" names no algorithm; the algorithms are:", unnamed);
  for (size_t k = 0; k < ALGO_COUNT; ++k) fprintf(stderr, " %s", ALGOS[k].name);
  fprintf(stderr, " (the forced scan paths' rows, _single and _portable, come with theirs)\n");
  return false;
}

int bench_algorithms(vkds_context *ctx, const bench_options *opt) {
  run_state st = {.json = opt->json, .only = opt->only}, paths[PATHS] = {{0}};
  uint32_t path_count = 0;
  int status = 0;
  vkds_resource_info ri;
  vkds_resource_get_info(vkds_context_resource(ctx, 0), &ri);
  /* arguments that would measure nothing are said so, not run as an empty table; and
   * each part of --only must name an algorithm (main checks it first; a caller of this
   * function may not have) */
  if (!bench_algorithms_only_ok(opt->only)) return 2;

  if (opt->cub_path && cub_load(opt->cub_path, &st.cub)) return 1;
  if (state_open(&st, ctx, 0)) {
    status = 1;
    goto done;
  }
  /* the forced scan paths: a context each (the path is the context's) */
  static const vkds_scan_path forced[PATHS] = {VKDS_SCAN_PATH_SINGLE, VKDS_SCAN_PATH_PORTABLE};
  for (uint32_t f = 0; f < PATHS && opt->context_info; ++f) {
    int r = forced_open(&paths[path_count], opt->context_info, forced[f], &ri);
    if (r == 0) ++path_count;
    if (r == 1) status = 1;
    if (r == 2) printf("the device cannot run the single-pass scan: no _single rows\n");
  }
  st.seed = bench_now_ns() ^ ((uint64_t)getpid() << 32);
  printf("--algorithms on %s (resource 0, queue family %u); random seed 0x%016llx\n", ri.device_name,
         ri.queue_family, (unsigned long long)st.seed);
  printf("scans, copy_if and sorts run the %s path here (the device's rule or VKDS_SCAN_PATH; unforced,\n"
         "on NVIDIA integer scans from 2^21 and copy_if from 2^22 take the chained single pass, sorts\n"
         "below 2^21 keys Onesweep); rows _single and _portable: the same calls in a\n"
         "context with that scan_path forced, from 2^%u up\n",
         path_name(st.path), PATH_MIN_LOG2);
  bool gpu_timed = st.plain.timer.pool != VK_NULL_HANDLE;
  if (!gpu_timed) printf("the queue family writes no timestamps: every row is timed by wall clock\n");
  fflush(stdout);
  uint32_t max_log2 = max_log2_for(&ri, opt, path_count);
  if (opt->min_log2 > max_log2) {
    fprintf(stderr, "vkds-bench: --min-log2 %u is above the largest size measured on %s (2^%u)\n", opt->min_log2,
            ri.device_name, max_log2);
    status = 2;
    goto done;
  }
  uint64_t t0 = bench_now_ns();
  dataset d;
  if (dataset_create(&d, st.res, VKDS_U32, 1u << MIN_LOG2, &st.seed) == 0) {
    round_trips(&st, &d);
    dataset_destroy(&d);
  } else {
    status = 1;
  }
  uint32_t min_log2 = opt->min_log2 > MIN_LOG2 ? opt->min_log2 : MIN_LOG2;
  for (uint32_t log2n = min_log2; log2n <= max_log2; ++log2n) {
    status |= bench_size(&st, paths, path_count, VKDS_U32, 1ull << log2n);
    status |= bench_size(&st, paths, path_count, VKDS_F32, 1ull << log2n);
    fprintf(stderr, "vkds-bench: --algorithms 2^%u done, %.1f s\n", log2n, (double)(bench_now_ns() - t0) / 1e9);
  }
  for (size_t i = 0; i < st.rows.count; ++i) status |= !st.rows.v[i].ok;
  print_table(&st.rows);
  printf("GPU µs%s: median time between the two GPU timestamps around each call, the calls back to\n"
         "back in batches of ~10 ms of GPU work (one submission, one wait each), as CUB's events around\n"
         "its launches: plain_copy's dispatches; on device data, the recording form (vkds_cmd_*, results\n"
         "to device memory). Each size's device rows run together, the GPU at sustained load (on a\n"
         "GPU after 1 s of plain copies, so its clocks are up). wall µs: median wall time of the\n"
         "blocking call, one per submission and wait (plain_copy: submit + wait on the timeline,\n"
         "spinning 50 µs as vkds does, then sleeping); host rows and rt_ rows have wall time only, the\n"
         "forced scan paths' rows (_single, _portable) GPU time only. GB/s: bytes the algorithm must\n"
         "move / time, the GPU time where the row has one (copy_if: n read, the kept written, an 8-byte\n"
         "count, as CUB's select_if). copy GB/s: plain_copy's, its batches alternating with the row's\n"
         "(so a drift of the GPU's speed hits both; a forced path's: its own context's copy). ratio:\n"
         "GB/s over the baseline's: plain_copy (the alternating one where the row has it), given --cub\n"
         "CUB's reduce for reductions, InclusiveSum, ExclusiveSum and select_if for the scans and\n"
         "copy_if (forced paths too), vkds_upload for host rows (rt_ rows: time over rt_plain's).\n"
         "Baselines %s.\n",
         gpu_timed ? "" : " [none here: no timestamps, so every row is wall-timed]",
         st.cub.count ? "from this run and cub_bench's file (CUDA events)"
                      : "from this run (no --cub: reductions, scans and copy_if against plain_copy)");
  print_round_trip(&st.rows);
  print_scan_targets(&st.rows, st.path);
  print_sort_targets(&st.rows);
done:
  for (uint32_t f = 0; f < path_count; ++f) state_close(&paths[f]);
  state_close(&st);
  return status;
}
