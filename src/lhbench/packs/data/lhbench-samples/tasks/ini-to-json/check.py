"""Post-tool hook: tell the agent whether settings.json exists and parses (exit 0 when ok, 1 when not)."""
import argparse, json, sys
from pathlib import Path

ap = argparse.ArgumentParser(); ap.add_argument("--root", required=True)
root = Path(ap.parse_args().root)
p = root / "settings.json"


def answer(ok, diagnosis, next_action=""):
    print(json.dumps({"ok": ok, "diagnosis": diagnosis, "next_action": next_action}))
    sys.exit(0 if ok else 1)


if not p.is_file():
    answer(False, "settings.json does not exist yet", "write settings.json")
try:
    json.loads(p.read_text())
except ValueError as exc:
    answer(False, f"settings.json is not valid JSON: {exc}", "fix the JSON syntax in settings.json")
answer(True, "settings.json parses")
