"""Cold `collage optimize` wall time with the local measurement worker and with 1, 2 and 3
Ray worker nodes (`--workers ray`), each on a fresh cost database.

On one machine this shows the mechanism, not a speed-up: the nodes share this machine's
cores, so measurements on several nodes at once disturb each other's timings and compete
for the same CPUs, and Ray adds its own processes. A speed-up needs nodes on other machines
with the same device fingerprint (README, "Fanning measurement out with Ray").

    BUILD/rayenv/bin/python bench/ray_workers.py --collage BUILD/collage [--model zoo-name]
"""

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "ray"))
from ray_cluster import Cluster  # noqa: E402

CAVEAT = ("On one machine this shows the mechanism, not a speed-up: the nodes share its cores "
          "and disturb each other's timings.")


def cpu_name():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collage", required=True)
    parser.add_argument("--model", default="dcgan", help="a built-in model (collage zoo list)")
    parser.add_argument("--max-nodes", type=int, default=3)
    args = parser.parse_args()
    python = sys.executable
    work = tempfile.mkdtemp(prefix="bray")
    cluster = Cluster(os.path.join(os.path.dirname(python), "ray"), work)
    rows = []
    try:
        model = os.path.join(work, args.model + ".onnx")
        subprocess.run([args.collage, "zoo", "export", args.model, "-o", model], check=True,
                       capture_output=True)
        resources = subprocess.run([args.collage, "ray", "resources"], check=True,
                                   capture_output=True, text=True).stdout.strip()
        resource = next(iter(json.loads(resources)))
        env = dict(os.environ, RAY_ADDRESS=cluster.address, COLLAGE_RAY_PYTHON=python)

        def cold_optimize(name, workers):
            db = os.path.join(work, name + ".sqlite")
            command = [args.collage, "optimize", model, "--cost-db", db, "--threads", "1",
                       "--no-compare", "--calibrate", "0"]
            if workers:
                command += ["--workers", workers]
            start = time.monotonic()
            result = subprocess.run(command, env=env, capture_output=True, text=True)
            wall = time.monotonic() - start
            if result.returncode != 0:
                sys.exit(f"{name}: {result.stderr}")
            measured = next((line for line in result.stdout.splitlines()
                             if line.startswith("candidates:")), "")
            rows.append((name, wall, measured))
            print(f"{name:<16} {wall:7.1f} s", flush=True)

        cold_optimize("local worker", None)
        cluster.start()
        for n in range(1, args.max_nodes + 1):
            cluster.start_node(f"node{n}", ["--address", cluster.address, "--num-cpus", "0",
                                            "--resources", resources])
            if not cluster.wait_for(python, resource, n):
                sys.exit(f"node{n} did not join the cluster")
            cold_optimize(f"ray, {n} node{'s' if n > 1 else ''}", "ray")
    finally:
        cluster.stop()
        shutil.rmtree(work, ignore_errors=True)
    print(f"\ncold optimize of {args.model} (--threads 1 --no-compare --calibrate 0), "
          f"{cpu_name()}, {os.cpu_count()} CPUs")
    print(f"{'measured by':<16} {'wall':>9}")
    for name, wall, _ in rows:
        print(f"{name:<16} {wall:7.1f} s")
    print(rows[0][2])
    print(CAVEAT)


if __name__ == "__main__":
    main()
