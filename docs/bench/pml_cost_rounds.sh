#!/usr/bin/env bash
# The PML's cost per step against the rigid border's, with its noise floor measured in the
# same minutes (docs/performance.md, "The cost of the PML").
#
#   docs/bench/pml_cost_rounds.sh [ROUNDS=10] [PAUSE_S=30] [PML_COST=build it]
#
# Each round runs the `pml_cost` example twice, back to back, on the paper grid (20-cell PML,
# two threads, the default temporal blocking):
#   1. `pml_cost 16 20 2`: the PML's step over the rigid step, both simulators in one process,
#      stepped block by block in turns, once with each prepared first;
#   2. `pml_cost 16 20 2 auto aa`: the control, the PML's step over an identical PML's in
#      both orders as run 1 takes them, which would be 1 on a quiet machine. How far it is
#      from 1 is what one run's ratio can be off by in those minutes.
# Rounds are PAUSE_S seconds apart, so they sample the shared machine's states over a while.
#
# Prints one line per round (the ratio, the control, the rigid step and the triad) and at the
# end the median of all rounds' ratios, and the median and range over the rounds whose
# control was within 2 % of 1 (the rounds that can resolve a 15 % figure to a few percent).
set -euo pipefail
rounds=${1:-10}
pause=${2:-30}
bin=${3:-}
if [[ -z $bin ]]; then
    cargo build --release -q -p ppwave --example pml_cost
    bin=$(cargo metadata --format-version 1 --no-deps |
        sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')/release/examples/pml_cost
fi
# The last number before " (geometric mean" on the summary line.
ratio() { sed -n 's/.*pml \/ rigid \([0-9.]*\) (geometric mean.*/\1/p'; }
rows=()
for ((i = 1; i <= rounds; i++)); do
    out=$("$bin" 16 20 2)
    r=$(ratio <<<"$out")
    rigid=$(sed -n 's/^rigid first: rigid \([0-9.]*\) ms.*/\1/p' <<<"$out")
    triad=$(sed -n 's/.*triad \([0-9.]*\) GB\/s before, \([0-9.]*\) after/\1 \/ \2/p' <<<"$out")
    aa=$("$bin" 16 20 2 auto aa | ratio)
    printf 'round %2d %s  pml / rigid %s  control (aa) %s  rigid step %s ms  triad %s GB/s\n' \
        "$i" "$(date -u +%H:%M:%S)" "$r" "$aa" "$rigid" "$triad"
    rows+=("$r $aa")
    ((i < rounds)) && sleep "$pause"
done
printf '%s\n' "${rows[@]}" | awk '
    function median(v, n,   i, j, t) {
        for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) {
            t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
        }
        return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    }
    { all[++n] = $1; if ($2 >= 0.98 && $2 <= 1.02) { good[++m] = $1 } }
    END {
        printf "all %d rounds: median pml / rigid %.3f\n", n, median(all, n)
        if (m == 0) { print "no round had its control within 2 % of 1"; exit }
        printf "%d rounds with the control within 2 %% of 1: median %.3f, range %.3f-%.3f\n",
            m, median(good, m), good[1], good[m]
    }'
