#!/usr/bin/env python3
"""One other runtime holding one ONNX model, timed on request.

    peer_worker.py RUNTIME MODEL.onnx INPUTS.npz THREADS OUTPUTS.npz

RUNTIME is onnxruntime, openvino (float32 pinned), openvino_default (its own default
precision), tvm, pytorch, or collage_onnxruntime / collage_openvino (collage's Python package
running the whole model on that engine, imported from the build: the driver puts BUILD/python
on PYTHONPATH). The worker loads and compiles the model
with THREADS threads, runs it once on INPUTS.npz and writes the outputs to OUTPUTS.npz (for
the driver to check against collage's), prints "ready SECONDS" (the set-up time), then
answers each line "time N" on stdin with one line of JSON: the N latencies in ms. Any
failure prints "error MESSAGE" and exits 1. TVM reads its thread count from the
environment (TVM_NUM_THREADS), which the driver sets.
"""
import json
import os
import sys
import time

import numpy as np


def onnxruntime_runner(model_path, inputs, threads):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    session = ort.InferenceSession(model_path, options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return lambda: dict(zip(names, session.run(names, inputs)))


def openvino_runner(model_path, inputs, threads):
    import openvino as ov

    # float32 as the model says: on a CPU with AVX-512 BF16 or AMX the plug-in otherwise
    # computes in bfloat16, whose outputs miss the comparison's tolerance.
    compiled = ov.Core().compile_model(
        model_path, "CPU", {"INFERENCE_NUM_THREADS": threads, "PERFORMANCE_HINT": "LATENCY",
                            "INFERENCE_PRECISION_HINT": "f32"})
    request = compiled.create_infer_request()

    def run():
        results = request.infer(inputs)
        return {out.get_any_name(): np.array(results[out]) for out in compiled.outputs}

    return run


def openvino_default_runner(model_path, inputs, threads):
    """OpenVINO as a user gets it: no precision hint (bf16 where the CPU has it), the thread
    count and the latency hint only."""
    import openvino as ov

    compiled = ov.Core().compile_model(
        model_path, "CPU", {"INFERENCE_NUM_THREADS": threads, "PERFORMANCE_HINT": "LATENCY"})
    request = compiled.create_infer_request()

    def run():
        results = request.infer(inputs)
        return {out.get_any_name(): np.array(results[out]) for out in compiled.outputs}

    return run


def tvm_runner(model_path, inputs, threads):
    import onnx
    import tvm
    from tvm import relax
    from tvm.relax.frontend.onnx import from_onnx
    from tvm.target import codegen

    model = onnx.load(model_path)
    names = [o.name for o in model.graph.output]
    # Compiled once per model (minutes for the large ones), then loaded for each thread
    # count: the thread count is the runtime's (TVM_NUM_THREADS), not the code's.
    library = model_path + ".tvm.so"
    if not os.path.exists(library):
        module = from_onnx(model, keep_params_in_input=False)
        module = relax.transform.DecomposeOpsForInference()(module)
        # The default build, no tuning: TVM's own schedules for this CPU.
        target = tvm.target.Target({"kind": "llvm", "mcpu": codegen.llvm_get_system_cpu()})
        tvm.compile(module, target=target).export_library(library)
    vm = relax.VirtualMachine(tvm.runtime.load_module(library), tvm.cpu())
    args = [tvm.runtime.tensor(inputs[i.name]) for i in model.graph.input if i.name in inputs]

    def run():
        result = vm["main"](*args)
        results = [result] if hasattr(result, "numpy") else list(result)
        return {name: r.numpy() for name, r in zip(names, results)}

    return run


def pytorch_runner(model_path, inputs, threads):
    # The same ONNX file as a torch.fx module (onnx2torch), run eagerly.
    import onnx
    import torch
    from onnx2torch import convert

    torch.set_num_threads(threads)
    model = onnx.load(model_path)
    names = [o.name for o in model.graph.output]
    module = convert(model).eval()
    args = [torch.from_numpy(inputs[i.name]) for i in model.graph.input if i.name in inputs]

    def run():
        with torch.inference_mode():
            result = module(*args)
        results = [result] if isinstance(result, torch.Tensor) else list(result)
        return {name: r.numpy() for name, r in zip(names, results)}

    return run


def collage_runner(backend):
    """collage's Python package with `backend` for the whole model: the parity benchmark's
    collage side in a process kept warm, called from Python as the package beside it is."""

    def runner(model_path, inputs, threads):
        import collage

        session = collage.InferenceSession(model_path, threads=threads, backend=backend)
        names = [o.name for o in session.get_outputs()]
        return lambda: dict(zip(names, session.run(None, inputs)))

    return runner


RUNNERS = {
    "onnxruntime": onnxruntime_runner,
    "openvino": openvino_runner,
    "openvino_default": openvino_default_runner,
    "tvm": tvm_runner,
    "pytorch": pytorch_runner,
    "collage_onnxruntime": collage_runner("onnxruntime"),
    "collage_openvino": collage_runner("openvino"),
}


def main():
    runtime, model_path, inputs_path, threads, outputs_path = sys.argv[1:6]
    try:
        inputs = dict(np.load(inputs_path))
        start = time.monotonic()
        run = RUNNERS[runtime](model_path, inputs, int(threads))
        outputs = run()
        np.savez(outputs_path, **outputs)
        print(f"ready {time.monotonic() - start:.1f}", flush=True)
    except Exception as error:  # a runtime that cannot take the model is a result, not a crash
        message = " ".join(f"{type(error).__name__}: {error}".split())
        print(f"error {message[:300]}", flush=True)
        sys.exit(1)
    for line in sys.stdin:
        words = line.split()
        if words[:1] != ["time"]:
            break
        latencies = []
        for _ in range(int(words[1])):
            begin = time.perf_counter()
            run()
            latencies.append((time.perf_counter() - begin) * 1e3)
        print(json.dumps(latencies), flush=True)


if __name__ == "__main__":
    main()
