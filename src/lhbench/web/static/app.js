// lhbench web: table sorting by header click, and keyboard shortcuts in the arena.
// Served from this origin; the pages' Content-Security-Policy allows no inline script.
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  // Headers marked data-sort="num" sort their column client-side (cells carry data-value);
  // a header link still sorts on the server when JavaScript is off.
  document.querySelectorAll("table.sortable th[data-sort]").forEach((th) => {
    th.addEventListener("click", (event) => {
      event.preventDefault();
      const table = th.closest("table");
      const body = table.tBodies[0];
      const col = Array.from(th.parentNode.children).indexOf(th);
      const desc = th.dataset.dir !== "desc";
      table.querySelectorAll("th").forEach((h) => { h.classList.remove("sorted"); delete h.dataset.dir; });
      th.dataset.dir = desc ? "desc" : "asc";
      th.classList.add("sorted");
      const key = (row) => {
        const cell = row.cells[col];
        const raw = cell ? cell.dataset.value : "";
        const n = parseFloat(raw);
        return Number.isNaN(n) ? null : n;
      };
      const rows = Array.from(body.rows);
      rows.sort((a, b) => {
        const x = key(a), y = key(b);
        if (x === null && y === null) return 0;
        if (x === null) return 1;  // blanks last either way
        if (y === null) return -1;
        return desc ? y - x : x - y;
      });
      rows.forEach((r) => body.appendChild(r));
    });
  });

  // Arena: 1/2/3 pick left/tie/right, Q..T pick quality 1..5, Enter submits.
  const form = document.getElementById("vote-form");
  if (form) {
    const pick = (selector) => { const el = form.querySelector(selector); if (el) el.checked = true; };
    document.addEventListener("keydown", (event) => {
      if (event.target.closest("input[type=text], textarea, select") || event.metaKey || event.ctrlKey || event.altKey) return;
      const k = event.key.toLowerCase();
      const choices = { "1": "left", "2": "tie", "3": "right" };
      const quality = { q: "1", w: "2", e: "3", r: "4", t: "5" };
      if (choices[k]) { pick(`input[name=choice][value=${choices[k]}]`); event.preventDefault(); }
      else if (quality[k]) { pick(`input[name=quality][value="${quality[k]}"]`); event.preventDefault(); }
      else if (k === "enter" && !event.target.closest("button")) {
        const submit = document.getElementById("submit-vote");
        if (submit) { form.requestSubmit(submit); event.preventDefault(); }
      }
    });
  }
});
