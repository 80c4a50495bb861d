#!/usr/bin/env bash
# Runs the tests that read the monotonic (boot) clock as on a machine booted a minute ago: in a
# time namespace (unshare --time, util-linux) whose CLOCK_BOOTTIME and CLOCK_MONOTONIC read about
# 60 s. Code that subtracts from such a clock in unsigned arithmetic traps there (it did: the move
# journal's test computed "now - 2 hours"). Not part of `make test`: it needs a time namespace.
#
# Usage: Scripts/test-young-clock.sh [FILTER]   (after `swift build --build-tests`; `make test-young-clock` does both)
# SWIFT and BUILD_FLAGS as for the Makefile.
# As root it uses a time namespace only; otherwise also a user namespace (--map-root-user), which
# needs unprivileged user namespaces.
set -euo pipefail
cd "$(dirname "$0")/.."

# The suites that read CLOCK_MONOTONIC / DispatchTime (directly, through child processes, through
# the move journal or the watcher's map of writers).
filter=${1:-'MoveJournalTests|WriterMapTests|MovedWhileWaitingTests|KilledHolderTests|WaitTableTests|PresenceConnectionTests|NestedCoordinationTests|PresenterWatcherTests'}
target=60

uptime=$(cut -d. -f1 /proc/uptime)
if [ "$uptime" -le "$target" ]; then
    echo "test-young-clock: the machine booted ${uptime} s ago: running without a time namespace"
    exec ${SWIFT:-swift} test ${BUILD_FLAGS:-} --skip-build --no-parallel --filter "$filter"
fi
# The same offset for both clocks. (CLOCK_MONOTONIC excludes time suspended: on a machine that
# slept more than a minute it would go negative, and unshare fails with "Numerical result out of range".)
offset=$((target - uptime))
namespaces=(--time)
if [ "$(id -u)" -ne 0 ]; then namespaces=(--user --map-root-user --time); fi
echo "test-young-clock: clocks moved back ${offset#-} s (reading about ${target} s); filter: $filter"
exec unshare "${namespaces[@]}" --boottime "$offset" --monotonic "$offset" -- \
    bash -c 'echo "test-young-clock: /proc/uptime in the namespace: $(cut -d" " -f1 /proc/uptime) s"; exec ${SWIFT:-swift} test ${BUILD_FLAGS:-} --skip-build --no-parallel --filter "$1"' \
    test-young-clock "$filter"
