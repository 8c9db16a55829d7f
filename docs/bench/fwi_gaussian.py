#!/usr/bin/env python3
"""FWI of a Gaussian velocity anomaly with `ppwave invert`: the misfit per iteration of L-BFGS
and of steepest descent, and where each puts the largest change. Standard library only.

  docs/bench/fwi_gaussian.py [PPWAVE] [ITERATIONS]

PPWAVE defaults to target/release/ppwave, ITERATIONS to 20. The survey: a 40 x 44 grid of
10 m cells, 2000 m/s with a +150 m/s Gaussian (sigma 3 cells) at row 20, column 22; four
shots and two receiver lines on rows 6 and 33 (transmission), 260 steps of 1 ms, 25 Hz,
order 4, a 6-cell sponge, f64. The inversion starts from the constant 2000 m/s.
"""
import json
import math
import pathlib
import struct
import subprocess
import sys
import tempfile

NZ, NX, CENTRE = 40, 44, (20, 22)
GEOMETRY = ("--nt 260 --dt 0.001 --dh 10 --fpeak 25 --absorb 6 --space-order 4 "
            "--receivers 6:7:37:2 --receivers 33:7:37:2 --backend serial --precision f64").split()


def true_model():
    return [[2000.0 + 150.0 * math.exp(-((z - CENTRE[0]) ** 2 + (x - CENTRE[1]) ** 2) / 18.0)
             for x in range(NX)] for z in range(NZ)]


def write_npy(path, rows):
    header = "{'descr': '<f8', 'fortran_order': False, 'shape': (%d, %d), }" % (len(rows), len(rows[0]))
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        for r in rows:
            f.write(struct.pack("<%dd" % len(r), *r))


def read_npy(path):
    data = pathlib.Path(path).read_bytes()
    n = struct.unpack("<H", data[8:10])[0]
    values = struct.unpack("<%dd" % (NZ * NX), data[10 + n:])
    return [values[z * NX:(z + 1) * NX] for z in range(NZ)]


def main():
    ppwave = sys.argv[1] if len(sys.argv) > 1 else "target/release/ppwave"
    iterations = sys.argv[2] if len(sys.argv) > 2 else "20"
    work = pathlib.Path(tempfile.mkdtemp(prefix="fwi-gaussian-"))
    shots = work / "shots.txt"
    shots.write_text("6 10\n6 34\n33 10\n33 34\n")
    write_npy(work / "true.npy", true_model())
    subprocess.run([ppwave, "run", *GEOMETRY, "--velocity", str(work / "true.npy"),
                    "--source-mode", "add", "--boundary", "sponge", "--shots", str(shots),
                    "--out", str(work / "data")], check=True, stdout=subprocess.DEVNULL)
    for method in ("lbfgs", "descent"):
        out = work / method
        subprocess.run([ppwave, "invert", *GEOMETRY, "--nz", str(NZ), "--nx", str(NX),
                        "--vmin", "2000", "--layer", "0:1:2000", "--data", str(work / "data"),
                        "--shots", str(shots), "--step", "40", "--bounds", "1800:2400",
                        "--iterations", iterations, "--method", method, "--out", str(out)],
                       check=True, stdout=subprocess.DEVNULL)
        misfits = [r["misfit"] for r in json.loads((out / "misfit.json").read_text())["iterations"]]
        model = read_npy(out / ("model-%04d.npy" % (len(misfits) - 1)))
        change, at = max((abs(v - 2000.0), (z, x)) for z, row in enumerate(model)
                         for x, v in enumerate(row))
        print("%-8s %d iterations: misfit %.3e -> %.3e (%.1f x lower); largest change %+.1f m/s "
              "at %s (anomaly +150 m/s at %s)" % (method, len(misfits) - 1, misfits[0], misfits[-1],
                                                  misfits[0] / misfits[-1],
                                                  model[at[0]][at[1]] - 2000.0, at, CENTRE))


if __name__ == "__main__":
    main()
