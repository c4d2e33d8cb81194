"""`python -m benchmarks` (`make bench`): every benchmark, one after the other; each prints its
table and writes `benchmarks/results/<name>.json`. Name some to run only those, e.g.
`python -m benchmarks validate capacity`."""

from __future__ import annotations

import subprocess
import sys

ALL = ("validate", "containment", "capacity", "usage_accounting", "embedded_aws", "graph", "plan", "mr", "drift",
       "scan_plan", "takeover")


def main() -> None:
    chosen = sys.argv[1:] or list(ALL)
    unknown = [n for n in chosen if n not in ALL]
    if unknown:
        sys.exit(f"unknown benchmark(s): {', '.join(unknown)}; choose from {', '.join(ALL)}")
    failed = []
    for name in chosen:
        print(f"\n=== bench_{name} ===", flush=True)
        if subprocess.run([sys.executable, "-m", f"benchmarks.bench_{name}"], check=False).returncode:
            failed.append(name)
    if failed:
        sys.exit(f"failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
