#!/usr/bin/env python3
"""What a frame server lets a viewer do, seen from raw sockets.

usage: test_viewers.py SERVE_APP

serve_app (tests/serve/serve_app.c) is started on loopback:
- without a token, a WebSocket upgrade from another web page (its Origin)
  or to a name that is not this server's (Host: a page's own name made to
  resolve here, DNS rebinding) gets 403, the server's own page and
  clients without an Origin get 101; with a token, the token decides;
- a viewer that owes an ack for CUGL_SERVE_ACK_TIMEOUT seconds is
  disconnected;
- with --codec video, at most 4 viewers get VP8 at once (each has an
  encoder of its own); a fifth gets JPEG and its header says why (where
  this build has libvpx).

TAP output; where serve_app cannot make a GL context here, the whole test
skips (exit 77; a failure where CUGL_TEST_NO_SKIP is set).
"""
import json
import os
import socket
import struct
import sys
import time

from taplib import finish, skip, tap
from test_bind import Server


class Viewer:
    """A WebSocket client of our own: the upgrade with these Host and
    Origin headers, then frames read whole and acked where asked."""

    def __init__(self, port, host=None, origin=None, token=None):
        self.sock = socket.create_connection(('127.0.0.1', port), timeout=10)
        host = f'127.0.0.1:{port}' if host is None else host
        request = (f'GET /ws{"?token=" + token if token else ""} HTTP/1.1\r\n'
                   f'Host: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n'
                   'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n'
                   'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: cugl-frames\r\n' +
                   (f'Origin: {origin}\r\n' if origin else '') + '\r\n')
        self.sock.sendall(request.encode())
        self.buf = b''
        while b'\r\n\r\n' not in self.buf:
            chunk = self.sock.recv(4096)
            if not chunk:
                break
            self.buf += chunk
        head, _, self.buf = self.buf.partition(b'\r\n\r\n')
        self.status = int(head.split()[1]) if head.startswith(b'HTTP/1.') else 0

    def close(self):
        self.sock.close()

    def send(self, text):
        """One masked text message, as a client must send."""
        data = text.encode()
        mask = os.urandom(4)
        n = len(data)
        head = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else
                                bytes([0x80 | 126]) + struct.pack('>H', n))
        self.sock.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def _need(self, n, deadline):
        while len(self.buf) < n:
            self.sock.settimeout(max(deadline - time.monotonic(), 0.01))
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def message(self, seconds):
        """The next whole binary message (fragments joined), or None at the
        deadline; EOFError when the server closed."""
        deadline = time.monotonic() + seconds
        payload = b''
        try:
            while True:
                b0, b1 = self._need(2, deadline)
                n = b1 & 0x7f
                if n == 126:
                    n = struct.unpack('>H', self._need(2, deadline))[0]
                elif n == 127:
                    n = struct.unpack('>Q', self._need(8, deadline))[0]
                data = self._need(n, deadline)
                opcode = b0 & 0x0f
                if opcode == 8:
                    raise EOFError
                if opcode in (0, 2):
                    payload += data
                    if b0 & 0x80:
                        return payload
        except socket.timeout:
            return None

    def header(self, seconds):
        """The next message's JSON header, its frame acked."""
        m = self.message(seconds)
        if m is None:
            return None
        n = struct.unpack('<I', m[:4])[0]
        h = json.loads(m[4:4 + n])
        self.send(f'ack {h["frame"]} 0\n')
        return h


def start(extra=(), env=None):
    server = Server(None, extra, env)
    if not server.urls:
        tap(False, f'serve_app {" ".join(extra)} serves', server.error)
    return server


def origin_checks():
    server = start()
    if not server.urls:
        return
    p = server.port
    cases = [
        (f'127.0.0.1:{p}', None, 101),
        (f'127.0.0.1:{p}', f'http://127.0.0.1:{p}', 101),
        (f'localhost:{p}', f'http://localhost:{p}', 101),
        (f'LocalHost:{p}', f'https://localhost:{p}', 101),
        (f'[::1]:{p}', f'http://[::1]:{p}', 101),
        (f'127.0.0.1:{p}', 'https://evil.example', 403),
        (f'127.0.0.1:{p}', 'null', 403),
        (f'127.0.0.1:{p}', f'http://127.0.0.1:{p + 1}', 403),
        (f'evil.example:{p}', f'http://evil.example:{p}', 403),
        (f'evil.example:{p}', None, 403),
        ('', None, 403),
    ]
    for host, origin, want in cases:
        v = Viewer(p, host, origin)
        v.close()
        tap(v.status == want, f'no token: Host {host or "(empty)"}, Origin {origin}: {want}',
            f'got {v.status}')
    server.stop()
    server = start(['--token', 'T0k'])
    if server.urls:
        v = Viewer(server.port, f'evil.example:{server.port}', 'https://evil.example', 'T0k')
        v.close()
        tap(v.status == 101, 'with the token, from another page: 101', f'got {v.status}')
        server.stop()


def ack_timeout_check():
    server = start(env={'CUGL_SERVE_ACK_TIMEOUT': '2'})
    if not server.urls:
        return
    v = Viewer(server.port)
    started, closed = time.monotonic(), None
    try:
        while v.status == 101 and time.monotonic() - started < 20:
            v.message(1)  # read, never acked
    except (EOFError, OSError):
        closed = time.monotonic() - started
    v.close()
    tap(v.status == 101 and closed is not None and closed >= 1.5,
        'a viewer that never acks goes after the ack timeout (2 s)',
        f'upgrade {v.status}, closed after {closed if closed is None else round(closed, 1)} s')
    server.stop()


def video_streams_check():
    server = start(['--codec', 'video'])
    if not server.urls:
        return
    viewers, codecs, why = [], [], ''
    for i in range(5):
        v = Viewer(server.port)
        v.send('codecs vp8\n')
        viewers.append(v)
        codec, end = None, time.monotonic() + 20
        while time.monotonic() < end:
            h = v.header(5)
            if h is None:
                break
            # A header alone (the picture unchanged) names no codec: the
            # codec is the last frame's.
            codec, why = h.get('codec', codec), h.get('codec_why', why)
            if ('no video codec' in why or codec == 'vp8' or
                    (codec == 'jpeg' and 'video already' in why)):
                break
        codecs.append(codec)
        # The others keep acking meanwhile.
        for other in viewers[:-1]:
            while other.header(0.01):
                pass
    for v in viewers:
        v.close()
    server.stop()
    if 'no video codec' in why:
        tap(True, 'at most 4 viewers get video', 'SKIP ' + why)
        return
    tap(codecs[:4] == ['vp8'] * 4 and codecs[4] == 'jpeg' and 'video already' in why,
        'at most 4 viewers get video at once; a fifth gets JPEG and is told why',
        f'codecs {codecs}; the fifth: {why}')


def main():
    origin_checks()
    ack_timeout_check()
    video_streams_check()
    return finish()


if __name__ == '__main__':
    sys.exit(main())
