#!/usr/bin/env python3
"""collage against ONNX Runtime and OpenVINO on int8 models made by ONNX Runtime's quantizer,
measured side by side, each contender's output error against the float model printed beside
its time.

For each workload (a zoo workload or `torch:NAME`, as compare.py takes them) and each
quantization method (scripts/quantize_models.py: static_qdq, static_qop, dynamic; 7-bit
weights), the float model is quantized in the quantizer's environment (BUILD/quantenv); then,
per thread count, `collage optimize --precision P --tolerance T` places the int8 model (every
backend, the end-to-end decision included; by default `--precision auto --tolerance 1e-2`, so
that its float parts may run in bf16 where the CPU has it, as OpenVINO's do by default, within
1e-2 of the int8 model on the reference kernels) and saves its plan, and collage's plan, ONNX
Runtime (its defaults: all graph optimizations) and OpenVINO (its defaults: no precision hint, so on a CPU with bf16 its
float parts run in bf16; the precision it ran at is recorded) each run the same int8 model on
the same seeded inputs. Their outputs are compared with the float model's on the reference
kernels (the error quantization costs) and with the int8 model's on the reference kernels
(how far each is from the int8 model's own semantics, in quantization steps where the output
has one); then all are timed in interleaved rounds (compare.measure). Writes
RESULTS/NAME.json and RESULTS/NAME.md.

    quantized.py [--build build] [--models resnet50,torch:resnet18,...] [--methods ...]
                 [--threads 1,2] [--rounds 3] [--precision auto] [--tolerance 1e-2]
                 [--python bench/.venv/bin/python]
                 [--results bench/results] [--name quantized] [--update | --render]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import compare

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
MODELS = "resnet50,mobilenetv2,bert_base,torch:resnet18,torch:efficientnet_b0,torch:transformer_encoder"
METHODS = "static_qdq,static_qop,dynamic"
# Static quantization of a model with a -inf attention mask breaks it (quantize_models.py).
STATIC_BROKEN = {"torch:transformer_encoder", "bert_base", "gpt2"}
PEERS = ["onnxruntime", "openvino_default"]


def relative_error(outputs, reference):
    """max |a - b| / max |reference| over the outputs (inf when they do not match up)."""
    if set(outputs) != set(reference):
        return float("inf")
    worst = 0.0
    for name, ref in reference.items():
        got = outputs[name]
        if got.shape != ref.shape:
            return float("inf")
        scale = max(float(np.max(np.abs(ref))), 1e-12) if ref.size else 1.0
        worst = max(worst, float(np.max(np.abs(got.astype(np.float64) - ref))) / scale)
    return worst


def failure_text(error):
    """An error's message without collage's progress lines, its end kept (where the cause is)."""
    lines = [line for line in str(error).splitlines()
             if line.strip() and "[#" not in line and "[." not in line]
    return "\n".join(lines)[-1200:]


def quantized_workload(workload, method, folder, quantizer):
    """A copy of `workload` whose model is the int8 one `method` makes (None if it fails)."""
    path = os.path.join(folder, f"{workload.stem}.{method}.onnx")
    subprocess.run([quantizer, os.path.join(ROOT, "scripts", "quantize_models.py"), "--model",
                    workload.path, "--inputs", workload.npz, "--method", method, "--output", path],
                   check=True, capture_output=True)
    q = object.__new__(compare.Workload)
    q.__dict__.update(workload.__dict__)
    q.name = f"{workload.name} ({method})"
    q.path = path
    q.stem = f"{workload.stem}.{method}"
    return q


def outputs_of_run(collage, workload, folder, extra=()):
    return compare.collage_run_outputs(collage, workload, folder, extra)


def compare_quantized(args, collage, workload, method, folder, float_reference):
    q = quantized_workload(workload, method, folder, args.quantizer)
    int8_reference = outputs_of_run(collage, q, folder)
    result = {}
    for threads in args.threads:
        plan = os.path.join(folder, f"{q.stem}.{threads}.plan.json")
        start = time.monotonic()
        out = compare.run([collage, "optimize", q.path, *q.shape_args, "--threads", str(threads),
                           "--precision", args.precision, "--tolerance", str(args.tolerance),
                           "--cost-db", args.cost_db, "--save-plan", plan])
        # "kept: op-level plan; the runner-up, ..." -> "op-level plan"
        kept = next((line[len("kept: "):].split(";")[0] for line in out.splitlines()
                     if line.startswith("kept: ")), "")
        placement = next((line.split(" ", 1)[1] for line in out.splitlines()
                          if line.startswith("placement (")), "")
        entries = {}
        contenders = [compare.CollageContender("collage", collage, q, threads, ["--plan", plan])]
        peers = [compare.PeerContender(p, args.python, q, threads, folder) for p in PEERS]
        for peer in peers:
            try:
                peer.wait_ready()
            except RuntimeError as error:
                entries[peer.label] = {"status": "failed", "detail": str(error)[:300]}
        ran = []
        for c in contenders + [p for p in peers if p.label not in entries]:
            outputs = c.outputs(folder)
            entries[c.label] = {"status": "ok",
                                "error_vs_float": relative_error(outputs, float_reference),
                                "error_vs_int8_reference": relative_error(outputs, int8_reference)}
            if isinstance(c, compare.PeerContender):
                entries[c.label]["setup_s"] = c.setup_seconds
            ran.append(c)
        for label, timing in compare.measure(ran, args.rounds).items():
            entries[label].update(timing)
        for p in peers:
            p.close()
        result[str(threads)] = {"contenders": entries, "optimize_s": round(time.monotonic() - start, 1),
                                "placement": placement, "kept": kept}
        compare.log(f"  {q.name} {threads}T: " + ", ".join(
            f"{label} {e.get('ms', float('nan')):.2f} ms (err {e.get('error_vs_float', float('nan')):.1e})"
            for label, e in entries.items() if e["status"] == "ok"))
    return result


def spread(entry):
    """(max - min) / median of a contender's round medians."""
    rounds = entry.get("rounds_ms") or []
    return (max(rounds) - min(rounds)) / statistics.median(rounds) if len(rounds) > 1 else 0.0


def geometric_mean(values):
    return float(np.exp(np.mean(np.log(values)))) if values else float("nan")


def markdown(results):
    tolerance = results.get("collage_tolerance")
    lines = [f"# int8 models: collage, ONNX Runtime, OpenVINO ({results['date']})", "",
             f"Machine: {results['machine']}. Versions: " +
             ", ".join(f"{k} {v}" for k, v in results["versions"].items()) +
             f". OpenVINO ran at its default precision ({results.get('openvino_precision', '?')}); "
             f"collage optimized with `--precision {results.get('collage_precision', 'fp32')}"
             f" --tolerance {tolerance if tolerance is not None else '-'}`.", "",
             "Each cell: median of round medians (ms) and, in brackets, the output's error against "
             "the float model and against the int8 model, both on the reference kernels "
             "(max |a - b| / max |reference|). Ratio: the fastest other runtime's time / "
             "collage's; within tolerance: the same among the other runtimes whose error against "
             "the int8 model is no worse than collage's tolerance or collage's own error, "
             "whichever is larger (integer groups may differ from the reference by rounding "
             "steps, which the tolerance does not cover). Spread: the widest (max - min) / "
             "median of a contender's rounds in the row.", ""]
    for threads in results["threads"]:
        lines += [f"## {threads} thread(s)", "",
                  "| model | method | collage | ONNX Runtime | OpenVINO | ratio | within tolerance "
                  "| spread | collage's plan |",
                  "|---|---|---|---|---|---|---|---|---|"]
        ratios, within = [], []
        for workload, methods in results["workloads"].items():
            for method, per_threads in methods.items():
                row = per_threads.get(str(threads))
                if row is None:
                    continue
                c = row["contenders"]

                def cell(label):
                    e = c.get(label, {})
                    if e.get("status") != "ok":
                        return e.get("status", "-")  # the reason is under "Failures"
                    return (f"{e['ms']:.2f} ({e['error_vs_float']:.1e} / "
                            f"{e['error_vs_int8_reference']:.1e})")

                ok = [p for p in PEERS if c.get(p, {}).get("status") == "ok" and "ms" in c[p]]
                ratio = within_ratio = ""
                if "ms" in c.get("collage", {}) and ok:
                    r = min(c[p]["ms"] for p in ok) / c["collage"]["ms"]
                    ratios.append(r)
                    ratio = f"{r:.2f}x"
                    # No worse than collage's own error or the tolerance, whichever is
                    # larger: integer groups may differ from the reference by their
                    # rounding steps, which the tolerance does not cover.
                    bound = max(tolerance or 0.0, c["collage"]["error_vs_int8_reference"])
                    kept_to = [p for p in ok if c[p]["error_vs_int8_reference"] <= bound]
                    if kept_to:
                        w = min(c[p]["ms"] for p in kept_to) / c["collage"]["ms"]
                        within.append(w)
                        within_ratio = f"{w:.2f}x"
                widest = max((spread(e) for e in c.values() if e.get("status") == "ok"), default=0)
                kept = row.get("kept", "")
                if kept.startswith("op-level"):
                    kept += ": " + row.get("placement", "").replace("(op-level): ", "")[:60]
                lines.append(f"| {workload} | {method} | {cell('collage')} | {cell('onnxruntime')} | "
                             f"{cell('openvino_default')} | {ratio} | {within_ratio} | "
                             f"{widest:.0%} | {kept} |")
        failures = sorted({f"{label}: {e['detail'].splitlines()[-1][:160]}"
                           for methods in results["workloads"].values()
                           for per_threads in methods.values()
                           for label, e in per_threads.get(str(threads), {}).get("contenders", {}).items()
                           if e.get("status") == "failed" and e.get("detail")})
        if failures:
            lines += ["", "Failures: " + "; ".join(failures)]
        if ratios:
            lines += ["", f"Geometric mean of the ratios: {geometric_mean(ratios):.2f}x over "
                      f"{len(ratios)} rows, {sum(r >= 1.0 for r in ratios)} at least 1.0x; within "
                      f"tolerance: {geometric_mean(within):.2f}x over {len(within)} rows, "
                      f"{sum(r >= 1.0 for r in within)} at least 1.0x."]
        lines.append("")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--models", default=MODELS)
    parser.add_argument("--methods", default=METHODS)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds, after one warm-up round")
    parser.add_argument("--python", default=os.path.join(ROOT, "bench", ".venv", "bin", "python"),
                        help="the Python with ONNX Runtime and OpenVINO (bench/compare/setup.sh)")
    parser.add_argument("--precision", default="auto", choices=["fp32", "bf16", "auto"],
                        help="collage optimize's --precision (auto: float parts in bf16 where it "
                             "measures faster and the outputs stay within --tolerance)")
    parser.add_argument("--tolerance", type=float, default=1e-2)
    parser.add_argument("--results", default=os.path.join(HERE, "..", "results"))
    parser.add_argument("--cost-db", default="", help="default: RESULTS/costs.sqlite")
    parser.add_argument("--name", default="quantized")
    parser.add_argument("--render", action="store_true",
                        help="write RESULTS/NAME.md from RESULTS/NAME.json, measuring nothing")
    parser.add_argument("--update", action="store_true",
                        help="re-measure only the given models and methods into RESULTS/NAME.json, "
                             "keeping its other rows (each row is measured side by side on its own)")
    args = parser.parse_args()
    if args.render:
        compare.render(args.results, args.name, markdown)
        return
    args.threads = [int(t) for t in args.threads.split(",")]
    collage = os.path.abspath(os.path.join(args.build, "collage"))
    args.quantizer = os.path.abspath(os.path.join(args.build, "quantenv", "bin", "python"))
    if not os.path.exists(args.quantizer):
        sys.exit(f"{args.quantizer} not found: run scripts/install_quantizer.sh {args.build}")
    args.torch_cases = os.path.abspath(os.path.join(args.build, "conformance_cases", "torch"))
    os.makedirs(args.results, exist_ok=True)
    args.cost_db = args.cost_db or os.path.join(args.results, "costs.sqlite")
    precision = compare.run([args.python, "-c",
                             "import openvino as ov; print(ov.Core().get_property('CPU', "
                             "'INFERENCE_PRECISION_HINT').get_type_name())"]).strip()
    results = {"date": time.strftime("%Y-%m-%d"), "machine": compare.machine(),
               "versions": {k: v for k, v in compare.versions(args.python).items()
                            if k in ("onnxruntime", "openvino")},
               "openvino_precision": precision, "collage_precision": args.precision,
               "collage_tolerance": args.tolerance, "threads": args.threads, "rounds": args.rounds,
               "workloads": {}}
    json_path = os.path.join(args.results, args.name + ".json")
    if args.update and os.path.exists(json_path):
        with open(json_path) as f:
            earlier = json.load(f)
        results["workloads"] = earlier["workloads"]
        results["threads"] = sorted(set(earlier["threads"]) | set(args.threads))
    with tempfile.TemporaryDirectory() as folder:
        for name in args.models.split(","):
            workload = compare.Workload(collage, name, folder, args.torch_cases)
            float_reference = outputs_of_run(collage, workload, folder)
            compare.log(f"{name}:")
            results["workloads"].setdefault(name, {})
            for method in args.methods.split(","):
                if method.startswith("static") and name in STATIC_BROKEN:
                    continue
                try:
                    # Per thread count: --update at one count keeps the others' rows.
                    results["workloads"][name].setdefault(method, {}).update(compare_quantized(
                        args, collage, workload, method, folder, float_reference))
                except (RuntimeError, subprocess.CalledProcessError) as error:
                    compare.log(f"  {method}: failed: {failure_text(error)}")
                    results["workloads"][name][method] = {"failed": failure_text(error)}
                with open(json_path, "w") as f:  # kept up to date: a long run can be read midway
                    json.dump(results, f, indent=1)
    text = markdown(results)
    with open(os.path.join(args.results, args.name + ".md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
