/*
 * serve.c - the frames of a GL context to web browsers (cugl/app_serve.h):
 * libwebsockets for HTTP and WebSocket on a thread of its own, libjpeg-turbo
 * on encoder threads, and GL pixel-pack buffers, persistently mapped, that
 * the framebuffer is copied into without waiting.
 *
 * A frame's way: cugl_app_server_frame (the render thread) copies the
 * framebuffer into a free slot's buffer and fences the copy; a later call
 * finds the fence passed and queues the slot; an encoder makes a JPEG of
 * the mapped pixels, frees the slot, and makes the result the newest frame;
 * the network thread, woken, sends the newest frame to each viewer that can
 * take one, so a slow viewer skips frames. The frame is shared by all
 * viewers (reference counted) and freed when the last send is done.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <libwebsockets.h>
#include <turbojpeg.h>

#include "app_internal.h"
#include "cugl/app_serve.h"

extern const unsigned char cugl_serve_page_html[];
extern const size_t cugl_serve_page_html_size;

enum {
    SLOTS = 4,        /* framebuffer copies in flight or being encoded */
#define FPS_WINDOW_S 0.5
    JSON_MAX = 2 * CUGL_APP_SERVE_MAX_STATS + 768, /* escaped stats, name and numbers */
};

typedef enum slot_state {
    SLOT_FREE,    /* the render thread's */
    SLOT_COPYING, /* GL copies into it; its fence tells when done */
    SLOT_QUEUED,  /* an encoder's, waiting or working */
} slot_state;

typedef struct slot {
    GLuint pbo;
    void *pixels; /* the buffer, mapped for good */
    int width, height;
    GLsync fence;
    long number;           /* the frame's, from the context's presents */
    slot_state state;      /* under server->lock */
    char json[JSON_MAX];   /* the frame's header, made when it was copied */
} slot;

/* An encoded frame, ready to send: LWS_PRE bytes for the WebSocket header,
 * then the message. */
typedef struct frame {
    atomic_int refs;
    long number;
    size_t size; /* of the message */
    unsigned char data[];
} frame;

/* A viewer: libwebsockets' per-connection memory (zeroed at the start). */
typedef struct viewer {
    long sent;       /* the number of the last frame sent; -1: none yet */
    bool started;
    size_t rx_size;  /* bytes of the message being received */
    char rx[CUGL_APP_SERVE_MAX_MESSAGE + 1];
} viewer;

struct cugl_app_server {
    cugl_app_context *ctx;
    char name[128];
    char token[CUGL_APP_SERVE_MAX_TOKEN + 1];
    int quality;
    int port;

    slot slots[SLOTS];
    /* The rendering rate: frames over the time they took, counted in
     * windows of FPS_WINDOW_S (a mean of 1/gap would follow the shortest
     * gaps, thousands a second for frames rendered in bursts). */
    double fps_start_s;
    long fps_frames;
    double fps;
    char stats[CUGL_APP_SERVE_MAX_STATS];

    pthread_mutex_t lock; /* slots' states, the queue, `newest`, `stop` */
    pthread_cond_t work;
    int queue[SLOTS];
    int queued;
    frame *newest;
    bool stop;
    pthread_t encoders[CUGL_APP_SERVE_MAX_ENCODERS];
    int encoder_count;

    struct lws_context *lws;
    /* The numeric addresses listened on (a vhost each), all on `port`. */
    char addresses[CUGL_APP_SERVE_MAX_ADDRESSES][64];
    char vhost_names[CUGL_APP_SERVE_MAX_ADDRESSES][16];
    int address_count;
    pthread_t network;
    bool network_started;
    atomic_bool network_stop;
    atomic_int viewers;
    atomic_long encoded, sent, dropped;
    atomic_long events;   /* viewer events pushed into the context so far */
    long events_shown;    /* of those, the ones the next frame copied shows */
};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void frame_unref(frame *f)
{
    if (f && atomic_fetch_sub(&f->refs, 1) == 1)
        free(f);
}

/* ---- Encoders ---------------------------------------------------------------- */

/* The slot's pixels as a JPEG, behind its JSON: a new frame, or NULL. */
static frame *encode(cugl_app_server *s, tjhandle tj, slot *sl, long number)
{
    unsigned char *jpeg = NULL;
    unsigned long jpeg_size = 0;
    /* GL's rows run bottom to top. */
    if (tjCompress2(tj, sl->pixels, sl->width, 0, sl->height, TJPF_RGBA, &jpeg, &jpeg_size,
                    TJSAMP_420, s->quality, TJFLAG_BOTTOMUP | TJFLAG_FASTDCT) != 0) {
        fprintf(stderr, "cugl_app_server: JPEG of a %d x %d frame: %s\n", sl->width,
                sl->height, tjGetErrorStr2(tj));
        tjFree(jpeg);
        return NULL;
    }
    size_t json = strlen(sl->json), size = 4 + json + jpeg_size;
    frame *f = malloc(sizeof *f + LWS_PRE + size);
    if (f) {
        atomic_init(&f->refs, 1);
        f->number = number;
        f->size = size;
        unsigned char *m = f->data + LWS_PRE;
        m[0] = (unsigned char)(json & 0xff);
        m[1] = (unsigned char)((json >> 8) & 0xff);
        m[2] = (unsigned char)((json >> 16) & 0xff);
        m[3] = (unsigned char)((json >> 24) & 0xff);
        memcpy(m + 4, sl->json, json);
        memcpy(m + 4 + json, jpeg, jpeg_size);
    }
    tjFree(jpeg);
    return f;
}

static void *encoder_main(void *arg)
{
    cugl_app_server *s = arg;
    tjhandle tj = tjInitCompress();
    pthread_mutex_lock(&s->lock);
    for (;;) {
        while (!s->stop && s->queued == 0)
            pthread_cond_wait(&s->work, &s->lock);
        if (s->stop)
            break;
        slot *sl = &s->slots[s->queue[0]];
        memmove(s->queue, s->queue + 1, (size_t)(--s->queued) * sizeof s->queue[0]);
        long number = sl->number;
        pthread_mutex_unlock(&s->lock);

        frame *f = tj ? encode(s, tj, sl, number) : NULL;

        pthread_mutex_lock(&s->lock);
        sl->state = SLOT_FREE;
        if (f && (!s->newest || s->newest->number < f->number)) {
            frame *old = s->newest;
            s->newest = f;
            f = old;
            atomic_fetch_add(&s->encoded, 1);
            pthread_mutex_unlock(&s->lock);
            lws_cancel_service(s->lws); /* the network thread sends it */
            pthread_mutex_lock(&s->lock);
        }
        frame_unref(f);
    }
    pthread_mutex_unlock(&s->lock);
    if (tj)
        tjDestroy(tj);
    return NULL;
}

/* ---- The network thread --------------------------------------------------------- */

/* Whether the request's URL carries the server's token (or none is needed). */
static bool token_ok(cugl_app_server *s, struct lws *wsi)
{
    if (!s->token[0])
        return true;
    char buf[CUGL_APP_SERVE_MAX_TOKEN + 16];
    const char *got = lws_get_urlarg_by_name(wsi, "token=", buf, (int)sizeof buf);
    if (!got || strlen(got) != strlen(s->token))
        return false;
    /* Compare every byte, whatever the first that differs. */
    unsigned char diff = 0;
    for (size_t i = 0; s->token[i]; i++)
        diff |= (unsigned char)(got[i] ^ s->token[i]);
    return diff == 0;
}

static cugl_app_server *server_of(struct lws *wsi)
{
    return lws_context_user(lws_get_context(wsi));
}

static int http_reply(struct lws *wsi, unsigned status, const char *type, size_t length)
{
    unsigned char buf[LWS_PRE + 512], *p = buf + LWS_PRE, *end = buf + sizeof buf;
    if (lws_add_http_common_headers(wsi, status, type, (lws_filepos_t)length, &p, end) ||
        lws_add_http_header_by_name(wsi, (const unsigned char *)"cache-control:",
                                    (const unsigned char *)"no-store", 8, &p, end) ||
        lws_add_http_header_by_name(wsi, (const unsigned char *)"x-content-type-options:",
                                    (const unsigned char *)"nosniff", 7, &p, end) ||
        lws_finalize_write_http_header(wsi, buf + LWS_PRE, &p, end))
        return -1;
    return 0;
}

/* Whether the upgrade asks for the subprotocol `name` among those it lists. */
static bool offers_subprotocol(struct lws *wsi, const char *name)
{
    char list[256];
    if (lws_hdr_copy(wsi, list, (int)sizeof list, WSI_TOKEN_PROTOCOL) <= 0)
        return false;
    for (char *save = NULL, *p = strtok_r(list, ", \t", &save); p;
         p = strtok_r(NULL, ", \t", &save))
        if (strcmp(p, name) == 0)
            return true;
    return false;
}

/* An upgrade is answered with an HTTP status unless its path, token,
 * subprotocol and the viewer count all allow it: >0 when refused. */
static int confirm_upgrade(cugl_app_server *s, struct lws *wsi)
{
    char uri[64];
    unsigned status = 0;
    const char *why = NULL;
    if (lws_hdr_copy(wsi, uri, (int)sizeof uri, WSI_TOKEN_GET_URI) <= 0 ||
        strcmp(uri, "/ws") != 0)
        status = HTTP_STATUS_NOT_FOUND, why = "the WebSocket is /ws";
    else if (!token_ok(s, wsi))
        status = HTTP_STATUS_FORBIDDEN, why = "this server wants ?token=...";
    else if (!offers_subprotocol(wsi, CUGL_APP_SERVE_SUBPROTOCOL))
        status = HTTP_STATUS_BAD_REQUEST,
        why = "the WebSocket's subprotocol must be " CUGL_APP_SERVE_SUBPROTOCOL;
    else if (atomic_load(&s->viewers) >= CUGL_APP_SERVE_MAX_VIEWERS)
        status = HTTP_STATUS_SERVICE_UNAVAILABLE, why = "too many viewers";
    if (!status)
        return 0;
    return lws_return_http_status(wsi, status, why) ? -1 : 1;
}

static int http_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                         size_t len)
{
    cugl_app_server *s = server_of(wsi);
    switch (reason) {
    case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
        return confirm_upgrade(s, wsi);
    case LWS_CALLBACK_HTTP: {
        const char *uri = in;
        if (strcmp(uri, "/") != 0 && strcmp(uri, "/index.html") != 0) {
            static const char body[] = "not found\n";
            if (http_reply(wsi, HTTP_STATUS_NOT_FOUND, "text/plain", sizeof body - 1) ||
                lws_write(wsi, (unsigned char *)body, sizeof body - 1, LWS_WRITE_HTTP_FINAL) < 0)
                return -1;
            return lws_http_transaction_completed(wsi) ? -1 : 0;
        }
        if (!token_ok(s, wsi)) {
            static const char body[] = "forbidden: this server wants ?token=...\n";
            if (http_reply(wsi, HTTP_STATUS_FORBIDDEN, "text/plain", sizeof body - 1) ||
                lws_write(wsi, (unsigned char *)body, sizeof body - 1, LWS_WRITE_HTTP_FINAL) < 0)
                return -1;
            return lws_http_transaction_completed(wsi) ? -1 : 0;
        }
        if (http_reply(wsi, HTTP_STATUS_OK, "text/html; charset=utf-8",
                       cugl_serve_page_html_size))
            return -1;
        lws_callback_on_writable(wsi);
        return 0;
    }
    case LWS_CALLBACK_HTTP_WRITEABLE: {
        /* The page in one write; lws keeps what the socket does not take. */
        unsigned char *page = malloc(LWS_PRE + cugl_serve_page_html_size);
        if (!page)
            return -1;
        memcpy(page + LWS_PRE, cugl_serve_page_html, cugl_serve_page_html_size);
        int n = lws_write(wsi, page + LWS_PRE, cugl_serve_page_html_size, LWS_WRITE_HTTP_FINAL);
        free(page);
        if (n < 0)
            return -1;
        return lws_http_transaction_completed(wsi) ? -1 : 0;
    }
    default:
        return lws_callback_http_dummy(wsi, reason, user, in, len);
    }
}

static const struct lws_protocols protocols[3]; /* http, frames, the end */

/* A page's message: event lines, each into the context's input. False: a
 * line that is not an event a viewer may send; the viewer goes. */
static bool take_events(cugl_app_server *s, char *text)
{
    for (char *line = text, *next; line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        size_t n = strlen(line);
        if (n && line[n - 1] == '\r')
            line[--n] = '\0';
        if (n == 0)
            continue;
        cugl_app_event ev;
        if (cugl_app_event_parse(&ev, line) != CUGL_OK || ev.type == CUGL_APP_EVENT_CLOSE ||
            (ev.type == CUGL_APP_EVENT_RESIZE && (ev.width > CUGL_APP_SERVE_MAX_RESIZE ||
                                                  ev.height > CUGL_APP_SERVE_MAX_RESIZE)))
            return false;
        ev.frame = 0;
        if (cugl_app_context_push_event(s->ctx, &ev) != CUGL_OK)
            return false; /* a flood: CUGL_APP_EVENT_MAX_PENDING wait already */
        atomic_fetch_add(&s->events, 1);
    }
    return true;
}

static int ws_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                       size_t len)
{
    cugl_app_server *s = server_of(wsi);
    viewer *v = user;
    switch (reason) {
    case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
        /* confirm_upgrade answered every refusal with a status already. */
        return !token_ok(s, wsi) || atomic_load(&s->viewers) >= CUGL_APP_SERVE_MAX_VIEWERS;
    case LWS_CALLBACK_ESTABLISHED:
        v->sent = -1;
        v->started = true;
        atomic_fetch_add(&s->viewers, 1);
        lws_callback_on_writable(wsi);
        return 0;
    case LWS_CALLBACK_CLOSED:
        if (v && v->started) {
            v->started = false;
            atomic_fetch_sub(&s->viewers, 1);
        }
        return 0;
    case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
        lws_callback_on_writable_all_protocol(lws_get_context(wsi), &protocols[1]);
        return 0;
    case LWS_CALLBACK_SERVER_WRITEABLE: {
        if (atomic_load(&s->network_stop))
            return -1;
        pthread_mutex_lock(&s->lock);
        frame *f = s->newest;
        if (f && f->number > v->sent)
            atomic_fetch_add(&f->refs, 1);
        else
            f = NULL;
        pthread_mutex_unlock(&s->lock);
        if (!f)
            return 0;
        int n = lws_write(wsi, f->data + LWS_PRE, f->size, LWS_WRITE_BINARY);
        v->sent = f->number;
        frame_unref(f);
        if (n < 0)
            return -1;
        atomic_fetch_add(&s->sent, 1);
        return 0;
    }
    case LWS_CALLBACK_RECEIVE:
        if (lws_frame_is_binary(wsi) || v->rx_size + len > CUGL_APP_SERVE_MAX_MESSAGE)
            return -1; /* not ours to take: the viewer goes, the program stays */
        memcpy(v->rx + v->rx_size, in, len);
        v->rx_size += len;
        if (lws_is_final_fragment(wsi) && lws_remaining_packet_payload(wsi) == 0) {
            v->rx[v->rx_size] = '\0';
            bool ok = strlen(v->rx) == v->rx_size && take_events(s, v->rx);
            v->rx_size = 0;
            if (!ok)
                return -1;
        }
        return 0;
    default:
        return 0;
    }
}

static const struct lws_protocols protocols[3] = {
    {"http", http_callback, 0, 0, 0, NULL, 0},
    {CUGL_APP_SERVE_SUBPROTOCOL, ws_callback, sizeof(viewer), CUGL_APP_SERVE_MAX_MESSAGE, 0, NULL,
     0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

static void *network_main(void *arg)
{
    cugl_app_server *s = arg;
    while (!atomic_load(&s->network_stop))
        if (lws_service(s->lws, 0) < 0)
            break;
    return NULL;
}

/* ---- Create and destroy ------------------------------------------------------- */

/* Why the numeric `address`:`port` cannot be listened on, from a bind of
 * our own. */
static void bind_failure(char *why, size_t size, const char *address, int port)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV}, *ai = NULL;
    char service[16];
    snprintf(service, sizeof service, "%d", port);
    int rc = getaddrinfo(address, service, &hints, &ai);
    if (rc != 0) {
        snprintf(why, size, "%s", gai_strerror(rc));
        return;
    }
    int fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 1) != 0)
        snprintf(why, size, "%s%s", strerror(errno),
                 errno == EADDRNOTAVAIL ? " (not an address of this host)" : "");
    else
        snprintf(why, size, "libwebsockets could not listen there");
    if (fd >= 0)
        close(fd);
    freeaddrinfo(ai);
}

/* The numeric addresses `address` names: a literal itself, a host name
 * each IPv4 and IPv6 address it resolves to, once. Their count, or 0 with
 * the reason in `why`. */
static int resolve(cugl_app_server *s, const char *address, char *why, size_t size)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai = NULL;
    int rc = getaddrinfo(address, NULL, &hints, &ai);
    if (rc != 0) {
        snprintf(why, size, "%s", gai_strerror(rc));
        return 0;
    }
    int n = 0;
    for (struct addrinfo *a = ai; a && n < CUGL_APP_SERVE_MAX_ADDRESSES; a = a->ai_next) {
        char host[sizeof s->addresses[0]];
        if ((a->ai_family != AF_INET && a->ai_family != AF_INET6) ||
            getnameinfo(a->ai_addr, a->ai_addrlen, host, sizeof host, NULL, 0, NI_NUMERICHOST))
            continue;
        bool seen = false;
        for (int i = 0; i < n; i++)
            seen = seen || strcmp(s->addresses[i], host) == 0;
        if (!seen)
            memcpy(s->addresses[n++], host, sizeof host);
    }
    freeaddrinfo(ai);
    if (n == 0)
        snprintf(why, size, "it names no IPv4 or IPv6 address");
    return n;
}

/* A vhost listening on s->addresses[i] alone (an IPv4 address without the
 * IPv6 wildcard libwebsockets would otherwise bind), or NULL. */
static struct lws_vhost *listen_on(cugl_app_server *s, int i, int port)
{
    const char *address = s->addresses[i];
    snprintf(s->vhost_names[i], sizeof s->vhost_names[i], "cugl-%d", i);
    struct lws_context_creation_info info = {0};
    info.vhost_name = s->vhost_names[i];
    info.iface = address;
    info.port = port;
    info.protocols = protocols;
    info.options = LWS_SERVER_OPTION_FAIL_UPON_UNABLE_TO_BIND | LWS_SERVER_OPTION_VALIDATE_UTF8;
    if (!strchr(address, ':'))
        info.options |= LWS_SERVER_OPTION_DISABLE_IPV6;
    return lws_create_vhost(s->lws, &info);
}

/* Listen on every address `address` names, all on one port: a literal must
 * be bound; of a host name's addresses, those this host cannot bind are left
 * out, and at least one must be bound. */
static cugl_status listen_all(cugl_app_server *s, const char *who, const char *address, int port)
{
    char why[256] = "";
    int count = resolve(s, address, why, sizeof why);
    if (count == 0)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "cannot serve on %s: %s",
                          address, why);
    bool literal = count == 1 && strcmp(s->addresses[0], address) == 0;
    int bound = 0;
    lws_set_log_level(0, NULL); /* its bind errors: ours say more */
    for (int i = 0; i < count; i++) {
        struct lws_vhost *vh = listen_on(s, i, s->port ? s->port : port);
        int got = vh ? lws_get_vhost_listen_port(vh) : 0;
        if (got > 0) {
            s->port = got;
            if (bound != i)
                memcpy(s->addresses[bound], s->addresses[i], sizeof s->addresses[i]);
            bound++;
            continue;
        }
        if (vh)
            lws_vhost_destroy(vh);
        if (!why[0] || literal)
            bind_failure(why, sizeof why, s->addresses[i], s->port ? s->port : port);
        if (literal)
            break;
    }
    lws_set_log_level(LLL_ERR, NULL);
    s->address_count = bound;
    if (bound == 0)
        return cugl__fail(CUGL_ERROR_INVALID_STATE, who,
                          "cannot serve on %s%s%s%s port %d: %s", address,
                          literal ? "" : " (", literal ? "" : s->addresses[0],
                          literal ? "" : ")", port, why);
    return CUGL_OK;
}

static bool token_chars_ok(const char *t)
{
    for (; *t; t++)
        if (!((*t >= 'a' && *t <= 'z') || (*t >= 'A' && *t <= 'Z') || (*t >= '0' && *t <= '9') ||
              *t == '-' || *t == '_' || *t == '.'))
            return false;
    return true;
}

static void free_slot(slot *sl)
{
    if (sl->fence)
        glDeleteSync(sl->fence);
    if (sl->pbo) {
        glUnmapNamedBuffer(sl->pbo);
        glDeleteBuffers(1, &sl->pbo);
    }
    *sl = (slot){0};
}

CUGL_API void cugl_app_server_destroy(cugl_app_server *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->lock);
    s->stop = true;
    pthread_cond_broadcast(&s->work);
    pthread_mutex_unlock(&s->lock);
    for (int i = 0; i < s->encoder_count; i++)
        pthread_join(s->encoders[i], NULL);
    if (s->network_started) {
        atomic_store(&s->network_stop, true);
        lws_cancel_service(s->lws);
        pthread_join(s->network, NULL);
    }
    if (s->lws)
        lws_context_destroy(s->lws);
    frame_unref(s->newest);
    for (int i = 0; i < SLOTS; i++)
        free_slot(&s->slots[i]);
    pthread_cond_destroy(&s->work);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

CUGL_API cugl_status cugl_app_server_create(cugl_app_server **out, cugl_app_context *ctx,
                                            const cugl_app_server_desc *desc)
{
    if (!out || !ctx || !desc)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "%s is NULL",
                          !out ? "out" : !ctx ? "ctx" : "desc");
    *out = NULL;
    const char *token = desc->token ? desc->token : "";
    if (desc->port < 0 || desc->port > 65535)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "port %d is not 0 to 65535",
                          desc->port);
    if (desc->quality < 0 || desc->quality > 100)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "quality %d is not 1 to 100 (0: 85)",
                          desc->quality);
    if (desc->encoders < 0 || desc->encoders > CUGL_APP_SERVE_MAX_ENCODERS)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "%d encoders; 1 to %d (0: 2)",
                          desc->encoders, CUGL_APP_SERVE_MAX_ENCODERS);
    if (strlen(token) > CUGL_APP_SERVE_MAX_TOKEN || !token_chars_ok(token))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "the token must be at most %d letters, digits, '-', '_' or '.'",
                          CUGL_APP_SERVE_MAX_TOKEN);
    cugl_app_server *s = calloc(1, sizeof *s);
    if (!s)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, __func__, "no memory for a server");
    s->ctx = ctx;
    snprintf(s->name, sizeof s->name, "%s", desc->name ? desc->name : "cugl");
    snprintf(s->token, sizeof s->token, "%s", token);
    s->quality = desc->quality ? desc->quality : 85;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->work, NULL);

    const char *address = desc->address && *desc->address ? desc->address : "127.0.0.1";
    lws_set_log_level(LLL_ERR, NULL);
    struct lws_context_creation_info info = {0};
    info.port = CONTEXT_PORT_NO_LISTEN;
    info.user = s;
    info.gid = (gid_t)-1;
    info.uid = (uid_t)-1;
    info.options = LWS_SERVER_OPTION_EXPLICIT_VHOSTS;
    s->lws = lws_create_context(&info);
    cugl_status st = s->lws ? listen_all(s, __func__, address, desc->port)
                            : cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, __func__,
                                         "libwebsockets cannot make a context");
    if (st != CUGL_OK) {
        cugl_app_server_destroy(s);
        return st;
    }
    int encoders = desc->encoders ? desc->encoders : 2;
    for (; s->encoder_count < encoders; s->encoder_count++)
        if (pthread_create(&s->encoders[s->encoder_count], NULL, encoder_main, s) != 0)
            break;
    s->network_started = s->encoder_count == encoders &&
                         pthread_create(&s->network, NULL, network_main, s) == 0;
    if (!s->network_started) {
        cugl_app_server_destroy(s);
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, __func__, "cannot start the server's threads");
    }
    *out = s;
    return CUGL_OK;
}

/* ---- Frames ----------------------------------------------------------------------- */

/* `text` as the inside of a JSON string, cut to fit `size`. */
static void json_escape(char *out, size_t size, const char *text)
{
    size_t n = 0;
    for (const unsigned char *c = (const unsigned char *)text; *c && n + 7 < size; c++) {
        if (*c == '"' || *c == '\\') {
            out[n++] = '\\';
            out[n++] = (char)*c;
        } else if (*c < 0x20) {
            n += (size_t)snprintf(out + n, size - n, "\\u%04x", *c);
        } else {
            out[n++] = (char)*c;
        }
    }
    out[n] = '\0';
}

/* A free slot's buffer of the framebuffer's size. */
static cugl_status size_slot(slot *sl, int width, int height, const char *who)
{
    if (sl->pbo && sl->width == width && sl->height == height)
        return CUGL_OK;
    free_slot(sl);
    GLsizeiptr bytes = (GLsizeiptr)width * height * 4;
    cugl_app_drain_gl_errors();
    glCreateBuffers(1, &sl->pbo);
    GLbitfield flags = GL_MAP_READ_BIT | GL_MAP_PERSISTENT_BIT | GL_MAP_COHERENT_BIT;
    glNamedBufferStorage(sl->pbo, bytes, NULL, flags | GL_CLIENT_STORAGE_BIT);
    sl->pixels = glMapNamedBufferRange(sl->pbo, 0, bytes, flags);
    cugl_status st = cugl_app_check_gl(who, "a mapped pixel-pack buffer");
    if (st == CUGL_OK && !sl->pixels)
        st = cugl__fail(CUGL_ERROR_GL, who, "cannot map a %d x %d pixel-pack buffer", width,
                        height);
    if (st != CUGL_OK) {
        free_slot(sl);
        return st;
    }
    sl->width = width;
    sl->height = height;
    return CUGL_OK;
}

CUGL_API cugl_status cugl_app_server_frame(cugl_app_server *s)
{
    if (!s)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "server is NULL");
    double t = now_s();
    if (s->fps_start_s == 0) {
        s->fps_start_s = t;
    } else if (++s->fps_frames, t - s->fps_start_s >= FPS_WINDOW_S) {
        s->fps = (double)s->fps_frames / (t - s->fps_start_s);
        s->fps_start_s = t;
        s->fps_frames = 0;
    }
    /* Events pushed before the last present are in this frame; those
     * pushed since, in the next (a few may be, and are counted later). */
    long shown = s->events_shown;
    s->events_shown = atomic_load(&s->events);

    /* Copies that have finished go to the encoders. */
    pthread_mutex_lock(&s->lock);
    for (int i = 0; i < SLOTS; i++) {
        slot *sl = &s->slots[i];
        if (sl->state != SLOT_COPYING ||
            glClientWaitSync(sl->fence, 0, 0) == GL_TIMEOUT_EXPIRED)
            continue;
        glDeleteSync(sl->fence);
        sl->fence = NULL;
        sl->state = SLOT_QUEUED;
        s->queue[s->queued++] = i;
        pthread_cond_signal(&s->work);
    }
    int free_index = -1;
    for (int i = 0; i < SLOTS && free_index < 0; i++)
        if (s->slots[i].state == SLOT_FREE)
            free_index = i;
    pthread_mutex_unlock(&s->lock);

    int width = 0, height = 0;
    cugl_app_context_size(s->ctx, &width, &height);
    if (atomic_load(&s->viewers) == 0 || width <= 0 || height <= 0)
        return CUGL_OK;
    if (free_index < 0) {
        atomic_fetch_add(&s->dropped, 1);
        return CUGL_OK;
    }
    slot *sl = &s->slots[free_index];
    CUGL__TRY(size_slot(sl, width, height, __func__));
    sl->number = cugl_app_context_frame(s->ctx);
    char name[256], stats[2 * CUGL_APP_SERVE_MAX_STATS];
    json_escape(name, sizeof name, s->name);
    json_escape(stats, sizeof stats, s->stats);
    snprintf(sl->json, sizeof sl->json,
             "{\"frame\":%ld,\"width\":%d,\"height\":%d,\"name\":\"%s\",\"fps\":%.1f,"
             "\"viewers\":%d,\"events\":%ld,\"stats\":\"%s\"}",
             sl->number, width, height, name, s->fps,
             atomic_load(&s->viewers), shown, stats);

    /* The caller's read framebuffer, pack buffer and alignment are kept. */
    GLint read_fbo = 0, pack_buffer = 0, alignment = 4;
    glGetIntegerv(GL_READ_FRAMEBUFFER_BINDING, &read_fbo);
    glGetIntegerv(GL_PIXEL_PACK_BUFFER_BINDING, &pack_buffer);
    glGetIntegerv(GL_PACK_ALIGNMENT, &alignment);
    cugl_app_drain_gl_errors();
    glBindFramebuffer(GL_READ_FRAMEBUFFER, cugl_app_context_framebuffer(s->ctx));
    glBindBuffer(GL_PIXEL_PACK_BUFFER, sl->pbo);
    glPixelStorei(GL_PACK_ALIGNMENT, 4);
    glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, NULL);
    glPixelStorei(GL_PACK_ALIGNMENT, alignment);
    glBindBuffer(GL_PIXEL_PACK_BUFFER, (GLuint)pack_buffer);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, (GLuint)read_fbo);
    sl->fence = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
    CUGL__TRY(cugl_app_check_gl(__func__, "copying the framebuffer"));
    pthread_mutex_lock(&s->lock);
    sl->state = SLOT_COPYING;
    pthread_mutex_unlock(&s->lock);
    return CUGL_OK;
}

CUGL_API cugl_status cugl_app_server_set_stats(cugl_app_server *s, const char *text)
{
    if (!s)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "server is NULL");
    snprintf(s->stats, sizeof s->stats, "%s", text ? text : "");
    return CUGL_OK;
}

CUGL_API int cugl_app_server_port(const cugl_app_server *s)
{
    return s ? s->port : 0;
}

CUGL_API const char *cugl_app_server_address(const cugl_app_server *s, int i)
{
    return s && i >= 0 && i < s->address_count ? s->addresses[i] : NULL;
}

CUGL_API int cugl_app_server_viewers(const cugl_app_server *s)
{
    return s ? atomic_load(&((cugl_app_server *)s)->viewers) : 0;
}

CUGL_API void cugl_app_server_counts(const cugl_app_server *s, long *encoded, long *sent,
                                     long *dropped)
{
    cugl_app_server *m = (cugl_app_server *)s;
    if (encoded)
        *encoded = m ? atomic_load(&m->encoded) : 0;
    if (sent)
        *sent = m ? atomic_load(&m->sent) : 0;
    if (dropped)
        *dropped = m ? atomic_load(&m->dropped) : 0;
}
