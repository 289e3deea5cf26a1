"""What the processes of a benchmark use: CPU seconds by command, peak memory of a process tree."""

from __future__ import annotations

import os
import threading
import time


# ------------------------------------------------------------------ memory of the worker tree


def _tree(root: int) -> list[int]:
    """The process tree under `root`, from the kernel's children lists (cheap: the sampler must
    not steal the cores it measures)."""
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        try:
            threads = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in threads:  # a child belongs to the thread that forked it
            try:
                with open(f"/proc/{pid}/task/{tid}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
            except OSError:
                pass
    return out


def _kb(path: str, field: str) -> int:
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(field):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def cpu_by_command() -> dict[str, float]:
    """CPU seconds (user + system) used so far by every process on the host, summed by command
    name and counting reaped children: sampled around a set, it shows where the cores went."""
    tick = os.sysconf("SC_CLK_TCK")
    out: dict[str, float] = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                raw = f.read()
        except OSError:
            continue
        name = raw[raw.index("(") + 1:raw.rindex(")")]
        fields = raw[raw.rindex(")") + 2:].split()
        used = sum(int(x) for x in fields[11:13]) / tick  # utime, stime
        key = "celery" if name.startswith(("celery", "engram", "python")) and pid != str(os.getpid()) else name
        if pid == str(os.getpid()):
            key = "bench"
        out[key] = out.get(key, 0.0) + used
    return out


def cpu_delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    delta = {k: round(after.get(k, 0.0) - before.get(k, 0.0), 2) for k in after}
    return dict(sorted(((k, v) for k, v in delta.items() if v >= 0.1), key=lambda kv: -kv[1]))


class TreeMemory(threading.Thread):
    """Peak summed RSS and PSS of a process tree (the worker and its pool)."""

    def __init__(self, roots: list[int], every: float = 0.5, pss_every: float = 3.0):
        super().__init__(daemon=True)
        self.roots, self.every, self.pss_every = roots, every, pss_every
        self.peak_rss_kb = self.peak_pss_kb = self.processes = 0
        self.stop_event = threading.Event()
        self.paused = threading.Event()  # set while a floor runs: the sampler's reads would slow it

    def run(self) -> None:
        # RSS (/proc/status) is cheap; PSS (smaps_rollup walks every page table: ~0.1 s of kernel
        # time per sample of a 5-process tree, 12 % of a core at 0.5 s) is read when RSS reaches a
        # new peak and otherwise at most every `pss_every` seconds.
        last_pss = 0.0
        while not self.stop_event.wait(self.every):
            if self.paused.is_set():
                continue
            pids = [p for r in self.roots for p in _tree(r)]
            rss = sum(_kb(f"/proc/{p}/status", "VmRSS:") for p in pids)
            now = time.monotonic()
            if rss > self.peak_rss_kb or now - last_pss >= self.pss_every:
                last_pss = now
                pss = sum(_kb(f"/proc/{p}/smaps_rollup", "Pss:") for p in pids)
                if pss > self.peak_pss_kb:
                    self.processes = len(pids)
                self.peak_pss_kb = max(self.peak_pss_kb, pss)
            self.peak_rss_kb = max(self.peak_rss_kb, rss)

    def stop(self) -> dict:
        self.stop_event.set()
        self.join()
        return {"peak_rss_sum_gb": round(self.peak_rss_kb / 2**20, 3), "peak_pss_sum_gb": round(self.peak_pss_kb / 2**20, 3),
                "processes": self.processes}
