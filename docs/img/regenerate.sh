#!/usr/bin/env bash
# Regenerates the pictures of the README and docs/guide/ppwave.md (docs/img/*.png) with ppwave
# itself: the same figure code as `ppwave run` and `ppwave bench --plot`. Run from the
# repository root:
#   bash docs/img/regenerate.sh
# About a minute of runs on two cores after the release build (the paper run is the longest).
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
