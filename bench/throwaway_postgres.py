"""A PostgreSQL server of Debian's `postgresql` package for one benchmark run: a fresh cluster in a
temporary folder, listening on a Unix socket only (no TCP port is opened), removed when the `with`
block ends.

    with ThrowawayPostgres() as server:
        run(["collage", "optimize", ..., "--cost-db", server.url])

initdb refuses to run as root; as root the server's programs run as Debian's `postgres` user.
"""
import glob
import os
import shutil
import subprocess
import tempfile


def postgres_bin_dir():
    """The newest installed server's bin folder, or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0)
    return os.path.dirname(found[-1]) if found else None


class ThrowawayPostgres:
    PORT = 55432  # names the socket file; no TCP port is opened (listen_addresses='')

    def __init__(self, database="collage"):
        self.bin = postgres_bin_dir()
        if self.bin is None:
            raise RuntimeError("PostgreSQL is not installed (apt-get install postgresql)")
        self.database = database
        self.folder = None
        self.url = None

    def _run(self, *argv):
        command = [os.path.join(self.bin, argv[0]), *argv[1:]]
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--"] + command
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def __enter__(self):
        self.folder = tempfile.mkdtemp(prefix="collage-bench-pg-")
        os.chmod(self.folder, 0o755)
        data = os.path.join(self.folder, "data")
        if os.geteuid() == 0:
            shutil.chown(self.folder, "postgres", "postgres")
        self._run("initdb", "-D", data, "-A", "trust", "-U", "collage", "--no-sync")
        self._run("pg_ctl", "-D", data, "-w", "-l", os.path.join(self.folder, "log"), "-o",
                  f"-k {self.folder} -c listen_addresses='' -p {self.PORT} -c fsync=off", "start")
        self._run("createdb", "-h", self.folder, "-p", str(self.PORT), "-U", "collage",
                  self.database)
        self.url = (f"postgresql:///{self.database}?host={self.folder}&port={self.PORT}"
                    f"&user=collage")
        return self

    def __exit__(self, *exc):
        try:
            self._run("pg_ctl", "-D", os.path.join(self.folder, "data"), "-m", "immediate", "stop")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)
        return False
