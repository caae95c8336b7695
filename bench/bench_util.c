/* bench/bench_util.c: timing helpers the modes share. */
#include <stdlib.h>
#include <time.h>

#include "bench.h"

uint64_t bench_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double bench_median(double *samples, uint32_t n) {
  if (n == 0) return 0.0;
  qsort(samples, n, sizeof *samples, compare);
  return samples[n / 2];
}
