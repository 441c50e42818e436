"""Label one item of a search answer: the value is right and a cited page states it."""
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


m = re.match(r"^(?P<name>.+?) \u2014 (?P<value>[0-9][0-9,]*)", item["text"])
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
