"""The review page's first answer, with the first turn to review already drawn in it.

The page's script draws everything from the match's state. Fetched after the
page, that left a moment with nothing but "Loading…" on it; instead the
server puts the state in the page (the script reads it there and fetches
nothing) and draws the first turn to review (the list, the turn, its
picture, readings and candidates) as the script will, so the page shows it
from its first paint. The script then draws the page again from the same
state and takes over. Every text from the report is escaped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

#: Where the state and the drawn turn go in index.html.
_LIST = '<ol id="turns"></ol>'
_DETAIL = '<section id="detail">\n    <p class="empty">Loading…</p>\n  </section>'
_SCRIPTS = '<script src="/static/dom.js" defer></script>'
_LEGEND = re.compile(r'<template id="legend-template">\s*(.*?)\s*</template>', re.DOTALL)


def first_view(page: str, state: Mapping[str, Any]) -> str:
    """``page`` (index.html) with ``state`` in it and its first turn to review drawn."""
    turns = [t for t in state.get("turns") or [] if t.get("flagged") or t.get("corrected")]
    # "</script" or "<!--" in a name would end or upset the script element: every "<" (only ever inside a JSON
    # string) is written as its escape.
    data = json.dumps(state, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")
    page = page.replace(_SCRIPTS, f'<script id="initial-state" type="application/json">{data}</script>\n{_SCRIPTS}', 1)
    if not turns:
        return page
    turn = turns[0]
    players = (state.get("match") or {}).get("players")
    listed = "".join(_list_item(t, t is turn, players) for t in turns)
    page = page.replace(_LIST, f'<ol id="turns" role="listbox" aria-label="Flagged turns">{listed}</ol>', 1)
    found = _LEGEND.search(page)
    legend = found.group(1) if found else ""
    return page.replace(_DETAIL, f'<section id="detail" data-turn="{escape(str(turn["id"]))}">'
                                 f"{_detail(turn, players, legend)}</section>", 1)


def _side_name(players: Sequence[str] | None, side: Any) -> str:
    """"Alice (bottom)", as the page names a side."""
    index = {"bottom": 0, "top": 1}.get(side, -1)
    if index >= 0 and players and players[index]:
        return f"{players[index]} ({side})"
    return str(side or "nobody")


def _named(text: Any, players: Sequence[str] | None) -> str:
    return re.sub(r"^(bottom|top)\b", lambda m: _side_name(players, m.group(1)), str(text or ""))


def _list_item(turn: Mapping[str, Any], current: bool, players: Sequence[str] | None) -> str:
    classes = " ".join(c for c in ("turn", "flagged" if turn.get("flagged") else "",
                                   "corrected" if turn.get("corrected") else "",
                                   "changed" if turn.get("changed") else "", "current" if current else "") if c)
    where = f"{'G' + str(turn['game']) + ' ' if turn.get('game') else ''}p{turn['page']} b{turn['board']}"
    badge = '<span class="badge fix" title="corrected">fixed</span>' if turn.get("corrected") else ""
    return (f'<li class="{classes}" data-id="{escape(str(turn["id"]))}" role="option" '
            f'aria-selected="{"true" if current else "false"}" tabindex="{0 if current else -1}">'
            f'<span class="where">{escape(where)}</span><span class="what">{escape(_named(turn.get("text"), players))}'
            f"</span>{badge}</li>")


def _percent(value: Any, digits: int) -> str:
    return f"{float(value or 0) * 100:.{digits}f}%"


def _candidate_text(candidate: Mapping[str, Any], players: Sequence[str] | None) -> str:
    """As review.js's candidateText says a candidate."""
    who = f"{_side_name(players, candidate['player'])} " if candidate.get("player") else ""
    result = candidate.get("result") or {}
    winner = result.get("winner")
    action = candidate.get("action")
    if action == "resign" and winner:
        loser = "bottom" if winner == "top" else "top"
        return f"{who}{_side_name(players, loser)} resigns; {_side_name(players, winner)} wins {result.get('points')}"
    if action == "move":
        text = f"{who}{''.join(str(d) for d in candidate.get('dice') or [])}: {candidate.get('move') or '(no play)'}"
    else:
        text = f"{who}{action}"
    answer = candidate.get("answer")
    if action == "double" and answer:
        text += ", dropped" if answer == "drop" else ", taken"
    elif answer:
        text = f"the double before {'dropped' if answer == 'drop' else 'taken'}; {text}"
    if winner:
        text += f"; {_side_name(players, winner)} wins {result.get('points')}"
    return text


def _choices(turn: Mapping[str, Any], players: Sequence[str] | None) -> list[tuple[dict[str, Any], str]]:
    """The candidates as the page lists them: one choice per correction, nine at most."""
    seen: dict[str, dict[str, Any]] = {}
    out: list[tuple[dict[str, Any], str]] = []
    for candidate in turn.get("candidates") or []:
        text = _candidate_text(candidate, players)
        key = f"c:{candidate['correction']}" if candidate.get("correction") else f"t:{text}"
        if key in seen:
            seen[key]["probability"] = (seen[key].get("probability") or 0) + (candidate.get("probability") or 0)
            continue
        copy = dict(candidate)
        seen[key] = copy
        out.append((copy, text))
    return out[:9]


def _detail(turn: Mapping[str, Any], players: Sequence[str] | None, legend: str) -> str:
    who = _side_name(players, turn.get("player"))
    head = f"{'Game ' + str(turn['game']) + ' · ' if turn.get('game') else ''}page {turn['page']} board {turn['board']} · {who}"
    badges = ('<span class="badge flag">flagged</span>' if turn.get("flagged") else "") + (
        f'<span class="badge fix">corrected: {escape(str(turn.get("correction")))}</span>' if turn.get("corrected") else "")
    parts = [
        '<p id="instruction" class="instruction">'
        + ("Corrected here. " if turn.get("corrected") else "")
        + "Is this what was written? <kbd>Enter</kbd> accepts, <kbd>1</kbd>-<kbd>9</kbd> picks another"
        + " · <kbd>m</kbd> types a move" + (" · <kbd>u</kbd> undoes" if turn.get("corrected") else "") + "</p>",
        f"<h2>{escape(head)}{badges}</h2>",
        (f'<p class="reading-now">Read as <strong id="current-reading">{escape(_named(turn.get("text"), players))}'
        f"</strong> · confidence {_percent(turn.get('confidence'), 1)}</p>"),
    ]
    reasons = turn.get("reasons") or []
    if reasons:
        actions = [str(a) for a in turn.get("reason_actions") or []]
        actions += [""] * (len(reasons) - len(actions))
        parts.append('<ul class="reasons">' + "".join(
            (f'<li title="{escape(a)}">' if a else "<li>") + f"{escape(str(r))}</li>"
            for r, a in zip(reasons, actions, strict=False)) + "</ul>")
        todo = _todo(actions)
        if todo:
            parts.append(f'<p class="todo">What to do: {escape(todo)}</p>')
    if turn.get("has_crop"):
        parts.append(f'<div class="crop-box"><div class="crop-frame"><img class="crop" '
                     f'src="api/crop/{int(turn["page"])}/{int(turn["board"])}.png" '
                     f'alt="page {int(turn["page"])} board {int(turn["board"])} as scanned">'
                     '<div id="cell-mark" class="cell-mark" hidden></div></div></div>')
    else:
        parts.append('<p class="empty crop">No picture of this board.</p>')
    choices = _choices(turn, players)
    if choices:
        items = "".join(
            f'<li class="candidate{" picked" if i == 0 else ""}{"" if c.get("correction") else " unusable"}" '
            f'data-index="{i}" role="option" aria-selected="{"true" if i == 0 else "false"}">'
            f'<kbd>{i + 1}</kbd><span class="move">{escape(text)}</span>'
            f'<span class="prob">{_percent(c.get("probability"), 1)}</span></li>'
            for i, (c, text) in enumerate(choices))
        candidates = f'<ol class="candidates" role="listbox" aria-label="Candidates">{items}</ol>'
    else:
        candidates = '<p class="empty">No other candidates: type the correction.</p>'
    parts.append(f'<div class="row"><div class="pick"><h3>Candidates</h3>{candidates}</div>'
                 f'<div class="readings"><h3>Readings</h3>{_cells(turn)}{legend}</div></div>')
    return "".join(parts)


def _todo(actions: Sequence[str]) -> str:
    """The actions for a turn's reasons, each once, in order: the line under its reasons (as review.js says it)."""
    return " ".join(dict.fromkeys(a for a in actions if a))


def _cells(turn: Mapping[str, Any]) -> str:
    rows = []
    for name, readings in (turn.get("cells") or {}).items():
        spans = "".join(
            f'<span class="reading{" top" if i == 0 else ""}">'
            f"{escape(''.join(str(d) for d in r.get('digits') or []) or '∅')} {_percent(r.get('probability'), 0)}</span>"
            for i, r in enumerate(readings))
        rows.append(f'<tr><th data-cell="{escape(str(name))}">{escape(str(name))}</th><td>{spans}</td></tr>')
    marks = turn.get("marks") or {}
    rows += [f"<tr><th>{k}</th><td>{_percent(marks[k], 0)}</td></tr>" for k in ("crossed", "arrow", "letters")
             if k in marks]
    if not rows:
        return '<p class="empty">No readings for this board.</p>'
    return f'<table class="cells"><tbody>{"".join(rows)}</tbody></table>'
