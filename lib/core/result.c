/* lib/core/result.c: result strings, the thread's last error, and the logger. */
#include "internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *vkds_result_str(vkds_result result) {
  switch (result) {
#define VKDS_X_CASE(name, value, text)                                                      \
  case name: return text;
    VKDS_RESULT_LIST(VKDS_X_CASE)
#undef VKDS_X_CASE
  }
  return "unknown result";
}

static _Thread_local char last_message[1024];
static _Thread_local VkResult last_vk = VK_SUCCESS;
/* whether the last error was raised without a context, so that no logger has seen it */
static _Thread_local bool last_unlogged;
/* failures recorded on this thread so far (vkds__failures) */
static _Thread_local uint64_t failures;
/* while set, failures are recorded but not logged (vkds__hold_failure_logs) */
static _Thread_local bool hold_logs;

bool vkds__hold_failure_logs(bool hold) {
  bool before = hold_logs;
  hold_logs = hold;
  return before;
}

uint64_t vkds__failures(void) { return failures; }

/* the public call the thread is in, for the messages of what it does on the way */
static _Thread_local const char *calling;

const char *vkds__call_begin(const char *name) {
  const char *before = calling;
  if (!before) calling = name; /* the outermost call names it */
  return before;
}
void vkds__call_end(const char *before) { calling = before; }
const char *vkds__caller(const char *own) { return calling ? calling : own; }
bool vkds__in_call(void) { return calling != NULL; }

const char *vkds__last_reason(vkds_result result) {
  const char *name = vkds_result_str(result);
  size_t n = strlen(name);
  return strncmp(last_message, name, n) == 0 && last_message[n] == ':' && last_message[n + 1] == ' '
             ? last_message + n + 2
             : last_message;
}

vkds_result vkds__fail_as(const vkds_context *ctx, const char *who, vkds_result result) {
  if (result == VKDS_SUCCESS) return result;
  char why[sizeof last_message]; /* (copied: formatting the thread's message into itself garbles it) */
  strcpy(why, vkds__last_reason(result));
  return vkds__fail(ctx, result, VK_SUCCESS, "%s: %s", who, why);
}

const char *vkds_last_error_message(void) { return last_message; }
VkResult vkds_last_vk_result(void) { return last_vk; }

static void emit(const vkds_context *ctx, vkds_log_level level, const char *text) {
  if (ctx && ctx->log && level >= ctx->log_level)
    ctx->log(ctx->log_user, level, VKDS_LOG_SOURCE_VKDS, text);
}

void vkds__log(const vkds_context *ctx, vkds_log_level level, const char *fmt, ...) {
  if (!ctx || !ctx->log || level < ctx->log_level) return;
  char text[1024];
  va_list ap, again;
  va_start(ap, fmt);
  va_copy(again, ap);
  int n = vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  /* a longer message (a generated kernel's source under VKDS_DUMP_ALGORITHMS) whole, from
   * the heap (the context's allocator, as every host allocation); where that fails, the
   * first 1,023 bytes */
  char *whole = n >= (int)sizeof text ? vkds__alloc(ctx, (size_t)n + 1) : NULL;
  if (whole) vsnprintf(whole, (size_t)n + 1, fmt, again);
  va_end(again);
  emit(ctx, level, whole ? whole : text);
  vkds__free(ctx, whole);
}

static vkds_result record(const vkds_context *ctx, vkds_log_level level, vkds_result result, VkResult vk,
                          const char *fmt, va_list ap) {
  int n = snprintf(last_message, sizeof last_message, "%s: ", vkds_result_str(result));
  if (n < 0 || (size_t)n >= sizeof last_message) n = 0;
  int m = vsnprintf(last_message + n, sizeof last_message - (size_t)n, fmt, ap);
  /* a message cut at the buffer's end says so (it was cut mid-word, silently; a probe) */
  if (m >= 0 && (size_t)m >= sizeof last_message - (size_t)n)
    memcpy(last_message + sizeof last_message - 4, "...", 4);
  last_vk = vk;
  last_unlogged = !ctx || hold_logs;
  ++failures;
  if (!hold_logs) emit(ctx, level, last_message);
  return result;
}

vkds_result vkds__fail(const vkds_context *ctx, vkds_result result, VkResult vk,
                       const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  record(ctx, VKDS_LOG_ERROR, result, vk, fmt, ap);
  va_end(ap);
  return result;
}

static bool is_known_error(vkds_result result) {
  switch (result) {
#define VKDS_X_CASE(name, value, text) case name:
    VKDS_RESULT_LIST(VKDS_X_CASE)
#undef VKDS_X_CASE
    return result < 0;
  }
  return false;
}

bool vkds__is_result(vkds_result result) { return result == VKDS_SUCCESS || is_known_error(result); }

vkds_result vkds__fail_if_silent(const vkds_context *ctx, vkds_result result, uint64_t before, const char *fmt, ...) {
  if (result == VKDS_SUCCESS) return result;
  va_list ap;
  if (!is_known_error(result)) {
    /* code of the application's returned a value that is no vkds error: passed on, a
     * positive one read as success to a caller that tests `r < 0` (a backends probe) */
    char what[512];
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                      "%s (%d, which is not a vkds_result: errors are the negative VKDS_ERROR_* values)", what,
                      (int)result);
  }
  if (failures != before) return result;
  va_start(ap, fmt);
  record(ctx, VKDS_LOG_ERROR, result, VK_SUCCESS, fmt, ap);
  va_end(ap);
  return result;
}

vkds_result vkds__fail_info(const vkds_context *ctx, vkds_result result, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  record(ctx, VKDS_LOG_INFO, result, VK_SUCCESS, fmt, ap);
  va_end(ap);
  return result;
}

vkds_result vkds__timed_out(const vkds_context *ctx, VkResult vk, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  record(ctx, VKDS_LOG_INFO, VKDS_ERROR_TIMEOUT, vk, fmt, ap);
  va_end(ap);
  return VKDS_ERROR_TIMEOUT;
}

vkds_result vkds__log_unlogged(const vkds_context *ctx, vkds_result result) {
  if (result != VKDS_SUCCESS && ctx && last_unlogged) {
    emit(ctx, VKDS_LOG_ERROR, last_message);
    last_unlogged = false;
  }
  return result;
}

vkds_result vkds__relay_error(const vkds_context *ctx, vkds_result result, const char *message, VkResult vk) {
  snprintf(last_message, sizeof last_message, "%s", message);
  last_vk = vk;
  last_unlogged = !ctx || hold_logs;
  ++failures;
  if (!last_unlogged) emit(ctx, VKDS_LOG_ERROR, last_message);
  return result;
}

static vkds_result from_vk(VkResult vk) {
  switch (vk) {
  case VK_ERROR_OUT_OF_HOST_MEMORY: return VKDS_ERROR_OUT_OF_HOST_MEMORY;
  case VK_ERROR_OUT_OF_DEVICE_MEMORY:
  case VK_ERROR_TOO_MANY_OBJECTS:
  case VK_ERROR_OUT_OF_POOL_MEMORY: return VKDS_ERROR_OUT_OF_DEVICE_MEMORY;
  case VK_ERROR_DEVICE_LOST: return VKDS_ERROR_DEVICE_LOST;
  case VK_ERROR_INCOMPATIBLE_DRIVER: return VKDS_ERROR_NO_VULKAN;
  case VK_ERROR_LAYER_NOT_PRESENT:
  case VK_ERROR_EXTENSION_NOT_PRESENT:
  case VK_ERROR_FEATURE_NOT_PRESENT: return VKDS_ERROR_UNSUPPORTED;
  case VK_TIMEOUT: return VKDS_ERROR_TIMEOUT;
  default: return VKDS_ERROR_VULKAN;
  }
}

vkds_result vkds__vk_fail(const vkds_context *ctx, VkResult vk, const char *what) {
  return vkds__fail(ctx, from_vk(vk), vk, "%s returned VkResult %d", what, (int)vk);
}

bool vkds__str_icontains(const char *haystack, const char *needle) {
  size_t n = strlen(needle);
  for (const char *h = haystack; *h; ++h) {
    size_t i = 0;
    while (i < n && h[i] && tolower((unsigned char)h[i]) == tolower((unsigned char)needle[i]))
      ++i;
    if (i == n) return true;
  }
  return n == 0;
}

const char *vkds__getenv(const char *name) {
  const char *v = getenv(name);
  return (v && *v) ? v : NULL;
}

bool vkds__getenv_on(const char *name) {
  const char *v = vkds__getenv(name);
  return v && strcmp(v, "0") != 0 && strcasecmp(v, "false") != 0 && strcasecmp(v, "off") != 0;
}

bool vkds__getenv_int(const char *name, int64_t min, int64_t max, int64_t *out) {
  const char *v = vkds__getenv(name);
  if (!v) return false;
  /* decimal digits only, an optional '-' first: atoi took "8abc" as 8 and wrapped
   * "4294967297" to 1, strtol without an end check took "abc" as 0 (a CLI probe) */
  const char *d = v + (*v == '-');
  if (!*d || strspn(d, "0123456789") != strlen(d) || strlen(d) > 18) return false;
  int64_t n = strtoll(v, NULL, 10);
  if (n < min || n > max) return false;
  *out = n;
  return true;
}

uint32_t vkds__getenv_positive(const char *name) {
  int64_t n;
  return vkds__getenv_int(name, 1, INT32_MAX, &n) ? (uint32_t)n : 0;
}
