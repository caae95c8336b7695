// bench/cub/cub_bench.cu: the CUB baseline of `vkds-bench --algorithms` (bench/bench_algorithms.c).
//
// For 2^10 .. 2^max_log2 elements (--min-log2, --max-log2; 10 and 28 by default, lowered
// until one size's device data, device_bytes() below, fits in half the free device
// memory) of u32 and f32, each case of CASES below is timed on device-resident data and
// printed as one JSON object per line on stdout, the format vkds-bench --json writes:
//   {"algo":"cub_reduce","type":"u32","n":1024,"resident":"device","us":..,"gbps":..,
//    "baseline":"cub_copy","ratio":..,"ok":true}
// The sorts add "gkeys" (10^9 keys per second) after "gbps". A summary table goes to
// stderr. vkds-bench --algorithms --cub FILE reads these rows: cub_reduce is the baseline
// of its reductions; bench/plot_algorithms.py draws them.
//
// Cases (u32 and f32 unless marked u32), and the bytes their GB/s count (4 per word):
//   cub_copy              copy16 below, 16 bytes a thread: the baseline   n read + n written
//   cub_transform         x * 2 + 1, copy16's access pattern              n read + n written
//   cub_reduce            DeviceReduce::Sum (u32 wraps)                   n read
//   cub_inclusive_scan    DeviceScan::InclusiveSum                        n read + n written
//   cub_exclusive_scan    DeviceScan::ExclusiveSum                        n read + n written
//   cub_select_if         DeviceSelect::If with vkds-bench's count_if     n read + the kept
//                         predicate (u32 (x & 1) == 0, f32 x > 0.5f):     written (their mean
//                         the kept elements and their count (int64)       over the sets) + 8
//   cub_histogram_even    DeviceHistogram::HistogramEven, 256 bins        n read (the 256
//                         (uint32 counters). u32: over [0, 2^32), fed     counters not
//                         the top 8 bits of each word through a           counted)
//                         thrust::transform_iterator with levels 0..256
//                         (int): 8-bit samples take CUB's byte path (a
//                         pass-through to 256 privatized bins); bin x >> 24
//                         is exactly floor(x * 256 / 2^32). f32: over
//                         [-1, 1) (float levels; (x + 1) * 128 is exact on
//                         this data's 2^-23 grid)
//   cub_histogram_wide    u32: the same 256 bins asked of CUB directly:   n read
//                         the u32 samples with 64-bit levels 0 and 2^32
//                         (u32 levels cannot hold 2^32); CUB's general
//                         path, a 64-bit multiply and divide per sample
//   cub_reduce_by_key     DeviceReduce::ReduceByKey, u32 keys in runs of  n keys + n values
//                         random length 1..16 (neighbouring runs' keys    read + the runs'
//                         differ), values of the type summed (u32 wraps)  keys + aggregates
//                         into unique keys, aggregates and a run count    written + 8
//   cub_sort_keys         DeviceRadixSort::SortKeys, ascending, bits      2n: see below
//                         0..32 (f32 in CUB's order: by value here, the
//                         data has no NaN and no -0)
//   cub_sort_keys16       u32 keys < 2^16, told begin_bit 0, end_bit 16   2n
//   cub_sort_keys16_full  u32 the same keys sorted over bits 0..32 (CUB   2n
//                         must be told; vkds finds constant digits itself)
//   cub_sort_pairs        u32 DeviceRadixSort::SortPairs, u32 keys with   4n (keys and values)
//                         u32 values (each element's index)
//   cub_merge_keys        u32 DeviceMerge::MergeKeys of two ascending     2n
//                         halves (random steps of 0..7 from a start
//                         below 2^16) with a less-than
//   cub_merge_sort_keys   u32 DeviceMergeSort::SortKeysCopy with a        2n
//                         less-than (SortKeys's algorithm and dispatch,
//                         the input left intact for the rotation and the
//                         check); up to 2^HEAVY_MAX_LOG2 (28) only: the
//                         slowest case by far (~0.1-0.2 s a run expected
//                         at 2^28), skipped at 2^29 and 2^30
// The sorts' GB/s count the floor, every key (and value) read once and written once, not
// the passes a radix sort makes (4 of 8 bits for 32-bit keys, 2 for 16); their "gkeys" is
// n / time. The radix sorts use the pointer forms (input intact, output separate; CUB's
// temporary storage holds the alternate buffers).
//
// Method (the same as vkds-bench's, /work/.library/device/METHOD.md): inputs random (a
// new seed each run, printed; the generator and value ranges of vkds-bench: any u32, f32 in
// [-1, 1)) and fresh for each type and size; times from cudaEvents around each run on one
// stream, the median of the timed runs after the warm-up: WARMUP runs (at least
// MIN_WARMUP; fewer once they took WARMUP_MS), then as many runs as fit in REPS_MS by the
// last warm-up's time, MIN_REPS to REPS (so 5 + 30 wherever a run takes under 8 ms: every
// case but the large sorts). When the host kept the GPU idle for over IDLE_MS (making data,
// checking outputs), CLOCK_WARM_MS of untimed copies run first, as vkds-bench warms the
// clocks before its rows (an idle H100 drops its SM clock to 345-975 MHz). The data rotates
// over up to MAX_SETS sets of buffers (ROTATE_BYTES together) so that sizes that fit in L2
// are not timed from it; every CUDA call and launch checked; results checked against the
// host (u32 exactly; f32 within F32_TOLERANCE times the sum of the magnitudes of the
// elements summed: for a scan element by element, the running sum of magnitudes, as CUB
// adds in another order than the host, its tiles chained): scalar results (sums, counts)
// after every run, against host answers computed once per set, arrays once more after the
// timed runs, into poisoned memory, every element. Sorts: in CUB's order, and a
// permutation of the input by a multiset
// fingerprint (the sum of a bijective 64-bit mix of each key, or key and value, under a
// random key: one wrong element always shows, a wrong multiset passes with a chance of
// ~2^-64; a host sort to compare with took 15-45 s at 2^28 on one core).
// GB/s: 10^9 bytes per second of the bytes the case must move (above). ratio: GB/s over
// the baseline row's (same type and size): cub_copy for every row but cub_copy.
//
// Run time (an estimate made before any GPU run of these cases; the last line on stderr
// gives the real one): 50-90 s for 2^10..2^28 on an H100. The host's part, one core:
// ~40 s (making inputs, reading outputs back, the checks; 2^26's share measured on a slow
// 2-core VM and scaled by 8 for all sizes); the GPU's runs ~10 s (half of it at 2^28, the
// merge sort ~1.5 s of that); the clock warm-ups ~12 s (CLOCK_WARM_MS whenever a case
// starts after more than IDLE_MS of host work: most cases from ~2^22 up).
//
// Adding a case: write a function that calls CUB (a CubCall: asks for the temporary
// storage size when temp is null, else enqueues on the stream without syncing; templated
// on the element type as the ones below), its checks (check_run after every run: scalar
// results read back and compared with the cached host answers; check_full after the
// poisoned run: arrays), and add a row to CASES with the words it moves per element or a
// bytes function. It may read a second input (Aux: ensure_aux makes it, host_aux and d_aux)
// and write d_out, d_out2 and d_result (16 bytes); more arrays go into Data (allocate in
// data_create, free in data_destroy, and count them in device_bytes).
//
// Build: bench/cub/build.sh (nvcc -arch=sm_90, static cudart) -> build-cub/cub_bench.
#include <cub/cub.cuh>
#include <cuda_runtime.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace {

constexpr int MIN_LOG2 = 10;
constexpr int MAX_SETS = 8;
constexpr int WARMUP = 5;              // warm-up runs, at most
constexpr int MIN_WARMUP = 2;          // at least (the first may load the kernels)
constexpr double WARMUP_MS = 100;      // the warm-up ends early once its runs took this long
constexpr int REPS = 30;               // timed runs, at most
constexpr int MIN_REPS = 7;            // at least
constexpr double REPS_MS = 250;        // timed runs: as many as fit in this, by the last warm-up's time
constexpr double IDLE_MS = 20;         // the GPU idled longer than this: warm its clocks first
constexpr double CLOCK_WARM_MS = 100;  // with this much GPU time of untimed copies (vkds-bench: 200 ms a size)
constexpr size_t ROTATE_BYTES = 128ull << 20;  // 2.5x an H100's L2 (50 MB)
constexpr int BLOCK = 256;
constexpr double F32_TOLERANCE = 1e-5;
constexpr int HIST_BINS = 256;
constexpr int HEAVY_MAX_LOG2 = 28;  // the merge sort's largest size

#define CUDA_TRY(call)                                                                         \
  do {                                                                                         \
    cudaError_t e_ = (call);                                                                   \
    if (e_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "cub_bench: %s:%d: %s: %s\n", __FILE__, __LINE__, #call,             \
                   cudaGetErrorString(e_));                                                    \
      std::exit(1);                                                                            \
    }                                                                                          \
  } while (0)

enum Type { U32, F32 };
const char *type_name(Type t) { return t == U32 ? "u32" : "f32"; }
constexpr unsigned ONLY_U32 = 1u << U32, BOTH = 1u << U32 | 1u << F32;  // Case::types

// ---- random data (vkds-bench's generator and ranges) -----------------------------------

uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

float as_f32(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

uint32_t f32_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// Any u32; an f32 in [-1, 1) on a 2^-23 grid (mixed signs, no denormals, no NaN, no -0).
uint32_t random_element(uint64_t *s, Type t) {
  uint32_t r = (uint32_t)(splitmix(s) >> 32);
  return t == U32 ? r : f32_bits((float)(r >> 8) * (1.0f / 8388608.0f) - 1.0f);
}

// ---- the predicates and operators, host and device --------------------------------------

// vkds-bench's count_if predicate.
struct KeepU32 {
  __host__ __device__ bool operator()(uint32_t x) const { return (x & 1u) == 0u; }
};
struct KeepF32 {
  __host__ __device__ bool operator()(float x) const { return x > 0.5f; }
};
template <class T>
using Keep = std::conditional_t<std::is_same_v<T, float>, KeepF32, KeepU32>;

// A u32's histogram bin over [0, 2^32) in 256 bins.
struct Top8 {
  __host__ __device__ uint8_t operator()(uint32_t x) const { return (uint8_t)(x >> 24); }
};

struct Less {
  __host__ __device__ bool operator()(uint32_t a, uint32_t b) const { return a < b; }
};

// ---- the data of one type and size ------------------------------------------------------

// What d_aux (and host_aux) hold: the second input of some cases.
enum Aux {
  AUX_NONE,
  AUX_RUNS,    // reduce_by_key's keys: runs of random length 1..16, random keys
  AUX_KEYS16,  // sort_keys16's keys: random, < 2^16
  AUX_INDEX,   // sort_pairs's values: each element's index
  AUX_HALVES,  // merge_keys's inputs: two ascending halves (random steps of 0..7)
};

// splitmix's finaliser: xor-shifts and odd multiplies, so a bijection of 64 bits.
uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// A multiset's fingerprint: the sum (mod 2^64) of a bijective mix of each element (a key,
// or a key and its value: hi << 32 | lo) under a random key. The same for any order of the
// same elements; for different multisets the same with a chance of about 2^-64, and never
// when they differ in one element. Linear and streaming: the host sorts to compare with
// took 15 s (LSD radix) to 45 s (std::sort) at 2^28 on one core.
uint64_t fingerprint(const uint32_t *hi, const uint32_t *lo, size_t n, uint64_t key) {
  uint64_t f = 0;
  if (lo)
    for (size_t i = 0; i < n; ++i) f += mix64((((uint64_t)hi[i] << 32) | lo[i]) ^ key);
  else
    for (size_t i = 0; i < n; ++i) f += mix64(((uint64_t)hi[i] << 32) ^ key);
  return f;
}

// The host's answers for one set's input, computed once.
struct SetRef {
  bool done = false;
  uint32_t sum = 0;               // u32: wrapping
  double sum_f = 0, sum_abs = 0;  // f32, and the tolerance's scale
  uint64_t kept = 0;              // elements the select predicate keeps
};

struct Data {
  Type type = U32;
  int log2n = 0;
  size_t n = 0, bytes = 0;
  int sets = 0;
  uint64_t *seed = nullptr;
  std::vector<uint32_t> host_in[MAX_SETS];   // the inputs' bits
  std::vector<uint32_t> host_aux[MAX_SETS];  // the second inputs' (what `aux` says)
  std::vector<uint32_t> host_out, host_out2; // arrays read back
  void *d_in[MAX_SETS] = {};
  void *d_aux[MAX_SETS] = {};
  void *d_out[MAX_SETS] = {};
  void *d_out2[MAX_SETS] = {};  // a second output: unique keys, sorted values
  void *d_result = nullptr;     // scalar results (16 bytes: a sum, an int64 count)
  void *d_temp = nullptr;       // CUB's temporary storage, the largest any case asked for
  size_t temp_bytes = 0;
  Aux aux = AUX_NONE;
  uint64_t aux_runs[MAX_SETS] = {};  // AUX_RUNS: each set's number of runs
  SetRef ref[MAX_SETS];
  uint64_t fp_key = 0;             // the fingerprints' key (random)
  uint64_t fp_in = 0, fp_aux = 0;  // of host_in[fp_in_set], host_aux[fp_aux_set]
  int fp_in_set = -1, fp_aux_set = -1;
};

int sets_for(size_t bytes) {
  size_t per_set = 2 * bytes;  // what one copy touches
  return (int)std::min<size_t>(MAX_SETS, (ROTATE_BYTES + per_set - 1) / per_set);
}

// Device memory for one size: per set its input, second input, output and second output;
// CUB's temporary storage, at most about two arrays (SortPairs's alternate keys and values;
// the merge sort's one) and its per-tile state (taken as an eighth of an array), and 64 MiB.
size_t device_bytes(int log2n) {
  size_t b = 4ull << log2n;
  return (size_t)sets_for(b) * 4 * b + 2 * b + b / 8 + (64ull << 20);
}

void data_create(Data &d, Type type, int log2n, uint64_t *seed) {
  d.type = type, d.log2n = log2n, d.n = (size_t)1 << log2n, d.bytes = d.n * 4, d.sets = sets_for(d.bytes);
  d.seed = seed, d.fp_key = splitmix(seed);
  for (int s = 0; s < d.sets; ++s) {
    d.host_in[s].resize(d.n);
    for (size_t i = 0; i < d.n; ++i) d.host_in[s][i] = random_element(seed, type);
    CUDA_TRY(cudaMalloc(&d.d_in[s], d.bytes));
    CUDA_TRY(cudaMalloc(&d.d_aux[s], d.bytes));
    CUDA_TRY(cudaMalloc(&d.d_out[s], d.bytes));
    CUDA_TRY(cudaMalloc(&d.d_out2[s], d.bytes));
    CUDA_TRY(cudaMemcpy(d.d_in[s], d.host_in[s].data(), d.bytes, cudaMemcpyHostToDevice));
    CUDA_TRY(cudaMemset(d.d_aux[s], 0, d.bytes));
    CUDA_TRY(cudaMemset(d.d_out[s], 0xff, d.bytes));
    CUDA_TRY(cudaMemset(d.d_out2[s], 0xff, d.bytes));
  }
  d.host_out.resize(d.n);
  CUDA_TRY(cudaMalloc(&d.d_result, 16));
  CUDA_TRY(cudaMemset(d.d_result, 0xff, 16));
}

void data_destroy(Data &d) {
  for (int s = 0; s < d.sets; ++s) {
    CUDA_TRY(cudaFree(d.d_in[s]));
    CUDA_TRY(cudaFree(d.d_aux[s]));
    CUDA_TRY(cudaFree(d.d_out[s]));
    CUDA_TRY(cudaFree(d.d_out2[s]));
  }
  CUDA_TRY(cudaFree(d.d_result));
  CUDA_TRY(cudaFree(d.d_temp));
  d = Data{};
}

// A second input of kind `aux` (not AUX_NONE) into `a` (n words); returns its number of
// runs (AUX_RUNS: runs of random length 1..16, neighbours' keys different), else 0.
uint64_t make_aux(std::vector<uint32_t> &a, Aux aux, size_t n, uint64_t *seed) {
  a.resize(n);
  uint64_t runs = 0;
  if (aux == AUX_RUNS) {
    uint32_t key = 0;
    for (size_t i = 0; i < n; ++runs) {
      uint64_t r = splitmix(seed);
      uint32_t next = (uint32_t)(r >> 32);
      if (runs > 0 && next == key) next ^= 1u;  // a new run: another key than the last run's
      key = next;
      size_t len = std::min<size_t>(1 + (r & 15), n - i);
      if (n - i >= 16)
        for (int k = 0; k < 16; ++k) a[i + k] = key;  // the next run writes over the rest
      else
        std::fill(a.data() + i, a.data() + i + len, key);
      i += len;
    }
  } else if (aux == AUX_KEYS16) {
    for (uint32_t &x : a) x = (uint32_t)(splitmix(seed) >> 48);
  } else if (aux == AUX_HALVES) {
    // each half from a random start below 2^16, steps of 0..7: below 2^31 up to 2^28
    for (size_t i = 0; i < n; ++i) {
      uint64_t r = splitmix(seed);
      a[i] = i == 0 || i == n / 2 ? (uint32_t)(r >> 48) : a[i - 1] + (uint32_t)(r & 7);
    }
  } else {
    for (size_t i = 0; i < n; ++i) a[i] = (uint32_t)i;
  }
  return runs;
}

// Fills every set's second input with fresh data of kind `aux` (unless it holds that).
void ensure_aux(Data &d, Aux aux) {
  if (aux == AUX_NONE || d.aux == aux) return;
  for (int s = 0; s < d.sets; ++s) {
    d.aux_runs[s] = make_aux(d.host_aux[s], aux, d.n, d.seed);
    CUDA_TRY(cudaMemcpy(d.d_aux[s], d.host_aux[s].data(), d.bytes, cudaMemcpyHostToDevice));
  }
  d.aux = aux;
  d.fp_aux_set = -1;
}

const SetRef &set_ref(Data &d, int set) {
  SetRef &r = d.ref[set];
  if (r.done) return r;
  const std::vector<uint32_t> &in = d.host_in[set];
  if (d.type == U32) {
    for (uint32_t x : in) r.sum += x, r.kept += KeepU32{}(x);
  } else {
    for (uint32_t x : in) {
      float f = as_f32(x);
      r.sum_f += f, r.sum_abs += std::fabs((double)f), r.kept += KeepF32{}(f);
    }
  }
  r.done = true;
  return r;
}

// A key in CUB's radix order: u32 as itself; f32 bits mapped to an order-preserving u32
// (negative: every bit flipped, else the sign bit set; by value on this data: no NaN, no -0).
uint32_t radix_key(Type t, uint32_t x) { return t == U32 ? x : (x & 0x80000000u) ? ~x : x | 0x80000000u; }

uint64_t fingerprint_in(Data &d, int set) {
  if (d.fp_in_set != set) d.fp_in = fingerprint(d.host_in[set].data(), nullptr, d.n, d.fp_key), d.fp_in_set = set;
  return d.fp_in;
}

// host_aux's, or with `pairs` the pairs (host_in, host_aux): sort_pairs's keys and values.
uint64_t fingerprint_aux(Data &d, int set, bool pairs) {
  if (d.fp_aux_set != set + (pairs ? MAX_SETS : 0)) {
    d.fp_aux = pairs ? fingerprint(d.host_in[set].data(), d.host_aux[set].data(), d.n, d.fp_key)
                     : fingerprint(d.host_aux[set].data(), nullptr, d.n, d.fp_key);
    d.fp_aux_set = set + (pairs ? MAX_SETS : 0);
  }
  return d.fp_aux;
}

// ---- kernels ------------------------------------------------------------------------------

// 16 bytes per thread and step (the width that reaches 90-95% of Hopper's bandwidth), one
// step per thread at the grid sizes used; grid-stride for safety.
__global__ void copy16(const uint4 *__restrict__ in, uint4 *__restrict__ out, size_t n4) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x)
    out[i] = in[i];
}

template <class T>
__device__ __forceinline__ uint32_t times2plus1(uint32_t b) {
  if constexpr (std::is_same_v<T, float>)
    return __float_as_uint(__uint_as_float(b) * 2.0f + 1.0f);
  else
    return b * 2u + 1u;
}

// out[i] = in[i] * 2 + 1, with copy16's access pattern.
template <class T>
__global__ void transform16(const uint4 *__restrict__ in, uint4 *__restrict__ out, size_t n4) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x) {
    uint4 v = in[i];
    v.x = times2plus1<T>(v.x), v.y = times2plus1<T>(v.y), v.z = times2plus1<T>(v.z), v.w = times2plus1<T>(v.w);
    out[i] = v;
  }
}

unsigned grid_for(size_t n4) { return (unsigned)std::min<size_t>((n4 + BLOCK - 1) / BLOCK, 0x7fffffff); }

// ---- checking -------------------------------------------------------------------------------

// Counts the wrong elements of one output and names the first.
struct Errors {
  const char *algo;
  Type type;
  size_t n;
  size_t bad = 0, first = 0;
  uint32_t got = 0, want = 0;
  bool has_want = true;
  void add(size_t i, uint32_t g, uint32_t w, bool hw = true) {
    if (bad++ == 0) first = i, got = g, want = w, has_want = hw;
  }
  bool ok(const char *what) const {
    if (bad == 0) return true;
    std::fprintf(stderr, "cub_bench: %s %s n=%zu: %zu %s, the first at %zu (0x%08x", algo, type_name(type), n, bad, what,
                 first, got);
    if (has_want) std::fprintf(stderr, ", want 0x%08x", want);
    std::fprintf(stderr, ")\n");
    return false;
  }
};

void read_words(std::vector<uint32_t> &dst, const void *src, size_t words) {
  if (dst.size() < words) dst.resize(words);
  if (words) CUDA_TRY(cudaMemcpy(dst.data(), src, words * 4, cudaMemcpyDeviceToHost));
}

int64_t read_count(const Data &d) {
  int64_t c;
  CUDA_TRY(cudaMemcpy(&c, d.d_result, sizeof c, cudaMemcpyDeviceToHost));
  return c;
}

bool check_count(const char *algo, const Data &d, int64_t got, uint64_t want, const char *what) {
  if (got >= 0 && (uint64_t)got == want) return true;
  std::fprintf(stderr, "cub_bench: %s %s n=%zu: %lld %s, want %llu\n", algo, type_name(d.type), d.n, (long long)got,
               what, (unsigned long long)want);
  return false;
}

// Scans: u32 exactly (wrapping); f32 element by element within F32_TOLERANCE of the
// running sum of magnitudes (CUB adds in another order, its tiles chained).
bool verify_scan(const char *algo, Type t, bool inclusive, const uint32_t *in, const uint32_t *out, size_t n) {
  Errors e{algo, t, n};
  if (t == U32) {
    uint32_t sum = 0;
    for (size_t i = 0; i < n; ++i) {
      uint32_t before = sum;
      sum += in[i];
      uint32_t want = inclusive ? sum : before;
      if (out[i] != want) e.add(i, out[i], want);
    }
  } else {
    double sum = 0, mag = 0;
    for (size_t i = 0; i < n; ++i) {
      double want = sum, scale = mag, x = as_f32(in[i]);
      sum += x, mag += std::fabs(x);
      if (inclusive) want = sum, scale = mag;
      if (!(std::fabs((double)as_f32(out[i]) - want) <= F32_TOLERANCE * scale)) e.add(i, out[i], f32_bits((float)want));
    }
  }
  return e.ok("elements wrong");
}

// Select: the kept elements in their order. `out` has room for n words, the first ones
// those read back (as many as the predicate keeps: the caller checked the count).
// Branch-free per predicate (a branch on the predicate made it 3-5x slower).
template <class K, class T>
bool verify_select_as(const char *algo, Type t, const uint32_t *in, size_t n, const uint32_t *out) {
  Errors e{algo, t, n};
  for (size_t i = 0, j = 0; i < n; ++i) {
    uint32_t x = in[i];
    T v;
    std::memcpy(&v, &x, sizeof v);
    size_t k = K{}(v), wrong = k & (size_t)(out[j] != x);
    if (__builtin_expect(wrong, 0) && e.bad == 0) e.first = j, e.got = out[j], e.want = x;
    e.bad += wrong;
    j += k;  // j <= i: out[j] within the n words
  }
  return e.ok("kept elements wrong");
}

bool verify_select(const char *algo, Type t, const uint32_t *in, size_t n, const uint32_t *out) {
  return t == U32 ? verify_select_as<KeepU32, uint32_t>(algo, t, in, n, out)
                  : verify_select_as<KeepF32, float>(algo, t, in, n, out);
}

// Histogram bins as CUB computes them: u32 x >> 24; f32 (x + 1) * 128 in float for x in
// [-1, 1) (exact on this data), samples outside dropped. Returns HIST_BINS for none.
uint32_t hist_bin(Type t, uint32_t x) {
  if (t == U32) return x >> 24;
  float f = as_f32(x);
  if (!(f >= -1.0f && f < 1.0f)) return HIST_BINS;
  return std::min<uint32_t>((uint32_t)((f + 1.0f) * 128.0f), HIST_BINS);
}

bool verify_histogram(const char *algo, Type t, const uint32_t *in, size_t n, const uint32_t *bins) {
  std::vector<uint32_t> want(HIST_BINS + 1, 0);
  for (size_t i = 0; i < n; ++i) ++want[hist_bin(t, in[i])];
  Errors e{algo, t, n};
  for (int b = 0; b < HIST_BINS; ++b)
    if (bins[b] != want[b]) e.add(b, bins[b], want[b]);
  return e.ok("bins wrong");
}

// Reduce by key: `runs` words of unique keys and of aggregates (the caller checked the run
// count): each run's key, and its values' sum (u32 wrapping; f32 within F32_TOLERANCE of
// the run's sum of magnitudes).
bool verify_reduce_by_key(const char *algo, Type t, const uint32_t *keys, const uint32_t *vals, size_t n,
                          const uint32_t *out_keys, const uint32_t *out_aggs, size_t runs) {
  Errors ek{algo, t, n}, ea{algo, t, n};
  size_t run = 0;
  for (size_t i = 0; i < n; ++run) {
    size_t j = i;
    uint32_t sum = 0;
    double sum_f = 0, mag = 0;
    for (; j < n && keys[j] == keys[i]; ++j) {
      sum += vals[j];
      double v = as_f32(vals[j]);
      sum_f += v, mag += std::fabs(v);
    }
    if (run >= runs) {
      std::fprintf(stderr, "cub_bench: %s %s n=%zu: more runs than %zu\n", algo, type_name(t), n, runs);
      return false;
    }
    if (out_keys[run] != keys[i]) ek.add(run, out_keys[run], keys[i]);
    if (t == U32 ? out_aggs[run] != sum : !(std::fabs((double)as_f32(out_aggs[run]) - sum_f) <= F32_TOLERANCE * mag))
      ea.add(run, out_aggs[run], t == U32 ? sum : f32_bits((float)sum_f));
    i = j;
  }
  if (run != runs) {
    std::fprintf(stderr, "cub_bench: %s %s n=%zu: %zu runs, not %zu\n", algo, type_name(t), n, run, runs);
    return false;
  }
  return ek.ok("unique keys wrong") & ea.ok("aggregates wrong");
}

// Sorts: ascending in CUB's order, and a permutation of the input: the same fingerprint.
bool verify_sorted(const char *algo, Type t, const uint32_t *out, size_t n, uint64_t in_fingerprint, uint64_t key) {
  Errors e{algo, t, n};
  for (size_t i = 1; i < n; ++i)
    if (radix_key(t, out[i - 1]) > radix_key(t, out[i])) e.add(i, out[i], out[i - 1], false);
  bool ok = e.ok("keys below the key before them");
  if (fingerprint(out, nullptr, n, key) != in_fingerprint) {
    std::fprintf(stderr, "cub_bench: %s %s n=%zu: the keys are not a permutation of the input (fingerprints differ)\n",
                 algo, type_name(t), n);
    ok = false;
  }
  return ok;
}

// Pairs (u32): keys ascending, and the (key, value) pairs a permutation of the input's:
// the same fingerprint.
bool verify_pairs(const char *algo, const uint32_t *out_keys, const uint32_t *out_vals, size_t n,
                  uint64_t in_fingerprint, uint64_t key) {
  Errors e{algo, U32, n};
  for (size_t i = 1; i < n; ++i)
    if (out_keys[i - 1] > out_keys[i]) e.add(i, out_keys[i], out_keys[i - 1], false);
  bool ok = e.ok("keys below the key before them");
  if (fingerprint(out_keys, out_vals, n, key) != in_fingerprint) {
    std::fprintf(stderr, "cub_bench: %s u32 n=%zu: the pairs are not a permutation of the input's (fingerprints differ)\n",
                 algo, n);
    ok = false;
  }
  return ok;
}

// ---- cases -------------------------------------------------------------------------------

struct Case {
  const char *algo;      // the JSON row's name
  const char *baseline;  // the row its ratio is against; nullptr: none
  unsigned types;        // ONLY_U32 or BOTH
  int max_log2;          // the largest size it runs at
  Aux aux;               // the second input it reads
  double words;          // 32-bit words it must move per element, unless `bytes`
  double (*bytes)(Data &d);                              // the bytes it must move; nullptr: words
  bool keys;                                             // a sort: the row reports keys/s too
  size_t (*temp_bytes)(Data &d);                         // CUB's temporary storage; nullptr: none
  cudaError_t (*run)(Data &d, int set, cudaStream_t s);  // enqueues one run
  bool (*check_run)(Data &d, int set);   // after every run (scalar results); nullptr: none
  bool (*check_full)(Data &d, int set);  // after one more run into poisoned outputs; nullptr: none
};

// A call of CUB: the temporary storage's size into *temp_bytes when temp is null, else
// one run enqueued on `s`.
using CubCall = cudaError_t (*)(Data &d, void *temp, size_t &temp_bytes, int set, cudaStream_t s);

template <CubCall F>
size_t temp_of(Data &d) {
  size_t bytes = 0;
  CUDA_TRY(F(d, nullptr, bytes, 0, 0));
  return bytes;
}

template <CubCall F>
cudaError_t run_of(Data &d, int set, cudaStream_t s) {
  size_t bytes = d.temp_bytes;
  return F(d, d.d_temp, bytes, set, s);
}

#define BY_TYPE(f) (d.type == U32 ? f<uint32_t>(d, temp, tb, set, s) : f<float>(d, temp, tb, set, s))

// copy: n is a power of two >= 2^10, so a whole number of uint4s.
cudaError_t run_copy(Data &d, int set, cudaStream_t s) {
  size_t n4 = d.n / 4;
  copy16<<<grid_for(n4), BLOCK, 0, s>>>((const uint4 *)d.d_in[set], (uint4 *)d.d_out[set], n4);
  return cudaGetLastError();
}

cudaError_t run_transform(Data &d, int set, cudaStream_t s) {
  size_t n4 = d.n / 4;
  if (d.type == U32)
    transform16<uint32_t><<<grid_for(n4), BLOCK, 0, s>>>((const uint4 *)d.d_in[set], (uint4 *)d.d_out[set], n4);
  else
    transform16<float><<<grid_for(n4), BLOCK, 0, s>>>((const uint4 *)d.d_in[set], (uint4 *)d.d_out[set], n4);
  return cudaGetLastError();
}

// Compares the set's output array with expect(input element), every element; f32 within
// a relative 1e-6.
template <class F>
bool check_array(Data &d, int set, const char *algo, F expect) {
  CUDA_TRY(cudaMemcpy(d.host_out.data(), d.d_out[set], d.bytes, cudaMemcpyDeviceToHost));
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < d.n; ++i) {
    uint32_t got = d.host_out[i], want = expect(d.host_in[set][i]);
    bool ok = got == want ||
              (d.type == F32 && std::fabs(as_f32(got) - as_f32(want)) <= 1e-6f * std::fabs(as_f32(want)));
    if (!ok && bad++ == 0) first = i;
  }
  if (bad)
    std::fprintf(stderr, "cub_bench: %s %s n=%zu: %zu elements wrong, the first at %zu (0x%08x, want 0x%08x)\n", algo,
                 type_name(d.type), d.n, bad, first, d.host_out[first], expect(d.host_in[set][first]));
  return bad == 0;
}

bool check_copy(Data &d, int set) {
  return check_array(d, set, "cub_copy", [](uint32_t x) { return x; });
}

bool check_transform(Data &d, int set) {
  Type t = d.type;
  return check_array(d, set, "cub_transform",
                     [t](uint32_t x) { return t == U32 ? x * 2u + 1u : f32_bits(as_f32(x) * 2.0f + 1.0f); });
}

// reduce: cub::DeviceReduce::Sum (u32 wraps, as vkds's plus does).
template <class T>
cudaError_t reduce_sum(Data &d, void *temp, size_t *temp_bytes, int set, cudaStream_t s) {
  return cub::DeviceReduce::Sum(temp, *temp_bytes, (const T *)d.d_in[set], (T *)d.d_result, (int)d.n, s);
}

size_t temp_reduce(Data &d) {
  size_t bytes = 0;
  CUDA_TRY(d.type == U32 ? reduce_sum<uint32_t>(d, nullptr, &bytes, 0, 0) : reduce_sum<float>(d, nullptr, &bytes, 0, 0));
  return bytes;
}

cudaError_t run_reduce(Data &d, int set, cudaStream_t s) {
  size_t bytes = d.temp_bytes;
  return d.type == U32 ? reduce_sum<uint32_t>(d, d.d_temp, &bytes, set, s) : reduce_sum<float>(d, d.d_temp, &bytes, set, s);
}

// Against the set's host sum, computed once (a host sum after every run kept the GPU idle
// for up to ~0.3 s between the runs at 2^28).
bool check_reduce(Data &d, int set) {
  uint32_t got;
  CUDA_TRY(cudaMemcpy(&got, d.d_result, 4, cudaMemcpyDeviceToHost));
  const SetRef &r = set_ref(d, set);
  bool ok = d.type == U32 ? got == r.sum
                          : std::fabs((double)as_f32(got) - r.sum_f) <= F32_TOLERANCE * r.sum_abs + 1e-30;
  if (!ok) std::fprintf(stderr, "cub_bench: cub_reduce %s n=%zu: wrong sum\n", type_name(d.type), d.n);
  return ok;
}

// scans: DeviceScan::InclusiveSum / ExclusiveSum (u32 wraps).
template <class T>
cudaError_t inclusive_scan(Data &d, void *temp, size_t &tb, int set, cudaStream_t s) {
  return cub::DeviceScan::InclusiveSum(temp, tb, (const T *)d.d_in[set], (T *)d.d_out[set], (int)d.n, s);
}

template <class T>
cudaError_t exclusive_scan(Data &d, void *temp, size_t &tb, int set, cudaStream_t s) {
  return cub::DeviceScan::ExclusiveSum(temp, tb, (const T *)d.d_in[set], (T *)d.d_out[set], (int)d.n, s);
}

cudaError_t cub_inclusive_scan(Data &d, void *temp, size_t &tb, int set, cudaStream_t s) {
  return BY_TYPE(inclusive_scan);
}

cudaError_t cub_exclusive_scan(Data &d, void *temp, size_t &tb, int set, cudaStream_t s) {
  return BY_TYPE(exclusive_scan);
}

bool check_scan(Data &d, int set, bool inclusive) {
  read_words(d.host_out, d.d_out[set], d.n);
  return verify_scan(inclusive ? "cub_inclusive_scan" : "cub_exclusive_scan", d.type, inclusive,
                     d.host_in[set].data(), d.host_out.data(), d.n);
}

bool check_inclusive_scan(Data &d, int set) { return check_scan(d, set, true); }
bool check_exclusive_scan(Data &d, int set) { return check_scan(d, set, false); }

// select: DeviceSelect::If, the kept elements into d_out, their count (int64) into d_result.
template <class T>
cudaError_t select_if(Data &d, void *temp, size_t &tb, int set, cudaStream_t s) {
  return cub::DeviceSelect::If(temp, tb, (const T *)d.d_in[set], (T *)d.d_out[set], (int64_t *)d.d_result,
                               (int64_t)d.n, Keep<T>{}, s);
}

cudaError_t cub_select_if(Data &d, void *temp, size_t &tb, int set, cudaStream_t s) { return BY_TYPE(select_if); }

double bytes_select(Data &d) {
  double kept = 0;
  for (int s = 0; s < d.sets; ++s) kept += (double)set_ref(d, s).kept;
  return ((double)d.n + kept / d.sets) * 4 + 8;
}

bool check_select_count(Data &d, int set) {
  return check_count("cub_select_if", d, read_count(d), set_ref(d, set).kept, "kept");
}

bool check_select(Data &d, int set) {
  if (!check_select_count(d, set)) return false;
  read_words(d.host_out, d.d_out[set], set_ref(d, set).kept);
  return verify_select("cub_select_if", d.type, d.host_in[set].data(), d.n, d.host_out.data());
}

// histogram: DeviceHistogram::HistogramEven, 256 uint32 counters into d_out (see the top).
template <class T>
cudaError_t histogram_even(Data &d, void *temp, size_t &tb, int set, cudaStream_t s) {
  uint32_t *bins = (uint32_t *)d.d_out[set];
  if constexpr (std::is_same_v<T, float>) {
    return cub::DeviceHistogram::HistogramEven(temp, tb, (const float *)d.d_in[set], bins, HIST_BINS + 1, -1.0f, 1.0f,
                                               (int)d.n, s);
  } else {
    auto top8 = thrust::make_transform_iterator((const uint32_t *)d.d_in[set], Top8{});
    return cub::DeviceHistogram::HistogramEven(temp, tb, top8, bins, HIST_BINS + 1, 0, HIST_BINS, (int)d.n, s);
  }
}

cudaError_t cub_histogram_even(Data &d, void *temp, size_t &tb, int set, cudaStream_t s) {
  return BY_TYPE(histogram_even);
}

// u32 samples, 64-bit levels [0, 2^32).
cudaError_t cub_histogram_wide(Data &d, void *temp, size_t &tb, int set, cudaStream_t s) {
  return cub::DeviceHistogram::HistogramEven(temp, tb, (const uint32_t *)d.d_in[set], (uint32_t *)d.d_out[set],
                                             HIST_BINS + 1, (unsigned long long)0, 1ull << 32, (int)d.n, s);
}

bool check_histogram(Data &d, int set, const char *algo) {
  read_words(d.host_out, d.d_out[set], HIST_BINS);
  return verify_histogram(algo, d.type, d.host_in[set].data(), d.n, d.host_out.data());
}

bool check_histogram_even(Data &d, int set) { return check_histogram(d, set, "cub_histogram_even"); }
bool check_histogram_wide(Data &d, int set) { return check_histogram(d, set, "cub_histogram_wide"); }

// reduce by key: keys d_aux (AUX_RUNS), values d_in; unique keys into d_out2, aggregates
// into d_out, the run count (int64) into d_result.
template <class T>
cudaError_t reduce_by_key(Data &d, void *temp, size_t &tb, int set, cudaStream_t s) {
  return cub::DeviceReduce::ReduceByKey(temp, tb, (const uint32_t *)d.d_aux[set], (uint32_t *)d.d_out2[set],
                                        (const T *)d.d_in[set], (T *)d.d_out[set], (int64_t *)d.d_result,
                                        ::cuda::std::plus<T>{}, (int)d.n, s);
}

cudaError_t cub_reduce_by_key(Data &d, void *temp, size_t &tb, int set, cudaStream_t s) {
  return BY_TYPE(reduce_by_key);
}

double bytes_reduce_by_key(Data &d) {
  double runs = 0;
  for (int s = 0; s < d.sets; ++s) runs += (double)d.aux_runs[s];
  return (2.0 * (double)d.n + 2 * runs / d.sets) * 4 + 8;
}

bool check_reduce_by_key_count(Data &d, int set) {
  return check_count("cub_reduce_by_key", d, read_count(d), d.aux_runs[set], "runs");
}

bool check_reduce_by_key(Data &d, int set) {
  if (!check_reduce_by_key_count(d, set)) return false;
  size_t runs = d.aux_runs[set];
  read_words(d.host_out2, d.d_out2[set], runs);
  read_words(d.host_out, d.d_out[set], runs);
  return verify_reduce_by_key("cub_reduce_by_key", d.type, d.host_aux[set].data(), d.host_in[set].data(), d.n,
                              d.host_out2.data(), d.host_out.data(), runs);
}

// radix sorts: d_in (or d_aux's 16-bit keys) -> d_out; pairs' values d_aux (AUX_INDEX) -> d_out2.
template <class T>
cudaError_t sort_keys(Data &d, void *temp, size_t &tb, int set, cudaStream_t s) {
  return cub::DeviceRadixSort::SortKeys(temp, tb, (const T *)d.d_in[set], (T *)d.d_out[set], (int)d.n, 0,
                                        (int)sizeof(T) * 8, s);
}

cudaError_t cub_sort_keys(Data &d, void *temp, size_t &tb, int set, cudaStream_t s) { return BY_TYPE(sort_keys); }

cudaError_t cub_sort_keys16(Data &d, void *temp, size_t &tb, int set, cudaStream_t s) {
  return cub::DeviceRadixSort::SortKeys(temp, tb, (const uint32_t *)d.d_aux[set], (uint32_t *)d.d_out[set], (int)d.n,
                                        0, 16, s);
}

cudaError_t cub_sort_keys16_full(Data &d, void *temp, size_t &tb, int set, cudaStream_t s) {
  return cub::DeviceRadixSort::SortKeys(temp, tb, (const uint32_t *)d.d_aux[set], (uint32_t *)d.d_out[set], (int)d.n,
                                        0, 32, s);
}

cudaError_t cub_sort_pairs(Data &d, void *temp, size_t &tb, int set, cudaStream_t s) {
  return cub::DeviceRadixSort::SortPairs(temp, tb, (const uint32_t *)d.d_in[set], (uint32_t *)d.d_out[set],
                                         (const uint32_t *)d.d_aux[set], (uint32_t *)d.d_out2[set], (int)d.n, 0, 32,
                                         s);
}

// merge sort: SortKeysCopy d_in -> d_out (SortKeys is the same dispatch with d_keys as
// both input and output).
cudaError_t cub_merge_sort_keys(Data &d, void *temp, size_t &tb, int set, cudaStream_t s) {
  return cub::DeviceMergeSort::SortKeysCopy(temp, tb, (const uint32_t *)d.d_in[set], (uint32_t *)d.d_out[set],
                                            (int)d.n, Less{}, s);
}

// merge: d_aux's two ascending halves (AUX_HALVES) -> d_out.
cudaError_t cub_merge_keys(Data &d, void *temp, size_t &tb, int set, cudaStream_t s) {
  const uint32_t *a = (const uint32_t *)d.d_aux[set];
  int64_t half = (int64_t)(d.n / 2);
  return cub::DeviceMerge::MergeKeys(temp, tb, a, half, a + half, (int64_t)d.n - half, (uint32_t *)d.d_out[set], Less{},
                                     s);
}

bool check_sorted_input(Data &d, int set, const char *algo) {
  read_words(d.host_out, d.d_out[set], d.n);
  return verify_sorted(algo, d.type, d.host_out.data(), d.n, fingerprint_in(d, set), d.fp_key);
}

bool check_sort_keys(Data &d, int set) { return check_sorted_input(d, set, "cub_sort_keys"); }
bool check_merge_sort_keys(Data &d, int set) { return check_sorted_input(d, set, "cub_merge_sort_keys"); }

// d_out sorted, and a permutation of d_aux (the 16-bit keys, or the merge's halves).
bool check_sorted_aux(Data &d, int set, const char *algo) {
  read_words(d.host_out, d.d_out[set], d.n);
  return verify_sorted(algo, U32, d.host_out.data(), d.n, fingerprint_aux(d, set, false), d.fp_key);
}

bool check_sort_keys16(Data &d, int set) { return check_sorted_aux(d, set, "cub_sort_keys16"); }
bool check_sort_keys16_full(Data &d, int set) { return check_sorted_aux(d, set, "cub_sort_keys16_full"); }
bool check_merge_keys(Data &d, int set) { return check_sorted_aux(d, set, "cub_merge_keys"); }

bool check_sort_pairs(Data &d, int set) {
  read_words(d.host_out, d.d_out[set], d.n);
  read_words(d.host_out2, d.d_out2[set], d.n);
  return verify_pairs("cub_sort_pairs", d.host_out.data(), d.host_out2.data(), d.n, fingerprint_aux(d, set, true),
                      d.fp_key);
}

// The baseline first: later rows find it by name. Cases that share a second input
// follow each other (ensure_aux makes it once).
const Case CASES[] = {
    {"cub_copy", nullptr, BOTH, 30, AUX_NONE, 2, nullptr, false, nullptr, run_copy, nullptr, check_copy},
    {"cub_transform", "cub_copy", BOTH, 30, AUX_NONE, 2, nullptr, false, nullptr, run_transform, nullptr,
     check_transform},
    {"cub_reduce", "cub_copy", BOTH, 30, AUX_NONE, 1, nullptr, false, temp_reduce, run_reduce, check_reduce, nullptr},
    {"cub_inclusive_scan", "cub_copy", BOTH, 30, AUX_NONE, 2, nullptr, false, temp_of<cub_inclusive_scan>,
     run_of<cub_inclusive_scan>, nullptr, check_inclusive_scan},
    {"cub_exclusive_scan", "cub_copy", BOTH, 30, AUX_NONE, 2, nullptr, false, temp_of<cub_exclusive_scan>,
     run_of<cub_exclusive_scan>, nullptr, check_exclusive_scan},
    {"cub_select_if", "cub_copy", BOTH, 30, AUX_NONE, 0, bytes_select, false, temp_of<cub_select_if>,
     run_of<cub_select_if>, check_select_count, check_select},
    {"cub_histogram_even", "cub_copy", BOTH, 30, AUX_NONE, 1, nullptr, false, temp_of<cub_histogram_even>,
     run_of<cub_histogram_even>, nullptr, check_histogram_even},
    {"cub_histogram_wide", "cub_copy", ONLY_U32, 30, AUX_NONE, 1, nullptr, false, temp_of<cub_histogram_wide>,
     run_of<cub_histogram_wide>, nullptr, check_histogram_wide},
    {"cub_sort_keys", "cub_copy", BOTH, 30, AUX_NONE, 2, nullptr, true, temp_of<cub_sort_keys>, run_of<cub_sort_keys>,
     nullptr, check_sort_keys},
    {"cub_merge_sort_keys", "cub_copy", ONLY_U32, HEAVY_MAX_LOG2, AUX_NONE, 2, nullptr, true,
     temp_of<cub_merge_sort_keys>, run_of<cub_merge_sort_keys>, nullptr, check_merge_sort_keys},
    {"cub_reduce_by_key", "cub_copy", BOTH, 30, AUX_RUNS, 0, bytes_reduce_by_key, false, temp_of<cub_reduce_by_key>,
     run_of<cub_reduce_by_key>, check_reduce_by_key_count, check_reduce_by_key},
    {"cub_sort_keys16", "cub_copy", ONLY_U32, 30, AUX_KEYS16, 2, nullptr, true, temp_of<cub_sort_keys16>,
     run_of<cub_sort_keys16>, nullptr, check_sort_keys16},
    {"cub_sort_keys16_full", "cub_copy", ONLY_U32, 30, AUX_KEYS16, 2, nullptr, true, temp_of<cub_sort_keys16_full>,
     run_of<cub_sort_keys16_full>, nullptr, check_sort_keys16_full},
    {"cub_sort_pairs", "cub_copy", ONLY_U32, 30, AUX_INDEX, 4, nullptr, true, temp_of<cub_sort_pairs>,
     run_of<cub_sort_pairs>, nullptr, check_sort_pairs},
    {"cub_merge_keys", "cub_copy", ONLY_U32, 30, AUX_HALVES, 2, nullptr, true, temp_of<cub_merge_keys>,
     run_of<cub_merge_keys>, nullptr, check_merge_keys},
};

bool runs_on(const Case &c, const Data &d) { return (c.types >> d.type & 1u) && d.log2n <= c.max_log2; }

// ---- timing and output -----------------------------------------------------------------------

using Clock = std::chrono::steady_clock;
Clock::time_point gpu_idle_since = Clock::now();  // when the host last waited for the GPU

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// One run of `c` between two events; its GPU time in ms.
float time_run(const Case &c, Data &d, int set, cudaStream_t s, cudaEvent_t e0, cudaEvent_t e1) {
  CUDA_TRY(cudaEventRecord(e0, s));
  CUDA_TRY(c.run(d, set, s));
  CUDA_TRY(cudaEventRecord(e1, s));
  CUDA_TRY(cudaEventSynchronize(e1));
  gpu_idle_since = Clock::now();
  float t;
  CUDA_TRY(cudaEventElapsedTime(&t, e0, e1));
  return t;
}

// CLOCK_WARM_MS of GPU time of copies (set 0's input to its output), back to back in
// batches of ~10 ms, untimed.
void warm_clocks(Data &d, cudaStream_t s, cudaEvent_t e0, cudaEvent_t e1) {
  double done = 0;
  int k = 1;
  while (done < CLOCK_WARM_MS) {
    CUDA_TRY(cudaEventRecord(e0, s));
    for (int i = 0; i < k; ++i) CUDA_TRY(run_copy(d, 0, s));
    CUDA_TRY(cudaEventRecord(e1, s));
    CUDA_TRY(cudaEventSynchronize(e1));
    float t;
    CUDA_TRY(cudaEventElapsedTime(&t, e0, e1));
    done += t;
    k = (int)std::clamp(k * 10.0 / std::max(t, 1e-3f), 1.0, 4096.0);
  }
  gpu_idle_since = Clock::now();
}

struct Row {
  std::string algo, baseline;
  Type type;
  size_t n;
  double us, gbps, ratio, gkeys;
  bool keys, ok;
  int reps;
};

// Times one case on `d`: the warm-up, then the timed runs between two events each (the
// median), the sets rotating; scalar results checked after every run (the check reads
// the device after the sync), arrays once more into poisoned memory. The host's answers
// the per-run checks need are made first, and the clocks warmed if the GPU has idled.
Row time_case(const Case &c, Data &d, cudaStream_t s, cudaEvent_t e0, cudaEvent_t e1) {
  Row r{c.algo, c.baseline ? c.baseline : "", d.type, d.n, 0, 0, 0, 0, c.keys, true, 0};
  double bytes = c.bytes ? c.bytes(d) : c.words * (double)d.bytes;
  if (c.check_run)
    for (int set = 0; set < d.sets; ++set) set_ref(d, set);
  if (ms_since(gpu_idle_since) > IDLE_MS) warm_clocks(d, s, e0, e1);
  std::vector<double> ms;
  int warm = 0, reps = REPS;
  double warm_ms = 0;
  for (int i = 0; (int)ms.size() < reps; ++i) {
    int set = i % d.sets;
    float t = time_run(c, d, set, s, e0, e1);
    if (c.check_run) r.ok = c.check_run(d, set) && r.ok;
    if (warm < 0) {
      ms.push_back(t);
    } else if (++warm, warm_ms += t, warm >= WARMUP || (warm >= MIN_WARMUP && warm_ms >= WARMUP_MS)) {
      reps = (int)std::clamp(REPS_MS / std::max(t, 1e-3f), (double)MIN_REPS, (double)REPS);
      warm = -1;
    }
  }
  if (c.check_full) {
    // poison: 0xffffffff words (NaN as f32), and a count of -1
    CUDA_TRY(cudaMemsetAsync(d.d_out[0], 0xff, d.bytes, s));
    CUDA_TRY(cudaMemsetAsync(d.d_out2[0], 0xff, d.bytes, s));
    CUDA_TRY(cudaMemsetAsync(d.d_result, 0xff, 16, s));
    CUDA_TRY(c.run(d, 0, s));
    CUDA_TRY(cudaStreamSynchronize(s));
    gpu_idle_since = Clock::now();
    r.ok = c.check_full(d, 0) && r.ok;
  }
  std::sort(ms.begin(), ms.end());
  r.reps = (int)ms.size();
  r.us = ms[ms.size() / 2] * 1e3;
  r.gbps = bytes / (r.us * 1e3);
  r.gkeys = (double)d.n / (r.us * 1e3);
  return r;
}

void print_json(const Row &r) {
  std::printf("{\"algo\":\"%s\",\"type\":\"%s\",\"n\":%zu,\"resident\":\"device\",\"us\":%.3f,\"gbps\":%.4f,",
              r.algo.c_str(), type_name(r.type), r.n, r.us, r.gbps);
  if (r.keys) std::printf("\"gkeys\":%.4f,", r.gkeys);
  if (r.baseline.empty())
    std::printf("\"baseline\":null,\"ratio\":null,");
  else
    std::printf("\"baseline\":\"%s\",\"ratio\":%.4f,", r.baseline.c_str(), r.ratio);
  std::printf("\"ok\":%s}\n", r.ok ? "true" : "false");
  std::fflush(stdout);
}

int parse_log2(const char *flag, const char *v) {
  char *end;
  long k = std::strtol(v, &end, 10);
  if (*v == 0 || *end || k < MIN_LOG2 || k > 30) {
    std::fprintf(stderr, "cub_bench: %s wants an integer from %d to 30, not '%s'\n", flag, MIN_LOG2, v);
    std::exit(2);
  }
  return (int)k;
}

}  // namespace

int main(int argc, char **argv) {
  int min_log2 = MIN_LOG2, max_log2 = 28;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--max-log2") == 0 && i + 1 < argc) {
      max_log2 = parse_log2(argv[i], argv[i + 1]), ++i;
    } else if (std::strcmp(argv[i], "--min-log2") == 0 && i + 1 < argc) {
      min_log2 = parse_log2(argv[i], argv[i + 1]), ++i;
    } else {
      std::fprintf(stderr, "usage: cub_bench [--min-log2 N] [--max-log2 N]   (N: 10..30; default 10..28)\n"
                           "JSON lines on stdout (vkds-bench --algorithms --cub FILE reads them), a table on stderr.\n"
                           "Cases:");
      for (const Case &c : CASES) std::fprintf(stderr, " %s%s", c.algo, c.types == ONLY_U32 ? " (u32)" : "");
      std::fprintf(stderr, "\n");
      return std::strcmp(argv[i], "-h") == 0 || std::strcmp(argv[i], "--help") == 0 ? 0 : 2;
    }
  }
  cudaDeviceProp prop;
  CUDA_TRY(cudaGetDeviceProperties(&prop, 0));
  size_t free_bytes, total_bytes;
  CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  // One size's device data (device_bytes) in half the free memory.
  while (max_log2 > min_log2 && device_bytes(max_log2) > free_bytes / 2) --max_log2;
  uint64_t seed = (uint64_t)std::chrono::steady_clock::now().time_since_epoch().count();
  std::fprintf(stderr, "cub_bench: %s (sm_%d%d, %d SMs, %.0f MiB L2), CUDA runtime %d, CCCL %d.%d.%d; 2^%d..2^%d; seed 0x%016llx\n",
               prop.name, prop.major, prop.minor, prop.multiProcessorCount, prop.l2CacheSize / 1048576.0,
               CUDART_VERSION, CCCL_MAJOR_VERSION, CCCL_MINOR_VERSION, CCCL_PATCH_VERSION, min_log2, max_log2,
               (unsigned long long)seed);
  cudaStream_t stream;
  cudaEvent_t e0, e1;
  CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CUDA_TRY(cudaEventCreate(&e0));
  CUDA_TRY(cudaEventCreate(&e1));
  std::vector<Row> rows;
  bool all_ok = true;
  Clock::time_point start = Clock::now();
  for (int k = min_log2; k <= max_log2; ++k)
    for (Type t : {U32, F32}) {
      Data d;
      data_create(d, t, k, &seed);
      for (const Case &c : CASES)
        if (runs_on(c, d) && c.temp_bytes) d.temp_bytes = std::max(d.temp_bytes, c.temp_bytes(d));
      if (d.temp_bytes) CUDA_TRY(cudaMalloc(&d.d_temp, d.temp_bytes));
      size_t first = rows.size();
      for (const Case &c : CASES) {
        if (!runs_on(c, d)) continue;
        ensure_aux(d, c.aux);
        Row r = time_case(c, d, stream, e0, e1);
        for (size_t i = first; i < rows.size(); ++i)
          if (!r.baseline.empty() && rows[i].algo == r.baseline && rows[i].gbps > 0) r.ratio = r.gbps / rows[i].gbps;
        print_json(r);
        all_ok = all_ok && r.ok;
        rows.push_back(r);
      }
      data_destroy(d);
    }
  std::fprintf(stderr, "%-5s %-4s %-20s %12s %10s %8s %5s  %-9s %7s  %s\n", "n", "type", "algorithm", "us", "GB/s",
               "Gkeys/s", "runs", "baseline", "ratio", "check");
  for (const Row &r : rows) {
    char n[16], ratio[16], gkeys[16];
    std::snprintf(n, sizeof n, "2^%d", (int)std::log2((double)r.n));
    std::snprintf(ratio, sizeof ratio, r.baseline.empty() ? "-" : "%.3fx", r.ratio);
    std::snprintf(gkeys, sizeof gkeys, r.keys ? "%.2f" : "-", r.gkeys);
    std::fprintf(stderr, "%-5s %-4s %-20s %12.2f %10.1f %8s %5d  %-9s %7s  %s\n", n, type_name(r.type), r.algo.c_str(),
                 r.us, r.gbps, gkeys, r.reps, r.baseline.empty() ? "-" : r.baseline.c_str(), ratio,
                 r.ok ? "ok" : "FAIL");
  }
  std::fprintf(stderr, "cub_bench: %zu rows in %.1f s%s\n", rows.size(), ms_since(start) / 1e3,
               all_ok ? "" : "; some checks FAILED");
  CUDA_TRY(cudaEventDestroy(e0));
  CUDA_TRY(cudaEventDestroy(e1));
  CUDA_TRY(cudaStreamDestroy(stream));
  return all_ok ? 0 : 1;
}
