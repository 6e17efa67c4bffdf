#!/usr/bin/env python3
"""Timing and parsing helpers of test/perf/measure.sh (standard library only).

Subcommands:
  boot   --health URL [--list URL --min N] [--pid-dir DIR] [--log FILE] -- CMD...
         Starts CMD (environment inherited), polls every 2 ms until GET
         --health answers 200 and, with --list, until GET --list holds at
         least --min resources, then stops CMD with SIGTERM and waits for it
         (SIGKILL after 30 s); prints JSON {healthz_ms, ready_ms, count, exit,
         stop_ms (SIGTERM to exit)}. The clock starts immediately before the
         process is spawned.
  wait   --health URL [--list URL --min N]   same polling for a running server
  stats  FILE...      min/median/max/n of the numbers in the files (one a line)
  ingest FILE         IngestResult: finished_at - started_at (ms) and counts
  wrk    FILE         wrk --latency output -> req/s, p50, p90, p99, errors
  cpu    PID          user+system CPU time of a process in ms (/proc/PID/stat)
  hwm    PID          peak RSS so far (VmHWM) of a process in KiB
  cum    FILE NAME=REGEX...   cum% of the first matching line in `pprof -top -cum`
  busy                cumulative busy CPU time of the machine in ms (/proc/stat,
                      hypervisor steal included)
  snap   PID          "WALL_MS BUSY_MS PID_CPU_MS": a clock, busy and the
                      process's CPU read together, to difference around a run
  quiet  [--max PCT] [--window S] [--wait S]
                      waits until the machine was busy at most PCT % (of all
                      cores, default 25) over a window of S s (default 2),
                      giving up after --wait s (default 600); prints the busy %
                      of the last window and "(gave up)" when it gave up
  inittrace BIN RUNS  runs `BIN -h` RUNS times with GODEBUG=inittrace=1: wall
                      time to exit and package-init time (medians), top packages
  logms  FILE MSG FIELD   the numeric FIELD (seconds) of the JSON log lines whose
                          msg is MSG, in ms, one a line
"""
import http.client
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time
import urllib.parse
from datetime import datetime

POLL = 0.002


def get(url, timeout=5.0):
    """GET url; returns (status, body) or (None, None) if nothing listens."""
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    try:
        path = u.path + ("?" + u.query if u.query else "")
        conn.request("GET", path)
        r = conn.getresponse()
        return r.status, r.read()
    except OSError:
        return None, None
    finally:
        conn.close()


def count(body):
    try:
        return len(json.loads(body)["resources"])
    except (ValueError, KeyError, TypeError):
        return -1


def poll(t0, health, list_url, minimum, deadline, alive=lambda: True):
    """Polls until ready; returns (healthz_ms, ready_ms, count)."""
    healthz_ms = None
    n = None
    while time.perf_counter() < deadline:
        if not alive():
            raise SystemExit("the server exited before it was ready")
        if healthz_ms is None:
            st, _ = get(health)
            if st == 404 and health.endswith("/readyz"):
                # A build from before /readyz: it loaded its index before
                # listening, so /healthz 200 meant ready.
                st, _ = get(health[: -len("/readyz")] + "/healthz")
            if st == 200:
                healthz_ms = (time.perf_counter() - t0) * 1000
            else:
                time.sleep(POLL)
                continue
        if not list_url:
            return healthz_ms, healthz_ms, None
        st, body = get(list_url)
        if st == 200:
            n = count(body)
            if n >= minimum:
                return healthz_ms, (time.perf_counter() - t0) * 1000, n
        time.sleep(POLL)
    raise SystemExit(f"not ready before the deadline (healthz_ms={healthz_ms}, resources={n})")


def args_of(argv):
    opts, rest = {}, []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            rest = argv[i + 1:]
            break
        if a.startswith("--"):
            opts[a[2:]] = argv[i + 1]
            i += 2
            continue
        rest.append(a)
        i += 1
    return opts, rest


def cmd_boot(argv):
    o, cmd = args_of(argv)
    log = open(o.get("log", os.devnull), "ab")
    timeout = float(o.get("timeout", "60"))
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=log, stderr=log)
    pid_file = None
    if "pid-dir" in o:
        pid_file = os.path.join(o["pid-dir"], str(p.pid))
        open(pid_file, "w").close()

    stop_ms = [None]

    def stop(*_):
        if p.poll() is None:
            t = time.perf_counter()
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=30)
                stop_ms[0] = round((time.perf_counter() - t) * 1000, 1)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        if pid_file and os.path.exists(pid_file):
            os.remove(pid_file)

    signal.signal(signal.SIGTERM, lambda *a: (stop(), sys.exit(143)))
    signal.signal(signal.SIGINT, lambda *a: (stop(), sys.exit(130)))
    try:
        h, r, n = poll(t0, o["health"], o.get("list"), int(o.get("min", "0")),
                       t0 + timeout, alive=lambda: p.poll() is None)
    finally:
        stop()
    print(json.dumps({"healthz_ms": round(h, 1), "ready_ms": round(r, 1), "count": n, "exit": p.returncode,
                      "stop_ms": stop_ms[0]}))


def cmd_wait(argv):
    o, _ = args_of(argv)
    t0 = time.perf_counter()
    h, r, n = poll(t0, o["health"], o.get("list"), int(o.get("min", "0")), t0 + float(o.get("timeout", "60")))
    print(json.dumps({"healthz_ms": round(h, 1), "ready_ms": round(r, 1), "count": n}))


def numbers(files):
    out = []
    for f in files:
        with open(f) as fh:
            out += [float(x) for x in fh.read().split()]
    return out


def fmt(v):
    return f"{v:.1f}" if v < 100 else f"{v:.0f}"


def cmd_stats(files):
    v = numbers(files)
    print(f"min {fmt(min(v))}  median {fmt(statistics.median(v))}  max {fmt(max(v))}  (n={len(v)})")


def ts(s):
    # RFC 3339 with up to 9 fractional digits; Python parses 6.
    m = re.match(r"(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$", s)
    base, frac, tz = m.group(1), (m.group(2) or "0"), m.group(3)
    tz = "+00:00" if tz == "Z" else tz
    return datetime.fromisoformat(base + tz).timestamp() + float("0." + frac)


def cmd_ingest(argv):
    with open(argv[0]) as fh:
        r = json.load(fh)
    ms = (ts(r["finished_at"]) - ts(r["started_at"])) * 1000
    print(f"{ms:.1f} upserted={r.get('upserted')} unchanged={r.get('unchanged')} seen={r.get('seen')} origin={r.get('origin')}")


def to_ms(v):
    m = re.match(r"([\d.]+)(us|ms|s|m)$", v)
    x, unit = float(m.group(1)), m.group(2)
    return x * {"us": 0.001, "ms": 1, "s": 1000, "m": 60000}[unit]


def cmd_wrk(argv):
    text = open(argv[0]).read()
    rps = re.search(r"Requests/sec:\s+([\d.]+)", text).group(1)
    pct = dict(re.findall(r"^\s+(\d+)%\s+(\S+)\s*$", text, re.M))
    total = re.search(r"(\d+) requests in", text).group(1)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    sock = re.search(r"Socket errors: (.*)", text)
    errs = []
    if non2xx:
        errs.append(f"non-2xx {non2xx.group(1)}")
    if sock:
        errs.append("socket errors: " + sock.group(1))
    print(f"req/s {float(rps):.0f}  p50 {to_ms(pct['50']):.2f} ms  p90 {to_ms(pct['90']):.2f} ms  "
          f"p99 {to_ms(pct['99']):.2f} ms  (requests {total}{', ' + '; '.join(errs) if errs else ', no errors'})")


def cmd_cpu(argv):
    print(f"{cpu_ms(argv[0]):.0f}")


def cmd_hwm(argv):
    with open(f"/proc/{argv[0]}/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                print(line.split()[1])
                return
    raise SystemExit("no VmHWM")


def cmd_cum(argv):
    lines = open(argv[0]).read().splitlines()
    out = []
    for spec in argv[1:]:
        name, rx = spec.split("=", 1)
        pct = "0%"
        for line in lines:
            f = line.split()
            if len(f) >= 6 and f[4].endswith("%") and re.search(rx, f[5]):
                pct = f[4]
                break
        out.append(f"{name} {pct}")
    print(", ".join(out))


def busy_ms():
    with open("/proc/stat") as fh:
        f = [int(x) for x in fh.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal ...
    busy = f[0] + f[1] + f[2] + f[5] + f[6] + f[7]
    return busy * 1000 / os.sysconf("SC_CLK_TCK")


def cpu_ms(pid):
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def cmd_snap(argv):
    print(f"{time.time() * 1000:.0f} {busy_ms():.0f} {cpu_ms(argv[0]):.0f}")


def cmd_busy(argv):
    print(f"{busy_ms():.0f}")


def cmd_quiet(argv):
    o, _ = args_of(argv)
    limit, window, wait = float(o.get("max", "25")), float(o.get("window", "2")), float(o.get("wait", "600"))
    cores = os.cpu_count()
    end = time.time() + wait
    while True:
        b0 = busy_ms()
        time.sleep(window)
        pct = (busy_ms() - b0) / (window * 1000 * cores) * 100
        if pct <= limit:
            print(f"{pct:.0f}")
            return
        if time.time() > end:
            print(f"{pct:.0f} (gave up)")
            return


def cmd_inittrace(argv):
    binary, runs = argv[0], int(argv[1])
    walls, totals, per = [], [], {}
    env = dict(os.environ, GODEBUG="inittrace=1")
    for _ in range(runs):
        t = time.perf_counter()
        r = subprocess.run([binary, "-h"], env=env, capture_output=True, text=True)
        walls.append((time.perf_counter() - t) * 1000)
        total = 0.0
        for m in re.finditer(r"^init (\S+) @\S+ ms, ([\d.]+) ms clock", r.stderr, re.M):
            ms = float(m.group(2))
            total += ms
            per.setdefault(m.group(1), []).append(ms)
        totals.append(total)
    top = sorted(per.items(), key=lambda kv: -statistics.median(kv[1]))[:4]
    print(f"exec to exit {statistics.median(walls):.1f} ms, package init {statistics.median(totals):.1f} ms "
          f"(medians of {runs}); largest: " + ", ".join(f"{k} {statistics.median(v):.1f} ms" for k, v in top))


def cmd_logms(argv):
    path, msg, field = argv
    with open(path) as fh:
        for line in fh:
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if rec.get("msg") == msg and field in rec:
                print(f"{float(rec[field]) * 1000:.1f}")


if __name__ == "__main__":
    sub, rest = sys.argv[1], sys.argv[2:]
    {"boot": cmd_boot, "wait": cmd_wait, "stats": cmd_stats, "ingest": cmd_ingest, "wrk": cmd_wrk,
     "cpu": cmd_cpu, "hwm": cmd_hwm, "cum": cmd_cum, "logms": cmd_logms,
     "busy": cmd_busy, "quiet": cmd_quiet, "snap": cmd_snap,
     "inittrace": cmd_inittrace}[sub](rest)
