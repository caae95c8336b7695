/* tests/test_kernel.c: kernels from GLSL and SPIR-V, argument lowering, range types,
 * split launches, and bad input, on lavapipe with validation on. */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <vulkan/vulkan.h>

#include "app_cmd.h"
#include "backend/queue_test.h"
#include "harness.h"

static vkds_context *ctx;
static vkds_policy *pol;

static void open_all(void) {
  ctx = harness_context();
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_ROUND_ROBIN, .resources = {.context = ctx}}, &pol));
}

static void close_all(void) {
  vkds_policy_release(pol);
  vkds_context_destroy(ctx);
}

static vkds_buffer *mapped(uint64_t bytes) {
  vkds_buffer *b;
  ck_assert_vkds(vkds_buffer_create(vkds_context_resource(ctx, 0), &(vkds_buffer_info){.size = bytes, .memory = VKDS_MEMORY_MAPPED}, &b));
  memset(vkds_buffer_map(b), 0, bytes);
  return b;
}

static void launch_wait(vkds_kernel *k, const vkds_launch_info *li) {
  vkds_submission *s;
  ck_assert_vkds(vkds_launch(pol, k, li, &s));
  ck_assert_vkds(vkds_submission_wait(s));
  vkds_submission_release(s);
}

/* ---- saxpy ---- */

static const char SAXPY[] =
    "#version 450\n"
    "#include \"vkds.glsl\"\n"
    "layout(local_size_x = 64) in;\n"
    "VKDS_VIEW(float, 4, Floats)\n"
    "#define VKDS_ARGS uint n; float a; Floats x; Floats y;\n"
    "VKDS_DECLARE_ARGS\n"
    "void main() {\n"
    "  uint64_t i = vkds_global_index();\n"
    "  if (i >= VKDS_ARG(n)) return;\n"
    "  Floats_store(VKDS_ARG(y), i, VKDS_ARG(a) * Floats_load(VKDS_ARG(x), i) + Floats_load(VKDS_ARG(y), i));\n"
    "}\n";

typedef struct saxpy_args {
  uint32_t n;
  float a;
  vkds_view x, y;
} saxpy_args;

static const vkds_arg SAXPY_ARGS[] = {
    {.kind = VKDS_ARG_UINT, .offset = offsetof(saxpy_args, n), .name = "n"},
    {.kind = VKDS_ARG_FLOAT, .offset = offsetof(saxpy_args, a), .name = "a"},
    {.kind = VKDS_ARG_VIEW, .offset = offsetof(saxpy_args, x), .name = "x"},
    {.kind = VKDS_ARG_VIEW, .offset = offsetof(saxpy_args, y), .name = "y"},
    {0},
};

START_TEST(saxpy_from_glsl) {
  open_all();
  vkds_kernel *k;
  ck_assert_vkds(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = SAXPY, .args = SAXPY_ARGS, .name = "saxpy"}, &k));
  vkds_kernel_reflection kr;
  ck_assert_vkds(vkds_kernel_reflect(k, &kr));
  ck_assert_uint_eq(kr.local_size[0], 64);
  ck_assert(kr.uses_vkds_header);
  enum { N = 100003 };
  vkds_buffer *x = mapped(N * 4), *y = mapped(N * 4);
  float *xs = vkds_buffer_map(x), *ys = vkds_buffer_map(y);
  for (int i = 0; i < N; ++i) xs[i] = (float)i, ys[i] = 1.0f;
  saxpy_args a = {.n = N, .a = 2.0f, .x = vkds_view_of(x), .y = vkds_view_of(y)};
  launch_wait(k, &(vkds_launch_info){.global = {N}, .args = &a});
  for (int i = 0; i < N; ++i) harness_expect_float_eq(ys[i], 2.0f * (float)i + 1.0f);
  /* split into dispatches of 7 groups: the kernel's index is still right */
  for (int i = 0; i < N; ++i) ys[i] = 1.0f;
  launch_wait(k, &(vkds_launch_info){.global = {N}, .args = &a, .max_groups = 7});
  for (int i = 0; i < N; ++i) harness_expect_float_eq(ys[i], 2.0f * (float)i + 1.0f);
  /* the same source again: from the cache */
  uint64_t compiles, hits;
  vkds_kernel *again;
  ck_assert_vkds(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = SAXPY, .args = SAXPY_ARGS}, &again));
  vkds_context_glsl_stats(ctx, &compiles, &hits);
  ck_assert_uint_eq(compiles, 1);
  ck_assert_uint_eq(hits, 1);
  vkds_kernel_destroy(again);
  vkds_kernel_destroy(k);
  vkds_buffer_destroy(x);
  vkds_buffer_destroy(y);
  close_all();
}
END_TEST

/* ---- the struct of issue 5: an int, a nested struct {float, view}, three views ---- */

static const char NESTED[] =
    "#version 450\n"
    "#include \"vkds.glsl\"\n"
    "layout(local_size_x = 1) in;\n"
    "VKDS_VIEW(uint, 4, Words)\n"
    "struct Inner { float f; Words w; };\n"
    "#define VKDS_ARGS int i; Inner inner; Words three[3];\n"
    "VKDS_DECLARE_ARGS\n"
    "void main() {\n"
    "  Words out_ = VKDS_ARG(inner).w;\n"
    "  Words_store(out_, 0, uint(VKDS_ARG(i)));\n"
    "  Words_store(out_, 1, floatBitsToUint(VKDS_ARG(inner).f));\n"
    "  Words_store(out_, 2, uint(Words_count(out_)));\n"
    "  for (int b = 0; b < 3; ++b) {\n"
    "    Words v = VKDS_ARG(three)[b];\n"
    "    for (uint64_t e = 0; e < Words_count(v); ++e) Words_store(v, e, uint(b * 1000) + uint(e));\n"
    "  }\n"
    "}\n";

typedef struct inner_args {
  float f;
  vkds_view w;
} inner_args;

typedef struct nested_args {
  int32_t i;
  inner_args inner;
  vkds_view three[3];
} nested_args;

static const vkds_arg INNER[] = {
    {.kind = VKDS_ARG_FLOAT, .offset = offsetof(inner_args, f)},
    {.kind = VKDS_ARG_VIEW, .offset = offsetof(inner_args, w)},
    {0},
};
static const vkds_arg NESTED_ARGS[] = {
    {.kind = VKDS_ARG_INT, .offset = offsetof(nested_args, i)},
    {.kind = VKDS_ARG_STRUCT, .offset = offsetof(nested_args, inner), .members = INNER},
    {.kind = VKDS_ARG_VIEW, .offset = offsetof(nested_args, three), .count = 3},
    {0},
};

START_TEST(nested_struct_and_array_of_views) {
  open_all();
  vkds_kernel *k;
  ck_assert_vkds(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = NESTED, .args = NESTED_ARGS, .name = "nested"}, &k));
  vkds_buffer *out = mapped(64), *b[3];
  for (int i = 0; i < 3; ++i) b[i] = mapped(4096);
  nested_args a = {.i = -77, .inner = {.f = 3.25f, .w = {out, 0, 16}}};
  /* three views of different ranges: whole, an offset, a length */
  a.three[0] = vkds_view_of(b[0]);
  a.three[1] = (vkds_view){b[1], 1024, 0};
  a.three[2] = (vkds_view){b[2], 0, 40};
  launch_wait(k, &(vkds_launch_info){.global = {1}, .args = &a});
  const uint32_t *o = vkds_buffer_map(out);
  ck_assert_int_eq((int32_t)o[0], -77);
  float f;
  memcpy(&f, &o[1], 4);
  ck_assert_float_eq(f, 3.25f);
  ck_assert_uint_eq(o[2], 4);  /* the view's length reached the device: 16 bytes */
  ck_assert_uint_eq(o[3], 0);  /* past the view: untouched */
  const uint32_t *w0 = vkds_buffer_map(b[0]), *w1 = vkds_buffer_map(b[1]), *w2 = vkds_buffer_map(b[2]);
  for (uint32_t e = 0; e < 1024; ++e) {
    ck_assert_uint_eq(w0[e], e);
    ck_assert_uint_eq(w1[e], e < 256 ? 0 : 1000 + e - 256); /* starts at byte 1024 */
    ck_assert_uint_eq(w2[e], e < 10 ? 2000 + e : 0);        /* 40 bytes only */
  }
  vkds_kernel_destroy(k);
  vkds_buffer_destroy(out);
  for (int i = 0; i < 3; ++i) vkds_buffer_destroy(b[i]);
  close_all();
}
END_TEST

/* ---- a descriptor binding and push constants without vkds.glsl ---- */

static const char BOUND[] =
    "#version 450\n"
    "layout(local_size_x = 32) in;\n"
    "layout(std430, set = 0, binding = 1) buffer Data { uint v[]; };\n"
    "layout(push_constant) uniform P { uint add; uvec2 pair; };\n"
    "void main() { v[gl_GlobalInvocationID.x] = gl_GlobalInvocationID.x + add + pair.y; }\n";

typedef struct bound_args {
  vkds_view data;
  uint32_t add;
  uint32_t pair[2];
} bound_args;

static const vkds_arg BOUND_ARGS[] = {
    {.kind = VKDS_ARG_BINDING, .offset = offsetof(bound_args, data), .binding = 1},
    {.kind = VKDS_ARG_UINT, .offset = offsetof(bound_args, add)},
    {.kind = VKDS_ARG_UINT, .offset = offsetof(bound_args, pair), .components = 2},
    {0},
};

START_TEST(descriptor_binding_and_vectors) {
  open_all();
  vkds_kernel *k;
  ck_assert_vkds(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = BOUND, .args = BOUND_ARGS}, &k));
  vkds_buffer *d = mapped(256 * 4);
  bound_args a = {.data = vkds_view_of(d), .add = 5, .pair = {1, 100}};
  launch_wait(k, &(vkds_launch_info){.global = {256}, .args = &a});
  const uint32_t *v = vkds_buffer_map(d);
  for (uint32_t i = 0; i < 256; ++i) ck_assert_uint_eq(v[i], i + 105);
  /* a bound view must start where the device can bind a storage buffer: a named error
   * before anything is recorded (it was a validation error) */
  VkPhysicalDevice phys;
  ck_assert_vkds(vkds_resource_vk_handles(vkds_context_resource(ctx, 0), &phys, NULL, NULL));
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(phys, &props);
  if (props.limits.minStorageBufferOffsetAlignment > 4) {
    a.data = (vkds_view){d, 4, 128};
    ck_assert_int_eq(vkds_launch(pol, k, &(vkds_launch_info){.global = {32}, .args = &a}, NULL),
                     VKDS_ERROR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "minStorageBufferOffsetAlignment"));
  }
  /* a bound view without a buffer is named by its binding (the kernel's copy of the
   * description keeps no names: it said "a view bound with VKDS_ARG_BINDING") */
  a.data = (vkds_view){0};
  ck_assert_int_eq(vkds_launch(pol, k, &(vkds_launch_info){.global = {32}, .args = &a}, NULL),
                   VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_msg(strstr(vkds_last_error_message(), "the view bound at binding 1 has a NULL buffer"), "%s",
                vkds_last_error_message());
  vkds_kernel_destroy(k);
  vkds_buffer_destroy(d);
  close_all();
}
END_TEST

/* What a kernels probe found accepted or mishandled: a kernel's own specialization
 * constant 0 was set to vkds's range flag (a wrong answer), a local size of 0 divided by
 * zero at launch, an empty or too large bound buffer and a second description of one
 * binding went through (validation errors, a buffer left out), and an array of buffers
 * had its first element bound only. */
static const char OWN_CONSTANT[] =
    "#version 450\n"
    "#include \"vkds.glsl\"\n"
    "layout(local_size_x = 1) in;\n"
    "layout(constant_id = 0) const uint K = 7u;\n"
    "layout(std430, set = 0, binding = 1) buffer Data { uint v[]; };\n"
    "void main() { v[0] = K; v[1] = vkds_range64 + 40u; }\n";
/* an empty GLCompute entry point with "OpExecutionMode %main LocalSize 0 1 1", which
 * spirv-val accepts (spirv-as of the text in this comment's words) */
static const uint32_t NO_WORK_GROUP[] = {
    0x07230203, 0x00010000, 0x00070000, 0x00000005, 0x00000000, 0x00020011, 0x00000001, 0x0003000e, 0x00000000,
    0x00000001, 0x0005000f, 0x00000005, 0x00000001, 0x6e69616d, 0x00000000, 0x00060010, 0x00000001, 0x00000011,
    0x00000000, 0x00000001, 0x00000001, 0x00020013, 0x00000002, 0x00030021, 0x00000003, 0x00000002, 0x00050036,
    0x00000002, 0x00000001, 0x00000000, 0x00000003, 0x000200f8, 0x00000004, 0x000100fd, 0x00010038};
static const char BUFFER_ARRAY[] =
    "#version 450\n"
    "layout(local_size_x = 1) in;\n"
    "layout(std430, set = 0, binding = 1) buffer Data { uint v[]; } d[2];\n"
    "void main() { d[0].v[0] = 1u; d[1].v[0] = 2u; }\n";
static const vkds_arg ONE_BINDING[] = {{.kind = VKDS_ARG_BINDING, .binding = 1}, {0}};
static const vkds_arg TWICE_BOUND[] = {{.kind = VKDS_ARG_BINDING, .binding = 1},
                                       {.kind = VKDS_ARG_BINDING, .offset = sizeof(vkds_view), .binding = 1},
                                       {0}};

START_TEST(kernels_own_constants_and_bound_buffers) {
  open_all();
  vkds_kernel *k;
  ck_assert_vkds(vkds_kernel_from_glsl(
      ctx, &(vkds_glsl_info){.source = OWN_CONSTANT, .args = ONE_BINDING, .range_type = VKDS_RANGE_U64}, &k));
  vkds_buffer *d = mapped(256);
  vkds_view view = vkds_view_of(d);
  launch_wait(k, &(vkds_launch_info){.global = {1}, .args = &view});
  const uint32_t *v = vkds_buffer_map(d);
  ck_assert_uint_eq(v[0], 7);  /* the kernel's own, left alone */
  ck_assert_uint_eq(v[1], 41); /* vkds's: a 64-bit range */
  /* bound buffers of 0 bytes and past maxStorageBufferRange: named errors */
  view = (vkds_view){d, 256, 0};
  ck_assert_int_eq(vkds_launch(pol, k, &(vkds_launch_info){.global = {1}, .args = &view}, NULL),
                   VKDS_ERROR_INVALID_ARGUMENT);
  VkPhysicalDevice phys;
  ck_assert_vkds(vkds_resource_vk_handles(vkds_context_resource(ctx, 0), &phys, NULL, NULL));
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(phys, &props);
  vkds_buffer *big = NULL;
  uint64_t over = (uint64_t)props.limits.maxStorageBufferRange + 4096;
  if (over <= (512ull << 20) &&
      vkds_buffer_create(vkds_context_resource(ctx, 0), &(vkds_buffer_info){.size = over}, &big) == VKDS_SUCCESS) {
    view = vkds_view_of(big);
    ck_assert_int_eq(vkds_launch(pol, k, &(vkds_launch_info){.global = {1}, .args = &view}, NULL),
                     VKDS_ERROR_LIMIT_EXCEEDED);
    ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "maxStorageBufferRange"));
    vkds_buffer_destroy(big);
  }
  vkds_kernel_destroy(k);
  /* refused where the kernel is made */
  vkds_kernel *bad = (vkds_kernel *)d;
  ck_assert_int_eq(vkds_kernel_create(ctx, &(vkds_kernel_info){.spirv = NO_WORK_GROUP, .spirv_size = sizeof NO_WORK_GROUP},
                                     &bad),
                   VKDS_ERROR_INVALID_SPIRV);
  ck_assert_ptr_null(bad);
  ck_assert_int_eq(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = BUFFER_ARRAY, .args = ONE_BINDING}, &bad),
                   VKDS_ERROR_UNSUPPORTED);
  ck_assert_int_eq(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = OWN_CONSTANT, .args = TWICE_BOUND}, &bad),
                   VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "each binding once"));
  vkds_buffer_destroy(d);
  close_all();
}
END_TEST

/* 16- and 8-bit arguments (push constants of those widths: vkds enables
 * storagePushConstant16/8 where the device has them; without them the launch is
 * VKDS_ERROR_UNSUPPORTED by name: test_glsl's missing_feature_is_named) */
static const char NARROW[] =
    "#version 450\n"
    "#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require\n"
    "#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require\n"
    "layout(local_size_x = 1) in;\n"
    "layout(std430, set = 0, binding = 0) buffer Out { int v[]; };\n"
    "layout(push_constant) uniform P { int16_t a; uint8_t b; };\n"
    "void main() { v[0] = int(a); v[1] = int(b); }\n";

typedef struct narrow_args {
  vkds_view out;
  int16_t a;
  uint8_t b;
} narrow_args;

START_TEST(narrow_arguments) {
  open_all();
  VkPhysicalDevice phys;
  ck_assert_vkds(vkds_resource_vk_handles(vkds_context_resource(ctx, 0), &phys, NULL, NULL));
  VkPhysicalDevice8BitStorageFeatures f8 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES};
  VkPhysicalDevice16BitStorageFeatures f16 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES,
                                              .pNext = &f8};
  VkPhysicalDeviceFeatures2 f = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &f16};
  vkGetPhysicalDeviceFeatures2(phys, &f);
  if (f16.storagePushConstant16 && f8.storagePushConstant8 && f.features.shaderInt16) {
    static const vkds_arg args[] = {
        {.kind = VKDS_ARG_BINDING, .offset = offsetof(narrow_args, out), .binding = 0},
        {.kind = VKDS_ARG_INT, .bits = 16, .offset = offsetof(narrow_args, a)},
        {.kind = VKDS_ARG_UINT, .bits = 8, .offset = offsetof(narrow_args, b)},
        {0},
    };
    vkds_kernel *k;
    ck_assert_vkds(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = NARROW, .args = args}, &k));
    vkds_buffer *d = mapped(64);
    narrow_args a = {.out = vkds_view_of(d), .a = -1234, .b = 200};
    launch_wait(k, &(vkds_launch_info){.global = {1}, .args = &a});
    const int32_t *v = vkds_buffer_map(d);
    ck_assert_int_eq(v[0], -1234);
    ck_assert_int_eq(v[1], 200);
    vkds_kernel_destroy(k);
    vkds_buffer_destroy(d);
  }
  close_all();
}
END_TEST

/* ---- the range type ---- */

/* A launch tells its policy where its buffers are (bytes, devices), as the algorithms do:
 * a policy over several devices sent launches to one without the buffers (a probe). */
static vkds_task_info seen_hints;
static vkds_result select_recording_hints(vkds_policy *p, const vkds_task_info *hints, uint32_t *index) {
  (void)p;
  seen_hints = *hints;
  *index = 0;
  return VKDS_SUCCESS;
}
START_TEST(launches_hint_their_buffers) {
  open_all();
  vkds_policy_ops ops = {.version = VKDS_POLICY_OPS_VERSION, .name = "hints", .select = select_recording_hints};
  vkds_policy *hp;
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.ops = &ops, .resources = {.context = ctx}}, &hp));
  vkds_kernel *k;
  ck_assert_vkds(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = SAXPY, .args = SAXPY_ARGS}, &k));
  vkds_buffer *x = mapped(4096), *y = mapped(1024);
  saxpy_args a = {.n = 0, .a = 1.0f, .x = vkds_view_of(x), .y = (vkds_view){y, 512, 0}};
  vkds_submission *s;
  ck_assert_vkds(vkds_launch(hp, k, &(vkds_launch_info){.global = {64}, .args = &a}, &s));
  ck_assert_vkds(vkds_submission_wait(s));
  vkds_submission_release(s);
  ck_assert_uint_eq(seen_hints.bytes, 4096 + 512);
  vkds_resource_info ri;
  ck_assert_vkds(vkds_resource_get_info(vkds_context_resource(ctx, 0), &ri));
  ck_assert_uint_eq(seen_hints.data_devices, 1u << ri.device_index);
  vkds_policy_release(hp);
  vkds_kernel_destroy(k);
  vkds_buffer_destroy(x);
  vkds_buffer_destroy(y);
  close_all();
}
END_TEST

/* A launch runs on its buffers' device: every built-in policy over two VkDevices picks
 * among that device's queues (round robin sent every other launch to the other device,
 * WRONG_DEVICE, a README probe); what cannot run there is refused by name, nothing run. */
static vkds_result no_work(void *user, const vkds_task *task, void **wait_object) {
  (void)user, (void)task, (void)wait_object;
  return VKDS_SUCCESS;
}
static vkds_result select_first(vkds_policy *p, const vkds_task_info *hints, uint32_t *index) {
  (void)p, (void)hints;
  *index = 0;
  return VKDS_SUCCESS;
}
START_TEST(launches_run_on_their_buffers_device) {
  vkds_context_info info = harness_info();
  info.devices_per_physical = 2;
  ck_assert_vkds(vkds_context_create(&info, &ctx));
  vkds_resource *r0 = harness_device_resource(ctx, 0), *r1 = harness_device_resource(ctx, 1);
  ck_assert_ptr_nonnull(r1);
  vkds_kernel *k;
  ck_assert_vkds(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = SAXPY, .args = SAXPY_ARGS}, &k));
  enum { N = 1000, LAUNCHES = 6 };
  vkds_buffer *x, *y, *near;
  ck_assert_vkds(vkds_buffer_create(r1, &(vkds_buffer_info){.size = N * 4, .memory = VKDS_MEMORY_MAPPED}, &x));
  ck_assert_vkds(vkds_buffer_create(r1, &(vkds_buffer_info){.size = N * 4, .memory = VKDS_MEMORY_MAPPED}, &y));
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = N * 4, .memory = VKDS_MEMORY_MAPPED}, &near));
  float *xs = vkds_buffer_map(x), *ys = vkds_buffer_map(y);
  for (uint32_t i = 0; i < N; ++i) xs[i] = (float)(i % 7), ys[i] = 1.0f;
  saxpy_args a = {.n = N, .a = 1.0f, .x = vkds_view_of(x), .y = vkds_view_of(y)};
  const vkds_launch_info li = {.global = {N}, .args = &a};
  static const vkds_policy_kind kinds[] = {VKDS_POLICY_ROUND_ROBIN, VKDS_POLICY_DYNAMIC_LOAD, VKDS_POLICY_AUTO_TUNE,
                                           VKDS_POLICY_EARLIEST_FINISH};
  uint32_t runs = 0;
  for (size_t p = 0; p < sizeof kinds / sizeof *kinds; ++p) {
    vkds_policy *any;
    ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = kinds[p], .resources = {.context = ctx}}, &any));
    for (int l = 0; l < LAUNCHES; ++l, ++runs) {
      vkds_submission *s;
      ck_assert_msg(vkds_launch(any, k, &li, &s) == VKDS_SUCCESS, "%s, launch %d: %s", vkds_policy_name(any), l,
                    vkds_last_error_message());
      ck_assert_vkds(vkds_submission_wait(s));
      vkds_submission_release(s);
    }
    for (uint32_t i = 0; i < vkds_context_resource_count(ctx); ++i) {
      vkds_policy_resource_stats st;
      ck_assert_vkds(vkds_policy_get_resource_stats(any, i, &st));
      vkds_resource_info ri;
      ck_assert_vkds(vkds_resource_get_info(vkds_context_resource(ctx, i), &ri));
      if (ri.device_index != 1) ck_assert_msg(st.selections == 0, "%s picked device %u", vkds_policy_name(any), ri.device_index);
    }
    vkds_policy_release(any);
  }
  for (uint32_t i = 0; i < N; ++i) ck_assert_float_eq(ys[i], 1.0f + (float)runs * (float)(i % 7));

  /* what cannot run: nothing is submitted (y is unchanged) */
  vkds_policy *on0, *fixed0, *mine;
  void *only0[] = {r0};
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_ROUND_ROBIN, .resources = {.resource_count = 1, .resources = only0}}, &on0));
  uint32_t index0 = 0;
  while (vkds_context_resource(ctx, index0) != r0) ++index0;
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .fixed_index = index0, .resources = {.context = ctx}}, &fixed0));
  vkds_policy_ops ops = {.version = VKDS_POLICY_OPS_VERSION, .name = "first", .select = select_first};
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.ops = &ops, .resources = {.context = ctx}}, &mine));
  ck_assert_int_eq(vkds_launch(on0, k, &li, NULL), VKDS_ERROR_WRONG_DEVICE);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "no resource on the task's devices"));
  ck_assert_int_eq(vkds_launch(fixed0, k, &li, NULL), VKDS_ERROR_WRONG_DEVICE);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "runs only on devices"));
  if (vkds_context_resource(ctx, 0) == r0) ck_assert_int_eq(vkds_launch(mine, k, &li, NULL), VKDS_ERROR_WRONG_DEVICE);
  saxpy_args mixed = {.n = N, .a = 1.0f, .x = vkds_view_of(near), .y = vkds_view_of(y)};
  ck_assert_int_eq(vkds_launch(mine, k, &(vkds_launch_info){.global = {N}, .args = &mixed}, NULL), VKDS_ERROR_WRONG_DEVICE);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "buffers of several devices"));
  /* a selection made for other hints is refused for a task of another device */
  vkds_selection *sel;
  ck_assert_vkds(vkds_select(fixed0, NULL, &sel));
  ck_assert_int_eq(vkds_selection_submit(sel, &(vkds_task_info){.fn = no_work, .only_devices = 1u << 1}, NULL),
                   VKDS_ERROR_WRONG_DEVICE);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "is on device 0"));
  vkds_selection_release(sel);
  /* a plain task's only_devices is named as such (the message spoke of a launch's
   * buffers: a multi-device probe) */
  ck_assert_int_eq(vkds_submit(on0, &(vkds_task_info){.fn = no_work, .only_devices = 1u << 1}, NULL),
                   VKDS_ERROR_WRONG_DEVICE);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "only_devices 0x2"));
  ck_assert_vkds(vkds_policy_wait_all(mine, UINT64_MAX));
  for (uint32_t i = 0; i < N; ++i) ck_assert_float_eq(ys[i], 1.0f + (float)runs * (float)(i % 7));
  /* the policy's own counts are untouched by the refused picks */
  vkds_policy_resource_stats st;
  ck_assert_vkds(vkds_policy_get_resource_stats(fixed0, index0, &st));
  ck_assert_uint_eq(st.in_flight, 0);
  vkds_policy_release(on0), vkds_policy_release(fixed0), vkds_policy_release(mine);
  vkds_kernel_destroy(k);
  vkds_buffer_destroy(x), vkds_buffer_destroy(y), vkds_buffer_destroy(near);
  vkds_context_destroy(ctx);
}
END_TEST

/* Records one dispatch into a command buffer of the test's own on resource 0, which is
 * then freed unsubmitted: what vkds_cmd_dispatch said. */
static vkds_result record_only(vkds_kernel *k, const vkds_launch_info *li) {
  app_cmd ac = {0};
  app_cmd_begin(&ac, vkds_context_resource(ctx, 0));
  vkds_result r = vkds_cmd_dispatch(ac.cmd, ac.res, k, li);
  app_cmd_destroy(&ac);
  return r;
}

START_TEST(range_types) {
  open_all();
  vkds_kernel *k32, *k64, *ku;
  ck_assert_vkds(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = SAXPY, .args = SAXPY_ARGS, .range_type = VKDS_RANGE_I32}, &k32));
  ck_assert_vkds(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = SAXPY, .args = SAXPY_ARGS}, &ku));
  ck_assert_vkds(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = SAXPY, .args = SAXPY_ARGS, .range_type = VKDS_RANGE_U64}, &k64));
  vkds_buffer *x = mapped(4096), *y = mapped(4096);
  saxpy_args a = {.n = 0, .a = 1.0f, .x = vkds_view_of(x), .y = vkds_view_of(y)}; /* n = 0: no work-item writes */
  vkds_submission *s = (vkds_submission *)&a;
  ck_assert_int_eq(vkds_launch(pol, k32, &(vkds_launch_info){.global = {1ull << 31}, .args = &a}, &s), VKDS_ERROR_ND_RANGE);
  ck_assert_ptr_null(s);
  ck_assert_int_eq(vkds_launch(pol, k32, &(vkds_launch_info){.global = {1 << 16, 1 << 15}, .args = &a}, &s), VKDS_ERROR_ND_RANGE);
  ck_assert_int_eq(vkds_launch(pol, ku, &(vkds_launch_info){.global = {1ull << 32}, .args = &a}, &s), VKDS_ERROR_ND_RANGE);
  vkds_policy_resource_stats st;
  ck_assert_vkds(vkds_policy_get_resource_stats(pol, 0, &st));
  ck_assert_uint_eq(st.selections, 0); /* nothing was even selected */
  /* near 2^64 the group count wrapped to 0: nothing ran and the launch said success
   * (found by a hostile-input probe); that many groups are past what a launch records */
  ck_assert_int_eq(vkds_launch(pol, k64, &(vkds_launch_info){.global = {UINT64_MAX}, .args = &a}, &s),
                   VKDS_ERROR_LIMIT_EXCEEDED);
  ck_assert_int_eq(vkds_launch(pol, k64, &(vkds_launch_info){.global = {1, UINT64_MAX - 30}, .args = &a}, &s),
                   VKDS_ERROR_ND_RANGE); /* (y is 32-bit: below) */
  /* within range: recorded (into a command buffer of the test's, never submitted:
   * lavapipe took 7 s to run the 2^31 work-items, 36 s under ASan, and with n = 0 the
   * run shows nothing the recording does not) and run (every work-item sees n = 0) */
  ck_assert_vkds(record_only(k32, &(vkds_launch_info){.global = {(1ull << 31) - 64}, .args = &a, .max_groups = 65535}));
  ck_assert_int_eq(record_only(k32, &(vkds_launch_info){.global = {1ull << 31}, .args = &a}), VKDS_ERROR_ND_RANGE);
  launch_wait(k32, &(vkds_launch_info){.global = {(1ull << 20) - 64}, .args = &a, .max_groups = 15});
  launch_wait(k64, &(vkds_launch_info){.global = {1ull << 20}, .args = &a});
  /* The groups' padding past global must not wrap an index onto a real work-item (a
   * kernels probe: 2^32 - 1 items of a U32 kernel in groups of 192 covered 2^32 + 128,
   * and indices 0-127 ran twice): groups of 192 (not a power of two) and 2D groups */
  char wide[sizeof SAXPY + 16];
  snprintf(wide, sizeof wide, "%s", SAXPY);
  memcpy(strstr(wide, "local_size_x = 64"), "local_size_x =192", 17);
  vkds_kernel *w32, *wu, *w64;
  ck_assert_vkds(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = wide, .args = SAXPY_ARGS, .range_type = VKDS_RANGE_I32}, &w32));
  ck_assert_vkds(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = wide, .args = SAXPY_ARGS}, &wu));
  ck_assert_vkds(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = wide, .args = SAXPY_ARGS, .range_type = VKDS_RANGE_U64}, &w64));
  ck_assert_int_eq(vkds_launch(pol, wu, &(vkds_launch_info){.global = {UINT32_MAX}, .args = &a}, &s), VKDS_ERROR_ND_RANGE);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "cover 4294967424"));
  ck_assert_int_eq(record_only(wu, &(vkds_launch_info){.global = {4294967232ull + 1}, .args = &a}), VKDS_ERROR_ND_RANGE);
  ck_assert_vkds(record_only(wu, &(vkds_launch_info){.global = {4294967232ull}, .args = &a})); /* 2^32 - 64: fits */
  ck_assert_int_eq(record_only(w32, &(vkds_launch_info){.global = {INT32_MAX}, .args = &a}), VKDS_ERROR_ND_RANGE);
  ck_assert_vkds(record_only(w32, &(vkds_launch_info){.global = {(1ull << 31) - 128}, .args = &a, .max_groups = 65535}));
  ck_assert_vkds(record_only(w64, &(vkds_launch_info){.global = {1ull << 33}, .args = &a})); /* x is 64-bit */
  /* y and z are 32-bit in every range type (vkds_global_id()) */
  ck_assert_int_eq(vkds_launch(pol, w64, &(vkds_launch_info){.global = {1, (1ull << 32) + 1024}, .args = &a}, &s),
                   VKDS_ERROR_ND_RANGE);
  ck_assert_int_eq(vkds_launch(pol, w64, &(vkds_launch_info){.global = {1, 1, (1ull << 32) + 1}, .args = &a}, &s),
                   VKDS_ERROR_ND_RANGE);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "in z"));
  ck_assert_ptr_null(s);
  vkds_kernel_destroy(w32);
  vkds_kernel_destroy(wu);
  vkds_kernel_destroy(w64);
  vkds_kernel_destroy(k32);
  vkds_kernel_destroy(ku);
  vkds_kernel_destroy(k64);
  vkds_buffer_destroy(x);
  vkds_buffer_destroy(y);
  close_all();
}
END_TEST

/* ---- embedding: the application's own command buffer ---- */

START_TEST(record_into_my_command_buffer) {
  open_all();
  vkds_kernel *k;
  ck_assert_vkds(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = SAXPY, .args = SAXPY_ARGS}, &k));
  vkds_resource *res = vkds_context_resource(ctx, 0);
  vkds_resource_info ri;
  ck_assert_vkds(vkds_resource_get_info(res, &ri));
  VkDevice dev;
  VkQueue queue;
  ck_assert_vkds(vkds_resource_vk_handles(res, NULL, &dev, &queue));
  VkCommandPool pool;
  VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, .queueFamilyIndex = ri.queue_family};
  ck_assert_int_eq(vkCreateCommandPool(dev, &pci, NULL, &pool), VK_SUCCESS);
  VkCommandBuffer cmd;
  VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = pool,
                                    .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
  ck_assert_int_eq(vkAllocateCommandBuffers(dev, &ai, &cmd), VK_SUCCESS);
  vkds_buffer *x = mapped(1000 * 4), *y = mapped(1000 * 4);
  float *ys = vkds_buffer_map(y), *xs = vkds_buffer_map(x);
  for (int i = 0; i < 1000; ++i) xs[i] = 1.0f, ys[i] = (float)i;
  saxpy_args a = {.n = 1000, .a = 3.0f, .x = vkds_view_of(x), .y = vkds_view_of(y)};
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  vkBeginCommandBuffer(cmd, &bi);
  ck_assert_vkds(vkds_cmd_dispatch(cmd, res, k, &(vkds_launch_info){.global = {1000}, .args = &a}));
  VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                        .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
  vkEndCommandBuffer(cmd);
  VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cmd};
  vkds_resource_lock_queue(res);
  ck_assert_int_eq(vkQueueSubmit(queue, 1, &si, VK_NULL_HANDLE), VK_SUCCESS);
  ck_assert_int_eq(vkQueueWaitIdle(queue), VK_SUCCESS);
  vkds_resource_unlock_queue(res);
  for (int i = 0; i < 1000; ++i) harness_expect_float_eq(ys[i], (float)i + 3.0f);
  vkDestroyCommandPool(dev, pool, NULL);
  vkds_kernel_destroy(k);
  vkds_buffer_destroy(x);
  vkds_buffer_destroy(y);
  close_all();
}
END_TEST

/* ---- bad input ---- */

START_TEST(bad_input_is_named) {
  open_all();
  /* invalid SPIR-V: the validator's message comes back */
  uint32_t junk[16] = {0x07230203, 0x00010500, 0, 50, 0};
  vkds_kernel *k = NULL;
  ck_assert_int_eq(vkds_kernel_create(ctx, &(vkds_kernel_info){.spirv = junk, .spirv_size = sizeof junk}, &k),
                   VKDS_ERROR_INVALID_SPIRV);
  ck_assert_ptr_null(k);
  ck_assert_str_ne(vkds_last_error_message(), "");
  ck_assert_int_eq(vkds_kernel_create(ctx, &(vkds_kernel_info){.spirv = junk, .spirv_size = 6}, &k), VKDS_ERROR_INVALID_SPIRV);
  ck_assert_int_eq(vkds_kernel_create(ctx, &(vkds_kernel_info){0}, &k), VKDS_ERROR_INVALID_ARGUMENT);
  /* a compile error names its line */
  const char *broken = "#version 450\nlayout(local_size_x = 1) in;\nvoid main() {\n  int x = ;\n}\n";
  ck_assert_int_eq(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = broken}, &k), VKDS_ERROR_COMPILE);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), ":4:"));
  /* an entry point the module does not have: the caller's name, not a bad module */
  ck_assert_int_eq(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = SAXPY, .args = SAXPY_ARGS, .entry = "saxpy"}, &k),
                   VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_msg(strstr(vkds_last_error_message(), "\"saxpy\"") && strstr(vkds_last_error_message(), "main"), "%s",
                vkds_last_error_message());
  ck_assert_ptr_null(k);
  /* descriptions that do not match the shader */
  vkds_arg wrong_type[] = {{.kind = VKDS_ARG_INT}, {.kind = VKDS_ARG_FLOAT}, {.kind = VKDS_ARG_VIEW}, {.kind = VKDS_ARG_VIEW, .offset = 24}, {0}};
  ck_assert_int_eq(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = SAXPY, .args = wrong_type}, &k), VKDS_ERROR_ARGUMENT_MISMATCH);
  /* the shader's member in the description's words (its internal type number read as
   * VKDS_ARG_FLOAT, an unsigned member shown as "type 3": a probe) */
  ck_assert_msg(strstr(vkds_last_error_message(), "(int: int32 x1)") && strstr(vkds_last_error_message(), "'n' (uint32 x1)"),
                "%s", vkds_last_error_message());
  vkds_arg too_few[] = {{.kind = VKDS_ARG_UINT}, {.kind = VKDS_ARG_FLOAT}, {.kind = VKDS_ARG_VIEW}, {0}};
  ck_assert_int_eq(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = SAXPY, .args = too_few}, &k), VKDS_ERROR_ARGUMENT_MISMATCH);
  vkds_arg not_view[] = {{.kind = VKDS_ARG_UINT}, {.kind = VKDS_ARG_FLOAT}, {.kind = VKDS_ARG_UINT}, {.kind = VKDS_ARG_VIEW}, {0}};
  ck_assert_int_eq(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = SAXPY, .args = not_view}, &k), VKDS_ERROR_ARGUMENT_MISMATCH);
  vkds_arg bad_binding[] = {{.kind = VKDS_ARG_BINDING, .binding = 7}, {.kind = VKDS_ARG_UINT}, {.kind = VKDS_ARG_UINT, .components = 2}, {0}};
  ck_assert_int_eq(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = BOUND, .args = bad_binding}, &k), VKDS_ERROR_ARGUMENT_MISMATCH);
  /* the shader's binding 1 described by nobody: it would run unbound */
  vkds_arg no_binding[] = {{.kind = VKDS_ARG_UINT}, {.kind = VKDS_ARG_UINT, .components = 2}, {0}};
  ck_assert_int_eq(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = BOUND, .args = no_binding}, &k), VKDS_ERROR_ARGUMENT_MISMATCH);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "binding 1"));
  ck_assert_int_eq(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = SAXPY, .args = SAXPY_ARGS, .range_type = 9}, &k),
                   VKDS_ERROR_INVALID_ARGUMENT);
  /* descriptions no shader could match: invalid, not a mismatch (a kernels probe) */
  vkds_arg odd_bits[] = {{.kind = VKDS_ARG_UINT, .bits = 12}, {.kind = VKDS_ARG_FLOAT}, {.kind = VKDS_ARG_VIEW}, {.kind = VKDS_ARG_VIEW, .offset = 24}, {0}};
  ck_assert_int_eq(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = SAXPY, .args = odd_bits}, &k), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "12 bits"));
  vkds_arg five[] = {{.kind = VKDS_ARG_UINT}, {.kind = VKDS_ARG_FLOAT, .components = 5}, {.kind = VKDS_ARG_VIEW}, {.kind = VKDS_ARG_VIEW, .offset = 24}, {0}};
  ck_assert_int_eq(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = SAXPY, .args = five}, &k), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "5 components"));
  vkds_arg hollow[] = {{.kind = VKDS_ARG_STRUCT}, {0}}; /* (was a mismatch, "the description 0": a probe) */
  ck_assert_int_eq(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = SAXPY, .args = hollow}, &k), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "a struct without members"));
  /* launches */
  ck_assert_vkds(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = SAXPY, .args = SAXPY_ARGS}, &k));
  vkds_buffer *x = mapped(64);
  saxpy_args a = {.n = 1, .a = 1, .x = vkds_view_of(x), .y = {NULL, 0, 0}};
  ck_assert_int_eq(vkds_launch(pol, k, &(vkds_launch_info){.global = {1}, .args = &a}, NULL), VKDS_ERROR_INVALID_ARGUMENT);
  a.y = (vkds_view){x, 128, 0}; /* outside the buffer */
  ck_assert_int_eq(vkds_launch(pol, k, &(vkds_launch_info){.global = {1}, .args = &a}, NULL), VKDS_ERROR_INVALID_ARGUMENT);
  a.y = (vkds_view){x, 2, 0}; /* not 4-byte aligned: was taken, and read from byte 2 (a probe) */
  ck_assert_int_eq(vkds_launch(pol, k, &(vkds_launch_info){.global = {1}, .args = &a}, NULL), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "not a multiple of 4"));
  a.y = vkds_view_of(x);
  ck_assert_int_eq(vkds_launch(pol, k, &(vkds_launch_info){.global = {0}, .args = &a}, NULL), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_launch(pol, k, &(vkds_launch_info){.global = {1}}, NULL), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_launch(pol, k, NULL, NULL), VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(vkds_launch(pol, NULL, &(vkds_launch_info){.global = {1}, .args = &a}, NULL), VKDS_ERROR_INVALID_ARGUMENT);
  /* a kernel of another context, a buffer of another context */
  vkds_context *other = harness_context();
  vkds_kernel *foreign;
  ck_assert_vkds(vkds_kernel_from_glsl(other, &(vkds_glsl_info){.source = SAXPY, .args = SAXPY_ARGS}, &foreign));
  ck_assert_int_eq(vkds_launch(pol, foreign, &(vkds_launch_info){.global = {1}, .args = &a}, NULL), VKDS_ERROR_WRONG_CONTEXT);
  vkds_buffer *elsewhere;
  ck_assert_vkds(vkds_buffer_create(vkds_context_resource(other, 0), &(vkds_buffer_info){.size = 64, .memory = VKDS_MEMORY_MAPPED}, &elsewhere));
  a.x = vkds_view_of(elsewhere);
  ck_assert_int_eq(vkds_launch(pol, k, &(vkds_launch_info){.global = {1}, .args = &a}, NULL), VKDS_ERROR_WRONG_CONTEXT);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "another context"));
  vkds_buffer_destroy(elsewhere);
  vkds_kernel_destroy(foreign);
  vkds_context_destroy(other);
  /* a local size over the device's limit: a named error at launch */
  vkds_kernel *huge;
  ck_assert_vkds(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = "#version 450\nlayout(local_size_x = 1024, local_size_y = 2) in;\nvoid main() {}\n"}, &huge));
  ck_assert_int_eq(vkds_launch(pol, huge, &(vkds_launch_info){.global = {1}}, NULL), VKDS_ERROR_LIMIT_EXCEEDED);
  /* the next launch says why too (it said "see the first error") */
  ck_assert_int_eq(vkds_launch(pol, huge, &(vkds_launch_info){.global = {1}}, NULL), VKDS_ERROR_LIMIT_EXCEEDED);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "invocations per work group"));
  vkds_kernel_destroy(huge);
  /* shared variables over the device's limit: a named error at launch, not a
   * validation error */
  vkds_kernel *greedy;
  ck_assert_vkds(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = "#version 450\nlayout(local_size_x = 64) in;\n"
      "shared uint big[1u << 20];\nlayout(std430, binding = 0) buffer B { uint v[]; };\n"
      "void main() { big[gl_LocalInvocationID.x] = 1u; barrier(); v[0] = big[63]; }\n",
      .args = (vkds_arg[]){{.kind = VKDS_ARG_BINDING, .binding = 0}, {0}}}, &greedy));
  vkds_buffer *gb = mapped(64);
  vkds_view gv = vkds_view_of(gb);
  ck_assert_int_eq(vkds_launch(pol, greedy, &(vkds_launch_info){.global = {64}, .args = &gv}, NULL), VKDS_ERROR_LIMIT_EXCEEDED);
  ck_assert_ptr_nonnull(strstr(vkds_last_error_message(), "shared"));
  vkds_kernel_destroy(greedy);
  vkds_buffer_destroy(gb);
  /* glslang takes the local sizes the devices take (its own defaults stop z at 64); on a
   * device that stops z at 64 itself (NVIDIA's), 100 is a compile error */
  vkds_kernel *deep = NULL;
  vkds_glsl_info deep_info = {.source = "#version 450\nlayout(local_size_x = 1, local_size_z = 100) in;\nvoid main() {}\n"};
  uint32_t z = 0; /* the largest any device takes: glslang's limit */
  for (uint32_t i = 0; i < vkds_context_resource_count(ctx); ++i) {
    vkds_resource_info ri;
    ck_assert_vkds(vkds_resource_get_info(vkds_context_resource(ctx, i), &ri));
    z = ri.max_work_group_size[2] > z ? ri.max_work_group_size[2] : z;
  }
  if (z >= 100) { /* (every device takes it: the tests run on lavapipe, or on the GPUs alone) */
    ck_assert_vkds(vkds_kernel_from_glsl(ctx, &deep_info, &deep));
    ck_assert_vkds(vkds_launch(pol, deep, &(vkds_launch_info){.global = {1, 1, 100}}, NULL));
    ck_assert_vkds(vkds_policy_wait_all(pol, UINT64_MAX));
    vkds_kernel_destroy(deep);
  } else {
    ck_assert_int_eq(vkds_kernel_from_glsl(ctx, &deep_info, &deep), VKDS_ERROR_COMPILE);
    ck_assert_ptr_null(deep);
  }
  ck_assert_vkds(vkds_policy_wait_all(pol, UINT64_MAX));
  vkds_kernel_destroy(k);
  vkds_buffer_destroy(x);
  ck_assert_int_eq(vkds_buffer_create(vkds_context_resource(ctx, 0), &(vkds_buffer_info){.size = 0}, &x), VKDS_ERROR_INVALID_ARGUMENT);
  close_all();
}
END_TEST

/* ---- what the check of a description says at creation (fuzz/fuzz_args.c) ---- */

static const char PAIRS[] =
    "#version 450\n"
    "#include \"vkds.glsl\"\n"
    "layout(local_size_x = 1) in;\n"
    "VKDS_VIEW(float, 4, Floats)\n"
    "struct Pair { int a; float b; };\n"
    "#define VKDS_ARGS Floats out_; Pair pairs[2];\n"
    "VKDS_DECLARE_ARGS\n"
    "void main() { Floats_store(VKDS_ARG(out_), 0ul, float(VKDS_ARG(pairs)[1].a) + VKDS_ARG(pairs)[0].b); }\n";

typedef struct pair {
  int32_t a;
  float b;
} pair;

typedef struct pairs_args {
  vkds_view out;
  pair pairs[2];
} pairs_args;

static const vkds_arg PAIR[] = {
    {.kind = VKDS_ARG_INT, .offset = offsetof(pair, a)},
    {.kind = VKDS_ARG_FLOAT, .offset = offsetof(pair, b)},
    {0},
};

START_TEST(descriptions_are_refused_at_creation_by_name) {
  open_all();
  vkds_kernel *k = NULL;
  /* an array of structs without its stride could never be packed: the launch used to be
   * the first to say so; now the kernel is refused */
  vkds_arg no_stride[] = {{.kind = VKDS_ARG_VIEW, .offset = offsetof(pairs_args, out)},
                          {.kind = VKDS_ARG_STRUCT, .offset = offsetof(pairs_args, pairs), .count = 2, .members = PAIR,
                           .name = "pairs"},
                          {0}};
  ck_assert_int_eq(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = PAIRS, .args = no_stride}, &k),
                   VKDS_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_null(k);
  ck_assert_msg(strstr(vkds_last_error_message(), "(pairs): an array of structs needs its stride"), "%s",
                vkds_last_error_message());
  /* with it, the kernel runs and each element is packed from its own place */
  no_stride[1].stride = sizeof(pair);
  ck_assert_vkds(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = PAIRS, .args = no_stride}, &k));
  vkds_buffer *out = mapped(16);
  pairs_args a = {.out = vkds_view_of(out), .pairs = {{.a = 1, .b = 0.5f}, {.a = 40, .b = 9.0f}}};
  launch_wait(k, &(vkds_launch_info){.global = {1}, .args = &a});
  ck_assert_float_eq(((const float *)vkds_buffer_map(out))[0], 40.5f);
  vkds_kernel_destroy(k);
  vkds_buffer_destroy(out);
  /* a mismatch names the member as the description does (names used to be dropped
   * before the check) */
  vkds_arg misnamed[] = {{.kind = VKDS_ARG_INT, .name = "count"}, {.kind = VKDS_ARG_FLOAT, .name = "alpha"},
                         {.kind = VKDS_ARG_VIEW}, {.kind = VKDS_ARG_VIEW}, {0}};
  ck_assert_int_eq(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = SAXPY, .args = misnamed}, &k),
                   VKDS_ERROR_ARGUMENT_MISMATCH);
  ck_assert_msg(strstr(vkds_last_error_message(), "(count: int32"), "%s", vkds_last_error_message());
  /* a buffer in descriptor set 1 can never be bound: the kernel is refused, not each of
   * its launches (it was made, and every launch was UNSUPPORTED; a new-user probe) */
  static const char set1[] = "#version 450\n"
                             "layout(local_size_x = 1) in;\n"
                             "layout(set = 1, binding = 0) buffer B { uint b[]; };\n"
                             "void main() { b[0] = 1u; }\n";
  vkds_arg bound[] = {{.kind = VKDS_ARG_BINDING, .binding = 0}, {0}};
  ck_assert_int_eq(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = set1, .args = bound, .name = "set1"}, &k),
                   VKDS_ERROR_UNSUPPORTED);
  ck_assert_ptr_null(k);
  ck_assert_msg(strstr(vkds_last_error_message(), "kernel 'set1': binding 0 ('B') is in descriptor set 1; vkds binds "
                                                  "set 0 only"), "%s", vkds_last_error_message());
  close_all();
}
END_TEST

/* ---- arguments larger than push constants: spilled to a buffer ---- */

static const char BIG[] =
    "#version 450\n"
    "#include \"vkds.glsl\"\n"
    "layout(local_size_x = 40) in;\n"
    "VKDS_VIEW(float, 4, Floats)\n"
    "#define VKDS_ARGS Floats out_; vec4 big[40]; uint tag;\n"
    "VKDS_DECLARE_ARGS\n"
    "void main() {\n"
    "  uint i = uint(vkds_global_index());\n"
    "  vec4 v = VKDS_ARG(big)[i];\n"
    "  Floats_store(VKDS_ARG(out_), i, v.x + v.y + v.z + v.w + float(VKDS_ARG(tag)));\n"
    "}\n";

typedef struct big_args {
  vkds_view out;
  float big[40][4];
  uint32_t tag;
} big_args;

static const vkds_arg BIG_ARGS[] = {
    {.kind = VKDS_ARG_VIEW, .offset = offsetof(big_args, out)},
    {.kind = VKDS_ARG_FLOAT, .offset = offsetof(big_args, big), .components = 4, .count = 40},
    {.kind = VKDS_ARG_UINT, .offset = offsetof(big_args, tag)},
    {0},
};

START_TEST(arguments_larger_than_push_constants) {
  open_all();
  vkds_kernel *k;
  ck_assert_vkds(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = BIG, .args = BIG_ARGS, .name = "big"}, &k));
  vkds_kernel_reflection kr;
  ck_assert_vkds(vkds_kernel_reflect(k, &kr));
  vkds_resource_info ri;
  ck_assert_vkds(vkds_resource_get_info(vkds_context_resource(ctx, 0), &ri));
  ck_assert_uint_le(kr.push_constant_size, ri.max_push_constants_size); /* 640+ bytes did not go there */
  vkds_buffer *out = mapped(40 * 4);
  static big_args a; /* 656 bytes */
  a.out = vkds_view_of(out);
  for (int rep = 0; rep < 3; ++rep) { /* several launches, each with its own values in flight */
    for (int i = 0; i < 40; ++i)
      for (int c = 0; c < 4; ++c) a.big[i][c] = (float)(i * 4 + c + rep);
    a.tag = 1000u * (uint32_t)rep;
    launch_wait(k, &(vkds_launch_info){.global = {40}, .args = &a});
    const float *o = vkds_buffer_map(out);
    for (int i = 0; i < 40; ++i) ck_assert_float_eq(o[i], (float)(16 * i + 6 + 4 * rep) + 1000.0f * (float)rep);
  }
  /* recording a spilled kernel into a foreign command buffer is a named error */
  ck_assert_int_eq(vkds_cmd_dispatch((VkCommandBuffer)(uintptr_t)1, vkds_context_resource(ctx, 0), k,
                                     &(vkds_launch_info){.global = {40}, .args = &a}),
                   VKDS_ERROR_UNSUPPORTED);
  vkds_kernel_destroy(k);
  vkds_buffer_destroy(out);
  close_all();
}
END_TEST

/* ---- VKDS_DEBUG: views check their bounds ---- */

static const char OOB[] =
    "#version 450\n"
    "#include \"vkds.glsl\"\n"
    "layout(local_size_x = 64) in;\n"
    "VKDS_VIEW(uint, 4, Words)\n"
    "#define VKDS_ARGS Words w;\n"
    "VKDS_DECLARE_ARGS\n"
    "void main() { uint64_t i = vkds_global_index(); Words_store(VKDS_ARG(w), i, 7u + Words_load(VKDS_ARG(w), i + 1000)); }\n";

START_TEST(debug_views_check_bounds) {
  open_all();
  vkds_kernel *k;
  const vkds_arg args[] = {{.kind = VKDS_ARG_VIEW}, {0}};
  ck_assert_vkds(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = OOB, .args = args, .debug = true}, &k));
  vkds_buffer *b = mapped(4096);
  uint32_t *w = vkds_buffer_map(b);
  for (int i = 0; i < 1024; ++i) w[i] = 0xdeadbeef;
  vkds_view v = {b, 0, 16 * 4}; /* the kernel sees 16 words; 64 invocations run */
  launch_wait(k, &(vkds_launch_info){.global = {64}, .args = &v});
  for (int i = 0; i < 16; ++i) ck_assert_uint_eq(w[i], 7); /* loads past the view read 0 */
  for (int i = 16; i < 1024; ++i) harness_expect_uint_eq(w[i], 0xdeadbeef); /* stores past it do nothing */
  vkds_kernel_destroy(k);
  vkds_buffer_destroy(b);
  close_all();
}
END_TEST

/* ---- the pipeline cache on disk ---- */

static int cache_dir_warnings, cache_save_warnings, cache_damaged_warnings;
static void cache_dir_log(void *user, vkds_log_level level, vkds_log_source source, const char *message) {
  harness_log(user, level, source, message);
  if (level == VKDS_LOG_WARN && strstr(message, "cannot save")) ++cache_save_warnings;
  if (level == VKDS_LOG_WARN && strstr(message, "is damaged (no Vulkan pipeline cache header)")) ++cache_damaged_warnings;
  if (level == VKDS_LOG_WARN &&
      (strstr(message, "cannot be a folder (Not a directory)") || strstr(message, "cannot be a folder (File name too long)")))
    ++cache_dir_warnings;
}

/* A context over cache folder `dir` compiles SAXPY and runs it on four elements right
 * (its destroy saves the pipeline cache there). */
static void saxpy_runs_with_cache(const char *dir) {
  vkds_context_info info = harness_info();
  info.pipeline_cache_dir = dir;
  vkds_context *c;
  ck_assert_vkds(vkds_context_create(&info, &c));
  vkds_policy *p;
  ck_assert_vkds(vkds_policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = {.context = c}}, &p));
  vkds_kernel *k;
  ck_assert_vkds(vkds_kernel_from_glsl(c, &(vkds_glsl_info){.source = SAXPY, .args = SAXPY_ARGS}, &k));
  vkds_buffer *x, *y;
  vkds_resource *r0 = vkds_context_resource(c, 0);
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = 16, .memory = VKDS_MEMORY_MAPPED}, &x));
  ck_assert_vkds(vkds_buffer_create(r0, &(vkds_buffer_info){.size = 16, .memory = VKDS_MEMORY_MAPPED}, &y));
  float *xs = vkds_buffer_map(x), *ys = vkds_buffer_map(y);
  for (int i = 0; i < 4; ++i) xs[i] = (float)i, ys[i] = 10.0f;
  saxpy_args a = {.n = 4, .a = 2.0f, .x = vkds_view_of(x), .y = vkds_view_of(y)};
  ck_assert_vkds(vkds_launch(p, k, &(vkds_launch_info){.global = {4}, .args = &a}, NULL));
  ck_assert_vkds(vkds_policy_wait_all(p, UINT64_MAX));
  for (int i = 0; i < 4; ++i) ck_assert_float_eq(ys[i], 10.0f + 2.0f * (float)i);
  vkds_policy_release(p);
  vkds_kernel_destroy(k);
  vkds_buffer_destroy(x);
  vkds_buffer_destroy(y);
  vkds_context_destroy(c);
}

/* The folder is made (with its parents) where it is missing, and kept in the second
 * round; a path that cannot be a folder is said once, and the context still works. */
START_TEST(pipeline_cache_file) {
  char top[] = "/tmp/vkds-cache-XXXXXX", dir[64];
  ck_assert_ptr_nonnull(mkdtemp(top));
  snprintf(dir, sizeof dir, "%s/made/here", top);
  for (int round = 0; round < 2; ++round) {
    saxpy_runs_with_cache(dir);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "ls %s/vkds-pipelines-*.bin > /dev/null 2>&1", dir);
    ck_assert_int_eq(system(cmd), 0);
  }
  char file[80], cmd[512];
  /* damaged compiled modules are misses, compiled again (they were trusted: a changed
   * word ran, a broken one failed every later process with INVALID_SPIRV; a probe) */
  snprintf(cmd, sizeof cmd,
           "for f in %s/vkds-glsl-*.spv; do s=$(stat -c %%s $f); printf '\\377\\377\\377\\377' | "
           "dd of=$f bs=1 seek=$((s - 100)) conv=notrunc 2>/dev/null || exit 1; done", dir);
  ck_assert_int_eq(system(cmd), 0);
  saxpy_runs_with_cache(dir);
  /* and names taken by what is not a file: a FIFO (its open hung) and a folder (malloc
   * was asked for LONG_MAX bytes) */
  snprintf(cmd, sizeof cmd,
           "for f in %s/vkds-glsl-*.spv; do rm -f $f && mkfifo $f || exit 1; done; "
           "for f in %s/vkds-pipelines-*.bin; do rm -f $f && mkdir $f || exit 1; done", dir, dir);
  ck_assert_int_eq(system(cmd), 0);
  saxpy_runs_with_cache(dir);
  snprintf(file, sizeof file, "%s/a-file", top);
  snprintf(cmd, sizeof cmd, "touch %s", file);
  ck_assert_int_eq(system(cmd), 0);
  vkds_context_info info = harness_info();
  info.pipeline_cache_dir = file;
  info.log = cache_dir_log;
  vkds_context *c;
  ck_assert_vkds(vkds_context_create(&info, &c));
  ck_assert_int_eq(cache_dir_warnings, 1);
  vkds_kernel *k;
  ck_assert_vkds(vkds_kernel_from_glsl(c, &(vkds_glsl_info){.source = SAXPY, .args = SAXPY_ARGS}, &k));
  vkds_kernel_destroy(k);
  vkds_context_destroy(c);
  ck_assert_int_eq(cache_dir_warnings, 1);
  /* a folder too long for its files' names (five 190-byte parts): said once, in memory
   * only, nothing made (its files landed beside it, their names cut short) */
  char long_dir[1024];
  int at = snprintf(long_dir, sizeof long_dir, "%s/long", top);
  for (int part = 0; part < 5; ++part) {
    long_dir[at++] = '/';
    for (int i = 0; i < 190; ++i) long_dir[at++] = (char)('a' + part);
  }
  long_dir[at] = '\0';
  info.pipeline_cache_dir = long_dir;
  ck_assert_vkds(vkds_context_create(&info, &c));
  ck_assert_int_eq(cache_dir_warnings, 2);
  ck_assert_vkds(vkds_kernel_from_glsl(c, &(vkds_glsl_info){.source = SAXPY, .args = SAXPY_ARGS}, &k));
  vkds_kernel_destroy(k);
  vkds_context_destroy(c);
  snprintf(cmd, sizeof cmd, "test ! -e %s/long", top);
  ck_assert_int_eq(system(cmd), 0);
  /* a relative folder is the one it named when the context was made, whatever folder
   * the application moves to later (it was looked up again at every save: the files went
   * to the new folder, or failed there with a warning each; a probe) */
  char here[1024];
  ck_assert_ptr_nonnull(getcwd(here, sizeof here));
  ck_assert_int_eq(chdir(top), 0);
  info.pipeline_cache_dir = "relative";
  ck_assert_vkds(vkds_context_create(&info, &c));
  ck_assert_int_eq(chdir(here), 0);
  ck_assert_vkds(vkds_kernel_from_glsl(c, &(vkds_glsl_info){.source = SAXPY, .args = SAXPY_ARGS}, &k));
  vkds_kernel_destroy(k);
  vkds_context_destroy(c);
  ck_assert_int_eq(cache_save_warnings, 0);
  snprintf(cmd, sizeof cmd, "ls %s/relative/vkds-glsl-*.spv %s/relative/vkds-pipelines-*.bin > /dev/null 2>&1", top, top);
  ck_assert_int_eq(system(cmd), 0);
  /* a pipeline cache file with no Vulkan header is said to be damaged (it was "not for this
   * device"), and ignored */
  snprintf(cmd, sizeof cmd, "for f in %s/relative/vkds-pipelines-*.bin; do head -c 64 /dev/urandom > $f || exit 1; done", top);
  ck_assert_int_eq(system(cmd), 0);
  snprintf(file, sizeof file, "%s/relative", top);
  info.pipeline_cache_dir = file;
  ck_assert_vkds(vkds_context_create(&info, &c));
  ck_assert_int_eq(cache_damaged_warnings, 1);
  vkds_context_destroy(c);
  /* the folder removed while a context uses it: the kernels that cannot be saved are
   * said once, not each (19 warnings in a probe's run), and the pipeline cache's save at
   * the destroy once more */
  snprintf(file, sizeof file, "%s/removed", top);
  info.pipeline_cache_dir = file;
  ck_assert_vkds(vkds_context_create(&info, &c));
  snprintf(cmd, sizeof cmd, "rm -rf %s", file);
  ck_assert_int_eq(system(cmd), 0);
  int saves_before = cache_save_warnings;
  for (int variant = 0; variant < 3; ++variant) {
    char source[sizeof SAXPY + 32];
    snprintf(source, sizeof source, "%s// variant %d\n", SAXPY, variant);
    ck_assert_vkds(vkds_kernel_from_glsl(c, &(vkds_glsl_info){.source = source, .args = SAXPY_ARGS}, &k));
    vkds_kernel_destroy(k);
  }
  ck_assert_int_eq(cache_save_warnings, saves_before + 1);
  vkds_context_destroy(c);
  ck_assert_int_le(cache_save_warnings, saves_before + 2);
  snprintf(cmd, sizeof cmd, "rm -rf %s", top);
  ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* ---- launches on one queue run in order ---- */

static const char STEP[] =
    "#version 450\n"
    "#include \"vkds.glsl\"\n"
    "layout(local_size_x = 64) in;\n"
    "VKDS_VIEW(uint, 4, Words)\n"
    "#define VKDS_ARGS uint n; Words y;\n"
    "VKDS_DECLARE_ARGS\n"
    "void main() {\n"
    "  uint64_t i = vkds_global_index();\n"
    "  if (i < VKDS_ARG(n)) Words_store(VKDS_ARG(y), i, Words_load(VKDS_ARG(y), i) * 3u + 1u);\n"
    "}\n";

typedef struct step_args {
  uint32_t n;
  vkds_view y;
} step_args;

static vkds_result record_nothing(void *user, const vkds_task *task, void **wait_object) {
  (void)user, (void)task, (void)wait_object;
  return VKDS_SUCCESS;
}

/* Launches on one queue run in the order they were made, each after the writes of the
 * work before it (vkds's barriers, as around an algorithm call: a GPU may otherwise
 * overlap them; lavapipe runs them one after the other whatever, so the barriers are
 * counted too): a chain of read-modify-write launches, fire and forget, then one wait;
 * a launch after a task of another kind gets the queue's leading barrier, a launch
 * after a launch none (the first ended in vkds's full barrier). */
START_TEST(launches_run_in_order_on_their_queue) {
  ctx = harness_context();
  vkds_resource *r0 = vkds_context_resource(ctx, 0);
  ck_assert_vkds(vkds_policy_create(
      &(vkds_policy_info){.kind = VKDS_POLICY_FIXED, .resources = {.resource_count = 1, .resources = (void *[]){r0}}},
      &pol));
  static const vkds_arg desc[] = {{.kind = VKDS_ARG_UINT, .offset = offsetof(step_args, n), .name = "n"},
                                  {.kind = VKDS_ARG_VIEW, .offset = offsetof(step_args, y), .name = "y"},
                                  {0}};
  vkds_kernel *k;
  ck_assert_vkds(vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = STEP, .args = desc, .name = "step"}, &k));
  enum { N = 10000, CHAIN = 20 };
  vkds_buffer *y = mapped(N * 4);
  uint32_t *ys = vkds_buffer_map(y);
  for (uint32_t i = 0; i < N; ++i) ys[i] = i;
  step_args a = {.n = N, .y = vkds_view_of(y)};
  for (int c = 0; c < CHAIN; ++c) ck_assert_vkds(vkds_launch(pol, k, &(vkds_launch_info){.global = {N}, .args = &a}, NULL));
  ck_assert_vkds(vkds_policy_wait_all(pol, UINT64_MAX));
  for (uint32_t i = 0; i < N; ++i) {
    uint32_t want = i;
    for (int c = 0; c < CHAIN; ++c) want = want * 3u + 1u;
    ck_assert_uint_eq(ys[i], want);
  }
  ck_assert_vkds(vkds_submit_and_wait(pol, &(vkds_task_info){.fn = record_nothing})); /* another kind of task */
  uint64_t base = vkds__queue_lead_barriers(r0);
  launch_wait(k, &(vkds_launch_info){.global = {N}, .args = &a});
  ck_assert_uint_eq(vkds__queue_lead_barriers(r0) - base, 1);
  launch_wait(k, &(vkds_launch_info){.global = {N}, .args = &a});
  ck_assert_uint_eq(vkds__queue_lead_barriers(r0) - base, 1);
  vkds_kernel_destroy(k);
  vkds_buffer_destroy(y);
  close_all();
}
END_TEST

/* ---- threads ---- */

enum { COMPILERS = 8 };
static pthread_barrier_t compilers_ready;
static vkds_result compiled[COMPILERS];
static vkds_kernel *compiled_kernel[COMPILERS];

static void *compile_saxpy(void *arg) {
  int i = (int)(intptr_t)arg;
  pthread_barrier_wait(&compilers_ready);
  compiled[i] = vkds_kernel_from_glsl(ctx, &(vkds_glsl_info){.source = SAXPY, .args = SAXPY_ARGS}, &compiled_kernel[i]);
  return NULL;
}

/* One source asked for by 8 threads at once is compiled once: the others wait for that
 * compile and take its result (each compiled it, and each copy stayed cached, before:
 * a concurrency probe). */
START_TEST(one_source_from_many_threads_compiles_once) {
  open_all();
  pthread_t t[COMPILERS];
  pthread_barrier_init(&compilers_ready, NULL, COMPILERS);
  for (int i = 0; i < COMPILERS; ++i) ck_assert_int_eq(pthread_create(&t[i], NULL, compile_saxpy, (void *)(intptr_t)i), 0);
  for (int i = 0; i < COMPILERS; ++i) pthread_join(t[i], NULL);
  pthread_barrier_destroy(&compilers_ready);
  uint64_t compiles, hits;
  vkds_context_glsl_stats(ctx, &compiles, &hits);
  ck_assert_uint_eq(compiles, 1);
  ck_assert_uint_eq(hits, COMPILERS - 1);
  /* and every kernel works */
  enum { N = 1000 };
  vkds_buffer *x = mapped(N * 4), *y = mapped(N * 4);
  float *xs = vkds_buffer_map(x), *ys = vkds_buffer_map(y);
  for (int i = 0; i < N; ++i) xs[i] = (float)i;
  saxpy_args a = {.n = N, .a = 1.0f, .x = vkds_view_of(x), .y = vkds_view_of(y)};
  for (int i = 0; i < COMPILERS; ++i) {
    ck_assert_vkds(compiled[i]);
    launch_wait(compiled_kernel[i], &(vkds_launch_info){.global = {N}, .args = &a});
    vkds_kernel_destroy(compiled_kernel[i]);
  }
  for (int i = 0; i < N; ++i) harness_expect_float_eq(ys[i], (float)COMPILERS * (float)i);
  vkds_buffer_destroy(x);
  vkds_buffer_destroy(y);
  close_all();
}
END_TEST

int main(void) {
  Suite *s = suite_create("kernel");
  TCase *tc = harness_tcase("kernel");
  tcase_add_test(tc, saxpy_from_glsl);
  tcase_add_test(tc, launches_run_in_order_on_their_queue);
  tcase_add_test(tc, nested_struct_and_array_of_views);
  tcase_add_test(tc, descriptor_binding_and_vectors);
  tcase_add_test(tc, kernels_own_constants_and_bound_buffers);
  tcase_add_test(tc, launches_hint_their_buffers);
  tcase_add_test(tc, launches_run_on_their_buffers_device);
  tcase_add_test(tc, narrow_arguments);
  tcase_add_test(tc, range_types);
  tcase_add_test(tc, record_into_my_command_buffer);
  tcase_add_test(tc, bad_input_is_named);
  tcase_add_test(tc, pipeline_cache_file);
  tcase_add_test(tc, arguments_larger_than_push_constants);
  tcase_add_test(tc, debug_views_check_bounds);
  tcase_add_test(tc, descriptions_are_refused_at_creation_by_name);
  suite_add_tcase(s, tc);
  TCase *threads = harness_tcase("threads"); /* also run alone under TSan (tests/meson.build) */
  tcase_add_test(threads, one_source_from_many_threads_compiles_once);
  suite_add_tcase(s, threads);
  return harness_run(s);
}
