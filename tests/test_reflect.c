/* tests/test_reflect.c: SPIR-V validation and reflection (lib/kernel/spirv.c), called directly.
 * The modules come from the .comp files in tests/shaders, built like the library's own shaders
 * (glslang -> spirv-val -> spirv-opt -> spirv-val); broken ones are made here by
 * editing their words. */
#include "kernel/kernel_internal.h"

#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "reflect_args.comp.h"
#include "reflect_bindings.comp.h"
#include "reflect_images.comp.h"
#include "reflect_spill.comp.h"

#define WORDS(a) (sizeof(a) / sizeof((a)[0]))

/* SPIR-V numbers the edits below need */
enum { OP_ENTRY_POINT = 15, OP_TYPE_VECTOR = 23, OP_MEMBER_DECORATE = 72, DECORATION_OFFSET = 35,
       MODEL_VERTEX = 0, MODEL_GLCOMPUTE = 5 };

/* A writable copy of an embedded module. */
static uint32_t *copy_module(const uint32_t *words, size_t count) {
  uint32_t *c = malloc(count * sizeof *c);
  ck_assert_ptr_nonnull(c);
  memcpy(c, words, count * sizeof *c);
  return c;
}

/* The index of the first instruction with `opcode` whose operand words start with
 * `operands` (n of them), past the 5-word header; fails the test when there is none. */
static size_t find_instruction(const uint32_t *words, size_t count, uint32_t opcode,
                               const uint32_t *operands, size_t n) {
  for (size_t i = 5; i < count;) {
    uint32_t wc = words[i] >> 16;
    ck_assert_uint_gt(wc, 0);
    if ((words[i] & 0xffffu) == opcode && wc > n && (n == 0 || !memcmp(&words[i + 1], operands, n * 4)))
      return i;
    i += wc;
  }
  ck_abort_msg("no instruction with opcode %u", (unsigned)opcode);
  return 0;
}

static void assert_invalid(vkds_result r) {
  ck_assert_int_eq(r, VKDS_ERROR_INVALID_SPIRV);
  ck_assert_str_ne(vkds_last_error_message(), "");
}

/* ---- validation ---- */

START_TEST(valid_modules_pass) {
  static const struct { const uint32_t *w; size_t n; } mods[] = {
      {vkds_spirv_reflect_args, WORDS(vkds_spirv_reflect_args)},
      {vkds_spirv_reflect_spill, WORDS(vkds_spirv_reflect_spill)},
      {vkds_spirv_reflect_bindings, WORDS(vkds_spirv_reflect_bindings)},
      {vkds_spirv_reflect_images, WORDS(vkds_spirv_reflect_images)},
  };
  for (size_t i = 0; i < sizeof mods / sizeof mods[0]; ++i) {
    ck_assert_vkds(vkds__spirv_validate(NULL, mods[i].w, mods[i].n, VK_API_VERSION_1_2));
    ck_assert_vkds(vkds__spirv_validate(NULL, mods[i].w, mods[i].n, VK_API_VERSION_1_3));
  }
}
END_TEST

START_TEST(broken_modules_fail) {
  const size_t n = WORDS(vkds_spirv_reflect_args);
  uint32_t *m = copy_module(vkds_spirv_reflect_args, n);

  /* the first instruction's word count and opcode, flipped */
  m[5] = ~m[5];
  assert_invalid(vkds__spirv_validate(NULL, m, n, VK_API_VERSION_1_2));
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "validation"));
  m[5] = vkds_spirv_reflect_args[5];

  /* truncated: the last instruction loses its last word */
  assert_invalid(vkds__spirv_validate(NULL, m, n - 1, VK_API_VERSION_1_2));
  /* only the header */
  assert_invalid(vkds__spirv_validate(NULL, m, 5, VK_API_VERSION_1_3));
  /* shorter than the header */
  assert_invalid(vkds__spirv_validate(NULL, m, 3, VK_API_VERSION_1_2));

  /* wrong magic (also a byte-swapped one, which SPIRV-Tools alone would take) */
  m[0] = 0xdeadbeefu;
  assert_invalid(vkds__spirv_validate(NULL, m, n, VK_API_VERSION_1_2));
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "0xdeadbeef"));
  m[0] = 0x03022307u;
  assert_invalid(vkds__spirv_validate(NULL, m, n, VK_API_VERSION_1_2));
  m[0] = vkds_spirv_reflect_args[0];

  /* NULL and empty */
  assert_invalid(vkds__spirv_validate(NULL, NULL, n, VK_API_VERSION_1_2));
  assert_invalid(vkds__spirv_validate(NULL, m, 0, VK_API_VERSION_1_2));

  /* well-formed but wrong: the argument block's `n` moved to offset 17 breaks the
   * block layout rules, which the validator's message must name */
  const uint32_t member1_offset16[] = {1, DECORATION_OFFSET, 16}; /* after the struct id */
  size_t at = 0;
  for (size_t i = 5; i < n; i += m[i] >> 16) {
    if ((m[i] & 0xffffu) == OP_MEMBER_DECORATE && (m[i] >> 16) == 5 &&
        !memcmp(&m[i + 2], member1_offset16, sizeof member1_offset16)) {
      ck_assert_uint_eq(at, 0); /* only the push block has a member 1 at offset 16 */
      at = i;
    }
  }
  ck_assert_uint_gt(at, 0);
  m[at + 4] = 17;
  assert_invalid(vkds__spirv_validate(NULL, m, n, VK_API_VERSION_1_2));
  ck_assert_msg(strstr(vkds_last_error_message(), "offset 17"), "%s", vkds_last_error_message());
  free(m);
}
END_TEST

/* ---- reflection ---- */

static const vkds__member *member(const vkds__member *s, uint32_t i, const char *name) {
  ck_assert(s->type == VKDS__TYPE_STRUCT || s->type == VKDS__TYPE_POINTER); /* a pointer: its pointee */
  ck_assert_uint_lt(i, s->member_count);
  ck_assert_str_eq(s->members[i].name, name);
  return &s->members[i];
}

static void assert_scalar(const vkds__member *m, vkds__base_type type, uint32_t bits, uint32_t vecsize,
                          uint32_t offset, uint32_t size) {
  ck_assert_int_eq(m->type, type);
  ck_assert_uint_eq(m->bits, bits);
  ck_assert_uint_eq(m->vecsize, vecsize);
  ck_assert_uint_eq(m->columns, 1);
  ck_assert_uint_eq(m->offset, offset);
  ck_assert_uint_eq(m->size, size);
  ck_assert_uint_eq(m->array_count, 0);
  /* a pointer to a struct also describes its pointee (spilled arguments need it) */
  if (type != VKDS__TYPE_POINTER) ck_assert_uint_eq(m->member_count, 0);
}

/* A VKDS_VIEW: { uint64_t address; uint64_t bytes; }, 16 bytes, 8-aligned */
static void assert_view_members(const vkds__member *v) {
  ck_assert_int_eq(v->type, VKDS__TYPE_STRUCT);
  ck_assert_uint_eq(v->member_count, 2);
  assert_scalar(member(v, 0, "address"), VKDS__TYPE_UINT, 64, 1, 0, 8);
  assert_scalar(member(v, 1, "bytes"), VKDS__TYPE_UINT, 64, 1, 8, 8);
}

static bool has_spec(const vkds__reflection *r, uint32_t id, const char *name) {
  for (uint32_t i = 0; i < r->spec_count; ++i)
    if (r->specs[i].id == id && (!name || !strcmp(r->specs[i].name, name))) return true;
  return false;
}

START_TEST(argument_block_layout) {
  vkds__reflection r;
  ck_assert_vkds(vkds__spirv_reflect(NULL, vkds_spirv_reflect_args, WORDS(vkds_spirv_reflect_args), NULL, &r));
  ck_assert_str_eq(r.entry, "main");
  ck_assert_uint_eq(r.local_size[0], 64);
  ck_assert_uint_eq(r.local_size[1], 1);
  ck_assert_uint_eq(r.local_size[2], 1);
  for (int i = 0; i < 3; ++i) ck_assert_uint_eq(r.local_size_spec_id[i], UINT32_MAX);

  /* std430: { uvec4 vkds_base; int n; Inner inner; FloatView views[3]; } with
   * Inner { float scale; FloatView data; } (8-aligned, 24 bytes) */
  ck_assert(r.has_push);
  const vkds__member *p = &r.push;
  ck_assert_str_eq(p->name, "vkds_push");
  ck_assert_int_eq(p->type, VKDS__TYPE_STRUCT);
  ck_assert_uint_eq(p->offset, 0);
  ck_assert_uint_eq(p->size, 96);
  ck_assert_uint_eq(p->member_count, 4);
  assert_scalar(member(p, 0, "vkds_base"), VKDS__TYPE_UINT, 32, 4, 0, 16);
  assert_scalar(member(p, 1, "n"), VKDS__TYPE_INT, 32, 1, 16, 4);

  const vkds__member *inner = member(p, 2, "inner");
  ck_assert_int_eq(inner->type, VKDS__TYPE_STRUCT);
  ck_assert_uint_eq(inner->offset, 24);
  ck_assert_uint_eq(inner->size, 24);
  ck_assert_uint_eq(inner->array_count, 0);
  ck_assert_uint_eq(inner->member_count, 2);
  assert_scalar(member(inner, 0, "scale"), VKDS__TYPE_FLOAT, 32, 1, 0, 4);
  const vkds__member *data = member(inner, 1, "data");
  ck_assert_uint_eq(data->offset, 8);
  ck_assert_uint_eq(data->size, 16);
  ck_assert_uint_eq(data->array_count, 0);
  assert_view_members(data);

  const vkds__member *views = member(p, 3, "views");
  ck_assert_uint_eq(views->offset, 48);
  ck_assert_uint_eq(views->size, 48);
  ck_assert_uint_eq(views->array_count, 3);
  ck_assert_uint_eq(views->array_stride, 16);
  assert_view_members(views);

  ck_assert_uint_eq(r.binding_count, 0);
  ck_assert(has_spec(&r, 2046, "vkds_range64"));

  vkds__reflection_free(&r);
  ck_assert_ptr_null(r.push.members);
  vkds__reflection_free(&r); /* idempotent */
}
END_TEST

START_TEST(spilled_arguments_are_a_pointer) {
  vkds__reflection r;
  ck_assert_vkds(vkds__spirv_reflect(NULL, vkds_spirv_reflect_spill, WORDS(vkds_spirv_reflect_spill), "main", &r));
  ck_assert_uint_eq(r.local_size[0], 32);
  ck_assert_uint_eq(r.local_size[1], 2);
  ck_assert_uint_eq(r.local_size[2], 4);
  ck_assert(r.has_push);
  ck_assert_uint_eq(r.push.size, 24);
  ck_assert_uint_eq(r.push.member_count, 2);
  assert_scalar(member(&r.push, 0, "vkds_base"), VKDS__TYPE_UINT, 32, 4, 0, 16);
  /* the pointer: 8 bytes in the push block; its pointee (VkdsArgs) described below it */
  const vkds__member *args = member(&r.push, 1, "vkds_args");
  assert_scalar(args, VKDS__TYPE_POINTER, 64, 1, 16, 8);
  ck_assert_uint_eq(args->member_count, 2);
  assert_scalar(member(args, 0, "n"), VKDS__TYPE_UINT, 32, 1, 0, 4);
  assert_view_members(member(args, 1, "out_view"));
  ck_assert_uint_eq(member(args, 1, "out_view")->offset, 8);
  ck_assert(has_spec(&r, 2046, "vkds_range64"));
  vkds__reflection_free(&r);
}
END_TEST

START_TEST(storage_buffers_and_spec_local_size) {
  vkds__reflection r;
  ck_assert_vkds(vkds__spirv_reflect(NULL, vkds_spirv_reflect_bindings, WORDS(vkds_spirv_reflect_bindings), NULL, &r));
  /* local_size_x_id = 3: its default (1) and spec id 3; y and z are literals */
  ck_assert_uint_eq(r.local_size[0], 1);
  ck_assert_uint_eq(r.local_size_spec_id[0], 3);
  ck_assert_uint_eq(r.local_size[1], 2);
  ck_assert_uint_eq(r.local_size_spec_id[1], UINT32_MAX);
  ck_assert_uint_eq(r.local_size[2], 1);
  ck_assert_uint_eq(r.local_size_spec_id[2], UINT32_MAX);
  ck_assert(has_spec(&r, 3, NULL));
  ck_assert(!has_spec(&r, 0, NULL));

  ck_assert_uint_eq(r.binding_count, 2);
  ck_assert_uint_eq(r.bindings[0].set, 0);
  ck_assert_uint_eq(r.bindings[0].binding, 0);
  ck_assert_int_eq(r.bindings[0].type, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER);
  ck_assert_uint_eq(r.bindings[0].count, 1);
  ck_assert_uint_eq(r.bindings[1].set, 0);
  ck_assert_uint_eq(r.bindings[1].binding, 2);
  ck_assert_int_eq(r.bindings[1].type, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER);
  ck_assert_uint_eq(r.bindings[1].count, 1);

  /* { Words direct; uint count; Words many[2]; }: buffer_reference pointers */
  ck_assert(r.has_push);
  ck_assert_uint_eq(r.push.size, 32);
  ck_assert_uint_eq(r.push.member_count, 3);
  assert_scalar(member(&r.push, 0, "direct"), VKDS__TYPE_POINTER, 64, 1, 0, 8);
  assert_scalar(member(&r.push, 1, "count"), VKDS__TYPE_UINT, 32, 1, 8, 4);
  const vkds__member *many = member(&r.push, 2, "many");
  ck_assert_int_eq(many->type, VKDS__TYPE_POINTER);
  ck_assert_uint_eq(many->bits, 64);
  ck_assert_uint_eq(many->offset, 16);
  ck_assert_uint_eq(many->size, 16);
  ck_assert_uint_eq(many->array_count, 2);
  ck_assert_uint_eq(many->array_stride, 8);
  ck_assert_uint_eq(many->member_count, 0);
  vkds__reflection_free(&r);
}
END_TEST

START_TEST(image_descriptors) {
  vkds__reflection r;
  ck_assert_vkds(vkds__spirv_reflect(NULL, vkds_spirv_reflect_images, WORDS(vkds_spirv_reflect_images), NULL, &r));
  ck_assert_uint_eq(r.local_size[0], 8);
  ck_assert_uint_eq(r.local_size[1], 8);
  ck_assert(!r.has_push);
  static const struct { uint32_t set, binding; VkDescriptorType type; uint32_t count; } want[] = {
      {0, 1, VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, 1},
      {0, 5, VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, 1},
      {1, 0, VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, 1},
      {1, 1, VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 4},
  };
  ck_assert_uint_eq(r.binding_count, 4);
  for (uint32_t i = 0; i < 4; ++i) {
    ck_assert_uint_eq(r.bindings[i].set, want[i].set);
    ck_assert_uint_eq(r.bindings[i].binding, want[i].binding);
    ck_assert_int_eq(r.bindings[i].type, want[i].type);
    ck_assert_uint_eq(r.bindings[i].count, want[i].count);
  }
  ck_assert_str_eq(r.bindings[2].name, "target");
  ck_assert_str_eq(r.bindings[3].name, "textures");
  vkds__reflection_free(&r);
}
END_TEST

START_TEST(entry_points) {
  const size_t n = WORDS(vkds_spirv_reflect_args);
  vkds__reflection r;
  ck_assert_vkds(vkds__spirv_reflect(NULL, vkds_spirv_reflect_args, n, "main", &r));
  ck_assert_str_eq(r.entry, "main");
  vkds__reflection_free(&r);

  /* a name the module has no compute entry point of: the caller's error */
  ck_assert_int_eq(vkds__spirv_reflect(NULL, vkds_spirv_reflect_args, n, "nope", &r), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "main"));
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "\"nope\""));
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "main (GLCompute)"));
  ck_assert_ptr_null(r.push.members); /* a failure leaves nothing to free */
  ck_assert_uint_eq(r.spec_count, 0);

  /* the same module with its entry point turned into a vertex shader: no compute
   * entry point at all, named or not */
  uint32_t *m = copy_module(vkds_spirv_reflect_args, n);
  const uint32_t glcompute = MODEL_GLCOMPUTE;
  size_t at = find_instruction(m, n, OP_ENTRY_POINT, &glcompute, 1);
  m[at + 1] = MODEL_VERTEX;
  assert_invalid(vkds__spirv_reflect(NULL, m, n, NULL, &r));
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "main (Vertex)"));
  assert_invalid(vkds__spirv_reflect(NULL, m, n, "main", &r));
  free(m);
}
END_TEST

START_TEST(reflect_rejects_garbage) {
  const size_t n = WORDS(vkds_spirv_reflect_args);
  vkds__reflection r;
  assert_invalid(vkds__spirv_reflect(NULL, NULL, n, NULL, &r));
  assert_invalid(vkds__spirv_reflect(NULL, vkds_spirv_reflect_args, 0, NULL, &r));
  assert_invalid(vkds__spirv_reflect(NULL, vkds_spirv_reflect_args, 4, NULL, &r));

  uint32_t *m = copy_module(vkds_spirv_reflect_args, n);
  m[0] = 0xdeadbeefu;
  assert_invalid(vkds__spirv_reflect(NULL, m, n, NULL, &r));
  m[0] = vkds_spirv_reflect_args[0];
  m[5] = ~m[5]; /* an instruction running past the end */
  assert_invalid(vkds__spirv_reflect(NULL, m, n, NULL, &r));
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "runs past the end"));
  free(m);

  ck_assert_int_eq(vkds__spirv_reflect(NULL, vkds_spirv_reflect_args, n, NULL, NULL),
                   VKDS_ERROR_INVALID_ARGUMENT);
}
END_TEST

/* Before SPIR-V 1.4 an entry point lists only its inputs and outputs, and reflection
 * finds the variables it uses by walking its functions: the same module read as a 1.3
 * one (its version word changed) must give what its 1.5 interface list gives. */
START_TEST(reflect_walks_functions_before_spirv_1_4) {
  static const struct { const uint32_t *w; size_t n; } mods[] = {
      {vkds_spirv_reflect_args, WORDS(vkds_spirv_reflect_args)},
      {vkds_spirv_reflect_spill, WORDS(vkds_spirv_reflect_spill)},
      {vkds_spirv_reflect_bindings, WORDS(vkds_spirv_reflect_bindings)},
      {vkds_spirv_reflect_images, WORDS(vkds_spirv_reflect_images)},
  };
  for (size_t i = 0; i < sizeof mods / sizeof mods[0]; ++i) {
    ck_assert_uint_ge(mods[i].w[1], 0x00010400u); /* built for Vulkan 1.2: SPIR-V 1.5 */
    uint32_t *m = copy_module(mods[i].w, mods[i].n);
    m[1] = 0x00010300u;
    vkds__reflection a, b;
    ck_assert_vkds(vkds__spirv_reflect(NULL, mods[i].w, mods[i].n, NULL, &a));
    ck_assert_vkds(vkds__spirv_reflect(NULL, m, mods[i].n, NULL, &b));
    ck_assert_int_eq(a.has_push, b.has_push);
    ck_assert_uint_eq(a.push.size, b.push.size);
    ck_assert_uint_eq(a.push.member_count, b.push.member_count);
    ck_assert_uint_eq(a.binding_count, b.binding_count);
    for (uint32_t k = 0; k < a.binding_count; ++k) {
      ck_assert_uint_eq(a.bindings[k].binding, b.bindings[k].binding);
      ck_assert_int_eq(a.bindings[k].type, b.bindings[k].type);
    }
    vkds__reflection_free(&a), vkds__reflection_free(&b);
    free(m);
  }
  /* the bindings module uses descriptors: the walk must have found them */
  vkds__reflection r;
  uint32_t *m = copy_module(vkds_spirv_reflect_bindings, WORDS(vkds_spirv_reflect_bindings));
  m[1] = 0x00010300u;
  ck_assert_vkds(vkds__spirv_reflect(NULL, m, WORDS(vkds_spirv_reflect_bindings), NULL, &r));
  ck_assert_uint_gt(r.binding_count, 0);
  vkds__reflection_free(&r);
  free(m);
}
END_TEST

/* Found by fuzzing (fuzz/corpus/spirv_reflect/regress-vector-own-component.spv): a
 * vector type whose component is itself sent the size computation round in circles
 * until the stack ran out. */
START_TEST(reflect_vector_of_itself) {
  const size_t n = WORDS(vkds_spirv_reflect_args);
  uint32_t *m = copy_module(vkds_spirv_reflect_args, n);
  size_t vectors = 0;
  for (size_t i = 5; i < n; i += m[i] >> 16)
    if ((m[i] & 0xffffu) == OP_TYPE_VECTOR) m[i + 2] = m[i + 1], ++vectors; /* component := itself */
  ck_assert_uint_gt(vectors, 0);
  vkds__reflection r;
  assert_invalid(vkds__spirv_reflect(NULL, m, n, NULL, &r));
  free(m);
}
END_TEST

/* Reflection reads the words as hostile (lib/kernel/spirv_reflect.c): every module made
 * by changing, truncating or cutting the test modules at random either reflects or fails
 * with INVALID_SPIRV or UNSUPPORTED; never a crash or an out-of-bounds read (the ASan
 * stage runs this too), and what it returns is freed. Deterministic: a fixed seed. */
START_TEST(reflect_survives_mutations) {
  static const struct { const uint32_t *w; size_t n; } mods[] = {
      {vkds_spirv_reflect_args, WORDS(vkds_spirv_reflect_args)},
      {vkds_spirv_reflect_spill, WORDS(vkds_spirv_reflect_spill)},
      {vkds_spirv_reflect_bindings, WORDS(vkds_spirv_reflect_bindings)},
      {vkds_spirv_reflect_images, WORDS(vkds_spirv_reflect_images)},
  };
  uint64_t seed = 0x5eed;
  uint32_t reflected = 0, failed = 0;
  for (int round = 0; round < 4000; ++round) {
    const size_t k = (size_t)round % 4, n = mods[k].n;
    uint32_t *m = copy_module(mods[k].w, n);
    size_t len = n;
    for (int e = 0; e < 1 + round % 3; ++e) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      size_t at = 5 + (size_t)(seed >> 33) % (n - 5);
      switch ((seed >> 8) % 4) {
      case 0: m[at] ^= 1u << ((seed >> 16) % 32); break;          /* a bit flipped */
      case 1: m[at] = (uint32_t)(seed >> 20) % 64; break;         /* a small number (ids, counts) */
      case 2: m[at] = (m[at] & 0xffffu) | ((uint32_t)(seed >> 40) % 8) << 16; break; /* a word count */
      default: len = at; break;                                    /* cut short */
      }
    }
    vkds__reflection r;
    vkds_result res = vkds__spirv_reflect(NULL, m, len, NULL, &r);
    harness_expect(res == VKDS_SUCCESS || res == VKDS_ERROR_INVALID_SPIRV || res == VKDS_ERROR_UNSUPPORTED);
    if (res == VKDS_SUCCESS) ++reflected, vkds__reflection_free(&r);
    else ++failed;
    free(m);
  }
  ck_assert_uint_gt(reflected, 0);
  ck_assert_uint_gt(failed, 0);
}
END_TEST

START_TEST(free_accepts_zeroed) {
  vkds__reflection r = {0};
  vkds__reflection_free(&r);
  vkds__reflection_free(&r);
  vkds__reflection_free(NULL);
}
END_TEST

int main(void) {
  Suite *s = suite_create("reflect");
  TCase *tc = harness_tcase("reflect");
  tcase_add_test(tc, valid_modules_pass);
  tcase_add_test(tc, broken_modules_fail);
  tcase_add_test(tc, argument_block_layout);
  tcase_add_test(tc, spilled_arguments_are_a_pointer);
  tcase_add_test(tc, storage_buffers_and_spec_local_size);
  tcase_add_test(tc, image_descriptors);
  tcase_add_test(tc, entry_points);
  tcase_add_test(tc, reflect_rejects_garbage);
  tcase_add_test(tc, reflect_walks_functions_before_spirv_1_4);
  tcase_add_test(tc, reflect_vector_of_itself);
  tcase_add_test(tc, reflect_survives_mutations);
  tcase_add_test(tc, free_accepts_zeroed);
  suite_add_tcase(s, tc);
  return harness_run(s);
}
