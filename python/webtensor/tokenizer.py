"""Tokenizers: text to token ids and back (include/webtensor_tokenizer.h).

    tok = wt.Tokenizer.from_file("model.gguf")        # or a tokenizer.json
    ids = tok.encode("Hello")                         # BOS first when the model wants it
    text = tok.decode(ids, skip_special=True)
    stream = tok.stream(skip_special=True)            # a generation loop
    for i in sampled_ids:
        if tok.is_end(i):
            break
        print(stream.push(i), end="", flush=True)
    print(stream.flush())

The vocabularies and the algorithms are the C library's (SentencePiece-style
BPE with byte fallback, byte-level BPE with the GPT-2 / Llama 3 / Qwen 2
pre-tokenizers); this module only moves text and ids across. Text is str
(encoded as UTF-8) or bytes (taken as they are: ill-formed UTF-8 becomes
U+FFFD as the library states). Errors raise the package's WebtensorError
subclasses with the library's message.
"""
import ctypes

from ._core import _check, InvalidArgumentError
from ._lib import L as _L, proto as _proto, _P, _I, _B, _CP

_SZ = ctypes.c_size_t
_I32 = ctypes.c_int32
_U = ctypes.c_uint

_proto("wt_gguf_open", _CP, _P)
_proto("wt_gguf_close", _P, restype=None)
_proto("wt_tokenizer_from_gguf", _P, _P)
_proto("wt_tokenizer_load_json", _CP, _P)
_proto("wt_tokenizer_from_json_memory", _P, _SZ, _P)
_proto("wt_tokenizer_destroy", _P, restype=None)
_proto("wt_tokenizer_kind_of", _P)
_proto("wt_tokenizer_vocab_size", _P, restype=_I32)
_proto("wt_tokenizer_bos", _P, restype=_I32)
_proto("wt_tokenizer_eos", _P, restype=_I32)
_proto("wt_tokenizer_is_end", _P, _I32, restype=_B)
_proto("wt_tokenizer_adds_bos", _P, restype=_B)
_proto("wt_tokenizer_unicode_version", restype=_CP)
_proto("wt_tokenizer_token", _P, _I32, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(_SZ),
       ctypes.POINTER(_I))
_proto("wt_tokenizer_find", _P, _P, _SZ, ctypes.POINTER(_I32))
_proto("wt_tokenizer_encode", _P, _P, _SZ, _U, ctypes.POINTER(_I32), _SZ, ctypes.POINTER(_SZ))
_proto("wt_tokenizer_token_bytes", _P, _I32, _P, _SZ, ctypes.POINTER(_SZ))
_proto("wt_tokenizer_decode", _P, ctypes.POINTER(_I32), _SZ, _U, _P, _SZ, ctypes.POINTER(_SZ))
_proto("wt_detokenizer_create", _P, _U, _P)
_proto("wt_detokenizer_destroy", _P, restype=None)
_proto("wt_detokenizer_push", _P, _I32, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(_SZ))
_proto("wt_detokenizer_flush", _P, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(_SZ))

# The header's flags.
_ADD_BOS, _ADD_EOS, _SPECIAL, _NO_PREFIX_SPACE = 1, 2, 4, 8
_SKIP_SPECIAL, _STRIP_PREFIX_SPACE = 1, 2
KINDS = {1: "spm", 2: "bpe"}
TOKEN_TYPES = {1: "normal", 2: "unknown", 3: "control", 4: "user_defined", 5: "unused", 6: "byte"}
_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1
_NOT_FOUND = -10  # WT_ERR_NOT_FOUND


def _utf8(text):
    if isinstance(text, str):
        return text.encode("utf-8", "surrogatepass")
    if isinstance(text, (bytes, bytearray, memoryview)):
        return bytes(text)
    raise TypeError("text must be str or bytes, not %s" % type(text).__name__)


def _id(v):
    i = int(v)
    if not _INT32_MIN <= i <= _INT32_MAX:
        raise InvalidArgumentError("token id %d is outside int32" % i)
    return i


def _ids(ids):
    vals = [_id(v) for v in ids]
    return (_I32 * max(len(vals), 1))(*vals), len(vals)


def _bytes_at(ptr, n):
    return ctypes.string_at(ptr.value, n.value) if n.value else b""


class Tokenizer:
    """A vocabulary and its encoder / decoder. Make one with from_file,
    from_gguf or from_json; it is immutable, so threads may share it."""

    def __init__(self, handle):
        # Use the class methods; handle is a wt_tokenizer* the object owns.
        self._h = handle

    # ------------------------------------------------------------ making one

    @classmethod
    def from_file(cls, path):
        """A .gguf file (its tokenizer.ggml.* metadata; the tensors are not
        read) or a Hugging Face tokenizer.json, by the file name's ending."""
        p = str(path)
        return cls.from_gguf(p) if p.endswith(".gguf") else cls._from_json_path(p)

    @classmethod
    def from_gguf(cls, path):
        g = ctypes.c_void_p()
        _check(_L.wt_gguf_open(str(path).encode(), ctypes.byref(g)), "wt_gguf_open")
        try:
            h = ctypes.c_void_p()
            _check(_L.wt_tokenizer_from_gguf(g, ctypes.byref(h)), "wt_tokenizer_from_gguf")
        finally:
            _L.wt_gguf_close(g)  # the tokenizer keeps its own copy
        return cls(h)

    @classmethod
    def _from_json_path(cls, path):
        h = ctypes.c_void_p()
        _check(_L.wt_tokenizer_load_json(str(path).encode(), ctypes.byref(h)), "wt_tokenizer_load_json")
        return cls(h)

    @classmethod
    def from_json(cls, data):
        """From the text of a tokenizer.json (str or bytes)."""
        b = _utf8(data)
        h = ctypes.c_void_p()
        _check(_L.wt_tokenizer_from_json_memory(b, len(b), ctypes.byref(h)), "wt_tokenizer_from_json_memory")
        return cls(h)

    def close(self):
        """Frees the tokenizer now (streams made from it must be done)."""
        if self._h is not None:
            _L.wt_tokenizer_destroy(self._h)
            self._h = None

    def __del__(self):
        if _L is not None and getattr(self, "_h", None) is not None:
            self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _handle(self):
        if self._h is None:
            raise InvalidArgumentError("the tokenizer was closed")
        return self._h

    # ------------------------------------------------------------ properties

    @property
    def kind(self):
        """"spm" (SentencePiece-style BPE) or "bpe" (byte-level BPE)."""
        return KINDS[_L.wt_tokenizer_kind_of(self._handle())]

    @property
    def vocab_size(self):
        return _L.wt_tokenizer_vocab_size(self._handle())

    def __len__(self):
        return self.vocab_size

    @property
    def bos(self):
        """The BOS id, or None when the vocabulary has none."""
        i = _L.wt_tokenizer_bos(self._handle())
        return None if i < 0 else i

    @property
    def eos(self):
        i = _L.wt_tokenizer_eos(self._handle())
        return None if i < 0 else i

    @property
    def adds_bos(self):
        """Whether the model expects BOS in front of a prompt."""
        return bool(_L.wt_tokenizer_adds_bos(self._handle()))

    def is_end(self, token_id):
        """Whether the id ends a generation (EOS, end of turn ...)."""
        return bool(_L.wt_tokenizer_is_end(self._handle(), _id(token_id)))

    def __repr__(self):
        if self._h is None:
            return "Tokenizer(closed)"
        return "Tokenizer(%s, %d tokens, bos=%s, eos=%s)" % (self.kind, self.vocab_size, self.bos, self.eos)

    # ------------------------------------------------------------ tokens

    def token(self, token_id):
        """(text as the vocabulary stores it, type name) of an id:
        ("▁the", "normal"), ("<0x0A>", "byte"), ("<s>", "control")."""
        p, n, t = ctypes.c_void_p(), _SZ(), _I()
        _check(_L.wt_tokenizer_token(self._handle(), _id(token_id), ctypes.byref(p), ctypes.byref(n),
                                     ctypes.byref(t)), "wt_tokenizer_token")
        return _bytes_at(p, n).decode("utf-8", "surrogateescape"), TOKEN_TYPES.get(t.value, t.value)

    def find(self, piece):
        """The id of the token whose vocabulary text is piece, or None."""
        b = _utf8(piece)
        i = _I32()
        st = _L.wt_tokenizer_find(self._handle(), b, len(b), ctypes.byref(i))
        if st == _NOT_FOUND:
            return None
        _check(st, "wt_tokenizer_find")
        return i.value

    def token_bytes(self, token_id):
        """The bytes the id stands for (possibly part of a UTF-8 sequence)."""
        n = _SZ()
        h, i = self._handle(), _id(token_id)
        buf = ctypes.create_string_buffer(64)
        st = _L.wt_tokenizer_token_bytes(h, i, buf, 64, ctypes.byref(n))
        if st and n.value > 64:
            buf = ctypes.create_string_buffer(n.value)
            st = _L.wt_tokenizer_token_bytes(h, i, buf, n.value, ctypes.byref(n))
        _check(st, "wt_tokenizer_token_bytes")
        return buf.raw[:n.value]

    # ------------------------------------------------------------ encode / decode

    def encode(self, text, add_bos=None, add_eos=False, special=False, prefix_space=True):
        """The ids of text (a list of int). add_bos None: as the model
        expects (adds_bos); special: read control tokens written in the
        text (<|eot_id|>); prefix_space False: no SentencePiece dummy space
        in front (for a text that continues another)."""
        b = _utf8(text)
        flags = 0
        if self.adds_bos if add_bos is None else add_bos:
            flags |= _ADD_BOS
        if add_eos:
            flags |= _ADD_EOS
        if special:
            flags |= _SPECIAL
        if not prefix_space:
            flags |= _NO_PREFIX_SPACE
        cap = len(b) * 3 + 3  # WT_TOKENIZE_MAX_IDS
        ids, n = (_I32 * cap)(), _SZ()
        _check(_L.wt_tokenizer_encode(self._handle(), b, len(b), flags, ids, cap, ctypes.byref(n)),
               "wt_tokenizer_encode")
        return ids[:n.value]

    def decode_bytes(self, ids, skip_special=False, strip_prefix_space=False):
        """The bytes of the ids joined (ill-formed sequences kept)."""
        arr, count = _ids(ids)
        flags = (_SKIP_SPECIAL if skip_special else 0) | (_STRIP_PREFIX_SPACE if strip_prefix_space else 0)
        h, n = self._handle(), _SZ()
        cap = 16 * count + 1
        while True:
            buf = ctypes.create_string_buffer(cap)
            st = _L.wt_tokenizer_decode(h, arr, count, flags, buf, cap, ctypes.byref(n))
            if st and n.value + 1 > cap:
                cap = n.value + 1
                continue
            _check(st, "wt_tokenizer_decode")
            return buf.raw[:n.value]

    def decode(self, ids, skip_special=False, strip_prefix_space=False):
        """The text of the ids (ill-formed UTF-8 shown as U+FFFD)."""
        return self.decode_bytes(ids, skip_special, strip_prefix_space).decode("utf-8", "replace")

    def stream(self, skip_special=False, strip_prefix_space=False):
        """A streaming decoder: push ids one at a time, get the text that is
        complete so far (a partial UTF-8 sequence is held)."""
        return Detokenizer(self, skip_special, strip_prefix_space)


class Detokenizer:
    """wt_detokenizer: made by Tokenizer.stream()."""

    def __init__(self, tokenizer, skip_special=False, strip_prefix_space=False):
        flags = (_SKIP_SPECIAL if skip_special else 0) | (_STRIP_PREFIX_SPACE if strip_prefix_space else 0)
        self._tok = tokenizer  # keeps the tokenizer alive while the stream is
        self._h = None
        h = ctypes.c_void_p()
        _check(_L.wt_detokenizer_create(tokenizer._handle(), flags, ctypes.byref(h)), "wt_detokenizer_create")
        self._h = h

    def _handle(self):
        if self._h is None:
            raise InvalidArgumentError("the stream was closed")
        if self._tok._h is None:
            raise InvalidArgumentError("the stream's tokenizer was closed")
        return self._h

    def push(self, token_id):
        """Adds one id; returns the newly completed text (maybe "")."""
        p, n = ctypes.c_void_p(), _SZ()
        _check(_L.wt_detokenizer_push(self._handle(), _id(token_id), ctypes.byref(p), ctypes.byref(n)),
               "wt_detokenizer_push")
        return _bytes_at(p, n).decode("utf-8")  # always well-formed

    def flush(self):
        """Ends the text: held bytes come out as U+FFFD; the stream starts over."""
        p, n = ctypes.c_void_p(), _SZ()
        _check(_L.wt_detokenizer_flush(self._handle(), ctypes.byref(p), ctypes.byref(n)), "wt_detokenizer_flush")
        return _bytes_at(p, n).decode("utf-8")

    def close(self):
        if self._h is not None:
            _L.wt_detokenizer_destroy(self._h)
            self._h = None

    def __del__(self):
        if _L is not None and getattr(self, "_h", None) is not None:
            self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def unicode_version():
    """The Unicode version of the tokenizers' letter and number tables."""
    return _L.wt_tokenizer_unicode_version().decode()


__all__ = ["Tokenizer", "Detokenizer", "unicode_version"]
