#!/usr/bin/env python3
"""The op-level and two-level placements against every backend alone, on the zoo models.

For every (model, threads) it runs `collage optimize` on a fresh cost database: the first
run measures every candidate (cold: its measuring time is the search time that counts) and
then times the op-level plan side by side with each backend alone, interleaved over
--rounds rounds; the second run finds every cost in the database (warm: its wall time,
import and compile included). With --two-level-budget S, a third run adds the two-level
search for S seconds: it measures the op-level and the best two-level placement side by
side, then the result against each backend alone. Writes markdown tables to stdout (and to
--markdown FILE).

    bench/placement_table.py [--build build] [--models resnet50,mobilenetv2,bert_base]
                             [--threads 1,2] [--rounds 10] [--two-level-budget 120]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

UNIT = {"us": 1e-3, "ms": 1.0, "s": 1e3}
ROW = re.compile(r"^(optimized|[a-z_0-9]+ alone)\s+([0-9.]+) (ms|us|s)\s+[0-9.]+x\s+\S+$", re.M)
MEASURING = re.compile(r"measuring ([0-9.]+) s, searching ([0-9.]+) s")
CANDIDATES = re.compile(r"candidates: (\d+) offered, (\d+) distinct")
PLACEMENT = re.compile(r"^placement \((?:op|two)-level\): (.*)$", re.M)
TWO_LEVEL = re.compile(r"two-level search: (\d+) generations, (\d+) placements measured end to end.*?, ([0-9.]+) s$", re.M)
SIDE = re.compile(r"measured side by side: op-level ([0-9.]+) (ms|us|s), best two-level ([0-9.]+) (ms|us|s)(?:, \S+ alone [0-9.]+ (?:ms|us|s))?: (.*)$", re.M)


def run(cmd):
    start = time.monotonic()
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{result.stdout}\n{result.stderr}")
    return result.stdout, time.monotonic() - start


def optimize(collage, model, threads, db, rounds):
    out, _ = run([collage, "optimize", model, "--threads", str(threads), "--cost-db", db,
                  "--rounds", str(rounds)])
    latencies = {name: float(value) * UNIT[unit] for name, value, unit in ROW.findall(out)}
    measuring = MEASURING.search(out)
    candidates = CANDIDATES.search(out)
    warm_out, warm_wall = run([collage, "optimize", model, "--threads", str(threads), "--cost-db", db,
                               "--no-compare"])
    if " 0 measured now" not in warm_out:
        raise RuntimeError(f"the warm run measured something:\n{warm_out}")
    return {
        "latencies": latencies,
        "cold_measure_s": float(measuring.group(1)),
        "search_s": float(measuring.group(2)),
        "candidates": f"{candidates.group(1)} / {candidates.group(2)}",
        "placement": PLACEMENT.search(out).group(1),
        "warm_wall_s": warm_wall,
    }


def two_level(collage, model, threads, db, rounds, budget):
    out, _ = run([collage, "optimize", model, "--threads", str(threads), "--cost-db", db,
                  "--rounds", str(rounds), "--search", "two-level", "--budget", f"{budget}s"])
    latencies = {name: float(value) * UNIT[unit] for name, value, unit in ROW.findall(out)}
    side = SIDE.search(out)
    search = TWO_LEVEL.search(out)
    return {
        "latencies": latencies,
        "op_level": float(side.group(1)) * UNIT[side.group(2)],
        "two_level": float(side.group(3)) * UNIT[side.group(4)],
        "kept": "graph-level placement is kept" in side.group(5),
        "generations": int(search.group(1)),
        "evaluations": int(search.group(2)),
        "seconds": float(search.group(3)),
        "placement": PLACEMENT.search(out).group(1),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--models", default="resnet50,mobilenetv2,bert_base")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--two-level-budget", type=float, default=0,
                        help="seconds for the two-level search (0: op-level only)")
    parser.add_argument("--markdown", default="")
    args = parser.parse_args()
    collage = os.path.join(args.build, "collage")

    lines = ["| model | threads | op-level plan | best single backend | speedup | all singles (ms) | "
             "candidates offered / distinct | cold measuring | warm optimize |",
             "|---|---|---|---|---|---|---|---|---|"]
    placements = []
    two_lines = ["| model | threads | best single backend | op-level | two-level | two-level gain | kept | "
                 "generations / placements measured | search time |",
                 "|---|---|---|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            model = os.path.join(tmp, name + ".onnx")
            run([collage, "zoo", "export", name, "-o", model])
            for threads in [int(t) for t in args.threads.split(",")]:
                db = os.path.join(tmp, f"{name}-{threads}.sqlite")
                r = optimize(collage, model, threads, db, args.rounds)
                lat = r["latencies"]
                singles = {k[:-len(" alone")]: v for k, v in lat.items() if k.endswith(" alone")}
                best = min(singles, key=singles.get)
                ratio = singles[best] / lat["optimized"]
                others = ", ".join(f"{k} {v:.1f}" for k, v in singles.items())
                lines.append(f"| {name} | {threads} | **{lat['optimized']:.2f} ms** | {best} {singles[best]:.2f} ms | "
                             f"{ratio:.2f}x | {others} | {r['candidates']} | {r['cold_measure_s']:.0f} s | "
                             f"{r['warm_wall_s']:.1f} s |")
                placements.append(f"- {name}, {threads} thread(s): {r['placement']}")
                print(lines[-1], file=sys.stderr, flush=True)
                if args.two_level_budget > 0:
                    t = two_level(collage, model, threads, db, args.rounds, args.two_level_budget)
                    singles2 = {k[:-len(" alone")]: v for k, v in t["latencies"].items() if k.endswith(" alone")}
                    best2 = min(singles2, key=singles2.get)
                    gain = t["op_level"] / t["two_level"] - 1
                    two_lines.append(f"| {name} | {threads} | {best2} {singles2[best2]:.2f} ms | {t['op_level']:.2f} ms | "
                                     f"{t['two_level']:.2f} ms | {100 * gain:+.1f}% | {'yes' if t['kept'] else 'no'} | "
                                     f"{t['generations']} / {t['evaluations']} | {t['seconds']:.0f} s |")
                    placements.append(f"- {name}, {threads} thread(s), two-level: {t['placement']}")
                    print(two_lines[-1], file=sys.stderr, flush=True)
    text = "\n".join(lines) + "\n"
    if args.two_level_budget > 0:
        text += "\n" + "\n".join(two_lines) + "\n"
    text += "\nPlacements:\n" + "\n".join(placements) + "\n"
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
