/* vkds/seq.h: sequences, what algorithms read and write, and whether a device can use
 * one in place ("passed directly") or it has to be staged.
 *
 * This is the C form of seeds 000 and 003 (oneDPL's is_passed_directly_in_onedpl_device
 * _policies customization point and its _v trait). A sequence is a small value: an ops
 * table that is its type, an element count and type, and what its type needs (a buffer
 * range, a host pointer, the parts of a view). Views hold pointers to their parts, so
 * the parts must outlive them. Every type answers one question through its ops table,
 * "are you passed directly to this device?"; vkds_seq_is_passed_directly() is the
 * public trait that asks it. The rules of the built-in types:
 *
 *   buffer    a range of a vkds_buffer: on its own device yes, on any other no
 *   mapped    a range of a mapped (host-visible) vkds_buffer: the same
 *   host      plain host memory: no (it is staged), unless the range lies inside host
 *             memory imported into that device with vkds_buffer_import_host and starts
 *             on a multiple of its type's size (4 bytes for the other element types)
 *   counting  start, start+1, ...: yes (computed on the device)
 *   discard   writes that go nowhere: yes
 *   transform an operator over a base: when its base is
 *   zip       tuples of several sequences: when every part is
 *   permutation  source[map[i]]: when both the source and the map are
 *   reverse   base[n-1-i]: when its base is
 *   user types   by their own is_passed_directly, which may ask the trait about parts
 *
 * Constructors never fail loudly: a bad argument gives a sequence whose `ops` is NULL
 * (and sets vkds_last_error_message()); such a sequence is passed directly nowhere and
 * vkds_seq_validate() reports VKDS_ERROR_INVALID_ARGUMENT for it. What they refuse,
 * beyond NULLs: a buffer range past its buffer, an offset that is not a multiple of a
 * numeric element's size, a remainder (bytes 0) that is not whole elements, a mapped
 * sequence over memory the host cannot see (every VKDS_MEMORY_DEVICE buffer), counting
 * values that do not fit the type (F32: integers up to 2^24 in magnitude, F64: 2^53, the
 * ones they hold exactly), COMPOSITE where a size is needed, zips of
 * unequal counts, non-integer permutation maps. Count 0 is valid everywhere.
 *
 * Views hold pointers, so a sequence can be made to contain itself: validation, the
 * trait and reads stop 64 levels down (INVALID_ARGUMENT, or false from the trait).
 *
 * The trait and reads check only what is common (a valid table, element size, index <
 * count) before calling a user type's slot; they do not run its validate slot, so its
 * is_passed_directly and read must cope with its own fields. A permutation's map entry
 * past its source: host reads refuse it (VKDS_ERROR_INVALID_ARGUMENT); on a device (in
 * an algorithm) it reads as 0 and a write through it is dropped, without an error (the
 * map is never followed outside the source's memory). Reading mapped memory needs the
 * device to be done writing it. */
#ifndef VKDS_SEQ_H
#define VKDS_SEQ_H

#include <stdbool.h>
#include <stdint.h>

#include "vkds/buffer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Element types. */
typedef enum vkds_type {
  VKDS_TYPE_BYTES = 0, /* untyped bytes (elem_size 1 unless a type says otherwise) */
  VKDS_I32 = 1,
  VKDS_U32 = 2,
  VKDS_F32 = 3,
  VKDS_I64 = 4,
  VKDS_U64 = 5,
  VKDS_F64 = 6,
  VKDS_TYPE_COMPOSITE = 7, /* a zip's tuple: the parts' elements packed back to back */
} vkds_type;

/* Bytes per element of a type; 1 for VKDS_TYPE_BYTES, 0 for COMPOSITE and unknown. */
VKDS_API uint32_t vkds_type_size(vkds_type type);

typedef struct vkds_seq vkds_seq;

#define VKDS_SEQ_OPS_VERSION 2

/* How a kernel reads (and writes) a user type's elements on a device, for the algorithm
 * layer, which compiles it into its kernels (vkds/algorithm.h). A type is described by
 * GLSL over its parts and parameters:
 *   - `load`: the statements of the body of `T load(uint64_t i)`, where T is the
 *     sequence's GLSL element type (int, uint, float, int64_t, uint64_t, double); the
 *     parts are read with part0(i), part1(i), ... and the parameters are the uint64_t
 *     values param0, param1, ...;
 *   - `store` (OPTIONAL): the statements of `void store(uint64_t i, T v)`, writing
 *     through part0_store(j, v), ...; NULL: the type is read-only.
 * Each part is any sequence (vkds resolves it for the device itself: passed directly,
 * staged, or a view turned into code). The texts must not vary between sequences of
 * the type (kernels are cached by them); what varies goes in params. Example, two
 * buffers end to end: load = "return i < param0 ? part0(i) : part1(i - param0);",
 * parts {first, second}, params {first.count}. A loop in `load` or `store` counts
 * against lavapipe's cut of an invocation's loops at 65,535 iterations in all
 * (vkds/algorithm.h, operators): on large inputs there, keep the code loop-free. Keep
 * `load` and `store` within their parts' elements: partN(i) for i past a part's count
 * is not checked (a part passed directly is read at its device address), so what it
 * reads or writes is undefined, whatever one device happens to do. */
#define VKDS_SEQ_DEVICE_PARTS 4
typedef struct vkds_seq_device_code {
  const char *load;
  const char *store;
  uint32_t part_count; /* at most VKDS_SEQ_DEVICE_PARTS */
  const vkds_seq *parts[VKDS_SEQ_DEVICE_PARTS];
  uint32_t param_count; /* at most VKDS_SEQ_DEVICE_PARTS */
  uint64_t params[VKDS_SEQ_DEVICE_PARTS];
} vkds_seq_device_code;

/* A sequence type. Tables are append-only: vkds reads a slot only when `version` says
 * the table has it, so a table written against an older header keeps working; a table
 * of a later version than this library's VKDS_SEQ_OPS_VERSION is read for the slots this
 * library knows (unlike backend and policy tables, which such a library refuses: a
 * sequence's later slots are optional by the rule above). */
typedef struct vkds_seq_ops {
  uint32_t version; /* REQUIRED: VKDS_SEQ_OPS_VERSION of the header it was written with */
  const char *name; /* REQUIRED: for messages ("buffer", "zip", "my_concat", ...) */
  /* REQUIRED: the customization point. Whether `seq` can be handed to a kernel on the
   * device of `res` as it is, without staging. May call vkds_seq_is_passed_directly()
   * on the sequence's parts. Called with non-NULL arguments only. */
  bool (*is_passed_directly)(const vkds_seq *seq, const vkds_resource *res);
  /* OPTIONAL: reads element `index` (< count) into `out` (elem_size bytes) on the host.
   * Returns VKDS_SUCCESS, or VKDS_ERROR_UNSUPPORTED where the host cannot (device-local
   * memory, discard). NULL: unsupported. */
  vkds_result (*read)(const vkds_seq *seq, uint64_t index, void *out);
  /* OPTIONAL: checks the type's own fields and its parts (with vkds_seq_validate),
   * returning VKDS_SUCCESS or a named error. NULL: only count and elem_size are checked. */
  vkds_result (*validate)(const vkds_seq *seq);
  /* ---- version 2 ---- */
  /* OPTIONAL: the type's device-side access (see vkds_seq_device_code), asked for when
   * is_passed_directly says yes for the device an algorithm runs on. Fills *out and
   * returns VKDS_SUCCESS, or an error. NULL (or a table of version 1): the algorithm
   * layer stages the sequence through its read slot, element by element, whatever
   * is_passed_directly says, and the recording forms (vkds_cmd_*), which cannot stage,
   * refuse it with VKDS_ERROR_INVALID_ARGUMENT. Where is_passed_directly says no, the
   * sequence is staged through read too, also when it has device code: a type whose
   * parts mix host memory and device buffers then fails in read (a device buffer's
   * elements cannot be read on the host). A type with device code may answer yes
   * whenever its parts can each be bound, staged or passed: vkds stages the parts that
   * are not passed directly (and uploads a written one first, then copies it back). */
  vkds_result (*device_code)(const vkds_seq *seq, const vkds_resource *res, vkds_seq_device_code *out);
} vkds_seq_ops;

/* An operator for vkds_seq_transform. */
typedef struct vkds_transform_op {
  /* The operator as a GLSL expression of `x` (one base element), e.g. "x * 2.0": what
   * the algorithm layer compiles into its kernels. REQUIRED. */
  const char *glsl;
  /* The result type; VKDS_TYPE_BYTES: the base's type. */
  vkds_type type;
  /* The same operator on the host, OPTIONAL (vkds_seq_read needs it): reads one base
   * element at `in`, writes one result element at `out`. */
  void (*host)(const void *in, void *out, void *user);
  void *user;
} vkds_transform_op;

struct vkds_seq {
  const vkds_seq_ops *ops; /* its type; NULL: not a valid sequence */
  uint64_t count;          /* elements */
  vkds_type type;
  uint32_t elem_size; /* bytes per element */
  /* buffer, mapped: the range starts `offset` bytes into `buffer` */
  vkds_buffer *buffer;
  uint64_t offset;
  /* host: the memory; read_only when made from a const pointer */
  void *host;
  bool read_only;
  /* counting: the first value */
  int64_t start;
  /* transform, reverse: the base; permutation: the source */
  const vkds_seq *base;
  /* permutation: the index map (an integer sequence) */
  const vkds_seq *map;
  /* transform: the operator */
  const vkds_transform_op *op;
  /* zip: part_count sequences, contiguous */
  const vkds_seq *parts;
  uint32_t part_count;
  /* user types: anything */
  void *user;
};

/* The built-in types, for comparing a sequence's ops (seq.ops == &vkds_seq_zip_ops). */
VKDS_API extern const vkds_seq_ops vkds_seq_buffer_ops, vkds_seq_mapped_ops, vkds_seq_host_ops,
    vkds_seq_counting_ops, vkds_seq_discard_ops, vkds_seq_transform_ops, vkds_seq_zip_ops,
    vkds_seq_permutation_ops, vkds_seq_reverse_ops;

/* A range of a device buffer: view.bytes / size(type) elements (view.bytes 0: to the end
 * of the buffer). Invalid for a NULL or host buffer, a range past the buffer, or bytes not
 * a multiple of the element size. */
VKDS_API vkds_seq vkds_seq_buffer(vkds_view view, vkds_type type);
/* The same over a host-visible buffer (mapped, readback, imported): readable from the
 * host too. Invalid for a buffer the host cannot see. */
VKDS_API vkds_seq vkds_seq_mapped(vkds_view view, vkds_type type);
/* `count` elements of plain host memory at `data` (writable). */
VKDS_API vkds_seq vkds_seq_host(void *data, uint64_t count, vkds_type type);
/* The same, read-only: algorithms refuse to write to it. */
VKDS_API vkds_seq vkds_seq_host_const(const void *data, uint64_t count, vkds_type type);
/* start, start+1, ..., start+count-1 as `type` (an integer or float type). */
VKDS_API vkds_seq vkds_seq_counting(int64_t start, uint64_t count, vkds_type type);
/* `count` elements of `type` whose writes are dropped. */
VKDS_API vkds_seq vkds_seq_discard(uint64_t count, vkds_type type);
/* op(base[i]); base and op must outlive the result. */
VKDS_API vkds_seq vkds_seq_transform(const vkds_seq *base, const vkds_transform_op *op);
/* (parts[0][i], parts[1][i], ...): all parts must have the same count; 1 to 16 parts. */
VKDS_API vkds_seq vkds_seq_zip(const vkds_seq *parts, uint32_t part_count);
/* source[map[i]] for i < map.count; map must be an integer sequence. */
VKDS_API vkds_seq vkds_seq_permutation(const vkds_seq *source, const vkds_seq *map);
/* base[count-1-i]. */
VKDS_API vkds_seq vkds_seq_reverse(const vkds_seq *base);

/* The trait: whether `seq` is passed directly to the device of `res` (see the rules
 * above). false for NULL arguments and invalid sequences. */
VKDS_API bool vkds_seq_is_passed_directly(const vkds_seq *seq, const vkds_resource *res);

/* Checks a sequence and, recursively, its parts. VKDS_SUCCESS, or
 * VKDS_ERROR_INVALID_ARGUMENT naming what is wrong (NULL, ops NULL, a table without the
 * required slots, mismatched zip counts, a non-integer permutation map, ...), or the
 * error a user type's own validate slot returned (a value that is not a vkds_result, a
 * positive one say: VKDS_ERROR_INVALID_ARGUMENT). */
VKDS_API vkds_result vkds_seq_validate(const vkds_seq *seq);

/* Reads element `index` on the host into `out` (elem_size bytes). Returns
 * VKDS_ERROR_INVALID_ARGUMENT (NULL, invalid, index out of range, a permutation map
 * entry past its source), VKDS_ERROR_UNSUPPORTED (the host cannot read it:
 * device-local memory, discard, a transform without a host operator or with elements
 * over 512 bytes). */
VKDS_API vkds_result vkds_seq_read(const vkds_seq *seq, uint64_t index, void *out);

/* ---- handing a sequence to a device ----------------------------------------------- */

typedef enum vkds_access {
  VKDS_ACCESS_READ_WRITE = 0, /* the default */
  VKDS_ACCESS_READ = 1,       /* the device reads the elements */
  VKDS_ACCESS_WRITE = 2,      /* the device writes them (and reads nothing) */
} vkds_access;

/* A sequence resolved against one device: where a kernel there finds its elements. */
typedef struct vkds_seq_binding {
  vkds_view view; /* count * elem_size bytes of device memory holding the elements */
  bool staged;    /* view is a temporary buffer the elements were (or will be) copied to */
  /* private */
  const vkds_seq *seq;
  vkds_resource *res;
  vkds_access access;
} vkds_seq_binding;

/* Resolves `seq` for a kernel on the device of `res`:
 *   - a sequence passed directly with memory of its own (a buffer or mapped range on
 *     that device, host memory imported into it): its own range, nothing copied (where
 *     that memory is host-visible but not host-coherent, the host's writes are flushed
 *     when it is bound for reading, and vkds_seq_unbind invalidates it after writing);
 *   - anything else: a temporary device buffer of count * elem_size bytes (the view's
 *     bytes; the buffer may be larger: it comes from, and goes back to, the context's
 *     kept temporaries, vkds/algorithm.h). For reading,
 *     the elements are uploaded through the staging ring first: contiguous host memory
 *     as it is, a buffer of another device through a download, any other sequence the
 *     host can read (views) element by element. For writing, vkds_seq_unbind copies
 *     them back (to host memory, a mapped range, or a buffer of another device); a
 *     discard sequence drops them.
 * `seq` must outlive the binding. Returns VKDS_ERROR_INVALID_ARGUMENT (NULL, an invalid
 * sequence, an unknown access, writing to a read-only host sequence),
 * VKDS_ERROR_WRONG_CONTEXT (a buffer in it of another context than res's), VKDS_ERROR_UNSUPPORTED
 * (reading what the host cannot read; writing to a view other than discard, whose
 * elements have nowhere to go), an empty sequence binds to an empty view, and the
 * errors of vkds_buffer_create and vkds_upload. */
VKDS_API vkds_result vkds_seq_bind(vkds_resource *res, const vkds_seq *seq, vkds_access access,
                                   vkds_seq_binding *out);

/* Ends a binding: copies a staged sequence's elements back when it was bound for
 * writing (invalidates non-coherent memory passed directly, for the host's reads), and
 * frees the temporary buffer. The device must be done with the view.
 * NULL, or a binding that failed, is a no-op returning VKDS_SUCCESS. */
VKDS_API vkds_result vkds_seq_unbind(vkds_seq_binding *binding);

#ifdef __cplusplus
}
#endif
#endif
