"""Create the single ClusterState row so the cursor lock never races on creation."""
from django.db import migrations


def create_singleton(apps, schema_editor):
    apps.get_model("cluster", "ClusterState").objects.get_or_create(pk=1)


class Migration(migrations.Migration):
    dependencies = [("cluster", "0001_initial")]
    operations = [migrations.RunPython(create_singleton, migrations.RunPython.noop)]
