"""A topic page's partition rows and replica map rows built in Python
(cluster/templatetags/topic_tables.py) are byte for byte what the template loops they
replace rendered (issue 33: the topic pages' CPU)."""
from __future__ import annotations

from django.template import engines

from cluster.models import Partition
from cluster.views.tables import map_table

# topic_detail.html's and _map_table.html's row loops as they were: the references.
PARTITION_ROWS = '{% for p in partitions %}<tr data-partition="{{ p.index }}" data-row="{{ topic.name }}/{{ p.index }}" data-replicas="{{ p.replicas|join:\',\' }}">\n<td class="num">{{ p.index }}</td>\n<td class="leader">{% if p.leader is None %}<span class="bad">none</span>{% else %}SPU {{ p.leader }}{% if p.leader == p.initial_leader %} <span class="pref" title="preferred leader">★</span>{% else %} <small class="warn">not preferred (SPU {{ p.replicas.0 }})</small>{% endif %}{% endif %}</td>\n<td class="mono replicas">{% for r in p.replicas %}<span class="replica{% if forloop.first %} preferred{% endif %}{% if r == p.leader %} leader{% endif %}{% if r in down_spus %} spu-down{% endif %}" data-spu="{{ r }}" data-cell-class="status">{{ r }}</span>{% endfor %}</td>\n<td class="mono lrs{% if p.lrs|length < p.replicas|length %} warn{% endif %}">[{{ p.lrs|join:", " }}]</td>\n<td class="num hw">{{ p.hw }}</td><td class="num leo">{{ p.leo }}</td><td class="res"><span class="badge {{ p.resolution|lower }}">{{ p.resolution }}</span></td></tr>{% endfor %}'
MAP_ROWS = '{% for row in table.rows %}<tr data-partition="{{ row.id }}" data-replicas="{{ row.replicas|join:\',\' }}"><td class="num">{{ row.id }}</td><td class="mono">[{{ row.replicas|join:", " }}]</td>{% for l, f in row.racks %}<td class="num mono">[{% if l %}{{ l }}{% else %}&nbsp;{% endif %}] {% if f %}{{ f }}{% endif %}</td>{% endfor %}</tr>{% endfor %}'


def render(source: str, **context: object) -> str:
    return engines["django"].from_string(source).render(context)


def test_partition_rows_are_the_templates():
    partitions = [
        Partition(index=0, replicas=[1, 2, 3], initial_leader=1, leader=1, lrs=[1, 2, 3],
                  resolution="Online", hw=10, leo=12),
        Partition(index=1, replicas=[2, 3, 1], initial_leader=2, leader=3, lrs=[3, 1],
                  resolution="Online", hw=0, leo=0),
        Partition(index=2, replicas=[3, 1, 2], initial_leader=3, leader=None, lrs=[3],
                  resolution="Offline", hw=123456789, leo=123456790),
        Partition(index=3, replicas=[7], initial_leader=7, leader=7, lrs=[7],
                  resolution="ElectionPending", hw=5, leo=5),
    ]
    for name, down in [("orders", {3}), ("a<b>&c", set()), ("x", {1, 2, 3, 7})]:
        context = {"partitions": partitions, "topic": {"name": name}, "down_spus": down}
        expected = render(PARTITION_ROWS, **context)
        got = render("{% load topic_tables %}{% partition_rows partitions topic.name "
                     "down_spus %}", **context)
        assert got == expected
        assert ("a&lt;b&gt;&amp;c/1" in got) == (name == "a<b>&c")
        assert "not preferred (SPU 2)" in got and ("spu-down" in got) == bool(down)


def test_map_rows_are_the_templates():
    replica_map = [[1, 2, 3], [2, 3, 4], [3, 4, 1], [4, 1, 2], [9, 1, 2]]
    racks = {1: "r1", 2: "r2", 3: "r1", 4: "<r3>"}
    table = map_table(replica_map, racks)
    expected = render(MAP_ROWS, table=table)
    got = render("{% load topic_tables %}{% map_rows table.rows %}", table=table)
    assert got == expected and "&nbsp;" in got and 'data-replicas="9,1,2"' in got
