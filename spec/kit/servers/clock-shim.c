/*
 * A server clock that tests can step at run time (LD_PRELOAD; libfaketime does not start
 * redis-server 7 here). gettimeofday() and clock_gettime(CLOCK_REALTIME...) return the
 * real time plus an offset in milliseconds, read on every call from the first 8 bytes
 * (a little-endian int64) of the file HOLDFAST_CLOCK_OFFSET_FILE names, mapped shared so
 * a write to it takes effect at once. Monotonic clocks are left alone, as a real clock
 * step leaves them. Without the variable, or with a file that cannot be mapped, the
 * offset is 0.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile int64_t *offset_ms;
static int tried;

static int64_t offset(void) {
  if (!tried) {
    tried = 1;
    const char *file = getenv("HOLDFAST_CLOCK_OFFSET_FILE");
    int fd = file ? open(file, O_RDONLY) : -1;
    if (fd >= 0) {
      void *p = mmap(NULL, 8, PROT_READ, MAP_SHARED, fd, 0);
      close(fd);
      if (p != MAP_FAILED) offset_ms = (volatile int64_t *)p;
    }
  }
  return offset_ms ? *offset_ms : 0;
}

int clock_gettime(clockid_t id, struct timespec *ts) {
  static int (*real)(clockid_t, struct timespec *);
  if (!real) real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
  int rc = real(id, ts);
  if (rc == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE)) {
    int64_t ns = (int64_t)ts->tv_sec * 1000000000LL + ts->tv_nsec + offset() * 1000000LL;
    ts->tv_sec = ns / 1000000000LL;
    ts->tv_nsec = ns % 1000000000LL;
  }
  return rc;
}

int gettimeofday(struct timeval *tv, void *tz) {
  static int (*real)(struct timeval *, void *);
  if (!real) real = (int (*)(struct timeval *, void *))dlsym(RTLD_NEXT, "gettimeofday");
  int rc = real(tv, tz);
  if (rc == 0 && tv) {
    int64_t us = (int64_t)tv->tv_sec * 1000000LL + tv->tv_usec + offset() * 1000LL;
    tv->tv_sec = us / 1000000LL;
    tv->tv_usec = us % 1000000LL;
  }
  return rc;
}
