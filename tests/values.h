/* tests/values.h: the numeric types the algorithm tests run over, and one value of any
 * of them (header only: each suite gets its own copy of these small helpers). */
#ifndef VKDS_TEST_VALUES_H
#define VKDS_TEST_VALUES_H

#include <stdbool.h>
#include <stdint.h>
#include <vkds/vkds.h>

/* One value of any vkds numeric type; b: its bytes. */
typedef union val {
  int32_t i32;
  uint32_t u32;
  float f32;
  int64_t i64;
  uint64_t u64;
  double f64;
  unsigned char b[8];
} val;

/* Every numeric type, in vkds_type order. */
static const vkds_type TYPES[] = {VKDS_I32, VKDS_U32, VKDS_F32, VKDS_I64, VKDS_U64, VKDS_F64};

static inline const char *type_name(vkds_type t) {
  static const char *n[] = {"?", "i32", "u32", "f32", "i64", "u64", "f64"};
  return n[t];
}
static inline bool is_float(vkds_type t) { return t == VKDS_F32 || t == VKDS_F64; }
static inline bool is_signed(vkds_type t) { return t == VKDS_I32 || t == VKDS_I64; }
static inline uint32_t size_of(vkds_type t) { return vkds_type_size(t); }
/* The bits a value of type t has. */
static inline uint64_t type_mask(vkds_type t) { return size_of(t) == 4 ? 0xffffffffull : ~0ull; }

#endif
