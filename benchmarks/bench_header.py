"""How well the header's match length and player names come out of saved ``bench_end_to_end.py`` runs.

Reads each run's saved readings (``LEVEL/out/NAME.report.readings.json``)
and the truth (``truth/NAME.mat``), and counts: name fields read right by
OCR, one page at a time; matches whose two names the header vote gets right
(:func:`digitise.solve.header.read_header`), without and with a roster of every
player of the runs (``--roster``); matches whose length it gets right, and
how surely.

    .venv/bin/python benchmarks/bench_header.py /tmp/e2e-norm /tmp/e2e-norm9100 /tmp/e2e-pc2 /tmp/e2e-real2
"""

from __future__ import annotations

import argparse
import collections
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from digitise.game.record import MatchRecord
from digitise.notation.mat import read_mat_strict
from digitise.notation.readings import Readings, load_readings
from digitise.solve.header import read_header
from digitise.solve.length import LENGTH_AGREED, LENGTH_SURE


def saved_runs(folders: Sequence[Path]) -> list[tuple[str, Readings, MatchRecord]]:
    """(level/name, readings, truth) of every match a run folder holds."""
    out = []
    for folder in folders:
        for path in sorted(folder.glob("*/out/*.report.readings.json")):
            level = path.parent.parent
            truth = level.parent / "truth" if (level.parent / "truth").is_dir() else level / "truth"
            name = path.name.removesuffix(".report.readings.json")
            out.append((f"{folder.name}/{level.name}/{name}", load_readings(path), read_mat_strict(truth / f"{name}.mat")))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="bench_end_to_end.py --work folders")
    args = parser.parse_args(argv)
    matches = saved_runs(args.runs)
    roster = sorted({name for _, _, truth in matches for name in truth.players})
    fields = collections.Counter()
    counts = collections.Counter()
    lowest: list[tuple[float, float]] = []
    for _, readings, truth in matches:
        for page in readings.pages:
            for side, key in ((0, "player_bottom"), (1, "player_top")):
                value = page.header.get(key)
                if isinstance(value, dict):
                    fields["read"] += 1
                    fields["right"] += value.get("value") == truth.players[side]
        plain, listed = read_header(readings), read_header(readings, roster)
        counts["names right"] += tuple(plain.get("players") or ()) == truth.players
        with_roster = tuple(listed.get("players") or ())
        counts["names right with roster"] += with_roster == truth.players
        counts["names wrong entrant"] += bool(with_roster) and with_roster != truth.players and \
            all(name in roster for name in with_roster)
        counts["length right"] += plain.get("length") == truth.length
        if "length" in plain:
            lowest.append((plain["length_support"], plain["length_share"]))
            counts["length noted"] += plain["length_support"] < LENGTH_SURE or plain["length_share"] < LENGTH_AGREED
    n = len(matches)
    print(f"{n} matches, {len(roster)} players on the roster")
    print(f"name fields read right (OCR, one page): {fields['right']} of {fields['read']} "
          f"({fields['right'] / max(fields['read'], 1):.1%})")
    print(f"matches with both names right: {counts['names right']} of {n} without a roster, "
          f"{counts['names right with roster']} with it ({counts['names wrong entrant']} as a wrong entrant)")
    print(f"matches with the length right: {counts['length right']} of {n}; noted as unsure: {counts['length noted']}; "
          f"lowest summed confidence {min(lowest)[0] if lowest else '-'}, lowest share "
          f"{min(s for _, s in lowest) if lowest else '-'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
