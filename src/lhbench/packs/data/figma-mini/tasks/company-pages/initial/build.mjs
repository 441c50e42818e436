// Builds the site: copies src/ to dist/ (Node's standard library only).
import { cpSync, existsSync, rmSync } from "node:fs";

if (!existsSync("src")) {
  console.error("nothing to build: src/ does not exist");
  process.exit(1);
}
rmSync("dist", { recursive: true, force: true });
cpSync("src", "dist", { recursive: true });
console.log("built dist/ from src/");
