/* tools/vkds-info.c: what vkds sees on this machine, as a table or as JSON.
 *
 * Uses only the public API: the devices and queues printed are exactly the resources a
 * zero-initialised context gets, so VKDS_DEVICES and VKDS_VALIDATION apply as they
 * would to any application. */
#include <vkds/vkds.h>

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <vulkan/vulkan.h>

#define PROG "vkds-info"

/* ---- command line ------------------------------------------------------------------ */

typedef struct options {
  bool json;
  bool policy; /* --policy NAME given */
  vkds_policy_kind policy_kind;
} options;

typedef enum parse_status { PARSE_RUN, PARSE_EXIT_OK, PARSE_EXIT_USAGE } parse_status;

/* The names --policy accepts, in the order the help lists them. */
typedef struct policy_name {
  const char *name;
  vkds_policy_kind kind;
} policy_name;

static const policy_name policy_names[] = {
    {"fixed", VKDS_POLICY_FIXED},
    {"round_robin", VKDS_POLICY_ROUND_ROBIN},
    {"dynamic_load", VKDS_POLICY_DYNAMIC_LOAD},
    {"auto_tune", VKDS_POLICY_AUTO_TUNE},
    {"earliest_finish", VKDS_POLICY_EARLIEST_FINISH},
    {"default", VKDS_POLICY_DEFAULT}, /* (vkds's default kind: dynamic load) */
};

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

static void list_policy_names(FILE *f) {
  for (size_t i = 0; i < COUNT_OF(policy_names); i++)
    fprintf(f, "%s%s", i ? ", " : "", policy_names[i].name);
}

static void usage(FILE *f) {
  fprintf(f,
          "Usage: " PROG " [--json] [--policy NAME]\n"
          "Lists the Vulkan devices and compute queues (resources) vkds uses.\n"
          "\n"
          "  --json         print one JSON object instead of tables\n"
          "  --policy NAME  create a policy of kind NAME over every resource, run a short\n"
          "                 workload through it (200 tasks that fill a device buffer: key 1\n"
          "                 64 KiB, key 2 8 MiB) and print what the policy saw: selections,\n"
          "                 tasks in flight and completed per resource, task times per key\n"
          "                 (policies that measure them) and the auto_tune state.\n"
          "                 NAME: ");
  list_policy_names(f);
  fprintf(f,
          "\n"
          "  -h, --help     show this help\n"
          "\n"
          "Environment: VKDS_DEVICES restricts the devices (e.g. \"gpu\", \"!cpu\", \"0,2\"),\n"
          "VKDS_VALIDATION=1 enables the Khronos validation layer.\n");
}

static parse_status parse_policy(const char *name, options *opt) {
  if (opt->policy) {
    fprintf(stderr, PROG ": --policy given twice\n");
    return PARSE_EXIT_USAGE;
  }
  for (size_t i = 0; i < COUNT_OF(policy_names); i++) {
    if (strcmp(name, policy_names[i].name) == 0) {
      opt->policy = true;
      opt->policy_kind = policy_names[i].kind;
      return PARSE_RUN;
    }
  }
  fprintf(stderr, PROG ": --policy: unknown policy '%s' (valid: ", name);
  list_policy_names(stderr);
  fprintf(stderr, ")\n");
  return PARSE_EXIT_USAGE;
}

static parse_status parse_args(int argc, char **argv, options *opt) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--json") == 0) {
      if (opt->json) {
        fprintf(stderr, PROG ": --json given twice\n");
        return PARSE_EXIT_USAGE;
      }
      opt->json = true;
    } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      return PARSE_EXIT_OK;
    } else if (strncmp(a, "--policy=", 9) == 0) {
      if (parse_policy(a + 9, opt) != PARSE_RUN) return PARSE_EXIT_USAGE;
    } else if (strcmp(a, "--policy") == 0) {
      if (i + 1 >= argc) {
        fprintf(stderr, PROG ": --policy needs a NAME (one of: ");
        list_policy_names(stderr);
        fprintf(stderr, ")\n");
        return PARSE_EXIT_USAGE;
      }
      if (parse_policy(argv[++i], opt) != PARSE_RUN) return PARSE_EXIT_USAGE;
    } else {
      fprintf(stderr, PROG ": unknown option '%s' (try --help)\n", a);
      return PARSE_EXIT_USAGE;
    }
  }
  return PARSE_RUN;
}

/* ---- decoding tables shared by both outputs ------------------------------------------ */

typedef struct flag_name {
  uint32_t bit;
  const char *name;
} flag_name;

static const flag_name queue_flag_names[] = {
    {VK_QUEUE_GRAPHICS_BIT, "graphics"},
    {VK_QUEUE_COMPUTE_BIT, "compute"},
    {VK_QUEUE_TRANSFER_BIT, "transfer"},
    {VK_QUEUE_SPARSE_BINDING_BIT, "sparse"},
    {VK_QUEUE_PROTECTED_BIT, "protected"},
    {VK_QUEUE_VIDEO_DECODE_BIT_KHR, "video_decode"},
    /* Literals: in older headers these enumerators exist only with beta extensions. */
    {0x00000040u, "video_encode"},  /* VK_QUEUE_VIDEO_ENCODE_BIT_KHR */
    {0x00000100u, "optical_flow"},  /* VK_QUEUE_OPTICAL_FLOW_BIT_NV */
};

static const flag_name subgroup_op_names[] = {
    {VK_SUBGROUP_FEATURE_BASIC_BIT, "basic"},
    {VK_SUBGROUP_FEATURE_VOTE_BIT, "vote"},
    {VK_SUBGROUP_FEATURE_ARITHMETIC_BIT, "arithmetic"},
    {VK_SUBGROUP_FEATURE_BALLOT_BIT, "ballot"},
    {VK_SUBGROUP_FEATURE_SHUFFLE_BIT, "shuffle"},
    {VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT, "shuffle_relative"},
    {VK_SUBGROUP_FEATURE_CLUSTERED_BIT, "clustered"},
    {VK_SUBGROUP_FEATURE_QUAD_BIT, "quad"},
    {VK_SUBGROUP_FEATURE_PARTITIONED_BIT_NV, "partitioned_nv"},
};

/* The boolean features of vkds_resource_info, by name, so that the table and the JSON
 * list the same ones in the same order. */
typedef struct feature_field {
  const char *name;
  size_t offset;
} feature_field;

#define FEATURE(field) {#field, offsetof(vkds_resource_info, field)}
static const feature_field feature_fields[] = {
    FEATURE(buffer_device_address), FEATURE(timeline_semaphore),
    FEATURE(shader_int64),          FEATURE(shader_buffer_int64_atomics),
    FEATURE(shader_float64),        FEATURE(external_memory_host),
    FEATURE(push_descriptor),
};
#undef FEATURE

static bool feature_value(const vkds_resource_info *info, const feature_field *f) {
  bool v;
  memcpy(&v, (const char *)info + f->offset, sizeof v);
  return v;
}

/* Calls `emit` for the name of every set bit; bits without a name are passed as hex so
 * that nothing a newer driver reports is silently dropped. */
typedef void (*name_fn)(void *user, const char *name);

static void for_each_flag(uint32_t flags, const flag_name *names, size_t n, name_fn emit,
                          void *user) {
  for (size_t i = 0; i < n; i++) {
    if (flags & names[i].bit) {
      emit(user, names[i].name);
      flags &= ~names[i].bit;
    }
  }
  for (uint32_t bit = 1; flags; bit <<= 1) {
    if (flags & bit) {
      char hex[16];
      snprintf(hex, sizeof hex, "0x%x", (unsigned)bit);
      emit(user, hex);
      flags &= ~bit;
    }
  }
}

static void format_uuid(const uint8_t uuid[VK_UUID_SIZE], char out[37]) {
  char *p = out;
  for (unsigned i = 0; i < VK_UUID_SIZE; i++) {
    if (i == 4 || i == 6 || i == 8 || i == 10) *p++ = '-';
    p += sprintf(p, "%02x", (unsigned)uuid[i]);
  }
}

static void format_version(uint32_t v, char out[32]) {
  snprintf(out, 32, "%u.%u.%u", (unsigned)VK_API_VERSION_MAJOR(v),
           (unsigned)VK_API_VERSION_MINOR(v), (unsigned)VK_API_VERSION_PATCH(v));
}

/* The context's facts: one vkds_resource_info per resource. A device is described by
 * its first resource (device facts are the same for all of them). */
typedef struct facts {
  const char *version;
  bool validation;
  uint32_t device_count, resource_count;
  vkds_resource_info *res;
  vkds_scan_path *scan_path; /* each resource's device's (vkds_resource_scan_path) */
} facts;

static const vkds_resource_info *device_facts(const facts *f, uint32_t device) {
  for (uint32_t i = 0; i < f->resource_count; i++)
    if (f->res[i].device_index == device) return &f->res[i];
  return NULL;
}

/* The scans' path on a device, as vkds_resource_scan_path says it (the rule, or the
 * override of vkds_context_info.scan_path or VKDS_SCAN_PATH): without it no tool showed
 * whether VKDS_SCAN_PATH had taken effect (a new-user probe). */
static const char *scan_path_name(vkds_scan_path p) {
  return p == VKDS_SCAN_PATH_SINGLE ? "single" : p == VKDS_SCAN_PATH_PORTABLE ? "portable" : "default";
}
static const char *device_scan_path(const facts *f, uint32_t device) {
  for (uint32_t i = 0; i < f->resource_count; i++)
    if (f->res[i].device_index == device) return scan_path_name(f->scan_path[i]);
  return "default";
}

/* ---- the tables -------------------------------------------------------------------- */

/* Joins names with a separator into a fixed buffer (the longest list fits easily). */
typedef struct joiner {
  char text[256];
  size_t len;
  const char *sep;
} joiner;

static void join_name(void *user, const char *name) {
  joiner *j = user;
  int n = snprintf(j->text + j->len, sizeof j->text - j->len, "%s%s",
                   j->len ? j->sep : "", name);
  if (n < 0) return;
  size_t room = sizeof j->text - j->len;
  j->len += (size_t)n < room ? (size_t)n : room - 1; /* truncated: the buffer is full */
}

static const char *join_flags(joiner *j, const char *sep, uint32_t flags,
                              const flag_name *names, size_t n) {
  j->text[0] = '\0';
  j->len = 0;
  j->sep = sep;
  for_each_flag(flags, names, n, join_name, j);
  return j->len ? j->text : "none";
}

static const char *yes_no(bool b) { return b ? "yes" : "no"; }

/* "  label   value": every line of a device's block starts with this, so that the
 * values line up whatever the label. */
#define KV "  %-33s "

static void print_device(uint32_t d, const vkds_resource_info *r, const char *scan_path) {
  char uuid[37], api[32], label[16];
  joiner j;
  format_uuid(r->device_uuid, uuid);
  format_version(r->api_version, api);

  printf("Device %u: %s%s\n", (unsigned)d, r->device_name, r->adopted ? " (adopted)" : "");
  printf(KV "%s\n", "type", vkds_device_type_str(r->device_type));
  printf(KV "0x%04x:0x%04x\n", "vendor:device", (unsigned)r->vendor_id,
         (unsigned)r->device_id);
  printf(KV "%s (%s)\n", "driver", r->driver_name, r->driver_info);
  printf(KV "%s\n", "API version", api);
  printf(KV "%s\n", "device UUID", uuid);
  for (uint32_t h = 0; h < r->heap_count; h++) {
    snprintf(label, sizeof label, "heap %u", (unsigned)h);
    printf(KV "%.2f GiB%s\n", label, (double)r->heaps[h].size / (1024.0 * 1024.0 * 1024.0),
           r->heaps[h].device_local ? ", device-local" : "");
  }
  printf(KV "%s\n", "device-local host-visible memory", yes_no(r->device_local_host_visible));
  printf(KV "%u x %u x %u\n", "max work group count", (unsigned)r->max_work_group_count[0],
         (unsigned)r->max_work_group_count[1], (unsigned)r->max_work_group_count[2]);
  printf(KV "%u x %u x %u\n", "max work group size", (unsigned)r->max_work_group_size[0],
         (unsigned)r->max_work_group_size[1], (unsigned)r->max_work_group_size[2]);
  printf(KV "%u\n", "max work group invocations", (unsigned)r->max_work_group_invocations);
  printf(KV "%u bytes\n", "max push constants", (unsigned)r->max_push_constants_size);
  printf(KV "%u bytes\n", "max storage buffer range", (unsigned)r->max_storage_buffer_range);
  printf(KV "%u bytes\n", "max shared memory", (unsigned)r->max_shared_memory_size);
  printf(KV "%u\n", "subgroup size", (unsigned)r->subgroup_size);
  printf(KV "%s\n", "subgroup operations",
         join_flags(&j, " ", r->subgroup_operations, subgroup_op_names,
                    COUNT_OF(subgroup_op_names)));
  for (size_t i = 0; i < COUNT_OF(feature_fields); i++)
    printf(KV "%s\n", feature_fields[i].name, yes_no(feature_value(r, &feature_fields[i])));
  printf(KV "%s\n", "scan path", scan_path);
  printf("\n");
}

static void print_resource_table(const facts *f) {
  printf("Resources:\n");
  printf("  %5s  %6s  %6s  %5s  %-34s  %s\n", "index", "device", "family", "queue", "flags",
         "timestamps");
  for (uint32_t i = 0; i < f->resource_count; i++) {
    const vkds_resource_info *r = &f->res[i];
    joiner j;
    char ts[48];
    if (r->timestamps)
      snprintf(ts, sizeof ts, "%u bits, %.3g ns/tick", (unsigned)r->timestamp_valid_bits,
               (double)r->timestamp_period_ns);
    else
      snprintf(ts, sizeof ts, "none");
    printf("  %5u  %6u  %6u  %5u  %-34s  %s\n", (unsigned)r->index, (unsigned)r->device_index,
           (unsigned)r->queue_family, (unsigned)r->queue_index,
           join_flags(&j, ",", r->queue_flags, queue_flag_names, COUNT_OF(queue_flag_names)),
           ts);
  }
}

static void print_text(const facts *f) {
  printf("vkds %s: %u device(s), %u resource(s)%s\n\n", f->version, (unsigned)f->device_count,
         (unsigned)f->resource_count, f->validation ? ", validation on" : "");
  for (uint32_t d = 0; d < f->device_count; d++) {
    const vkds_resource_info *r = device_facts(f, d);
    if (r) print_device(d, r, device_scan_path(f, d));
  }
  print_resource_table(f);
}

/* ---- JSON -------------------------------------------------------------------------- */

/* A minimal pretty-printing JSON writer: it tracks nesting only to place commas and
 * indentation. Keys are NULL for array elements. */
typedef struct json {
  FILE *f;
  int depth;
  bool first;   /* nothing written yet at the current level */
  bool started; /* the root value is open (it has no comma, indentation or key) */
} json;

static void json_string_body(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    switch (*p) {
    case '"': fputs("\\\"", f); break;
    case '\\': fputs("\\\\", f); break;
    case '\n': fputs("\\n", f); break;
    case '\r': fputs("\\r", f); break;
    case '\t': fputs("\\t", f); break;
    default:
      /* Other control characters must be escaped; bytes >= 0x80 pass through, since
       * Vulkan strings are UTF-8. */
      if (*p < 0x20)
        fprintf(f, "\\u%04x", (unsigned)*p);
      else
        fputc(*p, f);
    }
  }
  fputc('"', f);
}

static void json_key(json *j, const char *key) {
  fputs(j->first ? "\n" : ",\n", j->f);
  j->first = false;
  fprintf(j->f, "%*s", 2 * j->depth, "");
  if (key) {
    json_string_body(j->f, key);
    fputs(": ", j->f);
  }
}

static void json_open(json *j, const char *key, char bracket) {
  if (j->started) json_key(j, key);
  j->started = true;
  fputc(bracket, j->f);
  j->depth++;
  j->first = true;
}

static void json_close(json *j, char bracket) {
  j->depth--;
  if (!j->first) fprintf(j->f, "\n%*s", 2 * j->depth, "");
  fputc(bracket, j->f);
  j->first = false;
}

static void json_str(json *j, const char *key, const char *v) {
  json_key(j, key);
  json_string_body(j->f, v);
}

static void json_uint(json *j, const char *key, uint64_t v) {
  json_key(j, key);
  fprintf(j->f, "%llu", (unsigned long long)v);
}

static void json_bool(json *j, const char *key, bool v) {
  json_key(j, key);
  fputs(v ? "true" : "false", j->f);
}

static void json_double(json *j, const char *key, double v) {
  json_key(j, key);
  if (isfinite(v))
    fprintf(j->f, "%.9g", v);
  else
    fputs("null", j->f); /* JSON has no NaN or infinity */
}

static void json_uint3(json *j, const char *key, const uint32_t v[3]) {
  json_open(j, key, '[');
  for (int i = 0; i < 3; i++) json_uint(j, NULL, v[i]);
  json_close(j, ']');
}

static void json_flag_name(void *user, const char *name) { json_str(user, NULL, name); }

static void json_flags(json *j, const char *key, uint32_t flags, const flag_name *names,
                       size_t n) {
  json_open(j, key, '[');
  for_each_flag(flags, names, n, json_flag_name, j);
  json_close(j, ']');
}

static void json_device(json *j, uint32_t d, const vkds_resource_info *r, const char *scan_path) {
  char uuid[37], driver_uuid[37], api[32];
  format_uuid(r->device_uuid, uuid);
  format_uuid(r->driver_uuid, driver_uuid);
  format_version(r->api_version, api);

  json_open(j, NULL, '{');
  json_uint(j, "index", d);
  json_str(j, "name", r->device_name);
  json_str(j, "type", vkds_device_type_str(r->device_type));
  json_bool(j, "adopted", r->adopted);
  json_uint(j, "vendor_id", r->vendor_id);
  json_uint(j, "device_id", r->device_id);
  json_str(j, "device_uuid", uuid);
  json_str(j, "driver_uuid", driver_uuid);
  json_uint(j, "driver_id", r->driver_id);
  json_str(j, "driver_name", r->driver_name);
  json_str(j, "driver_info", r->driver_info);
  json_uint(j, "driver_version", r->driver_version); /* vendor-encoded, left raw */
  json_str(j, "api_version", api);

  json_open(j, "heaps", '[');
  for (uint32_t h = 0; h < r->heap_count; h++) {
    json_open(j, NULL, '{');
    json_uint(j, "size", r->heaps[h].size);
    json_bool(j, "device_local", r->heaps[h].device_local);
    json_close(j, '}');
  }
  json_close(j, ']');
  json_bool(j, "device_local_host_visible", r->device_local_host_visible);

  json_open(j, "limits", '{');
  json_uint3(j, "max_work_group_count", r->max_work_group_count);
  json_uint3(j, "max_work_group_size", r->max_work_group_size);
  json_uint(j, "max_work_group_invocations", r->max_work_group_invocations);
  json_uint(j, "max_push_constants_size", r->max_push_constants_size);
  json_uint(j, "max_storage_buffer_range", r->max_storage_buffer_range);
  json_uint(j, "max_shared_memory_size", r->max_shared_memory_size);
  json_close(j, '}');

  json_open(j, "subgroup", '{');
  json_uint(j, "size", r->subgroup_size);
  json_flags(j, "operations", r->subgroup_operations, subgroup_op_names,
             COUNT_OF(subgroup_op_names));
  json_close(j, '}');

  json_open(j, "features", '{');
  for (size_t i = 0; i < COUNT_OF(feature_fields); i++)
    json_bool(j, feature_fields[i].name, feature_value(r, &feature_fields[i]));
  json_close(j, '}');
  json_str(j, "scan_path", scan_path);
  json_close(j, '}');
}

static void json_resource(json *j, const vkds_resource_info *r) {
  json_open(j, NULL, '{');
  json_uint(j, "index", r->index);
  json_uint(j, "device_index", r->device_index);
  json_uint(j, "queue_family", r->queue_family);
  json_uint(j, "queue_index", r->queue_index);
  json_uint(j, "family_queue_count", r->family_queue_count);
  json_flags(j, "queue_flags", r->queue_flags, queue_flag_names, COUNT_OF(queue_flag_names));
  json_bool(j, "timestamps", r->timestamps);
  json_uint(j, "timestamp_valid_bits", r->timestamp_valid_bits);
  json_double(j, "timestamp_period_ns", (double)r->timestamp_period_ns);
  json_close(j, '}');
}

static void print_json(const facts *f) {
  json j = {.f = stdout, .first = true};
  json_open(&j, NULL, '{');
  json_str(&j, "vkds_version", f->version);
  json_bool(&j, "validation", f->validation);
  json_open(&j, "devices", '[');
  for (uint32_t d = 0; d < f->device_count; d++) {
    const vkds_resource_info *r = device_facts(f, d);
    if (r) json_device(&j, d, r, device_scan_path(f, d));
  }
  json_close(&j, ']');
  json_open(&j, "resources", '[');
  for (uint32_t i = 0; i < f->resource_count; i++) json_resource(&j, &f->res[i]);
  json_close(&j, ']');
  json_close(&j, '}');
  fputc('\n', stdout);
}

/* ---- main -------------------------------------------------------------------------- */

/* vkds's own errors, and the validation layer's messages when VKDS_VALIDATION=1, go to
 * stderr so that they never corrupt the JSON on stdout. */
/* Whether the logger printed an error since fail() last looked: the failure's own line
 * then needs no detail (the message would be printed twice). */
static bool error_logged;

static void log_to_stderr(void *user, vkds_log_level level, vkds_log_source source,
                          const char *message) {
  static const char *const levels[] = {"", "debug", "info", "warning", "error"};
  static const char *const sources[] = {"", "vkds", "validation", "driver"};
  (void)user;
  if (level == VKDS_LOG_ERROR) error_logged = true;
  fprintf(stderr, PROG ": %s %s: %s\n", (unsigned)source < 4 ? sources[source] : "?",
          (unsigned)level < 5 ? levels[level] : "?", message);
}

/* The last error message, less the "<result text>: " it currently starts with, so that
 * printing both does not say the same thing twice. */
static const char *error_detail(vkds_result r) {
  const char *msg = vkds_last_error_message(), *text = vkds_result_str(r);
  size_t n = strlen(text);
  return strncmp(msg, text, n) == 0 && strncmp(msg + n, ": ", 2) == 0 ? msg + n + 2 : msg;
}

static int fail(const char *what, vkds_result r) {
  if (error_logged) fprintf(stderr, PROG ": %s failed (%s, above)\n", what, vkds_result_str(r));
  else fprintf(stderr, PROG ": %s failed: %s: %s\n", what, vkds_result_str(r), error_detail(r));
  error_logged = false;
  return 1;
}

static int collect(const vkds_context *ctx, facts *f) {
  f->version = vkds_version();
  f->validation = vkds_context_validation_enabled(ctx);
  f->device_count = vkds_context_device_count(ctx);
  f->resource_count = vkds_context_resource_count(ctx);
  f->res = calloc(f->resource_count ? f->resource_count : 1, sizeof *f->res);
  f->scan_path = calloc(f->resource_count ? f->resource_count : 1, sizeof *f->scan_path);
  if (!f->res || !f->scan_path) {
    fprintf(stderr, PROG ": out of memory\n");
    return 1;
  }
  for (uint32_t i = 0; i < f->resource_count; i++) {
    vkds_result r = vkds_resource_get_info(vkds_context_resource(ctx, i), &f->res[i]);
    if (r != VKDS_SUCCESS) return fail("vkds_resource_get_info", r);
    f->scan_path[i] = vkds_resource_scan_path(vkds_context_resource(ctx, i));
  }
  return 0;
}

/* ---- --policy: a short real workload through a policy ------------------------------- */

/* The workload: WORK_TASKS tasks alternating between the keys below. Each task records a
 * vkCmdFillBuffer into a device buffer of the resource it was given (one buffer per
 * resource, so that no two queues write the same memory), after a barrier that orders it
 * behind the fills before it on that queue. The keys differ only in how much they fill,
 * so their task times differ. */
#define WORK_TASKS 200u
#define WORK_TIMEOUT_NS (60ull * 1000 * 1000 * 1000)

typedef struct work_key {
  uint64_t key;
  VkDeviceSize bytes; /* filled by each task (a multiple of 4) */
  uint32_t value;     /* the 32-bit word it fills with */
  const char *label;  /* debug-utils label */
} work_key;

static const work_key work_keys[] = {
    {1, 64u * 1024u, 0x11111111u, "vkds-info: fill 64 KiB"},
    {2, 8u * 1024u * 1024u, 0x22222222u, "vkds-info: fill 8 MiB"},
};
#define WORK_KEYS COUNT_OF(work_keys)

/* A resource's destination buffer (raw Vulkan on the resource's VkDevice). */
typedef struct fill_target {
  VkDevice device;
  VkBuffer buffer;
  VkDeviceMemory memory;
} fill_target;

typedef struct workload {
  uint32_t count;        /* the policy's resources */
  fill_target *targets;  /* by the policy's resource index */
} workload;

/* The user pointer of one key's tasks. */
typedef struct fill_task {
  const workload *w;
  const work_key *k;
} fill_task;

static vkds_result record_fill(void *user, const vkds_task *task, void **wait_object) {
  const fill_task *t = user;
  (void)wait_object; /* vkds tracks completion of recorded work itself */
  if (task->resource_index >= t->w->count) return VKDS_ERROR_OUT_OF_RANGE;
  const fill_target *dst = &t->w->targets[task->resource_index];
  VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                        .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                        .dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT};
  vkCmdPipelineBarrier(task->cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                       0, 1, &mb, 0, NULL, 0, NULL);
  vkCmdFillBuffer(task->cmd, dst->buffer, 0, t->k->bytes, t->k->value);
  return VKDS_SUCCESS;
}

static int vk_fail(const char *what, VkResult vr) {
  fprintf(stderr, PROG ": %s failed: VkResult %d\n", what, (int)vr);
  return 1;
}

static void destroy_target(fill_target *t) {
  if (!t->device) return;
  if (t->buffer) vkDestroyBuffer(t->device, t->buffer, NULL);
  if (t->memory) vkFreeMemory(t->device, t->memory, NULL);
  *t = (fill_target){0};
}

/* A buffer of `size` bytes on the resource's device, in device-local memory when there
 * is such a type it may use (else in any type it may use). */
static int create_target(vkds_resource *res, VkDeviceSize size, fill_target *t) {
  VkPhysicalDevice phys;
  VkDevice dev;
  vkds_result r = vkds_resource_vk_handles(res, &phys, &dev, NULL);
  if (r != VKDS_SUCCESS) return fail("vkds_resource_vk_handles", r);
  t->device = dev;
  VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                            .size = size,
                            .usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                            .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  VkResult vr = vkCreateBuffer(dev, &bci, NULL, &t->buffer);
  if (vr != VK_SUCCESS) return vk_fail("vkCreateBuffer", vr);
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(dev, t->buffer, &req);
  VkPhysicalDeviceMemoryProperties mp;
  vkGetPhysicalDeviceMemoryProperties(phys, &mp);
  uint32_t type = UINT32_MAX;
  for (uint32_t i = 0; i < mp.memoryTypeCount; i++) {
    if (!(req.memoryTypeBits & (1u << i))) continue;
    if (mp.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) {
      type = i;
      break;
    }
    if (type == UINT32_MAX) type = i;
  }
  if (type == UINT32_MAX) {
    fprintf(stderr, PROG ": no memory type for a %llu-byte buffer\n", (unsigned long long)size);
    return 1;
  }
  VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                              .allocationSize = req.size,
                              .memoryTypeIndex = type};
  vr = vkAllocateMemory(dev, &mai, NULL, &t->memory);
  if (vr != VK_SUCCESS) return vk_fail("vkAllocateMemory", vr);
  vr = vkBindBufferMemory(dev, t->buffer, t->memory, 0);
  if (vr != VK_SUCCESS) return vk_fail("vkBindBufferMemory", vr);
  return 0;
}

/* What the policy saw, collected once so that both outputs print the same facts. */
typedef struct policy_resource_report {
  vkds_resource_info info;
  vkds_policy_resource_stats stats;
  vkds_policy_key_stats keys[WORK_KEYS]; /* when the policy measures task times */
} policy_resource_report;

typedef struct policy_report {
  const char *name;
  uint32_t tasks;                 /* submitted */
  uint32_t key_tasks[WORK_KEYS];  /* submitted per key */
  double wall_ms;                 /* first submit to wait_all returning */
  bool measures_time;             /* vkds_policy_get_key_stats is supported */
  bool auto_tune;                 /* vkds_policy_auto_tune_state is supported */
  vkds_auto_tune_phase phase[WORK_KEYS];
  uint32_t best[WORK_KEYS];
  uint32_t resource_count;
  policy_resource_report *res;
} policy_report;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int run_workload(vkds_policy *p, workload *w, policy_report *rep) {
  fill_task tasks[WORK_KEYS];
  for (size_t k = 0; k < WORK_KEYS; k++) tasks[k] = (fill_task){.w = w, .k = &work_keys[k]};
  double start = now_ms();
  int status = 0;
  for (uint32_t i = 0; i < WORK_TASKS; i++) {
    size_t k = i % WORK_KEYS;
    vkds_task_info ti = {.fn = record_fill,
                         .user = &tasks[k],
                         .mode = VKDS_TASK_RECORD,
                         .key = work_keys[k].key,
                         .label = work_keys[k].label};
    vkds_result r = vkds_submit(p, &ti, NULL); /* fire and forget */
    if (r != VKDS_SUCCESS) {
      status = fail("vkds_submit", r);
      break;
    }
    rep->tasks++;
    rep->key_tasks[k]++;
  }
  /* Also after a failed submit: the buffers must not be destroyed under running work. */
  vkds_result r = vkds_policy_wait_all(p, WORK_TIMEOUT_NS);
  rep->wall_ms = now_ms() - start;
  if (r != VKDS_SUCCESS && status == 0) status = fail("vkds_policy_wait_all", r);
  return status;
}

static int collect_policy(const vkds_policy *p, policy_report *rep) {
  rep->name = vkds_policy_name(p);
  rep->measures_time = true;
  rep->auto_tune = true;
  for (size_t k = 0; k < WORK_KEYS && rep->auto_tune; k++) {
    vkds_result r = vkds_policy_auto_tune_state(p, work_keys[k].key, &rep->phase[k], &rep->best[k]);
    if (r == VKDS_ERROR_UNSUPPORTED)
      rep->auto_tune = false;
    else if (r != VKDS_SUCCESS)
      return fail("vkds_policy_auto_tune_state", r);
  }
  for (uint32_t i = 0; i < rep->resource_count; i++) {
    policy_resource_report *pr = &rep->res[i];
    vkds_result r = vkds_resource_get_info(vkds_policy_resource(p, i), &pr->info);
    if (r != VKDS_SUCCESS) return fail("vkds_resource_get_info", r);
    r = vkds_policy_get_resource_stats(p, i, &pr->stats);
    if (r != VKDS_SUCCESS) return fail("vkds_policy_get_resource_stats", r);
    for (size_t k = 0; k < WORK_KEYS && rep->measures_time; k++) {
      r = vkds_policy_get_key_stats(p, i, work_keys[k].key, &pr->keys[k]);
      if (r == VKDS_ERROR_UNSUPPORTED)
        rep->measures_time = false;
      else if (r != VKDS_SUCCESS)
        return fail("vkds_policy_get_key_stats", r);
    }
  }
  return 0;
}

/* Creates the policy, runs the workload, collects the report and cleans up. */
static int run_policy(vkds_context *ctx, vkds_policy_kind kind, policy_report *rep) {
  vkds_policy *p = NULL;
  vkds_result r = vkds_policy_create(
      &(vkds_policy_info){.kind = kind, .resources = {.context = ctx}, .track_completion = true},
      &p);
  if (r != VKDS_SUCCESS) return fail("vkds_policy_create", r);

  workload w = {.count = p->resource_count};
  rep->resource_count = p->resource_count;
  w.targets = calloc(w.count ? w.count : 1, sizeof *w.targets);
  rep->res = calloc(w.count ? w.count : 1, sizeof *rep->res);
  int status = 0;
  if (!w.targets || !rep->res) {
    fprintf(stderr, PROG ": out of memory\n");
    status = 1;
  }
  VkDeviceSize max_bytes = 0;
  for (size_t k = 0; k < WORK_KEYS; k++)
    if (work_keys[k].bytes > max_bytes) max_bytes = work_keys[k].bytes;
  for (uint32_t i = 0; i < w.count && status == 0; i++)
    status = create_target(vkds_policy_resource(p, i), max_bytes, &w.targets[i]);
  if (status == 0) status = run_workload(p, &w, rep);
  if (status == 0) status = collect_policy(p, rep);

  vkds_policy_release(p); /* waits for the policy's work: the buffers are idle after it */
  for (uint32_t i = 0; w.targets && i < w.count; i++) destroy_target(&w.targets[i]);
  free(w.targets);
  return status;
}

static const char *phase_name(vkds_auto_tune_phase phase) {
  switch (phase) {
  case VKDS_AUTO_TUNE_UNSEEN: return "unseen";
  case VKDS_AUTO_TUNE_TRIAL: return "trial";
  case VKDS_AUTO_TUNE_CHOSEN: return "chosen";
  }
  return "?";
}

/* "64 KiB", "8 MiB" */
static void format_bytes(uint64_t n, char out[32]) {
  if (n >= 1024u * 1024u && n % (1024u * 1024u) == 0)
    snprintf(out, 32, "%llu MiB", (unsigned long long)(n / (1024u * 1024u)));
  else if (n >= 1024u && n % 1024u == 0)
    snprintf(out, 32, "%llu KiB", (unsigned long long)(n / 1024u));
  else
    snprintf(out, 32, "%llu bytes", (unsigned long long)n);
}

static void print_policy_text(const facts *f, const policy_report *rep) {
  printf("vkds %s: %u device(s), %u resource(s)%s\n\n", f->version, (unsigned)f->device_count,
         (unsigned)f->resource_count, f->validation ? ", validation on" : "");
  printf("Policy: %s\n", rep->name);
  printf("Workload: %u tasks in %.1f ms (vkCmdFillBuffer into a device buffer per resource)\n",
         (unsigned)rep->tasks, rep->wall_ms);
  for (size_t k = 0; k < WORK_KEYS; k++) {
    char size[32];
    format_bytes(work_keys[k].bytes, size);
    printf("  key %llu: %u tasks, %s each\n", (unsigned long long)work_keys[k].key,
           (unsigned)rep->key_tasks[k], size);
  }

  int name_w = (int)strlen("device");
  for (uint32_t i = 0; i < rep->resource_count; i++) {
    int n = (int)strlen(rep->res[i].info.device_name);
    if (n > name_w) name_w = n;
  }
  printf("\nResources:\n");
  printf("  %5s  %7s  %-*s  %12s  %10s  %9s  %9s\n", "index", "context", name_w, "device",
         "family.queue", "selections", "in flight", "completed");
  for (uint32_t i = 0; i < rep->resource_count; i++) {
    const policy_resource_report *pr = &rep->res[i];
    char fq[32], in_flight[24], completed[24];
    snprintf(fq, sizeof fq, "%u.%u", (unsigned)pr->info.queue_family,
             (unsigned)pr->info.queue_index);
    if (pr->stats.tracks_completion) {
      snprintf(in_flight, sizeof in_flight, "%llu", (unsigned long long)pr->stats.in_flight);
      snprintf(completed, sizeof completed, "%llu", (unsigned long long)pr->stats.completed);
    } else {
      snprintf(in_flight, sizeof in_flight, "-");
      snprintf(completed, sizeof completed, "-");
    }
    printf("  %5u  %7u  %-*s  %12s  %10llu  %9s  %9s\n", (unsigned)i, (unsigned)pr->info.index,
           name_w, pr->info.device_name, fq, (unsigned long long)pr->stats.selections, in_flight,
           completed);
  }

  printf("\nTask times per key and resource, in µs (warm-ups excluded):\n");
  if (!rep->measures_time) {
    printf("  not measured by this policy\n");
  } else {
    printf("  %4s  %8s  %7s  %8s  %10s  %10s\n", "key", "resource", "samples", "warm-ups",
           "mean", "best");
    for (size_t k = 0; k < WORK_KEYS; k++) {
      for (uint32_t i = 0; i < rep->resource_count; i++) {
        const vkds_policy_key_stats *ks = &rep->res[i].keys[k];
        char mean[32], best[32];
        if (ks->samples) {
          snprintf(mean, sizeof mean, "%.1f", ks->mean_ns / 1e3);
          snprintf(best, sizeof best, "%.1f", (double)ks->best_ns / 1e3);
        } else {
          snprintf(mean, sizeof mean, "-");
          snprintf(best, sizeof best, "-");
        }
        printf("  %4llu  %8u  %7llu  %8llu  %10s  %10s\n", (unsigned long long)work_keys[k].key,
               (unsigned)i, (unsigned long long)ks->samples, (unsigned long long)ks->warmups,
               mean, best);
      }
    }
  }

  if (rep->auto_tune) {
    printf("\nAuto tune:\n");
    printf("  %4s  %-6s  %s\n", "key", "phase", "best resource");
    for (size_t k = 0; k < WORK_KEYS; k++) {
      char best[16];
      if (rep->phase[k] == VKDS_AUTO_TUNE_CHOSEN)
        snprintf(best, sizeof best, "%u", (unsigned)rep->best[k]);
      else
        snprintf(best, sizeof best, "-");
      printf("  %4llu  %-6s  %s\n", (unsigned long long)work_keys[k].key,
             phase_name(rep->phase[k]), best);
    }
  }
}

static void json_null(json *j, const char *key) {
  json_key(j, key);
  fputs("null", j->f);
}

static void print_policy_json(const facts *f, const policy_report *rep) {
  json j = {.f = stdout, .first = true};
  json_open(&j, NULL, '{');
  json_str(&j, "vkds_version", f->version);
  json_bool(&j, "validation", f->validation);
  json_uint(&j, "device_count", f->device_count);
  json_uint(&j, "resource_count", f->resource_count);

  json_open(&j, "policy", '{');
  json_str(&j, "name", rep->name);

  json_open(&j, "workload", '{');
  json_str(&j, "operation", "vkCmdFillBuffer");
  json_uint(&j, "tasks", rep->tasks);
  json_double(&j, "wall_ms", rep->wall_ms);
  json_open(&j, "keys", '[');
  for (size_t k = 0; k < WORK_KEYS; k++) {
    json_open(&j, NULL, '{');
    json_uint(&j, "key", work_keys[k].key);
    json_uint(&j, "tasks", rep->key_tasks[k]);
    json_uint(&j, "bytes_per_task", work_keys[k].bytes);
    json_close(&j, '}');
  }
  json_close(&j, ']');
  json_close(&j, '}');

  json_open(&j, "resources", '[');
  for (uint32_t i = 0; i < rep->resource_count; i++) {
    const policy_resource_report *pr = &rep->res[i];
    json_open(&j, NULL, '{');
    json_uint(&j, "index", i);
    json_uint(&j, "context_index", pr->info.index);
    json_uint(&j, "device_index", pr->info.device_index);
    json_str(&j, "device_name", pr->info.device_name);
    json_uint(&j, "queue_family", pr->info.queue_family);
    json_uint(&j, "queue_index", pr->info.queue_index);
    json_uint(&j, "selections", pr->stats.selections);
    json_bool(&j, "tracks_completion", pr->stats.tracks_completion);
    if (pr->stats.tracks_completion) {
      json_uint(&j, "in_flight", pr->stats.in_flight);
      json_uint(&j, "completed", pr->stats.completed);
    } else {
      json_null(&j, "in_flight");
      json_null(&j, "completed");
    }
    json_close(&j, '}');
  }
  json_close(&j, ']');

  /* null: the policy does not measure task times */
  json_bool(&j, "measures_time", rep->measures_time);
  if (!rep->measures_time) {
    json_null(&j, "task_times");
  } else {
    json_open(&j, "task_times", '[');
    for (size_t k = 0; k < WORK_KEYS; k++) {
      for (uint32_t i = 0; i < rep->resource_count; i++) {
        const vkds_policy_key_stats *ks = &rep->res[i].keys[k];
        json_open(&j, NULL, '{');
        json_uint(&j, "key", work_keys[k].key);
        json_uint(&j, "resource", i);
        json_uint(&j, "samples", ks->samples);
        json_uint(&j, "warmups", ks->warmups);
        if (ks->samples) {
          json_double(&j, "mean_us", ks->mean_ns / 1e3);
          json_double(&j, "best_us", (double)ks->best_ns / 1e3);
        } else {
          json_null(&j, "mean_us");
          json_null(&j, "best_us");
        }
        json_close(&j, '}');
      }
    }
    json_close(&j, ']');
  }

  /* null: not an auto_tune policy */
  if (!rep->auto_tune) {
    json_null(&j, "auto_tune");
  } else {
    json_open(&j, "auto_tune", '[');
    for (size_t k = 0; k < WORK_KEYS; k++) {
      json_open(&j, NULL, '{');
      json_uint(&j, "key", work_keys[k].key);
      json_str(&j, "phase", phase_name(rep->phase[k]));
      if (rep->phase[k] == VKDS_AUTO_TUNE_CHOSEN)
        json_uint(&j, "best", rep->best[k]);
      else
        json_null(&j, "best");
      json_close(&j, '}');
    }
    json_close(&j, ']');
  }
  json_close(&j, '}');
  json_close(&j, '}');
  fputc('\n', stdout);
}

int main(int argc, char **argv) {
  options opt = {0};
  switch (parse_args(argc, argv, &opt)) {
  case PARSE_EXIT_OK: return 0;
  case PARSE_EXIT_USAGE: return 2;
  case PARSE_RUN: break;
  }

  /* Zero-initialised apart from the logger, so the environment variables apply. */
  vkds_context_info info = {.log = log_to_stderr, .log_level = VKDS_LOG_WARN};
  vkds_context *ctx = NULL;
  vkds_result r = vkds_context_create(&info, &ctx);
  if (r != VKDS_SUCCESS) return fail("vkds_context_create", r);

  facts f = {0};
  policy_report rep = {0};
  int status = collect(ctx, &f);
  if (status == 0 && opt.policy) status = run_policy(ctx, opt.policy_kind, &rep);
  if (status == 0) {
    if (opt.policy && opt.json)
      print_policy_json(&f, &rep);
    else if (opt.policy)
      print_policy_text(&f, &rep);
    else if (opt.json)
      print_json(&f);
    else
      print_text(&f);
    if (fflush(stdout) != 0 || ferror(stdout)) { /* e.g. a full disk */
      fprintf(stderr, PROG ": writing the output failed\n");
      status = 1;
    }
  }
  free(rep.res);
  free(f.res);
  free(f.scan_path);
  vkds_context_destroy(ctx);
  return status;
}
