/* examples/sort_records.c: sorting with vkds (vkds/algorithm.h, "sorting"). Records of a
 * score (float) and an id (uint32), kept as two host arrays, are sorted three ways:
 *   - vkds_sort: the scores alone, descending (a radix sort by value);
 *   - vkds_sort_by_key: the scores with their ids, ascending (the ids follow their score;
 *     equal scores keep their order: stable);
 *   - vkds_merge_sort of a zip of both arrays, by a GLSL comparator: by the score's
 *     magnitude, an order the radix sort does not know. The zip's tuples are (p0, p1) =
 *     (score, id), and both arrays are written in place;
 * then the sorted records are searched by the same comparator (vkds_is_sorted_by,
 * vkds_lower_bound_by, vkds_upper_bound_by: where each magnitude's run begins and ends),
 * and whole records are kept by a predicate over both fields (vkds_copy_if of the zip into
 * a zip of two other arrays: the scores widened to double on the way).
 * Host memory is staged: copied to the device and back. Every result is checked on the
 * host. */
#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vkds/vkds.h>

#define CHECK(call)                                                                            \
  do {                                                                                         \
    vkds_result check_r_ = (call);                                                             \
    if (check_r_ != VKDS_SUCCESS) {                                                            \
      /* (the message begins with the result's name) */                                        \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, vkds_last_error_message()); \
      goto done;                                                                               \
    }                                                                                          \
  } while (0)

/* Validation-layer messages mean a bug: count them and fail (see list_resources.c). */
static atomic_int validation_messages;
static void logger(void *user, vkds_log_level level, vkds_log_source source, const char *message) {
  (void)user;
  if (source == VKDS_LOG_SOURCE_VALIDATION && level >= VKDS_LOG_WARN) atomic_fetch_add(&validation_messages, 1);
  fprintf(stderr, "[%s] %s\n", source == VKDS_LOG_SOURCE_VALIDATION ? "validation" : "vkds", message);
}

enum { N = 100000 };
static float score[N], original_score[N];
static uint32_t id[N], kept_id[N];
static double kept_score[N];

/* Scores in steps of 0.25 between -50 and 50: many ties, so that stability shows. */
static void make_records(void) {
  uint32_t x = 12345u;
  for (uint32_t i = 0; i < N; ++i) {
    x = x * 1664525u + 1013904223u;
    score[i] = original_score[i] = (float)((int)(x >> 16) % 401 - 200) * 0.25f;
    id[i] = i;
  }
}

/* Whether each id still carries its own score, and equal keys kept the ids' order. */
static bool ids_follow_scores(bool by_magnitude) {
  for (uint32_t i = 0; i < N; ++i) {
    if (score[i] != original_score[id[i]]) return false;
    if (i == 0) continue;
    float a = by_magnitude ? fabsf(score[i - 1]) : score[i - 1], b = by_magnitude ? fabsf(score[i]) : score[i];
    if (a > b || (a == b && id[i - 1] > id[i])) return false;
  }
  return true;
}

int main(void) {
  int status = 1;
  bool ok = true;
  vkds_context *ctx = NULL;
  vkds_policy *pol = NULL;
  CHECK(vkds_context_create(&(vkds_context_info){.log = logger, .log_level = VKDS_LOG_WARN}, &ctx));
  /* every queue of every device; each call picks one (VKDS_POLICY_DEFAULT: dynamic load) */
  CHECK(vkds_policy_create(&(vkds_policy_info){.resources = {.context = ctx}}, &pol));

  /* 1. the scores alone, descending */
  make_records();
  vkds_seq scores = vkds_seq_host(score, N, VKDS_F32);
  CHECK(vkds_sort(pol, &scores, VKDS_SORT_DESCENDING));
  bool descending = true;
  for (uint32_t i = 1; i < N; ++i) descending &= score[i - 1] >= score[i];
  printf("vkds_sort, descending:            highest %6.2f, lowest %6.2f  %s\n", score[0], score[N - 1],
         descending ? "ok" : "WRONG");
  ok &= descending;

  /* 2. scores with their ids, ascending, stable */
  make_records();
  vkds_seq ids = vkds_seq_host(id, N, VKDS_U32);
  CHECK(vkds_sort_by_key(pol, &scores, &ids, VKDS_SORT_ASCENDING));
  bool follow = ids_follow_scores(false);
  printf("vkds_sort_by_key, ascending:      first (%6.2f, id %5u)      %s\n", score[0], id[0], follow ? "ok" : "WRONG");
  ok &= follow;

  /* 3. the records as one sequence (a zip of both arrays), by the score's magnitude */
  make_records();
  vkds_seq parts[2] = {scores, ids};
  vkds_seq records = vkds_seq_zip(parts, 2);
  CHECK(vkds_merge_sort(pol, &records, "abs(a.p0) < abs(b.p0)"));
  follow = ids_follow_scores(true);
  printf("vkds_merge_sort, by |score|:      first (%6.2f, id %5u)      %s\n", score[0], id[0], follow ? "ok" : "WRONG");
  ok &= follow;

  /* 4. the same comparator orders the searches: the records whose |score| is 10 */
  bool sorted = false;
  CHECK(vkds_is_sorted_by(pol, &records, "abs(a.p0) < abs(b.p0)", &sorted));
  float needle_score = 10.0f;
  uint32_t needle_id = 0;
  uint64_t first = 0, end = 0;
  vkds_seq needle_parts[2] = {vkds_seq_host(&needle_score, 1, VKDS_F32), vkds_seq_host(&needle_id, 1, VKDS_U32)};
  vkds_seq needle = vkds_seq_zip(needle_parts, 2);
  vkds_seq first_seq = vkds_seq_host(&first, 1, VKDS_U64), end_seq = vkds_seq_host(&end, 1, VKDS_U64);
  CHECK(vkds_lower_bound_by(pol, &records, &needle, &first_seq, "abs(a.p0) < abs(b.p0)"));
  CHECK(vkds_upper_bound_by(pol, &records, &needle, &end_seq, "abs(a.p0) < abs(b.p0)"));
  bool found = sorted && first <= end && end <= N;
  for (uint64_t i = 0; i < N && found; ++i) found = (fabsf(score[i]) == 10.0f) == (i >= first && i < end);
  printf("vkds_lower/upper_bound_by, |10|:  records %llu to %llu          %s\n", (unsigned long long)first,
         (unsigned long long)end, found ? "ok" : "WRONG");
  ok &= found;

  /* 5. whole records kept by a predicate over the tuple: positive scores of even ids */
  make_records();
  vkds_seq kept_parts[2] = {vkds_seq_host(kept_score, N, VKDS_F64), vkds_seq_host(kept_id, N, VKDS_U32)};
  vkds_seq kept = vkds_seq_zip(kept_parts, 2);
  uint64_t count = 0, want = 0;
  CHECK(vkds_copy_if(pol, &records, &kept, "x.p0 > 0.0 && x.p1 % 2u == 0u", &count));
  bool same = true;
  for (uint32_t i = 0; i < N; ++i)
    if (score[i] > 0 && id[i] % 2 == 0) {
      same &= kept_score[want] == score[i] && kept_id[want] == id[i];
      ++want;
    }
  same &= count == want;
  printf("vkds_copy_if of records:          %llu kept, first (%6.2f, id %5u)  %s\n", (unsigned long long)count,
         kept_score[0], kept_id[0], same ? "ok" : "WRONG");
  ok &= same;

  if (ok) status = 0;

done:
  vkds_policy_release(pol);
  vkds_context_destroy(ctx);
  if (atomic_load(&validation_messages) > 0) {
    fprintf(stderr, "%d validation message(s)\n", atomic_load(&validation_messages));
    status = 1;
  }
  return status;
}
