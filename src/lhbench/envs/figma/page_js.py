# ruff: noqa: E501
"""The JavaScript the capture runs inside each page (kept apart so it reads as one program).

``SETTLE`` waits for fonts, images and a quiet DOM; ``EXTRACT`` returns the page's text
blocks (a line-box union per text node, with computed style), filled elements, images,
SVG icons, and whether ``#root`` is empty; ``RESPONSIVE`` measures overflow, overlapping
and clipped text and the smallest font at the current width; ``STYLE_AT`` reads the
computed style of the clickable element holding a text, for hover probes.
"""

from __future__ import annotations

__all__ = ["EXTRACT", "FIND_TEXT", "LINKS", "RESPONSIVE", "SETTLE", "STYLE_OF"]

SETTLE = """async ([quietMs, capMs]) => {
  const t0 = performance.now();
  try { await Promise.race([document.fonts.ready, new Promise(r => setTimeout(r, capMs))]); } catch (e) {}
  const imgs = Array.from(document.images).filter(i => !i.complete);
  await Promise.race([
    Promise.all(imgs.map(i => new Promise(r => { i.addEventListener('load', r); i.addEventListener('error', r); }))),
    new Promise(r => setTimeout(r, capMs)),
  ]);
  await new Promise(resolve => {
    let last = performance.now();
    const obs = new MutationObserver(() => { last = performance.now(); });
    obs.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
    const tick = () => {
      const now = performance.now();
      if (now - last >= quietMs || now - t0 >= capMs) { obs.disconnect(); resolve(); }
      else setTimeout(tick, 25);
    };
    setTimeout(tick, 25);
  });
  return performance.now() - t0;
}"""

EXTRACT = """() => {
  const sx = window.scrollX, sy = window.scrollY;
  const visible = (el) => {
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
      const cs = getComputedStyle(e);
      if (cs.display === 'none' || cs.visibility === 'hidden' || parseFloat(cs.opacity) === 0) return false;
    }
    return true;
  };
  const bgOf = (el) => {
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
      const c = getComputedStyle(e).backgroundColor;
      if (c && c !== 'transparent' && !/rgba\\([^)]*,\\s*0\\)$/.test(c)) return c;
    }
    return 'rgb(255, 255, 255)';
  };
  const texts = [];
  const walker = document.createTreeWalker(document.body || document.documentElement, NodeFilter.SHOW_TEXT);
  let n, order = 0;
  while ((n = walker.nextNode())) {
    const raw = n.textContent || '';
    if (!raw.trim()) continue;
    const el = n.parentElement;
    if (!el || ['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'TITLE'].includes(el.tagName)) continue;
    if (!visible(el)) continue;
    const range = document.createRange();
    range.selectNodeContents(n);
    const rects = Array.from(range.getClientRects()).filter(r => r.width > 0.5 && r.height > 0.5);
    if (!rects.length) continue;
    const x0 = Math.min(...rects.map(r => r.left)), y0 = Math.min(...rects.map(r => r.top));
    const x1 = Math.max(...rects.map(r => r.right)), y1 = Math.max(...rects.map(r => r.bottom));
    const cs = getComputedStyle(el);
    let text = raw.replace(/\\s+/g, ' ').trim();
    if (cs.textTransform === 'uppercase') text = text.toUpperCase();
    else if (cs.textTransform === 'lowercase') text = text.toLowerCase();
    texts.push({
      order: order++, text, x: x0 + sx, y: y0 + sy, w: x1 - x0, h: y1 - y0,
      lines: rects.length, parent: el.tagName.toLowerCase(),
      key: el.tagName + '|' + el.className + '|' + cs.fontFamily + '|' + cs.fontSize + '|' + cs.fontWeight + '|' + cs.color,
      color: cs.color, bg: bgOf(el), fontFamily: cs.fontFamily, fontSize: parseFloat(cs.fontSize) || 0,
      fontWeight: parseFloat(cs.fontWeight) || 400, lineHeight: cs.lineHeight,
      letterSpacing: cs.letterSpacing,
    });
  }
  const elements = [], images = [], svgs = [];
  for (const el of document.querySelectorAll('body *')) {
    const r = el.getBoundingClientRect();
    if (r.width < 1 || r.height < 1) continue;
    const tag = el.tagName.toLowerCase();
    if (tag === 'svg') {
      if (visible(el)) svgs.push({x: r.left + sx, y: r.top + sy, w: r.width, h: r.height});
      continue;
    }
    if (el.closest('svg')) continue;
    const cs = getComputedStyle(el);
    if (tag === 'img' || tag === 'picture' || tag === 'canvas' || tag === 'video') {
      if (!visible(el)) continue;
      images.push({x: r.left + sx, y: r.top + sy, w: r.width, h: r.height, kind: tag,
                   src: el.currentSrc || el.src || '', loaded: tag !== 'img' || (el.complete && el.naturalWidth > 0),
                   nw: el.naturalWidth || 0, nh: el.naturalHeight || 0});
      continue;
    }
    const bi = cs.backgroundImage;
    if (bi && bi !== 'none' && bi.includes('url(') && visible(el)) {
      const m = bi.match(/url\\(["']?([^"')]+)["']?\\)/);
      images.push({x: r.left + sx, y: r.top + sy, w: r.width, h: r.height, kind: 'background',
                   src: m ? new URL(m[1], document.baseURI).href : '', loaded: true, nw: 0, nh: 0});
    }
    const bg = cs.backgroundColor;
    if (bg && bg !== 'transparent' && !/rgba\\([^)]*,\\s*0\\)$/.test(bg) && r.width * r.height >= 100 && visible(el)) {
      elements.push({x: r.left + sx, y: r.top + sy, w: r.width, h: r.height, bg, tag,
                     radius: parseFloat(cs.borderTopLeftRadius) || 0});
    }
  }
  const root = document.getElementById('root') || document.getElementById('app');
  const fams = new Set();
  for (const el of document.querySelectorAll('body, body *')) fams.add(getComputedStyle(el).fontFamily);
  return {
    texts, elements, images, svgs,
    rootChildren: root ? root.children.length : null,
    textChars: (document.body ? document.body.innerText || '' : '').replace(/\\s+/g, '').length,
    bodyText: (document.body ? document.body.innerText || '' : '').slice(0, 4000),
    width: document.documentElement.scrollWidth,
    height: Math.max(document.documentElement.scrollHeight, document.body ? document.body.scrollHeight : 0),
    families: Array.from(fams).slice(0, 50),
  };
}"""

LINKS = (
    """() => Array.from(document.querySelectorAll('a[href]')).map(a => a.getAttribute('href'))"""
)

RESPONSIVE = """() => {
  const vw = window.innerWidth;
  const overflow = document.documentElement.scrollWidth > vw + 1;
  const boxes = [];
  let clipped = 0, minFont = 1e9, small = 0;
  const walker = document.createTreeWalker(document.body || document.documentElement, NodeFilter.SHOW_TEXT);
  let n;
  while ((n = walker.nextNode())) {
    if (!(n.textContent || '').trim()) continue;
    const el = n.parentElement;
    if (!el || ['SCRIPT', 'STYLE', 'NOSCRIPT'].includes(el.tagName)) continue;
    const cs = getComputedStyle(el);
    if (cs.display === 'none' || cs.visibility === 'hidden') continue;
    const range = document.createRange();
    range.selectNodeContents(n);
    const rects = Array.from(range.getClientRects()).filter(r => r.width > 0.5 && r.height > 0.5);
    if (!rects.length) continue;
    const fs = parseFloat(cs.fontSize) || 0;
    minFont = Math.min(minFont, fs);
    if (fs < 12) small++;
    for (const r of rects) boxes.push([r.left, r.top, r.right, r.bottom, el]);
    let c = el;
    for (let k = 0; k < 3 && c; k++, c = c.parentElement) {
      const s = getComputedStyle(c);
      if ((s.overflow === 'hidden' || s.overflowX === 'hidden' || s.textOverflow === 'ellipsis') &&
          c.scrollWidth > c.clientWidth + 1) { clipped++; break; }
    }
  }
  let overlaps = 0;
  const m = Math.min(boxes.length, 400);
  for (let i = 0; i < m; i++) for (let j = i + 1; j < m; j++) {
    const a = boxes[i], b = boxes[j];
    if (a[4] === b[4] || a[4].contains(b[4]) || b[4].contains(a[4])) continue;
    const iw = Math.min(a[2], b[2]) - Math.max(a[0], b[0]), ih = Math.min(a[3], b[3]) - Math.max(a[1], b[1]);
    if (iw <= 0 || ih <= 0) continue;
    const inter = iw * ih, uni = (a[2]-a[0])*(a[3]-a[1]) + (b[2]-b[0])*(b[3]-b[1]) - inter;
    if (inter / uni > 0.1) overlaps++;
  }
  return {width: vw, overflow, overlaps, clipped, minFont: minFont === 1e9 ? null : minFont, smallText: small, textNodes: boxes.length};
}"""

FIND_TEXT = """([text, cx, cy]) => {
  const want = text.replace(/\\s+/g, ' ').trim().toLowerCase();
  let best = null, bestD = 1e18;
  for (const el of document.querySelectorAll('body *')) {
    if (el.children.length > 2) continue;
    const t = (el.innerText || '').replace(/\\s+/g, ' ').trim().toLowerCase();
    if (t !== want) continue;
    let target = el;
    for (let e = el; e && e !== document.body; e = e.parentElement) {
      const cs = getComputedStyle(e);
      if (e.tagName === 'A' || e.tagName === 'BUTTON' || cs.cursor === 'pointer' || e.getAttribute('role') === 'button') { target = e; break; }
    }
    const r = target.getBoundingClientRect();
    const d = (r.left + window.scrollX + r.width / 2 - cx) ** 2 + (r.top + window.scrollY + r.height / 2 - cy) ** 2;
    if (d < bestD) { bestD = d; best = target; }
  }
  if (!best) return null;
  document.querySelectorAll('[data-lhbench-probe]').forEach(e => e.removeAttribute('data-lhbench-probe'));
  best.setAttribute('data-lhbench-probe', '1');
  best.scrollIntoView({block: 'center'});
  return true;
}"""

STYLE_OF = """() => {
  const el = document.querySelector('[data-lhbench-probe]');
  if (!el) return null;
  const cs = getComputedStyle(el);
  return [cs.backgroundColor, cs.color, cs.borderColor, cs.boxShadow, cs.transform, cs.opacity,
          cs.textDecorationLine, cs.outlineStyle, cs.filter].join('|');
}"""
