// How Dataview and luxon read front-matter strings: stdin a JSON array of strings, stdout a
// JSON array of {dataview_date, luxon_iso, link} per string (link: the path, or null).
//
// The grammars are Dataview's own (EXPRESSION.date, EXPRESSION.embedLink from the published
// obsidian-dataview package, tried in the order its parseFrontmatter tries them) and luxon's
// DateTime.fromISO.  The package's library build requires "obsidian", the app's API, which
// npm ships as type declarations only; the grammars never use it, so it loads as {}.
"use strict";
const path = require("path");
const Module = require("module");
const root = process.argv[2];
const load = Module._load;
Module._load = function (request, ...rest) {
  return request === "obsidian" ? {} : load.call(this, request, ...rest);
};
const dv = require(path.join(root, "obsidian-dataview", "lib", "index.js"));
const { DateTime } = require(path.join(root, "luxon"));

const values = JSON.parse(require("fs").readFileSync(0, "utf8"));
const out = values.map((value) => {
  const date = dv.EXPRESSION.date.parse(value);
  const link = date.status ? { status: false } : dv.EXPRESSION.embedLink.parse(value);
  return {
    dataview_date: date.status,
    luxon_iso: DateTime.fromISO(value).isValid,
    link: link.status ? link.value.path : null,
  };
});
process.stdout.write(JSON.stringify(out));
