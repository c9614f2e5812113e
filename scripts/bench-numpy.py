#!/usr/bin/env python3
"""numpy's float32 matmul, the peer `benches/par.rs` measures ops::par::matmul against.

Usage: scripts/bench-numpy.py N [REPS] [--blas]
Prints one line, `numpy_matmul N <median seconds> <reps>`, the median of REPS
timed `a @ b` calls on N×N float32 matrices (after one untimed warm-up), and
with --blas a second line naming the BLAS numpy was built with, from
numpy.show_config(). The bench runs this between its own rounds, so both see
the same load; numpy's BLAS threads follow OPENBLAS_NUM_THREADS /
OMP_NUM_THREADS, else use every core.
"""
import statistics
import sys
import time

import numpy as np


def blas() -> str:
    deps = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    config = " ".join(str(deps.get("openblas configuration", "")).split())
    return f"numpy {np.__version__}, BLAS {deps.get('name')} {deps.get('version')} ({config})"


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    n = int(args[0])
    reps = int(args[1]) if len(args) > 1 else 5
    rng = np.random.default_rng(1)
    a = rng.uniform(-2, 2, (n, n)).astype(np.float32)
    b = rng.uniform(-2, 2, (n, n)).astype(np.float32)
    a @ b  # warm-up: thread start, first-touch of the output
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - t)
    print(f"numpy_matmul {n} {statistics.median(times):.9f} {reps}")
    if "--blas" in sys.argv:
        print(f"numpy_blas {blas()}")


if __name__ == "__main__":
    main()
