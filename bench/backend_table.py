#!/usr/bin/env python3
"""Each single backend on the zoo models, side by side in one run.

For every (model, threads) it runs `collage bench MODEL --backend B` for every backend,
interleaved over several rounds (so that a slow phase of the machine hits all backends
alike), and reports the median p50 per backend and its ratio to the fastest one. Writes a
markdown table to stdout (and to --markdown FILE).

    bench/backend_table.py [--build build] [--models resnet50,mobilenetv2,bert_base]
                           [--threads 1,2] [--rounds 3] [--iterations 10]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

P50 = re.compile(r"latency: p50 ([0-9.]+) (ms|us|s)")
UNIT = {"us": 1e-3, "ms": 1.0, "s": 1e3}


def run(cmd):
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{result.stderr}")
    return result.stdout


def backends(collage):
    out = run([collage, "backends"])
    names = [line.split()[0] for line in out.splitlines()[1:] if line.strip()]
    return names


def bench_p50(collage, model, backend, threads, iterations):
    out = run([collage, "bench", model, "--backend", backend, "--threads", str(threads),
               "--warmup", "2", "--iterations", str(iterations)])
    match = P50.search(out)
    if not match:
        raise RuntimeError(f"no latency in output of bench {model} --backend {backend}:\n{out}")
    return float(match.group(1)) * UNIT[match.group(2)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--models", default="resnet50,mobilenetv2,bert_base")
    parser.add_argument("--backends", default="", help="comma list (default: every backend)")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--markdown", default="")
    args = parser.parse_args()

    collage = os.path.join(args.build, "collage")
    names = args.backends.split(",") if args.backends else backends(collage)
    models = args.models.split(",")
    threads = [int(t) for t in args.threads.split(",")]
    workdir = tempfile.mkdtemp(prefix="collage_bench_")
    paths = {}
    for model in models:
        paths[model] = os.path.join(workdir, model + ".onnx")
        run([collage, "zoo", "export", model, "-o", paths[model]])

    lines = ["| model | threads | " + " | ".join(names) + " |",
             "|---|---|" + "---|" * len(names)]
    for model in models:
        for t in threads:
            samples = {name: [] for name in names}
            for _ in range(args.rounds):
                for name in names:
                    samples[name].append(bench_p50(collage, paths[model], name, t, args.iterations))
                    print(f"  {model} t={t} {name}: {samples[name][-1]:.2f} ms", file=sys.stderr)
            medians = {name: statistics.median(v) for name, v in samples.items()}
            best = min(medians.values())
            cells = [f"{medians[n]:.1f} ({medians[n] / best:.2f}×)" for n in names]
            lines.append(f"| {model} | {t} | " + " | ".join(cells) + " |")
    table = "\n".join(lines)
    print(table)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table + "\n")


if __name__ == "__main__":
    main()
