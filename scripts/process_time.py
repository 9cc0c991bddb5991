#!/usr/bin/env python3
"""Wall time of whole processes, best and median of N runs (issue 29 item 4: netsolve's whole
process against epanet-run's, side by side on the same machine in one run).

  scripts/process_time.py [--runs 5] -- CMD ARGS... [--vs CMD ARGS...]
"""
import os
import shutil
import sys
import time

# Exit statuses that count as a completed run: 0, and netsolve's 5 (completed with EPANET's
# "system unbalanced" warning).
COMPLETED = (0, 5)


def measure(cmd, runs):
    """posix_spawn (vfork + exec) and waitpid: what the timer adds is about 0.1 ms, not the
    3-4 ms of subprocess.run's fork of the Python interpreter."""
    path = shutil.which(cmd[0]) or cmd[0]
    quiet = [(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
             (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)]
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        pid = os.posix_spawn(path, cmd, os.environ, file_actions=quiet)
        _, status = os.waitpid(pid, 0)
        times.append(time.perf_counter() - t0)
        rc = os.waitstatus_to_exitcode(status)
        if rc not in COMPLETED:
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
