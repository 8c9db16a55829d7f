#!/usr/bin/env bash
# The cost of a gradient (RTM image) against the forward run, for 10 shots: `ppwave migrate`
# (forward, adjoint and imaging per shot) with every step kept and with binomial checkpoints
# in 10 % of full storage, against `ppwave run` of the same shots, timed in turns.
#
#   docs/bench/gradient_cost.sh [PPWAVE] [ROUNDS]
#
# PPWAVE defaults to target/release/ppwave, ROUNDS to 2. The survey: 400 x 400 cells of 10 m,
# 2000 m/s over 3000 m/s from row 200, 1500 steps of 1 ms, 15 Hz, order 4, a 20-cell sponge,
# f32, 10 shots and 89 receivers on row 22. Prints each command's wall time, the ratios to
# the forward run in the same round, and the recomputed steps migrate's run.json records.
set -euo pipefail
ppwave=${1:-target/release/ppwave}
rounds=${2:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
geometry=(--nz 400 --nx 400 --nt 1500 --dt 0.001 --dh 10 --fpeak 15 --absorb 20
          --boundary sponge --source-mode add --receivers 22:24:376:4)
for x in 40 75 110 145 180 215 250 285 320 355; do echo "22 $x"; done > "$work/shots.txt"
"$ppwave" run "${geometry[@]}" --vmin 2000 --layer 200:400:3000 --shots "$work/shots.txt" \
    --out "$work/data" > /dev/null
# Full storage of one shot: nt fields of nz x nx f32 values; the budget is a tenth of it.
full=$((1500 * 400 * 400 * 4))
budget=$((full / 10))
seconds() { local t0 t1; t0=$(date +%s.%N); "$@" > /dev/null; t1=$(date +%s.%N); echo "$t1 - $t0" | bc; }
for round in $(seq "$rounds"); do
    fwd=$(seconds "$ppwave" run "${geometry[@]}" --vmin 2000 --layer 200:400:3000 \
        --shots "$work/shots.txt" --time-block off --out "$work/fwd" --overwrite)
    fwd_auto=$(seconds "$ppwave" run "${geometry[@]}" --vmin 2000 --layer 200:400:3000 \
        --shots "$work/shots.txt" --out "$work/fwd" --overwrite)
    full_t=$(seconds "$ppwave" migrate "${geometry[@]}" --vmin 2000 --shots "$work/shots.txt" \
        --data "$work/data" --out "$work/img-full" --overwrite)
    ckpt_t=$(seconds "$ppwave" migrate "${geometry[@]}" --vmin 2000 --shots "$work/shots.txt" \
        --data "$work/data" --memory "$budget" --out "$work/img-ckpt" --overwrite)
    recomputed=$(grep -o '"recomputed_steps": *[0-9]*' "$work/img-ckpt/run.json" | grep -o '[0-9]*$')
    cmp -s "$work/img-full/image.npy" "$work/img-ckpt/image.npy" && same=identical || same=DIFFERENT
    echo "round $round: forward (10 shots) ${fwd} s unblocked, ${fwd_auto} s default;" \
        "migrate, every step kept ${full_t} s ($(echo "scale=2; $full_t / $fwd" | bc) x)," \
        "checkpoints in $budget bytes ${ckpt_t} s ($(echo "scale=2; $ckpt_t / $fwd" | bc) x," \
        "$recomputed recomputed steps over 10 x 1500, images $same)"
done
