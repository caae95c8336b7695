/* tests/fake_backend.c */
#include "fake_backend.h"

#include <pthread.h>
#include <stdlib.h>

const vkds_resource_kind fake_kind = {.name = "fake"};

typedef struct held {
  vkds_selection *sel;
  uint64_t key;
  struct held *next;
} held;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bool holding;
static held *queue_head, **queue_tail = &queue_head;

void fake_hold_completions(bool hold) {
  pthread_mutex_lock(&lock);
  holding = hold;
  pthread_mutex_unlock(&lock);
}

static void finish(vkds_selection *sel, uint64_t key) {
  fake_resource *r = vkds_selection_resource(sel);
  vkds_selection_report(sel, VKDS_REPORT_TIME, key, r->cost_ns[key % 4]);
  vkds_selection_report(sel, VKDS_REPORT_COMPLETION, key, 0);
}

int fake_complete(int id) {
  held *done = NULL, **tail = &done;
  pthread_mutex_lock(&lock);
  for (held **h = &queue_head; *h;) {
    fake_resource *r = vkds_selection_resource((*h)->sel);
    if (id < 0 || r->id == id) {
      held *x = *h;
      *h = x->next;
      x->next = NULL;
      *tail = x, tail = &x->next;
    } else {
      h = &(*h)->next;
    }
  }
  queue_tail = &queue_head;
  while (*queue_tail) queue_tail = &(*queue_tail)->next;
  pthread_mutex_unlock(&lock);
  int n = 0;
  for (held *x = done, *next; x; x = next, ++n) {
    next = x->next;
    finish(x->sel, x->key);
    vkds_selection_release(x->sel);
    free(x);
  }
  return n;
}

static uint32_t fake_supports(vkds_backend *b, uint32_t index, uint32_t reports) {
  (void)b, (void)index;
  return reports;
}

static vkds_result fake_after(vkds_backend *b, vkds_selection *sel, const vkds_task_info *info, vkds_task *task,
                              void *wait_object, vkds_submission **out) {
  VKDS_CHECK(vkds_backend_base_ops.instrument_after(b, sel, info, task, wait_object, out));
  pthread_mutex_lock(&lock);
  bool hold = holding;
  if (hold) {
    held *h = calloc(1, sizeof *h);
    vkds_selection_retain(sel);
    h->sel = sel, h->key = info->key;
    *queue_tail = h, queue_tail = &h->next;
  }
  pthread_mutex_unlock(&lock);
  if (!hold) finish(sel, info->key);
  return VKDS_SUCCESS;
}

/* Waits are instant: a held task counts as done for waiting (the test controls reports). */
static vkds_result fake_wait_all(vkds_backend *b, uint64_t timeout_ns) {
  (void)b, (void)timeout_ns;
  return VKDS_SUCCESS;
}

const vkds_backend_ops fake_backend_ops = {
    .version = VKDS_BACKEND_OPS_VERSION,
    .name = "fake",
    .supports = fake_supports,
    .instrument_after = fake_after,
    .wait_all = fake_wait_all,
};

vkds_result fake_task(void *user, const vkds_task *task, void **wait_object) {
  (void)wait_object;
  fake_resource *r = task->resource;
  atomic_fetch_add(&r->runs, 1);
  if (user) *(int *)user = r->id;
  return VKDS_SUCCESS;
}
