#!/usr/bin/env bash
# Thread scaling of the paper problem (301 steps) quiet and with one busy program beside it:
# `ppwave run --nt 301` with --time-block auto and off, on 1 and 2 threads, timed whole, in
# alternated rounds; each line also gives the time loop's own time and the steps it ran on one
# thread fewer (run.json's wall_time_s and pacing.narrow_steps).
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
            loop_s=$(grep -o '"wall_time_s": *[0-9.e-]*' "$out/run/run.json" | grep -o '[0-9.e-]*$')
            narrow=$(grep -o '"narrow_steps": *[0-9]*' "$out/run/run.json" | grep -o '[0-9]*$' || true)
            printf "round %d %s --time-block %s --threads %d: %.2f s (loop %.2f s, %s steps narrow)\n" \
                "$round" "$load" "$block" "$threads" "$(echo "$t1 - $t0" | bc)" "$loop_s" "${narrow:-0}"
        done
    done
done
