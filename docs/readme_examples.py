#!/usr/bin/env python3
"""The C examples of the README as a C file that the build compiles.

usage: readme_examples.py MARKDOWN... OUTPUT.c [--skip HEADER | --only HEADER]...

The README and the guides of docs/ alike: every C example a reader may copy
compiles.

Each ```c block becomes a function of its own: its #include lines go to the
top of the file, the rest into the body. A block that includes the header
of an optional part (<cugl/mpi.h>) is left out with --skip HEADER and kept
alone with --only HEADER, so that it is compiled where that part is built. What the snippets take as given
(the caller's data, a kernel, a stream: GIVEN) is declared in the functions
that use it, so that any other name the README uses without saying what it
is fails the build. A block with `int main(void)` is a whole program: it
stays at file scope, its main renamed. A
README without C examples is an error, not an empty file. --without-app
leaves out the examples that include a libcugl-app header (a build
without libcugl-app cannot compile them).
"""
import re
import sys

# What the examples take as given, each declared (extern, at block scope) in
# the examples that use it without declaring it themselves.
GIVEN = [
    ("const float *", "host_data"),
    ("const unsigned char ", "my_fatbin[]"),
    ("const size_t ", "my_fatbin_size"),
    ("cugl_device *", "dev"),
    ("cugl_stream *", "stream"),
    ("cugl_kernel *", "kernel"),
    ("cugl_launch_config ", "config"),
    ("size_t ", "bytes"),
    ("float ", "t"),
    ("GLsizei ", "count"),
    ("cugl_app_context *", "ctx"),
    ("const float ", "mvp[]"),
]


def given_in(block):
    """The extern declarations `block` needs."""
    out = []
    code = re.sub(r"/\*.*?\*/", "", block, flags=re.S)
    for type_, decl in GIVEN:
        name = decl.rstrip("[]")
        used = re.search(rf"\b{name}\b", code)
        declared = re.search(rf"^\s*[A-Za-z_][\w ]*[\s*]{name}\s*(\[[^]]*\])?\s*[;=]", code,
                             flags=re.M)
        if used and not declared:
            out.append(f"    extern {type_}{decl};")
    return out


def includes_header(block, header):
    """Whether `block` includes <header>."""
    return re.search(rf"^#include\s*<{re.escape(header)}>", block, flags=re.M) is not None


def main():
    args = sys.argv[1:]
    first_flag = next((i for i, a in enumerate(args) if a.startswith("--")), len(args))
    files, rest = args[:first_flag], args[first_flag:]
    if len(files) < 2 or len(rest) % 2 or \
            any(flag not in ("--skip", "--only") for flag in rest[::2]):
        sys.exit("usage: readme_examples.py MARKDOWN... OUTPUT.c [--skip HEADER | --only HEADER]...")
    sources, output = files[:-1], files[-1]
    found = []  # (file, its text, a block)
    for source in sources:
        with open(source, encoding="utf-8") as f:
            text = f.read()
        found += [(source, text, b)
                  for b in re.findall(r"^```c\n(.*?)^```$", text, flags=re.S | re.M)]
    for flag, header in zip(rest[::2], rest[1::2]):
        keep = flag == "--only"
        found = [f for f in found if includes_header(f[2], header) == keep]
    if not found:
        sys.exit(f"{' '.join(sources)}: no ```c examples" +
                 (f" ({' '.join(rest)})" if rest else ""))
    includes, bodies = ["#include <stdio.h>", "#include <cugl/cugl.h>"], []
    for i, (source, text, block) in enumerate(found):
        where = source.rsplit("/", 1)[-1] if source.endswith("README.md") else \
            "docs/" + source.rsplit("/", 1)[-1]
        body = []
        program = re.search(r"^int main\(void\)$", block, flags=re.M) is not None
        for line in block.splitlines():
            if line.startswith("#include"):
                # The include's own comment stays out of the list of includes.
                inc = line.split("/*")[0].rstrip()
                if inc not in includes:
                    includes.append(inc)
            elif program:
                body.append(line)
            else:
                body.append("    " + line if line else "")
        start = text[: text.index(block)].count("\n") + 1
        if program:
            # A whole program: at file scope, its main renamed, its macros
            # undefined after it so that the next example may use the names.
            name = f"readme_program_{i}"
            code = "\n".join(body).replace("int main(void)", f"int {name}(void)")
            macros = re.findall(r"^#define (\w+)", code, flags=re.M)
            bodies.append(f"/* {where}, the program at line {start} */\n"
                          f"int {name}(void);\n{code}\n" +
                          "".join(f"#undef {m}\n" for m in macros))
            continue
        bodies.append(f"/* {where}, the example at line {start} */\n"
                      f"int readme_example_{i}(void);\n"
                      f"int readme_example_{i}(void)\n{{\n" +
                      "\n".join(given_in(block) + body) + "\n    return 0;\n}\n")
    with open(output, "w", encoding="utf-8") as f:
        f.write(f"/* Generated from {' '.join(sources)} by docs/readme_examples.py. */\n")
        f.write("\n".join(includes) + "\n\n" + "\n".join(bodies))


if __name__ == "__main__":
    main()
