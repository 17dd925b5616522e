#!/usr/bin/env python3
"""grain_time_check.py - the grains' start and end times (trace v5) of a
tests/e2e/grainloops.c run against what the program measured itself.

Checks, each printing one FAIL line when it does not hold:
  - every grain is timed, 0 <= start <= end;
  - on one thread, the dynamic loop's chunks never overlap;
  - each thread's schedule(static) chunk holds the wall time the thread
    measured from its first iteration's start to its last one's end (to
    20 ppm: the grain clock's scale; and exceeds it by at most 10% + 5 ms:
    the runtime's own steps, a busy machine's preemptions);
  - schedule(static, 2): 4 rebuilt chunks per thread, end to end, whose
    whole holds the thread's measured part likewise;
  - parallelism.csv: at most T grains at once, T at some moment (the
    static loop's chunks run together), bins end to end.
Usage: grain_time_check.py RUN_DIR PROGRAM_STDERR T SOURCE"""
import csv
import sys

run, err_path, T = sys.argv[1], sys.argv[2], int(sys.argv[3])
fails = []


def fail(msg):
    fails.append(msg)


rows = list(csv.DictReader(open(f"{run}/grains.csv")))
inst = {r["instance"]: r for r in csv.DictReader(open(f"{run}/instances.csv"))}
walls = {"static": [], "chunked": []}
for line in open(err_path):
    p = line.split()
    if len(p) == 3 and p[0] == "whatif-wall":
        walls[p[1]].append(int(p[2]))

untimed = [r["grain"] for r in rows if not r["start_ns"] or not r["end_ns"]]
if untimed:
    fail(f"{len(untimed)} of {len(rows)} grains untimed (first: {untimed[0]})")
for r in rows:
    if r["start_ns"] and not 0 <= int(r["start_ns"]) <= int(r["end_ns"]):
        fail(f"grain {r['grain']}: start {r['start_ns']} end {r['end_ns']}")
        break


def per_thread(instance):
    th = {}
    for r in rows:
        if r["instance"] == instance and r["start_ns"]:
            th.setdefault(r["thread"], []).append(
                (int(r["start_ns"]), int(r["end_ns"])))
    return {k: sorted(v) for k, v in th.items()}


def holds(grain_ns, program, what):
    """sorted whole-part durations against the program's own, pairwise"""
    g, p = sorted(grain_ns), sorted(program)
    if len(g) != len(p):
        fail(f"{what}: {len(g)} threads with grains, the program printed {len(p)}")
        return
    for a, b in zip(g, p):
        # the grain clock is the TSC scaled by a factor measured over 2 ms
        # at start-up: within a few ppm of the program's CLOCK_MONOTONIC
        if a + 64 + b * 2e-5 < b or a > b * 1.10 + 5e6:
            fail(f"{what}: a grain of {a} ns for a part the program timed at {b} ns")
            return


# the instances by their loop's line: dynamic, static, chunked
src = open(sys.argv[4]).read().split("\n")
lines = {}
for what, text in (("dyn", "schedule(dynamic"), ("sta", "schedule(static)"),
                   ("chk", "schedule(static, 2)")):
    lines[what] = next(i + 1 for i, l in enumerate(src)
                       if l.startswith("#pragma") and text in l)
found = {w: [k for k, v in inst.items()
             if v["location"].endswith(f":{n}")] for w, n in lines.items()}
if any(len(v) != 1 for v in found.values()):
    fail(f"loop instances by line: {found}, expected one each")
else:
    dyn, sta, chk = found["dyn"][0], found["sta"][0], found["chk"][0]
    for t, iv in per_thread(dyn).items():
        for (s0, e0), (s1, e1) in zip(iv, iv[1:]):
            if s1 < e0:
                fail(f"thread {t}: dynamic chunks overlap: [{s0},{e0}] [{s1},{e1}]")
                break
    st = per_thread(sta)
    if any(len(v) != 1 for v in st.values()) or len(st) != T:
        fail(f"static loop: chunks per thread {[len(v) for v in st.values()]}, expected 1 on each of {T}")
    holds([v[0][1] - v[0][0] for v in st.values()], walls["static"], "static")
    ck = per_thread(chk)
    if len(ck) != T or any(len(v) != 4 for v in ck.values()):
        fail(f"schedule(static, 2): chunks per thread {[len(v) for v in ck.values()]}, expected 4 on each of {T}")
    for t, iv in ck.items():
        if any(b[0] != a[1] for a, b in zip(iv, iv[1:])):
            fail(f"thread {t}: rebuilt chunks not end to end: {iv}")
    holds([v[-1][1] - v[0][0] for v in ck.values()], walls["chunked"], "chunked")

bins = list(csv.DictReader(open(f"{run}/parallelism.csv")))
most = max((int(b["max_running"]) for b in bins), default=0)
if most != T:
    fail(f"parallelism.csv: at most {most} grains at once, expected {T}")
if any(float(b["mean_running"]) > int(b["max_running"]) + 1e-9 for b in bins):
    fail("parallelism.csv: a bin's mean above its max")
if any(b["start_ns"] != a["end_ns"] for a, b in zip(bins, bins[1:])):
    fail("parallelism.csv: bins not end to end")

for f in fails:
    print("FAIL: " + f)
print(f"grain times: {len(rows)} grains, {len(fails)} failed")
sys.exit(1 if fails else 0)
