// bench/cub/cub_bench.cu: the CUB baseline of `vkds-bench --algorithms` (bench/bench_algorithms.c).
//
// For 2^10 .. 2^max_log2 elements (--min-log2, --max-log2; 10 and 28 by default, lowered
// until the data fits in half the free device memory) of u32 and f32, each case of CASES
// below is timed on device-resident data and printed as one JSON object per line on
// stdout, the format vkds-bench --json writes:
//   {"algo":"cub_reduce","type":"u32","n":1024,"resident":"device","us":..,"gbps":..,
//    "baseline":"cub_copy","ratio":..,"ok":true}
// (a summary table goes to stderr). vkds-bench --algorithms --cub FILE reads these rows:
// cub_reduce is the baseline of its reductions; bench/plot_algorithms.py draws them.
//
// Method (the same as vkds-bench's, /work/.library/device/METHOD.md): inputs random (a
// new seed each run, printed; the generator and value ranges of vkds-bench: any u32, f32 in
// [-1, 1)); times from cudaEvents around each run on one stream, the median of REPS runs
// after WARMUP; the data rotates over up to MAX_SETS sets of buffers (ROTATE_BYTES
// together) so that sizes that fit in L2 are not timed from it; every CUDA call and
// launch checked; results checked against the host (u32 exactly, f32 within F32_TOLERANCE
// of the sum of magnitudes): scalar results after every run, arrays once more after the
// timed runs, into poisoned memory.
// GB/s: 10^9 bytes per second of the bytes the case must move (reduce reads n*4; copy
// and transform read and write 2*n*4). ratio: GB/s over the baseline row's (same type
// and size).
//
// Adding a case (DeviceScan::InclusiveSum, DeviceSelect::If, DeviceHistogram::
// HistogramEven, DeviceReduce::ReduceByKey, DeviceRadixSort::SortKeys/SortPairs,
// DeviceMergeSort::SortKeys): write its temp_bytes (ask CUB with a null temp pointer),
// run (enqueue on the stream, no sync) and check (after the run has finished; read the
// set's inputs from d.host_in[set] and the outputs back from the device), templated on the
// element type like the reduce functions, and add a row to CASES with the words it moves
// per element (scan 2, select 1 + what it writes, sort by its passes or 2 as the floor).
// Cases that need more arrays (keys and values, flags, selected counts) add them to Data:
// allocate in data_create, free in data_destroy.
//
// Build: bench/cub/build.sh (nvcc -arch=sm_90, static cudart) -> build-cub/cub_bench.
#include <cub/cub.cuh>
#include <cuda_runtime.h>

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
constexpr int WARMUP = 5;
constexpr int REPS = 30;
constexpr size_t ROTATE_BYTES = 128ull << 20;  // 2.5x an H100's L2 (50 MB)
constexpr int BLOCK = 256;
constexpr double F32_TOLERANCE = 1e-5;

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

// Any u32; an f32 in [-1, 1) on a 2^-23 grid (mixed signs, no denormals, no NaN).
uint32_t random_element(uint64_t *s, Type t) {
  uint32_t r = (uint32_t)(splitmix(s) >> 32);
  return t == U32 ? r : f32_bits((float)(r >> 8) * (1.0f / 8388608.0f) - 1.0f);
}

// ---- the data of one type and size ------------------------------------------------------

struct Data {
  Type type;
  size_t n, bytes;
  int sets;
  std::vector<uint32_t> host_in[MAX_SETS];  // the inputs' bits
  std::vector<uint32_t> host_out;           // arrays read back
  void *d_in[MAX_SETS] = {};
  void *d_out[MAX_SETS] = {};
  void *d_result = nullptr;  // scalar results (one element)
  void *d_temp = nullptr;    // CUB's temporary storage, the largest any case asked for
  size_t temp_bytes = 0;
};

int sets_for(size_t bytes) {
  size_t per_set = 2 * bytes;  // what one copy touches
  return (int)std::min<size_t>(MAX_SETS, (ROTATE_BYTES + per_set - 1) / per_set);
}

void data_create(Data &d, Type type, size_t n, uint64_t *seed) {
  d.type = type, d.n = n, d.bytes = n * 4, d.sets = sets_for(d.bytes);
  for (int s = 0; s < d.sets; ++s) {
    d.host_in[s].resize(n);
    for (size_t i = 0; i < n; ++i) d.host_in[s][i] = random_element(seed, type);
    CUDA_TRY(cudaMalloc(&d.d_in[s], d.bytes));
    CUDA_TRY(cudaMalloc(&d.d_out[s], d.bytes));
    CUDA_TRY(cudaMemcpy(d.d_in[s], d.host_in[s].data(), d.bytes, cudaMemcpyHostToDevice));
    CUDA_TRY(cudaMemset(d.d_out[s], 0xff, d.bytes));
  }
  d.host_out.resize(n);
  CUDA_TRY(cudaMalloc(&d.d_result, 16));
}

void data_destroy(Data &d) {
  for (int s = 0; s < d.sets; ++s) {
    CUDA_TRY(cudaFree(d.d_in[s]));
    CUDA_TRY(cudaFree(d.d_out[s]));
  }
  CUDA_TRY(cudaFree(d.d_result));
  CUDA_TRY(cudaFree(d.d_temp));
  d = Data{};
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

// ---- cases -------------------------------------------------------------------------------

struct Case {
  const char *algo;      // the JSON row's name
  const char *baseline;  // the row its ratio is against; nullptr: none
  int words;             // 32-bit words it must move per element
  bool scalar;           // its result is one value (checked after every run), else arrays
  size_t (*temp_bytes)(Data &d);                         // CUB's temporary storage; nullptr: none
  cudaError_t (*run)(Data &d, int set, cudaStream_t s);  // enqueues one run
  bool (*check)(Data &d, int set);                       // after a run on `set` finished
};

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

bool check_reduce(Data &d, int set) {
  uint32_t got;
  CUDA_TRY(cudaMemcpy(&got, d.d_result, 4, cudaMemcpyDeviceToHost));
  const std::vector<uint32_t> &in = d.host_in[set];
  bool ok;
  if (d.type == U32) {
    uint32_t sum = 0;
    for (uint32_t x : in) sum += x;
    ok = got == sum;
  } else {
    double sum = 0, scale = 0;
    for (uint32_t x : in) sum += as_f32(x), scale += std::fabs(as_f32(x));
    ok = std::fabs((double)as_f32(got) - sum) <= F32_TOLERANCE * scale + 1e-30;
  }
  if (!ok) std::fprintf(stderr, "cub_bench: cub_reduce %s n=%zu: wrong sum\n", type_name(d.type), d.n);
  return ok;
}

// The baseline first: later rows find it by name.
const Case CASES[] = {
    {"cub_copy", nullptr, 2, false, nullptr, run_copy, check_copy},
    {"cub_transform", "cub_copy", 2, false, nullptr, run_transform, check_transform},
    {"cub_reduce", "cub_copy", 1, true, temp_reduce, run_reduce, check_reduce},
};

// ---- timing and output -----------------------------------------------------------------------

struct Row {
  std::string algo, baseline;
  Type type;
  size_t n;
  double us, gbps, ratio;
  bool ok;
};

// Times one case on `d`: WARMUP runs, then REPS between two events each (median), the
// sets rotating; scalar results checked after every run (the check reads the device
// after the sync), arrays once more into poisoned memory.
Row time_case(const Case &c, Data &d, cudaStream_t s, cudaEvent_t e0, cudaEvent_t e1) {
  Row r{c.algo, c.baseline ? c.baseline : "", d.type, d.n, 0, 0, 0, true};
  std::vector<double> ms;
  for (int i = 0; i < WARMUP + REPS; ++i) {
    int set = i % d.sets;
    CUDA_TRY(cudaEventRecord(e0, s));
    CUDA_TRY(c.run(d, set, s));
    CUDA_TRY(cudaEventRecord(e1, s));
    CUDA_TRY(cudaEventSynchronize(e1));
    float t;
    CUDA_TRY(cudaEventElapsedTime(&t, e0, e1));
    if (i >= WARMUP) ms.push_back(t);
    if (c.scalar) r.ok = c.check(d, set) && r.ok;
  }
  if (!c.scalar) {
    CUDA_TRY(cudaMemsetAsync(d.d_out[0], 0xff, d.bytes, s));  // poison: 0xffffffff words, NaN as f32
    CUDA_TRY(c.run(d, 0, s));
    CUDA_TRY(cudaStreamSynchronize(s));
    r.ok = c.check(d, 0) && r.ok;
  }
  std::sort(ms.begin(), ms.end());
  r.us = ms[ms.size() / 2] * 1e3;
  r.gbps = (double)c.words * (double)d.bytes / (r.us * 1e3);
  return r;
}

void print_json(const Row &r) {
  std::printf("{\"algo\":\"%s\",\"type\":\"%s\",\"n\":%zu,\"resident\":\"device\",\"us\":%.3f,\"gbps\":%.4f,",
              r.algo.c_str(), type_name(r.type), r.n, r.us, r.gbps);
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
                           "JSON lines on stdout (vkds-bench --algorithms --cub FILE reads them), a table on stderr.\n");
      return std::strcmp(argv[i], "-h") == 0 || std::strcmp(argv[i], "--help") == 0 ? 0 : 2;
    }
  }
  cudaDeviceProp prop;
  CUDA_TRY(cudaGetDeviceProperties(&prop, 0));
  size_t free_bytes, total_bytes;
  CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  // One size's data: the sets' inputs and outputs (plus CUB's temporary storage, small
  // next to them) in half the free memory.
  while (max_log2 > min_log2 && (size_t)sets_for(4ull << max_log2) * 2 * (4ull << max_log2) > free_bytes / 2) --max_log2;
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
  for (int k = min_log2; k <= max_log2; ++k)
    for (Type t : {U32, F32}) {
      Data d;
      data_create(d, t, (size_t)1 << k, &seed);
      for (const Case &c : CASES)
        if (c.temp_bytes) d.temp_bytes = std::max(d.temp_bytes, c.temp_bytes(d));
      if (d.temp_bytes) CUDA_TRY(cudaMalloc(&d.d_temp, d.temp_bytes));
      size_t first = rows.size();
      for (const Case &c : CASES) {
        Row r = time_case(c, d, stream, e0, e1);
        for (size_t i = first; i < rows.size(); ++i)
          if (!r.baseline.empty() && rows[i].algo == r.baseline && rows[i].gbps > 0) r.ratio = r.gbps / rows[i].gbps;
        print_json(r);
        all_ok = all_ok && r.ok;
        rows.push_back(r);
      }
      data_destroy(d);
    }
  std::fprintf(stderr, "%-5s %-4s %-14s %12s %10s  %-9s %7s  %s\n", "n", "type", "algorithm", "us", "GB/s", "baseline",
               "ratio", "check");
  for (const Row &r : rows) {
    char n[16], ratio[16];
    std::snprintf(n, sizeof n, "2^%d", (int)std::log2((double)r.n));
    std::snprintf(ratio, sizeof ratio, r.baseline.empty() ? "-" : "%.3fx", r.ratio);
    std::fprintf(stderr, "%-5s %-4s %-14s %12.2f %10.1f  %-9s %7s  %s\n", n, type_name(r.type), r.algo.c_str(), r.us,
                 r.gbps, r.baseline.empty() ? "-" : r.baseline.c_str(), ratio, r.ok ? "ok" : "FAIL");
  }
  CUDA_TRY(cudaEventDestroy(e0));
  CUDA_TRY(cudaEventDestroy(e1));
  CUDA_TRY(cudaStreamDestroy(stream));
  return all_ok ? 0 : 1;
}
