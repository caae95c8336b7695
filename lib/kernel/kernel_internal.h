/* lib/kernel/kernel_internal.h: what the kernel layer's files share: SPIR-V validation and
 * reflection (lib/kernel/spirv.c), GLSL compilation (lib/kernel/glsl.c), kernels and launches
 * (lib/kernel/kernel.c, lib/kernel/launch.c). */
#ifndef VKDS_KERNEL_INTERNAL_H
#define VKDS_KERNEL_INTERNAL_H

#include "internal.h"
#include "cxx_guard.h"

/* ---- validation (lib/kernel/spirv.c, SPIRV-Tools) and reflection (lib/kernel/spirv_reflect.c) ---- */

typedef enum vkds__base_type {
  VKDS__TYPE_UNKNOWN = 0,
  VKDS__TYPE_BOOL,
  VKDS__TYPE_INT,     /* signed, `bits` wide */
  VKDS__TYPE_UINT,    /* unsigned, `bits` wide */
  VKDS__TYPE_FLOAT,   /* `bits` wide */
  VKDS__TYPE_STRUCT,  /* `members` */
  VKDS__TYPE_POINTER, /* a buffer_reference (64-bit device address) */
} vkds__base_type;

/* One member of a block (or the block itself), as the shader lays it out. */
typedef struct vkds__member {
  char name[64];
  vkds__base_type type;
  uint32_t bits;          /* scalar width: 8, 16, 32, 64 (pointers: 64) */
  uint32_t vecsize;       /* 1..4 */
  uint32_t columns;       /* 1 unless a matrix */
  uint32_t offset;        /* bytes from the start of the enclosing struct */
  uint32_t size;          /* bytes of the whole member (all array elements) */
  uint32_t array_count;   /* 0: not an array; else the (outermost) element count */
  uint32_t array_stride;  /* bytes between array elements */
  uint32_t member_count;  /* STRUCT; POINTER to a struct: the pointee's members */
  struct vkds__member *members;
} vkds__member;

typedef struct vkds__binding {
  uint32_t set, binding;
  VkDescriptorType type;
  uint32_t count;
  char name[64];
} vkds__binding;

/* vkds.glsl's vkds_range64: the specialization constant vkds sets (2046: glslang's
 * highest constant_id), 1 for a 64-bit range */
#define VKDS__RANGE_CONSTANT_ID 2046u

typedef struct vkds__spec_constant {
  uint32_t id;
  char name[64];
} vkds__spec_constant;

typedef struct vkds__reflection {
  const vkds_context *alloc_ctx; /* whose allocator the arrays below come from (the ctx given) */
  char entry[64];
  uint32_t local_size[3];
  uint32_t local_size_spec_id[3]; /* UINT32_MAX: a literal, not a specialization constant */
  bool has_push;
  vkds__member push;              /* the push-constant block (a STRUCT) when has_push */
  uint32_t binding_count;
  vkds__binding *bindings;
  uint32_t spec_count;
  vkds__spec_constant *specs;
  uint64_t shared_bytes; /* shared (Workgroup) memory the entry point uses, at least (no padding; 0: none or unknown) */
  uint32_t caps;         /* the module's capabilities that need a device feature: VKDS__CAP_* (internal.h) */
} vkds__reflection;

/* Validates a module with SPIRV-Tools for Vulkan `api_version` (1.2 or 1.3 rules).
 * VKDS_ERROR_INVALID_SPIRV carrying the validator's message. */
vkds_result vkds__spirv_validate(const vkds_context *ctx, const uint32_t *words, size_t word_count,
                                 uint32_t api_version);

/* Reflects the compute entry point `entry` (NULL: the first compute entry point): its
 * work-group size, push-constant block, descriptors, the module's specialization
 * constants and the capabilities that need device features. VKDS_ERROR_INVALID_ARGUMENT
 * when `entry` names none of the module's GLCompute entry points, VKDS_ERROR_INVALID_SPIRV
 * when it has none or the words do not read as a module; VKDS_ERROR_OUT_OF_HOST_MEMORY;
 * never a crash on any input. Free with vkds__reflection_free (also after a failure:
 * nothing is left then). */
vkds_result vkds__spirv_reflect(const vkds_context *ctx, const uint32_t *words, size_t word_count,
                                const char *entry, vkds__reflection *out);
void vkds__reflection_free(vkds__reflection *r);

/* ---- GLSL (lib/kernel/glsl.c, through glslang's C API) ---- */

/* Compiles a GLSL compute shader to SPIR-V for Vulkan `api_version`. `#include
 * "vkds.glsl"` (or <vkds.glsl>) resolves to vkds's device-side header (embedded).
 * `defines` are "NAME" or "NAME=VALUE". On success *words (from ctx's allocator:
 * vkds__free(ctx, *words)) and
 * *word_count are set. Compile errors are VKDS_ERROR_COMPILE with glslang's log, which
 * names the lines. */
vkds_result vkds__glsl_compile(const vkds_context *ctx, const char *source, const char *name,
                               const char *const *defines, uint32_t define_count, uint32_t api_version,
                               uint32_t **words, size_t *word_count);

/* ---- files (lib/kernel/pipeline_cache.c) ---- */

/* A whole file, allocated with ctx's allocator (vkds__free it); NULL (and *size 0) when
 * missing, empty or unreadable. */
void *vkds__read_file(const vkds_context *ctx, const char *path, size_t *size);
/* Writes a whole file through a temporary name and a rename, so that a reader (another
 * process too) never sees half of it. 0, or the errno value of the step that failed (for
 * the warning's reason). */
int vkds__write_file(const char *path, const void *data, size_t size);

/* ---- compiled GLSL on disk (lib/kernel/spirv_cache.c) ---- */

/* The SPIR-V compiled from the GLSL cache key `key` (hash: its hash), from the context's
 * pipeline_cache_dir: true and *words (from ctx's allocator) when a file holds exactly that key.
 * false when there is no folder, no file, or another key in it. */
bool vkds__spirv_cache_load(const vkds_context *ctx, uint64_t hash, const char *key, uint32_t **words,
                            size_t *word_count);
/* Saves it there (nothing when there is no folder; a failure is only logged). */
void vkds__spirv_cache_store(const vkds_context *ctx, uint64_t hash, const char *key, const uint32_t *words,
                             size_t word_count);

/* ---- the argument struct (lib/kernel/args.c) ---- */

/* Where a kernel's described arguments go, from its reflection. */
typedef struct vkds__arg_layout {
  uint32_t first_member; /* 1 when the push block starts with vkds.glsl's vkds_base */
  /* Spilled (vkds.glsl's VKDS_SPILL): the arguments live in a buffer whose address is
   * the push block's vkds_args; `block` is their layout, `size` their bytes. */
  bool spilled;
  const vkds__member *block; /* the push block itself, or vkds_args's pointee; NULL: none */
  uint32_t size;             /* bytes up to the end of the block's last member */
} vkds__arg_layout;

/* The layout of `r`'s arguments; *out points into r. */
void vkds__args_layout(const vkds__reflection *r, vkds__arg_layout *out);

/* Checks an application's description (NULL: none) against the reflected members
 * (kernel creation): VKDS_ERROR_ARGUMENT_MISMATCH naming the member, or
 * VKDS_ERROR_INVALID_ARGUMENT for an unknown kind. `kernel` names it in messages. */
vkds_result vkds__args_check(const vkds_context *ctx, const char *kernel, const vkds__reflection *r,
                             const vkds__arg_layout *l, const vkds_arg *args);

/* Whether a reflected member is a vkds.glsl view: struct { uint64_t address, bytes; }. */
bool vkds__is_view(const vkds__member *m);

enum { VKDS__MAX_BOUND = 32 };

/* The most push-constant bytes a launch packs (lib/kernel/launch.c): 256, what the GPUs
 * we know offer (NVIDIA, AMD, Intel; lavapipe 128). A device that offers more (MoltenVK
 * says 4096) still gets at most this: GLSL kernels with more arguments are spilled to a
 * buffer (vkds.glsl's VKDS_SPILL) as on a device with less. */
enum { VKDS__MAX_PUSH = 256 };

/* One launch's packing: the block's bytes, and the buffers bound as storage buffers. */
typedef struct vkds__arg_pack {
  const vkds_context *ctx;
  const char *kernel;       /* for messages */
  const vkds__device *dev;  /* the launch's device: views must be its buffers */
  unsigned char *target;    /* the block: the push constants, or the spilled arguments (layout size) */
  VkDescriptorBufferInfo bound[VKDS__MAX_BOUND];
  uint32_t bound_binding[VKDS__MAX_BOUND];
  uint32_t bound_count;
} vkds__arg_pack;

/* Packs the application's struct at `src`, as the checked description `args` says, into
 * p->target (and p->bound): VKDS_ERROR_INVALID_ARGUMENT (a NULL or host buffer, a range
 * outside its buffer, an array of structs without its stride), VKDS_ERROR_WRONG_DEVICE,
 * VKDS_ERROR_UNSUPPORTED (views without device addresses), VKDS_ERROR_LIMIT_EXCEEDED. */
/* Where the buffers that a launch's views and bindings name live, and their bytes: the
 * hints a launch gives its policy. */
typedef struct vkds__args_where {
  uint32_t devices; /* bit d: a buffer on device d (0-31) */
  bool far;         /* a buffer on device 32 or above, which has no bit */
  uint64_t bytes;
} vkds__args_where;
/* Adds the buffers of `ctx` that the arguments at src name to *w (garbage in is the
 * packing's to refuse, other contexts' buffers too; this only reads what looks like a
 * buffer). */
void vkds__args_data(const vkds_context *ctx, const vkds_arg *args, const void *src, uint32_t depth,
                     vkds__args_where *w);
vkds_result vkds__args_pack(vkds__arg_pack *p, const vkds__arg_layout *l, const vkds_arg *args, const void *src);

/* ---- kernels (lib/kernel/kernel.c) and launches (lib/kernel/launch.c) ---- */

/* Makes sure `buf` is a mapped, device-addressed buffer of at least `size` bytes on
 * `dev` (grows it; the old one must be unused). For per-launch spilled arguments. */
vkds_result vkds__scratch_reserve(vkds__device *dev, vkds__buffer *buf, VkDeviceAddress *address, VkDeviceSize size);

/* A kernel's pipeline on one device, made on first use. */
typedef struct vkds__pipeline {
  atomic_bool ready;   /* made: read without the kernel's lock */
  bool tried;          /* creation was attempted (and did not run out of memory); `result` says how it went */
  vkds_result result;
  char *why;           /* why creation failed (vkds__alloc'd; NULL: it did not, or no memory) */
  VkShaderModule module;
  VkDescriptorSetLayout set_layout;
  VkPipelineLayout layout;
  VkPipeline pipeline;
} vkds__pipeline;

struct vkds_kernel {
  vkds_context *ctx;
  char name[64];
  uint32_t *words;
  size_t word_count;
  vkds__reflection refl;
  vkds_arg *args;         /* a deep copy of the description; NULL: none */
  vkds__arg_layout layout; /* where the described members go (into refl) */
  vkds_range_type range;
  /* the subgroup size its pipelines require (kernels vkds generates whose shared memory
   * is laid out per subgroup: lib/algorithm/sort.c); 0: the driver's choice. Set before
   * the first pipeline is made. */
  uint32_t subgroup_size;
  uint64_t hash;          /* of the SPIR-V: the default launch key */
  pthread_mutex_t lock;   /* guards `pipelines` */
  vkds__pipeline *pipelines; /* per context device */
  struct vkds_kernel *prev_live, *next_live; /* the context's live_kernels */
};

/* A 64-bit hash of bytes (FNV-1a): cache keys. */
uint64_t vkds__hash(const void *data, size_t n);
/* The vkds.glsl this library embeds (lib/kernel/glsl.c), and its hash (never 0): part of
 * every GLSL cache key, so that a cache folder filled by another vkds compiles again. */
const char *vkds__glsl_header_text(void);
uint64_t vkds__glsl_header_hash(void);

/* Frees the context's GLSL cache (at context destruction). */
void vkds__glsl_cache_free(vkds_context *ctx);

/* The pipeline of `k` on `dev`, made on first use (thread-safe). */
vkds_result vkds__kernel_pipeline(vkds_kernel *k, vkds__device *dev, const vkds__pipeline **out);

#endif
