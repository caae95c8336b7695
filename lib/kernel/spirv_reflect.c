/* lib/kernel/spirv_reflect.c: the compute interface of a SPIR-V module, read in C: the
 * entry point, its work-group size, its push-constant block's layout, its descriptors
 * and the module's specialization constants (vkds__reflection, kernel_internal.h).
 *
 * Why not a reflection library: SPIRV-Cross (C++) ends the process when an allocation
 * fails (its containers call std::terminate), and a library embedded in someone's
 * application must not do that. This file allocates only the reflection it returns and
 * one table indexed by id, each failure a named error, and treats the words as hostile:
 * every operand read is bounds-checked, every id checked against the header's bound,
 * nesting capped. Modules normally reach it validated (vkds__spirv_validate), but the
 * tests and the fuzz target give it anything.
 *
 * What "the entry point's" descriptors and push constants are: from SPIR-V 1.4 on, an
 * OpEntryPoint lists every global variable its call tree uses; before that it lists only
 * inputs and outputs, and the variables used are found by walking the functions the
 * entry point reaches and the pointers their memory instructions take. */
#include "kernel_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  SPIRV_MAGIC = 0x07230203u,
  HEADER_WORDS = 5,
  MAX_NESTING = 64,        /* structs inside structs (and pointers to them) */
  MAX_BOUND = 1u << 22,    /* ids: far more than any kernel, few enough for one table */
  MAX_REACH_ROUNDS = 4096, /* the call graph's depth, before SPIR-V 1.4 */

  /* opcodes */
  OP_NAME = 5, OP_MEMBER_NAME = 6, OP_ENTRY_POINT = 15, OP_EXECUTION_MODE = 16, OP_CAPABILITY = 17, OP_TYPE_VOID = 19,
  OP_TYPE_BOOL = 20, OP_TYPE_INT = 21, OP_TYPE_FLOAT = 22, OP_TYPE_VECTOR = 23, OP_TYPE_MATRIX = 24, OP_TYPE_IMAGE = 25,
  OP_TYPE_SAMPLER = 26, OP_TYPE_SAMPLED_IMAGE = 27, OP_TYPE_ARRAY = 28, OP_TYPE_RUNTIME_ARRAY = 29,
  OP_TYPE_STRUCT = 30, OP_TYPE_POINTER = 32, OP_CONSTANT_TRUE = 41, OP_CONSTANT_FALSE = 42, OP_CONSTANT = 43,
  OP_CONSTANT_COMPOSITE = 44, OP_SPEC_CONSTANT_TRUE = 48, OP_SPEC_CONSTANT_FALSE = 49, OP_SPEC_CONSTANT = 50,
  OP_SPEC_CONSTANT_COMPOSITE = 51, OP_SPEC_CONSTANT_OP = 52, OP_FUNCTION = 54, OP_FUNCTION_END = 56,
  OP_FUNCTION_CALL = 57, OP_VARIABLE = 59, OP_IMAGE_TEXEL_POINTER = 60, OP_LOAD = 61, OP_STORE = 62,
  OP_COPY_MEMORY = 63, OP_COPY_MEMORY_SIZED = 64, OP_ACCESS_CHAIN = 65, OP_IN_BOUNDS_ACCESS_CHAIN = 66,
  OP_PTR_ACCESS_CHAIN = 67, OP_ARRAY_LENGTH = 68, OP_DECORATE = 71, OP_MEMBER_DECORATE = 72, OP_COPY_OBJECT = 83,
  OP_ATOMIC_FIRST = 227, OP_ATOMIC_STORE = 228, OP_ATOMIC_LAST = 242, OP_IN_BOUNDS_PTR_ACCESS_CHAIN = 70,
  OP_EXECUTION_MODE_ID = 331, OP_DECORATE_ID = 332, OP_TYPE_ACCELERATION_STRUCTURE = 5341,

  /* operands */
  MODEL_GLCOMPUTE = 5, MODE_LOCAL_SIZE = 17, MODE_LOCAL_SIZE_ID = 38,
  DEC_SPEC_ID = 1, DEC_BUFFER_BLOCK = 3, DEC_ROW_MAJOR = 4, DEC_ARRAY_STRIDE = 6,
  DEC_MATRIX_STRIDE = 7, DEC_BUILT_IN = 11, DEC_BINDING = 33, DEC_DESCRIPTOR_SET = 34, DEC_OFFSET = 35,
  BUILT_IN_WORKGROUP_SIZE = 25,
  SC_UNIFORM_CONSTANT = 0, SC_UNIFORM = 2, SC_WORKGROUP = 4, SC_PUSH_CONSTANT = 9, SC_STORAGE_BUFFER = 12,
  SC_PHYSICAL_STORAGE_BUFFER = 5349,
  DIM_BUFFER = 5,
};

typedef struct module {
  const vkds_context *ctx;
  const uint32_t *w;
  size_t count;   /* words */
  uint32_t bound; /* ids are below it */
  uint32_t version;
  uint32_t *def;  /* per id: the word index of the instruction that defines it (0: none) */
  uint8_t *used;  /* per id: a global variable the entry point uses */
} module;

/* ---- reading instructions ---- */

static uint32_t opcode_at(const module *m, size_t at) { return m->w[at] & 0xffffu; }
static uint32_t length_at(const module *m, size_t at) { return m->w[at] >> 16; }

/* Operand k (0: the word after the opcode) of the instruction at `at`, or `fallback`
 * when the instruction is shorter. */
static uint32_t operand(const module *m, size_t at, uint32_t k, uint32_t fallback) {
  return 1 + k < length_at(m, at) ? m->w[at + 1 + k] : fallback;
}

/* The instruction that defines `id`, or 0. */
static size_t def_of(const module *m, uint32_t id) { return id < m->bound ? m->def[id] : 0; }
static uint32_t def_opcode(const module *m, uint32_t id) {
  size_t at = def_of(m, id);
  return at ? opcode_at(m, at) : 0;
}

/* A literal string at operand k: copied (truncated) into out; returns the operand after
 * it, or UINT32_MAX when it runs past the instruction. */
static uint32_t string_at(const module *m, size_t at, uint32_t k, char *out, size_t size) {
  uint32_t len = length_at(m, at);
  size_t n = 0;
  for (uint32_t i = k; 1 + i < len; ++i) {
    uint32_t word = m->w[at + 1 + i];
    for (int b = 0; b < 4; ++b) {
      char ch = (char)((word >> (8 * b)) & 0xffu);
      if (ch == '\0') {
        if (out && size) out[n < size ? n : size - 1] = '\0';
        return i + 1;
      }
      if (out && n + 1 < size) out[n] = ch;
      ++n;
    }
  }
  if (out && size) out[0] = '\0';
  return UINT32_MAX;
}

/* ---- decorations and names (found by scanning: kernels have few of them) ---- */

/* The first literal of decoration `dec` on `id` (member `member`, or UINT32_MAX for the
 * id itself) into *value; whether there is one. */
static bool decoration(const module *m, uint32_t id, uint32_t member, uint32_t dec, uint32_t *value) {
  for (size_t at = HEADER_WORDS; at < m->count; at += length_at(m, at)) {
    uint32_t op = opcode_at(m, at);
    if (op == OP_FUNCTION) break; /* annotations come before the first function */
    bool match = member == UINT32_MAX
                     ? (op == OP_DECORATE || op == OP_DECORATE_ID) && operand(m, at, 0, 0) == id &&
                           operand(m, at, 1, UINT32_MAX) == dec
                     : op == OP_MEMBER_DECORATE && operand(m, at, 0, 0) == id &&
                           operand(m, at, 1, UINT32_MAX) == member && operand(m, at, 2, UINT32_MAX) == dec;
    if (match) {
      if (value) *value = operand(m, at, member == UINT32_MAX ? 2 : 3, 0);
      return true;
    }
  }
  return false;
}

/* The name of `id` (member `member`, or UINT32_MAX) into out[64]; "" when it has none. */
static void name_of(const module *m, uint32_t id, uint32_t member, char out[64]) {
  out[0] = '\0';
  for (size_t at = HEADER_WORDS; at < m->count; at += length_at(m, at)) {
    uint32_t op = opcode_at(m, at);
    if (op == OP_FUNCTION) break;
    if (member == UINT32_MAX && op == OP_NAME && operand(m, at, 0, 0) == id) {
      string_at(m, at, 1, out, 64);
      return;
    }
    if (member != UINT32_MAX && op == OP_MEMBER_NAME && operand(m, at, 0, 0) == id &&
        operand(m, at, 1, UINT32_MAX) == member) {
      string_at(m, at, 2, out, 64);
      return;
    }
  }
}

/* ---- constants ---- */

/* The 32-bit value of a scalar constant (a specialization constant: its default). */
static bool constant_u32(const module *m, uint32_t id, uint32_t *value) {
  size_t at = def_of(m, id);
  if (!at) return false;
  switch (opcode_at(m, at)) {
  case OP_CONSTANT:
  case OP_SPEC_CONSTANT: *value = operand(m, at, 2, 0); return length_at(m, at) > 3;
  case OP_CONSTANT_TRUE:
  case OP_SPEC_CONSTANT_TRUE: *value = 1; return true;
  case OP_CONSTANT_FALSE:
  case OP_SPEC_CONSTANT_FALSE: *value = 0; return true;
  default: return false;
  }
}

/* ---- the module's layout: one pass over the words ---- */

static vkds_result invalid(const module *m, const char *what) {
  return vkds__fail(m->ctx, VKDS_ERROR_INVALID_SPIRV, VK_SUCCESS, "reading the SPIR-V module: %s", what);
}

/* The capabilities that need a device feature (VKDS__CAP_*): the module declares them
 * all before its other instructions. */
static uint32_t reflect_caps(const module *m) {
  static const struct { uint32_t spirv, cap; } known[] = {
      {9, VKDS__CAP_FLOAT16},           {10, VKDS__CAP_FLOAT64},         {11, VKDS__CAP_INT64},
      {12, VKDS__CAP_INT64_ATOMICS},    {22, VKDS__CAP_INT16},           {39, VKDS__CAP_INT8},
      {4433, VKDS__CAP_STORAGE16},      {4434, VKDS__CAP_UNIFORM_STORAGE16}, {4435, VKDS__CAP_PUSH16},
      {4448, VKDS__CAP_STORAGE8},       {4449, VKDS__CAP_UNIFORM_STORAGE8},  {4450, VKDS__CAP_PUSH8},
      {5345, VKDS__CAP_MEMORY_MODEL},   {5346, VKDS__CAP_MEMORY_MODEL_DEVICE},
      {5347, VKDS__CAP_BUFFER_ADDRESS},
  };
  uint32_t caps = 0;
  for (size_t at = HEADER_WORDS; at < m->count && opcode_at(m, at) == OP_CAPABILITY; at += length_at(m, at)) {
    uint32_t c = operand(m, at, 0, 0);
    for (size_t i = 0; i < sizeof known / sizeof known[0]; ++i)
      if (known[i].spirv == c) caps |= known[i].cap;
  }
  return caps;
}

/* Checks every instruction's length and records where each id is defined. */
static vkds_result index_module(module *m) {
  for (size_t at = HEADER_WORDS; at < m->count; at += length_at(m, at)) {
    uint32_t len = length_at(m, at);
    if (len == 0 || len > m->count - at) return invalid(m, "an instruction runs past the end of the module");
    uint32_t op = opcode_at(m, at);
    /* the ids reflection looks up: types (their result the first operand), constants,
     * variables and functions (the second, after their type) */
    uint32_t result = 0;
    if ((op >= OP_TYPE_VOID && op <= OP_TYPE_POINTER) || op == OP_TYPE_ACCELERATION_STRUCTURE)
      result = operand(m, at, 0, 0);
    else if ((op >= OP_CONSTANT_TRUE && op <= OP_SPEC_CONSTANT_OP) || op == OP_VARIABLE || op == OP_FUNCTION)
      result = operand(m, at, 1, 0);
    if (result) {
      if (result >= m->bound) return invalid(m, "an id at or past the header's bound");
      if (!m->def[result]) m->def[result] = (uint32_t)at;
    }
  }
  return VKDS_SUCCESS;
}

/* ---- the entry point and what it uses ---- */

static const char *model_name(uint32_t model) {
  static const char *const names[] = {"Vertex", "TessellationControl", "TessellationEvaluation", "Geometry",
                                      "Fragment", "GLCompute", "Kernel"};
  return model < sizeof names / sizeof names[0] ? names[model] : "other";
}

/* The OpEntryPoint chosen (GLCompute; named `entry` unless NULL), or 0 with the error. */
static vkds_result choose_entry(const module *m, const char *entry, vkds__reflection *out, size_t *found) {
  char listed[512] = "", name[256];
  size_t used = 0;
  bool any_compute = false;
  *found = 0;
  for (size_t at = HEADER_WORDS; at < m->count && !*found; at += length_at(m, at)) {
    if (opcode_at(m, at) != OP_ENTRY_POINT) continue;
    uint32_t model = operand(m, at, 0, UINT32_MAX);
    if (string_at(m, at, 2, name, sizeof name) == UINT32_MAX)
      return invalid(m, "an entry point's name is not terminated");
    if (model == MODEL_GLCOMPUTE && (!entry || strcmp(name, entry) == 0)) {
      if (strlen(name) >= sizeof out->entry)
        return vkds__fail(m->ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS,
                          "entry point name \"%.40s...\" is longer than vkds's limit of %zu bytes", name,
                          sizeof out->entry - 1);
      memcpy(out->entry, name, strlen(name) + 1);
      *found = at;
      break;
    }
    any_compute |= model == MODEL_GLCOMPUTE;
    if (used < sizeof listed) {
      int w = snprintf(listed + used, sizeof listed - used, "%s%s (%s)", used ? ", " : "", name, model_name(model));
      if (w > 0) used += (size_t)w;
    }
  }
  if (*found) return VKDS_SUCCESS;
  if (!used) snprintf(listed, sizeof listed, "none");
  if (entry && any_compute) /* the module is fine: the name asked for is the caller's */
    return vkds__fail(m->ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "no GLCompute entry point \"%s\" in the module; it has: %s", entry, listed);
  return vkds__fail(m->ctx, VKDS_ERROR_INVALID_SPIRV, VK_SUCCESS, "the module has no GLCompute entry point; it has: %s",
                    listed);
}

/* Marks `id` used when it is a global variable. */
static void use(module *m, uint32_t id) {
  size_t at = def_of(m, id);
  if (at && opcode_at(m, at) == OP_VARIABLE) m->used[id] = 1;
}

/* Before SPIR-V 1.4: the functions the entry point reaches (marked in `reach`, by id),
 * and the global variables their memory instructions and calls take. */
static vkds_result walk_functions(module *m, uint32_t entry_fn) {
  uint8_t *reach = vkds__temp_alloc(m->ctx, m->bound);
  if (!reach) return vkds__fail(m->ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "reflecting a module");
  if (entry_fn < m->bound) reach[entry_fn] = 1;
  /* rounds until no new function is reached: each round marks the callees of the
   * reached functions (bounded: a call graph deeper than this is not a kernel) */
  for (int round = 0, grew = 1; grew && round < MAX_REACH_ROUNDS; ++round) {
    grew = 0;
    uint32_t fn = 0;
    for (size_t at = HEADER_WORDS; at < m->count; at += length_at(m, at)) {
      uint32_t op = opcode_at(m, at), len = length_at(m, at);
      if (op == OP_FUNCTION) fn = operand(m, at, 1, 0);
      if (op == OP_FUNCTION_END) fn = 0;
      if (!fn || fn >= m->bound || !reach[fn]) continue;
      switch (op) {
      case OP_FUNCTION_CALL: {
        uint32_t callee = operand(m, at, 2, 0);
        if (callee < m->bound && !reach[callee]) reach[callee] = 1, grew = 1;
        for (uint32_t k = 3; 1 + k < len; ++k) use(m, operand(m, at, k, 0));
        break;
      }
      case OP_LOAD:
      case OP_ACCESS_CHAIN:
      case OP_IN_BOUNDS_ACCESS_CHAIN:
      case OP_PTR_ACCESS_CHAIN:
      case OP_IN_BOUNDS_PTR_ACCESS_CHAIN:
      case OP_ARRAY_LENGTH:
      case OP_IMAGE_TEXEL_POINTER:
      case OP_COPY_OBJECT: use(m, operand(m, at, 2, 0)); break;
      case OP_STORE: use(m, operand(m, at, 0, 0)); break;
      case OP_COPY_MEMORY:
      case OP_COPY_MEMORY_SIZED:
        use(m, operand(m, at, 0, 0));
        use(m, operand(m, at, 1, 0));
        break;
      default:
        if (op == OP_ATOMIC_STORE) use(m, operand(m, at, 0, 0));
        else if (op >= OP_ATOMIC_FIRST && op <= OP_ATOMIC_LAST) use(m, operand(m, at, 2, 0));
        break;
      }
    }
  }
  vkds__free(m->ctx, reach);
  return VKDS_SUCCESS;
}

static vkds_result mark_used(module *m, size_t entry_at) {
  uint32_t after_name = string_at(m, entry_at, 2, NULL, 0);
  if (m->version >= 0x00010400u) { /* the interface lists every global the entry point uses */
    for (uint32_t k = after_name; 1 + k < length_at(m, entry_at); ++k) use(m, operand(m, entry_at, k, 0));
    return VKDS_SUCCESS;
  }
  return walk_functions(m, operand(m, entry_at, 1, 0));
}

/* ---- the work-group size ---- */

/* One component given by a constant id: its value, and its SpecId when it is a
 * specialization constant that has one. (One computed from others, OpSpecConstantOp,
 * has no single id or value: the LocalSize literal stands.) */
static void size_component(const module *m, uint32_t id, uint32_t i, vkds__reflection *out) {
  uint32_t v, spec;
  if (def_opcode(m, id) == OP_SPEC_CONSTANT_OP) return;
  if (constant_u32(m, id, &v)) out->local_size[i] = v;
  if (def_opcode(m, id) == OP_SPEC_CONSTANT && decoration(m, id, UINT32_MAX, DEC_SPEC_ID, &spec))
    out->local_size_spec_id[i] = spec;
}

static void reflect_local_size(const module *m, uint32_t entry_fn, vkds__reflection *out) {
  for (int i = 0; i < 3; ++i) out->local_size[i] = 0, out->local_size_spec_id[i] = UINT32_MAX;
  for (size_t at = HEADER_WORDS; at < m->count; at += length_at(m, at)) {
    uint32_t op = opcode_at(m, at);
    if ((op != OP_EXECUTION_MODE && op != OP_EXECUTION_MODE_ID) || operand(m, at, 0, 0) != entry_fn) continue;
    uint32_t mode = operand(m, at, 1, UINT32_MAX);
    for (uint32_t i = 0; i < 3; ++i) {
      if (op == OP_EXECUTION_MODE && mode == MODE_LOCAL_SIZE) out->local_size[i] = operand(m, at, 2 + i, 0);
      if (op == OP_EXECUTION_MODE_ID && mode == MODE_LOCAL_SIZE_ID) size_component(m, operand(m, at, 2 + i, 0), i, out);
    }
  }
  /* a constant decorated WorkgroupSize overrides both */
  for (size_t at = HEADER_WORDS; at < m->count; at += length_at(m, at)) {
    uint32_t op = opcode_at(m, at), builtin;
    if (op != OP_CONSTANT_COMPOSITE && op != OP_SPEC_CONSTANT_COMPOSITE) continue;
    uint32_t id = operand(m, at, 1, 0);
    if (!decoration(m, id, UINT32_MAX, DEC_BUILT_IN, &builtin) || builtin != BUILT_IN_WORKGROUP_SIZE) continue;
    for (uint32_t i = 0; i < 3; ++i) size_component(m, operand(m, at, 2 + i, 0), i, out);
    break;
  }
}

/* ---- types ---- */

/* The element type under any arrays of `type`, and the outermost length (0: runtime). */
static uint32_t under_arrays(const module *m, uint32_t type, uint32_t *outer, bool *is_array) {
  *is_array = false;
  for (int depth = 0; depth < MAX_NESTING; ++depth) {
    size_t at = def_of(m, type);
    uint32_t op = at ? opcode_at(m, at) : 0;
    if (op != OP_TYPE_ARRAY && op != OP_TYPE_RUNTIME_ARRAY) return type;
    if (!*is_array) {
      *is_array = true;
      *outer = 0;
      if (op == OP_TYPE_ARRAY && !constant_u32(m, operand(m, at, 2, 0), outer)) *outer = 0;
    }
    type = operand(m, at, 1, 0);
  }
  return 0;
}

static vkds_result describe_members(const module *m, uint32_t st, vkds__member *parent, unsigned depth);

/* The size of a struct as SPIR-V lays it out: its last member's offset plus that
 * member's size (no padding after it). */
static vkds_result struct_size(const module *m, uint32_t st, unsigned depth, uint32_t *size);

/* The bytes member `i` (of type `mt`) of struct `st` covers. */
static vkds_result member_size(const module *m, uint32_t st, uint32_t i, uint32_t mt, unsigned depth,
                               uint32_t *size) {
  size_t at = def_of(m, mt);
  uint32_t op = at ? opcode_at(m, at) : 0;
  uint32_t stride = 0, count = 0, matrix_stride = 0;
  switch (op) {
  case OP_TYPE_ARRAY:
  case OP_TYPE_RUNTIME_ARRAY:
    decoration(m, mt, UINT32_MAX, DEC_ARRAY_STRIDE, &stride);
    if (op == OP_TYPE_ARRAY) constant_u32(m, operand(m, at, 2, 0), &count);
    *size = stride * count;
    return VKDS_SUCCESS;
  case OP_TYPE_STRUCT: return struct_size(m, mt, depth + 1, size);
  case OP_TYPE_POINTER: *size = 8; return VKDS_SUCCESS;
  case OP_TYPE_BOOL:
  case OP_TYPE_INT:
  case OP_TYPE_FLOAT: *size = op == OP_TYPE_BOOL ? 4 : operand(m, at, 1, 0) / 8; return VKDS_SUCCESS;
  case OP_TYPE_VECTOR: {
    /* of a scalar (not of anything that could lead back here: a fuzzed module made a
     * vector its own component) */
    size_t comp = def_of(m, operand(m, at, 1, 0));
    uint32_t cop = comp ? opcode_at(m, comp) : 0;
    if (cop != OP_TYPE_INT && cop != OP_TYPE_FLOAT && cop != OP_TYPE_BOOL) return invalid(m, "a vector of no scalar");
    *size = (cop == OP_TYPE_BOOL ? 4 : operand(m, comp, 1, 0) / 8) * operand(m, at, 2, 0);
    return VKDS_SUCCESS;
  }
  case OP_TYPE_MATRIX: {
    size_t col = def_of(m, operand(m, at, 1, 0));
    uint32_t rows = col ? operand(m, col, 2, 0) : 0, columns = operand(m, at, 2, 0);
    decoration(m, st, i, DEC_MATRIX_STRIDE, &matrix_stride);
    *size = matrix_stride * (decoration(m, st, i, DEC_ROW_MAJOR, NULL) ? rows : columns);
    return VKDS_SUCCESS;
  }
  default: return invalid(m, "a block member of a type that blocks cannot hold");
  }
}

static vkds_result struct_size(const module *m, uint32_t st, unsigned depth, uint32_t *size) {
  if (depth > MAX_NESTING)
    return vkds__fail(m->ctx, VKDS_ERROR_INVALID_SPIRV, VK_SUCCESS, "structs nested more than %d deep", MAX_NESTING);
  size_t at = def_of(m, st);
  if (!at || opcode_at(m, at) != OP_TYPE_STRUCT) return invalid(m, "a struct that is not one");
  uint32_t n = length_at(m, at) - 2;
  *size = 0;
  if (!n) return VKDS_SUCCESS;
  uint32_t offset = 0, last;
  decoration(m, st, n - 1, DEC_OFFSET, &offset);
  VKDS_CHECK(member_size(m, st, n - 1, operand(m, at, 1 + n - 1, 0), depth, &last));
  *size = offset + last;
  return VKDS_SUCCESS;
}

/* The scalar type under vectors and matrices: its kind and width. */
static void scalar_of(const module *m, uint32_t type, vkds__member *out) {
  for (int depth = 0; depth < 3; ++depth) {
    size_t at = def_of(m, type);
    uint32_t op = at ? opcode_at(m, at) : 0;
    if (op == OP_TYPE_VECTOR) {
      out->vecsize = operand(m, at, 2, 1);
    } else if (op == OP_TYPE_MATRIX) {
      out->columns = operand(m, at, 2, 1);
    } else {
      if (op == OP_TYPE_BOOL) out->type = VKDS__TYPE_BOOL, out->bits = 32;
      else if (op == OP_TYPE_INT) out->type = operand(m, at, 2, 0) ? VKDS__TYPE_INT : VKDS__TYPE_UINT;
      else if (op == OP_TYPE_FLOAT) out->type = VKDS__TYPE_FLOAT;
      else out->type = VKDS__TYPE_UNKNOWN;
      if (op == OP_TYPE_INT || op == OP_TYPE_FLOAT) out->bits = operand(m, at, 1, 0);
      return;
    }
    type = operand(m, at, 1, 0);
  }
}

static vkds_result describe_member(const module *m, uint32_t st, uint32_t i, uint32_t mt, vkds__member *out,
                                   unsigned depth) {
  name_of(m, st, i, out->name);
  uint32_t offset = 0;
  decoration(m, st, i, DEC_OFFSET, &offset);
  out->offset = offset;
  out->vecsize = 1;
  out->columns = 1;
  bool is_array;
  uint32_t count = 0;
  uint32_t elem = under_arrays(m, mt, &count, &is_array);
  if (!elem) return invalid(m, "arrays nested too deep");
  if (is_array) {
    uint32_t stride = 0;
    decoration(m, mt, UINT32_MAX, DEC_ARRAY_STRIDE, &stride);
    out->array_count = count;
    out->array_stride = stride;
  }
  size_t at = def_of(m, elem);
  uint32_t op = at ? opcode_at(m, at) : 0;
  if (op == OP_TYPE_POINTER && operand(m, at, 1, 0) == SC_PHYSICAL_STORAGE_BUFFER) {
    /* a 64-bit device address; for a pointer to one struct (vkds.glsl's spilled
     * arguments) the pointee's layout is described in `members` too */
    out->type = VKDS__TYPE_POINTER;
    out->bits = 64;
    out->size = is_array ? out->array_count * out->array_stride : 8;
    uint32_t pointee = operand(m, at, 2, 0);
    if (!is_array && def_opcode(m, pointee) == OP_TYPE_STRUCT) return describe_members(m, pointee, out, depth + 1);
    return VKDS_SUCCESS;
  }
  uint32_t size;
  VKDS_CHECK(member_size(m, st, i, mt, depth, &size));
  out->size = size;
  if (op == OP_TYPE_STRUCT) {
    out->type = VKDS__TYPE_STRUCT;
    return describe_members(m, elem, out, depth + 1);
  }
  scalar_of(m, elem, out);
  return VKDS_SUCCESS;
}

static vkds_result describe_members(const module *m, uint32_t st, vkds__member *parent, unsigned depth) {
  if (depth > MAX_NESTING)
    return vkds__fail(m->ctx, VKDS_ERROR_INVALID_SPIRV, VK_SUCCESS, "structs nested more than %d deep", MAX_NESTING);
  size_t at = def_of(m, st);
  if (!at || opcode_at(m, at) != OP_TYPE_STRUCT) return invalid(m, "a struct that is not one");
  uint32_t n = length_at(m, at) - 2;
  if (!n) return VKDS_SUCCESS;
  parent->members = vkds__alloc_array(m->ctx, n, sizeof *parent->members);
  if (!parent->members) return vkds__fail(m->ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "reflecting a struct");
  parent->member_count = n;
  for (uint32_t i = 0; i < n; ++i)
    VKDS_CHECK(describe_member(m, st, i, operand(m, at, 1 + i, 0), &parent->members[i], depth));
  return VKDS_SUCCESS;
}

/* ---- the entry point's variables ---- */

/* The type a global variable points to, or 0. */
static uint32_t pointee_of(const module *m, size_t var_at) {
  size_t ptr = def_of(m, operand(m, var_at, 0, 0));
  return ptr && opcode_at(m, ptr) == OP_TYPE_POINTER ? operand(m, ptr, 2, 0) : 0;
}

static vkds_result reflect_push(const module *m, vkds__reflection *out) {
  uint32_t found = 0, count = 0;
  for (uint32_t id = 1; id < m->bound; ++id) {
    size_t at = m->def[id];
    if (m->used[id] && operand(m, at, 2, UINT32_MAX) == SC_PUSH_CONSTANT) found = found ? found : id, ++count;
  }
  if (!count) return VKDS_SUCCESS;
  if (count > 1) /* Vulkan: at most one push-constant block per entry point */
    return vkds__fail(m->ctx, VKDS_ERROR_INVALID_SPIRV, VK_SUCCESS, "entry point \"%s\" uses %u push-constant blocks",
                      out->entry, count);
  uint32_t block = pointee_of(m, m->def[found]);
  if (def_opcode(m, block) != OP_TYPE_STRUCT) return invalid(m, "a push-constant block that is not a struct");
  vkds__member *p = &out->push;
  name_of(m, found, UINT32_MAX, p->name);
  p->type = VKDS__TYPE_STRUCT;
  p->vecsize = 1;
  p->columns = 1;
  VKDS_CHECK(struct_size(m, block, 0, &p->size)); /* the end of its last member: what the push range must cover */
  p->size = (p->size + 3u) & ~3u; /* push ranges and updates are whole words (8- and 16-bit members end anywhere) */
  out->has_push = true;
  return describe_members(m, block, p, 0);
}

/* The descriptor type of a global variable of storage class `sc` pointing to `type`;
 * false for variables that are not descriptors. */
static bool descriptor_type(const module *m, uint32_t sc, uint32_t type, VkDescriptorType *out) {
  bool is_array;
  uint32_t count;
  uint32_t elem = under_arrays(m, type, &count, &is_array);
  size_t at = def_of(m, elem);
  uint32_t op = at ? opcode_at(m, at) : 0;
  if (sc == SC_STORAGE_BUFFER) {
    *out = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    return op == OP_TYPE_STRUCT;
  }
  if (sc == SC_UNIFORM) {
    if (op != OP_TYPE_STRUCT) return false;
    *out = decoration(m, elem, UINT32_MAX, DEC_BUFFER_BLOCK, NULL) ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
                                                                   : VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
    return true;
  }
  if (sc != SC_UNIFORM_CONSTANT) return false;
  switch (op) {
  case OP_TYPE_IMAGE: {
    bool texel = operand(m, at, 2, 0) == DIM_BUFFER, storage = operand(m, at, 6, 0) == 2;
    *out = storage ? (texel ? VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER : VK_DESCRIPTOR_TYPE_STORAGE_IMAGE)
                   : (texel ? VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER : VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE);
    return true;
  }
  case OP_TYPE_SAMPLED_IMAGE: {
    size_t image = def_of(m, operand(m, at, 1, 0));
    bool texel = image && opcode_at(m, image) == OP_TYPE_IMAGE && operand(m, image, 2, 0) == DIM_BUFFER;
    *out = texel ? VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER : VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
    return true;
  }
  case OP_TYPE_SAMPLER: *out = VK_DESCRIPTOR_TYPE_SAMPLER; return true;
  case OP_TYPE_ACCELERATION_STRUCTURE: *out = VK_DESCRIPTOR_TYPE_ACCELERATION_STRUCTURE_KHR; return true;
  default: return false;
  }
}

/* A descriptor array's element count: every dimension multiplied (GLSL arrays of arrays
 * of resources are one flat binding); 0 for a runtime-sized array. */
static uint32_t descriptor_count(const module *m, uint32_t type) {
  uint32_t count = 1;
  for (int depth = 0; depth < MAX_NESTING; ++depth) {
    size_t at = def_of(m, type);
    uint32_t op = at ? opcode_at(m, at) : 0, n = 0;
    if (op == OP_TYPE_RUNTIME_ARRAY) return 0;
    if (op != OP_TYPE_ARRAY) return count;
    if (!constant_u32(m, operand(m, at, 2, 0), &n)) n = 0;
    count *= n;
    type = operand(m, at, 1, 0);
  }
  return count;
}

static int binding_order(const void *a, const void *b) {
  const vkds__binding *x = a, *y = b;
  if (x->set != y->set) return x->set < y->set ? -1 : 1;
  if (x->binding != y->binding) return x->binding < y->binding ? -1 : 1;
  return 0;
}

static vkds_result reflect_bindings(const module *m, vkds__reflection *out) {
  uint32_t total = 0;
  for (uint32_t id = 1; id < m->bound; ++id) total += m->used[id];
  if (!total) return VKDS_SUCCESS;
  out->bindings = vkds__alloc_array(m->ctx, total, sizeof *out->bindings);
  if (!out->bindings) return vkds__fail(m->ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "reflecting descriptors");
  for (uint32_t id = 1; id < m->bound; ++id) {
    if (!m->used[id]) continue;
    size_t at = m->def[id];
    uint32_t type = pointee_of(m, at);
    vkds__binding *b = &out->bindings[out->binding_count];
    if (!type || !descriptor_type(m, operand(m, at, 2, UINT32_MAX), type, &b->type)) continue;
    decoration(m, id, UINT32_MAX, DEC_DESCRIPTOR_SET, &b->set);
    decoration(m, id, UINT32_MAX, DEC_BINDING, &b->binding);
    b->count = descriptor_count(m, type);
    /* buffers by their block's name (the instance's when the block has none), the rest
     * by the variable's */
    bool is_array;
    uint32_t count;
    uint32_t elem = under_arrays(m, type, &count, &is_array);
    bool buffer = b->type == VK_DESCRIPTOR_TYPE_STORAGE_BUFFER || b->type == VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
    if (buffer) name_of(m, elem, UINT32_MAX, b->name);
    if (!b->name[0]) name_of(m, id, UINT32_MAX, b->name);
    ++out->binding_count;
  }
  qsort(out->bindings, out->binding_count, sizeof *out->bindings, binding_order);
  return VKDS_SUCCESS;
}

/* The bytes a shared (Workgroup) variable of `type` takes at least: its scalars' sizes
 * summed, no padding; 0 where that is not known (an array sized by an expression of
 * specialization constants), so that only a size certainly over a limit is refused. An
 * array sized by a specialization constant counts its default. Only types defined
 * before the one that names them are followed, and `*steps` bounds the walk: any module
 * is read in bounded time (a fuzzed one may nest structs of structs exponentially). */
static uint64_t least_size(const module *m, uint32_t type, size_t before, uint32_t *steps) {
  size_t at = *steps ? def_of(m, type) : 0;
  if (!at || at >= before) return 0;
  --*steps;
  uint32_t op = opcode_at(m, at), n = 0;
  switch (op) {
  case OP_TYPE_BOOL: return 1;
  case OP_TYPE_INT:
  case OP_TYPE_FLOAT: return operand(m, at, 1, 0) / 8;
  case OP_TYPE_VECTOR:
  case OP_TYPE_MATRIX: return least_size(m, operand(m, at, 1, 0), at, steps) * operand(m, at, 2, 0);
  case OP_TYPE_ARRAY:
    return constant_u32(m, operand(m, at, 2, 0), &n) ? n * least_size(m, operand(m, at, 1, 0), at, steps) : 0;
  case OP_TYPE_STRUCT: {
    uint64_t sum = 0;
    for (uint32_t i = 1; i + 1 < length_at(m, at); ++i) {
      uint64_t part = least_size(m, operand(m, at, i, 0), at, steps);
      if (!part) return 0;
      sum += part;
    }
    return sum;
  }
  default: return 0;
  }
}

/* The entry point's shared memory, at least (vkds__reflection.shared_bytes). */
static void reflect_shared(const module *m, vkds__reflection *out) {
  uint32_t steps = 1u << 16;
  for (uint32_t id = 1; id < m->bound; ++id) {
    if (!m->used[id]) continue;
    size_t at = m->def[id];
    if (operand(m, at, 2, UINT32_MAX) == SC_WORKGROUP) out->shared_bytes += least_size(m, pointee_of(m, at), at, &steps);
  }
}

static vkds_result reflect_specs(const module *m, vkds__reflection *out) {
  uint32_t n = 0;
  for (uint32_t pass = 0; pass < 2; ++pass) {
    for (uint32_t id = 1; id < m->bound; ++id) {
      uint32_t op = def_opcode(m, id), spec;
      if (op != OP_SPEC_CONSTANT && op != OP_SPEC_CONSTANT_TRUE && op != OP_SPEC_CONSTANT_FALSE) continue;
      if (!decoration(m, id, UINT32_MAX, DEC_SPEC_ID, &spec)) continue;
      if (pass == 1) {
        out->specs[out->spec_count].id = spec;
        name_of(m, id, UINT32_MAX, out->specs[out->spec_count].name);
        ++out->spec_count;
      } else {
        ++n;
      }
    }
    if (pass == 0 && !n) return VKDS_SUCCESS;
    if (pass == 0 && !(out->specs = vkds__alloc_array(m->ctx, n, sizeof *out->specs)))
      return vkds__fail(m->ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "reflecting specialization constants");
  }
  return VKDS_SUCCESS;
}

/* ---- the entry ---- */

vkds_result vkds__spirv_reflect(const vkds_context *ctx, const uint32_t *words, size_t word_count, const char *entry,
                                vkds__reflection *out) {
  VKDS__REQUIRE(ctx, out != NULL);
  memset(out, 0, sizeof *out);
  out->alloc_ctx = ctx;
  if (!words || word_count == 0)
    return vkds__fail(ctx, VKDS_ERROR_INVALID_SPIRV, VK_SUCCESS, "the SPIR-V module is empty");
  if (word_count < HEADER_WORDS)
    return vkds__fail(ctx, VKDS_ERROR_INVALID_SPIRV, VK_SUCCESS,
                      "the SPIR-V module is %zu words long, shorter than its 5-word header", word_count);
  if (words[0] != SPIRV_MAGIC)
    return vkds__fail(ctx, VKDS_ERROR_INVALID_SPIRV, VK_SUCCESS,
                      "not a SPIR-V module: magic number 0x%08x, expected 0x%08x", (unsigned)words[0],
                      (unsigned)SPIRV_MAGIC);
  module m = {.ctx = ctx, .w = words, .count = word_count, .bound = words[3], .version = words[1]};
  if (m.bound == 0 || m.bound > MAX_BOUND)
    return vkds__fail(ctx, VKDS_ERROR_INVALID_SPIRV, VK_SUCCESS, "the SPIR-V module's id bound %u is out of range",
                      (unsigned)m.bound);
  m.def = vkds__temp_alloc_array(ctx, m.bound, sizeof *m.def);
  m.used = vkds__temp_alloc(ctx, m.bound);
  vkds_result r = m.def && m.used ? VKDS_SUCCESS
                                  : vkds__fail(ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "reflecting a module");
  size_t entry_at = 0;
  if (r == VKDS_SUCCESS) r = index_module(&m); /* (every instruction's length checked) */
  if (r == VKDS_SUCCESS) out->caps = reflect_caps(&m);
  if (r == VKDS_SUCCESS) r = choose_entry(&m, entry, out, &entry_at);
  if (r == VKDS_SUCCESS) {
    reflect_local_size(&m, operand(&m, entry_at, 1, 0), out);
    r = mark_used(&m, entry_at);
  }
  if (r == VKDS_SUCCESS) r = reflect_push(&m, out);
  if (r == VKDS_SUCCESS) r = reflect_bindings(&m, out);
  if (r == VKDS_SUCCESS) reflect_shared(&m, out);
  if (r == VKDS_SUCCESS) r = reflect_specs(&m, out);
  vkds__free(ctx, m.def);
  vkds__free(ctx, m.used);
  if (r != VKDS_SUCCESS) vkds__reflection_free(out);
  return r;
}

static void free_members(const vkds_context *ctx, vkds__member *m) {
  for (uint32_t i = 0; i < m->member_count; ++i) free_members(ctx, &m->members[i]);
  vkds__free(ctx, m->members);
  m->members = NULL;
  m->member_count = 0;
}

void vkds__reflection_free(vkds__reflection *r) {
  if (!r) return;
  free_members(r->alloc_ctx, &r->push);
  vkds__free(r->alloc_ctx, r->bindings);
  vkds__free(r->alloc_ctx, r->specs);
  memset(r, 0, sizeof *r);
}
