#!/usr/bin/env bash
# ppwave against Devito on the same problems, alternated in one run, with the triad of the run.
#
#   docs/bench/compare_devito.sh DEVITO_VENV [ROUNDS] [CASES]
#
# DEVITO_VENV: a virtual environment with Devito (`python3 -m venv v && v/bin/pip install
# devito`). CASES: any of paper, cache, 3d, 3dblock (default: all). Prints one line per run:
# the tool, the case, its variant and its time; ratios are read from lines of the same round.
# Per-step times come from two step counts (set-up cancels); whole runs are the time loop
# each tool reports (ppwave: from `prepare` to the last step; Devito: `op.apply`).
set -euo pipefail
venv=${1:?usage: compare_devito.sh DEVITO_VENV [ROUNDS] [CASES]}
rounds=${2:-2}
cases=${3:-"paper cache 3d"}
here=$(cd "$(dirname "$0")/../.." && pwd)
peers=${PEERS:-$here/../shared/peers}
ppwave=${PPWAVE:-$here/target/release/ppwave}
export DEVITO_LANGUAGE=openmp OMP_NUM_THREADS=2 DEVITO_LOGGING=ERROR
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

pp() { # label, ppwave run args...
    local label=$1; shift
    local line
    line=$("$ppwave" run --overwrite --out "$out/pp" "$@" 2>&1 | grep -E '^ppwave: .* in [0-9.]+ s' | tail -1)
    echo "ppwave $label $(sed -E 's/.* in ([0-9.]+) s.*/\1/' <<<"$line") s"
}
dv2() { # label, nt, args...
    local label=$1 nt=$2; shift 2
    local w
    w=$("$venv/bin/python" "$peers/devito_acoustic.py" --nt "$nt" --reps 1 "$@" 2>/dev/null | grep -E '^REP' | sed -E 's/.*wall_apply_s=([0-9.]+).*/\1/')
    echo "devito $label $w s"
}
dv3() { # label, n, nt, so
    local w
    w=$("$venv/bin/python" "$peers/devito_acoustic3d.py" "$2" "$3" "$4" 2>/dev/null | grep RESULT | sed -E 's/.*wall_apply_s=([0-9.]+).*/\1/')
    echo "devito $1 $w s"
}

paper_dv=(--nz 1751 --nx 5001 --dt 0.0002 --dh 3 --srcz 625 --srcx 2500 --fpeak 10 --vmin 1500
    --layer 750 1125 3000 --layer 1125 1751 4800)
cache_pp=(--nz 1001 --nx 1001 --src-z 500 --src-x 500 --layer 429:643:3000 --layer 643:1001:4800)
cache_dv=(--nz 1001 --nx 1001 --srcz 500 --srcx 500 --layer 429 643 3000 --layer 643 1001 4800)
cube=(--nz 384 --ny 384 --nx 384 --space-order 8 --dt 0.001 --dh 10 --vmin 2000 --layer 0:384:2000)

"$ppwave" bench --nz 4096 --nx 4096 --backend rayon --repeat 3 2>&1 | grep -A3 "^Memory bandwidth" | tail -2 | sed "s|^|# triad (threads, copy GB/s, triad GB/s, GFlop/s):|"
for round in $(seq "$rounds"); do
    echo "# round $round"
    for c in $cases; do
        case $c in
        paper) # the README's first command, whole run (4001 steps)
            pp paper-exact --numerics exact
            pp paper-fast --numerics fast
            pp paper-keep --numerics exact --subnormals keep
            dv2 paper 4001 "${paper_dv[@]}" ;;
        cache) # cache-resident 1001^2, order 4: 1000 and 200 steps
            for nt in 200 1000; do
                pp cache-exact-$nt "${cache_pp[@]}" --nt "$nt" --numerics exact
                pp cache-fast-$nt "${cache_pp[@]}" --nt "$nt" --numerics fast
                dv2 cache-$nt "$nt" "${cache_dv[@]}"
            done ;;
        3d) # 384^3, order 8: 60 and 20 steps
            for nt in 20 60; do
                pp 3d-auto-fast-$nt "${cube[@]}" --nt "$nt" --numerics fast
                pp 3d-off-fast-$nt "${cube[@]}" --nt "$nt" --numerics fast --time-block off
                pp 3d-off-exact-$nt "${cube[@]}" --nt "$nt" --numerics exact --time-block off
                dv3 3d-$nt 384 "$nt" 8
            done ;;
        esac
    done
done
