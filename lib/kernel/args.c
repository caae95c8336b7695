/* lib/kernel/args.c: a kernel's argument struct, as the application describes it
 * (vkds_arg), against the shader's reflected interface: where the described members go
 * (the push-constant block, or vkds.glsl's spilled block), the check of the description
 * when the kernel is made, and the packing of the struct's values at each launch.
 * Nothing here touches a device: the launch's device only decides which buffers a view
 * may name. fuzz/fuzz_args.c calls these functions as lib/kernel/kernel.c and
 * lib/kernel/launch.c do. */
#include "kernel_internal.h"

#include <stdio.h>
#include <string.h>

/* ---- the argument block ---- */

void vkds__args_layout(const vkds__reflection *r, vkds__arg_layout *out) {
  *out = (vkds__arg_layout){0};
  const vkds__member *push = r->has_push ? &r->push : NULL;
  out->first_member = push && push->member_count && strcmp(push->members[0].name, "vkds_base") == 0;
  /* vkds.glsl's VKDS_SPILL: { vkds_base; VkdsArgs vkds_args; } with the arguments behind the pointer */
  out->spilled = out->first_member && push->member_count == 2 && push->members[1].type == VKDS__TYPE_POINTER &&
                 strcmp(push->members[1].name, "vkds_args") == 0;
  out->block = out->spilled ? &push->members[1] : push;
  for (uint32_t i = 0; out->block && i < out->block->member_count; ++i) {
    const vkds__member *m = &out->block->members[i];
    if (m->offset + m->size > out->size) out->size = m->offset + m->size;
  }
}

/* ---- the check, when the kernel is made ---- */

static const char *kind_name(vkds_arg_kind k) {
  static const char *const names[] = {"end", "int", "uint", "float", "view", "binding", "struct"};
  return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "?";
}

/* A reflected member in the words of a description ("uint32 x1", "float32 x4, 3 columns"),
 * so that a mismatch reads as one: the raw internal type number read as the public
 * enum's (3 is VKDS_ARG_FLOAT there, an unsigned shader member here; a probe). */
static const char *member_words(const vkds__member *m, char *text, size_t size) {
  static const char *const names[] = {"unknown", "bool", "int", "uint", "float", "struct", "pointer"};
  const char *type = (unsigned)m->type < sizeof names / sizeof names[0] ? names[m->type] : "unknown";
  int n = snprintf(text, size, "%s%u x%u", type, m->bits, m->vecsize ? m->vecsize : 1);
  if (m->columns > 1 && n > 0 && (size_t)n < size) snprintf(text + n, size - (size_t)n, ", %u columns", m->columns);
  return text;
}

/* Whether a reflected member is a vkds.glsl view: struct { uint64_t address, bytes; }. */
bool vkds__is_view(const vkds__member *m) {
  return m->type == VKDS__TYPE_STRUCT && m->member_count == 2 && m->members[0].type == VKDS__TYPE_UINT &&
         m->members[0].bits == 64 && m->members[1].type == VKDS__TYPE_UINT && m->members[1].bits == 64;
}

static bool has_storage_binding(const vkds__reflection *r, uint32_t binding) {
  for (uint32_t i = 0; i < r->binding_count; ++i)
    if (r->bindings[i].set == 0 && r->bindings[i].binding == binding &&
        r->bindings[i].type == VK_DESCRIPTOR_TYPE_STORAGE_BUFFER)
      return true;
  return false;
}

/* Checks a description against the members of `block` from `first` on. */
static vkds_result check_args(const vkds_context *ctx, const char *kernel, const vkds__reflection *refl,
                              const vkds_arg *args, const vkds__member *block, uint32_t first, const char *where) {
  uint32_t m = first;
  for (size_t i = 0; args && args[i].kind != VKDS_ARG_END; ++i) {
    const vkds_arg *a = &args[i];
    const char *an = a->name ? a->name : kind_name(a->kind);
    if (a->kind == VKDS_ARG_BINDING) {
      if (!has_storage_binding(refl, a->binding))
        return vkds__fail(ctx, VKDS_ERROR_ARGUMENT_MISMATCH, VK_SUCCESS,
                          "kernel '%s', %s argument %zu (%s): the shader has no storage buffer at set 0, binding %u",
                          kernel, where, i, an, a->binding);
      /* (two for one binding: the last won, and the first buffer was silently left out; a probe) */
      for (size_t j = 0; j < i; ++j)
        if (args[j].kind == VKDS_ARG_BINDING && args[j].binding == a->binding)
          return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                            "kernel '%s', %s argument %zu (%s): binding %u is also described by argument %zu; each "
                            "binding once", kernel, where, i, an, a->binding, j);
      continue;
    }
    if (a->kind < VKDS_ARG_INT || a->kind > VKDS_ARG_STRUCT)
      return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "kernel '%s', %s argument %zu: unknown kind %d",
                        kernel, where, i, (int)a->kind);
    /* (a description no shader could match, reported as a mismatch with the shader: a
     * kernels probe) */
    bool scalar = a->kind == VKDS_ARG_INT || a->kind == VKDS_ARG_UINT || a->kind == VKDS_ARG_FLOAT;
    if (scalar && a->bits != 0 && a->bits != 8 && a->bits != 16 && a->bits != 32 && a->bits != 64)
      return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                        "kernel '%s', %s argument %zu (%s): %u bits; numbers have 8, 16, 32 or 64 (0: 32)", kernel, where,
                        i, an, a->bits);
    /* (it read as the shader's struct having members the description lacks: "the
     * description 0"; a new-user probe) */
    if (a->kind == VKDS_ARG_STRUCT && !a->members)
      return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                        "kernel '%s', %s argument %zu (%s): a struct without members (members is NULL; it lists the "
                        "struct's members, ending with VKDS_ARG_END)", kernel, where, i, an);
    if (scalar && a->components > 4)
      return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                        "kernel '%s', %s argument %zu (%s): %u components; vectors have 2 to 4 (0 or 1: a scalar)",
                        kernel, where, i, an, a->components);
    if (!block || m >= block->member_count)
      return vkds__fail(ctx, VKDS_ERROR_ARGUMENT_MISMATCH, VK_SUCCESS,
                        "kernel '%s', %s argument %zu (%s): the shader has only %u argument member%s there",
                        kernel, where, i, an, block ? block->member_count - first : 0,
                        block && block->member_count - first == 1 ? "" : "s");
    const vkds__member *s = &block->members[m++];
    uint32_t count = a->count;
    if (count != s->array_count)
      return vkds__fail(ctx, VKDS_ERROR_ARGUMENT_MISMATCH, VK_SUCCESS,
                        "kernel '%s', %s argument %zu (%s) vs shader member '%s': array of %u vs %u",
                        kernel, where, i, an, s->name, count, s->array_count);
    if (a->kind == VKDS_ARG_VIEW) {
      if (!vkds__is_view(s))
        return vkds__fail(ctx, VKDS_ERROR_ARGUMENT_MISMATCH, VK_SUCCESS,
                          "kernel '%s', %s argument %zu (%s) is a view, shader member '%s' is not (declare it with "
                          "VKDS_VIEW)", kernel, where, i, an, s->name);
      continue;
    }
    if (a->kind == VKDS_ARG_STRUCT) {
      if (s->type != VKDS__TYPE_STRUCT || vkds__is_view(s))
        return vkds__fail(ctx, VKDS_ERROR_ARGUMENT_MISMATCH, VK_SUCCESS,
                          "kernel '%s', %s argument %zu (%s) is a struct, shader member '%s' is not", kernel, where, i,
                          an, s->name);
      /* each element is packed from offset + e * stride: vkds cannot know a C struct's size */
      if (a->count > 1 && !a->stride)
        return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                          "kernel '%s', %s argument %zu (%s): an array of structs needs its stride", kernel, where, i,
                          an);
      char inner[128];
      snprintf(inner, sizeof inner, "%s.%s", where, s->name);
      VKDS_CHECK(check_args(ctx, kernel, refl, a->members, s, 0, inner));
      uint32_t described = 0;
      for (const vkds_arg *x = a->members; x && x->kind != VKDS_ARG_END; ++x) described += x->kind != VKDS_ARG_BINDING;
      if (described != s->member_count)
        return vkds__fail(ctx, VKDS_ERROR_ARGUMENT_MISMATCH, VK_SUCCESS,
                          "kernel '%s', %s: struct '%s' has %u members in the shader, %u described", kernel, where,
                          s->name, s->member_count, described);
      continue;
    }
    vkds__base_type want = a->kind == VKDS_ARG_INT ? VKDS__TYPE_INT : a->kind == VKDS_ARG_UINT ? VKDS__TYPE_UINT
                                                                                                 : VKDS__TYPE_FLOAT;
    uint32_t bits = a->bits ? a->bits : 32, comps = a->components ? a->components : 1;
    if (s->type != want || s->bits != bits || s->vecsize != comps || s->columns > 1) {
      char shader[64];
      return vkds__fail(ctx, VKDS_ERROR_ARGUMENT_MISMATCH, VK_SUCCESS,
                        "kernel '%s', %s argument %zu (%s: %s%u x%u) does not match shader member '%s' (%s)", kernel,
                        where, i, an, kind_name(a->kind), bits, comps, s->name, member_words(s, shader, sizeof shader));
    }
  }
  if (block && m != block->member_count)
    return vkds__fail(ctx, VKDS_ERROR_ARGUMENT_MISMATCH, VK_SUCCESS,
                      "kernel '%s', %s: the shader has %u argument member%s, the description %u", kernel, where,
                      block->member_count - first, block->member_count - first == 1 ? "" : "s", m - first);
  return VKDS_SUCCESS;
}

/* Whether the description (nested structs included) binds `binding`. */
static bool describes_binding(const vkds_arg *args, uint32_t binding) {
  for (size_t i = 0; args && args[i].kind != VKDS_ARG_END; ++i) {
    if (args[i].kind == VKDS_ARG_BINDING && args[i].binding == binding) return true;
    if (args[i].kind == VKDS_ARG_STRUCT && describes_binding(args[i].members, binding)) return true;
  }
  return false;
}

vkds_result vkds__args_check(const vkds_context *ctx, const char *kernel, const vkds__reflection *r,
                             const vkds__arg_layout *l, const vkds_arg *args) {
  /* first, as what a description cannot mend (refused only where the pipeline was made:
   * the kernel was made, and each launch failed; a new-user probe) */
  for (uint32_t i = 0; i < r->binding_count; ++i)
    if (r->bindings[i].set != 0)
      return vkds__fail(ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS,
                        "kernel '%s': binding %u ('%s') is in descriptor set %u; vkds binds set 0 only (or pass the "
                        "buffer as a view)", kernel, r->bindings[i].binding, r->bindings[i].name, r->bindings[i].set);
  VKDS_CHECK(check_args(ctx, kernel, r, args, l->block, l->spilled ? 0 : l->first_member,
                        l->spilled ? "spilled" : "push-constant"));
  /* every descriptor of set 0 the shader uses must be bound at each launch: one the
   * description leaves out would be read unbound (a validation error, then anything) */
  for (uint32_t i = 0; i < r->binding_count; ++i) {
    const vkds__binding *b = &r->bindings[i];
    if (b->type != VK_DESCRIPTOR_TYPE_STORAGE_BUFFER)
      return vkds__fail(ctx, VKDS_ERROR_ARGUMENT_MISMATCH, VK_SUCCESS,
                        "kernel '%s': binding %u ('%s') is not a storage buffer; vkds binds storage buffers only",
                        kernel, b->binding, b->name);
    /* (an array of buffers had its first element bound only: the others were read
     * unbound; a probe) */
    if (b->count != 1)
      return vkds__fail(ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS,
                        "kernel '%s': binding %u ('%s') is an array of %u storage buffers; vkds binds one buffer a "
                        "binding (use a binding each, or views passed as arguments)",
                        kernel, b->binding, b->name, b->count);
    if (!describes_binding(args, b->binding))
      return vkds__fail(ctx, VKDS_ERROR_ARGUMENT_MISMATCH, VK_SUCCESS,
                        "kernel '%s': the shader uses the storage buffer at set 0, binding %u ('%s'), which no "
                        "VKDS_ARG_BINDING argument describes", kernel, b->binding, b->name);
  }
  return VKDS_SUCCESS;
}

/* ---- packing, at each launch ---- */

/* Resolves a view against the launch's device: address and length. */
static vkds_result resolve_view(const vkds__arg_pack *p, const vkds_view *v, const char *what, uint64_t *address,
                                uint64_t *bytes) {
  if (!v->buffer)
    return vkds__fail(p->ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "launch of kernel '%s': %s has a NULL buffer",
                      p->kernel, what);
  if (v->buffer->kind == VKDS_MEMORY_HOST)
    return vkds__fail(p->ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "launch of kernel '%s': %s is plain host memory, which a device cannot see (upload it to a "
                      "device buffer, or import it with vkds_buffer_import_host)", p->kernel, what);
  if (v->buffer->dev->ctx != p->ctx)
    return vkds__fail(p->ctx, VKDS_ERROR_WRONG_CONTEXT, VK_SUCCESS,
                      "launch of kernel '%s': %s's buffer belongs to another context", p->kernel, what);
  if (v->buffer->dev != p->dev)
    return vkds__fail(p->ctx, VKDS_ERROR_WRONG_DEVICE, VK_SUCCESS,
                      "launch of kernel '%s': %s's buffer lives on device %u, the launch runs on device %u", p->kernel,
                      what, v->buffer->dev->index, p->dev->index);
  uint64_t size = v->buffer->size;
  uint64_t n = v->bytes ? v->bytes : (v->offset <= size ? size - v->offset : 0);
  if (v->offset > size || n > size - v->offset)
    return vkds__fail(p->ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "launch of kernel '%s': %s (offset %llu, %llu bytes) is outside its %llu-byte buffer", p->kernel,
                      what, (unsigned long long)v->offset, (unsigned long long)n, (unsigned long long)size);
  *address = v->buffer->address ? v->buffer->address + v->offset : 0;
  *bytes = n;
  return VKDS_SUCCESS;
}

/* Packs the described arguments (at `src`) into the block `block` (at `dst` in the
 * target), pairing them with its members from `first` on. The description was checked
 * against the shader when the kernel was made. */
static vkds_result pack(vkds__arg_pack *p, const vkds_arg *args, const unsigned char *src, const vkds__member *block,
                        uint32_t first, uint32_t dst) {
  uint32_t m = first;
  for (size_t i = 0; args && args[i].kind != VKDS_ARG_END; ++i) {
    const vkds_arg *a = &args[i];
    if (a->kind == VKDS_ARG_BINDING) {
      uint64_t address, bytes;
      /* (by its binding: the kernel's copy of the description keeps no names, so this
       * said "a view bound with VKDS_ARG_BINDING has a NULL buffer", whichever it was; a
       * new-user probe) */
      char what[48];
      snprintf(what, sizeof what, "the view bound at binding %u", a->binding);
      VKDS_CHECK(resolve_view(p, (const vkds_view *)(src + a->offset), what, &address, &bytes));
      if (p->bound_count == VKDS__MAX_BOUND)
        return vkds__fail(p->ctx, VKDS_ERROR_LIMIT_EXCEEDED, VK_SUCCESS, "more than %d bound buffers", VKDS__MAX_BOUND);
      const vkds_view *v = (const vkds_view *)(src + a->offset);
      uint64_t align = p->dev->facts.props.properties.limits.minStorageBufferOffsetAlignment;
      if (align > 1 && (v->buffer->offset + v->offset) % align)
        return vkds__fail(p->ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                          "launch of kernel '%s': the buffer bound at binding %u starts at offset %llu, which is not "
                          "a multiple of the device's minStorageBufferOffsetAlignment (%llu)",
                          p->kernel, a->binding, (unsigned long long)v->offset, (unsigned long long)align);
      /* (an empty view, or one past the device's range, went to the descriptor as it was:
       * a validation error and success; a probe) */
      uint32_t range = p->dev->facts.props.properties.limits.maxStorageBufferRange;
      if (bytes == 0 || bytes > range)
        return vkds__fail(p->ctx, bytes ? VKDS_ERROR_LIMIT_EXCEEDED : VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                          "launch of kernel '%s': the buffer bound at binding %u is %llu bytes; a bound buffer takes 1 "
                          "to the device's maxStorageBufferRange (%u) bytes (larger data: pass a view as an argument)",
                          p->kernel, a->binding, (unsigned long long)bytes, range);
      p->bound[p->bound_count] = (VkDescriptorBufferInfo){.buffer = v->buffer->vk, .offset = v->buffer->offset + v->offset,
                                                          .range = bytes};
      p->bound_binding[p->bound_count++] = a->binding;
      continue;
    }
    const vkds__member *s = &block->members[m++];
    uint32_t elements = a->count ? a->count : 1;
    for (uint32_t e = 0; e < elements; ++e) {
      size_t natural = a->kind == VKDS_ARG_VIEW ? sizeof(vkds_view)
                       : a->kind == VKDS_ARG_STRUCT ? 0
                                                    : (size_t)(a->bits ? a->bits : 32) / 8 * (a->components ? a->components : 1);
      const unsigned char *from = src + a->offset + e * (a->stride ? a->stride : natural);
      uint32_t to = dst + s->offset + e * s->array_stride;
      if (a->kind == VKDS_ARG_STRUCT && a->count > 1 && !a->stride) /* refused when the kernel was made */
        return vkds__fail(p->ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                          "kernel '%s': an array of structs needs its stride", p->kernel);
      if (a->kind == VKDS_ARG_VIEW) {
        uint64_t address, bytes;
        VKDS_CHECK(resolve_view(p, (const vkds_view *)from, s->name, &address, &bytes));
        /* vkds.glsl's views promise 4-byte aligned addresses (buffer_reference_align):
         * one at offset 2 was taken and read from byte 2 on lavapipe, and is undefined on
         * GPUs (a memory probe) */
        if (((const vkds_view *)from)->offset % 4)
          return vkds__fail(p->ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                            "launch of kernel '%s': %s's offset %llu is not a multiple of 4 (a view's elements are "
                            "4-byte aligned, 8-byte elements should be 8-byte aligned)",
                            p->kernel, s->name, (unsigned long long)((const vkds_view *)from)->offset);
        if (!address)
          return vkds__fail(p->ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS,
                            "kernel '%s': views need buffer device address, which this device lacks", p->kernel);
        memcpy(p->target + to + s->members[0].offset, &address, 8);
        memcpy(p->target + to + s->members[1].offset, &bytes, 8);
      } else if (a->kind == VKDS_ARG_STRUCT) {
        VKDS_CHECK(pack(p, a->members, from, s, 0, to));
      } else {
        memcpy(p->target + to, from, natural);
      }
    }
  }
  return VKDS_SUCCESS;
}

void vkds__args_data(const vkds_context *ctx, const vkds_arg *args, const void *src, uint32_t depth,
                     vkds__args_where *w) {
  for (size_t i = 0; args && src && depth < 8 && args[i].kind != VKDS_ARG_END; ++i) {
    const vkds_arg *a = &args[i];
    if (a->kind != VKDS_ARG_VIEW && a->kind != VKDS_ARG_BINDING && a->kind != VKDS_ARG_STRUCT) continue;
    uint32_t elements = a->kind == VKDS_ARG_BINDING || !a->count ? 1 : a->count;
    if (a->kind == VKDS_ARG_STRUCT && elements > 1 && !a->stride) continue; /* (refused when the kernel was made) */
    for (uint32_t e = 0; e < elements; ++e) {
      const unsigned char *from = (const unsigned char *)src + a->offset + e * (a->stride ? a->stride : sizeof(vkds_view));
      if (a->kind == VKDS_ARG_STRUCT) {
        vkds__args_data(ctx, a->members, from, depth + 1, w);
        continue;
      }
      const vkds_view *v = (const vkds_view *)from;
      if (!v->buffer || v->buffer->kind == VKDS_MEMORY_HOST || v->buffer->dev->ctx != ctx) continue;
      uint64_t size = v->buffer->size;
      uint32_t bit = vkds__device_bit(v->buffer->dev->index);
      if (bit) w->devices |= bit;
      else w->far = true;
      w->bytes += v->bytes ? v->bytes : v->offset < size ? size - v->offset : 0;
    }
  }
}

vkds_result vkds__args_pack(vkds__arg_pack *p, const vkds__arg_layout *l, const vkds_arg *args, const void *src) {
  return pack(p, args, src, l->block, l->spilled ? 0 : l->first_member, 0);
}
