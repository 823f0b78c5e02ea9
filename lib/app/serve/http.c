/*
 * http.c - the network thread's HTTP: the page, the token, the Host and Origin
 * checks (DNS rebinding, other sites' pages) and the WebSocket upgrade's
 * refusals.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libwebsockets.h>

#include "server.h"

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

cugl_app_server *cugl__serve_server_of(struct lws *wsi)
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

/* Whether `host` (a Host header: a name or literal, a port after it) is one
 * a server without a token answers to: an IP address, "localhost", or the
 * name it listens on as given. A web page elsewhere whose name is made to
 * resolve to this host (DNS rebinding) sends its own name. */
static bool host_allowed(const cugl_app_server *s, const char *host)
{
    char name[256];
    size_t n;
    if (host[0] == '[') { /* an IPv6 literal */
        n = strcspn(host + 1, "]");
        if (host[1 + n] != ']' || n >= sizeof name)
            return false;
        memcpy(name, host + 1, n);
        name[n] = '\0';
        struct in6_addr a6;
        return inet_pton(AF_INET6, name, &a6) == 1;
    }
    n = strcspn(host, ":");
    if (n >= sizeof name)
        return false;
    memcpy(name, host, n);
    name[n] = '\0';
    struct in_addr a4;
    return inet_pton(AF_INET, name, &a4) == 1 || strcasecmp(name, "localhost") == 0 ||
           strcasecmp(name, s->listen_name) == 0;
}

/* Without a token, whether a WebSocket may be opened from where this one
 * comes: any web page the user has open could otherwise watch and drive
 * the program (browsers let pages open WebSockets anywhere, sending their
 * Origin). A request without an Origin is no browser's page. */
static bool origin_allowed(const cugl_app_server *s, struct lws *wsi, const char **why)
{
    char host[256], origin[300];
    if (lws_hdr_copy(wsi, host, (int)sizeof host, WSI_TOKEN_HOST) <= 0 ||
        !host_allowed(s, host)) {
        *why = "without a token this server answers only to an IP address, localhost or its "
               "own name";
        return false;
    }
    int n = lws_hdr_copy(wsi, origin, (int)sizeof origin, WSI_TOKEN_ORIGIN);
    if (n == 0 && lws_hdr_total_length(wsi, WSI_TOKEN_ORIGIN) == 0)
        return true;
    const char *rest = n < 0                                   ? NULL
                       : strncasecmp(origin, "http://", 7) == 0  ? origin + 7
                       : strncasecmp(origin, "https://", 8) == 0 ? origin + 8
                                                                 : NULL;
    if (!rest || strcasecmp(rest, host) != 0) {
        *why = "without a token this server takes WebSockets from its own page alone";
        return false;
    }
    return true;
}

/* The HTTP status that refuses an upgrade, with why; 0 where its path,
 * token, origin, subprotocol and the viewer count all allow it. */
unsigned cugl__serve_upgrade_refusal(cugl_app_server *s, struct lws *wsi, const char **why)
{
    char uri[64];
    if (lws_hdr_copy(wsi, uri, (int)sizeof uri, WSI_TOKEN_GET_URI) <= 0 ||
        strcmp(uri, "/ws") != 0)
        return *why = "the WebSocket is /ws", HTTP_STATUS_NOT_FOUND;
    if (!token_ok(s, wsi))
        return *why = "this server wants ?token=...", HTTP_STATUS_FORBIDDEN;
    if (!s->token[0] && !origin_allowed(s, wsi, why))
        return HTTP_STATUS_FORBIDDEN;
    if (!offers_subprotocol(wsi, CUGL_APP_SERVE_SUBPROTOCOL))
        return *why = "the WebSocket's subprotocol must be " CUGL_APP_SERVE_SUBPROTOCOL,
               HTTP_STATUS_BAD_REQUEST;
    if (atomic_load(&s->viewers) >= CUGL_APP_SERVE_MAX_VIEWERS)
        return *why = "too many viewers", HTTP_STATUS_SERVICE_UNAVAILABLE;
    return 0;
}

/* An upgrade is answered with an HTTP status where it is refused: >0. */
static int confirm_upgrade(cugl_app_server *s, struct lws *wsi)
{
    const char *why = NULL;
    unsigned status = cugl__serve_upgrade_refusal(s, wsi, &why);
    if (!status)
        return 0;
    return lws_return_http_status(wsi, status, why) ? -1 : 1;
}

int cugl__serve_http_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user,
                              void *in, size_t len)
{
    cugl_app_server *s = cugl__serve_server_of(wsi);
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
