#!/usr/bin/env python3
"""How well the cost model predicts whole runs, and whether the op-level plan beats every
backend alone.

For every model (the zoo workloads and the models PyTorch exports for the tests) and every
thread count, runs `collage optimize MODEL --threads T --json SUMMARY` once. optimize ends
with its end-to-end decision: the op-level plan and every backend alone, compiled, checked
against the reference kernels and run in interleaved rounds (the same process, every
finalist once per round, the order rotating). From its summary this prints, per model:

- the op-level plan's estimate (the search's sum of measured group, conversion and
  thread-pool-switch costs) against its measured median, and the same for each backend
  alone (a backend alone is priced by the same cost model);
- the op-level plan's speed over the fastest backend alone: the ratio of the two finalists'
  median per-round ratios to the kept finalist (paired through the kept one);
- the rounds measured and the kept finalist's round-to-round spread ((p90 - p10) / median).

Then the goals: |estimate - measured| / measured of the op-level plan at most 10% as the
median over the models and at most 25% for every model; the op-level plan at least 1.0x the
fastest backend alone on every model (within the spread). Costs persist in one cost
database per output folder, so a second run measures nothing and only times again.

    bench/cost_fidelity.py [--build build] [--out bench/results/cost_fidelity]
                           [--models zoo,torch | NAME,...] [--threads 1,2] [--rounds 15]
                           [--measure-caches run|warm|cold]

Writes OUT/cost_fidelity.md (the table), OUT/cost_fidelity.json (every figure) and keeps each
optimize summary in OUT/summaries/. Needs /usr/bin/python3 with python3-torch for the PyTorch
models (`make test-deps` installs it); without it those are skipped, saying so.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

from torch_cases import TORCH, torch_models

ZOO = ["resnet50", "mobilenetv2", "bert_base", "resnext50", "dcgan", "nasrnn", "nasnet_a",
       "resnet3d50", "gpt2"]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = line.split(":", 1)[1].split()
                    return " ".join(sorted(f for f in flags if f.startswith(("avx", "fma", "amx"))))
    except OSError:
        pass
    return "unknown"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def run(cmd, **kwargs):
    result = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({result.returncode}):\n{result.stdout[-3000:]}\n"
                           f"{result.stderr[-3000:]}")
    return result.stdout


def zoo_model(collage, name, folder):
    path = os.path.join(folder, f"zoo_{name}.onnx")
    if not os.path.exists(path):
        run([collage, "zoo", "export", name, "-o", path])
    return path, []


def finalists_by_name(summary):
    return {f["name"]: f for f in summary["finalists"] if not f.get("skipped")}


def relative_error(estimated, measured):
    return (estimated - measured) / measured if measured > 0 and estimated > 0 else None


def analyse(summary):
    """The figures of one optimize summary."""
    finalists = finalists_by_name(summary)
    op = finalists.get("op-level")
    singles = {n[len("single-backend:"):]: f for n, f in finalists.items() if n.startswith("single-backend:")}
    row = {"kept": summary.get("kept_finalist"), "rounds": summary.get("decision_rounds"),
           "spread": summary.get("round_spread"), "backends": {}}
    if op:
        row["op_estimated_ms"] = op["estimated_ms"]
        row["op_measured_ms"] = op["median_ms"]
        row["op_error"] = relative_error(op["estimated_ms"], op["median_ms"])
    for name, f in singles.items():
        row["backends"][name] = {"estimated_ms": f["estimated_ms"], "measured_ms": f["median_ms"],
                                 "error": relative_error(f["estimated_ms"], f["median_ms"]),
                                 "ratio_to_kept": f["ratio_to_kept"]}
    calibration = summary.get("calibration") or []
    row["plans_run"] = len(calibration)
    if calibration:
        # The first plan is priced by the groups' measurements alone: its error is the cost
        # model's own; the op-level plan's estimate includes what the runs of earlier plans taught.
        row["first_estimated_ms"] = calibration[0]["estimated_ms"]
        row["first_in_run_ms"] = calibration[0]["in_run_ms"]
        row["first_error"] = relative_error(calibration[0]["estimated_ms"], calibration[0]["in_run_ms"])
    if op and singles:
        best_name, best = min(singles.items(), key=lambda item: item[1]["ratio_to_kept"])
        row["best_single"] = best_name
        # Both ratios are paired against the kept finalist in the same rounds.
        row["op_speed_over_best_single"] = best["ratio_to_kept"] / op["ratio_to_kept"]
    return row


def first_plan(row):
    if "first_estimated_ms" not in row:
        return "-"  # no plan run: --calibrate 0
    return f"{row['first_estimated_ms']:.2f} / {row['first_in_run_ms']:.2f} ms"


def percent(x):
    return "-" if x is None else f"{100 * x:+.0f}%"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "cost_fidelity"))
    parser.add_argument("--models", default="zoo,torch",
                        help="zoo, torch, or comma-separated names (zoo:NAME / torch:NAME when both have it)")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--rounds", type=int, default=15, help="least rounds of the end-to-end decision")
    parser.add_argument("--measure-caches", default="run", choices=["run", "warm", "cold"])
    parser.add_argument("--calibrate", type=int, default=None,
                        help="plans the op-level search runs to calibrate its costs (default: optimize's)")
    args = parser.parse_args()

    collage = os.path.join(args.build, "collage")
    os.makedirs(os.path.join(args.out, "summaries"), exist_ok=True)
    models_dir = os.path.join(args.out, "models")
    os.makedirs(models_dir, exist_ok=True)
    wanted = [m for m in args.models.split(",") if m]
    zoo_names, torch_names = [], []
    for item in wanted:
        if item == "zoo":
            zoo_names += ZOO
        elif item == "torch":
            torch_names += TORCH
        elif item.startswith("zoo:") or (item in ZOO and not item.startswith("torch:")):
            zoo_names.append(item.split(":", 1)[-1])
        elif item.startswith("torch:") or item in TORCH:
            torch_names.append(item.split(":", 1)[-1])
        else:
            sys.exit(f"unknown model '{item}' (zoo: {', '.join(ZOO)}; torch: {', '.join(TORCH)})")
    models = {f"zoo:{n}": zoo_model(collage, n, models_dir) for n in zoo_names}
    for name, model in torch_models(torch_names, os.path.join(models_dir, "torch")).items():
        models[f"torch:{name}"] = model
    threads = [int(t) for t in args.threads.split(",")]
    database = os.path.join(args.out, f"costs-{args.measure_caches}.sqlite")

    results = []
    for label, (path, shapes) in models.items():
        for t in threads:
            summary_path = os.path.join(args.out, "summaries", f"{label.replace(':', '_')}_t{t}.json")
            start = time.monotonic()
            try:
                run([collage, "optimize", path, *shapes, "--threads", str(t), "--cost-db", database,
                     "--rounds", str(args.rounds), "--measure-caches", args.measure_caches,
                     "--json", summary_path,
                     *([] if args.calibrate is None else ["--calibrate", str(args.calibrate)])])
            except RuntimeError as e:
                print(f"{label} at {t} thread(s): {e}", file=sys.stderr)
                results.append({"model": label, "threads": t, "failed": str(e)[-500:]})
                continue
            with open(summary_path) as f:
                row = analyse(json.load(f))
            row.update({"model": label, "threads": t, "seconds": time.monotonic() - start})
            results.append(row)
            print(f"{label:28s} t{t}: op-level estimate {row.get('op_estimated_ms', 0):9.3f} ms, measured "
                  f"{row.get('op_measured_ms', 0):9.3f} ms ({percent(row.get('op_error'))}); "
                  f"vs best alone ({row.get('best_single')}) {row.get('op_speed_over_best_single', 0):.2f}x; "
                  f"spread {100 * (row.get('spread') or 0):.0f}% over {row.get('rounds')} rounds",
                  flush=True)

    lines = [f"# Cost model against whole runs ({time.strftime('%Y-%m-%d')})", "",
             f"Machine: {cpu_model()}, {os.cpu_count()} CPUs; flags: {cpu_flags()}.",
             f"Command: `bench/cost_fidelity.py --models {args.models} --threads {args.threads} "
             f"--rounds {args.rounds} --measure-caches {args.measure_caches}"
             f"{'' if args.calibrate is None else f' --calibrate {args.calibrate}'}`.", "",
             "First plan: the search's plan priced by the groups' measurements alone, against its "
             "profiled run. Op-level: the plan kept after calibration (the fastest of the plans "
             "run), its estimate before it ran against its median in the end-to-end decision.", "",
             "| model | threads | first plan: estimate / run | error | plans run | op-level estimate | "
             "measured | error | best alone | its error | op-level vs best alone | kept | rounds | spread |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in results:
        if "failed" in row:
            lines.append(f"| {row['model']} | {row['threads']} | failed | | | | | | | | | | | |")
            continue
        best = row["backends"].get(row.get("best_single"), {})
        lines.append(
            f"| {row['model']} | {row['threads']} | "
            f"{first_plan(row)} | "
            f"{percent(row.get('first_error'))} | {row.get('plans_run', 0)} | {row.get('op_estimated_ms', 0):.2f} ms | "
            f"{row.get('op_measured_ms', 0):.2f} ms | {percent(row.get('op_error'))} | {row.get('best_single')} "
            f"{best.get('measured_ms', 0):.2f} ms | {percent(best.get('error'))} | "
            f"{row.get('op_speed_over_best_single', 0):.2f}x | {row['kept']} | {row['rounds']} | "
            f"{100 * (row.get('spread') or 0):.0f}% |")
    errors = [abs(r["op_error"]) for r in results if r.get("op_error") is not None]
    first_errors = [abs(r["first_error"]) for r in results if r.get("first_error") is not None]
    single_errors = [abs(b["error"]) for r in results if "backends" in r for b in r["backends"].values()
                     if b["error"] is not None]
    speeds = [r["op_speed_over_best_single"] for r in results if "op_speed_over_best_single" in r]
    within = [r for r in results if "op_speed_over_best_single" in r and
              r["op_speed_over_best_single"] >= 1.0 - (r.get("spread") or 0) / 2]
    lines.append("")
    if errors:
        lines.append(f"op-level estimate error |est - measured| / measured: median {100 * statistics.median(errors):.1f}% "
                     f"(goal <= 10%), worst {100 * max(errors):.1f}% (goal <= 25% for every model), "
                     f"{sum(e <= 0.25 for e in errors)} of {len(errors)} within 25%.")
    if first_errors:
        lines.append(f"first plan (groups priced alone) against its run: median error "
                     f"{100 * statistics.median(first_errors):.1f}%, worst {100 * max(first_errors):.1f}%.")
    if single_errors:
        lines.append(f"every backend alone: median error {100 * statistics.median(single_errors):.1f}%, "
                     f"worst {100 * max(single_errors):.1f}%.")
    if speeds:
        lines.append(f"op-level plan over the best backend alone: geometric mean "
                     f"{statistics.geometric_mean(speeds):.2f}x, lowest {min(speeds):.2f}x; "
                     f"{len(within)} of {len(speeds)} at least 1.0x within half the round-to-round spread.")
    text = "\n".join(lines) + "\n"
    print(text)
    with open(os.path.join(args.out, "cost_fidelity.md"), "w") as f:
        f.write(text)
    with open(os.path.join(args.out, "cost_fidelity.json"), "w") as f:
        # The settings that shape the figures; where the build and the output lay is this
        # machine's business.
        settings = {k: v for k, v in vars(args).items() if k not in ("build", "out")}
        json.dump({"machine": cpu_model(), "flags": cpu_flags(), "args": settings, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
