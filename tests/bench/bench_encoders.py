#!/usr/bin/env python3
"""JPEG on the GPU (GL compute shaders, nvJPEG) against the CPU (libjpeg-turbo),
a demo served.

usage: bench_encoders.py CUGL_DEMO LINK_VIEWER

The demo runs headless with --bench (unpaced) at 3840x2160 and 1920x1080:
alone, then served on 127.0.0.1 with CUGL_SERVE_ENCODER=gpu, =nvjpeg and
=cpu to one viewer on the same host (tests/serve/link_viewer, which
decodes each picture before acking). For each: the demo's frame time (its
own --bench figure), frames a second at the viewer, the encoder's time a
picture (the header's encode_ms: GPU time for GL's shaders and nvJPEG,
wall time of one libjpeg-turbo thread), and the CPU time of the serving
threads (named cugl-encoder, cugl-gpu-jpeg and cugl-network, read from
/proc) a picture received. Goals, for the GPU's encoder (GL's shaders):
3840x2160 at >= 60 frames a second, the demo's frame time up by <= 10%,
encode <= 0.5 ms a frame at 4K. Exits 77 without a GPU for the demo.
"""
import json
import os
import re
import select
import signal
import subprocess
import sys
import time

DEMO, VIEWER = (os.path.abspath(a) for a in sys.argv[1:3])
SIZES = os.environ.get('BENCH_ENCODERS_SIZES', '3840x2160,1920x1080').split(',')
ENCODERS = os.environ.get('BENCH_ENCODERS', 'gpu,nvjpeg,cpu').split(',')
TICK = os.sysconf('SC_CLK_TCK')


def serving_cpu_s(pid):
    """CPU seconds of the process's serving threads: cugl-encoder, cugl-gpu-jpeg, cugl-network."""
    total = 0
    for tid in os.listdir(f'/proc/{pid}/task'):
        try:
            stat = open(f'/proc/{pid}/task/{tid}/stat').read()
        except OSError:
            continue
        name = stat[stat.index('(') + 1:stat.rindex(')')]
        fields = stat[stat.rindex(')') + 2:].split()
        if name.startswith(('cugl-encoder', 'cugl-gpu-jpeg', 'cugl-network')):
            total += (int(fields[11]) + int(fields[12])) / TICK
    return total


def start(size, encoder):
    env = dict(os.environ)
    if encoder:
        env['CUGL_SERVE_ENCODER'] = encoder
    proc = subprocess.Popen([DEMO, '--headless', '--bench', '--size', size, '--serve',
                             '127.0.0.1:0'], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            env=env)
    text, port, deadline = '', 0, time.monotonic() + 60
    while time.monotonic() < deadline and not port:
        ready, _, _ = select.select([proc.stdout], [], [], 1)
        if ready:
            chunk = os.read(proc.stdout.fileno(), 4096).decode(errors='replace')
            if not chunk:
                break
            text += chunk
            m = re.search(r'serving on http://[^:]+:(\d+)/', text)
            port = int(m.group(1)) if m else 0
    if not port:
        proc.kill()
        proc.wait()
        if 'needs an NVIDIA GPU' in text or 'no CUDA' in text:
            print(f'1..0 # SKIP {text.strip().splitlines()[0]}')
            sys.exit(77)
        sys.exit(f'bench_encoders: the demo did not serve:\n{text}')
    return proc, port, text


def stop(proc, text):
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    text += out.decode(errors='replace')
    m = re.search(r'([0-9.]+) ms a frame', text)
    if proc.returncode != 0 or not m:
        sys.exit(f'bench_encoders: the demo did not end cleanly with its timings:\n{text}')
    return float(m.group(1)), text


def run(size, encoder):
    proc, port, text = start(size, encoder)
    row = {'size': size, 'encoder': encoder or 'none'}
    if encoder:
        cpu0 = serving_cpu_s(proc.pid)
        r = subprocess.run([VIEWER, '127.0.0.1', str(port), '--warmup', '3', '--periods', '2',
                            '--period', '5', '--no-psnr'], capture_output=True, text=True,
                           timeout=120)
        cpu1 = serving_cpu_s(proc.pid)
        periods = [json.loads(x) for x in r.stdout.splitlines() if x.startswith('{')]
        messages = sum(p['messages'] for p in periods) or 1
        row.update(fps=sum(p['fps'] for p in periods) / max(len(periods), 1),
                   encode_ms=sum(p['encode_ms'] for p in periods) / max(len(periods), 1),
                   cpu_ms=(cpu1 - cpu0) * 1e3 / messages,
                   mbit_s=sum(p['mbit_s'] for p in periods) / max(len(periods), 1),
                   named=re.search(r'JPEG by ([a-z-]+)', text).group(1)
                   if re.search(r'JPEG by ([a-z-]+)', text) else '?')
    else:
        time.sleep(8)
    row['frame_ms'], text = stop(proc, text)
    if os.environ.get('BENCH_ENCODERS_VERBOSE'):
        print(f'# {size} {encoder or "alone"}:\n' + text)
    why = re.search(r'JPEG by [a-z-]+: (.*)', text)
    row['why'] = why.group(1) if why else ''
    return row


def main():
    rows = []
    for size in SIZES:
        alone = run(size, None)
        rows.append(alone)
        for encoder in ENCODERS:
            r = run(size, encoder)
            r['rise'] = r['frame_ms'] / alone['frame_ms'] - 1
            rows.append(r)
    print(f'\n{os.path.basename(DEMO)} served to one viewer on this host, unpaced (--bench)')
    print('| size | encoder | frame ms | served / alone | frames/s at the viewer | encode ms '
          'a picture | serving threads\' CPU ms a frame | Mbit/s |')
    print('|---|---|---|---|---|---|---|---|')
    for r in rows:
        if r['encoder'] == 'none':
            print(f'| {r["size"]} | (no viewer) | {r["frame_ms"]:.3f} | | | | | |')
        else:
            print(f'| {r["size"]} | {r["named"]} | {r["frame_ms"]:.3f} | {1 + r["rise"]:.2f} | '
                  f'{r["fps"]:.1f} | {r["encode_ms"]:.3f} | {r["cpu_ms"]:.2f} | '
                  f'{r["mbit_s"]:.0f} |')
    for r in rows:
        if r['encoder'] != 'none':
            print(f'# {r["size"]}, CUGL_SERVE_ENCODER={r["encoder"]}: {r["named"]}: {r["why"]}')
    gpu4k = next(r for r in rows if r['size'] == '3840x2160' and r['encoder'] == 'gpu')
    ok = gpu4k['named'] == 'gl-compute'
    print(f'goal: 3840x2160 by GL\'s shaders at >= 60 frames/s: {gpu4k["fps"]:.1f}, '
          f'{"met" if ok and gpu4k["fps"] >= 60 else "MISSED"}')
    print(f'goal: the demo\'s frame time up <= 10%: {100 * gpu4k["rise"]:+.1f}%, '
          f'{"met" if ok and gpu4k["rise"] <= 0.10 else "MISSED"}')
    print(f'goal: encode <= 0.5 ms a frame at 4K: {gpu4k["encode_ms"]:.3f} ms, '
          f'{"met" if ok and gpu4k["encode_ms"] <= 0.5 else "MISSED"}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
