/* tests/test_glsl.c: GLSL to SPIR-V at run time (lib/kernel/glsl.c), called directly: valid
 * modules for Vulkan 1.2 and 1.3, the embedded device-side header, the user's line
 * numbers in errors, refused includes, defines, compiles from several threads, and
 * sources too deep for glslang's recursion on the caller's stack. */
#include "kernel/kernel_internal.h" /* first: volk before any Vulkan header */

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

enum { SPIRV_MAGIC = 0x07230203u };

static const char plain_source[] =
    "#version 460\n"
    "layout(local_size_x = 64) in;\n"
    "layout(std430, set = 0, binding = 0) buffer Data { uint values[]; };\n"
    "void main() { values[gl_GlobalInvocationID.x] *= 2u; }\n";

/* A kernel in vkds's style: views, an argument block, the launch-wide index. */
static const char header_source[] =
    "#version 460\n"
    "#include \"vkds.glsl\"\n"
    "layout(local_size_x = 64) in;\n"
    "VKDS_VIEW(float, 4, Floats)\n"
    "#define VKDS_ARGS Floats src; Floats dst; float scale;\n"
    "VKDS_DECLARE_ARGS\n"
    "void main() {\n"
    "  uint64_t i = vkds_global_index();\n"
    "  if (!Floats_in(VKDS_ARG(src), i)) return;\n"
    "  Floats_store(VKDS_ARG(dst), i, Floats_load(VKDS_ARG(src), i) * VKDS_ARG(scale));\n"
    "  uvec3 id = vkds_global_id();\n"
    "  if (id.y != 0u) Floats_store(VKDS_ARG(dst), 0ul, float(Floats_count(VKDS_ARG(dst))));\n"
    "}\n";

/* Compiles for Vulkan `api`; the result as vkds__glsl_compile gives it. */
static vkds_result compile(const char *source, const char *const *defines, uint32_t define_count, uint32_t api,
                           uint32_t **words, size_t *word_count) {
  return vkds__glsl_compile(NULL, source, "test", defines, define_count, api, words, word_count);
}

/* Runs spirv-val on the module, for Vulkan `env` ("vulkan1.2", "vulkan1.3"). */
static void assert_valid(const uint32_t *words, size_t word_count, const char *env) {
  ck_assert_uint_gt(word_count, 5);
  ck_assert_uint_eq(words[0], SPIRV_MAGIC);
  char path[] = "/tmp/vkds-test-glsl-XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  size_t bytes = word_count * sizeof *words;
  ck_assert_int_eq(write(fd, words, bytes), (ssize_t)bytes);
  close(fd);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "spirv-val --target-env %s %s", env, path);
  int rc = system(cmd);
  unlink(path);
  ck_assert_msg(rc == 0, "spirv-val --target-env %s refused the module (status %d)", env, rc);
}

/* Compiles `source`, which must compile, and validates it for Vulkan 1.2. */
static void assert_compiles(const char *source, const char *const *defines, uint32_t define_count) {
  uint32_t *words = NULL;
  size_t n = 0;
  ck_assert_vkds(compile(source, defines, define_count, VK_API_VERSION_1_2, &words, &n));
  assert_valid(words, n, "vulkan1.2");
  free(words);
}

/* Compiles `source`, which must fail with VKDS_ERROR_COMPILE and a message holding
 * `expected`. */
static void assert_compile_error(const char *source, const char *const *defines, uint32_t define_count,
                                 const char *expected) {
  uint32_t *words = (uint32_t *)&words; /* must be reset */
  size_t n = 1;
  ck_assert_int_eq(compile(source, defines, define_count, VK_API_VERSION_1_2, &words, &n), VKDS_ERROR_COMPILE);
  ck_assert_ptr_null(words);
  ck_assert_uint_eq(n, 0);
  ck_assert_msg(strstr(vkds_last_error_message(), expected), "expected \"%s\" in: %s", expected,
                vkds_last_error_message());
}

/* ---- valid modules ---- */

START_TEST(plain_shader_is_valid_spirv_for_vulkan_1_2) {
  uint32_t *words = NULL;
  size_t n = 0;
  ck_assert_vkds(compile(plain_source, NULL, 0, VK_API_VERSION_1_2, &words, &n));
  ck_assert_uint_eq(words[1], 0x00010500u); /* SPIR-V 1.5 */
  assert_valid(words, n, "vulkan1.2");
  free(words);
}
END_TEST

START_TEST(plain_shader_is_valid_spirv_for_vulkan_1_3) {
  uint32_t *words = NULL;
  size_t n = 0;
  ck_assert_vkds(compile(plain_source, NULL, 0, VK_API_VERSION_1_3, &words, &n));
  ck_assert_uint_eq(words[1], 0x00010600u); /* SPIR-V 1.6 */
  assert_valid(words, n, "vulkan1.3");
  free(words);
}
END_TEST

START_TEST(source_without_version_gets_460) {
  assert_compiles("layout(local_size_x = 1) in;\nvoid main() {}\n", NULL, 0);
  assert_compiles("#version 460\nlayout(local_size_x = 1) in;\nvoid main() {}", NULL, 0); /* no last newline */
  assert_compiles("// leading comment\n\n#version 450\r\nlayout(local_size_x = 1) in;\r\nvoid main() {}\r\n", NULL, 0);
}
END_TEST

/* ---- the device-side header ---- */

START_TEST(header_kernel_compiles_with_and_without_spill_and_debug) {
  static const char *const sets[][2] = {{NULL, NULL}, {"VKDS_SPILL", NULL}, {"VKDS_DEBUG", NULL}, {"VKDS_SPILL", "VKDS_DEBUG"}};
  static const uint32_t counts[] = {0, 1, 1, 2};
  for (int i = 0; i < 4; ++i) assert_compiles(header_source, sets[i], counts[i]);
}
END_TEST

START_TEST(header_in_angle_brackets_and_twice) {
  char source[sizeof header_source + 64];
  const char *rest = strchr(header_source, '\n') + 1;
  rest = strchr(rest, '\n') + 1; /* past the #include */
  snprintf(source, sizeof source, "#version 460\n#include <vkds.glsl>\n  #  include \"vkds.glsl\" // again\n%s", rest);
  assert_compiles(source, NULL, 0);
}
END_TEST

/* A kernel without arguments: VKDS_ARGS defined empty declares the reserved block alone;
 * without it, the error names what is missing (glslang said "unexpected IDENTIFIER"; a
 * probe). A name that only begins with VKDS_ARGS is no such leftover. */
START_TEST(declare_args_without_args_is_named) {
  static const char without[] = "#version 450\n#include \"vkds.glsl\"\nlayout(local_size_x = 64) in;\n"
                                "VKDS_DECLARE_ARGS\nvoid main() {}\n";
  assert_compile_error(without, NULL, 0, "VKDS_DECLARE_ARGS needs VKDS_ARGS defined");
  static const char empty[] = "#version 450\n#include \"vkds.glsl\"\nlayout(local_size_x = 64) in;\n"
                              "#define VKDS_ARGS\nVKDS_DECLARE_ARGS\nvoid main() { uint64_t i = vkds_global_index(); }\n";
  assert_compiles(empty, NULL, 0);
  static const char longer[] = "#version 450\n#include \"vkds.glsl\"\nlayout(local_size_x = 64) in;\n"
                               "#define VKDS_ARGS uint VKDS_ARGS_N;\nVKDS_DECLARE_ARGS\n"
                               "void main() { uint n = VKDS_ARG(VKDS_ARGS_N); }\n";
  assert_compiles(longer, NULL, 0);
}
END_TEST

/* ---- the user's line numbers ---- */

START_TEST(syntax_error_on_line_7_is_reported_on_line_7) {
  static const char source[] = "#version 460\n"              /* 1 */
                               "#include \"vkds.glsl\"\n"     /* 2: ~70 lines of header */
                               "layout(local_size_x = 1) in;\n" /* 3 */
                               "// a comment\n"               /* 4 */
                               "void main() {\n"              /* 5 */
                               "  uint x = 1u;\n"             /* 6 */
                               "  x = x +* ;\n"               /* 7 */
                               "}\n";
  static const char *const defines[] = {"A=1", "B"}; /* the preamble shifts nothing either */
  assert_compile_error(source, defines, 2, "ERROR: 0:7:");
  /* the first line of the message is the error, prefixed with the shader's name */
  ck_assert_msg(strstr(vkds_last_error_message(), "test: ERROR: 0:7:"), "%s", vkds_last_error_message());
  ck_assert_ptr_null(strstr(vkds_last_error_message(), "ERROR: 0:6:"));
  ck_assert_ptr_null(strstr(vkds_last_error_message(), "ERROR: 0:8:"));
}
END_TEST

START_TEST(error_lines_match_with_comments_and_continuations) {
  /* an undeclared name on line 9, after a version line that is not line 1, a block
   * comment over lines, and a backslash-continued line */
  assert_compile_error("// kernel\n"                        /* 1 */
                       "#version 460\n"                      /* 2 */
                       "#include <vkds.glsl>\n"              /* 3 */
                       "/* one\n"                            /* 4 */
                       "   two */\n"                         /* 5 */
                       "layout(local_size_x = 1) in;\n"      /* 6 */
                       "#define LONG 1 + \\\n"               /* 7 */
                       "  2\n"                               /* 8 */
                       "void main() { uint x = LONG + nope; }\n", /* 9 */
                       NULL, 0, "ERROR: 0:9: 'nope'");
  /* and without a #version line */
  assert_compile_error("layout(local_size_x = 1) in;\n\nvoid main() { nope2 = 1; }\n", NULL, 0, "ERROR: 0:3: 'nope2'");
}
END_TEST

START_TEST(errors_inside_the_header_name_it) {
  /* a name the header declares, declared first by the kernel: the redefinition is
   * reported on the header's own line (its declaration is some way into it) */
  assert_compile_error("#version 460\n"
                       "const uint vkds_range64 = 1u;\n"
                       "#include \"vkds.glsl\"\n"
                       "layout(local_size_x = 1) in;\n"
                       "void main() {}\n",
                       NULL, 0, "ERROR: vkds.glsl:");
  unsigned line = 0;
  const char *at = strstr(vkds_last_error_message(), "ERROR: vkds.glsl:");
  ck_assert_int_eq(sscanf(at, "ERROR: vkds.glsl:%u: 'vkds_range64' : redefinition", &line), 1);
  ck_assert_uint_gt(line, 10);
}
END_TEST

/* ---- includes ---- */

START_TEST(other_includes_are_refused_by_name) {
  assert_compile_error("#version 460\n#include \"other.glsl\"\nvoid main() {}\n", NULL, 0, "\"other.glsl\"");
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "0:2:"));
  assert_compile_error("#version 460\n#include <sys/other.glsl>\nvoid main() {}\n", NULL, 0, "\"sys/other.glsl\"");
  assert_compile_error("#version 460\n#include vkds.glsl\nvoid main() {}\n", NULL, 0, "header name");
  assert_compile_error("#version 460\n#include \"vkds.glsl\" x\nvoid main() {}\n", NULL, 0, "extra content");
}
END_TEST

START_TEST(files_are_never_read_whatever_the_spelling) {
  /* glslang 12's own include handling would read ./other.glsl; vkds must not let it */
  FILE *f = fopen("other.glsl", "w");
  ck_assert_ptr_nonnull(f);
  fputs("int from_the_file;\n", f);
  fclose(f);
  static const char *const spellings[] = {
      "#include \"other.glsl\"\n",
      "# include \"other.glsl\"\n",
      "#/* c */include \"other.glsl\"\n",
      "#inc\\\nlude \"other.glsl\"\n",
      "/* c */ #include \"other.glsl\"\n",
      "#if 0\n#include \"other.glsl\"\n#endif\n",
  };
  for (size_t i = 0; i < sizeof spellings / sizeof *spellings; ++i) {
    char source[256];
    snprintf(source, sizeof source,
             "#version 460\n#extension GL_GOOGLE_include_directive : enable\n%s"
             "layout(local_size_x = 1) in;\nvoid main() {}\n",
             spellings[i]);
    assert_compile_error(source, NULL, 0, "other.glsl");
  }
  unlink("other.glsl");
  /* in comments and strings, an #include is no directive */
  assert_compiles("#version 460\n// #include \"other.glsl\"\n/*\n#include \"other.glsl\"\n*/\n"
                  "layout(local_size_x = 1) in;\nvoid main() {}\n",
                  NULL, 0);
}
END_TEST

/* ---- defines ---- */

START_TEST(defines_are_visible_to_the_shader) {
  static const char source[] = "#version 460\n"
                               "#if N != 5\n"
                               "#error bad N\n"
                               "#endif\n"
                               "#ifndef FLAG\n"
                               "#error no FLAG\n"
                               "#endif\n"
                               "layout(local_size_x = N) in;\n"
                               "void main() {}\n";
  static const char *const good[] = {"N=5", "FLAG"};
  assert_compiles(source, good, 2);
  static const char *const wrong[] = {"N=4", "FLAG"};
  assert_compile_error(source, wrong, 2, "bad N");
  static const char *const missing[] = {"N=5"};
  assert_compile_error(source, missing, 1, "no FLAG");
}
END_TEST

START_TEST(malformed_defines_are_invalid_arguments) {
  /* (a trailing backslash joined the next define's line to it: a probe) */
  static const char *const bad[] = {"=5", "5N", "A B", "N=1\n#error x", "", "N=1 \\"};
  uint32_t *words;
  size_t n;
  for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i)
    ck_assert_int_eq(compile(plain_source, &bad[i], 1, VK_API_VERSION_1_2, &words, &n), VKDS_ERROR_INVALID_ARGUMENT);
  const char *const null_define[] = {NULL};
  ck_assert_int_eq(compile(plain_source, null_define, 1, VK_API_VERSION_1_2, &words, &n), VKDS_ERROR_INVALID_ARGUMENT);
}
END_TEST

/* ---- arguments ---- */

START_TEST(null_arguments_are_refused) {
  uint32_t *words;
  size_t n;
  ck_assert_int_eq(compile(NULL, NULL, 0, VK_API_VERSION_1_2, &words, &n), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(compile(plain_source, NULL, 0, VK_API_VERSION_1_2, NULL, &n), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(compile(plain_source, NULL, 0, VK_API_VERSION_1_2, &words, NULL), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(compile(plain_source, NULL, 1, VK_API_VERSION_1_2, &words, &n), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(compile(plain_source, NULL, 0, VK_API_VERSION_1_1, &words, &n), VKDS_ERROR_UNSUPPORTED);
  /* a NULL name is fine */
  ck_assert_vkds(vkds__glsl_compile(NULL, plain_source, NULL, NULL, 0, VK_API_VERSION_1_2, &words, &n));
  free(words);
  ck_assert_int_eq(vkds__glsl_compile(NULL, "void main() { x }", NULL, NULL, 0, VK_API_VERSION_1_2, &words, &n),
                   VKDS_ERROR_COMPILE);
  ck_assert_msg(strstr(vkds_last_error_message(), "compilation failed: a GLSL kernel: ERROR: 0:1:"), "%s",
                vkds_last_error_message());
}
END_TEST

/* ---- threads ---- */

enum { THREADS = 4, EACH = 5 };

typedef struct compile_job {
  const uint32_t *expected;
  size_t expected_count;
  int failures;
  char message[1024];
} compile_job;

static void *compile_repeatedly(void *arg) {
  compile_job *job = arg;
  static const char *const debug[] = {"VKDS_DEBUG"};
  for (int i = 0; i < EACH; ++i) {
    uint32_t *words = NULL;
    size_t n = 0;
    if (compile(header_source, debug, 1, VK_API_VERSION_1_2, &words, &n) != VKDS_SUCCESS) {
      snprintf(job->message, sizeof job->message, "%s", vkds_last_error_message());
      ++job->failures;
    } else if (n != job->expected_count || memcmp(words, job->expected, n * sizeof *words) != 0) {
      snprintf(job->message, sizeof job->message, "a different module (%zu words)", n);
      ++job->failures;
    }
    free(words);
  }
  return NULL;
}

START_TEST(four_threads_compile_at_once) {
  static const char *const debug[] = {"VKDS_DEBUG"};
  uint32_t *expected = NULL;
  size_t expected_count = 0;
  ck_assert_vkds(compile(header_source, debug, 1, VK_API_VERSION_1_2, &expected, &expected_count));
  compile_job jobs[THREADS];
  pthread_t threads[THREADS];
  for (int i = 0; i < THREADS; ++i) {
    jobs[i] = (compile_job){.expected = expected, .expected_count = expected_count};
    ck_assert_int_eq(pthread_create(&threads[i], NULL, compile_repeatedly, &jobs[i]), 0);
  }
  for (int i = 0; i < THREADS; ++i) pthread_join(threads[i], NULL);
  for (int i = 0; i < THREADS; ++i)
    ck_assert_msg(jobs[i].failures == 0, "thread %d: %d failures; %s", i, jobs[i].failures, jobs[i].message);
  free(expected);
}
END_TEST

/* ---- what fuzz/fuzz_glsl.c found (RELIABILITY.md) ---- */

START_TEST(macro_ending_at_a_line_splice_compiles) {
  /* glslang 12's preprocessor threw std::length_error (caught, but leaking what it held)
   * on a macro whose name ends at a backslash-newline; fuzz/corpus/glsl/
   * regress-macro-before-splice is the fuzzer's input */
  assert_compiles("#version 460\n"
                  "#define SCALE 3u\n"
                  "layout(local_size_x = 1) in;\n"
                  "layout(std430, binding = 0) buffer Data { uint v[]; };\n"
                  "void main() { v[0] = SCALE\\\n+ 1u; }\n",
                  NULL, 0);
  /* several splices, CR LF, the end of the source, and a splice inside an identifier */
  assert_compiles("#version 460\n"
                  "#define SCALE 3u\n"
                  "layout(local_size_x = 1) in;\n"
                  "layout(std430, binding = 0) buffer Data { uint v[]; };\n"
                  "void main() { v[0] = SCA\\\nLE\\\r\n\\\n+ 1u; }\n"
                  "#define END ;\n"
                  "const uint K = 1u END\\\n",
                  NULL, 0);
  assert_compile_error("#define M 1\nM\\\n", NULL, 0, "syntax error");
}
END_TEST

/* ---- sources whose syntax trees are deep ---- */

/* A kernel whose one statement is `terms` additions: a syntax tree as deep as the chain,
 * which glslang walks recursively (about 830 bytes of stack per term). */
static char *long_sum(int terms) {
  static const char head[] = "#version 460\nlayout(local_size_x = 1) in;\n"
                             "layout(std430, binding = 0) buffer Data { float v[]; };\n"
                             "void main() { float f = v[1]; v[0] = f";
  size_t n = sizeof head + 2 * (size_t)terms + 8;
  char *s = malloc(n);
  ck_assert_ptr_nonnull(s);
  char *p = s + snprintf(s, n, "%s", head);
  for (int i = 0; i < terms; ++i) *p++ = '+', *p++ = 'f';
  snprintf(p, 8, "; }\n");
  return s;
}

typedef struct small_stack_job {
  const char *source;
  vkds_result r;
  char message[1024];
  size_t words;
} small_stack_job;

static void *compile_on_small_stack(void *arg) {
  small_stack_job *job = arg;
  uint32_t *words = NULL;
  job->r = compile(job->source, NULL, 0, VK_API_VERSION_1_3, &words, &job->words);
  snprintf(job->message, sizeof job->message, "%s", vkds_last_error_message());
  free(words);
  return NULL;
}

START_TEST(deep_expressions_compile_whatever_the_callers_stack) {
  /* 20,000 terms overflowed glslang's recursion on an 8 MiB stack (10,000 did not);
   * glslang runs on vkds's own thread, so a caller with 512 KiB of stack compiles it */
  char *source = long_sum(20000);
  small_stack_job job = {.source = source};
  pthread_attr_t attr;
  pthread_t thread;
  ck_assert_int_eq(pthread_attr_init(&attr), 0);
  ck_assert_int_eq(pthread_attr_setstacksize(&attr, 512 * 1024), 0);
  ck_assert_int_eq(pthread_create(&thread, &attr, compile_on_small_stack, &job), 0);
  pthread_attr_destroy(&attr);
  pthread_join(thread, NULL);
  ck_assert_msg(job.r == VKDS_SUCCESS, "%s", job.message);
  ck_assert_uint_gt(job.words, 5);
  free(source);
}
END_TEST

START_TEST(sources_past_256_kib_after_preprocessing_are_refused) {
  /* 100,000 terms: 200 KB as written, twice that once glslang's preprocessor has spaced
   * the tokens: more than glslang's thread has stack for */
  char *source = long_sum(100000);
  uint32_t *words = (uint32_t *)&words;
  size_t n = 1;
  ck_assert_int_eq(compile(source, NULL, 0, VK_API_VERSION_1_3, &words, &n), VKDS_ERROR_LIMIT_EXCEEDED);
  ck_assert_ptr_null(words);
  ck_assert_msg(strstr(vkds_last_error_message(), "after preprocessing"), "%s", vkds_last_error_message());
  free(source);
  /* the length counted is the preprocessed one: a short source whose macros expand */
  const char *macros = "#version 460\n"
                       "#define A f+f+f+f+f+f+f+f+f+f+f+f+f+f+f+f\n"
                       "#define B A+A+A+A+A+A+A+A+A+A+A+A+A+A+A+A\n"
                       "#define C B+B+B+B+B+B+B+B+B+B+B+B+B+B+B+B\n"
                       "#define D C+C+C+C+C+C+C+C+C+C+C+C+C+C+C+C\n"
                       "layout(local_size_x = 1) in;\n"
                       "layout(std430, binding = 0) buffer Data { float v[]; };\n"
                       "void main() { float f = v[1]; v[0] = D; }\n";
  ck_assert_int_eq(compile(macros, NULL, 0, VK_API_VERSION_1_3, &words, &n), VKDS_ERROR_LIMIT_EXCEEDED);
  /* and the next compile works */
  ck_assert_vkds(compile(plain_source, NULL, 0, VK_API_VERSION_1_3, &words, &n));
  free(words);
}
END_TEST

/* vkds's error messages as the context's logger gets them (this executable links the
 * static library beside the shared one, so vkds_last_error_message() called from inside
 * the library may read the other copy's); validation messages go to the harness. */
static char logged[4096];
static void log_into(void *user, vkds_log_level level, vkds_log_source source, const char *message) {
  (void)user;
  if (source != VKDS_LOG_SOURCE_VKDS) {
    harness_log(NULL, level, source, message);
    return;
  }
  size_t n = strlen(logged);
  snprintf(logged + n, sizeof logged - n, "%s\n", message);
}

/* A context whose messages go to `logged`, emptied first. */
static vkds_context *logging_context(void) {
  vkds_context_info info = harness_info();
  info.log = log_into;
  logged[0] = '\0';
  vkds_context *ctx;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  return ctx;
}

/* A compile that succeeds with warnings logs them (they were dropped: an `#extension
 * ... : warn` that glslang does not know said nothing; a new-user probe); one without
 * warnings logs nothing. */
START_TEST(warnings_of_a_compile_that_succeeds_are_logged) {
  vkds_context *ctx = logging_context();
  static const char warned[] = "#version 450\n"
                               "layout(local_size_x = 1) in;\n"
                               "#extension GL_EXT_no_such_extension : warn\n"
                               "void main() { }\n";
  vkds_kernel *k;
  ck_assert_vkds(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = plain_source, .args = (const vkds_arg[]){
                                                 {.kind = VKDS_ARG_BINDING, .binding = 0}, {0}}}, &k));
  vkds_kernel_destroy(k);
  ck_assert_str_eq(logged, "");
  ck_assert_vkds(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = warned, .name = "warned"}, &k));
  ck_assert_msg(strstr(logged, "GLSL: warned compiled with warnings: WARNING: 0:3: '#extension' : extension not "
                               "supported: GL_EXT_no_such_extension"), "%s", logged);
  vkds_kernel_destroy(k);
  vkds_context_destroy(ctx);
}
END_TEST

/* A device that offers more than 256 bytes of push constants (MoltenVK says 4096) still
 * gets at most the 256 a launch packs: a GLSL kernel with more arguments is spilled, as on
 * a device with less. It kept 300 bytes in push constants there, and every launch failed
 * with LIMIT_EXCEEDED ("push constants over 256 bytes"; a new-user probe). lavapipe offers
 * 128, so the test raises the record of each device's limit. */
START_TEST(arguments_past_256_bytes_are_spilled_where_a_device_offers_more) {
  vkds_context *ctx = harness_context();
  for (uint32_t d = 0; d < ctx->device_count; ++d) ctx->devices[d].facts.props.properties.limits.maxPushConstantsSize = 512;
  static const char wide[] = "#version 450\n"
                             "#include \"vkds.glsl\"\n"
                             "layout(local_size_x = 64) in;\n"
                             "VKDS_VIEW(uint, 4, Words)\n"
                             "#define VKDS_ARGS Words out_; uint v[70];\n" /* 16 + 16 + 280 = 312 bytes */
                             "VKDS_DECLARE_ARGS\n"
                             "void main() { uint i = uint(vkds_global_index());\n"
                             "  if (i < 70u) Words_store(VKDS_ARG(out_), i, VKDS_ARG(v)[i]); }\n";
  typedef struct { vkds_view out; uint32_t v[70]; } args_t;
  static const vkds_arg args[] = {{.kind = VKDS_ARG_VIEW, .offset = offsetof(args_t, out)},
                                  {.kind = VKDS_ARG_UINT, .offset = offsetof(args_t, v), .count = 70},
                                  {0}};
  vkds_kernel *k;
  ck_assert_vkds(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = wide, .args = args, .name = "wide"}, &k));
  vkds_kernel_reflection kr;
  ck_assert_vkds(vkds_kernel_reflect(k, &kr));
  ck_assert_uint_le(kr.push_constant_size, 256); /* spilled: the base and the buffer's address */
  vkds_buffer *out;
  ck_assert_vkds(vkds_buffer_create(vkds_context_resource(ctx, 0), &(vkds_buffer_info){.size = 70 * 4, .memory = VKDS_MEMORY_MAPPED}, &out));
  memset(vkds_buffer_map(out), 0, 70 * 4);
  vkds_policy *pol;
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = {.context = ctx}}, &pol));
  static args_t a;
  a.out = vkds_view_of(out);
  for (uint32_t i = 0; i < 70; ++i) a.v[i] = 1000u + 3u * i;
  vkds_submission *s = NULL;
  ck_assert_vkds(vkds_launch(pol, k, &(vkds_launch_info){.global = {70}, .args = &a}, &s));
  ck_assert_vkds(vkds_submission_wait(s));
  vkds_submission_release(s);
  const uint32_t *o = vkds_buffer_map(out);
  for (uint32_t i = 0; i < 70; ++i) ck_assert_uint_eq(o[i], 1000u + 3u * i);
  vkds_policy_release(pol);
  vkds_kernel_destroy(k);
  vkds_buffer_destroy(out);
  vkds_context_destroy(ctx);
}
END_TEST

/* A kernel whose module needs a feature the device does not have enabled is refused at
 * its launch there by name (making its pipeline would be undefined behaviour). lavapipe
 * has every feature, so the test takes 8-bit arguments off the record of what vkds
 * enabled on each device. */
START_TEST(missing_feature_is_named) {
  vkds_context *ctx = logging_context();
  for (uint32_t d = 0; d < ctx->device_count; ++d) ctx->devices[d].enabled.caps &= ~(uint32_t)VKDS__CAP_PUSH8;
  static const char narrow[] = "#version 450\n"
                               "#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require\n"
                               "layout(local_size_x = 1) in;\n"
                               "layout(std430, set = 0, binding = 0) buffer Out { uint v[]; };\n"
                               "layout(push_constant) uniform P { uint8_t b; };\n"
                               "void main() { v[0] = uint(b); }\n";
  typedef struct { vkds_view out; uint8_t b; } args_t;
  static const vkds_arg args[] = {{.kind = VKDS_ARG_BINDING, .offset = offsetof(args_t, out), .binding = 0},
                                  {.kind = VKDS_ARG_UINT, .bits = 8, .offset = offsetof(args_t, b)},
                                  {0}};
  vkds_kernel *k;
  ck_assert_vkds(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = narrow, .args = args, .name = "narrow"}, &k));
  vkds_resource *r0 = vkds_context_resource(ctx, 0);
  vkds_buffer *out;
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = 64, .memory = VKDS_MEMORY_MAPPED}, &out));
  memset(vkds_buffer_map(out), 0, 64);
  vkds_policy *pol;
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = {.context = ctx}}, &pol));
  args_t a = {.out = vkds_view_of(out), .b = 200};
  vkds_submission *s = NULL;
  ck_assert_int_eq(vkds_launch(pol, k, &(vkds_launch_info){.global = {1}, .args = &a}, &s), VKDS_ERROR_UNSUPPORTED);
  ck_assert_ptr_null(s);
  ck_assert_msg(strstr(logged, "kernel 'narrow' cannot run on ") &&
                    strstr(logged, ": uses 8-bit arguments (storagePushConstant8), which ") &&
                    strstr(logged, "does not have enabled"), /* (a feature it may support: as the algorithms say) */
                "%s", logged);
  ck_assert_uint_eq(((const uint32_t *)vkds_buffer_map(out))[0], 0); /* nothing ran */
  vkds_policy_release(pol);
  vkds_kernel_destroy(k);
  vkds_buffer_destroy(out);
  vkds_context_destroy(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("glsl");
  TCase *tc = harness_tcase("glsl");
  tcase_add_test(tc, plain_shader_is_valid_spirv_for_vulkan_1_2);
  tcase_add_test(tc, plain_shader_is_valid_spirv_for_vulkan_1_3);
  tcase_add_test(tc, source_without_version_gets_460);
  tcase_add_test(tc, header_kernel_compiles_with_and_without_spill_and_debug);
  tcase_add_test(tc, header_in_angle_brackets_and_twice);
  tcase_add_test(tc, declare_args_without_args_is_named);
  tcase_add_test(tc, syntax_error_on_line_7_is_reported_on_line_7);
  tcase_add_test(tc, error_lines_match_with_comments_and_continuations);
  tcase_add_test(tc, errors_inside_the_header_name_it);
  tcase_add_test(tc, other_includes_are_refused_by_name);
  tcase_add_test(tc, files_are_never_read_whatever_the_spelling);
  tcase_add_test(tc, defines_are_visible_to_the_shader);
  tcase_add_test(tc, malformed_defines_are_invalid_arguments);
  tcase_add_test(tc, null_arguments_are_refused);
  tcase_add_test(tc, four_threads_compile_at_once);
  tcase_add_test(tc, macro_ending_at_a_line_splice_compiles);
  tcase_add_test(tc, deep_expressions_compile_whatever_the_callers_stack);
  tcase_add_test(tc, sources_past_256_kib_after_preprocessing_are_refused);
  tcase_add_test(tc, missing_feature_is_named);
  tcase_add_test(tc, warnings_of_a_compile_that_succeeds_are_logged);
  tcase_add_test(tc, arguments_past_256_bytes_are_spilled_where_a_device_offers_more);
  suite_add_tcase(s, tc);
  return harness_run(s);
}
