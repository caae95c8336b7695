/* lib/algorithm/algorithm_internal.h: what the algorithm layer's files share.
 *
 * An algorithm call is described once, as a `vkds__alg` (which template, its inputs and
 * output, its element function and reduction), by the family's file (elementwise.c,
 * reduce.c). frame.c runs every description the same way, in all three forms;
 * codegen.c turns a description and the selected device into GLSL (the sequences'
 * views become code) plus the launch parameters; kernels.c caches the compiled kernels
 * per context by the generated code's signature. */
#ifndef VKDS_ALGORITHM_INTERNAL_H
#define VKDS_ALGORITHM_INTERNAL_H

#include "internal.h"

/* The kernel templates (shaders/algorithm/). */
typedef enum vkds__alg_template {
  VKDS__TEMPLATE_MAP = 1,    /* out[i] = elem(inputs[i]) */
  VKDS__TEMPLATE_REDUCE = 2, /* result = init op map(inputs[0]) op map(inputs[1]) ... */
  VKDS__TEMPLATE_SCAN = 3,   /* out[i] = init op map(inputs[0]) op ... op map(inputs[i]) (scan.c) */
  VKDS__TEMPLATE_HISTOGRAM = 5, /* output[bin] = samples (inputs[0]) in bin; inputs[1]: boundaries (histogram.c) */
  VKDS__TEMPLATE_SORT = 4,   /* inputs[0] (keys) sorted in place, inputs[1] (values) along (sort.c) */
  VKDS__TEMPLATE_SEARCH = 6, /* out[i] = bound of inputs[0][i] (needles) in inputs[1] (sorted, any count) (search.c) */
  VKDS__TEMPLATE_MERGE = 7,  /* out = inputs[0] and inputs[1] (sorted, any counts) merged (merge.c) */
  VKDS__TEMPLATE_MSORT = 8,  /* inputs[0] sorted in place by the comparator in glsl, stable (msort.c) */
} vkds__alg_template;

/* The element function: what a template computes from element i of the inputs. */
typedef enum vkds__alg_elem {
  VKDS__ELEM_VALUE = 1,  /* the value (fill) */
  VKDS__ELEM_COPY,       /* x */
  VKDS__ELEM_GLSL,       /* the user's expression of x (one input) or a, b (two) */
  VKDS__ELEM_PRED,       /* the user's predicate of x, as 1 or 0 */
  VKDS__ELEM_NOT_PRED,   /* its negation, as 1 or 0 (none_of) */
  VKDS__ELEM_EQ_VALUE,   /* x == value, as 1 or 0 */
  VKDS__ELEM_EQUAL,      /* a == b, as 1 or 0 */
  VKDS__ELEM_PRODUCT,    /* a * b */
  VKDS__ELEM_LOCATED,    /* (x, i): for min and max element */
  VKDS__ELEM_UNIQUE,     /* x differs from the element before it (or is the first), as 1 or 0 */
  VKDS__ELEM_BY_KEY,     /* SCAN: x.p1 of a zip of keys and values, in segments of equal x.p0 (scan.c) */
  VKDS__ELEM_ORDERED,    /* 1 unless element i + 1 comes before x in the sort's order (is_sorted) */
  VKDS__ELEM_ORDERED_BY, /* 1 unless the comparator in glsl puts element i + 1 before x (is_sorted_by) */
  VKDS__ELEM_ADJACENT,      /* MAP: x op the element before it (glsl of a and b; NULL: a - b), x first */
  VKDS__ELEM_FIND_PRED,     /* x's index where the predicate holds, else ~0 (find_if; min over U64) */
  VKDS__ELEM_FIND_NOT_PRED, /* where it does not (find_if_not) */
  VKDS__ELEM_FIND_VALUE,    /* where x == the value in extra[0]'s bits (find) */
  VKDS__ELEM_INDEX,      /* SORT: the values are the keys' indices, the keys only read (argsort) */
} vkds__alg_elem;

/* Whether an element function may be given a zip's tuples: those of the user's GLSL
 * (an operator, a predicate, a comparator), and the scans by key. */
static inline bool vkds__elem_takes_tuples(vkds__alg_elem e) {
  return e == VKDS__ELEM_GLSL || e == VKDS__ELEM_PRED || e == VKDS__ELEM_NOT_PRED || e == VKDS__ELEM_BY_KEY ||
         e == VKDS__ELEM_ORDERED_BY || e == VKDS__ELEM_FIND_PRED || e == VKDS__ELEM_FIND_NOT_PRED ||
         e == VKDS__ELEM_UNIQUE; /* (unique compares whole tuples, GLSL's == on structs) */
}
/* Whether it is the user's GLSL (a->glsl, which must then not be NULL). */
static inline bool vkds__elem_is_glsl(vkds__alg_elem e) {
  return e == VKDS__ELEM_GLSL || e == VKDS__ELEM_PRED || e == VKDS__ELEM_NOT_PRED || e == VKDS__ELEM_ORDERED_BY ||
         e == VKDS__ELEM_FIND_PRED || e == VKDS__ELEM_FIND_NOT_PRED;
}

/* The reduction's combining step, beyond the vkds_op kinds. */
typedef enum vkds__alg_combine {
  VKDS__COMBINE_OP = 1, /* the vkds_op in `op` */
  VKDS__COMBINE_MIN_LOC, /* the first smallest (value, index) */
  VKDS__COMBINE_MAX_LOC, /* the first largest */
} vkds__alg_combine;

/* What a reduction leaves at its result address, and what the host makes of it. */
typedef enum vkds__alg_result {
  VKDS__RESULT_VALUE = 1, /* one element of acc_type */
  VKDS__RESULT_COUNT,     /* a uint64_t */
  VKDS__RESULT_BOOL,      /* a uint32_t 0 or 1 */
  VKDS__RESULT_LOCATION,  /* uint64_t index, then the value at byte 8 */
} vkds__alg_result;

enum { VKDS__ALG_MAX_INPUTS = 2 };

typedef struct vkds__alg {
  const char *name; /* the public function, for messages */
  vkds__alg_template template_kind;
  uint32_t input_count;
  const vkds_seq *inputs[VKDS__ALG_MAX_INPUTS];
  const vkds_seq *output;  /* MAP, SCAN */
  const vkds_seq *output2; /* SCAN with a count (partition): where the elements not kept go */
  bool in_place_allowed;   /* the output may be exactly an input (transform) */
  uint64_t count;          /* elements */
  vkds__alg_elem elem;
  const char *glsl;        /* ELEM_GLSL, ELEM_PRED */
  vkds_type elem_type;     /* MAP: the output's type; REDUCE: the accumulated type */
  vkds__alg_combine combine;
  vkds_op op;              /* COMBINE_OP (kind resolved: never DEFAULT) */
  vkds__alg_result result;
  bool has_value;          /* `value` holds the fill value, the counted value or init */
  unsigned char value[8];
  /* SCAN: exclusive (out[i] leaves element i out); `variant` is the path (a
   * vkds_scan_path, resolved for the device before the code is built: it is part of
   * the kernel's signature). A SCAN whose result is VKDS__RESULT_COUNT compacts: the
   * element function is a 1-or-0 flag, the kept elements go to `output` (and the others
   * to `output2`) and the count of kept ones is the result; its outputs may have any
   * count (what does not fit is not written). */
  bool exclusive;
  uint32_t variant;
  /* the subgroup size the kernel's pipelines require (vkds__device_required_subgroup_size:
   * sort.c's word counters); 0: any. Part of the kernel's signature. */
  uint32_t subgroup_size;
  /* blocking and asynchronous forms: where the host results go */
  void *host_result;       /* VALUE: one element; COUNT: uint64_t; BOOL: bool */
  uint64_t *host_index;    /* LOCATION */
  void *host_value;        /* LOCATION, may be NULL */
  /* HISTOGRAM: upper's bits, the bin width's, the estimate's scale, the bin count
   * (histogram.c); FIND_VALUE: the value's bits (reduce.c) */
  uint64_t extra[4];
} vkds__alg;

/* Whether reduce by key's keys are a zip (its keys output then a zip too, or a discard). */
static inline bool vkds__alg_zip_keys(const vkds__alg *a) {
  return a->template_kind == VKDS__TEMPLATE_SCAN && a->result == VKDS__RESULT_COUNT && a->elem == VKDS__ELEM_BY_KEY &&
         a->inputs[0] && a->inputs[0]->ops == &vkds_seq_zip_ops && a->inputs[0]->parts[0].type == VKDS_TYPE_COMPOSITE;
}
/* Whether a compaction (not reduce by key) moves whole tuples: a zip in, zips out. */
static inline bool vkds__alg_moves_records(const vkds__alg *a) {
  return a->template_kind == VKDS__TEMPLATE_SCAN && a->result == VKDS__RESULT_COUNT && a->elem != VKDS__ELEM_BY_KEY &&
         a->input_count && a->inputs[0] && a->inputs[0]->type == VKDS_TYPE_COMPOSITE;
}

/* Whether the call writes its output in place: the output is input 0, the same memory
 * through the same views (no permutation), where the algorithm allows it (frame.c). */
bool vkds__alg_in_place(const vkds__alg *a);

/* The largest index an output of integer type t holds (searches, argsort). */
static inline uint64_t vkds__index_max(vkds_type t) {
  return t == VKDS_I32 ? INT32_MAX : t == VKDS_U32 ? UINT32_MAX : t == VKDS_I64 ? INT64_MAX : UINT64_MAX;
}

/* Room for the launch arguments of `dispatches` dispatches in a recording form's scratch,
 * after what the algorithm itself uses (frame.c args_in_scratch), where a call's
 * arguments outgrow the device's push constants: at most every launch parameter a
 * dispatch, 16-byte aligned, and 16 bytes for aligning the first. The public scratch
 * queries add it, so that what they return is enough whatever the call's views. */
uint64_t vkds__args_room(uint32_t dispatches);
/* The most dispatches a recorded call of each family makes (args_in_scratch). */
enum { VKDS__SCAN_DISPATCHES = 3, VKDS__HISTOGRAM_DISPATCHES = 3, VKDS__REDUCE_DISPATCHES = 2 };
uint32_t vkds__sort_dispatches(vkds_type key);
uint32_t vkds__msort_dispatches(uint64_t count);
/* A reduction's scratch without that room (kernels.c). */
uint64_t vkds__reduce_scratch_own(const vkds_resource *res, uint64_t count);

/* The three forms (frame.c). */
vkds_result vkds__alg_run(vkds_policy *p, const vkds__alg *a);
vkds_result vkds__alg_run_async(vkds_policy *p, const vkds__alg *a, vkds_submission **sub);
vkds_result vkds__alg_record(const vkds_cmd *c, const vkds__alg *a, vkds_view result);

/* ---- code generation (codegen.c) ---- */

enum {
  VKDS__GEN_MAX_PARAMS = 30,  /* 64-bit launch parameters (push constants: 16 + 240 bytes) */
  VKDS__GEN_MAX_LEAVES = 16,  /* memory ranges one call reads or writes */
  VKDS__GEN_HEADER = 7,       /* parameters every kernel has, below */
};
/* The fixed parameters. */
enum {
  VKDS__P_COUNT = 0,    /* elements */
  VKDS__P_VALUE = 1,    /* the value's bits */
  VKDS__P_RESULT = 2,   /* REDUCE: the result's device address */
  VKDS__P_PARTIALS = 3, /* REDUCE: 16 bytes per work group of the first pass */
  VKDS__P_FLAGS = 4,    /* REDUCE: bit 0: second pass; bit 1: has init */
  VKDS__P_GROUPS = 5,   /* REDUCE: work groups of the first pass */
  VKDS__P_INDEX_BASE = 6, /* the index of element 0 (a streamed chunk's first element) */
};
#define VKDS__FLAG_SECOND_PASS 1u
#define VKDS__FLAG_HAS_INIT 2u
#define VKDS__FLAG_TO_ACCUMULATOR 4u /* REDUCE: the total is a chunk's, stored as an accumulator */

/* What a launch parameter is, where a streamed chunk must move it. */
enum {
  VKDS__ROLE_FIXED = 0, /* the same for every chunk */
  VKDS__ROLE_COUNTING,  /* a counting sequence's start: + the chunk's first index */
};

/* A memory range a kernel uses: a buffer, mapped or host sequence, or a sequence of a
 * user type that is staged whole through its host reads. It is reached through its
 * device address, or bound as a storage buffer where the device prefers that
 * (codegen.c says when). */
typedef struct vkds__leaf {
  const vkds_seq *seq;
  vkds_access access;
  uint32_t param; /* the parameter that receives its address; bound: its first word in the binding */
  bool bound;     /* a storage buffer at set 0, binding <its leaf index> */
  bool streamed;  /* host memory that goes through stream buffers chunk by chunk (stream.c) */
} vkds__leaf;

/* A kernel's argument struct: the parameters, then the views of the bound leaves (leaf k
 * at bound[k]; unused for leaves reached through addresses). */
typedef struct vkds__args {
  uint64_t p[VKDS__GEN_MAX_PARAMS];
  vkds_view bound[VKDS__GEN_MAX_LEAVES];
} vkds__args;

/* A call turned into code for one device. */
typedef struct vkds__gen {
  const vkds_resource *res;
  const char *name; /* the public function's, for messages */
  /* the signature: everything the code depends on, as bytes (the kernel cache's key) */
  unsigned char *sig; /* sig_inline until it outgrows it (a call's is ~100-200 bytes) */
  size_t sig_len, sig_cap;
  unsigned char sig_inline[256]; /* (sig may point here: a built vkds__gen must not be copied) */
  /* the source, when asked for (on a cache miss) */
  bool emit;
  struct vkds__text *head, *body, *tail;
  uint32_t tail_lines; /* snippets placed at the end, for their line numbers */
  uint32_t next_node;
  uint32_t types_used; /* bit per vkds_type: pointer types to declare */
  /* user snippets, in source-string order from 1000 */
  uint32_t snippet_count;
  const char *snippets[64];
  const char *snippet_roles[64];
  /* the launch */
  vkds__args args;
  uint32_t param_count;
  bool descriptors;       /* the device binds leaves as storage buffers where it can */
  uint32_t bound_count;   /* leaves bound so far */
  bool keeps_bindings;    /* a user type's code calls vkds_keep (codegen.c keep_parts) */
  uint32_t aligned;       /* bit per leaf: bound, and starting 16-byte aligned in its binding */
  vkds__leaf leaves[VKDS__GEN_MAX_LEAVES];
  uint32_t leaf_count;
  uint8_t param_role[VKDS__GEN_MAX_PARAMS]; /* VKDS__ROLE_* */
  /* element i of every sequence depends on element i of its leaves alone (no reverse,
   * permutation or user code), and every leaf is host memory or this device's: the call
   * can run chunk by chunk (stream.c) */
  bool streamable;
  bool needs_float64, needs_int64;
  uint32_t out_param; /* HISTOGRAM: the parameter of the counts' address when they are a u32 leaf, else 0 */
  bool sort_bits; /* SORT: written leaves are walked as U32/U64 bits (sort.c) */
  bool zips_writable; /* MSORT, MERGE by a comparator: a zip's tuples written, each part (codegen.c zip) */
  bool striped_tiles; /* SCAN: whole tiles move through shared memory (scan.c) */
  bool merge_ballot;  /* MERGE, MSORT: groups search where they start by subgroup ballots (merge_group.glsl) */
  bool merge_pad;     /* MERGE, MSORT: shared memory with a spare slot every 32 (merge_group.glsl VKDS_SH_AT) */
  vkds_result error; /* the first failure (its message already recorded) */
} vkds__gen;

/* Describes `a` for the device of `res`: the signature, the parameters and the leaves,
 * and with emit the GLSL source too (vkds__gen_source), for bound leaves placed as
 * `aligned` says (a vkds__gen_aligned of an earlier build). Returns the first error. */
vkds_result vkds__gen_build(vkds__gen *g, const vkds__alg *a, const vkds_resource *res, bool emit, uint32_t aligned);
/* Once the leaves are placed (vkds__call_bind): which bound leaves start 16-byte aligned
 * in their bindings, bit per leaf. Their code depends on it: it completes the signature. */
void vkds__gen_aligned(vkds__gen *g, uint32_t aligned);
/* The whole kernel source (malloc'ed) after a build with emit. */
char *vkds__gen_source(vkds__gen *g, const vkds__alg *a);
void vkds__gen_free(vkds__gen *g);

/* GLSL names and sizes of the numeric types. */
const char *vkds__glsl_type(vkds_type t);
bool vkds__type_is_float(vkds_type t);
/* One of the numeric element types (I32 ... F64), which the algorithms compute with. */
static inline bool vkds__type_is_number(vkds_type t) { return t >= VKDS_I32 && t <= VKDS_F64; }
/* Whether `s` is a record: a zip whose parts are all numbers, `parts` of them where not
 * 0 (compaction's and reduce by key's zips in and out: compact.c, scan.c). */
static inline bool vkds__zip_of_numbers(const vkds_seq *s, uint32_t parts) {
  if (s->ops != &vkds_seq_zip_ops || (parts && s->part_count != parts)) return false;
  for (uint32_t k = 0; k < s->part_count; ++k)
    if (!vkds__type_is_number(s->parts[k].type)) return false;
  return true;
}

/* ---- one call in flight (frame.c, stream.c) ---- */

enum { VKDS__STREAM_SLOTS = 2, VKDS__CALL_ARG_BUFFERS = 8 };

/* Past this many elements the scratch-size queries answer UINT64_MAX (no buffer holds
 * it; their arithmetic would wrap): 2^48, beyond what any algorithm call takes (the
 * chained scans stop at 2^43, the sorts at 2^32 - 1). */
#define VKDS__ALG_MAX_SCRATCH_COUNT (1ull << 48)
/* The most elements one algorithm call takes (algorithm.h; families have lower limits of
 * their own): 4 TiB of 4-byte elements, more than any device holds; views that need no
 * memory (counting, discard) could ask for more. */
#define VKDS__ALG_MAX_COUNT (1ull << 40)

/* Leaves are copied in: a binding points at its sequence until it is undone, which for
 * the asynchronous form is after the caller's sequences are gone. */
typedef struct vkds__call {
  vkds__alg a;
  vkds_resource *res;
  vkds_kernel *kernel;
  vkds__gen gen;
  vkds_seq leaf[VKDS__GEN_MAX_LEAVES];
  vkds_seq_binding bind[VKDS__GEN_MAX_LEAVES];
  uint32_t bound;
  vkds_buffer *scratch; /* blocking and asynchronous reductions: result and partials */
  vkds_view scan_scratch; /* SCAN, SORT: the family's scratch (c->scratch, or the vkds_cmd's) */
  vkds_buffer *scan_result; /* SCAN with a count, blocking and asynchronous: where it lands */
  vkds_view scan_result_view; /* SCAN with a count: that buffer, or the vkds_cmd form's view */
  vkds_scan_path path;    /* SORT: its path (vkds__sort_choose; a parameter, not code) */
  /* SCAN with a count, blocking and asynchronous: the leaves that are the call's first
   * and second outputs themselves (bit k: leaf k), bound for writing only: a staged one
   * is neither uploaded nor copied back past what the call wrote (frame.c) */
  uint32_t prefix_out1, prefix_out2;
  uint32_t groups;
  bool range64;
  /* streaming (stream.c): per streamed leaf, two host-visible buffers of stream_bytes */
  bool streaming;
  /* the queue puts the leading barrier before the recording when it is needed
   * (vkds__slot.needs_lead): record_task leaves it out */
  bool queue_lead;
  uint64_t stream_bytes, chunk_elems, chunks;
  vkds_buffer *stage[VKDS__GEN_MAX_LEAVES][VKDS__STREAM_SLOTS];
  /* copied streaming (discrete GPUs): device buffers the chunks are copied to and from,
   * so that the kernel reads device memory and the copy engine moves the bytes */
  bool stream_copy;
  vkds_buffer *device_stage[VKDS__GEN_MAX_LEAVES][VKDS__STREAM_SLOTS];
  /* chunks whose outputs still wait in stage buffers: [first, first + pending) */
  uint64_t pending_first, pending;
  /* the launch arguments of a kernel that keeps them in a buffer (too many for the push
   * constants: a zip of many parts), one region a dispatch, in host-visible buffers freed
   * with the call (blocking and asynchronous forms: args_kept; vkds__alg_dispatch). A
   * streamed call fills lane `chunk % VKDS__STREAM_SLOTS` and starts it over once the
   * chunk that used it last is done (stream.c): taken anew each chunk, they grew with the
   * chunks, and a device_memory_limit hit on a late chunk failed the call after the host
   * output of the chunks before had been written (a probe) */
  bool args_kept;
  struct vkds__call_args {
    vkds_buffer *buf[VKDS__CALL_ARG_BUFFERS];
    uint32_t made, at; /* buffers made; the one being filled */
    uint64_t used;     /* bytes of buf[at] taken */
  } args[VKDS__STREAM_SLOTS];
  uint32_t args_lane;
  /* the recording form's instead: regions of the vkds_cmd's scratch after what the
   * algorithm uses, written by vkCmdUpdateBuffer in the application's command buffer */
  vkds_buffer *args_scratch;
  uint64_t args_scratch_at, args_scratch_end; /* from the buffer's start */
} vkds__call;

/* Records one dispatch of the call's kernel `k` (vkds_cmd_dispatch; frame.c): a kernel
 * whose arguments are kept in a buffer has them written to the call's. */
vkds_result vkds__alg_dispatch(vkds__call *c, VkCommandBuffer cmd, vkds_kernel *k, const vkds_launch_info *li);

/* Records the call's work on elements [first, first + count) into `cmd` (frame.c).
 * `last`: for a streamed reduction, the chunk after which the chunk totals are combined
 * into the result. */
typedef enum vkds__part { VKDS__PART_WHOLE, VKDS__PART_CHUNK, VKDS__PART_LAST_CHUNK } vkds__part;
vkds_result vkds__call_record(vkds__call *c, VkCommandBuffer cmd, VkDeviceAddress result, VkDeviceAddress partials,
                              vkds__part part, uint64_t chunk);

/* Streaming (stream.c): whether the call streams (and if so its plan set in c), the
 * chunks run up to the last, whose submission is returned (through the policy's
 * selection), and the copies out that remain once it is done. */
bool vkds__stream_plan(vkds__call *c);
vkds_result vkds__stream_run(vkds_policy *p, vkds__call *c, vkds_selection *sel, const vkds_task_info *task, vkds_submission **last);
vkds_result vkds__stream_finish(vkds__call *c, bool done);
void vkds__stream_free(vkds__call *c);

/* Binds the leaves that are not streamed (frame.c); undoes every binding. */
vkds_result vkds__call_bind(vkds__call *c);
/* Points leaf k's launch arguments at `count` elements from byte `offset` of `buf`: its
 * address, or its binding and first word (frame.c). */
void vkds__call_place(vkds__call *c, uint32_t k, vkds_buffer *buf, uint64_t offset, uint64_t count);

/* ---- kernels (kernels.c) ---- */

/* The kernel for a built description, from the context's cache or compiled into it
 * (thread-safe). A compile error in a user snippet becomes VKDS_ERROR_COMPILE naming the
 * snippet and its line. The kernel lives until the context is destroyed. */
vkds_result vkds__alg_kernel(vkds_context *ctx, vkds__gen *g, const vkds__alg *a, bool range64, vkds_kernel **out);

/* ---- per-context state (kernels.c) ---- */

/* (Buffers kept for the next call: vkds__spare_get and vkds__spare_put, internal.h.) */
#define VKDS__ALG_SCRATCH_BYTES 32768u /* 256 bytes of result, then the partials */
#define VKDS__ALG_RESULT_BYTES 256u

/* Groups of 256 that fill half of what the device's compute units keep resident (the
 * reductions' and histograms' GPU grid, kernels.c); 1024 where the units are unknown. */
uint32_t vkds__half_resident_groups(const vkds__device *dev);
/* The reduction's grid: work groups of the first pass for `count` elements on `dev`
 * (kernels.c says how it is chosen). */
uint32_t vkds__reduce_groups(const vkds__device *dev, uint64_t count);
#define VKDS__REDUCE_MAX_GROUPS 1024u /* partials that fit in the scratch beside a stream's chunk totals */

/* ---- scans (scan.c) ---- */

/* Chooses the call's path for its device (c->a.variant) and checks the device can run
 * scans at all; before the code is built. */
vkds_result vkds__scan_choose(vkds__call *c);
/* Whether the rule's per-call refinements apply on `dev`: no path forced for its context
 * (vkds_context_info.scan_path, VKDS_SCAN_PATH), an NVIDIA GPU (whose running groups make
 * progress in practice) that can run the single pass. The scans' (scan.c) and the sorts'
 * (sort.c) refinements then pick SINGLE by size where it measured faster. */
bool vkds__rule_refined(const vkds__device *dev);
/* The scratch bytes the call needs (its path, type and count; a streamed call's chunk). */
uint64_t vkds__scan_scratch_bytes(const vkds__call *c);
/* The most any scan over `count` elements needs (vkds_algorithm_scratch_bytes). */
uint64_t vkds__scan_scratch_bound(uint64_t count);
/* Records the scan's dispatches over p[COUNT] elements into `cmd` (inside the frame's
 * barriers); `part` and `chunk` as for vkds__call_record. */
vkds_result vkds__scan_record(vkds__call *c, VkCommandBuffer cmd, vkds__part part, uint64_t chunk);
/* What codegen puts after #version (extensions), and the template's parts in order
 * (NULL after the last), for the call's path. */
const char *vkds__scan_preamble(const vkds__alg *a, bool striped_tiles);
/* Whether a scan's whole tiles move through shared memory on the device of `res`. */
bool vkds__scan_striped_tiles(const vkds__alg *a, const vkds_resource *res);
const char *vkds__scan_template(const vkds__alg *a, uint32_t part);

/* ---- histograms (histogram.c) ---- */

/* Chooses the kernel's variant (bins in shared memory, or global atomics) for the device. */
vkds_result vkds__histogram_choose(vkds__call *c);
/* The scratch bytes the call needs: a status word and the counters. */
uint64_t vkds__histogram_scratch_bytes(const vkds__call *c);
/* Records the three passes into `cmd` (inside the frame's barriers). */
vkds_result vkds__histogram_record(vkds__call *c, VkCommandBuffer cmd);
/* Once the work is done: the boundaries' order, as an error naming the first pair out of
 * order (blocking and asynchronous forms). */
vkds_result vkds__histogram_status(const vkds__call *c);
/* Whether the counts can be the kernel's counters (even bins into a u32 leaf). */
bool vkds__histogram_direct_leaf(const vkds__alg *a);
/* The defines after #version (the variant) and the template. */
const char *vkds__histogram_preamble(const vkds__alg *a);
const char *vkds__histogram_template(const vkds__alg *a);
/* ---- searches (search.c) ----
 * A search's description: inputs[0] the needles (count), inputs[1] the sorted sequence
 * (any count, read at random: never streamed), the output one index per needle;
 * value[] holds the sorted count | descending << 62 | upper bound << 63 (P(1),
 * shaders/algorithm/search.glsl). Dispatched as the map template is. */
#define VKDS__SEARCH_DESCENDING (1ull << 62)
#define VKDS__SEARCH_UPPER (1ull << 63)
/* A merge's: inputs[0] and inputs[1] sorted (any counts, read at random: never streamed),
 * the output their count together; value[] holds inputs[0]'s count | descending << 62
 * (P(1), shaders/algorithm/merge.glsl). Recorded by merge.c, with a partition dispatch
 * first where the call has a scratch of vkds__merge_scratch_bytes (0: none wanted). */
uint64_t vkds__merge_scratch_bytes(uint64_t n);
vkds_result vkds__merge_record(vkds__call *c, VkCommandBuffer cmd);

/* ---- the comparison sort (msort.c) ----
 * A merge sort's description: inputs[0] read and written in place (typed: the comparator
 * sees its elements), glsl the comparator (elem GLSL). */
uint64_t vkds__msort_scratch_bytes(const vkds__call *c);
/* The bytes an element takes in the scratch and in shared memory: its type's size, or a
 * zip's tuple laid out as a std430 struct (msort.glsl's IN0_T). */
uint32_t vkds__msort_stride(const vkds_seq *data);
/* VKDS_ERROR_UNSUPPORTED where the device's shared memory cannot hold 2048 elements. */
vkds_result vkds__msort_check(const vkds__call *c);
vkds_result vkds__msort_record(vkds__call *c, VkCommandBuffer cmd);
/* For the algorithms that compare elements by a comparator (merge_by, lower_bound_by,
 * upper_bound_by): the `n` sequences `s` (named `what[k]` in messages) hold one element
 * type, a numeric one, or zips themselves whose parts are numbers of the same types part
 * for part, 4, 8 or 16 bytes of them (the merge sort's records). VKDS_SUCCESS also when
 * a sequence is not valid (ops NULL): the frame's checks name that. */
vkds_result vkds__check_compared(const char *name, const vkds_seq *const *s, const char *const *what, uint32_t n);
/* Whether compute shaders on `dev` have every subgroup operation of `ops` (frame.c). */
bool vkds__subgroup_ops(const vkds__device *dev, VkSubgroupFeatureFlags ops);

/* ---- sorts (sort.c) ----
 * A sort's description: inputs[0] the keys, inputs[1] the values (input_count 2), both
 * read and written in place (codegen walks them READ_WRITE; the frame checks that they
 * can be written and do not overlap, and never streams them); value[0] holds the
 * order and the keys' kind (P(1), sort_tile.glsl); elem INDEX makes it argsort.
 * vkds__sort_choose sets `variant` (the code: shared memory's layout, lane-mask width,
 * argsort, which of the sort's kernels; sort.c) and the call's `path` (a parameter). */

/* Chooses the path and checks the device and the count; before the code is built. */
vkds_result vkds__sort_choose(vkds__call *c);
/* The scratch bytes the call needs (ping-pong copies of the keys and values, the
 * histograms, the per-tile states). */
uint64_t vkds__sort_scratch_bytes(const vkds__call *c);
/* The most any sort over `count` elements needs (vkds_algorithm_scratch_bytes). */
uint64_t vkds__sort_scratch_bound(uint64_t count);
/* Records the sort's dispatches into `cmd` (inside the frame's barriers). */
vkds_result vkds__sort_record(vkds__call *c, VkCommandBuffer cmd);
/* The extensions and defines after #version, and the template's parts in order (NULL
 * after the last). */
const char *vkds__sort_preamble(const vkds__alg *a);
/* The defines the templates take from `variant` (codegen puts them before them). */
void vkds__sort_defines(const vkds__alg *a, char *buf, size_t cap);
const char *vkds__sort_template(const vkds__alg *a, uint32_t part);

/* The context a public algorithm call reports to: its policy's (once initialized) or
 * its vkds_cmd's resource's; NULL where neither is usable. */
const vkds_context *vkds__alg_policy_ctx(vkds_policy *p);
const vkds_context *vkds__alg_cmd_ctx(const vkds_cmd *c);
/* VKDS_CHECK for a public call's own argument checks, which fail before the context is
 * looked at (vkds__fail(NULL, ...)): the failure also reaches the logger of the policy's
 * (P) or the command's (C) context, as the README promises. */
#define VKDS_CHECK_P(p, expr) VKDS_CHECK(vkds__log_unlogged(vkds__alg_policy_ctx(p), (expr)))
#define VKDS_CHECK_C(c, expr) VKDS_CHECK(vkds__log_unlogged(vkds__alg_cmd_ctx(c), (expr)))

#endif
