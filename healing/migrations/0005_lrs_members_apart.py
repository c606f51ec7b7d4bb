import msgpack
from django.db import migrations, models


def moved_apart(apps, schema_editor):
    """The members the config row holds (packed, or as JSON arrays before round 29), into
    their own row, packed, under the same version."""
    config = apps.get_model("healing", "HealingConfig")
    members = apps.get_model("healing", "LrsMembers")
    for row in config.objects.all():
        packed = bytes(row.in_lrs_packed or b"")
        if not packed and row.in_lrs:
            packed = msgpack.packb([list(m) for m in row.in_lrs])
        members.objects.create(id=1, version=row.in_lrs_version, packed=packed)


class Migration(migrations.Migration):
    """The LRS members in a row of their own (healing/members.py): SQLite writes a row whole
    at any update, and the config row is updated twice a check; with the members in it
    (9 MB at 180,000 partitions) each update cost 60 ms. With it, the changes since a base,
    so a check that saw a few changed writes those, not 300,000 pairs."""

    dependencies = [
        ('healing', '0004_in_lrs_packed'),
    ]

    operations = [
        migrations.CreateModel(
            name='LrsMembers',
            fields=[
                ('id', models.PositiveSmallIntegerField(default=1, primary_key=True, serialize=False)),
                ('version', models.PositiveBigIntegerField(default=0)),
                ('packed', models.BinaryField(blank=True, default=b'')),
                ('changes', models.BinaryField(blank=True, default=b'')),
            ],
        ),
        migrations.RunPython(moved_apart, migrations.RunPython.noop),
        migrations.RemoveField(model_name='healingconfig', name='in_lrs'),
        migrations.RemoveField(model_name='healingconfig', name='in_lrs_packed'),
    ]
