/* examples/cpu_pool.c: the thread pool itself (the backend is in cpu_pool_backend.c). */
/* (POSIX's clock_gettime and CLOCK_MONOTONIC: built with -std=c11 alone, as a user would) */
#define _POSIX_C_SOURCE 200809L
#include "cpu_pool.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

struct cpu_task {
  cpu_pool *pool;
  void (*fn)(void *);
  void *arg;
  uint64_t elapsed_ns;
  bool ran;  /* fn returned; on_done (if any) is being called */
  bool done; /* fn returned and on_done was called: waiters may go */
  bool released; /* the handle's owner is done with it (cpu_task_release) */
  void (*on_done)(void *);
  void *on_done_arg;
  cpu_task *next_queued, *next_owned, *prev_owned;
};

struct cpu_pool {
  pthread_mutex_t lock;
  pthread_cond_t work, idle;
  cpu_task *head, *tail, *owned;
  int running, threads;
  bool stop;
  pthread_t thread[];
};

/* Unlinks and frees a task that ran and was released (with the lock held). */
static void forget(cpu_pool *p, cpu_task *t) {
  if (t->prev_owned) t->prev_owned->next_owned = t->next_owned;
  else p->owned = t->next_owned;
  if (t->next_owned) t->next_owned->prev_owned = t->prev_owned;
  free(t);
}

static void *worker(void *arg) {
  cpu_pool *p = arg;
  pthread_mutex_lock(&p->lock);
  for (;;) {
    while (!p->head && !p->stop) pthread_cond_wait(&p->work, &p->lock);
    if (!p->head) break;
    cpu_task *t = p->head;
    p->head = t->next_queued;
    if (!p->head) p->tail = NULL;
    ++p->running;
    pthread_mutex_unlock(&p->lock);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    t->fn(t->arg);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    pthread_mutex_lock(&p->lock);
    t->elapsed_ns = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000u + (uint64_t)t1.tv_nsec - (uint64_t)t0.tv_nsec;
    t->ran = true;
    void (*cb)(void *) = t->on_done;
    pthread_mutex_unlock(&p->lock);
    if (cb) cb(t->on_done_arg); /* before waiters wake: a waiter sees the report made */
    pthread_mutex_lock(&p->lock);
    t->done = true;
    --p->running;
    if (t->released) forget(p, t); /* (nobody waits for a released task) */
    pthread_cond_broadcast(&p->idle);
  }
  pthread_mutex_unlock(&p->lock);
  return NULL;
}

cpu_pool *cpu_pool_create(int threads) {
  cpu_pool *p = calloc(1, sizeof *p + (size_t)threads * sizeof(pthread_t));
  if (!p) return NULL;
  pthread_mutex_init(&p->lock, NULL);
  pthread_cond_init(&p->work, NULL);
  pthread_cond_init(&p->idle, NULL);
  p->threads = threads;
  for (int i = 0; i < threads; ++i) pthread_create(&p->thread[i], NULL, worker, p);
  return p;
}

cpu_task *cpu_pool_run(cpu_pool *p, void (*fn)(void *), void *arg) {
  cpu_task *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->pool = p;
  t->fn = fn;
  t->arg = arg;
  pthread_mutex_lock(&p->lock);
  t->next_owned = p->owned;
  if (p->owned) p->owned->prev_owned = t;
  p->owned = t;
  if (p->tail) p->tail->next_queued = t;
  else p->head = t;
  p->tail = t;
  pthread_cond_signal(&p->work);
  pthread_mutex_unlock(&p->lock);
  return t;
}

void cpu_task_release(cpu_task *t) {
  cpu_pool *p = t->pool;
  pthread_mutex_lock(&p->lock);
  if (t->done) forget(p, t);
  else t->released = true; /* its worker frees it once it ran */
  pthread_mutex_unlock(&p->lock);
}

void cpu_task_wait(cpu_task *t) {
  pthread_mutex_lock(&t->pool->lock);
  while (!t->done) pthread_cond_wait(&t->pool->idle, &t->pool->lock);
  pthread_mutex_unlock(&t->pool->lock);
}

uint64_t cpu_task_elapsed_ns(const cpu_task *t) {
  pthread_mutex_lock(&t->pool->lock);
  uint64_t ns = t->elapsed_ns;
  pthread_mutex_unlock(&t->pool->lock);
  return ns;
}

void cpu_task_on_done(cpu_task *t, void (*done)(void *), void *arg) {
  pthread_mutex_lock(&t->pool->lock);
  bool already = t->ran;
  if (!already) t->on_done = done, t->on_done_arg = arg;
  pthread_mutex_unlock(&t->pool->lock);
  if (already) done(arg);
}

void cpu_pool_wait_idle(cpu_pool *p) {
  pthread_mutex_lock(&p->lock);
  while (p->head || p->running) pthread_cond_wait(&p->idle, &p->lock);
  pthread_mutex_unlock(&p->lock);
}

void cpu_pool_destroy(cpu_pool *p) {
  if (!p) return;
  pthread_mutex_lock(&p->lock);
  p->stop = true;
  pthread_cond_broadcast(&p->work);
  pthread_mutex_unlock(&p->lock);
  for (int i = 0; i < p->threads; ++i) pthread_join(p->thread[i], NULL);
  for (cpu_task *t = p->owned, *next; t; t = next) {
    next = t->next_owned;
    free(t);
  }
  pthread_cond_destroy(&p->work);
  pthread_cond_destroy(&p->idle);
  pthread_mutex_destroy(&p->lock);
  free(p);
}
