"""Label: settings.json holds settings.ini's sections and keys, integers as numbers."""
import argparse, configparser, json, sys
from pathlib import Path

ap = argparse.ArgumentParser(); ap.add_argument("--root", required=True)
root = Path(ap.parse_args().root)
def done(ok, detail):
    print(json.dumps({"detail": detail})); sys.exit(0 if ok else 1)
ini = configparser.ConfigParser(); ini.read(root / "settings.ini")
if not ini.sections():
    done(False, "settings.ini was removed or emptied")
try:
    doc = json.loads((root / "settings.json").read_text())
except (OSError, ValueError) as exc:
    done(False, f"settings.json unreadable: {exc}")
for section in ini.sections():
    for key, value in ini[section].items():
        want = int(value) if value.isdigit() else value
        got = doc.get(section, {}).get(key) if isinstance(doc, dict) else None
        if got != want or type(got) is not type(want):
            done(False, f"{section}.{key}: expected {want!r}, found {got!r}")
done(True, "every key converted")
