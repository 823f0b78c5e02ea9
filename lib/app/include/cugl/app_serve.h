/**
 * @file cugl/app_serve.h
 * Live view in a web browser: the frames of a GL context, served over HTTP
 * and WebSocket to any number of viewers, and their mouse, wheel and keys
 * sent back into the context's input.
 *
 * Built where libwebsockets and libjpeg-turbo are (Meson feature `serve`;
 * CUGL_APP_HAS_SERVE is 1 then). Where the GL context runs on a GPU, frames
 * are encoded there by GL compute shaders (baseline JPEG, 4:2:0, with
 * libjpeg-turbo's tables): the framebuffer is flipped and scaled by a
 * blit, encoded in GL's own work, and only the JPEG is read back; nothing
 * runs on CUDA, whose work on one GPU would wait for GL's turn and make GL
 * wait for its own. nvJPEG, loaded at run time (no build needs it), where
 * asked for. Where GL renders on the CPU (Mesa's llvmpipe) libjpeg-turbo
 * encodes there; cugl_app_server_encoder says which and why.
 *
 * Where it listens: on exactly the addresses it is given and no other.
 * NULL or "" is 127.0.0.1 alone (IPv4 loopback); "::1" is IPv6 loopback;
 * a host name ("localhost") is resolved and each of its addresses that this
 * host has is bound (at least one must be); a literal that is not this
 * host's is refused with the system's reason. "0.0.0.0" or "::" listen on
 * every address of the host, and only they, said in full: the C library's
 * numeric shorthand ("0", "2130706433", "127.1") is refused, "0" above all,
 * which would mean everywhere and reads like a port. Listening everywhere,
 * anyone who can reach the host can watch and drive the program, so give a
 * token then (and keep it off plain-HTTP networks you do not trust).
 * cugl_app_server_address names what was bound.
 *
 * The protocol, for writing a viewer of one's own (the page the server
 * serves is one):
 *
 *   GET /  (or /index.html)  the page: HTML with a canvas that shows the
 *                   frames, the program's name, size, frame rate and its
 *                   timings. Other paths: 404.
 *   (Over HTTPS and WSS instead where the server has a certificate.)
 *   GET /ws         the WebSocket (RFC 6455). The upgrade must ask for the
 *                   subprotocol CUGL_APP_SERVE_SUBPROTOCOL ("cugl-frames")
 *                   in Sec-WebSocket-Protocol; the reply names it.
 *   ?token=T        with a token set, both the page and /ws want it as this
 *                   query argument.
 *
 * Refusals are HTTP statuses, and no WebSocket is opened: 403 for a missing
 * or wrong token (the page too), 400 for an upgrade without the subprotocol,
 * 404 for an upgrade to another path, 503 when CUGL_APP_SERVE_MAX_VIEWERS
 * viewers are connected already.
 *
 * Messages on the WebSocket:
 *
 *   server -> page  one binary message a frame (sent in fragments of at most
 *                   64 KiB, so the kernel takes each whole; a WebSocket
 *                   library hands over the message): a 4-byte little-endian
 *                   length N, N bytes of UTF-8 JSON (the header), then the
 *                   picture: a baseline JPEG, rows top to bottom ("codec"
 *                   "jpeg"), or a video frame ("codec" "vp8", or "h264":
 *                   an access unit in Annex B, Constrained Baseline, SPS
 *                   and PPS before each IDR; one frame of the viewer's own
 *                   stream, to decode in order; "key" says whether it is
 *                   a key frame); or nothing after the
 *                   header: the picture is the one the page has (it is
 *                   still), only the header is new. The header's fields:
 *                   "frame" (the context's frame number), "width",
 *                   "height" (the program's picture: draw the JPEG scaled
 *                   to this size), "name" (the program's), "fps" (the
 *                   program's rendering rate: frames rendered a second
 *                   over the half second before this frame),
 *                   "copied" (frames the server has copied for its
 *                   viewers so far, this one counted: at most 80 a
 *                   second, fewer where its encoders fall behind),
 *                   "viewers" (connected now), "events" (how many of the
 *                   viewers' events this frame shows), "stats"
 *                   (cugl_app_server_set_stats' text), "time" (when the
 *                   frame was rendered, seconds on the server's
 *                   CLOCK_MONOTONIC: comparable on the same host only);
 *                   with a picture, "codec" ("jpeg", "vp8" or "h264"),
 *                   "encoder" ("gl-compute", "nvjpeg", "libjpeg-turbo",
 *                   "libvpx" or "OpenH264"), "encode_ms" (the time the encoder took,
 *                   ms; GPU time on the GPU); for JPEG "quality"
 *                   and "scale" (each side of the JPEG is the picture's
 *                   divided by it: 1, 2 or 4), for video "key" and
 *                   "bitrate" (kbit/s); "codec_why" (why this viewer gets
 *                   this codec); and what the
 *                   server measured of this viewer's link from its
 *                   acknowledgements: "rtt_ms" (round trip, the least of
 *                   the last 10 s; -1 before it is known), "throughput"
 *                   (bytes a second the link carried; 0 before),
 *                   "input_ms" (the latest input to picture: an event's
 *                   arrival until the ack of the first frame that shows
 *                   it; -1 before), "window" (frames this viewer may
 *                   have unacknowledged), "unacked" (how many it has,
 *                   this one counted), "level" (0, the best, to 11: the
 *                   quality and scale chosen for its link) and
 *                   "interacting" (whether its input arrived in the last
 *                   second). A viewer should ignore fields it does not know.
 *   page -> server  text messages of lines:
 *                   "codecs vp8 h264" (the video codecs the page decodes,
 *                   any of vp8 and h264; names the server does not know
 *                   are passed over), or "codecs none WHY": what the page
 *                   decodes (WebCodecs' VideoDecoder; browsers have it
 *                   only in a secure context: HTTPS, or a page from
 *                   localhost). Until it names a codec this server has,
 *                   a viewer gets JPEG. "key": the page wants a key
 *                   frame (its decoder failed, or it lost its place).
 *                   "ack F H": the frame numbered F (and every one sent
 *                   before it) is shown, H milliseconds (a decimal number,
 *                   0 to 60000) after its message arrived. The server
 *                   sends a viewer a frame only while fewer than "window"
 *                   of its frames are unacknowledged: a page must ack
 *                   every frame it receives, headers alone included, or it
 *                   gets no more (a frame it skips is acked by acking a
 *                   later one). An ack of a frame earlier than one acked
 *                   already is ignored; an ack of a frame not sent to this
 *                   viewer closes it.
 *                   Event lines in the input-replay format of cugl/app.h
 *                   ("0 move 412 300", "0 button left down"),
 *                   the frame number ignored: each enters the context's
 *                   input as the window's own events do
 *                   (cugl_app_context_push_event) at the next present.
 *                   `resize` up to CUGL_APP_SERVE_MAX_RESIZE pixels a side.
 *
 * After each frame is rendered, cugl_app_server_frame starts a copy of the
 * framebuffer into mapped (pinned) GL memory, scaled down on the GPU when
 * every viewer with room wants it smaller, and hands it to the encoder
 * threads (headless, on EGL 1.5, at once, the encoder waiting for the copy
 * on an EGL fence; else once a later frame finds it finished); the render
 * thread never waits for the GPU, and without a viewer nothing is copied.
 * At most 80 frames a second are copied (in bursts of up to 4): a program
 * that renders faster has the rest shown to no viewer, as a 60 Hz display
 * would. With nvJPEG (where GL runs on a CUDA device) the copy stays on
 * the GPU, in CUDA memory GL imports, and a thread of the server's waits
 * for the encodes.
 *
 * Codecs: each viewer gets JPEG, or video (real time, no B-frames, a
 * stream of its own with a key frame first and whenever asked, at the
 * bitrate its link carried) where its page decodes a video codec this cugl
 * has and its link carries less than 30 Mbit/s (back to JPEG above 60), or
 * as cugl_app_server_desc.codec forces; the header says which and why. Of
 * the video codecs, H.264 (OpenH264, Constrained Baseline; Meson feature
 * `serve_h264`, Debian's libopenh264-dev) where the page decodes it, else
 * VP8 (libvpx; feature `serve_video`, libvpx-dev).
 *
 * Latency is bounded by counting: at most `window` frames (default 2) are
 * unacknowledged per viewer, so no more than that wait for it anywhere (in
 * the server, libwebsockets, the kernel or on the link), and each is the
 * newest of its level when sent: a slow viewer skips frames and never
 * holds the program or another viewer back. A viewer's video bitrate follows
 * the delay its frames see (down 30% when one waited over 30 ms beyond
 * the round trip, up 3% when none waited 8 ms; at most 70% of what its
 * link carried, which only frames of 32 kB or more measure while it gets
 * video: a shaper's burst passes smaller ones at once), as real-time video
 * does; each video frame gets the bits of one of the program's frames at
 * that bitrate (1 / fps, at most 60 a second), however many were skipped
 * before it, so frames stay the same size. Each viewer gets its own level
 * from its acknowledgements: the JPEG quality, then the size (halved or
 * quartered), that fits the bytes a second its link carried at the frame
 * rate wanted (the program's, at most 60, while the viewer's input
 * arrives; half of it otherwise). When the picture is still, it is sent
 * once more at the best level the viewer's link carries in a quarter of a
 * second, then headers alone until it changes.
 *
 * A message from the page longer than CUGL_APP_SERVE_MAX_MESSAGE bytes, a
 * line that is no event, a binary message or a `close` event disconnects
 * that viewer; the program goes on. So does more than its share of the
 * events waiting for the next present (CUGL_APP_EVENT_MAX_PENDING /
 * CUGL_APP_SERVE_MAX_VIEWERS: 128; a move right after its own last move
 * replaces it, so moves never add up to a flood). A viewer's Escape key is
 * not passed on (a window's Escape asks the program to close, and a
 * viewer may not). Of the resizes waiting for a present, the last alone
 * is applied. A viewer that owes an ack for 60 seconds (the environment's
 * CUGL_SERVE_ACK_TIMEOUT, in seconds, sets another) is disconnected, so
 * that silent connections cannot hold every place. At most 4 viewers get
 * video at once (each has an encoder of its own at the program's size,
 * gigabytes at the largest); others get JPEG, and their header's
 * "codec_why" says so.
 *
 * Without a token, a WebSocket upgrade is refused (403) whose Host header
 * is not an IP address, "localhost" or the address the server was given,
 * or whose Origin header (a browser's page sends one) is not that same
 * host: any web page the user has open could otherwise watch and drive
 * the program, directly or through a name made to resolve to this host.
 * With a token, the token alone decides.
 *
 * Threads: the server has a thread of its own for the network,
 * `encoders` threads for JPEG on the CPU and one for nvJPEG; its functions
 * are called from the thread that uses the context, with it current.
 */
#ifndef CUGL_APP_SERVE_H
#define CUGL_APP_SERVE_H

#include "cugl/app_context.h"

CUGL_BEGIN_DECLS

/** A frame server over a GL context. */
typedef struct cugl_app_server cugl_app_server;

enum {
    CUGL_APP_SERVE_MAX_MESSAGE = 4096,  /**< bytes of one message from a page */
    CUGL_APP_SERVE_MAX_VIEWERS = 32,    /**< viewers connected at once */
    CUGL_APP_SERVE_MAX_ENCODERS = 16,   /**< encoder threads */
    CUGL_APP_SERVE_MAX_TOKEN = 128,     /**< bytes of a token */
    CUGL_APP_SERVE_MAX_STATS = 1024,    /**< bytes of the stats text */
    CUGL_APP_SERVE_MAX_RESIZE = 8192,   /**< the largest size a page may ask for */
    CUGL_APP_SERVE_MAX_ADDRESSES = 8,   /**< addresses one server listens on */
    CUGL_APP_SERVE_MAX_WINDOW = 8,      /**< unacknowledged frames a viewer may have */
};

/** The WebSocket subprotocol a viewer must ask for. */
#define CUGL_APP_SERVE_SUBPROTOCOL "cugl-frames"

/** Which JPEG encoder a server uses (cugl_app_server_desc.encoder). */
typedef enum cugl_app_serve_encoder {
    /** GL compute shaders where the GL context runs on a GPU; libjpeg-turbo
     * where GL renders on the CPU (cugl_app_server_encoder says why). */
    CUGL_APP_SERVE_ENCODER_AUTO = 0,
    CUGL_APP_SERVE_ENCODER_CPU, /**< libjpeg-turbo on the encoder threads */
    /** GL compute shaders (any GL 4.5 context, llvmpipe's too), or
     * cugl_app_server_create fails */
    CUGL_APP_SERVE_ENCODER_GPU,
    /** nvJPEG on the CUDA device that runs the GL context, or
     * cugl_app_server_create fails */
    CUGL_APP_SERVE_ENCODER_NVJPEG,
} cugl_app_serve_encoder;

/** Which codec viewers get (cugl_app_server_desc.codec). */
typedef enum cugl_app_serve_codec {
    /** Each viewer its own: video where its page decodes a codec this
     * cugl has (WebCodecs; H.264 before VP8) and its link carries under
     * 30 Mbit/s; JPEG otherwise. */
    CUGL_APP_SERVE_CODEC_AUTO = 0,
    CUGL_APP_SERVE_CODEC_JPEG,  /**< JPEG for every viewer */
    /** Video (H.264 before VP8) for every viewer whose page decodes one */
    CUGL_APP_SERVE_CODEC_VIDEO,
} cugl_app_serve_codec;

/** What cugl_app_server_create serves, and where. */
typedef struct cugl_app_server_desc {
    /** Where to listen: a dotted IPv4 or a colon IPv6 literal, or a host
     * name (each of its addresses this host has); NULL or "": 127.0.0.1
     * alone; "0.0.0.0" or "::": everywhere. */
    const char *address;
    /** The TCP port; 0: one the system picks (cugl_app_server_port says which). */
    int port;
    /** The token a page must give (letters, digits, '-', '_' and '.');
     * NULL or "": none. */
    const char *token;
    /** What the page shows as the program's name; NULL: "cugl". */
    const char *name;
    /** The best JPEG quality, 1 to 100 (a viewer's link may get less); 0: 85. */
    int quality;
    /** Encoder threads, 1 to CUGL_APP_SERVE_MAX_ENCODERS; 0: 2. */
    int encoders;
    /** Frames a viewer may have unacknowledged, 1 to
     * CUGL_APP_SERVE_MAX_WINDOW; 0: 2. The worst latency is about this
     * many frames' transmissions plus a round trip. */
    int window;
    /** The codec; 0: CUGL_APP_SERVE_CODEC_AUTO. */
    cugl_app_serve_codec codec;
    /** HTTPS and WSS: the server's certificate, a PEM file (with `key`;
     * both or neither); NULL: plain HTTP. A page from another host has
     * WebCodecs (and so video) only over HTTPS. */
    const char *cert;
    /** The certificate's private key, a PEM file. */
    const char *key;
    /** The JPEG encoder; 0: CUGL_APP_SERVE_ENCODER_AUTO, which the
     * environment's CUGL_SERVE_ENCODER=cpu, =gpu or =nvjpeg overrides. */
    cugl_app_serve_encoder encoder;
} cugl_app_server_desc;

/** What the server measured of one viewer (cugl_app_server_viewer). */
typedef struct cugl_app_server_viewer_stats {
    double rtt_ms;     /**< round trip, the least of the last 10 s; -1: not yet known */
    double throughput; /**< bytes a second its link carried; 0: not yet known */
    double input_ms;   /**< its latest input to picture; -1: none measured */
    int quality;       /**< the JPEG quality it gets */
    int scale;         /**< its pictures' sides are the program's divided by this */
    int unacked;       /**< its frames not yet acknowledged */
    long sent;         /**< frames sent to it */
    long acked;        /**< of those, acknowledged */
} cugl_app_server_viewer_stats;

/**
 * Serve the frames of `ctx` (current on this thread) as `desc` says; the
 * server listens once this returns.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; a port outside 0 to 65535, a
 *   quality, encoder count, window, encoder or codec out of range, a token too long or with other
 *   characters, a certificate without a key or the other way round, or one
 *   that cannot be read or loaded: not PEM, a key of another certificate; an
 *   address in numeric shorthand), CUGL_ERROR_NOT_SUPPORTED (this build has no server: it
 *   needs libwebsockets-dev and libturbojpeg0-dev), CUGL_ERROR_INVALID_STATE
 *   (the address cannot be bound: the message names it and the system's
 *   reason: not an address of this host, in use, ...), CUGL_ERROR_INVALID_ARGUMENT
 *   also for a host name that does not resolve, CUGL_ERROR_OUT_OF_MEMORY,
 *   CUGL_ERROR_GL.
 * @thread_safety The thread whose GL context is current.
 * @param[out] out Receives the server.
 * @param ctx The context whose frames are served; it must outlive the server.
 * @param desc Where and how to serve.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_server_create(cugl_app_server **out, cugl_app_context *ctx,
                                            const cugl_app_server_desc *desc);

/**
 * Stop serving: viewers are disconnected, the threads joined, the GL
 * buffers freed (the context current). NULL: no-op.
 * @errors none.
 * @thread_safety The thread whose GL context is current.
 * @param server The server, or NULL.
 */
CUGL_API void cugl_app_server_destroy(cugl_app_server *server);

/**
 * The frame just rendered into the context's framebuffer (call it before
 * cugl_app_context_present): with a viewer connected, start copying it to
 * mapped memory, and queue for encoding the copies of earlier frames that
 * have finished. Never waits for the GPU; where every copy buffer is still
 * busy the frame is not sent.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL), CUGL_ERROR_OUT_OF_MEMORY,
 *   CUGL_ERROR_GL.
 * @thread_safety The thread whose GL context is current.
 * @param server The server.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_server_frame(cugl_app_server *server);

/**
 * The text the page shows under the picture (timings, say), sent with the
 * frames from the next one on; cut at CUGL_APP_SERVE_MAX_STATS - 1 bytes.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL server).
 * @thread_safety The thread whose GL context is current.
 * @param server The server.
 * @param text The text; NULL: none.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_server_set_stats(cugl_app_server *server, const char *text);

/**
 * The port the server listens on; 0 for NULL.
 * @errors none. @thread_safety Any thread.
 * @param server The server.
 * @return The TCP port.
 */
CUGL_API int cugl_app_server_port(const cugl_app_server *server);

/**
 * The `i`th address the server listens on (numeric: "127.0.0.1", "::1"),
 * all on cugl_app_server_port; NULL past the last or for NULL.
 * @errors none. @thread_safety Any thread.
 * @param server The server.
 * @param i From 0.
 * @return The address, held by the server (valid while it lives), or NULL.
 */
CUGL_API const char *cugl_app_server_address(const cugl_app_server *server, int i);

/**
 * The JPEG encoder the server uses: "gl-compute", "nvjpeg" or
 * "libjpeg-turbo" (NULL for NULL), and in *why (when not NULL) why: the GL
 * renderer the shaders run on, where nvJPEG was found, or why neither is
 * used ("GL renders on the CPU (llvmpipe ...)", "the GL context runs on no
 * CUDA device (...)", "no nvJPEG (libnvjpeg.so.13: cannot open shared
 * object file ...)", or how it failed, after which the CPU encodes).
 * @errors none.
 * @thread_safety The thread whose GL context is current.
 * @pointer_lifetime Both strings are the server's, valid until its next call.
 * @param server The server.
 * @param[out] why Receives the reason; may be NULL.
 * @return The encoder's name, or NULL.
 */
CUGL_API const char *cugl_app_server_encoder(const cugl_app_server *server, const char **why);

/**
 * Whether the server speaks HTTPS and WSS (it was given a certificate).
 * @errors none. @thread_safety Any thread.
 * @param server The server.
 * @return true with TLS; false without, or for NULL.
 */
CUGL_API bool cugl_app_server_is_https(const cugl_app_server *server);

/**
 * Viewers connected now; 0 for NULL.
 * @errors none. @thread_safety Any thread.
 * @param server The server.
 * @return The number of open WebSocket connections.
 */
CUGL_API int cugl_app_server_viewers(const cugl_app_server *server);

/**
 * What the server measured of the `i`th viewer connected now (0 to
 * cugl_app_server_viewers - 1; the order changes as viewers come and go).
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL, or no such viewer).
 * @thread_safety Any thread.
 * @param server The server.
 * @param i From 0.
 * @param[out] out Receives the viewer's numbers.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_server_viewer(const cugl_app_server *server, int i,
                                            cugl_app_server_viewer_stats *out);

/**
 * Frames encoded and frames sent (to all viewers together) so far, and
 * frames not copied because every copy buffer was busy; any may be NULL.
 * @errors none. @thread_safety Any thread.
 * @param server The server.
 * @param[out] encoded Receives the frames encoded.
 * @param[out] sent Receives the frames sent.
 * @param[out] dropped Receives the frames dropped before encoding.
 */
CUGL_API void cugl_app_server_counts(const cugl_app_server *server, long *encoded, long *sent,
                                     long *dropped);

CUGL_END_DECLS

#endif /* CUGL_APP_SERVE_H */
