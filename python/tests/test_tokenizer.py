"""wt.Tokenizer: the C tokenizers through the Python package.

Ids derived here independently of the library (a vocabulary whose ids
follow from its JSON, a small SentencePiece vocabulary worked out by hand),
the streaming decoder, errors; and, when WT_TOKENIZER_CHECK names the C
cross-check binary (tests/tokenizer_check.c; the ctest python_tokenizer
sets it, with WT_TOKENIZER_VOCABS naming the folder of the real Llama 2 /
Llama 3 vocabularies the JS cross-check writes), the ids of many texts
equal the C library's called directly.
"""
import json
import os
import struct
import subprocess
import tempfile

import pytest

import webtensor as wt

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "tests", "data")
BYTE_JSON = os.path.join(DATA, "byte_tokenizer", "tokenizer.json")
PROMPT = [1, 15, 42, 7, 99, 3, 200, 11, 64, 128, 5, 250, 17, 33, 71, 2]


def gpt2_byte_chars():
    """GPT-2's map of bytes to printable characters (the byte-level form)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) + list(range(0xAE, 0xFF + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


# ------------------------------------------------------------ byte-level BPE


def test_byte_level_ids_from_the_json():
    """A byte-level vocabulary without merges: each byte is its own token,
    so the ids follow from the JSON's vocab and GPT-2's byte map."""
    vocab = json.load(open(BYTE_JSON, encoding="utf-8"))["model"]["vocab"]
    chars = gpt2_byte_chars()
    tok = wt.Tokenizer.from_file(BYTE_JSON)
    assert tok.kind == "bpe" and tok.vocab_size == 256 and len(tok) == 256
    assert tok.encode("abcdefghijklmnop") == PROMPT  # the tiny Llama's prompt (make_tokenizers.py)
    for text in ["Hello, world!", "  two  spaces\n\ttab", "héllo wörld", "日本語", "🦙 emoji", ""]:
        want = [vocab[chars[b]] for b in text.encode("utf-8")]
        assert tok.encode(text) == want, text
        assert tok.decode(want) == text
        assert tok.decode_bytes(want) == text.encode("utf-8")
    # Ill-formed UTF-8 is replaced by U+FFFD (EF BF BD) before encoding.
    assert tok.encode(b"a\xffb") == [vocab[chars[b]] for b in "a\ufffdb".encode("utf-8")]
    # Pieces and bytes of a token.
    a = vocab[chars[ord("a")]]
    assert tok.token(a) == ("a", "normal")
    assert tok.token_bytes(vocab[chars[0x20]]) == b" " and tok.token(vocab[chars[0x20]])[0] == "\u0120"
    assert tok.find("a") == a and tok.find("no such piece") is None
    assert tok.bos is None and tok.eos is None and not tok.adds_bos


def test_byte_level_stream_holds_partial_utf8():
    tok = wt.Tokenizer.from_file(BYTE_JSON)
    ids = tok.encode("a🦙é")  # 1 + 4 + 2 byte tokens
    s = tok.stream()
    out = [s.push(i) for i in ids]
    assert out == ["a", "", "", "", "🦙", "", "é"]
    assert s.flush() == ""
    # A sequence cut short comes out as U+FFFD at the flush, and the stream
    # starts over.
    assert s.push(ids[1]) == "" and s.flush() == "\ufffd"
    assert s.push(ids[0]) == "a"
    # decode keeps ill-formed bytes as they are; decode() shows them as U+FFFD.
    assert tok.decode_bytes(ids[1:3]) == "🦙".encode("utf-8")[:2]
    assert tok.decode(ids[1:3]) == "\ufffd"


# ------------------------------------------------------------ SentencePiece-style

# A vocabulary with byte fallback. Text "ab ab" is "▁ab▁ab" (spaces as ▁, a
# dummy ▁ in front); merges by their order in the list: "▁ a" first, then
# "a b", then "▁a b":
#   ▁ a b ▁ a b -> ▁a b ▁ a b -> ▁a b ▁a b -> ▁ab ▁a b -> ▁ab ▁ab = [8, 8]
# "ba": ▁ b a, no pair merges: [3, 5, 4]. "ab é": ▁ab, then ▁ (no merge with
# é), é not in the vocabulary: its UTF-8 bytes C3 A9 as <0xC3> <0xA9>:
# [8, 3, 9, 10].
SPM = {
    "model": {
        "type": "BPE", "byte_fallback": True,
        "vocab": {"<unk>": 0, "<s>": 1, "</s>": 2, "\u2581": 3, "a": 4, "b": 5, "\u2581a": 6, "ab": 7,
                  "\u2581ab": 8, "<0xC3>": 9, "<0xA9>": 10},
        "merges": ["\u2581 a", "a b", "\u2581a b"],
    },
    "added_tokens": [
        {"id": 0, "content": "<unk>", "special": True},
        {"id": 1, "content": "<s>", "special": True},
        {"id": 2, "content": "</s>", "special": True},
    ],
}


def test_spm_hand_derived():
    tok = wt.Tokenizer.from_json(json.dumps(SPM))
    assert tok.kind == "spm" and tok.bos == 1 and tok.eos == 2
    assert tok.encode("ab ab", add_bos=False) == [8, 8]
    assert tok.encode("ba", add_bos=False) == [3, 5, 4]
    assert tok.encode("ab é", add_bos=False) == [8, 3, 9, 10]
    assert tok.encode("ab", add_bos=True, add_eos=True) == [1, 8, 2]
    # No dummy prefix: "ab" alone merges "a b" only.
    assert tok.encode("ab", add_bos=False, prefix_space=False) == [7]
    # Control tokens in the text are text unless special is set.
    # (a special token first: no text fragment to take the dummy ▁)
    assert tok.encode("</s>", add_bos=False, special=True) == [2]
    with pytest.raises(wt.InvalidArgumentError):  # as text: "<" has no token, no byte token
        tok.encode("</s>", add_bos=False)
    assert tok.is_end(2) and not tok.is_end(8)
    # Decoding: ▁ is a space; the dummy one is dropped on request; the
    # byte tokens join into é; special tokens are dropped on request.
    assert tok.decode([8, 3, 9, 10]) == " ab é"
    assert tok.decode([1, 8, 3, 9, 10, 2], skip_special=True, strip_prefix_space=True) == "ab é"
    s = tok.stream(skip_special=True, strip_prefix_space=True)
    assert [s.push(i) for i in [1, 8, 3, 9, 10, 2]] == ["", "ab", " ", "", "é", ""]
    assert tok.token(9) == ("<0xC3>", "byte") and tok.token_bytes(9) == b"\xc3"


def spm_gguf_bytes():
    """The vocabulary of SPM as a GGUF file's metadata (version 3, no
    tensors), written here from GGUF's layout: tokenizer.ggml.model
    "llama" merges by the merged piece's score, highest first, so the
    scores -1 (▁a), -2 (ab), -3 (▁ab) give the merge order of SPM's list:
    the same ids."""
    def string(v):
        b = v.encode("utf-8")
        return struct.pack("<Q", len(b)) + b
    tokens = sorted(SPM["model"]["vocab"], key=SPM["model"]["vocab"].get)
    scores = {"\u2581a": -1.0, "ab": -2.0, "\u2581ab": -3.0}
    types = [2, 3, 3] + [6 if t.startswith("<0x") else 1 for t in tokens[3:]]
    kv = [
        ("tokenizer.ggml.model", 8, string("llama")),
        ("tokenizer.ggml.tokens", 9, struct.pack("<IQ", 8, len(tokens)) + b"".join(string(t) for t in tokens)),
        ("tokenizer.ggml.scores", 9, struct.pack("<IQ", 6, len(tokens))
         + b"".join(struct.pack("<f", scores.get(t, -10.0)) for t in tokens)),
        ("tokenizer.ggml.token_type", 9, struct.pack("<IQ", 5, len(tokens)) + struct.pack("<%di" % len(types), *types)),
        ("tokenizer.ggml.bos_token_id", 4, struct.pack("<I", 1)),
        ("tokenizer.ggml.eos_token_id", 4, struct.pack("<I", 2)),
        ("tokenizer.ggml.unknown_token_id", 4, struct.pack("<I", 0)),
        ("tokenizer.ggml.add_bos_token", 7, b"\x01"),
    ]
    out = b"GGUF" + struct.pack("<IQQ", 3, 0, len(kv))
    for key, typ, value in kv:
        out += string(key) + struct.pack("<I", typ) + value
    return out


def test_spm_from_gguf():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "spm.gguf")
        with open(path, "wb") as f:
            f.write(spm_gguf_bytes())
        tok = wt.Tokenizer.from_file(path)
    assert tok.kind == "spm" and tok.adds_bos and tok.bos == 1 and tok.eos == 2
    assert tok.encode("ab ab") == [1, 8, 8]  # BOS by default: the file asks for it
    assert tok.encode("ba", add_bos=False) == [3, 5, 4]
    assert tok.encode("ab é", add_bos=False) == [8, 3, 9, 10]
    assert tok.token(0) == ("<unk>", "unknown")
    # A character without a token and without byte tokens becomes <unk>.
    assert tok.encode("c", add_bos=False) == [3, 0]


def test_errors_and_lifetime():
    with pytest.raises(wt.WebtensorError):
        wt.Tokenizer.from_file(os.path.join(HERE, "no_such_tokenizer.json"))
    with pytest.raises(wt.WebtensorError):
        wt.Tokenizer.from_file(os.path.join(HERE, "no_such_model.gguf"))
    with pytest.raises(wt.InvalidArgumentError):
        wt.Tokenizer.from_json('{"model": {"type": "BPE", "byte_fallback": true, "vocab": {"a": 0}')
    with pytest.raises(wt.UnsupportedError):
        wt.Tokenizer.from_json('{"model": {"type": "Unigram", "vocab": []}}')
    tok = wt.Tokenizer.from_json(json.dumps(SPM))
    with pytest.raises(wt.InvalidArgumentError):
        tok.decode([11])  # outside the vocabulary
    with pytest.raises(wt.InvalidArgumentError):
        tok.token(-1)
    with pytest.raises(wt.InvalidArgumentError):
        tok.decode([1 << 40])
    with pytest.raises(TypeError):
        tok.encode(12)
    s = tok.stream()
    with pytest.raises(wt.InvalidArgumentError):
        s.push(99)
    tok.close()
    with pytest.raises(wt.InvalidArgumentError):
        tok.encode("a")
    with pytest.raises(wt.InvalidArgumentError):
        s.push(3)  # the stream's tokenizer is gone
    s.close()
    assert repr(tok) == "Tokenizer(closed)"
    with wt.Tokenizer.from_file(BYTE_JSON) as t2:
        assert t2.encode("a")
    assert t2._h is None
    assert wt.tokenizer.unicode_version()


# ------------------------------------------------------------ against the C library

TEXTS = [
    "Hello, world! The quick brown fox jumps over the lazy dog.",
    "def f(x):\n    return x ** 2  # squares\n\n\n",
    "   leading and    inner   spaces\t\ttabs\r\n",
    "Ünïcödé: naïve café, Straße, ĳ, ﬁ",
    "日本語のテキストと中文文本，한국어 텍스트",
    "Ελληνικά, русский текст, עברית, العربية, हिन्दी",
    "emoji 🦙🔥👩‍👩‍👧‍👦 and flags 🇫🇷",
    "numbers 1234567890 3.14159 1e-9 0x1F",
    "I'm you're we've they'll she'd IT'S",
    "<s> </s> <|begin_of_text|> <|eot_id|> text",
    "",
    " ",
    "\n",
    "a" * 300,
]
BAD = [b"bad \xff\xfe bytes", b"cut \xe2\x82", b"\xc0\xafoverlong", b"\xed\xa0\x80 surrogate"]


def _c_ids(binary, vocab, texts, flags):
    """The C library's ids of each text (tokenizer_check's file format)."""
    with tempfile.TemporaryDirectory() as d:
        chunks, out = os.path.join(d, "chunks.bin"), os.path.join(d, "ids.bin")
        with open(chunks, "wb") as f:
            f.write(struct.pack("<I", len(texts)))
            for t in texts:
                f.write(struct.pack("<I", len(t)) + t)
        r = subprocess.run([binary, vocab, chunks, out] + flags, capture_output=True, text=True)
        # The binary also checks that decoding gives each text back; with
        # --special, control tokens read from the text do not decode to
        # their markup, which is the only failure allowed there.
        problems = [ln for ln in r.stderr.splitlines()
                    if not ("--special" in flags and ln.endswith("differs from the text"))]
        assert r.returncode == 0 or not problems, r.stdout + r.stderr
        data = open(out, "rb").read()
    assert struct.unpack_from("<I", data, 0)[0] == len(texts)
    ids, at = [], 4
    for _ in texts:
        (n,) = struct.unpack_from("<I", data, at)
        ids.append(list(struct.unpack_from("<%di" % n, data, at + 4)))
        at += 4 + 4 * n
    return ids


def _vocabularies():
    found = [BYTE_JSON]
    d = os.environ.get("WT_TOKENIZER_VOCABS")
    if d:
        names = ["llama2.tokenizer.json", "llama2.gguf", "llama3.tokenizer.json", "llama3.gguf"]
        missing = [n for n in names if not os.path.exists(os.path.join(d, n))]
        assert not missing, "WT_TOKENIZER_VOCABS=%s lacks %s" % (d, missing)
        found += [os.path.join(d, n) for n in names]
    return found


def test_ids_equal_the_c_library():
    binary = os.environ.get("WT_TOKENIZER_CHECK")
    if not binary:
        if os.environ.get("WT_TOKENIZER_REQUIRE_C"):
            pytest.fail("WT_TOKENIZER_CHECK is not set")
        pytest.skip("WT_TOKENIZER_CHECK (tests/tokenizer_check) not given")
    texts = [t.encode("utf-8") for t in TEXTS] + BAD
    compared = 0
    for vocab in _vocabularies():
        tok = wt.Tokenizer.from_file(vocab)
        for flags in ([], ["--bos"], ["--special"]):
            if "--bos" in flags and tok.bos is None:
                continue
            want = _c_ids(binary, vocab, texts, flags)
            for text, w in zip(texts, want):
                got = tok.encode(text, add_bos="--bos" in flags, special="--special" in flags)
                assert got == w, (vocab, flags, text)
                compared += 1
                # The text back, through decode and through the stream.
                spm = tok.kind == "spm"
                replaced = text.decode("utf-8", "replace")
                back = tok.decode(got, skip_special=True, strip_prefix_space=spm)
                s = tok.stream(skip_special=True, strip_prefix_space=spm)
                streamed = "".join(s.push(i) for i in got) + s.flush()
                if "--special" not in flags:
                    assert back == replaced and streamed == replaced, (vocab, text)
    assert compared >= len(texts) * 2
