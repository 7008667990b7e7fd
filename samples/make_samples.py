"""Write the sample matches of samples/ by engine self-play (deterministic: fixed seeds).

    .venv/bin/python samples/make_samples.py [OUTPUT_DIR]

Each match is a short 3-point match played by digitise.game.selfplay; the
seeds were chosen (with play_match_with and a search for the fewest boards)
so that the two matches together hold doubles, takes, a drop, dances, a
closed-out turn and a resignation.
"""

from __future__ import annotations

import sys
from pathlib import Path

from digitise.game.selfplay import SelfPlayOptions, play_match_events
from digitise.notation.mat import format_mat

SAMPLES: dict[str, tuple[int, SelfPlayOptions]] = {
    # Game 1: a double taken, a redouble dropped; game 2 (Crawford): a resignation. Dances in both.
    "alice-bruno": (212, SelfPlayOptions(
        length=3, players=("Alice", "Bruno"), force=frozenset({"double", "take", "drop", "resign"}),
        metadata=(("Event", "digitise samples"), ("EventDate", "2026.11.21"), ("Round", "1")))),
    # One gammon game: a double taken, dances and a turn closed out on the bar (no board for it).
    "chen-dana": (111, SelfPlayOptions(
        length=3, players=("Chen", "Dana"),
        metadata=(("Event", "digitise samples"), ("EventDate", "2026.11.21"), ("Round", "2")))),
}


def main(argv: list[str]) -> int:
    folder = Path(argv[0]) if argv else Path(__file__).resolve().parent
    folder.mkdir(parents=True, exist_ok=True)
    for name, (seed, options) in SAMPLES.items():
        match, events = play_match_events(seed, options)
        (folder / f"{name}.mat").write_text(format_mat(match), encoding="utf-8")
        print(f"{name}.mat: seed {seed}, {len(match.games)} games, events: {', '.join(sorted(events))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
