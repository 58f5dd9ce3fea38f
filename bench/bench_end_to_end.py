"""End to end on PostgreSQL, side by side with the physical floor, at several volumes.

For each N: generate N realistic lines (tests/corpora/realistic.py: the real PlanRunner and
the agentlane samples, Faker personal data in free text, cached under --cache), then in one
run, each on a fresh database:

* floor: a raw COPY of the same lines into ``raw_events(line jsonb)`` (psycopg, 1 MiB
  blocks; the server parses every line into jsonb), measured before and after the ingest;
* ``tracelake ingest`` (the CLI in a subprocess, default workers: one per CPU);
* a plain ordered read of the stored events (``Reader.iter_all``);
* ``tracelake project`` and ``tracelake promote`` (subprocesses);
* sizes: the raw table against everything tracelake stores (events, quarantine, sites,
  projections), from ``pg_total_relation_size``;
* peak RSS: the largest sum over the ingest process tree (main + workers), sampled from /proc.

    python bench/bench_end_to_end.py --sizes 100000,300000 [--skip-project]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psycopg

from bench._pg import scratch_database
from tests.corpora.realistic import write_corpus
from tracelake.store import open_store

REPO = Path(__file__).resolve().parents[1]
SAMPLES = Path(os.environ.get("TRACELAKE_SHARED_DIR") or REPO.parent / "shared")
SAMPLES = SAMPLES / "samples" / "agentlane"
TRACELAKE = [str(Path(sys.executable).parent / "tracelake")]
KEY = "bench-end-to-end-pseudonym-key-0123456789"


def corpus(cache: Path, n: int, seed: int) -> Path:
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / f"events-{n}-seed{seed}.jsonl"
    if not path.exists():
        t0 = time.perf_counter()
        tmp = path.with_suffix(".part")
        counts = write_corpus(tmp, n, SAMPLES, seed=seed)
        tmp.rename(path)
        print(f"  generated {path.name}: {counts} in {time.perf_counter() - t0:.0f} s")
    return path


def libpq(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://", 1)


def proc_cpu(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far, from /proc (0 if unreadable)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def quiesce(url: str) -> None:
    """Start a timed phase from a quiet machine: the previous phase's dirty pages written out
    (a CHECKPOINT for the server's, ``sync`` for the kernel's), so no phase pays for another's
    writes. The floor and the ingest are treated alike: each of the three timed phases starts
    here (the ingest used to start while the 128 MB the first floor had just written were being
    flushed, the second floor while the ingest's were)."""
    with psycopg.connect(libpq(url), autocommit=True) as conn:
        conn.execute("CHECKPOINT")
    os.sync()


def raw_copy(url: str, path: Path) -> tuple[float, float]:
    """The floor: every line COPYed as is into a jsonb column, one transaction.
    Returns (wall seconds, CPU seconds of this client and its server backend)."""
    with psycopg.connect(libpq(url), autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS raw_events")
        conn.execute("CREATE TABLE raw_events (line jsonb NOT NULL)")
        row = conn.execute("SELECT pg_backend_pid()").fetchone()
        backend = int(row[0]) if row else 0
        cpu0 = proc_cpu(backend) + time.process_time()
        t0 = time.perf_counter()
        with conn.transaction(), conn.cursor() as cur:
            # CSV with quote and delimiter bytes that never occur in JSON text: lines go in raw.
            sql = "COPY raw_events FROM STDIN (FORMAT csv, QUOTE e'\\x01', DELIMITER e'\\x02')"
            with cur.copy(sql) as copy, path.open("rb") as f:
                while block := f.read(1 << 20):
                    copy.write(block)
        wall = time.perf_counter() - t0
        return wall, proc_cpu(backend) + time.process_time() - cpu0


class RssSampler:
    """Peak RSS of a process and its descendants (sum), sampled every 100 ms from /proc."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak, self.peak_main = pid, 0, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _tree(self) -> list[int]:
        children: dict[int, list[int]] = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                with contextlib.suppress(OSError):
                    stat = Path(f"/proc/{entry}/stat").read_text()
                    ppid = int(stat.rsplit(")", 1)[1].split()[1])
                    children.setdefault(ppid, []).append(int(entry))
        out, todo = [], [self.pid]
        while todo:
            pid = todo.pop()
            out.append(pid)
            todo.extend(children.get(pid, []))
        return out

    @staticmethod
    def _rss(pid: int) -> int:
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        return 0

    def _run(self) -> None:
        while not self._stop.wait(0.1):
            main = self._rss(self.pid)
            total = sum(self._rss(p) for p in self._tree())
            self.peak, self.peak_main = max(self.peak, total), max(self.peak_main, main)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def run_cli(args: list[str], url: str) -> tuple[float, RssSampler, str, float]:
    """Run the CLI: (wall s, RSS sampler, output, CPU s of it and its worker processes)."""
    env = {**os.environ, "TRACELAKE_DATABASE_URL": url, "TRACELAKE_PSEUDONYM_KEY": KEY}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [*TRACELAKE, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    sampler = RssSampler(proc.pid)
    out, _ = proc.communicate()
    elapsed = time.perf_counter() - t0
    sampler.stop()
    if proc.returncode not in (0, 1):
        raise SystemExit(f"tracelake {' '.join(args)} failed:\n{out.decode()[-3000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return elapsed, sampler, out.decode(), cpu


SIZE_SQL = """
SELECT c.relname, pg_total_relation_size(c.oid)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND c.relname <> 'alembic_version'
"""


# The log and what it needs (everything else is a projection, rebuildable from the log).
# events is partitioned (0008): its size is its partitions' (events_pYYYY_MM, events_default).
LOG_TABLES = {
    "quarantine",
    "redaction_reports",
    "trace_contexts",
    "event_chain",
    "chain_anchors",
    "chain_removed",
    "verify_checkpoints",
    "subject_secrets",
    "erasures",
    "retention_guard",
}


def _is_log(name: str) -> bool:
    return name == "events" or name.startswith("events_") or name in LOG_TABLES


def sizes(url: str) -> dict[str, int]:
    with psycopg.connect(libpq(url), autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
        return {name: int(size) for name, size in conn.execute(SIZE_SQL)}


def plain_read(url: str) -> tuple[float, int]:
    store = open_store(url)
    try:
        t0 = time.perf_counter()
        n = sum(1 for _ in store.iter_all())
        return time.perf_counter() - t0, n
    finally:
        store.dispose()


@contextlib.contextmanager
def database() -> Iterator[str]:
    with scratch_database("tl_bench_e2e") as url:
        yield url


def one_size(n: int, args: argparse.Namespace) -> dict[str, float]:
    path = corpus(Path(args.cache), n, args.seed)
    lines = sum(1 for _ in path.open("rb"))
    mb = path.stat().st_size / 1e6
    print(f"\nN = {lines:,} lines ({mb:.0f} MB, {path.stat().st_size / lines:.0f} bytes/line)")
    with database() as url:
        quiesce(url)
        floor1, fcpu1 = raw_copy(url, path)
        quiesce(url)
        ingest_s, rss, out, icpu = run_cli(["ingest", "--json", str(path)], url)
        quiesce(url)
        floor2, fcpu2 = raw_copy(url, path)
        floor, fcpu = (floor1 + floor2) / 2, (fcpu1 + fcpu2) / 2
        print(
            f"  raw COPY floor    : {lines / floor:>9,.0f} lines/s  ({floor1:.1f} s, {floor2:.1f} s)"
            f"  CPU {fcpu / lines * 1e6:.0f} us/line (client + server backend)"
        )
        print(
            f"  tracelake ingest  : {lines / ingest_s:>9,.0f} lines/s  ({ingest_s:.1f} s)"
            f"  ratio {floor / ingest_s:.2f}x of the floor;"
            f"  CPU {icpu / lines * 1e6:.0f} us/line (main + workers; server not counted)"
        )
        summary = json.loads(out[out.index("{") :]) if "{" in out else {}
        print(f"    {summary}")
        print(
            f"    peak RSS: {rss.peak / 2**20:.0f} MiB (all processes), main {rss.peak_main / 2**20:.0f} MiB"
        )
        read_s, stored = plain_read(url)
        print(f"  plain read        : {stored / read_s:>9,.0f} events/s ({read_s:.1f} s)")
        result = {
            "lines": lines,
            "floor_s": floor,
            "ingest_s": ingest_s,
            "ratio": floor / ingest_s,
            "floor_cpu_us": fcpu / lines * 1e6,
            "ingest_cpu_us": icpu / lines * 1e6,
            "us_per_event": ingest_s / lines * 1e6,
            "rss_mib": rss.peak / 2**20,
            "read_s": read_s,
        }
        if not args.skip_project:
            project_s, prss, _, _ = run_cli(["project"], url)
            print(
                f"  tracelake project : {stored / project_s:>9,.0f} events/s ({project_s:.1f} s)"
                f"  ratio {read_s / project_s:.2f}x of the plain read, peak RSS {prss.peak / 2**20:.0f} MiB"
            )
            promote_s, _, _, _ = run_cli(["promote"], url)
            print(f"  tracelake promote : {promote_s:.1f} s")
            result.update(project_s=project_s, promote_s=promote_s)
        sz = sizes(url)
        raw = sz.pop("raw_events")
        mine = sum(sz.values())
        log = sum(size for name, size in sz.items() if _is_log(name))
        print(f"  sizes: raw jsonb table {raw / 2**20:.0f} MiB")
        print(
            f"         tracelake, log (events, quarantine, interned reports and contexts, chain,"
            f" secrets) {log / 2**20:.0f} MiB  ratio {log / raw:.2f}x"
        )
        print(f"         tracelake, everything {mine / 2**20:.0f} MiB  ratio {mine / raw:.2f}x")
        for name, size in sorted(sz.items(), key=lambda kv: -kv[1])[:8]:
            print(f"           {name:<28} {size / 2**20:8.1f} MiB  {size / lines:6.0f} bytes/event")
        result.update(log_ratio=log / raw, all_ratio=mine / raw)
        return result


def _build(cli: str) -> str:
    """Whether the measured tracelake runs its scrubber compiled (a wheel) or as Python."""
    python = Path(cli).absolute().parent / "python"  # not resolved: the venv's python
    code = "import tracelake.scrub.walk as w; print(w.__file__)"
    found = subprocess.run([str(python), "-c", code], capture_output=True, text=True, cwd="/")
    where = found.stdout.strip()
    return "compiled scrubber" if where.endswith(".so") else f"pure Python ({where or '?'})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,300000")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cache", default="/tmp/tracelake-bench")
    parser.add_argument("--skip-project", action="store_true")
    parser.add_argument(
        "--cli",
        help="the tracelake command to measure (default: this venv's, an editable install; "
        "bench/compiled_venv.sh makes .venv-compiled, the wheel with its compiled scrubber)",
    )
    args = parser.parse_args()
    if args.cli:
        TRACELAKE[:] = [str(Path(args.cli).absolute())]
    print(f"machine: {platform.machine()} cpus={os.cpu_count()} python {platform.python_version()}")
    print(f"tracelake: {TRACELAKE[0]} ({_build(TRACELAKE[0])})")
    with contextlib.suppress(OSError):
        print(f"load average at start: {os.getloadavg()}")
    table = [one_size(int(n), args) for n in args.sizes.split(",")]
    print(
        "\n        N  floor l/s  ingest l/s  ratio  wall us/ev  CPU us/ev  CPU vs first"
        "  floor CPU us  peak RSS  log size  all size"
    )
    first = table[0]["ingest_cpu_us"]
    for r in table:
        print(
            f"{r['lines']:>9,} {r['lines'] / r['floor_s']:>10,.0f} {r['lines'] / r['ingest_s']:>11,.0f}"
            f"  {r['ratio']:.2f}x {r['us_per_event']:>10.0f} {r['ingest_cpu_us']:>10.0f}"
            f"  {r['ingest_cpu_us'] / first:>11.2f}x {r['floor_cpu_us']:>12.0f}"
            f"  {r['rss_mib']:>6.0f}MiB  {r['log_ratio']:>7.2f}x  {r['all_ratio']:>7.2f}x"
        )


if __name__ == "__main__":
    main()
