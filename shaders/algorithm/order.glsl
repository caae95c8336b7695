// shaders/algorithm/order.glsl: the sorts' order for the templates that compare elements
// of IN0_T (search.glsl, merge.glsl; codegen.c puts this file before them), given
// VKDS_KEY_TYPE, IN0_T's vkds_type. vkds_ord(x) is x's order-preserving bits (unsigned as
// they are, signed with the top bit flipped, floats in totalOrder: negative ones all
// flipped), reversed when P(1) has bit 62 (descending): x comes before y in the order
// exactly when vkds_ord(x) < vkds_ord(y), as in the radix sort (sort_tile.glsl). The
// searches and merges by a comparator (VKDS_LESS) compare by vkds_less instead.
layout(local_size_x = 256) in;

#define VKDS_ORDER_DESCENDING 0x4000000000000000ul

#if VKDS_KEY_TYPE >= 4
#define KW_T uint64_t
#define VKDS_KW_TOP 0x8000000000000000ul
#define VKDS_KW_MAX 0xfffffffffffffffful
#else
#define KW_T uint
#define VKDS_KW_TOP 0x80000000u
#define VKDS_KW_MAX 0xffffffffu
#endif

#ifndef VKDS_LESS // (by a comparator, vkds_less: IN0_T may be a record)
KW_T vkds_ord(IN0_T x) {
#if VKDS_KEY_TYPE == 1
  KW_T b = uint(x) ^ VKDS_KW_TOP;
#elif VKDS_KEY_TYPE == 2 || VKDS_KEY_TYPE == 5
  KW_T b = x;
#elif VKDS_KEY_TYPE == 3
  KW_T b = floatBitsToUint(x);
  b ^= (b & VKDS_KW_TOP) != 0u ? VKDS_KW_MAX : VKDS_KW_TOP;
#elif VKDS_KEY_TYPE == 4
  KW_T b = uint64_t(x) ^ VKDS_KW_TOP;
#else
  KW_T b = pack64(unpackDouble2x32(x));
  b ^= (b & VKDS_KW_TOP) != 0ul ? VKDS_KW_MAX : VKDS_KW_TOP;
#endif
  return (P(1) & VKDS_ORDER_DESCENDING) != 0ul ? ~b : b;
}
#endif
