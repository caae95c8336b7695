/* vkds/result.h: result codes, the logger, and the last error of the calling thread. */
#ifndef VKDS_RESULT_H
#define VKDS_RESULT_H

#include <stdint.h>
#include <vulkan/vulkan_core.h>

#include "vkds/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One list gives the enum and the strings. 0 is success, every error is negative. */
#define VKDS_RESULT_LIST(X)                                                                 \
  X(VKDS_SUCCESS, 0, "success")                                                             \
  X(VKDS_ERROR_INVALID_ARGUMENT, -1, "invalid argument")                                    \
  X(VKDS_ERROR_NO_VULKAN, -2, "no Vulkan loader")                                           \
  X(VKDS_ERROR_NO_DEVICE, -3, "no matching Vulkan device")                                  \
  X(VKDS_ERROR_VULKAN, -4, "a Vulkan call failed")                                          \
  X(VKDS_ERROR_OUT_OF_HOST_MEMORY, -5, "out of host memory")                                \
  X(VKDS_ERROR_OUT_OF_DEVICE_MEMORY, -6, "out of device memory")                            \
  X(VKDS_ERROR_UNSUPPORTED, -7, "unsupported")                                              \
  X(VKDS_ERROR_DEVICE_LOST, -8, "device lost")                                              \
  X(VKDS_ERROR_TIMEOUT, -9, "timed out")                                                    \
  X(VKDS_ERROR_WOULD_BLOCK, -10, "would block")                                             \
  X(VKDS_ERROR_NOT_INITIALIZED, -11, "not initialized")                                     \
  X(VKDS_ERROR_ALREADY_INITIALIZED, -12, "already initialized")                             \
  X(VKDS_ERROR_OUT_OF_RANGE, -13, "index out of range")                                     \
  X(VKDS_ERROR_EMPTY, -14, "empty resource list")                                           \
  X(VKDS_ERROR_INVALID_SPIRV, -15, "invalid SPIR-V")                                        \
  X(VKDS_ERROR_COMPILE, -16, "shader compilation failed")                                   \
  X(VKDS_ERROR_ARGUMENT_MISMATCH, -17, "kernel arguments do not match the shader")          \
  X(VKDS_ERROR_ND_RANGE, -18, "launch range exceeds the kernel's range type")               \
  X(VKDS_ERROR_WRONG_CONTEXT, -19, "object belongs to another context")                     \
  X(VKDS_ERROR_LIMIT_EXCEEDED, -20, "device limit exceeded")                                \
  X(VKDS_ERROR_WRONG_RESULT, -21, "the device computed a wrong result")                      \
  X(VKDS_ERROR_WRONG_DEVICE, -22, "object belongs to another device")

typedef enum vkds_result {
#define VKDS_X_ENUM(name, value, text) name = value,
  VKDS_RESULT_LIST(VKDS_X_ENUM)
#undef VKDS_X_ENUM
} vkds_result;

/* Conventions of every vkds function: one that returns vkds_result returns VKDS_SUCCESS
 * or a negative VKDS_ERROR_* value, with vkds_last_error_message() saying why; one that
 * makes an object returns it through its last parameter (`out`), and on any failure sets
 * *out to NULL (where out is not NULL), so a variable that held a live object is
 * overwritten: keep the live one in another. */

/* A short, static, human-readable text for a result; "unknown result" for values not in
 * the list. Never NULL. */
VKDS_API const char *vkds_result_str(vkds_result result);

/* The message of the last failure of a vkds call on the calling thread (thread-local;
 * valid until the next failing vkds call on this thread). "" when nothing has failed.
 * Never NULL. Lets a program without a logger still say *why* something failed.
 * VKDS_ERROR_WOULD_BLOCK from the try and poll calls is an answer, not a failure: it
 * leaves the message as it was (and nothing is logged). VKDS_ERROR_TIMEOUT from a wait
 * given a timeout (vkds_submission_wait_timeout, vkds_policy_wait_all, ...) sets the
 * message but is logged at VKDS_LOG_INFO, not as an error, as is
 * VKDS_ERROR_ALREADY_INITIALIZED from vkds_policy_init (the answer to the loser of two
 * threads initializing one deferred policy). */
VKDS_API const char *vkds_last_error_message(void);

/* The VkResult behind the last failure on the calling thread, VK_SUCCESS when that
 * failure did not come from Vulkan (or nothing failed). After a VKDS_ERROR_TIMEOUT from
 * a wait it is VK_TIMEOUT (a status, not an error code: the wait itself did not fail). */
VKDS_API VkResult vkds_last_vk_result(void);

typedef enum vkds_log_level {
  VKDS_LOG_DEFAULT = 0, /* in a create-info: VKDS_LOG_WARN */
  VKDS_LOG_DEBUG = 1,
  VKDS_LOG_INFO = 2,
  VKDS_LOG_WARN = 3,
  VKDS_LOG_ERROR = 4,
} vkds_log_level;

/* Where a log message comes from. */
typedef enum vkds_log_source {
  VKDS_LOG_SOURCE_VKDS = 1,       /* vkds itself */
  VKDS_LOG_SOURCE_VALIDATION = 2, /* the Khronos validation layer (VK_EXT_debug_utils) */
  VKDS_LOG_SOURCE_DRIVER = 3,     /* other debug-utils messages (loader, driver) */
} vkds_log_source;

/* The logger: called from any thread vkds runs on (including threads where a
 * validation layer reports), possibly concurrently; `message` is valid only during the
 * call. A context's logger hears the failures of calls that reach that context. Those
 * that reach none log nothing: a NULL context, policy, resource or kernel argument, and
 * the sequence functions (vkds_seq_validate, vkds_seq_read, and a constructor refused
 * before it looks at a buffer's context); vkds_last_error_message() has their message.
 * A failure's message (what vkds_last_error_message() holds) longer than 1,023 bytes is
 * cut, and then ends in "..."; other messages come whole (VKDS_DUMP_ALGORITHMS's kernel
 * sources, several KiB, and the validation layer's). */
typedef void (*vkds_log_fn)(void *user, vkds_log_level level, vkds_log_source source,
                            const char *message);

/* Evaluates a vkds call once; on failure returns its result from the enclosing
 * function, which must return vkds_result. */
#define VKDS_CHECK(call)                                                                    \
  do {                                                                                      \
    vkds_result vkds_check_result_ = (call);                                                \
    if (vkds_check_result_ != VKDS_SUCCESS) return vkds_check_result_;                      \
  } while (0)

#ifdef __cplusplus
}
#endif
#endif
