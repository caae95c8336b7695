/* examples/list_resources.c: the first thing to run. Creates a context over every
 * device and every compute queue on this machine and prints what vkds calls a
 * "resource": one VkQueue, with the facts of the device it belongs to.
 *
 *   VKDS_DEVICES=gpu ./list_resources      only GPUs
 *   VKDS_VALIDATION=1 ./list_resources     with the Khronos validation layer
 *
 * Exits 0 when the context was made and every resource could be described. */
#include <stdatomic.h>
#include <stdio.h>

#include <vkds/vkds.h>

/* Every vkds call returns a vkds_result. On failure this prints which call failed, the
 * result's name and the thread's last error message (the "why"), then jumps to the
 * cleanup at the end of main. */
#define CHECK(call)                                                                            \
  do {                                                                                         \
    vkds_result check_r_ = (call);                                                             \
    if (check_r_ != VKDS_SUCCESS) {                                                            \
      /* (the message begins with the result's name) */                                        \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, vkds_last_error_message()); \
      goto done;                                                                               \
    }                                                                                          \
  } while (0)

/* vkds never prints. Its logger receives vkds's own warnings and, with validation on,
 * the validation layer's messages; any of the latter means a bug (in vkds or here), so
 * they are counted and main fails if there was one. The logger may be called from any
 * thread, hence the atomic. */
static atomic_int validation_messages;
static void logger(void *user, vkds_log_level level, vkds_log_source source, const char *message) {
  (void)user;
  if (source == VKDS_LOG_SOURCE_VALIDATION && level >= VKDS_LOG_WARN) atomic_fetch_add(&validation_messages, 1);
  fprintf(stderr, "[%s] %s\n", source == VKDS_LOG_SOURCE_VALIDATION ? "validation" : "vkds", message);
}

int main(void) {
  int status = 1;
  vkds_context *ctx = NULL;

  /* A zero-initialised create-info means: every device, every compute queue. Only the
   * logger is set; VKDS_DEVICES and VKDS_VALIDATION from the environment still apply. */
  CHECK(vkds_context_create(&(vkds_context_info){.log = logger, .log_level = VKDS_LOG_WARN}, &ctx));

  uint32_t n = vkds_context_resource_count(ctx), prev_device = 0;
  printf("%u resource(s) on %u device(s), validation %s\n", n, vkds_context_device_count(ctx),
         vkds_context_validation_enabled(ctx) ? "on" : "off");

  for (uint32_t i = 0; i < n; ++i) {
    vkds_resource_info info;
    CHECK(vkds_resource_get_info(vkds_context_resource(ctx, i), &info));
    /* Resources are ordered by device, then family, then queue. The facts of a device
     * (name, memory, features) repeat in each of its resources: print them once, when a
     * new device starts. Queues of one device share its memory, so a buffer made on one
     * is usable from all of them. */
    if (i == 0 || info.device_index != prev_device) {
      printf("device %u: %s (%s, driver %s)\n", info.device_index, info.device_name,
             vkds_device_type_str(info.device_type), info.driver_name);
      printf("  subgroup size %u; buffer device address %s, int64 %s, float64 %s\n", info.subgroup_size,
             info.buffer_device_address ? "yes" : "no", info.shader_int64 ? "yes" : "no",
             info.shader_float64 ? "yes" : "no");
      for (uint32_t h = 0; h < info.heap_count; ++h)
        printf("  heap %u: %10.1f MiB%s\n", h, (double)info.heaps[h].size / (1024.0 * 1024.0),
               info.heaps[h].device_local ? " (device-local)" : "");
      prev_device = info.device_index;
    }
    printf("  resource %u: queue family %u, queue %u of %u\n", i, info.queue_family, info.queue_index,
           info.family_queue_count);
  }
  status = 0;

done:
  vkds_context_destroy(ctx); /* NULL is a no-op, so the failure path can call it too */
  if (atomic_load(&validation_messages) > 0) {
    fprintf(stderr, "%d validation message(s)\n", atomic_load(&validation_messages));
    status = 1;
  }
  return status;
}
