"""Shuffle keys as Wick defines them (docs/protocol.md, "Shuffles"), so that a key lands in the
same reducer, and sorts the same, on every executor in any language (backend/app/shuffle/keys.ts
and partitioners.ts are the JavaScript side; test/examples/python-keys.test.ts compares the two).

- canonical JSON: object members sorted by name in UTF-16 code unit order, no whitespace,
  strings and numbers as JavaScript's JSON.stringify writes them. Python's own json.dumps differs
  in three ways this module undoes: numbers (1.0 and 1e16 are "1" and "10000000000000000" in
  JavaScript, 1e21 is "1e+21"; an int beyond 2**53 is the double JavaScript would have parsed),
  lone surrogates (JavaScript escapes them, \\ud800) and member order (code points, not code units).
- hash: 32-bit FNV-1a over the UTF-8 bytes of the canonical JSON, unsigned.
- order: null < booleans < numbers < strings < arrays < objects, then by value (strings by code
  units, arrays element by element, objects by canonical JSON text).
"""

import functools
import math

_SAFE = 2 ** 53
_FNV_OFFSET = 0x811C9DC5
_FNV_PRIME = 0x01000193


def js_number(v):
    """The value JavaScript holds for a JSON number Python parsed: ints beyond 2**53 become the
    nearest double (as JSON.parse reads them); -0 is 0 (JSON.stringify writes it so)."""
    if isinstance(v, int):
        return v if -_SAFE <= v <= _SAFE else float(v)
    if not math.isfinite(v):
        raise ValueError("A key must be a JSON value; %r is not one" % v)
    return v


def number_text(v):
    """ECMAScript's Number::toString (what JSON.stringify writes) of a finite number: the
    shortest digits that read back as the same double (Python's repr finds the same digits),
    laid out by JavaScript's rules: plain from 1e-7 up to below 1e21, else d.ddde±n."""
    v = js_number(v)
    if isinstance(v, int):
        return str(v)
    if v == 0:
        return "0"
    if v.is_integer() and abs(v) < _SAFE:
        return str(int(v))
    sign = "-" if v < 0 else ""
    text = repr(abs(v))
    mantissa, _, exp = text.partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    # value = 0.DIGITS × 10^n
    if whole == "0":
        n = -(len(frac) - len(frac.lstrip("0")))
    else:
        n = len(whole)
    n += int(exp) if exp else 0
    digits = digits.rstrip("0") or "0"
    k = len(digits)
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    tail = digits[0] + ("." + digits[1:] if k > 1 else "")
    return sign + tail + "e" + ("+" if e >= 0 else "-") + str(abs(e))


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
            "\t": "\\t"}


def string_text(s):
    """JSON.stringify of a string: the short escapes, other controls as \\u00xx, lone surrogates
    as \\udxxx, everything else as itself (a surrogate pair held as two characters is one)."""
    out = ['"']
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        o = ord(c)
        if c in _ESCAPES:
            out.append(_ESCAPES[c])
        elif o < 0x20:
            out.append("\\u%04x" % o)
        elif 0xD800 <= o <= 0xDBFF and i + 1 < n and 0xDC00 <= ord(s[i + 1]) <= 0xDFFF:
            out.append(chr(0x10000 + ((o - 0xD800) << 10) + (ord(s[i + 1]) - 0xDC00)))
            i += 1
        elif 0xD800 <= o <= 0xDFFF:
            out.append("\\u%04x" % o)
        else:
            out.append(c)
        i += 1
    out.append('"')
    return "".join(out)


def utf16_order(s):
    """A sort key that orders strings by UTF-16 code units, as JavaScript compares them."""
    return s.encode("utf-16-be", "surrogatepass")


def canonical_json(v):
    if isinstance(v, str):
        return string_text(v)
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, (int, float)):
        return number_text(v)
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(canonical_json(x) for x in v) + "]"
    if isinstance(v, dict):
        names = sorted(v, key=utf16_order)
        return "{" + ",".join(string_text(k) + ":" + canonical_json(v[k]) for k in names) + "}"
    raise ValueError("A key must be a JSON value; %r is not one" % (v,))


def fnv1a(text):
    h = _FNV_OFFSET
    for b in text.encode("utf-8", "replace"):
        h = ((h ^ b) * _FNV_PRIME) & 0xFFFFFFFF
    return h


def hash_key(v):
    return fnv1a(canonical_json(v))


def dict_key(k):
    """What a Python dict holds a shuffle key under, with Wick's key equality: a string as
    itself (the common case, no JSON text per word), anything else by its canonical JSON."""
    return k if isinstance(k, str) else ("json", canonical_json(k))


def _rank(v):
    if v is None:
        return 0
    if isinstance(v, bool):
        return 1
    if isinstance(v, (int, float)):
        return 2
    if isinstance(v, str):
        return 3
    if isinstance(v, (list, tuple)):
        return 4
    return 5


def _cmp(x, y):
    return -1 if x < y else (1 if x > y else 0)


def compare_keys(a, b):
    ra, rb = _rank(a), _rank(b)
    if ra != rb:
        return ra - rb
    if ra == 0:
        return 0
    if ra == 1:
        return _cmp(int(a), int(b))
    if ra == 2:
        return _cmp(js_number(a), js_number(b))
    if ra == 3:
        return _cmp(utf16_order(a), utf16_order(b))
    if ra == 4:
        for x, y in zip(a, b):
            c = compare_keys(x, y)
            if c:
                return c
        return len(a) - len(b)
    return _cmp(utf16_order(canonical_json(a)), utf16_order(canonical_json(b)))


key_order = functools.cmp_to_key(compare_keys)


def range_partition(bounds, key):
    """The number of bounds below the key: keys <= bounds[0] go to 0."""
    lo, hi = 0, len(bounds)
    while lo < hi:
        mid = (lo + hi) // 2
        if compare_keys(key, bounds[mid]) > 0:
            lo = mid + 1
        else:
            hi = mid
    return lo


def partition_function(spec, num_partitions, map_id):
    """Which reducer a record goes to (partitionFunction in partitioners.ts)."""
    kind = spec["kind"]
    if kind == "hash":
        return lambda r: hash_key(r[0]) % num_partitions
    if kind == "range":
        bounds, ascending = spec["bounds"], spec["ascending"]
        return lambda r: (range_partition(bounds, r[0]) if ascending
                          else len(bounds) - range_partition(bounds, r[0]))
    if kind == "roundRobin":
        state = [map_id % num_partitions]

        def deal(_r):
            p = state[0]
            state[0] = 0 if p + 1 == num_partitions else p + 1
            return p
        return deal
    raise ValueError("Unknown partitioner kind %r: expected hash, range or roundRobin" % kind)
