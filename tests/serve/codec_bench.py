#!/usr/bin/env python3
"""The frame server's video encoders against each other and a peer, at a fixed bitrate.

usage: codec_bench.py CODEC_BENCH [WIDTHxHEIGHT@KBPS ...]

On tests/serve/pattern.h's moving picture (fine grain that changes every
frame over drifting waves: the hard case), at the bitrates the server gives
video on a 5 Mbit/s link (3.5 Mbit/s, 70% of it) at 1280x720 and on a
20 Mbit/s one (14) at 1920x1080: codec_bench encodes the frames with each
of the server's encoders this build has (VP8 by libvpx, H.264 by
OpenH264) as the server sets them up, and Debian's ffmpeg encodes the same
frames with x264 (`-preset veryfast -tune zerolatency`, no B-frames, the
same bitrate and a tenth of a second's buffer: a measurement peer, run as a
command and never linked). Each stream decoded by ffmpeg against the
pictures: PSNR over RGB (as the link test's viewer measures) and SSIM of
the luma, the bitrate reached and the encoder's time a frame (x264's on all
this machine's cores, through ffmpeg: not comparable). Needs ffmpeg;
without it, skipped (77). Rows given as arguments replace those two: the
peer for the bitrates a viewer received on another machine (the GPU
machine has no ffmpeg; the pictures are the CPU's, the same everywhere).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

FRAMES = 120
ROWS = [('1280x720', 3500), ('1920x1080', 14000)]


def metrics(size, pictures, stream, fmt, fps=60):
    """PSNR (RGB, dB) and SSIM (Y) of `stream` against the raw `pictures`."""
    rate = '%g' % fps
    cmd = ['ffmpeg', '-nostats', '-f', 'rawvideo', '-pix_fmt', 'rgba', '-s', size, '-r', rate,
           '-i', pictures, '-r', rate] + (['-f', fmt] if fmt else []) + ['-i', stream,
           '-lavfi', '[0:v]split[r1][r2];[1:v]split[d1][d2];'
           '[d1]format=rgb24[p1];[r1]format=rgb24[q1];[p1][q1]psnr;'
           '[d2]format=yuv420p[p2];[r2]format=yuv420p[q2];[p2][q2]ssim',
           '-f', 'null', '-']
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    psnr = re.search(r'PSNR r:\S+ g:\S+ b:\S+ average:(\S+)', r.stderr)
    ssim = re.search(r'SSIM Y:(\S+)', r.stderr)
    if r.returncode != 0 or not psnr or not ssim:
        raise RuntimeError('ffmpeg could not measure %s: %s' % (stream, r.stderr[-500:]))
    return float(psnr.group(1)), float(ssim.group(1))


def x264(size, kbps, pictures, stream, fps=60):
    """x264 through ffmpeg at `kbps`, the pictures `fps` a second: (kbit/s
    reached, ms a frame) or None."""
    cmd = ['ffmpeg', '-nostats', '-v', 'error', '-y', '-f', 'rawvideo', '-pix_fmt', 'rgba',
           '-s', size, '-r', '%g' % fps, '-i', pictures, '-pix_fmt', 'yuv420p', '-c:v', 'libx264',
           '-preset', 'veryfast', '-tune', 'zerolatency', '-bf', '0',
           '-b:v', '%dk' % kbps, '-maxrate', '%dk' % kbps, '-bufsize', '%dk' % (kbps // 10),
           '-f', 'h264', stream]
    t = os.times()
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        return None, r.stderr.strip()[-200:]
    t2 = os.times()
    cpu = (t2.children_user + t2.children_system) - (t.children_user + t.children_system)
    return (os.path.getsize(stream) * 8 * fps / FRAMES / 1e3, cpu * 1e3 / FRAMES), ''


def main():
    rows_asked = []
    for arg in sys.argv[2:]:
        m = re.fullmatch(r'(\d+)x(\d+)@(\d+)', arg)
        if not m or int(m.group(3)) <= 0:
            print('codec_bench.py: a row is WIDTHxHEIGHT@KBPS, not %r' % arg)
            return 2
        rows_asked.append(('%sx%s' % m.group(1, 2), int(m.group(3))))
    if len(sys.argv) < 2:
        print('usage: codec_bench.py CODEC_BENCH [WIDTHxHEIGHT@KBPS ...]')
        return 2
    if not shutil.which('ffmpeg'):
        print('skipped: no ffmpeg (Debian: apt-get install ffmpeg)')
        return 77
    bench = sys.argv[1]
    rows = []
    with tempfile.TemporaryDirectory(prefix='cugl-codecs-') as tmp:
        for size, kbps in rows_asked or ROWS:
            w, h = size.split('x')
            pictures = os.path.join(tmp, 'pictures.rgba')
            for codec, fmt in (('vp8', 'ivf'), ('h264', 'h264')):
                stream = os.path.join(tmp, 'stream.' + fmt)
                r = subprocess.run([bench, codec, str(kbps), w, h, str(FRAMES), pictures, stream],
                                   capture_output=True, text=True, timeout=600)
                if r.returncode == 77:
                    rows.append((size, kbps, codec, None, r.stderr.strip()))
                    continue
                if r.returncode != 0:
                    print(r.stderr)
                    return 1
                got = json.loads(r.stdout)
                rows.append((size, kbps, codec + ' (cugl)', (got['kbps'], got['encode_ms']) +
                             metrics(size, pictures, stream, fmt), ''))
            stream = os.path.join(tmp, 'x264.h264')
            got, why = x264(size, kbps, pictures, stream)
            rows.append((size, kbps, 'x264 (ffmpeg, peer)',
                         got and got + metrics(size, pictures, stream, 'h264'), why))
    print('On tests/serve/pattern.h\'s picture, %d frames at 60 a second; PSNR over RGB, '
          'SSIM of the luma' % FRAMES)
    print('| size | bitrate asked | encoder | bitrate reached | ms a frame | PSNR | SSIM |')
    print('|---|---|---|---|---|---|---|')
    for size, kbps, name, m, why in rows:
        if m is None:
            print('| %s | %.1f Mbit/s | %s | %s | | | |' % (size, kbps / 1e3, name, why))
        else:
            print('| %s | %.1f Mbit/s | %s | %.2f Mbit/s | %.1f | %.2f dB | %.4f |' %
                  (size, kbps / 1e3, name, m[0] / 1e3, m[1], m[2], m[3]))
    return 0


if __name__ == '__main__':
    sys.exit(main())
