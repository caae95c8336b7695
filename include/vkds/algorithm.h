/* vkds/algorithm.h: parallel algorithms over sequences (oneDPL's algorithms over device
 * policies, in C).
 *
 * Every algorithm runs the same way (lib/algorithm/frame.c):
 *
 *   hints from the sequences    bytes they hold, and the devices their data already
 *                               lives on (earliest finish then prefers resident data;
 *                               host memory imported into a device lives on it; where
 *                               some sequences are in host memory, those devices and
 *                               the bytes on them: the host's move to any device alike;
 *                               a user type's parts give no hint)
 *   -> select                   the policy picks a queue
 *   -> resolve each sequence    on that device: memory passed directly is used in place;
 *                               host memory is streamed or staged, buffers of other
 *                               devices are staged.
 *                               Views (reverse, permutation, counting, discard,
 *                               transform, zip, views of views, user types with device
 *                               code) become code in the kernel: only their leaves (the
 *                               memory under them) are ever staged, never gathered
 *   -> kernel                   the algorithm's GLSL template (shaders/algorithm/),
 *                               specialized for the types, operators and views, compiled
 *                               once and cached (in memory, and as SPIR-V plus the
 *                               VkPipelineCache in pipeline_cache_dir when it is set).
 *                               It reaches each leaf through its device address, or,
 *                               on a CPU device (lavapipe, where that is ~3.5x faster),
 *                               bound as a storage buffer (push descriptors) while the
 *                               leaf fits one binding (maxStorageBufferRange);
 *                               VKDS_ALGORITHM_ACCESS=descriptor|address, read when the
 *                               context is created, forces either (tests, benchmarks).
 *                               One call reaches at most 16 leaves (a zip of 16 parts
 *                               can be reduced, but an output with memory of its own
 *                               is a 17th leaf: VKDS_ERROR_UNSUPPORTED); where their arguments
 *                               outgrow the device's push constants, the blocking and
 *                               _async forms keep them in a buffer of their own, the
 *                               recording form in its scratch (vkds_cmd)
 *   -> record -> submit -> (blocking) wait, write the results and staged outputs back.
 *
 * Each algorithm comes in three forms:
 *   vkds_X(policy, ...)                  blocking: returns when the results are written.
 *   vkds_X_async(policy, ..., &sub)      returns a submission at once. Staged outputs
 *                                        (results, host sequences written, buffers of
 *                                        another device than the selected one) are
 *                                        complete when a vkds_submission_wait or _poll on
 *                                        it says it is done, or vkds_policy_wait_all
 *                                        returns; releasing it unwaited waits first,
 *                                        so nothing is lost (up to the context's
 *                                        destroy_timeout_ns: work still running then is
 *                                        logged and its results dropped, what it holds
 *                                        left allocated; a streamed call's host output
 *                                        then holds the chunks done before it, the rest
 *                                        untouched). Staged and streamed inputs were
 *                                        uploaded before the call returned, so host
 *                                        inputs may be reused then, except host memory
 *                                        imported into the selected device
 *                                        (vkds_buffer_import_host), which the device
 *                                        reads in place, as it reads buffers: keep it
 *                                        unchanged until the submission is done (a
 *                                        probe's reduce_async saw the writes made after
 *                                        it returned). Result pointers must stay valid
 *                                        until the submission is done. On any error
 *                                        *sub is NULL (nothing to release).
 *                                        Host outputs are written then, not in the queue's
 *                                        order: a later call that reads one (a chain
 *                                        through host memory) must come after that wait
 *                                        (device buffers need none on one resource). Of
 *                                        two calls on one resource that write the same
 *                                        host memory, the later one's values stay: a
 *                                        wait, poll or release of a call, and a blocking
 *                                        call's own wait, first complete the earlier
 *                                        calls' outputs whose work is done, and
 *                                        vkds_policy_wait_all completes them in the
 *                                        order they were made.
 *   vkds_cmd_X(&cmd, ...)                records into the application's own command
 *                                        buffer (embedding). Every sequence must be passed
 *                                        directly on that device (else
 *                                        VKDS_ERROR_WRONG_DEVICE where its data lives on
 *                                        another VkDevice, VKDS_ERROR_INVALID_ARGUMENT
 *                                        for host data not imported into this
 *                                        device's memory (vkds_buffer_import_host:
 *                                        then it is passed directly) and types that
 *                                        stage), and scalar
 *                                        results go to a device view; see vkds_cmd below.
 *
 * Sizes: at most 2^40 elements a call (VKDS_ERROR_UNSUPPORTED past it, before anything is
 * selected), less where a family says so (sorts 2^32 - 1, the merge sort 2^34 - 1024).
 *
 * Element types: VKDS_I32, U32, F32, I64, U64, F64. 64-bit integers need shaderInt64 and
 * F64 needs shaderFloat64 on the selected device; without them the call fails with
 * VKDS_ERROR_UNSUPPORTED, naming the device and the feature. Values passed by pointer
 * (init, fill values, results) are of the C type of the sequence's element type
 * (int32_t, uint32_t, float, int64_t, uint64_t, double).
 *
 * Operators are GLSL:
 *   - a function of one element: an expression of `x`, e.g. "x * 2.0 + 1.0";
 *   - of two: an expression of `a` and `b`, e.g. "a * b";
 *   - a predicate: a bool expression of `x`, e.g. "x > 0 && (x & 1u) == 0u" (a number is
 *     taken as GLSL's bool() takes it: true when it is not zero);
 *   - a reduction (vkds_op): a built-in kind, or VKDS_OP_GLSL with an expression of
 *     `a` and `b` and its identity, e.g. {VKDS_OP_GLSL, "max(a, b)", "-1.0 / 0.0"}.
 * Results are converted to the type they are stored as (a GLSL constructor): a float
 * into an integer type truncates toward zero, and one out of that type's range, or a
 * NaN, becomes a value the device chooses (undefined in GLSL, as in C; lavapipe gives
 * INT_MIN for i32 and UINT_MAX for u32, a negative float into u32 included). So is a
 * division by zero, integer or float: GLSL leaves it undefined, and compilers use that
 * (lavapipe compiles a transform by "x / 0.0" into one that stores nothing, so the output
 * keeps what it held, or a staged host output gets whatever its temporary held; a zero
 * known only when the kernel runs gives the infinities and NaNs of IEEE there, and a
 * constant "-1.0 / 0.0" folds to -inf): divide by a zero only where your device's
 * answer is the one you want. A division the driver's compiler can fold to a trapping
 * constant kills the process inside pipeline creation on lavapipe (Mesa 22.3): an i64
 * INT64_MIN / -1 written as "(-9223372036854775807l - 1l) / int64_t(x | -1)" raises
 * SIGFPE there (a probe); the same at run time gives a value. Float arithmetic and
 * compares in operators and comparators, and the built-in reductions' min and max,
 * follow the device's float rules, which Vulkan leaves to each device: one may flush
 * f32 denormals to zero, and NVIDIA's driver does, in arithmetic and in compares, with
 * no way to ask otherwise (it reports shaderDenormPreserveFloat32 false: an H200's
 * vkds_reduce of 4,096 denormals summed to 0, session 43); the orders of
 * sorts, searches, merges and is_sorted (totalOrder) and the histograms compare f32
 * through their bits, as the host does. Loops in operators
 * and in a user type's device code: lavapipe cuts an invocation's loops short after
 * 65,535 iterations in all, counting vkds's own (the results are then wrong, and nothing
 * says so); vkds sizes its own loops to stay under that, which leaves a loop of the
 * user's little room on large inputs there. GPUs have no such cut. An
 * operator that does not compile fails with VKDS_ERROR_COMPILE, and the message shows
 * the operator's text and the line in it, not the generated kernel. Operators may use
 * GLSL built-ins and must not have side effects. vkds does not parse them: they go into
 * the kernel as written (trust them as you would a kernel's source; RELIABILITY.md).
 * So a preprocessor line in one (#define) stays in force for the rest of the kernel,
 * the later operators of the call and vkds's own code after it: #undef what you define
 * (or use a const), or two operators defining one name fail as "Macro redefined" and a
 * macro named like a, b or x rewrites what follows. Long operators are quoted in errors
 * by the line at fault (clipped to 200 bytes).
 *
 * Reductions are exact for integers (plus and multiplies wrap around, as unsigned C
 * arithmetic does) and repeatable for floats: the order of the operations depends only
 * on the device, the element count and the type, so the same call gives bit-identical
 * results every time. No float atomics. The order:
 *   1. the elements are split into G groups of 256 threads; thread t of group g
 *      combines, in increasing index order, starting from the identity, the runs of 4
 *      elements starting at 4 * (g * 256 + t + k * G * 256), k = 0, 1, ... (on a CPU
 *      device, thread T = g * 256 + t combines the runs T * R, ..., T * R + R - 1 of
 *      the ceil(count / 4) runs, R = ceil(runs / (G * 256)): contiguous memory per
 *      thread);
 *   2. each group combines its 256 values pairwise: values t and t + s for s = 128, 64,
 *      ..., 1 (value t on the left);
 *   3. when G > 1, one group combines the G group results the same way (thread t takes
 *      the results t, t + 256, ... in order, then step 2);
 *   4. init, when given, is combined last, on the left: op(init, total); an empty
 *      sequence gives init itself (not op(init, identity), which differs for the
 *      logical operators and for a NaN init of min or max).
 * G = 1 up to 8192 elements; above, min(ceil(count / 4096), cap), raised so that no
 * thread runs more than 32768 steps (lavapipe cuts longer loops short). The cap is the
 * device's: half the threads its compute units keep resident, divided by 256, where the
 * driver reports its units (VK_NV_shader_sm_builtins, VK_AMD_shader_core_properties; 528
 * on an H100); on a CPU device (lavapipe) two per host thread running groups
 * (LP_NUM_THREADS when set, else the online cores); 1024 otherwise; at most 1024.
 * Step 1 interleaves runs and steps 2 and 3 combine across them, so the order is not
 * the elements' (value t's elements are not all before value t + s's): as for C++'s
 * std::reduce, a reduction's user operator must be associative AND commutative, and its
 * identity an identity on both sides (op(identity, x) == op(x, identity) == x, as idle
 * threads contribute it on either side). Otherwise the result is that of the order
 * above, not of the elements' order: an operator that only associates (composing
 * affine maps, "take the right operand" with a left-only identity) belongs in a scan,
 * whose last element is the left-to-right result (the scans keep the elements' order
 * and need the identity only on the left).
 *
 * Sequence counts must match exactly where an algorithm has several (or the call is
 * VKDS_ERROR_INVALID_ARGUMENT); equal() is the exception: different counts are simply
 * not equal. Where an algorithm writes in place, its output may be exactly its input:
 * the same memory through the same views (the same sequence, or one built alike: a
 * reverse view of the same range, say), but not through a permutation view, whose map
 * may name an element twice. Otherwise what an output writes must not overlap anything
 * an input reads; a permutation's map is only read, so an input and an output may
 * share one (gathering and scattering through one map), but an output may not write
 * its own map. Overlap is found through the host's view too: a host sequence over the
 * memory of a mapped buffer or of imported host memory overlaps that buffer's
 * sequences (and is never the same sequence as one of them, so not in place either).
 * Outputs must be writable: buffer, mapped and host sequences (not made with
 * vkds_seq_host_const), discard, and reverse or permutation views of writable
 * sequences; counting, transform and zip views are not. vkds cannot see inside a
 * sequence type of yours: one is in place only as the same value (equal in every
 * field) given as input and output, and its overlap with other sequences is not
 * checked: an output of your type that overlaps an input otherwise gives undefined
 * results. Views nest up to 32 deep in an algorithm's sequences (VKDS_ERROR_INVALID_
 * ARGUMENT past that), and all the leaves and views of one call together take at most
 * the launch parameters a kernel has (VKDS_ERROR_UNSUPPORTED says so: about 22 nested
 * reverses, and 8 to 11 nested permutations, each of which takes its map's leaf too;
 * transforms take none).
 *
 * Every error is reported before anything is submitted or written: NULL arguments,
 * invalid sequences, mismatched counts or types, read-only outputs, overlap, a
 * sequence of another context (VKDS_ERROR_WRONG_CONTEXT), a type the device lacks, an
 * operator that does not compile. On error the selection is released unused. (One
 * check runs on the device, since the data may be there: the order of a histogram's
 * boundaries. It still comes before anything is written; see "histograms".)
 *
 * A policy with a capacity (vkds_policy_info.capacity) that has every candidate full is
 * waited out, as vkds_submit waits it out, by the blocking and the asynchronous forms
 * alike: until a task in flight finishes, or, after the policy's submit_timeout_ns (0:
 * 10 s), VKDS_ERROR_TIMEOUT with nothing submitted or written.
 *
 * Host memory is streamed when every sequence keeps element i at element i of its
 * leaves (plain sequences, counting, discard, transform and zip views): the call runs
 * chunk by chunk, the host threads copying chunk i+1 into one of two host-visible stream
 * buffers while the kernel reads chunk i from the other, and outputs come back the same
 * way. Memory used: two stream buffers of half the staging ring (staging_chunks *
 * staging_chunk_bytes / 2; 16 MiB by default), or of the data's size when it is
 * smaller, per host sequence, and no device memory of the data's size; a reduction
 * runs in at most 1,000 chunks, so past 1,000 half rings of data its buffers grow to
 * a thousandth of the data. An _async form streams all but its last chunks before it
 * returns (the host copies are the call's work there): on host data it overlaps the
 * caller less than on device data. A context keeps the temporary buffers its calls used
 * for the next calls, up to vkds_context_info.keep_bytes (eight staging rings' worth,
 * 256 MiB, by default; on a discrete GPU a sixteenth of its memory up to 2 GiB; the
 * oldest go first), and the buffers that staged data whole (below) up to as much again
 * (a smaller one does not push out a larger), until it is destroyed, vkds_context_trim
 * is called, or a device runs out of memory (then they are given back first, and the
 * allocation tried again). A streamed
 * reduction folds each chunk in the order above into a chunk total, then the chunk
 * totals as step 3 folds group results (thread t takes totals t, t + 256, ... in chunk
 * order, then step 2), so its result also depends on the chunk size (fixed per
 * context). Other host data (under reverse or permutation views, user types, buffers
 * of another device, and the data of the algorithms that do not stream: compaction,
 * by-key scans and reductions, histograms, sorts, merge, searches) is staged whole into a
 * temporary device buffer, of the data's size rounded up to a quarter of a power of two
 * (at most 25% more), kept for reuse as above (a 1 GiB buffer took 21 ms to make and
 * 19.5 ms to destroy on an H200's driver; past keep_bytes one is still made each call).
 *
 * All functions are thread-safe: several threads may run algorithms through one policy
 * at once. */
#ifndef VKDS_ALGORITHM_H
#define VKDS_ALGORITHM_H

#include <stdbool.h>
#include <stdint.h>

#include "vkds/policy.h"
#include "vkds/seq.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- operators --------------------------------------------------------------------- */

typedef enum vkds_op_kind {
  VKDS_OP_DEFAULT = 0, /* the algorithm's default: plus */
  VKDS_OP_PLUS = 1,
  VKDS_OP_MULTIPLIES = 2,
  /* b when b < a, else a; for floats also b when a is a NaN (IEEE 754's minNum: a NaN
   * on either side is skipped, so the order of a scan's or reduction's steps cannot
   * change the result; NaN only from NaNs alone: a scan's outputs until the first
   * number and a reduce_by_key segment of NaNs alone, while a reduction of nothing but
   * NaNs gives its identity, +inf or -inf: a reduction starts from the identity, a scan
   * or a segment from its first element) */
  VKDS_OP_MIN = 3,
  VKDS_OP_MAX = 4, /* b when a < b, else a; for floats also b when a is a NaN (maxNum) */
  VKDS_OP_BIT_AND = 5, /* integer types only */
  VKDS_OP_BIT_OR = 6,
  VKDS_OP_BIT_XOR = 7,
  /* 1 when both are nonzero, else 0. An element with nothing before it is not
   * combined, so it stays as it is, as in std::inclusive_scan: a scan's out[0] without
   * init (an exclusive scan's out[1]) and a one-element segment of reduce_by_key or of
   * a scan by key keep the element's value ({5, 0} inclusive: {5, 0}); a reduction,
   * which starts from the identity, gives 0 or 1 ({5}: 1). */
  VKDS_OP_LOGICAL_AND = 8,
  VKDS_OP_LOGICAL_OR = 9, /* 1 when either is nonzero, else 0 (as LOGICAL_AND: 0 or 1 only once combined) */
  VKDS_OP_GLSL = 10,       /* `glsl` over a and b, with `identity` */
} vkds_op_kind;

/* A reduction operator. Zero-initialised: plus. NULL where an operator is taken: plus. */
typedef struct vkds_op {
  vkds_op_kind kind;
  /* VKDS_OP_GLSL: an expression of `a` and `b` (both of the reduction's type). In a
   * reduction it must be associative and commutative (see the order above); in a scan,
   * associative is enough. */
  const char *glsl;
  /* VKDS_OP_GLSL: the identity as a GLSL expression of the reduction's type, e.g. "0",
   * "1.0", "-1.0 / 0.0": op(identity, x) == x, and in a reduction op(x, identity) == x
   * too. REQUIRED with glsl. */
  const char *identity;
} vkds_op;

/* ---- recording into the application's command buffer ---------------------------- */

/* Where the vkds_cmd_X forms record. vkds records its dispatches into `cmd` with a
 * global memory barrier before the first (so the application's earlier shader and
 * transfer writes are seen) and after the last (so later shader, transfer and host
 * reads see the results). The command buffer must be in the recording state and be
 * submitted to a queue of `resource`'s device; vkds keeps nothing of the call, so the
 * sequences' memory and `scratch` must live until the work is done. It leaves its
 * compute pipeline, push constants and (where leaves are bound as storage buffers)
 * push descriptors of set 0 bound: rebind yours after it. A call that fails on its
 * arguments records nothing; one whose kernel the driver refuses (a pipeline is made at
 * its first dispatch, over a device limit) fails with the barrier and the dispatches
 * before it recorded: the command buffer stays valid, but do not submit that call's
 * part of it. */
typedef struct vkds_cmd {
  VkCommandBuffer cmd;     /* REQUIRED */
  vkds_resource *resource; /* REQUIRED: the device the command buffer runs on */
  /* Temporary device memory: a range of a buffer on that device of at least
   * vkds_algorithm_scratch_bytes() bytes (an algorithm that needs none takes {0}). Two
   * recorded algorithms that may run at the same time need separate scratch. Scratch
   * (or a status or result view) on another VkDevice is VKDS_ERROR_WRONG_DEVICE, too
   * little, misaligned, or overlapping the call's sequences or its result view
   * VKDS_ERROR_INVALID_ARGUMENT (so is a result view over the call's sequences; only the
   * part of the scratch the call uses is checked, from its start: a view larger than that
   * may hold other data past it). An
   * algorithm that needs no scratch (element-wise ones, the searches) ignores it; merge
   * uses it when it is large enough (vkds_merge_scratch_bytes). Where a call's launch
   * arguments outgrow the device's push constants (records of 3 or 4 parts merged on a
   * device with 128 bytes of them, as lavapipe; zips of many parts; views of views),
   * every algorithm keeps them in the scratch too, after what the algorithm uses,
   * written into the command buffer (vkCmdUpdateBuffer): 240 bytes a dispatch at most
   * (a scan 3 dispatches, a histogram 3, a radix sort 14 or 26, a merge sort 1 and 2 a
   * merge pass), which the queries of the families that need scratch include
   * (vkds_algorithm_scratch_bytes, and vkds_reduce_, histogram_, sort_, argsort_ and
   * merge_sort_scratch_bytes), and which their recording forms require whether the
   * arguments outgrow the push constants or not. Element-wise algorithms, searches and
   * merges, which need no scratch otherwise (vkds_merge_scratch_bytes gives a merge's
   * own and no more), take it only then: a few hundred bytes, which
   * vkds_algorithm_scratch_bytes covers (the message of a scratch too small gives the
   * figure). */
  vkds_view scratch;
} vkds_cmd;

/* The scratch bytes any algorithm of this header needs over `count` elements on the
 * device of `res` (0 for NULL). Enough for every algorithm and type at that count except
 * histograms (their scratch goes by their bins: vkds_histogram_scratch_bytes), a sort's
 * copies of its keys and values included (about 24 bytes per element for argsort's of
 * 8-byte keys; the other families need far less: vkds_sort_scratch_bytes and
 * vkds_argsort_scratch_bytes give a sort's own). UINT64_MAX past 2^48 elements, which
 * no algorithm call takes (as the other scratch queries past their algorithm's count:
 * no buffer can be that large). */
VKDS_API uint64_t vkds_algorithm_scratch_bytes(const vkds_resource *res, uint64_t count);

/* ---- element-wise ------------------------------------------------------------------ */

/* out[i] = *value for every i. `value` is one element of out's type. */
VKDS_API vkds_result vkds_fill(vkds_policy *p, const vkds_seq *out, const void *value);
VKDS_API vkds_result vkds_fill_async(vkds_policy *p, const vkds_seq *out, const void *value, vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_fill(const vkds_cmd *c, const vkds_seq *out, const void *value);

/* out[i] = in[i], converted to out's type. Counts must match; no overlap. */
VKDS_API vkds_result vkds_copy(vkds_policy *p, const vkds_seq *in, const vkds_seq *out);
VKDS_API vkds_result vkds_copy_async(vkds_policy *p, const vkds_seq *in, const vkds_seq *out, vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_copy(const vkds_cmd *c, const vkds_seq *in, const vkds_seq *out);

/* out[i] = op(in[i]): `op` is a GLSL expression of `x`. out may be in itself. */
VKDS_API vkds_result vkds_transform(vkds_policy *p, const vkds_seq *in, const vkds_seq *out, const char *op);
VKDS_API vkds_result vkds_transform_async(vkds_policy *p, const vkds_seq *in, const vkds_seq *out, const char *op,
                                          vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_transform(const vkds_cmd *c, const vkds_seq *in, const vkds_seq *out, const char *op);

/* out[i] = op(in1[i], in2[i]): `op` is a GLSL expression of `a` and `b`. out may be in1
 * or in2 itself (in place, as for transform), and must not overlap them otherwise. */
VKDS_API vkds_result vkds_transform2(vkds_policy *p, const vkds_seq *in1, const vkds_seq *in2, const vkds_seq *out,
                                     const char *op);
VKDS_API vkds_result vkds_transform2_async(vkds_policy *p, const vkds_seq *in1, const vkds_seq *in2,
                                           const vkds_seq *out, const char *op, vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_transform2(const vkds_cmd *c, const vkds_seq *in1, const vkds_seq *in2,
                                         const vkds_seq *out, const char *op);

/* out[0] = in[0], out[i] = in[i] - in[i - 1] (op NULL) or `op`, a GLSL expression of `a`
 * (in[i]) and `b` (in[i - 1]) converted to out's type: oneDPL's adjacent_difference.
 * The difference (or op) is computed in in's type, then converted: u32 {5, 3} into I64
 * gives {5, 4294967294} (an integer difference wraps in in's type); for a wider result,
 * say so in op ("int64_t(a) - int64_t(b)"). Numbers only (a zip is VKDS_ERROR_INVALID_ARGUMENT); out has in's count and does not
 * overlap it (not in place: element i reads element i - 1). Host data is staged whole
 * (element i reads the one before it, which a chunk boundary would split); otherwise as
 * transform. */
VKDS_API vkds_result vkds_adjacent_difference(vkds_policy *p, const vkds_seq *in, const vkds_seq *out,
                                              const char *op);
VKDS_API vkds_result vkds_adjacent_difference_async(vkds_policy *p, const vkds_seq *in, const vkds_seq *out,
                                                    const char *op, vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_adjacent_difference(const vkds_cmd *c, const vkds_seq *in, const vkds_seq *out,
                                                  const char *op);

/* ---- reductions ---------------------------------------------------------------------
 * `result` points to one value of the reduction's type; `init` (NULL: none) too. In the
 * vkds_cmd_ forms `result` is a device view that receives the same bytes, aligned to
 * their size (8 for an index and its value), and the scratch view starts 16-byte
 * aligned, of at least vkds_reduce_scratch_bytes(resource, count) bytes (else
 * VKDS_ERROR_INVALID_ARGUMENT); the same for every reduction below (count, min_element,
 * equal, is_sorted, ...). */

/* The scratch bytes a recorded reduction over `count` elements needs on the device of
 * `res`: a partial result per work group, a few KiB at any count, and room for its
 * launch arguments (vkds_cmd) (0 for NULL; UINT64_MAX past 2^48 elements).
 * vkds_algorithm_scratch_bytes is at least as large. */
VKDS_API uint64_t vkds_reduce_scratch_bytes(const vkds_resource *res, uint64_t count);

/* *result = init op in[0] op in[1] op ... (in the documented order). Empty: init, or
 * the identity when init is NULL. */
VKDS_API vkds_result vkds_reduce(vkds_policy *p, const vkds_seq *in, const vkds_op *op, const void *init, void *result);
VKDS_API vkds_result vkds_reduce_async(vkds_policy *p, const vkds_seq *in, const vkds_op *op, const void *init,
                                       void *result, vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_reduce(const vkds_cmd *c, const vkds_seq *in, const vkds_op *op, const void *init,
                                     vkds_view result);

/* The reduction of transform(in[i]): `transform` is a GLSL expression of `x` whose
 * value is converted to `type` (VKDS_TYPE_BYTES: in's type), the reduction's type. */
VKDS_API vkds_result vkds_transform_reduce(vkds_policy *p, const vkds_seq *in, const char *transform, vkds_type type,
                                           const vkds_op *op, const void *init, void *result);
VKDS_API vkds_result vkds_transform_reduce_async(vkds_policy *p, const vkds_seq *in, const char *transform,
                                                 vkds_type type, const vkds_op *op, const void *init, void *result,
                                                 vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_transform_reduce(const vkds_cmd *c, const vkds_seq *in, const char *transform,
                                               vkds_type type, const vkds_op *op, const void *init, vkds_view result);

/* The reduction of transform(in1[i], in2[i]) (an expression of `a` and `b`);
 * VKDS_TYPE_BYTES: in1's type. */
VKDS_API vkds_result vkds_transform_reduce2(vkds_policy *p, const vkds_seq *in1, const vkds_seq *in2,
                                            const char *transform, vkds_type type, const vkds_op *op,
                                            const void *init, void *result);
VKDS_API vkds_result vkds_transform_reduce2_async(vkds_policy *p, const vkds_seq *in1, const vkds_seq *in2,
                                                  const char *transform, vkds_type type, const vkds_op *op,
                                                  const void *init, void *result, vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_transform_reduce2(const vkds_cmd *c, const vkds_seq *in1, const vkds_seq *in2,
                                                const char *transform, vkds_type type, const vkds_op *op,
                                                const void *init, vkds_view result);

/* init + sum of in1[i] * in2[i], in in1's type. */
VKDS_API vkds_result vkds_inner_product(vkds_policy *p, const vkds_seq *in1, const vkds_seq *in2, const void *init,
                                        void *result);
VKDS_API vkds_result vkds_inner_product_async(vkds_policy *p, const vkds_seq *in1, const vkds_seq *in2,
                                              const void *init, void *result, vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_inner_product(const vkds_cmd *c, const vkds_seq *in1, const vkds_seq *in2,
                                            const void *init, vkds_view result);

/* How many elements equal *value (one element of in's type; floats compare with ==,
 * so NaN counts nothing). The result is a uint64_t. */
VKDS_API vkds_result vkds_count(vkds_policy *p, const vkds_seq *in, const void *value, uint64_t *result);
VKDS_API vkds_result vkds_count_async(vkds_policy *p, const vkds_seq *in, const void *value, uint64_t *result,
                                      vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_count(const vkds_cmd *c, const vkds_seq *in, const void *value, vkds_view result);

/* How many elements satisfy `pred` (a GLSL bool expression of `x`). */
VKDS_API vkds_result vkds_count_if(vkds_policy *p, const vkds_seq *in, const char *pred, uint64_t *result);
VKDS_API vkds_result vkds_count_if_async(vkds_policy *p, const vkds_seq *in, const char *pred, uint64_t *result,
                                         vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_count_if(const vkds_cmd *c, const vkds_seq *in, const char *pred, vkds_view result);

/* The index of the first element equal to *value (find; NaN equals nothing, -0 equals
 * +0), for which `pred` is true (find_if) or false (find_if_not): oneDPL's find, find_if
 * and find_if_not, as an index. in's count when there is none (so 0 for an empty
 * sequence). A reduction (the smallest index found), so the whole sequence is read; a
 * predicate takes a zip's tuples (x.p0, ...) as count_if's does. In the vkds_cmd_ forms
 * `result` receives the index as a uint64_t (the scratch as for the reductions). */
VKDS_API vkds_result vkds_find(vkds_policy *p, const vkds_seq *in, const void *value, uint64_t *index);
VKDS_API vkds_result vkds_find_async(vkds_policy *p, const vkds_seq *in, const void *value, uint64_t *index,
                                     vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_find(const vkds_cmd *c, const vkds_seq *in, const void *value, vkds_view result);
VKDS_API vkds_result vkds_find_if(vkds_policy *p, const vkds_seq *in, const char *pred, uint64_t *index);
VKDS_API vkds_result vkds_find_if_async(vkds_policy *p, const vkds_seq *in, const char *pred, uint64_t *index,
                                        vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_find_if(const vkds_cmd *c, const vkds_seq *in, const char *pred, vkds_view result);
VKDS_API vkds_result vkds_find_if_not(vkds_policy *p, const vkds_seq *in, const char *pred, uint64_t *index);
VKDS_API vkds_result vkds_find_if_not_async(vkds_policy *p, const vkds_seq *in, const char *pred, uint64_t *index,
                                            vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_find_if_not(const vkds_cmd *c, const vkds_seq *in, const char *pred,
                                          vkds_view result);

/* The first index of the smallest (largest) element, and its value (value may be NULL).
 * Elements compare with <; a NaN is never chosen over a number (all NaN: index 0).
 * Empty: *index = 0 and *value untouched. In the vkds_cmd_ forms `result` (16 bytes,
 * 8-byte aligned, whatever the type) receives the index (a uint64_t) followed by the
 * value at byte 8. */
VKDS_API vkds_result vkds_min_element(vkds_policy *p, const vkds_seq *in, uint64_t *index, void *value);
VKDS_API vkds_result vkds_min_element_async(vkds_policy *p, const vkds_seq *in, uint64_t *index, void *value,
                                            vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_min_element(const vkds_cmd *c, const vkds_seq *in, vkds_view result);
VKDS_API vkds_result vkds_max_element(vkds_policy *p, const vkds_seq *in, uint64_t *index, void *value);
VKDS_API vkds_result vkds_max_element_async(vkds_policy *p, const vkds_seq *in, uint64_t *index, void *value,
                                            vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_max_element(const vkds_cmd *c, const vkds_seq *in, vkds_view result);

/* Whether any / every / no element satisfies `pred` (a GLSL bool expression of `x`).
 * Empty: any false, all true, none true. In the vkds_cmd_ forms `result` receives a
 * uint32_t 0 or 1. */
VKDS_API vkds_result vkds_any_of(vkds_policy *p, const vkds_seq *in, const char *pred, bool *result);
VKDS_API vkds_result vkds_any_of_async(vkds_policy *p, const vkds_seq *in, const char *pred, bool *result,
                                       vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_any_of(const vkds_cmd *c, const vkds_seq *in, const char *pred, vkds_view result);
VKDS_API vkds_result vkds_all_of(vkds_policy *p, const vkds_seq *in, const char *pred, bool *result);
VKDS_API vkds_result vkds_all_of_async(vkds_policy *p, const vkds_seq *in, const char *pred, bool *result,
                                       vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_all_of(const vkds_cmd *c, const vkds_seq *in, const char *pred, vkds_view result);
VKDS_API vkds_result vkds_none_of(vkds_policy *p, const vkds_seq *in, const char *pred, bool *result);
VKDS_API vkds_result vkds_none_of_async(vkds_policy *p, const vkds_seq *in, const char *pred, bool *result,
                                        vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_none_of(const vkds_cmd *c, const vkds_seq *in, const char *pred, vkds_view result);

/* Whether in1 and in2 have the same count and in1[i] == in2[i] for every i (as GLSL ==
 * after converting in2's element to in1's type). */
VKDS_API vkds_result vkds_equal(vkds_policy *p, const vkds_seq *in1, const vkds_seq *in2, bool *result);
VKDS_API vkds_result vkds_equal_async(vkds_policy *p, const vkds_seq *in1, const vkds_seq *in2, bool *result,
                                      vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_equal(const vkds_cmd *c, const vkds_seq *in1, const vkds_seq *in2, vkds_view result);

/* ---- scans ------------------------------------------------------------------------
 *
 *   inclusive:  out[i] = init op x[0] op x[1] op ... op x[i]
 *   exclusive:  out[i] = init op x[0] op ... op x[i-1]            (out[0] = init)
 *
 * where x[j] is in[j], or transform(in[j]) in the transform forms (a GLSL expression of
 * `x`; over a zip, of x.p0, x.p1, ...), converted to out's type: a scan accumulates in
 * its output's type (a U32 input scanned into a U64 output does not wrap at 2^32), and
 * `op` (NULL: plus) works on that type. `init` points to one value of out's type; NULL:
 * none, so an inclusive out[0] is x[0] and an exclusive out[0] is op's identity. No
 * identity is ever combined into an element that has something before it, so
 * out[i] is exactly the host's left-to-right scan for integers (plus and multiplies
 * wrap around). Counts must match. out may be in itself (the same range, or the same
 * views of it: in place), and must not overlap it otherwise. In the vkds_cmd_ forms
 * `init` is read at the call.
 *
 * Two paths; vkds_resource_scan_path() says which one a device runs:
 *   VKDS_SCAN_PATH_SINGLE: one dispatch, a chained scan with decoupled look-back.
 *     Reads n elements and writes n. Tiles take their numbers from an atomic counter;
 *     each publishes its total (in 64-bit words that carry their own flag, so a reader
 *     needs no ordering between locations); the last tile of each block of S tiles (S:
 *     the subgroup size) publishes the block's total, the last of each S blocks the
 *     inclusive prefix up to there, and a subgroup reads the at most 2S values its tile
 *     needs (shaders/algorithm/scan_single.glsl). It relies on work groups that run
 *     making progress while another waits, but never waits for ever: after a bounded
 *     number of spins a value not published is made by the waiting group itself
 *     (decoupled fallback: a silent predecessor's tile reduced, which costs reading it
 *     twice, or a block's or superblock's value from the ones below it). Needs subgroup
 *     ballots and shuffles and 64-bit buffer atomics (shaderBufferInt64Atomics).
 *     For I32 and U32 under PLUS, MULTIPLIES, MIN, MAX and the bitwise operators (where
 *     every grouping gives the same bits), and for compaction's flags, each tile
 *     publishes its total and then its inclusive prefix, which the next tiles' subgroup
 *     adds up back to the nearest prefix (the textbook chained scan;
 *     shaders/algorithm/scan_chained.glsl), in tiles of 256 threads x 16 elements below
 *     2^22 elements, then 512 x 16, 512 x 20 from 2^23 and 512 x 32 from 2^24 (smaller
 *     where the device takes fewer threads a group; the 512-thread tiles, and
 *     compaction's, read their input again after the look-back); the same bounded spins
 *     and fallback.
 *   VKDS_SCAN_PATH_PORTABLE: reduce-then-scan, three dispatches (one for up to 4
 *     tiles): group totals, their scan, the scan itself. Reads n twice, writes n; no
 *     group ever waits for another, on any device.
 * The rule: PORTABLE on every device, because it was the faster path at every size
 * measured on an H100 (2^16 to 2^28 u32; bench/RESULTS.md, 2026-11-23): the general
 * SINGLE pass loses there to its look-back's waits (0.59x CUB's InclusiveSum at 2^28
 * against PORTABLE's 0.75x). One refinement, per call: on NVIDIA GPUs (vendor 0x10de,
 * whose running groups make progress in practice) a scan that the chained tiles above
 * take, of at least 2^21 elements (compaction: 2^22), runs SINGLE in them, measured
 * faster there (H100, u32, 2026-11-26: inclusive plus 0.95-0.99x CUB at 2^28 against
 * PORTABLE's 0.79x; copy_if 0.83x against 0.72x; PORTABLE stays faster below 2^21).
 * vkds_resource_scan_path() answers for the other scans. SINGLE runs where it is asked
 * for and the device can run it. vkds_context_info.scan_path, else the environment
 * variable VKDS_SCAN_PATH=single|portable, overrides the rule (refinement included)
 * for every device of a context (a device that cannot run SINGLE runs PORTABLE), and
 * VKDS_SCAN_CHAINED=off keeps integer scans on the general single pass. A scan in place
 * always runs PORTABLE: the fallback re-reads a stalled tile's input, which its owner
 * may already have overwritten.
 *
 * Floats are repeatable bit for bit: the order depends only on the device (its subgroup
 * size), the count, the output type and the path (and, for streamed host data, on the
 * chunk size: each chunk starts from the previous one's last inclusive value). No float
 * atomics. The elements are cut into tiles of 256 * R consecutive elements (R = 16 for
 * 4-byte output types, 8 for 8-byte); thread t of a tile folds its R elements left to
 * right, the 256 thread totals are scanned by a fixed tree of subgroup steps
 * (shaders/algorithm/scan_tile.glsl), and element j of thread t is
 * op(op(C, thread t's prefix), its own fold up to j), C being what precedes the tile:
 *   SINGLE: for tile k in block b = k / S (lane i = k % S) of superblock s = b / S
 *     (lane j = b % S): C = R(s-1) op Bscan_j op Ascan_i, where Ascan_i is the
 *     subgroup scan (the same fixed tree) of the tile totals of its block before it,
 *     Bscan_j that of the block totals of its superblock before its block (a block's
 *     total: the tree's last lane over its S tile totals), and R(s-1) = R(s-2) op the
 *     tree's total over superblock s-1's block totals (R(-1): init), each part left out
 *     where it is empty. Whichever group computes a value and whenever, its bits are
 *     the same;
 *   PORTABLE: the tiles go in runs of equal length to at most 1024 groups; C is the
 *     group's carry (init and the group totals before it, scanned by the same tree, 4
 *     per thread) op the totals of the group's tiles before this one, left to right.
 * The two paths may differ in the last bits of a float sum; integers are exact on both.
 * Integer scans with a built-in operator (all commute), exact whatever the grouping,
 * fold the portable path's group totals faster on GPUs: as a reduction does (each thread
 * its runs of 4, 1024 elements apart, then the group's threads).
 *
 * Errors as for every algorithm, and VKDS_ERROR_UNSUPPORTED on a device without
 * subgroup shuffles in compute shaders, or past what one scan takes (the portable path:
 * 1024 groups of at most 1024 tiles, about 4.3e9 4-byte or 2.1e9 8-byte elements; the
 * single pass: a group of threads a tile in one dispatch of at most 2^32 - 1 threads,
 * about 6.9e10 4-byte or 3.4e10 8-byte elements, 1.4e11 in the chained tiles). The
 * vkds_cmd_ forms need a 16-byte aligned scratch of vkds_algorithm_scratch_bytes(
 * resource, count) bytes. */

/* Which path scans run on the device of `res` (out of place): VKDS_SCAN_PATH_SINGLE or
 * VKDS_SCAN_PATH_PORTABLE, the rule and overrides above resolved; DEFAULT for NULL. */
VKDS_API vkds_scan_path vkds_resource_scan_path(const vkds_resource *res);

VKDS_API vkds_result vkds_inclusive_scan(vkds_policy *p, const vkds_seq *in, const vkds_seq *out, const vkds_op *op,
                                         const void *init);
VKDS_API vkds_result vkds_inclusive_scan_async(vkds_policy *p, const vkds_seq *in, const vkds_seq *out,
                                               const vkds_op *op, const void *init, vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_inclusive_scan(const vkds_cmd *c, const vkds_seq *in, const vkds_seq *out,
                                             const vkds_op *op, const void *init);

VKDS_API vkds_result vkds_exclusive_scan(vkds_policy *p, const vkds_seq *in, const vkds_seq *out, const vkds_op *op,
                                         const void *init);
VKDS_API vkds_result vkds_exclusive_scan_async(vkds_policy *p, const vkds_seq *in, const vkds_seq *out,
                                               const vkds_op *op, const void *init, vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_exclusive_scan(const vkds_cmd *c, const vkds_seq *in, const vkds_seq *out,
                                             const vkds_op *op, const void *init);

/* The scans of transform(in[i]): `transform` is a GLSL expression of `x`, REQUIRED. */
VKDS_API vkds_result vkds_transform_inclusive_scan(vkds_policy *p, const vkds_seq *in, const vkds_seq *out,
                                                   const char *transform, const vkds_op *op, const void *init);
VKDS_API vkds_result vkds_transform_inclusive_scan_async(vkds_policy *p, const vkds_seq *in, const vkds_seq *out,
                                                         const char *transform, const vkds_op *op, const void *init,
                                                         vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_transform_inclusive_scan(const vkds_cmd *c, const vkds_seq *in, const vkds_seq *out,
                                                       const char *transform, const vkds_op *op, const void *init);

VKDS_API vkds_result vkds_transform_exclusive_scan(vkds_policy *p, const vkds_seq *in, const vkds_seq *out,
                                                   const char *transform, const vkds_op *op, const void *init);
VKDS_API vkds_result vkds_transform_exclusive_scan_async(vkds_policy *p, const vkds_seq *in, const vkds_seq *out,
                                                         const char *transform, const vkds_op *op, const void *init,
                                                         vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_transform_exclusive_scan(const vkds_cmd *c, const vkds_seq *in, const vkds_seq *out,
                                                       const char *transform, const vkds_op *op, const void *init);

/* ---- stream compaction --------------------------------------------------------------
 *
 * Each keeps some elements of `in`, in their order, writes them to `out` from element
 * 0, and gives their count: on the host (`*count`, a uint64_t; the _async forms write it
 * when a wait or poll sees the submission done) or, in the vkds_cmd_ forms, as a uint64_t
 * at the 8-byte aligned device view `count`. The outputs may have any number of
 * elements: what does not fit is not written (the count still says how many were kept),
 * so an output as long as `in` always takes everything, and elements past the kept
 * ones keep their values (a staged output that is a host sequence or a buffer itself
 * is copied back only up to what was written, and nothing of it goes up; one under a
 * view, such as a reverse, is staged both ways). Elements are
 * converted to the output's type. They run on the scans (same paths; scans of 32-bit
 * counts, so at most 2^32 - 1 elements): on the single path in the chained tiles, one
 * dispatch (each tile reads its part of `in` again after its look-back, mostly from the
 * GPU's cache); the rule's refinement gives them SINGLE on NVIDIA GPUs from 2^22
 * elements (on an H100 u32 copy_if at 2^28 took 864 us against PORTABLE's 990,
 * 2026-11-26), PORTABLE elsewhere. Outputs must
 * not overlap `in` or each other (no in place: these are oneDPL's copy_if,
 * remove_copy_if, partition_copy and unique_copy). `in` holds numbers, or records: a zip
 * (vkds_seq_zip) of numeric parts, kept whole; the predicate then sees the tuple (x.p0,
 * x.p1, ...), unique compares tuples part by part (GLSL == on each), and every output
 * must be a zip of as many numeric parts (any sequence kinds a zip takes, a discard
 * among them; part k of a kept tuple goes to part k, converted to its type; parts must
 * not overlap); else VKDS_ERROR_INVALID_ARGUMENT. E.g. particles as x, y, z arrays:
 *   vkds_seq in = vkds_seq_zip((vkds_seq[]){xs, ys, zs}, 3), out = vkds_seq_zip(outs, 3);
 *   vkds_copy_if(pol, &in, &out, "x.p0 * x.p0 + x.p1 * x.p1 + x.p2 * x.p2 < 1.0", &kept);
 * Host data is staged whole, not streamed: where an element lands depends on everything
 * before it. */

/* The elements for which `pred` (a GLSL bool expression of `x`) holds. */
VKDS_API vkds_result vkds_copy_if(vkds_policy *p, const vkds_seq *in, const vkds_seq *out, const char *pred,
                                  uint64_t *count);
VKDS_API vkds_result vkds_copy_if_async(vkds_policy *p, const vkds_seq *in, const vkds_seq *out, const char *pred,
                                        uint64_t *count, vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_copy_if(const vkds_cmd *c, const vkds_seq *in, const vkds_seq *out, const char *pred,
                                      vkds_view count);

/* The elements for which `pred` does not hold. */
VKDS_API vkds_result vkds_remove_if(vkds_policy *p, const vkds_seq *in, const vkds_seq *out, const char *pred,
                                    uint64_t *count);
VKDS_API vkds_result vkds_remove_if_async(vkds_policy *p, const vkds_seq *in, const vkds_seq *out, const char *pred,
                                          uint64_t *count, vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_remove_if(const vkds_cmd *c, const vkds_seq *in, const vkds_seq *out,
                                        const char *pred, vkds_view count);

/* A stable partition: the elements for which `pred` holds to `out_true`, the others to
 * `out_false` (both REQUIRED), each in order; *count: how many went to out_true. */
VKDS_API vkds_result vkds_partition(vkds_policy *p, const vkds_seq *in, const vkds_seq *out_true,
                                    const vkds_seq *out_false, const char *pred, uint64_t *count);
VKDS_API vkds_result vkds_partition_async(vkds_policy *p, const vkds_seq *in, const vkds_seq *out_true,
                                          const vkds_seq *out_false, const char *pred, uint64_t *count,
                                          vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_partition(const vkds_cmd *c, const vkds_seq *in, const vkds_seq *out_true,
                                        const vkds_seq *out_false, const char *pred, vkds_view count);

/* The first element of each run of equal adjacent elements (GLSL ==: every NaN is kept). */
VKDS_API vkds_result vkds_unique(vkds_policy *p, const vkds_seq *in, const vkds_seq *out, uint64_t *count);
VKDS_API vkds_result vkds_unique_async(vkds_policy *p, const vkds_seq *in, const vkds_seq *out, uint64_t *count,
                                       vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_unique(const vkds_cmd *c, const vkds_seq *in, const vkds_seq *out, vkds_view count);

/* ---- by key: segmented scans and reduce by key ------------------------------------
 *
 * `keys` and `values` must be as long as each other (else VKDS_ERROR_INVALID_ARGUMENT).
 * A segment is a maximal run of adjacent equal keys, compared with GLSL ==: floats as
 * numbers (-0 equals 0, and a NaN key is a segment of its own, as in unique), a zip of
 * keys part by part. Values are numbers; keys are numbers or a zip of numbers (reduce by
 * key then writes keys_out as a zip of as many numeric parts, part k of each segment's
 * first key to part k, or into a discard view; else VKDS_ERROR_INVALID_ARGUMENT). v[i] is values[i] converted to out's type (the scans) or values_out's (reduce by
 * key), which accumulates as in the scans; `op` (NULL: plus) works on that type.
 *
 *   inclusive_scan_by_key:  out[i] = init op v[s] op v[s+1] op ... op v[i]
 *   exclusive_scan_by_key:  out[i] = init op v[s] op ... op v[i-1]         (out[s] = init)
 *
 * s being the first element of i's segment; `init` is one value of out's type, put at
 * the start of every segment; NULL: none (an inclusive out[s] is v[s], an exclusive one
 * op's identity). Integers are exact (wrapping as the scans do).
 *
 *   reduce_by_key:  keys_out[j] = the first key of segment j (converted to keys_out's type)
 *                   values_out[j] = v[first] op ... op v[last] of segment j
 *
 * and the number of segments as the count, given like the compaction functions': on the
 * host (`*count`, the _async form when a wait or poll sees it done) or, recorded, as a
 * uint64_t at the 8-byte aligned device view `count`. The outputs may have any length:
 * what does not fit is not written (the count still says how many segments there were),
 * and elements past the written ones keep their values. At most 2^32 - 1 elements.
 *
 * They are the scans (same two paths, same rule, vkds_resource_scan_path) of pairs
 * (s[i], v[i]), s[i] = 1 where a segment starts, under the operator
 * (sa, a) then (sb, b) = (sa | sb, sb ? b : a op b): a start drops what came before it
 * (reduce by key counts the starts instead, which numbers the segments, and writes each
 * segment's key at its start and its value at its end). One pass over keys and values
 * on the single path, plus one read of the key before each thread's run of elements.
 * Floats are repeatable bit for bit as the scans are: the scans' order (tiles, the tree
 * of subgroup steps, left-to-right carries) restricted to each segment, so the bits
 * depend on the device, the count, the output type, the path and where segments start.
 * Host data is staged whole, not streamed (reduce by key's outputs as compaction's:
 * copied back up to the count). Outputs must not overlap the keys or values
 * (no in place). Errors as for every algorithm; the vkds_cmd_ forms need a 16-byte
 * aligned scratch of vkds_algorithm_scratch_bytes(resource, count) bytes. */

VKDS_API vkds_result vkds_inclusive_scan_by_key(vkds_policy *p, const vkds_seq *keys, const vkds_seq *values,
                                                const vkds_seq *out, const vkds_op *op, const void *init);
VKDS_API vkds_result vkds_inclusive_scan_by_key_async(vkds_policy *p, const vkds_seq *keys, const vkds_seq *values,
                                                      const vkds_seq *out, const vkds_op *op, const void *init,
                                                      vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_inclusive_scan_by_key(const vkds_cmd *c, const vkds_seq *keys, const vkds_seq *values,
                                                    const vkds_seq *out, const vkds_op *op, const void *init);

VKDS_API vkds_result vkds_exclusive_scan_by_key(vkds_policy *p, const vkds_seq *keys, const vkds_seq *values,
                                                const vkds_seq *out, const vkds_op *op, const void *init);
VKDS_API vkds_result vkds_exclusive_scan_by_key_async(vkds_policy *p, const vkds_seq *keys, const vkds_seq *values,
                                                      const vkds_seq *out, const vkds_op *op, const void *init,
                                                      vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_exclusive_scan_by_key(const vkds_cmd *c, const vkds_seq *keys, const vkds_seq *values,
                                                    const vkds_seq *out, const vkds_op *op, const void *init);

VKDS_API vkds_result vkds_reduce_by_key(vkds_policy *p, const vkds_seq *keys, const vkds_seq *values,
                                        const vkds_seq *keys_out, const vkds_seq *values_out, const vkds_op *op,
                                        uint64_t *count);
VKDS_API vkds_result vkds_reduce_by_key_async(vkds_policy *p, const vkds_seq *keys, const vkds_seq *values,
                                              const vkds_seq *keys_out, const vkds_seq *values_out, const vkds_op *op,
                                              uint64_t *count, vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_reduce_by_key(const vkds_cmd *c, const vkds_seq *keys, const vkds_seq *values,
                                            const vkds_seq *keys_out, const vkds_seq *values_out, const vkds_op *op,
                                            vkds_view count);

/* ---- histograms -------------------------------------------------------------------
 *
 * Each counts the samples of `in` (numbers: I32, U32, F32, I64, U64, F64; views too) into
 * `counts`, a sequence of U32 elements whose length is the number of bins: counts[k] is
 * the number of samples in bin k. Every element of `counts` is written (no accumulation
 * into what was there). Samples in no bin (below the first, at or above the last edge,
 * NaN) are not counted anywhere. At most 2^32 - 1 samples (VKDS_ERROR_UNSUPPORTED past
 * that), so counts are exact and never wrap. Host data is staged whole, not streamed.
 * Zero bins (an empty `counts`) is a histogram with nothing to write: it succeeds, as
 * every algorithm does on empty sequences.
 *
 * How it runs (shaders/algorithm/histogram.glsl): each work group counts its share of the
 * samples into bins in shared memory with 32-bit atomics (16-byte loads, up to 8 copies
 * of the bins so that lanes counting into one bin hit different words), then adds each
 * bin it saw to the global counts with one atomic; with more bins than fit in shared
 * memory (8192, or fewer on a device with less than 32 KiB) every sample is one global
 * atomic instead. Even bins into a plain U32 sequence (buffer, mapped, or host through
 * its staging buffer) count straight into it: two dispatches; otherwise into scratch,
 * then a third copies them to `counts` through its views.
 *
 * The vkds_cmd_ forms need a 16-byte aligned scratch of vkds_histogram_scratch_bytes(
 * resource, bins) bytes (vkds_cmd.scratch). */

/* The scratch bytes a recorded histogram of `bins` bins needs on the device of `res`: a
 * status word, a counter a bin and room for its launch arguments (vkds_cmd) (0 for
 * NULL). */
VKDS_API uint64_t vkds_histogram_scratch_bytes(const vkds_resource *res, uint64_t bins);

/* Even bins over [*lower, *upper) (values of in's type; lower < upper, for floats both
 * finite and upper - lower finite in the type). With B = counts' length:
 *   integers: sample x goes to bin floor((x - lower) * B / (upper - lower)), computed
 *             exactly (no rounding, no overflow, 64-bit types too);
 *   floats:   the edges are e[0] = lower and e[k] = lower + T(k) * w for k > 0, with
 *             w = (upper - lower) / B and every operation rounded to the samples' type T
 *             (no fused multiply-add), as the host computes them; x in [lower, upper)
 *             goes to the last k < B with e[k] <= x. A sample exactly on an edge goes to
 *             the bin above it; where rounding makes edges equal, the bins between are
 *             empty. F32 samples and edges are compared as IEEE 754 orders them on every
 *             device, denormals included (through their bits: a device may flush f32
 *             denormals to zero in its compares, and an H200's counts of samples
 *             beside a boundary of 0 fit that: -1.4e-45 counted in the bin above it).
 * Upper itself is outside: a U32 histogram cannot reach 2^32 (count a transform view
 * "x >> 24u" over [0, 256) for the top 8 bits). */
VKDS_API vkds_result vkds_histogram_even(vkds_policy *p, const vkds_seq *in, const void *lower, const void *upper,
                                         const vkds_seq *counts);
VKDS_API vkds_result vkds_histogram_even_async(vkds_policy *p, const vkds_seq *in, const void *lower,
                                               const void *upper, const vkds_seq *counts, vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_histogram_even(const vkds_cmd *c, const vkds_seq *in, const void *lower,
                                             const void *upper, const vkds_seq *counts);

/* Bins between sorted boundaries: `boundaries` (of in's type, B + 1 of them for B bins,
 * non-decreasing) make bin k = [boundaries[k], boundaries[k+1]); a sample x goes to the
 * last k < B with boundaries[k] <= x, when boundaries[0] <= x < boundaries[B] (equal
 * boundaries make empty bins). Found by a binary search per sample.
 * The order is checked on the device, before anything is counted or written: unsorted
 * boundaries (one greater than the next, or a NaN among them) leave `counts` untouched
 * (a host sequence too), and the blocking form, the _async form's wait or poll,
 * return VKDS_ERROR_INVALID_ARGUMENT naming the first such pair. The recorded form cannot
 * return it: it writes a uint32_t to `status` (4-byte aligned; {0}: not wanted), 0 when
 * the counts were written, else 1 + k for the first pair k, k + 1 out of order. */
VKDS_API vkds_result vkds_histogram_range(vkds_policy *p, const vkds_seq *in, const vkds_seq *boundaries,
                                          const vkds_seq *counts);
VKDS_API vkds_result vkds_histogram_range_async(vkds_policy *p, const vkds_seq *in, const vkds_seq *boundaries,
                                                const vkds_seq *counts, vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_histogram_range(const vkds_cmd *c, const vkds_seq *in, const vkds_seq *boundaries,
                                              const vkds_seq *counts, vkds_view status);
/* ---- sorting --------------------------------------------------------------------------
 *
 * vkds_sort sorts a sequence in place; vkds_sort_by_key sorts the keys in place and
 * moves each value with its key. Both are stable: equal keys keep their order (in both
 * directions: descending is not ascending reversed). Keys: I32, U32, F32, I64, U64, F64;
 * values: any of those (4 or 8 bytes), not a zip: to move records of several parts with
 * their keys, sort the indices (a counting view copied into a U32 sequence, or
 * vkds_argsort of the keys) and gather each part through a permutation view by them
 * (vkds_copy), or vkds_merge_sort a zip of 4, 8 or 16 bytes by "a.p0 < b.p0". Floats sort by their bits in IEEE 754
 * totalOrder: -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN (a NaN with its sign bit
 * set comes first, one without last; -0 before +0; NaNs of one sign by their payload).
 * Descending reverses that order.
 *
 * A radix sort: least significant digit first, 8-bit digits (4 passes over 4-byte keys,
 * 8 over 8-byte ones), each pass a stable scatter by its digit. One read of the keys
 * (the upsweep) first builds every pass's digit histogram; a pass whose digit is the
 * same for every key is skipped (so all-equal keys move nothing, and 8-byte keys with a
 * small range take few passes). Two paths, chosen like the scans' (the same rule, query
 * and overrides: vkds_resource_scan_path, vkds_context_info.scan_path, VKDS_SCAN_PATH):
 *   VKDS_SCAN_PATH_SINGLE: Onesweep. Per pass one dispatch, reading the keys once and
 *     writing them once: tiles (4096 keys of 4 bytes, 5120 on GPUs from 2^22 keys, and
 *     2048 of 8) take their numbers from an atomic counter, count their digits and
 *     publish the counts, rank their keys, and find where their digits start through a
 *     chained scan of the digit counts with decoupled look-back. No group waits for
 *     ever: after a bounded number of spins a group counts a silent predecessor's tile
 *     itself (decoupled fallback). Sorts of 2^30 keys or more take the portable path.
 *   VKDS_SCAN_PATH_PORTABLE: per pass three dispatches: per-tile digit counts, their
 *     scan, the scatter (tiles of 4096 keys of 4 bytes, 6144 on GPUs from 2^25 keys).
 *     Reads the keys twice per pass; no group ever waits for another.
 * The sorts' refinement of the rule, per call: on NVIDIA GPUs (as the scans', where no
 * path is forced) sorts of fewer than 2^21 keys take SINGLE, which was faster there
 * (H100: 2026-11-26, 2^16 u32 keys 52.8 us against 70.0, pairs 61.0 against 76.2; H200:
 * 2026-11-29, 2^20 75.5 against 83.5); from 2^21 to 2^24 the two were within 4% of each
 * other and at 2^28 PORTABLE was faster (H200: 8,047 us against 9,142).
 * vkds_resource_sort_path() says which path a sort of a given size takes;
 * vkds_sort_scratch_bytes follows it.
 * Both need subgroup ballots and shuffles in compute shaders (in subgroups of 2 lanes
 * or more) and about 19 KiB of shared memory (23 KiB with Onesweep's 5120-key tiles; more on
 * devices with subgroups under 8 that cannot require their subgroup size); else
 * VKDS_ERROR_UNSUPPORTED.
 *
 * Memory: the data moves between the sequence and a copy in device memory of the same
 * size (keys and values), plus about 1 KiB (onesweep 2 KiB) per tile and 17 KiB, and
 * room for the recording form's launch arguments (vkds_cmd: 3.3 KiB, 6.1 KiB with 8-byte
 * keys): that is vkds_sort_scratch_bytes(). The blocking and _async forms allocate it per call and
 * free it when done; the vkds_cmd_ forms take it as the vkds_cmd's scratch (16-byte
 * aligned, at least vkds_sort_scratch_bytes(), which vkds_algorithm_scratch_bytes also
 * covers). Sequences are written many times over during the sort, so host data, data of
 * another device and data under views are staged whole (sorting cannot stream) and
 * written back once done. Views are sorted as they read: sorting a reverse view of a
 * buffer leaves the buffer in the opposite order; a permutation view sorts the elements
 * it selects (its map must not repeat an index; keys and values may share one). The
 * views' code is inlined at each of the kernels' accesses: on lavapipe a sort_by_key
 * whose keys lie under four or more nested permutation views spends minutes in LLVM
 * compiling its kernel (about 110 s at four levels on a 2-core machine, more deeper;
 * three levels take about two seconds, keys alone under six too): there, copy such data
 * into a buffer first (vkds_copy) and sort that. Keys
 * and values must be writable, not discard sequences (a sort reads them too), and must
 * not overlap; counts must match. At most 2^32 - 1 elements (else UNSUPPORTED).
 * Errors as for every algorithm. */

typedef enum vkds_sort_order {
  VKDS_SORT_DEFAULT = 0,    /* ascending */
  VKDS_SORT_ASCENDING = 1,
  VKDS_SORT_DESCENDING = 2,
} vkds_sort_order;

/* Sorts `keys` in place. */
VKDS_API vkds_result vkds_sort(vkds_policy *p, const vkds_seq *keys, vkds_sort_order order);
VKDS_API vkds_result vkds_sort_async(vkds_policy *p, const vkds_seq *keys, vkds_sort_order order,
                                     vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_sort(const vkds_cmd *c, const vkds_seq *keys, vkds_sort_order order);

/* Sorts `keys` in place and applies the same permutation to `values` (stable). */
VKDS_API vkds_result vkds_sort_by_key(vkds_policy *p, const vkds_seq *keys, const vkds_seq *values,
                                      vkds_sort_order order);
VKDS_API vkds_result vkds_sort_by_key_async(vkds_policy *p, const vkds_seq *keys, const vkds_seq *values,
                                            vkds_sort_order order, vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_sort_by_key(const vkds_cmd *c, const vkds_seq *keys, const vkds_seq *values,
                                          vkds_sort_order order);

/* The scratch bytes a sort of `count` keys of `key_type` with values of `value_type`
 * (VKDS_TYPE_BYTES: none) needs on the device of `res` (its path decides). 0 for NULL or
 * a type that is not 4 or 8 bytes; UINT64_MAX past 2^32 - 1 keys (more than a sort takes). */
VKDS_API uint64_t vkds_sort_scratch_bytes(const vkds_resource *res, uint64_t count, vkds_type key_type,
                                          vkds_type value_type);

/* Which path a radix sort (vkds_sort, vkds_sort_by_key, vkds_argsort) of `count` keys
 * takes on the device of `res`: VKDS_SCAN_PATH_SINGLE (Onesweep) or
 * VKDS_SCAN_PATH_PORTABLE, with the rule, the sorts' refinement by size and the
 * overrides resolved (it can differ from vkds_resource_scan_path by `count`); DEFAULT
 * for NULL. */
VKDS_API vkds_scan_path vkds_resource_sort_path(const vkds_resource *res, uint64_t count);

/* Sorted indices: indices[i] = the position in `keys` of the key a stable vkds_sort would
 * put at i (equal keys by position). The keys are only read (any readable sequence: a
 * view, read-only host memory); indices (I32, U32, I64 or U64: big enough for count - 1,
 * else VKDS_ERROR_INVALID_ARGUMENT) are as many as the keys and must not overlap them;
 * a discard view is refused (the sort fills the indices it moves).
 * The radix sort above, its values
 * being the indices, over a copy of the keys in the scratch: that takes
 * vkds_argsort_scratch_bytes(), the sort's and the keys' size again. */
VKDS_API vkds_result vkds_argsort(vkds_policy *p, const vkds_seq *keys, const vkds_seq *indices,
                                  vkds_sort_order order);
VKDS_API vkds_result vkds_argsort_async(vkds_policy *p, const vkds_seq *keys, const vkds_seq *indices,
                                        vkds_sort_order order, vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_argsort(const vkds_cmd *c, const vkds_seq *keys, const vkds_seq *indices,
                                      vkds_sort_order order);
/* The scratch bytes of vkds_argsort over `count` keys of `key_type` into `index_type`
 * indices on the device of `res`; 0 for NULL or other types. */
VKDS_API uint64_t vkds_argsort_scratch_bytes(const vkds_resource *res, uint64_t count, vkds_type key_type,
                                             vkds_type index_type);

/* ---- searching ------------------------------------------------------------------------
 *
 * For every needle, where it goes in `sorted`, a sequence ordered as vkds_sort orders it
 * in `order` (not checked: otherwise the indices mean nothing):
 *   lower_bound  out[i] = the first index j whose element does not come before needles[i]
 *                (sorted.count when there is none): inserting the needle there keeps the
 *                order, before its equals;
 *   upper_bound  the first index j whose element comes after needles[i]: after its equals.
 * The order is the sorts': floats in totalOrder (so a NaN needle has its place too, and
 * -0 comes before +0). Needles and sorted are of one element type; out (as many as the
 * needles, I32, U32, I64 or U64, big enough for sorted's count: else
 * VKDS_ERROR_INVALID_ARGUMENT) receives the indices. A binary search per needle: log2
 * of sorted's count reads of it, at random, so a sorted sequence that is not passed
 * directly is staged whole (nor are the needles streamed). Errors as for every algorithm. */

VKDS_API vkds_result vkds_lower_bound(vkds_policy *p, const vkds_seq *sorted, const vkds_seq *needles,
                                      const vkds_seq *out, vkds_sort_order order);
VKDS_API vkds_result vkds_lower_bound_async(vkds_policy *p, const vkds_seq *sorted, const vkds_seq *needles,
                                            const vkds_seq *out, vkds_sort_order order, vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_lower_bound(const vkds_cmd *c, const vkds_seq *sorted, const vkds_seq *needles,
                                          const vkds_seq *out, vkds_sort_order order);
VKDS_API vkds_result vkds_upper_bound(vkds_policy *p, const vkds_seq *sorted, const vkds_seq *needles,
                                      const vkds_seq *out, vkds_sort_order order);
VKDS_API vkds_result vkds_upper_bound_async(vkds_policy *p, const vkds_seq *sorted, const vkds_seq *needles,
                                            const vkds_seq *out, vkds_sort_order order, vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_upper_bound(const vkds_cmd *c, const vkds_seq *sorted, const vkds_seq *needles,
                                          const vkds_seq *out, vkds_sort_order order);

/* The same searches in a sequence sorted by a comparator (as vkds_merge_sort sorts it):
 * `less`, a GLSL bool expression of `a` and `b` true when a must come before b, a strict
 * weak order (vkds_merge_sort says what that means). lower_bound: out[i] = the first
 * index j for which less(sorted[j], needles[i]) is false; upper_bound: the first j for
 * which less(needles[i], sorted[j]) is true (sorted.count when there is none). Elements:
 * I32, U32, F32, I64, U64, F64, or records: needles and sorted both zips (vkds_seq_zip)
 * of numeric parts, 4, 8 or 16 bytes of parts in all (else VKDS_ERROR_UNSUPPORTED), seen
 * as a.p0, a.p1, ...; zips whose parts differ in type, part for part, and views of zips
 * are VKDS_ERROR_INVALID_ARGUMENT. A NULL `less` is VKDS_ERROR_INVALID_ARGUMENT, one
 * that does not compile VKDS_ERROR_COMPILE naming it; otherwise as the searches above. */
VKDS_API vkds_result vkds_lower_bound_by(vkds_policy *p, const vkds_seq *sorted, const vkds_seq *needles,
                                         const vkds_seq *out, const char *less);
VKDS_API vkds_result vkds_lower_bound_by_async(vkds_policy *p, const vkds_seq *sorted, const vkds_seq *needles,
                                               const vkds_seq *out, const char *less, vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_lower_bound_by(const vkds_cmd *c, const vkds_seq *sorted, const vkds_seq *needles,
                                             const vkds_seq *out, const char *less);
VKDS_API vkds_result vkds_upper_bound_by(vkds_policy *p, const vkds_seq *sorted, const vkds_seq *needles,
                                         const vkds_seq *out, const char *less);
VKDS_API vkds_result vkds_upper_bound_by_async(vkds_policy *p, const vkds_seq *sorted, const vkds_seq *needles,
                                               const vkds_seq *out, const char *less, vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_upper_bound_by(const vkds_cmd *c, const vkds_seq *sorted, const vkds_seq *needles,
                                             const vkds_seq *out, const char *less);

/* Whether `in` is ordered as vkds_sort would order it in `order` (so true exactly when a
 * sort would leave it as it is): no element comes before the one preceding it, floats in
 * totalOrder (ascending: a -NaN is in order only at the start, a +NaN only at the end).
 * Empty and single-element sequences are sorted. In the vkds_cmd_ form `result`
 * receives a uint32_t 0 or 1 (the scratch as for the reductions). Host data is staged
 * whole: element i is compared with i + 1. */
VKDS_API vkds_result vkds_is_sorted(vkds_policy *p, const vkds_seq *in, vkds_sort_order order, bool *result);
VKDS_API vkds_result vkds_is_sorted_async(vkds_policy *p, const vkds_seq *in, vkds_sort_order order, bool *result,
                                          vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_is_sorted(const vkds_cmd *c, const vkds_seq *in, vkds_sort_order order,
                                        vkds_view result);

/* Whether `in` is ordered by the comparator `less` (vkds_merge_sort's; so true exactly
 * when vkds_merge_sort by it would leave it as it is): less(in[i + 1], in[i]) is false
 * for every i. Elements: numbers, or the tuples of a zip of them (or of a view of one,
 * as it is only read; any size), seen as a.p0, ... Empty and single-element sequences
 * are sorted. The other forms, errors and staging as vkds_is_sorted's; a NULL `less` is
 * VKDS_ERROR_INVALID_ARGUMENT, one that does not compile VKDS_ERROR_COMPILE naming it. */
VKDS_API vkds_result vkds_is_sorted_by(vkds_policy *p, const vkds_seq *in, const char *less, bool *result);
VKDS_API vkds_result vkds_is_sorted_by_async(vkds_policy *p, const vkds_seq *in, const char *less, bool *result,
                                             vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_is_sorted_by(const vkds_cmd *c, const vkds_seq *in, const char *less,
                                           vkds_view result);

/* ---- merging ----------------------------------------------------------------------------
 *
 * out = a and b merged: both sorted as vkds_sort orders them in `order` (not checked: an
 * unsorted input makes out lose some of its elements and repeat others),
 * out sorted the same way, stable (where elements are equal in the order, a's come
 * before b's, and each keeps its own order). a, b and out are of one element type, and
 * out has a.count + b.count elements; it must not overlap them. Merge path: each work
 * group finds where its 2048 outputs come from by searches on the diagonal (k-ary, by
 * subgroup ballots, where the device has them: log_(S/2) of the inputs' length rounds;
 * binary elsewhere), loads those parts of a and b into shared memory and merges them
 * there; both inputs are read at random, so those not passed directly are staged whole.
 * Errors as for every algorithm. */
VKDS_API vkds_result vkds_merge(vkds_policy *p, const vkds_seq *a, const vkds_seq *b, const vkds_seq *out,
                                vkds_sort_order order);
VKDS_API vkds_result vkds_merge_async(vkds_policy *p, const vkds_seq *a, const vkds_seq *b, const vkds_seq *out,
                                      vkds_sort_order order, vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_merge(const vkds_cmd *c, const vkds_seq *a, const vkds_seq *b, const vkds_seq *out,
                                    vkds_sort_order order);
/* The scratch a merge of `count` outputs uses on the device of `res`: 8 bytes a 2048
 * outputs and 8 more (the last group's end) from 2^22 outputs on (where each work group's range is found by a dispatch
 * before the merge, a thread a group), else 0; 0 for NULL, UINT64_MAX past 2^48. The
 * blocking and _async forms take it themselves; the vkds_cmd_ forms use the vkds_cmd's
 * scratch when it holds this much on the command buffer's device, 8-byte aligned (it
 * must then not overlap the call's sequences), and otherwise let each work group search
 * for its range itself, which is slower on large merges (bench/RESULTS.md). The same
 * for vkds_merge_by, whose records of 3 or 4 parts on a device of 128 bytes of push
 * constants (lavapipe) need the scratch anyway, for their launch arguments: a few
 * hundred bytes more than this (vkds_cmd says how much; vkds_algorithm_scratch_bytes
 * covers both). */
VKDS_API uint64_t vkds_merge_scratch_bytes(const vkds_resource *res, uint64_t count);

/* The same merge of two sequences sorted by a comparator (as vkds_merge_sort sorts
 * them): `less`, a GLSL bool expression of `a` and `b` true when a must come before b.
 * Stable: b's element goes first only when less(b's, a's) is true, so of elements
 * neither of which comes before the other a's come first. Elements: I32, U32, F32, I64,
 * U64, F64, or records: a, b and out all zips (vkds_seq_zip) of numeric parts, 4, 8 or
 * 16 bytes of parts in all (the merge sort's records; else VKDS_ERROR_UNSUPPORTED), with
 * the same types, part for part, and out's parts not overlapping each other (else, and
 * for a view of a zip, VKDS_ERROR_INVALID_ARGUMENT); 2048 tuples must fit the device's
 * shared memory (else VKDS_ERROR_UNSUPPORTED, as for vkds_merge_sort). Records of 3 or 4
 * parts take more launch arguments than lavapipe's 128 bytes of push constants: there
 * vkds_cmd_merge_by keeps them in the vkds_cmd's scratch (see vkds_cmd). A NULL `less`
 * is VKDS_ERROR_INVALID_ARGUMENT, one that does not compile VKDS_ERROR_COMPILE naming
 * it; otherwise as vkds_merge. */
VKDS_API vkds_result vkds_merge_by(vkds_policy *p, const vkds_seq *a, const vkds_seq *b, const vkds_seq *out,
                                   const char *less);
VKDS_API vkds_result vkds_merge_by_async(vkds_policy *p, const vkds_seq *a, const vkds_seq *b, const vkds_seq *out,
                                         const char *less, vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_merge_by(const vkds_cmd *c, const vkds_seq *a, const vkds_seq *b, const vkds_seq *out,
                                       const char *less);

/* ---- the comparison sort ---------------------------------------------------------------
 *
 * Sorts `data` in place by `less`, a GLSL bool expression of `a` and `b` (elements of
 * data's type) that is true when a must come before b: a strict weak order (irreflexive,
 * transitive, its "neither before the other" transitive too), e.g. "(a & 255u) < (b &
 * 255u)", "abs(a) < abs(b)", "a > b". Stable: elements neither of which comes before the
 * other keep their order. Elements: I32, U32, F32, I64, U64, F64 (the radix sorts order
 * these faster by value; this is for any other order), or records: a zip (vkds_seq_zip)
 * of such sequences, 4, 8 or 16 bytes of parts in all, whose tuples the comparator sees
 * as a.p0, a.p1, ... and which is sorted in place, every part written (e.g. keys and
 * their payload by "a.p0 < b.p0"); its parts must not overlap, and a tuple's layout
 * (each part aligned to its size) must fit 2048 times in the device's shared memory
 * (else VKDS_ERROR_UNSUPPORTED: 2048 tuples of 16 bytes take 32 KiB, as much as lavapipe
 * has; parts of 4, 8 and 4 bytes lay out as 24, 48 KiB). A zip of more bytes, or of parts
 * that are not numbers, is VKDS_ERROR_UNSUPPORTED. A merge sort: work groups sort
 * tiles of 1024 in shared memory, then ceil(log2(tiles)) passes merge runs pairwise
 * (merge path: each work group merges 2048 outputs in shared memory, where they start
 * found by a binary search a group), the data moving between the sequence and a copy of
 * its size in the scratch, which also holds the groups' starts, 8 bytes a group
 * (vkds_merge_sort_scratch_bytes; the recording form takes it as its scratch). On an
 * NVIDIA H100, 2^28 u32 keys by "a < b" sort at 0.55x the speed of CUB's
 * DeviceMergeSort (bench/RESULTS.md).
 * Host data and data under views are staged whole; tuples only as a zip itself (a view of
 * a zip is VKDS_ERROR_INVALID_ARGUMENT). A comparator that does not compile is
 * VKDS_ERROR_COMPILE naming it; other errors as for every algorithm. A comparator that is
 * not a strict weak order (e.g. "a != b", or one true both ways) is not detected: the
 * merges then lose some elements and repeat others (the data is no longer a permutation
 * of what it was); a non-bool expression is converted by bool(). Floats with NaNs make
 * "a < b" such a comparator (a NaN is neither before nor after anything): use
 * "isnan(b) ? !isnan(a) : a < b" (NaNs last) where they may occur. At most 2^34 - 1024
 * elements (its tiles' dispatch, 256 threads a tile of 1024, stays within 2^32 threads;
 * else VKDS_ERROR_UNSUPPORTED, before anything is selected). */
VKDS_API vkds_result vkds_merge_sort(vkds_policy *p, const vkds_seq *data, const char *less);
VKDS_API vkds_result vkds_merge_sort_async(vkds_policy *p, const vkds_seq *data, const char *less,
                                           vkds_submission **sub);
VKDS_API vkds_result vkds_cmd_merge_sort(const vkds_cmd *c, const vkds_seq *data, const char *less);
/* Its scratch bytes over `count` elements of `type`; VKDS_TYPE_COMPOSITE: enough for any
 * zip it takes. 0 for NULL or another type. */
VKDS_API uint64_t vkds_merge_sort_scratch_bytes(const vkds_resource *res, uint64_t count, vkds_type type);

#ifdef __cplusplus
}
#endif
#endif
