/* An allocation tracer for the tests (see malloc_trace.py): preloaded into a child process, it
 * records every malloc, calloc, realloc and aligned allocation made while tracing is on, with the
 * call stack that made it, and forgets the ones freed. mt_dump writes the live ones ("size frame
 * frame ...", one a line) and the process's memory map beside them, for symbolizing.
 * Built by the tests with the system C compiler; not part of the package. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define FRAMES 14
#define CAPACITY (1 << 17)

typedef struct {
  void *pointer;
  size_t size;
  void *frames[FRAMES];
  int state; /* 0 empty, 1 live, 2 freed */
} record;

static record table[CAPACITY];
static size_t live_count;
static volatile int enabled, overflowed;
static __thread int busy; /* set while the tracer itself runs: its own allocations are not recorded */
static volatile int lock;

static void *(*real_malloc)(size_t);
static void (*real_free)(void *);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static void *(*real_memalign)(size_t, size_t);

/* dlsym may allocate before the real functions are known: it gets bytes from here */
static char bootstrap[65536];
static size_t bootstrap_used;

static void *from_bootstrap(size_t n) {
  void *p = bootstrap + bootstrap_used;
  bootstrap_used += (n + 15) & ~(size_t)15;
  return bootstrap_used <= sizeof bootstrap ? p : NULL;
}

static void resolve(void) {
  if (real_malloc) return;
  busy = 1;
  real_malloc = dlsym(RTLD_NEXT, "malloc");
  real_free = dlsym(RTLD_NEXT, "free");
  real_calloc = dlsym(RTLD_NEXT, "calloc");
  real_realloc = dlsym(RTLD_NEXT, "realloc");
  real_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
  real_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
  real_memalign = dlsym(RTLD_NEXT, "memalign");
  busy = 0;
}

static void acquire(void) { while (__sync_lock_test_and_set(&lock, 1)) {} }
static void release(void) { __sync_lock_release(&lock); }
static size_t slot_of(void *p) { return (size_t)(((uintptr_t)p >> 4) * 2654435761u) & (CAPACITY - 1); }

static void remember(void *p, size_t n) {
  if (!enabled || busy || !p) return;
  busy = 1;
  void *frames[FRAMES + 1];
  int depth = backtrace(frames, FRAMES + 1);
  acquire();
  if (live_count >= CAPACITY - CAPACITY / 8) {
    overflowed = 1;
  } else {
    size_t h = slot_of(p);
    while (table[h].state == 1) h = (h + 1) & (CAPACITY - 1);
    table[h].pointer = p;
    table[h].size = n;
    memset(table[h].frames, 0, sizeof table[h].frames);
    for (int i = 1; i < depth; i++) table[h].frames[i - 1] = frames[i];
    table[h].state = 1;
    live_count++;
  }
  release();
  busy = 0;
}

static void forget(void *p) {
  if (!p) return;
  acquire();
  for (size_t h = slot_of(p); table[h].state != 0; h = (h + 1) & (CAPACITY - 1)) {
    if (table[h].state == 1 && table[h].pointer == p) {
      table[h].state = 2;
      live_count--;
      break;
    }
  }
  release();
}

void *malloc(size_t n) {
  if (!real_malloc) {
    if (busy) return from_bootstrap(n);
    resolve();
  }
  void *p = real_malloc(n);
  remember(p, n);
  return p;
}

void *calloc(size_t count, size_t n) {
  if (!real_calloc) {
    if (busy) {
      void *p = from_bootstrap(count * n);
      if (p) memset(p, 0, count * n);
      return p;
    }
    resolve();
  }
  void *p = real_calloc(count, n);
  remember(p, count * n);
  return p;
}

void free(void *p) {
  if ((char *)p >= bootstrap && (char *)p < bootstrap + sizeof bootstrap) return;
  resolve();
  forget(p);
  real_free(p);
}

void *realloc(void *old, size_t n) {
  resolve();
  if ((char *)old >= bootstrap && (char *)old < bootstrap + sizeof bootstrap) {
    void *p = real_malloc(n);
    if (p) memcpy(p, old, n);
    remember(p, n);
    return p;
  }
  forget(old);
  void *p = real_realloc(old, n);
  remember(p, n);
  return p;
}

int posix_memalign(void **out, size_t alignment, size_t n) {
  resolve();
  int status = real_posix_memalign(out, alignment, n);
  if (!status) remember(*out, n);
  return status;
}

void *aligned_alloc(size_t alignment, size_t n) {
  resolve();
  void *p = real_aligned_alloc(alignment, n);
  remember(p, n);
  return p;
}

void *memalign(size_t alignment, size_t n) {
  resolve();
  void *p = real_memalign(alignment, n);
  remember(p, n);
  return p;
}

/* Starts a trace: forgets what was recorded before. */
void mt_on(void) {
  void *frames[4];
  busy = 1;
  backtrace(frames, 4); /* loads the unwinder now, not inside a traced allocation */
  busy = 0;
  acquire();
  memset(table, 0, sizeof table);
  live_count = 0;
  overflowed = 0;
  release();
  enabled = 1;
}

void mt_off(void) { enabled = 0; }

/* Writes the live records to `path` and the memory map to `path`.maps; returns -1 if the table overflowed. */
int mt_dump(const char *path) {
  busy = 1;
  FILE *out = fopen(path, "w");
  for (size_t i = 0; out && i < CAPACITY; i++) {
    if (table[i].state != 1) continue;
    fprintf(out, "%zu", table[i].size);
    for (int j = 0; j < FRAMES; j++) fprintf(out, " %p", table[i].frames[j]);
    fputc('\n', out);
  }
  if (out) fclose(out);
  char maps_path[4096];
  snprintf(maps_path, sizeof maps_path, "%s.maps", path);
  FILE *maps = fopen("/proc/self/maps", "r"), *copy = fopen(maps_path, "w");
  char chunk[4096];
  size_t k;
  while (maps && copy && (k = fread(chunk, 1, sizeof chunk, maps)) > 0) fwrite(chunk, 1, k, copy);
  if (maps) fclose(maps);
  if (copy) fclose(copy);
  busy = 0;
  return overflowed ? -1 : 0;
}
