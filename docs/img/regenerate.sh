#!/usr/bin/env bash
# Regenerates the pictures of the README, docs/guide/ppwave.md and docs/guide/adjoint.md
# (docs/img/*.png) with ppwave itself: the same figure code as `ppwave run` and `ppwave bench
# --plot`. Run from the repository root:
#   bash docs/img/regenerate.sh
# About two minutes of runs on two cores after the release build (the paper run is the longest);
# the last pictures install seiscode-models from PyPI into a temporary virtual environment.
set -euo pipefail
cargo build --release -p ppwave
ppwave=target/release/ppwave
img=docs/img
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The shot over two layers (examples/configs/shot.toml): gather with AGC, snapshot at step
# 1000 with the absorbing layer, the velocity model; then the same snapshot with the rigid
# border.
$ppwave run --config examples/configs/shot.toml --gather-gain agc --out "$tmp/shot"
cp "$tmp/shot/seismogram.png" $img/shot_gather.png
cp "$tmp/shot/snapshots/01000.png" $img/snapshot_absorb.png
cp "$tmp/shot/velocity.png" $img/velocity_shot.png
$ppwave run --config examples/configs/shot.toml --absorb 0 --out "$tmp/rigid"
cp "$tmp/rigid/snapshots/01000.png" $img/snapshot_rigid.png
$ppwave run --config examples/configs/shot.toml --boundary sponge --out "$tmp/sponge"
cp "$tmp/sponge/snapshots/01000.png" $img/snapshot_sponge.png

# A 3D run: the three slices through the source.
$ppwave run --ny 100 --nz 100 --nx 120 --nt 300 --dh 10 --dt 0.001 --fpeak 15 \
    --src-z 40 --src-x 60 --layer 70:100:3000 --vmin 2000 --absorb 15 \
    --source-mode add --receivers 20:50:0:119:4 --out "$tmp/3d"
cp "$tmp/3d/wavefield.png" $img/wavefield_3d.png

# The paper's problem (no flags): the final wavefield.
$ppwave run --out "$tmp/paper"
cp "$tmp/paper/wavefield.png" $img/wavefield_paper.png

# The roofline: bandwidth and compute roofs measured in the same run, every kernel labelled.
$ppwave bench --nz 2048 --nx 2048 --repeat 5 --backend serial,rayon,c --plot $img/roofline.png

# write_npy FILE NZ NX EXPR: an NZ x NX float64 .npy whose value at (z, x) is the Python
# expression EXPR (math imported), with the standard library's struct only.
write_npy() {
    python3 - "$@" <<'PY'
import math, struct, sys
path, nz, nx, expr = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
head = "{'descr': '<f8', 'fortran_order': False, 'shape': (%d, %d), }" % (nz, nx)
head += " " * (63 - (10 + len(head)) % 64) + "\n"
with open(path, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(head)) + head.encode())
    for z in range(nz):
        f.write(struct.pack("<%dd" % nx, *(eval(expr, {"math": math, "z": z, "x": x, "nx": nx})
                                           for x in range(nx))))
PY
}

# Reverse-time migration: seven shots over a dipping interface (2000 over 2800 m/s),
# migrated in the constant 2000 m/s model with the Laplacian filter. The true model (velocity.png of the recording run) and the image.
write_npy "$tmp/dip.npy" 140 240 "2800.0 if z >= 60 + 40 * x / (nx - 1) else 2000.0"
for x in 40 66 93 120 147 174 200; do echo "22 $x"; done > "$tmp/dip-shots.txt"
rtm=(--nz 140 --nx 240 --nt 1300 --dt 0.001 --dh 10 --fpeak 15 --absorb 20 --boundary sponge
     --source-mode add --receivers 22:22:218:2)
$ppwave run "${rtm[@]}" --velocity "$tmp/dip.npy" --shots "$tmp/dip-shots.txt" \
    --out "$tmp/dip-data"
$ppwave migrate "${rtm[@]}" --vmin 2000 --layer 0:1:2000 --shots "$tmp/dip-shots.txt" \
    --data "$tmp/dip-data" --laplacian --out "$tmp/dip-image"
# The true model's picture: a two-step run of the first shot writes velocity.png.
$ppwave run "${rtm[@]}" --velocity "$tmp/dip.npy" --src-z 22 --src-x 40 --nt 2 \
    --out "$tmp/dip-model"
cp "$tmp/dip-model/velocity.png" $img/rtm_model.png
cp "$tmp/dip-image/image.png" $img/rtm_image.png

# Full-waveform inversion: a +150 m/s Gaussian anomaly (sigma 60 m) in 2000 m/s, eight shots
# and two receiver lines above and below it, 20 iterations of L-BFGS from the constant model.
write_npy "$tmp/blob.npy" 80 88 "2000.0 + 150.0 * math.exp(-((z - 40) ** 2 + (x - 44) ** 2) / 72.0)"
for z in 12 68; do for x in 16 34 54 72; do echo "$z $x"; done; done > "$tmp/blob-shots.txt"
fwi=(--nz 80 --nx 88 --nt 520 --dt 0.001 --dh 10 --fpeak 25 --absorb 10 --boundary sponge
     --source-mode add --receivers 12:12:76:2 --receivers 68:12:76:2 --precision f64)
$ppwave run "${fwi[@]}" --velocity "$tmp/blob.npy" --shots "$tmp/blob-shots.txt" \
    --out "$tmp/blob-data"
$ppwave invert "${fwi[@]}" --vmin 2000 --layer 0:1:2000 --shots "$tmp/blob-shots.txt" \
    --data "$tmp/blob-data" --iterations 20 --step 40 --bounds 1800:2400 --out "$tmp/blob-fwi"
$ppwave run "${fwi[@]}" --velocity "$tmp/blob.npy" --src-z 12 --src-x 16 --nt 2 \
    --out "$tmp/blob-model"
cp "$tmp/blob-model/velocity.png" $img/fwi_true.png
cp "$tmp/blob-fwi/model.png" $img/fwi_result.png

# Full-waveform inversion on a third-party model: the checkerboard resolution test of
# seiscode-models 0.5.1 (PyPI; 200 m cells of 3000 +- 150 m/s on a 60 x 160 grid of 10 m),
# nine shots on two lines, 20 iterations of L-BFGS from the constant 3000 m/s.
python3 -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install -q seiscode-models==0.5.1
"$tmp/venv/bin/python" - "$tmp/checker.npy" <<'PY'
import sys, numpy as np, seiscode_models as sm
v = sm.checkerboard(nx=160, nz=60, dx=10.0, dz=10.0, cell=20, v0=3000.0, dv=150.0)
np.save(sys.argv[1], np.ascontiguousarray(v.T.astype(np.float64)))
PY
{ for x in 16 46 76 106 136; do echo "12 $x"; done; for x in 31 61 91 121; do echo "47 $x"; done; } \
    > "$tmp/checker-shots.txt"
checker=(--nt 800 --dt 0.001 --dh 10 --fpeak 10 --absorb 10 --boundary sponge --source-mode add
         --precision f64 --receivers 12:12:148:2 --receivers 47:12:148:2)
$ppwave run "${checker[@]}" --velocity "$tmp/checker.npy" --shots "$tmp/checker-shots.txt" \
    --out "$tmp/checker-data"
$ppwave invert "${checker[@]}" --nz 60 --nx 160 --vmin 3000 --layer 0:1:3000 \
    --shots "$tmp/checker-shots.txt" --data "$tmp/checker-data" --iterations 20 --step 100 \
    --bounds 2500:3500 --out "$tmp/checker-fwi"
$ppwave run "${checker[@]}" --velocity "$tmp/checker.npy" --src-z 12 --src-x 16 --nt 2 \
    --out "$tmp/checker-model"
cp "$tmp/checker-model/velocity.png" $img/fwi_checker_true.png
cp "$tmp/checker-fwi/model.png" $img/fwi_checker_result.png
