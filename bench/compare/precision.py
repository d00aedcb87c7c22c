#!/usr/bin/env python3
"""collage with reduced precision (`optimize --precision auto --tolerance T`) against OpenVINO
at its default precision (bf16 on a CPU with AVX-512 BF16 or AMX), OpenVINO pinned to f32 and
ONNX Runtime (f32), measured side by side, each contender's output error against the float32
reference printed beside its time.

For each workload (a zoo workload or `torch:NAME`, as compare.py takes them) and thread count,
`collage optimize` makes two plans on the same cost database: one with `--precision auto
--tolerance T` (each group in float32 or bf16, whichever measured faster, the plan kept within
T of the reference) and one in float32. The two plans, ONNX Runtime, OpenVINO pinned to f32 and
OpenVINO at its defaults then run the same seeded inputs; each one's outputs are compared with
the reference kernels' (max |a - b| / max |reference|), and all are timed in interleaved rounds
(compare.measure). Writes RESULTS/NAME.json and RESULTS/NAME.md.

    precision.py [--build build] [--models resnet50,bert_base,...] [--threads 1,2]
                 [--rounds 3] [--tolerance 1e-2] [--python bench/.venv/bin/python]
                 [--results bench/results] [--name precision] [--update | --render]
"""
import argparse
import json
import os
import subprocess
import tempfile
import time

import numpy as np

import compare
from quantized import failure_text, outputs_of_run, relative_error

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
MODELS = "resnet50,mobilenetv2,bert_base,gpt2,torch:resnet18,torch:transformer_encoder"
PEERS = ["onnxruntime", "openvino", "openvino_default"]
PRECISION_FLAGS = ("avx2", "avx512f", "avx512_bf16", "avx512_vnni", "amx_bf16", "amx_int8")


def cpu_precision_flags():
    """The CPU flags that decide which precisions run natively here."""
    with open("/proc/cpuinfo") as f:
        flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    return [flag for flag in PRECISION_FLAGS if flag in flags]


def plan_summary(path):
    """A saved plan's groups per backend and precision, and the bf16 ones in a line:
    'bf16: 2 of 40 groups (onednn 1, openvino 1), checked error 4.2e-03'."""
    with open(path) as f:
        plan = json.load(f)
    groups = plan["groups"]
    per = {}  # "onednn bf16" -> [nodes, groups]; fp32 (no "precision") unmarked
    for group in groups:
        key = group["backend"] + (" " + group["precision"] if "precision" in group else "")
        per.setdefault(key, [0, 0])
        per[key][0] += len(group["nodes"])
        per[key][1] += 1
    bf16 = {}
    for group in groups:
        if group.get("precision") == "bf16":
            bf16[group["backend"]] = bf16.get(group["backend"], 0) + 1
    line = f"bf16: {sum(bf16.values())} of {len(groups)} groups"
    if bf16:
        line += " (" + ", ".join(f"{b} {n}" for b, n in sorted(bf16.items())) + ")"
    if "checked_error" in plan:
        line += f", checked error {plan['checked_error']:.1e}"
    return {"line": line, "bf16_groups": sum(bf16.values()), "bf16_backends": bf16, "groups": len(groups),
            "summary": "; ".join(f"{key}: {n} nodes in {g} groups" for key, (n, g) in sorted(per.items())),
            "tolerance": plan.get("tolerance", 0), "checked_error": plan.get("checked_error", 0)}


def ratio(contenders, tolerance=None):
    """The fastest other runtime's time / collage auto's (None when either did not run); with
    `tolerance`, among the other runtimes whose error is within it or within collage's own."""
    if "ms" not in contenders.get("collage", {}):
        return None
    bound = None if tolerance is None else max(tolerance, contenders["collage"]["error"])
    others = [contenders[p]["ms"] for p in PEERS if "ms" in contenders.get(p, {})
              and (bound is None or contenders[p]["error"] <= bound)]
    return min(others) / contenders["collage"]["ms"] if others else None


def compare_precisions(args, collage, workload, folder, reference):
    result = {}
    for threads in args.threads:
        plans = {}
        notes = {}
        for label, flags in [("collage", ["--precision", "auto", "--tolerance", str(args.tolerance)]),
                             ("collage_fp32", [])]:
            plan = os.path.join(folder, f"{workload.stem}.{threads}.{label}.plan.json")
            start = time.monotonic()
            out = compare.run([collage, "optimize", workload.path, *workload.shape_args, "--threads",
                               str(threads), "--cost-db", args.cost_db, "--save-plan", plan, *flags])
            plans[label] = plan
            notes[label] = dict(plan_summary(plan), optimize_s=round(time.monotonic() - start, 1),
                                accuracy=[line.strip() for line in out.splitlines()
                                          if line.startswith("accuracy:") or "back to fp32" in line
                                          or "every group is fp32" in line])
        entries = {}
        contenders = [compare.CollageContender(label, collage, workload, threads, ["--plan", plan])
                      for label, plan in plans.items()]
        peers = [compare.PeerContender(p, args.python, workload, threads, folder) for p in PEERS]
        for peer in peers:
            try:
                peer.wait_ready()
            except RuntimeError as error:
                entries[peer.label] = {"status": "failed", "detail": str(error)[:300]}
        ran = []
        for c in contenders + [p for p in peers if p.label not in entries]:
            entries[c.label] = {"status": "ok", "error": relative_error(c.outputs(folder), reference)}
            ran.append(c)
        for label, timing in compare.measure(ran, args.rounds).items():
            entries[label].update(timing)
            rounds = timing["rounds_ms"]
            # A contender timed once (far slower than the rest) has no rounds to spread over.
            entries[label]["spread"] = (max(rounds) - min(rounds)) / timing["ms"] if len(rounds) > 1 else 0
        for p in peers:
            p.close()
        result[str(threads)] = {"contenders": entries, "plans": notes}
        r = ratio(entries)
        compare.log(f"  {workload.name} {threads}T: " + ", ".join(
            f"{label} {e.get('ms', float('nan')):.2f} ms (err {e.get('error', float('nan')):.1e})"
            for label, e in entries.items() if e["status"] == "ok") +
            (f"; ratio {r:.2f}x" if r else "") + f"; auto plan {notes['collage']['line']}")
    return result


def markdown(results):
    lines = [f"# Reduced precision: collage, OpenVINO, ONNX Runtime ({results['date']})", "",
             f"Machine: {results['machine']}; precision flags: {' '.join(results['cpu_flags'])}. "
             "Versions: " + ", ".join(f"{k} {v}" for k, v in results["versions"].items()) +
             f". OpenVINO's default precision here: {results.get('openvino_precision', '?')}. "
             f"collage: `optimize --precision auto --tolerance {results['tolerance']}`.", "",
             "Each cell: median of round medians (ms) and, in brackets, the outputs' error against "
             "the float32 reference kernels (max |a - b| / max |reference|). Ratio: the fastest "
             "other runtime's time (ONNX Runtime, OpenVINO f32, OpenVINO default) / collage's; "
             "within tolerance: the same among the other runtimes whose error is within the "
             "tolerance (or collage's own error, if larger); spread: the widest (max - min) / "
             "median of a contender's round medians in the row.", ""]
    for threads in results["threads"]:
        lines += [f"## {threads} thread(s)", "",
                  "| model | collage auto | collage fp32 | ONNX Runtime | OpenVINO f32 | OpenVINO default "
                  "| ratio | within tolerance | spread | collage's auto plan |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        ratios, within = [], []
        for workload, per_threads in results["workloads"].items():
            if "failed" in per_threads:
                last = (per_threads["failed"].strip().splitlines() or ["?"])[-1]
                lines.append(f"| {workload} | failed: {last[:80].replace('|', '/')} | | | | | | | | |")
                continue
            row = per_threads.get(str(threads))
            if row is None or "contenders" not in row:
                continue
            c = row["contenders"]

            def cell(label):
                e = c.get(label, {})
                if e.get("status") != "ok":
                    return e.get("status", "-")
                return f"{e['ms']:.2f} ({e['error']:.1e})"

            r = ratio(c)
            if r:
                ratios.append(r)
            w = ratio(c, results["tolerance"])
            if w:
                within.append(w)
            spread = max((e.get("spread", 0) for e in c.values() if e.get("status") == "ok"), default=0)
            plan = row["plans"]["collage"]
            lines.append(f"| {workload} | {cell('collage')} | {cell('collage_fp32')} | "
                         f"{cell('onnxruntime')} | {cell('openvino')} | {cell('openvino_default')} | "
                         f"{f'{r:.2f}x' if r else ''} | {f'{w:.2f}x' if w else ''} | {spread:.0%} | "
                         f"{plan.get('line', plan['summary'])} |")
        if ratios:
            geo = float(np.exp(np.mean(np.log(ratios))))
            lines += ["", f"Geometric mean of the ratios: {geo:.2f}x over {len(ratios)} rows; "
                      f"{sum(r >= 1.0 for r in ratios)} of {len(ratios)} at least 1.0x."]
        if within:
            geo = float(np.exp(np.mean(np.log(within))))
            lines += [f"Within tolerance: {geo:.2f}x over {len(within)} rows; "
                      f"{sum(r >= 1.0 for r in within)} of {len(within)} at least 1.0x."]
        lines.append("")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--models", default=MODELS)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds, after one warm-up round")
    parser.add_argument("--tolerance", type=float, default=1e-2)
    parser.add_argument("--python", default=os.path.join(ROOT, "bench", ".venv", "bin", "python"),
                        help="the Python with ONNX Runtime and OpenVINO (bench/compare/setup.sh)")
    parser.add_argument("--results", default=os.path.join(HERE, "..", "results"))
    parser.add_argument("--cost-db", default="", help="default: RESULTS/costs.sqlite")
    parser.add_argument("--name", default="precision")
    parser.add_argument("--render", action="store_true",
                        help="write RESULTS/NAME.md from RESULTS/NAME.json, measuring nothing")
    parser.add_argument("--update", action="store_true",
                        help="re-measure only the given models into RESULTS/NAME.json, keeping its "
                             "other rows (each row is measured side by side on its own)")
    args = parser.parse_args()
    if args.render:
        compare.render(args.results, args.name, markdown)
        return
    args.threads = [int(t) for t in args.threads.split(",")]
    collage = os.path.abspath(os.path.join(args.build, "collage"))
    torch_cases = os.path.abspath(os.path.join(args.build, "conformance_cases", "torch"))
    os.makedirs(args.results, exist_ok=True)
    args.cost_db = args.cost_db or os.path.join(args.results, "costs.sqlite")
    precision = compare.run([args.python, "-c",
                             "import openvino as ov; print(ov.Core().get_property('CPU', "
                             "'INFERENCE_PRECISION_HINT').get_type_name())"]).strip()
    flags = cpu_precision_flags()
    compare.log(f"CPU precision flags: {' '.join(flags) or 'none'} "
                f"(of {' '.join(PRECISION_FLAGS)}); OpenVINO's default precision: {precision}")
    results = {"date": time.strftime("%Y-%m-%d"), "machine": compare.machine(), "cpu_flags": flags,
               "versions": {k: v for k, v in compare.versions(args.python).items()
                            if k in ("onnxruntime", "openvino")},
               "openvino_precision": precision, "tolerance": args.tolerance,
               "threads": args.threads, "rounds": args.rounds, "workloads": {}}
    json_path = os.path.join(args.results, args.name + ".json")
    if args.update and os.path.exists(json_path):
        with open(json_path) as f:
            earlier = json.load(f)
        results["workloads"] = earlier["workloads"]
        results["threads"] = sorted(set(earlier["threads"]) | set(args.threads))
    with tempfile.TemporaryDirectory() as folder:
        for name in args.models.split(","):
            compare.log(f"{name}:")
            try:
                workload = compare.Workload(collage, name, folder, torch_cases)
                reference = outputs_of_run(collage, workload, folder)
                # Per thread count: --update at one count keeps the others' rows.
                rows = results["workloads"].get(name, {})
                rows.pop("failed", None)
                rows.update(compare_precisions(args, collage, workload, folder, reference))
                results["workloads"][name] = rows
            except (RuntimeError, subprocess.CalledProcessError) as error:
                compare.log(f"  failed: {failure_text(error)}")
                results["workloads"][name] = {"failed": failure_text(error)}
            with open(json_path, "w") as f:  # kept up to date: a long run can be read midway
                json.dump(results, f, indent=1)
    text = markdown(results)
    with open(os.path.join(args.results, args.name + ".md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
