/* Slow and stalled HTTP clients against `vocis serve` on 127.0.0.1 (tests/server/slow_clients.sh).
 *
 *   slow_clients drop PORT N HEADER_S BODY_S
 *     N clients send their headers a byte every 100 ms and never finish them, N more send
 *     complete headers and then their body a byte every 100 ms: each must be closed by the
 *     server without an answer, the first ones HEADER_S after they connected, the others
 *     BODY_S after their headers (within [-0.1 s, +2 s]; every byte would reset an idle timeout).
 *   slow_clients flood PORT N SECONDS BOUND_MS
 *     N clients send a request a byte a second (reconnecting at the next second when the
 *     server closes them) for SECONDS, while a probe asks GET /health every 100 ms on a new
 *     connection: every probe must answer 200 within BOUND_MS.
 * Prints what it measured; exit status 0 when every check holds. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CLIENTS 1000

static int port;

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static int connect_local(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a)) {
        close(fd);
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static int send_all(int fd, const char *s) {
    size_t n = strlen(s);
    return send(fd, s, n, MSG_NOSIGNAL) == (ssize_t)n ? 0 : -1;
}

/* 1 when the server has closed fd (EOF or reset), 0 while it is open, 2 when it sent bytes. */
static int closed_by_server(int fd) {
    char b[256];
    ssize_t r = recv(fd, b, sizeof b, MSG_DONTWAIT);
    if (r == 0) return 1;
    if (r > 0) return 2;
    return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : 1;
}

/* one more byte of a request that never ends: 0 sent, -1 the connection is gone */
static int drip(int fd) { return send(fd, "a", 1, MSG_NOSIGNAL | MSG_DONTWAIT) == 1 ? 0 : -1; }

static const char head_start[] = "POST /v1/audio/speech HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: ";
static const char body_start[] = "POST /v1/audio/speech HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                                 "Content-Length: 100000\r\n\r\n{\"input\":\"";

static int cmd_drop(int n, double header_s, double body_s) {
    static int fd[2 * MAX_CLIENTS];
    static double t0[2 * MAX_CLIENTS], t_closed[2 * MAX_CLIENTS];
    static int answered[2 * MAX_CLIENTS];
    for (int i = 0; i < 2 * n; i++) {
        t0[i] = now_s();
        fd[i] = connect_local();
        if (fd[i] < 0 || send_all(fd[i], i < n ? head_start : body_start)) {
            fprintf(stderr, "client %d: cannot connect and send: %s\n", i, strerror(errno));
            return 1;
        }
        t_closed[i] = -1;
    }
    const double give_up = now_s() + (header_s > body_s ? header_s : body_s) + 5;
    int open = 2 * n;
    while (open && now_s() < give_up) {
        usleep(100 * 1000);
        for (int i = 0; i < 2 * n; i++) {
            if (t_closed[i] >= 0) continue;
            int c = closed_by_server(fd[i]);
            if (c == 2) answered[i] = 1;
            if (c == 1 || drip(fd[i])) {
                t_closed[i] = now_s() - t0[i];
                close(fd[i]);
                open--;
            }
        }
    }
    int bad = 0;
    double lo[2] = {1e9, 1e9}, hi[2] = {0, 0};
    for (int i = 0; i < 2 * n; i++) {
        const int body = i >= n;
        const double want = body ? body_s : header_s, t = t_closed[i];
        if (t < 0 || t < want - 0.1 || t > want + 2 || answered[i]) {
            fprintf(stderr, "FAIL %s client %d: %s after %.2f s (limit %.1f s)%s\n", body ? "body" : "header", i,
                    t < 0 ? "still open" : "closed", t < 0 ? now_s() - t0[i] : t, want,
                    answered[i] ? ", with an answer" : "");
            bad++;
        }
        if (t >= 0 && t < lo[body]) lo[body] = t;
        if (t > hi[body]) hi[body] = t;
    }
    for (int b = 0; b < 2; b++)
        if (lo[b] > hi[b]) lo[b] = hi[b] = -1; /* none closed */
    printf("drop: %d header-stalled clients closed after %.2f-%.2f s (limit %.1f), %d body-stalled after %.2f-%.2f s "
           "(limit %.1f)\n", n, lo[0], hi[0], header_s, n, lo[1], hi[1], body_s);
    return bad != 0;
}

typedef struct probes {
    double stop_at, bound_ms;
    int n, failed;
    double ms[10000];
} probes;

static void *probe_main(void *arg) {
    probes *p = arg;
    while (now_s() < p->stop_at && p->n < 10000) {
        const double t = now_s();
        int ok = 0, fd = connect_local();
        const char *why = fd < 0 ? "cannot connect" : "no answer";
        if (fd >= 0 && !send_all(fd, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")) {
            char b[1024];
            size_t len = 0;
            struct pollfd pf = {fd, POLLIN, 0};
            while (len < sizeof b - 1 && poll(&pf, 1, 5000) == 1) {
                ssize_t r = recv(fd, b + len, sizeof b - 1 - len, 0);
                if (r <= 0) break;
                len += (size_t)r;
            }
            b[len] = 0;
            ok = !strncmp(b, "HTTP/1.1 200", 12) && strstr(b, "{\"status\":\"ok\"}");
        }
        if (fd >= 0) close(fd);
        const double ms = (now_s() - t) * 1000;
        p->ms[p->n++] = ms;
        if (!ok || ms > p->bound_ms) {
            fprintf(stderr, "FAIL /health probe %d: %s after %.1f ms (%s)\n", p->n, ok ? "answered" : why, ms,
                    strerror(errno));
            p->failed++;
        }
        usleep(100 * 1000);
    }
    return NULL;
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmd_flood(int n, double seconds, double bound_ms) {
    static int fd[MAX_CLIENTS];
    int reconnects = 0;
    for (int i = 0; i < n; i++)
        if ((fd[i] = connect_local()) < 0 || send_all(fd[i], "POST")) {
            fprintf(stderr, "slow client %d: cannot connect: %s\n", i, strerror(errno));
            return 1;
        }
    static probes p;
    p.stop_at = now_s() + seconds;
    p.bound_ms = bound_ms;
    pthread_t thr;
    if (pthread_create(&thr, NULL, probe_main, &p)) return 1;
    while (now_s() < p.stop_at) {
        sleep(1);
        for (int i = 0; i < n; i++) {
            if (fd[i] >= 0 && !closed_by_server(fd[i]) && !drip(fd[i])) continue;
            if (fd[i] >= 0) close(fd[i]);
            fd[i] = connect_local(); /* as a real attacker: back at once, one byte a second again */
            if (fd[i] >= 0 && send_all(fd[i], "POST")) close(fd[i]), fd[i] = -1;
            reconnects++;
        }
    }
    pthread_join(thr, NULL);
    for (int i = 0; i < n; i++)
        if (fd[i] >= 0) close(fd[i]);
    if (p.n == 0) return 1;
    qsort(p.ms, (size_t)p.n, sizeof p.ms[0], cmp_double);
    printf("flood: %d slow clients for %.0f s (%d reconnects after being closed): %d /health probes, median %.1f ms, "
           "90th percentile %.1f ms, max %.1f ms (bound %.0f ms), %d failed\n", n, seconds, reconnects, p.n,
           p.ms[p.n / 2], p.ms[p.n * 9 / 10], p.ms[p.n - 1], bound_ms, p.failed);
    return p.failed != 0;
}

int main(int argc, char **argv) {
    if (argc != 6 || (strcmp(argv[1], "drop") && strcmp(argv[1], "flood"))) {
        fprintf(stderr, "usage: slow_clients drop PORT N HEADER_S BODY_S | flood PORT N SECONDS BOUND_MS\n");
        return 2;
    }
    port = atoi(argv[2]);
    const int n = atoi(argv[3]);
    if (port <= 0 || n < 1 || n > MAX_CLIENTS) return 2;
    if (!strcmp(argv[1], "drop")) return cmd_drop(n, atof(argv[4]), atof(argv[5]));
    return cmd_flood(n, atof(argv[4]), atof(argv[5]));
}
