# shellcheck shell=sh disable=SC2034,SC2154 # set here for the caller; prog, nvcc: the caller's
# What scripts/bootstrap.sh and scripts/gpu-check.sh share: finding nvcc and
# the GPUs, choosing the architectures to build for, configuring a build
# directory only where its options differ, running a set of suites with a
# log of its own, and a display for the window suite. POSIX sh, sourced from
# the project root after `prog` (the name messages start with) is set.

say() { printf '%s: %s\n' "$prog" "$*"; }
die() {
    printf '%s: %s\n' "$prog" "$*" >&2
    exit 1
}

# The CUDA Toolkit's nvcc: $CUDA_HOME, $CUDA_PATH, /usr/local/cuda, PATH.
find_nvcc() {
    for d in ${CUDA_HOME:+"$CUDA_HOME/bin"} ${CUDA_PATH:+"$CUDA_PATH/bin"} /usr/local/cuda/bin; do
        [ -x "$d/nvcc" ] && {
            echo "$d/nvcc"
            return 0
        }
    done
    command -v nvcc 2>/dev/null
}

# What the NVIDIA driver says of this machine's GPUs. Sets
#   gpu_count   how many answered (0: none)
#   gpu_list    one line each: "NAME, compute capability X.Y"
#   gpu_driver  the driver's version
#   gpu_caps    their architectures without the dot ("90 86"), each once;
#               empty where the driver does not tell (drivers before 510)
#   gpu_why     where none answered, why
probe_gpus() {
    gpu_count=0 gpu_list='' gpu_driver='' gpu_caps='' gpu_why=''
    if ! command -v nvidia-smi >/dev/null 2>&1; then
        gpu_why="no NVIDIA driver answers here (nvidia-smi is not installed)"
        return 0
    fi
    if ! out=$(nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader 2>&1); then
        # A driver too old to know compute_cap still names its GPUs.
        if out=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1); then
            out=$(printf '%s\n' "$out" | sed 's/, *\([^,]*\)$/, ?, \1/')
        else
            gpu_why="nvidia-smi finds no GPU: $(printf '%s\n' "$out" | head -n 1)"
            return 0
        fi
    fi
    while IFS=, read -r name cap driver; do
        name=$(echo "$name" | sed 's/^ *//; s/ *$//')
        cap=$(echo "$cap" | tr -d ' ')
        [ -n "$name" ] || continue
        gpu_count=$((gpu_count + 1))
        gpu_driver=$(echo "$driver" | tr -d ' ')
        gpu_list="$gpu_list${gpu_list:+
}$name, compute capability $cap"
        arch=$(echo "$cap" | tr -d .)
        case $arch in
        '' | *[!0-9]*) ;;
        *) case " $gpu_caps " in *" $arch "*) ;; *) gpu_caps="${gpu_caps:+$gpu_caps }$arch" ;; esac ;;
        esac
    done <<EOF
$out
EOF
    [ "$gpu_count" -gt 0 ] || gpu_why="nvidia-smi lists no GPU"
}

# The architectures to build SASS for, from the GPUs found (probe_gpus) and
# what $nvcc can build. Sets `archs` (comma-separated, for -Dgpu_archs) and
# `archs_why` (a sentence). Where no GPU tells its architecture: one,
# Turing (sm_75, the oldest cugl supports; or the oldest of cugl's list this
# nvcc knows), whose PTX the driver compiles for any newer GPU at its first
# load: the build stays short, and what it makes still runs on every GPU
# cugl supports. A GPU newer than nvcc knows gets nvcc's newest (the PTX
# again); one older than nvcc's oldest cannot be built for.
choose_archs() {
    known=$("$nvcc" --list-gpu-code 2>/dev/null | sed -n 's/^sm_\([0-9]*\)$/\1/p' | sort -n)
    [ -n "$known" ] || die "$nvcc --list-gpu-code lists no sm_ architecture"
    archs='' archs_why=''
    for a in $gpu_caps; do
        pick=
        for k in $known; do [ "$k" -le "$a" ] && pick=$k; done
        if [ -z "$pick" ]; then
            archs_why="${archs_why:+$archs_why; }this nvcc cannot build for sm_$a (its oldest is sm_$(echo "$known" | head -n 1)): the GPU needs an older CUDA Toolkit"
            continue
        fi
        [ "$pick" = "$a" ] || archs_why="${archs_why:+$archs_why; }this nvcc does not know sm_$a: sm_$pick and its PTX, which the driver compiles for the GPU"
        case ",$archs," in *",$pick,"*) ;; *) archs="${archs:+$archs,}$pick" ;; esac
    done
    if [ -n "$archs" ]; then
        archs_why="sm_$(echo "$archs" | sed 's/,/, sm_/g'), for the GPU here${archs_why:+ ($archs_why)}"
        return 0
    fi
    [ "$gpu_count" -gt 0 ] && [ -z "$gpu_caps" ] &&
        archs_why="the driver does not tell the GPU's compute capability"
    for a in 75 80 86 89 90 100 120; do
        echo "$known" | grep -qx "$a" && {
            archs=$a
            break
        }
    done
    [ -n "$archs" ] || archs=$(echo "$known" | head -n 1)
    archs_why="sm_$archs with its PTX, which the driver compiles for any newer GPU${archs_why:+ ($archs_why)}"
}

# The -D options of "$@" whose value differs from what build directory $1 has,
# as -D arguments for meson configure (nothing when all agree).
options_differ() {
    dir=$1
    shift
    meson introspect "$dir" --buildoptions | python3 -c '
import ast, json, sys
have = {o["name"]: o["value"] for o in json.load(sys.stdin)}
def norm(v):
    if isinstance(v, list):
        return ",".join(str(x) for x in v)
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)
asked = {}  # an option given twice: the last, as meson setup takes it
for arg in sys.argv[1:]:
    name, _, value = arg[2:].partition("=")
    asked.pop(name, None)
    asked[name] = value
for name, value in asked.items():
    wanted = norm(ast.literal_eval(value)) if value.startswith("[") else value
    if name not in have or norm(have[name]) != wanted:
        print("-D%s=%s" % (name, value))
' "$@"
}

# The value of option $2 in build directory $1, lists comma-separated.
configured() {
    meson introspect "$1" --buildoptions | python3 -c '
import json, sys
for o in json.load(sys.stdin):
    if o["name"] == sys.argv[1]:
        v = o["value"]
        print(",".join(map(str, v)) if isinstance(v, list) else v)
' "$2"
}

# arch_option DIR: sets arch_opt to "-Dgpu_archs=$archs" for DIR, or to
# nothing where DIR is built already for architectures that include every
# GPU's here (any, where none answered) and archs_asked is not set
# (-Dgpu_archs was not given); and dir_archs to what DIR has ("" where it
# is not configured).
arch_option() {
    arch_opt="-Dgpu_archs=$archs" dir_archs=''
    [ -f "$1/build.ninja" ] && dir_archs=$(configured "$1" gpu_archs 2>/dev/null) || return 0
    [ -z "${archs_asked:-}" ] || return 0
    for a in $gpu_caps; do
        case ",$dir_archs," in *",$a,"*) ;; *) return 0 ;; esac
    done
    arch_opt=''
}

# configure DIR -Dname=value...: meson setup where DIR has no build yet,
# else meson configure with just the options that differ (none: nothing is
# done, so an unchanged build is not regenerated).
configure() {
    dir=$1
    shift
    if [ ! -f "$dir/build.ninja" ]; then
        [ -d "$dir/meson-private" ] && set -- --wipe "$@"
        say "configuring $dir: meson setup $dir $*"
        log=$(meson setup "$dir" "$@" 2>&1) || {
            printf '%s\n' "$log" | tail -n 25 >&2
            die "meson setup $dir failed; the whole log: $dir/meson-logs/meson-log.txt"
        }
        printf '%s\n' "$log" | sed -n '/^cugl 0/,$p' | sed -n '/^  /p'
        return 0
    fi
    changed=$(options_differ "$dir" "$@") || die "cannot read the options of $dir (meson introspect)"
    [ -n "$changed" ] || return 0
    # shellcheck disable=SC2086 # one option a word
    say "reconfiguring $dir: meson configure $dir" $changed
    # shellcheck disable=SC2086
    log=$(meson configure "$dir" $changed 2>&1) || {
        printf '%s\n' "$log" | tail -n 25 >&2
        die "meson configure $dir failed"
    }
}

# build DIR [TARGET...]: ninja with its progress lines ([n/N] step).
build() {
    dir=$1
    shift
    say "building $dir${1:+ ($*)}"
    ninja -C "$dir" "$@" || die "the build in $dir failed (above: the step and its errors)"
}

# run_suites DIR LOGBASE [NAME=value...] [meson test arguments]: the suites
# asked for, with the environment given and their log in
# DIR/meson-logs/LOGBASE.txt (and .json), which the summary reads. Returns
# meson test's status.
run_suites() {
    dir=$1
    logbase=$2
    shift 2
    vars=
    while [ $# -gt 0 ]; do
        case $1 in
        [A-Za-z_]*=*) vars="$vars $1" ;;
        *) break ;;
        esac
        shift
    done
    say "testing $dir: meson test $* (log: $dir/meson-logs/$logbase.txt)"
    ran_logs="${ran_logs:+$ran_logs }$dir/meson-logs/$logbase.json"
    rm -f "$dir/meson-logs/$logbase.json"
    # shellcheck disable=SC2086 # one assignment a word
    env $vars meson test -C "$dir" --print-errorlogs --logbase "$logbase" "$@"
}

# display_start [COUNT]: where the window suite's X windows go, as
# assignments for run_suites in `display_vars`. With $DISPLAY set, there;
# else COUNT Xvfb servers of our own (1 by default) where Xvfb is installed
# (with NVIDIA's GLX for the windows where a GPU answered: Xvfb's own GLX is
# Mesa's, whose GL objects CUDA cannot register): DISPLAY is the first,
# CUGL_TEST_DISPLAYS all of them (window-demos spreads its demos over
# them); else none (the window suite then reports skipped). display_stop
# ends those servers.
display_start() {
    display_vars='' xvfbs=''
    if [ -n "${DISPLAY:-}" ]; then
        return 0
    fi
    if ! command -v Xvfb >/dev/null 2>&1; then
        say "no display and no Xvfb: the window suite will report skipped"
        return 0
    fi
    # Xvfb makes /tmp/.X11-unix where there is none; display_stop removes
    # it again where it is then empty.
    made_x11_dir=
    [ -d /tmp/.X11-unix ] || made_x11_dir=yes
    n=99 names=''
    while [ "$(echo "$names" | wc -w)" -lt "${1:-1}" ]; do
        while [ -e "/tmp/.X11-unix/X$n" ] || [ -e "/tmp/.X$n-lock" ]; do n=$((n + 1)); done
        Xvfb ":$n" -screen 0 1280x1024x24 -nolisten tcp >/dev/null 2>&1 &
        xvfbs="$xvfbs $!"
        i=0
        while [ ! -e "/tmp/.X11-unix/X$n" ] && [ $i -lt 50 ]; do
            sleep 0.1
            i=$((i + 1))
        done
        names="$names :$n"
        n=$((n + 1))
    done
    names=${names# }
    display_vars="DISPLAY=${names%% *}"
    [ "$names" = "${names%% *}" ] || display_vars="$display_vars CUGL_TEST_DISPLAYS=$(echo "$names" | tr ' ' ,)"
    vendor=${__GLX_VENDOR_LIBRARY_NAME:-}
    [ "$gpu_count" -gt 0 ] && [ -z "$vendor" ] && vendor=nvidia
    [ -n "$vendor" ] && display_vars="$display_vars __GLX_VENDOR_LIBRARY_NAME=$vendor"
    say "no display: the windows go to Xvfb on $names${vendor:+ (GLX: $vendor)}"
}
display_stop() {
    [ -n "$xvfbs" ] || return 0
    for x in $xvfbs; do
        kill "$x" 2>/dev/null || true
        wait "$x" 2>/dev/null || true
    done
    [ -z "$made_x11_dir" ] || rmdir /tmp/.X11-unix 2>/dev/null || true
}

# The sanitizers' settings for the test runs, as assignments for
# run_suites. AddressSanitizer: protect_shadow_gap=0, as the CUDA driver
# maps memory where the gap would be; the driver's and the GL loaders' own
# blocks at exit are theirs (tests/fault/lsan.supp). ThreadSanitizer:
# tests/tsan.supp leaves out Mesa's own threads; the frame server encodes
# on the CPU (CUGL_SERVE_ENCODER=cpu), as the TSan build runs the unit and
# gl suites, no CUDA: where a GPU is, the server would take nvJPEG, and
# libcuda's own threads crash under TSan (a SEGV inside the driver).
asan_vars() {
    echo "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:protect_shadow_gap=0" \
        "LSAN_OPTIONS=suppressions=$PWD/tests/fault/lsan.supp" \
        "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1"
}
tsan_vars() {
    echo "TSAN_OPTIONS=halt_on_error=1:suppressions=$PWD/tests/tsan.supp" \
        "CUGL_SERVE_ENCODER=cpu"
}

# The sanitized builds' options (one architecture is enough there: the
# sanitizers watch the host code; -O1, as the sanitizers' documentation
# has it, and line tables alone for the reports' file:line: such a tree
# builds in two thirds of the time), and the parts each leaves out, given
# after the others: what none of its suites runs (libcugl-mpi's suite runs
# in the plain build; the TSan build runs the unit and gl suites, which
# have no demo in them). A tree builds only what it tests: on a machine of
# 2 cores the builds are half the test command's time (the test command
# builds of the TSan tree only its suites' programs: scripts/test_list.py
# --targets).
asan_options() {
    echo "-Db_sanitize=address,undefined -Db_lundef=false -Doptimization=1" \
        "-Dc_args=['-fno-sanitize-recover=all','-g1'] -Dcpp_args=['-g1']"
}
asan_parts() {
    echo "-Dmpi=disabled"
}
tsan_options() {
    echo "-Db_sanitize=thread -Db_lundef=false -Doptimization=1 -Dc_args=['-g1'] -Dcpp_args=['-g1']"
}
tsan_parts() {
    echo "-Dmpi=disabled -Ddemos=disabled"
}

# The commit the tree is at, and how many tracked files differ from it: a
# summary quoted for a commit is that commit's only where none do.
tree_state() {
    commit=$(git rev-parse --short HEAD 2>/dev/null) || {
        echo "commit unknown (not a git checkout)"
        return 0
    }
    changed=$(git status --porcelain --untracked-files=no 2>/dev/null | wc -l)
    if [ "$changed" -eq 0 ]; then
        echo "commit $commit"
    else
        echo "commit $commit with $changed tracked files changed since"
    fi
}

# Per build and suite, the tests that passed, failed and were skipped, from
# the logs run_suites noted; the status: 1 when any failed (or, with
# "no-skip", any was skipped).
summary() {
    # shellcheck disable=SC2086 # one log a word
    python3 scripts/test_summary.py --prefix "$prog: " --slowest 15 ${1:+--$1} $ran_logs
}
