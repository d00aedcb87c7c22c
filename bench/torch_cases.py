"""The models PyTorch exports for the tests (scripts/export_torch_models.py), as benchmark
workloads: an ONNX file and the `--shape` arguments its dynamic dims need.

Shared by bench/cost_fidelity.py and bench/compare/compare.py. The export needs Debian's
python3-torch (`make test-deps` installs it); without it the models are skipped, saying so.
"""
import os
import subprocess

TORCH = ["resnet18", "resnet50", "mobilenet_v2", "squeezenet1_1", "densenet121", "googlenet",
         "shufflenet_v2_x1_0", "efficientnet_b0", "dcgan_generator", "transformer_encoder", "lstm"]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def torch_models(names, folder):
    """name -> (model path, ["--shape", "x=...", ...]); exported once (the script is idempotent)."""
    script = os.path.join(ROOT, "scripts", "export_torch_models.py")
    result = subprocess.run(["/usr/bin/python3", script, folder, "--only", ",".join(names)],
                            capture_output=True, text=True)
    if result.returncode != 0:
        print(f"note: the PyTorch models were skipped (export failed: {result.stderr.strip()[-300:]})")
        return {}
    models = {}
    for name in names:
        case = os.path.join(folder, name)
        shapes = []
        shapes_file = os.path.join(case, "shapes.txt")
        if os.path.exists(shapes_file):
            with open(shapes_file) as f:
                for line in f:
                    line = line.strip()
                    if line and not line.startswith("#"):
                        shapes += ["--shape", line]
        models[name] = (os.path.join(case, "model.onnx"), shapes)
    return models
