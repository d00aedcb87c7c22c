#!/usr/bin/env python3
"""Each engine inside collage against its own package, timed in paired, interleaved rounds.

`collage bench --backend onnxruntime` against ONNX Runtime's Python package, `--backend openvino`
against OpenVINO's (pinned to f32, what collage's openvino backend computes in), for each workload
(a zoo workload or `torch:NAME`, as compare.py takes them) and thread count. Each side's outputs
are first checked against the reference kernels' (compare.TOLERANCE); a pair with a side that
misses is not compared. With --collage-side python, collage's side is its Python package in a
process kept warm for the whole benchmark (peer_worker.py's collage_ENGINE), as the package's
side is, instead of a fresh `collage bench` process per round: the two sides then differ only
in the library. In each round the pairs come in a new order and each pair's two sides run
back to back (collage first in odd rounds, the package first in even ones), so that a round's
ratio package ms / collage ms compares two runs made under the same conditions; the first round
sets the iterations and is a warm-up, not counted. A pair's figure is the median of its per-round
ratios (above 1: collage is faster), their min and max the spread. Verdict: "at parity" when the
median is at least 0.99, "within spread" when only the max is (parity cannot be excluded), else
"slower". Writes RESULTS/NAME.json (every round's ms) and RESULTS/NAME.md after each model.

    parity.py [--build build] [--models all|resnet50,torch:lstm,...|torch] [--threads 1,2]
              [--rounds 5] [--engines onnxruntime,openvino] [--python bench/.venv/bin/python]
              [--results bench/results] [--name parity] [--torch-cases DIR]
              [--collage-side bench|python]
"""
import argparse
import json
import os
import random
import shlex
import statistics
import sys
import tempfile
import time

import numpy as np

import compare
import report
from compare import TORCH  # bench/torch_cases.py's PyTorch-exported models
from quantized import failure_text

HERE = os.path.dirname(os.path.abspath(__file__))
PARITY = 0.99  # the goal: each engine inside collage at least 0.99x its own package


class CollageSide(compare.CollageContender):
    """compare's CollageContender on one engine's backend (its p50 read in full from `collage
    bench --json`: the printed one has two decimals, up to 0.5% of a 1 ms run)."""

    def __init__(self, engine, collage, workload, threads):
        super().__init__(f"collage {engine}", collage, workload, threads, ["--backend", engine])


def reference_outputs(collage, workload, folder):
    """The reference kernels' outputs (`collage run`, native), which every contender must match."""
    return compare.collage_run_outputs(collage, workload, folder)


def check(contender, folder, reference):
    """One side's entry: its outputs' error, or why it cannot be timed."""
    try:
        if isinstance(contender, compare.PeerContender):
            contender.wait_ready()
        error = compare.worst_error(contender.outputs(folder), reference)
    except RuntimeError as failure:
        return {"status": "failed", "detail": failure_text(failure)[-300:]}
    entry = {"status": "ok" if error <= compare.TOLERANCE else "wrong outputs", "error": error}
    if isinstance(contender, compare.PeerContender):
        entry["setup_s"] = contender.setup_seconds
    return entry


def measure_pairs(pairs, entries, rounds):
    """pairs: engine -> {"collage": contender, "package": contender}; fills entries[engine]."""
    iterations = {}
    for r in range(1, rounds + 1):
        order = list(pairs)
        random.Random(r).shuffle(order)  # no pair always runs right after the same other pair
        for engine in order:
            sides = ["collage", "package"] if r % 2 else ["package", "collage"]
            try:
                for side in sides:
                    contender, entry = pairs[engine][side], entries[engine][side]
                    # An idle pause first: a runtime's workers may spin on after its last run
                    # (ONNX Runtime's do), taking the cores from whoever runs next.
                    time.sleep(compare.SETTLE_SECONDS)
                    # One warm-up run on each side, every round: `collage bench` is a fresh process
                    # (load, compile) and needs it; the package's worker, loaded once, gets it too,
                    # so that both sides are timed alike (caches refilled after the other's run).
                    if r == 1:  # as compare.measure: 2 runs set how many fill a round
                        entry["warmup_ms"] = contender.time(2, warmup=1)
                        fill = compare.ROUND_SECONDS * 1e3 / max(entry["warmup_ms"], 1e-3)
                        # An odd count (at most 19): `collage bench`'s p50 (nearest rank) and the
                        # worker's statistics.median are then the same sample, the middle one.
                        iterations[side, engine] = max(1, min(19, int(fill))) | 1
                        entry["iterations"] = iterations[side, engine]
                    else:
                        entry["rounds_ms"].append(contender.time(iterations[side, engine], warmup=1))
            except RuntimeError as failure:
                detail = f"timing failed: {failure_text(failure)[-300:]}"
                entries[engine].update(status="not compared", detail=detail)
                compare.log(f"  {engine}: {detail}")
                del pairs[engine]
        last = {(e, side): entries[e][side]["rounds_ms"][-1] if r > 1 else entries[e][side]["warmup_ms"]
                for e in pairs for side in ("collage", "package")}
        compare.log(f"    round {r}/{rounds}{' (warm-up)' if r == 1 else ''}: " + ", ".join(
            f"{e} collage {last[e, 'collage']:.2f} / package {last[e, 'package']:.2f} ms" for e in pairs))
    for engine in pairs:
        e = entries[engine]
        e["ratios"] = [p / c for p, c in zip(e["package"]["rounds_ms"], e["collage"]["rounds_ms"])]
        for side in ("collage", "package"):
            e[side]["ms"] = statistics.median(e[side]["rounds_ms"])
        e.update(report.ratio_summary(e["ratios"]))
        e["verdict"] = report.verdict(e, PARITY, "at parity")


def parity_workload(args, collage, workload, folder, reference):
    result = {}
    for threads in args.threads:
        pairs, entries, peers = {}, {}, []
        try:
            for engine in args.engines:
                peer = compare.PeerContender(engine, args.python, workload, threads, folder)
                peers.append(peer)
                if args.collage_side == "python":
                    side = compare.PeerContender(f"collage_{engine}", args.python, workload, threads, folder)
                    peers.append(side)
                else:
                    side = CollageSide(engine, collage, workload, threads)
                pairs[engine] = {"collage": side, "package": peer}
            for engine, pair in list(pairs.items()):
                entries[engine] = {side: check(c, folder, reference) for side, c in pair.items()}
                bad = "; ".join(f"{side} {e['status']}: " + (e["detail"] if "detail" in e else f"{e['error']:.1e}")
                                for side, e in entries[engine].items() if e["status"] != "ok")
                entries[engine]["status"] = "not compared" if bad else "ok"
                if bad:
                    entries[engine]["detail"] = bad
                    compare.log(f"  {threads}T {engine}: not compared: {bad}")
                    del pairs[engine]
                for side in pair:
                    entries[engine][side]["rounds_ms"] = []
            compare.log(f"  {threads} thread(s):")  # then each round's ms: collage / package
            measure_pairs(pairs, entries, args.rounds)
        finally:
            for peer in peers:  # never leave a worker behind, whatever failed
                peer.close()
        result[str(threads)] = entries
    return result


def markdown(results):
    counted = results["rounds"] - 1
    versions = ", ".join(f"{k} {v}" for k, v in results["versions"].items())
    lines = [f"# Engines inside collage against their own packages ({results['date']})", "",
             f"Machine: {results['machine']}. Versions: {versions}. {results['rounds']} rounds, the first "
             f"a warm-up not counted. collage's side: "
             + ("its Python package in a process kept warm" if results.get("collage_side") == "python"
                else "a `collage bench` process per round")
             + f". Command: `{results['command']}`", "",
             "ms: median of the counted rounds (each a median of its runs). Ratio: package ms / "
             "collage ms, paired within each round (above 1: collage faster); median, and min–max "
             f"over the rounds. At parity: median ≥ {PARITY}; within spread: only the max is; "
             "slower: even the max is not.", ""]
    lines += [f"Note: {note}" for note in results["notes"]] + ([""] if results["notes"] else [])
    for threads in results["threads"]:
        lines += [f"## {threads} thread(s)", "",
                  f"| model | engine | collage ms | package ms | ratio median (min–max over {counted} rounds) "
                  "| verdict |", "|---|---|---|---|---|---|"]
        per_engine = {}
        for model, row in results["workloads"].items():
            if "failed" in row:
                last = (row["failed"].strip().splitlines() or ["?"])[-1]
                lines.append(f"| {model} | — | | | failed: {last[:100].replace('|', '/')} | |")
                continue
            for engine, e in row.get(str(threads), {}).items():
                per_engine.setdefault(engine, []).append(e)
                if e["status"] != "ok":
                    lines.append(f"| {model} | {engine} | | | not compared: "
                                 f"{e['detail'][:100].replace('|', '/')} | |")
                    continue
                lines.append(f"| {model} | {engine} | {e['collage']['ms']:.2f} | {e['package']['ms']:.2f} | "
                             f"{e['ratio']:.3f}x ({e['min']:.3f}–{e['max']:.3f}) | {e['verdict']} |")
        lines.append("")
        for engine, es in per_engine.items():
            ratios = [e["ratio"] for e in es if e["status"] == "ok"]
            geo = f"{float(np.exp(np.mean(np.log(ratios)))):.3f}x" if ratios else "—"
            counts = ", ".join(f"{verdict} {sum(e.get('verdict') == verdict for e in es)}"
                               for verdict in ("at parity", "within spread", "slower"))
            lines.append(f"- {engine}, {threads} thread(s): geometric mean of the median ratios {geo} "
                         f"over {len(ratios)} models; {counts}; not compared {len(es) - len(ratios)}.")
        lines.append("")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--models", default="all",
                        help="zoo workloads and torch:NAME models, comma-separated; `torch` for all of "
                             "PyTorch's (" + ",".join(TORCH) + "), `all` for the zoo's and PyTorch's")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--rounds", type=int, default=5, help="the first is a warm-up, not counted")
    parser.add_argument("--engines", default="onnxruntime,openvino")
    parser.add_argument("--python", default=sys.executable,
                        help="the Python with ONNX Runtime and OpenVINO (bench/compare/setup.sh)")
    parser.add_argument("--results", default=os.path.join(HERE, "..", "results"))
    parser.add_argument("--name", default="parity", help="result files: RESULTS/NAME.json, .md")
    parser.add_argument("--torch-cases", default="",
                        help="where the PyTorch models are exported (default: BUILD/conformance_cases/torch)")
    parser.add_argument("--collage-side", choices=["bench", "python"], default="bench",
                        help="bench: a `collage bench` process per round; python: collage's Python "
                             "package (BUILD/python) in a process kept warm, as the package is")
    args = parser.parse_args()
    if args.rounds < 2:
        parser.error("--rounds must be at least 2: the first is a warm-up")
    args.threads = [int(t) for t in args.threads.split(",")]
    torch_names = [f"torch:{n}" for n in TORCH]
    models = []
    for item in args.models.split(","):
        models += {"all": compare.MODELS.split(",") + torch_names,
                   "torch": torch_names}.get(item, [item] if item else [])
    collage = os.path.abspath(os.path.join(args.build, "collage"))
    if not os.path.exists(collage):
        sys.exit(f"{collage} not found: build collage first (make)")
    if args.collage_side == "python":  # the workers import collage from the build
        module = os.path.abspath(os.path.join(args.build, "python"))
        if not os.path.exists(os.path.join(module, "collage")):
            sys.exit(f"{module}/collage not found: the build makes it where Python's headers are installed")
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (module, os.environ.get("PYTHONPATH", "")) if p)
    args.torch_cases = os.path.abspath(args.torch_cases or os.path.join(args.build, "conformance_cases", "torch"))
    built = compare.registered_backends(collage)
    notes = [f"`collage backends` does not list {e} (not built): skipped" for e in args.engines.split(",")
             if e and e not in built]
    for note in notes:
        compare.log(note)
    args.engines = [e for e in args.engines.split(",") if e in built]
    executable = os.path.relpath(sys.executable)
    command = shlex.join([sys.executable if executable.startswith("..") else executable, *sys.argv])
    results = {"date": time.strftime("%Y-%m-%d"), "machine": compare.machine(), "command": command,
               "versions": {k: v for k, v in compare.versions(args.python).items()
                            if k in ("onnxruntime", "openvino")},
               "threads": args.threads, "rounds": args.rounds, "collage_side": args.collage_side, "engines": args.engines, "parity": PARITY,
               "tolerance": compare.TOLERANCE, "notes": notes, "workloads": {}}
    os.makedirs(args.results, exist_ok=True)
    json_path = os.path.join(args.results, args.name + ".json")
    md_path = os.path.join(args.results, args.name + ".md")
    with tempfile.TemporaryDirectory() as folder:
        for name in models:
            compare.log(f"{name}:")
            try:
                workload = compare.Workload(collage, name, folder, args.torch_cases)
                reference = reference_outputs(collage, workload, folder)
                results["workloads"][name] = parity_workload(args, collage, workload, folder, reference)
            except Exception as error:  # one model's failure (export, set-up) is a result; go on
                compare.log(f"  failed: {failure_text(error)}")
                results["workloads"][name] = {"failed": f"{type(error).__name__}: {failure_text(error)}"}
            with open(json_path, "w") as f:  # kept up to date: a long run can be read midway
                json.dump(results, f, indent=1)
            with open(md_path, "w") as f:
                f.write(markdown(results))
    print(markdown(results))


if __name__ == "__main__":
    main()
