/* fuzz/fuzz_args.c: libFuzzer target for the check of an application's argument
 * description (vkds_arg, include/vkds/kernel.h) against a kernel's reflected interface,
 * and the packing of the argument struct's values at a launch (lib/kernel/args.c: what
 * vkds_kernel_create / _from_glsl and vkds_launch / vkds_cmd_dispatch call). No device:
 * the kernels are compiled once at start-up with vkds's own GLSL path and reflected, and
 * the buffers that views name are plain structs.
 *
 * Input: byte 0 picks one of the kernels below; the rest is read as a description (a
 * list of members: kind, bits, components, array count, stride, binding, name, nested
 * structs; see decode_list) and, after it, the bytes of the argument struct. The
 * struct is laid out the way a C compiler would lay it out (offsets increasing, views
 * 8-byte aligned, array strides from the description), so that `src` is exactly as
 * long as the description says: vkds reading past it is an ASan report. Each view
 * names one of a few buffers (none, host memory, another device's, one without a
 * device address, a good one) and a range inside or outside it.
 *
 * Checked: the check and the packing end in a named outcome (and a message); the
 * packing writes only inside the block's bytes (ASan: the target is exactly that long),
 * never vkds_base's 16 bytes, and every scalar and view lands where the reflection puts
 * its member (recomputed here from the description and the reflection). Seeds:
 * fuzz/corpus/args (fuzz/make_args_seeds.py writes them). Run by scripts/fuzz.sh. */
#include "kernel/kernel_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* ---- the kernels: every kind of member the check and the packing know ---- */

#define KERNEL_ARGS                                                                                           \
  "VKDS_VIEW(float, 4, FloatView)\n"                                                                          \
  "struct Pair { int a; uvec2 b; };\n"                                                                        \
  "struct Inner { float scale; FloatView data; Pair pairs[2]; };\n"                                          \
  "#define VKDS_ARGS int n; Inner inner; FloatView views[2]; i16vec2 h; uint8_t c; int64_t big; vec3 v3; " \
  "double d; float arr[3];\n"                                                                                 \
  "VKDS_DECLARE_ARGS\n"                                                                                       \
  "void main() {\n"                                                                                           \
  "  uint64_t i = vkds_global_index();\n"                                                                     \
  "  if (i >= uint64_t(VKDS_ARG(n))) return;\n"                                                               \
  "  float x = FloatView_load(VKDS_ARG(inner).data, i) * VKDS_ARG(inner).scale + float(VKDS_ARG(h).x)\n"     \
  "    + float(VKDS_ARG(c)) + float(VKDS_ARG(big)) + VKDS_ARG(v3).y + float(VKDS_ARG(d)) + VKDS_ARG(arr)[1]\n" \
  "    + float(VKDS_ARG(inner).pairs[1].b.y);\n"                                                              \
  "  for (int k = 0; k < 2; ++k) FloatView_store(VKDS_ARG(views)[k], i, x);\n"                               \
  "}\n"

#define KERNEL_HEAD                                                                                           \
  "#version 460\n"                                                                                            \
  "#extension GL_EXT_shader_explicit_arithmetic_types : require\n"

static const char *const sources[] = {
    /* 0: vkds.glsl's argument block in the push constants */
    KERNEL_HEAD "#include \"vkds.glsl\"\nlayout(local_size_x = 64) in;\n" KERNEL_ARGS,
    /* 1: the same spilled to a buffer (VKDS_SPILL) */
    KERNEL_HEAD "#define VKDS_SPILL\n#include \"vkds.glsl\"\nlayout(local_size_x = 64) in;\n" KERNEL_ARGS,
    /* 2: a plain push-constant block (no vkds_base) and storage buffers at bindings 0 and 2 */
    KERNEL_HEAD
    "#extension GL_EXT_buffer_reference : require\n"
    "layout(local_size_x_id = 3, local_size_y = 2) in;\n"
    "layout(std430, set = 0, binding = 0) readonly buffer Src { float src[]; };\n"
    "layout(std430, set = 0, binding = 2) writeonly buffer Dst { float dst[]; } dst_block;\n"
    "layout(std430, set = 0, binding = 1) buffer Other { float other[]; };\n"
    "layout(buffer_reference, std430, buffer_reference_align = 4) buffer Words { uint w[]; };\n"
    "layout(push_constant) uniform Params { uint64_t direct; uint count; uint64_t many[2]; u16vec4 q; } params;\n"
    "void main() {\n"
    "  uint i = gl_GlobalInvocationID.x;\n"
    "  if (i >= params.count) return;\n"
    "  dst_block.dst[i] = src[i] * float(gl_WorkGroupSize.x) + other[i] + float(params.q.w);\n"
    "  Words(params.direct).w[i] = Words(params.many[0]).w[i] + Words(params.many[1]).w[i];\n"
    "}\n",
    /* 3: no push constants: bindings only */
    KERNEL_HEAD
    "layout(local_size_x = 32) in;\n"
    "layout(std430, set = 0, binding = 1) buffer Data { uint data[]; };\n"
    "layout(std140, set = 0, binding = 3) uniform Consts { uint k; };\n"
    "void main() { data[gl_GlobalInvocationID.x] += k; }\n",
    /* 4: a matrix, which no description matches */
    KERNEL_HEAD
    "layout(local_size_x = 1) in;\n"
    "layout(push_constant) uniform Params { mat2 m; float f; } params;\n"
    "layout(std430, set = 0, binding = 0) buffer Data { float data[]; };\n"
    "void main() { data[0] = params.m[1][0] + params.f; }\n",
};
enum { KERNELS = sizeof sources / sizeof sources[0] };

static vkds__reflection refl[KERNELS];
static vkds__arg_layout layouts[KERNELS];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  for (int k = 0; k < KERNELS; ++k) {
    uint32_t *words;
    size_t n;
    char name[16];
    snprintf(name, sizeof name, "kernel%d", k);
    if (vkds__glsl_compile(NULL, sources[k], name, NULL, 0, VK_API_VERSION_1_3, &words, &n) != VKDS_SUCCESS ||
        vkds__spirv_reflect(NULL, words, n, NULL, &refl[k]) != VKDS_SUCCESS) {
      fprintf(stderr, "fuzz_args: kernel %d: %s\n", k, vkds_last_error_message());
      abort();
    }
    free(words);
    vkds__args_layout(&refl[k], &layouts[k]);
  }
  return 0;
}

/* ---- reading the input ---- */

typedef struct input {
  const uint8_t *p;
  size_t n;
} input;

static uint8_t next(input *in) {
  if (!in->n) return 0;
  --in->n;
  return *in->p++;
}

/* Every description and name lives here (freed after each input). */
enum { MAX_ARGS = 256, MAX_NAMES = 256, MAX_DEPTH = 6, MAX_LIST = 12 };
typedef struct arena {
  vkds_arg args[MAX_ARGS];
  size_t used;
  char names[MAX_NAMES][9];
  size_t names_used;
} arena;

/* A list of members ending with VKDS_ARG_END: length, then per member a kind byte and
 * its fields. Kinds 0..6 are vkds_arg_kind's; 7 is an unknown kind. */
static const vkds_arg *decode_list(arena *a, input *in, int depth) {
  size_t n = next(in) % (MAX_LIST + 1);
  if (a->used + n + 1 > MAX_ARGS) n = 0;
  if (a->used + 1 > MAX_ARGS) return NULL;
  vkds_arg *list = &a->args[a->used];
  a->used += n + 1;
  for (size_t i = 0; i < n; ++i) {
    uint8_t k = next(in), f = next(in), g = next(in);
    static const uint32_t bits[] = {0, 32, 8, 16, 64, 7};
    vkds_arg *x = &list[i];
    *x = (vkds_arg){.kind = (vkds_arg_kind)(k % 8 == 7 ? 1000 + k : k % 8)};
    if (x->kind == VKDS_ARG_END) x->kind = VKDS_ARG_UINT; /* END only ends the list */
    x->bits = bits[f % 6];
    x->components = (f / 6) % 5;
    x->count = g % 4;
    x->stride = (g >> 2) % 4; /* 0: natural; else natural + 4 * (stride - 1) padding, see lay_out */
    x->binding = (g >> 4) % 4;
    if (k & 0x80 && a->names_used < MAX_NAMES) { /* a name */
      char *s = a->names[a->names_used++];
      size_t len = next(in) % 9;
      for (size_t c = 0; c < len; ++c) s[c] = (char)(next(in) | 1); /* no NUL inside */
      s[len > 8 ? 8 : len] = '\0';
      x->name = s;
    }
    if (x->kind == VKDS_ARG_STRUCT && depth < MAX_DEPTH && !(k & 0x40)) x->members = decode_list(a, in, depth + 1);
  }
  list[n] = (vkds_arg){0};
  return list;
}

/* ---- laying out the C struct (as a compiler would) ---- */

static size_t natural(const vkds_arg *x) {
  switch (x->kind) {
  case VKDS_ARG_INT: case VKDS_ARG_UINT: case VKDS_ARG_FLOAT:
    return (size_t)(x->bits ? x->bits : 32) / 8 * (x->components ? x->components : 1);
  case VKDS_ARG_VIEW: case VKDS_ARG_BINDING: return sizeof(vkds_view);
  default: return 0;
  }
}

static size_t align8(size_t v) { return (v + 7) & ~(size_t)7; }

/* Sets offsets and strides in `list` (which the arena owns: not const here) and returns
 * the struct's size. Views, bindings and structs are 8-byte aligned; scalars go at the
 * next byte (memcpy'd: any alignment). */
static size_t lay_out(vkds_arg *list) {
  size_t at = 0;
  for (vkds_arg *x = list; x && x->kind != VKDS_ARG_END; ++x) {
    size_t elem;
    bool aligned = x->kind == VKDS_ARG_VIEW || x->kind == VKDS_ARG_BINDING || x->kind == VKDS_ARG_STRUCT;
    if (x->kind == VKDS_ARG_STRUCT) elem = align8(lay_out((vkds_arg *)x->members));
    else elem = natural(x);
    if (aligned) at = align8(at);
    x->offset = at;
    /* the stride: 0 (natural, or none for a struct), or the element plus padding */
    size_t pad = x->stride ? 8 * (x->stride - 1) : 0;
    bool natural_stride = x->stride == 0;
    x->stride = natural_stride ? 0 : elem + pad;
    size_t step = natural_stride ? (x->kind == VKDS_ARG_STRUCT ? 0 : elem) : elem + pad;
    size_t count = x->kind == VKDS_ARG_BINDING ? 1 : x->count ? x->count : 1;
    at += (count - 1) * step + elem;
  }
  return at;
}

/* ---- the buffers views name ---- */

static vkds__device devices[2]; /* [0] the launch's */
static vkds_buffer buffers[4];
static void init_buffers(void) {
  devices[0].index = 0, devices[1].index = 1;
  buffers[0] = (vkds_buffer){.dev = &devices[0], .kind = VKDS_MEMORY_DEVICE, .size = 4096, .address = 0x10000, .offset = 256};
  buffers[1] = (vkds_buffer){.dev = &devices[0], .kind = VKDS_MEMORY_HOST, .size = 4096};
  buffers[2] = (vkds_buffer){.dev = &devices[1], .kind = VKDS_MEMORY_DEVICE, .size = 4096, .address = 0x20000};
  buffers[3] = (vkds_buffer){.dev = &devices[0], .kind = VKDS_MEMORY_DEVICE, .size = 64}; /* no device address */
}

static vkds_view make_view(input *in) {
  uint8_t b = next(in), o = next(in), c = next(in);
  vkds_view v = {0};
  switch (b % 8) {
  case 0: v.buffer = NULL; break;
  case 1: v.buffer = &buffers[1]; break;
  case 2: v.buffer = &buffers[2]; break;
  case 3: v.buffer = &buffers[3]; break;
  default: v.buffer = &buffers[0]; break;
  }
  v.offset = (uint64_t)o * 32;                  /* up to 8160: inside and past 4096 */
  v.bytes = b & 0x80 ? 0 : (uint64_t)c * 64;    /* 0: to the end */
  if ((b & 0x40) && (c & 1)) v.offset = UINT64_MAX - o; /* wraps */
  return v;
}

/* Writes a view at every view and binding of `list` (base: where its struct starts). */
static void place_views(const vkds_arg *list, unsigned char *base, input *in) {
  for (const vkds_arg *x = list; x && x->kind != VKDS_ARG_END; ++x) {
    size_t count = x->kind == VKDS_ARG_BINDING ? 1 : x->count ? x->count : 1;
    for (size_t e = 0; e < count; ++e) {
      size_t step = x->stride ? x->stride : x->kind == VKDS_ARG_STRUCT ? 0 : natural(x);
      unsigned char *at = base + x->offset + e * step;
      if (x->kind == VKDS_ARG_VIEW || x->kind == VKDS_ARG_BINDING) {
        vkds_view v = make_view(in);
        memcpy(at, &v, sizeof v);
      } else if (x->kind == VKDS_ARG_STRUCT) {
        place_views(x->members, at, in);
      }
    }
  }
}

/* ---- what the packing must have written ---- */

/* Compares the target with what each described member should have become; `first` as
 * in lib/kernel/args.c. Only after a successful check and packing. */
static void verify(const vkds_arg *list, const unsigned char *src, const vkds__member *block, uint32_t first,
                   const unsigned char *target, uint32_t dst) {
  uint32_t m = first;
  for (const vkds_arg *x = list; x && x->kind != VKDS_ARG_END; ++x) {
    if (x->kind == VKDS_ARG_BINDING) continue;
    const vkds__member *s = &block->members[m++];
    size_t count = x->count ? x->count : 1;
    for (size_t e = 0; e < count; ++e) {
      size_t step = x->stride ? x->stride : x->kind == VKDS_ARG_STRUCT ? 0 : natural(x);
      const unsigned char *from = src + x->offset + e * step;
      uint32_t to = dst + s->offset + (uint32_t)e * s->array_stride;
      if (x->kind == VKDS_ARG_VIEW) {
        vkds_view v;
        memcpy(&v, from, sizeof v);
        uint64_t address = v.buffer->address + v.offset;
        uint64_t bytes = v.bytes ? v.bytes : v.buffer->size - v.offset;
        if (memcmp(target + to + s->members[0].offset, &address, 8) != 0 ||
            memcmp(target + to + s->members[1].offset, &bytes, 8) != 0) {
          fprintf(stderr, "fuzz_args: view member '%s' element %zu packed wrong\n", s->name, e);
          abort();
        }
      } else if (x->kind == VKDS_ARG_STRUCT) {
        verify(x->members, from, s, 0, target, to);
      } else if (memcmp(target + to, from, natural(x)) != 0) {
        fprintf(stderr, "fuzz_args: member '%s' element %zu packed wrong\n", s->name, e);
        abort();
      }
    }
  }
}

static void named(vkds_result r, const vkds_result *allowed, size_t n, const char *what) {
  for (size_t i = 0; i < n; ++i)
    if (r == allowed[i]) {
      if (r != VKDS_SUCCESS && !vkds_last_error_message()[0]) {
        fprintf(stderr, "fuzz_args: %s failed (%d) without a message\n", what, (int)r);
        abort();
      }
      return;
    }
  fprintf(stderr, "fuzz_args: %s returned %d, not one of its named outcomes\n", what, (int)r);
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static bool ready;
  if (!ready) init_buffers(), ready = true;
  if (size < 1) return 0;
  input in = {data + 1, size - 1};
  int k = data[0] % KERNELS;
  arena *a = calloc(1, sizeof *a);
  if (!a) return 0;
  /* no description at all (NULL) when the list byte says so */
  const vkds_arg *args = in.n && in.p[0] == 0xff ? (next(&in), NULL) : decode_list(a, &in, 0);
  size_t src_size = lay_out((vkds_arg *)args);

  static const vkds_result check_outcomes[] = {VKDS_SUCCESS, VKDS_ERROR_ARGUMENT_MISMATCH, VKDS_ERROR_INVALID_ARGUMENT};
  vkds_result r = vkds__args_check(NULL, "fuzz", &refl[k], &layouts[k], args);
  named(r, check_outcomes, sizeof check_outcomes / sizeof check_outcomes[0], "vkds__args_check");
  if (r == VKDS_SUCCESS) {
    /* the struct's bytes: exactly as long as described; then the views in it */
    unsigned char *src = malloc(src_size ? src_size : 1);
    for (size_t i = 0; i < src_size; ++i) src[i] = next(&in) ^ (uint8_t)i;
    place_views(args, src, &in);
    const vkds__arg_layout *l = &layouts[k];
    unsigned char *target = malloc(l->size ? l->size : 1);
    memset(target, 0xa5, l->size);
    vkds__arg_pack p = {.kernel = "fuzz", .dev = &devices[0], .target = target};
    static const vkds_result pack_outcomes[] = {VKDS_SUCCESS, VKDS_ERROR_INVALID_ARGUMENT, VKDS_ERROR_WRONG_DEVICE,
                                                VKDS_ERROR_UNSUPPORTED, VKDS_ERROR_LIMIT_EXCEEDED};
    r = vkds__args_pack(&p, l, args, src);
    named(r, pack_outcomes, sizeof pack_outcomes / sizeof pack_outcomes[0], "vkds__args_pack");
    if (l->first_member && !l->spilled) /* vkds_base is the launch's to fill */
      for (uint32_t i = 0; i < l->block->members[0].size; ++i)
        if (target[i] != 0xa5) {
          fprintf(stderr, "fuzz_args: the packing wrote into vkds_base (byte %u)\n", i);
          abort();
        }
    if (r == VKDS_SUCCESS) verify(args, src, l->block, l->spilled ? 0 : l->first_member, target, 0);
    free(target);
    free(src);
  }
  free(a);
  return 0;
}
