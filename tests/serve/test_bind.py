#!/usr/bin/env python3
"""Where a frame server listens, read back from the kernel and tried from outside.

usage: test_bind.py SERVE_APP

serve_app (tests/serve/serve_app.c) is started with each --address in turn;
the listening sockets of its port are read from /proc/net/tcp and
/proc/net/tcp6 and must be exactly the addresses asked for. Then a network
namespace is made, joined to this one by a veth pair (this side 10.231.N.1,
the far side 10.231.N.2): from the far side, a server on the default
address (loopback) must not answer on 10.231.N.1, where one told to listen
on 10.231.N.1 does. Addresses that are not this host's, and names that do
not resolve, are refused with a message that names them. (What a viewer
may do once connected: test_viewers.py, which starts its servers with
Server here.)

TAP output. Without root or iproute2 (`ip`), the namespace test is skipped
with its reason and the rest still runs; where serve_app cannot make a GL
context here, the whole test skips (exit 77; a failure where
CUGL_TEST_NO_SKIP is set).
"""
import os
import select
import shutil
import socket
import subprocess
import sys
import time

from taplib import finish, skip, tap

SERVE_APP = sys.argv[1]
START_S = 60  # what serve_app may take to print its addresses
class Server:
    """serve_app on `address`, port 0; its "serving on" lines give the port."""

    def __init__(self, address, extra=(), env=None):
        args = [SERVE_APP, '--port', '0'] + (['--address', address] if address else []) + \
            list(extra)
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE,
                                     env=dict(os.environ, **env) if env else None)
        self.urls = []
        self.port = 0
        self.error = ''
        # Every address is printed before the first frame: lines until a
        # quiet half second after the first, or the end. Its start (a GL
        # context, CUDA, nvJPEG) took over 20 s on two H200 under 32 tests.
        text = b''
        started = time.monotonic()
        deadline = started + START_S
        while time.monotonic() < deadline:
            wait = 0.5 if self.urls else deadline - time.monotonic()
            ready, _, _ = select.select([self.proc.stdout], [], [], max(wait, 0))
            if not ready:
                break
            chunk = os.read(self.proc.stdout.fileno(), 4096)
            if not chunk:
                break
            text += chunk
            *lines, text = text.split(b'\n')
            for line in (x.decode() for x in lines):
                if line.startswith('serving on http://'):
                    if not self.urls and time.monotonic() - started > 10:
                        print(f'# serve_app --address {address} took '
                              f'{time.monotonic() - started:.1f} s to serve', flush=True)
                    self.urls.append(line.split()[2])
                    self.port = int(line.rsplit(':', 1)[1].split('/')[0])
                elif line.startswith('serve_app: skipped'):
                    self.proc.kill()
                    skip(line.strip())
        if not self.urls:
            try:
                self.proc.wait(timeout=20)
                self.error = self.proc.stderr.read().decode()
            except subprocess.TimeoutExpired:
                # Neither serving nor ended: where each thread waits, then
                # a failure of this case alone (the others still run).
                self.error = f'serve_app printed no address in {START_S} s and did not end: ' + \
                    threads_of(self.proc.pid)
                self.proc.kill()
                self.proc.wait()
                self.error += ' | its stdout: ' + text.decode(errors='replace') + \
                    os.read(self.proc.stdout.fileno(), 65536).decode(errors='replace') + \
                    ' | its stderr: ' + self.proc.stderr.read().decode(errors='replace')

    def stop(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def listening(port):
    """The addresses listening on `port`, as 'ADDR' strings (IPv6 in brackets)."""
    found = set()
    for path, v6 in (('/proc/net/tcp', False), ('/proc/net/tcp6', True)):
        try:
            lines = open(path).read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, state = fields[1], fields[3]
            if state != '0A':
                continue
            addr_hex, port_hex = local.split(':')
            if int(port_hex, 16) != port:
                continue
            raw = bytes.fromhex(addr_hex)
            # /proc prints each 32-bit word in host (little-endian) order.
            raw = b''.join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
            if v6:
                found.add('[' + socket.inet_ntop(socket.AF_INET6, raw) + ']')
            else:
                found.add(socket.inet_ntop(socket.AF_INET, raw))
    return found


def threads_of(pid):
    """Each thread's name, state and kernel wait channel, from /proc."""
    out = []
    try:
        for tid in sorted(os.listdir(f'/proc/{pid}/task'), key=int):
            base = f'/proc/{pid}/task/{tid}'
            try:
                with open(f'{base}/stat') as f:
                    stat = f.read()
                with open(f'{base}/wchan') as f:
                    wchan = f.read().strip() or '-'
            except OSError:
                continue
            name = stat[stat.index('(') + 1:stat.rindex(')')]
            state = stat[stat.rindex(')') + 2:].split()[0]
            # The kernel's stack of the thread, where root may read it.
            try:
                with open(f'{base}/stack') as f:
                    frames = [x.split()[-1] for x in f.read().split('\n') if x.strip()]
                stack = ' < '.join(frames[:6])
            except OSError:
                stack = ''
            out.append(f'{name} {state} {wchan}' + (f' [{stack}]' if stack else ''))
    except OSError as e:
        return f'(its threads cannot be read: {e})'
    text = '; '.join(out)
    # Each thread's own stack, where gdb is installed.
    if shutil.which('gdb'):
        try:
            r = subprocess.run(['gdb', '-p', str(pid), '-batch', '-nx',
                                '-ex', 'thread apply all bt 12'],
                               capture_output=True, text=True, timeout=60)
            frames = [x for x in r.stdout.splitlines() if x.startswith(('Thread', '#'))]
            text += ' | gdb: ' + ' / '.join(frames[:120])
        except (OSError, subprocess.TimeoutExpired) as e:
            text += f' | gdb failed: {e}'
    return text


def check_bound(address, want):
    server = Server(address)
    got = listening(server.port) if server.port else set()
    status = server.stop()
    name = f'--address {address or "(default)"} listens on {", ".join(sorted(want))} alone'
    ok = server.port > 0 and got == set(want) and status == 0
    tap(ok, name, '' if ok else f'listening: {sorted(got)}, printed {server.urls}, '
                                 f'exit {status}, stderr {server.error.strip()!r}')


def check_refused(address, words):
    server = Server(address)
    status = server.stop()
    ok = not server.urls and status == 1 and all(w in server.error for w in words)
    tap(ok, f'--address {address} is refused, naming it',
        '' if ok else f'printed {server.urls}, exit {status}, stderr {server.error.strip()!r}')


def has_ipv6_loopback():
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(('::1', 0))
        return True
    except OSError:
        return False


def sh(*args, ns=None):
    cmd = (['ip', 'netns', 'exec', ns] if ns else []) + list(args)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=30)


def far_side_connects(ns, address, port):
    """Whether a TCP connection from the namespace to address:port is accepted."""
    probe = ('import socket,sys\n'
             's=socket.socket(); s.settimeout(3)\n'
             'try:\n s.connect((sys.argv[1], int(sys.argv[2]))); print("connected")\n'
             'except OSError as e: print("refused", e)\n')
    r = sh(sys.executable, '-c', probe, address, str(port), ns=ns)
    return r.stdout.startswith('connected'), (r.stdout + r.stderr).strip()


def namespace_checks():
    if os.geteuid() != 0 or not shutil.which('ip'):
        tap(True, 'from another host', 'SKIP needs root and iproute2 (ip) for a network namespace')
        return
    n = os.getpid() % 200 + 20
    ns, here, far = f'cugl-bind-{os.getpid()}', f'cuglb{n}a', f'cuglb{n}b'
    near_ip, far_ip = f'10.231.{n}.1', f'10.231.{n}.2'
    made = sh('ip', 'netns', 'add', ns).returncode == 0
    try:
        steps = [('ip', 'link', 'add', here, 'type', 'veth', 'peer', 'name', far),
                 ('ip', 'link', 'set', far, 'netns', ns),
                 ('ip', 'addr', 'add', near_ip + '/30', 'dev', here),
                 ('ip', 'link', 'set', here, 'up')]
        far_steps = [('ip', 'addr', 'add', far_ip + '/30', 'dev', far),
                     ('ip', 'link', 'set', far, 'up'), ('ip', 'link', 'set', 'lo', 'up')]
        failed = None
        if not made:
            failed = 'ip netns add'
        for step in steps if made else []:
            r = sh(*step)
            if r.returncode != 0:
                failed = ' '.join(step) + ': ' + r.stderr.strip()
                break
        for step in far_steps if not failed else []:
            r = sh(*step, ns=ns)
            if r.returncode != 0:
                failed = ' '.join(step) + ': ' + r.stderr.strip()
                break
        if failed:
            tap(True, 'from another host', f'SKIP cannot make a network namespace here ({failed})')
            return
        # The default address: nothing answers from the far side.
        server = Server(None)
        connected, said = far_side_connects(ns, near_ip, server.port)
        alive = server.proc.poll() is None
        server.stop()
        tap(server.port > 0 and alive and not connected,
            f'a server on the default address does not answer {near_ip} from another host',
            said if connected or not server.port else '')
        # The control: told to listen there, it answers.
        server = Server(near_ip)
        connected, said = far_side_connects(ns, near_ip, server.port)
        got = listening(server.port) if server.port else set()
        server.stop()
        tap(connected and got == {near_ip},
            f'a server on {near_ip} answers there from another host, and listens there alone',
            '' if connected and got == {near_ip} else f'{said}; listening {sorted(got)}')
    finally:
        sh('ip', 'link', 'del', here)
        if made:
            sh('ip', 'netns', 'del', ns)


def main():
    check_bound(None, {'127.0.0.1'})
    check_bound('127.0.0.1', {'127.0.0.1'})
    if has_ipv6_loopback():
        check_bound('::1', {'[::1]'})
    else:
        tap(True, '--address ::1', 'SKIP this host has no IPv6 loopback')
    # localhost: where it resolves (/etc/hosts), its addresses; where it
    # does not (a bare chroot has no /etc/hosts), a name like any other
    # that does not resolve, refused.
    try:
        infos = socket.getaddrinfo('localhost', None, type=socket.SOCK_STREAM)
    except socket.gaierror:
        infos = None
    if infos is None:
        check_refused('localhost', ['localhost'])
    else:
        want_localhost = set()
        for info in infos:
            addr = info[4][0]
            if info[0] == socket.AF_INET6:
                if has_ipv6_loopback():
                    want_localhost.add('[' + addr + ']')
            else:
                want_localhost.add(addr)
        check_bound('localhost', want_localhost)
    check_refused('203.0.113.7', ['203.0.113.7', 'not an address of this host',
                                  'CUGL_ERROR_INVALID_STATE'])
    check_refused('no-such-host.invalid', ['no-such-host.invalid', 'CUGL_ERROR_INVALID_ARGUMENT'])
    # The C library's numeric shorthand is no address: "0" would bind every
    # address of the host and reads like a port; "2130706433" is 127.0.0.1.
    for shorthand in ('0', '2130706433', '127.1', '0x7f.1'):
        check_refused(shorthand, [f'cannot serve on {shorthand}: it is neither a dotted or colon '
                                  'address nor a name', '0.0.0.0', 'CUGL_ERROR_INVALID_ARGUMENT'])
    namespace_checks()
    return finish()


if __name__ == '__main__':
    sys.exit(main())
