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
 * Returns NULL after printing why when the connection cannot be made.
 * The client acknowledges each frame as it arrives ("ack F 0"), as the
 * page does once it has shown it; see ws_client_set_acks. */
ws_client *ws_client_open(int port, const char *token);

/* The same to `address` (an IPv4 literal). */
ws_client *ws_client_open_at(const char *address, int port, const char *token);

/* How the client acknowledges frames: WS_ACK_EACH (the default), each as it
 * arrives, after `on_frame` returns (the time it took is the ack's HELD);
 * WS_ACK_NEVER, none (a viewer that does not play by the rules). */
typedef enum ws_ack_mode { WS_ACK_EACH, WS_ACK_NEVER } ws_ack_mode;
void ws_client_set_acks(ws_client *c, ws_ack_mode mode);

/* Each ack sent `seconds` after its frame arrived, and its HELD the same
 * as without: time the page spends that it does not report, as a
 * browser's, whose ack waits for its next animation frame and event loop
 * turn. A frame that arrives meanwhile is acked in its place (acks are
 * cumulative). 0, the default: at once. */
void ws_client_set_ack_delay(ws_client *c, double seconds);

/* Called with each whole message received (header and picture, as sent),
 * before it is acknowledged. */
typedef void ws_frame_fn(void *user, const uint8_t *message, size_t size);
void ws_client_on_frame(ws_client *c, ws_frame_fn *fn, void *user);
void ws_client_close(ws_client *c);

/* Run the client until it has `frames` frames more than now, or it was
 * refused or closed, or `seconds` passed; true when the frames came. */
bool ws_client_wait_frames(ws_client *c, int frames, double seconds);

/* Run until the connection is up or failed, at most `seconds`; true: up. */
bool ws_client_wait_open(ws_client *c, double seconds);

/* Whether the server refused or closed the connection. */
bool ws_client_closed(const ws_client *c);

/* Frames (messages: pictures and headers alone), and bytes of messages,
 * received so far. */
long ws_client_frames(const ws_client *c);
long long ws_client_bytes(const ws_client *c);

/* A number of the newest frame's JSON header ("frame", "width", ...); -1 if absent. */
double ws_client_header_number(const ws_client *c, const char *key);

/* The same of the newest message with a picture (the one ws_client_decode
 * decodes); -1 if absent. */
double ws_client_picture_number(const ws_client *c, const char *key);

/* The same of a message's header; -1 if absent. */
double ws_message_number(const uint8_t *message, size_t size, const char *key);

/* The newest picture decoded as RGBA8 rows, top to bottom (malloc'ed; the
 * caller frees), and its size (the JPEG's, which may be the program's
 * divided by the header's "scale"); NULL if there is none or it is not a
 * JPEG. */
uint8_t *ws_client_decode(const ws_client *c, int *width, int *height);

/* A message's picture decoded so; NULL if it has none. */
uint8_t *ws_message_decode(const uint8_t *message, size_t size, int *width, int *height);

/* Queue `text` (event lines) to send as one text message; it goes out
 * while the client runs (ws_client_wait_*). False: the queue is full. */
bool ws_client_send(ws_client *c, const char *text);

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
