/* tests/test_unload.c: libvkds loaded as a plugin is (dlopen), used on a thread, unloaded
 * (dlclose), and the thread exits afterwards. A thread-exit hook vkds registered (its
 * cached selection's pthread key) once ran code of the unloaded library there: SIGSEGV
 * in the thread's exit (a concurrency probe, session 29). First, two copies of the
 * library loaded at once, as two plugins that each ship vkds are: its thread-locals
 * were initial-exec, which made the second fail ("cannot allocate memory in static TLS
 * block": a packaging probe, session 37). Not linked with libvkds, so
 * that dlclose really unloads it; argv[1] is its path (tests/meson.build). Exit status
 * 0: the thread exited cleanly; the test cannot tell when the library stays loaded
 * (it says so), as then there is nothing to fail. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vkds/vkds.h>

static void *lib;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int stage; /* 1: the worker is done with vkds; 2: the library is unloaded */
static int failures;

static vkds_result record_nothing(void *user, const vkds_task *task, void **wait_object) {
  (void)user, (void)task, (void)wait_object;
  return VKDS_SUCCESS;
}

static void set_stage(int s) {
  pthread_mutex_lock(&lock);
  stage = s;
  pthread_cond_broadcast(&changed);
  pthread_mutex_unlock(&lock);
}

static void wait_stage(int s) {
  pthread_mutex_lock(&lock);
  while (stage != s) pthread_cond_wait(&changed, &lock);
  pthread_mutex_unlock(&lock);
}

#define CHECK(call)                                                                           \
  do {                                                                                        \
    vkds_result r_ = (call);                                                                  \
    if (r_ != VKDS_SUCCESS) {                                                                 \
      fprintf(stderr, "test_unload: %s: %d\n", #call, (int)r_);                              \
      ++failures;                                                                             \
    }                                                                                         \
  } while (0)

/* A context, a policy and a task submitted and waited (a selection made and released on
 * this thread: what registers the thread-exit hook), all destroyed; then it waits for
 * the unload and exits. */
static void *worker(void *arg) {
  (void)arg;
  vkds_result (*context_create)(const vkds_context_info *, vkds_context **);
  void (*context_destroy)(vkds_context *);
  vkds_result (*policy_create)(const vkds_policy_info *, vkds_policy **);
  void (*policy_release)(vkds_policy *);
  vkds_result (*submit_and_wait)(vkds_policy *, const vkds_task_info *);
  /* (a data pointer from dlsym copied into a function pointer: ISO C has no cast for it) */
#define LOAD(var, name)                                                                       \
  do {                                                                                        \
    void *sym_ = dlsym(lib, name);                                                            \
    memcpy(&var, &sym_, sizeof var);                                                          \
  } while (0)
  LOAD(context_create, "vkds_context_create");
  LOAD(context_destroy, "vkds_context_destroy");
  LOAD(policy_create, "vkds_policy_create");
  LOAD(policy_release, "vkds_policy_release");
  LOAD(submit_and_wait, "vkds_submit_and_wait");
  if (!context_create || !context_destroy || !policy_create || !policy_release || !submit_and_wait) {
    fprintf(stderr, "test_unload: a symbol is missing\n");
    ++failures;
  } else {
    vkds_context *ctx = NULL;
    vkds_policy *p = NULL;
    CHECK(context_create(&(vkds_context_info){0}, &ctx));
    CHECK(policy_create(&(vkds_policy_info){.kind = VKDS_POLICY_ROUND_ROBIN, .resources = {.context = ctx}}, &p));
    for (int i = 0; i < 3 && p; ++i) CHECK(submit_and_wait(p, &(vkds_task_info){.fn = record_nothing}));
    policy_release(p);
    context_destroy(ctx);
  }
  set_stage(1);
  wait_stage(2);
  return NULL; /* the thread's exit: nothing of libvkds may run here now */
}

/* Copies the library to two files of their own and loads both (dlopen takes a path it
 * has loaded for the same library), each asked for its version. */
static int two_copies(const char *path) {
  char dir[] = "/tmp/vkds-unload-XXXXXX", copy[2][64];
  if (!mkdtemp(dir)) return perror("test_unload: mkdtemp"), 1;
  void *handles[2] = {NULL, NULL};
  int bad = 0;
  for (int i = 0; i < 2; ++i) {
    snprintf(copy[i], sizeof copy[i], "%s/copy%d.so", dir, i);
    FILE *in = fopen(path, "rb"), *out = fopen(copy[i], "wb");
    char buf[65536];
    size_t n;
    while (in && out && (n = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, n, out);
    if (!in || !out || ferror(in) || fclose(out) != 0) ++bad, fprintf(stderr, "test_unload: copying %s failed\n", path);
    if (in) fclose(in);
    if (bad) break;
    if (!(handles[i] = dlopen(copy[i], RTLD_NOW | RTLD_LOCAL))) {
      fprintf(stderr, "test_unload: copy %d of the library: dlopen: %s\n", i, dlerror());
      ++bad;
      continue;
    }
    const char *(*version)(void);
    void *sym = dlsym(handles[i], "vkds_version");
    memcpy(&version, &sym, sizeof version);
    if (!version || !version()[0]) ++bad, fprintf(stderr, "test_unload: copy %d has no version\n", i);
  }
  if (handles[0] && handles[1] && handles[0] == handles[1]) ++bad, fprintf(stderr, "test_unload: one library, not two\n");
  for (int i = 0; i < 2; ++i) {
    if (handles[i]) dlclose(handles[i]);
    remove(copy[i]);
  }
  remove(dir);
  printf("test_unload: two copies of the library loaded side by side: %s\n", bad ? "failed" : "ok");
  return bad;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_unload PATH-OF-libvkds.so\n");
    return 2;
  }
  if (two_copies(argv[1])) return 1;
  if (!(lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL))) {
    fprintf(stderr, "test_unload: dlopen: %s\n", dlerror());
    return 1;
  }
  pthread_t t;
  if (pthread_create(&t, NULL, worker, NULL) != 0) return 1;
  wait_stage(1);
  if (dlclose(lib) != 0) {
    fprintf(stderr, "test_unload: dlclose: %s\n", dlerror());
    ++failures;
  }
  void *still = dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD);
  if (still) {
    printf("test_unload: the library stayed loaded after dlclose: nothing to test\n");
    dlclose(still);
  }
  set_stage(2);
  pthread_join(t, NULL);
  printf("test_unload: the worker exited after the unload; %d failures\n", failures);
  return failures ? 1 : 0;
}
