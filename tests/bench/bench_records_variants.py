"""The variants of set_records._WRITE that bench_records_script.py measures (same writes)."""
from __future__ import annotations

from cluster.adapters.set_records import _WRITE

_STATUS = _WRITE.split("for i = last + 1")[0]
_RECORDS = "for i = last + 1" + _WRITE.split("for i = last + 1")[1]

VARIANTS = {
    "current": _WRITE,
    # integer to string by concatenation (Lua's tostring: '%.14g') instead of string.format
    "concat": _WRITE.replace("prefix .. string.format('%d', partition)", "prefix .. partition"),
    # HSET batch sizes
    "hset64": _WRITE.replace("k == 512", "k == 128"),
    "hset1024": _WRITE.replace("k == 512", "k == 2048"),
    # only the statuses / only the records (what each half costs)
    "statuses_only": _STATUS + "return n\n",
    "records_only": "local n = 0\nlocal last = 1 + 4 * tonumber(ARGV[1])\n" + _RECORDS,
    # the Lua with no redis.call for records (the script's own Lua cost)
    "records_nocall": "local n = 0\nlocal last = 1 + 4 * tonumber(ARGV[1])\n" + _RECORDS.replace(
        "redis.call('APPEND', name, string.sub(packed, at, at + length - 1))",
        "local x = string.sub(packed, at, at + length - 1)"),
}

# The Lua made cheaper: library functions in locals, heads decoded with string.byte (numbers:
# no format string parsed, no one-character string made for the mode), the key's name in
# one string.format (or a concatenation).
_FAST = """
local call, sub, byte, gmatch, unpack = redis.call, string.sub, string.byte, string.gmatch, unpack
local n = 0
local last = 1 + 4 * tonumber(ARGV[1])
for i = 2, last, 4 do
  local hash, names, lengths, values = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local batch, k, at, l = {}, 0, 1, 1
  for name in gmatch(names, '[^,]+') do
    local b1, b2, b3, b4 = byte(lengths, l, l + 3)
    local length = b1 + 256 * (b2 + 256 * (b3 + 256 * b4))
    batch[k + 1] = name
    batch[k + 2] = sub(values, at, at + length - 1)
    l, at, k = l + 4, at + length, k + 2
    if k == 512 then
      call('HSET', hash, unpack(batch, 1, k))
      k = 0
    end
  end
  if k > 0 then call('HSET', hash, unpack(batch, 1, k)) end
  n = n + (l - 1) / 4
end
for i = last + 1, #ARGV, 2 do
  local prefix, packed = ARGV[i], ARGV[i + 1]
  local at, size = 1, #packed
  while at <= size do
    local p1, p2, p3, p4, mode, l1, l2, l3, l4 = byte(packed, at, at + 8)
    local length = l1 + 256 * (l2 + 256 * (l3 + 256 * l4))
    local name = _NAME_
    at = at + 9
    if mode == 97 then call('APPEND', name, sub(packed, at, at + length - 1))
    elseif mode == 115 then call('SET', name, sub(packed, at, at + length - 1))
    else call('DEL', name) end
    at = at + length
    n = n + 1
  end
end
return n
"""
VARIANTS["fast_fmt"] = _FAST.replace(
    "_NAME_", "string.format('%s%d', prefix, p1 + 256 * (p2 + 256 * (p3 + 256 * p4)))")
VARIANTS["fast_concat"] = _FAST.replace("_NAME_", "prefix .. (p1 + 256 * (p2 + 256 * (p3 + 256 * p4)))")
VARIANTS["empty"] = "return 0"


def _nocall(script: str) -> str:
    """The script's Lua alone: every redis.call made a call of a local no-op."""
    return "local function nop() end\n" + script.replace("redis.call(", "nop(").replace(
        "call, sub", "_, sub").replace(" call(", " nop(")


VARIANTS["current_nocall"] = _nocall(_WRITE)
VARIANTS["fast_fmt_nocall"] = _nocall(VARIANTS["fast_fmt"])
VARIANTS["fast_concat_nocall"] = _nocall(VARIANTS["fast_concat"])

# The statuses' names cut with a plain find of ',' rather than a pattern (gmatch '[^,]+').
_FIND_NAMES = """
  local batch, k, at, l, s = {}, 0, 1, 1, 1
  local count = #lengths / 4
  for j = 1, count do
    local e = find(names, ',', s, true) or (#names + 1)
    local b1, b2, b3, b4 = byte(lengths, l, l + 3)
    local length = b1 + 256 * (b2 + 256 * (b3 + 256 * b4))
    batch[k + 1] = sub(names, s, e - 1)
    batch[k + 2] = sub(values, at, at + length - 1)
    s, l, at, k = e + 1, l + 4, at + length, k + 2
"""
_FAST_FIND = VARIANTS["fast_fmt"].replace(
    "string.gmatch, unpack", "string.gmatch, unpack\nlocal find = string.find").replace(
    """
  local batch, k, at, l = {}, 0, 1, 1
  for name in gmatch(names, '[^,]+') do
    local b1, b2, b3, b4 = byte(lengths, l, l + 3)
    local length = b1 + 256 * (b2 + 256 * (b3 + 256 * b4))
    batch[k + 1] = name
    batch[k + 2] = sub(values, at, at + length - 1)
    l, at, k = l + 4, at + length, k + 2
""", _FIND_NAMES)
assert _FAST_FIND != VARIANTS["fast_fmt"]
VARIANTS["fast_find"] = _FAST_FIND
VARIANTS["fast_find_nocall"] = _nocall(_FAST_FIND)
