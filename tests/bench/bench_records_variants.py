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

# The faster Lua tried in round 10 (locals for library functions, headers decoded with
# string.byte, names cut with a plain find) measured 0-9%, within the noise, and was not
# kept; it is in this file's history (commit 1675111), not repeated here beside the script.
VARIANTS["empty"] = "return 0"


def _nocall(script: str) -> str:
    """The script's Lua alone: every redis.call made a call of a local no-op."""
    return "local function nop() end\n" + script.replace("redis.call(", "nop(")


VARIANTS["current_nocall"] = _nocall(_WRITE)
