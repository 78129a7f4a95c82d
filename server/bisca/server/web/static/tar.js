// A bot folder as the .tar.gz a league takes (POST /api/submissions), built in the browser
// with no DOM: a plain ustar archive of regular files (no links, owners or times kept, as
// `bisca submit` packs it), gzipped by the platform's CompressionStream.

// Folders a submission leaves out, as `bisca submit` does (accounts/_archive.py's LEFT_OUT).
export const LEFT_OUT = new Set([".git", "__pycache__", "build", ".venv", "node_modules"]);

const BLOCK = 512;
const encoder = new TextEncoder();

// The path of a file chosen with <input webkitdirectory> inside its folder: the folder's own
// name (the first segment) taken off; null when it lies in a folder left out.
export function relativePath(webkitRelativePath) {
  const parts = webkitRelativePath.split("/").filter(Boolean);
  const inside = parts.length > 1 ? parts.slice(1) : parts;
  if (!inside.length || inside.some((part) => LEFT_OUT.has(part))) return null;
  return inside.join("/");
}

function field(header, offset, length, text) {
  const bytes = encoder.encode(text);
  if (bytes.length > length) throw new Error(`tar: ${text} does not fit ${length} bytes`);
  header.set(bytes, offset);
}

function octal(header, offset, length, value) {
  // length-1 octal digits and a NUL, as ustar writes numbers.
  field(header, offset, length, value.toString(8).padStart(length - 1, "0") + "\0");
}

// ustar keeps a path as prefix (155 bytes) + "/" + name (100 bytes).
function splitPath(path) {
  const bytes = encoder.encode(path).length;
  if (bytes <= 100) return ["", path];
  for (let cut = path.indexOf("/"); cut > 0; cut = path.indexOf("/", cut + 1)) {
    const prefix = path.slice(0, cut);
    const name = path.slice(cut + 1);
    if (encoder.encode(prefix).length <= 155 && encoder.encode(name).length <= 100)
      return [prefix, name];
  }
  throw new Error(`the path ${path} is too long for the archive`);
}

function header(path, size, executable) {
  const block = new Uint8Array(BLOCK);
  const [prefix, name] = splitPath(path);
  field(block, 0, 100, name);
  octal(block, 100, 8, executable ? 0o755 : 0o644);
  octal(block, 108, 8, 0); // uid
  octal(block, 116, 8, 0); // gid
  octal(block, 124, 12, size);
  octal(block, 136, 12, 0); // mtime: not kept
  block.fill(0x20, 148, 156); // the checksum counts its own field as spaces
  block[156] = "0".charCodeAt(0); // a regular file
  field(block, 257, 6, "ustar\0");
  field(block, 263, 2, "00");
  field(block, 345, 155, prefix);
  const sum = block.reduce((total, byte) => total + byte, 0);
  field(block, 148, 8, sum.toString(8).padStart(6, "0") + "\0 ");
  return block;
}

// The tar archive (uncompressed) of `files`: [{path, bytes: Uint8Array, executable}], in path
// order, each path given once.
export function tar(files) {
  const sorted = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const parts = [];
  let total = 0;
  const seen = new Set();
  for (const { path, bytes, executable } of sorted) {
    if (seen.has(path)) throw new Error(`the folder holds ${path} twice`);
    seen.add(path);
    const padding = (BLOCK - (bytes.length % BLOCK)) % BLOCK;
    parts.push(header(path, bytes.length, executable), bytes, new Uint8Array(padding));
    total += BLOCK + bytes.length + padding;
  }
  parts.push(new Uint8Array(2 * BLOCK)); // the end: two empty blocks
  total += 2 * BLOCK;
  const archive = new Uint8Array(total);
  let offset = 0;
  for (const part of parts) {
    archive.set(part, offset);
    offset += part.length;
  }
  return archive;
}

// The .tar.gz of `files` as a Blob (type application/gzip), through CompressionStream.
export async function tarGz(files) {
  const stream = new Blob([tar(files)]).stream().pipeThrough(new CompressionStream("gzip"));
  const gzipped = await new Response(stream).arrayBuffer();
  return new Blob([gzipped], { type: "application/gzip" });
}
