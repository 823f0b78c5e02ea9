#!/usr/bin/env python3
"""The frame server over HTTPS and WSS, given a certificate and a key.

usage: test_https.py SERVE_APP

A self-signed certificate for 127.0.0.1 is made with openssl; serve_app
serves with it (--cert, --key). Checked: it says https://; the page comes
over TLS (verified against that certificate); plain HTTP to the same port
gets no page; the WebSocket upgrade over TLS answers 101 with the
subprotocol, and its first message is a frame (a JSON header whose width is
serve_app's, then a JPEG); a certificate without a key, and one that cannot
be read, are refused with a message that says so. TAP; exits 77 without
openssl, or where serve_app cannot make a GL context here (a failure with
CUGL_TEST_NO_SKIP set).
"""
import base64
import os
import select
import shutil
import socket
import ssl
import struct
import subprocess
import sys
import tempfile
import time

from taplib import finish, skip, tap

SERVE_APP = sys.argv[1]
def serve(*extra):
    """serve_app with `extra`; (process, first line, port)."""
    proc = subprocess.Popen([SERVE_APP, '--port', '0', '--size', '160x120', *extra],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    text, deadline = b'', time.monotonic() + 30
    while time.monotonic() < deadline and b'\n' not in text:
        ready, _, _ = select.select([proc.stdout], [], [], 1)
        if ready:
            chunk = os.read(proc.stdout.fileno(), 4096)
            if not chunk:
                break
            text += chunk
    line = text.decode(errors='replace').split('\n')[0]
    if line.startswith('serve_app: skipped'):
        proc.wait()
        skip(line)
    port = int(line.rsplit(':', 1)[1].split('/')[0]) if 'serving on' in line else 0
    return proc, line, port


def stop(proc):
    if proc.poll() is None:
        proc.stdin.close()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode


def read_until(sock, marker, limit=1 << 20):
    data = b''
    while marker not in data and len(data) < limit:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def read_exact(sock, n, data=b''):
    while len(data) < n:
        chunk = sock.recv(max(n - len(data), 65536))
        if not chunk:
            raise EOFError('closed')
        data += chunk
    return data


def main():
    if not shutil.which('openssl'):
        skip('no openssl to make a certificate (Debian: openssl)')
    tmp = tempfile.mkdtemp(prefix='cugl-https-')
    cert, key = os.path.join(tmp, 'cert.pem'), os.path.join(tmp, 'key.pem')
    r = subprocess.run(['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1',
                        '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1',
                        '-keyout', key, '-out', cert], capture_output=True, text=True)
    if r.returncode != 0:
        skip(f'openssl could not make a certificate: {r.stderr.strip()}')
    try:
        proc, line, port = serve('--cert', cert, '--key', key)
        tap(line.startswith('serving on https://127.0.0.1:') and port > 0,
            'it serves on https://', line)
        context = ssl.create_default_context(cafile=cert)

        # The page over TLS, verified.
        try:
            with socket.create_connection(('127.0.0.1', port), timeout=10) as raw:
                with context.wrap_socket(raw, server_hostname='127.0.0.1') as s:
                    s.sendall(b'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n')
                    page = read_until(s, b'</html>')
            tap(page.startswith(b'HTTP/1.1 200') and b'cugl-frames' in page,
                'the page comes over TLS', page[:60].decode(errors='replace'))
        except (OSError, ssl.SSLError) as e:
            tap(False, 'the page comes over TLS', repr(e))

        # Plain HTTP gets no page.
        try:
            with socket.create_connection(('127.0.0.1', port), timeout=5) as s:
                s.sendall(b'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n')
                s.settimeout(5)
                got = read_until(s, b'\r\n\r\n', 4096)
        except OSError:
            got = b''
        tap(not got.startswith(b'HTTP/1.1 200'), 'plain HTTP gets no page',
            got[:40].decode(errors='replace'))

        # WSS: the upgrade, then a frame.
        try:
            with socket.create_connection(('127.0.0.1', port), timeout=10) as raw:
                with context.wrap_socket(raw, server_hostname='127.0.0.1') as s:
                    k = base64.b64encode(os.urandom(16)).decode()
                    s.sendall(('GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n'
                               'Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n'
                               f'Sec-WebSocket-Key: {k}\r\n'
                               'Sec-WebSocket-Protocol: cugl-frames\r\n\r\n').encode())
                    reply = read_until(s, b'\r\n\r\n', 8192)
                    head, rest = reply.split(b'\r\n\r\n', 1)
                    upgraded = head.startswith(b'HTTP/1.1 101') and b'cugl-frames' in head
                    # One message, maybe in fragments: binary, then continuations.
                    msg, opcode, fin, buf = b'', None, False, rest
                    while not fin:
                        hdr = read_exact(s, 2, buf)
                        n, off = hdr[1] & 0x7f, 2
                        if n == 126:
                            hdr = read_exact(s, 4, hdr)
                            n, off = struct.unpack('>H', hdr[2:4])[0], 4
                        elif n == 127:
                            hdr = read_exact(s, 10, hdr)
                            n, off = struct.unpack('>Q', hdr[2:10])[0], 10
                        whole = read_exact(s, off + n, hdr)
                        opcode = hdr[0] & 0x0f if opcode is None else opcode
                        fin = bool(hdr[0] & 0x80)
                        msg += whole[off:off + n]
                        buf = whole[off + n:]
                    jlen = struct.unpack('<I', msg[:4])[0]
                    header = msg[4:4 + jlen].decode()
                    jpeg = msg[4 + jlen:4 + jlen + 2]
            ok = upgraded and opcode == 2 and '"width":160' in header and jpeg == b'\xff\xd8'
            tap(ok, 'WSS: upgraded to cugl-frames, and a frame comes',
                '' if ok else f'{head[:60]!r} {header[:80]!r} {jpeg!r}')
        except (OSError, ssl.SSLError, EOFError, ValueError) as e:
            tap(False, 'WSS: upgraded to cugl-frames, and a frame comes', repr(e))
        status = stop(proc)
        tap(status == 0, 'serve_app exits cleanly', f'exit {status}')

        # Refusals, each an invalid argument as the header says: a
        # certificate without a key; one that is not there; a file that is
        # no certificate; a key of another certificate (PEM, but
        # libwebsockets cannot load the pair: the address is not to blame).
        garbage = os.path.join(tmp, 'garbage.pem')
        with open(garbage, 'w') as f:
            f.write('not a certificate\n')
        other_key = os.path.join(tmp, 'other-key.pem')
        r = subprocess.run(['openssl', 'genpkey', '-algorithm', 'RSA', '-pkeyopt',
                            'rsa_keygen_bits:2048', '-out', other_key],
                           capture_output=True, text=True)
        refusals = [
            (['--cert', cert], 'needs a certificate and a key', 'a certificate without a key'),
            (['--cert', cert + '.missing', '--key', key], 'cannot read the certificate',
             'a certificate that cannot be read'),
            (['--cert', garbage, '--key', key], 'is not a PEM certificate',
             'a file that is no certificate'),
        ]
        if r.returncode == 0:
            refusals.append((['--cert', cert, '--key', other_key],
                             'libwebsockets could not load them', 'a key of another certificate'))
        else:
            tap(True, 'a key of another certificate', 'SKIP openssl genpkey failed')
        for extra, words, name in refusals:
            proc, line, port = serve(*extra)
            status = stop(proc)
            err = proc.stderr.read().decode()
            ok = port == 0 and status == 1 and words in err and 'CUGL_ERROR_INVALID_ARGUMENT' in err
            tap(ok, f'{name} is refused as an invalid argument, saying so',
                '' if ok else err.strip())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return finish()


if __name__ == '__main__':
    sys.exit(main())
