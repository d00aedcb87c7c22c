#!/usr/bin/env python3
"""The op-level and two-level placements against every backend alone, on the zoo models.

For every (model, threads) it runs `collage optimize --json` on a fresh cost database: the
first run measures every candidate (cold: its measuring time is the search time that counts)
and its end-to-end decision times the op-level plan side by side with each backend alone, in
at least --rounds interleaved rounds; the second run finds every cost in the database (warm:
its wall time, import and compile included). With --two-level-budget S, a third run adds the
two-level search for S seconds: its decision measures the op-level plan, the best two-level
placement and each backend alone side by side. Writes markdown tables to stdout (and to
--markdown FILE).

    bench/placement_table.py [--build build] [--models resnet50,mobilenetv2,bert_base]
                             [--threads 1,2] [--rounds 10] [--two-level-budget 120]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

PLACEMENT = re.compile(r"^placement \(([^)]*)\): (.*)$", re.M)


def run(cmd):
    start = time.monotonic()
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{result.stdout}\n{result.stderr}")
    return result.stdout, time.monotonic() - start


def summary(collage, args, json_path):
    """Runs `collage optimize ... --json` and returns (its summary, its stdout)."""
    out, _ = run([collage, "optimize", *args, "--json", json_path])
    with open(json_path) as f:
        return json.load(f), out


def medians(result):
    """{"op-level": ms, "two-level": ms, "<backend>": ms} from the end-to-end decision."""
    found = {}
    for f in result["finalists"]:
        if f["skipped"]:
            continue
        name = f["name"][len("single-backend:"):] if f["name"].startswith("single-backend:") else f["name"]
        found[name] = f["median_ms"]
    return found


def optimize(collage, model, threads, db, rounds, tmp):
    result, out = summary(collage, [model, "--threads", str(threads), "--cost-db", db, "--rounds", str(rounds)],
                          os.path.join(tmp, "cold.json"))
    warm_start = time.monotonic()
    warm, _ = summary(collage, [model, "--threads", str(threads), "--cost-db", db, "--no-compare"],
                      os.path.join(tmp, "warm.json"))
    warm_wall = time.monotonic() - warm_start
    if warm["measurements"]["measured"] != 0:
        raise RuntimeError(f"the warm run measured something: {warm['measurements']}")
    m = result["measurements"]
    return {
        "latencies": medians(result),
        "kept": result["kept_finalist"],
        "cold_measure_s": m["measure_seconds"],
        "search_s": m["search_seconds"],
        "candidates": f"{m['candidates_offered']} / {m['candidates_distinct']}",
        "placement": PLACEMENT.search(out).group(2),
        "warm_wall_s": warm_wall,
    }


def two_level(collage, model, threads, db, rounds, budget, tmp):
    result, out = summary(collage, [model, "--threads", str(threads), "--cost-db", db, "--rounds", str(rounds),
                                    "--search", "two-level", "--budget", f"{budget}s"],
                          os.path.join(tmp, "two.json"))
    lat = medians(result)
    return {
        "latencies": lat,
        "op_level": lat.get("op-level", 0),
        "two_level": lat.get("two-level", lat.get("op-level", 0)),
        "kept": result["kept_finalist"] == "two-level",
        "generations": result["two_level"]["generations"],
        "evaluations": result["two_level"]["evaluations"],
        "seconds": result["two_level"]["seconds"],
        "placement": PLACEMENT.search(out).group(2),
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
                r = optimize(collage, model, threads, db, args.rounds, tmp)
                lat = r["latencies"]
                singles = {k: v for k, v in lat.items() if k not in ("op-level", "two-level")}
                best = min(singles, key=singles.get)
                ratio = singles[best] / lat["op-level"]
                others = ", ".join(f"{k} {v:.1f}" for k, v in singles.items())
                lines.append(f"| {name} | {threads} | **{lat['op-level']:.2f} ms** | {best} {singles[best]:.2f} ms | "
                             f"{ratio:.2f}x | {others} | {r['candidates']} | {r['cold_measure_s']:.0f} s | "
                             f"{r['warm_wall_s']:.1f} s |")
                placements.append(f"- {name}, {threads} thread(s): {r['placement']}")
                print(lines[-1], file=sys.stderr, flush=True)
                if args.two_level_budget > 0:
                    t = two_level(collage, model, threads, db, args.rounds, args.two_level_budget, tmp)
                    singles2 = {k: v for k, v in t["latencies"].items() if k not in ("op-level", "two-level")}
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
