/*
 * ws_client.h - the page's part, played in C on libwebsockets: a viewer
 * that connects to a cugl frame server's /ws, keeps the newest frame (its
 * JSON header and JPEG), decodes it with libjpeg-turbo, and sends event
 * lines. And a few raw-socket helpers for hostile clients.
 */
#ifndef CUGL_TEST_WS_CLIENT_H
#define CUGL_TEST_WS_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ws_client ws_client;

/* Connect to 127.0.0.1:port, path "/ws?token=<token>" (token NULL: none).
 * Returns NULL after printing why when the connection cannot be made. */
ws_client *ws_client_open(int port, const char *token);
void ws_client_close(ws_client *c);

/* Run the client until it has `frames` frames more than now, or it was
 * refused or closed, or `seconds` passed; true when the frames came. */
bool ws_client_wait_frames(ws_client *c, int frames, double seconds);

/* Run until the connection is up or failed, at most `seconds`; true: up. */
bool ws_client_wait_open(ws_client *c, double seconds);

/* Whether the server refused or closed the connection. */
bool ws_client_closed(const ws_client *c);

/* Frames, and bytes of messages, received so far. */
long ws_client_frames(const ws_client *c);
long long ws_client_bytes(const ws_client *c);

/* A number of the newest frame's JSON header ("frame", "width", ...); -1 if absent. */
double ws_client_header_number(const ws_client *c, const char *key);

/* The newest frame decoded as RGBA8 rows, top to bottom (malloc'ed; the
 * caller frees), and its size; NULL if there is none or it is not a JPEG. */
uint8_t *ws_client_decode(const ws_client *c, int *width, int *height);

/* Queue `text` (event lines) to send as one text message; it goes out
 * while the client runs (ws_client_wait_*). */
void ws_client_send(ws_client *c, const char *text);

/* Run the client for `seconds`. */
void ws_client_run(ws_client *c, double seconds);

/* ---- Raw sockets ---- */

/* A TCP connection to 127.0.0.1:port; -1 on failure. */
int raw_connect(int port);

/* Send the WebSocket upgrade for /ws?token=<token> and read the reply's
 * status line: the HTTP status (101 when upgraded), or -1. */
int raw_upgrade(int fd, const char *token);

/* The same for any path, token and Sec-WebSocket-Protocol list (NULL:
 * no such header). */
int raw_upgrade_to(int fd, const char *path, const char *token, const char *subprotocols);

/* An HTTP GET of `path`: the reply's status, or -1. */
int raw_http_status(int port, const char *path);

/* Send a client frame (masked) with `opcode` and a header claiming
 * `claimed` bytes of payload, then `len` bytes of `payload`. */
bool raw_send_frame(int fd, int opcode, uint64_t claimed, const void *payload, size_t len);

/* Whether the server closes the connection within `seconds` (reading and
 * dropping what it sends meanwhile). */
bool raw_closed_by_peer(int fd, double seconds);

#endif /* CUGL_TEST_WS_CLIENT_H */
