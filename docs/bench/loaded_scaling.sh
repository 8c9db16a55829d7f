#!/usr/bin/env bash
# Thread scaling of the paper problem (301 steps) quiet and with one busy program beside it:
# `ppwave run --nt 301` with --time-block auto and off, on 1 and 2 threads, timed whole, in
# alternated rounds.
#
#   docs/bench/loaded_scaling.sh [PPWAVE] [ROUNDS] [quiet|busy]
#
# PPWAVE defaults to target/release/ppwave, ROUNDS to 2; `busy` runs a shell loop spinning on
# one core for the whole measurement (a user's other program).
set -euo pipefail
ppwave=${1:-target/release/ppwave}
rounds=${2:-2}
load=${3:-quiet}
out=$(mktemp -d)
busy=""
trap '[ -n "$busy" ] && kill "$busy"; rm -rf "$out"' EXIT
if [ "$load" = busy ]; then
    ( while :; do :; done ) &
    busy=$!
fi
for round in $(seq "$rounds"); do
    for block in auto off; do
        for threads in 1 2; do
            t0=$(date +%s.%N)
            "$ppwave" run --nt 301 --threads "$threads" --time-block "$block" \
                --out "$out/run" --overwrite > /dev/null 2>&1
            t1=$(date +%s.%N)
            printf "round %d %s --time-block %s --threads %d: %.2f s\n" \
                "$round" "$load" "$block" "$threads" "$(echo "$t1 - $t0" | bc)"
        done
    done
done
