"""A Ray cluster on this machine for the tests and the benchmark of `--workers ray`
(tests/ray/ray_workers_test.py, bench/ray_workers.py).

Each node runs `ray start --block` in a session of its own, so that killing a node or the
cluster means killing the processes of those sessions (Ray's workers among them), never
another Ray on this machine.
"""

import os
import signal
import socket
import subprocess
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def session_processes(sid):
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid:  # after ")": state, ppid, pgrp, session
            pids.append(int(entry))
    return pids


class Cluster:
    """A head and worker nodes, each `ray start --block` in a session of its own."""

    def __init__(self, ray, work):
        self.ray = ray
        self.work = work
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.nodes = {}  # name -> Popen

    def start_node(self, name, args, env=None):
        log = open(os.path.join(self.work, f"{name}.log"), "w")
        command = [self.ray, "start", "--block", "--disable-usage-stats",
                   "--object-store-memory", str(200 * 1000 * 1000)] + args
        self.nodes[name] = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                            start_new_session=True, env=env)

    def start(self):
        env = dict(os.environ)
        # A node that dies is noticed in about 3 s instead of Ray's default 15 or more.
        env.update(RAY_health_check_period_ms="1000", RAY_health_check_timeout_ms="1000",
                   RAY_health_check_failure_threshold="3")
        self.start_node("head", ["--head", "--port", str(self.port), "--num-cpus", "1",
                                 "--include-dashboard=false",
                                 "--temp-dir", os.path.join(self.work, "ray")], env)

    def runs(self, name, text):
        """Whether a process of node `name` has `text` in its command line."""
        for pid in session_processes(self.nodes[name].pid):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if text.encode() in f.read():
                        return True
            except OSError:
                continue
        return False

    def kill(self, name):
        process = self.nodes.pop(name)
        for pid in session_processes(process.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        process.wait()

    def stop(self):
        for name in list(self.nodes)[::-1]:
            self.kill(name)

    def wait_for(self, python, resource, count, timeout=60):
        """Until `count` alive nodes offer `resource` (Ray's own view)."""
        script = (
            "import sys, time, ray\n"
            "ray.init(address=sys.argv[1], logging_level='error')\n"
            "end = time.time() + float(sys.argv[4])\n"
            "while time.time() < end:\n"
            "    n = sum(1 for x in ray.nodes() if x['Alive'] and x['Resources'].get(sys.argv[2]))\n"
            "    if n == int(sys.argv[3]): sys.exit(0)\n"
            "    time.sleep(0.5)\n"
            "sys.exit(1)\n")
        end = time.time() + timeout
        while time.time() < end:  # ray.init fails while the head is starting
            result = subprocess.run([python, "-c", script, self.address, resource, str(count),
                                     str(end - time.time())], capture_output=True, text=True)
            if result.returncode == 0:
                return True
            time.sleep(1)
        return False
