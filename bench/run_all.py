"""Run every ``bench/bench_*.py`` and print their tables, one after another (``make bench``).

Each benchmark runs in its own Python process (so one's threads, caches and imports do not
disturb the next), with the arguments given here passed on (e.g. ``--quick`` where a script
takes it). A benchmark that fails is reported and the others still run; the exit status is
non-zero if any failed.
"""

from __future__ import annotations

import glob
import os
import subprocess
import sys
import time


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    here = os.path.dirname(os.path.abspath(__file__))
    scripts = sorted(glob.glob(os.path.join(here, "bench_*.py")))
    failed = []
    for path in scripts:
        name = os.path.basename(path)
        print(f"\n{'=' * 100}\n{name}\n{'=' * 100}", flush=True)
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, path, *argv], cwd=os.path.dirname(here))
        print(f"({name}: {time.perf_counter() - start:.1f} s)", flush=True)
        if proc.returncode != 0:
            failed.append(name)
    if failed:
        print(f"\nfailed: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
