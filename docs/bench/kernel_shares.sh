#!/usr/bin/env bash
# Where a run's CPU time goes, per generated kernel, as shares of the fused step's time in
# the same run: a ratio that does not move with the machine's memory bandwidth, unlike
# wall-clock ratios taken minutes apart (see docs/design/0012-pml-storage-and-profiles.md).
#
# usage: docs/bench/kernel_shares.sh PPWAVE [ppwave run flags...]
#   e.g. docs/bench/kernel_shares.sh target/release/ppwave --nt 400 --threads 1 \
#          --backend rayon --absorb 20
#
# Needs perf, readelf, addr2line and python3, and a binary with debug info (the workspace's
# release profile has it). perf samples the CPU clock (virtual machines often have no
# hardware counters); each sample's address is mapped to its inlined frames, and counted for
# the innermost generated kernel row function (`kernels::FdStep4::row`, ...) or else the
# innermost ppstencil/ppwave function. Identical machine code may be folded into one
# function by the compiler, so a 2D kernel can show under the name of the 3D kernel with the
# same code (`PmlUpdate3dX` for `PmlUpdateX`).
set -euo pipefail
bin=$(realpath "$1")
shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$bin" "$work/bin"
perf record -q -o "$work/perf.data" "$work/bin" run --out "$work/out" "$@" >/dev/null 2>&1
perf script -i "$work/perf.data" -F ip,dso 2>/dev/null | awk -v b="$work/bin" '$2 ~ b {print $1}' \
    | sort | uniq -c >"$work/ips"
mmap=$(perf script -i "$work/perf.data" --show-mmap-events 2>/dev/null \
    | grep MMAP | grep "r-xp $work/bin" | head -1)
python3 - "$work/bin" "$work/ips" "$mmap" <<'EOF'
import collections, re, subprocess, sys
binary, ips, mmap = sys.argv[1:4]
# The executable mapping: its start address and its offset in the file.
start = int(re.search(r'\[(0x[0-9a-f]+)\(', mmap).group(1), 16)
offset = int(re.search(r'@ (0x[0-9a-f]+) ', mmap).group(1), 16)
for line in subprocess.run(['readelf', '-lW', binary], capture_output=True, text=True).stdout.splitlines():
    f = line.split()
    if f and f[0] == 'LOAD' and 'E' in f[6:-1]:
        vaddr = int(f[2], 16) - (int(f[1], 16) - offset)
counts = [(int(c), int(ip, 16) - start + vaddr) for c, ip in (l.split() for l in open(ips))]
out = subprocess.run(['addr2line', '-f', '-i', '-C', '-a', '-e', binary],
                     input='\n'.join(hex(a) for _, a in counts), capture_output=True, text=True).stdout
frames, cur = {}, None
for line in out.splitlines():
    if re.match(r'^0x[0-9a-f]+$', line):
        cur = int(line, 16)
        frames[cur] = []
    elif not line.startswith(('/', '??')):
        frames[cur].append(line)
total = collections.Counter()
for c, a in counts:
    fr = frames.get(a, [])
    name = next((f for f in fr if 'kernels::' in f and f.endswith('::row')), None)
    if name is None:
        name = next((f for f in fr if ('ppstencil' in f or 'ppwave' in f) and 'exec::' not in f),
                    fr[-1] if fr else '?')
    total[re.sub(r'::\{\{closure\}\}', '', name)[:100]] += c
fused = sum(v for k, v in total.items() if re.search(r'kernels::FdStep', k))
print(f"samples in the binary: {sum(total.values())}; fused step (FdStep*): {fused}")
for name, v in total.most_common(16):
    share = f"{100 * v / fused:6.1f} % of fused" if fused else ""
    print(f"{v:8d} {share}  {name}")
EOF
