"""The live pages' heatmaps drawn for a replayed moment: the same builders
(cluster/charts.py), given counts folded from the log instead of the store's rows."""
from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from cluster import charts
from history.core import diff as diffs
from history.core.replay import Moment
from cluster.core.spus import SpuResolution
from cluster.selectors.heatmaps import MAX_TOPICS
from cluster.selectors.stats import NO_RACK, SpuStats

ONLINE, OFFLINE = SpuResolution.ONLINE.value, SpuResolution.OFFLINE.value


def spu_stats(m: Moment, racks: Mapping[int, str]) -> dict[int, SpuStats]:
    """One SpuStats per SPU the moment knows, as cluster_stats builds them from rows."""
    out: dict[int, SpuStats] = {}
    for spu, c in diffs.spu_counts(m).items():
        out[spu] = SpuStats(id=spu, rack=racks.get(spu, ""), spu_type="",
                            resolution=ONLINE if m.spus.get(spu) else OFFLINE,
                            leaders=c.leaders, replicas=c.replicas, preferred=c.preferred,
                            preferred_leading=c.preferred_leading, loop_killed=spu in m.killed)
    return out


def by_rack(stats: Mapping[int, SpuStats]) -> dict[str, list[SpuStats]]:
    racks: dict[str, list[SpuStats]] = {}
    for spu in sorted(stats.values(), key=lambda s: s.id):
        racks.setdefault(spu.rack or NO_RACK, []).append(spu)
    return dict(sorted(racks.items()))


def moment_charts(m: Moment, racks: Mapping[int, str]) -> dict[str, charts.Figure]:
    """Rack x SPU leaders and followers, and topic x SPU replicas, at the moment."""
    stats = spu_stats(m, racks)
    grouped = by_rack(stats)
    sizes = Counter(topic for topic, _ in m.statuses)
    topics = sorted(sizes, key=lambda t: (-sizes[t], t))[:MAX_TOPICS]
    ids = {topic: i for i, topic in enumerate(topics)}
    counts = {(ids[t], spu): n for (t, spu), n in diffs.topic_spu_counts(m).items() if t in ids}
    return {"chart-leaders": charts.rack_spu_heatmap(grouped, "leaders"),
            "chart-followers": charts.rack_spu_heatmap(grouped, "followers"),
            "chart-topics": charts.topic_spu_heatmap(
                topics, sorted(stats), counts, list(range(len(topics))),
                {s.id: s.state_label for s in stats.values()})}
