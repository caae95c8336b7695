/* lib/algorithm/codegen.c: an algorithm call, as GLSL for one device.
 *
 * Views are code, not copies. Every sequence becomes a node with GLSL functions named
 * after it (s<k>: element i; s<k>_v: elements i..i+3, i a multiple of 4; s<k>_st,
 * s<k>_vst: stores): a buffer, mapped or host sequence is a leaf (memory, read 16 bytes
 * at a time where its start allows), a reverse calls its base at n-1-i, a permutation
 * its source at map[i], a transform applies its compiled operator, a zip builds a
 * struct, counting computes, discard drops, and a user type with device code runs its
 * own snippet over its parts. Only leaves become memory the frame binds (directly, or
 * staged); nothing is gathered on the host.
 *
 * How leaves are reached is a rule per device, chosen once (vkds__device_facts.
 * prefers_descriptors): through their device addresses (GL_EXT_buffer_reference), which
 * run at full bandwidth on GPUs, or, on a CPU device, bound as storage buffers: lavapipe
 * loads through a buffer reference lane by lane with 64-bit address arithmetic, ~3.5x
 * slower than through a descriptor. VKDS_ALGORITHM_ACCESS=descriptor|address overrides
 * the rule (tests, benchmarks); descriptors need push descriptors enabled. A bound leaf
 * is a `uvec4 v[]` block at set 0, binding <its leaf index>, pushed at each dispatch
 * (vkds__args: the parameters, then the views); its binding starts where its memory
 * does, aligned down to minStorageBufferOffsetAlignment, and its parameter holds the
 * word it starts at there, so index arithmetic stays 32-bit. A leaf that one binding
 * cannot hold (past maxStorageBufferRange), an empty one, or one past the stage's
 * storage buffers is reached through its address in that call; which leaves are bound
 * is part of the signature, so both kernels coexist.
 *
 * A CPU device runs both sides of every branch (lavapipe masks lanes; it does not
 * jump), so bound leaves and the templates leave out the code a call cannot take:
 * whether a bound leaf starts 16-byte aligned in its binding is known once it is placed
 * (vkds__gen_aligned), and only that path (16-byte or element by element) is emitted;
 * a count that is a multiple of 4 leaves out the templates' partial last run
 * (VKDS_WHOLE_RUNS). Both are in the signature. Addresses keep their run-time check.
 * Counts up to 2^31 keep the templates' index arithmetic 32-bit (VKDS_IDX), and on a
 * CPU device a reduction's threads fold contiguous ranges (VKDS_CONTIGUOUS).
 *
 * One walk over the call gives the signature (everything the code depends on: the
 * kernel cache's key), the launch parameters (addresses, counts, values: they vary
 * without changing the code) and the leaves; the walk writes the source only when
 * `emit` is set, on a cache miss, so a cached call costs a few hundred bytes of
 * signature. The bound leaves' alignment completes the signature after binding.
 *
 * The source is laid out: vkds.glsl and the parameter block, type declarations and
 * prototypes (head), the nodes' functions (body), the algorithm's names for its inputs,
 * the template (shaders/algorithm/), and last the user's snippets (tail). Each snippet
 * sits after a `#line 1 <1000 + k>` directive, so glslang reports its errors as
 * source string 1000 + k, line 1.. of the snippet, and kernels.c can name the snippet;
 * with nothing generated after the tail, no other line number moves. */
#include "algorithm_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- growing text ---- */

struct vkds__text {
  const vkds_context *ctx; /* whose allocator s comes from */
  char *s;
  size_t len, cap;
  bool failed;
};

static void put(struct vkds__text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct vkds__text *t, const char *fmt, ...) {
  if (!t || t->failed) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? t->cap - t->len : 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
      t->failed = true;
      return;
    }
    if (t->s && t->len + (size_t)n < t->cap) {
      t->len += (size_t)n;
      return;
    }
    size_t cap = t->cap ? t->cap * 2 : 4096;
    while (cap <= t->len + (size_t)n) cap *= 2;
    char *s = vkds__realloc(t->ctx, t->s, cap);
    if (!s) {
      t->failed = true;
      return;
    }
    t->s = s, t->cap = cap;
  }
}

static void text_free(const vkds_context *ctx, struct vkds__text *t) {
  if (t) vkds__free(ctx, t->s);
  vkds__free(ctx, t);
}

/* The context whose allocator the generator's memory comes from. */
static const vkds_context *gen_ctx(const vkds__gen *g) { return g->res ? g->res->dev->ctx : NULL; }

/* ---- types ---- */

const char *vkds__glsl_type(vkds_type t) {
  switch (t) {
  case VKDS_I32: return "int";
  case VKDS_U32: return "uint";
  case VKDS_F32: return "float";
  case VKDS_I64: return "int64_t";
  case VKDS_U64: return "uint64_t";
  case VKDS_F64: return "double";
  default: return NULL;
  }
}

bool vkds__type_is_float(vkds_type t) { return t == VKDS_F32 || t == VKDS_F64; }

/* The GLSL expression turning 64 bits `bits` into a value of type t. */
static void from_bits(struct vkds__text *o, vkds_type t, const char *bits) {
  switch (t) {
  case VKDS_I32: put(o, "int(uint(%s))", bits); break;
  case VKDS_U32: put(o, "uint(%s)", bits); break;
  case VKDS_F32: put(o, "uintBitsToFloat(uint(%s))", bits); break;
  case VKDS_I64: put(o, "int64_t(%s)", bits); break;
  case VKDS_U64: put(o, "(%s)", bits); break;
  default: put(o, "uint64BitsToDouble(%s)", bits); break;
  }
}

/* One element from a word (4-byte types, w is a uint) or two (8-byte, w is a uvec2). */
static void decode(struct vkds__text *o, vkds_type t, const char *w) {
  switch (t) {
  case VKDS_I32: put(o, "int(%s)", w); break;
  case VKDS_U32: put(o, "%s", w); break;
  case VKDS_F32: put(o, "uintBitsToFloat(%s)", w); break;
  case VKDS_I64: put(o, "int64_t(pack64(%s))", w); break;
  case VKDS_U64: put(o, "pack64(%s)", w); break;
  default: put(o, "packDouble2x32(%s)", w); break;
  }
}

/* The word(s) of one element (uint for 4-byte types, uvec2 for 8-byte). */
static void encode(struct vkds__text *o, vkds_type t, const char *v) {
  switch (t) {
  case VKDS_I32: put(o, "uint(%s)", v); break;
  case VKDS_U32: put(o, "%s", v); break;
  case VKDS_F32: put(o, "floatBitsToUint(%s)", v); break;
  case VKDS_I64: put(o, "unpack32(uint64_t(%s))", v); break;
  case VKDS_U64: put(o, "unpack32(%s)", v); break;
  default: put(o, "unpackDouble2x32(%s)", v); break;
  }
}

/* ---- the walk's bookkeeping ---- */

static vkds_result gen_fail(vkds__gen *g, vkds_result r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static vkds_result gen_fail(vkds__gen *g, vkds_result r, const char *fmt, ...) {
  if (g->error != VKDS_SUCCESS) return g->error;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  g->error = vkds__fail(g->res->dev->ctx, r, VK_SUCCESS, "%s: %s", g->name, msg);
  return g->error;
}

/* The signature's bytes go into g->sig_inline first, onto the heap only past it: every
 * call builds one, and its malloc and free were a few percent of a blocking call's host
 * work. The append is inline (a word's memcpy becomes a store; a call to a general append
 * per word was 0.75k of a blocking call's host instructions); growing is not. */
static bool sig_grow(vkds__gen *g, size_t n) {
  if (!g->sig) g->sig = g->sig_inline, g->sig_cap = sizeof g->sig_inline;
  if (g->sig_len + n <= g->sig_cap) return true;
  size_t cap = g->sig_cap * 2;
  while (cap < g->sig_len + n) cap *= 2;
  bool inline_now = g->sig == g->sig_inline;
  unsigned char *s = vkds__realloc(gen_ctx(g), inline_now ? NULL : g->sig, cap);
  if (!s) {
    gen_fail(g, VKDS_ERROR_OUT_OF_HOST_MEMORY, "algorithm signature");
    return false;
  }
  if (inline_now) memcpy(s, g->sig_inline, g->sig_len);
  g->sig = s, g->sig_cap = cap;
  return true;
}
static inline void sig_bytes(vkds__gen *g, const void *p, size_t n) {
  if ((!g->sig || g->sig_len + n > g->sig_cap) && !sig_grow(g, n)) return;
  memcpy(g->sig + g->sig_len, p, n);
  g->sig_len += n;
}
static void sig_u32(vkds__gen *g, uint32_t v) { sig_bytes(g, &v, sizeof v); }
static void sig_str(vkds__gen *g, const char *s) {
  uint32_t n = s ? (uint32_t)strlen(s) : UINT32_MAX;
  sig_u32(g, n);
  if (s) sig_bytes(g, s, n);
}

static uint32_t param(vkds__gen *g, uint64_t value) {
  if (g->param_count >= VKDS__GEN_MAX_PARAMS) {
    gen_fail(g, VKDS_ERROR_UNSUPPORTED,
             "the sequences need more than %d launch parameters (views nested too deeply for one kernel)",
             VKDS__GEN_MAX_PARAMS - VKDS__GEN_HEADER);
    return 0;
  }
  g->args.p[g->param_count] = value;
  return g->param_count++;
}

static void use_type(vkds__gen *g, vkds_type t) {
  g->types_used |= 1u << t;
  if (t == VKDS_F64) g->needs_float64 = true;
  if (t == VKDS_I64 || t == VKDS_U64) g->needs_int64 = true;
}

/* A snippet of the user's, in the tail between `before` and `after` (generated code),
 * on lines of its own after a #line that names it: its first line is line 1 of source
 * string 1000 + k. */
static void snippet(vkds__gen *g, const char *role, const char *before, const char *text, const char *after) {
  /* an expression left blank: named as such (glslang's word for it was "'constructor' :
   * not enough data provided for construction"); a sequence's device code is statements,
   * which may be none */
  bool blank = true;
  for (const char *c = text; *c && blank; ++c) blank = *c == ' ' || *c == '\t' || *c == '\n' || *c == '\r';
  if (blank && strncmp(role, "sequence", 8) != 0) {
    gen_fail(g, VKDS_ERROR_COMPILE, "the %s is empty: a GLSL expression is needed", role);
    return;
  }
  uint32_t k = g->snippet_count < 64 ? g->snippet_count++ : 63;
  g->snippets[k] = text;
  g->snippet_roles[k] = role;
  /* an empty line after it: a `//` comment ending in a backslash continued onto the
   * generated `after` (a views probe) */
  put(g->tail, "%s\n#line 1 %u\n%s\n\n%s\n", before, 1000 + k, text, after);
}

/* ---- nodes ---- */

typedef struct node {
  uint32_t id;
  vkds_type type;    /* COMPOSITE for a zip */
  char glsl[24];     /* its GLSL type */
  bool readable, writable;
} node;

static node walk(vkds__gen *g, const vkds_seq *s, vkds_access access, uint32_t depth);

static void node_type(node *n, vkds_type t, uint32_t id) {
  n->type = t;
  if (t == VKDS_TYPE_COMPOSITE) snprintf(n->glsl, sizeof n->glsl, "vkds_z%u", id);
  else snprintf(n->glsl, sizeof n->glsl, "%s", vkds__glsl_type(t));
}

/* Declares the functions a node defines. */
static void prototypes(vkds__gen *g, const node *n) {
  if (n->readable) {
    put(g->head, "%s s%u(uint64_t i);\n", n->glsl, n->id);
    put(g->head, "void s%u_v(uint64_t i, out %s r[4]);\n", n->id, n->glsl);
  }
  if (n->writable) {
    put(g->head, "void s%u_st(uint64_t i, %s v);\n", n->id, n->glsl);
    put(g->head, "void s%u_vst(uint64_t i, %s r[4]);\n", n->id, n->glsl);
  }
}

/* Four elements one at a time, for nodes without a faster way. */
static void generic_vector(vkds__gen *g, const node *n) {
  if (n->readable)
    put(g->body, "void s%u_v(uint64_t i, out %s r[4]) { for (int q = 0; q < 4; ++q) r[q] = s%u(i + uint64_t(q)); }\n",
        n->id, n->glsl, n->id);
  if (n->writable)
    put(g->body, "void s%u_vst(uint64_t i, %s r[4]) { for (int q = 0; q < 4; ++q) s%u_st(i + uint64_t(q), r[q]); }\n",
        n->id, n->glsl, n->id);
}

/* Whether leaf `s` is bound as a storage buffer (the device's rule: the top of this
 * file) rather than reached through its address. Only where one binding holds it
 * wherever it lands (aligning its start down to minStorageBufferOffsetAlignment adds less
 * than that alignment), it is not empty (a descriptor needs a buffer), and the stage has
 * a binding left; otherwise the call reaches that leaf through its address. */
static bool binds(const vkds__gen *g, const vkds_seq *s) {
  const VkPhysicalDeviceLimits *lim = &g->res->dev->facts.props.properties.limits;
  uint64_t bytes = s->count * s->elem_size;
  return g->descriptors && bytes > 0 && bytes + lim->minStorageBufferOffsetAlignment <= lim->maxStorageBufferRange &&
         g->bound_count < lim->maxPerStageDescriptorStorageBuffers;
}

/* How a leaf's vector functions reach a run of 4 elements. The templates call them at
 * multiples of 4 elements, so every run is whole 16-byte groups when the leaf's start
 * is 16-byte aligned. */
typedef struct leaf_mem {
  char at[96];       /* a statement locating the run at element i */
  char aligned[48];  /* the condition that the leaf's start is 16-byte aligned; "": known to be */
  char group[2][48]; /* the run's 16-byte group h, a uvec4 lvalue */
} leaf_mem;

/* Through the device address in P(p), whose alignment the code checks. */
static leaf_mem address_mem(uint32_t p, uint32_t size) {
  leaf_mem m;
  snprintf(m.at, sizeof m.at, "uint64_t a = P(%u) + i * %uul;", p, size);
  snprintf(m.aligned, sizeof m.aligned, "(P(%u) & 15ul) == 0ul", p);
  snprintf(m.group[0], sizeof m.group[0], "vkds_p_uvec4(a).v");
  snprintf(m.group[1], sizeof m.group[1], "vkds_p_uvec4(a + 16ul).v");
  return m;
}

/* Through binding b, from word P(p) of it (known to be a multiple of 4), in 32-bit
 * arithmetic (a binding holds less than 4 GiB). */
static leaf_mem bound_mem(uint32_t b, uint32_t p, uint32_t size) {
  leaf_mem m;
  snprintf(m.at, sizeof m.at, "uint run = (uint(P(%u)) + uint(i) * %uu) >> 2;", p, size / 4);
  m.aligned[0] = 0;
  snprintf(m.group[0], sizeof m.group[0], "vkds_b%u.v[run]", b);
  snprintf(m.group[1], sizeof m.group[1], "vkds_b%u.v[run + 1u]", b);
  return m;
}

/* Element functions of a bound leaf: word j of binding b is component j & 3 of its
 * uvec4 j >> 2; an 8-byte element is words j and j + 1. */
static void bound_scalar(vkds__gen *g, const node *n, const vkds_seq *s, uint32_t b, uint32_t p) {
  const char *T = n->glsl;
  uint32_t k = n->id;
  bool wide = vkds_type_size(s->type) == 8;
  char word[2][48], locate[96];
  snprintf(word[0], sizeof word[0], "vkds_b%u.v[j >> 2][j & 3u]", b);
  snprintf(word[1], sizeof word[1], "vkds_b%u.v[j1 >> 2][j1 & 3u]", b);
  if (wide) snprintf(locate, sizeof locate, "uint j = uint(P(%u)) + uint(i) * 2u, j1 = j + 1u;", p);
  else snprintf(locate, sizeof locate, "uint j = uint(P(%u)) + uint(i);", p);
  char both[112];
  snprintf(both, sizeof both, "uvec2(%s, %s)", word[0], word[1]);
  if (n->readable) {
    put(g->body, "%s s%u(uint64_t i) { %s return ", T, k, locate);
    decode(g->body, s->type, wide ? both : word[0]);
    put(g->body, "; }\n");
  }
  if (n->writable) {
    put(g->body, "void s%u_st(uint64_t i, %s v) { %s ", k, T, locate);
    if (wide) {
      put(g->body, "uvec2 w = "), encode(g->body, s->type, "v");
      put(g->body, "; %s = w.x; %s = w.y; }\n", word[0], word[1]);
    } else {
      put(g->body, "%s = ", word[0]), encode(g->body, s->type, "v"), put(g->body, "; }\n");
    }
  }
}

/* Element functions of a leaf reached through its address. */
static void address_scalar(vkds__gen *g, const node *n, const vkds_seq *s, uint32_t p) {
  const char *T = n->glsl;
  uint32_t size = vkds_type_size(s->type), k = n->id;
  if (n->readable) put(g->body, "%s s%u(uint64_t i) { return vkds_p_%s(P(%u) + i * %uul).v; }\n", T, k, T, p, size);
  if (n->writable) put(g->body, "void s%u_st(uint64_t i, %s v) { vkds_p_%s(P(%u) + i * %uul).v = v; }\n", k, T, T, p, size);
}

/* The vector functions of a leaf: 16 bytes at a time (when its start is aligned, if
 * that is checked here), else element by element. */
static void leaf_vector(vkds__gen *g, const node *n, const vkds_seq *s, const leaf_mem *m) {
  uint32_t k = n->id;
  bool wide = vkds_type_size(s->type) == 8, checked = m->aligned[0] != 0;
  const char *in = checked ? "    " : "  ";
  if (n->readable) {
    put(g->body, "void s%u_v(uint64_t i, out %s r[4]) {\n  %s\n", k, n->glsl, m->at);
    if (checked) put(g->body, "  if (%s) {\n", m->aligned);
    static const char *narrow_lanes[] = {"w0.x", "w0.y", "w0.z", "w0.w"}, *wide_lanes[] = {"w0.xy", "w0.zw", "w1.xy", "w1.zw"};
    put(g->body, "%suvec4 w0 = %s", in, m->group[0]);
    if (wide) put(g->body, ", w1 = %s", m->group[1]);
    put(g->body, ";\n");
    for (int q = 0; q < 4; ++q)
      put(g->body, "%sr[%d] = ", in, q), decode(g->body, s->type, (wide ? wide_lanes : narrow_lanes)[q]), put(g->body, ";\n");
    if (checked) put(g->body, "  } else {\n    for (int q = 0; q < 4; ++q) r[q] = s%u(i + uint64_t(q));\n  }\n", k);
    put(g->body, "}\n");
  }
  if (n->writable) {
    put(g->body, "void s%u_vst(uint64_t i, %s r[4]) {\n  %s\n", k, n->glsl, m->at);
    if (checked) put(g->body, "  if (%s) {\n", m->aligned);
    static const char *v[] = {"r[0]", "r[1]", "r[2]", "r[3]"};
    for (int h = 0; h < (wide ? 2 : 1); ++h) {
      put(g->body, "%s%s = uvec4(", in, m->group[h]);
      for (int q = 0; q < (wide ? 2 : 4); ++q) put(g->body, q ? ", " : ""), encode(g->body, s->type, v[(wide ? 2 * h : 0) + q]);
      put(g->body, ");\n");
    }
    if (checked) put(g->body, "  } else {\n    for (int q = 0; q < 4; ++q) s%u_st(i + uint64_t(q), r[q]);\n  }\n", k);
    put(g->body, "}\n");
  }
}

/* Memory: a buffer, mapped or host sequence (or a user type staged whole), bound as a
 * storage buffer or reached through its device address (binds()). */
static node leaf(vkds__gen *g, const vkds_seq *s, vkds_access access) {
  /* a sort moves its keys and values as bits (sort.c): one kernel per element size */
  const vkds_seq *orig = s;
  vkds_seq as_bits;
  if (g->sort_bits && access != VKDS_ACCESS_READ && vkds__glsl_type(s->type)) {
    as_bits = *s;
    as_bits.type = vkds_type_size(s->type) == 8 ? VKDS_U64 : VKDS_U32;
    s = &as_bits;
  }
  node n = {.id = g->next_node++, .readable = access != VKDS_ACCESS_WRITE, .writable = access != VKDS_ACCESS_READ};
  node_type(&n, s->type, n.id);
  if (!vkds__glsl_type(s->type)) {
    gen_fail(g, VKDS_ERROR_INVALID_ARGUMENT, "a %s sequence of element type %s: algorithms take I32, U32, F32, I64, U64 "
             "and F64 elements", s->ops->name, vkds__type_name(s->type));
    return n;
  }
  if (g->leaf_count >= VKDS__GEN_MAX_LEAVES) {
    gen_fail(g, VKDS_ERROR_UNSUPPORTED, "more than %d memory ranges (leaves: buffers, host arrays, a zip's parts) in "
             "one algorithm call", VKDS__GEN_MAX_LEAVES);
    return n;
  }
  uint32_t p = param(g, 0); /* the address or first word, filled in when the leaf is bound */
  if ((s->ops == &vkds_seq_buffer_ops || s->ops == &vkds_seq_mapped_ops) && s->buffer->dev != g->res->dev)
    g->streamable = false; /* another device's buffer is staged whole */
  if (s->ops != &vkds_seq_buffer_ops && s->ops != &vkds_seq_mapped_ops && s->ops != &vkds_seq_host_ops)
    g->streamable = false; /* a user type staged through its host reads */
  uint32_t b = g->leaf_count; /* its binding, when bound */
  bool bound = binds(g, s);
  g->bound_count += bound;
  g->leaves[g->leaf_count++] = (vkds__leaf){.seq = orig, .access = access, .param = p, .bound = bound};
  use_type(g, s->type);
  sig_u32(g, 'L'), sig_u32(g, s->type), sig_u32(g, access), sig_u32(g, bound);
  if (!g->emit) return n;
  prototypes(g, &n);
  uint32_t size = vkds_type_size(s->type);
  if (bound) {
    /* where the leaf starts in its binding is known (vkds__gen_build's `aligned`): only
     * the path it takes is emitted, since a CPU device runs both sides of a branch */
    const char *only = access == VKDS_ACCESS_READ ? "readonly " : access == VKDS_ACCESS_WRITE ? "writeonly " : "";
    put(g->head, "layout(std430, set = 0, binding = %u) %sbuffer vkds_B%u { uvec4 v[]; } vkds_b%u;\n", b, only, b, b);
    bound_scalar(g, &n, s, b, p);
    leaf_mem m = bound_mem(b, p, size);
    if (g->aligned >> b & 1) leaf_vector(g, &n, s, &m);
    else generic_vector(g, &n);
  } else {
    address_scalar(g, &n, s, p);
    leaf_mem m = address_mem(p, size);
    leaf_vector(g, &n, s, &m);
  }
  return n;
}

static node counting(vkds__gen *g, const vkds_seq *s) {
  node n = {.id = g->next_node++, .readable = true};
  node_type(&n, s->type, n.id);
  uint32_t p = param(g, (uint64_t)s->start);
  g->param_role[p] = VKDS__ROLE_COUNTING;
  sig_u32(g, 'C'), sig_u32(g, s->type);
  if (!g->emit) return n;
  prototypes(g, &n);
  put(g->body, "%s s%u(uint64_t i) { return %s(int64_t(P(%u)) + int64_t(i)); }\n", n.glsl, n.id, n.glsl, p);
  generic_vector(g, &n);
  return n;
}

static node discard(vkds__gen *g, const vkds_seq *s) {
  node n = {.id = g->next_node++, .writable = true};
  node_type(&n, s->type, n.id);
  sig_u32(g, 'D'), sig_u32(g, s->type);
  if (!g->emit) return n;
  prototypes(g, &n);
  put(g->body, "void s%u_st(uint64_t i, %s v) {}\nvoid s%u_vst(uint64_t i, %s r[4]) {}\n", n.id, n.glsl, n.id, n.glsl);
  return n;
}

static node reverse(vkds__gen *g, const vkds_seq *s, vkds_access access, uint32_t depth) {
  g->streamable = false; /* element i is base element n-1-i */
  sig_u32(g, 'R');
  node b = walk(g, s->base, access, depth + 1);
  node n = {.id = g->next_node++, .type = b.type, .readable = b.readable, .writable = b.writable};
  memcpy(n.glsl, b.glsl, sizeof n.glsl);
  uint32_t p = param(g, s->count);
  if (!g->emit) return n;
  prototypes(g, &n);
  if (n.readable) put(g->body, "%s s%u(uint64_t i) { return s%u(P(%u) - 1ul - i); }\n", n.glsl, n.id, b.id, p);
  if (n.writable) put(g->body, "void s%u_st(uint64_t i, %s v) { s%u_st(P(%u) - 1ul - i, v); }\n", n.id, n.glsl, b.id, p);
  generic_vector(g, &n);
  return n;
}

/* source[map[i]]; a map entry past the source reads as 0 and drops a write (the map is
 * the user's data: a device must never be sent outside its memory). Written, it may leave
 * elements of the source untouched (a map that misses some): a staged source is then
 * uploaded before and copied back whole after, so it is read as well as written. */
static node permutation(vkds__gen *g, const vkds_seq *s, vkds_access access, uint32_t depth) {
  g->streamable = false;
  sig_u32(g, 'P');
  vkds_access src_access =
      access == VKDS_ACCESS_WRITE && s->base->ops != &vkds_seq_discard_ops ? VKDS_ACCESS_READ_WRITE : access;
  node src = walk(g, s->base, src_access, depth + 1);
  node map = walk(g, s->map, VKDS_ACCESS_READ, depth + 1);
  node n = {.id = g->next_node++, .type = src.type, .readable = src.readable, .writable = src.writable};
  memcpy(n.glsl, src.glsl, sizeof n.glsl);
  uint32_t p = param(g, s->base->count);
  if (!g->emit) return n;
  prototypes(g, &n);
  if (n.readable)
    put(g->body, "%s s%u(uint64_t i) { uint64_t j = uint64_t(s%u(i)); return j < P(%u) ? s%u(j) : %s(0); }\n", n.glsl,
        n.id, map.id, p, src.id, n.glsl);
  if (n.writable)
    put(g->body, "void s%u_st(uint64_t i, %s v) { uint64_t j = uint64_t(s%u(i)); if (j < P(%u)) s%u_st(j, v); }\n",
        n.id, n.glsl, map.id, p, src.id);
  generic_vector(g, &n);
  return n;
}

static node transform(vkds__gen *g, const vkds_seq *s, vkds_access access, uint32_t depth) {
  vkds_type t = s->type;
  sig_u32(g, 'T'), sig_u32(g, t), sig_str(g, s->op->glsl);
  node b = walk(g, s->base, VKDS_ACCESS_READ, depth + 1);
  node n = {.id = g->next_node++, .readable = true};
  if (access != VKDS_ACCESS_READ) {
    gen_fail(g, VKDS_ERROR_INVALID_ARGUMENT, "a transform view cannot be written");
    return n;
  }
  if (!vkds__glsl_type(t)) {
    gen_fail(g, VKDS_ERROR_INVALID_ARGUMENT, "a transform view over a %s must name its numeric result type (its "
             "operator's .type)", s->base->ops->name);
    return n;
  }
  node_type(&n, t, n.id);
  use_type(g, t);
  if (!g->emit) return n;
  prototypes(g, &n);
  put(g->head, "%s s%u_op(%s x);\n", n.glsl, n.id, b.glsl);
  put(g->body, "%s s%u(uint64_t i) { return s%u_op(s%u(i)); }\n", n.glsl, n.id, n.id, b.id);
  put(g->body, "void s%u_v(uint64_t i, out %s r[4]) { %s x[4]; s%u_v(i, x); for (int q = 0; q < 4; ++q) r[q] = "
               "s%u_op(x[q]); }\n", n.id, n.glsl, b.glsl, b.id, n.id);
  char before[128];
  snprintf(before, sizeof before, "%s s%u_op(%s x) { return %s(", n.glsl, n.id, b.glsl, n.glsl);
  snippet(g, "transform view operator", before, s->op->glsl, "); }");
  return n;
}

/* A zip: its tuples are a struct vkds_zN of its parts' elements (p0, p1, ...). Read only,
 * except by the merge sort, which reads and writes tuples in place, and a merge by a
 * comparator, which writes them (zips_writable): a tuple's store stores each part. */
static node zip(vkds__gen *g, const vkds_seq *s, vkds_access access, uint32_t depth) {
  node n = {.readable = true};
  if (access != VKDS_ACCESS_READ && !g->zips_writable) {
    gen_fail(g, VKDS_ERROR_INVALID_ARGUMENT, "a zip view cannot be written");
    return n;
  }
  sig_u32(g, 'Z'), sig_u32(g, s->part_count);
  node parts[16];
  n.writable = access != VKDS_ACCESS_READ;
  for (uint32_t k = 0; k < s->part_count && k < 16; ++k) {
    parts[k] = walk(g, &s->parts[k], access, depth + 1);
    n.writable = n.writable && parts[k].writable;
    n.readable = n.readable && parts[k].readable; /* (a merge's output is only written) */
  }
  n.id = g->next_node++;
  node_type(&n, VKDS_TYPE_COMPOSITE, n.id);
  if (!g->emit || g->error) return n;
  put(g->head, "struct vkds_z%u {", n.id);
  for (uint32_t k = 0; k < s->part_count; ++k) put(g->head, " %s p%u;", parts[k].glsl, k);
  put(g->head, " };\n");
  prototypes(g, &n);
  if (n.readable) {
    put(g->body, "vkds_z%u s%u(uint64_t i) { return vkds_z%u(", n.id, n.id, n.id);
    for (uint32_t k = 0; k < s->part_count; ++k) put(g->body, "%ss%u(i)", k ? ", " : "", parts[k].id);
    put(g->body, "); }\nvoid s%u_v(uint64_t i, out vkds_z%u r[4]) {\n", n.id, n.id);
    for (uint32_t k = 0; k < s->part_count; ++k)
      put(g->body, "  %s x%u[4]; s%u_v(i, x%u);\n", parts[k].glsl, k, parts[k].id, k);
    put(g->body, "  for (int q = 0; q < 4; ++q) r[q] = vkds_z%u(", n.id);
    for (uint32_t k = 0; k < s->part_count; ++k) put(g->body, "%sx%u[q]", k ? ", " : "", k);
    put(g->body, ");\n}\n");
  }
  if (n.writable) {
    put(g->body, "void s%u_st(uint64_t i, vkds_z%u v) {", n.id, n.id);
    for (uint32_t k = 0; k < s->part_count; ++k) put(g->body, " s%u_st(i, v.p%u);", parts[k].id, k);
    put(g->body, " }\nvoid s%u_vst(uint64_t i, vkds_z%u r[4]) { for (int q = 0; q < 4; ++q) s%u_st(i + uint64_t(q), r[q]); }\n",
        n.id, n.id, n.id);
  }
  return n;
}

/* Bound leaves must be used by the kernel: a binding the code never reaches is not in
 * its interface, and the kernel's description (kernels.c) would name one the shader
 * lacks. A user's code may ignore a part, so its functions call vkds_keep (at an index
 * no call has), which touches every bound leaf's binding directly (vkds__gen_source
 * writes it). It called each part's function instead: nested user types then called
 * their parts twice a level, and the inlined code doubled with each level (lavapipe:
 * 18.9 s at 14 levels, 8 GB past 20; a sequences probe). */
static void keep_parts(struct vkds__text *t, vkds__gen *g) {
  if (!g->descriptors) return;
  g->keeps_bindings = true;
  put(t, "\n  vkds_keep(i);");
}

/* The function keep_parts' calls reach: every bound leaf's binding, read (or written,
 * write-only) at an index no call has. */
static void keep_function(struct vkds__text *t, const vkds__gen *g) {
  if (!g->keeps_bindings) return;
  put(t, "uint vkds_keep_sink;\nvoid vkds_keep(uint64_t i) {\n  if (i == 0xfffffffffffffffful) {");
  for (uint32_t b = 0; b < g->leaf_count; ++b) {
    if (!g->leaves[b].bound) continue;
    if (g->leaves[b].access == VKDS_ACCESS_WRITE) put(t, " vkds_b%u.v[0] = uvec4(0u);", b);
    else put(t, " vkds_keep_sink += vkds_b%u.v[0].x;", b);
  }
  put(t, " }\n}\n");
}

/* A user type: its own device code when it has some and says it is passed directly to
 * this device; otherwise a leaf staged through its host reads. */
static node user(vkds__gen *g, const vkds_seq *s, vkds_access access, uint32_t depth) {
  const vkds_seq_ops *o = s->ops;
  g->streamable = false; /* its code may read any element of its parts */
  bool has_code = o->version >= 2 && o->device_code && o->is_passed_directly(s, g->res);
  if (!has_code) {
    if (access != VKDS_ACCESS_READ) {
      node n = {0};
      gen_fail(g, VKDS_ERROR_UNSUPPORTED, "a '%s' sequence cannot be written on this device (it has no device code "
               "with a store, or is not passed directly here)", o->name ? o->name : "user");
      return n;
    }
    return leaf(g, s, VKDS_ACCESS_READ);
  }
  vkds_seq_device_code code = {0};
  vkds_result r = o->device_code(s, g->res, &code);
  node n = {0};
  if (!vkds__is_result(r)) {
    gen_fail(g, VKDS_ERROR_INVALID_ARGUMENT, "the device_code slot of a '%s' sequence returned %d, which is not a "
             "vkds_result (errors are the negative VKDS_ERROR_* values)", o->name ? o->name : "user", (int)r);
    return n;
  }
  if (r != VKDS_SUCCESS) {
    gen_fail(g, r, "the device_code slot of a '%s' sequence failed", o->name ? o->name : "user");
    return n;
  }
  if (!code.load || code.part_count > VKDS_SEQ_DEVICE_PARTS || code.param_count > VKDS_SEQ_DEVICE_PARTS) {
    gen_fail(g, VKDS_ERROR_INVALID_ARGUMENT, "the device code of a '%s' sequence needs `load` and at most %d parts and "
             "params", o->name ? o->name : "user", VKDS_SEQ_DEVICE_PARTS);
    return n;
  }
  if (access != VKDS_ACCESS_READ && !code.store) {
    gen_fail(g, VKDS_ERROR_INVALID_ARGUMENT, "a '%s' sequence cannot be written: its device code has no store",
             o->name ? o->name : "user");
    return n;
  }
  if (!vkds__glsl_type(s->type)) {
    gen_fail(g, VKDS_ERROR_INVALID_ARGUMENT, "a '%s' sequence with device code must have a numeric element type",
             o->name ? o->name : "user");
    return n;
  }
  sig_u32(g, 'U'), sig_u32(g, s->type), sig_u32(g, access);
  sig_str(g, access != VKDS_ACCESS_WRITE ? code.load : NULL);
  sig_str(g, access != VKDS_ACCESS_READ ? code.store : NULL);
  sig_u32(g, code.part_count), sig_u32(g, code.param_count);
  node parts[VKDS_SEQ_DEVICE_PARTS];
  /* the user's code works on its parts' own types: a sort walks them so, not as bits
   * (their int keys would meet a uint leaf: found by a new-user probe) */
  bool sort_bits = g->sort_bits;
  g->sort_bits = false;
  for (uint32_t k = 0; k < code.part_count; ++k) {
    if (!code.parts[k]) {
      g->sort_bits = sort_bits;
      gen_fail(g, VKDS_ERROR_INVALID_ARGUMENT, "part %u of a '%s' sequence's device code is NULL", k,
               o->name ? o->name : "user");
      return n;
    }
    /* checked as the call's own sequences were: the frame validates those, and a part
     * the slot hands out only now (a failed constructor's, NULL ops; a table without
     * is_passed_directly) was walked as it came: a crash (a views probe) */
    char why[VKDS__SEQ_WHY];
    if (vkds__seq_validate_quiet(code.parts[k], why) != VKDS_SUCCESS) {
      g->sort_bits = sort_bits;
      gen_fail(g, VKDS_ERROR_INVALID_ARGUMENT, "part %u of a '%s' sequence's device code: %s", k,
               o->name ? o->name : "user", why);
      return n;
    }
    /* written, the user's store may leave elements of a part untouched (a strided
     * type writes every other one): a staged part is then uploaded before and copied
     * back whole after, as a permutation's source is. Walked write-only, the untouched
     * elements came back as whatever the staging buffer held (a sequences probe). */
    vkds_access part_access = access == VKDS_ACCESS_WRITE && code.parts[k]->ops != &vkds_seq_discard_ops
                                  ? VKDS_ACCESS_READ_WRITE
                                  : access;
    parts[k] = walk(g, code.parts[k], part_access, depth + 1);
  }
  g->sort_bits = sort_bits;
  uint32_t params[VKDS_SEQ_DEVICE_PARTS];
  for (uint32_t k = 0; k < code.param_count; ++k) params[k] = param(g, code.params[k]);
  n = (node){.id = g->next_node++, .readable = access != VKDS_ACCESS_WRITE, .writable = access != VKDS_ACCESS_READ};
  node_type(&n, s->type, n.id);
  use_type(g, s->type);
  if (!g->emit || g->error) return n;
  prototypes(g, &n);
  generic_vector(g, &n);
  for (uint32_t k = 0; k < code.part_count; ++k) {
    put(g->tail, "#define part%u s%u\n", k, parts[k].id);
    if (n.writable) put(g->tail, "#define part%u_store s%u_st\n", k, parts[k].id);
  }
  for (uint32_t k = 0; k < code.param_count; ++k) put(g->tail, "#define param%u P(%u)\n", k, params[k]);
  for (int store = 0; store < 2; ++store) {
    if (!(store ? n.writable : n.readable)) continue;
    struct vkds__text before = {.ctx = gen_ctx(g)};
    if (store) put(&before, "void s%u_st(uint64_t i, %s v) {", n.id, n.glsl);
    else put(&before, "%s s%u(uint64_t i) {", n.glsl, n.id);
    keep_parts(&before, g);
    if (before.failed) g->tail->failed = true;
    else snippet(g, store ? "sequence device code (store)" : "sequence device code (load)", before.s, store ? code.store : code.load, "}");
    vkds__free(gen_ctx(g), before.s);
  }
  for (uint32_t k = 0; k < code.part_count; ++k) {
    put(g->tail, "#undef part%u\n", k);
    if (n.writable) put(g->tail, "#undef part%u_store\n", k);
  }
  for (uint32_t k = 0; k < code.param_count; ++k) put(g->tail, "#undef param%u\n", k);
  return n;
}

static node walk(vkds__gen *g, const vkds_seq *s, vkds_access access, uint32_t depth) {
  node none = {0};
  if (g->error) return none;
  if (depth > 32) {
    gen_fail(g, VKDS_ERROR_INVALID_ARGUMENT, "sequences nested more than 32 deep");
    return none;
  }
  const vkds_seq_ops *o = s->ops;
  bool writes = access != VKDS_ACCESS_READ;
  if (o == &vkds_seq_buffer_ops || o == &vkds_seq_mapped_ops || o == &vkds_seq_host_ops) {
    if (writes && o == &vkds_seq_host_ops && s->read_only) {
      gen_fail(g, VKDS_ERROR_INVALID_ARGUMENT, "the output is a read-only host sequence (vkds_seq_host_const)");
      return none;
    }
    return leaf(g, s, access);
  }
  if (o == &vkds_seq_counting_ops || o == &vkds_seq_discard_ops) {
    if (writes != (o == &vkds_seq_discard_ops)) {
      gen_fail(g, VKDS_ERROR_INVALID_ARGUMENT, writes ? "a counting sequence cannot be written"
                                                       : "a discard sequence cannot be read");
      return none;
    }
    return o == &vkds_seq_counting_ops ? counting(g, s) : discard(g, s);
  }
  if (o == &vkds_seq_reverse_ops) return reverse(g, s, access, depth);
  if (o == &vkds_seq_permutation_ops) return permutation(g, s, access, depth);
  if (o == &vkds_seq_transform_ops) return transform(g, s, access, depth);
  if (o == &vkds_seq_zip_ops) return zip(g, s, access, depth);
  return user(g, s, access, depth);
}

/* ---- the algorithm's own functions ---- */

/* The GLSL of a built-in operator over a and b of type t. */
static void builtin_op(struct vkds__text *o, vkds_op_kind k, const char *T) {
  switch (k) {
  case VKDS_OP_MULTIPLIES: put(o, "a * b"); break;
  /* Floats skip a NaN on either side (IEEE 754's minNum and maxNum), which keeps the
   * operator associative: with "b < a ? b : a" a NaN in a stayed, and a scan whose
   * thread run began with a NaN gave that run the carry before it, where the same scan
   * tiled otherwise gave the elements' minimum (a numerics probe). */
  case VKDS_OP_MIN: put(o, strcmp(T, "float") && strcmp(T, "double") ? "b < a ? b : a" : "(b < a || a != a) ? b : a"); break;
  case VKDS_OP_MAX: put(o, strcmp(T, "float") && strcmp(T, "double") ? "a < b ? b : a" : "(a < b || a != a) ? b : a"); break;
  case VKDS_OP_BIT_AND: put(o, "a & b"); break;
  case VKDS_OP_BIT_OR: put(o, "a | b"); break;
  case VKDS_OP_BIT_XOR: put(o, "a ^ b"); break;
  case VKDS_OP_LOGICAL_AND: put(o, "(a != %s(0) && b != %s(0)) ? %s(1) : %s(0)", T, T, T, T); break;
  case VKDS_OP_LOGICAL_OR: put(o, "(a != %s(0) || b != %s(0)) ? %s(1) : %s(0)", T, T, T, T); break;
  default: put(o, "a + b"); break;
  }
}

/* The identity of a built-in operator for type t. */
static void builtin_identity(struct vkds__text *o, vkds_op_kind k, vkds_type t) {
  const char *T = vkds__glsl_type(t);
  bool big = vkds_type_size(t) == 8;
  switch (k) {
  case VKDS_OP_MULTIPLIES: case VKDS_OP_LOGICAL_AND: put(o, "%s(1)", T); return;
  case VKDS_OP_BIT_AND: put(o, big ? "%s(0xfffffffffffffffful)" : "%s(0xffffffffu)", T); return;
  case VKDS_OP_MIN: case VKDS_OP_MAX: {
    bool lowest = k == VKDS_OP_MAX;
    switch (t) {
    case VKDS_I32: put(o, lowest ? "int(0x80000000u)" : "int(0x7fffffff)"); return;
    case VKDS_U32: put(o, lowest ? "0u" : "0xffffffffu"); return;
    case VKDS_F32: put(o, lowest ? "uintBitsToFloat(0xff800000u)" : "uintBitsToFloat(0x7f800000u)"); return;
    case VKDS_I64: put(o, lowest ? "int64_t(0x8000000000000000ul)" : "int64_t(0x7ffffffffffffffful)"); return;
    case VKDS_U64: put(o, lowest ? "0ul" : "0xfffffffffffffffful"); return;
    default: put(o, lowest ? "uint64BitsToDouble(0xfff0000000000000ul)" : "uint64BitsToDouble(0x7ff0000000000000ul)"); return;
    }
  }
  default: put(o, "%s(0)", T); return;
  }
}

/* Whether the templates' index arithmetic can be 32-bit (VKDS_IDX): a reduction's
 * first pass steps 4 grid strides (at most 2^22 elements) past an index below the count. */
static bool index32(const vkds__alg *a) { return a->count <= (1ull << 31); }

/* Whether a reduction's threads fold contiguous ranges (VKDS_CONTIGUOUS, reduce.glsl
 * says why): on a CPU device. */
static bool contiguous(const vkds__gen *g) {
  return g->res->dev->facts.props.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
}

/* ---- sorts: the keys' and values' accessors (shaders/algorithm/sort_tile.glsl) ---- */

static void sort_functions(vkds__gen *g, const vkds__alg *a, const node *in) {
  struct vkds__text *b = g->body;
  char defines[512]; /* sort.c's defines (about 220 bytes) */
  vkds__sort_defines(a, defines, sizeof defines);
  put(b, "%s", defines);
  put(b, "#define KEY_T %s\n#define VKDS_KEY_TYPE %d\n#define key_ld s%u\n#define key_ld_v s%u_v\n#define key_st s%u_st\n",
      in[0].glsl, (int)in[0].type, in[0].id, in[0].id, in[0].id);
  put(b, "#define VKDS_VALUES %d\n", a->input_count == 2);
  if (a->input_count == 2)
    put(b, "#define VAL_T %s\n#define VKDS_VAL_TYPE %d\n#define val_ld s%u\n#define val_st s%u_st\n#define val_vst s%u_vst\n",
        in[1].glsl, (int)in[1].type, in[1].id, in[1].id, in[1].id);
}

/* ---- is_sorted: whether element i + 1 comes before element i in the sorts' order ---- */

static void ordered_map(struct vkds__text *b, vkds_type t, const char *margs) {
  bool wide = vkds_type_size(t) == 8;
  const char *W = wide ? "uint64_t" : "uint", *top = wide ? "0x8000000000000000ul" : "0x80000000u";
  const char *all = wide ? "0xfffffffffffffffful" : "0xffffffffu";
  put(b, "%s vkds_ordbits(IN0_T x) {\n", W);
  switch (t) {
  case VKDS_I32: case VKDS_I64: put(b, "  return %s(x) ^ %s;\n", W, top); break;
  case VKDS_F32: case VKDS_F64:
    put(b, "  %s v = %s;\n  return v ^ ((v & %s) != %s(0) ? %s : %s);\n", W,
        wide ? "pack64(unpackDouble2x32(x))" : "floatBitsToUint(x)", top, W, all, top);
    break;
  default: put(b, "  return x;\n"); break;
  }
  put(b, "}\n");
  /* P(1) bit 0: descending */
  put(b, "ACC_T vkds_map(%s) {\n  if (i + 1ul >= P(0)) return ACC_T(1);\n"
         "  %s a = vkds_ordbits(x), b = vkds_ordbits(in0(i + 1ul));\n"
         "  if ((P(1) & 1ul) != 0ul) a = ~a, b = ~b;\n  return b < a ? ACC_T(0) : ACC_T(1);\n}\n", margs, W);
}

/* `fn` returning x as a `to`: x's own value, or (a zip's tuple, of `z`'s parts) member
 * for member. */
static void convert(struct vkds__text *b, const char *fn, const char *to, const vkds_seq *z) {
  put(b, "%s { return %s(", fn, to);
  if (z->ops != &vkds_seq_zip_ops) put(b, "x");
  for (uint32_t k = 0; z->ops == &vkds_seq_zip_ops && k < z->part_count; ++k) put(b, "%sx.p%u", k ? ", " : "", k);
  put(b, "); }\n");
}

/* `fn` returning the tuple `x` (e.g. "x", or "x.p0" for reduce by key's keys) as a `to`,
 * the tuple of zip `z` (of numbers): member k converted to part k's type (a struct's
 * constructor takes its members' own types). */
static void records_as(struct vkds__text *b, const char *fn, const char *to, const vkds_seq *z, const char *x) {
  put(b, "%s { return %s(", fn, to);
  for (uint32_t k = 0; k < z->part_count; ++k)
    put(b, "%s%s(%s.p%u)", k ? ", " : "", vkds__glsl_type(z->parts[k].type), x, k);
  put(b, "); }\n");
}

/* The user's comparator: vkds_less(a, b), a must come before b. */
static void comparator(vkds__gen *g, const char *glsl) {
  put(g->body, "bool vkds_less(IN0_T a, IN0_T b);\n");
  snippet(g, "comparator", "bool vkds_less(IN0_T a, IN0_T b) { return bool(", glsl, "); }");
}

/* is_sorted_by: whether the comparator puts element i + 1 before element i. */
static void ordered_by_map(vkds__gen *g, const vkds__alg *a, const char *margs) {
  comparator(g, a->glsl);
  put(g->body, "ACC_T vkds_map(%s) {\n  if (i + 1ul >= P(0)) return ACC_T(1);\n"
               "  return vkds_less(in0(i + 1ul), x) ? ACC_T(0) : ACC_T(1);\n}\n", margs);
}

/* Prototypes and defaults of what the templates call. */
static void algorithm_functions(vkds__gen *g, const vkds__alg *a, const node *in, const node *out, const node *out2,
                                uint32_t counts) {
  struct vkds__text *b = g->body;
  put(b, "#define VKDS_INPUTS %u\n", a->input_count);
  if (a->count % 4 == 0) put(b, "#define VKDS_WHOLE_RUNS 1\n");
  put(b, "#define VKDS_IDX %s\n", index32(a) ? "uint" : "uint64_t");
  if (contiguous(g)) put(b, "#define VKDS_CONTIGUOUS 1\n");
  for (uint32_t k = 0; k < a->input_count; ++k)
    put(b, "#define IN%u_T %s\n#define in%u s%u\n#define in%u_v s%u_v\n", k, in[k].glsl, k, in[k].id, k, in[k].id);
  const char *args1 = a->input_count == 2 ? "IN0_T a, IN1_T b" : a->input_count == 1 ? "IN0_T x" : "";
  if (a->template_kind == VKDS__TEMPLATE_MSORT) { /* msort.glsl: the store, the comparator */
    /* the scratch's elements: a pointer to one, its load and store (a zip's tuple member
     * by member: glslang stores a whole struct into a buffer as a type SPIR-V rejects) */
    uint32_t stride = vkds__msort_stride(a->inputs[0]), align = stride & (0u - stride);
    put(b, "#define in0_st s%u_st\n#define VKDS_ELEM_SIZE %u\n", in[0].id, stride);
    put(b, "layout(buffer_reference, std430, buffer_reference_align = %u) buffer vkds_msort_el { IN0_T v; };\n",
        align < 16 ? align : 16);
    const vkds_seq *z = a->inputs[0];
    if (z->ops == &vkds_seq_zip_ops) {
      put(b, "IN0_T vkds_el_ld(vkds_msort_el e) { return IN0_T(");
      for (uint32_t k = 0; k < z->part_count; ++k) put(b, "%se.v.p%u", k ? ", " : "", k);
      put(b, "); }\nvoid vkds_el_st(vkds_msort_el e, IN0_T x) {");
      for (uint32_t k = 0; k < z->part_count; ++k) put(b, " e.v.p%u = x.p%u;", k, k);
      put(b, " }\n");
    } else {
      put(b, "IN0_T vkds_el_ld(vkds_msort_el e) { return e.v; }\nvoid vkds_el_st(vkds_msort_el e, IN0_T x) { e.v = x; }\n");
    }
    /* four scratch elements from a multiple of 4 (16-byte aligned there): a number's in
     * 16-byte stores, a tuple's member by member */
    put(b, "#define in0_vst s%u_vst\nvoid vkds_el_st4(uint64_t i, IN0_T r[4]) {\n", in[0].id);
    vkds_type t = z->type;
    if (vkds__type_is_number(t) && z->ops != &vkds_seq_zip_ops) {
      bool wide = vkds_type_size(t) == 8;
      put(b, "  uint64_t a = P(2) + i * %uul;\n", vkds_type_size(t));
      for (int h = 0; h < (wide ? 2 : 1); ++h) {
        put(b, "  vkds_p_uvec4(a + %uul).v = uvec4(", 16u * h);
        for (int q = 0; q < (wide ? 2 : 4); ++q) {
          char v[8];
          snprintf(v, sizeof v, "r[%d]", (wide ? 2 * h : 0) + q);
          put(b, q ? ", " : ""), encode(b, t, v);
        }
        put(b, ");\n");
      }
    } else {
      put(b, "  for (int q = 0; q < 4; ++q) vkds_el_st(vkds_msort_el(P(2) + (i + uint64_t(q)) * %uul), r[q]);\n", stride);
    }
    put(b, "}\n");
    comparator(g, a->glsl);
    return;
  }
  if (a->template_kind == VKDS__TEMPLATE_SEARCH || a->template_kind == VKDS__TEMPLATE_MERGE) {
    /* search.glsl, merge.glsl: the first input's type and the output, the second input's
     * elements as the first's (and the merge's as the output's: records are structs of
     * their own, vkds_zN, member for member the same), the comparator if there is one */
    bool merge = a->template_kind == VKDS__TEMPLATE_MERGE;
    put(b, "#define OUT_T %s\n#define out_st s%u_st\n#define out_vst s%u_vst\n#define VKDS_KEY_TYPE %d\n", out->glsl,
        out->id, out->id, (int)in[0].type);
    convert(b, "IN0_T vkds_in0_of(IN1_T x)", "IN0_T", a->inputs[0]);
    if (merge) convert(b, "OUT_T vkds_out_of(IN0_T x)", "OUT_T", a->inputs[0]);
    if (a->elem == VKDS__ELEM_GLSL) {
      put(b, "#define VKDS_LESS 1\n");
      comparator(g, a->glsl);
    }
    return;
  }
  if (a->template_kind == VKDS__TEMPLATE_MAP) {
    put(b, "#define OUT_T %s\n#define out_st s%u_st\n#define out_vst s%u_vst\n", out->glsl, out->id, out->id);
    put(b, "OUT_T vkds_elem(%s);\n", args1);
    if (a->elem == VKDS__ELEM_VALUE) {
      put(b, "OUT_T vkds_elem() { return "), from_bits(b, a->elem_type, "P(1)"), put(b, "; }\n");
    } else if (a->elem == VKDS__ELEM_ADJACENT) { /* map.glsl passes the index */
      put(b, "#define VKDS_ELEM_INDEXED 1\nOUT_T vkds_adjacent(IN0_T a, IN0_T b);\n");
      put(b, "OUT_T vkds_elem(uint64_t i, IN0_T x, IN0_T before) { return i == 0ul ? OUT_T(x) : vkds_adjacent(x, before); }\n");
      if (a->glsl) snippet(g, "operator", "OUT_T vkds_adjacent(IN0_T a, IN0_T b) { return OUT_T(", a->glsl, "); }");
      else put(b, "OUT_T vkds_adjacent(IN0_T a, IN0_T b) { return OUT_T(a - b); }\n");
    } else if (a->elem == VKDS__ELEM_COPY) {
      put(b, "OUT_T vkds_elem(IN0_T x) { return OUT_T(x); }\n");
    } else {
      char before[128];
      snprintf(before, sizeof before, "OUT_T vkds_elem(%s) { return OUT_T(", args1);
      snippet(g, "operator", before, a->glsl, "); }");
    }
    return;
  }
  if (a->template_kind == VKDS__TEMPLATE_HISTOGRAM) { /* histogram.glsl: the counts and the parameters */
    put(b, "#define OUT_T %s\n#define out_st s%u_st\n#define out_vst s%u_vst\n#define VKDS_IN0_TYPE %d\n", out->glsl,
        out->id, out->id, (int)in[0].type);
    put(b, "#define VKDS_HP(k) P(%u + (k))\n", counts);
    if (g->out_param) put(b, "#define VKDS_HIST_OUT P(%u)\n", g->out_param);
    return;
  }
  if (a->template_kind == VKDS__TEMPLATE_SORT) {
    sort_functions(g, a, in);
    return;
  }
  if (a->template_kind == VKDS__TEMPLATE_SCAN) /* the output, then what a reduction has */
    put(b, "#define OUT_T %s\n#define out_st s%u_st\n#define out_vst s%u_vst\n#define VKDS_ACC_TYPE %d\n", out->glsl,
        out->id, out->id, (int)a->elem_type);
  if (a->elem == VKDS__ELEM_BY_KEY) /* scan_tile.glsl's segmented scan (and reduce by key, below) */
    put(b, "#define VKDS_SEGMENTED 1\n%s", a->result == VKDS__RESULT_COUNT ? "#define VKDS_REDUCE_BY_KEY 1\n" : "");
  if (a->template_kind == VKDS__TEMPLATE_SCAN && a->result == VKDS__RESULT_COUNT) { /* compaction: what fits */
    put(b, "#define VKDS_COMPACT 1\n#define VKDS_OUT_COUNT P(%u)\n#define VKDS_OUT_SIZE %u\n", counts,
        out->type == VKDS_TYPE_COMPOSITE ? 0u : vkds_type_size(out->type));
    if (a->output2)
      put(b, "#define VKDS_PARTITION 1\n#define OUT2_T %s\n#define out2_st s%u_st\n#define VKDS_OUT2_COUNT P(%u)\n",
          out2->glsl, out2->id, counts + 1);
    /* a kept element as the output's: a number converted, a tuple part by part */
    if (vkds__alg_moves_records(a)) {
      records_as(b, "OUT_T vkds_out_of(IN0_T x)", "OUT_T", a->output, "x");
      if (a->output2) records_as(b, "OUT2_T vkds_out2_of(IN0_T x)", "OUT2_T", a->output2, "x");
    } else if (a->elem != VKDS__ELEM_BY_KEY) {
      put(b, "#define vkds_out_of(x) OUT_T(x)\n%s", a->output2 ? "#define vkds_out2_of(x) OUT2_T(x)\n" : "");
    } else if (!vkds__alg_zip_keys(a)) { /* reduce by key: a segment's first key (x.p0) as the keys output's */
      put(b, "#define vkds_key_of(x) OUT_T((x).p0)\n");
    } else if (a->output->ops == &vkds_seq_zip_ops) { /* a zip's, part by part */
      records_as(b, "OUT_T vkds_key_of(IN0_T x)", "OUT_T", a->output, "x.p0");
    } else { /* a zip's into a discard: nothing */
      put(b, "#define vkds_key_of(x) OUT_T(0)\n");
    }
  }
  /* REDUCE, SCAN */
  const char *T = vkds__glsl_type(a->elem_type);
  bool located = a->elem == VKDS__ELEM_LOCATED;
  if (located) {
    put(g->head, "struct vkds_loc { %s v; uint64_t i; };\n", T);
    put(b, "#define ACC_T vkds_loc\n");
  } else {
    put(b, "#define ACC_T %s\n", T);
  }
  put(b, "layout(buffer_reference, std430, buffer_reference_align = 16) buffer vkds_p_acc { ACC_T v; };\n");
  const char *margs = a->input_count == 2 ? "uint64_t i, IN0_T a, IN1_T b" : "uint64_t i, IN0_T x";
  put(b, "ACC_T vkds_map(%s);\nACC_T vkds_combine(ACC_T a, ACC_T b);\nACC_T vkds_identity();\n", margs);
  put(b, "ACC_T vkds_partial_load(uint j) { return vkds_p_acc(P(3) + uint64_t(j) * 16ul).v; }\n");
  put(b, "void vkds_partial_store(uint j, ACC_T v) { vkds_p_acc(P(3) + uint64_t(j) * 16ul).v = v; }\n");
  /* the element's contribution */
  switch (a->elem) {
  case VKDS__ELEM_COPY: put(b, "ACC_T vkds_map(%s) { return ACC_T(x); }\n", margs); break;
  case VKDS__ELEM_BY_KEY: put(b, "ACC_T vkds_map(%s) { return ACC_T(x.p1); }\n", margs); break;
  case VKDS__ELEM_PRODUCT: put(b, "ACC_T vkds_map(%s) { return ACC_T(a) * ACC_T(b); }\n", margs); break;
  case VKDS__ELEM_EQUAL: put(b, "ACC_T vkds_map(%s) { return a == IN0_T(b) ? ACC_T(1) : ACC_T(0); }\n", margs); break;
  case VKDS__ELEM_EQ_VALUE:
    put(b, "ACC_T vkds_map(%s) { return x == ", margs), from_bits(b, in[0].type, "P(1)");
    put(b, " ? ACC_T(1) : ACC_T(0); }\n");
    break;
  case VKDS__ELEM_LOCATED: put(b, "ACC_T vkds_map(%s) { return vkds_loc(x, i + P(6)); }\n", margs); break;
  case VKDS__ELEM_UNIQUE: /* i counts from P(6); the element before is in0(i - P(6) - 1) */
    put(b, "ACC_T vkds_map(%s) { return i == P(6) || x != in0(i - P(6) - 1ul) ? ACC_T(1) : ACC_T(0); }\n", margs);
    break;
  case VKDS__ELEM_ORDERED: ordered_map(b, in[0].type, margs); break;
  case VKDS__ELEM_ORDERED_BY: ordered_by_map(g, a, margs); break;
  case VKDS__ELEM_FIND_VALUE: { /* the value in its own parameter: P(1) holds the init */
    char bits[16];
    snprintf(bits, sizeof bits, "P(%u)", counts);
    put(b, "ACC_T vkds_map(%s) { return x == ", margs), from_bits(b, in[0].type, bits);
    put(b, " ? i + P(6) : 0xfffffffffffffffful; }\n");
    break;
  }
  case VKDS__ELEM_FIND_PRED:
  case VKDS__ELEM_FIND_NOT_PRED: {
    char before[128];
    snprintf(before, sizeof before, "ACC_T vkds_map(%s) { return %sbool(", margs,
             a->elem == VKDS__ELEM_FIND_NOT_PRED ? "!" : "");
    snippet(g, "predicate", before, a->glsl, ") ? i + P(6) : 0xfffffffffffffffful; }");
    break;
  }
  case VKDS__ELEM_PRED:
  case VKDS__ELEM_NOT_PRED: {
    bool keep = a->elem == VKDS__ELEM_PRED;
    char before[128], after[64];
    snprintf(before, sizeof before, "ACC_T vkds_map(%s) { return bool(", margs);
    snprintf(after, sizeof after, ") ? ACC_T(%d) : ACC_T(%d); }", keep, !keep);
    snippet(g, "predicate", before, a->glsl, after);
    break;
  }
  default: {
    char before[128];
    snprintf(before, sizeof before, "ACC_T vkds_map(%s) { return ACC_T(", margs);
    snippet(g, "transform", before, a->glsl, "); }");
    break;
  }
  }
  /* the operator and its identity */
  if (located) {
    bool is_float = vkds__type_is_float(a->elem_type);
    const char *better = a->combine == VKDS__COMBINE_MIN_LOC ? "b.v < a.v" : "a.v < b.v";
    put(b, "ACC_T vkds_identity() { return vkds_loc(%s(0), 0xfffffffffffffffful); }\n", T);
    /* b wins when a is the identity, or b is not and is better (smaller or larger; on
     * a tie, earlier; NaN never wins unless both are, then the earlier). Selects, not
     * branches: a CPU device runs every branch. */
    put(b, "ACC_T vkds_combine(ACC_T a, ACC_T b) {\n"
           "  bool better = (%s) || (a.v == b.v && b.i < a.i);\n", better);
    if (is_float)
      put(b, "  bool nan_a = isnan(a.v), nan_b = isnan(b.v);\n"
             "  better = nan_a || nan_b ? nan_a && (!nan_b || b.i < a.i) : better;\n");
    put(b, "  bool take = a.i == 0xfffffffffffffffful || (b.i != 0xfffffffffffffffful && better);\n"
           "  return vkds_loc(take ? b.v : a.v, take ? b.i : a.i);\n}\n");
    /* The first pass folds each thread's elements in index order (reduce.glsl): b comes
     * after a and is never the identity, so a tie keeps a and only a's index is read, its
     * high word (no element's index reaches it). The general combine above, three 64-bit
     * compares and two NaN tests an element, held f32 min_element at 0.52x CUB's reduce
     * on an H200 (u32 0.80x), where the reductions run at 1.01x. */
    const char *strict = a->combine == VKDS__COMBINE_MIN_LOC ? "b.v < a.v" : "a.v < b.v";
    put(b, "#define VKDS_COMBINE_IN_ORDER 1\n"
           "ACC_T vkds_combine_in_order(ACC_T a, ACC_T b) {\n"
           "  bool take = (%s)%s || uint(a.i >> 32) == 0xffffffffu;\n"
           "  return vkds_loc(take ? b.v : a.v, take ? b.i : a.i);\n}\n",
        strict, is_float ? " || (isnan(a.v) && !isnan(b.v))" : "");
  } else if (a->op.kind == VKDS_OP_GLSL) {
    snippet(g, "reduction operator", "ACC_T vkds_combine(ACC_T a, ACC_T b) { return ACC_T(", a->op.glsl, "); }");
    snippet(g, "reduction identity", "ACC_T vkds_identity() { return ACC_T(", a->op.identity, "); }");
  } else {
    put(b, "ACC_T vkds_combine(ACC_T a, ACC_T b) { return ");
    builtin_op(b, a->op.kind, T);
    put(b, "; }\nACC_T vkds_identity() { return ");
    builtin_identity(b, a->op.kind, a->elem_type);
    put(b, "; }\n");
    /* every built-in operator is commutative: the scans may then fold exact types in
     * any order (scan_portable.glsl) */
    put(b, "#define VKDS_OP_COMMUTATIVE 1\n");
  }
  if (located) put(b, "ACC_T vkds_init() { return vkds_identity(); }\n");
  else put(b, "ACC_T vkds_init() { return "), from_bits(b, a->elem_type, "P(1)"), put(b, "; }\n");
  /* the result */
  if (located) {
    put(b, "void vkds_result_store(ACC_T v) {\n  vkds_p_uint64_t(P(2)).v = v.i == 0xfffffffffffffffful ? 0ul : v.i;\n"
           "  if (v.i != 0xfffffffffffffffful) vkds_p_%s(P(2) + 8ul).v = v.v;\n}\n", T);
  } else {
    put(b, "void vkds_result_store(ACC_T v) { vkds_p_%s(P(2)).v = v; }\n", T);
  }
}

/* Whether the merges' group searches run by subgroup ballots on the device of `res`
 * (merge_group.glsl, VKDS_MERGE_BALLOT): it has them in compute shaders. */
static bool merge_ballot(const vkds__alg *a, const vkds_resource *res) {
  return (a->template_kind == VKDS__TEMPLATE_MERGE || a->template_kind == VKDS__TEMPLATE_MSORT) &&
         vkds__subgroup_ops(res->dev, VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_BALLOT_BIT);
}

/* Whether a merge's shared memory takes a spare slot after every 32 elements: a thread's
 * 8 consecutive outputs (merge_group.glsl), stored at 8t + q, then hit 4 of the 32 banks
 * across a warp (an 8-way conflict a store; CUB's BlockExchange pads for the same
 * reason); padded, all 32, and the 16-byte stores' reads of runs of 4 too. Where the
 * padded 2,112 elements fit the device's shared memory (16-byte records do not on
 * lavapipe's 32 KiB). H200, 2^28 u32 with the 16-byte stores (bench/RESULTS.md, session
 * 39): the merge 1,102 -> 1,049 us padded, the merge sort 23.13 -> 22.99 ms. */
static bool merge_pad(const vkds__alg *a, const vkds_resource *res) {
  if (a->template_kind != VKDS__TEMPLATE_MERGE && a->template_kind != VKDS__TEMPLATE_MSORT) return false;
  if (!a->inputs[0] || !a->inputs[0]->ops) return false;
  uint64_t bytes = (2048u + 64u) * (uint64_t)vkds__msort_stride(a->inputs[0]);
  return bytes <= res->dev->facts.props.properties.limits.maxComputeSharedMemorySize;
}

vkds_result vkds__gen_build(vkds__gen *g, const vkds__alg *a, const vkds_resource *res, bool emit, uint32_t aligned) {
  *g = (vkds__gen){.res = res, .name = a->name, .emit = emit, .param_count = VKDS__GEN_HEADER, .streamable = true, .aligned = aligned,
                   /* not for sorts yet: their stage kernels leave some leaves unused (the
                    * upsweep never reads values), and an unused binding is dropped from
                    * the shader, which then no longer matches the call's arguments */
                   .descriptors = res->dev->facts.prefers_descriptors && res->dev->enabled.push_descriptor &&
                                  a->template_kind != VKDS__TEMPLATE_SORT,
                   .sort_bits = a->template_kind == VKDS__TEMPLATE_SORT,
                   .zips_writable = a->template_kind == VKDS__TEMPLATE_MSORT ||
                                    (a->template_kind == VKDS__TEMPLATE_MERGE && a->elem == VKDS__ELEM_GLSL) ||
                                    vkds__alg_moves_records(a) || vkds__alg_zip_keys(a),
                   .striped_tiles = vkds__scan_striped_tiles(a, res),
                   .merge_ballot = merge_ballot(a, res), .merge_pad = merge_pad(a, res)};
  if (emit) {
    const vkds_context *ctx = gen_ctx(g);
    g->head = vkds__alloc(ctx, sizeof *g->head);
    g->body = vkds__alloc(ctx, sizeof *g->body);
    g->tail = vkds__alloc(ctx, sizeof *g->tail);
    if (!g->head || !g->body || !g->tail) return gen_fail(g, VKDS_ERROR_OUT_OF_HOST_MEMORY, "algorithm source");
    g->head->ctx = g->body->ctx = g->tail->ctx = ctx;
  }
  sig_u32(g, a->template_kind), sig_u32(g, a->input_count), sig_u32(g, a->elem), sig_u32(g, a->elem_type);
  sig_u32(g, a->combine), sig_u32(g, a->op.kind), sig_u32(g, a->result), sig_u32(g, a->variant);
  sig_u32(g, a->subgroup_size);
  sig_u32(g, g->striped_tiles), sig_u32(g, g->merge_ballot), sig_u32(g, g->merge_pad);
  sig_str(g, a->glsl);
  sig_str(g, a->op.kind == VKDS_OP_GLSL ? a->op.glsl : NULL);
  sig_str(g, a->op.kind == VKDS_OP_GLSL ? a->op.identity : NULL);
  sig_u32(g, a->count % 4 == 0), sig_u32(g, index32(a)), sig_u32(g, contiguous(g)); /* the templates' defines */
  node in[VKDS__ALG_MAX_INPUTS] = {{0}}, out = {0};
  /* a sort reads and writes its sequences in place: one node each, with loads and stores */
  bool in_place = a->template_kind == VKDS__TEMPLATE_SORT || a->template_kind == VKDS__TEMPLATE_MSORT;
  vkds_access in_access = in_place ? VKDS_ACCESS_READ_WRITE : VKDS_ACCESS_READ;
  for (uint32_t k = 0; k < a->input_count; ++k) {
    bool read_only = a->elem == VKDS__ELEM_INDEX && k == 0; /* argsort's keys */
    in[k] = walk(g, a->inputs[k], read_only ? VKDS_ACCESS_READ : in_access, 0);
    if (!g->error && in[k].type == VKDS_TYPE_COMPOSITE && !vkds__elem_takes_tuples(a->elem))
      gen_fail(g, VKDS_ERROR_INVALID_ARGUMENT, "input %u is a zip; only an operator of yours (transform, a "
               "predicate, a comparator) can take its tuples (x.p0, x.p1, ...)", k);
  }
  node out2 = {0};
  uint32_t counts = 0;
  bool compacts = a->template_kind == VKDS__TEMPLATE_SCAN && a->result == VKDS__RESULT_COUNT;
  /* every element is written, except by compaction: the elements past the kept ones
   * keep their values (a staged output under a view is uploaded too; one that is the
   * output itself is bound for writing and copied back up to the count: frame.c) */
  vkds_access written = compacts ? VKDS_ACCESS_READ_WRITE : VKDS_ACCESS_WRITE;
  if (a->template_kind == VKDS__TEMPLATE_MAP || a->template_kind == VKDS__TEMPLATE_SCAN ||
      a->template_kind == VKDS__TEMPLATE_SEARCH || a->template_kind == VKDS__TEMPLATE_MERGE) {
    out = walk(g, a->output, written, 0);
  }
  if (a->template_kind == VKDS__TEMPLATE_HISTOGRAM) {
    /* counts written whole (from atomics: their leaf's address, when plain u32 memory),
     * the histogram's own parameters after; nothing streams (every sample may land in
     * any bin) */
    out = walk(g, a->output, VKDS_ACCESS_WRITE, 0);
    if (!g->error && vkds__histogram_direct_leaf(a)) g->out_param = g->leaves[g->leaf_count - 1].param;
    counts = param(g, a->extra[0]);
    param(g, a->extra[1]);
    param(g, a->extra[2]);
    g->streamable = false;
  }
  if (compacts) {
    /* outputs written up to their counts, at places no chunk of the input decides alone
     * (so nothing streams), from elements that must be numbers */
    if (a->output2) out2 = walk(g, a->output2, written, 0);
    g->streamable = false;
    counts = param(g, a->output->count);
    if (a->output2) param(g, a->output2->count);
    if (!g->error && (in[0].type == VKDS_TYPE_COMPOSITE) != (out.type == VKDS_TYPE_COMPOSITE) &&
        a->elem != VKDS__ELEM_BY_KEY) /* (compact.c refuses it first) */
      gen_fail(g, VKDS_ERROR_INVALID_ARGUMENT, "a zip's tuples go to a zip, numbers to numbers");
  }
  if (a->elem == VKDS__ELEM_FIND_VALUE) counts = param(g, a->extra[0]); /* find's value (P(1): its init) */
  if (a->elem == VKDS__ELEM_BY_KEY) g->streamable = false; /* a segment starts where a key differs from the one before */
  use_type(g, a->elem_type);
  if (a->elem == VKDS__ELEM_ORDERED || a->elem == VKDS__ELEM_ORDERED_BY)
    g->streamable = false; /* element i reads element i + 1 */
  if (a->elem == VKDS__ELEM_ADJACENT) g->streamable = false; /* element i reads element i - 1 */
  if (a->result == VKDS__RESULT_LOCATION) use_type(g, VKDS_U64);
  if (g->error) return g->error;
  if (emit) algorithm_functions(g, a, in, &out, &out2, counts);
  if (emit && (g->head->failed || g->body->failed || g->tail->failed))
    return gen_fail(g, VKDS_ERROR_OUT_OF_HOST_MEMORY, "algorithm source");
  return g->error;
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverlength-strings"
#include "algorithm_map.h"
#include "algorithm_reduce.h"
#include "algorithm_merge.h"
#include "algorithm_merge_group.h"
#include "algorithm_msort.h"
#include "algorithm_order.h"
#include "algorithm_search.h"
#pragma GCC diagnostic pop

char *vkds__gen_source(vkds__gen *g, const vkds__alg *a) {
  struct vkds__text t = {.ctx = gen_ctx(g)};
  const char *preamble = a->template_kind == VKDS__TEMPLATE_SCAN ? vkds__scan_preamble(a, g->striped_tiles)
                         : a->template_kind == VKDS__TEMPLATE_HISTOGRAM ? vkds__histogram_preamble(a)
                         : a->template_kind == VKDS__TEMPLATE_SORT ? vkds__sort_preamble(a)
                         : g->merge_ballot ? "#extension GL_KHR_shader_subgroup_basic : require\n"
                                             "#extension GL_KHR_shader_subgroup_ballot : require\n"
                                             "#define VKDS_MERGE_BALLOT 1\n"
                                           : "";
  put(&t, "#version 460\n%s#include \"vkds.glsl\"\n", preamble);
  if (g->merge_pad) put(&t, "#define VKDS_SH_PAD 1\n");
  put(&t, "#define VKDS_ARGS uint64_t p[%u];\nVKDS_DECLARE_ARGS\n#define P(k) VKDS_ARG(p)[k]\n", g->param_count);
  put(&t, "layout(buffer_reference, std430, buffer_reference_align = 16) buffer vkds_p_uvec4 { uvec4 v; };\n");
  for (vkds_type ty = VKDS_I32; ty <= VKDS_F64; ++ty)
    if (g->types_used & (1u << ty)) {
      const char *T = vkds__glsl_type(ty);
      put(&t, "layout(buffer_reference, std430, buffer_reference_align = %u) buffer vkds_p_%s { %s v; };\n",
          vkds_type_size(ty), T, T);
    }
  put(&t, "%s%s", g->head->s ? g->head->s : "", g->body->s ? g->body->s : "");
  keep_function(&t, g);
  if (a->template_kind == VKDS__TEMPLATE_SCAN)
    for (uint32_t k = 0; vkds__scan_template(a, k); ++k) put(&t, "%s", vkds__scan_template(a, k));
  else if (a->template_kind == VKDS__TEMPLATE_HISTOGRAM)
    put(&t, "%s", vkds__histogram_template(a));
  else if (a->template_kind == VKDS__TEMPLATE_SORT)
    for (uint32_t k = 0; vkds__sort_template(a, k); ++k) put(&t, "%s", vkds__sort_template(a, k));
  else if (a->template_kind == VKDS__TEMPLATE_SEARCH)
    put(&t, "%s%s", vkds_template_order, vkds_template_search);
  else if (a->template_kind == VKDS__TEMPLATE_MERGE)
    put(&t, "%s%s%s", vkds_template_order, vkds_template_merge_group, vkds_template_merge);
  else if (a->template_kind == VKDS__TEMPLATE_MSORT)
    put(&t, "%s%s", vkds_template_merge_group, vkds_template_msort);
  else
    put(&t, "%s", a->template_kind == VKDS__TEMPLATE_MAP ? vkds_template_map : vkds_template_reduce);
  put(&t, "%s", g->tail->s ? g->tail->s : "");
  if (t.failed) {
    vkds__free(t.ctx, t.s);
    return NULL;
  }
  return t.s;
}

void vkds__gen_aligned(vkds__gen *g, uint32_t aligned) {
  g->aligned = aligned;
  sig_u32(g, aligned);
}

void vkds__gen_free(vkds__gen *g) {
  const vkds_context *ctx = gen_ctx(g);
  if (g->sig != g->sig_inline) vkds__free(ctx, g->sig);
  text_free(ctx, g->head);
  text_free(ctx, g->body);
  text_free(ctx, g->tail);
  g->sig = NULL;
  g->head = g->body = g->tail = NULL;
}
