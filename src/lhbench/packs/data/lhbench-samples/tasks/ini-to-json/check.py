"""Post-tool hook: tell the agent whether settings.json exists and parses."""
import argparse, json
from pathlib import Path

ap = argparse.ArgumentParser(); ap.add_argument("--root", required=True)
root = Path(ap.parse_args().root)
p = root / "settings.json"
if not p.is_file():
    print(json.dumps({"ok": False, "diagnosis": "settings.json does not exist yet",
                      "next_action": "write settings.json"}))
else:
    try:
        json.loads(p.read_text())
        print(json.dumps({"ok": True, "diagnosis": "settings.json parses", "next_action": ""}))
    except ValueError as exc:
        print(json.dumps({"ok": False, "diagnosis": f"settings.json is not valid JSON: {exc}",
                          "next_action": "fix the JSON syntax in settings.json"}))
