/* lib/kernel/spirv.c: SPIR-V validation (SPIRV-Tools) and compute-interface reflection
 * (SPIRV-Cross), both through their C APIs. Every failure goes through vkds__fail;
 * neither library is allowed to print (SPIRV-Tools reports through the diagnostic,
 * SPIRV-Cross through a silent error callback and its last-error string). */
#include "kernel_internal.h"

#include <spirv-tools/libspirv.h>
#include <spirv_cross/spirv_cross_c.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  SPIRV_MAGIC = 0x07230203u,
  SPIRV_HEADER_WORDS = 5,
  /* Block nesting deeper than this is surely hostile input; a cap keeps the recursion
   * in describe_members bounded whatever the module says. */
  MAX_NESTING = 64,
};

/* Copies a name into one of the reflection's fixed 64-byte fields, truncating. */
static void copy_name(char dst[64], const char *src) {
  size_t n = src ? strlen(src) : 0;
  if (n > 63) n = 63;
  if (n) memcpy(dst, src, n);
  dst[n] = '\0';
}

/* What both entry points check first: neither library should be handed something
 * that is not even a SPIR-V module (SPIRV-Tools would also accept a byte-swapped
 * module, which no Vulkan driver takes). */
static vkds_result check_header(const vkds_context *ctx, const uint32_t *words, size_t word_count) {
  if (!words || word_count == 0)
    return vkds__fail(ctx, VKDS_ERROR_INVALID_SPIRV, VK_SUCCESS, "the SPIR-V module is empty");
  if (word_count < SPIRV_HEADER_WORDS)
    return vkds__fail(ctx, VKDS_ERROR_INVALID_SPIRV, VK_SUCCESS,
                      "the SPIR-V module is %zu words long, shorter than its 5-word header",
                      word_count);
  if (words[0] != SPIRV_MAGIC)
    return vkds__fail(ctx, VKDS_ERROR_INVALID_SPIRV, VK_SUCCESS,
                      "not a SPIR-V module: magic number 0x%08x, expected 0x%08x",
                      (unsigned)words[0], (unsigned)SPIRV_MAGIC);
  return VKDS_SUCCESS;
}

/* ---- validation ---- */

/* The validator's text with trailing newlines removed, so that it ends the error message
 * cleanly. Writes into buf. */
static const char *diagnostic_text(spv_diagnostic diag, spv_result_t sr, char *buf, size_t size) {
  if (!diag || !diag->error || !diag->error[0]) {
    snprintf(buf, size, "the validator gave no reason (spv_result_t %d)", (int)sr);
    return buf;
  }
  size_t n = strlen(diag->error);
  while (n && (diag->error[n - 1] == '\n' || diag->error[n - 1] == '\r')) --n;
  if (n >= size) n = size - 1;
  memcpy(buf, diag->error, n);
  buf[n] = '\0';
  return buf;
}

vkds_result vkds__spirv_validate(const vkds_context *ctx, const uint32_t *words, size_t word_count,
                                 uint32_t api_version) {
  vkds_result r = check_header(ctx, words, word_count);
  if (r != VKDS_SUCCESS) return r;

  /* SPIRV-Tools (2023.1) knows Vulkan 1.0-1.3: anything newer than 1.2 gets 1.3 rules;
   * vkds requires at least 1.2, so older versions get 1.2 rules too. */
  bool v13 = VK_API_VERSION_MAJOR(api_version) > 1 ||
             (VK_API_VERSION_MAJOR(api_version) == 1 && VK_API_VERSION_MINOR(api_version) >= 3);
  spv_context sc = spvContextCreate(v13 ? SPV_ENV_VULKAN_1_3 : SPV_ENV_VULKAN_1_2);
  spv_validator_options opts = spvValidatorOptionsCreate();
  if (!sc || !opts) {
    if (opts) spvValidatorOptionsDestroy(opts);
    if (sc) spvContextDestroy(sc);
    return vkds__fail(ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS,
                      "SPIR-V validation: cannot create the validator");
  }
  /* The block-layout rules vkds's argument packing relies on: the environment's own
   * (Vulkan 1.1+ makes relaxed block layout core, which the validator applies by
   * itself); scalar and standard uniform-buffer layouts are device features that vkds
   * does not enable, so a module needing them must fail here, not in the driver. */
  spvValidatorOptionsSetRelaxBlockLayout(opts, false);
  spvValidatorOptionsSetUniformBufferStandardLayout(opts, false);
  spvValidatorOptionsSetScalarBlockLayout(opts, false);

  spv_const_binary_t binary = {.code = words, .wordCount = word_count};
  spv_diagnostic diag = NULL;
  spv_result_t sr = spvValidateWithOptions(sc, opts, &binary, &diag);
  if (sr != SPV_SUCCESS) {
    char text[900];
    r = vkds__fail(ctx, VKDS_ERROR_INVALID_SPIRV, VK_SUCCESS,
                   "SPIR-V validation (Vulkan 1.%d rules) failed: %s", v13 ? 3 : 2,
                   diagnostic_text(diag, sr, text, sizeof text));
  }
  spvDiagnosticDestroy(diag);
  spvValidatorOptionsDestroy(opts);
  spvContextDestroy(sc);
  return r;
}

/* ---- reflection ---- */

typedef struct reflector {
  const vkds_context *ctx;
  spvc_context sc;
  spvc_compiler comp;
} reflector;

/* SPIRV-Cross reports through the context's last-error string; without a callback this
 * version keeps quiet too, but a callback makes "never prints" not depend on that. */
static void cross_quiet(void *user, const char *error) { (void)user, (void)error; }

static vkds_result cross_fail(const reflector *x, spvc_result sr, const char *what) {
  const char *why = spvc_context_get_last_error_string(x->sc);
  if (sr == SPVC_ERROR_OUT_OF_MEMORY)
    return vkds__fail(x->ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "SPIRV-Cross: %s: %s",
                      what, why && *why ? why : "out of memory");
  return vkds__fail(x->ctx, VKDS_ERROR_INVALID_SPIRV, VK_SUCCESS, "SPIRV-Cross: %s: %s", what,
                    why && *why ? why : "failed");
}

static const char *model_name(SpvExecutionModel m) {
  switch (m) {
  case SpvExecutionModelVertex: return "Vertex";
  case SpvExecutionModelTessellationControl: return "TessellationControl";
  case SpvExecutionModelTessellationEvaluation: return "TessellationEvaluation";
  case SpvExecutionModelGeometry: return "Geometry";
  case SpvExecutionModelFragment: return "Fragment";
  case SpvExecutionModelGLCompute: return "GLCompute";
  case SpvExecutionModelKernel: return "Kernel";
  default: return "other";
  }
}

/* "main (GLCompute), vs (Vertex)": for the error that names what the module has. */
static void list_entry_points(const spvc_entry_point *eps, size_t n, char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < n && used < size; ++i) {
    int w = snprintf(buf + used, size - used, "%s%s (%s)", i ? ", " : "", eps[i].name,
                     model_name(eps[i].execution_model));
    if (w < 0) break;
    used += (size_t)w;
  }
  if (n == 0) snprintf(buf, size, "none");
}

static vkds_result choose_entry(reflector *x, const char *entry, vkds__reflection *out) {
  const spvc_entry_point *eps = NULL;
  size_t n = 0;
  spvc_result sr = spvc_compiler_get_entry_points(x->comp, &eps, &n);
  if (sr != SPVC_SUCCESS) return cross_fail(x, sr, "listing entry points");

  const spvc_entry_point *found = NULL;
  for (size_t i = 0; i < n && !found; ++i)
    if (eps[i].execution_model == SpvExecutionModelGLCompute && (!entry || !strcmp(eps[i].name, entry)))
      found = &eps[i];
  if (!found) {
    char names[512];
    list_entry_points(eps, n, names, sizeof names);
    if (entry)
      return vkds__fail(x->ctx, VKDS_ERROR_INVALID_SPIRV, VK_SUCCESS,
                        "no GLCompute entry point \"%s\" in the module; it has: %s", entry, names);
    return vkds__fail(x->ctx, VKDS_ERROR_INVALID_SPIRV, VK_SUCCESS,
                      "the module has no GLCompute entry point; it has: %s", names);
  }
  /* The name goes to VkPipelineShaderStageCreateInfo::pName: truncating it would name
   * another (or no) entry point. */
  if (strlen(found->name) >= sizeof out->entry)
    return vkds__fail(x->ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS,
                      "entry point name \"%.40s...\" is longer than vkds's limit of %zu bytes",
                      found->name, sizeof out->entry - 1);
  copy_name(out->entry, found->name);
  sr = spvc_compiler_set_entry_point(x->comp, found->name, SpvExecutionModelGLCompute);
  if (sr != SPVC_SUCCESS) return cross_fail(x, sr, "selecting the entry point");
  return VKDS_SUCCESS;
}

/* The work-group size. Three ways to state it: LocalSize literals; a WorkgroupSize
 * built-in constant, which overrides LocalSize and whose components may be
 * specialization constants; or LocalSizeId. SPIRV-Cross names the spec-constant
 * components of the last two; the rest come from the built-in or LocalSize. */
static void reflect_local_size(reflector *x, vkds__reflection *out) {
  spvc_specialization_constant spec[3];
  spvc_constant_id builtin =
      spvc_compiler_get_work_group_size_specialization_constants(x->comp, &spec[0], &spec[1], &spec[2]);
  spvc_constant composite = builtin ? spvc_compiler_get_constant_handle(x->comp, builtin) : NULL;
  for (unsigned i = 0; i < 3; ++i) {
    out->local_size_spec_id[i] = UINT32_MAX;
    out->local_size[i] =
        spvc_compiler_get_execution_mode_argument_by_index(x->comp, SpvExecutionModeLocalSize, i);
    if (!spec[i].id) {
      if (composite) out->local_size[i] = spvc_constant_get_scalar_u32(composite, 0, i);
    } else if (spvc_compiler_has_decoration(x->comp, spec[i].id, SpvDecorationSpecId)) {
      spvc_constant c = spvc_compiler_get_constant_handle(x->comp, spec[i].id);
      if (c) out->local_size[i] = spvc_constant_get_scalar_u32(c, 0, 0); /* its default */
      out->local_size_spec_id[i] = spec[i].constant_id;
    }
    /* else: computed from spec constants (OpSpecConstantOp): no single spec id to
     * report, and SPIRV-Cross cannot evaluate it; LocalSize's literal stands in. */
  }
}

/* An array dimension's length: a literal or a (specialization) constant's default. */
static uint32_t array_length(reflector *x, spvc_type t, unsigned dim) {
  SpvId v = spvc_type_get_array_dimension(t, dim);
  if (spvc_type_array_dimension_is_literal(t, dim)) return v;
  spvc_constant c = spvc_compiler_get_constant_handle(x->comp, v);
  return c ? spvc_constant_get_scalar_u32(c, 0, 0) : 0;
}

/* In this SPIRV-Cross (2021.01.15, C API 0.54) a PhysicalStorageBuffer pointer
 * (buffer_reference) is a copy of its pointee's type with SPIRType::pointer set: the
 * basetype says STRUCT and the pointee's members are all there, and the C API does not
 * expose the pointer flag. Only SPIRType::storage tells it apart: OpTypeStruct and the
 * other value types keep StorageClassGeneric, a pointer type (and an array of them)
 * carries its storage class. */
static bool is_device_pointer(spvc_type t) {
  return spvc_type_get_storage_class(t) == SpvStorageClassPhysicalStorageBuffer;
}

static vkds__base_type base_type(spvc_basetype b) {
  switch (b) {
  case SPVC_BASETYPE_BOOLEAN: return VKDS__TYPE_BOOL;
  case SPVC_BASETYPE_INT8:
  case SPVC_BASETYPE_INT16:
  case SPVC_BASETYPE_INT32:
  case SPVC_BASETYPE_INT64: return VKDS__TYPE_INT;
  case SPVC_BASETYPE_UINT8:
  case SPVC_BASETYPE_UINT16:
  case SPVC_BASETYPE_UINT32:
  case SPVC_BASETYPE_UINT64: return VKDS__TYPE_UINT;
  case SPVC_BASETYPE_FP16:
  case SPVC_BASETYPE_FP32:
  case SPVC_BASETYPE_FP64: return VKDS__TYPE_FLOAT;
  case SPVC_BASETYPE_STRUCT: return VKDS__TYPE_STRUCT;
  default: return VKDS__TYPE_UNKNOWN;
  }
}

static vkds_result describe_members(reflector *x, spvc_type st, vkds__member *parent, unsigned depth);

/* Member `i` of struct type `st` into *m. */
static vkds_result describe_member(reflector *x, spvc_type st, unsigned i, vkds__member *m,
                                   unsigned depth) {
  /* Member names and decorations hang off the struct's own id; for an array of structs
   * SPIRV-Cross's type keeps that id as its base type id. */
  spvc_type_id st_id = spvc_type_get_base_type_id(st);
  spvc_type mt = spvc_compiler_get_type_handle(x->comp, spvc_type_get_member_type(st, i));
  if (!mt) return cross_fail(x, SPVC_ERROR_INVALID_ARGUMENT, "reading a member's type");
  copy_name(m->name, spvc_compiler_get_member_name(x->comp, st_id, i));

  unsigned offset = 0;
  spvc_result sr = spvc_compiler_type_struct_member_offset(x->comp, st, i, &offset);
  if (sr != SPVC_SUCCESS) return cross_fail(x, sr, "reading a member's offset");
  m->offset = offset;

  unsigned dims = spvc_type_get_num_array_dimensions(mt);
  if (dims) {
    /* SPIRV-Cross lists dimensions innermost first: the outermost is the last */
    m->array_count = array_length(x, mt, dims - 1);
    unsigned stride = 0;
    sr = spvc_compiler_type_struct_member_array_stride(x->comp, st, i, &stride);
    if (sr != SPVC_SUCCESS) return cross_fail(x, sr, "reading a member's array stride");
    m->array_stride = stride;
  }

  m->vecsize = 1;
  m->columns = 1;
  if (is_device_pointer(mt)) {
    /* a 64-bit device address; for a pointer to one struct (vkds.glsl's spilled
     * arguments) the pointee's layout is described in `members` too */
    m->type = VKDS__TYPE_POINTER;
    m->bits = 64;
    m->size = dims ? m->array_count * m->array_stride : 8;
    if (!dims && spvc_type_get_basetype(mt) == SPVC_BASETYPE_STRUCT) return describe_members(x, mt, m, depth + 1);
    return VKDS_SUCCESS;
  }

  size_t size = 0;
  sr = spvc_compiler_get_declared_struct_member_size(x->comp, st, i, &size);
  if (sr != SPVC_SUCCESS) return cross_fail(x, sr, "reading a member's size");
  m->size = (uint32_t)size;
  m->type = base_type(spvc_type_get_basetype(mt));
  if (m->type == VKDS__TYPE_STRUCT) return describe_members(x, mt, m, depth + 1);
  m->bits = spvc_type_get_bit_width(mt);
  m->vecsize = spvc_type_get_vector_size(mt);
  m->columns = spvc_type_get_columns(mt);
  return VKDS_SUCCESS;
}

/* The members of struct type `st` into parent->members. */
static vkds_result describe_members(reflector *x, spvc_type st, vkds__member *parent, unsigned depth) {
  if (depth > MAX_NESTING)
    return vkds__fail(x->ctx, VKDS_ERROR_INVALID_SPIRV, VK_SUCCESS,
                      "structs nested more than %d deep", MAX_NESTING);
  unsigned n = spvc_type_get_num_member_types(st);
  if (!n) return VKDS_SUCCESS;
  parent->members = calloc(n, sizeof *parent->members);
  if (!parent->members)
    return vkds__fail(x->ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "reflecting a struct");
  parent->member_count = n;
  for (unsigned i = 0; i < n; ++i) {
    vkds_result r = describe_member(x, st, i, &parent->members[i], depth);
    if (r != VKDS_SUCCESS) return r;
  }
  return VKDS_SUCCESS;
}

static vkds_result reflect_push(reflector *x, spvc_resources res, vkds__reflection *out) {
  const spvc_reflected_resource *list = NULL;
  size_t n = 0;
  spvc_result sr = spvc_resources_get_resource_list_for_type(res, SPVC_RESOURCE_TYPE_PUSH_CONSTANT, &list, &n);
  if (sr != SPVC_SUCCESS) return cross_fail(x, sr, "listing push constants");
  if (n == 0) return VKDS_SUCCESS;
  if (n > 1) /* Vulkan: at most one push-constant block per entry point */
    return vkds__fail(x->ctx, VKDS_ERROR_INVALID_SPIRV, VK_SUCCESS,
                      "entry point \"%s\" uses %zu push-constant blocks", out->entry, n);

  spvc_type t = spvc_compiler_get_type_handle(x->comp, list[0].base_type_id);
  if (!t) return cross_fail(x, SPVC_ERROR_INVALID_ARGUMENT, "reading the push-constant type");
  size_t size = 0;
  sr = spvc_compiler_get_declared_struct_size(x->comp, t, &size);
  if (sr != SPVC_SUCCESS) return cross_fail(x, sr, "sizing the push-constant block");

  vkds__member *p = &out->push;
  copy_name(p->name, list[0].name);
  p->type = VKDS__TYPE_STRUCT;
  p->vecsize = 1;
  p->columns = 1;
  p->size = (uint32_t)size; /* the end of its last member: what the push range must cover */
  out->has_push = true;
  return describe_members(x, t, p, 0);
}

/* SPIRV-Cross's resource kinds as descriptor types. Buffer-dimension images are texel
 * buffers in Vulkan, whichever kind SPIRV-Cross files them under. */
static bool descriptor_type(spvc_resource_type kind, spvc_type t, VkDescriptorType *out) {
  bool texel = (kind == SPVC_RESOURCE_TYPE_STORAGE_IMAGE || kind == SPVC_RESOURCE_TYPE_SAMPLED_IMAGE ||
                kind == SPVC_RESOURCE_TYPE_SEPARATE_IMAGE) &&
               spvc_type_get_image_dimension(t) == SpvDimBuffer;
  switch (kind) {
  case SPVC_RESOURCE_TYPE_UNIFORM_BUFFER: *out = VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER; return true;
  case SPVC_RESOURCE_TYPE_STORAGE_BUFFER: *out = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER; return true;
  case SPVC_RESOURCE_TYPE_STORAGE_IMAGE:
    *out = texel ? VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER : VK_DESCRIPTOR_TYPE_STORAGE_IMAGE;
    return true;
  case SPVC_RESOURCE_TYPE_SAMPLED_IMAGE:
    *out = texel ? VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER : VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
    return true;
  case SPVC_RESOURCE_TYPE_SEPARATE_IMAGE:
    *out = texel ? VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER : VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE;
    return true;
  case SPVC_RESOURCE_TYPE_SEPARATE_SAMPLERS: *out = VK_DESCRIPTOR_TYPE_SAMPLER; return true;
  case SPVC_RESOURCE_TYPE_ACCELERATION_STRUCTURE:
    *out = VK_DESCRIPTOR_TYPE_ACCELERATION_STRUCTURE_KHR;
    return true;
  default: return false;
  }
}

static const spvc_resource_type descriptor_kinds[] = {
    SPVC_RESOURCE_TYPE_UNIFORM_BUFFER,  SPVC_RESOURCE_TYPE_STORAGE_BUFFER,
    SPVC_RESOURCE_TYPE_STORAGE_IMAGE,   SPVC_RESOURCE_TYPE_SAMPLED_IMAGE,
    SPVC_RESOURCE_TYPE_SEPARATE_IMAGE,  SPVC_RESOURCE_TYPE_SEPARATE_SAMPLERS,
    SPVC_RESOURCE_TYPE_ACCELERATION_STRUCTURE,
};
enum { DESCRIPTOR_KIND_COUNT = sizeof descriptor_kinds / sizeof descriptor_kinds[0] };

/* A descriptor array's element count: every dimension multiplied (GLSL arrays of arrays
 * of resources are one flat binding); 0 for a runtime-sized array. */
static uint32_t descriptor_count(reflector *x, spvc_type var_type) {
  uint32_t count = 1;
  unsigned dims = spvc_type_get_num_array_dimensions(var_type);
  for (unsigned d = 0; d < dims; ++d) count *= array_length(x, var_type, d);
  return count;
}

static int binding_order(const void *a, const void *b) {
  const vkds__binding *x = a, *y = b;
  if (x->set != y->set) return x->set < y->set ? -1 : 1;
  if (x->binding != y->binding) return x->binding < y->binding ? -1 : 1;
  return 0;
}

static vkds_result reflect_bindings(reflector *x, spvc_resources res, vkds__reflection *out) {
  const spvc_reflected_resource *lists[DESCRIPTOR_KIND_COUNT];
  size_t sizes[DESCRIPTOR_KIND_COUNT], total = 0;
  for (size_t k = 0; k < DESCRIPTOR_KIND_COUNT; ++k) {
    spvc_result sr = spvc_resources_get_resource_list_for_type(res, descriptor_kinds[k], &lists[k], &sizes[k]);
    if (sr != SPVC_SUCCESS) return cross_fail(x, sr, "listing descriptors");
    total += sizes[k];
  }
  if (!total) return VKDS_SUCCESS;
  out->bindings = calloc(total, sizeof *out->bindings);
  if (!out->bindings)
    return vkds__fail(x->ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "reflecting descriptors");

  for (size_t k = 0; k < DESCRIPTOR_KIND_COUNT; ++k) {
    for (size_t i = 0; i < sizes[k]; ++i) {
      const spvc_reflected_resource *rr = &lists[k][i];
      spvc_type base = spvc_compiler_get_type_handle(x->comp, rr->base_type_id);
      spvc_type var_type = spvc_compiler_get_type_handle(x->comp, rr->type_id);
      if (!base || !var_type) return cross_fail(x, SPVC_ERROR_INVALID_ARGUMENT, "reading a descriptor's type");
      vkds__binding *b = &out->bindings[out->binding_count];
      if (!descriptor_type(descriptor_kinds[k], base, &b->type)) continue;
      b->set = spvc_compiler_get_decoration(x->comp, rr->id, SpvDecorationDescriptorSet);
      b->binding = spvc_compiler_get_decoration(x->comp, rr->id, SpvDecorationBinding);
      b->count = descriptor_count(x, var_type);
      copy_name(b->name, rr->name);
      ++out->binding_count;
    }
  }
  /* SPIRV-Cross lists by kind; set/binding order is what a layout is built in */
  qsort(out->bindings, out->binding_count, sizeof *out->bindings, binding_order);
  return VKDS_SUCCESS;
}

static vkds_result reflect_specs(reflector *x, vkds__reflection *out) {
  const spvc_specialization_constant *list = NULL;
  size_t n = 0;
  spvc_result sr = spvc_compiler_get_specialization_constants(x->comp, &list, &n);
  if (sr != SPVC_SUCCESS) return cross_fail(x, sr, "listing specialization constants");
  if (!n) return VKDS_SUCCESS;
  out->specs = calloc(n, sizeof *out->specs);
  if (!out->specs)
    return vkds__fail(x->ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS,
                      "reflecting specialization constants");
  out->spec_count = (uint32_t)n;
  for (size_t i = 0; i < n; ++i) {
    out->specs[i].id = list[i].constant_id;
    copy_name(out->specs[i].name, spvc_compiler_get_name(x->comp, list[i].id));
  }
  return VKDS_SUCCESS;
}

static vkds_result reflect_module(reflector *x, const char *entry, vkds__reflection *out) {
  vkds_result r = choose_entry(x, entry, out);
  if (r != VKDS_SUCCESS) return r;
  reflect_local_size(x, out);

  /* Only what this entry point uses: a module may hold several kernels, each with its
   * own push-constant block and descriptors, and a pipeline layout must match its own. */
  spvc_set active = NULL;
  spvc_resources res = NULL;
  spvc_result sr = spvc_compiler_get_active_interface_variables(x->comp, &active);
  if (sr == SPVC_SUCCESS) sr = spvc_compiler_create_shader_resources_for_active_variables(x->comp, &res, active);
  if (sr != SPVC_SUCCESS) return cross_fail(x, sr, "listing the entry point's resources");

  r = reflect_push(x, res, out);
  if (r == VKDS_SUCCESS) r = reflect_bindings(x, res, out);
  if (r == VKDS_SUCCESS) r = reflect_specs(x, out);
  return r;
}

vkds_result vkds__spirv_reflect(const vkds_context *ctx, const uint32_t *words, size_t word_count,
                                const char *entry, vkds__reflection *out) {
  VKDS__REQUIRE(ctx, out != NULL);
  memset(out, 0, sizeof *out);
  vkds_result r = check_header(ctx, words, word_count);
  if (r != VKDS_SUCCESS) return r;

  reflector x = {.ctx = ctx};
  spvc_result sr = spvc_context_create(&x.sc);
  if (sr != SPVC_SUCCESS)
    return vkds__fail(ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "SPIRV-Cross: cannot create a context");
  spvc_context_set_error_callback(x.sc, cross_quiet, NULL);

  spvc_parsed_ir ir = NULL;
  sr = spvc_context_parse_spirv(x.sc, words, word_count, &ir);
  if (sr != SPVC_SUCCESS) r = cross_fail(&x, sr, "parsing the module");
  else {
    sr = spvc_context_create_compiler(x.sc, SPVC_BACKEND_NONE, ir, SPVC_CAPTURE_MODE_TAKE_OWNERSHIP, &x.comp);
    r = sr == SPVC_SUCCESS ? reflect_module(&x, entry, out) : cross_fail(&x, sr, "reading the module");
  }
  spvc_context_destroy(x.sc); /* frees the IR, the compiler and every list it handed out */
  if (r != VKDS_SUCCESS) vkds__reflection_free(out);
  return r;
}

static void free_members(vkds__member *m) {
  for (uint32_t i = 0; i < m->member_count; ++i) free_members(&m->members[i]);
  free(m->members);
  m->members = NULL;
  m->member_count = 0;
}

void vkds__reflection_free(vkds__reflection *r) {
  if (!r) return;
  free_members(&r->push);
  free(r->bindings);
  free(r->specs);
  memset(r, 0, sizeof *r);
}
