// Builds the site: copies site/ to dist/ (Node's standard library only).
import { cpSync, existsSync, rmSync } from "node:fs";

if (!existsSync("site")) {
  console.error("nothing to build: site/ does not exist");
  process.exit(1);
}
rmSync("dist", { recursive: true, force: true });
cpSync("site", "dist", { recursive: true });
console.log("built dist/ from site/");
