#!/usr/bin/env python3
"""trace_edge_test.py -- RPMA_SIM_TRACE and rpma-sim-trace-plot at their edges.

usage: trace_edge_test.py WRITE PLOT
The cases, each run in turn:
  same_path   a server and a client process (over shm) given the same FILE, without %p:
              neither may wipe the other's events: the first keeps FILE, the second writes
              FILE.<its pid> and says so on stderr; both files are JSON.
  utf8_name   a program whose name is not ASCII and longer than the kernel's 15-byte comm:
              the trace must be valid UTF-8 JSON, and rpma-sim-trace-plot must draw it.
  plot_empty  rpma-sim-trace-plot on an empty file says what is wrong in one line (no
              Python traceback), and exits non-zero.
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from trace_test import FAILURES, check, server_and_client  # noqa: E402 (found beside this file)


def same_path(write, plot, work):
    path = os.path.join(work, "run.json")  # no %p: both processes are given this one file
    env = dict(os.environ, RPMA_SIM_TRACE=path, RPMA_SIM_TRANSPORT="shm")
    server, server_rc, client = server_and_client(write, env)
    check(client.returncode == 0 and server_rc == 0,
          f"both processes exit 0 (client {client.returncode}, server {server_rc})")
    events = []
    for name in [path] + sorted(glob.glob(path + ".*")):
        try:
            with open(name, encoding="utf-8") as f:
                events += json.load(f)
        except ValueError as error:
            check(False, f"{name} loads as JSON ({error})")
            return
    check("another running process's trace" in client.stdout,
          f"the client says it writes a file of its own:\n{client.stdout[-500:]}")
    named = {e["pid"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    check(server.pid in named, f"the server's process is in the file (named pids {sorted(named)})")
    client_pids = {e["pid"] for e in events if e["pid"] != server.pid}
    writes = [e for e in events if e["ph"] == "X" and e["name"] == "write"]
    reads = [e for e in events if e["ph"] == "X" and e["name"] == "read"]
    check(len(writes) == 1 and len(reads) == 1,
          f"the client's write and read are in the file ({len(writes)} writes, {len(reads)} "
          f"reads; pids other than the server's: {sorted(client_pids)}; "
          f"{len(events)} events in all)")


def utf8_name(write, plot, work):
    # 10 x U+00E9 is 20 bytes; the kernel keeps 15 of them as the process's comm, which
    # ends in the middle of a character.
    program = os.path.join(work, "\u00e9" * 10)
    shutil.copy(write, program)
    path = os.path.join(work, "utf8.json")
    result = subprocess.run([program], env=dict(os.environ, RPMA_SIM_TRACE=path), timeout=60,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    check(result.returncode == 0, "the write example under a non-ASCII name exits 0")
    with open(path, "rb") as f:
        data = f.read()
    try:
        events = json.loads(data.decode("utf-8"))
        check(events[0]["name"] == "process_name", "the trace is UTF-8 JSON")
    except ValueError as error:  # UnicodeDecodeError is a ValueError
        at = getattr(error, "start", 0)
        check(False, f"the trace is UTF-8 JSON ({error}; bytes there: {data[max(at - 30, 0):at + 10]!r})")
    drawn = subprocess.run([plot, "-o", os.path.join(work, "utf8.svg"), path],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    check(drawn.returncode == 0,
          f"rpma-sim-trace-plot draws it (exit {drawn.returncode}: {drawn.stdout.strip()[-200:]})")


def plot_empty(write, plot, work):
    path = os.path.join(work, "empty.json")
    open(path, "w").close()
    drawn = subprocess.run([plot, "-o", os.path.join(work, "empty.svg"), path],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    check(drawn.returncode != 0, f"an empty trace is an error (exit {drawn.returncode})")
    check("Traceback" not in drawn.stderr and drawn.stderr.startswith("rpma-sim-trace-plot:"),
          f"it says so in a line of its own, not a traceback:\n{drawn.stderr}")


def main():
    write, plot = (os.path.abspath(p) for p in sys.argv[1:3])
    for case in (same_path, utf8_name, plot_empty):
        print(f"=== {case.__name__}")
        case(write, plot, tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR")))
    print(f"{len(FAILURES)} failed")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
