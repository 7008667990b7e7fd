// The folder page: every match of a batch's output, the ones still to review first. Plain DOM.
// Text from the reports is only ever set with textContent, never parsed as HTML.
"use strict";

function row(m) {
  const link = el("a", { href: `/m/${m.number}/`, class: "match-link" }, m.name);
  if (m.problem) {
    return el("tr", { class: "problem", "data-name": m.name }, el("td", {}, m.name), el("td", { colspan: "9", class: "error" }, m.problem));
  }
  const notes = m.notes.length ? m.notes.join("; ") : "";
  return el("tr", { class: m.flagged ? "to-review" : "done", "data-name": m.name },
    el("td", {}, link),
    el("td", { class: "players" }, m.players ? `${m.players[0]} v ${m.players[1]}` : ""),
    el("td", {}, m.length == null ? "" : m.length ? String(m.length) : "unlimited"),
    el("td", { class: "result" }, result(m)),
    el("td", {}, String(m.games ?? "")),
    el("td", {}, String(m.turns ?? "")),
    // Turns flagged, and apart from them the boards set aside (a page of another match), as the scan says.
    el("td", { class: m.flagged ? "flagged" : "" },
      m.flagged == null ? "" : m.set_aside ? `${m.flagged - m.set_aside} + ${m.set_aside} board(s) set aside`
        : String(m.flagged)),
    // Turns of a player closed out on the bar: on no board, written into the .mat as dances of 21.
    el("td", {}, m.closed_out ? String(m.closed_out) : ""),
    el("td", {}, `${m.corrected}${m.header_set ? " + names/length" : ""}${m.mat_saved === false ? " (.mat not saved)" : ""}`),
    el("td", { class: "notes" }, notes));
}

// "Bruno won 3-0", or the score so far ("Alice 1, Bruno 2") when nobody has reached the length.
function result(m) {
  if (!m.score || !m.players) return "";
  if (m.winner != null) return `${m.winner} won ${Math.max(...m.score)}-${Math.min(...m.score)}`;
  return `${m.players[0]} ${m.score[0]}, ${m.players[1]} ${m.score[1]}${m.length ? " (unfinished)" : ""}`;
}

async function load() {
  const response = await fetch("/api/matches");
  const doc = await response.json();
  if (!response.ok) throw new Error(doc.error || response.statusText);
  document.getElementById("title").textContent = doc.folder;
  const matches = doc.matches.slice().sort((a, b) => (b.flagged > 0) - (a.flagged > 0) || a.number - b.number);
  const flagged = matches.filter((m) => m.flagged > 0).length;
  const turns = matches.reduce((sum, m) => sum + (m.flagged || 0) - (m.set_aside || 0), 0);
  const aside = matches.reduce((sum, m) => sum + (m.set_aside || 0), 0);
  document.getElementById("summary").textContent =
    `${matches.length} match(es), ${flagged} with flagged turns (${turns} in all` +
    (aside ? `, and ${aside} board(s) set aside)` : ")");
  document.querySelector("#matches tbody").replaceChildren(...matches.map(row));
}

// Coming back from a match (the browser's back button) shows its new figures.
window.addEventListener("pageshow", () => {
  load().catch((err) => {
    document.querySelector("#matches tbody").replaceChildren(
      el("tr", {}, el("td", { colspan: "10", class: "error" }, `Cannot list the matches: ${err.message}`)));
  });
});
