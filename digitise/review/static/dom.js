// Shared by the review and folder pages: the one DOM builder, loaded before either page's script.
// Children are appended as text nodes, so text from a report is never parsed as HTML.
"use strict";

// el("a", { href: "/x", class: "c", onclick: f }, child, ...): attributes set ("on..." ones as listeners;
// null, undefined and false left out), children appended (strings as text).
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}
