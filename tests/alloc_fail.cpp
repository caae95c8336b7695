// tests/alloc_fail.cpp: fails the Nth host allocation made from inside libvkds (its own
// code and the C++ libraries linked into it: glslang, SPIRV-Tools), for test_alloc_fail.c.
// The test executable defines malloc, calloc, realloc, aligned_alloc, strdup and the C++
// allocation operators, so every caller's allocation comes here; a call whose return
// address lies in libvkds.so counts, and the armed one fails (NULL, or std::bad_alloc
// from operator new) once. Everything else goes to glibc's allocator. Allocations of
// the Vulkan loader, the driver and the validation layer are not counted: their
// failures are theirs. What libvkds allocated and has not freed is tracked (a table of
// pointers), so that a test can see a failed call leak.
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <new>

#include <link.h>
#include <pthread.h>

#include "alloc_fail.h"

extern "C" {
void *__libc_malloc(size_t);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);
void *__libc_memalign(size_t, size_t);
void __libc_free(void *);
}

namespace {
uintptr_t vkds_lo, vkds_hi;           // libvkds.so's loaded segments
std::atomic<long> counted{0};          // allocations from libvkds since alloc_fail_arm
std::atomic<long> target{-1};          // the one to fail (index into counted); -1: none
std::atomic<bool> fired{false};

int find_vkds(struct dl_phdr_info *info, size_t, void *) {
  if (!info->dlpi_name || !std::strstr(info->dlpi_name, "libvkds.so")) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD) continue;
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
    if (!vkds_lo || lo < vkds_lo) vkds_lo = lo;
    if (hi > vkds_hi) vkds_hi = hi;
  }
  return 1;
}

// Whether this allocation (called from `ret`) must fail.
// The pointers libvkds holds: open addressing, linear probing, no deletion marks needed
// for a table this sparse (entries are moved back on removal). A life cycle holds about
// 11,000 at most. Small on purpose: each of test_alloc_fail's runs is a forked child
// whose first write to each page of the table copies it, and a 16 MiB table (2^21
// slots) made that a third of the sweep's time.
constexpr int kBits = 16;
constexpr size_t kSlots = size_t(1) << kBits;
void *held[kSlots];
long held_count;
pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;

size_t slot_of(void *p) { return (reinterpret_cast<uintptr_t>(p) >> 4) * 0x9E3779B97F4A7C15ull >> (64 - kBits); }

void hold(void *p) {
  if (!p) return;
  pthread_mutex_lock(&held_lock);
  if (held_count < long(kSlots / 2)) {
    size_t i = slot_of(p) & (kSlots - 1);
    while (held[i]) i = (i + 1) & (kSlots - 1);
    held[i] = p;
    ++held_count;
  }
  pthread_mutex_unlock(&held_lock);
}

void release(void *p) {
  if (!p) return;
  pthread_mutex_lock(&held_lock);
  size_t i = slot_of(p) & (kSlots - 1);
  while (held[i] && held[i] != p) i = (i + 1) & (kSlots - 1);
  if (held[i]) {
    held[i] = nullptr;
    --held_count;
    // move back the entries after it that probed past this slot
    for (size_t j = (i + 1) & (kSlots - 1); held[j]; j = (j + 1) & (kSlots - 1)) {
      void *q = held[j];
      held[j] = nullptr;
      size_t k = slot_of(q) & (kSlots - 1);
      while (held[k]) k = (k + 1) & (kSlots - 1);
      held[k] = q;
    }
  }
  pthread_mutex_unlock(&held_lock);
}

bool from_vkds(void *ret) {
  uintptr_t a = reinterpret_cast<uintptr_t>(ret);
  return a >= vkds_lo && a < vkds_hi;
}

bool fail_now(void *ret) {
  uintptr_t a = reinterpret_cast<uintptr_t>(ret);
  if (a < vkds_lo || a >= vkds_hi) return false;
  long k = counted.fetch_add(1);
  if (k != target.load()) return false;
  fired = true;
  return true;
}
}  // namespace

extern "C" void alloc_fail_arm(long n) {
  if (!vkds_lo) dl_iterate_phdr(find_vkds, nullptr);
  fired = false;
  counted = 0;
  target = n;
}
extern "C" long alloc_fail_counted(void) { return counted.load(); }
extern "C" bool alloc_fail_fired(void) { return fired.load(); }
extern "C" long alloc_fail_held(void) {
  pthread_mutex_lock(&held_lock);
  long n = held_count;
  pthread_mutex_unlock(&held_lock);
  return n;
}
extern "C" bool alloc_fail_ready(void) {
  if (!vkds_lo) dl_iterate_phdr(find_vkds, nullptr);
  return vkds_lo != 0;
}

#define CALLER __builtin_return_address(0)

// What an allocation from `ret` returned: kept when it is libvkds's.
static void *track(void *ret, void *p) {
  if (p && from_vkds(ret)) hold(p);
  return p;
}

extern "C" void *malloc(size_t n) {
  if (fail_now(CALLER)) return errno = ENOMEM, nullptr;
  return track(CALLER, __libc_malloc(n));
}
extern "C" void *calloc(size_t n, size_t size) {
  if (fail_now(CALLER)) return errno = ENOMEM, nullptr;
  return track(CALLER, __libc_calloc(n, size));
}
extern "C" void *realloc(void *p, size_t n) {
  if (fail_now(CALLER)) return errno = ENOMEM, nullptr;
  void *q = __libc_realloc(p, n);
  if (q || n == 0) release(p);
  return track(CALLER, q);
}
extern "C" void *aligned_alloc(size_t align, size_t n) {
  if (fail_now(CALLER)) return errno = ENOMEM, nullptr;
  return track(CALLER, __libc_memalign(align, n));
}
extern "C" int posix_memalign(void **out, size_t align, size_t n) {
  if (fail_now(CALLER)) return ENOMEM;
  void *p = __libc_memalign(align, n);
  if (!p) return ENOMEM;
  *out = track(CALLER, p);
  return 0;
}
extern "C" void free(void *p) {
  release(p);
  __libc_free(p);
}
extern "C" char *strdup(const char *s) {
  if (fail_now(CALLER)) return errno = ENOMEM, nullptr;
  size_t n = std::strlen(s) + 1;
  char *d = static_cast<char *>(__libc_malloc(n));
  if (d) std::memcpy(d, s, n);
  return static_cast<char *>(track(CALLER, d));
}

static void *new_or_throw(void *ret, size_t n) {
  if (fail_now(ret)) throw std::bad_alloc();
  void *p = __libc_malloc(n ? n : 1);
  if (!p) throw std::bad_alloc();
  return track(ret, p);
}
static void *new_or_null(void *ret, size_t n) {
  if (fail_now(ret)) return nullptr;
  return track(ret, __libc_malloc(n ? n : 1));
}
void *operator new(size_t n) { return new_or_throw(CALLER, n); }
void *operator new[](size_t n) { return new_or_throw(CALLER, n); }
void *operator new(size_t n, const std::nothrow_t &) noexcept { return new_or_null(CALLER, n); }
void *operator new[](size_t n, const std::nothrow_t &) noexcept { return new_or_null(CALLER, n); }
void *operator new(size_t n, std::align_val_t a) {
  if (fail_now(CALLER)) throw std::bad_alloc();
  void *p = __libc_memalign(static_cast<size_t>(a), n ? n : 1);
  if (!p) throw std::bad_alloc();
  return track(CALLER, p);
}
void operator delete(void *p) noexcept { free(p); }
void operator delete[](void *p) noexcept { free(p); }
void operator delete(void *p, size_t) noexcept { free(p); }
void operator delete[](void *p, size_t) noexcept { free(p); }
void operator delete(void *p, std::align_val_t) noexcept { free(p); }
void operator delete(void *p, size_t, std::align_val_t) noexcept { free(p); }
