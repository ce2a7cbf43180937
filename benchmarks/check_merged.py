"""Check that merging findings (analyzer/places.py) only merged: every finding of an old
snapshot is covered by exactly one finding of the new one at the same place and rule.

    python benchmarks/check_merged.py OLD_DIR NEW_DIR

OLD_DIR and NEW_DIR are `compare_reports.py snapshot` folders, taken before and after. A place
is (run, path, line, column, rule): one run is `repo`, `generated` or one program of a corpus
(as `compare_reports.py` runs them), since a header's finding is kept once per run. For each
old finding, the new finding at its place must have a cost (wavefronts or sectors) at least
its own; every new finding must stand for at least one old one; and a new finding must equal
the old finding it took its values from in every field but `args.instances`, the last
`detail` line it adds, `instances`, `related` (call sites added), `fingerprint` (which
counts repeats, so it moves when repeats merge) and `path` (a header's finding moves to the
header's own entry, where the field is left out). Prints the counts; exit status 1 on a breach.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare_reports import PROGRAM_DEPTH

COSTS = ("wavefronts", "sectors")
# `path` is part of the place; it is written only when the finding is not in its own file's
# entry, so a header's finding kept in the header's entry loses it
MERGE_FIELDS = ("instances", "fingerprint", "related", "path")


def findings(folder: Path) -> dict[tuple, list[dict]]:
    """(run, path, line, column, code) -> the findings there, in snapshot order."""
    places: dict[tuple, list[dict]] = {}
    for snap in sorted(folder.glob("*.json")):
        entry = json.loads(snap.read_text())
        if "findings" not in entry:
            continue
        corpus = snap.name.split("__", 1)[0]
        parts = entry["path"].removeprefix("./").split("/")
        run = (
            (corpus, *parts[: PROGRAM_DEPTH.get(corpus, len(parts) - 1)])
            if corpus not in ("repo", "generated")
            else (corpus,)
        )
        for f in entry["findings"]:
            key = (run, f.get("path", entry["path"]), f["line"], f["column"], f["code"])
            places.setdefault(key, []).append(f)
    return places


def cost(f: dict) -> float:
    return next((f["args"][c] for c in COSTS if isinstance(f["args"].get(c), (int, float))), float("-inf"))


def same_but_merge(new: dict, old: dict) -> bool:
    a = {k: v for k, v in new.items() if k not in MERGE_FIELDS}
    b = {k: v for k, v in old.items() if k not in MERGE_FIELDS}
    a["args"] = {k: v for k, v in a["args"].items() if k != "instances"}
    if "instances" in new:
        a["detail"] = a["detail"][:-1]
    return a == b and all(r in new.get("related", []) for r in old.get("related", []))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old", type=Path)
    ap.add_argument("new", type=Path)
    args = ap.parse_args(argv)
    old, new = findings(args.old), findings(args.new)
    problems: list[str] = []
    for place, olds in old.items():
        news = new.get(place, [])
        if len(news) != 1:
            problems.append(f"{place}: {len(olds)} old findings, {len(news)} new")
            continue
        merged = news[0]
        if any(cost(merged) < cost(o) for o in olds):
            problems.append(f"{place}: cost {cost(merged)} below an old one")
        if not any(same_but_merge(merged, o) for o in olds):
            problems.append(f"{place}: no old finding has the new one's fields")
        if len(olds) > 1 and merged.get("instances") != len(olds):
            problems.append(f"{place}: instances {merged.get('instances')} for {len(olds)} old findings")
    problems += [f"{place}: new, covers no old finding" for place in new if place not in old]
    n_old = sum(len(v) for v in old.values())
    n_new = sum(len(v) for v in new.values())
    print(f"findings before: {n_old}, after: {n_new} ({len(old)} places); {len(problems)} problems")
    for problem in problems[:50]:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
