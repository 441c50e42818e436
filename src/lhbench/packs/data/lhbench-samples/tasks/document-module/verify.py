"""Label: README.md names every public function of textkit.py with its signature."""
import argparse, ast, json, sys
from pathlib import Path

ap = argparse.ArgumentParser(); ap.add_argument("--root", required=True)
root = Path(ap.parse_args().root)
def done(ok, detail):
    print(json.dumps({"detail": detail})); sys.exit(0 if ok else 1)
readme = root / "README.md"
if not readme.is_file():
    done(False, "README.md is missing")
text = " ".join(readme.read_text(errors="replace").split())
tree = ast.parse((root / "textkit.py").read_text())
missing = []
for node in tree.body:
    if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
        sig = f"{node.name}({ast.unparse(node.args)})"
        if " ".join(sig.split()) not in text:
            missing.append(node.name)
done(not missing, "all documented" if not missing else f"missing signatures: {', '.join(missing)}")
