#!/usr/bin/env python3
"""Wall time of whole processes, best and median of N runs (issue 29 item 4: netsolve's whole
process against epanet-run's, side by side on the same machine in one run).

  scripts/process_time.py [--runs 5] -- CMD ARGS... [--vs CMD ARGS...]
"""
import subprocess
import sys
import time


def measure(cmd, runs):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        rc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
        times.append(time.perf_counter() - t0)
        if rc != 0:
            sys.exit("process_time: %s exited %d" % (" ".join(cmd), rc))
    times.sort()
    return times[0], times[len(times) // 2]


def main():
    args = sys.argv[1:]
    runs = 5
    if args[:1] == ["--runs"]:
        runs, args = int(args[1]), args[2:]
    if args[:1] == ["--"]:
        args = args[1:]
    commands, current = [], []
    for a in args:
        if a == "--vs":
            commands.append(current)
            current = []
        else:
            current.append(a)
    commands.append(current)
    # Interleaved rounds, so that a change in the machine's load reaches every command alike.
    best = [[] for _ in commands]
    for _ in range(runs):
        for i, cmd in enumerate(commands):
            best[i].append(measure(cmd, 1)[0])
    for cmd, t in zip(commands, best):
        t.sort()
        print("best %7.2f ms  median %7.2f ms  of %d  %s" % (1e3 * t[0], 1e3 * t[len(t) // 2], runs,
                                                            " ".join(cmd)))


if __name__ == "__main__":
    main()
