// Sort any table with class "sortable" by clicking a plain header (links sort on the server).
document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("table.sortable th").forEach((th, col) => {
    if (th.querySelector("a")) return;
    th.style.cursor = "pointer";
    th.addEventListener("click", () => {
      const body = th.closest("table").tBodies[0];
      const rows = Array.from(body.rows);
      const asc = th.dataset.dir !== "asc";
      th.dataset.dir = asc ? "asc" : "desc";
      const key = (r) => { const t = r.cells[col].innerText.trim(); const n = parseFloat(t); return isNaN(n) ? t : n; };
      rows.sort((a, b) => (key(a) > key(b) ? 1 : key(a) < key(b) ? -1 : 0) * (asc ? 1 : -1));
      rows.forEach((r) => body.appendChild(r));
    });
  });
});
