/* lib/kernel/glsl.c: GLSL compute shaders to SPIR-V at run time, through glslang's C API.
 *
 * glslang 12's C API cannot take include callbacks: glsl_include_callbacks_t is declared,
 * but glslang_input_t has no field for it, and glslang_shader_preprocess always uses a
 * DirStackFileIncluder, which reads `#include`d files from the process's working
 * directory once GL_GOOGLE_include_directive is enabled. So vkds resolves includes
 * itself, before glslang sees the source: `#include "vkds.glsl"` (or <vkds.glsl>) is
 * replaced by the embedded header, any other #include is an error naming the file, and
 * no #include is left for glslang's file reader. `#line` directives around the header
 * keep glslang's line numbers equal to the user's. */
#include "kernel_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glslang/Include/glslang_c_interface.h>
#include <glslang/Public/resource_limits_c.h>

/* The embedded header is a string longer than the 4095 characters ISO C promises to
 * support; GCC and Clang take any length, so only the pedantic warning is silenced. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverlength-strings"
#include "vkds_glsl_header.h"
#pragma GCC diagnostic pop

/* glslang copies SPIR-V out as unsigned int. */
_Static_assert(sizeof(unsigned int) == sizeof(uint32_t), "SPIR-V words are 32-bit");

enum { MAX_HEADER_NAME = 256 };

/* glslang recurses once per level of the syntax tree, and a chain of binary operators
 * (a + a + a ...) or of commas is a tree as deep as it is long: about 830 bytes of stack
 * per operator in glslang 12's SPIR-V generator, 1,700 per nested call, which is 400 to
 * 600 bytes of stack per byte of source (a 10,000-term sum overflowed an 8 MiB stack).
 * So glslang runs on a thread of vkds's own with COMPILE_STACK bytes of stack (reserved;
 * pages are touched only as deep as a compile goes), and a source longer than
 * MAX_PREPROCESSED bytes after preprocessing is refused before glslang parses it:
 * 256 KiB at 600 bytes per byte is 150 MiB. (fuzz/fuzz_glsl.c found this; RELIABILITY.md) */
enum {
  COMPILE_STACK = 256u << 20,
  MAX_PREPROCESSED = 256u << 10,
};

static const int glslang_messages = GLSLANG_MSG_SPV_RULES_BIT | GLSLANG_MSG_VULKAN_RULES_BIT;

/* ---- glslang's process-wide state ----
 *
 * Initialized once and never finalized: glslang_finalize_process from an atexit handler
 * could free the shared built-in symbol tables under a compile still running on another
 * thread while the process exits, and would race glslang's own C++ static destructors.
 * What glslang keeps stays reachable from its globals (no leak report) and the OS takes
 * it back at exit.
 *
 * Compiles are serialized. glslang's maintainers intend concurrent compiles to be safe
 * after glslang_initialize_process (the built-in symbol tables are guarded by glslang's
 * global lock; each TShader and TProgram has its own pool, made current through a
 * thread-specific pointer), but glslang 12 documents no such guarantee, thread-safety
 * fixes kept arriving in its process set-up as late as 2021, and glslang is not built
 * with ThreadSanitizer, so our TSan runs could not catch a race inside it. Compiling is
 * rare (kernel creation, and lib/kernel/kernel.c caches the result per context), so one lock
 * costs little. Each compile runs on a thread of its own (COMPILE_STACK, below), which the
 * caller waits for. */
static pthread_mutex_t glslang_lock = PTHREAD_MUTEX_INITIALIZER;
static bool glslang_ready; /* under glslang_lock: set once initialization succeeded */

/* Under glslang_lock and vkds__cxx_guard (it allocates, and may throw): a failed
 * initialization is tried again by the next compile. */
static void glslang_init(void *ready) { *(bool *)ready = glslang_initialize_process() != 0; }

/* ---- growing text ---- */

typedef struct text {
  const vkds_context *ctx; /* whose allocator s comes from */
  char *s;
  size_t len, cap;
  bool oom; /* an append failed: checked once, at the end */
} text;

static void text_add(text *t, const char *s, size_t n) {
  if (t->oom) return;
  size_t need = t->len + n + 1;
  if (need > t->cap) {
    size_t cap = t->cap ? t->cap : 256;
    while (cap < need && cap <= SIZE_MAX / 2) cap *= 2;
    char *p = cap >= need ? vkds__realloc(t->ctx, t->s, cap) : NULL;
    if (!p) {
      t->oom = true;
      return;
    }
    t->s = p, t->cap = cap;
  }
  memcpy(t->s + t->len, s, n);
  t->len += n;
  t->s[t->len] = '\0';
}

static void text_puts(text *t, const char *s) { text_add(t, s, strlen(s)); }

/* Appends "#line N" plus `suffix` (and a newline). */
static void text_line(text *t, uint32_t line, const char *suffix) {
  char buf[48];
  int n = snprintf(buf, sizeof buf, "#line %u%s\n", line, suffix);
  text_add(t, buf, (size_t)n);
}

/* ---- errors ---- */

/* Appends the non-empty lines of `log` that start with "ERROR" (errors) or the others. */
static void add_lines(text *t, const char *log, bool errors) {
  for (const char *p = log; p && *p;) {
    size_t n = strcspn(p, "\n");
    bool is_error = strncmp(p, "ERROR", 5) == 0;
    if (n && is_error == errors) {
      text_add(t, p, n);
      text_puts(t, "\n");
    }
    p += n + (p[n] == '\n');
  }
}

/* Appends the lines of `log` that start with "WARNING". */
static void add_warnings(text *t, const char *log) {
  for (const char *p = log; p && *p;) {
    size_t n = strcspn(p, "\n");
    if (strncmp(p, "WARNING", 7) == 0) {
      if (t->len) text_puts(t, "\n");
      text_add(t, p, n);
    }
    p += n + (p[n] == '\n');
  }
}

/* VKDS_ERROR_COMPILE carrying glslang's logs, each line as glslang wrote it. The error
 * lines come first: the message is cut at about 1 KiB, and glslang may put warnings
 * before the errors. */
static vkds_result compile_error(const vkds_context *ctx, const char *name, const char *log,
                                 const char *debug_log) {
  text t = {.ctx = ctx};
  add_lines(&t, log, true);
  add_lines(&t, log, false);
  add_lines(&t, debug_log, true);
  add_lines(&t, debug_log, false);
  if (t.len) t.s[--t.len] = '\0'; /* the last newline */
  /* the kernel's name clipped (the message holds 1 KiB: a long one pushed glslang's
   * cause out of it; a probe), and "a GLSL kernel" for none: every message says whose */
  const char *who = name ? name : "a GLSL kernel";
  size_t len = strlen(who);
  vkds_result r = vkds__fail(ctx, VKDS_ERROR_COMPILE, VK_SUCCESS, "%.*s%s: %s", (int)(len > 96 ? 96 : len), who,
                             len > 96 ? "..." : "", t.s && !t.oom ? t.s : "(glslang gave no log)");
  vkds__free(ctx, t.s);
  return r;
}

/* ---- reading the source as glslang's preprocessor does ----
 * Backslash-newlines vanish everywhere (GLSL 4.20+ and ES 3.00+, which every compute
 * shader is, allow them even in comments), comments are blanks whose newlines end no
 * line, and `line` counts physical lines. */

typedef struct cursor {
  const char *s;
  size_t i;
  uint32_t line;
} cursor;

/* The length of the newline at p: 2 for CR LF, 1 for LF or CR, 0 for none. */
static size_t newline_at(const char *p) {
  if (p[0] == '\r') return p[1] == '\n' ? 2 : 1;
  return p[0] == '\n';
}

static void splice(cursor *c) {
  size_t n;
  while (c->s[c->i] == '\\' && (n = newline_at(c->s + c->i + 1)) != 0) c->i += 1 + n, ++c->line;
}

static char peek(cursor *c) {
  splice(c);
  return c->s[c->i];
}

static bool at_newline(cursor *c) {
  splice(c);
  return newline_at(c->s + c->i) != 0;
}

static void next(cursor *c) {
  splice(c);
  size_t n = newline_at(c->s + c->i);
  if (n) c->i += n, ++c->line;
  else if (c->s[c->i]) ++c->i;
}

static char peek_second(const cursor *c) {
  cursor d = *c;
  next(&d);
  return peek(&d);
}

/* Steps over a comment at the cursor; false when there is none. */
static bool skip_comment(cursor *c) {
  if (peek(c) != '/') return false;
  char second = peek_second(c);
  if (second == '/') {
    while (peek(c) && !at_newline(c)) next(c);
    return true;
  }
  if (second != '*') return false;
  next(c), next(c);
  while (peek(c) && !(peek(c) == '*' && peek_second(c) == '/')) next(c);
  if (peek(c)) next(c), next(c);
  return true;
}

/* Steps over blanks and comments, not over the end of the line. */
static void skip_blanks(cursor *c) {
  for (;;) {
    char ch = peek(c);
    if (ch == ' ' || ch == '\t' || ch == '\v' || ch == '\f') next(c);
    else if (!skip_comment(c)) return;
  }
}

/* Steps over a string literal (glslang reads them for GL_EXT_debug_printf): without
 * this, a comment opener inside one would hide the lines after it. */
static void skip_string(cursor *c) {
  next(c);
  for (char ch; (ch = peek(c)) != '\0' && ch != '"' && !at_newline(c);) {
    next(c);
    if (ch == '\\' && peek(c) && !at_newline(c)) next(c);
  }
  if (peek(c) == '"') next(c);
}

/* Moves past the end of the logical line, its newline included. */
static void skip_line(cursor *c) {
  for (char ch; (ch = peek(c)) != '\0';) {
    if (at_newline(c)) {
      next(c);
      return;
    }
    if (skip_comment(c)) continue;
    if (ch == '"') skip_string(c);
    else next(c);
  }
}

/* Reads an identifier; true when it is `word`. */
static bool read_word(cursor *c, const char *word) {
  size_t n = 0, len = strlen(word);
  bool same = true;
  for (char ch; (ch = peek(c)) == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                (ch >= '0' && ch <= '9');
       ++n) {
    same = same && n < len && word[n] == ch;
    next(c);
  }
  return same && n == len;
}

/* ---- the source as glslang gets it ---- */

typedef struct rewrite {
  const char *src;
  text out;
  size_t copied;     /* src[0, copied) is in out */
  bool has_version;
  char error[MAX_HEADER_NAME + 128]; /* why an #include was refused, in glslang's style */
} rewrite;

/* Copies the source up to `end`. */
static void copy_to(rewrite *w, size_t end) {
  text_add(&w->out, w->src + w->copied, end - w->copied);
  w->copied = end;
}

/* After the #version line (the cursor is past it): the extension that lets #line name a
 * file (the header), then a #line so that the next line keeps its number. (For #version
 * 330 and later, and ES, `#line N` numbers the line after it N; compute shaders need
 * 430 or ES 310.) */
static void after_version(rewrite *w, cursor *c) {
  copy_to(w, c->i);
  if (c->i == 0 || newline_at(w->src + c->i - 1) == 0) text_puts(&w->out, "\n"); /* no newline at the end */
  text_puts(&w->out, "#extension GL_GOOGLE_cpp_style_line_directive : enable\n");
  text_line(&w->out, c->line, "");
  w->has_version = true;
}

/* Reads the header name of an #include (the cursor is after `include`) into `name`;
 * false, with w->error set, when it is malformed. */
static bool read_header_name(rewrite *w, cursor *c, uint32_t line, char name[MAX_HEADER_NAME]) {
  while (peek(c) == ' ' || peek(c) == '\t') next(c);
  char open = peek(c), close = open == '<' ? '>' : '"';
  size_t n = 0;
  if (open == '"' || open == '<') {
    next(c);
    for (char ch; (ch = peek(c)) != '\0' && ch != close && !at_newline(c); next(c))
      if (n < MAX_HEADER_NAME - 1) name[n++] = ch;
  }
  name[n] = '\0';
  if ((open != '"' && open != '<') || peek(c) != close) {
    snprintf(w->error, sizeof w->error, "ERROR: 0:%u: '#include' : must be followed by a header name", line);
    return false;
  }
  next(c);
  skip_blanks(c);
  if (peek(c) && !at_newline(c)) {
    snprintf(w->error, sizeof w->error, "ERROR: 0:%u: '#include' : extra content after header name: %s", line, name);
    return false;
  }
  return true;
}

/* An #include whose '#' is at `hash` (the cursor is after `include`): "vkds.glsl" becomes
 * the embedded header between two #line directives; anything else is refused. */
static bool include(rewrite *w, cursor *c, size_t hash, uint32_t line) {
  char name[MAX_HEADER_NAME];
  if (!read_header_name(w, c, line, name)) return false;
  if (strcmp(name, "vkds.glsl") != 0) {
    snprintf(w->error, sizeof w->error,
             "ERROR: 0:%u: '#include' : cannot include \"%s\": only \"vkds.glsl\" (vkds's device-side header) can be included",
             line, name);
    return false;
  }
  next(c); /* the newline */
  copy_to(w, hash);
  text_puts(&w->out, "#line 1 \"vkds.glsl\"\n");
  text_puts(&w->out, vkds_glsl_header);
  if (vkds_glsl_header[0] && vkds_glsl_header[strlen(vkds_glsl_header) - 1] != '\n') text_puts(&w->out, "\n");
  text_line(&w->out, c->line, " 0"); /* back to the user's source (string 0) */
  w->copied = c->i;
  return true;
}

/* A directive at the cursor ('#'). */
static bool directive(rewrite *w, cursor *c) {
  size_t hash = c->i;
  uint32_t line = c->line;
  next(c);
  skip_blanks(c);
  cursor word = *c;
  if (read_word(&word, "include")) return include(w, &word, hash, line);
  if (!w->has_version && read_word(c, "version")) {
    skip_line(c);
    after_version(w, c);
    return true;
  }
  skip_line(c);
  return true;
}

static bool identifier_char(char ch) {
  return ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
}

/* An identifier (or number) at the cursor. Where a line splice ends it (the character
 * after the splices is not part of it), a space goes before the backslash: glslang 12's
 * preprocessor gives a macro expanded there column 0 of the next line, and its output
 * writer then asks for a string of SIZE_MAX spaces, std::length_error. vkds__cxx_guard
 * catches that, but Debian builds glslang without unwind cleanups, so what glslang held
 * leaked (about 36 KB a compile), and the source failed to compile. The space ends the
 * token where it ended anyway, and moves no line. (Found by fuzz/fuzz_glsl.c.) */
static void identifier(rewrite *w, cursor *c) {
  size_t end = c->i;
  while (identifier_char(peek(c))) {
    next(c);
    end = c->i; /* just past the character: any splice after it is still ahead */
  }
  if (c->i != end) { /* peek stepped over splices after the identifier */
    copy_to(w, end);
    text_puts(&w->out, " ");
  }
}

/* Walks the source, rewriting #version and #include lines. A '#' counts as a directive
 * when only blanks and comments precede it on its line, or when a comment before it
 * spanned a newline: glslang would not take the latter as a directive, but seeing one
 * too many can only refuse a source, never let an #include through. */
static bool scan(rewrite *w) {
  cursor c = {.s = w->src, .line = 1};
  bool line_start = true;
  for (char ch; (ch = peek(&c)) != '\0';) {
    uint32_t line = c.line;
    if (at_newline(&c)) next(&c), line_start = true;
    else if (skip_comment(&c)) line_start = line_start || c.line != line;
    else if (ch == ' ' || ch == '\t' || ch == '\v' || ch == '\f') next(&c);
    else if (ch == '#' && line_start) {
      if (!directive(w, &c)) return false;
    } else {
      line_start = false;
      if (ch == '"') skip_string(&c);
      else if (identifier_char(ch)) identifier(w, &c);
      else next(&c);
    }
  }
  copy_to(w, c.i);
  return true;
}

/* The source as glslang gets it: includes resolved, and a #version (460 when the source
 * has none) followed by the #line extension. */
static vkds_result prepare_source(const vkds_context *ctx, const char *source, const char *name, text *out) {
  rewrite w = {.src = source, .out = {.ctx = ctx}};
  if (!scan(&w)) {
    vkds__free(ctx, w.out.s);
    return compile_error(ctx, name, w.error, NULL);
  }
  if (!w.has_version) {
    text_puts(out, "#version 460\n#extension GL_GOOGLE_cpp_style_line_directive : enable\n#line 1\n");
    text_add(out, w.out.s ? w.out.s : "", w.out.len);
    out->oom = out->oom || w.out.oom;
    vkds__free(ctx, w.out.s);
  } else {
    *out = w.out;
  }
  if (out->oom) return vkds__fail(ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "GLSL: source text");
  return VKDS_SUCCESS;
}

/* ---- defines ---- */

static bool is_identifier(const char *s, size_t n) {
  if (n == 0 || (s[0] >= '0' && s[0] <= '9')) return false;
  for (size_t i = 0; i < n; ++i)
    if (!(s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9')))
      return false;
  return true;
}

/* "#define NAME VALUE" lines for glslang's preamble, which it reads before the source
 * (after the #version line) without shifting the source's line numbers. */
static vkds_result make_preamble(const vkds_context *ctx, const char *const *defines, uint32_t count, text *out) {
  for (uint32_t i = 0; i < count; ++i) {
    const char *d = defines[i];
    if (!d)
      return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS, "GLSL: define %u is NULL", i);
    const char *eq = strchr(d, '=');
    size_t n = eq ? (size_t)(eq - d) : strlen(d);
    size_t len = strlen(d);
    /* (a value ending in a backslash would splice the next define's line into it) */
    if (!is_identifier(d, n) || strpbrk(d, "\r\n") || (len && d[len - 1] == '\\'))
      return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                        "GLSL: define \"%s\" is not NAME or NAME=VALUE on one line (nor ending in a backslash)", d);
    text_puts(out, "#define ");
    text_add(out, d, n);
    if (eq) {
      text_puts(out, " ");
      text_puts(out, eq + 1);
    }
    text_puts(out, "\n");
  }
  if (out->oom) return vkds__fail(ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "GLSL: defines");
  return VKDS_SUCCESS;
}

/* ---- compiling ---- */

/* Vulkan 1.2 takes SPIR-V up to 1.5, 1.3 up to 1.6; later versions get what 1.3 gets
 * (glslang 12 knows no later client). */
static bool target_for(uint32_t api_version, glslang_input_t *input) {
  if (VK_API_VERSION_MAJOR(api_version) != 1 || VK_API_VERSION_MINOR(api_version) < 2) return false;
  bool v13 = VK_API_VERSION_MINOR(api_version) >= 3;
  input->client_version = v13 ? GLSLANG_TARGET_VULKAN_1_3 : GLSLANG_TARGET_VULKAN_1_2;
  input->target_language_version = v13 ? GLSLANG_TARGET_SPV_1_6 : GLSLANG_TARGET_SPV_1_5;
  return true;
}

/* One compile's glslang calls, run under vkds__cxx_guard (glslang throws std::bad_alloc
 * when an allocation fails): the objects it makes are kept here, so that whoever ran it
 * frees them whether it returned or threw. */
typedef struct compile_job {
  const vkds_context *ctx;
  const char *code, *preamble, *name;
  uint32_t api_version;
  glslang_shader_t *shader;
  glslang_program_t *program;
  uint32_t *words;
  size_t word_count;
  vkds_result r;
  text warnings; /* glslang's WARNING lines of a compile that succeeded */
} compile_job;

/* Generates and copies out the SPIR-V of the linked program. */
static vkds_result emit_spirv(compile_job *j) {
  glslang_program_SPIRV_generate(j->program, GLSLANG_STAGE_COMPUTE);
  size_t n = glslang_program_SPIRV_get_size(j->program);
  const char *messages = glslang_program_SPIRV_get_messages(j->program);
  /* the SPIR-V builder's logger says "error: " where it gave up on something */
  if (n == 0 || (messages && (strncmp(messages, "error: ", 7) == 0 || strstr(messages, "\nerror: "))))
    return compile_error(j->ctx, j->name, messages ? messages : "ERROR: glslang generated no SPIR-V", NULL);
  if (!(j->words = vkds__alloc_array(j->ctx, n, sizeof *j->words)))
    return vkds__fail(j->ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "GLSL: %zu SPIR-V words", n);
  glslang_program_SPIRV_get(j->program, j->words);
  j->word_count = n;
  return VKDS_SUCCESS;
}

static vkds_result link_and_emit(compile_job *j) {
  if (!(j->program = glslang_program_create()))
    return vkds__fail(j->ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "GLSL: glslang program");
  glslang_program_add_shader(j->program, j->shader);
  return glslang_program_link(j->program, glslang_messages)
             ? emit_spirv(j)
             : compile_error(j->ctx, j->name, glslang_program_get_info_log(j->program),
                             glslang_program_get_info_debug_log(j->program));
}

/* glslang's limits, with the compute ones (work-group size, group count) the largest of
 * the context's devices: glslang's defaults (1024, 1024, 64) refused local sizes the
 * devices take, such as z = 100. vkds_launch checks each launch against its own device. */
static void limits_for(const vkds_context *ctx, glslang_resource_t *r) {
  *r = *glslang_default_resource();
  for (uint32_t i = 0; ctx && i < ctx->device_count; ++i) {
    const VkPhysicalDeviceLimits *lim = &ctx->devices[i].facts.props.properties.limits;
    int *size[3] = {&r->max_compute_work_group_size_x, &r->max_compute_work_group_size_y,
                    &r->max_compute_work_group_size_z};
    int *count[3] = {&r->max_compute_work_group_count_x, &r->max_compute_work_group_count_y,
                     &r->max_compute_work_group_count_z};
    for (int d = 0; d < 3; ++d) {
      int sz = lim->maxComputeWorkGroupSize[d] > INT32_MAX ? INT32_MAX : (int)lim->maxComputeWorkGroupSize[d];
      int ct = lim->maxComputeWorkGroupCount[d] > INT32_MAX ? INT32_MAX : (int)lim->maxComputeWorkGroupCount[d];
      if (sz > *size[d]) *size[d] = sz;
      if (ct > *count[d]) *count[d] = ct;
    }
  }
}

static void compile_run(void *arg) {
  compile_job *j = arg;
  glslang_resource_t limits;
  limits_for(j->ctx, &limits);
  /* the shader keeps &input.code until it has preprocessed: input lives to the end */
  glslang_input_t input = {
      .language = GLSLANG_SOURCE_GLSL,
      .stage = GLSLANG_STAGE_COMPUTE,
      .client = GLSLANG_CLIENT_VULKAN,
      .target_language = GLSLANG_TARGET_SPV,
      .code = j->code,
      .default_version = 460,
      .default_profile = GLSLANG_NO_PROFILE,
      .messages = (glslang_messages_t)glslang_messages,
      .resource = &limits,
  };
  target_for(j->api_version, &input);
  if (!(j->shader = glslang_shader_create(&input))) {
    j->r = vkds__fail(j->ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "GLSL: glslang shader");
    return;
  }
  if (j->preamble) glslang_shader_set_preamble(j->shader, j->preamble);
  if (!glslang_shader_preprocess(j->shader, &input)) {
    j->r = compile_error(j->ctx, j->name, glslang_shader_get_info_log(j->shader),
                         glslang_shader_get_info_debug_log(j->shader));
    return;
  }
  /* what the parser reads (glslang's C API parses the preprocessed text): macros expanded */
  const char *preprocessed = glslang_shader_get_preprocessed_code(j->shader);
  size_t length = preprocessed ? strlen(preprocessed) : 0;
  if (length > MAX_PREPROCESSED) {
    j->r = vkds__fail(j->ctx, VKDS_ERROR_LIMIT_EXCEEDED, VK_SUCCESS,
                      "GLSL: %s: %zu bytes after preprocessing; vkds compiles at most %u KiB (glslang needs stack "
                      "in proportion to a source's length)", j->name ? j->name : "kernel", length,
                      (unsigned)MAX_PREPROCESSED >> 10);
    return;
  }
  /* VKDS_DECLARE_ARGS without VKDS_ARGS defined leaves the name itself in the block, and
   * glslang said only "syntax error, unexpected IDENTIFIER" (a probe's kernel without
   * arguments) */
  for (const char *at = preprocessed; at && (at = strstr(at, "VKDS_ARGS")); at += 9) {
    bool word_start = at == preprocessed || !(isalnum((unsigned char)at[-1]) || at[-1] == '_');
    if (word_start && !(isalnum((unsigned char)at[9]) || at[9] == '_')) {
      j->r = vkds__fail(j->ctx, VKDS_ERROR_COMPILE, VK_SUCCESS,
                        "GLSL: %s: VKDS_DECLARE_ARGS needs VKDS_ARGS defined before it (the argument block's "
                        "members; `#define VKDS_ARGS` with nothing after it for a kernel without arguments)",
                        j->name ? j->name : "kernel");
      return;
    }
  }
  j->r = glslang_shader_parse(j->shader, &input)
             ? link_and_emit(j)
             : compile_error(j->ctx, j->name, glslang_shader_get_info_log(j->shader),
                             glslang_shader_get_info_debug_log(j->shader));
  /* a compile that succeeded kept its warnings to itself ("extension not supported" of
   * an `#extension ...: warn`, say; a new-user probe): the caller logs them */
  if (j->r == VKDS_SUCCESS) {
    add_warnings(&j->warnings, glslang_shader_get_info_log(j->shader));
    if (j->program) add_warnings(&j->warnings, glslang_program_get_info_log(j->program));
  }
}

/* A compile on glslang's own thread (COMPILE_STACK), which also frees what glslang made
 * (its objects come from that thread's pool allocator), and hands its last error to the
 * caller's thread. */
typedef struct compile_thread {
  compile_job *job;
  vkds__cxx_outcome outcome;
  char message[1024]; /* the thread's vkds_last_error_message() */
  VkResult vk;
} compile_thread;

static void *compile_main(void *arg) {
  compile_thread *t = arg;
  compile_job *j = t->job;
  vkds__hold_failure_logs(true); /* the caller's thread logs them (compile_locked) */
  t->outcome = vkds__cxx_guard(compile_run, j);
  if (j->program) glslang_program_delete(j->program); /* leaves the shader to us */
  if (j->shader) glslang_shader_delete(j->shader);
  snprintf(t->message, sizeof t->message, "%s", vkds_last_error_message());
  t->vk = vkds_last_vk_result();
  return NULL;
}

/* Runs glslang (initializing it first if it is not yet); call with glslang_lock held. */
static vkds_result compile_locked(const vkds_context *ctx, const char *code, const char *preamble,
                                  const char *name, uint32_t api_version, uint32_t **words, size_t *word_count) {
  vkds__cxx_outcome o = glslang_ready ? VKDS__CXX_RETURNED : vkds__cxx_guard(glslang_init, &glslang_ready);
  if (!glslang_ready)
    return vkds__fail(ctx, o == VKDS__CXX_RETURNED ? VKDS_ERROR_UNSUPPORTED : VKDS_ERROR_OUT_OF_HOST_MEMORY,
                      VK_SUCCESS, "GLSL: glslang_initialize_process failed%s",
                      o == VKDS__CXX_RETURNED ? "" : " (out of memory)");
  compile_job j = {.ctx = ctx, .code = code, .preamble = preamble, .name = name, .api_version = api_version,
                   .warnings = {.ctx = ctx}};
  compile_thread t = {.job = &j};
  pthread_attr_t attr;
  pthread_t thread;
  int err = pthread_attr_init(&attr);
  if (!err) {
    err = pthread_attr_setstacksize(&attr, COMPILE_STACK);
    if (!err) err = pthread_create(&thread, &attr, compile_main, &t);
    pthread_attr_destroy(&attr);
  }
  if (err)
    return vkds__fail(ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS,
                      "GLSL: cannot start glslang's thread with %u MiB of stack (error %d)",
                      (unsigned)COMPILE_STACK >> 20, err);
  pthread_join(thread, NULL);
  o = t.outcome;
  if (j.warnings.s && !j.warnings.oom && o == VKDS__CXX_RETURNED && j.r == VKDS_SUCCESS)
    vkds__log(ctx, VKDS_LOG_WARN, "GLSL: %s compiled with warnings: %s", name ? name : "a GLSL kernel", j.warnings.s);
  vkds__free(ctx, j.warnings.s);
  if (o != VKDS__CXX_RETURNED) {
    vkds__free(ctx, j.words);
    return vkds__fail(ctx, o == VKDS__CXX_OUT_OF_MEMORY ? VKDS_ERROR_OUT_OF_HOST_MEMORY : VKDS_ERROR_COMPILE,
                      VK_SUCCESS, "GLSL: %s: glslang %s", name ? name : "kernel",
                      o == VKDS__CXX_OUT_OF_MEMORY ? "ran out of memory" : "threw an exception");
  }
  *words = j.words, *word_count = j.word_count;
  return j.r != VKDS_SUCCESS ? vkds__relay_error(ctx, j.r, t.message, t.vk) : VKDS_SUCCESS;
}

const char *vkds__glsl_header_text(void) { return vkds_glsl_header; }

vkds_result vkds__glsl_compile(const vkds_context *ctx, const char *source, const char *name,
                               const char *const *defines, uint32_t define_count, uint32_t api_version,
                               uint32_t **words, size_t *word_count) {
  VKDS__REQUIRE(ctx, source != NULL);
  VKDS__REQUIRE(ctx, words != NULL);
  VKDS__REQUIRE(ctx, word_count != NULL);
  VKDS__REQUIRE(ctx, defines != NULL || define_count == 0);
  *words = NULL, *word_count = 0;
  glslang_input_t probe = {0};
  if (!target_for(api_version, &probe))
    return vkds__fail(ctx, VKDS_ERROR_UNSUPPORTED, VK_SUCCESS, "GLSL: Vulkan %u.%u: vkds compiles for Vulkan 1.2 and later",
                      VK_API_VERSION_MAJOR(api_version), VK_API_VERSION_MINOR(api_version));

  text preamble = {.ctx = ctx}, code = {.ctx = ctx};
  vkds_result r = make_preamble(ctx, defines, define_count, &preamble);
  if (r == VKDS_SUCCESS) r = prepare_source(ctx, source, name, &code);
  if (r == VKDS_SUCCESS) {
    pthread_mutex_lock(&glslang_lock);
    r = compile_locked(ctx, code.s, preamble.s, name, api_version, words, word_count);
    pthread_mutex_unlock(&glslang_lock);
  }
  vkds__free(ctx, preamble.s);
  vkds__free(ctx, code.s);
  return r;
}
