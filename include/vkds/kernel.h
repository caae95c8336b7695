/* vkds/kernel.h: compute kernels, their arguments, and launching them.
 *
 * A kernel comes from SPIR-V (validated with SPIRV-Tools before any driver sees it) or
 * from GLSL compiled at run time (glslang; `#include "vkds.glsl"` gives the device-side
 * header). Its interface is reflected (vkds's own SPIR-V reader): the argument struct
 * you describe once with vkds_arg is checked against the shader's push-constant block
 * at creation, and each launch packs your C struct into that layout (seed 001:
 * captured arguments become kernel parameters; views are rebuilt on the device by
 * vkds.glsl).
 *
 * The range type (seed 002) is a kernel property: a launch of more work-items than the
 * type counts fails with VKDS_ERROR_ND_RANGE before anything is submitted, and a 32-bit
 * range keeps the kernel's index arithmetic 32-bit (a specialization constant: vkds.glsl's
 * vkds_range64, constant_id 2046, the one id vkds sets; a kernel's own specialization
 * constants keep their defaults, so leave 2046 to vkds). The type also bounds what the
 * work groups cover in each dimension, global rounded up to a multiple of the local
 * size, so that no work-item's index wraps onto another's (past the `i < n` test that
 * keeps the padding out): at most 2^31 in x for I32, 2^32 in x for U32, and 2^32 in y
 * and z for every type (vkds_global_id() is 32-bit). A launch over that is
 * VKDS_ERROR_ND_RANGE too: with 192-wide groups, 2^32 - 1 work-items of a U32 kernel
 * cover 2^32 + 128. Launches
 * larger than the device's maxComputeWorkGroupCount are split into several dispatches;
 * vkds_global_id()/vkds_global_index() in the kernel stay right.
 */
#ifndef VKDS_KERNEL_H
#define VKDS_KERNEL_H

#include "vkds/buffer.h"
#include "vkds/policy.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vkds_kernel vkds_kernel;

typedef enum vkds_range_type {
  VKDS_RANGE_DEFAULT = 0, /* VKDS_RANGE_U32 */
  VKDS_RANGE_I32 = 1,     /* at most 2^31 - 1 work-items */
  VKDS_RANGE_U32 = 2,     /* at most 2^32 - 1 */
  VKDS_RANGE_U64 = 3,     /* 64-bit indices */
} vkds_range_type;

/* ---- describing the argument struct ---- */

typedef enum vkds_arg_kind {
  VKDS_ARG_END = 0,  /* ends a list */
  VKDS_ARG_INT = 1,  /* signed integer scalar or vector (`bits`, `components`) */
  VKDS_ARG_UINT = 2, /* unsigned */
  VKDS_ARG_FLOAT = 3,
  VKDS_ARG_VIEW = 4,    /* a vkds_view, passed by device address (a VKDS_VIEW in vkds.glsl); its
                           offset a multiple of 4 (else VKDS_ERROR_INVALID_ARGUMENT), and of
                           8 for 8-byte elements (not checked: vkds does not know the
                           type the kernel reads; undefined on GPUs otherwise) */
  VKDS_ARG_BINDING = 5, /* a vkds_view bound as the storage buffer at set 0, `binding`; its
                           offset a multiple of minStorageBufferOffsetAlignment (else the
                           launch is VKDS_ERROR_INVALID_ARGUMENT) */
  VKDS_ARG_STRUCT = 6,  /* a nested struct: `members` */
} vkds_arg_kind;

/* One member of the argument struct. Members other than VKDS_ARG_BINDING match the
 * shader's push-constant members one for one, in order (after vkds.glsl's reserved
 * vkds_base). */
typedef struct vkds_arg {
  vkds_arg_kind kind;
  size_t offset;       /* offsetof the member in your C struct */
  uint32_t bits;       /* INT, UINT, FLOAT: 8, 16, 32 or 64; 0: 32 */
  uint32_t components; /* vectors: 2..4; 0 or 1: a scalar */
  uint32_t count;      /* a fixed array of this many; 0: not an array */
  size_t stride;       /* arrays: bytes between elements in your struct; 0: their size
                        * (an array of structs needs it: VKDS_ERROR_INVALID_ARGUMENT) */
  uint32_t binding;    /* VKDS_ARG_BINDING */
  const struct vkds_arg *members; /* VKDS_ARG_STRUCT: ends with VKDS_ARG_END */
  const char *name;               /* for messages; optional */
} vkds_arg;

/* ---- kernels ---- */

typedef struct vkds_kernel_info {
  const uint32_t *spirv; /* vkds_kernel_create: the module */
  size_t spirv_size;     /* in bytes */
  const char *entry;     /* NULL: the first compute entry point */
  const vkds_arg *args;  /* the argument struct; NULL: no arguments */
  vkds_range_type range_type;
  const char *name; /* names the kernel in messages and debug labels; NULL: "kernel" */
} vkds_kernel_info;

/* A kernel from SPIR-V. Errors: VKDS_ERROR_INVALID_ARGUMENT (also an argument whose bits
 * or components are none of those listed at vkds_arg, or an `entry` name that
 * none of the module's GLCompute entry points has: the message lists them),
 * VKDS_ERROR_INVALID_SPIRV (with the validator's message; also a module without any
 * GLCompute entry point, and a spirv_size of 0 or not a multiple of 4),
 * VKDS_ERROR_ARGUMENT_MISMATCH (the description does not
 * match the shader: the message says which member; a storage buffer of set 0 the shader
 * uses that no VKDS_ARG_BINDING describes, or a descriptor of another type),
 * VKDS_ERROR_UNSUPPORTED (a descriptor in a set other than 0, or an array of storage
 * buffers: vkds binds one buffer a binding, in set 0). Pipelines
 * are made per device on first use: a local size, work-group invocations, shared
 * variables or argument block over that device's limits is VKDS_ERROR_LIMIT_EXCEEDED at
 * launches there (each with the reason), and a module that needs a feature vkds could not
 * enable there (8- or 16-bit arguments or storage, 8/16/64-bit types, 64-bit atomics,
 * buffer device addresses) VKDS_ERROR_UNSUPPORTED naming it (on an adopted device only
 * for what its enabled_features tell for certain: shaderFloat64, shaderInt64,
 * shaderInt16 and bufferDeviceAddress), while the kernel still runs on the context's
 * other devices. */
VKDS_API vkds_result vkds_kernel_create(vkds_context *ctx, const vkds_kernel_info *info, vkds_kernel **out);

typedef struct vkds_glsl_info {
  const char *source; /* REQUIRED: a GLSL compute shader */
  const char *const *defines; /* "NAME" or "NAME=VALUE", on one line and not ending in a backslash */
  uint32_t define_count;
  bool debug;         /* defines VKDS_DEBUG: views check their bounds */
  const char *entry;  /* as in vkds_kernel_info */
  const vkds_arg *args;
  vkds_range_type range_type;
  const char *name;
} vkds_glsl_info;

/* A kernel from GLSL, compiled with glslang at run time; the SPIR-V is cached in the
 * context by a hash of the source and options, so a second identical call compiles
 * nothing (also one made by another thread at the same time: it waits for the first's
 * compile), and with pipeline_cache_dir also on disk, so a new process compiles
 * nothing. The context keeps each source's SPIR-V until it is destroyed, also after
 * vkds_kernel_destroy (a few KiB a source: an application that makes kernels from ever
 * new generated sources grows by that much each). VKDS_ERROR_COMPILE carries glslang's log, with line numbers (also a
 * local_size past what glslang itself allows a dimension, gl_MaxComputeWorkGroupSize:
 * 1024 in x and y, 64 in z; within it, one past the device's limits is
 * VKDS_ERROR_LIMIT_EXCEEDED at launches, as for vkds_kernel_create). A compile that
 * succeeds with warnings logs them, with line numbers, at VKDS_LOG_WARN through the
 * context's logger (once: a cached kernel compiles nothing).
 * glslang runs on a thread of vkds's own (256 MiB of stack, reserved: its recursion is as
 * deep as the source's expressions), and a source longer than 256 KiB after
 * preprocessing is VKDS_ERROR_LIMIT_EXCEEDED. The source is code: vkds does not bound
 * what its macros expand to, or how long validation takes (RELIABILITY.md). */
VKDS_API vkds_result vkds_kernel_from_glsl(vkds_context *ctx, const vkds_glsl_info *info, vkds_kernel **out);

/* Destroys a kernel; launches using it must be finished. NULL is a no-op. */
VKDS_API void vkds_kernel_destroy(vkds_kernel *k);

typedef struct vkds_kernel_reflection {
  uint32_t local_size[3];
  uint32_t push_constant_size; /* bytes of the push block the shader declares, vkds_base
                                * included; arguments spilled into a buffer (VKDS_SPILL,
                                * past the device's push constants or 256 bytes,
                                * whichever is less) are not in it, only
                                * that buffer's 8-byte address */
  uint32_t binding_count;
  bool uses_vkds_header;       /* the push block starts with vkds.glsl's vkds_base */
} vkds_kernel_reflection;

/* Fills *out with what vkds reflected from the kernel's module. VKDS_SUCCESS, or
 * VKDS_ERROR_INVALID_ARGUMENT for a NULL kernel or out. */
VKDS_API vkds_result vkds_kernel_reflect(const vkds_kernel *k, vkds_kernel_reflection *out);

/* How many GLSL kernels the context compiled with glslang (successfully: a source that
 * does not compile is not counted), and how many it found compiled already: in its
 * memory, or (with pipeline_cache_dir) on disk from an earlier run. Both count the GLSL
 * that vkds_kernel_from_glsl and the algorithms' generated kernels ask for; an
 * algorithm call whose kernel the context already holds (the same algorithm, types,
 * views and operator text as an earlier call) asks for none, and moves neither count:
 * `compiles` staying put is the sign that repeated calls compile nothing. */
VKDS_API void vkds_context_glsl_stats(const vkds_context *ctx, uint64_t *compiles, uint64_t *cache_hits);

/* ---- launching ---- */

typedef struct vkds_launch_info {
  uint64_t global[3]; /* work-items per dimension; 0 for y or z means 1; x must be > 0 */
  const void *args;   /* your argument struct (as described); may be NULL without args */
  uint64_t key;       /* for policies; 0: the kernel and the size's power of two */
  /* Split dispatches above this many work groups per dimension (to test splitting);
   * 0: the device's maxComputeWorkGroupCount. */
  uint32_t max_groups;
} vkds_launch_info;

/* Selects a resource with the policy, records the kernel there (the pipeline is made
 * on first use on that device) and submits it. The arguments are packed before this
 * returns, so *args may change afterwards. On one resource (a queue) launches and
 * algorithm calls run in the order they were made, each after the writes of the work
 * before it there, as on an in-order queue or a CUDA stream; calls a policy sends to
 * different resources are not ordered (wait for the first's submission first).
 * vkds_cmd_dispatch records no barrier: there the command buffer's owner orders.
 * Errors (nothing is submitted): VKDS_ERROR_INVALID_ARGUMENT (zero-size launch, NULL
 * args with arguments, a NULL buffer), VKDS_ERROR_ND_RANGE, VKDS_ERROR_WRONG_CONTEXT
 * (kernel, policy or a buffer of another context), VKDS_ERROR_WRONG_DEVICE (buffers of
 * several devices; or the policy has no queue on the buffers' device, or is a fixed
 * policy on another: a launch runs only on its buffers' device, vkds_task_info's
 * only_devices, which every built-in policy honours by picking among that device's
 * queues; for devices 32 and above, which have no bit there, the policy is not
 * steered and a pick elsewhere fails so),
 * VKDS_ERROR_LIMIT_EXCEEDED (the device's limits; or more work groups than 65,536
 * dispatches of the device's largest hold, about 2^38 work-items of 64), and the
 * policy's errors. */
VKDS_API vkds_result vkds_launch(vkds_policy *p, vkds_kernel *k, const vkds_launch_info *li, vkds_submission **out);

/* Records the kernel into the application's own command buffer (begun, on a queue of
 * `res`'s device) for embedding: binds, pushes the arguments, dispatches (split as
 * needed), with no barrier before or after (the application orders its command
 * buffer). Same errors as vkds_launch, and VKDS_ERROR_UNSUPPORTED for a kernel whose
 * arguments are spilled to a buffer (more than the device's push constants: vkds_launch
 * keeps that buffer until the launch ends, which a recording cannot tell); on error
 * nothing is recorded. */
VKDS_API vkds_result vkds_cmd_dispatch(VkCommandBuffer cmd, vkds_resource *res, vkds_kernel *k,
                                       const vkds_launch_info *li);

#ifdef __cplusplus
}
#endif
#endif
