"""TAP for the serve tests written in Python (test_bind, test_https,
test_link): ok and not-ok lines, the plan, and a skip of the whole test
(exit 77), which is a failure where CUGL_TEST_NO_SKIP is set (the GPU
machine, where nothing may skip)."""
import os
import sys

results = []


def skip(why):
    if 'CUGL_TEST_NO_SKIP' in os.environ:
        print(f'Bail out! would skip, but CUGL_TEST_NO_SKIP is set: {why}')
        sys.exit(1)
    print(f'1..0 # SKIP {why}')
    sys.exit(77)


def tap(ok, name, note=''):
    results.append(ok)
    note = ' '.join(str(note).split())  # one line: a note of a reply's bytes had CR LFs
    print(f'{"ok" if ok else "not ok"} {len(results)} - {name}{" # " + note if note else ""}')
    sys.stdout.flush()


def finish():
    """The plan after the lines; the exit status: 0 when every line was ok."""
    print(f'1..{len(results)}')
    return 0 if all(results) else 1
