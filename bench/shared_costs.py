#!/usr/bin/env python3
"""A warm `collage optimize` against a shared PostgreSQL cost database and against the default
SQLite file, timed side by side in interleaved rounds.

For each model, one cold optimize fills each database (its wall time is printed too); then each
round runs the warm optimize once on each store, in alternating order, and the round's ratio is
PostgreSQL's wall time / SQLite's. The optimizes take `--calibrate 0 --no-compare`: what a warm
optimize adds to that (the calibration runs, the end-to-end decision) runs the model and does not
touch the database. A warm optimize must measure nothing; the script checks it. The server is a
throwaway cluster on a Unix socket of this machine (bench/throwaway_postgres.py): a team's server
across a network adds its round trips, about one per key looked up.

    shared_costs.py [--build build] [--models dcgan,mobilenetv2] [--threads 1] [--rounds 5]
                    [--backends native,onednn,xnnpack]
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

from throwaway_postgres import ThrowawayPostgres

HERE = os.path.dirname(os.path.abspath(__file__))


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    wanted = ("avx2", "avx512f", "avx512_bf16", "avx512_vnni", "amx_bf16")
                    return " ".join(flag for flag in line.split() if flag in wanted)
    except OSError:
        pass
    return "?"


def optimize(collage, model, db, args, folder):
    """Wall seconds of one optimize, and its measurement counts."""
    summary = os.path.join(folder, "summary.json")
    command = [collage, "optimize", model, "--threads", str(args.threads), "--calibrate", "0",
               "--no-compare", "--cost-db", db, "--json", summary]
    if args.backends:
        command += ["--backends", args.backends]
    started = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"optimize failed on {db}: {done.stderr.strip()}")
    with open(summary) as f:
        return seconds, json.load(f)["measurements"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    parser.add_argument("--models", default="dcgan,mobilenetv2")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--backends", default="")
    args = parser.parse_args()
    collage = os.path.join(args.build, "collage")

    print(f"CPU: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"flags: {cpu_flags()}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="collage-shared-costs-") as folder, \
            ThrowawayPostgres() as server:
        for name in args.models.split(","):
            model = os.path.join(folder, f"{name}.onnx")
            subprocess.run([collage, "zoo", "export", name, "-o", model], check=True,
                           stdout=subprocess.DEVNULL)
            sqlite = os.path.join(folder, f"{name}.sqlite")
            stores = {"sqlite": sqlite, "postgresql": server.url}
            cold = {}
            for store, db in stores.items():
                cold[store], counts = optimize(collage, model, db, args, folder)
                keys = counts["measured"]
            warm = {store: [] for store in stores}
            ratios = []
            for round_index in range(args.rounds):
                order = list(stores) if round_index % 2 == 0 else list(reversed(stores))
                times = {}
                for store in order:
                    times[store], counts = optimize(collage, model, stores[store], args, folder)
                    if counts["measured"] != 0:
                        sys.exit(f"a warm optimize on {store} measured {counts['measured']} keys")
                    warm[store].append(times[store])
                ratios.append(times["postgresql"] / times["sqlite"])
            rows.append((name, keys, cold, {s: statistics.median(t) for s, t in warm.items()},
                         statistics.median(ratios), min(ratios), max(ratios)))
            print(f"{name}: done", file=sys.stderr)

    print(f"\nwarm optimize (--calibrate 0 --no-compare, {args.threads} thread(s)), "
          f"{args.rounds} interleaved rounds; ratio = PostgreSQL / SQLite, paired per round\n")
    print("| model | keys | cold SQLite s | cold PostgreSQL s | warm SQLite s | warm PostgreSQL s "
          "| ratio (min-max) |")
    print("|---|---|---|---|---|---|---|")
    for name, keys, cold, warm, ratio, low, high in rows:
        print(f"| {name} | {keys} | {cold['sqlite']:.2f} | {cold['postgresql']:.2f} | "
              f"{warm['sqlite']:.2f} | {warm['postgresql']:.2f} | {ratio:.2f}x "
              f"({low:.2f}-{high:.2f}) |")
    print("\nThe cold optimizes ran one after the other, not side by side: they show the order of "
          "magnitude, not a comparison.")


if __name__ == "__main__":
    main()
