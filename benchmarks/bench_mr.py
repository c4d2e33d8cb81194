"""A merge request's plan, end to end: the real `hypergov plan --base main --markdown mr.md` as a
subprocess, after one project's budget changed, in a 10-project and a 1,000-project org.

Per org size: the synthetic org (`benchmarks.synthetic`) is committed on `main` of a fresh Git
repository with a `hypergov.yaml` pointing at the embedded endpoint (seeded with the org's
clusters); the state directory is warmed by one run of the same command (providers installed,
the affected stack initialised); then the command is timed, best of `--repeat`. The goal is a
cost that does not grow with the org: under 10 s at 1,000 projects and within 1.3x of the
10-project org. Also recorded: where the time goes (`benchmarks.mr_phases`, one more run) and the
import time (`python -X importtime`, one more run). `--compare DIR` times another checkout (e.g.
the code before a change) in turns with this one, on the same repository and endpoint.

Run: `python -m benchmarks.bench_mr [--projects 10 1000] [--repeat 3] [--compare DIR]`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import git
import yaml

from benchmarks.common import print_table, write_results
from benchmarks.synthetic import generate_org, one_budget_changed
from embedded_aws import EmbeddedAwsProcess
from hypergov.tree_files import write_tree_dir

REPO_ROOT = Path(__file__).resolve().parent.parent
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-west-2"}
COMMAND = ["plan", "--base", "main", "--markdown", "mr.md"]
EXIT_CHANGES = 2  # `hypergov plan`: changes planned


def console_script(code: Path) -> tuple[str, ...]:
    """`python` arguments that start checkout `code`'s `hypergov` as its console script does
    (read from its pyproject.toml: the entry point moves when the layout does)."""
    target = tomllib.loads((code / "pyproject.toml").read_text())["project"]["scripts"]["hypergov"]
    module, function = target.split(":")
    return ("-c", f"from {module} import {function}; {function}()")


# How the command is started: as the console script does; under the phase timers; reporting imports.
HYPERGOV = console_script(REPO_ROOT)
PHASED = ("-m", "benchmarks.mr_phases")
IMPORTTIME = ("-X", "importtime", *HYPERGOV)


def clusters_for(projects: int) -> int:
    """The issue's org has 1,000 projects on 20 clusters: one cluster per 50 projects, at least 2."""
    return max(2, projects // 50)


def make_org_repo(root: Path, *, projects: int) -> Path:
    """The synthetic org committed on `main` under `config/`, and a `hypergov.yaml` beside it."""
    write_tree_dir(generate_org(projects=projects, clusters=clusters_for(projects), seed=11), root / "config")
    repo = git.Repo.init(root, initial_branch="main")
    repo.index.add([str(p.relative_to(root)) for p in sorted((root / "config").rglob("*")) if p.is_file()])
    repo.index.commit("base")
    return root / "config"


def write_settings(root: Path, *, endpoint_url: str, state_dir: Path) -> None:
    settings = {"engine": "terraform", "config_dir": "config", "state_dir": str(state_dir),
                "aws": {"endpoint_url": endpoint_url, "max_retries": 3}}
    (root / "hypergov.yaml").write_text(yaml.safe_dump(settings, sort_keys=False))


def change_one_budget(config: Path) -> str:
    """Raise the first project's budget in the working tree; returns its tree path."""
    files = {str(p.relative_to(config)): p.read_bytes() for p in config.rglob("*.yaml")}
    changed, path = one_budget_changed(files)
    (config / path).write_bytes(changed[path])
    return path


def command_env(code: Path = REPO_ROOT, *, state_dir: Path | None = None,
                extra: dict[str, str] | None = None) -> dict[str, str]:
    """The code of checkout `code` (not whichever hypergov is installed), the repo's settings
    file, and `state_dir` instead of the one it names."""
    # Bytecode is written and used, as for an installed hypergov (pip compiles it at install): a
    # command run with PYTHONDONTWRITEBYTECODE compiles its ~230 modules anew, ~0.3 s every time.
    env = {k: v for k, v in os.environ.items() if not k.startswith("HYPERGOV_") and k != "PYTHONDONTWRITEBYTECODE"}
    env.update(CREDENTIALS)
    env["PYTHONPATH"] = str(code)
    if state_dir is not None:
        env["HYPERGOV_STATE_DIR"] = str(state_dir)
    return {**env, **(extra or {})}


def run_command(root: Path, env: dict[str, str], *, how: tuple[str, ...] = HYPERGOV,
                command: Sequence[str] = COMMAND) -> tuple[float, str]:
    """Wall seconds of one run of the command, and its stderr; exits on an unexpected status."""
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, *how, *command], cwd=root, env=env, capture_output=True, text=True,
                          check=False)
    wall = time.perf_counter() - start
    if proc.returncode != EXIT_CHANGES:
        sys.exit(f"`hypergov {' '.join(command)}` exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr}")
    return wall, proc.stderr


def affected_count(stderr: str) -> int:
    line = next(line for line in stderr.splitlines() if "stack(s) affected" in line)
    return int(line.split()[0])


def import_seconds(stderr: str) -> float:
    """Sum of the self times `-X importtime` reports (microseconds), in seconds."""
    total = 0
    for line in stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            self_us = line.split(":", 1)[1].split("|")[0].strip()
            total += int(self_us) if self_us.isdigit() else 0
    return total / 1e6


def measure(projects: int, *, repeat: int, compare: Path | None) -> dict[str, Any]:
    """Best of `repeat` for this checkout and, with `compare`, for that one too, their runs
    taking turns (a shared machine's load then weighs on both alike), each on its own state."""
    with tempfile.TemporaryDirectory(prefix=f"bench-mr-{projects}-") as tmp:
        root = Path(tmp) / "repo"
        config = make_org_repo(root, projects=projects)
        endpoint = EmbeddedAwsProcess(seed_config=config).start()
        try:
            write_settings(root, endpoint_url=endpoint.endpoint_url, state_dir=Path(tmp) / "state")
            changed = change_one_budget(config)
            runs = {"this": (command_env(state_dir=Path(tmp) / "state"), HYPERGOV)}
            if compare is not None:
                runs["compare"] = (command_env(compare, state_dir=Path(tmp) / "state-compare"), console_script(compare))
            # warm-up: the providers installed, the affected stack initialised
            warm = {name: run_command(root, env, how=how) for name, (env, how) in runs.items()}
            walls: dict[str, list[float]] = {name: [] for name in runs}
            for _ in range(repeat):
                for name, (env, how) in runs.items():
                    walls[name].append(run_command(root, env, how=how)[0])
            phases_file = Path(tmp) / "phases.json"
            run_command(root, command_env(state_dir=Path(tmp) / "state",
                                          extra={"HYPERGOV_BENCH_PHASES": str(phases_file)}), how=PHASED)
            _, importtime = run_command(root, runs["this"][0], how=IMPORTTIME)
        finally:
            endpoint.stop()
        phases = json.loads(phases_file.read_text())
    result = {"projects": projects, "clusters": clusters_for(projects), "changed": changed,
              "affected": affected_count(warm["this"][1]), "warm_up_s": warm["this"][0], "wall_s": min(walls["this"]),
              "walls_s": walls["this"], "imports_s": import_seconds(importtime), **phases}
    if compare is not None:
        result.update({"compare_wall_s": min(walls["compare"]), "compare_walls_s": walls["compare"],
                       "compare_affected": affected_count(warm["compare"][1])})
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--projects", type=int, nargs="+", default=[10, 1000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--compare", type=Path, help="another checkout of hypergov (e.g. `git archive` of the "
                        "commit before a change), timed in turns with this one")
    args = parser.parse_args()
    compare = args.compare.resolve() if args.compare else None
    results = [measure(n, repeat=args.repeat, compare=compare) for n in args.projects]
    headers = ["projects", "clusters", "wall s", "affected stacks", "imports s"]
    rows: list[list[object]] = [[r["projects"], r["clusters"], r["wall_s"], r["affected"], r["imports_s"]]
                                for r in results]
    if compare is not None:
        headers += [f"wall s ({compare.name})", "speed-up"]
        for row, r in zip(rows, results, strict=True):
            row += [r["compare_wall_s"], f"{r['compare_wall_s'] / r['wall_s']:.2f}x"]
    print_table(f"`hypergov {' '.join(COMMAND)}`, one budget changed, warm state (best of {args.repeat})",
                headers, rows)
    for r in results:
        print_table(f"where the time goes at {r['projects']} projects (one more run, timed per phase)",
                    ["phase", "s", "calls"], [[name, p["s"], p["calls"]] for name, p in r["phases"].items()]
                    + [["start-up: imports before the command", r["setup_s"], 1]])
    payload: dict[str, Any] = {"command": ["hypergov", *COMMAND], "repeat": args.repeat,
                               "compare": str(compare) if compare else None, "results": results}
    if len(results) >= 2:
        ratio = results[-1]["wall_s"] / results[0]["wall_s"]
        payload["ratio_largest_over_smallest"] = ratio
        print(f"\n{results[-1]['projects']} / {results[0]['projects']} projects: {ratio:.2f}x "
              "(goal: under 10 s and within 1.3x)")
        if compare is not None:
            payload["compare_ratio_largest_over_smallest"] = (results[-1]["compare_wall_s"]
                                                              / results[0]["compare_wall_s"])
    write_results("mr", payload)


if __name__ == "__main__":
    main()
