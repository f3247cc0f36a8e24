"""The benchmark table as markdown: one row per benchmark, shared by run.py and the sections run alone
(hidden.py, why.py), so no section imports run.py back."""
from __future__ import annotations


def markdown(rows: list[dict]) -> str:
    lines = ["| benchmark | ours | reference (same run) | ratio | target | met |", "|---|---|---|---|---|---|"]
    for row in rows:
        ours = "—" if row["ours ms"] is None else f"{row['ours ms']:,.1f} ms"
        note = f" ({row['note']})" if row.get("note") else ""
        lines.append(f"| {row['benchmark']}{note} | {ours} | {row['reference']} | {row['ratio']} | "
                     f"{row['target']} | {'yes' if row['met'] else '**no**'} |")
    return "\n".join(lines)
