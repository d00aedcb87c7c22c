#!/usr/bin/python3
"""One session, input shapes that change between runs: collage against ONNX Runtime.

With --set control_flow, the models are those whose control flow or shapes their data decide
(scripts/export_torch_models.py --set control_flow: torchvision's SSDlite 320 and a small
detector with torchvision's post-processing, scripted recurrent Loops at several sequence
lengths, one filling a list), which collage runs in segments compiled per run with the
control flow between them.

Exports two models with dynamic axes with PyTorch (Debian's python3-torch): torchvision's
ResNet-18 (batch, height and width dynamic) and a two-layer Transformer encoder (batch and
sequence length dynamic). Each contender loads each model once and runs it at a sequence of
shapes; for every shape it prints

  first   the first run at that shape (collage compiles the model for it there: an import at
          the new shape, placement and compilation; ONNX Runtime re-plans its allocations)
  steady  the median, over interleaved rounds, of each round's median run at that shape (a
          round runs every contender for about 150 ms, in an order that rotates)

and the paired ratios collage / ONNX Runtime, with the spread of the steady ratio over the
rounds (min–max). Outputs are compared with ONNX Runtime's at every shape (max |a - b| /
max |ort|). collage runs each model on one backend (a session that compiles per run cannot
be optimized: the search measures one graph).

    bench/dynamic_shapes.py [--build build] [--threads 2] [--rounds 7]
                            [--backends onednn,onnxruntime] [--set shapes|control_flow]

Needs the collage Python module (build/python, built by `make test`) and ONNX Runtime
(build/engines, installed by `make build`).
"""
import argparse
import glob
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROUND_MS = 150.0


def export_models(folder):
    import torch
    import torchvision

    torch.manual_seed(0)
    cnn = torchvision.models.resnet18().eval()
    cnn_path = os.path.join(folder, "resnet18_dynamic.onnx")
    torch.onnx.export(cnn, torch.randn(1, 3, 224, 224), cnn_path, opset_version=13,
                      input_names=["image"], output_names=["logits"],
                      dynamic_axes={"image": {0: "batch", 2: "height", 3: "width"},
                                    "logits": {0: "batch"}})
    layer = torch.nn.TransformerEncoderLayer(d_model=128, nhead=4, dim_feedforward=256,
                                             dropout=0.0, batch_first=True)
    encoder = torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False).eval()
    encoder_path = os.path.join(folder, "transformer_encoder_dynamic.onnx")
    # Traced with gradients on: PyTorch's fused inference kernel, which the exporter cannot
    # trace, is used only without them.
    torch.onnx.export(encoder, torch.randn(1, 16, 128), encoder_path, opset_version=14,
                      input_names=["tokens"], output_names=["encoded"],
                      dynamic_axes={"tokens": {0: "batch", 1: "sequence"},
                                    "encoded": {0: "batch", 1: "sequence"}})
    return [
        ("resnet18", cnn_path, "image",
         [(1, 3, 224, 224), (1, 3, 160, 240), (2, 3, 128, 128), (1, 3, 224, 224)]),
        ("transformer_encoder", encoder_path, "tokens",
         [(1, 16, 128), (1, 64, 128), (4, 32, 128), (1, 16, 128)]),
    ]


def export_control_flow_models(folder):
    script = os.path.join(HERE, "..", "scripts", "export_torch_models.py")
    subprocess.run([sys.executable, script, folder, "--set", "control_flow"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return [
        ("ssdlite320", os.path.join(folder, "ssdlite320", "model.onnx"), "input",
         [(1, 3, 320, 320), (1, 3, 320, 320)]),
        ("tiny_detector", os.path.join(folder, "tiny_detector", "model.onnx"), "input",
         [(1, 3, 128, 128), (1, 3, 128, 128)]),
        ("recurrent_loop", os.path.join(folder, "recurrent_loop", "model.onnx"), "input",
         [(7, 16), (64, 16), (7, 16)]),
        ("recurrent_list", os.path.join(folder, "recurrent_list", "model.onnx"), "input",
         [(5, 16), (64, 16)]),
    ]


def max_error(outputs, reference):
    """The largest of each output's max |a - b| / max |reference|."""
    worst = 0.0
    for got, want in zip(outputs, reference):
        if got.shape != want.shape:
            return float("inf")
        scale = max(float(np.max(np.abs(want))) if want.size else 0.0, 1e-30)
        if want.size:
            worst = max(worst, float(np.max(np.abs(got.astype(np.float64) - want))) / scale)
    return worst


def timed(run):
    start = time.perf_counter()
    out = run()
    return (time.perf_counter() - start) * 1e3, out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--backends", default="onednn,onnxruntime")
    parser.add_argument("--set", choices=["shapes", "control_flow"], default="shapes")
    args = parser.parse_args()
    sys.path.insert(0, os.path.join(args.build, "python"))
    sys.path[1:1] = glob.glob(os.path.join(args.build, "engines", "lib", "python3*", "site-packages"))
    import collage
    import onnxruntime as ort

    print(f"collage {collage.__version__ if hasattr(collage, '__version__') else ''}, "
          f"ONNX Runtime {ort.__version__}, {args.threads} threads, {args.rounds} rounds")
    with tempfile.TemporaryDirectory() as folder:
        models = export_models(folder) if args.set == "shapes" else export_control_flow_models(folder)
        for name, path, input_name, shapes in models:
            options = ort.SessionOptions()
            options.intra_op_num_threads = args.threads
            contenders = {"onnxruntime": ort.InferenceSession(path, options,
                                                              providers=["CPUExecutionProvider"])}
            for backend in args.backends.split(","):
                contenders[f"collage:{backend}"] = collage.InferenceSession(
                    path, threads=args.threads, backend=backend)
            print(f"\n{name}")
            print(f"{'shape':>16} {'contender':>20} {'first ms':>9} {'steady ms':>10} "
                  f"{'first/ORT':>9} {'steady/ORT':>10} {'spread':>13} {'max err':>8}")
            rng = np.random.default_rng(0)
            seen = set()
            for shape in shapes:
                x = rng.standard_normal(shape, dtype=np.float32)
                first, outputs = {}, {}
                for label, session in contenders.items():
                    first[label], out = timed(lambda: session.run(None, {input_name: x}))
                    outputs[label] = out
                # A round's figure is the median of enough runs to last about ROUND_MS, so
                # that one slow run (the machine's noise) does not decide it.
                repeats = {}
                for label, session in contenders.items():
                    warm = statistics.median(
                        timed(lambda: session.run(None, {input_name: x}))[0] for _ in range(3))
                    repeats[label] = max(1, min(200, int(ROUND_MS / max(warm, 1e-3))))
                rounds = {label: [] for label in contenders}
                labels = list(contenders)
                for r in range(args.rounds):
                    for label in labels[r % len(labels):] + labels[:r % len(labels)]:
                        runs = [timed(lambda: contenders[label].run(None, {input_name: x}))[0]
                                for _ in range(repeats[label])]
                        rounds[label].append(statistics.median(runs))
                reference = outputs["onnxruntime"]
                again = " (again)" if shape in seen else ""
                seen.add(shape)
                for label in labels:
                    steady = statistics.median(rounds[label])
                    ratios = [a / b for a, b in zip(rounds[label], rounds["onnxruntime"])]
                    error = max_error(outputs[label], reference)
                    print(f"{'x'.join(map(str, shape)) + again:>16} {label:>20} "
                          f"{first[label]:9.1f} {steady:10.2f} "
                          f"{first[label] / first['onnxruntime']:9.2f} "
                          f"{statistics.median(ratios):10.2f} "
                          f"{min(ratios):6.2f}–{max(ratios):<6.2f} {error:8.1e}")
            for label, session in contenders.items():
                if label.startswith("collage:"):
                    print(f"{label}: {session.num_compiled_shapes()} shapes compiled and kept")


if __name__ == "__main__":
    main()
