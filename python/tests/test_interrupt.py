"""Ctrl-C and a viewer (cugl/_viewer/interrupt.py): a program with a
viewer's loop, run as its own process and sent SIGINT as a terminal's
Ctrl-C sends it, ends its loop between frames (should_close), finishes
what it holds (its recording plays to the last frame), and prints no
traceback; a loop that does not ask should_close stops at its next show;
a second Ctrl-C, or one while no viewer presents, is Python's own."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import cugl

# The program: a headless viewer on the host path showing frames until its
# loop ends; it prints "presenting" once its first frames are out, and what
# happened after the loop.
PROGRAM = textwrap.dedent("""
    import sys, time, numpy as np, cugl
    from cugl import _app_lib
    kind, delay = sys.argv[1], float(sys.argv[2])
    folder = sys.argv[3] if len(sys.argv) > 3 else None
    try:
        v = cugl.Viewer(64, 48, headless=True, device=-1)
    except cugl.NotSupportedError as e:
        print("skip:", e, flush=True)
        sys.exit(0)
    if folder and _app_lib.has("record"):
        for name in ("run.webm", "run.mp4"):  # whichever codec this build has
            try:
                v.record(folder + "/" + name, fps=30)
                print("recording", name, flush=True)
                break
            except cugl.NotSupportedError:
                pass
    picture = np.zeros((48, 64, 4), np.uint8)
    frames = 0
    def step():
        global frames
        picture[...] = frames % 256
        v.show(picture)
        frames += 1
        if frames == 5:
            print("presenting", flush=True)
        time.sleep(delay)
    if kind == "asks":
        while not v.should_close:
            step()
        print("loop ended after Ctrl-C; should_close", v.should_close, flush=True)
        v.show(picture)  # the next frame: should_close is false again
        print("after a frame should_close", v.should_close, flush=True)
        v.close()
        print("closed", frames, flush=True)
    elif kind == "ignores":
        try:
            for _ in range(100000):
                step()
        except KeyboardInterrupt as e:
            print("KeyboardInterrupt:", e, "closed", v.is_closed, flush=True)
            v.close()
            sys.exit(3)
    elif kind == "idle":
        step()
        step()
        for _ in range(5):
            step()
        time.sleep(2)  # the loop over: no viewer presents
        print("idle", flush=True)
        time.sleep(30)
""")


def start(kind, delay=0.002, *args):
    return subprocess.Popen([sys.executable, "-c", PROGRAM, kind, str(delay), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for(proc, line):
    """Reads stdout until `line`; skips where the program could not make a viewer."""
    seen = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        got = proc.stdout.readline()
        if not got:
            break
        seen.append(got)
        if got.startswith("skip:"):
            proc.wait()
            pytest.skip(got[5:].strip())
        if got.strip() == line:
            return seen
    proc.kill()
    out, err = proc.communicate()
    raise AssertionError("no %r from the program: %r %r %r" % (line, seen, out, err))


def finish(proc):
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err


def test_ctrl_c_ends_a_loop_that_asks_should_close(tmp_path):
    proc = start("asks", 0.002, str(tmp_path))
    seen = wait_for(proc, "presenting")
    proc.send_signal(signal.SIGINT)
    code, out, err = finish(proc)
    assert code == 0, (out, err)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert "cugl: Ctrl-C: the viewer closes at the end of this frame" in err
    assert "loop ended after Ctrl-C; should_close True" in out
    assert "after a frame should_close False" in out
    frames = int(out.split("closed ")[1].split()[0])
    assert frames >= 5
    recording = [line.split()[1] for line in seen if line.startswith("recording ")]
    if recording:
        import video_files
        # The recording was finished: every frame shown is in the file.
        assert video_files.read(str(tmp_path / recording[0]))["frames"] == frames + 1
        assert os.listdir(str(tmp_path)) == [recording[0]]  # no temporary file left


def test_ctrl_c_stops_a_loop_that_does_not_ask_at_its_next_show():
    proc = start("ignores")
    wait_for(proc, "presenting")
    proc.send_signal(signal.SIGINT)
    code, out, err = finish(proc)
    assert code == 3, (out, err)
    assert ("KeyboardInterrupt: Viewer.show: Ctrl-C, and the loop did not ask should_close "
            "closed False") in out


def test_a_second_ctrl_c_is_at_once():
    # Frames 0.4 s apart: the second Ctrl-C comes before the next show.
    proc = start("ignores", 0.4)
    wait_for(proc, "presenting")
    proc.send_signal(signal.SIGINT)
    assert proc.stderr.readline().startswith("cugl: Ctrl-C: the viewer closes")
    proc.send_signal(signal.SIGINT)
    code, out, err = finish(proc)
    # Python's own KeyboardInterrupt, no message, from the sleep.
    assert code == 3, (out, err)
    assert "KeyboardInterrupt:  closed False" in out, out


def test_ctrl_c_while_no_viewer_presents_is_pythons_own():
    proc = start("idle")
    wait_for(proc, "idle")
    proc.send_signal(signal.SIGINT)
    code, out, err = finish(proc)
    assert code != 0
    assert "KeyboardInterrupt" in err and "cugl: Ctrl-C" not in err, err
