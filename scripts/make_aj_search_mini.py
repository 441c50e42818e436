"""Generate the bundled ``aj-search-mini`` pack (Agent-as-a-Judge, search domain, mini).

Run from the repository root: ``uv run python scripts/make_aj_search_mini.py``. It writes
``src/lhbench/packs/data/aj-search-mini`` from the fictional topics below (invented
places on ``.example`` domains, so a judge cannot answer from memory):

- ``corpus/``: the recorded web, one HTML page per official article, a near-duplicate
  mirror of each (same facts, other boilerplate), an overview page per topic, and
  contradicting pages (an old survey, a forum post) that state wrong values;
- ``tasks/<topic>/``: the question, ``facts.json`` (the true values and the pages that
  state them), ``verify.py`` (the check that labels one item: right value, cited page
  states it), and ``answers/<answer>.json`` + ``.jsonl`` (an answer split into items,
  and the answering agent's trajectory).

An item's id says what its author intended (``pass-*`` or ``fail-*``); its label always
comes from running ``verify.py`` on the item (the tests check the two agree).
"""

from __future__ import annotations

import json
import random
import shutil
import textwrap
from pathlib import Path

import yaml

OUT = Path("src/lhbench/packs/data/aj-search-mini")
MIRROR = "https://wikimirror.example"
FORUM = "https://trailtalk-forum.example"

TOPICS = [
    {
        "id": "karsk-huts",
        "subdomain": "wide",
        "site": "https://karsk-alpine-club.example",
        "kind": "mountain hut",
        "attr": "elevation",
        "unit": "m",
        "question": "List five mountain huts of the Karsk range with the elevation of each in "
        "metres, citing a page that states it.",
        "names": [
            "Brenna Hut",
            "Corvall Refuge",
            "Dunmarrow Hut",
            "Eskel Shelter",
            "Fernholt Hut",
            "Gelder Bivouac",
            "Harrowpeak Hut",
            "Istra Lodge",
        ],
        "range": (1400, 3200),
    },
    {
        "id": "orrin-bridges",
        "subdomain": "wide",
        "site": "https://orrin-heritage.example",
        "kind": "bridge over the Orrin",
        "attr": "year opened",
        "unit": "",
        "question": "List five bridges over the river Orrin with the year each opened, citing "
        "a page that states it.",
        "names": [
            "Aldmoor Bridge",
            "Bexley Span",
            "Calloway Viaduct",
            "Dorrit Footbridge",
            "Emberley Bridge",
            "Fallow Arch",
            "Greyholm Bridge",
            "Hestin Crossing",
        ],
        "range": (1790, 2015),
    },
    {
        "id": "velm-lighthouses",
        "subdomain": "deep",
        "site": "https://velm-coastguard.example",
        "kind": "lighthouse on the Velm coast",
        "attr": "tower height",
        "unit": "m",
        "question": "For the lighthouses of the Velm coast, give the tower height in metres of "
        "five of them, each with a page that states it.",
        "names": [
            "Ardley Point Light",
            "Bramhead Light",
            "Carrow Rock Light",
            "Dellan Light",
            "Eastreach Light",
            "Fennick Light",
            "Gorsey Head Light",
            "Holm Light",
        ],
        "range": (12, 58),
    },
    {
        "id": "tessaly-libraries",
        "subdomain": "deep",
        "site": "https://tessaly-libraries.example",
        "kind": "public library of Tessaly",
        "attr": "year founded",
        "unit": "",
        "question": "Find five public libraries of Tessaly and the year each was founded, with "
        "a page that states it.",
        "names": [
            "Amberlane Library",
            "Birchgate Library",
            "Cinder Street Library",
            "Dovecote Library",
            "Elmsworth Library",
            "Foxley Library",
            "Glassmoor Library",
            "Hallam Library",
        ],
        "range": (1850, 1995),
    },
]

VERIFY = '''"""Label one item of a search answer: the value is right and a cited page states it."""
import argparse, json, re, sys
from pathlib import Path

ap = argparse.ArgumentParser(); ap.add_argument("--root", required=True)
root = Path(ap.parse_args().root)
facts = json.loads((Path(__file__).parent / "facts.json").read_text())
item = json.loads((root / "item.json").read_text())


def done(ok, detail):
    print(json.dumps({"detail": detail})); sys.exit(0 if ok else 1)


def norm(url):
    url = url.strip().split("#")[0]
    return url[:-1] if url.endswith("/") and url.count("/") > 3 else url


m = re.match(r"^(?P<name>.+?) \\u2014 (?P<value>[0-9][0-9,]*)", item["text"])
if m is None:
    done(False, "the item names no entity and value")
name, value = m["name"].strip(), m["value"].replace(",", "")
fact = facts["entities"].get(name)
if fact is None:
    done(False, f"{name!r} is not a {facts['kind']}")
if value != str(fact["value"]):
    done(False, f"{name}: {value} stated, {fact['value']} true")
cited = {norm(s) for s in item.get("sources", [])}
if not cited & set(fact["supporting"]):
    done(False, f"{name}: no cited page states the value ({sorted(cited)})")
done(True, f"{name}: {value} stated by {sorted(cited & set(fact['supporting']))[0]}")
'''


def slug(name: str) -> str:
    return name.lower().replace(" ", "-")


def fmt(v: int, unit: str) -> str:
    return f"{v:,}" + (f" {unit}" if unit else "")


def html(title: str, body: str, boiler: str) -> str:
    return (
        f"<!doctype html><html><head><title>{title}</title>"
        f"<style>body{{font-family:serif}}</style><script>var tracking = 1;</script></head>"
        f"<body><header>{boiler}</header><main><h1>{title}</h1>{body}</main>"
        f"<footer>{boiler} — all pages recorded for lhbench</footer></body></html>\n"
    )


def make_topic(t: dict, rng: random.Random, pages: list[dict]) -> dict:
    """The topic's pages (appended to ``pages``) and its facts."""
    lo, hi = t["range"]
    values = {n: rng.randint(lo, hi) for n in t["names"]}
    entities: dict[str, dict] = {}
    overview_url = f"{t['site']}/{t['id']}"
    day = rng.randint(1, 20)
    for i, name in enumerate(t["names"]):
        v = values[name]
        official = f"{t['site']}/{slug(name)}"
        mirror = f"{MIRROR}/wiki/{slug(name)}"
        neighbour = t["names"][(i + 1) % len(t["names"])]
        body = (
            f"<p>{name} is a {t['kind']}. Its {t['attr']} is <b>{fmt(v, t['unit'])}</b>.</p>"
            f"<p>It is often visited together with {neighbour}. Records are kept by the "
            f"{t['site'].split('//')[1]} editors.</p>"
        )
        pages.append(
            {
                "url": official,
                "captured_at": f"2026-03-{day:02d}T10:{i:02d}:00+00:00",
                "title": name,
                "html": html(name, body, "Official site"),
            }
        )
        pages.append(
            {
                "url": mirror,
                "captured_at": f"2026-03-{day + 1:02d}T08:{i:02d}:00+00:00",
                "title": f"{name} - WikiMirror",
                "html": html(f"{name} - WikiMirror", body, "WikiMirror: copied for reading"),
            }
        )
        entities[name] = {"value": v, "supporting": [official, mirror, overview_url]}
    # contradicting pages: an old survey and a forum post with wrong values
    for j, name in enumerate(t["names"][:3]):
        wrong = values[name] + rng.choice([-1, 1]) * rng.randint(2, 40)
        url = f"{FORUM}/t/{t['id']}-{slug(name)}"
        body = (
            f"<p>Posted by a visitor: I think {name} has a {t['attr']} of "
            f"{fmt(wrong, t['unit'])}, from an old 1998 survey leaflet.</p>"
        )
        pages.append(
            {
                "url": url,
                "captured_at": f"2026-02-{10 + j:02d}T12:00:00+00:00",
                "title": f"Thread: {name}",
                "html": html(f"Thread: {name}", body, "TrailTalk forum"),
            }
        )
        entities[name]["contradicted_by"] = {"url": url, "value": wrong}
    rows = "".join(
        f"<li><a href='{t['site']}/{slug(n)}'>{n}</a>: {fmt(values[n], t['unit'])}</li>"
        for n in t["names"]
    )
    pages.append(
        {
            "url": overview_url,
            "captured_at": f"2026-03-{day:02d}T09:00:00+00:00",
            "title": f"All {t['kind']}s",
            "html": html(f"All {t['kind']}s", f"<ul>{rows}</ul>", "Official site"),
        }
    )
    return {"kind": t["kind"], "attr": t["attr"], "unit": t["unit"], "entities": entities}


KINDS_PASS = ["pass-official", "pass-mirror", "pass-overview"]
KINDS_FAIL = [
    "fail-contradicted",
    "fail-misread",
    "fail-unsupported",
    "fail-unrecorded",
    "fail-fabricated",
]


def make_item(kind: str, name: str, t: dict, facts: dict, rng: random.Random) -> dict:
    ent = facts["entities"].get(name)
    unit = t["unit"]
    official = f"{t['site']}/{slug(name)}"
    if kind == "pass-official":
        v, src = ent["value"], official
    elif kind == "pass-mirror":
        v, src = ent["value"], f"{MIRROR}/wiki/{slug(name)}"
    elif kind == "pass-overview":
        v, src = ent["value"], f"{t['site']}/{t['id']}"
    elif kind == "fail-contradicted":
        v, src = ent["contradicted_by"]["value"], ent["contradicted_by"]["url"]
    elif kind == "fail-misread":
        v, src = ent["value"] + rng.choice([-10, -3, 3, 10]), official
    elif kind == "fail-unsupported":
        other = next(n for n in t["names"] if n != name)
        v, src = ent["value"], f"{t['site']}/{slug(other)}"
    elif kind == "fail-unrecorded":
        v, src = ent["value"], f"https://travel-notes.example/{slug(name)}"
    else:  # fabricated: a name not in the topic
        name = "Quillon " + t["names"][0].split()[-1]
        v, src = rng.randint(*t["range"]), f"{t['site']}/{slug(name)}"
    return {"text": f"{name} \u2014 {fmt(v, unit)} (source: {src})", "sources": [src]}


def make_answers(t: dict, facts: dict, rng: random.Random) -> list[tuple[str, dict, list]]:
    out = []
    for a in range(3):
        names = t["names"][:]
        rng.shuffle(names)
        # contradicted items need a contradicted entity (the first three)
        contradicted = [n for n in names if "contradicted_by" in facts["entities"][n]]
        kinds = rng.sample(KINDS_PASS + KINDS_PASS, 3) + rng.sample(KINDS_FAIL, 2)
        rng.shuffle(kinds)
        # entities chosen for contradicted items first (only three entities have one)
        chosen: dict[int, str] = {}
        for k in sorted(range(len(kinds)), key=lambda k: kinds[k] != "fail-contradicted"):
            pool = contradicted if kinds[k] == "fail-contradicted" else names
            chosen[k] = next(n for n in pool if n not in chosen.values())
        items = []
        for k, kind in enumerate(kinds):
            it = make_item(kind, chosen[k], t, facts, rng)
            items.append({"id": f"i{k + 1}-{kind}", **it})
        answer = f"Here are five {t['kind']}s and their {t['attr']}:\n\n" + "\n".join(
            f"{n}. {it['text']}" for n, it in enumerate(items, 1)
        )
        steps = [
            {"type": "run", "session_id": f"{t['id']}-a{a + 1}", "model": "fixture"},
            {"role": "user", "kind": "message", "content": t["question"]},
        ]
        call = 0
        for q in (t["kind"] + " " + t["attr"], t["names"][0]):
            call += 1
            steps.append(
                {
                    "role": "assistant",
                    "kind": "tool_call",
                    "tool_name": "web_search",
                    "tool_call_id": f"c{call}",
                    "tool_input": {"query": q},
                }
            )
            steps.append(
                {
                    "role": "tool",
                    "kind": "tool_result",
                    "tool_call_id": f"c{call}",
                    "tool_output": "\n".join(it["sources"][0] for it in items[:3]),
                }
            )
        for it in items:
            call += 1
            steps.append(
                {
                    "role": "assistant",
                    "kind": "tool_call",
                    "tool_name": "browse",
                    "tool_call_id": f"c{call}",
                    "tool_input": {"url": it["sources"][0]},
                }
            )
            steps.append(
                {
                    "role": "tool",
                    "kind": "tool_result",
                    "tool_call_id": f"c{call}",
                    "tool_output": "(page text)",
                }
            )
        steps.append({"role": "assistant", "kind": "message", "content": answer})
        steps.append({"type": "end", "status": "completed"})
        out.append((f"a{a + 1}", {"answer": answer, "items": items}, steps))
    return out


def main() -> None:
    rng = random.Random(18)
    if OUT.exists():
        shutil.rmtree(OUT)
    (OUT / "corpus" / "pages").mkdir(parents=True)
    (OUT / "pack.yaml").write_text(
        "# Generated by scripts/make_aj_search_mini.py; edit that script, not these files.\n"
        + yaml.safe_dump(
            {
                "id": "aj-search-mini",
                "version": "1.0",
                "environment": "web",
                "description": "Agent-as-a-Judge sample, search domain: a recorded web of "
                "invented places (with near-duplicate and contradicting pages) and answers "
                "split into items; each item's label comes from its task's verify script.",
            },
            sort_keys=False,
        )
    )
    (OUT / "README.md").write_text(textwrap.dedent(__doc__ or "").strip() + "\n")
    pages: list[dict] = []
    n_items = 0
    for t in TOPICS:
        facts = make_topic(t, rng, pages)
        d = OUT / "tasks" / t["id"]
        (d / "answers").mkdir(parents=True)
        (d / "facts.json").write_text(json.dumps(facts, indent=1) + "\n")
        (d / "verify.py").write_text(VERIFY)
        (d / "task.yaml").write_text(
            yaml.safe_dump(
                {
                    "title": t["question"].split(",")[0],
                    "instruction": t["question"],
                    "environment": {"kind": "web", "verify": "verify.py"},
                    "tags": {"category": "search", "subdomain": t["subdomain"]},
                },
                sort_keys=False,
            )
        )
        for aid, answer, steps in make_answers(t, facts, rng):
            n_items += len(answer["items"])
            (d / "answers" / f"{aid}.json").write_text(json.dumps(answer, indent=1) + "\n")
            (d / "answers" / f"{aid}.jsonl").write_text(
                "".join(json.dumps(s) + "\n" for s in steps)
            )
    lines = []
    for n, p in enumerate(pages):
        f = f"pages/p{n:03d}.html"
        (OUT / "corpus" / f).write_text(p["html"])
        lines.append(
            json.dumps(
                {"url": p["url"], "captured_at": p["captured_at"], "file": f, "title": p["title"]}
            )
        )
    (OUT / "corpus" / "pages.jsonl").write_text("\n".join(lines) + "\n")
    print(f"{OUT}: {len(pages)} pages, {len(TOPICS)} tasks, {n_items} items")


if __name__ == "__main__":
    main()
