/*
 * server.c - a server made and ended: its description checked, its encoder
 * chosen, its addresses resolved and listened on (with a bind of its own
 * where libwebsockets cannot say why not), its threads; and what it tells.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <libwebsockets.h>

#include "server.h"

/* Why the numeric `address`:`port` cannot be listened on, from a bind of
 * our own; true where our bind worked (what failed was libwebsockets'). */
static bool bind_failure(char *why, size_t size, const char *address, int port)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV}, *ai = NULL;
    char service[16];
    snprintf(service, sizeof service, "%d", port);
    int rc = getaddrinfo(address, service, &hints, &ai);
    if (rc != 0) {
        snprintf(why, size, "%s", gai_strerror(rc));
        return false;
    }
    int fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    bool bindable = fd >= 0 && bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 1) == 0;
    if (!bindable)
        snprintf(why, size, "%s%s", strerror(errno),
                 errno == EADDRNOTAVAIL ? " (not an address of this host)" : "");
    else
        snprintf(why, size, "libwebsockets could not listen there");
    if (fd >= 0)
        close(fd);
    freeaddrinfo(ai);
    return bindable;
}

/* Whether `address` is the C library's numeric shorthand ("0", "2130706433",
 * "127.1", "0x7f.1"), which getaddrinfo takes as an IPv4 address although it
 * is neither a dotted address nor a name: "0" is every address of the
 * host, and reads like a port. */
static bool numeric_shorthand(const char *address)
{
    struct in_addr v4;
    struct in6_addr v6;
    if (inet_pton(AF_INET, address, &v4) == 1 || inet_pton(AF_INET6, address, &v6) == 1)
        return false;
    struct addrinfo hints = {.ai_family = AF_INET, .ai_flags = AI_NUMERICHOST}, *ai = NULL;
    if (getaddrinfo(address, NULL, &hints, &ai) != 0)
        return false;
    freeaddrinfo(ai);
    return true;
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
    info.protocols = cugl__serve_protocols;
    info.options = LWS_SERVER_OPTION_FAIL_UPON_UNABLE_TO_BIND | LWS_SERVER_OPTION_VALIDATE_UTF8;
    if (s->cert[0]) {
        info.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
        info.ssl_cert_filepath = s->cert;
        info.ssl_private_key_filepath = s->key;
    }
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
    if (numeric_shorthand(address))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "cannot serve on %s: it is neither a dotted or colon address nor a "
                          "name (every address of this host is 0.0.0.0, or :: with IPv6; "
                          "loopback is 127.0.0.1)",
                          address);
    int count = resolve(s, address, why, sizeof why);
    if (count == 0)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "cannot serve on %s: %s",
                          address, why);
    bool literal = count == 1 && strcmp(s->addresses[0], address) == 0;
    int bound = 0;
    bool bindable = false;
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
            bindable = bind_failure(why, sizeof why, s->addresses[i], s->port ? s->port : port);
        if (literal)
            break;
    }
    lws_set_log_level(LLL_ERR, NULL);
    s->address_count = bound;
    if (bound == 0 && bindable && s->cert[0])
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "cannot serve HTTPS with the certificate %s and the key %s: "
                          "libwebsockets could not load them (a key that does not match the "
                          "certificate?); %s port %d itself can be bound",
                          s->cert, s->key, s->addresses[0], s->port ? s->port : port);
    if (bound == 0)
        return cugl__fail(CUGL_ERROR_INVALID_STATE, who,
                          "cannot serve on %s%s%s%s port %d: %s", address,
                          literal ? "" : " (", literal ? "" : s->addresses[0],
                          literal ? "" : ")", port, why);
    return CUGL_OK;
}

/* A PEM file of `what` (its marker within its first 64 KiB), readable. */
static cugl_status check_pem(const char *path, const char *what, const char *marker,
                             const char *who)
{
    FILE *f = strlen(path) < 512 ? fopen(path, "rb") : NULL;
    if (!f)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "cannot read the %s %s: %s", what,
                          path, strlen(path) < 512 ? strerror(errno) : "the path is too long");
    enum { HEAD = 65536 };
    char *text = malloc(HEAD);
    size_t n = text ? fread(text, 1, HEAD - 1, f) : 0;
    fclose(f);
    if (!text)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, who, "no memory to read the %s", what);
    text[n] = '\0';
    bool pem = strstr(text, marker) != NULL;
    free(text);
    if (!pem)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the %s %s is not a PEM %s (no \"%s\" line)", what, path, what,
                          marker);
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

CUGL_API void cugl_app_server_destroy(cugl_app_server *s)
{
    if (!s)
        return;
    /* The GPU's encoder first: its thread publishes frames (cugl__serve_gpu_job_done). */
    pthread_mutex_lock(&s->gpu_lock);
    cugl__gpu_jpeg *g = s->gpu;
    s->gpu = NULL;
    pthread_mutex_unlock(&s->gpu_lock);
    cugl__gpu_jpeg_close(g);
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
    for (int l = 0; l < LEVELS; l++)
        frame_unref(s->newest[l]);
    frame_unref(s->header);
    for (int i = 0; i < s->video_count; i++)
        cugl__serve_video_stream_free(s->video_list[i]);
    for (int i = 0; i < SLOTS; i++) {
        /* Copying, or queued and never waited for. */
        cugl__app_copy_fence_drop(s->egl_display, &s->slots[i].egl_fence, &s->slots[i].fence);
        cugl__serve_free_slot(&s->slots[i]);
    }
    cugl__app_sized_fb_free(&s->down);
    pthread_cond_destroy(&s->work);
    pthread_mutex_destroy(&s->lock);
    pthread_mutex_destroy(&s->gpu_lock);
    free(s);
}

/* The description's fields each in their range, and its certificate and
 * key loadable. */
static cugl_status check_desc(const cugl_app_server_desc *desc, const char *who)
{
    const char *token = desc->token ? desc->token : "";
    if (desc->port < 0 || desc->port > 65535)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "port %d is not 0 to 65535",
                          desc->port);
    if (desc->quality < 0 || desc->quality > 100)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "quality %d is not 1 to 100 (0: 85)",
                          desc->quality);
    if (desc->encoders < 0 || desc->encoders > CUGL_APP_SERVE_MAX_ENCODERS)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "%d encoders; 1 to %d (0: 2)",
                          desc->encoders, CUGL_APP_SERVE_MAX_ENCODERS);
    if (desc->window < 0 || desc->window > CUGL_APP_SERVE_MAX_WINDOW)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "a window of %d frames; 1 to %d (0: 2)", desc->window,
                          CUGL_APP_SERVE_MAX_WINDOW);
    if (desc->encoder < CUGL_APP_SERVE_ENCODER_AUTO ||
        desc->encoder > CUGL_APP_SERVE_ENCODER_NVJPEG)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "encoder %d is not CUGL_APP_SERVE_ENCODER_AUTO, _CPU, _GPU or _NVJPEG",
                          (int)desc->encoder);
    bool cert = desc->cert && *desc->cert, key = desc->key && *desc->key;
    if (cert != key)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "HTTPS needs a certificate and a key: %s is missing",
                          cert ? "the key" : "the certificate");
    for (int i = 0; cert && i < 2; i++)
        CUGL__TRY(check_pem(i ? desc->key : desc->cert, i ? "key" : "certificate",
                            i ? "PRIVATE KEY-----" : "-----BEGIN CERTIFICATE-----", who));
    if (desc->codec < CUGL_APP_SERVE_CODEC_AUTO || desc->codec > CUGL_APP_SERVE_CODEC_VIDEO)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "codec %d is not CUGL_APP_SERVE_CODEC_AUTO, _JPEG or _VIDEO",
                          (int)desc->codec);
    if (strlen(token) > CUGL_APP_SERVE_MAX_TOKEN || !token_chars_ok(token))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the token must be at most %d letters, digits, '-', '_' or '.'",
                          CUGL_APP_SERVE_MAX_TOKEN);
    return CUGL_OK;
}

/* JPEG on the GPU where GL runs on one: GL's compute shaders, or nvJPEG
 * where asked for (or CUGL_SERVE_ENCODER names it); libjpeg-turbo where GL
 * renders on the CPU. Refused where the GPU's encoder was asked for and
 * cannot be had. */
static cugl_status choose_encoder(cugl_app_server *s, const cugl_app_server_desc *desc,
                                  const char *who)
{
    cugl_app_serve_encoder encoder = desc->encoder;
    static const char *const encoder_names[] = {"auto", "cpu", "gpu", "nvjpeg"};
    const char *forced = getenv("CUGL_SERVE_ENCODER");
    for (int i = 1; encoder == CUGL_APP_SERVE_ENCODER_AUTO && forced && i < 4; i++)
        if (strcmp(forced, encoder_names[i]) == 0)
            encoder = (cugl_app_serve_encoder)i;
    const char *renderer = cugl_app_context_renderer(s->ctx);
    bool software = strstr(renderer, "llvmpipe") || strstr(renderer, "softpipe") ||
                    strstr(renderer, "Software Rasterizer");
    if (encoder == CUGL_APP_SERVE_ENCODER_CPU) {
        snprintf(s->encoder_why, sizeof s->encoder_why, "the CPU was asked for%s",
                 encoder != desc->encoder ? " (CUGL_SERVE_ENCODER=cpu)" : "");
        return CUGL_OK;
    }
    if (encoder == CUGL_APP_SERVE_ENCODER_AUTO && software) {
        snprintf(s->encoder_why, sizeof s->encoder_why,
                 "GL renders on the CPU (%s): no GPU to encode on", renderer);
        return CUGL_OK;
    }
    char why[sizeof s->encoder_why - 64];
    s->gpu = cugl__gpu_jpeg_open(s->ctx, encoder == CUGL_APP_SERVE_ENCODER_NVJPEG,
                                 cugl__serve_gpu_job_done, s, why, sizeof why);
    snprintf(s->encoder_why, sizeof s->encoder_why, "%s%s", why,
             encoder == desc->encoder                 ? ""
             : encoder == CUGL_APP_SERVE_ENCODER_NVJPEG ? " (CUGL_SERVE_ENCODER=nvjpeg)"
                                                        : " (CUGL_SERVE_ENCODER=gpu)");
    if (!s->gpu && encoder != CUGL_APP_SERVE_ENCODER_AUTO)
        return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, who, "no JPEG on the GPU: %s", why);
    return CUGL_OK;
}

/* libwebsockets' context, the addresses listened on, the encoder threads
 * and the network thread. */
static cugl_status start(cugl_app_server *s, const cugl_app_server_desc *desc, const char *who)
{
    lws_set_log_level(LLL_ERR, NULL);
    struct lws_context_creation_info info = {0};
    info.port = CONTEXT_PORT_NO_LISTEN;
    info.user = s;
    info.gid = (gid_t)-1;
    info.uid = (uid_t)-1;
    info.options = LWS_SERVER_OPTION_EXPLICIT_VHOSTS |
                   (s->cert[0] ? LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT : 0);
    s->lws = lws_create_context(&info);
    if (!s->lws)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, who, "libwebsockets cannot make a context");
    CUGL__TRY(listen_all(s, who, desc->address && *desc->address ? desc->address : "127.0.0.1",
                         desc->port));
    int encoders = desc->encoders ? desc->encoders : 2;
    for (; s->encoder_count < encoders; s->encoder_count++)
        if (pthread_create(&s->encoders[s->encoder_count], NULL, cugl__serve_encoder_main, s) !=
            0)
            break;
    s->network_started = s->encoder_count == encoders &&
                         pthread_create(&s->network, NULL, cugl__serve_network_main, s) == 0;
    if (!s->network_started)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, who, "cannot start the server's threads");
    return CUGL_OK;
}

CUGL_API cugl_status cugl_app_server_create(cugl_app_server **out, cugl_app_context *ctx,
                                            const cugl_app_server_desc *desc)
{
    if (!out || !ctx || !desc)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "%s is NULL",
                          !out ? "out" : !ctx ? "ctx" : "desc");
    *out = NULL;
    CUGL__TRY(check_desc(desc, __func__));
    cugl_app_server *s = calloc(1, sizeof *s);
    if (!s)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, __func__, "no memory for a server");
    s->ctx = ctx;
    snprintf(s->name, sizeof s->name, "%s", desc->name ? desc->name : "cugl");
    snprintf(s->token, sizeof s->token, "%s", desc->token ? desc->token : "");
    s->quality = desc->quality ? desc->quality : 85;
    s->window = desc->window ? desc->window : 2;
    for (int l = 0; l < LEVELS; l++)
        s->level_psnr[l] = -1;
    s->codec = desc->codec;
    const char *timeout = getenv("CUGL_SERVE_ACK_TIMEOUT");
    s->ack_timeout_s = timeout && atoi(timeout) > 0 ? atoi(timeout) : ACK_TIMEOUT_S;
    snprintf(s->listen_name, sizeof s->listen_name, "%s",
             desc->address && *desc->address ? desc->address : "127.0.0.1");
    if (desc->cert && *desc->cert) {
        snprintf(s->cert, sizeof s->cert, "%s", desc->cert);
        snprintf(s->key, sizeof s->key, "%s", desc->key);
    }
    s->egl_display = cugl__app_egl_fence_display(ctx);
    pthread_mutex_init(&s->lock, NULL);
    pthread_mutex_init(&s->gpu_lock, NULL);
    pthread_cond_init(&s->work, NULL);
    cugl_status st = choose_encoder(s, desc, __func__);
    if (st == CUGL_OK)
        st = start(s, desc, __func__);
    if (st != CUGL_OK) {
        cugl_app_server_destroy(s);
        return st;
    }
    *out = s;
    return CUGL_OK;
}

CUGL_API const char *cugl_app_server_encoder(const cugl_app_server *s, const char **why)
{
    if (why)
        *why = s ? s->encoder_why : "";
    return !s ? NULL : s->gpu ? cugl__gpu_jpeg_name(s->gpu) : "libjpeg-turbo";
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

CUGL_API bool cugl_app_server_is_https(const cugl_app_server *s)
{
    return s && s->cert[0];
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

CUGL_API cugl_status cugl_app_server_viewer(const cugl_app_server *s, int i,
                                            cugl_app_server_viewer_stats *out)
{
    if (!s || !out)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "%s is NULL",
                          !s ? "server" : "out");
    cugl_app_server *m = (cugl_app_server *)s;
    pthread_mutex_lock(&m->lock);
    int count = m->viewer_stats_count;
    if (i >= 0 && i < count)
        *out = m->viewer_stats[i];
    pthread_mutex_unlock(&m->lock);
    if (i < 0 || i >= count)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "viewer %d: %d viewers are connected", i, count);
    return CUGL_OK;
}
