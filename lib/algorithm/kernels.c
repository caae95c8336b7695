/* lib/algorithm/kernels.c: the algorithm layer's per-context state: compiled kernels
 * keyed by the signature of their generated code, and spare mapped buffers for the
 * results of reductions.
 *
 * A call first builds only its signature (lib/algorithm/codegen.c); the source is
 * generated and compiled on a miss alone, and the compiled kernel keeps its pipelines,
 * so the second identical call compiles nothing and creates no pipeline. The GLSL goes
 * through vkds_kernel_from_glsl, whose SPIR-V cache (in memory and in
 * pipeline_cache_dir) means a new process with a warm folder runs glslang zero times. */
#include "algorithm_internal.h"
#include "kernel/kernel_internal.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct vkds__alg_kernel {
  struct vkds__alg_kernel *next;
  uint64_t hash;
  unsigned char *sig;
  size_t sig_len;
  bool range64;
  vkds_kernel *kernel;
};

static vkds_kernel *find(vkds_context *ctx, uint64_t hash, const vkds__gen *g, bool range64) {
  for (struct vkds__alg_kernel *e = ctx->alg_kernels; e; e = e->next)
    if (e->hash == hash && e->range64 == range64 && e->sig_len == g->sig_len && memcmp(e->sig, g->sig, g->sig_len) == 0)
      return e->kernel;
  return NULL;
}

/* A snippet as an error quotes it: whole up to QUOTE_MAX bytes; a longer one by the line
 * the error is on (its last line for an error at its end), clipped around its end. The
 * whole snippet first left no room for the line number and the error in the message's
 * 1,023 bytes (a views probe: a 2 KB operator's error was cut off). */
enum { QUOTE_MAX = 200 };
static const char *quote(const char *snippet, unsigned number, char *buf, size_t cap) {
  size_t len = strlen(snippet);
  if (len <= QUOTE_MAX) return snippet;
  const char *line = snippet, *end;
  for (unsigned n = 1; (end = strchr(line, '\n')) && (number == 0 || n < number); ++n) line = end + 1;
  end = strchr(line, '\n');
  size_t line_len = end ? (size_t)(end - line) : strlen(line);
  /* ("..." only where the snippet goes on: a last line quoted as "...x..." read as if
   * more followed it; a probe) */
  if (line_len <= QUOTE_MAX) snprintf(buf, cap, "%s%.*s%s", line > snippet ? "..." : "", (int)line_len, line, end ? "..." : "");
  else snprintf(buf, cap, "...%.*s", QUOTE_MAX, line + line_len - QUOTE_MAX); /* (errors land at the end) */
  return buf;
}

/* glslang's "ERROR: <string>:<line>: text" lines, with the strings of the user's
 * snippets (1000 + k, see codegen.c) named after the snippet and its line. */
static vkds_result snippet_error(vkds_context *ctx, const vkds__gen *g, const vkds__alg *a, const char *log) {
  char msg[2048];
  size_t used = (size_t)snprintf(msg, sizeof msg, "%s: an operator does not compile:", a->name);
  bool in_snippet = false, parts_hint = false;
  for (const char *line = log; *line && used < sizeof msg - 1;) {
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line);
    unsigned source, number;
    int consumed = 0;
    const char *error = strstr(line, "ERROR: ");
    bool in_line = error && error < line + len;
    bool noise = in_line && strstr(error, "compilation terminated") && strstr(error, "compilation terminated") < line + len;
    if (in_line && !noise && sscanf(error, "ERROR: %u:%u: %n", &source, &number, &consumed) == 2 && consumed > 0) {
      const char *text = error + consumed;
      int text_len = (int)(line + len - text);
      while (text_len > 0 && text[text_len - 1] == ' ') --text_len; /* (glslang ends some with a space) */
      if (source >= 1000 && source - 1000 < g->snippet_count) {
        uint32_t k = source - 1000, lines = 1;
        for (const char *c = g->snippets[k]; *c; ++c) lines += *c == '\n';
        char buf[QUOTE_MAX + 8];
        /* glslang may see a snippet's error only at the token after it (an operand
         * missing at its end): that is past its last line, so say "at its end" */
        if (number > lines) /* (the token glslang names is then the generated code's: say so) */
          used += (size_t)snprintf(msg + used, sizeof msg - used,
                                   "\n  %s \"%s\", at its end: %.*s (glslang names the code vkds puts after it: the "
                                   "expression may be incomplete)", g->snippet_roles[k],
                                   quote(g->snippets[k], 0, buf, sizeof buf), text_len, text);
        else
          used += (size_t)snprintf(msg + used, sizeof msg - used, "\n  %s \"%s\", line %u: %.*s", g->snippet_roles[k],
                                   quote(g->snippets[k], number, buf, sizeof buf), number, text_len, text);
        /* a field of a number reads as a vector swizzle to glslang ("'p0' : unknown
         * swizzle selection"): say what the user meant to reach, once */
        const char *swizzle = strstr(text, "swizzle");
        if (swizzle && swizzle < line + len && !parts_hint) {
          used += (size_t)snprintf(msg + used, sizeof msg - used, " (a number has no fields: a zip's tuples "
                                   "have them, .p0, .p1, ...)");
          parts_hint = true;
        }
        in_snippet = true;
      } else {
        used += (size_t)snprintf(msg + used, sizeof msg - used, "\n  where vkds uses its value: %.*s", text_len, text);
      }
    }
    if (used > sizeof msg - 1) used = sizeof msg - 1;
    line = end ? end + 1 : line + len;
  }
  if (!in_snippet && g->snippet_count) {
    /* the error is where the snippet's value is used (its type): show them all */
    for (uint32_t k = 0; k < g->snippet_count && used < sizeof msg - 1; ++k) {
      char buf[QUOTE_MAX + 8];
      used += (size_t)snprintf(msg + used, sizeof msg - used, "\n  %s: \"%s\"", g->snippet_roles[k],
                               quote(g->snippets[k], 0, buf, sizeof buf));
      if (used > sizeof msg - 1) used = sizeof msg - 1;
    }
  }
  return vkds__fail(ctx, VKDS_ERROR_COMPILE, VK_SUCCESS, "%s", msg);
}

/* The kernel's argument struct (vkds__args): the parameters, and each bound leaf's view
 * at the binding of its leaf index. `desc` holds 2 + VKDS__GEN_MAX_LEAVES entries. */
static void describe_args(const vkds__gen *g, vkds_arg *desc) {
  uint32_t n = 0;
  desc[n++] = (vkds_arg){.kind = VKDS_ARG_UINT, .bits = 64, .count = g->param_count, .name = "p",
                         .offset = offsetof(vkds__args, p)};
  for (uint32_t k = 0; k < g->leaf_count; ++k)
    if (g->leaves[k].bound)
      desc[n++] = (vkds_arg){.kind = VKDS_ARG_BINDING, .binding = k, .name = "leaf",
                             .offset = offsetof(vkds__args, bound) + k * sizeof(vkds_view)};
  desc[n] = (vkds_arg){0};
}

vkds_result vkds__alg_kernel(vkds_context *ctx, vkds__gen *g, const vkds__alg *a, bool range64, vkds_kernel **out) {
  uint64_t hash = vkds__hash(g->sig, g->sig_len);
  pthread_mutex_lock(&ctx->alg_lock);
  vkds_kernel *k = find(ctx, hash, g, range64);
  pthread_mutex_unlock(&ctx->alg_lock);
  if (k) {
    *out = k;
    return VKDS_SUCCESS;
  }
  /* a miss: generate the source (the same walk, writing this time) and compile it */
  vkds__gen full;
  vkds_result r = vkds__gen_build(&full, a, g->res, true, g->aligned);
  char *source = r == VKDS_SUCCESS ? vkds__gen_source(&full, a) : NULL;
  if (r == VKDS_SUCCESS && !source) r = vkds__fail(ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "algorithm source");
  if (r == VKDS_SUCCESS) {
    if (vkds__getenv_on("VKDS_DUMP_ALGORITHMS")) { /* (asked for: on stderr without a logger, a README probe) */
      if (ctx->log) vkds__log(ctx, VKDS_LOG_WARN, "%s kernel:\n%s", a->name, source);
      else fprintf(stderr, "[vkds] %s kernel:\n%s\n", a->name, source);
    }
    vkds_arg desc[2 + VKDS__GEN_MAX_LEAVES];
    describe_args(&full, desc);
    /* glslang's log names the generated kernel's lines: the logger gets the snippet's
     * message instead (snippet_error), and any other failure as it was */
    vkds__hold_failure_logs(true);
    r = vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = source, .args = desc, .name = a->name,
                                                     .range_type = range64 ? VKDS_RANGE_U64 : VKDS_RANGE_U32}, &k);
    vkds__hold_failure_logs(false);
    if (r == VKDS_ERROR_COMPILE) r = snippet_error(ctx, &full, a, vkds_last_error_message());
    else vkds__log_unlogged(ctx, r);
  }
  vkds__free(ctx, source); /* vkds__gen_source's, from g->res's context: ctx */
  vkds__gen_free(&full);
  if (r != VKDS_SUCCESS) return r;
  k->subgroup_size = a->subgroup_size; /* (no pipeline made yet: nobody else has k) */
  struct vkds__alg_kernel *e = vkds__alloc(ctx, sizeof *e);
  unsigned char *sig = vkds__alloc(ctx, g->sig_len);
  if (!e || !sig) {
    vkds__free(ctx, e), vkds__free(ctx, sig);
    vkds_kernel_destroy(k);
    return vkds__fail(ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "algorithm kernel cache");
  }
  memcpy(sig, g->sig, g->sig_len);
  *e = (struct vkds__alg_kernel){.hash = hash, .sig = sig, .sig_len = g->sig_len, .range64 = range64, .kernel = k};
  pthread_mutex_lock(&ctx->alg_lock);
  vkds_kernel *raced = find(ctx, hash, g, range64); /* another thread compiled it meanwhile */
  if (!raced) {
    e->next = ctx->alg_kernels;
    ctx->alg_kernels = e;
  }
  pthread_mutex_unlock(&ctx->alg_lock);
  if (raced) {
    vkds_kernel_destroy(k);
    vkds__free(ctx, sig), vkds__free(ctx, e);
    k = raced;
  }
  *out = k;
  return VKDS_SUCCESS;
}

void vkds__algorithm_state_free(vkds_context *ctx) {
  for (struct vkds__alg_kernel *e = ctx->alg_kernels, *next; e; e = next) {
    next = e->next;
    vkds_kernel_destroy(e->kernel);
    vkds__free(ctx, e->sig);
    vkds__free(ctx, e);
  }
  ctx->alg_kernels = NULL;
  vkds__spares_free(ctx);
  vkds__free(ctx, ctx->alg_spare_call);
  ctx->alg_spare_call = NULL;
}

/* A CPU device's groups: two per thread it runs groups on (lavapipe: LP_NUM_THREADS, by
 * default one per online core), so that the threads stay balanced while each group's
 * threads fold ranges long enough to amortize its tree. On lavapipe with 2 cores, 4
 * groups reduced at 0.98-1.23x the plain copy shader's GB/s from 2^20 to 2^22 elements,
 * 8 at 0.80-1.24x, 16 at 0.73-1.17x (bench/vkds-bench --algorithms, medians of 3). */
static uint32_t cpu_groups(void) {
  static _Atomic long cores; /* read once: sysconf reads a file */
  long threads = atomic_load_explicit(&cores, memory_order_relaxed);
  if (!threads) atomic_store_explicit(&cores, threads = sysconf(_SC_NPROCESSORS_ONLN), memory_order_relaxed);
  /* read as Mesa reads it (strtol, base 0; no number at all: its default, the cores):
   * atol took "abc" and "0x8" as 0 threads, 2 groups, where lavapipe ran on every core
   * (a new-user probe) */
  const char *lp = vkds__getenv("LP_NUM_THREADS");
  char *end;
  long n = lp ? strtol(lp, &end, 0) : 0;
  if (lp && end != lp) threads = n;
  return threads > 1 ? (uint32_t)(2 * (threads < 512 ? threads : 512)) : 2;
}

/* The most first-pass groups for a device: enough resident threads to keep its memory
 * busy, and no more, so that the whole grid runs in one wave (a second, partial wave
 * would leave most of the device idle at the end) and the second pass has few partials.
 * - units known (NVIDIA, AMD): half of what the units can keep resident, so the grid fits
 *   one wave even when the kernel's registers halve the occupancy; each thread has 4
 *   loads of 16 bytes in flight, which covers the memory latency at that occupancy;
 * - a CPU device (lavapipe): each group runs on one host thread, and per-group costs
 *   (its barriers and its shared-memory tree) dominate: two groups per host thread
 *   (cpu_groups);
 * - otherwise 1024.
 * VKDS_REDUCE_GROUPS overrides the cap (benchmarking the rule). */
uint32_t vkds__half_resident_groups(const vkds__device *dev) {
  const vkds__device_facts *f = &dev->facts;
  if (f->compute_units && f->threads_per_unit >= 512) return f->compute_units * (f->threads_per_unit / 512);
  return 1024;
}

static uint32_t reduce_group_cap(const vkds__device *dev) {
  uint32_t env = vkds__getenv_positive("VKDS_REDUCE_GROUPS");
  if (env) return env;
  if (dev->facts.props.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU) return cpu_groups();
  return vkds__half_resident_groups(dev);
}

uint32_t vkds__reduce_groups(const vkds__device *dev, uint64_t count) {
  if (count <= 8192) return 1;
  /* (rounded up without count + d - 1, which wraps near 2^64: 0 groups, then a division
   * by zero; found by a hostile-input probe) */
  uint64_t g = count / 4096 + (count % 4096 != 0), cap = reduce_group_cap(dev);
  if (g > cap) g = cap;
  if (g > VKDS__REDUCE_MAX_GROUPS) g = VKDS__REDUCE_MAX_GROUPS;
  /* lavapipe cuts a loop after 65,535 iterations: keep each thread under 32,768 steps */
  uint64_t per_step = g * 1024, step = 1024ull * 32768;
  if (count / per_step + (count % per_step != 0) > 32768) g = count / step + (count % step != 0);
  return g > UINT32_MAX ? UINT32_MAX : (uint32_t)g;
}

uint64_t vkds__args_room(uint32_t dispatches) { return 16 + dispatches * ((8ull * VKDS__GEN_MAX_PARAMS + 15) & ~15ull); }

/* A reduction's own scratch: the result and 16 bytes a group's partial. */
uint64_t vkds__reduce_scratch_own(const vkds_resource *res, uint64_t count) {
  return (uint64_t)VKDS__ALG_RESULT_BYTES + (uint64_t)vkds__reduce_groups(res->dev, count) * 16;
}

uint64_t vkds_reduce_scratch_bytes(const vkds_resource *res, uint64_t count) {
  if (!res) return 0;
  if (count > VKDS__ALG_MAX_SCRATCH_COUNT) return UINT64_MAX;
  return vkds__reduce_scratch_own(res, count) + vkds__args_room(VKDS__REDUCE_DISPATCHES);
}

uint64_t vkds_algorithm_scratch_bytes(const vkds_resource *res, uint64_t count) {
  if (!res) return 0;
  if (count > VKDS__ALG_MAX_SCRATCH_COUNT) return UINT64_MAX; /* (the sums below wrap) */
  /* each with room for its dispatches' launch arguments where they outgrow the push
   * constants (frame.c args_in_scratch, after the family's own scratch); a merge's
   * two dispatches take less than a scan's three */
  uint64_t reduce = vkds_reduce_scratch_bytes(res, count);
  uint64_t scan = vkds__scan_scratch_bound(count) + vkds__args_room(VKDS__SCAN_DISPATCHES);
  uint64_t sort = vkds__sort_scratch_bound(count); /* (rooms included) */
  uint64_t msort = vkds_merge_sort_scratch_bytes(res, count, VKDS_TYPE_COMPOSITE); /* its widest tuples */
  uint64_t most = reduce > scan ? reduce : scan;
  most = most > msort ? most : msort;
  return most > sort ? most : sort;
}
