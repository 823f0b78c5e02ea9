#!/bin/sh
# The whole test command where a GPU is, with nothing skipped: what
# `scripts/bootstrap.sh test` runs, less what needs a package registry or a
# browser (nothing is installed; the browser suite is left out), for the GPU
# here, with every core:
#
#   build-gpu/            every suite but browser and fault (multi-gpu where
#                         there are two GPUs), then window
#   build-gpu-sanitize/   ASan + UBSan: unit, gl, gpu, demo
#   build-gpu-tsan/       TSan: unit, gl
#
# with CUGL_TEST_NO_SKIP=1, so that a test that would skip fails. The tests
# that must have the machine to themselves run first, one after another;
# then the other tests: build-gpu's, then the sanitized builds' side by
# side with the window suite's (its demos at once, each in an X server of
# its own; nothing else uses a display). The fault
# sweep (every driver call site failed in turn) is a second command of its
# own: --only fault. Ends with a summary: the GPUs and driver, per build
# and suite the tests that passed, failed and were skipped, and the time;
# also written to build-gpu/gpu-check.txt. Exits 0 only when every test ran
# and passed; without a GPU it says so and exits 1.
#
#   scripts/gpu-check.sh [--only PARTS] [--skip PARTS] [--allow-skips]
#                        [--build-only] [--dry-run]
#
#   PARTS           comma-separated, of: main (build-gpu's suites but window and
#                   fault), window, asan, tsan, and fault; by default all but
#                   fault
#   --allow-skips   run without CUGL_TEST_NO_SKIP and without a GPU, where
#                   skips are no failure: to try the flow on any machine (it
#                   is then no GPU check, and says so)
#   --build-only    configure and build the trees the parts need, test
#                   nothing: so that a later check's time is its tests'
#   --dry-run       say what would run, run nothing
#
# Needs the project's build dependencies (meson, ninja, the -dev packages),
# found as they are (on the GPU machine: its setup script's prefix), and
# for the window suite a display: $DISPLAY, else X servers of its own where
# Xvfb is installed, up to 6, the demos spread over them (on an H200 the
# window suite took 78 s so, 180 s on one display: with Xvfb there, leave
# DISPLAY unset). Options for every build: GPU_CHECK_MESON_ARGS.
set -eu

prog=gpu-check
usage() {
    sed -n '2,/^$/s/^# \{0,1\}//p' "$0"
}

all_parts="main window fault asan tsan"
parts="main window asan tsan" skip='' allow_skips='' dry_run='' build_only='' display_vars=''
while [ $# -gt 0 ]; do
    case $1 in
    --only) parts=$(echo "${2:?--only needs PARTS}" | tr , ' ') && shift ;;
    --only=*) parts=$(echo "${1#--only=}" | tr , ' ') ;;
    --skip) skip=$(echo "${2:?--skip needs PARTS}" | tr , ' ') && shift ;;
    --skip=*) skip=$(echo "${1#--skip=}" | tr , ' ') ;;
    --allow-skips) allow_skips=yes ;;
    --dry-run) dry_run=yes ;;
    --build-only) build_only=yes ;;
    -h | --help)
        usage
        exit 0
        ;;
    *)
        printf 'gpu-check: unknown argument '\''%s'\''\n\n' "$1" >&2
        usage >&2
        exit 2
        ;;
    esac
    shift
done
for p in $parts $skip; do
    case " $all_parts " in *" $p "*) ;; *)
        printf 'gpu-check: no part '\''%s'\'' (parts: %s)\n' "$p" "$all_parts" >&2
        exit 2
        ;;
    esac
done
wanted() {
    case " $parts " in *" $1 "*) ;; *) return 1 ;; esac
    case " $skip " in *" $1 "*) return 1 ;; esac
}

cd "$(dirname "$0")/.."
. scripts/common.sh
start=$(date +%s)

nvcc=$(find_nvcc) || true
[ -n "$nvcc" ] || die "no nvcc (CUDA_HOME, /usr/local/cuda/bin, PATH): the CUDA Toolkit is needed"

probe_gpus
choose_archs
jobs=$(nproc)
if [ "$gpu_count" -gt 0 ]; then
    printf '%s\n' "$gpu_list" | while read -r line; do say "GPU: $line"; done
    say "driver $gpu_driver; building for $archs_why; $jobs processes"
elif [ -n "$allow_skips" ]; then
    say "no GPU ($gpu_why): --allow-skips, so the flow runs and the GPU's suites skip"
else
    say "no GPU: $gpu_why"
    [ -n "$dry_run" ] || die "this check is for a machine with an NVIDIA GPU (--allow-skips runs the flow anyway)"
    say "(--dry-run: what would run where one answered)"
fi
no_skip=
if [ -z "$allow_skips" ]; then
    export CUGL_TEST_NO_SKIP=1
    no_skip=no-skip
fi
multi=yes
if [ "$gpu_count" -lt 2 ] && [ -z "$allow_skips" ]; then
    multi=
    say "$gpu_count GPU: the multi-gpu suite needs two and is left out"
fi

# run COMMAND...: run it, or with --dry-run only say it.
run() {
    if [ -n "$dry_run" ]; then
        say "would run: $*"
        return 0
    fi
    "$@"
}

# Each kernel compiled once for every tree (scripts/nvcc_cached.py).
export CUGL_NVCC_CACHE="${CUGL_NVCC_CACHE:-$PWD/build-gpu/nvcc-cache}"
common="-Dtests=enabled -Ddemos=enabled -Dui=enabled -Dserve=enabled -Ddocs=disabled ${GPU_CHECK_MESON_ARGS:-}"
status=0
ran_logs=
parts_time=

# timed PART COMMAND...: run it, noting its seconds for the summary.
timed() {
    t0=$(date +%s)
    part=$1
    shift
    "$@" || status=1
    parts_time="$parts_time $part $(($(date +%s) - t0))s"
}

# Every tree is configured first, then all are built side by side: their
# serial steps (the kernels' nvcc runs, the links) overlap.
trees=''
if wanted main || wanted window || wanted fault; then
    arch_option build-gpu
    # shellcheck disable=SC2086
    run configure build-gpu $common $arch_opt
    trees="$trees build-gpu"
fi
if wanted asan; then
    arch_option build-gpu-sanitize
    # shellcheck disable=SC2046,SC2086
    run configure build-gpu-sanitize $(asan_options) $common $arch_opt $(asan_parts)
    trees="$trees build-gpu-sanitize"
fi
if wanted tsan; then
    arch_option build-gpu-tsan
    # shellcheck disable=SC2046,SC2086
    run configure build-gpu-tsan $(tsan_options) $common $arch_opt $(tsan_parts)
    trees="$trees build-gpu-tsan"
fi
# build_all TREE...: ninja in each at once, each tree's output in
# TREE/gpu-check-build.log; the first that fails ends the check.
build_all() {
    if [ $# -le 1 ]; then
        [ $# -eq 0 ] || run build "$1" -j "$jobs"
        return 0
    fi
    if [ -n "$dry_run" ]; then
        say "would build side by side:$(printf ' %s' "$@")"
        return 0
    fi
    say "building$(printf ' %s' "$@") side by side (each tree's log: TREE/gpu-check-build.log)"
    jobs_of=''
    for tree in "$@"; do
        ninja -C "$tree" -j "$jobs" >"$tree/gpu-check-build.log" 2>&1 &
        jobs_of="$jobs_of $tree:$!"
    done
    failed=''
    for j in $jobs_of; do
        wait "${j##*:}" || failed="$failed ${j%:*}"
    done
    for tree in $failed; do
        tail -n 30 "$tree/gpu-check-build.log" >&2
    done
    [ -z "$failed" ] || die "the build failed in$failed (above: the end of each tree's log)"
    say "built$(printf ' %s' "$@")"
}
t_build=$(date +%s)
# shellcheck disable=SC2086
build_all $trees
[ -n "$dry_run" ] || parts_time="$parts_time build $(($(date +%s) - t_build))s"
if [ -n "$build_only" ]; then
    say "--build-only: built$trees in $(($(date +%s) - t_build)) s; no test ran"
    exit 0
fi
# The suites of each part, as meson test's arguments, and its settings.
leave_out="--no-suite window --no-suite fault --no-suite browser"
[ -n "$multi" ] || leave_out="$leave_out --no-suite multi-gpu"
tree_of() {
    case $1 in main | window) echo build-gpu ;; asan) echo build-gpu-sanitize ;; tsan) echo build-gpu-tsan ;; esac
}
suites_of() {
    case $1 in
    main) echo "$leave_out" ;;
    asan) echo "--suite unit --suite gl --suite gpu --suite demo" ;;
    tsan) echo "--suite unit --suite gl" ;;
    window) echo "--suite window" ;;
    esac
}
# The sanitized builds' settings, and their tests' time limits four times
# meson's: every thread runs several times slower there.
vars_of() {
    case $1 in asan) asan_vars ;; tsan) tsan_vars ;; window) echo "$display_vars" ;; *) ;; esac
}
limits_of() {
    case $1 in asan | tsan) echo "--timeout-multiplier 4" ;; *) ;; esac
}
# The parts that run side by side, in two waves: build-gpu's tests, then
# the two sanitized builds' with the window suite (its demos in X servers of
# their own). All four at once overloaded even 16 cores and the GPU: the
# plain build's tests that measure rates and latencies (the frame server's)
# failed, and every test took twice as long; the sanitized builds' allow
# for their slowness.
waves="main asan,tsan,window"
# Of the processes, each part's share in its wave: the TSan build's tests
# are fewer.
share_of() {
    case $1 in main) n=$jobs ;; asan) n=$((jobs * 3 / 4)) ;; window) n=1 ;; *) n=$((jobs / 4)) ;; esac
    [ "$n" -ge 1 ] && echo "$n" || echo 1
}
# names PART alone|beside [ARGS...]: its tests that run so (and as ARGS,
# test_list.py's, say). The window suite's all run beside the others, one
# after another as meson's is_parallel: false asks (they need the X server
# to themselves, not the machine).
names() {
    if [ "$1" = window ]; then
        python3 scripts/test_list.py build-gpu --alone --suite window
        python3 scripts/test_list.py build-gpu --beside --suite window
        return 0
    fi
    part=$1 how=$2
    shift 2
    # shellcheck disable=SC2046
    python3 scripts/test_list.py "$(tree_of "$part")" "--$how" $(suites_of "$part") "$@"
}
side_parts=''
for p in main asan tsan window; do
    ! wanted "$p" || side_parts="$side_parts $p"
done

# run_wave PARTS: those of the comma-separated PARTS that run, at once, each
# with its share of the processes; its time in the summary.
run_wave() {
    t_wave=$(date +%s)
    pids='' ran=''
    for p in $(echo "$1" | tr , ' '); do
        case " $side_parts " in *" $p "*) ;; *) continue ;; esac
        tree=$(tree_of "$p")
        if [ -n "$dry_run" ]; then
            say "would run side by side, in $tree with $(share_of "$p") processes: $(suites_of "$p")"
            continue
        fi
        beside=$(names "$p" beside | tr '\n' ' ')
        [ -z "$beside" ] && continue
        ran_logs="${ran_logs:+$ran_logs }$tree/meson-logs/$p.json"
        say "testing $tree side by side ($(share_of "$p") processes; its output: $tree/gpu-check-$p.txt)"
        # shellcheck disable=SC2046,SC2086
        run_suites "$tree" "$p" $(vars_of "$p") $(limits_of "$p") \
            --no-rebuild --num-processes "$(share_of "$p")" $beside \
            >"$tree/gpu-check-$p.txt" 2>&1 &
        pids="$pids $p:$!"
        ran="${ran:+$ran,}$p"
    done
    for j in $pids; do
        p=${j%%:*}
        tree=$(tree_of "$p")
        if wait "${j#*:}"; then
            say "$p: $(grep -E '^Ok:' "$tree/gpu-check-$p.txt" | tr -s ' ')"
        else
            status=1
            say "$p failed; what failed, from $tree/gpu-check-$p.txt:"
            grep -E '^ *[0-9]+/[0-9]+ .* (FAIL|ERROR|TIMEOUT|INTERRUPT|UNEXPECTEDPASS|SKIP) ' \
                "$tree/gpu-check-$p.txt" >&2 || tail -n 30 "$tree/gpu-check-$p.txt" >&2
        fi
    done
    [ -z "$ran" ] || parts_time="$parts_time $ran $(($(date +%s) - t_wave))s"
}

# First the tests that must have the machine to themselves (meson's
# is_parallel: false), one after another, part after part; then the
# others, wave by wave, each part of a wave with its share of the
# processes: no test that runs alone waits for the others to drain, and
# the cores stay busy.
if [ -n "$side_parts" ]; then
    t_alone=$(date +%s)
    # The shaped link's tests (the link suite: each in a network namespace
    # of its own, waiting on its link most of the time) of every part side
    # by side; then the others one after another, part after part.
    pids=''
    for p in $side_parts; do
        [ "$p" != window ] || continue
        if [ -n "$dry_run" ]; then
            say "would run alone, in $(tree_of "$p"): $(names "$p" alone 2>/dev/null | tr '\n' ' ')"
            continue
        fi
        link=$(names "$p" alone --also link | tr '\n' ' ')
        [ -z "$link" ] && continue
        tree=$(tree_of "$p")
        ran_logs="${ran_logs:+$ran_logs }$tree/meson-logs/$p-link.json"
        # shellcheck disable=SC2046,SC2086
        run_suites "$tree" "$p-link" $(vars_of "$p") $(limits_of "$p") \
            --no-rebuild --num-processes 1 $link >"$tree/gpu-check-$p-link.txt" 2>&1 &
        pids="$pids $p:$!"
    done
    for j in $pids; do
        p=${j%%:*}
        wait "${j#*:}" || status=1
        cat "$(tree_of "$p")/gpu-check-$p-link.txt"
    done
    for p in $side_parts; do
        if [ "$p" = window ] || [ -n "$dry_run" ]; then
            continue
        fi
        alone=$(names "$p" alone --no-suite link | tr '\n' ' ')
        [ -z "$alone" ] && continue
        # shellcheck disable=SC2046,SC2086
        run_suites "$(tree_of "$p")" "$p-alone" $(vars_of "$p") $(limits_of "$p") \
            --no-rebuild --num-processes 1 $alone ||
            status=1
    done
    parts_time="$parts_time alone $(($(date +%s) - t_alone))s"
    # The window suite's X servers: one for each of up to 6 demos at once.
    if wanted window && [ -z "$dry_run" ]; then
        displays=$((jobs / 2))
        [ "$displays" -le 6 ] || displays=6
        [ "$displays" -ge 1 ] || displays=1
        display_start "$displays"
    fi
    for wave in $waves; do
        run_wave "$wave"
    done
    if wanted window && [ -z "$dry_run" ]; then
        display_stop
    fi
fi
if wanted fault; then
    timed fault run run_suites build-gpu fault --suite fault
fi
[ -n "$dry_run" ] && exit 0

# The summary, also kept in build-gpu/gpu-check.txt for quoting.
mkdir -p build-gpu
out=build-gpu/gpu-check.txt
if [ "$gpu_count" -gt 0 ]; then
    printf '%s\n' "$gpu_list" | while read -r line; do say "GPU: $line"; done
    say "driver $gpu_driver; built for sm_$archs; $(tree_state)"
else
    say "no GPU ($gpu_why): not a GPU check"
fi >"$out"
summary "$no_skip" >>"$out" || status=1
{
    [ ! -f build-gpu/build.ninja ] ||
        say "the suites build-gpu has: $(python3 -c '
import json, sys
tests = json.load(open(sys.argv[1]))
print(" ".join(sorted({s.partition(":")[2] or s for t in tests for s in t["suite"]})))
' build-gpu/meson-info/intro-tests.json) (browser is left out)"
    [ -n "$multi" ] || say "left out: the multi-gpu suite ($gpu_count GPU; it needs two)"
    missing=
    for p in $all_parts; do wanted "$p" || missing="$missing $p"; done
    case " $missing " in *" fault "*) say "the fault sweep is a command of its own: scripts/gpu-check.sh --only fault" ;; esac
    missing=$(echo "$missing" | sed 's/ fault//')
    [ -z "$missing" ] || say "left out as asked:$missing"
    say "time:$parts_time; in all $(($(date +%s) - start)) s"
    say "exit status $status"
} >>"$out"
echo
cat "$out"
exit $status
