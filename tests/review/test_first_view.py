"""The review page's first answer (digitise.review.first_view): the state in it, the first turn drawn, all escaped."""

from __future__ import annotations

import json
import re
from pathlib import Path

from digitise.review.first_view import first_view
from digitise.review.server import STATIC_DIR
from digitise.review.session import ReviewSession

HOSTILE = "</script><script>alert(1)</script><!--"


def test_the_state_and_the_first_turn_are_in_the_page_and_nothing_from_the_report_is_markup(
        sample_report: Path) -> None:
    state = ReviewSession(sample_report, resolve=False).state()
    state["match"]["players"] = [HOSTILE, "Bob & <b>Co</b>"]
    state["turns"][1]["reasons"] = [HOSTILE]
    state["turns"][1]["reason_actions"] = [HOSTILE + '"']
    page = first_view((STATIC_DIR / "index.html").read_text(encoding="utf-8"), state)
    assert page.count("<script") == 3  # the state, dom.js, review.js: none from the report
    given = re.search(r'<script id="initial-state" type="application/json">(.*?)</script>', page, re.DOTALL)
    assert given is not None and json.loads(given.group(1)) == state
    said = "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;!--"
    assert f'<li title="{said}&quot;">{said}</li>' in page
    assert f'<p class="todo">What to do: {said}&quot;</p>' in page
    assert "<b>Co</b>" not in page
    detail = page[page.index('<section id="detail"'):]
    assert 'data-turn="p1b2"' in detail and "page 1 board 2 · Bob &amp; &lt;b&gt;Co&lt;/b&gt; (top)" in detail
    assert 'id="readings-legend"' in detail and "Loading…" not in detail


def test_with_nothing_flagged_the_page_only_carries_the_state(sample_report: Path) -> None:
    state = ReviewSession(sample_report, resolve=False).state()
    for turn in state["turns"]:
        turn["flagged"] = False
    page = first_view((STATIC_DIR / "index.html").read_text(encoding="utf-8"), state)
    assert 'id="initial-state"' in page and "Loading…" in page and '<ol id="turns"></ol>' in page
