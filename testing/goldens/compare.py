#!/usr/bin/env python3
"""How the kube-scheduler v1.34 goldens differ from the v1.30 corpus, scenario by scenario.

    python3 testing/goldens/compare.py [V134_DIR [CORPUS_DIR]]

Attempts are matched by (pod, attempt). Each difference is named by the v1.34 change that explains it
when it is one of the known ones (message texts, Fit's unresolvable status, DynamicResources'
PostFilter text, BalancedAllocation's PreScore skip, VolumeBinding's dropped PreFilterResult);
anything else is printed as it is, old -> new. Standard library only.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
TAINT_130 = re.compile(r"node\(s\) had untolerated taint \{[^}]*\}")
TAINT_134 = "node(s) had untolerated taint(s)"
RWOP_130 = "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
RWOP_134 = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"
)
VB_130 = "node(s) had volume node affinity conflict"
VB_134 = "node(s) didn't match PersistentVolume's node affinity"
DRA = "no new claims to deallocate, "


def texts_130_to_134(text: str) -> str:
    """A v1.30 reason in its v1.34 wording (texts that changed and nothing else)."""
    return TAINT_130.sub(TAINT_134, text).replace(RWOP_130, RWOP_134).replace(VB_130, VB_134)


def parse_message(msg: str | None) -> tuple[Counter, str | None, str]:
    """(reason histogram, PreFilter message, PostFilter part) of a FailedScheduling text."""
    if not msg:
        return Counter(), None, ""
    m = re.match(r"0/\d+ nodes are available: (.*)$", msg, re.S)
    if not m:
        return Counter(), msg, ""
    rest = m.group(1)
    if rest.startswith(("preemption: ", DRA)):
        body, post = "", rest
    else:
        m = re.match(r"(.*?)\.(?: (.*))?$", rest, re.S)
        if not m:
            return Counter(), msg, ""
        body, post = m.group(1), (m.group(2) or "").strip()
    hist: Counter = Counter()
    parts = re.split(r", (?=\d+ )", body)
    if all(re.match(r"\d+ ", p) for p in parts):
        for p in parts:
            n, reason = p.split(" ", 1)
            hist[texts_130_to_134(reason)] += int(n)
        return hist, None, post
    return Counter(), texts_130_to_134(body), post


def explain_message(old: str | None, new: str | None) -> list[str]:
    out = []
    oh, opre, opost = parse_message(old)
    nh, npre, npost = parse_message(new)
    if oh != nh or opre != npre:
        out.append(f"filter summary: {_body(old)!r} -> {_body(new)!r}")
    if opost != npost:
        if npost == "not found":
            out.append(
                "PostFilter: DynamicResources had no PreFilter state (a PreFilter returned "
                "UnschedulableAndUnresolvable first): '. not found' replaces the preemption text"
            )
        elif npost.startswith(DRA) and npost[len(DRA) :] == opost:
            out.append("PostFilter: DynamicResources prefix 'no new claims to deallocate, '")
        elif npost.startswith(DRA):
            out.append(
                f"PostFilter: DynamicResources prefix; preemption {opost[len('preemption: ') :]!r} -> "
                f"{npost[len(DRA) + len('preemption: ') :]!r}"
            )
        else:
            out.append(f"PostFilter: {opost!r} -> {npost!r}")
    return out


def _body(msg: str | None) -> str:
    if not msg:
        return ""
    m = re.match(r"0/\d+ nodes are available: (.*)$", msg, re.S)
    if not m:
        return msg
    if m.group(1).startswith(("preemption: ", DRA)):
        return ""
    return m.group(1).split(". ", 1)[0].rstrip(".") + "."


def explain_filter(old: dict, new: dict) -> list[str]:
    kinds: Counter = Counter()
    for node in sorted(set(old) | set(new)):
        o, n = old.get(node), new.get(node)
        if o == n:
            continue
        if (
            o
            and n
            and o["plugin"] == n["plugin"]
            and o["code"] == n["code"]
            and [texts_130_to_134(r) for r in o["reasons"]] == n["reasons"]
        ):
            kinds[
                f"{n['plugin']} reason text: {o['reasons'][0]!r} -> {n['reasons'][0]!r}"
                if TAINT_130.search(o["reasons"][0]) is None
                else f"{n['plugin']} reason text (taint)"
            ] += 1
        elif (
            o
            and n
            and o["plugin"] == n["plugin"] == "NodeResourcesFit"
            and o["reasons"] == n["reasons"]
            and (o["code"], n["code"]) == ("Unschedulable", "UnschedulableAndUnresolvable")
        ):
            kinds["NodeResourcesFit UnschedulableAndUnresolvable (a request exceeds allocatable)"] += 1
        elif o and n and o.get("code") == "Skipped":
            kinds[f"outside a v1.30 PreFilterResult, now {n['plugin']} {n['code']} {n['reasons']}"] += 1
        else:
            kinds[f"{json.dumps(o)} -> {json.dumps(n)}"] += 1
    return [f"filter x{c}: {k}" for k, c in kinds.items()]


def explain_scores(old: dict, new: dict) -> list[str]:
    out: Counter = Counter()
    for node in sorted(set(old) | set(new)):
        o, n = old.get(node) or {}, new.get(node) or {}
        for plugin in sorted(set(o) | set(n)):
            if o.get(plugin) == n.get(plugin):
                continue
            if plugin not in n and plugin == "NodeResourcesBalancedAllocation":
                out["NodeResourcesBalancedAllocation absent (PreScore skips a pod requesting 0 cpu and memory)"] += 1
            else:
                out[f"{plugin} {node}: {o.get(plugin)} -> {n.get(plugin)}"] += 1
    return [
        k if c == 1 or not k.startswith("NodeResourcesBalancedAllocation absent") else f"{k}, {c} nodes"
        for k, c in out.items()
    ]


def compare_attempt(o: dict, n: dict) -> list[str]:
    lines: list[str] = []
    for key in ("result", "node", "profile"):
        if o.get(key) != n.get(key):
            lines.append(f"{key}: {o.get(key)} -> {n.get(key)}")
    if o.get("message") != n.get("message"):
        lines += explain_message(o.get("message"), n.get("message"))
    if o["filter"] != n["filter"]:
        lines += explain_filter(o["filter"], n["filter"])
    if sorted(o["feasible"]) != sorted(n["feasible"]):
        lines.append(f"feasible: {o['feasible']} -> {n['feasible']}")
    if o["scores"] != n["scores"]:
        lines += explain_scores(o["scores"], n["scores"])
    if o["total"] != n["total"] and o["scores"] == n["scores"]:
        lines.append(f"total: {o['total']} -> {n['total']}")
    if o["ties"] != n["ties"]:
        lines.append(f"ties: {o['ties']} -> {n['ties']}")
    for key in ("nominatedNode", "victims", "startNominatedNode"):
        if o.get(key) != n.get(key):
            lines.append(f"{key}: {o.get(key)} -> {n.get(key)}")
    if bool(o.get("looping")) != bool(n.get("looping")):
        lines.append("looping in v1.30, not in v1.34" if o.get("looping") else "looping in v1.34, not in v1.30")
    return lines


def compare(name: str, old: dict, new: dict) -> list[str]:
    lines = []
    olds = {(a["pod"], a["attempt"]): a for a in old["attempts"]}
    news = {(a["pod"], a["attempt"]): a for a in new["attempts"]}
    order = [(a["pod"], a["attempt"]) for a in new["attempts"]]
    order += [k for k in ((a["pod"], a["attempt"]) for a in old["attempts"]) if k not in news]
    for key in order:
        o, n = olds.get(key), news.get(key)
        where = f"{key[0]}#{key[1]}"
        if o is None and n is not None:
            what = n["result"] + (f" on {n['node']}" if n.get("node") else f": {n.get('message')}")
            lines.append(f"  {where}: only in v1.34 ({what})")
            continue
        if n is None and o is not None:
            lines.append(f"  {where}: only in v1.30 ({o['result']}{' on ' + o['node'] if o.get('node') else ''})")
            continue
        if o is not None and n is not None:
            lines += [f"  {where}: {line}" for line in compare_attempt(o, n)]
    oseq = [(a["pod"], a["attempt"]) for a in old["attempts"]]
    nseq = [(a["pod"], a["attempt"]) for a in new["attempts"]]
    common = [k for k in nseq if k in olds]
    if common != [k for k in oseq if k in news]:
        lines.append("  attempt order differs")
    for field in ("final", "nominated", "deleted", "neverAttempted", "warnings"):
        if old.get(field) != new.get(field):
            if field == "final":
                for pod in sorted(set(old["final"]) | set(new["final"])):
                    if old["final"].get(pod) != new["final"].get(pod):
                        lines.append(f"  final {pod}: {old['final'].get(pod)} -> {new['final'].get(pod)}")
            else:
                lines.append(f"  {field}: {old.get(field)} -> {new.get(field)}")
    return lines


def main(argv: list[str]) -> int:
    new_dir = Path(argv[1]) if len(argv) > 1 else HERE / "v1.34"
    corpus = Path(argv[2]) if len(argv) > 2 else HERE.parents[2] / "shared" / "conformance"
    same: list[str] = []
    only_new: list[str] = []
    changed: list[tuple[str, list[str]]] = []
    for path in sorted(new_dir.glob("*.json")):
        name = path.stem
        ref = corpus / name / "golden.json"
        if not ref.is_file():
            only_new.append(name)
            continue
        lines = compare(name, json.loads(ref.read_text()), json.loads(path.read_text()))
        if lines:
            changed.append((name, lines))
        else:
            same.append(name)
    print("# kube-scheduler v1.34.4 goldens against the v1.30.6 corpus\n")
    print("Generated by `compare.py` (run by `record.sh`); one line per difference, `pod#attempt: what`.\n")
    for name, lines in changed:
        print(f"## {name}\n")
        print("\n".join(f"- {line.strip()}" for line in lines))
        print()
    print(f"## Identical to v1.30 ({len(same)})\n\n{', '.join(same) or '-'}\n")
    print(f"## New scenarios, no v1.30 golden ({len(only_new)})\n\n{', '.join(only_new) or '-'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
