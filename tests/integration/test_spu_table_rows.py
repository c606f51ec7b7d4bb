"""The SPUs table's rows and the overview's SPU items built in Python
(cluster/templatetags/spu_table.py) are byte for byte what the template loops they replace
rendered (issue 33: the SPUs page's and the overview's CPU)."""
from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import AnonymousUser
from django.template import engines
from django.test import RequestFactory

from cluster.cells import spu_row
from cluster.selectors.stats import EvenRange, SpuStats

# spus.html's row loop as it was, the reference the tag must match.
REFERENCE = (
    "{% load stamps %}"
    + '{% for row in rows %}{% with spu=row.spu %}\n  <tr data-spu="{{ spu.id }}" class="{{ row.status.css }}" data-cell-class="status">\n    <td><a href="/partitions/?spu={{ spu.id }}">SPU {{ spu.id }}</a> <small class="muted">{{ spu.spu_type }}</small></td><td>{{ spu.rack|default:"–" }}</td>\n    <td><span class="badge {{ spu.resolution|lower }}">{{ spu.resolution }}</span> <small class="down-note" data-cell="status">{{ row.status.text }}</small></td><td>{{ spu.group|default:"–" }}</td>\n    <td class="num" data-field="leaders">{{ spu.leaders }}</td><td class="num {{ row.leader_skew.css }}" data-cell="leader_skew">{{ row.leader_skew.text }}</td>\n    <td class="num" data-field="followers">{{ spu.followers }}</td><td class="num" data-field="replicas">{{ spu.replicas }}</td><td class="num {{ row.replica_skew.css }}" data-cell="replica_skew">{{ row.replica_skew.text }}</td>\n    <td class="num {{ row.preferred_share.css }}" data-cell="preferred_share"><span data-cell-text>{{ row.preferred_share.text }}</span> <small>(<span data-field="preferred_leading">{{ spu.preferred_leading }}</span>/<span data-field="preferred">{{ spu.preferred }}</span>)</small></td>\n    {% if perms.cluster.operate_cluster %}<td class="actions"><div class="row-actions">{% spu_fragment "cluster/_spu_outage_buttons.html" spu.id %}{% if spu.replicas %}<a class="button small" href="{% url \'planner:spu-drain\' spu.id %}" title="Preview the moves of its {{ spu.replicas }} replicas (nothing changes until you apply)">Drain…</a>{% endif %}{% if spu.spu_type == "custom" %}<form method="post" action="{% url \'cluster:spu-unregister\' spu.id %}" class="inline" data-confirm="Unregister SPU {{ spu.id }}? It is refused while the SPU still holds replicas: drain it first.">{% csrf_token %}<button type="submit" class="danger small">Unregister</button></form>{% else %}<small class="muted">managed</small>{% endif %}</div></td>{% endif %}\n  </tr>{% endwith %}{% endfor %}'
)

# overview.html's SPU items of a rack as they were.
RACK_ITEMS = "{% load stamps %}" + '{% for row in rows %}{% with spu=row.spu %}\n        <li class="spu {{ spu.resolution|lower }} {{ row.status.css }}" data-spu="{{ spu.id }}" data-state data-cell-class="status">\n          <a href="/partitions/?spu={{ spu.id }}"><b>SPU {{ spu.id }}</b></a>\n          <small>{{ spu.spu_type }}</small>\n          <span class="badge {{ spu.resolution|lower }}">{{ spu.resolution }}</span>\n          <span class="down-note" data-cell="status">{{ row.status.text }}</span>\n          <span class="counts" title="leaders / followers" data-field="counts"><span class="{{ row.leader_skew.css }}" data-cell-class="leader_skew">L {{ spu.leaders }}</span> · F {{ spu.followers }}</span>\n          {% if perms.cluster.operate_cluster %}{% spu_fragment "cluster/_spu_outage_buttons.html" spu.id %}{% endif %}\n        </li>{% endwith %}{% endfor %}'


def spus() -> list[SpuStats]:
    even = EvenRange(3, 4, 3.5)
    return [
        SpuStats(0, "rack-a", "custom", "Online", None, leaders=4, replicas=9, preferred=4,
                 preferred_leading=4, leader_skew=0.14, replica_skew=0.0, leader_range=even,
                 replica_range=EvenRange(8, 9, 8.6)),
        SpuStats(1, "", "managed", "Offline", "grp<1>", leaders=0, replicas=7, preferred=3,
                 preferred_leading=0, leader_skew=-1.0, replica_skew=-0.2, leader_range=even,
                 replica_range=EvenRange(8, 9, 8.6)),
        SpuStats(22, "r&b", "custom", "Init", "g", leaders=0, replicas=0),
        SpuStats(23, "o'ne \"x\"", "custom", "Online", "<g&'>", leaders=1, replicas=2),
        SpuStats(1234, "rack-a", "managed", "Online", None, leaders=12, replicas=30,
                 preferred=10, preferred_leading=6, leader_skew=2.43, replica_skew=2.5,
                 leader_range=even, replica_range=EvenRange(8, 9, 8.6), loop_killed=True),
    ]


def masked(html: str) -> str:
    """The CSRF token is masked afresh at every use."""
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "csrf", html)


def both(reference: str, tag: str, path: str, user) -> tuple[str, str]:
    """The SPUs' rows rendered by the reference template and by the tag, for ``user``."""
    request = RequestFactory().get(path)
    request.user = user
    rows = [spu_row(s) for s in spus()]
    django = engines["django"]
    expected = django.from_string(reference).render({"rows": rows}, request)
    got = django.from_string("{% load spu_table %}{% " + tag + " rows %}").render(
        {"rows": rows}, request)
    return expected, got


@pytest.mark.parametrize("who", ["operator", "viewer", "anonymous"])
def test_the_rows_are_the_templates(who, operator, viewer):
    user = {"operator": operator, "viewer": viewer, "anonymous": AnonymousUser()}[who]
    expected, got = both(REFERENCE, "spu_table_rows", "/spus/?rack=rack-a&x=<y>", user)
    assert masked(got) == masked(expected)
    assert ('Unregister SPU 22?' in got) == (who == "operator")
    assert 'data-spu="1234"' in got and "grp&lt;1&gt;" in got and "r&amp;b" in got
    assert "o&#x27;ne &quot;x&quot;" in got and "&lt;g&amp;&#x27;&gt;" in got


@pytest.mark.parametrize("who", ["operator", "viewer"])
def test_the_rack_items_are_the_templates(who, operator, viewer):
    user = {"operator": operator, "viewer": viewer}[who]
    expected, got = both(RACK_ITEMS, "spu_rack_items", "/?a=<b>", user)
    assert masked(got) == masked(expected)
    assert ("Take SPU 1234 offline" in got) == (who == "operator") and "L 12</span>" in got
