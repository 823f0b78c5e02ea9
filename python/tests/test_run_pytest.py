"""run_pytest.py's --shard=K/N: the shards of a suite together run each of
its tests once, what -k leaves is what is shared out, and a bad K/N is
refused."""
import os
import re
import subprocess
import sys

RUN_PYTEST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "run_pytest.py")


def run(args, tmp_path):
    env = dict(os.environ, CUGL_TEST_PYTHON_CHOSEN=sys.executable)
    env.pop("CUGL_TEST_NO_SKIP", None)
    return subprocess.run([sys.executable, RUN_PYTEST] + args, cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)


def test_the_shards_run_every_test_once(tmp_path):
    (tmp_path / "test_many.py").write_text(
        "import pytest\n"
        "@pytest.mark.parametrize('i', range(10))\n"
        "def test_case(i):\n"
        "    pass\n"
        "def test_left_out():\n"
        "    pass\n")
    ran = []
    for k in (1, 2, 3):
        out = run(["--shard=%d/3" % k, "-k", "not left_out",
                   str(tmp_path / "test_many.py")], tmp_path)
        assert out.returncode == 0, out.stdout + out.stderr
        names = re.findall(r"::(test_\w+\[?\d*\]?) PASSED", out.stdout)
        # Ten cases in three shards: 4, 3 and 3.
        assert len(names) == (4 if k == 1 else 3), out.stdout
        ran += names
    assert sorted(ran) == sorted("test_case[%d]" % i for i in range(10))


def test_a_bad_shard_is_refused(tmp_path):
    for spec in ("0/3", "4/3", "1/0", "a/b", "2"):
        out = run(["--shard=" + spec, str(tmp_path)], tmp_path)
        assert out.returncode != 0
        assert "want K/N with 1 <= K <= N" in out.stderr, (spec, out.stderr)
