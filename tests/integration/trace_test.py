#!/usr/bin/env python3
"""trace_test.py -- RPMA_SIM_TRACE writes a Chrome trace-event JSON file that a viewer loads.

usage: trace_test.py WRITE FLUSH_PMEM FORGETFUL PERF PING_PONG PLOT
(the examples, rpma-sim-perf and rpma-sim-trace-plot)

Runs the write example in one process and as a server and a client process (over shared
memory, `%p` in the path giving each its own file), the flush example (flushes marked), the
forgetful flush example (a power failure), the write example under a fault rule (a fault
firing and a failed work request), rpma-sim-perf bounded by RPMA_SIM_TRACE_MAX_MB,
rpma-sim-perf's pipelined writes over tcp (more tracks, none overlapping), messages-ping-pong
(receives), and a server killed with SIGKILL (the file it leaves is the array without its
closing bracket).
Each file must load as JSON and hold the events the run must have produced.
"""
import glob
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from xml.etree import ElementTree

FAILURES = []


def check(condition, what):
    print(("ok    " if condition else "FAIL  ") + what)
    if not condition:
        FAILURES.append(what)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


def server_and_client(program, env):
    """Runs `program` as a server and, once it listens, as its client, with `env`; returns
    (server process, its exit status, the client's run)."""
    port = free_port()
    server = subprocess.Popen([program, "server", "127.0.0.1", port], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for line in server.stdout:
        if "listening on" in line:
            break
    client = subprocess.run([program, "client", "127.0.0.1", port], env=env, timeout=60,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    server.stdout.read()
    return server, server.wait(timeout=60), client


def run(argv, env_extra, timeout=60):
    env = dict(os.environ, **env_extra)
    return subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          timeout=timeout, text=True)


def load(path):
    with open(path) as f:
        return json.load(f)


def tracks(events):
    """{tid: name} from the thread_name metadata."""
    return {e["tid"]: e["args"]["name"] for e in events
            if e["ph"] == "M" and e["name"] == "thread_name"}


def track_of(events, prefix):
    """The tid of the track whose name starts with prefix (None if none)."""
    for tid, name in tracks(events).items():
        if name.startswith(prefix):
            return tid
    return None


def on(events, tid, ph, name=None):
    return [e for e in events if e["ph"] == ph and e.get("tid") == tid and
            (name is None or e["name"] == name)]


def check_connection(events, side, label):
    tid = track_of(events, side + " conn 1 (qp ")
    check(tid is not None, f"{label}: a track named '{side} conn 1 (qp N)'")
    if tid is None:
        return None
    names = [e["name"] for e in sorted(on(events, tid, "i"), key=lambda e: e["ts"])]
    check(names[:1] == ["RPMA_CONN_ESTABLISHED"] and "RPMA_CONN_CLOSED" in names,
          f"{label}: {side} track has ESTABLISHED, then CLOSED ({names})")
    return tid


def check_write_example(events, label, client=True, server=True):
    check(events[0]["ph"] == "M" and events[0]["name"] == "process_name",
          f"{label}: the process is named")
    check(events[-1]["name"] == "end of trace", f"{label}: the file ends the array at exit")
    if server:
        check_connection(events, "server", label)
    if client:
        tid = check_connection(events, "client", label)
        if tid is None:
            return
        slices = sorted((e for e in events if e["ph"] == "X" and
                         tracks(events).get(e["tid"], "").startswith("client conn 1")),
                        key=lambda e: e["ts"])
        ops = [(e["name"], e["args"]["len"], e["args"]["status"]) for e in slices]
        check(ops == [("write", 39, "IBV_WC_SUCCESS"), ("read", 39, "IBV_WC_SUCCESS")],
              f"{label}: the client's work requests are a write then a read of 39 bytes ({ops})")
        check(all(e["dur"] >= 0 and e["args"]["rkey"].startswith("0x") for e in slices),
              f"{label}: each slice has a duration and the remote key")


def check_no_overlap(events, label):
    by_track = {}
    for e in events:
        if e["ph"] == "X":
            by_track.setdefault(e["tid"], []).append((e["ts"], e["ts"] + e["dur"]))
    overlaps = 0
    for spans in by_track.values():
        spans.sort()
        overlaps += sum(1 for a, b in zip(spans, spans[1:]) if b[0] < a[1] - 1e-3)
    check(overlaps == 0, f"{label}: no two slices of a track overlap ({overlaps} do)")


def main():
    write, flush_pmem, forgetful, perf, ping_pong, plot = (os.path.abspath(p) for p in sys.argv[1:7])
    work = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))

    # 1. The write example, both sides in one process.
    path = os.path.join(work, "inproc.json")
    result = run([write], {"RPMA_SIM_TRACE": path})
    check(result.returncode == 0, "write example in one process exits 0")
    check_write_example(load(path), "in process")

    # 2. Server and client processes over shared memory, one file each (%p).
    pattern = os.path.join(work, "shm-%p.json")
    env = dict(os.environ, RPMA_SIM_TRACE=pattern, RPMA_SIM_TRANSPORT="shm")
    started_us = time.monotonic() * 1e6  # CLOCK_MONOTONIC, the clock of every trace
    server, server_rc, client = server_and_client(write, env)
    check(client.returncode == 0 and server_rc == 0, "shm: both processes exit 0")
    ended_us = time.monotonic() * 1e6
    files = {int(os.path.basename(p)[4:-5]): p for p in glob.glob(os.path.join(work, "shm-*.json"))}
    check(server.pid in files, "shm: the server's file is named after its pid")
    check(len(files) == 2, f"shm: one file per process ({sorted(files)})")
    if server.pid in files and len(files) == 2:
        server_events = load(files[server.pid])
        client_events = load([p for pid, p in files.items() if pid != server.pid][0])
        check_write_example(server_events, "shm server", client=False)
        check_write_example(client_events, "shm client", server=False)
        # One clock for both processes: every event (metadata aside) lies between the test's
        # readings of CLOCK_MONOTONIC before the server started and after both ended; the client's
        # write comes before the server's connection closed (the client disconnects after
        # its write completed). (Not after the server's ESTABLISHED: the client may write
        # straight into the server's memory before the server's thread records that.)
        s_tid = track_of(server_events, "server conn 1")
        s_times = [e["ts"] for e in on(server_events, s_tid, "i")]
        c_writes = [e["ts"] for e in client_events if e["ph"] == "X" and e["name"] == "write"]
        stamps = [e["ts"] for e in server_events + client_events if e["ph"] != "M"]
        check(bool(s_times) and bool(c_writes) and c_writes[0] <= max(s_times) and
              all(started_us <= ts <= ended_us for ts in stamps),
              "shm: both files share one clock (every event within the run, the write before "
              "the server's connection closed)")

        # rpma-sim-trace-plot draws both files on one timeline: a box per work request.
        svg = os.path.join(work, "shm.svg")
        drawn = subprocess.run([plot, "-o", svg] + list(files.values()))
        boxes = -1
        if drawn.returncode == 0:
            root = ElementTree.parse(svg).getroot()
            boxes = sum(1 for r in root.iter("{http://www.w3.org/2000/svg}rect")
                        if r.find("{http://www.w3.org/2000/svg}title") is not None)
        check(boxes == 2, f"plot: the SVG timeline has a box for the write and one for the read ({boxes})")

    # 3. Flushes are marked.
    path = os.path.join(work, "flush.json")
    result = run([flush_pmem], {"RPMA_SIM_TRACE": path})
    check(result.returncode == 0, "flush example exits 0")
    flushes = [e for e in load(path) if e["ph"] == "X" and e["name"] == "flush"]
    check(len(flushes) == 1 and flushes[0]["cat"] == "wr,flush" and
          flushes[0]["cname"] == "yellow" and
          flushes[0]["args"]["type"] == "RPMA_FLUSH_TYPE_PERSISTENT",
          f"flush: one persistent flush, marked ({flushes})")

    # 4. A power failure is an instant of the process.
    path = os.path.join(work, "power.json")
    result = run([forgetful], {"RPMA_SIM_TRACE": path})
    check(result.returncode == 0, "forgetful flush example exits 0")
    power = [e for e in load(path) if e["ph"] == "i" and e["name"] == "power failure"]
    check(len(power) == 1 and power[0]["args"]["loss"] == "all" and
          power[0]["args"]["bytes_reverted"] > 0,
          f"power failure: one instant with what it reverted ({power})")

    # 5. A fault firing is an instant on its connection; the failed request is red.
    path = os.path.join(work, "fault.json")
    run([write], {"RPMA_SIM_TRACE": path,
                  "RPMA_SIM_FAULTS": "wc:op=read,status=IBV_WC_REM_OP_ERR,side=client"})
    events = load(path)
    client_tid = track_of(events, "client conn 1")
    fired = on(events, client_tid, "i", "fault fired")
    check(len(fired) == 1 and "IBV_WC_REM_OP_ERR" in fired[0]["args"]["what"],
          f"fault: one firing on the client's track ({fired})")
    reads = [e for e in events if e["ph"] == "X" and e["name"] == "read"]
    check(len(reads) == 1 and reads[0]["args"]["status"] == "IBV_WC_REM_OP_ERR" and
          reads[0]["cname"] == "terrible", f"fault: the read failed, in red ({reads})")
    lost = [e["name"] for e in on(events, client_tid, "i") if e["name"].startswith("RPMA_CONN")]
    check("RPMA_CONN_ESTABLISHED" in lost, "fault: the connection events are there too")

    # 6. The bound: past RPMA_SIM_TRACE_MAX_MB the trace stops, saying so, and stays valid.
    path = os.path.join(work, "bounded.json")
    result = run([perf, "write_bw", "both", "127.0.0.1", "0", "-s", "64", "-n", "20000"],
                 {"RPMA_SIM_TRACE": path, "RPMA_SIM_TRACE_MAX_MB": "1"})
    check(result.returncode == 0, "rpma-sim-perf exits 0")
    size = os.path.getsize(path)
    events = load(path)
    check(size <= 1 << 20, f"bound: the file holds at most 1 MiB ({size} bytes)")
    check(any(e["name"] == "trace stopped" for e in events) and events[-1]["name"] == "end of trace",
          "bound: a 'trace stopped' instant, then the end of the array")
    check(sum(1 for e in events if e["ph"] == "X") > 1000, "bound: the writes before it are there")

    # 7. Requests under way together take more tracks of their connection, and no two slices
    # of a track overlap (a viewer would drop them).
    path = os.path.join(work, "pipelined.json")
    result = run([perf, "write_bw", "both", "127.0.0.1", free_port(), "-s", "4096", "-n", "3000", "-t", "64"],
                 {"RPMA_SIM_TRACE": path, "RPMA_SIM_TRACE_MAX_MB": "8", "RPMA_SIM_TRANSPORT": "tcp"})
    check(result.returncode == 0, "rpma-sim-perf over tcp exits 0")
    events = load(path)
    names = tracks(events)
    send_tracks = [n for n in names.values() if n.startswith("client conn 1") and "receives" not in n]
    check(len(send_tracks) > 1, f"pipelined: the client's writes take {len(send_tracks)} tracks")
    check_no_overlap(events, "pipelined")
    path = os.path.join(work, "ping-pong.json")
    result = run([ping_pong], {"RPMA_SIM_TRACE": path})
    check(result.returncode == 0, "messages-ping-pong exits 0")
    events = load(path)
    receives = [e for e in events if e["ph"] == "X" and e["cat"] == "wr,recv"]
    check(len(receives) >= 2 and all(e["args"]["status"] == "IBV_WC_SUCCESS" for e in receives) and
          all("receives" in tracks(events)[e["tid"]] for e in receives),
          f"receives: {len(receives)} slices on the receive tracks")
    check_no_overlap(events, "ping-pong")

    # 8. A process killed with SIGKILL leaves every line it wrote: only "]" is missing.
    path = os.path.join(work, "killed.json")
    port = free_port()
    server = subprocess.Popen([write, "server", "127.0.0.1", port],
                              env=dict(os.environ, RPMA_SIM_TRACE=path),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for line in server.stdout:
        if "listening on" in line:
            break
    server.send_signal(signal.SIGKILL)
    server.wait(timeout=60)
    with open(path) as f:
        text = f.read()
    check(not text.rstrip().endswith("]"), "killed: the array is not closed")
    try:
        events = json.loads(text.rstrip().rstrip(",") + "]")
        check(events[0]["name"] == "process_name", "killed: with ']' added the file loads")
    except ValueError as error:
        check(False, f"killed: with ']' added the file loads ({error})")

    print(f"{len(FAILURES)} failed")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
