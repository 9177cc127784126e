#!/usr/bin/env python3
"""Writes the byte-level BPE vocabulary of the tiny Llama's text test.

The tiny Llama (tests/data/llama_tiny) has a vocabulary of 256 ids. This
tokenizer.json gives each byte one id (no merges, GPT-2's byte-level
pre-tokenizer), with the ids placed so that the text "abcdefghijklmnop"
encodes to the 16-token prompt of bench/llama_ref.py, the prompt of the
model's reference logits and tokens: the example's --text run must match
them.

Run: python3 make_tokenizers.py (writes tokenizer.json here).
"""
import json
import os

PROMPT = [1, 15, 42, 7, 99, 3, 200, 11, 64, 128, 5, 250, 17, 33, 71, 2]
TEXT = "abcdefghijklmnop"


def bytes_to_unicode():
    """GPT-2's map of bytes to printable characters (byte-level BPE)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\xa1"), ord("\xac") + 1)) + \
        list(range(ord("\xae"), ord("\xff") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, (chr(c) for c in cs)))


def byte_ids():
    """byte -> id: the text's letters on the prompt's ids, the other bytes
    on the other ids in order."""
    ids = {ord(ch): i for ch, i in zip(TEXT, PROMPT)}
    free = [i for i in range(256) if i not in ids.values()]
    rest = [b for b in range(256) if b not in ids]
    ids.update(zip(rest, free))
    return ids


def document(vocab):
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                          "use_regex": True},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": False, "vocab": vocab, "merges": []},
    }


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    chars = bytes_to_unicode()
    ids = byte_ids()
    vocab = {chars[b]: i for b, i in sorted(ids.items(), key=lambda kv: kv[1])}
    with open(os.path.join(here, "tokenizer.json"), "w") as f:
        json.dump(document(vocab), f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
