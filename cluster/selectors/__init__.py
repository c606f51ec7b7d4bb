"""Reads shared by pages, the API and commands, one module per concern.

* ``shapes``: the JSON shapes of describe/list outputs (CLI ``--json``, API);
* ``stats``: cluster, SPU and topic counts from one pass over partition rows;
* ``health``: what needs attention, with links to the filtered lists;
* ``filters``: the filtered, ordered querysets behind list pages;
* ``sql``: raw-SQL helpers the others share (JSON array lengths and decoding).
"""
