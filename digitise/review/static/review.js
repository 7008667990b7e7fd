// The review page: list the turns, show one, send corrections. Plain DOM, no framework.
// API paths are relative: the page is at / for one report, at /m/N/ for match N of a folder.
// Text from the report is only ever set with textContent, never parsed as HTML.
"use strict";

const view = { state: null, showAll: false, current: null, pick: 0, zoom: false, lastCorrected: null, busy: false,
  drawnMatch: null };

async function api(path, body) {
  // A change says which state of the match it was made on: made in a tab showing an older one (another tab
  // changed the match since), it is refused and the page shows the match as it now is.
  const sent = body === undefined || !view.state ? body : { ...body, revision: view.state.revision };
  const options = sent === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(sent),
  };
  let response;
  try {
    response = await fetch(path, options);
  } catch (err) {
    // "Failed to fetch" says nothing to a tournament director.
    throw new Error("the review server does not answer: is `digitise review` still running? Start it again; " +
      "the corrections made so far are saved.");
  }
  let doc;
  try {
    doc = await response.json();
  } catch (err) {
    throw new Error(`the review server gave an unreadable answer (HTTP ${response.status})`);
  }
  if (!response.ok) {
    const error = new Error(doc.error || response.statusText);
    error.changedElsewhere = Boolean(doc.changed_elsewhere);
    throw error;
  }
  return doc;
}

async function busyWith(work) {
  // One change at a time: while the match is re-solved, keys and buttons do nothing (a key pressed
  // meanwhile would act on the page the answer replaces), and the page says it is working.
  if (view.busy) return;
  view.busy = true;
  document.body.classList.add("busy");
  document.body.setAttribute("aria-busy", "true");
  const box = document.getElementById("error");
  if (box) box.textContent = "";
  setStatus("Working…");
  try {
    await work();
  } finally {
    view.busy = false;
    document.body.classList.remove("busy");
    document.body.removeAttribute("aria-busy");
    setStatus("");
  }
}

function refocus() {
  // After a change the focus goes back to the list, where j, k and Enter carry on; not when the person is
  // typing (in the move field, say): that stays as it was.
  const active = document.activeElement;
  if (active instanceof HTMLInputElement || active instanceof HTMLTextAreaElement) return;
  document.querySelector("#turns li.current")?.focus({ preventScroll: true });
}

function setStatus(text) {
  const status = document.getElementById("working");
  if (status) status.textContent = text;
}

function visibleTurns() {
  const turns = view.state ? view.state.turns : [];
  // A corrected turn stays in the flagged view, marked fixed: its undo stays within reach.
  const flagged = turns.filter((t) => t.flagged || t.corrected);
  if (!view.showAll) return flagged.length ? flagged : [];
  return turns;  // every turn in the match's order, the flagged ones marked
}

function firstState() {
  // The state the page came with (the server draws the first turn in its first answer): used once.
  const given = document.getElementById("initial-state");
  if (!given) return null;
  given.remove();
  try { return JSON.parse(given.textContent); } catch (ignored) { return null; }
}

async function reload() {
  const first = view.state === null;
  view.state = (first && firstState()) || await api("api/state");
  if (first) {
    // The turn the address names (the page keeps it there): a reload comes back to it, among all turns if
    // it is not a flagged one.
    const named = location.hash.slice(1);
    const turn = view.state.turns.find((t) => t.id === named);
    if (turn) {
      view.current = turn.id;
      view.showAll = !(turn.flagged || turn.corrected);
    }
  }
  render();
}

function render() {
  const s = view.state;
  document.getElementById("title").textContent = s.title;
  // Boards set aside (a blank board inside a game, a page of another match) are listed to be said what they
  // hold, but they are no turns of the match: counted apart, as the scan's summary counts them.
  const turns = s.turns.filter((t) => t.action !== "blank");
  const aside = s.turns.length - turns.length;
  const flagged = turns.filter((t) => t.flagged).length;
  document.title = `${s.title} · digitise review`;
  document.getElementById("summary").textContent =
    `${s.games.length} game(s), ${turns.length} turns, ${flagged} flagged, ` +
    (aside ? `${aside} board(s) set aside, ` : "") + `${s.corrections.length} corrected · ` +
    s.games.map((g) => `G${g.number}: ${g.winner ? `${sideName(g.winner)} wins ${g.points}` : "unfinished"}`).join(", ");
  // Each change writes the .mat itself; Save is offered only when the file on disk is behind.
  const save = document.getElementById("save");
  save.hidden = !s.can_save || s.mat_saved;
  save.textContent = `Save ${s.mat || ".mat"}`;
  save.title = "Write the corrected match over the .mat the scan wrote";
  const status = document.getElementById("mat-status");
  const note = s.mat_note || {};
  const failed = note.error && !s.mat_saved;
  status.textContent = failed ? `${s.mat} not written: ${note.error}` : s.mat_saved ? `${s.mat} is up to date` : "";
  status.className = failed ? "error" : "";
  const exportLink = document.getElementById("export");
  exportLink.classList.toggle("disabled", !s.can_export);
  exportLink.title = s.can_export ? "Download the corrected match" : "Export needs the readings (--readings)";
  const messages = document.getElementById("messages");
  messages.replaceChildren(
    ...s.notes.map((n) => el("p", { class: "message note" }, `Note: ${n}`)),
    ...s.messages.map((m) => el("p", { class: "message" }, m)),
    ...(s.closed_out ? [el("p", { class: "message info", id: "closed-out" },
      `${s.closed_out} turn(s) of a player closed out on the bar have no board on the note: written as dances of 21 ` +
      "(their dice are unknown; GNU Backgammon needs the turns to alternate).")] : []),
  );
  renderMatch();
  renderList();
  renderDetail();
}

const FROM = { review: "set here", scan: "given to the scan", header: "read from the header",
  unsure: "not read: a placeholder" };

function sideName(side) {
  // "Alice (bottom)": the names the .mat is written with, so a director need not work out which is which.
  const m = (view.state && view.state.match) || {};
  const i = side === "top" ? 1 : side === "bottom" ? 0 : -1;
  return i >= 0 && m.players && m.players[i] ? `${m.players[i]} (${side})` : String(side || "nobody");
}

function named(text) {
  // A turn's text begins with the side that played it: shown with that player's name.
  return String(text || "").replace(/^(bottom|top)\b/, (side) => sideName(side));
}

function matchDirty() {
  // Names or length typed in the bar but not yet set: they would be lost, or missing from a save.
  const m = (view.state && view.state.match) || {};
  const players = m.players || ["", ""];
  const value = (id) => (document.getElementById(id) || { value: "" }).value.trim();
  const length = m.length === null || m.length === undefined ? "" : String(m.length);
  return value("player-bottom") !== players[0] || value("player-top") !== players[1] || value("match-length") !== length;
}

function renderMatch() {
  // The names and length the .mat is written with; editable when the header was misread or blank.
  const form = document.getElementById("match");
  if (form.contains(document.activeElement) && document.activeElement instanceof HTMLInputElement) return;
  // Names or length typed and not yet set survive a correction made meanwhile (they are set with Enter):
  // typed means changed since this form was last drawn, and not what the match now says.
  const ids = ["player-bottom", "player-top", "match-length"];
  const now = form.childElementCount ? ids.map((id) => document.getElementById(id).value) : null;
  const m = view.state.match || {};
  const players = m.players || ["", ""];
  const shown = [players[0], players[1], m.length === null || m.length === undefined ? "" : String(m.length)];
  const differs = (a, b) => a.some((value, i) => value.trim() !== b[i]);
  const typed = now && view.drawnMatch && differs(now, view.drawnMatch) && differs(now, shown) ? now : null;
  const reviewed = m.reviewed && Object.keys(m.reviewed).length;
  form.replaceChildren(...[
    el("span", { class: "label" }, "Match:"),
    // GNU Backgammon keeps 31 bytes of a name: the server checks the bytes and says so (a field's own limit
    // would cut a longer name without a word).
    el("label", {}, "Bottom ", el("input", { id: "player-bottom", value: players[0], size: "14", spellcheck: "false" })),
    el("label", {}, "Top ", el("input", { id: "player-top", value: players[1], size: "14", spellcheck: "false" })),
    el("span", { class: `from ${m.players_from}`, id: "players-from" }, `(${FROM[m.players_from] || ""})`),
    el("label", {}, "Length ", el("input", { id: "match-length", type: "number", min: "0", max: "64", size: "3",
      value: m.length === null || m.length === undefined ? "" : String(m.length) })),
    el("span", { class: `from ${m.length_from}`, id: "length-from" }, `(${FROM[m.length_from] || ""}${m.length === 0 ? ", 0 is unlimited" : ""})`),
    el("button", { type: "submit", id: "apply-match" }, "Set names and length"),
    reviewed ? el("button", { type: "button", id: "reset-match", onclick: resetMatch,
      title: "Forget the names and length set here: write the ones the scan gave" }, "Use the scan's names and length") : null,
    el("span", { id: "match-error", class: "error", role: "alert" },
      typed ? "Names or length typed but not set: press Enter or the button to set them." : ""),
  ].filter((node) => node));
  view.drawnMatch = ids.map((id) => document.getElementById(id).value);
  if (typed) ids.forEach((id, i) => { document.getElementById(id).value = typed[i]; });
}

async function sendMatch(body, what) {
  let done = false;
  await busyWith(async () => {
    try {
      const result = await api("api/match", body);
      document.activeElement?.blur();
      // Set: the bar shows what the match now says (an emptied length shows the scan's), nothing "typed".
      view.drawnMatch = null;
      await reload();
      showChanges(result, what);
      done = true;
    } catch (err) {
      await afterRefusal(err);
      document.getElementById("match-error").textContent = plain(err.message);
    }
  });
  return done;
}

async function afterRefusal(err) {
  // Refused because the corrections changed elsewhere: show them now, not the stale page.
  if (err.changedElsewhere) {
    try { await reload(); } catch (ignored) { /* the message below still says what happened */ }
  }
}

async function applyPendingMatch() {
  // Before a save or an export: names typed but not set are set first, not silently left out.
  return matchDirty() ? applyMatch() : true;
}

function applyMatch() {
  const players = [document.getElementById("player-bottom").value.trim(), document.getElementById("player-top").value.trim()];
  const lengthInput = document.getElementById("match-length");
  const lengthText = lengthInput.value.trim();
  // A number field gives "" for text it cannot read (which would mean "as scanned"), and takes "1e1" as 10.
  if (lengthInput.validity.badInput || (lengthText !== "" && !/^[0-9]{1,2}$/.test(lengthText))) {
    document.getElementById("match-error").textContent =
      "Length: a whole number from 0 (unlimited) to 64, or empty for the scan's.";
    return Promise.resolve(false);
  }
  const m = view.state.match || {};
  const body = {};
  // Only what differs from what is written now, or was set here before, is sent as the reviewer's.
  const same = m.players && players[0] === m.players[0] && players[1] === m.players[1];
  const blank = !players[0] && !players[1];  // no names known and none typed: leave them to the scan
  if (!blank && (!same || (m.reviewed && m.reviewed.players))) body.players = players;
  if (lengthText === "" || String(m.length) !== lengthText || (m.reviewed && m.reviewed.length !== undefined)) {
    body.length = lengthText === "" ? null : Number(lengthText);
  }
  const names = blank ? "names as scanned" : `${players[0] || "?"} v ${players[1] || "?"}`;
  return sendMatch(body, `Match set to ${names}, ${lengthText || "length as scanned"}`);
}

function resetMatch() {
  sendMatch({ players: null, length: null }, "Names and length back to the scan's");
}

function renderList() {
  const list = document.getElementById("turns");
  const turns = visibleTurns();
  if (view.current === null || !turns.some((t) => t.id === view.current)) {
    view.current = turns.length ? turns[0].id : null;
    view.pick = 0;
  }
  // The tick box as the list is (the browser may restore it on Back and Forward, the list not).
  document.getElementById("show-all").checked = view.showAll;
  if (view.current !== null && location.hash !== `#${view.current}`) history.replaceState(null, "", `#${view.current}`);
  list.setAttribute("role", "listbox");
  list.setAttribute("aria-label", view.showAll ? "All turns" : "Flagged turns");
  list.replaceChildren(...turns.map((t) => el("li", {
    class: ["turn", t.flagged ? "flagged" : "", t.corrected ? "corrected" : "", t.changed ? "changed" : "",
      t.id === view.current ? "current" : ""].join(" ").trim(),
    "data-id": t.id,
    role: "option",
    "aria-selected": t.id === view.current ? "true" : "false",
    // One stop for Tab in the list (the current turn); j and k move along it.
    tabindex: t.id === view.current ? "0" : "-1",
    onclick: () => select(t.id),
  },
  el("span", { class: "where" }, `${t.game ? `G${t.game} ` : ""}p${t.page} b${t.board}`),
  el("span", { class: "what" }, named(t.text)),
  t.corrected ? el("span", { class: "badge fix", title: "corrected" }, "fixed") : null,
  t.changed ? el("span", { class: "badge delta", title: "changed by the last correction" }, "changed") : null,
  )));
  if (!turns.length) {
    list.replaceChildren(el("li", { class: "none" }, view.showAll ? "No turns." : "No flagged turns. Press a to see all."));
  }
}

function currentTurn() {
  return view.state ? view.state.turns.find((t) => t.id === view.current) || null : null;
}

function select(id, focus) {
  view.current = id;
  view.pick = 0;
  renderList();
  renderDetail();
  const item = document.querySelector(`#turns li[data-id="${id}"]`);
  if (item) {
    item.scrollIntoView({ block: "nearest" });
    // Keyboard users keep their place: the turn chosen holds the focus.
    if (focus) item.focus({ preventScroll: true });
  }
}

function step(delta) {
  const turns = visibleTurns();
  const i = turns.findIndex((t) => t.id === view.current);
  const next = turns[Math.min(turns.length - 1, Math.max(0, i + delta))];
  if (next) select(next.id, true);
}

function boardImage(position, mover, highlight, label) {
  if (!position) return el("div", { class: "diagram none" }, `${label}: unknown`);
  const query = new URLSearchParams({ position, mover });
  if (highlight.length) query.set("highlight", highlight.join(","));
  return el("figure", { class: "diagram" },
    el("img", { src: `api/board.svg?${query}`, alt: `${label} position ${position}` }),
    el("figcaption", {}, `${label} (${position})`));
}

function landing(move) {
  // Where each checker of a .mat play touches down: the numbers after a slash.
  const points = [];
  for (const m of (move || "").matchAll(/\/(\d+|off)/gi)) points.push(m[1].toLowerCase() === "off" ? 0 : Number(m[1]));
  return points;
}

function cellTitle(name) {
  // What a square's name means, in words: a point is named from its owner's side (NOTATION.md).
  const side = (letter) => (letter === "B" ? "Black" : "White");
  const other = (letter) => (letter === "B" ? "White" : "Black");
  if (name === "centre") return "centre: the strip between the rows (dice that could not be played, crossed; a double's arrow)";
  const found = /^([BW])(res|off|\d+)$/.exec(name);
  if (!found) return name;
  const [, letter, what] = found;
  if (what === "res") return `${name}: ${side(letter)}'s result square (points won)`;
  if (what === "off") return `${name}: ${side(letter)}'s off square (checkers borne off)`;
  return `${name}: ${side(letter)}'s ${what} point, ${other(letter)}'s ${25 - Number(what)}`;
}

function markCell(name) {
  // Pointing at a square's name outlines that square on the scan (where the reader looked).
  const turn = currentTurn();
  const mark = document.getElementById("cell-mark");
  document.querySelectorAll("[data-cell].marked").forEach((node) => node.classList.remove("marked"));
  const box = name && turn && turn.cell_boxes ? turn.cell_boxes[name] : null;
  if (!mark) return;
  if (!box) {
    mark.hidden = true;
    return;
  }
  const [x, y, w, h] = box;
  Object.assign(mark.style, { left: `${x * 100}%`, top: `${y * 100}%`, width: `${w * 100}%`, height: `${h * 100}%` });
  mark.hidden = false;
  mark.dataset.square = name;
  document.querySelectorAll(`[data-cell="${name}"]`).forEach((node) => node.classList.add("marked"));
}

function readingsLegend(turn) {
  // What the table says, in words, and each square's name on a board laid out like the note (index.html).
  const legend = document.getElementById("legend-template").content.firstElementChild.cloneNode(true);
  const read = new Set(Object.keys(turn.cells || {}));
  legend.querySelectorAll("[data-cell]").forEach((node) => {
    node.title = cellTitle(node.dataset.cell);
    node.classList.toggle("read", read.has(node.dataset.cell));
  });
  return legend;
}

function instruction(turn) {
  // What to do with the turn shown, in one line: the keys that do it.
  return el("p", { id: "instruction", class: "instruction" },
    turn.corrected ? "Corrected here. Is this what was written? " : "Is this what was written? ",
    el("kbd", {}, "Enter"), " accepts, ", el("kbd", {}, "1"), "-", el("kbd", {}, "9"), " picks another",
    " · ", el("kbd", {}, "m"), " types a move", turn.corrected ? [" · ", el("kbd", {}, "u"), " undoes"] : null);
}

function cellTable(turn) {
  const names = Object.keys(turn.cells);
  const marks = turn.marks || {};
  const rows = names.map((name) => el("tr", {},
    el("th", { "data-cell": name, title: cellTitle(name) }, name),
    el("td", {}, turn.cells[name].map((c, i) => el("span", { class: i === 0 ? "reading top" : "reading" },
      `${c.digits.length ? c.digits.join("") : "∅"} ${(c.probability * 100).toFixed(0)}%`)))));
  const extra = ["crossed", "arrow", "letters"].filter((k) => marks[k] !== undefined).map((k) => el("tr", {},
    el("th", {}, k), el("td", {}, `${((marks[k] || 0) * 100).toFixed(0)}%`)));
  if (!rows.length && !extra.length) return el("p", { class: "empty" }, "No readings for this board.");
  return el("table", { class: "cells" }, el("tbody", {}, rows, extra));
}

function choices(turn) {
  // Candidates that would send the same correction (a double read with a take and with a drop on a later
  // board) are one choice here: picking either did the same.
  const seen = new Map();
  const out = [];
  for (const c of turn.candidates || []) {
    const key = c.correction ? `c:${c.correction}` : `t:${candidateText(c)}`;
    if (seen.has(key)) {
      seen.get(key).probability = (seen.get(key).probability || 0) + (c.probability || 0);
      continue;
    }
    const copy = { ...c };
    seen.set(key, copy);
    out.push(copy);
  }
  return out.slice(0, 9);
}

function candidateList(turn) {
  const candidates = choices(turn);
  if (!candidates.length) return el("p", { class: "empty" }, "No other candidates: type the correction.");
  return el("ol", { class: "candidates", role: "listbox", "aria-label": "Candidates" }, candidates.map((c, i) => el("li", {
    class: ["candidate", i === view.pick ? "picked" : "", c.correction ? "" : "unusable"].join(" ").trim(),
    "data-index": String(i),
    role: "option",
    "aria-selected": i === view.pick ? "true" : "false",
    tabindex: i === view.pick ? "0" : "-1",
    title: c.correction ? null : "Not a turn: cannot be chosen; type the correction instead",
    onclick: () => { view.pick = i; renderDetail(); },
    ondblclick: () => { view.pick = i; acceptPick(); },
  },
  el("kbd", {}, String(i + 1)),
  el("span", { class: "move" }, candidateText(c)),
  el("span", { class: "prob" }, `${((c.probability || 0) * 100).toFixed(1)}%`),
  // Why it ranks where it does: how it compares with the solver's choice (and that with the runner-up).
  // On a corrected board the scan's own candidates follow the correction, with the odds the scan gave them.
  (c.reasons || []).length || c.as_scanned ? el("span", { class: "why" },
    [...(c.as_scanned ? ["as the scan read it, before the correction"] : []), ...(c.reasons || [])].join("; "))
    : null)));
}

function candidateText(c) {
  const who = c.player ? `${sideName(c.player)} ` : "";
  const winner = c.result && c.result.winner;
  if (c.action === "resign" && winner) {
    // Who gives up, and what the other wins: "top wins 1" left the reader to work out who resigned.
    const loser = winner === "top" ? "bottom" : "top";
    return `${who}${sideName(loser)} resigns; ${sideName(winner)} wins ${c.result.points}`;
  }
  let text = c.action === "move" ? `${who}${(c.dice || []).join("")}: ${c.move || "(no play)"}` : `${who}${c.action}`;
  if (c.action === "double" && c.answer) {
    // A double dropped on its own board and one the next board answers are different decisions:
    // without this both read "double".
    text += c.answer === "drop" ? ", dropped" : ", taken";
  } else if (c.answer) {
    text = `the double before ${c.answer === "drop" ? "dropped" : "taken"}; ${text}`;
  }
  if (winner) text += `; ${sideName(winner)} wins ${c.result.points}`;
  return text;
}

function renderDetail() {
  const panel = document.getElementById("detail");
  const turn = currentTurn();
  // What is being typed in the panel survives its rebuilding for the same turn (an answer that arrives
  // meanwhile must not wipe it, nor leave the keys that follow to act as shortcuts).
  const active = document.activeElement;
  const kept = active instanceof HTMLInputElement && panel.contains(active) && active.id && turn
    && panel.dataset.turn === String(turn.id)
    ? { id: active.id, value: active.value, start: active.selectionStart, end: active.selectionEnd } : null;
  panel.dataset.turn = turn ? String(turn.id) : "";
  if (!turn) {
    panel.replaceChildren(el("p", { class: "empty" }, "Nothing to review here."));
    return;
  }
  const player = turn.player === "top" ? "top" : "bottom";
  const who = sideName(turn.player);
  const crop = turn.has_crop
    ? el("div", { class: "crop-box" }, el("div", { class: view.zoom ? "crop-frame zoomed" : "crop-frame" },
      el("img", { class: view.zoom ? "crop zoomed" : "crop", src: `api/crop/${turn.page}/${turn.board}.png`,
        alt: `page ${turn.page} board ${turn.board} as scanned`, title: "Click (or z) to enlarge or shrink",
        onclick: toggleZoom }),
      el("div", { id: "cell-mark", class: "cell-mark", hidden: true })))
    : el("p", { class: "empty crop" }, "No picture of this board.");
  // A board the fit was unsure of: the squares as placed, drawn over its picture, to check they sit right.
  const todo = [...new Set((turn.reason_actions || []).filter((a) => a))];
  const overlay = turn.overlay
    ? el("figure", { class: "overlay-box" },
      el("img", { class: "overlay", src: `api/overlay/${turn.page}/${turn.board}.png`,
        alt: `page ${turn.page} board ${turn.board} with its squares as placed drawn over it` }),
      el("figcaption", {}, "The squares as placed (green) over the board: where they do not sit on the printed "
        + "squares, the cells were read from the wrong places."))
    : null;
  panel.replaceChildren(...[
    instruction(turn),
    el("h2", {}, `${turn.game ? `Game ${turn.game} · ` : ""}page ${turn.page} board ${turn.board} · ${who}`,
      turn.flagged ? el("span", { class: "badge flag" }, "flagged") : null,
      turn.corrected ? el("span", { class: "badge fix" }, `corrected: ${turn.correction}`) : null),
    el("p", { class: "reading-now" }, "Read as ", el("strong", { id: "current-reading" }, named(turn.text)),
      ` · confidence ${((turn.confidence || 0) * 100).toFixed(1)}%`),
    turn.reasons && turn.reasons.length ? el("ul", { class: "reasons" },
      turn.reasons.map((r, i) => el("li", { title: (turn.reason_actions || [])[i] || null }, r)))
      : null,
    // What to do about the reasons, each once (first_view.py draws the same line).
    todo.length ? el("p", { class: "todo" }, `What to do: ${todo.join(" ")}`) : null,
    crop,
    overlay,
    el("div", { class: "row" },
      el("div", { class: "pick" }, el("h3", {}, "Candidates"), candidateList(turn),
        el("button", { id: "accept", onclick: acceptPick, disabled: !(turn.candidates || []).length }, "Accept (Enter)")),
      el("div", { class: "readings" }, el("h3", {}, "Readings"), cellTable(turn), readingsLegend(turn)),
      el("form", { class: "fix", id: "fix", onsubmit: (e) => { e.preventDefault(); sendTyped(); } },
        el("h3", {}, "Correct it"),
        el("label", {}, "Move ", el("input", { id: "move", name: "move", autocomplete: "off", spellcheck: "false",
          placeholder: "64: 24/18 13/9", value: turn.action === "move" ? `${(turn.dice || []).join("")}: ${turn.move || ""}` : "" })),
        el("button", { type: "submit", id: "apply-move" }, "Apply move"),
        el("div", { class: "cube" },
          el("button", { type: "button", id: "mark-double", onclick: () => sendAction("double") }, "Double"),
          // A take or drop is said on its double's board (NOTATION.md: a take writes nothing of its own).
          el("button", { type: "button", id: "mark-take", onclick: () => sendAction("take"),
            title: "This board is a double (its arrow), and the double was taken" }, "Double, taken"),
          el("button", { type: "button", id: "mark-drop", onclick: () => sendAction("drop"),
            title: "This board is a double (its arrow), and the double was dropped: the game ends here" },
            "Double, dropped"),
          el("label", {}, "Resign, points ", el("input", { id: "resign-points", type: "number", min: "1", value: "1",
            // Enter here means the resignation, not the move typed above (the form's own submit).
            onkeydown: (e) => { if (e.key === "Enter") { e.preventDefault(); sendAction("resign"); } } })),
          el("button", { type: "button", id: "mark-resign", onclick: () => sendAction("resign") }, "Resign"),
          el("button", { type: "button", id: "mark-blank", onclick: () => sendAction("blank") }, "Blank")),
        turn.corrected ? el("button", { type: "button", id: "undo", onclick: undo }, "Undo correction (u)") : null,
        el("p", { id: "error", class: "error", role: "alert" }))),
    el("div", { class: "row boards" },
      boardImage(turn.position_before, player, [], "Before"),
      boardImage(turn.position_after, player, turn.action === "move" ? landing(turn.move) : [], "After")),
  ].filter((node) => node));
  if (kept) {
    const input = document.getElementById(kept.id);
    if (input) {
      input.value = kept.value;
      input.focus({ preventScroll: true });
      try { input.setSelectionRange(kept.start, kept.end); } catch (ignored) { /* number inputs have no selection */ }
    }
  }
}

function toggleZoom() {
  // The crop is cut at the scan's own resolution: enlarged, faint or crossed digits can be made out.
  view.zoom = !view.zoom;
  document.querySelector(".crop-frame")?.classList.toggle("zoomed", view.zoom);
  document.querySelector("img.crop")?.classList.toggle("zoomed", view.zoom);
}

// The server names the field of a refused request as its JSON path ("$.dice[0]: ..."): said in words here.
const FIELDS = { move: "The move", dice: "The dice", players: "The names", length: "The length",
  points: "The points", text: "The correction", page: "The page", board: "The board" };

function plain(message) {
  return String(message).replace(/^\$\.([a-z_]+)(?:\[\d+\])*: /, (whole, field) => `${FIELDS[field] || field}: `);
}

function showError(message) {
  const box = document.getElementById("error");
  if (box) box.textContent = plain(message);
  // The last change's list would read as this attempt's outcome: it goes.
  const changes = document.getElementById("changes");
  if (changes) { changes.hidden = true; changes.replaceChildren(); }
}

const CHANGES_SHOWN = 30;

function showChanges(result, what) {
  const box = document.getElementById("changes");
  const changes = result.changes || [];
  box.hidden = false;
  box.replaceChildren(...[
    el("button", { type: "button", class: "close", id: "close-changes", title: "Hide this list",
      "aria-label": "Hide the list of changes", onclick: () => { box.hidden = true; box.replaceChildren(); } }, "×"),
    el("p", {}, `${what}: ${changes.length} turn(s) changed.`),
    changes.length ? el("ul", {}, changes.slice(0, CHANGES_SHOWN).map((c) => el("li", {},
      `page ${c.page} board ${c.board}: `,
      c.before === c.after ? c.after : `${c.before || "(none)"} → ${c.after || "(none)"}`,
      c.flagged_before && !c.flagged_after ? " (no longer flagged)" : "",
      c.flagged_after && !c.flagged_before ? " (now flagged)" : ""))) : null,
    changes.length > CHANGES_SHOWN ? el("p", {}, `… and ${changes.length - CHANGES_SHOWN} more.`) : null,
  ].filter((node) => node));
}

async function send(body, what, typed) {
  await busyWith(async () => {
    try {
      const result = await api("api/correct", body);
      view.lastCorrected = { page: body.page, board: body.board };
      // A typed move taken: the keys go back to the list (j for the next turn), not into the move field;
      // unless the person has typed on meanwhile (the field no longer holds what was sent).
      const field = document.getElementById("move");
      if (typed !== undefined && document.activeElement === field && field.value === typed) field.blur();
      await reload();
      showChanges(result, `${what} (page ${body.page} board ${body.board})`);
      refocus();
    } catch (err) {
      await afterRefusal(err);
      showError(err.message);
    }
  });
}

function acceptPick() {
  const turn = currentTurn();
  if (!turn) return;
  if (!(turn.candidates || []).length) { showError("No candidate to accept here: type the correction."); return; }
  const options = choices(turn);
  const c = options[Math.min(view.pick, options.length - 1)];
  if (!c.correction) { showError("This candidate cannot be chosen here; type the correction instead."); return; }
  send({ page: turn.page, board: turn.board, text: c.correction }, `Accepted ${candidateText(c)}`);
}

function sendTyped() {
  const turn = currentTurn();
  if (!turn) return;
  // Fullwidth digits and the like typed on some keyboards read as plain ones.
  const typed = document.getElementById("move").value;
  const text = typed.normalize("NFKC").trim();
  // The dice, then a colon or a space: "24/18 13/9" has no dice ("2" and "4" are not them).
  const found = text.match(/^([1-6])\s*-?\s*([1-6])\s*(?::|\s|$)\s*(.*)$/s);
  if (!found) {
    showError(/^\d+\s*\//.test(text) ? "Type the dice first, then the play: 64: 24/18 13/9"
      : "Write the dice then the play, as in 64: 24/18 13/9 (64: alone when the roll could not be played)");
    return;
  }
  // The page's own words for a roll not played read as no play.
  const play = found[3].trim().replace(/^\(?\s*no play\s*\)?$/i, "");
  send({ page: turn.page, board: turn.board, action: "move", dice: [Number(found[1]), Number(found[2])], move: play },
    `Corrected to ${found[1]}${found[2]}: ${play || "(no play)"}`, typed);
}

function sendAction(action) {
  const turn = currentTurn();
  if (!turn) return;
  const body = { page: turn.page, board: turn.board, action };
  if (action === "resign") {
    const input = document.getElementById("resign-points");
    // A number field takes "1e1" as 10: only plain digits are points.
    const points = /^[0-9]{1,3}$/.test(input.value.trim()) && !input.validity.badInput ? Number(input.value) : NaN;
    if (!Number.isInteger(points) || points < 1) {
      showError("Give the points the resignation is worth: the cube's value, twice it for a gammon, three times for a backgammon.");
      return;
    }
    body.points = points;
  }
  send(body, `Marked ${action}`);
}

async function undo() {
  // The turn shown when it is corrected, else the last correction made (the view may have moved on).
  const shown = currentTurn();
  const last = view.lastCorrected;
  const turn = shown && shown.corrected ? shown
    : last && view.state ? view.state.turns.find((t) => t.page === last.page && t.board === last.board && t.corrected)
    : null;
  if (!turn) { showError("Nothing to undo here."); return; }
  await busyWith(async () => {
    try {
      const result = await api("api/uncorrect", { page: turn.page, board: turn.board });
      if (last && last.page === turn.page && last.board === turn.board) view.lastCorrected = null;
      // The choice undone is no longer the one picked: Enter must not make it again unasked.
      view.pick = 0;
      await reload();
      showChanges(result, `Undone (page ${turn.page} board ${turn.board})`);
      refocus();
    } catch (err) {
      await afterRefusal(err);
      showError(err.message);
    }
  });
}

// Inputs whose keys are the person's own: a tick box or a button takes no letters, so j, k and a still work
// after one was clicked.
const NOT_TYPED_IN = new Set(["checkbox", "radio", "button", "submit", "reset"]);

document.addEventListener("keydown", (event) => {
  const typing = (event.target instanceof HTMLInputElement && !NOT_TYPED_IN.has(event.target.type))
    || event.target instanceof HTMLTextAreaElement;
  if (view.busy && !typing) {
    // A key pressed while a change is being made would act on the page its answer replaces.
    if (event.key !== "Tab") event.preventDefault();
    return;
  }
  // The turns and candidates reached with Tab: Enter or space selects (a picked candidate: Enter accepts it).
  const item = event.target instanceof HTMLLIElement ? event.target : null;
  if (item && item.matches("#turns li.turn") && (event.key === "ArrowDown" || event.key === "ArrowUp")) {
    event.preventDefault();
    step(event.key === "ArrowDown" ? 1 : -1);
    return;
  }
  if (item && (event.key === "Enter" || event.key === " ")) {
    event.preventDefault();
    if (item.matches("#turns li.turn")) {
      const chosen = visibleTurns().find((t) => String(t.id) === item.dataset.id);
      // The turn shown already (the list holds the focus after j, k or a correction): Enter accepts, as
      // everywhere else on the page.
      if (chosen && chosen.id === view.current && event.key === "Enter") acceptPick();
      else if (chosen) {
        select(chosen.id);
        document.querySelector(`#turns li[data-id="${chosen.id}"]`)?.focus();
      }
    } else if (item.matches("li.candidate")) {
      const index = Number(item.dataset.index);
      if (index === view.pick && event.key === "Enter") acceptPick();
      else {
        view.pick = index;
        renderDetail();
        document.querySelector(`li.candidate[data-index="${index}"]`)?.focus();
      }
    }
    return;
  }
  // A focused button or link does its own thing on Enter (Export downloads, a link opens).
  if ((event.target instanceof HTMLButtonElement || event.target instanceof HTMLAnchorElement)
      && (event.key === "Enter" || event.key === " ")) return;
  if (typing) {
    if (event.key === "Escape") event.target.blur();
    return;
  }
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const turn = currentTurn();
  if (event.key === "j") step(1);
  else if (event.key === "k") step(-1);
  else if (event.key === "a") {
    view.showAll = !view.showAll;
    document.getElementById("show-all").checked = view.showAll;
    renderList(); renderDetail();
    document.querySelector("#turns li.current")?.scrollIntoView({ block: "nearest" });
  } else if (/^[1-9]$/.test(event.key) && turn && Number(event.key) <= choices(turn).length) {
    view.pick = Number(event.key) - 1;
    renderDetail();
  } else if (event.key === "Enter") acceptPick();
  else if (event.key === "m") {
    event.preventDefault();
    const input = document.getElementById("move");
    // Selected whole: typing replaces the reading shown, as a person typing the move expects.
    if (input) { input.focus(); input.select(); }
  }
  else if (event.key === "u") undo();
  else if (event.key === "z") toggleZoom();
  else return;
  event.preventDefault();
});

document.getElementById("match").addEventListener("submit", (event) => {
  event.preventDefault();
  applyMatch();
});

document.getElementById("show-all").addEventListener("change", (event) => {
  view.showAll = event.target.checked;
  renderList(); renderDetail();
});

document.getElementById("save").addEventListener("click", async () => {
  if (!(await applyPendingMatch())) return;
  const box = document.getElementById("changes");
  await busyWith(async () => {
    box.hidden = false;
    try {
      const result = await api("api/save", {});
      box.replaceChildren(el("p", { id: "saved" }, `Saved the corrected match to ${result.saved}.`));
      await reload();
    } catch (err) {
      await afterRefusal(err);
      box.hidden = false;
      box.replaceChildren(el("p", { class: "error" }, `Not saved: ${err.message}`));
    }
  });
});

document.getElementById("export").addEventListener("click", async (event) => {
  // Fetched, not followed: a refused export (corrections changed elsewhere, a spoilt corrections file) would
  // otherwise be a download the browser cancels without a word.
  event.preventDefault();
  if (view.state && !view.state.can_export) return;
  if (!(await applyPendingMatch())) return;
  const box = document.getElementById("changes");
  await busyWith(async () => {
    try {
      let response;
      try {
        response = await fetch("api/export.mat");
      } catch (err) {
        throw new Error("the review server does not answer: is `digitise review` still running?");
      }
      if (!response.ok) {
        let doc = {};
        try { doc = await response.json(); } catch (ignored) { /* the status says enough */ }
        const err = new Error(doc.error || `HTTP ${response.status}`);
        err.changedElsewhere = Boolean(doc.changed_elsewhere);
        throw err;
      }
      // The name in UTF-8 (filename*) when the server gives it: "Zoë v 李.mat" kept as it is.
      const disposition = response.headers.get("Content-Disposition") || "";
      const utf8 = /filename\*=UTF-8''([^;]+)/i.exec(disposition);
      const named = /filename="([^"]+)"/.exec(disposition);
      let name = named ? named[1] : "match.mat";
      try { if (utf8) name = decodeURIComponent(utf8[1]); } catch (ignored) { /* the plain name stands */ }
      const link = el("a", { href: URL.createObjectURL(await response.blob()), download: name });
      document.body.append(link);
      link.click();
      link.remove();
      // An earlier "Not exported" would read as this export's outcome.
      box.hidden = true;
      box.replaceChildren();
      setTimeout(() => URL.revokeObjectURL(link.href), 60000);
    } catch (err) {
      await afterRefusal(err);
      box.hidden = false;
      box.replaceChildren(el("p", { class: "error" }, `Not exported: ${err.message}`));
    }
  });
});

window.addEventListener("beforeunload", (event) => {
  // Corrections are saved as they are made; only names typed and not set would be lost.
  if (view.state && matchDirty()) event.preventDefault();
});

// A square's name pointed at (in the readings or the legend): its square outlined on the scan.
document.getElementById("detail").addEventListener("mouseover", (event) => {
  const named = event.target instanceof Element ? event.target.closest("[data-cell]") : null;
  if (named) markCell(named.dataset.cell);
});
document.getElementById("detail").addEventListener("mouseout", (event) => {
  const from = event.target instanceof Element ? event.target.closest("[data-cell]") : null;
  const to = event.relatedTarget instanceof Element ? event.relatedTarget.closest("[data-cell]") : null;
  if (from && from !== to) markCell(to ? to.dataset.cell : null);
});

// Served from a folder of matches (/m/N/): a way back to the list.
document.getElementById("up").hidden = !location.pathname.startsWith("/m/");

reload().catch((err) => {
  document.getElementById("detail").replaceChildren(el("p", { class: "error" }, `Cannot load the report: ${err.message}`));
});
