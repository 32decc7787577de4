/* An NBD export in memory whose every read and write takes one token of a
 * bucket, whatever its size, as a cloud disk counts its burst credits:
 *
 *   size=SIZE       the export's size (its memory is allocated at start-up);
 *   burst=N         the bucket, in I/Os (full at the start);
 *   baseline=IOPS   the bucket's refill, I/Os a second: the rate once it is empty;
 *   peak=IOPS       the most I/Os a second while it holds tokens.
 *
 * Started by the lab tests through nbdkit's cc plugin (nbdkit cc FILE ...),
 * which compiles it at start-up (nbdkit-plugin.h: Debian's nbdkit-plugin-dev).
 *
 * Each request reserves its start time under a lock: no earlier than one peak
 * interval after the one before it, and no earlier than the bucket holds a
 * token (refilled at the baseline since the last reservation, up to the
 * burst). The request then sleeps until that time. A thread that wakes late
 * does not move the schedule, so the rates the client sees are the ones set,
 * as long as it keeps enough requests in flight.
 */

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define THREAD_MODEL NBDKIT_THREAD_MODEL_PARALLEL

static int64_t size;
static double burst, baseline, peak;
static char *disk;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* Tokens held at tokens_at (seconds, CLOCK_MONOTONIC). */
static double tokens, tokens_at;
/* The earliest start of the next request. */
static double next_start;

static double
now (void)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

static int
parse_rate (const char *key, const char *value, double *rate)
{
  char *end;
  errno = 0;
  *rate = strtod (value, &end);
  if (errno != 0 || end == value || *end != '\0' || !(*rate > 0)) {
    nbdkit_error ("%s=%s: not a positive number", key, value);
    return -1;
  }
  return 0;
}

static int
bucket_config (const char *key, const char *value)
{
  if (strcmp (key, "size") == 0) {
    size = nbdkit_parse_size (value);
    return size < 0 ? -1 : 0;
  }
  if (strcmp (key, "burst") == 0)
    return parse_rate (key, value, &burst);
  if (strcmp (key, "baseline") == 0)
    return parse_rate (key, value, &baseline);
  if (strcmp (key, "peak") == 0)
    return parse_rate (key, value, &peak);
  nbdkit_error ("unknown parameter %s", key);
  return -1;
}

static int
bucket_config_complete (void)
{
  if (size <= 0 || burst < 1 || baseline <= 0 || peak <= baseline) {
    nbdkit_error ("needs size, burst (at least 1), baseline and a peak above the baseline");
    return -1;
  }
  return 0;
}

static int
bucket_get_ready (void)
{
  disk = calloc (1, size);
  if (disk == NULL) {
    nbdkit_error ("calloc: %m");
    return -1;
  }
  tokens = burst;
  tokens_at = now ();
  next_start = tokens_at;
  return 0;
}

static void *
bucket_open (int readonly)
{
  return NBDKIT_HANDLE_NOT_NEEDED;
}

static int64_t
bucket_get_size (void *handle)
{
  return size;
}

/* Takes one token: reserves the request's start time and sleeps until it. */
static void
take_token (void)
{
  double start, held;
  struct timespec at;

  pthread_mutex_lock (&lock);
  start = now ();
  if (start < next_start)
    start = next_start;
  held = tokens + (start - tokens_at) * baseline;
  if (held > burst)
    held = burst;
  if (held < 1) {
    start += (1 - held) / baseline;
    held = 1;
  }
  tokens = held - 1;
  tokens_at = start;
  next_start = start + 1 / peak;
  pthread_mutex_unlock (&lock);

  at.tv_sec = (time_t) start;
  at.tv_nsec = (long) ((start - (double) at.tv_sec) * 1e9);
  if (at.tv_nsec >= 1000000000) {
    at.tv_sec++;
    at.tv_nsec -= 1000000000;
  }
  while (clock_nanosleep (CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR)
    ;
}

static int
bucket_pread (void *handle, void *buf, uint32_t count, uint64_t offset,
              uint32_t flags)
{
  take_token ();
  memcpy (buf, disk + offset, count);
  return 0;
}

static int
bucket_pwrite (void *handle, const void *buf, uint32_t count, uint64_t offset,
               uint32_t flags)
{
  take_token ();
  memcpy (disk + offset, buf, count);
  return 0;
}

static struct nbdkit_plugin plugin = {
  .name = "iopsbucket",
  .config = bucket_config,
  .config_complete = bucket_config_complete,
  .get_ready = bucket_get_ready,
  .open = bucket_open,
  .get_size = bucket_get_size,
  .pread = bucket_pread,
  .pwrite = bucket_pwrite,
};

NBDKIT_REGISTER_PLUGIN (plugin)
