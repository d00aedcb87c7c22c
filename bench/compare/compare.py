#!/usr/bin/env python3
"""collage against other runtimes on the zoo's workloads, measured side by side.

For each workload (exported from the zoo to ONNX, or `torch:NAME`, one of the models PyTorch
exports for the tests) and each thread count: collage optimizes it three ways on one cost
database and saves each plan — `collage optimize` as a user runs it (the op-level search,
calibrated, then the end-to-end decision: the headline), the op-level search's own plan
(`--no-compare`) and the two-level search (unless --no-two-level). Every contender runs once
on the same seeded inputs and its outputs are checked against collage's own reference run
(collage's reference kernels); then all contenders that passed are timed in interleaved
rounds — collage's plans, collage on each backend alone, ONNX Runtime, OpenVINO, TVM and
PyTorch, each with the same thread count. The first round is a warm-up and does not count;
in every round each contender gets a warm-up run before its timed ones (collage's are fresh
processes; the others' workers just ran someone else). A contender's figure is the median of
its per-round medians; the headline ratio is the median over rounds of the faster other
runtime's time in that round over collage's, printed with its range; beside it, the share of
the CPU's float32 peak that collage's plan reached (`collage bench`'s `compute`). Writes
RESULTS/compare.json, RESULTS/compare.md and RESULTS/compare.png.

    compare.py [--build build] [--models resnet50,torch:lstm,...|torch] [--threads 1,2]
               [--rounds 3] [--two-level-budget 30] [--results bench/results]
               [--name compare] [--peers onnxruntime,...] [--exclude-backends openvino,...]
               [--no-singles] [--no-two-level]

`--exclude-backends` leaves backends out of collage's searches and of its single-backend
contenders: `--exclude-backends onnxruntime,openvino` measures what collage's own library
backends reach against those runtimes. `--name` names the result files (RESULTS/NAME.json,
.md, .png), so that such a run keeps the main comparison's.
"""
import argparse
import json
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import report

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from torch_cases import TORCH, torch_models  # noqa: E402 (bench/torch_cases.py)

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = "resnet50,resnext50,mobilenetv2,nasnet_a,resnet3d50,dcgan,nasrnn,bert_base,gpt2"
PEERS = ["onnxruntime", "openvino", "tvm", "pytorch"]
TOLERANCE = 1e-3  # normalized: max|a - b| / max(1, max|reference|), as collage's tests
ROUND_SECONDS = 1.0  # the iterations of one round take about this long
SLOW_RUN_SECONDS = 5.0  # a contender this slow (and 10x the fastest) is timed once, not every round
PEER_SETUP_TIMEOUT = 900
SETTLE_SECONDS = 0.3  # idle pause before each contender's round (see measure)
DECISION_ROUNDS = 5  # least interleaved rounds of the two-level optimize's end-to-end decision
# collage's plans, by contender label: how each is optimized (see optimize).
OPTIMIZES = {"collage": "default", "collage op-level": "op-level", "collage two-level": "two-level"}


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def run(cmd, **kwargs):
    result = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({result.returncode}):\n{result.stdout[-2000:]}\n"
                           f"{result.stderr[-2000:]}")
    return result.stdout


def normalized_error(actual, expected):
    if actual.shape != expected.shape:
        return float("inf")
    scale = max(1.0, float(np.max(np.abs(expected))) if expected.size else 1.0)
    return float(np.max(np.abs(actual.astype(np.float64) - expected))) / scale if expected.size else 0.0


def collage_run_outputs(collage, workload, folder, extra=()):
    """The outputs of `collage run` on the workload's inputs (`extra`: its placement, threads),
    by output name: read from the .pb files, which keep the name that a .npy file's name may
    not ("gpu_0/softmax_1" is saved as gpu_0_softmax_1)."""
    from onnx import TensorProto, numpy_helper

    out_dir = tempfile.mkdtemp(dir=folder)
    run([collage, "run", workload.path, *workload.input_args, "--output-dir", out_dir, *extra])
    outputs = {}
    for file in os.listdir(out_dir):
        if file.endswith(".pb"):
            tensor = TensorProto()
            with open(os.path.join(out_dir, file), "rb") as f:
                tensor.ParseFromString(f.read())
            outputs[tensor.name] = numpy_helper.to_array(tensor)
    return outputs


def worst_error(outputs, reference):
    if set(outputs) != set(reference):
        return float("inf")
    return max(normalized_error(outputs[name], reference[name]) for name in reference)


class Workload:
    """One model as an ONNX file with seeded inputs (one .npy each, and all in a .npz): a zoo
    workload, `torch:NAME` (its dynamic dims fixed as the test data has them), or a FILE.onnx
    of the user's (every dim fixed in the file)."""

    def __init__(self, collage, name, folder, torch_folder):
        import onnx

        self.name = name
        self.shape_args = []  # --shape NAME=AxB for optimize (run and bench take --input)
        if name.startswith("torch:"):
            exported = torch_models([name[len("torch:"):]], torch_folder)
            if not exported:
                raise RuntimeError(f"{name}: the PyTorch export failed")
            self.path, self.shape_args = next(iter(exported.values()))
        elif name.endswith(".onnx"):
            self.path = os.path.abspath(name)
        else:
            self.path = os.path.join(folder, name + ".onnx")
            run([collage, "zoo", "export", name, "-o", self.path])
        fixed = dict(arg.split("=", 1) for arg in self.shape_args if arg != "--shape")
        graph = onnx.load(self.path, load_external_data=False).graph
        initializers = {i.name for i in graph.initializer}
        rng = np.random.default_rng(2022)
        self.inputs = {}
        # A file-name part: a user's file by its name without the folder.
        self.stem = os.path.basename(name)[:-len(".onnx")] if name.endswith(".onnx") else name.replace(":", "_")
        for value in graph.input:
            if value.name in initializers:
                continue
            shape = [d.dim_value for d in value.type.tensor_type.shape.dim]
            if value.name in fixed:
                shape = [int(d) for d in fixed[value.name].split("x")]
            if any(d <= 0 for d in shape):
                raise RuntimeError(f"{name}: input {value.name} has a dimension not fixed in the file "
                                   f"({shape}, 0 = not fixed); the comparison needs every input's shape")
            if value.type.tensor_type.elem_type == onnx.TensorProto.INT64:
                # token ids: valid in every zoo vocabulary
                self.inputs[value.name] = rng.integers(0, 1000, shape).astype(np.int64)
            else:
                self.inputs[value.name] = rng.standard_normal(shape).astype(np.float32)
        self.npz = os.path.join(folder, self.stem + ".inputs.npz")
        np.savez(self.npz, **self.inputs)
        self.input_args = []
        for input_name, data in self.inputs.items():
            # Input names may hold a "/" (Caffe2's exports: "gpu_0/data_0"): not in a file's name.
            npy = os.path.join(folder, f"{self.stem}.{re.sub(r'[^A-Za-z0-9_.-]', '_', input_name)}.npy")
            np.save(npy, data)
            self.input_args += ["--input", f"{input_name}={npy}"]


class CollageContender:
    """collage on one plan or one backend alone: checked by `collage run`, timed by `collage bench`."""

    def __init__(self, label, collage, workload, threads, placement_args):
        self.label = label
        self.collage = collage
        self.workload = workload
        self.threads = threads
        self.placement_args = placement_args
        self.compute = None  # the model's GFLOP per run and the CPU's float32 peak, once timed

    def outputs(self, folder):
        return collage_run_outputs(self.collage, self.workload, folder,
                                   ["--threads", str(self.threads), *self.placement_args])

    def time(self, iterations, warmup):
        # Each call is a fresh process (load, compile): one warm-up run at least.
        with tempfile.TemporaryDirectory() as folder:
            figures_path = os.path.join(folder, "bench.json")
            run([self.collage, "bench", self.workload.path, *self.workload.input_args, "--threads",
                 str(self.threads), "--warmup", str(max(1, warmup)), "--iterations", str(iterations),
                 "--json", figures_path, *self.placement_args])
            with open(figures_path) as f:
                figures = json.load(f)
        compute = figures.get("compute")
        if compute and compute.get("fp32_peak_gflops"):
            # The CPU's peak, measured by each bench after its runs: the best of them (another
            # process only ever lowers it).
            best = self.compute["fp32_peak_gflops"] if self.compute else 0
            self.compute = {"gflop_per_run": compute["gflop_per_run"], "peak_isa": compute["peak_isa"],
                            "fp32_peak_gflops": max(best, compute["fp32_peak_gflops"])}
        return figures["latency_ms"]["p50"]

    def close(self):
        pass


class PeerContender:
    """Another runtime in its own process (peer_worker.py), the model loaded once."""

    def __init__(self, runtime, python, workload, threads, folder):
        self.label = runtime
        self.outputs_path = os.path.join(folder, f"{workload.stem}.{runtime}.{threads}.npz")
        env = dict(os.environ, TVM_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
        self.process = subprocess.Popen(
            [python, os.path.join(HERE, "peer_worker.py"), runtime, workload.path, workload.npz,
             str(threads), self.outputs_path],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        self.setup_seconds = None

    def wait_ready(self):
        import selectors

        selector = selectors.DefaultSelector()
        selector.register(self.process.stdout, selectors.EVENT_READ)
        if not selector.select(PEER_SETUP_TIMEOUT):
            self.close()
            raise RuntimeError(f"set-up took longer than {PEER_SETUP_TIMEOUT} s")
        line = self.process.stdout.readline().strip()
        if not line.startswith("ready "):
            self.close()
            raise RuntimeError(line[len("error "):] if line.startswith("error ") else f"worker exited: {line!r}")
        self.setup_seconds = float(line.split()[1])

    def outputs(self, folder):
        return dict(np.load(self.outputs_path))

    def time(self, iterations, warmup):
        if warmup:
            self._request(warmup)
        return statistics.median(self._request(iterations))

    def _request(self, iterations):
        self.process.stdin.write(f"time {iterations}\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("worker exited while timing")
        return json.loads(line)

    def close(self):
        if self.process.poll() is None:
            try:
                self.process.stdin.close()
                self.process.wait(timeout=30)
            except (subprocess.TimeoutExpired, BrokenPipeError):
                self.process.kill()


def optimize(collage, workload, threads, db, folder, budget, backends, two_level):
    """Saves collage's plans (OPTIMIZES, two-level only when asked); returns their paths by
    contender label and the searches' notes by search ("default", "op-level", "two-level")."""
    notes = {}
    plans = {}
    for label, search in OPTIMIZES.items():
        if search == "two-level" and not two_level:
            continue
        plan = os.path.join(folder, f"{workload.stem}.{threads}.{search}.plan.json")
        cmd = [collage, "optimize", workload.path, *workload.shape_args, "--threads", str(threads),
               "--cost-db", db, "--save-plan", plan, "--backends", ",".join(backends)]
        if search == "two-level":
            # What a user of `optimize --search two-level` gets: the search, then the end-to-end
            # decision between its best, the op-level plan and every backend alone.
            cmd += ["--search", "two-level", "--budget", f"{budget}s", "--rounds", str(DECISION_ROUNDS)]
        elif search == "op-level":
            cmd += ["--no-compare"]  # the op-level search's own plan
        # else "default": `collage optimize` as it comes (the op-level search, then the decision)
        start = time.monotonic()
        out = run(cmd)
        notes[search] = {"seconds": round(time.monotonic() - start, 1),
                         "placement": next((line.split(" ", 1)[1] for line in out.splitlines()
                                            if line.startswith("placement (")), "")}
        plans[label] = plan
    return plans, notes


def measure(contenders, rounds):
    """A warm-up round, then `rounds` interleaved rounds over the contenders; returns label ->
    median of its round medians (ms), the rounds' figures and the warm-up's."""
    warmup_ms = {}
    iterations = {}
    for c in contenders:  # the warm-up round: 2 runs each, which set how many fill a round
        time.sleep(SETTLE_SECONDS)
        warmup_ms[c.label] = c.time(2, warmup=1)
        iterations[c.label] = max(1, min(20, int(ROUND_SECONDS / max(warmup_ms[c.label], 1e-3) * 1e3)))
    fastest = min(warmup_ms.values())
    # TVM's untuned schedules can take a minute per run of a large model: its warm-up is its
    # figure (it is not close to the others), and the rounds go on without it.
    slow = {label for label, ms in warmup_ms.items() if ms > 1e3 * SLOW_RUN_SECONDS and ms > 10 * fastest}
    rounded = [c for c in contenders if c.label not in slow]
    per_round = {c.label: [] for c in rounded}
    log("    warm-up: " + ", ".join(f"{label} {ms:.2f}" for label, ms in warmup_ms.items()))
    for r in range(1, rounds + 1):
        # A new order every round, so that no contender always follows the same one, and a
        # pause before each: a runtime's workers may go on spinning for a while after its
        # last run (ONNX Runtime's do by default), taking the cores from whoever runs next.
        # One warm-up run each, every round: collage's `bench` is a fresh process (load,
        # compile), and the others' workers meet caches that someone else's run refilled.
        order = list(rounded)
        random.Random(r).shuffle(order)
        for c in order:
            time.sleep(SETTLE_SECONDS)
            per_round[c.label].append(c.time(iterations[c.label], warmup=1))
        log(f"    round {r}/{rounds}: " +
            ", ".join(f"{c.label} {per_round[c.label][-1]:.2f}" for c in rounded))
    timings = {label: {"ms": statistics.median(v), "rounds_ms": v, "warmup_ms": warmup_ms[label],
                       "timed_once": False} for label, v in per_round.items()}
    timings.update({label: {"ms": warmup_ms[label], "rounds_ms": [], "warmup_ms": warmup_ms[label],
                            "timed_once": True} for label in slow})
    for c in contenders:
        if getattr(c, "compute", None):
            timings[c.label]["compute"] = c.compute
    return timings


def registered_backends(collage):
    """The backends of this build, as `collage backends` lists them (not those it did not build)."""
    lines = run([collage, "backends"]).splitlines()[1:]
    # A line that starts with a space goes on with the line above (a long version, wrapped).
    return [line.split()[0] for line in lines
            if line.strip() and not line[0].isspace() and "not built:" not in line]


def compare_workload(args, collage, name, folder, db):
    workload = Workload(collage, name, folder, args.torch_cases)
    log(f"{name}:")
    # The reference kernels (native alone) give the outputs every contender is checked against.
    reference = collage_run_outputs(collage, workload, folder)
    result = {}
    backends = [b for b in registered_backends(collage) if b not in args.exclude_backends]
    for threads in args.threads:
        plans, notes = optimize(collage, workload, threads, db, folder, args.two_level_budget, backends,
                                not args.no_two_level)
        log(f"  {threads} thread(s): " + ", ".join(f"{search} {note['seconds']} s" for search, note in notes.items()))
        entries = {}
        contenders = [CollageContender(label, collage, workload, threads, ["--plan", plan])
                      for label, plan in plans.items()]
        if not args.no_singles:
            contenders += [CollageContender(f"collage {b}", collage, workload, threads, ["--backend", b])
                           for b in backends]
        peers = [PeerContender(p, args.python, workload, threads, folder) for p in args.peers]
        for peer in peers:
            try:
                peer.wait_ready()
            except RuntimeError as error:
                entries[peer.label] = {"status": "failed", "detail": str(error)}
                log(f"    {peer.label}: failed: {error}")
        checked = []
        for c in contenders + [p for p in peers if p.label not in entries]:
            error = worst_error(c.outputs(folder), reference)
            if error <= TOLERANCE:
                checked.append(c)
                entries[c.label] = {"status": "ok", "error": error}
            else:
                entries[c.label] = {"status": "wrong outputs", "error": error}
                log(f"    {c.label}: outputs differ from collage's by {error:.2e}; not timed")
            if isinstance(c, PeerContender):
                entries[c.label]["setup_s"] = c.setup_seconds
        for label, timing in measure(checked, args.rounds).items():
            entries[label].update(timing)
        for p in peers:
            p.close()
        result[str(threads)] = {"contenders": entries, "search": notes}
    return result


def render(results_dir, name, markdown):
    """Writes RESULTS/NAME.md from RESULTS/NAME.json with `markdown` (a benchmark's own), measuring
    nothing, and prints it: a table re-rendered after its format changed."""
    with open(os.path.join(results_dir, name + ".json")) as f:
        text = markdown(json.load(f))
    with open(os.path.join(results_dir, name + ".md"), "w") as f:
        f.write(text)
    print(text)


def machine():
    model = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                  if line.startswith("model name")), platform.processor())
    flags = next((line.split(":", 1)[1].split() for line in open("/proc/cpuinfo")
                  if line.startswith("flags")), [])
    vector = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "SSE"
    return f"{model}, {os.cpu_count()} vCPUs, {vector}, {platform.system()} {platform.release()}"


def versions(python):
    code = ("import importlib.metadata as m\n"
            "for p in ['onnxruntime','openvino','apache-tvm','torch','onnx2torch']:\n"
            "    try: print(p, m.version(p))\n"
            "    except Exception: print(p, 'missing')\n")
    return dict(line.split() for line in run([python, "-c", code]).splitlines())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--models", default=MODELS,
                        help="zoo workloads, torch:NAME models and FILE.onnx files (fixed shapes), "
                             "comma-separated; `torch` for all of PyTorch's (" + ",".join(TORCH) + ")")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds, after one warm-up round")
    parser.add_argument("--two-level-budget", type=float, default=30)
    parser.add_argument("--peers", default=",".join(PEERS))
    parser.add_argument("--python", default=sys.executable, help="the Python with the other runtimes")
    parser.add_argument("--results", default=os.path.join(HERE, "..", "results"))
    parser.add_argument("--cost-db", default="", help="default: RESULTS/costs.sqlite (kept between runs)")
    parser.add_argument("--torch-cases", default="",
                        help="where the PyTorch models are exported (default: BUILD/conformance_cases/torch, "
                             "where the tests keep them)")
    parser.add_argument("--exclude-backends", default="",
                        help="backends collage may not use (searches and single-backend contenders)")
    parser.add_argument("--name", default="compare", help="result files: RESULTS/NAME.json, .md, .png")
    parser.add_argument("--no-singles", action="store_true",
                        help="time collage's plans only, not collage on each backend alone (the end-to-end "
                             "decision of `collage optimize` still compares them)")
    parser.add_argument("--no-two-level", action="store_true",
                        help="skip the two-level search's plan (its optimize takes --two-level-budget and more)")
    parser.add_argument("--update", action="store_true",
                        help="keep RESULTS/compare.json's other workloads; measure and replace only --models")
    args = parser.parse_args()
    args.threads = [int(t) for t in args.threads.split(",")]
    args.peers = [p for p in args.peers.split(",") if p]
    args.exclude_backends = {b for b in args.exclude_backends.split(",") if b}
    if "native" in args.exclude_backends:
        sys.exit("native cannot be excluded: it runs what no other backend takes")
    models = []
    for item in args.models.split(","):
        models += [f"torch:{n}" for n in TORCH] if item == "torch" else [item] if item else []
    collage = os.path.abspath(os.path.join(args.build, "collage"))
    args.torch_cases = os.path.abspath(args.torch_cases or os.path.join(args.build, "conformance_cases", "torch"))
    os.makedirs(args.results, exist_ok=True)
    db = args.cost_db or os.path.join(args.results, "costs.sqlite")

    results = {"date": time.strftime("%Y-%m-%d"), "machine": machine(), "versions": versions(args.python),
               "threads": args.threads, "rounds": args.rounds, "warmup_round": True,
               "headline": "collage", "two_level_budget_s": args.two_level_budget,
               "tolerance": TOLERANCE, "excluded_backends": sorted(args.exclude_backends), "workloads": {}}
    json_path = os.path.join(args.results, args.name + ".json")
    if args.update and os.path.exists(json_path):
        with open(json_path) as f:
            previous = json.load(f)
        if (previous.get("threads") != args.threads or previous.get("machine") != results["machine"]
                or previous.get("excluded_backends", []) != results["excluded_backends"]
                or previous.get("headline") != results["headline"]):
            sys.exit(f"{json_path} was measured with other threads, backends, method or on another "
                     "machine; run without --update")
        results["workloads"] = previous["workloads"]
    with tempfile.TemporaryDirectory() as folder:
        for name in models:
            results["workloads"][name] = compare_workload(args, collage, name, folder, db)
            order = MODELS.split(",") + [f"torch:{n}" for n in TORCH]
            results["workloads"] = {n: results["workloads"][n] for n in order + sorted(results["workloads"])
                                    if n in results["workloads"]}
            with open(json_path, "w") as f:  # kept up to date: a long run can be read midway
                json.dump(results, f, indent=1)
    markdown = report.markdown(results)
    with open(os.path.join(args.results, args.name + ".md"), "w") as f:
        f.write(markdown)
    report.chart(results, os.path.join(args.results, args.name + ".png"))
    print(markdown)


if __name__ == "__main__":
    main()
