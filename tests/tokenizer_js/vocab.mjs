// The vocabularies embedded in the npm packages llama-tokenizer-js (Llama
// 2: 32,000 tokens, 61,249 merges) and llama3-tokenizer-js (Llama 3:
// 128,000 tokens and 256 special ones, 280,147 merges), written as the
// files the library loads: a Hugging Face tokenizer.json and a GGUF file
// of tokenizer metadata for each.
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import llama2 from "llama-tokenizer-js";
import { LlamaTokenizer } from "llama-tokenizer-js";
import llama3 from "llama3-tokenizer-js";
import { Llama3Tokenizer } from "llama3-tokenizer-js";

const require = createRequire(import.meta.url);

// The packages keep their merges in a packed form inside the module; their
// own decompressMerges reads it. Run with a stand-in for `this` whose
// merge key is the pair of ids, the merges come out as id pairs in rank
// order, whatever characters the tokens hold.
function mergePairs(Cls, file) {
  const src = readFileSync(file, "utf8");
  const m = /const llama_merges_binary = "([^"]*)"/.exec(src);
  if (!m) throw new Error(`no merges found in ${file}`);
  const probe = { getMergeIdentifierString: (a, b) => `${a},${b}` };
  const map = Cls.prototype.decompressMerges.call(probe, m[1]);
  return [...map.keys()].map((k) => k.split(",").map(Number));
}

const pkgFile = (name, rel) => join(dirname(require.resolve(`${name}/package.json`)), rel);

export function llama2Vocab() {
  const tokens = llama2.vocabById;
  const pairs = mergePairs(LlamaTokenizer, pkgFile("llama-tokenizer-js", "llama-tokenizer.js"));
  return { tokens, pairs, bos: 1, eos: 2, unk: 0 };
}

export function llama3Vocab() {
  const tokens = llama3.vocabById;
  const pairs = mergePairs(Llama3Tokenizer, pkgFile("llama3-tokenizer-js", "bundle/llama3-tokenizer-with-baked-data.js"));
  return { tokens, pairs, bos: 128000, eos: 128001, firstSpecial: 128000 };
}

// ----------------------------------------------------------- GGUF writer
const T = { U32: 4, I32: 5, F32: 6, BOOL: 7, STRING: 8, ARRAY: 9 };
class Out {
  constructor() { this.parts = []; }
  u32(v) { const b = Buffer.alloc(4); b.writeUInt32LE(v); this.parts.push(b); }
  i32(v) { const b = Buffer.alloc(4); b.writeInt32LE(v); this.parts.push(b); }
  u64(v) { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); this.parts.push(b); }
  str(s) { const b = Buffer.from(s, "utf8"); this.u64(b.length); this.parts.push(b); }
  bytes() { return Buffer.concat(this.parts); }
}
function writeGguf(path, kvs) {
  const o = new Out();
  o.parts.push(Buffer.from("GGUF"));
  o.u32(3);
  o.u64(0);
  o.u64(kvs.length);
  for (const [key, type, value, elem] of kvs) {
    o.str(key);
    o.u32(type);
    if (type === T.STRING) o.str(value);
    else if (type === T.U32) o.u32(value);
    else if (type === T.BOOL) o.parts.push(Buffer.from([value ? 1 : 0]));
    else if (type === T.ARRAY) {
      o.u32(elem);
      o.u64(value.length);
      if (elem === T.STRING) for (const s of value) o.str(s);
      else if (elem === T.F32) { const b = Buffer.alloc(4 * value.length); value.forEach((v, i) => b.writeFloatLE(v, 4 * i)); o.parts.push(b); }
      else if (elem === T.I32) { const b = Buffer.alloc(4 * value.length); value.forEach((v, i) => b.writeInt32LE(v, 4 * i)); o.parts.push(b); }
      else throw new Error("element type");
    } else throw new Error("type");
  }
  writeFileSync(path, o.bytes());
}

const LLAMA3_PATTERN = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

// Llama 2 as Hugging Face writes it: a BPE model with byte fallback over
// the "▁"-normalized text; and as llama.cpp's converter writes a GGUF: the
// SentencePiece pieces with scores. The packages carry merge ranks, not
// scores: a piece's score here is minus the rank of the first merge that
// makes it (pieces no merge makes get -1e9), so that merging by score
// orders the merges as the ranks do.
export function writeLlama2(dir) {
  const { tokens, pairs, bos, eos, unk } = llama2Vocab();
  const vocab = {};
  tokens.forEach((t, i) => { vocab[t] = i; });
  const json = {
    version: "1.0",
    added_tokens: [unk, bos, eos].map((id) => ({ id, content: tokens[id], single_word: false, lstrip: false, rstrip: false, normalized: false, special: true })),
    normalizer: { type: "Sequence", normalizers: [{ type: "Prepend", prepend: "▁" }, { type: "Replace", pattern: { String: " " }, content: "▁" }] },
    pre_tokenizer: null,
    post_processor: { type: "TemplateProcessing", single: [{ SpecialToken: { id: "<s>", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }], pair: [], special_tokens: {} },
    model: { type: "BPE", dropout: null, unk_token: "<unk>", byte_fallback: true, fuse_unk: true, ignore_merges: false, vocab, merges: pairs.map(([a, b]) => `${tokens[a]} ${tokens[b]}`) },
  };
  writeFileSync(join(dir, "llama2.tokenizer.json"), JSON.stringify(json));
  const scores = new Array(tokens.length).fill(-1e9);
  const made = new Set();
  pairs.forEach(([a, b], rank) => {
    const id = vocab[tokens[a] + tokens[b]];
    if (id !== undefined && !made.has(id)) { made.add(id); scores[id] = -rank; }
  });
  const types = tokens.map((t, i) => (i === unk ? 2 : i === bos || i === eos ? 3 : /^<0x[0-9A-F]{2}>$/.test(t) ? 6 : 1));
  writeGguf(join(dir, "llama2.gguf"), [
    ["general.architecture", T.STRING, "llama"],
    ["tokenizer.ggml.model", T.STRING, "llama"],
    ["tokenizer.ggml.tokens", T.ARRAY, tokens, T.STRING],
    ["tokenizer.ggml.scores", T.ARRAY, scores, T.F32],
    ["tokenizer.ggml.token_type", T.ARRAY, types, T.I32],
    ["tokenizer.ggml.bos_token_id", T.U32, bos],
    ["tokenizer.ggml.eos_token_id", T.U32, eos],
    ["tokenizer.ggml.unknown_token_id", T.U32, unk],
    ["tokenizer.ggml.add_bos_token", T.BOOL, true],
  ]);
}

// Llama 3 as Hugging Face writes it (the Split pattern, ByteLevel without
// its own pattern, ignore_merges) and as llama.cpp writes a GGUF
// (tokenizer.ggml.model gpt2, pre llama-bpe).
export function writeLlama3(dir) {
  const { tokens, pairs, bos, eos, firstSpecial } = llama3Vocab();
  const vocab = {};
  for (let i = 0; i < firstSpecial; i++) vocab[tokens[i]] = i;
  const added = [];
  for (let i = firstSpecial; i < tokens.length; i++)
    added.push({ id: i, content: tokens[i], single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
  const json = {
    version: "1.0",
    added_tokens: added,
    normalizer: null,
    pre_tokenizer: { type: "Sequence", pretokenizers: [
      { type: "Split", pattern: { Regex: LLAMA3_PATTERN }, behavior: "Isolated", invert: false },
      { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: false }] },
    post_processor: { type: "Sequence", processors: [
      { type: "ByteLevel", add_prefix_space: true, trim_offsets: false, use_regex: true },
      { type: "TemplateProcessing", single: [{ SpecialToken: { id: "<|begin_of_text|>", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }], pair: [], special_tokens: {} }] },
    decoder: { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: "BPE", dropout: null, unk_token: null, byte_fallback: false, fuse_unk: false, ignore_merges: true, vocab, merges: pairs.map(([a, b]) => [tokens[a], tokens[b]]) },
  };
  writeFileSync(join(dir, "llama3.tokenizer.json"), JSON.stringify(json));
  const types = tokens.map((_, i) => (i >= firstSpecial ? 3 : 1));
  writeGguf(join(dir, "llama3.gguf"), [
    ["general.architecture", T.STRING, "llama"],
    ["tokenizer.ggml.model", T.STRING, "gpt2"],
    ["tokenizer.ggml.pre", T.STRING, "llama-bpe"],
    ["tokenizer.ggml.tokens", T.ARRAY, tokens, T.STRING],
    ["tokenizer.ggml.token_type", T.ARRAY, types, T.I32],
    ["tokenizer.ggml.merges", T.ARRAY, pairs.map(([a, b]) => `${tokens[a]} ${tokens[b]}`), T.STRING],
    ["tokenizer.ggml.bos_token_id", T.U32, bos],
    ["tokenizer.ggml.eos_token_id", T.U32, eos],
    ["tokenizer.ggml.add_bos_token", T.BOOL, true],
  ]);
}
