// Package resourcefile reads and writes a kernel's resource.txt, the file
// a Backend.AI agent writes into <scratch>/<kernel>/config/ and reads back
// (KernelResourceSpec.read_from_string / write_to_string in
// src/ai/backend/agent/resources.py).
//
// # Reader
//
// Parse accepts every layout the agent has written: the current one
// (SCRATCH_SIZE, MOUNTS, SLOTS, UNIFIED_DEVICES, the *_SHARES lines, plugin
// lines, CID last), the pre-24.12 one (CID first, SLOTS from json.dumps
// with spaces, no UNIFIED_DEVICES) and everything in between. It follows
// the Python reader step for step, so that a file gives the same figures,
// or fails with the same Python exception class (ParseError.Kind), as it
// does in the agent:
//
//   - the text is split on "\n" only; lines without "=" are skipped; the
//     rest are str.strip()ped (Python's whitespace, with \x1c-\x1f, NEL,
//     NBSP and U+2028, but not U+200B or a BOM) and split at the first "=";
//     a repeated key keeps its first position and its last value;
//   - keys ending in "_SHARES", in that key order, become allocations: the
//     slot is the rest of the key lower-cased as Python does it ("İ" gives
//     "i̇", a final "Σ" gives "ς"), its device the slot up to the first ".";
//     entries split on "," then at the first ":"; an empty id or amount is
//     skipped; "bytes" slots go through BinarySize.from_str, the others
//     through Decimal() (model.ParseBinarySize, model.ParseDec);
//   - then MOUNTS (KeyError when missing; Mount.from_str with PosixPath
//     normalisation), SCRATCH_SIZE (KeyError; BinarySize.finite_from_str),
//     UNIFIED_DEVICES (optional; empty means []) and SLOTS (KeyError;
//     orjson, then ResourceSlot.from_json: JSON numbers become Python ints
//     or floats first, so 0.1 reads as
//     0.1000000000000000055511151231257827021181583404541015625, integers
//     beyond 64 bits as floats, true as 1, a [sign, digits, exponent] list
//     as Decimal's tuple form; null drops the key; anything but an object
//     is an AttributeError).
//
// Errors are *ParseError with the line of the offending value (0 for a
// missing key). The parity test runs Backend.AI's own results for every
// case of testdata/fixtures/resource-cases.json.
//
// # Writer
//
// Spec.Format writes what the agent writes: write_to_string's lines
// (SCRATCH_SIZE in MiB, compact SLOTS of str(Decimal) values, *_SHARES in
// the agent's device order, bytes slots auto-scaled and lossy like
// BinarySize's "s" format) followed by the plugin lines and CID. The
// sample files in testdata/fixtures/backendai come back byte for byte;
// a pre-24.12 file comes back in the current layout.
//
// # Deliberate differences from Backend.AI
//
//   - Torn files. The agent ends every line with "\n". Parse reports an
//     empty file, or one whose last byte is not "\n", as a ParseError with
//     Kind "Torn" (Torn set) even where Python would read it, because a
//     half-written file must not silently change the totals: fgtop keeps
//     the kernel's last good figures until the file is whole.
//     ParseOptions{AllowTorn: true} reads such files exactly as Python
//     does; the parity test checks every case that way and lists the torn
//     ones.
//   - Bytes, not str. Input that is not UTF-8 is a ParseError of Kind
//     "UnicodeDecodeError" (the agent's text-mode read fails on it too).
//     A lone "\r" is not a line break, as in read_from_string; the agent's
//     file readers, which use universal newlines, would also split there.
//   - Decimal exponents. Python keeps exponents up to about ±10^18; fgtop's
//     decimals (apd) hold an int32, so a value such as "1e9999999999" is an
//     InvalidOperation here and a number in Python.
//   - Unicode tables. Digits, whitespace and case come from Go's Unicode 15
//     tables, CPython 3.11 uses Unicode 14: characters added in Unicode 15
//     can differ.
//   - JSON nesting deeper than 10,000 levels is a JSONDecodeError (orjson
//     has no limit; Go's stack would pay for it).
//   - The writer does not fail. Where write_to_string raises (an
//     UNIFIED_DEVICES value that is not a list of pairs, an infinite or
//     1024^9-byte amount, a scratch size beyond 28 digits of MiB), Format
//     writes a form the reader takes back: the JSON as it was, "inf", the
//     plain byte count. FormatStrict reports Python's exception instead.
//     Floats inside UNIFIED_DEVICES are printed like orjson's output as
//     far as fgtop knows it.
//   - One inference: BinarySize passes "536870912.000000"-style integers
//     through (the corpus and the domain notes say so); fgtop accepts
//     [+-]digits "." zeros for that, and nothing else that is not an
//     integer or a number with a unit.
//
// ParseOptions{FiguresOnly: true} skips keeping what only the writer needs
// (mounts, plugin lines, device order; CID is kept) after checking MOUNTS as
// usual: the same figures and errors for about a quarter of the
// allocation and half the time.
package resourcefile
