// shaders/algorithm/merge.glsl: the merge of two sorted sequences (lib/algorithm/merge.c),
// after order.glsl and merge_group.glsl. Appended by lib/algorithm/codegen.c after the code it generates:
//   P(k)                          launch parameter k (uint64_t); P(0) the output's count
//   IN0_T, in0(i); IN1_T, in1(i)  the sorted sequences a and b, read at random
//   OUT_T, out_st(i, v), out_vst(i, r)   the output, |a| + |b| elements
//   VKDS_KEY_TYPE                 a's vkds_type (b's and the output's too)
//   vkds_in0_of(x), vkds_out_of(x)   b's element as a's, a's as the output's
//   VKDS_LESS, vkds_less(a, b)    by a comparator (merge_by): a must come before b; else
//                                 in the sorts' order (order.glsl)
// P(1): |a| | descending << 62 (not by a comparator); P(2), P(4): the partition (below).
// Dispatched as 256 threads a 2048 outputs (merge.c).
//
// Stable: where elements are equal in the order, a's come first (each side keeps its
// own order). Merge path by work groups (merge_group.glsl, in front of this file): group
// g writes outputs [2048 g, 2048 g + 2048), its threads all finding both its ends on the
// diagonal by one loop of two binary searches.

#define VKDS_MERGE_COUNT 0x3ffffffffffffffful

shared IN0_T vkds_m[VKDS_SH_SLOTS(VKDS_MERGE_OUT)];

#ifdef VKDS_LESS
bool vkds_before(IN0_T x, IN0_T y) { return vkds_less(x, y); }
#else
bool vkds_before(IN0_T x, IN0_T y) { return vkds_ord(x) < vkds_ord(y); }
#endif
IN0_T vkds_left(uint64_t i) { return in0(i); }
IN0_T vkds_right(uint64_t i) { return vkds_in0_of(in1(i)); }
void vkds_out(uint64_t o, IN0_T v) { out_st(o, vkds_out_of(v)); }
void vkds_out4(uint64_t o, IN0_T v[4]) {
  OUT_T r[4];
  for (int k = 0; k < 4; ++k) r[k] = vkds_out_of(v[k]);
  out_vst(o, r);
}
IN0_T vkds_sh(uint x) { return vkds_m[VKDS_SH_AT(x)]; }
void vkds_sh_st(uint x, IN0_T v) { vkds_m[VKDS_SH_AT(x)] = v; }

// The partition (lib/algorithm/merge.c, large merges): group g's first output's place in
// a, 8 bytes a group from P(2), found before the merge by a thread a group. P(2) 0: each
// group finds both its ends itself.
layout(buffer_reference, std430, buffer_reference_align = 8) buffer vkds_merge_u64 { uint64_t v; };
#define VKDS_MERGE_PARTITION 1ul // P(4): this dispatch is the partition

void main() {
  uint64_t n = P(0), na = P(1) & VKDS_MERGE_COUNT, nb = n - na;
  if ((P(4) & VKDS_MERGE_PARTITION) != 0ul) {
    uint64_t g = vkds_global_index(), o = g * uint64_t(VKDS_MERGE_OUT);
    if (o < n) vkds_merge_u64(P(2) + 8ul * g).v = vkds_corank(o, na, nb);
    return;
  }
  uint t = gl_LocalInvocationIndex;
  uint64_t g = (vkds_global_index() - uint64_t(t)) / 256ul, g0 = g * uint64_t(VKDS_MERGE_OUT);
  if (g0 >= n) return; // the whole group
  uint64_t g1 = min(g0 + uint64_t(VKDS_MERGE_OUT), n), i0, i1;
  if (P(2) != 0ul) {
    i0 = vkds_merge_u64(P(2) + 8ul * g).v;
    i1 = g1 == n ? na : vkds_merge_u64(P(2) + 8ul * (g + 1ul)).v;
  } else {
    vkds_corank2(g0, g1, na, nb, i0, i1);
  }
  vkds_merge_group(g0, g0, i0, i1, uint(g1 - g0), na, nb);
}
