from django.contrib import admin

from cluster.models import ClusterState, Event, Partition, Spu, SpuGroup, Topic


@admin.register(Spu)
class SpuAdmin(admin.ModelAdmin):
    list_display = ["id", "spu_type", "rack", "resolution", "group", "public_endpoint"]
    list_filter = ["spu_type", "rack", "resolution"]


@admin.register(SpuGroup)
class SpuGroupAdmin(admin.ModelAdmin):
    list_display = ["name", "replicas", "min_id", "rack", "storage_size", "resolution", "reason"]


@admin.register(Topic)
class TopicAdmin(admin.ModelAdmin):
    list_display = ["name", "partitions", "replication_factor", "resolution", "reason"]
    list_filter = ["resolution"]
    search_fields = ["name"]


@admin.register(Partition)
class PartitionAdmin(admin.ModelAdmin):
    list_display = ["topic", "index", "replicas", "leader", "lrs", "resolution", "hw", "leo"]
    list_filter = ["resolution"]
    list_select_related = ["topic"]


@admin.register(ClusterState)
class ClusterStateAdmin(admin.ModelAdmin):
    list_display = ["id", "assignment_cursor"]


@admin.register(Event)
class EventAdmin(admin.ModelAdmin):
    list_display = ["at", "actor", "object_type", "object_name", "operation", "result"]
    list_filter = ["object_type", "operation"]
    search_fields = ["object_name", "actor"]

    def has_change_permission(self, request, obj=None) -> bool:
        return False  # append-only
