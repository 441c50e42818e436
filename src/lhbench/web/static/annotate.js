// lhbench annotation tool: sources, a line-numbered viewer, chapters with cited spans.
// All text from sources, notes and titles goes through textContent or input values,
// never innerHTML. Long sources render lazily, a chunk of lines at a time, as they scroll
// into view. Served from this origin (the page's CSP allows no inline script).
"use strict";

(() => {
  const root = document.getElementById("annotator");
  if (!root) return;
  const base = root.dataset.base;
  const csrf = root.dataset.csrf;
  const CHUNK = 100;
  const LINE_H = 22;
  const $ = (id) => document.getElementById(id);
  const el = (tag, attrs, text) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v;
      else if (k.startsWith("aria-") || k.startsWith("data-") || k === "role" || k === "for" || k === "title") e.setAttribute(k, v);
      else e[k] = v;
    }
    if (text !== undefined) e.textContent = text;
    return e;
  };

  const state = {
    saved: null,        // {version, author, created_at} of what is on screen
    parent: null,       // the newest version when this was loaded: a save goes on top of it
    content: { course: "", global_notes: "", chapters: [] },
    sources: [],
    active: 0,          // index of the chapter citations go to
    dirty: false,
    source: null,       // {id, lines, sections}
    cursor: null,       // keyboard line cursor
    anchor: null,       // start of a keyboard range
  };
  const cache = new Map();
  let observer = null;
  let opening = 0;  // the newest openSource call wins when fetches finish out of order

  const status = (msg, kind) => {
    const s = $("an-status");
    s.textContent = msg;
    s.className = "annot-status" + (kind ? " " + kind : "");
  };
  const setDirty = (d) => {
    state.dirty = d;
    showVersion();
  };
  const showVersion = () => {
    const v = state.saved;
    // the version select names the version, its author and time; this says what is pending
    let text = v ? `version ${v.version} by ${v.author}` : (state.draftFrom ? `draft from ${state.draftFrom}, not saved` : "not saved yet");
    if (v && state.parent !== null && v.version !== state.parent) text = `viewing ${v.version} by ${v.author}; newest is ${state.parent}, saving makes this the newest`;
    if (state.dirty) text += " · unsaved changes";
    $("an-version").textContent = text;
    const ex = $("an-export");
    if (v) {
      ex.href = `${base}/export?version=${v.version}`;
      ex.setAttribute("download", "chapters.json");
      ex.removeAttribute("aria-disabled");
    } else {
      ex.href = "#";
      ex.setAttribute("aria-disabled", "true");
    }
  };

  // --- sources (left) --------------------------------------------------------------------
  const renderSources = () => {
    const list = $("an-sources");
    list.replaceChildren();
    $("an-sources-n").textContent = `(${state.sources.length})`;
    state.sources.forEach((s, i) => {
      const b = el("button", { type: "button", class: "src", "data-id": s.id, "aria-label": `${s.title}, ${s.kind}, ${s.lines} lines` });
      b.append(el("span", { class: "badge kind-" + s.kind.toLowerCase() }, s.kind), el("span", { class: "src-title" }, s.title), el("span", { class: "src-meta" }, `${s.id} · ${s.lines} lines`));
      b.addEventListener("click", () => openSource(s.id));
      b.addEventListener("keydown", (ev) => {
        const step = { ArrowDown: 1, ArrowUp: -1 }[ev.key];
        if (step) {
          ev.preventDefault();
          const next = list.querySelectorAll("button.src")[i + step];
          if (next) next.focus();
        }
      });
      const li = el("li");
      li.append(b);
      list.append(li);
    });
    markSources();
  };
  const markSources = () => {
    document.querySelectorAll("#an-sources button.src").forEach((b) => {
      const on = state.source && b.dataset.id === state.source.id;
      b.classList.toggle("current", !!on);
      if (on) b.setAttribute("aria-current", "true"); else b.removeAttribute("aria-current");
    });
  };

  // --- viewer (middle) -------------------------------------------------------------------
  const sectionsOf = (lines) => {
    const out = [];
    let fence = false;
    let cur = { title: null, level: 0, start: 1, end: 0 };
    lines.forEach((line, i) => {
      const n = i + 1;
      if (/^\s*(```|~~~)/.test(line)) fence = !fence;
      const m = !fence && /^(#{1,6})\s+(.*)$/.exec(line);
      if (m && n > 1) {
        if (cur.end >= cur.start || cur.title !== null) out.push(cur);
        cur = { title: m[2], level: m[1].length, start: n, end: n };
      } else if (m) {
        cur = { title: m[2], level: m[1].length, start: 1, end: 1 };
      } else {
        cur.end = n;
      }
    });
    if (cur.end >= cur.start) out.push(cur);
    return out;
  };

  const citedLines = () => {
    const set = new Set();
    if (!state.source) return set;
    state.content.chapters.forEach((ch) => ch.spans.forEach((s) => {
      if (s.source_id !== state.source.id) return;
      for (let n = s.start_line; n <= s.end_line && n - s.start_line < 20000; n++) set.add(n);
    }));
    return set;
  };

  const lineEl = (n, text, cited) => {
    const d = el("div", { class: "ln", "data-n": String(n) });
    if (cited.has(n)) d.classList.add("cited");
    if (state.cursor !== null && inCursor(n)) d.classList.add("cursor");
    const h = /^(#{1,6})\s/.exec(text);
    if (h) d.classList.add("h" + h[1].length);
    d.append(el("span", { class: "no", "aria-hidden": "true" }, String(n)), el("span", { class: "lt" }, text));
    return d;
  };

  const renderChunk = (chunk) => {
    if (chunk.dataset.done) return;
    const from = +chunk.dataset.from, to = +chunk.dataset.to;
    const cited = citedLines();
    const frag = document.createDocumentFragment();
    for (let n = from; n <= to; n++) frag.append(lineEl(n, state.source.lines[n - 1], cited));
    chunk.replaceChildren(frag);
    chunk.style.height = "";
    chunk.dataset.done = "1";
    if (observer) observer.unobserve(chunk);
  };

  const openSource = async (id, focusLine) => {
    const ticket = ++opening;
    let src = cache.get(id);
    if (!src) {
      const r = await fetch(`${base}/sources/${encodeURIComponent(id)}`, { credentials: "same-origin" });
      if (!r.ok) { status(`Could not load ${id} (${r.status}).`, "error"); return; }
      const data = await r.json();
      src = { id, lines: data.lines, sections: sectionsOf(data.lines) };
      cache.set(id, src);
    }
    if (ticket !== opening) return;
    if (state.source && state.source.id === id) {
      if (focusLine) flashLines(focusLine[0], focusLine[1]);
      return;
    }
    state.source = src;
    state.cursor = null; state.anchor = null;
    const meta = state.sources.find((s) => s.id === id) || { title: id, kind: "" };
    $("an-doc-h").textContent = meta.title;
    $("an-doc-meta").textContent = `${meta.kind} · ${id} · ${src.lines.length} lines · ${src.sections.length} sections`;
    const viewer = $("an-viewer");
    if (observer) observer.disconnect();
    observer = new IntersectionObserver((entries) => {
      entries.forEach((e) => { if (e.isIntersecting) renderChunk(e.target); });
    }, { root: viewer, rootMargin: "1200px 0px" });
    const frag = document.createDocumentFragment();
    const cited = citedLines();
    src.sections.forEach((sec, si) => {
      const box = el("section", { class: "sec", "data-start": String(sec.start), "data-end": String(sec.end) });
      const head = el("div", { class: "sec-head" });
      const body = el("div", { class: "sec-body", id: `sec-${si}` });
      const label = sec.title === null ? "(before the first heading)" : sec.title;
      const toggle = el("button", { type: "button", class: "sec-toggle", "aria-expanded": "true", "aria-controls": `sec-${si}`, "aria-label": `Collapse or expand section: ${label}` }, "▾");
      toggle.addEventListener("click", () => setCollapsed(box, toggle.getAttribute("aria-expanded") === "true"));
      head.append(toggle);
      let bodyFrom = sec.start;
      if (sec.title !== null) {
        head.append(lineEl(sec.start, src.lines[sec.start - 1], cited));
        bodyFrom = sec.start + 1;
      } else {
        head.append(el("span", { class: "sec-title muted" }, label));
      }
      head.append(el("span", { class: "sec-range" }, sec.start === sec.end ? `L${sec.start}` : `L${sec.start}–${sec.end}`));
      for (let f = bodyFrom; f <= sec.end; f += CHUNK) {
        const t = Math.min(sec.end, f + CHUNK - 1);
        const chunk = el("div", { class: "chunk", "data-from": String(f), "data-to": String(t) });
        chunk.style.height = `${(t - f + 1) * LINE_H}px`;
        body.append(chunk);
      }
      box.append(head, body);
      frag.append(box);
    });
    viewer.replaceChildren(frag);
    viewer.dataset.source = id;
    viewer.scrollTop = 0;
    viewer.querySelectorAll(".chunk").forEach((c) => observer.observe(c));
    markSources();
    if (focusLine) flashLines(focusLine[0], focusLine[1]);
  };

  const setCollapsed = (box, collapsed) => {
    box.classList.toggle("collapsed", collapsed);
    const t = box.querySelector(".sec-toggle");
    t.setAttribute("aria-expanded", collapsed ? "false" : "true");
    t.textContent = collapsed ? "▸" : "▾";
  };

  // the line element for n, rendering its chunk and opening its section first
  const ensureLine = (n) => {
    const viewer = $("an-viewer");
    for (const box of viewer.querySelectorAll("section.sec")) {
      if (n < +box.dataset.start || n > +box.dataset.end) continue;
      if (box.classList.contains("collapsed")) setCollapsed(box, false);
      for (const c of box.querySelectorAll(".chunk")) {
        if (n >= +c.dataset.from && n <= +c.dataset.to) renderChunk(c);
      }
      return box.querySelector(`.ln[data-n="${n}"]`);
    }
    return null;
  };

  const flashLines = (a, b) => {
    for (let n = a; n <= b; n++) {
      const e = ensureLine(n);
      if (e) { e.classList.add("hit"); setTimeout(() => e.classList.remove("hit"), 1600); }
    }
    const first = ensureLine(a);
    if (first) first.scrollIntoView({ block: "center" });
  };

  const inCursor = (n) => {
    if (state.cursor === null) return false;
    const a = Math.min(state.cursor, state.anchor ?? state.cursor), b = Math.max(state.cursor, state.anchor ?? state.cursor);
    return n >= a && n <= b;
  };
  const paintCursor = () => {
    const viewer = $("an-viewer");
    viewer.querySelectorAll(".ln.cursor").forEach((e) => e.classList.remove("cursor"));
    if (state.cursor === null) return;
    const a = Math.min(state.cursor, state.anchor ?? state.cursor), b = Math.max(state.cursor, state.anchor ?? state.cursor);
    for (let n = a; n <= b && n - a < 2000; n++) { const e = ensureLine(n); if (e) e.classList.add("cursor"); }
    const cur = ensureLine(state.cursor);
    if (cur) cur.scrollIntoView({ block: "nearest" });
    $("an-cite").disabled = false;
  };
  const moveCursor = (step, extend) => {
    if (!state.source) return;
    const max = state.source.lines.length;
    if (state.cursor === null) { state.cursor = firstVisibleLine(); state.anchor = null; }
    else {
      if (extend && state.anchor === null) state.anchor = state.cursor;
      if (!extend) state.anchor = null;
      state.cursor = Math.max(1, Math.min(max, state.cursor + step));
    }
    paintCursor();
  };
  const firstVisibleLine = () => {
    const viewer = $("an-viewer");
    const top = viewer.getBoundingClientRect().top;
    for (const e of viewer.querySelectorAll(".ln")) {
      if (e.getBoundingClientRect().bottom > top) return +e.dataset.n;
    }
    return 1;
  };

  // --- highlight to cite -----------------------------------------------------------------
  const selectedSpan = () => {
    const sel = window.getSelection();
    const viewer = $("an-viewer");
    if (!state.source || !sel || sel.rangeCount === 0 || sel.isCollapsed) return null;
    const range = sel.getRangeAt(0);
    if (!viewer.contains(range.commonAncestorContainer)) return null;
    const parts = [];
    viewer.querySelectorAll(".ln").forEach((ln) => {
      if (!range.intersectsNode(ln)) return;
      const lt = ln.querySelector(".lt");
      const text = lt.textContent;
      let s = 0, e = text.length;
      if (lt.contains(range.startContainer)) s = range.startContainer === lt ? (range.startOffset ? text.length : 0) : range.startOffset;
      if (lt.contains(range.endContainer)) e = range.endContainer === lt ? (range.endOffset ? text.length : 0) : range.endOffset;
      if (ln.contains(range.startContainer) && !lt.contains(range.startContainer)) s = 0;
      parts.push({ n: +ln.dataset.n, text: text.slice(s, Math.max(s, e)) });
    });
    parts.sort((x, y) => x.n - y.n);
    while (parts.length && !parts[0].text.trim()) parts.shift();
    while (parts.length && !parts[parts.length - 1].text.trim()) parts.pop();
    if (!parts.length) return null;
    const quote = parts.map((p) => p.text).join("\n").trim();
    return { source_id: state.source.id, start_line: parts[0].n, end_line: parts[parts.length - 1].n, quote };
  };
  const cursorSpan = () => {
    if (!state.source || state.cursor === null) return null;
    const a = Math.min(state.cursor, state.anchor ?? state.cursor), b = Math.max(state.cursor, state.anchor ?? state.cursor);
    const lines = state.source.lines.slice(a - 1, b);
    const quote = lines.join("\n").trim();
    if (!quote) return null;
    let s = a, e = b;
    while (!state.source.lines[s - 1].trim()) s++;
    while (!state.source.lines[e - 1].trim()) e--;
    return { source_id: state.source.id, start_line: s, end_line: e, quote };
  };
  const cite = () => {
    const span = selectedSpan() || cursorSpan();
    if (!span) { status("Select text in the source (or move to a line with j/k) first.", "error"); return; }
    if (!state.content.chapters.length) addChapter(false);
    const ch = state.content.chapters[state.active];
    if (ch.spans.some((s) => s.source_id === span.source_id && s.start_line === span.start_line && s.end_line === span.end_line && s.quote === span.quote)) {
      status(`${span.source_id}:L${span.start_line}-L${span.end_line} is already cited in “${ch.title}”.`);
      return;
    }
    ch.spans.push(span);
    window.getSelection().removeAllRanges();
    state.anchor = null;
    setDirty(true);
    renderChapters();
    refreshCited();
    status(`Cited ${span.source_id}:L${span.start_line}-L${span.end_line} into “${ch.title}”.`, "ok");
  };
  const refreshCited = () => {
    const cited = citedLines();
    $("an-viewer").querySelectorAll(".ln").forEach((e) => e.classList.toggle("cited", cited.has(+e.dataset.n)));
  };

  // --- chapters (right) ------------------------------------------------------------------
  const slug = (title) => title.toLowerCase().normalize("NFKD").replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 60) || "chapter";
  const uniqueId = (want, skip) => {
    const taken = new Set(state.content.chapters.filter((c) => c !== skip).map((c) => c.id));
    let id = want, k = 2;
    while (taken.has(id)) id = `${want.slice(0, 58)}-${k++}`;
    return id;
  };
  const addChapter = (focus) => {
    const n = state.content.chapters.length + 1;
    const ch = { id: uniqueId(`chapter-${n}`), title: `Chapter ${n}`, instruction: "", design_notes: "", criteria: [], spans: [], _autoId: true };
    state.content.chapters.push(ch);
    state.active = state.content.chapters.length - 1;
    setDirty(true);
    renderChapters();
    if (focus !== false) {
      const input = document.querySelector(`#an-chapters li[data-index="${state.active}"] input.ch-title`);
      if (input) { input.focus(); input.select(); }
    }
  };
  const setActive = (i) => {
    if (i < 0 || i >= state.content.chapters.length) return;
    state.active = i;
    document.querySelectorAll("#an-chapters > li").forEach((li) => {
      const on = +li.dataset.index === i;
      li.classList.toggle("active", on);
      const b = li.querySelector(".ch-pick");
      b.setAttribute("aria-pressed", on ? "true" : "false");
    });
    const ch = state.content.chapters[i];
    status(`Citations now go to “${ch.title}”.`);
  };

  const field = (label, input) => { const l = el("label", { class: "field" }, label); l.append(input); return l; };

  const renderChapters = () => {
    const list = $("an-chapters");
    const chapters = state.content.chapters;
    $("an-ch-n").textContent = `(${chapters.length})`;
    if (state.active >= chapters.length) state.active = Math.max(0, chapters.length - 1);
    list.replaceChildren();
    chapters.forEach((ch, i) => {
      const li = el("li", { class: "chapter" + (i === state.active ? " active" : ""), "data-index": String(i) });
      const head = el("div", { class: "ch-head" });
      const pick = el("button", { type: "button", class: "ch-pick small", "aria-pressed": i === state.active ? "true" : "false", title: "Cite into this chapter" }, `${i + 1}`);
      pick.setAttribute("aria-label", `Cite into chapter ${i + 1}`);
      pick.addEventListener("click", () => setActive(i));
      const title = el("input", { type: "text", class: "ch-title", maxLength: 300, value: ch.title });
      title.setAttribute("aria-label", `Chapter ${i + 1} title`);
      const idInput = el("input", { type: "text", class: "ch-id", maxLength: 64, value: ch.id, pattern: "[a-z0-9][a-z0-9_\\-]{0,63}" });
      idInput.setAttribute("aria-label", `Chapter ${i + 1} id`);
      title.addEventListener("input", () => {
        ch.title = title.value;
        if (ch._autoId) { ch.id = uniqueId(slug(ch.title), ch); idInput.value = ch.id; }
        setDirty(true);
      });
      title.addEventListener("focus", () => { if (state.active !== i) setActive(i); });
      idInput.addEventListener("input", () => { ch.id = idInput.value; ch._autoId = false; setDirty(true); });
      const tools = el("div", { class: "ch-tools" });
      const up = el("button", { type: "button", class: "small ghost", title: "Move up" }, "↑");
      up.setAttribute("aria-label", `Move chapter ${i + 1} up`);
      up.disabled = i === 0;
      up.addEventListener("click", () => { chapters.splice(i - 1, 0, chapters.splice(i, 1)[0]); state.active = i - 1; setDirty(true); renderChapters(); });
      const down = el("button", { type: "button", class: "small ghost", title: "Move down" }, "↓");
      down.setAttribute("aria-label", `Move chapter ${i + 1} down`);
      down.disabled = i === chapters.length - 1;
      down.addEventListener("click", () => { chapters.splice(i + 1, 0, chapters.splice(i, 1)[0]); state.active = i + 1; setDirty(true); renderChapters(); });
      const del = el("button", { type: "button", class: "small ghost danger", title: "Remove chapter" }, "✕");
      del.setAttribute("aria-label", `Remove chapter ${i + 1}`);
      del.addEventListener("click", () => { chapters.splice(i, 1); setDirty(true); renderChapters(); refreshCited(); });
      tools.append(up, down, del);
      head.append(pick, title, tools);

      const spans = el("ul", { class: "spans" });
      ch.spans.forEach((s, j) => {
        const item = el("li", { class: "span" });
        const go = el("button", { type: "button", class: "span-go", title: "Show in the source" }, `${s.source_id}:L${s.start_line}${s.end_line !== s.start_line ? "-L" + s.end_line : ""}`);
        go.addEventListener("click", () => openSource(s.source_id, [s.start_line, s.end_line]));
        const q = el("q", { class: "span-quote" }, s.quote.length > 220 ? s.quote.slice(0, 220) + "…" : s.quote);
        const rm = el("button", { type: "button", class: "small ghost danger span-rm" }, "✕");
        rm.setAttribute("aria-label", `Remove citation ${s.source_id} lines ${s.start_line} to ${s.end_line}`);
        rm.addEventListener("click", () => { ch.spans.splice(j, 1); setDirty(true); renderChapters(); refreshCited(); });
        item.append(go, rm, q);
        spans.append(item);
      });
      if (!ch.spans.length) spans.append(el("li", { class: "muted empty" }, "No cited spans yet: select text in the source and press c."));

      const instr = el("textarea", { rows: 2, maxLength: 20000, class: "ch-instruction" });
      instr.value = ch.instruction || "";
      instr.addEventListener("input", () => { ch.instruction = instr.value; setDirty(true); });
      const notes = el("textarea", { rows: 3, maxLength: 20000, class: "ch-notes" });
      notes.value = ch.design_notes || "";
      notes.addEventListener("input", () => { ch.design_notes = notes.value; setDirty(true); });
      const crit = el("textarea", { rows: 3, maxLength: 20000, class: "ch-criteria", placeholder: "One criterion per line" });
      crit.value = (ch.criteria || []).join("\n");
      crit.addEventListener("input", () => { ch.criteria = crit.value.split("\n").map((x) => x.trim()).filter(Boolean); setDirty(true); });
      li.append(head, el("div", { class: "ch-idrow" }, "id "), spans,
        field("Instruction to the agent", instr), field("Design notes", notes), field("Evaluation criteria (one per line)", crit));
      li.querySelector(".ch-idrow").append(idInput, el("span", { class: "muted" }, ` · ${ch.spans.length} span${ch.spans.length === 1 ? "" : "s"}`));
      list.append(li);
    });
  };

  // --- load and save ---------------------------------------------------------------------
  const renderHistory = (history) => {
    state.history = history;
    const sel = $("an-history");
    sel.replaceChildren();
    if (!history.length) sel.append(el("option", { value: "" }, "no saved version"));
    history.forEach((h) => {
      const o = el("option", { value: String(h.version) }, `v${h.version} · ${h.created_at.replace("T", " ").slice(0, 16)}`);
      if (state.saved && state.saved.version === h.version) o.selected = true;
      sel.append(o);
    });
    sel.disabled = !history.length;
  };

  const load = async (version) => {
    const r = await fetch(`${base}/state${version ? "?version=" + version : ""}`, { credentials: "same-origin" });
    if (!r.ok) { status(`Could not load the annotations (${r.status}).`, "error"); return; }
    const data = await r.json();
    state.saved = data.saved;
    state.parent = data.head;
    renderHistory(data.history);
    state.draftFrom = data.draft_from;
    state.content = data.content;
    state.sources = data.sources;
    state.active = 0;
    $("an-course").value = state.content.course || "";
    $("an-global").value = state.content.global_notes || "";
    setDirty(false);
    renderSources();
    renderChapters();
    if (!state.source && state.sources.length) await openSource(state.sources[0].id);
    else refreshCited();
  };

  const payload = () => ({
    course: state.content.course || "",
    global_notes: state.content.global_notes || "",
    chapters: state.content.chapters.map((c) => ({
      id: c.id, title: c.title, instruction: c.instruction || "", design_notes: c.design_notes || "",
      criteria: c.criteria || [], spans: c.spans.map((s) => ({ source_id: s.source_id, start_line: s.start_line, end_line: s.end_line, quote: s.quote })),
    })),
  });

  let saving = false;
  const save = async () => {
    if (saving) return;
    saving = true;
    $("an-save").disabled = true;
    try {
      const r = await fetch(`${base}/versions`, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
        body: JSON.stringify({ parent: state.parent, content: payload() }),
      });
      let data = {};
      try { data = await r.json(); } catch (e) { data = { error: `HTTP ${r.status}` }; }
      if (r.status === 201) {
        state.saved = data;
        state.parent = data.version;
        state.history = [data, ...(state.history || [])];
        renderHistory(state.history);
        state.draftFrom = null;
        setDirty(false);
        status(`Saved version ${data.version}.`, "ok");
      } else if (r.status === 409) {
        status(`Not saved: ${data.error}`, "error");
        const newest = el("button", { type: "button", class: "small", id: "an-load-newest" }, `Load version ${data.head} (drops your edits)`);
        newest.addEventListener("click", () => load());
        $("an-status").append(" ", newest);
      } else {
        status(`Not saved: ${data.where ? data.where + ": " : ""}${data.error}`, "error");
      }
    } finally {
      saving = false;
      $("an-save").disabled = false;
    }
  };

  // --- wiring ----------------------------------------------------------------------------
  $("an-save").addEventListener("click", save);
  $("an-history").addEventListener("change", (ev) => { if (ev.target.value) load(+ev.target.value); });
  $("an-add").addEventListener("click", () => addChapter(true));
  $("an-cite").addEventListener("mousedown", (ev) => ev.preventDefault()); // keep the selection
  $("an-cite").addEventListener("click", cite);
  $("an-course").addEventListener("input", (ev) => { state.content.course = ev.target.value; setDirty(true); });
  $("an-global").addEventListener("input", (ev) => { state.content.global_notes = ev.target.value; setDirty(true); });
  $("an-export").addEventListener("click", (ev) => { if (!state.saved) { ev.preventDefault(); status("Save first: the export is of a saved version."); } });
  document.addEventListener("selectionchange", () => {
    const sel = window.getSelection();
    const inViewer = sel && sel.rangeCount && !sel.isCollapsed && $("an-viewer").contains(sel.getRangeAt(0).commonAncestorContainer);
    $("an-cite").disabled = !(inViewer || state.cursor !== null);
  });
  window.addEventListener("beforeunload", (ev) => { if (state.dirty) { ev.preventDefault(); ev.returnValue = ""; } });
  document.addEventListener("keydown", (ev) => {
    if ((ev.ctrlKey || ev.metaKey) && ev.key.toLowerCase() === "s") { ev.preventDefault(); save(); return; }
    if (ev.target.closest("input, textarea, select") || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const inViewer = ev.target.closest("#an-viewer") || ev.target === document.body;
    const k = ev.key;
    if (k === "c") { ev.preventDefault(); cite(); }
    else if (k === "n") { ev.preventDefault(); addChapter(true); }
    else if (k === "[") { ev.preventDefault(); setActive(state.active - 1); }
    else if (k === "]") { ev.preventDefault(); setActive(state.active + 1); }
    else if (k === "j" || k === "J" || (inViewer && k === "ArrowDown")) { ev.preventDefault(); moveCursor(1, ev.shiftKey || k === "J"); }
    else if (k === "k" || k === "K" || (inViewer && k === "ArrowUp")) { ev.preventDefault(); moveCursor(-1, ev.shiftKey || k === "K"); }
    else if (k === "Escape") { state.cursor = null; state.anchor = null; paintCursor(); }
  });
  load();
})();
