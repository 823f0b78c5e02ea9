#!/usr/bin/env python3
"""The instructions of an nbody interaction, counted in the machine code.

    nbody_sass.py CUOBJDUMP NBODY_FATBIN

Disassembles the nbody step kernels' SASS (nbody_step, nbody_step2) for
each architecture in the fatbin (cuobjdump -sass), finds each one's inner
loop (the loop, from a backward branch to its target, with the most
reciprocal square roots: one an interaction) and prints, per architecture
and kernel, the instructions in it per
interaction by kind (FP32 arithmetic, the inverse square root, shared-memory
loads, the rest) and what that allows: an SM issues one instruction a clock
per scheduler and does a FP32 instruction's 32 lanes in a clock, so an
interaction of 20 flops in I issue slots reaches at most 20 / (2 I) of the
FP32 peak. Exits 77 where there is no cuobjdump (CUDA Toolkits without the
binary utilities have none).
"""
import collections
import re
import shutil
import subprocess
import sys

FP32 = re.compile(r"^(FFMA|FMUL|FADD|FMNMX|FSEL|FSET|FSETP)(\.|$)")
LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)\s*([^;]*);")


def loops(lines):
    """(start, end) address pairs of the backward branches' loops."""
    out = []
    for addr, op, args in lines:
        if op.startswith("BRA"):
            m = re.search(r"0x([0-9a-f]+)", args)
            if m and int(m.group(1), 16) < addr:
                out.append((int(m.group(1), 16), addr))
    return out


def count(arch, name, code):
    """The line on one kernel of one architecture."""
    lines = [(int(a, 16), op, args) for a, op, args in LINE.findall(code)]
    best = None
    for start, end in loops(lines):
        inside = [(a, op) for a, op, _ in lines if start <= a <= end]
        rsq = sum(1 for _, op in inside if op.startswith("MUFU.RSQ"))
        if rsq and (best is None or rsq > best[0]):
            best = (rsq, inside)
    if best is None:
        return "%s %s: no loop with MUFU.RSQ" % (arch, name)
    rsq, inside = best
    kinds = collections.Counter()
    for _, op in inside:
        kinds["FP32" if FP32.match(op) else "MUFU.RSQ" if op.startswith("MUFU.RSQ")
              else "LDS" if op.startswith("LDS") else "other"] += 1
    per = len(inside) / rsq
    return ("%s %s: inner loop %d instructions, %d interactions: %.2f an interaction "
            "(FP32 %.2f, MUFU.RSQ %.2f, LDS %.2f, other %.2f); issue-bound at most %.0f%% of "
            "FP32 peak" % (arch, name, len(inside), rsq, per, kinds["FP32"] / rsq,
                           kinds["MUFU.RSQ"] / rsq, kinds["LDS"] / rsq, kinds["other"] / rsq,
                           100.0 * 20 / (2 * per)))


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    tool, fatbin = sys.argv[1], sys.argv[2]
    if not shutil.which(tool):
        print("1..0 # SKIP no %s: this CUDA Toolkit lacks the binary utilities" % tool)
        return 77
    text = subprocess.run([tool, "-sass", fatbin], capture_output=True, text=True,
                          check=True).stdout
    # Per architecture ("code for sm_90"), the step kernel's instructions.
    sections = re.split(r"\n\s*code for (sm_\d+a?)", text)
    found = 0
    for arch, body in zip(sections[1::2], sections[2::2]):
        kernels = re.findall(r"Function : (nbody_step\w*)(.*?)(?=\n\s*Function : |\Z)", body,
                             re.S)
        for name, code in kernels:
            print(count(arch, name, code))
            found += 1
    if not found:
        print("no nbody_step in %s" % fatbin, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
