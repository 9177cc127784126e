// Reads the file that `model_files_gguf --sample PATH` writes with the
// independent GGUF parser @huggingface/gguf and compares every metadata
// value (with its type) and every tensor info with what the writer was
// given. Exit status 0 when all agree; prints "N passed, M failed".
import { gguf } from "@huggingface/gguf";

const path = process.argv[2];
if (!path) {
  console.error("usage: node check.mjs FILE.gguf");
  process.exit(2);
}
const T = { U8: 0, I8: 1, U16: 2, I16: 3, U32: 4, I32: 5, F32: 6, BOOL: 7, STRING: 8, ARRAY: 9, U64: 10, I64: 11, F64: 12 };
const f32 = (x) => Math.fround(x);
// key: [type, value, element type of an array]
const expected = {
  "general.architecture": [T.STRING, "llama"],
  "t.u8": [T.U8, 200],
  "t.i8": [T.I8, -100],
  "t.u16": [T.U16, 60000],
  "t.i16": [T.I16, -30000],
  "t.u32": [T.U32, 4000000000],
  "t.i32": [T.I32, -2000000000],
  "t.f32": [T.F32, 1.5],
  "t.bool": [T.BOOL, true],
  "t.string": [T.STRING, "h\u00e9llo"],
  "t.u64": [T.U64, 9223372036854775813n],
  "t.i64": [T.I64, -4611686018427387904n],
  "t.f64": [T.F64, 2.718281828459045],
  "a.u8": [T.ARRAY, [0, 7, 255], T.U8],
  "a.i8": [T.ARRAY, [-128, 0, 127], T.I8],
  "a.u16": [T.ARRAY, [0, 65535], T.U16],
  "a.i16": [T.ARRAY, [-32768, 32767], T.I16],
  "a.u32": [T.ARRAY, [1, 2, 4000000000], T.U32],
  "a.i32": [T.ARRAY, [-2147483648, 2147483647], T.I32],
  "a.f32": [T.ARRAY, [1.5, -0.25, f32(3e38)], T.F32],
  "a.bool": [T.ARRAY, [true, false, true], T.BOOL],
  "a.u64": [T.ARRAY, [0n, 18446744073709551615n], T.U64],
  "a.i64": [T.ARRAY, [-9223372036854775808n, 1234567890123n], T.I64],
  "a.f64": [T.ARRAY, [3.141592653589793, -1e-300], T.F64],
  "a.empty": [T.ARRAY, [], T.F32],
  "a.string": [T.ARRAY, ["<s>", "", "a\u0000b"], T.STRING],
  "a.nested": [T.ARRAY, [[1, 2], [], [3]], T.ARRAY],
  "a.nested_strings": [T.ARRAY, [["x"], ["y", "zz"]], T.ARRAY],
  "a.deep": [T.ARRAY, [[[5]]], T.ARRAY],
};
// name: [ggml type, shape (innermost first), offset]
const tensors = [
  ["blk.0.w", 0, [3n, 2n], 0n],
  ["h", 1, [5n], 32n],
  ["ids", 26, [2n, 2n, 2n], 64n],
  ["scalar", 0, [1n], 96n],
  ["q8", 8, [64n, 2n], 128n],
  ["q4k", 12, [256n], 288n],
];

let passed = 0, failed = 0;
const check = (ok, what) => {
  if (ok) passed++;
  else { failed++; console.log(`FAIL ${what}`); }
};
const same = (a, b) => {
  if (Array.isArray(b)) return Array.isArray(a) && a.length === b.length && b.every((x, i) => same(a[i], x));
  return a === b;
};
const show = (v) => JSON.stringify(v, (_, x) => (typeof x === "bigint" ? `${x}n` : x));

const out = await gguf(path, { allowLocalFile: true, typedMetadata: true });
check(out.metadata.version === 3, `version ${out.metadata.version}`);
check(out.metadata.tensor_count === BigInt(tensors.length), `tensor_count ${out.metadata.tensor_count}`);
check(out.metadata.kv_count === BigInt(Object.keys(expected).length), `kv_count ${out.metadata.kv_count}`);
for (const [key, [type, value, sub]] of Object.entries(expected)) {
  const got = out.typedMetadata[key];
  check(got !== undefined, `${key} present`);
  if (!got) continue;
  check(got.type === type, `${key}: type ${got.type}, expected ${type}`);
  if (sub !== undefined) check(got.subType === sub, `${key}: element type ${got.subType}, expected ${sub}`);
  check(same(got.value, value), `${key}: ${show(got.value)}, expected ${show(value)}`);
}
check(out.tensorInfos.length === tensors.length, `${out.tensorInfos.length} tensor infos`);
tensors.forEach(([name, dtype, shape, offset], i) => {
  const t = out.tensorInfos[i];
  if (!t) return;
  check(t.name === name, `tensor ${i}: name ${t.name}`);
  check(t.dtype === dtype, `${name}: dtype ${t.dtype}, expected ${dtype}`);
  check(t.n_dims === shape.length && same(t.shape, shape), `${name}: shape ${show(t.shape)}`);
  check(t.offset === offset, `${name}: offset ${t.offset}, expected ${offset}`);
});
check(out.tensorDataOffset % 32n === 0n, `data offset ${out.tensorDataOffset} aligned`);
console.log(`gguf_js: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
