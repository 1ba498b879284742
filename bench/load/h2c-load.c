/*
 * Load generator for cleartext HTTP/2 (h2c): Connect binary and gRPC, on libnghttp2 (the library
 * h2load is built on). h2load sends one fixed body, so writes that need a new value on every request
 * (a new name, a new user) cannot be driven with it; this sends a prepared sequence instead, every
 * request with its own body, and checks each answer against what the bench expected (a wrong code
 * must fail, everything else must succeed). It is C because the load generator shares the machine's
 * two cores with the server: a generator in Node costs about five times h2load's CPU per call and
 * held the server below its ceiling, which flattened every ratio. It drives BOTH sides of every h2c ratio.
 *
 *   h2c-load <host> <port> <grpc|connect> <connections> <warmup ms> <duration ms> <rate req/s, 0 = as
 *            fast as answered> <requests file>
 *   requests file: lines "H\t<name>\t<value>" (headers of every request), then "R\t<1 if a success is
 *   expected, else 0>\t<path>\t<body in hex>" (the sequence, taken in order, started over when used up).
 *
 * Each connection is one HTTP/2 session with one call in flight (like h2load -m 1 and wrk's one request
 * per connection), taking the next request of the one shared sequence. Calls started during the
 * warm-up, or finished after the end, are not counted. Prints one JSON line.
 *
 * Build: cc -O2 -o h2c-load h2c-load.c -lnghttp2   (Debian: gcc, libnghttp2-dev; the bench does it)
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef struct {
  int ok;
  char *path;
  uint8_t *body;
  size_t len;
} item_t;

typedef struct {
  int fd;
  int alive;
  nghttp2_session *session;
  item_t *item; /* the call in flight, or NULL */
  size_t offset;
  int32_t stream_id;
  double started;
  int status;
  int grpc_status; /* -1: none seen */
} conn_t;

static item_t *items;
static size_t item_count, item_cap, next_item;
static nghttp2_nv *headers;
static size_t header_count;
static int grpc, wrapped;
static long issued;
static double measure_from, end_at, interval, slot;
static double *latencies;
static size_t latency_count, latency_cap;
static long count_ok, count_failed, count_broken, count_unexpected;
static char authority[300];

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

static void die(const char *what) {
  fprintf(stderr, "h2c-load: %s: %s\n", what, strerror(errno));
  exit(1);
}

static uint8_t *make_nv_bytes(const char *text, size_t *len) {
  *len = strlen(text);
  uint8_t *copy = malloc(*len + 1);
  memcpy(copy, text, *len + 1);
  return copy;
}

static void add_header(const char *name, const char *value) {
  headers = realloc(headers, sizeof(nghttp2_nv) * (header_count + 1));
  nghttp2_nv *nv = &headers[header_count++];
  nv->name = make_nv_bytes(name, &nv->namelen);
  nv->value = make_nv_bytes(value, &nv->valuelen);
  nv->flags = NGHTTP2_NV_FLAG_NONE;
}

static int hex(int c) { return c <= '9' ? c - '0' : (c | 32) - 'a' + 10; }

static void load_requests(const char *file) {
  FILE *in = fopen(file, "r");
  if (!in) die(file);
  char *line = NULL;
  size_t cap = 0;
  ssize_t n;
  while ((n = getline(&line, &cap, in)) > 0) {
    if (line[n - 1] == '\n') line[--n] = 0;
    char *save = NULL, *kind = strtok_r(line, "\t", &save);
    if (!kind) continue;
    if (kind[0] == 'H') {
      char *name = strtok_r(NULL, "\t", &save), *value = strtok_r(NULL, "\t", &save);
      add_header(name, value ? value : "");
    } else if (kind[0] == 'R') {
      char *ok = strtok_r(NULL, "\t", &save), *path = strtok_r(NULL, "\t", &save), *body = strtok_r(NULL, "\t", &save);
      if (item_count == item_cap) items = realloc(items, sizeof(item_t) * (item_cap = item_cap ? item_cap * 2 : 1024));
      item_t *it = &items[item_count++];
      it->ok = ok[0] == '1';
      it->path = strdup(path);
      it->len = body ? strlen(body) / 2 : 0;
      it->body = malloc(it->len + 1);
      for (size_t i = 0; i < it->len; i++) it->body[i] = (uint8_t)(hex(body[2 * i]) << 4 | hex(body[2 * i + 1]));
    }
  }
  free(line);
  fclose(in);
  if (item_count == 0) {
    fprintf(stderr, "h2c-load: no requests in %s\n", file);
    exit(1);
  }
}

static void record(conn_t *c, const char *outcome) {
  double done = now_ms();
  if (c->started < measure_from || done > end_at) return;
  if (latency_count == latency_cap) latencies = realloc(latencies, sizeof(double) * (latency_cap = latency_cap ? latency_cap * 2 : 65536));
  latencies[latency_count++] = done - c->started;
  if (outcome[0] == 'o') count_ok++;
  else if (outcome[0] == 'f') count_failed++;
  else count_broken++;
  if (outcome[0] == 'b' || (outcome[0] == 'o') != c->item->ok) count_unexpected++;
}

static ssize_t on_send(nghttp2_session *session, const uint8_t *data, size_t length, int flags, void *user) {
  (void)session, (void)flags;
  conn_t *c = user;
  ssize_t n = write(c->fd, data, length);
  if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK ? NGHTTP2_ERR_WOULDBLOCK : NGHTTP2_ERR_CALLBACK_FAILURE;
  return n;
}

static int on_header(nghttp2_session *session, const nghttp2_frame *frame, const uint8_t *name, size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags, void *user) {
  (void)session, (void)flags;
  conn_t *c = user;
  if (frame->hd.stream_id != c->stream_id) return 0;
  char text[32];
  size_t len = valuelen < sizeof text - 1 ? valuelen : sizeof text - 1;
  memcpy(text, value, len);
  text[len] = 0;
  if (namelen == 7 && memcmp(name, ":status", 7) == 0) c->status = atoi(text);
  else if (namelen == 11 && memcmp(name, "grpc-status", 11) == 0) c->grpc_status = atoi(text);
  return 0;
}

static int on_stream_close(nghttp2_session *session, int32_t stream_id, uint32_t error_code, void *user) {
  (void)session;
  conn_t *c = user;
  if (stream_id != c->stream_id || !c->item) return 0;
  const char *outcome;
  if (error_code != NGHTTP2_NO_ERROR || c->status == 0) outcome = "broken";
  else if (grpc) outcome = c->status == 200 && c->grpc_status == 0 ? "ok" : "failed";
  else outcome = c->status >= 200 && c->status < 300 ? "ok" : "failed";
  record(c, outcome);
  c->item = NULL;
  return 0;
}

static ssize_t read_body(nghttp2_session *session, int32_t stream_id, uint8_t *buf, size_t length, uint32_t *flags, nghttp2_data_source *source, void *user) {
  (void)session, (void)stream_id, (void)source;
  conn_t *c = user;
  size_t left = c->item->len - c->offset, n = left < length ? left : length;
  memcpy(buf, c->item->body + c->offset, n);
  c->offset += n;
  if (c->offset == c->item->len) *flags |= NGHTTP2_DATA_FLAG_EOF;
  return (ssize_t)n;
}

static void start_call(conn_t *c, double now) {
  if (next_item == item_count) {
    next_item = 0;
    wrapped = 1;
  }
  item_t *it = &items[next_item++];
  issued++;
  nghttp2_nv *nva = malloc(sizeof(nghttp2_nv) * (header_count + 4));
  nghttp2_nv fixed[4] = {
      {(uint8_t *)":method", (uint8_t *)"POST", 7, 4, NGHTTP2_NV_FLAG_NONE},
      {(uint8_t *)":scheme", (uint8_t *)"http", 7, 4, NGHTTP2_NV_FLAG_NONE},
      {(uint8_t *)":authority", (uint8_t *)authority, 10, strlen(authority), NGHTTP2_NV_FLAG_NONE},
      {(uint8_t *)":path", (uint8_t *)it->path, 5, strlen(it->path), NGHTTP2_NV_FLAG_NONE},
  };
  memcpy(nva, fixed, sizeof fixed);
  memcpy(nva + 4, headers, sizeof(nghttp2_nv) * header_count);
  nghttp2_data_provider body = {.source = {.ptr = NULL}, .read_callback = read_body};
  c->item = it;
  c->offset = 0;
  c->status = 0;
  c->grpc_status = -1;
  c->started = now;
  c->stream_id = nghttp2_submit_request(c->session, NULL, nva, header_count + 4, &body, NULL);
  free(nva);
  if (c->stream_id < 0) {
    fprintf(stderr, "h2c-load: submit failed: %s\n", nghttp2_strerror(c->stream_id));
    exit(1);
  }
}

/* Pacing: one shared absolute schedule, at most one interval of backlog kept. Returns the wait in ms. */
static double take_slot(double now) {
  if (interval <= 0) return 0;
  if (slot < now - interval) slot = now;
  if (slot > now) return slot - now;
  slot += interval;
  return 0;
}

static int connect_to(const char *host, const char *port) {
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res;
  if (getaddrinfo(host, port, &hints, &res) != 0) die("getaddrinfo");
  int fd = socket(res->ai_family, SOCK_STREAM, 0);
  if (fd < 0 || connect(fd, res->ai_addr, res->ai_addrlen) != 0) die("connect");
  freeaddrinfo(res);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  return fd;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double percentile(double q) {
  if (latency_count == 0) return 0;
  long index = (long)((q * latency_count) + 0.999999) - 1;
  if (index < 0) index = 0;
  if ((size_t)index >= latency_count) index = (long)latency_count - 1;
  return latencies[index];
}

int main(int argc, char **argv) {
  if (argc != 9) {
    fprintf(stderr, "usage: h2c-load host port grpc|connect connections warmup-ms duration-ms rate requests-file\n");
    return 2;
  }
  const char *host = argv[1], *port = argv[2];
  grpc = strcmp(argv[3], "grpc") == 0;
  int connections = atoi(argv[4]);
  double warmup = atof(argv[5]), duration = atof(argv[6]), rate = atof(argv[7]);
  interval = rate > 0 ? 1000.0 / rate : 0;
  snprintf(authority, sizeof authority, "%s:%s", host, port);
  load_requests(argv[8]);

  nghttp2_session_callbacks *callbacks;
  nghttp2_session_callbacks_new(&callbacks);
  nghttp2_session_callbacks_set_send_callback(callbacks, on_send);
  nghttp2_session_callbacks_set_on_header_callback(callbacks, on_header);
  nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, on_stream_close);

  conn_t *conns = calloc((size_t)connections, sizeof(conn_t));
  struct pollfd *fds = calloc((size_t)connections, sizeof(struct pollfd));
  for (int i = 0; i < connections; i++) {
    conns[i].fd = connect_to(host, port);
    conns[i].alive = 1;
    if (nghttp2_session_client_new(&conns[i].session, callbacks, &conns[i]) != 0) die("session");
    nghttp2_submit_settings(conns[i].session, NGHTTP2_FLAG_NONE, NULL, 0);
  }

  double started = now_ms();
  measure_from = started + warmup;
  end_at = measure_from + duration;
  uint8_t buf[65536];
  for (;;) {
    double now = now_ms();
    if (now >= end_at) break;
    double wait = end_at - now;
    int live = 0;
    for (int i = 0; i < connections; i++) {
      conn_t *c = &conns[i];
      if (!c->alive) {
        fds[i].fd = -1; /* poll ignores it */
        continue;
      }
      live++;
      if (!c->item) {
        double until = take_slot(now);
        if (until > 0) {
          if (until < wait) wait = until;
        } else {
          start_call(c, now);
        }
      }
      if (nghttp2_session_send(c->session) != 0) c->alive = 0;
      fds[i].fd = c->fd;
      fds[i].events = (short)((nghttp2_session_want_read(c->session) ? POLLIN : 0) | (nghttp2_session_want_write(c->session) ? POLLOUT : 0));
      fds[i].revents = 0;
    }
    if (live == 0) break;
    int timeout = (int)wait + 1;
    if (poll(fds, (nfds_t)connections, timeout) < 0 && errno != EINTR) die("poll");
    for (int i = 0; i < connections; i++) {
      conn_t *c = &conns[i];
      if (!c->alive || !fds[i].revents) continue;
      if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
        for (;;) {
          ssize_t n = read(c->fd, buf, sizeof buf);
          if (n > 0) {
            if (nghttp2_session_mem_recv(c->session, buf, (size_t)n) < 0) {
              c->alive = 0;
              break;
            }
            continue;
          }
          if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
          c->alive = 0; /* closed or failed: the call in flight is broken */
          break;
        }
        if (!c->alive && c->item) {
          record(c, "broken");
          c->item = NULL;
        }
      }
    }
  }

  qsort(latencies, latency_count, sizeof(double), by_value);
  printf("{\"requests\":%zu,\"rps\":%.3f,\"p50Ms\":%.4f,\"p99Ms\":%.4f,\"ok\":%ld,\"failed\":%ld,\"broken\":%ld,\"unexpected\":%ld,\"issued\":%ld,\"wrapped\":%s}\n",
         latency_count, latency_count / (duration / 1000.0), percentile(0.5), percentile(0.99), count_ok, count_failed, count_broken, count_unexpected, issued,
         wrapped ? "true" : "false");
  return 0;
}
