// shaders/algorithm/merge.glsl: the merge of two sorted sequences (lib/algorithm/merge.c),
// after order.glsl and merge_group.glsl. Appended by lib/algorithm/codegen.c after the code it generates:
//   P(k)                          launch parameter k (uint64_t); P(0) the output's count
//   IN0_T, in0(i); IN1_T, in1(i)  the sorted sequences a and b, read at random
//   OUT_T, out_st(i, v), out_vst(i, r)   the output, |a| + |b| elements
//   VKDS_KEY_TYPE                 a's vkds_type (b's and the output's too)
// P(1): |a| | descending << 62; P(4): the stage (merge.c): 0 the groups search where
// they start themselves; 1 a thread a group writes its group's start (how many of its
// first outputs come from a) at P(2) + 8 g; 2 the groups read them there. Dispatched as
// 256 threads a 2048 outputs, or a thread a group for stage 1 (merge.c).
//
// Stable: where elements are equal in the order, a's come first (each side keeps its
// own order). Merge path by work groups (merge_group.glsl, in front of this file): group
// g writes outputs [2048 g, 2048 g + 2048) from a's [i0, i1) and the rest of b's.

#define VKDS_MERGE_COUNT 0x3ffffffffffffffful
#define VKDS_MERGE_PARTITION 1ul
#define VKDS_MERGE_BOUNDS 2ul

layout(buffer_reference, std430, buffer_reference_align = 8) buffer vkds_merge_u64 { uint64_t v; };

shared IN0_T vkds_m[VKDS_MERGE_OUT];

bool vkds_before(IN0_T x, IN0_T y) { return vkds_ord(x) < vkds_ord(y); }
IN0_T vkds_left(uint64_t i) { return in0(i); }
IN0_T vkds_right(uint64_t i) { return IN0_T(in1(i)); }
void vkds_out(uint64_t o, IN0_T v) { out_st(o, OUT_T(v)); }
IN0_T vkds_sh(uint x) { return vkds_m[x]; }
void vkds_sh_st(uint x, IN0_T v) { vkds_m[x] = v; }

void main() {
  uint64_t n = P(0), na = P(1) & VKDS_MERGE_COUNT, nb = n - na;
  if ((P(4) & VKDS_MERGE_PARTITION) != 0ul) {
    uint64_t g = vkds_global_index(), o = g * uint64_t(VKDS_MERGE_OUT);
    if (o < n) vkds_merge_u64(P(2) + 8ul * g).v = vkds_corank(o, na, nb);
    return;
  }
  uint t = gl_LocalInvocationIndex;
  uint64_t g = (vkds_global_index() - uint64_t(t)) >> 8, g0 = g * uint64_t(VKDS_MERGE_OUT);
  if (g0 >= n) return; // the whole group
  uint64_t g1 = min(g0 + uint64_t(VKDS_MERGE_OUT), n), i0, i1;
  if ((P(4) & VKDS_MERGE_BOUNDS) != 0ul) {
    i0 = vkds_merge_u64(P(2) + 8ul * g).v;
    i1 = g1 == n ? na : vkds_merge_u64(P(2) + 8ul * (g + 1ul)).v;
  } else {
    vkds_corank2(g0, g1, na, nb, i0, i1);
  }
  vkds_merge_group(g0, g0, i0, i1, uint(g1 - g0));
}
