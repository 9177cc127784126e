// wt.Tokenizer: the C tokenizers through the wasm module. Ids derived here
// independently of the library (a byte-level vocabulary whose ids follow
// from its JSON, a small SentencePiece vocabulary worked out by hand), the
// streaming decoder, errors; and the ids of many texts equal to the native
// library's (tests/tokenizer_check from the native build, WT_BUILD_DIR or
// build/, or WT_TOKENIZER_CHECK) on tests/data's vocabulary and on the real
// Llama 2 / Llama 3 vocabularies the native tokenizer_js_crosscheck writes
// (WT_TOKENIZER_VOCABS, default <build>/tests/tokenizer_js_work), as
// tokenizer.json and as GGUF. `make test` runs ctest before these.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { wt, root } from './harness.mjs';

const { Tokenizer, WebtensorError } = wt;
const BYTE_JSON = join(root, 'tests', 'data', 'byte_tokenizer', 'tokenizer.json');
const PROMPT = [1, 15, 42, 7, 99, 3, 200, 11, 64, 128, 5, 250, 17, 33, 71, 2];
const utf8 = (s) => new TextEncoder().encode(s);

// GPT-2's map of bytes to printable characters (the byte-level form).
function gpt2ByteChars() {
  const bs = [];
  for (let c = 0x21; c <= 0x7e; c++) bs.push(c);
  for (let c = 0xa1; c <= 0xac; c++) bs.push(c);
  for (let c = 0xae; c <= 0xff; c++) bs.push(c);
  const cs = bs.slice();
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!bs.includes(b)) {
      bs.push(b);
      cs.push(256 + n++);
    }
  }
  const map = new Map();
  bs.forEach((b, i) => map.set(b, String.fromCodePoint(cs[i])));
  return map;
}

// The SentencePiece vocabulary of python/tests/test_tokenizer.py (the ids
// are worked out there): "ab ab" -> [8, 8], "ba" -> [3, 5, 4],
// "ab é" -> [8, 3, 9, 10].
const SPM = {
  model: {
    type: 'BPE', byte_fallback: true,
    vocab: { '<unk>': 0, '<s>': 1, '</s>': 2, '\u2581': 3, a: 4, b: 5, '\u2581a': 6, ab: 7, '\u2581ab': 8,
             '<0xC3>': 9, '<0xA9>': 10 },
    merges: ['\u2581 a', 'a b', '\u2581a b'],
  },
  added_tokens: [
    { id: 0, content: '<unk>', special: true },
    { id: 1, content: '<s>', special: true },
    { id: 2, content: '</s>', special: true },
  ],
};

// SPM's vocabulary as a GGUF file's metadata (version 3, no tensors),
// written from GGUF's layout: "llama" merges by the merged piece's score,
// highest first; the scores -1 (▁a), -2 (ab), -3 (▁ab) give SPM's merge
// order, so the same ids (python/tests/test_tokenizer.py writes the same).
function spmGguf() {
  const parts = [];
  const u32 = (v) => { const b = Buffer.alloc(4); b.writeUInt32LE(v); parts.push(b); };
  const u64 = (v) => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); parts.push(b); };
  const str = (v) => { const b = Buffer.from(v, 'utf8'); u64(b.length); parts.push(b); };
  const vocab = SPM.model.vocab;
  const tokens = Object.keys(vocab).sort((a, b) => vocab[a] - vocab[b]);
  const scores = { '\u2581a': -1, ab: -2, '\u2581ab': -3 };
  const types = tokens.map((t, i) => (i === 0 ? 2 : i < 3 ? 3 : t.startsWith('<0x') ? 6 : 1));
  parts.push(Buffer.from('GGUF'));
  u32(3); u64(0); u64(8);
  str('tokenizer.ggml.model'); u32(8); str('llama');
  str('tokenizer.ggml.tokens'); u32(9); u32(8); u64(tokens.length); tokens.forEach(str);
  str('tokenizer.ggml.scores'); u32(9); u32(6); u64(tokens.length);
  for (const t of tokens) { const b = Buffer.alloc(4); b.writeFloatLE(scores[t] ?? -10); parts.push(b); }
  str('tokenizer.ggml.token_type'); u32(9); u32(5); u64(tokens.length);
  for (const v of types) { const b = Buffer.alloc(4); b.writeInt32LE(v); parts.push(b); }
  str('tokenizer.ggml.bos_token_id'); u32(4); u32(1);
  str('tokenizer.ggml.eos_token_id'); u32(4); u32(2);
  str('tokenizer.ggml.unknown_token_id'); u32(4); u32(0);
  str('tokenizer.ggml.add_bos_token'); u32(7); parts.push(Buffer.from([1]));
  return new Uint8Array(Buffer.concat(parts));
}

const rejects = (fn, status) => assert.throws(fn, (e) => e instanceof WebtensorError && e.status === status);

describe('Tokenizer', () => {
  it('encodes a byte-level vocabulary as its JSON says', async () => {
    const json = readFileSync(BYTE_JSON, 'utf8');
    const vocab = JSON.parse(json).model.vocab;
    const chars = gpt2ByteChars();
    const tok = await Tokenizer.fromJSON(json);
    assert.equal(tok.kind, 'bpe');
    assert.equal(tok.vocabSize, 256);
    assert.deepEqual([...tok.encode('abcdefghijklmnop')], PROMPT);
    for (const text of ['Hello, world!', '  two  spaces\n\ttab', 'héllo wörld', '日本語', '🦙 emoji', '']) {
      const want = [...utf8(text)].map((b) => vocab[chars.get(b)]);
      assert.deepEqual([...tok.encode(text)], want, text);
      assert.equal(tok.decode(want), text);
    }
    // Ill-formed UTF-8 is replaced by U+FFFD before encoding.
    assert.deepEqual([...tok.encode(new Uint8Array([0x61, 0xff, 0x62]))],
      [...utf8('a\ufffdb')].map((b) => vocab[chars.get(b)]));
    const a = vocab[chars.get(0x61)];
    assert.deepEqual(tok.token(a), { text: 'a', type: 'normal' });
    assert.deepEqual([...tok.tokenBytes(vocab[chars.get(0x20)])], [0x20]);
    assert.equal(tok.find('a'), a);
    assert.equal(tok.find('no such piece'), null);
    assert.equal(tok.bos, null);
    assert.equal(tok.addsBos, false);
    // The stream holds a partial UTF-8 sequence.
    const ids = tok.encode('a🦙é');
    const s = tok.stream();
    assert.deepEqual([...ids].map((i) => s.push(i)), ['a', '', '', '', '🦙', '', 'é']);
    assert.equal(s.flush(), '');
    assert.equal(s.push(ids[1]), '');
    assert.equal(s.flush(), '\ufffd');
    assert.deepEqual([...tok.decodeBytes(ids.slice(1, 3))], [...utf8('🦙').slice(0, 2)]);
    s.dispose();
    tok.dispose();
  });

  it('encodes a SentencePiece vocabulary as worked out by hand', async () => {
    const tok = await Tokenizer.fromJSON(JSON.stringify(SPM));
    assert.equal(tok.kind, 'spm');
    assert.equal(tok.bos, 1);
    assert.equal(tok.eos, 2);
    assert.deepEqual([...tok.encode('ab ab', { addBos: false })], [8, 8]);
    assert.deepEqual([...tok.encode('ba', { addBos: false })], [3, 5, 4]);
    assert.deepEqual([...tok.encode('ab é', { addBos: false })], [8, 3, 9, 10]);
    assert.deepEqual([...tok.encode('ab', { addBos: true, addEos: true })], [1, 8, 2]);
    assert.deepEqual([...tok.encode('ab', { addBos: false, prefixSpace: false })], [7]);
    assert.deepEqual([...tok.encode('</s>', { addBos: false, special: true })], [2]);
    assert.ok(tok.isEnd(2) && !tok.isEnd(8));
    assert.equal(tok.decode([8, 3, 9, 10]), ' ab é');
    assert.equal(tok.decode([1, 8, 3, 9, 10, 2], { skipSpecial: true, stripPrefixSpace: true }), 'ab é');
    const s = tok.stream({ skipSpecial: true, stripPrefixSpace: true });
    assert.deepEqual([1, 8, 3, 9, 10, 2].map((i) => s.push(i)), ['', 'ab', ' ', '', 'é', '']);
    assert.deepEqual(tok.token(9), { text: '<0xC3>', type: 'byte' });
    s.dispose();
    tok.dispose();
  });

  it('reads a GGUF file and refuses bad input', async () => {
    const g = await Tokenizer.fromGGUF(spmGguf());
    assert.equal(g.kind, 'spm');
    assert.ok(g.addsBos);
    assert.deepEqual([...g.encode('ab ab')], [1, 8, 8]); // BOS by default: the file asks for it
    assert.deepEqual([...g.encode('ab é', { addBos: false })], [8, 3, 9, 10]);
    assert.deepEqual([...g.encode('c', { addBos: false })], [3, 0]); // no token, no byte token: <unk>
    g.dispose();
    // A malformed file is refused with the reader's message.
    await assert.rejects(Tokenizer.fromGGUF(new Uint8Array([0x47, 0x47, 0x55, 0x46, 3, 0, 0, 0])),
      (e) => e instanceof WebtensorError && /GGUF|gguf/.test(e.message));
    await assert.rejects(Tokenizer.fromJSON('{"model": {"type": "Unigram", "vocab": []}}'),
      (e) => e instanceof WebtensorError && e.status === 'WT_ERR_UNSUPPORTED');
    await assert.rejects(Tokenizer.fromJSON(12), (e) => e instanceof WebtensorError);
    const tok = await Tokenizer.fromJSON(JSON.stringify(SPM));
    rejects(() => tok.decode([11]), 'WT_ERR_INVALID_ARGUMENT');
    rejects(() => tok.token(2 ** 40), 'WT_ERR_INVALID_ARGUMENT');
    rejects(() => tok.encode('</s>', { addBos: false }), 'WT_ERR_INVALID_ARGUMENT'); // "<" has no token
    const s = tok.stream();
    rejects(() => s.push(99), 'WT_ERR_INVALID_ARGUMENT');
    tok.dispose();
    rejects(() => tok.encode('a'), 'WT_ERR_INVALID_ARGUMENT');
    rejects(() => s.push(3), 'WT_ERR_INVALID_ARGUMENT');
    s.dispose();
    assert.equal(String(tok), 'Tokenizer(disposed)');
  });

  it('gives the native library\'s ids', async () => {
    const build = process.env.WT_BUILD_DIR || join(root, 'build');
    const check = process.env.WT_TOKENIZER_CHECK || join(build, 'tests', 'tokenizer_check');
    const vocabDir = process.env.WT_TOKENIZER_VOCABS || join(build, 'tests', 'tokenizer_js_work');
    const names = ['llama2.tokenizer.json', 'llama2.gguf', 'llama3.tokenizer.json', 'llama3.gguf'];
    assert.ok(existsSync(check), `${check} missing: build natively (make build) or set WT_TOKENIZER_CHECK`);
    for (const n of names) {
      assert.ok(existsSync(join(vocabDir, n)),
        `${join(vocabDir, n)} missing: run ctest -R tokenizer_js_crosscheck or set WT_TOKENIZER_VOCABS`);
    }
    const texts = [
      'Hello, world! The quick brown fox jumps over the lazy dog.',
      'def f(x):\n    return x ** 2  # squares\n\n\n',
      '   leading and    inner   spaces\t\ttabs\r\n',
      'Ünïcödé: naïve café, Straße, ĳ, ﬁ',
      '日本語のテキストと中文文本，한국어 텍스트',
      'Ελληνικά, русский текст, עברית, العربية, हिन्दी',
      'emoji 🦙🔥👩‍👩‍👧‍👦 and flags 🇫🇷',
      "I'm you're we've they'll she'd IT'S 1234567890",
      '<s> </s> <|begin_of_text|> <|eot_id|> text',
      '', ' ', '\n', 'a'.repeat(300),
    ].map(utf8).concat([[0x62, 0xff, 0xfe], [0x63, 0xe2, 0x82], [0xc0, 0xaf, 0x6f], [0xed, 0xa0, 0x80]]
      .map((b) => new Uint8Array(b)));
    const dir = mkdtempSync(join(tmpdir(), 'wt-tok-'));
    try {
      const chunks = join(dir, 'chunks.bin');
      const parts = [Uint32Array.of(texts.length)];
      for (const t of texts) parts.push(Uint32Array.of(t.length), t);
      writeFileSync(chunks, Buffer.concat(parts.map((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength))));
      let compared = 0;
      for (const vocab of [BYTE_JSON, ...names.map((n) => join(vocabDir, n))]) {
        const bytes = readFileSync(vocab);
        const tok = vocab.endsWith('.gguf') ? await Tokenizer.fromGGUF(bytes) : await Tokenizer.fromJSON(bytes);
        for (const flags of [[], ['--bos'], ['--special']]) {
          if (flags[0] === '--bos' && tok.bos === null) continue;
          const out = join(dir, 'ids.bin');
          try {
            execFileSync(check, [vocab, chunks, out, ...flags], { stdio: 'pipe' });
          } catch (e) {
            // The binary also checks that decoding gives each text back;
            // with --special, control tokens read from the text do not
            // decode to their markup: the only failure allowed there.
            const lines = String(e.stderr).split('\n').filter((l) => l &&
              !(flags[0] === '--special' && l.endsWith('differs from the text')));
            assert.equal(lines.length, 0, String(e.stderr));
          }
          const data = readFileSync(out);
          assert.equal(data.readUInt32LE(0), texts.length);
          let at = 4;
          for (const t of texts) {
            const n = data.readUInt32LE(at);
            const want = Array.from({ length: n }, (_, i) => data.readInt32LE(at + 4 + 4 * i));
            at += 4 + 4 * n;
            const got = tok.encode(t, { addBos: flags[0] === '--bos', special: flags[0] === '--special' });
            assert.deepEqual([...got], want, `${vocab} ${flags} ${JSON.stringify(new TextDecoder().decode(t))}`);
            compared++;
            if (flags[0] !== '--special') {
              const spm = tok.kind === 'spm';
              const replaced = new TextDecoder().decode(t);
              assert.equal(tok.decode(got, { skipSpecial: true, stripPrefixSpace: spm }), replaced);
              const s = tok.stream({ skipSpecial: true, stripPrefixSpace: spm });
              assert.equal([...got].map((i) => s.push(i)).join('') + s.flush(), replaced);
              s.dispose();
            }
          }
        }
        tok.dispose();
      }
      assert.ok(compared >= texts.length * 10, `${compared} texts compared`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
