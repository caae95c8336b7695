/* lib/kernel/spirv_cache.c: GLSL compiled once, kept on disk. With pipeline_cache_dir set,
 * every module glslang compiles is saved there under the hash of its cache key (source,
 * defines, options, target), so a new process with a warm folder runs glslang zero
 * times: the algorithm layer's generated kernels and users' GLSL kernels alike. The file
 * holds the whole key, compared on load, and the hash of its words, checked on load, so
 * a hash collision or a damaged file is a miss, never a wrong module (version 1 had no
 * words' hash: a changed constant ran; a probe). Layout: "VKDSSPV2", key bytes (u64),
 * key, words (u64), words, the words' vkds__hash (u64). */
#include "kernel_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char magic[8] = {'V', 'K', 'D', 'S', 'S', 'P', 'V', '2'};

static void path_of(const vkds_context *ctx, uint64_t hash, char *path, size_t size) {
  snprintf(path, size, "%s/vkds-glsl-%016llx.spv", ctx->pipeline_cache_dir, (unsigned long long)hash);
}

bool vkds__spirv_cache_load(const vkds_context *ctx, uint64_t hash, const char *key, uint32_t **words,
                            size_t *word_count) {
  if (!ctx->pipeline_cache_dir) return false;
  char path[1100];
  path_of(ctx, hash, path, sizeof path);
  size_t size;
  unsigned char *data = vkds__read_file(ctx, path, &size);
  if (!data) return false;
  uint64_t key_bytes = strlen(key), stored_key, count;
  bool ok = size >= 24 && memcmp(data, magic, 8) == 0;
  if (ok) {
    memcpy(&stored_key, data + 8, 8);
    ok = stored_key == key_bytes && size >= 24 + key_bytes && memcmp(data + 16, key, key_bytes) == 0;
  }
  if (ok) {
    memcpy(&count, data + 16 + key_bytes, 8);
    ok = size >= 32 + key_bytes && count > 0 && count <= (size - 32 - key_bytes) / 4 &&
         size == 32 + key_bytes + count * 4;
  }
  if (ok) {
    uint64_t stored_hash;
    memcpy(&stored_hash, data + 24 + key_bytes + count * 4, 8);
    ok = stored_hash == vkds__hash(data + 24 + key_bytes, count * 4);
  }
  if (ok && (*words = vkds__alloc_array(ctx, count, 4))) {
    memcpy(*words, data + 24 + key_bytes, count * 4);
    *word_count = count;
  } else {
    ok = false;
  }
  vkds__free(ctx, data);
  return ok;
}

void vkds__spirv_cache_store(const vkds_context *ctx, uint64_t hash, const char *key, const uint32_t *words,
                             size_t word_count) {
  if (!ctx->pipeline_cache_dir || ctx->pipeline_cache_readonly) return;
  uint64_t key_bytes = strlen(key), count = word_count;
  size_t size = 32 + key_bytes + count * 4;
  unsigned char *data = vkds__temp_alloc_raw(ctx, size);
  if (!data) return;
  memcpy(data, magic, 8);
  memcpy(data + 8, &key_bytes, 8);
  memcpy(data + 16, key, key_bytes);
  memcpy(data + 16 + key_bytes, &count, 8);
  memcpy(data + 24 + key_bytes, words, count * 4);
  uint64_t hash_of_words = vkds__hash(words, count * 4);
  memcpy(data + 24 + key_bytes + count * 4, &hash_of_words, 8);
  char path[1100];
  path_of(ctx, hash, path, sizeof path);
  int err = vkds__write_file(path, data, size);
  /* (ctx is const to the compile path; this flag is the one thing it changes) */
  if (err && !atomic_exchange((atomic_bool *)&ctx->spirv_save_failed, true))
    vkds__log(ctx, VKDS_LOG_WARN, "cannot save compiled GLSL to %s (%s); later kernels that cannot be saved are not "
              "reported", path, strerror(err));
  vkds__free(ctx, data);
}
