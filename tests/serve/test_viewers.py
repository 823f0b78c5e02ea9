#!/usr/bin/env python3
"""What a frame server lets a viewer do, seen from raw sockets.

usage: test_viewers.py SERVE_APP [--built=CODECS]

serve_app (tests/serve/serve_app.c) is started on loopback:
- without a token, a WebSocket upgrade from another web page (its Origin)
  or to a name that is not this server's (Host: a page's own name made to
  resolve here, DNS rebinding) gets 403, the server's own page and
  clients without an Origin get 101; with a token, the token decides;
- a viewer that owes an ack for CUGL_SERVE_ACK_TIMEOUT seconds is
  disconnected;
- with --codec video, at most 4 viewers get video at once (each has an
  encoder of its own); a fifth gets JPEG and its header says why (where
  this build has a video codec);
- with --codec video, the page's "codecs" line picks the video codec: a
  page that names h264 alone gets H.264 (OpenH264), Constrained Baseline
  access units in Annex B, an IDR with its SPS and PPS first, that ffmpeg
  decodes frame for frame at the program's size; one that names vp8 alone
  VP8; one that names both the server's first (H.264); one that then
  names another gets that codec from a key frame on; one that names no
  codec the server knows gets JPEG and is told why. CODECS (from Meson:
  the video codecs this build has, comma-separated) says which of these
  can be asked.

TAP output; where serve_app cannot make a GL context here, the whole test
skips (exit 77; a failure where CUGL_TEST_NO_SKIP is set).
"""
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
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

    def frame(self, seconds):
        """The next message's JSON header and payload, its frame acked; None
        at the deadline."""
        m = self.message(seconds)
        if m is None:
            return None
        n = struct.unpack('<I', m[:4])[0]
        h = json.loads(m[4:4 + n])
        self.send(f'ack {h["frame"]} 0\n')
        return h, m[4 + n:]

    def header(self, seconds):
        """The next message's JSON header, its frame acked."""
        got = self.frame(seconds)
        return got and got[0]


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
        v.send('codecs vp8 h264\n')
        viewers.append(v)
        codec, end = None, time.monotonic() + 20
        while time.monotonic() < end:
            h = v.header(5)
            if h is None:
                break
            # A header alone (the picture unchanged) names no codec: the
            # codec is the last frame's.
            codec, why = h.get('codec', codec), h.get('codec_why', why)
            if ('no video codec' in why or codec in ('vp8', 'h264') or
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
    tap(all(c in ('vp8', 'h264') for c in codecs[:4]) and codecs[4] == 'jpeg' and
        'video already' in why,
        'at most 4 viewers get video at once; a fifth gets JPEG and is told why',
        f'codecs {codecs}; the fifth: {why}')


def video_frames(v, codec, count, seconds=20):
    """`count` frames of `codec` in a row, from the first (its key frame) on,
    as (header, payload); fewer where they stop coming or another codec
    comes after them. Also the last header's codec_why."""
    got, why, end = [], '', time.monotonic() + seconds
    while len(got) < count and time.monotonic() < end:
        f = v.frame(max(end - time.monotonic(), 0.01))
        if f is None:
            break
        h, payload = f
        why = h.get('codec_why', why)
        if 'codec' not in h:  # a header alone: the picture did not change
            continue
        if h['codec'] == codec:
            got.append((h, payload))
        elif got:
            break
    return got, why


def nal_types(payload):
    """The NAL unit types of an Annex B access unit, in order."""
    parts = payload.split(b'\x00\x00\x01')
    return [p[0] & 0x1f for p in parts[1:] if p]


def h264_checks(v, label):
    """The frames `v` gets once it names h264: checked as a decoder sees them."""
    frames, why = video_frames(v, 'h264', 20)
    if len(frames) < 20:
        tap(False, f'{label}: H.264 frames', f'{len(frames)} H.264 frames in 20 s; {why}')
        return
    first = frames[0][0]
    types = [nal_types(p) for _, p in frames]
    stream = b''.join(p for _, p in frames)
    ok = (first.get('key') is True and all(h.get('key') is False for h, _ in frames[1:]) and
          all(h.get('encoder') == 'OpenH264' for h, _ in frames) and
          all(p.startswith(b'\x00\x00\x00\x01') for _, p in frames) and
          types[0][:2] == [7, 8] and 5 in types[0] and
          all(t and set(t) <= {1, 6} for t in types[1:]))
    tap(ok, f'{label}: H.264 by OpenH264, an IDR with its SPS and PPS first, then P frames '
        'alone, each an Annex B access unit',
        f'key {[h.get("key") for h, _ in frames[:3]]}, NAL types {types[:3]}; {why}')
    if not shutil.which('ffprobe'):
        tap(True, f'{label}: ffmpeg decodes the stream', 'SKIP no ffprobe (Debian: ffmpeg)')
        return
    with tempfile.NamedTemporaryFile(suffix='.264') as f:
        f.write(stream)
        f.flush()
        r = subprocess.run(['ffprobe', '-v', 'error', '-count_frames', '-show_entries',
                            'stream=codec_name,profile,width,height,nb_read_frames,'
                            'color_space,color_range', '-of', 'json', f.name],
                           capture_output=True, text=True, timeout=60)
    streams = json.loads(r.stdout or '{}').get('streams') or [{}]
    st = streams[0]
    want = {'codec_name': 'h264', 'profile': 'Constrained Baseline',
            'width': first['width'] & ~1, 'height': first['height'] & ~1,
            'nb_read_frames': str(len(frames)), 'color_space': 'smpte170m',
            'color_range': 'tv'}
    tap(all(st.get(k) == w for k, w in want.items()) and not r.stderr.strip(),
        f'{label}: ffmpeg decodes each of the {len(frames)} frames at the program\'s size, '
        'BT.601, limited range',
        f'ffprobe: {st} {r.stderr.strip()[-300:]}')


def video_codecs_check(built):
    server = start(['--codec', 'video'])
    if not server.urls:
        return
    try:
        if 'h264' in built:
            v = Viewer(server.port)
            v.send('codecs h264\n')
            h264_checks(v, 'a page that decodes H.264 alone')
            # The page changes its mind: VP8 from a key frame on.
            if 'vp8' in built:
                v.send('codecs vp8\n')
                frames, why = video_frames(v, 'vp8', 3)
                tap(len(frames) == 3 and frames[0][0].get('key') is True and
                    frames[0][0].get('encoder') == 'libvpx',
                    'a page that names another codec gets it, from a key frame on',
                    f'{len(frames)} VP8 frames, key {[h.get("key") for h, _ in frames]}; {why}')
            v.close()
        if 'vp8' in built:
            v = Viewer(server.port)
            v.send('codecs vp8\n')
            frames, why = video_frames(v, 'vp8', 3)
            tap(len(frames) == 3 and frames[0][0].get('key') is True,
                'a page that decodes VP8 alone gets VP8', f'{len(frames)} frames; {why}')
            v.close()
        if built:
            first = 'h264' if 'h264' in built else 'vp8'
            v = Viewer(server.port)
            v.send('codecs vp8 h264\n')
            frames, why = video_frames(v, first, 3)
            tap(len(frames) == 3, f'a page that decodes both gets the first this server has '
                f'({first})', f'{len(frames)} frames; {why}')
            v.close()
        v = Viewer(server.port)
        v.send('codecs av1 theora\n')
        # Frames sent before the server took the line say it did not. A
        # header alone (the picture unchanged) names no codec: the codec is
        # the last frame's (under TSan on a loaded machine the answer came
        # in headers alone, and waiting for a frame that named it failed).
        codec, why, end = None, '', time.monotonic() + 20
        while time.monotonic() < end and not (codec and why and 'it did not say' not in why):
            h = v.header(5)
            if h is not None:
                codec, why = h.get('codec', codec), h.get('codec_why', why)
        v.close()
        tap(codec == 'jpeg' and 'named no codec this server has: av1 theora' in why,
            'a page that names no codec this server knows gets JPEG, and is told why',
            f'{(codec, why)}')
    finally:
        server.stop()


def main():
    built = []
    for a in sys.argv[1:]:
        if a.startswith('--built='):
            built = [c for c in a.partition('=')[2].split(',') if c]
    origin_checks()
    ack_timeout_check()
    video_streams_check()
    video_codecs_check(built)
    return finish()


if __name__ == '__main__':
    sys.exit(main())
