#!/usr/bin/env bash
# The paper problem beside Devito, quiet or with one busy program: each tool's time loop for
# 101 and 301 steps (per step: the difference over 200), alternated, both on two threads.
#
#   docs/bench/loaded_devito.sh DEVITO_VENV [quiet|busy] [ROUNDS]
#
# DEVITO_VENV: a virtual environment with Devito (`python3 -m venv v && v/bin/pip install
# devito`); `busy` runs a shell loop spinning on one core for the whole measurement.
set -euo pipefail
venv=${1:?usage: loaded_devito.sh DEVITO_VENV [quiet|busy] [ROUNDS]}
load=${2:-quiet}
rounds=${3:-2}
here=$(cd "$(dirname "$0")/../.." && pwd)
peers=${PEERS:-$here/../shared/peers}
ppwave=${PPWAVE:-$here/target/release/ppwave}
out=$(mktemp -d)
busy=""
trap '[ -n "$busy" ] && kill "$busy"; rm -rf "$out"' EXIT
if [ "$load" = busy ]; then
    ( exec bash -c 'while :; do :; done' ) &
    busy=$!
fi
devito=(env DEVITO_LANGUAGE=openmp OMP_NUM_THREADS=2 DEVITO_LOGGING=PERF "$venv/bin/python"
        "$peers/devito_acoustic.py" --nz 1751 --nx 5001 --dt 0.0002 --dh 3 --srcz 625
        --srcx 2500 --fpeak 10 --vmin 1500 --layer 750 1125 3000 --layer 1125 1751 4800 --reps 1)
for round in $(seq "$rounds"); do
    for nt in 101 301; do
        d=$("${devito[@]}" --nt "$nt" 2>&1 | grep -o 'wall_apply_s=[0-9.]*' | tail -1 | cut -d= -f2)
        "$ppwave" run --nt "$nt" --threads 2 --out "$out/pp" --overwrite > /dev/null 2>&1
        p=$(grep -o '"wall_time_s": *[0-9.e-]*' "$out/pp/run.json" | grep -o '[0-9.e-]*$')
        n=$(grep -o '"narrow_steps": *[0-9]*' "$out/pp/run.json" | grep -o '[0-9]*$' || true)
        echo "round $round $load, $nt steps: devito $d s, ppwave $p s (${n:-0} steps narrow)"
    done
done
