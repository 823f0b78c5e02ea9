/*
 * ws_client.c - see ws_client.h.
 */
#include "ws_client.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <libwebsockets.h>
#include <turbojpeg.h>

enum { MAX_PENDING = 16 };

static double now_s(void);

struct ws_client {
    struct lws_context *lws;
    struct lws *wsi;
    bool open, closed;
    long frames;
    long long bytes; /* of the messages received */
    /* the message being received, and the newest whole one */
    uint8_t *rx;
    size_t rx_size, rx_cap;
    uint8_t *last;
    size_t last_size, last_cap;
    /* the newest message with a picture */
    uint8_t *pic;
    size_t pic_size, pic_cap;
    /* text messages to send */
    char *pending[MAX_PENDING];
    int pending_count;
    /* acknowledgements: the frame to ack next (-1: none), and how long it was held */
    ws_ack_mode ack_mode;
    long ack_frame;
    double ack_held_ms;
    double ack_delay_s, ack_due_s; /* unreported time before an ack goes, and when it goes */
    ws_frame_fn *on_frame;
    void *on_frame_user;
};

/* Copy `size` bytes to a buffer that grows. */
static bool keep(uint8_t **buf, size_t *cap, size_t *len, const uint8_t *data, size_t size)
{
    if (size > *cap) {
        uint8_t *p = realloc(*buf, size);
        if (!p)
            return false;
        *buf = p;
        *cap = size;
    }
    memcpy(*buf, data, size);
    *len = size;
    return true;
}

/* The header's length, when `message` has a whole one; 0 otherwise. */
static size_t header_length(const uint8_t *m, size_t size)
{
    if (size < 4)
        return 0;
    size_t n = (size_t)m[0] | (size_t)m[1] << 8 | (size_t)m[2] << 16 | (size_t)m[3] << 24;
    return n + 4 <= size ? n : 0;
}

/* A whole message: the callback, the picture kept, the ack queued. */
static void take_message(ws_client *c, struct lws *wsi)
{
    double t0 = now_s();
    if (c->on_frame)
        c->on_frame(c->on_frame_user, c->last, c->last_size);
    size_t n = header_length(c->last, c->last_size);
    if (n && c->last_size > 4 + n)
        keep(&c->pic, &c->pic_cap, &c->pic_size, c->last, c->last_size);
    double frame = ws_message_number(c->last, c->last_size, "frame");
    if (c->ack_mode == WS_ACK_EACH && frame >= 0) {
        c->ack_frame = (long)frame;
        c->ack_held_ms = (now_s() - t0) * 1e3;
        /* A delayed ack waits for the loop (service) once it is due. */
        if (c->ack_delay_s > 0 && c->ack_due_s <= 0)
            c->ack_due_s = t0 + c->ack_delay_s;
        else if (c->ack_delay_s <= 0)
            lws_callback_on_writable(wsi);
    }
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                    size_t len)
{
    (void)user;
    ws_client *c = lws_context_user(lws_get_context(wsi));
    switch (reason) {
    case LWS_CALLBACK_CLIENT_ESTABLISHED:
        c->open = true;
        if (c->pending_count)
            lws_callback_on_writable(wsi);
        return 0;
    case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
    case LWS_CALLBACK_CLIENT_CLOSED:
        c->closed = true;
        c->wsi = NULL;
        return 0;
    case LWS_CALLBACK_CLIENT_RECEIVE:
        if (c->rx_size + len > c->rx_cap) {
            size_t cap = (c->rx_size + len) * 2;
            uint8_t *p = realloc(c->rx, cap);
            if (!p)
                return -1;
            c->rx = p;
            c->rx_cap = cap;
        }
        memcpy(c->rx + c->rx_size, in, len);
        c->rx_size += len;
        c->bytes += (long long)len;
        if (lws_is_final_fragment(wsi) && lws_remaining_packet_payload(wsi) == 0) {
            uint8_t *t = c->last;
            size_t t_cap = c->last_cap;
            c->last = c->rx;
            c->last_cap = c->rx_cap;
            c->last_size = c->rx_size;
            c->rx = t;
            c->rx_cap = t_cap;
            c->rx_size = 0;
            c->frames++;
            take_message(c, wsi);
        }
        return 0;
    case LWS_CALLBACK_CLIENT_WRITEABLE: {
        if (c->ack_frame >= 0) {
            char ack[64];
            int n = snprintf(ack, sizeof ack, "ack %ld %.3f", c->ack_frame, c->ack_held_ms);
            unsigned char buf[LWS_PRE + 64];
            memcpy(buf + LWS_PRE, ack, (size_t)n);
            c->ack_frame = -1;
            c->ack_due_s = 0;
            if (lws_write(wsi, buf + LWS_PRE, (size_t)n, LWS_WRITE_TEXT) < n)
                return -1;
            if (c->pending_count)
                lws_callback_on_writable(wsi);
            return 0;
        }
        if (!c->pending_count)
            return 0;
        char *text = c->pending[0];
        memmove(c->pending, c->pending + 1, (size_t)--c->pending_count * sizeof c->pending[0]);
        size_t n = strlen(text);
        unsigned char *buf = malloc(LWS_PRE + n);
        if (!buf)
            return -1;
        memcpy(buf + LWS_PRE, text, n);
        int w = lws_write(wsi, buf + LWS_PRE, n, LWS_WRITE_TEXT);
        free(buf);
        free(text);
        if (w < (int)n)
            return -1;
        if (c->pending_count)
            lws_callback_on_writable(wsi);
        return 0;
    }
    default:
        return 0;
    }
}

static const struct lws_protocols protocols[] = {
    {"cugl-frames", callback, 0, 65536, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

ws_client *ws_client_open(int port, const char *token)
{
    return ws_client_open_at("127.0.0.1", port, token);
}

ws_client *ws_client_open_at(const char *address, int port, const char *token)
{
    ws_client *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->ack_frame = -1;
    lws_set_log_level(LLL_ERR, NULL);
    struct lws_context_creation_info info = {0};
    info.port = CONTEXT_PORT_NO_LISTEN;
    info.protocols = protocols;
    info.user = c;
    info.gid = (gid_t)-1;
    info.uid = (uid_t)-1;
    c->lws = lws_create_context(&info);
    if (!c->lws) {
        fprintf(stderr, "ws_client: cannot make a libwebsockets context\n");
        free(c);
        return NULL;
    }
    char path[256];
    snprintf(path, sizeof path, "/ws%s%s", token ? "?token=" : "", token ? token : "");
    struct lws_client_connect_info ci = {0};
    ci.context = c->lws;
    ci.address = address;
    ci.port = port;
    ci.path = path;
    ci.host = address;
    ci.origin = address;
    ci.protocol = "cugl-frames";
    ci.ietf_version_or_minus_one = -1;
    c->wsi = lws_client_connect_via_info(&ci);
    if (!c->wsi)
        c->closed = true;
    return c;
}

void ws_client_close(ws_client *c)
{
    if (!c)
        return;
    lws_context_destroy(c->lws);
    for (int i = 0; i < c->pending_count; i++)
        free(c->pending[i]);
    free(c->rx);
    free(c->last);
    free(c->pic);
    free(c);
}

void ws_client_set_acks(ws_client *c, ws_ack_mode mode)
{
    c->ack_mode = mode;
    if (mode == WS_ACK_NEVER)
        c->ack_frame = -1;
}

void ws_client_set_ack_delay(ws_client *c, double seconds)
{
    c->ack_delay_s = seconds > 0 ? seconds : 0;
}

void ws_client_on_frame(ws_client *c, ws_frame_fn *fn, void *user)
{
    c->on_frame = fn;
    c->on_frame_user = user;
}

/* One turn of the client's loop: lws_service waits until something
 * happens (its timeout is ignored), so a timer on the connection bounds
 * the wait when nothing comes. */
static void service(ws_client *c)
{
    lws_usec_t wait = 10000;
    if (c->wsi && c->ack_frame >= 0 && c->ack_due_s > 0) {
        /* A timer that comes due before lws_service polls leaves the poll
         * unbounded: an ack due within 2 ms goes now. */
        double left = c->ack_due_s - now_s();
        if (left <= 0.002)
            lws_callback_on_writable(c->wsi);
        else if (left < 0.01)
            wait = (lws_usec_t)(left * 1e6);
    }
    if (c->wsi)
        lws_set_timer_usecs(c->wsi, wait);
    lws_service(c->lws, 0);
}

void ws_client_run(ws_client *c, double seconds)
{
    double end = now_s() + seconds;
    while (now_s() < end && !c->closed)
        service(c);
}

bool ws_client_wait_frames(ws_client *c, int frames, double seconds)
{
    long want = c->frames + frames;
    double end = now_s() + seconds;
    while (c->frames < want && !c->closed && now_s() < end)
        service(c);
    return c->frames >= want;
}

bool ws_client_wait_open(ws_client *c, double seconds)
{
    double end = now_s() + seconds;
    while (!c->open && !c->closed && now_s() < end)
        service(c);
    return c->open && !c->closed;
}

bool ws_client_closed(const ws_client *c)
{
    return c->closed;
}

long ws_client_frames(const ws_client *c)
{
    return c->frames;
}

long long ws_client_bytes(const ws_client *c)
{
    return c->bytes;
}

/* A message's JSON, as a NUL-terminated copy in `out`. */
static bool header_of(const uint8_t *m, size_t size, char *out, size_t out_size)
{
    size_t n = header_length(m, size);
    if (!n || n + 1 > out_size)
        return false;
    memcpy(out, m + 4, n);
    out[n] = '\0';
    return true;
}

double ws_message_number(const uint8_t *m, size_t size, const char *key)
{
    char json[4096], pattern[64];
    if (!m || !header_of(m, size, json, sizeof json))
        return -1;
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    const char *p = strstr(json, pattern);
    return p ? strtod(p + strlen(pattern), NULL) : -1;
}

double ws_client_header_number(const ws_client *c, const char *key)
{
    return ws_message_number(c->last, c->last_size, key);
}

double ws_client_picture_number(const ws_client *c, const char *key)
{
    return ws_message_number(c->pic, c->pic_size, key);
}

uint8_t *ws_message_decode(const uint8_t *m, size_t size, int *width, int *height)
{
    size_t n = m ? header_length(m, size) : 0;
    *width = *height = 0;
    if (!n || size <= 4 + n)
        return NULL;
    const unsigned char *jpeg = m + 4 + n;
    unsigned long jpeg_size = (unsigned long)(size - 4 - n);
    tjhandle tj = tjInitDecompress();
    int w = 0, h = 0, sub = 0, space = 0;
    uint8_t *rgba = NULL;
    if (tj && tjDecompressHeader3(tj, jpeg, jpeg_size, &w, &h, &sub, &space) == 0 &&
        (rgba = malloc((size_t)w * (size_t)h * 4)) != NULL &&
        tjDecompress2(tj, jpeg, jpeg_size, rgba, w, 0, h, TJPF_RGBA, 0) != 0) {
        free(rgba);
        rgba = NULL;
    }
    if (tj)
        tjDestroy(tj);
    *width = w;
    *height = h;
    return rgba;
}

uint8_t *ws_client_decode(const ws_client *c, int *width, int *height)
{
    return ws_message_decode(c->pic, c->pic_size, width, height);
}

bool ws_client_send(ws_client *c, const char *text)
{
    if (c->pending_count == MAX_PENDING)
        return false;
    c->pending[c->pending_count++] = strdup(text);
    if (c->wsi && c->open)
        lws_callback_on_writable(c->wsi);
    return true;
}

/* ---- Raw sockets ---- */

int raw_connect(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static bool send_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n <= 0)
            return false;
        p += n;
        len -= (size_t)n;
    }
    return true;
}

/* The status of the reply's first line ("HTTP/1.1 101 ..."); -1: none. */
static int read_status(int fd)
{
    char buf[2048];
    size_t got = 0;
    double end = now_s() + 5;
    while (got < sizeof buf - 1 && now_s() < end) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 100) <= 0)
            continue;
        ssize_t n = recv(fd, buf + got, sizeof buf - 1 - got, 0);
        if (n <= 0)
            break;
        got += (size_t)n;
        buf[got] = '\0';
        if (strstr(buf, "\r\n\r\n"))
            break;
    }
    buf[got] = '\0';
    int status = -1;
    if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1)
        return -1;
    return status;
}

int raw_upgrade(int fd, const char *token)
{
    return raw_upgrade_to(fd, "/ws", token, "cugl-frames");
}

int raw_upgrade_to(int fd, const char *path, const char *token, const char *subprotocols)
{
    char req[768];
    snprintf(req, sizeof req,
             "GET %s%s%s HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
             "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
             "Sec-WebSocket-Version: 13\r\n%s%s%s\r\n",
             path, token ? "?token=" : "", token ? token : "",
             subprotocols ? "Sec-WebSocket-Protocol: " : "", subprotocols ? subprotocols : "",
             subprotocols ? "\r\n" : "");
    if (!send_all(fd, req, strlen(req)))
        return -1;
    return read_status(fd);
}

int raw_http_status(int port, const char *path)
{
    int fd = raw_connect(port);
    if (fd < 0)
        return -1;
    char req[512];
    snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
             path);
    int status = send_all(fd, req, strlen(req)) ? read_status(fd) : -1;
    close(fd);
    return status;
}

bool raw_send_frame(int fd, int opcode, uint64_t claimed, const void *payload, size_t len)
{
    uint8_t h[14];
    size_t n = 0;
    h[n++] = (uint8_t)(0x80 | (opcode & 0x0f));
    if (claimed < 126) {
        h[n++] = (uint8_t)(0x80 | claimed);
    } else if (claimed < 65536) {
        h[n++] = 0x80 | 126;
        h[n++] = (uint8_t)(claimed >> 8);
        h[n++] = (uint8_t)claimed;
    } else {
        h[n++] = 0x80 | 127;
        for (int i = 7; i >= 0; i--)
            h[n++] = (uint8_t)(claimed >> (8 * i));
    }
    static const uint8_t mask[4] = {0x12, 0x34, 0x56, 0x78};
    memcpy(h + n, mask, 4);
    n += 4;
    uint8_t *body = malloc(len ? len : 1);
    if (!body)
        return false;
    for (size_t i = 0; i < len; i++)
        body[i] = ((const uint8_t *)payload)[i] ^ mask[i % 4];
    bool ok = send_all(fd, h, n) && send_all(fd, body, len);
    free(body);
    return ok;
}

bool raw_closed_by_peer(int fd, double seconds)
{
    double end = now_s() + seconds;
    char buf[65536];
    while (now_s() < end) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 50) <= 0)
            continue;
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
            return true;
    }
    return false;
}
