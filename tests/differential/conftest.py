"""After a run of the differential tests: how many cases each judge took, and the cases no judge took (onnxruntime
lacks their type and they give no cast or spec value), per operator and element type. That count must be zero:
each such case also fails its batch."""
from __future__ import annotations

import re
from collections import Counter


def pytest_terminal_summary(terminalreporter) -> None:
    judges: Counter[str] = Counter()
    unjudged: Counter[tuple[str, str]] = Counter()
    for kind in ("passed", "failed"):
        for report in terminalreporter.stats.get(kind, []):
            properties = dict(getattr(report, "user_properties", ()))
            if getattr(report, "when", "") != "call" or "judges" not in properties:
                continue
            op = re.sub(r"-\d+$", "", report.nodeid.rsplit("[", 1)[-1].rstrip("]"))
            for judge, count in properties["judges"].items():
                if judge.startswith("unjudged "):
                    unjudged[(op, judge.split(" ", 1)[1])] += count
                else:
                    judges[judge] += count
    if not judges and not unjudged:
        return
    write = terminalreporter.write_line
    write("differential cases by judge: " + ", ".join(f"{judge} {n:,}" for judge, n in sorted(judges.items()))
          + f"; unjudged {sum(unjudged.values())}")
    for (op, dtype), count in sorted(unjudged.items()):
        write(f"  unjudged: {op} {dtype}: {count}")
