// The bot folder's .tar.gz, built as the browser builds it (static/tar.js), read back by
// Python's tarfile (the module the league unpacks with).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { test } from "node:test";

import { relativePath, tar, tarGz } from "../../../server/bisca/server/web/static/tar.js";

const bytes = (text) => new TextEncoder().encode(text);

const READ_BACK = `
import io, sys, tarfile, json
with tarfile.open(fileobj=io.BytesIO(sys.stdin.buffer.read()), mode="r:gz") as archive:
    print(json.dumps([[m.name, m.size, m.mode, m.isreg(), archive.extractfile(m).read().decode()]
                      for m in archive]))
`;

test("a folder's files become a .tar.gz Python's tarfile reads back exactly", async () => {
  const long = `${"deep/".repeat(30)}file.py`; // over ustar's 100-byte name: a prefix is used
  const files = [
    { path: "bisca-bot.toml", bytes: bytes('name = "adabot"\n') },
    { path: "my_bot.py", bytes: bytes("print('hi')\n".repeat(100)), executable: true },
    { path: "empty.txt", bytes: new Uint8Array(0) },
    { path: long, bytes: bytes("x = 1\n") },
  ];
  const gz = new Uint8Array(await (await tarGz(files)).arrayBuffer());
  assert.equal((await tarGz(files)).type, "application/gzip");
  const python = process.env.BISCA_PYTHON || "python3";
  const members = JSON.parse(execFileSync(python, ["-c", READ_BACK], { input: gz }).toString());
  assert.deepEqual(
    members.map(([name, size, mode, regular]) => [name, size, mode, regular]),
    [
      ["bisca-bot.toml", 16, 0o644, true],
      [long, 6, 0o644, true],
      ["empty.txt", 0, 0o644, true],
      ["my_bot.py", 1200, 0o755, true],
    ],
  );
  assert.equal(members[3][4], "print('hi')\n".repeat(100));
});

test("the archive is whole blocks ending in two empty ones", () => {
  const archive = tar([{ path: "a", bytes: bytes("abc") }]);
  assert.equal(archive.length, 512 * 4);
  assert.ok(archive.slice(1024).every((b) => b === 0));
});

test("a path given twice or too long is refused", () => {
  assert.throws(
    () =>
      tar([
        { path: "a", bytes: bytes("") },
        { path: "a", bytes: bytes("") },
      ]),
    /twice/,
  );
  assert.throws(() => tar([{ path: "x".repeat(300), bytes: bytes("") }]), /too long/);
});

test("a chosen folder's paths lose the folder's name, and left-out folders are dropped", () => {
  assert.equal(relativePath("adabot/my_bot.py"), "my_bot.py");
  assert.equal(relativePath("adabot/lib/util.py"), "lib/util.py");
  assert.equal(relativePath("adabot/__pycache__/my_bot.cpython-311.pyc"), null);
  assert.equal(relativePath("adabot/.git/HEAD"), null);
  assert.equal(relativePath("adabot/.venv/bin/python"), null);
});
