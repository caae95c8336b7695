/* lib/core/filter.c: the device filter language of vkds_context_info.devices and
 * VKDS_DEVICES. Terms are comma-separated: an index ("0"), a type ("gpu", "cpu",
 * "discrete", "integrated", "virtual", "other"), "vendor=ID" (decimal or 0x hex) or
 * "name=SUBSTRING" (case-insensitive); a leading '!' excludes. */
#include "internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef enum term_kind { TERM_INDEX, TERM_TYPE, TERM_GPU, TERM_VENDOR, TERM_NAME } term_kind;

typedef struct term {
  bool negate;
  term_kind kind;
  uint32_t value; /* index, VkPhysicalDeviceType or vendor id */
  char name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
} term;

struct vkds__filter {
  const vkds_context *ctx; /* its allocator */
  uint32_t count;
  term terms[];
};

static const struct {
  const char *word;
  term_kind kind;
  VkPhysicalDeviceType type;
} TYPE_WORDS[] = {
    {"gpu", TERM_GPU, 0},
    {"cpu", TERM_TYPE, VK_PHYSICAL_DEVICE_TYPE_CPU},
    {"discrete", TERM_TYPE, VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU},
    {"integrated", TERM_TYPE, VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU},
    {"virtual", TERM_TYPE, VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU},
    {"other", TERM_TYPE, VK_PHYSICAL_DEVICE_TYPE_OTHER},
};

/* Parses all of [s, s+len) as an unsigned 32-bit number (decimal or 0x hex). A leading
 * 0 is not octal: strtoull's base 0 took "010" as device 8 and refused "vendor=04318"
 * (a new-user probe). */
static bool parse_u32(const char *s, size_t len, uint32_t *out) {
  char buf[32];
  if (len == 0 || len >= sizeof buf || !isdigit((unsigned char)s[0])) return false;
  memcpy(buf, s, len);
  buf[len] = '\0';
  bool hex = len > 2 && buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'X');
  if (!isxdigit((unsigned char)buf[hex ? 2 : 0])) return false;
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(buf + (hex ? 2 : 0), &end, hex ? 16 : 10);
  if (errno || *end || v > UINT32_MAX) return false;
  *out = (uint32_t)v;
  return true;
}

static bool prefix(const char *s, size_t len, const char *p) {
  size_t n = strlen(p);
  return len >= n && strncasecmp(s, p, n) == 0;
}

/* Parses one trimmed term; false when malformed. */
static bool parse_term(const char *s, size_t len, term *t) {
  *t = (term){0};
  if (len && *s == '!') t->negate = true, ++s, --len;
  while (len && isspace((unsigned char)*s)) ++s, --len;
  if (len == 0) return false;
  if (isdigit((unsigned char)*s)) {
    t->kind = TERM_INDEX;
    return parse_u32(s, len, &t->value);
  }
  if (prefix(s, len, "vendor=")) {
    t->kind = TERM_VENDOR;
    return parse_u32(s + 7, len - 7, &t->value);
  }
  if (prefix(s, len, "name=")) {
    t->kind = TERM_NAME;
    if (len - 5 == 0 || len - 5 >= sizeof t->name) return false;
    memcpy(t->name, s + 5, len - 5);
    return true;
  }
  for (size_t i = 0; i < sizeof TYPE_WORDS / sizeof TYPE_WORDS[0]; ++i)
    if (strlen(TYPE_WORDS[i].word) == len && strncasecmp(s, TYPE_WORDS[i].word, len) == 0) {
      t->kind = TYPE_WORDS[i].kind;
      t->value = (uint32_t)TYPE_WORDS[i].type;
      return true;
    }
  return false;
}

vkds_result vkds__filter_parse(const vkds_context *ctx, const char *text, const char *where, vkds__filter **out) {
  *out = NULL;
  size_t terms = 1;
  for (const char *p = text; *p; ++p) terms += *p == ',';
  vkds__filter *f = vkds__temp_alloc(ctx, sizeof *f + terms * sizeof(term));
  if (!f) return vkds__fail(ctx, VKDS_ERROR_OUT_OF_HOST_MEMORY, VK_SUCCESS, "device filter");
  f->ctx = ctx;
  const char *p = text;
  while (*p && isspace((unsigned char)*p)) ++p;
  if (*p == '\0') { /* an empty filter restricts nothing */
    *out = f;
    return VKDS_SUCCESS;
  }
  for (;;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    const char *s = p;
    while (len && isspace((unsigned char)*s)) ++s, --len;
    while (len && isspace((unsigned char)s[len - 1])) --len;
    if (!parse_term(s, len, &f->terms[f->count])) {
      vkds__free(ctx, f);
      return vkds__fail(ctx, VKDS_ERROR_INVALID_ARGUMENT, VK_SUCCESS,
                        "malformed device filter term '%.*s' in %s \"%s\"; terms are an index, "
                        "gpu, cpu, discrete, integrated, virtual, other, vendor=ID or "
                        "name=TEXT, each optionally preceded by '!'",
                        (int)len, s, where, text);
    }
    ++f->count;
    if (!end) break;
    p = end + 1;
  }
  *out = f;
  return VKDS_SUCCESS;
}

static bool term_match(const term *t, uint32_t index, const VkPhysicalDeviceProperties *props) {
  switch (t->kind) {
  case TERM_INDEX: return index == t->value;
  case TERM_TYPE: return (uint32_t)props->deviceType == t->value;
  case TERM_GPU:
    return props->deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU ||
           props->deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ||
           props->deviceType == VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU;
  case TERM_VENDOR: return props->vendorID == t->value;
  case TERM_NAME: return vkds__str_icontains(props->deviceName, t->name);
  }
  return false;
}

bool vkds__filter_match(const vkds__filter *f, uint32_t index,
                        const VkPhysicalDeviceProperties *props) {
  if (!f) return true;
  bool any_positive = false, positive_hit = false;
  for (uint32_t i = 0; i < f->count; ++i) {
    const term *t = &f->terms[i];
    bool hit = term_match(t, index, props);
    if (t->negate && hit) return false;
    if (!t->negate) any_positive = true, positive_hit |= hit;
  }
  return !any_positive || positive_hit;
}

void vkds__filter_free(vkds__filter *f) {
  if (f) vkds__free(f->ctx, f);
}
